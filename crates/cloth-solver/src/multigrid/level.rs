//! One level of the hierarchy: symbolic part (aggregates, patterns, colouring) built once per
//! matrix pattern, numeric part (tentative and smoothed prolongator, Galerkin product,
//! smoother data) refilled every solve.

use nalgebra::{DMatrix, SMatrix, SVector, SymmetricEigen, Vector3};
use rayon::prelude::*;

use super::aggregate::{NONE, aggregate, members};
use super::bsr::{Bsr, Transpose, product_pattern};
use super::ops::{CoarseOp, DIAGONAL, Operator};
use crate::SolverError;
use crate::par::{ROW_CHUNK, sum_in_order};

/// A near-null-space column of an aggregate is dropped when orthogonalisation against the
/// previous columns leaves less than this fraction of the largest candidate column's norm
/// (the aggregate is too small, collinear or constrained to carry it).
const QR_DROP: f64 = 1e-8;

/// Aggregates per task in the parallel per-aggregate passes (QR).
const AGG_CHUNK: usize = 64;

/// Coarse rows per task of the Galerkin product; larger chunks recompute fewer shared rows
/// of `A P` (about 30% extra on cloth grids at 256) but hold larger local buffers.
const GALERKIN_CHUNK: usize = 256;

/// Per-task scratch of [`Transfer::galerkin`]: the fine rows of `A P` a chunk needs, their
/// offsets and values, and the position of each coarse column in the row being formed.
type GalerkinScratch<const B: usize, const D: usize> =
    (Vec<usize>, Vec<usize>, Vec<SMatrix<f64, B, D>>, Vec<u32>);

/// Grid transfer of a level that has a coarser level below it.
#[derive(Clone, Debug)]
pub(crate) struct Transfer<const B: usize, const D: usize> {
    /// Aggregate of every node ([`NONE`] for nodes with no strong neighbour).
    pub agg: Vec<usize>,
    /// Aggregate members: aggregate `a` is `agg_nodes[agg_ptr[a]..agg_ptr[a + 1]]`.
    pub agg_ptr: Vec<usize>,
    pub agg_nodes: Vec<usize>,
    /// Position of each node in `agg_nodes` ([`NONE`] if not aggregated).
    pub pos: Vec<usize>,
    /// Tentative prolongator blocks (orthonormal per aggregate), in `agg_nodes` order.
    pub tent: Vec<SMatrix<f64, B, D>>,
    /// Per slot of the operator's pattern: whether the block is strong. Weak blocks are
    /// lumped onto the diagonal when smoothing the prolongator.
    pub strong: Vec<bool>,
    /// Smoothed prolongator `P = S (I - omega D_f^-1 A_s) T` (`B x D` blocks).
    pub p: Bsr<B, D>,
    /// Column lists of `p` (for `P^T`).
    pub pt: Transpose,
    /// Pattern of `A_f P` (values are computed chunk by chunk in [`Transfer::galerkin`]).
    pub ap_ptr: Vec<usize>,
    pub ap_cols: Vec<usize>,
}

/// Smoother data of a level.
#[derive(Clone, Debug, Default)]
pub(crate) struct SmoothData<const B: usize> {
    /// Inverses of the filtered diagonal blocks.
    pub dinv: Vec<SMatrix<f64, B, B>>,
    /// Padded estimate of the largest eigenvalue of `D_f^-1 A_f` (Lanczos estimate times
    /// `CHEBYSHEV_PAD`): the top of the Chebyshev interval.
    pub lambda: f64,
    /// Greedy colouring of the pattern: colour `c` is `colour_nodes[colour_ptr[c]..]`.
    pub colour_ptr: Vec<usize>,
    pub colour_nodes: Vec<usize>,
}

/// Work vectors of a level for the V-cycle (level 0 has no `b`, and uses `x` only as
/// Lanczos scratch: its cycle works on the PCG's vectors).
#[derive(Clone, Debug, Default)]
pub(crate) struct Vecs<const B: usize> {
    pub x: Vec<SVector<f64, B>>,
    pub b: Vec<SVector<f64, B>>,
    pub r: Vec<SVector<f64, B>>,
    pub d: Vec<SVector<f64, B>>,
}

impl<const B: usize> Vecs<B> {
    pub fn new(n: usize, with_b: bool) -> Self {
        let z = || vec![SVector::zeros(); n];
        Vecs {
            x: z(),
            b: if with_b { z() } else { Vec::new() },
            r: z(),
            d: z(),
        }
    }
    pub fn memory_bytes(&self) -> usize {
        (self.x.len() + self.b.len() + self.r.len() + self.d.len()) * size_of::<SVector<f64, B>>()
    }
}

/// One level: its smoother, work vectors and (unless it is the coarsest) its transfer.
#[derive(Clone, Debug)]
pub(crate) struct Level<const B: usize, const D: usize> {
    pub transfer: Option<Transfer<B, D>>,
    pub smooth: SmoothData<B>,
    pub vecs: Vecs<B>,
    /// Near-null-space candidates of this level's nodes (levels >= 1: the `R` factors of the
    /// finer level's aggregates). Empty on level 0, whose candidates come from positions.
    pub cand: Vec<SMatrix<f64, B, D>>,
}

