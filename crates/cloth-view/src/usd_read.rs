//! Reading back the ASCII USD stages [`crate::write_usd`] writes, so that a run kept only as
//! `animation.usda` (`cloth run --format usd`) can still be rendered.
//!
//! This is a reader of exactly that format, not of USD in general: one statement per line as
//! the writer lays them out, the metadata, attributes and prims it writes and nothing else.
//! Anything unknown or malformed is refused with [`ViewError::Parse`] naming the line.

use crate::ViewError;
use crate::frames::{Animation, ColliderFrame, ColliderTrack};
use std::collections::HashSet;
use std::path::Path;

/// Reads a stage written by [`crate::write_usd`] (see [`parse_usd`]).
pub fn read_usd(path: &Path) -> Result<Animation, ViewError> {
    let text = std::fs::read_to_string(path).map_err(|e| ViewError::io(path, e))?;
    parse_usd(&text, path)
}

/// Parses the text of a stage written by [`crate::write_usd_stage`] back into an [`Animation`].
/// `path` is only used in error messages.
///
/// - Cloth (`/World/cloth`): one frame per `points` time sample (time code = frame number),
///   triangles from `faceVertexIndices`, texture coordinates from `primvars:st` and its
///   indices. Positions read back bit for bit.
/// - Every other `Mesh` under `/World` is a collider named after its prim: local points (rest,
///   or one sample per frame 0, 1, 2, ... for a deforming collider, whose rest vertices are then
///   those of frame 0) and the `xformOp:transform` samples turned back into 3x4 matrices
///   (`world = M * local`).
/// - The frame rate is `timeCodesPerSecond`; the stage must be y up in metres.
///
/// Refused with the line: another header, unknown metadata, prims or attributes, malformed or
/// non-finite numbers, faces that are not triangles, indices out of range, samples of
/// different sizes, time codes that are not ascending frame numbers, transforms that are not
/// affine.
pub fn parse_usd(text: &str, path: &Path) -> Result<Animation, ViewError> {
    Parser {
        lines: text.lines().enumerate(),
        path,
        last: 0,
    }
    .stage()
}

/// Time samples: `(line, time code, value)`, time codes ascending.
type Samples<T> = Vec<(usize, usize, T)>;

/// The attributes of one `def Mesh` prim that matter, each with its line.
#[derive(Default)]
struct RawMesh {
    counts: Option<(usize, Vec<usize>)>,
    indices: Option<(usize, Vec<usize>)>,
    points: Option<(usize, Vec<[f64; 3]>)>,
    point_samples: Option<(usize, Samples<Vec<[f64; 3]>>)>,
    st: Option<(usize, Vec<[f64; 2]>)>,
    st_indices: Option<(usize, Vec<usize>)>,
    transforms: Option<(usize, Samples<[[f64; 4]; 4]>)>,
}

/// A `def Mesh` prim: its line, name and attributes.
struct Prim<'a> {
    line: usize,
    name: &'a str,
    mesh: RawMesh,
}

