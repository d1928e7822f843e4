//! Collider description: shape, placement, motion, contact material; validation, pose and
//! velocity at a time.

use cloth_mesh::Vec3;
use nalgebra::{Isometry3, Translation3};

use super::motion::{Motion, RigidVelocity, euler_degrees};
use crate::error::CollideError;
use crate::geometry::bvh::Aabb;
use crate::geometry::primitives::closest_on_triangle;

/// The geometry of a collider, in its local frame (metres).
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// Ball of `radius` (m, > 0) centred at the local origin.
    Sphere {
        /// Radius (m), > 0.
        radius: f64,
    },
    /// Segment from (0, -length/2, 0) to (0, length/2, 0) swept by `radius`; total height
    /// `length + 2 radius`.
    Capsule {
        /// Radius (m), > 0.
        radius: f64,
        /// Length of the axis segment along local y (m), >= 0.
        length: f64,
    },
    /// Solid cylinder with flat caps, axis local y, centred: y in [-length/2, length/2].
    Cylinder {
        /// Radius (m), > 0.
        radius: f64,
        /// Height along local y (m), > 0.
        length: f64,
    },
    /// Box centred at the local origin.
    Cuboid {
        /// Full extents along local x, y, z (m), each > 0.
        size: Vec3,
    },
    /// Infinite half-space y <= 0 in the local frame; outward normal local +y.
    Plane,
    /// Closed, consistently wound triangle mesh (local coordinates, m). A mesh wound
    /// inward (negative enclosed volume) is flipped when the [`crate::ColliderSet`] is built.
    Mesh {
        /// Vertex positions (m).
        vertices: Vec<Vec3>,
        /// Triangles as vertex index triples.
        triangles: Vec<[usize; 3]>,
    },
}

/// A solid the cloth collides with.
#[derive(Clone, Debug, PartialEq)]
pub struct Collider {
    /// Geometry in the local frame.
    pub shape: Shape,
    /// World position of the local origin at t = 0 (m).
    pub position: Vec3,
    /// Orientation at t = 0: degrees about x, then y, then z (world axes), R = Rz Ry Rx.
    pub rotation: Vec3,
    /// Motion over time.
    pub motion: Motion,
    /// Coulomb friction coefficient with cloth, >= 0.
    pub friction: f64,
    /// Extra collision thickness of the surface (m, >= 0), added to the cloth thickness.
    pub thickness: f64,
    /// Name used in error messages and statistics (may be empty).
    pub name: String,
}

impl Default for Collider {
    /// A static unit sphere at the origin, friction 0.4, thickness 0.
    fn default() -> Self {
        Collider {
            shape: Shape::Sphere { radius: 1.0 },
            position: Vec3::zeros(),
            rotation: Vec3::zeros(),
            motion: Motion::Static,
            friction: 0.4,
            thickness: 0.0,
            name: String::new(),
        }
    }
}

fn finite(v: &Vec3) -> bool {
    v.iter().all(|x| x.is_finite())
}

impl Shape {
    /// The largest distance (m) of the solid's surface from its local origin (infinite for a
    /// plane).
    pub fn bounding_radius(&self) -> f64 {
        match self {
            Shape::Sphere { radius } => *radius,
            Shape::Capsule { radius, length } => radius + 0.5 * length,
            Shape::Cylinder { radius, length } => radius.hypot(0.5 * length),
            Shape::Cuboid { size } => 0.5 * size.norm(),
            Shape::Plane => f64::INFINITY,
            Shape::Mesh { vertices, .. } => vertices.iter().map(|v| v.norm()).fold(0.0, f64::max),
        }
    }
}

impl Collider {
    /// A label for error messages: the name, or `#?` when unnamed and not in a set.
    pub(crate) fn label(&self, index: Option<usize>) -> String {
        match (self.name.is_empty(), index) {
            (false, Some(i)) => format!("'{}' (#{i})", self.name),
            (false, None) => format!("'{}'", self.name),
            (true, Some(i)) => format!("#{i}"),
            (true, None) => "#?".to_string(),
        }
    }

    /// Checks every number and the mesh topology. Errors name the collider (its `name`).
    pub fn validate(&self) -> Result<(), CollideError> {
        self.validate_labeled(&self.label(None))
    }

