//! The names a typical user of the crate needs: `use cloth_sim::prelude::*;`.
//!
//! Scenes ([`Scene`], [`build_simulation`]), the frame driver ([`Simulation`], [`Integrator`])
//! and its statistics ([`FrameStats`], [`RunReport`]), the pieces of a world built by hand
//! ([`World`], [`ClothSystem`], [`PinGroup`], [`Motion`], [`Keyframe`], [`State`]), both
//! integrators with their settings, and the error type.

pub use crate::error::SimError;
pub use crate::explicit::{Verlet, VerletSettings};
pub use crate::implicit::{Implicit, ImplicitSettings, Step};
pub use crate::pins::PinGroup;
pub use crate::scene::{Scene, build_simulation};
pub use crate::simulation::{Integrator, Simulation};
pub use crate::state::State;
pub use crate::stats::{FrameStats, RunReport};
pub use crate::system::ClothSystem;
pub use crate::world::World;
pub use cloth_collide::{Keyframe, Motion};
pub use cloth_mesh::Vec3;
