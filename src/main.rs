//! The `cloth` command: run, check and inspect cloth scenes.

mod cmd;

use clap::{Parser, Subcommand};
use cmd::run::{Format, RunArgs};
use std::path::PathBuf;
use std::process::ExitCode;

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
        /// Scene file (TOML); not with --resume.
        #[arg(required_unless_present = "resume", conflicts_with = "resume")]
        scene: Option<PathBuf>,
        /// Continue the interrupted or finished run in DIR from its last checkpoint (the scene
        /// is the one stored there; the frames come out the same bits as an uninterrupted run).
        #[arg(long, value_name = "DIR", conflicts_with = "out")]
        resume: Option<PathBuf>,
        /// Output directory (default: out/<scene name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write a checkpoint (DIR/checkpoint.json) every N frames (0: never).
        #[arg(long, default_value_t = 10, value_name = "N")]
        checkpoint_every: usize,
        /// Number of frames to compute (default: the scene's `run.frames`).
        #[arg(long)]
        frames: Option<usize>,
        /// Worker threads (default: all cores). Results are identical for any count.
        #[arg(long)]
        threads: Option<usize>,
        /// No progress bar and no summary.
        #[arg(long)]
        quiet: bool,
        /// Output format of the animation: OBJ frames, one USD file (`DIR/animation.usda`), or both.
        #[arg(long, value_enum, default_value_t = Format::Obj)]
        format: Format,
        /// Render a preview GIF (`DIR/preview.gif`, iso view) at the end.
        #[arg(long)]
        render: bool,
        /// Take the output directory over even while another run holds its lock (that run
        /// stops at its next frame). Without it a held lock refuses the run; a lock nobody
        /// holds any more is taken over either way.
        #[arg(long)]
        force: bool,
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
    /// Sweeps of a scene (wedges, datasets): plan, run locally or on Slurm, status, collect.
    Batch(cmd::batch::BatchArgs),
}

fn main() -> ExitCode {
    one_malloc_arena();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            scene,
            resume,
            out,
            checkpoint_every,
            frames,
            threads,
            quiet,
            format,
            render,
            force,
        } => cmd::run::run(RunArgs {
            scene,
            resume,
            out,
            checkpoint_every,
            frames,
            threads,
            quiet,
            format,
            render,
            force,
        }),
        Command::Check { scene } => cmd::check::check(&scene),
        Command::Render {
            dir,
            out,
            view,
            size,
            every,
        } => cmd::render::render(&dir, out, &view, &size, every),
        Command::Plot { dir, out } => cmd::render::plot(&dir, out),
        Command::Batch(args) => cmd::batch::batch(args),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            cmd::print::errln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Limits glibc's malloc to one arena. By default every thread that allocates gets an arena of
/// its own (up to 8 per core), and memory freed in one arena is not reused by another, so the
/// worker threads' short-lived buffers add to the peak resident memory; one arena lowers the
/// peak of large runs by about a tenth at the same speed. An environment variable
/// `MALLOC_ARENA_MAX`, when set, is left to decide.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn one_malloc_arena() {
    if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
        return;
    }
    // SAFETY: `mallopt` sets one allocator parameter and reads no memory of ours; it runs
    // first in `main`, before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Elsewhere the allocator keeps its defaults.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn one_malloc_arena() {}
