//! The modified PCG iteration on the pre-filtered system, with its preconditioner applied as
//! block products fused with the vector updates or as one multigrid V-cycle.
//!
//! Every pass is row-parallel over fixed chunks of [`ROW_CHUNK`] particles with per-chunk
//! partial sums added in order: the iterates do not depend on the thread count.

use nalgebra::{Matrix3, Vector3};
use rayon::prelude::*;

use super::jacobi::build_preconditioner;
use super::params::{PcgInfo, PcgParams, PcgWorkspace, PrecondForm, Reference};
use crate::multigrid::{FineOp, Multigrid};
use crate::par::{ROW_CHUNK, sum_in_order};
use crate::{BlockMatrix, Constraint, SolverError, System};

/// Which preconditioner [`solve_with`] applies.
pub(crate) enum Apply<'m> {
    /// `params.preconditioner` (Jacobi or block Jacobi), applied in the given form.
    Blocks(PrecondForm),
    /// One V-cycle of this hierarchy, refreshed for `a` (the system's matrix or one that
    /// dominates it on the hierarchy's pattern) first.
    Multigrid {
        mg: &'m mut Multigrid,
        a: &'m BlockMatrix,
        positions: &'m [Vector3<f64>],
        /// Whether only the finest level is refreshed (see [`crate::MultigridOn::only_fine`]).
        only_fine: bool,
    },
}

/// Validates, sizes the workspace, builds or refreshes the preconditioner and iterates.
pub(crate) fn solve_with(
    dv: &mut [Vector3<f64>],
    sys: &System<'_>,
    params: &PcgParams,
    ws: &mut PcgWorkspace,
    apply: Apply<'_>,
    reference: Reference,
) -> Result<PcgInfo, SolverError> {
    sys.validate(dv)?;
    if params.tolerance < 0.0 || !params.tolerance.is_finite() {
        return Err(SolverError::InvalidParameter {
            name: "tolerance",
            reason: "must be finite and >= 0",
        });
    }
    ws.resize(sys.a.n(), matches!(apply, Apply::Blocks(_)));
    // Run the whole iteration on a rayon worker: the many short parallel passes are then
    // scheduled locally instead of each being injected from (and waited on by) an outside
    // thread, which costs a futex wake-up per pass.
    rayon::scope(|_| match apply {
        Apply::Blocks(form) => {
            build_preconditioner(
                sys.a,
                sys.constraints,
                params.preconditioner,
                form,
                &mut ws.pinv,
                &mut ws.errs,
            )?;
            iterate(dv, sys, params, ws, Precond::Blocks, reference)
        }
        Apply::Multigrid {
            mg,
            a,
            positions,
            only_fine,
        } => {
            mg.refresh(a, positions, sys.constraints, only_fine)?;
            iterate(dv, sys, params, ws, Precond::Multigrid(mg, a), reference)
        }
    })
}

/// The preconditioner inside [`iterate`].
enum Precond<'m> {
    /// `s = S pinv r` with the workspace's `pinv` blocks, fused with the vector updates.
    Blocks,
    /// `s = S V r`, one V-cycle of the hierarchy for this matrix.
    Multigrid(&'m mut Multigrid, &'m BlockMatrix),
}