/// Symmetric strength of connection per stored block:
/// `|A_ij|_F / sqrt(|A_ii|_F |A_jj|_F)` (the block form of Vanek, Mandel & Brezina 1996,
/// strong couplings). Diagonal slots get 0.
pub(crate) fn strength<const B: usize, O: Operator<B>>(op: &O) -> Vec<f64> {
    let n = op.n();
    // Unfiltered blocks: the aggregates must not depend on the constraints of the moment.
    let dn: Vec<f64> = (0..n).map(|i| op.diagonal(i).norm()).collect();
    let (row_ptr, cols) = op.pattern();
    let mut s = vec![0.0; row_ptr[n]];
    for i in 0..n {
        for k in row_ptr[i]..row_ptr[i + 1] {
            let j = cols[k];
            let den = (dn[i] * dn[j]).sqrt();
            if j != i && den > 0.0 {
                s[k] = op.pattern_block(k).norm() / den;
            }
        }
    }
    s
}

/// Greedy colouring in node order: every node takes the smallest colour none of its
/// lower-numbered neighbours has. Returns `(ptr, nodes)` with each colour's nodes ascending.
fn colour(row_ptr: &[usize], cols: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let n = row_ptr.len() - 1;
    let mut colour = vec![usize::MAX; n];
    let mut seen: Vec<usize> = Vec::new();
    let mut ncol = 0;
    for i in 0..n {
        for &j in &cols[row_ptr[i]..row_ptr[i + 1]] {
            if j < i {
                let c = colour[j];
                if c >= seen.len() {
                    seen.resize(c + 1, usize::MAX);
                }
                seen[c] = i;
            }
        }
        let c = (0..)
            .find(|&c| c >= seen.len() || seen[c] != i)
            .unwrap_or(0);
        colour[i] = c;
        ncol = ncol.max(c + 1);
    }
    let mut ptr = vec![0usize; ncol + 1];
    for &c in &colour {
        ptr[c + 1] += 1;
    }
    for c in 0..ncol {
        ptr[c + 1] += ptr[c];
    }
    let mut fill = ptr.clone();
    let mut nodes = vec![0; n];
    for (i, &c) in colour.iter().enumerate() {
        nodes[fill[c]] = i;
        fill[c] += 1;
    }
    (ptr, nodes)
}

impl<const B: usize, const D: usize> Level<B, D> {
    /// Symbolic setup of a level for operator `op`: colouring, and, when `coarsen`, the
    /// aggregates of the strength graph (`strength >= theta`), the patterns of `P`, `A P` and
    /// of the coarse operator `P^T A P` (returned, values zero). The transfer is not built
    /// (and `None` returned) when aggregation finds no aggregate or does not reduce the
    /// number of unknowns.
    pub fn symbolic<O: Operator<B>>(
        op: &O,
        coarsen: bool,
        theta: f64,
        is_fine: bool,
    ) -> (Self, Option<CoarseOp<D>>) {
        let n = op.n();
        let (row_ptr, cols) = op.pattern();
        let (colour_ptr, colour_nodes) = colour(row_ptr, cols);
        let smooth = SmoothData {
            dinv: vec![SMatrix::zeros(); n],
            lambda: 0.0,
            colour_ptr,
            colour_nodes,
        };
        let mut level = Level {
            transfer: None,
            smooth,
            vecs: Vecs::new(n, !is_fine),
            cand: Vec::new(),
        };
        if !coarsen {
            return (level, None);
        }
        let s = strength(op);
        let (agg, count) = aggregate(row_ptr, cols, &s, theta);
        if count == 0 || D * count >= B * n {
            return (level, None);
        }
        let (agg_ptr, agg_nodes) = members(&agg, count);
        let mut pos = vec![NONE; n];
        for (k, &i) in agg_nodes.iter().enumerate() {
            pos[i] = k;
        }
        let strong: Vec<bool> = (0..n)
            .flat_map(|i| (row_ptr[i]..row_ptr[i + 1]).map(move |k| (i, k)))
            .map(|(i, k)| cols[k] == i || s[k] >= theta)
            .collect();
        // Strong pattern (diagonal excluded).
        let mut sp_ptr = Vec::with_capacity(n + 1);
        let mut sp_cols = Vec::new();
        sp_ptr.push(0);
        for i in 0..n {
            for k in row_ptr[i]..row_ptr[i + 1] {
                if strong[k] && cols[k] != i {
                    sp_cols.push(cols[k]);
                }
            }
            sp_ptr.push(sp_cols.len());
        }
        // P's pattern: row i holds the aggregates of i and of its strong neighbours.
        let mut agg_ptr_nodes = Vec::with_capacity(n + 1);
        agg_ptr_nodes.push(0);
        for &a in &agg {
            agg_ptr_nodes.push(agg_ptr_nodes[agg_ptr_nodes.len() - 1] + usize::from(a != NONE));
        }
        let agg_cols: Vec<usize> = agg.iter().copied().filter(|&a| a != NONE).collect();
        let (p_ptr, p_cols) =
            product_pattern(&sp_ptr, &sp_cols, true, &agg_ptr_nodes, &agg_cols, count);
        let (ap_ptr, ap_cols) = product_pattern(row_ptr, cols, true, &p_ptr, &p_cols, count);
        let pt = Transpose::of(count, &p_ptr, &p_cols);
        // Coarse pattern: row J holds every column of (A P) rows i with P_iJ != 0.
        let (c_ptr, c_cols) = product_pattern(&pt.ptr, &pt.rows, false, &ap_ptr, &ap_cols, count);
        let coarse = CoarseOp::from_pattern(c_ptr, c_cols);
        level.transfer = Some(Transfer {
            tent: vec![SMatrix::zeros(); agg_nodes.len()],
            agg,
            agg_ptr,
            agg_nodes,
            pos,
            strong,
            p: Bsr::from_pattern(p_ptr, p_cols),
            pt,
            ap_ptr,
            ap_cols,
        });
        (level, Some(coarse))
    }

