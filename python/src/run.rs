//! `cloth.run`, `cloth.resume` and `cloth.render`: what the `cloth run` and `cloth render`
//! commands do, from Python. A run writes the files `cloth run` writes, with the same
//! writers in the same order (frame 0 after the preroll, a frame after every step of the
//! loop, `stats.json` every 10 frames and at the end, checkpoints), so the same scene gives
//! the same frame files byte for byte.

use std::path::{Path, PathBuf};
use std::time::Instant;

use cloth_sim::checkpoint::Checkpoint;
use cloth_sim::mesh::ObjFrames;
use cloth_sim::output::{
    CHECKPOINT_FILE, COLLIDERS_FILE, OutputDir, PREVIEW_FILE, STATS_FILE, USD_FILE, frame_path,
};
use cloth_sim::scene::{Scene, build_simulation};
use cloth_sim::simulation::Simulation;
use cloth_sim::stats::{FrameStats, RunReport, Totals};
use cloth_sim::tracks::CollidersFile;
use pyo3::prelude::*;

use crate::scene::{PyScene, mesh_notices};
use crate::sim::{Engine, thread_pool};
use crate::{convert, errors};

/// A run ready to go (as the command's): the scene and its resolved text (for checkpoints),
/// the simulation, the locked output directory and the statistics written so far.
struct Prepared {
    scene: Scene,
    scene_text: String,
    engine: Engine,
    obj: ObjFrames,
    out: OutputDir,
    preroll: Option<FrameStats>,
    records: Vec<FrameStats>,
    start: Instant,
    /// Where the run reports to Python: `callback(event, value)`.
    callback: Option<Py<PyAny>>,
}

/// How the frame loop ended.
enum End {
    Complete,
    /// Ctrl-C (KeyboardInterrupt).
    Interrupted(PyErr),
    /// The simulation, a frame's output or the callback failed.
    Failed(PyErr),
    /// The frames are written, an export (USD, preview) is not.
    OutputFailed(PyErr),
}

/// The options of a run (`cloth run`'s), given by Python as a dict with every key.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct RunOptions {
    /// Checkpoint interval in frames (0: none).
    checkpoint_every: usize,
    /// Worker threads (`None`: the global pool).
    threads: Option<usize>,
    /// `"obj"`, `"usd"` or `"both"`.
    format: String,
    /// Render `preview.gif` at the end.
    render: bool,
    /// `callback(event, value)` hears about the run: `"note"`, `"warning"`, `"preroll"` with
    /// the simulated time, `"frame"` with the frame's statistics.
    callback: Option<Py<PyAny>>,
}

/// Simulates `scene` into `out`, as `cloth run SCENE --out OUT` with `options`. Returns the
/// output directory.
#[pyfunction]
pub(crate) fn run(
    py: Python<'_>,
    scene: &PyScene,
    out: PathBuf,
    options: RunOptions,
) -> PyResult<PathBuf> {
    let RunOptions {
        checkpoint_every,
        threads,
        format,
        render,
        callback,
    } = options;
    let exports = Exports::parse(&format, render)?;
    let pool = thread_pool(threads)?;
    let s = scene.scene.clone();
    let scene_text = s.to_toml_string().map_err(|e| errors::scene(e, false))?;
    let sim = py
        .detach(|| Engine::install(&pool, || build_simulation(&s)))
        .map_err(|e| errors::sim_with(e, scene.located))?;
    for note in mesh_notices(&sim) {
        tell(py, &callback, "note", note)?;
    }
    let u = sim.start_untangled();
    if u.found > 0 {
        let w = format!(
            "the cloth starts crossing itself ({} pairs of triangles); moving vertices back \
             through the surfaces they poke through left {} (crossings kept at the start stay \
             for good)",
            u.found, u.remaining
        );
        tell(py, &callback, "warning", w)?;
    }
    let dir = OutputDir::create(&out).map_err(errors::sim)?;
    let obj = obj_frames(&sim)?;
    let mut p = Prepared {
        scene: s,
        scene_text,
        engine: Engine { sim, pool },
        obj,
        out: dir,
        preroll: None,
        records: Vec::new(),
        start: Instant::now(),
        callback,
    };
    write_colliders(&p)?;
    finish(py, &mut p, checkpoint_every, &exports)
}

