//! A Cusick-type drape test (ISO 9073-9 / BS 5058): a 30 cm disc of fabric clamped between
//! two 18 cm discs drapes under its own weight; the drape coefficient is the share of the
//! annulus outside the clamp that the fabric's shadow covers,
//! `DC = (A_shadow - A_clamp) / (A_disc - A_clamp)` (1: stays flat, 0: hangs straight down).
//!
//! The clamp is a static pin group over every vertex within the clamp radius (the disc mesh
//! has a ring there: `rings` a multiple of 5), which the simulator treats as holding those
//! triangles flat. The shadow is measured independently of the simulator: the projected
//! triangles are rasterised on a 0.5 mm grid.

use std::path::Path;

use cloth_sim::forces::BendModel;
use cloth_sim::prelude::*;

/// Normal air drag (kg/(m^2 s)): heavy, so that the fabric settles slowly and stops (drag
/// does not change the equilibrium).
pub const DRAG: f64 = 3.0;

/// Specimen radius (m).
pub const RADIUS: f64 = 0.15;
/// Clamp (pedestal) radius (m).
pub const CLAMP_RADIUS: f64 = 0.09;

/// What one drape run measured.
#[derive(Clone, Copy, Debug)]
pub struct Drape {
    /// Drape coefficient (dimensionless).
    pub coefficient: f64,
    /// Kinetic energy at the end over its peak during the run.
    pub rest: f64,
    /// Number of vertices.
    pub vertices: usize,
    /// Folds (nodes): local maxima of the rim's projected radius around the disc.
    pub folds: usize,
    /// The static equilibrium reached from the end state by [`relax`], when asked for.
    pub relaxed: Option<Settled>,
}

/// The static equilibrium that [`relax`] found from the end of a drape run.
#[derive(Clone, Copy, Debug)]
pub struct Settled {
    /// Drape coefficient at equilibrium.
    pub coefficient: f64,
    /// Folds at equilibrium.
    pub folds: usize,
    /// Largest residual force on a free vertex over the largest vertex weight.
    pub residual: f64,
    /// Linear solves of [`relax`].
    pub iterations: usize,
    /// Largest vertex displacement from the end of the run (m).
    pub moved: f64,
}

/// Options of [`drape_seeded`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Options<'a> {
    /// Start the free annulus from this many waves of 5 mm amplitude (height
    /// `5 mm cos(n phi) s^2`, s from 0 at the clamp to 1 at the rim): the same equilibrium
    /// branch (fold count) on every mesh, so that meshes can be compared.
    pub folds: Option<usize>,
    /// Extra keys of the scene's `[solver]` table (TOML lines, e.g. `preconditioner = "direct"`).
    pub solver: &'a str,
    /// Extra keys of the cloth's material table (e.g. `stretch_damping = 0.0`).
    pub material: &'a str,
    /// After the run, find the static equilibrium nearby ([`relax`], to 1e-6 of the largest
    /// vertex weight, at most 500 solves) and report it in [`Drape::relaxed`].
    pub relax: bool,
}

/// Drapes a cotton disc meshed with `rings` rings (a multiple of 5) with `bend_scale` times
/// the preset's rigidity under `model`, for `seconds` of simulated time, from flat.
pub fn drape(rings: usize, bend_scale: f64, model: BendModel, seconds: f64) -> Drape {
    drape_seeded(rings, bend_scale, model, seconds, &Options::default())
}

