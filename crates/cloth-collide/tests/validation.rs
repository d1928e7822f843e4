//! Every validation error, with a message naming the collider.

mod common;

use cloth_collide::{CollideError, Collider, ColliderSet, Keyframe, Motion, Shape, Vec3};
use common::{collider, cube_mesh};

/// Validates alone (message names the collider) and inside a set at index 1 (names the index).
fn reject(c: Collider) -> CollideError {
    let e = c.validate().expect_err("must be rejected");
    assert!(e.to_string().contains(&format!("'{}'", c.name)), "{e}");
    let ok = collider(Shape::Plane, "floor");
    let e2 = ColliderSet::new(vec![ok, c.clone()]).expect_err("set must reject");
    assert!(
        e2.to_string().contains(&format!("'{}' (#1)", c.name)),
        "{e2}"
    );
    e
}

fn mesh(vertices: Vec<Vec3>, triangles: Vec<[usize; 3]>) -> Shape {
    Shape::Mesh {
        vertices,
        triangles,
    }
}

#[test]
fn unnamed_collider_is_named_by_index() {
    let c = Collider {
        shape: Shape::Sphere { radius: -1.0 },
        ..Collider::default()
    };
    let e = ColliderSet::new(vec![collider(Shape::Plane, ""), c]).unwrap_err();
    assert!(e.to_string().contains("#1"), "{e}");
}

#[test]
fn non_finite_values() {
    let mut c = collider(Shape::Sphere { radius: 1.0 }, "ball");
    c.position.x = f64::NAN;
    assert!(
        matches!(reject(c.clone()), CollideError::NonFinite { what, .. } if what == "position")
    );
    c.position.x = 0.0;
    c.rotation.z = f64::INFINITY;
    assert!(
        matches!(reject(c.clone()), CollideError::NonFinite { what, .. } if what == "rotation")
    );
    let mut c = collider(Shape::Sphere { radius: f64::NAN }, "ball");
    assert!(matches!(reject(c.clone()), CollideError::NonFinite { what, .. } if what == "radius"));
    c.shape = Shape::Sphere { radius: 1.0 };
    c.motion = Motion::Velocity {
        linear: Vec3::new(f64::NAN, 0.0, 0.0),
        angular: Vec3::zeros(),
    };
    assert!(matches!(reject(c), CollideError::NonFinite { .. }));
    let (mut v, t) = cube_mesh(1.0);
    v[3].y = f64::NEG_INFINITY;
    let e = reject(collider(mesh(v, t), "body"));
    assert!(matches!(e, CollideError::NonFinite { what, .. } if what == "vertex 3"));
}

#[test]
fn bad_dimensions() {
    for shape in [
        Shape::Sphere { radius: 0.0 },
        Shape::Capsule {
            radius: 0.1,
            length: -1.0,
        },
        Shape::Cylinder {
            radius: 0.1,
            length: 0.0,
        },
        Shape::Cuboid {
            size: Vec3::new(1.0, -1.0, 1.0),
        },
    ] {
        assert!(matches!(
            reject(collider(shape, "odd")),
            CollideError::BadDimension { .. }
        ));
    }
}

#[test]
fn negative_thickness_and_friction() {
    let mut c = collider(Shape::Plane, "floor2");
    c.thickness = -0.001;
    assert!(matches!(
        reject(c.clone()),
        CollideError::NegativeThickness { .. }
    ));
    c.thickness = 0.0;
    c.friction = -0.1;
    assert!(matches!(reject(c), CollideError::NegativeFriction { .. }));
}

#[test]
fn mesh_topology_errors() {
    assert!(matches!(
        reject(collider(mesh(vec![], vec![]), "empty")),
        CollideError::EmptyMesh { .. }
    ));
    let (v, mut t) = cube_mesh(1.0);
    t[5][2] = 8;
    assert!(matches!(
        reject(collider(mesh(v.clone(), t), "oob")),
        CollideError::IndexOutOfRange {
            triangle: 5,
            index: 8,
            count: 8,
            ..
        }
    ));
    let (_, mut t) = cube_mesh(1.0);
    t[0] = [0, 0, 1];
    assert!(matches!(
        reject(collider(mesh(v.clone(), t), "degen")),
        CollideError::DegenerateTriangle { triangle: 0, .. }
    ));
    let (_, mut t) = cube_mesh(1.0);
    t[0].swap(1, 2);
    assert!(matches!(
        reject(collider(mesh(v.clone(), t), "wound")),
        CollideError::InconsistentWinding { .. }
    ));
    // A fin: a third triangle on the edge (0, 2) of the cube plus an extra vertex.
    let (mut v2, mut t) = cube_mesh(1.0);
    v2.push(Vec3::new(0.0, 0.0, -3.0));
    t.push([0, 2, 8]);
    assert!(matches!(
        reject(collider(mesh(v2, t), "fin")),
        CollideError::NonManifoldEdge {
            a: 0,
            b: 2,
            count: 3,
            ..
        }
    ));
}

