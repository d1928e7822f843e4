//! Checks of a collider's numbers, mesh topology and motion, with errors naming the collider.

use cloth_mesh::Vec3;

use super::collider::{Collider, Shape};
use super::gltf::SkinnedTrack;
use super::mesh::analysis::{MeshAnalysis, analyse, bbox_diag};
use super::mesh::weld::{Weld, weld_positions};
use super::motion::{Deformation, Keyframe, Motion};
use crate::error::CollideError;

fn finite(v: &Vec3) -> bool {
    v.iter().all(|x| x.is_finite())
}

impl Collider {
    /// Checks every number and the mesh topology (after welding: see [`Shape::Mesh`]). Errors
    /// name the collider (its `name`).
    pub fn validate(&self) -> Result<(), CollideError> {
        self.validate_labeled(&self.label(None)).map(|_| ())
    }

    /// [`Collider::validate`] with errors naming the collider by `label`; a mesh's welded
    /// topology.
    pub(crate) fn validate_labeled(
        &self,
        label: &str,
    ) -> Result<Option<MeshAnalysis>, CollideError> {
        let nf = |what: &str| CollideError::NonFinite {
            collider: label.to_string(),
            what: what.to_string(),
        };
        if !finite(&self.position) {
            return Err(nf("position"));
        }
        if !finite(&self.rotation) {
            return Err(nf("rotation"));
        }
        if !self.friction.is_finite() {
            return Err(nf("friction"));
        }
        if self.friction < 0.0 {
            return Err(CollideError::NegativeFriction {
                collider: label.to_string(),
                value: self.friction,
            });
        }
        if !self.thickness.is_finite() {
            return Err(nf("thickness"));
        }
        if self.thickness < 0.0 {
            return Err(CollideError::NegativeThickness {
                collider: label.to_string(),
                value: self.thickness,
            });
        }
        validate_shape(label, &self.shape)?;
        validate_motion(label, &self.motion, &self.shape, false)?;
        let Shape::Mesh {
            vertices,
            triangles,
        } = &self.shape
        else {
            return Ok(None);
        };
        // A skinned body is welded when it is read, where its joints and weights are known.
        let weld = match self.motion.deformation() {
            Some(Deformation::Frames { frames, .. }) => weld_positions(vertices, frames),
            Some(Deformation::Skinned(_)) => Weld::identity(vertices.len()),
            None => weld_positions(vertices, &[]),
        };
        analyse(label, vertices, triangles, weld).map(Some)
    }
}

/// Dimension checks of the analytic shapes and the mesh checks of [`validate_mesh`].
fn validate_shape(label: &str, shape: &Shape) -> Result<(), CollideError> {
    let nf = |what: &str| CollideError::NonFinite {
        collider: label.to_string(),
        what: what.to_string(),
    };
    let bad = |what: &'static str, value: f64, expected: &'static str| CollideError::BadDimension {
        collider: label.to_string(),
        what,
        value,
        expected,
    };
    let positive = |what: &'static str, v: f64| {
        if !v.is_finite() {
            Err(nf(what))
        } else if v <= 0.0 {
            Err(bad(what, v, "> 0"))
        } else {
            Ok(())
        }
    };
    match shape {
        Shape::Sphere { radius } => positive("radius", *radius)?,
        Shape::Capsule { radius, length } => {
            positive("radius", *radius)?;
            if !length.is_finite() {
                return Err(nf("length"));
            }
            if *length < 0.0 {
                return Err(bad("length", *length, ">= 0"));
            }
        }
        Shape::Cylinder { radius, length } => {
            positive("radius", *radius)?;
            positive("length", *length)?;
        }
        Shape::Cuboid { size } => {
            positive("size.x", size.x)?;
            positive("size.y", size.y)?;
            positive("size.z", size.z)?;
        }
        Shape::Plane => {}
        Shape::Mesh {
            vertices,
            triangles,
        } => validate_mesh(label, vertices, triangles)?,
    }
    Ok(())
}

/// Motion checks: finite numbers, strictly increasing keyframe times, a composite motion made
/// of a rigid part and a mesh sequence (not nested), and mesh sequences on mesh shapes with
/// one finite position per mesh vertex in every frame.
pub(super) fn validate_motion(
    label: &str,
    motion: &Motion,
    shape: &Shape,
    nested: bool,
) -> Result<(), CollideError> {
    let nf = |what: &str| CollideError::NonFinite {
        collider: label.to_string(),
        what: what.to_string(),
    };
    match motion {
        Motion::Static => {}
        Motion::Velocity { linear, angular } => {
            if !finite(linear) {
                return Err(nf("linear velocity"));
            }
            if !finite(angular) {
                return Err(nf("angular velocity"));
            }
        }
        Motion::Keyframes(keys) => validate_keyframes(label, keys)?,
        Motion::Composite { rigid, deformation } => {
            validate_composite(label, rigid, deformation, shape, nested)?;
        }
        Motion::MeshSequence { frames, fps, start } => {
            validate_sequence(label, frames, *fps, *start, shape)?;
        }
        Motion::Skinned(track) => validate_track(label, track, shape)?,
    }
    Ok(())
}

