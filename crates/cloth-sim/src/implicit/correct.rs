//! Newton corrections of an attempt whose stretch change is over the threshold but within reach
//! (paper §3 solved beyond its first linearisation). The paper's step is one Newton iteration
//! of the backward Euler equations; a correction is a second one: the assemble stage
//! linearises the system at the attempt's candidate end state ([`Linearization::End`]) and the
//! solve stage solves it for the residual there, through the same entry points as the first
//! solve. The corrected attempt is judged again in full.

use super::assemble::{Assembly, Linearization};
use super::attempt::Attempt;
use super::constrain::Constraints;
use super::settings::LinearSolver;
use super::solve::{Solution, Solve};
use crate::error::{Reject, SimError};
use crate::state::State;
use crate::stats::Clock;
use cloth_mesh::Vec3;
use cloth_solver::{Constraint, PcgInfo, PcgParams};

/// The largest stretch change, as a multiple of the threshold, that a Newton correction is
/// tried on: beyond it the linearisation is too far off for one correction to bring the step
/// under the threshold.
pub const CORRECTABLE_CHANGE: f64 = 5.0;

/// The loosest relative tolerance a Newton correction's solve is given.
const LOOSEST_CORRECTION_TOLERANCE: f64 = 0.1;

/// Whether `verdict` is a stretch change a Newton correction may cure: finite, at most
/// [`CORRECTABLE_CHANGE`] times the threshold, and (after a correction) at most 0.9 of the
/// first solve's `first` change.
pub(crate) fn worth_trying(verdict: &Option<Reject>, first: f64) -> bool {
    let Some(Reject::StretchChange {
        change, threshold, ..
    }) = verdict
    else {
        return false;
    };
    let progress = *change == first || *change <= 0.9 * first;
    change.is_finite() && *change <= CORRECTABLE_CHANGE * threshold && progress
}

/// One Newton correction of the solved `dv` in `sol`: the constrained components keep their
/// targets, the constraint forces become those of the corrected solution. `None` (dv unchanged)
/// when its solve asks for a smaller step.
pub(crate) fn newton(
    ctx: &Attempt,
    asm: &mut Assembly,
    sol: &mut Solution,
    cons: &mut Constraints,
    clock: &mut Clock,
) -> Result<Option<PcgInfo>, SimError> {
    let (state, h) = (ctx.state, ctx.h);
    let dv0 = std::mem::take(&mut sol.dv);
    let end = end_state(state, &dv0, &cons.y, h);
    let first = free_norm(&asm.b, &cons.kind);
    let at = Linearization::End {
        end: &end,
        dv: &dv0,
    };
    asm.run(ctx, at, cons, clock)?;
    // The correction leaves constrained components where the first solve put them.
    let targets = std::mem::replace(&mut cons.z, vec![Vec3::zeros(); state.len()]);
    sol.dv = vec![Vec3::zeros(); state.len()];
    // Solved to the first solve's absolute accuracy (an inexact Newton step): the
    // tolerance relative to the residual grows as the residual is smaller than b was.
    let ratio = first / free_norm(&asm.b, &cons.kind).max(f64::MIN_POSITIVE);
    let solver = &loosened(&ctx.settings.solver, ratio);
    let solved = sol.run(ctx, solver, asm, cons, Solve::Fresh);
    cons.z = targets;
    clock.cg();
    match solved? {
        Ok(cg) => {
            for (d, d0) in sol.dv.iter_mut().zip(&dv0) {
                *d += d0;
            }
            Ok(Some(cg))
        }
        Err(_) => {
            sol.dv = dv0;
            Ok(None)
        }
    }
}

/// The candidate end state of a step of size `h` from `state` with velocity change `dv` and
/// position alterations `y`: positions `x0 + h (v0 + dv) + y`, velocities `v0 + dv`.
fn end_state(state: &State, dv: &[Vec3], y: &[Vec3], h: f64) -> State {
    State {
        x: (state.x.iter().zip(&state.v))
            .zip(dv.iter().zip(y))
            .map(|((x, v), (dv, y))| x + (v + dv) * h + y)
            .collect(),
        v: state.v.iter().zip(dv).map(|(v, dv)| v + dv).collect(),
        t: state.t,
    }
}

/// The 2-norm of `b` over the free vertices.
fn free_norm(b: &[Vec3], kind: &[Constraint]) -> f64 {
    (b.iter().zip(kind))
        .filter(|(_, k)| matches!(k, Constraint::Free))
        .map(|(b, _)| b.norm_squared())
        .sum::<f64>()
        .sqrt()
}

/// `solver` with its relative tolerance multiplied by `ratio` (at least 1, at most up to
/// [`LOOSEST_CORRECTION_TOLERANCE`]).
fn loosened(solver: &LinearSolver, ratio: f64) -> LinearSolver {
    let loosen = |p: &PcgParams| PcgParams {
        tolerance: (p.tolerance * ratio)
            .min(LOOSEST_CORRECTION_TOLERANCE)
            .max(p.tolerance),
        ..*p
    };
    match solver {
        LinearSolver::Mpcg(p) => LinearSolver::Mpcg(loosen(p)),
        LinearSolver::Multigrid(p, mg) => LinearSolver::Multigrid(loosen(p), *mg),
        LinearSolver::Direct => LinearSolver::Direct,
    }
}
