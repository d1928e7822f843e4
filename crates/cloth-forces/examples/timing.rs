//! Rough timing of `ClothModel::evaluate` on the paper's 2601-vertex sheet (not a benchmark:
//! the workspace benches live in the top-level `benches/`), for both bend models, plus the
//! matrix pattern each needs and one implicit-step solve (assemble `A = M - h dfdv - h^2 dfdx`
//! on the mesh pattern, modified PCG) as a proxy for the per-frame cost.
//!
//! `cargo run -p cloth-forces --release --example timing`

use std::time::Instant;

use cloth_forces::{
    BendModel, ClothModel, Definiteness, Evaluation, External, Material, Par, Vec3,
};
use cloth_mesh::{GridPattern, grid};
use cloth_solver::{BlockMatrix, Constraint, Matrix3, PcgParams, PcgWorkspace, System, solve_mpcg};

/// Medians of `reps` interleaved timings (seconds) of `f` and `g` (interleaving makes the two
/// see the same load on a shared machine).
fn paired(reps: usize, mut f: impl FnMut(), mut g: impl FnMut()) -> (f64, f64) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        let s = Instant::now();
        f();
        a.push(s.elapsed().as_secs_f64());
        let s = Instant::now();
        g();
        b.push(s.elapsed().as_secs_f64());
    }
    a.sort_by(|x, y| x.total_cmp(y));
    b.sort_by(|x, y| x.total_cmp(y));
    (a[reps / 2], b[reps / 2])
}

/// Median of `reps` timings (seconds) of `f`.
fn median(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(|a, b| a.total_cmp(b));
    t[reps / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mesh = grid(51, 51, 1.0, 1.0, GridPattern::Alternating)?;
    let n = mesh.num_vertices();
    let x: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| {
            Vec3::new(
                1.01 * p.x,
                0.05 * (7.0 * p.x).sin() * (5.0 * p.z).cos(),
                0.99 * p.z,
            )
        })
        .collect();
    let v: Vec<Vec3> = x.iter().map(|p| Vec3::new(0.0, p.x, 0.1)).collect();
    println!(
        "51 x 51 alternating sheet: {n} vertices, mesh pattern {} pairs",
        mesh.vertex_pairs().len()
    );
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    for def in [Definiteness::Clamped, Definiteness::Exact] {
        let make = |bend_model| {
            let m = Material {
                bend_model,
                ..Material::default()
            };
            ClothModel::new(&mesh, &m, def)
        };
        let (hinge, shape) = (make(BendModel::Hinge)?, make(BendModel::ShapeOperator)?);
        let (mut eh, mut es) = (Evaluation::default(), Evaluation::default());
        let (th, ts) = pool.install(|| {
            hinge.evaluate(&x, &v, &mut eh, Par::Seq);
            shape.evaluate(&x, &v, &mut es, Par::Seq);
            paired(
                301,
                || hinge.evaluate(&x, &v, &mut eh, Par::Seq),
                || shape.evaluate(&x, &v, &mut es, Par::Seq),
            )
        });
        println!(
            "{def:?}: evaluate hinge {:.3} ms, shape operator {:.3} ms (x{:.2}; interleaved medians of 301, 1 thread)",
            th * 1e3,
            ts * 1e3,
            ts / th
        );
    }
    for def in [Definiteness::Clamped, Definiteness::Exact] {
        for model_kind in [BendModel::Hinge, BendModel::ShapeOperator] {
            let material = Material {
                bend_model: model_kind,
                ..Material::default()
            };
            let t_new = median(5, || {
                ClothModel::new(&mesh, &material, def)
                    .map(|_| ())
                    .unwrap_or(())
            });
            let model = ClothModel::new(&mesh, &material, def)?;
            let mut ev = Evaluation::default();
            let t_eval = pool.install(|| {
                model.evaluate(&x, &v, &mut ev, Par::Seq);
                median(101, || model.evaluate(&x, &v, &mut ev, Par::Seq))
            });
            let extra = model
                .vertex_pairs()
                .iter()
                .filter(|p| mesh.vertex_pairs().binary_search(p).is_err())
                .count();
            println!(
                "{def:?} {model_kind:?}: evaluate {:.3} ms (median of 101, 1 thread), {} entries, \
                 {extra} pattern pairs beyond the mesh's, ClothModel::new {:.1} ms",
                t_eval * 1e3,
                ev.entries().len(),
                t_new * 1e3
            );
            if def != Definiteness::Clamped {
                continue;
            }
            // One implicit step's solve, h = 1/30 s, corners pinned, from rest velocity v.
            let ext = External::default();
            ext.accumulate(&model, &x, &v, &mut ev);
            let h = 1.0 / 30.0;
            let mut a = BlockMatrix::new(n, mesh.vertex_pairs())?;
            let plan = a.plan(ev.entries())?;
            let blocks: Vec<Matrix3<f64>> = ev
                .dfdx()
                .iter()
                .zip(ev.dfdv())
                .map(|(kx, kv)| -(kv * h) - kx * (h * h))
                .collect();
            let diag: Vec<Matrix3<f64>> = model
                .masses()
                .iter()
                .map(|&m| Matrix3::from_diagonal_element(m))
                .collect();
            a.assemble(&plan, &blocks, Some(&diag));
            let w: Vec<Vec3> = v.iter().map(|vi| vi * h).collect();
            let mut kw = vec![Vec3::zeros(); n];
            ev.mul_dfdx(&w, &mut kw);
            let b: Vec<Vec3> = ev
                .forces
                .iter()
                .zip(&kw)
                .map(|(f, k)| (f + k) * h)
                .collect();
            let mut cons = vec![Constraint::Free; n];
            cons[0] = Constraint::Fixed;
            cons[50] = Constraint::Fixed;
            let z = vec![Vec3::zeros(); n];
            let mut dv = vec![Vec3::zeros(); n];
            let mut ws = PcgWorkspace::default();
            let params = PcgParams::default();
            let mut iters = 0;
            let t_solve = pool.install(|| {
                median(11, || {
                    iters = solve_mpcg(
                        &mut dv,
                        &System::new(&a, &b, &z, &cons),
                        &params,
                        Par::Seq,
                        &mut ws,
                    )
                    .map(|i| i.iterations)
                    .unwrap_or(0);
                })
            });
            println!(
                "    implicit step solve (MPCG, default params): {iters} iterations, {:.3} ms",
                t_solve * 1e3
            );
        }
    }
    Ok(())
}
