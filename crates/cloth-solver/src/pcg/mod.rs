//! Modified preconditioned conjugate gradient (Baraff & Witkin 1998, §5.3), with the
//! stopping reference of Ascher & Boxerman (2003).
//!
//! # What is solved
//! With the filter `S = diag(S_i)` and targets `z`, the solver finds `dv = z + y` where `y`
//! (with `y = S y`) solves the pre-filtered system (Tamstorf, Jones & McCormick 2015)
//!
//! ```text
//! (S A S + (I - S)) y = S (b - A z)
//! ```
//!
//! i.e. the constrained components of `dv` equal those of `z` and the free components of the
//! residual `b - A dv` vanish. This is the same iteration as the paper's `modified-pcg`: the
//! paper's `dv` is our `z + y`, its filtered residual is our `r`.
//!
//! # Two corrections to the paper's listing
//! * **Preconditioner.** The listing writes `P_ii = 1/A_ii` and then applies `P^-1` to the
//!   residual, which would *multiply* by `A_ii`. A Jacobi preconditioner approximates `A^-1`,
//!   so we *divide* the residual by the diagonal (`s = S D^-1 r`). A unit test shows the
//!   difference in iteration counts on a badly scaled system.
//! * **Stopping reference.** The listing's `delta0 = filter(b)^T P filter(b)` ignores `z`:
//!   with `b = 0` and `z != 0` it is 0 and the loop never stops; when `filter(b)` is large
//!   compared to the true initial residual it stops too early. Following Ascher & Boxerman
//!   (2003), we use the initial filtered residual `r0 = S (b - A z)` in the same
//!   preconditioner norm as the loop: `delta0 = r0^T M^-1 r0`, and stop when
//!   `r^T M^-1 r <= tolerance^2 * delta0`. If `delta0 == 0` the system is already solved
//!   (0 iterations).
//!
//! # Layout
//! `params` holds the parameters, outcome and workspace, `jacobi` the Jacobi and block-Jacobi
//! preconditioners, `iterate` the iteration itself; the smoothed-aggregation preconditioner
//! is the `multigrid` module's [`Multigrid`], which knows nothing of the PCG.

mod iterate;
mod jacobi;
mod params;

use cloth_mesh::Par;
use nalgebra::Vector3;
use rayon::prelude::*;

use crate::multigrid::Multigrid;
use crate::par::ROW_CHUNK;
use crate::system::{check_len, check_positions};
use crate::{BlockMatrix, SolverError, System};
use iterate::{Apply, solve_with};
pub use params::{PcgInfo, PcgParams, PcgWorkspace, Preconditioner};
pub(crate) use params::{PrecondForm, Reference};

/// Modified PCG (paper §5.3, with the corrections listed in the module docs).
///
/// Solves `A dv = b` on the free subspace while prescribing the constrained components of
/// [`System`] `sys`: on return, `(I - S_i) dv_i = (I - S_i) z_i` to rounding (exactly for
/// free and fixed particles), and the filtered residual `S (b - A dv)` has been reduced by
/// `params.tolerance` relative to the reference `S (b - A z)`, both measured in the
/// preconditioner norm. The input value of `dv` is ignored: the iteration starts at `z`, or
/// at [`System::start`] when one is given.
///
/// Units follow the caller: with `A` in kg and `b` in N*s, `dv` and `z` are in m/s.
///
/// Non-convergence within `params.max_iterations` is reported in [`PcgInfo::converged`],
/// not as an error; `dv` then holds the last iterate (still satisfying the constraints).
/// All parallel reductions use fixed chunks, so results are bit-identical for any number of
/// rayon threads; `par` chooses the threads ([`Par`]) and never changes the result.
///
/// The arguments follow faer's order: output, system (operator and inputs), parameters,
/// parallelism, scratch.
///
/// # Errors
/// * [`SolverError::DimensionMismatch`] if `dv`, `b`, `z`, `constraints` or a
///   [`System::start`] differ in length from `a.n()`;
/// * [`SolverError::NonFinite`] if `b`, `z`, the start or `A` contain NaN/inf (or an iterate
///   overflows);
/// * [`SolverError::InvalidConstraint`] if a constraint direction is not unit/orthogonal;
/// * [`SolverError::InvalidParameter`] if `tolerance` is negative or not finite;
/// * [`SolverError::DiagonalNotPositive`] if the preconditioner cannot be built;
/// * [`SolverError::NotPositiveDefinite`] if a search direction has curvature `<= 0`.
///
/// On error `dv` is left unchanged.
pub fn solve_mpcg(
    dv: &mut [Vector3<f64>],
    sys: &System<'_>,
    params: &PcgParams,
    par: Par,
    ws: &mut PcgWorkspace,
) -> Result<PcgInfo, SolverError> {
    par.install(|| {
        solve_mpcg_impl(
            dv,
            sys,
            params,
            ws,
            PrecondForm::Divide,
            Reference::FilteredResidual,
        )
    })
}

