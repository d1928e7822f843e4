//! `cloth batch`: a manifest expands into resolved, checked task scenes; bad manifests are
//! refused before anything is written, in one line naming the task and the key; a local run
//! with a pool of processes gives each task exactly the bytes of `cloth run` on its task file;
//! finished tasks are skipped and interrupted ones rerun; collect gathers one table.
//! (The Slurm end-to-end test is .ci/slurm/batch_test.sh.)

mod common;

use common::{cloth_cmd, temp_dir};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn cloth(args: &[&str]) -> Output {
    cloth_cmd().args(args).output().unwrap()
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "status {:?}\nstdout: {}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A tiny sheet pinned at two corners: the base of the wedges below.
const BASE: &str = r#"
[run]
frames = 4
[cloth]
mesh = { kind = "grid", nx = 6, ny = 6, width = 0.3, height = 0.3 }
position = [0, 1, 0]
material = "cotton"
[[pin]]
vertices = [0, 5]
[[collider]]
shape = "plane"
position = [0, 0.5, 0]
"#;

/// A wedge: 4 materials x 6 largest step sizes = 24 tasks.
const WEDGE: &str = r#"
base = "scenes/base.toml"
name = "{cloth.material}-h{solver.h_max}"
[[axis]]
key = "cloth.material"
values = ["cotton", "silk", "denim", "wool"]
[[axis]]
key = "solver.h_max"
values = [0.0333, 0.02, 0.0125, 0.01, 0.005, 0.0025]
"#;

/// Writes the base scene and a manifest into `dir`; returns the manifest path.
fn setup(dir: &Path, manifest: &str) -> PathBuf {
    std::fs::create_dir_all(dir.join("scenes")).unwrap();
    std::fs::write(dir.join("scenes/base.toml"), BASE).unwrap();
    let m = dir.join("batch.toml");
    std::fs::write(&m, manifest).unwrap();
    m
}

fn plan(dir: &Path, manifest: &str) -> PathBuf {
    let m = setup(dir, manifest);
    let out = dir.join("b");
    ok(&cloth(&["batch", "plan", s(&m), "--out", s(&out)]));
    out
}

fn table(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("tasks.json")).unwrap()).unwrap()
}

/// Every file of a run folder that `cloth run` writes deterministically (frames), by name.
fn frames(run: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(run)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".obj"))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

fn log_lines(out: &Path, i: usize, word: &str) -> usize {
    std::fs::read_to_string(out.join(format!("logs/{i:06}.log")))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some(word))
        .count()
}