/// As [`drape`], with [`Options`]: a seeded start, extra solver and material keys, and the
/// static equilibrium reached from the end of the run.
pub fn drape_seeded(
    rings: usize,
    bend_scale: f64,
    model: BendModel,
    seconds: f64,
    options: &Options,
) -> Drape {
    let Options {
        folds,
        solver,
        material,
        relax: settle,
    } = *options;
    let material = if material.is_empty() {
        String::new()
    } else {
        format!(", {material}")
    };
    assert!(
        rings.is_multiple_of(5),
        "the clamp radius must fall on a ring"
    );
    let mesh = cloth_sim::mesh::disc(RADIUS, rings).expect("disc");
    let clamp: Vec<String> = (mesh.positions().iter().enumerate())
        .filter(|(_, p)| p.norm() <= CLAMP_RADIUS * (1.0 + 1e-9))
        .map(|(i, _)| i.to_string())
        .collect();
    let bend = cloth_sim::forces::Material::COTTON.bend * bend_scale;
    let model_name = match model {
        BendModel::Hinge => "hinge",
        BendModel::ShapeOperator => "shape_operator",
    };
    let frames = (seconds * 30.0).round() as usize;
    let drag = DRAG;
    let text = format!(
        r#"
[run]
fps = 30
frames = {frames}

[cloth]
mesh = {{ kind = "disc", radius = {RADIUS}, resolution = {rings} }}
position = [0.0, 0.5, 0.0]
material = {{ preset = "cotton", bend = {bend:e}, bend_model = "{model_name}"{material} }}
drag = {drag}

[solver]
{solver}

[[pin]]
vertices = [{}]
"#,
        clamp.join(", ")
    );
    let scene = Scene::from_toml_str(&text, Path::new(".")).expect("scene");
    let mut sim = build_simulation(&scene).expect("simulation");
    let rest: Vec<Vec3> = mesh.positions().to_vec();
    if let Some(n) = folds {
        let centre = sim.positions().iter().sum::<Vec3>() / rest.len() as f64;
        for (x, r) in sim.state_mut().x.iter_mut().zip(&rest) {
            let rad = (r.x * r.x + r.z * r.z).sqrt();
            if rad > CLAMP_RADIUS * (1.0 + 1e-9) {
                let s = (rad - CLAMP_RADIUS) / (RADIUS - CLAMP_RADIUS);
                let phi = r.z.atan2(r.x);
                x.y = centre.y + 5e-3 * (n as f64 * phi).cos() * s * s;
            }
        }
    }
    let mut peak: f64 = 0.0;
    let mut last = 0.0;
    let trace = std::env::var_os("CUSICK_TRACE").is_some();
    for frame in 1..=frames {
        sim.step_frame().expect("step");
        last = kinetic(&sim);
        peak = peak.max(last);
        if trace && frame % 30 == 0 {
            eprintln!(
                "rings {rings} t = {} s: coefficient {:.4}, kinetic energy {last:.3e} J, \
                 static residual {:.2e} of the weight",
                frame / 30,
                coefficient(&sim),
                static_residual(&sim)
            );
        }
    }
    let relaxed = settle.then(|| {
        let r = relax(&sim, 1e-6, 500);
        let tris = sim.world().cloth.model.triangles();
        Settled {
            coefficient: shadow_coefficient(&r.x, tris),
            folds: count_folds(&r.x, &rest),
            residual: r.residual,
            iterations: r.iterations,
            moved: r.moved,
        }
    });
    Drape {
        coefficient: coefficient(&sim),
        rest: last / peak.max(f64::MIN_POSITIVE),
        vertices: sim.positions().len(),
        folds: count_folds(sim.positions(), &rest),
        relaxed,
    }
}

/// Local maxima of the projected radius of the rim vertices (rest radius `RADIUS`), taken in
/// the order of their rest angle, smoothed over 1/36 of a turn.
fn count_folds(x: &[Vec3], rest: &[Vec3]) -> usize {
    let centre = x.iter().sum::<Vec3>() / x.len() as f64;
    let mut rim: Vec<(f64, f64)> = (x.iter().zip(rest))
        .filter(|(_, r)| (r.x * r.x + r.z * r.z).sqrt() > RADIUS * (1.0 - 1e-6))
        .map(|(p, r)| {
            let d = p - centre;
            (r.z.atan2(r.x), (d.x * d.x + d.z * d.z).sqrt())
        })
        .collect();
    rim.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = rim.len();
    let w = (n / 72).max(1);
    let smooth: Vec<f64> = (0..n)
        .map(|i| (0..=2 * w).map(|k| rim[(i + n + k - w) % n].1).sum::<f64>() / (2 * w + 1) as f64)
        .collect();
    (0..n)
        .filter(|&i| smooth[i] > smooth[(i + n - 1) % n] && smooth[i] >= smooth[(i + 1) % n])
        .count()
}

/// How far the current positions are from a static equilibrium: the RMS over free vertices of
/// |elastic force + weight| at zero velocity, over the RMS weight. Evaluated with the force
/// model alone (not the step), so a drape that the solver has stopped short of equilibrium
/// shows here even when its kinetic energy is zero.
pub fn static_residual(sim: &Simulation) -> f64 {
    let world = sim.world();
    let model = &world.cloth.model;
    let x = sim.positions();
    let v = vec![Vec3::zeros(); x.len()];
    let mut ev = cloth_sim::forces::Evaluation::default();
    model.evaluate(x, &v, &mut ev, cloth_sim::mesh::Par::Rayon);
    let g = world.cloth.external.gravity;
    let (mut f2, mut w2) = (0.0_f64, 0.0_f64);
    for (i, (f, m)) in ev.forces.iter().zip(&world.cloth.masses).enumerate() {
        if world.pinned()[i] {
            continue;
        }
        f2 += (f + *m * g).norm_squared();
        w2 += (*m * g).norm_squared();
    }
    (f2 / w2.max(f64::MIN_POSITIVE)).sqrt()
}

