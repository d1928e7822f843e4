//! Continuous collision detection (CCD) of cloth against itself over one step: every vertex and
//! every edge moves on a straight line from its start to its end position, and a
//! vertex-triangle or edge-edge pair collides when its four points become coplanar at a time in
//! [0, 1] where the features are also within a small gap of each other (Provot 1997; Bridson,
//! Fedkiw & Anderson 2002). The coplanarity condition is a cubic in time; its roots are
//! bracketed on the monotone pieces between the cubic's critical points and bisected, so no
//! sign change is missed, and the critical points themselves are tested too (grazing contacts).

use cloth_mesh::Vec3;
use rayon::prelude::*;

use super::topology::{CHUNK, Topology};
use crate::error::CollideError;
use crate::geometry::bvh::{Aabb, Bvh};
use crate::geometry::primitives::{closest_on_triangle, closest_segment_segment};

/// Which pair of features collides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImpactKind {
    /// Vertex `vertices[0]` hits triangle `(vertices[1], vertices[2], vertices[3])`.
    VertexTriangle,
    /// Edge `(vertices[0], vertices[1])` hits edge `(vertices[2], vertices[3])`.
    EdgeEdge,
}

/// A collision found within a step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Impact {
    /// Kind of feature pair.
    pub kind: ImpactKind,
    /// The four cloth vertices involved.
    pub vertices: [usize; 4],
    /// Earliest time of contact as a fraction of the step, in [0, 1].
    pub t: f64,
}

/// Bisection steps of a bracketed root (2^-52 of the step: full f64 resolution).
const BISECTIONS: usize = 52;

/// Where a vertex and a triangle lie from each other along the cloth, which sets how near they
/// may start a step and still count as an impact ([`vertex_triangle_impact`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Along {
    /// A corner of the triangle is an edge away from the vertex (welded vertices counted as
    /// one): near each other by construction (across a fold's crease, or a seam as it closes),
    /// so a pair that starts within twice the gap counts only when it comes within half its
    /// start distance, and such pairs do not collide forever.
    Adjacent,
    /// Farther apart along the cloth: another layer, which must not end a step within the gap
    /// if it started beyond it, however near it started.
    Apart,
}

/// The earliest time in [0, 1] at which point `p` (moving from `p[0]` to `p[1]`) comes within
/// `gap` (m) of triangle `(a, b, c)` (each corner moving linearly) while coplanar with it, or
/// at the end of the motion. A pair that starts within `gap` counts only when it comes within
/// half its start distance (so pairs that start in contact do not collide forever), and so
/// does a pair of [`Along::Adjacent`] features that starts within `2 gap`; one of
/// [`Along::Apart`] features that starts beyond `gap` counts as soon as it comes within it.
pub fn vertex_triangle_impact(
    p: [Vec3; 2],
    a: [Vec3; 2],
    b: [Vec3; 2],
    c: [Vec3; 2],
    gap: f64,
    along: Along,
) -> Option<f64> {
    vt_impact(p, a, b, c, gap, || along == Along::Apart)
}

/// [`vertex_triangle_impact`], asking `apart` whether the features are [`Along::Apart`] only
/// when the answer matters (a pair that starts beyond the gap and may come within it).
fn vt_impact(
    p: [Vec3; 2],
    a: [Vec3; 2],
    b: [Vec3; 2],
    c: [Vec3; 2],
    gap: f64,
    apart: impl FnOnce() -> bool,
) -> Option<f64> {
    let dist = |t: f64| {
        let at = |q: &[Vec3; 2]| q[0] + (q[1] - q[0]) * t;
        let (pt, at_, bt, ct) = (at(&p), at(&a), at(&b), at(&c));
        let (w, _) = closest_on_triangle(&pt, &at_, &bt, &ct);
        (pt - (at_ * w[0] + bt * w[1] + ct * w[2])).norm()
    };
    earliest([a, b, c, p], 3, gap, apart, dist)
}

/// The earliest time in [0, 1] at which edge `(p, q)` comes within `gap` (m) of edge `(r, s)`
/// (every end moving linearly) while the four points are coplanar, or at the end of the
/// motion; every pair counts as [`Along::Adjacent`] features do in
/// [`vertex_triangle_impact`]: what keeps another layer out of the gap is the vertex-triangle
/// rule, and edges only need to be kept from passing through each other.
pub fn edge_edge_impact(
    p: [Vec3; 2],
    q: [Vec3; 2],
    r: [Vec3; 2],
    s: [Vec3; 2],
    gap: f64,
) -> Option<f64> {
    let dist = |t: f64| {
        let at = |x: &[Vec3; 2]| x[0] + (x[1] - x[0]) * t;
        let (pt, qt, rt, st) = (at(&p), at(&q), at(&r), at(&s));
        let (u, v) = closest_segment_segment(&pt, &qt, &rt, &st);
        ((pt + (qt - pt) * u) - (rt + (st - rt) * v)).norm()
    };
    earliest([p, q, r, s], 2, gap, || false, dist)
}

