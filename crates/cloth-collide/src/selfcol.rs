//! Cloth-cloth proximity (vertex-triangle and edge-edge within a thickness) with damped
//! penalty springs, and a triangle-triangle intersection count for statistics.

use cloth_mesh::ClothMesh;
use nalgebra::Matrix3;
use rayon::prelude::*;

use crate::Vec3;
use crate::bvh::{Aabb, Bvh};
use crate::ccd::NearPairs;
use crate::error::CollideError;
use crate::geometry::{
    TriFeature, any_perpendicular, closest_on_triangle, closest_segment_segment, triangle_normal,
    triangles_intersect,
};

/// Which pair of features is close.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProximityKind {
    /// `vertices[0]` is near triangle `(vertices[1], vertices[2], vertices[3])`.
    VertexTriangle,
    /// Edge `(vertices[0], vertices[1])` is near edge `(vertices[2], vertices[3])`.
    EdgeEdge,
}

/// One cloth-cloth proximity: the separation vector r = `sum_k weights[k] * x[vertices[k]]`
/// (from the second feature's closest point to the first's) and the unit direction `normal`
/// are frozen at detection; the penalty acts on the gap g = normal . r.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Proximity {
    /// Kind of feature pair.
    pub kind: ProximityKind,
    /// The four cloth vertices of the stencil.
    pub vertices: [usize; 4],
    /// Stencil weights: VT `[1, -b0, -b1, -b2]` (barycentrics b); EE `[1-s, s, -(1-t), -t]`.
    pub weights: [f64; 4],
    /// Unit direction of separation at detection (from the second feature to the first).
    pub normal: Vec3,
    /// Distance (m) between the features at detection, in [0, thickness).
    pub distance: f64,
}

/// How many times stiffer the penalty spring is inside [`INNER_GAP`] (see [`SelfCollision`]).
pub const INNER_STIFFENING: f64 = 16.0;
/// The gap, as a fraction of the thickness, below which the penalty spring stiffens.
pub const INNER_GAP: f64 = 0.6;

/// How many vertices/edges each parallel task handles (fixed, so results are deterministic).
const CHUNK: usize = 256;
/// Edge-edge proximities are kept only when both closest points are interior to their edges by
/// this parameter margin; endpoint cases are vertex-triangle proximities.
const EDGE_INTERIOR: f64 = 1e-6;

/// Cloth self-collision: a bounding volume hierarchy over the cloth triangles (built once,
/// refitted at every [`SelfCollision::detect`]), vertex-triangle and edge-edge proximities
/// within `thickness` that skip topological neighbours (pairs sharing a vertex), and the
/// paper's response: damped penalty springs (Baraff & Witkin 1998, section 6).
///
/// Penalty per proximity with gap g = n . r (n, stencil weights a_k frozen at detection),
/// active while g < thickness t:
/// energy E = k/2 (g - t)^2 + (m - 1) k/2 min(0, g - g_in)^2; force
/// f_i = -E'(g) a_i n - c (n . sum_j a_j v_j) a_i n. The spring is the paper's linear one down
/// to g_in = [`INNER_GAP`] t and m = [`INNER_STIFFENING`] times stiffer below it, so layers
/// pressed together stay about half the thickness apart or more (at the default 500 N/m and
/// t = 4 mm the push is 0.8 N at 0.6 t, 4 N at t/2 and 12 N at t/4; with the paper's linear
/// spring alone a wrung tube's layers closed to 1.5 mm, under the t/2 that issue 15 asks).
/// Its Jacobians are exact and symmetric positive semidefinite in -df/dx and -df/dv:
/// df_i/dx_j = -E''(g) a_i a_j n n^T (E'' = k, or m k below g_in),
/// df_i/dv_j = -c a_i a_j n n^T.
///
/// Friction between layers ([`SelfCollision::with_friction`], [`SelfCollision::friction`]) is
/// Coulomb friction on each pressed proximity, with N = -k (g - thickness) - c n . v_r its
/// normal force at the step's start and v_t the tangential part of the relative velocity
/// v_r = sum_j a_j v_j. Static (|v_t| <= v_s, the slip speed): an implicit tangential damper of
/// rate mu N / v_s (df_i/dv_j = -a_i a_j rate (I - n n^T)), which holds against any drive below
/// mu N and lets the layers creep at less than v_s; a larger drive pushes the slip past v_s
/// within a step. Kinetic (|v_t| > v_s): the force mu N against the slip (capped at the
/// impulse that stops the slip in one step for the pair's effective mass, so it never
/// reverses a slip), with the exact Jacobian of its direction across the slip.
#[derive(Clone, Debug)]
pub struct SelfCollision {
    topo: Topology,
    thickness: f64,
    stiffness: f64,
    damping: f64,
    friction: f64,
    slip_speed: f64,
    bvh: Bvh,
    boxes: Vec<Aabb>,
    /// Box of every edge at the last detection, inflated by half the thickness.
    edge_boxes: Vec<Aabb>,
    /// Hierarchy over `edge_boxes` (edge-edge candidates).
    edge_bvh: Bvh,
    proximities: Vec<Proximity>,
}

