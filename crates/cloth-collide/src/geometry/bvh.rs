//! A small axis-aligned bounding box hierarchy over primitives with refit, used for cloth
//! triangles and edges. Built once from the topology-independent leaf boxes; refitted every
//! step. Queried with a box, or traversed against itself for every overlapping pair of leaves.

use cloth_mesh::Vec3;
use rayon::prelude::*;

/// Axis-aligned box. An empty box has min = +inf, max = -inf; boxes containing NaN overlap
/// nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Aabb {
    pub min: Vec3,
    pub max: Vec3,
}

impl Aabb {
    pub fn empty() -> Self {
        Aabb {
            min: Vec3::repeat(f64::INFINITY),
            max: Vec3::repeat(f64::NEG_INFINITY),
        }
    }
    pub fn from_points<'a>(pts: impl IntoIterator<Item = &'a Vec3>) -> Self {
        let mut b = Self::empty();
        for p in pts {
            b.grow(p);
        }
        b
    }
    pub fn grow(&mut self, p: &Vec3) {
        self.min = self.min.inf(p);
        self.max = self.max.sup(p);
    }
    pub fn merge(&self, o: &Aabb) -> Aabb {
        Aabb {
            min: self.min.inf(&o.min),
            max: self.max.sup(&o.max),
        }
    }
    pub fn inflated(&self, r: f64) -> Aabb {
        Aabb {
            min: self.min.add_scalar(-r),
            max: self.max.add_scalar(r),
        }
    }
    #[inline]
    pub fn overlaps(&self, o: &Aabb) -> bool {
        // Branch-free: the six comparisons are cheaper than the mispredicted branches of
        // short-circuiting them (most tests in a traversal are decided by chance).
        let (a, b) = (&self.min, &self.max);
        let (c, d) = (&o.min, &o.max);
        (a.x <= d.x) & (c.x <= b.x) & (a.y <= d.y) & (c.y <= b.y) & (a.z <= d.z) & (c.z <= b.z)
    }
    pub fn contains(&self, p: &Vec3) -> bool {
        (0..3).all(|k| self.min[k] <= p[k] && p[k] <= self.max[k])
    }
    pub fn centre(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }
}

#[derive(Clone, Debug)]
struct Node {
    aabb: Aabb,
    /// Leaf: range [start, start + count) into `order`; internal: count == 0, children at
    /// `start` and `start + 1`.
    start: u32,
    count: u32,
}

/// Bounding volume hierarchy; children are stored after their parent so a reverse sweep refits.
#[derive(Clone, Debug, Default)]
pub(crate) struct Bvh {
    nodes: Vec<Node>,
    order: Vec<u32>,
    /// The leaf boxes of the last build/refit in tree order (`leaves[k]` is the box of leaf
    /// `order[k]`), so the leaves of a node are contiguous (queries test them individually).
    leaves: Vec<Aabb>,
}

const LEAF_SIZE: usize = 4;

impl Bvh {
    /// Builds a hierarchy over the given leaf boxes (median split along the longest axis of the
    /// centroid bounds; ties broken by index, so the tree is deterministic).
    pub fn build(leaves: &[Aabb]) -> Self {
        let mut bvh = Bvh {
            nodes: Vec::new(),
            order: (0..leaves.len() as u32).collect(),
            leaves: Vec::new(),
        };
        if leaves.is_empty() {
            return bvh;
        }
        let centres: Vec<Vec3> = leaves
            .iter()
            .map(|b| {
                let c = b.centre();
                // Non-finite boxes are sorted as if at the origin; they overlap nothing anyway.
                if c.iter().all(|x| x.is_finite()) {
                    c
                } else {
                    Vec3::zeros()
                }
            })
            .collect();
        bvh.nodes.push(Node {
            aabb: Aabb::empty(),
            start: 0,
            count: 0,
        });
        // Explicit stack of (node, lo, hi) to avoid recursion.
        let mut stack = vec![(0usize, 0usize, leaves.len())];
        while let Some((node, lo, hi)) = stack.pop() {
            if hi - lo <= LEAF_SIZE {
                bvh.nodes[node].start = lo as u32;
                bvh.nodes[node].count = (hi - lo) as u32;
                continue;
            }
            let cb = Aabb::from_points(bvh.order[lo..hi].iter().map(|&i| &centres[i as usize]));
            let ext = cb.max - cb.min;
            let axis = if ext.x >= ext.y && ext.x >= ext.z {
                0
            } else if ext.y >= ext.z {
                1
            } else {
                2
            };
            bvh.order[lo..hi].sort_unstable_by(|&a, &b| {
                centres[a as usize][axis]
                    .total_cmp(&centres[b as usize][axis])
                    .then(a.cmp(&b))
            });
            let mid = lo + (hi - lo) / 2;
            let left = bvh.nodes.len();
            bvh.nodes.push(Node {
                aabb: Aabb::empty(),
                start: 0,
                count: 0,
            });
            bvh.nodes.push(Node {
                aabb: Aabb::empty(),
                start: 0,
                count: 0,
            });
            bvh.nodes[node].start = left as u32;
            bvh.nodes[node].count = 0;
            stack.push((left + 1, mid, hi));
            stack.push((left, lo, mid));
        }
        bvh.refit(leaves);
        bvh
    }

