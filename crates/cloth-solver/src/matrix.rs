//! 3x3-block sparse symmetric matrix with a fixed pattern and a slot-table assembly plan.
//!
//! # Memory layout
//! * Diagonal blocks are stored apart, one `Matrix3<f64>` (9 contiguous `f64`, column-major)
//!   per block row, because every row has one and the preconditioners read them.
//! * Off-diagonal blocks are stored as CSR over **full** block rows: both `(i, j)` and
//!   `(j, i)` are stored (`A_ji = A_ij^T`), columns sorted ascending within a row, values
//!   contiguous `Matrix3<f64>`. Storing both halves doubles the off-diagonal memory but makes
//!   `y = A x` a pure row-parallel gather with no write conflicts and no reduction, so it is
//!   bit-identical for any thread count. `mirror[k]` gives the slot of the transpose of slot
//!   `k`, so `add_block` writes both halves in O(log row length).

use nalgebra::{DMatrix, Matrix3, Vector3};
use rayon::prelude::*;

use crate::SolverError;
use crate::par::ROW_CHUNK;

/// The square root of a symmetric positive semidefinite 3x3 matrix (eigenvalues below zero,
/// from rounding, taken as zero).
fn psd_sqrt(m: &Matrix3<f64>) -> Matrix3<f64> {
    let e = m.symmetric_eigen();
    let roots = e.eigenvalues.map(|l| l.max(0.0).sqrt());
    e.eigenvectors * Matrix3::from_diagonal(&roots) * e.eigenvectors.transpose()
}

/// Minimum number of slots per rayon task in [`BlockMatrix::assemble`].
const SLOT_MIN_LEN: usize = 256;

/// 3x3-block sparse symmetric matrix (e.g. `A = M - h df/dv - h^2 df/dx`, units kg).
///
/// The pattern (which blocks exist) is built once from particle pairs; values are refilled
/// every step with [`BlockMatrix::set_zero`] + [`BlockMatrix::add_block`], or in parallel
/// with an [`AssemblyPlan`]. See the module documentation for the memory layout.
#[derive(Clone, Debug)]
pub struct BlockMatrix {
    n: usize,
    diag: Vec<Matrix3<f64>>,
    row_ptr: Vec<usize>,
    cols: Vec<usize>,
    vals: Vec<Matrix3<f64>>,
    mirror: Vec<usize>,
}

/// Slot table for [`BlockMatrix::assemble`]: for every stored block, the list of entries
/// (and whether transposed) that sum into it, in entry order.
///
/// Built by [`BlockMatrix::plan`]; valid only for the matrix (pattern) that built it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssemblyPlan {
    n: usize,
    n_entries: usize,
    nnz_off: usize,
    // Per diagonal slot: entry indices (entries (i, i)), in entry order.
    diag_ptr: Vec<usize>,
    diag_src: Vec<usize>,
    // Per off-diagonal slot: (entry index << 1) | transposed, in entry order.
    off_ptr: Vec<usize>,
    off_src: Vec<usize>,
}

impl AssemblyPlan {
    /// Number of entries (element blocks) the plan expects in `blocks`.
    pub fn n_entries(&self) -> usize {
        self.n_entries
    }

    /// The same plan for `grown`, a pattern that holds every block of `old` (the pattern this
    /// plan was built for) and possibly more: the new blocks receive no entry. Equal to
    /// `grown.plan(entries)` for the entries that built this plan, at the cost of one pass over
    /// the slots instead of a search per entry (contact pairs grow the pattern during a run).
    ///
    /// # Errors
    /// [`SolverError::PatternMissing`] naming a block of `old` that `grown` lacks, and
    /// [`SolverError::IndexOutOfRange`] if the sizes differ or this plan is not `old`'s.
    pub fn regrown(
        &self,
        old: &BlockMatrix,
        grown: &BlockMatrix,
    ) -> Result<AssemblyPlan, SolverError> {
        if old.n != grown.n || self.n != old.n || self.nnz_off != old.cols.len() {
            return Err(SolverError::IndexOutOfRange {
                what: "regrown plan's pattern".into(),
                index: grown.n,
                n: self.n,
            });
        }
        // Slots are stored row by row with ascending columns in both patterns, so the old
        // slots map to increasing new ones.
        let nnz = grown.cols.len();
        let mut count = vec![0usize; nnz + 1];
        let mut map = vec![0usize; self.nnz_off];
        for i in 0..old.n {
            let row = old.row_ptr[i]..old.row_ptr[i + 1];
            let slots = row.clone().zip(&old.cols[row.clone()]);
            for ((k, &j), to) in slots.zip(&mut map[row]) {
                *to = grown
                    .slot(i, j)
                    .ok_or(SolverError::PatternMissing { i, j })?;
                count[*to + 1] = self.off_ptr[k + 1] - self.off_ptr[k];
            }
        }
        for s in 0..nnz {
            count[s + 1] += count[s];
        }
        let mut off_src = vec![0usize; self.off_src.len()];
        for (k, &t) in map.iter().enumerate() {
            let (from, to) = (self.off_ptr[k]..self.off_ptr[k + 1], count[t]);
            off_src[to..to + from.len()].copy_from_slice(&self.off_src[from]);
        }
        Ok(AssemblyPlan {
            n: self.n,
            n_entries: self.n_entries,
            nnz_off: nnz,
            diag_ptr: self.diag_ptr.clone(),
            diag_src: self.diag_src.clone(),
            off_ptr: count,
            off_src,
        })
    }
}

