//! The `cloth` command: run, check and inspect cloth scenes.

use clap::{Parser, Subcommand};
use cloth::sim::{RunReport, Scene, Simulation, Totals, build_simulation, frame_path};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Cloth simulation after Baraff & Witkin, "Large Steps in Cloth Simulation" (1998).
#[derive(Parser)]
#[command(name = "cloth", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a scene and write OBJ frames and stats.json.
    Run {
        /// Scene file (TOML).
        scene: PathBuf,
        /// Output directory (default: out/<scene name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Number of frames to compute (default: the scene's `run.frames`).
        #[arg(long)]
        frames: Option<usize>,
        /// Worker threads (default: all cores). Results are identical for any count.
        #[arg(long)]
        threads: Option<usize>,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
    },
    /// Validate a scene and its meshes, and print what it contains.
    Check {
        /// Scene file (TOML).
        scene: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            scene,
            out,
            frames,
            threads,
            quiet,
        } => run(&scene, out, frames, threads, quiet),
        Command::Check { scene } => check(&scene),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn check(path: &Path) -> Result<ExitCode, String> {
    let scene = Scene::load(path).map_err(|e| e.to_string())?;
    let sim = build_simulation(&scene).map_err(|e| e.to_string())?;
    let sys = sim.system();
    let mesh = &sys.mesh;
    println!("scene      {}", path.display());
    println!("vertices   {}", mesh.num_vertices());
    println!("triangles  {}", mesh.num_triangles());
    println!("edges      {}", mesh.edges().len());
    println!("bend edges {}", mesh.hinges().len());
    println!(
        "area       {:.6} m^2",
        mesh.total_rest_area()
    );
    println!("mass       {:.6} kg", sys.masses.iter().sum::<f64>());
    println!(
        "pinned     {} vertices in {} groups",
        sim.pins().iter().map(|p| p.vertices.len()).sum::<usize>(),
        sim.pins().len()
    );
    println!("colliders  {}", scene.colliders.len());
    println!("frames     {} at {} fps", scene.run.frames, scene.run.fps);
    println!("problems   none");
    Ok(ExitCode::SUCCESS)
}

fn run(
    path: &Path,
    out: Option<PathBuf>,
    frames: Option<usize>,
    threads: Option<usize>,
    quiet: bool,
) -> Result<ExitCode, String> {
    if let Some(n) = threads {
        if n == 0 {
            return Err("--threads must be at least 1".into());
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .map_err(|e| format!("cannot start {n} threads: {e}"))?;
    }
    let mut scene = Scene::load(path).map_err(|e| e.to_string())?;
    if let Some(f) = frames {
        scene.run.frames = f;
    }
    let out = out.unwrap_or_else(|| {
        Path::new("out").join(path.file_stem().unwrap_or_default())
    });
    std::fs::create_dir_all(&out)
        .map_err(|e| format!("cannot create output directory {}: {e}", out.display()))?;
    let mut sim = build_simulation(&scene).map_err(|e| e.to_string())?;

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // If a handler cannot be installed (already set), Ctrl-C simply ends the process;
        // frames are written atomically either way.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }

    let start = Instant::now();
    write_frame(&sim, &out, 0)?;
    let total = scene.run.frames;
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(total as u64)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:30} frame {pos}/{len}  {msg}  [{elapsed_precise} < {eta_precise}]",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut records = Vec::with_capacity(total);
    let mut error = None;
    let threads_used = rayon::current_num_threads();
    for _ in 0..total {
        if stop.load(Ordering::SeqCst) {
            error = Some("interrupted".to_string());
            break;
        }
        match sim.step_frame() {
            Ok(stats) => {
                bar.set_message(format!(
                    "t = {:.3} s  steps {}  CG {}",
                    stats.time, stats.steps, stats.cg_iterations
                ));
                records.push(stats);
                write_frame(&sim, &out, sim.frame())?;
                bar.inc(1);
            }
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        }
        if records.len() % 10 == 0 {
            write_report(&scene, &sim, &records, &out, start, false, None)?;
        }
    }
    bar.finish_and_clear();
    let complete = error.is_none();
    write_report(&scene, &sim, &records, &out, start, complete, error.clone())?;
    print_summary(&sim, &records, start.elapsed().as_secs_f64(), threads_used, &out);
    match error {
        None => Ok(ExitCode::SUCCESS),
        Some(e) if e == "interrupted" => {
            eprintln!("error: interrupted after frame {}; frames so far are valid", sim.frame());
            Ok(ExitCode::from(130))
        }
        Some(e) => Err(e),
    }
}

fn write_frame(sim: &Simulation, out: &Path, k: usize) -> Result<(), String> {
    let path = frame_path(out, k);
    cloth::mesh::write_obj_file_atomic(&path, &sim.system().mesh, sim.positions())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn write_report(
    scene: &Scene,
    sim: &Simulation,
    records: &[cloth::sim::FrameStats],
    out: &Path,
    start: Instant,
    complete: bool,
    error: Option<String>,
) -> Result<(), String> {
    let report = RunReport {
        settings: scene,
        vertices: sim.system().num_vertices(),
        triangles: sim.system().mesh.num_triangles(),
        threads: rayon::current_num_threads(),
        frames: records,
        totals: Totals::from_frames(records, start.elapsed().as_secs_f64()),
        complete,
        error,
    };
    report
        .write(&out.join("stats.json"))
        .map_err(|e| e.to_string())
}

fn print_summary(
    sim: &Simulation,
    records: &[cloth::sim::FrameStats],
    wall: f64,
    threads: usize,
    out: &Path,
) {
    let t = Totals::from_frames(records, wall);
    let total = t.timings.total().max(1e-300);
    let pct = |x: f64| 100.0 * x / total;
    println!("cloth verts/tris   {} / {}", sim.system().num_vertices(), sim.system().mesh.num_triangles());
    println!("frames / steps     {} / {} ({} rejected)", t.frames, t.steps, t.rejected_steps);
    println!("step min / max     {:.3} / {:.3} ms", t.h_min * 1e3, t.h_max * 1e3);
    println!("time per frame     {:.2} ms ({threads} threads)", t.seconds_per_frame * 1e3);
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
