//! Cloth resting on mesh colliders as users have them: a real Blender export whose vertices are
//! split at normal seams (`assets/characters/walk_female.glb`, welded by the reader) and an
//! open OBJ mesh (a tray without its top, each face with its own vertices, welded by the
//! collider set). Checked by code that shares nothing with the simulator's contact queries: a
//! point-to-triangle distance and a ray-parity inside test written here, against the body
//! posed independently at each frame's time.

mod geometry;

use cloth::collide::{GltfBody, GltfOptions};
use cloth::mesh::Vec3;
use cloth::sim::scene::{Scene, build_simulation};
use geometry::{inside_mesh, mesh_distance};
use std::path::{Path, PathBuf};

/// A file of the workspace's `assets/` folder (real inputs, as their authors made them).
fn shared(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(file)
}

#[test]
fn a_scarf_rests_on_a_split_vertex_glb_body_as_it_walks() {
    let path = shared("characters/walk_female.glb");
    let thickness = 0.005;
    let frames = 20;
    let text = format!(
        r#"
[run]
fps = 30
frames = {frames}
[cloth]
mesh = {{ kind = "grid", nx = 15, ny = 15, width = 0.35, height = 0.35 }}
position = [0.0, 1.70, 0.0]
material = "cotton"
thickness = {thickness}
[[collider]]
shape = "gltf"
path = "{}"
loop = true
friction = 0.8
"#,
        path.display()
    );
    let scene = Scene::from_toml_str(&text, Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build_simulation(&scene).unwrap_or_else(|e| panic!("{e}"));
    let body = GltfBody::load(
        &path,
        &GltfOptions {
            looping: true,
            ..GltfOptions::default()
        },
    )
    .unwrap();
    assert_eq!(body.vertex_count(), 23_752, "the reader welds the export");
    let mut posed = Vec::new();
    let mut touching = 0;
    for f in 1..=frames {
        sim.step_frame()
            .unwrap_or_else(|e| panic!("frame {f}: {e}"));
        body.pose(sim.time(), &mut posed);
        for (i, p) in sim.positions().iter().enumerate() {
            let d = mesh_distance(p, &posed, body.triangles(), 0.05);
            assert!(
                d > 0.5 * thickness,
                "frame {f}: cloth vertex {i} is {d} m from the body"
            );
            assert!(
                !inside_mesh(p, &posed, body.triangles()),
                "frame {f}: vertex {i} inside"
            );
            touching += usize::from(d < 2.0 * thickness);
        }
    }
    assert!(touching > 0, "the scarf never came to rest on the body");
}

/// The tray [-0.2, 0.2] x [0, 0.2] x [-0.2, 0.2] without its top, as an OBJ whose five faces
/// each have their own four vertices: (file text, vertices, triangles).
fn open_tray() -> (String, Vec<Vec3>, Vec<[usize; 3]>) {
    let (h, y0, y1) = (0.2, 0.0, 0.2);
    // Each face: four corners counter-clockwise seen from outside.
    let faces = [
        [[-h, y0, -h], [h, y0, -h], [h, y0, h], [-h, y0, h]], // floor, seen from below
        [[-h, y0, h], [h, y0, h], [h, y1, h], [-h, y1, h]],   // +z
        [[h, y0, -h], [-h, y0, -h], [-h, y1, -h], [h, y1, -h]], // -z
        [[h, y0, h], [h, y0, -h], [h, y1, -h], [h, y1, h]],   // +x
        [[-h, y0, -h], [-h, y0, h], [-h, y1, h], [-h, y1, -h]], // -x
    ];
    let (mut text, mut v, mut t) = (String::new(), Vec::new(), Vec::new());
    for face in faces {
        let base = v.len();
        for c in face {
            text += &format!("v {} {} {}\n", c[0], c[1], c[2]);
            v.push(Vec3::new(c[0], c[1], c[2]));
        }
        for tri in [[0, 1, 2], [0, 2, 3]] {
            let tri = tri.map(|k| base + k);
            text += &format!("f {} {} {}\n", tri[0] + 1, tri[1] + 1, tri[2] + 1);
            t.push(tri);
        }
    }
    (text, v, t)
}

#[test]
fn a_sheet_hangs_over_the_wall_of_an_open_split_obj_tray_without_crossing_it() {
    let dir = std::env::temp_dir().join(format!("cloth-tray-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (obj, v, t) = open_tray();
    std::fs::write(dir.join("tray.obj"), obj).unwrap();
    let thickness = 0.005;
    let frames = 45;
    let text = format!(
        r#"
[run]
fps = 30
frames = {frames}
[cloth]
mesh = {{ kind = "grid", nx = 21, ny = 21, width = 0.4, height = 0.4 }}
position = [0.2, 0.26, 0.0]
material = "cotton"
thickness = {thickness}
[[collider]]
shape = "obj"
path = "tray.obj"
friction = 0.5
[[collider]]
shape = "plane"
position = [0.0, -0.05, 0.0]
friction = 0.5
"#
    );
    let scene = Scene::from_toml_str(&text, &dir).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build_simulation(&scene).unwrap_or_else(|e| panic!("{e}"));
    let report = &sim.colliders().expect("colliders").mesh_reports()[0];
    assert_eq!((report.weld.vertices, report.weld.welded_vertices), (20, 8));
    assert_eq!((report.boundary_edges, report.closed_components), (4, 0));
    for f in 1..=frames {
        sim.step_frame()
            .unwrap_or_else(|e| panic!("frame {f}: {e}"));
        for (i, p) in sim.positions().iter().enumerate() {
            let d = mesh_distance(p, &v, &t, 1.0);
            assert!(
                d > 0.5 * thickness,
                "frame {f}: vertex {i} is {d} m from the tray"
            );
            if p.x.abs() < 0.2 && p.z.abs() < 0.2 {
                // Over the floor's footprint: above the floor, never through it.
                assert!(
                    p.y > 0.0,
                    "frame {f}: vertex {i} went through the floor: {p:?}"
                );
            }
        }
    }
    // Hung over the +x wall: one half down inside the tray, the other down outside it.
    let x = sim.positions();
    let inner = x.iter().filter(|p| p.x < 0.19 && p.y < 0.1).count();
    let outer = x.iter().filter(|p| p.x > 0.21 && p.y < 0.1).count();
    eprintln!("{inner} vertices low inside the tray, {outer} low outside it");
    assert!(
        inner > 0 && outer > 0,
        "the sheet did not fall on both sides of the wall"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
