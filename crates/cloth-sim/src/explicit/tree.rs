//! The long-range part of the maximum-stretch projection: an exact, linear-time projection onto
//! the stretch limits of the edges of a spanning tree of the mesh.
//!
//! The tree is the shortest-path forest (along rest edge lengths) from the pinned vertices,
//! and from one central vertex of every component that has no pin. Every vertex hangs from its
//! pins along tree edges, so the stretch a hanging sheet accumulates from the pinned edge
//! down, which Gauss-Seidel removes one edge per sweep, lies along the tree.
//!
//! One solve linearizes every tree edge that is stretched (or within `slack` of its limit)
//! around the current positions and projects, mass-weighted, onto all of them at once:
//! `dx = -W J^T lambda` with `J dx = -C`, the system of a tree of distance constraints solved
//! by the articulated-body recursion (Featherstone; for position constraints Deul, Kugelstadt,
//! Weiler & Bender 2018, "Direct position-based solver for stiff rods"): from the leaves up,
//! each vertex gathers the effective mass of the subtree hanging from it,
//! `M_v = m_v I + sum_k g_k g_k^T / (g_k^T W_k g_k)` over its child edges `k` (unit direction
//! `g_k`, child's effective inverse mass `W_k`), and the displacement its subtree would have
//! on its own; from the roots down, each edge's multiplier follows and with it the child's
//! displacement. Pinned vertices have infinite mass. Edges whose multiplier comes out negative
//! (they would have to push) are released. Cost: a 3 x 3 inverse per vertex.

use cloth_mesh::Vec3;
use nalgebra::Matrix3;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A vertex's link to its parent in the tree.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Link {
    parent: usize,
    /// Rest length of the edge (m).
    rest: f64,
}

/// The spanning forest and the scratch of its solves.
pub(crate) struct TreeProjection {
    /// Parent link of every vertex (`None` for roots).
    link: Vec<Option<Link>>,
    /// Vertices, parents before children.
    order: Vec<usize>,
    /// Per vertex: effective mass of the subtree hanging from it (upward pass), then its
    /// inverse.
    mass: Vec<Matrix3<f64>>,
    /// Per vertex: force gathered from the children (upward pass).
    pull: Vec<Vec3>,
    /// Per vertex: displacement of its subtree with no force from the parent.
    free: Vec<Vec3>,
    /// Per link (indexed by child): unit direction, constraint value, `g^T W g`, active.
    rows: Vec<(Vec3, f64, f64, bool)>,
    dx: Vec<Vec3>,
}

#[derive(PartialEq)]
struct Item(f64, usize);
impl Eq for Item {}
impl Ord for Item {
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.total_cmp(&self.0).then_with(|| o.1.cmp(&self.1))
    }
}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl TreeProjection {
    /// The shortest-path forest of the graph `edges` (rest lengths `rest`) from the vertices
    /// with `pinned`, and from the vertex nearest the centroid of `positions` (the initial
    /// positions) in every component without a pin.
    pub fn new(edges: &[[usize; 2]], rest: &[f64], pinned: &[bool], positions: &[Vec3]) -> Self {
        let n = pinned.len();
        let mut adj: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
        for (e, &l) in edges.iter().zip(rest) {
            adj[e[0]].push((e[1], l));
            adj[e[1]].push((e[0], l));
        }
        let mut link = vec![None; n];
        let mut dist = vec![f64::INFINITY; n];
        let mut order = Vec::with_capacity(n);
        let sources: Vec<usize> = (0..n).filter(|&i| pinned[i]).collect();
        grow(&adj, &sources, &mut dist, &mut link, &mut order);
        while order.len() < n {
            // A component without pins: root it at its vertex nearest its centroid.
            let start = (0..n).find(|&i| dist[i].is_infinite()).unwrap_or(0);
            let mut comp = Vec::new();
            let mut probe = dist.clone();
            let mut probe_link = link.clone();
            grow(&adj, &[start], &mut probe, &mut probe_link, &mut comp);
            let c = comp.iter().map(|&i| positions[i]).sum::<Vec3>() / comp.len() as f64;
            let root = comp
                .iter()
                .copied()
                .min_by(|&a, &b| {
                    let (da, db) = ((positions[a] - c).norm(), (positions[b] - c).norm());
                    da.total_cmp(&db).then(a.cmp(&b))
                })
                .unwrap_or(start);
            grow(&adj, &[root], &mut dist, &mut link, &mut order);
        }
        Self {
            link,
            order,
            mass: vec![Matrix3::zeros(); n],
            pull: vec![Vec3::zeros(); n],
            free: vec![Vec3::zeros(); n],
            rows: vec![(Vec3::zeros(), 0.0, 0.0, false); n],
            dx: vec![Vec3::zeros(); n],
        }
    }

    /// Number of tree edges.
    #[cfg(test)]
    pub fn num_links(&self) -> usize {
        self.link.iter().filter(|l| l.is_some()).count()
    }

    /// One projection of `x` onto the stretch limits `abs(d) <= max * rest` of the tree edges
    /// that exceed `(max - slack) * rest`; vertices with `inv_mass` 0 do not move. Returns the
    /// number of edges that pulled.
    pub fn solve(&mut self, x: &mut [Vec3], inv_mass: &[f64], max: f64, slack: f64) -> usize {
        self.upward(x, inv_mass, max, slack);
        let pulled = self.downward();
        for (x, dx) in x.iter_mut().zip(&self.dx) {
            *x += dx;
        }
        pulled
    }

    /// Leaves to roots: effective masses, free displacements, and the link rows.
    fn upward(&mut self, x: &[Vec3], inv_mass: &[f64], max: f64, slack: f64) {
        for &v in &self.order {
            let w = inv_mass[v];
            self.mass[v] = if w > 0.0 {
                Matrix3::identity() / w
            } else {
                Matrix3::zeros()
            };
            self.pull[v] = Vec3::zeros();
        }
        for &v in self.order.iter().rev() {
            let w = inv_mass[v];
            // Effective inverse mass of v's subtree and its displacement without a parent.
            let inv = if w > 0.0 {
                self.mass[v].try_inverse().unwrap_or_else(Matrix3::zeros)
            } else {
                Matrix3::zeros()
            };
            self.free[v] = inv * self.pull[v];
            self.mass[v] = inv;
            self.rows[v].3 = false;
            let Some(link) = self.link[v] else { continue };
            let d = x[v] - x[link.parent];
            let len = d.norm();
            let c = len - max * link.rest;
            if len == 0.0 || c <= -slack * link.rest {
                continue;
            }
            let g = d / len;
            let dd = g.dot(&(inv * g));
            if dd <= 0.0 {
                continue;
            }
            self.rows[v] = (g, c, dd, true);
            let p = link.parent;
            if inv_mass[p] > 0.0 {
                self.mass[p] += g * g.transpose() / dd;
                self.pull[p] += g * ((c + g.dot(&self.free[v])) / dd);
            }
        }
    }

    /// Roots to leaves: multipliers and displacements. A link whose multiplier would be
    /// negative is released (its subtree keeps its free displacement).
    fn downward(&mut self) -> usize {
        let mut pulled = 0;
        for &v in &self.order {
            let (g, c, dd, active) = self.rows[v];
            self.dx[v] = match self.link[v] {
                Some(link) if active => {
                    let lambda = (c + g.dot(&self.free[v]) - g.dot(&self.dx[link.parent])) / dd;
                    if lambda > 0.0 {
                        pulled += 1;
                        self.free[v] - self.mass[v] * g * lambda
                    } else {
                        self.free[v]
                    }
                }
                _ => self.free[v],
            };
        }
        pulled
    }
}

