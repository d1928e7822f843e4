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
