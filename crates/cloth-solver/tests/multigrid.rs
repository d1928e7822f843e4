//! Smoothed-aggregation multigrid MPCG (`solve_mpcg_multigrid`) on synthetic systems: known
//! solutions, iteration counts flat in the resolution, degenerate hierarchies, random systems
//! against the direct solve, indefinite matrices. The tests on cloth matrices (which need
//! cloth-forces to build them) are in cloth-forces' `tests/solver_on_cloth.rs`.
#![allow(clippy::needless_range_loop)] // index loops over several parallel arrays read clearer

mod common;

use cloth_solver::{
    BlockMatrix, Constraint, Matrix3, Multigrid, MultigridOn, MultigridParams, NearNullSpace, Par,
    PcgInfo, PcgParams, PcgWorkspace, Preconditioner, Smoother, SolverError, System, Vector3,
    solve_direct, solve_mpcg, solve_mpcg_multigrid, solve_mpcg_multigrid_on,
};
use common::{Rng, grid_system, norm, random_system, sheet_positions};
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
        &System::new(a, b, z, cons),
        mg,
        pos,
        params,
        Par::default(),
        &mut PcgWorkspace::new(),
    )
    .unwrap();
    (dv, info)
}

#[test]
fn recovers_known_solution() {
    for params in near_null_spaces() {
        let (a, pos) = grid_system(21, 1e-3, 1.0);
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
                &System::new(&a, &b, &z, &cons),
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

/// A sheet with a flap folded over it: contact springs join each particle of a quarter of
/// the lower half's width to the one above it in the upper half, couplings outside the mesh's
/// pattern. The hierarchy built for the mesh's pattern, applied to the matrix with those
/// couplings lumped onto the diagonal ([`BlockMatrix::lump_into`]), solves the folded system
/// to the direct solution, in well under half the iterations of block Jacobi. It takes many
/// more than on the sheet without contact: lumping stiffens the modes in which both layers
/// move together, which the contact springs leave soft.
#[test]
fn a_hierarchy_of_the_mesh_pattern_solves_with_contact_pairs_lumped() {
    let side = 41;
    let (mesh_a, pos) = grid_system(side, 1e-4, 1.0);
    let n = mesh_a.n();
    let id = |r: usize, c: usize| r * side + c;
    let contacts: Vec<(usize, usize)> = (0..side / 2)
        .flat_map(|r| (0..side / 4).map(move |c| (id(r, c), id(side - 1 - r, c))))
        .collect();
    // The folded system: the mesh's blocks (lumping onto a larger pattern copies them) plus
    // a stiff spring along z per contact pair.
    let mut pairs: Vec<(usize, usize)> = (0..n)
        .flat_map(|i| (0..n).filter(move |&j| j > i).map(move |j| (i, j)))
        .filter(|&(i, j)| mesh_a.block(i, j).is_some())
        .collect();
    pairs.extend(&contacts);
    let mut folded = BlockMatrix::new(n, &pairs).unwrap();
    mesh_a.lump_into(&mut folded).unwrap();
    let k = Matrix3::from_diagonal(&Vector3::new(0.1, 0.1, 1.1));
    for &(i, j) in &contacts {
        folded.add_diagonal(i, &k);
        folded.add_diagonal(j, &k);
        folded.add_block(i, j, &(-k)).unwrap();
    }
    let mut cons = vec![Constraint::Free; n];
    cons[0] = Constraint::Fixed;
    cons[side - 1] = Constraint::Fixed;
    let mut rng = Rng::new(11);
    let b: Vec<Vector3<f64>> = (0..n).map(|_| rng.vec3(1e-3)).collect();
    let z = vec![Vector3::zeros(); n];
    let sys = System::new(&folded, &b, &z, &cons);
    let mut exact = vec![Vector3::zeros(); n];
    solve_direct(&mut exact, &folded, &b, &z, &cons).unwrap();

    let mut lumped = mesh_a.clone();
    folded.lump_into(&mut lumped).unwrap();
    let params = MultigridParams::default();
    let mut mg = Multigrid::new(&mesh_a, &pos, &cons, &params, Par::default()).unwrap();
    let mut solve = |tolerance: f64| {
        let mut dv = vec![Vector3::zeros(); n];
        let on = MultigridOn {
            mg: &mut mg,
            matrix: &lumped,
            positions: &pos,
            only_fine: false,
        };
        let params = pcg(tolerance, 500);
        let info = solve_mpcg_multigrid_on(
            &mut dv,
            &sys,
            on,
            &params,
            Par::default(),
            &mut PcgWorkspace::new(),
        )
        .unwrap();
        assert!(info.converged, "{info:?}");
        (dv, info.iterations)
    };
    let (dv, _) = solve(1e-12);
    assert!(rel_diff(&dv, &exact) <= 1e-7, "{}", rel_diff(&dv, &exact));
    let (_, folded_iterations) = solve(1e-3);

    let b_mesh = b.clone();
    let (_, unfolded) = mg_solve(&mut mg, &mesh_a, &b_mesh, &z, &cons, &pos, &pcg(1e-3, 500));
    let mut dv = vec![Vector3::zeros(); n];
    let bj = PcgParams {
        preconditioner: Preconditioner::BlockJacobi,
        ..pcg(1e-3, 20_000)
    };
    let jacobi = solve_mpcg(&mut dv, &sys, &bj, Par::default(), &mut PcgWorkspace::new()).unwrap();
    eprintln!(
        "folded, lumped hierarchy: {folded_iterations}; unfolded: {}; block Jacobi folded: {}",
        unfolded.iterations, jacobi.iterations
    );
    assert!(
        2 * folded_iterations <= jacobi.iterations,
        "{folded_iterations} vs {jacobi:?}"
    );
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
        let pos = &sheet_positions(9, 0.0);
        let zero = BlockMatrix::new(pos.len(), &[(0, 1), (1, 2)]).unwrap();
        assert!(matches!(
            Multigrid::new(
                &zero,
                pos,
                &vec![Constraint::Free; pos.len()],
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
        &System::new(&a, &b, &z, &free),
        &mut mg,
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
