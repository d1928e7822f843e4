//! The parameters, outcome and workspace of the modified PCG, and the test-only variants of
//! its preconditioner and stopping reference.

use nalgebra::{Matrix3, Vector3};

use crate::par::ROW_CHUNK;

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

/// Parameters of [`solve_mpcg`](super::solve_mpcg).
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

/// Outcome of a successful [`solve_mpcg`](super::solve_mpcg) call.
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

/// Reusable scratch memory for [`solve_mpcg`](super::solve_mpcg). Vectors grow on the first solve of a given
/// size; later solves of the same or smaller size do not allocate.
#[derive(Clone, Debug, Default)]
pub struct PcgWorkspace {
    /// Filtered residual `r`.
    pub(super) r: Vec<Vector3<f64>>,
    /// Preconditioned residual `s = S M^-1 r`.
    pub(super) s: Vec<Vector3<f64>>,
    /// Search direction `c`.
    pub(super) c: Vec<Vector3<f64>>,
    /// `q = S A c`.
    pub(super) q: Vec<Vector3<f64>>,
    /// The iterate `y` (`dv = z + S y`).
    pub(super) y: Vec<Vector3<f64>>,
    /// Per-particle preconditioner blocks (Jacobi and block Jacobi).
    pub(super) pinv: Vec<Matrix3<f64>>,
    /// Partial sums of the fixed-chunk reductions.
    pub(super) partials: Vec<f64>,
    /// First failing particle of each chunk while the preconditioner is built.
    pub(super) errs: Vec<Option<(usize, f64)>>,
}

impl PcgWorkspace {
    /// Empty workspace (same as `Default`).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sizes the vectors for `n` particles (and the preconditioner blocks when `blocks`).
    pub(super) fn resize(&mut self, n: usize, blocks: bool) {
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
/// API; the paper's literal form exists for the unit test that demonstrates the pitfall.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PrecondForm {
    /// `s = S M^-1 r` (correct).
    Divide,
    /// The paper's literal `P^-1 r` with `P_ii = 1/A_ii`, i.e. `s = S D r` (wrong).
    #[cfg(test)]
    PaperMultiply,
}

/// Which stopping reference is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reference {
    /// `delta0 = r0^T M^-1 r0` with `r0 = S (b - A z)` (Ascher & Boxerman 2003).
    FilteredResidual,
    /// The paper's `delta0 = filter(b)^T M^-1 filter(b)` (wrong when `z != 0`).
    #[cfg(test)]
    PaperFilteredB,
}
