//! The output directory of `cloth run` is something a frame-cache consumer can trust: every
//! frame has frame 0's vertex count and order, a rerun leaves only its own files, and a second
//! run into a directory that is being written is refused.

mod common;

use common::{cloth_cmd, frame_files, run, sheet_scene, temp_dir};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn a_rerun_with_fewer_frames_leaves_only_its_own_frames() {
    let dir = temp_dir("rerun");
    let out = dir.join("out");
    let o = run(&sheet_scene(&dir, 6, 6), &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(frame_files(&out).len(), 7);
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let o = run(&sheet_scene(&dir, 6, 2), &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        frame_files(&out),
        ["frame_0000.obj", "frame_0001.obj", "frame_0002.obj"]
    );
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["frames"].as_array().unwrap().len(), 2);
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine",
        "files the run did not write are left alone"
    );
    assert!(!out.join(".cloth-run.lock").exists(), "lock released");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_second_run_into_a_directory_in_use_is_refused_and_a_stale_lock_is_taken_over() {
    let dir = temp_dir("lock");
    let out = dir.join("out");
    // A run long enough to still be going when the second one starts.
    let mut first = cloth_cmd()
        .args([
            "run",
            sheet_scene(&dir, 41, 2000).to_str().unwrap(),
            "--quiet",
        ])
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lock = out.join(".cloth-run.lock");
    let t0 = Instant::now();
    while !out.join("frame_0001.obj").exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "first run never wrote"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(lock.exists());
    let second = run(&sheet_scene(&dir, 6, 2), &out, &[]);
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success());
    assert!(err.contains("in use by another run"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one-line error: {err}");
    assert!(
        out.join("frame_0001.obj").exists(),
        "the first run's frames are untouched"
    );
    // Killed without cleaning up, the first run leaves its lock behind: it is stale, and the
    // next run takes it over.
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(lock.exists());
    let third = run(&sheet_scene(&dir, 6, 2), &out, &[]);
    assert!(
        third.status.success(),
        "{}",
        String::from_utf8_lossy(&third.stderr)
    );
    assert_eq!(frame_files(&out).len(), 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_seamed_obj_cloth_writes_the_same_vertex_count_in_every_frame() {
    let dir = temp_dir("seam");
    // Two quads sharing the positional edge 2-5 but with their own UVs: split into panels
    // (`split_seams = true`), a seam whose copies coincide at frame 0 and part as the free
    // panel falls.
    let obj = "v 0 1 0\nv 1 1 0\nv 2 1 0\nv 0 1 1\nv 1 1 1\nv 2 1 1\n\
               vt 0 0\nvt 1 0\nvt 0 1\nvt 1 1\nvt 3 0\nvt 4 0\nvt 3 1\nvt 4 1\n\
               f 1/1 2/2 5/4 4/3\nf 2/5 3/6 6/8 5/7\n";
    std::fs::write(dir.join("seam.obj"), obj).unwrap();
    let scene = dir.join("seam.toml");
    std::fs::write(
        &scene,
        "[run]\nframes = 5\n[cloth]\nmesh = { kind = \"obj\", path = \"seam.obj\", split_seams = true }\n\
         [[pin]]\nregion = { min = [-0.1, 0.9, -0.1], max = [1.1, 1.1, 1.1] }\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = run(&scene, &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let vertices = |k: usize| -> Vec<String> {
        std::fs::read_to_string(out.join(format!("frame_{k:04}.obj")))
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("v "))
            .map(str::to_owned)
            .collect()
    };
    let first = vertices(0);
    assert_eq!(first.len(), 8, "every simulated vertex is written");
    for k in 1..=5 {
        assert_eq!(vertices(k).len(), first.len(), "frame {k}");
    }
    assert_ne!(vertices(5), first, "the free panel moved");
    let text = std::fs::read_to_string(out.join("frame_0005.obj")).unwrap();
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("o "))
            .collect::<Vec<_>>(),
        ["o cloth"],
        "the cloth is named"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn render_refuses_unknown_formats_numbers_pngs_by_frame_and_reads_a_usd_only_run() {
    let dir = temp_dir("render");
    let out = dir.join("out");
    let o = run(&sheet_scene(&dir, 6, 8), &out, &["--format", "usd"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        frame_files(&out).is_empty(),
        "a USD-only run keeps no OBJ frames"
    );
    assert!(out.join("animation.usda").is_file());
    let render = |extra: &[&str]| {
        cloth_cmd()
            .args(["render", out.to_str().unwrap(), "--size", "80x60"])
            .args(extra)
            .output()
            .unwrap()
    };
    let mp4 = dir.join("x.mp4");
    let o = render(&["--out", mp4.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(".mp4") && err.contains(".gif"), "{err}");
    assert!(!mp4.exists(), "nothing is created");
    let pngs = dir.join("pngs");
    let o = render(&["--out", pngs.to_str().unwrap(), "--every", "3"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut names: Vec<String> = std::fs::read_dir(&pngs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["frame_0000.png", "frame_0003.png", "frame_0006.png"]
    );
    let o = render(&[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("preview.gif").is_file());
    for bad in [["--view", "diagonal"], ["--size", "80by60"]] {
        let o = cloth_cmd()
            .args(["render", out.to_str().unwrap()])
            .args(bad)
            .output()
            .unwrap();
        assert!(!o.status.success());
        assert_eq!(String::from_utf8_lossy(&o.stderr).trim().lines().count(), 1);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `def Mesh` prims of a `.usda` text, with the number of points in the first time
/// sample of each, counted from the text: `(prim name, points)`.
fn usd_meshes(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line.trim().strip_prefix("def Mesh \"") else {
            continue;
        };
        let name = name.trim_end_matches('"').to_owned();
        let sample = lines
            .by_ref()
            .skip_while(|l| !l.contains("point3f[] points"))
            .nth(1)
            .unwrap_or_else(|| panic!("prim {name} has no points samples"));
        let (_, points) = sample.split_once(':').unwrap();
        out.push((name, points.matches('(').count()));
    }
    out
}

#[test]
fn two_cloths_give_two_usd_meshes_and_two_obj_groups() {
    let dir = temp_dir("two-cloths");
    let scene = dir.join("two.toml");
    std::fs::write(
        &scene,
        "[run]\nframes = 3\n\
         [[cloth]]\nname = \"lower\"\nposition = [0, 0.5, 0]\n\
         mesh = { kind = \"grid\", nx = 5, ny = 5, width = 0.6, height = 0.6 }\n\
         [[cloth]]\nname = \"upper cloth\"\nposition = [0, 0.8, 0]\n\
         mesh = { kind = \"grid\", nx = 3, ny = 4, width = 0.4, height = 0.4 }\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = run(&scene, &out, &["--format", "both"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(out.join("animation.usda")).unwrap();
    assert_eq!(
        usd_meshes(&text),
        [("lower".to_owned(), 25), ("upper_cloth".to_owned(), 12)],
        "one mesh prim per cloth, named after it"
    );
    assert!(text.contains("custom string cloth:name = \"upper cloth\""));
    // The OBJ frames of the same run read back with the two cloths, as does the stage.
    let anim = cloth::view::load_animation(&out).unwrap();
    assert_eq!(anim.len(), 4);
    let parts: Vec<(&str, std::ops::Range<usize>, std::ops::Range<usize>)> = anim
        .cloths
        .iter()
        .map(|c| (c.name.as_str(), c.vertices.clone(), c.triangles.clone()))
        .collect();
    assert_eq!(
        parts,
        [("lower", 0..25, 0..32), ("upper cloth", 25..37, 32..44)]
    );
    let usd = cloth::view::read_usd(out.join("animation.usda")).unwrap();
    assert_eq!(usd.cloths, anim.cloths);
    assert_eq!(usd.positions, anim.positions);
    assert_eq!(usd.triangles, anim.triangles);
    // Each cloth keeps its own texture coordinates (the OBJ writes equal ones once).
    let corner_uvs = |a: &cloth::view::Animation| -> Vec<[f64; 2]> {
        let corners = a.triangle_uvs.as_ref().expect("texture coordinates");
        corners.iter().flatten().map(|&i| a.uvs[i]).collect()
    };
    assert_eq!(corner_uvs(&usd), corner_uvs(&anim));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scene with a preroll has its preroll's record in stats.json, apart from the frames and
/// the totals; one without has none.
#[test]
fn stats_json_records_the_preroll_apart_from_the_frames() {
    let dir = temp_dir("preroll");
    let read = |out: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap()
    };
    let plain = sheet_scene(&dir, 6, 2);
    let out = dir.join("plain");
    let o = run(&plain, &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(read(&out).get("preroll").is_none());

    let text = std::fs::read_to_string(&plain)
        .unwrap()
        .replace("[run]\n", "[run]\npreroll = 0.2\n");
    let scene = dir.join("preroll.toml");
    std::fs::write(&scene, text).unwrap();
    let out = dir.join("preroll");
    let o = run(&scene, &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stats = read(&out);
    let pre = &stats["preroll"];
    assert_eq!(pre["frame"], 0);
    assert!(pre["time"].as_f64().unwrap().abs() < 1e-9, "{pre}");
    // 0.2 s at no more than the frame's 1/30 s a step.
    assert!(pre["steps"].as_u64().unwrap() >= 6, "{pre}");
    let frames = stats["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 2);
    let steps: u64 = frames.iter().map(|f| f["steps"].as_u64().unwrap()).sum();
    assert_eq!(stats["totals"]["steps"].as_u64().unwrap(), steps);
    let _ = std::fs::remove_dir_all(&dir);
}
