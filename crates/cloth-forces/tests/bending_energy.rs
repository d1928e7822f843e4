//! Bending energy against plate theory: the surface `y = (a u^2 + 2c uv + b v^2)/2` (u, v the
//! rest coordinates about the sheet's centre) stores `D/2 (a^2 + b^2 + 2c^2)` per unit area
//! in a plate with Poisson ratio 0. The default shape-operator model must converge to it with
//! refinement on every mesh type; the hinge model does not (issue 11).

mod common;

use cloth_forces::{BendModel, ClothModel, Definiteness, Material, Vec3};
use cloth_mesh::{ClothMesh, GridPattern, disc, equilateral_height, grid};
use common::jittered;

const D: f64 = 1e-4;

/// Ratio of the model's bend energy to the plate energy for the quadratic height field with
/// Hessian (a, b, c). Amplitude 1e-3 rad of slope keeps the deformation linear (relative
/// nonlinear corrections ~1e-6).
fn ratio(mesh: &ClothMesh, model: BendModel, abc: [f64; 3]) -> f64 {
    let m = Material {
        stretch: [0.0; 2],
        shear: 0.0,
        bend: D,
        bend_model: model,
        ..Material::default()
    };
    let cm = ClothModel::new(mesh, &m, Definiteness::Clamped).unwrap();
    let rest = mesh.rest();
    let (mut lo, mut hi) = (rest[0], rest[0]);
    for r in rest {
        lo = lo.inf(r);
        hi = hi.sup(r);
    }
    let c0 = (lo + hi) * 0.5;
    let size = (hi - lo).amax();
    let s = 1e-3 / size;
    let [a, b, c] = abc.map(|k| k * s);
    let x: Vec<Vec3> = rest
        .iter()
        .map(|r| {
            let (u, v) = (r.x - c0.x, r.y - c0.y);
            Vec3::new(u, 0.5 * (a * u * u + 2.0 * c * u * v + b * v * v), v)
        })
        .collect();
    let plate = D / 2.0 * (a * a + b * b + 2.0 * c * c) * mesh.total_rest_area();
    cm.energy(&x) / plate
}

/// Curvature cases: along u, along v, pure twist, a saddle, a general mix.
const CASES: [[f64; 3]; 5] = [
    [1.0, 0.0, 0.0],
    [0.0, 1.0, 0.0],
    [0.0, 0.0, 1.0],
    [1.0, -1.0, 0.0],
    [0.7, 0.3, -0.5],
];

fn meshes(level: usize) -> Vec<(String, ClothMesh)> {
    let n = [11, 21, 41][level];
    let r = [4, 8, 16][level];
    let mut v = vec![
        (
            "uniform".to_string(),
            grid(n, n, 1.0, 1.0, GridPattern::Uniform).unwrap(),
        ),
        (
            "uniform 2:1 cells".to_string(),
            grid(n, n, 1.0, 0.5, GridPattern::Uniform).unwrap(),
        ),
        (
            "alternating".to_string(),
            grid(n, n, 1.0, 1.0, GridPattern::Alternating).unwrap(),
        ),
        (
            "alternating 1:3 cells".to_string(),
            grid(n, n, 1.0, 3.0, GridPattern::Alternating).unwrap(),
        ),
        (
            "equilateral".to_string(),
            grid(
                n,
                n,
                1.0,
                equilateral_height(1.0, n, n),
                GridPattern::Equilateral,
            )
            .unwrap(),
        ),
        (
            "jittered alternating".to_string(),
            jittered(n, n, 1.0, 1.0, GridPattern::Alternating, 0.3, 17),
        ),
        (
            "jittered equilateral".to_string(),
            jittered(
                n,
                n,
                1.0,
                equilateral_height(1.0, n, n),
                GridPattern::Equilateral,
                0.3,
                5,
            ),
        ),
        ("disc".to_string(), disc(0.5, r).unwrap()),
    ];
    v.retain(|(_, m)| m.num_vertices() > 0);
    v
}

/// The default model converges to the plate energy on every mesh type and curvature case:
/// within 12% on the coarsest level, 4% on the finest, and the error shrinks with refinement
/// (the deficit is the free-edge strip, whose triangles keep the least-energy curvature).
/// The hinge model is also measured: on the finest level it is off by more than 10% on at
/// least one case of every mesh type except the disc.
#[test]
fn shape_operator_energy_converges_to_plate_energy_on_every_mesh() {
    let mut errs = vec![Vec::new(); 3];
    for (level, errs_level) in errs.iter_mut().enumerate() {
        for (name, mesh) in meshes(level) {
            let mut line = format!("{name:24} n={:5}", mesh.num_vertices());
            let mut worst: f64 = 0.0;
            let mut worst_hinge: f64 = 0.0;
            for abc in CASES {
                let s = ratio(&mesh, BendModel::ShapeOperator, abc);
                let h = ratio(&mesh, BendModel::Hinge, abc);
                line += &format!("  {s:.3}/{h:.3}");
                worst = worst.max((s - 1.0).abs());
                worst_hinge = worst_hinge.max((h - 1.0).abs());
            }
            eprintln!("{line}   (shape/hinge per case)");
            errs_level.push((name, worst, worst_hinge));
        }
    }
    for (k, (name, e, _)) in errs[0].iter().enumerate() {
        let (e1, e2) = (errs[1][k].1, errs[2][k].1);
        assert!(*e < 0.12, "{name} coarse: {e}");
        assert!(e2 < 0.04, "{name} fine: {e2}");
        assert!(e2 < e1 && e1 < *e, "{name}: no convergence {e} {e1} {e2}");
    }
    for (name, _, eh) in &errs[2] {
        if name != "disc" {
            assert!(*eh > 0.10, "{name}: hinge unexpectedly exact ({eh})");
        }
    }
}
