//! Reliability of `cloth run` and `cloth check` against what an adversarial user does: extreme
//! settings, absurd inputs and hostile files each end in a clear error or a correct run, a run killed
//! at any frame resumes to the same bytes, and stats.json lists every written frame whatever
//! ends the run (a signal, a full disk, an unwritable frame path).

mod common;

use common::{cloth_cmd, run, stderr, temp_dir};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

fn check(scene: &Path) -> Output {
    cloth_cmd().arg("check").arg(scene).output().unwrap()
}

/// Vertex positions of an OBJ frame.
fn vertices(path: &Path) -> Vec<[f64; 3]> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("v "))
        .map(|l| {
            let c: Vec<f64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            [c[0], c[1], c[2]]
        })
        .collect()
}

fn frame_files(out: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("frame_") && name.ends_with(".obj") && p.is_file()
        })
        .collect();
    v.sort();
    v
}

fn stats(out: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join("stats.json")).expect("stats.json is written");
    serde_json::from_str(&text).expect("stats.json is valid JSON")
}

/// stats.json lists exactly the frames 1..=n written besides frame 0, in order.
fn assert_stats_list_written_frames(out: &Path) -> serde_json::Value {
    let s = stats(out);
    let listed: Vec<u64> = s["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["frame"].as_u64().unwrap())
        .collect();
    let written = frame_files(out).len();
    let expected: Vec<u64> = (1..written as u64).collect();
    assert_eq!(listed, expected, "stats.json vs frames on disk in {out:?}");
    s
}

/// Either the command failed with a one-line error naming a frame or a scene key, or it ran
/// and every vertex of every frame stayed within `bound` metres of the origin.
fn assert_error_or_bounded(o: &Output, out: &Path, bound: f64) {
    if !o.status.success() {
        let e = stderr(o);
        assert!(
            e.starts_with("error: ") && (e.contains("frame") || e.contains("scene key")),
            "unclear error: {e}"
        );
        return;
    }
    for f in frame_files(out) {
        for p in vertices(&f) {
            let r = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
            assert!(r.is_finite() && r < bound, "{f:?} has a vertex at {r} m");
        }
    }
}

const SHEET: &str = "[cloth]\nmesh = { kind = \"grid\", nx = 8, ny = 8, width = 0.3, height = 0.3 }\nposition = [0.0, 1.0, 0.0]\n";

#[test]
fn explicit_runs_at_extreme_settings_end_in_an_error_or_stay_bounded() {
    let dir = temp_dir("verlet");
    // fps 0.5 with the default Verlet step: 3 frames are 6 s of free fall, 177 m at most.
    let slow = write(
        &dir.join("slow.toml"),
        &format!("[run]\nfps = 0.5\nframes = 3\n{SHEET}[solver]\nintegrator = \"verlet\"\n"),
    );
    let o = run(&slow, &dir.join("slow"), &[]);
    assert_error_or_bounded(&o, &dir.join("slow"), 0.5 * 9.81 * 36.0 + 2.0);
    // Springs of 1e9 N/m on a pinned sheet: far above the explicit stability bound.
    let stiff = write(
        &dir.join("stiff.toml"),
        &format!(
            "[run]\nframes = 5\n{SHEET}[[pin]]\nvertices = [0, 7]\n[solver]\nintegrator = \"verlet\"\nspring_stiffness = 1e9\n"
        ),
    );
    let o = run(&stiff, &dir.join("stiff"), &[]);
    assert_error_or_bounded(&o, &dir.join("stiff"), 2.0);
    // The same springs with the strain limits opened wide and one step per frame: the springs
    // are solved in the projection (backward Euler), so no step size is unstable; the run
    // must complete and stay put.
    let wide = write(
        &dir.join("wide.toml"),
        &format!(
            "[run]\nframes = 5\n{SHEET}[[pin]]\nvertices = [0, 7]\n[solver]\nintegrator = \"verlet\"\nspring_stiffness = 1e9\nstrain_limit = [1e-9, 1e9]\nverlet_h = 0.0333\n"
        ),
    );
    let o = run(&wide, &dir.join("wide"), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_error_or_bounded(&o, &dir.join("wide"), 2.0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn absurd_gravity_steps_and_frame_rates_are_refused_or_reported() {
    let dir = temp_dir("absurd");
    let gravity = write(
        &dir.join("g.toml"),
        &format!(
            "[run]\nframes = 3\ngravity = [0.0, -1e300, 0.0]\n{SHEET}[solver]\nintegrator = \"verlet\"\n"
        ),
    );
    let o = check(&gravity);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("run.gravity"), "{}", stderr(&o));

    let tiny = write(
        &dir.join("h.toml"),
        &format!(
            "[run]\nframes = 3\n{SHEET}[solver]\nintegrator = \"verlet\"\nverlet_h = 1e-300\n"
        ),
    );
    let o = check(&tiny);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("max_hours"), "{}", stderr(&o));

    // One frame every 1000 s: the sheet falls ~5000 km in free fall, which leaves the scene's
    // bound; the run must say so instead of writing it.
    let slow = write(
        &dir.join("fps.toml"),
        &format!("[run]\nframes = 3\nfps = 0.001\n{SHEET}"),
    );
    let o = run(&slow, &dir.join("fps"), &[]);
    assert_error_or_bounded(&o, &dir.join("fps"), 1e3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_cloth_dropped_under_strong_gravity_stays_above_the_floor() {
    let dir = temp_dir("floor");
    for g in [100.0, 1e3, 1e4] {
        let scene = write(
            &dir.join("s.toml"),
            &format!(
                "[run]\nframes = 1\ngravity = [0.0, -{g}, 0.0]\n[cloth]\nmesh = {{ kind = \"grid\", nx = 10, ny = 10, width = 0.3, height = 0.3 }}\nposition = [0.0, 0.05, 0.0]\n[[collider]]\nshape = \"plane\"\n"
            ),
        );
        let out = dir.join(format!("g{g}"));
        let o = run(&scene, &out, &[]);
        assert!(o.status.success(), "g = {g}: {}", stderr(&o));
        let low = vertices(&out.join("frame_0001.obj"))
            .iter()
            .map(|p| p[1])
            .fold(f64::INFINITY, f64::min);
        assert!(
            low > -1e-3,
            "g = {g}: a vertex ended {low} m below the floor"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A sheet placed at rest partly inside the floor itself and its thickness layer (5 mm of
/// cloth plus the floor's default 5 mm), tilted 2 degrees: it is out of the solid in the first
/// frame written (the start is moved out before the first step) and after its first step,
/// settles on its layer, and the energy check does not mistake the push-out for a blow-up (it
/// stopped such sheets in their first frames).
#[test]
fn a_cloth_started_inside_the_floors_layer_rises_onto_it() {
    let dir = temp_dir("layer");
    for y in [0.002, 0.005] {
        let scene = write(
            &dir.join("s.toml"),
            &format!(
                "[run]\nframes = 30\n[cloth]\nmesh = {{ kind = \"grid\", nx = 11, ny = 11, width = 0.2, height = 0.2 }}\nposition = [0.0, {y}, 0.0]\nrotation = [0.0, 0.0, 2.0]\nmaterial = \"cotton\"\nthickness = 0.005\n[[collider]]\nshape = \"plane\"\nfriction = 0.5\n"
            ),
        );
        let out = dir.join(format!("y{y}"));
        let o = run(&scene, &out, &[]);
        assert!(o.status.success(), "y = {y}: {}", stderr(&o));
        let lowest = |frame: usize| {
            vertices(&out.join(format!("frame_{frame:04}.obj")))
                .iter()
                .map(|p| p[1])
                .fold(f64::INFINITY, f64::min)
        };
        // As placed, the lowest vertex is 0.1 m sin 2 deg below the centre: inside the layer,
        // and for y = 2 mm inside the floor itself.
        let placed = y - 0.1 * 2f64.to_radians().sin();
        assert!(
            placed < 0.01,
            "y = {y}: the sheet must start inside the layer"
        );
        assert!(lowest(0) >= 0.0, "y = {y}: {} m at the start", lowest(0));
        assert!(lowest(1) >= 0.0, "y = {y}: {} m after a step", lowest(1));
        let layer = 0.010;
        assert!(
            (lowest(30) - layer).abs() < 5e-4,
            "y = {y}: lowest vertex at {} m, the layer at {layer} m",
            lowest(30)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

const CUBE: &str = "v -0.1 -0.1 -0.1\nv 0.1 -0.1 -0.1\nv 0.1 0.1 -0.1\nv -0.1 0.1 -0.1\nv -0.1 -0.1 0.1\nv 0.1 -0.1 0.1\nv 0.1 0.1 0.1\nv -0.1 0.1 0.1\nf 1 3 2\nf 1 4 3\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n";

#[test]
fn collider_paths_resolve_against_the_scene_file_from_any_working_directory() {
    let dir = temp_dir("paths");
    let scene_dir = dir.join("minrep");
    std::fs::create_dir_all(scene_dir.join("anim")).unwrap();
    write(&scene_dir.join("body.obj"), CUBE);
    for k in 0..3 {
        write(&scene_dir.join(format!("anim/body_{k:04}.obj")), CUBE);
    }
    write(
        &scene_dir.join("seq.toml"),
        &format!(
            "[run]\nframes = 2\n{SHEET}[[collider]]\nshape = \"obj\"\npath = \"body.obj\"\nframes = \"anim/body_{{:04}}.obj\"\n"
        ),
    );
    // From the scene's parent, as `cloth check minrep/seq.toml`, and from elsewhere with an
    // absolute path.
    let o = cloth_cmd()
        .args(["check", "minrep/seq.toml"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = cloth_cmd()
        .arg("run")
        .arg("minrep/seq.toml")
        .args(["--quiet", "--out", "o"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = cloth_cmd()
        .arg("check")
        .arg(scene_dir.join("seq.toml"))
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_closed_collider_without_volume_is_refused() {
    let dir = temp_dir("flat");
    // A tetrahedron squashed into the plane z = 0: closed, but it encloses nothing.
    write(
        &dir.join("flat.obj"),
        "v 0 0 0\nv 0.2 0 0\nv 0 0.2 0\nv 0.05 0.05 0\nf 1 3 2\nf 1 2 4\nf 2 3 4\nf 3 1 4\n",
    );
    let scene = write(
        &dir.join("s.toml"),
        &format!("[run]\nframes = 1\n{SHEET}[[collider]]\nshape = \"obj\"\npath = \"flat.obj\"\n"),
    );
    let o = check(&scene);
    assert!(!o.status.success(), "accepted a flat collider");
    assert!(stderr(&o).contains("encloses"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn resources_are_bounded_before_anything_is_allocated() {
    let dir = temp_dir("bounded");
    // A 3162 x 3162 grid is inside the vertex limit but needs far more memory than the
    // memory budget of 0.5 GB set here.
    let big = write(
        &dir.join("big.toml"),
        "[run]\nframes = 1\nmax_memory_gb = 0.5\n[cloth]\nmesh = { kind = \"grid\", nx = 3162, ny = 3162, width = 3.0, height = 3.0 }\n",
    );
    let o = check(&big);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("GB"), "{}", stderr(&o));
    // Endless inputs stop at the size limit.
    let o = cloth_cmd().args(["check", "/dev/zero"]).output().unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("limit"), "{}", stderr(&o));
    let obj = write(
        &dir.join("zero.toml"),
        "[cloth]\nmesh = { kind = \"obj\", path = \"/dev/zero\" }\n",
    );
    let o = check(&obj);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("limit") || stderr(&o).contains("not a regular file"),
        "{}",
        stderr(&o)
    );
    // An absurd thread count is capped with a warning, and the run completes.
    let small = write(
        &dir.join("small.toml"),
        &format!("[run]\nframes = 1\n{SHEET}"),
    );
    let o = run(&small, &dir.join("t"), &["--threads", "100000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("warning"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn echoed_input_is_truncated_and_control_characters_escaped() {
    let dir = temp_dir("echo");
    let name = "a".repeat(5000);
    let scene = write(
        &dir.join("s.toml"),
        &format!("{SHEET}material = \"{name}\\u0007\\u001b[31m\"\n"),
    );
    let o = check(&scene);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.len() < 400, "message of {} bytes", e.len());
    assert!(
        !e.trim_end().chars().any(|c| c.is_control()),
        "raw control characters in {e:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A sheet falling on a sphere (contact and friction), slow enough per frame to be killed in
/// the middle of a run.
fn contact_scene(dir: &Path, frames: usize) -> PathBuf {
    write(
        &dir.join("drop.toml"),
        &format!(
            "[run]\nframes = {frames}\n[cloth]\nmesh = {{ kind = \"grid\", nx = 24, ny = 24, width = 0.6, height = 0.6 }}\nposition = [0.0, 0.35, 0.0]\nself_collision = true\n[[collider]]\nshape = \"sphere\"\nradius = 0.2\nfriction = 0.4\n"
        ),
    )
}

fn wait_for(path: &Path, child: &mut std::process::Child) -> bool {
    let start = Instant::now();
    while !path.exists() {
        if child.try_wait().unwrap().is_some() || start.elapsed() > Duration::from_secs(120) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

#[test]
fn a_run_killed_at_any_frame_resumes_to_the_same_bytes() {
    let dir = temp_dir("resume");
    let frames = 14;
    let scene = contact_scene(&dir, frames);
    let reference = dir.join("reference");
    let o = run(&scene, &reference, &["--checkpoint-every", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let expected = frame_files(&reference);
    assert_eq!(expected.len(), frames + 1);
    for kill_at in [2, 7, 11] {
        let out = dir.join(format!("killed{kill_at}"));
        let mut child = cloth_cmd()
            .arg("run")
            .arg(&scene)
            .args(["--quiet", "--checkpoint-every", "3", "--out"])
            .arg(&out)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for(&out.join(format!("frame_{kill_at:04}.obj")), &mut child);
        child.kill().unwrap(); // SIGKILL: no handler runs.
        child.wait().unwrap();
        let o = cloth_cmd()
            .args(["run", "--quiet", "--resume"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "resume after frame {kill_at}: {}",
            stderr(&o)
        );
        let got = frame_files(&out);
        assert_eq!(got.len(), expected.len());
        for (a, b) in expected.iter().zip(&got) {
            assert!(
                std::fs::read(a).unwrap() == std::fs::read(b).unwrap(),
                "killed at frame {kill_at}: {b:?} differs from the uninterrupted run"
            );
        }
        let s = assert_stats_list_written_frames(&out);
        assert_eq!(s["complete"], true);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stats_list_every_written_frame_after_sigint_and_sigterm() {
    let dir = temp_dir("signals");
    let scene = contact_scene(&dir, 200);
    for signal in ["INT", "TERM"] {
        let out = dir.join(signal);
        let mut child = cloth_cmd()
            .arg("run")
            .arg(&scene)
            .args(["--quiet", "--out"])
            .arg(&out)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        assert!(wait_for(&out.join("frame_0004.obj"), &mut child));
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .unwrap();
        assert!(sent.success());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "SIG{signal}");
        let s = assert_stats_list_written_frames(&out);
        assert_eq!(s["complete"], false);
        assert_eq!(s["error"], "interrupted");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stats_list_every_written_frame_after_an_unwritable_frame_path() {
    let dir = temp_dir("unwritable");
    let scene = contact_scene(&dir, 8);
    let out = dir.join("out");
    // frame_0003.obj is a directory: the third frame cannot be written.
    std::fs::create_dir_all(out.join("frame_0003.obj")).unwrap();
    let o = run(&scene, &out, &[]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("frame_0003.obj"), "{}", stderr(&o));
    let s = assert_stats_list_written_frames(&out);
    assert_eq!(frame_files(&out).len(), 3);
    assert_eq!(s["complete"], false);
    assert!(s["error"].as_str().unwrap().contains("frame_0003.obj"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stats_are_written_when_the_disk_is_full() {
    let dir = temp_dir("full");
    // A 60 x 60 sheet writes frames of about 250 KB; a 64 KiB file size limit (the shell's
    // `ulimit -f`, with SIGXFSZ ignored so writes fail with EFBIG as on a full disk) refuses
    // them, while stats.json stays small enough to be written.
    let scene = write(
        &dir.join("s.toml"),
        "[run]\nframes = 3\n[cloth]\nmesh = { kind = \"grid\", nx = 60, ny = 60, width = 0.5, height = 0.5 }\n",
    );
    let out = dir.join("out");
    let script = format!(
        "trap '' XFSZ; ulimit -f 64; exec '{}' run '{}' --quiet --out '{}'",
        env!("CARGO_BIN_EXE_cloth"),
        scene.display(),
        out.display()
    );
    let o = Command::new("bash").args(["-c", &script]).output().unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("frame_0000.obj"), "{}", stderr(&o));
    let s = assert_stats_list_written_frames(&out);
    assert_eq!(s["complete"], false);
    assert!(s["error"].as_str().is_some());
    let _ = std::fs::remove_dir_all(&dir);
}
