//! Shape-operator bend kernel: finite differences (angle gradients and Hessians through the
//! generic condition checks, forces and Jacobians through the §4.1/§4.5 response), rigid
//! invariance, definiteness of the Clamped treatment, and the flap-pair folding.

use super::kernels::{check_invariants, check_response};
use super::*;
use crate::condition::{Definiteness, ElementResponse, Kernel, blocks_to_dense, respond};
use crate::shape::{Shape, ShapeRest, drop_flap_pairs, flap_matrix, midedge_map, shape_condition};
use nalgebra::DMatrix;
use proptest::test_runner::Config;

/// A random shape element: a rest triangle with flaps (ghost-like reflections moved by
/// noise; edge i is a boundary edge when `s.f[3 + i] > 0.3`, at most two), a curvature map
/// perturbed from the midedge one, random anisotropy and rest angles; and deformed world
/// positions of the 6 stencil points.
fn element(s: &Sample) -> Option<(ShapeRest, [Vec3; 6])> {
    let p = s.rest_triangle()?;
    let sc = s.scale();
    let mut uv = [Vector2::zeros(); 6];
    uv[..3].copy_from_slice(&p);
    let mut q = [None; 3];
    for i in 0..3 {
        let (a, b) = (p[(i + 1) % 3], p[(i + 2) % 3]);
        let t = (b - a).normalize();
        let r = p[i] - a;
        let mirror = a + t * (2.0 * r.dot(&t)) - r;
        let jitter = Vector2::new(s.pts[6 + (i % 2)], s.noise[i]) * (0.3 * sc);
        uv[3 + i] = mirror + jitter;
        q[i] = Some(uv[3 + i]);
    }
    let mut flaps = [true; 3];
    for i in 0..2 {
        if s.f[3 + i] > 0.3 {
            flaps[i] = false;
            q[i] = None;
            uv[3 + i] = p[i];
        }
    }
    let j = flap_matrix(p, q)?;
    let m = midedge_map(p) + Matrix3::from_fn(|r, c| s.vel[3 * r + c]) * (0.3 / sc);
    let mut rest = ShapeRest::from_map(p, q, flaps, &m, [1.0 + s.f[5], 1.0 - s.f[4]])?;
    for i in 0..3 {
        rest.rest_angles[i] = 0.4 * s.f[i];
    }
    // The curvature map's conditioning is irrelevant here; J only checks the flaps are valid.
    let _ = j;
    let x = s.deform(&uv);
    // Keep angles away from the +-pi wrap (where the condition is discontinuous by design).
    let k = Shape::new(&rest, &x);
    let ok = (0..3).all(|i| {
        !flaps[i] || {
            let xs: [Vec3; 4] = std::array::from_fn(|a| x[crate::shape::hinge_slot(i, a)]);
            crate::bend::dihedral_angle(&xs).abs() < 2.5
        }
    });
    let _ = k.value();
    ok.then_some((rest, x))
}

fn cfg() -> Config {
    Config {
        cases: 96,
        ..Config::default()
    }
}

/// `-dfdx` of one shape element under `def` as a dense matrix.
fn stiffness(rest: &ShapeRest, x: &[Vec3; 6], v: &[Vec3; 6], def: Definiteness) -> DMatrix<f64> {
    let mut r = ElementResponse::zero();
    respond(&Shape::new(rest, x), &[1e-3; 3], &[1e-4; 3], v, def, &mut r);
    -blocks_to_dense(&r.dfdx)
}

