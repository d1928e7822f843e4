//! Finite-difference and invariance tests of stretch, shear and bend kernels and of the generic
//! condition routine (paper §4.1 and §4.5).

use super::*;
use crate::bend::{HingeRest, bend_condition};
use crate::condition::{Definiteness, ElementResponse, condition_response};
use crate::triangle::{TriangleRest, shear_condition, stretch_condition};
use proptest::test_runner::Config;

const TARGETS: [f64; 2] = [1.0, 0.97];

/// A random hinge: rest uv stencil and deformed world positions, from a sample.
pub(crate) fn hinge(s: &Sample) -> Option<(HingeRest, [Vec3; 4])> {
    let sc = s.scale();
    let l = 0.5 + 0.5 * s.pts[0].abs();
    let uv = [
        Vector2::new(0.0, 0.0),
        Vector2::new(l, 0.0),
        Vector2::new(
            0.5 * s.pts[1] * l + 0.5 * l,
            (0.3 + 0.7 * s.pts[2].abs()) * l,
        ),
        Vector2::new(
            0.5 * s.pts[3] * l + 0.5 * l,
            -(0.3 + 0.7 * s.pts[4].abs()) * l,
        ),
    ];
    let phi = s.f[0] * 8.0;
    let (c, sn) = (phi.cos(), phi.sin());
    let local = [
        Vec3::new(uv[0].x, uv[0].y, 0.0),
        Vec3::new(uv[1].x, uv[1].y, 0.0),
        Vec3::new(uv[2].x, uv[2].y, 0.0),
        Vec3::new(uv[3].x, uv[3].y * c, uv[3].y * sn),
    ];
    let r = s.rotation();
    let x: [Vec3; 4] = std::array::from_fn(|a| {
        r * (local[a] + Vec3::new(s.noise[3 * a], s.noise[3 * a + 1], s.noise[3 * a + 2]) * 0.5)
            * sc
    });
    let rest = HingeRest {
        stiffness: 1.0,
        rest_angle: 0.3 * s.f[1],
        rest_edge_sq: l * l * sc * sc,
    };
    let th = crate::bend::dihedral_angle(&x);
    (th.abs() < 3.0 && (th - rest.rest_angle).abs() < 3.0).then_some((rest, x))
}

fn cfg() -> Config {
    Config {
        cases: 96,
        ..Config::default()
    }
}

