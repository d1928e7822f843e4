//! The benchmark suite: options, the list of cases, running each case in a child process,
//! the explicit step search, and the final check that every figure is finite.

use crate::analysis::{self, PowerFit};
use crate::case::{CaseResult, CaseSpec, IntegratorOverride};
use crate::peer::{self, PeerRun};
use cloth::sim::{scene::Scene, scene::SolverChoice};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Options of `cargo xtask bench`.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchOptions {
    /// Reduced set (`--quick`).
    pub quick: bool,
    /// Only cases whose name contains this, or one of its comma-separated parts
    /// (`--filter NAME[,NAME...]`).
    pub filter: Option<String>,
    /// Rayon threads per case (`--threads N`, default: available cores).
    pub threads: usize,
    /// Runs per case; the median time is reported (`--repeat K`, default 1).
    pub repeat: usize,
    /// Output directory (`--out DIR`, default `<workspace>/bench-results`).
    pub out: PathBuf,
    /// Also write `docs/benchmarks.md` (`--docs`).
    pub docs: bool,
}

/// Grid resolutions `nx = ny` of the scaling series (484 ... 50,176 vertices).
pub const SCALING_GRIDS: [usize; 6] = [22, 30, 51, 86, 141, 224];
/// Factors on the flexural rigidity of the bend sweep.
pub const BEND_SCALES: [f64; 5] = [0.1, 1.0, 10.0, 100.0, 1000.0];
/// Factors on the stretch stiffness of the stretch sweep.
pub const STRETCH_SCALES: [f64; 3] = [0.1, 1.0, 10.0];

/// The workspace root (the parent of this crate's manifest directory).
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// Parses the arguments after `bench`.
pub fn parse_options(args: &[String]) -> Result<BenchOptions, String> {
    let mut o = BenchOptions {
        quick: false,
        filter: None,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        repeat: 1,
        out: workspace_root().join("bench-results"),
        docs: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (key, inline) = match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        let count = |name: &str, v: String| -> Result<usize, String> {
            match v.parse::<usize>() {
                Ok(n) if n >= 1 => Ok(n),
                _ => Err(format!("{name} must be a whole number >= 1, got `{v}`")),
            }
        };
        match key {
            "--quick" => o.quick = true,
            "--docs" => o.docs = true,
            "--filter" => o.filter = Some(value("--filter")?),
            "--threads" => o.threads = count("--threads", value("--threads")?)?,
            "--repeat" => o.repeat = count("--repeat", value("--repeat")?)?,
            "--out" => o.out = PathBuf::from(value("--out")?),
            other => return Err(format!("unknown option `{other}` (try `cargo xtask help`)")),
        }
    }
    Ok(o)
}

/// A case that was planned: run, failed, or skipped.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// The child ran and reported (possibly with a simulation error inside).
    Ran(Box<CaseResult>),
    /// The child could not run or report.
    Failed {
        /// The case.
        spec: Box<CaseSpec>,
        /// What went wrong.
        message: String,
    },
    /// Not run, with the reason.
    Skipped {
        /// Case name.
        name: String,
        /// Group.
        group: String,
        /// Why.
        reason: String,
    },
}

impl Outcome {
    /// Case name.
    pub fn name(&self) -> &str {
        match self {
            Outcome::Ran(r) => &r.spec.name,
            Outcome::Failed { spec, .. } => &spec.name,
            Outcome::Skipped { name, .. } => name,
        }
    }
    /// Group.
    pub fn group(&self) -> &str {
        match self {
            Outcome::Ran(r) => &r.spec.group,
            Outcome::Failed { spec, .. } => &spec.group,
            Outcome::Skipped { group, .. } => group,
        }
    }
    /// The result, when the case ran.
    pub fn result(&self) -> Option<&CaseResult> {
        match self {
            Outcome::Ran(r) => Some(r),
            _ => None,
        }
    }
}

/// The explicit step search: probes of steps per frame and the outcome.
#[derive(Clone, Debug, Serialize)]
pub struct VerletSearch {
    /// Name of the explicit case it belongs to.
    pub case: String,
    /// Spring stiffness used, N/m (`None`: the Verlet default).
    pub spring_stiffness: Option<f64>,
    /// Frames of each probe run.
    pub probe_frames: usize,
    /// Probes in order: steps per frame, step (s), stable, and why not.
    pub probes: Vec<Probe>,
    /// Fewest stable steps per frame found (the largest stable step is `1 / (fps k)`).
    pub steps_per_frame: Option<usize>,
    /// Largest stable step, s.
    pub h: Option<f64>,
    /// Whether even the largest step tried (one per frame) was stable.
    pub stable_at_frame_step: bool,
    /// Whether the full run was unstable at the searched step, so the steps per frame were
    /// raised by 25% (repeatedly) until it was stable.
    pub retried: bool,
}

/// Relative resolution of the explicit step search (5%: the largest stable step found is
/// within about 5% of the threshold between the probes).
pub const SEARCH_RESOLUTION: f64 = 0.05;

/// One probe of the explicit step search.
#[derive(Clone, Debug, Serialize)]
pub struct Probe {
    /// Steps per frame.
    pub steps_per_frame: usize,
    /// Step, s.
    pub h: f64,
    /// Stable by [`CaseResult::is_stable`].
    pub stable: bool,
    /// Largest kinetic energy / the bound (NaN when the run failed).
    pub energy_ratio: f64,
    /// Largest stretch (0.05 = 5%).
    pub max_stretch: f64,
    /// Error of the run, if any.
    pub error: Option<String>,
}

/// Max / min ratios over the cases of a sweep (`None` with fewer than two cases that ran).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Spread {
    /// Wall time per frame.
    pub wall: Option<f64>,
    /// Process CPU time per frame.
    pub cpu: Option<f64>,
    /// CG iterations over the run (deterministic: free of timing noise).
    pub cg_iterations: Option<f64>,
    /// Linear solves (accepted plus rejected steps) over the run (deterministic).
    pub solves: Option<f64>,
    /// Wall time of the frame loop per attempted step: what a step costs, apart from how
    /// many the physics needs.
    pub per_attempt: Option<f64>,
}

