//! Smoothed-aggregation multigrid MPCG (`solve_mpcg_multigrid`): known solutions, agreement
//! with the direct solve on cloth matrices, constraints exact at every iteration, mixed
//! constraints, iteration counts flat in the resolution, prolongator reuse, errors.
#![allow(clippy::needless_range_loop)] // index loops over several parallel arrays read clearer

mod common;

use cloth_solver::{
    BlockMatrix, Constraint, DirectSolver, Matrix3, Multigrid, MultigridParams, NearNullSpace, Par,
    PcgInfo, PcgParams, PcgWorkspace, Preconditioner, Reuse, Smoother, SolverError, Vector3,
    solve_direct, solve_mpcg, solve_mpcg_multigrid,
};
use common::cloth::{ClothProblem, cloth_problem};
use common::{Rng, grid_system, norm, random_system};
use proptest::prelude::*;

/// The default parameters with each near-null space (translations, rigid-body modes): the
/// tests that hold for the method hold for both.
fn near_null_spaces() -> [MultigridParams; 2] {
    [NearNullSpace::Translations, NearNullSpace::RigidBody].map(|near_null_space| MultigridParams {
        near_null_space,
        ..Default::default()
    })
}

fn pcg(tolerance: f64, max_iterations: usize) -> PcgParams {
    PcgParams {
        tolerance,
        max_iterations,
        ..Default::default()
    }
}

fn rel_diff(a: &[Vector3<f64>], b: &[Vector3<f64>]) -> f64 {
    let d: Vec<Vector3<f64>> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    norm(&d) / norm(b).max(1e-300)
}

/// One multigrid solve with a fresh workspace.
#[allow(clippy::too_many_arguments)]
fn mg_solve(
    mg: &mut Multigrid,
    a: &BlockMatrix,
    b: &[Vector3<f64>],
    z: &[Vector3<f64>],
    cons: &[Constraint],
    pos: &[Vector3<f64>],
    params: &PcgParams,
) -> (Vec<Vector3<f64>>, PcgInfo) {
    let mut dv = vec![Vector3::zeros(); a.n()];
    let info = solve_mpcg_multigrid(
        &mut dv,
        a,
        mg,
        b,
        z,
        cons,
        pos,
        params,
        Par::default(),
        &mut PcgWorkspace::new(),
    )
    .unwrap();
    (dv, info)
}

/// [`mg_solve`] on a cloth problem's system, constraints and positions.
fn solve_problem(
    mg: &mut Multigrid,
    p: &ClothProblem,
    params: &PcgParams,
) -> (Vec<Vector3<f64>>, PcgInfo) {
    mg_solve(mg, &p.a, &p.b, &p.z, &p.constraints, &p.positions, params)
}

/// Constraints of every kind on a cloth problem: the two fixed corners, a line constraint
/// (sliding along x) on the far edge, plane constraints with varying normals (contacts) on a
/// band in the middle; nonzero targets `z` along the prohibited directions.
fn mixed_constraints(p: &mut ClothProblem, seed: u64) {
    let side = p.side;
    let mut rng = Rng::new(seed);
    for c in 0..side {
        let i = (side - 1) * side + c;
        p.constraints[i] =
            Constraint::line(Vector3::new(0.0, 1.0, 0.0), Vector3::new(0.0, 0.0, 1.0)).unwrap();
    }
    for r in side / 3..side / 2 {
        for c in 0..side {
            let normal = Vector3::new(0.3 * (c as f64).sin(), 1.0, 0.2 * (r as f64).cos());
            p.constraints[r * side + c] = Constraint::plane(normal).unwrap();
        }
    }
    p.constraints[0] = Constraint::Fixed;
    p.constraints[side - 1] = Constraint::Fixed;
    for (zi, c) in p.z.iter_mut().zip(&p.constraints) {
        *zi = c.complement(&rng.vec3(0.05));
    }
}