/// The iteration proper (inputs already validated, workspace sized).
fn iterate(
    dv: &mut [Vector3<f64>],
    sys: &System<'_>,
    params: &PcgParams,
    ws: &mut PcgWorkspace,
    mut pre: Precond<'_>,
    reference: Reference,
) -> Result<PcgInfo, SolverError> {
    // r0 = S (b - A z); s0 = S M^-1 r0; delta = r0 . s0.
    initial_residual(sys, ws, &mut pre);
    // r^T S M^-1 r >= 0 exactly; a negative sum can only be rounding of a tiny residual.
    let mut delta_new = sum_in_order(&ws.partials).abs();
    if !delta_new.is_finite() {
        return Err(SolverError::NonFinite {
            what: "initial residual (iteration)",
            index: 0,
        });
    }
    let delta0 = match reference {
        Reference::FilteredResidual => delta_new,
        #[cfg(test)]
        Reference::PaperFilteredB => paper_reference(sys, &ws.pinv),
    };
    if let Some(start) = sys.start.filter(|_| delta_new > 0.0) {
        delta_new = warm_start(sys, start, delta_new, ws, &mut pre);
    }
    let threshold = params.tolerance * params.tolerance * delta0;
    ws.c.copy_from_slice(&ws.s);
    let mut iterations = 0;
    while delta_new > threshold && delta_new > 0.0 && iterations < params.max_iterations {
        // q = S A c; curvature = c . q.
        let curvature = search_curvature(sys, ws);
        iterations += 1;
        if curvature <= 0.0 || !curvature.is_finite() {
            return Err(SolverError::NotPositiveDefinite {
                iteration: iterations,
                curvature,
            });
        }
        let alpha = delta_new / curvature;
        // y += alpha c; r -= alpha q; s = S M^-1 r; delta = r . s.
        step(sys, ws, &mut pre, alpha);
        let delta_old = delta_new;
        delta_new = sum_in_order(&ws.partials);
        if !delta_new.is_finite() {
            return Err(SolverError::NonFinite {
                what: "preconditioned residual norm (iteration)",
                index: iterations,
            });
        }
        if delta_new < 0.0 {
            if let Precond::Multigrid(mg, _) = &mut pre
                && -delta_new > 1e-20 * delta0
            {
                // Not rounding noise: the V-cycle is not positive definite here.
                mg.vcycle_not_positive();
                return Err(SolverError::NotPositiveDefinite {
                    iteration: iterations,
                    curvature: delta_new,
                });
            }
            // r^T S M^-1 r >= 0 in exact arithmetic: a negative value is rounding noise of a
            // residual at the floor of double precision. Stop; report its magnitude.
            delta_new = -delta_new;
            break;
        }
        let beta = delta_new / delta_old;
        // c = s + beta c (already in the range of S up to rounding).
        next_direction(ws, beta);
    }
    // dv = z + S y: constrained components equal z exactly for free/fixed particles and to
    // rounding for planes/lines.
    write_solution(dv, sys, &ws.y);
    Ok(outcome(iterations, delta_new, delta0, threshold))
}

/// The [`PcgInfo`] of a run stopped after `iterations` at `delta = r^T M^-1 r` (reference
/// `delta0`, stopping threshold `threshold`).
fn outcome(iterations: usize, delta: f64, delta0: f64, threshold: f64) -> PcgInfo {
    let relative_residual = if delta0 > 0.0 {
        (delta / delta0).sqrt()
    } else if delta == 0.0 {
        0.0
    } else {
        f64::INFINITY
    };
    PcgInfo {
        iterations,
        relative_residual,
        converged: delta <= threshold,
    }
}

/// `r = S (b - A z)`, `s = S M^-1 r`, and the partial sums of `r . s` into `ws.partials`.
fn initial_residual(sys: &System<'_>, ws: &mut PcgWorkspace, pre: &mut Precond<'_>) {
    let System {
        a,
        b,
        z,
        constraints,
        ..
    } = *sys;
    ws.r.par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .for_each(|(ci, rs)| {
            let base = ci * ROW_CHUNK;
            for (o, ri) in rs.iter_mut().enumerate() {
                let i = base + o;
                *ri = constraints[i].filter(&(b[i] - a.row_times(i, z)));
            }
        });
    precondition(constraints, ws, pre);
}

