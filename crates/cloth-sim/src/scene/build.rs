//! From a validated [`Scene`] to the runtime objects: mesh, force model, pins, colliders,
//! integrator, and the whole [`Simulation`].

use super::{ColliderSettings, ColliderShape, IntegratorKind, MeshSpec, Scene, SolverChoice};
use crate::contact::ContactSettings;
use crate::pins::PinGroup;
use crate::simulation::{Integrator, Simulation};
use crate::step::{ImplicitSettings, LinearSolver};
use crate::strain::StrainLimit;
use crate::system::ClothSystem;
use crate::verlet::VerletSettings;
use crate::{SimError, World};
use cloth_collide::{Collider, ColliderSet, GltfBody, GltfOptions, Motion, SelfCollision, Shape};
use cloth_forces::{ClothModel, External};
use cloth_mesh::{ClothMesh, Vec3};
use cloth_solver::{MultigridParams, PcgParams, Preconditioner};
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
        } => cloth_mesh::grid(*nx, *ny, *width, *height, *pattern)?,
        MeshSpec::Disc { radius, resolution } => cloth_mesh::disc(*radius, *resolution)?,
        MeshSpec::Obj { path, uv_scale } => cloth_mesh::read_obj(path, *uv_scale)?,
    };
    let r = Rotation3::from_matrix_unchecked(scene.cloth.rotation_matrix());
    mesh.transform(&r, &scene.cloth.position);
    Ok(mesh)
}

/// The integrator and its settings, from `[solver]`.
pub fn build_integrator(scene: &Scene) -> Integrator {
    let s = &scene.solver;
    let strain = s.strain_limit.map(|[min, max]| StrainLimit {
        min,
        max,
        iterations: s.strain_iterations,
        tolerance: s.strain_tolerance,
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
                SolverChoice::Multigrid => LinearSolver::Multigrid(
                    pcg(Preconditioner::BlockJacobi),
                    MultigridParams::default(),
                ),
                SolverChoice::Direct => LinearSolver::Direct,
            };
            Integrator::Implicit(ImplicitSettings {
                h_max: s.h_max,
                h_min: s.h_min,
                solver,
                stretch_threshold: s.stretch_threshold,
                grow_after: s.grow_after,
                strain_limit: strain,
                ..ImplicitSettings::default()
            })
        }
        IntegratorKind::Verlet => Integrator::Verlet(VerletSettings {
            h: s.verlet_h,
            stretch_stiffness: s.spring_stiffness,
            bend_stiffness: s.bend_spring_stiffness,
            damping: s.verlet_damping,
            strain_limit: strain.unwrap_or(StrainLimit {
                iterations: s.strain_iterations,
                tolerance: s.strain_tolerance,
                ..StrainLimit::default()
            }),
            relaxation: s.strain_relaxation,
            long_range: s.strain_long_range,
            ..VerletSettings::default()
        }),
    }
}

/// The pin groups of a scene over the cloth's initial positions `x0`.
fn build_pins(
    scene: &Scene,
    x0: &[Vec3],
    colliders: &[Collider],
) -> Result<Vec<PinGroup>, SimError> {
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
        if let Some(name) = &p.attach {
            let collider =
                attached_collider(scene, colliders, name).ok_or_else(|| SimError::Invalid {
                    key: format!("pin[{k}].attach"),
                    message: format!(
                        "no collider is named `{}`",
                        cloth_mesh::sanitize_message(name)
                    ),
                })?;
            let points: Vec<Vec3> = selected.iter().map(|&i| x0[i]).collect();
            pins.push(PinGroup::attached(selected, collider.attach(&points)));
            continue;
        }
        let motion = if p.keyframes.is_empty() {
            Motion::Static
        } else {
            Motion::Keyframes(p.keyframes.clone())
        };
        pins.push(PinGroup::new(selected, x0, motion));
    }
    Ok(pins)
}