#[test]
fn recovers_known_solution() {
    for params in near_null_spaces() {
        for (a, pos) in [grid_system(21, 1e-3, 1.0), {
            let p = cloth_problem(21, 0.0);
            (p.a, p.positions)
        }] {
            let n = a.n();
            let mut rng = Rng::new(5);
            let x: Vec<Vector3<f64>> = (0..n).map(|_| rng.vec3(1.0)).collect();
            let mut b = vec![Vector3::zeros(); n];
            a.mul_vec(&x, &mut b);
            let free = vec![Constraint::Free; n];
            let zero = vec![Vector3::zeros(); n];
            let mut mg = Multigrid::new(&a, &pos, &free, &params, Par::default()).unwrap();
            assert!(mg.levels() >= 2, "{:?}", mg.level_unknowns());
            let (dv, info) = mg_solve(&mut mg, &a, &b, &zero, &free, &pos, &pcg(1e-12, 200));
            assert!(info.converged, "{info:?}");
            assert!(rel_diff(&dv, &x) <= 1e-8, "{}", rel_diff(&dv, &x));
            // The residual b - A dv is small too.
            let mut r = vec![Vector3::zeros(); n];
            a.mul_vec(&dv, &mut r);
            let res: Vec<Vector3<f64>> = r.iter().zip(&b).map(|(u, v)| u - v).collect();
            assert!(norm(&res) <= 1e-9 * norm(&b));
        }
    }
}

#[test]
fn matches_direct_solve_on_cloth_matrices() {
    for params in near_null_spaces() {
        for (side, phase, mixed) in [(41, 0.0, false), (41, 0.7, true), (60, 1.3, true)] {
            let mut p = cloth_problem(side, phase);
            if mixed {
                mixed_constraints(&mut p, side as u64);
            }
            let mut direct = vec![Vector3::zeros(); p.a.n()];
            solve_direct(&mut direct, &p.a, &p.b, &p.z, &p.constraints).unwrap();
            let mut mg =
                Multigrid::new(&p.a, &p.positions, &p.constraints, &params, Par::default())
                    .unwrap();
            let (dv, info) = solve_problem(&mut mg, &p, &pcg(1e-10, 300));
            assert!(info.converged, "side {side}: {info:?}");
            let d = rel_diff(&dv, &direct);
            assert!(d <= 1e-7, "side {side} phase {phase}: rel diff {d}");
        }
    }
}

/// The constrained components of dv equal those of z after every number of iterations
/// (exactly for fixed and free particles, to rounding for planes and lines).
#[test]
fn constraints_exact_at_every_iteration() {
    for params in near_null_spaces() {
        let mut p = cloth_problem(31, 0.4);
        mixed_constraints(&mut p, 3);
        let mut mg =
            Multigrid::new(&p.a, &p.positions, &p.constraints, &params, Par::default()).unwrap();
        let mut k = 0;
        loop {
            let (dv, info) = solve_problem(&mut mg, &p, &pcg(1e-10, k));
            assert_eq!(info.iterations, k.min(info.iterations));
            for i in 0..dv.len() {
                let c = &p.constraints[i];
                let drift = c.complement(&(dv[i] - p.z[i])).norm();
                assert!(
                    drift <= 1e-15 * (1.0 + p.z[i].norm() + dv[i].norm()),
                    "iteration {k}, particle {i}: drift {drift}"
                );
                if *c == Constraint::Fixed {
                    assert_eq!(dv[i], p.z[i], "iteration {k}, particle {i}");
                }
            }
            if info.converged {
                break;
            }
            k += 1;
            assert!(k < 100, "no convergence");
        }
        assert!(k >= 3, "too few iterations to be a test: {k}");
    }
}

