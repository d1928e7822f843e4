//! Collider geometry and motion: signed distances and normals of every shape (placed and
//! rotated), keyframed poses, velocities against finite differences of the pose.

mod common;

use cloth_collide::{Collider, ColliderSet, Keyframe, Motion, Shape, Vec3};
use common::{Lcg, collider, cube_mesh};
use nalgebra::Point3;

fn assert_vec(a: &Vec3, b: &Vec3, tol: f64) {
    assert!((a - b).norm() <= tol, "{a:?} vs {b:?}");
}

/// Query helper: (distance, normal, surface point).
fn q(set: &ColliderSet, i: usize, p: Vec3) -> (f64, Vec3, Vec3) {
    let c = set.query(i, &p).expect("query");
    (c.distance, c.normal, c.surface_point)
}

#[test]
fn sphere_translated() {
    let mut c = collider(Shape::Sphere { radius: 0.5 }, "s");
    c.position = Vec3::new(1.0, 2.0, 3.0);
    let set = ColliderSet::new(vec![c]).unwrap();
    let (d, n, p) = q(&set, 0, Vec3::new(1.0, 2.0, 5.0));
    assert!((d - 1.5).abs() < 1e-14);
    assert_vec(&n, &Vec3::z(), 1e-14);
    assert_vec(&p, &Vec3::new(1.0, 2.0, 3.5), 1e-14);
    let (d, n, _) = q(&set, 0, Vec3::new(0.8, 2.0, 3.0));
    assert!((d + 0.3).abs() < 1e-14);
    assert_vec(&n, &-Vec3::x(), 1e-14);
}

#[test]
fn plane_rotated_is_a_tilted_half_space() {
    // Rotating the half-space y <= 0 by 90 degrees about z makes its normal world -x.
    let mut c = collider(Shape::Plane, "wall");
    c.rotation = Vec3::new(0.0, 0.0, 90.0);
    c.position = Vec3::new(2.0, 0.0, 0.0);
    let set = ColliderSet::new(vec![c]).unwrap();
    let (d, n, p) = q(&set, 0, Vec3::new(1.5, 7.0, -3.0));
    assert!((d - 0.5).abs() < 1e-12);
    assert_vec(&n, &-Vec3::x(), 1e-12);
    assert_vec(&p, &Vec3::new(2.0, 7.0, -3.0), 1e-12);
    let (d, _, _) = q(&set, 0, Vec3::new(2.25, 0.0, 0.0));
    assert!((d + 0.25).abs() < 1e-12);
}

#[test]
fn capsule_rotated_onto_x() {
    // Local y maps to world -x under Rz(90).
    let mut c = collider(
        Shape::Capsule {
            radius: 0.2,
            length: 1.0,
        },
        "cap",
    );
    c.rotation = Vec3::new(0.0, 0.0, 90.0);
    let set = ColliderSet::new(vec![c]).unwrap();
    // Beyond the end cap on -x: distance to the tip at x = -0.7.
    let (d, n, _) = q(&set, 0, Vec3::new(-1.0, 0.0, 0.0));
    assert!((d - 0.3).abs() < 1e-12);
    assert_vec(&n, &-Vec3::x(), 1e-12);
    // Beside the segment, above it in y.
    let (d, n, p) = q(&set, 0, Vec3::new(0.3, 0.5, 0.0));
    assert!((d - 0.3).abs() < 1e-12);
    assert_vec(&n, &Vec3::y(), 1e-12);
    assert_vec(&p, &Vec3::new(0.3, 0.2, 0.0), 1e-12);
    // Inside on the axis segment, off the axis by 0.05 in z.
    let (d, n, _) = q(&set, 0, Vec3::new(0.1, 0.0, 0.05));
    assert!((d + 0.15).abs() < 1e-12);
    assert_vec(&n, &Vec3::z(), 1e-12);
}

