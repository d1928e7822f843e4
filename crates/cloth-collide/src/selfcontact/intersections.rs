//! Counting crossing triangle pairs of a cloth (an edge of one passing through the other), for
//! statistics and for [`super::untangle`].

use cloth_mesh::{ClothMesh, Vec3};
use rayon::prelude::*;

use super::topology::{CHUNK, weld_classes};
use crate::geometry::bvh::{Aabb, Bvh};
use crate::geometry::primitives::triangles_intersect;

/// Number of pairs of cloth triangles sharing no vertex that intersect (an edge of one crosses
/// the other), at positions `x` (m); for statistics. Coplanar overlaps are not counted.
/// Returns 0 if `x` does not have one position per vertex.
pub fn count_self_intersections(mesh: &ClothMesh, x: &[Vec3]) -> usize {
    if x.len() != mesh.num_vertices() {
        return 0;
    }
    count_intersections(mesh.triangles(), x)
}

/// As [`count_intersections`], but triangles that share a vertex once the vertex pairs
/// `welded` are joined (garment stitches, see [`crate::SelfCollision::set_welded`]) are neighbours and
/// not counted.
pub fn count_intersections_welded(
    triangles: &[[usize; 3]],
    x: &[Vec3],
    welded: &[[usize; 2]],
) -> usize {
    IntersectionCounter::default().count(triangles, x, welded)
}

/// As [`count_self_intersections`] from raw triangles (indices out of range are skipped).
pub fn count_intersections(triangles: &[[usize; 3]], x: &[Vec3]) -> usize {
    IntersectionCounter::default().count(triangles, x, &[])
}

/// Counts intersecting triangle pairs ([`count_intersections_welded`]) time after time on the
/// same mesh: its hierarchy is built on the first count and refitted afterwards, which gives
/// the same pairs as a new build for a fraction of its cost (building is most of a count).
#[derive(Clone, Debug, Default)]
pub struct IntersectionCounter {
    bvh: Bvh,
    boxes: Vec<Aabb>,
}

impl IntersectionCounter {
    /// Intersecting pairs of `triangles` at positions `x` (m) that share no vertex once the
    /// vertex pairs `welded` are joined (pairs out of range are ignored). Triangles with an
    /// index out of range take part in nothing.
    pub fn count(&mut self, triangles: &[[usize; 3]], x: &[Vec3], welded: &[[usize; 2]]) -> usize {
        self.pairs(triangles, x, welded).len()
    }

    /// The intersecting pairs [`IntersectionCounter::count`] counts, as triangle indices
    /// `(a, b)` with `a < b`, in increasing order.
    pub fn pairs(
        &mut self,
        triangles: &[[usize; 3]],
        x: &[Vec3],
        welded: &[[usize; 2]],
    ) -> Vec<(usize, usize)> {
        let class = weld_classes(x.len(), welded);
        let ok = |t: &[usize; 3]| t.iter().all(|&i| i < x.len());
        let joined: Vec<[usize; 3]> = if class.is_empty() {
            Vec::new()
        } else {
            (triangles.iter())
                .map(|t| if ok(t) { t.map(|i| class[i]) } else { *t })
                .collect()
        };
        let tris: &[[usize; 3]] = if class.is_empty() { triangles } else { &joined };
        self.boxes.clear();
        self.boxes.extend(triangles.iter().map(|t| {
            if ok(t) {
                Aabb::from_points(t.iter().map(|&i| &x[i]))
            } else {
                Aabb::empty()
            }
        }));
        self.bvh.fit(&self.boxes);
        let candidates = self.bvh.overlapping_pairs(|a, b| {
            ok(&triangles[a]) && ok(&triangles[b]) && !tris[a].iter().any(|i| tris[b].contains(i))
        });
        let mut found = candidates
            .par_chunks(4 * CHUNK)
            .map(|pairs| {
                let corners = |t: u32| triangles[t as usize].map(|i| &x[i]);
                (pairs.iter())
                    .filter(|&&(a, b)| triangles_intersect(corners(a), corners(b)))
                    .map(|&(a, b)| (a.min(b) as usize, a.max(b) as usize))
                    .collect::<Vec<_>>()
            })
            .flatten()
            .collect::<Vec<_>>();
        found.sort_unstable();
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selfcontact::test_cloth::{crumpled, jittered};

    /// Intersecting pairs of triangles at `x` that share no vertex once each pair of `welded`
    /// is one vertex, by testing every pair.
    fn every_crossing_pair(tris: &[[usize; 3]], x: &[Vec3], welded: &[[usize; 2]]) -> usize {
        let one = |v: usize| {
            (welded.iter())
                .find(|w| w.contains(&v))
                .map_or(v, |w| w[0].min(w[1]))
        };
        let mut n = 0;
        for (i, a) in tris.iter().enumerate() {
            for b in &tris[i + 1..] {
                if !a.iter().any(|&v| b.iter().any(|&w| one(v) == one(w)))
                    && triangles_intersect(a.map(|k| &x[k]), b.map(|k| &x[k]))
                {
                    n += 1;
                }
            }
        }
        n
    }

    /// Intersecting pairs of a crumpled grid against testing every pair of triangles that
    /// share no vertex.
    #[test]
    fn intersection_count_is_that_of_every_triangle_pair() {
        let (mesh, x) = crumpled(9, 0.08, Vec3::new(0.02, 0.02, 0.08), 0x9e37_79b9_7f4a_7c15);
        let tris = mesh.triangles();
        let want = every_crossing_pair(tris, &x, &[]);
        assert!(want > 10, "{want} pairs");
        assert_eq!(count_intersections(tris, &x), want);
    }

    /// A counter kept from one crumpling to the next (its hierarchy refitted, built on the
    /// first) counts what testing every pair counts, with and without welded vertices.
    #[test]
    fn a_kept_counter_counts_every_crossing_pair_as_the_cloth_changes() {
        let mesh =
            cloth_mesh::grid(9, 9, 0.08, 0.08, cloth_mesh::GridPattern::Alternating).expect("grid");
        let tris = mesh.triangles();
        // Pairs of vertices two rows apart sewn together (their triangles then count as
        // neighbours), and two opposite corners.
        let welded = [[0, 80], [30, 48], [31, 49], [32, 50], [33, 51], [34, 52]];
        let mut counter = IntersectionCounter::default();
        let (mut crossed, mut welds_mattered) = (0, false);
        for (k, seed) in [0x9e37_79b9_7f4a_7c15_u64, 0x2545_f491_4f6c_dd1d, 7]
            .iter()
            .enumerate()
        {
            let scale = Vec3::new(0.02, 0.02, 0.04 * k as f64 + 0.02);
            let x = jittered(mesh.positions(), scale, *seed);
            let mut counts = Vec::new();
            for w in [&welded[..], &[]] {
                let want = every_crossing_pair(tris, &x, w);
                assert_eq!(
                    counter.count(tris, &x, w),
                    want,
                    "crumpling {k}, welds {w:?}"
                );
                counts.push(want);
            }
            crossed += counts[1];
            welds_mattered |= counts[0] < counts[1];
        }
        assert!(crossed > 20, "{crossed} crossings in all");
        assert!(
            welds_mattered,
            "no crossing between triangles the welds join"
        );
    }
}
