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
//! localised at a few nodes (on a T-shirt twisted on a mannequin, 6,255 vertices, it fell up
//! to 25% short of a 60-step estimate, and the PCG met `r . V r < 0`). The PCG detects this;
//! [`solve_mpcg_multigrid`] then solves again with the intervals topped by a guaranteed
//! bound (the block row sums of `L^-1 A L^-T`, `D = L L^T`), which is larger, so its
//! smoothing is weaker (17-26 instead of about 10 iterations there): used for that retry and
//! the next 16 solves, then the Lanczos estimate is tried again.
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
mod level;
mod ops;

use std::time::Instant;

use cloth_mesh::Par;
use nalgebra::{SMatrix, Vector3};

use crate::pcg::{Apply, Reference, check_len, solve_with};
use crate::{BlockMatrix, Constraint, PcgInfo, PcgParams, PcgWorkspace, SolverError};
use cycle::{Coarsest, postsmooth, presmooth};
use level::{Level, Vecs, rigid_block, rigid_centres};
pub(crate) use ops::FineOp;
use ops::{CoarseOp, Operator};

/// Chebyshev smoothing targets `[l / ratio, l]` with `l` this factor times the Lanczos
/// estimate of `lambda_max(D_f^-1 A_f)`: a Chebyshev polynomial amplifies eigen-components
/// above its interval (by 1.5x at 10% above, degree 2), so the estimate, which may be a few
/// percent low, is padded (pyamg and hypre pad by 1.1 as well).
const CHEBYSHEV_PAD: f64 = 1.1;

/// Largest coarsest level (unknowns) factorised densely; a coarsest level left larger (when
/// coarsening stalls, e.g. on an almost diagonal matrix) is smoothed instead.
const DENSE_LIMIT: usize = 3000;

/// Smoother of every level but the coarsest. Both kinds give a symmetric V-cycle.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Smoother {
    /// Chebyshev polynomial of `degree` (>= 1) in `D_f^-1 A_f` (block-Jacobi preconditioned),
    /// targeting the eigenvalues in `[lambda_max / ratio, lambda_max]` (`ratio > 1`,
    /// dimensionless; `lambda_max` from Lanczos). Costs `degree` matrix products before and
    /// after the coarse correction; fully parallel (Adams, Brezina, Hu & Tuminaro 2003,
    /// "Parallel multigrid smoothing: polynomial versus Gauss-Seidel").
    Chebyshev {
        /// Polynomial degree (matrix products per smoothing), >= 1.
        degree: usize,
        /// Ratio of the largest to the smallest eigenvalue targeted, > 1.
        ratio: f64,
    },
    /// Multicolour block Gauss-Seidel: `sweeps` forward sweeps before the coarse correction,
    /// as many backward sweeps after (the adjoint). Colours from a greedy colouring of the
    /// pattern (deterministic); one matrix product per sweep.
    GaussSeidel {
        /// Sweeps before (and after) the coarse correction, >= 1.
        sweeps: usize,
    },
}

/// What [`solve_mpcg_multigrid`] may keep from the previous solve's numeric setup. The
/// symbolic part (aggregates and patterns) is always kept while the matrix pattern holds;
/// anything kept is rebuilt at once when the constraints change (prolongators must map into
/// the range of the new filter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reuse {
    /// Recompute everything numeric on every solve: candidates from the new positions,
    /// prolongators, Galerkin products, smoothers, coarsest factor.
    Nothing,
    /// Keep the smoothed prolongators for `solves` solves (>= 1; rebuilt on the first);
    /// Galerkin products, smoothers and the coarsest factor are recomputed on every solve,
    /// so the V-cycle stays an exact Galerkin hierarchy of the current matrix.
    Prolongators {
        /// Lifetime of a prolongator in solves.
        solves: usize,
    },
    /// Keep prolongators and coarse operators for `solves` solves (>= 1); only the fine
    /// level's smoother (block diagonal, spectral estimate) follows the current matrix. The
    /// preconditioner stays symmetric positive definite (a V-cycle with any SPD coarse
    /// operators is), but its coarse levels lag behind the matrix.
    Hierarchy {
        /// Lifetime of the hierarchy in solves.
        solves: usize,
    },
}

