//! Shared invariant checks for the integration tests.
#![allow(dead_code)]

use cloth_mesh::{ClothMesh, NO_TRIANGLE, Vec2};

/// Signed area of a rest triangle (m^2).
pub fn rest_signed_area(m: &ClothMesh, t: usize) -> f64 {
    let r: [Vec2; 3] = m.triangle_rest(t);
    let (d1, d2) = (r[1] - r[0], r[2] - r[0]);
    0.5 * (d1.x * d2.y - d1.y * d2.x)
}

/// Smallest interior angle (degrees) of a rest triangle.
pub fn min_angle_deg(m: &ClothMesh, t: usize) -> f64 {
    let r = m.triangle_rest(t);
    (0..3)
        .map(|k| {
            let p = r[k];
            let a = r[(k + 1) % 3] - p;
            let b = r[(k + 2) % 3] - p;
            (a.dot(&b) / (a.norm() * b.norm()))
                .clamp(-1.0, 1.0)
                .acos()
                .to_degrees()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Does triangle `tri` traverse the directed edge a -> b, and with which opposite vertex?
pub fn opposite_if_directed(tri: [usize; 3], a: usize, b: usize) -> Option<usize> {
    (0..3).find_map(|k| (tri[k] == a && tri[(k + 1) % 3] == b).then_some(tri[(k + 2) % 3]))
}

/// Checks every topological invariant that holds for any valid mesh, by brute force
/// recomputation from the triangle list. Panics (test failure) with a message on violation.
pub fn check_invariants(m: &ClothMesh) {
    let n = m.num_vertices();
    let tris = m.triangles();
    // Brute-force undirected edges with their triangles.
    let mut brute: std::collections::BTreeMap<(usize, usize), Vec<usize>> = Default::default();
    for (t, tri) in tris.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            brute.entry((a.min(b), a.max(b))).or_default().push(t);
        }
    }
    let edges = m.edges();
    assert_eq!(edges.len(), brute.len(), "edge count");
    for (e, ((a, b), ts)) in edges.iter().zip(&brute) {
        assert_eq!(e.v, [*a, *b], "edges sorted by (v0, v1), v0 < v1");
        let mut want = ts.clone();
        want.sort();
        if want.len() == 1 {
            assert_eq!(e.tris, [want[0], NO_TRIANGLE]);
            assert!(e.is_boundary());
        } else {
            assert_eq!(e.tris.to_vec(), want);
        }
    }
    // Boundary edges.
    let boundary: Vec<usize> = (0..edges.len())
        .filter(|&i| edges[i].tris[1] == NO_TRIANGLE)
        .collect();
    assert_eq!(m.boundary_edges(), &boundary[..]);
    // Hinges: one per interior edge, in edge order, with the winding convention.
    let interior: Vec<usize> = (0..edges.len())
        .filter(|&i| edges[i].tris[1] != NO_TRIANGLE)
        .collect();
    assert_eq!(
        m.hinges().len(),
        interior.len(),
        "hinge count = interior edges"
    );
    for (h, &ei) in m.hinges().iter().zip(&interior) {
        assert_eq!(h.edge, ei);
        assert_eq!(h.tris, edges[ei].tris);
        let [v0, v1, v2, v3] = h.v;
        let mut ev = [v0, v1];
        ev.sort();
        assert_eq!(ev, edges[ei].v);
        assert_eq!(
            opposite_if_directed(tris[h.tris[0]], v0, v1),
            Some(v2),
            "tris[0] winds (v0, v1, v2)"
        );
        assert_eq!(
            opposite_if_directed(tris[h.tris[1]], v1, v0),
            Some(v3),
            "tris[1] winds (v1, v0, v3)"
        );
    }
    // Vertex pairs: sorted, unique, i < j, exactly edges + hinge (v2, v3).
    let pairs = m.vertex_pairs();
    assert!(
        pairs.windows(2).all(|w| w[0] < w[1]),
        "pairs sorted and unique"
    );
    assert!(pairs.iter().all(|&(i, j)| i < j && j < n));
    let mut want: Vec<(usize, usize)> = brute.keys().copied().collect();
    for h in m.hinges() {
        want.push((h.v[2].min(h.v[3]), h.v[2].max(h.v[3])));
    }
    want.sort();
    want.dedup();
    assert_eq!(pairs, &want[..]);
    for e in edges {
        assert_eq!(m.edge_index(e.v[1], e.v[0]).map(|i| edges[i].v), Some(e.v));
    }
    // Vertex -> triangles.
    for v in 0..n {
        let want: Vec<usize> = (0..tris.len()).filter(|&t| tris[t].contains(&v)).collect();
        assert_eq!(m.vertex_triangles(v), &want[..], "vertex_triangles({v})");
        assert!(!want.is_empty());
    }
    assert!(m.vertex_triangles(n).is_empty());
    // Rest data.
    let mut total = 0.0;
    for t in 0..tris.len() {
        let a = rest_signed_area(m, t);
        assert!(a > 0.0);
        assert!((m.rest_area(t) - a).abs() <= 1e-14 * a.abs().max(1.0));
        total += m.rest_area(t);
        let r = m.triangle_rest(t);
        let d = cloth_mesh::nalgebra::Matrix2::from_columns(&[r[1] - r[0], r[2] - r[0]]);
        let id = d * m.rest_basis_inverse(t);
        assert!(
            (id - cloth_mesh::nalgebra::Matrix2::identity()).norm() < 1e-9,
            "rest basis inverse of {t}"
        );
    }
    assert!((m.total_rest_area() - total).abs() <= 1e-12 * total);
}

/// Euler characteristic V - E + F.
pub fn euler(m: &ClothMesh) -> i64 {
    m.num_vertices() as i64 - m.edges().len() as i64 + m.num_triangles() as i64
}
