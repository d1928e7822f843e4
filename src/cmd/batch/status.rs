//! `cloth batch status`: the tasks counted by state ([`super::state`]), the failures' errors
//! and the batch's Slurm jobs still queued or running.

use super::slurm::live_jobs;
use super::state::{TaskState, states};
use super::{Plan, ranges};
use crate::cmd::print::outln;
use std::path::Path;
use std::process::ExitCode;

/// `cloth batch status DIR`.
pub fn status(dir: &Path) -> Result<ExitCode, String> {
    let plan = Plan::read(dir)?;
    let states = states(dir, &plan);
    outln!("{}: {} tasks", dir.display(), plan.tasks.len());
    for name in ["done", "failed", "running", "interrupted", "pending"] {
        let idx: Vec<usize> = (0..states.len())
            .filter(|&i| states[i].name() == name)
            .collect();
        if idx.is_empty() {
            continue;
        }
        let list = if name == "done" {
            String::new()
        } else {
            format!("  {}", ranges(&idx))
        };
        outln!("{name:<12}{:>7}{list}", idx.len());
    }
    for (i, s) in states.iter().enumerate() {
        if let TaskState::Failed(e) = s {
            outln!("task {i} failed: {e}");
        }
    }
    if let Some(jobs) = live_jobs(dir) {
        outln!("slurm       {jobs} job(s) of this batch queued or running");
    }
    Ok(ExitCode::SUCCESS)
}
