//! The one statistics schema of the workspace: what `stats.json` holds, written by the
//! simulator ([`RunReport::write`]) and read back by the viewer, the plots and the benchmark
//! suite ([`RunReport::read`]). Wall times are split as in the paper's table (§8).

use crate::error::{Reject, SimError};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Instant;

/// Wall time spent per phase (s), split as in the paper's table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Timings {
    /// Evaluating forces and assembling the linear system (s).
    pub eval: f64,
    /// Solving the linear system (s).
    pub cg: f64,
    /// Cloth-cloth collision detection and response, and the per-frame count of intersecting
    /// triangle pairs when it is on (s).
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
pub(crate) struct Stopwatch(Instant);

impl Stopwatch {
    pub(crate) fn start() -> Self {
        Self(Instant::now())
    }
    /// Seconds since the last lap (or start), restarting the watch.
    pub(crate) fn lap(&mut self) -> f64 {
        let now = Instant::now();
        let d = now - self.0;
        self.0 = now;
        d.as_secs_f64()
    }
}

/// A stopwatch that charges each lap to one phase of [`Timings`].
pub(crate) struct Clock {
    /// The time charged so far (s).
    pub timings: Timings,
    watch: Stopwatch,
}

impl Clock {
    pub(crate) fn start() -> Self {
        Self {
            timings: Timings::default(),
            watch: Stopwatch::start(),
        }
    }
    /// Charges the time since the last lap to force evaluation and assembly.
    pub(crate) fn eval(&mut self) {
        self.timings.eval += self.watch.lap();
    }
    /// Charges the time since the last lap to the linear solve.
    pub(crate) fn cg(&mut self) {
        self.timings.cg += self.watch.lap();
    }
    /// Charges the time since the last lap to cloth-cloth contact.
    pub(crate) fn cloth_cloth(&mut self) {
        self.timings.cloth_cloth += self.watch.lap();
    }
    /// Charges the time since the last lap to cloth-solid contact.
    pub(crate) fn cloth_solid(&mut self) {
        self.timings.cloth_solid += self.watch.lap();
    }
    /// Charges the time since the last lap to everything else.
    pub(crate) fn other(&mut self) {
        self.timings.other += self.watch.lap();
    }
}

/// Rejected step attempts counted by reason ([`Reject`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Rejections {
    /// [`Reject::StretchChange`]: stretch changed by more than the threshold.
    pub stretch_change: usize,
    /// [`Reject::NotPositiveDefinite`]: the system matrix lost definiteness.
    pub not_positive_definite: usize,
    /// [`Reject::Factorization`]: the direct solver could not factorise.
    pub factorization: usize,
    /// [`Reject::Penetration`]: free vertices ended inside a solid.
    pub penetration: usize,
    /// [`Reject::InsideSolid`]: a vertex stayed inside a solid after every redo.
    pub inside_solid: usize,
    /// [`Reject::SelfCrossing`]: the cloth passed through itself and impact zones did not
    /// separate it.
    pub self_crossing: usize,
    /// [`Reject::EnergyGain`]: the energy rose by more than the contacts may supply.
    pub energy_gain: usize,
}

impl Rejections {
    /// Counts one rejection.
    pub fn count(&mut self, r: &Reject) {
        match r {
            Reject::StretchChange { .. } => self.stretch_change += 1,
            Reject::NotPositiveDefinite { .. } => self.not_positive_definite += 1,
            Reject::Factorization { .. } => self.factorization += 1,
            Reject::Penetration { .. } => self.penetration += 1,
            Reject::InsideSolid { .. } => self.inside_solid += 1,
            Reject::SelfCrossing { .. } => self.self_crossing += 1,
            Reject::EnergyGain { .. } => self.energy_gain += 1,
        }
    }

    /// All rejections.
    pub fn total(&self) -> usize {
        self.stretch_change
            + self.not_positive_definite
            + self.factorization
            + self.penetration
            + self.inside_solid
            + self.self_crossing
            + self.energy_gain
    }

    /// Adds another set of counts to this one.
    pub fn add(&mut self, o: &Rejections) {
        self.stretch_change += o.stretch_change;
        self.not_positive_definite += o.not_positive_definite;
        self.factorization += o.factorization;
        self.penetration += o.penetration;
        self.inside_solid += o.inside_solid;
        self.self_crossing += o.self_crossing;
        self.energy_gain += o.energy_gain;
    }
}

