//! Per-triangle rest data and the stretch and shear conditions (Baraff & Witkin §4.2-4.3, scaled
//! by sqrt(area) instead of area so stiffness is a material property; docs/physics.md).

use crate::condition::{Blocks, Condition, ElementSlots, Kernel, Vec3, add_outer, condition_of};
use nalgebra::{Matrix2, Matrix3, Vector2};

/// Below this |w| (dimensionless stretch) a direction is treated as collapsed: its unit vector and
/// curvature term are set to zero instead of dividing by ~0.
const COLLAPSED: f64 = 1e-12;

/// Rest data of one triangle (i, j, k), computed once from rest (u, v) coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleRest {
    /// Rest area a (m^2), > 0.
    pub area: f64,
    /// sqrt(a) (m), the condition scale.
    pub sqrt_area: f64,
    /// Coefficients (1/m) with `w_u = sum_a alpha[a] x_a` (from the inverse (u, v) edge matrix).
    pub alpha: [f64; 3],
    /// Coefficients (1/m) with `w_v = sum_a beta[a] x_a`.
    pub beta: [f64; 3],
}

impl TriangleRest {
    /// Rest data from the three rest coordinates (m). `None` if the triangle is degenerate
    /// (area below 1e-14 of its squared longest edge) or not finite. Either winding is accepted.
    pub fn new(uv: [Vector2<f64>; 3]) -> Option<Self> {
        let d1 = uv[1] - uv[0];
        let d2 = uv[2] - uv[0];
        let m = Matrix2::new(d1.x, d2.x, d1.y, d2.y);
        let det = m.determinant();
        let scale = d1
            .norm_squared()
            .max(d2.norm_squared())
            .max((uv[2] - uv[1]).norm_squared());
        if !(det.is_finite() && scale.is_finite()) || det.abs() <= 1e-14 * scale || scale == 0.0 {
            return None;
        }
        let inv = Matrix2::new(d2.y, -d2.x, -d1.y, d1.x) / det;
        let area = 0.5 * det.abs();
        Some(Self {
            area,
            sqrt_area: area.sqrt(),
            alpha: [-(inv[(0, 0)] + inv[(1, 0)]), inv[(0, 0)], inv[(1, 0)]],
            beta: [-(inv[(0, 1)] + inv[(1, 1)]), inv[(0, 1)], inv[(1, 1)]],
        })
    }

    /// (w_u, w_v) at world positions `x` (dimensionless stretch vectors).
    #[inline]
    pub fn deformation(&self, x: &[Vec3; 3]) -> (Vec3, Vec3) {
        let wu = x[0] * self.alpha[0] + x[1] * self.alpha[1] + x[2] * self.alpha[2];
        let wv = x[0] * self.beta[0] + x[1] * self.beta[1] + x[2] * self.beta[2];
        (wu, wv)
    }
}

#[inline]
fn unit(w: Vec3) -> (f64, Vec3, f64) {
    let l = w.norm();
    if l > COLLAPSED {
        (l, w / l, 1.0 / l)
    } else {
        (l, Vec3::zeros(), 0.0)
    }
}

/// Stretch condition C = sqrt(a) (|w_u| - b_u, |w_v| - b_v).
pub(crate) struct Stretch<'a> {
    rest: &'a TriangleRest,
    c: [f64; 2],
    hat: [Vec3; 2],
    inv_len: [f64; 2],
}

impl<'a> Stretch<'a> {
    #[inline]
    pub(crate) fn new(rest: &'a TriangleRest, wu: Vec3, wv: Vec3, b: [f64; 2]) -> Self {
        let (lu, hu, iu) = unit(wu);
        let (lv, hv, iv) = unit(wv);
        Self {
            rest,
            c: [rest.sqrt_area * (lu - b[0]), rest.sqrt_area * (lv - b[1])],
            hat: [hu, hv],
            inv_len: [iu, iv],
        }
    }
    #[inline]
    fn coef(&self, l: usize) -> &[f64; 3] {
        if l == 0 {
            &self.rest.alpha
        } else {
            &self.rest.beta
        }
    }
}