impl BlockMatrix {
    /// Builds the pattern for `n` block rows. Each pair `(i, j)`, `i != j`, in either order and
    /// possibly repeated, makes blocks `(i, j)` and `(j, i)` exist; pairs with `i == j` are
    /// ignored (every diagonal block exists). All values start at zero.
    ///
    /// # Errors
    /// [`SolverError::IndexOutOfRange`] if a pair refers to a particle `>= n`.
    pub fn new(n: usize, pairs: &[(usize, usize)]) -> Result<Self, SolverError> {
        let mut adj: Vec<(usize, usize)> = Vec::with_capacity(2 * pairs.len());
        for (k, &(i, j)) in pairs.iter().enumerate() {
            for idx in [i, j] {
                if idx >= n {
                    return Err(SolverError::IndexOutOfRange {
                        what: format!("pair {k}"),
                        index: idx,
                        n,
                    });
                }
            }
            if i != j {
                adj.push((i, j));
                adj.push((j, i));
            }
        }
        adj.sort_unstable();
        adj.dedup();
        let mut row_ptr = vec![0usize; n + 1];
        for &(i, _) in &adj {
            row_ptr[i + 1] += 1;
        }
        for i in 0..n {
            row_ptr[i + 1] += row_ptr[i];
        }
        let cols: Vec<usize> = adj.iter().map(|&(_, j)| j).collect();
        let mut m = BlockMatrix {
            n,
            diag: vec![Matrix3::zeros(); n],
            row_ptr,
            vals: vec![Matrix3::zeros(); cols.len()],
            mirror: vec![0; cols.len()],
            cols,
        };
        for i in 0..n {
            for k in m.row_ptr[i]..m.row_ptr[i + 1] {
                let j = m.cols[k];
                // Present by construction (pattern is symmetric).
                m.mirror[k] = m.slot(j, i).unwrap_or(usize::MAX);
            }
        }
        Ok(m)
    }

    /// Number of block rows (particles); the matrix is `3n x 3n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of stored 3x3 blocks: `n` diagonal blocks plus both `(i, j)` and `(j, i)` for
    /// every distinct off-diagonal pair.
    pub fn nnz_blocks(&self) -> usize {
        self.n + self.cols.len()
    }

    /// Off-diagonal slot index of block `(i, j)`, `i != j`, if it is in the pattern.
    fn slot(&self, i: usize, j: usize) -> Option<usize> {
        if i >= self.n || j >= self.n {
            return None;
        }
        let (lo, hi) = (self.row_ptr[i], self.row_ptr[i + 1]);
        self.cols[lo..hi].binary_search(&j).ok().map(|k| lo + k)
    }

    /// Sets every stored value to zero (the pattern is kept).
    pub fn set_zero(&mut self) {
        self.diag.fill(Matrix3::zeros());
        self.vals.fill(Matrix3::zeros());
    }

    /// Adds `b` to block `(i, j)` and `b^T` to `(j, i)` when `i != j`; for `i == j` adds `b`
    /// once (the caller passes a symmetric block).
    ///
    /// # Errors
    /// [`SolverError::PatternMissing`] if `(i, j)` is not in the pattern (including `i` or
    /// `j >= n`).
    pub fn add_block(&mut self, i: usize, j: usize, b: &Matrix3<f64>) -> Result<(), SolverError> {
        if i == j && i < self.n {
            self.diag[i] += b;
            return Ok(());
        }
        let k = self
            .slot(i, j)
            .ok_or(SolverError::PatternMissing { i, j })?;
        self.vals[k] += b;
        let t = self.mirror[k];
        self.vals[t] += b.transpose();
        Ok(())
    }

