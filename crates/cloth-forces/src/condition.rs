//! The generic condition machinery (Baraff & Witkin §4.1 and §4.5): any condition C of
//! dimension M over S particles becomes an energy, forces, df/dx and df/dv blocks.

use nalgebra::{DMatrix, Matrix3, SMatrix};

/// 3-vector of f64 (metres, m/s, newtons depending on context).
pub use cloth_mesh::Vec3;

/// S x S grid of 3x3 blocks: block `[a][b]` couples element-local particles a and b.
pub type Blocks<const S: usize> = [[Matrix3<f64>; S]; S];

/// How the position Jacobian df/dx of each condition is made usable by conjugate gradients.
///
/// The "element stiffness" of one condition instance (stretch of a triangle, shear of a triangle,
/// bend of a hinge) is `Kel = sum_l k_l dC_l^T dC_l + sum_l mu_l d2C_l` with
/// `mu_l = k_l C_l + kd_l Cdot_l` (the second part of mu is the symmetric damping approximation
/// of §4.5); df/dx receives `-Kel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum Definiteness {
    /// `Kel` exactly as above (may be indefinite: compressed stretch, any shear, any bend).
    Exact,
    /// Default. A positive semidefinite `Kel`, cheap and analytic:
    /// stretch and shear are projected onto PSD in deformation-gradient space
    /// (F = (w_u, w_v), 6-dimensional; the map x -> F is linear and onto, so `Kel` is PSD iff its
    /// F-space matrix is, and the result equals `Exact` whenever `Exact` is PSD). For stretch this
    /// amounts to dropping `mu_l d2C_l` when `mu_l < 0` (compression); for shear a closed-form
    /// 6x6 eigen-decomposition. Bend uses Gauss-Newton `k dtheta^T dtheta` (equals `Exact` at the
    /// rest angle with zero angular velocity), which also skips the costly angle Hessian.
    #[default]
    Clamped,
    /// Reference: numerical eigen-decomposition of each (3S x 3S) element matrix with negative
    /// eigenvalues set to zero (the Frobenius-nearest PSD matrix). Slow; for tests and studies.
    Projected,
}

/// A condition evaluated at one element: value, gradient and the exact Hessian of each component.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Condition<const M: usize, const S: usize> {
    /// C_l (units of the condition: sqrt(m^2) for stretch/shear, radians for bend).
    pub value: [f64; M],
    /// `gradient[l][a]` = dC_l/dx_a (a 3-vector per particle).
    pub gradient: [[Vec3; S]; M],
    /// `hessian[l][a][b]` = d2C_l / dx_a dx_b (3x3 blocks).
    pub hessian: [Blocks<S>; M],
}

/// Force response of one element: energy, forces and Jacobian blocks (element-local indexing).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ElementResponse<const S: usize> {
    /// Elastic energy (J).
    pub energy: f64,
    /// Elastic plus damping force on each particle (N).
    pub forces: [Vec3; S],
    /// df_a/dx_b (N/m), symmetric as a whole (`dfdx[a][b] = dfdx[b][a]^T`).
    pub dfdx: Blocks<S>,
    /// df_a/dv_b (N s/m), symmetric, negative semidefinite.
    pub dfdv: Blocks<S>,
}

impl<const S: usize> ElementResponse<S> {
    /// All zero.
    pub fn zero() -> Self {
        Self {
            energy: 0.0,
            forces: [Vec3::zeros(); S],
            dfdx: [[Matrix3::zeros(); S]; S],
            dfdv: [[Matrix3::zeros(); S]; S],
        }
    }
}

/// A condition kernel at one configuration (crate-internal interface; the public face is
/// [`Condition`]).
pub(crate) trait Kernel<const M: usize, const S: usize> {
    fn value(&self) -> [f64; M];
    fn gradient(&self) -> [[Vec3; S]; M];
    /// `out += sum_l mu_l d2C_l` (exact).
    fn add_curvature(&self, mu: &[f64; M], out: &mut Blocks<S>);
    /// `out += PSD replacement of sum_l k_l g_l g_l^T + sum_l mu_l d2C_l` (see [`Definiteness::Clamped`]).
    fn add_clamped(&self, k: &[f64; M], mu: &[f64; M], out: &mut Blocks<S>);
}