/// Checks a response at (x, v) against finite differences:
/// forces(v = 0) = -dE/dx, Exact dfdx(v = 0) = FD of forces, dfdv = FD in v of forces,
/// damping dfdx = FD of the damping force minus the omitted unsymmetric term, symmetry.
pub(crate) fn check_response<const M: usize, const S: usize>(
    c: impl Fn(&[Vec3; S]) -> Condition<M, S>,
    k: [f64; M],
    kd: [f64; M],
    x: &[Vec3; S],
    v: &[Vec3; S],
    eps: f64,
    tol: f64,
) -> Result<(), TestCaseError> {
    let zero = [Vec3::zeros(); S];
    let resp =
        |y: &[Vec3; S], w: &[Vec3; S]| condition_response(&c(y), k, kd, w, Definiteness::Exact);
    let r0 = resp(x, &zero);
    let energy = |y: &[Vec3; S]| resp(y, &zero).energy;
    let g = fd_gradient(energy, x, eps);
    let neg: [Vec3; S] = std::array::from_fn(|a| -g[a]);
    let fs = max_abs_vec(&r0.forces).max(max_abs_vec(&neg));
    prop_assert!(
        diff_vec(&neg, &r0.forces) <= tol * fs,
        "force vs -dE/dx: {neg:?} {:?}",
        r0.forces
    );
    let kfd = fd_jacobian(|y| resp(y, &zero).forces, x, eps);
    let ks = max_abs_blocks(&r0.dfdx).max(max_abs_blocks(&kfd));
    prop_assert!(diff_blocks(&kfd, &r0.dfdx) <= tol * ks, "dfdx vs FD");
    // Velocity Jacobian (forces are linear in v: FD is exact up to rounding).
    let r1 = resp(x, v);
    let vscale = max_abs_vec(v).max(1e-300);
    let dv = fd_jacobian(|w| resp(x, w).forces, v, 1e-3 * vscale);
    let ds = max_abs_blocks(&r1.dfdv).max(max_abs_blocks(&dv));
    prop_assert!(
        diff_blocks(&dv, &r1.dfdv) <= tol * ds + 1e-300,
        "dfdv vs FD"
    );
    // Damping position derivative: FD_x(d) = -kd sum_l [Cdot_l H_l + g_l (dCdot_l/dx)],
    // where dCdot_l/dx_b = sum_c H_l[c][b]^T v_c. The model keeps only the first (symmetric) part.
    let damping = |y: &[Vec3; S]| -> [Vec3; S] {
        let a = resp(y, v).forces;
        let b = resp(y, &zero).forces;
        std::array::from_fn(|i| a[i] - b[i])
    };
    let dfd = fd_jacobian(damping, x, eps);
    let c0 = c(x);
    let mut omitted = [[Matrix3::zeros(); S]; S];
    for l in 0..M {
        for b in 0..S {
            let mut dcd = Vec3::zeros();
            for cc in 0..S {
                dcd += c0.hessian[l][cc][b].transpose() * v[cc];
            }
            for a in 0..S {
                omitted[a][b] -= c0.gradient[l][a] * dcd.transpose() * kd[l];
            }
        }
    }
    let dkept: Blocks<S> =
        std::array::from_fn(|a| std::array::from_fn(|b| r1.dfdx[a][b] - r0.dfdx[a][b]));
    let total: Blocks<S> =
        std::array::from_fn(|a| std::array::from_fn(|b| dkept[a][b] + omitted[a][b]));
    let dsc = max_abs_blocks(&dfd).max(max_abs_blocks(&total)).max(1e-300);
    prop_assert!(
        diff_blocks(&dfd, &total) <= tol * dsc,
        "damping dfdx: kept + omitted vs FD"
    );
    for a in 0..S {
        for b in 0..S {
            prop_assert!((r1.dfdx[a][b] - r1.dfdx[b][a].transpose()).amax() <= 1e-12 * ks.max(dsc));
            prop_assert!(
                (r1.dfdv[a][b] - r1.dfdv[b][a].transpose()).amax() <= 1e-12 * ds.max(1e-300)
            );
        }
    }
    Ok(())
}

