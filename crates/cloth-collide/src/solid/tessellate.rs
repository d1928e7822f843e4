//! Triangle meshes of the analytic shapes, for output (rendering the solids) and for users who
//! want a mesh collider from a primitive.

use cloth_mesh::Vec3;

use super::collider::Shape;

/// Half side (m) of the square used to draw an infinite [`Shape::Plane`].
pub const PLANE_DRAW_HALF_SIDE: f64 = 10.0;

impl Shape {
    /// A triangle mesh of the shape in its local frame: (vertices in m, outward-wound
    /// triangles). `segments` (clamped to >= 3) is the number of points around each circle
    /// of revolution; spheres and capsule caps use `segments / 2` (>= 2) latitude bands per
    /// half turn. Every vertex lies on the exact surface. Sphere, capsule, cylinder and box
    /// meshes are closed; a plane becomes a square of half side [`PLANE_DRAW_HALF_SIDE`] at
    /// y = 0; a mesh is returned as is.
    pub fn tessellate(&self, segments: usize) -> (Vec<Vec3>, Vec<[usize; 3]>) {
        let seg = segments.max(3);
        let bands = (seg / 2).max(2);
        let half_turn = |r: f64, y0: f64, from: f64, to: f64, n: usize| -> Vec<(f64, f64)> {
            (0..=n)
                .map(|k| {
                    let th = from + (to - from) * k as f64 / n as f64;
                    (r * th.sin(), y0 + r * th.cos())
                })
                .collect()
        };
        use std::f64::consts::{FRAC_PI_2, PI};
        match self {
            Shape::Sphere { radius } => revolve(&half_turn(*radius, 0.0, 0.0, PI, bands), seg),
            Shape::Capsule { radius, length } => {
                let h = 0.5 * length;
                let mut profile = half_turn(*radius, h, 0.0, FRAC_PI_2, bands.div_ceil(2));
                let lower = half_turn(*radius, -h, FRAC_PI_2, PI, bands.div_ceil(2));
                // The equators coincide when length = 0: keep one.
                profile.extend(lower.into_iter().skip(if *length > 0.0 { 0 } else { 1 }));
                revolve(&profile, seg)
            }
            Shape::Cylinder { radius, length } => {
                let h = 0.5 * length;
                revolve(&[(0.0, h), (*radius, h), (*radius, -h), (0.0, -h)], seg)
            }
            Shape::Cuboid { size } => {
                let h = size * 0.5;
                let v = (0..8)
                    .map(|k| {
                        Vec3::new(
                            if k & 1 == 0 { -h.x } else { h.x },
                            if k & 2 == 0 { -h.y } else { h.y },
                            if k & 4 == 0 { -h.z } else { h.z },
                        )
                    })
                    .collect();
                // Corner k has bits (x, y, z); two triangles per face, wound outward.
                let t = vec![
                    [0, 2, 3],
                    [0, 3, 1],
                    [4, 5, 7],
                    [4, 7, 6],
                    [0, 1, 5],
                    [0, 5, 4],
                    [2, 6, 7],
                    [2, 7, 3],
                    [0, 4, 6],
                    [0, 6, 2],
                    [1, 3, 7],
                    [1, 7, 5],
                ];
                (v, t)
            }
            Shape::Plane => {
                let s = PLANE_DRAW_HALF_SIDE;
                let v = vec![
                    Vec3::new(-s, 0.0, -s),
                    Vec3::new(s, 0.0, -s),
                    Vec3::new(s, 0.0, s),
                    Vec3::new(-s, 0.0, s),
                ];
                (v, vec![[0, 2, 1], [0, 3, 2]])
            }
            Shape::Mesh {
                vertices,
                triangles,
            } => (vertices.clone(), triangles.clone()),
        }
    }
}

/// Surface of revolution about local y of a profile (radius, height) running from the top pole
/// (radius 0) to the bottom pole; interior profile points become rings of `seg` vertices at
/// angle phi, position (r cos phi, y, -r sin phi).
fn revolve(profile: &[(f64, f64)], seg: usize) -> (Vec<Vec3>, Vec<[usize; 3]>) {
    let mut v = Vec::new();
    // Start index of each profile point; poles are single vertices.
    let mut start = Vec::with_capacity(profile.len());
    let last = profile.len() - 1;
    for (k, &(r, y)) in profile.iter().enumerate() {
        start.push(v.len());
        if k == 0 || k == last {
            v.push(Vec3::new(0.0, y, 0.0));
        } else {
            for j in 0..seg {
                let phi = std::f64::consts::TAU * j as f64 / seg as f64;
                v.push(Vec3::new(r * phi.cos(), y, -r * phi.sin()));
            }
        }
    }
    let ring = |k: usize, j: usize| start[k] + j % seg;
    let mut t = Vec::new();
    for k in 0..last {
        for j in 0..seg {
            if k == 0 {
                t.push([start[0], ring(1, j), ring(1, j + 1)]);
            } else if k + 1 == last {
                t.push([ring(k, j), start[last], ring(k, j + 1)]);
            } else {
                t.push([ring(k, j), ring(k + 1, j), ring(k + 1, j + 1)]);
                t.push([ring(k, j), ring(k + 1, j + 1), ring(k, j + 1)]);
            }
        }
    }
    (v, t)
}
