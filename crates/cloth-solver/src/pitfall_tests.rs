//! Regression tests for the two pitfalls of the paper's `modified-pcg` listing (§5.3):
//! the Jacobi preconditioner must divide by the diagonal, and the stopping reference must
//! come from the filtered initial residual `S (b - A z)`, not from `filter(b)`.

use nalgebra::{Matrix3, Vector3};

use crate::pcg::{PrecondForm, Reference, solve_mpcg_impl};
use crate::{
    BlockMatrix, Constraint, PcgInfo, PcgParams, PcgWorkspace, Preconditioner, System, solve_direct,
};

/// Chain of `n` particles, `A = D^1/2 (I + L) D^1/2` with `L` the coupling -0.4 between
/// neighbours (so `I + L` has condition number <= 9) and `D` spanning six orders of
/// magnitude: a badly scaled SPD system on which Jacobi is (nearly) ideal.
fn badly_scaled_chain(n: usize) -> BlockMatrix {
    let pairs: Vec<(usize, usize)> = (1..n).map(|i| (i - 1, i)).collect();
    let mut a = BlockMatrix::new(n, &pairs).unwrap();
    // Deterministic scatter of exponents in [-3, 3].
    let d: Vec<f64> = (0..n)
        .map(|i| 10f64.powf(((i * 7919) % 601) as f64 / 100.0 - 3.0))
        .collect();
    for i in 0..n {
        a.add_diagonal(i, &(Matrix3::identity() * d[i]));
        if i > 0 {
            let c = -0.4 * (d[i - 1] * d[i]).sqrt();
            a.add_block(i - 1, i, &(Matrix3::identity() * c)).unwrap();
        }
    }
    a
}

fn run(
    a: &BlockMatrix,
    b: &[Vector3<f64>],
    z: &[Vector3<f64>],
    cons: &[Constraint],
    params: &PcgParams,
    form: PrecondForm,
    reference: Reference,
) -> (Vec<Vector3<f64>>, PcgInfo) {
    let mut dv = vec![Vector3::zeros(); a.n()];
    let sys = System::new(a, b, z, cons);
    let info = solve_mpcg_impl(
        &mut dv,
        &sys,
        params,
        &mut PcgWorkspace::new(),
        form,
        reference,
    )
    .unwrap();
    (dv, info)
}

fn max_rel_err(x: &[Vector3<f64>], reference: &[Vector3<f64>]) -> f64 {
    let num: f64 = x
        .iter()
        .zip(reference)
        .map(|(a, b)| (a - b).norm_squared())
        .sum();
    let den: f64 = reference.iter().map(|b| b.norm_squared()).sum();
    (num / den).sqrt()
}

#[test]
fn jacobi_divides_by_the_diagonal() {
    let n = 200;
    let a = badly_scaled_chain(n);
    let b: Vec<Vector3<f64>> = (0..n)
        .map(|i| Vector3::new(1.0, (i as f64).sin(), (i as f64 * 0.3).cos()))
        .collect();
    let z = vec![Vector3::zeros(); n];
    let cons = vec![Constraint::Free; n];
    let params = PcgParams {
        tolerance: 1e-8,
        max_iterations: 2000,
        preconditioner: Preconditioner::Diagonal,
    };
    let (dv, good) = run(
        &a,
        &b,
        &z,
        &cons,
        &params,
        PrecondForm::Divide,
        Reference::FilteredResidual,
    );
    let (_, paper) = run(
        &a,
        &b,
        &z,
        &cons,
        &params,
        PrecondForm::PaperMultiply,
        Reference::FilteredResidual,
    );
    let mut direct = vec![Vector3::zeros(); n];
    solve_direct(&mut direct, &a, &b, &z, &cons).unwrap();
    assert!(good.converged, "{good:?}");
    // Preconditioned operator I + L has condition <= 9: CG needs few dozen iterations.
    assert!(good.iterations <= 40, "{good:?}");
    assert!(max_rel_err(&dv, &direct) < 1e-6);
    // Multiplying by the diagonal squares the bad scaling: far more iterations or none.
    assert!(
        !paper.converged || paper.iterations > 10 * good.iterations,
        "divide {good:?} vs multiply {paper:?}"
    );
    // Block-Jacobi contains the Jacobi scaling and converges as fast.
    let block = PcgParams {
        preconditioner: Preconditioner::BlockJacobi,
        ..params
    };
    let (_, bj) = run(
        &a,
        &b,
        &z,
        &cons,
        &block,
        PrecondForm::Divide,
        Reference::FilteredResidual,
    );
    assert!(bj.converged && bj.iterations <= good.iterations);
    eprintln!("Jacobi divide {good:?}; paper multiply {paper:?}; block-Jacobi {bj:?}");
}

