//! The faces around each vertex and edge of a mesh collider part, for angle-weighted
//! pseudo-normals computed on demand from the current positions.

use cloth_mesh::Vec3;
use parry3d_f64::shape::TrianglePointLocation;

/// A mesh vertex is sharp when an incident face normal deviates from its pseudo-normal by more
/// than this angle (degrees).
const SHARP_ANGLE_DEG: f64 = 25.0;

/// The faces around each vertex and each edge of a mesh collider (fixed; the positions change),
/// so that the pseudo-normal of the one feature a query lands on is computed from the current
/// positions on demand.
#[derive(Clone, Debug)]
pub(crate) struct Topology {
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
    pub(crate) fn new(vertices: usize, tris: &[[usize; 3]]) -> Self {
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
    pub(crate) fn faces_of(&self, v: usize) -> &[u32] {
        &self.vertex_faces[self.vertex_ptr[v] as usize..self.vertex_ptr[v + 1] as usize]
    }

    /// Unit normal of triangle `t` (zero if degenerate).
    pub(crate) fn face_normal(pos: &[Vec3], tris: &[[usize; 3]], t: u32) -> Vec3 {
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
    pub(crate) fn vertex_normal(&self, pos: &[Vec3], tris: &[[usize; 3]], v: usize) -> Vec3 {
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
    pub(crate) fn pseudo_normal(
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
pub(crate) fn sharp_vertices(v: &[Vec3], tris: &[[usize; 3]], topology: &Topology) -> Vec<usize> {
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