    /// Fits the hierarchy to `leaves`: refits the tree when it was built over as many leaves
    /// (the topology is kept between steps), builds it otherwise (the first use).
    pub fn fit(&mut self, leaves: &[Aabb]) {
        if !self.nodes.is_empty() && self.order.len() == leaves.len() {
            self.refit(leaves);
        } else {
            *self = Bvh::build(leaves);
        }
    }

    /// Recomputes every node box from new leaf boxes (same count and order as at build).
    pub fn refit(&mut self, leaves: &[Aabb]) {
        self.leaves.clear();
        self.leaves
            .extend(self.order.iter().map(|&i| leaves[i as usize]));
        for n in (0..self.nodes.len()).rev() {
            let node = &self.nodes[n];
            let aabb = if node.count > 0 {
                let s = node.start as usize;
                self.order[s..s + node.count as usize]
                    .iter()
                    .fold(Aabb::empty(), |b, &i| b.merge(&leaves[i as usize]))
            } else {
                let c = node.start as usize;
                self.nodes[c].aabb.merge(&self.nodes[c + 1].aabb)
            };
            self.nodes[n].aabb = aabb;
        }
    }

    /// Calls `f` with every leaf whose box overlaps `query` (each once, in tree order).
    pub fn query(&self, query: &Aabb, stack: &mut Vec<u32>, mut f: impl FnMut(usize)) {
        if self.nodes.is_empty() {
            return;
        }
        stack.clear();
        stack.push(0);
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n as usize];
            if !node.aabb.overlaps(query) {
                continue;
            }
            if node.count > 0 {
                let range = node.start as usize..(node.start + node.count) as usize;
                for (&i, b) in self.order[range.clone()].iter().zip(&self.leaves[range]) {
                    if b.overlaps(query) {
                        f(i as usize);
                    }
                }
            } else {
                stack.push(node.start + 1);
                stack.push(node.start);
            }
        }
    }
}

impl Bvh {
    /// Every unordered pair of distinct leaves whose boxes overlap and that `keep(i, j)`
    /// accepts, as `(i, j)` with `i < j`, sorted. The hierarchy is traversed against itself (a node against itself, then its
    /// children against each other), so a pair costs nothing beyond its boxes' overlap and
    /// nearby leaves are not searched from the root once per leaf. The traversal is split into
    /// independent node pairs before it runs in parallel, and the result is sorted, so it is
    /// the same for any thread count.
    pub fn overlapping_pairs(&self, keep: impl Fn(usize, usize) -> bool + Sync) -> Vec<(u32, u32)> {
        if self.nodes.is_empty() {
            return Vec::new();
        }
        // Breadth-first until there is enough independent work (the split depends only on the
        // tree, never on the thread count).
        let mut frontier: Vec<(u32, u32)> = vec![(0, 0)];
        let mut leafy: Vec<(u32, u32)> = Vec::new();
        while !frontier.is_empty() && frontier.len() + leafy.len() < PAIR_TASKS {
            let mut next = Vec::with_capacity(frontier.len() * 3);
            for &(a, b) in &frontier {
                if !self.expand(a, b, &mut next) {
                    leafy.push((a, b));
                }
            }
            frontier = next;
        }
        frontier.extend(leafy);
        let mut pairs: Vec<(u32, u32)> = frontier
            .par_iter()
            .map(|&root| {
                let (mut out, mut stack) = (Vec::new(), vec![root]);
                while let Some((a, b)) = stack.pop() {
                    if !self.expand(a, b, &mut stack) {
                        self.leaf_pairs(a, b, &keep, &mut out);
                    }
                }
                out
            })
            .flatten_iter()
            .collect();
        sort_pairs(&mut pairs, self.order.len());
        pairs
    }

    /// Pushes the child pairs of the node pair `(a, b)` that can hold overlapping leaves;
    /// returns false (pushing nothing) when both are leaves, whose leaf pairs are then tested
    /// by [`Bvh::leaf_pairs`].
    fn expand(&self, a: u32, b: u32, out: &mut Vec<(u32, u32)>) -> bool {
        let (na, nb) = (&self.nodes[a as usize], &self.nodes[b as usize]);
        if a == b {
            if na.count > 0 {
                return false;
            }
            let (l, r) = (na.start, na.start + 1);
            out.extend([(l, l), (r, r)]);
            if self.nodes[l as usize]
                .aabb
                .overlaps(&self.nodes[r as usize].aabb)
            {
                out.push((l, r));
            }
            return true;
        }
        if !na.aabb.overlaps(&nb.aabb) {
            return true;
        }
        if na.count > 0 && nb.count > 0 {
            return false;
        }
        // Split the internal node, the larger one when both are.
        let split_a = nb.count > 0 || (na.count == 0 && volume(&na.aabb) >= volume(&nb.aabb));
        let (split, keep) = if split_a { (na, b) } else { (nb, a) };
        for c in [split.start, split.start + 1] {
            if self.nodes[c as usize]
                .aabb
                .overlaps(&self.nodes[keep as usize].aabb)
            {
                out.push((c, keep));
            }
        }
        true
    }

