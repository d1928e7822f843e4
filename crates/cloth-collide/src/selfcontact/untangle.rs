//! Undoing small crossings of a cloth with itself that a state was handed over with, before
//! simulating from it (a state carried from a coarser copy of a garment, whose fine triangles
//! are chords of the coarse surface and can cut through a layer lying within millimetres).
//!
//! The continuous collision check keeps whatever crossings a step starts with: it stops motion
//! that would make new ones, so it also stops the motion that would undo old ones. This pass
//! resolves the common case, a vertex or a short chain of vertices poking through a nearby part
//! of the cloth (or two triangles hooked through each other), by moving one end of each
//! crossing edge back across the plane of the triangle it passes through. Which end moves is
//! decided by the smoothness of the surface: the tip of a poke lies away from its neighbours,
//! which are on the other side, and moving it brings it back among them; so the end whose move
//! brings it nearer the mean of its neighbours moves, and the moves that do so the most go
//! first. Each round re-finds the crossings; moved vertices land `margin` beyond the plane, so
//! the proximity contact that follows pushes the layers apart to their thickness. It is a
//! local repair for crossings a few millimetres deep, not an untangling of a crumpled cloth
//! (a sheet pulled through itself needs a global analysis of which side each region belongs
//! on): what it cannot undo in its rounds it reports.

use cloth_mesh::Vec3;

use super::intersections::IntersectionCounter;
use super::topology::weld_classes;
use crate::geometry::primitives::{segment_crosses_triangle, triangle_normal};

/// What [`untangle`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Untangled {
    /// Intersecting triangle pairs found before the first move.
    pub found: usize,
    /// Vertex moves made (a vertex moved in two rounds counts twice; moves of rounds that
    /// were undone because they left more crossings count too).
    pub moves: usize,
    /// Rounds of finding crossings and moving vertices.
    pub rounds: usize,
    /// Intersecting pairs left at the end (0 when every crossing was undone).
    pub remaining: usize,
}

/// One edge of the cloth crossing a triangle it shares no (welded) vertex with.
struct CrossingEdge {
    edge: [usize; 2],
    triangle: usize,
}

/// Moves vertices of `x` (m) until no two `triangles` that share no vertex (once the vertex
/// pairs `welded` are joined, as for [`IntersectionCounter::count`]) intersect, or for at most
/// `max_rounds` rounds. A moved vertex lands `margin` (m) beyond the plane of the triangle
/// its edge crossed, and its welded partners move with it. Vertices in no crossing are not
/// touched, nor are those marked in `fixed` (pinned ones; empty for none): of a crossing edge
/// with one fixed end the other end moves, and one with both fixed stays crossed (nor does a
/// vertex move whose welded partner is fixed). Never leaves more crossings than it found: if
/// its last round left more than an earlier one, the state after that earlier round is
/// restored. Deterministic (the crossings are processed in increasing triangle order, moves
/// in decreasing gain).
pub fn untangle(
    triangles: &[[usize; 3]],
    x: &mut [Vec3],
    welded: &[[usize; 2]],
    fixed: &[bool],
    margin: f64,
    max_rounds: usize,
) -> Untangled {
    let mut counter = IntersectionCounter::default();
    let class = weld_classes(x.len(), welded);
    let members = weld_members(&class, x.len());
    // The vertices welded to `v` (itself included), or `None` when nothing is welded.
    let group = |v: usize| class.get(v).map(|&r| members[r].as_slice());
    let pinned = |v: usize| match group(v) {
        Some(g) => g.iter().any(|&w| fixed.get(w) == Some(&true)),
        None => fixed.get(v) == Some(&true),
    };
    let fixed: Vec<bool> = (0..x.len()).map(pinned).collect();
    let mut out = Untangled::default();
    let mut pairs = counter.pairs(triangles, x, welded);
    out.found = pairs.len();
    // The state with the fewest crossings so far: a round that makes things worse (a move
    // that opens a new crossing elsewhere) is undone at the end.
    let mut best: Option<(usize, Vec<Vec3>)> = None;
    while !pairs.is_empty() && out.rounds < max_rounds {
        match &mut best {
            Some((n, kept)) if pairs.len() < *n => {
                *n = pairs.len();
                kept.copy_from_slice(x);
            }
            Some(_) => {}
            None => best = Some((pairs.len(), x.to_vec())),
        }
        out.rounds += 1;
        let centroids = ring_centroids(triangles, x);
        let mut moves: Vec<(f64, CrossingEdge)> = crossing_edges(triangles, x, &pairs)
            .into_iter()
            .filter_map(|c| {
                push_back(&c, triangles, x, &centroids, &fixed, margin).map(|m| (m.2, c))
            })
            .collect();
        // Best first: the moves that bring a vertex closest to its neighbours.
        moves.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (_, c) in &moves {
            if let Some((v, to, _)) = push_back(c, triangles, x, &centroids, &fixed, margin) {
                match group(v) {
                    Some(g) => {
                        let d = to - x[v];
                        g.iter().for_each(|&w| x[w] += d);
                    }
                    None => x[v] = to,
                }
                out.moves += 1;
            }
        }
        pairs = counter.pairs(triangles, x, welded);
    }
    if let Some((n, kept)) = best
        && n < pairs.len()
    {
        x.copy_from_slice(&kept);
        pairs.truncate(n);
    }
    out.remaining = pairs.len();
    out
}

