//! Cloth-cloth proximity, penalty forces and their Jacobians, intersection counts, and the
//! continuous check's broad phase against testing every feature pair.

mod common;

use cloth_collide::{
    Along, INNER_GAP, INNER_STIFFENING, ImpactKind, ProximityKind, SelfCcd, SelfCollision, Vec3,
    count_intersections, count_self_intersections, edge_edge_impact, vertex_triangle_impact,
};
use cloth_mesh::{GridPattern, grid};
use common::{Lcg, run_in_pool};
use nalgebra::{DMatrix, Matrix3};
use proptest::prelude::*;

const H: f64 = 0.005;

fn v(x: f64, y: f64, z: f64) -> Vec3 {
    Vec3::new(x, y, z)
}

#[test]
fn parallel_triangles_close_together_are_in_proximity() {
    // A small triangle 2 mm above the interior of a large one.
    let x = vec![
        v(0.0, 0.0, 0.0),
        v(0.0, 0.0, 1.0),
        v(1.0, 0.0, 0.0),
        v(0.2, 0.002, 0.2),
        v(0.2, 0.002, 0.4),
        v(0.4, 0.002, 0.2),
    ];
    let tris = [[0, 1, 2], [3, 4, 5]];
    let mut sc = SelfCollision::from_triangles(6, &tris, H, 100.0, 0.1).unwrap();
    sc.detect(&x);
    assert_eq!(sc.num_proximities(), 3);
    for (k, p) in sc.proximities().iter().enumerate() {
        assert_eq!(p.kind, ProximityKind::VertexTriangle);
        assert_eq!(p.vertices, [3 + k, 0, 1, 2]);
        assert!((p.distance - 0.002).abs() < 1e-12);
        assert!((p.normal - Vec3::y()).norm() < 1e-12);
    }
    // Penalty: pushes the upper triangle up, the lower one down; total force zero.
    let mut f = vec![Vec3::zeros(); 6];
    let mut entries = Vec::new();
    sc.penalty(&x, &[Vec3::zeros(); 6], &mut f, &mut entries);
    for (i, fi) in f.iter().enumerate() {
        assert!(
            if i < 3 { fi.y < 0.0 } else { fi.y > 0.0 },
            "vertex {i}: {fi:?}"
        );
    }
    let total: Vec3 = f.iter().sum();
    assert!(total.norm() < 1e-14);
    // Each upper vertex gets k (H - d), plus (m - 1) k (g_in - d) inside the inner gap g_in.
    let inner = (INNER_GAP * H - 0.002).max(0.0);
    let push = 100.0 * (H - 0.002) + (INNER_STIFFENING - 1.0) * 100.0 * inner;
    assert!((f[3].y - push).abs() < 1e-12);
    // Moved apart beyond the thickness: no force, no proximity.
    let far: Vec<Vec3> = x
        .iter()
        .enumerate()
        .map(|(i, p)| if i >= 3 { p + v(0.0, 0.01, 0.0) } else { *p })
        .collect();
    sc.detect(&far);
    assert_eq!(sc.num_proximities(), 0);
}

#[test]
fn adjacent_triangles_are_skipped() {
    // Two triangles sharing edge (0, 1), flat and then folded to 90 degrees.
    let flat = vec![
        v(0.0, 0.0, 0.0),
        v(1.0, 0.0, 0.0),
        v(0.5, 0.0, 0.5),
        v(0.5, 0.0, -0.5),
    ];
    let folded = vec![
        v(0.0, 0.0, 0.0),
        v(1.0, 0.0, 0.0),
        v(0.5, 0.0, 0.5),
        v(0.5, 0.5, 0.0),
    ];
    let tris = [[0, 1, 2], [1, 0, 3]];
    let mut sc = SelfCollision::from_triangles(4, &tris, H, 1.0, 0.0).unwrap();
    for x in [flat, folded] {
        sc.detect(&x);
        assert_eq!(sc.num_proximities(), 0);
    }
    // A whole flat grid has no proximity and no intersection.
    let mesh = grid(21, 21, 1.0, 1.0, GridPattern::Alternating).unwrap();
    let mut sc = SelfCollision::new(&mesh, H, 1.0, 0.0).unwrap();
    sc.detect(mesh.positions());
    assert_eq!(sc.num_proximities(), 0);
    assert_eq!(count_self_intersections(&mesh, mesh.positions()), 0);
}