    /// Inverts the filtered diagonal blocks (for smoothing and for the prolongator).
    ///
    /// # Errors
    /// [`SolverError::DiagonalNotPositive`] (level 0) or
    /// [`SolverError::CoarseNotPositiveDefinite`] naming the first failing node.
    pub fn invert_diagonal<O: Operator<B>>(
        &mut self,
        op: &O,
        level: usize,
    ) -> Result<(), SolverError> {
        let errs: Vec<Option<(usize, f64)>> = self
            .smooth
            .dinv
            .par_chunks_mut(ROW_CHUNK)
            .enumerate()
            .map(|(c, out)| {
                for (o, m) in out.iter_mut().enumerate() {
                    let i = c * ROW_CHUNK + o;
                    let d = op.filtered_diagonal(i);
                    let d = (d + d.transpose()) * 0.5;
                    match d.cholesky() {
                        Some(ch) if d.iter().all(|v| v.is_finite()) => *m = ch.inverse(),
                        _ => return Some((i, d.diagonal().min())),
                    }
                }
                None
            })
            .collect();
        match errs.into_iter().flatten().next() {
            None => Ok(()),
            Some((index, value)) if level == 0 => {
                Err(SolverError::DiagonalNotPositive { index, value })
            }
            Some((index, value)) => Err(SolverError::CoarseNotPositiveDefinite {
                level,
                index,
                value,
            }),
        }
    }

    /// A guaranteed upper bound of the largest eigenvalue of `D_f^-1 A_f`: with `D_i = L_i
    /// L_i^T` (Cholesky of the filtered diagonal blocks), `D_f^-1 A_f` is similar to the
    /// symmetric `L^-1 A_f L^-T`, whose spectral radius is at most its block row-sum norm
    /// `max_i (1 + sum_{j != i} |L_i^-1 S_i A_ij S_j L_j^-T|_F)` (the norm induced by
    /// `max_i |x_i|_2`; the diagonal term is `I`, and a Frobenius norm is at least the
    /// spectral one). Unlike the Lanczos estimate it cannot miss an eigenvector localised at a
    /// few nodes; it is above the eigenvalue by up to the spread of the couplings' directions,
    /// so the smoother it tunes is weaker. Parallel over fixed chunks; the maximum does not
    /// depend on the order.
    pub fn lambda_bound<O: Operator<B>>(&self, op: &O) -> f64 {
        let n = op.n();
        // L_i^-1 of every filtered diagonal block (identity where it is not positive
        // definite: invert_diagonal has failed there before this is called).
        let mut linv = vec![SMatrix::<f64, B, B>::identity(); n];
        linv.par_chunks_mut(ROW_CHUNK)
            .enumerate()
            .for_each(|(c, out)| {
                for (o, m) in out.iter_mut().enumerate() {
                    let d = op.filtered_diagonal(c * ROW_CHUNK + o);
                    let d = (d + d.transpose()) * 0.5;
                    if let Some(ch) = d.cholesky()
                        && let Some(inv) = ch.l().try_inverse()
                    {
                        *m = inv;
                    }
                }
            });
        (0..n)
            .into_par_iter()
            .with_min_len(ROW_CHUNK)
            .map(|i| {
                let mut sum = 1.0;
                op.for_each_in_row(i, |j, _, aij| {
                    if j != i {
                        let sij = op.filter_block(i, *aij);
                        let sijs = op.filter_block(j, sij.transpose()).transpose();
                        sum += (linv[i] * sijs * linv[j].transpose()).norm();
                    }
                });
                sum
            })
            .reduce(|| 0.0, f64::max)
    }

