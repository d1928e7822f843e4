//! The safety net of cloth-cloth contact, run by the detect stage on the candidate the accept stage
//! judges: the candidate motion of a step (every vertex on a straight line from `x0` to `x1`) is
//! checked by continuous collision detection, and vertices of colliding pairs are merged into
//! impact zones that move as one rigid translation (the zone's momentum-conserving mean
//! displacement; Provot 1997, Bridson, Fedkiw & Anderson 2002, translation only). Vertices of one
//! zone keep their relative positions, so a start state free of crossings cannot gain one inside a
//! zone; zones grow and merge until the motion is free of collisions. When that takes more than
//! [`MAX_ZONE_ITERATIONS`] passes, the step is rejected and h is halved.
//!
//! Zones act like a perfectly inelastic, sticking impact for the few vertices that the penalty
//! springs did not stop; the springs and the friction between layers do the everyday work.

use crate::error::Reject;
use crate::world::World;
use cloth_collide::{Impact, NearPairs, SelfCcd};
use cloth_mesh::Vec3;

/// Passes of detection and zone merging before a step is rejected.
pub(crate) const MAX_ZONE_ITERATIONS: usize = 16;

/// Scratch of the impact-zone pass, kept between steps (the CCD hierarchy is refitted).
#[derive(Default)]
pub(crate) struct Zones {
    ccd: Option<SelfCcd>,
    impacts: Vec<Impact>,
    /// Union-find parent of each vertex (itself when a root).
    parent: Vec<usize>,
    /// Per root: the sums that make the zone's translation.
    sums: Vec<ZoneSums>,
    /// Vertices in some zone (sorted, unique once a pass is done).
    members: Vec<usize>,
    /// Garment stitches: a stitched vertex's partner joins its zone.
    stitches: Vec<[usize; 2]>,
}

impl Zones {
    /// Makes the motion from `x0` to `x1` free of cloth-cloth collisions by moving vertices of
    /// colliding pairs (`x1` is changed in place). Returns how many vertices are in zones, or
    /// the rejection when the iteration budget is used up. Nothing is done when cloth-cloth
    /// contact or its check is off.
    ///
    /// `y` is the position alteration included in `x1` (empty when there is none). A zone's
    /// translation is the mean of its members' displacements, and that mean splits into the
    /// mean of the integrated motion and the mean of y: each member's y is replaced by its
    /// zone's mean y, so `x1 - y` stays the integrated motion (what the stretch check and the
    /// velocity update see) and a correction y made at any h never looks like motion.
    pub fn resolve(
        &mut self,
        world: &World,
        x0: &[Vec3],
        x1: &mut [Vec3],
        y: &mut [Vec3],
    ) -> Result<usize, Reject> {
        let settings = &world.contact;
        if world.self_collision.is_none() || !settings.self_ccd {
            return Ok(0);
        }
        let gap = settings.ccd_gap * settings.cloth_thickness;
        let n = x0.len();
        if self.ccd.is_none() {
            // The candidates near the end of the motion are recorded for the next step's
            // proximity search (the end of an accepted step is the next one's start).
            let near = world
                .self_collision
                .as_ref()
                .map_or(0.0, |sc| sc.thickness());
            let mut ccd = SelfCcd::new(n, world.cloth.mesh.triangles())
                .expect("the mesh was validated when the world was built")
                .with_near_radius(near);
            let stitches: Vec<[usize; 2]> = world.sewing.pairs().collect();
            ccd.set_welded(&stitches);
            self.ccd = Some(ccd);
            self.stitches = stitches;
        }
        self.parent.clear();
        self.parent.extend(0..n);
        self.members.clear();
        for _ in 0..MAX_ZONE_ITERATIONS {
            self.detect(x0, x1, gap);
            if self.impacts.is_empty() {
                return Ok(self.members.len());
            }
            self.merge();
            self.translate(&world.cloth.masses, world.pinned(), x0, x1, y);
        }
        self.detect(x0, x1, gap);
        if self.impacts.is_empty() {
            return Ok(self.members.len());
        }
        Err(Reject::SelfCrossing {
            impacts: self.impacts.len(),
        })
    }

