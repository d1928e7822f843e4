//! Grid and disc builders: counts, areas, shapes, conventions, topology invariants.

mod common;

use cloth_mesh::{GridPattern, Vec3, disc, equilateral_height, grid};
use common::{check_invariants, euler, min_angle_deg, rest_signed_area};
use proptest::prelude::*;

const PATTERNS: [GridPattern; 3] = [
    GridPattern::Uniform,
    GridPattern::Alternating,
    GridPattern::Equilateral,
];

#[test]
fn paper_sheet_analogue_has_2601_vertices_and_5000_triangles() {
    for p in [GridPattern::Uniform, GridPattern::Alternating] {
        let m = grid(51, 51, 1.0, 1.0, p).unwrap();
        assert_eq!(m.num_vertices(), 2601);
        assert_eq!(m.num_triangles(), 5000);
        assert_eq!(euler(&m), 1);
        assert_eq!(m.boundary_edges().len(), 200);
        assert_eq!(m.hinges().len(), m.edges().len() - 200);
    }
}

#[test]
fn default_pattern_is_alternating() {
    assert_eq!(GridPattern::default(), GridPattern::Alternating);
}

#[test]
fn grid_layout_follows_the_xz_convention() {
    let (w, h) = (2.0, 0.5);
    for p in PATTERNS {
        let m = grid(5, 4, w, h, p).unwrap();
        for (x, r) in m.positions().iter().zip(m.vertex_rest().unwrap()) {
            assert!(r.x >= 0.0 && r.x <= w && r.y >= 0.0 && r.y <= h);
            assert_eq!(*x, Vec3::new(r.x - w / 2.0, 0.0, r.y - h / 2.0));
        }
        // Corners present exactly.
        for c in [(0.0, 0.0), (w, 0.0), (0.0, h), (w, h)] {
            assert!(
                m.vertex_rest()
                    .unwrap()
                    .iter()
                    .any(|r| r.x == c.0 && r.y == c.1),
                "{p:?} corner {c:?}"
            );
        }
        // Normals of a flat CCW-(u,v) sheet point along -y.
        for nrm in m.vertex_normals(m.positions()) {
            assert!((nrm - Vec3::new(0.0, -1.0, 0.0)).norm() < 1e-12);
        }
        assert!((m.total_rest_area() - w * h).abs() < 1e-12);
    }
}

#[test]
fn uniform_and_alternating_diagonals() {
    // In a 3x3 lattice quad (0,0) has corners 0,1,4,3. Uniform splits along 0-4 everywhere;
    // Alternating splits quad (1,0) (corners 1,2,5,4) along 2-4 instead of 1-5.
    let u = grid(3, 3, 1.0, 1.0, GridPattern::Uniform).unwrap();
    let a = grid(3, 3, 1.0, 1.0, GridPattern::Alternating).unwrap();
    assert!(u.edge_index(0, 4).is_some() && a.edge_index(0, 4).is_some());
    assert!(u.edge_index(1, 5).is_some() && u.edge_index(2, 4).is_none());
    assert!(a.edge_index(2, 4).is_some() && a.edge_index(1, 5).is_none());
}

