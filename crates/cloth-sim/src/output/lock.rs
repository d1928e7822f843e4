//! The lock file of an output directory: who holds it (process, start time, host, boot, PID
//! namespace), whether that holder still counts, and the thread that keeps it fresh.
//!
//! A lock names a process that can be checked only where its PID means the same thing: on the
//! same host, in the same boot, in the same PID namespace. There a lock whose process is gone
//! (or whose PID now belongs to a process that started later) is stale and taken over at once.
//! Anywhere else (another node on a shared file system, another container, another boot) the
//! holder cannot be checked, so the lock counts while its file's modification time is recent:
//! the running process touches it every [`LOCK_REFRESH`], and a lock not touched for
//! [`LOCK_STALE_AFTER`] is stale (a holder that stopped without removing it: a lost node, a
//! killed container). Clocks of the machines that share a directory are assumed to agree to
//! well within that time.

use crate::error::SimError;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How often a running process touches its lock file (its modification time).
pub const LOCK_REFRESH: Duration = Duration::from_secs(30);

/// A lock from another host, boot or PID namespace not touched for this long is stale: twenty
/// refreshes missed, so a busy file system or a slow clock does not end a live run's claim.
pub const LOCK_STALE_AFTER: Duration = Duration::from_secs(600);

/// What a lock file says about the run holding it (JSON). A lock file holding only a number
/// (written by older versions) reads as that PID on this host, boot and namespace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockHolder {
    /// Process id, in the holder's PID namespace.
    pub pid: u32,
    /// Host name (`/proc/sys/kernel/hostname`).
    pub host: String,
    /// Boot id (`/proc/sys/kernel/random/boot_id`; empty where there is none).
    pub boot_id: String,
    /// PID namespace (`/proc/self/ns/pid`, e.g. `pid:[4026531836]`; empty where there is none).
    pub pid_ns: String,
    /// Start time of the process in clock ticks after boot (field 22 of `/proc/PID/stat`), so
    /// a PID taken by a later process does not pass for the holder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proc_start: Option<u64>,
    /// When the run took the lock (s since the Unix epoch).
    pub started: f64,
}

impl LockHolder {
    /// This process.
    pub fn this_process() -> LockHolder {
        let pid = std::process::id();
        LockHolder {
            pid,
            host: read_trimmed("/proc/sys/kernel/hostname")
                .or_else(|| std::env::var("HOSTNAME").ok())
                .unwrap_or_default(),
            boot_id: read_trimmed("/proc/sys/kernel/random/boot_id").unwrap_or_default(),
            pid_ns: std::fs::read_link("/proc/self/ns/pid")
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default(),
            proc_start: process_start(pid),
            started: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
        }
    }

    /// Reads a lock file's text (JSON, or a bare PID from older versions, which is taken to be
    /// of this host, boot and namespace).
    fn parse(text: &str) -> Option<LockHolder> {
        if let Ok(h) = serde_json::from_str::<LockHolder>(text) {
            return Some(h);
        }
        let pid = text.trim().parse::<u32>().ok()?;
        let here = LockHolder::this_process();
        Some(LockHolder {
            pid,
            proc_start: None,
            started: 0.0,
            ..here
        })
    }

    /// Whether its PID can be checked here: same host, same boot, same PID namespace.
    fn checkable_here(&self, here: &LockHolder) -> bool {
        !self.boot_id.is_empty()
            && !self.pid_ns.is_empty()
            && self.host == here.host
            && self.boot_id == here.boot_id
            && self.pid_ns == here.pid_ns
    }

    /// `process 123 on host node7`.
    fn describe(&self) -> String {
        if self.host.is_empty() {
            format!("process {}", self.pid)
        } else {
            format!("process {} on host {}", self.pid, self.host)
        }
    }
}

/// Whether a lock still holds, and why not.
#[derive(Debug, Clone, PartialEq)]
pub enum LockVerdict {
    /// A live run holds it: who, for messages.
    Held(String),
    /// Nobody holds it any more: why (taken over).
    Stale(String),
}

/// Judges the lock file at `lock` (`None`: no lock file, or one that cannot be read as a lock).
pub fn judge_lock(lock: &Path) -> Option<(LockHolder, LockVerdict)> {
    let text = std::fs::read_to_string(lock).ok()?;
    let holder = LockHolder::parse(&text)?;
    let age = std::fs::metadata(lock)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .unwrap_or_default();
    let verdict = verdict(&holder, age, &LockHolder::this_process());
    Some((holder, verdict))
}

/// The rule of the module docs for a lock last touched `age` ago, judged by `here`.
fn verdict(holder: &LockHolder, age: Duration, here: &LockHolder) -> LockVerdict {
    let who = holder.describe();
    if holder.checkable_here(here) {
        match process_alive(holder.pid, holder.proc_start) {
            Some(true) => return LockVerdict::Held(who),
            Some(false) => return LockVerdict::Stale(format!("{who} is gone")),
            None => {}
        }
    }
    if age < LOCK_STALE_AFTER {
        LockVerdict::Held(format!("{who}, touched {} s ago", age.as_secs()))
    } else {
        LockVerdict::Stale(format!(
            "{who} has not touched it for {} s (more than {} s)",
            age.as_secs(),
            LOCK_STALE_AFTER.as_secs()
        ))
    }
}