struct Parser<'a> {
    lines: std::iter::Enumerate<std::str::Lines<'a>>,
    path: &'a Path,
    /// Number of the last line read (1-based).
    last: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, line: usize, message: impl Into<String>) -> ViewError {
        ViewError::Parse {
            path: self.path.to_path_buf(),
            line,
            message: message.into(),
        }
    }

    /// The next non-blank line, trimmed, with its number; the end of the text is an error.
    fn next(&mut self) -> Result<(usize, &'a str), ViewError> {
        for (i, raw) in self.lines.by_ref() {
            self.last = i + 1;
            let t = raw.trim();
            if !t.is_empty() {
                return Ok((i + 1, t));
            }
        }
        Err(self.err(self.last, "unexpected end of file"))
    }

    /// Reads a line that must be exactly `want`; returns its number.
    fn expect(&mut self, want: &str) -> Result<usize, ViewError> {
        let (line, t) = self.next()?;
        if t == want {
            Ok(line)
        } else {
            Err(self.err(line, format!("expected `{want}`, found `{}`", excerpt(t))))
        }
    }

    /// Parses all of `value` with `f`.
    fn whole<T>(
        &self,
        line: usize,
        value: &'a str,
        f: impl FnOnce(&mut Cursor<'a>) -> Result<T, String>,
    ) -> Result<T, ViewError> {
        let mut c = Cursor::new(value);
        f(&mut c)
            .and_then(|v| c.end().map(|()| v))
            .map_err(|m| self.err(line, m))
    }

    fn stage(mut self) -> Result<Animation, ViewError> {
        match self.lines.next() {
            Some((_, first)) if first.trim_end() == "#usda 1.0" => self.last = 1,
            _ => {
                return Err(self.err(
                    1,
                    "expected `#usda 1.0`: not an ASCII USD stage written by cloth-view",
                ));
            }
        }
        let fps = self.metadata()?;
        let world = self.expect("def Xform \"World\"")?;
        self.expect("{")?;
        let mut prims = Vec::new();
        let mut names = HashSet::new();
        loop {
            let (line, t) = self.next()?;
            if t == "}" {
                break;
            }
            let name = t
                .strip_prefix("def Mesh \"")
                .and_then(|r| r.strip_suffix('"'))
                .ok_or_else(|| {
                    self.err(
                        line,
                        format!(
                            "expected `def Mesh \"NAME\"` or `}}`, found `{}`",
                            excerpt(t)
                        ),
                    )
                })?;
            if !is_identifier(name) {
                return Err(self.err(line, format!("prim name {name:?} is not an identifier")));
            }
            if !names.insert(name) {
                return Err(self.err(line, format!("prim {name:?} is defined twice")));
            }
            self.expect("{")?;
            let mesh = self.mesh()?;
            prims.push(Prim { line, name, mesh });
        }
        if let Some((i, t)) = self.lines.find(|(_, l)| !l.trim().is_empty()) {
            return Err(self.err(
                i + 1,
                format!("unexpected `{}` after the stage", excerpt(t.trim())),
            ));
        }
        self.animation(fps, world, prims)
    }

    /// The stage metadata `( ... )`; returns `timeCodesPerSecond`.
    fn metadata(&mut self) -> Result<f64, ViewError> {
        self.expect("(")?;
        let mut fps = None;
        let mut seen = HashSet::new();
        loop {
            let (line, t) = self.next()?;
            if t == ")" {
                return fps
                    .ok_or_else(|| self.err(line, "no `timeCodesPerSecond` in the metadata"));
            }
            let (key, value) = t.split_once(" = ").ok_or_else(|| {
                self.err(
                    line,
                    format!("expected `KEY = VALUE`, found `{}`", excerpt(t)),
                )
            })?;
            if !seen.insert(key) {
                return Err(self.err(line, format!("`{key}` is given twice")));
            }
            match key {
                "defaultPrim" | "upAxis" => {
                    let want = if key == "upAxis" { "Y" } else { "World" };
                    let got = self.whole(line, value, Cursor::string)?;
                    if got != want {
                        return Err(
                            self.err(line, format!("`{key}` must be \"{want}\", found {got:?}"))
                        );
                    }
                }
                "metersPerUnit" => {
                    let m = self.whole(line, value, Cursor::number)?;
                    if m != 1.0 {
                        return Err(self.err(line, format!("`metersPerUnit` must be 1, found {m}")));
                    }
                }
                "timeCodesPerSecond" | "framesPerSecond" | "startTimeCode" | "endTimeCode" => {
                    let x = self.whole(line, value, Cursor::number)?;
                    if key == "timeCodesPerSecond" {
                        if x <= 0.0 {
                            return Err(self.err(
                                line,
                                format!("`timeCodesPerSecond` must be positive, found {x}"),
                            ));
                        }
                        fps = Some(x);
                    }
                }
                _ => return Err(self.err(line, format!("unknown stage metadata `{key}`"))),
            }
        }
    }

    /// The attributes of a `def Mesh` prim, up to its closing brace.
    fn mesh(&mut self) -> Result<RawMesh, ViewError> {
        let mut m = RawMesh::default();
        let mut seen = HashSet::new();
        loop {
            let (line, t) = self.next()?;
            if t == "}" {
                return Ok(m);
            }
            let bad = || {
                format!(
                    "expected an attribute `TYPE NAME = VALUE` or `}}`, found `{}`",
                    excerpt(t)
                )
            };
            let (decl, value) = t.split_once(" = ").ok_or_else(|| self.err(line, bad()))?;
            let decl = decl.strip_prefix("uniform ").unwrap_or(decl);
            let (ty, name) = decl.split_once(' ').ok_or_else(|| self.err(line, bad()))?;
            let (name, sampled) = match name.strip_suffix(".timeSamples") {
                Some(n) => (n, true),
                None => (name, false),
            };
            if !seen.insert(name) {
                return Err(self.err(line, format!("attribute `{name}` is given twice")));
            }
            match (ty, name, sampled) {
                ("bool", "doubleSided", false) => {
                    self.whole(line, value, Cursor::number)?;
                }
                ("float3[]", "extent", false) => {
                    self.whole(line, value, Cursor::tuples::<3>)?;
                }
                ("float3[]", "extent", true) => {
                    self.samples(line, value, Cursor::tuples::<3>)?;
                }
                ("int[]", "faceVertexCounts", false) => {
                    m.counts = Some((line, self.whole(line, value, Cursor::indices)?));
                }
                ("int[]", "faceVertexIndices", false) => {
                    m.indices = Some((line, self.whole(line, value, Cursor::indices)?));
                }
                ("token", "orientation", false) => {
                    let o = self.whole(line, value, Cursor::string)?;
                    if o != "rightHanded" {
                        return Err(self.err(
                            line,
                            format!("orientation must be \"rightHanded\", found {o:?}"),
                        ));
                    }
                }
                ("point3f[]", "points", false) => {
                    m.points = Some((line, self.whole(line, value, Cursor::tuples::<3>)?));
                }
                ("point3f[]", "points", true) => {
                    m.point_samples = Some((line, self.samples(line, value, Cursor::tuples::<3>)?));
                }
                ("color3f[]", "primvars:displayColor", false) => {
                    self.whole(line, value, Cursor::tuples::<3>)?;
                }
                ("texCoord2f[]", "primvars:st", false) => {
                    let st = self.whole(line, value, |c| {
                        let st = c.tuples::<2>()?;
                        c.expect(b'(')?;
                        Ok(st)
                    })?;
                    self.expect("interpolation = \"faceVarying\"")?;
                    self.expect(")")?;
                    m.st = Some((line, st));
                }
                ("int[]", "primvars:st:indices", false) => {
                    m.st_indices = Some((line, self.whole(line, value, Cursor::indices)?));
                }
                ("token", "subdivisionScheme", false) => {
                    let s = self.whole(line, value, Cursor::string)?;
                    if s != "none" {
                        return Err(self.err(
                            line,
                            format!("subdivisionScheme must be \"none\", found {s:?}"),
                        ));
                    }
                }
                ("matrix4d", "xformOp:transform", true) => {
                    m.transforms = Some((line, self.samples(line, value, Cursor::matrix)?));
                }
                ("token[]", "xformOpOrder", false) => {
                    let order = self.whole(line, value, |c| c.list(Cursor::string))?;
                    if order != ["xformOp:transform"] {
                        return Err(self.err(line, "xformOpOrder must be [\"xformOp:transform\"]"));
                    }
                }
                _ => {
                    let kind = if sampled { " (time-sampled)" } else { "" };
                    return Err(self.err(line, format!("unknown attribute `{ty} {name}`{kind}")));
                }
            }
        }
    }

    /// A `.timeSamples = { TIME: VALUE, ... }` block whose first line (holding `value`) is
    /// `line`.
    fn samples<T>(
        &mut self,
        line: usize,
        value: &str,
        f: impl Fn(&mut Cursor<'a>) -> Result<T, String>,
    ) -> Result<Samples<T>, ViewError> {
        if value != "{" {
            return Err(self.err(line, "expected `{` after `.timeSamples =`"));
        }
        let mut out: Samples<T> = Vec::new();
        loop {
            let (l, t) = self.next()?;
            if t == "}" {
                return Ok(out);
            }
            let (time, v) = t.split_once(':').ok_or_else(|| {
                self.err(
                    l,
                    format!(
                        "expected a time sample `TIME: VALUE,` or `}}`, found `{}`",
                        excerpt(t)
                    ),
                )
            })?;
            let time = time.trim();
            let code = (!time.is_empty() && time.bytes().all(|b| b.is_ascii_digit()))
                .then(|| time.parse::<usize>().ok())
                .flatten()
                .ok_or_else(|| {
                    self.err(
                        l,
                        format!("time code `{}` is not a frame number", excerpt(time)),
                    )
                })?;
            if let Some(&(_, prev, _)) = out.last()
                && code <= prev
            {
                return Err(self.err(l, format!("time code {code} does not follow {prev}")));
            }
            let value = self.whole(l, v, |c| {
                let x = f(c)?;
                c.eat(b',');
                Ok(x)
            })?;
            out.push((l, code, value));
        }
    }

    /// Checks the prims and assembles the animation.
    fn animation(
        &self,
        fps: f64,
        world: usize,
        mut prims: Vec<Prim<'a>>,
    ) -> Result<Animation, ViewError> {
        let index = prims
            .iter()
            .position(|p| p.name == "cloth")
            .ok_or_else(|| self.err(world, "no `def Mesh \"cloth\"` under /World"))?;
        let cloth = prims.remove(index);
        let m = &cloth.mesh;
        if let Some((l, _)) = &m.points {
            return Err(self.err(*l, "the cloth's points must be time-sampled"));
        }
        if let Some((l, _)) = &m.transforms {
            return Err(self.err(
                *l,
                "the cloth has no transform: its points are in world space",
            ));
        }
        let (sl, samples) = m
            .point_samples
            .as_ref()
            .ok_or_else(|| self.err(cloth.line, "prim cloth: no `point3f[] points.timeSamples`"))?;
        let n = samples
            .first()
            .map(|s| s.2.len())
            .ok_or_else(|| self.err(*sl, "no time samples"))?;
        same_sizes(self, samples, n)?;
        let triangles = self.triangles(&cloth, n)?;
        let (uvs, triangle_uvs) = match (&m.st, &m.st_indices) {
            (None, None) => (Vec::new(), None),
            (Some((_, st)), Some((l, idx))) => {
                if idx.len() != 3 * triangles.len() {
                    return Err(self.err(
                        *l,
                        format!(
                            "{} texture indices for {} triangles",
                            idx.len(),
                            triangles.len()
                        ),
                    ));
                }
                if let Some(&i) = idx.iter().find(|&&i| i >= st.len()) {
                    return Err(self.err(
                        *l,
                        format!("texture index {i} out of range ({} coordinates)", st.len()),
                    ));
                }
                (
                    st.clone(),
                    Some(idx.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()),
                )
            }
            (Some((l, _)), None) | (None, Some((l, _))) => {
                return Err(self.err(*l, "primvars:st and primvars:st:indices come together"));
            }
        };
        let colliders = prims
            .iter()
            .map(|p| self.collider(p))
            .collect::<Result<Vec<_>, _>>()?;
        let samples = cloth.mesh.point_samples.map(|s| s.1).unwrap_or_default();
        let (frame_numbers, positions) = samples.into_iter().map(|(_, t, p)| (t, p)).unzip();
        Ok(Animation {
            frame_numbers,
            positions,
            triangles,
            uvs,
            triangle_uvs,
            colliders,
            fps,
        })
    }

    fn collider(&self, p: &Prim<'a>) -> Result<ColliderTrack, ViewError> {
        let m = &p.mesh;
        if let Some(l) =
            m.st.as_ref()
                .map(|s| s.0)
                .or(m.st_indices.as_ref().map(|s| s.0))
        {
            return Err(self.err(l, "colliders have no texture coordinates"));
        }
        let (vertices, deformed) = match (&m.points, &m.point_samples) {
            (Some((_, v)), None) => (v.clone(), None),
            (None, Some((l, s))) => {
                frames_from_zero(self, s)?;
                let n = s
                    .first()
                    .map(|x| x.2.len())
                    .ok_or_else(|| self.err(*l, "no time samples"))?;
                same_sizes(self, s, n)?;
                (s[0].2.clone(), Some(s))
            }
            _ => return Err(self.err(p.line, format!("prim {}: no `point3f[] points`", p.name))),
        };
        let triangles = self.triangles(p, vertices.len())?;
        let matrices: Option<Vec<[[f64; 4]; 3]>> = match &m.transforms {
            None => None,
            Some((_, t)) => {
                frames_from_zero(self, t)?;
                Some(
                    t.iter()
                        .map(|(l, _, m)| affine(self, *l, m))
                        .collect::<Result<_, _>>()?,
                )
            }
        };
        const IDENTITY: [[f64; 4]; 3] = [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
        ];
        let frames = match (deformed, matrices) {
            (None, None) => Vec::new(),
            (None, Some(ms)) => ms
                .into_iter()
                .map(|matrix| ColliderFrame {
                    matrix,
                    vertices: None,
                })
                .collect(),
            (Some(s), None) => s
                .iter()
                .map(|(_, _, v)| ColliderFrame {
                    matrix: IDENTITY,
                    vertices: Some(v.clone()),
                })
                .collect(),
            (Some(s), Some(ms)) => {
                if ms.len() != s.len() {
                    let l = m.transforms.as_ref().map_or(p.line, |t| t.0);
                    return Err(self.err(
                        l,
                        format!(
                            "{} transform samples, but {} points samples",
                            ms.len(),
                            s.len()
                        ),
                    ));
                }
                s.iter()
                    .zip(ms)
                    .map(|((_, _, v), matrix)| ColliderFrame {
                        matrix,
                        vertices: Some(v.clone()),
                    })
                    .collect()
            }
        };
        Ok(ColliderTrack {
            name: p.name.to_string(),
            vertices,
            triangles,
            frames,
        })
    }

    /// The triangles of a prim with `n` points: every face a triangle, every index in range.
    fn triangles(&self, p: &Prim<'a>, n: usize) -> Result<Vec<[usize; 3]>, ViewError> {
        let missing = |what: &str| self.err(p.line, format!("prim {}: no `int[] {what}`", p.name));
        let (cl, counts) = p
            .mesh
            .counts
            .as_ref()
            .ok_or_else(|| missing("faceVertexCounts"))?;
        let (il, idx) = p
            .mesh
            .indices
            .as_ref()
            .ok_or_else(|| missing("faceVertexIndices"))?;
        if let Some((f, c)) = counts.iter().enumerate().find(|(_, c)| **c != 3) {
            return Err(self.err(
                *cl,
                format!("face {f} has {c} vertices; only triangles are read"),
            ));
        }
        if idx.len() != 3 * counts.len() {
            return Err(self.err(
                *il,
                format!(
                    "{} face vertex indices for {} triangles",
                    idx.len(),
                    counts.len()
                ),
            ));
        }
        if let Some(k) = idx.iter().position(|&i| i >= n) {
            return Err(self.err(
                *il,
                format!(
                    "triangle {} refers to point {}, but the mesh has {n} points",
                    k / 3,
                    idx[k]
                ),
            ));
        }
        Ok(idx.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect())
    }
}

/// Every sample has `n` points.
fn same_sizes(p: &Parser<'_>, samples: &Samples<Vec<[f64; 3]>>, n: usize) -> Result<(), ViewError> {
    match samples.iter().find(|s| s.2.len() != n) {
        Some((l, t, s)) => Err(p.err(
            *l,
            format!(
                "time {t} has {} points, but the first sample has {n}",
                s.len()
            ),
        )),
        None => Ok(()),
    }
}

/// Collider samples are indexed by frame: their time codes must be 0, 1, 2, ...
fn frames_from_zero<T>(p: &Parser<'_>, samples: &Samples<T>) -> Result<(), ViewError> {
    match samples.iter().enumerate().find(|(i, s)| s.1 != *i) {
        Some((i, (l, t, _))) => Err(p.err(
            *l,
            format!("collider samples must be at frames 0, 1, 2, ...: sample {i} is at {t}"),
        )),
        None => Ok(()),
    }
}

/// The 3x4 matrix `[R | t]` (column vectors) of a USD row-vector matrix, whose last column
/// must be `(0, 0, 0, 1)`.
fn affine(p: &Parser<'_>, line: usize, m: &[[f64; 4]; 4]) -> Result<[[f64; 4]; 3], ViewError> {
    if [m[0][3], m[1][3], m[2][3], m[3][3]] != [0.0, 0.0, 0.0, 1.0] {
        return Err(p.err(
            line,
            "not an affine transform: the last column must be (0, 0, 0, 1)",
        ));
    }
    Ok(std::array::from_fn(|r| {
        [m[0][r], m[1][r], m[2][r], m[3][r]]
    }))
}

/// Letters, digits and `_`, not starting with a digit.
fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The start of `s`, for messages about very long lines.
fn excerpt(s: &str) -> String {
    const MAX: usize = 60;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// A cursor over one attribute value.
struct Cursor<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn new(s: &'a str) -> Self {
        Cursor { s, pos: 0 }
    }

    fn skip_space(&mut self) {
        let rest = &self.s[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    /// What follows, for error messages.
    fn found(&self) -> String {
        match &self.s[self.pos..] {
            "" => "the end of the line".to_string(),
            rest => format!("`{}`", excerpt(rest)),
        }
    }

    /// Consumes `b` (after spaces) if it is next.
    fn eat(&mut self, b: u8) -> bool {
        self.skip_space();
        if self.s.as_bytes().get(self.pos) == Some(&b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, b: u8) -> Result<(), String> {
        if self.eat(b) {
            Ok(())
        } else {
            Err(format!("expected `{}`, found {}", b as char, self.found()))
        }
    }

    /// Only spaces are left.
    fn end(&mut self) -> Result<(), String> {
        self.skip_space();
        if self.pos == self.s.len() {
            Ok(())
        } else {
            Err(format!("unexpected {}", self.found()))
        }
    }

    /// The next token made of `accept` bytes.
    fn token(&mut self, accept: impl Fn(u8) -> bool) -> &'a str {
        self.skip_space();
        let start = self.pos;
        while self.s.as_bytes().get(self.pos).is_some_and(|&b| accept(b)) {
            self.pos += 1;
        }
        &self.s[start..self.pos]
    }

    /// A finite number.
    fn number(&mut self) -> Result<f64, String> {
        let tok = self.token(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
        match tok.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            Ok(_) => Err(format!("value `{tok}` is not finite")),
            Err(_) if tok.is_empty() => Err(format!("expected a number, found {}", self.found())),
            Err(_) => Err(format!("`{}` is not a number", excerpt(tok))),
        }
    }

    /// A non-negative integer.
    fn index(&mut self) -> Result<usize, String> {
        let tok = self.token(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
        match tok.parse::<usize>() {
            Ok(i) if tok.bytes().all(|b| b.is_ascii_digit()) => Ok(i),
            _ if tok.is_empty() => Err(format!("expected an index, found {}", self.found())),
            _ => Err(format!("`{}` is not a non-negative integer", excerpt(tok))),
        }
    }

    /// A double-quoted string (no escapes).
    fn string(&mut self) -> Result<&'a str, String> {
        self.expect(b'"')?;
        let rest = &self.s[self.pos..];
        let len = rest
            .find('"')
            .ok_or_else(|| "unterminated string".to_string())?;
        self.pos += len + 1;
        Ok(&rest[..len])
    }

    /// `[item, item, ...]`.
    fn list<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<T, String>,
    ) -> Result<Vec<T>, String> {
        self.expect(b'[')?;
        let mut out = Vec::new();
        if self.eat(b']') {
            return Ok(out);
        }
        loop {
            out.push(item(self)?);
            if self.eat(b']') {
                return Ok(out);
            }
            if !self.eat(b',') {
                return Err(format!("expected `,` or `]`, found {}", self.found()));
            }
        }
    }

    /// `(x, y, ...)` of `N` numbers.
    fn tuple<const N: usize>(&mut self) -> Result<[f64; N], String> {
        self.expect(b'(')?;
        let mut v = [0.0; N];
        for (i, x) in v.iter_mut().enumerate() {
            if i > 0 {
                self.expect(b',')?;
            }
            *x = self.number()?;
        }
        if self.eat(b')') {
            Ok(v)
        } else {
            Err(format!(
                "expected `)` after {N} numbers, found {}",
                self.found()
            ))
        }
    }

    /// `[(...), (...), ...]` of `N`-tuples.
    fn tuples<const N: usize>(&mut self) -> Result<Vec<[f64; N]>, String> {
        self.list(Self::tuple::<N>)
    }

    /// `[i, j, ...]` of indices.
    fn indices(&mut self) -> Result<Vec<usize>, String> {
        self.list(Self::index)
    }

    /// `((a, b, c, d), ... 4 rows)`.
    fn matrix(&mut self) -> Result<[[f64; 4]; 4], String> {
        self.expect(b'(')?;
        let mut m = [[0.0; 4]; 4];
        for (i, row) in m.iter_mut().enumerate() {
            if i > 0 {
                self.expect(b',')?;
            }
            *row = self.tuple::<4>()?;
        }
        if self.eat(b')') {
            Ok(m)
        } else {
            Err(format!("expected `)` after 4 rows, found {}", self.found()))
        }
    }
}
