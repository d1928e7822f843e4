//! Wavefront OBJ input and output.
//!
//! A small hand parser is used instead of `tobj`: `tobj` re-indexes positions per object /
//! group, which would hide seams between panels stored in different groups, and it does not
//! report line numbers for errors.

use std::io::Write;
use std::path::Path;

use crate::{ClothMesh, MeshError, Vec2, Vec3};

/// An OBJ file as written: positions, texture coordinates and triangles with their source
/// lines. This is the workspace's one OBJ reader: cloth meshes ([`parse_obj`]), collider
/// meshes and the viewer's frames are all read through it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObjData {
    /// `v` lines (m).
    pub positions: Vec<Vec3>,
    /// `vt` lines (texture units).
    pub texcoords: Vec<Vec2>,
    /// Triangles as 0-based indices into `positions`; polygons are fan-triangulated
    /// `(c0, ci, ci+1)`, in file order.
    pub triangles: Vec<[usize; 3]>,
    /// Per triangle corner, the 0-based index into `texcoords`, when the corner has one.
    pub triangle_texcoords: Vec<[Option<usize>; 3]>,
    /// 1-based source line of each triangle.
    pub triangle_lines: Vec<usize>,
    /// `o` and `g` names with the index of the first triangle that follows each, in file order.
    pub groups: Vec<(String, usize)>,
}

impl ObjData {
    /// The texture-coordinate triangles, when every corner of every triangle has one; otherwise
    /// the first corner without one as `(triangle, corner)`.
    pub fn uv_triangles(&self) -> Result<Vec<[usize; 3]>, (usize, usize)> {
        self.triangle_texcoords
            .iter()
            .enumerate()
            .map(|(t, c)| match c {
                [Some(a), Some(b), Some(d)] => Ok([*a, *b, *d]),
                _ => Err((t, c.iter().position(Option::is_none).unwrap_or(0))),
            })
            .collect()
    }
}

/// Largest OBJ file the readers accept (bytes): 512 MiB, far above any cloth or body mesh (a
/// million-vertex OBJ is about 60 MB), so that a wrong path (a device, a huge binary) fails at
/// once instead of exhausting memory.
pub const MAX_OBJ_BYTES: u64 = 512 << 20;

/// Reads a UTF-8 text file of at most `limit` bytes; a larger file (or an endless stream such
/// as `/dev/zero`) is refused after reading `limit + 1` bytes, never more.
pub fn read_to_string_limited(path: &Path, limit: u64) -> std::io::Result<String> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    let read = file.take(limit + 1).read_to_end(&mut bytes)?;
    if read as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than the limit of {limit} bytes"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        )
    })
}

/// [`read_to_string_limited`] with the error naming the file.
pub(crate) fn read_text_limited(path: &Path, limit: u64) -> Result<String, MeshError> {
    read_to_string_limited(path, limit).map_err(|source| MeshError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads and parses an OBJ file with [`parse_obj_data`]; files over [`MAX_OBJ_BYTES`] are
/// refused.
pub fn read_obj_data(path: &Path) -> Result<ObjData, MeshError> {
    parse_obj_data(&read_text_limited(path, MAX_OBJ_BYTES)?)
}

/// Parses OBJ text exactly as written.
///
/// - `v x y z` (m) and `vt u v` (texture units); a fourth `v` or third `vt` component is
///   accepted and ignored. Numbers must be finite.
/// - `f` corners `a`, `a/b`, `a//c`, `a/b/c`, 1-based or negative (relative to the end);
///   polygons are fan-triangulated.
/// - `o` and `g` names are recorded in [`ObjData::groups`]; `vn`, `s`, `usemtl`, `mtllib`, `l`,
///   `p` and unknown statements are ignored; `#` starts a comment.
/// - A UTF-8 byte-order mark at the start, CRLF line ends and tabs are accepted.
///
/// Errors name the 1-based line.
pub fn parse_obj_data(text: &str) -> Result<ObjData, MeshError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut d = ObjData::default();
    let mut corners: Vec<(usize, Option<usize>)> = Vec::with_capacity(4);
    for (k, raw) in text.lines().enumerate() {
        let line = k + 1;
        let content = raw.split('#').next().unwrap_or("");
        let mut tokens = content.split_whitespace();
        let Some(head) = tokens.next() else { continue };
        match head {
            "v" => {
                let c = parse_floats(line, "v", 3, tokens)?;
                d.positions.push(Vec3::new(c[0], c[1], c[2]));
            }
            "vt" => {
                let c = parse_floats(line, "vt", 2, tokens)?;
                d.texcoords.push(Vec2::new(c[0], c[1]));
            }
            "o" | "g" => {
                let name = tokens.collect::<Vec<_>>().join(" ");
                d.groups.push((name, d.triangles.len()));
            }
            "f" => {
                corners.clear();
                for tok in tokens {
                    let mut parts = tok.split('/');
                    let v =
                        resolve_index(line, "v", parts.next().unwrap_or(""), d.positions.len())?;
                    let vt = match parts.next() {
                        Some(t) if !t.is_empty() => {
                            Some(resolve_index(line, "vt", t, d.texcoords.len())?)
                        }
                        _ => None,
                    };
                    corners.push((v, vt));
                }
                if corners.len() < 3 {
                    return Err(obj_err(
                        line,
                        format!("face has {} corners, need at least 3", corners.len()),
                    ));
                }
                for i in 1..corners.len() - 1 {
                    let c = [corners[0], corners[i], corners[i + 1]];
                    d.triangles.push(c.map(|c| c.0));
                    d.triangle_texcoords.push(c.map(|c| c.1));
                    d.triangle_lines.push(line);
                }
            }
            _ => {}
        }
    }
    Ok(d)
}

/// Reads an OBJ file into a [`ClothMesh`]; see [`parse_obj`] for the rules.
pub fn read_obj(path: &Path, uv_scale: f64) -> Result<ClothMesh, MeshError> {
    ClothMesh::from_obj(&read_obj_data(path)?, uv_scale)
}

fn obj_err(line: usize, message: impl Into<String>) -> MeshError {
    MeshError::ObjParse {
        line,
        message: crate::sanitize_message(&message.into()),
    }
}

fn parse_floats<'a>(
    line: usize,
    what: &str,
    min: usize,
    mut tokens: impl Iterator<Item = &'a str>,
) -> Result<Vec<f64>, MeshError> {
    let mut out = Vec::with_capacity(min);
    for _ in 0..min {
        let tok = tokens
            .next()
            .ok_or_else(|| obj_err(line, format!("`{what}` needs {min} numbers")))?;
        let x: f64 = tok
            .parse()
            .map_err(|_| obj_err(line, format!("`{what}`: cannot parse number `{tok}`")))?;
        if !x.is_finite() {
            return Err(obj_err(
                line,
                format!("`{what}`: coordinate `{tok}` is not finite"),
            ));
        }
        out.push(x);
    }
    Ok(out)
}

