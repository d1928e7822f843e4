//! Bending energy against plate theory: the surface `y = (a u^2 + 2c uv + b v^2)/2` (u, v the
//! rest coordinates about the sheet's centre) stores `D/2 (a^2 + b^2 + 2c^2)` per unit area
//! in a plate with Poisson ratio 0. The default shape-operator model must converge to it with
//! refinement on every mesh type; the hinge model does not.

mod common;

use cloth_forces::{BendModel, ClothModel, Definiteness, Material, Vec3};
use cloth_mesh::{ClothMesh, GridPattern, disc, equilateral_height, grid};
use common::jittered;

const D: f64 = 1e-4;

/// Ratio of the model's bend energy to the plate energy for the quadratic height field with
/// Hessian (a, b, c). Amplitude 1e-3 rad of slope keeps the deformation linear (relative
/// nonlinear corrections ~1e-6).
fn ratio(mesh: &ClothMesh, model: BendModel, abc: [f64; 3]) -> f64 {
    let cm = bending_only(mesh, model);
    let rest = mesh.vertex_rest().expect("one chart");
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

/// A model of `mesh` with bending D alone (no stretch, no shear).
fn bending_only(mesh: &ClothMesh, model: BendModel) -> ClothModel {
    let m = Material {
        stretch: [0.0; 2],
        shear: 0.0,
        bend: D,
        bend_model: model,
        ..Material::default()
    };
    ClothModel::new(mesh, &m, Definiteness::Clamped).unwrap()
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

/// Measures both models on every mesh type, level and curvature case (the table of
/// `docs/bending.md`), and checks the shape-operator model against plate theory on every mesh
/// (uniform grids with square and 2:1 cells, alternating grids with square and 1:3 cells,
/// equilateral grids, jittered alternating and jittered equilateral meshes, discs):
///
/// * the worst error over the five cases falls by at least a third at each refinement and is
///   within 12% on the finest level (the deficit is the free-edge strip: an edge on the
///   boundary has no angle, so the curvature within half a cell of it is not seen, and the
///   triangles along it keep the average midedge split, which is 2x too stiff in twist on
///   alternating grids; both are one cell wide and halve with the cell);
/// * the twist on the finest square-cell grids (uniform, alternating, equilateral, jittered)
///   within 3.5% (the hinge: 1.34-2.98x).
///
/// The hinge model's twist on the uniform grid is pinned at its closed form
/// `D/2 ((a+c)^2 + (b+c)^2 + 4c^2)`, 3x the plate's `D/2 2c^2` for a pure twist.
/// Mesh name, per-case ratios of the shape-operator model and of the hinge.
type Row = (String, Vec<f64>, Vec<f64>);

#[test]
#[allow(clippy::needless_range_loop)] // k indexes the same mesh in all three levels
fn shape_operator_energy_against_plate_energy_on_every_mesh() {
    // errs[level][mesh] = (name, per-case shape ratios, per-case hinge ratios)
    let mut table: Vec<Vec<Row>> = vec![Vec::new(); 3];
    for (level, rows) in table.iter_mut().enumerate() {
        for (name, mesh) in meshes(level) {
            let mut line = format!("{name:24} n={:5}", mesh.num_vertices());
            let (mut sv, mut hv) = (Vec::new(), Vec::new());
            for abc in CASES {
                let s = ratio(&mesh, BendModel::ShapeOperator, abc);
                let h = ratio(&mesh, BendModel::Hinge, abc);
                line += &format!("  {s:.3}/{h:.3}");
                sv.push(s);
                hv.push(h);
            }
            eprintln!("{line}   (shape/hinge per case)");
            rows.push((name, sv, hv));
        }
    }
    let worst = |v: &[f64], cases: &[usize]| {
        cases
            .iter()
            .map(|&c| (v[c] - 1.0).abs())
            .fold(0.0, f64::max)
    };
    let all = [0, 1, 2, 3, 4];
    for k in 0..table[0].len() {
        let name = table[0][k].0.as_str();
        let e: Vec<f64> = (0..3).map(|l| worst(&table[l][k].1, &all)).collect();
        assert!(e[2] < 0.12, "{name}: {e:?}");
        assert!(
            e[2] < 0.67 * e[1] && e[1] < 0.67 * e[0],
            "{name}: no convergence {e:?}"
        );
        // The twist, which the hinge and a fixed midedge split get 2-5.6x too stiff on
        // alternating grids at every level, within 3% on the finest square-cell grids.
        let twist = table[2][k].1[2];
        if !name.contains("cells") && name != "disc" {
            assert!((twist - 1.0).abs() < 0.035, "{name}: twist {twist}");
        }
    }
    let uniform_twist_hinge = table[2][0].2[2];
    assert!(
        (uniform_twist_hinge - 3.0).abs() < 0.05,
        "{uniform_twist_hinge}"
    );
}

/// Energy of a six-fold wave on a disc's annulus, the shape of a Cusick drape: heights
/// `A s^2 cos(6 phi)` with `s = (r - r_c) / (R - r_c)` outside the clamp radius r_c (flat
/// inside), against the plate energy `D/2 int (H_rr^2 + H_pp^2 + 2 H_rp^2) dA` by quadrature
/// of the exact Hessian in polar coordinates. Curvature varies in both directions and across
/// the free rim; the shape operator must converge to the plate (first order), the hinge does
/// not (measured 1.39, 1.49, 1.52x at 10, 20, 40 rings).
#[test]
fn a_six_fold_wave_on_a_disc_converges_to_plate_energy() {
    let (rr, rc, folds) = (0.15, 0.09, 6.0);
    let l = rr - rc;
    let amp = 1e-5;
    let height = |r: f64, phi: f64| {
        let s = ((r - rc) / l).max(0.0);
        amp * s * s * (folds * phi).cos()
    };
    let mut plate = 0.0;
    let (nr, np) = (2000, 1200);
    let (dr, dp) = (l / nr as f64, std::f64::consts::TAU / np as f64);
    for i in 0..nr {
        let r = rc + dr * (i as f64 + 0.5);
        let s = (r - rc) / l;
        for j in 0..np {
            let phi = dp * (j as f64 + 0.5);
            let (c, sn) = ((folds * phi).cos(), (folds * phi).sin());
            let zr = amp * 2.0 * s / l * c;
            let zrr = amp * 2.0 / (l * l) * c;
            let zp = -amp * s * s * folds * sn;
            let zpp = -amp * s * s * folds * folds * c;
            let zrp = -amp * 2.0 * s / l * folds * sn;
            let (hrr, hpp, hrp) = (zrr, zr / r + zpp / (r * r), zrp / r - zp / (r * r));
            plate += 0.5 * D * (hrr * hrr + hpp * hpp + 2.0 * hrp * hrp) * r * dr * dp;
        }
    }
    let ratio = |rings: usize, model: BendModel| {
        let mesh = disc(rr, rings).unwrap();
        let cm = bending_only(&mesh, model);
        let x: Vec<Vec3> = (mesh.positions().iter())
            .map(|p| {
                let (r, phi) = ((p.x * p.x + p.z * p.z).sqrt(), p.z.atan2(p.x));
                Vec3::new(p.x, p.y + height(r, phi), p.z)
            })
            .collect();
        cm.energy(&x) / plate
    };
    let errors: Vec<f64> = [10, 20, 40]
        .iter()
        .map(|&r| (ratio(r, BendModel::ShapeOperator) - 1.0).abs())
        .collect();
    eprintln!(
        "six-fold wave, shape operator |energy / plate - 1| at 10, 20, 40 rings: {errors:.4?}"
    );
    assert!(errors[2] < 0.02, "{errors:?}");
    assert!(
        errors[1] < 0.6 * errors[0] && errors[2] < 0.6 * errors[1],
        "not converging: {errors:?}"
    );
    let hinge = ratio(40, BendModel::Hinge);
    eprintln!("hinge at 40 rings: {hinge:.3} x plate");
    assert!(hinge > 1.3, "the hinge's known excess: {hinge}");
}
