//! Garments end to end: cloth from any OBJ (rest shape per triangle corner), several cloths in
//! one scene, and sewing patterns stitched closed by the simulation. The shipped shirt and
//! trousers scenes are checked from outside the simulator: stitch gaps and boundary loops
//! from the positions, the body by ray parity on its own OBJ, crossings by an independent
//! triangle-triangle test (`common`).

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use cloth_forces::{Evaluation, Par};
use cloth_mesh::{RestShape, Vec3, count_boundary_loops};
use cloth_sim::prelude::*;
use cloth_sim::scene::{ColliderShape, build_cloth};

fn assets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets")
}

/// A fresh directory under the system temp dir for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cloth-sim-garment-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// A curved sheet (a quarter of a cylinder of radius 0.3 m, 0.4 m long, axis along z) as OBJ
/// text without texture coordinates: `nu x nv` vertices, two triangles per cell.
fn curved_sheet_obj(nu: usize, nv: usize) -> String {
    let mut s = String::from("# curved sheet, no vt\n");
    for j in 0..nv {
        for i in 0..nu {
            let a = std::f64::consts::FRAC_PI_2 * i as f64 / (nu - 1) as f64;
            let z = 0.4 * j as f64 / (nv - 1) as f64;
            writeln!(s, "v {} {} {}", 0.3 * a.cos(), 0.3 * a.sin() + 1.0, z).unwrap();
        }
    }
    for j in 0..nv - 1 {
        for i in 0..nu - 1 {
            let v = |i: usize, j: usize| j * nu + i + 1;
            let (a, b, c, d) = (v(i, j), v(i + 1, j), v(i + 1, j + 1), v(i, j + 1));
            writeln!(s, "f {a} {b} {c}\nf {a} {c} {d}").unwrap();
        }
    }
    s
}

/// A tube (radius 0.1 m, height 0.3 m, axis y) whose UV layout is cut open along one seam:
/// the seam's positions are shared, their texture coordinates are not (u = 0 and u = 1).
fn seamed_tube_obj(around: usize, rings: usize) -> String {
    let mut s = String::from("# tube with a UV seam\n");
    let circumference = 2.0 * std::f64::consts::PI * 0.1;
    for j in 0..rings {
        for i in 0..around {
            let a = 2.0 * std::f64::consts::PI * i as f64 / around as f64;
            let y = 1.0 + 0.3 * j as f64 / (rings - 1) as f64;
            writeln!(s, "v {} {} {}", 0.1 * a.sin(), y, 0.1 * a.cos()).unwrap();
        }
    }
    for j in 0..rings {
        for i in 0..=around {
            let u = circumference * i as f64 / around as f64;
            writeln!(s, "vt {u} {}", 0.3 * j as f64 / (rings - 1) as f64).unwrap();
        }
    }
    for j in 0..rings - 1 {
        for i in 0..around {
            let v = |i: usize, j: usize| j * around + (i % around) + 1;
            let t = |i: usize, j: usize| j * (around + 1) + i + 1;
            let (a, b, c, d) = (v(i, j), v(i + 1, j), v(i + 1, j + 1), v(i, j + 1));
            let (ta, tb, tc, td) = (t(i, j), t(i + 1, j), t(i + 1, j + 1), t(i, j + 1));
            writeln!(
                s,
                "f {a}/{ta} {b}/{tb} {c}/{tc}\nf {a}/{ta} {c}/{tc} {d}/{td}"
            )
            .unwrap();
        }
    }
    s
}

