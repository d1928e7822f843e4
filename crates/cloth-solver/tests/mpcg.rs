//! Modified PCG and direct solve: agreement, exact constraints, constraint forces, errors.
#![allow(clippy::needless_range_loop)] // index loops over several parallel arrays read clearer

mod common;

use cloth_solver::Par;
use cloth_solver::{
    BlockMatrix, Constraint, DirectSolver, Matrix3, PcgParams, PcgWorkspace, Preconditioner,
    SolverError, System, Vector3, constraint_forces, solve_direct, solve_mpcg,
};
use common::{norm, random_system, to_flat};
use proptest::prelude::*;

fn tight(preconditioner: Preconditioner, n: usize) -> PcgParams {
    PcgParams {
        tolerance: 1e-12,
        max_iterations: 20 * 3 * n + 50,
        preconditioner,
    }
}

/// Dense reference of the pre-filtered system, solved with nalgebra's dense Cholesky.
fn dense_reference(sys: &common::System) -> Vec<Vector3<f64>> {
    let n = sys.n;
    let a = sys.a.to_dense();
    let mut s = nalgebra::DMatrix::zeros(3 * n, 3 * n);
    for (i, c) in sys.constraints.iter().enumerate() {
        s.fixed_view_mut::<3, 3>(3 * i, 3 * i)
            .copy_from(&c.matrix());
    }
    let id = nalgebra::DMatrix::identity(3 * n, 3 * n);
    let m = &s * &a * &s + (&id - &s);
    let z = to_flat(&sys.z);
    let rhs = &s * (to_flat(&sys.b) - &a * &z);
    let y = m.cholesky().expect("SPD").solve(&rhs);
    let dv = z + &s * y;
    (0..n)
        .map(|i| Vector3::new(dv[3 * i], dv[3 * i + 1], dv[3 * i + 2]))
        .collect()
}

fn rel_diff(a: &[Vector3<f64>], b: &[Vector3<f64>]) -> f64 {
    let d: Vec<Vector3<f64>> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    norm(&d) / norm(b).max(1e-300)
}

