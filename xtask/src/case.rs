//! One benchmark case: what to run (`CaseSpec`), what came out (`CaseResult`), and the child
//! side that runs it (`run_child`), one case per process so that peak memory and the thread
//! pool belong to that case alone.

use cloth::sim::{
    scene::IntegratorKind, scene::MeshSpec, scene::Scene, scene::SolverChoice,
    scene::SolverSettings, scene::build_simulation, simulation::Simulation, stats::FrameStats,
    stats::Timings, stats::Totals,
};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Instant;

/// Which integrator a case forces onto its scene (`None` keeps the scene's).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntegratorOverride {
    /// Explicit Verlet with the scene-file defaults of `[solver]` for Verlet (soft springs,
    /// `[0.9, 1.1]` strain limit), `steps_per_frame` equal steps per frame.
    Verlet {
        /// Equal Verlet steps per output frame (>= 1).
        steps_per_frame: usize,
        /// Spring stiffness in N/m; `None` keeps the Verlet default.
        spring_stiffness: Option<f64>,
        /// Strain limit `[0.9, 1 + s]` for `Some(s)`; `None` keeps the default `[0.9, 1.1]`.
        max_stretch: Option<f64>,
    },
    /// Backward Euler with the scene-file defaults of `[solver]` for the implicit integrator
    /// (the material's own stiffness, no strain limit).
    Implicit,
}

/// Everything a child process needs to run one case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseSpec {
    /// Unique case name (what `--filter` matches).
    pub name: String,
    /// Group: `paper`, `scaling`, `bend`, `stretch`, `explicit`, `verlet_probe`, `solver`,
    /// `compare`.
    pub group: String,
    /// Scene file (absolute path).
    pub scene: PathBuf,
    /// Override `cloth.mesh` grid resolution `nx = ny` (keeps size and pattern).
    pub grid: Option<usize>,
    /// Frames to simulate (`None`: the scene's `run.frames`).
    pub frames: Option<usize>,
    /// Factor on the flexural rigidity `cloth.material.bend`.
    pub bend_scale: f64,
    /// Factor on both stretch stiffnesses `cloth.material.stretch`.
    pub stretch_scale: f64,
    /// Bend model override (`cloth.material.bend_model`; `None`: the scene's, by default the
    /// shape operator).
    #[serde(default)]
    pub bend_model: Option<cloth::sim::forces::BendModel>,
    /// Linear solver override (`solver.preconditioner`).
    pub solver: Option<SolverChoice>,
    /// Integrator override.
    pub integrator: Option<IntegratorOverride>,
    /// Cloth-cloth contact override (`cloth.self_collision`).
    #[serde(default)]
    pub self_collision: Option<bool>,
    /// Override of the continuous collision check of cloth-cloth contact (`cloth.self_ccd`).
    #[serde(default)]
    pub self_ccd: Option<bool>,
    /// Smallest edge length (m) of sewing-pattern meshes (`cloth.mesh.edge_length` of
    /// `kind = "garmentcode"` is raised to it; `None`: the scene's): `--quick` coarsens the
    /// garment rows, which run at the paper's vertex counts otherwise.
    #[serde(default)]
    pub min_edge_length: Option<f64>,
    /// Rayon worker threads.
    pub threads: usize,
    /// Where to write the cloth's last frame (JSON, [`crate::preview::FinalFrame`]), if
    /// anywhere: the comparison's side-by-side previews.
    #[serde(default)]
    pub final_frame: Option<PathBuf>,
}

impl CaseSpec {
    /// A case running `scene` unchanged with `threads` threads.
    pub fn new(name: &str, group: &str, scene: PathBuf, threads: usize) -> Self {
        CaseSpec {
            name: name.to_string(),
            group: group.to_string(),
            scene,
            grid: None,
            frames: None,
            bend_scale: 1.0,
            stretch_scale: 1.0,
            bend_model: None,
            solver: None,
            integrator: None,
            self_collision: None,
            self_ccd: None,
            min_edge_length: None,
            threads,
            final_frame: None,
        }
    }
}

