//! Mesh colliders: welding, topology, and the prepared mesh the contact queries use.
//!
//! A mesh is welded by identical position ([`weld`]), split into edge-connected components,
//! and each component classified closed or open ([`analysis`]). The closed components form
//! one part and the open ones another, each with its own hierarchy (parry3d-f64 `TriMesh`)
//! and face adjacency ([`topology`]):
//!
//! * closed part: signed distance, inside by the angle-weighted pseudo-normal of the feature
//!   the closest point lies on (Baerentzen & Aanaes 2005, exact for a closed, consistently
//!   oriented mesh), and a ray for the side of points farther than the query range;
//! * open part: unsigned distance, the normal pointing from the surface to the point: an open
//!   surface has no inside, so the cloth is kept away on whichever side it is.
//!
//! A query answers with the part that gives the smaller signed distance (the closed part on a
//! tie), so a point inside a closed component is pushed out of it even near an open one.

pub(crate) mod analysis;
mod topology;
pub(crate) mod weld;

use cloth_mesh::Vec3;
use parry3d_f64::math::Vector as PVec;
use parry3d_f64::query::{PointQueryWithLocation, Ray, RayCast};
use parry3d_f64::shape::{TriMesh, TriMeshFlags};

use super::gltf::SampleCache;
use super::motion::{Deformation, Motion, Window};
use super::shapes::LocalProj;
use crate::error::CollideError;
use crate::geometry::bvh::Aabb;
use crate::geometry::primitives::{closest_on_triangle, triangle_normal};
use analysis::MeshAnalysis;
use topology::{Topology, sharp_vertices};

fn to_p(v: &Vec3) -> PVec {
    PVec::new(v.x, v.y, v.z)
}
fn from_p(v: &PVec) -> Vec3 {
    Vec3::new(v.x, v.y, v.z)
}

/// A mesh collider prepared for queries, in its local frame.
#[derive(Clone, Debug)]
pub(crate) struct MeshData {
    /// First original copy of each welded vertex (`None` when nothing was welded): gathers a
    /// mesh sequence's frames.
    first: Option<Vec<usize>>,
    /// All triangles in welded indices, the closed ones oriented outward.
    indices: Vec<[usize; 3]>,
    /// The closed components, if any.
    closed: Option<Part>,
    /// The open components, if any.
    open: Option<Part>,
    /// Local bounding box of the vertices at the current time.
    bounds: Aabb,
    /// Local vertex positions and velocities (m, m/s) at the current time, welded.
    local_pos: Vec<Vec3>,
    local_vel: Vec<Vec3>,
    /// Sharp convex vertices of the closed part (feature candidates).
    sharp: Vec<usize>,
    /// The samples of a skinned body around the current time.
    cache: SampleCache,
}

/// The closed or the open components of a mesh collider.
#[derive(Clone, Debug)]
struct Part {
    /// parry's mesh over all welded vertices and this part's triangles: its hierarchy
    /// (refitted on every update) answers the closest-point queries. Built without parry's
    /// pseudo-normals: on a deforming mesh parry recomputes them for every vertex and edge at
    /// every update (hashing every edge), while a query needs one pseudo-normal, which
    /// [`Topology`] gives from the current positions.
    tri: TriMesh,
    /// The part's triangles (welded indices; parry's triangle ids index this).
    indices: Vec<[usize; 3]>,
    /// Faces around each vertex and edge of the part, for the pseudo-normals.
    topology: Topology,
}

impl Part {
    fn new(label: &str, pos: &[Vec3], indices: Vec<[usize; 3]>) -> Result<Part, CollideError> {
        let pv: Vec<PVec> = pos.iter().map(to_p).collect();
        let pi: Vec<[u32; 3]> = indices.iter().map(|t| t.map(|i| i as u32)).collect();
        let tri = TriMesh::with_flags(pv, pi, TriMeshFlags::DEFORMABLE).map_err(|e| {
            CollideError::BadFrames {
                collider: label.to_string(),
                reason: format!("mesh rejected by parry: {e:?}"),
            }
        })?;
        let topology = Topology::new(pos.len(), &indices);
        Ok(Part {
            tri,
            indices,
            topology,
        })
    }
}