impl Spread {
    /// Spreads over `cases` (all must have run without error).
    pub fn of(cases: &[&CaseResult]) -> Spread {
        if cases.len() < 2 {
            return Spread::default();
        }
        let r = |f: &dyn Fn(&CaseResult) -> Option<f64>| -> Option<f64> {
            let v: Option<Vec<f64>> = cases.iter().map(|c| f(c)).collect();
            analysis::spread_ratio(&v?)
        };
        Spread {
            wall: r(&|c| Some(c.totals.seconds_per_frame)),
            cpu: r(&|c| c.cpu_seconds_per_frame),
            cg_iterations: r(&|c| Some(c.totals.cg_iterations as f64)),
            solves: r(&|c| Some(c.attempts() as f64)),
            per_attempt: r(&|c| c.seconds_per_attempt()),
        }
    }
}

/// Cases that ran the same configuration (same scene, overrides, integrator and solver, and
/// the same deterministic step and CG counts) under different names: their time spread is
/// measurement noise.
#[derive(Clone, Debug, Serialize)]
pub struct DuplicateGroup {
    /// Case names.
    pub cases: Vec<String>,
    /// Their times per frame, s, in the same order.
    pub seconds_per_frame: Vec<f64>,
    /// max / min of the times.
    pub ratio: f64,
}

/// Identical configurations among `cases` (groups of two or more).
pub fn duplicate_groups(cases: &[&CaseResult]) -> Vec<DuplicateGroup> {
    let key = |r: &CaseResult| {
        format!(
            "{}|{:?}|{}|{}|{}|{}|{}|{:?}|{}|{}|{}",
            r.spec.scene.display(),
            r.spec.grid,
            r.frames_requested,
            r.spec.bend_scale,
            r.spec.stretch_scale,
            r.integrator,
            r.solver,
            r.spec.integrator,
            r.totals.steps,
            r.totals.rejected_steps,
            r.totals.cg_iterations
        )
    };
    let mut groups: Vec<(String, Vec<&CaseResult>)> = Vec::new();
    for r in cases {
        let k = key(r);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, v)) => v.push(r),
            None => groups.push((k, vec![r])),
        }
    }
    groups
        .into_iter()
        .filter(|(_, v)| v.len() >= 2)
        .filter_map(|(_, v)| {
            let t: Vec<f64> = v.iter().map(|r| r.totals.seconds_per_frame).collect();
            Some(DuplicateGroup {
                cases: v.iter().map(|r| r.spec.name.clone()).collect(),
                ratio: analysis::spread_ratio(&t)?,
                seconds_per_frame: t,
            })
        })
        .collect()
}

/// Everything the suite measured.
#[derive(Clone, Debug, Serialize)]
pub struct SuiteResults {
    /// All planned cases in order.
    pub outcomes: Vec<Outcome>,
    /// Explicit step searches.
    pub searches: Vec<VerletSearch>,
    /// Power-law fit of time per frame against cloth vertices over the scaling series.
    pub scaling_fit: Option<PowerFit>,
    /// The same fit over the `scale` cases.
    pub scale_fit: Option<PowerFit>,
    /// Bend sweep: max / min spreads.
    pub bend_spread: Spread,
    /// Stretch sweep: max / min spreads.
    pub stretch_spread: Spread,
    /// Identical configurations run under different names (a noise estimate).
    pub duplicates: Vec<DuplicateGroup>,
    /// Median over cases of max / min of the repeats' times (`None` without repeats).
    pub repeat_spread_median: Option<f64>,
    /// Notes (skipped scenes, frame caps).
    pub notes: Vec<String>,
    /// Other simulators timed on our scenes in this run (Blender on Figure 1, when found).
    pub peers: Vec<PeerRun>,
    /// Why a peer that was found could not be timed.
    pub peer_errors: Vec<String>,
}

impl BenchOptions {
    /// Whether case `name` runs under `--filter` (every case without one).
    pub fn selects(&self, name: &str) -> bool {
        self.filter
            .as_ref()
            .is_none_or(|f| f.split(',').any(|part| name.contains(part.trim())))
    }
}

/// Frames for a case: the quick count, or the full count (`None` = the scene's).
fn frames(o: &BenchOptions, quick: usize, full: Option<usize>) -> Option<usize> {
    if o.quick { Some(quick) } else { full }
}

/// Frames of each scaling case (the same for every size so the fit compares like with like).
pub fn scaling_frames(o: &BenchOptions) -> usize {
    if o.quick { 5 } else { 30 }
}

/// Grids (nx = ny) of the `scale` cases: the cylinder drape at 2,601,
/// 10,201, 40,401 and 100,489 vertices (full set only: the largest takes minutes).
pub const SCALE_GRIDS: [usize; 4] = [51, 101, 201, 317];

/// Frames of the `scale` cases: the landing and the first second.
pub const SCALE_FRAMES: usize = 30;

/// Grid sizes of the scaling series for these options.
pub fn scaling_grids(o: &BenchOptions) -> &'static [usize] {
    if o.quick {
        &SCALING_GRIDS[..4]
    } else {
        &SCALING_GRIDS
    }
}

/// Smallest edge length (m) of the garments under `--quick`: the rows at the paper's vertex
/// counts (edges of 1.3 to 2.05 cm) take minutes each.
const QUICK_MIN_EDGE_LENGTH: f64 = 0.03;

/// The garment cases: name and scene file.
const GARMENT_SCENES: [(&str, &str); 11] = [
    ("shirt", "shirt_mannequin.toml"),
    ("trousers", "trousers_mannequin.toml"),
    ("skirt", "skirt_mannequin.toml"),
    ("outfit", "outfit_mannequin.toml"),
    ("shirt_twist", "shirt_twist.toml"),
    ("trousers_walk", "trousers_walk.toml"),
    ("outfit_walk", "outfit_walk.toml"),
    ("dancer_skirt", "dancer_skirt.toml"),
    ("dancer_long_skirt", "dancer_long_skirt.toml"),
    ("dancer_skirt_blouse", "dancer_skirt_blouse.toml"),
    ("dancer_long_skirt_blouse", "dancer_long_skirt_blouse.toml"),
];

