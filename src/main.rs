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

/// Animation output formats of `cloth run`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// `frame_0000.obj`, ... (with UVs and normals).
    Obj,
    /// One `animation.usda` with time-sampled points (OBJ frames are still written while running
    /// and removed at the end, so an interrupted run keeps valid frames).
    Usd,
    /// Both.
    Both,
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
        /// Output format of the animation: OBJ frames, one USD file (`DIR/animation.usda`), or both.
        #[arg(long, value_enum, default_value_t = Format::Obj)]
        format: Format,
        /// Render a preview GIF (`DIR/preview.gif`, iso view) at the end.
        #[arg(long)]
        render: bool,
    },
    /// Render the frames of a run to PNG images or an animated GIF (CPU, headless).
    Render {
        /// Output directory of `cloth run`.
        dir: PathBuf,
        /// A `.gif` file, or a directory for PNG images (default: DIR/preview.gif).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Camera: front, side, top or iso.
        #[arg(long, default_value = "iso")]
        view: String,
        /// Image size, WIDTHxHEIGHT in pixels.
        #[arg(long, default_value = "800x600")]
        size: String,
        /// Render every N-th frame.
        #[arg(long, default_value_t = 1)]
        every: usize,
    },
    /// Plot a run's statistics (step size, CG iterations, energy, stretch, time split) as SVG.
    Plot {
        /// Output directory of `cloth run`.
        dir: PathBuf,
        /// Where to write the SVG files (default: DIR/plots).
        #[arg(long)]
        out: Option<PathBuf>,
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
            format,
            render,
        } => run(&scene, out, frames, threads, quiet, format, render),
        Command::Check { scene } => check(&scene),
        Command::Render {
            dir,
            out,
            view,
            size,
            every,
        } => render(&dir, out, &view, &size, every),
        Command::Plot { dir, out } => plot(&dir, out),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn plot(dir: &Path, out: Option<PathBuf>) -> Result<ExitCode, String> {
    let out = out.unwrap_or_else(|| dir.join("plots"));
    let files = cloth::view::plot(dir, &out).map_err(|e| e.to_string())?;
    for f in files {
        println!("{}", f.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn render(
    dir: &Path,
    out: Option<PathBuf>,
    view: &str,
    size: &str,
    every: usize,
) -> Result<ExitCode, String> {
    let view: cloth::view::View = view
        .parse()
        .map_err(|e: cloth::view::ViewError| e.to_string())?;
    let (w, h) = size
        .split_once(['x', 'X'])
        .and_then(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)))
        .ok_or_else(|| format!("--size must look like 800x600, got `{size}`"))?;
    let out = out.unwrap_or_else(|| dir.join("preview.gif"));
    let opts = cloth::view::RenderOptions {
        view,
        width: w,
        height: h,
        every,
    };
    let summary = cloth::view::render(dir, &out, &opts).map_err(|e| e.to_string())?;
    println!("rendered {} images to {}", summary.images, out.display());
    Ok(ExitCode::SUCCESS)
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
    println!("area       {:.6} m^2", mesh.total_rest_area());
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
    format: Format,
    preview: bool,
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
    let out = out.unwrap_or_else(|| Path::new("out").join(path.file_stem().unwrap_or_default()));
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
    write_colliders(&sim, &scene, &out)?;
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
    print_summary(
        &sim,
        &records,
        start.elapsed().as_secs_f64(),
        threads_used,
        &out,
    );
    if format != Format::Obj {
        let usd = out.join("animation.usda");
        cloth::view::write_usd(&out, &usd).map_err(|e| e.to_string())?;
        println!("usd                {}", usd.display());
    }
    if preview {
        let gif = out.join("preview.gif");
        cloth::view::render(&out, &gif, &cloth::view::RenderOptions::default())
            .map_err(|e| e.to_string())?;
        println!("preview            {}", gif.display());
    }
    if format == Format::Usd && complete {
        for k in 0..=sim.frame() {
            let _ = std::fs::remove_file(frame_path(&out, k));
        }
    }
    match error {
        None => Ok(ExitCode::SUCCESS),
        Some(e) if e == "interrupted" => {
            eprintln!(
                "error: interrupted after frame {}; frames so far are valid",
                sim.frame()
            );
            Ok(ExitCode::from(130))
        }
        Some(e) => Err(e),
    }
}

/// Writes `DIR/colliders.json`: each collider's tessellated surface in its local frame and its
/// pose (a 3x4 matrix) at every output frame, plus local vertices per frame for deforming
/// meshes. Planes are drawn as squares around the cloth.
fn write_colliders(sim: &Simulation, scene: &Scene, out: &Path) -> Result<(), String> {
    use cloth::collide::{Motion, Shape};
    let Some(set) = sim.colliders() else {
        return Ok(());
    };
    let x0 = &sim.system().x0;
    let lo = x0
        .iter()
        .fold(cloth::mesh::Vec3::repeat(f64::INFINITY), |a, p| a.inf(p));
    let hi = x0
        .iter()
        .fold(cloth::mesh::Vec3::repeat(f64::NEG_INFINITY), |a, p| {
            a.sup(p)
        });
    let half = ((hi - lo).norm() * 0.75).max(0.5);
    let mut list = Vec::new();
    for c in set.colliders() {
        let (verts, tris) = match &c.shape {
            Shape::Plane => {
                let v = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
                    .map(|(a, b)| cloth::mesh::Vec3::new(a * half, 0.0, b * half));
                (v.to_vec(), vec![[0, 2, 1], [0, 3, 2]])
            }
            shape => shape.tessellate(32),
        };
        let frames: Vec<serde_json::Value> = (0..=scene.run.frames)
            .map(|k| {
                let t = k as f64 / scene.run.fps;
                let pose = c.pose(t);
                let m = pose.to_homogeneous();
                let matrix: Vec<Vec<f64>> = (0..3)
                    .map(|r| (0..4).map(|col| m[(r, col)]).collect())
                    .collect();
                let deformed = match &c.motion {
                    Motion::MeshSequence { frames, .. } => frames.get(k),
                    Motion::Composite { deformation, .. } => match deformation.as_ref() {
                        Motion::MeshSequence { frames, .. } => frames.get(k),
                        _ => None,
                    },
                    _ => None,
                };
                let vertices =
                    deformed.map(|f| f.iter().map(|p| vec![p.x, p.y, p.z]).collect::<Vec<_>>());
                serde_json::json!({ "matrix": matrix, "vertices": vertices })
            })
            .collect();
        list.push(serde_json::json!({
            "name": c.name,
            "vertices": verts.iter().map(|p| vec![p.x, p.y, p.z]).collect::<Vec<_>>(),
            "triangles": tris,
            "frames": frames,
        }));
    }
    let text = serde_json::to_string(&serde_json::json!({ "colliders": list }))
        .map_err(|e| e.to_string())?;
    cloth::sim::write_atomic(&out.join("colliders.json"), text.as_bytes())
        .map_err(|e| e.to_string())
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
    println!(
        "cloth verts/tris   {} / {}",
        sim.system().num_vertices(),
        sim.system().mesh.num_triangles()
    );
    println!(
        "frames / steps     {} / {} ({} rejected)",
        t.frames, t.steps, t.rejected_steps
    );
    println!(
        "step min / max     {:.3} / {:.3} ms",
        t.h_min * 1e3,
        t.h_max * 1e3
    );
    println!(
        "time per frame     {:.2} ms ({threads} threads)",
        t.seconds_per_frame * 1e3
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
