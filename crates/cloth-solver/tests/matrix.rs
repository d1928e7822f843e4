//! BlockMatrix contract: pattern, symmetric add_block, plan assembly == add_block reference,
//! mul_vec == dense multiply, errors.

mod common;

use cloth_solver::{BlockMatrix, Matrix3, SolverError, Vector3};
use common::{Rng, random_system, to_flat};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// `row_sum_over(i, set)` times a vector v is row i of A applied to v placed on the set's
    /// particles (zero elsewhere).
    #[test]
    fn row_sum_over_matches_the_product_on_the_set(
        n in 2usize..40, elems in 0usize..60, seed in any::<u64>()
    ) {
        let sys = random_system(n, elems, 10.0, 0.0, seed);
        let mut rng = Rng::new(seed ^ 0x77);
        let set: Vec<bool> = (0..n).map(|_| rng.uniform(0.0, 1.0) < 0.5).collect();
        let v = rng.vec3(1.0);
        let x: Vec<Vector3<f64>> =
            set.iter().map(|&on| if on { v } else { Vector3::zeros() }).collect();
        let mut y = vec![Vector3::zeros(); n];
        sys.a.mul_vec(&x, &mut y);
        for (i, yi) in y.iter().enumerate() {
            let got = sys.a.row_sum_over(i, &set) * v;
            prop_assert!((got - yi).norm() <= 1e-12 * (1.0 + yi.norm()), "row {i}");
        }
    }

    /// y = A x agrees with the dense 3n x 3n product.
    #[test]
    fn mul_vec_matches_dense(n in 2usize..40, elems in 0usize..60, seed in any::<u64>()) {
        let sys = random_system(n, elems, 10.0, 0.0, seed);
        let mut rng = Rng::new(seed ^ 0x55);
        let x: Vec<Vector3<f64>> = (0..n).map(|_| rng.vec3(3.0)).collect();
        let mut y = vec![Vector3::zeros(); n];
        sys.a.mul_vec(&x, &mut y);
        let dense = sys.a.to_dense() * to_flat(&x);
        let yf = to_flat(&y);
        let scale = dense.norm().max(1.0);
        prop_assert!((yf - &dense).norm() <= 1e-13 * scale);
    }

    /// The assembled matrix is symmetric (block (j,i) is the transpose of (i,j)).
    #[test]
    fn assembled_matrix_is_symmetric(n in 2usize..30, elems in 0usize..40, seed in any::<u64>()) {
        let sys = random_system(n, elems, 10.0, 0.0, seed);
        let d = sys.a.to_dense();
        prop_assert!((&d - d.transpose()).amax() <= 1e-13 * d.amax().max(1.0));
    }

    /// Plan assembly (parallel, slot table) is bit-identical to the serial add_block path.
    #[test]
    fn plan_assembly_equals_add_block(n in 2usize..40, elems in 0usize..60, seed in any::<u64>(),
                                      with_diag in any::<bool>()) {
        let sys = random_system(n, elems, 10.0, 0.0, seed);
        let mut reference = BlockMatrix::new(n, &sys.pairs).unwrap();
        if with_diag {
            for (i, m) in sys.masses.iter().enumerate() {
                reference.add_diagonal(i, m);
            }
        }
        for (&(i, j), b) in sys.entries.iter().zip(&sys.blocks) {
            reference.add_block(i, j, b).unwrap();
        }
        let mut fast = BlockMatrix::new(n, &sys.pairs).unwrap();
        // Fill with garbage first: assemble must zero everything.
        for i in 0..n {
            fast.add_diagonal(i, &Matrix3::repeat(7.0));
        }
        let plan = fast.plan(&sys.entries).unwrap();
        prop_assert_eq!(plan.n_entries(), sys.entries.len());
        let diag = if with_diag { Some(sys.masses.as_slice()) } else { None };
        fast.assemble(&plan, &sys.blocks, diag);
        for i in 0..n {
            for j in 0..n {
                let (r, f) = (reference.block(i, j), fast.block(i, j));
                prop_assert_eq!(r.map(|m| m.map(f64::to_bits)), f.map(|m| m.map(f64::to_bits)));
            }
        }
    }

    /// A plan carried to a grown pattern equals the plan built on it from the entries.
    #[test]
    fn a_regrown_plan_is_the_plan_of_the_grown_pattern(n in 2usize..40, elems in 0usize..60,
                                                       extra in 1usize..30, seed in any::<u64>()) {
        let sys = random_system(n, elems, 10.0, 0.0, seed);
        let old = BlockMatrix::new(n, &sys.pairs).unwrap();
        let plan = old.plan(&sys.entries).unwrap();
        let mut rng = Rng::new(seed ^ 0x77);
        let mut pairs = sys.pairs.clone();
        for _ in 0..extra {
            pairs.push((rng.below(n), rng.below(n)));
        }
        let grown = BlockMatrix::new(n, &pairs).unwrap();
        let regrown = plan.regrown(&old, &grown).unwrap();
        prop_assert_eq!(&regrown, &grown.plan(&sys.entries).unwrap());
        // And not for a pattern that lost a block.
        if let Some(&(i, j)) = sys.pairs.iter().find(|p| p.0 != p.1) {
            let fewer: Vec<(usize, usize)> = sys.pairs.iter().copied()
                .filter(|&(a, b)| (a.min(b), a.max(b)) != (i.min(j), i.max(j))).collect();
            let shrunk = BlockMatrix::new(n, &fewer).unwrap();
            prop_assert!(plan.regrown(&old, &shrunk).is_err());
        }
    }

    /// Lumping onto another pattern keeps the blocks both store, zeroes those only it has,
    /// and the result minus the matrix is positive semidefinite (smallest eigenvalue of the
    /// dense difference).
    #[test]
    fn lumping_onto_another_pattern_keeps_shared_blocks_and_dominates(n in 2usize..30,
            elems in 1usize..40, keep in 0.0f64..1.0, extra in 0usize..10, seed in any::<u64>()) {
        let sys = random_system(n, elems, 10.0, 0.0, seed);
        let mut rng = Rng::new(seed ^ 0x99);
        let mut kept: Vec<(usize, usize)> = sys.pairs.iter().copied()
            .filter(|_| rng.uniform(0.0, 1.0) < keep).collect();
        kept.extend((0..extra).map(|_| (rng.below(n), rng.below(n))));
        let mut lumped = BlockMatrix::new(n, &kept).unwrap();
        // Garbage first: every value is written.
        for i in 0..n {
            lumped.add_diagonal(i, &Matrix3::repeat(3.0));
        }
        for &(i, j) in kept.iter().filter(|(i, j)| i != j) {
            lumped.add_block(i, j, &Matrix3::repeat(5.0)).unwrap();
        }
        sys.a.lump_into(&mut lumped).unwrap();
        for i in 0..n {
            for j in (0..n).filter(|&j| j != i) {
                if let Some(b) = lumped.block(i, j) {
                    prop_assert_eq!(b, sys.a.block(i, j).unwrap_or_else(Matrix3::zeros));
                }
            }
        }
        let diff = lumped.to_dense() - sys.a.to_dense();
        let diff = (&diff + diff.transpose()) * 0.5;
        let lowest = diff.symmetric_eigenvalues().min();
        prop_assert!(lowest >= -1e-12 * sys.a.to_dense().amax().max(1.0), "lowest eigenvalue {}", lowest);
    }
}

