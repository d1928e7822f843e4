//! `cloth batch slurm`: the unfinished tasks as Slurm job arrays, one task per array index.
//!
//! Each array element runs `cloth batch task DIR INDEX`, which skips a task that is already
//! complete and otherwise runs `cloth run` into the task's folder. Resubmitting is therefore
//! always safe, and `cloth batch slurm DIR --submit` after an interruption (a cancelled element,
//! a lost node, a time limit) submits only the tasks that are not done. To keep two elements
//! from running the same task at once it refuses while jobs of this batch (found by their job
//! name, which is derived from the batch directory) are still queued or running.
//!
//! An array's resources are uniform, so the script asks for the largest estimate among the
//! tasks it holds, times a safety factor ([`TIME_SAFETY`]), unless `--time` / `--mem` say
//! otherwise. Indices at or above the cluster's `MaxArraySize` are submitted as further arrays
//! whose elements add an offset (`INDEX = OFFSET + SLURM_ARRAY_TASK_ID`).

use super::state::states;
use super::{FNV_START, Plan, fnv1a, ranges};
use crate::cmd::print::outln;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// `--time` is the longest estimate times this, plus [`TIME_MARGIN_SECONDS`].
const TIME_SAFETY: f64 = 3.0;
/// Added to the time limit (s): node start-up, a slow shared filesystem.
const TIME_MARGIN_SECONDS: f64 = 60.0;
/// `--mem` is the largest estimate times this, at least [`MIN_MEM_MIB`].
const MEM_SAFETY: f64 = 2.0;
const MIN_MEM_MIB: f64 = 128.0;
/// Slurm's default `MaxArraySize` (indices 0 to 1000).
const DEFAULT_MAX_ARRAY_SIZE: usize = 1001;

/// Options of `cloth batch slurm`.
#[derive(Args)]
pub struct SlurmArgs {
    /// The batch directory (on a filesystem every node sees, at the same path).
    dir: PathBuf,
    /// Partition (`sbatch --partition`); default: the cluster's default partition.
    #[arg(long)]
    partition: Option<String>,
    /// Time limit per task (`sbatch --time`, e.g. 0:30:00); default from the estimates.
    #[arg(long)]
    time: Option<String>,
    /// Memory per task (`sbatch --mem`, e.g. 2G); default from the estimates.
    #[arg(long)]
    mem: Option<String>,
    /// Most array elements running at once (`--array=...%K`).
    #[arg(long)]
    array_limit: Option<usize>,
    /// Cores per task (`--cpus-per-task`; the run uses that many threads).
    #[arg(long, default_value_t = 1)]
    cpus: usize,
    /// Largest array index + 1 the cluster accepts (default: asked from `scontrol show config`
    /// when submitting, else 1001).
    #[arg(long)]
    max_array_size: Option<usize>,
    /// The cloth executable the nodes run (default: this one; it must exist at that path on
    /// every node).
    #[arg(long)]
    cloth_bin: Option<PathBuf>,
    /// Also resubmit tasks whose simulation failed.
    #[arg(long)]
    retry_failed: bool,
    /// Extra `#SBATCH` options, e.g. `--sbatch-option=--account=proj` (repeatable).
    #[arg(long = "sbatch-option")]
    sbatch_options: Vec<String>,
    /// Submit with sbatch (otherwise only write the scripts and print the commands).
    #[arg(long)]
    submit: bool,
}

/// The Slurm job name of the batch in `dir`: `cloth-batch-` and a digest of its absolute path.
pub fn job_name(dir: &Path) -> String {
    let abs = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let h = fnv1a(abs.to_string_lossy().as_bytes(), FNV_START);
    format!("cloth-batch-{:08x}", h as u32)
}

/// Number of this batch's array elements that squeue lists; `None` when the batch was never
/// submitted, or squeue is missing or does not answer within [`SQUEUE_TIMEOUT`] (squeue waits
/// a long time for a controller that is down).
pub fn live_jobs(dir: &Path) -> Option<usize> {
    if !dir.join("slurm").join(JOBS_FILE).is_file() {
        return None;
    }
    let mut child = Command::new("squeue")
        .args(["-h", "-r", "-o", "%i", "-n"])
        .arg(job_name(dir))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    // Read while waiting: a long listing would otherwise fill the pipe and stall squeue.
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).map(|_| text)
    });
    let t0 = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if t0.elapsed() < SQUEUE_TIMEOUT => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let text = reader.join().ok()?.ok()?;
    status?.success().then(|| text.lines().count())
}

/// How long to wait for squeue.
const SQUEUE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The submitted job ids, one line per submission (`DIR/slurm/jobs.txt`).
const JOBS_FILE: &str = "jobs.txt";

