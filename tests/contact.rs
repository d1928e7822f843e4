//! Cloth against solids and against itself (Baraff & Witkin 1998, §5.4, §6.1 and §6.2),
//! checked against what physics says: no penetration, rest without jitter, separation when
//! the support falls away faster than gravity, Coulomb's friction threshold and sliding
//! acceleration, Coulomb's law at impact, and no self-intersection after folding.

use cloth::mesh::Vec3;
use cloth::sim::{scene::Scene, scene::build_simulation, simulation::Simulation};
use std::path::Path;

const G: f64 = 9.81;

fn sim(toml: &str) -> Simulation {
    let scene = Scene::from_toml_str(toml, Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
    build_simulation(&scene).unwrap_or_else(|e| panic!("{e}"))
}

/// Deepest penetration (m, positive inside) of any cloth vertex into any collider at the
/// simulation's current time.
fn deepest(sim: &Simulation) -> f64 {
    let set = sim.colliders().expect("scene has colliders");
    let mut worst = f64::NEG_INFINITY;
    for p in sim.positions() {
        for i in 0..set.len() {
            if let Some(c) = set.query(i, p) {
                worst = worst.max(-c.distance);
            }
        }
    }
    worst
}

fn drop_scene(collider: &str, frames: usize) -> String {
    format!(
        r#"
[run]
fps = 30
frames = {frames}
[cloth]
mesh = {{ kind = "grid", nx = 21, ny = 21, width = 0.6, height = 0.6 }}
position = [0.0, 0.35, 0.0]
material = "cotton"
thickness = 0.005
[[collider]]
{collider}
thickness = 0.0
[solver]
h_max = 0.0166666667
"#
    )
}

fn drop_and_settle(collider: &str) {
    // Three seconds: the hanging parts swing for about two before they come to rest.
    let frames = 90;
    let mut s = sim(&drop_scene(collider, frames));
    let thickness = 0.005;
    let mut energies = Vec::new();
    for f in 0..frames {
        let st = s
            .step_frame()
            .unwrap_or_else(|e| panic!("{collider}: frame {f}: {e}"));
        let d = deepest(&s);
        assert!(
            d <= 0.01 * thickness,
            "{collider}: frame {}: a vertex is {d} m inside the solid",
            f + 1
        );
        energies.push(st.kinetic_energy);
    }
    // Settled: over the last half second the kinetic energy stays tiny (no jitter). A vertex
    // of this sheet weighs 0.104 * 0.36 / 441 kg; 1e-6 J is about 4 cm/s on every vertex.
    let tail = &energies[energies.len() - 15..];
    let max_tail = tail.iter().cloned().fold(0.0, f64::max);
    assert!(
        max_tail < 1e-6,
        "{collider}: still moving, KE {max_tail} J at the end; every 10th frame: {:?}",
        energies.iter().step_by(10).collect::<Vec<_>>()
    );
}

#[test]
fn cloth_dropped_on_a_sphere_rests_without_penetrating() {
    drop_and_settle(
        r#"shape = "sphere"
radius = 0.15
position = [0.0, 0.15, 0.0]"#,
    );
}

#[test]
fn cloth_dropped_on_a_cylinder_rests_without_penetrating() {
    drop_and_settle(
        r#"shape = "cylinder"
radius = 0.1
length = 1.0
position = [0.0, 0.2, 0.0]
rotation = [0.0, 0.0, 90.0]"#,
    );
}

#[test]
fn cloth_dropped_on_a_box_rests_without_penetrating() {
    drop_and_settle(
        r#"shape = "box"
size = [0.3, 0.3, 0.3]
position = [0.0, 0.15, 0.0]"#,
    );
}

#[test]
fn cloth_dropped_on_a_plane_rests_without_penetrating() {
    drop_and_settle(
        r#"shape = "plane"
position = [0.0, 0.1, 0.0]"#,
    );
}

#[test]
fn cloth_lifts_off_a_plane_that_falls_faster_than_gravity() {
    // The plane follows y(t) = -a t^2 / 2 with a = 2 g, by keyframes every 10 ms after 0.2 s
    // of rest; the cloth resting on it must separate and fall freely.
    let a = 2.0 * G;
    let mut keys = String::new();
    for k in 0..=40 {
        let t = 0.2 + k as f64 * 0.01;
        let dt = t - 0.2;
        keys.push_str(&format!(
            "{{ t = {t}, translation = [0.0, {}, 0.0] }},",
            -0.5 * a * dt * dt
        ));
    }
    let toml = format!(
        r#"
[run]
fps = 100
frames = 50
[cloth]
mesh = {{ kind = "grid", nx = 11, ny = 11, width = 0.3, height = 0.3 }}
position = [0.0, 0.005, 0.0]
[[collider]]
shape = "plane"
thickness = 0.0
keyframes = [{{ t = 0.0, translation = [0.0, 0.0, 0.0] }}, {keys}]
[solver]
h_max = 0.01
"#
    );
    let mut s = sim(&toml);
    for _ in 0..20 {
        s.step_frame().unwrap();
    }
    let y_rest = centroid(&s).y;
    assert!(
        (y_rest - 0.005).abs() < 1e-3,
        "the cloth should rest on the plane, centroid at {y_rest}"
    );
    for _ in 0..30 {
        s.step_frame().unwrap();
    }
    // After 0.3 s of the plane falling at 2 g, the plane is 0.88 m down and a freely falling
    // cloth 0.44 m; a cloth stuck to the plane would be with it.
    let dt: f64 = 0.3;
    let plane_y = -0.5 * a * dt * dt;
    let cloth_y = centroid(&s).y;
    let free = y_rest - 0.5 * G * dt * dt;
    assert!(
        cloth_y - plane_y > 0.3,
        "cloth at {cloth_y} m did not separate from the plane at {plane_y} m"
    );
    assert!(
        (cloth_y - free).abs() < 0.1 * (0.5 * G * dt * dt),
        "cloth at {cloth_y} m should fall freely to {free} m"
    );
}

/// A 0.2 m square resting on a floor (friction `mu`) that starts to move along x at 1 m/s
/// after 0.2 s at rest; `rounds` is `solver.coulomb_rounds`. Returns the cloth's mean velocity
/// along x at 0.05 s and 0.15 s after the floor started (m/s).
fn dragged_by_floor(mu: f64, rounds: usize) -> (f64, f64) {
    let toml = format!(
        r#"
[run]
fps = 100
frames = 40
[cloth]
mesh = {{ kind = "grid", nx = 11, ny = 11, width = 0.2, height = 0.2 }}
position = [0.0, 0.005, 0.0]
material = "denim"
thickness = 0.005
[[collider]]
shape = "plane"
friction = {mu}
thickness = 0.0
keyframes = [{{ t = 0.0 }}, {{ t = 0.2 }}, {{ t = 1.2, translation = [1.0, 0.0, 0.0] }}]
[solver]
h_max = 0.01
coulomb_rounds = {rounds}
"#
    );
    let mut s = sim(&toml);
    let along = |s: &Simulation| {
        s.velocities().iter().map(|v| v.x).sum::<f64>() / s.velocities().len() as f64
    };
    for _ in 0..25 {
        s.step_frame().unwrap();
    }
    let early = along(&s);
    for _ in 0..10 {
        s.step_frame().unwrap();
    }
    (early, along(&s))
}

/// Coulomb's law within the step: a floor that starts moving under a resting cloth faster than
/// friction can follow drags it along at the acceleration mu g, from the first step on. Static
/// friction decided only after each step holds the cloth to the floor in the step the floor
/// starts, whatever force that takes, and the cloth moves off at the floor's speed at once.
#[test]
fn a_floor_that_starts_moving_drags_a_resting_cloth_at_most_at_mu_g() {
    let mu = 0.4;
    let (early, late) = dragged_by_floor(mu, 1);
    for (v, t) in [(early, 0.05), (late, 0.15)] {
        let coulomb = mu * G * t;
        assert!(
            (v - coulomb).abs() < 0.15 * coulomb,
            "{v} m/s after {t} s, Coulomb allows {coulomb} (floor at 1 m/s)"
        );
    }
    // Decided between steps only, the first step carries the cloth at the floor's speed.
    let (early, _) = dragged_by_floor(mu, 0);
    assert!(
        early > 0.9,
        "{early} m/s after 0.05 s with contact modes decided between steps"
    );
}

fn centroid(s: &Simulation) -> Vec3 {
    s.positions().iter().sum::<Vec3>() / s.positions().len() as f64
}

/// A 0.2 m cloth square on a plane tilted by `alpha` degrees about z, friction `mu`; returns
/// the centroid's velocity along the slope (m/s) at 0.4 s and 0.8 s.
fn incline(alpha: f64, mu: f64) -> (f64, f64) {
    let (s_a, c_a) = alpha.to_radians().sin_cos();
    // Cloth centre at 0.5 cm above the plane along its normal (-sin, cos, 0).
    let toml = format!(
        r#"
[run]
fps = 50
frames = 40
[cloth]
mesh = {{ kind = "grid", nx = 11, ny = 11, width = 0.2, height = 0.2 }}
position = [{px}, {py}, 0.0]
rotation = [0.0, 0.0, {alpha}]
material = "denim"
thickness = 0.005
[[collider]]
shape = "plane"
rotation = [0.0, 0.0, {alpha}]
friction = {mu}
thickness = 0.0
[solver]
h_max = 0.01
"#,
        px = -0.005 * s_a,
        py = 0.005 * c_a,
    );
    let mut s = sim(&toml);
    // Down the slope: (-cos, -sin, 0) for a plane tilted up towards +x.
    let down = Vec3::new(-c_a, -s_a, 0.0);
    let speed = |s: &Simulation| {
        s.velocities().iter().map(|v| v.dot(&down)).sum::<f64>() / s.velocities().len() as f64
    };
    for _ in 0..20 {
        s.step_frame().unwrap();
    }
    let v1 = speed(&s);
    for _ in 0..20 {
        s.step_frame().unwrap();
    }
    (v1, speed(&s))
}

#[test]
fn friction_holds_a_cloth_below_the_angle_of_repose() {
    // mu = 0.5: tan(alpha) = 0.5 at 26.6 degrees; 18 degrees is well below.
    let (v1, v2) = incline(18.0, 0.5);
    assert!(v1.abs() < 1e-3 && v2.abs() < 1e-3, "slid at {v1}, {v2} m/s");
}

#[test]
fn cloth_slides_above_the_angle_of_repose_with_coulomb_acceleration() {
    // mu = 0.3: tan(alpha) = 0.3 at 16.7 degrees; 30 degrees is well above.
    let (alpha, mu) = (30.0f64, 0.3);
    let (v1, v2) = incline(alpha, mu);
    let a = (v2 - v1) / 0.4;
    let expected = G * (alpha.to_radians().sin() - mu * alpha.to_radians().cos());
    assert!(
        (a - expected).abs() < 0.15 * expected,
        "sliding acceleration {a} m/s^2, Coulomb predicts {expected}"
    );
}

/// A flat 0.2 m square thrown onto a floor with friction `mu`, landing at `vn` (m/s) while it
/// moves along it at `vt`, 5 mm above its layer; returns how far its centroid travels along
/// the floor until it stops (m), and its speed along the floor 0.1 s after the start.
fn thrown_onto_floor(vt: f64, vn: f64, mu: f64) -> (f64, f64) {
    let toml = format!(
        r#"
[run]
fps = 100
frames = 80
[cloth]
mesh = {{ kind = "grid", nx = 11, ny = 11, width = 0.2, height = 0.2 }}
position = [0.0, 0.01, 0.0]
velocity = [{vt}, {vn_down}, 0.0]
material = "denim"
thickness = 0.005
[[collider]]
shape = "plane"
friction = {mu}
thickness = 0.0
[solver]
h_max = 0.01
"#,
        vn_down = -vn,
    );
    let mut s = sim(&toml);
    let x0 = centroid(&s).x;
    let along = |s: &Simulation| s.velocities().iter().map(|v| v.x).sum::<f64>() / 121.0;
    for _ in 0..10 {
        s.step_frame().unwrap();
    }
    let v_early = along(&s);
    for _ in 0..70 {
        s.step_frame().unwrap();
    }
    assert!(along(&s).abs() < 1e-3, "still sliding at {} m/s", along(&s));
    (centroid(&s).x - x0, v_early)
}

/// Coulomb's law at impact: landing at `vn` takes a normal impulse m vn, and friction can take
/// at most mu m vn of the slip, so a cloth thrown along a floor keeps `vt - mu vn` and then
/// decelerates at mu g: it travels `vt t_land + (vt - mu vn)^2 / (2 mu g)` (t_land = 5 mm / vn
/// to its layer). A new contact held static whatever its slip stops the cloth dead instead.
#[test]
fn a_cloth_thrown_along_a_floor_keeps_what_friction_cannot_take_at_impact() {
    let (vt, vn, mu) = (2.0f64, 1.0f64, 0.5f64);
    let (travel, v_early) = thrown_onto_floor(vt, vn, mu);
    let after = vt - mu * vn;
    let expected = vt * 0.005 / vn + after * after / (2.0 * mu * G);
    assert!(
        (travel - expected).abs() < 0.15 * expected,
        "travelled {travel} m, Coulomb predicts {expected} m"
    );
    // At 0.1 s: the speed left after impact less 0.1 s of kinetic friction.
    let v_pred = after - mu * G * (0.1 - 0.005 / vn);
    assert!(
        (v_early - v_pred).abs() < 0.15 * after,
        "{v_early} m/s at 0.1 s, Coulomb predicts {v_pred}"
    );
    // Slip that the impact's friction can take: the cloth sticks where it lands.
    let (travel, _) = thrown_onto_floor(0.4, 1.0, 0.5);
    assert!(
        travel < 0.4 * 0.005 + 0.01,
        "slid {travel} m after a sticking impact"
    );
}

/// A sheet hanging from its top edge in the x-y plane; a sphere crosses it along z at `speed`
/// (m/s) with steps of at most 4 ms. Contacts are found at the start of each step, so the step
/// must keep the sphere's travel per step well below its radius (5 m/s * 4 ms = 2 cm against
/// 0.1 m). Returns the frames completed, the error that stopped the run (if any) and how far
/// the sheet was pushed along z; asserts that no vertex of any completed frame is inside the
/// sphere.
fn fast_sphere(speed: f64, frames: usize) -> (usize, Option<String>, f64) {
    let toml = format!(
        r#"
[run]
fps = 60
frames = {frames}
[cloth]
mesh = {{ kind = "grid", nx = 21, ny = 21, width = 0.6, height = 0.6 }}
position = [0.0, 0.7, 0.0]
rotation = [90.0, 0.0, 0.0]
thickness = 0.005
[[pin]]
region = {{ min = [-1.0, 0.99, -0.1], max = [1.0, 1.01, 0.1] }}
[[collider]]
shape = "sphere"
radius = 0.1
position = [0.0, 0.7, -0.5]
velocity = [0.0, 0.0, {speed}]
thickness = 0.0
[solver]
h_max = 0.004
"#
    );
    let mut s = sim(&toml);
    let radius = 0.1;
    let mut max_push: f64 = 0.0;
    for f in 0..frames {
        if let Err(e) = s.step_frame() {
            return (f, Some(e.to_string()), max_push);
        }
        let t = s.time();
        let centre = Vec3::new(0.0, 0.7, -0.5 + speed * t);
        for (i, p) in s.positions().iter().enumerate() {
            let d = (p - centre).norm();
            assert!(
                d >= radius - 0.01 * 0.005,
                "{speed} m/s, frame {}: vertex {i} is {} m inside the sphere",
                f + 1,
                radius - d
            );
        }
        max_push = max_push.max(s.positions().iter().map(|p| p.z).fold(f64::MIN, f64::max));
    }
    (frames, None, max_push)
}

/// The sphere never passes through the sheet: at 3 to 6 m/s no vertex of any completed frame
/// is inside it, and it pushes the sheet aside before anything else happens. Runs may stop
/// early with an error (see the ignored test below); they must stop cleanly and only after the
/// push.
#[test]
fn fast_sphere_pushes_a_hanging_sheet_aside_without_passing_through() {
    for speed in [3.0, 4.0, 5.0, 6.0] {
        let (done, err, push) = fast_sphere(speed, 30);
        assert!(
            push > 0.05,
            "{speed} m/s: the sheet was not pushed aside ({push} m) in {done} frames ({err:?})"
        );
    }
}

/// The same runs must also complete. Until a contact that the cloth pulls off a solid was let
/// go for good, they did not reliably (an attractive constraint force released the contact,
/// and the next step engaged it again as a new static contact while the vertex was still inside
/// the thickness layer): the sheet wrapped around the sphere stretched 20-300% and the run
/// stopped when the step size fell below `h_min` or a triangle stretched beyond the sanity
/// limit, at speeds that changed from one bend model or step size to the next (the hinge
/// bending failed at 2.0, 2.5 and 4.8 m/s with 4 ms steps, the shape operator at 2.5, 4.8, 5.0
/// and 5.2 m/s).
#[test]
fn fast_sphere_runs_complete_at_every_speed() {
    for speed in [2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 4.8, 5.0, 5.2, 5.5, 6.0] {
        let (done, err, _) = fast_sphere(speed, 30);
        assert!(
            err.is_none(),
            "{speed} m/s: stopped after {done} frames: {err:?}"
        );
    }
}

/// A sheet dropped edge-first onto the floor, where it piles up in folds.
const FOLDING_SHEET: &str = r#"
[run]
fps = 30
frames = 45
[cloth]
mesh = { kind = "grid", nx = 21, ny = 21, width = 0.5, height = 0.5 }
position = [0.0, 0.3, 0.0]
rotation = [80.0, 0.0, 0.0]
material = "silk"
thickness = 0.006
self_collision = true
[[collider]]
shape = "plane"
thickness = 0.0
friction = 0.5
[solver]
h_max = 0.0083333333
"#;

#[test]
fn folding_sheet_ends_without_self_intersections() {
    let mut s = sim(FOLDING_SHEET);
    let mut last = None;
    for f in 0..45 {
        last = Some(s.step_frame().unwrap_or_else(|e| panic!("frame {f}: {e}")));
    }
    let st = last.unwrap();
    assert_eq!(
        st.self_intersections, 0,
        "intersecting triangle pairs at the end"
    );
    // It did fold: some part of the sheet lies above another part of it.
    let x = s.positions();
    let top = x.iter().map(|p| p.y).fold(f64::MIN, f64::max);
    assert!(
        top > 0.012,
        "the sheet lies flat (top at {top} m): no fold to test"
    );
}

/// Without self-collision the same fall leaves the sheet through itself, and the per-frame
/// count (an independent triangle-triangle test) says so when `run.count_intersections` is
/// set; by default it counts only with self-collision on.
#[test]
fn crossings_are_counted_with_self_collision_off_when_asked() {
    let off = FOLDING_SHEET.replace("self_collision = true", "self_collision = false");
    let crossings = |toml: &str| {
        let mut s = sim(toml);
        (0..45)
            .map(|f| {
                let st = s.step_frame().unwrap_or_else(|e| panic!("frame {f}: {e}"));
                st.self_intersections
            })
            .max()
            .unwrap_or(0)
    };
    let asked = off.replace("[run]", "[run]\ncount_intersections = true");
    assert!(
        crossings(&asked) > 0,
        "no crossing counted without self-collision"
    );
    assert_eq!(crossings(&off), 0, "counted without being asked");
}

#[test]
fn deforming_obj_sequence_collider_lifts_the_cloth() {
    // A closed box mesh whose top rises 10 cm over one second, given as an OBJ sequence: the
    // cloth resting on it must rise with it (velocities from frame differences).
    let dir = std::env::temp_dir().join(format!("cloth-objseq-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("anim")).unwrap();
    let write_box = |path: &Path, top: f64| {
        let (a, b) = (-0.3, 0.3);
        let mut s = String::new();
        for (x, y, z) in [
            (a, -0.2, a),
            (b, -0.2, a),
            (b, -0.2, b),
            (a, -0.2, b),
            (a, top, a),
            (b, top, a),
            (b, top, b),
            (a, top, b),
        ] {
            s.push_str(&format!("v {x} {y} {z}\n"));
        }
        // Outward-facing quads.
        s.push_str("f 1 2 3 4\nf 5 8 7 6\nf 1 5 6 2\nf 2 6 7 3\nf 3 7 8 4\nf 4 8 5 1\n");
        std::fs::write(path, s).unwrap();
    };
    let frames = 30;
    write_box(&dir.join("box.obj"), 0.0);
    for k in 0..=frames {
        write_box(
            &dir.join(format!("anim/box_{k:04}.obj")),
            0.1 * k as f64 / frames as f64,
        );
    }
    let toml = format!(
        r#"
[run]
fps = 30
frames = {frames}
[cloth]
mesh = {{ kind = "grid", nx = 9, ny = 9, width = 0.3, height = 0.3 }}
position = [0.0, 0.005, 0.0]
[[collider]]
shape = "obj"
path = "box.obj"
frames = "anim/box_{{:04}}.obj"
thickness = 0.0
"#
    );
    let scene = Scene::from_toml_str(&toml, &dir).unwrap_or_else(|e| panic!("{e}"));
    let mut s = build_simulation(&scene).unwrap();
    for _ in 0..frames {
        s.step_frame().unwrap();
        let top = 0.1 * s.time();
        assert!(deepest(&s) <= 0.01 * 0.005, "cloth inside the rising box");
        let c = centroid(&s);
        assert!(
            (c.y - (top + 0.005)).abs() < 2e-3,
            "cloth at {} m, box top at {top} m",
            c.y
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