impl SelfCollision {
    /// Prepares self-collision for `mesh`: `thickness` (m, > 0) is the distance below which
    /// features repel, `stiffness` (N/m, >= 0) the penalty spring constant, `damping`
    /// (N*s/m, >= 0) the dashpot constant along the separation direction.
    pub fn new(
        mesh: &ClothMesh,
        thickness: f64,
        stiffness: f64,
        damping: f64,
    ) -> Result<Self, CollideError> {
        Self::from_triangles(
            mesh.num_vertices(),
            mesh.triangles(),
            thickness,
            stiffness,
            damping,
        )
    }

    /// Same as [`SelfCollision::new`] from raw triangles over `n_vertices` vertices.
    pub fn from_triangles(
        n_vertices: usize,
        triangles: &[[usize; 3]],
        thickness: f64,
        stiffness: f64,
        damping: f64,
    ) -> Result<Self, CollideError> {
        let bad = |what, value, expected| {
            Err(CollideError::BadParameter {
                what,
                value,
                expected,
            })
        };
        if !(thickness.is_finite() && thickness > 0.0) {
            return bad("thickness", thickness, "finite, > 0 m");
        }
        if !(stiffness.is_finite() && stiffness >= 0.0) {
            return bad("stiffness", stiffness, "finite, >= 0 N/m");
        }
        if !(damping.is_finite() && damping >= 0.0) {
            return bad("damping", damping, "finite, >= 0 N*s/m");
        }
        Ok(SelfCollision {
            topo: Topology::new(n_vertices, triangles)?,
            thickness,
            stiffness,
            damping,
            friction: 0.0,
            slip_speed: 1e-3,
            bvh: Bvh::default(),
            boxes: vec![Aabb::empty(); triangles.len()],
            edge_boxes: Vec::new(),
            edge_bvh: Bvh::default(),
            proximities: Vec::new(),
        })
    }

    /// Sets the Coulomb coefficient `mu` (>= 0, static and kinetic) of friction between layers
    /// and the slip speed `slip_speed` (m/s, > 0) below which friction acts as a stiff damper
    /// (static friction); see the type's docs. Without it there is no friction.
    pub fn with_friction(mut self, mu: f64, slip_speed: f64) -> Result<Self, CollideError> {
        if !(mu.is_finite() && mu >= 0.0) {
            return Err(CollideError::BadParameter {
                what: "friction",
                value: mu,
                expected: "finite, >= 0",
            });
        }
        if !(slip_speed.is_finite() && slip_speed > 0.0) {
            return Err(CollideError::BadParameter {
                what: "slip speed",
                value: slip_speed,
                expected: "finite, > 0 m/s",
            });
        }
        self.friction = mu;
        self.slip_speed = slip_speed;
        Ok(self)
    }

    /// Detects proximities at positions `x` (m), refitting the hierarchy (parallel,
    /// deterministic order: vertex-triangle by vertex, then edge-edge by edge). If `x` does not
    /// have one position per vertex, no proximity is recorded (see [`SelfCollision::try_detect`]).
    pub fn detect(&mut self, x: &[Vec3]) {
        if self.try_detect(x).is_err() {
            self.proximities.clear();
        }
    }

    /// As [`SelfCollision::detect`], reporting a wrong position count as an error.
    pub fn try_detect(&mut self, x: &[Vec3]) -> Result<(), CollideError> {
        self.try_detect_near(x, None)
    }

