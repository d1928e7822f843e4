//! The shape-operator model's midedge split, minimised out per evaluation (`src/split.rs`):
//! on random meshes, states, anisotropy, rest angles and clamps,
//!
//! * the forces are minus the gradient of the energy (finite differences of
//!   `ClothModel::energy`, which re-solves the split at every perturbed state: the envelope
//!   theorem is what makes the fixed-split force exact);
//! * the implicit matrix (`-df/dx` under `Exact`, the Hessian at a fixed split) is symmetric
//!   and, near rest, bounds the exact Hessian of the minimised energy (finite differences of
//!   the forces) from above: `K_model - K_exact` is positive semidefinite, and differs from
//!   it (the split does work).

mod common;

use cloth_forces::{BendModel, ClothModel, Definiteness, Evaluation, Material, Par, Vec3};
use cloth_mesh::GridPattern;
use common::{Rng, dense, flat, jittered};
use nalgebra::DMatrix;
use proptest::prelude::*;
use proptest::test_runner::Config;

/// Bending only, so the checks see nothing else.
fn material(bend_uv: [f64; 2]) -> Material {
    Material {
        stretch: [0.0; 2],
        shear: 0.0,
        bend: 2e-4,
        bend_uv,
        bend_model: BendModel::ShapeOperator,
        ..Material::default()
    }
}

struct Case {
    model: ClothModel,
    x: Vec<Vec3>,
}

/// A jittered 5 x 5 grid (pattern by `pat`) bent out of plane with amplitude `amp` (m) and a
/// random twist, rest angles from a random pre-fold when `prefold`, the first `clamp` columns
/// clamped.
fn case(seed: u64, pat: u8, amp: f64, prefold: bool, clamp: usize, uv: [f64; 2]) -> Case {
    let pattern = [
        GridPattern::Alternating,
        GridPattern::Uniform,
        GridPattern::Equilateral,
    ][pat as usize % 3];
    let mesh = jittered(5, 5, 0.2, 0.2, pattern, 0.25, seed);
    let mut model = ClothModel::new(&mesh, &material(uv), Definiteness::Exact).unwrap();
    let mut rng = Rng(seed ^ 0x5151);
    if prefold {
        let folded: Vec<Vec3> = mesh
            .positions()
            .iter()
            .map(|p| p + Vec3::new(0.0, 0.01 * rng.next(), 0.0))
            .collect();
        model.set_rest_angles_from(&folded);
    }
    if clamp > 0 {
        let xs: Vec<f64> = mesh.positions().iter().map(|p| p.x).collect();
        let lo = xs.iter().fold(f64::INFINITY, |m, &v| m.min(v));
        let clamped: Vec<bool> = xs
            .iter()
            .map(|&v| v <= lo + 0.05 * clamp as f64 + 1e-9)
            .collect();
        model.set_clamped_vertices(&clamped).unwrap();
    }
    let (a, b, c) = (rng.next(), rng.next(), rng.next());
    let x: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| {
            let (u, v) = (p.x / 0.2, p.z / 0.2);
            let y = amp * (a * u * u + b * v * v + c * u * v) + 0.2 * amp * rng.next();
            Vec3::new(p.x, p.y + y, p.z)
        })
        .collect();
    Case { model, x }
}

fn fd_forces(model: &ClothModel, x: &[Vec3], eps: f64) -> Vec<Vec3> {
    (0..x.len())
        .map(|i| {
            Vec3::from_fn(|c, _| {
                let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
                xp[i][c] += eps;
                xm[i][c] -= eps;
                -(model.energy(&xp) - model.energy(&xm)) / (2.0 * eps)
            })
        })
        .collect()
}

fn stiffness(model: &ClothModel, x: &[Vec3]) -> (DMatrix<f64>, Vec<Vec3>, f64) {
    let n = x.len();
    let mut ev = Evaluation::default();
    model.evaluate(x, &vec![Vec3::zeros(); n], &mut ev, Par::Seq);
    (-dense(&ev, n, false), ev.forces.clone(), ev.energy)
}