    /// Estimates the largest eigenvalue of `D_f^-1 A_f` with `steps` Lanczos steps in the
    /// `D_f` inner product from a fixed start vector (Saad 2011, "Numerical methods for large
    /// eigenvalue problems", the Lanczos chapter): the largest Ritz value plus its residual
    /// `|beta_k s_k|` (the Ritz residual bound; Parlett, "The symmetric eigenvalue problem"),
    /// which is
    /// within a few percent above or below the true value after 4-6 steps on cloth matrices.
    /// Deterministic (fixed start, fixed-chunk reductions).
    pub fn estimate_lambda<O: Operator<B>>(&mut self, op: &O, steps: usize) -> f64 {
        // Three work vectors: z (the Lanczos vector q, unscaled: q = s z), wa (D q of this
        // step, unscaled until pass A scales it), wb (D q of the previous step, then the new
        // residual w). Two passes per step.
        let Vecs {
            x: z, r: wa, d: wb, ..
        } = &mut self.vecs;
        let dinv = &self.smooth.dinv;
        let mut partials = Vec::with_capacity(z.len().div_ceil(ROW_CHUNK));
        // Start: wa = S * (deterministic pseudo-random vector), z = D^-1 wa, wb = 0.
        lanczos_start(op, wa, wb);
        let beta0 = dot_dinv(wa, dinv, z, &mut partials).sqrt();
        if beta0 <= 0.0 || !beta0.is_finite() {
            return 1.0;
        }
        let mut scale = 1.0 / beta0;
        let mut beta_prev = 0.0;
        let mut alphas = Vec::with_capacity(steps);
        let mut betas = Vec::with_capacity(steps);
        for _ in 0..steps.max(1) {
            // Pass A: wb = s A z - beta_prev wb; alpha = s z . wb; wa *= s.
            let z_ro: &[SVector<f64, B>] = z;
            wb.par_chunks_mut(ROW_CHUNK)
                .zip(wa.par_chunks_mut(ROW_CHUNK))
                .enumerate()
                .map(|(c, (wbs, was))| {
                    let mut acc = 0.0;
                    for (o, (u, v)) in wbs.iter_mut().zip(was.iter_mut()).enumerate() {
                        let i = c * ROW_CHUNK + o;
                        *u = op.mul_row(i, z_ro) * scale - *u * beta_prev;
                        acc += z_ro[i].dot(u) * scale;
                        *v *= scale;
                    }
                    acc
                })
                .collect_into_vec(&mut partials);
            let alpha = sum_in_order(&partials);
            alphas.push(alpha);
            // Pass B: wb -= alpha wa; z = D^-1 wb; beta^2 = wb . z.
            let wa_ro: &[SVector<f64, B>] = wa;
            wb.par_chunks_mut(ROW_CHUNK)
                .zip(z.par_chunks_mut(ROW_CHUNK))
                .enumerate()
                .map(|(c, (wbs, zs))| {
                    let mut acc = 0.0;
                    for (o, (u, zi)) in wbs.iter_mut().zip(zs.iter_mut()).enumerate() {
                        let i = c * ROW_CHUNK + o;
                        *u -= wa_ro[i] * alpha;
                        *zi = dinv[i] * *u;
                        acc += u.dot(zi);
                    }
                    acc
                })
                .collect_into_vec(&mut partials);
            let b = sum_in_order(&partials).max(0.0).sqrt();
            betas.push(b);
            if b.is_nan() || b <= 1e-12 * alpha.abs() || !b.is_finite() {
                break;
            }
            scale = 1.0 / b;
            beta_prev = b;
            std::mem::swap(wa, wb);
        }
        ritz_bound(&alphas, &betas)
    }
}

/// The Lanczos start vector: `wa = S e` for a deterministic pseudo-random `e` with entries in
/// `[0.5, 1.5)`, and `wb = 0`.
fn lanczos_start<const B: usize, O: Operator<B>>(
    op: &O,
    wa: &mut [SVector<f64, B>],
    wb: &mut [SVector<f64, B>],
) {
    wa.par_chunks_mut(ROW_CHUNK)
        .zip(wb.par_chunks_mut(ROW_CHUNK))
        .enumerate()
        .for_each(|(c, (was, wbs))| {
            for (o, (v, u)) in was.iter_mut().zip(wbs.iter_mut()).enumerate() {
                let i = c * ROW_CHUNK + o;
                let mut h = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32;
                let mut e = SVector::<f64, B>::zeros();
                for k in 0..B {
                    h = h
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    e[k] = 0.5 + ((h >> 11) as f64) / ((1u64 << 53) as f64);
                }
                *v = op.filter_vec(i, e);
                *u = SVector::zeros();
            }
        });
}

/// The largest Ritz value of the Lanczos tridiagonal matrix (diagonal `alphas`, off-diagonal
/// `betas`) plus its residual `|beta_k s_k|`; 1 if that is not finite and positive.
fn ritz_bound(alphas: &[f64], betas: &[f64]) -> f64 {
    let k = alphas.len();
    let t = DMatrix::from_fn(k, k, |r, c| {
        if r == c {
            alphas[r]
        } else if r + 1 == c {
            betas[r]
        } else if c + 1 == r {
            betas[c]
        } else {
            0.0
        }
    });
    let eig = SymmetricEigen::new(t);
    let (imax, &theta) = eig
        .eigenvalues
        .iter()
        .enumerate()
        .fold((0, &f64::MIN), |acc, e| if e.1 > acc.1 { e } else { acc });
    let s_k = eig.eigenvectors[(k - 1, imax)];
    let bound = theta + (betas[k - 1] * s_k).abs();
    if bound.is_finite() && bound > 0.0 {
        bound
    } else {
        1.0
    }
}

/// `z = D^-1 w` (row-parallel) and returns `w . z` (fixed-chunk reduction).
fn dot_dinv<const B: usize>(
    w: &[SVector<f64, B>],
    dinv: &[SMatrix<f64, B, B>],
    z: &mut [SVector<f64, B>],
    partials: &mut Vec<f64>,
) -> f64 {
    z.par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .map(|(c, out)| {
            let mut acc = 0.0;
            for (o, zi) in out.iter_mut().enumerate() {
                let i = c * ROW_CHUNK + o;
                *zi = dinv[i] * w[i];
                acc += w[i].dot(zi);
            }
            acc
        })
        .collect_into_vec(partials);
    sum_in_order(partials)
}

