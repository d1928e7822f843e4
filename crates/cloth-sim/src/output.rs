//! Output files: OBJ frames and `stats.json`, each written atomically (temporary file in the
//! same directory, then rename), so an interrupted run leaves only complete files.

use crate::SimError;
use crate::stats::{FrameStats, Timings};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically: a temporary file beside it is written, flushed and
/// renamed over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), SimError> {
    let io = |source| SimError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
}

/// Path of frame `k` in `dir`: `dir/frame_0000.obj`.
pub fn frame_path(dir: &Path, k: usize) -> PathBuf {
    dir.join(format!("frame_{k:04}.obj"))
}

/// Totals over a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Totals {
    /// Frames computed.
    pub frames: usize,
    /// Accepted steps.
    pub steps: usize,
    /// Rejected steps.
    pub rejected_steps: usize,
    /// CG iterations.
    pub cg_iterations: usize,
    /// Smallest accepted step (s).
    pub h_min: f64,
    /// Largest accepted step (s).
    pub h_max: f64,
    /// Largest stretch over all frames.
    pub max_stretch: f64,
    /// Wall time split (s).
    pub timings: Timings,
    /// Wall time per frame (s), including output.
    pub seconds_per_frame: f64,
}

impl Totals {
    /// Sums the per-frame statistics.
    pub fn from_frames(frames: &[FrameStats], wall: f64) -> Self {
        let mut t = Totals {
            frames: frames.len(),
            h_min: f64::INFINITY,
            ..Default::default()
        };
        for f in frames {
            t.steps += f.steps;
            t.rejected_steps += f.rejected_steps;
            t.cg_iterations += f.cg_iterations;
            if f.steps > 0 {
                t.h_min = t.h_min.min(f.h_min);
            }
            t.h_max = t.h_max.max(f.h_max);
            t.max_stretch = t.max_stretch.max(f.max_stretch);
            t.timings.add(&f.timings);
        }
        if !t.h_min.is_finite() {
            t.h_min = 0.0;
        }
        t.seconds_per_frame = if frames.is_empty() {
            0.0
        } else {
            wall / frames.len() as f64
        };
        t
    }
}

/// The contents of `stats.json`.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport<'a, S: Serialize> {
    /// The exact settings used.
    pub settings: &'a S,
    /// Cloth vertices.
    pub vertices: usize,
    /// Cloth triangles.
    pub triangles: usize,
    /// Worker threads.
    pub threads: usize,
    /// Per-frame records.
    pub frames: &'a [FrameStats],
    /// Totals.
    pub totals: Totals,
    /// Whether the run finished all requested frames.
    pub complete: bool,
    /// The error that ended the run early, if any.
    pub error: Option<String>,
}

impl<S: Serialize> RunReport<'_, S> {
    /// Writes the report as pretty JSON, atomically.
    pub fn write(&self, path: &Path) -> Result<(), SimError> {
        let text = serde_json::to_string_pretty(self).map_err(|e| SimError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other(e),
        })?;
        write_atomic(path, text.as_bytes())
    }
}
