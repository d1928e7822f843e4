//! The midedge split unknowns of the shape-operator bend model, minimised out.
//!
//! Each triangle's curvature is the midedge formula of Grinspun, Gingold, Reisman & Zorin
//! (2006): `K_f = sum_i phi_{f,i} |e_i| / A_f t_i t_i^T`, where `phi_{f,i}` is the angle by which
//! the normal at the midpoint of edge i turns away from the triangle's normal. The two
//! triangles of an interior edge share its dihedral angle, `phi_f + phi_g = theta_e`, so the
//! area-weighted sum of all curvatures is the distributional Hessian whatever the split
//! (conservation: no one-triangle oscillation can pose as curvature). The split itself is one
//! unknown per edge, `phi_f = theta/2 + psi_e`, `phi_g = theta/2 - psi_e`; libshell
//! (`MidedgeAngleTanFormulation`, Chen, Sastry, van Rees & Vouga 2018) keeps it as an extra
//! degree of freedom of the solver. Here it is massless and minimised out: the bend energy
//! is
//!
//! `E(x) = min_psi sum_f D_f/2 |P_f (dtheta_f + 2 s_f psi_f)|^2`
//!
//! (`P_f` the triangle's condition weights [`crate::ShapeRest::weights`] of the midedge
//! columns, `s_f = +1` on edges whose hinge lists f first, `-1` otherwise). The energy is
//! quadratic in psi with a matrix fixed at rest, `H = sum_f 4 D_f s s^T . S_f` (`S_f = P_f^T
//! P_f`), factorised once (sparse Cholesky, AMD ordering); each evaluation solves
//! `H psi = -sum_f 2 D_f s_f . S_f dtheta_f` (two triangular solves, sequential: the same bits
//! on any number of threads) and hands every triangle its effective angles `dtheta_f + 2 s_f
//! psi_f`. Since psi minimises E, `dE/dx` at fixed psi is the exact gradient of E (envelope
//! theorem): forces need no derivative of psi. The implicit matrix uses the Hessian at fixed
//! psi, which bounds the exact one (`H_xx - H_xpsi H^-1 H_psix`) from above: a safe, slightly
//! stiffer matrix.
//!
//! With the split minimised out, the energy of every quadratic surface is the plate's on
//! uniform, alternating, equilateral, jittered and disc meshes, up to the free-edge strip
//! (`tests/bending_energy.rs`; the fixed split of the midedge average is 2x too stiff in
//! twist on alternating grids and 1.2-1.5x on jittered meshes).
//!
//! The edges of triangles that have a free edge keep the average split (`psi = 0`, no
//! unknown). With their split free, the one-triangle strip along every free edge would relax
//! into a softer state than the average allows (1.2-1.7 cells of missing energy instead of
//! one), and on sewn garments, whose panels all meet at free edges, the softer seam strips
//! would hold stitches open. The strip is one triangle wide, so its error still shrinks with
//! refinement (`tests/cantilever.rs`).

use std::sync::Arc;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::sparse::linalg::cholesky::{LltRef, SymbolicCholesky, factorize_symbolic_cholesky};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};

use crate::ShapeRest;

/// Per hinge (`n` of them): whether a triangle `t` with `select(t)` has it on an edge
/// (`hinges[t]`, `usize::MAX` on boundary edges).
pub(crate) fn hinges_of(
    n: usize,
    hinges: &[[usize; 3]],
    select: impl Fn(usize) -> bool,
) -> Vec<bool> {
    let mut on = vec![false; n];
    for (_, hs) in hinges.iter().enumerate().filter(|(t, _)| select(*t)) {
        for &h in hs.iter().filter(|&&h| h != usize::MAX) {
            on[h] = true;
        }
    }
    on
}

/// The factorised split system of one model.
pub(crate) struct EdgeSplit {
    dim: usize,
    symbolic: SymbolicCholesky<usize>,
    l_values: Vec<f64>,
    solve_req: StackReq,
    /// Per triangle: `(hinge, sign, fixed)` of each edge (`usize::MAX` on boundary edges);
    /// `fixed` where the edge's split is no unknown: a triangle of the hinge is held flat, or
    /// has a free edge (average split).
    sides: Vec<[(usize, f64, bool); 3]>,
    /// Per triangle: held flat by a clamp (no bending energy, see [`EdgeSplit::new`]).
    rigid: Vec<bool>,
    /// Per triangle: `D_f S_f` (the weighted Gram matrix of its condition weights).
    gram: Vec<[[f64; 3]; 3]>,
}

