//! Points glued to a collider: a pinned waistband or strap follows the body it is attached to,
//! rigidly with analytic shapes and rigid meshes, and with the surface of a deforming mesh.

use cloth_mesh::Vec3;

use super::collider::{Collider, Shape};
use super::motion::{Motion, euler_degrees};
use crate::geometry::primitives::closest_on_triangle;

/// How points glued to a collider move: point `j` is at `motion.place(&p_j(t), &pivot, t)`,
/// where `p_j(t)` is `initial[j]` for rigid colliders and the point's interpolated track
/// ([`Motion::sequence_at`], the collider's pose at t = 0 applied) for deforming meshes.
#[derive(Clone, Debug, PartialEq)]
pub struct Attachment {
    /// Rotation centre of the collider's rigid motion: its position at t = 0 (m).
    pub pivot: Vec3,
    /// The collider's rigid motion, with the points' tracks as a mesh sequence for a deforming
    /// mesh.
    pub motion: Motion,
    /// The points at t = 0 (m).
    pub initial: Vec<Vec3>,
}

impl Collider {
    /// Glues world points (at t = 0) to this collider. On a deforming mesh each point keeps
    /// its barycentric position on its closest triangle of the first pose and its offset from
    /// there in that triangle's frame (edge, in-plane perpendicular, normal), so it follows the
    /// surface as the body moves and deforms and sits exactly where it was at t = 0 (also when
    /// its closest point is on an edge or a corner, where the offset is not along the normal);
    /// on anything else it keeps its place in the collider's local frame.
    pub fn attach(&self, points: &[Vec3]) -> Attachment {
        let rigid = self.motion.rigid().clone();
        let initial = points.to_vec();
        let (Some(d), Shape::Mesh { triangles, .. }) = (self.motion.deformation(), &self.shape)
        else {
            return Attachment {
                pivot: self.position,
                motion: rigid,
                initial,
            };
        };
        let r0 = euler_degrees(&self.rotation);
        let to_local = |p: &Vec3| r0.inverse() * (p - self.position);
        let to_world = |q: &Vec3| self.position + r0 * q;
        let mut buf = Vec::new();
        let first = d.frame(0, &mut buf);
        let anchors: Vec<Anchor> = points
            .iter()
            .map(|p| Anchor::closest(&to_local(p), first, triangles))
            .collect();
        let tracks: Vec<Vec<Vec3>> = (0..d.len())
            .map(|k| {
                let pose = d.frame(k, &mut buf);
                anchors
                    .iter()
                    .map(|a| to_world(&a.at(pose, triangles)))
                    .collect()
            })
            .collect();
        let (fps, start) = (d.fps(), d.start());
        let motion = Motion::deforming(rigid, tracks, fps, start);
        Attachment {
            pivot: self.position,
            motion,
            initial,
        }
    }
}

/// A point on a triangle mesh: barycentric weights on a triangle and an offset in the
/// triangle's orthonormal frame (first edge, in-plane perpendicular, unit normal).
struct Anchor {
    triangle: usize,
    weights: [f64; 3],
    offset: Vec3,
}

impl Anchor {
    /// The anchor of `p` on its closest triangle of the mesh `vertices`.
    fn closest(p: &Vec3, vertices: &[Vec3], triangles: &[[usize; 3]]) -> Anchor {
        let mut best = (f64::INFINITY, 0, [1.0, 0.0, 0.0]);
        for (k, t) in triangles.iter().enumerate() {
            let (a, b, c) = (&vertices[t[0]], &vertices[t[1]], &vertices[t[2]]);
            let (w, _) = closest_on_triangle(p, a, b, c);
            let d = (p - (a * w[0] + b * w[1] + c * w[2])).norm_squared();
            if d < best.0 {
                best = (d, k, w);
            }
        }
        let (_, triangle, weights) = best;
        let mut anchor = Anchor {
            triangle,
            weights,
            offset: Vec3::zeros(),
        };
        let (q, frame) = anchor.frame(vertices, triangles);
        let d = p - q;
        anchor.offset = Vec3::new(d.dot(&frame[0]), d.dot(&frame[1]), d.dot(&frame[2]));
        anchor
    }

    /// The surface point of the anchor on the mesh `vertices` and its triangle's orthonormal
    /// frame: unit first edge, unit in-plane perpendicular, unit normal (zeros for a
    /// degenerate triangle, which then holds the point at its surface point).
    fn frame(&self, vertices: &[Vec3], triangles: &[[usize; 3]]) -> (Vec3, [Vec3; 3]) {
        let t = triangles[self.triangle];
        let (a, b, c) = (vertices[t[0]], vertices[t[1]], vertices[t[2]]);
        let w = self.weights;
        let q = a * w[0] + b * w[1] + c * w[2];
        let n = (b - a).cross(&(c - a)).try_normalize(1e-300);
        let e = (b - a).try_normalize(1e-300);
        let frame = match (e, n) {
            (Some(e), Some(n)) => [e, n.cross(&e), n],
            _ => [Vec3::zeros(); 3],
        };
        (q, frame)
    }

    /// The anchored point on the mesh `vertices` (same topology as when anchored).
    fn at(&self, vertices: &[Vec3], triangles: &[[usize; 3]]) -> Vec3 {
        let (q, [e, m, n]) = self.frame(vertices, triangles);
        q + e * self.offset.x + m * self.offset.y + n * self.offset.z
    }
}
