//! The shape-operator passes under [`BendModel::ShapeOperator`]: the hinge pre-pass (angles
//! and the midedge split), the one-pass triangle and bend evaluation under
//! [`Definiteness::Clamped`] with its Gauss-Newton kernel, and the generic pass under `Exact`
//! and `Projected`.

use nalgebra::Matrix3;
use rayon::prelude::*;

use super::ClothModel;
use super::buffers::Evaluation;
use crate::BendModel;
use crate::bend::{Bend, dihedral_angle, wrap_angle};
use crate::condition::{
    Blocks, Definiteness, ElementResponse, ElementSlots, Kernel, Vec3, respond,
};
use crate::scatter::Accumulator;
use crate::shape::{SHAPE_PAIRS_FLAP, SHAPE_PAIRS_WIDE, Shape, ShapeRest, drop_flap_pairs};
use crate::split::SplitScratch;
use crate::triangle::TRI_PAIRS;

/// Minimum number of elements per rayon task.
const MIN_LEN: usize = 128;

impl ClothModel {
    pub(super) fn shape_gather(&self, t: usize, x: &[Vec3]) -> [Vec3; 6] {
        self.shape_stencils[t].map(|i| x[i])
    }

    /// The midedge split offsets of triangle `t`'s angles for the split `psi` (zero without a
    /// split system).
    pub(super) fn split_offsets(&self, t: usize, psi: Option<&[f64]>) -> [f64; 3] {
        match (self.split.as_ref(), psi) {
            (Some(sp), Some(p)) => sp.offsets(t, p),
            _ => [0.0; 3],
        }
    }

    /// The midedge split per hinge at positions `x` (empty without a split system).
    pub(super) fn split_at(&self, x: &[Vec3]) -> Vec<f64> {
        let mut psi = Vec::new();
        if let Some(sp) = &self.split {
            let dth: Vec<f64> = (0..self.hinges.len())
                .map(|h| {
                    let d = dihedral_angle(&self.hinge_gather(h, x));
                    wrap_angle(d - self.hinge_rest[h].rest_angle)
                })
                .collect();
            sp.solve(&dth, &mut psi, &mut SplitScratch::default());
        }
        psi
    }

    /// Bend rigidity (N m) of shape element `t`: its material's, 0 if the triangle is held
    /// flat ([`ClothModel::set_clamped_vertices`]).
    pub(super) fn shape_rigidity(&self, t: usize) -> f64 {
        if self.split.as_ref().is_some_and(|s| s.is_rigid(t)) {
            0.0
        } else {
            self.materials[self.tri_material[t]].bend
        }
    }

    fn shape_response(
        &self,
        t: usize,
        x: &[Vec3],
        v: &[Vec3],
        def: Definiteness,
        offsets: [f64; 3],
        out: &mut ElementResponse<6>,
    ) {
        let m = &self.materials[self.tri_material[t]];
        let d = self.shape_rigidity(t);
        if d == 0.0 || self.bend_model() != BendModel::ShapeOperator {
            return;
        }
        let kd = m.bend_damping * d;
        let r = &self.shape_rest[t];
        respond(
            &Shape::new(r, &self.shape_gather(t, x)).with_offsets(offsets),
            &[d; 3],
            &[kd; 3],
            &self.shape_gather(t, v),
            def,
            out,
        );
        if def == Definiteness::Clamped {
            narrow(&mut out.dfdx, &r.flap_bary);
            narrow(&mut out.dfdv, &r.flap_bary);
        }
    }

    /// Response of shape-operator bend element `t` (triangle t and its flaps, stencil
    /// [`ClothModel::shape_stencils`]`[t]`) alone, element-local, through the generic
    /// condition routine (reference path; tested equal to [`ClothModel::evaluate`]). Under
    /// `Clamped` the flap-flap blocks are folded into the flap diagonal blocks as in
    /// `evaluate` (see [`Definiteness::Clamped`]). All zero under [`BendModel::Hinge`]. The
    /// midedge split (the `split` module) is solved from all of `x` first: a whole-mesh
    /// solve per call.
    ///
    /// # Panics
    /// If `t >= shape_stencils().len()` or `x`, `v` are shorter than the vertex count.
    pub fn shape_element(&self, t: usize, x: &[Vec3], v: &[Vec3]) -> ElementResponse<6> {
        let mut out = ElementResponse::zero();
        let psi = self.split_at(x);
        let offsets = self.split_offsets(t, Some(&psi));
        self.shape_response(t, x, v, self.definiteness, offsets, &mut out);
        out
    }