#[test]
fn crossing_edges_give_one_edge_edge_proximity() {
    // Two vertical triangles whose horizontal edges cross 3 mm apart.
    let x = vec![
        v(-1.0, 0.0, 0.0),
        v(1.0, 0.0, 0.0),
        v(0.0, -1.0, 0.0),
        v(0.0, 0.003, -1.0),
        v(0.0, 0.003, 1.0),
        v(0.0, 1.0, 0.0),
    ];
    let mut sc = SelfCollision::from_triangles(6, &[[0, 1, 2], [3, 4, 5]], H, 1.0, 0.0).unwrap();
    sc.detect(&x);
    assert_eq!(sc.num_proximities(), 1);
    let p = sc.proximities()[0];
    assert_eq!(p.kind, ProximityKind::EdgeEdge);
    assert_eq!(p.vertices, [0, 1, 3, 4]);
    for (w, e) in p.weights.iter().zip([0.5, 0.5, -0.5, -0.5]) {
        assert!((w - e).abs() < 1e-15);
    }
    assert!(
        (p.normal + Vec3::y()).norm() < 1e-15,
        "from edge 2 to edge 1: -y"
    );
}

#[test]
fn crossing_triangles_count_one_intersection() {
    let x = vec![
        v(0.0, 0.0, 0.0),
        v(1.0, 0.0, 0.0),
        v(0.0, 0.0, 1.0),
        v(0.2, -0.5, 0.2),
        v(0.2, 0.5, 0.2),
        v(2.0, 0.0, 2.0),
    ];
    assert_eq!(count_intersections(&[[0, 1, 2], [3, 4, 5]], &x), 1);
    // Adjacent triangles folded through each other share vertices and are not counted.
    assert_eq!(count_intersections(&[[0, 1, 2], [0, 1, 4]], &x), 0);
}

/// Dense 3n x 3n Jacobians from the entries (i <= j blocks mirrored).
fn dense(
    n: usize,
    entries: &[(usize, usize, Matrix3<f64>, Matrix3<f64>)],
) -> (DMatrix<f64>, DMatrix<f64>) {
    let mut kx = DMatrix::zeros(3 * n, 3 * n);
    let mut kv = DMatrix::zeros(3 * n, 3 * n);
    for (i, j, dx, dv) in entries {
        assert!(i <= j);
        for (m, b) in [(&mut kx, dx), (&mut kv, dv)] {
            for r in 0..3 {
                for c in 0..3 {
                    m[(3 * i + r, 3 * j + c)] += b[(r, c)];
                    if i != j {
                        m[(3 * j + c, 3 * i + r)] += b[(r, c)];
                    }
                }
            }
        }
    }
    (kx, kv)
}

fn forces(sc: &SelfCollision, x: &[Vec3], vel: &[Vec3]) -> Vec<Vec3> {
    let mut f = vec![Vec3::zeros(); x.len()];
    sc.penalty(x, vel, &mut f, &mut Vec::new());
    f
}