/// Dijkstra from `sources` over unvisited vertices (`dist` infinite), recording parent links
/// and the order in which vertices are settled.
fn grow(
    adj: &[Vec<(usize, f64)>],
    sources: &[usize],
    dist: &mut [f64],
    link: &mut [Option<Link>],
    order: &mut Vec<usize>,
) {
    let mut heap = BinaryHeap::new();
    for &s in sources {
        dist[s] = 0.0;
        link[s] = None;
        heap.push(Item(0.0, s));
    }
    let mut done = vec![false; adj.len()];
    while let Some(Item(d, v)) = heap.pop() {
        if done[v] || d > dist[v] {
            continue;
        }
        done[v] = true;
        order.push(v);
        for &(u, l) in &adj[v] {
            if d + l < dist[u] {
                dist[u] = d + l;
                link[u] = Some(Link { parent: v, rest: l });
                heap.push(Item(d + l, u));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stretched_hanging_chain_is_projected_exactly_in_one_solve() {
        // A vertical chain of 30 unit edges pinned at the top, every free vertex shifted 0.7
        // down: only the top edge is over the limit, and the exact projection lifts the whole
        // chain by 0.7 (Gauss-Seidel would need hundreds of sweeps).
        let n = 31;
        let edges: Vec<[usize; 2]> = (0..n - 1).map(|i| [i, i + 1]).collect();
        let rest = vec![1.0; n - 1];
        let mut pinned = vec![false; n];
        pinned[0] = true;
        let xr: Vec<Vec3> = (0..n).map(|i| Vec3::new(0.0, -(i as f64), 0.0)).collect();
        let mut tree = TreeProjection::new(&edges, &rest, &pinned, &xr);
        assert_eq!(tree.num_links(), n - 1);
        let mut x: Vec<Vec3> = (0..n)
            .map(|i| Vec3::new(0.0, -1.1 * i as f64 - if i > 0 { 0.7 } else { 0.0 }, 0.0))
            .collect();
        let mut inv = vec![1.0; n];
        inv[0] = 0.0;
        let pulled = tree.solve(&mut x, &inv, 1.1, 0.005);
        assert_eq!(pulled, n - 1);
        for (i, p) in x.iter().enumerate() {
            assert!((p.y + 1.1 * i as f64).abs() < 1e-12, "{i}: {}", p.y);
        }
    }

    #[test]
    fn a_free_pair_meets_at_its_mass_weighted_centre_and_slack_edges_do_not_push() {
        let edges = [[0, 1], [1, 2]];
        let xr = [Vec3::zeros(), Vec3::x(), Vec3::x() * 2.0];
        let mut tree = TreeProjection::new(&edges, &[1.0, 1.0], &[false; 3], &xr);
        // Vertex 1 is the root (nearest the centroid); edge 0-1 is stretched, 1-2 is short.
        let mut x = vec![Vec3::new(-1.0, 0.0, 0.0), Vec3::x(), Vec3::x() * 1.5];
        let inv = [1.0, 3.0, 1.0];
        tree.solve(&mut x, &inv, 1.0, 0.0);
        assert!(((x[1] - x[0]).norm() - 1.0).abs() < 1e-12);
        // Momentum: mass-weighted displacement of the pair is zero; vertex 2 did not move.
        let m0 = 1.0 * (x[0].x + 1.0) + (1.0 / 3.0) * (x[1].x - 1.0);
        assert!(m0.abs() < 1e-12 && x[2] == Vec3::x() * 1.5);
    }
}
