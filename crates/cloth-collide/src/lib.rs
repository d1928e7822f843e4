//! Contact detection for cloth simulation (Baraff & Witkin 1998, §6).
//!
//! The crate has two halves, one per kind of contact:
//!
//! * [`solid`] — **cloth-solid**: [`Collider`]s (analytic sphere, capsule, cylinder, box,
//!   plane, or a triangle mesh, static, keyframed, moving at constant velocity, a deforming
//!   mesh sequence or a skinned glTF body, optionally also moving rigidly) are gathered in a
//!   [`ColliderSet`] prepared for one time. Mesh colliders are welded by identical position;
//!   closed components have an inside, open ones keep the cloth on the side it is on
//!   ([`MeshReport`] says what was done to each). The set reports, per cloth vertex, the
//!   nearest solid within a range as a [`Contact`] (signed distance, outward normal, surface
//!   point and the solid's velocity there). The simulation turns a contact into a constraint (the paper's ndof 2 with
//!   direction `normal` and target velocity along it from `surface_velocity`, §5.1), a
//!   position alteration y (§6.2), release and friction (§5.4 and §6.1).
//!   Sharp solid features poking through cloth triangles (box corners, capsule tips, cylinder
//!   rims, sharp vertices of closed mesh parts) are reported separately as [`FeatureContact`]s with barycentric
//!   weights, so the triangle's three vertices can be pushed along the triangle normal.
//!   [`GltfBody`] reads glTF 2.0 files and poses their skinned meshes at any time by linear
//!   blend skinning ([`solid::gltf`]).
//! * [`selfcontact`] — **cloth-cloth**: [`SelfCollision`] finds vertex-triangle and edge-edge
//!   proximities within a thickness (a bounding volume hierarchy over cloth triangles, refitted
//!   every step) and turns them into damped penalty springs with exact force Jacobians, the
//!   paper's treatment. [`count_self_intersections`] counts crossing triangle pairs for
//!   statistics. [`SelfCcd`] is the continuous safety net: vertex-triangle and edge-edge
//!   collisions of the straight-line motion of a step ([`Impact`]s with their times).
//!   [`untangle()`] undoes small crossings a state starts with.
//!
//! Every public item is also re-exported here at the crate root.
//!
//! Conventions: SI units, world y up; collider rotations are Euler angles in degrees applied
//! about x, then y, then z. Signed distances are negative inside solids; normals point out of
//! the solid. All queries are parallel (rayon) over fixed-size chunks and give the same bits
//! for any thread count.
//!
//! ```
//! use cloth_collide::{Collider, ColliderSet, Motion, Shape, Vec3};
//!
//! let ball = Collider {
//!     shape: Shape::Sphere { radius: 0.5 },
//!     position: Vec3::new(0.0, 1.0, 0.0),
//!     motion: Motion::Velocity { linear: Vec3::new(1.0, 0.0, 0.0), angular: Vec3::zeros() },
//!     name: "ball".into(),
//!     ..Collider::default()
//! };
//! let mut set = ColliderSet::new(vec![ball]).unwrap();
//! set.update(0.0);
//! // Two cloth vertices: one just above the ball, one far away.
//! let x = [Vec3::new(0.0, 1.51, 0.0), Vec3::new(5.0, 0.0, 0.0)];
//! let mut contacts = Vec::new();
//! set.vertex_contacts(&x, 0.005, 0.01, &mut contacts);
//! assert_eq!(contacts.len(), 1);
//! let c = &contacts[0];
//! assert_eq!(c.vertex, 0);
//! assert!((c.distance - 0.01).abs() < 1e-12);
//! assert!((c.normal - Vec3::y()).norm() < 1e-12);
//! assert!((c.surface_velocity - Vec3::new(1.0, 0.0, 0.0)).norm() < 1e-12);
//! ```

#![allow(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "`!(a < b)` is deliberately true for NaN: non-finite data is rejected, never kept"
)]

mod error;
mod geometry;
pub mod selfcontact;
pub mod solid;

pub use cloth_mesh::Vec3;
pub use error::CollideError;
pub use selfcontact::ccd::{
    Along, Impact, ImpactKind, NearPairs, SelfCcd, edge_edge_impact, vertex_triangle_impact,
};
pub use selfcontact::intersections::{
    IntersectionCounter, count_intersections, count_intersections_welded, count_self_intersections,
};
pub use selfcontact::proximity::{
    INNER_GAP, INNER_STIFFENING, Proximity, ProximityKind, SelfCollision,
};
pub use selfcontact::untangle::{Untangled, untangle};
pub use solid::attach::Attachment;
pub use solid::collider::{Collider, MIN_RELATIVE_VOLUME, Shape};
pub use solid::gltf::{GltfBody, GltfCounts, GltfOptions, MAX_GLTF_BYTES, SkinnedTrack};
pub use solid::motion::{Keyframe, Motion, euler_degrees};
pub use solid::report::{KeptSplit, MeshReport, SplitReason, WeldReport};
pub use solid::set::{ColliderSet, Contact, FeatureContact};
pub use solid::tessellate::PLANE_DRAW_HALF_SIDE;
