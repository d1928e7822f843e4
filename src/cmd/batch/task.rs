//! Running tasks: `cloth batch task` (one task, what every Slurm array element and every local
//! job executes) and `cloth batch run` (a bounded pool of those on this machine).
//!
//! Decision: the local pool runs one **process** per task (`cloth batch task`, which runs
//! `cloth run`), not an in-process thread pool. The task then goes through exactly the code
//! path of a Slurm array element and of a plain `cloth run` of the task file, so outputs are
//! the same bytes by construction rather than by a parity test of two paths; a task that
//! panics, aborts or runs out of memory takes only itself down; Ctrl-C and `scancel` act on a
//! task the way they act on `cloth run`; and `cloth run`'s process-wide settings (its thread
//! pool, its Ctrl-C handler, its lock) need no sharing. The cost, a process start per task, is
//! small against tasks of seconds. The simulation is deterministic for any thread count, so
//! `--threads` changes no byte either.

use super::state::{TaskState, task_state};
use super::{Plan, task_log};
use crate::cmd::print::{errln, outln};
use cloth::sim::output::CHECKPOINT_FILE;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The `cloth run` command line of one task.
///
/// `resume`: the run folder holds an interrupted attempt with a checkpoint; the task continues
/// from it (`cloth run --resume`, the same bits as an uninterrupted run). A failed task retried
/// with `--retry-failed`, or an interrupted one without a checkpoint, starts from scratch
/// (`cloth run` clears the files of an earlier run before it writes).
fn run_command(cloth: &Path, scene: &Path, out: &Path, threads: usize, resume: bool) -> Command {
    let mut cmd = Command::new(cloth);
    cmd.arg("run");
    if resume {
        cmd.arg("--resume").arg(out);
    } else {
        cmd.arg(scene).arg("--out").arg(out);
    }
    cmd.args(["--quiet", "--format", "obj", "--threads"])
        .arg(threads.to_string());
    cmd
}

/// This executable, which is the `cloth` the tasks run.
fn cloth_exe() -> Result<PathBuf, String> {
    std::env::current_exe().map_err(|e| format!("cannot find the cloth executable: {e}"))
}

/// Appends one line to the task's log (created with its folder).
fn log_line(log: &Path, line: &str) -> Result<(), String> {
    if let Some(parent) = log.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("cannot open {}: {e}", log.display()))?;
    // One write per line: appends from concurrent attempts do not interleave within a line.
    f.write_all(format!("{line}\n").as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", log.display()))
}

fn unix_time() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn where_am_i() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "?".into());
    let mut s = format!("host={host} pid={}", std::process::id());
    if let (Ok(job), Ok(idx)) = (
        std::env::var("SLURM_ARRAY_JOB_ID"),
        std::env::var("SLURM_ARRAY_TASK_ID"),
    ) {
        s.push_str(&format!(" slurm={job}_{idx}"));
    } else if let Ok(job) = std::env::var("SLURM_JOB_ID") {
        s.push_str(&format!(" slurm={job}"));
    }
    s
}

