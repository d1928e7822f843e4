//! Carrying per-vertex values (positions, velocities) from one build of a pattern to another
//! build of the same pattern at a different edge length.
//!
//! Each panel is the same 2-D outline in both builds, so a vertex of one build has rest (u, v)
//! coordinates inside (or, on a curved edge, just beside) the other build's triangulation of
//! that panel. The value at the vertex is the linear interpolation over the source triangle
//! that contains those coordinates, or over the closest point of the panel's triangles when
//! none does (a curved outline's samples can bulge out of a coarser build's chords). The
//! weights are then convex, so a carried value never leaves the source triangle's range.
//!
//! This is how a garment sewn on a coarse mesh becomes the starting state of a fine one: the
//! coarse simulation sews and settles, and its positions and velocities are carried over.

use super::Garment;
use crate::{MeshError, Vec2, Vec3};

/// Interpolation weights from one build of a pattern (the source) to another (the target):
/// for each target vertex, three source vertices and their barycentric weights (each in
/// [0, 1], summing to 1). Made by [`Garment::transfer_from`].
///
/// Each panel is the same 2-D outline in both builds, so a target vertex has rest (u, v)
/// coordinates inside (or, on a curved edge, just beside) the source's triangulation of that
/// panel. Its value is the linear interpolation over the source triangle that contains those
/// coordinates, or over the closest point of the panel's triangles when none does (a curved
/// outline's samples can bulge out of a coarser build's chords). The weights are convex, so a
/// carried value never leaves the source triangle's range.
#[derive(Clone, Debug, PartialEq)]
pub struct GarmentTransfer {
    source_vertices: usize,
    weights: Vec<([usize; 3], [f64; 3])>,
}

impl GarmentTransfer {
    /// Number of target vertices (the length of [`GarmentTransfer::apply`]'s result).
    pub fn len(&self) -> usize {
        self.weights.len()
    }

    /// Number of source vertices (the length [`GarmentTransfer::apply`] expects).
    pub fn source_len(&self) -> usize {
        self.source_vertices
    }

    /// Whether the target has no vertex.
    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    /// The three source vertices and their weights for target vertex `v`, if it exists.
    pub fn weights(&self, v: usize) -> Option<([usize; 3], [f64; 3])> {
        self.weights.get(v).copied()
    }

    /// The values at the target vertices interpolated from `source` (one value per source
    /// vertex: positions in m, velocities in m/s, ...).
    ///
    /// Errors: `source` does not hold one value per source vertex
    /// ([`MeshError::InvalidParameter`]).
    pub fn apply(&self, source: &[Vec3]) -> Result<Vec<Vec3>, MeshError> {
        if source.len() != self.source_vertices {
            return Err(MeshError::InvalidParameter {
                name: "source",
                reason: format!(
                    "holds {} values, the source garment has {} vertices",
                    source.len(),
                    self.source_vertices
                ),
            });
        }
        Ok(self
            .weights
            .iter()
            .map(|([a, b, c], [wa, wb, wc])| source[*a] * *wa + source[*b] * *wb + source[*c] * *wc)
            .collect())
    }
}

impl Garment {
    /// Weights that carry per-vertex values from `source`, another build of the same pattern
    /// (typically at a longer edge length), to this garment's vertices, panel by panel through
    /// the rest (u, v) coordinates (see [`GarmentTransfer`]).
    ///
    /// Errors ([`MeshError::InvalidParameter`]): the two garments do not have the same panels
    /// (names, in order), or a panel of `source` has no triangle.
    pub fn transfer_from(&self, source: &Garment) -> Result<GarmentTransfer, MeshError> {
        let mismatch = |reason: String| MeshError::InvalidParameter {
            name: "source",
            reason,
        };
        if self.panels.len() != source.panels.len() {
            return Err(mismatch(format!(
                "has {} panels, this garment {}",
                source.panels.len(),
                self.panels.len()
            )));
        }
        // A garment's panels are single charts: every corner of a vertex has its coordinates.
        let rest = (self.mesh.vertex_rest())
            .ok_or_else(|| mismatch("this garment has no per-vertex rest coordinates".into()))?;
        let n = self.mesh.num_vertices();
        let mut weights = vec![([0; 3], [1.0, 0.0, 0.0]); n];
        for (p, q) in self.panels.iter().zip(&source.panels) {
            if p.name != q.name || p.mirrored != q.mirrored {
                return Err(mismatch(format!(
                    "panel `{}` where this garment has `{}`",
                    q.name, p.name
                )));
            }
            if q.triangles.is_empty() {
                return Err(mismatch(format!("panel `{}` has no triangle", q.name)));
            }
            let grid = TriangleGrid::new(source, q.triangles.clone());
            for v in p.vertices.clone() {
                weights[v] = grid.locate(source, rest[v]);
            }
        }
        Ok(GarmentTransfer {
            source_vertices: source.mesh.num_vertices(),
            weights,
        })
    }
}

/// A uniform grid over one panel's source triangles (by their rest bounding boxes), so a
/// point's containing triangle is found among a few candidates.
struct TriangleGrid {
    triangles: std::ops::Range<usize>,
    origin: Vec2,
    cell: f64,
    dims: [usize; 2],
    /// Triangles overlapping each cell (CSR).
    starts: Vec<usize>,
    items: Vec<usize>,
}