impl std::fmt::Debug for EdgeSplit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EdgeSplit")
            .field("dim", &self.dim)
            .field("nnz_factor", &self.l_values.len())
            .finish_non_exhaustive()
    }
}

/// Scratch of [`EdgeSplit::solve`]; cloning gives fresh scratch.
#[derive(Default)]
pub(crate) struct SplitScratch {
    mem: Option<(StackReq, MemBuffer)>,
}

impl Clone for SplitScratch {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for SplitScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SplitScratch")
    }
}

impl EdgeSplit {
    /// The split system of `num_hinges` hinges over triangles with rest data `rest`, hinge per
    /// edge `hinges` (`usize::MAX` on a boundary edge), `signs` (+1 where the hinge lists the
    /// triangle first) and rigidity `d` (N m) per triangle. `None` if there is no hinge or
    /// the factorisation fails (not expected: H is positive
    /// definite, each triangle's three edge directions being independent; a tiny diagonal
    /// shift covers hinges between triangles without rigidity).
    ///
    /// `rigid` triangles (empty: none) are held flat by a clamp: they store no bending energy
    /// and the split of each of their edges is fixed, the whole angle on the triangle across
    /// (`phi = theta` there, `0` on the rigid side), which is then no unknown; the caller has
    /// doubled that triangle's weight column of the edge (`ClothModel::set_clamped_vertices`),
    /// since `phi = theta/2 + psi` is what the columns assume.
    pub(crate) fn new(
        num_hinges: usize,
        rest: &[ShapeRest],
        hinges: &[[usize; 3]],
        signs: &[[f64; 3]],
        d: &[f64],
        rigid: &[bool],
    ) -> Option<Arc<Self>> {
        let n = num_hinges;
        let rigid: Vec<bool> = (0..rest.len())
            .map(|t| rigid.get(t).copied().unwrap_or(false))
            .collect();
        let gram: Vec<[[f64; 3]; 3]> = (rest.iter().zip(d).zip(&rigid))
            .map(|((r, &d), &rg)| {
                let d = if rg { 0.0 } else { d };
                r.gram().map(|row| row.map(|s| d * s))
            })
            .collect();
        let sides = split_sides(n, hinges, signs, &rigid);
        let (col_ptr, row_idx, values) = split_matrix(n, &sides, &gram)?;
        let pattern = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let (symbolic, l_values) = factorize(pattern, &values)?;
        let solve_req = symbolic.solve_in_place_scratch::<f64>(1, Par::Seq);
        Some(Arc::new(Self {
            dim: n,
            symbolic,
            l_values,
            solve_req,
            sides,
            rigid,
            gram,
        }))
    }

    /// The split `psi` (one per hinge, written into `psi`) minimising the energy for the
    /// wrapped angle deviations `dtheta` (one per hinge).
    pub(crate) fn solve(&self, dtheta: &[f64], psi: &mut Vec<f64>, scratch: &mut SplitScratch) {
        psi.clear();
        psi.resize(self.dim, 0.0);
        for (sd, g) in self.sides.iter().zip(&self.gram) {
            let dth: [f64; 3] = sd.map(|(h, _, _)| if h == usize::MAX { 0.0 } else { dtheta[h] });
            for i in 0..3 {
                let (h, s, fixed) = sd[i];
                if h != usize::MAX && !fixed {
                    let gi = g[i][0] * dth[0] + g[i][1] * dth[1] + g[i][2] * dth[2];
                    psi[h] -= 2.0 * s * gi;
                }
            }
        }
        if scratch
            .mem
            .as_ref()
            .is_none_or(|(req, _)| *req != self.solve_req)
        {
            scratch.mem = Some((self.solve_req, MemBuffer::new(self.solve_req)));
        }
        let Some((_, mem)) = scratch.mem.as_mut() else {
            return;
        };
        let rhs = MatMut::from_column_major_slice_mut(psi.as_mut_slice(), self.dim, 1);
        LltRef::new(&self.symbolic, &self.l_values).solve_in_place_with_conj(
            Conj::No,
            rhs,
            Par::Seq,
            MemStack::new(mem),
        );
    }

    /// The effective angle offsets `2 s_i psi_{h_i}` of triangle `t`'s three edges (0 on
    /// boundary edges and fixed splits).
    #[inline]
    pub(crate) fn offsets(&self, t: usize, psi: &[f64]) -> [f64; 3] {
        self.sides[t].map(|(h, s, fixed)| {
            if h == usize::MAX || fixed {
                0.0
            } else {
                2.0 * s * psi[h]
            }
        })
    }

