//! Reading back the ASCII USD stages [`crate::write_usd`] writes, so that a run kept only as
//! `animation.usda` (`cloth run --format usd`) can still be rendered.
//!
//! This is a reader of exactly that format, not of USD in general: one statement per line as
//! the writer lays them out, the metadata, attributes and prims it writes and nothing else.
//! Anything unknown or malformed is refused with [`ViewError::Parse`] naming the line.

use crate::ViewError;
use crate::animation::{Animation, ClothPart, ColliderFrame, ColliderTrack};
use std::collections::HashSet;
use std::path::Path;

/// Reads a stage written by [`crate::write_usd`] (see [`parse_usd`]).
pub fn read_usd(path: impl AsRef<Path>) -> Result<Animation, ViewError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| ViewError::io(path, e))?;
    parse_usd(&text, path)
}

/// Parses the text of a stage written by [`crate::write_usd_stage`] back into an [`Animation`].
/// `path` is only used in error messages.
///
/// - Cloths: every `Mesh` under `/World` with a `custom string cloth:name` is a cloth of that
///   name, in prim order ([`Animation::cloths`]); a stage without any (the single-cloth
///   form) has one cloth, the prim `cloth`. One frame per `points` time
///   sample (time code = frame number; every cloth has the first cloth's time codes),
///   triangles from `faceVertexIndices`, texture coordinates from `primvars:st` and its
///   indices; the cloths are concatenated in that order (vertices, triangles, texture
///   coordinates). Positions read back bit for bit.
/// - Every other `Mesh` under `/World` is a collider named after its prim: local points (rest,
///   or one sample per frame 0, 1, 2, ... for a deforming collider, whose rest vertices are then
///   those of frame 0) and the `xformOp:transform` samples turned back into 3x4 matrices
///   (`world = M * local`).
/// - The frame rate is `timeCodesPerSecond`; the stage must be y up in metres.
///
/// Refused with the line: another header, unknown metadata, prims or attributes, malformed or
/// non-finite numbers, faces that are not triangles, indices out of range, samples of
/// different sizes, time codes that are not ascending frame numbers or differ between cloths,
/// texture coordinates on some cloths only, transforms that are not affine.
pub fn parse_usd(text: &str, path: impl AsRef<Path>) -> Result<Animation, ViewError> {
    let path = path.as_ref();
    Parser {
        lines: text.lines().enumerate(),
        path,
        last: 0,
    }
    .stage()
}

/// Time samples: `(line, time code, value)`, time codes ascending.
type Samples<T> = Vec<(usize, usize, T)>;

/// Texture coordinates of a cloth and the per-corner indices into them.
type Texture = (Vec<[f64; 2]>, Vec<[usize; 3]>);

