//! Shared helpers for the integration tests.
#![allow(dead_code)]

pub mod cantilever;
pub mod solver_problem;

use cloth_forces::{Evaluation, Vec3};
use nalgebra::{DMatrix, DVector, Matrix3};

/// Dense (3n x 3n) matrix from evaluation entries (reference assembly through `for_each_entry`).
pub fn dense(eval: &Evaluation, n: usize, velocity: bool) -> DMatrix<f64> {
    let mut m = DMatrix::zeros(3 * n, 3 * n);
    eval.for_each_entry(|i, j, kx, kv| {
        let b: &Matrix3<f64> = if velocity { kv } else { kx };
        for r in 0..3 {
            for c in 0..3 {
                m[(3 * i + r, 3 * j + c)] += b[(r, c)];
                if i != j {
                    m[(3 * j + c, 3 * i + r)] += b[(r, c)];
                }
            }
        }
    });
    m
}

pub fn flat(v: &[Vec3]) -> DVector<f64> {
    DVector::from_iterator(3 * v.len(), v.iter().flat_map(|p| [p.x, p.y, p.z]))
}

/// Deterministic pseudo-random numbers in [-1, 1) (xorshift), for reproducible deformations.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    pub fn vec(&mut self) -> Vec3 {
        Vec3::new(self.next(), self.next(), self.next())
    }
}

use cloth_mesh::{ClothMesh, GridPattern, Vec2, grid};

/// A grid whose interior vertices are moved by up to `jitter` times the spacing in a random
/// direction (boundary vertices slide along their side only; corners stay), same triangles.
/// Rest and world positions move together, so the jittered mesh is flat and at rest.
pub fn jittered(
    nx: usize,
    ny: usize,
    width: f64,
    height: f64,
    pattern: GridPattern,
    jitter: f64,
    seed: u64,
) -> ClothMesh {
    let m = grid(nx, ny, width, height, pattern).expect("grid");
    let h = (width / (nx - 1) as f64).min(height / (ny - 1) as f64);
    let mut rng = Rng(seed);
    let eps = 1e-9 * width.max(height);
    let rest: Vec<Vec2> = m
        .vertex_rest()
        .expect("one chart")
        .iter()
        .map(|r| {
            let (du, dv) = (rng.next() * jitter * h, rng.next() * jitter * h);
            let on_u = r.x < eps || r.x > width - eps;
            let on_v = r.y < eps || r.y > height - eps;
            Vec2::new(
                if on_u { r.x } else { r.x + du },
                if on_v { r.y } else { r.y + dv },
            )
        })
        .collect();
    let pos = rest
        .iter()
        .map(|r| Vec3::new(r.x - 0.5 * width, 0.0, r.y - 0.5 * height))
        .collect();
    ClothMesh::new(pos, rest, m.triangles().to_vec()).expect("jittered mesh")
}
