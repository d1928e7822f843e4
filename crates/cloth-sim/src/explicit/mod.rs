//! The explicit integrator: position Verlet on springs with the maximum-stretch projection.
//!
//! [`Verlet`] steps a mass-spring network built from the cloth's mesh and solves the iterated
//! maximum-stretch projection in every step; it is the workspace's second method beside the
//! implicit one ("maximum stretch and bending springs").
//!
//! # One step of size h
//!
//! 1. **Predict**: every free vertex moves by its damped velocity and gravity,
//!    `y = x + h v*`, `v* = ((1 - d h) v + h g + h c w) / (1 + c h)` (damping rate `d`, air
//!    drag rate `c = drag A / m` towards the wind `w`, taken implicitly); pinned vertices go
//!    to their targets at `t + h`.
//! 2. **Detect**: vertices near a collider (placed at `t + h`) get a contact plane, the
//!    tangent plane at the closest surface point offset by the cloth's and the collider's
//!    thickness.
//! 3. **Project**: sweeps until every edge is within `[min, max]` times its rest length to the
//!    tolerance, or the cap on sweeps ([`crate::strain::StrainLimit`]). Each sweep starts with
//!    the long-range part ([`LongRange`]; by default an exact projection onto the limits of a
//!    spanning tree of the edges rooted at the pins), then makes one Gauss-Seidel pass over the
//!    edge and bending pairs in a fixed colour order (springs, maximum stretch and
//!    compression) and one over the contact planes (with Coulomb friction). The spring rows
//!    take part in the first [`VerletSettings::spring_sweeps`] sweeps only. From
//!    [`VerletSettings::global_after`] sweeps on, each sweep ends with up to four global
//!    projections (a sparse Cholesky solve over every edge at or beyond its limit and the
//!    contact planes): the fallback for steps the cheap sweeps do not finish. Friction acts
//!    in the first half of the cap, then the limit comes first.
//! 4. **Velocity**: `v = (x_new - x) / h`, what the projection left.
//!
//! The springs are solved in the projection (compliance `1 / (k h^2)`, backward Euler on the
//! springs) rather than applied as explicit forces: an explicit spring of stiffness k on a
//! vertex of mass m is stable only for `h < 2 sqrt(m / sum k)`, while the projected one keeps
//! its stiffness at small steps and dissipates at large ones. Every row is a convex function
//! of the positions, so a step solved exactly minimises `|x - y|^2_M / (2 h^2) + U(x)` over
//! the set the limits and contact planes allow, and the kinetic plus spring energy after it is
//! at most what it was before plus the work of gravity. The colour order makes a sweep
//! parallel and its result the same bits for every thread count.
//!
//! # Limits
//!
//! - The springs are soft by design: the limit, iterated to the tolerance, holds the shape.
//!   At large steps a few sweeps solve the springs only approximately (softer and more damped
//!   than `k`).
//! - A step that reaches the cap ends above the tolerance; the violation left is reported
//!   per frame (`strain_violation` in `stats.json`).
//! - Contact planes are tangent planes taken at the start of the step: a vertex kept on their
//!   outer side cannot enter a convex solid (sphere, box, capsule, plane); against concave
//!   meshes they approximate.
//! - No cloth-cloth contact and no adaptive step: a frame is split into equal steps no longer
//!   than [`VerletSettings::h`].

mod contact;
mod global;
mod pairs;
mod tether;
mod tree;
mod verlet;

pub use verlet::{
    DEFAULT_GLOBAL_AFTER, DEFAULT_SPRING_SWEEPS, DEFAULT_VERLET_ITERATIONS, LongRange, Verlet,
    VerletInfo, VerletSettings,
};
