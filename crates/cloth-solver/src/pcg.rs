//! Modified preconditioned conjugate gradient (Baraff & Witkin 1998, section 5.3, Knowl 1),
//! with the stopping reference of Ascher & Boxerman (2003).
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
//! # Two corrections to the seed text
//! * **Preconditioner.** The seed writes `P_ii = 1/A_ii` and then applies `P^-1` to the
//!   residual, which would *multiply* by `A_ii`. A Jacobi preconditioner approximates `A^-1`,
//!   so we *divide* the residual by the diagonal (`s = S D^-1 r`). A unit test shows the
//!   difference in iteration counts on a badly scaled system.
//! * **Stopping reference.** The seed's `delta0 = filter(b)^T P filter(b)` ignores `z`: with
//!   `b = 0` and `z != 0` it is 0 and the loop never stops; when `filter(b)` is large compared
//!   to the true initial residual it stops too early. Following Ascher & Boxerman (2003), we
//!   use the initial filtered residual `r0 = S (b - A z)` in the same preconditioner norm as
//!   the loop: `delta0 = r0^T M^-1 r0`, and stop when `r^T M^-1 r <= tolerance^2 * delta0`.
//!   If `delta0 == 0` the system is already solved (0 iterations).

use cloth_mesh::Par;
use nalgebra::{Matrix3, Vector3};
use rayon::prelude::*;

use crate::multigrid::{FineOp, Multigrid};
use crate::par::{ROW_CHUNK, sum_in_order};
use crate::{BlockMatrix, Constraint, SolverError};

/// Preconditioner `M ~ A` for the modified PCG. Both are filter-aware and applied as
/// `s = S M^-1 r`.
///
/// The smoothed-aggregation multigrid preconditioner is not a variant here: it needs the
/// particle positions and a hierarchy that lives across solves, so it has its own entry point,
/// [`crate::solve_mpcg_multigrid`] with a [`crate::Multigrid`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Preconditioner {
    /// Jacobi, as in the paper: `M = diag(A)` (scalar diagonal); the residual is *divided*
    /// by the diagonal entries. Fully fixed particles use 1.
    Diagonal,
    /// Block Jacobi with 3x3 blocks, filter-aware: `M_i = S_i A_ii S_i + (I - S_i)`, inverted
    /// per particle by Cholesky; `s_i = S_i M_i^-1 r_i`.
    #[default]
    BlockJacobi,
}

/// Parameters of [`solve_mpcg`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PcgParams {
    /// Relative tolerance `epsilon` (dimensionless, `>= 0`): stop when
    /// `sqrt(r^T M^-1 r / r0^T M^-1 r0) <= tolerance`, with `r0 = S (b - A z)`.
    /// Default `1e-3`, a visual-quality setting for cloth; use `1e-8` or smaller for physics
    /// checks.
    pub tolerance: f64,
    /// Maximum number of CG iterations (default 1000). Reaching it is not an error:
    /// [`PcgInfo::converged`] is then `false` and `dv` holds the last iterate.
    pub max_iterations: usize,
    /// Preconditioner (default [`Preconditioner::BlockJacobi`]).
    pub preconditioner: Preconditioner,
}

impl Default for PcgParams {
    fn default() -> Self {
        PcgParams {
            tolerance: 1e-3,
            max_iterations: 1000,
            preconditioner: Preconditioner::BlockJacobi,
        }
    }
}

/// Outcome of a successful [`solve_mpcg`] call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PcgInfo {
    /// Number of CG iterations performed (matrix-vector products after the initial one).
    pub iterations: usize,
    /// Final `sqrt(r^T M^-1 r / r0^T M^-1 r0)` of the (recursively updated) filtered
    /// residual; 0 if the initial residual was already zero. Dimensionless.
    pub relative_residual: f64,
    /// Whether `relative_residual <= tolerance` was reached within `max_iterations`.
    pub converged: bool,
}

/// Reusable scratch memory for [`solve_mpcg`]. Vectors grow on the first solve of a given
/// size; later solves of the same or smaller size do not allocate.
#[derive(Clone, Debug, Default)]
pub struct PcgWorkspace {
    r: Vec<Vector3<f64>>,
    s: Vec<Vector3<f64>>,
    c: Vec<Vector3<f64>>,
    q: Vec<Vector3<f64>>,
    y: Vec<Vector3<f64>>,
    pinv: Vec<Matrix3<f64>>,
    partials: Vec<f64>,
    errs: Vec<Option<(usize, f64)>>,
}

impl PcgWorkspace {
    /// Empty workspace (same as `Default`).
    pub fn new() -> Self {
        Self::default()
    }