    /// Shape-operator pre-pass: the wrapped angle deviation and its gradient per hinge (into
    /// `out.hinge_angles`) and the midedge split for those angles (into `out.split_psi`).
    pub(super) fn shape_prepass(&self, x: &[Vec3], out: &mut Evaluation) {
        let angles = &mut out.hinge_angles;
        angles.resize(self.hinges.len(), (0.0, [Vec3::zeros(); 4]));
        angles
            .par_iter_mut()
            .enumerate()
            .with_min_len(MIN_LEN)
            .for_each(|(h, o)| {
                let b = Bend::new(&self.hinge_rest[h], self.hinge_gather(h, x));
                *o = (b.value()[0], b.gradient()[0]);
            });
        if let Some(sp) = &self.split {
            out.split_dtheta.clear();
            out.split_dtheta.extend(angles.iter().map(|a| a.0));
            sp.solve(
                &out.split_dtheta,
                &mut out.split_psi,
                &mut out.split_scratch,
            );
        }
    }

    /// The shape-operator element of triangle `t` under `Clamped` (Gauss-Newton at a fixed
    /// split, [`shape_fast_gauss_newton`]) from the pre-pass's `angles` and split `psi`: its
    /// triangle-triangle blocks are added to `tri` (the triangle's own 6 entries, `[dfdx,
    /// dfdv]`), the rest written to `out` (12 entries, [`SHAPE_PAIRS_FLAP`], 6 force slots).
    /// Returns its energy.
    fn shape_clamped_at(
        &self,
        t: usize,
        v: &[Vec3],
        angles: &[(f64, [Vec3; 4])],
        psi: Option<&[f64]>,
        tri: [&mut [Matrix3<f64>]; 2],
        out: ElementSlots<'_>,
    ) -> f64 {
        let m = &self.materials[self.tri_material[t]];
        let (d, beta) = (self.shape_rigidity(t), m.bend_damping);
        // Angles and gradients from the hinge pre-pass, scattered onto the stencil (a hinge
        // seen from its second triangle lists the edge and the wings the other way round;
        // theta is symmetric).
        let st = &self.shape_stencils[t];
        let mut dth = [0.0; 3];
        let mut ga = [[Vec3::zeros(); 6]; 3];
        for i in 0..3 {
            let h = self.shape_hinges[t][i];
            if h == usize::MAX {
                continue;
            }
            let (th, g) = &angles[h];
            dth[i] = *th;
            let order = if self.hinges[h][2] == st[i] {
                [0, 1, 2, 3]
            } else {
                [1, 0, 3, 2]
            };
            for a in 0..4 {
                ga[i][crate::shape::hinge_slot(i, a)] += g[order[a]];
            }
        }
        // The midedge split: this triangle's share of each angle.
        let o = self.split_offsets(t, psi);
        for i in 0..3 {
            dth[i] += o[i];
        }
        let state = ShapeState {
            dth,
            grad: &ga,
            v: &self.shape_gather(t, v),
            d,
            beta,
        };
        shape_fast_gauss_newton(tri, out, &self.shape_rest[t], st, &state)
    }

