//! The maximum-stretch pass of the explicit seed ("maximum stretch and bending springs"):
//! move the two ends of every edge back into `[min, max]` times its rest length, iterated
//! until every edge is within the limits to a tolerance or an iteration cap is reached.
//!
//! This module holds the limit itself ([`StrainLimit`]) and the plain pass over mesh edges
//! ([`EdgeSet::project`]) that the implicit integrator applies after a step. The explicit
//! integrator solves the same limits together with its springs, long-range attachments and
//! contacts in one projection (see the `pairs`, `tether` and `verlet` modules).

use cloth_mesh::Vec3;

/// Limits on edge length relative to rest length, enforced by iterated projection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StrainLimit {
    /// Smallest allowed length / rest length (default 0.9).
    pub min: f64,
    /// Largest allowed length / rest length (default 1.1).
    pub max: f64,
    /// Iteration cap: most sweeps over all edges per pass (default 10). The pass stops
    /// earlier once every edge is within the limits to `tolerance`.
    pub iterations: usize,
    /// Violation left acceptable, as a fraction of the rest length (default 0.005: an edge
    /// of rest length 2 cm may end up to 0.1 mm outside `[min, max]` times it).
    pub tolerance: f64,
}

impl Default for StrainLimit {
    fn default() -> Self {
        Self {
            min: 0.9,
            max: 1.1,
            iterations: 10,
            tolerance: DEFAULT_STRAIN_TOLERANCE,
        }
    }
}

/// Default [`StrainLimit::tolerance`]: 0.5% of the rest length.
pub const DEFAULT_STRAIN_TOLERANCE: f64 = 0.005;

impl StrainLimit {
    /// Relative violation of an edge of length `len` and rest length `rest` (m): how far,
    /// as a fraction of `rest`, the length lies outside `[min, max] * rest` (0 inside).
    pub fn violation(&self, len: f64, rest: f64) -> f64 {
        (len / rest - self.max).max(self.min - len / rest).max(0.0)
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
    /// The unique edges of `mesh` with rest lengths from its (u, v) coordinates.
    pub fn from_mesh(mesh: &cloth_mesh::ClothMesh) -> Self {
        let uv = mesh.rest();
        let edges: Vec<[usize; 2]> = mesh.edges().iter().map(|e| e.v).collect();
        let rest = edges.iter().map(|e| (uv[e[1]] - uv[e[0]]).norm()).collect();
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

    /// Largest relative violation of `limit` over all edges at positions `x` (0: all within).
    pub fn violation(&self, x: &[Vec3], limit: &StrainLimit) -> f64 {
        self.edges
            .iter()
            .zip(&self.rest)
            .map(|(e, &l0)| limit.violation((x[e[1]] - x[e[0]]).norm(), l0))
            .fold(0.0, f64::max)
    }

    /// Iterated maximum-stretch pass (Gauss-Seidel over edges in a fixed order, so the result is
    /// deterministic), stopping once every edge is within the limits to `limit.tolerance` or
    /// after `limit.iterations` sweeps. `inv_mass[i] == 0` marks a vertex that must not move;
    /// otherwise a correction is shared between the two ends in proportion to their inverse
    /// masses. Returns the largest relative violation left.
    pub fn project(&self, x: &mut [Vec3], inv_mass: &[f64], limit: &StrainLimit) -> f64 {
        for _ in 0..limit.iterations {
            let mut worst: f64 = 0.0;
            for (e, &l0) in self.edges.iter().zip(&self.rest) {
                let (i, j) = (e[0], e[1]);
                let (wi, wj) = (inv_mass[i], inv_mass[j]);
                let w = wi + wj;
                let d = x[j] - x[i];
                let len = d.norm();
                if w == 0.0 || len == 0.0 {
                    continue;
                }
                let target = len.clamp(limit.min * l0, limit.max * l0);
                if target == len {
                    continue;
                }
                worst = worst.max((len - target).abs() / l0);
                let corr = d * ((len - target) / (len * w));
                x[i] += corr * wi;
                x[j] -= corr * wj;
            }
            // Violations seen during the sweep bound those left after it only once they are
            // small; confirm on the final positions.
            if worst <= limit.tolerance && self.violation(x, limit) <= limit.tolerance {
                break;
            }
        }
        self.violation(x, limit)
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

    #[test]
    fn a_pinned_chain_is_projected_until_the_tolerance_holds_or_the_cap() {
        // A chain of 20 unit edges hanging from vertex 0, every vertex pulled 0.5 down: the
        // top edge is stretched by half its length and the rest are at rest length.
        let n = 21;
        let set = EdgeSet {
            edges: (0..n - 1).map(|i| [i, i + 1]).collect(),
            rest: vec![1.0; n - 1],
        };
        let mut inv = vec![1.0; n];
        inv[0] = 0.0;
        let start: Vec<Vec3> = (0..n)
            .map(|i| Vec3::new(0.0, -(i as f64) - if i > 0 { 0.5 } else { 0.0 }, 0.0))
            .collect();
        let mut lim = StrainLimit::default();
        let mut x = start.clone();
        lim.iterations = 1;
        let one = set.project(&mut x, &inv, &lim);
        assert!(one > lim.tolerance, "one sweep already converged: {one}");
        lim.iterations = 10_000;
        let mut x = start;
        let left = set.project(&mut x, &inv, &lim);
        assert!(left <= lim.tolerance, "{left}");
        assert!((0..n - 1).all(|i| (x[i + 1] - x[i]).norm() <= 1.1 + lim.tolerance));
    }
}
