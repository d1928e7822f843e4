//! Cloth-cloth contact checked from outside the simulator: an independent triangle-triangle
//! intersection test (signed volumes, a uniform grid as broad phase; nothing shared with
//! cloth-collide) counts crossing pairs of non-adjacent triangles at the end of every frame of
//! the fold, the thrown sheet and the twisting tube at their default steps, and an independent
//! point-triangle distance finds how close a vertex comes to another layer (never under half
//! the thickness); and friction
//! between two layers on an incline holds below the Coulomb threshold and slides at
//! g (sin a - mu cos a) above it.

mod common;

use std::path::Path;

use common::{SameLayer, count_crossings, count_crossings_welded, nearest_other_layer};

use cloth_sim::prelude::*;

fn scenes_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes")
}

#[test]
fn the_independent_counter_sees_crossings() {
    let x = [
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(0.0, 1.0, 0.0),
        Vec3::new(0.2, 0.2, -0.5),
        Vec3::new(0.2, 0.2, 0.5),
        Vec3::new(0.9, 0.9, 0.5),
        Vec3::new(3.0, 3.0, 0.0),
    ];
    assert_eq!(count_crossings(&[[0, 1, 2], [3, 4, 5]], &x), 1);
    assert_eq!(count_crossings(&[[0, 1, 2], [4, 5, 6]], &x), 0);
    // Sharing a vertex: adjacent, not counted.
    assert_eq!(count_crossings(&[[0, 1, 2], [0, 4, 3]], &x), 0);
    // Sharing a stitched vertex (7 sewn to 0, through 8): adjacent once welded, not otherwise.
    let mut y = x.to_vec();
    y.extend([Vec3::new(0.0, 0.0, 0.0), Vec3::new(5.0, 5.0, 5.0)]);
    let tris = [[0, 1, 2], [7, 4, 3]];
    assert_eq!(count_crossings_welded(&tris, &y, &[[0, 8], [8, 7]]), 0);
    assert_eq!(count_crossings_welded(&tris, &y, &[[1, 8]]), 1);
}

#[test]
fn the_independent_layer_distance_sees_near_layers_only() {
    // Two parallel triangles 3 mm apart.
    let x = [
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(0.1, 0.0, 0.0),
        Vec3::new(0.0, 0.0, 0.1),
        Vec3::new(0.02, 0.003, 0.02),
        Vec3::new(0.12, 0.003, 0.02),
        Vec3::new(0.02, 0.003, 0.12),
    ];
    let layers = [[0, 1, 2], [3, 4, 5]];
    let apart = SameLayer::new(&layers, &x, &[], 0.012);
    let d = nearest_other_layer(&layers, &x, &apart, 0.01);
    assert!((d - 0.003).abs() < 1e-12, "{d}");
    // Nothing within reach: reach comes back.
    assert_eq!(nearest_other_layer(&layers, &x, &apart, 0.002), 0.002);
    // Sewn together (vertices 0 and 3 one point), the two are one layer at their seam, and the
    // rest of them lies farther than reach.
    let sewn = SameLayer::new(&layers, &x, &[[0, 3]], 0.012);
    assert_eq!(nearest_other_layer(&layers, &x, &sewn, 0.01), 0.01);
    // Off the triangle's side the nearest point is on an edge: 3 mm out, 4 mm up.
    let y = [
        x[0],
        x[1],
        x[2],
        Vec3::new(-0.003, 0.004, 0.05),
        Vec3::new(-0.103, 0.004, 0.05),
        Vec3::new(-0.103, 0.004, 0.15),
    ];
    let d = nearest_other_layer(&layers, &y, &apart, 0.01);
    assert!((d - 0.005).abs() < 1e-12, "{d}");
}

