//! What the numbers were measured on: commit, build profile, CPU, threads, date.

use serde::Serialize;
use std::process::Command;

/// Facts about the run that every report states.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// `git rev-parse HEAD` (`unknown` without git), with ` (modified)` when the work tree
    /// has uncommitted changes.
    pub commit: String,
    /// Build profile of the benchmark binary (`release` or `debug`).
    pub profile: String,
    /// CPU model from `/proc/cpuinfo` (`unknown` if unreadable).
    pub cpu: String,
    /// Logical CPUs available to this process.
    pub cores: usize,
    /// Rayon threads per case (`--threads`).
    pub threads: usize,
    /// UTC date and time of the run (`date -u`), or `unknown`.
    pub date: String,
    /// The command that produced the report.
    pub command: String,
    /// `/proc/loadavg` (1, 5, 15 minutes) when the suite started, or `unknown`.
    pub load_before: String,
    /// `/proc/loadavg` when the suite ended (set by the caller), or `unknown`.
    pub load_after: String,
}

/// The three load averages of `/proc/loadavg`, or `unknown`.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

fn run(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// CPU model: the first `model name` line of `cpuinfo` text (`None` if absent).
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

impl Machine {
    /// Collects the facts; `threads` and `command` come from the caller.
    pub fn collect(threads: usize, command: String) -> Self {
        let root = crate::suite::workspace_root();
        let root = root.to_string_lossy();
        let commit = match run("git", &["-C", &root, "rev-parse", "HEAD"]) {
            Some(c) => {
                let dirty = run(
                    "git",
                    &["-C", &root, "status", "--porcelain", "--untracked-files=no"],
                )
                .is_some();
                if dirty { format!("{c} (modified)") } else { c }
            }
            None => "unknown".into(),
        };
        Machine {
            commit,
            profile: if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
            .into(),
            cpu: std::fs::read_to_string("/proc/cpuinfo")
                .ok()
                .and_then(|s| cpu_model(&s))
                .unwrap_or_else(|| "unknown".into()),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            threads,
            date: run("date", &["-u", "+%Y-%m-%d %H:%M UTC"]).unwrap_or_else(|| "unknown".into()),
            command,
            load_before: load_average(),
            load_after: "unknown".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_model_reads_first_model_name() {
        let text = "processor\t: 0\nvendor_id\t: X\nmodel name\t: AMD EPYC 7B13\nprocessor\t: 1\nmodel name\t: other\n";
        assert_eq!(cpu_model(text).as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(cpu_model("processor : 0\n"), None);
        assert_eq!(cpu_model("model name\t:   \n"), None);
    }
}