fn kinetic(sim: &Simulation) -> f64 {
    (sim.velocities().iter().zip(&sim.world().cloth.masses))
        .map(|(v, m)| 0.5 * m * v.norm_squared())
        .sum()
}

/// The drape coefficient of the current shape: the shadow on the horizontal plane by
/// rasterising every triangle (pixel centres inside or on the projected triangle) at 0.5 mm.
pub fn coefficient(sim: &Simulation) -> f64 {
    let x = sim.positions();
    let tris = sim.world().cloth.model.triangles();
    shadow_coefficient(x, tris)
}

/// `DC` of positions `x` with triangles `tris` (see the module docs).
pub fn shadow_coefficient(x: &[Vec3], tris: &[[usize; 3]]) -> f64 {
    let pixel = 5e-4;
    let half = (RADIUS * 1.05 / pixel).ceil() as i64;
    let side = (2 * half) as usize;
    let mut covered = vec![false; side * side];
    let centre = x.iter().sum::<Vec3>() / x.len() as f64;
    for t in tris {
        let p: [(f64, f64); 3] = t.map(|i| (x[i].x - centre.x, x[i].z - centre.z));
        let (lo_x, hi_x) = bounds(p.map(|q| q.0));
        let (lo_z, hi_z) = bounds(p.map(|q| q.1));
        let cell = |v: f64| ((v / pixel).floor() as i64 + half).clamp(0, 2 * half - 1) as usize;
        for iz in cell(lo_z)..=cell(hi_z) {
            for ix in cell(lo_x)..=cell(hi_x) {
                let c = (
                    (ix as f64 - half as f64 + 0.5) * pixel,
                    (iz as f64 - half as f64 + 0.5) * pixel,
                );
                if inside(p, c) {
                    covered[iz * side + ix] = true;
                }
            }
        }
    }
    let shadow = covered.iter().filter(|&&c| c).count() as f64 * pixel * pixel;
    let pi = std::f64::consts::PI;
    let clamp = pi * CLAMP_RADIUS * CLAMP_RADIUS;
    (shadow - clamp) / (pi * RADIUS * RADIUS - clamp)
}

fn bounds(v: [f64; 3]) -> (f64, f64) {
    (v[0].min(v[1]).min(v[2]), v[0].max(v[1]).max(v[2]))
}

/// Whether `c` is inside or on the 2-D triangle `p` (either orientation).
fn inside(p: [(f64, f64); 3], c: (f64, f64)) -> bool {
    let side = |a: (f64, f64), b: (f64, f64)| (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0);
    let s = [side(p[0], p[1]), side(p[1], p[2]), side(p[2], p[0])];
    s.iter().all(|&v| v >= 0.0) || s.iter().all(|&v| v <= 0.0)
}

/// A static equilibrium near the current state, found by [`relax`] on the elastic energy plus
/// gravity (pinned vertices fixed, contact and drag ignored: the Cusick scene has no contact,
/// and its drag vanishes at rest).
pub struct Relaxed {
    /// Equilibrium positions (m).
    pub x: Vec<Vec3>,
    /// Largest residual force on a free vertex at the end over the largest vertex weight.
    pub residual: f64,
    /// Linear solves, accepted steps and refused ones.
    pub iterations: usize,
    /// Largest displacement from the starting state (m).
    pub moved: f64,
}