/// Garment cases left out of `--quick`: two garments sewn one over the other, minutes of CPU
/// even for a few frames at the paper's size, and not measured coarsened.
const FULL_ONLY_GARMENTS: [&str; 2] = ["dancer_skirt_blouse", "dancer_long_skirt_blouse"];

fn scene_path(name: &str) -> PathBuf {
    workspace_root().join("scenes").join(name)
}

/// The `fig1_drape` case (also what Blender's `blender_fig1` run mirrors).
fn fig1_spec(o: &BenchOptions) -> CaseSpec {
    let mut c = CaseSpec::new(
        "fig1_drape",
        "paper",
        scene_path("drape_cylinder.toml"),
        o.threads,
    );
    c.frames = frames(o, 10, None);
    c
}

/// Blender's Figure 1 (`blender_fig1`, see the `peer` module), `o.repeat` times after the
/// cases, when selected and found; not under `--quick`. A missing Blender is a note in
/// `notes`; a failed run is the error.
fn blender_run(o: &BenchOptions, notes: &mut Vec<String>) -> Result<Option<PeerRun>, String> {
    if o.quick || !o.selects(peer::BLENDER_FIG1) {
        return Ok(None);
    }
    let Some(exe) = peer::find_blender() else {
        notes.push(
            "blender_fig1: no `blender` on PATH (nor CLOTH_BLENDER): Blender was not timed \
             (`apt-get install blender`)"
                .into(),
        );
        return Ok(None);
    };
    eprintln!("bench: timing {} on Figure 1", exe.display());
    match peer::blender_fig1(&exe, &fig1_spec(o), o.repeat, &o.out.join("blender")) {
        Ok(r) => {
            eprintln!(
                "[peer] {:<24} {:>9.2} ms/frame  {} verts  {} frames  ({})",
                r.name,
                1e3 * r.seconds_per_frame,
                r.vertices,
                r.frames,
                r.who
            );
            Ok(Some(r))
        }
        Err(e) => Err(format!("{}: {e}", peer::BLENDER_FIG1)),
    }
}

/// Power-law fit of `y` (a per-case figure; `None` drops the fit) against cloth vertices over
/// `cases`.
pub fn fit_over_vertices(
    cases: &[&CaseResult],
    y: impl Fn(&CaseResult) -> Option<f64>,
) -> Option<PowerFit> {
    let points: Option<Vec<(f64, f64)>> = (cases.iter())
        .map(|r| y(r).map(|y| (r.cloth_vertices as f64, y)))
        .collect();
    analysis::fit_power_law(&points?)
}

/// The paper's scenes: Figures 1 and 2, with the default bending and with the paper's hinge,
/// and the garment when `scenes/garment.toml` exists.
fn paper_cases(o: &BenchOptions, cases: &mut Vec<CaseSpec>, notes: &mut Vec<String>) {
    let (drape, sheet) = (
        scene_path("drape_cylinder.toml"),
        scene_path("fixed_sheet.toml"),
    );
    let t = o.threads;
    cases.push(fig1_spec(o));
    let mut c = CaseSpec::new("fig2_fixed_sheet", "paper", sheet.clone(), t);
    c.frames = frames(o, 10, None);
    cases.push(c);
    // The paper's own bending (the hinge) on the same figures, beside the default shape
    // operator: what the converging bend model costs.
    for (name, scene) in [
        ("fig1_drape_hinge", &drape),
        ("fig2_fixed_sheet_hinge", &sheet),
    ] {
        let mut c = CaseSpec::new(name, "paper", scene.clone(), t);
        c.frames = frames(o, 10, None);
        c.bend_model = Some(cloth::sim::forces::BendModel::Hinge);
        cases.push(c);
    }
    let garment = scene_path("garment.toml");
    if garment.exists() {
        let mut c = CaseSpec::new("garment", "paper", garment, t);
        c.frames = frames(o, 5, None);
        cases.push(c);
    } else {
        notes.push("scenes/garment.toml is missing: the garment case was skipped".into());
    }
}

/// Garments sewn onto the mannequin (beside the paper's garment rows).
fn garment_cases(o: &BenchOptions, cases: &mut Vec<CaseSpec>, notes: &mut Vec<String>) {
    for (name, file) in GARMENT_SCENES {
        let path = scene_path(file);
        if o.quick && FULL_ONLY_GARMENTS.contains(&name) {
            continue;
        }
        if path.exists() {
            let mut c = CaseSpec::new(name, "garment", path, o.threads);
            c.frames = frames(o, 5, None);
            c.min_edge_length = o.quick.then_some(QUICK_MIN_EDGE_LENGTH);
            cases.push(c);
        } else {
            notes.push(format!(
                "scenes/{file} is missing: the {name} case was skipped"
            ));
        }
    }
}

/// The drape at growing sizes: the scaling series, and the `scale` cases (full set only).
fn size_cases(o: &BenchOptions, cases: &mut Vec<CaseSpec>) {
    let drape = scene_path("drape_cylinder.toml");
    for &n in scaling_grids(o) {
        let name = format!("scaling_{}", n * n);
        let mut c = CaseSpec::new(&name, "scaling", drape.clone(), o.threads);
        c.grid = Some(n);
        c.frames = Some(scaling_frames(o));
        cases.push(c);
    }
    if !o.quick {
        for &n in &SCALE_GRIDS {
            let name = format!("scale_{}", n * n);
            let mut c = CaseSpec::new(&name, "scale", drape.clone(), o.threads);
            c.grid = Some(n);
            c.frames = Some(SCALE_FRAMES);
            cases.push(c);
        }
    }
}

/// The stiffness sweeps on the drape and the linear solvers on the sheet.
fn sweep_cases(o: &BenchOptions, cases: &mut Vec<CaseSpec>) {
    let (drape, sheet) = (
        scene_path("drape_cylinder.toml"),
        scene_path("fixed_sheet.toml"),
    );
    let t = o.threads;
    for &k in &BEND_SCALES {
        let mut c = CaseSpec::new(&format!("bend_x{k}"), "bend", drape.clone(), t);
        c.bend_scale = k;
        c.frames = frames(o, 5, None);
        cases.push(c);
    }
    for &k in &STRETCH_SCALES {
        let mut c = CaseSpec::new(&format!("stretch_x{k}"), "stretch", drape.clone(), t);
        c.stretch_scale = k;
        c.frames = frames(o, 5, None);
        cases.push(c);
    }
    for (name, s) in [
        ("diagonal", SolverChoice::Diagonal),
        ("block_jacobi", SolverChoice::BlockJacobi),
        ("multigrid", SolverChoice::Multigrid),
        ("direct", SolverChoice::Direct),
    ] {
        let mut c = CaseSpec::new(&format!("solver_{name}"), "solver", sheet.clone(), t);
        c.solver = Some(s);
        c.frames = frames(o, 5, None);
        cases.push(c);
    }
}