/// Earliest candidate time at which `dist` falls below the effective gap. The candidates are
/// the roots of the coplanarity cubic of the four moving points `x[1] - x[0]`, `x[2] - x[0]`,
/// `x[3] - x[0]`, its critical points, and the end of the step; when the cubic vanishes
/// identically (motion within one plane) a few samples are tested as well. Points
/// `x[..split]` are one feature, `x[split..]` the other: over the step, the distance of the
/// features shrinks at most by the largest relative travel `|dx_i - dx_j|` of a point of each
/// (the closest points are convex combinations), so pairs farther apart than that are
/// dismissed after one distance evaluation (most candidate pairs of the broad phase, also
/// when the whole cloth moves fast). The effective gap is `gap`, or the smaller of it and half
/// the start distance unless `apart()` says the features are [`Along::Apart`] (asked only for
/// pairs that start beyond `gap` and may come within it).
fn earliest(
    x: [[Vec3; 2]; 4],
    split: usize,
    gap: f64,
    apart: impl FnOnce() -> bool,
    dist: impl Fn(f64) -> f64,
) -> Option<f64> {
    let d0 = dist(0.0);
    if !(gap.min(0.5 * d0) > 0.0) {
        return None;
    }
    let mut closing = 0.0f64;
    for i in &x[..split] {
        for j in &x[split..] {
            closing = closing.max(((i[1] - i[0]) - (j[1] - j[0])).norm());
        }
    }
    // Another layer that starts beyond the gap may not end within it, however near it starts:
    // with half the start distance as the limit, a layer pressed from just beyond the gap to
    // just within it (penalty springs losing, as in a twisting tube) would end the step
    // inside the gap unnoticed.
    let limit = if d0 > gap && d0 - closing < gap && apart() {
        gap
    } else {
        gap.min(0.5 * d0)
    };
    if d0 - closing >= limit {
        return None;
    }
    let coeffs = coplanarity_cubic(&x);
    let scale = x
        .iter()
        .flat_map(|q| [(q[0] - x[0][0]).norm(), (q[1] - x[0][1]).norm()])
        .fold(0.0, f64::max)
        .max((x[0][1] - x[0][0]).norm());
    let mut times = Vec::with_capacity(8);
    cubic_roots(coeffs, &mut times);
    if coeffs.iter().all(|c| c.abs() <= 1e-12 * scale.powi(3)) {
        times.extend([0.25, 0.5, 0.75]);
    }
    times.push(1.0);
    times.sort_by(f64::total_cmp);
    times.into_iter().find(|&t| dist(t) < limit)
}

/// Coefficients `[c0, c1, c2, c3]` of det(e1(t), e2(t), e3(t)) with `e_k = x_k - x_0` linear in t.
fn coplanarity_cubic(x: &[[Vec3; 2]; 4]) -> [f64; 4] {
    let u: [Vec3; 3] = [1, 2, 3].map(|k| x[k][0] - x[0][0]);
    let w: [Vec3; 3] = [1, 2, 3].map(|k| (x[k][1] - x[0][1]) - (x[k][0] - x[0][0]));
    let det = |a: &Vec3, b: &Vec3, c: &Vec3| a.dot(&b.cross(c));
    [
        det(&u[0], &u[1], &u[2]),
        det(&w[0], &u[1], &u[2]) + det(&u[0], &w[1], &u[2]) + det(&u[0], &u[1], &w[2]),
        det(&u[0], &w[1], &w[2]) + det(&w[0], &u[1], &w[2]) + det(&w[0], &w[1], &u[2]),
        det(&w[0], &w[1], &w[2]),
    ]
}

