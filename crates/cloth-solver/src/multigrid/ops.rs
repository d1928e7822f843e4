//! The operators the multigrid levels act on: the pre-filtered fine matrix
//! `A_f = S A S + (I - S)` (a view of the caller's [`BlockMatrix`] and constraints, never
//! copied) and the coarse Galerkin matrices (`D x D` blocks, `D` near-null-space vectors per
//! aggregate).

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
    /// The unfiltered diagonal block `A_ii`.
    fn diagonal(&self, i: usize) -> SMatrix<f64, B, B>;
}

/// `A_f` of the caller's matrix and constraints (the pre-filtered operator of Tamstorf, Jones
/// & McCormick 2015).
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

    fn diagonal(&self, i: usize) -> SMatrix<f64, 3, 3> {
        self.a.diagonal_block(i)
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

/// A coarse Galerkin operator `P^T A_f P` with `D x D` blocks (`D` near-null-space vectors
/// per aggregate), stored as its upper triangle
/// (block rows `i` holding columns `j >= i`, diagonal first): half the memory and memory
/// traffic of full rows. The full symmetric pattern is kept as indices, each slot naming the
/// stored block and whether it is used transposed, so products stay row-parallel gathers.
#[derive(Clone, Debug)]
pub(crate) struct CoarseOp<const D: usize> {
    /// Upper triangle; the first slot of row `i` is the diagonal block.
    pub upper: Bsr<D, D>,
    /// Full pattern (both triangles, diagonal included).
    full_ptr: Vec<usize>,
    full_cols: Vec<usize>,
    /// Per full slot: `(upper slot << 1) | transposed`.
    full_map: Vec<usize>,
}

impl<const D: usize> CoarseOp<D> {
    /// Zero values on a symmetric pattern whose every row holds its diagonal.
    pub fn from_pattern(row_ptr: Vec<usize>, cols: Vec<usize>) -> Self {
        let n = row_ptr.len() - 1;
        let mut u_ptr = Vec::with_capacity(n + 1);
        let mut u_cols = Vec::new();
        u_ptr.push(0);
        for i in 0..n {
            let row = &cols[row_ptr[i]..row_ptr[i + 1]];
            let first = row.partition_point(|&j| j < i);
            debug_assert_eq!(
                row.get(first),
                Some(&i),
                "coarse pattern holds the diagonal"
            );
            u_cols.extend_from_slice(&row[first..]);
            u_ptr.push(u_cols.len());
        }
        let upper = Bsr::from_pattern(u_ptr, u_cols);
        let full_map = (0..n)
            .flat_map(|i| {
                cols[row_ptr[i]..row_ptr[i + 1]]
                    .iter()
                    .map(move |&j| (i, j))
            })
            .map(|(i, j)| {
                if j >= i {
                    upper.slot(i, j).expect("upper block") << 1
                } else {
                    (upper.slot(j, i).expect("symmetric pattern") << 1) | 1
                }
            })
            .collect();
        CoarseOp {
            upper,
            full_ptr: row_ptr,
            full_cols: cols,
            full_map,
        }
    }

    /// Slot of diagonal block `i` in `upper`.
    #[inline]
    pub fn diag_slot(&self, i: usize) -> usize {
        self.upper.row_ptr[i]
    }

    /// Number of blocks of the full (symmetric) matrix.
    pub fn full_blocks(&self) -> usize {
        self.full_cols.len()
    }

    pub fn memory_bytes(&self) -> usize {
        self.upper.memory_bytes()
            + (self.full_ptr.len() + self.full_cols.len() + self.full_map.len())
                * size_of::<usize>()
    }

    #[inline]
    fn full_block(&self, k: usize) -> SMatrix<f64, D, D> {
        let code = self.full_map[k];
        let b = &self.upper.vals[code >> 1];
        if code & 1 == 0 { *b } else { b.transpose() }
    }
}

impl<const D: usize> Operator<D> for CoarseOp<D> {
    fn n(&self) -> usize {
        self.upper.nrows()
    }

    fn pattern(&self) -> (&[usize], &[usize]) {
        (&self.full_ptr, &self.full_cols)
    }

    fn pattern_block(&self, k: usize) -> SMatrix<f64, D, D> {
        self.full_block(k)
    }

    #[inline]
    fn for_each_in_row(&self, i: usize, mut f: impl FnMut(usize, usize, &SMatrix<f64, D, D>)) {
        for k in self.full_ptr[i]..self.full_ptr[i + 1] {
            f(self.full_cols[k], k, &self.full_block(k));
        }
    }

    #[inline]
    fn filter_block<const C: usize>(&self, _i: usize, m: SMatrix<f64, D, C>) -> SMatrix<f64, D, C> {
        m
    }

    #[inline]
    fn filter_vec(&self, _i: usize, v: SVector<f64, D>) -> SVector<f64, D> {
        v
    }

    #[inline]
    fn mul_row(&self, i: usize, x: &[SVector<f64, D>]) -> SVector<f64, D> {
        let mut acc = SVector::<f64, D>::zeros();
        for k in self.full_ptr[i]..self.full_ptr[i + 1] {
            let code = self.full_map[k];
            let b = &self.upper.vals[code >> 1];
            let xj = &x[self.full_cols[k]];
            if code & 1 == 0 {
                acc += b * xj;
            } else {
                acc += b.tr_mul(xj);
            }
        }
        acc
    }

    fn diagonal(&self, i: usize) -> SMatrix<f64, D, D> {
        self.upper.vals[self.diag_slot(i)]
    }

    fn filtered_diagonal(&self, i: usize) -> SMatrix<f64, D, D> {
        self.upper.vals[self.diag_slot(i)]
    }
}
