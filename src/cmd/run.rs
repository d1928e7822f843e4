//! `cloth run`: simulate a scene into an output directory.

use super::print::{errln, outln};
use cloth::mesh::ObjFrames;
use cloth::sim::{
    checkpoint::Checkpoint, error::SimError, output::CHECKPOINT_FILE, output::COLLIDERS_FILE,
    output::OutputDir, output::PREVIEW_FILE, output::STATS_FILE, output::USD_FILE,
    output::frame_path, scene::Scene, scene::build_simulation, simulation::Simulation,
    stats::FrameStats, stats::RunReport, stats::Totals, tracks::CollidersFile,
};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Animation output formats of `cloth run`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `frame_0000.obj`, ... (with UVs and normals).
    Obj,
    /// One `animation.usda`: a mesh prim per cloth with time-sampled points (OBJ frames are
    /// still written while running and removed at the end, so an interrupted run keeps valid
    /// frames).
    Usd,
    /// Both.
    Both,
}

/// What `cloth run` was asked to do.
pub struct RunArgs {
    /// Scene file (`None` with `resume`).
    pub scene: Option<PathBuf>,
    /// A run directory to continue.
    pub resume: Option<PathBuf>,
    /// Output directory (default `out/<scene name>`).
    pub out: Option<PathBuf>,
    /// Checkpoint interval in frames (0: none).
    pub checkpoint_every: usize,
    /// Frames to compute instead of the scene's.
    pub frames: Option<usize>,
    /// Worker threads.
    pub threads: Option<usize>,
    /// No progress bar and no summary.
    pub quiet: bool,
    /// Animation format.
    pub format: Format,
    /// Render a preview GIF at the end.
    pub render: bool,
    /// Take the output directory's lock over even when another run holds it.
    pub force: bool,
}

/// How a run ended.
enum RunEnd {
    /// Every requested frame and export was written.
    Complete,
    /// Ctrl-C, SIGTERM or SIGHUP: the frames so far are valid.
    Interrupted,
    /// The simulation failed; the frames before the failure are valid.
    Failed(String),
    /// An output could not be written (a full disk, an unwritable path); the frames before
    /// it are valid and a rerun can succeed.
    OutputFailed(String),
    /// Another run took the directory over (`--force`, or this run's lock judged stale):
    /// nothing more is written there.
    LockLost(String),
}

impl RunEnd {
    /// The end a simulation error means: a stop on request is an interruption.
    fn simulation(e: SimError) -> RunEnd {
        match e {
            SimError::Stopped => RunEnd::Interrupted,
            e => RunEnd::Failed(e.to_string()),
        }
    }
}

/// A run ready to go: its scene (and the scene's resolved text for checkpoints), the
/// simulation, its locked output directory and the statistics of the frames already written.
struct Prepared {
    scene: Scene,
    scene_text: String,
    sim: Simulation,
    /// The frames' fixed OBJ text (texture coordinates, faces), formatted once.
    obj: ObjFrames,
    out: OutputDir,
    /// The preroll's statistics, once it has run (and the scene has one).
    preroll: Option<FrameStats>,
    records: Vec<FrameStats>,
}

/// Runs the scene (or continues a run) and writes frames, statistics and optional exports.
pub fn run(args: RunArgs) -> Result<ExitCode, String> {
    if let Some(n) = args.threads {
        start_threads(n)?;
    }
    // Installed first, so that a signal while the scene is built still ends the run with its
    // report written.
    let stop = stop_on_signals();
    let mut p = match &args.resume {
        Some(dir) => resume(dir, args.frames, args.force)?,
        None => fresh(&args)?,
    };
    if let Some(what) = p.out.took_over() {
        errln!(
            "warning: took over the lock of {}: {what}",
            p.out.path().display()
        );
    }
    p.sim.set_stop_flag(stop.clone());
    let start = Instant::now();
    let bar = progress_bar(p.scene.run.frames, p.sim.frame(), args.quiet);
    let end = match frames(&mut p, args.checkpoint_every, &stop, &bar, start) {
        Ok(()) => RunEnd::Complete,
        Err(end) => end,
    };
    bar.finish_and_clear();
    let (end, lines) = match end {
        RunEnd::Complete => match exports(&args, &p) {
            Ok(lines) => (RunEnd::Complete, lines),
            Err(end) => (end, Vec::new()),
        },
        end => (end, Vec::new()),
    };
    let end = match (&end, write_final_report(&p, start, &end)) {
        (RunEnd::LockLost(_), _) | (_, Ok(())) => end,
        (_, Err(e)) => RunEnd::OutputFailed(e),
    };
    if args.format == Format::Usd && matches!(end, RunEnd::Complete) {
        // The frames were the USD export's input; it is written and the run is complete.
        for k in 0..=p.sim.frame() {
            let _ = std::fs::remove_file(frame_path(p.out.path(), k));
        }
    }
    if !args.quiet {
        let wall = start.elapsed().as_secs_f64();
        print_summary(&p.sim, &p.records, wall, p.out.path());
        for line in lines {
            outln!("{line}");
        }
    }
    let frame0 = frame_path(p.out.path(), 0).is_file();
    exit_status(end, p.sim.frame(), frame0)
}

