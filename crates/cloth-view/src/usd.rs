//! ASCII USD (`.usda`) export of a run: one mesh prim per cloth with time-sampled points, and
//! the colliders.

use crate::ViewError;
use crate::animation::{Animation, ClothPart, ColliderTrack};
use crate::frames::load_animation;
use crate::raster::Aabb;
use std::collections::HashSet;
use std::io::{self, Write};
use std::path::Path;

/// Writes the run in `dir` as one ASCII USD stage at `out` (normally `*.usda`), atomically
/// (temporary file + rename).
///
/// The stage has `upAxis = "Y"`, `metersPerUnit = 1`, `timeCodesPerSecond = framesPerSecond =
/// fps`, time code = frame number. See [`write_usd_stage`] for its content; [`crate::read_usd`]
/// reads it back.
pub fn write_usd(dir: impl AsRef<Path>, out: impl AsRef<Path>) -> Result<(), ViewError> {
    let dir = dir.as_ref();
    let out = out.as_ref();
    let anim = load_animation(dir)?;
    cloth_mesh::write_atomic(out, |w| write_usd_stage(&anim, w)).map_err(|e| ViewError::io(out, e))
}

/// Writes `anim` as a USD stage to `w`.
///
/// - `/World` (`Xform`, the default prim).
/// - one `Mesh` per cloth ([`Animation::parts`], in order), named after the cloth (made a
///   valid identifier, unique among the prims; `cloth` for an unnamed one), double-sided, no
///   subdivision, with the exact name in `custom string cloth:name`: the cloth's
///   `faceVertexCounts`, `faceVertexIndices` (0-based within the cloth), `points.timeSamples`
///   (its vertices, one sample per frame, time code = frame number, values printed with full
///   `f64` precision), `extent.timeSamples`, and when the animation has texture coordinates an
///   indexed face-varying `texCoord2f[] primvars:st`: the coordinates of [`Animation::uvs`]
///   the cloth's triangles use, in order (all of them for a single cloth), with indices into
///   that list.
/// - one `Mesh` per collider (name made a valid, unique identifier) with its local `points` (or
///   `points.timeSamples` if it deforms) and `matrix4d xformOp:transform.timeSamples`. USD
///   multiplies row vectors (`p' = p * M`), so the sample is the transpose of the 3x4 matrix of
///   `colliders.json`, padded: translation in the last row.
///
/// Cloths that fail [`Animation::check_parts`] and texture indices out of range are refused
/// with [`io::ErrorKind::InvalidInput`] before anything is written.
pub fn write_usd_stage(anim: &Animation, w: &mut dyn Write) -> io::Result<()> {
    let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
    anim.check_parts().map_err(invalid)?;
    let parts = anim.parts();
    let single = parts.len() == 1;
    let st = parts
        .iter()
        .map(|p| part_st(anim, p, single))
        .collect::<Result<Vec<_>, String>>()
        .map_err(invalid)?;
    let first = anim.frame_numbers.first().copied().unwrap_or(0);
    let last = anim.frame_numbers.last().copied().unwrap_or(0);
    let fps = num(anim.fps);
    writeln!(w, "#usda 1.0")?;
    writeln!(w, "(")?;
    writeln!(w, "    defaultPrim = \"World\"")?;
    writeln!(w, "    endTimeCode = {last}")?;
    writeln!(w, "    framesPerSecond = {fps}")?;
    writeln!(w, "    metersPerUnit = 1")?;
    writeln!(w, "    startTimeCode = {first}")?;
    writeln!(w, "    timeCodesPerSecond = {fps}")?;
    writeln!(w, "    upAxis = \"Y\"")?;
    writeln!(w, ")")?;
    writeln!(w)?;
    writeln!(w, "def Xform \"World\"")?;
    writeln!(w, "{{")?;
    let mut used: HashSet<String> = HashSet::new();
    for (k, (part, st)) in parts.iter().zip(&st).enumerate() {
        let base = if part.name.is_empty() {
            "cloth"
        } else {
            &part.name
        };
        let id = unique_identifier(base, &mut used);
        if k > 0 {
            writeln!(w)?;
        }
        write_cloth(w, &id, anim, part, st.as_ref())?;
    }
    for c in &anim.colliders {
        let name = unique_identifier(&c.name, &mut used);
        writeln!(w)?;
        write_collider(w, &name, c)?;
    }
    writeln!(w, "}}")?;
    Ok(())
}

