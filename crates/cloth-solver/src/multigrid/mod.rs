//! Smoothed-aggregation algebraic multigrid (SA-AMG) preconditioner for the pre-filtered
//! system of the modified PCG (Tamstorf, Jones & McCormick 2015, "Smoothed aggregation
//! multigrid for cloth simulation").
//!
//! # Hierarchy
//! * **Operator.** The fine level is the pre-filtered matrix `A_f = S A S + (I - S)` (a view of
//!   the caller's [`BlockMatrix`] and constraints): SPD whenever `A` is SPD on the free
//!   subspace, equal to `S A S` on the range of `S`, the identity on the constrained
//!   components. Every fine-level vector of the cycle stays in the range of `S`.
//! * **Aggregation** (symbolic): greedy three-pass aggregation of the strength graph
//!   `|A_ij|_F >= theta sqrt(|A_ii|_F |A_jj|_F)` (Vanek, Mandel & Brezina 1996).
//! * **Near-null space** ([`NearNullSpace`]): the three translations of each aggregate (the
//!   default), or its six rigid-body modes (three translations, three rotations about the
//!   aggregate's centroid, from the particle positions), filtered by `S_i`, orthonormalised
//!   per aggregate (thin QR; columns a small, collinear or constrained aggregate cannot carry
//!   are dropped). Coarse levels use the `R` factors as candidates, so every coarse node has
//!   3 (or 6) unknowns.
//! * **Prolongator:** `P = S (I - omega D_f^-1 A_f) T`, `omega = (4/3) / lambda_max(D_f^-1 A_f)`
//!   (Lanczos estimate), `D_f` the 3x3 (coarse: 3x3 or 6x6) block diagonal of `A_f`.
//! * **Coarse operators:** Galerkin `A_c = P^T A_f P`, unknowns whose prolongator column
//!   vanishes (aggregates of fixed particles) get a unit diagonal, so every level is SPD.
//!   The coarsest level (at most [`MultigridParams::coarse_size`] unknowns) is factorised
//!   densely (faer Cholesky).
//! * **Cycle:** one V-cycle per PCG iteration, with the same symmetric smoother before and
//!   after the coarse correction ([`Smoother`]), so the preconditioner is SPD.
//!
//! # Constraints
//! The constraints enter the hierarchy, not only the outer iteration: candidates, prolongator
//! and Galerkin products are built from the filtered operator, so coarse corrections never
//! move a constrained component, and the multigrid approximates the inverse of the very
//! operator the PCG iterates with. Tamstorf et al. show this pre-filtering is essential for
//! strong preconditioners: a hierarchy built on the unfiltered `A` and filtered afterwards
//! treats every fixed particle as free and loses most of its effect near constraints.
//!
//! # Smoother safety
//! A V-cycle is symmetric positive definite when every smoother converges, i.e. when the
//! Chebyshev interval reaches above the largest eigenvalue of `D^-1 A` of its level. The
//! interval's top is a padded 6-step Lanczos estimate, which can miss an eigenvector
//! localised at a few nodes (on a strongly twisted garment it can fall a quarter short of
//! the converged estimate, and the PCG then meets `r . V r < 0`). The PCG detects this;
//! [`crate::solve_mpcg_multigrid`] then solves again with the intervals topped by a
//! guaranteed bound (the block row sums of `L^-1 A L^-T`, `D = L L^T`), which is larger, so
//! its smoothing is weaker (about twice the iterations): used for that retry and the next 16
//! solves, after which the Lanczos estimate is used again.
//!
//! # Reuse
//! [`Multigrid::new`] does the symbolic work once per matrix pattern (aggregates, patterns of
//! `P`, `A P` and `P^T A P`, colourings) from the matrix values it is given (the strength of
//! connection). [`solve_mpcg_multigrid`] refreshes the numeric part on every call; by default
//! all of it, or, per [`MultigridParams::reuse`], keeping the prolongators (or the whole
//! coarse hierarchy) for a number of solves while the constraints do not change.

mod aggregate;
mod bsr;
mod cycle;
mod hierarchy;
mod level;
mod ops;
mod params;

use std::time::Instant;

use cloth_mesh::Par;
use nalgebra::Vector3;

