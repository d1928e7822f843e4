//! Cloth-cloth proximity (vertex-triangle and edge-edge within a thickness) with damped
//! penalty springs and Coulomb friction between layers.

use cloth_mesh::{ClothMesh, Vec3};
use nalgebra::Matrix3;
use rayon::prelude::*;

use super::ccd::NearPairs;
use super::topology::{CHUNK, Topology, sorted};
use crate::error::CollideError;
use crate::geometry::bvh::{Aabb, Bvh};
use crate::geometry::primitives::{
    TriFeature, any_perpendicular, closest_on_triangle, closest_segment_segment, triangle_normal,
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

/// Edge-edge proximities are kept only when both closest points are interior to their edges by
/// this parameter margin; endpoint cases are vertex-triangle proximities.
const EDGE_INTERIOR: f64 = 1e-6;

/// Cloth self-collision: a bounding volume hierarchy over the cloth triangles (built once,
/// refitted at every [`SelfCollision::detect`]), vertex-triangle and edge-edge proximities
/// within `thickness` that skip topological neighbours (pairs sharing a vertex), and the
/// paper's response: damped penalty springs (Baraff & Witkin 1998, §6).
///
/// Penalty per proximity with gap g = n . r (n, stencil weights a_k frozen at detection),
/// active while g < thickness t:
/// energy E = k/2 (g - t)^2 + (m - 1) k/2 min(0, g - g_in)^2; force
/// f_i = -E'(g) a_i n - c (n . sum_j a_j v_j) a_i n. The spring is the paper's linear one down
/// to g_in = [`INNER_GAP`] t and m = [`INNER_STIFFENING`] times stiffer below it, so layers
/// pressed together stay about half the thickness apart or more (at the default 500 N/m and
/// t = 4 mm the push is 0.8 N at 0.6 t, 4 N at t/2 and 12 N at t/4; the paper's linear
/// spring alone is too soft to keep layers pressed hard together, as in a wrung tube, t/2
/// apart).
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
        let vt = vertex_triangle_proximities(&self.topo, &self.boxes, vt_pairs, x, h);
        let ee = edge_edge_proximities(&self.topo, &self.edge_boxes, ee_pairs, x, h);
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

/// The vertex-triangle proximities within `h` (m) at positions `x` among the candidate
/// (vertex, triangle) pairs `vt_pairs` (sorted by vertex), whose triangle boxes at `x` are in
/// `boxes`: parallel over fixed chunks of vertices, in vertex order, a vertex's proximities
/// de-duplicated by the feature of the triangle it is closest to.
fn vertex_triangle_proximities(
    topo: &Topology,
    boxes: &[Aabb],
    vt_pairs: &[(u32, u32)],
    x: &[Vec3],
    h: f64,
) -> Vec<Vec<Proximity>> {
    (0..topo.n_vertices)
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
        .collect()
}

/// The edge-edge proximities within `h` (m) at positions `x` among the candidate (edge, edge)
/// pairs `ee_pairs`, whose edge boxes at `x` (inflated by `h / 2`) are in `edge_boxes`:
/// parallel over fixed chunks of pairs, in pair order.
fn edge_edge_proximities(
    topo: &Topology,
    edge_boxes: &[Aabb],
    ee_pairs: &[(u32, u32)],
    x: &[Vec3],
    h: f64,
) -> Vec<Vec<Proximity>> {
    ee_pairs
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
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selfcontact::ccd::SelfCcd;
    use crate::selfcontact::test_cloth::{crumpled, jittered};
    use crate::selfcontact::topology::mesh_edges;

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
        let mut ccd = SelfCcd::new(mesh.num_vertices(), mesh.triangles())
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
}
