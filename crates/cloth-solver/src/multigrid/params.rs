//! The parameters of a [`super::Multigrid`] hierarchy: smoother, reuse, near-null space and
//! the thresholds of the coarsening.

use crate::SolverError;

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

/// What [`solve_mpcg_multigrid`](crate::solve_mpcg_multigrid) may keep from the previous solve's numeric setup. The
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

/// Parameters of the smoothed-aggregation hierarchy ([`Multigrid`](super::Multigrid)).
///
/// The defaults minimise the total CPU time per solve, setup included, at relative residual
/// 1e-3 on cloth matrices `A = M - h df/dv - h^2 df/dx` (cotton, denim, silk; h = 1/30 and
/// 1/120 s; 2.6k-100k vertices; contact bands and sliding edges), as measured by
/// `cargo bench -p cloth-forces --bench solver_on_cloth`. See the crate README for the table.
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
    /// 1000 cost the same.
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
    pub(super) fn validate(&self) -> Result<(), SolverError> {
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
