//! Cloth simulation after Baraff & Witkin, "Large Steps in Cloth Simulation" (SIGGRAPH 1998).
//!
//! This umbrella crate re-exports the member crates of the workspace so that one dependency
//! brings the whole simulator; each member can also be used alone. With the default `cli`
//! feature it also builds the `cloth` command; `default-features = false` leaves only the
//! simulation crates (no png, gif, plotters, clap, indicatif or ctrlc), and the `view` feature
//! adds [`view`] (previews, USD export, plots).

pub use cloth_collide as collide;
pub use cloth_forces as forces;
pub use cloth_mesh as mesh;
pub use cloth_sim as sim;
pub use cloth_solver as solver;
#[cfg(feature = "view")]
pub use cloth_view as view;

/// The README's example, compiled and run as a doc test so that the front door stays true.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
