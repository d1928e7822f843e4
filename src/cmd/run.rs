//! `cloth run`: simulate a scene into an output directory.

use cloth::sim::{
    COLLIDERS_FILE, CollidersFile, FrameStats, OutputDir, PREVIEW_FILE, RunReport, STATS_FILE,
    Scene, SimError, Simulation, Totals, USD_FILE, build_simulation, frame_path,
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
    /// One `animation.usda` with time-sampled points (OBJ frames are still written while running
    /// and removed at the end, so an interrupted run keeps valid frames).
    Usd,
    /// Both.
    Both,
}

/// What `cloth run` was asked to do.
pub struct RunArgs {
    /// Scene file.
    pub scene: PathBuf,
    /// Output directory (default `out/<scene name>`).
    pub out: Option<PathBuf>,
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
}

/// How a run ended.
enum RunEnd {
    /// Every requested frame was computed.
    Complete,
    /// Ctrl-C: the frames so far are valid.
    Interrupted,
    /// The simulation failed; the frames before the failure are valid.
    Failed(SimError),
}

/// Runs the scene and writes frames, statistics and optional exports.
pub fn run(args: RunArgs) -> Result<ExitCode, String> {
    if let Some(mut n) = args.threads {
        if n == 0 {
            return Err("--threads must be at least 1".into());
        }
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        if n > cores {
            eprintln!("warning: --threads {n} is more than the {cores} cores here; using {cores}");
            n = cores;
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .map_err(|e| format!("cannot start {n} threads: {e}"))?;
    }
    let mut scene = Scene::load(&args.scene).map_err(|e| e.to_string())?;
    if let Some(f) = args.frames {
        scene.run.frames = f;
    }
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join(args.scene.file_stem().unwrap_or_default()));
    let mut sim = build_simulation(&scene).map_err(|e| e.to_string())?;
    let out = OutputDir::create(&dir).map_err(|e| e.to_string())?;
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // If a handler cannot be installed (already set), Ctrl-C simply ends the process;
        // frames are written atomically either way.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }
    let start = Instant::now();
    write_colliders(&sim, &scene, out.path())?;
    write_frame(&sim, out.path(), 0)?;
    let bar = progress_bar(scene.run.frames, args.quiet);
    let mut records = Vec::with_capacity(scene.run.frames);
    let end = simulate(
        &mut sim,
        &scene,
        out.path(),
        &stop,
        &bar,
        start,
        &mut records,
    )?;
    bar.finish_and_clear();
    let complete = matches!(end, RunEnd::Complete);
    let error = match &end {
        RunEnd::Complete => None,
        RunEnd::Interrupted => Some("interrupted".to_string()),
        RunEnd::Failed(e) => Some(e.to_string()),
    };
    write_report(&scene, &sim, &records, out.path(), start, complete, error)?;
    if !args.quiet {
        print_summary(&sim, &records, start.elapsed().as_secs_f64(), out.path());
    }
    exports(&args, &sim, out.path(), complete)?;
    match end {
        RunEnd::Complete => Ok(ExitCode::SUCCESS),
        RunEnd::Interrupted => {
            eprintln!(
                "error: interrupted after frame {}; frames so far are valid",
                sim.frame()
            );
            Ok(ExitCode::from(130))
        }
        RunEnd::Failed(e) => Err(e.to_string()),
    }
}

fn progress_bar(frames: usize, quiet: bool) -> ProgressBar {
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
    bar
}

/// The frame loop: steps, writes each frame, rewrites stats.json every 10 frames.
fn simulate(
    sim: &mut Simulation,
    scene: &Scene,
    out: &Path,
    stop: &AtomicBool,
    bar: &ProgressBar,
    start: Instant,
    records: &mut Vec<FrameStats>,
) -> Result<RunEnd, String> {
    for _ in 0..scene.run.frames {
        if stop.load(Ordering::SeqCst) {
            return Ok(RunEnd::Interrupted);
        }
        match sim.step_frame() {
            Ok(stats) => {
                bar.set_message(format!(
                    "t = {:.3} s  steps {}  CG {}",
                    stats.time, stats.steps, stats.cg_iterations
                ));
                records.push(stats);
                write_frame(sim, out, sim.frame())?;
                bar.inc(1);
            }
            Err(e) => return Ok(RunEnd::Failed(e)),
        }
        if records.len().is_multiple_of(10) {
            write_report(scene, sim, records, out, start, false, None)?;
        }
    }
    Ok(RunEnd::Complete)
}

