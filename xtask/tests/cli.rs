//! The `xtask` command line as a user meets it: help, and the refusals of a wrong task, a wrong
//! option and a malformed case (each named in the message, exit status 2, nothing run).
//!
//! Being an integration test, this also makes `cargo test --workspace --release` build the
//! `xtask` binary itself (`target/release/xtask`), which `.ci/run` then runs for the quick
//! bench instead of building it a second time through `cargo xtask`.

use std::process::{Command, Output};

fn xtask(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .output()
        .expect("the xtask binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn help_lists_the_tasks_and_the_bench_options() {
    for args in [&["help"][..], &["--help"], &[]] {
        let o = xtask(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        for word in ["bench", "mannequin", "--quick", "--filter", "--repeat"] {
            assert!(text.contains(word), "{args:?}: no `{word}` in\n{text}");
        }
    }
}

#[test]
fn an_unknown_task_is_refused_by_name() {
    let o = xtask(&["benhc"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("`benhc`"), "{}", stderr(&o));
}

#[test]
fn an_unknown_bench_option_is_refused_by_name_before_anything_runs() {
    let out = std::env::temp_dir().join(format!("xtask-cli-{}", std::process::id()));
    let o = xtask(&[
        "bench",
        "--quick",
        "--fitler",
        "fig1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("`--fitler`"), "{}", stderr(&o));
    assert!(!out.exists(), "a refused run wrote {}", out.display());
}

#[test]
fn a_malformed_case_is_refused() {
    let o = xtask(&["bench-case", "{\"name\": 3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("bad case description"),
        "{}",
        stderr(&o)
    );
}
