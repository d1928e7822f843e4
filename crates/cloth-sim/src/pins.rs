//! Pinned vertices and their prescribed motion.

use cloth_collide::{Attachment, Motion};
use cloth_mesh::Vec3;

/// A group of vertices held exactly on targets (ndof 0, paper §5.1).
///
/// A pinned vertex with initial position `p0` is at `c + d(t) + R(t) (p0 - c)` at time t, where
/// `c` is the centroid of the group's initial positions and `d`, `R` come from the group's
/// [`Motion`] (the same law as colliders: [`Motion::place`]). A static motion keeps the vertices
/// where they started. A group attached to a collider ([`PinGroup::attached`]) moves with it:
/// `c` is the collider's position and, on a deforming mesh, `p0` is replaced by the vertex's
/// track on the surface at time t ([`Motion::sequence_at`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PinGroup {
    /// Pinned vertex indices, sorted, unique.
    pub vertices: Vec<usize>,
    /// Initial positions of those vertices (m).
    pub initial: Vec<Vec3>,
    /// Rotation centre: centroid of `initial` (m).
    pub centre: Vec3,
    /// How the group moves: static, keyframes, velocity, or a collider's motion with the
    /// vertices' tracks as a mesh sequence.
    pub motion: Motion,
}

impl PinGroup {
    /// A pin group over `vertices` at their positions in `x`, moving by `motion`.
    pub fn new(mut vertices: Vec<usize>, x: &[Vec3], motion: Motion) -> Self {
        vertices.sort_unstable();
        vertices.dedup();
        let initial: Vec<Vec3> = vertices.iter().map(|&i| x[i]).collect();
        let centre = if initial.is_empty() {
            Vec3::zeros()
        } else {
            initial.iter().sum::<Vec3>() / initial.len() as f64
        };
        Self {
            vertices,
            initial,
            centre,
            motion,
        }
    }

    /// A pin group over `vertices` glued to a collider by `attach`, which
    /// [`cloth_collide::Collider::attach`] made from the positions in `x` of the same
    /// vertices, sorted and unique (as [`PinGroup::vertices`] keeps them).
    pub fn attached(vertices: Vec<usize>, attach: Attachment) -> Self {
        Self {
            vertices,
            initial: attach.initial,
            centre: attach.pivot,
            motion: attach.motion,
        }
    }

    /// Target positions of the group's vertices at time t, in the order of `vertices`.
    pub fn targets(&self, t: f64, out: &mut Vec<Vec3>) {
        if !self.motion.sequence_at(t, out) {
            out.clear();
            out.extend_from_slice(&self.initial);
        }
        for p in out.iter_mut() {
            *p = self.motion.place(p, &self.centre, t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cloth_collide::Keyframe;

    #[test]
    fn static_pin_targets_are_initial_positions() {
        let x = vec![Vec3::new(1.0, 2.0, 3.0), Vec3::new(-1.0, 0.5, 0.0)];
        let g = PinGroup::new(vec![1, 0, 1], &x, Motion::Static);
        assert_eq!(g.vertices, vec![0, 1]);
        let mut t = Vec::new();
        g.targets(5.0, &mut t);
        assert_eq!(t, x);
    }

    #[test]
    fn keyframes_interpolate_linearly_and_clamp() {
        let x = vec![Vec3::new(1.0, 0.0, 0.0), Vec3::new(-1.0, 0.0, 0.0)];
        let kf = vec![
            Keyframe {
                t: 1.0,
                translation: Vec3::zeros(),
                rotation: Vec3::zeros(),
            },
            Keyframe {
                t: 3.0,
                translation: Vec3::new(0.0, 2.0, 0.0),
                rotation: Vec3::new(0.0, 90.0, 0.0),
            },
        ];
        let g = PinGroup::new(vec![0, 1], &x, Motion::Keyframes(kf));
        let mut t = Vec::new();
        g.targets(0.0, &mut t);
        assert!((t[0] - x[0]).norm() < 1e-15);
        g.targets(2.0, &mut t);
        // Half way: 1 m up, 45 degrees about y around the centroid (origin).
        let c = std::f64::consts::FRAC_1_SQRT_2;
        assert!((t[0] - Vec3::new(c, 1.0, -c)).norm() < 1e-12, "{:?}", t[0]);
        g.targets(10.0, &mut t);
        assert!(
            (t[0] - Vec3::new(0.0, 2.0, -1.0)).norm() < 1e-12,
            "{:?}",
            t[0]
        );
    }
}
