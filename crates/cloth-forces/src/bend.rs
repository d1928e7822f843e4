//! The bend condition on a hinge (two triangles sharing an edge): the dihedral angle theta
//! (Baraff & Witkin §4.3), its gradient (as in Bridson, Marino & Fedkiw 2003) and its exact
//! Hessian (own derivation by differentiating that gradient; checked against finite differences).
//!
//! Stencil and sign: `x = [x0, x1, x2, x3]`, shared edge (x0, x1), triangle 1 = (x0, x1, x2),
//! triangle 2 = (x1, x0, x3) (the `cloth_mesh::Hinge` convention), normals
//! `N1 = (x1 - x0) x (x2 - x0)`, `N2 = (x0 - x1) x (x3 - x1)`, `e = (x1 - x0)/|x1 - x0|`,
//! `theta = atan2((n1 x n2) . e, n1 . n2)` in (-pi, pi]. theta = 0 when flat. theta > 0 when the
//! wings x2 and x3 lie on the side opposite to the normals (the surface curves away from its
//! normal, like a sphere with outward normals); theta < 0 when they fold towards the normals.

use crate::condition::{Blocks, Condition, ElementSlots, Kernel, Vec3, add_outer, condition_of};
use nalgebra::Matrix3;

/// Rest data of one hinge (see [`dihedral_angle`] for the stencil and sign convention).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HingeRest {
    /// Angular stiffness k_e = D |e|^2 / (A1 + A2) * w_aniso (N*m per rad^2), rest quantities.
    pub stiffness: f64,
    /// Rest dihedral angle theta0 (rad), 0 = flat.
    pub rest_angle: f64,
    /// Squared rest edge length (m^2), used to scale the degeneracy guards.
    pub rest_edge_sq: f64,
}

/// Skew matrix [a x] with [a x] b = a x b.
#[inline]
fn skew(a: Vec3) -> Matrix3<f64> {
    Matrix3::new(0.0, -a.z, a.y, a.z, 0.0, -a.x, -a.y, a.x, 0.0)
}

/// Signed dihedral angle (rad, in (-pi, pi]) of the hinge `x = [x0, x1, x2, x3]` (m).
///
/// Stencil (the `cloth_mesh::Hinge` convention): shared edge (x0, x1), triangle 1 winds
/// (x0, x1, x2), triangle 2 winds (x1, x0, x3); normals `N1 = (x1 - x0) x (x2 - x0)`,
/// `N2 = (x0 - x1) x (x3 - x1)`, `e = (x1 - x0)/|x1 - x0|`, and
/// `theta = atan2((n1 x n2) . e, n1 . n2)`. theta = 0 when flat. **Sign:** theta > 0 when the
/// wings x2, x3 lie on the side opposite to the normals (the surface curves away from its
/// normal, like a sphere with outward normals); theta < 0 when they fold towards the normals.
/// Returns 0 if the configuration is fully degenerate.
pub fn dihedral_angle(x: &[Vec3; 4]) -> f64 {
    let e = x[1] - x[0];
    let n1 = e.cross(&(x[2] - x[0]));
    let n2 = (x[3] - x[1]).cross(&e);
    let le = e.norm();
    if le == 0.0 {
        return 0.0;
    }
    let s = n1.cross(&n2).dot(&e) / le;
    let c = n1.dot(&n2);
    if s == 0.0 && c == 0.0 {
        0.0
    } else {
        s.atan2(c)
    }
}

/// Wraps an angle difference into (-pi, pi], so a hinge whose rest angle is near +-pi sees the
/// shortest way round (the energy is discontinuous only half a turn away from rest).
#[inline]
pub(crate) fn wrap_angle(d: f64) -> f64 {
    use std::f64::consts::{PI, TAU};
    if d > PI {
        d - TAU
    } else if d <= -PI {
        d + TAU
    } else {
        d
    }
}

/// Bend kernel state at one configuration.
pub(crate) struct Bend {
    theta: f64,
    rest_angle: f64,
    ok: bool,
    x: [Vec3; 4],
    e: Vec3,
    le: f64,
    le2: f64,
    n1: Vec3,
    n2: Vec3,
    n1sq: f64,
    n2sq: f64,
    t1: f64,
    t2: f64,
    g: [Vec3; 4],
}

impl Bend {
    #[inline]
    pub(crate) fn new(rest: &HingeRest, x: [Vec3; 4]) -> Self {
        let e = x[1] - x[0];
        let le2 = e.norm_squared();
        let n1 = e.cross(&(x[2] - x[0]));
        let n2 = (x[3] - x[1]).cross(&e);
        let le = le2.sqrt();
        // Guards: an edge shorter than 1e-6 of its rest length is treated as collapsed (no bend
        // force); triangle heights are floored at 1e-6 |e| so gradients stay finite.
        let ok = le2 > 1e-12 * rest.rest_edge_sq && le2.is_finite();
        let floor = 1e-12 * le2 * le2;
        let n1sq = n1.norm_squared().max(floor);
        let n2sq = n2.norm_squared().max(floor);
        let s = if ok { n1.cross(&n2).dot(&e) / le } else { 0.0 };
        let c = n1.dot(&n2);
        let theta = if s == 0.0 && c == 0.0 {
            0.0
        } else {
            s.atan2(c)
        };
        let (t1, t2, g) = if ok {
            let q1 = n1 / n1sq;
            let q2 = n2 / n2sq;
            let g2 = -q1 * le;
            let g3 = -q2 * le;
            let t1 = (x[2] - x[0]).dot(&e) / le2;
            let t2 = (x[3] - x[0]).dot(&e) / le2;
            let g0 = -g2 * (1.0 - t1) - g3 * (1.0 - t2);
            let g1 = -g2 * t1 - g3 * t2;
            (t1, t2, [g0, g1, g2, g3])
        } else {
            (0.0, 0.0, [Vec3::zeros(); 4])
        };
        Self {
            theta,
            rest_angle: rest.rest_angle,
            ok,
            x,
            e,
            le,
            le2,
            n1,
            n2,
            n1sq,
            n2sq,
            t1,
            t2,
            g,
        }
    }

