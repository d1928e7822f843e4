//! Rough timing of `ClothModel::evaluate` on the paper's 2601-vertex sheet (not a benchmark:
//! the workspace benches live in the top-level `benches/`).
//!
//! `cargo run -p cloth-forces --release --example timing`

use cloth_forces::Par;
use std::time::Instant;

use cloth_forces::{ClothModel, Definiteness, Evaluation, Material, Vec3};
use cloth_mesh::{GridPattern, grid};

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
    for def in [
        Definiteness::Clamped,
        Definiteness::Exact,
        Definiteness::Projected,
    ] {
        let model = ClothModel::new(&mesh, &Material::default(), def)?;
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()?;
            let reps = if def == Definiteness::Projected {
                5
            } else {
                200
            };
            let (t_eval, t_mul) = pool.install(|| {
                let mut ev = Evaluation::default();
                model.evaluate(&x, &v, &mut ev, Par::default());
                let t = Instant::now();
                for _ in 0..reps {
                    model.evaluate(&x, &v, &mut ev, Par::default());
                }
                let te = t.elapsed().as_secs_f64() / reps as f64;
                let mut out = vec![Vec3::zeros(); n];
                let t = Instant::now();
                for _ in 0..reps {
                    ev.mul_dfdx(&v, &mut out);
                }
                (te, t.elapsed().as_secs_f64() / reps as f64)
            });
            println!(
                "{def:?} threads={threads}: evaluate {:.3} ms, mul_dfdx {:.3} ms ({} vertices)",
                t_eval * 1e3,
                t_mul * 1e3,
                n
            );
        }
    }
    Ok(())
}
