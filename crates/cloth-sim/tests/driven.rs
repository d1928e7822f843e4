//! Colliders and pins driven between frames by the caller (`Simulation::set_collider_pose`,
//! `Simulation::set_pin_targets`): they reach the pose or targets at the end of the next frame,
//! move there at constant speed, and hold afterwards.

use std::path::Path;

use cloth_sim::collide::euler_degrees;
use cloth_sim::prelude::*;

fn build(text: &str) -> Simulation {
    let scene = Scene::from_toml_str(text, Path::new(".")).unwrap();
    build_simulation(&scene).unwrap()
}

const SHEET_OVER_BALL: &str = r#"
[cloth]
mesh = { kind = "grid", nx = 9, ny = 9, width = 0.6, height = 0.6 }
position = [0, 0.4, 0]
material = "cotton"
[[collider]]
name = "ball"
shape = "sphere"
radius = 0.2
position = [0, 0, 0]
rotation = [0, 30, 0]
"#;

#[test]
fn a_collider_set_between_frames_reaches_its_pose_at_the_end_of_the_next_frame() {
    let mut sim = build(SHEET_OVER_BALL);
    sim.step_frame().unwrap();
    let (p, r) = (Vec3::new(0.0, 0.1, 0.05), Vec3::new(10.0, 20.0, -5.0));
    sim.set_collider_pose(0, p, r).unwrap();
    let set = sim.colliders().unwrap();
    let start = set.colliders()[0].pose(sim.time());
    // No jump where the motion starts: the pose now is the pose before.
    assert!(start.translation.vector.norm() < 1e-12);
    let q0 = euler_degrees(&Vec3::new(0.0, 30.0, 0.0));
    assert!(start.rotation.angle_to(&q0) < 1e-9);
    let half = set.colliders()[0].pose(sim.time() + 0.5 / sim.fps());
    assert!((half.translation.vector - p * 0.5).norm() < 1e-12);
    for _ in 0..2 {
        sim.step_frame().unwrap();
        let c = &sim.colliders().unwrap().colliders()[0];
        let pose = c.pose(sim.time());
        assert!((pose.translation.vector - p).norm() < 1e-12);
        assert!(pose.rotation.angle_to(&euler_degrees(&r)) < 1e-9);
    }
}

#[test]
fn driving_a_missing_collider_or_to_a_non_finite_pose_is_an_error_naming_it() {
    let mut sim = build(SHEET_OVER_BALL);
    let e = sim.set_collider_pose(3, Vec3::zeros(), Vec3::zeros());
    assert!(e.unwrap_err().to_string().contains("collider[3]"));
    let e = sim.set_collider_pose(0, Vec3::new(f64::NAN, 0.0, 0.0), Vec3::zeros());
    assert!(e.unwrap_err().to_string().contains("collider[0]"));
}

#[test]
fn pins_set_between_frames_land_on_their_targets_and_hold() {
    let mut sim = build(
        r#"
[cloth]
mesh = { kind = "grid", nx = 7, ny = 7, width = 0.4, height = 0.4 }
[[pin]]
vertices = [0, 6]
"#,
    );
    sim.step_frame().unwrap();
    let group = sim.pins()[0].vertices.clone();
    let targets: Vec<Vec3> = group
        .iter()
        .map(|&i| sim.positions()[i] + Vec3::new(0.0, 0.05, 0.02))
        .collect();
    sim.set_pin_targets(0, &targets).unwrap();
    for _ in 0..3 {
        sim.step_frame().unwrap();
        for (&i, p) in group.iter().zip(&targets) {
            assert!((sim.positions()[i] - p).norm() < 1e-12, "vertex {i}");
        }
    }
    let wrong = sim
        .set_pin_targets(0, &targets[..1])
        .unwrap_err()
        .to_string();
    assert!(
        wrong.contains("pin[0]") && wrong.contains("1 targets"),
        "{wrong}"
    );
    assert!(sim.set_pin_targets(1, &targets).is_err());
}