#[test]
fn equilateral_grid_counts_outline_and_shape() {
    let (nx, ny) = (11, 9);
    let w = 1.0;
    let h = equilateral_height(w, nx, ny);
    let m = grid(nx, ny, w, h, GridPattern::Equilateral).unwrap();
    check_invariants(&m);
    assert_eq!(m.num_vertices(), nx * ny.div_ceil(2) + (nx + 1) * (ny / 2));
    assert_eq!(m.num_triangles(), (ny - 1) * (2 * nx - 1));
    assert_eq!(euler(&m), 1);
    assert!((m.total_rest_area() - w * h).abs() < 1e-12);
    // Outline is the rectangle: every boundary edge lies on one of its four sides.
    let r = m.vertex_rest().unwrap();
    for &e in m.boundary_edges() {
        let [a, b] = m.edges()[e].v;
        let on = |f: &dyn Fn(usize) -> bool| f(a) && f(b);
        assert!(
            on(&|v| r[v].x == 0.0)
                || on(&|v| r[v].x == w)
                || on(&|v| r[v].y == 0.0)
                || on(&|v| r[v].y == h),
            "boundary edge {a}-{b} off the rectangle"
        );
    }
    // Interior (not boundary-touching) triangles are equilateral; the half triangles at the
    // sides are 30-60-90.
    let mut equilateral = 0;
    for t in 0..m.num_triangles() {
        let ang = min_angle_deg(&m, t);
        assert!(ang > 29.999, "triangle {t} min angle {ang}");
        if (ang - 60.0).abs() < 1e-6 {
            equilateral += 1;
        }
    }
    assert_eq!(equilateral, (ny - 1) * (2 * nx - 3));
}

#[test]
fn disc_counts_area_and_quality() {
    let r = 0.7;
    for n in 1..=12usize {
        let m = disc(r, n).unwrap();
        check_invariants(&m);
        assert_eq!(m.num_vertices(), 1 + 3 * n * (n + 1));
        assert_eq!(m.num_triangles(), 6 * n * n);
        assert_eq!(euler(&m), 1);
        assert_eq!(m.boundary_edges().len(), 6 * n);
        // Exactly the inscribed 6n-gon.
        let poly = 3.0 * n as f64 * r * r * (std::f64::consts::PI / (3.0 * n as f64)).sin();
        assert!((m.total_rest_area() - poly).abs() < 1e-12, "n={n}");
        // And close to pi r^2: the 6n-gon deficit is about (2 pi / 6n)^2 / 6 relative.
        let rel = (m.total_rest_area() / (std::f64::consts::PI * r * r) - 1.0).abs();
        assert!(rel < 1.1 * (2.0 * std::f64::consts::PI / (6 * n) as f64).powi(2) / 6.0);
        for t in 0..m.num_triangles() {
            assert!(
                min_angle_deg(&m, t) > 25.0,
                "n={n} triangle {t}: {}",
                min_angle_deg(&m, t)
            );
        }
        for (x, u) in m.positions().iter().zip(m.vertex_rest().unwrap()) {
            assert_eq!(x.y, 0.0);
            assert!((u.x - (x.x + r)).abs() < 1e-15 && (u.y - (x.z + r)).abs() < 1e-15);
            assert!(x.norm() <= r * (1.0 + 1e-15));
        }
    }
}

#[test]
fn masses_sum_to_density_times_area_and_are_lumped() {
    let m = grid(7, 5, 1.3, 0.8, GridPattern::Equilateral).unwrap();
    let rho = 0.324;
    let masses = m.vertex_masses(rho).unwrap();
    let total: f64 = masses.iter().sum();
    assert!((total - rho * m.total_rest_area()).abs() < 1e-14);
    for (v, &mv) in masses.iter().enumerate() {
        let want: f64 = m
            .vertex_triangles(v)
            .iter()
            .map(|&t| rho * m.rest_area(t) / 3.0)
            .sum();
        assert!((mv - want).abs() < 1e-15 && mv > 0.0);
    }
    assert!(m.vertex_masses(0.0).unwrap().iter().all(|&x| x == 0.0));
}

#[test]
fn transform_rotates_then_translates() {
    let mut m = disc(0.5, 4).unwrap();
    let before = m.positions().to_vec();
    let rot = cloth_mesh::nalgebra::Rotation3::from_axis_angle(
        &Vec3::x_axis(),
        std::f64::consts::FRAC_PI_2,
    );
    let tr = Vec3::new(0.0, 2.0, 0.0);
    m.transform(&rot, &tr);
    for (a, b) in before.iter().zip(m.positions()) {
        assert!((rot * a + tr - b).norm() < 1e-15);
    }
    // Edge lengths preserved, normals rotated: -y about +x by 90 degrees becomes -z.
    for e in m.edges() {
        let l0 = (before[e.v[0]] - before[e.v[1]]).norm();
        let l1 = (m.positions()[e.v[0]] - m.positions()[e.v[1]]).norm();
        assert!((l0 - l1).abs() < 1e-14);
    }
    for nrm in m.vertex_normals(m.positions()) {
        assert!((nrm - Vec3::new(0.0, 0.0, -1.0)).norm() < 1e-12);
    }
}