/// Continues the run in `dir` from its checkpoint, as `cloth run --resume DIR` (the frames
/// after the checkpoint are computed again, to the same bits).
#[pyfunction]
#[pyo3(signature = (dir, frames = None, checkpoint_every = 10, threads = None, callback = None))]
pub(crate) fn resume(
    py: Python<'_>,
    dir: PathBuf,
    frames: Option<usize>,
    checkpoint_every: usize,
    threads: Option<usize>,
    callback: Option<Py<PyAny>>,
) -> PyResult<PathBuf> {
    let pool = thread_pool(threads)?;
    let out = OutputDir::resume(&dir).map_err(errors::sim)?;
    let checkpoint = Checkpoint::read(dir.join(CHECKPOINT_FILE)).map_err(errors::sim)?;
    let mut scene = Scene::from_toml_str(&checkpoint.scene, &dir)
        .map_err(|e| errors::input("checkpoint", e.to_string()))?;
    if let Some(f) = frames {
        scene.run.frames = f;
    }
    let s = &scene;
    let mut sim = py
        .detach(|| Engine::install(&pool, || build_simulation(s)))
        .map_err(errors::sim)?;
    sim.restore(&checkpoint).map_err(errors::sim)?;
    let (preroll, mut records) = match RunReport::read(dir.join(STATS_FILE)) {
        Ok(r) => (r.preroll, r.frames),
        Err(_) => (None, Vec::new()),
    };
    records.retain(|r| r.frame <= checkpoint.frame);
    if records.len() != checkpoint.frame {
        let w = format!(
            "stats.json lists {} of the {} frames before the checkpoint; the others have no \
             statistics",
            records.len(),
            checkpoint.frame
        );
        tell(py, &callback, "warning", w)?;
    }
    out.remove_frames_after(checkpoint.frame)
        .map_err(errors::sim)?;
    let obj = obj_frames(&sim)?;
    let mut p = Prepared {
        scene_text: checkpoint.scene.clone(),
        scene,
        engine: Engine { sim, pool },
        obj,
        out,
        preroll,
        records,
        start: Instant::now(),
        callback,
    };
    write_colliders(&p)?;
    finish(py, &mut p, checkpoint_every, &Exports::parse("obj", false)?)
}

/// Renders the frames of the run in `dir` to `out` (a `.gif` file, or a directory for PNG
/// images), as `cloth render`. Returns the number of images.
#[pyfunction]
#[pyo3(signature = (dir, out, view = "iso", width = 800, height = 600, every = 1))]
pub(crate) fn render(
    py: Python<'_>,
    dir: PathBuf,
    out: PathBuf,
    view: &str,
    width: u32,
    height: u32,
    every: usize,
) -> PyResult<usize> {
    let view = view
        .parse::<cloth_view::View>()
        .map_err(|e| errors::input("view", e.to_string()))?;
    let opts = cloth_view::RenderOptions {
        view,
        width,
        height,
        every,
    };
    py.detach(|| cloth_view::render(&dir, &out, &opts))
        .map(|s| s.images)
        .map_err(|e| errors::output(e.to_string()))
}

/// What is written after a complete run besides the frames.
struct Exports {
    usd: bool,
    keep_obj: bool,
    gif: bool,
}

impl Exports {
    fn parse(format: &str, render: bool) -> PyResult<Self> {
        let (usd, keep_obj) = match format {
            "obj" => (false, true),
            "usd" => (true, false),
            "both" => (true, true),
            other => {
                return Err(errors::input(
                    "format",
                    format!("must be \"obj\", \"usd\" or \"both\", got {other:?}"),
                ));
            }
        };
        Ok(Self {
            usd,
            keep_obj,
            gif: render,
        })
    }
}

/// Runs the frame loop and, after a complete run, the exports, then writes the final
/// `stats.json`: `complete` only once every output is written, as `cloth run`. An interrupted
/// or failed run keeps its frames and says so in `stats.json` (`output_error` when an export
/// could not be written, so that `cloth batch` runs it again).
fn finish(py: Python<'_>, p: &mut Prepared, every: usize, exports: &Exports) -> PyResult<PathBuf> {
    let out = p.out.path().to_path_buf();
    let end = match frames(py, p, every) {
        Ok(()) => match py.detach(|| write_exports(exports, &out, p.engine.sim.frame())) {
            Ok(()) => End::Complete,
            Err(e) => End::OutputFailed(e),
        },
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) => {
            End::Interrupted(e)
        }
        Err(e) => End::Failed(e),
    };
    let (error, output_error) = match &end {
        End::Complete => (None, false),
        End::Interrupted(_) => (Some("interrupted".to_string()), false),
        End::Failed(e) => (Some(e.value(py).to_string()), false),
        End::OutputFailed(e) => (Some(e.value(py).to_string()), true),
    };
    let complete = matches!(end, End::Complete);
    write_final_report(p, complete, error, output_error)?;
    match end {
        End::Complete => Ok(out),
        End::Interrupted(e) | End::Failed(e) | End::OutputFailed(e) => Err(e),
    }
}

/// Frame 0 of a fresh run, then each frame (its statistics kept once it is written), a
/// checkpoint every `every` frames and `stats.json` every 10 frames.
fn frames(py: Python<'_>, p: &mut Prepared, every: usize) -> PyResult<()> {
    let due = |frame: usize| every > 0 && frame.is_multiple_of(every);
    if p.engine.sim.frame() == 0 {
        let stats = preroll(py, p)?;
        if stats.steps > 0 {
            p.preroll = Some(stats);
        }
        write_frame(p, 0)?;
    }
    if due(p.engine.sim.frame()) {
        checkpoint(p)?;
    }
    while p.engine.sim.frame() < p.scene.run.frames {
        py.check_signals()?;
        let Engine { sim, pool } = &mut p.engine;
        let stats = py
            .detach(|| Engine::install(pool, || sim.step_frame()))
            .map_err(errors::sim)?;
        let frame = p.engine.sim.frame();
        write_frame(p, frame)?;
        // The frame is written: its statistics are kept whatever the callback does.
        let value = match p.callback {
            Some(_) => Some(convert::serialized(py, &stats)?),
            None => None,
        };
        p.records.push(stats);
        if let Some(value) = value {
            tell(py, &p.callback, "frame", value)?;
        }
        if due(frame) {
            checkpoint(p)?;
        } else if frame.is_multiple_of(10) {
            write_report(p, false, None)?;
        }
    }
    Ok(())
}