/// Thin QR of one aggregate's candidate matrix (modified Gram-Schmidt, two passes, which is
/// enough for orthogonality to rounding: Giraud, Langou & Rozloznik 2005). On entry `q`
/// holds the candidate blocks of the aggregate's nodes; on exit the orthonormal factor,
/// with columns that orthogonalisation reduces below `QR_DROP` of the largest candidate
/// column set to zero. Returns the `D x D` upper triangular factor `R` (rows of dropped
/// columns zero): the aggregate's candidates on the coarse level (Vanek, Mandel & Brezina
/// 1996, tentative prolongator; the "fit candidates" step of pyamg).
fn qr_in_place<const B: usize, const D: usize>(q: &mut [SMatrix<f64, B, D>]) -> SMatrix<f64, D, D> {
    let col_dot = |q: &[SMatrix<f64, B, D>], a: usize, b: usize| -> f64 {
        q.iter().map(|m| m.column(a).dot(&m.column(b))).sum()
    };
    let mut scale: f64 = 0.0;
    for k in 0..D {
        scale = scale.max(col_dot(q, k, k).sqrt());
    }
    let mut r = SMatrix::<f64, D, D>::zeros();
    if scale.is_nan() || scale <= 0.0 || !scale.is_finite() {
        q.iter_mut().for_each(|m| *m = SMatrix::zeros());
        return r;
    }
    let mut active = [false; D];
    for k in 0..D {
        for _pass in 0..2 {
            for j in 0..k {
                if !active[j] {
                    continue;
                }
                let c = col_dot(q, j, k);
                r[(j, k)] += c;
                for m in q.iter_mut() {
                    let qj = m.column(j).into_owned();
                    let mut ck = m.column_mut(k);
                    ck -= qj * c;
                }
            }
        }
        let nk = col_dot(q, k, k).sqrt();
        if nk > QR_DROP * scale {
            active[k] = true;
            r[(k, k)] = nk;
            for m in q.iter_mut() {
                let mut ck = m.column_mut(k);
                ck /= nk;
            }
        } else {
            for m in q.iter_mut() {
                m.column_mut(k).fill(0.0);
            }
        }
    }
    r
}

/// Skew matrix `[d]_x` with `[d]_x v = d x v`.
fn skew(d: &Vector3<f64>) -> SMatrix<f64, 3, 3> {
    SMatrix::<f64, 3, 3>::new(0.0, -d.z, d.y, d.z, 0.0, -d.x, -d.y, d.x, 0.0)
}

impl<const B: usize, const D: usize> Transfer<B, D> {
    /// Tentative prolongator from per-node candidates `cand(i)` (already filtered): QR per
    /// aggregate. Returns the coarse candidates (one `R` per aggregate). Parallel over fixed
    /// chunks of aggregates.
    pub fn fit(
        &mut self,
        cand: impl Fn(usize, usize) -> SMatrix<f64, B, D> + Sync,
    ) -> Vec<SMatrix<f64, D, D>> {
        let count = self.agg_ptr.len() - 1;
        let mut r = vec![SMatrix::zeros(); count];
        // Split tent into runs of whole aggregates, AGG_CHUNK aggregates per run.
        let mut runs = Vec::with_capacity(count.div_ceil(AGG_CHUNK));
        let mut rest: &mut [SMatrix<f64, B, D>] = &mut self.tent;
        let mut a0 = 0;
        while a0 < count {
            let a1 = (a0 + AGG_CHUNK).min(count);
            let (head, tail) = rest.split_at_mut(self.agg_ptr[a1] - self.agg_ptr[a0]);
            runs.push((a0, a1, head));
            rest = tail;
            a0 = a1;
        }
        let (agg_ptr, agg_nodes) = (&self.agg_ptr, &self.agg_nodes);
        runs.into_par_iter()
            .zip(r.par_chunks_mut(AGG_CHUNK))
            .for_each(|((a0, a1, run), rs)| {
                let base = agg_ptr[a0];
                for (a, ra) in (a0..a1).zip(rs.iter_mut()) {
                    let range = agg_ptr[a] - base..agg_ptr[a + 1] - base;
                    let q = &mut run[range];
                    for (k, m) in q.iter_mut().enumerate() {
                        *m = cand(a, agg_nodes[agg_ptr[a] + k]);
                    }
                    *ra = qr_in_place(q);
                }
            });
        r
    }

    /// Smoothed prolongator `P = S (T - omega D_f^-1 A_s T)` (Vanek, Mandel & Brezina 1996,
    /// prolongator smoothing, with the constraint-filtered operator of Tamstorf et al. 2015),
    /// row-parallel.
    /// `A_s` is `A_f` with its weak blocks lumped onto the diagonal (`A_ik x_k` replaced by
    /// `A_ik x_i`, which keeps the translations' row sums; Vanek, Mandel & Brezina 1996,
    /// "filtered matrix"), so `P` spreads only along strong connections.
    pub fn smooth_prolongator<O: Operator<B>>(
        &mut self,
        op: &O,
        dinv: &[SMatrix<f64, B, B>],
        omega: f64,
    ) {
        let (agg, pos, tent, strong) = (&self.agg, &self.pos, &self.tent, &self.strong);
        let (row_ptr, cols, chunks) = self.p.row_chunks_mut(ROW_CHUNK);
        chunks.into_par_iter().for_each(|(first, vals)| {
            let base = row_ptr[first];
            let last = (first + ROW_CHUNK).min(row_ptr.len() - 1);
            for i in first..last {
                let (lo, hi) = (row_ptr[i], row_ptr[i + 1]);
                let row_cols = &cols[lo..hi];
                let row_vals = &mut vals[lo - base..hi - base];
                row_vals.iter_mut().for_each(|v| *v = SMatrix::zeros());
                op.for_each_in_row(i, |k, slot, aik| {
                    let node = if slot == DIAGONAL || strong[slot] {
                        k
                    } else {
                        i
                    };
                    let a = agg[node];
                    if a != NONE
                        && let Ok(s) = row_cols.binary_search(&a)
                    {
                        row_vals[s] += aik * tent[pos[node]];
                    }
                });
                for v in row_vals.iter_mut() {
                    *v = dinv[i] * op.filter_block(i, *v) * (-omega);
                }
                if agg[i] != NONE
                    && let Ok(s) = row_cols.binary_search(&agg[i])
                {
                    row_vals[s] += tent[pos[i]];
                }
                for v in row_vals.iter_mut() {
                    *v = op.filter_block(i, *v);
                }
            }
        });
    }

