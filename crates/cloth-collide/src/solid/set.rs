//! Prepared colliders at a time and cloth-solid proximity queries.

use cloth_mesh::Vec3;
use nalgebra::{Isometry3, Point3};
use rayon::prelude::*;

use super::collider::{Collider, Shape};
use super::mesh::MeshData;
use super::mesh::analysis::MeshAnalysis;
use super::motion::{Deformation, Motion, RigidVelocity};
use super::report::{MeshReport, WeldReport};
use super::shapes;
use super::validate::validate_motion;
use crate::error::CollideError;
use crate::geometry::bvh::{Aabb, Bvh};
use crate::geometry::primitives::{closest_on_triangle, triangle_normal};

/// A cloth vertex near (or inside) a solid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// Cloth vertex index.
    pub vertex: usize,
    /// Collider index in the [`ColliderSet`].
    pub collider: usize,
    /// Unit normal of the solid at `surface_point` (world): outward, pointing from the solid
    /// towards the vertex when it is outside. For an open part of a mesh (no inside) it points
    /// from the surface towards the vertex, on whichever side the vertex is.
    pub normal: Vec3,
    /// Signed distance (m) from the vertex to the solid's surface: negative inside; never
    /// negative for an open part of a mesh. The collider's and the cloth's thicknesses are
    /// *not* subtracted.
    pub distance: f64,
    /// Closest point on the solid's surface (world, m); `vertex position - distance * normal`.
    pub surface_point: Vec3,
    /// Velocity (m/s) of the solid's material point at `surface_point`.
    pub surface_velocity: Vec3,
}

/// A sharp solid feature (box corner, capsule tip, cylinder rim point, sharp convex mesh vertex)
/// near a cloth triangle.
///
/// Treatment (for the simulation): the cloth point `sum_k weights[k] * x[vertices[k]]` should
/// stay at least `cloth_thickness + collider thickness` on the `normal` side of the feature;
/// push the triangle's three vertices along `normal` with the barycentric `weights` (e.g. a
/// position alteration `y_k = weights[k] * (target - distance) * normal / sum_j weights[j]^2`,
/// which moves the cloth point by exactly `target - distance`), or constrain them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FeatureContact {
    /// Cloth triangle index.
    pub triangle: usize,
    /// The triangle's three cloth vertices.
    pub vertices: [usize; 3],
    /// Barycentric weights (>= 0, sum 1) of the cloth point closest to the feature.
    pub weights: [f64; 3],
    /// Collider index in the [`ColliderSet`].
    pub collider: usize,
    /// Index of the feature within the collider (stable across updates).
    pub feature: usize,
    /// The feature's world position (m).
    pub feature_point: Vec3,
    /// Unit normal of the cloth triangle, oriented to point away from the solid (same side as
    /// the feature's outward direction).
    pub normal: Vec3,
    /// Signed separation (m) along `normal` from the feature to the closest cloth point:
    /// positive when the cloth is outside the feature, negative when the feature has poked
    /// through the triangle.
    pub distance: f64,
    /// Velocity (m/s) of the feature point.
    pub surface_velocity: Vec3,
}

/// Per-collider data at the current time.
#[derive(Clone, Debug)]
struct Prepared {
    pose: Isometry3<f64>,
    rigid: RigidVelocity,
    /// World bounding box of the solid; `None` = unbounded (plane).
    aabb: Option<Aabb>,
    mesh: Option<MeshData>,
    /// World position, outward unit direction and velocity (m/s) of each sharp feature.
    features: Vec<(Vec3, Vec3, Vec3)>,
}

/// Number of rim points per cap edge used as features of a cylinder.
const CYLINDER_RIM_FEATURES: usize = 16;

/// Colliders prepared for queries at one time: poses, velocities, refitted mesh hierarchies.
/// Reusable across steps: call [`ColliderSet::update`] to move it to another time.
#[derive(Clone, Debug)]
pub struct ColliderSet {
    colliders: Vec<Collider>,
    prepared: Vec<Prepared>,
    reports: Vec<MeshReport>,
    time: f64,
}

