//! Definiteness treatments: Clamped is PSD, equals Exact when Exact is PSD; the analytic shear
//! clamp equals a numerical projection in deformation-gradient space; Projected is PSD.

use super::kernels::hinge;
use super::*;
use crate::bend::Bend;
use crate::condition::{Definiteness, ElementResponse, Kernel, blocks_to_dense, respond};
use crate::triangle::{Shear, Stretch, TriangleRest};
use nalgebra::{DMatrix, SMatrix};
use proptest::test_runner::Config;

/// `-dfdx` of one condition under `def` as a dense matrix.
fn stiffness<K: Kernel<M, S>, const M: usize, const S: usize>(
    k: &K,
    ks: [f64; M],
    kd: [f64; M],
    v: &[Vec3; S],
    def: Definiteness,
) -> DMatrix<f64> {
    let mut r = ElementResponse::zero();
    respond(k, &ks, &kd, v, def, &mut r);
    -blocks_to_dense(&r.dfdx)
}

fn min_eig(m: &DMatrix<f64>) -> f64 {
    m.clone().symmetric_eigen().eigenvalues.min()
}

fn cfg() -> Config {
    Config {
        cases: 128,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn clamped_is_psd_and_equals_exact_when_exact_is_psd(s in sample()) {
        let uv = s.rest_triangle();
        prop_assume!(uv.is_some());
        let uv = uv.unwrap();
        let rest = TriangleRest::new(uv).unwrap();
        let x = s.deform(&uv);
        let v = s.velocities::<3>();
        let (wu, wv) = rest.deformation(&x);
        let st = Stretch::new(&rest, wu, wv, [1.0, 1.0]);
        let sh = Shear::new(&rest, wu, wv);
        let checks: [(DMatrix<f64>, DMatrix<f64>); 2] = [
            (stiffness(&st, [2800.0, 4500.0], [0.3, 0.4], &v, Definiteness::Exact),
             stiffness(&st, [2800.0, 4500.0], [0.3, 0.4], &v, Definiteness::Clamped)),
            (stiffness(&sh, [194.0], [0.02], &v, Definiteness::Exact),
             stiffness(&sh, [194.0], [0.02], &v, Definiteness::Clamped)),
        ];
        for (exact, clamped) in &checks {
            let scale = exact.amax().max(clamped.amax());
            prop_assert!(min_eig(clamped) >= -1e-10 * scale, "clamped min eig {}", min_eig(clamped));
            prop_assert!((clamped - clamped.transpose()).amax() <= 1e-12 * scale);
            if min_eig(exact) >= 0.0 {
                prop_assert!((exact - clamped).amax() <= 1e-10 * scale);
            }
        }
        if let Some((hr, xh)) = hinge(&s) {
            let b = Bend::new(&hr, xh);
            let vh = s.velocities::<4>();
            let c = stiffness(&b, [1.0], [0.1], &vh, Definiteness::Clamped);
            prop_assert!(min_eig(&c) >= -1e-10 * c.amax());
            let p = stiffness(&b, [1.0], [0.1], &vh, Definiteness::Projected);
            prop_assert!(min_eig(&p) >= -1e-10 * p.amax());
        }
    }

    #[test]
    fn shear_clamp_is_the_projection_in_deformation_gradient_space(s in sample()) {
        let uv = s.rest_triangle();
        prop_assume!(uv.is_some());
        let uv = uv.unwrap();
        let rest = TriangleRest::new(uv).unwrap();
        let x = s.deform(&uv);
        let v = s.velocities::<3>();
        let (wu, wv) = rest.deformation(&x);
        let sh = Shear::new(&rest, wu, wv);
        let (k, kd) = (194.0, 0.02);
        let clamped = stiffness(&sh, [k], [kd], &v, Definiteness::Clamped);
        // Reference: build M_F = k a g g^T + mu sqrt(a) P numerically, project it with a
        // numerical eigen-decomposition, map back with B (x -> F).
        let c = sh.value()[0];
        let g = sh.gradient()[0];
        let cdot: f64 = (0..3).map(|a| g[a].dot(&v[a])).sum();
        let mu = k * c + kd * cdot;
        let gt = SMatrix::<f64, 6, 1>::from_fn(|r, _| if r < 3 { wv[r] } else { wu[r - 3] });
        let mut p = SMatrix::<f64, 6, 6>::zeros();
        for i in 0..3 { p[(i, i + 3)] = 1.0; p[(i + 3, i)] = 1.0; }
        let mf = gt * gt.transpose() * (k * rest.area) + p * (mu * rest.sqrt_area);
        let e = mf.symmetric_eigen();
        let proj = e.eigenvectors * SMatrix::<f64, 6, 6>::from_diagonal(&e.eigenvalues.map(|l| l.max(0.0))) * e.eigenvectors.transpose();
        let mut bm = SMatrix::<f64, 6, 9>::zeros();
        for a in 0..3 {
            for i in 0..3 {
                bm[(i, 3 * a + i)] = rest.alpha[a];
                bm[(3 + i, 3 * a + i)] = rest.beta[a];
            }
        }
        let reference = bm.transpose() * proj * bm;
        let diff = (DMatrix::from_column_slice(9, 9, reference.as_slice()) - &clamped).amax();
        prop_assert!(diff <= 1e-9 * clamped.amax().max(reference.amax()), "diff {diff}");
    }

    #[test]
    fn projected_is_psd_and_equals_exact_when_exact_is_psd(s in sample()) {
        let uv = s.rest_triangle();
        prop_assume!(uv.is_some());
        let uv = uv.unwrap();
        let rest = TriangleRest::new(uv).unwrap();
        let x = s.deform(&uv);
        let (wu, wv) = rest.deformation(&x);
        // Targets below the current stretch make the stretch Hessian PSD.
        let b = [0.5 * wu.norm(), 0.5 * wv.norm()];
        let st = Stretch::new(&rest, wu, wv, b);
        let z = [Vec3::zeros(); 3];
        let exact = stiffness(&st, [2800.0, 4500.0], [0.0; 2], &z, Definiteness::Exact);
        let proj = stiffness(&st, [2800.0, 4500.0], [0.0; 2], &z, Definiteness::Projected);
        let clamped = stiffness(&st, [2800.0, 4500.0], [0.0; 2], &z, Definiteness::Clamped);
        prop_assert!(min_eig(&exact) >= -1e-10 * exact.amax());
        prop_assert!((&exact - &proj).amax() <= 1e-9 * exact.amax());
        prop_assert!((&exact - &clamped).amax() <= 1e-12 * exact.amax());
        // Compressed: Projected is PSD and differs from Exact.
        let st = Stretch::new(&rest, wu, wv, [2.0 * wu.norm(), 2.0 * wv.norm()]);
        let exact = stiffness(&st, [2800.0, 4500.0], [0.0; 2], &z, Definiteness::Exact);
        let proj = stiffness(&st, [2800.0, 4500.0], [0.0; 2], &z, Definiteness::Projected);
        prop_assert!(min_eig(&exact) < -1e-6 * exact.amax());
        prop_assert!(min_eig(&proj) >= -1e-10 * proj.amax());
    }
}

#[test]
fn shear_clamped_equals_exact_when_unsheared_and_bend_at_rest() {
    let rest = TriangleRest::new([
        Vector2::new(0.0, 0.0),
        Vector2::new(0.1, 0.0),
        Vector2::new(0.03, 0.08),
    ])
    .unwrap();
    // Stretch u by 2%, v by 1%, no shear: w_u . w_v = 0, exact shear Hessian k g g^T is PSD.
    let x = [
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(0.102, 0.0, 0.0),
        Vec3::new(0.0306, 0.0, 0.0808),
    ];
    let (wu, wv) = rest.deformation(&x);
    assert!(wu.dot(&wv).abs() < 1e-15);
    let sh = Shear::new(&rest, wu, wv);
    let z = [Vec3::zeros(); 3];
    let exact = stiffness(&sh, [194.0], [0.0], &z, Definiteness::Exact);
    let clamped = stiffness(&sh, [194.0], [0.0], &z, Definiteness::Clamped);
    assert!((&exact - &clamped).amax() <= 1e-12 * exact.amax());
    let st = Stretch::new(&rest, wu, wv, [1.0, 1.0]);
    let exact = stiffness(&st, [2800.0, 4500.0], [0.0; 2], &z, Definiteness::Exact);
    let clamped = stiffness(&st, [2800.0, 4500.0], [0.0; 2], &z, Definiteness::Clamped);
    assert!(min_eig(&exact) >= -1e-10 * exact.amax());
    assert!((&exact - &clamped).amax() <= 1e-12 * exact.amax());
    // Bend at its rest angle with zero velocity: exact = Gauss-Newton = clamped.
    let hr = crate::bend::HingeRest {
        stiffness: 1e-3,
        rest_angle: 0.0,
        rest_edge_sq: 1.0,
    };
    let xh = [
        Vec3::zeros(),
        Vec3::x(),
        Vec3::new(0.3, 0.9, 0.4),
        Vec3::new(0.6, -0.8, 0.0),
    ];
    let hr = crate::bend::HingeRest {
        rest_angle: crate::bend::dihedral_angle(&xh),
        ..hr
    };
    let b = Bend::new(&hr, xh);
    let z4 = [Vec3::zeros(); 4];
    let exact = stiffness(&b, [1e-3], [1e-4], &z4, Definiteness::Exact);
    let clamped = stiffness(&b, [1e-3], [1e-4], &z4, Definiteness::Clamped);
    assert!((&exact - &clamped).amax() <= 1e-12 * exact.amax());
}
