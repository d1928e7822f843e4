//! What one task will cost: core-seconds and memory, from its mesh size, frame count and step
//! size. Used for the Slurm array's `--time` and `--mem` and printed by `plan`.
//!
//! Model (fitted on this project's 2-core AMD EPYC development machine, one thread per task,
//! sheets of 121 to 5041 vertices; see docs/batch.md): an implicit step on `n` vertices costs
//! `STEP_SECONDS * (n / 1000)^1.5`, at least `frames * ceil(frame time / h_max)` steps are
//! taken, self-collision multiplies the step cost by `SELF_COLLISION`; writing a frame costs
//! `FRAME_SECONDS_PER_VERTEX * n`; a process starts in `STARTUP_SECONDS`. Adaptive stepping may
//! take more steps than the minimum, so the Slurm limits add a safety factor on top.

use cloth::sim::{scene::IntegratorKind, scene::Scene, simulation::Simulation};
use serde::{Deserialize, Serialize};

/// Process start, scene load and build (s).
const STARTUP_SECONDS: f64 = 0.05;
/// One implicit step on 1000 vertices (s), one thread.
const STEP_SECONDS: f64 = 6e-3;
/// One explicit Verlet step on 1000 vertices (s).
const VERLET_STEP_SECONDS: f64 = 1e-4;
/// Cost factor of cloth-cloth contact.
const SELF_COLLISION: f64 = 4.0;
/// Writing one OBJ frame, per vertex (s).
const FRAME_SECONDS_PER_VERTEX: f64 = 1e-6;
/// Resident memory of a run: fixed part (MiB) and per vertex (KiB).
const BASE_MIB: f64 = 8.0;
const KIB_PER_VERTEX: f64 = 16.0;
/// Bytes of one OBJ frame per vertex (positions, rest coordinates, normals, faces).
const OBJ_BYTES_PER_VERTEX: f64 = 250.0;

/// The estimate of one task.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Cloth vertices.
    pub vertices: usize,
    /// Frames simulated (after frame 0).
    pub frames: usize,
    /// Fewest steps the run can take (frames times steps per frame at the largest step).
    pub min_steps: usize,
    /// Expected core-seconds (one thread).
    pub seconds: f64,
    /// Expected peak resident memory (MiB).
    pub memory_mib: f64,
    /// Expected output size (MiB of OBJ frames).
    pub output_mib: f64,
}

impl Estimate {
    /// The estimate for a validated scene and its built simulation.
    pub fn of(scene: &Scene, sim: &Simulation) -> Estimate {
        let n = sim.system().num_vertices();
        let frames = scene.run.frames;
        let frame_time = scene.frame_time();
        let (h, step) = match scene.solver.integrator {
            IntegratorKind::Implicit => (scene.solver.h_max, STEP_SECONDS),
            IntegratorKind::Verlet => (scene.solver.verlet_h, VERLET_STEP_SECONDS),
        };
        // The controller splits a frame into equal steps no longer than h.
        let per_frame = (frame_time / h * (1.0 - 1e-9)).ceil().max(1.0) as usize;
        let min_steps = frames.saturating_mul(per_frame);
        let scale = (n as f64 / 1000.0).powf(1.5);
        let contact = if scene.cloths.iter().any(|c| c.self_collision) {
            SELF_COLLISION
        } else {
            1.0
        };
        let seconds = STARTUP_SECONDS
            + min_steps as f64 * step * scale * contact
            + (frames + 1) as f64 * FRAME_SECONDS_PER_VERTEX * n as f64;
        Estimate {
            vertices: n,
            frames,
            min_steps,
            seconds,
            memory_mib: BASE_MIB + KIB_PER_VERTEX * n as f64 / 1024.0,
            output_mib: (frames + 1) as f64 * OBJ_BYTES_PER_VERTEX * n as f64 / (1 << 20) as f64,
        }
    }
}