/// What happened while computing one frame.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FrameStats {
    /// Frame number (1 is the first simulated frame; frame 0 is the initial state).
    pub frame: usize,
    /// Simulated time at the end of the frame (s).
    pub time: f64,
    /// Accepted steps.
    pub steps: usize,
    /// Rejected (and redone) step attempts, all reasons: `rejections.total()`.
    pub rejected_steps: usize,
    /// Rejected step attempts by reason.
    pub rejections: Rejections,
    /// Smallest accepted step (s; 0 when the frame took no step).
    pub h_min: f64,
    /// Largest accepted step (s).
    pub h_max: f64,
    /// Newton corrections of steps whose first solve changed the stretch by more than the
    /// threshold, summed over accepted and rejected steps (each an evaluation and a linear
    /// solve, like an attempt; [`crate::implicit::ImplicitSettings::newton_corrections`]).
    pub corrections: usize,
    /// Linear solves again after static contacts slid within their step, summed over
    /// accepted and rejected steps ([`crate::implicit::ImplicitSettings::coulomb_rounds`]).
    pub coulomb_solves: usize,
    /// Accepted steps whose stretch change was over the threshold, accepted because their
    /// Newton correction moved the stretch by little
    /// ([`crate::implicit::ImplicitSettings::correction_tolerance`]).
    pub over_threshold: usize,
    /// Conjugate-gradient iterations summed over accepted and rejected steps.
    pub cg_iterations: usize,
    /// Linear solves that stopped at the iteration cap before reaching the tolerance.
    pub cg_not_converged: usize,
    /// Largest stretch at the end of the frame: `max(|w_u|, |w_v|) - 1` over all triangles
    /// (paper §4.2; 0.05 means 5% longer than rest along u or v).
    pub max_stretch: f64,
    /// Largest compression at the end of the frame: `1 - min(|w_u|, |w_v|)` over all triangles.
    pub max_compression: f64,
    /// Kinetic energy at the end of the frame (J).
    pub kinetic_energy: f64,
    /// Cloth vertices in contact with solids at the end of the frame.
    pub contacts: usize,
    /// Intersecting pairs of non-adjacent cloth triangles at the end of the frame, when the
    /// world counts them ([`crate::world::World::count_intersections`]; otherwise 0). Triangles
    /// joined by a garment stitch are adjacent.
    pub self_intersections: usize,
    /// Largest distance between the two vertices of a garment stitch at the end of the frame
    /// (m; 0 without stitches): how far the seams are from closed.
    pub seam_gap: f64,
    /// Vertices whose motion was replaced by their impact zone's (cloth passing through
    /// itself), summed over the accepted steps of the frame.
    pub zone_vertices: usize,
    /// Wall time split (s).
    pub timings: Timings,
    /// Explicit integrator: largest violation of the strain limit left by the projection of
    /// any step of the frame, as a fraction of the edge's rest length (0.002 means an edge
    /// ended 0.2% of its rest length outside `[min, max]` times it; the projection iterates
    /// until this is within `solver.strain_tolerance`, or its iteration cap). 0 for the
    /// implicit integrator.
    pub strain_violation: f64,
    /// Explicit integrator: sweeps of the projection summed over the frame's steps (0 for the
    /// implicit integrator).
    pub strain_iterations: usize,
    /// Explicit integrator: global projections of the strain limits (sparse Cholesky solves)
    /// summed over the frame's steps (0 for the implicit integrator).
    pub strain_global_solves: usize,
    /// Wall time of the whole frame as the frame driver measured it, including statistics
    /// (s; output writing is not included).
    pub wall: f64,
}

impl FrameStats {
    /// Adds the work of `earlier`, a run that came before this frame's on another mesh (a
    /// garment's coarse sewing copy, whose steps the preroll's statistics include): steps,
    /// rejections, corrections, iterations, impact-zone vertices and time add up; the step
    /// range widens. The end-of-frame measures stay this frame's.
    pub fn absorb(&mut self, earlier: &FrameStats) {
        if earlier.steps > 0 {
            self.h_min = if self.steps > 0 {
                self.h_min.min(earlier.h_min)
            } else {
                earlier.h_min
            };
            self.h_max = self.h_max.max(earlier.h_max);
        }
        self.steps += earlier.steps;
        self.rejections.add(&earlier.rejections);
        self.rejected_steps = self.rejections.total();
        self.corrections += earlier.corrections;
        self.coulomb_solves += earlier.coulomb_solves;
        self.over_threshold += earlier.over_threshold;
        self.cg_iterations += earlier.cg_iterations;
        self.cg_not_converged += earlier.cg_not_converged;
        self.zone_vertices += earlier.zone_vertices;
        self.strain_iterations += earlier.strain_iterations;
        self.strain_global_solves += earlier.strain_global_solves;
        self.timings.add(&earlier.timings);
        self.wall += earlier.wall;
    }

    /// Counts a rejected attempt.
    pub fn reject(&mut self, r: &Reject) {
        self.rejections.count(r);
        self.rejected_steps = self.rejections.total();
    }
}

