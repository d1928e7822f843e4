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
//! written (its lock file names a run that still holds it, see [`lock`]) is refused with
//! [`SimError::Locked`], unless it takes the lock over on purpose
//! ([`OutputDir::create_with`]'s `force`). A resumed run removes the temporary files of the
//! writes its predecessor did not finish.

pub mod lock;

use crate::error::SimError;
use lock::{LockHolder, LockVerdict, Refresher, judge_lock, take_lock};
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
/// dropped (if it is still this run's).
#[derive(Debug)]
pub struct OutputDir {
    dir: PathBuf,
    lock: PathBuf,
    /// The lock file's text as this run wrote it.
    mine: String,
    /// What holding the lock replaced: a stale lock, or a held one with `force`.
    took_over: Option<String>,
    _refresher: Refresher,
}

impl OutputDir {
    /// Creates `dir` if needed, takes its lock, and removes the files of an earlier run.
    ///
    /// A lock that no run holds any more (see [`lock`]) is taken over; a held one is refused
    /// with [`SimError::Locked`].
    pub fn create(dir: impl AsRef<Path>) -> Result<OutputDir, SimError> {
        Self::create_with(dir, false)
    }

    /// As [`OutputDir::create`]; with `force`, a held lock is taken over too (the run holding
    /// it stops at its next frame, see [`OutputDir::check_held`]).
    pub fn create_with(dir: impl AsRef<Path>, force: bool) -> Result<OutputDir, SimError> {
        let dir = dir.as_ref();
        let out = Self::open(dir, force)?;
        out.clear_earlier_run()?;
        Ok(out)
    }

    /// Takes the lock of an existing run's directory to continue it; only the temporary files
    /// of writes the earlier run did not finish are removed.
    pub fn resume(dir: impl AsRef<Path>) -> Result<OutputDir, SimError> {
        Self::resume_with(dir, false)
    }

    /// As [`OutputDir::resume`], taking a held lock over with `force`.
    pub fn resume_with(dir: impl AsRef<Path>, force: bool) -> Result<OutputDir, SimError> {
        let dir = dir.as_ref();
        if !dir.is_dir() {
            return Err(SimError::io(
                dir,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such run directory"),
            ));
        }
        let out = Self::open(dir, force)?;
        out.remove_files(|name| name.starts_with('.') && is_run_file(name))?;
        Ok(out)
    }

    fn open(dir: &Path, force: bool) -> Result<OutputDir, SimError> {
        std::fs::create_dir_all(dir).map_err(|e| SimError::io(dir, e))?;
        let lock = dir.join(LOCK_FILE);
        let mut mine = serde_json::to_string(&LockHolder::this_process())
            .map_err(|e| SimError::io(&lock, std::io::Error::other(e)))?;
        mine.push('\n');
        let took_over = take_lock(dir, &lock, &mine, force)?;
        Ok(OutputDir {
            dir: dir.to_path_buf(),
            _refresher: Refresher::start(lock.clone(), mine.clone()),
            lock,
            mine,
            took_over,
        })
    }

    /// What taking the lock replaced (a lock no run held any more, or with `force` a held
    /// one), to tell the user; `None` when the directory was free.
    pub fn took_over(&self) -> Option<&str> {
        self.took_over.as_deref()
    }

    /// Whether the lock is still this run's: an error naming the new holder when another run
    /// took it over (with `--force`, or as stale after this process stopped refreshing it).
    /// A run checks before it writes.
    pub fn check_held(&self) -> Result<(), SimError> {
        let text = std::fs::read_to_string(&self.lock).unwrap_or_default();
        if text == self.mine {
            return Ok(());
        }
        let who = judge_lock(&self.lock).map_or_else(
            || "the lock file is gone".to_string(),
            |(_, v)| match v {
                LockVerdict::Held(who) | LockVerdict::Stale(who) => format!("now held by {who}"),
            },
        );
        Err(SimError::io(
            &self.lock,
            std::io::Error::other(format!(
                "another run took this output directory over ({who})"
            )),
        ))
    }

    /// Removes the frames numbered above `last` (written after the checkpoint a run resumes
    /// from; the resumed run writes them again).
    pub fn remove_frames_after(&self, last: usize) -> Result<(), SimError> {
        self.remove_files(|name| frame_number(name).is_some_and(|k| k > last))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Removes the files an earlier run wrote (see the module docs), and nothing else.
    fn clear_earlier_run(&self) -> Result<(), SimError> {
        self.remove_files(is_run_file)
    }

    /// Removes the regular files of the directory whose (UTF-8) names pass `remove`.
    fn remove_files(&self, remove: impl Fn(&str) -> bool) -> Result<(), SimError> {
        let entries = std::fs::read_dir(&self.dir).map_err(|e| SimError::io(&self.dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| SimError::io(&self.dir, e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if remove(name) && entry.file_type().is_ok_and(|t| t.is_file()) {
                std::fs::remove_file(entry.path()).map_err(|e| SimError::io(entry.path(), e))?;
            }
        }
        Ok(())
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        // A lock another run took over is that run's.
        if std::fs::read_to_string(&self.lock).is_ok_and(|t| t == self.mine) {
            let _ = std::fs::remove_file(&self.lock);
        }
    }
}

/// The run holding the lock of `dir`, if one does (see [`lock`]): who, for messages.
pub fn held_by(dir: impl AsRef<Path>) -> Option<String> {
    match judge_lock(&dir.as_ref().join(LOCK_FILE))? {
        (_, LockVerdict::Held(who)) => Some(who),
        (_, LockVerdict::Stale(_)) => None,
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