    /// The candidate pairs near the end of the last motion checked, if any.
    pub fn near_pairs(&self) -> Option<&NearPairs> {
        self.ccd.as_ref().and_then(|c| c.near_pairs())
    }

    fn detect(&mut self, x0: &[Vec3], x1: &[Vec3], gap: f64) {
        let ccd = self.ccd.as_mut().expect("made before the first pass");
        if ccd.impacts(x0, x1, gap, &mut self.impacts).is_err() {
            self.impacts.clear();
        }
    }

    fn find(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    /// Joins the vertices of every impact into one zone (the smaller root index wins, so the
    /// result does not depend on the order of unions), and a stitched vertex's partners into
    /// its zone: the two sides of a seam are one vertex for contact, and a zone that moved one
    /// side alone would pull the stitch open.
    fn merge(&mut self) {
        for k in 0..self.impacts.len() {
            let v = self.impacts[k].vertices;
            self.members.extend(v);
            for &w in &v[1..] {
                self.union(v[0], w);
            }
        }
        self.members.sort_unstable();
        self.members.dedup();
        // Stitches may chain (a corner sewn to two others): repeat until no zone grows.
        let mut grew = !self.members.is_empty();
        while grew {
            grew = false;
            for k in 0..self.stitches.len() {
                let [a, b] = self.stitches[k];
                if a.max(b) >= self.parent.len() {
                    continue;
                }
                let has_a = self.members.binary_search(&a).is_ok();
                let has_b = self.members.binary_search(&b).is_ok();
                if has_a || has_b {
                    self.union(a, b);
                }
                if has_a != has_b {
                    let new = if has_a { b } else { a };
                    let at = self.members.partition_point(|&m| m < new);
                    self.members.insert(at, new);
                    grew = true;
                }
            }
        }
    }

    /// Joins the zones of vertices `a` and `b` (the smaller root wins).
    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        let (lo, hi) = (a.min(b), a.max(b));
        self.parent[hi] = lo;
    }

    /// Moves every zone member by its zone's displacement: the pinned members' mean when the
    /// zone holds pinned vertices (they keep their own motion), else the mass-weighted mean.
    /// The members' alterations y (if any) become their zone's mean alteration, by the same
    /// weights.
    fn translate(
        &mut self,
        masses: &[f64],
        pinned: &[bool],
        x0: &[Vec3],
        x1: &mut [Vec3],
        y: &mut [Vec3],
    ) {
        let zero = ZoneSums::default();
        self.sums.clear();
        self.sums.resize(x0.len(), zero);
        for k in 0..self.members.len() {
            let i = self.members[k];
            let r = self.find(i);
            let d = x1[i] - x0[i];
            let yi = y.get(i).copied().unwrap_or_else(Vec3::zeros);
            let s = &mut self.sums[r];
            if pinned[i] {
                s.pinned_d += d;
                s.pinned_y += yi;
                s.pinned += 1;
            } else {
                s.d += d * masses[i];
                s.y += yi * masses[i];
                s.mass += masses[i];
            }
        }
        for k in 0..self.members.len() {
            let i = self.members[k];
            if pinned[i] {
                continue;
            }
            let r = self.find(i);
            let s = self.sums[r];
            let (d, my) = if s.pinned > 0 {
                let n = s.pinned as f64;
                (s.pinned_d / n, s.pinned_y / n)
            } else {
                (s.d / s.mass, s.y / s.mass)
            };
            x1[i] = x0[i] + d;
            if let Some(yi) = y.get_mut(i) {
                *yi = my;
            }
        }
    }
}

/// Per zone root: the sums that make its translation.
#[derive(Clone, Copy, Default)]
struct ZoneSums {
    /// Mass-weighted displacement of the free members (kg m).
    d: Vec3,
    /// Mass-weighted alteration y of the free members (kg m).
    y: Vec3,
    /// Mass of the free members (kg).
    mass: f64,
    /// Displacement sum of the pinned members (m).
    pinned_d: Vec3,
    /// Alteration sum of the pinned members (m).
    pinned_y: Vec3,
    /// Number of pinned members.
    pinned: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use cloth_collide::ImpactKind;

