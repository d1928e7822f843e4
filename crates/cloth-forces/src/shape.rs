//! Shape-operator bending: a discrete second fundamental form (curvature) per triangle from
//! the dihedral angles of its three edges, and the plate energy `A D/2 |K|^2` (Poisson ratio
//! 0). The idea of a per-triangle shape operator made of edge terms is Grinspun, Gingold,
//! Reisman & Zorin 2006, "Computing discrete shape operators on general meshes"; the choice of
//! weights below is our own (measurements in `docs/bending.md`).
//!
//! # Angles and curvature
//!
//! Triangle f = (p0, p1, p2) (rest (u, v), counter-clockwise), edge i opposite p_i, flap q_i
//! across edge i. Lift the flat mesh by a small height z along minus the normal (so a surface
//! curving away from its normal has a positive Hessian K, matching the sign of
//! [`crate::dihedral_angle`]). To first order theta_i is the jump of the slope normal to edge
//! i, which is the height of q_i above the plane of f divided by the distance d_i of q_i from
//! the edge line. For a quadratic z with Hessian K that height is the error of linear
//! interpolation on f at q_i, `-1/2 sum_k lambda_k(q_i) (q_i - p_k)^T K (q_i - p_k)` (Taylor
//! expansion of z(p_k) about q_i; lambda the barycentric coordinates), so
//! `theta_i = <J_i, K>` with `J_i = -1/(2 d_i) sum_k lambda_k(q_i) (q_i - p_k)(q_i - p_k)^T`.
//! (Check: `<J_i, I> = (|q_i - c|^2 - R^2)/(2 d_i)` with c, R the circumcircle of f.)
//!
//! A curvature map `K_f = M_f theta_f` (3x3, columns per edge) is
//! * **consistent** if `M_f J_f = I`: every quadratic surface gets its exact curvature;
//! * **conservative** if `A_f M_f[e] + A_g M_g[e] = |e| t_e t_e^T` on every interior edge
//!   (t_e its unit in-plane normal): then `sum_f A_f K_f = sum_e |e| theta_e t_e t_e^T` is the
//!   distributional Hessian of the piecewise-linear surface, which telescopes to a boundary
//!   term. Without it, oscillations of the mesh on the scale of one triangle (e.g. one
//!   sub-lattice of an alternating grid moving against the other) add a net curvature, and
//!   a bent strip can lower its energy through them: it is too soft in a way refinement does
//!   not cure. With it, `sum_f A_f |K_f|^2 >= |sum_f A_f K_f|^2 / A` (Cauchy-Schwarz) forbids
//!   that, and consistency then makes the energy exact.
//!
//! `M_f = J_f^-1` is consistent but not conservative: it makes a cantilever on an
//! alternating grid sag 8 degrees too far. The midedge-average map of Grinspun et al.
//! (libshell's `MidedgeAverageFormulation`, [`midedge_map`]), `|e_i|/(2A) t_i t_i^T`, is
//! conservative and consistent on uniform and equilateral grids only (2x too stiff in twist
//! on alternating grids, 1.2-1.5x on jittered meshes); the hinge model (`k_e theta_e^2`) is
//! neither. With the triangle and its three flaps alone both properties cannot hold together
//! on every mesh, so the weights here are the midedge columns and the split of each angle
//! between its two triangles (`theta/2 +- psi_e`, which keeps conservation whatever psi) is
//! minimised out of the energy at every evaluation (the `split` module): the energy of every
//! quadratic surface is then the plate's on uniform, alternating,
//! equilateral, jittered and disc meshes (up to the free-edge strip), and the heavy
//! cantilever is within 1 degree of the exact elastica on all of them
//! (`docs/bending.md`). The kernel below sees the split as fixed offsets of its angles
//! ([`Shape::with_offsets`]).
//!
//! # Energy and condition
//!
//! Per triangle of rest area A: `E = A D/2 (m_u K_uu^2 + m_v K_vv^2 + 2 sqrt(m_u m_v) K_uv^2)`
//! (orthotropic plate with Poisson ratio 0; `[m_u, m_v]` = `Material::bend_uv`, the twist
//! rigidity their geometric mean, Huber's approximation). Written as a condition
//! `C = sqrt(A) W^(1/2) K = P (theta - theta0 + offsets)` (the offsets are the midedge split,
//! held fixed in the derivatives) with stiffness D (3 components over the 6 stencil vertices),
//! so the generic §4.1/§4.5 routine applies: forces, Gauss-Newton and exact Hessians at a
//! fixed split (`d2C = sum_i P_li d2theta_i`, the hinge's exact angle Hessian), damping
//! `k_d = beta D` (on the angle rates; the split's rate is not damped).
//!
//! # Free edges
//!
//! A boundary edge has no flap and no angle. The curvature it cannot observe is the normal
//! curvature across it (`t t^T`); that component is minimised out of the triangle's energy
//! (exactly, since the missing angle belongs to this triangle alone): the triangle keeps the
//! least-energy curvature compatible with its other angles, the discrete form of a plate's free
//! edge (no bending moment across it). In C this is the projection of the interior columns of
//! `W^(1/2) M` onto the orthogonal complement of the boundary columns.
//!
//! # Clamps
//!
//! A triangle held flat by a clamp (all three vertices clamped,
//! `ClothModel::set_clamped_vertices`) stores no energy, and each of its edges gives its whole
//! angle to the triangle across (that triangle's column doubles, the edge's split is fixed):
//! the clamp line then carries the full bending moment, as a plate's clamped edge does. With
//! the split free, half of the kink went into the clamped triangle, and the heavy cantilever
//! sagged 1.4-1.9 degrees too far at 8 cells across (first order in the cell size).
//!
//! # Rest curvature
//!
//! `theta0` are the per-hinge rest angles shared with the hinge model, so a pre-folded sheet
//! (`ClothModel::set_rest_angles_from`) has zero energy. The maps come from the flat rest
//! (u, v) coordinates.

