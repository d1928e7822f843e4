//! Cloth simulation: the time-stepping layer of the workspace.
//!
//! It is the only crate that knows about time, steps and frames. It assembles the forces of
//! `cloth-forces` into the block matrix of `cloth-solver` and advances the cloth with either
//!
//! * the **implicit** integrator of Baraff & Witkin, "Large Steps in Cloth Simulation" (1998):
//!   linearized backward Euler (Knowl 2) with position alteration (Knowl 6), per-vertex
//!   constraints enforced exactly by the modified PCG (Knowls 1, 7), constraint forces
//!   (Knowl 8) and stretch-driven adaptive steps (Knowl 9); or
//! * the **explicit** Verlet integrator on a mass-spring network with bending springs and the
//!   iterated maximum-stretch pass ("maximum stretch and bending springs").
//!
//! It also reads scene files (TOML), and writes OBJ frames and `stats.json` atomically.
//!
//! ```
//! use cloth_sim::{ClothSystem, Integrator, ImplicitSettings, PinGroup, Simulation};
//! use cloth_forces::{ClothModel, Definiteness, External, Material};
//!
//! // A 0.5 m sheet of 11 x 11 vertices pinned at two corners.
//! let mesh = cloth_mesh::grid(11, 11, 0.5, 0.5, cloth_mesh::GridPattern::Alternating).unwrap();
//! let material = Material::default();
//! let model = ClothModel::new(&mesh, &material, Definiteness::default()).unwrap();
//! let x0 = mesh.positions().to_vec();
//! let system = ClothSystem::new(mesh, model, External::default()).unwrap();
//! let pins = vec![PinGroup::new(vec![0, 10], &x0, vec![])];
//! let mut sim = Simulation::new(system, Integrator::Implicit(ImplicitSettings::default()), 30.0, pins).unwrap();
//! let stats = sim.step_frame().unwrap();
//! assert!(stats.steps >= 1);
//! assert_eq!(sim.positions()[0], x0[0]); // pinned
//! assert!(sim.positions()[60].y < 0.0);  // falling
//! ```

mod contact;
mod error;
mod implicit;
mod output;
mod pins;
mod scene;
mod setup;
mod simulation;
mod stats;
mod strain;
mod system;
mod verlet;

pub use contact::ContactSettings;
pub use error::SimError;
pub use implicit::LinearSolver;
pub use output::{RunReport, Totals, frame_path, write_atomic};
pub use pins::PinGroup;
pub use scene::*;
pub use setup::build_simulation;
pub use simulation::{DirectionalConstraint, ImplicitSettings, Integrator, Simulation};
pub use stats::{FrameStats, Timings};
pub use strain::{EdgeSet, StrainLimit};

pub use system::ClothSystem;
pub use verlet::VerletSettings;