/// Self-contact on the thrown sheet (off, penalty springs only, and the default: springs,
/// friction between layers and the continuous collision check) and on the twisting tube (two
/// turns of wringing, off and on).
fn self_contact_cases(o: &BenchOptions, cases: &mut Vec<CaseSpec>) {
    let thrown = scene_path("thrown_sheet.toml");
    for (name, on, ccd) in [
        ("off", false, true),
        ("penalty", true, false),
        ("on", true, true),
    ] {
        let name = format!("selfcontact_{name}");
        let mut c = CaseSpec::new(&name, "selfcontact", thrown.clone(), o.threads);
        c.self_collision = Some(on);
        c.self_ccd = Some(ccd);
        c.frames = frames(o, 15, None);
        cases.push(c);
    }
    let tube = scene_path("twisting_tube.toml");
    for (name, on) in [("off", false), ("on", true)] {
        let name = format!("selfcontact_tube_{name}");
        let mut c = CaseSpec::new(&name, "selfcontact", tube.clone(), o.threads);
        c.self_collision = Some(on);
        c.frames = frames(o, 5, None);
        cases.push(c);
    }
}

/// The plain cases (everything but the explicit searches), filtered.
pub fn plan(o: &BenchOptions) -> (Vec<CaseSpec>, Vec<String>) {
    let mut notes = Vec::new();
    let mut cases = Vec::new();
    paper_cases(o, &mut cases, &mut notes);
    garment_cases(o, &mut cases, &mut notes);
    size_cases(o, &mut cases);
    sweep_cases(o, &mut cases);
    self_contact_cases(o, &mut cases);
    cases.retain(|c| o.selects(&c.name));
    (cases, notes)
}

/// Runs `spec` in a child process (`current_exe bench-case <json>`) and parses its report.
pub fn run_in_child(spec: &CaseSpec) -> Result<CaseResult, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the xtask binary: {e}"))?;
    let json = serde_json::to_string(spec).map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .arg("bench-case")
        .arg(json)
        .output()
        .map_err(|e| format!("cannot start the child process: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        let tail: String = stderr.lines().rev().take(5).collect::<Vec<_>>().join(" | ");
        return Err(format!("child exited with {}: {tail}", out.status));
    }
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .ok_or_else(|| "child printed no result".to_string())?;
    parse_child_result(line)
}

/// Reads the child's result line. A run that stopped early can carry non-finite figures,
/// which JSON writes as `null` and which then do not read back as numbers; the error the
/// child reported is then what the message says, not the unreadable figure.
fn parse_child_result(line: &str) -> Result<CaseResult, String> {
    serde_json::from_str(line).map_err(|e| {
        let reported = serde_json::from_str::<serde_json::Value>(line)
            .ok()
            .and_then(|v| v.get("error")?.as_str().map(str::to_owned));
        match reported {
            Some(error) => {
                format!("the case stopped: {error} (its figures could not be read: {e})")
            }
            None => format!("cannot read the child's result: {e}"),
        }
    })
}

/// Runs a case `repeat` times and keeps the run with the (lower) median time per frame,
/// with `seconds_per_frame` set to the median and every repeat's time in `repeats`.
pub fn run_repeated(spec: &CaseSpec, repeat: usize) -> Outcome {
    let specs = std::slice::from_ref(spec);
    let mut outcomes = run_rounds(specs, repeat, run_in_child, |_, _| {});
    outcomes.pop().expect("one outcome per case")
}

/// Runs every case of `specs` `repeat` times in rounds, each case once per round in order
/// (A B C A B C ..., not A A B B C C), so that a slow spell of a shared machine falls on all
/// the cases that are compared instead of on the ones that happened to run during it. A case
/// that fails is not run again. Each outcome is as [`run_repeated`]'s: the run with the
/// (lower) median time per frame, `seconds_per_frame` the median, `repeats` every time in run
/// order. `report(k, outcome)` is called for case `k` once its outcome is final.
pub fn run_rounds(
    specs: &[CaseSpec],
    repeat: usize,
    mut run: impl FnMut(&CaseSpec) -> Result<CaseResult, String>,
    mut report: impl FnMut(usize, &Outcome),
) -> Vec<Outcome> {
    let rounds = repeat.max(1);
    let mut runs: Vec<Vec<CaseResult>> = specs.iter().map(|_| Vec::new()).collect();
    let mut outcomes: Vec<Option<Outcome>> = specs.iter().map(|_| None).collect();
    for round in 1..=rounds {
        for (k, spec) in specs.iter().enumerate() {
            if outcomes[k].is_some() {
                continue;
            }
            let outcome = match run(spec) {
                Err(message) => Some(Outcome::Failed {
                    spec: Box::new(spec.clone()),
                    message,
                }),
                Ok(r) => {
                    if round < rounds {
                        eprintln!(
                            "      round {round}/{rounds}: {:<24} {:>9.2} ms/frame",
                            spec.name,
                            1e3 * r.totals.seconds_per_frame
                        );
                    }
                    runs[k].push(r);
                    (round == rounds).then(|| median_run(std::mem::take(&mut runs[k])))
                }
            };
            if let Some(outcome) = outcome {
                report(k, &outcome);
                outcomes[k] = Some(outcome);
            }
        }
    }
    outcomes
        .into_iter()
        .map(|o| o.expect("every case has an outcome after the last round"))
        .collect()
}

/// The run of `runs` (at least one) with the (lower) median time per frame, carrying the
/// median and every run's time.
fn median_run(mut runs: Vec<CaseResult>) -> Outcome {
    let times: Vec<f64> = runs.iter().map(|r| r.totals.seconds_per_frame).collect();
    let pick = analysis::median_index(&times).unwrap_or(0);
    let mut r = runs.swap_remove(pick);
    r.totals.seconds_per_frame = analysis::median(&times).unwrap_or(f64::NAN);
    r.repeats = times;
    Outcome::Ran(Box::new(r))
}

