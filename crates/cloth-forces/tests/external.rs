//! External forces: gravity and springs derive from a potential; drag, wind and spring
//! Jacobians match finite differences; validation names the field or spring.

mod common;

use cloth_forces::Par;
use cloth_forces::{
    ClothModel, Definiteness, Evaluation, External, ForceError, Material, UserSpring, Vec3,
};
use cloth_mesh::{GridPattern, grid};
use common::{Rng, dense, flat};

fn setup() -> (ClothModel, Vec<Vec3>, Vec<Vec3>, External) {
    let mesh = grid(4, 3, 0.3, 0.2, GridPattern::Alternating).unwrap();
    let m = Material {
        stretch: [0.0; 2],
        shear: 0.0,
        bend: 0.0,
        ..Material::default()
    };
    let model = ClothModel::new(&mesh, &m, Definiteness::Exact).unwrap();
    let mut rng = Rng(3);
    let x: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| p + rng.vec() * 0.03)
        .collect();
    let v: Vec<Vec3> = (0..x.len()).map(|_| rng.vec()).collect();
    let ext = External {
        gravity: Vec3::new(0.5, -9.81, 0.2),
        drag: 0.8,
        wind: Vec3::new(2.0, 0.5, -1.0),
        wind_coefficient: 1.3,
        springs: vec![
            UserSpring {
                vertex: 2,
                target: Vec3::new(0.1, 0.3, 0.0),
                target_velocity: Vec3::new(0.0, 1.0, 0.0),
                stiffness: 50.0,
                damping: 0.7,
            },
            UserSpring {
                vertex: 7,
                target: Vec3::new(-0.2, 0.1, 0.05),
                target_velocity: Vec3::zeros(),
                stiffness: 20.0,
                damping: 0.0,
            },
        ],
    };
    (model, x, v, ext)
}

fn total(model: &ClothModel, ext: &External, x: &[Vec3], v: &[Vec3]) -> Evaluation {
    let mut ev = Evaluation::default();
    model.evaluate(x, v, &mut ev, Par::default());
    ext.accumulate(model, x, v, &mut ev);
    ev
}

#[test]
fn gravity_and_springs_are_minus_potential_gradient_and_spring_dfdx_matches_fd() {
    let (model, x, _, mut ext) = setup();
    ext.drag = 0.0;
    ext.wind_coefficient = 0.0;
    // With v = 0 a moving spring target would add a constant (non-potential) damping force.
    ext.springs[0].target_velocity = Vec3::zeros();
    let z = vec![Vec3::zeros(); x.len()];
    let ev = total(&model, &ext, &x, &z);
    let n = x.len();
    let eps = 1e-6;
    let mut fd_k = nalgebra::DMatrix::zeros(3 * n, 3 * n);
    for i in 0..n {
        for c in 0..3 {
            let (mut xp, mut xm) = (x.clone(), x.clone());
            xp[i][c] += eps;
            xm[i][c] -= eps;
            let g = (ext.energy(&model, &xp) - ext.energy(&model, &xm)) / (2.0 * eps);
            assert!(
                (g + ev.forces[i][c]).abs() <= 1e-7 * (1.0 + ev.forces[i][c].abs()),
                "{i} {c}"
            );
            let col = (flat(&total(&model, &ext, &xp, &z).forces)
                - flat(&total(&model, &ext, &xm, &z).forces))
                / (2.0 * eps);
            fd_k.set_column(3 * i + c, &col);
        }
    }
    let k = dense(&ev, n, false);
    assert!((&fd_k - &k).amax() <= 1e-6 * k.amax());
    // Weight: the net force without springs is total mass * g.
    ext.springs.clear();
    let ev = total(&model, &ext, &x, &z);
    let net: Vec3 = ev.forces.iter().sum();
    let mass: f64 = model.masses().iter().sum();
    assert!((net - ext.gravity * mass).amax() <= 1e-12);
}

