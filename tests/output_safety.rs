//! A run's output cannot be lost or wrongly marked complete: the lock holds across PID
//! namespaces, hosts and boots; `complete` means every requested output is written; a resume
//! removes the temporary files of interrupted writes; a signal stops a garment's preroll at
//! once.

mod common;

use common::{cloth_cmd, frame_files, run, sheet_scene, stderr, temp_dir};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

fn stats(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap()
}

/// Every frame 0..=n is there, and nothing else, and stats.json is complete with n frames.
fn assert_whole_run(out: &Path, n: usize) {
    let expected: Vec<String> = (0..=n).map(|k| format!("frame_{k:04}.obj")).collect();
    assert_eq!(frame_files(out), expected, "{}", out.display());
    let s = stats(out);
    assert_eq!(s["complete"], true, "{s}");
    assert_eq!(s["frames"].as_array().unwrap().len(), n);
}

fn wait_for(path: &Path, child: &mut std::process::Child) {
    let t0 = Instant::now();
    while !path.exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the first run ended before writing {}",
            path.display()
        );
        assert!(t0.elapsed() < Duration::from_secs(120), "never wrote");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn this_boot() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// Whether this process may make PID namespaces (`unshare`, as root).
fn can_unshare() -> bool {
    Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `cloth ARGS` in a PID namespace of its own (its `/proc` shows only that namespace, so the
/// other run's PID means nothing there), started by a shell after `before` short-lived
/// processes, so that the two runs have different PIDs in their namespaces (the second's own
/// PID equal to the lock's would hide the question).
fn cloth_in_namespace(before: usize, args: &[&str]) -> Command {
    let mut c = Command::new("unshare");
    c.args([
        "--pid",
        "--fork",
        "--mount-proc",
        "--kill-child",
        "sh",
        "-c",
    ])
    .arg(format!(
        "{}\"$0\" \"$@\"; exit $?",
        "true & wait; ".repeat(before)
    ))
    .arg(env!("CARGO_BIN_EXE_cloth"))
    .args(args);
    c
}

/// Two real PID namespaces (root only; without the privilege the test says so and passes on
/// the lock rules alone, which the next test checks with planted locks): a second run into
/// the folder of a live run from another namespace is refused, and the first run's frames
/// come out whole.
#[test]
fn a_run_from_another_pid_namespace_is_refused_and_the_first_keeps_its_frames() {
    if !can_unshare() {
        eprintln!("skipped: cannot make PID namespaces here (needs root and unshare)");
        return;
    }
    let dir = temp_dir("pidns");
    let out = dir.join("out");
    let frames = 100;
    let long = sheet_scene(&dir, 41, frames);
    let mut first = cloth_in_namespace(0, &["run", long.to_str().unwrap(), "--quiet", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&out.join("frame_0001.obj"), &mut first);
    let lock = std::fs::read_to_string(out.join(".cloth-run.lock")).unwrap();
    let holder: serde_json::Value = serde_json::from_str(&lock).unwrap();
    assert_eq!(holder["boot_id"], this_boot());
    assert_eq!(
        holder["pid"], 2,
        "the shell is PID 1 of the first namespace, cloth 2"
    );
    let short = sheet_scene(&dir, 6, 2);
    let second = cloth_in_namespace(3, &["run", short.to_str().unwrap(), "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        !second.status.success(),
        "the second run took the folder over"
    );
    assert!(
        stderr(&second).contains("in use by another run"),
        "{}",
        stderr(&second)
    );
    assert!(
        first.try_wait().unwrap().is_none(),
        "the first run still runs"
    );
    // Nor from this test's own namespace, where a process with the first run's PID may exist.
    let third = run(&short, &out, &[]);
    assert!(!third.status.success(), "{}", stderr(&third));
    let status = first.wait().unwrap();
    assert!(status.success(), "the first run ends normally");
    assert_whole_run(&out, frames);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A lock file as a run on another machine (or boot, or PID namespace) writes it.
fn plant_lock(out: &Path, boot: &str, age: Duration) {
    std::fs::create_dir_all(out).unwrap();
    let started = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let text = format!(
        "{{\"pid\":{},\"host\":\"another-node\",\"boot_id\":\"{boot}\",\"pid_ns\":\"pid:[1]\",\"started\":{started}}}\n",
        std::process::id()
    );
    let lock = out.join(".cloth-run.lock");
    std::fs::write(&lock, text).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&lock).unwrap();
    f.set_modified(SystemTime::now() - age).unwrap();
}

/// A lock of another host and boot is held while it is fresh, whatever PIDs exist here (its
/// PID is this test's own, alive); it is stale once not touched for ten minutes; `--force`
/// takes a held one over.
#[test]
fn a_lock_from_another_host_holds_while_fresh_and_force_takes_it_over() {
    let dir = temp_dir("foreign-lock");
    let out = dir.join("out");
    let scene = sheet_scene(&dir, 6, 3);
    let o = run(&scene, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before: Vec<Vec<u8>> = frame_files(&out)
        .iter()
        .map(|f| std::fs::read(out.join(f)).unwrap())
        .collect();

    plant_lock(&out, "11111111-2222-3333-4444-555555555555", Duration::ZERO);
    let o = run(&sheet_scene(&dir, 6, 1), &out, &[]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("in use by another run"), "{err}");
    assert!(
        err.contains("another-node") && err.contains("--force"),
        "{err}"
    );
    let after: Vec<Vec<u8>> = frame_files(&out)
        .iter()
        .map(|f| std::fs::read(out.join(f)).unwrap())
        .collect();
    assert_eq!(before, after, "the refused run touched no frame");
    let o = cloth_cmd()
        .args(["run", "--quiet", "--resume"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!o.status.success(), "a resume is refused too");

    // Eleven minutes without a touch: the holder is gone, the lock is taken over.
    plant_lock(
        &out,
        "11111111-2222-3333-4444-555555555555",
        Duration::from_secs(660),
    );
    let o = run(&scene, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("took over the lock"), "{}", stderr(&o));
    assert_whole_run(&out, 3);

    plant_lock(&out, "11111111-2222-3333-4444-555555555555", Duration::ZERO);
    let o = run(&scene, &out, &["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_whole_run(&out, 3);
    assert!(!out.join(".cloth-run.lock").exists(), "released at the end");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--force` on a live run's folder: the live run notices at its next frame and stops without
/// writing anything more; the forcing run completes.
#[test]
fn a_run_whose_folder_is_taken_over_stops_and_leaves_the_new_run_whole() {
    let dir = temp_dir("force-live");
    let out = dir.join("out");
    let mut first = cloth_cmd()
        .arg("run")
        .arg(sheet_scene(&dir, 41, 2000))
        .args(["--quiet", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&out.join("frame_0002.obj"), &mut first);
    let o = run(&sheet_scene(&dir, 6, 3), &out, &["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let first = first.wait_with_output().unwrap();
    assert!(!first.status.success());
    assert!(stderr(&first).contains("took this output directory over"));
    let s = stats(&out);
    assert_eq!(s["complete"], true, "{s}");
    assert_eq!(s["vertices"], 36, "stats.json is the second run's");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The USD export fails (its path is a directory): the run exits 1, stats.json says
/// `complete: false` with the error and that it was an output, and the frames stay.
#[test]
fn a_failed_usd_export_leaves_the_run_incomplete_with_its_error() {
    let dir = temp_dir("usd-fails");
    let out = dir.join("out");
    std::fs::create_dir_all(out.join("animation.usda")).unwrap();
    let o = run(&sheet_scene(&dir, 6, 4), &out, &["--format", "usd"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("animation.usda"), "{}", stderr(&o));
    let s = stats(&out);
    assert_eq!(s["complete"], false, "{s}");
    assert!(
        s["error"].as_str().unwrap().contains("animation.usda"),
        "{s}"
    );
    assert_eq!(s["output_error"], true, "{s}");
    assert_eq!(frame_files(&out).len(), 5, "the frames stay for a rerun");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A disk that fills up during the USD export (a 1.5 MB tmpfs in a mount namespace of its
/// own; root only, like the namespace test): the same as above, with the real error.
#[test]
fn a_full_disk_during_the_usd_export_leaves_the_run_incomplete() {
    if !can_unshare() {
        eprintln!("skipped: cannot mount a tmpfs here (needs root and unshare)");
        return;
    }
    let dir = temp_dir("usd-full");
    let scene = sheet_scene(&dir, 25, 8);
    let disk = dir.join("disk");
    std::fs::create_dir_all(&disk).unwrap();
    let kept = dir.join("kept");
    // The 9 frames of 625 vertices (about 1.25 MB) and stats.json fit; the USD of all of them
    // (about 0.4 MB more) does not.
    let script = format!(
        "mount -t tmpfs -o size=1500k tmpfs '{d}' && \
         '{exe}' run '{scene}' --quiet --format usd --checkpoint-every 0 --out '{d}/out'; \
         code=$?; mkdir -p '{k}'; cp -r '{d}/out/.' '{k}/'; df -k '{d}' >&2; exit $code",
        d = disk.display(),
        exe = env!("CARGO_BIN_EXE_cloth"),
        scene = scene.display(),
        k = kept.display()
    );
    let o = Command::new("unshare")
        .args(["--mount", "sh", "-c", &script])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("No space left"), "{}", stderr(&o));
    let s = stats(&kept);
    assert_eq!(s["complete"], false, "{s}");
    assert_eq!(s["output_error"], true, "{s}");
    assert!(
        s["error"].as_str().unwrap().contains("animation.usda"),
        "{s}"
    );
    assert_eq!(frame_files(&kept).len(), 9);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A resume removes the temporary files of the writes the interrupted run did not finish,
/// and no other file.
#[test]
fn a_resume_removes_the_temporary_files_of_interrupted_writes() {
    let dir = temp_dir("resume-tmp");
    let out = dir.join("out");
    let o = run(&sheet_scene(&dir, 6, 6), &out, &["--checkpoint-every", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stale = [
        ".frame_0049.obj.17897.tmp",
        ".frame_0005.obj.3.tmp",
        ".stats.json.17897.tmp",
        ".checkpoint.json.42.tmp",
        ".animation.usda.9.tmp",
    ];
    for name in stale {
        std::fs::write(out.join(name), "half written").unwrap();
    }
    std::fs::write(out.join(".notes.tmp"), "mine").unwrap();
    let o = cloth_cmd()
        .args(["run", "--quiet", "--resume"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for name in stale {
        assert!(!out.join(name).exists(), "{name} is left");
    }
    assert!(out.join(".notes.tmp").exists(), "not a run's file");
    assert_whole_run(&out, 6);
    let _ = std::fs::remove_dir_all(&dir);
}

/// SIGTERM one second into a garment's preroll (the skirt sewing onto the dancing mannequin,
/// and the trousers sewn on a coarse copy first) ends the run within two seconds, with a
/// stats.json that says it is incomplete.
#[test]
fn sigterm_during_a_garment_preroll_stops_within_two_seconds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = temp_dir("preroll-term");
    // Release builds; an unoptimised binary is given more time for its one step.
    let limit = Duration::from_secs(if cfg!(debug_assertions) { 10 } else { 2 });
    for scene in ["dancer_skirt", "trousers_walk"] {
        let out = dir.join(scene);
        let mut child = cloth_cmd()
            .arg("run")
            .arg(root.join("scenes").join(format!("{scene}.toml")))
            .args(["--quiet", "--threads", "1", "--out"])
            .arg(&out)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_secs(1));
        assert!(child.try_wait().unwrap().is_none(), "{scene} still runs");
        let sent = Instant::now();
        let ok = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(
                sent.elapsed() < limit + Duration::from_secs(60),
                "{scene} ignores SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(5));
        };
        let latency = sent.elapsed();
        eprintln!("{scene}: exited {latency:?} after SIGTERM");
        assert!(latency < limit, "{scene}: {latency:?}");
        assert_eq!(status.code(), Some(130), "{scene}");
        let s = stats(&out);
        assert_eq!(s["complete"], false, "{s}");
        assert_eq!(s["error"], "interrupted", "{s}");
        assert!(s["frames"].as_array().unwrap().is_empty());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A batch task whose output could not be written (its third frame's path is a directory, as
/// a full disk would refuse it) is not a failed simulation: `cloth batch` counts it
/// interrupted and reruns it without `--retry-failed`.
#[test]
fn cloth_batch_reruns_a_task_whose_output_could_not_be_written() {
    let dir = temp_dir("batch-output");
    std::fs::write(
        dir.join("base.toml"),
        "[run]\nframes = 4\n[cloth]\nmesh = { kind = \"grid\", nx = 5, ny = 5, width = 0.3, height = 0.3 }\n\
         material = \"cotton\"\n[[pin]]\nvertices = [0, 4]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("batch.toml"),
        "base = \"base.toml\"\n[[axis]]\nkey = \"cloth.material\"\nvalues = [\"cotton\", \"silk\"]\n",
    )
    .unwrap();
    let b = dir.join("b");
    let cloth = |args: &[&str]| cloth_cmd().args(args).output().unwrap();
    let manifest = dir.join("batch.toml");
    let o = cloth(&[
        "batch",
        "plan",
        manifest.to_str().unwrap(),
        "--out",
        b.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let blocked = b.join("runs/000001/frame_0003.obj");
    std::fs::create_dir_all(&blocked).unwrap();
    let o = cloth(&["batch", "run", b.to_str().unwrap()]);
    assert!(!o.status.success(), "task 1 cannot write its frame 3");
    let s = stats(&b.join("runs/000001"));
    assert_eq!(s["output_error"], true, "{s}");
    let status = String::from_utf8_lossy(&cloth(&["batch", "status", b.to_str().unwrap()]).stdout)
        .into_owned();
    assert!(status.contains("interrupted       1  1"), "{status}");
    std::fs::remove_dir(&blocked).unwrap();
    let o = cloth(&["batch", "run", b.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 to run"));
    assert_whole_run(&b.join("runs/000001"), 4);
    let _ = std::fs::remove_dir_all(&dir);
}
