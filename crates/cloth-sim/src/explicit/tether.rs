//! Long-range attachments (Kim, Chentanez & Müller 2012, "Long range attachments — a method to
//! simulate inextensible clothing in computer games"): every free vertex is tied to the
//! nearest pinned vertex of each pin group by a one-sided constraint
//! `abs(x_i - x_p) <= max * g(i, p)`, where `g` is the shortest path from `i` to `p` along
//! mesh edges at rest length.
//!
//! The constraint follows from the edge limits (the edges of that path are each at most `max`
//! times their rest length, and a straight line is no longer than the path), so adding it does
//! not change which states are allowed. It only moves the far end of a long chain of edges
//! hanging from a pin in one update instead of one edge per sweep: the stretch that a hanging
//! sheet accumulates from the pinned edge down is removed at once.

use cloth_mesh::Vec3;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Most pin groups a vertex is tied to (the nearest ones by path length).
const MAX_GROUPS_PER_VERTEX: usize = 4;

/// One attachment: free vertex, pinned vertex, rest path length (m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Tether {
    pub vertex: usize,
    pub pin: usize,
    pub length: f64,
}

/// The attachments of a cloth with their per-step multipliers.
pub(crate) struct Tethers {
    tethers: Vec<Tether>,
    lambda: Vec<f64>,
}

#[derive(PartialEq)]
struct Item(f64, usize, usize);
impl Eq for Item {}
impl Ord for Item {
    fn cmp(&self, o: &Self) -> Ordering {
        // Min-heap on distance, then vertex, then source: a total, deterministic order.
        o.0.total_cmp(&self.0)
            .then_with(|| o.1.cmp(&self.1))
            .then_with(|| o.2.cmp(&self.2))
    }
}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// Shortest rest path length from the nearest of `sources` to every vertex, and that source
/// (Dijkstra over the edge graph `adj` of (neighbour, rest length)).
fn nearest_source(adj: &[Vec<(usize, f64)>], sources: &[usize]) -> Vec<Option<(f64, usize)>> {
    let mut best: Vec<Option<(f64, usize)>> = vec![None; adj.len()];
    let mut heap = BinaryHeap::new();
    for &s in sources {
        best[s] = Some((0.0, s));
        heap.push(Item(0.0, s, s));
    }
    while let Some(Item(d, v, s)) = heap.pop() {
        if best[v].is_some_and(|(b, bs)| b < d || (b == d && bs != s)) {
            continue;
        }
        for &(u, l) in &adj[v] {
            let nd = d + l;
            if best[u].is_none_or(|(b, _)| nd < b) {
                best[u] = Some((nd, s));
                heap.push(Item(nd, u, s));
            }
        }
    }
    best
}

impl Tethers {
    /// Attachments of every vertex that is not pinned (`pinned`) to the nearest vertex of each
    /// of the (at most four nearest) pin groups `groups` it is connected to by `edges` with
    /// rest lengths `rest`.
    pub fn new(
        num_vertices: usize,
        edges: &[[usize; 2]],
        rest: &[f64],
        groups: &[&[usize]],
        pinned: &[bool],
    ) -> Self {
        let mut adj: Vec<Vec<(usize, f64)>> = vec![Vec::new(); num_vertices];
        for (e, &l) in edges.iter().zip(rest) {
            adj[e[0]].push((e[1], l));
            adj[e[1]].push((e[0], l));
        }
        let mut per_vertex: Vec<Vec<(f64, usize)>> = vec![Vec::new(); num_vertices];
        for g in groups.iter().filter(|g| !g.is_empty()) {
            for (v, b) in nearest_source(&adj, g).into_iter().enumerate() {
                if let Some((d, s)) = b
                    && !pinned[v]
                    && d > 0.0
                {
                    per_vertex[v].push((d, s));
                }
            }
        }
        let mut tethers = Vec::new();
        for (v, mut list) in per_vertex.into_iter().enumerate() {
            list.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            list.truncate(MAX_GROUPS_PER_VERTEX);
            tethers.extend(list.into_iter().map(|(length, pin)| Tether {
                vertex: v,
                pin,
                length,
            }));
        }
        let lambda = vec![0.0; tethers.len()];
        Self { tethers, lambda }
    }

    /// The attachments, ordered by vertex.
    pub fn tethers(&self) -> &[Tether] {
        &self.tethers
    }

    /// Clears the multipliers at the start of a step.
    pub fn begin(&mut self) {
        self.lambda.fill(0.0);
    }

    /// One sweep: `abs(x_i - x_p) <= max * length` for every attachment, with
    /// over-relaxation `omega`; pinned vertices (`inv_mass` 0) do not move. Returns the
    /// largest relative violation seen before the updates.
    pub fn sweep(&mut self, x: &mut [Vec3], inv_mass: &[f64], max: f64, omega: f64) -> f64 {
        let mut worst: f64 = 0.0;
        for (t, lambda) in self.tethers.iter().zip(self.lambda.iter_mut()) {
            let w = inv_mass[t.vertex];
            let d = x[t.vertex] - x[t.pin];
            let len = d.norm();
            if w == 0.0 || len == 0.0 {
                continue;
            }
            let c = len - max * t.length;
            worst = worst.max(c / t.length);
            let next = (*lambda + omega * c / w).max(0.0);
            let dl = next - *lambda;
            *lambda = next;
            x[t.vertex] -= d * (w * dl / len);
        }
        worst
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_vertex_is_tied_to_the_nearest_pin_by_the_path_length() {
        // 3 x 3 grid of unit squares without diagonals, pins at vertices 0 and 2 (one group
        // each) and at 6 and 8 (one group together).
        let idx = |r: usize, c: usize| 3 * r + c;
        let mut edges = Vec::new();
        for r in 0..3 {
            for c in 0..3 {
                if c < 2 {
                    edges.push([idx(r, c), idx(r, c + 1)]);
                }
                if r < 2 {
                    edges.push([idx(r, c), idx(r + 1, c)]);
                }
            }
        }
        let rest = vec![1.0; edges.len()];
        let mut pinned = vec![false; 9];
        for p in [0, 2, 6, 8] {
            pinned[p] = true;
        }
        let set = Tethers::new(9, &edges, &rest, &[&[0], &[2], &[6, 8]], &pinned);
        let of = |v: usize| -> Vec<(usize, f64)> {
            let t = set.tethers().iter().filter(|t| t.vertex == v);
            t.map(|t| (t.pin, t.length)).collect()
        };
        assert_eq!(of(4), vec![(0, 2.0), (2, 2.0), (6, 2.0)]);
        assert_eq!(of(7), vec![(6, 1.0), (0, 3.0), (2, 3.0)]);
        assert!(of(0).is_empty());
    }

    #[test]
    fn a_far_vertex_is_pulled_back_to_its_reach_in_one_sweep() {
        let edges = [[0, 1], [1, 2]];
        let mut set = Tethers::new(3, &edges, &[1.0, 1.0], &[&[0]], &[true, false, false]);
        let mut x = vec![
            Vec3::zeros(),
            Vec3::new(0.0, -1.0, 0.0),
            Vec3::new(0.0, -5.0, 0.0),
        ];
        set.begin();
        let worst = set.sweep(&mut x, &[0.0, 1.0, 1.0], 1.1, 1.0);
        assert!((worst - (5.0 - 2.2) / 2.0).abs() < 1e-12);
        assert!((x[2].y + 2.2).abs() < 1e-12 && x[0] == Vec3::zeros());
    }
}
