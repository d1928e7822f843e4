//! Open mesh colliders (a box without its top, a hemispherical bowl, a sheet next to a closed
//! solid) and meshes split at their seams: contact on either side of an open surface, the
//! closed parts keeping their inside, and particles dropped on them resting outside, all
//! checked against distances computed here, apart from the crate's code.

mod common;

use cloth_collide::{
    CollideError, Collider, ColliderSet, Contact, Motion, Shape, SplitReason, Vec3,
};
use common::{Lcg, collider, cube_mesh, inside_by_parity, mesh_distance};
use proptest::prelude::*;

fn mesh(vertices: Vec<Vec3>, triangles: Vec<[usize; 3]>) -> Shape {
    Shape::Mesh {
        vertices,
        triangles,
    }
}

/// The box [-h, h]^3 without its top face (y = h), as an exporter writes it: each of the five
/// faces with its own four vertices (20 vertices), wound outward.
fn open_box(h: f64) -> (Vec<Vec3>, Vec<[usize; 3]>) {
    let (cv, ct) = cube_mesh(h);
    let mut v = Vec::new();
    let mut t = Vec::new();
    // Triangles of the cube come in face pairs; the top is the pair (3, 7, 6), (3, 6, 2).
    for pair in ct.chunks(2) {
        if pair[0] == [3, 7, 6] {
            continue;
        }
        let mut local = std::collections::HashMap::new();
        for tri in pair {
            t.push(tri.map(|i| {
                *local.entry(i).or_insert_with(|| {
                    v.push(cv[i]);
                    v.len() - 1
                })
            }));
        }
    }
    (v, t)
}

/// The lower half of a sphere of radius r (a bowl open at the equator y = 0), wound outward.
fn bowl(r: f64, rings: usize, segments: usize) -> (Vec<Vec3>, Vec<[usize; 3]>) {
    let mut v = vec![Vec3::new(0.0, -r, 0.0)];
    for i in 1..=rings {
        let polar = std::f64::consts::FRAC_PI_2 * (rings - i) as f64 / rings as f64;
        for k in 0..segments {
            let a = std::f64::consts::TAU * k as f64 / segments as f64;
            v.push(Vec3::new(
                r * polar.cos() * a.cos(),
                -r * polar.sin(),
                r * polar.cos() * a.sin(),
            ));
        }
    }
    let at = |i: usize, k: usize| 1 + (i - 1) * segments + k % segments;
    let mut t = Vec::new();
    for k in 0..segments {
        t.push([0, at(1, k), at(1, k + 1)]);
    }
    for i in 1..rings {
        for k in 0..segments {
            t.push([at(i, k), at(i + 1, k), at(i + 1, k + 1)]);
            t.push([at(i, k), at(i + 1, k + 1), at(i, k + 1)]);
        }
    }
    (v, t)
}

fn q(set: &ColliderSet, p: Vec3) -> Contact {
    set.query(0, &p).unwrap()
}

fn close(a: &Vec3, b: &Vec3) -> bool {
    (a - b).norm() < 1e-12
}

