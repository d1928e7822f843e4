//! Input is refused rather than read wrongly: arrays of the wrong length and values that
//! cannot be simulated are refused by `cloth check` (and so by `cloth run`) with the key; a
//! batch pattern that meets a file it cannot use says so; a closed standard output ends the
//! program quietly.

mod common;

use common::{cloth_cmd, temp_dir};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

const SHEET: &str =
    "[cloth]\nmesh = { kind = \"grid\", nx = 5, ny = 5, width = 0.5, height = 0.5 }\n";

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn check(scene: &Path) -> Output {
    cloth_cmd().arg("check").arg(scene).output().unwrap()
}

/// `cloth check` refuses the scene with one line that names `key` and contains `words`.
fn assert_refused(dir: &Path, text: &str, key: &str, words: &str) {
    let scene = write(&dir.join("s.toml"), text);
    let o = check(&scene);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "accepted:\n{text}\n{err}");
    assert!(err.contains(&format!("`{key}`")), "{key}: {err}");
    assert!(err.contains(words), "{key}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn arrays_of_the_wrong_length_are_refused_with_their_key() {
    let dir = temp_dir("lengths");
    let collider = "[[collider]]\nshape = \"box\"\nsize = [1, 1, 1]\n";
    let cases: Vec<(String, &str)> = vec![
        (
            format!("{SHEET}position = [1, 2, 3, 4]\n"),
            "cloth.position",
        ),
        (format!("{SHEET}position = [1, 2]\n"), "cloth.position"),
        (
            format!("{SHEET}rotation = [0, 0, 0, 0]\n"),
            "cloth.rotation",
        ),
        (
            format!("{SHEET}velocity = [0, 1, 0, 0]\n"),
            "cloth.velocity",
        ),
        (format!("{SHEET}wind = [1, 0, 0, 0]\n"), "cloth.wind"),
        (
            format!("{SHEET}stretch_targets = [1, 1, 1]\n"),
            "cloth.stretch_targets",
        ),
        (format!("{SHEET}bend_uv = [1]\n"), "cloth.bend_uv"),
        (
            format!("{SHEET}material = {{ preset = \"silk\", stretch = [1e3, 1e3, 1e3] }}\n"),
            "cloth.material.stretch",
        ),
        (
            format!("{SHEET}material = {{ preset = \"silk\", stretch_targets = [1, 1, 1] }}\n"),
            "cloth.material.stretch_targets",
        ),
        (
            format!("[run]\ngravity = [0, -9.81, 0, 1]\n{SHEET}"),
            "run.gravity",
        ),
        (
            format!("{SHEET}[[pin]]\nregion = {{ min = [0, 0, 0, 0], max = [1, 1, 1] }}\n"),
            "pin[0].region.min",
        ),
        (
            format!(
                "{SHEET}[[pin]]\nvertices = [0]\nkeyframes = [{{ t = 0, translation = [0, 0, 0, 5] }}]\n"
            ),
            "pin[0].keyframes[0].translation",
        ),
        (
            format!("{SHEET}[[collider]]\nshape = \"box\"\nsize = [1, 1, 1, 1]\n"),
            "collider[0].size",
        ),
        (
            format!("{SHEET}{collider}position = [0, -1, 0, 0]\n"),
            "collider[0].position",
        ),
        (
            format!("{SHEET}{collider}velocity = [0, 0, 1, 1]\n"),
            "collider[0].velocity",
        ),
        (
            format!("{SHEET}{collider}angular_velocity = [0, 9]\n"),
            "collider[0].angular_velocity",
        ),
        (
            format!("{SHEET}{collider}keyframes = [{{ t = 0, rotation = [0, 0, 0, 0] }}]\n"),
            "collider[0].keyframes[0].rotation",
        ),
        (
            format!("{SHEET}[solver]\nintegrator = \"verlet\"\nstrain_limit = [0.9, 1.1, 1.2]\n"),
            "solver.strain_limit",
        ),
    ];
    for (text, key) in &cases {
        assert_refused(&dir, text, key, "invalid length");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A copy of a GarmentCode pattern with its first panel translated by `by` (its units).
fn translated_pattern(dir: &Path, by: f64) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("assets/patterns/skirt.json")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["pattern"]["panels"]["skirt_front"]["translation"] = serde_json::json!([0.0, by, 0.0]);
    let path = dir.join("far_skirt.json");
    std::fs::write(&path, json.to_string()).unwrap();
    path
}

#[test]
fn values_that_cannot_be_simulated_are_refused_by_check_and_run() {
    let dir = temp_dir("bounds");
    let collider = "[[collider]]\nshape = \"sphere\"\nradius = 0.2\n";
    let cases: Vec<(String, &str, &str)> = vec![
        (
            format!("{SHEET}velocity = [0, -1e200, 0]\n"),
            "cloth.velocity",
            "m/s",
        ),
        (
            format!("{SHEET}velocity = [0, -2000, 0]\n"),
            "cloth.velocity",
            "1e3",
        ),
        (format!("{SHEET}wind = [1e4, 0, 0]\n"), "cloth.wind", "m/s"),
        (
            format!("{SHEET}position = [0, 1e308, 0]\n"),
            "cloth.position[1]",
            "1e4",
        ),
        (
            format!("{SHEET}thickness = 1e6\n"),
            "cloth.thickness",
            "1e3",
        ),
        (
            "[cloth]\nmesh = { kind = \"grid\", nx = 5, ny = 5, width = 1e9, height = 0.5 }\n"
                .into(),
            "cloth.mesh.width",
            "1e3",
        ),
        (
            "[cloth]\nmesh = { kind = \"disc\", radius = 1e-9, resolution = 3 }\n".into(),
            "cloth.mesh.radius",
            "1e-4",
        ),
        (
            format!("{SHEET}[[collider]]\nshape = \"sphere\"\nradius = 1e-9\n"),
            "collider[0].radius",
            "1e-4",
        ),
        (
            format!("{SHEET}[[collider]]\nshape = \"box\"\nsize = [1, 1e9, 1]\n"),
            "collider[0].size[1]",
            "1e3",
        ),
        (
            format!("{SHEET}{collider}position = [1e308, 0, 0]\n"),
            "collider[0].position[0]",
            "1e4",
        ),
        (
            format!("{SHEET}{collider}velocity = [0, 0, 5e3]\n"),
            "collider[0].velocity",
            "m/s",
        ),
        (
            format!("{SHEET}{collider}angular_velocity = [0, 1e7, 0]\n"),
            "collider[0].angular_velocity",
            "degrees/s",
        ),
        (
            format!("{SHEET}{collider}keyframes = [{{ t = 1, translation = [0, 1e20, 0] }}]\n"),
            "collider[0].keyframes[0].translation[1]",
            "1e4",
        ),
        (
            format!("{SHEET}[[pin]]\nregion = {{ min = [-1e300, 0, 0], max = [1, 1, 1] }}\n"),
            "pin[0].region.min[0]",
            "1e4",
        ),
    ];
    for (text, key, words) in &cases {
        assert_refused(&dir, text, key, words);
    }
    // A body in the wrong units: a glTF scale of a billion.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let glb = root.join("assets/mannequin/mannequin.glb");
    assert_refused(
        &dir,
        &format!(
            "{SHEET}[[collider]]\nshape = \"gltf\"\npath = \"{}\"\nscale = 1e9\n",
            glb.display()
        ),
        "collider[0].scale",
        "1e4",
    );
    // A sewing pattern whose panel the file places 1e308 units away: check names the cloth,
    // and run refuses it before writing anything.
    let pattern = translated_pattern(&dir, 1e308);
    let text = format!(
        "[cloth]\nmesh = {{ kind = \"garmentcode\", path = \"{}\", edge_length = 0.05 }}\n",
        pattern.display()
    );
    assert_refused(&dir, &text, "cloth.mesh", "beyond the admitted");
    let scene = write(&dir.join("far.toml"), &text);
    let out = dir.join("out");
    let o = cloth_cmd()
        .arg("run")
        .arg(&scene)
        .args(["--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("beyond the admitted"), "{}", stderr(&o));
    assert!(!out.join("frame_0000.obj").exists(), "no frame is written");
    // The bounds leave ordinary scenes alone.
    let ok = write(
        &dir.join("ok.toml"),
        &format!(
            "{SHEET}position = [0, 1, 0]\nvelocity = [0, -50, 0]\nwind = [20, 0, 0]\n\
             [[collider]]\nshape = \"capsule\"\nradius = 0.1\nlength = 0\n"
        ),
    );
    let o = check(&ok);
    assert!(o.status.success(), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Files for a batch over bodies: a base scene and a manifest sweeping `collider[0].path`.
fn body_batch(dir: &Path) -> PathBuf {
    let bodies = dir.join("bodies");
    std::fs::create_dir_all(&bodies).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        root.join("assets/mannequin/mannequin.obj"),
        bodies.join("a.obj"),
    )
    .unwrap();
    write(
        &dir.join("base.toml"),
        &format!(
            "[run]\nframes = 1\n{SHEET}position = [0, 2.2, 0]\n[[collider]]\nshape = \"obj\"\npath = \"bodies/a.obj\"\n"
        ),
    );
    write(
        &dir.join("batch.toml"),
        "base = \"base.toml\"\n[[axis]]\nkey = \"collider[0].path\"\nfiles = \"bodies/**/*.obj\"\n",
    )
}

#[test]
fn a_batch_pattern_that_meets_a_file_it_cannot_use_says_so() {
    let dir = temp_dir("glob-skips");
    let manifest = body_batch(&dir);
    let plan = |out: &str| {
        let mut c = cloth_cmd();
        c.args(["batch", "plan"])
            .arg(&manifest)
            .arg("--out")
            .arg(dir.join(out));
        c
    };
    let o = plan("b0").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // A link to nothing that matches: refused, naming it.
    std::os::unix::fs::symlink(dir.join("gone.obj"), dir.join("bodies/b.obj")).unwrap();
    let o = plan("b1").output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("bodies/b.obj") && err.contains("link to nothing"),
        "{err}"
    );
    assert!(!dir.join("b1/tasks.json").exists(), "nothing is planned");
    std::fs::remove_file(dir.join("bodies/b.obj")).unwrap();

    // A directory that cannot be listed: a warning naming it, and the plan of the rest. Root
    // reads any directory, so the plan then runs as `nobody`.
    let locked = dir.join("bodies/locked");
    std::fs::create_dir_all(&locked).unwrap();
    std::fs::copy(dir.join("bodies/a.obj"), locked.join("c.obj")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let root = nix_is_root();
    let mut cmd = plan("b2");
    if root {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let args: Vec<std::ffi::OsString> = std::iter::once(cmd.get_program().to_owned())
            .chain(cmd.get_args().map(|a| a.to_owned()))
            .collect();
        cmd = std::process::Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .args(args);
    }
    let o = cmd.output().unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("warning") && err.contains("bodies/locked") && err.contains("cannot list"),
        "{err}"
    );
    let tasks: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("b2/tasks.json")).unwrap()).unwrap();
    assert_eq!(tasks["tasks"].as_array().unwrap().len(), 1, "{tasks}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Whether this test runs as root (whose reads no permission bit refuses).
fn nix_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .is_some_and(|l| l.split_whitespace().nth(1) == Some("0"))
    })
}