    fn resize(&mut self, n: usize, blocks: bool) {
        for v in [
            &mut self.r,
            &mut self.s,
            &mut self.c,
            &mut self.q,
            &mut self.y,
        ] {
            v.clear();
            v.resize(n, Vector3::zeros());
        }
        self.pinv.clear();
        if blocks {
            self.pinv.resize(n, Matrix3::zeros());
        }
        self.partials.reserve(n.div_ceil(ROW_CHUNK));
    }
}

/// How the preconditioner is applied. Only the correct form is reachable from the public
/// API; the seed's literal form exists for the unit test that demonstrates the pitfall.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PrecondForm {
    /// `s = S M^-1 r` (correct).
    Divide,
    /// The seed's literal `P^-1 r` with `P_ii = 1/A_ii`, i.e. `s = S D r` (wrong).
    #[cfg(test)]
    SeedMultiply,
}

/// Which stopping reference is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reference {
    /// `delta0 = r0^T M^-1 r0` with `r0 = S (b - A z)` (Ascher & Boxerman 2003).
    FilteredResidual,
    /// The seed's `delta0 = filter(b)^T M^-1 filter(b)` (wrong when `z != 0`).
    #[cfg(test)]
    SeedFilteredB,
}

pub(crate) fn check_len(
    what: &'static str,
    expected: usize,
    found: usize,
) -> Result<(), SolverError> {
    if expected == found {
        Ok(())
    } else {
        Err(SolverError::DimensionMismatch {
            what,
            expected,
            found,
        })
    }
}

/// Common input validation of the solvers: lengths, finiteness, constraint directions.
pub(crate) fn validate_inputs(
    dv: &[Vector3<f64>],
    a: &BlockMatrix,
    b: &[Vector3<f64>],
    z: &[Vector3<f64>],
    constraints: &[Constraint],
) -> Result<(), SolverError> {
    let n = a.n();
    check_len("dv", n, dv.len())?;
    check_len("b", n, b.len())?;
    check_len("z", n, z.len())?;
    check_len("constraints", n, constraints.len())?;
    let finite = |v: &Vector3<f64>| v.iter().all(|x| x.is_finite());
    if let Some(i) = b.iter().position(|v| !finite(v)) {
        return Err(SolverError::NonFinite {
            what: "b",
            index: i,
        });
    }
    if let Some(i) = z.iter().position(|v| !finite(v)) {
        return Err(SolverError::NonFinite {
            what: "z",
            index: i,
        });
    }
    if let Some(i) = a.first_non_finite_row() {
        return Err(SolverError::NonFinite {
            what: "matrix block row",
            index: i,
        });
    }
    for (i, c) in constraints.iter().enumerate() {
        c.validate(i)?;
    }
    Ok(())
}

/// Modified PCG (Knowl 1, with the corrections listed in the module docs).
///
/// Solves `A dv = b` on the free subspace while prescribing the constrained components:
/// on return, `(I - S_i) dv_i = (I - S_i) z_i` to rounding (exactly for free and fixed
/// particles), and the filtered residual `S (b - A dv)` has been reduced by
/// `params.tolerance` relative to the reference `S (b - A z)`, both measured in the
/// preconditioner norm. The input value of `dv` is ignored (the iteration starts at `z`).
///
/// Units follow the caller: with `A` in kg and `b` in N*s, `dv` and `z` are in m/s.
///
/// Non-convergence within `params.max_iterations` is reported in [`PcgInfo::converged`],
/// not as an error; `dv` then holds the last iterate (still satisfying the constraints).
/// All parallel reductions use fixed chunks, so results are bit-identical for any number of
/// rayon threads; `par` chooses the threads ([`Par`]) and never changes the result.
///
/// # Errors
/// * [`SolverError::DimensionMismatch`] if `dv`, `b`, `z` or `constraints` differ in length
///   from `a.n()`;
/// * [`SolverError::NonFinite`] if `b`, `z` or `A` contain NaN/inf (or an iterate overflows);
/// * [`SolverError::InvalidConstraint`] if a constraint direction is not unit/orthogonal;
/// * [`SolverError::InvalidParameter`] if `tolerance` is negative or not finite;
/// * [`SolverError::DiagonalNotPositive`] if the preconditioner cannot be built;
/// * [`SolverError::NotPositiveDefinite`] if a search direction has curvature `<= 0`.
///
/// On error `dv` is left unchanged.
#[allow(
    clippy::too_many_arguments,
    reason = "faer's order: output, operator, inputs, parameters, parallelism, scratch"
)]
pub fn solve_mpcg(
    dv: &mut [Vector3<f64>],
    a: &BlockMatrix,
    b: &[Vector3<f64>],
    z: &[Vector3<f64>],
    constraints: &[Constraint],
    params: &PcgParams,
    par: Par,
    ws: &mut PcgWorkspace,
) -> Result<PcgInfo, SolverError> {
    par.install(|| {
        solve_mpcg_impl(
            dv,
            a,
            b,
            z,
            constraints,
            params,
            ws,
            PrecondForm::Divide,
            Reference::FilteredResidual,
        )
    })
}