/// Texture coordinates of one cloth and its per-corner indices into them.
type PartSt = (Vec<[f64; 2]>, Vec<usize>);

/// The texture coordinates of `part` (`None` without texture coordinates): all of them for a
/// `single` cloth, else those its triangles use, in the order of [`Animation::uvs`] (cloths
/// whose texture coordinates are shared, as `cloth run` writes equal ones once, each get a
/// copy).
fn part_st(anim: &Animation, part: &ClothPart, single: bool) -> Result<Option<PartSt>, String> {
    let Some(corners) = &anim.triangle_uvs else {
        return Ok(None);
    };
    let corners = corners.get(part.triangles.clone()).ok_or_else(|| {
        format!(
            "cloth `{}`: {} texture triangles for {} triangles",
            part.name,
            corners.len(),
            anim.triangles.len()
        )
    })?;
    if let Some(&i) = corners.iter().flatten().find(|&&i| i >= anim.uvs.len()) {
        return Err(format!(
            "cloth `{}`: texture index {i} out of range ({} coordinates)",
            part.name,
            anim.uvs.len()
        ));
    }
    if single {
        return Ok(Some((anim.uvs.clone(), corners.concat())));
    }
    let mut used: Vec<usize> = corners.concat();
    used.sort_unstable();
    used.dedup();
    let local = corners
        .iter()
        .flatten()
        .map(|i| used.binary_search(i).unwrap_or_default())
        .collect();
    Ok(Some((used.iter().map(|&i| anim.uvs[i]).collect(), local)))
}

/// The `Mesh` prim `id` of cloth `part`: its points per frame, local topology, texture
/// coordinates `st`.
fn write_cloth(
    w: &mut dyn Write,
    id: &str,
    anim: &Animation,
    part: &ClothPart,
    st: Option<&PartSt>,
) -> io::Result<()> {
    let frames = || {
        anim.frame_numbers
            .iter()
            .zip(&anim.positions)
            .map(|(k, p)| (k, &p[part.vertices.clone()]))
    };
    writeln!(w, "    def Mesh \"{id}\"")?;
    writeln!(w, "    {{")?;
    writeln!(
        w,
        "        custom string cloth:name = \"{}\"",
        escape(&part.name)
    )?;
    writeln!(w, "        uniform bool doubleSided = 1")?;
    writeln!(w, "        float3[] extent.timeSamples = {{")?;
    for (k, p) in frames() {
        write!(w, "            {k}: ")?;
        write_extent(w, &Aabb::of_points(p))?;
        writeln!(w, ",")?;
    }
    writeln!(w, "        }}")?;
    let base = part.vertices.start;
    let local: Vec<[usize; 3]> = anim.triangles[part.triangles.clone()]
        .iter()
        .map(|t| t.map(|i| i - base))
        .collect();
    write_topology(w, &local)?;
    writeln!(w, "        uniform token orientation = \"rightHanded\"")?;
    writeln!(w, "        point3f[] points.timeSamples = {{")?;
    for (k, p) in frames() {
        write!(w, "            {k}: ")?;
        write_points(w, p)?;
        writeln!(w, ",")?;
    }
    writeln!(w, "        }}")?;
    writeln!(
        w,
        "        color3f[] primvars:displayColor = [(0.84, 0.38, 0.24)]"
    )?;
    if let Some((uvs, corners)) = st {
        write!(w, "        texCoord2f[] primvars:st = [")?;
        for (i, uv) in uvs.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(w, "{sep}({}, {})", num(uv[0]), num(uv[1]))?;
        }
        writeln!(w, "] (")?;
        writeln!(w, "            interpolation = \"faceVarying\"")?;
        writeln!(w, "        )")?;
        write!(w, "        int[] primvars:st:indices = ")?;
        write_ints(w, corners.iter().copied())?;
        writeln!(w)?;
    }
    writeln!(w, "        uniform token subdivisionScheme = \"none\"")?;
    writeln!(w, "    }}")
}