/// Builds the public [`Condition`] (with exact Hessians) from a kernel.
pub(crate) fn condition_of<K: Kernel<M, S>, const M: usize, const S: usize>(
    k: &K,
) -> Condition<M, S> {
    let mut hessian = [[[Matrix3::zeros(); S]; S]; M];
    for (l, h) in hessian.iter_mut().enumerate() {
        let mut mu = [0.0; M];
        mu[l] = 1.0;
        k.add_curvature(&mu, h);
    }
    Condition {
        value: k.value(),
        gradient: k.gradient(),
        hessian,
    }
}

/// `out += sum_l w_l g_l g_l^T`.
#[inline]
pub(crate) fn add_outer<const M: usize, const S: usize>(
    w: &[f64; M],
    g: &[[Vec3; S]; M],
    out: &mut Blocks<S>,
) {
    for l in 0..M {
        if w[l] == 0.0 {
            continue;
        }
        for a in 0..S {
            let wa = g[l][a] * w[l];
            for b in a..S {
                let m = wa * g[l][b].transpose();
                out[a][b] += m;
                if b != a {
                    out[b][a] += m.transpose();
                }
            }
        }
    }
}

/// The generic §4.1 + §4.5 routine: accumulates into `out` the response of a condition with
/// per-component stiffness `k` (energy `sum_l k_l/2 C_l^2`) and damping `kd` at velocities `v`:
///
/// * `f_a = -sum_l (k_l C_l + kd_l Cdot_l) dC_l/dx_a`, `Cdot_l = sum_b dC_l/dx_b . v_b`;
/// * `df_a/dv_b = -sum_l kd_l dC_l/dx_a^T dC_l/dx_b`;
/// * `df_a/dx_b = -Kel_ab` with `Kel` as documented on [`Definiteness`]; the damping's
///   unsymmetric term `dC_a^T dCdot/dx_b` is omitted (§4.5).
pub(crate) fn respond<K: Kernel<M, S>, const M: usize, const S: usize>(
    kernel: &K,
    k: &[f64; M],
    kd: &[f64; M],
    v: &[Vec3; S],
    definiteness: Definiteness,
    out: &mut ElementResponse<S>,
) {
    let c = kernel.value();
    let g = kernel.gradient();
    let mut mu = [0.0; M];
    let mut nkd = [0.0; M];
    for l in 0..M {
        out.energy += 0.5 * k[l] * c[l] * c[l];
        let cdot: f64 = (0..S).map(|a| g[l][a].dot(&v[a])).sum();
        mu[l] = k[l] * c[l] + kd[l] * cdot;
        nkd[l] = -kd[l];
        for a in 0..S {
            out.forces[a] -= g[l][a] * mu[l];
        }
    }
    add_outer(&nkd, &g, &mut out.dfdv);
    let mut kel = [[Matrix3::zeros(); S]; S];
    match definiteness {
        Definiteness::Clamped => kernel.add_clamped(k, &mu, &mut kel),
        Definiteness::Exact | Definiteness::Projected => {
            add_outer(k, &g, &mut kel);
            kernel.add_curvature(&mu, &mut kel);
            if definiteness == Definiteness::Projected {
                project_psd(&mut kel);
            }
        }
    }
    for a in 0..S {
        for b in 0..S {
            out.dfdx[a][b] -= kel[a][b];
        }
    }
}

/// Copies blocks into a dense symmetric matrix (3S x 3S).
pub fn blocks_to_dense<const S: usize>(b: &Blocks<S>) -> DMatrix<f64> {
    DMatrix::from_fn(3 * S, 3 * S, |r, c| b[r / 3][c / 3][(r % 3, c % 3)])
}