/// The collider a pin's `attach` names: by its `name`, or as `collider[k]`.
fn attached_collider<'a>(
    scene: &Scene,
    colliders: &'a [Collider],
    name: &str,
) -> Option<&'a Collider> {
    scene
        .colliders
        .iter()
        .position(|c| c.name.as_deref() == Some(name))
        .or_else(|| {
            let k = name.strip_prefix("collider[")?.strip_suffix(']')?;
            k.parse().ok()
        })
        .and_then(|k| colliders.get(k))
}

/// Builds the whole simulation of a scene: mesh, forces, pins, colliders and integrator.
///
/// The scene's estimated memory and run time are checked first ([`crate::admit`]), so nothing
/// large is allocated for a scene that would be refused.
pub fn build_simulation(scene: &Scene) -> Result<Simulation, SimError> {
    crate::admit(scene)?;
    let mesh = build_mesh(scene)?;
    let model = ClothModel::new(&mesh, &scene.cloth.material, scene.solver.definiteness)?;
    let external = External {
        gravity: scene.run.gravity,
        wind: scene.cloth.wind,
        wind_coefficient: scene.cloth.drag,
        ..External::default()
    };
    let colliders = scene
        .colliders
        .iter()
        .enumerate()
        .map(|(k, c)| build_collider(scene, k, c))
        .collect::<Result<Vec<_>, _>>()?;
    let pins = build_pins(scene, mesh.positions(), &colliders)?;
    let contact = ContactSettings {
        cloth_thickness: scene.cloth.thickness,
        self_friction: scene.cloth.friction,
        self_ccd: scene.cloth.self_ccd,
        ..ContactSettings::default()
    };
    let self_collision = if scene.cloth.self_collision {
        Some(
            SelfCollision::new(
                &mesh,
                scene.cloth.thickness,
                contact.self_stiffness,
                contact.self_damping,
            )?
            .with_friction(contact.self_friction, contact.stick_speed)?,
        )
    } else {
        None
    };
    let mut world = World::new(ClothSystem::new(mesh, model, external)?, pins)?;
    if !colliders.is_empty() {
        world = world.with_colliders(ColliderSet::new(colliders)?, contact);
    }
    if let Some(sc) = self_collision {
        world = world.with_self_collision(sc, true);
    }
    world.contact = contact;
    let sim = Simulation::new(world, build_integrator(scene), scene.run.fps)?;
    let sim = if scene.cloth.velocity != Vec3::zeros() {
        sim.with_initial_velocity(scene.cloth.velocity)
    } else {
        sim
    };
    sim.with_preroll(scene.run.preroll)
}

/// The rigid motion of a collider: keyframes, constant velocity, or none.
fn rigid_motion(c: &ColliderSettings) -> Motion {
    if !c.keyframes.is_empty() {
        Motion::Keyframes(c.keyframes.clone())
    } else if c.velocity != Vec3::zeros() || c.angular_velocity != Vec3::zeros() {
        Motion::Velocity {
            linear: c.velocity,
            angular: c.angular_velocity,
        }
    } else {
        Motion::Static
    }
}

/// Converts a scene `[[collider]]` (index `k`) into a `cloth-collide` collider, reading OBJ
/// meshes and frame sequences.
pub fn build_collider(scene: &Scene, k: usize, c: &ColliderSettings) -> Result<Collider, SimError> {
    let name = c.name.clone().unwrap_or_else(|| format!("collider[{k}]"));
    let rigid = rigid_motion(c);
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
            let (vertices, triangles) = read_solid(path, &format!("collider[{k}].path"))?;
            let motion = match frames {
                Some(_) => mesh_sequence(scene, k, c, path, &vertices, &triangles, rigid)?,
                None => rigid,
            };
            (
                Shape::Mesh {
                    vertices,
                    triangles,
                },
                motion,
            )
        }
        ColliderShape::Gltf { .. } => gltf_collider(scene, k, c, rigid)?,
    };
    Ok(Collider {
        shape,
        position: c.position,
        rotation: c.rotation,
        motion,
        friction: c.friction,
        thickness: c.thickness,
        name,
    })
}