#[test]
fn pattern_counts_and_duplicates() {
    // Duplicates and both orders collapse; self pairs are ignored.
    let a = BlockMatrix::new(4, &[(0, 1), (1, 0), (0, 1), (2, 3), (2, 2)]).unwrap();
    assert_eq!(a.n(), 4);
    assert_eq!(a.nnz_blocks(), 4 + 4);
    assert!(a.block(0, 1).is_some() && a.block(1, 0).is_some());
    assert!(a.block(0, 2).is_none());
    assert!(a.block(4, 4).is_none());
    assert_eq!(a.diagonal_block(3), Matrix3::zeros());
}

#[test]
fn add_block_writes_transpose_and_set_zero_clears() {
    let mut a = BlockMatrix::new(3, &[(0, 2)]).unwrap();
    let b = Matrix3::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0);
    a.add_block(2, 0, &b).unwrap();
    assert_eq!(a.block(2, 0).unwrap(), b);
    assert_eq!(a.block(0, 2).unwrap(), b.transpose());
    a.add_block(1, 1, &Matrix3::identity()).unwrap();
    assert_eq!(a.diagonal_block(1), Matrix3::identity());
    a.set_zero();
    assert_eq!(a.to_dense().amax(), 0.0);
    assert_eq!(a.nnz_blocks(), 5);
}

#[test]
fn pattern_errors_name_the_block() {
    let mut a = BlockMatrix::new(3, &[(0, 1)]).unwrap();
    assert_eq!(
        a.add_block(0, 2, &Matrix3::identity()),
        Err(SolverError::PatternMissing { i: 0, j: 2 })
    );
    assert_eq!(
        a.add_block(5, 5, &Matrix3::identity()),
        Err(SolverError::PatternMissing { i: 5, j: 5 })
    );
    assert_eq!(
        a.plan(&[(0, 1), (2, 1)]).unwrap_err(),
        SolverError::PatternMissing { i: 2, j: 1 }
    );
    match BlockMatrix::new(3, &[(0, 1), (1, 3)]) {
        Err(SolverError::IndexOutOfRange {
            index: 3,
            n: 3,
            what,
        }) => assert!(what.contains('1')),
        other => panic!("expected IndexOutOfRange, got {other:?}"),
    }
}

#[test]
fn empty_matrix_is_fine() {
    let a = BlockMatrix::new(0, &[]).unwrap();
    let mut y: Vec<Vector3<f64>> = vec![];
    a.mul_vec(&[], &mut y);
    assert_eq!(a.nnz_blocks(), 0);
    assert_eq!(a.to_dense().nrows(), 0);
}