use nalgebra::{Matrix2, Matrix3, Vector2, Vector3};

use crate::bend::{Bend, HingeRest};
use crate::condition::{Blocks, Condition, Kernel, Vec3, add_outer, condition_of};

/// Element-local stencil slot of hinge vertex `a` (0..4, hinge convention) of edge `i`:
/// edge i is (p_{i+1}, p_{i+2}), its triangle-1 wing is p_i and its flap is q_i (slot 3 + i).
#[inline]
pub(crate) const fn hinge_slot(i: usize, a: usize) -> usize {
    match a {
        0 => (i + 1) % 3,
        1 => (i + 2) % 3,
        2 => i,
        _ => 3 + i,
    }
}

/// Rest data of one shape-operator bend element: triangle `(p0, p1, p2)` and its flaps
/// `(q0, q1, q2)` (q_i across edge i = (p_{i+1}, p_{i+2}), opposite p_i).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeRest {
    /// Rest area A of the triangle (m^2).
    pub area: f64,
    /// Condition weights (dimensionless): `C_l = sum_i weights[l][i] * wrap(theta_i -
    /// rest_angles[i])`, where `C = sqrt(A) W^(1/2) K` holds the curvature components
    /// `(sqrt(m_u) K_uu, sqrt(m_v) K_vv, sqrt(2 sqrt(m_u m_v)) K_uv)` scaled by sqrt(A); the
    /// bend energy is `D/2 |C|^2`. Columns of boundary edges are zero.
    pub weights: [[f64; 3]; 3],
    /// Whether edge i has a flap (is interior).
    pub flaps: [bool; 3],
    /// Rest dihedral angle of edge i (rad), as on its hinge.
    pub rest_angles: [f64; 3],
    /// Squared rest length of edge i (m^2), for the hinge degeneracy guards.
    pub rest_edge_sq: [f64; 3],
    /// Barycentric coordinates of flap i's rest position with respect to the triangle
    /// (`flap_bary[i][k]` for vertex p_k; the unit vector e_i on a boundary edge): the
    /// coordinates in which `Clamped` folds its flap-flap blocks (`drop_flap_pairs`).
    pub flap_bary: [[f64; 3]; 3],
}