fn progress(k: usize, total: usize, outcome: &Outcome) {
    let what = match outcome {
        Outcome::Ran(r) => match &r.error {
            None => format!(
                "{:>9.2} ms/frame  {} verts  {} frames  {:.1} CG/step",
                1e3 * r.totals.seconds_per_frame,
                r.cloth_vertices,
                r.totals.frames,
                r.cg_per_step
            ),
            Some(e) => format!("stopped after {} frames: {e}", r.totals.frames),
        },
        Outcome::Failed { message, .. } => format!("FAILED: {message}"),
        Outcome::Skipped { reason, .. } => format!("skipped: {reason}"),
    };
    eprintln!("[{k:>2}/{total}] {:<24} {what}", outcome.name());
}

/// Largest steps per frame the explicit step search tries.
const MAX_STEPS_PER_FRAME: usize = 1 << 14;

/// What the explicit cases of one spring stiffness share: the scene, its frame rate and the
/// options.
struct Explicit<'a> {
    o: &'a BenchOptions,
    name: &'a str,
    spring_stiffness: Option<f64>,
    sheet: PathBuf,
    fps: f64,
}

impl Explicit<'_> {
    /// The case at `k` equal Verlet steps per frame.
    fn spec(&self, k: usize, frames: Option<usize>, case_name: &str, group: &str) -> CaseSpec {
        let mut c = CaseSpec::new(case_name, group, self.sheet.clone(), self.o.threads);
        c.frames = frames;
        c.integrator = Some(IntegratorOverride::Verlet {
            steps_per_frame: k,
            spring_stiffness: self.spring_stiffness,
            max_stretch: None,
        });
        c
    }

    /// One probe: a short run at `k` steps per frame, recorded in `probes`.
    fn probe(&self, k: usize, probe_frames: usize, probes: &mut Vec<Probe>) -> bool {
        let name = self.name;
        let spec = self.spec(
            k,
            Some(probe_frames),
            &format!("{name}_probe_k{k}"),
            "verlet_probe",
        );
        let (stable, energy_ratio, max_stretch, error) = match run_in_child(&spec) {
            Ok(r) => (
                r.is_stable(),
                r.max_kinetic_energy / r.energy_bound,
                r.totals.max_stretch,
                r.error.clone(),
            ),
            Err(e) => (false, f64::NAN, f64::NAN, Some(e)),
        };
        eprintln!(
            "      {name}: {k:>5} steps/frame (h = {:.3e} s): {}",
            1.0 / (self.fps * k as f64),
            if stable { "stable" } else { "unstable" }
        );
        probes.push(Probe {
            steps_per_frame: k,
            h: crate::case::verlet_step(self.fps, k).unwrap_or(f64::NAN),
            stable,
            energy_ratio,
            max_stretch,
            error,
        });
        stable
    }

    /// The fewest stable steps per frame: from 20 (the default `verlet_h`) halve while stable
    /// or double until stable, then bisect between the last unstable and the first stable.
    fn search(&self, probe_frames: usize, probes: &mut Vec<Probe>) -> Option<usize> {
        let mut probe = |k: usize| self.probe(k, probe_frames, probes);
        // Bracket: k_bad unstable (0 = nothing known), k_good stable.
        let start = 20;
        let (mut bad, mut good) = (0usize, None);
        if probe(start) {
            good = Some(start);
            let mut k = start;
            // Step up (fewer steps per frame) by halving k until unstable or k = 1.
            while k > 1 {
                let next = (k / 2).max(1);
                if probe(next) {
                    good = Some(next);
                    k = next;
                } else {
                    bad = next;
                    break;
                }
            }
        } else {
            bad = start;
            let mut k = start;
            while k < MAX_STEPS_PER_FRAME {
                k *= 2;
                if probe(k) {
                    good = Some(k);
                    break;
                }
                bad = k;
            }
        }
        good.map(|g| analysis::bisect_min_stable(bad, g, SEARCH_RESOLUTION, &mut probe).0)
    }

    /// The full run at `k` steps per frame, with 25% more steps (repeatedly, noted in
    /// `search`) while it is not stable.
    fn full_run(&self, mut k: usize, search: &mut VerletSearch) -> Outcome {
        let name = self.name;
        loop {
            let spec = self.spec(k, frames(self.o, 4, None), name, "explicit");
            let outcome = run_repeated(&spec, self.o.repeat);
            let unstable = outcome.result().is_some_and(|r| !r.is_stable());
            if unstable && k < MAX_STEPS_PER_FRAME {
                eprintln!("      {name}: unstable over the full run at {k} steps/frame, +25%");
                k = k + k.div_ceil(4);
                search.retried = true;
                search.steps_per_frame = Some(k);
                search.h = crate::case::verlet_step(self.fps, k).ok();
                continue;
            }
            return outcome;
        }
    }
}

/// Explicit Verlet on the fixed sheet: finds the fewest equal steps per frame that stay
/// stable over a short run (doubling from the default 20 until stable, then bisecting), then
/// runs the full case at that step, raising the steps again if the full run is not stable.
fn explicit_case(
    o: &BenchOptions,
    name: &str,
    spring_stiffness: Option<f64>,
) -> (VerletSearch, Outcome) {
    let sheet = scene_path("fixed_sheet.toml");
    let fps = Scene::load(&sheet).map_or(30.0, |s| s.run.fps);
    let ex = Explicit {
        o,
        name,
        spring_stiffness,
        sheet,
        fps,
    };
    let probe_frames = if o.quick { 5 } else { 30 };
    let mut probes: Vec<Probe> = Vec::new();
    let found = ex.search(probe_frames, &mut probes);
    let mut search = VerletSearch {
        case: name.to_string(),
        spring_stiffness,
        probe_frames,
        probes,
        steps_per_frame: found,
        h: found.and_then(|k| crate::case::verlet_step(fps, k).ok()),
        stable_at_frame_step: found == Some(1),
        retried: false,
    };
    let Some(k) = found else {
        let reason = format!("no stable step found up to {MAX_STEPS_PER_FRAME} steps per frame");
        let skipped = Outcome::Skipped {
            name: name.into(),
            group: "explicit".into(),
            reason,
        };
        return (search, skipped);
    };
    let outcome = ex.full_run(k, &mut search);
    (search, outcome)
}