    /// Adds `b` (symmetric, e.g. a mass block) to diagonal block `i`.
    ///
    /// # Panics
    /// If `i >= n` (an index error of the caller, like slice indexing).
    pub fn add_diagonal(&mut self, i: usize, b: &Matrix3<f64>) {
        self.diag[i] += b;
    }

    /// Precomputes where each entry `(i, j)` of a list of element blocks goes, for
    /// [`BlockMatrix::assemble`]. Entry `k` with `i != j` contributes `blocks[k]` to `(i, j)`
    /// and its transpose to `(j, i)`; with `i == j` it contributes `blocks[k]` to the diagonal.
    ///
    /// # Errors
    /// [`SolverError::PatternMissing`] naming the first entry whose block is not in the pattern.
    pub fn plan(&self, entries: &[(usize, usize)]) -> Result<AssemblyPlan, SolverError> {
        let n = self.n;
        let nnz_off = self.cols.len();
        let mut diag_cnt = vec![0usize; n + 1];
        let mut off_cnt = vec![0usize; nnz_off + 1];
        let mut targets: Vec<(usize, usize)> = Vec::with_capacity(entries.len());
        for &(i, j) in entries {
            if i == j {
                if i >= n {
                    return Err(SolverError::PatternMissing { i, j });
                }
                diag_cnt[i + 1] += 1;
                targets.push((i, usize::MAX));
            } else {
                let k = self
                    .slot(i, j)
                    .ok_or(SolverError::PatternMissing { i, j })?;
                let t = self.mirror[k];
                off_cnt[k + 1] += 1;
                off_cnt[t + 1] += 1;
                targets.push((k, t));
            }
        }
        for s in 0..n {
            diag_cnt[s + 1] += diag_cnt[s];
        }
        for s in 0..nnz_off {
            off_cnt[s + 1] += off_cnt[s];
        }
        let mut diag_src = vec![0usize; diag_cnt[n]];
        let mut off_src = vec![0usize; off_cnt[nnz_off]];
        let mut diag_fill = diag_cnt.clone();
        let mut off_fill = off_cnt.clone();
        // Filling in entry order keeps each slot's contributions in entry order.
        for (e, &(a, t)) in targets.iter().enumerate() {
            if t == usize::MAX {
                diag_src[diag_fill[a]] = e;
                diag_fill[a] += 1;
            } else {
                off_src[off_fill[a]] = e << 1;
                off_fill[a] += 1;
                off_src[off_fill[t]] = (e << 1) | 1;
                off_fill[t] += 1;
            }
        }
        Ok(AssemblyPlan {
            n,
            n_entries: entries.len(),
            nnz_off,
            diag_ptr: diag_cnt,
            diag_src,
            off_ptr: off_cnt,
            off_src,
        })
    }

    /// Zeroes all values and refills them: diagonal block `i` = `diagonal[i]` (if given) plus
    /// the entries `(i, i)` in entry order; off-diagonal block `(i, j)` = sum in entry order of
    /// `blocks[k]` for entries `(i, j)` and `blocks[k]^T` for entries `(j, i)`.
    ///
    /// Runs in parallel over slots; each slot is summed serially in the fixed order above, so
    /// the result is bit-identical to `set_zero`, `add_diagonal` for every row, then
    /// `add_block` for every entry in order, for any thread count.
    ///
    /// # Panics
    /// If `plan` was built for another pattern, `blocks.len() != plan.n_entries()`, or
    /// `diagonal` is given with a length other than `n` (caller bugs, not data errors).
    pub fn assemble(
        &mut self,
        plan: &AssemblyPlan,
        blocks: &[Matrix3<f64>],
        diagonal: Option<&[Matrix3<f64>]>,
    ) {
        assert_eq!(
            blocks.len(),
            plan.n_entries,
            "blocks.len() != plan.n_entries()"
        );
        self.assemble_with(plan, |e| blocks[e], diagonal);
    }