/// `s` as the inside of a double-quoted USD string: a backslash before `\` and `"`, control
/// characters as `\n`, `\r`, `\t` or `\xHH`; [`crate::parse_usd`] reads it back.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_ascii_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn write_collider(w: &mut dyn Write, name: &str, c: &ColliderTrack) -> io::Result<()> {
    writeln!(w, "    def Mesh \"{name}\"")?;
    writeln!(w, "    {{")?;
    if c.is_deforming() {
        writeln!(w, "        float3[] extent.timeSamples = {{")?;
        for k in 0..c.frames.len() {
            write!(w, "            {k}: ")?;
            write_extent(w, &Aabb::of_points(c.local_vertices(k)))?;
            writeln!(w, ",")?;
        }
        writeln!(w, "        }}")?;
    } else {
        write!(w, "        float3[] extent = ")?;
        write_extent(w, &Aabb::of_points(&c.vertices))?;
        writeln!(w)?;
    }
    write_topology(w, &c.triangles)?;
    writeln!(w, "        uniform token orientation = \"rightHanded\"")?;
    if c.is_deforming() {
        writeln!(w, "        point3f[] points.timeSamples = {{")?;
        for k in 0..c.frames.len() {
            write!(w, "            {k}: ")?;
            write_points(w, c.local_vertices(k))?;
            writeln!(w, ",")?;
        }
        writeln!(w, "        }}")?;
    } else {
        write!(w, "        point3f[] points = ")?;
        write_points(w, &c.vertices)?;
        writeln!(w)?;
    }
    writeln!(
        w,
        "        color3f[] primvars:displayColor = [(0.6, 0.6, 0.6)]"
    )?;
    writeln!(w, "        uniform token subdivisionScheme = \"none\"")?;
    if !c.frames.is_empty() {
        writeln!(w, "        matrix4d xformOp:transform.timeSamples = {{")?;
        for (k, f) in c.frames.iter().enumerate() {
            let m = &f.matrix;
            // Row-vector convention: row i of the USD matrix is column i of [R | t].
            let rows: [[f64; 4]; 4] = std::array::from_fn(|i| {
                if i < 3 {
                    [m[0][i], m[1][i], m[2][i], 0.0]
                } else {
                    [m[0][3], m[1][3], m[2][3], 1.0]
                }
            });
            write!(w, "            {k}: (")?;
            for (i, r) in rows.iter().enumerate() {
                let sep = if i == 0 { "" } else { ", " };
                write!(
                    w,
                    "{sep}({}, {}, {}, {})",
                    num(r[0]),
                    num(r[1]),
                    num(r[2]),
                    num(r[3])
                )?;
            }
            writeln!(w, "),")?;
        }
        writeln!(w, "        }}")?;
        writeln!(
            w,
            "        uniform token[] xformOpOrder = [\"xformOp:transform\"]"
        )?;
    }
    writeln!(w, "    }}")?;
    Ok(())
}

fn write_topology(w: &mut dyn Write, triangles: &[[usize; 3]]) -> io::Result<()> {
    write!(w, "        int[] faceVertexCounts = ")?;
    write_ints(w, triangles.iter().map(|_| 3))?;
    writeln!(w)?;
    write!(w, "        int[] faceVertexIndices = ")?;
    write_ints(w, triangles.iter().flatten().copied())?;
    writeln!(w)
}

fn write_ints(w: &mut dyn Write, values: impl Iterator<Item = usize>) -> io::Result<()> {
    write!(w, "[")?;
    for (i, v) in values.enumerate() {
        if i > 0 {
            write!(w, ", ")?;
        }
        write!(w, "{v}")?;
    }
    write!(w, "]")
}

fn write_points(w: &mut dyn Write, points: &[[f64; 3]]) -> io::Result<()> {
    write!(w, "[")?;
    for (i, p) in points.iter().enumerate() {
        let sep = if i == 0 { "" } else { ", " };
        write!(w, "{sep}({}, {}, {})", num(p[0]), num(p[1]), num(p[2]))?;
    }
    write!(w, "]")
}

fn write_extent(w: &mut dyn Write, b: &Aabb) -> io::Result<()> {
    let b = if b.is_empty() {
        Aabb {
            min: [0.0; 3],
            max: [0.0; 3],
        }
    } else {
        *b
    };
    write_points(w, &[b.min, b.max])
}

/// Formats a finite number so that parsing the text gives the same `f64` (shortest
/// round-trip form; exponent notation for very small or large magnitudes).
fn num(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 || (1e-5..1e15).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// A USD prim name from `name`: letters, digits and `_` only, not starting with a digit,
/// unique among `used` (suffix `_1`, `_2`, ...).
fn unique_identifier(name: &str, used: &mut HashSet<String>) -> String {
    let mut base: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
        base.insert(0, '_');
    }
    let mut candidate = base.clone();
    let mut k = 1;
    while used.contains(&candidate) {
        candidate = format!("{base}_{k}");
        k += 1;
    }
    used.insert(candidate.clone());
    candidate
}