    /// Overlapping leaf pairs of the leaf nodes `a` and `b` (the same node: its own pairs)
    /// that `keep` accepts.
    fn leaf_pairs(
        &self,
        a: u32,
        b: u32,
        keep: &impl Fn(usize, usize) -> bool,
        out: &mut Vec<(u32, u32)>,
    ) {
        let range = |n: u32| {
            let n = &self.nodes[n as usize];
            n.start as usize..(n.start + n.count) as usize
        };
        let (ra, rb) = (range(a), range(b));
        for ka in ra {
            let (i, bi) = (self.order[ka], &self.leaves[ka]);
            let others = if a == b { ka + 1..rb.end } else { rb.clone() };
            for kb in others {
                let j = self.order[kb];
                let (i, j) = (i.min(j), i.max(j));
                if bi.overlaps(&self.leaves[kb]) && keep(i as usize, j as usize) {
                    out.push((i, j));
                }
            }
        }
    }
}

/// Sorts distinct pairs `(i, j)` with `i < n` in place: a counting sort by `i`, then each run of
/// equal `i` by `j` (a handful of pairs): linear in the tens of thousands of candidate pairs of
/// a cloth where a comparison sort is not, and the same order.
fn sort_pairs(pairs: &mut Vec<(u32, u32)>, n: usize) {
    if pairs.len() < 64 {
        pairs.sort_unstable();
        return;
    }
    let mut start = vec![0u32; n + 1];
    for &(i, _) in pairs.iter() {
        start[i as usize + 1] += 1;
    }
    for k in 0..n {
        start[k + 1] += start[k];
    }
    let mut sorted = vec![(0u32, 0u32); pairs.len()];
    let mut next = start.clone();
    for &p in pairs.iter() {
        let slot = &mut next[p.0 as usize];
        sorted[*slot as usize] = p;
        *slot += 1;
    }
    for k in 0..n {
        sorted[start[k] as usize..start[k + 1] as usize].sort_unstable_by_key(|p| p.1);
    }
    *pairs = sorted;
}

/// How many independent node pairs [`Bvh::overlapping_pairs`] splits its traversal into.
const PAIR_TASKS: usize = 64;

/// Sum of a box's extents (a cheap size measure that stays positive for flat boxes).
fn volume(b: &Aabb) -> f64 {
    let e = b.max - b.min;
    e.x + e.y + e.z
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pseudo-random numbers in [0, 1) from a linear congruential generator (deterministic).
    fn lcg(mut s: u64) -> impl FnMut() -> f64 {
        move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    #[test]
    fn query_matches_brute_force() {
        let mut rnd = lcg(12345);
        let mut boxes = Vec::new();
        for _ in 0..300 {
            let p = Vec3::new(rnd(), rnd(), rnd());
            boxes.push(Aabb {
                min: p,
                max: p + Vec3::new(rnd(), rnd(), rnd()) * 0.05,
            });
        }
        let mut bvh = Bvh::build(&boxes);
        for b in boxes.iter_mut() {
            b.min.x += 0.1;
            b.max.x += 0.1;
        }
        bvh.refit(&boxes);
        let mut stack = Vec::new();
        for _ in 0..50 {
            let p = Vec3::new(rnd(), rnd(), rnd());
            let q = Aabb {
                min: p,
                max: p + Vec3::repeat(0.1),
            };
            let mut got = Vec::new();
            bvh.query(&q, &mut stack, |i| got.push(i));
            got.sort();
            let want: Vec<usize> = (0..boxes.len())
                .filter(|&i| boxes[i].overlaps(&q))
                .collect();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn overlapping_pairs_match_brute_force() {
        let mut rnd = lcg(99);
        for n in [0usize, 1, 2, 3, 5, 17, 400] {
            let boxes: Vec<Aabb> = (0..n)
                .map(|_| {
                    let p = Vec3::new(rnd(), rnd(), rnd() * 0.1);
                    Aabb {
                        min: p,
                        max: p + Vec3::new(rnd(), rnd(), rnd()) * 0.08,
                    }
                })
                .collect();
            let got = Bvh::build(&boxes).overlapping_pairs(|i, j| (i + j) % 5 != 0);
            let mut want = Vec::new();
            for i in 0..n {
                for j in i + 1..n {
                    if boxes[i].overlaps(&boxes[j]) && (i + j) % 5 != 0 {
                        want.push((i as u32, j as u32));
                    }
                }
            }
            assert!(n < 400 || want.len() > 200, "{} pairs", want.len());
            assert_eq!(got, want, "{n} boxes");
        }
    }
}
