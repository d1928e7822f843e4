//! Resolution independence: the same material gives the same large-scale energies on meshes of
//! different resolution (stretch: exact; bend on a cylinder: within 5% on equilateral meshes).

use cloth_forces::{BendModel, ClothModel, Definiteness, Material, Vec3};
use cloth_mesh::{ClothMesh, GridPattern, equilateral_height, grid};

#[test]
fn uniform_stretch_energy_is_resolution_independent() {
    let m = Material::default();
    for pattern in [
        GridPattern::Uniform,
        GridPattern::Alternating,
        GridPattern::Equilateral,
    ] {
        for nx in [4, 11, 31] {
            let mesh = grid(nx, nx, 1.0, 0.8, pattern).unwrap();
            let model = ClothModel::new(&mesh, &m, Definiteness::Clamped).unwrap();
            let along_u: Vec<Vec3> = mesh
                .positions()
                .iter()
                .map(|p| Vec3::new(1.03 * p.x, p.y, p.z))
                .collect();
            let along_v: Vec<Vec3> = mesh
                .positions()
                .iter()
                .map(|p| Vec3::new(p.x, p.y, 1.03 * p.z))
                .collect();
            let area = mesh.total_rest_area();
            let eu = area * m.stretch[0] / 2.0 * 0.03f64.powi(2);
            let ev = area * m.stretch[1] / 2.0 * 0.03f64.powi(2);
            assert!(
                (model.energy(&along_u) - eu).abs() <= 1e-9 * eu,
                "{pattern:?} {nx}"
            );
            assert!(
                (model.energy(&along_v) - ev).abs() <= 1e-9 * ev,
                "{pattern:?} {nx}"
            );
        }
    }
}

/// Bend energy of `mesh` wrapped onto a cylinder of radius `r` whose curvature direction makes
/// the angle `angle` (rad) with the u axis (0: bending along u, axis along v).
fn cylinder_energy(mesh: &ClothMesh, r: f64, angle: f64, bend_model: BendModel) -> f64 {
    let m = Material {
        stretch: [0.0; 2],
        shear: 0.0,
        bend: 1e-4,
        bend_model,
        ..Material::default()
    };
    let model = ClothModel::new(mesh, &m, Definiteness::Clamped).unwrap();
    let d = Vec3::new(angle.cos(), 0.0, angle.sin());
    let a = Vec3::new(-angle.sin(), 0.0, angle.cos());
    let x: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| {
            let (s, t) = (p.dot(&d), p.dot(&a));
            d * (r * (s / r).sin()) + Vec3::y() * (r * (1.0 - (s / r).cos())) + a * t
        })
        .collect();
    model.energy(&x)
}

/// Ratio of the discrete bend energy to the plate energy D/2 (1/R)^2 * area.
fn cylinder_ratio(mesh: &ClothMesh, r: f64, angle: f64, bend_model: BendModel) -> f64 {
    let plate = 1e-4 / 2.0 / (r * r) * mesh.total_rest_area();
    cylinder_energy(mesh, r, angle, bend_model) / plate
}

/// The hinge stiffness `k_e = D |e|^2 / (A1 + A2)` reproduces plate bending `D/2 kappa^2` per area:
/// on equilateral meshes of three resolutions, bent along u, along v and diagonally, the energy
/// is within 5% of `D/2 (1/R)^2 * area` (the small deficit is the boundary strip without hinges,
/// shrinking as 1/n) and the three resolutions agree within 5%.
#[test]
fn cylinder_bend_energy_matches_plate_theory_on_equilateral_meshes() {
    let r = 0.4;
    for angle in [
        0.0,
        std::f64::consts::FRAC_PI_2,
        std::f64::consts::FRAC_PI_4,
        0.3,
    ] {
        let mut ratios = Vec::new();
        for nx in [31, 51, 81] {
            let mesh = grid(
                nx,
                nx,
                1.0,
                equilateral_height(1.0, nx, nx),
                GridPattern::Equilateral,
            )
            .unwrap();
            for model in [BendModel::Hinge, BendModel::ShapeOperator] {
                let ratio = cylinder_ratio(&mesh, r, angle, model);
                eprintln!("equilateral nx={nx} angle={angle:.3} {model:?}: ratio {ratio:.4}");
                assert!((ratio - 1.0).abs() < 0.05, "nx {nx} angle {angle}: {ratio}");
                if model == BendModel::Hinge {
                    ratios.push(ratio);
                }
            }
        }
        let (lo, hi) = ratios
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
        assert!(hi / lo < 1.05);
    }
}

/// Documents (and pins) the bending anisotropy of right-triangle grids under the hinge model:
/// exact along the axes, too stiff diagonally (about 3x for Uniform along its diagonals, about
/// 1.5-2x for Alternating). The shape-operator model is isotropic on Uniform (within 5%: the
/// deficit is the free-edge strip); on Alternating it is exact along the axes and, like the
/// hinge, about 1.5x too stiff diagonally (the twist limit of `docs/bending.md`).
#[test]
fn right_triangle_grids_are_anisotropic_in_bending() {
    let r = 0.4;
    let diag = std::f64::consts::FRAC_PI_4;
    let uni = grid(41, 41, 1.0, 1.0, GridPattern::Uniform).unwrap();
    let alt = grid(41, 41, 1.0, 1.0, GridPattern::Alternating).unwrap();
    let hinge = BendModel::Hinge;
    for (name, mesh) in [("uniform", &uni), ("alternating", &alt)] {
        for angle in [0.0, diag, -diag, 0.3] {
            let s = cylinder_ratio(mesh, r, angle, BendModel::ShapeOperator);
            eprintln!(
                "{name} angle={angle:.3}: hinge ratio {:.3}, shape operator {s:.3}",
                cylinder_ratio(mesh, r, angle, hinge)
            );
            if name == "uniform" || angle == 0.0 {
                assert!((s - 1.0).abs() < 0.05, "{name} {angle}: {s}");
            } else {
                // Alternating bent off its axes: as stiff as the hinge (twist, `shape` docs).
                assert!(s < 1.6, "{name} {angle}: {s}");
            }
        }
        assert!((cylinder_ratio(mesh, r, 0.0, hinge) - 1.0).abs() < 0.05);
    }
    let u1 = cylinder_ratio(&uni, r, diag, hinge).max(cylinder_ratio(&uni, r, -diag, hinge));
    let a1 = cylinder_ratio(&alt, r, diag, hinge);
    assert!(u1 > 2.0, "uniform diagonal {u1}");
    assert!(a1 > 1.2 && a1 < u1, "alternating diagonal {a1}");
}
