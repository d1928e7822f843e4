//! Reading a run's output directory: OBJ frames (through cloth-mesh's one OBJ reader), the
//! frame rate of `stats.json` (cloth-sim's [`RunReport`]) and `colliders.json`; a run kept
//! only as `animation.usda` is read back from the stage.

use crate::ViewError;
use crate::usd_read::read_usd;
use cloth_mesh::{ObjData, read_obj_data};
use cloth_sim::{
    COLLIDERS_FILE, CollidersFile, DEFAULT_FPS, RunReport, STATS_FILE, SimError, USD_FILE,
};
pub use cloth_sim::{ColliderFrame, ColliderTrack};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// The number `k` when `name` is exactly the name [`cloth_sim::frame_path`] gives frame `k`,
/// with extension `ext` instead of `obj` (`frame_0007.png` is 7 for `"png"`); `None` for every
/// other name (`frame_7.obj`, `frame_x.obj`, ...). The viewer thus accepts exactly the names
/// the simulator writes.
pub(crate) fn frame_file_number(name: &str, ext: &str) -> Option<usize> {
    let stem = name.strip_suffix(ext)?.strip_suffix('.')?;
    cloth_sim::frame_number(&format!("{stem}.obj"))
}

/// The OBJ frames of `dir` (named as [`cloth_sim::frame_path`] writes them:
/// `frame_0000.obj`, `frame_0001.obj`, ...), sorted by frame number.
///
/// Returns `(frame number, path)` pairs; other files are ignored. A directory without frames
/// gives [`ViewError::NoFrames`].
pub fn list_frames(dir: &Path) -> Result<Vec<(usize, PathBuf)>, ViewError> {
    let entries = std::fs::read_dir(dir).map_err(|e| ViewError::io(dir, e))?;
    let mut frames = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| ViewError::io(dir, e))?;
        let name = entry.file_name();
        if let Some(k) = name.to_str().and_then(|n| frame_file_number(n, "obj")) {
            frames.push((k, entry.path()));
        }
    }
    if frames.is_empty() {
        return Err(ViewError::NoFrames {
            dir: dir.to_path_buf(),
        });
    }
    // One canonical name per number: the numbers are distinct.
    frames.sort_unstable();
    Ok(frames)
}

/// Frame rate of the run in `dir` (frames per second): [`RunReport::fps`] of `stats.json`.
///
/// Without `stats.json` it is the scene default, [`DEFAULT_FPS`] (30). A file
/// that is not a run report is [`ViewError::Stats`]; a rate that is not positive and finite is
/// [`ViewError::BadFps`].
pub fn read_fps(dir: &Path) -> Result<f64, ViewError> {
    let path = dir.join(STATS_FILE);
    match RunReport::read(&path) {
        Ok(report) => checked_fps(&path, report.fps),
        Err(SimError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(DEFAULT_FPS)
        }
        Err(source) => Err(ViewError::Stats {
            path,
            source: Box::new(source),
        }),
    }
}

/// `fps` if it is positive and finite, else [`ViewError::BadFps`] naming `path`.
pub(crate) fn checked_fps(path: &Path, fps: f64) -> Result<f64, ViewError> {
    if fps.is_finite() && fps > 0.0 {
        Ok(fps)
    } else {
        Err(ViewError::BadFps {
            path: path.to_path_buf(),
            fps,
        })
    }
}

/// Reads `dir/colliders.json`; an absent file gives no colliders.
///
/// Checks triangle indices and the vertex count of deforming frames. Unnamed colliders are
/// called `collider_<index>`.
pub fn read_colliders(dir: &Path) -> Result<Vec<ColliderTrack>, ViewError> {
    let path = dir.join(COLLIDERS_FILE);
    let file = match CollidersFile::read(&path) {
        Ok(f) => f,
        Err(SimError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Vec::new());
        }
        Err(SimError::Json {
            path,
            line,
            message,
        }) => {
            return Err(ViewError::Parse {
                path,
                line,
                message,
            });
        }
        Err(e) => {
            return Err(ViewError::Stats {
                path,
                source: Box::new(e),
            });
        }
    };
    let mut out = Vec::with_capacity(file.colliders.len());
    for (index, c) in file.colliders.into_iter().enumerate() {
        let name = if c.name.is_empty() {
            format!("collider_{index}")
        } else {
            c.name
        };
        let count = c.vertices.len();
        for (triangle, t) in c.triangles.iter().enumerate() {
            if let Some(&vertex) = t.iter().find(|&&v| v >= count) {
                return Err(ViewError::ColliderTriangle {
                    collider: name,
                    triangle,
                    vertex,
                    count,
                });
            }
        }
        check_finite_points(&name, 0, &c.vertices, "rest vertex")?;
        let mut frames = Vec::with_capacity(c.frames.len());
        for (k, f) in c.frames.into_iter().enumerate() {
            if f.matrix.iter().flatten().any(|x| !x.is_finite()) {
                return Err(ViewError::ColliderNotFinite {
                    collider: name,
                    frame: k,
                    what: "matrix".into(),
                });
            }
            if let Some(v) = &f.vertices {
                if v.len() != count {
                    return Err(ViewError::ColliderVertexCount {
                        collider: name,
                        frame: k,
                        expected: count,
                        found: v.len(),
                    });
                }
                check_finite_points(&name, k, v, "vertex")?;
            }
            frames.push(ColliderFrame {
                matrix: f.matrix,
                vertices: f.vertices,
            });
        }
        out.push(ColliderTrack {
            name,
            vertices: c.vertices,
            triangles: c.triangles,
            frames,
        });
    }
    Ok(out)
}

