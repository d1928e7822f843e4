//! The simulation crate's error type, and why a step can be rejected.

use crate::sanity::limits::Divergence;
use crate::scene::error::SceneError;
use std::path::PathBuf;

/// Why an attempted implicit step was rejected (and redone). Each variant is counted per frame
/// in the statistics ([`crate::stats::Rejections`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Reject {
    /// A triangle's stretch `|w_u|` or `|w_v|` changed by more than the threshold in one step
    /// (paper §7): the linearized step is not trustworthy; h is halved.
    StretchChange {
        /// The triangle with the largest change.
        triangle: usize,
        /// Its change (dimensionless strain; infinite when not finite).
        change: f64,
        /// The threshold it broke.
        threshold: f64,
    },
    /// The conjugate gradient met a direction of non-positive curvature: the system matrix is
    /// not positive definite at this step size; h is halved.
    NotPositiveDefinite {
        /// The CG iteration at which it was detected.
        iteration: usize,
    },
    /// The direct solver could not factorise the system matrix; h is halved.
    Factorization {
        /// What the factorisation reported.
        detail: String,
    },
    /// Free vertices ended the step deep inside a solid's thickness layer (pulled there by
    /// their neighbours): the step is redone with the same h and those vertices in contact.
    Penetration {
        /// How many vertices were newly put in contact.
        vertices: usize,
    },
    /// After every redo for penetration, a vertex still ended inside a solid, deeper than the
    /// cloth's thickness: h is halved.
    InsideSolid {
        /// The deepest such vertex.
        vertex: usize,
        /// The collider's index.
        collider: usize,
        /// How deep below the solid's surface (m).
        depth: f64,
    },
    /// The step's motion made the cloth pass through itself (continuous collision detection)
    /// and the impact zones could not separate it within their iteration budget: h is halved.
    SelfCrossing {
        /// Colliding vertex-triangle and edge-edge pairs left at the last iteration.
        impacts: usize,
    },
    /// Where nothing but gravity does work on the cloth and it touches static solids, the
    /// step's kinetic energy grew by more than gravity's work and the elastic energy it
    /// released supply (a landing or push-out given back as motion by a large step): h is
    /// halved, down to [`crate::implicit::ENERGY_CHECK_H`].
    EnergyGain {
        /// The kinetic energy's growth beyond what the step supplied (J).
        gain: f64,
        /// What the step may gain (J).
        allowed: f64,
    },
}

impl Reject {
    /// Whether the step controller halves h for this rejection (all but penetration, which is
    /// redone at the same h with more contacts).
    pub fn halves_step(&self) -> bool {
        !matches!(self, Reject::Penetration { .. })
    }
}

impl std::fmt::Display for Reject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reject::StretchChange {
                triangle,
                change,
                threshold,
            } => write!(
                f,
                "stretch of triangle {triangle} changed by {change:.3} in one step (threshold {threshold})"
            ),
            Reject::NotPositiveDefinite { iteration } => write!(
                f,
                "system matrix not positive definite at CG iteration {iteration}"
            ),
            Reject::Factorization { detail } => write!(f, "direct factorisation failed: {detail}"),
            Reject::Penetration { vertices } => {
                write!(f, "{vertices} free vertices ended inside a solid")
            }
            Reject::SelfCrossing { impacts } => {
                write!(
                    f,
                    "cloth passes through itself ({impacts} colliding pairs left)"
                )
            }
            Reject::EnergyGain { gain, allowed } => write!(
                f,
                "the kinetic energy grew {gain:.3e} J beyond what gravity and the released elastic energy supply in one step (allowed {allowed:.3e} J)"
            ),
            Reject::InsideSolid {
                vertex,
                collider,
                depth,
            } => write!(
                f,
                "vertex {vertex} ended {:.1} mm inside collider #{collider} after contact handling",
                depth * 1e3
            ),
        }
    }
}