/// Fixed corners, a sliding edge (line constraints) and a contact band (plane constraints with
/// varying normals): converges quickly to the visual tolerance and to the direct solution.
#[test]
fn converges_with_mixed_constraints() {
    for params in near_null_spaces() {
        let mut p = cloth_problem(51, 0.2);
        mixed_constraints(&mut p, 11);
        let mut mg =
            Multigrid::new(&p.a, &p.positions, &p.constraints, &params, Par::default()).unwrap();
        let (_, fast) = solve_problem(&mut mg, &p, &pcg(1e-3, 100));
        assert!(fast.converged && fast.iterations <= 20, "{fast:?}");
        let (dv, tight) = solve_problem(&mut mg, &p, &pcg(1e-10, 300));
        assert!(tight.converged, "{tight:?}");
        let mut direct = vec![Vector3::zeros(); p.a.n()];
        DirectSolver::new(&p.a)
            .unwrap()
            .solve(&mut direct, &p.a, &p.b, &p.z, &p.constraints)
            .unwrap();
        assert!(rel_diff(&dv, &direct) <= 1e-7);
        eprintln!("mixed constraints, 2601 particles: {fast:?} / {tight:?}");
    }
}

/// Iterations at 201^2 particles stay within 1.6x those at 51^2 for the multigrid (and at
/// 101^2 within 1.6x those at 26^2). The bound is not vacuous: block-Jacobi grows past it over
/// the same 16x refinement (26^2 -> 101^2, kept small for test time).
#[test]
fn iterations_flat_in_resolution() {
    for params in near_null_spaces() {
        let system = |side: usize| {
            let (a, pos) = grid_system(side, 1e-4, 1.0);
            let n = a.n();
            let mut cons = vec![Constraint::Free; n];
            cons[0] = Constraint::Fixed;
            cons[side - 1] = Constraint::Fixed;
            let b = vec![Vector3::new(0.0, 0.0, -1e-3); n];
            (a, pos, cons, b, vec![Vector3::zeros(); n])
        };
        let multigrid = |side: usize| {
            let (a, pos, cons, b, z) = system(side);
            let mut mg = Multigrid::new(&a, &pos, &cons, &params, Par::default()).unwrap();
            let (_, info) = mg_solve(&mut mg, &a, &b, &z, &cons, &pos, &pcg(1e-3, 200));
            assert!(info.converged, "{info:?}");
            info.iterations as f64
        };
        let block_jacobi = |side: usize| {
            let (a, _, cons, b, z) = system(side);
            let mut dv = vec![Vector3::zeros(); a.n()];
            let params = PcgParams {
                preconditioner: Preconditioner::BlockJacobi,
                ..pcg(1e-3, 20_000)
            };
            let info = solve_mpcg(
                &mut dv,
                &a,
                &b,
                &z,
                &cons,
                &params,
                Par::default(),
                &mut PcgWorkspace::new(),
            )
            .unwrap();
            assert!(info.converged);
            info.iterations as f64
        };
        let mg: Vec<f64> = [26, 51, 101, 201].into_iter().map(multigrid).collect();
        let bj = [block_jacobi(26), block_jacobi(101)];
        eprintln!("multigrid 26^2..201^2: {mg:?}; block-Jacobi 26^2, 101^2: {bj:?}");
        assert!(mg[3] <= 1.6 * mg[1], "multigrid 51^2 -> 201^2: {mg:?}");
        assert!(mg[2] <= 1.6 * mg[0], "multigrid 26^2 -> 101^2: {mg:?}");
        assert!(bj[1] > 1.6 * bj[0], "block-Jacobi 26^2 -> 101^2: {bj:?}");
    }
}

/// Realistic cloth: iteration counts at 141^2 within 1.6x those at 36^2.
#[test]
fn cloth_iterations_flat_in_resolution() {
    for params in near_null_spaces() {
        let its = |side| {
            let p = cloth_problem(side, 0.0);
            let mut mg =
                Multigrid::new(&p.a, &p.positions, &p.constraints, &params, Par::default())
                    .unwrap();
            let (_, info) = solve_problem(&mut mg, &p, &pcg(1e-3, 200));
            assert!(info.converged);
            info.iterations
        };
        let (small, large) = (its(36), its(141));
        eprintln!("cloth multigrid iterations {small} -> {large}");
        assert!(large as f64 <= 1.6 * small as f64, "{small} -> {large}");
    }
}