/// `(J_uu, J_vv, 2 J_uv)` of a flap at `q` (rest coordinates) across edge i of triangle `p`,
/// so that `theta_i = j . (K_uu, K_vv, K_uv)` to first order.
fn flap_row(p: &[Vector2<f64>; 3], q: Vector2<f64>, i: usize, area2: f64) -> Option<Vector3<f64>> {
    // Barycentric coordinates of q with respect to p (area2 = twice the signed area).
    let cross = |a: Vector2<f64>, b: Vector2<f64>| a.x * b.y - a.y * b.x;
    let lam: [f64; 3] = std::array::from_fn(|k| {
        let (a, b) = (p[(k + 1) % 3], p[(k + 2) % 3]);
        cross(b - a, q - a) / area2
    });
    let e = p[(i + 2) % 3] - p[(i + 1) % 3];
    // Distance of q from the edge line: lambda_i = -d / h_i with h_i = area2 / |e|.
    let d = -lam[i] * area2 / e.norm();
    if !(d.is_finite() && d > 1e-9 * e.norm()) {
        return None;
    }
    let mut jm = Matrix2::zeros();
    for k in 0..3 {
        let r = q - p[k];
        jm += r * r.transpose() * lam[k];
    }
    jm *= -0.5 / d;
    Some(Vector3::new(jm[(0, 0)], jm[(1, 1)], 2.0 * jm[(0, 1)]))
}

/// J of a triangle `p` (rest coordinates, counter-clockwise) with flaps `q` (`None` on a
/// boundary edge, which gets a ghost flap: p_i mirrored across the edge line): row i gives
/// `theta_i = row . (K_uu, K_vv, K_uv)` to first order. `None` if degenerate.
pub(crate) fn flap_matrix(
    p: [Vector2<f64>; 3],
    q: [Option<Vector2<f64>>; 3],
) -> Option<Matrix3<f64>> {
    let area2 = (p[1] - p[0]).perp(&(p[2] - p[0]));
    let scale = (0..3).fold(0.0f64, |m, i| m.max((p[(i + 1) % 3] - p[i]).norm_squared()));
    if !(area2.is_finite() && area2 > 1e-12 * scale) {
        return None;
    }
    let mut j = Matrix3::zeros();
    for i in 0..3 {
        let qi = q[i].unwrap_or_else(|| {
            let (a, b) = (p[(i + 1) % 3], p[(i + 2) % 3]);
            let t = (b - a).normalize();
            let r = p[i] - a;
            a + t * (2.0 * r.dot(&t)) - r
        });
        j.set_row(i, &flap_row(&p, qi, i, area2)?.transpose());
    }
    j.iter().all(|x| x.is_finite()).then_some(j)
}

/// Midedge-average curvature map of a triangle (Grinspun et al. 2006 with the midedge normal
/// set to the average of the two face normals, linearised; libshell's
/// `MidedgeAverageFormulation`): column i is `|e_i|/(2A) (t_u^2, t_v^2, t_u t_v)`, t_i the
/// unit in-plane normal of edge i, so `K = sum_i |e_i|/(2A) theta_i t_i t_i^T`. Conservative:
/// `A_f M_f[e] + A_g M_g[e] = |e| t t^T` on every edge.
pub(crate) fn midedge_map(p: [Vector2<f64>; 3]) -> Matrix3<f64> {
    let area2 = (p[1] - p[0]).perp(&(p[2] - p[0]));
    Matrix3::from_fn(|r, i| {
        let e = p[(i + 2) % 3] - p[(i + 1) % 3];
        let t = Vector2::new(e.y, -e.x) / e.norm();
        e.norm() / area2 * [t.x * t.x, t.y * t.y, t.x * t.y][r]
    })
}

