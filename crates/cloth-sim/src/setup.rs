//! From a [`Scene`] to a ready-to-run [`Simulation`].

use crate::SimError;
use crate::contact::ContactSettings;
use crate::implicit::LinearSolver;
use crate::pins::PinGroup;
use crate::scene::{
    ColliderSettings, ColliderShape, HessianDefiniteness, IntegratorKind, MeshSpec, Pattern, Scene,
    SolverChoice,
};
use crate::simulation::{ImplicitSettings, Integrator, Simulation};
use crate::strain::StrainLimit;
use crate::system::ClothSystem;
use crate::verlet::VerletSettings;
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
    scene.cloth.material
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
    let self_collision = if scene.cloth.self_collision {
        let c = ContactSettings::default();
        Some(cloth_collide::SelfCollision::new(
            &mesh,
            scene.cloth.thickness,
            c.self_stiffness,
            c.self_damping,
        )?)
    } else {
        None
    };
    let system = ClothSystem::new(mesh, model, external)?;
    let mut sim = Simulation::new(system, build_integrator(scene), scene.run.fps, pins)?;
    if !scene.colliders.is_empty() {
        let colliders = scene
            .colliders
            .iter()
            .enumerate()
            .map(|(k, c)| build_collider(scene, k, c))
            .collect::<Result<Vec<_>, _>>()?;
        let set = cloth_collide::ColliderSet::new(colliders)?;
        sim.set_colliders(
            set,
            ContactSettings {
                cloth_thickness: scene.cloth.thickness,
                ..ContactSettings::default()
            },
        );
    }
    if let Some(sc) = self_collision {
        sim.set_self_collision(sc, true);
    }
    Ok(sim)
}

/// Converts a scene `[[collider]]` (index `k`) into a `cloth-collide` collider, reading OBJ
/// meshes and frame sequences.
pub fn build_collider(
    scene: &Scene,
    k: usize,
    c: &ColliderSettings,
) -> Result<cloth_collide::Collider, SimError> {
    use cloth_collide::{Keyframe, Motion, Shape};
    let name = c.name.clone().unwrap_or_else(|| format!("collider[{k}]"));
    let rigid = if !c.keyframes.is_empty() {
        Motion::Keyframes(
            c.keyframes
                .iter()
                .map(|kf| Keyframe {
                    t: kf.t,
                    translation: kf.translation,
                    rotation: kf.rotation,
                })
                .collect(),
        )
    } else if c.velocity != Vec3::zeros() || c.angular_velocity != Vec3::zeros() {
        Motion::Velocity {
            linear: c.velocity,
            angular: c.angular_velocity,
        }
    } else {
        Motion::Static
    };
    let (shape, motion) = match &c.shape {
        ColliderShape::Sphere { radius } => (Shape::Sphere { radius: *radius }, rigid),
        ColliderShape::Cylinder { radius, length } => (
            Shape::Cylinder {
                radius: *radius,
                length: *length,
            },
            rigid,
        ),
        ColliderShape::Capsule { radius, length } => (
            Shape::Capsule {
                radius: *radius,
                length: *length,
            },
            rigid,
        ),
        ColliderShape::Box { size } => (Shape::Cuboid { size: *size }, rigid),
        ColliderShape::Plane => (Shape::Plane, rigid),
        ColliderShape::Obj { path, frames, .. } => {
            let key = format!("collider[{k}].path");
            let (vertices, triangles) = read_solid_obj(path, &key)?;
            let motion = if frames.is_some() {
                let mut seq = Vec::with_capacity(scene.run.frames + 1);
                for f in 0..=scene.run.frames {
                    let p = c.shape.frame_path(f).ok_or_else(|| SimError::Invalid {
                        key: format!("collider[{k}].frames"),
                        message: "invalid frame pattern".into(),
                    })?;
                    let p = if p.is_relative() {
                        scene.base_dir.join(p)
                    } else {
                        p
                    };
                    let (v, t) = read_solid_obj(&p, &format!("collider[{k}].frames"))?;
                    if v.len() != vertices.len() || t != triangles {
                        return Err(SimError::Invalid {
                            key: format!("collider[{k}].frames"),
                            message: format!(
                                "{} does not have the topology of {}",
                                p.display(),
                                path.display()
                            ),
                        });
                    }
                    seq.push(v);
                }
                let deformation = Motion::MeshSequence {
                    frames: seq,
                    fps: scene.run.fps,
                };
                if matches!(rigid, Motion::Static) {
                    deformation
                } else {
                    Motion::Composite {
                        rigid: Box::new(rigid),
                        deformation: Box::new(deformation),
                    }
                }
            } else {
                rigid
            };
            (
                Shape::Mesh {
                    vertices,
                    triangles,
                },
                motion,
            )
        }
    };
    Ok(cloth_collide::Collider {
        shape,
        position: c.position,
        rotation: c.rotation,
        motion,
        friction: c.friction,
        thickness: c.thickness,
        name,
    })
}

/// Reads the vertices and triangles (fan-triangulated faces) of a solid's OBJ file; texture
/// coordinates and normals are ignored.
fn read_solid_obj(
    path: &std::path::Path,
    key: &str,
) -> Result<(Vec<Vec3>, Vec<[usize; 3]>), SimError> {
    let text = std::fs::read_to_string(path).map_err(|e| SimError::Invalid {
        key: key.into(),
        message: format!("cannot read {}: {e}", path.display()),
    })?;
    let bad = |line: usize, what: &str| SimError::Invalid {
        key: key.into(),
        message: format!("{}:{line}: {what}", path.display()),
    };
    let mut v = Vec::new();
    let mut tris = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        let mut it = line.split_whitespace();
        match it.next() {
            Some("v") => {
                let c: Vec<f64> = it
                    .take(3)
                    .map(|s| s.parse::<f64>())
                    .collect::<Result<_, _>>()
                    .map_err(|_| bad(ln + 1, "bad vertex"))?;
                if c.len() != 3 || c.iter().any(|x| !x.is_finite()) {
                    return Err(bad(ln + 1, "a vertex needs three finite coordinates"));
                }
                v.push(Vec3::new(c[0], c[1], c[2]));
            }
            Some("f") => {
                let mut idx = Vec::new();
                for tok in it {
                    let first = tok.split('/').next().unwrap_or("");
                    let i: i64 = first.parse().map_err(|_| bad(ln + 1, "bad face index"))?;
                    let i = if i < 0 { v.len() as i64 + i } else { i - 1 };
                    if i < 0 || i as usize >= v.len() {
                        return Err(bad(ln + 1, "face index out of range"));
                    }
                    idx.push(i as usize);
                }
                if idx.len() < 3 {
                    return Err(bad(ln + 1, "a face needs at least three vertices"));
                }
                for w in 1..idx.len() - 1 {
                    tris.push([idx[0], idx[w], idx[w + 1]]);
                }
            }
            _ => {}
        }
    }
    Ok((v, tris))
}
