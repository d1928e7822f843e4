//! A run's output directory: one writer at a time (a lock file), no files of an earlier run
//! left behind, every file written atomically.
//!
//! Layout: `frame_0000.obj`, `frame_0001.obj`, ... (frame k at time k / fps; the vertex count
//! and order of every frame are the mesh's), `stats.json` ([`crate::stats::RunReport`]),
//! `colliders.json`, and optionally `animation.usda` and `preview.gif`.
//!
//! Decision: a run into a directory that holds an earlier run's files **removes exactly those
//! files** (the names above, and temporary files of interrupted writes) before writing
//! anything, and leaves every other file alone; a second run into a directory that is being
//! written (its lock file names a live process) is refused with [`SimError::Locked`].

use crate::error::SimError;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Name of the lock file a run keeps in its output directory while it runs.
pub const LOCK_FILE: &str = ".cloth-run.lock";

/// The run's statistics ([`crate::stats::RunReport`]).
pub const STATS_FILE: &str = "stats.json";
/// Collider surfaces and poses per frame ([`crate::tracks::CollidersFile`]).
pub const COLLIDERS_FILE: &str = "colliders.json";
/// The USD export of the run.
pub const USD_FILE: &str = "animation.usda";
/// The preview animation.
pub const PREVIEW_FILE: &str = "preview.gif";
/// The latest checkpoint ([`crate::checkpoint::Checkpoint`]).
pub const CHECKPOINT_FILE: &str = "checkpoint.json";

/// Files a run writes besides its frames.
pub const RUN_FILES: [&str; 5] = [
    STATS_FILE,
    COLLIDERS_FILE,
    USD_FILE,
    PREVIEW_FILE,
    CHECKPOINT_FILE,
];

/// Path of frame `k` in `dir`: `dir/frame_0000.obj` (at least four digits).
pub fn frame_path(dir: impl AsRef<Path>, k: usize) -> PathBuf {
    dir.as_ref().join(format!("frame_{k:04}.obj"))
}

/// The frame number `k` of a file name exactly as [`frame_path`] writes it (`frame_0007.obj`
/// is 7; `frame_7.obj` and `frame_00007.obj` are no frame names).
pub fn frame_number(name: &str) -> Option<usize> {
    let digits = name.strip_prefix("frame_")?.strip_suffix(".obj")?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let k: usize = digits.parse().ok()?;
    (format!("{k:04}") == digits).then_some(k)
}

/// Whether `name` is a file a run writes (frames, [`RUN_FILES`]) or a temporary file of one.
fn is_run_file(name: &str) -> bool {
    let base = name
        .strip_prefix('.')
        .and_then(|n| n.strip_suffix(".tmp"))
        .and_then(|n| n.rsplit_once('.').map(|(b, _pid)| b))
        .unwrap_or(name);
    frame_number(base).is_some() || RUN_FILES.contains(&base)
}

/// An output directory held by this process for one run. The lock is released when it is
/// dropped.
#[derive(Debug)]
pub struct OutputDir {
    dir: PathBuf,
    lock: PathBuf,
}

impl OutputDir {
    /// Creates `dir` if needed, takes its lock, and removes the files of an earlier run.
    ///
    /// A lock file whose process no longer exists (a run killed without cleaning up) is taken
    /// over.
    pub fn create(dir: impl AsRef<Path>) -> Result<OutputDir, SimError> {
        let dir = dir.as_ref();
        let out = Self::open(dir)?;
        out.clear_earlier_run()?;
        Ok(out)
    }

    /// Takes the lock of an existing run's directory to continue it; nothing is removed.
    pub fn resume(dir: impl AsRef<Path>) -> Result<OutputDir, SimError> {
        let dir = dir.as_ref();
        if !dir.is_dir() {
            return Err(SimError::io(
                dir,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such run directory"),
            ));
        }
        Self::open(dir)
    }

    fn open(dir: &Path) -> Result<OutputDir, SimError> {
        std::fs::create_dir_all(dir).map_err(|e| SimError::io(dir, e))?;
        let lock = dir.join(LOCK_FILE);
        take_lock(dir, &lock)?;
        Ok(OutputDir {
            dir: dir.to_path_buf(),
            lock,
        })
    }

    /// Removes the frames numbered above `last` (written after the checkpoint a run resumes
    /// from; the resumed run writes them again).
    pub fn remove_frames_after(&self, last: usize) -> Result<(), SimError> {
        let entries = std::fs::read_dir(&self.dir).map_err(|e| SimError::io(&self.dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| SimError::io(&self.dir, e))?;
            let name = entry.file_name();
            let later = name
                .to_str()
                .and_then(frame_number)
                .is_some_and(|k| k > last);
            if later && entry.file_type().is_ok_and(|t| t.is_file()) {
                std::fs::remove_file(entry.path()).map_err(|e| SimError::io(entry.path(), e))?;
            }
        }
        Ok(())
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Removes the files an earlier run wrote (see the module docs), and nothing else.
    fn clear_earlier_run(&self) -> Result<(), SimError> {
        let entries = std::fs::read_dir(&self.dir).map_err(|e| SimError::io(&self.dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| SimError::io(&self.dir, e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if is_run_file(name) && entry.file_type().is_ok_and(|t| t.is_file()) {
                std::fs::remove_file(entry.path()).map_err(|e| SimError::io(entry.path(), e))?;
            }
        }
        Ok(())
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.lock);
    }
}

/// Creates the lock file exclusively; a stale lock (dead process) is replaced once.
fn take_lock(dir: &Path, lock: &Path) -> Result<(), SimError> {
    for _ in 0..2 {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(lock)
        {
            Ok(mut f) => {
                writeln!(f, "{}", std::process::id()).map_err(|e| SimError::io(lock, e))?;
                return Ok(());
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let holder = std::fs::read_to_string(lock)
                    .ok()
                    .and_then(|s| s.trim().parse::<u32>().ok());
                match holder {
                    Some(pid) if process_alive(pid) => {
                        return Err(SimError::Locked {
                            dir: dir.to_path_buf(),
                            pid,
                        });
                    }
                    // Dead or unreadable holder: the lock is stale.
                    _ => std::fs::remove_file(lock).map_err(|e| SimError::io(lock, e))?,
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

/// Whether a process with this id exists (Linux: /proc; elsewhere assume it does).
fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc = Path::new("/proc");
    if proc.is_dir() {
        proc.join(pid.to_string()).exists()
    } else {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_files_are_recognised_and_others_are_not() {
        for n in [
            "frame_0000.obj",
            "frame_12345.obj",
            "stats.json",
            ".frame_0003.obj.4242.tmp",
            ".stats.json.17.tmp",
        ] {
            assert!(is_run_file(n), "{n}");
        }
        for n in [
            "frame_1.obj",
            "notes.txt",
            "frame_0001.objx",
            "scene.toml",
            ".cloth-run.lock",
        ] {
            assert!(!is_run_file(n), "{n}");
        }
        assert_eq!(frame_number("frame_0042.obj"), Some(42));
        assert_eq!(frame_number("frame_12345.obj"), Some(12345));
        assert_eq!(frame_number("frame_00042.obj"), None);
        for k in [0, 7, 9999, 10000, 123456] {
            let p = frame_path(Path::new(""), k);
            assert_eq!(frame_number(p.to_str().unwrap()), Some(k));
        }
    }
}