impl MeshData {
    /// Prepares the welded mesh of `analysis` (of the collider's `vertices`): the closed
    /// components oriented outward (all flipped when they enclose a negative volume).
    pub fn new(
        label: &str,
        vertices: &[Vec3],
        analysis: &MeshAnalysis,
    ) -> Result<MeshData, CollideError> {
        let weld = &analysis.weld;
        let pos = if weld.is_identity() {
            vertices.to_vec()
        } else {
            weld.gather(vertices)
        };
        let indices: Vec<[usize; 3]> = analysis
            .triangles
            .iter()
            .zip(&analysis.closed)
            .map(|(t, &c)| {
                if c && analysis.flip {
                    [t[0], t[2], t[1]]
                } else {
                    *t
                }
            })
            .collect();
        let part = |closed: bool| -> Result<Option<Part>, CollideError> {
            let tris: Vec<[usize; 3]> = (indices.iter().zip(&analysis.closed))
                .filter(|(_, c)| **c == closed)
                .map(|(t, _)| *t)
                .collect();
            (!tris.is_empty())
                .then(|| Part::new(label, &pos, tris))
                .transpose()
        };
        let (closed, open) = (part(true)?, part(false)?);
        let sharp = closed
            .as_ref()
            .map_or_else(Vec::new, |p| sharp_vertices(&pos, &p.indices, &p.topology));
        Ok(MeshData {
            first: (!weld.is_identity()).then(|| weld.first.clone()),
            indices,
            closed,
            open,
            bounds: Aabb::from_points(pos.iter()),
            local_vel: vec![Vec3::zeros(); pos.len()],
            local_pos: pos,
            sharp,
            cache: SampleCache::default(),
        })
    }

    /// Welded vertex positions (local, m) at the current time.
    pub fn positions(&self) -> &[Vec3] {
        &self.local_pos
    }

    /// All triangles (welded indices, closed components oriented outward).
    pub fn triangles(&self) -> &[[usize; 3]] {
        &self.indices
    }

    /// Local bounding box of the vertices at the current time.
    pub fn bounds(&self) -> Aabb {
        self.bounds
    }

    /// Moves a deforming mesh to time t (s): vertices and velocities from the `motion`'s
    /// frames (a skinned body's samples posed through the cache), hierarchies refitted.
    /// Nothing happens for a motion that does not deform.
    pub fn update(&mut self, motion: &Motion, t: f64) {
        let Some(d) = motion.deformation() else {
            return;
        };
        let Some(window) = d.window(t) else {
            return;
        };
        let (pos, vel) = match (d, window) {
            (Deformation::Skinned(track), Window::Hold(k)) => {
                window.state(self.cache.one(track, k), &[], d.fps())
            }
            (Deformation::Skinned(track), Window::Mix(k, _)) => {
                let (a, b) = self.cache.pair(track, k);
                window.state(a, b, d.fps())
            }
            (Deformation::Frames { frames, fps, .. }, Window::Hold(k)) => {
                window.state(&frames[k], &[], fps)
            }
            (Deformation::Frames { frames, fps, .. }, Window::Mix(k, _)) => {
                window.state(&frames[k], &frames[k + 1], fps)
            }
        };
        let (pos, vel) = match &self.first {
            Some(first) => (
                first.iter().map(|&v| pos[v]).collect(),
                first.iter().map(|&v| vel[v]).collect(),
            ),
            None => (pos, vel),
        };
        let pv: Vec<PVec> = pos.iter().map(to_p).collect();
        for part in [&mut self.closed, &mut self.open].into_iter().flatten() {
            part.tri.set_vertices(&pv);
        }
        self.bounds = Aabb::from_points(pos.iter());
        self.local_pos = pos;
        self.local_vel = vel;
    }

    /// Local position, outward unit direction and local velocity of each sharp vertex of the
    /// closed part (open parts have no outside to point to).
    pub fn sharp_features(&self) -> Vec<(Vec3, Vec3, Vec3)> {
        let Some(p) = &self.closed else {
            return Vec::new();
        };
        self.sharp
            .iter()
            .filter_map(|&i| {
                let n = p.topology.vertex_normal(&self.local_pos, &p.indices, i);
                let l = n.norm();
                (l > 0.0).then(|| (self.local_pos[i], n / l, self.local_vel[i]))
            })
            .collect()
    }

    /// Closest surface point to the local point `q`, with the signed distance (closed part) or
    /// the distance (open part), the normal, and the local surface velocity interpolated with
    /// barycentric weights. With a finite `within` (m) a point outside every closed component
    /// and farther than that from the surface may get `None`.
    pub fn query(&self, q: &Vec3, within: f64) -> Option<(LocalProj, Option<Vec3>)> {
        let closed = self
            .closed
            .as_ref()
            .and_then(|p| self.closed_query(p, q, within));
        let Some(open) = &self.open else {
            return closed;
        };
        let open = self.open_query(open, q, within);
        match (closed, open) {
            (Some(c), Some(o)) => Some(if o.0.distance < c.0.distance { o } else { c }),
            (c, o) => c.or(o),
        }
    }
}

