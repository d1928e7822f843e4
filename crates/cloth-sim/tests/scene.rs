//! Scene files: every shipped scene loads, defaults and presets resolve as documented, and
//! every kind of mistake is reported with its key path and location, never with a panic.

use std::path::{Path, PathBuf};

use cloth_forces::Definiteness;
use cloth_forces::{Material, PRESET_NAMES};
use cloth_mesh::GridPattern;
use cloth_sim::collide::euler_degrees;
use cloth_sim::prelude::*;
use cloth_sim::scene::{
    ColliderSettings, ColliderShape, IntegratorKind, MeshSpec, PinSettings, SceneError,
    SolverChoice, build_collider,
};
use cloth_sim::start::{MAX_SIZE, MIN_SIZE};
use nalgebra::{Matrix3, UnitQuaternion, Vector3};
use proptest::prelude::*;

const GRID: &str =
    "[cloth]\nmesh = { kind = \"grid\", nx = 3, ny = 3, width = 1.0, height = 1.0 }\n";

fn scenes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes")
}

fn parse(text: &str) -> Result<Scene, SceneError> {
    Scene::from_toml_str(text, Path::new("."))
}

fn err(text: &str) -> SceneError {
    match parse(text) {
        Ok(s) => panic!("expected an error, got {s:?}"),
        Err(e) => e,
    }
}

