//! A sparse Cholesky factorisation of a fixed pattern, refactored with new values: the one
//! place that drives faer's symbolic and numeric LLT (the direct reference solve and the
//! explicit integrator's global strain projection both use it).

use std::sync::Arc;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::sparse::linalg::cholesky::{SymbolicCholesky, factorize_symbolic_cholesky};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};

use crate::SolverError;

fn fact_err(e: impl std::fmt::Debug) -> SolverError {
    SolverError::Factorization {
        detail: format!("{e:?}"),
    }
}

/// Sparse Cholesky `A = L L^T` of a symmetric matrix given by its lower triangle in compressed
/// columns (`col_ptr`, `row_idx`; row indices ascending in each column, the diagonal
/// included). The pattern is analysed once (AMD ordering) in [`SparseLlt::new`]; each
/// [`SparseLlt::factor_solve`] factors new values of that pattern and solves in place.
/// Sequential (`faer::Par::Seq`): the same bits for any thread count. Cloning shares the
/// symbolic analysis.
pub struct SparseLlt {
    dim: usize,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    symbolic: Arc<SymbolicCholesky<usize>>,
    l_values: Vec<f64>,
    factor_req: StackReq,
    solve_req: StackReq,
    factor_mem: MemBuffer,
    solve_mem: MemBuffer,
}

impl Clone for SparseLlt {
    fn clone(&self) -> Self {
        SparseLlt {
            dim: self.dim,
            col_ptr: self.col_ptr.clone(),
            row_idx: self.row_idx.clone(),
            symbolic: Arc::clone(&self.symbolic),
            l_values: self.l_values.clone(),
            factor_req: self.factor_req,
            solve_req: self.solve_req,
            factor_mem: MemBuffer::new(self.factor_req),
            solve_mem: MemBuffer::new(self.solve_req),
        }
    }
}

impl std::fmt::Debug for SparseLlt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseLlt")
            .field("dim", &self.dim)
            .field("nnz_lower", &self.row_idx.len())
            .field("nnz_factor", &self.l_values.len())
            .finish_non_exhaustive()
    }
}

impl SparseLlt {
    /// Analyses the `dim x dim` lower-triangular pattern (`col_ptr` has `dim + 1` entries).
    ///
    /// # Errors
    /// [`SolverError::Factorization`] if the pattern is malformed or faer's analysis fails
    /// (out of memory).
    pub fn new(dim: usize, col_ptr: Vec<usize>, row_idx: Vec<usize>) -> Result<Self, SolverError> {
        let pattern = SymbolicSparseColMatRef::new_checked(dim, dim, &col_ptr, None, &row_idx);
        let symbolic = factorize_symbolic_cholesky(
            pattern,
            Side::Lower,
            Default::default(),
            Default::default(),
        )
        .map_err(fact_err)?;
        let factor_req =
            symbolic.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default());
        let solve_req = symbolic.solve_in_place_scratch::<f64>(1, Par::Seq);
        Ok(SparseLlt {
            dim,
            l_values: vec![0.0; symbolic.len_val()],
            symbolic: Arc::new(symbolic),
            factor_mem: MemBuffer::try_new(factor_req).map_err(fact_err)?,
            solve_mem: MemBuffer::try_new(solve_req).map_err(fact_err)?,
            factor_req,
            solve_req,
            col_ptr,
            row_idx,
        })
    }

    /// The column pointers of the pattern.
    pub fn col_ptr(&self) -> &[usize] {
        &self.col_ptr
    }

    /// The row indices of the pattern; `values` of [`SparseLlt::factor_solve`] follow them.
    pub fn row_idx(&self) -> &[usize] {
        &self.row_idx
    }

    /// Factors the matrix with `values` (one per entry of [`SparseLlt::row_idx`]) and solves
    /// `A x = rhs` in place (`rhs`: `dim` rows, one column).
    ///
    /// # Errors
    /// [`SolverError::Factorization`] if the matrix is not numerically positive definite or
    /// `values` does not match the pattern; `rhs` is then unchanged.
    pub fn factor_solve(
        &mut self,
        values: &[f64],
        rhs: MatMut<'_, f64>,
    ) -> Result<(), SolverError> {
        if values.len() != self.row_idx.len() || rhs.nrows() != self.dim || rhs.ncols() != 1 {
            return Err(fact_err(format!(
                "{} values and a {}x{} right-hand side for a {}-entry pattern of dimension {}",
                values.len(),
                rhs.nrows(),
                rhs.ncols(),
                self.row_idx.len(),
                self.dim
            )));
        }
        let mat = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(
                self.dim,
                self.dim,
                &self.col_ptr,
                None,
                &self.row_idx,
            ),
            values,
        );
        let llt = self
            .symbolic
            .factorize_numeric_llt::<f64>(
                &mut self.l_values,
                mat,
                Side::Lower,
                Default::default(),
                Par::Seq,
                MemStack::new(&mut self.factor_mem),
                Default::default(),
            )
            .map_err(fact_err)?;
        llt.solve_in_place_with_conj(Conj::No, rhs, Par::Seq, MemStack::new(&mut self.solve_mem));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    #[test]
    fn solves_a_small_spd_system_and_refuses_an_indefinite_one() {
        // A = [[4, 1, 0], [1, 3, 1], [0, 1, 2]], lower triangle by columns.
        let mut llt = SparseLlt::new(3, vec![0, 2, 4, 5], vec![0, 1, 1, 2, 2]).unwrap();
        let values = [4.0, 1.0, 3.0, 1.0, 2.0];
        let x = [1.0, -2.0, 0.5];
        let b = [
            4.0 * x[0] + x[1],
            x[0] + 3.0 * x[1] + x[2],
            x[1] + 2.0 * x[2],
        ];
        let mut rhs = Mat::from_fn(3, 1, |i, _| b[i]);
        llt.factor_solve(&values, rhs.as_mut()).unwrap();
        for i in 0..3 {
            assert!((rhs[(i, 0)] - x[i]).abs() < 1e-12, "{i}: {}", rhs[(i, 0)]);
        }
        // Refactored with other values of the same pattern: not positive definite.
        let mut rhs = Mat::from_fn(3, 1, |i, _| b[i]);
        assert!(
            llt.factor_solve(&[1.0, 2.0, 1.0, 0.0, 1.0], rhs.as_mut())
                .is_err()
        );
        assert!(llt.factor_solve(&values[..4], rhs.as_mut()).is_err());
    }
}