/// The near-null-space vectors each aggregate carries to the coarse level: what the coarse
/// levels can correct cheaply. Either choice is filtered by the constraints (`S_i`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum NearNullSpace {
    /// The three translations: 3 coarse unknowns per aggregate, `3 x 3` coarse blocks (the
    /// default). On cloth matrices it takes about one iteration more than
    /// [`NearNullSpace::RigidBody`] (sometimes none), and each setup and iteration costs much
    /// less: 1.4-1.9x faster per solve from 2.6k to 100k vertices (crate README).
    #[default]
    Translations,
    /// The six rigid-body modes (three translations, three rotations about the aggregate's
    /// centroid): 6 coarse unknowns per aggregate, `6 x 6` coarse blocks, the choice of
    /// Tamstorf, Jones & McCormick (2015).
    RigidBody,
}

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

/// Parameters of the smoothed-aggregation hierarchy ([`Multigrid`]).
///
/// Defaults were chosen by measurement (`cargo bench -p cloth-solver --bench multigrid`) on
/// cloth matrices `A = M - h df/dv - h^2 df/dx` (cotton, denim, silk; h = 1/30 and 1/120 s;
/// 2.6k-100k vertices; contact bands and sliding edges): total CPU time per solve, setup
/// included, at relative residual 1e-3. See the crate README for the tables.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MultigridParams {
    /// Strength threshold `theta` (dimensionless, in `[0, 1)`): particles `i`, `j` may share
    /// an aggregate when `|A_ij|_F >= theta sqrt(|A_ii|_F |A_jj|_F)`, and only strong blocks
    /// spread the prolongator. Default 0.05: on cloth it drops the bending-only couplings
    /// (across a hinge), so aggregates follow the membrane; 0 (aggregate along every block)
    /// needs twice the iterations at 40k vertices, 0.02-0.1 are within 10% of each other.
    pub strength_threshold: f64,
    /// Smoother. Default `Chebyshev { degree: 1, ratio: 30 }`, i.e. block-Jacobi smoothing
    /// weighted by `omega = 2 / (lambda (1 + 1/30))`: it needs ~30% more iterations than
    /// degree 2 but each costs ~40% less, 10-25% faster overall from 2.6k to 100k vertices;
    /// multicolour Gauss-Seidel converges like degree 2 but its scattered access makes it
    /// 1.5-2x slower per iteration. The ratio hardly matters (2-30 within noise).
    pub smoother: Smoother,
    /// Maximum number of levels, >= 1 (1 = smoother or dense solve only). Default 10.
    pub max_levels: usize,
    /// Coarsening stops once a level has at most this many unknowns (3 per fine particle, 6
    /// per coarse node); that level is factorised densely (if it has at most 3000 unknowns;
    /// a larger one, left when coarsening stalls, is smoothed instead). Default 300: 100 and
    /// 1000 measured the same.
    pub coarse_size: usize,
    /// Prolongator damping `c` in `omega = c / lambda_max(D_f^-1 A_f)` (dimensionless, in
    /// `(0, 2)`). Default 4/3, the value that minimises the energy of the smoothed basis for
    /// model problems (Vanek, Mandel & Brezina 1996).
    pub prolongator_damping: f64,
    /// Lanczos steps of the spectral estimate `lambda_max(D_f^-1 A_f)` per level, >= 1; each
    /// costs one product with the level's operator. Default 6: on cloth matrices the estimate
    /// is then within 1-3% of its converged value (10 steps: within 1%).
    pub lanczos_steps: usize,
    /// What a solve may keep from the previous numeric setup. Default [`Reuse::Nothing`]: on
    /// a moving sheet with fixed constraints, keeping the prolongators or the hierarchy for 2
    /// solves saves at most ~10% of a solve (setup is under half of it), keeping the
    /// hierarchy for 4 solves costs 1.5-1.8x the iterations, and a constraint change (contact)
    /// forces a rebuild anyway.
    pub reuse: Reuse,
    /// Near-null space of the aggregates. Default [`NearNullSpace::Translations`].
    pub near_null_space: NearNullSpace,
}

impl Default for MultigridParams {
    fn default() -> Self {
        MultigridParams {
            strength_threshold: 0.05,
            smoother: Smoother::Chebyshev {
                degree: 1,
                ratio: 30.0,
            },
            max_levels: 10,
            coarse_size: 300,
            prolongator_damping: 4.0 / 3.0,
            lanczos_steps: 6,
            reuse: Reuse::Nothing,
            near_null_space: NearNullSpace::Translations,
        }
    }
}