use crate::system::{check_len, check_positions};
use crate::{BlockMatrix, Constraint, SolverError};
use hierarchy::{Hierarchy, Levels, Refresh};
pub(crate) use ops::FineOp;
pub use params::{MultigridParams, NearNullSpace, Reuse, Smoother};

/// What the last numeric setup of a [`Multigrid`] did, and how long it took.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct MultigridSetupInfo {
    /// Wall-clock seconds of the numeric setup (s).
    pub seconds: f64,
    /// Whether the prolongators were rebuilt (candidates, QR, smoothing).
    pub rebuilt_prolongators: bool,
    /// Whether the coarse operators were recomputed (Galerkin products, coarsest factor).
    pub recomputed_coarse: bool,
}

/// Runs `$body` with `$h` bound to the hierarchy inside `$levels`, whatever its `D`.
macro_rules! with_hierarchy {
    ($levels:expr, $h:ident => $body:expr) => {
        match $levels {
            Levels::Translations($h) => $body,
            Levels::RigidBody($h) => $body,
        }
    };
}

/// Smoothed-aggregation multigrid hierarchy for one matrix pattern, used as the
/// preconditioner of [`solve_mpcg_multigrid`](crate::solve_mpcg_multigrid).
///
/// Build it once per pattern with [`Multigrid::new`] (symbolic analysis); every solve then
/// refreshes the values. See the module documentation of the crate for the method and how
/// constraints are handled.
#[derive(Clone, Debug)]
pub struct Multigrid {
    params: MultigridParams,
    row_ptr: Vec<usize>,
    cols: Vec<usize>,
    levels: Levels,
    /// Constraints the current prolongators were built with.
    built_with: Vec<Constraint>,
    /// Solves since the prolongators were built (`usize::MAX`: none built).
    age: usize,
    last_setup: MultigridSetupInfo,
    /// Solves left that tune the smoothers with the guaranteed bound instead of the Lanczos
    /// estimate (set by the retry of a solve whose V-cycle was not positive definite).
    bounded_left: usize,
    /// Whether the current smoother data come from the bound.
    built_bounded: bool,
    /// Set by the PCG when the V-cycle gave `r . V r < 0` beyond rounding.
    vcycle_failed: bool,
    /// Solves retried with bounded smoothers.
    retries: usize,
}

impl Multigrid {
    /// Analyses the pattern of `a` and builds the hierarchy (symbolic part; the numeric part
    /// is computed too, for `constraints`, because the strength of connection of the coarse
    /// levels needs coarse values). `positions` (m, one per particle) give the rotation
    /// modes of [`NearNullSpace::RigidBody`] (checked, unused with translations). The result
    /// can be used with any matrix of the same pattern and any constraints.
    ///
    /// Pass the first system's constraints: `a` then only needs to be positive definite on
    /// their free subspace, as for the solve (an `A` that is indefinite in a pinned direction
    /// is fine), and a first solve with the same constraints can keep the prolongators (see
    /// [`MultigridParams::reuse`]).
    ///
    /// Unlike [`crate::DirectSolver::new`], this needs representative *values* in `a` (e.g.
    /// the first step's matrix), not only its pattern: the aggregates follow the strong
    /// couplings, and they are kept for every later matrix of the pattern. An all-zero `a`
    /// is reported as not positive definite.
    ///
    /// Runs with parallelism `par`; the hierarchy does not depend on it.
    ///
    /// # Errors
    /// [`SolverError::InvalidParameter`] for out-of-range `params`;
    /// [`SolverError::DimensionMismatch`] / [`SolverError::NonFinite`] for `positions` or
    /// `constraints` of the wrong length or a non-finite `a` or `positions`;
    /// [`SolverError::InvalidConstraint`]; the positive-definiteness errors of a numeric
    /// refresh.
    pub fn new(
        a: &BlockMatrix,
        positions: &[Vector3<f64>],
        constraints: &[Constraint],
        params: &MultigridParams,
        par: Par,
    ) -> Result<Self, SolverError> {
        params.validate()?;
        let n = a.n();
        check_positions(n, positions)?;
        check_len("constraints", n, constraints.len())?;
        for (i, c) in constraints.iter().enumerate() {
            c.validate(i)?;
        }
        if let Some(i) = a.first_non_finite_row() {
            return Err(SolverError::NonFinite {
                what: "matrix block row",
                index: i,
            });
        }
        par.install(|| rayon::scope(|_| Self::build(a, positions, constraints, params)))
    }