/// Creates the lock file exclusively with `mine` in it. A stale lock (see [`judge_lock`]) is
/// replaced, and with `force` any lock is; a held one is refused with [`SimError::Locked`].
/// Returns what it took over, if anything.
pub(super) fn take_lock(
    dir: &Path,
    lock: &Path,
    mine: &str,
    force: bool,
) -> Result<Option<String>, SimError> {
    let mut replaced = None;
    for _ in 0..3 {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(lock)
        {
            Ok(mut f) => {
                f.write_all(mine.as_bytes())
                    .and_then(|()| f.sync_all())
                    .map_err(|e| SimError::io(lock, e))?;
                return Ok(replaced);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let judged = judge_lock(lock);
                replaced = match judged {
                    Some((holder, LockVerdict::Held(who))) if !force => {
                        return Err(SimError::Locked {
                            dir: dir.to_path_buf(),
                            pid: holder.pid,
                            holder: who,
                        });
                    }
                    Some((_, LockVerdict::Held(who))) => Some(format!("{who} (--force)")),
                    Some((_, LockVerdict::Stale(why))) => Some(why),
                    // Unreadable (empty, garbage): no run can be shown to hold it.
                    None => Some("an unreadable lock file".into()),
                };
                match std::fs::remove_file(lock) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(SimError::io(lock, e)),
                }
            }
            Err(e) => return Err(SimError::io(lock, e)),
        }
    }
    Err(SimError::io(
        lock,
        std::io::Error::other("lock file keeps reappearing"),
    ))
}

/// Whether process `pid` exists here and is the one that started at `start` ticks after
/// boot (when known); a zombie is dead. `None` where there is no `/proc` to ask.
fn process_alive(pid: u32, start: Option<u64>) -> Option<bool> {
    if pid == std::process::id() {
        return Some(true);
    }
    if !Path::new("/proc/self/stat").is_file() {
        return None;
    }
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return Some(false);
    };
    // The fields after the parenthesised command name: state is the first, the start time
    // the twentieth (field 22 of the whole line).
    let rest = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first().copied().unwrap_or("");
    if state.starts_with('Z') || state.starts_with('X') {
        return Some(false);
    }
    let started = fields.get(19).and_then(|s| s.parse::<u64>().ok());
    Some(match (start, started) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    })
}

/// Start time of process `pid` in clock ticks after boot, where `/proc` tells.
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(") ")?.1;
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// A thread that touches the lock file every [`LOCK_REFRESH`] while the text in it is still
/// `mine`; it ends when dropped.
#[derive(Debug)]
pub(super) struct Refresher {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Refresher {
    pub(super) fn start(lock: PathBuf, mine: String) -> Refresher {
        let (tx, rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("cloth-lock".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(LOCK_REFRESH) {
                    if std::fs::read_to_string(&lock).ok().as_deref() != Some(mine.as_str()) {
                        break;
                    }
                    touch(&lock);
                }
            })
            .ok();
        Refresher {
            stop: Some(tx),
            thread,
        }
    }
}

impl Drop for Refresher {
    fn drop(&mut self) {
        // Dropping the sender wakes the thread at once.
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Sets the file's modification time to now (without creating it).
fn touch(path: &Path) {
    if let Ok(f) = std::fs::OpenOptions::new().write(true).open(path) {
        let _ = f.set_modified(SystemTime::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elsewhere(here: &LockHolder) -> LockHolder {
        LockHolder {
            pid: 1,
            host: here.host.clone(),
            boot_id: "another-boot".into(),
            ..here.clone()
        }
    }

    #[test]
    fn a_holder_here_is_judged_by_its_process_and_one_elsewhere_by_the_age_of_its_lock() {
        let here = LockHolder::this_process();
        if here.boot_id.is_empty() || here.pid_ns.is_empty() {
            return; // No /proc: every lock is judged by its age.
        }
        let fresh = Duration::from_secs(5);
        let old = LOCK_STALE_AFTER + Duration::from_secs(1);
        // This process: held whatever the age.
        assert!(matches!(verdict(&here, old, &here), LockVerdict::Held(_)));
        // A PID of this namespace that does not exist: stale at once.
        let gone = LockHolder {
            pid: u32::MAX - 1,
            ..here.clone()
        };
        assert!(matches!(
            verdict(&gone, fresh, &here),
            LockVerdict::Stale(_)
        ));
        // PID 1 exists here but started before this process: a later start time is another
        // process that once had the PID.
        let reused = LockHolder {
            pid: 1,
            proc_start: Some(u64::MAX),
            ..here.clone()
        };
        assert!(matches!(
            verdict(&reused, fresh, &here),
            LockVerdict::Stale(_)
        ));
        // Another boot, another host, another namespace: only the age counts, whether or not
        // a process with that PID exists here.
        for other in [
            elsewhere(&here),
            LockHolder {
                host: "another-host".into(),
                pid: u32::MAX - 1,
                ..here.clone()
            },
            LockHolder {
                pid_ns: "pid:[1]".into(),
                pid: u32::MAX - 1,
                ..here.clone()
            },
        ] {
            assert!(matches!(
                verdict(&other, fresh, &here),
                LockVerdict::Held(_)
            ));
            assert!(matches!(verdict(&other, old, &here), LockVerdict::Stale(_)));
        }
    }

    #[test]
    fn lock_files_of_older_versions_hold_a_bare_pid_of_this_host() {
        let here = LockHolder::this_process();
        let h = LockHolder::parse("4242\n").unwrap();
        assert_eq!(h.pid, 4242);
        assert_eq!(h.host, here.host);
        assert_eq!(h.boot_id, here.boot_id);
        assert!(LockHolder::parse("not a lock").is_none());
        let text = serde_json::to_string(&here).unwrap();
        assert_eq!(LockHolder::parse(&text), Some(here));
    }
}
