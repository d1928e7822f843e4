//! The glTF reader and skinning evaluator: the project's mannequin, small files built here with
//! `gltf-json` whose poses are known in closed form, and malformed inputs (errors, never
//! panics).

mod common;

use std::f64::consts::FRAC_PI_2;
use std::path::{Path, PathBuf};

use cloth_collide::{CollideError, Collider, ColliderSet, GltfBody, GltfOptions, Shape, Vec3};
use common::gltf_doc::{Doc, arm_cylinder, arm_doc, glb, quat_z};
use gltf_json as json;
use json::validation::{Checked::Valid, USize64};
use nalgebra::{Rotation3, UnitQuaternion, Vector3};
use proptest::prelude::*;

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= c.len() {
                s.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

fn load(bytes: &[u8], options: &GltfOptions) -> GltfBody {
    GltfBody::from_slice(bytes, None, options).unwrap_or_else(|e| panic!("{e}"))
}

fn load_err(bytes: &[u8], options: &GltfOptions) -> CollideError {
    let e = GltfBody::from_slice(bytes, None, options).expect_err("should fail");
    assert!(!e.to_string().contains('\n'), "error is not one line: {e}");
    e
}

fn pose(body: &GltfBody, t: f64) -> Vec<Vec3> {
    let mut x = Vec::new();
    body.pose(t, &mut x);
    assert_eq!(x.len(), body.vertex_count());
    x
}

fn v3(p: [f32; 3]) -> Vec3 {
    Vec3::new(p[0] as f64, p[1] as f64, p[2] as f64)
}

/// Where the elbow rotation by `deg` about z through (0, 1, 0) takes p.
fn elbow(p: Vec3, deg: f64) -> Vec3 {
    let c = Vec3::new(0.0, 1.0, 0.0);
    Rotation3::from_axis_angle(&Vector3::z_axis(), deg.to_radians()) * (p - c) + c
}

#[test]
fn arm_bent_90_degrees_matches_the_analytic_rotation() {
    let d = arm_doc(true);
    let body = load(&d.glb(), &GltfOptions::default());
    assert_eq!(body.clip_names(), vec!["bend"]);
    assert_eq!(body.clip(), Some("bend"));
    assert_eq!(body.duration(), 1.0);
    let (p, t, _, w) = arm_cylinder();
    assert_eq!(body.triangles().len(), t.len());
    for (time, deg) in [(0.0, 0.0), (0.5, 45.0), (1.0, 90.0), (0.25, 22.5)] {
        let x = pose(&body, time);
        for (i, q) in p.iter().enumerate() {
            let rest = v3(*q);
            let s = w[i][1] as f64;
            // Linear blend of the two bones' transforms (the mesh node's (5, 0, 0) is ignored).
            let want = rest * (1.0 - s) + elbow(rest, deg) * s;
            assert!(
                (x[i] - want).norm() < 1e-6,
                "t = {time}: vertex {i} at {:?}, expected {want:?}",
                x[i]
            );
        }
    }
    // Fully bent: the forearm's tip ring points along -x.
    let x = pose(&body, 1.0);
    let tip = x[8 * 8..].iter().sum::<Vec3>() / 8.0;
    assert!((tip - Vec3::new(-1.0, 1.0, 0.0)).norm() < 1e-6);
}

#[test]
fn looping_time_offset_and_clamping() {
    let d = arm_doc(true);
    let plain = load(&d.glb(), &GltfOptions::default());
    let offset = load(
        &d.glb(),
        &GltfOptions {
            time_offset: 0.3,
            ..GltfOptions::default()
        },
    );
    let looping = load(
        &d.glb(),
        &GltfOptions {
            looping: true,
            ..GltfOptions::default()
        },
    );
    assert_eq!(pose(&offset, 0.2), pose(&plain, 0.5));
    // Clamped outside the keys without looping; wrapped with it.
    assert_eq!(pose(&plain, 7.0), pose(&plain, 1.0));
    assert_eq!(pose(&plain, -3.0), pose(&plain, 0.0));
    let (a, b) = (pose(&looping, 2.25), pose(&plain, 0.25));
    for (p, q) in a.iter().zip(&b) {
        assert!((p - q).norm() < 1e-12);
    }
    // A non-finite time is time 0.
    assert_eq!(pose(&plain, f64::NAN), pose(&plain, 0.0));
    // Scale multiplies the world positions.
    let half = load(
        &d.glb(),
        &GltfOptions {
            scale: 0.5,
            ..GltfOptions::default()
        },
    );
    for (p, q) in pose(&half, 0.7).iter().zip(&pose(&plain, 0.7)) {
        assert!((p - q * 0.5).norm() < 1e-15);
    }
}

#[test]
fn preroll_blends_from_the_rest_pose_to_the_first_frame() {
    let d = arm_doc(true);
    // The clip's first frame (time_offset 1 s) is bent 90 degrees.
    let body = load(
        &d.glb(),
        &GltfOptions {
            time_offset: 1.0,
            ..GltfOptions::default()
        },
    );
    let (p, _, _, w) = arm_cylinder();
    let mut x = Vec::new();
    for (blend, deg) in [
        (0.0, 0.0),
        (0.5, 45.0),
        (1.0, 90.0),
        (-1.0, 0.0),
        (f64::NAN, 0.0),
    ] {
        body.pose_blend(blend, &mut x);
        for (i, q) in p.iter().enumerate() {
            let s = w[i][1] as f64;
            let want = v3(*q) * (1.0 - s) + elbow(v3(*q), deg) * s;
            assert!((x[i] - want).norm() < 1e-6, "blend {blend}: vertex {i}");
        }
    }
    body.pose_blend(1.0, &mut x);
    assert_eq!(x, pose(&body, 0.0));
}

#[test]
fn step_and_cubic_spline_channels_on_a_rigid_mesh() {
    // A rigid triangle on a node animated in translation.
    let mut d = Doc::default();
    let mesh = d.mesh(
        "tri",
        &[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        &[[0, 1, 2]],
        None,
    );
    let n = d.node(json::Node {
        mesh: Some(json::Index::new(mesh)),
        ..Default::default()
    });
    d.scene(&[n]);
    // STEP: x = 0 until t = 1, then 3.
    d.channel(
        "step",
        n,
        json::animation::Property::Translation,
        json::animation::Interpolation::Step,
        &[0.0, 1.0],
        &[0.0, 0.0, 0.0, 3.0, 0.0, 0.0],
    );
    // CUBICSPLINE over [0, 2]: y from 0 to 1 with zero tangents (3 s^2 - 2 s^3), and x with
    // tangent 1 at both ends: (in, value, out) per key.
    d.channel(
        "cubic",
        n,
        json::animation::Property::Translation,
        json::animation::Interpolation::CubicSpline,
        &[0.0, 2.0],
        &[
            1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, //
            1.0, 0.0, 0.0, 2.0, 1.0, 0.0, 1.0, 0.0, 0.0,
        ],
    );
    let step = load(&d.glb(), &GltfOptions::default());
    assert_eq!(step.clip_names(), vec!["step", "cubic"]);
    assert_eq!(pose(&step, 0.999)[1], Vec3::new(1.0, 0.0, 0.0));
    assert_eq!(pose(&step, 1.0)[1], Vec3::new(4.0, 0.0, 0.0));
    let cubic = load(
        &d.glb(),
        &GltfOptions {
            clip: Some("cubic".into()),
            ..GltfOptions::default()
        },
    );
    for t in [0.0, 0.3, 0.5, 1.0, 1.7, 2.0] {
        let s: f64 = t / 2.0;
        let y = 3.0 * s * s - 2.0 * s * s * s;
        // x: value 0 -> 2, tangents 1 (per second), td = 2.
        let x = (-2.0 * s.powi(3) + 3.0 * s * s) * 2.0
            + 2.0 * (s.powi(3) - 2.0 * s * s + s)
            + 2.0 * (s.powi(3) - s * s);
        let got = pose(&cubic, t)[0];
        assert!(
            (got - Vec3::new(x, y, 0.0)).norm() < 1e-12,
            "t = {t}: {got:?}"
        );
    }
}

#[test]
fn no_animation_gives_the_static_rest_pose() {
    let d = arm_doc(false);
    let body = load(&d.glb(), &GltfOptions::default());
    assert!(body.clip_names().is_empty());
    assert_eq!(body.clip(), None);
    assert_eq!(body.duration(), 0.0);
    let (p, _, _, _) = arm_cylinder();
    let x0 = pose(&body, 0.0);
    for (i, q) in p.iter().enumerate() {
        assert!((x0[i] - v3(*q)).norm() < 1e-12);
    }
    assert_eq!(pose(&body, 3.7), x0);
    let e = load_err(
        &d.glb(),
        &GltfOptions {
            clip: Some("walk".into()),
            ..GltfOptions::default()
        },
    );
    assert!(
        matches!(e, CollideError::GltfAnimation { ref animation, .. } if animation == "'walk'")
    );
}

#[test]
fn two_skins_in_one_file() {
    // Two arms, each with its own skeleton; only the second one's elbow turns.
    let mut d = arm_doc(false);
    let (p, t, j, w) = arm_cylinder();
    let shifted: Vec<[f32; 3]> = p.iter().map(|q| [q[0] + 2.0, q[1], q[2]]).collect();
    let mesh2 = d.mesh("arm2", &shifted, &t, Some((&j, &w)));
    let up2 = d.node(json::Node {
        name: Some("upper2".into()),
        translation: Some([2.0, 0.0, 0.0]),
        ..Default::default()
    });
    let low2 = d.node(json::Node {
        name: Some("lower2".into()),
        translation: Some([0.0, 1.0, 0.0]),
        ..Default::default()
    });
    d.child(up2, low2);
    let skin2 = d.skin(&[up2, low2], &[[2.0, 0.0, 0.0], [2.0, 1.0, 0.0]]);
    let body2 = d.node(json::Node {
        mesh: Some(json::Index::new(mesh2)),
        skin: Some(json::Index::new(skin2)),
        ..Default::default()
    });
    let mut roots: Vec<u32> = d.root.scenes[0]
        .nodes
        .iter()
        .map(|n| n.value() as u32)
        .collect();
    roots.extend([up2, body2]);
    d.scene(&roots);
    let mut v = quat_z(0.0).to_vec();
    v.extend(quat_z(-90.0));
    d.channel(
        "second",
        low2,
        json::animation::Property::Rotation,
        json::animation::Interpolation::Linear,
        &[0.0, 1.0],
        &v,
    );
    let body = load(&d.glb(), &GltfOptions::default());
    let n = p.len();
    assert_eq!(body.vertex_count(), 2 * n);
    assert_eq!(body.triangles().len(), 2 * t.len());
    assert_eq!(
        body.triangles()[t.len()],
        [
            t[0][0] as usize + n,
            t[0][1] as usize + n,
            t[0][2] as usize + n
        ]
    );
    let x = pose(&body, 1.0);
    for i in 0..n {
        assert!((x[i] - v3(p[i])).norm() < 1e-12, "first arm moved");
        let s = w[i][1] as f64;
        let q = v3(shifted[i]);
        let c = Vec3::new(2.0, 1.0, 0.0);
        let bent = Rotation3::from_axis_angle(&Vector3::z_axis(), -FRAC_PI_2) * (q - c) + c;
        assert!((x[n + i] - (q * (1.0 - s) + bent * s)).norm() < 1e-6);
    }
}

#[test]
fn non_uniform_scale_keyframes() {
    // A rigid triangle on a child node at (0, 1, 0) of a parent whose scale is keyed from
    // (1, 1, 1) to (2, 0.5, 3): the child's offset and the triangle both scale.
    let mut d = Doc::default();
    let tri = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]];
    let mesh = d.mesh("tri", &tri, &[[0, 2, 1]], None);
    let parent = d.node(json::Node::default());
    let child = d.node(json::Node {
        translation: Some([0.0, 1.0, 0.0]),
        mesh: Some(json::Index::new(mesh)),
        ..Default::default()
    });
    d.child(parent, child);
    d.scene(&[parent]);
    d.channel(
        "squash",
        parent,
        json::animation::Property::Scale,
        json::animation::Interpolation::Linear,
        &[0.0, 1.0],
        &[1.0, 1.0, 1.0, 2.0, 0.5, 3.0],
    );
    let body = load(&d.glb(), &GltfOptions::default());
    for (t, s) in [
        (0.0, [1.0, 1.0, 1.0]),
        (0.5, [1.5, 0.75, 2.0]),
        (1.0, [2.0, 0.5, 3.0]),
    ] {
        let x = pose(&body, t);
        for (i, q) in tri.iter().enumerate() {
            let want = Vec3::new(
                q[0] as f64 * s[0],
                (q[1] as f64 + 1.0) * s[1],
                q[2] as f64 * s[2],
            );
            assert!(
                (x[i] - want).norm() < 1e-12,
                "t = {t}, vertex {i}: {:?}",
                x[i]
            );
        }
    }
}

