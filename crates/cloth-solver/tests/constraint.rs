//! Constraint filters S_i (paper §5.1): projections with the documented ndof; constructor errors.

mod common;

use cloth_solver::{Constraint, Matrix3, SolverError, Vector3};
use common::{Rng, random_constraint};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// S is a symmetric orthogonal projection of rank ndof, filter(a) == S a, and
    /// filter + complement == identity.
    #[test]
    fn filter_is_orthogonal_projection(kind in 0usize..4, seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let c = random_constraint(&mut rng, kind);
        let s = c.matrix();
        prop_assert!((s - s.transpose()).amax() < 1e-15);
        prop_assert!((s * s - s).amax() < 1e-14);
        prop_assert!((s.trace() - c.ndof() as f64).abs() < 1e-14);
        let a = rng.vec3(5.0);
        // Rounding scales with |a| (up to 8.7 here): a few ulps of it.
        let tol = 1e-15 * (1.0 + a.norm()) * 8.0;
        prop_assert!((c.filter(&a) - s * a).amax() < tol);
        prop_assert!((c.filter(&a) + c.complement(&a) - a).amax() < tol);
        // Prohibited directions are removed.
        match c {
            Constraint::Plane { p } => prop_assert!(c.filter(&a).dot(&p).abs() < tol),
            Constraint::Line { p, q } => {
                prop_assert!(c.filter(&a).dot(&p).abs() < tol);
                prop_assert!(c.filter(&a).dot(&q).abs() < tol);
            }
            _ => {}
        }
        prop_assert!(c.validate(0).is_ok());
    }
}

#[test]
fn ndof_and_default() {
    assert_eq!(Constraint::default(), Constraint::Free);
    assert_eq!(Constraint::Free.ndof(), 3);
    assert_eq!(Constraint::plane(Vector3::x()).unwrap().ndof(), 2);
    assert_eq!(
        Constraint::line(Vector3::x(), Vector3::y()).unwrap().ndof(),
        1
    );
    assert_eq!(Constraint::Fixed.ndof(), 0);
    assert_eq!(Constraint::Fixed.matrix(), Matrix3::zeros());
    assert_eq!(Constraint::Free.matrix(), Matrix3::identity());
}

#[test]
fn constructors_normalise_and_orthogonalise() {
    let c = Constraint::plane(Vector3::new(0.0, 0.0, 5.0)).unwrap();
    assert_eq!(c, Constraint::Plane { p: Vector3::z() });
    let Constraint::Line { p, q } =
        Constraint::line(Vector3::new(2.0, 0.0, 0.0), Vector3::new(1.0, 3.0, 0.0)).unwrap()
    else {
        panic!("expected a line");
    };
    assert!((p - Vector3::x()).norm() < 1e-15);
    assert!((q - Vector3::y()).norm() < 1e-15);
}

#[test]
fn constructor_errors() {
    let zero = Vector3::zeros();
    let nan = Vector3::new(f64::NAN, 0.0, 0.0);
    let inf = Vector3::new(0.0, f64::INFINITY, 0.0);
    for bad in [zero, nan, inf] {
        assert!(matches!(
            Constraint::plane(bad),
            Err(SolverError::InvalidConstraint { .. })
        ));
        assert!(Constraint::line(bad, Vector3::x()).is_err());
        assert!(Constraint::line(Vector3::x(), bad).is_err());
    }
    assert!(matches!(
        Constraint::line(Vector3::x(), Vector3::new(-3.0, 0.0, 0.0)),
        Err(SolverError::InvalidConstraint {
            reason: "q is parallel to p",
            ..
        })
    ));
}

#[test]
fn validate_rejects_non_unit_and_non_orthogonal() {
    let c = Constraint::Plane {
        p: Vector3::new(0.0, 0.0, 2.0),
    };
    assert!(matches!(
        c.validate(7),
        Err(SolverError::InvalidConstraint { index: 7, .. })
    ));
    let c = Constraint::Line {
        p: Vector3::x(),
        q: Vector3::new(1.0, 1.0, 0.0).normalize(),
    };
    assert!(matches!(
        c.validate(3),
        Err(SolverError::InvalidConstraint { index: 3, .. })
    ));
}
