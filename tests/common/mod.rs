//! Helpers shared by the root integration tests (each file under `tests/` is a crate of its
//! own that declares `mod common;`).

// Each test file that declares `mod common;` uses a part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `cloth` binary built for the tests.
pub fn cloth_cmd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cloth"))
}

/// A fresh, empty directory for one test: `cloth-test-NAME-PID` in the system's temporary
/// directory (removed first if an earlier run left it).
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cloth-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A square sheet of n x n vertices (0.5 m) pinned at two corners, run for `frames` frames:
/// the smallest scene that writes every kind of output.
pub fn sheet_scene(dir: &Path, n: usize, frames: usize) -> PathBuf {
    let scene = dir.join(format!("sheet{n}_{frames}.toml"));
    std::fs::write(
        &scene,
        format!(
            "[run]\nframes = {frames}\n[cloth]\nmesh = {{ kind = \"grid\", nx = {n}, ny = {n}, width = 0.5, height = 0.5 }}\n[[pin]]\nvertices = [0, {}]\n",
            n - 1
        ),
    )
    .unwrap();
    scene
}

/// `cloth run SCENE --quiet --out OUT EXTRA...`, waited for.
pub fn run(scene: &Path, out: &Path, extra: &[&str]) -> Output {
    cloth_cmd()
        .arg("run")
        .arg(scene)
        .args(["--quiet", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

/// A finished command's standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Names of the files in `out` that start with `frame_`, sorted.
pub fn frame_files(out: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("frame_"))
        .collect();
    names.sort();
    names
}