    /// As [`SelfCollision::try_detect`], taking the candidate feature pairs from `near` when
    /// they were recorded at exactly these positions with a radius of at least the thickness
    /// (see [`crate::SelfCcd::with_near_radius`]): the search is then skipped. The proximities
    /// found are the same either way.
    pub fn try_detect_near(
        &mut self,
        x: &[Vec3],
        near: Option<&NearPairs>,
    ) -> Result<(), CollideError> {
        if x.len() != self.topo.n_vertices {
            return Err(CollideError::WrongLength {
                expected: self.topo.n_vertices,
                found: x.len(),
            });
        }
        let h = self.thickness;
        let near = near.filter(|n| n.covers(x, h, self.topo.edges.len()));
        // Boxes at x (edges inflated by h/2): the search's leaves, and the near pairs' cheap
        // test before the distance.
        for (b, t) in self.boxes.iter_mut().zip(&self.topo.triangles) {
            *b = Aabb::from_points(t.iter().map(|&i| &x[i]));
        }
        self.edge_boxes.clear();
        (self.edge_boxes).extend(
            (self.topo.edges.iter())
                .map(|&[a, b]| Aabb::from_points([&x[a], &x[b]]).inflated(0.5 * h)),
        );
        let searched;
        let (vt_pairs, ee_pairs) = match near {
            Some(n) => (&n.vt[..], &n.ee[..]),
            None => {
                searched = self.search(x);
                (&searched.0[..], &searched.1[..])
            }
        };
        let (topo, boxes, edge_boxes) = (&self.topo, &self.boxes, &self.edge_boxes);
        let vt: Vec<Vec<Proximity>> = (0..topo.n_vertices)
            .into_par_iter()
            .chunks(CHUNK)
            .map(|verts| {
                let mut out = Vec::new();
                let mut cand: Vec<(FeatureKey, usize, Proximity)> = Vec::new();
                let (first, last) = (verts[0] as u32, verts[verts.len() - 1] as u32);
                let lo = vt_pairs.partition_point(|p| p.0 < first);
                let hi = vt_pairs.partition_point(|p| p.0 <= last);
                for group in vt_pairs[lo..hi].chunk_by(|p, q| p.0 == q.0) {
                    let v = group[0].0 as usize;
                    cand.clear();
                    let q = Aabb {
                        min: x[v],
                        max: x[v],
                    }
                    .inflated(h);
                    for &(_, t) in group {
                        if !boxes[t as usize].overlaps(&q) {
                            continue;
                        }
                        let tri = topo.triangles[t as usize];
                        if let Some((key, prox)) = vertex_triangle(v, tri, x, h) {
                            cand.push((key, t as usize, prox));
                        }
                    }
                    // A vertex-vertex pair is found from both sides: keep it once (v < w).
                    cand.retain(|c| !matches!(c.0, FeatureKey::Vertex(w) if w < v));
                    cand.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
                    cand.dedup_by(|a, b| a.0 == b.0);
                    out.extend(cand.iter().map(|c| c.2));
                }
                out
            })
            .collect();
        let ee: Vec<Vec<Proximity>> = ee_pairs
            .par_chunks(4 * CHUNK)
            .map(|pairs| {
                let edges = &topo.edges;
                (pairs.iter())
                    .filter(|&&(e, f)| edge_boxes[e as usize].overlaps(&edge_boxes[f as usize]))
                    .filter_map(|&(e, f)| {
                        let ([a, b], [c, d]) = (edges[e as usize], edges[f as usize]);
                        edge_edge([a, b, c, d], x, h)
                    })
                    .collect()
            })
            .collect();
        self.proximities.clear();
        self.proximities.extend(vt.into_iter().flatten());
        self.proximities.extend(ee.into_iter().flatten());
        self.topo.drop_welded(&mut self.proximities, |p| {
            (&p.vertices, matches!(p.kind, ProximityKind::VertexTriangle))
        });
        Ok(())
    }