#[test]
fn a_deep_joint_chain_of_120_joints() {
    // Joint k at height 0.01 k, each bent 1.5 degrees about z at t = 1; one vertex at the tip
    // is weighted to the last joint.
    const N: usize = 120;
    let mut d = Doc::default();
    let tip = [0.0f32, 0.01 * N as f32, 0.0];
    let mesh = d.mesh(
        "chain",
        &[tip, [0.01, tip[1], 0.0], [0.0, tip[1], 0.01]],
        &[[0, 1, 2]],
        Some((&[[(N - 1) as u8, 0, 0, 0]; 3], &[[1.0, 0.0, 0.0, 0.0]; 3])),
    );
    let mut joints = Vec::new();
    let mut binds = Vec::new();
    for k in 0..N {
        let n = d.node(json::Node {
            translation: Some([0.0, if k == 0 { 0.0 } else { 0.01 }, 0.0]),
            ..Default::default()
        });
        if k > 0 {
            d.child(joints[k - 1], n);
        }
        joints.push(n);
        binds.push([0.0, 0.01 * k as f32, 0.0]);
    }
    let skin = d.skin(&joints, &binds);
    let holder = d.node(json::Node {
        mesh: Some(json::Index::new(mesh)),
        skin: Some(json::Index::new(skin)),
        ..Default::default()
    });
    d.scene(&[joints[0], holder]);
    for &j in &joints {
        let mut v = quat_z(0.0).to_vec();
        v.extend(quat_z(1.5));
        d.channel(
            "curl",
            j,
            json::animation::Property::Rotation,
            json::animation::Interpolation::Linear,
            &[0.0, 1.0],
            &v,
        );
    }
    let body = load(&d.glb(), &GltfOptions::default());
    let x = pose(&body, 1.0);
    // Analytic: the chain is an arc; joint k is rotated by 1.5 (k + 1) degrees in total.
    let step = 1.5f64.to_radians();
    let mut p = Vec3::zeros();
    let mut angle = step; // the root joint is rotated too
    for _ in 1..N {
        p += UnitQuaternion::from_axis_angle(&Vector3::z_axis(), angle) * Vec3::new(0.0, 0.01, 0.0);
        angle += step;
    }
    // The tip vertex sits 0.01 above the last joint in its frame.
    let last = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), angle);
    let want = p + last * Vec3::new(0.0, 0.01, 0.0);
    assert!((x[0] - want).norm() < 1e-5, "{:?} vs {want:?}", x[0]);
    assert!((pose(&body, 0.0)[0] - v3(tip)).norm() < 1e-6);
}

