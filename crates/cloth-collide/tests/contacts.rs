//! Cloth-solid contact queries: exactly the vertices within range (brute force), one contact
//! per vertex, determinism across thread counts, and sharp-feature contacts.

mod common;

use cloth_collide::{Collider, ColliderSet, Contact, FeatureContact, Motion, Shape, Vec3};
use common::{Lcg, cube_mesh, inside_by_parity, point_triangle_distance, run_in_pool};
use proptest::prelude::*;

fn scene() -> ColliderSet {
    let (v, t) = cube_mesh(0.3);
    let c = |shape: Shape, position: Vec3, rotation: Vec3, thickness: f64| Collider {
        shape,
        position,
        rotation,
        thickness,
        motion: Motion::Velocity {
            linear: Vec3::new(0.1, 0.0, 0.0),
            angular: Vec3::new(0.0, 45.0, 0.0),
        },
        ..Collider::default()
    };
    ColliderSet::new(vec![
        c(
            Shape::Plane,
            Vec3::new(0.0, -1.0, 0.0),
            Vec3::new(5.0, 0.0, 0.0),
            0.0,
        ),
        c(
            Shape::Sphere { radius: 0.4 },
            Vec3::new(0.5, 0.0, 0.0),
            Vec3::zeros(),
            0.01,
        ),
        c(
            Shape::Cuboid {
                size: Vec3::new(0.5, 0.3, 0.8),
            },
            Vec3::new(-0.5, 0.2, 0.1),
            Vec3::new(10.0, 20.0, 30.0),
            0.0,
        ),
        c(
            Shape::Capsule {
                radius: 0.1,
                length: 0.6,
            },
            Vec3::new(0.0, 0.5, -0.5),
            Vec3::new(0.0, 0.0, 60.0),
            0.002,
        ),
        c(
            Shape::Cylinder {
                radius: 0.2,
                length: 0.4,
            },
            Vec3::new(0.0, -0.3, 0.6),
            Vec3::new(45.0, 0.0, 0.0),
            0.0,
        ),
        c(
            Shape::Mesh {
                vertices: v,
                triangles: t,
            },
            Vec3::new(0.6, 0.6, 0.6),
            Vec3::new(0.0, 15.0, 0.0),
            0.005,
        ),
    ])
    .unwrap()
}

/// Reference: every collider queried for every point, no broad phase.
fn brute_force(set: &ColliderSet, x: &[Vec3], h: f64, margin: f64) -> Vec<Contact> {
    let mut out = Vec::new();
    for (v, p) in x.iter().enumerate() {
        let mut best: Option<(f64, Contact)> = None;
        for i in 0..set.len() {
            let c = set.query(i, p).unwrap();
            let th = set.colliders()[i].thickness;
            if c.distance < h + th + margin
                && best.as_ref().is_none_or(|(k, _)| c.distance - th < *k)
            {
                best = Some((c.distance - th, c));
            }
        }
        if let Some((_, mut c)) = best {
            c.vertex = v;
            out.push(c);
        }
    }
    out
}

