//! Direct reference solve of the pre-filtered system with faer's sparse Cholesky.

use std::sync::Arc;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::sparse::linalg::cholesky::{SymbolicCholesky, factorize_symbolic_cholesky};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, Mat, Par, Side};
use nalgebra::{Matrix3, Vector3};

use crate::pcg::validate_inputs;
use crate::{BlockMatrix, Constraint, SolverError};

fn fact_err(e: impl std::fmt::Debug) -> SolverError {
    SolverError::Factorization {
        detail: format!("{e:?}"),
    }
}

/// Reusable direct solver for `(S A S + (I - S)) y = S (b - A z)`, `dv = z + S y`, the
/// reference for [`crate::solve_mpcg`].
///
/// The scalar lower-triangular pattern of the projected matrix (every entry of every stored
/// block, zeros included, so it does not depend on the constraints) and its symbolic
/// Cholesky analysis (AMD ordering) are computed once in [`DirectSolver::new`]; each
/// [`DirectSolver::solve`] refills the values, refactorises numerically and solves.
/// Everything runs sequentially (`faer::Par::Seq`): deterministic for any thread count.
pub struct DirectSolver {
    n: usize,
    row_ptr: Vec<usize>,
    cols: Vec<usize>,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    values: Vec<f64>,
    symbolic: Arc<SymbolicCholesky<usize>>,
    l_values: Vec<f64>,
    factor_req: StackReq,
    solve_req: StackReq,
    factor_mem: MemBuffer,
    solve_mem: MemBuffer,
    az: Vec<Vector3<f64>>,
    rhs: Mat<f64>,
}

impl Clone for DirectSolver {
    fn clone(&self) -> Self {
        DirectSolver {
            n: self.n,
            row_ptr: self.row_ptr.clone(),
            cols: self.cols.clone(),
            col_ptr: self.col_ptr.clone(),
            row_idx: self.row_idx.clone(),
            values: self.values.clone(),
            symbolic: Arc::clone(&self.symbolic),
            l_values: self.l_values.clone(),
            factor_req: self.factor_req,
            solve_req: self.solve_req,
            factor_mem: MemBuffer::new(self.factor_req),
            solve_mem: MemBuffer::new(self.solve_req),
            az: self.az.clone(),
            rhs: self.rhs.clone(),
        }
    }
}

impl std::fmt::Debug for DirectSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectSolver")
            .field("n", &self.n)
            .field("nnz_lower", &self.row_idx.len())
            .field("nnz_factor", &self.l_values.len())
            .finish_non_exhaustive()
    }
}