#[test]
fn a_wedge_plans_one_resolved_checked_scene_per_combination_first_axis_slowest() {
    let dir = temp_dir("plan");
    let out = plan(&dir, WEDGE);
    let t = table(&out);
    let tasks = t["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 24);
    // Product order: the material changes every 6 tasks, the step every task.
    assert_eq!(tasks[0]["values"], serde_json::json!(["cotton", 0.0333]));
    assert_eq!(tasks[7]["values"], serde_json::json!(["silk", 0.02]));
    assert_eq!(tasks[23]["values"], serde_json::json!(["wool", 0.0025]));
    assert_eq!(tasks[7]["name"], "silk-h0.02");
    assert_eq!(tasks[7]["scene"], "tasks/000007.toml");
    assert_eq!(tasks[7]["output"], "runs/000007");
    assert_eq!(tasks[7]["estimate"]["vertices"], 36);
    assert_eq!(tasks[7]["estimate"]["frames"], 4);
    // 4 frames at 1/30 s in steps of at most 0.02 s: 2 steps a frame.
    assert_eq!(tasks[7]["estimate"]["min_steps"], 8);
    // The task file is the whole resolved scene: it loads from anywhere and says what it is.
    let text = std::fs::read_to_string(out.join("tasks/000007.toml")).unwrap();
    assert!(text.starts_with("# Task 7 of "), "{text}");
    assert!(text.contains("cloth.material = silk, solver.h_max = 0.02"));
    let scene: toml::Table = text.parse().unwrap();
    assert_eq!(scene["solver"]["h_max"].as_float(), Some(0.02));
    assert_eq!(scene["solver"]["cg_tolerance"].as_float(), Some(1e-3));
    assert_eq!(
        scene["cloth"]["material"]["bend_uv"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let elsewhere = cloth_cmd()
        .args(["check", s(&out.join("tasks/000007.toml"))])
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert!(ok(&elsewhere).contains("vertices   36"));
    // Planning again is a no-op; a different plan into the same directory is refused.
    let again = ok(&cloth(&[
        "batch",
        "plan",
        s(&dir.join("batch.toml")),
        "--out",
        s(&out),
    ]));
    assert!(again.contains("unchanged plan of 24 tasks"), "{again}");
    std::fs::write(dir.join("batch.toml"), WEDGE.replace("0.0025", "0.004")).unwrap();
    let o = cloth(&[
        "batch",
        "plan",
        s(&dir.join("batch.toml")),
        "--out",
        s(&out),
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("already holds a different plan"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A tetrahedron as OBJ, scaled by `k`.
fn tetra(k: f64) -> String {
    format!("v 0 0 0\nv {k} 0 0\nv 0 {k} 0\nv 0 0 {k}\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")
}

#[test]
fn zip_pairs_values_and_file_axes_become_absolute_paths_that_load_from_the_task_folder() {
    let dir = temp_dir("zip");
    std::fs::create_dir_all(dir.join("bodies")).unwrap();
    std::fs::write(dir.join("bodies/b.obj"), tetra(0.2)).unwrap();
    std::fs::write(dir.join("bodies/a.obj"), tetra(0.1)).unwrap();
    std::fs::write(dir.join("bodies/notes.txt"), "").unwrap();
    std::fs::create_dir_all(dir.join("scenes")).unwrap();
    std::fs::write(
        dir.join("scenes/body.obj"),
        tetra(0.3), // the base's own collider, relative to the base scene
    )
    .unwrap();
    let base = BASE.replace("shape = \"plane\"", "shape = \"obj\"\npath = \"body.obj\"");
    let m = setup(
        &dir,
        r#"
base = "scenes/base.toml"
combine = "zip"
frames = 2
name = "{collider[0].path}-{cloth.material.bend}"
[[axis]]
key = "collider[0].path"
files = "bodies/*.obj"
[[axis]]
key = "cloth.material.bend"
values = [1e-6, 2e-6]
"#,
    );
    std::fs::write(dir.join("scenes/base.toml"), base).unwrap();
    let out = dir.join("b");
    ok(&cloth(&["batch", "plan", s(&m), "--out", s(&out)]));
    let t = table(&out);
    let tasks = t["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 2);
    assert_eq!(tasks[0]["name"], "a-0.000001");
    assert_eq!(tasks[1]["name"], "b-0.000002");
    assert_eq!(t["axes"][0]["files"], "bodies/*.obj");
    let text = std::fs::read_to_string(out.join("tasks/000001.toml")).unwrap();
    let scene: toml::Table = text.parse().unwrap();
    let body = scene["collider"][0]["path"].as_str().unwrap();
    assert!(Path::new(body).is_absolute(), "{body}");
    assert!(body.ends_with("bodies/b.obj"), "{body}");
    assert_eq!(scene["run"]["frames"].as_integer(), Some(2));
    // Setting a key inside a preset material keeps the preset's other values.
    assert_eq!(scene["cloth"]["material"]["bend"].as_float(), Some(2e-6));
    ok(&cloth(&["check", s(&out.join("tasks/000001.toml"))]));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_manifests_are_refused_in_one_line_naming_the_task_and_the_key_before_anything_is_written() {
    let axis = |key: &str, values: &str| {
        format!("base = \"scenes/base.toml\"\n[[axis]]\nkey = \"{key}\"\nvalues = {values}\n")
    };
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "unknown key path",
            axis("cloth.material.bendd", "[1e-6]"),
            vec!["task 0", "cloth.material.bendd", "unknown field `bendd`"],
        ),
        (
            "unknown top-level table",
            axis("solvr.h_max", "[0.01]"),
            vec!["task 0", "solvr", "unknown field"],
        ),
        (
            "empty axis",
            axis("solver.h_max", "[]"),
            vec!["axis[0].values", "is empty", "solver.h_max"],
        ),
        (
            "value of the wrong type",
            axis("solver.h_max", "[0.01, \"fast\"]"),
            vec!["task 1", "solver.h_max = fast", "scene key `solver.h_max`", "invalid type"],
        ),
        (
            "a task that fails check (h_max above one frame)",
            axis("solver.h_max", "[0.01, 0.02, 0.5, 0.6]"),
            vec!["task 2", "solver.h_max = 0.5", "scene key `solver.h_max`", "and 1 more task fails"],
        ),
        (
            "a task that fails to build (a pin region holding no vertex)",
            axis("pin[0]", "[{ vertices = [0, 5] }, { region = { min = [5, 5, 5], max = [6, 6, 6] } }]"),
            vec!["task 1", "pin[0].region", "selects no cloth vertex"],
        ),
        (
            "an array entry the base does not have",
            axis("collider[1].friction", "[0.1]"),
            vec!["task 0", "collider[1].friction", "`collider` has 1 entry"],
        ),
        (
            "a malformed key path",
            axis("solver..h_max", "[0.1]"),
            vec!["axis[0].key", "not a key path"],
        ),
        (
            "zip of unequal axes",
            "base = \"scenes/base.toml\"\ncombine = \"zip\"\n[[axis]]\nkey = \"solver.h_max\"\nvalues = [0.01, 0.02]\n[[axis]]\nkey = \"cloth.material\"\nvalues = [\"silk\"]\n".into(),
            vec!["`combine`", "equal length", "axis[1] (`cloth.material`) has 1"],
        ),
        (
            "files matching nothing",
            "base = \"scenes/base.toml\"\n[[axis]]\nkey = \"collider[0].path\"\nfiles = \"nowhere/*.obj\"\n".into(),
            vec!["axis[0].files", "matches no file"],
        ),
        (
            "values and files both",
            "base = \"scenes/base.toml\"\n[[axis]]\nkey = \"x.path\"\nfiles = \"*.obj\"\nvalues = [1]\n".into(),
            vec!["axis[0]", "exactly one of `values` and `files`"],
        ),
        (
            "unknown manifest key",
            "base = \"scenes/base.toml\"\nframs = 3\n".into(),
            vec!["unknown field `frams`", "line 2"],
        ),
        (
            "a name placeholder that is not swept",
            format!("name = \"{{solver.h_min}}\"\n{}", axis("solver.h_max", "[0.01]")),
            vec!["`name`", "{solver.h_min}", "neither"],
        ),
    ];
    let dir = temp_dir("bad");
    for (what, manifest, needles) in cases {
        let m = setup(&dir, &manifest);
        let out = dir.join("b");
        let o = cloth(&["batch", "plan", s(&m), "--out", s(&out)]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{what}: accepted");
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{what}: not one line: {err}"
        );
        for n in needles {
            assert!(err.contains(n), "{what}: `{n}` missing in: {err}");
        }
        assert!(
            !out.join("tasks.json").exists() && !out.join("tasks").exists(),
            "{what}: files written"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_local_run_with_two_jobs_gives_every_task_the_bytes_of_cloth_run_and_collects() {
    let dir = temp_dir("local");
    let out = plan(&dir, WEDGE);
    let stdout = ok(&cloth(&["batch", "run", s(&out), "--jobs", "2"]));
    assert!(
        stdout.contains("24 to run (2 jobs x 1 threads)"),
        "{stdout}"
    );
    assert!(stdout.contains("ran 24 tasks"), "{stdout}");
    let status = ok(&cloth(&["batch", "status", s(&out)]));
    assert!(status.contains("done             24"), "{status}");
    // The pool's output is `cloth run` of the task file, byte for byte (any thread count).
    for i in [0, 7, 23] {
        let direct = dir.join(format!("direct{i}"));
        ok(&cloth(&[
            "run",
            s(&out.join(format!("tasks/{i:06}.toml"))),
            "--out",
            s(&direct),
            "--quiet",
            "--threads",
            "2",
        ]));
        let run = out.join(format!("runs/{i:06}"));
        assert_eq!(frames(&run).len(), 5);
        assert_eq!(frames(&run), frames(&direct), "task {i}");
        assert_eq!(log_lines(&out, i, "end"), 1);
    }
    // Running again finds nothing to do and touches nothing.
    let again = ok(&cloth(&["batch", "run", s(&out), "--jobs", "2"]));
    assert!(again.contains("0 to run"), "{again}");
    let before = frames(&out.join("runs/000005"));
    let skip = ok(&cloth(&["batch", "task", s(&out), "5"]));
    assert!(skip.is_empty());
    assert_eq!(log_lines(&out, 5, "skip"), 1);
    assert_eq!(frames(&out.join("runs/000005")), before);

    let summary = ok(&cloth(&["batch", "collect", s(&out)]));
    assert!(summary.contains("24 tasks: 24 done"), "{summary}");
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 25);
    assert!(lines[0].starts_with("index,name,cloth.material,solver.h_max,state,"));
    assert!(
        lines[8].starts_with("7,silk-h0.02,silk,0.02,done,4,4,36,"),
        "{}",
        lines[8]
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(json["tasks"].as_array().unwrap().len(), 24);
    assert!(json["tasks"][3]["steps"].as_u64().unwrap() >= 4);
    let summary_txt = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    assert_eq!(summary_txt.lines().count(), 25);
    assert!(!summary_txt.contains("seconds"));
    let png = std::fs::read(out.join("contact_sheet.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    // 6 columns (the last axis) x 4 rows of 160x120 tiles with 2 px gaps and a 4 px strip.
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert_eq!((width, height), (6 * 162 + 2, 4 * 126 + 2));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn interrupted_tasks_are_rerun_failed_ones_only_when_asked_and_done_ones_never() {
    let dir = temp_dir("resume");
    let out = plan(
        &dir,
        &WEDGE.replace("\"silk\", \"denim\", \"wool\"", "\"silk\""),
    );
    ok(&cloth(&["batch", "run", s(&out), "--jobs", "2"]));
    let reference: Vec<_> = (0..12)
        .map(|i| frames(&out.join(format!("runs/{i:06}"))))
        .collect();
    // Task 3 killed before its end (no complete stats.json, some frames); task 4 killed before
    // its first report; task 5 failed in the simulation; task 6 never started.
    let stats3 = out.join("runs/000003/stats.json");
    let text = std::fs::read_to_string(&stats3).unwrap();
    std::fs::write(
        &stats3,
        text.replace("\"complete\": true", "\"complete\": false"),
    )
    .unwrap();
    std::fs::remove_file(out.join("runs/000003/frame_0004.obj")).unwrap();
    std::fs::remove_file(out.join("runs/000004/stats.json")).unwrap();
    let stats5 = out.join("runs/000005/stats.json");
    let text = std::fs::read_to_string(&stats5).unwrap();
    std::fs::write(
        &stats5,
        text.replace("\"complete\": true", "\"complete\": false")
            .replace(
                "\"error\": null",
                "\"error\": \"step size below h_min at frame 3\"",
            ),
    )
    .unwrap();
    std::fs::remove_dir_all(out.join("runs/000006")).unwrap();
    let status = ok(&cloth(&["batch", "status", s(&out)]));
    assert!(status.contains("done              8"), "{status}");
    assert!(status.contains("failed            1  5"), "{status}");
    assert!(status.contains("interrupted       2  3-4"), "{status}");
    assert!(status.contains("pending           1  6"), "{status}");
    assert!(
        status.contains("task 5 failed: step size below h_min"),
        "{status}"
    );

    let stdout = ok(&cloth(&["batch", "run", s(&out), "--jobs", "2"]));
    assert!(stdout.contains("3 to run"), "{stdout}");
    let o = cloth(&["batch", "slurm", s(&out)]);
    assert!(ok(&o).contains("nothing to submit"));
    ok(&cloth(&["batch", "run", s(&out), "--retry-failed"]));
    for (i, r) in reference.iter().enumerate() {
        assert_eq!(&frames(&out.join(format!("runs/{i:06}"))), r, "task {i}");
        let ends = log_lines(&out, i, "end");
        assert_eq!(ends, if (3..=6).contains(&i) { 2 } else { 1 }, "task {i}");
    }
    assert!(ok(&cloth(&["batch", "status", s(&out)])).contains("done             12"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_slurm_script_holds_the_unfinished_tasks_and_resources_from_the_estimates() {
    let dir = temp_dir("slurm");
    let out = plan(&dir, WEDGE);
    ok(&cloth(&["batch", "task", s(&out), "2"]));
    ok(&cloth(&["batch", "task", s(&out), "3"]));
    let stdout = ok(&cloth(&[
        "batch",
        "slurm",
        s(&out),
        "--partition",
        "short",
        "--array-limit",
        "4",
        "--max-array-size",
        "10",
        "--sbatch-option=--account=cloth",
    ]));
    assert!(
        stdout.contains("wrote 3 script(s) for 22 unfinished tasks"),
        "{stdout}"
    );
    let first = std::fs::read_to_string(out.join("slurm/array_000000.sbatch")).unwrap();
    assert!(first.starts_with("#!/bin/bash\n"));
    for line in [
        "#SBATCH --array=0-1,4-9%4",
        "#SBATCH --partition=short",
        "#SBATCH --cpus-per-task=1",
        "#SBATCH --time=00:02:00",
        "#SBATCH --mem=128M",
        "#SBATCH --account=cloth",
        "CLOTH_BATCH_OFFSET=0",
    ] {
        assert!(first.contains(line), "{line} missing:\n{first}");
    }
    let name = first
        .lines()
        .find_map(|l| l.strip_prefix("#SBATCH --job-name="))
        .unwrap();
    assert!(name.starts_with("cloth-batch-"));
    assert!(first.contains(&format!(
        "batch task '{}' \"$(( CLOTH_BATCH_OFFSET + SLURM_ARRAY_TASK_ID ))\"",
        std::fs::canonicalize(&out).unwrap().display()
    )));
    let third = std::fs::read_to_string(out.join("slurm/array_000020.sbatch")).unwrap();
    assert!(third.contains("#SBATCH --array=0-3%4"));
    assert!(third.contains("CLOTH_BATCH_OFFSET=20"));
    // Explicit resources win; the script is valid bash.
    ok(&cloth(&[
        "batch",
        "slurm",
        s(&out),
        "--time",
        "1:00:00",
        "--mem",
        "2G",
    ]));
    let script = std::fs::read_to_string(out.join("slurm/array_000000.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --time=1:00:00\n"));
    assert!(script.contains("#SBATCH --mem=2G"));
    assert!(script.contains("#SBATCH --array=0-1,4-23\n"));
    let syntax = Command::new("bash")
        .args(["-n", s(&out.join("slurm/array_000000.sbatch"))])
        .status()
        .unwrap();
    assert!(syntax.success());
    let _ = std::fs::remove_dir_all(&dir);
}