    /// The candidate pairs of a detection at `x` (whose boxes are in `boxes` and
    /// `edge_boxes`): (vertex, triangle) pairs whose boxes come within the thickness, and
    /// (edge, edge) pairs whose boxes do, both sorted and without pairs that share a vertex.
    #[allow(clippy::type_complexity)]
    fn search(&mut self, x: &[Vec3]) -> (Vec<(u32, u32)>, Vec<(u32, u32)>) {
        let h = self.thickness;
        self.bvh.fit(&self.boxes);
        self.edge_bvh.fit(&self.edge_boxes);
        let topo = &self.topo;
        let vt = topo.vertex_triangle_pairs(&self.bvh, |v| {
            let p = x[v];
            p.iter()
                .all(|c| c.is_finite())
                .then(|| Aabb { min: p, max: p }.inflated(h))
        });
        let ee = (self.edge_bvh).overlapping_pairs(|e, f| topo.edges_apart(e, f));
        (vt, ee)
    }

    /// Treats each pair of `pairs` (vertices sewn together, e.g. garment stitches) as one
    /// vertex for the neighbour test: proximities between features that share a vertex once
    /// the pairs are welded (transitively) are skipped, so a closing seam is not pushed open.
    /// Pairs with a vertex out of range are ignored; an empty list welds nothing.
    pub fn set_welded(&mut self, pairs: &[[usize; 2]]) {
        self.topo.set_welded(pairs);
    }

    /// Makes the next detection rebuild the hierarchy from scratch instead of refitting it
    /// (worth doing after very large deformations: a refitted tree stays correct but loosens).
    pub fn rebuild_hierarchy(&mut self) {
        self.bvh = Bvh::build(&[]);
        self.edge_bvh = Bvh::build(&[]);
    }

    /// The proximities found by the last detection.
    pub fn proximities(&self) -> &[Proximity] {
        &self.proximities
    }

    /// Number of proximities found by the last detection.
    pub fn num_proximities(&self) -> usize {
        self.proximities.len()
    }

    /// Proximity thickness (m).
    pub fn thickness(&self) -> f64 {
        self.thickness
    }

    /// Penalty energy (J) at positions `x` (m): sum over active proximities of
    /// k/2 (g - thickness)^2. Returns 0 if `x` has the wrong length.
    pub fn energy(&self, x: &[Vec3]) -> f64 {
        if x.len() != self.topo.n_vertices {
            return 0.0;
        }
        self.proximities
            .iter()
            .map(|p| {
                let r: Vec3 = (0..4).map(|k| x[p.vertices[k]] * p.weights[k]).sum();
                let g = p.normal.dot(&r);
                let (c, ci) = (
                    g - self.thickness,
                    (g - INNER_GAP * self.thickness).min(0.0),
                );
                if c < 0.0 {
                    0.5 * self.stiffness * (c * c + (INNER_STIFFENING - 1.0) * ci * ci)
                } else {
                    0.0
                }
            })
            .sum()
    }

    /// Adds penalty forces (N) at positions `x` (m) and velocities `v` (m/s) to `forces`, and
    /// appends Jacobian entries `(i, j, df_i/dx_j, df_i/dv_j)` with i <= j (the (j, i) block is
    /// the transpose, equal here since every block is a multiple of n n^T), in proximity order
    /// (vertex pairs may lie outside the mesh's edge sparsity pattern). Proximities whose gap
    /// has reopened to >= thickness contribute nothing. Arrays of the wrong length, or
    /// stencils with non-finite data, are skipped.
    pub fn penalty(
        &self,
        x: &[Vec3],
        v: &[Vec3],
        forces: &mut [Vec3],
        entries: &mut Vec<(usize, usize, Matrix3<f64>, Matrix3<f64>)>,
    ) {
        let n = self.topo.n_vertices;
        if x.len() != n || v.len() != n || forces.len() != n {
            return;
        }
        for p in &self.proximities {
            let mut r = Vec3::zeros();
            let mut rv = Vec3::zeros();
            for k in 0..4 {
                r += x[p.vertices[k]] * p.weights[k];
                rv += v[p.vertices[k]] * p.weights[k];
            }
            let g = p.normal.dot(&r);
            let vn = p.normal.dot(&rv);
            if !(g < self.thickness) || !vn.is_finite() {
                continue;
            }
            let (push, k) = self.spring(g);
            let mag = push - self.damping * vn;
            let nn = p.normal * p.normal.transpose();
            for i in 0..4 {
                forces[p.vertices[i]] += p.normal * (mag * p.weights[i]);
            }
            for i in 0..4 {
                for j in i..4 {
                    let w = p.weights[i] * p.weights[j];
                    if w == 0.0 {
                        continue;
                    }
                    let (a, b) = (p.vertices[i], p.vertices[j]);
                    let dx = nn * (-k * w);
                    let dv = nn * (-self.damping * w);
                    if a <= b {
                        entries.push((a, b, dx, dv));
                    } else {
                        entries.push((b, a, dx, dv));
                    }
                }
            }
        }
    }

