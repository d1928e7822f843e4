//! Wavefront OBJ input and output.
//!
//! A small hand parser is used instead of `tobj`: `tobj` re-indexes positions per object /
//! group, which would hide seams between panels stored in different groups, and it does not
//! report line numbers for errors.

use std::collections::HashMap;
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
pub fn read_to_string_limited(path: impl AsRef<Path>, limit: u64) -> std::io::Result<String> {
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
pub fn read_obj_data(path: impl AsRef<Path>) -> Result<ObjData, MeshError> {
    parse_obj_data(&read_text_limited(path.as_ref(), MAX_OBJ_BYTES)?)
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

/// Reads an OBJ file into a [`ClothMesh`] with the default [`ObjImport`] and this `uv_scale`;
/// see [`ClothMesh::from_obj_with`] for the rules.
pub fn read_obj(path: impl AsRef<Path>, uv_scale: f64) -> Result<ClothMesh, MeshError> {
    ClothMesh::from_obj(&read_obj_data(path)?, uv_scale)
}

/// Where a cloth mesh read from OBJ takes its rest shape (scene key `cloth.mesh.rest`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum RestShape {
    /// [`RestShape::Uv`] when every face corner has a `vt`, [`RestShape::Mesh`] otherwise
    /// (the default).
    #[default]
    Auto,
    /// Rest (u, v) of each corner = its `vt` times `uv_scale` (m). Flat rest: the texture
    /// layout is the sewing pattern.
    Uv,
    /// Each triangle flattened as modelled: its 3-D edge lengths and angles are its rest
    /// shape. The material's u axis in a triangle is world x projected onto the triangle's
    /// plane (world z when the triangle faces x exactly) and v is `n x u` (n the triangle's
    /// right-hand normal), so the corners stay counter-clockwise; rest (u, v) are the
    /// positions' coordinates along these axes (m). Only the axis matters for anisotropic
    /// materials (its sign flips nothing), and it is undefined for triangles facing +-x.
    Mesh,
}

/// How [`ClothMesh::from_obj_with`] makes a cloth mesh of OBJ data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObjImport {
    /// Rest shape source (default [`RestShape::Auto`]).
    pub rest: RestShape,
    /// Metres per texture unit for [`RestShape::Uv`] (default 1), finite and > 0.
    pub uv_scale: f64,
    /// `true`: a cloth vertex is a `(v, vt)` pair, so UV seams split the cloth into panels
    /// (the reader's behaviour before per-corner rest coordinates). `false` (default): one
    /// particle per OBJ position used by a face.
    pub split_seams: bool,
}

impl Default for ObjImport {
    fn default() -> Self {
        Self {
            rest: RestShape::Auto,
            uv_scale: 1.0,
            split_seams: false,
        }
    }
}

impl ObjImport {
    /// The rest shape these settings give for `obj`: [`RestShape::Uv`] or
    /// [`RestShape::Mesh`] (never `Auto`).
    pub fn resolve(&self, obj: &ObjData) -> RestShape {
        match self.rest {
            RestShape::Auto if obj.uv_triangles().is_ok() => RestShape::Uv,
            RestShape::Auto => RestShape::Mesh,
            r => r,
        }
    }
}

