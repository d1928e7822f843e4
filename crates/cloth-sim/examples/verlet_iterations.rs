//! Sweeps the explicit integrator's projection needs per step, by long-range variant: the
//! measurements behind the choice of the spanning-tree projection (see the `verlet` module's
//! documentation).
//!
//! `cargo run --release -p cloth-sim --example verlet_iterations [-- SCENE [SECONDS [VARIANT]]]`
//!
//! SCENE is `hanging` (the hanging sheet of `scenes/hanging_verlet.toml` at 51 x 51, 1 cm
//! edges, the default), `fixed` (`scenes/fixed_sheet.toml` with the Verlet integrator) or
//! `sphere` (`scenes/drape_sphere.toml` with the Verlet integrator, 31 x 31). Every step is a
//! frame, so each step's count is seen; the run covers SECONDS of simulated time (default 1)
//! at each step. The cap is raised to 5000 so that the counts are the sweeps needed, not the
//! cap; "capped" counts the steps that still ended above the tolerance. VARIANT (`none`,
//! `tethers` or `tree`) runs that long-range variant only (default: all three).

use cloth_sim::{IntegratorKind, LongRange, MeshSpec, Scene, SolverSettings, build_simulation};
use std::path::PathBuf;

fn scene(name: &str) -> Scene {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenes");
    let (file, grid) = match name {
        "fixed" => ("fixed_sheet.toml", None),
        "sphere" => ("drape_sphere.toml", Some(31)),
        _ => ("hanging_verlet.toml", Some(51)),
    };
    let mut s = Scene::load(&root.join(file)).expect("scene loads");
    if let (Some(n), MeshSpec::Grid { nx, ny, .. }) = (grid, &mut s.cloth.mesh) {
        (*nx, *ny) = (n, n);
    }
    s.cloth.self_collision = false;
    s
}

/// One run: mean and largest sweeps per step, capped steps, largest violation, wall per step.
fn run(base: &Scene, h: f64, long: LongRange, seconds: f64) -> (f64, usize, usize, f64, f64) {
    let mut s = base.clone();
    s.solver = SolverSettings::defaults(IntegratorKind::Verlet, 1.0 / h);
    s.run.fps = 1.0 / h;
    s.solver.verlet_h = h;
    s.solver.strain_iterations = 5000;
    s.solver.strain_long_range = long;
    let mut sim = build_simulation(&s).expect("scene builds");
    let steps = (seconds / h).round() as usize;
    let (mut sum, mut max, mut capped, mut worst, mut wall) = (0, 0, 0, 0.0f64, 0.0);
    for _ in 0..steps {
        let st = sim.step_frame().expect("step");
        sum += st.strain_iterations;
        max = max.max(st.strain_iterations);
        capped += usize::from(st.strain_violation > s.solver.strain_tolerance);
        worst = worst.max(st.strain_violation);
        wall += st.wall;
    }
    let n = steps as f64;
    (sum as f64 / n, max, capped, worst, wall * 1e3 / n)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args.first().map_or("hanging", String::as_str);
    let seconds: f64 = args.get(1).and_then(|f| f.parse().ok()).unwrap_or(1.0);
    let only = args.get(2).map(String::as_str);
    let base = scene(name);
    println!("scene {name}: {:?}, {seconds} s", base.cloth.mesh);
    println!(
        "| h (s) | long range | mean sweeps/step | max | capped steps | max violation | ms/step |"
    );
    println!("|---|---|---|---|---|---|---|");
    for per_30 in [8usize, 4, 2, 1] {
        let h = 1.0 / (30.0 * per_30 as f64);
        for long in [LongRange::None, LongRange::Tethers, LongRange::Tree] {
            let label = format!("{long:?}").to_lowercase();
            if only.is_some_and(|o| o != label) {
                continue;
            }
            let (mean, max, capped, worst, ms) = run(&base, h, long, seconds);
            println!(
                "| 1/{} | {label} | {mean:.1} | {max} | {capped} | {worst:.2e} | {ms:.1} |",
                30 * per_30
            );
        }
    }
}