fn validate_keyframes(label: &str, keys: &[Keyframe]) -> Result<(), CollideError> {
    let kf = |index: usize, reason: &'static str| CollideError::BadKeyframes {
        collider: label.to_string(),
        index,
        reason,
    };
    if keys.is_empty() {
        return Err(kf(0, "no keyframes"));
    }
    for (i, k) in keys.iter().enumerate() {
        if !k.t.is_finite() || !finite(&k.translation) || !finite(&k.rotation) {
            return Err(kf(i, "time, translation or rotation is not finite"));
        }
        if i > 0 && k.t <= keys[i - 1].t {
            return Err(kf(i, "times must be strictly increasing"));
        }
    }
    Ok(())
}

fn validate_composite(
    label: &str,
    rigid: &Motion,
    deformation: &Motion,
    shape: &Shape,
    nested: bool,
) -> Result<(), CollideError> {
    let bf = |reason: &str| CollideError::BadFrames {
        collider: label.to_string(),
        reason: reason.to_string(),
    };
    if nested {
        return Err(bf("composite motions cannot be nested"));
    }
    if !matches!(
        deformation,
        Motion::MeshSequence { .. } | Motion::Skinned(_)
    ) {
        return Err(bf(
            "the deformation of a composite motion must be a mesh sequence or a skinned body",
        ));
    }
    if matches!(
        rigid,
        Motion::MeshSequence { .. } | Motion::Skinned(_) | Motion::Composite { .. }
    ) {
        return Err(bf(
            "the rigid part of a composite motion must be static, keyframes or velocity",
        ));
    }
    validate_motion(label, rigid, shape, true)?;
    validate_motion(label, deformation, shape, true)
}

fn validate_sequence(
    label: &str,
    frames: &[Vec<Vec3>],
    fps: f64,
    start: f64,
    shape: &Shape,
) -> Result<(), CollideError> {
    let bf = |reason: String| CollideError::BadFrames {
        collider: label.to_string(),
        reason,
    };
    if !start.is_finite() {
        return Err(bf(format!("start = {start} must be finite")));
    }
    let Shape::Mesh { vertices, .. } = shape else {
        return Err(bf("the shape is not a mesh".to_string()));
    };
    if !(fps.is_finite() && fps > 0.0) {
        return Err(bf(format!("fps = {fps} must be finite and > 0")));
    }
    if frames.is_empty() {
        return Err(bf("no frames".to_string()));
    }
    for (f, frame) in frames.iter().enumerate() {
        if frame.len() != vertices.len() {
            return Err(bf(format!(
                "frame {f} has {} vertices, the mesh has {}",
                frame.len(),
                vertices.len()
            )));
        }
        if let Some(v) = frame.iter().position(|p| !finite(p)) {
            return Err(bf(format!("frame {f}: vertex {v} is not finite")));
        }
    }
    Ok(())
}

/// A skinned body's track: a finite rate > 0 and one mesh vertex per body vertex.
fn validate_track(label: &str, track: &SkinnedTrack, shape: &Shape) -> Result<(), CollideError> {
    let bf = |reason: String| CollideError::BadFrames {
        collider: label.to_string(),
        reason,
    };
    let Shape::Mesh { vertices, .. } = shape else {
        return Err(bf("the shape is not a mesh".to_string()));
    };
    let rate = track.rate();
    if !(rate.is_finite() && rate > 0.0) {
        return Err(bf(format!(
            "skinned body: rate = {rate} must be finite and > 0"
        )));
    }
    let n = track.body().vertex_count();
    if n != vertices.len() {
        return Err(bf(format!(
            "the skinned body has {n} vertices, the mesh has {}",
            vertices.len()
        )));
    }
    Ok(())
}

/// Mesh checks before welding: non-empty, indices in range, finite vertices, no degenerate
/// triangle. The welded topology is checked by [`analyse`].
fn validate_mesh(
    label: &str,
    vertices: &[Vec3],
    triangles: &[[usize; 3]],
) -> Result<(), CollideError> {
    let l = || label.to_string();
    if vertices.is_empty() || triangles.is_empty() {
        return Err(CollideError::EmptyMesh {
            collider: l(),
            vertices: vertices.len(),
            triangles: triangles.len(),
        });
    }
    if let Some(i) = vertices.iter().position(|p| !finite(p)) {
        return Err(CollideError::NonFinite {
            collider: l(),
            what: format!("vertex {i}"),
        });
    }
    let scale = bbox_diag(vertices.iter());
    validate_triangles(label, vertices, triangles, scale)
}

/// Every index in range and no triangle degenerate (a repeated vertex, or an area that is
/// nothing for the mesh's size `scale`, its bounding-box diagonal).
fn validate_triangles(
    label: &str,
    vertices: &[Vec3],
    triangles: &[[usize; 3]],
    scale: f64,
) -> Result<(), CollideError> {
    for (t, tri) in triangles.iter().enumerate() {
        for &i in tri {
            if i >= vertices.len() {
                return Err(CollideError::IndexOutOfRange {
                    collider: label.to_string(),
                    triangle: t,
                    index: i,
                    count: vertices.len(),
                });
            }
        }
        let [a, b, c] = tri.map(|i| vertices[i]);
        let area2 = (b - a).cross(&(c - a)).norm();
        if tri[0] == tri[1]
            || tri[1] == tri[2]
            || tri[0] == tri[2]
            || !(area2 > 1e-24 * scale * scale)
        {
            return Err(CollideError::DegenerateTriangle {
                collider: label.to_string(),
                triangle: t,
            });
        }
    }
    Ok(())
}
