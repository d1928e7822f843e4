//! Wavefront OBJ input and output.
//!
//! A small hand parser is used instead of `tobj`: `tobj` re-indexes positions per object /
//! group, which would hide seams between panels stored in different groups, and it does not
//! report line numbers for errors.

use std::io::Write;
use std::path::Path;

use crate::{ClothMesh, MeshError, Vec2, Vec3};

/// Reads an OBJ file into a [`ClothMesh`]; see [`parse_obj`] for the rules.
pub fn read_obj(path: &Path, uv_scale: f64) -> Result<ClothMesh, MeshError> {
    let text = std::fs::read_to_string(path).map_err(|source| MeshError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_obj(&text, uv_scale)
}

fn obj_err(line: usize, message: impl Into<String>) -> MeshError {
    MeshError::ObjParse {
        line,
        message: message.into(),
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

/// Parses OBJ text into a [`ClothMesh`].
///
/// - `v x y z` are world positions (m); `vt u v` are rest coordinates, multiplied by
///   `uv_scale` (m per texture unit) to give rest (u, v) in metres. `uv_scale` must be
///   finite and positive.
/// - **A cloth vertex is a unique `(v, vt)` pair** used by some face. A position used with
///   several texture coordinates (a UV seam) becomes several cloth vertices, so seams are
///   boundary edges in rest space (garment panels). Cloth vertices are numbered in
///   ascending `(v index, vt index)` order; [`ClothMesh::original_position_index`] gives the
///   0-based `v` index of each and [`ClothMesh::seam_groups`] lists the split positions, so
///   callers can weld seams with constraints or springs. Positions used by no face are dropped.
/// - Faces with more than three corners are fan-triangulated `(c0, ci, ci+1)`; triangles
///   are numbered in file order. Every corner needs a `vt` index
///   ([`MeshError::MissingUv`] otherwise); `vn` indices are accepted and ignored. Negative
///   (relative) indices are supported.
/// - `vn`, `o`, `g`, `s`, `usemtl`, `mtllib`, `l`, `p` and unknown statements are ignored;
///   `#` starts a comment.
/// - The result is validated by [`ClothMesh::new`]: in particular every triangle must be
///   counter-clockwise in (u, v) (mirrored UV islands are rejected). Such errors come
///   wrapped in [`MeshError::ObjMesh`] with the line of the offending face; the inner
///   error's indices refer to cloth vertices and triangles as numbered above.
///   Non-finite numbers (`nan`, `inf`) are rejected at their `v` / `vt` line.
pub fn parse_obj(text: &str, uv_scale: f64) -> Result<ClothMesh, MeshError> {
    if !(uv_scale.is_finite() && uv_scale > 0.0) {
        return Err(MeshError::InvalidParameter {
            name: "uv_scale",
            reason: format!("must be finite and positive, got {uv_scale}"),
        });
    }
    let mut pos: Vec<Vec3> = Vec::new();
    let mut tex: Vec<Vec2> = Vec::new();
    // Triangles as (v index, vt index) corners.
    let mut faces: Vec<[(usize, usize); 3]> = Vec::new();
    // 1-based source line of each triangle.
    let mut face_lines: Vec<usize> = Vec::new();
    for (k, raw) in text.lines().enumerate() {
        let line = k + 1;
        let content = raw.split('#').next().unwrap_or("");
        let mut tokens = content.split_whitespace();
        let Some(head) = tokens.next() else { continue };
        match head {
            "v" => {
                let c = parse_floats(line, "v", 3, tokens)?;
                pos.push(Vec3::new(c[0], c[1], c[2]));
            }
            "vt" => {
                let c = parse_floats(line, "vt", 2, tokens)?;
                tex.push(Vec2::new(c[0], c[1]));
            }
            "f" => {
                let mut corners = Vec::with_capacity(4);
                for (corner, tok) in tokens.enumerate() {
                    let mut parts = tok.split('/');
                    let v_tok = parts.next().unwrap_or("");
                    let v = resolve_index(line, "v", v_tok, pos.len())?;
                    let vt_tok = parts.next().unwrap_or("");
                    if vt_tok.is_empty() {
                        return Err(MeshError::MissingUv { line, corner });
                    }
                    let vt = resolve_index(line, "vt", vt_tok, tex.len())?;
                    corners.push((v, vt));
                }
                if corners.len() < 3 {
                    return Err(obj_err(
                        line,
                        format!("face has {} corners, need at least 3", corners.len()),
                    ));
                }
                for i in 1..corners.len() - 1 {
                    faces.push([corners[0], corners[i], corners[i + 1]]);
                    face_lines.push(line);
                }
            }
            _ => {}
        }
    }
    let mut pairs: Vec<(usize, usize)> = faces.iter().flatten().copied().collect();
    pairs.sort_unstable();
    pairs.dedup();
    let index_of = |p: &(usize, usize)| pairs.binary_search(p).unwrap_or(usize::MAX);
    let triangles: Vec<[usize; 3]> = faces
        .iter()
        .map(|f| [index_of(&f[0]), index_of(&f[1]), index_of(&f[2])])
        .collect();
    let positions = pairs.iter().map(|&(v, _)| pos[v]).collect();
    let rest = pairs.iter().map(|&(_, t)| tex[t] * uv_scale).collect();
    let mut mesh = match ClothMesh::new(positions, rest, triangles.clone()) {
        Ok(m) => m,
        Err(e) => return Err(with_obj_line(e, &triangles, &face_lines)),
    };
    mesh.set_original_position_indices(pairs.iter().map(|&(v, _)| v).collect())?;
    Ok(mesh)
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
/// Output: one `vt` per cloth vertex holding the raw rest (u, v) in metres (read it back with
/// `uv_scale = 1`), one `vn` per cloth vertex ([`ClothMesh::vertex_normals`] of
/// `positions`), and one `f a/a/a` per triangle (1-based). Positions: if every seam group
/// (vertices sharing an [`ClothMesh::original_position_index`]) has bit-identical positions,
/// one `v` is written per distinct original position, in ascending original index, so a
/// re-read mesh keeps its seams; otherwise one `v` per cloth vertex. Either way,
/// [`parse_obj`]`(text, 1.0)` of the output reproduces the triangles, positions and rest
/// coordinates exactly (numbers are written in shortest round-trip form) whenever the
/// cloth vertices are in ascending original-index order, as for every mesh built by this
/// crate.
///
/// Errors (`InvalidInput`) if `positions.len() != mesh.num_vertices()` or a position is
/// not finite.
pub fn write_obj(w: &mut impl Write, mesh: &ClothMesh, positions: &[Vec3]) -> std::io::Result<()> {
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
    let original = mesh.original_position_indices();
    // Distinct original indices ascending, and each vertex's slot among them.
    let mut distinct: Vec<usize> = original.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let slot: Vec<usize> = original
        .iter()
        .map(|o| distinct.binary_search(o).unwrap_or(0))
        .collect();
    let mut rep: Vec<Option<usize>> = vec![None; distinct.len()];
    let mut welded = true;
    for v in 0..n {
        match rep[slot[v]] {
            None => rep[slot[v]] = Some(v),
            Some(r) => {
                let (a, b) = (positions[r], positions[v]);
                if a.iter()
                    .zip(b.iter())
                    .any(|(x, y)| x.to_bits() != y.to_bits())
                {
                    welded = false;
                }
            }
        }
    }
    writeln!(
        w,
        "# cloth-mesh: {} vertices, {} triangles; vt are rest (u, v) in metres",
        n,
        mesh.num_triangles()
    )?;
    if welded {
        for r in rep.iter().flatten() {
            let p = positions[*r];
            writeln!(w, "v {} {} {}", p.x, p.y, p.z)?;
        }
    } else {
        for p in positions {
            writeln!(w, "v {} {} {}", p.x, p.y, p.z)?;
        }
    }
    for r in mesh.rest() {
        writeln!(w, "vt {} {}", r.x, r.y)?;
    }
    for nrm in mesh.vertex_normals(positions) {
        writeln!(w, "vn {} {} {}", nrm.x, nrm.y, nrm.z)?;
    }
    for tri in mesh.triangles() {
        let pi = |v: usize| if welded { slot[v] + 1 } else { v + 1 };
        writeln!(
            w,
            "f {}/{}/{} {}/{}/{} {}/{}/{}",
            pi(tri[0]),
            tri[0] + 1,
            tri[0] + 1,
            pi(tri[1]),
            tri[1] + 1,
            tri[1] + 1,
            pi(tri[2]),
            tri[2] + 1,
            tri[2] + 1
        )?;
    }
    Ok(())
}

/// Writes an OBJ file (see [`write_obj`]) atomically: the data goes to a temporary file in
/// the same directory, is flushed and synced, then renamed over `path`, so readers never
/// see a partial file. On error the temporary file is removed.
pub fn write_obj_file_atomic(
    path: &Path,
    mesh: &ClothMesh,
    positions: &[Vec3],
) -> Result<(), MeshError> {
    let io_err = |source| MeshError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file_name = path.file_name().ok_or_else(|| {
        io_err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "path has no file name",
        ))
    })?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let result = (|| {
        let file = std::fs::File::create(&tmp)?;
        let mut buf = std::io::BufWriter::new(file);
        write_obj(&mut buf, mesh, positions)?;
        let file = buf.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_err(e));
    }
    Ok(())
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