/// The attributes of one `def Mesh` prim that matter, each with its line.
#[derive(Default)]
struct RawMesh {
    cloth_name: Option<(usize, String)>,
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
            if decl == "custom string cloth:name" {
                if m.cloth_name.is_some() {
                    return Err(self.err(line, "attribute `cloth:name` is given twice"));
                }
                m.cloth_name = Some((line, self.whole(line, value, Cursor::escaped)?));
                continue;
            }
            let decl = decl.strip_prefix("uniform ").unwrap_or(decl);
            let (ty, name) = decl.split_once(' ').ok_or_else(|| self.err(line, bad()))?;
            let (name, sampled) = match name.strip_suffix(".timeSamples") {
                Some(n) => (n, true),
                None => (name, false),
            };
            if !seen.insert(name) {
                return Err(self.err(line, format!("attribute `{name}` is given twice")));
            }
            self.attribute(&mut m, line, (ty, name, sampled), value)?;
        }
    }

    /// One attribute `(type, name, time-sampled)` of a `def Mesh` prim whose value is `value`,
    /// into `m`.
    fn attribute(
        &mut self,
        m: &mut RawMesh,
        line: usize,
        (ty, name, sampled): (&str, &str, bool),
        value: &'a str,
    ) -> Result<(), ViewError> {
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
        Ok(())
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

    /// Checks the prims and assembles the animation: the cloths are the prims with a
    /// `cloth:name` (or, in a stage without any, the prim named `cloth`), the other prims
    /// colliders.
    fn animation(
        &self,
        fps: f64,
        world: usize,
        prims: Vec<Prim<'a>>,
    ) -> Result<Animation, ViewError> {
        let named = prims.iter().any(|p| p.mesh.cloth_name.is_some());
        let (cloths, colliders): (Vec<Prim<'a>>, Vec<Prim<'a>>) =
            prims.into_iter().partition(|p| {
                if named {
                    p.mesh.cloth_name.is_some()
                } else {
                    p.name == "cloth"
                }
            });
        if cloths.is_empty() {
            return Err(self.err(
                world,
                "no cloth under /World: no `def Mesh` with `custom string cloth:name` (nor one \
                 named \"cloth\")",
            ));
        }
        let mut anim = Animation {
            frame_numbers: Vec::new(),
            positions: Vec::new(),
            triangles: Vec::new(),
            uvs: Vec::new(),
            triangle_uvs: None,
            cloths: Vec::with_capacity(cloths.len()),
            colliders: Vec::new(),
            fps,
        };
        for (k, p) in cloths.iter().enumerate() {
            self.cloth(&mut anim, p, k == 0)?;
        }
        anim.colliders = colliders
            .iter()
            .map(|p| self.collider(p))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(anim)
    }

    /// Appends the cloth of prim `p` to `anim` (its `first` cloth sets the time codes and
    /// whether there are texture coordinates; every other cloth must have the same).
    fn cloth(&self, anim: &mut Animation, p: &Prim<'a>, first: bool) -> Result<(), ViewError> {
        let m = &p.mesh;
        if let Some((l, _)) = &m.points {
            return Err(self.err(
                *l,
                format!("cloth {}: its points must be time-sampled", p.name),
            ));
        }
        if let Some((l, _)) = &m.transforms {
            return Err(self.err(
                *l,
                format!(
                    "cloth {} has no transform: its points are in world space",
                    p.name
                ),
            ));
        }
        let (sl, samples) = m.point_samples.as_ref().ok_or_else(|| {
            self.err(
                p.line,
                format!("prim {}: no `point3f[] points.timeSamples`", p.name),
            )
        })?;
        let n = samples
            .first()
            .map(|s| s.2.len())
            .ok_or_else(|| self.err(*sl, "no time samples"))?;
        same_sizes(self, samples, n)?;
        let triangles = self.triangles(p, n)?;
        let st = self.texture(p, triangles.len())?;
        if first {
            anim.frame_numbers = samples.iter().map(|s| s.1).collect();
            anim.positions = vec![Vec::new(); samples.len()];
            anim.triangle_uvs = st.as_ref().map(|_| Vec::new());
        } else {
            self.same_times(p, *sl, samples, &anim.frame_numbers)?;
        }
        let (v0, t0) = (anim.positions[0].len(), anim.triangles.len());
        for (frame, (_, _, points)) in anim.positions.iter_mut().zip(samples) {
            frame.extend_from_slice(points);
        }
        anim.triangles
            .extend(triangles.iter().map(|t| t.map(|i| i + v0)));
        match (&mut anim.triangle_uvs, st) {
            (None, None) => {}
            (Some(corners), Some((uvs, idx))) => {
                let base = anim.uvs.len();
                anim.uvs.extend(uvs);
                corners.extend(idx.iter().map(|t| t.map(|i| i + base)));
            }
            (had, _) => {
                let what = if had.is_some() {
                    "has no texture coordinates, but the first cloth has"
                } else {
                    "has texture coordinates, but the first cloth has none"
                };
                return Err(self.err(p.line, format!("cloth {} {what}", p.name)));
            }
        }
        anim.cloths.push(ClothPart {
            name: m
                .cloth_name
                .as_ref()
                .map_or("cloth".into(), |c| c.1.clone()),
            vertices: v0..v0 + n,
            triangles: t0..t0 + triangles.len(),
        });
        Ok(())
    }

    /// The time codes of cloth `p`'s `samples` (from `line`) are `frames`, the first cloth's.
    fn same_times(
        &self,
        p: &Prim<'a>,
        line: usize,
        samples: &Samples<Vec<[f64; 3]>>,
        frames: &[usize],
    ) -> Result<(), ViewError> {
        if let Some(((l, t, _), f)) = samples.iter().zip(frames).find(|((_, t, _), f)| t != *f) {
            return Err(self.err(
                *l,
                format!(
                    "cloth {}: time code {t}, but the first cloth's sample is at {f}",
                    p.name
                ),
            ));
        }
        if samples.len() != frames.len() {
            return Err(self.err(
                line,
                format!(
                    "cloth {} has {} time samples, but the first cloth has {}",
                    p.name,
                    samples.len(),
                    frames.len()
                ),
            ));
        }
        Ok(())
    }

    /// The texture coordinates of cloth `p` with `triangles` triangles and their per-corner
    /// indices, or `None` without `primvars:st`.
    fn texture(&self, p: &Prim<'a>, triangles: usize) -> Result<Option<Texture>, ViewError> {
        match (&p.mesh.st, &p.mesh.st_indices) {
            (None, None) => Ok(None),
            (Some((_, st)), Some((l, idx))) => {
                if idx.len() != 3 * triangles {
                    return Err(self.err(
                        *l,
                        format!("{} texture indices for {triangles} triangles", idx.len()),
                    ));
                }
                if let Some(&i) = idx.iter().find(|&&i| i >= st.len()) {
                    return Err(self.err(
                        *l,
                        format!("texture index {i} out of range ({} coordinates)", st.len()),
                    ));
                }
                let corners = idx.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
                Ok(Some((st.clone(), corners)))
            }
            (Some((l, _)), None) | (None, Some((l, _))) => {
                Err(self.err(*l, "primvars:st and primvars:st:indices come together"))
            }
        }
    }

    /// The `xformOp:transform` samples of a collider as 3x4 matrices, if it has them.
    fn matrices(&self, m: &RawMesh) -> Result<Option<Vec<[[f64; 4]; 3]>>, ViewError> {
        let Some((_, t)) = &m.transforms else {
            return Ok(None);
        };
        frames_from_zero(self, t)?;
        let matrices = t.iter().map(|(l, _, m)| affine(self, *l, m));
        Ok(Some(matrices.collect::<Result<_, _>>()?))
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
        let matrices = self.matrices(m)?;
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

    /// A double-quoted string with the escapes [`crate::write_usd_stage`] writes: `\\`, `\"`,
    /// `\n`, `\r`, `\t` and `\xHH`.
    fn escaped(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out = String::new();
        let mut chars = self.s[self.pos..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.pos += i + 1;
                    return Ok(out);
                }
                '\\' => {
                    let e = match chars.next().map(|(_, e)| e) {
                        Some(e @ ('\\' | '"')) => e,
                        Some('n') => '\n',
                        Some('r') => '\r',
                        Some('t') => '\t',
                        Some('x') => {
                            let hex: String = chars.by_ref().take(2).map(|(_, h)| h).collect();
                            u8::from_str_radix(&hex, 16)
                                .ok()
                                .filter(|b| hex.len() == 2 && b.is_ascii())
                                .map(char::from)
                                .ok_or_else(|| format!("bad escape `\\x{hex}`"))?
                        }
                        Some(e) => return Err(format!("unknown escape `\\{e}`")),
                        None => return Err("unterminated string".to_string()),
                    };
                    out.push(e);
                }
                c => out.push(c),
            }
        }
        Err("unterminated string".to_string())
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