/// Two random, nearly parallel sheets of 2 triangles each, 1-4 mm apart, in random orientation.
fn layered(seed: u64) -> (Vec<Vec3>, Vec<[usize; 3]>) {
    let mut rng = Lcg(seed);
    let mut x = Vec::new();
    for layer in 0..2 {
        for (a, b) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)] {
            let jitter = rng.vec(-0.1, 0.1);
            x.push(v(
                a * 0.1 + jitter.x * 0.1,
                0.001 + 0.003 * rng.next() * layer as f64,
                b * 0.1 + jitter.z * 0.1,
            ));
        }
    }
    let rot = nalgebra::Rotation3::from_euler_angles(
        rng.next() * 6.0,
        rng.next() * 6.0,
        rng.next() * 6.0,
    );
    (
        x.iter().map(|p| rot * p).collect(),
        vec![[0, 2, 1], [1, 2, 3], [4, 6, 5], [5, 6, 7]],
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn penalty_jacobians_match_finite_differences(seed in any::<u64>()) {
        let (x, tris) = layered(seed);
        let n = x.len();
        let mut sc = SelfCollision::from_triangles(n, &tris, H, 250.0, 0.7).unwrap();
        sc.detect(&x);
        prop_assume!(sc.num_proximities() > 0);
        let mut rng = Lcg(seed ^ 0xabcdef);
        let vel: Vec<Vec3> = (0..n).map(|_| rng.vec(-0.1, 0.1)).collect();
        let mut f = vec![Vec3::zeros(); n];
        let mut entries = Vec::new();
        sc.penalty(&x, &vel, &mut f, &mut entries);
        let (kx, kv) = dense(n, &entries);
        // Force = -gradient of the energy (central differences) and Jacobians by columns.
        let e = 1e-7;
        for j in 0..3 * n {
            let (vj, c) = (j / 3, j % 3);
            let mut xp = x.clone();
            let mut xm = x.clone();
            xp[vj][c] += e;
            xm[vj][c] -= e;
            let de = (sc.energy(&xp) - sc.energy(&xm)) / (2.0 * e);
            prop_assert!((de + (f[vj][c] - spring_free_damping(&sc, &x, &vel)[vj][c])).abs() < 1e-6 * (1.0 + de.abs()));
            let (fp, fm) = (forces(&sc, &xp, &vel), forces(&sc, &xm, &vel));
            let mut vp = vel.clone();
            let mut vm = vel.clone();
            vp[vj][c] += e;
            vm[vj][c] -= e;
            let (gp, gm) = (forces(&sc, &x, &vp), forces(&sc, &x, &vm));
            for i in 0..3 * n {
                let dx = (fp[i / 3][i % 3] - fm[i / 3][i % 3]) / (2.0 * e);
                let dv = (gp[i / 3][i % 3] - gm[i / 3][i % 3]) / (2.0 * e);
                prop_assert!((dx - kx[(i, j)]).abs() < 1e-5 * (1.0 + dx.abs()), "dfdx ({}, {}): {} vs {}", i, j, dx, kx[(i, j)]);
                prop_assert!((dv - kv[(i, j)]).abs() < 1e-5 * (1.0 + dv.abs()), "dfdv ({}, {}): {} vs {}", i, j, dv, kv[(i, j)]);
            }
        }
        // -df/dx and -df/dv are symmetric positive semidefinite.
        for m in [&kx, &kv] {
            prop_assert!((m - m.transpose()).amax() < 1e-12);
            let eig = (-m).symmetric_eigenvalues();
            prop_assert!(eig.min() > -1e-9 * (1.0 + eig.amax()));
        }
        // Momentum: internal forces sum to zero.
        prop_assert!(f.iter().sum::<Vec3>().norm() < 1e-10);
    }
}

/// The damping part of the force alone (penalty with x held, stiffness removed), so the energy
/// check compares the conservative part only.
fn spring_free_damping(sc: &SelfCollision, x: &[Vec3], vel: &[Vec3]) -> Vec<Vec3> {
    let zero = vec![Vec3::zeros(); x.len()];
    let with_v = forces(sc, x, vel);
    let without_v = forces(sc, x, &zero);
    with_v.iter().zip(&without_v).map(|(a, b)| a - b).collect()
}