#[test]
fn keyframe_errors() {
    let k = |t: f64| Keyframe {
        t,
        translation: Vec3::zeros(),
        rotation: Vec3::zeros(),
    };
    let mut c = collider(Shape::Sphere { radius: 1.0 }, "anim");
    c.motion = Motion::Keyframes(vec![]);
    assert!(matches!(
        reject(c.clone()),
        CollideError::BadKeyframes { index: 0, .. }
    ));
    c.motion = Motion::Keyframes(vec![k(0.0), k(1.0), k(1.0)]);
    assert!(matches!(
        reject(c.clone()),
        CollideError::BadKeyframes { index: 2, .. }
    ));
    c.motion = Motion::Keyframes(vec![k(0.0), k(f64::NAN)]);
    assert!(matches!(
        reject(c),
        CollideError::BadKeyframes { index: 1, .. }
    ));
}

#[test]
fn frame_errors() {
    let (v, t) = cube_mesh(1.0);
    let mut c = collider(mesh(v.clone(), t), "seq");
    c.motion = Motion::MeshSequence {
        frames: vec![v.clone(), v[..7].to_vec()],
        fps: 30.0,
        start: 0.0,
    };
    let e = reject(c.clone());
    assert!(
        matches!(&e, CollideError::BadFrames { reason, .. } if reason.contains("frame 1")),
        "{e}"
    );
    c.motion = Motion::MeshSequence {
        frames: vec![v.clone()],
        fps: 0.0,
        start: 0.0,
    };
    assert!(matches!(reject(c.clone()), CollideError::BadFrames { .. }));
    c.motion = Motion::MeshSequence {
        frames: vec![],
        fps: 30.0,
        start: 0.0,
    };
    assert!(matches!(reject(c), CollideError::BadFrames { .. }));
    let mut s = collider(Shape::Sphere { radius: 1.0 }, "notmesh");
    s.motion = Motion::MeshSequence {
        frames: vec![v],
        fps: 30.0,
        start: 0.0,
    };
    assert!(matches!(reject(s), CollideError::BadFrames { .. }));
}

#[test]
fn composite_errors() {
    let (v, t) = cube_mesh(1.0);
    let seq = Motion::MeshSequence {
        frames: vec![v.clone()],
        fps: 30.0,
        start: 0.0,
    };
    let mut c = collider(mesh(v, t), "combo");
    c.motion = Motion::Composite {
        rigid: Box::new(seq.clone()),
        deformation: Box::new(seq.clone()),
    };
    assert!(matches!(reject(c.clone()), CollideError::BadFrames { .. }));
    c.motion = Motion::Composite {
        rigid: Box::new(Motion::Static),
        deformation: Box::new(Motion::Static),
    };
    assert!(matches!(reject(c.clone()), CollideError::BadFrames { .. }));
    c.motion = Motion::Composite {
        rigid: Box::new(Motion::Keyframes(vec![])),
        deformation: Box::new(seq),
    };
    assert!(matches!(reject(c), CollideError::BadKeyframes { .. }));
}

#[test]
fn an_open_mesh_is_accepted_and_reported() {
    // The cube without triangle (1, 6, 5): three boundary edges, one open component.
    let (v, mut t) = cube_mesh(1.0);
    t.pop();
    let c = collider(mesh(v, t), "open");
    c.validate().unwrap();
    let set = ColliderSet::new(vec![collider(Shape::Plane, "floor"), c]).unwrap();
    let r = &set.mesh_reports()[0];
    assert_eq!(r.collider, 1);
    assert_eq!(r.label, "'open' (#1)");
    assert_eq!((r.weld.vertices, r.weld.welded_vertices), (8, 8));
    assert_eq!(r.triangles, 11);
    assert_eq!(r.boundary_edges, 3);
    assert_eq!((r.components, r.closed_components), (1, 0));
    let notice = r.notice().expect("an open mesh is worth a notice");
    assert!(
        notice.contains("'open' (#1)") && notice.contains("3 boundary edges"),
        "{notice}"
    );
    // A closed mesh used as given has no notice.
    let (v, t) = cube_mesh(1.0);
    let set = ColliderSet::new(vec![collider(mesh(v, t), "cube")]).unwrap();
    assert!(set.mesh_reports()[0].is_plain());
    assert_eq!(set.mesh_reports()[0].notice(), None);
}