    /// Galerkin product `A_c = P^T A_f P` into `coarse` (pattern from [`Level::symbolic`]).
    ///
    /// Parallel over fixed chunks of [`GALERKIN_CHUNK`] coarse rows: each chunk computes the
    /// rows of `A_f P` its coarse rows need into a local buffer (rows shared by two chunks are
    /// computed twice, identically), then `P^T (A_f P)` for its rows, each block summed in a
    /// fixed order. `A_f P` is never stored whole. Coarse unknowns whose column of `P`
    /// vanishes get a unit diagonal (they are decoupled, like constrained fine unknowns in
    /// `A_f`).
    pub fn galerkin<O: Operator<B>>(&mut self, op: &O, coarse: &mut CoarseOp<D>) {
        let (p, pt, ap_ptr, ap_cols) = (&self.p, &self.pt, &self.ap_ptr, &self.ap_cols);
        let nc = coarse.upper.nrows();
        let (row_ptr, cols, chunks) = coarse.upper.row_chunks_mut(GALERKIN_CHUNK);
        chunks.into_par_iter().for_each_init(
            || (Vec::new(), Vec::new(), Vec::new(), vec![0u32; nc]),
            |(rows, offs, buf, slot): &mut GalerkinScratch<B, D>, (first, vals)| {
                let last = (first + GALERKIN_CHUNK).min(nc);
                // Fine rows of A_f P that this chunk needs.
                rows.clear();
                rows.extend_from_slice(&pt.rows[pt.ptr[first]..pt.ptr[last]]);
                rows.sort_unstable();
                rows.dedup();
                offs.clear();
                offs.push(0);
                for &i in rows.iter() {
                    offs.push(offs[offs.len() - 1] + ap_ptr[i + 1] - ap_ptr[i]);
                }
                buf.clear();
                buf.resize(offs[offs.len() - 1], SMatrix::zeros());
                for (r, &i) in rows.iter().enumerate() {
                    // Where each coarse column of this row of A P is kept (every column of
                    // P's rows k for the neighbours k of i is one, by construction).
                    for (t, &c) in ap_cols[ap_ptr[i]..ap_ptr[i + 1]].iter().enumerate() {
                        slot[c] = t as u32;
                    }
                    let row_vals = &mut buf[offs[r]..offs[r + 1]];
                    op.for_each_in_row(i, |k, _, aik| {
                        for s in p.row_ptr[k]..p.row_ptr[k + 1] {
                            row_vals[slot[p.cols[s]] as usize] += aik * p.vals[s];
                        }
                    });
                    for v in row_vals.iter_mut() {
                        *v = op.filter_block(i, *v);
                    }
                }
                let base = row_ptr[first];
                for j in first..last {
                    let (lo, hi) = (row_ptr[j], row_ptr[j + 1]);
                    // Upper triangle only (columns >= j, diagonal first): the lower one is its
                    // transpose and is not stored.
                    let row_cols = &cols[lo..hi];
                    let row_vals = &mut vals[lo - base..hi - base];
                    row_vals.iter_mut().for_each(|v| *v = SMatrix::zeros());
                    for t in pt.ptr[j]..pt.ptr[j + 1] {
                        let i = pt.rows[t];
                        let r = rows.binary_search(&i).expect("row gathered above");
                        let pij = p.vals[pt.slots[t]].transpose();
                        let ap_row_cols = &ap_cols[ap_ptr[i]..ap_ptr[i + 1]];
                        let start = ap_row_cols.partition_point(|&c| c < j);
                        let ap_row = &buf[offs[r] + start..offs[r + 1]];
                        // Merge: both column lists ascend, and every column of the A P row is
                        // in the coarse row by construction.
                        let mut u = 0;
                        for (s, apv) in ap_row_cols[start..].iter().zip(ap_row) {
                            while row_cols[u] < *s {
                                u += 1;
                            }
                            row_vals[u] += pij * apv;
                        }
                    }
                    // Symmetrise the diagonal block (exact in exact arithmetic) and decouple
                    // unknowns with a zero prolongator column (zero row and column here).
                    let d = row_vals[0];
                    row_vals[0] = (d + d.transpose()) * 0.5;
                    for c in 0..D {
                        if row_vals[0][(c, c)] == 0.0 {
                            row_vals[0][(c, c)] = 1.0;
                        }
                    }
                }
            },
        );
    }

    /// `b_c = P^T r`, parallel over coarse rows.
    pub fn restrict(&self, r: &[SVector<f64, B>], bc: &mut [SVector<f64, D>]) {
        let (p, pt) = (&self.p, &self.pt);
        bc.par_chunks_mut(ROW_CHUNK)
            .enumerate()
            .for_each(|(c, out)| {
                for (o, bj) in out.iter_mut().enumerate() {
                    let j = c * ROW_CHUNK + o;
                    let mut acc = SVector::<f64, D>::zeros();
                    for t in pt.ptr[j]..pt.ptr[j + 1] {
                        acc += p.vals[pt.slots[t]].tr_mul(&r[pt.rows[t]]);
                    }
                    *bj = acc;
                }
            });
    }