impl ShapeRest {
    /// Rest data of a triangle `p` (rest coordinates, m) whose edges i have a flap where
    /// `flaps[i]` (at rest position `q[i]`, in the same coordinates), from its curvature map `kmap` (`K = kmap theta`, columns of boundary edges
    /// = the curvature component each boundary edge cannot observe), and `bend_uv`: applies
    /// `W^(1/2)`, minimises the boundary angles out (projection, see the module docs) and
    /// scales by sqrt(A). `None` if degenerate or not finite.
    pub(crate) fn from_map(
        p: [Vector2<f64>; 3],
        q: [Option<Vector2<f64>>; 3],
        flaps: [bool; 3],
        kmap: &Matrix3<f64>,
        bend_uv: [f64; 2],
    ) -> Option<Self> {
        let area = 0.5 * (p[1] - p[0]).perp(&(p[2] - p[0]));
        let rest_edge_sq: [f64; 3] =
            std::array::from_fn(|i| (p[(i + 2) % 3] - p[(i + 1) % 3]).norm_squared());
        if !(area.is_finite() && area > 0.0 && kmap.iter().all(|x| x.is_finite())) {
            return None;
        }
        let (mu, mv) = (bend_uv[0], bend_uv[1]);
        let w = Matrix3::from_diagonal(&Vector3::new(
            mu.sqrt(),
            mv.sqrt(),
            (2.0 * (mu * mv).sqrt()).sqrt(),
        ));
        let mut r = w * kmap;
        // Minimise the free boundary angles out: project the interior columns onto the
        // orthogonal complement of the boundary columns (Gram-Schmidt, rank-revealing).
        let mut basis: [Vector3<f64>; 2] = [Vector3::zeros(); 2];
        let mut nb = 0;
        let rscale = r.amax();
        for i in 0..3 {
            if flaps[i] {
                continue;
            }
            let mut c: Vector3<f64> = r.column(i).into();
            for b in &basis[..nb] {
                c -= b * b.dot(&c);
            }
            let n = c.norm();
            if n > 1e-12 * rscale && nb < 2 {
                basis[nb] = c / n;
                nb += 1;
            }
        }
        for i in 0..3 {
            if !flaps[i] {
                r.set_column(i, &Vector3::zeros());
                continue;
            }
            let mut c: Vector3<f64> = r.column(i).into();
            for b in &basis[..nb] {
                c -= b * b.dot(&c);
            }
            r.set_column(i, &c);
        }
        let s = area.sqrt();
        let area2 = 2.0 * area;
        let flap_bary = std::array::from_fn(|i| match q[i] {
            Some(qi) if flaps[i] => std::array::from_fn(|k| {
                let (a, b) = (p[(k + 1) % 3], p[(k + 2) % 3]);
                (b - a).perp(&(qi - a)) / area2
            }),
            _ => std::array::from_fn(|k| if k == i { 1.0 } else { 0.0 }),
        });
        let flap_bary: [[f64; 3]; 3] = flap_bary;
        if !flap_bary.iter().flatten().all(|c| c.is_finite()) {
            return None;
        }
        Some(Self {
            area,
            weights: std::array::from_fn(|l| std::array::from_fn(|i| s * r[(l, i)])),
            flaps,
            rest_angles: [0.0; 3],
            rest_edge_sq,
            flap_bary,
        })
    }

    /// The hinge rest data of edge i (stiffness unused).
    #[inline]
    fn hinge(&self, i: usize) -> HingeRest {
        HingeRest {
            stiffness: 0.0,
            rest_angle: self.rest_angles[i],
            rest_edge_sq: self.rest_edge_sq[i],
        }
    }

    /// `S = P^T P` (3x3, angle space): the element energy is `D/2 dtheta^T S dtheta`.
    #[inline]
    pub(crate) fn gram(&self) -> [[f64; 3]; 3] {
        let p = &self.weights;
        std::array::from_fn(|i| std::array::from_fn(|j| (0..3).map(|l| p[l][i] * p[l][j]).sum()))
    }
}

/// Positions of the hinge of edge i gathered from the 6-vertex stencil.
#[inline]
fn hinge_x(x: &[Vec3; 6], i: usize) -> [Vec3; 4] {
    std::array::from_fn(|a| x[hinge_slot(i, a)])
}

/// Shape-operator kernel state at one configuration.
pub(crate) struct Shape<'a> {
    rest: &'a ShapeRest,
    bends: [Option<Bend>; 3],
    /// Wrapped `theta_i - theta0_i` (0 for boundary edges).
    dtheta: [f64; 3],
    /// Gradient of theta_i over its hinge's 4 vertices (zero for boundary edges).
    g: [[Vec3; 4]; 3],
}