    /// The spring's push `-E'(g)` (N, >= 0) at gap `g` < thickness and its stiffness `E''(g)`
    /// (N/m): linear down to [`INNER_GAP`] of the thickness, [`INNER_STIFFENING`] times stiffer
    /// below.
    #[inline]
    fn spring(&self, g: f64) -> (f64, f64) {
        let (c, ci) = (
            g - self.thickness,
            (g - INNER_GAP * self.thickness).min(0.0),
        );
        let m = INNER_STIFFENING - 1.0;
        let push = -self.stiffness * (c + m * ci);
        let k = if ci < 0.0 {
            self.stiffness * INNER_STIFFENING
        } else {
            self.stiffness
        };
        (push, k)
    }

    /// Adds the friction between layers (see the type's docs) at positions `x` (m),
    /// velocities `v` (m/s), vertex masses `masses` (kg) and step `h` (s) to `forces` (N), and
    /// appends its velocity Jacobian entries `(i, j, 0, df_i/dv_j)` with i <= j. Nothing is
    /// added without friction ([`SelfCollision::with_friction`]) or for arrays of the wrong
    /// length.
    pub fn friction(
        &self,
        x: &[Vec3],
        v: &[Vec3],
        masses: &[f64],
        h: f64,
        forces: &mut [Vec3],
        entries: &mut Vec<(usize, usize, Matrix3<f64>, Matrix3<f64>)>,
    ) {
        let n = self.topo.n_vertices;
        let lengths_ok = [x.len(), v.len(), masses.len(), forces.len()]
            .iter()
            .all(|&l| l == n);
        if self.friction == 0.0 || !lengths_ok || !(h > 0.0) {
            return;
        }
        for p in &self.proximities {
            let Some((force, rate, dir)) = self.pair_friction(p, x, v, masses, h) else {
                continue;
            };
            for i in 0..4 {
                forces[p.vertices[i]] += force * p.weights[i];
            }
            // Static: damper across the whole tangent plane; sliding: only across the slip.
            let plane = Matrix3::identity() - p.normal * p.normal.transpose();
            let jac = (plane - dir * dir.transpose()) * rate;
            for i in 0..4 {
                for j in i..4 {
                    let w = p.weights[i] * p.weights[j];
                    if w == 0.0 {
                        continue;
                    }
                    let (a, b) = (p.vertices[i], p.vertices[j]);
                    entries.push((a.min(b), a.max(b), Matrix3::zeros(), jac * (-w)));
                }
            }
        }
    }

    /// Friction of one proximity: the force on its first feature (N), the damping rate
    /// (N s/m) across the tangent plane, and the slip direction whose damping is left out
    /// (zero when sticking). `None` when the pair is not pressed together.
    fn pair_friction(
        &self,
        p: &Proximity,
        x: &[Vec3],
        v: &[Vec3],
        masses: &[f64],
        h: f64,
    ) -> Option<(Vec3, f64, Vec3)> {
        let (mut r, mut rv, mut inv_mass) = (Vec3::zeros(), Vec3::zeros(), 0.0);
        for k in 0..4 {
            r += x[p.vertices[k]] * p.weights[k];
            rv += v[p.vertices[k]] * p.weights[k];
            inv_mass += p.weights[k] * p.weights[k] / masses[p.vertices[k]];
        }
        let g = p.normal.dot(&r);
        let vn = p.normal.dot(&rv);
        let normal_force = self.spring(g).0 - self.damping * vn;
        if !(g < self.thickness && normal_force > 0.0 && inv_mass.is_finite() && inv_mass > 0.0) {
            return None;
        }
        let slip = rv - p.normal * vn;
        let speed = slip.norm();
        let limit = self.friction * normal_force;
        if !(speed > self.slip_speed) {
            // Static: a stiff damper that holds any drive below mu N (creep < slip speed).
            let rate = limit / self.slip_speed;
            return Some((-slip * rate, rate, Vec3::zeros()));
        }
        // Kinetic: mu N against the slip, capped at the impulse that stops the slip in one
        // step (pair's effective mass), so it cannot reverse it.
        let dir = slip / speed;
        let magnitude = limit.min(speed / (inv_mass * h));
        Some((-dir * magnitude, magnitude / speed, dir))
    }
}

