//! From a validated [`Scene`] to the runtime objects: mesh, force model, pins, colliders,
//! integrator, and the whole [`Simulation`].

use super::{
    ColliderSettings, ColliderShape, IntegratorKind, MeshSpec, RestAngles, Scene, SolverChoice,
    gltf_sample_rate,
};
use crate::budget;
use crate::coarse::{CarriedCloth, CoarseStart};
use crate::contact::ContactSettings;
use crate::error::SimError;
use crate::explicit::VerletSettings;
use crate::implicit::{ImplicitSettings, LinearSolver};
use crate::pins::PinGroup;
use crate::sewing::{SEAM_STIFFNESS_FACTOR, SewSettings, Sewing};
use crate::simulation::{Integrator, Simulation};
use crate::strain::StrainLimit;
use crate::system::{ClothPart, ClothSystem};
use crate::world::World;
use cloth_collide::{
    Collider, ColliderSet, GltfBody, GltfOptions, Motion, SelfCollision, Shape, SkinnedTrack,
};
use cloth_forces::{ClothModel, External};
use cloth_mesh::{ClothMesh, GarmentSummary, ObjImport, RestShape, Vec3};
use cloth_solver::{MultigridParams, NearNullSpace, PcgParams, Preconditioner};
use nalgebra::Rotation3;

/// One cloth of a scene, built and placed in the world (`cloth.position`, `cloth.rotation`).
#[derive(Clone, Debug)]
pub struct BuiltCloth {
    /// Its mesh, placed.
    pub mesh: ClothMesh,
    /// Vertex pairs to sew (sewing patterns; indices into `mesh`), else empty.
    pub stitches: Vec<[usize; 2]>,
    /// For an OBJ mesh, the rest shape used (`Uv` or `Mesh`).
    pub rest: Option<RestShape>,
    /// Whether the rest dihedral angles are those of the mesh as modelled (else flat).
    pub rest_angles_from_mesh: bool,
    /// For a sewing pattern: panels, stitches, openings.
    pub garment: Option<GarmentSummary>,
}

/// Builds cloth `k` of `scene` (index into [`Scene::cloths`]), placed in the world. File
/// errors name the key (`cloth[1].mesh.path`) and the file; a malformed sewing pattern's error
/// names its panel and edge.
pub fn build_cloth(scene: &Scene, k: usize) -> Result<BuiltCloth, SimError> {
    let c = scene.cloths.get(k).ok_or_else(|| SimError::Invalid {
        key: "cloth".into(),
        message: format!("no cloth {k} (the scene has {})", scene.cloths.len()),
    })?;
    let prefix = if scene.cloths.len() == 1 {
        "cloth".to_owned()
    } else {
        format!("cloth[{k}]")
    };
    let file_error = |path: &std::path::Path, e: cloth_mesh::MeshError| SimError::Invalid {
        key: format!("{prefix}.mesh.path"),
        message: format!("{}: {e}", path.display()),
    };
    let mut built = BuiltCloth {
        mesh: match &c.mesh {
            MeshSpec::Grid {
                nx,
                ny,
                width,
                height,
                pattern,
            } => cloth_mesh::grid(*nx, *ny, *width, *height, *pattern)?,
            MeshSpec::Disc { radius, resolution } => cloth_mesh::disc(*radius, *resolution)?,
            MeshSpec::Obj { .. } | MeshSpec::Garmentcode { .. } => placeholder_mesh()?,
        },
        stitches: Vec::new(),
        rest: None,
        rest_angles_from_mesh: false,
        garment: None,
    };
    match &c.mesh {
        MeshSpec::Obj {
            path,
            uv_scale,
            rest,
            rest_angles,
            split_seams,
        } => {
            let obj = cloth_mesh::read_obj_data(path).map_err(|e| file_error(path, e))?;
            let opts = ObjImport {
                rest: *rest,
                uv_scale: *uv_scale,
                split_seams: *split_seams,
            };
            let used = opts.resolve(&obj);
            built.mesh = ClothMesh::from_obj_with(&obj, &opts).map_err(|e| file_error(path, e))?;
            built.rest = Some(used);
            built.rest_angles_from_mesh = match rest_angles {
                Some(a) => *a == RestAngles::Mesh,
                None => used == RestShape::Mesh,
            };
        }
        MeshSpec::Garmentcode {
            path, edge_length, ..
        } => {
            let pattern = cloth_mesh::read_pattern(path).map_err(|e| file_error(path, e))?;
            let garment = pattern
                .build(*edge_length)
                .map_err(|e| file_error(path, e))?;
            built.stitches = garment.stitches.iter().map(|s| s.vertices).collect();
            built.garment = Some(garment.summary());
            built.mesh = garment.mesh;
        }
        _ => {}
    }
    let r = Rotation3::from_matrix_unchecked(c.rotation_matrix());
    built.mesh.transform(&r, &c.position);
    Ok(built)
}