impl<'a> Shape<'a> {
    #[inline]
    pub(crate) fn new(rest: &'a ShapeRest, x: &[Vec3; 6]) -> Self {
        let mut bends = [None, None, None];
        let mut dtheta = [0.0; 3];
        let mut g = [[Vec3::zeros(); 4]; 3];
        for i in 0..3 {
            if rest.flaps[i] {
                let b = Bend::new(&rest.hinge(i), hinge_x(x, i));
                dtheta[i] = b.value()[0];
                g[i] = b.gradient()[0];
                bends[i] = Some(b);
            }
        }
        Self {
            rest,
            bends,
            dtheta,
            g,
        }
    }

    /// Adds the midedge split offsets (see the `split` module) to the angles of the interior
    /// edges: the condition becomes `P (theta - theta0 + offsets)`; gradients are unchanged
    /// (the split is held fixed).
    #[inline]
    pub(crate) fn with_offsets(mut self, offsets: [f64; 3]) -> Self {
        for i in 0..3 {
            if self.rest.flaps[i] {
                self.dtheta[i] += offsets[i];
            }
        }
        self
    }

    /// Angle-space vector `sigma = P^T mu`.
    #[inline]
    fn pull_back(&self, mu: &[f64; 3]) -> [f64; 3] {
        let p = &self.rest.weights;
        std::array::from_fn(|i| (0..3).map(|l| p[l][i] * mu[l]).sum())
    }

    /// Gradients of the three angles scattered onto the 6-vertex stencil.
    #[inline]
    pub(crate) fn angle_gradients(&self) -> [[Vec3; 6]; 3] {
        let mut out = [[Vec3::zeros(); 6]; 3];
        for i in 0..3 {
            for a in 0..4 {
                out[i][hinge_slot(i, a)] += self.g[i][a];
            }
        }
        out
    }
}

impl Kernel<3, 6> for Shape<'_> {
    #[inline]
    fn value(&self) -> [f64; 3] {
        let p = &self.rest.weights;
        std::array::from_fn(|l| (0..3).map(|i| p[l][i] * self.dtheta[i]).sum())
    }
    #[inline]
    fn gradient(&self) -> [[Vec3; 6]; 3] {
        let p = &self.rest.weights;
        let ga = self.angle_gradients();
        std::array::from_fn(|l| {
            std::array::from_fn(|a| ga[0][a] * p[l][0] + ga[1][a] * p[l][1] + ga[2][a] * p[l][2])
        })
    }
    fn add_curvature(&self, mu: &[f64; 3], out: &mut Blocks<6>) {
        // sum_l mu_l d2C_l = sum_i sigma_i d2theta_i (each over its hinge's 4 vertices).
        let sigma = self.pull_back(mu);
        for i in 0..3 {
            let Some(b) = &self.bends[i] else { continue };
            if sigma[i] == 0.0 {
                continue;
            }
            let mut h = [[Matrix3::zeros(); 4]; 4];
            b.add_hessian(sigma[i], &mut h);
            for a in 0..4 {
                for c in 0..4 {
                    out[hinge_slot(i, a)][hinge_slot(i, c)] += h[a][c];
                }
            }
        }
    }
    fn add_clamped(&self, k: &[f64; 3], _mu: &[f64; 3], out: &mut Blocks<6>) {
        // Gauss-Newton `sum_l k_l dC_l dC_l^T` (PSD; equals Exact at rest with zero velocity).
        add_outer(k, &self.gradient(), out);
    }
}

/// Element-local vertex pairs (a <= b) of a shape element with all 21 pairs (`Exact`,
/// `Projected`), in entry order.
pub(crate) const SHAPE_PAIRS_WIDE: [(usize, usize); 21] = [
    (0, 0),
    (0, 1),
    (0, 2),
    (0, 3),
    (0, 4),
    (0, 5),
    (1, 1),
    (1, 2),
    (1, 3),
    (1, 4),
    (1, 5),
    (2, 2),
    (2, 3),
    (2, 4),
    (2, 5),
    (3, 3),
    (3, 4),
    (3, 5),
    (4, 4),
    (4, 5),
    (5, 5),
];