/// A flag set by SIGINT, SIGTERM and SIGHUP: the simulation stops after the step being
/// computed, with stats.json listing every written frame. If a handler cannot be installed
/// (already set), a signal simply ends the process; frames are written atomically either way.
fn stop_on_signals() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    stop
}

/// The process's exit status for how the run ended (see docs/cli.md).
/// `frame` is the last frame computed, `frame0` whether frame 0 is written.
fn exit_status(end: RunEnd, frame: usize, frame0: bool) -> Result<ExitCode, String> {
    match end {
        RunEnd::Complete => Ok(ExitCode::SUCCESS),
        RunEnd::Interrupted if frame == 0 && !frame0 => {
            errln!("error: interrupted before frame 0 was written");
            Ok(ExitCode::from(130))
        }
        RunEnd::Interrupted => {
            errln!("error: interrupted after frame {frame}; frames so far are valid");
            Ok(ExitCode::from(130))
        }
        RunEnd::Failed(e) | RunEnd::OutputFailed(e) | RunEnd::LockLost(e) => Err(e),
    }
}

/// The last stats.json: `complete` only for a run that wrote everything, the error otherwise.
/// Nothing is written into a directory another run took over.
fn write_final_report(p: &Prepared, start: Instant, end: &RunEnd) -> Result<(), String> {
    let (complete, error, output_error) = match end {
        RunEnd::Complete => (true, None, false),
        RunEnd::Interrupted => (false, Some("interrupted".to_string()), false),
        RunEnd::Failed(e) => (false, Some(e.clone()), false),
        RunEnd::OutputFailed(e) => (false, Some(e.clone()), true),
        RunEnd::LockLost(_) => return Ok(()),
    };
    write_report(p, start, complete, error, output_error)
}

/// A global pool of `n` threads, capped at the machine's cores.
fn start_threads(mut n: usize) -> Result<(), String> {
    if n == 0 {
        return Err("--threads must be at least 1".into());
    }
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    if n > cores {
        errln!("warning: --threads {n} is more than the {cores} cores here; using {cores}");
        n = cores;
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global()
        .map_err(|e| format!("cannot start {n} threads: {e}"))
}

/// A new run: loads the scene (paths resolved once, against the scene file's directory),
/// builds the simulation, takes and clears the output directory.
fn fresh(args: &RunArgs) -> Result<Prepared, String> {
    let path = args.scene.as_deref().ok_or("a scene file is required")?;
    // An absolute scene directory makes every resolved path absolute, so the scene text kept
    // in checkpoints loads from anywhere.
    let abs = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut scene = Scene::load(&abs).map_err(|e| e.to_string())?;
    if let Some(f) = args.frames {
        scene.run.frames = f;
    }
    let scene_text = scene.to_toml_string().map_err(|e| e.to_string())?;
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join(path.file_stem().unwrap_or_default()));
    let sim = build_simulation(&scene).map_err(|e| e.to_string())?;
    for note in scene_notices(&sim) {
        errln!("note: {note}");
    }
    if let Some(line) = cleared_summary(&sim) {
        errln!("note: {line}");
    }
    let u = sim.start_untangled();
    if u.found > 0 {
        errln!(
            "warning: the cloth starts crossing itself ({} pairs of triangles); moving vertices \
             back through the surfaces they poke through left {} (crossings kept at the start \
             stay for good)",
            u.found,
            u.remaining
        );
    }
    let out = OutputDir::create_with(&dir, args.force).map_err(|e| e.to_string())?;
    let p = Prepared {
        scene,
        scene_text,
        obj: obj_frames(&sim)?,
        sim,
        out,
        preroll: None,
        records: Vec::new(),
    };
    write_colliders(&p.sim, &p.scene, p.out.path())?;
    Ok(p)
}