/// Largest value, NaN if any value is NaN (0 for none).
fn max_or_nan(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(0.0, |m, x| {
        if x.is_nan() || m.is_nan() {
            f64::NAN
        } else {
            m.max(x)
        }
    })
}

/// What a case measured: the simulator's own [`Totals`] of the run, with what only the bench
/// knows (the case, the machine, the repeats). Times are wall-clock seconds.
///
/// In JSON the totals' fields sit beside the others (`steps`, `h_min`, `seconds_per_frame`,
/// ...), as the bench has always written them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    /// The spec that was run.
    pub spec: CaseSpec,
    /// Cloth vertices.
    pub cloth_vertices: usize,
    /// Cloth triangles.
    pub cloth_triangles: usize,
    /// Number of colliders with contact enabled.
    pub colliders: usize,
    /// Vertices of the mesh colliders (analytic shapes are exact and count 0; `None`: no
    /// contact handling in this run).
    pub solid_vertices: Option<usize>,
    /// Triangles of the mesh colliders (analytic shapes count 0; `None`: no contact handling).
    pub solid_triangles: Option<usize>,
    /// Integrator actually used (`implicit` / `verlet`).
    pub integrator: String,
    /// Linear solver of the implicit integrator.
    pub solver: String,
    /// Frames requested.
    pub frames_requested: usize,
    /// The run's totals ([`Totals::from_frames`] of the completed frames and the frame loop's
    /// wall time), with two bench rules: `seconds_per_frame` is NaN without a completed frame
    /// (the median over the repeats once the parent has combined them), and `max_stretch` is
    /// NaN when any frame's is, so that a run that blew up cannot look stable.
    #[serde(flatten)]
    pub totals: Totals,
    /// Linear solves that hit the iteration cap.
    pub cg_not_converged: usize,
    /// Mean CG iterations per linear solve (accepted and rejected steps; 0 for Verlet and
    /// the direct solver).
    pub cg_per_step: f64,
    /// Process CPU time (user + system, all threads) of the frame loop per frame, s; less
    /// sensitive than wall time to other load on the machine, but it counts worker threads
    /// spinning while they wait (10 ms resolution over the run).
    pub cpu_seconds_per_frame: Option<f64>,
    /// `seconds_per_frame` of every repeat, in run order (filled by the parent).
    pub repeats: Vec<f64>,
    /// Time to load the scene and build the simulation, s.
    pub setup_seconds: f64,
    /// Wall time of the frame loop, s.
    pub wall_seconds: f64,
    /// Phase shares of the frame-loop wall time in percent: EVAL, CG, C/C, C/S, other
    /// (other = everything not in the first four, including time outside the phases).
    pub percent: [f64; 5],
    /// Peak resident memory of the child process (VmHWM), bytes.
    pub peak_memory_bytes: Option<u64>,
    /// Rayon threads in the child.
    pub threads: usize,
    /// Largest kinetic energy over all frames, J.
    pub max_kinetic_energy: f64,
    /// Kinetic energy bound used by the stability test, J: `2 M |g| L` with cloth mass `M`,
    /// gravity `g` and the diagonal `L` of the cloth's initial bounding box.
    pub energy_bound: f64,
    /// Whether the final positions are all finite.
    pub finite: bool,
    /// Error that ended the run early, if any.
    pub error: Option<String>,
    /// Per-frame statistics (the simulator's own schema).
    pub series: Vec<FrameStats>,
}

impl CaseResult {
    /// Stable in the sense of the explicit step search: completed every frame without error,
    /// finite positions, kinetic energy within `energy_bound`, stretch below 50%.
    pub fn is_stable(&self) -> bool {
        self.error.is_none()
            && self.finite
            && self.totals.frames == self.frames_requested
            && self.max_kinetic_energy.is_finite()
            && self.max_kinetic_energy <= self.energy_bound
            && self.totals.max_stretch.is_finite()
            && self.totals.max_stretch < 0.5
    }

    /// Attempted steps: accepted plus rejected (each at least one linear solve).
    pub fn attempts(&self) -> usize {
        self.totals.steps + self.totals.rejected_steps
    }