impl ColliderSet {
    /// Validates every collider (errors name it by name and index), welds and prepares mesh
    /// colliders (see [`Shape::Mesh`]; what was done is in [`ColliderSet::mesh_reports`]) and
    /// places everything at t = 0.
    pub fn new(colliders: Vec<Collider>) -> Result<Self, CollideError> {
        let mut prepared = Vec::with_capacity(colliders.len());
        let mut reports = Vec::new();
        for (i, c) in colliders.iter().enumerate() {
            let label = c.label(Some(i));
            let analysis = c.validate_labeled(&label)?;
            let mesh = match (&c.shape, &analysis) {
                (Shape::Mesh { vertices, .. }, Some(a)) => {
                    reports.push(mesh_report(i, label.clone(), &c.motion, vertices.len(), a));
                    Some(MeshData::new(&label, vertices, a)?)
                }
                _ => None,
            };
            prepared.push(Prepared {
                pose: Isometry3::identity(),
                rigid: c.rigid_velocity(0.0),
                aabb: None,
                mesh,
                features: Vec::new(),
            });
        }
        let mut set = ColliderSet {
            colliders,
            prepared,
            reports,
            time: 0.0,
        };
        set.update(0.0);
        Ok(set)
    }

    /// Moves every collider to time t (s): poses and velocities (cheap for rigid motion); a
    /// deforming mesh gets its interpolated vertices and a refitted hierarchy. Non-finite t
    /// is treated as 0.
    pub fn update(&mut self, t: f64) {
        let t = if t.is_finite() { t } else { 0.0 };
        self.time = t;
        for (c, p) in self.colliders.iter().zip(self.prepared.iter_mut()) {
            p.pose = c.pose(t);
            p.rigid = c.rigid_velocity(t);
            if let Some(m) = p.mesh.as_mut() {
                m.update(&c.motion, t);
            }
            p.aabb = local_bounds(c, p.mesh.as_ref()).map(|b| transform_aabb(&p.pose, &b));
            p.features = features(c, p);
        }
    }

    /// Replaces the rigid part of collider `i`'s motion with `rigid` (static, keyframes or
    /// velocity), keeping the deformation of a deforming mesh (a mesh sequence or a skinned
    /// body goes on deforming, placed by the new rigid motion), and moves the set to its
    /// current time again. `rigid` is checked as [`ColliderSet::new`] checks motions; on an
    /// error the collider keeps its motion.
    ///
    /// # Panics
    ///
    /// If `i >= self.len()`.
    pub fn set_rigid_motion(&mut self, i: usize, rigid: Motion) -> Result<(), CollideError> {
        let c = &mut self.colliders[i];
        let label = c.label(Some(i));
        if !matches!(
            rigid,
            Motion::Static | Motion::Keyframes(_) | Motion::Velocity { .. }
        ) {
            return Err(CollideError::BadFrames {
                collider: label,
                reason: "a rigid motion must be static, keyframes or velocity".into(),
            });
        }
        validate_motion(&label, &rigid, &c.shape, true)?;
        let deformation = match std::mem::take(&mut c.motion) {
            Motion::Composite { deformation, .. } => Some(*deformation),
            d @ (Motion::MeshSequence { .. } | Motion::Skinned(_)) => Some(d),
            _ => None,
        };
        c.motion = match (deformation, rigid) {
            (Some(d), Motion::Static) => d,
            (Some(d), rigid) => Motion::Composite {
                rigid: Box::new(rigid),
                deformation: Box::new(d),
            },
            (None, rigid) => rigid,
        };
        self.update(self.time);
        Ok(())
    }

    /// What was done to each mesh collider's mesh (welding, open parts), in collider order:
    /// one report per mesh collider. [`MeshReport::notice`] gives the line to show a user.
    pub fn mesh_reports(&self) -> &[MeshReport] {
        &self.reports
    }

    /// The time (s) of the last [`ColliderSet::update`].
    pub fn time(&self) -> f64 {
        self.time
    }

    /// The colliders, in index order.
    pub fn colliders(&self) -> &[Collider] {
        &self.colliders
    }

    /// Number of colliders.
    pub fn len(&self) -> usize {
        self.colliders.len()
    }

    /// Whether there are no colliders.
    pub fn is_empty(&self) -> bool {
        self.colliders.is_empty()
    }

    /// World pose of collider `i` at the current time (`None` if out of range).
    pub fn pose(&self, i: usize) -> Option<&Isometry3<f64>> {
        self.prepared.get(i).map(|p| &p.pose)
    }

