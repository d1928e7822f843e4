//! Property tests: topology is independent of labelling, discs are well shaped for any
//! resolution, and OBJ output reads back exactly for any grid and deformation.

mod common;

use cloth_mesh::{ClothMesh, GridPattern, Vec3, disc, grid, parse_obj, write_obj};
use common::{check_invariants, euler, min_angle_deg};
use proptest::prelude::*;

fn pattern() -> impl Strategy<Value = GridPattern> {
    prop_oneof![
        Just(GridPattern::Uniform),
        Just(GridPattern::Alternating),
        Just(GridPattern::Equilateral)
    ]
}

/// A deterministic permutation of 0..n from a seed (Fisher-Yates with an LCG).
fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    let mut s = seed | 1;
    for i in (1..n).rev() {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let j = ((s >> 33) as usize) % (i + 1);
        p.swap(i, j);
    }
    p
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// Relabelling vertices, reordering triangles and rotating each triangle's corners
    /// (which keeps its winding) gives the same mesh up to the relabelling.
    #[test]
    fn topology_is_invariant_under_relabelling(
        nx in 2usize..9, ny in 2usize..9, p in pattern(), seed in any::<u64>(), rot in any::<u64>()
    ) {
        let m = grid(nx, ny, 1.0, 0.8, p).unwrap();
        let n = m.num_vertices();
        let vperm = permutation(n, seed); // old -> new
        let tperm = permutation(m.num_triangles(), seed ^ 0x9e37_79b9_7f4a_7c15);
        let mut pos = vec![Vec3::zeros(); n];
        let mut rest = vec![m.vertex_rest().unwrap()[0]; n];
        for v in 0..n {
            pos[vperm[v]] = m.positions()[v];
            rest[vperm[v]] = m.vertex_rest().unwrap()[v];
        }
        let mut tris = vec![[0; 3]; m.num_triangles()];
        for (t, tri) in m.triangles().iter().enumerate() {
            let k = ((rot >> (t % 32)) % 3) as usize;
            let r = [tri[k], tri[(k + 1) % 3], tri[(k + 2) % 3]];
            tris[tperm[t]] = r.map(|v| vperm[v]);
        }
        let q = ClothMesh::new(pos, rest, tris).unwrap();
        check_invariants(&q);
        prop_assert_eq!(q.edges().len(), m.edges().len());
        prop_assert_eq!(q.hinges().len(), m.hinges().len());
        prop_assert_eq!(q.boundary_edges().len(), m.boundary_edges().len());
        prop_assert!((q.total_rest_area() - m.total_rest_area()).abs() < 1e-14);
        let mut mapped: Vec<(usize, usize)> = m
            .vertex_pairs()
            .iter()
            .map(|&(i, j)| (vperm[i].min(vperm[j]), vperm[i].max(vperm[j])))
            .collect();
        mapped.sort();
        prop_assert_eq!(q.vertex_pairs(), &mapped[..]);
        // Hinges map to hinges with the same opposite-vertex pair.
        let mut hm: Vec<[usize; 2]> = m.hinges().iter().map(|h| {
            let mut a = [vperm[h.v[2]], vperm[h.v[3]]];
            a.sort();
            a
        }).collect();
        let mut hq: Vec<[usize; 2]> = q.hinges().iter().map(|h| {
            let mut a = [h.v[2], h.v[3]];
            a.sort();
            a
        }).collect();
        hm.sort();
        hq.sort();
        prop_assert_eq!(hm, hq);
        let mm = m.vertex_masses(0.3).unwrap();
        let mq = q.vertex_masses(0.3).unwrap();
        for v in 0..n {
            prop_assert!((mm[v] - mq[vperm[v]]).abs() < 1e-15);
        }
    }

    #[test]
    fn discs_are_valid_and_well_shaped(r in 0.01f64..5.0, n in 1usize..16) {
        let m = disc(r, n).unwrap();
        check_invariants(&m);
        prop_assert_eq!(euler(&m), 1);
        prop_assert_eq!(m.boundary_edges().len(), 6 * n);
        for t in 0..m.num_triangles() {
            prop_assert!(min_angle_deg(&m, t) > 25.0);
        }
    }

    #[test]
    fn obj_round_trip_is_exact(
        nx in 2usize..8, ny in 2usize..8, p in pattern(), w in 0.01f64..3.0, h in 0.01f64..3.0,
        amp in -1.0f64..1.0, k in 0.1f64..20.0
    ) {
        let m = grid(nx, ny, w, h, p).unwrap();
        let x: Vec<Vec3> = m.positions().iter().map(|x| x + Vec3::new(0.0, amp * (k * x.x).sin(), 0.0)).collect();
        let mut out = Vec::new();
        write_obj(&mut out, &m, &x).unwrap();
        let back = parse_obj(std::str::from_utf8(&out).unwrap(), 1.0).unwrap();
        prop_assert_eq!(back.triangles(), m.triangles());
        prop_assert_eq!(back.positions(), &x[..]);
        prop_assert_eq!(back.vertex_rest().unwrap(), m.vertex_rest().unwrap());
        prop_assert_eq!(back.corner_rest(), m.corner_rest());
    }
}

#[test]
fn smallest_disc_angle_is_reported() {
    // Not a threshold test: documents the quality the stitching achieves (printed with
    // --nocapture), and checks it never degrades below the 25 degree contract.
    let mut worst = f64::INFINITY;
    for n in [1, 2, 4, 8, 16, 32] {
        let m = disc(1.0, n).unwrap();
        let a = (0..m.num_triangles())
            .map(|t| min_angle_deg(&m, t))
            .fold(f64::INFINITY, f64::min);
        println!("disc resolution {n}: min angle {a:.2} deg");
        worst = worst.min(a);
    }
    assert!(worst > 25.0);
}