#[test]
fn cylinder_rotated_and_translated() {
    let mut c = collider(
        Shape::Cylinder {
            radius: 0.5,
            length: 2.0,
        },
        "cyl",
    );
    c.rotation = Vec3::new(90.0, 0.0, 0.0); // local y -> world z
    c.position = Vec3::new(0.0, 1.0, 0.0);
    let set = ColliderSet::new(vec![c]).unwrap();
    // Cap at world z = 1.
    let (d, n, _) = q(&set, 0, Vec3::new(0.1, 1.1, 1.4));
    assert!((d - 0.4).abs() < 1e-12);
    assert_vec(&n, &Vec3::z(), 1e-12);
    // Side: radial along world y.
    let (d, n, _) = q(&set, 0, Vec3::new(0.0, 2.0, 0.3));
    assert!((d - 0.5).abs() < 1e-12);
    assert_vec(&n, &Vec3::y(), 1e-12);
    // Inside near the side.
    let (d, n, _) = q(&set, 0, Vec3::new(-0.45, 1.0, 0.0));
    assert!((d + 0.05).abs() < 1e-12);
    assert_vec(&n, &-Vec3::x(), 1e-12);
    // Rim: the corner region, distance to the rim circle.
    let (d, _, p) = q(&set, 0, Vec3::new(0.0, 1.0 + 0.5 + 0.3, 1.0 + 0.4));
    assert!((d - 0.5).abs() < 1e-12);
    assert_vec(&p, &Vec3::new(0.0, 1.5, 1.0), 1e-12);
}

#[test]
fn cuboid_rotated_about_y() {
    let mut c = collider(
        Shape::Cuboid {
            size: Vec3::new(2.0, 1.0, 4.0),
        },
        "box",
    );
    c.rotation = Vec3::new(0.0, 90.0, 0.0); // local x -> world -z, local z -> world x
    c.position = Vec3::new(0.0, 0.5, 0.0);
    let set = ColliderSet::new(vec![c]).unwrap();
    // World x is local z (half extent 2).
    let (d, n, _) = q(&set, 0, Vec3::new(2.5, 0.5, 0.0));
    assert!((d - 0.5).abs() < 1e-12);
    assert_vec(&n, &Vec3::x(), 1e-12);
    // World z is local -x (half extent 1).
    let (d, n, _) = q(&set, 0, Vec3::new(0.0, 0.5, -1.25));
    assert!((d - 0.25).abs() < 1e-12);
    assert_vec(&n, &-Vec3::z(), 1e-12);
    // Inside, nearest to the top face.
    let (d, n, _) = q(&set, 0, Vec3::new(0.0, 0.9, 0.0));
    assert!((d + 0.1).abs() < 1e-12);
    assert_vec(&n, &Vec3::y(), 1e-12);
}

#[test]
fn mesh_cube_matches_the_analytic_box() {
    let (v, t) = cube_mesh(0.5);
    let mut flipped = t.clone();
    for tri in flipped.iter_mut() {
        tri.swap(1, 2);
    }
    let place = |shape: Shape| Collider {
        shape,
        position: Vec3::new(0.3, -0.2, 0.1),
        rotation: Vec3::new(20.0, -35.0, 50.0),
        ..Collider::default()
    };
    let set = ColliderSet::new(vec![
        place(Shape::Mesh {
            vertices: v.clone(),
            triangles: t,
        }),
        place(Shape::Mesh {
            vertices: v,
            triangles: flipped,
        }),
        place(Shape::Cuboid {
            size: Vec3::repeat(1.0),
        }),
    ])
    .unwrap();
    assert_eq!(set.vertex_count(), 16);
    assert_eq!(set.triangle_count(), 24);
    let mut rng = Lcg(7);
    for _ in 0..2000 {
        let p = rng.vec(-1.2, 1.2);
        let exact = set.query(2, &p).unwrap();
        for i in 0..2 {
            let m = set.query(i, &p).unwrap();
            assert!(
                (m.distance - exact.distance).abs() < 1e-12,
                "{p:?}: {} vs {}",
                m.distance,
                exact.distance
            );
            assert_vec(&m.surface_point, &exact.surface_point, 1e-9);
        }
    }
}

#[test]
fn keyframes_interpolate_and_clamp() {
    let keys = vec![
        Keyframe {
            t: 1.0,
            translation: Vec3::zeros(),
            rotation: Vec3::zeros(),
        },
        Keyframe {
            t: 3.0,
            translation: Vec3::new(2.0, 0.0, 0.0),
            rotation: Vec3::new(0.0, 0.0, 90.0),
        },
    ];
    let c = Collider {
        shape: Shape::Sphere { radius: 1.0 },
        position: Vec3::new(0.0, 1.0, 0.0),
        motion: Motion::Keyframes(keys),
        ..Collider::default()
    };
    c.validate().unwrap();
    let at = |t: f64| c.pose(t);
    // Halfway: translation (1, 1, 0), rotation 45 degrees about z.
    let mid = at(2.0);
    assert_vec(&mid.translation.vector, &Vec3::new(1.0, 1.0, 0.0), 1e-14);
    assert!((mid.rotation.angle() - std::f64::consts::FRAC_PI_4).abs() < 1e-14);
    assert_vec(
        &(mid.rotation * Vec3::x()),
        &Vec3::new(1.0, 1.0, 0.0).normalize(),
        1e-14,
    );
    // Clamped outside the range.
    assert_eq!(at(0.0), at(1.0));
    assert_eq!(at(10.0), at(3.0));
    assert_vec(
        &at(10.0).translation.vector,
        &Vec3::new(2.0, 1.0, 0.0),
        1e-14,
    );
    // At rest outside the range.
    assert_eq!(
        c.point_velocity(&Vec3::new(0.0, 2.0, 0.0), 5.0),
        Vec3::zeros()
    );
}