    /// Exact Hessian of theta (symmetrised), scaled by `f`, added to `out`.
    pub(crate) fn add_hessian(&self, f: f64, out: &mut Blocks<4>) {
        if !self.ok || f == 0.0 {
            return;
        }
        let x = &self.x;
        let e = self.e;
        let le = self.le;
        let le2 = self.le2;
        let eh = e / le;
        let (t1, t2) = (self.t1, self.t2);
        let q1 = self.n1 / self.n1sq;
        let q2 = self.n2 / self.n2sq;
        let nh1 = self.n1 / self.n1sq.sqrt();
        let nh2 = self.n2 / self.n2sq.sqrt();
        let i = Matrix3::identity();
        let dq1 = (i - nh1 * nh1.transpose() * 2.0) * (le / self.n1sq);
        let dq2 = (i - nh2 * nh2.transpose() * 2.0) * (le / self.n2sq);
        let z = Matrix3::zeros();
        // dN/dx_b
        let dn1 = [skew(x[2] - x[1]), -skew(x[2] - x[0]), skew(e), z];
        let dn2 = [-skew(x[3] - x[1]), skew(x[3] - x[0]), z, -skew(e)];
        // d|e|/dx_b
        let dle = [-eh, eh, Vec3::zeros(), Vec3::zeros()];
        // dt/dx_b (as vectors)
        let d2 = x[2] - x[0];
        let d3 = x[3] - x[0];
        let dt1 = [
            (-e - d2 + e * (2.0 * t1)) / le2,
            (d2 - e * (2.0 * t1)) / le2,
            e / le2,
            Vec3::zeros(),
        ];
        let dt2 = [
            (-e - d3 + e * (2.0 * t2)) / le2,
            (d3 - e * (2.0 * t2)) / le2,
            Vec3::zeros(),
            e / le2,
        ];
        let (g2, g3) = (self.g[2], self.g[3]);
        let mut h = [[Matrix3::zeros(); 4]; 4];
        for b in 0..4 {
            let h2 = -(q1 * dle[b].transpose()) - dq1 * dn1[b];
            let h3 = -(q2 * dle[b].transpose()) - dq2 * dn2[b];
            let gt = g2 * dt1[b].transpose() + g3 * dt2[b].transpose();
            h[0][b] = gt - h2 * (1.0 - t1) - h3 * (1.0 - t2);
            h[1][b] = -gt - h2 * t1 - h3 * t2;
            h[2][b] = h2;
            h[3][b] = h3;
        }
        for a in 0..4 {
            for b in 0..4 {
                out[a][b] += (h[a][b] + h[b][a].transpose()) * (0.5 * f);
            }
        }
    }
}

impl Kernel<1, 4> for Bend {
    #[inline]
    fn value(&self) -> [f64; 1] {
        [wrap_angle(self.theta - self.rest_angle)]
    }
    #[inline]
    fn gradient(&self) -> [[Vec3; 4]; 1] {
        [self.g]
    }
    fn add_curvature(&self, mu: &[f64; 1], out: &mut Blocks<4>) {
        self.add_hessian(mu[0], out);
    }
    #[inline]
    fn add_clamped(&self, k: &[f64; 1], _mu: &[f64; 1], out: &mut Blocks<4>) {
        // Gauss-Newton: k g g^T (PSD).
        add_outer(k, &[self.g], out);
    }
}

/// Bend condition `C = theta - theta0` (rad, wrapped into (-pi, pi]) with exact gradient and
/// Hessian at `x` (m); theta as in [`dihedral_angle`]. Energy with stiffness `k_e`:
/// `k_e/2 C^2`. Robust near +-180 degrees (the gradient never divides by sin or cos of theta)
/// and for slightly degenerate triangles (heights floored at 1e-6 |e|, no NaN).
pub fn bend_condition(rest: &HingeRest, x: &[Vec3; 4]) -> Condition<1, 4> {
    condition_of(&Bend::new(rest, *x))
}

/// Element-local vertex pairs (a <= b) of a hinge element, in entry order.
pub(crate) const HINGE_PAIRS: [(usize, usize); 10] = [
    (0, 0),
    (0, 1),
    (0, 2),
    (0, 3),
    (1, 1),
    (1, 2),
    (1, 3),
    (2, 2),
    (2, 3),
    (3, 3),
];

/// Fast path of one hinge under `Clamped` (Gauss-Newton): the same result as the generic
/// routine with `Bend::add_clamped`, written straight into the 10 entry blocks
/// (`-k g_a g_b^T`, `-kd g_a g_b^T`) and 4 forces; returns the energy.
#[inline]
pub(crate) fn hinge_fast_gauss_newton(
    rest: &HingeRest,
    x: [Vec3; 4],
    v: &[Vec3; 4],
    k: f64,
    kd: f64,
    out: ElementSlots<'_>,
) -> f64 {
    let b = Bend::new(rest, x);
    let c = b.value()[0];
    let g = &b.g;
    let cdot: f64 = (0..4).map(|a| g[a].dot(&v[a])).sum();
    let mu = k * c + kd * cdot;
    for a in 0..4 {
        out.forces[a] = g[a] * -mu;
    }
    for (e, &(p, q)) in HINGE_PAIRS.iter().enumerate() {
        let gg = g[p] * g[q].transpose();
        out.dfdx[e] = gg * -k;
        out.dfdv[e] = gg * -kd;
    }
    0.5 * k * c * c
}
