//! A real Blender export: GarmentCode's mean female body skinned and exported with the glTF
//! exporter's defaults (`shared/characters/walk_female.glb`: 25,532 vertices split at normal
//! seams, 3,972 boundary edges by index), and the body it was made from
//! (`shared/garmentcode/mean_female.obj`, closed, 23,752 vertices). The files live in the
//! `shared` folder next to the repository (or in `$CLOTH_SHARED_DIR`).

mod common;

use std::path::PathBuf;
use std::time::Instant;

use cloth_collide::{
    Collider, ColliderSet, GltfBody, GltfCounts, GltfOptions, Motion, Shape, SkinnedTrack, Vec3,
};
use common::{inside_by_parity, shared};

fn walk_female() -> PathBuf {
    shared("characters/walk_female.glb")
}

fn load() -> GltfBody {
    let t0 = Instant::now();
    let body = GltfBody::load(walk_female(), &GltfOptions::default()).unwrap();
    eprintln!(
        "walk_female.glb loaded and welded in {:.1} ms",
        t0.elapsed().as_secs_f64() * 1e3
    );
    body
}

#[test]
fn walk_female_welds_to_the_closed_source_body() {
    let body = load();
    let r = body.weld_report();
    assert_eq!(
        (r.vertices, r.welded_vertices, r.kept_split),
        (25_532, 23_752, None)
    );
    assert_eq!(body.vertex_count(), 23_752);
    assert_eq!(body.triangles().len(), 47_500);
    assert_eq!(body.clip(), Some("armatureAction"));
    assert!((body.duration() - 2.0).abs() < 1e-6);
    // The bind pose is the OBJ it was made from, vertex by vertex (f32 in the file).
    let obj = cloth_mesh::read_obj_data(shared("garmentcode/mean_female.obj")).unwrap();
    let mut rest = Vec::new();
    body.pose_blend(0.0, &mut rest);
    assert_eq!(rest.len(), obj.positions.len());
    let gap = rest
        .iter()
        .zip(&obj.positions)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(
        gap < 1e-5,
        "bind pose differs from mean_female.obj by {gap} m"
    );
    let canon = |t: &[[usize; 3]]| {
        let mut v: Vec<[usize; 3]> = t
            .iter()
            .map(|f| {
                let k = (0..3).min_by_key(|&k| f[k]).unwrap();
                [f[k], f[(k + 1) % 3], f[(k + 2) % 3]]
            })
            .collect();
        v.sort_unstable();
        v
    };
    assert_eq!(canon(body.triangles()), canon(&obj.triangles));
    // The file's counts, read without its binary data.
    let counts = GltfCounts::read(walk_female(), None).unwrap();
    assert_eq!((counts.vertices, counts.triangles), (25_532, 47_500));
    assert_eq!((counts.duration, counts.keys), (Some(2.0), 61));
}

#[test]
fn walk_female_as_an_obj_mesh_welds_in_the_collider_set() {
    // The file's vertices as stored (unwelded), given as a plain mesh: the set welds them.
    let body = load();
    let map = body.weld_map().unwrap();
    let mut rest = Vec::new();
    body.pose_blend(0.0, &mut rest);
    // Unweld: every file vertex gets its welded vertex's position, and the triangles use the
    // copies in turn.
    let unwelded: Vec<Vec3> = map.iter().map(|&w| rest[w]).collect();
    let mut copies: Vec<Vec<usize>> = vec![Vec::new(); rest.len()];
    for (v, &w) in map.iter().enumerate() {
        copies[w].push(v);
    }
    let triangles: Vec<[usize; 3]> = body
        .triangles()
        .iter()
        .enumerate()
        .map(|(k, t)| t.map(|w| copies[w][k % copies[w].len()]))
        .collect();
    let t0 = Instant::now();
    let set = ColliderSet::new(vec![Collider {
        shape: Shape::Mesh {
            vertices: unwelded,
            triangles,
        },
        name: "walk_female".into(),
        ..Collider::default()
    }])
    .unwrap();
    eprintln!(
        "walk_female as a 25,532-vertex mesh collider: welded and prepared in {:.1} ms",
        t0.elapsed().as_secs_f64() * 1e3
    );
    let r = &set.mesh_reports()[0];
    assert_eq!((r.weld.vertices, r.weld.welded_vertices), (25_532, 23_752));
    assert_eq!(
        (r.boundary_edges, r.components, r.closed_components),
        (0, 1, 1)
    );
}