/// `s = S M^-1 r` for the workspace's residual `r`, and the partial sums of `r . s` into
/// `ws.partials`.
fn precondition(constraints: &[Constraint], ws: &mut PcgWorkspace, pre: &mut Precond<'_>) {
    let PcgWorkspace {
        r,
        s,
        pinv,
        partials,
        ..
    } = ws;
    match pre {
        Precond::Blocks => {
            let (r, pinv): (&[Vector3<f64>], &[Matrix3<f64>]) = (r, pinv);
            s.par_chunks_mut(ROW_CHUNK)
                .enumerate()
                .map(|(ci, ss)| {
                    let base = ci * ROW_CHUNK;
                    let mut acc = 0.0;
                    for (o, si) in ss.iter_mut().enumerate() {
                        let i = base + o;
                        *si = constraints[i].filter(&(pinv[i] * r[i]));
                        acc += r[i].dot(si);
                    }
                    acc
                })
                .collect_into_vec(partials);
        }
        Precond::Multigrid(mg, pre_a) => {
            let op = FineOp {
                a: pre_a,
                cons: constraints,
            };
            mg.vcycle(&op, r, s);
            filtered_dot(r, s, constraints, partials);
        }
    }
}

/// Moves the iteration's start from z to `start` when that is closer to the solution (its
/// residual `r . s` below the cold start's `delta_cold`): returns the start's `r . s`, the
/// workspace set up from it (or left at z).
fn warm_start(
    sys: &System<'_>,
    start: &[Vector3<f64>],
    delta_cold: f64,
    ws: &mut PcgWorkspace,
    pre: &mut Precond<'_>,
) -> f64 {
    warm_residual(sys, start, ws, pre);
    let delta_start = sum_in_order(&ws.partials).abs();
    if delta_start < delta_cold {
        return delta_start;
    }
    // No closer than z (or not finite): start at z after all.
    ws.y.fill(Vector3::zeros());
    initial_residual(sys, ws, pre);
    delta_cold
}

/// For a warm start: `y = S (start - z)`, `r -= S A y` (`r` holds the cold start's residual
/// on entry), then `s = S M^-1 r` and the partial sums of `r . s` into `ws.partials`.
fn warm_residual(
    sys: &System<'_>,
    start: &[Vector3<f64>],
    ws: &mut PcgWorkspace,
    pre: &mut Precond<'_>,
) {
    let (a, z, constraints) = (sys.a, sys.z, sys.constraints);
    ws.y.par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .for_each(|(ci, ys)| {
            let base = ci * ROW_CHUNK;
            for (o, yi) in ys.iter_mut().enumerate() {
                let i = base + o;
                *yi = constraints[i].filter(&(start[i] - z[i]));
            }
        });
    let y: &[Vector3<f64>] = &ws.y;
    ws.r.par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .for_each(|(ci, rs)| {
            let base = ci * ROW_CHUNK;
            for (o, ri) in rs.iter_mut().enumerate() {
                let i = base + o;
                *ri -= constraints[i].filter(&a.row_times(i, y));
            }
        });
    precondition(constraints, ws, pre);
}

/// The paper's stopping reference `filter(b)^T M^-1 filter(b)` (the pitfall tests).
#[cfg(test)]
fn paper_reference(sys: &System<'_>, pinv: &[Matrix3<f64>]) -> f64 {
    let (b, constraints) = (sys.b, sys.constraints);
    (0..sys.a.n())
        .map(|i| {
            let fb = constraints[i].filter(&b[i]);
            fb.dot(&constraints[i].filter(&(pinv[i] * fb)))
        })
        .fold(0.0, |acc, v| acc + v)
}

/// `q = S A c`; returns the curvature `c . q` (fixed-chunk sum).
fn search_curvature(sys: &System<'_>, ws: &mut PcgWorkspace) -> f64 {
    let (a, constraints) = (sys.a, sys.constraints);
    let PcgWorkspace { c, q, partials, .. } = ws;
    let c: &[Vector3<f64>] = c;
    q.par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .map(|(ci, qs)| {
            let base = ci * ROW_CHUNK;
            let mut acc = 0.0;
            for (o, qi) in qs.iter_mut().enumerate() {
                let i = base + o;
                *qi = constraints[i].filter(&a.row_times(i, c));
                acc += c[i].dot(qi);
            }
            acc
        })
        .collect_into_vec(partials);
    sum_in_order(partials)
}

