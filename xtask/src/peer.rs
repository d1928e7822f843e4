//! Other simulators timed in the same bench run as ours: Blender's cloth on Figure 1 (case
//! `blender_fig1`) when a Blender executable is found (the `CLOTH_BLENDER` environment
//! variable, else `blender` on `PATH`; `apt-get install blender` gives 3.4.1 on Debian 12).
//!
//! The scene is the simulator's own Figure 1 (`scenes/drape_cylinder.toml`, the frames of the
//! `fig1_drape` case): the cloth's vertices and triangles as the simulator builds them, and
//! its colliders, tessellated (a 64-sided cylinder, a 20 m square for the infinite floor),
//! all turned into Blender's z-up frame (`(x, y, z)` here is `(x, -z, y)` there). Blender's
//! stiffness is not in SI units, so the material is Blender's own "Cotton" preset (mass 0.3
//! per vertex, tension, compression and shear stiffness 15, bending 0.5, damping 5, 5, 5 and
//! 0.5, air 1) at its default 5 steps per frame and collision quality 2, with the scene's
//! collision distance (the cloth's thickness). Blender runs with `-t THREADS` (the bench's
//! `--threads`). What is timed is the loop over frames 2 to `frames + 1` (`frame_set`), as
//! our `seconds_per_frame` times the frame loop without set-up.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cloth::collide::euler_degrees;
use cloth::sim::{scene::ColliderSettings, scene::ColliderShape, scene::Scene, scene::build_mesh};
use nalgebra::{Matrix3, Matrix4, Vector3};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::analysis;
use crate::case::{CaseSpec, prepare_scene};

/// The case name of Blender's Figure 1 run (selected by `--filter` like the other cases).
pub const BLENDER_FIG1: &str = "blender_fig1";

/// The script Blender runs (`xtask/blender/drape.py`).
const SCRIPT: &str = include_str!("../blender/drape.py");

/// Sides of a tessellated cylinder and sphere collider.
const SEGMENTS: usize = 64;

/// Edge length (m) of the square standing in for an infinite plane.
const PLANE_SIZE: f64 = 20.0;

/// Longest a Blender run may take (Figure 1's 75 frames take about 8 s on 2 cores).
const TIMEOUT: Duration = Duration::from_secs(900);

/// Lowest point of the cloth must fall at least this far (m) over the run, else Blender's
/// cloth is taken not to have run.
const MIN_DROP: f64 = 0.05;

/// A peer simulator's timed run of one of our scenes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PeerRun {
    /// Case name (`blender_fig1`).
    pub name: String,
    /// Simulator and version, e.g. "Blender 3.4.1".
    pub who: String,
    /// Our case it mirrors (`fig1_drape`).
    pub mirrors: String,
    /// Cloth vertices in the peer's mesh.
    pub vertices: usize,
    /// Frames timed.
    pub frames: usize,
    /// Threads the peer was given.
    pub threads: usize,
    /// Seconds per frame of every repeat, in run order.
    pub repeats: Vec<f64>,
    /// Median of `repeats`, s per frame.
    pub seconds_per_frame: f64,
    /// Lowest point of the cloth at the end of the last repeat (m, our y-up frame).
    pub lowest: f64,
}

/// What the script prints after `CLOTH_PEER `.
#[derive(Clone, Debug, Deserialize, PartialEq)]
struct ScriptResult {
    version: String,
    seconds: f64,
    frames: usize,
    vertices: usize,
    lowest: f64,
}

/// The Blender executable to use, if any: `CLOTH_BLENDER`, else `blender` on `PATH`.
pub fn find_blender() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CLOTH_BLENDER") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("blender"))
        .find(|p| p.is_file())
}

/// Our y-up coordinates in Blender's z-up frame.
fn to_blender(p: &Vector3<f64>) -> [f64; 3] {
    [p.x, -p.z, p.y]
}

/// A collider's world matrix in Blender's frame, row-major: `C [R t; 0 1] C^T` with `C` the
/// change of frame of [`to_blender`], so Blender's local z (a cylinder's axis, a plane's
/// normal) is our local y.
fn collider_matrix(c: &ColliderSettings) -> [f64; 16] {
    let conv = Matrix3::new(1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 1.0, 0.0);
    let r = conv * euler_degrees(&c.rotation).to_rotation_matrix().into_inner() * conv.transpose();
    let t = conv * c.position;
    let mut m = Matrix4::identity();
    m.fixed_view_mut::<3, 3>(0, 0).copy_from(&r);
    m.fixed_view_mut::<3, 1>(0, 3).copy_from(&t);
    std::array::from_fn(|k| m[(k / 4, k % 4)])
}

