//! Block compressed sparse rows with compile-time block shapes, for the multigrid hierarchy:
//! prolongators (`B x D` blocks), their products with the operator, and the coarse operators
//! (`D x D` blocks, diagonal stored in the row like any other block).

use nalgebra::SMatrix;

/// Runs of whole rows' values with the first row of each run (see [`Bsr::row_chunks_mut`]).
pub(crate) type RowRuns<'a, const R: usize, const C: usize> =
    Vec<(usize, &'a mut [SMatrix<f64, R, C>])>;

/// Block CSR matrix with `R x C` blocks; columns sorted ascending within each row.
#[derive(Clone, Debug)]
pub(crate) struct Bsr<const R: usize, const C: usize> {
    pub row_ptr: Vec<usize>,
    pub cols: Vec<usize>,
    pub vals: Vec<SMatrix<f64, R, C>>,
}

impl<const R: usize, const C: usize> Bsr<R, C> {
    /// A matrix with the given pattern (rows of sorted, distinct columns) and zero values.
    pub fn from_pattern(row_ptr: Vec<usize>, cols: Vec<usize>) -> Self {
        let nnz = cols.len();
        Bsr {
            row_ptr,
            cols,
            vals: vec![SMatrix::zeros(); nnz],
        }
    }

    /// Number of block rows.
    pub fn nrows(&self) -> usize {
        self.row_ptr.len() - 1
    }

    /// Slot of block `(i, j)` in `cols`/`vals`, if present.
    #[inline]
    pub fn slot(&self, i: usize, j: usize) -> Option<usize> {
        let (lo, hi) = (self.row_ptr[i], self.row_ptr[i + 1]);
        self.cols[lo..hi].binary_search(&j).ok().map(|k| lo + k)
    }

    /// Bytes held by the pattern and the values.
    pub fn memory_bytes(&self) -> usize {
        (self.row_ptr.len() + self.cols.len()) * size_of::<usize>()
            + self.vals.len() * size_of::<SMatrix<f64, R, C>>()
    }

    /// Splits the values into mutable runs of whole rows, `rows_per_chunk` rows per run, for
    /// row-parallel numeric passes: `(first row, values of rows first..first+len)`. The split
    /// depends only on the pattern, never on the thread count.
    pub fn row_chunks_mut(
        &mut self,
        rows_per_chunk: usize,
    ) -> (&[usize], &[usize], RowRuns<'_, R, C>) {
        let n = self.nrows();
        let mut out = Vec::with_capacity(n.div_ceil(rows_per_chunk.max(1)));
        let mut rest: &mut [SMatrix<f64, R, C>] = &mut self.vals;
        let mut first = 0;
        while first < n {
            let last = (first + rows_per_chunk).min(n);
            let len = self.row_ptr[last] - self.row_ptr[first];
            let (head, tail) = rest.split_at_mut(len);
            out.push((first, head));
            rest = tail;
            first = last;
        }
        (&self.row_ptr, &self.cols, out)
    }
}

/// Column-wise access to a [`Bsr`] pattern: for column `j`, the rows holding a block in that
/// column (ascending) and the slot of each block. Lets `P^T x` and `P^T M` run in parallel
/// over coarse rows without storing the transposed values.
#[derive(Clone, Debug, Default)]
pub(crate) struct Transpose {
    pub ptr: Vec<usize>,
    pub rows: Vec<usize>,
    pub slots: Vec<usize>,
}

impl Transpose {
    /// Builds the column lists of a pattern with `ncols` columns.
    pub fn of(ncols: usize, row_ptr: &[usize], cols: &[usize]) -> Self {
        let mut ptr = vec![0usize; ncols + 1];
        for &j in cols {
            ptr[j + 1] += 1;
        }
        for j in 0..ncols {
            ptr[j + 1] += ptr[j];
        }
        let mut fill = ptr.clone();
        let mut rows = vec![0usize; cols.len()];
        let mut slots = vec![0usize; cols.len()];
        // Rows are visited in ascending order, so each column list is sorted by row.
        for i in 0..row_ptr.len() - 1 {
            for (k, &j) in cols
                .iter()
                .enumerate()
                .take(row_ptr[i + 1])
                .skip(row_ptr[i])
            {
                rows[fill[j]] = i;
                slots[fill[j]] = k;
                fill[j] += 1;
            }
        }
        Transpose { ptr, rows, slots }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        (self.ptr.len() + self.rows.len() + self.slots.len()) * size_of::<usize>()
    }
}

/// Sorted union of column sets, row by row: row `i` of the result holds every column of
/// `inner` rows `k` for `k` in `outer` row `i` (plus row `i` itself when `with_self`).
/// Serial, with one marker array of length `ncols`.
pub(crate) fn product_pattern(
    outer_ptr: &[usize],
    outer_cols: &[usize],
    with_self: bool,
    inner_ptr: &[usize],
    inner_cols: &[usize],
    ncols: usize,
) -> (Vec<usize>, Vec<usize>) {
    let n = outer_ptr.len() - 1;
    let mut mark = vec![usize::MAX; ncols];
    let mut row_ptr = Vec::with_capacity(n + 1);
    let mut cols = Vec::new();
    row_ptr.push(0);
    for i in 0..n {
        let start = cols.len();
        let selfs = if with_self { Some(i) } else { None };
        for k in selfs
            .into_iter()
            .chain(outer_cols[outer_ptr[i]..outer_ptr[i + 1]].iter().copied())
        {
            for &j in &inner_cols[inner_ptr[k]..inner_ptr[k + 1]] {
                if mark[j] != i {
                    mark[j] = i;
                    cols.push(j);
                }
            }
        }
        cols[start..].sort_unstable();
        row_ptr.push(cols.len());
    }
    (row_ptr, cols)
}