/// The 12 pairs of [`SHAPE_PAIRS_WIDE`] that involve a flap, without the flap-flap pairs
/// (3,4), (3,5), (4,5) (`Clamped`): every one of them is a mesh edge or a hinge's
/// opposite-vertex pair. The triangle-triangle pairs of a `Clamped` shape element are added to
/// the entries of its triangle's stretch and shear element (same vertex pairs), which saves
/// a third of the element's blocks.
pub(crate) const SHAPE_PAIRS_FLAP: [(usize, usize); 12] = [
    (0, 3),
    (0, 4),
    (0, 5),
    (1, 3),
    (1, 4),
    (1, 5),
    (2, 3),
    (2, 4),
    (2, 5),
    (3, 3),
    (4, 4),
    (5, 5),
];

/// Removes the flap-flap blocks (3,4), (3,5), (4,5) of a symmetric element matrix whose
/// flap-flap blocks are rank one (the Gauss-Newton matrix: block (3+i, 3+j) =
/// `s_ij u_i u_j^T`, u_i the gradient of theta_i at flap i) and keeps it positive semidefinite,
/// no smaller, and blind to rigid motions, so the matrix stays inside the hinge model's
/// sparsity pattern.
///
/// The fold happens in relative coordinates `(x_0, x_1, x_2, r_0, r_1, r_2)` with
/// `r_j = x_{3+j} - sum_k bary[j][k] x_k`: flap j relative to the point of the triangle's
/// plane that sits where the flap sits at rest (`bary` = [`ShapeRest::flap_bary`]). A rigid
/// translation has `r = 0`, and since every angle is translation invariant the matrix in these
/// coordinates annihilates `(c, c, c, 0, 0, 0)`; the r-r blocks are the same rank-one
/// `s_ij u_i u_j^T`. Folding them onto the r diagonal (see [`fold_relative_flap_pairs`]) and
/// mapping back (a congruence, which keeps `>=`) gives a matrix that still annihilates
/// translations. An infinitesimal rotation of a flat element also has `r = 0`, and so does
/// any smooth motion up to its curvature times the cell size squared, so the folded blocks
/// cost a smooth bending mode a bounded multiple of its true energy at any resolution. (With
/// `r_j = x_{3+j} - x_j`, the flap relative to the opposite vertex, the fold charged the
/// slope instead of the curvature: on a clamped disc the softest bending modes of the
/// implicit matrix came out 37x too stiff at 10 rings and 157x at 20, and a Cusick drape crept
/// to its rest over seconds instead of falling.) Folding in plain coordinates would put
/// `u_j u_j^T` on a flap's own diagonal block, which resists uniform motion (a sheet in free
/// fall would feel it as drag).
pub(crate) fn drop_flap_pairs(m: &mut Blocks<6>, bary: &[[f64; 3]; 3]) {
    to_relative(m, bary);
    fold_relative_flap_pairs(m);
    from_relative(m, bary);
}

/// `m <- T^-T m T^-1` for `x = T^-1 y`, `x_{3+j} = y_{3+j} + sum_k bary[j][k] y_k`: the element
/// matrix in the relative coordinates of [`drop_flap_pairs`].
fn to_relative(m: &mut Blocks<6>, bary: &[[f64; 3]; 3]) {
    // Columns, then rows: (m T^-1)[c][d] = m[c][d] + sum_j bary[j][d] m[c][3+j] for d < 3.
    let x = *m;
    let mut y = x;
    for c in 0..6 {
        for d in 0..3 {
            for j in 0..3 {
                y[c][d] += x[c][3 + j] * bary[j][d];
            }
        }
    }
    let z = y;
    for c in 0..3 {
        for d in 0..6 {
            for j in 0..3 {
                y[c][d] += z[3 + j][d] * bary[j][c];
            }
        }
    }
    *m = y;
}

/// `m <- T^T m T` for `y = T x`, `y_{3+j} = x_{3+j} - sum_k bary[j][k] x_k`: back from relative
/// coordinates.
pub(crate) fn from_relative(m: &mut Blocks<6>, bary: &[[f64; 3]; 3]) {
    let x = *m;
    let mut y = x;
    for c in 0..6 {
        for d in 0..3 {
            for j in 0..3 {
                y[c][d] -= x[c][3 + j] * bary[j][d];
            }
        }
    }
    let z = y;
    for c in 0..3 {
        for d in 0..6 {
            for j in 0..3 {
                y[c][d] -= z[3 + j][d] * bary[j][c];
            }
        }
    }
    *m = y;
}

