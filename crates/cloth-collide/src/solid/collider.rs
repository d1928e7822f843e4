//! Collider description: shape, placement, motion, contact material; pose and velocity at a
//! time. The checks of [`Collider::validate`] are in the sibling `validate` module.

use cloth_mesh::Vec3;
use nalgebra::{Isometry3, Translation3};

use super::motion::{Motion, RigidVelocity, Window, euler_degrees};
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
    /// Triangle mesh (local coordinates, m), consistently wound. Vertices at bit-identical
    /// positions are welded into one when the [`crate::ColliderSet`] is built; a mesh may then
    /// still be open (boundary edges) or made of several parts. Components without boundary
    /// edges are closed solids with an inside (wound inward, with a negative enclosed volume,
    /// they are flipped); open components are surfaces without an inside, and the cloth is kept
    /// away from them on the side it is on. See [`crate::MeshReport`].
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

    /// Local vertex positions of a deforming mesh (a mesh sequence or a skinned body) at time
    /// t and their local velocities (m/s); `None` for other motions. See
    /// `Deformation::window` for which frames are mixed.
    pub(crate) fn sequence_state(&self, t: f64) -> Option<(Vec<Vec3>, Vec<Vec3>)> {
        let d = self.motion.deformation()?;
        let window = d.window(t)?;
        let (mut a, mut b) = (Vec::new(), Vec::new());
        Some(match window {
            Window::Hold(k) => window.state(d.frame(k, &mut a), &[], d.fps()),
            Window::Mix(k, _) => window.state(d.frame(k, &mut a), d.frame(k + 1, &mut b), d.fps()),
        })
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

/// Smallest enclosed volume of a closed mesh collider relative to the cube of its bounding-box
/// diagonal (a 1 m x 1 m x 1 mm plate has 1.2e-4; a flat tetrahedron 0).
pub const MIN_RELATIVE_VOLUME: f64 = 1e-6;
