//! Shared helpers for the integration tests.
#![allow(dead_code)]

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