    /// `x += P x_c`, row-parallel.
    pub fn prolong_add(&self, xc: &[SVector<f64, D>], x: &mut [SVector<f64, B>]) {
        let p = &self.p;
        x.par_chunks_mut(ROW_CHUNK)
            .enumerate()
            .for_each(|(c, out)| {
                for (o, xi) in out.iter_mut().enumerate() {
                    let i = c * ROW_CHUNK + o;
                    let mut acc = SVector::<f64, B>::zeros();
                    for s in p.row_ptr[i]..p.row_ptr[i + 1] {
                        acc += p.vals[s] * xc[p.cols[s]];
                    }
                    *xi += acc;
                }
            });
    }

    pub fn memory_bytes(&self) -> usize {
        let idx = size_of::<usize>();
        (self.agg.len() + self.agg_ptr.len() + self.agg_nodes.len() + self.pos.len()) * idx
            + self.strong.len()
            + self.tent.len() * size_of::<SMatrix<f64, B, D>>()
            + self.p.memory_bytes()
            + self.pt.memory_bytes()
            + (self.ap_ptr.len() + self.ap_cols.len()) * idx
    }
}

/// Level-0 candidates' centres: the centroid of each aggregate and the inverse of its RMS
/// radius (the rotation modes of [`rigid_block`] are taken about the centroid and scaled so
/// that all six columns are O(1)).
pub(crate) fn rigid_centres<const D: usize>(
    positions: &[Vector3<f64>],
    transfer: &Transfer<3, D>,
) -> Vec<(Vector3<f64>, f64)> {
    let count = transfer.agg_ptr.len() - 1;
    if D < 6 {
        // Translations only: no rotation modes to centre.
        return vec![(Vector3::zeros(), 0.0); count];
    }
    (0..count)
        .into_par_iter()
        .with_min_len(AGG_CHUNK)
        .map(|a| {
            let nodes = &transfer.agg_nodes[transfer.agg_ptr[a]..transfer.agg_ptr[a + 1]];
            let m = nodes.len().max(1) as f64;
            let c = nodes
                .iter()
                .fold(Vector3::zeros(), |s, &i| s + positions[i])
                / m;
            let r2 = nodes
                .iter()
                .fold(0.0, |s, &i| s + (positions[i] - c).norm_squared())
                / m;
            let l = r2.sqrt();
            (c, if l > 0.0 { 1.0 / l } else { 0.0 })
        })
        .collect()
}

/// Candidate block of fine node `i` in an aggregate with centre `c` and inverse radius `inv_l`,
/// filtered by `S_i`: the three translations `S_i I` (`D = 3`), or the six rigid-body modes
/// `S_i [I | -[(x_i - c)/L]_x]` (`D = 6`; rotations `e_k x (x_i - c)/L`).
#[inline]
pub(crate) fn rigid_block<O: Operator<3>, const D: usize>(
    op: &O,
    i: usize,
    x: &Vector3<f64>,
    c: &Vector3<f64>,
    inv_l: f64,
) -> SMatrix<f64, 3, D> {
    let mut m = SMatrix::<f64, 3, D>::zeros();
    m.fixed_view_mut::<3, 3>(0, 0)
        .copy_from(&SMatrix::<f64, 3, 3>::identity());
    if D == 6 {
        m.fixed_view_mut::<3, 3>(0, 3)
            .copy_from(&(-skew(&((x - c) * inv_l))));
    }
    op.filter_block(i, m)
}

#[cfg(test)]
mod tests {
    use super::super::ops::FineOp;
    use super::*;
    use crate::{BlockMatrix, Constraint};
    use nalgebra::{DMatrix, Matrix3};

