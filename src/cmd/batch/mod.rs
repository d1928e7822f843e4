//! `cloth batch`: sweeps of one scene (wedges, datasets) planned into task files, run locally
//! with a bounded pool or as a Slurm array, resumed after interruptions, and collected into
//! one table. See docs/batch.md.
//!
//! A batch directory holds:
//!
//! ```text
//! DIR/tasks.json            the task table (written last by `plan`: its presence means the plan is whole)
//! DIR/tasks/NNNNNN.toml     one fully resolved scene per task (absolute paths)
//! DIR/runs/NNNNNN/          the task's `cloth run` output (frames, stats.json)
//! DIR/logs/NNNNNN.log       every attempt at the task: start, `cloth run`'s messages, end
//! DIR/slurm/                array scripts, the job ids submitted, Slurm's own logs
//! DIR/results.csv, results.json, summary.txt, contact_sheet.png   (`collect`)
//! ```
//!
//! Every task, local or on Slurm, is one `cloth batch task DIR INDEX` process that runs
//! `cloth run` on the task file into its run folder; finished tasks are recognised by their
//! complete stats.json and skipped, so rerunning or resubmitting a batch is always safe.

mod collect;
mod estimate;
mod glob;
mod keypath;
mod manifest;
mod plan;
mod slurm;
mod state;
mod status;
mod task;

use clap::{Args, Subcommand};
use estimate::Estimate;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `cloth batch ...`.
#[derive(Args)]
pub struct BatchArgs {
    #[command(subcommand)]
    command: BatchCommand,
}

#[derive(Subcommand)]
enum BatchCommand {
    /// Expand a manifest into one resolved, validated scene per task (DIR/tasks/NNNNNN.toml) and
    /// the task table DIR/tasks.json. Nothing is written unless every task passes `cloth check`.
    Plan {
        /// The batch manifest (TOML).
        manifest: PathBuf,
        /// The batch directory.
        #[arg(long)]
        out: PathBuf,
    },
    /// Run the unfinished tasks on this machine, N `cloth run` processes at a time.
    Run {
        /// The batch directory.
        dir: PathBuf,
        /// Tasks run at once.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// Threads per task (default: the cores divided among the jobs). Results are identical
        /// for any count.
        #[arg(long)]
        threads: Option<usize>,
        /// Also rerun tasks whose simulation failed (they fail the same way unless something
        /// outside the scene changed).
        #[arg(long)]
        retry_failed: bool,
    },
    /// Write a Slurm array script for the unfinished tasks (DIR/slurm/) and, with --submit,
    /// submit it with sbatch.
    Slurm(slurm::SlurmArgs),
    /// Run one task (what each array element and each local job executes): skips it when
    /// it is complete, otherwise runs `cloth run` into DIR/runs/NNNNNN, logging to
    /// DIR/logs/NNNNNN.log.
    Task {
        /// The batch directory.
        dir: PathBuf,
        /// Task index.
        index: usize,
        /// Threads (default: $SLURM_CPUS_PER_TASK, else 1).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Count tasks by state: done, failed, interrupted, running, pending.
    Status {
        /// The batch directory.
        dir: PathBuf,
    },
    /// Gather every task's statistics into DIR/results.csv and .json, a deterministic
    /// DIR/summary.txt (no wall times) and a contact sheet of last frames.
    Collect {
        /// The batch directory.
        dir: PathBuf,
        /// Tile size of the contact sheet, WIDTHxHEIGHT.
        #[arg(long, default_value = "160x120")]
        tile: String,
        /// Most tasks shown on the contact sheet (the first ones).
        #[arg(long, default_value_t = 400)]
        sheet_limit: usize,
    },
}

/// Runs `cloth batch ...`.
pub fn batch(args: BatchArgs) -> Result<ExitCode, String> {
    match args.command {
        BatchCommand::Plan { manifest, out } => plan::plan(&manifest, &out),
        BatchCommand::Run {
            dir,
            jobs,
            threads,
            retry_failed,
        } => task::run_local(&dir, jobs, threads, retry_failed),
        BatchCommand::Slurm(a) => slurm::slurm(a),
        BatchCommand::Task {
            dir,
            index,
            threads,
        } => task::run_one(&dir, index, threads),
        BatchCommand::Status { dir } => status::status(&dir),
        BatchCommand::Collect {
            dir,
            tile,
            sheet_limit,
        } => collect::collect(&dir, &tile, sheet_limit),
    }
}

/// The task table file of a batch directory.
const TASKS_FILE: &str = "tasks.json";

/// The task table (`DIR/tasks.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The manifest the plan came from (absolute).
    pub manifest: PathBuf,
    /// Its base scene (absolute).
    pub base: PathBuf,
    /// `product` or `zip`.
    pub combine: manifest::Combine,
    /// The swept keys and their values.
    pub axes: Vec<AxisRecord>,
    /// One row per task, by index.
    pub tasks: Vec<TaskRecord>,
}

/// One axis of the plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AxisRecord {
    /// Scene key path.
    pub key: String,
    /// The `files` pattern, for a file axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<String>,
    /// Values in order.
    pub values: Vec<serde_json::Value>,
}

/// One task of the plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// Index (array index on Slurm).
    pub index: usize,
    /// Label (the manifest's `name` template, or the index).
    pub name: String,
    /// The value of each swept key, in axis order.
    pub values: Vec<serde_json::Value>,
    /// Scene file, relative to the batch directory.
    pub scene: String,
    /// Output folder, relative to the batch directory.
    pub output: String,
    /// Expected cost.
    pub estimate: Estimate,
}

impl Plan {
    /// Reads `DIR/tasks.json`.
    pub fn read(dir: &Path) -> Result<Plan, String> {
        let path = dir.join(TASKS_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "{} is not a planned batch directory (cannot read {}: {e}); run `cloth batch plan` first",
                dir.display(),
                path.display()
            )
        })?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The task with this index.
    pub fn task(&self, index: usize) -> Result<&TaskRecord, String> {
        self.tasks.get(index).ok_or_else(|| {
            format!(
                "task {index} does not exist: the plan has tasks 0 to {}",
                self.tasks.len().saturating_sub(1)
            )
        })
    }
}

/// `tasks/NNNNNN.toml`, relative to the batch directory.
fn task_scene_rel(index: usize) -> String {
    format!("tasks/{index:06}.toml")
}

/// `runs/NNNNNN`, relative to the batch directory.
fn task_output_rel(index: usize) -> String {
    format!("runs/{index:06}")
}

/// `DIR/logs/NNNNNN.log`.
fn task_log(dir: &Path, index: usize) -> PathBuf {
    dir.join("logs").join(format!("{index:06}.log"))
}

/// Indices as compact ranges: `0-3,7,9-10`.
fn ranges(indices: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < indices.len() {
        let start = indices[i];
        let mut end = start;
        while i + 1 < indices.len() && indices[i + 1] == end + 1 {
            i += 1;
            end = indices[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

/// 64-bit FNV-1a, for content digests and the batch's Slurm job name (not cryptographic).
fn fnv1a(bytes: &[u8], mut h: u64) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// FNV-1a's offset basis.
const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_ranges_are_compact() {
        assert_eq!(ranges(&[]), "");
        assert_eq!(ranges(&[4]), "4");
        assert_eq!(ranges(&[0, 1, 2, 3, 7, 9, 10]), "0-3,7,9-10");
    }
}
