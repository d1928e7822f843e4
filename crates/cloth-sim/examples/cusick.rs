//! The Cusick drape table of `docs/bending.md`: drape coefficient of a clamped cotton disc
//! (30 cm on an 18 cm clamp) for both bend models, three resolutions and four rigidities.
//!
//! `cargo run --release -p cloth-sim --example cusick [-- SECONDS [shape] [folds=N]]` (`shape`: the
//! shape operator only; `folds=N`: start from N waves, see `drape_seeded`)

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
    println!(
        "| model | bend x cotton | rings | vertices | drape coefficient | folds | KE end / peak | wall s |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let models: Vec<BendModel> = if std::env::args().any(|a| a == "shape") {
        vec![BendModel::ShapeOperator]
    } else {
        vec![BendModel::ShapeOperator, BendModel::Hinge]
    };
    for model in models {
        for scale in [1.0, 4.0] {
            for rings in [10, 20, 40] {
                let t = std::time::Instant::now();
                let d = cusick::drape_seeded(rings, scale, model, seconds, folds);
                println!(
                    "| {model:?} | {scale} | {rings} | {} | {:.3} | {} | {:.1e} | {:.1} |",
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