/// Builds `pinv_i` such that the preconditioner applies `s_i = S_i pinv_i r_i`.
///
/// Parallel over fixed chunks; each chunk reports its first failing particle into `errs`
/// (reused, no allocation), and the lowest failing index is returned: deterministic.
fn build_preconditioner(
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
                                PrecondForm::SeedMultiply => d,
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

#[allow(clippy::too_many_arguments)]
pub(crate) fn solve_mpcg_impl(
    dv: &mut [Vector3<f64>],
    a: &BlockMatrix,
    b: &[Vector3<f64>],
    z: &[Vector3<f64>],
    constraints: &[Constraint],
    params: &PcgParams,
    ws: &mut PcgWorkspace,
    form: PrecondForm,
    reference: Reference,
) -> Result<PcgInfo, SolverError> {
    solve_with(
        dv,
        a,
        b,
        z,
        constraints,
        params,
        ws,
        Apply::Blocks(form),
        reference,
    )
}

/// Which preconditioner [`solve_with`] applies.
pub(crate) enum Apply<'m> {
    /// `params.preconditioner` (Jacobi or block Jacobi), applied in the given form.
    Blocks(PrecondForm),
    /// One V-cycle of this hierarchy, refreshed for the system first.
    Multigrid {
        mg: &'m mut Multigrid,
        positions: &'m [Vector3<f64>],
    },
}

/// Validates, sizes the workspace, builds or refreshes the preconditioner and iterates.
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve_with(
    dv: &mut [Vector3<f64>],
    a: &BlockMatrix,
    b: &[Vector3<f64>],
    z: &[Vector3<f64>],
    constraints: &[Constraint],
    params: &PcgParams,
    ws: &mut PcgWorkspace,
    apply: Apply<'_>,
    reference: Reference,
) -> Result<PcgInfo, SolverError> {
    validate_inputs(dv, a, b, z, constraints)?;
    if params.tolerance < 0.0 || !params.tolerance.is_finite() {
        return Err(SolverError::InvalidParameter {
            name: "tolerance",
            reason: "must be finite and >= 0",
        });
    }
    ws.resize(a.n(), matches!(apply, Apply::Blocks(_)));
    // Run the whole iteration on a rayon worker: the many short parallel passes are then
    // scheduled locally instead of each being injected from (and waited on by) an outside
    // thread, which costs a futex wake-up per pass.
    rayon::scope(|_| match apply {
        Apply::Blocks(form) => {
            build_preconditioner(
                a,
                constraints,
                params.preconditioner,
                form,
                &mut ws.pinv,
                &mut ws.errs,
            )?;
            iterate(
                dv,
                a,
                b,
                z,
                constraints,
                params,
                ws,
                Precond::Blocks,
                reference,
            )
        }
        Apply::Multigrid { mg, positions } => {
            mg.refresh(a, positions, constraints)?;
            iterate(
                dv,
                a,
                b,
                z,
                constraints,
                params,
                ws,
                Precond::Multigrid(mg),
                reference,
            )
        }
    })
}

/// The preconditioner inside [`iterate`].
enum Precond<'m> {
    /// `s = S pinv r` with the workspace's `pinv` blocks, fused with the vector updates.
    Blocks,
    /// `s = S V r`, one V-cycle.
    Multigrid(&'m mut Multigrid),
}