    /// Whether triangle `t` is held flat (no bending energy).
    #[inline]
    pub(crate) fn is_rigid(&self, t: usize) -> bool {
        self.rigid[t]
    }
}

/// Per triangle, `(hinge, sign, fixed)` of each edge (see [`EdgeSplit::sides`]): the split
/// of hinges with a rigid side, and of the edges of triangles with a free edge, is fixed.
fn split_sides(
    n: usize,
    hinges: &[[usize; 3]],
    signs: &[[f64; 3]],
    rigid: &[bool],
) -> Vec<[(usize, f64, bool); 3]> {
    // Hinges with a rigid side, and the edges of triangles with a free edge (these keep the
    // average split, module docs: with it free, the free-edge strip is too soft).
    let mut held = hinges_of(n, hinges, |t| rigid[t]);
    let free_edged = hinges_of(n, hinges, |t| hinges[t].contains(&usize::MAX));
    for (h, f) in held.iter_mut().zip(free_edged) {
        *h |= f;
    }
    hinges
        .iter()
        .zip(signs)
        .map(|(h, s)| std::array::from_fn(|i| (h[i], s[i], h[i] != usize::MAX && held[h[i]])))
        .collect()
}

/// The lower triangle of the split matrix `H` of `n` hinges in compressed columns
/// `(col_ptr, row_idx, values)`, with a diagonal shift of `1e-12` times its largest entry;
/// `None` without hinges or with a non-finite entry.
fn split_matrix(
    n: usize,
    sides: &[[(usize, f64, bool); 3]],
    gram: &[[[f64; 3]; 3]],
) -> Option<(Vec<usize>, Vec<usize>, Vec<f64>)> {
    // Lower triangle by columns: (row, col) -> value, rows >= col.
    let mut cols: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    for (sd, g) in sides.iter().zip(gram) {
        for i in 0..3 {
            for j in 0..3 {
                let ((hi, si, fi), (hj, sj, fj)) = (sd[i], sd[j]);
                if hi == usize::MAX || hj == usize::MAX || hi < hj || fi || fj {
                    continue;
                }
                cols[hj].push((hi, 4.0 * si * sj * g[i][j]));
            }
        }
    }
    let max_diag = cols
        .iter()
        .flat_map(|c| c.iter().map(|&(_, v)| v.abs()))
        .fold(0.0f64, f64::max);
    if n == 0 || !max_diag.is_finite() {
        return None;
    }
    // Every split fixed (all rigid, or no rigidity): a unit regularisation keeps the
    // (trivial) system factorisable, so rigid triangles are still known.
    let max_diag = if max_diag > 0.0 { max_diag } else { 1.0 };
    let mut col_ptr = Vec::with_capacity(n + 1);
    let mut row_idx = Vec::new();
    let mut values = Vec::new();
    col_ptr.push(0);
    for (c, list) in cols.iter_mut().enumerate() {
        list.push((c, 1e-12 * max_diag));
        list.sort_by_key(|&(r, _)| r);
        let mut k = 0;
        while k < list.len() {
            let r = list[k].0;
            let mut v = 0.0;
            while k < list.len() && list[k].0 == r {
                v += list[k].1;
                k += 1;
            }
            row_idx.push(r);
            values.push(v);
        }
        col_ptr.push(row_idx.len());
    }
    Some((col_ptr, row_idx, values))
}

/// Sparse Cholesky factor (AMD ordering, sequential) of the lower triangle `values` on
/// `pattern`: its symbolic part and values; `None` if it fails.
fn factorize(
    pattern: SymbolicSparseColMatRef<'_, usize>,
    values: &[f64],
) -> Option<(SymbolicCholesky<usize>, Vec<f64>)> {
    let symbolic =
        factorize_symbolic_cholesky(pattern, Side::Lower, Default::default(), Default::default())
            .ok()?;
    let mut l_values = vec![0.0; symbolic.len_val()];
    let factor_req = symbolic.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default());
    let mut mem = MemBuffer::try_new(factor_req).ok()?;
    symbolic
        .factorize_numeric_llt::<f64>(
            &mut l_values,
            SparseColMatRef::new(pattern, values),
            Side::Lower,
            Default::default(),
            Par::Seq,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .ok()?;
    Some((symbolic, l_values))
}
