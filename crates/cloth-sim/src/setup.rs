//! From a [`Scene`] to a ready-to-run [`Simulation`].

use crate::implicit::LinearSolver;
use crate::pins::PinGroup;
use crate::scene::{HessianDefiniteness, IntegratorKind, MeshSpec, Pattern, Scene, SolverChoice};
use crate::simulation::{ImplicitSettings, Integrator, Simulation};
use crate::strain::StrainLimit;
use crate::system::ClothSystem;
use crate::verlet::VerletSettings;
use crate::SimError;
use cloth_forces::{ClothModel, Definiteness, External, Material};
use cloth_mesh::{ClothMesh, GridPattern, Vec3};
use cloth_solver::{PcgParams, Preconditioner};
use nalgebra::Rotation3;

/// Builds the cloth mesh of a scene, placed in the world (`cloth.position`, `cloth.rotation`).
pub fn build_mesh(scene: &Scene) -> Result<ClothMesh, SimError> {
    let mut mesh = match &scene.cloth.mesh {
        MeshSpec::Grid {
            nx,
            ny,
            width,
            height,
            pattern,
        } => {
            let p = match pattern {
                Pattern::Uniform => GridPattern::Uniform,
                Pattern::Alternating => GridPattern::Alternating,
                Pattern::Equilateral => GridPattern::Equilateral,
            };
            cloth_mesh::grid(*nx, *ny, *width, *height, p)?
        }
        MeshSpec::Disc { radius, resolution } => cloth_mesh::disc(*radius, *resolution)?,
        MeshSpec::Obj { path, uv_scale } => cloth_mesh::read_obj(path, *uv_scale)?,
    };
    let r = Rotation3::from_matrix_unchecked(scene.cloth.rotation_matrix());
    mesh.transform(&r, &scene.cloth.position);
    Ok(mesh)
}

/// The force-model material of a scene.
pub fn build_material(scene: &Scene) -> Material {
    let m = &scene.cloth.material;
    Material {
        density: m.density,
        stretch: m.stretch,
        shear: m.shear,
        bend: m.bend,
        bend_uv: m.bend_uv,
        stretch_targets: m.stretch_targets,
        stretch_damping: m.stretch_damping,
        shear_damping: m.shear_damping,
        bend_damping: m.bend_damping,
    }
}

/// The integrator and its settings, from `[solver]`.
pub fn build_integrator(scene: &Scene) -> Integrator {
    let s = &scene.solver;
    let strain = s.strain_limit.map(|[min, max]| StrainLimit {
        min,
        max,
        iterations: s.strain_iterations,
    });
    match s.integrator {
        IntegratorKind::Implicit => {
            let pcg = |preconditioner| PcgParams {
                tolerance: s.cg_tolerance,
                max_iterations: s.cg_max_iterations,
                preconditioner,
                ..PcgParams::default()
            };
            let solver = match s.preconditioner {
                SolverChoice::Diagonal => LinearSolver::Mpcg(pcg(Preconditioner::Diagonal)),
                SolverChoice::BlockJacobi => LinearSolver::Mpcg(pcg(Preconditioner::BlockJacobi)),
                SolverChoice::Direct => LinearSolver::Direct,
            };
            Integrator::Implicit(ImplicitSettings {
                h_max: s.h_max,
                h_min: s.h_min,
                solver,
                stretch_threshold: s.stretch_threshold,
                grow_after: s.grow_after,
                strain_limit: strain,
            })
        }
        IntegratorKind::Verlet => Integrator::Verlet(VerletSettings {
            h: s.verlet_h,
            stretch_stiffness: s.spring_stiffness,
            bend_stiffness: s.bend_spring_stiffness,
            damping: s.verlet_damping,
            strain_limit: strain.unwrap_or_default(),
        }),
    }
}

/// Builds the whole simulation of a scene: mesh, forces, pins, colliders and integrator.
pub fn build_simulation(scene: &Scene) -> Result<Simulation, SimError> {
    let mesh = build_mesh(scene)?;
    let material = build_material(scene);
    let definiteness = match scene.solver.definiteness {
        HessianDefiniteness::Clamped => Definiteness::Clamped,
        HessianDefiniteness::Exact => Definiteness::Exact,
        HessianDefiniteness::Projected => Definiteness::Projected,
    };
    let model = ClothModel::new(&mesh, &material, definiteness)?;
    let g = scene.run.gravity;
    let external = External {
        gravity: Vec3::new(g.x, g.y, g.z),
        wind: scene.cloth.wind,
        wind_coefficient: scene.cloth.drag,
        ..External::default()
    };
    let x0 = mesh.positions().to_vec();
    let n = x0.len();
    let mut pins = Vec::with_capacity(scene.pins.len());
    for (k, p) in scene.pins.iter().enumerate() {
        if let Some(&bad) = p.vertices.iter().find(|&&i| i >= n) {
            return Err(SimError::Invalid {
                key: format!("pin[{k}].vertices"),
                message: format!("vertex {bad} is out of range: the cloth has {n} vertices"),
            });
        }
        let selected: Vec<usize> = (0..n).filter(|&i| p.selects(i, &x0[i])).collect();
        if selected.is_empty() {
            return Err(SimError::Invalid {
                key: format!("pin[{k}].region"),
                message: "selects no cloth vertex".into(),
            });
        }
        pins.push(PinGroup::new(selected, &x0, p.keyframes.clone()));
    }
    let system = ClothSystem::new(mesh, model, external)?;
    Simulation::new(system, build_integrator(scene), scene.run.fps, pins)
}