    /// Every triangle's stretch and shear and its shape-operator element under `Clamped`, in
    /// one pass into `acc` (the bend element's triangle-triangle blocks add onto the
    /// triangle's own before they reach the pairs), from the pre-pass's `angles` and split
    /// `psi`; the energy per chunk into `energy`.
    pub(super) fn shape_clamped_pass(
        &self,
        x: &[Vec3],
        v: &[Vec3],
        angles: &[(f64, [Vec3; 4])],
        psi: Option<&[f64]>,
        acc: &Accumulator<'_>,
        energy: &mut [f64],
    ) {
        let s = &self.structure;
        acc.run(&s.bend_colors, &self.shape_stencils, energy, |sink| {
            let mut energy = 0.0;
            let (mut tx, mut tv) = ([Matrix3::zeros(); 6], [Matrix3::zeros(); 6]);
            let (mut sx, mut sv) = ([Matrix3::zeros(); 12], [Matrix3::zeros(); 12]);
            let (mut ft, mut f) = ([Vec3::zeros(); 3], [Vec3::zeros(); 6]);
            let range = sink.elements();
            for t in range.clone() {
                if t + 1 < range.end {
                    sink.prefetch(s.tri_pairs(t + 1));
                    sink.prefetch(s.bend_pairs(t + 1));
                }
                energy += self.triangle_fast_at(t, x, v, &mut tx, &mut tv, &mut ft);
                let slots = ElementSlots {
                    dfdx: &mut sx,
                    dfdv: &mut sv,
                    forces: &mut f,
                };
                energy += self.shape_clamped_at(t, v, angles, psi, [&mut tx, &mut tv], slots);
                // Stencil slots 0..3 are the triangle's vertices, in its order.
                for (fa, fb) in f.iter_mut().zip(&ft) {
                    *fa += fb;
                }
                sink.add_blocks(t, s.tri_pairs(t), &tx, &tv);
                sink.add_blocks(t, s.bend_pairs(t), &sx, &sv);
                sink.add_forces(t, &f);
            }
            energy
        })
    }

    /// The shape-operator elements under `Exact` or `Projected` (21 entries each, the generic
    /// routine at the split `psi`) into `acc`, the energy per chunk into `energy`.
    pub(super) fn shape_pass(
        &self,
        x: &[Vec3],
        v: &[Vec3],
        psi: Option<&[f64]>,
        acc: &Accumulator<'_>,
        energy: &mut [f64],
    ) {
        let s = &self.structure;
        let def = self.definiteness;
        acc.run(&s.bend_colors, &self.shape_stencils, energy, |sink| {
            let mut energy = 0.0;
            let (mut bx, mut bv) = ([Matrix3::zeros(); 21], [Matrix3::zeros(); 21]);
            for t in sink.elements() {
                let mut r = ElementResponse::zero();
                let offsets = self.split_offsets(t, psi);
                self.shape_response(t, x, v, def, offsets, &mut r);
                let st = &self.shape_stencils[t];
                for (k, &(a, b)) in SHAPE_PAIRS_WIDE.iter().enumerate() {
                    bx[k] = pair_block(&r.dfdx, st, a, b);
                    bv[k] = pair_block(&r.dfdv, st, a, b);
                }
                sink.add_blocks(t, s.bend_pairs(t), &bx, &bv);
                sink.add_forces(t, &r.forces);
                energy += r.energy;
            }
            energy
        })
    }
}

/// `narrow` for a df/dx or df/dv element matrix (negative semidefinite): applies
/// [`drop_flap_pairs`] to its negation.
fn narrow(m: &mut Blocks<6>, bary: &[[f64; 3]; 3]) {
    for row in m.iter_mut() {
        for b in row.iter_mut() {
            *b = -*b;
        }
    }
    drop_flap_pairs(m, bary);
    for row in m.iter_mut() {
        for b in row.iter_mut() {
            *b = -*b;
        }
    }
}

/// The entry block of local pair (a, b), a <= b: `m[a][b]`, or `m[a][b] + m[b][a]` when both
/// slots are the same vertex (two flaps of a triangle can coincide, and a missing flap repeats
/// a triangle vertex), since an entry (i, i) is added once, without its transpose.
#[inline]
fn pair_block(m: &Blocks<6>, stencil: &[usize; 6], a: usize, b: usize) -> Matrix3<f64> {
    if a != b && stencil[a] == stencil[b] {
        m[a][b] + m[b][a]
    } else {
        m[a][b]
    }
}