fn min_eig(m: &DMatrix<f64>) -> f64 {
    m.clone().symmetric_eigen().eigenvalues.min()
}

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn shape_gradient_and_hessian_match_fd(s in sample()) {
        let e = element(&s);
        prop_assume!(e.is_some());
        let (rest, x) = e.unwrap();
        check_condition(|y| shape_condition(&rest, y), &x, 1e-6 * s.scale(), 1e-5)?;
    }

    #[test]
    fn shape_response_matches_fd(s in sample()) {
        let e = element(&s);
        prop_assume!(e.is_some());
        let (rest, x) = e.unwrap();
        let v = s.velocities::<6>();
        check_response(|y| shape_condition(&rest, y), [1e-3; 3], [1e-4; 3], &x, &v, 1e-6 * s.scale(), 1e-5)?;
    }

    #[test]
    fn shape_forces_have_zero_net_force_and_torque_and_are_rigid_invariant(s in sample()) {
        let e = element(&s);
        prop_assume!(e.is_some());
        let (rest, x) = e.unwrap();
        let v = s.velocities::<6>();
        let resp = |y: &[Vec3; 6], w: &[Vec3; 6]| {
            crate::condition::condition_response(&shape_condition(&rest, y), [1e-3; 3], [1e-4; 3], w, Definiteness::Exact)
        };
        check_invariants(resp, &x, &v, &Rotation3::new(Vec3::new(0.3, 1.7, -0.8)))?;
    }

    /// Gauss-Newton with the flap-flap blocks folded is PSD, no smaller than Gauss-Newton
    /// (`K_clamped - K_gn` PSD), has zero flap-flap blocks, and equals Exact at rest with zero
    /// velocity once folded the same way. Projected is PSD.
    #[test]
    fn shape_clamped_is_psd_and_bounds_gauss_newton(s in sample()) {
        let e = element(&s);
        prop_assume!(e.is_some());
        let (rest, x) = e.unwrap();
        let v = s.velocities::<6>();
        let k = Shape::new(&rest, &x);
        let mut gn = [[Matrix3::zeros(); 6]; 6];
        k.add_clamped(&[1e-3; 3], &[0.0; 3], &mut gn);
        let mut folded = gn;
        drop_flap_pairs(&mut folded, &rest.flap_bary);
        let (g, f) = (blocks_to_dense(&gn), blocks_to_dense(&folded));
        let scale = g.amax().max(1e-300);
        prop_assert!(min_eig(&f) >= -1e-10 * scale, "folded min eig {}", min_eig(&f));
        prop_assert!(min_eig(&(&f - &g)) >= -1e-10 * scale, "folded - gn min eig {}", min_eig(&(&f - &g)));
        for (a, b) in [(3, 4), (3, 5), (4, 5)] {
            prop_assert!(folded[a][b].amax() == 0.0 && folded[b][a].amax() == 0.0);
        }
        let p = stiffness(&rest, &x, &v, Definiteness::Projected);
        prop_assert!(min_eig(&p) >= -1e-10 * p.amax().max(1e-300));
        let c = stiffness(&rest, &x, &v, Definiteness::Clamped);
        prop_assert!((&c - &g).amax() <= 1e-12 * scale);
        // Rigid translations cost nothing, before and after folding: a uniform velocity
        // change meets no stiffness (a sheet in free fall feels no drag from bending).
        for k in 0..3 {
            let t = nalgebra::DVector::from_fn(18, |r, _| if r % 3 == k { 1.0 } else { 0.0 });
            prop_assert!((&g * &t).amax() <= 1e-10 * scale, "GN moves a translation");
            prop_assert!((&f * &t).amax() <= 1e-10 * scale, "folded matrix resists translation {k}");
        }
    }
}

/// Flaps of triangle `p`: each vertex mirrored across its opposite edge, plus `jitter[i]`;
/// returns the flaps and the stencil's six rest points.
fn mirrored_flaps(
    p: [Vector2<f64>; 3],
    jitter: [Vector2<f64>; 3],
) -> ([Option<Vector2<f64>>; 3], [Vector2<f64>; 6]) {
    let mut q = [None; 3];
    let mut uv = [Vector2::zeros(); 6];
    uv[..3].copy_from_slice(&p);
    for i in 0..3 {
        let (a, b) = (p[(i + 1) % 3], p[(i + 2) % 3]);
        let t = (b - a).normalize();
        let r = p[i] - a;
        uv[3 + i] = a + t * (2.0 * r.dot(&t)) - r + jitter[i];
        q[i] = Some(uv[3 + i]);
    }
    (q, uv)
}

