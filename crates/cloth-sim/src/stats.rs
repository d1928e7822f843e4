//! Per-frame statistics, with the wall-time split of the paper's table (Knowl 10).

use serde::Serialize;
use std::time::{Duration, Instant};

/// Wall time spent per phase (s), split as in the paper's table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Timings {
    /// Evaluating forces and assembling the linear system (s).
    pub eval: f64,
    /// Solving the linear system (s).
    pub cg: f64,
    /// Cloth-cloth collision detection and response (s).
    pub cloth_cloth: f64,
    /// Cloth-solid collision detection (s).
    pub cloth_solid: f64,
    /// Everything else: constraints, checks, updates, strain limiting (s).
    pub other: f64,
}

impl Timings {
    /// Sum of all phases (s).
    pub fn total(&self) -> f64 {
        self.eval + self.cg + self.cloth_cloth + self.cloth_solid + self.other
    }

    /// Adds another set of timings to this one.
    pub fn add(&mut self, o: &Timings) {
        self.eval += o.eval;
        self.cg += o.cg;
        self.cloth_cloth += o.cloth_cloth;
        self.cloth_solid += o.cloth_solid;
        self.other += o.other;
    }
}

/// Measures the time since the last call and adds it to one phase.
pub(crate) struct Stopwatch(pub(crate) Instant);

impl Stopwatch {
    pub(crate) fn start() -> Self {
        Self(Instant::now())
    }
    /// Seconds since the last lap (or start), restarting the watch.
    pub(crate) fn lap(&mut self) -> f64 {
        let now = Instant::now();
        let d: Duration = now - self.0;
        self.0 = now;
        d.as_secs_f64()
    }
}

/// What happened while computing one frame.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FrameStats {
    /// Frame number (1 is the first simulated frame; frame 0 is the initial state).
    pub frame: usize,
    /// Simulated time at the end of the frame (s).
    pub time: f64,
    /// Accepted steps.
    pub steps: usize,
    /// Rejected (and redone) step attempts: stretch changed too much, the matrix was not
    /// positive definite (both halve h), or a free vertex ended inside a solid (redone with
    /// that vertex in contact, same h).
    pub rejected_steps: usize,
    /// Smallest accepted step (s).
    pub h_min: f64,
    /// Largest accepted step (s).
    pub h_max: f64,
    /// Conjugate-gradient iterations summed over accepted and rejected steps.
    pub cg_iterations: usize,
    /// Linear solves that stopped at the iteration cap before reaching the tolerance.
    pub cg_not_converged: usize,
    /// Largest stretch at the end of the frame: `max(|w_u|, |w_v|) - 1` over all triangles
    /// (Knowl 4; 0.05 means 5% longer than rest along u or v).
    pub max_stretch: f64,
    /// Largest compression at the end of the frame: `1 - min(|w_u|, |w_v|)` over all triangles.
    pub max_compression: f64,
    /// Kinetic energy at the end of the frame (J).
    pub kinetic_energy: f64,
    /// Cloth vertices in contact with solids at the end of the frame.
    pub contacts: usize,
    /// Intersecting pairs of non-adjacent cloth triangles at the end of the frame, when
    /// self-collision is on (otherwise 0).
    pub self_intersections: usize,
    /// Wall time split (s).
    pub timings: Timings,
}