/// One collider as the script reads it.
fn collider_json(c: &ColliderSettings, index: usize) -> Result<serde_json::Value, String> {
    let (kind, radius, length) = match &c.shape {
        ColliderShape::Cylinder { radius, length } => ("cylinder", *radius, *length),
        ColliderShape::Sphere { radius } => ("sphere", *radius, 0.0),
        ColliderShape::Plane => ("plane", 0.0, 0.0),
        _ => {
            return Err(format!(
                "collider {index}: only cylinders, spheres and planes are carried to Blender"
            ));
        }
    };
    Ok(json!({
        "kind": kind,
        "radius": radius,
        "length": length,
        "size": PLANE_SIZE,
        "segments": SEGMENTS,
        "matrix": collider_matrix(c).to_vec(),
        "thickness": c.thickness,
    }))
}

/// The scene of `spec` as the script's input, and the lowest initial point of the cloth (m).
fn blender_case(spec: &CaseSpec) -> Result<(serde_json::Value, usize, f64), String> {
    let scene: Scene = prepare_scene(spec)?;
    if scene.cloths.len() != 1 {
        return Err(format!("{}: one cloth expected", spec.scene.display()));
    }
    // The cloth placed in the world as the simulator builds it (no forces or solver needed).
    let mesh = build_mesh(&scene).map_err(|e| format!("{}: {e}", spec.scene.display()))?;
    let vertices: Vec<[f64; 3]> = mesh.positions().iter().map(to_blender).collect();
    let lowest = mesh
        .positions()
        .iter()
        .map(|p| p.y)
        .fold(f64::INFINITY, f64::min);
    let colliders = (scene.colliders.iter().enumerate())
        .map(|(i, c)| collider_json(c, i))
        .collect::<Result<Vec<_>, _>>()?;
    let cloth = &scene.cloths[0];
    let case = json!({
        "fps": scene.run.fps,
        "frames": scene.run.frames,
        "vertices": vertices,
        "triangles": mesh.triangles(),
        "colliders": colliders,
        // Blender's presets/cloth/Cotton.py.
        "cloth_settings": {
            "quality": 5,
            "mass": 0.3,
            "tension_stiffness": 15.0,
            "compression_stiffness": 15.0,
            "shear_stiffness": 15.0,
            "bending_stiffness": 0.5,
            "tension_damping": 5.0,
            "compression_damping": 5.0,
            "shear_damping": 5.0,
            "bending_damping": 0.5,
            "air_damping": 1.0,
        },
        "collision_settings": {
            "use_collision": true,
            "collision_quality": 2,
            "distance_min": cloth.thickness.max(0.001),
            "use_self_collision": cloth.self_collision,
        },
    });
    Ok((case, mesh.num_vertices(), lowest))
}

/// Reads the script's `CLOTH_PEER` line from Blender's output.
fn parse_output(stdout: &str) -> Result<ScriptResult, String> {
    let line = stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("CLOTH_PEER "))
        .ok_or("Blender printed no CLOTH_PEER line")?;
    let r: ScriptResult =
        serde_json::from_str(line).map_err(|e| format!("bad CLOTH_PEER line ({e}): {line}"))?;
    if !(r.seconds.is_finite() && r.seconds > 0.0 && r.frames > 0) {
        return Err(format!("CLOTH_PEER line without a time: {line}"));
    }
    Ok(r)
}

/// Checks a run against the scene it was given: same vertex count, and the cloth fell.
fn check_run(r: &ScriptResult, vertices: usize, lowest_at_start: f64) -> Result<(), String> {
    if r.vertices != vertices {
        return Err(format!(
            "Blender's cloth has {} vertices, the scene {vertices}",
            r.vertices
        ));
    }
    // A NaN height fails too.
    if r.lowest.is_nan() || r.lowest >= lowest_at_start - MIN_DROP {
        return Err(format!(
            "Blender's cloth did not fall (lowest point {:.3} m, {:.3} m at the start)",
            r.lowest, lowest_at_start
        ));
    }
    Ok(())
}