/// `y += alpha c`, `r -= alpha q`, `s = S M^-1 r`, and the partial sums of `r . s` into
/// `ws.partials`.
fn step(sys: &System<'_>, ws: &mut PcgWorkspace, pre: &mut Precond<'_>, alpha: f64) {
    let constraints = sys.constraints;
    let PcgWorkspace {
        r,
        s,
        c,
        q,
        y,
        pinv,
        partials,
        ..
    } = ws;
    let pinv: &[Matrix3<f64>] = pinv;
    let (c_ro, q_ro): (&[Vector3<f64>], &[Vector3<f64>]) = (c, q);
    if let Precond::Multigrid(mg, pre_a) = pre {
        y.par_chunks_mut(ROW_CHUNK)
            .zip(r.par_chunks_mut(ROW_CHUNK))
            .enumerate()
            .for_each(|(ci, (ys, rs))| {
                let base = ci * ROW_CHUNK;
                for (o, (yi, ri)) in ys.iter_mut().zip(rs.iter_mut()).enumerate() {
                    let i = base + o;
                    *yi += c_ro[i] * alpha;
                    *ri -= q_ro[i] * alpha;
                }
            });
        let op = FineOp {
            a: pre_a,
            cons: constraints,
        };
        mg.vcycle(&op, r, s);
        filtered_dot(r, s, constraints, partials);
    } else {
        y.par_chunks_mut(ROW_CHUNK)
            .zip(r.par_chunks_mut(ROW_CHUNK))
            .zip(s.par_chunks_mut(ROW_CHUNK))
            .enumerate()
            .map(|(ci, ((ys, rs), ss))| {
                let base = ci * ROW_CHUNK;
                let mut acc = 0.0;
                for (o, ((yi, ri), si)) in ys
                    .iter_mut()
                    .zip(rs.iter_mut())
                    .zip(ss.iter_mut())
                    .enumerate()
                {
                    let i = base + o;
                    *yi += c_ro[i] * alpha;
                    *ri -= q_ro[i] * alpha;
                    *si = constraints[i].filter(&(pinv[i] * *ri));
                    acc += ri.dot(si);
                }
                acc
            })
            .collect_into_vec(partials);
    }
}

/// `c = s + beta c`.
fn next_direction(ws: &mut PcgWorkspace, beta: f64) {
    ws.c.par_chunks_mut(ROW_CHUNK)
        .zip(ws.s.par_chunks(ROW_CHUNK))
        .for_each(|(cs, ss)| {
            for (ci, si) in cs.iter_mut().zip(ss) {
                *ci = si + *ci * beta;
            }
        });
}

/// `dv = z + S y`.
fn write_solution(dv: &mut [Vector3<f64>], sys: &System<'_>, y: &[Vector3<f64>]) {
    let (z, constraints) = (sys.z, sys.constraints);
    dv.par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .for_each(|(ci, ds)| {
            let base = ci * ROW_CHUNK;
            for (o, di) in ds.iter_mut().enumerate() {
                let i = base + o;
                *di = z[i] + constraints[i].filter(&y[i]);
            }
        });
}

/// `s = S s` and `partials` = per-chunk sums of `r . s` (fixed chunks).
fn filtered_dot(
    r: &[Vector3<f64>],
    s: &mut [Vector3<f64>],
    constraints: &[Constraint],
    partials: &mut Vec<f64>,
) {
    s.par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .map(|(ci, ss)| {
            let base = ci * ROW_CHUNK;
            let mut acc = 0.0;
            for (o, si) in ss.iter_mut().enumerate() {
                let i = base + o;
                *si = constraints[i].filter(si);
                acc += r[i].dot(si);
            }
            acc
        })
        .collect_into_vec(partials);
}
