//! ASCII USD (`.usda`) export of a run: time-sampled cloth points and colliders.

use crate::ViewError;
use crate::frames::{Animation, ColliderTrack, load_animation};
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
pub fn write_usd(dir: &Path, out: &Path) -> Result<(), ViewError> {
    let anim = load_animation(dir)?;
    cloth_mesh::write_atomic(out, |w| write_usd_stage(&anim, w)).map_err(|e| ViewError::io(out, e))
}

/// Writes `anim` as a USD stage to `w`.
///
/// - `/World` (`Xform`, the default prim).
/// - `/World/cloth` (`Mesh`, double-sided, no subdivision): `faceVertexCounts`,
///   `faceVertexIndices`, `points.timeSamples` (one sample per frame, time code = frame number,
///   values printed with full `f64` precision), `extent.timeSamples`, and when the cloth has
///   texture coordinates an indexed face-varying `texCoord2f[] primvars:st`.
/// - one `Mesh` per collider (name made a valid, unique identifier) with its local `points` (or
///   `points.timeSamples` if it deforms) and `matrix4d xformOp:transform.timeSamples`. USD
///   multiplies row vectors (`p' = p * M`), so the sample is the transpose of the 3x4 matrix of
///   `colliders.json`, padded: translation in the last row.
pub fn write_usd_stage(anim: &Animation, w: &mut dyn Write) -> io::Result<()> {
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

    // Cloth.
    writeln!(w, "    def Mesh \"cloth\"")?;
    writeln!(w, "    {{")?;
    writeln!(w, "        uniform bool doubleSided = 1")?;
    writeln!(w, "        float3[] extent.timeSamples = {{")?;
    for (k, p) in anim.frame_numbers.iter().zip(&anim.positions) {
        write!(w, "            {k}: ")?;
        write_extent(w, &Aabb::of_points(p))?;
        writeln!(w, ",")?;
    }
    writeln!(w, "        }}")?;
    write_topology(w, &anim.triangles)?;
    writeln!(w, "        uniform token orientation = \"rightHanded\"")?;
    writeln!(w, "        point3f[] points.timeSamples = {{")?;
    for (k, p) in anim.frame_numbers.iter().zip(&anim.positions) {
        write!(w, "            {k}: ")?;
        write_points(w, p)?;
        writeln!(w, ",")?;
    }
    writeln!(w, "        }}")?;
    writeln!(
        w,
        "        color3f[] primvars:displayColor = [(0.84, 0.38, 0.24)]"
    )?;
    if let Some(corners) = &anim.triangle_uvs {
        write!(w, "        texCoord2f[] primvars:st = [")?;
        for (i, uv) in anim.uvs.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(w, "{sep}({}, {})", num(uv[0]), num(uv[1]))?;
        }
        writeln!(w, "] (")?;
        writeln!(w, "            interpolation = \"faceVarying\"")?;
        writeln!(w, "        )")?;
        write!(w, "        int[] primvars:st:indices = ")?;
        write_ints(w, corners.iter().flatten().copied())?;
        writeln!(w)?;
    }
    writeln!(w, "        uniform token subdivisionScheme = \"none\"")?;
    writeln!(w, "    }}")?;

    // Colliders.
    let mut used: HashSet<String> = HashSet::from(["cloth".to_string()]);
    for c in &anim.colliders {
        let name = unique_identifier(&c.name, &mut used);
        writeln!(w)?;
        write_collider(w, &name, c)?;
    }
    writeln!(w, "}}")?;
    Ok(())
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
