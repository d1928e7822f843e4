//! What state a task is in, read from its run folder alone (no database, nothing kept by a
//! scheduler).
//!
//! - **done**: `stats.json` says `complete` with the planned frame count and the last frame is
//!   there. `cloth run` writes that report after the last frame, atomically: it is the task's
//!   commit record.
//! - **failed**: `stats.json` records an error from the simulation itself (say, the step fell
//!   below `h_min`). Rerunning gives the same error, so failed tasks are only rerun when asked.
//! - **running**: a run holds the folder's lock (see [`cloth::sim::output::lock`]: a live
//!   process on this machine, or a lock another host or container keeps fresh).
//! - **interrupted**: anything else left in the folder (Ctrl-C, `scancel`, a killed node, a
//!   full disk or another output that could not be written, `output_error` in stats.json):
//!   rerun.
//! - **pending**: no folder or nothing in it yet.

use super::Plan;
use cloth::sim::{output::STATS_FILE, output::frame_path, output::held_by, stats::RunReport};
use std::path::Path;

/// State of one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskState {
    /// Complete: skipped by reruns.
    Done,
    /// The simulation stopped with this error.
    Failed(String),
    /// A run holds the folder's lock.
    Running,
    /// Started but not finished: rerun.
    Interrupted,
    /// Never started.
    Pending,
}

impl TaskState {
    /// Short name for tables.
    pub fn name(&self) -> &'static str {
        match self {
            TaskState::Done => "done",
            TaskState::Failed(_) => "failed",
            TaskState::Running => "running",
            TaskState::Interrupted => "interrupted",
            TaskState::Pending => "pending",
        }
    }

    /// Whether a (re)run should start this task.
    pub fn wants_run(&self, retry_failed: bool) -> bool {
        match self {
            TaskState::Done | TaskState::Running => false,
            TaskState::Failed(_) => retry_failed,
            TaskState::Interrupted | TaskState::Pending => true,
        }
    }
}

/// The error `cloth run` records when it is stopped by Ctrl-C (not a simulation failure).
const INTERRUPTED: &str = "interrupted";

/// The state of the run in `run_dir`, which was planned for `frames` frames.
pub fn task_state(run_dir: &Path, frames: usize) -> TaskState {
    let report = RunReport::read(run_dir.join(STATS_FILE)).ok();
    if let Some(r) = &report
        && r.complete
        && r.frames.len() == frames
        && frame_path(run_dir, frames).is_file()
    {
        return TaskState::Done;
    }
    if held_by(run_dir).is_some() {
        return TaskState::Running;
    }
    if let Some(RunReport {
        error: Some(e),
        complete: false,
        output_error: false,
        ..
    }) = &report
        && e != INTERRUPTED
    {
        return TaskState::Failed(e.clone());
    }
    let started = std::fs::read_dir(run_dir).is_ok_and(|mut d| d.next().is_some());
    if started {
        TaskState::Interrupted
    } else {
        TaskState::Pending
    }
}

/// The state of every task of the plan in `dir`, by index.
pub fn states(dir: &Path, plan: &Plan) -> Vec<TaskState> {
    use rayon::prelude::*;
    plan.tasks
        .par_iter()
        .map(|t| task_state(&dir.join(&t.output), t.estimate.frames))
        .collect()
}