/// A one-triangle mesh standing in until a file's mesh replaces it.
fn placeholder_mesh() -> Result<ClothMesh, SimError> {
    Ok(cloth_mesh::grid(
        2,
        2,
        1.0,
        1.0,
        cloth_mesh::GridPattern::Uniform,
    )?)
}

/// Builds the cloth mesh of a scene, placed in the world: with several cloths, their meshes
/// joined in scene order (disjoint components, [`ClothMesh::concat`]).
pub fn build_mesh(scene: &Scene) -> Result<ClothMesh, SimError> {
    let cloths = (0..scene.cloths.len())
        .map(|k| build_cloth(scene, k))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(join(scene, &cloths)?.0)
}

/// The cloths joined into one mesh, with each cloth's part.
fn join(scene: &Scene, cloths: &[BuiltCloth]) -> Result<(ClothMesh, Vec<ClothPart>), SimError> {
    let meshes: Vec<&ClothMesh> = cloths.iter().map(|c| &c.mesh).collect();
    let mesh = if let [one] = meshes[..] {
        one.clone()
    } else {
        ClothMesh::concat(&meshes)?
    };
    let (mut v, mut t) = (0, 0);
    let parts = cloths
        .iter()
        .zip(&scene.cloths)
        .map(|(b, s)| {
            let (nv, nt) = (b.mesh.num_vertices(), b.mesh.num_triangles());
            let part = ClothPart {
                name: s.name.clone(),
                vertices: v..v + nv,
                triangles: t..t + nt,
                rest: b.rest,
                garment: b.garment.clone(),
            };
            (v, t) = (v + nv, t + nt);
            part
        })
        .collect();
    Ok((mesh, parts))
}

/// The force model of the joined cloths: each cloth's material on its triangles, rest
/// dihedral angles as modelled for the cloths that ask for it.
fn build_model(
    scene: &Scene,
    cloths: &[BuiltCloth],
    mesh: &ClothMesh,
    parts: &[ClothPart],
) -> Result<ClothModel, SimError> {
    let materials: Vec<_> = scene.cloths.iter().map(|c| c.material).collect();
    let mut of_triangle = vec![0; mesh.num_triangles()];
    for (k, p) in parts.iter().enumerate() {
        of_triangle[p.triangles.clone()].fill(k);
    }
    let mut model =
        ClothModel::with_materials(mesh, &materials, &of_triangle, scene.solver.definiteness)?;
    if cloths.iter().any(|c| c.rest_angles_from_mesh) {
        model.try_set_rest_angles_from(mesh.positions())?;
        let mut angles = model.rest_angles();
        for (a, h) in angles.iter_mut().zip(mesh.hinges()) {
            if !cloths[of_triangle[h.tris[0]]].rest_angles_from_mesh {
                *a = 0.0;
            }
        }
        model.set_rest_angles(&angles)?;
    }
    Ok(model)
}

/// Cloth size (vertices) from which `preconditioner = "auto"` takes multigrid in a scene with
/// cloth-cloth contact (any cloth's `self_collision`). Higher than without contact: contact
/// couplings are lumped out of the hierarchy (see `docs/method.md`), so solves take more
/// iterations, and each multigrid iteration costs several block-Jacobi ones; on the project's
/// garments (2,000-15,000 vertices) multigrid is no faster than block Jacobi on two threads.
pub const MULTIGRID_MIN_VERTICES: usize = 20_000;

