//! Checks of a collider's numbers, mesh topology and motion, with errors naming the collider.

use cloth_mesh::Vec3;

use super::collider::{Collider, MIN_RELATIVE_VOLUME, Shape};
use super::motion::{Keyframe, Motion};
use crate::error::CollideError;
use crate::geometry::bvh::Aabb;

fn finite(v: &Vec3) -> bool {
    v.iter().all(|x| x.is_finite())
}

impl Collider {
    /// Checks every number and the mesh topology. Errors name the collider (its `name`).
    pub fn validate(&self) -> Result<(), CollideError> {
        self.validate_labeled(&self.label(None))
    }

    /// [`Collider::validate`] with errors naming the collider by `label`.
    pub(crate) fn validate_labeled(&self, label: &str) -> Result<(), CollideError> {
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
        validate_motion(label, &self.motion, &self.shape, false)
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
fn validate_motion(
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
    if !matches!(deformation, Motion::MeshSequence { .. }) {
        return Err(bf(
            "the deformation of a composite motion must be a mesh sequence",
        ));
    }
    if matches!(
        rigid,
        Motion::MeshSequence { .. } | Motion::Composite { .. }
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

/// Mesh checks: non-empty, indices in range, finite vertices, no degenerate triangle, every edge
/// shared by exactly two triangles traversing it in opposite directions, a volume enclosed.
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
    let scale = bbox_diag(vertices);
    validate_triangles(label, vertices, triangles, scale)?;
    validate_edges(label, triangles)?;
    // A closed surface that encloses (almost) nothing has no inside: contacts against it would
    // throw the cloth about. Refuse it rather than guess.
    let volume = triangles
        .iter()
        .map(|t| vertices[t[0]].dot(&vertices[t[1]].cross(&vertices[t[2]])))
        .sum::<f64>()
        .abs()
        / 6.0;
    if !(volume > MIN_RELATIVE_VOLUME * scale.powi(3)) {
        return Err(CollideError::FlatMesh {
            collider: l(),
            volume,
            diagonal: scale,
        });
    }
    Ok(())
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

/// Every edge shared by exactly two triangles that traverse it in opposite directions.
fn validate_edges(label: &str, triangles: &[[usize; 3]]) -> Result<(), CollideError> {
    let l = || label.to_string();
    // Directed half-edges sorted by undirected key.
    let mut half: Vec<(usize, usize, bool, usize)> = Vec::with_capacity(3 * triangles.len());
    for (t, tri) in triangles.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            half.push((a.min(b), a.max(b), a < b, t));
        }
    }
    half.sort_unstable();
    let mut i = 0;
    while i < half.len() {
        let mut j = i + 1;
        while j < half.len() && half[j].0 == half[i].0 && half[j].1 == half[i].1 {
            j += 1;
        }
        let (a, b) = (half[i].0, half[i].1);
        match j - i {
            1 => {
                return Err(CollideError::OpenMesh {
                    collider: l(),
                    a,
                    b,
                    triangle: half[i].3,
                });
            }
            2 => {
                if half[i].2 == half[i + 1].2 {
                    return Err(CollideError::InconsistentWinding {
                        collider: l(),
                        a,
                        b,
                        t0: half[i].3,
                        t1: half[i + 1].3,
                    });
                }
            }
            n => {
                return Err(CollideError::NonManifoldEdge {
                    collider: l(),
                    a,
                    b,
                    count: n,
                });
            }
        }
        i = j;
    }
    Ok(())
}

/// Diagonal length of the bounding box of the points (1 if zero or not finite).
fn bbox_diag(p: &[Vec3]) -> f64 {
    let b = Aabb::from_points(p.iter());
    let d = (b.max - b.min).norm();
    if d > 0.0 && d.is_finite() { d } else { 1.0 }
}