/// The vertices welded together, per weld class (indexed by the class's root in `class`);
/// empty when nothing is welded.
fn weld_members(class: &[usize], n: usize) -> Vec<Vec<usize>> {
    if class.is_empty() {
        return Vec::new();
    }
    let mut by_root: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (v, &r) in class.iter().enumerate() {
        by_root[r].push(v);
    }
    by_root
}

/// The edges of each intersecting pair that pass through the other triangle.
fn crossing_edges(
    triangles: &[[usize; 3]],
    x: &[Vec3],
    pairs: &[(usize, usize)],
) -> Vec<CrossingEdge> {
    let mut out = Vec::new();
    for &(a, b) in pairs {
        for (s, t) in [(a, b), (b, a)] {
            let [p, q, r] = triangles[t].map(|i| &x[i]);
            let tri = triangles[s];
            for (i, j) in [(0, 1), (1, 2), (2, 0)] {
                if segment_crosses_triangle(&x[tri[i]], &x[tri[j]], p, q, r) {
                    out.push(CrossingEdge {
                        edge: [tri[i], tri[j]],
                        triangle: t,
                    });
                }
            }
        }
    }
    out
}

/// For every vertex, the mean of the other corners of its triangles (each counted once per
/// triangle); the vertex itself when it is in none.
fn ring_centroids(triangles: &[[usize; 3]], x: &[Vec3]) -> Vec<Vec3> {
    let mut sum = vec![Vec3::zeros(); x.len()];
    let mut count = vec![0u32; x.len()];
    for t in triangles {
        if t.iter().any(|&i| i >= x.len()) {
            continue;
        }
        for k in 0..3 {
            sum[t[k]] += x[t[(k + 1) % 3]] + x[t[(k + 2) % 3]];
            count[t[k]] += 2;
        }
    }
    (0..x.len())
        .map(|v| {
            if count[v] > 0 {
                sum[v] / count[v] as f64
            } else {
                x[v]
            }
        })
        .collect()
}