/// Runs Blender once on the case written to `dir`; returns the script's result. Blender's
/// output goes to `dir/blender.log` (a file, so a chatty Blender cannot fill a pipe and stall);
/// a run longer than [`TIMEOUT`] is killed.
fn run_blender(exe: &Path, threads: usize, dir: &Path) -> Result<ScriptResult, String> {
    let log_path = dir.join("blender.log");
    let cannot_write = |e: std::io::Error| format!("cannot write {}: {e}", log_path.display());
    let log = std::fs::File::create(&log_path).map_err(cannot_write)?;
    let err = log.try_clone().map_err(cannot_write)?;
    let mut child = Command::new(exe)
        .args(["-b", "--factory-startup", "-noaudio", "-t"])
        .arg(threads.max(1).to_string())
        .args(["--python-exit-code", "1", "--python"])
        .arg(dir.join("drape.py"))
        .arg("--")
        .arg(dir.join("case.json"))
        .stdout(log)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "Blender did not finish in {} s (killed; log: {})",
                    TIMEOUT.as_secs(),
                    log_path.display()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("waiting for Blender: {e}")),
        }
    };
    let stdout = std::fs::read_to_string(&log_path)
        .map_err(|e| format!("cannot read {}: {e}", log_path.display()))?;
    if !status.success() {
        let tail: Vec<&str> = stdout.lines().rev().take(5).collect();
        return Err(format!(
            "Blender exited with {status} (log: {}): {}",
            log_path.display(),
            tail.join(" | ")
        ));
    }
    parse_output(&stdout)
}

