//! The Jacobi and block-Jacobi preconditioners of the modified PCG, built per particle from
//! the filtered diagonal blocks.

use nalgebra::Matrix3;
use rayon::prelude::*;

use super::params::{PrecondForm, Preconditioner};
use crate::par::ROW_CHUNK;
use crate::{BlockMatrix, Constraint, SolverError};

/// Builds `pinv_i` such that the preconditioner applies `s_i = S_i pinv_i r_i`.
///
/// Parallel over fixed chunks; each chunk reports its first failing particle into `errs`
/// (reused, no allocation), and the lowest failing index is returned: deterministic.
pub(super) fn build_preconditioner(
    a: &BlockMatrix,
    constraints: &[Constraint],
    kind: Preconditioner,
    form: PrecondForm,
    pinv: &mut [Matrix3<f64>],
    errs: &mut Vec<Option<(usize, f64)>>,
) -> Result<(), SolverError> {
    pinv.par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .map(|(ci, chunk)| {
            for (o, out) in chunk.iter_mut().enumerate() {
                let i = ci * ROW_CHUNK + o;
                let con = &constraints[i];
                if con.ndof() == 0 {
                    *out = Matrix3::identity();
                    continue;
                }
                let aii = a.diagonal_block(i);
                match kind {
                    Preconditioner::Diagonal => {
                        let mut m = Matrix3::zeros();
                        for k in 0..3 {
                            let d = aii[(k, k)];
                            if d <= 0.0 || !d.is_finite() {
                                return Some((i, d));
                            }
                            m[(k, k)] = match form {
                                PrecondForm::Divide => 1.0 / d,
                                #[cfg(test)]
                                PrecondForm::PaperMultiply => d,
                            };
                        }
                        *out = m;
                    }
                    Preconditioner::BlockJacobi => {
                        let s = con.matrix();
                        let mut m = s * aii * s + (Matrix3::identity() - s);
                        m = (m + m.transpose()) * 0.5;
                        match m.cholesky() {
                            Some(chol) => *out = chol.inverse(),
                            None => return Some((i, m.diagonal().min())),
                        }
                    }
                }
            }
            None
        })
        .collect_into_vec(errs);
    match errs.iter().flatten().next() {
        Some(&(index, value)) => Err(SolverError::DiagonalNotPositive { index, value }),
        None => Ok(()),
    }
}