/// Scenes of the implicit-against-explicit comparison (case name part, scene file).
const COMPARE_SCENES: [(&str, &str); 2] = [
    ("hanging", "hanging_verlet.toml"),
    ("fixed_sheet", "fixed_sheet.toml"),
];

/// Verlet steps per frame of the comparison.
const COMPARE_STEPS: [usize; 3] = [1, 2, 4];

/// The comparison's case names in run order (implicit first, then Verlet per steps per frame),
/// filtered.
fn compare_names(o: &BenchOptions) -> Vec<String> {
    let mut v = Vec::new();
    for (scene, _) in COMPARE_SCENES {
        v.push(format!("compare_{scene}_implicit"));
        v.extend(COMPARE_STEPS.map(|k| format!("compare_{scene}_verlet_k{k}")));
    }
    v.retain(|n| o.selects(n));
    v
}

/// Implicit against explicit at equal maximum stretch: each scene runs with the implicit
/// integrator (its material's stiffness), then with Verlet at 1, 2 and 4 steps per frame and
/// the strain limit `[0.9, 1 + s]`, `s` the implicit run's maximum triangle stretch (the
/// Verlet default 10% when the implicit case did not run). Progress is numbered from `done`.
fn compare_cases(o: &BenchOptions, done: usize, total: usize) -> Vec<Outcome> {
    let names = compare_names(o);
    let mut outcomes = Vec::new();
    for (scene, file) in COMPARE_SCENES {
        let spec = |name: String, integrator| {
            let mut c = CaseSpec::new(&name, "compare", scene_path(file), o.threads);
            c.frames = frames(o, 4, Some(30));
            c.integrator = Some(integrator);
            c.final_frame = Some(o.out.join("compare").join(format!("{name}.json")));
            c
        };
        let first = outcomes.len();
        let mut stretch = None;
        let name = format!("compare_{scene}_implicit");
        if names.contains(&name) {
            let outcome = run_repeated(&spec(name, IntegratorOverride::Implicit), o.repeat);
            stretch = outcome
                .result()
                .map(|r| r.totals.max_stretch)
                .filter(|s| s.is_finite());
            progress(done + outcomes.len() + 1, total, &outcome);
            outcomes.push(outcome);
        }
        for k in COMPARE_STEPS {
            let name = format!("compare_{scene}_verlet_k{k}");
            if !names.contains(&name) {
                continue;
            }
            let integrator = IntegratorOverride::Verlet {
                steps_per_frame: k,
                spring_stiffness: None,
                max_stretch: stretch,
            };
            let outcome = run_repeated(&spec(name, integrator), o.repeat);
            progress(done + outcomes.len() + 1, total, &outcome);
            outcomes.push(outcome);
        }
        compare_preview(o, scene, &outcomes[first..]);
    }
    outcomes
}

/// The file name of the side-by-side preview of a comparison scene.
pub fn compare_preview_name(scene: &str) -> String {
    format!("compare_{scene}.png")
}

/// Renders the last frames of the comparison cases of `scene` that ran to their end side by
/// side (implicit first, then Verlet at 1, 2, 4 steps per frame) into
/// `OUT/compare_<scene>.png`, and into `docs/` with `--docs`; a failure is reported, not fatal.
fn compare_preview(o: &BenchOptions, scene: &str, outcomes: &[Outcome]) {
    let paths: Vec<&Path> = outcomes
        .iter()
        .filter_map(Outcome::result)
        .filter(|r| r.error.is_none())
        .filter_map(|r| r.spec.final_frame.as_deref())
        .collect();
    if paths.is_empty() {
        return;
    }
    let mut outs = vec![o.out.join(compare_preview_name(scene))];
    if o.docs {
        outs.push(
            workspace_root()
                .join("docs")
                .join(compare_preview_name(scene)),
        );
    }
    for out in outs {
        match crate::preview::side_by_side(&paths, &out) {
            Ok(n) => eprintln!("bench: {n} final frames side by side in {}", out.display()),
            Err(e) => eprintln!("bench: no preview for {scene}: {e}"),
        }
    }
}

/// Runs the whole suite for `o` (printing progress to stderr).
pub fn run_suite(o: &BenchOptions) -> SuiteResults {
    let (cases, mut notes) = plan(o);
    let explicit: Vec<(&str, Option<f64>)> = {
        let mut v = vec![("explicit_verlet", None)];
        if !o.quick {
            // Springs as stiff as the cloth's mean membrane stiffness (no strain limit help).
            let k = Scene::load(scene_path("fixed_sheet.toml"))
                .map(|s| 0.5 * (s.cloths[0].material.stretch[0] + s.cloths[0].material.stretch[1]))
                .ok();
            if let Some(k) = k {
                v.push(("explicit_verlet_stiff", Some(k)));
            }
        }
        v.retain(|(n, _)| o.selects(n));
        v
    };
    let total = cases.len() + explicit.len() + compare_names(o).len();
    let mut outcomes = run_rounds(&cases, o.repeat, run_in_child, |i, outcome| {
        progress(i + 1, total, outcome)
    });
    let mut searches = Vec::new();
    for (j, (name, k)) in explicit.iter().enumerate() {
        let (search, outcome) = explicit_case(o, name, *k);
        progress(cases.len() + j + 1, total, &outcome);
        searches.push(search);
        outcomes.push(outcome);
    }
    let done = outcomes.len();
    outcomes.extend(compare_cases(o, done, total));
    let (peers, peer_errors) = match blender_run(o, &mut notes) {
        Ok(run) => (run.into_iter().collect(), Vec::new()),
        Err(e) => (Vec::new(), vec![e]),
    };
    let ran = |group: &str| -> Vec<&CaseResult> {
        outcomes
            .iter()
            .filter(|c| c.group() == group)
            .filter_map(Outcome::result)
            .filter(|r| r.error.is_none())
            .collect()
    };
    let fit = |group: &str| fit_over_vertices(&ran(group), |r| Some(r.totals.seconds_per_frame));
    let scaling_fit = fit("scaling");
    let scale_fit = fit("scale");
    let all: Vec<&CaseResult> = outcomes
        .iter()
        .filter_map(Outcome::result)
        .filter(|r| r.error.is_none())
        .collect();
    let duplicates = duplicate_groups(&all);
    let spreads: Vec<f64> = all
        .iter()
        .filter(|r| r.repeats.len() >= 2)
        .filter_map(|r| analysis::spread_ratio(&r.repeats))
        .collect();
    let repeat_spread_median = analysis::median(&spreads);
    let bend_spread = Spread::of(&ran("bend"));
    let stretch_spread = Spread::of(&ran("stretch"));
    notes.push(format!(
        "scaling series: {} frames per size (the same window for every size)",
        scaling_frames(o)
    ));
    SuiteResults {
        outcomes,
        searches,
        scaling_fit,
        scale_fit,
        bend_spread,
        stretch_spread,
        duplicates,
        repeat_spread_median,
        notes,
        peers,
        peer_errors,
    }
}