    /// Wall time of the frame loop per attempted step (s); `None` without a step.
    pub fn seconds_per_attempt(&self) -> Option<f64> {
        let a = self.attempts();
        let t = &self.totals;
        (a > 0).then(|| t.seconds_per_frame * t.frames as f64 / a as f64)
    }

    /// The reported figures that must be finite for a successful case.
    pub fn figures(&self) -> [f64; 8] {
        let t = &self.totals;
        [
            t.seconds_per_frame,
            t.h_min,
            t.h_max,
            self.cg_per_step,
            self.percent[0],
            self.percent[1],
            t.max_stretch,
            self.max_kinetic_energy,
        ]
    }
}

/// Loads the case's scene and applies its overrides.
pub fn prepare_scene(spec: &CaseSpec) -> Result<Scene, String> {
    let mut scene =
        Scene::load(&spec.scene).map_err(|e| format!("{}: {e}", spec.scene.display()))?;
    if let Some(n) = spec.grid {
        match &mut scene.cloths[0].mesh {
            MeshSpec::Grid { nx, ny, .. } => {
                *nx = n;
                *ny = n;
            }
            _ => {
                return Err(format!(
                    "{}: cloth.mesh is not a grid",
                    spec.scene.display()
                ));
            }
        }
    }
    if let Some(f) = spec.frames {
        scene.run.frames = f;
    }
    for cloth in &mut scene.cloths {
        cloth.material.bend *= spec.bend_scale;
        if let Some(m) = spec.bend_model {
            cloth.material.bend_model = m;
        }
        for k in &mut cloth.material.stretch {
            *k *= spec.stretch_scale;
        }
    }
    if let Some(s) = spec.solver {
        scene.solver.preconditioner = s;
    }
    for cloth in &mut scene.cloths {
        if let Some(on) = spec.self_collision {
            cloth.self_collision = on;
        }
        if let Some(on) = spec.self_ccd {
            cloth.self_ccd = on;
        }
        if let (
            Some(e),
            MeshSpec::Garmentcode {
                edge_length,
                sew_edge_length,
                ..
            },
        ) = (spec.min_edge_length, &mut cloth.mesh)
        {
            *edge_length = edge_length.max(e);
            // A coarse copy no coarser than the coarsened garment would only add work.
            if sew_edge_length.is_some_and(|h| h <= *edge_length) {
                *sew_edge_length = None;
            }
        }
    }
    let fps = scene.run.fps;
    match spec.integrator {
        Some(IntegratorOverride::Verlet {
            steps_per_frame,
            spring_stiffness,
            max_stretch,
        }) => {
            scene.solver = SolverSettings::defaults(IntegratorKind::Verlet, fps);
            scene.solver.verlet_h = verlet_step(fps, steps_per_frame)?;
            if let Some(k) = spring_stiffness {
                scene.solver.spring_stiffness = k;
            }
            if let Some(s) = max_stretch {
                scene.solver.strain_limit = Some([0.9, 1.0 + s]);
            }
        }
        Some(IntegratorOverride::Implicit) => {
            scene.solver = SolverSettings::defaults(IntegratorKind::Implicit, fps);
        }
        None => {}
    }
    Ok(scene)
}

/// The `verlet_h` (s) that splits a frame of `1 / fps` seconds into exactly `k` equal steps:
/// slightly above `1 / (k fps)` so rounding cannot add a step, and never above `1 / fps`.
pub fn verlet_step(fps: f64, k: usize) -> Result<f64, String> {
    if k == 0 {
        return Err("steps per frame must be at least 1".into());
    }
    let frame = 1.0 / fps;
    Ok(if k == 1 {
        frame
    } else {
        (frame / k as f64 * (1.0 + 1e-9)).min(frame)
    })
}

/// CPU time (user + system, all threads) used by this process so far, s, from
/// `/proc/self/stat` (clock ticks of 1/100 s, the Linux `USER_HZ` on all mainstream
/// architectures). `None` when unreadable.
pub fn process_cpu_seconds() -> Option<f64> {
    parse_cpu_ticks(&std::fs::read_to_string("/proc/self/stat").ok()?).map(|t| t as f64 / 100.0)
}