/// What moving the start out of the solids and their contact layers did, in one line (`None`
/// when nothing was moved).
pub(crate) fn cleared_summary(sim: &Simulation) -> Option<String> {
    let c = sim.start_cleared();
    let relaxed = "the cloth was relaxed out of the contact layers it started in before the \
                   first step (positions only)";
    if c.moved == 0 {
        return c.relaxed.then(|| relaxed.to_string());
    }
    let remaining = if c.remaining > 0 {
        format!(
            " ({} are still within half their contact layer)",
            c.remaining
        )
    } else {
        String::new()
    };
    let then = if c.relaxed {
        "; then relaxed out of the contact layers"
    } else {
        ""
    };
    Some(format!(
        "the cloth started {} vertices inside the solids (deepest {:.1} mm); {} vertices \
         were moved out before the first step, edges held within the strain limit{remaining}{then}",
        c.inside,
        c.deepest * 1e3,
        c.moved,
    ))
}

/// What the collider set did to the mesh colliders as given (welded vertices, open parts), one
/// line per collider that needed it, and a line when self-collision meets a cloth thicker than
/// its edges ([`cloth::sim::world::World::self_contact_thicker_than_edges`]).
pub(crate) fn scene_notices(sim: &Simulation) -> Vec<String> {
    let mut notices: Vec<String> = sim
        .colliders()
        .map(|set| {
            set.mesh_reports()
                .iter()
                .filter_map(|r| r.notice())
                .collect()
        })
        .unwrap_or_default();
    if let Some((thickness, short, total)) = sim.world().self_contact_thicker_than_edges() {
        notices.push(format!(
            "the cloth thickness {:.1} mm is longer than {short} of its {total} edges at rest: \
             with self-collision on, vertices two edges apart push each other apart where the \
             cloth lies flat and it does not come fully to rest (make `cloth.thickness` \
             smaller than the edges, or the edges longer)",
            thickness * 1e3
        ));
    }
    notices
}

/// Continues the run in `dir` from its checkpoint: the frames after it are removed (they are
/// computed again, to the same bits) and the statistics of the frames before it kept.
fn resume(dir: &Path, frames: Option<usize>, force: bool) -> Result<Prepared, String> {
    let out = OutputDir::resume_with(dir, force).map_err(|e| e.to_string())?;
    let checkpoint = Checkpoint::read(dir.join(CHECKPOINT_FILE)).map_err(|e| e.to_string())?;
    let mut scene =
        Scene::from_toml_str(&checkpoint.scene, dir).map_err(|e| format!("checkpoint: {e}"))?;
    if let Some(f) = frames {
        scene.run.frames = f;
    }
    let mut sim = build_simulation(&scene).map_err(|e| e.to_string())?;
    sim.restore(&checkpoint).map_err(|e| e.to_string())?;
    let (preroll, mut records) = match RunReport::read(dir.join(STATS_FILE)) {
        Ok(r) => (r.preroll, r.frames),
        Err(_) => (None, Vec::new()),
    };
    records.retain(|r| r.frame <= checkpoint.frame);
    if records.len() != checkpoint.frame {
        errln!(
            "warning: stats.json lists {} of the {} frames before the checkpoint; the others \
             have no statistics",
            records.len(),
            checkpoint.frame
        );
    }
    out.remove_frames_after(checkpoint.frame)
        .map_err(|e| e.to_string())?;
    let p = Prepared {
        scene_text: checkpoint.scene.clone(),
        scene,
        obj: obj_frames(&sim)?,
        sim,
        out,
        preroll,
        records,
    };
    write_colliders(&p.sim, &p.scene, p.out.path())?;
    Ok(p)
}

fn progress_bar(frames: usize, done: usize, quiet: bool) -> ProgressBar {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(frames as u64)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:30} frame {pos}/{len}  {msg}  [{elapsed_precise} < {eta_precise}]",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_position(done as u64);
    bar
}

