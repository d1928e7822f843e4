//! Known folds: sign and value of the dihedral angle, finite forces and Hessians near +-180 deg.

use super::*;
use crate::bend::{HingeRest, bend_condition, dihedral_angle};
use crate::condition::{Definiteness, condition_response};

/// Hinge with edge (0,0,0)-(1,0,0), wing x2 = (0.5, 1, 0) (normal n1 = +z), and wing x3 rotated
/// by `phi` about the edge away from n1 (phi > 0 moves x3 to -z).
fn folded(phi: f64) -> [Vec3; 4] {
    [
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(0.5, 1.0, 0.0),
        Vec3::new(0.5, -phi.cos(), -phi.sin()),
    ]
}

#[test]
fn dihedral_angle_of_known_folds() {
    for deg in [0.0, 30.0, 90.0, -90.0, 135.0, -135.0, 179.9, -179.9] {
        let phi = f64::to_radians(deg);
        let th = dihedral_angle(&folded(phi));
        assert!((th - phi).abs() < 1e-12, "fold {deg}: theta {th}");
    }
    // Positive theta: the wings lie on the side opposite to the normals (the surface curves away
    // from its normal).
    let x = folded(0.5);
    let n1 = (x[1] - x[0]).cross(&(x[2] - x[0]));
    assert!(n1.z > 0.0 && x[3].z < 0.0 && dihedral_angle(&x) > 0.0);
}

#[test]
fn bend_is_finite_and_consistent_near_180_degrees() {
    let rest = HingeRest {
        stiffness: 2.0,
        rest_angle: 0.0,
        rest_edge_sq: 1.0,
    };
    for deg in [179.9, -179.9, 179.999, -179.999] {
        let x = folded(f64::to_radians(deg));
        let c = bend_condition(&rest, &x);
        assert!(c.value[0].is_finite());
        assert!(
            c.gradient[0]
                .iter()
                .all(|g| g.iter().all(|v| v.is_finite()))
        );
        assert!(
            c.hessian[0]
                .iter()
                .flatten()
                .all(|m| m.iter().all(|v| v.is_finite()))
        );
        let r = condition_response(
            &c,
            [2.0],
            [0.1],
            &[Vec3::new(0.0, 0.0, 1.0); 4],
            Definiteness::Exact,
        );
        assert!(r.forces.iter().all(|f| f.iter().all(|v| v.is_finite())));
        assert!(
            r.dfdx
                .iter()
                .flatten()
                .all(|m| m.iter().all(|v| v.is_finite()))
        );
        // The gradient of a folded-flat hinge is still the analytic one (FD away from the wrap).
        let g = fd_gradient(|y| bend_condition(&rest, y).value[0], &x, 1e-7);
        assert!(
            diff_vec(&g, &c.gradient[0]) < 1e-6 * max_abs_vec(&c.gradient[0]),
            "{deg}"
        );
    }
    // A rest angle near 180 degrees: the condition wraps (shortest way round).
    let near = HingeRest {
        stiffness: 1.0,
        rest_angle: f64::to_radians(179.0),
        rest_edge_sq: 1.0,
    };
    let c = bend_condition(&near, &folded(f64::to_radians(-179.0)));
    assert!(
        (c.value[0] - f64::to_radians(2.0)).abs() < 1e-9,
        "{}",
        c.value[0]
    );
}

#[test]
fn slightly_degenerate_and_collapsed_hinges_stay_finite() {
    let rest = HingeRest {
        stiffness: 1.0,
        rest_angle: 0.0,
        rest_edge_sq: 1.0,
    };
    let cases = [
        // x2 almost on the edge line.
        [
            Vec3::zeros(),
            Vec3::x(),
            Vec3::new(0.5, 1e-9, 0.0),
            Vec3::new(0.5, -1.0, 0.1),
        ],
        // x2 exactly on the edge line.
        [
            Vec3::zeros(),
            Vec3::x(),
            Vec3::new(0.5, 0.0, 0.0),
            Vec3::new(0.5, -1.0, 0.1),
        ],
        // collapsed edge.
        [
            Vec3::zeros(),
            Vec3::zeros(),
            Vec3::new(0.5, 1.0, 0.0),
            Vec3::new(0.5, -1.0, 0.1),
        ],
        // everything at one point.
        [Vec3::zeros(); 4],
    ];
    for x in cases {
        let c = bend_condition(&rest, &x);
        let r = condition_response(&c, [1.0], [0.1], &[Vec3::x(); 4], Definiteness::Exact);
        assert!(c.value[0].is_finite());
        assert!(
            r.forces.iter().all(|f| f.iter().all(|v| v.is_finite())),
            "{x:?}"
        );
        assert!(
            r.dfdx
                .iter()
                .flatten()
                .all(|m| m.iter().all(|v| v.is_finite())),
            "{x:?}"
        );
    }
}