/// Resolves a 1-based (or negative, relative) OBJ index against `count` entries so far.
fn resolve_index(line: usize, kind: &str, tok: &str, count: usize) -> Result<usize, MeshError> {
    let i: i64 = tok
        .parse()
        .map_err(|_| obj_err(line, format!("cannot parse {kind} index `{tok}`")))?;
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
        _ => Err(obj_err(
            line,
            format!("{kind} index {i} out of range ({count} defined so far)"),
        )),
    }
}

/// Parses OBJ text into a [`ClothMesh`] ([`parse_obj_data`], then [`ClothMesh::from_obj`]).
pub fn parse_obj(text: &str, uv_scale: f64) -> Result<ClothMesh, MeshError> {
    ClothMesh::from_obj(&parse_obj_data(text)?, uv_scale)
}

impl ClothMesh {
    /// Builds a cloth mesh from OBJ data.
    ///
    /// - `v` are world positions (m); `vt` are rest coordinates, multiplied by `uv_scale`
    ///   (m per texture unit) to give rest (u, v) in metres. `uv_scale` must be finite and
    ///   positive.
    /// - **A cloth vertex is a unique `(v, vt)` pair** used by some face. A position used with
    ///   several texture coordinates (a UV seam) becomes several cloth vertices, so seams are
    ///   boundary edges in rest space (garment panels). Cloth vertices are numbered in
    ///   ascending `(v index, vt index)` order; [`ClothMesh::original_position_index`] gives the
    ///   0-based `v` index of each and [`ClothMesh::seam_groups`] lists the split positions, so
    ///   callers can weld seams with constraints or springs. Positions used by no face are
    ///   dropped.
    /// - Every corner needs a `vt` index ([`MeshError::MissingUv`] otherwise).
    /// - The result is validated by [`ClothMesh::new`]: in particular every triangle must be
    ///   counter-clockwise in (u, v) (mirrored UV islands are rejected). Such errors come
    ///   wrapped in [`MeshError::ObjMesh`] with the line of the offending face; the inner
    ///   error's indices refer to cloth vertices and triangles as numbered above.
    pub fn from_obj(obj: &ObjData, uv_scale: f64) -> Result<ClothMesh, MeshError> {
        if !(uv_scale.is_finite() && uv_scale > 0.0) {
            return Err(MeshError::InvalidParameter {
                name: "uv_scale",
                reason: format!("must be finite and positive, got {uv_scale}"),
            });
        }
        let uv = obj
            .uv_triangles()
            .map_err(|(t, corner)| MeshError::MissingUv {
                line: obj.triangle_lines.get(t).copied().unwrap_or(0),
                corner,
            })?;
        let faces: Vec<[(usize, usize); 3]> = obj
            .triangles
            .iter()
            .zip(&uv)
            .map(|(p, t)| [0, 1, 2].map(|k| (p[k], t[k])))
            .collect();
        let mut pairs: Vec<(usize, usize)> = faces.iter().flatten().copied().collect();
        pairs.sort_unstable();
        pairs.dedup();
        let index_of = |p: &(usize, usize)| pairs.binary_search(p).unwrap_or(usize::MAX);
        let triangles: Vec<[usize; 3]> = faces
            .iter()
            .map(|f| [index_of(&f[0]), index_of(&f[1]), index_of(&f[2])])
            .collect();
        let positions = pairs.iter().map(|&(v, _)| obj.positions[v]).collect();
        let rest = pairs
            .iter()
            .map(|&(_, t)| obj.texcoords[t] * uv_scale)
            .collect();
        let mut mesh = match ClothMesh::new(positions, rest, triangles.clone()) {
            Ok(m) => m,
            Err(e) => return Err(with_obj_line(e, &triangles, &obj.triangle_lines)),
        };
        mesh.set_original_position_indices(pairs.iter().map(|&(v, _)| v).collect())?;
        Ok(mesh)
    }
}