/// Blender's Figure 1 run, `repeat` times (the case `fig1` describes; its frames and
/// threads), with the case files in `dir`.
pub fn blender_fig1(
    exe: &Path,
    fig1: &CaseSpec,
    repeat: usize,
    dir: &Path,
) -> Result<PeerRun, String> {
    let (case, vertices, lowest0) = blender_case(fig1)?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text)
            .map_err(|e| format!("cannot write {}: {e}", dir.join(name).display()))
    };
    write("drape.py", SCRIPT)?;
    write("case.json", &case.to_string())?;
    let mut repeats = Vec::new();
    let mut last = None;
    for round in 1..=repeat.max(1) {
        let r = run_blender(exe, fig1.threads, dir)?;
        check_run(&r, vertices, lowest0)?;
        let spf = r.seconds / r.frames as f64;
        eprintln!(
            "      round {round}/{}: {BLENDER_FIG1:<24} {:>9.2} ms/frame ({})",
            repeat.max(1),
            1e3 * spf,
            r.version
        );
        repeats.push(spf);
        last = Some(r);
    }
    let last = last.expect("at least one round");
    Ok(PeerRun {
        name: BLENDER_FIG1.into(),
        who: format!("Blender {}", last.version),
        mirrors: fig1.name.clone(),
        vertices,
        frames: last.frames,
        threads: fig1.threads,
        seconds_per_frame: analysis::median(&repeats).unwrap_or(f64::NAN),
        repeats,
        lowest: last.lowest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collider(shape: ColliderShape, position: [f64; 3], rotation: [f64; 3]) -> ColliderSettings {
        let scene = Scene::load(crate::suite::workspace_root().join("scenes/drape_cylinder.toml"))
            .expect("Figure 1 scene");
        let mut c = scene.colliders[0].clone();
        c.shape = shape;
        c.position = Vector3::from(position);
        c.rotation = Vector3::from(rotation);
        c
    }

    fn apply(m: &[f64; 16], p: [f64; 3]) -> [f64; 3] {
        std::array::from_fn(|r| {
            m[4 * r] * p[0] + m[4 * r + 1] * p[1] + m[4 * r + 2] * p[2] + m[4 * r + 3]
        })
    }

    #[test]
    fn blender_frame_keeps_the_cylinder_axis_and_height() {
        // Figure 1's bar: along world x after 90 degrees about z, centre 0.5 m up.
        let c = collider(
            ColliderShape::Cylinder {
                radius: 0.15,
                length: 1.6,
            },
            [0.0, 0.5, 0.0],
            [0.0, 0.0, 90.0],
        );
        let m = collider_matrix(&c);
        // Blender's local z (the axis) must land along world x, through (0, 0, 0.5).
        let centre = apply(&m, [0.0, 0.0, 0.0]);
        let end = apply(&m, [0.0, 0.0, 0.8]);
        for (got, want) in centre.iter().zip([0.0, 0.0, 0.5]) {
            assert!((got - want).abs() < 1e-12, "centre {centre:?}");
        }
        assert!(
            (end[0].abs() - 0.8).abs() < 1e-12 && end[1].abs() < 1e-12,
            "end {end:?}"
        );
        assert!((end[2] - 0.5).abs() < 1e-12, "end {end:?}");
        // A point of ours maps like a vertex: our (1, 2, 3) at rest is Blender's (1, -3, 2).
        let c = collider(ColliderShape::Plane, [1.0, 2.0, 3.0], [0.0, 0.0, 0.0]);
        let m = collider_matrix(&c);
        assert_eq!(
            apply(&m, [0.0, 0.0, 0.0]),
            to_blender(&Vector3::new(1.0, 2.0, 3.0))
        );
        // A plane's normal (Blender local z) stays up: our y is Blender's z.
        let n = apply(&m, [0.0, 0.0, 1.0]);
        assert!((n[2] - 3.0).abs() < 1e-12, "normal tip {n:?}");
    }

    #[test]
    fn figure_1_reaches_blender_whole() {
        let spec = CaseSpec::new(
            "fig1_drape",
            "paper",
            crate::suite::workspace_root().join("scenes/drape_cylinder.toml"),
            1,
        );
        let (case, n, lowest) = blender_case(&spec).expect("Figure 1 translates");
        assert_eq!(n, 51 * 51);
        let vs = case["vertices"].as_array().expect("vertices");
        assert_eq!(vs.len(), n);
        // The sheet lies flat 0.7 m up: Blender's z, every vertex.
        assert!(
            vs.iter()
                .all(|v| (v[2].as_f64().unwrap() - 0.7).abs() < 1e-12)
        );
        assert!((lowest - 0.7).abs() < 1e-12);
        assert_eq!(
            case["triangles"].as_array().map(Vec::len),
            Some(2 * 50 * 50)
        );
        let kinds: Vec<&str> = (case["colliders"].as_array().unwrap().iter())
            .map(|c| c["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["cylinder", "plane"]);
        assert_eq!(case["frames"].as_u64(), Some(75));
    }

    #[test]
    fn script_output_is_read_and_checked() {
        let good = "Blender 3.4.1\nsome log\nCLOTH_PEER {\"version\": \"3.4.1\", \"seconds\": 7.5, \
                    \"setup_seconds\": 0.2, \"frames\": 75, \"vertices\": 2601, \"lowest\": 0.2, \
                    \"highest\": 0.66}\nBlender quit\n";
        let r = parse_output(good).expect("parsed");
        assert_eq!((r.frames, r.vertices), (75, 2601));
        assert!(check_run(&r, 2601, 0.7).is_ok());
        // Another vertex count, a cloth that stayed up, no line, no time: refused.
        assert!(check_run(&r, 2600, 0.7).unwrap_err().contains("2600"));
        assert!(
            check_run(&r, 2601, 0.22)
                .unwrap_err()
                .contains("did not fall")
        );
        assert!(parse_output("Blender quit\n").is_err());
        let no_time = good.replace("7.5", "0.0");
        assert!(
            parse_output(&no_time)
                .unwrap_err()
                .contains("without a time")
        );
    }

    /// Runs Blender (when installed) on three frames of Figure 1: the sheet must fall onto
    /// the bar. `cargo test -p xtask --release -- --ignored blender`.
    #[test]
    #[ignore = "needs Blender; about 10 s"]
    fn blender_drops_the_sheet_on_the_bar() {
        let Some(exe) = find_blender() else {
            eprintln!("no blender: skipped");
            return;
        };
        let mut spec = CaseSpec::new(
            "fig1_drape",
            "paper",
            crate::suite::workspace_root().join("scenes/drape_cylinder.toml"),
            2,
        );
        spec.frames = Some(12);
        let dir = std::env::temp_dir().join(format!("cloth-peer-test-{}", std::process::id()));
        let run = blender_fig1(&exe, &spec, 1, &dir).expect("Blender ran");
        std::fs::remove_dir_all(&dir).ok();
        assert!(run.who.starts_with("Blender "));
        // 0.4 s of fall from 0.7 m: the middle rests on the bar's top (0.65 m), the sides hang.
        assert!(run.lowest < 0.6, "lowest {}", run.lowest);
        assert!(run.seconds_per_frame > 0.0);
    }
}