/// `cloth batch task DIR INDEX`: skip the task if it is done, else run it.
///
/// The log `DIR/logs/NNNNNN.log` gets `start ...`, then `cloth run`'s own output, then
/// `end exit=C seconds=S` (or `skip done`): a task that ran to completion exactly once has
/// exactly one `end exit=0` line.
pub fn run_one(dir: &Path, index: usize, threads: Option<usize>) -> Result<ExitCode, String> {
    let plan = Plan::read(dir)?;
    let task = plan.task(index)?;
    let threads = match threads {
        Some(0) => return Err("--threads must be at least 1".into()),
        Some(n) => n,
        None => std::env::var("SLURM_CPUS_PER_TASK")
            .ok()
            .and_then(|s| s.parse().ok())
            .filter(|&n: &usize| n > 0)
            .unwrap_or(1),
    };
    let out = dir.join(&task.output);
    let log = task_log(dir, index);
    let state = task_state(&out, task.estimate.frames);
    if state == TaskState::Done {
        log_line(
            &log,
            &format!("{:.3} skip done {}", unix_time(), where_am_i()),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let resume = state == TaskState::Interrupted && out.join(CHECKPOINT_FILE).is_file();
    log_line(
        &log,
        &format!(
            "{:.3} start {} threads={threads} state={} resume={resume}",
            unix_time(),
            where_am_i(),
            state.name()
        ),
    )?;
    let sink = std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .map_err(|e| format!("cannot open {}: {e}", log.display()))?;
    let sink2 = sink
        .try_clone()
        .map_err(|e| format!("cannot open {}: {e}", log.display()))?;
    let t0 = Instant::now();
    let status = run_command(&cloth_exe()?, &dir.join(&task.scene), &out, threads, resume)
        .stdin(Stdio::null())
        .stdout(sink)
        .stderr(sink2)
        .status()
        .map_err(|e| format!("cannot start cloth run: {e}"))?;
    let code = exit_code(&status);
    log_line(
        &log,
        &format!(
            "{:.3} end exit={code} seconds={:.3}",
            unix_time(),
            t0.elapsed().as_secs_f64()
        ),
    )?;
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// The exit status as a shell reports it (128 + signal for a killed process).
fn exit_code(status: &std::process::ExitStatus) -> i32 {
    if let Some(c) = status.code() {
        return c;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return 128 + sig;
        }
    }
    1
}

/// The local pool: workers take the next task to run until none is left or Ctrl-C stops
/// them.
struct Pool<'a> {
    dir: &'a Path,
    exe: PathBuf,
    threads: usize,
    todo: &'a [usize],
    stop: std::sync::Arc<AtomicBool>,
    next: AtomicUsize,
    finished: AtomicUsize,
    failed: Mutex<Vec<usize>>,
}

impl Pool<'_> {
    /// One worker: runs tasks one after the other.
    fn work(&self) {
        loop {
            if self.stop.load(Ordering::SeqCst) {
                break;
            }
            let k = self.next.fetch_add(1, Ordering::SeqCst);
            let Some(&i) = self.todo.get(k) else { break };
            if !self.run(i) {
                self.failed.lock().expect("no panics hold it").push(i);
            }
        }
    }

    /// Runs task `i` as `cloth batch task` and prints its line; whether it succeeded.
    fn run(&self, i: usize) -> bool {
        let t = Instant::now();
        let status = Command::new(&self.exe)
            .args(["batch", "task"])
            .arg(self.dir)
            .arg(i.to_string())
            .args(["--threads", &self.threads.to_string()])
            .stdin(Stdio::null())
            .status();
        let n = self.finished.fetch_add(1, Ordering::SeqCst) + 1;
        let ok = status.as_ref().is_ok_and(|s| s.success());
        let what = match &status {
            Ok(s) if s.success() => "done".to_string(),
            Ok(s) => format!(
                "FAILED (exit {}; see {})",
                exit_code(s),
                task_log(self.dir, i).display()
            ),
            Err(e) => format!("FAILED to start: {e}"),
        };
        outln!(
            "[{n:>width$}/{}] task {i:06} {what} in {:.2} s",
            self.todo.len(),
            t.elapsed().as_secs_f64(),
            width = self.todo.len().to_string().len()
        );
        ok
    }

    /// Prints what ran; the exit status: 130 when interrupted, an error naming the failed
    /// tasks, or success.
    fn finish(self, t0: Instant) -> Result<ExitCode, String> {
        let mut failed = self.failed.into_inner().expect("no panics hold it");
        failed.sort_unstable();
        let ran = self.finished.load(Ordering::SeqCst);
        outln!(
            "ran {ran} tasks in {:.1} s; {} failed{}",
            t0.elapsed().as_secs_f64(),
            failed.len(),
            if failed.is_empty() {
                String::new()
            } else {
                format!(": {}", super::ranges(&failed))
            }
        );
        if self.stop.load(Ordering::SeqCst) {
            errln!(
                "error: interrupted; {} tasks not started; rerun to finish",
                self.todo.len() - ran
            );
            return Ok(ExitCode::from(130));
        }
        if failed.is_empty() {
            Ok(ExitCode::SUCCESS)
        } else {
            Err(format!(
                "{} of {} tasks failed (tasks {})",
                failed.len(),
                self.todo.len(),
                super::ranges(&failed)
            ))
        }
    }
}

/// `cloth batch run DIR --jobs N`: the tasks that want a run, N at a time.
pub fn run_local(
    dir: &Path,
    jobs: usize,
    threads: Option<usize>,
    retry_failed: bool,
) -> Result<ExitCode, String> {
    if jobs == 0 {
        return Err("--jobs must be at least 1".into());
    }
    let plan = Plan::read(dir)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = match threads {
        Some(0) => return Err("--threads must be at least 1".into()),
        Some(n) => n,
        None => (cores / jobs).max(1),
    };
    let states = super::state::states(dir, &plan);
    let todo: Vec<usize> = (0..states.len())
        .filter(|&i| states[i].wants_run(retry_failed))
        .collect();
    let skipped = states.len() - todo.len();
    outln!(
        "{}: {} tasks, {} to run ({} jobs x {} threads), {} done or skipped",
        dir.display(),
        states.len(),
        todo.len(),
        jobs.min(todo.len().max(1)),
        threads,
        skipped
    );
    let pool = Pool {
        dir,
        exe: cloth_exe()?,
        threads,
        todo: &todo,
        stop: std::sync::Arc::new(AtomicBool::new(false)),
        next: AtomicUsize::new(0),
        finished: AtomicUsize::new(0),
        failed: Mutex::new(Vec::new()),
    };
    {
        let stop = pool.stop.clone();
        // Ctrl-C reaches the tasks too (same process group): they stop with valid frames, and
        // no new task starts.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..jobs.min(todo.len()) {
            s.spawn(|| pool.work());
        }
    });
    pool.finish(t0)
}