impl MultigridParams {
    fn validate(&self) -> Result<(), SolverError> {
        let bad = |name, reason| Err(SolverError::InvalidParameter { name, reason });
        if !(self.strength_threshold >= 0.0 && self.strength_threshold < 1.0) {
            return bad("strength_threshold", "must be in [0, 1)");
        }
        match self.smoother {
            Smoother::Chebyshev { degree, ratio } => {
                if degree == 0 {
                    return bad("smoother.degree", "must be >= 1");
                }
                if !(ratio > 1.0 && ratio.is_finite()) {
                    return bad("smoother.ratio", "must be finite and > 1");
                }
            }
            Smoother::GaussSeidel { sweeps } => {
                if sweeps == 0 {
                    return bad("smoother.sweeps", "must be >= 1");
                }
            }
        }
        if self.max_levels == 0 {
            return bad("max_levels", "must be >= 1");
        }
        if !(self.prolongator_damping > 0.0 && self.prolongator_damping < 2.0) {
            return bad("prolongator_damping", "must be in (0, 2)");
        }
        if self.lanczos_steps == 0 {
            return bad("lanczos_steps", "must be >= 1");
        }
        match self.reuse {
            Reuse::Prolongators { solves: 0 } | Reuse::Hierarchy { solves: 0 } => {
                return bad("reuse.solves", "must be >= 1");
            }
            _ => {}
        }
        Ok(())
    }
}

/// A coarse level: its Galerkin operator and its smoother/transfer data.
#[derive(Clone, Debug)]
struct CoarseLevel<const D: usize> {
    op: CoarseOp<D>,
    level: Level<D, D>,
}

/// The levels of a hierarchy with `D` near-null-space vectors per aggregate (3 or 6).
#[derive(Clone, Debug)]
struct Hierarchy<const D: usize> {
    fine: Level<3, D>,
    coarse: Vec<CoarseLevel<D>>,
    coarsest: Coarsest,
}