/// Problems that make the run a failure: cases that did not run, stopped early, or reported
/// non-finite figures, and a missing scaling fit when the series ran.
pub fn problems(s: &SuiteResults) -> Vec<String> {
    let mut p = Vec::new();
    let mut ran = 0;
    for o in &s.outcomes {
        match o {
            Outcome::Ran(r) => {
                ran += 1;
                if let Some(e) = &r.error {
                    p.push(format!(
                        "{}: stopped after {} frames: {e}",
                        r.spec.name, r.totals.frames
                    ));
                } else if r.totals.frames != r.frames_requested || r.totals.frames == 0 {
                    p.push(format!(
                        "{}: ran {} of {} frames",
                        r.spec.name, r.totals.frames, r.frames_requested
                    ));
                } else if !r.figures().iter().all(|x| x.is_finite()) || !r.finite {
                    p.push(format!("{}: non-finite figures", r.spec.name));
                }
            }
            Outcome::Failed { spec, message } => p.push(format!("{}: {message}", spec.name)),
            Outcome::Skipped {
                group,
                name,
                reason,
            } if group == "explicit" => p.push(format!("{name}: {reason}")),
            Outcome::Skipped { .. } => {}
        }
    }
    p.extend(s.peer_errors.iter().cloned());
    if ran == 0 && s.peers.is_empty() {
        p.push("no case ran (check --filter)".into());
    }
    let scaling = s
        .outcomes
        .iter()
        .filter(|o| o.group() == "scaling" && o.result().is_some())
        .count();
    if scaling >= 2 && s.scaling_fit.is_none_or(|f| !f.exponent.is_finite()) {
        p.push("scaling: no finite exponent".into());
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use cloth::sim::scene::MeshSpec;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    /// A run that stopped before its first accepted step has no smallest step (infinite,
    /// written as `null`): the parent must say why the case stopped, not only that a number
    /// is missing.
    #[test]
    fn a_stopped_case_reports_its_error_even_with_unreadable_figures() {
        let mut spec = CaseSpec::new("s", "t", scene_path("fixed_sheet.toml"), 1);
        spec.grid = Some(5);
        spec.frames = Some(1);
        let r = crate::case::measure(&spec).unwrap();
        let line = serde_json::to_string(&r).unwrap();
        assert!(
            parse_child_result(&line).is_ok(),
            "a finished run reads back"
        );
        let mut v: serde_json::Value = serde_json::from_str(&line).unwrap();
        v["h_min"] = serde_json::Value::Null;
        v["error"] = "frame 0: step size fell below h_min = 1e-5 s".into();
        let message = parse_child_result(&v.to_string()).unwrap_err();
        assert!(
            message.contains("step size fell below h_min = 1e-5 s"),
            "{message}"
        );
        v["error"] = serde_json::Value::Null;
        let message = parse_child_result(&v.to_string()).unwrap_err();
        assert!(message.starts_with("cannot read"), "{message}");
    }

    /// Repeats run in rounds (A B C A B C, not A A B B C C), a case that fails is not run
    /// again, and each outcome carries the median of its own runs.
    #[test]
    fn repeats_run_in_rounds_and_each_case_gets_the_median_of_its_own_runs() {
        let mut spec = CaseSpec::new("a", "t", scene_path("fixed_sheet.toml"), 1);
        spec.grid = Some(5);
        spec.frames = Some(1);
        let base = crate::case::measure(&spec).unwrap();
        let specs: Vec<CaseSpec> = ["a", "b", "c"]
            .iter()
            .map(|n| {
                let mut c = spec.clone();
                c.name = n.to_string();
                c
            })
            .collect();
        let mut order: Vec<String> = Vec::new();
        let mut reported = Vec::new();
        let outcomes = run_rounds(
            &specs,
            3,
            |s| {
                order.push(s.name.clone());
                if s.name == "b" && order.len() > 3 {
                    return Err("b broke".into());
                }
                let mut r = base.clone();
                r.spec = s.clone();
                // The run's place in the run order stands for its time.
                r.totals.seconds_per_frame = order.len() as f64;
                Ok(r)
            },
            |k, o| reported.push((k, o.name().to_string())),
        );
        assert_eq!(order, ["a", "b", "c", "a", "b", "c", "a", "c"]);
        let ran = |k: usize| match &outcomes[k] {
            Outcome::Ran(r) => (
                r.spec.name.clone(),
                r.totals.seconds_per_frame,
                r.repeats.clone(),
            ),
            other => panic!("case {k} did not run: {}", other.name()),
        };
        assert_eq!(ran(0), ("a".to_string(), 4.0, vec![1.0, 4.0, 7.0]));
        assert_eq!(ran(2), ("c".to_string(), 6.0, vec![3.0, 6.0, 8.0]));
        assert!(
            matches!(&outcomes[1], Outcome::Failed { message, .. } if message == "b broke"),
            "b's failure is its outcome"
        );
        let want = [(1, "b"), (0, "a"), (2, "c")].map(|(k, n)| (k, n.to_string()));
        assert_eq!(reported, want);
    }

    #[test]
    fn identical_configurations_group_and_others_do_not() {
        let spec = |name: &str, bend: f64| {
            let mut c = CaseSpec::new(name, "t", scene_path("fixed_sheet.toml"), 1);
            c.grid = Some(6);
            c.frames = Some(2);
            c.bend_scale = bend;
            c
        };
        let a = crate::case::measure(&spec("a", 1.0)).unwrap();
        let b = crate::case::measure(&spec("b", 1.0)).unwrap();
        let c = crate::case::measure(&spec("c", 1000.0)).unwrap();
        // Same configuration: same deterministic counts (the grouping key relies on it).
        assert_eq!(
            (a.totals.steps, a.totals.cg_iterations),
            (b.totals.steps, b.totals.cg_iterations)
        );
        let groups = duplicate_groups(&[&a, &c, &b]);
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].cases, ["a", "b"]);
        assert!(groups[0].ratio >= 1.0);
        assert!(duplicate_groups(&[&a, &c]).is_empty());
    }

    #[test]
    fn options_parse_all_flags() {
        let o = parse_options(&args(
            "--quick --filter bend --threads 3 --repeat=5 --out /tmp/x",
        ))
        .unwrap();
        assert!(o.quick);
        assert_eq!(o.filter.as_deref(), Some("bend"));
        assert_eq!((o.threads, o.repeat), (3, 5));
        assert_eq!(o.out, PathBuf::from("/tmp/x"));
        assert!(parse_options(&args("--threads 0")).is_err());
        assert!(parse_options(&args("--repeat")).is_err());
        assert!(parse_options(&args("--bogus")).is_err());
    }

    #[test]
    fn quick_garments_are_coarsened_and_full_ones_keep_the_scene_edge_length() {
        let edge_lengths = |o: &BenchOptions, name: &str| -> Vec<f64> {
            let (cases, _) = plan(o);
            let c = cases.iter().find(|c| c.name == name);
            let scene = crate::case::prepare_scene(c.expect("the case")).expect("the scene");
            (scene.cloths.iter())
                .map(|c| match c.mesh {
                    MeshSpec::Garmentcode { edge_length, .. } => edge_length,
                    _ => panic!("a sewing pattern"),
                })
                .collect()
        };
        let full = parse_options(&[]).unwrap();
        let quick = parse_options(&args("--quick")).unwrap();
        // The long skirt at the paper's vertex count, coarsened to 3 cm edges.
        let fine = edge_lengths(&full, "dancer_long_skirt");
        assert!(fine.iter().all(|&e| e < QUICK_MIN_EDGE_LENGTH), "{fine:?}");
        let coarse = edge_lengths(&quick, "dancer_long_skirt");
        assert_eq!(coarse, [QUICK_MIN_EDGE_LENGTH]);
        // The two-garment rows run in the full suite only.
        let (cases, _) = plan(&quick);
        for name in FULL_ONLY_GARMENTS {
            assert!(cases.iter().all(|c| c.name != name), "{name} under --quick");
        }
        // Coarser garments keep their edges: the outfit's trousers (4 cm), its shirt raised.
        let (fine, coarse) = (
            edge_lengths(&full, "outfit"),
            edge_lengths(&quick, "outfit"),
        );
        assert!(fine[0] > QUICK_MIN_EDGE_LENGTH && fine[1] < QUICK_MIN_EDGE_LENGTH);
        assert_eq!(coarse, [fine[0], QUICK_MIN_EDGE_LENGTH]);
        // A coarse copy for sewing stays where it is coarser than the coarsened garment and
        // goes where it is not (the walking outfit: trousers sewn at 4 cm, shirt at 2.5 cm).
        let (cases, _) = plan(&quick);
        // The 100,489-vertex drape takes minutes: never in the quick set.
        assert!(cases.iter().all(|c| c.group != "scale"));
        let c = cases.iter().find(|c| c.name == "outfit_walk");
        let scene = crate::case::prepare_scene(c.expect("the case")).expect("the scene");
        let sewn = |s: &Scene| -> Vec<bool> {
            (s.cloths.iter())
                .map(|c| {
                    matches!(
                        c.mesh,
                        MeshSpec::Garmentcode {
                            sew_edge_length: Some(_),
                            ..
                        }
                    )
                })
                .collect()
        };
        assert_eq!(sewn(&scene), [true, false]);
    }

    #[test]
    fn plan_covers_every_group_and_filters_by_substring() {
        let full = parse_options(&[]).unwrap();
        let (cases, _) = plan(&full);
        let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        for n in [
            "fig1_drape",
            "fig2_fixed_sheet",
            "scaling_50176",
            "scale_2601",
            "scale_100489",
            "bend_x1000",
            "stretch_x0.1",
            "solver_direct",
            "selfcontact_on",
            "selfcontact_off",
            "shirt",
            "trousers",
            "skirt",
            "shirt_twist",
            "trousers_walk",
            "outfit_walk",
            "dancer_skirt",
            "dancer_long_skirt",
            "dancer_skirt_blouse",
            "dancer_long_skirt_blouse",
        ] {
            assert!(names.contains(&n), "{n} missing from {names:?}");
        }
        let grids = |group: &str| -> Vec<usize> {
            (cases.iter().filter(|c| c.group == group))
                .filter_map(|c| c.grid)
                .collect()
        };
        assert_eq!(grids("scaling"), SCALING_GRIDS);
        // The scale table: the drape's first 30 frames at each size.
        assert_eq!(grids("scale"), SCALE_GRIDS);
        assert!((cases.iter().filter(|c| c.group == "scale")).all(|c| c.frames == Some(30)));
        for c in &cases {
            assert!(c.scene.exists(), "{}", c.scene.display());
        }
        let mut o = full.clone();
        o.filter = Some("bend".into());
        assert!(o.selects("bend_x10") && !o.selects("scaling_2601"));
        o.filter = Some("fig1, scaling".into());
        assert!(o.selects("fig1_drape") && o.selects("scaling_2601") && !o.selects("bend_x10"));
        o.filter = Some("bend".into());
        let (bend, _) = plan(&o);
        assert_eq!(bend.len(), BEND_SCALES.len());
        assert!(bend.iter().all(|c| c.group == "bend"));
    }
}