/// USD export and preview rendering after the run.
fn exports(args: &RunArgs, sim: &Simulation, out: &Path, complete: bool) -> Result<(), String> {
    if args.format != Format::Obj {
        let usd = out.join(USD_FILE);
        cloth::view::write_usd(out, &usd).map_err(|e| e.to_string())?;
        if !args.quiet {
            println!("usd                {}", usd.display());
        }
    }
    if args.render {
        let gif = out.join(PREVIEW_FILE);
        cloth::view::render(out, &gif, &cloth::view::RenderOptions::default())
            .map_err(|e| e.to_string())?;
        if !args.quiet {
            println!("preview            {}", gif.display());
        }
    }
    if args.format == Format::Usd && complete {
        for k in 0..=sim.frame() {
            let _ = std::fs::remove_file(frame_path(out, k));
        }
    }
    Ok(())
}

/// Writes `DIR/colliders.json` ([`CollidersFile`]): each collider's surface and its pose at
/// every output frame.
fn write_colliders(sim: &Simulation, scene: &Scene, out: &Path) -> Result<(), String> {
    if sim.colliders().is_none() {
        return Ok(());
    }
    CollidersFile::of(sim.world(), scene.run.frames, scene.run.fps)
        .write(&out.join(COLLIDERS_FILE))
        .map_err(|e| e.to_string())
}

fn write_frame(sim: &Simulation, out: &Path, k: usize) -> Result<(), String> {
    let path = frame_path(out, k);
    let sys = sim.system();
    cloth::mesh::write_obj_file_atomic_grouped(&path, &sys.mesh, sim.positions(), &sys.obj_groups())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn write_report(
    scene: &Scene,
    sim: &Simulation,
    records: &[FrameStats],
    out: &Path,
    start: Instant,
    complete: bool,
    error: Option<String>,
) -> Result<(), String> {
    let report = RunReport {
        settings: serde_json::to_value(scene).map_err(|e| e.to_string())?,
        fps: scene.run.fps,
        vertices: sim.system().num_vertices(),
        triangles: sim.system().mesh.num_triangles(),
        threads: rayon::current_num_threads(),
        frames: records.to_vec(),
        totals: Totals::from_frames(records, start.elapsed().as_secs_f64()),
        complete,
        error,
    };
    report
        .write(&out.join(STATS_FILE))
        .map_err(|e| e.to_string())
}

fn print_summary(sim: &Simulation, records: &[FrameStats], wall: f64, out: &Path) {
    let t = Totals::from_frames(records, wall);
    let total = t.timings.total().max(1e-300);
    let pct = |x: f64| 100.0 * x / total;
    println!(
        "cloth verts/tris   {} / {}",
        sim.system().num_vertices(),
        sim.system().mesh.num_triangles()
    );
    println!(
        "frames / steps     {} / {} ({} rejected: {} stretch, {} penetration, {} inside solid, {} not SPD)",
        t.frames,
        t.steps,
        t.rejected_steps,
        t.rejections.stretch_change,
        t.rejections.penetration,
        t.rejections.inside_solid,
        t.rejections.not_positive_definite + t.rejections.factorization
    );
    println!(
        "step min / max     {:.3} / {:.3} ms",
        t.h_min * 1e3,
        t.h_max * 1e3
    );
    println!(
        "time per frame     {:.2} ms ({} threads)",
        t.seconds_per_frame * 1e3,
        rayon::current_num_threads()
    );
    println!(
        "CG iterations      {} ({:.1} per step)",
        t.cg_iterations,
        t.cg_iterations as f64 / t.steps.max(1) as f64
    );
    println!(
        "EVAL / CG / C/C / C/S / other  {:.1} / {:.1} / {:.1} / {:.1} / {:.1} %",
        pct(t.timings.eval),
        pct(t.timings.cg),
        pct(t.timings.cloth_cloth),
        pct(t.timings.cloth_solid),
        pct(t.timings.other)
    );
    println!("max stretch        {:.2} %", t.max_stretch * 100.0);
    println!("output             {}", out.display());
}