    /// Solid vertex count for statistics (the paper's "solid verts"): the sum over mesh
    /// colliders, after welding. Analytic shapes are exact, not tessellated, and count 0.
    pub fn vertex_count(&self) -> usize {
        self.prepared
            .iter()
            .filter_map(|p| p.mesh.as_ref())
            .map(|m| m.positions().len())
            .sum()
    }

    /// Solid triangle count for statistics: the sum over mesh colliders (analytic shapes: 0).
    pub fn triangle_count(&self) -> usize {
        self.prepared
            .iter()
            .filter_map(|p| p.mesh.as_ref())
            .map(|m| m.triangles().len())
            .sum()
    }

    /// World-space triangle mesh of collider `i` at the current time (for output): a mesh
    /// collider's current welded vertices and its triangles (closed parts wound outward), or
    /// [`Shape::tessellate`] with `segments` for analytic shapes, placed by the current pose.
    /// `None` if `i` is out of range.
    pub fn world_mesh(&self, i: usize, segments: usize) -> Option<(Vec<Vec3>, Vec<[usize; 3]>)> {
        let (c, p) = (self.colliders.get(i)?, self.prepared.get(i)?);
        let (v, t) = match &p.mesh {
            Some(m) => (m.positions().to_vec(), m.triangles().to_vec()),
            None => c.shape.tessellate(segments),
        };
        let v = v
            .iter()
            .map(|q| p.pose.transform_point(&Point3::from(*q)).coords)
            .collect();
        Some((v, t))
    }

    /// Number of sharp features (see [`FeatureContact`]) over all colliders.
    pub fn feature_count(&self) -> usize {
        self.prepared.iter().map(|p| p.features.len()).sum()
    }

    /// Signed distance query of world point `p` against collider `i`, whatever the distance;
    /// `vertex` is set to `usize::MAX`. `None` if `i` is out of range or `p` is not finite.
    pub fn query(&self, i: usize, p: &Vec3) -> Option<Contact> {
        let (c, prep) = (self.colliders.get(i)?, self.prepared.get(i)?);
        if !p.iter().all(|x| x.is_finite()) {
            return None;
        }
        query_one(c, prep, p, f64::INFINITY).map(|mut ct| {
            ct.collider = i;
            ct
        })
    }

    /// All cloth vertices (positions `x`, m) whose signed distance to a collider is below
    /// `cloth_thickness + collider.thickness + margin` (m), with one contact per vertex: the
    /// collider with the smallest `distance - collider.thickness` (ties: lowest index). `out`
    /// is cleared and filled sorted by vertex. Non-finite positions produce no contact.
    /// Parallel over fixed chunks of vertices; the result does not depend on the thread count.
    pub fn vertex_contacts(
        &self,
        x: &[Vec3],
        cloth_thickness: f64,
        margin: f64,
        out: &mut Vec<Contact>,
    ) {
        self.contacts_of(x.len(), |k| k, x, cloth_thickness, margin, out);
    }

    /// [`ColliderSet::vertex_contacts`] for the listed `vertices` of `x` only: the contacts of
    /// those vertices, in the order of `vertices` (sorted by vertex when `vertices` is
    /// ascending). Indices out of range of `x` produce no contact. The answer for a vertex is
    /// the one `vertex_contacts` gives it, so a caller that knows which vertices cannot be
    /// within range (a vertex that was out of range by more than it has moved since, the
    /// colliders where they were) gets the same contacts for less work. Parallel and
    /// deterministic like `vertex_contacts`.
    pub fn vertex_contacts_of(
        &self,
        x: &[Vec3],
        vertices: &[usize],
        cloth_thickness: f64,
        margin: f64,
        out: &mut Vec<Contact>,
    ) {
        self.contacts_of(
            vertices.len(),
            |k| vertices[k],
            x,
            cloth_thickness,
            margin,
            out,
        );
    }

