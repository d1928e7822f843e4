//! 3x3-block sparse linear algebra for implicit cloth: a symmetric block matrix with a fixed
//! pattern, per-particle constraint filters, the modified preconditioned conjugate gradient of
//! Baraff & Witkin (1998, section 5.3) with diagonal, block-diagonal or smoothed-aggregation
//! multigrid preconditioning, and a direct reference solve.
//!
//! This crate knows nothing of meshes or cloth: block rows are "particles", blocks are 3x3.
//! (It depends on `cloth-mesh` only for the workspace's foundation types: the parallelism
//! argument [`Par`] and the one re-exported [`nalgebra`].)
//! The matrix is typically `A = M - h df/dv - h^2 df/dx` (kg), `b` an impulse (N*s) and the
//! unknown a velocity change `dv` (m/s), but any SPD block system works.
//!
//! * [`BlockMatrix`]: pattern built once from particle pairs, values refilled every step,
//!   serially with [`BlockMatrix::add_block`] or in parallel through an [`AssemblyPlan`].
//! * [`Constraint`]: the filter `S_i` (free, plane, line, fixed) of the paper's §5.1.
//! * [`System`]: one constrained system `A dv = b`, `dv_i = z_i` on the constrained
//!   subspaces, as the PCG solvers take it.
//! * [`solve_mpcg`]: modified PCG, with the Jacobi preconditioner applied as a division and
//!   the Ascher & Boxerman (2003) stopping reference (see the function docs).
//! * [`solve_mpcg_multigrid`] with a [`Multigrid`] hierarchy: the same modified PCG,
//!   preconditioned by a smoothed-aggregation algebraic multigrid V-cycle (Tamstorf, Jones &
//!   McCormick 2015), so that the iteration count no longer grows with the resolution
//!   (block-Jacobi: ~n^0.4 on cloth). [`Multigrid::new`] analyses a matrix pattern once
//!   (symbolic), every solve refreshes the values (numeric); see [`MultigridParams`].
//! * [`solve_direct`] / [`DirectSolver`]: sparse Cholesky on the pre-filtered system, the
//!   reference (the solver struct analyses the pattern once).
//! * [`constraint_forces`]: `e = A dv - b` (the paper's §5.4 and §6.1).
//!
//! All parallel work (rayon) uses fixed chunks and in-order reductions: results are
//! bit-identical for any thread count.
//!
//! # Constraints
//! Every solver here solves the *pre-filtered* system of Tamstorf, Jones & McCormick (2015),
//! `(S A S + I - S) y = S (b - A z)`, `dv = z + S y`, which is Baraff & Witkin's modified PCG
//! written as an ordinary PCG on an SPD operator. The iteration never leaves the range of `S`,
//! so the constrained components of `dv` equal those of `z` after *every* iteration, exactly
//! for fixed and free particles and to rounding for planes and lines (tested for each
//! preconditioner).
//!
//! The preconditioners are built from the same filtered operator, not from `A`:
//! * Jacobi and block-Jacobi invert `S_i A_ii S_i + (I - S_i)` per particle;
//! * the multigrid builds its whole hierarchy from it: the rigid-body candidates are filtered
//!   by `S_i`, the prolongator is smoothed with the filtered operator and filtered again, and
//!   the coarse operators are Galerkin products `P^T (S A S) P`. A coarse correction therefore
//!   never moves a constrained component, and every level is an SPD approximation of the
//!   operator the PCG actually iterates with. A hierarchy built from `A` would treat fixed and
//!   contact particles as free; its coarse corrections would fight the constraints, which
//!   Tamstorf et al. found makes strong preconditioners lose most of their effect ("for highly
//!   efficient preconditioners ... prefiltering is essential").
//!
//! # Example
//! ```
//! use cloth_solver::{
//!     BlockMatrix, Constraint, Matrix3, Par, PcgParams, PcgWorkspace, System, Vector3,
//!     solve_mpcg,
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
//! let system = System::new(&a, &b, &z, &constraints);
//! let info = solve_mpcg(&mut dv, &system, &params, Par::Seq, &mut PcgWorkspace::new())?;
//! assert!(info.converged);
//! assert_eq!(dv[0], z[0]); // the pinned particle moves exactly as prescribed
//! // Free particle: 11 dv1 - 10 * 0.1 = -0.1  =>  dv1 = 0.9 / 11.
//! assert!((dv[1].z - 0.9 / 11.0).abs() < 1e-9);
//! # Ok::<(), cloth_solver::SolverError>(())
//! ```
//!
//! The multigrid path on a 30 x 30 sheet of springs, one corner pinned. The hierarchy is built
//! once per pattern and reused by every later solve (values may change):
//! ```
//! use cloth_solver::{
//!     BlockMatrix, Constraint, Matrix3, Multigrid, MultigridParams, Par, PcgParams,
//!     PcgWorkspace, System, Vector3, solve_mpcg_multigrid,
//! };
//! let side = 30;
//! let n = side * side;
//! let idx = |r: usize, c: usize| r * side + c;
//! let mut pairs = Vec::new();
//! for r in 0..side {
//!     for c in 0..side {
//!         if c + 1 < side { pairs.push((idx(r, c), idx(r, c + 1))); }
//!         if r + 1 < side { pairs.push((idx(r, c), idx(r + 1, c))); }
//!     }
//! }
//! let x: Vec<Vector3<f64>> =
//!     (0..n).map(|i| Vector3::new((i % side) as f64, (i / side) as f64, 0.0) * 0.01).collect();
//! let mut a = BlockMatrix::new(n, &pairs)?;
//! for i in 0..n {
//!     a.add_diagonal(i, &(Matrix3::identity() * 1e-4)); // mass (kg)
//! }
//! for &(i, j) in &pairs {
//!     let d = (x[j] - x[i]).normalize();
//!     let k = (d * d.transpose() + Matrix3::identity() * 0.1) * 10.0; // h^2 stiffness (kg)
//!     a.add_diagonal(i, &k);
//!     a.add_diagonal(j, &k);
//!     a.add_block(i, j, &(-k))?;
//! }
//! let mut constraints = vec![Constraint::Free; n];
//! constraints[0] = Constraint::Fixed;
//! let b = vec![Vector3::new(0.0, 0.0, -1e-4 * 9.81 / 30.0); n]; // gravity impulse (N s)
//! let z = vec![Vector3::zeros(); n];
//! let params = MultigridParams::default();
//! let mut mg = Multigrid::new(&a, &x, &constraints, &params, Par::default())?;
//! let mut dv = vec![Vector3::zeros(); n];
//! let system = System::new(&a, &b, &z, &constraints);
//! let info = solve_mpcg_multigrid(
//!     &mut dv, &system, &mut mg, &x, &PcgParams::default(), Par::default(),
//!     &mut PcgWorkspace::new(),
//! )?;
//! assert!(info.converged && info.iterations < 20, "{info:?}");
//! assert_eq!(dv[0], Vector3::zeros()); // the pinned particle does not move
//! # Ok::<(), cloth_solver::SolverError>(())
//! ```

mod constraint;
mod direct;
mod error;
mod llt;
mod matrix;
mod multigrid;
mod par;
mod pcg;
mod system;

#[cfg(test)]
mod pitfall_tests;

/// The README's example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub use cloth_mesh::{Par, nalgebra};
pub use constraint::Constraint;
pub use direct::{DirectSolver, solve_direct};
pub use error::SolverError;
pub use llt::SparseLlt;
pub use matrix::{AssemblyPlan, BlockMatrix};
pub use multigrid::{
    Multigrid, MultigridParams, MultigridSetupInfo, NearNullSpace, Reuse, Smoother,
};
pub use nalgebra::{Matrix3, Vector3};
pub use pcg::{
    MultigridOn, PcgInfo, PcgParams, PcgWorkspace, Preconditioner, constraint_forces, solve_mpcg,
    solve_mpcg_multigrid, solve_mpcg_multigrid_on,
};
pub use system::System;