/// Rest (u, v) coordinates (m) of a triangle flattened as modelled ([`RestShape::Mesh`]);
/// zeros for a triangle without area (reported by the mesh validation).
pub fn flatten_triangle(p: [Vec3; 3]) -> [Vec2; 3] {
    let n = (p[1] - p[0]).cross(&(p[2] - p[0]));
    let len = n.norm();
    if !(len > 0.0 && len.is_finite()) {
        return [Vec2::zeros(); 3];
    }
    let n = n / len;
    let project = |a: Vec3| a - n * n.dot(&a);
    let mut u = project(Vec3::x());
    if u.norm() < 1e-12 {
        u = project(Vec3::z());
    }
    let u = u.normalize();
    let v = n.cross(&u);
    p.map(|q| Vec2::new(q.dot(&u), q.dot(&v)))
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
    /// [`ClothMesh::from_obj_with`] with the default [`ObjImport`] (rest from `vt` when every
    /// corner has one, else as modelled; one particle per position) and this `uv_scale`.
    pub fn from_obj(obj: &ObjData, uv_scale: f64) -> Result<ClothMesh, MeshError> {
        Self::from_obj_with(
            obj,
            &ObjImport {
                uv_scale,
                ..ObjImport::default()
            },
        )
    }

    /// Builds a cloth mesh from OBJ data.
    ///
    /// - `v` are world positions (m). **A cloth vertex (particle) is an OBJ position** used by
    ///   some face, numbered in ascending `v` order (positions used by no face are dropped);
    ///   with `split_seams` it is a unique `(v, vt)` pair instead, numbered in ascending
    ///   `(v, vt)` order, so a position on a UV seam becomes several vertices (the panels are
    ///   separate; [`ClothMesh::seam_groups`] lists them for welding).
    ///   [`ClothMesh::original_position_index`] gives the 0-based `v` index of each vertex.
    /// - Rest coordinates per triangle corner ([`RestShape`]): `vt * uv_scale` (m) for
    ///   [`RestShape::Uv`], the modelled triangle flattened for [`RestShape::Mesh`]. A UV seam
    ///   therefore does not split the cloth: each triangle takes its rest shape from its own
    ///   corners.
    /// - `Uv` and `split_seams` need a `vt` on every corner ([`MeshError::MissingUv`]);
    ///   `uv_scale` must be finite and positive.
    /// - The result is validated by [`ClothMesh::from_corner_rest`]: in particular every
    ///   triangle must be counter-clockwise in (u, v) (mirrored UV islands are rejected). Such
    ///   errors come wrapped in [`MeshError::ObjMesh`] with the line of the offending face;
    ///   the inner error's indices refer to cloth vertices and triangles as numbered above.
    pub fn from_obj_with(obj: &ObjData, opts: &ObjImport) -> Result<ClothMesh, MeshError> {
        let uv_scale = opts.uv_scale;
        if !(uv_scale.is_finite() && uv_scale > 0.0) {
            return Err(MeshError::InvalidParameter {
                name: "uv_scale",
                reason: format!("must be finite and positive, got {uv_scale}"),
            });
        }
        let rest = opts.resolve(obj);
        let uv = if rest == RestShape::Uv || opts.split_seams {
            Some(
                obj.uv_triangles()
                    .map_err(|(t, corner)| MeshError::MissingUv {
                        line: obj.triangle_lines.get(t).copied().unwrap_or(0),
                        corner,
                    })?,
            )
        } else {
            None
        };
        let key = |t: usize, k: usize| {
            let vt = match (&uv, opts.split_seams) {
                (Some(uv), true) => uv[t][k],
                _ => 0,
            };
            (obj.triangles[t][k], vt)
        };
        let faces: Vec<[(usize, usize); 3]> = (0..obj.triangles.len())
            .map(|t| [0, 1, 2].map(|k| key(t, k)))
            .collect();
        let mut pairs: Vec<(usize, usize)> = faces.iter().flatten().copied().collect();
        pairs.sort_unstable();
        pairs.dedup();
        let index_of = |p: &(usize, usize)| pairs.binary_search(p).unwrap_or(usize::MAX);
        let triangles: Vec<[usize; 3]> = faces.iter().map(|f| f.map(|c| index_of(&c))).collect();
        let positions = pairs.iter().map(|&(v, _)| obj.positions[v]).collect();
        let corners: Vec<[Vec2; 3]> = match (rest, &uv) {
            (RestShape::Uv, Some(uv)) => uv
                .iter()
                .map(|t| t.map(|i| obj.texcoords[i] * uv_scale))
                .collect(),
            _ => obj
                .triangles
                .iter()
                .map(|t| flatten_triangle(t.map(|v| obj.positions[v])))
                .collect(),
        };
        let mut mesh = match ClothMesh::from_corner_rest(positions, corners, triangles.clone()) {
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
        MeshError::NonFiniteCornerRest { triangle, .. } => Some(*triangle),
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
/// Output: one `v` per cloth vertex (particle) in vertex order, one `vt` per distinct corner
/// rest coordinate (the raw rest (u, v) in metres, in order of first use by the triangles;
/// read it back with `uv_scale = 1`), one `vn` per vertex ([`ClothMesh::vertex_normals`] of
/// `positions`), and one `f v/vt/vn` per triangle (1-based). The vertex count and order are
/// those of the mesh whatever the positions, so every frame of a run has the same layout.
/// [`parse_obj`]`(text, 1.0)` of the output reproduces the vertices, triangles, positions and
/// corner rest coordinates exactly (numbers are written in shortest round-trip form), also
/// for meshes whose seams were split ([`ObjImport::split_seams`]): each split copy is its own
/// `v`.
///
/// Errors (`InvalidInput`) if `positions.len() != mesh.num_vertices()` or a position is
/// not finite.
pub fn write_obj(w: &mut dyn Write, mesh: &ClothMesh, positions: &[Vec3]) -> std::io::Result<()> {
    write_obj_grouped(w, mesh, positions, &[])
}

/// [`write_obj`] with named groups: `groups[k] = (name, first triangle)` writes `o name` before
/// that triangle (first triangles ascending, as in [`ObjData::groups`]; the reader gives the
/// same list back). Names are written on one line (line breaks become spaces). Errors
/// (`InvalidInput`) as [`write_obj`], or if the first triangles are not ascending and in range.
pub fn write_obj_grouped(
    w: &mut dyn Write,
    mesh: &ClothMesh,
    positions: &[Vec3],
    groups: &[(String, usize)],
) -> std::io::Result<()> {
    ObjFrames::new(mesh, groups)?.write(w, mesh, positions)
}

/// OBJ frames of one mesh ([`write_obj_grouped`]'s output, byte for byte), for a run that
/// writes many: what every frame shares (header, `vt` lines, faces and groups) is formatted
/// once by [`ObjFrames::new`], so a frame costs only its `v` and `vn` lines.
#[derive(Clone, Debug)]
pub struct ObjFrames {
    vertices: usize,
    triangles: usize,
    /// The comment line that opens a frame.
    header: Vec<u8>,
    /// `vt` lines.
    texcoords: Vec<u8>,
    /// `o` and `f` lines.
    faces: Vec<u8>,
}

impl ObjFrames {
    /// Formats the parts of `mesh`'s frames that do not depend on the positions, with named
    /// `groups` as in [`write_obj_grouped`]. Errors (`InvalidInput`) if the first triangles
    /// of `groups` are not ascending and in range.
    pub fn new(mesh: &ClothMesh, groups: &[(String, usize)]) -> std::io::Result<Self> {
        if groups.windows(2).any(|g| g[1].1 < g[0].1)
            || groups.iter().any(|g| g.1 > mesh.num_triangles())
        {
            return Err(invalid_input(
                "group first triangles must be ascending and in range".into(),
            ));
        }
        // One vt per distinct corner coordinate, in order of first use.
        let mut vt_of: HashMap<[u64; 2], usize> = HashMap::new();
        let mut vts: Vec<Vec2> = Vec::new();
        let corner_vt: Vec<[usize; 3]> = mesh
            .corner_rest()
            .iter()
            .map(|c| {
                c.map(|r| {
                    *vt_of
                        .entry([r.x.to_bits(), r.y.to_bits()])
                        .or_insert_with(|| {
                            vts.push(r);
                            vts.len() - 1
                        })
                })
            })
            .collect();
        let mut header = Vec::new();
        writeln!(
            header,
            "# cloth-mesh: {} vertices, {} triangles; vt are rest (u, v) in metres per corner",
            mesh.num_vertices(),
            mesh.num_triangles()
        )?;
        let mut texcoords = Vec::new();
        for r in &vts {
            float_line(&mut texcoords, b"vt", &[r.x, r.y]);
        }
        let mut faces = Vec::new();
        let mut next_group = 0;
        for (t, (tri, tv)) in mesh.triangles().iter().zip(&corner_vt).enumerate() {
            while next_group < groups.len() && groups[next_group].1 == t {
                writeln!(
                    faces,
                    "o {}",
                    groups[next_group].0.replace(['\n', '\r'], " ")
                )?;
                next_group += 1;
            }
            let [a, b, c] = tri.map(|v| v + 1);
            let [ta, tb, tc] = tv.map(|v| v + 1);
            writeln!(faces, "f {a}/{ta}/{a} {b}/{tb}/{b} {c}/{tc}/{c}")?;
        }
        for g in &groups[next_group..] {
            writeln!(faces, "o {}", g.0.replace(['\n', '\r'], " "))?;
        }
        Ok(ObjFrames {
            vertices: mesh.num_vertices(),
            triangles: mesh.num_triangles(),
            header,
            texcoords,
            faces,
        })
    }

    /// Writes the frame of `mesh` (the mesh given to [`ObjFrames::new`]; its vertex and
    /// triangle counts are checked) at world `positions` (m). Errors (`InvalidInput`) as
    /// [`write_obj`].
    pub fn write(
        &self,
        w: &mut dyn Write,
        mesh: &ClothMesh,
        positions: &[Vec3],
    ) -> std::io::Result<()> {
        let n = self.vertices;
        if mesh.num_vertices() != n || mesh.num_triangles() != self.triangles {
            return Err(invalid_input(format!(
                "a mesh of {} vertices and {} triangles for frames of {n} and {}",
                mesh.num_vertices(),
                mesh.num_triangles(),
                self.triangles
            )));
        }
        if positions.len() != n {
            return Err(invalid_input(format!(
                "{} positions for a mesh of {n} vertices",
                positions.len()
            )));
        }
        if let Some(v) = positions
            .iter()
            .position(|p| !(p.x.is_finite() && p.y.is_finite() && p.z.is_finite()))
        {
            return Err(invalid_input(format!("vertex {v}: position is not finite")));
        }
        w.write_all(&self.header)?;
        vector_lines(w, b"v", positions.iter().copied())?;
        w.write_all(&self.texcoords)?;
        vector_lines(w, b"vn", mesh.vertex_normals(positions).into_iter())?;
        w.write_all(&self.faces)
    }

    /// [`ObjFrames::write`] to a file, atomically ([`crate::write_atomic`]).
    pub fn write_file_atomic(
        &self,
        path: impl AsRef<Path>,
        mesh: &ClothMesh,
        positions: &[Vec3],
    ) -> Result<(), MeshError> {
        let path = path.as_ref();
        crate::write_atomic(path, |w| self.write(w, mesh, positions)).map_err(|source| {
            MeshError::Io {
                path: path.to_path_buf(),
                source,
            }
        })
    }
}

fn invalid_input(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, message)
}

/// Bytes of `v` / `vn` lines [`ObjFrames::write`] gathers before it passes them on.
const LINE_CHUNK: usize = 1 << 16;

/// Writes one `tag x y z` line per vector, in pieces of about [`LINE_CHUNK`] bytes, so a
/// frame needs no buffer of its size (30 MB at 100k vertices).
fn vector_lines(
    w: &mut dyn Write,
    tag: &[u8],
    vectors: impl Iterator<Item = Vec3>,
) -> std::io::Result<()> {
    let mut lines = Vec::with_capacity(LINE_CHUNK + 128);
    for p in vectors {
        float_line(&mut lines, tag, &[p.x, p.y, p.z]);
        if lines.len() >= LINE_CHUNK {
            w.write_all(&lines)?;
            lines.clear();
        }
    }
    w.write_all(&lines)
}

/// Appends `tag x y ...` and a line break, numbers in shortest round-trip form.
fn float_line(out: &mut Vec<u8>, tag: &[u8], values: &[f64]) {
    let mut buf = zmij::Buffer::new();
    out.extend_from_slice(tag);
    for &x in values {
        out.push(b' ');
        out.extend_from_slice(buf.format(x).as_bytes());
    }
    out.push(b'\n');
}

/// Writes an OBJ file (see [`write_obj`]) atomically with [`crate::write_atomic`], so readers
/// never see a partial file.
pub fn write_obj_file_atomic(
    path: impl AsRef<Path>,
    mesh: &ClothMesh,
    positions: &[Vec3],
) -> Result<(), MeshError> {
    write_obj_file_atomic_grouped(path, mesh, positions, &[])
}

/// [`write_obj_file_atomic`] with named groups (see [`write_obj_grouped`]).
pub fn write_obj_file_atomic_grouped(
    path: impl AsRef<Path>,
    mesh: &ClothMesh,
    positions: &[Vec3],
    groups: &[(String, usize)],
) -> Result<(), MeshError> {
    let path = path.as_ref();
    let frames = ObjFrames::new(mesh, groups).map_err(|source| MeshError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    frames.write_file_atomic(path, mesh, positions)
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