    /// The contacts of vertices `vertex(0..count)` of `x` into `out` (cleared), in that order,
    /// over fixed chunks in parallel.
    fn contacts_of(
        &self,
        count: usize,
        vertex: impl Fn(usize) -> usize + Sync,
        x: &[Vec3],
        cloth_thickness: f64,
        margin: f64,
        out: &mut Vec<Contact>,
    ) {
        out.clear();
        // Small chunks: a short list (the candidate check's) still spreads over the threads.
        const CHUNK: usize = 128;
        let chunks: Vec<Vec<Contact>> = (0..count.div_ceil(CHUNK))
            .into_par_iter()
            .map(|ci| {
                let mut local = Vec::new();
                for k in ci * CHUNK..((ci + 1) * CHUNK).min(count) {
                    let v = vertex(k);
                    let Some(p) = x.get(v) else {
                        continue;
                    };
                    if let Some(mut c) = self.closest_contact(p, cloth_thickness, margin) {
                        c.vertex = v;
                        local.push(c);
                    }
                }
                local
            })
            .collect();
        for c in chunks {
            out.extend(c);
        }
    }

    fn closest_contact(&self, p: &Vec3, cloth_thickness: f64, margin: f64) -> Option<Contact> {
        if !p.iter().all(|x| x.is_finite()) {
            return None;
        }
        let mut best: Option<(f64, Contact)> = None;
        for (i, (c, prep)) in self.colliders.iter().zip(&self.prepared).enumerate() {
            let range = cloth_thickness + c.thickness + margin;
            if !(range.is_finite()) {
                continue;
            }
            if let Some(b) = &prep.aabb
                && !b.inflated(range.max(0.0)).contains(p)
            {
                continue;
            }
            let Some(mut ct) = query_one(c, prep, p, range) else {
                continue;
            };
            if !(ct.distance < range) {
                continue;
            }
            ct.collider = i;
            let key = ct.distance - c.thickness;
            if best.as_ref().is_none_or(|(k, _)| key < *k) {
                best = Some((key, ct));
            }
        }
        best.map(|(_, c)| c)
    }

    /// Sharp solid features near cloth triangles (see [`FeatureContact`] for the treatment).
    /// Features: box corners, capsule tips, 16 points on each cylinder rim, and vertices of
    /// closed mesh parts that are convex and sharp (an incident face normal more than 25
    /// degrees from the vertex pseudo-normal). For each feature, the cloth triangle (of
    /// `triangles`, positions `x`) whose closest point is nearest to it, if within
    /// `cloth_thickness + collider.thickness + margin` (m), gives one contact. `out` is cleared
    /// and filled ordered by (collider, feature). Triangles with out-of-range indices or
    /// degenerate/non-finite geometry are skipped. Spheres and planes have no features.
    /// Parallel and deterministic.
    pub fn feature_contacts(
        &self,
        triangles: &[[usize; 3]],
        x: &[Vec3],
        cloth_thickness: f64,
        margin: f64,
        out: &mut Vec<FeatureContact>,
    ) {
        out.clear();
        if self.feature_count() == 0
            || triangles.is_empty()
            || !self.any_feature_near(x, cloth_thickness, margin)
        {
            return;
        }
        // One job per feature with a usable range, its box the feature point grown by it. The
        // features are few and the triangles many: each triangle looks up the features its
        // box overlaps in a small hierarchy over the features' boxes.
        let mut jobs: Vec<(usize, usize, f64)> = Vec::new();
        let mut boxes: Vec<Aabb> = Vec::new();
        for (ci, (p, c)) in self.prepared.iter().zip(&self.colliders).enumerate() {
            let range = cloth_thickness + c.thickness + margin;
            if !(range > 0.0) || !range.is_finite() {
                continue;
            }
            for (fi, (f, _, _)) in p.features.iter().enumerate() {
                jobs.push((ci, fi, range));
                boxes.push(Aabb { min: *f, max: *f }.inflated(range));
            }
        }
        let bvh = Bvh::build(&boxes);
        const CHUNK: usize = 1024;
        let found: Vec<Vec<(usize, f64, FeatureContact)>> = triangles
            .par_chunks(CHUNK)
            .enumerate()
            .map(|(k, chunk)| {
                let mut stack = Vec::new();
                let mut local = Vec::new();
                for (o, tri) in chunk.iter().enumerate() {
                    let t = k * CHUNK + o;
                    if !tri.iter().all(|&i| i < x.len()) {
                        continue;
                    }
                    let tbox = Aabb::from_points(tri.iter().map(|&i| &x[i]));
                    bvh.query(&tbox, &mut stack, |j| {
                        if let Some((d, fc)) = self.feature_on_triangle(jobs[j], t, *tri, x) {
                            local.push((j, d, fc));
                        }
                    });
                }
                local
            })
            .collect();
        // Per feature, the triangle whose closest point is nearest (ties: the lowest
        // triangle); the chunks come in triangle order.
        let mut best: Vec<Option<(f64, FeatureContact)>> = vec![None; jobs.len()];
        for (j, d, fc) in found.into_iter().flatten() {
            let better = match &best[j] {
                None => true,
                Some((bd, bc)) => d < *bd || (d == *bd && fc.triangle < bc.triangle),
            };
            if better {
                best[j] = Some((d, fc));
            }
        }
        out.extend(best.into_iter().flatten().map(|(_, fc)| fc));
    }