/// Drops the rank-one r-r blocks (3,4), (3,5), (4,5) of an element matrix in relative
/// coordinates, keeping it positive semidefinite and no smaller: for a dropped block
/// `B = sigma a b^T` (a, b unit), the quadratic form loses
/// `2 sigma (a.x)(b.y) >= -|sigma| (t (a.x)^2 + (b.y)^2 / t)`, so adding
/// `|sigma| t a a^T` and `|sigma|/t b b^T` to the two diagonal blocks gives a matrix `>=` the
/// original. `t = sqrt(|M_aa| / |M_bb|)` (Frobenius norms of the diagonal blocks) makes the
/// relative increase of both diagonal blocks equal, `|s_ij| / sqrt(s_ii s_jj)` (at most 1).
fn fold_relative_flap_pairs(m: &mut Blocks<6>) {
    // Diagonal norms before any folding, so the result does not depend on the pair order.
    let norms = [m[3][3].norm(), m[4][4].norm(), m[5][5].norm()];
    for (a, b) in [(3, 4), (3, 5), (4, 5)] {
        let blk = m[a][b];
        let sigma = blk.norm();
        if sigma == 0.0 {
            continue;
        }
        // Rank one: blk = sigma * ua * ub^T. Column space from the largest column, row space
        // from the largest row.
        let (mut ci, mut cn) = (0, 0.0);
        let (mut ri, mut rn) = (0, 0.0);
        for k in 0..3 {
            let c = blk.column(k).norm_squared();
            if c > cn {
                (ci, cn) = (k, c);
            }
            let r = blk.row(k).norm_squared();
            if r > rn {
                (ri, rn) = (k, r);
            }
        }
        let ua: Vec3 = blk.column(ci) / cn.sqrt();
        let ub: Vec3 = blk.row(ri).transpose() / rn.sqrt();
        let (na, nb) = (norms[a - 3], norms[b - 3]);
        let t = if na > 0.0 && nb > 0.0 {
            (na / nb).sqrt()
        } else {
            1.0
        };
        m[a][a] += ua * ua.transpose() * (sigma * t);
        m[b][b] += ub * ub.transpose() * (sigma / t);
        m[a][b] = Matrix3::zeros();
        m[b][a] = Matrix3::zeros();
    }
}

/// Shape-operator condition `C = P (theta - theta0)` (3 components, dimensionless, at a zero
/// midedge split: the element alone, as the kernel tests check it) on the
/// stencil `x = [p0, p1, p2, q0, q1, q2]` (m), with exact gradient and Hessian; theta_i is the
/// dihedral angle of edge i = (p_{i+1}, p_{i+2}) as in [`crate::dihedral_angle`] on the hinge
/// `[p_{i+1}, p_{i+2}, p_i, q_i]`. With rigidity D the bend energy is `D/2 |C|^2`
/// (`A D/2 |II|^2`, see [`ShapeRest`]). Slots of missing flaps are ignored (zero gradient).
pub fn shape_condition(rest: &ShapeRest, x: &[Vec3; 6]) -> Condition<3, 6> {
    condition_of(&Shape::new(rest, x))
}

/// Bend energy (J) of one shape element with rigidity `d` (N m) at `x`, its angles shifted by
/// the midedge split `offsets`.
#[inline]
pub(crate) fn shape_energy(rest: &ShapeRest, x: &[Vec3; 6], d: f64, offsets: [f64; 3]) -> f64 {
    let mut dth = [0.0; 3];
    for i in 0..3 {
        if rest.flaps[i] {
            let th = crate::bend::dihedral_angle(&hinge_x(x, i));
            dth[i] = crate::bend::wrap_angle(th - rest.rest_angles[i]) + offsets[i];
        }
    }
    let p = &rest.weights;
    (0..3)
        .map(|l| {
            let c: f64 = (0..3).map(|i| p[l][i] * dth[i]).sum();
            0.5 * d * c * c
        })
        .sum()
}