/// Velocity of a material point against a central difference of the pose.
fn check_velocity_fd(c: &Collider, t: f64) {
    let h = 1e-6;
    let local = Point3::new(0.3, -0.7, 1.1);
    let p = c.pose(t) * local;
    let fd = ((c.pose(t + h) * local) - (c.pose(t - h) * local)) / (2.0 * h);
    let v = c.point_velocity(&p.coords, t);
    assert!(
        (v - fd).norm() < 1e-6 * (1.0 + fd.norm()),
        "{v:?} vs {fd:?}"
    );
}

#[test]
fn rotating_collider_velocity_is_omega_cross_r() {
    let c = Collider {
        shape: Shape::Cuboid {
            size: Vec3::repeat(1.0),
        },
        position: Vec3::new(1.0, 2.0, 3.0),
        rotation: Vec3::new(10.0, 20.0, 30.0),
        motion: Motion::Velocity {
            linear: Vec3::new(0.5, -1.0, 0.25),
            angular: Vec3::new(30.0, -60.0, 90.0),
        },
        ..Collider::default()
    };
    for t in [0.001, 0.37, 2.5] {
        check_velocity_fd(&c, t);
    }
    // The motion starts at t = 0: before it (a preroll) the pose is held and nothing moves.
    assert_eq!(c.pose(-1.0), c.pose(0.0));
    assert_eq!(
        c.point_velocity(&Vec3::new(1.0, 2.0, 3.0), -0.5),
        Vec3::zeros()
    );
    // Pure spin about y at 90 deg/s: a point 2 m along x moves at pi m/s along -z.
    let spin = Collider {
        motion: Motion::Velocity {
            linear: Vec3::zeros(),
            angular: Vec3::new(0.0, 90.0, 0.0),
        },
        ..Collider::default()
    };
    let v = spin.point_velocity(&Vec3::new(2.0, 0.0, 0.0), 0.0);
    assert_vec(&v, &Vec3::new(0.0, 0.0, -std::f64::consts::PI), 1e-12);
}

#[test]
fn keyframed_velocity_matches_pose_derivative() {
    let keys = vec![
        Keyframe {
            t: 0.0,
            translation: Vec3::zeros(),
            rotation: Vec3::new(5.0, -10.0, 0.0),
        },
        Keyframe {
            t: 0.5,
            translation: Vec3::new(0.2, 0.1, 0.0),
            rotation: Vec3::new(40.0, 25.0, -30.0),
        },
        Keyframe {
            t: 1.5,
            translation: Vec3::new(-0.3, 0.4, 1.0),
            rotation: Vec3::new(-20.0, 60.0, 80.0),
        },
    ];
    let c = Collider {
        shape: Shape::Sphere { radius: 0.1 },
        position: Vec3::new(0.5, 0.0, -0.5),
        rotation: Vec3::new(0.0, 30.0, 0.0),
        motion: Motion::Keyframes(keys),
        ..Collider::default()
    };
    for t in [0.1, 0.3, 0.7, 1.2] {
        check_velocity_fd(&c, t);
    }
}