/// utime + stime (fields 14 and 15) of a `/proc/<pid>/stat` line, in clock ticks.
pub fn parse_cpu_ticks(stat: &str) -> Option<u64> {
    // The command name (field 2) is in parentheses and may contain spaces.
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// Runs one case in this process (the child side) and returns its result. Simulation errors
/// end the run early and are recorded in `error`; scene errors are returned as `Err`.
pub fn run_child(spec: &CaseSpec) -> Result<CaseResult, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(spec.threads.max(1))
        .build_global()
        .map_err(|e| format!("cannot start {} threads: {e}", spec.threads))?;
    measure(spec)
}

/// The case's simulation, built, with what is known before its frames run.
struct Setup {
    scene: Scene,
    sim: Simulation,
    /// Time to load the scene and build the simulation, s.
    seconds: f64,
    /// See [`CaseResult::energy_bound`].
    energy_bound: f64,
}

/// Loads the case's scene and builds its simulation.
fn set_up(spec: &CaseSpec) -> Result<Setup, String> {
    let t0 = Instant::now();
    let scene = prepare_scene(spec)?;
    let sim = build_simulation(&scene).map_err(|e| format!("{}: {e}", spec.name))?;
    let seconds = t0.elapsed().as_secs_f64();
    let system = sim.system();
    let mass: f64 = system.masses.iter().sum();
    let (lo, hi) = system.x0.iter().fold(
        ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]),
        |(mut lo, mut hi), p| {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
            (lo, hi)
        },
    );
    let diagonal = (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>().sqrt();
    let energy_bound = 2.0 * mass * scene.run.gravity.norm() * diagonal;
    Ok(Setup {
        scene,
        sim,
        seconds,
        energy_bound,
    })
}

/// What the frame loop gave.
struct FrameLoop {
    /// The completed frames' statistics.
    stats: Vec<FrameStats>,
    /// The error that ended the run (in the preroll or a frame), if any.
    error: Option<String>,
    /// Wall time of the frame loop, s.
    wall_seconds: f64,
    /// Process CPU time of the frame loop, s.
    cpu_seconds: Option<f64>,
}

/// Runs the preroll (set-up, not timed: sewing, a body blending into its first pose), then up
/// to `frames` frames, stopping at the first error.
fn run_frames(sim: &mut Simulation, frames: usize) -> FrameLoop {
    let mut stats: Vec<FrameStats> = Vec::with_capacity(frames);
    let mut error = sim.preroll().err().map(|e| e.to_string());
    let cpu0 = process_cpu_seconds();
    let start = Instant::now();
    for _ in 0..frames {
        if error.is_some() {
            break;
        }
        match sim.step_frame() {
            Ok(s) => stats.push(s),
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        }
    }
    let wall_seconds = start.elapsed().as_secs_f64();
    let cpu_seconds = cpu0.zip(process_cpu_seconds()).map(|(a, b)| b - a);
    FrameLoop {
        stats,
        error,
        wall_seconds,
        cpu_seconds,
    }
}

/// Phase shares of `wall` seconds in percent: EVAL, CG, C/C, C/S, other.
fn phase_percent(t: &Timings, wall: f64) -> [f64; 5] {
    let pct = |x: f64| if wall > 0.0 { 100.0 * x / wall } else { 0.0 };
    let phases = [t.eval, t.cg, t.cloth_cloth, t.cloth_solid];
    [
        pct(phases[0]),
        pct(phases[1]),
        pct(phases[2]),
        pct(phases[3]),
        pct((wall - phases.iter().sum::<f64>()).max(0.0)),
    ]
}