impl DirectSolver {
    /// Analyses the pattern of `a` (symbolic Cholesky). The solver can then be used with any
    /// matrix of the same pattern (same `BlockMatrix::new` arguments).
    ///
    /// # Errors
    /// [`SolverError::Factorization`] if faer's symbolic analysis fails (out of memory).
    pub fn new(a: &BlockMatrix) -> Result<Self, SolverError> {
        let n = a.n();
        let dim = 3 * n;
        let (row_ptr, cols) = a.pattern();
        // Lower-triangular CSC: column 3j+c holds the diagonal-block rows 3j+c..3j+2, then
        // rows 3i..3i+2 for every pattern neighbour i > j in ascending order.
        let mut col_ptr = Vec::with_capacity(dim + 1);
        let mut row_idx = Vec::new();
        col_ptr.push(0);
        for j in 0..n {
            let upper = &cols[row_ptr[j]..row_ptr[j + 1]];
            let first = upper.partition_point(|&i| i < j);
            for c in 0..3 {
                row_idx.extend((c..3).map(|r| 3 * j + r));
                for &i in &upper[first..] {
                    row_idx.extend((0..3).map(|r| 3 * i + r));
                }
                col_ptr.push(row_idx.len());
            }
        }
        let symbolic = SymbolicSparseColMatRef::new_checked(dim, dim, &col_ptr, None, &row_idx);
        let symbolic = factorize_symbolic_cholesky(
            symbolic,
            Side::Lower,
            Default::default(),
            Default::default(),
        )
        .map_err(fact_err)?;
        let factor_req =
            symbolic.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default());
        let solve_req = symbolic.solve_in_place_scratch::<f64>(1, Par::Seq);
        Ok(DirectSolver {
            n,
            row_ptr: row_ptr.to_vec(),
            cols: cols.to_vec(),
            values: vec![0.0; row_idx.len()],
            l_values: vec![0.0; symbolic.len_val()],
            col_ptr,
            row_idx,
            symbolic: Arc::new(symbolic),
            factor_mem: MemBuffer::try_new(factor_req).map_err(fact_err)?,
            solve_mem: MemBuffer::try_new(solve_req).map_err(fact_err)?,
            factor_req,
            solve_req,
            az: vec![Vector3::zeros(); n],
            rhs: Mat::zeros(dim, 1),
        })
    }

    /// Solves the projected system for `dv` (see the type docs). Units as in
    /// [`crate::solve_mpcg`].
    ///
    /// # Errors
    /// The input errors of [`crate::solve_mpcg`] (dimension mismatch, non-finite input,
    /// invalid constraint); [`SolverError::InvalidParameter`] if `a` does not have the pattern
    /// this solver was built for; [`SolverError::Factorization`] if `S A S + (I - S)` is not
    /// numerically positive definite. On error `dv` is left unchanged.
    pub fn solve(
        &mut self,
        dv: &mut [Vector3<f64>],
        a: &BlockMatrix,
        b: &[Vector3<f64>],
        z: &[Vector3<f64>],
        constraints: &[Constraint],
    ) -> Result<(), SolverError> {
        validate_inputs(dv, a, b, z, constraints)?;
        let (row_ptr, cols) = a.pattern();
        if row_ptr != self.row_ptr.as_slice() || cols != self.cols.as_slice() {
            return Err(SolverError::InvalidParameter {
                name: "a",
                reason: "matrix pattern differs from the one DirectSolver::new analysed",
            });
        }
        let n = self.n;
        if n == 0 {
            return Ok(());
        }
        let dim = 3 * n;
        // Refill values of S A S + (I - S) in the CSC order built by `new`.
        for j in 0..n {
            let sj = constraints[j].matrix();
            let mjj = sj * a.diagonal_block(j) * sj + (Matrix3::identity() - sj);
            let (lo, hi) = (row_ptr[j], row_ptr[j + 1]);
            let first = lo + cols[lo..hi].partition_point(|&i| i < j);
            for c in 0..3 {
                let mut p = self.col_ptr[3 * j + c];
                for r in c..3 {
                    self.values[p] = mjj[(r, c)];
                    p += 1;
                }
                for (k, &i) in cols.iter().enumerate().take(hi).skip(first) {
                    // Block (i, j) = (block (j, i))^T.
                    let aij = a.off_block(k).transpose();
                    let si = constraints[i].matrix();
                    let col = si * aij * sj.column(c);
                    for r in 0..3 {
                        self.values[p] = col[r];
                        p += 1;
                    }
                }
            }
        }
        let mat = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(dim, dim, &self.col_ptr, None, &self.row_idx),
            &self.values,
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
        a.mul_vec(z, &mut self.az);
        for i in 0..n {
            let r = constraints[i].filter(&(b[i] - self.az[i]));
            for k in 0..3 {
                self.rhs[(3 * i + k, 0)] = r[k];
            }
        }
        llt.solve_in_place_with_conj(
            Conj::No,
            self.rhs.as_mut(),
            Par::Seq,
            MemStack::new(&mut self.solve_mem),
        );
        for i in 0..n {
            let y = Vector3::new(
                self.rhs[(3 * i, 0)],
                self.rhs[(3 * i + 1, 0)],
                self.rhs[(3 * i + 2, 0)],
            );
            let d = z[i] + constraints[i].filter(&y);
            if !d.iter().all(|v| v.is_finite()) {
                return Err(SolverError::NonFinite {
                    what: "direct solution",
                    index: i,
                });
            }
            // Stash in az (no longer needed) so dv stays untouched on error.
            self.az[i] = d;
        }
        dv.copy_from_slice(&self.az);
        Ok(())
    }
}

/// One-shot direct reference for [`crate::solve_mpcg`]: factorises
/// `(S A S + (I - S)) y = S (b - A z)` with faer's sparse Cholesky (AMD ordering,
/// sequential, deterministic) and returns `dv = z + S y`.
///
/// Redoes the symbolic analysis on every call; use [`DirectSolver`] to analyse once per
/// pattern. Units as in [`crate::solve_mpcg`].
///
/// # Errors
/// As [`DirectSolver::solve`]. On error `dv` is left unchanged.
pub fn solve_direct(
    dv: &mut [Vector3<f64>],
    a: &BlockMatrix,
    b: &[Vector3<f64>],
    z: &[Vector3<f64>],
    constraints: &[Constraint],
) -> Result<(), SolverError> {
    validate_inputs(dv, a, b, z, constraints)?;
    DirectSolver::new(a)?.solve(dv, a, b, z, constraints)
}
