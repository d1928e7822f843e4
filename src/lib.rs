//! Cloth simulation after Baraff & Witkin, "Large Steps in Cloth Simulation" (SIGGRAPH 1998).
//!
//! This umbrella crate re-exports the member crates of the workspace so that one dependency
//! brings the whole simulator; each member can also be used alone.

pub use cloth_collide as collide;
pub use cloth_forces as forces;
pub use cloth_mesh as mesh;
pub use cloth_sim as sim;
pub use cloth_solver as solver;
pub mod view;