    /// Whether any feature comes within its range of the bounding box of the cloth's finite
    /// positions `x`. Most steps have no feature anywhere near the cloth: this test spares
    /// them the search.
    fn any_feature_near(&self, x: &[Vec3], cloth_thickness: f64, margin: f64) -> bool {
        let cloth_box = Aabb::from_points(x.iter().filter(|p| p.iter().all(|c| c.is_finite())));
        self.prepared.iter().zip(&self.colliders).any(|(p, c)| {
            let range = cloth_thickness + c.thickness + margin;
            let grown = cloth_box.inflated(range);
            p.features.iter().any(|(f, _, _)| grown.contains(f))
        })
    }

    /// The contact of feature `fi` of collider `ci` (range `range`, m) with cloth triangle `t`
    /// (vertices `tri` of `x`) and the distance from the feature to the triangle's closest
    /// point, if that is within range and the triangle is not degenerate.
    fn feature_on_triangle(
        &self,
        (ci, fi, range): (usize, usize, f64),
        t: usize,
        tri: [usize; 3],
        x: &[Vec3],
    ) -> Option<(f64, FeatureContact)> {
        let (f, dir, fvel) = self.prepared[ci].features[fi];
        let [a, b, cc] = tri.map(|i| x[i]);
        let n = triangle_normal(&a, &b, &cc)?;
        let (w, _) = closest_on_triangle(&f, &a, &b, &cc);
        let cp = a * w[0] + b * w[1] + cc * w[2];
        let d = (cp - f).norm();
        if !(d < range) {
            return None;
        }
        let n = if n.dot(&dir) >= 0.0 { n } else { -n };
        let fc = FeatureContact {
            triangle: t,
            vertices: tri,
            weights: w,
            collider: ci,
            feature: fi,
            feature_point: f,
            normal: n,
            distance: (cp - f).dot(&n),
            surface_velocity: fvel,
        };
        Some((d, fc))
    }
}

/// Query of a finite world point against one prepared collider (collider index left 0).
/// `within` (m, may be infinite) is the distance the caller cares about: a mesh may answer
/// `None` for a point outside it and farther than that from its surface.
fn query_one(c: &Collider, prep: &Prepared, p: &Vec3, within: f64) -> Option<Contact> {
    let q = prep.pose.inverse_transform_point(&Point3::from(*p)).coords;
    let (lp, local_vel) = match (&c.shape, &prep.mesh) {
        (Shape::Sphere { radius }, _) => (shapes::sphere(&q, *radius), None),
        (Shape::Plane, _) => (shapes::plane(&q), None),
        (Shape::Capsule { radius, length }, _) => (shapes::capsule(&q, *radius, *length), None),
        (Shape::Cylinder { radius, length }, _) => (shapes::cylinder(&q, *radius, *length), None),
        (Shape::Cuboid { size }, _) => (shapes::cuboid(&q, &(size * 0.5)), None),
        (Shape::Mesh { .. }, Some(m)) => m.query(&q, within)?,
        (Shape::Mesh { .. }, None) => return None,
    };
    if !lp.distance.is_finite() {
        return None;
    }
    let surface_point = prep.pose.transform_point(&Point3::from(lp.point)).coords;
    let mut surface_velocity = prep.rigid.at(&surface_point);
    if let Some(v) = local_vel {
        surface_velocity += prep.pose.rotation * v;
    }
    Some(Contact {
        vertex: usize::MAX,
        collider: 0,
        normal: prep.pose.rotation * lp.normal,
        distance: lp.distance,
        surface_point,
        surface_velocity,
    })
}