#[test]
fn vertex_normals_are_area_weighted_and_zero_safe() {
    let mut m = grid(2, 2, 1.0, 1.0, GridPattern::Uniform).unwrap();
    // Triangles [0,1,3] and [0,3,2]; lift vertex 2 so that triangle 1 tilts.
    let mut p = m.positions().to_vec();
    p[2].y = 1.0;
    m.set_positions(p.clone()).unwrap();
    let n = m.vertex_normals(&p);
    let f0 = (p[1] - p[0]).cross(&(p[3] - p[0]));
    let f1 = (p[3] - p[0]).cross(&(p[2] - p[0]));
    assert!((n[0] - (f0 + f1).normalize()).norm() < 1e-15);
    assert!((n[1] - f0.normalize()).norm() < 1e-15);
    assert!((n[2] - f1.normalize()).norm() < 1e-15);
    // All vertices collapsed to a point: no triangle has an area, every normal is +y.
    let zero = vec![Vec3::zeros(); 4];
    assert!(m.vertex_normals(&zero).iter().all(|v| *v == Vec3::y()));
    // Short or non-finite input never yields NaN.
    let short = &p[..2];
    assert!(m.vertex_normals(short).iter().all(|v| *v == Vec3::y()));
    let nan = vec![Vec3::new(f64::NAN, 0.0, 0.0); 4];
    assert!(m.vertex_normals(&nan).iter().all(|v| *v == Vec3::y()));
}

fn pattern() -> impl Strategy<Value = GridPattern> {
    prop_oneof![
        Just(GridPattern::Uniform),
        Just(GridPattern::Alternating),
        Just(GridPattern::Equilateral)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn grid_topology_invariants(nx in 2usize..14, ny in 2usize..14, w in 0.01f64..10.0, h in 0.01f64..10.0, p in pattern()) {
        let m = grid(nx, ny, w, h, p).unwrap();
        check_invariants(&m);
        prop_assert_eq!(euler(&m), 1);
        prop_assert!((m.total_rest_area() - w * h).abs() <= 1e-12 * w * h);
        let interior = m.edges().iter().filter(|e| !e.is_boundary()).count();
        prop_assert_eq!(m.hinges().len(), interior);
        match p {
            GridPattern::Equilateral => {
                prop_assert_eq!(m.num_vertices(), nx * ny.div_ceil(2) + (nx + 1) * (ny / 2));
                prop_assert_eq!(m.num_triangles(), (ny - 1) * (2 * nx - 1));
                // bottom row nx-1, top row nx-1 (even) or nx (odd), plus the sides
                let top = if (ny - 1) % 2 == 0 { nx - 1 } else { nx };
                prop_assert_eq!(m.boundary_edges().len(), nx - 1 + top + 2 * (ny - 1));
            }
            _ => {
                prop_assert_eq!(m.num_vertices(), nx * ny);
                prop_assert_eq!(m.num_triangles(), 2 * (nx - 1) * (ny - 1));
                prop_assert_eq!(m.boundary_edges().len(), 2 * (nx - 1) + 2 * (ny - 1));
            }
        }
        for t in 0..m.num_triangles() {
            prop_assert!(rest_signed_area(&m, t) > 0.0);
        }
        let rho = 0.2;
        let total: f64 = m.vertex_masses(rho).unwrap().iter().sum();
        prop_assert!((total - rho * w * h).abs() <= 1e-12 * rho * w * h);
    }
}