#[test]
fn the_same_layer_is_what_lies_near_along_the_cloth() {
    // A strip of 5 mm cells, 4 mm wide, 30 mm long: a_i = 2 i on the near side, b_i = 2 i + 1
    // on the far side, i = 0..7.
    let x: Vec<Vec3> = (0..7)
        .flat_map(|i| {
            let u = 0.005 * i as f64;
            [Vec3::new(u, 0.0, 0.0), Vec3::new(u, 0.0, 0.004)]
        })
        .collect();
    let tris: Vec<[usize; 3]> = (0..6)
        .flat_map(|i| {
            [
                [2 * i, 2 * i + 2, 2 * i + 1],
                [2 * i + 2, 2 * i + 3, 2 * i + 1],
            ]
        })
        .collect();
    let same = SameLayer::new(&tris, &x, &[], 0.012);
    // 10 mm along the edge, 9 mm over the far side; 15 mm is too far.
    assert!(same.contains(0, 4) && same.contains(0, 3) && same.contains(4, 0));
    assert!(!same.contains(0, 6) && !same.contains(0, 8) && !same.contains(0, 12));
    // Flat, the strip has no other layer within 5 mm; rolled up so that its last three
    // columns lie 1 mm above its first three, it is two layers there.
    assert_eq!(nearest_other_layer(&tris, &x, &same, 0.005), 0.005);
    let mut rolled = x.clone();
    for (v, p) in rolled.iter_mut().enumerate().skip(8) {
        *p = x[v - 8] + Vec3::new(0.0, 0.001, 0.0);
    }
    let d = nearest_other_layer(&tris, &rolled, &same, 0.01);
    assert!(d <= 0.001 + 1e-12, "{d}");
    // Sewn end to start, it is one layer there: a seam joins what it sews.
    let sewn = SameLayer::new(&tris, &x, &[[0, 12], [1, 13]], 0.012);
    assert!(sewn.contains(0, 12) && sewn.contains(0, 10) && sewn.contains(1, 11));
    assert!(!sewn.contains(0, 6));
}

/// Runs `frames` frames of a scene and returns the crossing count of every frame.
fn crossings_per_frame(text: &str, frames: usize) -> Vec<usize> {
    crossings_watching(text, Some(frames), |_, _| {})
}

/// A vertex's triangles and the ring around it lie within this distance at rest in the
/// meshes below (2 cm grids, the tube's 8 mm cells); a triangle farther away is another layer.
const APART: f64 = 0.012;

/// Watches the smallest distance (m, up to `thickness`) from a vertex to another layer at the
/// end of every step, the start positions taken as the rest.
struct LayerGap {
    thickness: f64,
    same: Option<SameLayer>,
    gap: f64,
    steps: usize,
}

impl LayerGap {
    fn new(thickness: f64) -> Self {
        Self {
            thickness,
            same: None,
            gap: thickness,
            steps: 0,
        }
    }

    fn watch(&mut self, tris: &[[usize; 3]], x: &[Vec3]) {
        match &self.same {
            None => self.same = Some(SameLayer::new(tris, x, &[], APART)),
            Some(same) => {
                self.gap = self
                    .gap
                    .min(nearest_other_layer(tris, x, same, self.thickness));
                self.steps += 1;
            }
        }
    }
}

/// Runs a scene (its own frame count) and returns the crossing count of every frame and the
/// smallest distance (m) from a vertex to another layer at the end of any step (up to
/// `thickness`).
fn crossings_and_layer_gap(text: &str, thickness: f64) -> (Vec<usize>, f64) {
    let mut layers = LayerGap::new(thickness);
    let counts = crossings_watching(text, None, |t, x| layers.watch(t, x));
    let frames = counts.len();
    assert!(layers.steps >= frames, "{} steps", layers.steps);
    eprintln!(
        "nearest other layer {:.3} mm over {} steps of {frames} frames",
        layers.gap * 1e3,
        layers.steps
    );
    (counts, layers.gap)
}

/// As [`crossings_per_frame`] (`None`: the scene's frame count), showing `watch` the triangles
/// with the start positions and those at the end of every accepted step.
fn crossings_watching(
    text: &str,
    frames: Option<usize>,
    mut watch: impl FnMut(&[[usize; 3]], &[Vec3]),
) -> Vec<usize> {
    let scene = Scene::from_toml_str(text, scenes_dir()).expect("scene");
    let mut sim = build_simulation(&scene).expect("simulation");
    let tris = sim.system().mesh.triangles().to_vec();
    assert_eq!(count_crossings(&tris, sim.positions()), 0, "initial state");
    watch(&tris, sim.positions());
    let mut out = Vec::new();
    for _ in 0..frames.unwrap_or(scene.run.frames) {
        (sim.step_frame_watching(&mut |s| watch(&tris, &s.x))).expect("frame");
        out.push(count_crossings(&tris, sim.positions()));
    }
    out
}