/// Net force and net torque of internal forces vanish; energy and forces are rigid-motion
/// invariant / covariant.
pub(crate) fn check_invariants<const S: usize>(
    resp: impl Fn(&[Vec3; S], &[Vec3; S]) -> ElementResponse<S>,
    x: &[Vec3; S],
    v: &[Vec3; S],
    rot: &Rotation3<f64>,
) -> Result<(), TestCaseError> {
    let r = resp(x, v);
    let fs = max_abs_vec(&r.forces).max(1e-300);
    let size = x.iter().map(|p| (p - x[0]).norm()).fold(0.0, f64::max);
    let net: Vec3 = r.forces.iter().sum();
    let torque: Vec3 = x
        .iter()
        .zip(&r.forces)
        .map(|(p, f)| (p - x[0]).cross(f))
        .sum();
    prop_assert!(net.amax() <= 1e-9 * fs, "net force {net:?}");
    prop_assert!(torque.amax() <= 1e-9 * fs * size, "net torque {torque:?}");
    let t = Vec3::new(0.7, -1.1, 2.3) * size;
    let xr: [Vec3; S] = std::array::from_fn(|a| rot * x[a] + t);
    let vr: [Vec3; S] = std::array::from_fn(|a| rot * v[a]);
    let rr = resp(&xr, &vr);
    prop_assert!((rr.energy - r.energy).abs() <= 1e-9 * r.energy.abs().max(1e-300));
    let fr: [Vec3; S] = std::array::from_fn(|a| rot * r.forces[a]);
    prop_assert!(diff_vec(&fr, &rr.forces) <= 1e-7 * fs);
    Ok(())
}

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn stretch_gradient_and_hessian_match_fd(s in sample()) {
        let uv = s.rest_triangle();
        prop_assume!(uv.is_some());
        let uv = uv.unwrap();
        let rest = TriangleRest::new(uv).unwrap();
        let x = s.deform(&uv);
        check_condition(|y| stretch_condition(&rest, y, TARGETS), &x, 1e-6 * s.scale(), 1e-5)?;
    }

    #[test]
    fn shear_gradient_and_hessian_match_fd(s in sample()) {
        let uv = s.rest_triangle();
        prop_assume!(uv.is_some());
        let uv = uv.unwrap();
        let rest = TriangleRest::new(uv).unwrap();
        let x = s.deform(&uv);
        check_condition(|y| shear_condition(&rest, y), &x, 1e-6 * s.scale(), 1e-5)?;
    }

    #[test]
    fn bend_gradient_and_hessian_match_fd(s in sample()) {
        let h = hinge(&s);
        prop_assume!(h.is_some());
        let (rest, x) = h.unwrap();
        check_condition(|y| bend_condition(&rest, y), &x, 1e-6 * s.scale(), 1e-5)?;
    }

    #[test]
    fn stretch_response_matches_fd(s in sample()) {
        let uv = s.rest_triangle();
        prop_assume!(uv.is_some());
        let uv = uv.unwrap();
        let rest = TriangleRest::new(uv).unwrap();
        let x = s.deform(&uv);
        let v = s.velocities::<3>();
        check_response(|y| stretch_condition(&rest, y, TARGETS), [2800.0, 4500.0], [0.3, 0.5], &x, &v, 1e-6 * s.scale(), 1e-5)?;
    }

    #[test]
    fn shear_response_matches_fd(s in sample()) {
        let uv = s.rest_triangle();
        prop_assume!(uv.is_some());
        let uv = uv.unwrap();
        let rest = TriangleRest::new(uv).unwrap();
        let x = s.deform(&uv);
        let v = s.velocities::<3>();
        check_response(|y| shear_condition(&rest, y), [194.0], [0.02], &x, &v, 1e-6 * s.scale(), 1e-5)?;
    }

    #[test]
    fn bend_response_matches_fd(s in sample()) {
        let h = hinge(&s);
        prop_assume!(h.is_some());
        let (rest, x) = h.unwrap();
        let v = s.velocities::<4>();
        check_response(|y| bend_condition(&rest, y), [1e-3], [1e-4], &x, &v, 1e-6 * s.scale(), 1e-5)?;
    }

    #[test]
    fn triangle_forces_have_zero_net_force_and_torque_and_are_rigid_invariant(s in sample()) {
        let uv = s.rest_triangle();
        prop_assume!(uv.is_some());
        let uv = uv.unwrap();
        let rest = TriangleRest::new(uv).unwrap();
        let x = s.deform(&uv);
        let v = s.velocities::<3>();
        let resp = |y: &[Vec3; 3], w: &[Vec3; 3]| {
            let mut r = condition_response(&stretch_condition(&rest, y, TARGETS), [2800.0, 4500.0], [0.3, 0.5], w, Definiteness::Exact);
            let sh = condition_response(&shear_condition(&rest, y), [194.0], [0.02], w, Definiteness::Exact);
            r.energy += sh.energy;
            for a in 0..3 { r.forces[a] += sh.forces[a]; }
            r
        };
        check_invariants(resp, &x, &v, &Rotation3::new(Vec3::new(0.4, -1.3, 0.9)))?;
    }

    #[test]
    fn bend_forces_have_zero_net_force_and_torque_and_are_rigid_invariant(s in sample()) {
        let h = hinge(&s);
        prop_assume!(h.is_some());
        let (rest, x) = h.unwrap();
        let v = s.velocities::<4>();
        let resp = |y: &[Vec3; 4], w: &[Vec3; 4]| condition_response(&bend_condition(&rest, y), [1e-3], [1e-4], w, Definiteness::Exact);
        check_invariants(resp, &x, &v, &Rotation3::new(Vec3::new(-0.4, 2.3, 0.9)))?;
    }

    #[test]
    fn rest_state_has_zero_energy_and_force(s in sample()) {
        let uv = s.rest_triangle();
        prop_assume!(uv.is_some());
        let uv = uv.unwrap();
        let rest = TriangleRest::new(uv).unwrap();
        // Rigidly placed rest triangle.
        let r = s.rotation();
        let x: [Vec3; 3] = std::array::from_fn(|a| r * Vec3::new(uv[a].x, uv[a].y, 0.0));
        let z = [Vec3::zeros(); 3];
        let st = condition_response(&stretch_condition(&rest, &x, [1.0, 1.0]), [2800.0, 4500.0], [0.3, 0.5], &z, Definiteness::Exact);
        let sh = condition_response(&shear_condition(&rest, &x), [194.0], [0.02], &z, Definiteness::Exact);
        let fs = 2800.0 * s.scale();
        prop_assert!(st.energy <= 1e-20 * fs * s.scale() && sh.energy <= 1e-20 * fs * s.scale());
        prop_assert!(max_abs_vec(&st.forces) <= 1e-10 * fs && max_abs_vec(&sh.forces) <= 1e-10 * fs);
        // A flat hinge at its (zero) rest angle.
        let hr = HingeRest { stiffness: 1.0, rest_angle: 0.0, rest_edge_sq: 1.0 };
        let xh = [Vec3::new(0.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0), Vec3::new(0.4, 0.8, 0.0), Vec3::new(0.6, -0.7, 0.0)]
            .map(|p| r * p * s.scale());
        let b = condition_response(&bend_condition(&hr, &xh), [1.0], [0.1], &[Vec3::zeros(); 4], Definiteness::Exact);
        prop_assert!(b.energy.abs() <= 1e-24 && max_abs_vec(&b.forces) <= 1e-10 / s.scale());
    }
}