/// The hierarchy, by near-null space ([`NearNullSpace`]).
#[derive(Clone, Debug)]
enum Levels {
    Translations(Hierarchy<3>),
    RigidBody(Hierarchy<6>),
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
/// preconditioner of [`solve_mpcg_multigrid`].
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

/// Candidate source for a refresh that does not rebuild prolongators (never called).
fn unreachable_cand<const D: usize>() -> SMatrix<f64, 3, D> {
    SMatrix::zeros()
}

fn check_positions(n: usize, positions: &[Vector3<f64>]) -> Result<(), SolverError> {
    check_len("positions", n, positions.len())?;
    match positions
        .iter()
        .position(|p| !p.iter().all(|v| v.is_finite()))
    {
        Some(index) => Err(SolverError::NonFinite {
            what: "positions",
            index,
        }),
        None => Ok(()),
    }
}

/// Numeric refresh of a level with a transfer: smoother data, and either a new prolongator
/// (returning the next level's candidates) or the kept one; then the Galerkin product.
#[allow(clippy::too_many_arguments)]
fn refresh_transfer<const B: usize, const D: usize, O: Operator<B>>(
    level: &mut Level<B, D>,
    op: &O,
    index: usize,
    params: &MultigridParams,
    rebuild: bool,
    galerkin: bool,
    bounded: bool,
    cand: impl Fn(usize, usize) -> SMatrix<f64, B, D> + Sync,
    coarse: &mut CoarseOp<D>,
) -> Result<Option<Vec<SMatrix<f64, D, D>>>, SolverError> {
    level.invert_diagonal(op, index)?;
    let chebyshev = matches!(params.smoother, Smoother::Chebyshev { .. });
    if rebuild || chebyshev {
        level.smooth.lambda = top_of_spectrum(level, op, params, bounded);
    }
    let Some(tr) = level.transfer.as_mut() else {
        return Ok(None);
    };
    if !galerkin {
        return Ok(None);
    }
    let next = if rebuild {
        let r = tr.fit(cand);
        let omega = params.prolongator_damping / level.smooth.lambda * CHEBYSHEV_PAD;
        tr.smooth_prolongator(op, &level.smooth.dinv, omega);
        Some(r)
    } else {
        None
    };
    tr.galerkin(op, coarse);
    Ok(next)
}

/// The top of the smoother's interval: the padded Lanczos estimate, or, when `bounded`, the
/// guaranteed bound [`Level::lambda_bound`] (diagonal inverses must be current).
fn top_of_spectrum<const B: usize, const D: usize, O: Operator<B>>(
    level: &mut Level<B, D>,
    op: &O,
    params: &MultigridParams,
    bounded: bool,
) -> f64 {
    if bounded {
        level.lambda_bound(op)
    } else {
        CHEBYSHEV_PAD * level.estimate_lambda(op, params.lanczos_steps)
    }
}

/// Numeric refresh of the coarsest level: smoother data (for [`Coarsest::Smooth`]) and the
/// dense factor.
fn refresh_coarsest<const B: usize, const D: usize, O: Operator<B>>(
    level: &mut Level<B, D>,
    coarsest: &mut Coarsest,
    op: &O,
    index: usize,
    params: &MultigridParams,
    bounded: bool,
) -> Result<(), SolverError> {
    if let Coarsest::Smooth = coarsest {
        level.invert_diagonal(op, index)?;
        if matches!(params.smoother, Smoother::Chebyshev { .. }) {
            level.smooth.lambda = top_of_spectrum(level, op, params, bounded);
        }
    }
    coarsest.factor(op, index)
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
        with_hierarchy!(&self.levels, h => 1 + h.coarse.len())
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
    /// [`solve_mpcg_multigrid`]).
    pub fn bounded_retries(&self) -> usize {
        self.retries
    }

    /// Records that the V-cycle was found not positive definite (called by the PCG).
    pub(crate) fn vcycle_not_positive(&mut self) {
        self.vcycle_failed = true;
    }

    /// What the last numeric setup (inside [`solve_mpcg_multigrid`], or [`Multigrid::new`])
    /// did and how long it took (see [`MultigridParams::reuse`]).
    pub fn last_setup(&self) -> MultigridSetupInfo {
        self.last_setup
    }

    /// Numeric refresh for matrix `a` (pattern already checked), constraints and positions.
    pub(crate) fn refresh(
        &mut self,
        a: &BlockMatrix,
        positions: &[Vector3<f64>],
        constraints: &[Constraint],
    ) -> Result<(), SolverError> {
        let start = Instant::now();
        let prev_age = self.age;
        let bounded = self.bounded_left > 0;
        let fresh = prev_age == usize::MAX
            || self.built_with.as_slice() != constraints
            || self.built_bounded != bounded;
        let (keep_p, keep_coarse) = match self.params.reuse {
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
        with_hierarchy!(&mut self.levels, h => {
            h.refresh(&op0, positions, &params, rebuild, galerkin, bounded)
        })?;
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

impl<const D: usize> Hierarchy<D> {
    fn build(
        a: &BlockMatrix,
        positions: &[Vector3<f64>],
        constraints: &[Constraint],
        params: &MultigridParams,
    ) -> Result<Self, SolverError> {
        let n = a.n();
        let op0 = FineOp {
            a,
            cons: constraints,
        };
        let theta = params.strength_threshold;
        let coarsen =
            |dofs: usize, index: usize| dofs > params.coarse_size && index + 1 < params.max_levels;
        let (mut fine, first) = Level::<3, D>::symbolic(&op0, coarsen(3 * n, 0), theta, true);
        let mut coarse: Vec<CoarseLevel<D>> = Vec::new();
        let coarsest;
        match first {
            None => {
                coarsest = Coarsest::new(3 * n, DENSE_LIMIT);
            }
            Some(mut cop) => {
                let tr = fine
                    .transfer
                    .as_ref()
                    .expect("transfer with a coarse pattern");
                let centres = rigid_centres(positions, tr);
                let mut cand = refresh_transfer(
                    &mut fine,
                    &op0,
                    0,
                    params,
                    true,
                    true,
                    false,
                    |a, i| rigid_block(&op0, i, &positions[i], &centres[a].0, centres[a].1),
                    &mut cop,
                )?
                .expect("rebuilt");
                loop {
                    let index = coarse.len() + 1;
                    let nc = cop.n();
                    let (mut level, next) =
                        Level::<D, D>::symbolic(&cop, coarsen(D * nc, index), theta, false);
                    level.cand = cand;
                    match next {
                        None => {
                            coarse.push(CoarseLevel { op: cop, level });
                            break;
                        }
                        Some(mut next_op) => {
                            let cands = std::mem::take(&mut level.cand);
                            let r = refresh_transfer(
                                &mut level,
                                &cop,
                                index,
                                params,
                                true,
                                true,
                                false,
                                |_, i| cands[i],
                                &mut next_op,
                            )?
                            .expect("rebuilt");
                            level.cand = cands;
                            coarse.push(CoarseLevel { op: cop, level });
                            cop = next_op;
                            cand = r;
                        }
                    }
                }
                let last = coarse.last().expect("at least one coarse level");
                coarsest = Coarsest::new(D * last.op.n(), DENSE_LIMIT);
            }
        }
        let mut h = Hierarchy {
            fine,
            coarse,
            coarsest,
        };
        // Coarsest factor (and smoother data of a single-level hierarchy).
        let nl = h.coarse.len();
        match h.coarse.last_mut() {
            Some(last) => refresh_coarsest(
                &mut last.level,
                &mut h.coarsest,
                &last.op,
                nl,
                params,
                false,
            )?,
            None => {
                refresh_coarsest(&mut h.fine, &mut h.coarsest, &op0, 0, params, false)?;
                h.fine.invert_diagonal(&op0, 0)?;
                h.fine.smooth.lambda =
                    CHEBYSHEV_PAD * h.fine.estimate_lambda(&op0, params.lanczos_steps);
            }
        }
        Ok(h)
    }

    /// Numeric refresh of the levels for the fine operator `op0` (see [`Multigrid::refresh`]):
    /// new prolongators when `rebuild`, new coarse operators when `galerkin`, the fine
    /// smoother always; smoother intervals from the guaranteed bound when `bounded`.
    fn refresh(
        &mut self,
        op0: &FineOp<'_>,
        positions: &[Vector3<f64>],
        params: &MultigridParams,
        rebuild: bool,
        galerkin: bool,
        bounded: bool,
    ) -> Result<(), SolverError> {
        let Hierarchy {
            fine,
            coarse,
            coarsest,
        } = self;
        if coarse.is_empty() {
            fine.invert_diagonal(op0, 0)?;
            if matches!(params.smoother, Smoother::Chebyshev { .. }) {
                fine.smooth.lambda = top_of_spectrum(fine, op0, params, bounded);
            }
            refresh_coarsest(fine, coarsest, op0, 0, params, bounded)?;
        } else if !galerkin {
            // Coarse levels kept: only the fine smoother follows the matrix.
            refresh_transfer(
                fine,
                op0,
                0,
                params,
                false,
                false,
                bounded,
                |_, _| unreachable_cand::<D>(),
                &mut coarse[0].op,
            )?;
        } else {
            let mut cand = {
                let tr = fine
                    .transfer
                    .as_ref()
                    .expect("transfer above a coarse level");
                let centres = if rebuild {
                    rigid_centres(positions, tr)
                } else {
                    Vec::new()
                };
                refresh_transfer(
                    fine,
                    op0,
                    0,
                    params,
                    rebuild,
                    true,
                    bounded,
                    |a, i| rigid_block(op0, i, &positions[i], &centres[a].0, centres[a].1),
                    &mut coarse[0].op,
                )?
            };
            let nl = coarse.len();
            for l in 0..nl - 1 {
                let (lo, hi) = coarse.split_at_mut(l + 1);
                let cl = &mut lo[l];
                if let Some(c) = cand.take() {
                    cl.level.cand = c;
                }
                let cands = std::mem::take(&mut cl.level.cand);
                cand = refresh_transfer(
                    &mut cl.level,
                    &cl.op,
                    l + 1,
                    params,
                    rebuild,
                    true,
                    bounded,
                    |_, i| cands[i],
                    &mut hi[0].op,
                )?;
                cl.level.cand = cands;
            }
            let last = &mut coarse[nl - 1];
            if let Some(c) = cand.take() {
                last.level.cand = c;
            }
            refresh_coarsest(&mut last.level, coarsest, &last.op, nl, params, bounded)?;
        }
        Ok(())
    }

    /// One V-cycle: `x = V b` for a fine-level `b` in the range of `S` (result in that range).
    fn vcycle(
        &mut self,
        kind: Smoother,
        op0: &FineOp<'_>,
        b0: &[Vector3<f64>],
        x0: &mut [Vector3<f64>],
    ) {
        let Hierarchy {
            fine,
            coarse,
            coarsest,
        } = self;
        if coarse.is_empty() {
            let Vecs { r, d, .. } = &mut fine.vecs;
            coarsest.solve(kind, op0, &fine.smooth, b0, x0, r, d);
            return;
        }
        let tr0 = fine
            .transfer
            .as_ref()
            .expect("transfer above a coarse level");
        presmooth(
            kind,
            op0,
            &fine.smooth,
            b0,
            x0,
            &mut fine.vecs.r,
            &mut fine.vecs.d,
        );
        tr0.restrict(&fine.vecs.r, &mut coarse[0].level.vecs.b);
        let nl = coarse.len();
        for l in 0..nl - 1 {
            let (lo, hi) = coarse.split_at_mut(l + 1);
            let cl = &mut lo[l];
            let Vecs { x, b, r, d } = &mut cl.level.vecs;
            presmooth(kind, &cl.op, &cl.level.smooth, b, x, r, d);
            let tr = cl
                .level
                .transfer
                .as_ref()
                .expect("transfer above a coarse level");
            tr.restrict(r, &mut hi[0].level.vecs.b);
        }
        {
            let last = &mut coarse[nl - 1];
            let Vecs { x, b, r, d } = &mut last.level.vecs;
            coarsest.solve(kind, &last.op, &last.level.smooth, b, x, r, d);
        }
        for l in (0..nl - 1).rev() {
            let (lo, hi) = coarse.split_at_mut(l + 1);
            let cl = &mut lo[l];
            let tr = cl
                .level
                .transfer
                .as_ref()
                .expect("transfer above a coarse level");
            let Vecs { x, b, r, d } = &mut cl.level.vecs;
            tr.prolong_add(&hi[0].level.vecs.x, x);
            postsmooth(kind, &cl.op, &cl.level.smooth, b, x, r, d);
        }
        tr0.prolong_add(&coarse[0].level.vecs.x, x0);
        postsmooth(
            kind,
            op0,
            &fine.smooth,
            b0,
            x0,
            &mut fine.vecs.r,
            &mut fine.vecs.d,
        );
    }

    /// Unknowns of the coarse levels, finest first.
    fn coarse_unknowns(&self) -> impl Iterator<Item = usize> + '_ {
        self.coarse.iter().map(|c| D * c.op.n())
    }

    /// Stored scalar entries of the coarse operators.
    fn coarse_entries(&self) -> f64 {
        self.coarse
            .iter()
            .map(|c| (D * D * c.op.full_blocks()) as f64)
            .sum()
    }

    /// Bytes of the levels (see [`Multigrid::memory_bytes`]).
    fn memory_bytes(&self) -> usize {
        let level = |l: &Level<3, D>| {
            l.transfer.as_ref().map_or(0, |t| t.memory_bytes())
                + l.smooth.dinv.len() * size_of::<SMatrix<f64, 3, 3>>()
                + (l.smooth.colour_ptr.len() + l.smooth.colour_nodes.len()) * size_of::<usize>()
                + l.vecs.memory_bytes()
        };
        let clevel = |l: &Level<D, D>| {
            l.transfer.as_ref().map_or(0, |t| t.memory_bytes())
                + l.smooth.dinv.len() * size_of::<SMatrix<f64, D, D>>()
                + (l.smooth.colour_ptr.len() + l.smooth.colour_nodes.len()) * size_of::<usize>()
                + l.vecs.memory_bytes()
                + l.cand.len() * size_of::<SMatrix<f64, D, D>>()
        };
        level(&self.fine)
            + self
                .coarse
                .iter()
                .map(|c| c.op.memory_bytes() + clevel(&c.level))
                .sum::<usize>()
            + self.coarsest.memory_bytes()
    }

    /// Adds the levels' components to `v` (see [`Multigrid::memory_breakdown`]).
    fn memory_breakdown(&self, v: &mut Vec<(&'static str, usize)>) {
        if let Some(t) = &self.fine.transfer {
            v.push(("L0 P", t.p.memory_bytes()));
            v.push(("L0 AP pattern", (t.ap_ptr.len() + t.ap_cols.len()) * 8));
            v.push(("L0 P^T", t.pt.memory_bytes()));
            v.push(("L0 tent", t.tent.len() * size_of::<SMatrix<f64, 3, D>>()));
        }
        v.push((
            "L0 smoother+vecs",
            self.fine.smooth.dinv.len() * 72
                + (self.fine.smooth.colour_nodes.len() * 8)
                + self.fine.vecs.memory_bytes(),
        ));
        v.push((
            "coarse ops",
            self.coarse.iter().map(|c| c.op.memory_bytes()).sum(),
        ));
        v.push((
            "coarse transfers",
            self.coarse
                .iter()
                .map(|c| c.level.transfer.as_ref().map_or(0, |t| t.memory_bytes()))
                .sum(),
        ));
        v.push(("coarsest", self.coarsest.memory_bytes()));
    }
}

/// Solves after a retry that keep the smoothers tuned by the guaranteed bound (see
/// [`solve_mpcg_multigrid`]): a twisted T-shirt met 117 retries in 20 frames without it.
const BOUNDED_SOLVES: usize = 16;

/// Modified PCG (as [`crate::solve_mpcg`]) preconditioned by one smoothed-aggregation V-cycle
/// per iteration, on the pre-filtered system `(S A S + I - S) y = S (b - A z)`,
/// `dv = z + S y`.
///
/// First refreshes the numeric part of `mg` for `a`, `constraints` and `positions` (m, the
/// particle positions the rotation modes of [`NearNullSpace::RigidBody`] are taken about; see
/// [`MultigridParams::reuse`]),
/// then iterates. `params.preconditioner` is not used
/// (the preconditioner is `mg`); tolerance, stopping test (in the preconditioner norm) and
/// `max_iterations` have the meaning of [`crate::solve_mpcg`], as do units, constraint
/// exactness (`(I - S_i) dv_i = (I - S_i) z_i` whatever the iteration count) and
/// determinism (bit-identical for any thread count).
///
/// # Errors
/// Those of [`crate::solve_mpcg`], plus: [`SolverError::InvalidParameter`] (`name: "a"`) if
/// `a` does not have the pattern `mg` was built for (build a new [`Multigrid`] when the
/// pattern changes); [`SolverError::DimensionMismatch`] / [`SolverError::NonFinite`] for
/// `positions`; [`SolverError::CoarseNotPositiveDefinite`] if a coarse operator is not
/// positive definite. On error `dv` is left unchanged.
///
/// A V-cycle found not positive definite during the iteration (`r . V r < 0` beyond
/// rounding: a smoother tuned by the Lanczos estimate amplifies a mode above that estimate)
/// does not fail the solve: it is solved again from the start with every smoother tuned by
/// the guaranteed bound of the spectrum (counted by [`Multigrid::bounded_retries`]), and the
/// next 16 solves keep the bound (such systems come in runs); only a failure with the bound
/// returns [`SolverError::NotPositiveDefinite`].
#[allow(
    clippy::too_many_arguments,
    reason = "faer's order: output, operator, preconditioner, inputs, parameters, parallelism, scratch"
)]
pub fn solve_mpcg_multigrid(
    dv: &mut [Vector3<f64>],
    a: &BlockMatrix,
    mg: &mut Multigrid,
    b: &[Vector3<f64>],
    z: &[Vector3<f64>],
    constraints: &[Constraint],
    positions: &[Vector3<f64>],
    params: &PcgParams,
    par: Par,
    ws: &mut PcgWorkspace,
) -> Result<PcgInfo, SolverError> {
    par.install(|| {
        check_positions(a.n(), positions)?;
        if !mg.matches(a) {
            return Err(SolverError::InvalidParameter {
                name: "a",
                reason: "matrix pattern differs from the one Multigrid::new analysed",
            });
        }
        let solve = |mg: &mut Multigrid, ws: &mut PcgWorkspace, dv: &mut [Vector3<f64>]| {
            mg.vcycle_failed = false;
            solve_with(
                dv,
                a,
                b,
                z,
                constraints,
                params,
                ws,
                Apply::Multigrid { mg, positions },
                Reference::FilteredResidual,
            )
        };
        if mg.bounded_left > 0 {
            let solved = solve(mg, ws, dv);
            mg.bounded_left -= 1;
            return solved;
        }
        let first = solve(mg, ws, dv);
        if !(mg.vcycle_failed && matches!(first, Err(SolverError::NotPositiveDefinite { .. }))) {
            return first;
        }
        // The Lanczos estimate missed the top of a level's spectrum (an eigenvector localised
        // at a few nodes): solve again, dv untouched, with every smoother tuned by the bound,
        // and keep the bound for the next solves (such systems come in runs).
        mg.retries += 1;
        mg.bounded_left = BOUNDED_SOLVES;
        solve(mg, ws, dv)
    })
}