/// Pushes the roots in [0, 1] of `c0 + c1 t + c2 t^2 + c3 t^3` and its critical points there.
fn cubic_roots(c: [f64; 4], out: &mut Vec<f64>) {
    let f = |t: f64| c[0] + t * (c[1] + t * (c[2] + t * c[3]));
    // Critical points: 3 c3 t^2 + 2 c2 t + c1 = 0.
    let mut cuts = vec![0.0];
    let (qa, qb, qc) = (3.0 * c[3], 2.0 * c[2], c[1]);
    if qa != 0.0 {
        let disc = qb * qb - 4.0 * qa * qc;
        if disc >= 0.0 {
            let sq = disc.sqrt();
            // Numerically stable pair of roots.
            let q = -0.5 * (qb + qb.signum() * sq);
            let mut r = [q / qa, if q != 0.0 { qc / q } else { -qb / (2.0 * qa) }];
            r.sort_by(f64::total_cmp);
            cuts.extend(r.into_iter().filter(|t| *t > 0.0 && *t < 1.0));
        }
    } else if qb != 0.0 {
        let t = -qc / qb;
        if t > 0.0 && t < 1.0 {
            cuts.push(t);
        }
    }
    cuts.push(1.0);
    out.extend(cuts[1..cuts.len() - 1].iter().copied());
    for w in cuts.windows(2) {
        let (mut lo, mut hi) = (w[0], w[1]);
        let (flo, fhi) = (f(lo), f(hi));
        if flo == 0.0 {
            out.push(lo);
            continue;
        }
        if flo.signum() == fhi.signum() {
            continue;
        }
        for _ in 0..BISECTIONS {
            let mid = 0.5 * (lo + hi);
            if f(mid).signum() == flo.signum() {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        out.push(hi);
    }
}

/// CCD of a cloth against itself over a step: vertex-triangle and edge-edge pairs that share no
/// vertex (once welded vertices are one, [`SelfCcd::set_welded`]), found through a hierarchy
/// over the triangles' swept boxes (built on first use and refitted afterwards, the topology
/// never changes). The boxes are swept in the frame that moves with the cloth's mean
/// displacement over the step: separations do not change under a common translation, and a
/// cloth that flies or falls as a whole then sweeps boxes the size of its own deformation.
#[derive(Clone, Debug)]
pub struct SelfCcd {
    topo: Topology,
    bvh: Bvh,
    boxes: Vec<Aabb>,
    /// Swept box of every edge over the last checked step, inflated by half the search
    /// radius (the larger of the gap and the near radius).
    edge_boxes: Vec<Aabb>,
    /// Hierarchy over `edge_boxes` (edge-edge candidates).
    edge_bvh: Bvh,
    /// Distance (m) within which candidate pairs at the end positions are recorded (0: none).
    near_radius: f64,
    near: NearPairs,
    /// End positions less the common displacement (scratch for the swept boxes).
    x1c: Vec<Vec3>,
    /// Per welded class (its smallest vertex), the classes an edge away, sorted: CSR offsets
    /// and entries ([`Along`]).
    adjacent_start: Vec<usize>,
    adjacent: Vec<usize>,
}

impl SelfCcd {
    /// Prepares CCD for `triangles` over `n_vertices` vertices.
    pub fn new(n_vertices: usize, triangles: &[[usize; 3]]) -> Result<Self, CollideError> {
        let mut ccd = Self {
            topo: Topology::new(n_vertices, triangles)?,
            bvh: Bvh::default(),
            boxes: vec![Aabb::empty(); triangles.len()],
            edge_boxes: Vec::new(),
            edge_bvh: Bvh::default(),
            near_radius: 0.0,
            near: NearPairs::default(),
            x1c: Vec::new(),
            adjacent_start: Vec::new(),
            adjacent: Vec::new(),
        };
        ccd.find_adjacent();
        Ok(ccd)
    }

    /// The classes an edge away from each class, welded vertices as one.
    fn find_adjacent(&mut self) {
        let n = self.topo.n_vertices;
        let mut pairs: Vec<[usize; 2]> = (self.topo.edges.iter())
            .map(|&[a, b]| [self.topo.class(a), self.topo.class(b)])
            .filter(|[a, b]| a != b)
            .flat_map(|[a, b]| [[a, b], [b, a]])
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        self.adjacent_start.clear();
        self.adjacent_start.resize(n + 1, 0);
        for &[a, _] in &pairs {
            self.adjacent_start[a + 1] += 1;
        }
        for i in 0..n {
            self.adjacent_start[i + 1] += self.adjacent_start[i];
        }
        self.adjacent.clear();
        self.adjacent.extend(pairs.iter().map(|&[_, b]| b));
    }

    /// Whether no corner of `tri` is an edge away from (or one with) vertex `v`, welded
    /// vertices as one.
    fn apart(&self, v: usize, tri: [usize; 3]) -> bool {
        let cv = self.topo.class(v);
        let near = &self.adjacent[self.adjacent_start[cv]..self.adjacent_start[cv + 1]];
        tri.iter().all(|&c| {
            let cc = self.topo.class(c);
            cc != cv && near.binary_search(&cc).is_err()
        })
    }

    /// Makes every [`SelfCcd::impacts`] also record the feature pairs within `radius` (m) of
    /// each other at its end positions ([`SelfCcd::near_pairs`]), for the proximity search of
    /// the next step. The search then uses boxes inflated by the larger of the gap and
    /// `radius`. A radius that is not finite and positive records nothing.
    pub fn with_near_radius(mut self, radius: f64) -> Self {
        self.near_radius = if radius.is_finite() && radius > 0.0 {
            radius
        } else {
            0.0
        };
        self
    }

    /// Treats each pair of `pairs` (vertices sewn together, e.g. garment stitches) as one
    /// vertex, as [`crate::SelfCollision::set_welded`] does for proximities: the two sides of
    /// a closing or closed seam touch by design and are not impacts (otherwise every step of a
    /// sewn garment would find them and build impact zones along its seams). Pairs with a
    /// vertex out of range are ignored; an empty list welds nothing.
    pub fn set_welded(&mut self, pairs: &[[usize; 2]]) {
        self.topo.set_welded(pairs);
        self.find_adjacent();
    }

    /// Every colliding pair of the motion from `x0` to `x1` (m), with `gap` (m) the distance
    /// counted as contact, into `out` (cleared first; vertex-triangle pairs by vertex, then
    /// edge-edge pairs by edge, the same order for any thread count). Non-finite positions
    /// take part in nothing.
    pub fn impacts(
        &mut self,
        x0: &[Vec3],
        x1: &[Vec3],
        gap: f64,
        out: &mut Vec<Impact>,
    ) -> Result<(), CollideError> {
        out.clear();
        for x in [x0, x1] {
            if x.len() != self.topo.n_vertices {
                return Err(CollideError::WrongLength {
                    expected: self.topo.n_vertices,
                    found: x.len(),
                });
            }
        }
        // Boxes are searched with the larger of the gap and the near radius; the narrow
        // phase first checks the boxes with the gap alone.
        let r = gap.max(self.near_radius);
        self.sweep(x0, x1, r);
        let (topo, x1c) = (&self.topo, &self.x1c);
        let vt_pairs =
            topo.vertex_triangle_pairs(&self.bvh, |v| Some(Aabb::from_points([&x0[v], &x1c[v]])));
        // Edge pairs whose swept boxes come within r: the edge hierarchy against itself.
        let ee_pairs = (self.edge_bvh).overlapping_pairs(|e, f| topo.edges_apart(e, f));
        let step = Step { x0, x1, gap, r };
        let vt = self.vertex_triangle_impacts(&vt_pairs, &step);
        let ee = self.edge_edge_impacts(&ee_pairs, &step);
        out.extend(vt.into_iter().flatten());
        out.extend(ee.into_iter().flatten());
        self.topo.drop_welded(out, |i| {
            (&i.vertices, matches!(i.kind, ImpactKind::VertexTriangle))
        });
        if self.near_radius > 0.0 {
            self.near.x.clear();
            self.near.x.extend_from_slice(x1);
            self.near.radius = self.near_radius;
            self.near.n_edges = self.topo.edges.len();
            self.near.vt = vt_pairs;
            self.near.ee = ee_pairs;
        }
        Ok(())
    }

    /// Sweeps the triangle and edge boxes of the motion from `x0` to `x1`, inflated by `r`
    /// (edges by `r / 2`), and fits the hierarchies to them. The boxes are swept in the frame
    /// that moves with the cloth's common displacement: a pair's separation is the same in any
    /// translated frame, and there a sheet flying or falling as a whole sweeps small boxes
    /// instead of long ones.
    fn sweep(&mut self, x0: &[Vec3], x1: &[Vec3], r: f64) {
        let shift = common_displacement(x0, x1);
        self.x1c.clear();
        self.x1c.extend(x1.iter().map(|p| p - shift));
        let x1c = &self.x1c;
        // Subtracting the shift rounds each end position by about an ulp of its magnitude.
        let slack = 4.0 * f64::EPSILON * (shift.amax() + max_abs(x1));
        for (b, t) in self.boxes.iter_mut().zip(&self.topo.triangles) {
            *b = Aabb::from_points(t.iter().flat_map(|&i| [&x0[i], &x1c[i]])).inflated(r + slack);
        }
        self.bvh.fit(&self.boxes);
        self.edge_boxes.clear();
        self.edge_boxes
            .extend(self.topo.edges.iter().map(|&[a, b]| {
                Aabb::from_points([&x0[a], &x1c[a], &x0[b], &x1c[b]]).inflated(0.5 * r + slack)
            }));
        self.edge_bvh.fit(&self.edge_boxes);
    }

    /// The vertex-triangle impacts of the candidate (vertex, triangle) `pairs` over `step`
    /// (boxes swept by [`SelfCcd::sweep`]): parallel over fixed chunks of pairs, in pair order.
    fn vertex_triangle_impacts(&self, pairs: &[(u32, u32)], step: &Step) -> Vec<Vec<Impact>> {
        let Step { x0, x1, gap, r } = *step;
        let (topo, boxes, x1c) = (&self.topo, &self.boxes, &self.x1c);
        let m = |i: usize| [x0[i], x1[i]];
        pairs
            .par_chunks(4 * CHUNK)
            .map(|pairs| {
                let mut found = Vec::new();
                for &(v, t) in pairs {
                    let (v, tri) = (v as usize, topo.triangles[t as usize]);
                    let q = Aabb::from_points([&x0[v], &x1c[v]]);
                    if !boxes[t as usize].inflated(gap - r).overlaps(&q) {
                        continue;
                    }
                    let apart = || self.apart(v, tri);
                    let hit = vt_impact(m(v), m(tri[0]), m(tri[1]), m(tri[2]), gap, apart);
                    if let Some(t) = hit {
                        found.push(Impact {
                            kind: ImpactKind::VertexTriangle,
                            vertices: [v, tri[0], tri[1], tri[2]],
                            t,
                        });
                    }
                }
                found
            })
            .collect()
    }

    /// The edge-edge impacts of the candidate (edge, edge) `pairs` over `step` (boxes swept by
    /// [`SelfCcd::sweep`]): parallel over fixed chunks of pairs, in pair order.
    fn edge_edge_impacts(&self, pairs: &[(u32, u32)], step: &Step) -> Vec<Vec<Impact>> {
        let Step { x0, x1, gap, r } = *step;
        let (topo, edge_boxes) = (&self.topo, &self.edge_boxes);
        let m = |i: usize| [x0[i], x1[i]];
        pairs
            .par_chunks(4 * CHUNK)
            .map(|pairs| {
                let mut found = Vec::new();
                for &(e, f) in pairs {
                    let (e, f) = (e as usize, f as usize);
                    if !edge_boxes[e].inflated(gap - r).overlaps(&edge_boxes[f]) {
                        continue;
                    }
                    let ([a, b], [c, d]) = (topo.edges[e], topo.edges[f]);
                    if let Some(t) = edge_edge_impact(m(a), m(b), m(c), m(d), gap) {
                        found.push(Impact {
                            kind: ImpactKind::EdgeEdge,
                            vertices: [a, b, c, d],
                            t,
                        });
                    }
                }
                found
            })
            .collect()
    }

    /// The candidate pairs of the last [`SelfCcd::impacts`] near its end positions, when a
    /// near radius is set ([`SelfCcd::with_near_radius`]).
    pub fn near_pairs(&self) -> Option<&NearPairs> {
        (self.near.radius > 0.0).then_some(&self.near)
    }
}

/// The motion of one [`SelfCcd::impacts`]: start and end positions (m), the gap (m) counted
/// as contact and the radius (m) the boxes were inflated by.
#[derive(Clone, Copy)]
struct Step<'a> {
    x0: &'a [Vec3],
    x1: &'a [Vec3],
    gap: f64,
    r: f64,
}

/// The mean displacement from `x0` to `x1` over the vertices whose positions are finite (zero
/// when none is), summed in vertex order.
fn common_displacement(x0: &[Vec3], x1: &[Vec3]) -> Vec3 {
    let (mut sum, mut n) = (Vec3::zeros(), 0usize);
    for (a, b) in x0.iter().zip(x1) {
        let d = b - a;
        if d.iter().all(|c| c.is_finite()) {
            sum += d;
            n += 1;
        }
    }
    if n == 0 {
        Vec3::zeros()
    } else {
        sum / n as f64
    }
}

/// The largest finite coordinate magnitude of `x` (0 when there is none).
fn max_abs(x: &[Vec3]) -> f64 {
    x.iter()
        .flat_map(|p| p.iter())
        .filter(|c| c.is_finite())
        .fold(0.0, |m: f64, c| m.max(c.abs()))
}

/// Candidate feature pairs of a cloth near given positions, recorded by [`SelfCcd::impacts`]
/// for its end positions: every vertex-triangle and edge-edge pair that shares no vertex and
/// comes within `radius` there is among them (with others farther apart). A proximity search
/// at the same positions ([`crate::SelfCollision::try_detect_near`]) starts from them instead
/// of searching again: the end of an accepted step is the start of the next.
#[derive(Clone, Debug, Default)]
pub struct NearPairs {
    /// The positions (m) the pairs are for.
    pub(crate) x: Vec<Vec3>,
    /// Distance (m) within which every pair is listed.
    pub(crate) radius: f64,
    /// Edge count of the mesh the pairs index.
    pub(crate) n_edges: usize,
    /// (vertex, triangle) pairs, sorted.
    pub(crate) vt: Vec<(u32, u32)>,
    /// (edge, edge) pairs with the first below the second, sorted.
    pub(crate) ee: Vec<(u32, u32)>,
}

impl NearPairs {
    /// Whether the pairs hold every pair within `radius` (m) at positions `x` of a mesh with
    /// `n_edges` edges.
    pub(crate) fn covers(&self, x: &[Vec3], radius: f64, n_edges: usize) -> bool {
        self.radius >= radius && self.n_edges == n_edges && self.x == x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selfcontact::test_cloth::{crumpled, jittered};
    use crate::selfcontact::topology::{mesh_edges, sorted};
    use Along::{Adjacent, Apart};

    fn still(p: Vec3) -> [Vec3; 2] {
        [p, p]
    }

    fn tri() -> [[Vec3; 2]; 3] {
        [
            still(Vec3::new(0.0, 0.0, 0.0)),
            still(Vec3::new(1.0, 0.0, 0.0)),
            still(Vec3::new(0.0, 1.0, 0.0)),
        ]
    }

    #[test]
    fn vertex_through_triangle_is_found_at_the_crossing_time() {
        let [a, b, c] = tri();
        let p = [Vec3::new(0.2, 0.2, 1.0), Vec3::new(0.2, 0.2, -3.0)];
        let t = vertex_triangle_impact(p, a, b, c, 1e-6, Apart).expect("crossing");
        assert!((t - 0.25).abs() < 1e-9, "t = {t}");
    }

    #[test]
    fn vertex_passing_beside_the_triangle_is_not_an_impact() {
        let [a, b, c] = tri();
        let p = [Vec3::new(0.8, 0.8, 1.0), Vec3::new(0.8, 0.8, -1.0)];
        assert_eq!(vertex_triangle_impact(p, a, b, c, 1e-6, Apart), None);
    }

    #[test]
    fn moving_triangle_sweeps_over_a_still_vertex() {
        // The triangle moves down by 2 while the vertex sits 1 below it: crossing at t = 0.5.
        let [a, b, c] = tri().map(|q| [q[0], q[0] - Vec3::new(0.0, 0.0, 2.0)]);
        let p = still(Vec3::new(0.1, 0.1, -1.0));
        let t = vertex_triangle_impact(p, a, b, c, 1e-6, Apart).expect("crossing");
        assert!((t - 0.5).abs() < 1e-9, "t = {t}");
    }

    #[test]
    fn moving_corner_crosses_a_vertex_and_a_collapse_beside_one_does_not() {
        let a = still(Vec3::new(0.0, 0.0, 0.0));
        let b = still(Vec3::new(1.0, 0.0, 0.0));
        let c = [Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, -1.0, 0.0)];
        let p = still(Vec3::new(0.1, 0.0, 0.0) + Vec3::new(0.0, 0.0, 0.3));
        // At t = 0.5 corner c has collapsed onto the x axis; the triangle passes through z = 0
        // only, never through the vertex at z = 0.3: no impact.
        assert_eq!(vertex_triangle_impact(p, a, b, c, 1e-6, Apart), None);
        // A corner moving through z: c goes from (0,1,-1) to (0,1,1), the vertex at (0.2,0.5,0)
        // is crossed at t = 0.5.
        let c = [Vec3::new(0.0, 1.0, -1.0), Vec3::new(0.0, 1.0, 1.0)];
        let p = still(Vec3::new(0.2, 0.5, 0.0));
        let t = vertex_triangle_impact(p, a, b, c, 1e-6, Apart).expect("crossing");
        assert!((t - 0.5).abs() < 1e-9, "t = {t}");
    }

    #[test]
    fn edges_crossing_are_found_and_parallel_ones_are_not() {
        let p = still(Vec3::new(-1.0, 0.0, 0.0));
        let q = still(Vec3::new(1.0, 0.0, 0.0));
        let r = [Vec3::new(0.0, -1.0, 1.0), Vec3::new(0.0, -1.0, -1.0)];
        let s = [Vec3::new(0.0, 1.0, 1.0), Vec3::new(0.0, 1.0, -1.0)];
        let t = edge_edge_impact(p, q, r, s, 1e-6).expect("crossing");
        assert!((t - 0.5).abs() < 1e-9, "t = {t}");
        // Moved beyond the first edge's end: the lines cross, the segments do not.
        let shift = Vec3::new(3.0, 0.0, 0.0);
        let (r2, s2) = (r.map(|x| x + shift), s.map(|x| x + shift));
        assert_eq!(edge_edge_impact(p, q, r2, s2, 1e-6), None);
        // A parallel edge passing above stays 0.5 away.
        let r3 = still(Vec3::new(-1.0, 0.0, 0.5));
        let s3 = [Vec3::new(1.0, 0.0, 0.5), Vec3::new(1.0, 1.0, 0.5)];
        assert_eq!(edge_edge_impact(p, q, r3, s3, 1e-6), None);
    }

    #[test]
    fn ending_within_the_gap_is_an_impact_and_starting_in_contact_is_not() {
        let [a, b, c] = tri();
        let p = [Vec3::new(0.2, 0.2, 1.0), Vec3::new(0.2, 0.2, 1e-4)];
        assert_eq!(vertex_triangle_impact(p, a, b, c, 1e-3, Apart), Some(1.0));
        // Starts 1e-4 away and slides along the face: no impact.
        let p = [Vec3::new(0.2, 0.2, 1e-4), Vec3::new(0.3, 0.2, 1e-4)];
        assert_eq!(vertex_triangle_impact(p, a, b, c, 1e-3, Apart), None);
        // Starts within the gap and comes closer, but not to half its start distance: none;
        // to less than half: an impact.
        let p = [Vec3::new(0.2, 0.2, 8e-4), Vec3::new(0.2, 0.2, 5e-4)];
        assert_eq!(vertex_triangle_impact(p, a, b, c, 1e-3, Apart), None);
        let p = [Vec3::new(0.2, 0.2, 8e-4), Vec3::new(0.2, 0.2, 3e-4)];
        assert_eq!(vertex_triangle_impact(p, a, b, c, 1e-3, Apart), Some(1.0));
        // Starts beyond the gap, however near it, and ends within it: an impact for another
        // layer; for a neighbour along the cloth only within half its start distance.
        for z0 in [1.01e-3, 1.5e-3, 1.99e-3] {
            let p = [Vec3::new(0.2, 0.2, z0), Vec3::new(0.2, 0.2, 0.9e-3)];
            assert_eq!(vertex_triangle_impact(p, a, b, c, 1e-3, Apart), Some(1.0));
            let p = [Vec3::new(0.2, 0.2, z0), Vec3::new(0.2, 0.2, 0.55 * z0)];
            assert_eq!(vertex_triangle_impact(p, a, b, c, 1e-3, Adjacent), None);
            let p = [Vec3::new(0.2, 0.2, z0), Vec3::new(0.2, 0.2, 0.45 * z0)];
            assert_eq!(
                vertex_triangle_impact(p, a, b, c, 1e-3, Adjacent),
                Some(1.0)
            );
        }
        // Beyond twice the gap the two agree.
        let p = [Vec3::new(0.2, 0.2, 2.5e-3), Vec3::new(0.2, 0.2, 0.9e-3)];
        assert_eq!(
            vertex_triangle_impact(p, a, b, c, 1e-3, Adjacent),
            Some(1.0)
        );
    }

    #[test]
    fn only_a_triangle_with_no_corner_an_edge_away_is_apart() {
        // A strip of six triangles over vertices 0..8 (even below, odd above).
        let tris = [
            [0, 2, 1],
            [2, 3, 1],
            [2, 4, 3],
            [4, 5, 3],
            [4, 6, 5],
            [6, 7, 5],
        ];
        let mut ccd = SelfCcd::new(8, &tris).unwrap();
        assert!(!ccd.apart(0, tris[1]) && !ccd.apart(0, tris[2]) && !ccd.apart(1, tris[3]));
        assert!(ccd.apart(0, tris[3]) && ccd.apart(0, tris[5]) && ccd.apart(1, tris[5]));
        // Sewn end to start (6 onto 0): what is next to 6 is next to 0.
        ccd.set_welded(&[[6, 0]]);
        assert!(!ccd.apart(0, tris[3]) && !ccd.apart(1, tris[5]));
        ccd.set_welded(&[]);
        assert!(ccd.apart(0, tris[3]) && ccd.apart(1, tris[5]));
    }

    #[test]
    fn self_ccd_finds_a_sheet_falling_through_another() {
        // Two unit squares (two triangles each), the upper one falling through the lower.
        let sq = |z: f64| {
            [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)].map(|(x, y)| Vec3::new(x, y, z))
        };
        let mut x0: Vec<Vec3> = sq(0.0).to_vec();
        x0.extend(sq(0.5));
        let mut x1 = x0.clone();
        for p in &mut x1[4..] {
            p.z = -0.5;
            p.x += 0.3;
        }
        let tris = [[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]];
        let mut ccd = SelfCcd::new(8, &tris).unwrap();
        let mut out = Vec::new();
        ccd.impacts(&x0, &x1, 1e-6, &mut out).unwrap();
        assert!(!out.is_empty());
        assert!(out.iter().all(|i| (i.t - 0.5).abs() < 1e-9));
        // Stopped short of the lower sheet: nothing.
        for p in &mut x1[4..] {
            p.z = 0.1;
        }
        ccd.impacts(&x0, &x1, 1e-6, &mut out).unwrap();
        assert!(out.is_empty());
        assert!(ccd.impacts(&x0, &x1[1..], 1e-6, &mut out).is_err());
    }

    #[test]
    fn welded_vertices_are_neighbours_and_their_features_are_not_impacts() {
        // Triangle B's corner 3 closes onto A's corner 1 and overshoots through A (a seam
        // closing): an impact, unless 1 and 3 are sewn together, which makes A and B
        // neighbours. A third, unrelated weld changes nothing.
        let x0 = vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(0.9, 0.05, 0.01),
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(2.0, 1.0, 0.0),
        ];
        let mut x1 = x0.clone();
        x1[3].z = -0.01;
        let tris = [[0, 1, 2], [3, 4, 5]];
        let mut ccd = SelfCcd::new(6, &tris).unwrap();
        let mut out = Vec::new();
        ccd.impacts(&x0, &x1, 1e-6, &mut out).unwrap();
        assert!(!out.is_empty());
        ccd.set_welded(&[[4, 5]]);
        ccd.impacts(&x0, &x1, 1e-6, &mut out).unwrap();
        assert!(!out.is_empty());
        ccd.set_welded(&[[3, 1]]);
        ccd.impacts(&x0, &x1, 1e-6, &mut out).unwrap();
        assert!(out.is_empty(), "{out:?}");
        ccd.set_welded(&[]);
        ccd.impacts(&x0, &x1, 1e-6, &mut out).unwrap();
        assert!(!out.is_empty());
    }

    /// CCD of a crumpled grid whose vertices each move differently while the whole grid
    /// travels farther than its own size finds exactly the impacts of testing every
    /// vertex-triangle and edge-edge pair that shares no vertex.
    #[test]
    fn ccd_impacts_are_those_of_every_feature_pair() {
        let (mesh, x0) = crumpled(11, 0.1, Vec3::repeat(0.03), 0x9e37_79b9_7f4a_7c15);
        let shift = Vec3::new(-0.4, 0.25, 0.15);
        let x1: Vec<Vec3> = (jittered(&x0, Vec3::repeat(0.03), 0xd1b5_4a32_d192_ed03).iter())
            .map(|p| p + shift)
            .collect();
        let gap = 5e-4;
        let m = |i: usize| [x0[i], x1[i]];
        let edges = mesh_edges(mesh.triangles());
        let mut want = Vec::new();
        for v in 0..x0.len() {
            for t in mesh.triangles() {
                if t.contains(&v) {
                    continue;
                }
                let along = if t.iter().any(|&c| edges.contains(&sorted(v, c))) {
                    Along::Adjacent
                } else {
                    Along::Apart
                };
                let (a, b, c) = (m(t[0]), m(t[1]), m(t[2]));
                if let Some(hit) = vertex_triangle_impact(m(v), a, b, c, gap, along) {
                    want.push((ImpactKind::VertexTriangle, [v, t[0], t[1], t[2]], hit));
                }
            }
        }
        for (i, &[a, b]) in edges.iter().enumerate() {
            for &[c, d] in &edges[i + 1..] {
                if a == c || a == d || b == c || b == d {
                    continue;
                }
                if let Some(hit) = edge_edge_impact(m(a), m(b), m(c), m(d), gap) {
                    want.push((ImpactKind::EdgeEdge, [a, b, c, d], hit));
                }
            }
        }
        let kinds = |k| want.iter().filter(|w| w.0 == k).count();
        assert!(kinds(ImpactKind::VertexTriangle) > 5 && kinds(ImpactKind::EdgeEdge) > 5);
        let mut ccd = SelfCcd::new(mesh.num_vertices(), mesh.triangles()).expect("ccd");
        let mut got: Vec<Impact> = Vec::new();
        ccd.impacts(&x0, &x1, gap, &mut got).expect("impacts");
        let key = |k: ImpactKind, v: [usize; 4]| (k == ImpactKind::EdgeEdge, v);
        let mut got: Vec<_> = got.iter().map(|i| (key(i.kind, i.vertices), i.t)).collect();
        let mut want: Vec<_> = want.iter().map(|w| (key(w.0, w.1), w.2)).collect();
        got.sort_by_key(|a| a.0);
        want.sort_by_key(|a| a.0);
        assert_eq!(got, want);
    }
}