#[test]
fn degenerate_rest_triangles_are_rejected() {
    let p = |x: f64, y: f64| Vector2::new(x, y);
    assert!(TriangleRest::new([p(0.0, 0.0), p(1.0, 0.0), p(2.0, 0.0)]).is_none());
    assert!(TriangleRest::new([p(0.0, 0.0), p(0.0, 0.0), p(0.0, 0.0)]).is_none());
    assert!(TriangleRest::new([p(0.0, 0.0), p(1.0, 0.0), p(0.5, f64::NAN)]).is_none());
    assert!(TriangleRest::new([p(0.0, 0.0), p(1.0, 0.0), p(0.5, 1e-15)]).is_none());
    // Either winding: the same area and the same stretch.
    let ccw = TriangleRest::new([p(0.0, 0.0), p(1.0, 0.0), p(0.0, 2.0)]).unwrap();
    let cw = TriangleRest::new([p(0.0, 0.0), p(0.0, 2.0), p(1.0, 0.0)]).unwrap();
    assert_eq!(ccw.area, 1.0);
    assert_eq!(cw.area, 1.0);
    let x = [
        Vec3::zeros(),
        Vec3::new(1.1, 0.0, 0.0),
        Vec3::new(0.0, 0.0, 2.0),
    ];
    let (wu, wv) = ccw.deformation(&x);
    assert!(
        (wu - Vec3::new(1.1, 0.0, 0.0)).norm() < 1e-15
            && (wv - Vec3::new(0.0, 0.0, 1.0)).norm() < 1e-15
    );
}
