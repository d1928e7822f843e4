//! Realistic cloth matrices for the solver tests and benches: `A = M - h df/dv - h^2 df/dx`
//! of a cotton sheet (default material and definiteness) on a `side x side` grid over 1 m,
//! in a deformed, moving state, h = 1/30 s, gravity in `b`, two corners fixed (as the
//! workspace's `benches/solver.rs`).
#![allow(dead_code)]

use cloth_forces::{ClothModel, Definiteness, Evaluation, Material};
use cloth_mesh::{GridPattern, Par, Vec3, grid};
use cloth_solver::{BlockMatrix, Constraint, Matrix3, Vector3};

/// One implicit step's linear system and the particle positions.
pub struct ClothProblem {
    pub side: usize,
    pub a: BlockMatrix,
    pub b: Vec<Vec3>,
    pub z: Vec<Vec3>,
    pub constraints: Vec<Constraint>,
    pub positions: Vec<Vec3>,
}

/// Time step (s).
pub const H: f64 = 1.0 / 30.0;

/// The system of a `side x side` cotton sheet (`side >= 2`), `phase` shifting the deformation
/// (0 for the standard state; other values give "later steps" with the same pattern).
pub fn cloth_problem(side: usize, phase: f64) -> ClothProblem {
    cloth_problem_with(side, phase, &Material::default(), H)
}

/// As [`cloth_problem`] with another material and time step `h` (s).
pub fn cloth_problem_with(side: usize, phase: f64, material: &Material, h: f64) -> ClothProblem {
    let mesh = grid(side, side, 1.0, 1.0, GridPattern::Alternating).expect("valid grid");
    let material = *material;
    let model = ClothModel::new(&mesh, &material, Definiteness::default()).expect("valid model");
    let x: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| {
            Vec3::new(
                p.x * 1.01,
                0.1 * (4.0 * p.x + phase).sin() * (3.0 * p.z - phase).cos(),
                p.z,
            )
        })
        .collect();
    let v = vec![Vec3::new(0.0, -0.5, 0.0); x.len()];
    let mut eval = Evaluation::default();
    model.evaluate(&x, &v, &mut eval, Par::default());
    let masses = mesh.vertex_masses(material.density).expect("valid density");
    let mut a = BlockMatrix::new(x.len(), mesh.vertex_pairs()).expect("valid pairs");
    let plan = a.plan(eval.entries()).expect("entries in pattern");
    let blocks: Vec<Matrix3<f64>> = eval
        .dfdx()
        .iter()
        .zip(eval.dfdv())
        .map(|(kx, kv)| -(kv * h) - kx * (h * h))
        .collect();
    let diag: Vec<Matrix3<f64>> = masses
        .iter()
        .map(|&m| Matrix3::from_diagonal_element(m))
        .collect();
    a.assemble(&plan, &blocks, Some(&diag));
    let g = Vec3::new(0.0, -9.81, 0.0);
    let b: Vec<Vec3> = eval
        .forces
        .iter()
        .zip(&masses)
        .map(|(f, &m)| (f + g * m) * h)
        .collect();
    let mut constraints = vec![Constraint::Free; x.len()];
    constraints[0] = Constraint::Fixed;
    constraints[side - 1] = Constraint::Fixed;
    ClothProblem {
        side,
        z: vec![Vec3::zeros(); x.len()],
        a,
        b,
        constraints,
        positions: x,
    }
}

/// SplitMix64: the deterministic generator of cloth-solver's own tests (random right-hand
/// sides and constraint targets).
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * u
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn vec3(&mut self, scale: f64) -> Vector3<f64> {
        Vector3::new(
            self.uniform(-scale, scale),
            self.uniform(-scale, scale),
            self.uniform(-scale, scale),
        )
    }
}