/// Totals over a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Totals {
    /// Frames computed.
    pub frames: usize,
    /// Accepted steps.
    pub steps: usize,
    /// Rejected steps.
    pub rejected_steps: usize,
    /// Rejected steps by reason.
    pub rejections: Rejections,
    /// Newton corrections (see [`FrameStats::corrections`]).
    pub corrections: usize,
    /// Solves again for Coulomb's law (see [`FrameStats::coulomb_solves`]).
    pub coulomb_solves: usize,
    /// Steps accepted over the stretch threshold (see [`FrameStats::over_threshold`]).
    pub over_threshold: usize,
    /// CG iterations.
    pub cg_iterations: usize,
    /// Smallest accepted step (s).
    pub h_min: f64,
    /// Largest accepted step (s).
    pub h_max: f64,
    /// Largest stretch over all frames.
    pub max_stretch: f64,
    /// Wall time split (s).
    pub timings: Timings,
    /// Wall time per frame (s), including output.
    pub seconds_per_frame: f64,
}

impl Totals {
    /// Sums the per-frame statistics; `wall` is the run's wall time (s).
    pub fn from_frames(frames: &[FrameStats], wall: f64) -> Self {
        let mut t = Totals {
            frames: frames.len(),
            h_min: f64::INFINITY,
            ..Default::default()
        };
        for f in frames {
            t.steps += f.steps;
            t.rejected_steps += f.rejected_steps;
            t.rejections.add(&f.rejections);
            t.corrections += f.corrections;
            t.coulomb_solves += f.coulomb_solves;
            t.over_threshold += f.over_threshold;
            t.cg_iterations += f.cg_iterations;
            if f.steps > 0 {
                t.h_min = t.h_min.min(f.h_min);
            }
            t.h_max = t.h_max.max(f.h_max);
            t.max_stretch = t.max_stretch.max(f.max_stretch);
            t.timings.add(&f.timings);
        }
        if !t.h_min.is_finite() {
            t.h_min = 0.0;
        }
        t.seconds_per_frame = if frames.is_empty() {
            0.0
        } else {
            wall / frames.len() as f64
        };
        t
    }
}

/// The contents of `stats.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// The exact settings used: the resolved scene, with the scene file's keys.
    #[serde(default)]
    pub settings: serde_json::Value,
    /// Output frames per second (1/s).
    #[serde(default = "default_fps")]
    pub fps: f64,
    /// Cloth vertices.
    #[serde(default)]
    pub vertices: usize,
    /// Cloth triangles.
    #[serde(default)]
    pub triangles: usize,
    /// Worker threads.
    #[serde(default)]
    pub threads: usize,
    /// The preroll's record (`run.preroll` > 0; frame 0, the end of the preroll): its steps,
    /// including those of a coarse copy that sewed the garments, and the measures of the state
    /// the frames start from (its `self_intersections`: crossings a carried state kept).
    /// Not counted in `totals`. Absent when the scene has no preroll.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preroll: Option<FrameStats>,
    /// Per-frame records, frame 1 first (frame 0 is the initial state, or the end of the
    /// preroll, see `preroll`).
    #[serde(default)]
    pub frames: Vec<FrameStats>,
    /// Totals.
    #[serde(default)]
    pub totals: Totals,
    /// Whether the run wrote every requested output: all frames, and the USD export and the
    /// preview when they were asked for.
    #[serde(default)]
    pub complete: bool,
    /// The error that ended the run early or left an output unwritten, if any
    /// (`"interrupted"` for a signal).
    #[serde(default)]
    pub error: Option<String>,
    /// Whether `error` is an output that could not be written (a full disk, an unwritable
    /// path) rather than the simulation's own failure: a rerun of the same scene can succeed.
    /// Written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub output_error: bool,
}

/// Frames per second of a scene that does not say (`run.fps`), and of a report without `fps`.
pub const DEFAULT_FPS: f64 = 30.0;

fn default_fps() -> f64 {
    DEFAULT_FPS
}

/// Reads a JSON file of one of the run's schemas; syntax and schema errors keep their line.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, SimError> {
    let text = std::fs::read_to_string(path).map_err(|e| SimError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| SimError::Json {
        path: path.to_path_buf(),
        line: e.line(),
        message: e.to_string(),
    })
}

impl Default for RunReport {
    fn default() -> Self {
        RunReport {
            settings: serde_json::Value::Null,
            fps: DEFAULT_FPS,
            vertices: 0,
            triangles: 0,
            threads: 0,
            preroll: None,
            frames: Vec::new(),
            totals: Totals::default(),
            complete: false,
            error: None,
            output_error: false,
        }
    }
}

impl RunReport {
    /// Writes the report as pretty JSON, atomically.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), SimError> {
        let path = path.as_ref();
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| SimError::io(path, std::io::Error::other(e)))?;
        cloth_mesh::write_atomic_bytes(path, text.as_bytes()).map_err(|e| SimError::io(path, e))
    }

    /// Reads a report written by [`RunReport::write`]. Missing fields take their defaults
    /// (fps [`DEFAULT_FPS`]), so reports of interrupted runs read back.
    pub fn read(path: impl AsRef<Path>) -> Result<RunReport, SimError> {
        let path = path.as_ref();
        read_json(path)
    }
}