/// Runs `cloth ARGS` with a standard output whose reader is already gone.
fn into_closed_pipe(args: &[&std::ffi::OsStr]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    cloth_cmd()
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_closed_standard_output_ends_the_program_quietly() {
    let dir = temp_dir("closed-pipe");
    let scene = write(
        &dir.join("s.toml"),
        &format!("[run]\nframes = 3\n{SHEET}[[pin]]\nvertices = [0, 4]\n"),
    );
    let out = dir.join("out");
    let s = |p: &Path| p.as_os_str().to_owned();
    let runs: Vec<Vec<std::ffi::OsString>> = vec![
        vec!["check".into(), s(&scene)],
        vec!["run".into(), s(&scene), "--out".into(), s(&out)],
        vec!["plot".into(), s(&out)],
        vec!["render".into(), s(&out), "--size".into(), "40x30".into()],
    ];
    for args in &runs {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let o = into_closed_pipe(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("failed printing"),
            "{err}"
        );
    }
    // The run behind the closed pipe is whole.
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["complete"], true);
    assert!(out.join("plots").is_dir() && out.join("preview.gif").is_file());
    // A refused scene still says why on standard error, and its status says no.
    let bad = write(
        &dir.join("bad.toml"),
        &format!("{SHEET}position = [1, 2, 3, 4]\n"),
    );
    let o = into_closed_pipe(&["check".as_ref(), bad.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cloth.position"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}
