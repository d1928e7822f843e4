//! Helpers shared by the root integration tests (each file under `tests/` is a crate of its
//! own that declares `mod common;`).

use std::path::PathBuf;
use std::process::Command;

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