    /// One zone of four vertices, one of them pushed 1 mm by the alteration y, the others
    /// moving by h v: the zone moves rigidly, and `x1 - y` is the mean integrated motion for
    /// every member, so the alteration never shows as motion.
    #[test]
    fn a_zone_carries_the_alteration_as_its_mean_and_moves_rigidly() {
        let n = 6;
        let x0: Vec<Vec3> = (0..n)
            .map(|i| Vec3::new(0.01 * i as f64, 0.003 * (i * i) as f64, -0.002 * i as f64))
            .collect();
        let h = 1e-5;
        let v: Vec<Vec3> = (0..n)
            .map(|i| Vec3::new(0.3 - 0.1 * i as f64, 0.2, 0.05 * i as f64))
            .collect();
        let mut y = vec![Vec3::zeros(); n];
        y[0] = Vec3::new(0.0, 1e-3, 0.0);
        let mut x1: Vec<Vec3> = (0..n).map(|i| x0[i] + v[i] * h + y[i]).collect();
        let before = x1.clone();
        let masses = [1.0, 2.0, 1.0, 1.0, 3.0, 1.0];
        let pinned = [false; 6];
        let mut zones = Zones {
            parent: (0..n).collect(),
            impacts: vec![Impact {
                kind: ImpactKind::VertexTriangle,
                vertices: [0, 1, 2, 3],
                t: 0.5,
            }],
            ..Zones::default()
        };
        zones.merge();
        zones.translate(&masses, &pinned, &x0, &mut x1, &mut y);
        let mass: f64 = masses[..4].iter().sum();
        let mean_v = (0..4).map(|i| v[i] * masses[i]).sum::<Vec3>() / mass;
        let mean_y = Vec3::new(0.0, 1e-3 * masses[0] / mass, 0.0);
        for i in 0..4 {
            let moved = x1[i] - x0[i];
            assert!(
                (moved - (x1[0] - x0[0])).norm() < 1e-15,
                "vertex {i}: not rigid"
            );
            assert!((y[i] - mean_y).norm() < 1e-15, "vertex {i}: y {:?}", y[i]);
            let integrated = x1[i] - y[i] - x0[i];
            assert!(
                (integrated - mean_v * h).norm() < 1e-15,
                "vertex {i}: the alteration shows as motion ({:e} m)",
                (integrated - mean_v * h).norm()
            );
        }
        for i in 4..n {
            assert_eq!(x1[i], before[i], "vertex {i} is in no zone");
            assert_eq!(y[i], Vec3::zeros());
        }
    }

    /// A stitched vertex's partner (and the partner's own partner: stitches chain) joins its
    /// zone and moves with it, so a zone never pulls a seam open; unstitched vertices and
    /// stitches away from any zone stay out.
    #[test]
    fn a_stitched_partner_joins_its_partners_zone() {
        let n = 8;
        let x0: Vec<Vec3> = (0..n)
            .map(|i| Vec3::new(0.01 * i as f64, 0.0, 0.0))
            .collect();
        let mut x1: Vec<Vec3> = (0..n)
            .map(|i| x0[i] + Vec3::new(0.0, 1e-3 * i as f64, 0.0))
            .collect();
        let before = x1.clone();
        let mut y = vec![Vec3::zeros(); n];
        let mut zones = Zones {
            parent: (0..n).collect(),
            impacts: vec![Impact {
                kind: ImpactKind::EdgeEdge,
                vertices: [0, 1, 2, 3],
                t: 0.5,
            }],
            // 3 is sewn to 4, 4 to 5; 6 to 7 lies away from the zone.
            stitches: vec![[4, 3], [5, 4], [6, 7]],
            ..Zones::default()
        };
        zones.merge();
        assert_eq!(zones.members, vec![0, 1, 2, 3, 4, 5]);
        zones.translate(&[1.0; 8], &[false; 8], &x0, &mut x1, &mut y);
        for i in 1..6 {
            assert!(
                ((x1[i] - x0[i]) - (x1[0] - x0[0])).norm() < 1e-15,
                "vertex {i}"
            );
        }
        for i in 6..n {
            assert_eq!(x1[i], before[i], "vertex {i} is in no zone");
        }
    }
}
