//! 3x3-block sparse linear algebra for implicit cloth: a symmetric block matrix with a fixed
//! pattern, per-particle constraint filters, the modified preconditioned conjugate gradient of
//! Baraff & Witkin (1998, section 5.3) and a direct reference solve.
//!
//! This crate knows nothing of meshes or cloth: block rows are "particles", blocks are 3x3.
//! (It depends on `cloth-mesh` only for the workspace's foundation types: the parallelism
//! argument [`Par`] and the one re-exported [`nalgebra`].)
//! The matrix is typically `A = M - h df/dv - h^2 df/dx` (kg), `b` an impulse (N*s) and the
//! unknown a velocity change `dv` (m/s), but any SPD block system works.
//!
//! * [`BlockMatrix`]: pattern built once from particle pairs, values refilled every step,
//!   serially with [`BlockMatrix::add_block`] or in parallel through an [`AssemblyPlan`].
//! * [`Constraint`]: the filter `S_i` (free, plane, line, fixed) of Knowl 7.
//! * [`solve_mpcg`]: modified PCG, with the Jacobi preconditioner applied as a division and
//!   the Ascher & Boxerman (2003) stopping reference (see the function docs).
//! * [`solve_direct`] / [`DirectSolver`]: sparse Cholesky on the pre-filtered system, the
//!   reference (the solver struct analyses the pattern once).
//! * [`constraint_forces`]: `e = A dv - b` (Knowl 8).
//!
//! All parallel work (rayon) uses fixed chunks and in-order reductions: results are
//! bit-identical for any thread count.
//!
//! # Example
//! ```
//! use cloth_solver::{
//!     BlockMatrix, Constraint, Matrix3, Par, PcgParams, PcgWorkspace, Vector3, solve_mpcg,
//! };
//! // Two particles of 1 kg joined by a spring-like coupling of stiffness 10 (times h^2).
//! let mut a = BlockMatrix::new(2, &[(0, 1)])?;
//! let k = Matrix3::identity() * 10.0;
//! a.add_diagonal(0, &(Matrix3::identity() + k));
//! a.add_diagonal(1, &(Matrix3::identity() + k));
//! a.add_block(0, 1, &(-k))?;
//! // Particle 0 is pinned and must move by (0, 0, 0.1); particle 1 is pulled by gravity.
//! let constraints = [Constraint::Fixed, Constraint::Free];
//! let z = [Vector3::new(0.0, 0.0, 0.1), Vector3::zeros()];
//! let b = [Vector3::zeros(), Vector3::new(0.0, 0.0, -0.1)];
//! let mut dv = [Vector3::zeros(); 2];
//! let params = PcgParams { tolerance: 1e-10, ..Default::default() };
//! let info = solve_mpcg(&mut dv, &a, &b, &z, &constraints, &params, Par::Seq, &mut PcgWorkspace::new())?;
//! assert!(info.converged);
//! assert_eq!(dv[0], z[0]); // the pinned particle moves exactly as prescribed
//! // Free particle: 11 dv1 - 10 * 0.1 = -0.1  =>  dv1 = 0.9 / 11.
//! assert!((dv[1].z - 0.9 / 11.0).abs() < 1e-9);
//! # Ok::<(), cloth_solver::SolverError>(())
//! ```

mod constraint;
mod direct;
mod error;
mod matrix;
mod multigrid;
mod par;
mod pcg;

#[cfg(test)]
mod pitfall_tests;

pub use cloth_mesh::{Par, nalgebra};
pub use constraint::Constraint;
pub use direct::{DirectSolver, solve_direct};
pub use error::SolverError;
pub use matrix::{AssemblyPlan, BlockMatrix};
pub use multigrid::{
    Multigrid, MultigridParams, MultigridSetupInfo, Reuse, Smoother, solve_mpcg_multigrid,
};
pub use nalgebra::{Matrix3, Vector3};
pub use pcg::{PcgInfo, PcgParams, PcgWorkspace, Preconditioner, constraint_forces, solve_mpcg};