/// The first particle whose constrained components of `dv` differ from z's beyond rounding,
/// with that difference.
fn constrained_drift(sys: &common::System, dv: &[Vector3<f64>]) -> Option<(usize, f64)> {
    (0..sys.n).find_map(|i| {
        let off = sys.constraints[i].complement(&(dv[i] - sys.z[i])).norm();
        (off > 1e-13 * (1.0 + sys.z[i].norm() + dv[i].norm())).then_some((i, off))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// MPCG (both preconditioners) matches the direct solution; constrained components equal
    /// z to rounding; constraint forces vanish along free directions.
    #[test]
    fn mpcg_matches_direct_and_enforces_constraints(
        n in 2usize..40, elems in 0usize..80, k_max in 0.1f64..50.0,
        frac in 0.0f64..0.8, seed in any::<u64>(), block in any::<bool>()
    ) {
        let sys = random_system(n, elems, k_max, frac, seed);
        let mut direct = vec![Vector3::zeros(); n];
        solve_direct(&mut direct, &sys.a, &sys.b, &sys.z, &sys.constraints).unwrap();
        let pre = if block { Preconditioner::BlockJacobi } else { Preconditioner::Diagonal };
        let mut dv = vec![Vector3::new(9.0, 9.0, 9.0); n];
        let mut ws = PcgWorkspace::new();
        let info = solve_mpcg(&mut dv, &System::new(&sys.a, &sys.b, &sys.z, &sys.constraints), &tight(pre, n), Par::default(), &mut ws).unwrap();
        prop_assert!(info.converged, "{info:?}");
        prop_assert!(info.relative_residual <= 1e-12);
        prop_assert!(rel_diff(&dv, &direct) <= 1e-7, "rel diff {}", rel_diff(&dv, &direct));
        if let Some((i, off)) = constrained_drift(&sys, &dv) {
            prop_assert!(false, "particle {i}: constrained drift {off}");
        }
        for i in 0..n {
            if sys.constraints[i] == Constraint::Fixed {
                prop_assert_eq!(dv[i], sys.z[i]);
            }
        }
        // Constraint forces: S e ~ 0 relative to the size of the right-hand side.
        let mut e = vec![Vector3::zeros(); n];
        constraint_forces(&sys.a, &dv, &sys.b, &mut e);
        let mut az = vec![Vector3::zeros(); n];
        sys.a.mul_vec(&sys.z, &mut az);
        let scale = norm(&sys.b) + norm(&az);
        let se: Vec<Vector3<f64>> =
            e.iter().zip(&sys.constraints).map(|(ei, c)| c.filter(ei)).collect();
        prop_assert!(norm(&se) <= 1e-8 * scale, "|S e| = {} scale {}", norm(&se), scale);
    }

    /// A warm start (`System::starting_from`) reaches the same solution from anywhere, keeps
    /// the constrained components at z whatever the start holds there, and from the solution
    /// itself stops at once (its residual is measured against the cold start's).
    #[test]
    fn a_warm_start_reaches_the_same_solution(
        n in 2usize..40, elems in 0usize..80, frac in 0.0f64..0.8, seed in any::<u64>(),
        block in any::<bool>(), spread in 0.0f64..10.0
    ) {
        let sys = random_system(n, elems, 10.0, frac, seed);
        let mut direct = vec![Vector3::zeros(); n];
        solve_direct(&mut direct, &sys.a, &sys.b, &sys.z, &sys.constraints).unwrap();
        let pre = if block { Preconditioner::BlockJacobi } else { Preconditioner::Diagonal };
        let cold = System::new(&sys.a, &sys.b, &sys.z, &sys.constraints);
        let mut rng = common::Rng::new(seed ^ 0x5eed);
        let start: Vec<Vector3<f64>> = direct.iter().map(|d| d + rng.vec3(spread)).collect();
        let mut dv = vec![Vector3::zeros(); n];
        let mut ws = PcgWorkspace::new();
        let info = solve_mpcg(&mut dv, &cold.starting_from(&start), &tight(pre, n), Par::default(), &mut ws).unwrap();
        prop_assert!(info.converged, "{info:?}");
        prop_assert!(rel_diff(&dv, &direct) <= 1e-7, "rel diff {}", rel_diff(&dv, &direct));
        if let Some((i, off)) = constrained_drift(&sys, &dv) {
            prop_assert!(false, "particle {i}: constrained drift {off}");
        }
        let loose = PcgParams { tolerance: 1e-6, ..tight(pre, n) };
        let info = solve_mpcg(&mut dv, &cold.starting_from(&direct), &loose, Par::default(), &mut ws).unwrap();
        prop_assert_eq!(info.iterations, 0, "{:?}", info);
    }

    /// The faer direct solve agrees with a dense Cholesky of the same projected system.
    #[test]
    fn direct_matches_dense_reference(
        n in 2usize..25, elems in 0usize..40, frac in 0.0f64..0.8, seed in any::<u64>()
    ) {
        let sys = random_system(n, elems, 10.0, frac, seed);
        let mut dv = vec![Vector3::zeros(); n];
        solve_direct(&mut dv, &sys.a, &sys.b, &sys.z, &sys.constraints).unwrap();
        let reference = dense_reference(&sys);
        prop_assert!(rel_diff(&dv, &reference) <= 1e-10);
    }

    /// Known solution: with no constraints, b = A x is solved back to x.
    #[test]
    fn recovers_known_solution_unconstrained(n in 2usize..40, elems in 0usize..60, seed in any::<u64>()) {
        let mut sys = random_system(n, elems, 10.0, 0.0, seed);
        let x: Vec<Vector3<f64>> = sys.z.clone();
        sys.a.mul_vec(&x, &mut sys.b);
        let zero = vec![Vector3::zeros(); n];
        for pre in [Preconditioner::Diagonal, Preconditioner::BlockJacobi] {
            let mut dv = vec![Vector3::zeros(); n];
            let info = solve_mpcg(&mut dv, &System::new(&sys.a, &sys.b, &zero, &sys.constraints), &tight(pre, n), Par::default(), &mut PcgWorkspace::new()).unwrap();
            prop_assert!(info.converged);
            prop_assert!(rel_diff(&dv, &x) <= 1e-8);
        }
    }
}

/// Two-particle indefinite matrix [[I, 2I], [2I, I]] (eigenvalues 3 and -1).
fn indefinite() -> BlockMatrix {
    let mut a = BlockMatrix::new(2, &[(0, 1)]).unwrap();
    a.add_diagonal(0, &Matrix3::identity());
    a.add_diagonal(1, &Matrix3::identity());
    a.add_block(0, 1, &(Matrix3::identity() * 2.0)).unwrap();
    a
}

#[test]
fn indefinite_matrix_reports_not_positive_definite() {
    let a = indefinite();
    let b = [Vector3::x(), -Vector3::x()];
    let z = [Vector3::zeros(); 2];
    let free = [Constraint::Free; 2];
    for pre in [Preconditioner::Diagonal, Preconditioner::BlockJacobi] {
        let mut dv = [Vector3::new(1.5, 2.5, 3.5); 2];
        let params = PcgParams {
            preconditioner: pre,
            tolerance: 1e-10,
            ..Default::default()
        };
        match solve_mpcg(
            &mut dv,
            &System::new(&a, &b, &z, &free),
            &params,
            Par::default(),
            &mut PcgWorkspace::new(),
        ) {
            Err(SolverError::NotPositiveDefinite {
                iteration,
                curvature,
            }) => {
                assert_eq!(iteration, 1);
                assert!(curvature < 0.0);
            }
            other => panic!("expected NotPositiveDefinite, got {other:?}"),
        }
        // Output untouched: no NaN leaks out.
        assert_eq!(dv, [Vector3::new(1.5, 2.5, 3.5); 2]);
    }
    let mut dv = [Vector3::zeros(); 2];
    assert!(matches!(
        solve_direct(&mut dv, &a, &b, &z, &free),
        Err(SolverError::Factorization { .. })
    ));
}

#[test]
fn indefinite_only_in_constrained_directions_still_solves() {
    // Fixing particle 1 leaves the free subspace {particle 0}, where A = I: SPD there.
    let a = indefinite();
    let b = [Vector3::new(1.0, 2.0, 3.0), Vector3::zeros()];
    let z = [Vector3::zeros(), Vector3::new(0.5, 0.0, 0.0)];
    let cons = [Constraint::Free, Constraint::Fixed];
    let mut dv = [Vector3::zeros(); 2];
    let params = PcgParams {
        tolerance: 1e-12,
        ..Default::default()
    };
    let info = solve_mpcg(
        &mut dv,
        &System::new(&a, &b, &z, &cons),
        &params,
        Par::default(),
        &mut PcgWorkspace::new(),
    )
    .unwrap();
    assert!(info.converged);
    // dv0 = b0 - 2 z1.
    assert!((dv[0] - Vector3::new(0.0, 2.0, 3.0)).norm() < 1e-12);
    assert_eq!(dv[1], z[1]);
    let mut d2 = [Vector3::zeros(); 2];
    solve_direct(&mut d2, &a, &b, &z, &cons).unwrap();
    assert!((d2[0] - dv[0]).norm() < 1e-12 && d2[1] == z[1]);
}

#[test]
fn non_convergence_is_reported_not_an_error() {
    let sys = random_system(60, 150, 20.0, 0.3, 7);
    let mut dv = vec![Vector3::zeros(); sys.n];
    let params = PcgParams {
        tolerance: 1e-12,
        max_iterations: 2,
        ..Default::default()
    };
    let info = solve_mpcg(
        &mut dv,
        &System::new(&sys.a, &sys.b, &sys.z, &sys.constraints),
        &params,
        Par::default(),
        &mut PcgWorkspace::new(),
    )
    .unwrap();
    assert!(!info.converged);
    assert_eq!(info.iterations, 2);
    assert!(info.relative_residual > 1e-12 && info.relative_residual.is_finite());
    for i in 0..sys.n {
        assert!(dv[i].iter().all(|v| v.is_finite()));
        let c = &sys.constraints[i];
        assert!(c.complement(&(dv[i] - sys.z[i])).norm() <= 1e-13 * (1.0 + sys.z[i].norm()));
    }
}

#[test]
fn zero_rhs_with_zero_targets_is_solved_in_zero_iterations() {
    let sys = random_system(10, 20, 5.0, 0.5, 3);
    let zero = vec![Vector3::zeros(); sys.n];
    let mut dv = vec![Vector3::new(1.0, 1.0, 1.0); sys.n];
    let info = solve_mpcg(
        &mut dv,
        &System::new(&sys.a, &zero, &zero, &sys.constraints),
        &PcgParams::default(),
        Par::default(),
        &mut PcgWorkspace::new(),
    )
    .unwrap();
    assert_eq!(info.iterations, 0);
    assert!(info.converged);
    assert_eq!(info.relative_residual, 0.0);
    assert!(dv.iter().all(|v| *v == Vector3::zeros()));
}

#[test]
fn input_errors() {
    let sys = random_system(5, 5, 1.0, 0.0, 1);
    let n = sys.n;
    let mut ws = PcgWorkspace::new();
    let p = PcgParams::default();
    let mut dv = vec![Vector3::zeros(); n];
    let short = vec![Vector3::zeros(); n - 1];
    let free = vec![Constraint::Free; n];
    assert_eq!(
        solve_mpcg(
            &mut dv,
            &System::new(&sys.a, &short, &sys.z, &free),
            &p,
            Par::default(),
            &mut ws
        )
        .unwrap_err(),
        SolverError::DimensionMismatch {
            what: "b",
            expected: n,
            found: n - 1
        }
    );
    assert!(matches!(
        solve_mpcg(
            &mut dv,
            &System::new(&sys.a, &sys.b, &short, &free),
            &p,
            Par::default(),
            &mut ws
        ),
        Err(SolverError::DimensionMismatch { what: "z", .. })
    ));
    assert!(matches!(
        solve_mpcg(
            &mut dv,
            &System::new(&sys.a, &sys.b, &sys.z, &free[1..]),
            &p,
            Par::default(),
            &mut ws
        ),
        Err(SolverError::DimensionMismatch {
            what: "constraints",
            ..
        })
    ));
    let cold = System::new(&sys.a, &sys.b, &sys.z, &free);
    assert!(matches!(
        solve_mpcg(
            &mut dv,
            &cold.starting_from(&short),
            &p,
            Par::default(),
            &mut ws
        ),
        Err(SolverError::DimensionMismatch { what: "start", .. })
    ));
    let mut bad_start = sys.z.clone();
    bad_start[2].x = f64::INFINITY;
    assert!(matches!(
        solve_mpcg(
            &mut dv,
            &cold.starting_from(&bad_start),
            &p,
            Par::default(),
            &mut ws
        ),
        Err(SolverError::NonFinite {
            what: "start",
            index: 2
        })
    ));
    assert!(matches!(
        solve_direct(&mut dv[1..], &sys.a, &sys.b, &sys.z, &free),
        Err(SolverError::DimensionMismatch { what: "dv", .. })
    ));
    let mut bad_b = sys.b.clone();
    bad_b[3].y = f64::NAN;
    assert_eq!(
        solve_mpcg(
            &mut dv,
            &System::new(&sys.a, &bad_b, &sys.z, &free),
            &p,
            Par::default(),
            &mut ws
        )
        .unwrap_err(),
        SolverError::NonFinite {
            what: "b",
            index: 3
        }
    );
    let mut bad_a = sys.a.clone();
    bad_a.add_diagonal(2, &Matrix3::repeat(f64::INFINITY));
    assert_eq!(
        solve_direct(&mut dv, &bad_a, &sys.b, &sys.z, &free).unwrap_err(),
        SolverError::NonFinite {
            what: "matrix block row",
            index: 2
        }
    );
    let mut cons = free.clone();
    cons[4] = Constraint::Plane {
        p: Vector3::new(1.0, 1.0, 0.0),
    };
    assert!(matches!(
        solve_mpcg(
            &mut dv,
            &System::new(&sys.a, &sys.b, &sys.z, &cons),
            &p,
            Par::default(),
            &mut ws
        ),
        Err(SolverError::InvalidConstraint { index: 4, .. })
    ));
    let neg = PcgParams {
        tolerance: -1.0,
        ..p
    };
    assert!(matches!(
        solve_mpcg(
            &mut dv,
            &System::new(&sys.a, &sys.b, &sys.z, &free),
            &neg,
            Par::default(),
            &mut ws
        ),
        Err(SolverError::InvalidParameter {
            name: "tolerance",
            ..
        })
    ));
    // A non-positive diagonal entry cannot build the Jacobi preconditioner.
    let mut a = BlockMatrix::new(2, &[]).unwrap();
    a.add_diagonal(0, &Matrix3::identity());
    a.add_diagonal(1, &Matrix3::from_diagonal(&Vector3::new(1.0, -2.0, 1.0)));
    let mut dv2 = [Vector3::zeros(); 2];
    for pre in [Preconditioner::Diagonal, Preconditioner::BlockJacobi] {
        let params = PcgParams {
            preconditioner: pre,
            ..p
        };
        assert!(matches!(
            solve_mpcg(
                &mut dv2,
                &System::new(
                    &a,
                    &[Vector3::x(); 2],
                    &[Vector3::zeros(); 2],
                    &[Constraint::Free; 2]
                ),
                &params,
                Par::default(),
                &mut ws
            ),
            Err(SolverError::DiagonalNotPositive { index: 1, .. })
        ));
    }
}

#[test]
fn workspace_reuse_gives_identical_results_across_sizes() {
    let big = random_system(40, 80, 10.0, 0.4, 11);
    let small = random_system(12, 20, 10.0, 0.4, 12);
    let p = PcgParams {
        tolerance: 1e-10,
        ..Default::default()
    };
    let run = |sys: &common::System, ws: &mut PcgWorkspace| {
        let mut dv = vec![Vector3::zeros(); sys.n];
        let info = solve_mpcg(
            &mut dv,
            &System::new(&sys.a, &sys.b, &sys.z, &sys.constraints),
            &p,
            Par::default(),
            ws,
        )
        .unwrap();
        (dv, info)
    };
    let mut ws = PcgWorkspace::new();
    let first = run(&small, &mut ws);
    let _ = run(&big, &mut ws);
    let again = run(&small, &mut ws);
    assert_eq!(first, again);
}

/// Regression (found by proptest): at CG's finite termination the preconditioned residual
/// norm r^T S M^-1 r can round to a tiny negative number; that is convergence, not an error.
#[test]
fn regression_negative_rounding_residual_norm_is_convergence() {
    let sys = random_system(
        5,
        47,
        0.1,
        0.234_001_546_067_032_44,
        1_301_966_453_659_774_880,
    );
    let mut dv = vec![Vector3::zeros(); sys.n];
    let info = solve_mpcg(
        &mut dv,
        &System::new(&sys.a, &sys.b, &sys.z, &sys.constraints),
        &tight(Preconditioner::Diagonal, sys.n),
        Par::default(),
        &mut PcgWorkspace::new(),
    )
    .unwrap();
    assert!(info.converged, "{info:?}");
    let mut direct = vec![Vector3::zeros(); sys.n];
    solve_direct(&mut direct, &sys.a, &sys.b, &sys.z, &sys.constraints).unwrap();
    assert!(rel_diff(&dv, &direct) <= 1e-10);
}

/// A DirectSolver analysed once gives the same bits as fresh one-shot solves when values and
/// constraints change between solves, and rejects a matrix of another pattern.
#[test]
fn direct_solver_reuse_matches_one_shot() {
    let s1 = random_system(30, 60, 10.0, 0.5, 21);
    let mut solver = DirectSolver::new(&s1.a).unwrap();
    for (round, seed) in [22u64, 23, 24].into_iter().enumerate() {
        let other = random_system(30, 60, 10.0, 0.5, seed);
        // Same pattern as s1, new values (scaled) and the other system's constraints/rhs.
        let mut a = BlockMatrix::new(30, &s1.pairs).unwrap();
        let plan = a.plan(&s1.entries).unwrap();
        let scaled: Vec<Matrix3<f64>> =
            s1.blocks.iter().map(|b| b * (1.0 + round as f64)).collect();
        a.assemble(&plan, &scaled, Some(&s1.masses));
        let mut reused = vec![Vector3::zeros(); 30];
        solver
            .solve(&mut reused, &a, &other.b, &other.z, &other.constraints)
            .unwrap();
        let mut fresh = vec![Vector3::zeros(); 30];
        solve_direct(&mut fresh, &a, &other.b, &other.z, &other.constraints).unwrap();
        assert_eq!(reused, fresh);
    }
    let different = random_system(30, 61, 10.0, 0.5, 99);
    let mut dv = vec![Vector3::zeros(); 30];
    assert!(matches!(
        solver.solve(
            &mut dv,
            &different.a,
            &different.b,
            &different.z,
            &different.constraints
        ),
        Err(SolverError::InvalidParameter { name: "a", .. })
    ));
}