fn scene_text(name: &str) -> String {
    std::fs::read_to_string(scenes_dir().join(name)).expect("read scene")
}

#[test]
fn fold_on_plane_at_the_default_step_never_crosses_itself() {
    let text = scene_text("fold_on_plane.toml");
    assert!(
        !text.contains("h_max"),
        "the fold runs at the default h_max"
    );
    let (counts, gap) = crossings_and_layer_gap(&text, 0.006);
    assert!(
        counts.iter().all(|&c| c == 0),
        "crossings per frame: {counts:?}"
    );
    assert!(gap >= 0.003, "a vertex came {gap} m from another layer");
}

#[test]
fn thrown_sheet_never_crosses_itself() {
    let (counts, gap) = crossings_and_layer_gap(&scene_text("thrown_sheet.toml"), 0.005);
    assert!(
        counts.iter().all(|&c| c == 0),
        "crossings per frame: {counts:?}"
    );
    assert!(gap >= 0.0025, "a vertex came {gap} m from another layer");
}

/// The thrown sheet with the multigrid preconditioner, whose hierarchy is built once for the
/// mesh's pattern while contact pairs come and go (their couplings lumped onto the diagonal):
/// no crossing and no vertex within half the thickness of another layer, as with block Jacobi.
#[test]
fn thrown_sheet_with_multigrid_never_crosses_itself() {
    let text = scene_text("thrown_sheet.toml");
    assert!(!text.contains("[solver]"), "the scene sets no solver");
    let text = format!("{text}\n[solver]\npreconditioner = \"multigrid\"\n");
    let (counts, gap) = crossings_and_layer_gap(&text, 0.005);
    assert!(
        counts.iter().all(|&c| c == 0),
        "crossings per frame: {counts:?}"
    );
    assert!(gap >= 0.0025, "a vertex came {gap} m from another layer");
}

#[test]
fn without_self_contact_the_thrown_sheet_crosses_itself() {
    // The scene does exercise the contact: with it off the counter finds crossings.
    let text =
        scene_text("thrown_sheet.toml").replace("self_collision = true", "self_collision = false");
    let counts = crossings_per_frame(&text, 75);
    assert!(
        counts.iter().any(|&c| c > 0),
        "crossings per frame: {counts:?}"
    );
}

/// Runs `twisting_tube.toml` (self-collision as given) and returns the crossing count of every
/// frame, the unwrapped angle (degrees) the top ring turned against the bottom ring and the
/// smallest distance (m) from a vertex to another layer at the end of any step.
fn twisted_tube(self_collision: bool) -> (Vec<usize>, f64, f64) {
    let text = scene_text("twisting_tube.toml");
    assert!(
        !text.contains("h_max"),
        "the tube runs at the default h_max"
    );
    let text = text.replace(
        "self_collision = true",
        &format!("self_collision = {self_collision}"),
    );
    // Vertex 0 starts on the bottom ring at azimuth 0, vertex 1600 above it on the top ring.
    let (bottom, top) = (0, 1600);
    let azimuth = |p: Vec3| p.z.atan2(p.x).to_degrees();
    let (mut last, mut turned) = (None::<f64>, 0.0);
    let mut layers = LayerGap::new(0.004);
    let counts = crossings_watching(&text, None, |t, x| {
        layers.watch(t, x);
        let now = azimuth(x[top]) - azimuth(x[bottom]);
        match last {
            None => assert!((x[top] - Vec3::new(0.05, 0.15, 0.0)).norm() < 1e-6),
            // Less than 180 degrees a frame (12 at 30 fps): unwrap.
            Some(l) => turned += (now - l + 540.0).rem_euclid(360.0) - 180.0,
        }
        last = Some(now);
    });
    eprintln!(
        "tube (self_collision = {self_collision}): nearest other layer {:.3} mm over {} steps",
        layers.gap * 1e3,
        layers.steps
    );
    (counts, turned, layers.gap)
}

