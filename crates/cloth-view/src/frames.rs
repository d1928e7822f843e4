//! Reading a run's output directory: OBJ frames, `stats.json` (fps) and `colliders.json`.

use super::ViewError;
use rayon::prelude::*;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Frame rate used when `stats.json` is absent or has no `settings.run.fps` (frames per second).
pub const DEFAULT_FPS: f64 = 30.0;

/// A triangle mesh read from an OBJ file. Polygons are split into triangle fans.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjMesh {
    /// Vertex positions (`v` lines), in metres.
    pub positions: Vec<[f64; 3]>,
    /// Texture coordinates (`vt` lines), dimensionless; missing components are 0.
    pub uvs: Vec<[f64; 2]>,
    /// Triangles as 0-based indices into `positions`.
    pub triangles: Vec<[usize; 3]>,
    /// Per-corner 0-based indices into `uvs`, one entry per triangle; `None` when some face
    /// corner has no texture coordinate.
    pub triangle_uvs: Option<Vec<[usize; 3]>>,
}

/// Parses OBJ text. `path` is only used in error messages.
///
/// Understands `v x y z`, `vt u [v]` and `f` lines with corners `a`, `a/b`, `a//c`, `a/b/c`
/// (1-based, or negative = relative to the end); every other line is ignored. Errors name the
/// line: malformed or non-finite numbers, faces with fewer than 3 corners, indices out of range.
pub fn parse_obj(text: &str, path: &Path) -> Result<ObjMesh, ViewError> {
    let mut mesh = ObjMesh {
        positions: Vec::new(),
        uvs: Vec::new(),
        triangles: Vec::new(),
        triangle_uvs: Some(Vec::new()),
    };
    let mut corners: Vec<(usize, Option<usize>)> = Vec::new();
    for (number, raw) in text.lines().enumerate() {
        let line = number + 1;
        let err = |message: String| ViewError::Parse {
            path: path.to_path_buf(),
            line,
            message,
        };
        let mut tokens = raw.split_whitespace();
        match tokens.next() {
            Some("v") => {
                let mut p = [0.0; 3];
                for (k, c) in p.iter_mut().enumerate() {
                    let token = tokens
                        .next()
                        .ok_or_else(|| err(format!("vertex needs 3 coordinates, found {k}")))?;
                    *c = parse_finite(token).map_err(err)?;
                }
                mesh.positions.push(p);
            }
            Some("vt") => {
                let mut uv = [0.0; 2];
                for (k, c) in uv.iter_mut().enumerate() {
                    match tokens.next() {
                        Some(token) => *c = parse_finite(token).map_err(err)?,
                        None if k == 0 => {
                            return Err(err("texture coordinate without values".into()));
                        }
                        None => {}
                    }
                }
                mesh.uvs.push(uv);
            }
            Some("f") => {
                corners.clear();
                for token in tokens {
                    let mut parts = token.split('/');
                    let v = parts.next().unwrap_or("");
                    let vi = resolve_index(v, mesh.positions.len(), "vertex").map_err(err)?;
                    let ti = match parts.next() {
                        Some(t) if !t.is_empty() => Some(
                            resolve_index(t, mesh.uvs.len(), "texture coordinate").map_err(err)?,
                        ),
                        _ => None,
                    };
                    corners.push((vi, ti));
                }
                if corners.len() < 3 {
                    return Err(err(format!(
                        "face needs at least 3 corners, found {}",
                        corners.len()
                    )));
                }
                for k in 1..corners.len() - 1 {
                    let c = [corners[0], corners[k], corners[k + 1]];
                    mesh.triangles.push([c[0].0, c[1].0, c[2].0]);
                    let uv = match (c[0].1, c[1].1, c[2].1) {
                        (Some(a), Some(b), Some(d)) => Some([a, b, d]),
                        _ => None,
                    };
                    match (uv, mesh.triangle_uvs.as_mut()) {
                        (Some(uv), Some(list)) => list.push(uv),
                        _ => mesh.triangle_uvs = None,
                    }
                }
            }
            _ => {}
        }
    }
    if mesh.triangles.is_empty() {
        mesh.triangle_uvs = None;
    }
    Ok(mesh)
}

/// Reads and parses one OBJ file (see [`parse_obj`]).
pub fn read_obj(path: &Path) -> Result<ObjMesh, ViewError> {
    let text = std::fs::read_to_string(path).map_err(|e| ViewError::io(path, e))?;
    parse_obj(&text, path)
}

fn parse_finite(token: &str) -> Result<f64, String> {
    match token.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(_) => Err(format!("value {token:?} is not finite")),
        Err(_) => Err(format!("{token:?} is not a number")),
    }
}