/// The scene at time `t` (s), a generator from `seed`, and 1,500 points drawn from it in the
/// cube of side 3 m around the origin.
fn draw(seed: u64, t: f64) -> (ColliderSet, Lcg, Vec<Vec3>) {
    let mut set = scene();
    set.update(t);
    let mut rng = Lcg(seed);
    let x: Vec<Vec3> = (0..1500).map(|_| rng.vec(-1.5, 1.5)).collect();
    (set, rng, x)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn vertex_contacts_match_brute_force(seed in any::<u64>(), t in 0.0f64..2.0, margin in 0.0f64..0.2) {
        let (set, _, x) = draw(seed, t);
        let mut got = Vec::new();
        set.vertex_contacts(&x, 0.005, margin, &mut got);
        let want = brute_force(&set, &x, 0.005, margin);
        prop_assert_eq!(got, want);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    #[test]
    fn vertex_contacts_of_a_list_are_the_full_answers_of_its_vertices(
        seed in any::<u64>(),
        t in 0.0f64..2.0,
        margin in 0.0f64..0.2,
    ) {
        let (set, mut rng, x) = draw(seed, t);
        // An ascending list of about a third of the vertices, and two indices out of range.
        let mut list: Vec<usize> = (0..x.len()).filter(|_| rng.next() < 0.33).collect();
        list.extend([x.len(), x.len() + 7]);
        let mut got = Vec::new();
        set.vertex_contacts_of(&x, &list, 0.005, margin, &mut got);
        let want: Vec<Contact> = brute_force(&set, &x, 0.005, margin)
            .into_iter()
            .filter(|c| list.contains(&c.vertex))
            .collect();
        prop_assert_eq!(got, want);
    }

    /// What the implicit integrator's candidate check relies on to skip vertices: a contact's
    /// key (distance minus the collider's thickness) changes no faster than the point moves,
    /// so a point that moves less than its key exceeds the cloth thickness (or than the
    /// margin, when it had no contact) has no contact at the thickness alone. Checked against
    /// the brute-force reference at the moved points.
    #[test]
    fn a_point_that_moves_less_than_its_clearance_gets_no_contact(
        seed in any::<u64>(),
        t in 0.0f64..2.0,
        margin in 0.001f64..0.2,
    ) {
        let (set, mut rng, x0) = draw(seed, t);
        let h = 0.005;
        let mut start = Vec::new();
        set.vertex_contacts(&x0, h, margin, &mut start);
        let mut clearance = vec![margin; x0.len()];
        for c in &start {
            clearance[c.vertex] = c.distance - set.colliders()[c.collider].thickness - h;
        }
        // Every point moves in a random direction by up to 1.2 times its clearance.
        let x1: Vec<Vec3> = x0
            .iter()
            .zip(&clearance)
            .map(|(p, &c)| {
                let d = rng.vec(-1.0, 1.0);
                let n = d.norm().max(1e-9);
                p + d / n * (1.2 * c.max(0.0) * rng.next())
            })
            .collect();
        let moved_less = |i: usize| (x1[i] - x0[i]).norm() + 1e-9 < clearance[i];
        let reached = brute_force(&set, &x1, h, 0.0);
        for c in &reached {
            prop_assert!(!moved_less(c.vertex), "vertex {} moved less than its clearance", c.vertex);
        }
        // The test means something: some points moved less and some reached a contact.
        prop_assert!((0..x1.len()).any(moved_less));
        prop_assert!(!reached.is_empty());
    }
}

#[test]
fn contacts_are_sorted_unique_and_geometrically_consistent() {
    let set = scene();
    let mut rng = Lcg(3);
    let x: Vec<Vec3> = (0..5000).map(|_| rng.vec(-1.5, 1.5)).collect();
    let mut out = Vec::new();
    set.vertex_contacts(&x, 0.01, 0.05, &mut out);
    assert!(!out.is_empty());
    assert!(out.windows(2).all(|w| w[0].vertex < w[1].vertex));
    for c in &out {
        assert!((c.normal.norm() - 1.0).abs() < 1e-12);
        // The vertex sits at surface_point + distance * normal.
        assert!((x[c.vertex] - (c.surface_point + c.normal * c.distance)).norm() < 1e-9);
    }
    // Non-finite positions are skipped, not propagated.
    let bad = vec![Vec3::new(f64::NAN, 0.0, 0.0), Vec3::new(0.5, 0.0, 0.0)];
    set.vertex_contacts(&bad, 0.01, 0.0, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].vertex, 1);
}

