//! The operators the multigrid levels act on: the pre-filtered fine matrix
//! `A_f = S A S + (I - S)` (a view of the caller's [`BlockMatrix`] and constraints, never
//! copied) and the coarse Galerkin matrices (`6 x 6` blocks).

use nalgebra::{SMatrix, SVector, Vector3};

use super::bsr::Bsr;
use crate::{BlockMatrix, Constraint};

/// Slot marker of a diagonal block that is stored apart from the pattern (fine level).
pub(crate) const DIAGONAL: usize = usize::MAX;

/// A symmetric block operator of one level, `B` unknowns per node.
///
/// Vectors of the fine level are kept in the range of the filter `S` (every pass filters what
/// it writes), so `A_f x = S A x` there; coarse operators need no filter (their inactive
/// unknowns are decoupled identity rows, see `super::setup`).
pub(crate) trait Operator<const B: usize>: Sync {
    /// Number of block rows (nodes).
    fn n(&self) -> usize;
    /// Pattern `(row_ptr, cols)` of the off-diagonal blocks (coarse rows may list the
    /// diagonal too).
    fn pattern(&self) -> (&[usize], &[usize]);
    /// The (unfiltered) block in slot `k` of [`Operator::pattern`].
    fn pattern_block(&self, k: usize) -> SMatrix<f64, B, B>;
    /// Calls `f(j, slot, A_ij)` for every stored block of row `i` (unfiltered), diagonal
    /// included, in a fixed order; `slot` is the block's slot in [`Operator::pattern`], or
    /// [`DIAGONAL`] for a diagonal block stored apart.
    fn for_each_in_row(&self, i: usize, f: impl FnMut(usize, usize, &SMatrix<f64, B, B>));
    /// `S_i m` for a block with `C` columns.
    fn filter_block<const C: usize>(&self, i: usize, m: SMatrix<f64, B, C>) -> SMatrix<f64, B, C>;
    /// `S_i v`.
    fn filter_vec(&self, i: usize, v: SVector<f64, B>) -> SVector<f64, B>;
    /// Row `i` of `A_f x` for `x` in the range of `S`.
    fn mul_row(&self, i: usize, x: &[SVector<f64, B>]) -> SVector<f64, B>;
    /// The filtered diagonal block `S_i A_ii S_i + (I - S_i)`.
    fn filtered_diagonal(&self, i: usize) -> SMatrix<f64, B, B>;
}

/// `A_f` of the caller's matrix and constraints (Tamstorf, Jones & McCormick 2015, eq. 9).
#[derive(Clone, Copy)]
pub(crate) struct FineOp<'a> {
    pub a: &'a BlockMatrix,
    pub cons: &'a [Constraint],
}

impl Operator<3> for FineOp<'_> {
    fn n(&self) -> usize {
        self.a.n()
    }

    fn pattern(&self) -> (&[usize], &[usize]) {
        self.a.pattern()
    }

    fn pattern_block(&self, k: usize) -> SMatrix<f64, 3, 3> {
        self.a.off_block(k)
    }

    #[inline]
    fn for_each_in_row(&self, i: usize, mut f: impl FnMut(usize, usize, &SMatrix<f64, 3, 3>)) {
        f(i, DIAGONAL, &self.a.diagonal_block(i));
        let (row_ptr, cols) = self.a.pattern();
        for (k, &j) in cols
            .iter()
            .enumerate()
            .take(row_ptr[i + 1])
            .skip(row_ptr[i])
        {
            f(j, k, &self.a.off_block(k));
        }
    }

    #[inline]
    fn filter_block<const C: usize>(&self, i: usize, m: SMatrix<f64, 3, C>) -> SMatrix<f64, 3, C> {
        match self.cons[i] {
            Constraint::Free => m,
            Constraint::Fixed => SMatrix::zeros(),
            c => c.matrix() * m,
        }
    }

    #[inline]
    fn filter_vec(&self, i: usize, v: Vector3<f64>) -> Vector3<f64> {
        self.cons[i].filter(&v)
    }

    #[inline]
    fn mul_row(&self, i: usize, x: &[Vector3<f64>]) -> Vector3<f64> {
        match self.cons[i] {
            Constraint::Free => self.a.row_times(i, x),
            // A_f is the identity on the constrained components, and x has none.
            Constraint::Fixed => x[i],
            c => c.filter(&self.a.row_times(i, x)),
        }
    }

    fn filtered_diagonal(&self, i: usize) -> SMatrix<f64, 3, 3> {
        let d = self.a.diagonal_block(i);
        match self.cons[i] {
            Constraint::Free => d,
            c => {
                let s = c.matrix();
                s * d * s + (SMatrix::<f64, 3, 3>::identity() - s)
            }
        }
    }
}

/// A coarse Galerkin operator `P^T A_f P` with `6 x 6` blocks (diagonal in the rows) and the
/// slot of each diagonal block.
#[derive(Clone, Debug)]
pub(crate) struct CoarseOp {
    pub m: Bsr<6, 6>,
    pub diag: Vec<usize>,
    /// Slot of the transposed block `(j, i)` for every slot `(i, j)`.
    pub mirror: Vec<usize>,
}

impl CoarseOp {
    /// Zero values on a pattern whose every row holds its diagonal.
    pub fn from_pattern(row_ptr: Vec<usize>, cols: Vec<usize>) -> Self {
        let n = row_ptr.len() - 1;
        let m = Bsr::from_pattern(row_ptr, cols);
        let diag = (0..n)
            .map(|i| m.slot(i, i).expect("coarse pattern holds the diagonal"))
            .collect();
        let mirror = (0..n)
            .flat_map(|i| (m.row_ptr[i]..m.row_ptr[i + 1]).map(move |k| (i, k)))
            .map(|(i, k)| {
                m.slot(m.cols[k], i)
                    .expect("Galerkin patterns are symmetric")
            })
            .collect();
        CoarseOp { m, diag, mirror }
    }

    pub fn memory_bytes(&self) -> usize {
        self.m.memory_bytes() + (self.diag.len() + self.mirror.len()) * size_of::<usize>()
    }
}

impl Operator<6> for CoarseOp {
    fn n(&self) -> usize {
        self.m.nrows()
    }

    fn pattern(&self) -> (&[usize], &[usize]) {
        (&self.m.row_ptr, &self.m.cols)
    }

    fn pattern_block(&self, k: usize) -> SMatrix<f64, 6, 6> {
        self.m.vals[k]
    }

    #[inline]
    fn for_each_in_row(&self, i: usize, mut f: impl FnMut(usize, usize, &SMatrix<f64, 6, 6>)) {
        for k in self.m.row_ptr[i]..self.m.row_ptr[i + 1] {
            f(self.m.cols[k], k, &self.m.vals[k]);
        }
    }

    #[inline]
    fn filter_block<const C: usize>(&self, _i: usize, m: SMatrix<f64, 6, C>) -> SMatrix<f64, 6, C> {
        m
    }

    #[inline]
    fn filter_vec(&self, _i: usize, v: SVector<f64, 6>) -> SVector<f64, 6> {
        v
    }

    #[inline]
    fn mul_row(&self, i: usize, x: &[SVector<f64, 6>]) -> SVector<f64, 6> {
        let mut acc = SVector::<f64, 6>::zeros();
        for k in self.m.row_ptr[i]..self.m.row_ptr[i + 1] {
            acc += self.m.vals[k] * x[self.m.cols[k]];
        }
        acc
    }

    fn filtered_diagonal(&self, i: usize) -> SMatrix<f64, 6, 6> {
        self.m.vals[self.diag[i]]
    }
}
