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
use cloth_sim::{Scene, Simulation, Vec3, build_simulation};

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
}

/// Drapes a cotton disc meshed with `rings` rings (a multiple of 5) with `bend_scale` times
/// the preset's rigidity under `model`, for `seconds` of simulated time, from flat.
pub fn drape(rings: usize, bend_scale: f64, model: BendModel, seconds: f64) -> Drape {
    drape_seeded(rings, bend_scale, model, seconds, None, "", "")
}

/// As [`drape`], the free annulus starting with `folds` waves of 5 mm amplitude (height
/// `5 mm cos(n phi) s^2`, s from 0 at the clamp to 1 at the rim) when given: the same
/// equilibrium branch (fold count) on every mesh, so that meshes can be compared. `solver`:
/// extra keys of the scene's `[solver]` table (TOML lines, e.g. `preconditioner = "direct"`);
/// `material`: extra keys of the cloth's material table (e.g. `stretch_damping = 0.0`).
pub fn drape_seeded(
    rings: usize,
    bend_scale: f64,
    model: BendModel,
    seconds: f64,
    folds: Option<usize>,
    solver: &str,
    material: &str,
) -> Drape {
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
                "rings {rings} t = {} s: coefficient {:.4}, kinetic energy {last:.3e} J",
                frame / 30,
                coefficient(&sim)
            );
        }
    }
    Drape {
        coefficient: coefficient(&sim),
        rest: last / peak.max(f64::MIN_POSITIVE),
        vertices: sim.positions().len(),
        folds: count_folds(sim.positions(), &rest),
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