/// Runs the preroll, telling the callback the simulated time (at most every 0.1 s of wall
/// time). A Ctrl-C during the preroll is acted on when it ends.
fn preroll(py: Python<'_>, p: &mut Prepared) -> PyResult<FrameStats> {
    let Engine { sim, pool } = &mut p.engine;
    let callback = &p.callback;
    let mut shown = Instant::now();
    let mut failed: Option<PyErr> = None;
    let result = py.detach(|| {
        Engine::install(pool, || {
            sim.preroll_with(&mut |t: f64| {
                if callback.is_none() || failed.is_some() || shown.elapsed().as_secs_f64() < 0.1 {
                    return;
                }
                shown = Instant::now();
                Python::attach(|py| {
                    if let Err(e) = tell(py, callback, "preroll", t) {
                        failed = Some(e);
                    }
                });
            })
        })
    });
    let stats = result.map_err(|e| errors::simulation(format!("preroll: {e}")))?;
    match failed {
        Some(e) => Err(e),
        None => Ok(stats),
    }
}

/// Calls `callback(event, value)` when there is a callback.
fn tell<'py, V: IntoPyObject<'py>>(
    py: Python<'py>,
    callback: &Option<Py<PyAny>>,
    event: &str,
    value: V,
) -> PyResult<()> {
    if let Some(cb) = callback {
        cb.bind(py).call1((event, value))?;
    }
    Ok(())
}

fn obj_frames(sim: &Simulation) -> PyResult<ObjFrames> {
    let sys = sim.system();
    ObjFrames::new(&sys.mesh, &sys.obj_groups())
        .map_err(|e| errors::input("cloth", format!("cloth groups: {e}")))
}

fn write_frame(p: &Prepared, k: usize) -> PyResult<()> {
    let path = frame_path(p.out.path(), k);
    let sim = &p.engine.sim;
    p.obj
        .write_file_atomic(&path, &sim.system().mesh, sim.positions())
        .map_err(|e| errors::output(format!("cannot write {}: {e}", path.display())))
}

/// `colliders.json`: each collider's surface and its pose at every output frame.
fn write_colliders(p: &Prepared) -> PyResult<()> {
    if p.engine.sim.colliders().is_none() {
        return Ok(());
    }
    CollidersFile::of(p.engine.sim.world(), p.scene.run.frames, p.scene.run.fps)
        .write(p.out.path().join(COLLIDERS_FILE))
        .map_err(errors::sim)
}

/// `checkpoint.json` for the current frame, with `stats.json`.
fn checkpoint(p: &mut Prepared) -> PyResult<()> {
    write_report(p, false, None)?;
    let c = p.engine.sim.checkpoint(p.scene_text.clone());
    c.write(p.out.path().join(CHECKPOINT_FILE))
        .map_err(errors::sim)
}

fn write_report(p: &Prepared, complete: bool, error: Option<String>) -> PyResult<()> {
    write_final_report(p, complete, error, false)
}

/// `stats.json` with `output_error` set when an output could not be written.
fn write_final_report(
    p: &Prepared,
    complete: bool,
    error: Option<String>,
    output_error: bool,
) -> PyResult<()> {
    let settings =
        serde_json::to_value(&p.scene).map_err(|e| errors::output(format!("stats.json: {e}")))?;
    let sim = &p.engine.sim;
    let report = RunReport {
        settings,
        fps: p.scene.run.fps,
        vertices: sim.system().num_vertices(),
        triangles: sim.system().mesh.num_triangles(),
        threads: p.engine.threads(),
        preroll: p.preroll.clone(),
        frames: p.records.clone(),
        totals: Totals::from_frames(&p.records, p.start.elapsed().as_secs_f64()),
        complete,
        error,
        output_error,
    };
    report
        .write(p.out.path().join(STATS_FILE))
        .map_err(errors::sim)
}

/// USD export and the preview GIF after a complete run.
fn write_exports(exports: &Exports, out: &Path, last: usize) -> PyResult<()> {
    if exports.usd {
        cloth_view::write_usd(out, out.join(USD_FILE))
            .map_err(|e| errors::output(e.to_string()))?;
    }
    if exports.gif {
        let opts = cloth_view::RenderOptions::default();
        cloth_view::render(out, out.join(PREVIEW_FILE), &opts)
            .map_err(|e| errors::output(e.to_string()))?;
    }
    if !exports.keep_obj {
        for k in 0..=last {
            let _ = std::fs::remove_file(frame_path(out, k));
        }
    }
    Ok(())
}