/// Cloth size (vertices) from which `preconditioner = "auto"` takes multigrid in a scene
/// without cloth-cloth contact: from about this size a multigrid solve, with its nearly flat
/// iteration count, is faster than block Jacobi.
pub const MULTIGRID_MIN_VERTICES_WITHOUT_CONTACT: usize = 2_000;

/// The linear solver `scene`'s `solver.preconditioner` stands for: `"auto"` resolved by the
/// cloth's size and whether cloth-cloth contact is on ([`MULTIGRID_MIN_VERTICES`],
/// [`MULTIGRID_MIN_VERTICES_WITHOUT_CONTACT`]); any other choice as it is.
pub fn resolve_preconditioner(scene: &Scene) -> SolverChoice {
    let vertices = budget::estimate(scene).map_or(0, |b| b.vertices);
    preconditioner_for(scene, vertices)
}

/// [`resolve_preconditioner`] for a scene of `n` cloth vertices (the budget's estimate, which
/// reads mesh files: computed once by the caller).
pub(crate) fn preconditioner_for(scene: &Scene, n: usize) -> SolverChoice {
    match scene.solver.preconditioner {
        SolverChoice::Auto => {
            let threshold = if scene.cloths.iter().any(|c| c.self_collision) {
                MULTIGRID_MIN_VERTICES
            } else {
                MULTIGRID_MIN_VERTICES_WITHOUT_CONTACT
            };
            if n >= threshold {
                SolverChoice::Multigrid
            } else {
                SolverChoice::BlockJacobi
            }
        }
        choice => choice,
    }
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
            let n = budget::estimate(scene).map_or(0, |b| b.vertices);
            let choice = preconditioner_for(scene, n);
            let solver = match choice {
                SolverChoice::Diagonal => LinearSolver::Mpcg(pcg(Preconditioner::Diagonal)),
                SolverChoice::Auto | SolverChoice::BlockJacobi => {
                    LinearSolver::Mpcg(pcg(Preconditioner::BlockJacobi))
                }
                // The three translations per aggregate at every size: a solve costs about
                // 0.6 of one with the rigid-body modes, and whole drapes run faster with them.
                SolverChoice::Multigrid => LinearSolver::Multigrid(
                    pcg(Preconditioner::BlockJacobi),
                    MultigridParams {
                        near_null_space: NearNullSpace::Translations,
                        ..MultigridParams::default()
                    },
                ),
                SolverChoice::Direct => LinearSolver::Direct,
            };
            Integrator::Implicit(ImplicitSettings {
                h_max: s.h_max,
                h_min: s.h_min,
                solver,
                stretch_threshold: s.stretch_threshold,
                step_control: s.step_control,
                newton_corrections: s.newton_corrections,
                coulomb_rounds: s.coulomb_rounds,
                correction_tolerance: s.correction_tolerance,
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
            global_after: s.strain_global_after,
            ..VerletSettings::default()
        }),
    }
}

