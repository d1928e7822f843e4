//! Shared helpers for the integration tests.
#![allow(dead_code)]

pub mod gltf_doc;

use cloth_collide::{Collider, Shape, Vec3};

/// Closed, outward-wound cube mesh with the given half extent, centred at the origin.
pub fn cube_mesh(h: f64) -> (Vec<Vec3>, Vec<[usize; 3]>) {
    let v = vec![
        Vec3::new(-h, -h, -h),
        Vec3::new(h, -h, -h),
        Vec3::new(h, h, -h),
        Vec3::new(-h, h, -h),
        Vec3::new(-h, -h, h),
        Vec3::new(h, -h, h),
        Vec3::new(h, h, h),
        Vec3::new(-h, h, h),
    ];
    let t = vec![
        [0, 2, 1],
        [0, 3, 2],
        [4, 5, 6],
        [4, 6, 7],
        [0, 1, 5],
        [0, 5, 4],
        [3, 7, 6],
        [3, 6, 2],
        [0, 4, 7],
        [0, 7, 3],
        [1, 2, 6],
        [1, 6, 5],
    ];
    (v, t)
}

/// A named static collider at the origin.
pub fn collider(shape: Shape, name: &str) -> Collider {
    Collider {
        shape,
        name: name.to_string(),
        ..Collider::default()
    }
}

/// Deterministic pseudo-random numbers in [0, 1) (64-bit LCG).
pub struct Lcg(pub u64);
impl Lcg {
    pub fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn vec(&mut self, lo: f64, hi: f64) -> Vec3 {
        Vec3::new(self.next(), self.next(), self.next()).map(|u| lo + (hi - lo) * u)
    }
}

/// Runs `f` in a rayon pool of `threads` threads (for checks that results do not depend on the
/// thread count).
pub fn run_in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

/// Distance from `p` to triangle (a, b, c), by the nearest of the plane projection (when it
/// falls inside) and the three edges: written apart from the crate's Voronoi-region walk.
pub fn point_triangle_distance(p: &Vec3, a: &Vec3, b: &Vec3, c: &Vec3) -> f64 {
    let seg = |u: &Vec3, w: &Vec3| {
        let d = w - u;
        let s = ((p - u).dot(&d) / d.norm_squared()).clamp(0.0, 1.0);
        (p - (u + d * s)).norm()
    };
    let n = (b - a).cross(&(c - a)).normalize();
    let q = p - n * (p - a).dot(&n);
    let side = |u: &Vec3, w: &Vec3| (w - u).cross(&(q - u)).dot(&n) >= 0.0;
    if side(a, b) && side(b, c) && side(c, a) {
        return (p - q).norm();
    }
    seg(a, b).min(seg(b, c)).min(seg(c, a))
}

/// Whether `p` is inside the closed mesh: parity of the crossings of a ray (Moller-Trumbore).
pub fn inside_by_parity(p: &Vec3, v: &[Vec3], t: &[[usize; 3]]) -> bool {
    let dir = Vec3::new(0.3123, -0.1378, 0.9399).normalize();
    let mut crossings = 0;
    for tri in t {
        let [a, b, c] = tri.map(|i| v[i]);
        let (e1, e2) = (b - a, c - a);
        let h = dir.cross(&e2);
        let det = e1.dot(&h);
        if det.abs() < 1e-15 {
            continue;
        }
        let s = p - a;
        let u = s.dot(&h) / det;
        let qv = s.cross(&e1);
        let w = dir.dot(&qv) / det;
        if u >= 0.0 && w >= 0.0 && u + w <= 1.0 && e2.dot(&qv) / det > 0.0 {
            crossings += 1;
        }
    }
    crossings % 2 == 1
}

/// Distance from `p` to the nearest triangle of a mesh (brute force over
/// [`point_triangle_distance`]).
pub fn mesh_distance(p: &Vec3, v: &[Vec3], t: &[[usize; 3]]) -> f64 {
    t.iter()
        .map(|f| point_triangle_distance(p, &v[f[0]], &v[f[1]], &v[f[2]]))
        .fold(f64::INFINITY, f64::min)
}

/// A file of the workspace's `assets/` folder, which holds copies of real inputs written by
/// other projects (`garmentcode/`: GarmentCode's patterns and body; `characters/`: a skinned
/// body exported from Blender), byte for byte as their authors made them.
pub fn shared(file: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../assets")
        .join(file)
}