/// [`solve_mpcg`] on the current thread pool with a chosen preconditioner form and stopping
/// reference (the pitfall tests use the paper's literal ones).
pub(crate) fn solve_mpcg_impl(
    dv: &mut [Vector3<f64>],
    sys: &System<'_>,
    params: &PcgParams,
    ws: &mut PcgWorkspace,
    form: PrecondForm,
    reference: Reference,
) -> Result<PcgInfo, SolverError> {
    solve_with(dv, sys, params, ws, Apply::Blocks(form), reference)
}

/// Modified PCG (as [`solve_mpcg`]) preconditioned by one smoothed-aggregation V-cycle of
/// `mg` per iteration, on the pre-filtered system `(S A S + I - S) y = S (b - A z)`,
/// `dv = z + S y`.
///
/// First refreshes the numeric part of `mg` for the matrix and constraints of `sys` and
/// `positions` (m, the particle positions the rotation modes of
/// [`crate::NearNullSpace::RigidBody`] are taken about; see
/// [`crate::MultigridParams::reuse`]), then iterates. `params.preconditioner` is not used
/// (the preconditioner is `mg`); tolerance, stopping test (in the preconditioner norm) and
/// `max_iterations` have the meaning of [`solve_mpcg`], as do units, constraint exactness
/// (`(I - S_i) dv_i = (I - S_i) z_i` whatever the iteration count) and determinism
/// (bit-identical for any thread count).
///
/// The arguments follow faer's order: output, system, preconditioner (the hierarchy and the
/// positions it is refreshed at), parameters, parallelism, scratch.
///
/// # Errors
/// Those of [`solve_mpcg`], plus: [`SolverError::InvalidParameter`] (`name: "a"`) if `a`
/// does not have the pattern `mg` was built for (build a new [`Multigrid`] when the pattern
/// changes); [`SolverError::DimensionMismatch`] / [`SolverError::NonFinite`] for
/// `positions`; [`SolverError::CoarseNotPositiveDefinite`] if a coarse operator is not
/// positive definite. On error `dv` is left unchanged.
///
/// A V-cycle found not positive definite during the iteration (`r . V r < 0` beyond
/// rounding: a smoother tuned by the Lanczos estimate amplifies a mode above that estimate)
/// does not fail the solve: it is solved again from the start with every smoother tuned by
/// the guaranteed bound of the spectrum (counted by [`Multigrid::bounded_retries`]), and the
/// next 16 solves keep the bound (such systems come in runs); only a failure with the bound
/// returns [`SolverError::NotPositiveDefinite`].
pub fn solve_mpcg_multigrid(
    dv: &mut [Vector3<f64>],
    sys: &System<'_>,
    mg: &mut Multigrid,
    positions: &[Vector3<f64>],
    params: &PcgParams,
    par: Par,
    ws: &mut PcgWorkspace,
) -> Result<PcgInfo, SolverError> {
    let on = MultigridOn {
        mg,
        matrix: sys.a,
        positions,
        only_fine: false,
    };
    solve_mpcg_multigrid_on(dv, sys, on, params, par, ws)
}