/// The vertex of `c`'s edge to move, where, and how much nearer the mean of its neighbours
/// (`centroids`) that brings it (m, negative when it takes it away); `None` if the edge no
/// longer crosses the triangle (an earlier move undid it), the triangle is degenerate or
/// both ends are `fixed`.
///
/// Either end can go back across the triangle's plane; the one that moves is the one whose
/// move is the better for the smoothness of the surface: the tip of a poke is far from its
/// neighbours, which lie on the other side, and moving it brings it back among them, while
/// moving a vertex whose neighbours are on its own side would make a new poke.
fn push_back(
    c: &CrossingEdge,
    triangles: &[[usize; 3]],
    x: &[Vec3],
    centroids: &[Vec3],
    fixed: &[bool],
    margin: f64,
) -> Option<(usize, Vec3, f64)> {
    let [a, b, cc] = triangles[c.triangle].map(|i| x[i]);
    let [p, q] = c.edge;
    if !segment_crosses_triangle(&x[p], &x[q], &a, &b, &cc) {
        return None;
    }
    let n = triangle_normal(&a, &b, &cc)?;
    let (dp, dq) = (n.dot(&(x[p] - a)), n.dot(&(x[q] - a)));
    if dp * dq >= 0.0 {
        return None;
    }
    let candidate = |v: usize, d: f64, other: f64| {
        let to = x[v] + n * (other.signum() * margin - d);
        let gain = (x[v] - centroids[v]).norm() - (to - centroids[v]).norm();
        (v, to, gain)
    };
    let (mp, mq) = (candidate(p, dp, dq), candidate(q, dq, dp));
    match (fixed[p], fixed[q]) {
        (true, true) => None,
        (true, false) => Some(mq),
        (false, true) => Some(mp),
        _ => Some(if mp.2 > mq.2 || (mp.2 == mq.2 && p < q) {
            mp
        } else {
            mq
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selfcontact::intersections::count_intersections;

    /// Two `n` x `n` grids 0.1 m wide, one at z = 0 and one at z = `gap` shifted by a third of
    /// a cell in x and a quarter in y (no vertex above another), as one mesh.
    fn two_sheets(n: usize, gap: f64) -> (Vec<[usize; 3]>, Vec<Vec3>) {
        let sheet =
            cloth_mesh::grid(n, n, 0.1, 0.1, cloth_mesh::GridPattern::Alternating).expect("grid");
        let m = sheet.num_vertices();
        // The grid lies in x-z; laid in x-y here so that "up" is z.
        let mut x: Vec<Vec3> = (sheet.positions().iter())
            .map(|p| Vec3::new(p.x, p.z, 0.0))
            .collect();
        let cell = 0.1 / (n - 1) as f64;
        let shift = Vec3::new(cell / 3.0, cell / 4.0, gap);
        x.extend((0..m).map(|v| x[v] + shift).collect::<Vec<_>>());
        let mut tris = sheet.triangles().to_vec();
        tris.extend(sheet.triangles().iter().map(|t| t.map(|i| i + m)));
        (tris, x)
    }

    /// A vertex of the upper sheet pushed 1 mm below the lower one pokes through it; the pass
    /// moves that vertex alone back above the lower sheet, and nothing crosses.
    #[test]
    fn a_poking_vertex_is_pushed_back_and_nothing_else_moves() {
        let (tris, mut x) = two_sheets(9, 0.004);
        let m = x.len() / 2;
        let tip = m + 4 * 9 + 4; // the upper sheet's middle vertex
        x[tip].z = -0.001;
        let before = x.clone();
        assert!(count_intersections(&tris, &x) > 0);
        let done = untangle(&tris, &mut x, &[], &[], 0.0004, 10);
        assert_eq!(count_intersections(&tris, &x), 0, "{done:?}");
        assert_eq!(done.remaining, 0);
        for (v, (p, q)) in before.iter().zip(&x).enumerate() {
            if v != tip {
                assert_eq!(p, q, "vertex {v} moved");
            }
        }
        assert!(x[tip].z > 0.0 && x[tip].z <= 0.0004 + 1e-12, "{}", x[tip].z);
    }

    /// A whole row of the upper sheet pushed through the lower one (a fold line poking
    /// through): the intersection contour encloses the row on one sheet and a strip of the
    /// other, and moving either side undoes it. Nothing crosses afterwards, and only vertices
    /// within a cell and a half of the row move, each by under half a cell.
    #[test]
    fn a_poking_row_is_pushed_back() {
        let n = 9;
        let cell = 0.1 / (n - 1) as f64;
        let (tris, mut x) = two_sheets(n, 0.004);
        let m = x.len() / 2;
        let row: Vec<usize> = (1..n - 1).map(|i| m + 4 * n + i).collect();
        for &v in &row {
            x[v].z = -0.002;
        }
        let before = x.clone();
        assert!(count_intersections(&tris, &x) > 0);
        let done = untangle(&tris, &mut x, &[], &[], 0.0004, 10);
        assert_eq!(count_intersections(&tris, &x), 0, "{done:?}");
        let near_row =
            |p: &Vec3| (row.iter()).any(|&r| (p.xy() - before[r].xy()).norm() < 1.5 * cell);
        for (v, (p, q)) in before.iter().zip(&x).enumerate() {
            if p != q {
                assert!(
                    near_row(p),
                    "vertex {v} at {p:?} moved but is far from the row"
                );
                let moved = (q - p).norm();
                assert!(moved <= 0.5 * cell, "vertex {v} moved {moved} m to {q:?}");
            }
        }
    }

    /// A welded partner moves with the vertex that is pushed back, so the weld stays closed.
    #[test]
    fn welded_partners_move_together() {
        let (mut tris, mut x) = two_sheets(9, 0.004);
        let m = x.len() / 2;
        let tip = m + 4 * 9 + 4;
        // A lone triangle hanging from a copy of the tip, welded to it.
        let copy = x.len();
        x.push(x[tip]);
        x.push(x[tip] + Vec3::new(0.01, 0.0, 0.01));
        x.push(x[tip] + Vec3::new(0.0, 0.01, 0.01));
        tris.push([copy, copy + 1, copy + 2]);
        x[tip].z = -0.001;
        x[copy].z = -0.001;
        let welded = [[tip, copy]];
        let done = untangle(&tris, &mut x, &welded, &[], 0.0004, 10);
        assert_eq!(done.remaining, 0, "{done:?}");
        assert_eq!(x[tip], x[copy]);
        assert!(x[tip].z > 0.0);
    }

    /// A fixed (pinned) tip stays where it is: the sheet it pokes through gives way instead.
    #[test]
    fn a_fixed_vertex_is_not_moved() {
        let (tris, mut x) = two_sheets(9, 0.004);
        let m = x.len() / 2;
        let tip = m + 4 * 9 + 4;
        x[tip].z = -0.001;
        let mut fixed = vec![false; x.len()];
        fixed[tip] = true;
        let before = x.clone();
        let done = untangle(&tris, &mut x, &[], &fixed, 0.0004, 10);
        assert_eq!(count_intersections(&tris, &x), 0, "{done:?}");
        assert_eq!(x[tip], before[tip]);
        assert!(done.moves > 0);
        // Everything fixed: nothing can move and the crossing is reported.
        let mut y = before.clone();
        let all = vec![true; y.len()];
        let done = untangle(&tris, &mut y, &[], &all, 0.0004, 10);
        assert_eq!((done.moves, y == before), (0, true));
        assert_eq!(done.remaining, done.found);
    }

    /// Two triangles hooked through each other (an edge of each passes through the other):
    /// unhooked, by moving one vertex.
    #[test]
    fn hooked_triangles_are_unhooked() {
        let mut x = vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(0.02, 0.0, 0.0),
            Vec3::new(0.0, 0.02, 0.0),
            Vec3::new(0.005, 0.005, -0.005),
            Vec3::new(0.005, 0.005, 0.005),
            Vec3::new(0.03, 0.005, 0.0),
        ];
        let tris = [[0, 1, 2], [3, 4, 5]];
        assert_eq!(count_intersections(&tris, &x), 1);
        let before = x.clone();
        let done = untangle(&tris, &mut x, &[], &[], 0.0004, 10);
        assert_eq!(count_intersections(&tris, &x), 0, "{done:?}");
        let moved = before.iter().zip(&x).filter(|(p, q)| p != q).count();
        assert_eq!((moved, done.moves, done.remaining), (1, 1, 0), "{done:?}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        /// Two sheets 3 mm apart with every vertex moved up to 4 mm up or down (many crossings
        /// of every kind): the pass reports what is left truthfully (by a separate count),
        /// never leaves more than it found, and keeps every position finite.
        #[test]
        fn what_is_left_is_reported_and_never_more_than_found(
            dz in proptest::collection::vec(-0.004f64..0.004, 162),
            rounds in 0usize..12,
        ) {
            let (tris, mut x) = two_sheets(9, 0.003);
            for (p, d) in x.iter_mut().zip(&dz) {
                p.z += d;
            }
            let found = count_intersections(&tris, &x);
            let done = untangle(&tris, &mut x, &[], &[], 0.0003, rounds);
            proptest::prop_assert_eq!(done.found, found);
            proptest::prop_assert_eq!(done.remaining, count_intersections(&tris, &x));
            proptest::prop_assert!(done.remaining <= found, "{:?}", done);
            proptest::prop_assert!(done.rounds <= rounds);
            proptest::prop_assert!(x.iter().all(|p| p.iter().all(|c| c.is_finite())));
        }
    }

    /// Nothing crossing: nothing moves and no round runs.
    #[test]
    fn separate_layers_are_left_alone() {
        let (tris, mut x) = two_sheets(5, 0.004);
        let before = x.clone();
        let done = untangle(&tris, &mut x, &[], &[], 0.0004, 10);
        assert_eq!(done, Untangled::default());
        assert_eq!(before, x);
    }
}
