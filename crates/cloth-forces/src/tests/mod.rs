//! Unit tests of the kernels (finite differences, invariants, definiteness).

mod bend_angles;
mod definiteness;
mod kernels;
mod material;
mod shape;

use crate::condition::{Blocks, Condition, Vec3};
use nalgebra::{Matrix3, Rotation3, Vector2};
use proptest::prelude::*;

/// Raw random numbers for one element sample.
#[derive(Clone, Debug)]
pub(crate) struct Sample {
    pub log_scale: f64,
    pub pts: [f64; 8],
    pub f: [f64; 6],
    pub noise: [f64; 18],
    pub axis: [f64; 3],
    pub vel: [f64; 18],
}

pub(crate) fn sample() -> impl Strategy<Value = Sample> {
    (
        -3.0..0.0f64,
        prop::array::uniform8(-1.0..1.0f64),
        prop::array::uniform6(-0.35..0.35f64),
        prop::array::uniform18(-0.15..0.15f64),
        prop::array::uniform3(-3.0..3.0f64),
        prop::array::uniform18(-1.0..1.0f64),
    )
        .prop_map(|(log_scale, pts, f, noise, axis, vel)| Sample {
            log_scale,
            pts,
            f,
            noise,
            axis,
            vel,
        })
}

impl Sample {
    pub fn scale(&self) -> f64 {
        10f64.powf(self.log_scale)
    }
    /// A rest triangle (m) with all angles above 20 degrees, or None.
    pub fn rest_triangle(&self) -> Option<[Vector2<f64>; 3]> {
        let s = self.scale();
        let p: [Vector2<f64>; 3] =
            std::array::from_fn(|i| Vector2::new(self.pts[2 * i], self.pts[2 * i + 1]) * s);
        let mut p = p;
        let d1 = p[1] - p[0];
        let d2 = p[2] - p[0];
        if d1.x * d2.y - d1.y * d2.x < 0.0 {
            p.swap(1, 2);
        }
        (min_angle(&p) > 20f64.to_radians()).then_some(p)
    }
    pub fn rotation(&self) -> Rotation3<f64> {
        Rotation3::new(Vec3::new(self.axis[0], self.axis[1], self.axis[2]))
    }
    /// Deformed positions of rest points embedded in 3D (y = 0 plane mapped by a random F, noise,
    /// rotation and translation).
    pub fn deform<const S: usize>(&self, uv: &[Vector2<f64>; S]) -> [Vec3; S] {
        let s = self.scale();
        let f = nalgebra::Matrix3x2::new(
            1.0 + self.f[0],
            self.f[1],
            self.f[2],
            1.0 + self.f[3],
            self.f[4],
            self.f[5],
        );
        let r = self.rotation();
        std::array::from_fn(|a| {
            let p = f * uv[a]
                + Vec3::new(
                    self.noise[3 * a],
                    self.noise[3 * a + 1],
                    self.noise[3 * a + 2],
                ) * s;
            r * p + Vec3::new(0.3, -0.2, 0.1) * s
        })
    }
    pub fn velocities<const S: usize>(&self) -> [Vec3; S] {
        std::array::from_fn(|a| {
            Vec3::new(self.vel[3 * a], self.vel[3 * a + 1], self.vel[3 * a + 2])
        })
    }
}

pub(crate) fn min_angle(p: &[Vector2<f64>; 3]) -> f64 {
    (0..3)
        .map(|i| {
            let a = p[(i + 1) % 3] - p[i];
            let b = p[(i + 2) % 3] - p[i];
            (a.dot(&b) / (a.norm() * b.norm())).clamp(-1.0, 1.0).acos()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Central finite-difference gradient of a scalar function.
pub(crate) fn fd_gradient<const S: usize>(
    f: impl Fn(&[Vec3; S]) -> f64,
    x: &[Vec3; S],
    eps: f64,
) -> [Vec3; S] {
    std::array::from_fn(|a| {
        Vec3::from_fn(|c, _| {
            let mut p = *x;
            let mut m = *x;
            p[a][c] += eps;
            m[a][c] -= eps;
            (f(&p) - f(&m)) / (2.0 * eps)
        })
    })
}

/// Central finite-difference Jacobian of a per-particle vector function: `J[a][b] = d f_a / d x_b`.
pub(crate) fn fd_jacobian<const S: usize>(
    f: impl Fn(&[Vec3; S]) -> [Vec3; S],
    x: &[Vec3; S],
    eps: f64,
) -> Blocks<S> {
    let mut j = [[Matrix3::zeros(); S]; S];
    for b in 0..S {
        for c in 0..3 {
            let mut p = *x;
            let mut m = *x;
            p[b][c] += eps;
            m[b][c] -= eps;
            let (fp, fm) = (f(&p), f(&m));
            for a in 0..S {
                let col = (fp[a] - fm[a]) / (2.0 * eps);
                j[a][b].set_column(c, &col);
            }
        }
    }
    j
}

pub(crate) fn max_abs_vec<const S: usize>(v: &[Vec3; S]) -> f64 {
    v.iter().map(|x| x.amax()).fold(0.0, f64::max)
}

pub(crate) fn max_abs_blocks<const S: usize>(b: &Blocks<S>) -> f64 {
    b.iter().flatten().map(|m| m.amax()).fold(0.0, f64::max)
}

pub(crate) fn diff_vec<const S: usize>(a: &[Vec3; S], b: &[Vec3; S]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).amax())
        .fold(0.0, f64::max)
}

pub(crate) fn diff_blocks<const S: usize>(a: &Blocks<S>, b: &Blocks<S>) -> f64 {
    a.iter()
        .flatten()
        .zip(b.iter().flatten())
        .map(|(x, y)| (x - y).amax())
        .fold(0.0, f64::max)
}

/// Checks gradient and Hessian of every component of a condition against finite differences,
/// and the Hessian's symmetry. `eps` is the FD step (m), `tol` a relative tolerance.
pub(crate) fn check_condition<const M: usize, const S: usize>(
    c: impl Fn(&[Vec3; S]) -> Condition<M, S>,
    x: &[Vec3; S],
    eps: f64,
    tol: f64,
) -> Result<(), TestCaseError> {
    let c0 = c(x);
    for l in 0..M {
        let g = fd_gradient(|y| c(y).value[l], x, eps);
        let scale = max_abs_vec(&c0.gradient[l]).max(max_abs_vec(&g));
        prop_assert!(
            diff_vec(&g, &c0.gradient[l]) <= tol * scale + 1e-300,
            "gradient {l}: fd {g:?} analytic {:?}",
            c0.gradient[l]
        );
        let h = fd_jacobian(|y| c(y).gradient[l], x, eps);
        let hs = max_abs_blocks(&c0.hessian[l]).max(max_abs_blocks(&h));
        prop_assert!(
            diff_blocks(&h, &c0.hessian[l]) <= tol * hs + 1e-300,
            "hessian {l}: diff {} scale {hs}",
            diff_blocks(&h, &c0.hessian[l])
        );
        for a in 0..S {
            for b in 0..S {
                prop_assert!(
                    (c0.hessian[l][a][b] - c0.hessian[l][b][a].transpose()).amax() <= 1e-12 * hs
                );
            }
        }
    }
    Ok(())
}