impl MeshData {
    /// The closed part's answer: inside or outside by the angle-weighted pseudo-normal of the
    /// feature (face, edge or vertex) the closest point lies on.
    ///
    /// With a finite `within` (m), the search first looks only that far. Most cloth vertices
    /// near a body are farther than that, and for those only the side matters: a ray from the
    /// point whose first crossing of the surface enters it, or that meets no triangle, shows
    /// the point is outside, and the answer is `None` ([`MeshData::ray_shows_inside`]); a point
    /// the ray shows inside gets the closest point whatever its distance.
    fn closed_query(&self, p: &Part, q: &Vec3, within: f64) -> Option<(LocalProj, Option<Vec3>)> {
        let pq = to_p(q);
        let found = if within.is_finite() {
            match p.tri.project_local_point_and_get_location_with_max_dist(
                pq,
                false,
                within.max(0.0),
            ) {
                Some(found) => found,
                None if !self.ray_shows_inside(p, q) => return None,
                None => p.tri.project_local_point_and_get_location(pq, false),
            }
        } else {
            p.tri.project_local_point_and_get_location(pq, false)
        };
        let (proj, (tri_id, location)) = found;
        let pseudo =
            p.topology
                .pseudo_normal(&self.local_pos, &p.indices, tri_id as usize, &location);
        let point = from_p(&proj.point);
        let sign = if (q - point).dot(&pseudo) <= 0.0 {
            -1.0
        } else {
            1.0
        };
        self.answer(p, q, point, tri_id as usize, sign)
    }

    /// The open part's answer: the distance to the closest point, positive on either side.
    fn open_query(&self, p: &Part, q: &Vec3, within: f64) -> Option<(LocalProj, Option<Vec3>)> {
        let pq = to_p(q);
        let (proj, (tri_id, _)) = if within.is_finite() {
            p.tri
                .project_local_point_and_get_location_with_max_dist(pq, false, within.max(0.0))?
        } else {
            p.tri.project_local_point_and_get_location(pq, false)
        };
        self.answer(p, q, from_p(&proj.point), tri_id as usize, 1.0)
    }

    /// The contact of `q` with its closest `point` on triangle `tri_id` of part `p`, on the
    /// `sign` side (-1 inside): the normal along `q - point` (the triangle's normal when `q`
    /// is on the surface) and the velocity interpolated with barycentric weights.
    fn answer(
        &self,
        p: &Part,
        q: &Vec3,
        point: Vec3,
        tri_id: usize,
        sign: f64,
    ) -> Option<(LocalProj, Option<Vec3>)> {
        let tri = *p.indices.get(tri_id)?;
        let [a, b, c] = tri.map(|i| self.local_pos[i]);
        // Barycentric weights of the projection for the velocity.
        let (w, _) = closest_on_triangle(q, &a, &b, &c);
        let diff = q - point;
        let dist = diff.norm();
        let scale = (b - a).norm() + (c - a).norm();
        let normal = if dist > 1e-12 * scale {
            diff * (sign / dist)
        } else {
            triangle_normal(&a, &b, &c)?
        };
        let v = &self.local_vel;
        let vel = v[tri[0]] * w[0] + v[tri[1]] * w[1] + v[tri[2]] * w[2];
        Some((
            LocalProj {
                distance: sign * dist,
                normal,
                point,
            },
            Some(vel),
        ))
    }

    /// Whether the ray from `q` away from the mesh's centre (tilted by a little of
    /// [`SIDE_RAY`]) first meets the closed part from inside: a triangle whose outward normal
    /// it travels along. Exact for closed, consistently oriented components that do not
    /// intersect, like the pseudo-normal test. Pointing away from the body, the ray from a
    /// point outside it usually leaves the hierarchy at once. The direction depends only on
    /// `q` and the mesh, so results are reproducible.
    fn ray_shows_inside(&self, p: &Part, q: &Vec3) -> bool {
        let out = q - self.bounds.centre();
        let l = out.norm();
        let radial = if l > 0.0 && l.is_finite() {
            out / l
        } else {
            Vec3::zeros()
        };
        let dir = (radial + Vec3::from(SIDE_RAY) * 0.01).normalize();
        let ray = Ray::new(to_p(q), to_p(&dir));
        let Some(hit) = p
            .tri
            .cast_local_ray_and_get_normal(&ray, f64::INFINITY, false)
        else {
            return false;
        };
        let Some(&[a, b, c]) = p.indices.get(hit.subshape as usize) else {
            return false;
        };
        let [a, b, c] = [a, b, c].map(|i| self.local_pos[i]);
        (b - a).cross(&(c - a)).dot(&dir) > 0.0
    }
}

/// A fixed direction mixed into the side-test ray of [`MeshData::ray_shows_inside`], away from
/// the axes and diagonals, along which meshes' edges and faces tend to line up.
const SIDE_RAY: [f64; 3] = [0.267_261_2, 0.801_783_7, 0.534_522_5];