/// The iteration proper (inputs already validated, workspace sized).
#[allow(clippy::too_many_arguments)]
fn iterate(
    dv: &mut [Vector3<f64>],
    a: &BlockMatrix,
    b: &[Vector3<f64>],
    z: &[Vector3<f64>],
    constraints: &[Constraint],
    params: &PcgParams,
    ws: &mut PcgWorkspace,
    mut pre: Precond<'_>,
    reference: Reference,
) -> Result<PcgInfo, SolverError> {
    #[cfg(test)]
    let n = a.n();
    let op = FineOp {
        a,
        cons: constraints,
    };
    let PcgWorkspace {
        r,
        s,
        c,
        q,
        y,
        pinv,
        partials,
        errs: _,
    } = ws;
    let pinv: &[Matrix3<f64>] = pinv;

    // r0 = S (b - A z); s0 = S M^-1 r0; delta = r0 . s0.
    match &mut pre {
        Precond::Blocks => {
            r.par_chunks_mut(ROW_CHUNK)
                .zip(s.par_chunks_mut(ROW_CHUNK))
                .enumerate()
                .map(|(ci, (rs, ss))| {
                    let base = ci * ROW_CHUNK;
                    let mut acc = 0.0;
                    for (o, (ri, si)) in rs.iter_mut().zip(ss.iter_mut()).enumerate() {
                        let i = base + o;
                        let con = &constraints[i];
                        *ri = con.filter(&(b[i] - a.row_times(i, z)));
                        *si = con.filter(&(pinv[i] * *ri));
                        acc += ri.dot(si);
                    }
                    acc
                })
                .collect_into_vec(partials);
        }
        Precond::Multigrid(mg) => {
            r.par_chunks_mut(ROW_CHUNK)
                .enumerate()
                .for_each(|(ci, rs)| {
                    let base = ci * ROW_CHUNK;
                    for (o, ri) in rs.iter_mut().enumerate() {
                        let i = base + o;
                        *ri = constraints[i].filter(&(b[i] - a.row_times(i, z)));
                    }
                });
            mg.vcycle(&op, r, s);
            filtered_dot(r, s, constraints, partials);
        }
    }
    // r^T S M^-1 r >= 0 exactly; a negative sum can only be rounding of a tiny residual.
    let mut delta_new = sum_in_order(partials).abs();
    if !delta_new.is_finite() {
        return Err(SolverError::NonFinite {
            what: "initial residual (iteration)",
            index: 0,
        });
    }
    let delta0 = match reference {
        Reference::FilteredResidual => delta_new,
        #[cfg(test)]
        Reference::SeedFilteredB => (0..n)
            .map(|i| {
                let fb = constraints[i].filter(&b[i]);
                fb.dot(&constraints[i].filter(&(pinv[i] * fb)))
            })
            .fold(0.0, |acc, v| acc + v),
    };
    let threshold = params.tolerance * params.tolerance * delta0;
    c.copy_from_slice(s);
    let mut iterations = 0;
    while delta_new > threshold && delta_new > 0.0 && iterations < params.max_iterations {
        // q = S A c; curvature = c . q.
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
        let curvature = sum_in_order(partials);
        iterations += 1;
        if curvature <= 0.0 || !curvature.is_finite() {
            return Err(SolverError::NotPositiveDefinite {
                iteration: iterations,
                curvature,
            });
        }
        let alpha = delta_new / curvature;
        // y += alpha c; r -= alpha q; s = S M^-1 r; delta = r . s.
        let (c_ro, q_ro): (&[Vector3<f64>], &[Vector3<f64>]) = (c, q);
        if let Precond::Multigrid(mg) = &mut pre {
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
        let delta_old = delta_new;
        delta_new = sum_in_order(partials);
        if !delta_new.is_finite() {
            return Err(SolverError::NonFinite {
                what: "preconditioned residual norm (iteration)",
                index: iterations,
            });
        }
        if delta_new < 0.0 {
            if let Precond::Multigrid(mg) = &mut pre
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
        c.par_chunks_mut(ROW_CHUNK)
            .zip(s.par_chunks(ROW_CHUNK))
            .for_each(|(cs, ss)| {
                for (ci, si) in cs.iter_mut().zip(ss) {
                    *ci = si + *ci * beta;
                }
            });
    }
    // dv = z + S y: constrained components equal z exactly for free/fixed particles and to
    // rounding for planes/lines.
    let y_ro: &[Vector3<f64>] = y;
    dv.par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .for_each(|(ci, ds)| {
            let base = ci * ROW_CHUNK;
            for (o, di) in ds.iter_mut().enumerate() {
                let i = base + o;
                *di = z[i] + constraints[i].filter(&y_ro[i]);
            }
        });
    let relative_residual = if delta0 > 0.0 {
        (delta_new / delta0).sqrt()
    } else if delta_new == 0.0 {
        0.0
    } else {
        f64::INFINITY
    };
    Ok(PcgInfo {
        iterations,
        relative_residual,
        converged: delta_new <= threshold,
    })
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

/// Constraint forces `e = A dv - b` (Knowl 8), the unfiltered residual. Units follow the
/// caller (with `A` in kg, `dv` in m/s and `b` in N*s, `e` is an impulse in N*s; divide by
/// `h` for a force). For free particles `e_i ~ 0`; for constrained ones it is the
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
