//! The project's own mannequin, made in code (`cargo xtask mannequin`, or the
//! `cloth-mannequin` binary of this crate).
//!
//! An adult body, 1.70 m tall, standing in A-pose at the origin (y up, metres, feet on y = 0,
//! facing +z), made in code: a smooth union of signed-distance primitives (`body`) whose
//! zero level set is extracted by marching cubes and relaxed (`surface`). Written as
//!
//! * `assets/mannequin/mannequin.obj`: the closed, outward-wound collision mesh;
//! * `assets/mannequin/mannequin.glb`: the same mesh skinned to a 19-joint skeleton with three
//!   clips, `twist`, `walk` and `dance` (`glb`).
//!
//! Vertex and joint coordinates are multiples of 2^-12 m (0.24 mm), so they are exact in the
//! glTF file's f32 and in the OBJ's decimals: the glTF bind pose reproduces the OBJ exactly.
//! Both files are deterministic (the same bytes on every run). `--check` regenerates both in
//! memory and fails if the committed files differ; a test of this crate does the same.

mod body;
mod glb;
mod measure;
mod model;
mod surface;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub use glb::{clip_summary, glb_bytes};
pub use model::{Mannequin, QUANTUM, build};

use body::V3;
use surface::TriMesh;

/// Height of the acromion (top of the shoulder) above the shoulder joint centre (m).
const ACROMION: f64 = 0.035;

/// The OBJ text of the mesh (coordinates printed exactly).
pub fn obj_text(m: &TriMesh) -> String {
    let mut s = String::with_capacity(m.vertices.len() * 40 + m.triangles.len() * 20);
    s.push_str("# cloth mannequin (cargo xtask mannequin): adult, 1.70 m, A-pose, y up, metres,\n");
    s.push_str("# feet on y = 0, facing +z; closed and outward-wound.\n");
    let _ = writeln!(
        s,
        "# {} vertices, {} triangles",
        m.vertices.len(),
        m.triangles.len()
    );
    s.push_str("o mannequin\n");
    for p in &m.vertices {
        let _ = writeln!(s, "v {} {} {}", p.x, p.y, p.z);
    }
    for t in &m.triangles {
        let _ = writeln!(s, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1);
    }
    s
}

/// Checks the mesh (a valid closed collider, manifold, a sphere's Euler characteristic, positive
/// volume, outward-wound, no self-intersection, no sliver) and measures the body; returns the
/// report lines or the first failure.
pub fn check(man: &Mannequin) -> Result<Vec<String>, String> {
    use cloth_collide::{Collider, ColliderSet, Shape};
    let m = &man.mesh;
    let mut r = Vec::new();
    ColliderSet::new(vec![Collider {
        shape: Shape::Mesh {
            vertices: m.vertices.clone(),
            triangles: m.triangles.clone(),
        },
        name: "mannequin".into(),
        ..Collider::default()
    }])
    .map_err(|e| format!("mesh validation: {e}"))?;
    let bad = measure::non_manifold_vertices(m);
    if bad > 0 {
        return Err(format!("{bad} vertices are not manifold"));
    }
    let euler = m.vertices.len() as i64 - measure::edge_count(m) as i64 + m.triangles.len() as i64;
    if euler != 2 {
        return Err(format!("Euler characteristic {euler} != 2 (not a sphere)"));
    }
    let vol = measure::volume(m);
    if vol.is_nan() || vol <= 0.0 {
        return Err(format!("enclosed volume {vol} m^3 is not positive"));
    }
    let g = |p: &V3| man.body.gradient(p);
    let inward = measure::inward_triangles(m, &g);
    if inward > 0 {
        return Err(format!("{inward} triangles face into the body"));
    }
    let crossings = cloth_collide::count_intersections(&m.triangles, &m.vertices);
    if crossings > 0 {
        return Err(format!("{crossings} pairs of triangles intersect"));
    }
    let (min_angle, min_area) = measure::worst_triangle(m);
    if min_area.is_nan() || min_area <= 1e-8 {
        return Err(format!("a triangle has area {min_area:e} m^2"));
    }
    let (y0, y1) = measure::y_range(m);
    let armpit = measure::armpit_height(m);
    let (yc, chest) = measure::extreme_girth(m, 1.15, armpit - 0.01, true);
    let (yw, waist) = measure::extreme_girth(m, 0.98, 1.12, false);
    let (yh, hips) = measure::extreme_girth(m, 0.80, 0.95, true);
    let j = |n: &str| man.joints[body::joint_index(&man.joints, n)].position;
    let shoulder_y = j("upper_arm_l").y;
    r.push(format!(
        "vertices {}, triangles {}, Euler characteristic 2, watertight and outward-wound",
        m.vertices.len(),
        m.triangles.len()
    ));
    r.push(format!(
        "height {:.4} m (feet at y = {y0}), volume {vol:.5} m^3, area {:.3} m^2",
        y1 - y0,
        measure::area(m)
    ));
    r.push(format!(
        "chest girth {chest:.3} m at y = {yc:.3} (armpits at {armpit:.3}), waist {waist:.3} m at y = {yw:.3}, hips {hips:.3} m at y = {yh:.3}"
    ));
    r.push(format!(
        "shoulder breadth {:.3} m at the acromia (y = {:.3}), {:.3} m at the shoulder joints (y = {shoulder_y:.3}, centres {:.3} m apart), inseam {:.3} m",
        measure::breadth(m, shoulder_y + ACROMION),
        shoulder_y + ACROMION,
        measure::breadth(m, shoulder_y),
        j("upper_arm_l").x - j("upper_arm_r").x,
        measure::crotch_height(m)
    ));
    r.push(format!(
        "smallest angle {min_angle:.2} deg, smallest triangle {min_area:.3e} m^2, no self-intersection"
    ));
    Ok(r)
}

