//! `cargo xtask lint`: the house rules of the workspace, checked on its files.
//!
//! - (a) [`words`]: no date, commit hash, issue number, paper-summary numbering or lab
//!   phrase in a README, `docs/` or any comment of a `.rs` file (tests included);
//! - (b) [`shape`]: no function over 80 lines outside tests, benches and examples unless a
//!   comment above it starts with `hot kernel:` and says why it stays whole;
//! - (c) [`shape`]: no `too_many_arguments` allowance outside tests, benches and examples;
//! - (d) [`cycles`]: no two files of a crate that import each other, directly or around a
//!   longer loop.
//!
//! Findings are printed as `path:line: message`, paths relative to the workspace; the exit
//! status is 1 when there is any. `target/`, `.git/` and other hidden directories are not
//! read, nor the top-level `assets/` (third-party inputs kept as their authors made them),
//! `bench-results/` and `out/`.

mod cycles;
mod lex;
mod shape;
mod words;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// One broken rule at a place.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    /// The file (relative to the checked root once reported).
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.path.display(), self.line, self.message)
    }
}

/// Runs `lint [--root DIR]` (default: the workspace root).
pub fn run(args: &[String]) -> Result<ExitCode, String> {
    let mut root = crate::suite::workspace_root();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--root" => root = PathBuf::from(it.next().ok_or("--root needs a directory")?),
            other => return Err(format!("unknown option `{other}` (try `cargo xtask help`)")),
        }
    }
    if !root.is_dir() {
        return Err(format!("{} is not a directory", root.display()));
    }
    let findings = check(&root);
    for f in &findings {
        println!("{f}");
    }
    if findings.is_empty() {
        eprintln!("lint: {} follows the house rules", root.display());
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("lint: {} finding(s)", findings.len());
        Ok(ExitCode::FAILURE)
    }
}

/// Every finding of the four rules under `root`, sorted by place.
pub fn check(root: &Path) -> Vec<Finding> {
    let files = walk(root);
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).to_path_buf();
    let mut findings = Vec::new();
    let mut candidates = BTreeSet::new();
    let w = words::Words::default();
    for path in &files {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let is_doc = name == "README.md" || (name.ends_with(".md") && in_docs(&rel(path)));
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        if is_doc {
            for (k, line) in text.lines().enumerate() {
                w.check_line((&rel(path), k + 1), line, &mut findings, &mut candidates);
            }
        } else if name.ends_with(".rs") {
            check_rust(&rel(path), &text, &w, &mut findings, &mut candidates);
        }
    }
    findings.extend(words::git_objects(root, &candidates));
    for krate in crate_roots(&files) {
        let c = cycles::Crate::load(&krate);
        findings.extend(c.errors.iter().cloned().map(|mut f| {
            f.path = rel(&f.path);
            f
        }));
        findings.extend(c.cycles(&rel));
    }
    findings.sort();
    findings.dedup();
    findings
}

/// Rules (a) to (c) on one Rust file.
fn check_rust(
    path: &Path,
    text: &str,
    w: &words::Words,
    findings: &mut Vec<Finding>,
    candidates: &mut BTreeSet<words::HashCandidate>,
) {
    let lines = lex::lines(text);
    for (k, line) in lines.iter().enumerate() {
        if !line.comment.is_empty() {
            w.check_line((path, k + 1), &line.comment, findings, candidates);
        }
    }
    if is_test_like(path) {
        return;
    }
    match syn::parse_file(text) {
        Ok(file) => shape::check_file(path, &file, &lines, findings),
        Err(e) => findings.push(Finding {
            path: path.to_path_buf(),
            line: e.span().start().line,
            message: format!("cannot parse: {e}"),
        }),
    }
}

/// Whether `rel` lies in a `docs` directory.
fn in_docs(rel: &Path) -> bool {
    rel.components().any(|c| c.as_os_str() == "docs")
}

/// Whether `rel` is test, bench, example or fuzzing code (rules (b) and (c) do not apply).
pub fn is_test_like(rel: &Path) -> bool {
    rel.components().any(|c| {
        matches!(
            c.as_os_str().to_str(),
            Some("tests" | "benches" | "examples" | "fuzz")
        )
    })
}

/// Top-level directories that hold no text of the project's own: build and run outputs, and
/// `assets/`, whose third-party inputs are kept byte for byte as their authors made them.
const SKIPPED_TOP: [&str; 3] = ["assets", "bench-results", "out"];

/// The `.rs` and `.md` files under `root`, sorted, without `target`, hidden directories and
/// the [`SKIPPED_TOP`] directories.
fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let top = dir == root && SKIPPED_TOP.contains(&name.as_ref());
            if name.starts_with('.') || name == "target" || top {
                continue;
            }
            if path.is_dir() {
                dirs.push(path);
            } else if name.ends_with(".rs") || name.ends_with(".md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The crate root files (`src/lib.rs`, `src/main.rs`, `src/bin/*.rs`) of every package among
/// `files`.
fn crate_roots(files: &[PathBuf]) -> Vec<PathBuf> {
    let package = |src: &Path| src.ends_with("src") && src.with_file_name("Cargo.toml").is_file();
    files
        .iter()
        .filter(|p| {
            let Some(dir) = p.parent() else {
                return false;
            };
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let root = package(dir) && matches!(name, "lib.rs" | "main.rs");
            let bin = dir.ends_with("bin") && dir.parent().is_some_and(package);
            root || bin
        })
        .cloned()
        .collect()
}