    /// [`BlockMatrix::assemble`] with entry e's block given by `block(e)` instead of stored:
    /// no array of blocks (e.g. `A = M - h df/dv - h^2 df/dx` straight from the Jacobians).
    /// `block` is called once per slot an entry reaches (twice for an off-diagonal entry);
    /// same order and bits as `assemble` with `blocks[e] = block(e)`.
    ///
    /// # Panics
    /// If `plan` was built for another pattern or `diagonal` is given with a length other than
    /// `n`.
    pub fn assemble_with(
        &mut self,
        plan: &AssemblyPlan,
        block: impl Fn(usize) -> Matrix3<f64> + Sync,
        diagonal: Option<&[Matrix3<f64>]>,
    ) {
        assert!(
            plan.n == self.n && plan.nnz_off == self.cols.len(),
            "AssemblyPlan built for another pattern"
        );
        if let Some(d) = diagonal {
            assert_eq!(d.len(), self.n, "diagonal.len() != n");
        }
        self.diag
            .par_iter_mut()
            .with_min_len(SLOT_MIN_LEN)
            .enumerate()
            .for_each(|(i, out)| {
                let mut acc = match diagonal {
                    Some(d) => Matrix3::zeros() + d[i],
                    None => Matrix3::zeros(),
                };
                for &e in &plan.diag_src[plan.diag_ptr[i]..plan.diag_ptr[i + 1]] {
                    acc += block(e);
                }
                *out = acc;
            });
        self.vals
            .par_iter_mut()
            .with_min_len(SLOT_MIN_LEN)
            .enumerate()
            .for_each(|(s, out)| {
                let mut acc = Matrix3::zeros();
                for &code in &plan.off_src[plan.off_ptr[s]..plan.off_ptr[s + 1]] {
                    let b = block(code >> 1);
                    if code & 1 == 0 {
                        acc += b;
                    } else {
                        acc += b.transpose();
                    }
                }
                *out = acc;
            });
    }

    /// Block `(i, j)` if it is in the pattern (diagonal blocks always are, for `i < n`).
    pub fn block(&self, i: usize, j: usize) -> Option<Matrix3<f64>> {
        if i == j {
            return self.diag.get(i).copied();
        }
        self.slot(i, j).map(|k| self.vals[k])
    }

    /// Diagonal block `i`.
    ///
    /// # Panics
    /// If `i >= n`.
    pub fn diagonal_block(&self, i: usize) -> Matrix3<f64> {
        self.diag[i]
    }

    /// The sum of the blocks `(i, j)` of row `i` over the columns `j` with `set[j]` true (the
    /// diagonal block when `set[i]`). For a set of particles that includes `i`, it is the
    /// block that resists a move of particle `i` together with the rest of the set, the
    /// particles outside it held: `A_ii` less the couplings within the set.
    ///
    /// # Panics
    /// If `i >= n` or `set` is shorter than `n`.
    pub fn row_sum_over(&self, i: usize, set: &[bool]) -> Matrix3<f64> {
        let mut acc = if set[i] {
            self.diag[i]
        } else {
            Matrix3::zeros()
        };
        for k in self.row_ptr[i]..self.row_ptr[i + 1] {
            if set[self.cols[k]] {
                acc += self.vals[k];
            }
        }
        acc
    }

    /// Row `i` of `A x` (diagonal first, then off-diagonal blocks by ascending column).
    #[inline]
    pub(crate) fn row_times(&self, i: usize, x: &[Vector3<f64>]) -> Vector3<f64> {
        let mut acc = self.diag[i] * x[i];
        for k in self.row_ptr[i]..self.row_ptr[i + 1] {
            acc += self.vals[k] * x[self.cols[k]];
        }
        acc
    }

    /// `y = A x`, parallel over fixed chunks of block rows (rayon). Each row is summed
    /// serially in a fixed order, so `y` is bit-identical for any thread count.
    ///
    /// # Panics
    /// If `x.len() != n` or `y.len() != n`.
    pub fn mul_vec(&self, x: &[Vector3<f64>], y: &mut [Vector3<f64>]) {
        assert_eq!(x.len(), self.n, "x.len() != n");
        assert_eq!(y.len(), self.n, "y.len() != n");
        y.par_chunks_mut(ROW_CHUNK).enumerate().for_each(|(c, ys)| {
            let base = c * ROW_CHUNK;
            for (o, yi) in ys.iter_mut().enumerate() {
                *yi = self.row_times(base + o, x);
            }
        });
    }