/// The committed assets: `assets/mannequin/` of the workspace.
pub fn assets_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .unwrap_or(Path::new("."))
        .join("assets")
        .join("mannequin")
}

/// Runs the generator with its command-line arguments `[--check] [--out DIR]`: writes
/// `mannequin.obj` and `mannequin.glb` to `DIR` (default [`assets_dir`]), or with `--check`
/// only compares them with the files there (exit status 1 when they differ).
pub fn run(args: &[String]) -> Result<ExitCode, String> {
    let mut check_only = false;
    let mut out = assets_dir();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--check" => check_only = true,
            "--out" => out = PathBuf::from(it.next().ok_or("--out needs a directory")?),
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    let man = build();
    for line in check(&man)? {
        eprintln!("mannequin: {line}");
    }
    let obj = obj_text(&man.mesh);
    let glb = glb_bytes(&man)?;
    eprintln!(
        "mannequin: mannequin.obj {} bytes, mannequin.glb {} bytes",
        obj.len(),
        glb.len()
    );
    for line in clip_summary() {
        eprintln!("mannequin: {line}");
    }
    let files = [("mannequin.obj", obj.into_bytes()), ("mannequin.glb", glb)];
    if check_only {
        let mut stale = Vec::new();
        for (name, bytes) in &files {
            if std::fs::read(out.join(name)).ok().as_deref() != Some(bytes.as_slice()) {
                stale.push(*name);
            }
        }
        if stale.is_empty() {
            eprintln!("mannequin: {} is up to date", out.display());
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!(
            "mannequin: {} differ from the generator; run `cargo xtask mannequin`",
            stale.join(", ")
        );
        return Ok(ExitCode::FAILURE);
    }
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    for (name, bytes) in &files {
        let path = out.join(name);
        cloth_mesh::write_atomic_bytes(&path, bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("mannequin: wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Also the determinism check: the committed files were made by an earlier run.
    #[test]
    fn committed_assets_are_what_the_generator_makes() {
        let m = build();
        let dir = assets_dir();
        let obj = std::fs::read(dir.join("mannequin.obj")).unwrap();
        let glb = std::fs::read(dir.join("mannequin.glb")).unwrap();
        assert!(
            obj == obj_text(&m.mesh).into_bytes() && glb == glb_bytes(&m).unwrap(),
            "assets/mannequin is stale: run `cargo xtask mannequin`"
        );
    }

    #[test]
    fn the_mesh_passes_every_check() {
        let lines = check(&build()).unwrap();
        assert!(lines[0].contains("watertight"));
    }
}