/// Writes frame 0 of a fresh run, then steps and writes each frame (its statistics are kept
/// only once it is written), a checkpoint every `every` frames and stats.json every 10 frames.
/// `Err` with how the run ended early.
fn frames(
    p: &mut Prepared,
    every: usize,
    stop: &AtomicBool,
    bar: &ProgressBar,
    start: Instant,
) -> Result<(), RunEnd> {
    let due = |frame: usize| every > 0 && frame.is_multiple_of(every);
    if stop.load(Ordering::SeqCst) {
        return Err(RunEnd::Interrupted);
    }
    if p.sim.frame() == 0 {
        preroll(p, bar)?;
        write_frame(p, 0)?;
    }
    if due(p.sim.frame()) {
        checkpoint(p, start)?;
    }
    while p.sim.frame() < p.scene.run.frames {
        if stop.load(Ordering::SeqCst) {
            return Err(RunEnd::Interrupted);
        }
        let stats = p.sim.step_frame().map_err(RunEnd::simulation)?;
        write_frame(p, p.sim.frame())?;
        bar.set_message(format!(
            "t = {:.3} s  steps {}  CG {}",
            stats.time, stats.steps, stats.cg_iterations
        ));
        p.records.push(stats);
        bar.inc(1);
        let frame = p.sim.frame();
        if due(frame) {
            checkpoint(p, start)?;
        } else if frame.is_multiple_of(10) {
            held(p)?;
            write_report(p, start, false, None, false).map_err(RunEnd::OutputFailed)?;
        }
    }
    Ok(())
}

/// Runs the preroll (nothing when there is none or a resumed run restored its end), showing
/// its simulated time on the bar.
fn preroll(p: &mut Prepared, bar: &ProgressBar) -> Result<(), RunEnd> {
    let mut shown = f64::NEG_INFINITY;
    let mut progress = |t: f64| {
        // A message per millisecond of simulated time at most.
        if t - shown >= 1e-3 {
            shown = t;
            bar.set_message(format!("preroll, t = {t:.3} s"));
        }
    };
    let stats = p.sim.preroll_with(&mut progress).map_err(|e| match e {
        SimError::Stopped => RunEnd::Interrupted,
        e => RunEnd::Failed(format!("preroll: {e}")),
    })?;
    // A resumed run restores the state after the preroll; it keeps the record read from
    // stats.json.
    if stats.steps > 0 {
        p.preroll = Some(stats);
    }
    bar.set_message("");
    Ok(())
}

/// [`RunEnd::LockLost`] once another run took the directory over.
fn held(p: &Prepared) -> Result<(), RunEnd> {
    p.out
        .check_held()
        .map_err(|e| RunEnd::LockLost(e.to_string()))
}

/// Writes `DIR/checkpoint.json` for the current frame, and stats.json with it so a run
/// resumed from the checkpoint keeps the statistics of every frame before it.
fn checkpoint(p: &mut Prepared, start: Instant) -> Result<(), RunEnd> {
    held(p)?;
    write_report(p, start, false, None, false).map_err(RunEnd::OutputFailed)?;
    let c = p.sim.checkpoint(p.scene_text.clone());
    c.write(p.out.path().join(CHECKPOINT_FILE))
        .map_err(|e| RunEnd::OutputFailed(e.to_string()))
}

/// USD export and preview rendering after the last frame; the lines to print after the
/// summary.
fn exports(args: &RunArgs, p: &Prepared) -> Result<Vec<String>, RunEnd> {
    let out = p.out.path();
    let mut lines = Vec::new();
    if args.format != Format::Obj {
        held(p)?;
        let usd = out.join(USD_FILE);
        cloth::view::write_usd(out, &usd)
            .map_err(|e| RunEnd::OutputFailed(format!("{}: {e}", usd.display())))?;
        lines.push(format!("usd                {}", usd.display()));
    }
    if args.render {
        held(p)?;
        let gif = out.join(PREVIEW_FILE);
        cloth::view::render(out, &gif, &cloth::view::RenderOptions::default())
            .map_err(|e| RunEnd::OutputFailed(format!("{}: {e}", gif.display())))?;
        lines.push(format!("preview            {}", gif.display()));
    }
    Ok(lines)
}