/// A multigrid preconditioner for [`solve_mpcg_multigrid_on`]: the hierarchy, the matrix it
/// is refreshed for and applies (of the pattern the hierarchy was built for), and the
/// positions of the rotation modes.
#[derive(Debug)]
pub struct MultigridOn<'a> {
    /// The hierarchy.
    pub mg: &'a mut Multigrid,
    /// The matrix the V-cycle inverts approximately: symmetric, positive definite on the free
    /// subspace, with the pattern `mg` was built for.
    pub matrix: &'a BlockMatrix,
    /// Particle positions (m) for [`crate::NearNullSpace::RigidBody`].
    pub positions: &'a [Vector3<f64>],
    /// Whether the solve keeps the coarse levels as the last solve left them and refreshes
    /// only the finest level's smoother for `matrix` and the constraints (normally false:
    /// the hierarchy is refreshed as [`MultigridParams::reuse`](crate::MultigridParams::reuse)
    /// says). Right for solving again with the same matrix after a few constraints changed:
    /// the coarse levels still approximate the system away from those particles, and the
    /// V-cycle stays symmetric, so the PCG converges. Should the V-cycle lose definiteness,
    /// the solve is retried with the whole hierarchy refreshed, as for any solve. A hierarchy
    /// that has never been refreshed, or whose last refresh failed, is refreshed in full.
    pub only_fine: bool,
}

/// [`solve_mpcg_multigrid`] with the V-cycle built on `pre.matrix` instead of the system's
/// own matrix: the PCG iterates with `sys.a`, the preconditioner approximates the inverse of
/// the filtered `pre.matrix`. Any symmetric matrix positive definite on the free subspace
/// gives a convergent PCG; one close to `sys.a` gives few iterations. The intended use is
/// [`BlockMatrix::lump_into`]: `sys.a` with the couplings outside a fixed pattern (contact
/// pairs that come and go) lumped onto the diagonal, so one hierarchy serves every step
/// however the system's pattern grows.
///
/// # Errors
/// Those of [`solve_mpcg_multigrid`], with `a` standing for `pre.matrix`, plus
/// [`SolverError::DimensionMismatch`] if `pre.matrix` and `sys.a` differ in size and
/// [`SolverError::NonFinite`] for a non-finite `pre.matrix`.
pub fn solve_mpcg_multigrid_on(
    dv: &mut [Vector3<f64>],
    sys: &System<'_>,
    pre: MultigridOn<'_>,
    params: &PcgParams,
    par: Par,
    ws: &mut PcgWorkspace,
) -> Result<PcgInfo, SolverError> {
    let MultigridOn {
        mg,
        matrix,
        positions,
        only_fine,
    } = pre;
    par.install(|| {
        check_positions(sys.a.n(), positions)?;
        check_len("preconditioner matrix", sys.a.n(), matrix.n())?;
        // The system's own matrix is checked with the system (`System::validate`).
        let own = std::ptr::eq(matrix, sys.a);
        if let Some(i) = matrix.first_non_finite_row().filter(|_| !own) {
            return Err(SolverError::NonFinite {
                what: "preconditioner matrix block row",
                index: i,
            });
        }
        if !mg.matches(matrix) {
            return Err(SolverError::InvalidParameter {
                name: "a",
                reason: "matrix pattern differs from the one Multigrid::new analysed",
            });
        }
        // A retry with every smoother tuned by the bound refreshes the whole hierarchy.
        let mut first = true;
        mg.with_retry(|mg| {
            let apply = Apply::Multigrid {
                mg,
                a: matrix,
                positions,
                only_fine: only_fine && first,
            };
            first = false;
            solve_with(dv, sys, params, ws, apply, Reference::FilteredResidual)
        })
    })
}

/// Constraint forces `e = A dv - b` (paper §5.4 and §6.1), the unfiltered residual. Units
/// follow the caller (with `A` in kg, `dv` in m/s and `b` in N*s, `e` is an impulse in N*s;
/// divide by `h` for a force). For free particles `e_i ~ 0`; for constrained ones it is the
/// impulse needed to enforce `z_i`. Row-parallel, bit-identical for any thread count.
///
/// # Panics
/// If `dv`, `b` or `e` do not have length `a.n()`.
pub fn constraint_forces(
    a: &BlockMatrix,
    dv: &[Vector3<f64>],
    b: &[Vector3<f64>],
    e: &mut [Vector3<f64>],
) {
    assert_eq!(b.len(), a.n(), "b.len() != n");
    a.mul_vec(dv, e);
    e.par_chunks_mut(ROW_CHUNK)
        .zip(b.par_chunks(ROW_CHUNK))
        .for_each(|(es, bs)| {
            for (ei, bi) in es.iter_mut().zip(bs) {
                *ei -= bi;
            }
        });
}
