//! Sweeps the explicit integrator's projection needs per step, by long-range variant: the
//! measurements behind the choice of the spanning-tree projection and the global fallback
//! (see the `cloth_sim::explicit` module's documentation).
//!
//! `cargo run --release -p cloth-sim --example verlet_iterations [-- SCENE [SECONDS [VARIANT [STEPS [GRID]]]]]`
//!
//! SCENE is `hanging` (the hanging sheet of `scenes/hanging_verlet.toml` at 51 x 51, 1 cm
//! edges, the default), `fixed` (`scenes/fixed_sheet.toml` with the Verlet integrator) or
//! `sphere` (`scenes/drape_sphere.toml` with the Verlet integrator, 31 x 31). Every step is a
//! frame, so each step's count is seen; the run covers SECONDS of simulated time (default 1)
//! at each step. The cap is raised to 5000 so that the counts are the sweeps needed, not the
//! cap; "capped" counts the steps that still ended above the tolerance. VARIANT runs one
//! variant only (default: all): `none`, `tethers` or `tree` (the long-range part, sweeps
//! only), `global` (the tree, with the global projection from the first sweep) or
//! `fallback` (the tree, with the global projection after the default 50 sweeps: the
//! shipped default); `all` runs all. STEPS (default all) lists the step sizes, e.g.
//! `1/60,1/30`. GRID (optional fifth argument) sets the grid to GRID x GRID. "global/step"
//! counts the global projections per step (each one or two sparse Cholesky factorisations).

use cloth_sim::explicit::{DEFAULT_GLOBAL_AFTER, LongRange};
use cloth_sim::prelude::*;
use cloth_sim::scene::{IntegratorKind, MeshSpec, SolverSettings};
use std::path::PathBuf;

fn scene(name: &str, n: Option<usize>) -> Scene {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenes");
    let (file, grid) = match name {
        "fixed" => ("fixed_sheet.toml", n),
        "sphere" => ("drape_sphere.toml", n.or(Some(31))),
        _ => ("hanging_verlet.toml", n.or(Some(51))),
    };
    let mut s = Scene::load(root.join(file)).expect("scene loads");
    if let (Some(n), MeshSpec::Grid { nx, ny, .. }) = (grid, &mut s.cloths[0].mesh) {
        (*nx, *ny) = (n, n);
    }
    s.cloths[0].self_collision = false;
    s
}

/// The variants: label, long range, sweeps before the global projection.
const VARIANTS: [(&str, LongRange, usize); 5] = [
    ("none", LongRange::None, usize::MAX),
    ("tethers", LongRange::Tethers, usize::MAX),
    ("tree", LongRange::Tree, usize::MAX),
    ("global", LongRange::Tree, 0),
    ("fallback", LongRange::Tree, DEFAULT_GLOBAL_AFTER),
];

/// What a run measured per step.
struct Measured {
    mean: f64,
    max: usize,
    capped: usize,
    worst: f64,
    ms: f64,
    global: f64,
}

/// One run of `base` at step `h` for `seconds`, with `long` and the global projection after
/// `global_after` sweeps.
fn run(base: &Scene, h: f64, (long, global_after): (LongRange, usize), seconds: f64) -> Measured {
    let mut s = base.clone();
    s.solver = SolverSettings::defaults(IntegratorKind::Verlet, 1.0 / h);
    s.run.fps = 1.0 / h;
    s.solver.verlet_h = h;
    s.solver.strain_iterations = 5000;
    s.solver.strain_long_range = long;
    s.solver.strain_global_after = global_after;
    let mut sim = build_simulation(&s).expect("scene builds");
    let steps = (seconds / h).round() as usize;
    let (mut sum, mut max, mut capped, mut worst, mut wall) = (0, 0, 0, 0.0f64, 0.0);
    let mut global = 0;
    for _ in 0..steps {
        let st = sim.step_frame().expect("step");
        sum += st.strain_iterations;
        max = max.max(st.strain_iterations);
        capped += usize::from(st.strain_violation > s.solver.strain_tolerance);
        worst = worst.max(st.strain_violation);
        wall += st.wall;
        global += st.strain_global_solves;
    }
    let n = steps as f64;
    Measured {
        mean: sum as f64 / n,
        max,
        capped,
        worst,
        ms: wall * 1e3 / n,
        global: global as f64 / n,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args.first().map_or("hanging", String::as_str);
    let seconds: f64 = args.get(1).and_then(|f| f.parse().ok()).unwrap_or(1.0);
    let only = args.get(2).map(String::as_str);
    let steps = args.get(3).map(String::as_str);
    let grid = args.get(4).and_then(|n| n.parse().ok());
    let base = scene(name, grid);
    println!("scene {name}: {:?}, {seconds} s", base.cloths[0].mesh);
    println!(
        "| h (s) | variant | mean sweeps/step | max | global/step | capped steps | max violation | ms/step |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for per_30 in [8usize, 4, 2, 1] {
        let h = 1.0 / (30.0 * per_30 as f64);
        if steps.is_some_and(|s| !s.split(',').any(|p| p == format!("1/{}", 30 * per_30))) {
            continue;
        }
        for (label, long, after) in VARIANTS {
            if only.is_some_and(|o| o != label && o != "all") {
                continue;
            }
            let m = run(&base, h, (long, after), seconds);
            println!(
                "| 1/{} | {label} | {:.1} | {} | {:.1} | {} | {:.2e} | {:.1} |",
                30 * per_30,
                m.mean,
                m.max,
                m.global,
                m.capped,
                m.worst,
                m.ms
            );
        }
    }
}