/// Local bounding box of the solid (None for the unbounded plane).
fn local_bounds(c: &Collider, mesh: Option<&MeshData>) -> Option<Aabb> {
    let h = match &c.shape {
        Shape::Sphere { radius } => Vec3::repeat(*radius),
        Shape::Capsule { radius, length } => Vec3::new(*radius, 0.5 * length + radius, *radius),
        Shape::Cylinder { radius, length } => Vec3::new(*radius, 0.5 * length, *radius),
        Shape::Cuboid { size } => size * 0.5,
        Shape::Plane => return None,
        Shape::Mesh { .. } => return mesh.map(|m| m.bounds()),
    };
    Some(Aabb { min: -h, max: h })
}

fn transform_aabb(pose: &Isometry3<f64>, b: &Aabb) -> Aabb {
    let mut out = Aabb::empty();
    for k in 0..8 {
        let c = Vec3::new(
            if k & 1 == 0 { b.min.x } else { b.max.x },
            if k & 2 == 0 { b.min.y } else { b.max.y },
            if k & 4 == 0 { b.min.z } else { b.max.z },
        );
        out.grow(&pose.transform_point(&Point3::from(c)).coords);
    }
    // Guard against rounding: grow by a relative epsilon.
    let ext = (out.max - out.min).norm();
    out.inflated(1e-12 * ext)
}

/// World positions and outward directions of the sharp features at the current pose.
fn features(c: &Collider, p: &Prepared) -> Vec<(Vec3, Vec3, Vec3)> {
    // Local position, local outward direction, local (deformation) velocity.
    let z = Vec3::zeros();
    let local: Vec<(Vec3, Vec3, Vec3)> = match &c.shape {
        Shape::Sphere { .. } | Shape::Plane => Vec::new(),
        Shape::Capsule { radius, length } => {
            let h = 0.5 * length + radius;
            vec![
                (Vec3::new(0.0, h, 0.0), Vec3::y(), z),
                (Vec3::new(0.0, -h, 0.0), -Vec3::y(), z),
            ]
        }
        Shape::Cylinder { radius, length } => {
            let mut f = Vec::with_capacity(2 * CYLINDER_RIM_FEATURES);
            for sgn in [1.0, -1.0] {
                for k in 0..CYLINDER_RIM_FEATURES {
                    let a = std::f64::consts::TAU * k as f64 / CYLINDER_RIM_FEATURES as f64;
                    let r = Vec3::new(a.cos(), 0.0, a.sin());
                    let pt = r * *radius + Vec3::y() * (sgn * 0.5 * length);
                    f.push((pt, (r + Vec3::y() * sgn) / 2f64.sqrt(), z));
                }
            }
            f
        }
        Shape::Cuboid { size } => (0..8)
            .map(|k| {
                let s = Vec3::new(
                    if k & 1 == 0 { -1.0 } else { 1.0 },
                    if k & 2 == 0 { -1.0 } else { 1.0 },
                    if k & 4 == 0 { -1.0 } else { 1.0 },
                );
                (s.component_mul(&(size * 0.5)), s / 3f64.sqrt(), z)
            })
            .collect(),
        Shape::Mesh { .. } => p
            .mesh
            .as_ref()
            .map_or_else(Vec::new, MeshData::sharp_features),
    };
    local
        .into_iter()
        .map(|(pt, d, v)| {
            let w = p.pose.transform_point(&Point3::from(pt)).coords;
            (w, p.pose.rotation * d, p.rigid.at(&w) + p.pose.rotation * v)
        })
        .collect()
}

/// The report of mesh collider `index` (labelled `label`, `vertices` as given) from its
/// analysis; a skinned body's own welding stands for the mesh's.
fn mesh_report(
    index: usize,
    label: String,
    motion: &Motion,
    vertices: usize,
    a: &MeshAnalysis,
) -> MeshReport {
    let weld = match motion.deformation() {
        Some(Deformation::Skinned(track)) => *track.body().weld_report(),
        _ => WeldReport {
            vertices,
            welded_vertices: a.weld.len(),
            kept_split: a.weld.kept_split,
        },
    };
    MeshReport {
        collider: index,
        label,
        weld,
        triangles: a.triangles.len(),
        boundary_edges: a.boundary_edges,
        components: a.components,
        closed_components: a.closed_components,
    }
}
