//! Prepared colliders at a time and cloth-solid proximity queries.

use cloth_mesh::Vec3;
use nalgebra::{Isometry3, Point3};
use parry3d_f64::math::Vector as PVec;
use parry3d_f64::query::{PointQueryWithLocation, Ray, RayCast};
use parry3d_f64::shape::{TriMesh, TriMeshFlags, TrianglePointLocation};
use rayon::prelude::*;

use super::collider::{Collider, Shape};
use super::motion::RigidVelocity;
use super::shapes::{self, LocalProj};
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
    /// Unit outward surface normal of the solid at `surface_point` (world), pointing from the
    /// solid towards the vertex when it is outside.
    pub normal: Vec3,
    /// Signed distance (m) from the vertex to the solid's surface: negative inside. The
    /// collider's and the cloth's thicknesses are *not* subtracted.
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

#[derive(Clone, Debug)]
struct MeshData {
    /// parry's mesh: its hierarchy (refitted on every update) answers the closest-point
    /// queries. Built without parry's pseudo-normals: on a deforming mesh parry recomputes them
    /// for every vertex and edge at every update (hashing every edge), while a query needs one
    /// pseudo-normal, which [`Topology`] gives from the current positions.
    tri: TriMesh,
    /// Triangles (orientation fixed outward).
    indices: Vec<[usize; 3]>,
    /// Faces around each vertex and edge, for the pseudo-normals.
    topology: Topology,
    /// Local bounding box of the vertices at the current time.
    bounds: Aabb,
    /// Local vertex positions and velocities (m, m/s) at the current time.
    local_pos: Vec<Vec3>,
    local_vel: Vec<Vec3>,
    /// Sharp convex vertices (feature candidates).
    sharp: Vec<usize>,
}

/// Number of rim points per cap edge used as features of a cylinder.
const CYLINDER_RIM_FEATURES: usize = 16;
/// A mesh vertex is sharp when an incident face normal deviates from its pseudo-normal by more
/// than this angle (degrees).
const SHARP_ANGLE_DEG: f64 = 25.0;

fn to_p(v: &Vec3) -> PVec {
    PVec::new(v.x, v.y, v.z)
}
fn from_p(v: &PVec) -> Vec3 {
    Vec3::new(v.x, v.y, v.z)
}

/// Colliders prepared for queries at one time: poses, velocities, refitted mesh hierarchies.
/// Reusable across steps: call [`ColliderSet::update`] to move it to another time.
#[derive(Clone, Debug)]
pub struct ColliderSet {
    colliders: Vec<Collider>,
    prepared: Vec<Prepared>,
    time: f64,
}

