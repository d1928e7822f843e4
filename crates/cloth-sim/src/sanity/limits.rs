//! The limits a sane run keeps, and how a run that broke one is reported ([`Divergence`]).

/// Largest stretch of any triangle, `|w| - 1` (dimensionless): 3 means four times the rest
/// length. Stretch-limited cloth stays below 0.1; anything beyond this is an explosion.
pub const MAX_STRETCH: f64 = 3.0;

/// How many scene extents a vertex may travel beyond what gravity and driven motion explain.
pub const BOUND_FACTOR: f64 = 1e3;

/// Safety factor on the energy the scene can supply (no colliders).
pub const ENERGY_FACTOR: f64 = 2.0;

/// Safety factor on the energy the scene can supply when static colliders alter positions.
pub const ENERGY_FACTOR_CONTACT: f64 = 10.0;

/// What went wrong, for [`SimError::Diverged`](crate::error::SimError::Diverged).
#[derive(Clone, Debug, PartialEq)]
pub enum Divergence {
    /// The vertex is farther from the scene's centre than the bound.
    OutOfBounds {
        /// Its distance from the centre (m).
        distance: f64,
        /// The bound at this time (m).
        bound: f64,
    },
    /// A triangle of the vertex is stretched beyond [`MAX_STRETCH`].
    Stretch {
        /// The triangle.
        triangle: usize,
        /// Its stretch, `|w| - 1`.
        stretch: f64,
    },
    /// The kinetic energy exceeds what the scene can supply (the vertex is the fastest).
    Energy {
        /// Kinetic energy (J).
        kinetic: f64,
        /// The budget (J).
        budget: f64,
    },
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Divergence::OutOfBounds { distance, bound } => write!(
                f,
                "left the scene: {distance:.3e} m from its centre (bound {bound:.3e} m)"
            ),
            Divergence::Stretch { triangle, stretch } => write!(
                f,
                "triangle {triangle} stretched by {:.0}% (limit {:.0}%)",
                stretch * 100.0,
                MAX_STRETCH * 100.0
            ),
            Divergence::Energy { kinetic, budget } => write!(
                f,
                "kinetic energy {kinetic:.3e} J exceeds what the scene can supply ({budget:.3e} J)"
            ),
        }
    }
}
