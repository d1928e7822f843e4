//! Skinned and animated bodies from glTF 2.0 files, posed by linear blend skinning at any time.
//!
//! [`GltfBody::load`] reads a `.glb` or `.gltf` file (buffers in the GLB chunk, in base64 data
//! URIs or in files next to it), finds every mesh instance of the scene, and keeps what is
//! needed to pose it: rest transforms of all nodes, skins (joints, inverse bind matrices, up to
//! any number of influences per vertex) and the chosen animation clip's channels.
//! [`GltfBody::pose`] evaluates the world vertex positions at a time t exactly, with no frame
//! sampling, so a simulator can pose the body at both ends of a step:
//!
//! 1. clip time tau = t + `time_offset`, wrapped into [0, duration) when `looping`;
//! 2. every animated node's translation, rotation and scale sampled at tau (STEP, LINEAR with
//!    slerp for rotations, CUBICSPLINE Hermite; glTF 2.0 section 3.11 and Appendix C);
//! 3. local matrices T * R * S, world matrices parent * local (section 3.5.3);
//! 4. skinned vertices v' = sum_i w_i J_i v with joint matrices
//!    J_i = world(joint_i) * inverseBind_i (section 3.7.3); the skinned mesh node's own
//!    transform is ignored, as the specification requires. Meshes on nodes without a skin are
//!    rigid: v' = world(node) v. Weights are renormalised to sum 1;
//! 5. positions multiplied by `scale`.
//!
//! All skinned and rigid mesh instances are concatenated in scene order (depth first, children
//! in file order; primitives in order), with one triangle list for the whole body, and
//! vertices split by the exporter are welded back (see [`GltfBody`]).
//! Hierarchies of any depth are handled iteratively.
//!
//! [`SkinnedTrack`] plays a body as a deforming mesh collider posed on demand, and
//! [`GltfCounts`] reads a file's vertex, triangle and key counts from its JSON alone, for
//! estimates before loading.

mod anim;
mod body;
mod counts;
mod data;
mod load;
mod track;
mod weld;

pub use body::{GltfBody, GltfOptions};
pub use counts::GltfCounts;
pub use data::MAX_GLTF_BYTES;
pub(crate) use track::SampleCache;
pub use track::SkinnedTrack;