/// Matrix, right-hand side, targets and constraints of a test system.
type TestSystem = (
    BlockMatrix,
    Vec<Vector3<f64>>,
    Vec<Vector3<f64>>,
    Vec<Constraint>,
);

/// Chain with particle 0 fixed and moved by a large target `z`, no external impulse
/// (`b = 0`): the whole response comes from `z`.
fn pulled_chain(n: usize) -> TestSystem {
    let pairs: Vec<(usize, usize)> = (1..n).map(|i| (i - 1, i)).collect();
    let mut a = BlockMatrix::new(n, &pairs).unwrap();
    let k = Matrix3::from_diagonal(&Vector3::new(30.0, 20.0, 10.0));
    for i in 0..n {
        a.add_diagonal(i, &Matrix3::identity());
        if i > 0 {
            a.add_block(i - 1, i, &(-k)).unwrap();
            a.add_diagonal(i - 1, &k);
            a.add_diagonal(i, &k);
        }
    }
    let b = vec![Vector3::zeros(); n];
    let mut z = vec![Vector3::zeros(); n];
    z[0] = Vector3::new(0.0, 0.0, 10.0);
    let mut cons = vec![Constraint::Free; n];
    cons[0] = Constraint::Fixed;
    (a, b, z, cons)
}

#[test]
fn stopping_reference_uses_filtered_initial_residual() {
    let n = 50;
    let (a, b, z, cons) = pulled_chain(n);
    let params = PcgParams {
        tolerance: 1e-8,
        max_iterations: 400,
        preconditioner: Preconditioner::Diagonal,
    };
    let mut direct = vec![Vector3::zeros(); n];
    solve_direct(&mut direct, &a, &b, &z, &cons).unwrap();
    assert!(
        direct[1].z > 1.0,
        "the pull must propagate: {:?}",
        direct[1]
    );

    let (dv, ours) = run(
        &a,
        &b,
        &z,
        &cons,
        &params,
        PrecondForm::Divide,
        Reference::FilteredResidual,
    );
    assert!(ours.converged, "{ours:?}");
    assert!(ours.iterations < params.max_iterations / 2);
    assert!(max_rel_err(&dv, &direct) < 1e-6);
    assert_eq!(dv[0], z[0]);

    // The paper's reference: filter(b) = 0 so delta0 = 0 and the test `delta > eps^2 * 0` only lets
    // go when the residual underflows to exactly zero (or at max_iterations): many times the
    // work for digits far below rounding.
    let (_, paper) = run(
        &a,
        &b,
        &z,
        &cons,
        &params,
        PrecondForm::Divide,
        Reference::PaperFilteredB,
    );
    assert!(
        paper.iterations >= 5 * ours.iterations,
        "ours {ours:?} vs paper {paper:?}"
    );
    let short = PcgParams {
        max_iterations: 5 * ours.iterations,
        ..params
    };
    let (_, paper_short) = run(
        &a,
        &b,
        &z,
        &cons,
        &short,
        PrecondForm::Divide,
        Reference::PaperFilteredB,
    );
    assert!(!paper_short.converged, "{paper_short:?}");
    eprintln!("b = 0, large z: ours {ours:?}; paper reference {paper:?}");
}

#[test]
fn paper_reference_stops_at_once_with_a_wrong_answer() {
    // Particle 0 fixed and moved by z0; particle 1 free with an impulse that almost cancels
    // the pull: S b is large but the true initial residual S (b - A z) is tiny.
    let (m, k) = (1.0, 100.0);
    let mut a = BlockMatrix::new(2, &[(0, 1)]).unwrap();
    a.add_diagonal(0, &(Matrix3::identity() * (m + k)));
    a.add_diagonal(1, &(Matrix3::identity() * (m + k)));
    a.add_block(0, 1, &(Matrix3::identity() * -k)).unwrap();
    let z0 = Vector3::new(0.2, -0.1, 0.3);
    let delta = 1e-4;
    let z = [z0, Vector3::zeros()];
    let b = [Vector3::zeros(), -z0 * (k * (1.0 - delta))];
    let cons = [Constraint::Fixed, Constraint::Free];
    let exact = z0 * (delta * k / (m + k));
    let params = PcgParams {
        tolerance: 1e-3,
        ..Default::default()
    };
    let (dv, ours) = run(
        &a,
        &b,
        &z,
        &cons,
        &params,
        PrecondForm::Divide,
        Reference::FilteredResidual,
    );
    assert!(ours.converged && ours.iterations >= 1, "{ours:?}");
    assert!((dv[1] - exact).norm() <= 1e-3 * exact.norm());
    let (dv_paper, paper) = run(
        &a,
        &b,
        &z,
        &cons,
        &params,
        PrecondForm::Divide,
        Reference::PaperFilteredB,
    );
    assert_eq!(paper.iterations, 0, "{paper:?}");
    // 100 % relative error on the free particle.
    assert_eq!(dv_paper[1], Vector3::zeros());
}