/// The integrator and linear solver the scene runs with, as the report names them.
fn method_names(scene: &Scene) -> (&'static str, &'static str) {
    match scene.solver.integrator {
        IntegratorKind::Implicit => (
            "implicit",
            match cloth::sim::scene::resolve_preconditioner(scene) {
                SolverChoice::Auto => "block_jacobi",
                SolverChoice::Diagonal => "diagonal",
                SolverChoice::BlockJacobi => "block_jacobi",
                SolverChoice::Multigrid => "multigrid",
                SolverChoice::Direct => "direct",
            },
        ),
        IntegratorKind::Verlet => ("verlet", "-"),
    }
}

/// The run's totals with the bench's two rules (see [`CaseResult::totals`]).
fn case_totals(run: &FrameLoop) -> Totals {
    let mut totals = Totals::from_frames(&run.stats, run.wall_seconds);
    if run.stats.is_empty() {
        totals.seconds_per_frame = f64::NAN;
    }
    totals.max_stretch = max_or_nan(run.stats.iter().map(|s| s.max_stretch));
    totals
}

/// Runs one case on the current rayon pool and measures it.
pub(crate) fn measure(spec: &CaseSpec) -> Result<CaseResult, String> {
    let Setup {
        scene,
        mut sim,
        seconds: setup_seconds,
        energy_bound,
    } = set_up(spec)?;
    let frames_requested = scene.run.frames;
    let run = run_frames(&mut sim, frames_requested);
    if let Some(path) = &spec.final_frame {
        let frame = crate::preview::FinalFrame {
            positions: sim.positions().iter().map(|p| [p.x, p.y, p.z]).collect(),
            triangles: sim.system().mesh.triangles().to_vec(),
        };
        crate::preview::write_final_frame(path, &frame)?;
    }
    let finite = (sim.positions().iter()).all(|p| p.iter().all(|c| c.is_finite()));
    let totals = case_totals(&run);
    let (integrator, solver) = method_names(&scene);
    let frames = run.stats.len();
    let solids = sim.colliders();
    Ok(CaseResult {
        spec: spec.clone(),
        cloth_vertices: sim.system().num_vertices(),
        cloth_triangles: sim.system().mesh.num_triangles(),
        colliders: solids.map_or(0, |c| c.len()),
        solid_vertices: solids.map(|c| c.vertex_count()),
        solid_triangles: solids.map(|c| c.triangle_count()),
        integrator: integrator.into(),
        solver: solver.into(),
        frames_requested,
        cg_not_converged: run.stats.iter().map(|s| s.cg_not_converged).sum(),
        cg_per_step: match totals.steps + totals.rejected_steps {
            0 => 0.0,
            solves => totals.cg_iterations as f64 / solves as f64,
        },
        cpu_seconds_per_frame: (run.cpu_seconds)
            .filter(|_| frames > 0)
            .map(|c| c / frames as f64),
        repeats: Vec::new(),
        setup_seconds,
        wall_seconds: run.wall_seconds,
        percent: phase_percent(&totals.timings, run.wall_seconds),
        peak_memory_bytes: cloth::sim::budget::peak_memory_bytes(),
        threads: rayon::current_num_threads(),
        max_kinetic_energy: max_or_nan(run.stats.iter().map(|s| s.kinetic_energy)),
        energy_bound,
        finite,
        error: run.error,
        totals,
        series: run.stats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::workspace_root;

    fn sheet(name: &str) -> CaseSpec {
        let path = workspace_root().join("scenes/fixed_sheet.toml");
        CaseSpec::new(name, "test", path, 1)
    }

    #[test]
    fn cpu_ticks_parse_after_the_command_name() {
        let line = "4242 (a (weird) name) R 1 2 3 4 5 6 7 8 9 10 150 25 0 0 20 0 3";
        assert_eq!(parse_cpu_ticks(line), Some(175));
        assert_eq!(parse_cpu_ticks("1 (x) R 1 2"), None);
        let own = process_cpu_seconds().unwrap();
        assert!(own.is_finite() && own >= 0.0);
    }

    #[test]
    fn verlet_step_splits_a_frame_into_exactly_k_steps() {
        for fps in [24.0, 30.0, 60.0] {
            for k in 1..3000 {
                let h = verlet_step(fps, k).unwrap();
                assert!(h <= 1.0 / fps);
                assert_eq!(((1.0 / fps) / h).ceil() as usize, k, "fps {fps} k {k}");
            }
        }
        assert!(verlet_step(30.0, 0).is_err());
    }

    #[test]
    fn overrides_change_exactly_what_they_name() {
        let base = prepare_scene(&sheet("base")).unwrap();
        let mut spec = sheet("over");
        spec.grid = Some(7);
        spec.frames = Some(3);
        spec.bend_scale = 10.0;
        spec.stretch_scale = 0.5;
        spec.solver = Some(SolverChoice::Direct);
        let s = prepare_scene(&spec).unwrap();
        assert_eq!(s.cloths[0].mesh.vertex_count(), Some(49));
        assert_eq!(s.run.frames, 3);
        assert_eq!(
            s.cloths[0].material.bend,
            10.0 * base.cloths[0].material.bend
        );
        assert_eq!(
            s.cloths[0].material.stretch[1],
            0.5 * base.cloths[0].material.stretch[1]
        );
        assert_eq!(s.cloths[0].material.shear, base.cloths[0].material.shear);
        assert_eq!(s.solver.preconditioner, SolverChoice::Direct);
        assert_eq!(s.solver.integrator, IntegratorKind::Implicit);

        spec.integrator = Some(IntegratorOverride::Verlet {
            steps_per_frame: 40,
            spring_stiffness: Some(123.0),
            max_stretch: Some(0.03),
        });
        let v = prepare_scene(&spec).unwrap();
        assert_eq!(v.solver.integrator, IntegratorKind::Verlet);
        assert_eq!(v.solver.spring_stiffness, 123.0);
        assert!(v.solver.strain_limit.is_some());
        assert_eq!((v.frame_time() / v.solver.verlet_h).ceil(), 40.0);
    }

    #[test]
    fn a_small_case_measures_finite_consistent_figures() {
        let mut spec = sheet("small");
        spec.grid = Some(8);
        spec.frames = Some(3);
        let r = measure(&spec).unwrap();
        assert_eq!((r.cloth_vertices, r.cloth_triangles), (64, 2 * 7 * 7));
        assert_eq!(
            (r.totals.frames, r.frames_requested, r.series.len()),
            (3, 3, 3)
        );
        assert!(r.error.is_none() && r.finite && r.is_stable());
        assert!(r.figures().iter().all(|x| x.is_finite()));
        assert_eq!(
            r.totals.steps,
            r.series.iter().map(|p| p.steps).sum::<usize>()
        );
        assert!(
            r.totals.h_min > 0.0
                && r.totals.h_min <= r.totals.h_max
                && r.totals.h_max <= 1.0 / 30.0 + 1e-12
        );
        // The phases are parts of the loop's wall time.
        let phases: f64 = r.percent[..4].iter().sum();
        assert!(phases <= 100.0 + 1e-9 && r.percent.iter().all(|p| *p >= 0.0));
        assert!((r.totals.seconds_per_frame * 3.0 - r.wall_seconds).abs() < 1e-12);
        // The sheet swings down from rest: it gains kinetic energy below the bound.
        assert!(r.max_kinetic_energy > 0.0 && r.max_kinetic_energy < r.energy_bound);
        assert!(r.peak_memory_bytes.is_some_and(|b| b > 0));
    }

    #[test]
    fn stability_needs_all_frames_bounded_energy_and_stretch() {
        let mut spec = sheet("stab");
        spec.grid = Some(6);
        spec.frames = Some(2);
        let good = measure(&spec).unwrap();
        assert!(good.is_stable());
        let mut r = good.clone();
        r.max_kinetic_energy = 2.0 * r.energy_bound;
        assert!(!r.is_stable());
        let mut r = good.clone();
        r.totals.max_stretch = f64::NAN;
        assert!(!r.is_stable());
        let mut r = good.clone();
        r.totals.frames = 1;
        assert!(!r.is_stable());
        let mut r = good;
        r.error = Some("non-finite".into());
        assert!(!r.is_stable());
    }
}
