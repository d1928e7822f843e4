//! Cloth-solid contact: colliders, their motion, contact queries, attachments, glTF characters.
//!
//! A [`collider::Collider`] (an analytic shape or a closed triangle mesh, placed and moved by a
//! [`motion::Motion`]) is validated and prepared for queries at a time in a [`set::ColliderSet`],
//! which reports per cloth vertex the nearest solid within range ([`set::Contact`]) and sharp
//! solid features poking through cloth triangles ([`set::FeatureContact`]). Points glued to a
//! collider follow it ([`attach::Attachment`]); skinned characters are read from glTF files and
//! posed at any time ([`gltf::GltfBody`]); [`tessellate`] gives meshes of the analytic shapes.

pub mod attach;
pub mod collider;
pub mod gltf;
pub mod motion;
pub mod set;
mod shapes;
pub mod tessellate;
mod validate;
