//! Short benches of the solver kernels on a cloth-like 51 x 51 grid (2601 particles, each
//! coupled to its 6 triangle-mesh neighbours: ~7 blocks per row).
//!
//! `cargo bench -p cloth-solver --bench solver -- --quick` (set RAYON_NUM_THREADS=1 for one core).

use cloth_solver::Par;
use cloth_solver::{
    BlockMatrix, Constraint, DirectSolver, Matrix3, Multigrid, MultigridParams, PcgParams,
    PcgWorkspace, Preconditioner, System, Vector3, solve_mpcg, solve_mpcg_multigrid,
};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

const SIDE: usize = 51;

fn grid_pairs() -> Vec<(usize, usize)> {
    let id = |r: usize, c: usize| r * SIDE + c;
    let mut p = Vec::new();
    for r in 0..SIDE {
        for c in 0..SIDE {
            if c + 1 < SIDE {
                p.push((id(r, c), id(r, c + 1)));
            }
            if r + 1 < SIDE {
                p.push((id(r, c), id(r + 1, c)));
            }
            if r + 1 < SIDE && c + 1 < SIDE {
                p.push((id(r, c), id(r + 1, c + 1)));
            }
        }
    }
    p
}

/// Spring-like SPD matrix: mass + sum over edges of k d d^T coupling (a graph Laplacian
/// with anisotropic 3x3 blocks), stiff relative to the mass as in cloth.
fn grid_matrix() -> BlockMatrix {
    let n = SIDE * SIDE;
    let pairs = grid_pairs();
    let mut a = BlockMatrix::new(n, &pairs).unwrap();
    for i in 0..n {
        a.add_diagonal(i, &(Matrix3::identity() * 1e-4));
    }
    for (e, &(i, j)) in pairs.iter().enumerate() {
        let d = Vector3::new(1.0, 0.3 * (e as f64).sin(), 0.2 * (e as f64).cos()).normalize();
        let k = d * d.transpose() * 5.0 + Matrix3::identity() * 0.5;
        a.add_diagonal(i, &k);
        a.add_diagonal(j, &k);
        a.add_block(i, j, &(-k)).unwrap();
    }
    a
}

/// Upper-triangle-only CSR (diagonal apart), serial symmetric multiply: the alternative layout.
struct Upper {
    diag: Vec<Matrix3<f64>>,
    row_ptr: Vec<usize>,
    cols: Vec<usize>,
    vals: Vec<Matrix3<f64>>,
}

impl Upper {
    fn from(a: &BlockMatrix) -> Self {
        let n = a.n();
        let mut u = Upper {
            diag: Vec::new(),
            row_ptr: vec![0],
            cols: Vec::new(),
            vals: Vec::new(),
        };
        for i in 0..n {
            u.diag.push(a.diagonal_block(i));
            for j in i + 1..(i + SIDE + 2).min(n) {
                if let Some(b) = a.block(i, j) {
                    u.cols.push(j);
                    u.vals.push(b);
                }
            }
            u.row_ptr.push(u.cols.len());
        }
        u
    }
    fn mul(&self, x: &[Vector3<f64>], y: &mut [Vector3<f64>]) {
        for (i, yi) in y.iter_mut().enumerate() {
            *yi = self.diag[i] * x[i];
        }
        for i in 0..self.diag.len() {
            let mut acc = Vector3::zeros();
            for k in self.row_ptr[i]..self.row_ptr[i + 1] {
                let j = self.cols[k];
                acc += self.vals[k] * x[j];
                y[j] += self.vals[k].tr_mul(&x[i]);
            }
            y[i] += acc;
        }
    }
}

fn benches(c: &mut Criterion) {
    let a = grid_matrix();
    let n = a.n();
    let x: Vec<Vector3<f64>> = (0..n)
        .map(|i| Vector3::new((i as f64).sin(), (i as f64 * 0.7).cos(), 0.1))
        .collect();
    let mut y = vec![Vector3::zeros(); n];
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    c.bench_function("mul_vec full rows, 2601 blocks, 1 thread", |bch| {
        one.install(|| bch.iter(|| a.mul_vec(black_box(&x), &mut y)))
    });
    c.bench_function("mul_vec full rows, 2601 blocks, default pool", |bch| {
        bch.iter(|| a.mul_vec(black_box(&x), &mut y))
    });
    let u = Upper::from(&a);
    c.bench_function("mul_vec upper-only serial, 2601 blocks", |bch| {
        bch.iter(|| u.mul(black_box(&x), &mut y))
    });

    // A drape-like solve: two corners fixed, gravity-like impulse.
    let mut cons = vec![Constraint::Free; n];
    cons[0] = Constraint::Fixed;
    cons[SIDE - 1] = Constraint::Fixed;
    let b = vec![Vector3::new(0.0, 0.0, -1e-4 * 9.81 / 60.0); n];
    let z = vec![Vector3::zeros(); n];
    let mut ws = PcgWorkspace::new();
    let mut dv = vec![Vector3::zeros(); n];
    for pre in [Preconditioner::Diagonal, Preconditioner::BlockJacobi] {
        let params = PcgParams {
            tolerance: 1e-3,
            max_iterations: 2000,
            preconditioner: pre,
        };
        let info = solve_mpcg(
            &mut dv,
            &System::new(&a, &b, &z, &cons),
            &params,
            Par::default(),
            &mut ws,
        )
        .unwrap();
        eprintln!("{pre:?}: {info:?}");
        c.bench_function(
            &format!("solve_mpcg {pre:?} tol 1e-3, 2601 particles"),
            |bch| {
                bch.iter(|| {
                    solve_mpcg(
                        &mut dv,
                        &System::new(&a, &b, &z, &cons),
                        &params,
                        Par::default(),
                        &mut ws,
                    )
                    .unwrap()
                })
            },
        );
    }
    // Smoothed-aggregation multigrid (hierarchy analysed once; every solve refreshes values).
    let positions: Vec<Vector3<f64>> = (0..n)
        .map(|i| Vector3::new((i % SIDE) as f64, (i / SIDE) as f64, 0.0) / (SIDE - 1) as f64)
        .collect();
    let mut mg = Multigrid::new(
        &a,
        &positions,
        &cons,
        &MultigridParams::default(),
        Par::default(),
    )
    .unwrap();
    let params = PcgParams {
        tolerance: 1e-3,
        max_iterations: 2000,
        ..Default::default()
    };
    let info = solve_mpcg_multigrid(
        &mut dv,
        &System::new(&a, &b, &z, &cons),
        &mut mg,
        &positions,
        &params,
        Par::default(),
        &mut ws,
    )
    .unwrap();
    eprintln!("Multigrid: {info:?}");
    c.bench_function(
        "solve_mpcg_multigrid tol 1e-3 (setup included), 2601 particles",
        |bch| {
            bch.iter(|| {
                solve_mpcg_multigrid(
                    &mut dv,
                    &System::new(&a, &b, &z, &cons),
                    &mut mg,
                    &positions,
                    &params,
                    Par::default(),
                    &mut ws,
                )
                .unwrap()
            })
        },
    );
    let mut direct = DirectSolver::new(&a).unwrap();
    c.bench_function(
        "DirectSolver::solve (numeric Cholesky + solve), 2601 particles",
        |bch| bch.iter(|| direct.solve(&mut dv, &a, &b, &z, &cons).unwrap()),
    );
}

criterion_group! {
    name = group;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(1));
    targets = benches
}
criterion_main!(group);