/// The time and memory every element of the arrays asks for: `--time` and `--mem`, or the
/// longest and largest estimates of the tasks `todo` with safety factors.
fn resources(a: &SlurmArgs, plan: &Plan, todo: &[usize]) -> (String, String) {
    let longest = todo
        .iter()
        .map(|&i| plan.tasks[i].estimate.seconds)
        .fold(0.0, f64::max);
    let largest = todo
        .iter()
        .map(|&i| plan.tasks[i].estimate.memory_mib)
        .fold(0.0, f64::max);
    let time = a.time.clone().unwrap_or_else(|| {
        slurm_time(longest / a.cpus.max(1) as f64 * TIME_SAFETY + TIME_MARGIN_SECONDS)
    });
    let mem = a
        .mem
        .clone()
        .unwrap_or_else(|| format!("{}M", (largest * MEM_SAFETY).max(MIN_MEM_MIB).ceil()));
    (time, mem)
}

/// The largest array index + 1 to use: `--max-array-size`, else the cluster's when
/// submitting, else Slurm's default.
fn max_array_size(a: &SlurmArgs) -> Result<usize, String> {
    Ok(match a.max_array_size {
        Some(0) => return Err("--max-array-size must be at least 1".into()),
        Some(m) => m,
        None if a.submit => cluster_max_array_size().unwrap_or(DEFAULT_MAX_ARRAY_SIZE),
        None => DEFAULT_MAX_ARRAY_SIZE,
    })
}

/// The task indices split into arrays of at most `max_array` indices: (offset, indices
/// relative to it).
fn chunks(todo: &[usize], max_array: usize) -> Vec<(usize, Vec<usize>)> {
    let mut chunks: Vec<(usize, Vec<usize>)> = Vec::new();
    for &i in todo {
        let offset = i / max_array * max_array;
        match chunks.last_mut() {
            Some((o, list)) if *o == offset => list.push(i - offset),
            _ => chunks.push((offset, vec![i - offset])),
        }
    }
    chunks
}

/// Submits one array script with sbatch and records its job id in `DIR/slurm/jobs.txt`.
fn submit(slurm_dir: &Path, script_path: &Path, spec: &str) -> Result<String, String> {
    let out = Command::new("sbatch")
        .arg("--parsable")
        .arg(script_path)
        .output()
        .map_err(|e| format!("cannot run sbatch: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "sbatch {} failed: {}",
            script_path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let id = String::from_utf8_lossy(&out.stdout)
        .trim()
        .split(';')
        .next()
        .unwrap_or("")
        .to_owned();
    append_jobs(slurm_dir, &format!("{id} {} {spec}", script_path.display()))?;
    Ok(id)
}

/// What every array of one `cloth batch slurm` shares.
struct Arrays<'a> {
    args: &'a SlurmArgs,
    dir: &'a Path,
    cloth: PathBuf,
    name: String,
    time: String,
    mem: String,
}

impl Arrays<'_> {
    /// Writes the script of the array at `offset` holding `list`, and submits it when asked;
    /// returns the job id of a submitted array.
    fn write(&self, offset: usize, list: &[usize]) -> Result<Option<String>, String> {
        let a = self.args;
        let mut spec = ranges(list);
        if let Some(k) = a.array_limit {
            spec.push_str(&format!("%{k}"));
        }
        let slurm_dir = self.dir.join("slurm");
        let script_path = slurm_dir.join(format!("array_{offset:06}.sbatch"));
        let script = script(&ScriptSpec {
            name: &self.name,
            dir: self.dir,
            cloth: &self.cloth,
            array: &spec,
            offset,
            cpus: a.cpus,
            mem: &self.mem,
            time: &self.time,
            partition: a.partition.as_deref(),
            extra: &a.sbatch_options,
            tasks: list.len(),
        });
        cloth::mesh::write_atomic_bytes(&script_path, script.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", script_path.display()))?;
        if !a.submit {
            outln!("sbatch {}", script_path.display());
            return Ok(None);
        }
        let id = submit(&slurm_dir, &script_path, &spec)?;
        outln!(
            "submitted job {id}: {} tasks (array {spec}, offset {offset}), --time {} --mem {}",
            list.len(),
            self.time,
            self.mem
        );
        Ok(Some(id))
    }
}

/// `cloth batch slurm`.
pub fn slurm(a: SlurmArgs) -> Result<ExitCode, String> {
    let dir = std::fs::canonicalize(&a.dir).map_err(|e| format!("{}: {e}", a.dir.display()))?;
    let plan = Plan::read(&dir)?;
    if a.cpus == 0 || a.array_limit == Some(0) {
        return Err("--cpus and --array-limit must be at least 1".into());
    }
    let states = states(&dir, &plan);
    let todo: Vec<usize> = (0..states.len())
        .filter(|&i| states[i].wants_run(a.retry_failed))
        .collect();
    if todo.is_empty() {
        outln!(
            "nothing to submit: {} tasks, none unfinished{}",
            states.len(),
            if a.retry_failed {
                ""
            } else {
                " (failed ones are rerun with --retry-failed)"
            }
        );
        return Ok(ExitCode::SUCCESS);
    }
    if a.submit
        && let Some(n) = live_jobs(&dir)
        && n > 0
    {
        return Err(format!(
            "{n} array element(s) of this batch ({}) are still queued or running; wait for them or scancel them, then resubmit",
            job_name(&dir)
        ));
    }
    let cloth = match &a.cloth_bin {
        Some(p) => p.clone(),
        None => std::env::current_exe().map_err(|e| format!("cannot find cloth: {e}"))?,
    };
    let max_array = max_array_size(&a)?;
    let (time, mem) = resources(&a, &plan, &todo);
    let slurm_dir = dir.join("slurm");
    std::fs::create_dir_all(slurm_dir.join("logs"))
        .map_err(|e| format!("cannot create {}: {e}", slurm_dir.display()))?;
    let arrays = Arrays {
        args: &a,
        dir: &dir,
        cloth,
        name: job_name(&dir),
        time,
        mem,
    };
    let chunks = chunks(&todo, max_array);
    let mut submitted = Vec::new();
    for (offset, list) in &chunks {
        submitted.extend(arrays.write(*offset, list)?);
    }
    if a.submit {
        outln!("{}", submitted.join(" "));
    } else {
        outln!(
            "wrote {} script(s) for {} unfinished tasks (--time {} --mem {}); submit them with the lines above or with --submit",
            chunks.len(),
            todo.len(),
            arrays.time,
            arrays.mem
        );
    }
    Ok(ExitCode::SUCCESS)
}

struct ScriptSpec<'a> {
    name: &'a str,
    dir: &'a Path,
    cloth: &'a Path,
    array: &'a str,
    offset: usize,
    cpus: usize,
    mem: &'a str,
    time: &'a str,
    partition: Option<&'a str>,
    extra: &'a [String],
    tasks: usize,
}

