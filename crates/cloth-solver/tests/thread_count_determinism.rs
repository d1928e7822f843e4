//! Results are bitwise identical for any rayon pool size (fixed chunks, in-order reductions):
//! multiply, assembly, lumping onto a sub-pattern, constraint forces, MPCG with the Jacobi and
//! block-Jacobi preconditioners. The multigrid hierarchy's setup and V-cycles are checked on a cloth matrix
//! in cloth-forces' `tests/solver_on_cloth.rs`.

mod common;

use cloth_solver::Par;
use cloth_solver::{
    BlockMatrix, Matrix3, PcgInfo, PcgParams, PcgWorkspace, Preconditioner, System, Vector3,
    constraint_forces, solve_mpcg,
};
use common::{Rng, random_system};

fn bits(v: &[Vector3<f64>]) -> Vec<[u64; 3]> {
    v.iter()
        .map(|x| [x.x.to_bits(), x.y.to_bits(), x.z.to_bits()])
        .collect()
}

fn mat_bits(m: &Matrix3<f64>) -> [u64; 9] {
    let mut out = [0u64; 9];
    for (o, v) in out.iter_mut().zip(m.iter()) {
        *o = v.to_bits();
    }
    out
}

struct Outputs {
    y: Vec<[u64; 3]>,
    assembled: Vec<[u64; 9]>,
    lumped: Vec<[u64; 9]>,
    solves: Vec<(Vec<[u64; 3]>, PcgInfo)>,
    e: Vec<[u64; 3]>,
}

fn run_all(sys: &common::System, x: &[Vector3<f64>]) -> Outputs {
    let n = sys.n;
    let mut y = vec![Vector3::zeros(); n];
    sys.a.mul_vec(x, &mut y);

    let mut m = BlockMatrix::new(n, &sys.pairs).unwrap();
    let plan = m.plan(&sys.entries).unwrap();
    m.assemble(&plan, &sys.blocks, Some(&sys.masses));
    let mut assembled = Vec::new();
    for i in 0..n {
        assembled.push(mat_bits(&m.diagonal_block(i)));
    }
    for &(i, j) in &sys.pairs {
        let b: Matrix3<f64> = m.block(i, j).unwrap();
        assembled.push(mat_bits(&b));
    }

    // Every other pair kept, the rest lumped onto the diagonal.
    let kept: Vec<(usize, usize)> = sys.pairs.iter().copied().step_by(2).collect();
    let mut lumped = BlockMatrix::new(n, &kept).unwrap();
    sys.a.lump_into(&mut lumped).unwrap();
    let lumped = (0..n)
        .map(|i| mat_bits(&lumped.diagonal_block(i)))
        .collect();

    let mut solves = Vec::new();
    let mut last = vec![Vector3::zeros(); n];
    for pre in [Preconditioner::Diagonal, Preconditioner::BlockJacobi] {
        let params = PcgParams {
            tolerance: 1e-6,
            max_iterations: 500,
            preconditioner: pre,
        };
        let mut dv = vec![Vector3::zeros(); n];
        let info = solve_mpcg(
            &mut dv,
            &System::new(&sys.a, &sys.b, &sys.z, &sys.constraints),
            &params,
            Par::default(),
            &mut PcgWorkspace::new(),
        )
        .unwrap();
        solves.push((bits(&dv), info));
        last = dv;
    }
    let mut e = vec![Vector3::zeros(); n];
    constraint_forces(&sys.a, &last, &sys.b, &mut e);
    Outputs {
        y: bits(&y),
        assembled,
        lumped,
        solves,
        e: bits(&e),
    }
}

#[test]
fn bitwise_identical_for_1_2_and_3_threads() {
    // Several row chunks (n > 8 * 256) so that the parallel split really happens.
    let n = 2600;
    let sys = random_system(n, 3 * n, 5.0, 0.2, 2026);
    let mut rng = Rng::new(99);
    let x: Vec<Vector3<f64>> = (0..n).map(|_| rng.vec3(1.0)).collect();
    let outputs: Vec<Outputs> = [1, 2, 3]
        .iter()
        .map(|&t| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .unwrap()
                .install(|| run_all(&sys, &x))
        })
        .collect();
    for o in &outputs[1..] {
        assert!(o.y == outputs[0].y, "mul_vec differs");
        assert!(o.assembled == outputs[0].assembled, "assemble differs");
        assert!(o.lumped == outputs[0].lumped, "lump_into differs");
        assert!(o.e == outputs[0].e, "constraint_forces differs");
        for (k, (s, s0)) in o.solves.iter().zip(&outputs[0].solves).enumerate() {
            assert!(s.1.converged && s.1.iterations > 3, "solve {k}: {:?}", s.1);
            assert_eq!(s.1, s0.1, "solve {k} info differs");
            assert!(s.0 == s0.0, "solve {k} dv differs");
        }
    }
}