#[test]
fn crumpled_sheet_deterministic_across_threads() {
    // A grid folded onto itself: the upper half mirrored 3 mm above the lower half.
    let mesh = grid(41, 41, 1.0, 1.0, GridPattern::Alternating).unwrap();
    let mut rng = Lcg(5);
    let x: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| {
            let y = if p.x > 0.0 { 0.003 } else { 0.0 } + 0.001 * rng.next();
            v(-p.x.abs(), y, p.z)
        })
        .collect();
    let run = || {
        let mut sc = SelfCollision::new(&mesh, H, 50.0, 0.1).unwrap();
        sc.detect(&x);
        let mut f = vec![Vec3::zeros(); x.len()];
        let mut entries = Vec::new();
        sc.penalty(&x, &vec![Vec3::zeros(); x.len()], &mut f, &mut entries);
        (
            sc.proximities().to_vec(),
            f,
            entries,
            count_self_intersections(&mesh, &x),
        )
    };
    let one = run_in_pool(1, run);
    assert!(one.0.len() > 100);
    assert_eq!(one, run_in_pool(2, run));
}

/// The upward push (N) on vertex 3, 2 cm above the middle of a large triangle `gap` (m) below.
fn push_at(gap: f64, stiffness: f64) -> f64 {
    let x = [
        v(0.0, 0.0, 0.0),
        v(0.0, 0.0, 1.0),
        v(1.0, 0.0, 0.0),
        v(0.2, gap, 0.2),
        v(0.2, gap, 0.6),
        v(0.6, gap, 0.2),
    ];
    let tris = [[0, 1, 2], [3, 4, 5]];
    let mut sc = SelfCollision::from_triangles(6, &tris, H, stiffness, 0.0).unwrap();
    sc.detect(&x);
    let mut f = vec![Vec3::zeros(); 6];
    sc.penalty(&x, &[Vec3::zeros(); 6], &mut f, &mut Vec::new());
    f[3].y
}