    fn build(
        a: &BlockMatrix,
        positions: &[Vector3<f64>],
        constraints: &[Constraint],
        params: &MultigridParams,
    ) -> Result<Self, SolverError> {
        let levels = match params.near_null_space {
            NearNullSpace::Translations => {
                Levels::Translations(Hierarchy::build(a, positions, constraints, params)?)
            }
            NearNullSpace::RigidBody => {
                Levels::RigidBody(Hierarchy::build(a, positions, constraints, params)?)
            }
        };
        let (row_ptr, cols) = a.pattern();
        Ok(Multigrid {
            params: *params,
            row_ptr: row_ptr.to_vec(),
            cols: cols.to_vec(),
            levels,
            built_with: constraints.to_vec(),
            age: 0,
            last_setup: MultigridSetupInfo {
                seconds: 0.0,
                rebuilt_prolongators: true,
                recomputed_coarse: true,
            },
            bounded_left: 0,
            built_bounded: false,
            vcycle_failed: false,
            retries: 0,
        })
    }

    /// Whether `a` has the pattern this hierarchy was built for.
    pub fn matches(&self, a: &BlockMatrix) -> bool {
        let (row_ptr, cols) = a.pattern();
        row_ptr == self.row_ptr.as_slice() && cols == self.cols.as_slice()
    }

    /// The parameters the hierarchy was built with.
    pub fn params(&self) -> &MultigridParams {
        &self.params
    }

    /// Number of levels (1 = no coarsening).
    pub fn levels(&self) -> usize {
        with_hierarchy!(&self.levels, h => h.levels())
    }

    /// Unknowns per level, finest first (3 per particle, then 3 or 6 per aggregate, see
    /// [`NearNullSpace`]).
    pub fn level_unknowns(&self) -> Vec<usize> {
        let mut v = vec![3 * (self.row_ptr.len() - 1)];
        with_hierarchy!(&self.levels, h => v.extend(h.coarse_unknowns()));
        v
    }

    /// Operator complexity: stored scalar entries of all coarse operators plus the fine one,
    /// divided by those of the fine operator (dimensionless, >= 1).
    pub fn operator_complexity(&self) -> f64 {
        let fine = 9.0 * (self.row_ptr.len() - 1 + self.cols.len()) as f64;
        let coarse = with_hierarchy!(&self.levels, h => h.coarse_entries());
        (fine + coarse) / fine.max(1.0)
    }

    /// Bytes held by the hierarchy (patterns, prolongators, coarse operators, scratch, work
    /// vectors and the coarsest factor); excludes the caller's matrix and PCG workspace.
    pub fn memory_bytes(&self) -> usize {
        (self.row_ptr.len() + self.cols.len()) * size_of::<usize>()
            + self.built_with.len() * size_of::<Constraint>()
            + with_hierarchy!(&self.levels, h => h.memory_bytes())
    }

    /// Bytes per component (for the benches' memory table): pattern copy, level-0 transfer
    /// (aggregates, tentative, P, P^T lists, A P scratch), level-0 smoother, coarse operators,
    /// coarse transfers and smoothers, coarsest factor.
    #[doc(hidden)]
    pub fn memory_breakdown(&self) -> Vec<(&'static str, usize)> {
        let mut v = vec![(
            "pattern copy",
            (self.row_ptr.len() + self.cols.len()) * size_of::<usize>(),
        )];
        with_hierarchy!(&self.levels, h => h.memory_breakdown(&mut v));
        v
    }

    /// Solves so far whose V-cycle was not positive definite with smoothers tuned by the
    /// Lanczos estimate and that were solved again with the guaranteed bound (see
    /// [`solve_mpcg_multigrid`](crate::solve_mpcg_multigrid)).
    pub fn bounded_retries(&self) -> usize {
        self.retries
    }

    /// Records that the V-cycle was found not positive definite (called by the PCG).
    pub(crate) fn vcycle_not_positive(&mut self) {
        self.vcycle_failed = true;
    }