/// PSD projection through a fixed-size (N x N, N = 3S) eigen-decomposition (no allocation).
macro_rules! project_fixed {
    ($n:literal, $b:expr) => {{
        let b = $b;
        let mut m = SMatrix::<f64, $n, $n>::from_fn(|r, c| b[r / 3][c / 3][(r % 3, c % 3)]);
        m = (m + m.transpose()) * 0.5;
        let eig = m.symmetric_eigen();
        let lam = eig.eigenvalues.map(|x| x.max(0.0));
        let p = eig.eigenvectors
            * SMatrix::<f64, $n, $n>::from_diagonal(&lam)
            * eig.eigenvectors.transpose();
        for r in 0..$n {
            for c in 0..$n {
                b[r / 3][c / 3][(r % 3, c % 3)] = 0.5 * (p[(r, c)] + p[(c, r)]);
            }
        }
    }};
}

/// Replaces a symmetric block matrix by its projection onto the positive semidefinite cone
/// (eigenvalues below zero set to zero). Reference path of [`Definiteness::Projected`].
pub fn project_psd<const S: usize>(b: &mut Blocks<S>) {
    match S {
        3 => project_fixed!(9, b),
        4 => project_fixed!(12, b),
        6 => project_fixed!(18, b),
        _ => {
            let mut m = blocks_to_dense(b);
            m = (&m + m.transpose()) * 0.5;
            let eig = m.symmetric_eigen();
            let lam = eig.eigenvalues.map(|x| x.max(0.0));
            let p = &eig.eigenvectors * DMatrix::from_diagonal(&lam) * eig.eigenvectors.transpose();
            for r in 0..3 * S {
                for c in 0..3 * S {
                    b[r / 3][c / 3][(r % 3, c % 3)] = p[(r, c)];
                }
            }
        }
    }
}

/// The generic §4.1 + §4.5 routine on a precomputed [`Condition`] (exact Hessians): energy,
/// forces (elastic + damping), df/dx and df/dv of one element with per-component stiffness `k`
/// and damping coefficient `kd` at particle velocities `v` (m/s). Formulas as on
/// [`Definiteness`]; here `Clamped` and `Projected` both use the numerical eigenvalue projection
/// (the model's fast path uses the analytic clamps instead).
pub fn condition_response<const M: usize, const S: usize>(
    c: &Condition<M, S>,
    k: [f64; M],
    kd: [f64; M],
    v: &[Vec3; S],
    definiteness: Definiteness,
) -> ElementResponse<S> {
    struct Pre<'a, const M: usize, const S: usize>(&'a Condition<M, S>);
    impl<const M: usize, const S: usize> Kernel<M, S> for Pre<'_, M, S> {
        fn value(&self) -> [f64; M] {
            self.0.value
        }
        fn gradient(&self) -> [[Vec3; S]; M] {
            self.0.gradient
        }
        fn add_curvature(&self, mu: &[f64; M], out: &mut Blocks<S>) {
            for l in 0..M {
                for a in 0..S {
                    for b in 0..S {
                        out[a][b] += self.0.hessian[l][a][b] * mu[l];
                    }
                }
            }
        }
        fn add_clamped(&self, k: &[f64; M], mu: &[f64; M], out: &mut Blocks<S>) {
            let mut m = [[Matrix3::zeros(); S]; S];
            add_outer(k, &self.0.gradient, &mut m);
            self.add_curvature(mu, &mut m);
            project_psd(&mut m);
            for a in 0..S {
                for b in 0..S {
                    out[a][b] += m[a][b];
                }
            }
        }
    }
    let mut out = ElementResponse::zero();
    respond(&Pre(c), &k, &kd, v, definiteness, &mut out);
    out
}

/// Output slots of one element in an evaluation: its entry blocks and per-vertex forces.
pub(crate) struct ElementSlots<'a> {
    pub dfdx: &'a mut [Matrix3<f64>],
    pub dfdv: &'a mut [Matrix3<f64>],
    pub forces: &'a mut [Vec3],
}