#[test]
fn an_open_box_gives_contacts_on_both_sides() {
    let h = 0.5;
    let (v, t) = open_box(h);
    let set = ColliderSet::new(vec![collider(mesh(v.clone(), t.clone()), "tray")]).unwrap();
    let r = &set.mesh_reports()[0];
    assert_eq!((r.weld.vertices, r.weld.welded_vertices), (20, 8));
    assert_eq!(
        (r.boundary_edges, r.components, r.closed_components),
        (4, 1, 0)
    );
    // (point, distance, normal): inside and outside of the floor and of a wall, above the rim.
    let cases = [
        (Vec3::new(0.1, -h + 0.01, 0.2), 0.01, Vec3::y()),
        (Vec3::new(0.1, -h - 0.01, 0.2), 0.01, -Vec3::y()),
        (Vec3::new(h - 0.02, 0.1, 0.0), 0.02, -Vec3::x()),
        (Vec3::new(h + 0.02, 0.1, 0.0), 0.02, Vec3::x()),
        (Vec3::new(0.1, 0.2, -h + 0.03), 0.03, Vec3::z()),
        (Vec3::new(h, h + 0.04, 0.1), 0.04, Vec3::y()),
        // Nearest to the floor from the middle: the box has no inside.
        (Vec3::new(0.0, -0.1, 0.0), 0.4, Vec3::y()),
    ];
    for (p, d, n) in cases {
        let c = q(&set, p);
        assert!(
            (c.distance - d).abs() < 1e-12,
            "{p:?}: distance {}",
            c.distance
        );
        assert!(close(&c.normal, &n), "{p:?}: normal {:?}", c.normal);
        assert!(close(&c.surface_point, &(p - n * d)), "{p:?}");
        assert!((mesh_distance(&p, &v, &t) - d).abs() < 1e-12);
    }
    // Contacts within range only, on both sides of the floor.
    let x = [
        Vec3::new(0.0, -h + 0.004, 0.0),
        Vec3::new(0.0, -h - 0.004, 0.0),
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(3.0, 0.0, 0.0),
    ];
    let mut out = Vec::new();
    set.vertex_contacts(&x, 0.005, 0.0, &mut out);
    assert_eq!(out.iter().map(|c| c.vertex).collect::<Vec<_>>(), vec![0, 1]);
    assert!(close(&out[0].normal, &Vec3::y()) && close(&out[1].normal, &-Vec3::y()));
    assert!(out.iter().all(|c| (c.distance - 0.004).abs() < 1e-12));
    // An open part has no sharp features to report.
    assert_eq!(set.feature_count(), 0);
}

#[test]
fn a_closed_solid_keeps_its_inside_next_to_open_parts() {
    // One mesh: a closed cube (half 1), an open flap inside it at y = 0.5 and an open sheet
    // beside it at x = 3.
    let (mut v, mut t) = cube_mesh(1.0);
    for y in [0.5, -1.0] {
        let x0 = if y > 0.0 { -0.5 } else { 2.5 };
        let base = v.len();
        v.extend([
            Vec3::new(x0, y, -0.5),
            Vec3::new(x0 + 1.0, y, -0.5),
            Vec3::new(x0 + 1.0, y, 0.5),
            Vec3::new(x0, y, 0.5),
        ]);
        t.extend([[base, base + 2, base + 1], [base, base + 3, base + 2]]);
    }
    for flip in [false, true] {
        let t: Vec<[usize; 3]> = if flip {
            t.iter().map(|f| [f[0], f[2], f[1]]).collect()
        } else {
            t.clone()
        };
        let set = ColliderSet::new(vec![collider(mesh(v.clone(), t), "mixed")]).unwrap();
        let r = &set.mesh_reports()[0];
        assert_eq!(
            (r.components, r.closed_components, r.boundary_edges),
            (3, 1, 8)
        );
        // Inside the cube, just above the flap: pushed out through the top, not off the flap.
        let c = q(&set, Vec3::new(0.0, 0.55, 0.0));
        assert!(
            (c.distance + 0.45).abs() < 1e-12,
            "flip {flip}: {}",
            c.distance
        );
        assert!(close(&c.normal, &Vec3::y()));
        // Outside the cube, under the sheet: the sheet, seen from below.
        let c = q(&set, Vec3::new(3.0, -1.2, 0.0));
        assert!((c.distance - 0.2).abs() < 1e-12 && close(&c.normal, &-Vec3::y()));
        // Between the cube and the sheet, nearer the cube's side.
        let c = q(&set, Vec3::new(1.2, -0.5, 0.0));
        assert!((c.distance - 0.2).abs() < 1e-12 && close(&c.normal, &Vec3::x()));
        // Far outside the cube within range of nothing: no contact.
        let mut out = Vec::new();
        set.vertex_contacts(&[Vec3::new(0.0, 3.0, 0.0)], 0.01, 0.01, &mut out);
        assert!(out.is_empty());
        // The cube's corners are still sharp features; the open parts add none.
        assert_eq!(set.feature_count(), 8);
    }
}