/// Poses of a glTF body per second of simulation: the frame rate times the smallest whole
/// number that reaches 120 Hz. Between poses the surface moves linearly, so its velocity over
/// a step is the skinned motion's mean velocity over at most 1/120 s.
pub(crate) fn gltf_sample_rate(fps: f64) -> f64 {
    fps * (GLTF_SAMPLE_HZ / fps).ceil().max(1.0)
}

/// The least pose rate of glTF colliders (Hz).
const GLTF_SAMPLE_HZ: f64 = 120.0;

/// A glTF collider: the skinned body posed at [`gltf_sample_rate`] over the whole run, as a
/// deforming mesh (with the collider's own rigid motion on top).
fn gltf_collider(
    scene: &Scene,
    k: usize,
    c: &ColliderSettings,
    rigid: Motion,
) -> Result<(Shape, Motion), SimError> {
    let ColliderShape::Gltf {
        path,
        animation,
        scale,
        time_offset,
        looping,
    } = &c.shape
    else {
        unreachable!("gltf_collider is called for glTF shapes");
    };
    let options = GltfOptions {
        clip: animation.clone(),
        time_offset: *time_offset,
        looping: *looping,
        scale: *scale,
    };
    let body = GltfBody::load(path, &options).map_err(|e| SimError::Invalid {
        key: format!("collider[{k}].path"),
        message: e.to_string(),
    })?;
    let rate = gltf_sample_rate(scene.run.fps);
    // The preroll, rounded up to whole samples so that output frames fall on poses, blends
    // from the bind pose (its first sample) into the clip's first pose at t = 0.
    let before = (scene.run.preroll * rate).ceil() as usize;
    let samples = before + (scene.run.duration() * rate).round() as usize + 1;
    let mut poses = Vec::with_capacity(samples);
    for i in 0..samples {
        let mut pose = Vec::new();
        if i < before {
            body.pose_blend(i as f64 / before as f64, &mut pose);
        } else {
            body.pose((i - before) as f64 / rate, &mut pose);
        }
        poses.push(pose);
    }
    let shape = Shape::Mesh {
        vertices: poses[0].clone(),
        triangles: body.triangles().to_vec(),
    };
    let motion = Motion::deforming(rigid, poses, rate, -(before as f64) / rate);
    Ok((shape, motion))
}

/// The deforming-mesh motion of an OBJ collider with `frames`: every frame file (already
/// resolved against the scene directory by validation) must have the topology of `path`.
fn mesh_sequence(
    scene: &Scene,
    k: usize,
    c: &ColliderSettings,
    path: &std::path::Path,
    vertices: &[Vec3],
    triangles: &[[usize; 3]],
    rigid: Motion,
) -> Result<Motion, SimError> {
    let key = format!("collider[{k}].frames");
    let mut seq = Vec::with_capacity(scene.run.frames + 1);
    for f in 0..=scene.run.frames {
        let p = c.shape.frame_path(f).ok_or_else(|| SimError::Invalid {
            key: key.clone(),
            message: "invalid frame pattern".into(),
        })?;
        let (v, t) = read_solid(&p, &key)?;
        if v.len() != vertices.len() || t != triangles {
            return Err(SimError::Invalid {
                key,
                message: format!(
                    "{} does not have the topology of {}",
                    p.display(),
                    path.display()
                ),
            });
        }
        seq.push(v);
    }
    Ok(Motion::deforming(rigid, seq, scene.run.fps, 0.0))
}

/// The vertices and triangles of a solid's OBJ file (the workspace's one OBJ reader; texture
/// coordinates and normals are ignored).
fn read_solid(path: &std::path::Path, key: &str) -> Result<(Vec<Vec3>, Vec<[usize; 3]>), SimError> {
    let obj = cloth_mesh::read_obj_data(path).map_err(|e| SimError::Invalid {
        key: key.into(),
        message: format!("{}: {e}", path.display()),
    })?;
    Ok((obj.positions, obj.triangles))
}