/// Damped Newton (Levenberg-Marquardt with the mass matrix) from the simulation's current
/// positions to a nearby static equilibrium of the elastic energy plus gravity: each iteration
/// solves `(H + mu M) dx = f` with the exact Hessian `H` (direct solve, pinned vertices fixed)
/// and takes the step if it lowers the energy (`mu` then shrinks 4x; else it grows 8x and the
/// iteration is retried, falling back to the simulator's positive semi-definite `Clamped`
/// Hessian when `H + mu M` cannot be factorised). Converged when the largest residual force on
/// a free vertex is below `tol` times the largest vertex weight; gives up after
/// `max_iterations` solves. Independent of the time stepper (no damping, no step size, no CG
/// tolerance): a drape that the dynamics brought to rest short of equilibrium moves on here.
pub fn relax(sim: &Simulation, tol: f64, max_iterations: usize) -> Relaxed {
    use cloth_sim::forces::{Definiteness, Evaluation};
    use cloth_sim::nalgebra::Matrix3;
    use cloth_sim::solver::{BlockMatrix, Constraint, DirectSolver};
    let world = sim.world();
    let fixed = world.pinned().to_vec();
    let ext = cloth_sim::forces::External {
        gravity: world.cloth.external.gravity,
        ..Default::default()
    };
    let model = |d| {
        let mut m = world.cloth.model.clone();
        m.set_definiteness(d);
        m
    };
    let clamped = model(Definiteness::Clamped);
    let exact = model(Definiteness::Exact);
    let n = exact.num_vertices();
    // Pinned vertices fixed, the rest free.
    let mut cons = vec![Constraint::Free; n];
    for (c, _) in cons.iter_mut().zip(&fixed).filter(|(_, pinned)| **pinned) {
        *c = Constraint::Fixed;
    }
    let start = sim.positions().to_vec();
    let mut x = start.clone();
    let z = vec![Vec3::zeros(); n];
    let wmax = exact.masses().iter().fold(0.0f64, |m, &x| m.max(x)) * ext.gravity.norm();
    let energy = |y: &[Vec3]| exact.energy(y) + ext.energy(&exact, y);
    // Total force at rest on the free vertices into `f` (pinned ones zeroed), `ev` keeping the
    // exact Jacobian; returns the largest over the largest weight.
    let forces_at = |y: &[Vec3], ev: &mut Evaluation, f: &mut Vec<Vec3>| -> f64 {
        exact.evaluate(y, &z, ev, cloth_sim::mesh::Par::Rayon);
        ext.accumulate(&exact, y, &z, ev);
        f.clear();
        f.extend(
            ev.forces
                .iter()
                .zip(&fixed)
                .map(|(&fi, &p)| if p { z[0] } else { fi }),
        );
        f.iter().map(|v| v.norm()).fold(0.0, f64::max) / wmax
    };
    let (mut ev_c, mut ev_e) = (Evaluation::default(), Evaluation::default());
    let mut f = Vec::with_capacity(n);
    let mut residual = forces_at(&x, &mut ev_e, &mut f);
    clamped.evaluate(&x, &z, &mut ev_c, cloth_sim::mesh::Par::Rayon);
    let mut a = BlockMatrix::new(n, &exact.vertex_pairs()).expect("pattern");
    let plan_c = a.plan(ev_c.entries()).expect("plan");
    let plan_e = a.plan(ev_e.entries()).expect("plan");
    let mut direct = DirectSolver::new(&a).expect("direct solver");
    let (mut dx, mut trial) = (z.clone(), z.clone());
    let mut blocks: Vec<Matrix3<f64>> = Vec::new();
    let mut diagonal: Vec<Matrix3<f64>> = Vec::new();
    let mut e_x = energy(&x);
    let mut iterations = 0;
    // mu M is the matrix of an implicit step of h = 1/sqrt(mu): start at h = 1/30 s.
    let mut mu = 900.0;
    while residual >= tol && iterations < max_iterations {
        iterations += 1;
        diagonal.clear();
        diagonal.extend((exact.masses().iter()).map(|&m| Matrix3::identity() * (mu * m)));
        blocks.clear();
        blocks.extend(ev_e.dfdx().iter().map(|b| -b));
        a.assemble(&plan_e, &blocks, Some(&diagonal));
        if direct.solve(&mut dx, &a, &f, &z, &cons).is_err() {
            clamped.evaluate(&x, &z, &mut ev_c, cloth_sim::mesh::Par::Rayon);
            blocks.clear();
            blocks.extend(ev_c.dfdx().iter().map(|b| -b));
            a.assemble(&plan_c, &blocks, Some(&diagonal));
            if direct.solve(&mut dx, &a, &f, &z, &cons).is_err() {
                mu *= 8.0;
                continue;
            }
        }
        for ((t, p), d) in trial.iter_mut().zip(&x).zip(&dx) {
            *t = p + d;
        }
        let e_trial = energy(&trial);
        // Lower energy, or (near convergence, where E is flat to rounding) no rise.
        if e_trial < e_x || (e_trial - e_x).abs() <= 1e-14 * e_x.abs() {
            std::mem::swap(&mut x, &mut trial);
            e_x = e_trial;
            residual = forces_at(&x, &mut ev_e, &mut f);
            mu = (mu / 4.0).max(1e-6);
        } else {
            mu *= 8.0;
        }
    }
    let moved = (x.iter().zip(&start))
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    Relaxed {
        x,
        residual,
        iterations,
        moved,
    }
}