#[test]
fn mesh_sequence_moves_and_reports_frame_velocity() {
    let (v, t) = cube_mesh(0.5);
    // Three frames at 10 fps translating by 0.1 m per frame along local x: 1 m/s.
    let frames: Vec<Vec<Vec3>> = (0..3)
        .map(|k| {
            v.iter()
                .map(|p| p + Vec3::new(0.1 * k as f64, 0.0, 0.0))
                .collect()
        })
        .collect();
    let c = Collider {
        shape: Shape::Mesh {
            vertices: v,
            triangles: t,
        },
        rotation: Vec3::new(0.0, 0.0, 90.0), // local x -> world y
        motion: Motion::MeshSequence {
            frames,
            fps: 10.0,
            start: 0.0,
        },
        ..Collider::default()
    };
    let mut set = ColliderSet::new(vec![c.clone()]).unwrap();
    set.update(0.15); // local offset 0.15 along x = world +y
    let top = set.query(0, &Vec3::new(0.0, 1.0, 0.0)).unwrap();
    assert!(
        (top.distance - (1.0 - 0.65)).abs() < 1e-12,
        "{}",
        top.distance
    );
    assert_vec(&top.normal, &Vec3::y(), 1e-12);
    assert_vec(&top.surface_velocity, &Vec3::new(0.0, 1.0, 0.0), 1e-12);
    assert_vec(
        &c.point_velocity(&Vec3::new(0.0, 1.0, 0.0), 0.15),
        &Vec3::new(0.0, 1.0, 0.0),
        1e-12,
    );
    // At a frame time the velocity is that of the interval ending there, the motion of a step
    // that ends on it: at the last frame (0.2 s) the mesh is still moving, not held.
    for t in [0.1, 0.2] {
        set.update(t);
        let top = set.query(0, &Vec3::new(0.0, 1.0, 0.0)).unwrap();
        assert!((top.distance - (1.0 - 0.5 - t)).abs() < 1e-12, "{t}");
        assert_vec(&top.surface_velocity, &Vec3::new(0.0, 1.0, 0.0), 1e-12);
    }
    // Held after the last frame: at rest, at offset 0.2.
    set.update(5.0);
    let top = set.query(0, &Vec3::new(0.0, 1.0, 0.0)).unwrap();
    assert!((top.distance - 0.3).abs() < 1e-12);
    assert_eq!(top.surface_velocity, Vec3::zeros());
}

#[test]
fn composite_motion_velocity_matches_vertex_trajectory() {
    let (v, t) = cube_mesh(0.5);
    // Deformation: the cube stretches along local y over 4 frames at 20 fps.
    let frames: Vec<Vec<Vec3>> = (0..4)
        .map(|k| {
            v.iter()
                .map(|p| Vec3::new(p.x, p.y * (1.0 + 0.1 * k as f64), p.z))
                .collect()
        })
        .collect();
    let c = Collider {
        shape: Shape::Mesh {
            vertices: v,
            triangles: t,
        },
        position: Vec3::new(0.2, 0.0, -0.1),
        rotation: Vec3::new(0.0, 0.0, 30.0),
        motion: Motion::Composite {
            rigid: Box::new(Motion::Velocity {
                linear: Vec3::new(0.0, 0.0, 2.0),
                angular: Vec3::new(40.0, 0.0, 20.0),
            }),
            deformation: Box::new(Motion::MeshSequence {
                frames: frames.clone(),
                fps: 20.0,
                start: 0.0,
            }),
        },
        ..Collider::default()
    };
    c.validate().unwrap();
    let mut set = ColliderSet::new(vec![c.clone()]).unwrap();
    // Trajectory of mesh vertex 6 (a corner): world = pose(t) * lerped local position.
    let local = |t: f64| {
        let f = t * 20.0;
        let k = f.floor() as usize;
        let s = f - k as f64;
        frames[k][6] * (1.0 - s) + frames[k + 1][6] * s
    };
    let world = |t: f64| (c.pose(t) * Point3::from(local(t))).coords;
    let (t0, h) = (0.07, 1e-6);
    let fd = (world(t0 + h) - world(t0 - h)) / (2.0 * h);
    let p = world(t0);
    assert!((c.point_velocity(&p, t0) - fd).norm() < 1e-6 * (1.0 + fd.norm()));
    set.update(t0);
    // Query slightly outside along the corner: the surface point is the corner itself.
    let pose = c.pose(t0);
    let outward = pose.rotation * Vec3::new(1.0, 1.0, 1.0).normalize();
    let ct = set.query(0, &(p + outward * 0.01)).unwrap();
    assert!((ct.surface_point - p).norm() < 1e-9);
    assert!((ct.surface_velocity - fd).norm() < 1e-6 * (1.0 + fd.norm()));
}

mod gradient {
    use super::*;
    use proptest::prelude::*;