/// With `Reuse::Prolongators { solves: 3 }` the prolongators are rebuilt every third solve,
/// and at once when the constraints change; `Reuse::Hierarchy` keeps the coarse operators on
/// the same schedule. Every solve still converges to the direct solution (the preconditioner
/// stays SPD).
#[test]
fn reuse_follows_its_schedule() {
    let base = cloth_problem(33, 0.0);
    for reuse in [
        Reuse::Prolongators { solves: 3 },
        Reuse::Hierarchy { solves: 3 },
    ] {
        let params = MultigridParams {
            reuse,
            ..Default::default()
        };
        let mut mg = Multigrid::new(
            &base.a,
            &base.positions,
            &base.constraints,
            &params,
            Par::default(),
        )
        .unwrap();
        let mut rebuilt = Vec::new();
        for step in 0..7 {
            let mut p = cloth_problem(33, 0.1 * step as f64);
            if step == 5 {
                p.constraints[17] = Constraint::Fixed;
            }
            assert!(mg.matches(&p.a));
            let (dv, info) = solve_problem(&mut mg, &p, &pcg(1e-10, 300));
            assert!(info.converged, "{reuse:?} step {step}: {info:?}");
            let mut direct = vec![Vector3::zeros(); p.a.n()];
            solve_direct(&mut direct, &p.a, &p.b, &p.z, &p.constraints).unwrap();
            assert!(rel_diff(&dv, &direct) <= 1e-7, "{reuse:?} step {step}");
            let setup = mg.last_setup();
            assert!(setup.seconds >= 0.0);
            assert_eq!(
                setup.recomputed_coarse,
                setup.rebuilt_prolongators || matches!(reuse, Reuse::Prolongators { .. })
            );
            rebuilt.push(setup.rebuilt_prolongators);
        }
        // `new` built the prolongators (with the same constraints), so they are rebuilt on
        // every third solve from there, and at step 5 (constraint change) and step 6 (changed
        // back).
        assert_eq!(
            rebuilt,
            [false, false, true, false, false, true, true],
            "{reuse:?}"
        );
    }
}

/// Small and degenerate systems: a single level (dense solve), a block-diagonal matrix with
/// no aggregates (smoother as coarsest solver), `max_levels = 1`, and random SPD stencils.
#[test]
fn degenerate_hierarchies_still_solve() {
    for params in near_null_spaces() {
        // Two particles: coarsest level = fine level, dense Cholesky: one iteration.
        let mut a = BlockMatrix::new(2, &[(0, 1)]).unwrap();
        let k = Matrix3::identity() * 10.0;
        a.add_diagonal(0, &(Matrix3::identity() + k));
        a.add_diagonal(1, &(Matrix3::identity() + k));
        a.add_block(0, 1, &(-k)).unwrap();
        let pos = [Vector3::zeros(), Vector3::x()];
        let mut mg = Multigrid::new(
            &a,
            &pos,
            &[Constraint::Fixed, Constraint::Free],
            &params,
            Par::default(),
        )
        .unwrap();
        assert_eq!(mg.levels(), 1);
        let cons = [Constraint::Fixed, Constraint::Free];
        let z = [Vector3::new(0.0, 0.0, 0.1), Vector3::zeros()];
        let b = [Vector3::zeros(), Vector3::new(0.0, 0.0, -0.1)];
        let (dv, info) = mg_solve(&mut mg, &a, &b, &z, &cons, &pos, &pcg(1e-10, 10));
        assert!(info.converged && info.iterations <= 1, "{info:?}");
        assert_eq!(dv[0], z[0]);
        assert!((dv[1].z - 0.9 / 11.0).abs() < 1e-12);

        // Block-diagonal, too large for a dense coarsest level: the smoother solves it.
        let n = 1500;
        let mut d = BlockMatrix::new(n, &[]).unwrap();
        let mut rng = Rng::new(8);
        for i in 0..n {
            let m = Matrix3::from_diagonal(&Vector3::new(1.0, 2.0, 3.0)) * rng.uniform(0.1, 10.0);
            d.add_diagonal(i, &m);
        }
        let pos: Vec<Vector3<f64>> = (0..n).map(|_| rng.vec3(1.0)).collect();
        let b: Vec<Vector3<f64>> = (0..n).map(|_| rng.vec3(1.0)).collect();
        let zero = vec![Vector3::zeros(); n];
        let free = vec![Constraint::Free; n];
        for params in [
            params,
            MultigridParams {
                smoother: Smoother::GaussSeidel { sweeps: 1 },
                ..Default::default()
            },
        ] {
            let mut mg = Multigrid::new(&d, &pos, &free, &params, Par::default()).unwrap();
            assert_eq!(mg.levels(), 1);
            let (_, info) = mg_solve(&mut mg, &d, &b, &zero, &free, &pos, &pcg(1e-10, 50));
            assert!(info.converged, "{params:?}: {info:?}");
        }

        // max_levels = 1 on a cloth matrix: smoother-only preconditioner, still converges.
        let p = cloth_problem(21, 0.0);
        let one = MultigridParams {
            max_levels: 1,
            ..Default::default()
        };
        let mut mg =
            Multigrid::new(&p.a, &p.positions, &p.constraints, &one, Par::default()).unwrap();
        assert_eq!(mg.levels(), 1);
        let (_, info) = solve_problem(&mut mg, &p, &pcg(1e-6, 5000));
        assert!(info.converged, "{info:?}");
    }
}