/// Wraps a validation error with the OBJ line of the face that caused it, when known.
fn with_obj_line(err: MeshError, triangles: &[[usize; 3]], face_lines: &[usize]) -> MeshError {
    let first_use = |v: usize| triangles.iter().position(|t| t.contains(&v));
    let triangle = match &err {
        MeshError::IndexOutOfRange { triangle, .. }
        | MeshError::RepeatedVertex { triangle, .. }
        | MeshError::DegenerateRestTriangle { triangle, .. }
        | MeshError::ClockwiseRestTriangle { triangle, .. } => Some(*triangle),
        MeshError::NonManifoldEdge { triangles, .. } => triangles.last().copied(),
        MeshError::InconsistentWinding { triangles, .. } => Some(triangles[1]),
        MeshError::NonFinitePosition { vertex }
        | MeshError::NonFiniteRest { vertex }
        | MeshError::IsolatedVertex { vertex } => first_use(*vertex),
        _ => None,
    };
    match triangle.and_then(|t| face_lines.get(t)) {
        Some(&line) => MeshError::ObjMesh {
            line,
            source: Box::new(err),
        },
        None => err,
    }
}

/// Writes `mesh` with the given world `positions` (m) as OBJ text.
///
/// Output: one `v` per cloth vertex in cloth-vertex order, one `vt` per cloth vertex holding
/// the raw rest (u, v) in metres (read it back with `uv_scale = 1`), one `vn` per cloth
/// vertex ([`ClothMesh::vertex_normals`] of `positions`), and one `f a/a/a` per triangle
/// (1-based). The vertex count and order are those of the mesh whatever the positions, so
/// every frame of a run has the same layout (seam copies are written as they are simulated,
/// even where they coincide). [`parse_obj`]`(text, 1.0)` of the output reproduces the
/// triangles, positions and rest coordinates exactly (numbers are written in shortest
/// round-trip form).
///
/// Errors (`InvalidInput`) if `positions.len() != mesh.num_vertices()` or a position is
/// not finite.
pub fn write_obj(w: &mut dyn Write, mesh: &ClothMesh, positions: &[Vec3]) -> std::io::Result<()> {
    let n = mesh.num_vertices();
    if positions.len() != n {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} positions for a mesh of {n} vertices", positions.len()),
        ));
    }
    if let Some(v) = positions
        .iter()
        .position(|p| !(p.x.is_finite() && p.y.is_finite() && p.z.is_finite()))
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("vertex {v}: position is not finite"),
        ));
    }
    writeln!(
        w,
        "# cloth-mesh: {} vertices, {} triangles; vt are rest (u, v) in metres",
        n,
        mesh.num_triangles()
    )?;
    for p in positions {
        writeln!(w, "v {} {} {}", p.x, p.y, p.z)?;
    }
    for r in mesh.rest() {
        writeln!(w, "vt {} {}", r.x, r.y)?;
    }
    for nrm in mesh.vertex_normals(positions) {
        writeln!(w, "vn {} {} {}", nrm.x, nrm.y, nrm.z)?;
    }
    for tri in mesh.triangles() {
        let [a, b, c] = tri.map(|v| v + 1);
        writeln!(w, "f {a}/{a}/{a} {b}/{b}/{b} {c}/{c}/{c}")?;
    }
    Ok(())
}

/// Writes an OBJ file (see [`write_obj`]) atomically with [`crate::write_atomic`], so readers
/// never see a partial file.
pub fn write_obj_file_atomic(
    path: &Path,
    mesh: &ClothMesh,
    positions: &[Vec3],
) -> Result<(), MeshError> {
    crate::write_atomic(path, |w| write_obj(w, mesh, positions)).map_err(|source| MeshError::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn obj_indices_are_one_based_or_relative() {
        assert_eq!(resolve_index(1, "v", "1", 3).unwrap(), 0);
        assert_eq!(resolve_index(1, "v", "3", 3).unwrap(), 2);
        assert_eq!(resolve_index(1, "v", "-1", 3).unwrap(), 2);
        assert_eq!(resolve_index(1, "v", "-3", 3).unwrap(), 0);
        for bad in ["0", "4", "-4", "x", "", "99999999999999999999"] {
            assert!(resolve_index(5, "v", bad, 3).is_err(), "{bad}");
        }
    }
}