fn check_finite_points(
    name: &str,
    frame: usize,
    points: &[[f64; 3]],
    what: &str,
) -> Result<(), ViewError> {
    match points.iter().position(|p| p.iter().any(|x| !x.is_finite())) {
        Some(i) => Err(ViewError::ColliderNotFinite {
            collider: name.to_string(),
            frame,
            what: format!("{what} {i}"),
        }),
        None => Ok(()),
    }
}

/// A whole run loaded into memory: cloth positions per frame, shared topology, colliders, fps.
#[derive(Debug, Clone, PartialEq)]
pub struct Animation {
    /// Frame numbers, ascending (frame k is at time k / fps).
    pub frame_numbers: Vec<usize>,
    /// Cloth vertex positions per frame (metres), parallel to `frame_numbers`.
    pub positions: Vec<Vec<[f64; 3]>>,
    /// Cloth triangles (0-based), the same in every frame.
    pub triangles: Vec<[usize; 3]>,
    /// Cloth texture coordinates (of the first frame); empty when `triangle_uvs` is `None`.
    pub uvs: Vec<[f64; 2]>,
    /// Per-corner indices into `uvs`, if every face corner has one.
    pub triangle_uvs: Option<Vec<[usize; 3]>>,
    /// Colliders (empty if the run has none).
    pub colliders: Vec<ColliderTrack>,
    /// Frames per second.
    pub fps: f64,
}

/// Loads the run in `dir`.
///
/// - With OBJ frames ([`list_frames`]): every frame, the frame rate ([`read_fps`]) and
///   `colliders.json` ([`read_colliders`]). Frames are parsed in parallel; errors are reported
///   for the lowest failing frame, so the result does not depend on the thread count. Every
///   frame must have the vertex count and the triangles of the first frame.
/// - Without OBJ frames but with `animation.usda` (a run made with `--format usd`): the stage,
///   cloth and colliders alike ([`read_usd`]).
pub fn load_animation(dir: &Path) -> Result<Animation, ViewError> {
    let files = match list_frames(dir) {
        Ok(files) => files,
        Err(ViewError::NoFrames { .. }) if dir.join(USD_FILE).is_file() => {
            return read_usd(&dir.join(USD_FILE));
        }
        Err(e) => return Err(e),
    };
    let fps = read_fps(dir)?;
    let colliders = read_colliders(dir)?;
    let read = |path: &Path| read_obj_data(path).map_err(|e| ViewError::obj(path, e));
    let first = read(&files[0].1)?;
    let rest: Vec<Result<Vec<[f64; 3]>, ViewError>> = files[1..]
        .par_iter()
        .map(|(frame, path)| {
            let obj = read(path)?;
            check_topology(*frame, &first, &obj)?;
            Ok(points(&obj))
        })
        .collect();
    let mut positions = Vec::with_capacity(files.len());
    positions.push(points(&first));
    for r in rest {
        positions.push(r?);
    }
    let triangle_uvs = first
        .uv_triangles()
        .ok()
        .filter(|_| !first.triangles.is_empty());
    let uvs = match triangle_uvs {
        Some(_) => first.texcoords.iter().map(|t| [t.x, t.y]).collect(),
        None => Vec::new(),
    };
    Ok(Animation {
        frame_numbers: files.iter().map(|(f, _)| *f).collect(),
        positions,
        triangles: first.triangles,
        uvs,
        triangle_uvs,
        colliders,
        fps,
    })
}

fn points(obj: &ObjData) -> Vec<[f64; 3]> {
    obj.positions.iter().map(|p| [p.x, p.y, p.z]).collect()
}

fn check_topology(frame: usize, first: &ObjData, obj: &ObjData) -> Result<(), ViewError> {
    if obj.positions.len() != first.positions.len() {
        return Err(ViewError::VertexCountMismatch {
            frame,
            expected: first.positions.len(),
            found: obj.positions.len(),
        });
    }
    if obj.triangles.len() != first.triangles.len() {
        return Err(ViewError::TriangleCountMismatch {
            frame,
            expected: first.triangles.len(),
            found: obj.triangles.len(),
        });
    }
    if let Some(triangle) =
        (0..obj.triangles.len()).find(|&t| obj.triangles[t] != first.triangles[t])
    {
        return Err(ViewError::TriangleMismatch {
            frame,
            triangle,
            expected: first.triangles[triangle],
            found: obj.triangles[triangle],
        });
    }
    Ok(())
}

impl Animation {
    /// Number of frames.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether there are no frames (never true for a loaded animation).
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Time of frame index `i` (seconds): frame number / fps.
    pub fn time(&self, i: usize) -> f64 {
        self.frame_numbers[i] as f64 / self.fps
    }
}
