//! Cloth on a skinned glTF character (`shape = "gltf"`): the project's mannequin plays its
//! "twist" clip under a sheet draped over its head and shoulders. Checked by code that does not
//! share the simulator's contact bookkeeping: every cloth vertex is tested against the body as
//! posed independently at the frame's time (ray-parity point-in-mesh on the glTF's own skinned
//! triangles), and friction must carry the cloth round with the turning torso.

use cloth::collide::{GltfBody, GltfOptions};
use cloth::mesh::Vec3;
use cloth::sim::{Scene, build_simulation};
use std::path::Path;

fn mannequin() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/mannequin/mannequin.glb")
}

/// Whether `p` is inside the closed triangle mesh: parity of crossings of a ray in a fixed
/// direction that no axis-aligned or symmetric feature lines up with.
fn inside(p: &Vec3, vertices: &[Vec3], triangles: &[[usize; 3]]) -> bool {
    let d = Vec3::new(0.3141, 0.8660, 0.2718).normalize();
    let mut crossings = 0;
    for t in triangles {
        let (a, b, c) = (vertices[t[0]], vertices[t[1]], vertices[t[2]]);
        let (e1, e2) = (b - a, c - a);
        let h = d.cross(&e2);
        let det = e1.dot(&h);
        if det.abs() < 1e-14 {
            continue;
        }
        let s = p - a;
        let u = s.dot(&h) / det;
        if !(0.0..=1.0).contains(&u) {
            continue;
        }
        let q = s.cross(&e1);
        let v = d.dot(&q) / det;
        if v < 0.0 || u + v > 1.0 {
            continue;
        }
        if e2.dot(&q) / det > 0.0 {
            crossings += 1;
        }
    }
    crossings % 2 == 1
}

/// Mean turn (radians, positive counter-clockwise seen from +y) of the points about the
/// vertical axis from `from` to `to`, over points at least 5 cm from the axis.
fn mean_turn(from: &[Vec3], to: &[Vec3]) -> f64 {
    let (mut sum, mut n) = (0.0, 0);
    for (a, b) in from.iter().zip(to) {
        if a.x.hypot(a.z) > 0.05 && b.x.hypot(b.z) > 0.05 {
            // Counter-clockwise about +y turns +x towards -z.
            let turn = (-b.z).atan2(b.x) - (-a.z).atan2(a.x);
            sum += (turn + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU)
                - std::f64::consts::PI;
            n += 1;
        }
    }
    sum / n.max(1) as f64
}

#[test]
fn a_sheet_on_a_twisting_mannequin_stays_outside_and_turns_with_it() {
    let frames = 15; // half a second: the shoulders turn from 0 to 55 degrees
    let text = format!(
        r#"
[run]
fps = 30
frames = {frames}
[cloth]
mesh = {{ kind = "grid", nx = 17, ny = 17, width = 0.5, height = 0.5 }}
position = [0.0, 1.74, 0.0]
material = "cotton"
[[collider]]
shape = "gltf"
path = "{}"
animation = "twist"
loop = true
friction = 0.8
"#,
        mannequin().display()
    );
    let scene = Scene::from_toml_str(&text, Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build_simulation(&scene).unwrap_or_else(|e| panic!("{e}"));
    let options = GltfOptions {
        clip: Some("twist".into()),
        looping: true,
        ..GltfOptions::default()
    };
    let body = GltfBody::load(&mannequin(), &options).unwrap();
    let mut posed = Vec::new();
    let mut settled = None;
    for f in 1..=frames {
        sim.step_frame()
            .unwrap_or_else(|e| panic!("frame {f}: {e}"));
        body.pose(sim.time(), &mut posed);
        let inside_count = sim
            .positions()
            .iter()
            .filter(|p| inside(p, &posed, body.triangles()))
            .count();
        assert_eq!(inside_count, 0, "frame {f}: cloth vertices inside the body");
        if f == 3 {
            settled = Some(sim.positions().to_vec());
        }
    }
    // The sheet lies on the head and shoulders: nothing fell through.
    let lowest = sim
        .positions()
        .iter()
        .map(|p| p.y)
        .fold(f64::INFINITY, f64::min);
    assert!(lowest > 1.0, "the sheet slid down to y = {lowest} m");
    // The neck turns the head by 40 degrees (chest 55, neck -15) counter-clockwise in this
    // half second; friction carries the sheet round in the same direction.
    let turn = mean_turn(&settled.unwrap(), sim.positions()).to_degrees();
    eprintln!("sheet turned {turn:.1} degrees, lowest vertex at {lowest:.3} m");
    assert!(turn > 5.0, "the sheet turned {turn:.1} degrees");
}

#[test]
fn a_glb_collider_with_an_unknown_clip_or_a_bad_file_is_refused_with_its_key() {
    let scene = |extra: &str, path: &Path| {
        format!(
            "[cloth]\nmesh = {{ kind = \"grid\", nx = 3, ny = 3, width = 0.1, height = 0.1 }}\nposition = [0.0, 2.0, 0.0]\n[[collider]]\nshape = \"gltf\"\npath = \"{}\"\n{extra}",
            path.display()
        )
    };
    let text = scene("animation = \"moonwalk\"\n", &mannequin());
    let scene_ok = Scene::from_toml_str(&text, Path::new(".")).unwrap();
    let e = build_simulation(&scene_ok)
        .err()
        .expect("unknown clip accepted")
        .to_string();
    assert!(
        e.contains("collider[0].path") && e.contains("moonwalk"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1);
    let bogus = std::env::temp_dir().join(format!("cloth-bogus-{}.glb", std::process::id()));
    std::fs::write(&bogus, b"glTF not really").unwrap();
    let s = Scene::from_toml_str(&scene("", &bogus), Path::new(".")).unwrap();
    let e = build_simulation(&s)
        .err()
        .expect("bogus file accepted")
        .to_string();
    assert!(e.contains("collider[0].path"), "{e}");
    let _ = std::fs::remove_file(&bogus);
    let e = Scene::from_toml_str(
        &scene("frames = \"a_{:04}.obj\"\n", &mannequin()),
        Path::new("."),
    )
    .expect_err("frames accepted for a glTF collider")
    .to_string();
    assert!(e.contains("collider[0].frames"), "{e}");
}
