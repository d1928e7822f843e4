//! glTF bodies as exporters write them: vertices split at normal and texture seams are welded
//! back, a split file behaves exactly like its welded twin (poses, contacts), copies the skin
//! moves differently stay apart and are reported; a skinned body posed on demand
//! ([`SkinnedTrack`]) is the mesh sequence of its samples; [`GltfCounts`] reads the counts
//! without the binary data.

mod common;

use cloth_collide::{
    Collider, ColliderSet, GltfBody, GltfCounts, GltfOptions, Keyframe, Motion, Shape,
    SkinnedTrack, SplitReason, Vec3,
};
use common::gltf_doc::{
    ArmMesh, SPLIT_ARM_COPIES, arm_doc_with, capped_arm, glb, split_capped_arm,
};
use common::{Lcg, collider};

fn load(bytes: &[u8]) -> GltfBody {
    GltfBody::from_slice(bytes, None, &GltfOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn pose(body: &GltfBody, t: f64) -> Vec<Vec3> {
    let mut x = Vec::new();
    body.pose(t, &mut x);
    x
}

/// The file's own vertices and triangles, as f64 and usize.
fn file_mesh(arm: &ArmMesh) -> (Vec<Vec3>, Vec<[usize; 3]>) {
    let v = arm
        .0
        .iter()
        .map(|p| Vec3::new(p[0] as f64, p[1] as f64, p[2] as f64))
        .collect();
    let t = arm.1.iter().map(|t| t.map(|i| i as usize)).collect();
    (v, t)
}

/// Points scattered around the arm (bent or not), some inside it.
fn probes(seed: u64) -> Vec<Vec3> {
    let mut rng = Lcg(seed);
    (0..400)
        .map(|_| rng.vec(-0.3, 2.2))
        .map(|p| Vec3::new(p.x - 1.0, p.y, p.z * 0.2))
        .collect()
}

fn contacts(set: &ColliderSet, x: &[Vec3]) -> Vec<cloth_collide::Contact> {
    let mut c = Vec::new();
    set.vertex_contacts(x, 0.02, 0.05, &mut c);
    c
}

/// A skinned body as a collider posed on demand.
fn skinned_collider(body: GltfBody, rigid: Motion) -> Collider {
    let track = SkinnedTrack::new(body, 30.0, 0.2, 1.0);
    let mut rest = Vec::new();
    track.sample(0, &mut rest);
    Collider {
        shape: Shape::Mesh {
            vertices: rest,
            triangles: track.body().triangles().to_vec(),
        },
        motion: Motion::skinned(rigid, track),
        name: "arm".into(),
        ..Collider::default()
    }
}

#[test]
fn a_split_vertex_gltf_behaves_like_its_welded_twin() {
    let twin = load(&arm_doc_with(capped_arm(), true).glb());
    let split = load(&arm_doc_with(split_capped_arm(), true).glb());
    // The twin has nothing to weld; the split file welds back to it.
    assert_eq!(twin.weld_report().welded_vertices, 74);
    assert_eq!(twin.weld_report().vertices, 74);
    assert_eq!(twin.weld_map(), None);
    let r = split.weld_report();
    assert_eq!((r.vertices, r.welded_vertices), (74 + SPLIT_ARM_COPIES, 74));
    assert_eq!(r.kept_split, None);
    let map = split.weld_map().expect("the split file was welded");
    let (file_v, _) = file_mesh(&split_capped_arm());
    for (v, &w) in map.iter().enumerate() {
        assert_eq!(file_v[v], file_v[w], "vertex {v} welded to {w} elsewhere");
    }
    assert_eq!(split.vertex_count(), 74);
    assert_eq!(split.triangles(), twin.triangles());
    // Poses are the same bits at any time, and in the preroll blend.
    for t in [0.0, 0.3, 0.5, 0.77, 1.0] {
        assert_eq!(pose(&split, t), pose(&twin, t), "t = {t}");
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    split.pose_blend(0.4, &mut a);
    twin.pose_blend(0.4, &mut b);
    assert_eq!(a, b);
    // As colliders (posed on demand): closed, and the same contacts bit for bit.
    let kf = Motion::Keyframes(vec![
        Keyframe {
            t: 0.0,
            translation: Vec3::zeros(),
            rotation: Vec3::zeros(),
        },
        Keyframe {
            t: 1.0,
            translation: Vec3::new(0.1, 0.0, 0.0),
            rotation: Vec3::zeros(),
        },
    ]);
    for rigid in [Motion::Static, kf] {
        let mut sa =
            ColliderSet::new(vec![skinned_collider(split.clone(), rigid.clone())]).unwrap();
        let mut sb = ColliderSet::new(vec![skinned_collider(twin.clone(), rigid)]).unwrap();
        let report = &sa.mesh_reports()[0];
        assert_eq!(report.weld, *split.weld_report());
        assert_eq!(
            (
                report.boundary_edges,
                report.components,
                report.closed_components
            ),
            (0, 1, 1)
        );
        assert!(
            report
                .notice()
                .unwrap()
                .contains("99 vertices welded to 74")
        );
        for (k, t) in [-0.1, 0.0, 0.25, 0.5, 0.9, 1.4].into_iter().enumerate() {
            sa.update(t);
            sb.update(t);
            let x = probes(k as u64);
            let c = contacts(&sa, &x);
            assert!(
                c.iter().any(|c| c.distance < 0.0),
                "t = {t}: some probes are inside"
            );
            assert_eq!(c, contacts(&sb, &x), "t = {t}");
        }
    }
}

#[test]
fn a_split_obj_style_mesh_is_welded_by_the_collider_set() {
    // The split file's mesh given as it is stored: open by index, closed once welded.
    let (v, t) = file_mesh(&split_capped_arm());
    let (tv, tt) = file_mesh(&capped_arm());
    let set = ColliderSet::new(vec![collider(
        Shape::Mesh {
            vertices: v,
            triangles: t,
        },
        "split",
    )])
    .unwrap();
    let twin = ColliderSet::new(vec![collider(
        Shape::Mesh {
            vertices: tv,
            triangles: tt,
        },
        "twin",
    )])
    .unwrap();
    let r = &set.mesh_reports()[0];
    assert_eq!((r.weld.vertices, r.weld.welded_vertices), (99, 74));
    assert_eq!((r.boundary_edges, r.closed_components), (0, 1));
    assert_eq!(set.vertex_count(), 74);
    assert_eq!(set.world_mesh(0, 8), twin.world_mesh(0, 8));
    let x = probes(7);
    assert_eq!(contacts(&set, &x), contacts(&twin, &x));
}

#[test]
fn copies_the_skin_moves_differently_stay_apart_and_are_reported() {
    let mut arm = split_capped_arm();
    // The seam copy of the first-column vertex at y = 1 (ring 4, vertex 32): another weight.
    let copy = (74..arm.0.len())
        .find(|&v| arm.0[v] == arm.0[32])
        .expect("vertex 32 has a seam copy");
    arm.3[copy] = [0.3, 0.7, 0.0, 0.0];
    let body = load(&arm_doc_with(arm, true).glb());
    let r = body.weld_report();
    assert_eq!(r.welded_vertices, 75);
    let kept = r.kept_split.expect("a copy is kept apart");
    assert_eq!(
        (kept.count, kept.a, kept.b, kept.reason),
        (1, 32, copy, SplitReason::Skin)
    );
    // Bent, the two copies part: the skin really moves them differently.
    let x = pose(&body, 1.0);
    let map = body.weld_map().unwrap();
    assert!((x[map[32]] - x[map[copy]]).norm() > 1e-3);
    // As a collider the seam is open there: accepted, with a notice that says so.
    let set = ColliderSet::new(vec![skinned_collider(body, Motion::Static)]).unwrap();
    let report = &set.mesh_reports()[0];
    assert!(report.boundary_edges > 0);
    assert_eq!((report.components, report.closed_components), (1, 0));
    let notice = report.notice().unwrap();
    assert!(
        notice.contains("1 kept apart") && notice.contains("joints or weights differ"),
        "{notice}"
    );
}

#[test]
fn a_skinned_track_is_the_mesh_sequence_of_its_samples() {
    let body = load(&arm_doc_with(capped_arm(), true).glb());
    let track = SkinnedTrack::new(body.clone(), 30.0, 0.2, 1.0);
    assert_eq!((track.preroll_samples(), track.sample_count()), (6, 37));
    assert_eq!(track.start(), -0.2);
    let frames: Vec<Vec<Vec3>> = (0..track.sample_count())
        .map(|i| {
            let mut x = Vec::new();
            track.sample(i, &mut x);
            x
        })
        .collect();
    let kf = Motion::Keyframes(vec![
        Keyframe {
            t: 0.0,
            translation: Vec3::zeros(),
            rotation: Vec3::zeros(),
        },
        Keyframe {
            t: 1.0,
            translation: Vec3::zeros(),
            rotation: Vec3::new(0.0, 30.0, 0.0),
        },
    ]);
    for rigid in [Motion::Static, kf] {
        let stored = Motion::deforming(rigid.clone(), frames.clone(), 30.0, -0.2);
        let skinned = Motion::skinned(rigid, track.clone());
        assert!(skinned.is_deforming() && stored.is_deforming());
        assert_eq!(skinned.max_speed(1.0), stored.max_speed(1.0));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for t in [-0.5, -0.2, -0.13, 0.0, 0.01, 0.5, 1.0, 2.0] {
            assert!(skinned.sequence_at(t, &mut a) && stored.sequence_at(t, &mut b));
            assert_eq!(a, b, "t = {t}");
        }
        let make = |motion: Motion| Collider {
            shape: Shape::Mesh {
                vertices: frames[0].clone(),
                triangles: body.triangles().to_vec(),
            },
            motion,
            ..Collider::default()
        };
        let (cs, cm) = (make(skinned), make(stored));
        let p = Vec3::new(0.12, 0.5, 0.0);
        for t in [-0.1, 0.3, 0.95] {
            assert_eq!(cs.point_velocity(&p, t), cm.point_velocity(&p, t));
        }
        let glued = [Vec3::new(0.1, 0.3, 0.0), Vec3::new(0.0, 1.5, 0.1)];
        assert_eq!(cs.attach(&glued), cm.attach(&glued));
        let mut ss = ColliderSet::new(vec![cs]).unwrap();
        let mut sm = ColliderSet::new(vec![cm]).unwrap();
        // Forwards, backwards and repeated times: the cache of samples changes nothing.
        for (k, t) in [0.1, 0.12, 0.5, 0.11, 0.9, 0.9, -0.15, 1.2]
            .into_iter()
            .enumerate()
        {
            ss.update(t);
            sm.update(t);
            let x = probes(100 + k as u64);
            assert_eq!(contacts(&ss, &x), contacts(&sm, &x), "t = {t}");
            assert_eq!(ss.world_mesh(0, 8), sm.world_mesh(0, 8), "t = {t}");
        }
    }
}

#[test]
fn a_skinned_track_needs_a_rate_and_the_body_mesh() {
    let body = load(&arm_doc_with(capped_arm(), true).glb());
    let mut c = skinned_collider(body.clone(), Motion::Static);
    c.motion = Motion::Skinned(SkinnedTrack::new(body.clone(), 0.0, 0.0, 1.0));
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("rate = 0"), "{e}");
    let mut c = skinned_collider(body.clone(), Motion::Static);
    if let Shape::Mesh { vertices, .. } = &mut c.shape {
        vertices.push(Vec3::new(3.0, 0.0, 0.0));
    }
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("74 vertices, the mesh has 75"), "{e}");
}

#[test]
fn counts_come_from_the_json_alone() {
    let split = arm_doc_with(split_capped_arm(), true);
    let bytes = split.glb();
    let counts = GltfCounts::from_slice(&bytes, None).unwrap();
    assert_eq!(counts.vertices, 74 + SPLIT_ARM_COPIES);
    assert_eq!(counts.triangles, 144);
    assert_eq!(counts.clip.as_deref(), Some("bend"));
    assert_eq!(counts.duration, Some(1.0));
    assert_eq!(counts.keys, 2);
    // The loaded body: the same counts before welding.
    let body = load(&bytes);
    assert_eq!(body.weld_report().vertices, counts.vertices);
    assert_eq!(body.triangles().len(), counts.triangles);
    assert_eq!(body.duration(), counts.duration.unwrap());
    // A GLB without its binary chunk: the body cannot be loaded, the counts can.
    let json_only = glb(&split.with_buffer(None).to_vec().unwrap(), &[]);
    let dir = std::env::temp_dir().join(format!("cloth-counts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("json_only.glb");
    std::fs::write(&path, &json_only).unwrap();
    assert!(GltfBody::load(&path, &GltfOptions::default()).is_err());
    assert_eq!(GltfCounts::read(&path, Some("bend")).unwrap(), counts);
    // A clip that is not there, and a file that is not there.
    let e = GltfCounts::read(&path, Some("walk"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("'walk'"), "{e}");
    assert!(GltfCounts::read(dir.join("nope.glb"), None).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
    // Without an animation.
    let still = GltfCounts::from_slice(&arm_doc_with(capped_arm(), false).glb(), None).unwrap();
    assert_eq!(
        (still.vertices, still.clip, still.duration, still.keys),
        (74, None, None, 0)
    );
}