#[test]
fn pressed_layers_hold_half_the_thickness_under_a_load_that_closes_a_linear_spring() {
    // A load of k H per vertex would press the paper's linear spring to zero gap; the
    // stiffened spring balances it above half the thickness, found by bisecting the push.
    let k = 500.0;
    let load = k * H;
    let (mut lo, mut hi) = (1e-6, H);
    assert!(push_at(lo, k) > load && push_at(0.999 * H, k) < load);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if push_at(mid, k) > load {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    assert!(lo > 0.5 * H, "the layers balance {lo} m apart");
    // The push grows with the pressing: no gap holds a larger load farther apart.
    let pushes: Vec<f64> = (1..50).map(|i| push_at(H * i as f64 / 50.0, k)).collect();
    assert!(pushes.windows(2).all(|w| w[1] < w[0]), "{pushes:?}");
}

#[test]
fn bad_parameters_and_lengths() {
    let tris = [[0, 1, 2]];
    assert!(SelfCollision::from_triangles(3, &tris, 0.0, 1.0, 0.0).is_err());
    assert!(SelfCollision::from_triangles(3, &tris, H, -1.0, 0.0).is_err());
    assert!(SelfCollision::from_triangles(3, &tris, H, 1.0, f64::NAN).is_err());
    let e = SelfCollision::from_triangles(2, &tris, H, 1.0, 0.0).unwrap_err();
    assert!(e.to_string().contains("triangle 0"), "{e}");
    let mut sc = SelfCollision::from_triangles(3, &tris, H, 1.0, 0.0).unwrap();
    assert!(sc.try_detect(&[Vec3::zeros(); 2]).is_err());
}

/// A 9 x 9 grid (8 cm) crumpled by random displacements of about a cell, and a random motion
/// of about a cell: many feature pairs near each other and crossing paths.
fn crumpled_motion(seed: u64) -> (Vec<[usize; 3]>, Vec<Vec3>, Vec<Vec3>) {
    let mesh = grid(9, 9, 0.08, 0.08, GridPattern::Alternating).unwrap();
    let mut rng = Lcg(seed);
    let x0: Vec<Vec3> = (mesh.positions().iter())
        .map(|p| p + rng.vec(-0.01, 0.01))
        .collect();
    let x1: Vec<Vec3> = x0.iter().map(|p| p + rng.vec(-0.01, 0.01)).collect();
    (mesh.triangles().to_vec(), x0, x1)
}

/// The mesh's edges as sorted vertex pairs, each once, in ascending order (built here, not
/// taken from the library).
fn edges_of(tris: &[[usize; 3]]) -> Vec<[usize; 2]> {
    let mut e: Vec<[usize; 2]> = tris
        .iter()
        .flat_map(|t| [[t[0], t[1]], [t[1], t[2]], [t[2], t[0]]])
        .map(|[a, b]| [a.min(b), a.max(b)])
        .collect();
    e.sort_unstable();
    e.dedup();
    e
}

/// Every impact of the step, as (kind, features as sorted vertex lists, time), by testing
/// every vertex against every triangle and every edge against every edge that share no vertex
/// (no broad phase).
fn brute_force_impacts(
    tris: &[[usize; 3]],
    x0: &[Vec3],
    x1: &[Vec3],
    gap: f64,
) -> Vec<(bool, [usize; 4], f64)> {
    let m = |i: usize| [x0[i], x1[i]];
    let edges = edges_of(tris);
    let mut out = Vec::new();
    for v in 0..x0.len() {
        for t in tris.iter().filter(|t| !t.contains(&v)) {
            // Another layer unless a corner is an edge away from the vertex.
            let along = if t.iter().any(|&c| edges.contains(&[v.min(c), v.max(c)])) {
                Along::Adjacent
            } else {
                Along::Apart
            };
            let (a, b, c) = (m(t[0]), m(t[1]), m(t[2]));
            if let Some(s) = vertex_triangle_impact(m(v), a, b, c, gap, along) {
                let mut tri = *t;
                tri.sort_unstable();
                out.push((true, [v, tri[0], tri[1], tri[2]], s));
            }
        }
    }
    for (i, &[a, b]) in edges.iter().enumerate() {
        for &[c, d] in &edges[i + 1..] {
            if a == c || a == d || b == c || b == d {
                continue;
            }
            if let Some(s) = edge_edge_impact(m(a), m(b), m(c), m(d), gap) {
                out.push((false, [a, b, c, d], s));
            }
        }
    }
    out.sort_by(|p, q| p.0.cmp(&q.0).then(p.1.cmp(&q.1)));
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    /// The continuous check's broad phase (a hierarchy over swept triangle boxes, then swept
    /// edge boxes) drops no impact that testing every feature pair finds, and adds none.
    #[test]
    fn ccd_finds_exactly_the_impacts_of_every_feature_pair(seed in any::<u64>()) {
        let (tris, x0, x1) = crumpled_motion(seed);
        let gap = 0.0005;
        let mut ccd = SelfCcd::new(x0.len(), &tris).unwrap();
        let mut found = Vec::new();
        ccd.impacts(&x0, &x1, gap, &mut found).unwrap();
        let mut got: Vec<(bool, [usize; 4], f64)> = found
            .iter()
            .map(|i| {
                let vt = i.kind == ImpactKind::VertexTriangle;
                let mut v = i.vertices;
                if vt {
                    v[1..].sort_unstable();
                } else {
                    let (e, f) = ([v[0].min(v[1]), v[0].max(v[1])], [v[2].min(v[3]), v[2].max(v[3])]);
                    let (e, f) = if e < f { (e, f) } else { (f, e) };
                    v = [e[0], e[1], f[0], f[1]];
                }
                (vt, v, i.t)
            })
            .collect();
        got.sort_by(|p, q| p.0.cmp(&q.0).then(p.1.cmp(&q.1)));
        let want = brute_force_impacts(&tris, &x0, &x1, gap);
        prop_assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            prop_assert_eq!((g.0, g.1), (w.0, w.1));
            prop_assert!((g.2 - w.2).abs() <= 1e-12, "times {} and {}", g.2, w.2);
        }
    }
}

#[test]
fn the_crumpled_motion_has_impacts_of_both_kinds() {
    // The property above is not vacuous: the random crumpled steps do produce impacts.
    let (tris, x0, x1) = crumpled_motion(7);
    let want = brute_force_impacts(&tris, &x0, &x1, 0.0005);
    assert!(
        want.iter().any(|w| w.0) && want.iter().any(|w| !w.0),
        "{want:?}"
    );
}