    /// A linear congruential generator of numbers in [0, 1), for reproducible random systems.
    fn uniform(seed: u64) -> impl FnMut() -> f64 {
        let mut state = seed;
        move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// A random SPD system of `n` particles (springs of random directions and stiffnesses over
    /// four decades, masses over two) and random constraints of every kind.
    fn random_system(n: usize, rnd: &mut impl FnMut() -> f64) -> (BlockMatrix, Vec<Constraint>) {
        let mut pairs = Vec::new();
        for i in 0..n {
            for _ in 0..3 {
                let j = (rnd() * n as f64) as usize % n;
                if j != i && !pairs.contains(&(i, j)) && !pairs.contains(&(j, i)) {
                    pairs.push((i, j));
                }
            }
        }
        let mut a = BlockMatrix::new(n, &pairs).unwrap();
        for i in 0..n {
            a.add_diagonal(i, &(Matrix3::identity() * 10f64.powf(rnd() * 2.0 - 1.0)));
        }
        for &(i, j) in &pairs {
            let d = Vector3::new(rnd() - 0.5, rnd() - 0.5, rnd() - 0.5).normalize();
            let k =
                (d * d.transpose() + Matrix3::identity() * 0.05 * rnd()) * 10f64.powf(rnd() * 4.0);
            a.add_diagonal(i, &k);
            a.add_diagonal(j, &k);
            a.add_block(i, j, &(-k)).unwrap();
        }
        let cons: Vec<Constraint> = (0..n)
            .map(|_| {
                let v = Vector3::new(rnd() - 0.5, rnd() - 0.5, rnd() - 0.5);
                match (rnd() * 5.0) as usize {
                    0 => Constraint::Fixed,
                    1 => Constraint::plane(v).unwrap(),
                    2 => Constraint::line(v, v.cross(&Vector3::x())).unwrap(),
                    _ => Constraint::Free,
                }
            })
            .collect();
        (a, cons)
    }

    /// The dense filtered operator `A_f = S A S + (I - S)`.
    fn dense_filtered(a: &BlockMatrix, cons: &[Constraint]) -> DMatrix<f64> {
        let n = a.n();
        let s = DMatrix::from_fn(3 * n, 3 * n, |r, c| {
            if r / 3 == c / 3 {
                cons[r / 3].matrix()[(r % 3, c % 3)]
            } else {
                0.0
            }
        });
        let id = DMatrix::<f64>::identity(3 * n, 3 * n);
        &s * a.to_dense() * &s + (&id - &s)
    }

    /// The Galerkin product equals `P^T A_f P` formed densely (upper blocks stored, diagonal
    /// blocks symmetrised), for random prolongator values (in the range of the constraint
    /// filter) on the pattern the symbolic phase gives random systems with every kind of
    /// constraint.
    #[test]
    fn galerkin_product_is_p_transpose_a_p() {
        let mut rnd = uniform(0x0bad_cafe_f00d_d00d);
        let mut checked = 0;
        for _case in 0..20 {
            let n = 20 + (rnd() * 40.0) as usize;
            let (a, cons) = random_system(n, &mut rnd);
            let op = FineOp { a: &a, cons: &cons };
            // theta 0: every block is strong, so the systems coarsen.
            let (level, coarse) = Level::<3, 3>::symbolic(&op, true, 0.0, true);
            let (Some(mut tr), Some(mut coarse)) = (level.transfer, coarse) else {
                continue;
            };
            // P maps into the range of S (as the smoothed prolongator does).
            for (i, c) in cons.iter().enumerate() {
                for k in tr.p.row_ptr[i]..tr.p.row_ptr[i + 1] {
                    tr.p.vals[k] = c.matrix() * Matrix3::from_fn(|_, _| rnd() - 0.5);
                }
            }
            tr.galerkin(&op, &mut coarse);
            let nc = coarse.n();
            let p = DMatrix::from_fn(3 * n, 3 * nc, |r, c| {
                tr.p.slot(r / 3, c / 3)
                    .map_or(0.0, |k| tr.p.vals[k][(r % 3, c % 3)])
            });
            let want = p.transpose() * dense_filtered(&a, &cons) * &p;
            let scale = want.abs().max();
            for i in 0..nc {
                coarse.for_each_in_row(i, |j, _, blk| {
                    for (r, c) in (0..3).flat_map(|r| (0..3).map(move |c| (r, c))) {
                        let w = want[(3 * i + r, 3 * j + c)];
                        let w = if i == j {
                            0.5 * (w + want[(3 * j + c, 3 * i + r)])
                        } else {
                            w
                        };
                        // A zero diagonal entry (a vanished column of P) is set to 1.
                        if i == j && r == c && w == 0.0 {
                            continue;
                        }
                        assert!(
                            (blk[(r, c)] - w).abs() <= 1e-12 * scale,
                            "block ({i}, {j})[{r}, {c}]: {} against {w}",
                            blk[(r, c)]
                        );
                    }
                });
            }
            // Blocks outside the coarse pattern are zero in the dense product.
            let mut stored = DMatrix::<f64>::zeros(3 * nc, 3 * nc);
            for i in 0..nc {
                coarse.for_each_in_row(i, |j, _, _| {
                    stored.view_mut((3 * i, 3 * j), (3, 3)).fill(1.0);
                });
            }
            for (k, w) in want.iter().enumerate() {
                if stored[k] == 0.0 {
                    assert!(w.abs() <= 1e-12 * scale, "entry outside the pattern");
                }
            }
            checked += 1;
        }
        assert!(checked >= 10, "only {checked} systems coarsened");
    }

    /// `lambda_bound` is at least the largest eigenvalue of `D_f^-1 A_f`, computed densely
    /// (as that of `L^-1 A_f L^-T`), on random SPD systems with springs of random directions
    /// and stiffnesses over four decades, masses over two, and every kind of constraint.
    #[test]
    fn lambda_bound_is_above_the_largest_eigenvalue() {
        let mut rnd = uniform(0x1234_5678_9abc_def0);
        for _case in 0..20 {
            let n = 12 + (rnd() * 20.0) as usize;
            let (a, cons) = random_system(n, &mut rnd);
            let op = FineOp { a: &a, cons: &cons };
            let (mut level, _) = Level::<3, 3>::symbolic(&op, false, 0.05, true);
            level.invert_diagonal(&op, 0).unwrap();
            let bound = level.lambda_bound(&op);
            // Dense A_f and its block diagonal.
            let af = dense_filtered(&a, &cons);
            let dd = DMatrix::from_fn(
                3 * n,
                3 * n,
                |r, c| {
                    if r / 3 == c / 3 { af[(r, c)] } else { 0.0 }
                },
            );
            let l = dd.cholesky().unwrap().l();
            let linv = l.try_inverse().unwrap();
            let c = &linv * af * linv.transpose();
            let c = (&c + c.transpose()) * 0.5;
            let top = c.symmetric_eigenvalues().max();
            assert!(
                bound >= top * (1.0 - 1e-12),
                "bound {bound} < {top} (n = {n})"
            );
            assert!(
                bound <= 3.0 * top.max(1.0) * n as f64,
                "bound {bound} absurd"
            );
        }
    }
}
