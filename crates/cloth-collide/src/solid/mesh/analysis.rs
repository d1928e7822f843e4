//! The topology of a welded mesh collider: edges, components, which of them are closed, and
//! the orientation of the closed ones.

use cloth_mesh::Vec3;

use super::weld::Weld;
use crate::error::CollideError;
use crate::geometry::bvh::Aabb;
use crate::solid::collider::MIN_RELATIVE_VOLUME;

/// A mesh collider after welding, checked and split into closed and open parts.
#[derive(Clone, Debug)]
pub(crate) struct MeshAnalysis {
    /// Original vertex to welded vertex.
    pub weld: Weld,
    /// Triangles in welded indices, in the given order and winding.
    pub triangles: Vec<[usize; 3]>,
    /// Per triangle: whether its component is closed.
    pub closed: Vec<bool>,
    /// Edges used by one triangle.
    pub boundary_edges: usize,
    /// Edge-connected components.
    pub components: usize,
    /// Components without a boundary edge.
    pub closed_components: usize,
    /// Whether the closed components together enclose a negative volume (wound inward): they
    /// are flipped when the collider is prepared.
    pub flip: bool,
}

/// Checks the welded topology of a mesh whose indices are in range and whose triangles are not
/// degenerate: every edge used by one triangle (boundary) or by two traversing it in opposite
/// directions, never by three or more; the closed components enclose a volume. Errors name
/// vertices by their indices as given (the first copy of a welded vertex).
pub(crate) fn analyse(
    label: &str,
    vertices: &[Vec3],
    triangles: &[[usize; 3]],
    weld: Weld,
) -> Result<MeshAnalysis, CollideError> {
    let welded: Vec<[usize; 3]> = triangles.iter().map(|t| t.map(|i| weld.map[i])).collect();
    let edges = edge_topology(label, &welded, &weld.first)?;
    let (components, closed, closed_components) = components(welded.len(), &edges);
    let positions = weld.gather(vertices);
    // Orientation and volume of the closed part, in triangle order.
    let volume = welded
        .iter()
        .zip(&closed)
        .filter(|(_, c)| **c)
        .map(|(t, _)| positions[t[0]].dot(&positions[t[1]].cross(&positions[t[2]])))
        .sum::<f64>();
    if closed_components > 0 {
        // A closed surface that encloses (almost) nothing has no inside: contacts against it
        // would throw the cloth about. Refuse it rather than guess.
        let scale = if edges.boundary == 0 {
            bbox_diag(vertices.iter())
        } else {
            bbox_diag(
                welded
                    .iter()
                    .zip(&closed)
                    .filter(|(_, c)| **c)
                    .flat_map(|(t, _)| t.iter().map(|&i| &positions[i])),
            )
        };
        let enclosed = volume.abs() / 6.0;
        if !(enclosed > MIN_RELATIVE_VOLUME * scale.powi(3)) {
            return Err(CollideError::FlatMesh {
                collider: label.to_string(),
                volume: enclosed,
                diagonal: scale,
            });
        }
    }
    Ok(MeshAnalysis {
        weld,
        triangles: welded,
        closed,
        boundary_edges: edges.boundary,
        components,
        closed_components,
        flip: volume < 0.0,
    })
}

/// Edges of a welded mesh: the pairs of triangles sharing an edge, and the triangles with a
/// boundary edge.
struct Edges {
    /// Triangle pairs across interior edges.
    pairs: Vec<(usize, usize)>,
    /// Per triangle: whether one of its edges is a boundary edge.
    on_boundary: Vec<bool>,
    /// Number of boundary edges.
    boundary: usize,
}

/// Sorts the directed half-edges of `tris` by undirected edge and checks every edge: one
/// triangle (boundary) or two traversing it in opposite directions. `first` names a welded
/// vertex by its first original copy in errors.
fn edge_topology(label: &str, tris: &[[usize; 3]], first: &[usize]) -> Result<Edges, CollideError> {
    let mut half: Vec<(usize, usize, bool, usize)> = Vec::with_capacity(3 * tris.len());
    for (t, tri) in tris.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            half.push((a.min(b), a.max(b), a < b, t));
        }
    }
    half.sort_unstable();
    let mut edges = Edges {
        pairs: Vec::with_capacity(half.len() / 2),
        on_boundary: vec![false; tris.len()],
        boundary: 0,
    };
    let mut i = 0;
    while i < half.len() {
        let mut j = i + 1;
        while j < half.len() && half[j].0 == half[i].0 && half[j].1 == half[i].1 {
            j += 1;
        }
        let (a, b) = (first[half[i].0], first[half[i].1]);
        match j - i {
            1 => {
                edges.boundary += 1;
                edges.on_boundary[half[i].3] = true;
            }
            2 if half[i].2 == half[i + 1].2 => {
                return Err(CollideError::InconsistentWinding {
                    collider: label.to_string(),
                    a,
                    b,
                    t0: half[i].3,
                    t1: half[i + 1].3,
                });
            }
            2 => edges.pairs.push((half[i].3, half[i + 1].3)),
            n => {
                return Err(CollideError::NonManifoldEdge {
                    collider: label.to_string(),
                    a,
                    b,
                    count: n,
                });
            }
        }
        i = j;
    }
    Ok(edges)
}

/// Edge-connected components of `n` triangles: their number, whether each triangle's
/// component is closed (no boundary edge), and the number of closed components.
fn components(n: usize, edges: &Edges) -> (usize, Vec<bool>, usize) {
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for &(s, t) in &edges.pairs {
        let (rs, rt) = (root(&mut parent, s), root(&mut parent, t));
        if rs != rt {
            parent[rs.max(rt)] = rs.min(rt);
        }
    }
    let mut open_root = vec![false; n];
    let roots: Vec<usize> = (0..n).map(|t| root(&mut parent, t)).collect();
    for t in 0..n {
        if edges.on_boundary[t] {
            open_root[roots[t]] = true;
        }
    }
    let components = (0..n).filter(|&t| roots[t] == t).count();
    let closed_components = (0..n).filter(|&t| roots[t] == t && !open_root[t]).count();
    let closed = roots.iter().map(|&r| !open_root[r]).collect();
    (components, closed, closed_components)
}

/// Diagonal length of the bounding box of the points (1 if zero or not finite).
pub(crate) fn bbox_diag<'a>(p: impl IntoIterator<Item = &'a Vec3>) -> f64 {
    let b = Aabb::from_points(p);
    let d = (b.max - b.min).norm();
    if d > 0.0 && d.is_finite() { d } else { 1.0 }
}