impl Kernel<2, 3> for Stretch<'_> {
    #[inline]
    fn value(&self) -> [f64; 2] {
        self.c
    }
    #[inline]
    fn gradient(&self) -> [[Vec3; 3]; 2] {
        let s = self.rest.sqrt_area;
        std::array::from_fn(|l| {
            let cf = self.coef(l);
            std::array::from_fn(|a| self.hat[l] * (s * cf[a]))
        })
    }
    #[inline]
    fn add_curvature(&self, mu: &[f64; 2], out: &mut Blocks<3>) {
        // d2C_l/dx_a dx_b = sqrt(a) c_a c_b (I - h h^T) / |w|.
        for l in 0..2 {
            let f = mu[l] * self.rest.sqrt_area * self.inv_len[l];
            if f == 0.0 {
                continue;
            }
            let p = Matrix3::identity() - self.hat[l] * self.hat[l].transpose();
            let cf = self.coef(l);
            for a in 0..3 {
                for b in 0..3 {
                    out[a][b] += p * (f * cf[a] * cf[b]);
                }
            }
        }
    }
    #[inline]
    fn add_clamped(&self, k: &[f64; 2], mu: &[f64; 2], out: &mut Blocks<3>) {
        // F-space matrix per direction: k a h h^T + mu sqrt(a)/|w| (I - h h^T), orthogonal parts:
        // the PSD projection clamps mu at zero.
        add_outer(k, &self.gradient(), out);
        self.add_curvature(&[mu[0].max(0.0), mu[1].max(0.0)], out);
    }
}

/// Shear condition C = sqrt(a) w_u . w_v.
pub(crate) struct Shear<'a> {
    rest: &'a TriangleRest,
    wu: Vec3,
    wv: Vec3,
}

impl<'a> Shear<'a> {
    #[inline]
    pub(crate) fn new(rest: &'a TriangleRest, wu: Vec3, wv: Vec3) -> Self {
        Self { rest, wu, wv }
    }
}

/// Symmetric 2x2 [[p, q], [q, r]] with negative eigenvalues set to zero.
#[inline]
fn clamp2(p: f64, q: f64, r: f64) -> (f64, f64, f64) {
    let m = 0.5 * (p + r);
    let h = 0.5 * (p - r);
    let d = h.hypot(q);
    let (l1, l2) = (m + d, m - d);
    if l2 >= 0.0 {
        return (p, q, r);
    }
    if l1 <= 0.0 {
        return (0.0, 0.0, 0.0);
    }
    // Only l1 > 0 survives: l1 e e^T with e the unit eigenvector of l1.
    // (p - l1) e0 + q e1 = 0  ->  e ~ (q, l1 - p) or (l1 - r, q); pick the larger for accuracy.
    let (e0, e1) = if (l1 - r).abs() >= (l1 - p).abs() {
        (l1 - r, q)
    } else {
        (q, l1 - p)
    };
    let n2 = e0 * e0 + e1 * e1;
    if n2 == 0.0 {
        return (l1, 0.0, 0.0);
    }
    let s = l1 / n2;
    (s * e0 * e0, s * e0 * e1, s * e1 * e1)
}

/// A unit vector along `w`, or an arbitrary unit vector if `w` ~ 0 (any unit vector is then
/// correct for the shear eigen-decomposition).
#[inline]
fn unit_or_any(w: Vec3) -> (f64, Vec3) {
    let l = w.norm();
    if l > COLLAPSED {
        (l, w / l)
    } else {
        (l, Vec3::x())
    }
}

impl Kernel<1, 3> for Shear<'_> {
    #[inline]
    fn value(&self) -> [f64; 1] {
        [self.rest.sqrt_area * self.wu.dot(&self.wv)]
    }
    #[inline]
    fn gradient(&self) -> [[Vec3; 3]; 1] {
        let s = self.rest.sqrt_area;
        let (al, be) = (&self.rest.alpha, &self.rest.beta);
        [std::array::from_fn(|a| {
            (self.wv * al[a] + self.wu * be[a]) * s
        })]
    }
    #[inline]
    fn add_curvature(&self, mu: &[f64; 1], out: &mut Blocks<3>) {
        // d2C/dx_a dx_b = sqrt(a) (alpha_a beta_b + beta_a alpha_b) I.
        let f = mu[0] * self.rest.sqrt_area;
        let (al, be) = (&self.rest.alpha, &self.rest.beta);
        for a in 0..3 {
            for b in 0..3 {
                let d = f * (al[a] * be[b] + be[a] * al[b]);
                out[a][b][(0, 0)] += d;
                out[a][b][(1, 1)] += d;
                out[a][b][(2, 2)] += d;
            }
        }
    }
    fn add_clamped(&self, k: &[f64; 1], mu: &[f64; 1], out: &mut Blocks<3>) {
        let (uu, uv, vv) = shear_clamped_f(
            k[0] * self.rest.area,
            mu[0] * self.rest.sqrt_area,
            self.wu,
            self.wv,
        );
        add_f_blocks(self.rest, &uu, &uv, &vv, out);
    }
}

