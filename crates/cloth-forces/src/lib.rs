//! Cloth forces after Baraff & Witkin, "Large Steps in Cloth Simulation" (1998), section 4:
//! stretch and shear conditions per triangle, a bend condition (per triangle and its flaps by
//! default, per hinge on request), condition damping, and external forces, each with analytic
//! Jacobians for implicit integration, in SI units that do not change meaning when the mesh is
//! refined.
//!
//! * Energies (resolution independent, docs/physics.md): stretch `a k_u/2 (|w_u| - b_u)^2 +
//!   a k_v/2 (|w_v| - b_v)^2` (k in N/m), shear `a k_s/2 (w_u . w_v)^2` (N/m), bend (D in
//!   N*m, [`BendModel`]):
//!   - [`BendModel::ShapeOperator`] (default): plate bending `A D/2 |K|^2` (Poisson ratio 0)
//!     with a per-triangle curvature `K` from the dihedral angles of its three edges
//!     (midedge formula of Grinspun et al. 2006), the split of each edge's angle between its
//!     two triangles minimised out of the energy at every evaluation (one sparse solve with a
//!     matrix factorised at rest; [`ShapeRest`], `docs/bending.md`). Against plate
//!     theory (`tests/bending_energy.rs`): every quadratic surface (bending, twist, saddle)
//!     gets the plate's energy on uniform, alternating, equilateral, jittered and disc meshes
//!     up to the free-edge strip, which shrinks with refinement. The heavy cantilever
//!     (`tests/cantilever.rs`) is within 1 degree of the exact elastica on every mesh and
//!     orientation from 4 cells across (0.37 at 16), with the clamp declared
//!     ([`ClothModel::set_clamped_vertices`]); the hinge is 2-7 degrees off.
//!   - [`BendModel::Hinge`] (the paper's): `k_e/2 (theta - theta0)^2` with
//!     `k_e = D |e|^2/(A1 + A2) * w_aniso` (rest |e|, A1, A2). Exact for cylinders along the
//!     axes of a right-triangle grid and on equilateral meshes (`tests/resolution.rs`), but it
//!     couples bending to twist: on a uniform grid `z = (a x^2 + 2c xy + b y^2)/2` costs
//!     `D/2 ((a+c)^2 + (b+c)^2 + 4c^2)` per area (twist 3x, 5.2x with 2:1 cells), discs are
//!     1.15-1.55x too stiff, and the cantilever sags 2-5 degrees too far at every resolution.
//! * Dihedral angle sign: see [`dihedral_angle`] (theta > 0 when the surface curves away from
//!   its normals).
//! * Damping (paper §4.5): `k_d = beta * k` with beta in seconds (`Material::*_damping`).
//! * Rest curvature: per-hinge rest angles ([`ClothModel::set_rest_angles_from`]) for both
//!   bend models.
//! * The implicit matrix of the shape operator is its Hessian at a fixed split: exact forces,
//!   and a matrix that bounds the minimised energy's Hessian from above (`tests/split.rs`).
//! * One generic routine turns a condition C (value, gradient, Hessian) into energy, forces
//!   `-k dC^T C`, stiffness and damping Jacobians (paper §4.1 and §4.5); see [`condition_response`]
//!   and [`Definiteness`] for how indefinite element Hessians are treated.
//! * [`ClothModel::evaluate`] is the parallel, deterministic, allocation-free fast path; its
//!   [`Evaluation`] lists Jacobian blocks in a fixed entry order so a solver can precompute where
//!   each goes. [`External`] adds gravity, drag, wind and user springs.
//!
//! Sign conventions: forces are minus energy gradients; `dfdx` is the (negative semidefinite
//! under [`Definiteness::Clamped`]) force Jacobian, so `A = M - h dfdv - h^2 dfdx` is SPD.
//!
//! ```
//! use cloth_forces::mesh::{GridPattern, grid};
//! use cloth_forces::{ClothModel, Definiteness, Evaluation, External, Material, Par, Vec3};
//!
//! let mesh = grid(11, 11, 1.0, 1.0, GridPattern::Alternating)?;
//! let model = ClothModel::new(&mesh, &Material::default(), Definiteness::Clamped)?;
//! // Stretch the sheet by 3% along u (x): energy = area * k_u/2 * 0.03^2.
//! let x: Vec<Vec3> = mesh.positions().iter().map(|p| Vec3::new(1.03 * p.x, p.y, p.z)).collect();
//! let v = vec![Vec3::zeros(); x.len()];
//! let expected = 1.0 * 2800.0 / 2.0 * 0.03f64.powi(2);
//! assert!((model.energy(&x) - expected).abs() < 1e-9 * expected);
//!
//! let mut eval = Evaluation::default();
//! model.evaluate(&x, &v, &mut eval, Par::default());
//! External::default().accumulate(&model, &x, &v, &mut eval);
//! // Internal forces sum to zero, so the net force is the weight.
//! let net: Vec3 = eval.forces.iter().sum();
//! assert!((net.y + 9.81 * Material::default().density).abs() < 1e-9);
//! assert_eq!(eval.dfdx().len(), eval.entries().len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// Index loops mirror the block formulas (f_a, K_ab, sum over l) and read better than zipped
// iterators here.
#![allow(clippy::needless_range_loop)]

mod bend;
mod condition;
mod error;
mod external;
mod material;
mod model;
mod scatter;
mod shape;
mod split;
#[cfg(test)]
mod tests;
mod triangle;

/// The mesh crate this one builds on, re-exported so that a dependent needs no other crate to
/// make a mesh.
pub use cloth_mesh as mesh;
pub use cloth_mesh::{ClothMesh, Par, nalgebra};

pub use bend::{HingeRest, bend_condition, dihedral_angle};
pub use condition::{
    Blocks, Condition, Definiteness, ElementResponse, Vec3, blocks_to_dense, condition_response,
    project_psd,
};
pub use error::ForceError;
pub use external::{External, UserSpring};
pub use material::{
    BendModel, DEFAULT_BEND_DAMPING, DEFAULT_SHEAR_DAMPING, DEFAULT_STRETCH_DAMPING, Material,
    PRESET_NAMES, STANDARD_GRAVITY,
};
pub use model::{ClothModel, Evaluation};
pub use shape::{ShapeRest, shape_condition};
pub use triangle::{TriangleRest, shear_condition, stretch_condition};