    /// Writes into `out` (any pattern) this matrix with every block outside `out`'s pattern
    /// lumped onto the diagonal: blocks `(i, j)` that both store are copied, blocks that only
    /// `out` stores are zero, and each block `B_ij` that `out` lacks is dropped and
    /// `(B_ij B_ij^T)^(1/2)` added to diagonal block `i` (its transpose adds
    /// `(B_ij^T B_ij)^(1/2)` to `j`). For a spring between two particles, `B = -K` with `K`
    /// symmetric positive semidefinite, that is `K` itself: the pair's coupling is dropped and
    /// its stiffness kept, direction by direction.
    ///
    /// The result dominates this matrix: with the singular value decomposition
    /// `B = sum_k s_k u_k v_k^T`, `out - self` is a sum of terms
    /// `s_k (e_i u_k - e_j v_k)(e_i u_k - e_j v_k)^T`, each positive semidefinite. So `out`
    /// is positive definite wherever this matrix is, and a preconditioner built on `out`'s
    /// fixed pattern stays valid while couplings outside it (contact pairs) come and go.
    /// Row-parallel; the same bits for any thread count.
    ///
    /// # Errors
    /// [`SolverError::IndexOutOfRange`] if the sizes differ.
    pub fn lump_into(&self, out: &mut BlockMatrix) -> Result<(), SolverError> {
        if out.n != self.n {
            return Err(SolverError::IndexOutOfRange {
                what: "lumped matrix's block rows".into(),
                index: out.n,
                n: self.n,
            });
        }
        let BlockMatrix {
            diag,
            row_ptr,
            cols,
            vals,
            ..
        } = out;
        let (row_ptr, cols): (&[usize], &[usize]) = (row_ptr, cols);
        // Off-diagonal values of `out` split by row, so rows can be filled in parallel.
        let mut rows: Vec<&mut [Matrix3<f64>]> = Vec::with_capacity(self.n);
        let mut rest: &mut [Matrix3<f64>] = vals;
        for i in 0..self.n {
            let (row, tail) = rest.split_at_mut(row_ptr[i + 1] - row_ptr[i]);
            rows.push(row);
            rest = tail;
        }
        diag.par_iter_mut()
            .zip(rows.par_iter_mut())
            .enumerate()
            .for_each(|(i, (d, row))| {
                row.fill(Matrix3::zeros());
                let out_cols = &cols[row_ptr[i]..row_ptr[i + 1]];
                let mut lumped = Matrix3::zeros();
                let mut k_out = 0;
                for k in self.row_ptr[i]..self.row_ptr[i + 1] {
                    let j = self.cols[k];
                    // Both rows have ascending columns: skip `out`'s blocks this one lacks.
                    while k_out < out_cols.len() && out_cols[k_out] < j {
                        k_out += 1;
                    }
                    if out_cols.get(k_out) == Some(&j) {
                        row[k_out] = self.vals[k];
                    } else {
                        lumped += psd_sqrt(&(self.vals[k] * self.vals[k].transpose()));
                    }
                }
                *d = self.diag[i] + lumped;
            });
        Ok(())
    }

    /// Whether `other` stores exactly the blocks this matrix stores.
    pub fn same_pattern(&self, other: &BlockMatrix) -> bool {
        self.n == other.n && self.row_ptr == other.row_ptr && self.cols == other.cols
    }

    /// CSR pattern of the off-diagonal blocks: `(row_ptr, cols)`.
    pub(crate) fn pattern(&self) -> (&[usize], &[usize]) {
        (&self.row_ptr, &self.cols)
    }

    /// Off-diagonal block in slot `k` of the CSR arrays.
    #[inline]
    pub(crate) fn off_block(&self, k: usize) -> Matrix3<f64> {
        self.vals[k]
    }

    /// Index of the first block row holding a non-finite value, if any.
    pub(crate) fn first_non_finite_row(&self) -> Option<usize> {
        let finite = |m: &Matrix3<f64>| m.iter().all(|v| v.is_finite());
        (0..self.n).find(|&i| {
            !finite(&self.diag[i])
                || self.vals[self.row_ptr[i]..self.row_ptr[i + 1]]
                    .iter()
                    .any(|m| !finite(m))
        })
    }

    /// Calls `f(i, j, block)` for every stored block (diagonal first in each row).
    pub(crate) fn for_each_block(&self, mut f: impl FnMut(usize, usize, &Matrix3<f64>)) {
        for i in 0..self.n {
            f(i, i, &self.diag[i]);
            for k in self.row_ptr[i]..self.row_ptr[i + 1] {
                f(i, self.cols[k], &self.vals[k]);
            }
        }
    }

    /// Dense `3n x 3n` copy (for tests and small problems).
    pub fn to_dense(&self) -> DMatrix<f64> {
        let mut d = DMatrix::zeros(3 * self.n, 3 * self.n);
        self.for_each_block(|i, j, b| {
            d.fixed_view_mut::<3, 3>(3 * i, 3 * j).copy_from(b);
        });
        d
    }
}