    pub(crate) fn validate_labeled(&self, label: &str) -> Result<(), CollideError> {
        let nf = |what: &str| CollideError::NonFinite {
            collider: label.to_string(),
            what: what.to_string(),
        };
        let bad =
            |what: &'static str, value: f64, expected: &'static str| CollideError::BadDimension {
                collider: label.to_string(),
                what,
                value,
                expected,
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
        let positive = |what: &'static str, v: f64| {
            if !v.is_finite() {
                Err(nf(what))
            } else if v <= 0.0 {
                Err(bad(what, v, "> 0"))
            } else {
                Ok(())
            }
        };
        match &self.shape {
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
        validate_motion(label, &self.motion, &self.shape, false)
    }

    /// World pose at time t (s): rotation then translation, as an isometry mapping local to
    /// world coordinates. Non-finite `t` is treated as 0.
    pub fn pose(&self, t: f64) -> Isometry3<f64> {
        let t = if t.is_finite() { t } else { 0.0 };
        let (d, r) = self.motion.rigid().rigid_offset(t);
        Isometry3::from_parts(
            Translation3::from(self.position + d),
            r * euler_degrees(&self.rotation),
        )
    }

    /// Rigid velocity of the collider at time t (zero for static and mesh sequences).
    pub(crate) fn rigid_velocity(&self, t: f64) -> RigidVelocity {
        let t = if t.is_finite() { t } else { 0.0 };
        let (linear, omega) = self.motion.rigid().rigid_velocity(t);
        RigidVelocity {
            origin: self.pose(t).translation.vector,
            linear,
            omega,
        }
    }

    /// Local vertex positions of a mesh sequence at time t and their local velocities (m/s);
    /// `None` for other motions. The velocity is that of the frame interval ending at or
    /// after t (at an exact frame time, the interval ending there: contacts place the solid
    /// at a step's end, and a step ending on the last frame moved with the last interval);
    /// before the first frame and after the last the mesh holds still.
    pub(crate) fn sequence_state(&self, t: f64) -> Option<(Vec<Vec3>, Vec<Vec3>)> {
        let (frames, fps, start) = self.motion.sequence()?;
        if frames.is_empty() {
            return None;
        }
        let t = if t.is_finite() { t - start } else { 0.0 };
        let last = frames.len() - 1;
        let f = t * fps;
        if last == 0 || f < 0.0 || f > last as f64 {
            let k = if f < 0.0 { 0 } else { last };
            return Some((frames[k].clone(), vec![Vec3::zeros(); frames[k].len()]));
        }
        let k = (f.ceil() as usize).saturating_sub(1).min(last - 1);
        let s = f - k as f64;
        let (a, b) = (&frames[k], &frames[k + 1]);
        let pos = a.iter().zip(b).map(|(p, q)| p + (q - p) * s).collect();
        let vel = a.iter().zip(b).map(|(p, q)| (q - p) * fps).collect();
        Some((pos, vel))
    }

    /// Velocity (m/s) of the solid's material point at world point `p` at time t. For rigid
    /// motions this is v_origin + omega x (p - origin); for a mesh sequence it is the
    /// interpolated frame-difference velocity at the mesh point closest to `p` (a brute-force
    /// search over the triangles; [`crate::ColliderSet`] reports it per contact cheaply).
    pub fn point_velocity(&self, p: &Vec3, t: f64) -> Vec3 {
        if let (Some((pos, vel)), Shape::Mesh { triangles, .. }) =
            (self.sequence_state(t), &self.shape)
        {
            let pose = self.pose(t);
            let q = pose.inverse_transform_point(&(*p).into()).coords;
            let mut best = (f64::INFINITY, Vec3::zeros());
            for tri in triangles {
                let (Some(a), Some(b), Some(c)) =
                    (pos.get(tri[0]), pos.get(tri[1]), pos.get(tri[2]))
                else {
                    continue;
                };
                let (w, _) = closest_on_triangle(&q, a, b, c);
                let d = (q - (a * w[0] + b * w[1] + c * w[2])).norm_squared();
                if d < best.0 {
                    best = (
                        d,
                        vel[tri[0]] * w[0] + vel[tri[1]] * w[1] + vel[tri[2]] * w[2],
                    );
                }
            }
            return self.rigid_velocity(t).at(p) + pose.rotation * best.1;
        }
        self.rigid_velocity(t).at(p)
    }
}

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
        Motion::Keyframes(keys) => {
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
        }
        Motion::Composite { rigid, deformation } => {
            let bf = |reason: &str| CollideError::BadFrames {
                collider: label.to_string(),
                reason: reason.to_string(),
            };
            if nested {
                return Err(bf("composite motions cannot be nested"));
            }
            if !matches!(**deformation, Motion::MeshSequence { .. }) {
                return Err(bf(
                    "the deformation of a composite motion must be a mesh sequence",
                ));
            }
            if matches!(
                **rigid,
                Motion::MeshSequence { .. } | Motion::Composite { .. }
            ) {
                return Err(bf(
                    "the rigid part of a composite motion must be static, keyframes or velocity",
                ));
            }
            validate_motion(label, rigid, shape, true)?;
            validate_motion(label, deformation, shape, true)?;
        }
        Motion::MeshSequence { frames, fps, start } => {
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
            if !(fps.is_finite() && *fps > 0.0) {
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
        }
    }
    Ok(())
}

/// Mesh checks: non-empty, indices in range, finite vertices, no degenerate triangle, every edge
/// shared by exactly two triangles traversing it in opposite directions.
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
    for (t, tri) in triangles.iter().enumerate() {
        for &i in tri {
            if i >= vertices.len() {
                return Err(CollideError::IndexOutOfRange {
                    collider: l(),
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
                collider: l(),
                triangle: t,
            });
        }
    }
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

/// Smallest enclosed volume of a closed mesh collider relative to the cube of its bounding-box
/// diagonal (a 1 m x 1 m x 1 mm plate has 1.2e-4; a flat tetrahedron 0).
pub const MIN_RELATIVE_VOLUME: f64 = 1e-6;

/// Diagonal length of the bounding box of the points (1 if zero or not finite).
fn bbox_diag(p: &[Vec3]) -> f64 {
    let b = Aabb::from_points(p.iter());
    let d = (b.max - b.min).norm();
    if d > 0.0 && d.is_finite() { d } else { 1.0 }
}