#[test]
fn welding_follows_a_mesh_sequence_and_keeps_apart_what_a_frame_parts() {
    let (v, t) = open_box(0.5);
    let lift = |dy: f64| {
        v.iter()
            .map(|p| p + Vec3::new(0.0, dy, 0.0))
            .collect::<Vec<_>>()
    };
    let mut c = collider(mesh(v.clone(), t.clone()), "moving tray");
    c.motion = Motion::MeshSequence {
        frames: vec![v.clone(), lift(0.1), lift(0.2)],
        fps: 10.0,
        start: 0.0,
    };
    let set = ColliderSet::new(vec![c.clone()]).unwrap();
    assert_eq!(set.mesh_reports()[0].weld.welded_vertices, 8);
    assert_eq!(set.mesh_reports()[0].weld.kept_split, None);
    // Frame 2 moves the floor's copy of one corner away from the walls' copies.
    let corner = v[t[0][0]];
    let copies: Vec<usize> = (0..v.len()).filter(|&i| v[i] == corner).collect();
    assert_eq!(copies.len(), 3);
    let mut torn = lift(0.2);
    torn[copies[2]].y += 0.01;
    c.motion = Motion::MeshSequence {
        frames: vec![v.clone(), lift(0.1), torn],
        fps: 10.0,
        start: 0.0,
    };
    let mut set = ColliderSet::new(vec![c]).unwrap();
    let r = set.mesh_reports()[0].clone();
    assert_eq!(r.weld.welded_vertices, 9);
    let kept = r.weld.kept_split.unwrap();
    assert_eq!(
        (kept.count, kept.a, kept.b, kept.reason),
        (1, copies[0], copies[2], SplitReason::Frame(2))
    );
    assert!(r.notice().unwrap().contains("frame 2 moves them apart"));
    // The welded mesh follows the frames: at t = 0.1 s the floor is 0.1 higher.
    set.update(0.1);
    let c = set.query(0, &Vec3::new(0.0, -0.35, 0.0)).unwrap();
    assert!((c.distance - 0.05).abs() < 1e-12, "{}", c.distance);
    assert!((c.surface_velocity - Vec3::new(0.0, 1.0, 0.0)).norm() < 1e-12);
}

