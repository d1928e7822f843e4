//! Reading a run's output directory: OBJ frames (through cloth-mesh's one OBJ reader), the
//! frame rate of `stats.json` (cloth-sim's [`RunReport`]) and `colliders.json`; a run kept
//! only as `animation.usda` is read back from the stage.

use crate::ViewError;
use crate::animation::{Animation, ClothPart, ColliderFrame, ColliderTrack};
use crate::usd_read::read_usd;
use cloth_mesh::{ObjData, read_obj_data};
use cloth_sim::{
    error::SimError, output::COLLIDERS_FILE, output::STATS_FILE, output::USD_FILE,
    stats::DEFAULT_FPS, stats::RunReport, tracks::CollidersFile,
};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// The number `k` when `name` is exactly the name [`cloth_sim::output::frame_path`] gives frame `k`,
/// with extension `ext` instead of `obj` (`frame_0007.png` is 7 for `"png"`); `None` for every
/// other name (`frame_7.obj`, `frame_x.obj`, ...). The viewer thus accepts exactly the names
/// the simulator writes.
pub(crate) fn frame_file_number(name: &str, ext: &str) -> Option<usize> {
    let stem = name.strip_suffix(ext)?.strip_suffix('.')?;
    cloth_sim::output::frame_number(&format!("{stem}.obj"))
}

/// The OBJ frames of `dir` (named as [`cloth_sim::output::frame_path`] writes them:
/// `frame_0000.obj`, `frame_0001.obj`, ...), sorted by frame number.
///
/// Returns `(frame number, path)` pairs; other files are ignored. A directory without frames
/// gives [`ViewError::NoFrames`].
pub fn list_frames(dir: impl AsRef<Path>) -> Result<Vec<(usize, PathBuf)>, ViewError> {
    let dir = dir.as_ref();
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
pub fn read_fps(dir: impl AsRef<Path>) -> Result<f64, ViewError> {
    let dir = dir.as_ref();
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
pub fn read_colliders(dir: impl AsRef<Path>) -> Result<Vec<ColliderTrack>, ViewError> {
    let dir = dir.as_ref();
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

/// Loads the run in `dir`.
///
/// - With OBJ frames ([`list_frames`]): every frame, the frame rate ([`read_fps`]) and
///   `colliders.json` ([`read_colliders`]). Frames are parsed in parallel; errors are reported
///   for the lowest failing frame, so the result does not depend on the thread count. Every
///   frame must have the vertex count, the triangles and the cloths of the first frame.
///   The cloths ([`Animation::cloths`]) are the `o` (or `g`) groups of a frame: the triangles
///   that follow each group line, and the consecutive vertices they use (see
///   [`obj_cloth_parts`]); a frame without groups is one cloth named `cloth`.
/// - Without OBJ frames but with `animation.usda` (a run made with `--format usd`): the stage,
///   cloth and colliders alike ([`read_usd`]).
pub fn load_animation(dir: impl AsRef<Path>) -> Result<Animation, ViewError> {
    let dir = dir.as_ref();
    let files = match list_frames(dir) {
        Ok(files) => files,
        Err(ViewError::NoFrames { .. }) if dir.join(USD_FILE).is_file() => {
            return read_usd(dir.join(USD_FILE));
        }
        Err(e) => return Err(e),
    };
    let fps = read_fps(dir)?;
    let colliders = read_colliders(dir)?;
    let read = |path: &Path| read_obj_data(path).map_err(|e| ViewError::obj(path, e));
    let parts_of = |path: &Path, obj: &ObjData| {
        obj_cloth_parts(obj).map_err(|message| ViewError::Parts {
            path: path.to_path_buf(),
            message,
        })
    };
    let first = read(&files[0].1)?;
    let cloths = parts_of(&files[0].1, &first)?;
    let rest: Vec<Result<Vec<[f64; 3]>, ViewError>> = files[1..]
        .par_iter()
        .map(|(frame, path)| {
            let obj = read(path)?;
            check_topology(*frame, &first, &obj)?;
            same_parts(path, &cloths, &parts_of(path, &obj)?)?;
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
        cloths,
        colliders,
        fps,
    })
}

/// The cloths of an OBJ frame: one per `o` (or `g`) line, holding the triangles that follow
/// it up to the next group line, in file order; triangles before the first group line (all of
/// them in a file without groups) form a cloth named `cloth`.
///
/// A cloth's vertices are consecutive and follow those of the cloth before it, as `cloth run`
/// writes them: a cloth with triangles starts at the lowest vertex they use, one without
/// right after the highest vertex used before it, and the last cloth ends at the last vertex.
/// A cloth whose triangles use a vertex that an earlier cloth's triangles reach beyond is
/// refused (the message names both cloths).
pub fn obj_cloth_parts(obj: &ObjData) -> Result<Vec<ClothPart>, String> {
    let mut starts: Vec<(&str, usize)> = Vec::with_capacity(obj.groups.len() + 1);
    if obj.groups.first().is_none_or(|g| g.1 > 0) {
        starts.push(("cloth", 0));
    }
    starts.extend(obj.groups.iter().map(|(name, t)| (name.as_str(), *t)));
    let mut parts: Vec<ClothPart> = Vec::with_capacity(starts.len());
    // One past the highest vertex used by the triangles of the parts so far.
    let mut reached = 0;
    for (k, &(name, t0)) in starts.iter().enumerate() {
        let t1 = starts.get(k + 1).map_or(obj.triangles.len(), |s| s.1);
        let used = obj.triangles[t0..t1].iter().flatten();
        let (lo, hi) = used.fold((usize::MAX, 0), |(lo, hi), &v| (lo.min(v), hi.max(v + 1)));
        let start = match parts.last() {
            None => 0,
            Some(_) if t0 == t1 => reached,
            Some(prev) if lo < reached => {
                return Err(format!(
                    "cloth `{name}` uses vertex {}, but the cloths before it (up to `{}`) use \
                     vertices up to {}: each cloth's vertices must follow those of the one before",
                    lo + 1,
                    prev.name,
                    reached
                ));
            }
            Some(_) => lo,
        };
        if let Some(prev) = parts.last_mut() {
            prev.vertices.end = start;
        }
        reached = reached.max(hi);
        parts.push(ClothPart {
            name: name.to_string(),
            vertices: start..obj.positions.len(),
            triangles: t0..t1,
        });
    }
    Ok(parts)
}

/// The cloths of frame file `path` are `first`'s (those of the first frame).
fn same_parts(path: &Path, first: &[ClothPart], parts: &[ClothPart]) -> Result<(), ViewError> {
    let describe = |p: &ClothPart| {
        format!(
            "`{}` (vertices {}..{}, triangles {}..{})",
            p.name, p.vertices.start, p.vertices.end, p.triangles.start, p.triangles.end
        )
    };
    let message = if parts.len() != first.len() {
        format!(
            "{} cloths, but the first frame has {}",
            parts.len(),
            first.len()
        )
    } else if let Some(k) = (0..parts.len()).find(|&k| parts[k] != first[k]) {
        format!(
            "cloth {k} is {}, but {} in the first frame",
            describe(&parts[k]),
            describe(&first[k])
        )
    } else {
        return Ok(());
    };
    Err(ViewError::Parts {
        path: path.to_path_buf(),
        message,
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