/// `out[a][b] += B^T M_F B` for an F-space matrix with blocks (uu, uv, uv^T, vv).
fn add_f_blocks(
    rest: &TriangleRest,
    uu: &Matrix3<f64>,
    uv: &Matrix3<f64>,
    vv: &Matrix3<f64>,
    out: &mut Blocks<3>,
) {
    let vu = uv.transpose();
    let (al, be) = (&rest.alpha, &rest.beta);
    for a in 0..3 {
        for b in 0..3 {
            out[a][b] += uu * (al[a] * al[b])
                + uv * (al[a] * be[b])
                + vu * (be[a] * al[b])
                + vv * (be[a] * be[b]);
        }
    }
}

/// PSD projection of the shear F-space matrix `M = kappa g g^T + nu P`, g = (w_v, w_u),
/// P = [[0, I], [I, 0]]; returns its (uu, uv, vv) blocks (vu = uv^T).
///
/// With Sigma = (x_u + x_v)/sqrt2 and Delta = (x_u - x_v)/sqrt2, P = diag(I, -I) and
/// g = (sigma, delta), sigma = (w_v + w_u)/sqrt2, delta = (w_v - w_u)/sqrt2. Eigenpairs: nu on the
/// Sigma-space orthogonal to sigma, -nu on the Delta-space orthogonal to delta, and the 2x2 block
/// [[kappa|s|^2 + nu, kappa|s||d|], [kappa|s||d|, kappa|d|^2 - nu]] on (sigma_hat, 0), (0, delta_hat).
#[inline]
pub(crate) fn shear_clamped_f(
    kappa: f64,
    nu: f64,
    wu: Vec3,
    wv: Vec3,
) -> (Matrix3<f64>, Matrix3<f64>, Matrix3<f64>) {
    let r2 = std::f64::consts::FRAC_1_SQRT_2;
    let (ls, sh) = unit_or_any((wv + wu) * r2);
    let (ld, dh) = unit_or_any((wv - wu) * r2);
    let (p, q, r) = clamp2(kappa * ls * ls + nu, kappa * ls * ld, kappa * ld * ld - nu);
    let i = Matrix3::identity();
    let ss = sh * sh.transpose();
    let dd = dh * dh.transpose();
    let m_ss = (i - ss) * nu.max(0.0) + ss * p;
    let m_dd = (i - dd) * (-nu).max(0.0) + dd * r;
    let m_sd = sh * dh.transpose() * q;
    let m_ds = m_sd.transpose();
    let uu = (m_ss + m_sd + m_ds + m_dd) * 0.5;
    let uv = (m_ss - m_sd + m_ds - m_dd) * 0.5;
    let vv = (m_ss - m_sd - m_ds + m_dd) * 0.5;
    (uu, uv, vv)
}

/// Stretch and shear parameters of the triangle fast path.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TriangleParams {
    pub stretch: [f64; 2],
    pub stretch_damping: [f64; 2],
    pub targets: [f64; 2],
    pub shear: f64,
    pub shear_damping: f64,
}