/// Empty and one-particle systems, and a hierarchy asked for before the matrix has values
/// (the strength of connection needs them): reported or solved, never a panic.
#[test]
fn tiny_and_empty_systems() {
    for params in near_null_spaces() {
        let empty = BlockMatrix::new(0, &[]).unwrap();
        let mut mg = Multigrid::new(&empty, &[], &[], &params, Par::default()).unwrap();
        let (dv, info) = mg_solve(&mut mg, &empty, &[], &[], &[], &[], &pcg(1e-8, 10));
        assert!(dv.is_empty() && info.converged && info.iterations == 0);

        let mut one = BlockMatrix::new(1, &[]).unwrap();
        one.add_diagonal(0, &(Matrix3::identity() * 2.0));
        let pos = [Vector3::zeros()];
        let mut mg =
            Multigrid::new(&one, &pos, &[Constraint::Free], &params, Par::default()).unwrap();
        let b = [Vector3::new(2.0, 4.0, 6.0)];
        let (dv, info) = mg_solve(
            &mut mg,
            &one,
            &b,
            &[Vector3::zeros()],
            &[Constraint::Free],
            &pos,
            &pcg(1e-12, 10),
        );
        assert!(info.converged && info.iterations <= 1, "{info:?}");
        assert!((dv[0] - Vector3::new(1.0, 2.0, 3.0)).norm() < 1e-12);

        // Pattern only, all values zero: not positive definite, reported.
        let p = cloth_problem(9, 0.0);
        let zero = BlockMatrix::new(p.a.n(), &[(0, 1), (1, 2)]).unwrap();
        let pos = &p.positions;
        assert!(matches!(
            Multigrid::new(
                &zero,
                pos,
                &vec![Constraint::Free; p.a.n()],
                &params,
                Par::default()
            ),
            Err(SolverError::DiagonalNotPositive { .. }
                | SolverError::CoarseNotPositiveDefinite { .. })
        ));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random SPD block systems (random stencils, random positions, random constraints of
    /// every kind, small coarse size to force several levels): the multigrid MPCG converges to
    /// the direct solution with both smoothers and keeps the constraints exact.
    #[test]
    fn random_systems_match_direct(
        n in 10usize..200, elems_per in 1usize..4, k_max in 0.1f64..100.0,
        frac in 0.0f64..0.6, seed in any::<u64>(), gs in any::<bool>(), rigid in any::<bool>()
    ) {
        let sys = random_system(n, elems_per * n, k_max, frac, seed);
        let mut rng = Rng::new(seed ^ 0xabc);
        let pos: Vec<Vector3<f64>> = (0..n).map(|_| rng.vec3(1.0)).collect();
        let params = MultigridParams {
            coarse_size: 12,
            smoother: if gs {
                Smoother::GaussSeidel { sweeps: 1 }
            } else {
                MultigridParams::default().smoother
            },
            near_null_space: if rigid {
                NearNullSpace::RigidBody
            } else {
                NearNullSpace::Translations
            },
            ..Default::default()
        };
        let mut mg = Multigrid::new(&sys.a, &pos, &sys.constraints, &params, Par::default()).unwrap();
        let (dv, info) = mg_solve(&mut mg, &sys.a, &sys.b, &sys.z, &sys.constraints, &pos,
                                  &pcg(1e-12, 2000));
        prop_assert!(info.converged, "{info:?} levels {:?}", mg.level_unknowns());
        let mut direct = vec![Vector3::zeros(); n];
        solve_direct(&mut direct, &sys.a, &sys.b, &sys.z, &sys.constraints).unwrap();
        prop_assert!(rel_diff(&dv, &direct) <= 1e-7, "rel diff {}", rel_diff(&dv, &direct));
        for i in 0..n {
            let c = &sys.constraints[i];
            let off = c.complement(&(dv[i] - sys.z[i])).norm();
            prop_assert!(off <= 1e-13 * (1.0 + sys.z[i].norm() + dv[i].norm()));
        }
    }
}

#[test]
fn input_errors() {
    let p = cloth_problem(11, 0.0);
    let n = p.a.n();
    let d = MultigridParams::default();
    let new = |params: &MultigridParams| {
        Multigrid::new(&p.a, &p.positions, &p.constraints, params, Par::default())
    };
    for (bad, name) in [
        (
            MultigridParams {
                strength_threshold: -0.1,
                ..d
            },
            "strength_threshold",
        ),
        (
            MultigridParams {
                strength_threshold: f64::NAN,
                ..d
            },
            "strength_threshold",
        ),
        (MultigridParams { max_levels: 0, ..d }, "max_levels"),
        (
            MultigridParams {
                prolongator_damping: 2.0,
                ..d
            },
            "prolongator_damping",
        ),
        (
            MultigridParams {
                lanczos_steps: 0,
                ..d
            },
            "lanczos_steps",
        ),
        (
            MultigridParams {
                reuse: Reuse::Prolongators { solves: 0 },
                ..d
            },
            "reuse.solves",
        ),
        (
            MultigridParams {
                smoother: Smoother::Chebyshev {
                    degree: 0,
                    ratio: 30.0,
                },
                ..d
            },
            "smoother.degree",
        ),
        (
            MultigridParams {
                smoother: Smoother::Chebyshev {
                    degree: 2,
                    ratio: 1.0,
                },
                ..d
            },
            "smoother.ratio",
        ),
        (
            MultigridParams {
                smoother: Smoother::GaussSeidel { sweeps: 0 },
                ..d
            },
            "smoother.sweeps",
        ),
    ] {
        match new(&bad) {
            Err(SolverError::InvalidParameter { name: got, .. }) => assert_eq!(got, name),
            other => panic!("{name}: expected InvalidParameter, got {other:?}"),
        }
    }
    assert!(matches!(
        Multigrid::new(&p.a, &p.positions[1..], &p.constraints, &d, Par::default()),
        Err(SolverError::DimensionMismatch {
            what: "positions",
            ..
        })
    ));
    assert!(matches!(
        Multigrid::new(&p.a, &p.positions, &p.constraints[1..], &d, Par::default()),
        Err(SolverError::DimensionMismatch {
            what: "constraints",
            ..
        })
    ));
    let mut bad_cons = p.constraints.clone();
    bad_cons[5] = Constraint::Plane {
        p: Vector3::new(2.0, 0.0, 0.0),
    };
    assert!(matches!(
        Multigrid::new(&p.a, &p.positions, &bad_cons, &d, Par::default()),
        Err(SolverError::InvalidConstraint { index: 5, .. })
    ));
    let mut nan = p.positions.clone();
    nan[7].y = f64::NAN;
    assert_eq!(
        Multigrid::new(&p.a, &nan, &p.constraints, &d, Par::default()).unwrap_err(),
        SolverError::NonFinite {
            what: "positions",
            index: 7
        }
    );
    let mut mg = new(&d).unwrap();
    let mut ws = PcgWorkspace::new();
    let params = pcg(1e-3, 100);
    let mut dv = vec![Vector3::new(1.0, 2.0, 3.0); n];
    let untouched = dv.clone();
    let solve = |mg: &mut Multigrid,
                 a: &BlockMatrix,
                 pos: &[Vector3<f64>],
                 dv: &mut [Vector3<f64>],
                 ws: &mut PcgWorkspace| {
        solve_mpcg_multigrid(
            dv,
            a,
            mg,
            &p.b[..a.n()],
            &p.z[..a.n()],
            &p.constraints[..a.n()],
            pos,
            &params,
            Par::default(),
            ws,
        )
    };
    assert_eq!(
        solve(&mut mg, &p.a, &nan, &mut dv, &mut ws).unwrap_err(),
        SolverError::NonFinite {
            what: "positions",
            index: 7
        }
    );
    // Another pattern: rejected, not silently used.
    let other = cloth_problem(12, 0.0);
    let mut dv_other = vec![Vector3::zeros(); other.a.n()];
    assert!(!mg.matches(&other.a));
    let err = solve_mpcg_multigrid(
        &mut dv_other,
        &other.a,
        &mut mg,
        &other.b,
        &other.z,
        &other.constraints,
        &other.positions,
        &params,
        Par::default(),
        &mut ws,
    )
    .unwrap_err();
    assert!(matches!(
        err,
        SolverError::InvalidParameter { name: "a", .. }
    ));
    // Input errors of solve_mpcg are reported as well; dv untouched.
    let mut bad_b = p.b.clone();
    bad_b[4].x = f64::INFINITY;
    assert_eq!(
        solve_mpcg_multigrid(
            &mut dv,
            &p.a,
            &mut mg,
            &bad_b,
            &p.z,
            &p.constraints,
            &p.positions,
            &params,
            Par::default(),
            &mut ws
        )
        .unwrap_err(),
        SolverError::NonFinite {
            what: "b",
            index: 4
        }
    );
    assert_eq!(dv, untouched);
    // The hierarchy still works after the errors.
    let info = solve(&mut mg, &p.a, &p.positions, &mut dv, &mut ws).unwrap();
    assert!(info.converged);
}

/// A matrix that is indefinite only in constrained directions is SPD where the PCG works:
/// built with those constraints, the hierarchy solves it like the direct solver does.
#[test]
fn indefinite_only_in_constrained_directions_still_solves() {
    for params in near_null_spaces() {
        let (mut a, pos) = grid_system(25, 1e-3, 1.0);
        let n = a.n();
        a.add_diagonal(300, &(Matrix3::identity() * -50.0));
        let mut cons = vec![Constraint::Free; n];
        cons[300] = Constraint::Fixed;
        cons[0] = Constraint::Fixed;
        let mut rng = Rng::new(4);
        let b: Vec<Vector3<f64>> = (0..n).map(|_| rng.vec3(1e-3)).collect();
        let mut z = vec![Vector3::zeros(); n];
        z[300] = Vector3::new(0.0, 0.0, 0.01);
        let mut mg = Multigrid::new(&a, &pos, &cons, &params, Par::default()).unwrap();
        assert!(mg.levels() >= 2);
        let (dv, info) = mg_solve(&mut mg, &a, &b, &z, &cons, &pos, &pcg(1e-10, 300));
        assert!(info.converged, "{info:?}");
        assert_eq!(dv[300], z[300]);
        let mut direct = vec![Vector3::zeros(); n];
        solve_direct(&mut direct, &a, &b, &z, &cons).unwrap();
        assert!(rel_diff(&dv, &direct) <= 1e-7);
        // All particles free: not SPD, reported.
        let free = vec![Constraint::Free; n];
        assert!(Multigrid::new(&a, &pos, &free, &params, Par::default()).is_err());
    }
}

/// An indefinite matrix is reported, not solved into NaN, and dv is left untouched.
#[test]
fn indefinite_matrix_is_an_error() {
    let (mut a, pos) = grid_system(15, 1e-3, 1.0);
    let n = a.n();
    // Make one particle's block strongly negative.
    a.add_diagonal(40, &(Matrix3::identity() * -50.0));
    let b = vec![Vector3::new(0.0, 0.0, -1.0); n];
    let z = vec![Vector3::zeros(); n];
    let free = vec![Constraint::Free; n];
    let built = Multigrid::new(&a, &pos, &free, &MultigridParams::default(), Par::default());
    let Ok(mut mg) = built else {
        let e = built.unwrap_err();
        assert!(matches!(
            e,
            SolverError::DiagonalNotPositive { index: 40, .. }
                | SolverError::CoarseNotPositiveDefinite { .. }
        ));
        return;
    };
    let mut dv = vec![Vector3::new(7.0, 7.0, 7.0); n];
    let err = solve_mpcg_multigrid(
        &mut dv,
        &a,
        &mut mg,
        &b,
        &z,
        &free,
        &pos,
        &pcg(1e-8, 500),
        Par::default(),
        &mut PcgWorkspace::new(),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            SolverError::DiagonalNotPositive { index: 40, .. }
                | SolverError::CoarseNotPositiveDefinite { .. }
                | SolverError::NotPositiveDefinite { .. }
        ),
        "{err:?}"
    );
    assert!(dv.iter().all(|v| *v == Vector3::new(7.0, 7.0, 7.0)));
}

/// A smoother tuned below the top of its level's spectrum makes the V-cycle indefinite; the
/// PCG notices (`r . V r < 0`) and the solve is done again with every smoother tuned by the
/// guaranteed bound, and still reaches the direct solution. One Lanczos step (a Rayleigh
/// quotient plus its residual, far below the largest eigenvalue of a cloth matrix) stands in
/// for the 6-step estimate missing an eigenvector localised at a few nodes (a twisted T-shirt
/// on a mannequin). The next solves keep the bound, so they need no retry.
#[test]
fn an_indefinite_v_cycle_is_retried_with_bounded_smoothers() {
    for near_null_space in [NearNullSpace::Translations, NearNullSpace::RigidBody] {
        let mut p = cloth_problem(41, 0.3);
        mixed_constraints(&mut p, 7);
        let params = MultigridParams {
            lanczos_steps: 1,
            near_null_space,
            ..Default::default()
        };
        let mut mg =
            Multigrid::new(&p.a, &p.positions, &p.constraints, &params, Par::default()).unwrap();
        let mut direct = vec![Vector3::zeros(); p.b.len()];
        solve_direct(&mut direct, &p.a, &p.b, &p.z, &p.constraints).unwrap();
        let tight = pcg(1e-10, 500);
        let (dv, info) = solve_problem(&mut mg, &p, &tight);
        assert!(info.converged, "{near_null_space:?}: {info:?}");
        assert_eq!(mg.bounded_retries(), 1, "{near_null_space:?}");
        assert!(rel_diff(&dv, &direct) <= 1e-7, "{}", rel_diff(&dv, &direct));
        let (dv, info) = solve_problem(&mut mg, &p, &tight);
        assert!(info.converged);
        assert_eq!(
            mg.bounded_retries(),
            1,
            "{near_null_space:?}: the bound is kept"
        );
        assert!(rel_diff(&dv, &direct) <= 1e-7, "{}", rel_diff(&dv, &direct));
    }
}
