//! Cloth-solid contact: colliders, their motion, contact queries, attachments, glTF characters.
//!
//! A [`collider::Collider`] (an analytic shape or a triangle mesh, placed and moved by a
//! [`motion::Motion`]) is validated and prepared for queries at a time in a [`set::ColliderSet`],
//! which reports per cloth vertex the nearest solid within range ([`set::Contact`]) and sharp
//! solid features poking through cloth triangles ([`set::FeatureContact`]). Mesh colliders are
//! welded by identical position and may be open; [`report::MeshReport`] says what was done.
//! Points glued to a collider follow it ([`attach::Attachment`]); skinned characters are read
//! from glTF files and posed at any time ([`gltf::GltfBody`]); [`tessellate`] gives meshes of
//! the analytic shapes.

pub mod attach;
pub mod collider;
pub mod gltf;
mod mesh;
pub mod motion;
pub mod report;
pub mod set;
mod shapes;
pub mod tessellate;
mod validate;
