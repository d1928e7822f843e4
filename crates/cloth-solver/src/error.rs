//! The crate's error type.

/// Everything that can go wrong when building a block matrix or solving with it.
///
/// Every variant names the offending block row (particle), pair, entry or iteration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SolverError {
    /// The conjugate gradient met a search direction `c` with non-positive (or non-finite)
    /// curvature `c^T S A S c`, or a constrained diagonal block that is not positive definite:
    /// the matrix is not symmetric positive definite on the free subspace.
    #[error(
        "matrix is not positive definite on the free subspace: curvature {curvature:e} at iteration {iteration}"
    )]
    NotPositiveDefinite {
        /// CG iteration at which the breakdown was detected (0 = before the first iteration,
        /// e.g. while building the preconditioner).
        iteration: usize,
        /// The offending curvature `c^T q` (or diagonal value); may be NaN if non-finite.
        curvature: f64,
    },
    /// A diagonal block (filtered, `S_i A_ii S_i + (I - S_i)`) could not be inverted for the
    /// block-Jacobi preconditioner, or a diagonal entry is not positive for the Jacobi one.
    #[error("diagonal block of particle {index} is not positive definite (value {value:e})")]
    DiagonalNotPositive {
        /// Block row (particle) index.
        index: usize,
        /// The offending pivot or diagonal entry.
        value: f64,
    },
    /// An operator of the multigrid hierarchy (the Galerkin product `P^T A_f P` of level
    /// `level >= 1`, or level 0 when the fine level itself is factorised densely because it is
    /// small) has a diagonal block, or its dense factorisation a pivot, that is not positive
    /// definite: `A` is not SPD on the free subspace (or is numerically singular there).
    #[error("multigrid level {level}: node {index} is not positive definite (value {value:e})")]
    CoarseNotPositiveDefinite {
        /// Level of the hierarchy (0 = the particles, 1 = first coarse level).
        level: usize,
        /// Node on that level: a particle on level 0, an aggregate on coarser levels.
        index: usize,
        /// The smallest diagonal entry of the failing block (NaN when the failure is a pivot
        /// of the coarsest dense factorisation).
        value: f64,
    },
    /// Two inputs that must have the same length do not.
    #[error("dimension mismatch for {what}: expected {expected}, found {found}")]
    DimensionMismatch {
        /// Which argument has the wrong length.
        what: &'static str,
        /// Expected length (number of 3-vectors or blocks).
        expected: usize,
        /// Actual length.
        found: usize,
    },
    /// An input (or an intermediate quantity) contains NaN or infinity.
    #[error("non-finite value in {what} at index {index}")]
    NonFinite {
        /// Which quantity (e.g. "b", "z", "matrix block row", "residual").
        what: &'static str,
        /// Block index (particle) or iteration number, as stated in `what`.
        index: usize,
    },
    /// Block `(i, j)` is not part of the sparsity pattern built by [`crate::BlockMatrix::new`].
    #[error("block ({i}, {j}) is not in the sparsity pattern")]
    PatternMissing {
        /// Block row.
        i: usize,
        /// Block column.
        j: usize,
    },
    /// A particle index is out of range.
    #[error("{what} refers to particle {index}, but the matrix has only {n} block rows")]
    IndexOutOfRange {
        /// Which input (e.g. "pair 3", "entry 7").
        what: String,
        /// The offending particle index.
        index: usize,
        /// Number of block rows.
        n: usize,
    },
    /// A constraint direction is zero, non-finite, not unit length or not orthogonal.
    #[error("invalid constraint for particle {index}: {reason}")]
    InvalidConstraint {
        /// Particle index (`usize::MAX` when built outside a solve, by a constructor).
        index: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// A solver parameter is out of range.
    #[error("invalid parameter {name}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// What is wrong.
        reason: &'static str,
    },
    /// The sparse Cholesky factorisation of the projected system failed
    /// (matrix not positive definite on the free subspace, or out of memory).
    #[error("sparse Cholesky factorisation failed: {detail}")]
    Factorization {
        /// faer's description of the failure.
        detail: String,
    },
}
