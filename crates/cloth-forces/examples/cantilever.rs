//! The heavy-cantilever table of `docs/bending.md`: chord angle of a 12 x 2 cm strip clamped
//! over 3 cm, at static equilibrium, for both bend models on every mesh kind, orientation and
//! three resolutions, against the exact heavy elastica. Prints Markdown.
//!
//! `cargo run -p cloth-forces --example cantilever --release [-- quick]`

#[path = "../tests/common/mod.rs"]
mod common;

use cloth_forces::BendModel;
use common::cantilever::{
    CLAMP, Kind, LENGTH, Orientation, elastica_chord_deg, material, solve, strip,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let quick = std::env::args().any(|a| a == "quick");
    let ratios: &[f64] = if quick { &[2.0] } else { &[1.5, 2.0, 3.0] };
    let levels: &[usize] = if quick { &[8] } else { &[4, 8, 16] };
    let kinds = [
        Kind::Alternating,
        Kind::Uniform,
        Kind::Equilateral,
        Kind::Irregular,
    ];
    let orients = [
        Orientation::AlongU,
        Orientation::AlongV,
        Orientation::Diagonal,
    ];
    println!(
        "| l/c | exact | mesh | strip | cells across | vertices | hinge | shape operator | shape - exact |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut worst: f64 = 0.0;
    let mut worst_hinge: f64 = 0.0;
    for &ratio in ratios {
        let exact = elastica_chord_deg(ratio);
        let c = (LENGTH - CLAMP) / ratio;
        for kind in kinds {
            for orient in orients {
                for &m in levels {
                    let s = strip(kind, orient, m);
                    let h = solve(&s, &material(BendModel::Hinge, c))?;
                    let q = solve(&s, &material(BendModel::ShapeOperator, c))?;
                    worst = worst.max((q.chord_deg - exact).abs());
                    worst_hinge = worst_hinge.max((h.chord_deg - exact).abs());
                    println!(
                        "| {ratio} | {exact:.2} | {kind:?} | {orient:?} | {m} | {} | {:.2} | {:.2} | {:+.2} |",
                        s.mesh.num_vertices(),
                        h.chord_deg,
                        q.chord_deg,
                        q.chord_deg - exact
                    );
                    eprintln!(
                        "  iterations hinge {} shape {}, residual {:.1e} {:.1e}",
                        h.iterations, q.iterations, h.residual, q.residual
                    );
                }
            }
        }
    }
    println!();
    println!("Largest |chord - exact|: shape operator {worst:.2} deg, hinge {worst_hinge:.2} deg.");
    Ok(())
}