/// Everything that can go wrong while building or running a simulation.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The scene file could not be read or is invalid.
    #[error(transparent)]
    Scene(#[from] SceneError),
    /// The cloth mesh is invalid.
    #[error("cloth mesh: {0}")]
    Mesh(#[from] cloth_mesh::MeshError),
    /// The material or another force parameter is invalid.
    #[error("cloth forces: {0}")]
    Forces(#[from] cloth_forces::ForceError),
    /// The linear solver failed in a way the step controller could not recover from.
    #[error("linear solver: {0}")]
    Solver(#[from] cloth_solver::SolverError),
    /// A collider is invalid.
    #[error("collider: {0}")]
    Collide(#[from] cloth_collide::CollideError),
    /// The adaptive step controller had to go below `h_min`.
    #[error(
        "frame {frame}: step size fell below h_min = {h_min:e} s at t = {time:.6} s ({reason}); \
         frames before {frame} are valid"
    )]
    StepTooSmall {
        /// Frame being computed (1-based: frame 1 is the first simulated frame).
        frame: usize,
        /// Simulated time at which the step failed (s).
        time: f64,
        /// The configured minimum step (s).
        h_min: f64,
        /// Why the last attempt was rejected.
        reason: Reject,
    },
    /// A vertex position or velocity became NaN or infinite.
    #[error("frame {frame}: vertex {vertex} became non-finite")]
    NonFinite {
        /// Frame being computed.
        frame: usize,
        /// Offending vertex.
        vertex: usize,
    },
    /// A sanity check failed after an accepted step (see the `sanity` module): the run stops
    /// instead of writing garbage.
    #[error(
        "frame {frame}: vertex {vertex} {cause} at t = {time:.4} s; frames before {frame} are valid"
    )]
    Diverged {
        /// Frame being computed (1-based; 0 when a single step was taken outside the frame
        /// driver).
        frame: usize,
        /// Simulated time at the end of the step (s).
        time: f64,
        /// The offending vertex.
        vertex: usize,
        /// What is wrong.
        cause: Divergence,
    },
    /// The scene would need more memory or time than the limits allow (see the `budget`
    /// module).
    #[error("scene key `{key}`: {message}")]
    Budget {
        /// The scene key the cost comes from.
        key: String,
        /// The figures.
        message: String,
    },
    /// A setting is out of range.
    #[error("invalid setting `{key}`: {message}")]
    Invalid {
        /// Key path of the setting, as in the scene file.
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}", path = .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A JSON file of the run (`stats.json`, `colliders.json`) could not be read as its schema.
    #[error("{path}:{line}: {message}", path = .path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// What the JSON reader reported.
        message: String,
    },
    /// The stop flag given to [`crate::simulation::Simulation::set_stop_flag`] was set (a
    /// signal): the simulation stopped between two steps.
    #[error("stopped on request")]
    Stopped,
    /// The output directory is in use by another run (see [`crate::output::lock`]).
    #[error(
        "output directory {dir} is in use by another run ({holder}); \
         wait for it, choose another --out, or take it over with --force"
    )]
    Locked {
        /// The output directory.
        dir: PathBuf,
        /// The process holding the lock (in its own PID namespace).
        pid: u32,
        /// Who holds it, for the message: process, host, when last touched.
        holder: String,
    },
}

impl SimError {
    /// The error with its frame number set, for errors raised by a step that did not know it.
    pub fn in_frame(self, frame: usize) -> Self {
        match self {
            SimError::Diverged {
                time,
                vertex,
                cause,
                ..
            } => SimError::Diverged {
                frame,
                time,
                vertex,
                cause,
            },
            SimError::NonFinite { vertex, .. } => SimError::NonFinite { frame, vertex },
            other => other,
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        SimError::Io {
            path: path.into(),
            source,
        }
    }
}

/// `value` in `(lo, hi]` and finite, else an error naming `key`.
pub(crate) fn check_range(key: &str, value: f64, lo: f64, hi: f64) -> Result<(), SimError> {
    if value.is_finite() && value > lo && value <= hi {
        Ok(())
    } else {
        Err(SimError::Invalid {
            key: key.into(),
            message: format!("must be in ({lo}, {hi}], got {value}"),
        })
    }
}