    fn shapes() -> Vec<Shape> {
        let (v, t) = cube_mesh(0.4);
        vec![
            Shape::Sphere { radius: 0.5 },
            Shape::Plane,
            Shape::Capsule {
                radius: 0.3,
                length: 0.8,
            },
            Shape::Cylinder {
                radius: 0.4,
                length: 0.9,
            },
            Shape::Cuboid {
                size: Vec3::new(0.6, 0.9, 1.2),
            },
            Shape::Mesh {
                vertices: v,
                triangles: t,
            },
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The outward normal is the gradient of the signed distance (central differences),
        /// wherever the closest point is unique (the distance is smooth there).
        #[test]
        fn normal_is_the_distance_gradient(
            shape_index in 0usize..6,
            (px, py, pz) in (-1.5f64..1.5, -1.5f64..1.5, -1.5f64..1.5),
            (rx, ry, rz) in (-180.0f64..180.0, -90.0f64..90.0, -180.0f64..180.0),
        ) {
            let c = Collider {
                shape: shapes().swap_remove(shape_index),
                position: Vec3::new(0.1, -0.2, 0.3),
                rotation: Vec3::new(rx, ry, rz),
                ..Collider::default()
            };
            let set = ColliderSet::new(vec![c]).unwrap();
            let p = Vec3::new(px, py, pz);
            let e = 1e-6;
            let d = |q: Vec3| set.query(0, &q).unwrap().distance;
            let grad = Vec3::new(
                d(p + Vec3::x() * e) - d(p - Vec3::x() * e),
                d(p + Vec3::y() * e) - d(p - Vec3::y() * e),
                d(p + Vec3::z() * e) - d(p - Vec3::z() * e),
            ) / (2.0 * e);
            let n = set.query(0, &p).unwrap().normal;
            // Near the medial axis (inside: ties between faces) the gradient jumps; a smooth
            // point has |grad| = 1, so skip points where the difference quotient is not unit.
            prop_assume!((grad.norm() - 1.0).abs() < 1e-4);
            prop_assert!((grad - n).norm() < 1e-4, "grad {:?} normal {:?}", grad, n);
        }
    }
}

/// Signed volume (m^3) of a closed triangle mesh (divergence theorem).
fn volume(v: &[Vec3], t: &[[usize; 3]]) -> f64 {
    t.iter()
        .map(|f| v[f[0]].dot(&v[f[1]].cross(&v[f[2]])))
        .sum::<f64>()
        / 6.0
}

#[test]
fn tessellations_are_closed_outward_and_on_the_surface() {
    use std::f64::consts::PI;
    let cases = [
        (Shape::Sphere { radius: 0.5 }, 4.0 / 3.0 * PI * 0.125),
        (
            Shape::Capsule {
                radius: 0.2,
                length: 0.6,
            },
            PI * 0.04 * 0.6 + 4.0 / 3.0 * PI * 0.008,
        ),
        (
            Shape::Capsule {
                radius: 0.2,
                length: 0.0,
            },
            4.0 / 3.0 * PI * 0.008,
        ),
        (
            Shape::Cylinder {
                radius: 0.3,
                length: 1.0,
            },
            PI * 0.09,
        ),
        (
            Shape::Cuboid {
                size: Vec3::new(0.5, 1.0, 2.0),
            },
            1.0,
        ),
    ];
    for (shape, exact) in cases {
        let (v, t) = shape.tessellate(96);
        // Closed and consistently wound: accepted as a mesh collider.
        let as_mesh = collider(
            Shape::Mesh {
                vertices: v.clone(),
                triangles: t.clone(),
            },
            "tess",
        );
        as_mesh
            .validate()
            .unwrap_or_else(|e| panic!("{shape:?}: {e}"));
        let vol = volume(&v, &t);
        assert!(
            vol > 0.0 && (vol - exact).abs() < 2e-3 * exact,
            "{shape:?}: {vol} vs {exact}"
        );
        // Vertices on the exact surface.
        let set = ColliderSet::new(vec![collider(shape.clone(), "exact")]).unwrap();
        for p in &v {
            assert!(
                set.query(0, p).unwrap().distance.abs() < 1e-12,
                "{shape:?}: {p:?}"
            );
        }
    }
    let (v, t) = Shape::Plane.tessellate(8);
    assert_eq!((v.len(), t.len()), (4, 2));
    let n = (v[t[0][1]] - v[t[0][0]]).cross(&(v[t[0][2]] - v[t[0][0]]));
    assert!(n.y > 0.0, "plane drawn facing +y");
}

#[test]
fn world_mesh_follows_the_pose() {
    let c = Collider {
        shape: Shape::Cuboid {
            size: Vec3::repeat(1.0),
        },
        position: Vec3::new(1.0, 2.0, 3.0),
        motion: Motion::Velocity {
            linear: Vec3::new(1.0, 0.0, 0.0),
            angular: Vec3::zeros(),
        },
        ..Collider::default()
    };
    let mut set = ColliderSet::new(vec![c]).unwrap();
    set.update(2.0);
    let (v, _) = set.world_mesh(0, 16).unwrap();
    let centre: Vec3 = v.iter().sum::<Vec3>() / v.len() as f64;
    assert_vec(&centre, &Vec3::new(3.0, 2.0, 3.0), 1e-12);
    assert!(set.world_mesh(1, 16).is_none());
}