/// The pin groups of a scene over the initial positions `x0` of all cloths: each group's
/// `vertices` and `region` refer to its own cloth (`parts[k]`); `attach` names one of
/// `colliders`.
fn build_pins(
    scene: &Scene,
    x0: &[Vec3],
    parts: &[ClothPart],
    colliders: &[Collider],
) -> Result<Vec<PinGroup>, SimError> {
    let mut pins = Vec::with_capacity(scene.pins.len());
    for (k, p) in scene.pins.iter().enumerate() {
        let range = parts[scene.pin_cloth(p).min(parts.len() - 1)]
            .vertices
            .clone();
        let n = range.len();
        if let Some(&bad) = p.vertices.iter().find(|&&i| i >= n) {
            return Err(SimError::Invalid {
                key: format!("pin[{k}].vertices"),
                message: format!("vertex {bad} is out of range: the cloth has {n} vertices"),
            });
        }
        let selected: Vec<usize> = range
            .clone()
            .filter(|&i| p.selects(i - range.start, &x0[i]))
            .collect();
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

/// The stitches of every sewn cloth, in world vertex indices.
fn build_sewing(
    scene: &Scene,
    cloths: &[BuiltCloth],
    parts: &[ClothPart],
    x0: &[Vec3],
) -> Result<Sewing, SimError> {
    let mut sewing = Sewing::new();
    for ((c, b), p) in scene.cloths.iter().zip(cloths).zip(parts) {
        let Some(sew_time) = c.sew_time else {
            continue;
        };
        let base = p.vertices.start;
        let pairs = b.stitches.iter().map(|s| s.map(|v| v + base)).collect();
        let stiffness = SEAM_STIFFNESS_FACTOR * c.material.stretch[0].max(c.material.stretch[1]);
        let settings = SewSettings {
            sew_start: c.sew_start.unwrap_or(0.0),
            sew_time,
            stiffness,
            damping: c.material.stretch_damping * stiffness,
            gravity_scale: c.sew_gravity.unwrap_or(0.0),
        };
        sewing.add_cloth(pairs, x0, p.vertices.clone(), settings)?;
    }
    Ok(sewing)
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

/// Builds the whole simulation of a scene: every cloth joined into one system, forces, pins,
/// stitches, colliders and integrator.
///
/// The scene's estimated memory and run time are checked first ([`crate::budget::admit`]), so
/// nothing large is allocated for a scene that would be refused.
pub fn build_simulation(scene: &Scene) -> Result<Simulation, SimError> {
    budget::admit(scene)?;
    let cloths = (0..scene.cloths.len())
        .map(|k| build_cloth(scene, k))
        .collect::<Result<Vec<_>, _>>()?;
    let (mesh, parts) = join(scene, &cloths)?;
    let model = build_model(scene, &cloths, &mesh, &parts)?;
    let first = &scene.cloths[0];
    let external = External {
        gravity: scene.run.gravity,
        wind: first.wind,
        wind_coefficient: first.drag,
        ..External::default()
    };
    let colliders = scene
        .colliders
        .iter()
        .enumerate()
        .map(|(k, c)| build_collider(scene, k, c))
        .collect::<Result<Vec<_>, _>>()?;
    let pins = build_pins(scene, mesh.positions(), &parts, &colliders)?;
    let sewing = build_sewing(scene, &cloths, &parts, mesh.positions())?;
    // One thickness for the joined cloths: the largest of them.
    let thickness = scene.cloths.iter().map(|c| c.thickness).fold(0.0, f64::max);
    let contact = ContactSettings {
        cloth_thickness: thickness,
        self_friction: scene.cloths.iter().map(|c| c.friction).fold(0.0, f64::max),
        self_ccd: scene.cloths.iter().all(|c| c.self_ccd),
        ..ContactSettings::default()
    };
    let self_collision = if scene.cloths.iter().any(|c| c.self_collision) {
        Some(
            SelfCollision::new(
                &mesh,
                thickness,
                contact.self_stiffness,
                contact.self_damping,
            )?
            .with_friction(contact.self_friction, contact.stick_speed)?,
        )
    } else {
        None
    };
    let system = ClothSystem::new(mesh, model, external)?.with_parts(parts)?;
    let mut world = World::new(system, pins)?;
    if !colliders.is_empty() {
        world = world.with_colliders(ColliderSet::new(colliders)?, contact);
    }
    let count_intersections = (scene.run.count_intersections).unwrap_or(self_collision.is_some());
    if let Some(sc) = self_collision {
        world = world.with_self_collision(sc, count_intersections);
    }
    world.count_intersections = count_intersections;
    if !sewing.is_empty() {
        world = world.with_sewing(sewing);
    }
    world.contact = contact;
    let mut sim = Simulation::new(world, build_integrator(scene), scene.run.fps)?;
    crate::start::check_start_bounds(sim.world(), sim.state())?;
    let ranges: Vec<_> = sim
        .system()
        .parts
        .iter()
        .map(|p| p.vertices.clone())
        .collect();
    for (c, range) in scene.cloths.iter().zip(ranges) {
        if c.velocity != Vec3::zeros() {
            sim = sim.with_initial_velocity(range, c.velocity);
        }
    }
    let sim = sim.with_preroll(scene.run.preroll)?;
    let coarse = coarse_start(scene, &sim.system().parts, sim.world().sewing.sewn_by())?;
    // A coarse start replaces the initial positions (and untangles what it carries).
    Ok(match coarse {
        Some((copy, c)) => sim.with_coarse_start(copy, c),
        None => sim.with_clear_start().with_untangled_start(),
    })
}

/// The coarse copy that sews the garments with a `sew_edge_length` (see
/// [`MeshSpec::Garmentcode`]) and how its state is carried over, or `None` when no cloth asks
/// for one. `parts` are the scene's
/// cloths in the simulation; `sewn_by` (s) is when every seam is held closed.
fn coarse_start(
    scene: &Scene,
    parts: &[ClothPart],
    sewn_by: f64,
) -> Result<Option<(Simulation, CoarseStart)>, SimError> {
    let coarse_of = |c: &super::ClothSettings| match &c.mesh {
        MeshSpec::Garmentcode {
            path,
            edge_length,
            sew_edge_length: Some(h),
        } => Some((path.clone(), *edge_length, *h)),
        _ => None,
    };
    if !scene.cloths.iter().any(|c| coarse_of(c).is_some()) {
        return Ok(None);
    }
    let invalid = |message: String| SimError::Invalid {
        key: "cloth.mesh.sew_edge_length".into(),
        message,
    };
    if !scene.pins.is_empty() {
        return Err(invalid(
            "cannot be used with pins (they would select different vertices on the two meshes)"
                .into(),
        ));
    }
    if sewn_by > 0.0 {
        return Err(invalid(format!(
            "needs the seams closed within the preroll: they close {sewn_by} s after t = 0 (sew_start + sew_time > run.preroll = {} s)",
            scene.run.preroll
        )));
    }
    let mut copy = scene.clone();
    for c in &mut copy.cloths {
        if let MeshSpec::Garmentcode {
            edge_length,
            sew_edge_length,
            ..
        } = &mut c.mesh
            && let Some(h) = sew_edge_length.take()
        {
            *edge_length = h;
        }
    }
    let sim = build_simulation(&copy)
        .map_err(|e| invalid(format!("the copy at the coarse edge length: {e}")))?;
    let mut cloths = Vec::with_capacity(parts.len());
    for ((c, to), from) in scene.cloths.iter().zip(parts).zip(&sim.system().parts) {
        let transfer = match coarse_of(c) {
            Some((path, fine, coarse)) => {
                let pattern = cloth_mesh::read_pattern(&path)?;
                Some(
                    pattern
                        .build(fine)?
                        .transfer_from(&pattern.build(coarse)?)?,
                )
            }
            None => None,
        };
        cloths.push(CarriedCloth {
            to: to.vertices.clone(),
            from: from.vertices.clone(),
            transfer,
        });
    }
    let start = CoarseStart {
        cloths,
        until: sewn_by,
    };
    Ok(Some((sim, start)))
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

/// A glTF collider: the skinned body sampled at [`gltf_sample_rate`] as a deforming mesh posed
/// on demand (with the collider's own rigid motion on top), so that its memory does not grow
/// with the run's length.
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
    // The preroll, rounded up to whole samples so that output frames fall on poses, blends
    // from the bind pose (its first sample) into the clip's first pose at t = 0.
    let rate = gltf_sample_rate(scene.run.fps);
    let track = SkinnedTrack::new(body, rate, scene.run.preroll, scene.run.duration());
    let mut vertices = Vec::new();
    track.sample(0, &mut vertices);
    let shape = Shape::Mesh {
        vertices,
        triangles: track.body().triangles().to_vec(),
    };
    Ok((shape, Motion::skinned(rigid, track)))
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