/// Writes `DIR/colliders.json` ([`CollidersFile`]): each collider's surface and its pose at
/// every output frame.
fn write_colliders(sim: &Simulation, scene: &Scene, out: &Path) -> Result<(), String> {
    if sim.colliders().is_none() {
        return Ok(());
    }
    CollidersFile::of(sim.world(), scene.run.frames, scene.run.fps)
        .write(out.join(COLLIDERS_FILE))
        .map_err(|e| e.to_string())
}

fn obj_frames(sim: &Simulation) -> Result<ObjFrames, String> {
    let sys = sim.system();
    ObjFrames::new(&sys.mesh, &sys.obj_groups()).map_err(|e| format!("cloth groups: {e}"))
}

/// Writes frame `k` (after checking that the directory is still this run's).
fn write_frame(p: &Prepared, k: usize) -> Result<(), RunEnd> {
    held(p)?;
    let path = frame_path(p.out.path(), k);
    p.obj
        .write_file_atomic(&path, &p.sim.system().mesh, p.sim.positions())
        .map_err(|e| RunEnd::OutputFailed(format!("cannot write {}: {e}", path.display())))
}

fn write_report(
    p: &Prepared,
    start: Instant,
    complete: bool,
    error: Option<String>,
    output_error: bool,
) -> Result<(), String> {
    let report = RunReport {
        settings: serde_json::to_value(&p.scene).map_err(|e| e.to_string())?,
        fps: p.scene.run.fps,
        vertices: p.sim.system().num_vertices(),
        triangles: p.sim.system().mesh.num_triangles(),
        threads: rayon::current_num_threads(),
        preroll: p.preroll.clone(),
        frames: p.records.clone(),
        totals: Totals::from_frames(&p.records, start.elapsed().as_secs_f64()),
        complete,
        error,
        output_error,
    };
    report
        .write(p.out.path().join(STATS_FILE))
        .map_err(|e| e.to_string())
}

fn print_summary(sim: &Simulation, records: &[FrameStats], wall: f64, out: &Path) {
    let t = Totals::from_frames(records, wall);
    let total = t.timings.total().max(1e-300);
    let pct = |x: f64| 100.0 * x / total;
    outln!(
        "cloth verts/tris   {} / {}",
        sim.system().num_vertices(),
        sim.system().mesh.num_triangles()
    );
    outln!(
        "frames / steps     {} / {} ({} Newton-corrected; {} rejected: {} stretch, {} penetration, {} inside solid, {} self-crossing, {} energy, {} not SPD)",
        t.frames,
        t.steps,
        t.corrections,
        t.rejected_steps,
        t.rejections.stretch_change,
        t.rejections.penetration,
        t.rejections.inside_solid,
        t.rejections.self_crossing,
        t.rejections.energy_gain,
        t.rejections.not_positive_definite + t.rejections.factorization
    );
    outln!(
        "step min / max     {:.3} / {:.3} ms",
        t.h_min * 1e3,
        t.h_max * 1e3
    );
    outln!(
        "time per frame     {:.2} ms ({} threads)",
        t.seconds_per_frame * 1e3,
        rayon::current_num_threads()
    );
    outln!(
        "CG iterations      {} ({:.1} per solve, corrections and rejected attempts included)",
        t.cg_iterations,
        t.cg_iterations as f64 / (t.steps + t.rejected_steps + t.corrections).max(1) as f64
    );
    outln!(
        "EVAL / CG / C/C / C/S / other  {:.1} / {:.1} / {:.1} / {:.1} / {:.1} %",
        pct(t.timings.eval),
        pct(t.timings.cg),
        pct(t.timings.cloth_cloth),
        pct(t.timings.cloth_solid),
        pct(t.timings.other)
    );
    outln!("max stretch        {:.2} %", t.max_stretch * 100.0);
    if let Some(bytes) = cloth::sim::budget::peak_memory_bytes() {
        let n = sim.system().num_vertices().max(1) as f64;
        let b = bytes as f64;
        let size = if b >= 1e9 {
            format!("{:.2} GB", b / 1e9)
        } else {
            format!("{:.0} MB", b / 1e6)
        };
        outln!(
            "peak memory        {size} ({:.1} KB per cloth vertex, whole process)",
            b / n / 1e3
        );
    }
    outln!("output             {}", out.display());
}