/// One shape-operator element at a fixed split, as [`shape_fast_gauss_newton`] sees it.
struct ShapeState<'a> {
    /// Angle deviation of each edge plus its split offset (rad).
    dth: [f64; 3],
    /// `grad[i][a]`: the gradient of angle i at stencil slot a (1/m).
    grad: &'a [[Vec3; 6]; 3],
    /// Stencil velocities (m/s).
    v: &'a [Vec3; 6],
    /// Bend rigidity `d` (N m); 0 for a triangle held flat.
    d: f64,
    /// Bend damping `beta` (s).
    beta: f64,
}

/// Fast path of one shape-operator element under `Clamped`: energy `d/2 |C|^2`, forces
/// `-sum_i sigma_i dtheta_i` with `sigma = P^T (d C + beta d Cdot)`, Gauss-Newton
/// `df/dx = -d G_a S G_b^T` (`S = P^T P`, `G_a` the 3x3 matrix of the angle gradients at
/// stencil slot a), `df/dv = beta df/dx`, flap-flap blocks folded by [`drop_flap_pairs`];
/// the same result as the generic routine (tested). The triangle-triangle blocks (pairs of
/// [`TRI_PAIRS`]) are added to `tri` (`[dfdx, dfdv]`, the triangle's own entries), the
/// [`SHAPE_PAIRS_FLAP`] blocks written to `out`. Returns the energy.
fn shape_fast_gauss_newton(
    tri: [&mut [Matrix3<f64>]; 2],
    out: ElementSlots<'_>,
    rest: &ShapeRest,
    stencil: &[usize; 6],
    state: &ShapeState<'_>,
) -> f64 {
    if state.d == 0.0 {
        out.forces.iter_mut().for_each(|f| *f = Vec3::zeros());
        out.dfdx.iter_mut().for_each(|b| *b = Matrix3::zeros());
        out.dfdv.iter_mut().for_each(|b| *b = Matrix3::zeros());
        return 0.0;
    }
    let energy = shape_forces(out.forces, rest, state);
    shape_blocks(tri, [out.dfdx, out.dfdv], rest, stencil, state);
    energy
}

/// The forces of [`shape_fast_gauss_newton`] into `forces` (6 slots); returns the energy.
fn shape_forces(forces: &mut [Vec3], rest: &ShapeRest, state: &ShapeState<'_>) -> f64 {
    let ShapeState {
        dth,
        grad: ga,
        v,
        d,
        beta,
    } = *state;
    let p = &rest.weights;
    let thdot: [f64; 3] = std::array::from_fn(|i| (0..6).map(|a| ga[i][a].dot(&v[a])).sum());
    let mut sigma = [0.0; 3];
    let mut energy = 0.0;
    for l in 0..3 {
        let c: f64 = (0..3).map(|i| p[l][i] * dth[i]).sum();
        let cdot: f64 = (0..3).map(|i| p[l][i] * thdot[i]).sum();
        let mu = d * c + beta * d * cdot;
        energy += 0.5 * d * c * c;
        for i in 0..3 {
            sigma[i] += p[l][i] * mu;
        }
    }
    for a in 0..6 {
        forces[a] = -(ga[0][a] * sigma[0] + ga[1][a] * sigma[1] + ga[2][a] * sigma[2]);
    }
    energy
}