#[test]
fn walk_female_collides_in_its_bind_pose_and_as_it_walks() {
    let body = load();
    let triangles = body.triangles().to_vec();
    let t0 = Instant::now();
    let track = SkinnedTrack::new(body.clone(), 120.0, 0.25, 2.0);
    let mut rest = Vec::new();
    track.sample(0, &mut rest);
    let mut set = ColliderSet::new(vec![Collider {
        shape: Shape::Mesh {
            vertices: rest,
            triangles: triangles.clone(),
        },
        motion: Motion::skinned(Motion::Static, track),
        name: "walk_female".into(),
        ..Collider::default()
    }])
    .unwrap();
    eprintln!(
        "walk_female collider prepared in {:.1} ms",
        t0.elapsed().as_secs_f64() * 1e3
    );
    let r = &set.mesh_reports()[0];
    assert_eq!((r.weld.vertices, r.weld.welded_vertices), (25_532, 23_752));
    assert_eq!(
        (r.boundary_edges, r.components, r.closed_components),
        (0, 1, 1)
    );
    assert!(
        r.notice()
            .unwrap()
            .contains("25532 vertices welded to 23752")
    );
    // The fastest surface point of the walk (every sample posed once).
    let t1 = Instant::now();
    let speed = set.colliders()[0].motion.max_speed(1.0);
    eprintln!(
        "max speed {speed:.2} m/s over {} samples in {:.0} ms",
        30 + 241,
        t1.elapsed().as_secs_f64() * 1e3
    );
    assert!(
        (0.5..5.0).contains(&speed),
        "a walk in place moves at {speed} m/s"
    );
    let mut posed = Vec::new();
    for t in [-0.25, -0.1, 0.0, 0.4, 0.9, 1.3, 1.9] {
        let t1 = Instant::now();
        set.update(t);
        let dt = t1.elapsed().as_secs_f64() * 1e3;
        // Probes: the posed vertices pushed 1 cm out and 1 cm in along their normals from
        // the world mesh, checked against an independent ray parity.
        let (wv, wt) = set.world_mesh(0, 8).unwrap();
        assert_eq!(wv.len(), 23_752);
        let normals = vertex_normals(&wv, &wt);
        let mut probes = Vec::new();
        for k in (0..wv.len()).step_by(97) {
            probes.push(wv[k] + normals[k] * 0.01);
            probes.push(wv[k] - normals[k] * 0.01);
        }
        let mut contacts = Vec::new();
        set.vertex_contacts(&probes, 0.0, 0.02, &mut contacts);
        let mut signs = vec![None; probes.len()];
        for c in &contacts {
            signs[c.vertex] = Some(c.distance < 0.0);
        }
        let mut agree = 0;
        for (p, s) in probes.iter().zip(&signs) {
            let s =
                s.unwrap_or_else(|| panic!("t = {t}: no contact for a probe 1 cm from the body"));
            agree += usize::from(s == inside_by_parity(p, &wv, &wt));
        }
        // Thin parts (fingers, between the thighs) may put a probe 1 cm inside into another
        // part, and a walking body may touch itself; nearly every probe agrees.
        assert!(
            agree * 100 >= 97 * probes.len(),
            "t = {t}: {agree} of {}",
            probes.len()
        );
        eprintln!(
            "t = {t:5.2} s: update {dt:.1} ms, {agree} of {} probes agree",
            probes.len()
        );
        // The welded mesh follows the skinned body (the walk's poses at sample times).
        if t == 0.0 || t == 0.9 {
            body.pose(t, &mut posed);
            let gap = wv
                .iter()
                .zip(&posed)
                .map(|(a, b)| (a - b).norm())
                .fold(0.0, f64::max);
            assert!(
                gap < 1e-12,
                "t = {t}: collider is {gap} m off the posed body"
            );
        }
    }
}

/// Area-weighted vertex normals, normalised.
fn vertex_normals(v: &[Vec3], t: &[[usize; 3]]) -> Vec<Vec3> {
    let mut n = vec![Vec3::zeros(); v.len()];
    for f in t {
        let a = (v[f[1]] - v[f[0]]).cross(&(v[f[2]] - v[f[0]]));
        for &i in f {
            n[i] += a;
        }
    }
    n.iter().map(|x| x.normalize()).collect()
}