fn cfg() -> Config {
    Config {
        cases: 24,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn forces_are_minus_the_gradient_of_the_minimised_energy(
        seed in 1u64..1_000_000,
        pat in 0u8..3,
        amp in 0.002f64..0.03,
        prefold in any::<bool>(),
        clamp in 0usize..3,
        au in 0.3f64..2.0,
    ) {
        let c = case(seed, pat, amp, prefold, clamp, [au, 1.0]);
        let (_, f, e) = stiffness(&c.model, &c.x);
        prop_assert!((e - c.model.energy(&c.x)).abs() <= 1e-12 * e.abs().max(1e-30));
        let fd = fd_forces(&c.model, &c.x, 1e-7);
        let scale = f.iter().map(|v| v.amax()).fold(0.0, f64::max);
        prop_assume!(scale > 0.0);
        for (i, (a, b)) in f.iter().zip(&fd).enumerate() {
            prop_assert!(
                (a - b).amax() <= 2e-6 * scale,
                "vertex {i}: force {a:?}, -dE/dx {b:?} (scale {scale:e})"
            );
        }
    }

    #[test]
    fn the_fixed_split_hessian_is_symmetric_and_bounds_the_exact_one_near_rest(
        seed in 1u64..1_000_000,
        pat in 0u8..3,
        clamp in 0usize..2,
    ) {
        let c = case(seed, pat, 1e-4, false, clamp, [1.0, 1.0]);
        let n = c.x.len();
        let (k, _, _) = stiffness(&c.model, &c.x);
        prop_assert!((&k - k.transpose()).amax() <= 1e-10 * k.amax());
        // Exact Hessian of the minimised energy: finite differences of the forces.
        let eps = 1e-7;
        let mut fd = DMatrix::zeros(3 * n, 3 * n);
        for i in 0..n {
            for d in 0..3 {
                let (mut xp, mut xm) = (c.x.clone(), c.x.clone());
                xp[i][d] += eps;
                xm[i][d] -= eps;
                let (_, fp, _) = stiffness(&c.model, &xp);
                let (_, fm, _) = stiffness(&c.model, &xm);
                fd.set_column(3 * i + d, &(-(flat(&fp) - flat(&fm)) / (2.0 * eps)));
            }
        }
        let fd = (&fd + fd.transpose()) * 0.5;
        let gap = (&k - &fd).symmetric_eigen().eigenvalues.min();
        prop_assert!(gap >= -1e-6 * k.amax(), "K_model - K_exact has eigenvalue {gap:e}");
        // And the two differ (the split is doing something): the exact one is softer.
        prop_assert!((&k - &fd).amax() > 1e-4 * k.amax());
    }

    #[test]
    fn clamps_changed_or_lifted_leave_the_model_a_fresh_one_would_be(
        seed in 1u64..1_000_000,
        pat in 0u8..3,
        first in 1usize..3,
        second in 0usize..3,
    ) {
        // Clamped to the first `first` columns, then to the first `second` (0: none): the same
        // bits as a model clamped to `second` columns straight away (bending and split).
        let mut moved = case(seed, pat, 0.02, false, first, [1.0, 1.0]);
        let fresh = case(seed, pat, 0.02, false, second, [1.0, 1.0]);
        let n = fresh.x.len();
        let xs: Vec<f64> = (0..n).map(|i| fresh.x[i].x).collect();
        let lo = xs.iter().fold(f64::INFINITY, |m, &v| m.min(v));
        let clamped: Vec<bool> = xs
            .iter()
            .map(|&v| second > 0 && v <= lo + 0.05 * second as f64 + 1e-9)
            .collect();
        moved.model.set_clamped_vertices(&clamped).unwrap();
        let (k_moved, f_moved, e_moved) = stiffness(&moved.model, &fresh.x);
        let (k_fresh, f_fresh, e_fresh) = stiffness(&fresh.model, &fresh.x);
        prop_assert_eq!(e_moved.to_bits(), e_fresh.to_bits());
        prop_assert!(f_moved == f_fresh);
        prop_assert!(k_moved == k_fresh);
        // And the clamp matters, so the check above could fail: two columns always hold
        // whole triangles (one column may hold none on a jittered grid).
        if first != second && first.max(second) == 2 {
            let once = case(seed, pat, 0.02, false, first, [1.0, 1.0]);
            prop_assert!(stiffness(&once.model, &fresh.x).1 != f_fresh);
        }
    }
}
