//! The cloth's triangles, edges and welded vertices that proximity search, CCD and the
//! intersection count test features against: which pairs of features are neighbours.

use rayon::prelude::*;

use crate::error::CollideError;
use crate::geometry::bvh::{Aabb, Bvh};

/// How many vertices/edges each parallel task handles (fixed, so results are deterministic).
pub(crate) const CHUNK: usize = 256;

/// The unique edges `(v0 < v1)` of `triangles`, sorted.
pub(crate) fn mesh_edges(triangles: &[[usize; 3]]) -> Vec<[usize; 2]> {
    let mut edges: Vec<[usize; 2]> = triangles
        .iter()
        .flat_map(|t| [0, 1, 2].map(|k| sorted(t[k], t[(k + 1) % 3])))
        .collect();
    edges.sort_unstable();
    edges.dedup();
    edges
}

/// A cloth's triangles, their edges and its welded vertices: what self-collision and
/// self-CCD both test features against.
#[derive(Clone, Debug)]
pub(crate) struct Topology {
    pub n_vertices: usize,
    pub triangles: Vec<[usize; 3]>,
    /// Unique edges (v0 < v1), sorted.
    pub edges: Vec<[usize; 2]>,
    /// Per vertex, the smallest vertex welded to it; empty when nothing is welded.
    weld: Vec<usize>,
}

impl Topology {
    /// Checks that every index of `triangles` is below `n_vertices` and finds the edges.
    pub fn new(n_vertices: usize, triangles: &[[usize; 3]]) -> Result<Self, CollideError> {
        for (t, tri) in triangles.iter().enumerate() {
            if let Some(&i) = tri.iter().find(|&&i| i >= n_vertices) {
                return Err(CollideError::ClothIndexOutOfRange {
                    triangle: t,
                    index: i,
                    count: n_vertices,
                });
            }
        }
        let edges = mesh_edges(triangles);
        Ok(Topology {
            n_vertices,
            triangles: triangles.to_vec(),
            edges,
            weld: Vec::new(),
        })
    }

    /// The (vertex, triangle) pairs, sorted, of every vertex's `query` box (`None`: no box)
    /// against the triangles' hierarchy `bvh`, without the triangles at the vertex (parallel
    /// over fixed chunks of vertices, so the same for any thread count).
    pub fn vertex_triangle_pairs(
        &self,
        bvh: &Bvh,
        query: impl Fn(usize) -> Option<Aabb> + Sync,
    ) -> Vec<(u32, u32)> {
        let chunks: Vec<Vec<(u32, u32)>> = (0..self.n_vertices)
            .into_par_iter()
            .chunks(CHUNK)
            .map(|vs| {
                let (mut pairs, mut stack, mut found) = (Vec::new(), Vec::new(), Vec::new());
                for v in vs {
                    let Some(q) = query(v) else {
                        continue;
                    };
                    found.clear();
                    bvh.query(&q, &mut stack, |t| {
                        if !self.triangles[t].contains(&v) {
                            found.push((v as u32, t as u32));
                        }
                    });
                    found.sort_unstable();
                    pairs.extend_from_slice(&found);
                }
                pairs
            })
            .collect();
        chunks.concat()
    }

    /// Whether edges `e` and `f` share no vertex (welds aside, see [`Topology::drop_welded`]).
    pub fn edges_apart(&self, e: usize, f: usize) -> bool {
        let ([a, b], [c, d]) = (self.edges[e], self.edges[f]);
        a != c && a != d && b != c && b != d
    }

    /// The smallest vertex welded to `v` (itself when nothing is).
    pub fn class(&self, v: usize) -> usize {
        self.weld.get(v).copied().unwrap_or(v)
    }

    /// Welds each pair of `pairs` (transitively; pairs out of range are ignored).
    pub fn set_welded(&mut self, pairs: &[[usize; 2]]) {
        self.weld = weld_classes(self.n_vertices, pairs);
    }

    /// Drops from `items` those whose two features (`features(item)`: the four vertices and
    /// whether it is vertex-triangle) share a vertex once welded vertices are one.
    pub fn drop_welded<T>(&self, items: &mut Vec<T>, features: impl Fn(&T) -> (&[usize; 4], bool)) {
        if self.weld.is_empty() {
            return;
        }
        items.retain(|item| {
            let (v, vertex_triangle) = features(item);
            !welded_neighbours(v, vertex_triangle, &self.weld)
        });
    }
}

/// Per vertex the smallest vertex of its class after welding `pairs` (transitively); empty
/// when `pairs` is.
pub(crate) fn weld_classes(n: usize, pairs: &[[usize; 2]]) -> Vec<usize> {
    if pairs.is_empty() {
        return Vec::new();
    }
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for &[a, b] in pairs {
        if a < n && b < n {
            let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
            let (lo, hi) = (ra.min(rb), ra.max(rb));
            parent[hi] = lo;
        }
    }
    (0..n).map(|v| root(&mut parent, v)).collect()
}

/// Whether two features share a vertex once welded vertices are one: a vertex and a triangle
/// (`v = [vertex, a, b, c]`, `vertex_triangle`) or two edges (`v = [a, b, c, d]`), as in
/// proximities and CCD impacts; `class` from [`weld_classes`].
fn welded_neighbours(v: &[usize; 4], vertex_triangle: bool, class: &[usize]) -> bool {
    let c = v.map(|i| class[i]);
    if vertex_triangle {
        c[1..].contains(&c[0])
    } else {
        c[..2].iter().any(|x| c[2..].contains(x))
    }
}

/// The pair `(a, b)` in increasing order (an edge's key).
pub(crate) fn sorted(a: usize, b: usize) -> [usize; 2] {
    if a < b { [a, b] } else { [b, a] }
}