#[test]
fn thread_count_determinism() {
    let mut set = scene();
    set.update(0.7);
    let mut rng = Lcg(11);
    let x: Vec<Vec3> = (0..20000).map(|_| rng.vec(-1.5, 1.5)).collect();
    let run = || {
        let mut out = Vec::new();
        set.vertex_contacts(&x, 0.005, 0.02, &mut out);
        out
    };
    let one = run_in_pool(1, run);
    let two = run_in_pool(2, run);
    assert!(!one.is_empty());
    assert_eq!(one, two);
}

/// A flat cloth grid at height y over [-w/2, w/2]^2 with n x n vertices.
fn sheet(n: usize, w: f64, y: f64) -> (Vec<Vec3>, Vec<[usize; 3]>) {
    let mut x = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let s = w / (n - 1) as f64;
            x.push(Vec3::new(
                -w / 2.0 + i as f64 * s,
                y,
                -w / 2.0 + j as f64 * s,
            ));
        }
    }
    let mut t = Vec::new();
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            let a = j * n + i;
            t.push([a, a + n, a + 1]);
            t.push([a + 1, a + n, a + n + 1]);
        }
    }
    (x, t)
}

#[test]
fn box_corners_poking_through_a_sheet() {
    let b = Collider {
        shape: Shape::Cuboid {
            size: Vec3::repeat(1.0),
        },
        ..Collider::default()
    };
    let (v, t) = cube_mesh(0.5);
    let m = Collider {
        shape: Shape::Mesh {
            vertices: v,
            triangles: t,
        },
        ..Collider::default()
    };
    for (name, c) in [("box", b), ("mesh", m)] {
        let set = ColliderSet::new(vec![c]).unwrap();
        // Sheet 1 cm below the top face: the four top corners poke through it.
        let (x, tris) = sheet(7, 1.2, 0.49);
        let mut out: Vec<FeatureContact> = Vec::new();
        set.feature_contacts(&tris, &x, 0.005, 0.01, &mut out);
        assert_eq!(out.len(), 4, "{name}: {out:?}");
        for fc in &out {
            assert!((fc.feature_point.y - 0.5).abs() < 1e-12, "{name}");
            assert!(
                (fc.normal - Vec3::y()).norm() < 1e-12,
                "{name}: normal away from the solid"
            );
            assert!(
                (fc.distance + 0.01).abs() < 1e-12,
                "{name}: poked through by 1 cm"
            );
            let p: Vec3 = (0..3).map(|k| x[fc.vertices[k]] * fc.weights[k]).sum();
            assert!(
                (p - Vec3::new(fc.feature_point.x, 0.49, fc.feature_point.z)).norm() < 1e-12,
                "{name}"
            );
            assert!((fc.weights.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
        // Sheet lifted clear above range: nothing.
        let (x, tris) = sheet(7, 1.2, 0.6);
        set.feature_contacts(&tris, &x, 0.005, 0.01, &mut out);
        assert!(out.is_empty(), "{name}");
    }
}

#[test]
fn feature_contacts_deterministic_across_threads() {
    let set = scene();
    let (x, tris) = sheet(60, 3.0, 0.05);
    let run = || {
        let mut out = Vec::new();
        set.feature_contacts(&tris, &x, 0.01, 0.3, &mut out);
        out
    };
    let one = run_in_pool(1, run);
    assert!(!one.is_empty());
    assert_eq!(one, run_in_pool(2, run));
}

#[test]
fn rims_and_tips_poking_through_a_sheet() {
    let c = |shape| Collider {
        shape,
        ..Collider::default()
    };
    let set = ColliderSet::new(vec![
        c(Shape::Cylinder {
            radius: 0.5,
            length: 1.0,
        }),
        c(Shape::Capsule {
            radius: 0.2,
            length: 0.5,
        }),
        c(Shape::Sphere { radius: 0.45 }),
    ])
    .unwrap();
    assert_eq!(set.feature_count(), 32 + 2);
    let (x, tris) = sheet(13, 1.2, 0.49);
    let mut out = Vec::new();
    set.feature_contacts(&tris, &x, 0.005, 0.01, &mut out);
    // All 16 upper rim points of the cylinder pierce the sheet by 1 cm; the capsule tip
    // (y = 0.45) is 4 cm below it, out of range; the sphere has no features.
    assert_eq!(out.len(), 16, "{out:?}");
    assert!(
        out.iter()
            .all(|f| f.collider == 0 && (f.distance + 0.01).abs() < 1e-12)
    );
    assert!(out.windows(2).all(|w| w[0].feature < w[1].feature));
    let (x, tris) = sheet(13, 1.2, 0.44);
    set.feature_contacts(&tris, &x, 0.005, 0.01, &mut out);
    let tips: Vec<_> = out.iter().filter(|f| f.collider == 1).collect();
    assert_eq!(tips.len(), 1);
    assert!((tips[0].distance + 0.01).abs() < 1e-12);
    assert!((tips[0].normal - Vec3::y()).norm() < 1e-12);
}

/// A closed, outward-wound, star-shaped (so never self-intersecting) but non-convex mesh: a
/// UV sphere of `rings` x `segments` whose radius has bumps, `phase` moving the bumps.
fn bumpy_sphere(rings: usize, segments: usize, phase: f64) -> (Vec<Vec3>, Vec<[usize; 3]>) {
    let radius = |th: f64, ph: f64| 0.5 + 0.12 * (3.0 * th + phase).sin() * (4.0 * ph).cos();
    let mut v = vec![Vec3::new(0.0, radius(0.0, 0.0), 0.0)];
    for r in 1..rings {
        let th = std::f64::consts::PI * r as f64 / rings as f64;
        for s in 0..segments {
            let ph = std::f64::consts::TAU * s as f64 / segments as f64;
            let d = Vec3::new(th.sin() * ph.cos(), th.cos(), th.sin() * ph.sin());
            v.push(d * radius(th, ph));
        }
    }
    v.push(Vec3::new(0.0, -radius(std::f64::consts::PI, 0.0), 0.0));
    let south = v.len() - 1;
    let at = |r: usize, s: usize| 1 + (r - 1) * segments + s % segments;
    let mut t = Vec::new();
    for s in 0..segments {
        t.push([0, at(1, s + 1), at(1, s)]);
        t.push([south, at(rings - 1, s), at(rings - 1, s + 1)]);
        for r in 1..rings - 1 {
            t.push([at(r, s), at(r, s + 1), at(r + 1, s + 1)]);
            t.push([at(r, s), at(r + 1, s + 1), at(r + 1, s)]);
        }
    }
    (v, t)
}

/// Contacts against a deforming, non-convex mesh agree with a brute force that shares nothing
/// with the collider code: a vertex is reported exactly when it is inside (ray parity) or
/// within range of the surface, with the signed distance of the nearest triangle.
#[test]
fn deforming_mesh_contacts_match_an_independent_brute_force() {
    let (rings, segments) = (14, 20);
    let frames: Vec<Vec<Vec3>> = (0..3)
        .map(|k| bumpy_sphere(rings, segments, 0.8 * k as f64).0)
        .collect();
    let (_, t) = bumpy_sphere(rings, segments, 0.0);
    let c = Collider {
        shape: Shape::Mesh {
            vertices: frames[0].clone(),
            triangles: t.clone(),
        },
        thickness: 0.003,
        motion: Motion::MeshSequence {
            frames: frames.clone(),
            fps: 10.0,
            start: 0.0,
        },
        ..Collider::default()
    };
    let mut set = ColliderSet::new(vec![c]).unwrap();
    let (cloth_thickness, margin) = (0.004, 0.02);
    let range = cloth_thickness + 0.003 + margin;
    let mut rng = Lcg(11);
    let mut counts = [0usize; 3]; // inside, near outside, far outside
    for time in [0.0, 0.07, 0.15] {
        set.update(time);
        // Interpolated vertices, as the collider holds them at this time.
        let (k, s) = ((time * 10.0) as usize, time * 10.0 - (time * 10.0).floor());
        let v: Vec<Vec3> = frames[k]
            .iter()
            .zip(&frames[k + 1])
            .map(|(a, b)| a + (b - a) * s)
            .collect();
        // Points spread over the body's neighbourhood, half of them close to its surface.
        let x: Vec<Vec3> = (0..3000)
            .map(|i| {
                if i % 2 == 0 {
                    rng.vec(-0.75, 0.75)
                } else {
                    let p = v[(rng.next() * v.len() as f64) as usize % v.len()];
                    p + rng.vec(-0.04, 0.04)
                }
            })
            .collect();
        let mut got = Vec::new();
        set.vertex_contacts(&x, cloth_thickness, margin, &mut got);
        let mut next = got.iter().peekable();
        for (i, p) in x.iter().enumerate() {
            let dist = t
                .iter()
                .map(|tri| point_triangle_distance(p, &v[tri[0]], &v[tri[1]], &v[tri[2]]))
                .fold(f64::INFINITY, f64::min);
            let inside = inside_by_parity(p, &v, &t);
            let signed = if inside { -dist } else { dist };
            let want = signed < range;
            let have = next.peek().is_some_and(|c| c.vertex == i);
            assert_eq!(have, want, "point {i} {p:?}: signed distance {signed}");
            counts[if inside {
                0
            } else if dist < range {
                1
            } else {
                2
            }] += 1;
            if have {
                let c = next.next().unwrap();
                assert!(
                    (c.distance - signed).abs() < 1e-9,
                    "point {i}: {} against {signed}",
                    c.distance
                );
            }
        }
    }
    // Every case was exercised.
    assert!(counts.iter().all(|&n| n > 100), "{counts:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    /// Every sharp feature of the scene (box and cube-mesh corners, capsule tips, cylinder
    /// rims) against a crumpled sheet: a feature gets a contact exactly when some cloth
    /// triangle comes within its range, and the triangle reported is a nearest one, both by
    /// this test's own point-triangle distance over every triangle.
    #[test]
    fn feature_contacts_find_the_nearest_triangle_of_every_feature_in_range(
        seed in any::<u64>(),
        t in 0.0f64..2.0,
        margin in 0.0f64..0.1,
    ) {
        let mut set = scene();
        set.update(t);
        let mut rng = Lcg(seed);
        let (mut x, tris) = sheet(31, 2.4, 0.0);
        for p in &mut x {
            *p += rng.vec(-0.6, 0.6);
        }
        let h = 0.005;
        // With a range that reaches every triangle, every feature answers: the feature list.
        let mut all = Vec::new();
        set.feature_contacts(&tris, &x, h, 100.0, &mut all);
        prop_assert_eq!(all.len(), set.feature_count());
        let mut got = Vec::new();
        set.feature_contacts(&tris, &x, h, margin, &mut got);
        let mut reported = got.iter().peekable();
        let mut within = 0;
        for f in &all {
            let range = h + set.colliders()[f.collider].thickness + margin;
            let dist = |t: &[usize; 3]| {
                point_triangle_distance(&f.feature_point, &x[t[0]], &x[t[1]], &x[t[2]])
            };
            let nearest = tris.iter().map(dist).fold(f64::INFINITY, f64::min);
            let here = reported
                .next_if(|g| (g.collider, g.feature) == (f.collider, f.feature));
            if (nearest - range).abs() < 1e-9 {
                continue;
            }
            prop_assert_eq!(here.is_some(), nearest < range, "feature {:?}", f.feature_point);
            if let Some(g) = here {
                within += 1;
                prop_assert!((dist(&g.vertices) - nearest).abs() < 1e-12);
            }
        }
        prop_assert!(reported.next().is_none());
        // The draw means something when some features are in range and some are not.
        prop_assert!(within > 0 || margin < 0.02);
    }
}
