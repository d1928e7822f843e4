//! Geometry shared by both kinds of contact: closest points, intersection tests, a box hierarchy.

pub(crate) mod bvh;
pub(crate) mod primitives;