#[test]
fn only_identical_positions_weld_and_errors_name_the_given_vertices() {
    // Two triangles sharing an edge whose copies differ by 1e-9 m: not welded, so open.
    let v = vec![
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(0.0, 0.0, 1.0),
        Vec3::new(1.0, 0.0, 1e-9),
        Vec3::new(0.0, 0.0, 1.0),
        Vec3::new(1.0, 0.0, 1.0),
    ];
    let t = vec![[0, 2, 1], [3, 4, 5]];
    let set = ColliderSet::new(vec![collider(mesh(v.clone(), t.clone()), "near")]).unwrap();
    let r = &set.mesh_reports()[0];
    assert_eq!(
        (r.weld.welded_vertices, r.boundary_edges, r.components),
        (5, 6, 2)
    );
    // A third triangle on the welded edge (2, 1)~(4, 3 moved onto 1): non-manifold, named by
    // the first copies as given.
    let mut v2 = v;
    v2[3] = v2[1];
    let mut t2 = t;
    t2.push([1, 2, 6]);
    v2.push(Vec3::new(0.5, 1.0, 0.5));
    let e = ColliderSet::new(vec![collider(mesh(v2, t2), "fin")]).unwrap_err();
    assert!(
        matches!(
            e,
            CollideError::NonManifoldEdge {
                a: 1,
                b: 2,
                count: 3,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("'fin' (#0)"));
}

#[test]
fn contacts_with_a_bowl_match_an_independent_distance_on_either_side() {
    let (v, t) = bowl(0.4, 8, 24);
    let set = ColliderSet::new(vec![collider(mesh(v.clone(), t.clone()), "bowl")]).unwrap();
    let r = &set.mesh_reports()[0];
    assert_eq!(
        (r.boundary_edges, r.components, r.closed_components),
        (24, 1, 0)
    );
    let mut rng = Lcg(11);
    let (mut inner, mut outer) = (0, 0);
    for _ in 0..3000 {
        let p = rng.vec(-0.5, 0.5);
        let d = mesh_distance(&p, &v, &t);
        let c = q(&set, p);
        assert!(
            (c.distance - d).abs() < 1e-9,
            "{p:?}: {} vs {d}",
            c.distance
        );
        assert!((c.normal.norm() - 1.0).abs() < 1e-12);
        assert!(mesh_distance(&c.surface_point, &v, &t) < 1e-9);
        // The normal points from the surface to the point, on whichever side it is.
        if d > 1e-9 {
            assert!(close(&(c.surface_point + c.normal * c.distance), &p));
            if p.norm() < 0.39 && p.y < -0.05 {
                inner += 1;
                assert!(
                    c.normal.dot(&p) < 0.0,
                    "{p:?} inside the bowl: normal {:?}",
                    c.normal
                );
            } else if p.norm() > 0.41 && p.y < -0.05 {
                outer += 1;
                assert!(
                    c.normal.dot(&p) > 0.0,
                    "{p:?} below the bowl: normal {:?}",
                    c.normal
                );
            }
        }
        // vertex_contacts reports the point exactly when it is within range.
        let mut out = Vec::new();
        set.vertex_contacts(&[p], 0.01, 0.02, &mut out);
        if (d - 0.03).abs() > 1e-9 {
            assert_eq!(out.len(), usize::from(d < 0.03), "{p:?} at {d}");
        }
    }
    assert!(inner > 100 && outer > 100, "{inner} inner, {outer} outer");
}

/// Drops particles under gravity onto the colliders of `set`, with a contact rule like the
/// simulation's: a particle within `thickness + |v| h` of a surface may not approach it faster
/// than would bring it to `thickness` in the step, and is pushed back to `thickness` if it is
/// closer. Returns the final positions.
fn drop_particles(set: &ColliderSet, start: &[Vec3], thickness: f64, steps: usize) -> Vec<Vec3> {
    let h = 2e-3;
    let g = Vec3::new(0.0, -9.81, 0.0);
    let mut x = start.to_vec();
    let mut v = vec![Vec3::zeros(); x.len()];
    let mut contacts = Vec::new();
    for _ in 0..steps {
        for vi in &mut v {
            *vi += g * h;
        }
        let vmax = v.iter().map(|v| v.norm()).fold(0.0, f64::max);
        set.vertex_contacts(&x, thickness, 2.0 * vmax * h, &mut contacts);
        for c in &contacts {
            let (xi, vi) = (&mut x[c.vertex], &mut v[c.vertex]);
            if c.distance < thickness {
                *xi += c.normal * (thickness - c.distance);
            }
            let gap = c.distance.max(thickness) - thickness;
            let vn = vi.dot(&c.normal);
            if vn < -gap / h {
                *vi += c.normal * (-gap / h - vn);
                *vi *= 0.5; // friction, so that particles settle
            }
        }
        for (xi, vi) in x.iter_mut().zip(&v) {
            *xi += vi * h;
        }
    }
    x
}

#[test]
fn particles_rest_on_an_open_split_box_without_crossing_it() {
    let h = 0.5;
    let thickness = 0.01;
    let (v, t) = open_box(h);
    let floor = Collider {
        shape: Shape::Plane,
        position: Vec3::new(0.0, -h - 0.3, 0.0),
        ..Collider::default()
    };
    let set = ColliderSet::new(vec![collider(mesh(v.clone(), t.clone()), "tray"), floor]).unwrap();
    // A grid over the opening and beyond the walls, 0.3 m above the rim.
    let mut start = Vec::new();
    for i in 0..15 {
        for k in 0..15 {
            let (px, pz) = (-1.05 + 0.15 * i as f64, -1.05 + 0.15 * k as f64);
            let over_rim = (px.abs() - h).abs() < 0.1 || (pz.abs() - h).abs() < 0.1;
            if !over_rim {
                start.push(Vec3::new(px, h + 0.3, pz));
            }
        }
    }
    let end = drop_particles(&set, &start, thickness, 600);
    let (mut inside, mut outside) = (0, 0);
    for (s, e) in start.iter().zip(&end) {
        let d = mesh_distance(e, &v, &t);
        assert!(
            d > 0.5 * thickness,
            "{s:?} ended {d} m from the box at {e:?}"
        );
        if s.x.abs() < h && s.z.abs() < h {
            // Fell into the box and rests on its floor, inside.
            inside += 1;
            assert!(
                (e.y - (-h + thickness)).abs() < 2e-3,
                "{s:?} ended at {e:?}"
            );
            assert!(e.x.abs() < h && e.z.abs() < h, "{s:?} left the box: {e:?}");
        } else {
            // Fell past the walls to the ground, outside.
            outside += 1;
            assert!(
                (e.y - (-h - 0.3 + thickness)).abs() < 2e-3,
                "{s:?} ended at {e:?}"
            );
            assert!(
                e.x.abs() > h || e.z.abs() > h,
                "{s:?} got into the box: {e:?}"
            );
        }
    }
    assert!(
        inside >= 25 && outside >= 50,
        "{inside} inside, {outside} outside"
    );
}

/// A UV sphere whose vertices are split along a seam and at both poles, as an exporter writes
/// it: closed once welded.
fn split_sphere(r: f64, rings: usize, segments: usize) -> (Vec<Vec3>, Vec<[usize; 3]>) {
    let mut v = Vec::new();
    // segments + 1 columns: the last repeats the first (the seam); poles once per column.
    for i in 0..=rings {
        let polar = std::f64::consts::PI * i as f64 / rings as f64;
        // Poles exactly on the axis (sin(pi) is not 0 in floating point).
        let rho = if i == 0 || i == rings {
            0.0
        } else {
            r * polar.sin()
        };
        for k in 0..=segments {
            let a = std::f64::consts::TAU * (k % segments) as f64 / segments as f64;
            v.push(Vec3::new(rho * a.cos(), r * polar.cos(), -rho * a.sin()));
        }
    }
    let at = |i: usize, k: usize| i * (segments + 1) + k;
    let mut t = Vec::new();
    for i in 0..rings {
        for k in 0..segments {
            if i > 0 {
                t.push([at(i, k), at(i + 1, k), at(i, k + 1)]);
            }
            if i + 1 < rings {
                t.push([at(i, k + 1), at(i + 1, k), at(i + 1, k + 1)]);
            }
        }
    }
    (v, t)
}

#[test]
fn particles_rest_on_a_split_vertex_sphere_outside_it() {
    let (v, t) = split_sphere(0.3, 12, 24);
    let set = ColliderSet::new(vec![collider(mesh(v.clone(), t.clone()), "ball")]).unwrap();
    let r = &set.mesh_reports()[0];
    assert_eq!(r.weld.welded_vertices, 11 * 24 + 2);
    assert_eq!((r.boundary_edges, r.closed_components), (0, 1));
    let mut rng = Lcg(5);
    let start: Vec<Vec3> = (0..200)
        .map(|_| {
            let p = rng.vec(-0.25, 0.25);
            Vec3::new(p.x, 0.5 + p.y.abs(), p.z)
        })
        .collect();
    let thickness = 0.008;
    let end = drop_particles(&set, &start, thickness, 300);
    for (s, e) in start.iter().zip(&end) {
        let d = mesh_distance(e, &v, &t);
        assert!(!inside_by_parity(e, &v, &t), "{s:?} ended inside at {e:?}");
        assert!(d > 0.5 * thickness, "{s:?} ended {d} m from the ball");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A mesh split into per-face vertices at random places answers exactly like its welded
    /// twin, at random points.
    #[test]
    fn a_split_mesh_answers_like_its_welded_twin(
        split in prop::collection::vec(any::<bool>(), 12),
        points in prop::collection::vec((-2.0f64..2.0, -2.0f64..2.0, -2.0f64..2.0), 20),
    ) {
        let (cv, ct) = cube_mesh(1.0);
        // Triangle k uses its own copies of its vertices when split[k].
        let mut v = cv.clone();
        let t: Vec<[usize; 3]> = ct
            .iter()
            .zip(&split)
            .map(|(tri, &s)| {
                if s {
                    tri.map(|i| {
                        v.push(cv[i]);
                        v.len() - 1
                    })
                } else {
                    *tri
                }
            })
            .collect();
        let a = ColliderSet::new(vec![collider(mesh(v, t), "split")]).unwrap();
        let b = ColliderSet::new(vec![collider(mesh(cv, ct), "twin")]).unwrap();
        prop_assert!(a.mesh_reports()[0].is_closed());
        prop_assert_eq!(a.vertex_count(), 8);
        for (x, y, z) in points {
            let p = Vec3::new(x, y, z);
            prop_assert_eq!(a.query(0, &p), b.query(0, &p));
        }
    }
}
