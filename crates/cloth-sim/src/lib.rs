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
pub mod projection;
pub mod sanity;
pub mod scene;
pub mod sewing;
pub mod simulation;
pub mod start;
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