#[test]
fn the_twisting_tube_turns_two_turns_without_crossing_itself() {
    let (counts, turned, gap) = twisted_tube(true);
    assert!(
        (turned.abs() - 720.0).abs() < 1.0,
        "the ends turned {turned} degrees against each other"
    );
    assert!(
        counts.iter().all(|&c| c == 0),
        "crossings per frame: {counts:?}"
    );
    // Half the scene's 4 mm thickness.
    assert!(gap >= 0.002, "a vertex came {gap} m from another layer");
}

#[test]
fn without_self_contact_the_twisting_tube_crosses_itself() {
    // The wringing does exercise the contact: with it off the counter finds crossings.
    let (counts, _, _) = twisted_tube(false);
    assert!(
        counts.iter().any(|&c| c > 0),
        "crossings per frame: {counts:?}"
    );
}

/// OBJ text of two flat layers in the incline's frame (y normal to it): a bottom sheet
/// `[-0.4, 0.4] x [-0.15, 0.15]` at y = `t` and a top square `[0.1, 0.3] x [-0.1, 0.1]` at
/// y = 2 t, both with 2 cm cells. Returns the text and the top layer's first vertex.
fn two_layers_obj(t: f64) -> (String, usize) {
    let mut text = String::new();
    let mut tris = Vec::new();
    let mut n = 0;
    let mut sheet = |x0: f64, z0: f64, nx: usize, nz: usize, y: f64, text: &mut String| {
        let base = n;
        for j in 0..=nz {
            for i in 0..=nx {
                let (x, z) = (x0 + 0.02 * i as f64, z0 + 0.02 * j as f64);
                text.push_str(&format!("v {x} {y} {z}\nvt {x} {z}\n"));
                n += 1;
            }
        }
        for j in 0..nz {
            for i in 0..nx {
                let v = |a: usize, b: usize| base + b * (nx + 1) + a + 1;
                tris.push([v(i, j), v(i + 1, j), v(i, j + 1)]);
                tris.push([v(i + 1, j), v(i + 1, j + 1), v(i, j + 1)]);
            }
        }
        base
    };
    sheet(-0.4, -0.15, 40, 15, 1.2 * t, &mut text);
    let top = sheet(0.1, -0.1, 10, 10, 2.1999 * t, &mut text);
    for f in tris {
        text.push_str(&format!("f {0}/{0} {1}/{1} {2}/{2}\n", f[0], f[1], f[2]));
    }
    (text, top)
}