#[test]
fn drag_wind_and_spring_velocity_jacobians_match_fd() {
    let (model, x, v, ext) = setup();
    let ev = total(&model, &ext, &x, &v);
    let n = x.len();
    let eps = 1e-4;
    let mut fd = nalgebra::DMatrix::zeros(3 * n, 3 * n);
    for i in 0..n {
        for c in 0..3 {
            let (mut vp, mut vm) = (v.clone(), v.clone());
            vp[i][c] += eps;
            vm[i][c] -= eps;
            let col = (flat(&total(&model, &ext, &x, &vp).forces)
                - flat(&total(&model, &ext, &x, &vm).forces))
                / (2.0 * eps);
            fd.set_column(3 * i + c, &col);
        }
    }
    let d = dense(&ev, n, true);
    assert!(d.amax() > 0.0);
    assert!(
        (&fd - &d).amax() <= 1e-9 * d.amax(),
        "{}",
        (&fd - &d).amax()
    );
    // Drag and wind dissipate: -dfdv is PSD.
    assert!((-d).symmetric_eigen().eigenvalues.min() >= -1e-12);
}

#[test]
fn a_sheet_moving_with_the_wind_feels_no_drag() {
    let (model, x, _, mut ext) = setup();
    ext.springs.clear();
    ext.gravity = Vec3::zeros();
    let v = vec![ext.wind; x.len()];
    let ev = total(&model, &ext, &x, &v);
    assert!(ev.forces.iter().all(|f| f.amax() < 1e-12));
    // Falling flat sheet (normal along y) against still air: the normal wind opposes the motion.
    let mesh = grid(3, 3, 0.2, 0.2, GridPattern::Uniform).unwrap();
    let model = ClothModel::new(&mesh, &Material::default(), Definiteness::Clamped).unwrap();
    let ext = External {
        gravity: Vec3::zeros(),
        wind_coefficient: 2.0,
        ..External::default()
    };
    let v = vec![Vec3::new(0.3, -1.0, 0.0); mesh.num_vertices()];
    let ev = total(&model, &ext, mesh.positions(), &v);
    let net: Vec3 = ev.forces.iter().sum();
    assert!(
        (net - Vec3::new(0.0, 2.0 * mesh.total_rest_area(), 0.0)).amax() < 1e-12,
        "{net:?}"
    );
}

#[test]
fn external_validation_names_the_field_or_spring() {
    let ok = External {
        springs: vec![UserSpring {
            vertex: 3,
            target: Vec3::zeros(),
            target_velocity: Vec3::zeros(),
            stiffness: 1.0,
            damping: 0.0,
        }],
        ..External::default()
    };
    ok.validate(4).unwrap();
    assert!(matches!(
        ok.validate(3),
        Err(ForceError::InvalidSpring {
            spring: 0,
            vertex: 3,
            ..
        })
    ));
    let e = External {
        gravity: Vec3::new(0.0, f64::NAN, 0.0),
        ..External::default()
    };
    assert!(matches!(
        e.validate(1),
        Err(ForceError::InvalidExternal {
            field: "gravity",
            ..
        })
    ));
    let e = External {
        wind: Vec3::new(f64::INFINITY, 0.0, 0.0),
        ..External::default()
    };
    assert!(matches!(
        e.validate(1),
        Err(ForceError::InvalidExternal { field: "wind", .. })
    ));
    let e = External {
        drag: -1.0,
        ..External::default()
    };
    assert!(matches!(
        e.validate(1),
        Err(ForceError::InvalidExternal { field: "drag", .. })
    ));
    let e = External {
        wind_coefficient: f64::NAN,
        ..External::default()
    };
    assert!(matches!(
        e.validate(1),
        Err(ForceError::InvalidExternal {
            field: "wind_coefficient",
            ..
        })
    ));
    let mut s = ok.clone();
    s.springs[0].stiffness = -1.0;
    assert!(matches!(
        s.validate(4),
        Err(ForceError::InvalidSpring { .. })
    ));
    s.springs[0].stiffness = 1.0;
    s.springs[0].damping = f64::NAN;
    assert!(matches!(
        s.validate(4),
        Err(ForceError::InvalidSpring { .. })
    ));
    s.springs[0].damping = 0.0;
    s.springs[0].target.x = f64::NAN;
    let err = s.validate(4).unwrap_err();
    assert!(err.to_string().contains("user spring 0"), "{err}");
}
