//! Checkpoints: everything a run carries from frame to frame, so that a run continued from one
//! writes the same bytes as a run that was never interrupted.
//!
//! A checkpoint holds the frame number, the state (positions, velocities, time, written with
//! exact round-trip floats), the step-size controller, the contact modes and the matrix
//! pattern the implicit step has grown. Caches that are rebuilt from these (forces, proximities,
//! stretch, factorisations) are not stored: they are recomputed to the same bits. The one cache
//! whose content depends on history, the multigrid hierarchy (its aggregates come from the
//! matrix values when it was built), is dropped at every checkpoint by both the run that writes
//! it and the run that resumes from it.

use crate::error::SimError;
use crate::implicit::ImplicitMemory;
use crate::state::State;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A run at the end of a frame.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Format version ([`Checkpoint::VERSION`]).
    pub version: u32,
    /// The resolved scene the run was made from (TOML, every default written out).
    pub scene: String,
    /// Frames computed (the state is at the end of this frame).
    pub frame: usize,
    /// Simulated time (s).
    pub t: f64,
    /// Positions (m).
    pub x: Vec<[f64; 3]>,
    /// Velocities (m/s).
    pub v: Vec<[f64; 3]>,
    /// Implicit integrator memory (`None` for the explicit integrator).
    pub implicit: Option<ImplicitMemory>,
}

impl Checkpoint {
    /// The format version this code writes and reads.
    pub const VERSION: u32 = 1;

    /// The state it holds.
    pub fn state(&self) -> State {
        State {
            x: self.x.iter().map(|&p| p.into()).collect(),
            v: self.v.iter().map(|&p| p.into()).collect(),
            t: self.t,
        }
    }

    /// Writes the checkpoint atomically (JSON with exact floats).
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), SimError> {
        let path = path.as_ref();
        let text = serde_json::to_string(self)
            .map_err(|e| SimError::io(path, std::io::Error::other(e)))?;
        cloth_mesh::write_atomic_bytes(path, text.as_bytes()).map_err(|e| SimError::io(path, e))
    }

    /// Reads a checkpoint; refuses another format version.
    pub fn read(path: impl AsRef<Path>) -> Result<Checkpoint, SimError> {
        let path = path.as_ref();
        let c: Checkpoint = crate::stats::read_json(path)?;
        if c.version != Self::VERSION {
            return Err(SimError::Invalid {
                key: "checkpoint".into(),
                message: format!(
                    "{} has format version {}, this program reads {}",
                    path.display(),
                    c.version,
                    Self::VERSION
                ),
            });
        }
        Ok(c)
    }
}