fn resolve_index(token: &str, count: usize, what: &str) -> Result<usize, String> {
    let i: i64 = token
        .parse()
        .map_err(|_| format!("{what} index {token:?} is not an integer"))?;
    let resolved = if i > 0 {
        usize::try_from(i - 1).ok()
    } else if i < 0 {
        usize::try_from(i.unsigned_abs())
            .ok()
            .and_then(|back| count.checked_sub(back))
    } else {
        None
    };
    match resolved {
        Some(r) if r < count => Ok(r),
        _ => Err(format!(
            "{what} index {i} out of range ({count} defined so far)"
        )),
    }
}

/// The `frame_NNNN.obj` files of `dir`, sorted by frame number.
///
/// Returns `(frame number, path)` pairs; an empty directory gives [`ViewError::NoFrames`].
pub fn list_frames(dir: &Path) -> Result<Vec<(usize, PathBuf)>, ViewError> {
    let entries = std::fs::read_dir(dir).map_err(|e| ViewError::io(dir, e))?;
    let mut frames: BTreeMap<usize, PathBuf> = BTreeMap::new();
    for entry in entries {
        let entry = entry.map_err(|e| ViewError::io(dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(digits) = name
            .strip_prefix("frame_")
            .and_then(|rest| rest.strip_suffix(".obj"))
        else {
            continue;
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(frame) = digits.parse::<usize>() else {
            continue;
        };
        let path = entry.path();
        if let Some(first) = frames.get(&frame) {
            let (first, second) = if *first < path {
                (first.clone(), path)
            } else {
                (path, first.clone())
            };
            return Err(ViewError::DuplicateFrame {
                frame,
                first,
                second,
            });
        }
        frames.insert(frame, path);
    }
    if frames.is_empty() {
        return Err(ViewError::NoFrames {
            dir: dir.to_path_buf(),
        });
    }
    Ok(frames.into_iter().collect())
}

/// Frame rate of the run in `dir` (frames per second): `settings.run.fps` of `stats.json`.
///
/// Falls back to [`DEFAULT_FPS`] when the file or the field is absent or not a positive finite
/// number; a file that is not JSON is an error.
pub fn read_fps(dir: &Path) -> Result<f64, ViewError> {
    let path = dir.join("stats.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(DEFAULT_FPS),
        Err(e) => return Err(ViewError::io(path, e)),
    };
    let value = parse_json(&text, &path)?;
    Ok(value
        .pointer("/settings/run/fps")
        .and_then(serde_json::Value::as_f64)
        .filter(|f| f.is_finite() && *f > 0.0)
        .unwrap_or(DEFAULT_FPS))
}

pub(crate) fn parse_json(text: &str, path: &Path) -> Result<serde_json::Value, ViewError> {
    serde_json::from_str(text).map_err(|e| ViewError::Parse {
        path: path.to_path_buf(),
        line: e.line(),
        message: e.to_string(),
    })
}

/// One frame of a collider: a rigid transform and optionally deformed local vertices.
#[derive(Debug, Clone, PartialEq)]
pub struct ColliderFrame {
    /// Rows of the 3x4 affine matrix `[R | t]`, column-vector convention:
    /// world = R * local + t (metres).
    pub matrix: [[f64; 4]; 3],
    /// Local-coordinate vertices for a deforming collider at this frame (metres), or `None` to
    /// use the collider's rest vertices.
    pub vertices: Option<Vec<[f64; 3]>>,
}

impl ColliderFrame {
    /// Applies the frame's matrix to a local point (metres).
    pub fn transform(&self, p: [f64; 3]) -> [f64; 3] {
        let m = &self.matrix;
        std::array::from_fn(|r| m[r][0] * p[0] + m[r][1] * p[1] + m[r][2] * p[2] + m[r][3])
    }
}

/// A collider of `colliders.json`: a triangle mesh moving (and possibly deforming) per frame.
#[derive(Debug, Clone, PartialEq)]
pub struct ColliderTrack {
    /// The collider's name.
    pub name: String,
    /// Rest vertices in local coordinates (metres).
    pub vertices: Vec<[f64; 3]>,
    /// Triangles, 0-based indices into `vertices`.
    pub triangles: Vec<[usize; 3]>,
    /// `frames[k]` is the collider at frame `k`; may be empty (identity, rest vertices).
    pub frames: Vec<ColliderFrame>,
}

impl ColliderTrack {
    /// The collider frame used for animation frame `frame`: `frames[frame]`, the last frame when
    /// the list is shorter, `None` when it is empty (identity transform, rest vertices).
    pub fn frame(&self, frame: usize) -> Option<&ColliderFrame> {
        self.frames.get(frame).or(self.frames.last())
    }

    /// Local vertices at animation frame `frame` (metres).
    pub fn local_vertices(&self, frame: usize) -> &[[f64; 3]] {
        self.frame(frame)
            .and_then(|f| f.vertices.as_deref())
            .unwrap_or(&self.vertices)
    }

    /// World-space vertices at animation frame `frame` (metres).
    pub fn world_vertices(&self, frame: usize) -> Vec<[f64; 3]> {
        let local = self.local_vertices(frame);
        match self.frame(frame) {
            Some(f) => local.iter().map(|&p| f.transform(p)).collect(),
            None => local.to_vec(),
        }
    }

    /// Whether any frame replaces the rest vertices (a deforming collider).
    pub fn is_deforming(&self) -> bool {
        self.frames.iter().any(|f| f.vertices.is_some())
    }
}

#[derive(Deserialize)]
struct CollidersJson {
    #[serde(default)]
    colliders: Vec<ColliderJson>,
}

#[derive(Deserialize)]
struct ColliderJson {
    #[serde(default)]
    name: Option<String>,
    vertices: Vec<[f64; 3]>,
    triangles: Vec<[usize; 3]>,
    #[serde(default)]
    frames: Vec<ColliderFrameJson>,
}

#[derive(Deserialize)]
struct ColliderFrameJson {
    matrix: [[f64; 4]; 3],
    #[serde(default)]
    vertices: Option<Vec<[f64; 3]>>,
}

/// Reads `dir/colliders.json`; an absent file gives no colliders.
///
/// Checks triangle indices and the vertex count of deforming frames. Unnamed colliders are
/// called `collider_<index>`.
pub fn read_colliders(dir: &Path) -> Result<Vec<ColliderTrack>, ViewError> {
    let path = dir.join("colliders.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ViewError::io(path, e)),
    };
    let file: CollidersJson = serde_json::from_str(&text).map_err(|e| ViewError::Parse {
        path: path.clone(),
        line: e.line(),
        message: e.to_string(),
    })?;
    let mut out = Vec::with_capacity(file.colliders.len());
    for (index, c) in file.colliders.into_iter().enumerate() {
        let name = c.name.unwrap_or_else(|| format!("collider_{index}"));
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
    /// Frame numbers from the file names, ascending (frame k is at time k / fps).
    pub frame_numbers: Vec<usize>,
    /// Cloth vertex positions per frame (metres), parallel to `frame_numbers`.
    pub positions: Vec<Vec<[f64; 3]>>,
    /// Cloth triangles (0-based), the same in every frame.
    pub triangles: Vec<[usize; 3]>,
    /// Cloth texture coordinates of the first frame.
    pub uvs: Vec<[f64; 2]>,
    /// Per-corner indices into `uvs`, if every face corner has one.
    pub triangle_uvs: Option<Vec<[usize; 3]>>,
    /// Colliders from `colliders.json` (empty if absent).
    pub colliders: Vec<ColliderTrack>,
    /// Frames per second.
    pub fps: f64,
}

/// Loads every `frame_NNNN.obj`, `stats.json` (for fps) and `colliders.json` of `dir`.
///
/// Frames are parsed in parallel; errors are reported for the lowest failing frame, so the
/// result does not depend on the thread count. Every frame must have the vertex count and the
/// triangles of the first frame.
pub fn load_animation(dir: &Path) -> Result<Animation, ViewError> {
    let files = list_frames(dir)?;
    let fps = read_fps(dir)?;
    let colliders = read_colliders(dir)?;
    let first = read_obj(&files[0].1)?;
    let rest: Vec<Result<Vec<[f64; 3]>, ViewError>> = files[1..]
        .par_iter()
        .map(|(frame, path)| {
            let mesh = read_obj(path)?;
            check_topology(*frame, &first, &mesh)?;
            Ok(mesh.positions)
        })
        .collect();
    let mut positions = Vec::with_capacity(files.len());
    positions.push(first.positions);
    for r in rest {
        positions.push(r?);
    }
    Ok(Animation {
        frame_numbers: files.iter().map(|(f, _)| *f).collect(),
        positions,
        triangles: first.triangles,
        uvs: first.uvs,
        triangle_uvs: first.triangle_uvs,
        colliders,
        fps,
    })
}

fn check_topology(frame: usize, first: &ObjMesh, mesh: &ObjMesh) -> Result<(), ViewError> {
    if mesh.positions.len() != first.positions.len() {
        return Err(ViewError::VertexCountMismatch {
            frame,
            expected: first.positions.len(),
            found: mesh.positions.len(),
        });
    }
    if mesh.triangles.len() != first.triangles.len() {
        return Err(ViewError::TriangleCountMismatch {
            frame,
            expected: first.triangles.len(),
            found: mesh.triangles.len(),
        });
    }
    if let Some(triangle) =
        (0..mesh.triangles.len()).find(|&t| mesh.triangles[t] != first.triangles[t])
    {
        return Err(ViewError::TriangleMismatch {
            frame,
            triangle,
            expected: first.triangles[triangle],
            found: mesh.triangles[triangle],
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
