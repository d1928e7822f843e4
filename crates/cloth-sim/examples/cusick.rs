//! The Cusick drape table of `docs/bending.md`: drape coefficient of a clamped cotton disc
//! (30 cm on an 18 cm clamp) for both bend models, three resolutions and four rigidities.
//!
//! `cargo run --release -p cloth-sim --example cusick [-- SECONDS [shape] [folds=N] [rings=A,B]
//! [scale=S]]` (`shape`: the shape operator only; `folds=N`: start from N waves, see
//! `drape_seeded`; `rings=`: the disc resolutions, multiples of 5, default 10,20,40; `scale=`:
//! one bending scale instead of 1 and 4; `solver=KEY=VALUE;KEY=VALUE`: extra `[solver]` keys,
//! e.g. `solver=preconditioner="direct";cg_tolerance=1e-6`; `material=KEY=VALUE,...`: extra
//! material keys, e.g. `material=stretch_damping=0.0,shear_damping=0.0`; `relax`: after the
//! run, damped Newton to the static equilibrium nearby (`relax` of the helper) and print its
//! coefficient, fold count, residual, solves and distance too; environment variable `CUSICK_TRACE`: print the coefficient every simulated
//! second)

#[allow(dead_code)] // the example uses only part of the shared helper
#[path = "../tests/common/cusick.rs"]
mod cusick;

use cloth_sim::forces::BendModel;

fn main() {
    let seconds: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    let folds: Option<usize> =
        std::env::args().find_map(|a| a.strip_prefix("folds=").and_then(|n| n.parse().ok()));
    let list = |key: &str, default: &[f64]| -> Vec<f64> {
        std::env::args()
            .find_map(|a| {
                a.strip_prefix(key)
                    .map(|l| l.split(',').filter_map(|v| v.parse().ok()).collect())
            })
            .unwrap_or_else(|| default.to_vec())
    };
    let rings_list: Vec<usize> = list("rings=", &[10.0, 20.0, 40.0])
        .into_iter()
        .map(|r| r as usize)
        .collect();
    let scales = list("scale=", &[1.0, 4.0]);
    let solver: String = std::env::args()
        .find_map(|a| a.strip_prefix("solver=").map(|s| s.replace(';', "\n")))
        .unwrap_or_default();
    let material: String = std::env::args()
        .find_map(|a| a.strip_prefix("material=").map(str::to_string))
        .unwrap_or_default();
    let relax = std::env::args().any(|a| a == "relax");
    let options = cusick::Options {
        folds,
        solver: &solver,
        material: &material,
        relax,
    };
    if relax {
        println!(
            "| model | bend x cotton | rings | vertices | drape coefficient | folds | KE end / peak | at equilibrium | folds | residual / weight | solves | moved (mm) | wall s |"
        );
        println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    } else {
        println!(
            "| model | bend x cotton | rings | vertices | drape coefficient | folds | KE end / peak | wall s |"
        );
        println!("|---|---|---|---|---|---|---|---|");
    }
    let models: Vec<BendModel> = if std::env::args().any(|a| a == "shape") {
        vec![BendModel::ShapeOperator]
    } else {
        vec![BendModel::ShapeOperator, BendModel::Hinge]
    };
    for model in models {
        for &scale in &scales {
            for &rings in &rings_list {
                let t = std::time::Instant::now();
                let d = cusick::drape_seeded(rings, scale, model, seconds, &options);
                let settled = d.relaxed.map_or(String::new(), |r| {
                    format!(
                        " {:.3} | {} | {:.1e} | {} | {:.2} |",
                        r.coefficient,
                        r.folds,
                        r.residual,
                        r.iterations,
                        r.moved * 1e3
                    )
                });
                println!(
                    "| {model:?} | {scale} | {rings} | {} | {:.3} | {} | {:.1e} |{settled} {:.1} |",
                    d.vertices,
                    d.coefficient,
                    d.folds,
                    d.rest,
                    t.elapsed().as_secs_f64()
                );
            }
        }
    }
}