    /// Runs `solve` (one preconditioned solve with this hierarchy) under the retry policy of
    /// [`crate::solve_mpcg_multigrid`]: a solve whose V-cycle was found not positive definite
    /// ([`Multigrid::vcycle_not_positive`]) runs again with every smoother tuned by the
    /// guaranteed bound of the spectrum, and the next [`BOUNDED_SOLVES`] solves keep the bound.
    pub(crate) fn with_retry<T>(
        &mut self,
        mut solve: impl FnMut(&mut Multigrid) -> Result<T, SolverError>,
    ) -> Result<T, SolverError> {
        self.vcycle_failed = false;
        if self.bounded_left > 0 {
            let solved = solve(self);
            self.bounded_left -= 1;
            return solved;
        }
        let first = solve(self);
        if !(self.vcycle_failed && matches!(first, Err(SolverError::NotPositiveDefinite { .. }))) {
            return first;
        }
        // The Lanczos estimate missed the top of a level's spectrum (an eigenvector localised
        // at a few nodes): solve again, dv untouched, with every smoother tuned by the bound,
        // and keep the bound for the next solves (such systems come in runs).
        self.retries += 1;
        self.bounded_left = BOUNDED_SOLVES;
        self.vcycle_failed = false;
        solve(self)
    }

    /// What the last numeric setup (inside [`solve_mpcg_multigrid`](crate::solve_mpcg_multigrid), or [`Multigrid::new`])
    /// did and how long it took (see [`MultigridParams::reuse`]).
    pub fn last_setup(&self) -> MultigridSetupInfo {
        self.last_setup
    }

    /// Numeric refresh for matrix `a` (pattern already checked), constraints and positions;
    /// with `only_fine`, the coarse levels are kept whatever the reuse policy and the
    /// constraints (see [`crate::MultigridOn::only_fine`]).
    pub(crate) fn refresh(
        &mut self,
        a: &BlockMatrix,
        positions: &[Vector3<f64>],
        constraints: &[Constraint],
        only_fine: bool,
    ) -> Result<(), SolverError> {
        let start = Instant::now();
        let prev_age = self.age;
        let bounded = self.bounded_left > 0;
        let kept = only_fine && prev_age != usize::MAX && self.built_bounded == bounded;
        let fresh = !kept
            && (prev_age == usize::MAX
                || self.built_with.as_slice() != constraints
                || self.built_bounded != bounded);
        let (keep_p, keep_coarse) = match self.params.reuse {
            _ if kept => (true, true),
            Reuse::Nothing => (false, false),
            Reuse::Prolongators { solves } => (prev_age + 1 < solves, false),
            Reuse::Hierarchy { solves } => (prev_age + 1 < solves, prev_age + 1 < solves),
        };
        let rebuild = fresh || !keep_p;
        let galerkin = fresh || !keep_coarse;
        // A failure below leaves the prolongators half-built: force a rebuild next time.
        self.age = usize::MAX;
        let op0 = FineOp {
            a,
            cons: constraints,
        };
        let params = self.params;
        self.built_bounded = bounded;
        let how = Refresh {
            params: &params,
            rebuild,
            galerkin,
            bounded,
        };
        with_hierarchy!(&mut self.levels, h => h.refresh(&op0, positions, how))?;
        if rebuild {
            self.built_with.clear();
            self.built_with.extend_from_slice(constraints);
            self.age = 0;
        } else {
            self.age = prev_age + 1;
        }
        self.last_setup = MultigridSetupInfo {
            seconds: start.elapsed().as_secs_f64(),
            rebuilt_prolongators: rebuild,
            recomputed_coarse: galerkin,
        };
        Ok(())
    }

    /// One V-cycle: `x = V b` for a fine-level `b` in the range of `S` (result in that range).
    pub(crate) fn vcycle(
        &mut self,
        op0: &FineOp<'_>,
        b0: &[Vector3<f64>],
        x0: &mut [Vector3<f64>],
    ) {
        let kind = self.params.smoother;
        with_hierarchy!(&mut self.levels, h => h.vcycle(kind, op0, b0, x0));
    }
}

/// Solves after a retry that keep the smoothers tuned by the guaranteed bound (see
/// [`Multigrid::with_retry`]): systems whose V-cycle needs the bound come in runs.
const BOUNDED_SOLVES: usize = 16;
