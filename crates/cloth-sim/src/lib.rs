//! Cloth simulation: the time-stepping layer of the workspace.
//!
//! It is the only crate that knows about time, steps and frames. It advances a
//! [`state::State`] (positions, velocities, time, owned by the caller) of a
//! [`world::World`] (the cloth, its pins, rails, colliders and self-contact) with one of
//! two integrators, side by side:
//!
//! * [`implicit`]: the method of Baraff & Witkin, "Large Steps in Cloth Simulation" (1998),
//!   [`implicit::Implicit`]: linearised backward Euler (paper §3) with position
//!   alteration (§6.2), per-vertex constraints enforced exactly by the modified PCG (§5.1,
//!   §5.3), constraint forces (§5.4) and adaptive steps (§7). One call of
//!   [`Implicit::step`](implicit::Implicit::step) runs the stages detect, constrain, assemble,
//!   solve, accept or reject, update, each a module of [`implicit`].
//! * [`explicit`]: the [`explicit::Verlet`] integrator on a mass-spring network with
//!   bending springs and the iterated maximum-stretch projection ("maximum stretch and bending
//!   springs").
//!
//! The frame driver [`simulation::Simulation`] sits on top, with the step-size
//! controller of the implicit integrator ([`implicit::StepController`]).
//! Scene files (TOML) are read by [`scene::Scene`] and built into a simulation by
//! [`scene::build_simulation`]; [`stats::RunReport`] is the one
//! statistics schema (`stats.json`), and [`output`] the layout of a run's directory.
//! [`prelude`] holds the names a typical user needs.
//!
//! The crates below are re-exported, so that a dependent needs only this one:
//! [`mesh`], [`forces`], [`solver`], [`collide`], and the one [`nalgebra`].
//!
//! ```
//! use cloth_sim::forces::{ClothModel, Definiteness, External, Material};
//! use cloth_sim::mesh::{GridPattern, grid};
//! use cloth_sim::prelude::*;
//!
//! // A 0.5 m sheet of 11 x 11 vertices pinned at two corners.
//! let mesh = grid(11, 11, 0.5, 0.5, GridPattern::Alternating)?;
//! let model = ClothModel::new(&mesh, &Material::default(), Definiteness::default())?;
//! let x0 = mesh.positions().to_vec();
//! let system = ClothSystem::new(mesh, model, External::default())?;
//! let pins = vec![PinGroup::new(vec![0, 10], &x0, Motion::Static)];
//! let world = World::new(system, pins)?;
//! let mut sim = Simulation::new(world, Integrator::Implicit(ImplicitSettings::default()), 30.0)?;
//! let stats = sim.step_frame()?;
//! assert!(stats.steps >= 1);
//! assert_eq!(sim.positions()[0], x0[0]); // pinned
//! assert!(sim.positions()[60].y < 0.0); // falling
//! # Ok::<(), cloth_sim::error::SimError>(())
//! ```

#![allow(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "`!(a <= b)` is deliberately true for NaN: non-finite figures fail the checks"
)]

pub mod budget;
pub mod checkpoint;
mod coarse;
pub mod contact;
pub mod error;
pub mod explicit;
pub mod implicit;
pub mod output;
pub mod pins;
pub mod prelude;
pub mod sanity;
pub mod scene;
pub mod sewing;
pub mod simulation;
pub mod state;
pub mod stats;
pub mod strain;
pub mod system;
pub mod tracks;
pub mod world;

pub use cloth_collide as collide;
pub use cloth_forces as forces;
pub use cloth_mesh as mesh;
pub use cloth_mesh::nalgebra;
pub use cloth_solver as solver;

// Root re-exports kept until dependents import from the modules or the prelude.
pub use budget::{Budget, admit, available_memory, estimate, peak_memory_bytes};
pub use checkpoint::Checkpoint;
pub use cloth_collide::{Keyframe, Motion};
pub use cloth_mesh::{Par, Vec3};
pub use contact::ContactSettings;
pub use error::{Reject, SimError};
pub use explicit::{
    DEFAULT_GLOBAL_AFTER, DEFAULT_SPRING_SWEEPS, DEFAULT_VERLET_ITERATIONS, LongRange, Verlet,
    VerletInfo, VerletSettings,
};
pub use implicit::{
    CORRECTABLE_CHANGE, ContactModes, Implicit, ImplicitMemory, ImplicitSettings, LinearSolver,
    PUSH_OUT_FRACTION, STEP_TARGET, Step, StepControl, StepController, StepInfo,
};
pub use output::{
    CHECKPOINT_FILE, COLLIDERS_FILE, LOCK_FILE, OutputDir, PREVIEW_FILE, RUN_FILES, STATS_FILE,
    USD_FILE, frame_number, frame_path,
};
pub use pins::PinGroup;
pub use sanity::{BOUND_FACTOR, Divergence, ENERGY_FACTOR, MAX_STRETCH};
pub use scene::{
    BuiltCloth, ClothSettings, ColliderSettings, ColliderShape, IntegratorKind, MAX_GRAVITY,
    MAX_MESH_VERTICES, MULTIGRID_MIN_VERTICES, MULTIGRID_MIN_VERTICES_WITHOUT_CONTACT, MeshSpec,
    PinSettings, Region, RestAngles, RunSettings, Scene, SceneError, SolverChoice, SolverSettings,
    build_cloth, build_collider, build_integrator, build_mesh, build_simulation,
    resolve_preconditioner,
};
pub use sewing::{SEAM_STIFFNESS_FACTOR, STITCH_CLOSING_SPEED, SewSettings, Sewing};
pub use simulation::{Integrator, Simulation};
pub use state::State;
pub use stats::{DEFAULT_FPS, FrameStats, Rejections, RunReport, Timings, Totals};
pub use strain::{DEFAULT_STRAIN_TOLERANCE, EdgeSet, StrainLimit};
pub use system::{ClothPart, ClothSystem};
pub use tracks::{ColliderFrame, ColliderTrack, CollidersFile};
pub use world::{DirectionalConstraint, World};
