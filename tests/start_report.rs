//! Cloth that starts inside a solid is reported: GarmentCode's flare skirt, placed as its
//! file places it, starts partly inside GarmentCode's body, and the start report (and
//! `cloth check`) counts those vertices as an independent point-in-mesh test does.

mod common;
mod geometry;

use cloth::sim::state::State;
use cloth::sim::{scene::Scene, scene::build_simulation, start::start_contacts};
use common::{cloth_cmd, temp_dir};
use geometry::{inside_mesh, mesh_distance, read_obj};
use std::path::Path;

/// The flare skirt on the body as an OBJ collider named `body`.
fn flare_skirt_scene(dir: &Path) -> std::path::PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/garmentcode");
    let scene = dir.join("flare.toml");
    std::fs::write(
        &scene,
        format!(
            "[run]\nframes = 10\n[cloth]\nmesh = {{ kind = \"garmentcode\", path = \"{}\" }}\n\
             [[collider]]\nname = \"body\"\nshape = \"obj\"\npath = \"{}\"\n",
            root.join("flare_skirt_specification.json").display(),
            root.join("mean_female.obj").display()
        ),
    )
    .unwrap();
    scene
}

#[test]
fn the_flare_skirt_starts_partly_inside_the_body_and_the_report_says_how_much() {
    let dir = temp_dir("start-report");
    let scene_path = flare_skirt_scene(&dir);
    let scene = Scene::load(&scene_path).unwrap();
    let sim = build_simulation(&scene).unwrap();
    // The placement as the file gives it (the simulation starts from a cleared copy).
    let placed = State::at_rest(sim.world().cloth.x0.clone());
    let report = start_contacts(sim.world(), &placed);
    assert_eq!(report.colliders.len(), 1);
    let body = &report.colliders[0];
    assert_eq!(body.name, "body");
    assert!(report.any_inside());

    // The independent count: ray parity for inside, brute-force distances for the layer.
    let obj = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/garmentcode/mean_female.obj");
    let (v, f) = read_obj(&obj);
    let x = &placed.x;
    let mut inside_ours = Vec::new();
    let mut in_layer = 0;
    for (i, p) in x.iter().enumerate() {
        let d = mesh_distance(p, &v, &f, f64::INFINITY);
        if d > body.layer + 0.01 {
            continue; // Far outside: no ray test needed.
        }
        if inside_mesh(p, &v, &f) {
            inside_ours.push((i, d));
        } else if d < body.layer {
            in_layer += 1;
        }
    }
    let deepest = inside_ours
        .iter()
        .copied()
        .fold((0, 0.0f64), |a, b| if b.1 > a.1 { b } else { a });
    eprintln!(
        "report: {} inside (deepest {:?}), {} in the layer; independent: {} inside (deepest {:?}), {in_layer} in the layer",
        body.inside,
        body.deepest,
        body.in_layer,
        inside_ours.len(),
        deepest
    );
    // Tens of vertices of the back panel, up to about two centimetres deep.
    assert!(
        (50..=200).contains(&inside_ours.len()),
        "{}",
        inside_ours.len()
    );
    assert_eq!(body.inside, inside_ours.len());
    assert_eq!(body.in_layer, in_layer);
    let (vertex, depth) = body.deepest.unwrap();
    assert_eq!(vertex, deepest.0);
    assert!((depth - deepest.1).abs() < 1e-9, "{depth} vs {}", deepest.1);
    assert!((0.01..0.03).contains(&depth), "{depth}");

    // `cloth check` prints it.
    let o = cloth_cmd().arg("check").arg(&scene_path).output().unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("inside"))
        .unwrap_or_else(|| panic!("no inside line:\n{text}"));
    assert!(
        line.contains(&format!("{} vertices inside 'body'", body.inside))
            && line.contains(&format!("vertex {vertex}"))
            && line.contains(&format!("{:.1} mm", depth * 1e3)),
        "{line}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_cloth_clear_of_the_solids_reports_nothing() {
    let dir = temp_dir("start-clear");
    let scene = dir.join("s.toml");
    std::fs::write(
        &scene,
        "[cloth]\nmesh = { kind = \"grid\", nx = 5, ny = 5, width = 0.5, height = 0.5 }\n\
         position = [0, 1, 0]\n[[collider]]\nshape = \"sphere\"\nradius = 0.3\n\
         [[collider]]\nname = \"floor\"\nshape = \"plane\"\nposition = [0, 0.996, 0]\n",
    )
    .unwrap();
    let scene = Scene::load(&scene).unwrap();
    let sim = build_simulation(&scene).unwrap();
    let report = start_contacts(sim.world(), sim.state());
    assert!(!report.any_inside());
    assert_eq!(report.colliders[0].summary(), None, "the sphere is far");
    // The floor 4 mm below: every vertex within its 10 mm layer, none inside.
    let floor = &report.colliders[1];
    assert_eq!((floor.inside, floor.in_layer), (0, 25));
    assert_eq!(
        floor.summary().unwrap(),
        "no vertex inside 'floor'; 25 within its 10.0 mm layer"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The flare skirt, placed partly inside the body by its file, starts the run cleared and
/// relaxed: no vertex of the start state is inside the body (the same independent ray
/// parity), every edge is within 90-110% of its rest length (to the strain limit's tolerance,
/// 0.5% of the rest length), and `cloth run` says what was moved.
#[test]
fn the_flare_skirt_placed_inside_the_body_starts_the_run_outside_it() {
    let dir = temp_dir("start-cleared");
    let scene_path = flare_skirt_scene(&dir);
    let scene = Scene::load(&scene_path).unwrap();
    let sim = build_simulation(&scene).unwrap();
    let cleared = sim.start_cleared();
    assert!(
        cleared.inside > 0 && cleared.moved >= cleared.inside,
        "{cleared:?}"
    );
    // Moved out of the body, the panels are also relaxed out of its contact layer before
    // their seams start to close.
    assert!(cleared.relaxed, "{cleared:?}");

    let obj = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/garmentcode/mean_female.obj");
    let (v, f) = read_obj(&obj);
    let x = &sim.state().x;
    let inside_now: Vec<usize> = (0..x.len())
        .filter(|&i| mesh_distance(&x[i], &v, &f, 0.05) < 0.05 && inside_mesh(&x[i], &v, &f))
        .collect();
    assert!(inside_now.is_empty(), "still inside: {inside_now:?}");

    // Edge lengths against the rest lengths of the pattern (its panels' flat coordinates).
    let mesh = &sim.system().mesh;
    let worst = (mesh.edges().iter())
        .zip(mesh.edge_rest_lengths())
        .map(|(e, rest)| ((x[e.v[0]] - x[e.v[1]]).norm() / rest - 1.0).abs())
        .fold(0.0, f64::max);
    assert!(
        worst <= 0.105,
        "an edge changed length by {:.4}%",
        worst * 100.0
    );

    let out = dir.join("out");
    let o = cloth_cmd()
        .arg("run")
        .arg(&scene_path)
        .args(["--frames", "1", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!("{} vertices were moved out", cleared.moved))
            && err.contains("then relaxed out of the contact layers"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A sheet thicker than its rows are apart (9.7 mm on 9.1 mm rows) with self-collision on:
/// `cloth check` says that vertices two edges apart will push each other apart at rest, and
/// says nothing of the kind for the same sheet 4 mm thick or with self-collision off.
#[test]
fn a_cloth_thicker_than_its_edges_is_reported_with_self_collision_on() {
    let dir = temp_dir("start-thick");
    let check = |thickness: f64, self_collision: bool| {
        let scene = dir.join(format!("s-{thickness}-{self_collision}.toml"));
        std::fs::write(
            &scene,
            format!(
                "[cloth]\nmesh = {{ kind = \"grid\", nx = 12, ny = 12, width = 0.26, height = 0.10 }}\n\
                 thickness = {thickness}\nself_collision = {self_collision}\n\
                 [[collider]]\nshape = \"plane\"\nposition = [0, -0.02, 0]\n"
            ),
        )
        .unwrap();
        let o = cloth_cmd().arg("check").arg(&scene).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let thick = check(0.0097, true);
    assert!(
        thick.contains("the cloth thickness 9.7 mm is longer than")
            && thick.contains("does not come fully to rest"),
        "{thick}"
    );
    for out in [check(0.004, true), check(0.0097, false)] {
        assert!(!out.contains("the cloth thickness"), "{out}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