/// The unique edges `(v0 < v1)` of `triangles`, sorted.
fn mesh_edges(triangles: &[[usize; 3]]) -> Vec<[usize; 2]> {
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

fn sorted(a: usize, b: usize) -> [usize; 2] {
    if a < b { [a, b] } else { [b, a] }
}

/// The feature of the other cloth layer a vertex is closest to (for de-duplication: a vertex
/// near an edge or vertex is found through every incident triangle).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum FeatureKey {
    Vertex(usize),
    Edge(usize, usize),
    Face(usize, usize, usize),
}

fn vertex_triangle(
    v: usize,
    tri: [usize; 3],
    x: &[Vec3],
    h: f64,
) -> Option<(FeatureKey, Proximity)> {
    let [a, b, c] = tri.map(|i| x[i]);
    let (w, feat) = closest_on_triangle(&x[v], &a, &b, &c);
    let cp = a * w[0] + b * w[1] + c * w[2];
    let diff = x[v] - cp;
    let d = diff.norm();
    if !(d < h) {
        return None;
    }
    let normal = if d > 1e-9 * h {
        diff / d
    } else {
        let n = triangle_normal(&a, &b, &c)?;
        if n.dot(&diff) >= 0.0 { n } else { -n }
    };
    let key = match feat {
        TriFeature::Face => FeatureKey::Face(tri[0], tri[1], tri[2]),
        TriFeature::Edge(i, j) => {
            let [p, q] = sorted(tri[i as usize], tri[j as usize]);
            FeatureKey::Edge(p, q)
        }
        TriFeature::Vertex(i) => FeatureKey::Vertex(tri[i as usize]),
    };
    Some((
        key,
        Proximity {
            kind: ProximityKind::VertexTriangle,
            vertices: [v, tri[0], tri[1], tri[2]],
            weights: [1.0, -w[0], -w[1], -w[2]],
            normal,
            distance: d,
        },
    ))
}