/// 1-based (line, column) of the first occurrence of `needle` in `text`.
fn loc(text: &str, needle: &str) -> (usize, usize) {
    let at = text.find(needle).expect("needle in text");
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

/// A fresh directory under the system temp dir for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cloth-sim-scene-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

fn assert_key(e: &SceneError, key: &str) {
    assert_eq!(e.key(), Some(key), "wrong key in {e}");
    assert!(
        e.to_string().contains(key),
        "message must name the key: {e}"
    );
}

fn assert_at(e: &SceneError, text: &str, needle: &str) {
    let expected = loc(text, needle);
    assert_eq!(e.line_column(), Some(expected), "wrong location in {e}");
    let shown = format!("line {}, column {}", expected.0, expected.1);
    assert!(
        e.to_string().contains(&shown),
        "message must show {shown}: {e}"
    );
}

// ------------------------------------------------------------------ shipped scenes

#[test]
fn every_shipped_scene_loads_and_round_trips() {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(scenes_dir()).expect("scenes/ exists") {
        let path = entry.expect("dir entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let scene = Scene::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // Written back with every default, the text loads into the same scene.
        let text = scene.to_toml_string().expect("serializes");
        let again = Scene::from_toml_str(&text, &scene.base_dir)
            .unwrap_or_else(|e| panic!("{} re-read: {e}\n{text}", path.display()));
        assert_eq!(scene, again, "{} round trip", path.display());
        // And as JSON for stats files.
        let json = serde_json::to_value(&scene).expect("json");
        assert!(json.get("solver").is_some() && json.get("cloth").is_some());
        names.push(path.file_stem().unwrap().to_string_lossy().into_owned());
    }
    names.sort();
    for required in [
        "drape_cylinder",
        "drape_sphere",
        "fixed_sheet",
        "free_fall",
        "hanging_verlet",
    ] {
        assert!(
            names.iter().any(|n| n == required),
            "missing scenes/{required}.toml"
        );
    }
}

/// Positions of the vertices of a centred grid (uniform/alternating patterns), world frame.
fn grid_positions(scene: &Scene) -> Vec<Vector3<f64>> {
    let MeshSpec::Grid {
        nx,
        ny,
        width,
        height,
        ..
    } = scene.cloths[0].mesh
    else {
        panic!("grid expected")
    };
    let mut out = Vec::new();
    for j in 0..ny {
        for i in 0..nx {
            let local = Vector3::new(
                width * (i as f64 / (nx - 1) as f64 - 0.5),
                0.0,
                height * (j as f64 / (ny - 1) as f64 - 0.5),
            );
            out.push(scene.cloths[0].place(&local));
        }
    }
    out
}

#[test]
fn fixed_sheet_is_the_papers_figure_2_setup() {
    let s = Scene::load(scenes_dir().join("fixed_sheet.toml")).unwrap();
    assert_eq!(s.cloths[0].mesh.vertex_count(), Some(2601));
    assert_eq!((s.run.fps, s.run.frames), (30.0, 75));
    assert_eq!(s.solver.integrator, IntegratorKind::Implicit);
    // Each pin region selects exactly one corner vertex, both on the edge z = -0.5.
    let x = grid_positions(&s);
    assert_eq!(s.pins.len(), 2);
    for pin in &s.pins {
        let picked: Vec<usize> = (0..x.len()).filter(|&i| pin.selects(i, &x[i])).collect();
        assert_eq!(picked.len(), 1, "{pin:?}");
        let p = x[picked[0]];
        assert!((p.x.abs() - 0.5).abs() < 1e-12 && (p.z + 0.5).abs() < 1e-12);
        assert!((p.y - 1.0).abs() < 1e-12);
    }
}

#[test]
fn hanging_verlet_pins_one_full_edge() {
    let s = Scene::load(scenes_dir().join("hanging_verlet.toml")).unwrap();
    assert_eq!(s.solver.integrator, IntegratorKind::Verlet);
    assert_eq!(s.solver.strain_limit, Some([0.9, 1.1]));
    let x = grid_positions(&s);
    let picked: Vec<usize> = (0..x.len())
        .filter(|&i| s.pins[0].selects(i, &x[i]))
        .collect();
    assert_eq!(picked, (0..21).collect::<Vec<_>>());
}

#[test]
fn drape_cylinder_lies_horizontally_below_the_sheet() {
    let s = Scene::load(scenes_dir().join("drape_cylinder.toml")).unwrap();
    let bar = &s.colliders[0];
    let ColliderShape::Cylinder { radius, .. } = bar.shape else {
        panic!("cylinder expected")
    };
    assert_eq!(radius, 0.15);
    let (_, r) = pose_at(&s, 0, 0.0);
    let axis = r * Vector3::y();
    assert!(axis.y.abs() < 1e-12, "axis must be horizontal: {axis}");
    assert!(s.cloths[0].position.y > bar.position.y + radius + s.cloths[0].thickness);
}

// ------------------------------------------------------------------ defaults, presets

#[test]
fn defaults_are_applied() {
    let s = parse(GRID).unwrap();
    assert_eq!(s.run.fps, 30.0);
    assert_eq!(s.run.frames, 60);
    assert_eq!(s.run.gravity, Vector3::new(0.0, -9.81, 0.0));
    assert_eq!(s.cloths[0].material, Material::preset("cotton").unwrap());
    assert_eq!(s.cloths[0].position, Vector3::zeros());
    assert_eq!(s.cloths[0].thickness, 0.005);
    assert_eq!(s.cloths[0].drag, 0.0);
    assert!(matches!(
        s.cloths[0].mesh,
        MeshSpec::Grid {
            pattern: GridPattern::Alternating,
            ..
        }
    ));
    assert!(s.pins.is_empty() && s.colliders.is_empty());
    assert_eq!(s.solver.integrator, IntegratorKind::Implicit);
    assert_eq!(s.solver.h_max, 1.0 / 30.0);
    assert_eq!(s.solver.h_min, 1e-5);
    assert_eq!(s.solver.preconditioner, SolverChoice::Auto);
    assert_eq!(s.solver.definiteness, Definiteness::Clamped);
    assert_eq!(
        s.solver.strain_limit, None,
        "implicit: no strain limit by default"
    );
}

#[test]
fn defaults_follow_fps_and_integrator() {
    let s = parse(&format!(
        "{GRID}[run]\nfps = 24\n[solver]\nintegrator = \"verlet\"\n"
    ))
    .unwrap();
    assert_eq!(s.solver.h_max, 1.0 / 24.0);
    assert_eq!(s.solver.strain_limit, Some([0.9, 1.1]));
    assert_eq!(
        s.solver.verlet_h,
        1.0 / (20.0 * 24.0),
        "20 Verlet steps per frame"
    );
}

#[test]
fn vertex_counts_follow_the_mesh_layouts() {
    // Disc: a centre vertex and rings of 6 r vertices.
    for rings in 1..6usize {
        let text =
            format!("[cloth]\nmesh = {{ kind = \"disc\", radius = 0.5, resolution = {rings} }}\n");
        let expected = 1 + (1..=rings).map(|r| 6 * r).sum::<usize>();
        assert_eq!(
            parse(&text).unwrap().cloths[0].mesh.vertex_count(),
            Some(expected)
        );
    }
    // Equilateral grid: odd rows carry one extra vertex, so pins may index it.
    let eq = "[cloth]\nmesh = { kind = \"grid\", nx = 3, ny = 4, width = 1.0, height = 1.0, pattern = \"equilateral\" }\n";
    let rows: usize = (0..4).map(|j| if j % 2 == 1 { 4 } else { 3 }).sum();
    assert_eq!(parse(eq).unwrap().cloths[0].mesh.vertex_count(), Some(rows));
    assert!(parse(&format!("{eq}[[pin]]\nvertices = [{}]\n", rows - 1)).is_ok());
    let e = err(&format!("{eq}[[pin]]\nvertices = [{rows}]\n"));
    assert_key(&e, "pin[0].vertices[0]");
    // Absurd sizes are refused before anything is allocated.
    let huge = "[cloth]\nmesh = { kind = \"grid\", nx = 100000, ny = 100000, width = 1.0, height = 1.0 }\n";
    let e = err(huge);
    assert_key(&e, "cloth.mesh");
}

#[test]
fn every_preset_name_resolves() {
    for name in PRESET_NAMES {
        let text = GRID.replace("[cloth]\n", &format!("[cloth]\nmaterial = \"{name}\"\n"));
        assert_eq!(
            parse(&text).unwrap().cloths[0].material,
            Material::preset(name).unwrap()
        );
    }
    assert!(Material::preset("Cotton").is_none() && Material::preset("kevlar").is_none());
}

#[test]
fn preset_with_overrides_keeps_the_rest() {
    let text = format!(
        "{GRID}material = {{ preset = \"denim\", bend = 1e-4, stretch = 500, bend_uv = [1.0, 0.5] }}\n"
    );
    let m = parse(&text).unwrap().cloths[0].material;
    let denim = Material::preset("denim").unwrap();
    assert_eq!(m.bend, 1e-4);
    assert_eq!(
        m.stretch,
        [500.0, 500.0],
        "a scalar stretch applies to u and v"
    );
    assert_eq!(m.bend_uv, [1.0, 0.5]);
    let expected = Material {
        bend: 1e-4,
        stretch: [500.0, 500.0],
        bend_uv: [1.0, 0.5],
        ..denim
    };
    assert_eq!(m, expected);
}

#[test]
fn material_table_without_preset_needs_the_basics() {
    let full = format!(
        "{GRID}material = {{ density = 0.2, stretch = [1000, 2000], shear = 50, bend = 1e-5 }}\n"
    );
    let m = parse(&full).unwrap().cloths[0].material;
    assert_eq!(m.stretch, [1000.0, 2000.0]);
    assert_eq!(m.stretch_targets, [1.0, 1.0]);
    let text = format!("{GRID}material = {{ stretch = 1000, shear = 50, bend = 1e-5 }}\n");
    let e = err(&text);
    assert!(matches!(e, SceneError::Invalid { .. }));
    assert_key(&e, "cloth.material.density");
}

#[test]
fn preset_bending_lengths_match_typical_fabrics() {
    // Bending length c = (D / (rho g))^(1/3) against typical ranges (docs/physics.md), +-5 %.
    let ranges = [
        ("silk", 0.005, 0.015),
        ("cotton", 0.015, 0.025),
        ("wool", 0.015, 0.03),
        ("denim", 0.025, 0.05),
        ("polyester", 0.01, 0.03),
    ];
    for (name, lo, hi) in ranges {
        let m = Material::preset(name).unwrap();
        let c = m.bending_length();
        assert!(
            c >= 0.95 * lo && c <= 1.05 * hi,
            "{name}: bending length {c} m"
        );
        // The definition, inverted: D = rho g c^3.
        assert!((m.density * 9.81 * c.powi(3) - m.bend).abs() <= 1e-12 * m.bend);
        assert!(m.density > 0.0 && m.stretch.iter().all(|k| *k > 100.0) && m.shear > 0.0);
    }
}

// ------------------------------------------------------------------ errors: key and place

#[test]
fn unknown_keys_are_named_with_their_place() {
    for (text, key, needle) in [
        (format!("{GRID}colour = \"red\"\n"), "cloth.colour", "colour"),
        (
            "[cloth]\nmesh = { kind = \"grid\", nx = 3, ny = 3, width = 1.0, height = 1.0, foo = 2 }\n"
                .to_owned(),
            "cloth.mesh.foo",
            "foo",
        ),
        (
            format!("{GRID}[[pin]]\nvertices = [0]\n[[pin]]\nvertices = [1]\nstiff = 3\n"),
            "pin[1].stiff",
            "stiff",
        ),
        (format!("{GRID}[solver]\ncg_tol = 1e-3\n"), "solver.cg_tol", "cg_tol"),
        (format!("[world]\ng = 1\n{GRID}"), "world", "world"),
    ] {
        let e = err(&text);
        assert!(matches!(e, SceneError::Parse { .. }), "{e}");
        assert_key(&e, key);
        assert!(e.to_string().contains("unknown field"), "{e}");
        assert_at(&e, &text, needle);
    }
}

#[test]
fn wrong_types_are_named_with_their_place() {
    for (text, key, needle) in [
        (
            format!("{GRID}thickness = \"thin\"\n"),
            "cloth.thickness",
            "\"thin\"",
        ),
        (format!("{GRID}[run]\nframes = 2.5\n"), "run.frames", "2.5"),
        (format!("{GRID}[run]\nframes = -3\n"), "run.frames", "-3"),
        (format!("{GRID}material = 3\n"), "cloth.material", "3\n"),
        (
            format!("{GRID}[[pin]]\nregion = {{ min = [0, 0], max = [1, 1, 1] }}\n"),
            "pin[0].region.min",
            "[0, 0]",
        ),
    ] {
        let e = err(&text);
        assert!(matches!(e, SceneError::Parse { .. }), "{e}");
        assert_key(&e, key);
        assert_at(&e, &text, needle);
    }
}

#[test]
fn bad_enum_names_are_named_with_their_place() {
    let text = "[cloth]\nmesh = { kind = \"grid\", nx = 3, ny = 3, width = 1.0, height = 1.0, pattern = \"hexagonal\" }\n";
    let e = err(text);
    assert_key(&e, "cloth.mesh.pattern");
    assert!(
        e.to_string().contains("equilateral"),
        "lists the choices: {e}"
    );
    assert_at(&e, text, "\"hexagonal\"");

    let text = format!("{GRID}[solver]\npreconditioner = \"ilu\"\n");
    let e = err(&text);
    assert_key(&e, "solver.preconditioner");
    assert_at(&e, &text, "\"ilu\"");

    let text = format!("{GRID}[solver]\nstep_control = \"bisect\"\n");
    let e = err(&text);
    assert_key(&e, "solver.step_control");
    assert!(e.to_string().contains("predictive"), "lists the rules: {e}");
    assert_at(&e, &text, "\"bisect\"");

    let text = format!("{GRID}material = \"linen\"\n");
    let e = err(&text);
    assert!(matches!(e, SceneError::Invalid { .. }));
    assert_key(&e, "cloth.material");
    assert!(e.to_string().contains("cotton"), "lists the presets: {e}");
    assert_at(&e, &text, "\"linen\"");
}

#[test]
fn missing_required_keys_are_named() {
    let e = err("[run]\nfps = 30\n");
    assert_key(&e, "cloth");
    let e = err("[cloth]\nposition = [0, 1, 0]\n");
    assert_key(&e, "cloth.mesh");
    let e = err("[cloth]\nmesh = { kind = \"grid\", nx = 3, ny = 3, width = 1.0 }\n");
    assert_key(&e, "cloth.mesh.height");
    let e = err(&format!("{GRID}[[collider]]\nshape = \"sphere\"\n"));
    assert_key(&e, "collider[0].radius");
}

#[test]
fn out_of_range_values_are_named_with_their_place() {
    for (text, key, needle) in [
        (
            "[cloth]\nmesh = { kind = \"grid\", nx = 3, ny = 3, width = -1.0, height = 1.0 }\n"
                .to_owned(),
            "cloth.mesh.width",
            "-1.0",
        ),
        (
            "[cloth]\nmesh = { kind = \"grid\", nx = 1, ny = 3, width = 1.0, height = 1.0 }\n"
                .to_owned(),
            "cloth.mesh.nx",
            "1,",
        ),
        (format!("{GRID}[run]\nfps = 0\n"), "run.fps", "0\n"),
        (format!("{GRID}[run]\nframes = 0\n"), "run.frames", "0\n"),
        (
            format!("{GRID}thickness = -0.001\n"),
            "cloth.thickness",
            "-0.001",
        ),
        (
            format!("{GRID}[[collider]]\nshape = \"plane\"\nfriction = -0.2\n"),
            "collider[0].friction",
            "-0.2",
        ),
        (
            format!("{GRID}[[collider]]\nshape = \"box\"\nsize = [1, 0, 1]\n"),
            "collider[0].size[1]",
            "0, 1]",
        ),
        (
            format!("{GRID}[solver]\nh_min = 0.1\n"),
            "solver.h_min",
            "0.1",
        ),
        (
            format!("{GRID}[solver]\nh_max = 0.5\n"),
            "solver.h_max",
            "0.5",
        ),
        (
            format!("{GRID}[solver]\ncg_tolerance = 2\n"),
            "solver.cg_tolerance",
            "2\n",
        ),
        (
            format!("{GRID}[solver]\nverlet_h = 0.1\n"),
            "solver.verlet_h",
            "0.1",
        ),
        (
            format!("{GRID}[solver]\ngrow_after = 0\n"),
            "solver.grow_after",
            "0\n",
        ),
        (
            format!("{GRID}[solver]\nverlet_damping = 1000\nverlet_h = 0.01\n"),
            "solver.verlet_damping",
            "1000",
        ),
        (
            format!("{GRID}material = {{ preset = \"silk\", stretch = [100, -5] }}\n"),
            "cloth.material.stretch",
            "[100, -5]",
        ),
        (
            format!("{GRID}[[pin]]\nvertices = [0, 9]\n"),
            "pin[0].vertices[1]",
            "9]",
        ),
        (
            format!("{GRID}[[pin]]\nregion = {{ min = [0, 1, 0], max = [1, 0, 1] }}\n"),
            "pin[0].region",
            "{ min",
        ),
        (
            format!("{GRID}[[pin]]\nname = \"none\"\n"),
            "pin[0]",
            "[[pin]]",
        ),
        (
            format!("{GRID}[[pin]]\nvertices = [0]\nkeyframes = [{{ t = 1.0 }}, {{ t = 0.5 }}]\n"),
            "pin[0].keyframes[1].t",
            "0.5",
        ),
        (
            format!("{GRID}[[collider]]\nshape = \"box\"\nsize = [1, 1, 1]\nradius = 2\n"),
            "collider[0].radius",
            "2\n",
        ),
        (
            format!(
                "{GRID}[[collider]]\nshape = \"plane\"\nvelocity = [0, 1, 0]\nkeyframes = [{{ t = 0 }}]\n"
            ),
            "collider[0].velocity",
            "[0, 1, 0]",
        ),
    ] {
        let e = err(&text);
        assert!(matches!(e, SceneError::Invalid { .. }), "{e}");
        assert_key(&e, key);
        assert_at(&e, &text, needle);
    }
}

#[test]
fn non_finite_numbers_are_rejected() {
    for (text, key, needle) in [
        (format!("{GRID}thickness = nan\n"), "cloth.thickness", "nan"),
        (format!("{GRID}drag = inf\n"), "cloth.drag", "inf"),
        (
            format!("{GRID}[run]\ngravity = [0, -inf, 0]\n"),
            "run.gravity[1]",
            "-inf",
        ),
        (
            format!("{GRID}position = [0, nan, 0]\n"),
            "cloth.position[1]",
            "nan",
        ),
        (
            format!("{GRID}[solver]\nstrain_limit = [0.9, inf]\n"),
            "solver.strain_limit",
            "[0.9",
        ),
        (
            format!(
                "{GRID}[[pin]]\nvertices = [0]\nkeyframes = [{{ t = 0, translation = [0, -nan, 0] }}]\n"
            ),
            "pin[0].keyframes[0].translation[1]",
            "-nan",
        ),
    ] {
        let e = err(&text);
        assert!(matches!(e, SceneError::Invalid { .. }), "{e}");
        assert_key(&e, key);
        assert!(e.to_string().contains("finite"), "{e}");
        assert_at(&e, &text, needle);
    }
}

#[test]
fn invalid_strain_limits_are_rejected() {
    for limit in ["[1.1, 1.2]", "[0.0, 1.1]", "[0.9, 0.95]", "[-1, 2]"] {
        let text = format!("{GRID}[solver]\nstrain_limit = {limit}\n");
        let e = err(&text);
        assert_key(&e, "solver.strain_limit");
        assert_at(&e, &text, limit);
    }
    let e = err(&format!("{GRID}[solver]\nstrain_limit = [0.9]\n"));
    assert!(matches!(e, SceneError::Parse { .. }));
    assert_key(&e, "solver.strain_limit");
    let ok = parse(&format!("{GRID}[solver]\nstrain_limit = [1.0, 1.0]\n")).unwrap();
    assert_eq!(ok.solver.strain_limit, Some([1.0, 1.0]));
}

#[test]
fn syntax_errors_give_line_and_column() {
    let text = "[cloth\nmesh = 1\n";
    let e = err(text);
    assert!(matches!(e, SceneError::Parse { .. }));
    assert_eq!(e.line_column().map(|(l, _)| l), Some(1));
    let text = format!("{GRID}thickness = = 2\n");
    let e = err(&text);
    assert_eq!(e.line_column().map(|(l, _)| l), Some(3));
}

// ------------------------------------------------------------------ files

#[test]
fn obj_paths_resolve_against_the_scene_directory() {
    let dir = temp_dir("obj");
    std::fs::write(
        dir.join("sheet.obj"),
        "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n",
    )
    .unwrap();
    let text = "[cloth]\nmesh = { kind = \"obj\", path = \"sheet.obj\", uv_scale = 0.01 }\n";
    std::fs::write(dir.join("scene.toml"), text).unwrap();
    let s = Scene::load(dir.join("scene.toml")).unwrap();
    assert_eq!(
        s.cloths[0].mesh,
        MeshSpec::Obj {
            path: dir.join("sheet.obj"),
            uv_scale: 0.01,
            rest: cloth_mesh::RestShape::Auto,
            rest_angles: None,
            split_seams: false,
        }
    );
    assert_eq!(s.cloths[0].mesh.vertex_count(), None);
    let moved = text.replace("sheet.obj", "missing.obj");
    let e = Scene::from_toml_str(&moved, &dir).unwrap_err();
    match &e {
        SceneError::MissingFile { path, .. } => assert_eq!(path, &dir.join("missing.obj")),
        other => panic!("expected MissingFile, got {other}"),
    }
    assert_key(&e, "cloth.mesh.path");
    assert_at(&e, &moved, "\"missing.obj\"");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn obj_collider_frame_sequences_are_checked() {
    let dir = temp_dir("frames");
    std::fs::create_dir_all(dir.join("anim")).unwrap();
    let obj = "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n";
    std::fs::write(dir.join("body.obj"), obj).unwrap();
    for k in 5..=8 {
        std::fs::write(dir.join(format!("anim/body_{k:04}.obj")), obj).unwrap();
    }
    let text = format!(
        "[run]\nframes = 3\n{GRID}[[collider]]\nshape = \"obj\"\npath = \"body.obj\"\nframes = \"anim/body_{{:04}}.obj\"\nframe_start = 5\n"
    );
    let s = Scene::from_toml_str(&text, &dir).unwrap();
    let shape = &s.colliders[0].shape;
    assert_eq!(shape.frame_path(0), Some(dir.join("anim/body_0005.obj")));
    assert_eq!(shape.frame_path(3), Some(dir.join("anim/body_0008.obj")));
    let again = Scene::from_toml_str(&s.to_toml_string().unwrap(), &dir).unwrap();
    assert_eq!(s, again);

    // One frame more than there are files.
    let longer = text.replace("frames = 3", "frames = 4");
    let e = Scene::from_toml_str(&longer, &dir).unwrap_err();
    match &e {
        SceneError::MissingFile { path, .. } => {
            assert_eq!(path, &dir.join("anim/body_0009.obj"))
        }
        other => panic!("expected MissingFile, got {other}"),
    }
    assert_key(&e, "collider[0].frames");

    let bad = text.replace("{:04}", "{:x}");
    let e = Scene::from_toml_str(&bad, &dir).unwrap_err();
    assert!(matches!(e, SceneError::Invalid { .. }));
    assert_key(&e, "collider[0].frames");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unreadable_scene_file_names_the_path() {
    let path = std::env::temp_dir().join("cloth-sim-no-such-dir/nothing.toml");
    match Scene::load(&path) {
        Err(SceneError::Io { path: p, .. }) => assert_eq!(p, path),
        other => panic!("expected Io error, got {other:?}"),
    }
    let e = Scene::load(&path).unwrap_err();
    assert!(e.to_string().contains("nothing.toml"));
}

// ------------------------------------------------------------------ motion helpers

/// The shared motion law (cloth-collide's `Motion`) of keyframes: offset and rotation at t.
fn offset(keys: &[Keyframe], t: f64) -> (Vector3<f64>, UnitQuaternion<f64>) {
    Motion::Keyframes(keys.to_vec()).rigid_offset(t)
}

/// Euler rotation matrix, as the simulator applies it (`R = Rz Ry Rx`).
fn rotation_from_degrees(a: &Vector3<f64>) -> Matrix3<f64> {
    euler_degrees(a).to_rotation_matrix().into_inner()
}

/// Where a pin group's vertex at `x0` goes at time t about the group's centroid `c`, by the
/// motion law the simulator's pins use.
fn pin_target(pin: &PinSettings, x0: &Vector3<f64>, c: &Vector3<f64>, t: f64) -> Vector3<f64> {
    Motion::Keyframes(pin.keyframes.clone()).place(x0, c, t)
}

/// The world pose (origin, rotation matrix) of collider `k` of a scene at time t, as the
/// simulator builds it.
fn pose_at(s: &Scene, k: usize, t: f64) -> (Vector3<f64>, Matrix3<f64>) {
    let c: &ColliderSettings = &s.colliders[k];
    let iso = build_collider(s, k, c).unwrap().pose(t);
    (
        iso.translation.vector,
        iso.rotation.to_rotation_matrix().into_inner(),
    )
}

fn key(t: f64, tr: [f64; 3], rot: [f64; 3]) -> Keyframe {
    Keyframe {
        t,
        translation: Vector3::from(tr),
        rotation: Vector3::from(rot),
    }
}

#[test]
fn keyframes_interpolate_linearly_and_hold_at_the_ends() {
    let keys = [
        key(0.5, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),
        key(1.5, [1.0, 2.0, 0.0], [0.0, 90.0, 0.0]),
    ];
    let at = |t| offset(&keys, t);
    assert_eq!(at(0.0).0, Vector3::zeros());
    assert_eq!(at(1.0).0, Vector3::new(0.5, 1.0, 0.0));
    assert!(
        at(1.0)
            .1
            .angle_to(&euler_degrees(&Vector3::new(0.0, 45.0, 0.0)))
            < 1e-12
    );
    assert_eq!(at(9.0).0, Vector3::new(1.0, 2.0, 0.0));
    assert_eq!(offset(&[], 3.0).0, Vector3::zeros());
    // One key holds everywhere; a hand-built unsorted list and NaN times do not panic.
    assert_eq!(offset(&keys[1..], 0.0).0, keys[1].translation);
    assert_eq!(offset(&keys[1..], f64::NAN).0, keys[1].translation);
    let unsorted = [keys[1].clone(), keys[0].clone(), keys[1].clone()];
    for t in [0.0, 0.7, 1.0, 2.0, f64::NAN] {
        let _ = offset(&unsorted, t);
    }
}

#[test]
fn euler_angles_rotate_about_x_then_y_then_z() {
    let r = rotation_from_degrees(&Vector3::new(0.0, 0.0, 90.0));
    assert!((r * Vector3::x() - Vector3::y()).norm() < 1e-15);
    // x first: y -> z; then y: z -> x.
    let r = rotation_from_degrees(&Vector3::new(90.0, 90.0, 0.0));
    assert!((r * Vector3::y() - Vector3::x()).norm() < 1e-15);
}

#[test]
fn pin_rotation_turns_the_group_about_its_centroid() {
    let pin = PinSettings {
        name: None,
        cloth: None,
        vertices: vec![0, 1],
        region: None,
        keyframes: vec![
            key(0.0, [0.0; 3], [0.0; 3]),
            key(1.0, [0.0, 1.0, 0.0], [0.0, 180.0, 0.0]),
        ],
        attach: None,
    };
    let (a, b) = (Vector3::new(-1.0, 2.0, 0.0), Vector3::new(3.0, 2.0, 0.0));
    let c = (a + b) / 2.0;
    let (a1, b1) = (pin_target(&pin, &a, &c, 1.0), pin_target(&pin, &b, &c, 1.0));
    assert!((a1 - (b + Vector3::y())).norm() < 1e-12, "{a1}");
    assert!((b1 - (a + Vector3::y())).norm() < 1e-12, "{b1}");
    assert_eq!(pin_target(&pin, &a, &c, 0.0), a);
}

#[test]
fn collider_spin_returns_after_one_turn() {
    let text = format!(
        "{GRID}[[collider]]\nshape = \"box\"\nsize = [1, 1, 1]\nposition = [1, 0, 0]\nrotation = [10, 20, 30]\nvelocity = [0, 0, 2]\nangular_velocity = [0, 90, 0]\n"
    );
    let s = parse(&text).unwrap();
    let (p0, r0) = pose_at(&s, 0, 0.0);
    let (p4, r4) = pose_at(&s, 0, 4.0);
    assert!((r4 - r0).norm() < 1e-12, "a full turn after 360/90 s");
    assert!((p4 - p0 - Vector3::new(0.0, 0.0, 8.0)).norm() < 1e-12);
    let (_, r1) = pose_at(&s, 0, 1.0);
    let quarter = rotation_from_degrees(&Vector3::new(0.0, 90.0, 0.0));
    assert!((r1 - quarter * r0).norm() < 1e-12);
}

// ------------------------------------------------------------------ properties

fn angles() -> impl Strategy<Value = Vector3<f64>> {
    prop::array::uniform3(-720.0..720.0f64).prop_map(Vector3::from)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Arbitrary text: an error or a scene, never a panic.
    #[test]
    fn garbage_never_panics(text in "\\PC{0,200}") {
        let _ = parse(&text);
    }

    /// Damaged valid scenes (a span cut out or replaced): never a panic, and an error always
    /// locates itself inside the text.
    #[test]
    fn damaged_scenes_never_panic(
        which in 0usize..5,
        at in 0.0..1.0f64,
        len in 0usize..12,
        insert in "[ -~\n]{0,8}",
    ) {
        let names = ["fixed_sheet", "drape_cylinder", "hanging_verlet", "drape_sphere", "free_fall"];
        let text = std::fs::read_to_string(scenes_dir().join(format!("{}.toml", names[which]))).unwrap();
        let mut start = (at * text.len() as f64) as usize;
        while !text.is_char_boundary(start) { start -= 1; }
        let mut end = (start + len).min(text.len());
        while !text.is_char_boundary(end) { end -= 1; }
        let damaged = format!("{}{}{}", &text[..start], insert, &text[end..]);
        if let Err(e) = parse(&damaged)
            && let Some((line, column)) = e.line_column()
        {
            let lines: Vec<&str> = damaged.split('\n').collect();
            prop_assert!(line >= 1 && line <= lines.len(), "{e}");
            prop_assert!(column >= 1 && column <= lines[line - 1].chars().count() + 1, "{e}");
        }
    }

    /// Any number for a size key: accepted exactly when finite and within the admitted sizes
    /// ([`MIN_SIZE`], [`MAX_SIZE`]), and then stored unchanged.
    #[test]
    fn numbers_are_accepted_iff_in_range(
        v in prop_oneof![
            any::<f64>(),
            -10.0..10.0f64,
            5e-5..2e-4f64,
            5e2..2e3f64,
            Just(MIN_SIZE),
            Just(MAX_SIZE),
            Just(f64::NAN),
            Just(f64::INFINITY),
        ],
    ) {
        let lit = if v.is_nan() { "nan".to_owned() } else if v.is_infinite() {
            if v > 0.0 { "inf".to_owned() } else { "-inf".to_owned() }
        } else { format!("{v:?}") };
        let text = format!("{GRID}[[collider]]\nshape = \"sphere\"\nradius = {lit}\n");
        match parse(&text) {
            Ok(s) => {
                prop_assert!((MIN_SIZE..=MAX_SIZE).contains(&v));
                prop_assert_eq!(&s.colliders[0].shape, &ColliderShape::Sphere { radius: v });
            }
            Err(e) => {
                prop_assert!(!(MIN_SIZE..=MAX_SIZE).contains(&v), "{e}");
                prop_assert_eq!(e.key(), Some("collider[0].radius"));
            }
        }
    }

    /// Euler rotations are proper rotations and compose as Rz * Ry * Rx.
    #[test]
    fn euler_rotations_are_orthonormal(a in angles()) {
        let r = rotation_from_degrees(&a);
        prop_assert!((r.transpose() * r - Matrix3::identity()).norm() < 1e-12);
        prop_assert!((r.determinant() - 1.0).abs() < 1e-12);
        let rx = rotation_from_degrees(&Vector3::new(a.x, 0.0, 0.0));
        let ry = rotation_from_degrees(&Vector3::new(0.0, a.y, 0.0));
        let rz = rotation_from_degrees(&Vector3::new(0.0, 0.0, a.z));
        prop_assert!((rz * ry * rx - r).norm() < 1e-12);
    }

    /// Keyed pin motion is rigid: distances within the group are preserved at any time.
    #[test]
    fn keyed_pins_move_rigidly(
        r0 in angles(), r1 in angles(),
        t1 in prop::array::uniform3(-2.0..2.0f64),
        x in prop::array::uniform3(-1.0..1.0f64), y in prop::array::uniform3(-1.0..1.0f64),
        t in -1.0..3.0f64,
    ) {
        let pin = PinSettings {
            name: None, cloth: None, vertices: vec![0, 1], region: None,
            keyframes: vec![
                Keyframe { t: 0.0, translation: Vector3::zeros(), rotation: r0 },
                Keyframe { t: 2.0, translation: Vector3::from(t1), rotation: r1 },
            ],
            attach: None,
        };
        let (x, y) = (Vector3::from(x), Vector3::from(y));
        let c = (x + y) / 2.0;
        let (xt, yt) = (pin_target(&pin, &x, &c, t), pin_target(&pin, &y, &c, t));
        prop_assert!(((xt - yt).norm() - (x - y).norm()).abs() < 1e-12);
        // The centroid moves by the interpolated translation only.
        let (d, _) = offset(&pin.keyframes, t);
        prop_assert!(((xt + yt) / 2.0 - c - d).norm() < 1e-12);
    }

    /// Interpolated translations lie on the segment between neighbouring keys.
    #[test]
    fn interpolation_stays_between_keys(
        a in prop::array::uniform3(-5.0..5.0f64), b in prop::array::uniform3(-5.0..5.0f64),
        t in 0.0..1.0f64,
    ) {
        let keys = [key(0.0, a, [0.0; 3]), key(1.0, b, [0.0; 3])];
        let p = offset(&keys, t).0;
        let (a, b) = (Vector3::from(a), Vector3::from(b));
        prop_assert!(((p - a).norm() + (b - p).norm() - (b - a).norm()).abs() < 1e-9);
        prop_assert!(((p - a).norm() - t * (b - a).norm()).abs() < 1e-9);
    }
}

#[test]
fn cloth_level_anisotropy_keys_override_the_material() {
    let text = r#"
[cloth]
mesh = { kind = "grid", nx = 3, ny = 3, width = 1.0, height = 1.0 }
material = { preset = "silk", stretch_targets = [0.9, 0.9] }
stretch_targets = [0.8, 1.0]
bend_uv = [2.0, 0.5]
"#;
    let scene = Scene::from_toml_str(text, Path::new(".")).unwrap();
    assert_eq!(scene.cloths[0].material.stretch_targets, [0.8, 1.0]);
    assert_eq!(scene.cloths[0].material.bend_uv, [2.0, 0.5]);
    let bad = text.replace("[0.8, 1.0]", "[0.8, -1.0]");
    let err = Scene::from_toml_str(&bad, Path::new(".")).unwrap_err();
    assert_eq!(err.key(), Some("cloth.stretch_targets[1]"), "{err}");
}

/// `auto` takes multigrid from its size thresholds: the lower one without cloth-cloth
/// contact, the higher one with it.
#[test]
fn auto_preconditioner_takes_multigrid_from_its_size_threshold() {
    use cloth_sim::implicit::LinearSolver;
    use cloth_sim::scene::{
        MULTIGRID_MIN_VERTICES, MULTIGRID_MIN_VERTICES_WITHOUT_CONTACT, build_integrator,
    };
    let solver = |n: usize, self_collision: bool| {
        let s = parse(&format!(
            "[cloth]\nmesh = {{ kind = \"grid\", nx = {n}, ny = {n}, width = 1.0, height = 1.0 }}\n\
             self_collision = {self_collision}\n"
        ))
        .unwrap();
        match build_integrator(&s) {
            Integrator::Implicit(settings) => settings.solver,
            Integrator::Verlet(_) => panic!("implicit by default"),
        }
    };
    for (threshold, self_collision) in [
        (MULTIGRID_MIN_VERTICES_WITHOUT_CONTACT, false),
        (MULTIGRID_MIN_VERTICES, true),
    ] {
        let below = (threshold as f64).sqrt().floor() as usize;
        assert!(below * below < threshold && (below + 1) * (below + 1) >= threshold);
        assert!(matches!(
            solver(below, self_collision),
            LinearSolver::Mpcg(_)
        ));
        assert!(matches!(
            solver(below + 1, self_collision),
            LinearSolver::Multigrid(..)
        ));
    }
    // The same cloth between the two thresholds: multigrid only without contact.
    assert!(matches!(solver(60, false), LinearSolver::Multigrid(..)));
    assert!(matches!(solver(60, true), LinearSolver::Mpcg(_)));
    // The three translations per aggregate at every size, also past 100k vertices.
    for side in [60, 201, 317, 400] {
        let expected = cloth_solver::NearNullSpace::Translations;
        match solver(side, false) {
            LinearSolver::Multigrid(_, mg) => assert_eq!(mg.near_null_space, expected, "{side}"),
            other => panic!("{side}: {other:?}"),
        }
    }
}

/// A preroll's progress callback sees the simulated time climb to 0 after every accepted step
/// and changes nothing: the cloth ends the preroll on the same bits as without it.
#[test]
fn a_prerolls_progress_reports_its_time_and_changes_nothing() {
    let text = "[run]\nfps = 30\nframes = 1\npreroll = 0.2\n\
        [cloth]\nmesh = { kind = \"grid\", nx = 9, ny = 9, width = 0.4, height = 0.4 }\n\
        [[pin]]\nvertices = [0, 8]\n";
    let scene = parse(text).unwrap_or_else(|e| panic!("{e}"));
    let mut quiet = cloth_sim::scene::build_simulation(&scene).unwrap();
    quiet.preroll().unwrap();
    let mut watched = cloth_sim::scene::build_simulation(&scene).unwrap();
    let mut times = Vec::new();
    watched.preroll_with(&mut |t| times.push(t)).unwrap();
    assert!(times.len() >= 6, "{} calls for 0.2 s", times.len());
    assert!(
        times.windows(2).all(|w| w[0] < w[1]),
        "time went back: {times:?}"
    );
    assert!(
        times[0] > -0.2 && times[0] < 0.0,
        "first call at {}",
        times[0]
    );
    let last = times[times.len() - 1];
    assert!(last.abs() < 1e-12, "the last call is at {last}, not t = 0");
    assert_eq!(quiet.positions(), watched.positions());
    assert_eq!(quiet.time(), watched.time());
}
