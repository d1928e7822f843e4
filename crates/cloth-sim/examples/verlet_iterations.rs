//! Sweeps the explicit integrator's projection needs per step, by variant: the measurements
//! behind the choice of long-range attachments, colour order and over-relaxation (see the
//! `verlet` module's documentation).
//!
//! `cargo run --release -p cloth-sim --example verlet_iterations [-- SCENE [FRAMES]]`
//!
//! SCENE is `hanging` (the hanging sheet of `scenes/hanging_verlet.toml` at 51 x 51, the
//! default), `fixed` (`scenes/fixed_sheet.toml` with the Verlet integrator) or `sphere`
//! (`scenes/drape_sphere.toml` with the Verlet integrator, 31 x 31). Every step is a frame, so
//! each step's count is seen; the run covers FRAMES steps of the largest step (1/30 s) and the
//! same simulated time at the others (default 30: one second). The cap is raised to 5000 so
//! that the counts are the sweeps needed, not the cap.

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

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args.first().map_or("hanging", String::as_str);
    let frames: usize = args.get(1).and_then(|f| f.parse().ok()).unwrap_or(30);
    let mut base = scene(name);
    if let Ok(k) = std::env::var("K") { base.solver.spring_stiffness = k.parse().unwrap(); }
    if std::env::var("TRACE").is_ok() {
        let h = 1.0 / std::env::var("HINV").ok().and_then(|v| v.parse::<f64>().ok()).unwrap_or(30.0);
        let mut s = base.clone();
        s.solver = SolverSettings::defaults(IntegratorKind::Verlet, 1.0 / h);
        if let Ok(k) = std::env::var("K") { s.solver.spring_stiffness = k.parse().unwrap(); }
        if let Ok(k) = std::env::var("KB") { s.solver.bend_spring_stiffness = k.parse().unwrap(); }
        s.run.fps = 1.0 / h;
        s.solver.verlet_h = h;
        s.solver.strain_iterations = 5000;
        s.solver.strain_relaxation = 1.0;
        if std::env::var("LR").is_ok() { s.solver.strain_long_range = LongRange::None; }
        if std::env::var("TETH").is_ok() { s.solver.strain_long_range = LongRange::Tethers; }
        let mut sim = build_simulation(&s).expect("scene builds");
        let nf = (frames as f64 / 30.0 / h).round() as usize;
        let (mut sum, mut mx, mut capped, mut wall) = (0usize, 0usize, 0usize, 0.0);
        for f in 0..nf {
            let st = sim.step_frame().expect("step");
            sum += st.strain_iterations; mx = mx.max(st.strain_iterations); capped += usize::from(st.strain_violation > 0.005); wall += st.wall;
            if std::env::var("SUM").is_ok() { if f + 1 == nf { println!("mean {:.1} max {mx} capped {capped} ms/step {:.2} ms/frame30 {:.1}", sum as f64 / nf as f64, wall * 1e3 / nf as f64, wall * 1e3 / frames as f64); } continue; }
            println!("{f} {} {:.3e} ke {:.3e} stretch {:.3} wall {:.1}ms", st.strain_iterations, st.strain_violation, st.kinetic_energy, st.max_stretch, st.wall * 1e3);
        }
        return;
    }
    println!("scene {name}: {:?}", base.cloth.mesh);
    println!("| h (s) | long range | relaxation | mean sweeps/step | max | capped steps | max violation |");
    println!("|---|---|---|---|---|---|---|");
    for steps_per_30 in [8usize, 4, 2, 1] {
        let h = 1.0 / (30.0 * steps_per_30 as f64);
        for (long, omega) in [
            (LongRange::None, 1.0),
            (LongRange::None, 1.5),
            (LongRange::Tethers, 1.0),
            (LongRange::Tree, 1.0),
            (LongRange::Tree, 1.5),
        ] {
            let mut s = base.clone();
            s.solver = SolverSettings::defaults(IntegratorKind::Verlet, 1.0 / h);
            s.run.fps = 1.0 / h;
            s.run.frames = frames * steps_per_30;
            s.solver.verlet_h = h;
            s.solver.strain_iterations = 5000;
            s.solver.strain_long_range = long;
            s.solver.strain_relaxation = omega;
            let mut sim = build_simulation(&s).expect("scene builds");
            let (mut sum, mut max, mut capped, mut worst) = (0usize, 0usize, 0usize, 0.0f64);
            for _ in 0..s.run.frames {
                let st = sim.step_frame().expect("step");
                sum += st.strain_iterations;
                max = max.max(st.strain_iterations);
                capped += usize::from(st.strain_violation > s.solver.strain_tolerance);
                worst = worst.max(st.strain_violation);
            }
            println!(
                "| 1/{} | {} | {omega} | {:.1} | {max} | {capped} | {worst:.2e} |",
                30 * steps_per_30,
                format!("{long:?}").to_lowercase(),
                sum as f64 / s.run.frames as f64
            );
        }
    }
}