fn edge_edge(v: [usize; 4], x: &[Vec3], h: f64) -> Option<Proximity> {
    let [p0, p1, q0, q1] = v.map(|i| x[i]);
    let (s, t) = closest_segment_segment(&p0, &p1, &q0, &q1);
    let inner = EDGE_INTERIOR..=(1.0 - EDGE_INTERIOR);
    if !inner.contains(&s) || !inner.contains(&t) {
        return None;
    }
    let diff = (p0 + (p1 - p0) * s) - (q0 + (q1 - q0) * t);
    let d = diff.norm();
    if !(d < h) {
        return None;
    }
    let normal = if d > 1e-9 * h {
        diff / d
    } else {
        let n = (p1 - p0).cross(&(q1 - q0));
        let l = n.norm();
        if l > 0.0 {
            n / l
        } else {
            any_perpendicular(&(p1 - p0))
        }
    };
    Some(Proximity {
        kind: ProximityKind::EdgeEdge,
        vertices: v,
        weights: [1.0 - s, s, -(1.0 - t), -t],
        normal,
        distance: d,
    })
}

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
/// `welded` are joined (garment stitches, see [`SelfCollision::set_welded`]) are neighbours and
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
/// the same pairs as a new build for a fraction of its cost (the build was most of a count).
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

    /// An `n` x `n` grid `width` m wide with every vertex moved by a
    /// pseudo-random offset of up to half of `scale` (m) per axis (xorshift from `seed`).
    fn crumpled(n: usize, width: f64, scale: Vec3, seed: u64) -> (ClothMesh, Vec<Vec3>) {
        let mesh = cloth_mesh::grid(n, n, width, width, cloth_mesh::GridPattern::Alternating)
            .expect("grid");
        let x = jittered(mesh.positions(), scale, seed);
        (mesh, x)
    }

    /// `x` with every point moved by a pseudo-random offset of up to half of `scale` per axis.
    fn jittered(x: &[Vec3], scale: Vec3, mut state: u64) -> Vec<Vec3> {
        let mut rand = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        (x.iter())
            .map(|p| p + Vec3::new(rand(), rand(), rand()).component_mul(&scale))
            .collect()
    }

    /// Edge-edge proximities of a crumpled grid against testing every pair of edges that share
    /// no vertex: the broad phase (the edge hierarchy against itself) drops none.
    #[test]
    fn edge_edge_proximities_are_those_of_every_edge_pair() {
        let (mesh, x) = crumpled(9, 0.08, Vec3::repeat(0.02), 0x2545_f491_4f6c_dd1d);
        let h = 0.005;
        let mut sc = SelfCollision::new(&mesh, h, 1.0, 0.0).expect("self collision");
        sc.detect(&x);
        let mut got: Vec<[usize; 4]> = (sc.proximities().iter())
            .filter(|p| p.kind == ProximityKind::EdgeEdge)
            .map(|p| p.vertices)
            .collect();
        got.sort_unstable();
        let edges = mesh_edges(mesh.triangles());
        let mut want = Vec::new();
        for (i, &[a, b]) in edges.iter().enumerate() {
            for &[c, d] in &edges[i + 1..] {
                if a == c || a == d || b == c || b == d {
                    continue;
                }
                if let Some(p) = edge_edge([a, b, c, d], &x, h) {
                    want.push(p.vertices);
                }
            }
        }
        want.sort_unstable();
        assert!(want.len() > 20, "{} pairs", want.len());
        assert_eq!(got, want);
    }

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

    /// A proximity search from the pairs that CCD recorded at the end of a motion finds the
    /// same proximities as a search of its own; pairs recorded for other positions, or with
    /// too small a radius, are not used.
    #[test]
    fn proximities_from_the_ccd_near_pairs_are_those_of_a_search() {
        let (mesh, x0) = crumpled(13, 0.12, Vec3::repeat(0.02), 0x5851_f42d_4c95_7f2d);
        // The cloth also moves as a whole, farther than its own size (CCD sweeps its boxes in
        // the frame moving with it).
        let shift = Vec3::new(0.3, -0.2, 0.1);
        let x1: Vec<Vec3> = (jittered(&x0, Vec3::repeat(0.01), 0x2545_f491_4f6c_dd1d).iter())
            .map(|p| p + shift)
            .collect();
        let h = 0.006;
        let mut sc = SelfCollision::new(&mesh, h, 1.0, 0.0).expect("self collision");
        sc.detect(&x1);
        let want = sc.proximities().to_vec();
        assert!(want.len() > 20, "{} proximities", want.len());
        let kinds = |p: &[Proximity], k| p.iter().filter(|q| q.kind == k).count();
        assert!(kinds(&want, ProximityKind::EdgeEdge) > 5);
        assert!(kinds(&want, ProximityKind::VertexTriangle) > 5);
        let mut ccd = crate::SelfCcd::new(mesh.num_vertices(), mesh.triangles())
            .expect("ccd")
            .with_near_radius(h);
        let mut impacts = Vec::new();
        ccd.impacts(&x0, &x1, 1e-4, &mut impacts).expect("impacts");
        let near = ccd.near_pairs().expect("recorded");
        assert!(near.covers(&x1, h, sc.topo.edges.len()));
        sc.proximities.clear();
        sc.try_detect_near(&x1, Some(near)).expect("detect");
        assert_eq!(sc.proximities(), &want[..]);
        // For other positions or a smaller radius the pairs do not cover the search.
        assert!(!near.covers(&x0, h, sc.topo.edges.len()));
        assert!(!near.covers(&x1, 2.0 * h, sc.topo.edges.len()));
        sc.try_detect_near(&x0, Some(near)).expect("detect");
        let from_near_x0 = sc.proximities().to_vec();
        sc.detect(&x0);
        assert_eq!(sc.proximities(), &from_near_x0[..]);
    }

    /// CCD of a crumpled grid whose vertices each move differently while the whole grid
    /// travels farther than its own size finds exactly the impacts of testing every
    /// vertex-triangle and edge-edge pair that shares no vertex.
    #[test]
    fn ccd_impacts_are_those_of_every_feature_pair() {
        use crate::{Along, Impact, ImpactKind, edge_edge_impact, vertex_triangle_impact};
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
        let mut ccd = crate::SelfCcd::new(mesh.num_vertices(), mesh.triangles()).expect("ccd");
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