/// The Gauss-Newton blocks of [`shape_fast_gauss_newton`]: the triangle-triangle blocks
/// added to `tri`, the [`SHAPE_PAIRS_FLAP`] blocks written to `out` (`[dfdx, dfdv]` each).
fn shape_blocks(
    tri: [&mut [Matrix3<f64>]; 2],
    out: [&mut [Matrix3<f64>]; 2],
    rest: &ShapeRest,
    stencil: &[usize; 6],
    state: &ShapeState<'_>,
) {
    let (ga, d, beta) = (state.grad, state.d, state.beta);
    // Gauss-Newton d G_a S G_b^T with S = P^T P, in the relative coordinates of
    // `drop_flap_pairs` (y_a = x_a for triangle slots, r_j = x_{3+j} - sum_k l_jk x_k for
    // flaps, l = `flap_bary`): angle j moves flap j alone, with gradient u_j, and the r-r
    // blocks d S_ij u_i u_j^T (i != j) are folded onto the r diagonal (for B = d S_ij u_i u_j^T
    // the added term is d |S_ij| sqrt(S_ii / S_jj) u_i u_i^T, so the flap diagonal becomes
    // F_j = d w_j u_j u_j^T); the blocks are then mapped back to x: K_x = T^T K_y T. Since
    // the fold changes only the r-r part, K_x is the plain Gauss-Newton matrix plus the change
    // mapped back: with E = diag(d w) - d S (the fold's change in the r-r part, per pair of
    // angles) and the r_j of slot a carrying -l_ja x_a (or x_a itself for flap slot 3 + j),
    //   triangle-triangle (a, b): G_a dS G_b^T + V_a E V_b^T,  V_a = [l_0a u_0, l_1a u_1, l_2a u_2];
    //   triangle-flap (a, 3 + j): (G_a dS - V_a E)_j u_j^T (a rank-one block);
    //   flap-flap (3 + j, 3 + j): F_j (the off-diagonal flap pairs are folded away).
    // (G_a: the 3x3 matrix whose column i is angle i's gradient at slot a; flap j's own
    // gradient is u_j = G_{3+j} column j, the only angle that moves it.)
    let l = &rest.flap_bary;
    let s = rest.gram();
    let sm = Matrix3::from_fn(|i, j| d * s[i][j]);
    let u: [Vec3; 3] = std::array::from_fn(|j| ga[j][3 + j]);
    let w: [f64; 3] = std::array::from_fn(|i| {
        let mut w = s[i][i];
        for j in 0..3 {
            if j != i && s[j][j] > 0.0 && s[i][j] != 0.0 {
                w += s[i][j].abs() * (s[i][i] / s[j][j]).sqrt();
            }
        }
        d * w
    });
    let e = Matrix3::from_fn(|i, j| if i == j { w[i] } else { 0.0 } - sm[(i, j)]);
    let g: [Matrix3<f64>; 3] =
        std::array::from_fn(|a| Matrix3::from_columns(&[ga[0][a], ga[1][a], ga[2][a]]));
    let vm: [Matrix3<f64>; 3] = std::array::from_fn(|a| {
        Matrix3::from_columns(&[u[0] * l[0][a], u[1] * l[1][a], u[2] * l[2][a]])
    });
    let gs: [Matrix3<f64>; 3] = std::array::from_fn(|a| g[a] * sm);
    let ve: [Matrix3<f64>; 3] = std::array::from_fn(|a| vm[a] * e);
    let [tri_x, tri_v] = tri;
    let [out_x, out_v] = out;
    for (k, &(a, b)) in TRI_PAIRS.iter().enumerate() {
        let blk = gs[a] * g[b].transpose() + ve[a] * vm[b].transpose();
        tri_x[k] -= blk;
        tri_v[k] -= blk * beta;
    }
    let flap_diag = |j: usize| u[j] * u[j].transpose() * w[j];
    let block = |a: usize, b: usize| -> Matrix3<f64> {
        match (a < 3, b < 3) {
            (true, false) => (gs[a].column(b - 3) - ve[a].column(b - 3)) * u[b - 3].transpose(),
            (false, true) => u[a - 3] * (gs[b].column(a - 3) - ve[b].column(a - 3)).transpose(),
            (false, false) if a == b => flap_diag(a - 3),
            _ => Matrix3::zeros(),
        }
    };
    for (e, &(a, b)) in SHAPE_PAIRS_FLAP.iter().enumerate() {
        // A boundary edge's flap slot repeats the triangle vertex across it.
        let blk = if a != b && stencil[a] == stencil[b] {
            block(a, b) + block(b, a)
        } else {
            block(a, b)
        };
        out_x[e] = -blk;
        out_v[e] = blk * -beta;
    }
}
