//! The maximum-stretch pass of the explicit seed ("maximum stretch and bending springs"):
//! move the two ends of every edge back into `[min, max]` times its rest length, iterated.

use cloth_mesh::Vec3;

/// Limits on edge length relative to rest length, enforced by iterated projection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StrainLimit {
    /// Smallest allowed length / rest length (default 0.9).
    pub min: f64,
    /// Largest allowed length / rest length (default 1.1).
    pub max: f64,
    /// Number of sweeps over all edges (default 10).
    pub iterations: usize,
}

impl Default for StrainLimit {
    fn default() -> Self {
        Self {
            min: 0.9,
            max: 1.1,
            iterations: 10,
        }
    }
}

/// Edges with their rest lengths, prepared once for repeated projection.
#[derive(Clone, Debug)]
pub struct EdgeSet {
    /// Vertex pairs.
    pub edges: Vec<[usize; 2]>,
    /// Rest length of each edge (m), measured in the (u, v) rest plane.
    pub rest: Vec<f64>,
}

impl EdgeSet {
    /// The unique edges of `mesh` with their rest lengths
    /// ([`cloth_mesh::ClothMesh::edge_rest_lengths`]: the mean over the edge's triangles of its
    /// length in their rest coordinates).
    pub fn from_mesh(mesh: &cloth_mesh::ClothMesh) -> Self {
        let edges: Vec<[usize; 2]> = mesh.edges().iter().map(|e| e.v).collect();
        let rest = mesh.edge_rest_lengths().to_vec();
        Self { edges, rest }
    }

    /// Largest stretch (length / rest - 1, >= 0) and largest compression (1 - length / rest, >= 0)
    /// over all edges at positions `x`.
    pub fn extremes(&self, x: &[Vec3]) -> (f64, f64) {
        let mut stretch: f64 = 0.0;
        let mut compression: f64 = 0.0;
        for (e, &l0) in self.edges.iter().zip(&self.rest) {
            let r = (x[e[1]] - x[e[0]]).norm() / l0;
            stretch = stretch.max(r - 1.0);
            compression = compression.max(1.0 - r);
        }
        (stretch, compression)
    }

    /// Iterated maximum-stretch pass (Gauss-Seidel over edges in a fixed order, so the result is
    /// deterministic). `inv_mass[i] == 0` marks a vertex that must not move; otherwise a
    /// correction is shared between the two ends in proportion to their inverse masses.
    /// Returns the largest relative violation left after the last sweep.
    pub fn project(&self, x: &mut [Vec3], inv_mass: &[f64], limit: &StrainLimit) -> f64 {
        let mut worst = 0.0;
        for _ in 0..limit.iterations {
            worst = 0.0;
            for (e, &l0) in self.edges.iter().zip(&self.rest) {
                let (i, j) = (e[0], e[1]);
                let (wi, wj) = (inv_mass[i], inv_mass[j]);
                let w = wi + wj;
                if w == 0.0 {
                    continue;
                }
                let d = x[j] - x[i];
                let len = d.norm();
                if len == 0.0 {
                    continue;
                }
                let target = if len > limit.max * l0 {
                    limit.max * l0
                } else if len < limit.min * l0 {
                    limit.min * l0
                } else {
                    continue;
                };
                let violation = (len - target).abs() / l0;
                if violation > worst {
                    worst = violation;
                }
                let corr = d * ((len - target) / (len * w));
                x[i] += corr * wi;
                x[j] -= corr * wj;
            }
            if worst == 0.0 {
                break;
            }
        }
        worst
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_edge_is_brought_into_range_and_pinned_end_stays() {
        let set = EdgeSet {
            edges: vec![[0, 1]],
            rest: vec![1.0],
        };
        let mut x = vec![Vec3::zeros(), Vec3::new(2.0, 0.0, 0.0)];
        let lim = StrainLimit::default();
        set.project(&mut x, &[0.0, 1.0], &lim);
        assert_eq!(x[0], Vec3::zeros());
        assert!(((x[1] - x[0]).norm() - 1.1).abs() < 1e-12);
        let mut x = vec![Vec3::zeros(), Vec3::new(0.5, 0.0, 0.0)];
        set.project(&mut x, &[1.0, 1.0], &lim);
        assert!(((x[1] - x[0]).norm() - 0.9).abs() < 1e-12);
        // Equal inverse masses: the midpoint does not move.
        assert!(((x[0] + x[1]) * 0.5 - Vec3::new(0.25, 0.0, 0.0)).norm() < 1e-12);
    }
}
