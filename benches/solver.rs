//! The linear solve on the paper's draping mesh: a realistic cloth matrix
//! `A = M - h df/dv - h^2 df/dx` on the 51 x 51 = 2601-vertex grid (edges plus bend stencils),
//! h = 1/30 s. Measures one multiply, one full MPCG solve to a 1e-3 relative residual with
//! each preconditioner (iterations are printed), and the faer direct solve, in one run.

use cloth::forces::{ClothModel, Definiteness, Evaluation, Material};
use cloth::mesh::{GridPattern, Par, Vec3, grid};
use cloth::solver::{
    BlockMatrix, Constraint, PcgParams, PcgWorkspace, Preconditioner, System, solve_direct,
    solve_mpcg,
};
use criterion::{Criterion, criterion_group, criterion_main};
use nalgebra::Matrix3;
use std::hint::black_box;

struct Problem {
    a: BlockMatrix,
    b: Vec<Vec3>,
    z: Vec<Vec3>,
    constraints: Vec<Constraint>,
}

fn problem() -> Problem {
    let n = 51;
    let mesh = grid(n, n, 1.0, 1.0, GridPattern::Alternating).unwrap();
    let material = Material::default();
    let model = ClothModel::new(&mesh, &material, Definiteness::default()).unwrap();
    let x: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| Vec3::new(p.x * 1.01, 0.1 * (4.0 * p.x).sin() * (3.0 * p.z).cos(), p.z))
        .collect();
    let v = vec![Vec3::new(0.0, -0.5, 0.0); x.len()];
    let mut eval = Evaluation::default();
    model.evaluate(&x, &v, &mut eval, Par::default());
    let h = 1.0 / 30.0;
    let masses = mesh.vertex_masses(material.density).unwrap();
    let mut a = BlockMatrix::new(x.len(), mesh.vertex_pairs()).unwrap();
    let plan = a.plan(eval.entries()).unwrap();
    let blocks: Vec<Matrix3<f64>> = eval
        .dfdx()
        .iter()
        .zip(eval.dfdv())
        .map(|(kx, kv)| -(kv * h) - kx * (h * h))
        .collect();
    let diag: Vec<Matrix3<f64>> = masses
        .iter()
        .map(|&m| Matrix3::from_diagonal_element(m))
        .collect();
    a.assemble(&plan, &blocks, Some(&diag));
    let g = Vec3::new(0.0, -9.81, 0.0);
    let b: Vec<Vec3> = eval
        .forces
        .iter()
        .zip(&masses)
        .map(|(f, &m)| (f + g * m) * h)
        .collect();
    let mut constraints = vec![Constraint::Free; x.len()];
    constraints[0] = Constraint::Fixed;
    constraints[n - 1] = Constraint::Fixed;
    Problem {
        a,
        b,
        z: vec![Vec3::zeros(); x.len()],
        constraints,
    }
}

fn bench(c: &mut Criterion) {
    let p = problem();
    let n = p.b.len();
    let mut y = vec![Vec3::zeros(); n];
    let mut g = c.benchmark_group("solver_2601");
    g.bench_function("multiply", |bch| {
        bch.iter(|| p.a.mul_vec(black_box(&p.b), &mut y))
    });
    for (name, pre) in [
        ("diagonal", Preconditioner::Diagonal),
        ("block_jacobi", Preconditioner::BlockJacobi),
    ] {
        let params = PcgParams {
            tolerance: 1e-3,
            max_iterations: 10_000,
            preconditioner: pre,
        };
        let mut ws = PcgWorkspace::default();
        let mut dv = vec![Vec3::zeros(); n];
        let sys = System::new(&p.a, &p.b, &p.z, &p.constraints);
        let info = solve_mpcg(&mut dv, &sys, &params, Par::default(), &mut ws).unwrap();
        println!(
            "mpcg {name}: {} iterations to relative residual {:.2e} (converged: {})",
            info.iterations, info.relative_residual, info.converged
        );
        g.bench_function(format!("mpcg_{name}_1e-3"), |bch| {
            bch.iter(|| solve_mpcg(&mut dv, &sys, &params, Par::default(), &mut ws).unwrap())
        });
    }
    let mut dv = vec![Vec3::zeros(); n];
    g.sample_size(10);
    g.bench_function("direct_cholesky", |bch| {
        bch.iter(|| solve_direct(&mut dv, &p.a, &p.b, &p.z, &p.constraints).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