/// Downhill displacement (m) of the top layer's centroid relative to the bottom layer's, at
/// every frame (30 fps, `frames` frames), for cloth friction `mu` on a 20 degree incline.
fn incline_slide(mu: f64, frames: usize) -> Vec<f64> {
    let dir = std::env::temp_dir().join(format!("cloth-incline-{}-{mu}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (obj, top) = two_layers_obj(0.005);
    std::fs::write(dir.join("layers.obj"), obj).expect("write obj");
    // The bottom layer is pinned: only the friction between the layers holds the top one.
    let bottom: Vec<String> = (0..top).map(|i| i.to_string()).collect();
    let text = format!(
        "[run]\nfps = 30\nframes = {frames}\n\
         [cloth]\nmesh = {{ kind = \"obj\", path = \"layers.obj\" }}\n\
         rotation = [0.0, 0.0, 20.0]\nmaterial = \"cotton\"\nthickness = 0.005\n\
         self_collision = true\nfriction = {mu}\n\
         [[pin]]\nvertices = [{}]\n",
        bottom.join(", ")
    );
    let scene = Scene::from_toml_str(&text, &dir).expect("scene");
    let mut sim = build_simulation(&scene).expect("simulation");
    let a = 20f64.to_radians();
    let downhill = Vec3::new(-a.cos(), -a.sin(), 0.0);
    let along = |x: &[Vec3]| {
        let mean = |s: &[Vec3]| s.iter().sum::<Vec3>() / s.len() as f64;
        (mean(&x[top..]) - mean(&x[..top])).dot(&downhill)
    };
    let start = along(sim.positions());
    let mut out = Vec::new();
    for _ in 0..frames {
        sim.step_frame().expect("frame");
        out.push(along(sim.positions()) - start);
    }
    let _ = std::fs::remove_dir_all(&dir);
    out
}

#[test]
fn friction_between_layers_holds_below_the_threshold() {
    // tan 20 deg = 0.364 < 0.5: the top layer stays (creep below the slip speed, 1 mm/s).
    // The bottom layer is pinned and the top one starts resting on it (within the thickness):
    // only the friction between the layers holds it.
    let s = incline_slide(0.5, 30);
    let last = *s.last().unwrap();
    eprintln!("mu 0.5: slid {last} m in 1 s");
    assert!(last.abs() < 2e-3, "slid {last} m in 1 s: {s:?}");
}

#[test]
fn friction_between_layers_slides_above_the_threshold_at_the_coulomb_rate() {
    // tan 20 deg > 0.2: the top layer slides with a = g (sin a - mu cos a) = 1.51 m/s^2.
    let (mu, a) = (0.2, 20f64.to_radians());
    let expected = 9.81 * (a.sin() - mu * a.cos());
    let s = incline_slide(mu, 21);
    // Least-squares s = c0 + c1 t + a/2 t^2 over 0.2 s .. 0.7 s.
    let pts: Vec<(f64, f64)> = (6..21).map(|k| ((k + 1) as f64 / 30.0, s[k])).collect();
    let accel = 2.0 * quadratic_fit(&pts);
    eprintln!("mu 0.2: acceleration {accel} m/s^2, expected {expected}");
    assert!(
        (accel - expected).abs() < 0.1 * expected,
        "acceleration {accel} m/s^2, expected {expected}: {s:?}"
    );
}

/// The t^2 coefficient of the least-squares quadratic through `pts`.
fn quadratic_fit(pts: &[(f64, f64)]) -> f64 {
    let mut m = nalgebra::Matrix3::<f64>::zeros();
    let mut r = nalgebra::Vector3::<f64>::zeros();
    for &(t, s) in pts {
        let b = nalgebra::Vector3::new(1.0, t, t * t);
        m += b * b.transpose();
        r += b * s;
    }
    m.lu().solve(&r).expect("well posed")[2]
}

#[test]
fn impact_zones_stop_a_layer_thrown_through_another_in_one_step() {
    // A top layer at 5 cm thrown at 5 m/s onto a bottom layer: 17 cm per 1/30 s step,
    // far beyond the 5 mm reach of the penalty springs. The continuous check must catch it.
    let dir = std::env::temp_dir().join(format!("cloth-throw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (obj, top) = two_layers_obj(0.005);
    let obj = obj
        .lines()
        .enumerate()
        .map(|(k, l)| {
            // Lift the top layer (vertex lines come in pairs v/vt) to 5 cm.
            if k / 2 >= top && l.starts_with("v ") {
                let c: Vec<f64> = l[2..].split(' ').map(|s| s.parse().unwrap()).collect();
                format!("v {} {} {}\n", c[0], c[1] + 0.05, c[2])
            } else {
                format!("{l}\n")
            }
        })
        .collect::<String>();
    std::fs::write(dir.join("layers.obj"), obj).expect("write obj");
    // The bottom layer is pinned; the zone a pinned vertex joins keeps the pins' motion.
    let bottom: Vec<String> = (0..top).map(|i| i.to_string()).collect();
    let text = format!(
        "[run]\nfps = 30\nframes = 3\ngravity = [0.0, 0.0, 0.0]\n\
         [cloth]\nmesh = {{ kind = \"obj\", path = \"layers.obj\" }}\nmaterial = \"cotton\"\n\
         thickness = 0.005\nself_collision = true\nvelocity = [0.0, -5.0, 0.0]\n\
         [[pin]]\nvertices = [{}]\n",
        bottom.join(", ")
    );
    let scene = Scene::from_toml_str(&text, &dir).expect("scene");
    let mut sim = build_simulation(&scene).expect("simulation");
    let tris = sim.system().mesh.triangles().to_vec();
    let mut zoned = 0;
    for _ in 0..3 {
        zoned += sim.step_frame().expect("frame").zone_vertices;
        assert_eq!(count_crossings(&tris, sim.positions()), 0);
    }
    // Still above: the top layer's lowest point is over the bottom layer's highest.
    let x = sim.positions();
    let low = x[top..].iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
    let high = x[..top]
        .iter()
        .map(|p| p.y)
        .fold(f64::NEG_INFINITY, f64::max);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(zoned > 0, "the impact zones were not needed");
    assert!(low > high, "top {low} m, bottom {high} m");
}

/// OBJ text of two 0.2 m square sheets with 2 cm cells, 4 mm apart (the top one shifted by a
/// third of a cell), with the top sheet's middle vertex pushed 2 mm below the bottom sheet:
/// a mesh exported with a vertex poking through another layer. Returns the text and that
/// vertex (0-based).
fn poked_layers_obj() -> (String, usize) {
    let (n, cell) = (11usize, 0.02);
    let mut text = String::new();
    for (layer, (dx, y, dz)) in [(0.0, 0.0, 0.0), (cell / 3.0, 0.004, cell / 4.0)]
        .into_iter()
        .enumerate()
    {
        for j in 0..n {
            for i in 0..n {
                let (x, z) = (dx + cell * i as f64, dz + cell * j as f64);
                let tip = layer == 1 && i == n / 2 && j == n / 2;
                let y = if tip { -0.002 } else { y };
                text.push_str(&format!(
                    "v {x} {y} {z}\nvt {} {}\n",
                    cell * i as f64,
                    cell * j as f64
                ));
            }
        }
    }
    for layer in 0..2 {
        let v = |i: usize, j: usize| layer * n * n + j * n + i + 1;
        for j in 0..n - 1 {
            for i in 0..n - 1 {
                for f in [
                    [v(i, j), v(i + 1, j), v(i, j + 1)],
                    [v(i + 1, j), v(i + 1, j + 1), v(i, j + 1)],
                ] {
                    text.push_str(&format!("f {0}/{0} {1}/{1} {2}/{2}\n", f[0], f[1], f[2]));
                }
            }
        }
    }
    (text, n * n + (n / 2) * n + n / 2)
}

/// A cloth that starts with a vertex poking through another layer is untangled before it
/// moves (the continuous check would keep the crossing for good), then falls without one;
/// a pinned poking vertex stays where it is (the other sheet cannot always give way around
/// it: what is left is reported truthfully). Without self-collision the crossing is left as
/// it was.
#[test]
fn a_cloth_that_starts_crossed_is_untangled_before_it_moves() {
    let dir = std::env::temp_dir().join(format!("cloth-poked-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (obj, tip) = poked_layers_obj();
    std::fs::write(dir.join("poked.obj"), obj).expect("write obj");
    let scene = |extra: &str| {
        let text = format!(
            "[run]\nfps = 30\nframes = 10\n\
             [cloth]\nmesh = {{ kind = \"obj\", path = \"poked.obj\" }}\n\
             material = \"cotton\"\nthickness = 0.004\n{extra}"
        );
        Scene::from_toml_str(&text, &dir).expect("scene")
    };
    let off = build_simulation(&scene("self_collision = false\n")).expect("simulation");
    let tris = off.system().mesh.triangles().to_vec();
    let given = off.positions().to_vec();
    assert!(count_crossings(&tris, &given) > 0, "the input crosses");
    assert_eq!(
        off.start_untangled().found,
        0,
        "nothing untangled without self-collision"
    );

    let mut sim = build_simulation(&scene("self_collision = true\n")).expect("simulation");
    assert_eq!(
        count_crossings(&tris, sim.positions()),
        0,
        "untangled at the start"
    );
    let u = sim.start_untangled();
    assert!(u.found > 0 && u.remaining == 0, "{u:?}");
    let moved: Vec<usize> = (0..given.len())
        .filter(|&i| sim.positions()[i] != given[i])
        .collect();
    assert_eq!(moved, [tip], "only the poking vertex moves");
    for frame in 1..=10 {
        sim.step_frame().expect("frame");
        assert_eq!(count_crossings(&tris, sim.positions()), 0, "frame {frame}");
    }

    let pinned = format!("self_collision = true\n[[pin]]\nvertices = [{tip}]\n");
    let sim = build_simulation(&scene(&pinned)).expect("simulation");
    let u = sim.start_untangled();
    assert_eq!(sim.positions()[tip], given[tip], "the pinned vertex stays");
    assert_eq!(
        u.remaining,
        count_crossings(&tris, sim.positions()),
        "{u:?}"
    );
    assert!(u.remaining <= u.found, "{u:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