#[test]
fn external_buffer_files_and_data_uris() {
    let d = arm_doc(true);
    let reference = pose(&load(&d.glb(), &GltfOptions::default()), 0.5);
    let dir = std::env::temp_dir().join(format!("cloth-gltf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A .gltf with its buffer in "arm data.bin", written percent-encoded in the URI.
    std::fs::write(dir.join("arm data.bin"), &d.bin).unwrap();
    let text = d
        .with_buffer(Some("arm%20data.bin".into()))
        .to_string()
        .unwrap();
    let path = dir.join("arm.gltf");
    std::fs::write(&path, &text).unwrap();
    let body = GltfBody::load(&path, &GltfOptions::default()).unwrap();
    assert_eq!(pose(&body, 0.5), reference);
    // The same in memory needs a folder to resolve the file.
    let e = GltfBody::from_slice(text.as_bytes(), None, &GltfOptions::default()).unwrap_err();
    assert!(
        matches!(e, CollideError::GltfBuffer { ref buffer, .. } if buffer == "'data' (#0)"),
        "{e}"
    );
    // A missing buffer file names the buffer.
    std::fs::remove_file(dir.join("arm data.bin")).unwrap();
    let e = GltfBody::load(&path, &GltfOptions::default()).unwrap_err();
    assert!(e.to_string().contains("buffer 'data' (#0)"), "{e}");
    // Base64 data URI.
    let uri = format!("data:application/octet-stream;base64,{}", base64(&d.bin));
    let text = d.with_buffer(Some(uri)).to_string().unwrap();
    let body = GltfBody::from_slice(text.as_bytes(), None, &GltfOptions::default()).unwrap();
    assert_eq!(pose(&body, 0.5), reference);
    // A missing file.
    let e = GltfBody::load(dir.join("nope.glb"), &GltfOptions::default()).unwrap_err();
    assert!(matches!(e, CollideError::GltfFile { .. }));
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Malformed files: one-line errors naming the element.

/// Edits the arm document's JSON and returns the GLB.
fn edited(f: impl FnOnce(&mut json::Root)) -> Vec<u8> {
    let d = arm_doc(true);
    let mut root = d.with_buffer(None);
    f(&mut root);
    glb(&root.to_vec().unwrap(), &d.bin)
}

#[test]
fn malformed_files_give_errors_naming_the_element() {
    let o = GltfOptions::default();
    // Truncated at every length: never a panic.
    let good = arm_doc(true).glb();
    for cut in 0..good.len() {
        assert!(
            GltfBody::from_slice(&good[..cut], None, &o).is_err(),
            "cut at {cut}"
        );
    }
    // An accessor past the end of its buffer view.
    let e = load_err(
        &edited(|r| r.accessors[1].byte_offset = Some(USize64(4096))),
        &o,
    );
    assert!(
        matches!(e, CollideError::GltfAccessor { accessor: 1, .. }),
        "{e}"
    );
    // A buffer shorter than declared.
    let e = load_err(&edited(|r| r.buffers[0].byte_length = USize64(1 << 40)), &o);
    assert!(matches!(e, CollideError::GltfBuffer { .. }), "{e}");
    // Lines instead of triangles.
    let e = load_err(
        &edited(|r| r.meshes[0].primitives[0].mode = Valid(json::mesh::Mode::Lines)),
        &o,
    );
    assert!(
        matches!(e, CollideError::GltfMesh { ref mesh, .. } if mesh == "'arm' (#0)"),
        "{e}"
    );
    // A cycle and a node with two parents.
    let e = load_err(
        &edited(|r| r.nodes[1].children = Some(vec![json::Index::new(0)])),
        &o,
    );
    assert!(matches!(e, CollideError::GltfNode { .. }), "{e}");
    let e = load_err(
        &edited(|r| r.nodes[2].children = Some(vec![json::Index::new(1)])),
        &o,
    );
    assert!(e.to_string().contains("two parents"), "{e}");
    // A channel whose output count does not match CUBICSPLINE's three per key.
    let e = load_err(
        &edited(|r| {
            r.animations[0].samplers[0].interpolation =
                Valid(json::animation::Interpolation::CubicSpline)
        }),
        &o,
    );
    assert!(
        matches!(e, CollideError::GltfAnimation { ref reason, .. } if reason.contains("'lower' (#1)")),
        "{e}"
    );
    // A channel targeting a node that does not exist (not caught by the format validation).
    let e = load_err(
        &edited(|r| r.animations[0].channels[0].target.node = json::Index::new(99)),
        &o,
    );
    assert!(matches!(e, CollideError::GltfAnimation { .. }), "{e}");
    // An animated node with a matrix.
    let e = load_err(
        &edited(|r| {
            r.nodes[1].translation = None;
            r.nodes[1].matrix = Some([
                1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0., 0., 1., 0., 1.,
            ]);
        }),
        &o,
    );
    assert!(e.to_string().contains("matrix"), "{e}");
    // Key times that go backwards name the channel's node.
    let d = arm_doc(false);
    let mut d2 = d;
    d2.channel(
        "bad",
        1,
        json::animation::Property::Rotation,
        json::animation::Interpolation::Linear,
        &[1.0, 0.5],
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
    );
    let e = load_err(&d2.glb(), &o);
    assert!(e.to_string().contains("'lower' (#1)"), "{e}");
    // POSITION refers to a missing accessor (the format validation would index out of bounds).
    let e = load_err(
        &edited(|r| {
            r.meshes[0].primitives[0].attributes.insert(
                Valid(json::mesh::Semantic::Positions),
                json::Index::new(500),
            );
        }),
        &o,
    );
    assert!(matches!(e, CollideError::GltfMesh { .. }), "{e}");
    // A weight on a joint the skin does not have.
    let mut d = Doc::default();
    let m = d.mesh(
        "bad-skin",
        &[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        &[[0, 1, 2]],
        Some((
            &[[0, 0, 0, 0], [3, 0, 0, 0], [0, 0, 0, 0]],
            &[[1.0, 0.0, 0.0, 0.0]; 3],
        )),
    );
    let j = d.node(json::Node::default());
    let s = d.skin(&[j], &[[0.0; 3]]);
    let n = d.node(json::Node {
        mesh: Some(json::Index::new(m)),
        skin: Some(json::Index::new(s)),
        ..Default::default()
    });
    d.scene(&[j, n]);
    let e = load_err(&d.glb(), &o);
    assert!(e.to_string().contains("vertex 1 uses joint 3"), "{e}");
    // Not glTF at all, and bad options.
    assert!(matches!(
        load_err(b"hello", &o),
        CollideError::GltfFile { .. }
    ));
    let e = load_err(
        &arm_doc(false).glb(),
        &GltfOptions {
            scale: -1.0,
            ..o.clone()
        },
    );
    assert!(e.to_string().contains("scale"), "{e}");
}

#[test]
fn a_mesh_with_weights_but_no_skin_is_rigid() {
    let mut d = arm_doc(false);
    d.root.nodes[3].skin = None;
    let body = load(&d.glb(), &GltfOptions::default());
    // Placed by its node's world transform: under the holder at (5, 0, 0).
    let (p, _, _, _) = arm_cylinder();
    let x = pose(&body, 0.0);
    assert!((x[0] - (v3(p[0]) + Vec3::new(5.0, 0.0, 0.0))).norm() < 1e-12);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Random byte edits of a small GLB (in the JSON text or the binary data) are read or
    /// refused, never a panic.
    #[test]
    fn mutated_glb_bytes_never_panic(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        t in -2.0f64..3.0,
    ) {
        let mut bytes = arm_doc(true).glb();
        for (at, b) in edits {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        if let Ok(body) = GltfBody::from_slice(&bytes, None, &GltfOptions::default()) {
            let mut x = Vec::new();
            body.pose(t, &mut x);
            prop_assert_eq!(x.len(), body.vertex_count());
            body.pose_blend(0.5, &mut x);
        }
    }

    /// Digit edits in the JSON chunk keep it valid JSON but change indices, counts, offsets,
    /// strides and key values: read or refused, never a panic.
    #[test]
    fn mutated_json_numbers_never_panic(
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..10), 1..6),
        t in -2.0f64..3.0,
    ) {
        let mut bytes = arm_doc(true).glb();
        let json_len = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]) as usize;
        let digits: Vec<usize> = (20..20 + json_len).filter(|&i| bytes[i].is_ascii_digit()).collect();
        for (at, d) in edits {
            bytes[digits[at.index(digits.len())]] = b'0' + d;
        }
        if let Ok(body) = GltfBody::from_slice(&bytes, None, &GltfOptions::default()) {
            let mut x = Vec::new();
            body.pose(t, &mut x);
            prop_assert_eq!(x.len(), body.vertex_count());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The project's mannequin (assets/mannequin, made by `cargo xtask mannequin`).

fn assets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/mannequin")
}

#[test]
fn mannequin_glb_bind_pose_reproduces_the_obj() {
    let obj = cloth_mesh::read_obj_data(assets().join("mannequin.obj")).unwrap();
    let body = GltfBody::load(assets().join("mannequin.glb"), &GltfOptions::default()).unwrap();
    assert_eq!(body.clip_names(), vec!["twist", "walk", "dance"]);
    assert_eq!(body.triangles(), obj.triangles.as_slice());
    let mut rest = Vec::new();
    body.pose_blend(0.0, &mut rest);
    assert_eq!(rest.len(), obj.positions.len());
    let err = rest
        .iter()
        .zip(&obj.positions)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(err < 1e-9, "bind pose differs from the OBJ by {err} m");
    // Scaled the same, still equal.
    let cm = GltfBody::load(
        assets().join("mannequin.glb"),
        &GltfOptions {
            scale: 100.0,
            ..GltfOptions::default()
        },
    )
    .unwrap();
    let mut x = Vec::new();
    cm.pose_blend(0.0, &mut x);
    for (a, b) in x.iter().zip(&obj.positions) {
        assert!((a - b * 100.0).norm() < 1e-7);
    }
}

#[test]
fn mannequin_obj_is_a_closed_adult_body() {
    let obj = cloth_mesh::read_obj_data(assets().join("mannequin.obj")).unwrap();
    let (v, t) = (&obj.positions, &obj.triangles);
    assert!((5000..=10000).contains(&v.len()), "{} vertices", v.len());
    // Watertight, consistently wound, no degenerate triangle: the collider validation.
    ColliderSet::new(vec![Collider {
        shape: Shape::Mesh {
            vertices: v.clone(),
            triangles: t.clone(),
        },
        ..Collider::default()
    }])
    .unwrap();
    let volume: f64 = t
        .iter()
        .map(|f| v[f[0]].dot(&v[f[1]].cross(&v[f[2]])) / 6.0)
        .sum();
    assert!((0.06..0.07).contains(&volume), "volume {volume} m^3");
    let lo = v.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
    let hi = v.iter().map(|p| p.y).fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(lo, 0.0);
    assert!((hi - 1.70).abs() < 0.01, "height {hi}");
    // Facing +z: the toes reach further forward than the heels reach back.
    let zmin = v.iter().map(|p| p.z).fold(f64::INFINITY, f64::min);
    let zmax = v.iter().map(|p| p.z).fold(f64::NEG_INFINITY, f64::max);
    assert!(zmax > -zmin, "z range [{zmin}, {zmax}]");
}

#[test]
fn mannequin_clips_loop_and_keep_the_feet_near_the_floor() {
    let path = assets().join("mannequin.glb");
    for (name, duration) in [("twist", 2.0), ("walk", 1.2), ("dance", 4.0)] {
        let body = GltfBody::load(
            &path,
            &GltfOptions {
                clip: Some(name.into()),
                ..GltfOptions::default()
            },
        )
        .unwrap();
        assert!((body.duration() - duration).abs() < 1e-6, "{name}");
        let (a, b) = (pose(&body, 0.0), pose(&body, body.duration()));
        let gap = a
            .iter()
            .zip(&b)
            .map(|(p, q)| (p - q).norm())
            .fold(0.0, f64::max);
        assert!(gap < 1e-5, "{name} does not loop: {gap} m");
        let mut lowest = f64::INFINITY;
        let mut moved = 0.0f64;
        for k in 0..=20 {
            let x = pose(&body, duration * k as f64 / 20.0);
            lowest = x.iter().map(|p| p.y).fold(lowest, f64::min);
            moved = x
                .iter()
                .zip(&a)
                .map(|(p, q)| (p - q).norm())
                .fold(moved, f64::max);
        }
        assert!(
            lowest > -0.02,
            "{name}: a foot goes {lowest} m below the floor"
        );
        assert!(moved > 0.2, "{name}: the body hardly moves ({moved} m)");
    }
}