impl ColliderSet {
    /// Validates every collider (errors name it by name and index), builds mesh hierarchies and
    /// places everything at t = 0. Inward-wound meshes (negative enclosed volume) are flipped.
    pub fn new(colliders: Vec<Collider>) -> Result<Self, CollideError> {
        let mut prepared = Vec::with_capacity(colliders.len());
        for (i, c) in colliders.iter().enumerate() {
            let label = c.label(Some(i));
            c.validate_labeled(&label)?;
            let mesh = match &c.shape {
                Shape::Mesh {
                    vertices,
                    triangles,
                } => Some(build_mesh(&label, vertices, triangles)?),
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
            if let (Some(m), Some((pos, vel))) = (p.mesh.as_mut(), c.sequence_state(t)) {
                let pv: Vec<PVec> = pos.iter().map(to_p).collect();
                m.tri.set_vertices(&pv);
                m.bounds = Aabb::from_points(pos.iter());
                m.local_pos = pos;
                m.local_vel = vel;
            }
            p.aabb = local_bounds(c, p.mesh.as_ref()).map(|b| transform_aabb(&p.pose, &b));
            p.features = features(c, p);
        }
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
    /// colliders. Analytic shapes are exact, not tessellated, and count 0.
    pub fn vertex_count(&self) -> usize {
        self.prepared
            .iter()
            .filter_map(|p| p.mesh.as_ref())
            .map(|m| m.local_pos.len())
            .sum()
    }

    /// Solid triangle count for statistics: the sum over mesh colliders (analytic shapes: 0).
    pub fn triangle_count(&self) -> usize {
        self.prepared
            .iter()
            .filter_map(|p| p.mesh.as_ref())
            .map(|m| m.indices.len())
            .sum()
    }

    /// World-space triangle mesh of collider `i` at the current time (for output): a mesh
    /// collider's current vertices, or [`Shape::tessellate`] with `segments` for analytic
    /// shapes, placed by the current pose. `None` if `i` is out of range.
    pub fn world_mesh(&self, i: usize, segments: usize) -> Option<(Vec<Vec3>, Vec<[usize; 3]>)> {
        let (c, p) = (self.colliders.get(i)?, self.prepared.get(i)?);
        let (v, t) = match &p.mesh {
            Some(m) => (m.local_pos.clone(), m.indices.clone()),
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
        out.clear();
        const CHUNK: usize = 512;
        let chunks: Vec<Vec<Contact>> = x
            .par_chunks(CHUNK)
            .enumerate()
            .map(|(ci, chunk)| {
                let mut local = Vec::new();
                for (k, p) in chunk.iter().enumerate() {
                    if let Some(mut c) = self.closest_contact(p, cloth_thickness, margin) {
                        c.vertex = ci * CHUNK + k;
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
    /// Features: box corners, capsule tips, 16 points on each cylinder rim, and mesh vertices
    /// that are convex and sharp (an incident face normal more than 25 degrees from the vertex
    /// pseudo-normal). For each feature, the cloth triangle (of `triangles`, positions `x`)
    /// whose closest point is nearest to it, if within `cloth_thickness + collider.thickness +
    /// margin` (m), gives one contact. `out` is cleared and filled ordered by (collider,
    /// feature). Triangles with out-of-range indices or degenerate/non-finite geometry are
    /// skipped. Spheres and planes have no features. Parallel and deterministic.
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
        let valid = |t: &[usize; 3]| t.iter().all(|&i| i < x.len());
        let boxes: Vec<Aabb> = triangles
            .iter()
            .map(|t| {
                if valid(t) {
                    Aabb::from_points(t.iter().map(|&i| &x[i]))
                } else {
                    Aabb::empty()
                }
            })
            .collect();
        let cloth = ClothTriangles {
            triangles,
            x,
            bvh: Bvh::build(&boxes),
            cloth_thickness,
            margin,
        };
        let jobs: Vec<(usize, usize)> = self
            .prepared
            .iter()
            .enumerate()
            .flat_map(|(ci, p)| (0..p.features.len()).map(move |f| (ci, f)))
            .collect();
        let found: Vec<Option<FeatureContact>> = jobs
            .par_chunks(64)
            .flat_map_iter(|chunk| {
                let mut stack = Vec::new();
                chunk
                    .iter()
                    .map(|&(ci, fi)| self.feature_contact(&cloth, ci, fi, &mut stack))
                    .collect::<Vec<_>>()
            })
            .collect();
        out.extend(found.into_iter().flatten());
    }

    /// Whether any feature comes within its range of the bounding box of the cloth's finite
    /// positions `x`. Most steps have no feature anywhere near the cloth: this test spares
    /// them building the triangle hierarchy.
    fn any_feature_near(&self, x: &[Vec3], cloth_thickness: f64, margin: f64) -> bool {
        let cloth_box = Aabb::from_points(x.iter().filter(|p| p.iter().all(|c| c.is_finite())));
        self.prepared.iter().zip(&self.colliders).any(|(p, c)| {
            let range = cloth_thickness + c.thickness + margin;
            let grown = cloth_box.inflated(range);
            p.features.iter().any(|(f, _, _)| grown.contains(f))
        })
    }

    /// The contact of feature `fi` of collider `ci` with the cloth triangle whose closest
    /// point is nearest to it (ties: the lowest triangle), if within range.
    fn feature_contact(
        &self,
        cloth: &ClothTriangles,
        ci: usize,
        fi: usize,
        stack: &mut Vec<u32>,
    ) -> Option<FeatureContact> {
        let c = &self.colliders[ci];
        let prep = &self.prepared[ci];
        let (f, dir, fvel) = prep.features[fi];
        let range = cloth.cloth_thickness + c.thickness + cloth.margin;
        if !(range > 0.0) || !range.is_finite() {
            return None;
        }
        let (triangles, x) = (cloth.triangles, cloth.x);
        let q = Aabb { min: f, max: f }.inflated(range);
        let mut best: Option<(f64, FeatureContact)> = None;
        cloth.bvh.query(&q, stack, |t| {
            let tri = triangles[t];
            if !tri.iter().all(|&i| i < x.len()) {
                return;
            }
            let [a, b, cc] = tri.map(|i| x[i]);
            let Some(n) = triangle_normal(&a, &b, &cc) else {
                return;
            };
            let (w, _) = closest_on_triangle(&f, &a, &b, &cc);
            let cp = a * w[0] + b * w[1] + cc * w[2];
            let d = (cp - f).norm();
            if !(d < range) {
                return;
            }
            let n = if n.dot(&dir) >= 0.0 { n } else { -n };
            let better = match &best {
                None => true,
                Some((bd, bc)) => d < *bd || (d == *bd && t < bc.triangle),
            };
            if better {
                best = Some((
                    d,
                    FeatureContact {
                        triangle: t,
                        vertices: tri,
                        weights: w,
                        collider: ci,
                        feature: fi,
                        feature_point: f,
                        normal: n,
                        distance: (cp - f).dot(&n),
                        surface_velocity: fvel,
                    },
                ));
            }
        });
        best.map(|(_, fc)| fc)
    }
}

/// The cloth triangles sharp features are tested against ([`ColliderSet::feature_contacts`]).
struct ClothTriangles<'a> {
    triangles: &'a [[usize; 3]],
    /// Cloth positions (m).
    x: &'a [Vec3],
    /// Hierarchy over the triangles' boxes (empty boxes for triangles with an index out of
    /// range).
    bvh: Bvh,
    /// Cloth thickness (m), added to a collider's thickness and `margin` for the range.
    cloth_thickness: f64,
    /// Contact margin (m).
    margin: f64,
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
        (Shape::Mesh { .. }, Some(m)) => mesh_query(m, &q, within)?,
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

/// Closest point on a closed mesh, inside or outside by the angle-weighted pseudo-normal of
/// the feature (face, edge or vertex) the closest point lies on (Baerentzen & Aanaes 2005,
/// "Signed distance computation using the angle weighted pseudonormal": exact for a closed,
/// consistently oriented mesh); also the local surface velocity (mesh sequences)
/// interpolated with barycentric weights.
///
/// With a finite `within` (m), the search first looks only that far. Most cloth vertices near a
/// body are farther than that (74% of the queries of the walking trousers), and for those only
/// the side matters: a ray from the point whose first crossing of the surface enters it, or
/// that meets no triangle, shows the point is outside, and the answer is `None`
/// ([`ray_shows_inside`]); a point the ray shows inside gets the closest point whatever its
/// distance.
fn mesh_query(m: &MeshData, q: &Vec3, within: f64) -> Option<(LocalProj, Option<Vec3>)> {
    let pq = to_p(q);
    let found = if within.is_finite() {
        match m
            .tri
            .project_local_point_and_get_location_with_max_dist(pq, false, within.max(0.0))
        {
            Some(found) => found,
            None if !ray_shows_inside(m, q) => return None,
            None => m.tri.project_local_point_and_get_location(pq, false),
        }
    } else {
        m.tri.project_local_point_and_get_location(pq, false)
    };
    let (proj, (tri_id, location)) = found;
    let tri = *m.indices.get(tri_id as usize)?;
    let [a, b, c] = tri.map(|i| m.local_pos[i]);
    // Barycentric weights of the projection for the velocity and a fallback normal.
    let (w, _) = closest_on_triangle(q, &a, &b, &c);
    let point = from_p(&proj.point);
    let diff = q - point;
    let dist = diff.norm();
    let pseudo = m
        .topology
        .pseudo_normal(&m.local_pos, &m.indices, tri_id as usize, &location);
    let sign = if diff.dot(&pseudo) <= 0.0 { -1.0 } else { 1.0 };
    let scale = (b - a).norm() + (c - a).norm();
    let normal = if dist > 1e-12 * scale {
        diff * (sign / dist)
    } else {
        triangle_normal(&a, &b, &c)?
    };
    let vel = m.local_vel[tri[0]] * w[0] + m.local_vel[tri[1]] * w[1] + m.local_vel[tri[2]] * w[2];
    Some((
        LocalProj {
            distance: sign * dist,
            normal,
            point,
        },
        Some(vel),
    ))
}

/// A fixed direction mixed into the side-test ray of [`mesh_query`], away from the axes and
/// diagonals, along which meshes' edges and faces tend to line up.
const SIDE_RAY: [f64; 3] = [0.267_261_2, 0.801_783_7, 0.534_522_5];

/// Whether the ray from `q` away from the mesh's centre (tilted by a little of [`SIDE_RAY`])
/// first meets the surface from inside: a triangle whose outward normal it travels along.
/// Exact for a closed, consistently oriented mesh that does not intersect itself, like the
/// pseudo-normal test. Pointing away from the body, the ray from a point outside it usually
/// leaves the hierarchy at once. The direction depends only on `q` and the mesh, so results are
/// reproducible.
fn ray_shows_inside(m: &MeshData, q: &Vec3) -> bool {
    let out = q - m.bounds.centre();
    let l = out.norm();
    let radial = if l > 0.0 && l.is_finite() {
        out / l
    } else {
        Vec3::zeros()
    };
    let dir = (radial + Vec3::from(SIDE_RAY) * 0.01).normalize();
    let ray = Ray::new(to_p(q), to_p(&dir));
    let Some(hit) = m
        .tri
        .cast_local_ray_and_get_normal(&ray, f64::INFINITY, false)
    else {
        return false;
    };
    let Some(&[a, b, c]) = m.indices.get(hit.subshape as usize) else {
        return false;
    };
    let [a, b, c] = [a, b, c].map(|i| m.local_pos[i]);
    (b - a).cross(&(c - a)).dot(&dir) > 0.0
}

fn build_mesh(
    label: &str,
    vertices: &[Vec3],
    triangles: &[[usize; 3]],
) -> Result<MeshData, CollideError> {
    // Orient outward: flip every triangle if the enclosed volume is negative.
    let volume: f64 = triangles
        .iter()
        .map(|t| vertices[t[0]].dot(&vertices[t[1]].cross(&vertices[t[2]])))
        .sum();
    let indices: Vec<[usize; 3]> = if volume < 0.0 {
        triangles.iter().map(|t| [t[0], t[2], t[1]]).collect()
    } else {
        triangles.to_vec()
    };
    let pv: Vec<PVec> = vertices.iter().map(to_p).collect();
    let pi: Vec<[u32; 3]> = indices.iter().map(|t| t.map(|i| i as u32)).collect();
    let tri = TriMesh::with_flags(pv, pi, TriMeshFlags::DEFORMABLE).map_err(|e| {
        CollideError::BadFrames {
            collider: label.to_string(),
            reason: format!("mesh rejected by parry: {e:?}"),
        }
    })?;
    let topology = Topology::new(vertices.len(), &indices);
    let sharp = sharp_vertices(vertices, &indices, &topology);
    Ok(MeshData {
        tri,
        indices,
        topology,
        bounds: Aabb::from_points(vertices.iter()),
        local_pos: vertices.to_vec(),
        local_vel: vec![Vec3::zeros(); vertices.len()],
        sharp,
    })
}

/// The faces around each vertex and each edge of a mesh collider (fixed; the positions change),
/// so that the pseudo-normal of the one feature a query lands on is computed from the current
/// positions on demand.
#[derive(Clone, Debug)]
struct Topology {
    /// Faces of vertex `v`: `vertex_faces[vertex_ptr[v]..vertex_ptr[v + 1]]`.
    vertex_ptr: Vec<u32>,
    vertex_faces: Vec<u32>,
    /// Edge `k` of triangle `t` (parry's numbering: 0 = (a, b), 1 = (b, c), 2 = (c, a)) is
    /// edge `tri_edges[t][k]`; its faces are `edge_faces[edge_ptr[e]..edge_ptr[e + 1]]`.
    tri_edges: Vec<[u32; 3]>,
    edge_ptr: Vec<u32>,
    edge_faces: Vec<u32>,
}

impl Topology {
    fn new(vertices: usize, tris: &[[usize; 3]]) -> Self {
        let mut vertex_ptr = vec![0u32; vertices + 1];
        for t in tris {
            for &v in t {
                vertex_ptr[v + 1] += 1;
            }
        }
        for v in 0..vertices {
            vertex_ptr[v + 1] += vertex_ptr[v];
        }
        let mut fill = vertex_ptr.clone();
        let mut vertex_faces = vec![0u32; vertex_ptr[vertices] as usize];
        for (ti, t) in tris.iter().enumerate() {
            for &v in t {
                vertex_faces[fill[v] as usize] = ti as u32;
                fill[v] += 1;
            }
        }
        let mut ids: std::collections::HashMap<(usize, usize), u32> =
            std::collections::HashMap::with_capacity(tris.len() * 3 / 2);
        let mut count: Vec<u32> = Vec::new();
        let tri_edges: Vec<[u32; 3]> = tris
            .iter()
            .map(|t| {
                [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])].map(|(i, j)| {
                    let key = (i.min(j), i.max(j));
                    let next = ids.len() as u32;
                    let e = *ids.entry(key).or_insert(next);
                    if e as usize == count.len() {
                        count.push(0);
                    }
                    count[e as usize] += 1;
                    e
                })
            })
            .collect();
        let mut edge_ptr = vec![0u32; count.len() + 1];
        for (e, c) in count.iter().enumerate() {
            edge_ptr[e + 1] = edge_ptr[e] + c;
        }
        let mut fill = edge_ptr.clone();
        let mut edge_faces = vec![0u32; edge_ptr[count.len()] as usize];
        for (ti, es) in tri_edges.iter().enumerate() {
            for &e in es {
                edge_faces[fill[e as usize] as usize] = ti as u32;
                fill[e as usize] += 1;
            }
        }
        Topology {
            vertex_ptr,
            vertex_faces,
            tri_edges,
            edge_ptr,
            edge_faces,
        }
    }

    /// The faces of vertex `v`.
    fn faces_of(&self, v: usize) -> &[u32] {
        &self.vertex_faces[self.vertex_ptr[v] as usize..self.vertex_ptr[v + 1] as usize]
    }

    /// Unit normal of triangle `t` (zero if degenerate).
    fn face_normal(pos: &[Vec3], tris: &[[usize; 3]], t: u32) -> Vec3 {
        let [a, b, c] = tris[t as usize].map(|i| pos[i]);
        let n = (b - a).cross(&(c - a));
        let inv = 1.0 / n.norm();
        if inv.is_finite() && inv > 0.0 {
            n * inv
        } else {
            Vec3::zeros()
        }
    }

    /// Angle-weighted pseudo-normal of vertex `v` (not normalised): the unit normals of its
    /// faces weighted by their angles at `v`.
    fn vertex_normal(&self, pos: &[Vec3], tris: &[[usize; 3]], v: usize) -> Vec3 {
        self.faces_of(v).iter().fold(Vec3::zeros(), |acc, &t| {
            let tri = tris[t as usize];
            let k = tri.iter().position(|&i| i == v).unwrap_or(0);
            let (p, q, r) = (pos[tri[k]], pos[tri[(k + 1) % 3]], pos[tri[(k + 2) % 3]]);
            let (e1, e2) = (q - p, r - p);
            let (l1, l2) = (e1.norm(), e2.norm());
            let angle = if l1 > 0.0 && l2 > 0.0 {
                (e1.dot(&e2) / (l1 * l2)).clamp(-1.0, 1.0).acos()
            } else {
                0.0
            };
            acc + Self::face_normal(pos, tris, t) * angle
        })
    }

    /// Pseudo-normal (not normalised) of the feature of triangle `t` that a closest point at
    /// `location` lies on: the face normal inside the face, the sum of the unit normals of the
    /// faces on an edge, the angle-weighted normal at a vertex.
    fn pseudo_normal(
        &self,
        pos: &[Vec3],
        tris: &[[usize; 3]],
        t: usize,
        location: &TrianglePointLocation,
    ) -> Vec3 {
        match *location {
            TrianglePointLocation::OnVertex(k) => {
                self.vertex_normal(pos, tris, tris[t][(k as usize).min(2)])
            }
            TrianglePointLocation::OnEdge(k, _) => {
                let e = self.tri_edges[t][(k as usize).min(2)] as usize;
                self.edge_faces[self.edge_ptr[e] as usize..self.edge_ptr[e + 1] as usize]
                    .iter()
                    .fold(Vec3::zeros(), |acc, &f| {
                        acc + Self::face_normal(pos, tris, f)
                    })
            }
            TrianglePointLocation::OnFace(..) | TrianglePointLocation::OnSolid => {
                Self::face_normal(pos, tris, t as u32)
            }
        }
    }
}

/// Vertices that are convex (every neighbour on or behind the tangent plane of the
/// angle-weighted pseudo-normal) and sharp (some incident face normal deviates from it by more
/// than `SHARP_ANGLE_DEG`).
fn sharp_vertices(v: &[Vec3], tris: &[[usize; 3]], topology: &Topology) -> Vec<usize> {
    let cos_sharp = SHARP_ANGLE_DEG.to_radians().cos();
    (0..v.len())
        .filter(|&i| {
            let pn = topology.vertex_normal(v, tris, i);
            let l = pn.norm();
            if !(l > 0.0) {
                return false;
            }
            let p = pn / l;
            // Degenerate faces (zero normal) neither make a vertex sharp nor bound it.
            let faces = || {
                topology
                    .faces_of(i)
                    .iter()
                    .filter(|&&t| Topology::face_normal(v, tris, t) != Vec3::zeros())
            };
            let sharp = faces().any(|&t| Topology::face_normal(v, tris, t).dot(&p) < cos_sharp);
            let convex = faces().all(|&t| {
                tris[t as usize].iter().all(|&j| {
                    let e = v[j] - v[i];
                    e.dot(&p) <= 1e-9 * e.norm()
                })
            });
            sharp && convex
        })
        .collect()
}

/// Local bounding box of the solid (None for the unbounded plane).
fn local_bounds(c: &Collider, mesh: Option<&MeshData>) -> Option<Aabb> {
    let h = match &c.shape {
        Shape::Sphere { radius } => Vec3::repeat(*radius),
        Shape::Capsule { radius, length } => Vec3::new(*radius, 0.5 * length + radius, *radius),
        Shape::Cylinder { radius, length } => Vec3::new(*radius, 0.5 * length, *radius),
        Shape::Cuboid { size } => size * 0.5,
        Shape::Plane => return None,
        Shape::Mesh { .. } => return mesh.map(|m| m.bounds),
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
        Shape::Mesh { .. } => match &p.mesh {
            Some(m) => m
                .sharp
                .iter()
                .filter_map(|&i| {
                    let n = m.topology.vertex_normal(&m.local_pos, &m.indices, i);
                    let l = n.norm();
                    (l > 0.0).then(|| (m.local_pos[i], n / l, m.local_vel[i]))
                })
                .collect(),
            None => Vec::new(),
        },
    };
    local
        .into_iter()
        .map(|(pt, d, v)| {
            let w = p.pose.transform_point(&Point3::from(pt)).coords;
            (w, p.pose.rotation * d, p.rigid.at(&w) + p.pose.rotation * v)
        })
        .collect()
}
