//! `xtask lint`, the house rules, on small workspaces that break one rule each and on one
//! that keeps them all; and on this workspace itself.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lint(root: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["lint", "--root"])
        .arg(root)
        .output()
        .expect("the xtask binary runs")
}

/// A fresh workspace of one crate `pkg` with the given files (relative path, text).
fn workspace(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = std::env::temp_dir().join(format!("xtask-house-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let mut all = vec![
        ("pkg/Cargo.toml", "[package]\nname = \"pkg\"\n"),
        ("README.md", "# pkg\n\nA crate.\n"),
    ];
    all.extend_from_slice(files);
    for (path, text) in all {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    root
}

/// The findings printed (stdout lines) and whether the run failed.
fn findings(root: &Path) -> (Vec<String>, bool) {
    let o = lint(root);
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    let _ = std::fs::remove_dir_all(root);
    (out.lines().map(String::from).collect(), !o.status.success())
}

const GOOD_LIB: &str = "//! A crate.\n\nmod a;\nmod b;\n\npub use a::A;\npub use b::B;\n";

#[test]
fn a_workspace_that_keeps_the_rules_passes() {
    let root = workspace(
        "good",
        &[
            ("pkg/src/lib.rs", GOOD_LIB),
            ("pkg/src/a.rs", "/// The A.\npub struct A;\n"),
            (
                "pkg/src/b.rs",
                "use crate::A;\n\n/// Holds an [`A`].\npub struct B(pub A);\n",
            ),
            (
                "docs/guide.md",
                "# Guide\n\nRun it with 0x7f3a9c1 as the seed.\n",
            ),
        ],
    );
    let (f, failed) = findings(&root);
    assert!(f.is_empty() && !failed, "{f:?}");
}

#[test]
fn words_of_history_in_docs_and_comments_are_found() {
    let root = workspace(
        "words",
        &[
            (
                "pkg/src/lib.rs",
                "//! Fast since issue 12.\n\n/// Was 3x slower on 2026-01-02.\npub fn f() {}\n",
            ),
            (
                "docs/notes.md",
                "# Notes\n\nKnowl 3 says so; the hinge variant was tried.\n",
            ),
            (
                "pkg/tests/t.rs",
                "// not kept: see commit 43bebfb\n#[test]\nfn t() {}\n",
            ),
        ],
    );
    let (f, failed) = findings(&root);
    assert!(failed);
    let at: Vec<&str> = f.iter().map(|l| l.split(": ").next().unwrap()).collect();
    assert_eq!(
        at,
        [
            "docs/notes.md:3",
            "docs/notes.md:3",
            "pkg/src/lib.rs:1",
            "pkg/src/lib.rs:3",
            "pkg/tests/t.rs:1",
            "pkg/tests/t.rs:1",
        ],
        "{f:?}"
    );
}

#[test]
fn long_functions_and_argument_allowances_are_found_outside_tests() {
    let body: String = (0..85).map(|i| format!("    let _v{i} = {i};\n")).collect();
    let long = format!("/// Long.\npub fn long() {{\n{body}}}\n");
    let lib = format!(
        "//! A crate.\n\n#[allow(clippy::too_many_arguments)]\n/// Short.\npub fn short() {{}}\n\n{long}"
    );
    let hot =
        format!("//! Hot.\n\n// hot kernel: one pass, split it and the state is shared\n{long}");
    let root = workspace(
        "shape",
        &[
            ("pkg/src/lib.rs", &lib),
            ("pkg/src/bin/hot.rs", &hot),
            ("pkg/tests/long.rs", &long),
            ("pkg/benches/long.rs", &long),
        ],
    );
    let (f, failed) = findings(&root);
    assert!(failed);
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(
        f[0].starts_with("pkg/src/lib.rs:3: `too_many_arguments`"),
        "{f:?}"
    );
    assert!(
        f[1].starts_with("pkg/src/lib.rs:8: fn `long` is 87 lines"),
        "{f:?}"
    );
}

#[test]
fn files_that_import_each_other_are_found_through_re_exports_and_paths() {
    let root = workspace(
        "cycles",
        &[
            (
                "pkg/src/lib.rs",
                "//! A crate.\n\nmod a;\nmod b;\nmod c;\n\npub use a::A;\npub use b::B;\npub use c::C;\n",
            ),
            // a -> b through the root's re-export of B.
            (
                "pkg/src/a.rs",
                "use crate::B;\n\n/// A.\npub struct A(pub B);\n",
            ),
            // b -> c through a path in an attribute's string; c -> a through a `use` in a
            // function body.
            (
                "pkg/src/b.rs",
                "/// B.\n#[derive(serde::Serialize)]\npub struct B(#[serde(with = \"crate::c\")] pub u8);\n",
            ),
            (
                "pkg/src/c.rs",
                "/// C.\npub struct C;\n\nimpl C {\n    /// An A's size.\n    pub fn a(&self) -> usize {\n        use super::a::A;\n        std::mem::size_of::<A>()\n    }\n}\n",
            ),
        ],
    );
    let (f, failed) = findings(&root);
    assert!(failed);
    assert_eq!(
        f,
        [
            "pkg/src/a.rs:1: files import each other: pkg/src/a.rs -> pkg/src/b.rs -> pkg/src/c.rs -> pkg/src/a.rs"
        ],
    );
}

#[test]
fn imports_inside_tests_and_mod_declarations_are_not_cycles() {
    let root = workspace(
        "tests-only",
        &[
            (
                "pkg/src/lib.rs",
                "//! A crate.\n\nmod a;\nmod b;\n\npub use a::A;\n",
            ),
            (
                "pkg/src/a.rs",
                "use crate::b::helper;\n\n/// A.\npub struct A;\n\n/// Helped.\npub fn f() -> u8 {\n    helper()\n}\n",
            ),
            (
                "pkg/src/b.rs",
                "/// Helps.\npub fn helper() -> u8 {\n    1\n}\n\n#[cfg(test)]\nmod tests {\n    use crate::A;\n    #[test]\n    fn t() {\n        let _ = A;\n    }\n}\n",
            ),
        ],
    );
    let (f, failed) = findings(&root);
    assert!(f.is_empty() && !failed, "{f:?}");
}

/// The workspace itself keeps the rules: README, docs and comments in the present tense,
/// short functions, no argument-count allowances, no file loops.
#[test]
fn this_workspace_keeps_the_house_rules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let o = lint(root);
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