/// At the rest angles with zero velocity the exact element matrix is Gauss-Newton (PSD).
#[test]
fn shape_exact_equals_gauss_newton_at_rest() {
    let p = [
        Vector2::new(0.0, 0.0),
        Vector2::new(0.1, 0.0),
        Vector2::new(0.04, 0.09),
    ];
    let (q, uv) = mirrored_flaps(p, [Vector2::new(0.01, -0.005); 3]);
    assert!(flap_matrix(p, q).is_some());
    let mut rest = ShapeRest::from_map(p, q, [true; 3], &midedge_map(p), [1.0, 1.0]).unwrap();
    // Fold the flaps out of plane and take that as the rest shape.
    let x: [Vec3; 6] = std::array::from_fn(|a| {
        let z = if a >= 3 { 0.02 * (a as f64 - 3.5) } else { 0.0 };
        Vec3::new(uv[a].x, z, uv[a].y)
    });
    for i in 0..3 {
        let xs: [Vec3; 4] = std::array::from_fn(|a| x[crate::shape::hinge_slot(i, a)]);
        rest.rest_angles[i] = crate::bend::dihedral_angle(&xs);
    }
    let z = [Vec3::zeros(); 6];
    let exact = stiffness(&rest, &x, &z, Definiteness::Exact);
    let k = Shape::new(&rest, &x);
    assert!(k.value().iter().all(|c| c.abs() < 1e-12));
    let mut gn = [[Matrix3::zeros(); 6]; 6];
    k.add_clamped(&[1e-3; 3], &[0.0; 3], &mut gn);
    let gn = blocks_to_dense(&gn);
    assert!((&exact - &gn).amax() <= 1e-12 * gn.amax());
    assert!(min_eig(&exact) >= -1e-10 * exact.amax());
}

/// Folded (`Clamped`) on a flat element with irregular flaps: blind to every infinitesimal
/// rigid motion, rotations included (the flaps are folded relative to the triangle's plane,
/// see `drop_flap_pairs`; folded relative to the opposite vertex, the matrix resisted
/// out-of-plane rotations and over-stiffened smooth bending modes without bound under
/// refinement, `tests/implicit_matrix.rs`).
#[test]
fn folded_matrix_is_blind_to_rigid_rotations_of_a_flat_element() {
    let p = [
        Vector2::new(0.0, 0.0),
        Vector2::new(0.1, 0.0),
        Vector2::new(0.04, 0.09),
    ];
    let (q, uv) = mirrored_flaps(
        p,
        [
            Vector2::new(0.013, -0.006),
            Vector2::new(-0.02, 0.011),
            Vector2::new(0.004, 0.017),
        ],
    );
    let rest = ShapeRest::from_map(p, q, [true; 3], &midedge_map(p), [1.3, 0.8]).unwrap();
    let x: [Vec3; 6] = std::array::from_fn(|a| Vec3::new(uv[a].x, 0.0, uv[a].y));
    let k = Shape::new(&rest, &x);
    let mut m = [[Matrix3::zeros(); 6]; 6];
    k.add_clamped(&[1e-3, 2e-3, 0.5e-3], &[0.0; 3], &mut m);
    drop_flap_pairs(&mut m, &rest.flap_bary);
    let folded = blocks_to_dense(&m);
    let scale = folded.amax();
    assert!(scale > 0.0);
    let centre = x.iter().sum::<Vec3>() / 6.0;
    for axis in [Vec3::x(), Vec3::y(), Vec3::z()] {
        let w = nalgebra::DVector::from_iterator(
            18,
            x.iter().flat_map(|p| {
                let v = axis.cross(&(p - centre));
                [v.x, v.y, v.z]
            }),
        );
        let r = (&folded * &w).amax();
        assert!(
            r <= 1e-10 * scale,
            "rotation about {axis:?} meets {r:e} (scale {scale:e})"
        );
    }
}