/// The sbatch script of one array.
fn script(s: &ScriptSpec) -> String {
    let mut t = String::new();
    t.push_str("#!/bin/bash\n");
    t.push_str(&format!(
        "# {} tasks of the cloth batch in {}, one per array index (written by `cloth batch slurm`).\n",
        s.tasks,
        s.dir.display()
    ));
    t.push_str("# Task index = CLOTH_BATCH_OFFSET + SLURM_ARRAY_TASK_ID. A task that is already complete is\n");
    t.push_str("# skipped, so submitting this script again is safe.\n");
    t.push_str(&format!("#SBATCH --job-name={}\n", s.name));
    t.push_str(&format!("#SBATCH --array={}\n", s.array));
    t.push_str(&format!("#SBATCH --cpus-per-task={}\n", s.cpus));
    t.push_str("#SBATCH --ntasks=1\n");
    t.push_str(&format!("#SBATCH --mem={}\n", s.mem));
    t.push_str(&format!("#SBATCH --time={}\n", s.time));
    if let Some(p) = s.partition {
        t.push_str(&format!("#SBATCH --partition={p}\n"));
    }
    t.push_str(&format!(
        "#SBATCH --output={}/slurm/logs/%A_%a.out\n",
        s.dir.display()
    ));
    for o in s.extra {
        t.push_str(&format!("#SBATCH {o}\n"));
    }
    t.push_str("set -eu\n");
    t.push_str(&format!("CLOTH_BATCH_OFFSET={}\n", s.offset));
    t.push_str(&format!(
        "exec {} batch task {} \"$(( CLOTH_BATCH_OFFSET + SLURM_ARRAY_TASK_ID ))\" --threads \"${{SLURM_CPUS_PER_TASK:-1}}\"\n",
        quote(&s.cloth.to_string_lossy()),
        quote(&s.dir.to_string_lossy())
    ));
    t
}

/// A single-quoted shell word.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `D-HH:MM:SS` (or `HH:MM:SS`) of whole minutes at least `seconds`.
fn slurm_time(seconds: f64) -> String {
    let minutes = (seconds / 60.0).ceil().max(1.0) as u64;
    let (d, h, m) = (minutes / 1440, minutes / 60 % 24, minutes % 60);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:00")
    } else {
        format!("{h:02}:{m:02}:00")
    }
}

/// `MaxArraySize` from `scontrol show config`.
fn cluster_max_array_size() -> Option<usize> {
    let out = Command::new("scontrol")
        .args(["show", "config"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == "MaxArraySize")
            .then(|| v.trim().parse().ok())
            .flatten()
    })
}

fn append_jobs(slurm_dir: &Path, line: &str) -> Result<(), String> {
    use std::io::Write;
    let path = slurm_dir.join(JOBS_FILE);
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    f.write_all(format!("{line}\n").as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_limits_round_up_to_minutes() {
        assert_eq!(slurm_time(1.0), "00:01:00");
        assert_eq!(slurm_time(61.0), "00:02:00");
        assert_eq!(slurm_time(3600.0 * 25.0), "1-01:00:00");
        assert_eq!(quote("a'b"), "'a'\\''b'");
    }
}