impl TriangleGrid {
    fn new(g: &Garment, triangles: std::ops::Range<usize>) -> Self {
        let corners = |t: usize| g.mesh.triangle_rest(t);
        let (mut lo, mut hi) = (Vec2::repeat(f64::INFINITY), Vec2::repeat(f64::NEG_INFINITY));
        for t in triangles.clone() {
            for c in corners(t) {
                lo = lo.inf(&c);
                hi = hi.sup(&c);
            }
        }
        // About one triangle per cell, at least 1 and at most 512 cells a side.
        let span = (hi - lo).max().max(1e-12);
        let side = (triangles.len() as f64).sqrt().clamp(1.0, 512.0);
        let cell = span / side;
        let dims = [
            (((hi.x - lo.x) / cell) as usize + 1).min(512),
            (((hi.y - lo.y) / cell) as usize + 1).min(512),
        ];
        let mut grid = TriangleGrid {
            triangles: triangles.clone(),
            origin: lo,
            cell,
            dims,
            starts: vec![0; dims[0] * dims[1] + 1],
            items: Vec::new(),
        };
        let range = |grid: &TriangleGrid, t: usize| {
            let c = corners(t);
            let a = grid.cell_of(c[0].inf(&c[1]).inf(&c[2]));
            let b = grid.cell_of(c[0].sup(&c[1]).sup(&c[2]));
            (a, b)
        };
        for t in triangles.clone() {
            let (a, b) = range(&grid, t);
            for y in a[1]..=b[1] {
                for x in a[0]..=b[0] {
                    grid.starts[y * dims[0] + x + 1] += 1;
                }
            }
        }
        for k in 1..grid.starts.len() {
            grid.starts[k] += grid.starts[k - 1];
        }
        let mut fill = grid.starts.clone();
        grid.items = vec![0; grid.starts[grid.starts.len() - 1]];
        for t in triangles {
            let (a, b) = range(&grid, t);
            for y in a[1]..=b[1] {
                for x in a[0]..=b[0] {
                    let k = y * dims[0] + x;
                    grid.items[fill[k]] = t;
                    fill[k] += 1;
                }
            }
        }
        grid
    }

    fn cell_of(&self, p: Vec2) -> [usize; 2] {
        let q = (p - self.origin) / self.cell;
        let clamp = |x: f64, n: usize| (x.max(0.0) as usize).min(n - 1);
        [clamp(q.x, self.dims[0]), clamp(q.y, self.dims[1])]
    }

    /// Source vertices and weights for a point at rest coordinates `uv`: the triangle of the
    /// point's cell that contains it, else the closest point over all the panel's triangles
    /// (a point outside the source triangulation; ties go to the lowest triangle index).
    fn locate(&self, g: &Garment, uv: Vec2) -> ([usize; 3], [f64; 3]) {
        let [x, y] = self.cell_of(uv);
        let k = y * self.dims[0] + x;
        let consider = |best: &mut Option<(f64, usize, [f64; 3])>, t: usize| {
            let (d, w) = closest_weights(g.mesh.triangle_rest(t), uv);
            if best.is_none_or(|(bd, bt, _)| d < bd || (d == bd && t < bt)) {
                *best = Some((d, t, w));
            }
        };
        let mut best = None;
        for &t in &self.items[self.starts[k]..self.starts[k + 1]] {
            consider(&mut best, t);
        }
        if best.is_none_or(|(d, _, _)| d > 0.0) {
            for t in self.triangles.clone() {
                consider(&mut best, t);
            }
        }
        let (_, t, w) = best.expect("a panel has at least one triangle");
        (g.mesh.triangles()[t], w)
    }
}

/// Distance from `p` to the triangle with corners `c` (0 inside) and the barycentric weights
/// of the triangle's closest point to `p`.
fn closest_weights(c: [Vec2; 3], p: Vec2) -> (f64, [f64; 3]) {
    let cross = |a: Vec2, b: Vec2| a.x * b.y - a.y * b.x;
    let area = cross(c[1] - c[0], c[2] - c[0]);
    if area.abs() > 0.0 {
        let w1 = cross(p - c[0], c[2] - c[0]) / area;
        let w2 = cross(c[1] - c[0], p - c[0]) / area;
        let w0 = 1.0 - w1 - w2;
        if w0 >= 0.0 && w1 >= 0.0 && w2 >= 0.0 {
            return (0.0, [w0, w1, w2]);
        }
    }
    let mut best = (f64::INFINITY, [1.0, 0.0, 0.0]);
    for i in 0..3 {
        let j = (i + 1) % 3;
        let e = c[j] - c[i];
        let len2 = e.norm_squared();
        let s = if len2 > 0.0 {
            ((p - c[i]).dot(&e) / len2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let d = (c[i] + e * s - p).norm();
        if d < best.0 {
            let mut w = [0.0; 3];
            w[i] = 1.0 - s;
            w[j] = s;
            best = (d, w);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_weights_inside_and_outside() {
        let c = [
            Vec2::new(0.0, 0.0),
            Vec2::new(1.0, 0.0),
            Vec2::new(0.0, 1.0),
        ];
        let (d, w) = closest_weights(c, Vec2::new(0.25, 0.25));
        assert_eq!(d, 0.0);
        assert!((w[0] - 0.5).abs() < 1e-15 && (w[1] - 0.25).abs() < 1e-15);
        // Below the edge (0, 1): the closest point is (0.5, 0) at distance 0.1.
        let (d, w) = closest_weights(c, Vec2::new(0.5, -0.1));
        assert!((d - 0.1).abs() < 1e-15);
        assert!((w[0] - 0.5).abs() < 1e-15 && (w[1] - 0.5).abs() < 1e-15 && w[2] == 0.0);
    }
}
