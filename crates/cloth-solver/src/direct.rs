//! Direct reference solve of the pre-filtered system with faer's sparse Cholesky.

use faer::Mat;
use nalgebra::{Matrix3, Vector3};

use crate::{BlockMatrix, Constraint, SolverError, SparseLlt, System};

/// Reusable direct solver for `(S A S + (I - S)) y = S (b - A z)`, `dv = z + S y`, the
/// reference for [`crate::solve_mpcg`].
///
/// The scalar lower-triangular pattern of the projected matrix (every entry of every stored
/// block, zeros included, so it does not depend on the constraints) and its symbolic
/// Cholesky analysis (AMD ordering) are computed once in [`DirectSolver::new`]; each
/// [`DirectSolver::solve`] refills the values, refactorises numerically and solves.
/// Everything runs sequentially (`faer::Par::Seq`): deterministic for any thread count.
#[derive(Clone, Debug)]
pub struct DirectSolver {
    n: usize,
    row_ptr: Vec<usize>,
    cols: Vec<usize>,
    values: Vec<f64>,
    llt: SparseLlt,
    az: Vec<Vector3<f64>>,
    rhs: Mat<f64>,
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
        let values = vec![0.0; row_idx.len()];
        let llt = SparseLlt::new(dim, col_ptr, row_idx)?;
        Ok(DirectSolver {
            n,
            row_ptr: row_ptr.to_vec(),
            cols: cols.to_vec(),
            values,
            llt,
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
        System::new(a, b, z, constraints).validate(dv)?;
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
        // Refill values of S A S + (I - S) in the CSC order built by `new`.
        for j in 0..n {
            let sj = constraints[j].matrix();
            let mjj = sj * a.diagonal_block(j) * sj + (Matrix3::identity() - sj);
            let (lo, hi) = (row_ptr[j], row_ptr[j + 1]);
            let first = lo + cols[lo..hi].partition_point(|&i| i < j);
            for c in 0..3 {
                let mut p = self.llt.col_ptr()[3 * j + c];
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
        a.mul_vec(z, &mut self.az);
        for i in 0..n {
            let r = constraints[i].filter(&(b[i] - self.az[i]));
            for k in 0..3 {
                self.rhs[(3 * i + k, 0)] = r[k];
            }
        }
        self.llt.factor_solve(&self.values, self.rhs.as_mut())?;
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
    System::new(a, b, z, constraints).validate(dv)?;
    DirectSolver::new(a)?.solve(dv, a, b, z, constraints)
}
