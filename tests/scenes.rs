//! End to end through scene files and the `cloth` command: the shipped example scenes run
//! and obey physics, the explicit integrator keeps its strain limit, and bad input fails
//! with a clear error.

mod common;

use cloth::mesh::Vec3;
use cloth::sim::{error::SimError, scene::Scene, scene::build_simulation};
use common::{cloth_cmd, temp_dir};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn load(name: &str) -> Scene {
    Scene::load(root().join("scenes").join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn fixed_sheet_hangs_still_with_pins_on_target_and_cotton_stretch_under_5_percent() {
    let mut scene = load("fixed_sheet.toml");
    scene.run.frames = 60; // 2 s
    let mut sim = build_simulation(&scene).unwrap();
    let pins: Vec<(usize, Vec3)> = sim
        .pins()
        .iter()
        .flat_map(|p| p.vertices.iter().copied().zip(p.initial.iter().copied()))
        .collect();
    assert!(!pins.is_empty());
    let mut peak: f64 = 0.0;
    let mut ke = Vec::new();
    for _ in 0..scene.run.frames {
        let st = sim.step_frame().unwrap();
        assert!(
            sim.positions()
                .iter()
                .chain(sim.velocities())
                .all(|p| p.iter().all(|c| c.is_finite()))
        );
        for &(i, p) in &pins {
            assert_eq!(sim.positions()[i], p, "pinned vertex {i} left its target");
        }
        assert!(
            st.max_stretch < 0.05,
            "frame {}: stretch {:.2}%",
            st.frame,
            100.0 * st.max_stretch
        );
        peak = peak.max(st.kinetic_energy);
        ke.push(st.kinetic_energy);
    }
    // Coming to rest: the kinetic energy of the last frames is a small fraction of the swing's.
    let last = ke[ke.len() - 5..].iter().cloned().fold(0.0, f64::max);
    assert!(
        last < 0.02 * peak,
        "still swinging: {last} J of a {peak} J peak"
    );
    // Hanging: the sheet's centroid is well below the pins.
    let c: Vec3 = sim.positions().iter().sum::<Vec3>() / sim.positions().len() as f64;
    assert!(c.y < 1.0 - 0.3, "centroid at {} m", c.y);
}

#[test]
fn free_fall_scene_keeps_its_shape() {
    let mut scene = load("free_fall.toml");
    scene.run.frames = 15;
    let mut sim = build_simulation(&scene).unwrap();
    let x0 = sim.positions().to_vec();
    for _ in 0..scene.run.frames {
        sim.step_frame().unwrap();
    }
    let t = sim.time();
    let g = -scene.run.gravity.y;
    let drop0: f64 = x0.iter().map(|p| p.y).sum::<f64>() / x0.len() as f64;
    let drop1: f64 = sim.positions().iter().map(|p| p.y).sum::<f64>() / x0.len() as f64;
    let drop = drop0 - drop1;
    // Backward Euler's excess over g t^2 / 2 is at most g t h_max / 2.
    let exact = 0.5 * g * t * t;
    assert!(
        drop >= exact * (1.0 - 1e-3) && drop <= exact + 0.5 * g * t * scene.solver.h_max * 1.001
    );
    for e in sim.system().mesh.edges() {
        let l0 = (x0[e.v[1]] - x0[e.v[0]]).norm();
        let l = (sim.positions()[e.v[1]] - sim.positions()[e.v[0]]).norm();
        assert!((l / l0 - 1.0).abs() < 1e-3);
    }
}

#[test]
fn verlet_keeps_every_edge_within_its_strain_limit_after_each_step() {
    let mut scene = load("hanging_verlet.toml");
    // One Verlet step per frame, so every step's result is observed.
    scene.run.fps = 1.0 / scene.solver.verlet_h;
    scene.run.frames = 600;
    let [lo, hi] = scene
        .solver
        .strain_limit
        .expect("verlet scene sets a strain limit");
    let mut sim = build_simulation(&scene).unwrap();
    let mesh = &sim.system().mesh;
    let rest: Vec<f64> = mesh.edge_rest_lengths().to_vec();
    let edges: Vec<[usize; 2]> = mesh.edges().iter().map(|e| e.v).collect();
    let mut worst: f64 = 0.0;
    for _ in 0..scene.run.frames {
        let st = sim.step_frame().unwrap();
        assert_eq!(st.steps, 1);
        for (e, l0) in edges.iter().zip(&rest) {
            let r = (sim.positions()[e[1]] - sim.positions()[e[0]]).norm() / l0;
            worst = worst.max(r - hi).max(lo - r);
        }
    }
    // The projection iterates until every edge is within the limit to the tolerance.
    let tol = scene.solver.strain_tolerance;
    assert!(worst <= tol + 1e-12, "edge outside [{lo}, {hi}] by {worst}");
    // And the cloth did hang down (it is not stuck at rest).
    let c: Vec3 = sim.positions().iter().sum::<Vec3>() / sim.positions().len() as f64;
    assert!(c.y < 0.95, "centroid at {}", c.y);
}

#[test]
fn pin_region_that_selects_nothing_is_an_error_naming_the_pin() {
    let text = r#"
[cloth]
mesh = { kind = "grid", nx = 5, ny = 5, width = 1.0, height = 1.0 }
[[pin]]
vertices = [0]
[[pin]]
region = { min = [5.0, 5.0, 5.0], max = [6.0, 6.0, 6.0] }
"#;
    let scene = Scene::from_toml_str(text, Path::new(".")).unwrap();
    match build_simulation(&scene) {
        Err(SimError::Invalid { key, .. }) => assert_eq!(key, "pin[1].region"),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("an empty pin region was accepted"),
    }
}

#[test]
fn stiff_scene_with_tiny_h_min_reports_the_frame() {
    // A step controller that may not go below a huge h_min fails with a typed error naming
    // the frame, instead of producing garbage.
    let text = r#"
[run]
fps = 10
frames = 3
[cloth]
mesh = { kind = "grid", nx = 11, ny = 11, width = 0.5, height = 0.5 }
material = { preset = "denim", stretch = 1.0e6, shear = 1.0e5 }
[[pin]]
vertices = [0]
[solver]
h_max = 0.1
h_min = 0.05
stretch_threshold = 0.001
"#;
    let scene = Scene::from_toml_str(text, Path::new(".")).unwrap();
    let mut sim = build_simulation(&scene).unwrap();
    match sim.step_frame() {
        Err(SimError::StepTooSmall { frame, .. }) => assert_eq!(frame, 1),
        other => panic!("expected StepTooSmall, got {other:?}"),
    }
}

#[test]
fn cloth_run_writes_every_frame_and_stats_atomically() {
    let dir = temp_dir("run");
    let scene = dir.join("scene.toml");
    std::fs::write(
        &scene,
        r#"
[run]
fps = 30
frames = 4
[cloth]
mesh = { kind = "grid", nx = 6, ny = 6, width = 0.5, height = 0.5 }
[[pin]]
vertices = [0, 5]
"#,
    )
    .unwrap();
    let out = dir.join("out");
    let o = cloth_cmd()
        .args([
            "run",
            scene.to_str().unwrap(),
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ])
        .args(["--threads", "1", "--format", "both"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for k in 0..=4 {
        let f = out.join(format!("frame_{k:04}.obj"));
        let text = std::fs::read_to_string(&f).unwrap();
        assert_eq!(
            text.lines().filter(|l| l.starts_with("v ")).count(),
            36,
            "{f:?}"
        );
    }
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["frames"].as_array().unwrap().len(), 4);
    assert_eq!(stats["complete"], true);
    assert_eq!(stats["settings"]["run"]["frames"], 4);
    assert!(out.join("animation.usda").exists());
    // No temporary files are left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cloth_check_prints_counts_and_bad_scenes_fail_with_one_line() {
    let o = cloth_cmd()
        .args([
            "check",
            root().join("scenes/fixed_sheet.toml").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("vertices   2601"), "{text}");
    assert!(text.contains("triangles  5000"), "{text}");

    let dir = temp_dir("bad");
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "[cloth]\nmesh = { kind = \"grid\", nx = 1, ny = 5, width = 1.0, height = 1.0 }\n",
    )
    .unwrap();
    for cmd in ["check", "run"] {
        let o = cloth_cmd()
            .args(
                [cmd, bad.to_str().unwrap(), "--quiet"]
                    .iter()
                    .filter(|a| cmd == "run" || **a != "--quiet"),
            )
            .output()
            .unwrap();
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("cloth.mesh.nx"), "{err}");
    }
    let o = cloth_cmd()
        .args(["run", "does/not/exist.toml"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("does/not/exist.toml"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The standard output of a successful `cloth check SCENE`.
fn cloth_check(scene: &Path) -> String {
    let o = cloth_cmd()
        .args(["check", scene.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    text
}

#[test]
fn cloth_check_reports_the_skirt_pattern_and_its_seams() {
    let text = cloth_check(&root().join("scenes/skirt_mannequin.toml"));
    assert!(text.contains("cloth      skirt:"), "{text}");
    assert!(text.contains("rest       pattern"), "{text}");
    assert!(text.contains("panel waistband_front"), "{text}");
    assert!(text.contains("6 stitches"), "{text}");
    assert!(text.contains("sewn       2 boundary loops"), "{text}");
    assert!(text.contains("sews       from 0 s to 0.5 s"), "{text}");
    assert!(text.contains("problems   none"), "{text}");
}

/// `cloth check` says when a cloth starts crossing itself and what untangling left: two
/// triangles hooked through each other (an edge of each passes through the other).
#[test]
fn cloth_check_reports_a_cloth_that_starts_crossed() {
    let dir = std::env::temp_dir().join(format!("cloth-check-hooked-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let obj = "v 0 0 0\nv 0.02 0 0\nv 0 0.02 0\n\
               v 0.005 0.005 -0.005\nv 0.005 0.005 0.005\nv 0.03 0.005 0\n\
               f 1 2 3\nf 4 5 6\n";
    std::fs::write(dir.join("hooked.obj"), obj).unwrap();
    let scene = dir.join("hooked.toml");
    std::fs::write(
        &scene,
        "[cloth]\nmesh = { kind = \"obj\", path = \"hooked.obj\" }\nself_collision = true\n",
    )
    .unwrap();
    let text = cloth_check(&scene);
    assert!(
        text.contains("crossings  1 pair of triangles at the start; 0 left"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