/// Fast path for stretch + shear of one triangle under `Exact` or `Clamped` (same mathematics as
/// the generic routine, see [`crate::Definiteness`]), done in F = (w_u, w_v) space: every
/// element matrix is `B^T M_F B` with 3x3 blocks uu, uv, vv, and forces are
/// `f_a = -(alpha_a P_u + beta_a P_v)` with the F-space stress (P_u, P_v). Writes the 6 entry
/// blocks (local pairs (0,0),(0,1),(0,2),(1,1),(1,2),(2,2)), the 3 forces; returns the energy.
#[inline]
pub(crate) fn triangle_fast(
    rest: &TriangleRest,
    x: &[Vec3; 3],
    v: &[Vec3; 3],
    p: &TriangleParams,
    clamped: bool,
    out: ElementSlots<'_>,
) -> f64 {
    let (wu, wv) = rest.deformation(x);
    let (du, dv) = rest.deformation(v);
    let sa = rest.sqrt_area;
    let a = rest.area;
    let i = Matrix3::identity();
    let mut energy = 0.0;
    let (mut pu, mut pv) = (Vec3::zeros(), Vec3::zeros());
    let (mut muu, mut muv, mut mvv) = (Matrix3::zeros(), Matrix3::zeros(), Matrix3::zeros());
    let (mut duu, mut duv, mut dvv) = (Matrix3::zeros(), Matrix3::zeros(), Matrix3::zeros());
    // Stretch, one direction at a time.
    for (l, (w, wdot)) in [(wu, du), (wv, dv)].into_iter().enumerate() {
        let (len, h, inv) = unit(w);
        let k = p.stretch[l];
        let kd = p.stretch_damping[l];
        let c = sa * (len - p.targets[l]);
        let cdot = sa * h.dot(&wdot);
        let mu = k * c + kd * cdot;
        energy += 0.5 * k * c * c;
        let hh = h * h.transpose();
        let curv = if clamped { mu.max(0.0) } else { mu } * sa * inv;
        let m = hh * (k * a) + (i - hh) * curv;
        let d = hh * (kd * a);
        if l == 0 {
            pu += h * (sa * mu);
            muu += m;
            duu += d;
        } else {
            pv += h * (sa * mu);
            mvv += m;
            dvv += d;
        }
    }
    // Shear.
    if p.shear != 0.0 || p.shear_damping != 0.0 {
        let (k, kd) = (p.shear, p.shear_damping);
        let c = sa * wu.dot(&wv);
        let cdot = sa * (wv.dot(&du) + wu.dot(&dv));
        let mu = k * c + kd * cdot;
        energy += 0.5 * k * c * c;
        pu += wv * (sa * mu);
        pv += wu * (sa * mu);
        let (vvt, vut, uut) = (
            wv * wv.transpose(),
            wv * wu.transpose(),
            wu * wu.transpose(),
        );
        if clamped {
            let (uu, uv, vv) = shear_clamped_f(k * a, mu * sa, wu, wv);
            muu += uu;
            muv += uv;
            mvv += vv;
        } else {
            muu += vvt * (k * a);
            muv += vut * (k * a) + i * (mu * sa);
            mvv += uut * (k * a);
        }
        duu += vvt * (kd * a);
        duv += vut * (kd * a);
        dvv += uut * (kd * a);
    }
    let (al, be) = (&rest.alpha, &rest.beta);
    for a in 0..3 {
        out.forces[a] = -(pu * al[a] + pv * be[a]);
    }
    let (mvu, dvu) = (muv.transpose(), duv.transpose());
    for (e, &(a, b)) in TRI_PAIRS.iter().enumerate() {
        let (aa, ab, ba, bb) = (al[a] * al[b], al[a] * be[b], be[a] * al[b], be[a] * be[b]);
        out.dfdx[e] = -(muu * aa + muv * ab + mvu * ba + mvv * bb);
        out.dfdv[e] = -(duu * aa + duv * ab + dvu * ba + dvv * bb);
    }
    energy
}

/// Element-local vertex pairs (a <= b) of a triangle element, in entry order.
pub(crate) const TRI_PAIRS: [(usize, usize); 6] = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)];

/// Stretch condition `C = sqrt(a) (|w_u| - b_u, |w_v| - b_v)` with exact gradient and Hessian at
/// world positions `x` (m). Energy with stiffness k: `a k/2 ((|w_u|-b_u)^2 + (|w_v|-b_v)^2)`.
pub fn stretch_condition(rest: &TriangleRest, x: &[Vec3; 3], targets: [f64; 2]) -> Condition<2, 3> {
    let (wu, wv) = rest.deformation(x);
    condition_of(&Stretch::new(rest, wu, wv, targets))
}

/// Shear condition `C = sqrt(a) w_u . w_v` with exact gradient and Hessian at `x` (m).
pub fn shear_condition(rest: &TriangleRest, x: &[Vec3; 3]) -> Condition<1, 3> {
    let (wu, wv) = rest.deformation(x);
    condition_of(&Shear::new(rest, wu, wv))
}
