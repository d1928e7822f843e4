//! The simulation crate's error type.

use std::path::PathBuf;

/// Everything that can go wrong while building or running a simulation.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The scene file could not be read or is invalid.
    #[error(transparent)]
    Scene(#[from] crate::scene::SceneError),
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
        reason: String,
    },
    /// A vertex position or velocity became NaN or infinite.
    #[error("frame {frame}: vertex {vertex} became non-finite")]
    NonFinite {
        /// Frame being computed.
        frame: usize,
        /// Offending vertex.
        vertex: usize,
    },
    /// A setting is out of range.
    #[error("invalid setting `{key}`: {message}")]
    Invalid {
        /// Key path of the setting, as in the scene file.
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// Writing an output file failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file being written.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}