fn scene_with(dir: &Path, text: &str) -> Scene {
    Scene::from_toml_str(text, dir).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn obj_without_uvs_rests_as_modelled() {
    let dir = temp_dir("no-vt");
    std::fs::write(dir.join("sheet.obj"), curved_sheet_obj(9, 5)).unwrap();
    let text = "[run]\ngravity = [0, 0, 0]\nframes = 3\n\
                [cloth]\nmesh = { kind = \"obj\", path = \"sheet.obj\", rest = \"mesh\" }\n";
    let scene = scene_with(&dir, text);
    let built = build_cloth(&scene, 0).unwrap();
    assert_eq!(built.rest, Some(RestShape::Mesh));
    assert!(built.rest_angles_from_mesh);
    // "auto" picks "mesh" for a file without vt.
    let auto = scene_with(
        &dir,
        "[cloth]\nmesh = { kind = \"obj\", path = \"sheet.obj\" }\n",
    );
    assert_eq!(build_cloth(&auto, 0).unwrap().rest, Some(RestShape::Mesh));

    // Rest edge lengths are the file's (to rounding).
    let mesh = &built.mesh;
    let x = mesh.positions();
    for (e, &l) in mesh.edges().iter().zip(mesh.edge_rest_lengths()) {
        let d = (x[e.v[0]] - x[e.v[1]]).norm();
        assert!(
            (d - l).abs() <= 1e-12 * d.max(1.0),
            "edge {:?}: {d} vs {l}",
            e.v
        );
    }

    // Zero internal force at rest: the curved sheet is its own rest shape.
    let mut sim = build_simulation(&scene).unwrap();
    let model = &sim.system().model;
    let v = vec![Vec3::zeros(); x.len()];
    let mut eval = Evaluation::default();
    model.evaluate(x, &v, &mut eval, Par::default());
    let fmax = eval.forces.iter().map(|f| f.norm()).fold(0.0, f64::max);
    assert!(fmax < 1e-9, "force at rest {fmax} N");
    // And it stays put without gravity.
    let x0 = x.to_vec();
    for _ in 0..3 {
        sim.step_frame().unwrap();
    }
    let moved = sim
        .positions()
        .iter()
        .zip(&x0)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(moved < 1e-9, "moved {moved} m");
}

#[test]
fn uv_seamed_tube_stays_closed() {
    let dir = temp_dir("tube");
    let (around, rings) = (12, 6);
    std::fs::write(dir.join("tube.obj"), seamed_tube_obj(around, rings)).unwrap();
    let text = "[run]\nframes = 10\n\
                [cloth]\nmesh = { kind = \"obj\", path = \"tube.obj\" }\n\
                [[pin]]\nregion = { min = [-1, 1.29, -1], max = [1, 2, 1] }\n";
    let scene = scene_with(&dir, text);
    let built = build_cloth(&scene, 0).unwrap();
    assert_eq!(built.rest, Some(RestShape::Uv));
    assert!(!built.rest_angles_from_mesh, "uv rest shapes are flat");
    // One particle per position: the seam is not a cut; the tube has its two rims only.
    let mesh = &built.mesh;
    assert_eq!(mesh.num_vertices(), around * rings);
    assert_eq!(
        count_boundary_loops(mesh.num_vertices(), mesh.triangles(), &[]),
        2
    );
    let mut sim = build_simulation(&scene).unwrap();
    for _ in 0..10 {
        sim.step_frame().unwrap();
    }
    // Every seam edge keeps its length: the tube hangs closed.
    let x = sim.positions();
    for j in 0..rings {
        let (a, b) = (j * around, j * around + around - 1);
        let d = (x[a] - x[b]).norm();
        let rest = 2.0 * 0.1 * (std::f64::consts::PI / around as f64).sin();
        assert!(d < 1.1 * rest, "ring {j}: seam edge {d} m, rest {rest} m");
    }

    // split_seams = true keeps the old panels: the seam column is duplicated.
    let split = scene_with(
        &dir,
        "[cloth]\nmesh = { kind = \"obj\", path = \"tube.obj\", split_seams = true }\n",
    );
    let m = build_cloth(&split, 0).unwrap().mesh;
    assert_eq!(m.num_vertices(), (around + 1) * rings);
    assert_eq!(
        count_boundary_loops(m.num_vertices(), m.triangles(), &[]),
        1
    );
}

#[test]
fn several_cloths_are_named_and_touch_each_other() {
    let dir = temp_dir("two");
    let text = "[run]\nframes = 12\n[solver]\nh_max = 0.002\n\
        [[cloth]]\nname = \"lower\"\nposition = [0, 0.5, 0]\n\
        mesh = { kind = \"grid\", nx = 17, ny = 17, width = 0.6, height = 0.6 }\n\
        material = \"denim\"\nself_collision = true\n\
        [[cloth]]\nname = \"upper\"\nposition = [0, 0.52, 0]\n\
        mesh = { kind = \"grid\", nx = 11, ny = 11, width = 0.4, height = 0.4 }\n\
        material = \"silk\"\n\
        [[pin]]\ncloth = \"lower\"\nvertices = [0, 16, 272, 288]\n";
    let scene = scene_with(&dir, text);
    assert_eq!(scene.cloths.len(), 2);
    let mut sim = build_simulation(&scene).unwrap();
    let parts = &sim.system().parts;
    assert_eq!(parts[0].name, "lower");
    assert_eq!(parts[1].vertices, 289..410);
    assert_eq!(sim.pins()[0].vertices, vec![0, 16, 272, 288]);
    let materials = sim.system().model.materials();
    assert_ne!(materials[0].density, materials[1].density);
    assert_eq!(
        sim.system().obj_groups(),
        vec![("lower".to_owned(), 0), ("upper".to_owned(), 512)]
    );
    for _ in 0..12 {
        let stats = sim.step_frame().unwrap();
        assert_eq!(stats.self_intersections, 0, "frame at t = {}", stats.time);
    }
    // The upper cloth lies on the lower one instead of falling through it: every upper
    // vertex above the lower cloth's surface near it.
    let x = sim.positions();
    let lower_min = x[..289].iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
    let upper_min = x[289..].iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
    assert!(
        upper_min > lower_min,
        "upper {upper_min} m, lower {lower_min} m"
    );
    // Without contact the upper cloth falls through the lower one.
    let apart = scene_with(&dir, &text.replace("self_collision = true", ""));
    let mut sim = build_simulation(&apart).unwrap();
    for _ in 0..12 {
        sim.step_frame().unwrap();
    }
    let x = sim.positions();
    let lower_min = x[..289].iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
    let upper_max = x[289..]
        .iter()
        .map(|p| p.y)
        .fold(f64::NEG_INFINITY, f64::max);
    assert!(
        upper_max < lower_min,
        "without contact the upper cloth falls through"
    );

    // A pin must say which cloth it holds when there are several.
    let bad = text.replace("cloth = \"lower\"\n", "");
    let e = Scene::from_toml_str(&bad, &dir).unwrap_err();
    assert_eq!(e.key(), Some("pin[0]"), "{e}");
    let bad = text.replace("name = \"upper\"", "name = \"lower\"");
    let e = Scene::from_toml_str(&bad, &dir).unwrap_err();
    assert_eq!(e.key(), Some("cloth[1].name"), "{e}");
}

#[test]
fn sewn_skirt_closes_its_seams() {
    let skirt = assets().join("patterns/skirt.json");
    let text = format!(
        "[run]\nframes = 30\n\
         [cloth]\nmesh = {{ kind = \"garmentcode\", path = {:?}, edge_length = 0.06 }}\n\
         sew_time = 0.5\nself_collision = false\n",
        skirt.display().to_string()
    );
    let scene = scene_with(Path::new("."), &text);
    let built = build_cloth(&scene, 0).unwrap();
    let garment = built.garment.as_ref().unwrap();
    assert_eq!(garment.openings, 2);
    let mut sim = build_simulation(&scene).unwrap();
    let n = sim.system().num_vertices();
    let mut gaps = Vec::new();
    for _ in 0..30 {
        let stats = sim.step_frame().unwrap();
        gaps.push((stats.time, stats.seam_gap));
    }
    assert_eq!(sim.positions().len(), n, "vertex count is constant");
    assert!(gaps[0].1 > 0.01, "seams start open: {gaps:?}");
    let (t, last) = *gaps.last().unwrap();
    assert!(t >= 0.99);
    assert!(last < 1e-3, "seam gap {last} m at t = {t} s: {gaps:?}");
    eprintln!("skirt seam gap: {gaps:?}");
    // Once sewn, the skirt has exactly its two openings (waist and hem).
    let pairs: Vec<[usize; 2]> = sim.world().sewing.pairs().collect();
    let mesh = &sim.system().mesh;
    assert_eq!(
        count_boundary_loops(mesh.num_vertices(), mesh.triangles(), &pairs),
        2
    );
}

#[test]
fn garment_keys_are_checked_and_named() {
    let dir = temp_dir("keys");
    std::fs::write(dir.join("sheet.obj"), curved_sheet_obj(3, 3)).unwrap();
    let grid = "mesh = { kind = \"grid\", nx = 3, ny = 3, width = 1.0, height = 1.0 }\n";
    let cases = [
        // Sewing keys belong to sewing patterns.
        (format!("[cloth]\n{grid}sew_time = 0.5\n"), "cloth.sew_time"),
        (
            format!("[cloth]\n{grid}sew_start = 0.5\n"),
            "cloth.sew_start",
        ),
        (
            format!(
                "[cloth]\nmesh = {{ kind = \"garmentcode\", path = {:?} }}\nsew_start = -1.0\n",
                assets().join("patterns/skirt.json")
            ),
            "cloth.sew_start",
        ),
        // OBJ keys belong to OBJ meshes.
        (
            "[cloth]\nmesh = { kind = \"grid\", nx = 3, ny = 3, width = 1.0, height = 1.0, \
             rest = \"uv\" }\n"
                .to_owned(),
            "cloth.mesh.rest",
        ),
        (
            "[cloth]\nmesh = { kind = \"obj\", path = \"sheet.obj\", edge_length = 0.1 }\n"
                .to_owned(),
            "cloth.mesh.edge_length",
        ),
        (
            "[cloth]\nmesh = { kind = \"obj\", path = \"sheet.obj\", rest = \"texture\" }\n"
                .to_owned(),
            "cloth.mesh.rest",
        ),
        (
            "[cloth]\nmesh = { kind = \"garmentcode\", path = \"missing.json\" }\n".to_owned(),
            "cloth.mesh.path",
        ),
        (
            format!("[[cloth]]\n{grid}\n[[cloth]]\n{grid}sew_gravity = 0.5\n"),
            "cloth[1].sew_gravity",
        ),
        // Sewing on a coarse copy is for sewing patterns, at a positive edge length.
        (
            "[cloth]\nmesh = { kind = \"grid\", nx = 3, ny = 3, width = 1.0, height = 1.0, \
             sew_edge_length = 0.1 }\n"
                .to_owned(),
            "cloth.mesh.sew_edge_length",
        ),
        (
            format!(
                "[cloth]\nmesh = {{ kind = \"garmentcode\", path = {:?}, sew_edge_length = -0.1 }}\n",
                assets().join("patterns/skirt.json")
            ),
            "cloth.mesh.sew_edge_length",
        ),
        (
            format!(
                "[[cloth]]\n{grid}\n[[cloth]]\n{grid}\n[[pin]]\ncloth = \"x\"\nvertices = [0]\n"
            ),
            "pin[0].cloth",
        ),
    ];
    for (text, key) in cases {
        let e = Scene::from_toml_str(&text, &dir).unwrap_err();
        assert!(e.to_string().contains(key), "{key}: {e}");
    }
    // Default names, and `rest = "uv"` on a file without vt is refused naming the face.
    let s = scene_with(&dir, &format!("[[cloth]]\n{grid}\n[[cloth]]\n{grid}"));
    assert_eq!(s.cloths[1].name, "cloth_1");
    let uv = scene_with(
        &dir,
        "[cloth]\nmesh = { kind = \"obj\", path = \"sheet.obj\", rest = \"uv\" }\n",
    );
    let e = build_cloth(&uv, 0).unwrap_err().to_string();
    assert!(e.contains("cloth.mesh.path") && e.contains("line"), "{e}");
    // A coarse copy must finish sewing within the preroll, and cannot carry pins.
    let skirt = format!(
        "[cloth]\nmesh = {{ kind = \"garmentcode\", path = {:?}, edge_length = 0.06, \
         sew_edge_length = 0.1 }}\nsew_time = 0.5\n",
        assets().join("patterns/skirt.json")
    );
    for (extra, says) in [
        ("[run]\npreroll = 0.4\n", "within the preroll"),
        ("[run]\npreroll = 1.0\n[[pin]]\nvertices = [0]\n", "pins"),
    ] {
        let scene = scene_with(&dir, &format!("{extra}{skirt}"));
        let e = build_simulation(&scene).err().expect("refused").to_string();
        assert!(
            e.contains("cloth.mesh.sew_edge_length") && e.contains(says),
            "{extra}: {e}"
        );
    }
}

/// Vertex pairs closer than `tol` (m), found from the positions alone (a uniform grid).
fn close_pairs(x: &[Vec3], tol: f64) -> Vec<[usize; 2]> {
    let key = |p: &Vec3| [0, 1, 2].map(|k| (p[k] / tol).floor() as i64);
    let mut grid: std::collections::HashMap<[i64; 3], Vec<usize>> = Default::default();
    for (i, p) in x.iter().enumerate() {
        grid.entry(key(p)).or_default().push(i);
    }
    let mut pairs = Vec::new();
    for (i, p) in x.iter().enumerate() {
        let c = key(p);
        for d in 0..27 {
            let n = [c[0] + d % 3 - 1, c[1] + (d / 3) % 3 - 1, c[2] + d / 9 - 1];
            for &j in grid.get(&n).map(Vec::as_slice).unwrap_or(&[]) {
                if j > i && (x[j] - p).norm() < tol {
                    pairs.push([i, j]);
                }
            }
        }
    }
    pairs
}

/// The scene's body, posed at any time: its OBJ (standing still) or its skinned glTF clip.
enum Body {
    Still(Vec<Vec3>, Vec<[usize; 3]>),
    Skinned(Box<cloth_collide::GltfBody>),
}

impl Body {
    fn of(scene: &Scene) -> Body {
        match &scene.colliders[0].shape {
            ColliderShape::Gltf {
                path,
                animation,
                scale,
                time_offset,
                looping,
            } => {
                let options = cloth_collide::GltfOptions {
                    clip: animation.clone(),
                    time_offset: *time_offset,
                    looping: *looping,
                    scale: *scale,
                };
                Body::Skinned(Box::new(
                    cloth_collide::GltfBody::load(path, &options).expect("body"),
                ))
            }
            _ => {
                let obj = assets().join("mannequin/mannequin.obj");
                let body = cloth_mesh::read_obj_data(&obj).expect("body");
                Body::Still(body.positions, body.triangles)
            }
        }
    }

    /// The vertices of `points` inside the body at time `t` (ray parity, the body posed once;
    /// `posed` is scratch).
    fn inside(&self, points: &[Vec3], t: f64, posed: &mut Vec<Vec3>) -> Vec<usize> {
        let solid = match self {
            Body::Still(v, tris) => common::Solid::new(v, tris),
            Body::Skinned(b) => {
                b.pose(t, posed);
                common::Solid::new(posed, b.triangles())
            }
        };
        (0..points.len())
            .filter(|&v| solid.contains(&points[v]))
            .collect()
    }
}

/// Runs a shipped garment scene to its end (after its preroll, if any) and checks, from
/// outside the simulator: every stitch of each cloth closed to under 1 mm from that cloth's
/// `sew_start + sew_time + 0.5 s` on (counted from the start of the preroll); no crossing pair
/// of triangles (stitched vertices count as one), within one cloth or between cloths, in any
/// frame; no cloth vertex inside the body (its OBJ, or its glTF posed at the frame's time) in
/// any frame; no vertex closer than half the cloth thickness to another layer (a triangle
/// farther than 12 mm from it along the cloth, seams joining what they sew) at the end of any
/// step once every stitch is due; and, at the end, `openings` boundary loops (all cloths
/// together) once vertices within 1 mm are merged. Returns the largest stitch gap seen after
/// the deadlines (m).
fn garment_scene_sews_and_settles(name: &str, openings: usize) -> f64 {
    let scene = Scene::load(assets().join("../scenes").join(name)).expect("scene");
    garment_sews_and_settles(name, &scene, openings)
}

/// [`garment_scene_sews_and_settles`] on a scene given as a value.
fn garment_sews_and_settles(name: &str, scene: &Scene, openings: usize) -> f64 {
    let body = Body::of(scene);
    let mut sim = build_simulation(scene).unwrap();
    let stitches: Vec<[usize; 2]> = sim.world().sewing.pairs().collect();
    let tris = sim.system().mesh.triangles().to_vec();
    assert!(!stitches.is_empty());
    // The panels as built are flat, at their rest lengths.
    let same = common::SameLayer::new(&tris, sim.positions(), &stitches, 0.012);
    let thickness = scene.cloths.iter().map(|c| c.thickness).fold(0.0, f64::max);
    // Each stitch's deadline, from the scene's keys of the cloth holding its vertices.
    let deadline: Vec<f64> = stitches
        .iter()
        .map(|&[a, _]| {
            let k = (sim.system().parts.iter())
                .position(|p| p.vertices.contains(&a))
                .expect("a stitch in a cloth");
            let c = &scene.cloths[k];
            c.sew_start.unwrap_or(0.0) + c.sew_time.unwrap_or(0.5) + 0.5 - scene.run.preroll
        })
        .collect();
    let sewn_by = deadline.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
    sim.preroll()
        .unwrap_or_else(|e| panic!("{name} preroll: {e}"));
    let (mut closed_at, mut worst, mut posed) = (None, 0.0f64, Vec::new());
    let (mut nearest, mut watched) = (thickness, 0);
    for f in 1..=scene.run.frames {
        let mut watch = |s: &cloth_sim::state::State| {
            if s.t >= sewn_by - 1e-9 {
                nearest = nearest.min(common::nearest_other_layer(&tris, &s.x, &same, thickness));
                watched += 1;
            }
        };
        let t = sim
            .step_frame_watching(&mut watch)
            .unwrap_or_else(|e| panic!("{name} frame {f}: {e}"))
            .time;
        assert!(
            nearest >= 0.5 * thickness,
            "{name} frame {f}: a vertex {nearest} m from another layer at the end of a step"
        );
        let x = sim.positions();
        let crossings = common::count_crossings_welded(&tris, x, &stitches);
        assert_eq!(crossings, 0, "{name} frame {f}: crossing triangle pairs");
        let inside = body.inside(x, t, &mut posed);
        assert!(
            inside.is_empty(),
            "{name} frame {f}: vertices in the body {inside:?}"
        );
        let gaps: Vec<f64> = stitches
            .iter()
            .map(|&[a, b]| (x[a] - x[b]).norm())
            .collect();
        if gaps.iter().all(|&g| g < 1e-3) {
            closed_at.get_or_insert(t);
        }
        for (k, (&gap, &due)) in gaps.iter().zip(&deadline).enumerate() {
            if t >= due - 1e-9 {
                worst = worst.max(gap);
                assert!(
                    gap < 1e-3,
                    "{name} frame {f} (t = {t} s): stitch {k} is {gap} m open (due {due} s)"
                );
            }
        }
    }
    let x = sim.positions();
    let merged = close_pairs(x, 1e-3);
    let loops = count_boundary_loops(x.len(), &tris, &merged);
    assert_eq!(loops, openings, "{name}: boundary loops at the end");
    eprintln!(
        "{name}: every stitch closed below 1 mm at t = {closed_at:?} s; largest gap after the \
         deadlines {worst:.2e} m; nearest other layer {:.2} mm in {watched} steps",
        nearest * 1e3
    );
    worst
}

/// The skirt sewn on a copy at twice its edge length during the preroll, then carried to its
/// own mesh: the fine skirt starts frame 0 closed, and stays closed, outside the body and
/// uncrossed, checked as the shipped scenes are.
#[test]
fn a_skirt_sewn_on_a_coarse_copy_is_closed_outside_and_uncrossed_at_full_resolution() {
    let text = std::fs::read_to_string(assets().join("../scenes/skirt_mannequin.toml"))
        .unwrap()
        .replace(
            "edge_length = 0.03 }",
            "edge_length = 0.03, sew_edge_length = 0.06 }",
        )
        .replace("frames = 45", "frames = 15\npreroll = 0.6");
    assert!(text.contains("sew_edge_length") && text.contains("preroll"));
    let scene = scene_with(&assets().join("../scenes"), &text);
    let fine = build_cloth(&scene, 0).unwrap().mesh.num_vertices();
    let mut sim = build_simulation(&scene).unwrap();
    assert_eq!(sim.positions().len(), fine, "the scene's own mesh runs");
    let frame0 = sim.preroll().unwrap();
    assert!(
        frame0.seam_gap < 1e-3,
        "seam gap {} m at frame 0",
        frame0.seam_gap
    );
    // Frame 0 counts the copy's steps too: steps are at most 1/30 s, so the copy's 0.5 s
    // of sewing takes at least 15 and the fine mesh's last 0.1 s (less 16 ms of
    // relaxation, not counted) at least 3.
    assert!(frame0.steps >= 18, "{frame0:?}");
    // The skirt: waist and hem.
    garment_sews_and_settles("skirt sewn coarse", &scene, 2);
}

#[test]
fn the_shirt_scene_sews_and_settles_on_the_mannequin() {
    // Openings: neck, hem and two cuffs.
    garment_scene_sews_and_settles("shirt_mannequin.toml", 4);
}

#[test]
fn the_trousers_scene_sews_and_settles_on_the_mannequin() {
    // Openings: waist and two hems.
    garment_scene_sews_and_settles("trousers_mannequin.toml", 3);
}

#[test]
fn the_shirt_over_trousers_scene_sews_both_and_settles_on_the_mannequin() {
    // Openings: the shirt's neck, hem and two cuffs; the trousers' waist and two hems.
    garment_scene_sews_and_settles("outfit_mannequin.toml", 7);
}

/// The paper's garment rows on the moving mannequin, checked as the standing ones: minutes
/// of CPU, run by hand with
/// `cargo test --release -p cloth-sim --test garment -- --ignored --nocapture`.
#[test]
#[ignore = "minutes of CPU: the garment rows on the moving mannequin, run with --ignored"]
fn the_shirt_on_the_twisting_mannequin_stays_sewn_outside_and_uncrossed() {
    garment_scene_sews_and_settles("shirt_twist.toml", 4);
}

/// The walking trousers at 4 cm edges (961 vertices, sewn at their own size): under a minute
/// since contacts that the cloth pulls off the body are let go for good (before, the walk
/// stopped at its 60th frame with a hem triangle carried along by the toe).
#[test]
fn the_coarse_trousers_on_the_walking_mannequin_stay_sewn_outside_and_uncrossed() {
    let text = std::fs::read_to_string(assets().join("../scenes/trousers_walk.toml"))
        .unwrap()
        .replace(
            "edge_length = 0.0126, sew_edge_length = 0.04 }",
            "edge_length = 0.04 }",
        );
    assert!(!text.contains("sew_edge_length = "));
    let scene = scene_with(&assets().join("../scenes"), &text);
    garment_sews_and_settles("trousers_walk.toml at 4 cm", &scene, 3);
}

/// The paper's Figure 4 at its size: the trousers sewn on a coarse copy, then walking at 8,678
/// vertices.
#[test]
#[ignore = "minutes of CPU: the garment rows on the moving mannequin, run with --ignored"]
fn the_trousers_on_the_walking_mannequin_stay_sewn_outside_and_uncrossed() {
    garment_scene_sews_and_settles("trousers_walk.toml", 3);
}

/// The paper's Figure 4 as dressed there: the T-shirt sewn over the trousers, walking.
#[test]
#[ignore = "minutes of CPU: the garment rows on the moving mannequin, run with --ignored"]
fn the_shirt_over_trousers_on_the_walking_mannequin_stay_sewn_outside_and_uncrossed() {
    // Openings: the shirt's neck, hem and two cuffs; the trousers' waist and two hems.
    garment_scene_sews_and_settles("outfit_walk.toml", 7);
}

#[test]
#[ignore = "minutes of CPU: the garment rows on the moving mannequin, run with --ignored"]
fn the_skirt_on_the_dancing_mannequin_stays_sewn_outside_and_uncrossed() {
    garment_scene_sews_and_settles("dancer_skirt.toml", 2);
}

#[test]
#[ignore = "minutes of CPU: the garment rows on the moving mannequin, run with --ignored"]
fn the_long_skirt_on_the_dancing_mannequin_stays_sewn_outside_and_uncrossed() {
    garment_scene_sews_and_settles("dancer_long_skirt.toml", 2);
}

/// The paper's Figure 5: the short skirt with the sleeveless blouse sewn over it, dancing.
#[test]
#[ignore = "minutes of CPU: the garment rows on the moving mannequin, run with --ignored"]
fn the_skirt_and_blouse_on_the_dancing_mannequin_stay_sewn_outside_and_uncrossed() {
    // Openings: the skirt's waist and hem; the blouse's neck, hem and two armholes.
    garment_scene_sews_and_settles("dancer_skirt_blouse.toml", 6);
}

/// The paper's Figure 6: the long skirt with the blouse over it, dancing.
#[test]
#[ignore = "minutes of CPU: the garment rows on the moving mannequin, run with --ignored"]
fn the_long_skirt_and_blouse_on_the_dancing_mannequin_stay_sewn_outside_and_uncrossed() {
    garment_scene_sews_and_settles("dancer_long_skirt_blouse.toml", 6);
}

/// The binned parity test the garment checks use answers as the brute-force one, on points
/// spread over the mannequin's box (inside and outside, near its surface and far from it).
#[test]
fn binned_point_in_body_test_agrees_with_brute_force() {
    let body = cloth_mesh::read_obj_data(assets().join("mannequin/mannequin.obj")).expect("body");
    let (v, tris) = (&body.positions, &body.triangles);
    let lo = v.iter().fold(Vec3::repeat(f64::INFINITY), |m, p| m.inf(p));
    let hi = v
        .iter()
        .fold(Vec3::repeat(f64::NEG_INFINITY), |m, p| m.sup(p));
    let solid = common::Solid::new(v, tris);
    // A deterministic low-discrepancy sequence over the box, 5% larger on each side.
    let frac = |x: f64| x - x.floor();
    let (mut inside, mut outside) = (0, 0);
    for i in 0..3000 {
        let k = i as f64;
        let r = Vec3::new(
            frac(k * 0.754_877_666),
            frac(k * 0.569_840_291),
            frac(k * 0.362_033_4),
        );
        let p = lo + (hi - lo).component_mul(&(r * 1.1 - Vec3::repeat(0.05)));
        let brute = common::inside(&p, v, tris);
        assert_eq!(solid.contains(&p), brute, "point {p:?}");
        if brute {
            inside += 1;
        } else {
            outside += 1;
        }
    }
    assert!(
        inside > 100 && outside > 100,
        "{inside} inside, {outside} outside"
    );
}
