//! The validated cloth mesh: positions, rest (u, v) coordinates, topology and rest data.

use nalgebra::{Matrix2, Rotation3};

use crate::{MeshError, Vec2, Vec3};

/// Relative threshold for rest-space degeneracy: a triangle is degenerate when its rest area
/// is at most this times the square of its longest rest edge (an equilateral triangle has 0.43).
pub const DEGENERATE_RELATIVE_AREA: f64 = 1e-12;

/// Marker in [`Edge::tris`] for the missing second triangle of a boundary edge.
pub const NO_TRIANGLE: usize = usize::MAX;

/// Interior edge with its two triangles: the bend stencil.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hinge {
    /// `[v0, v1, v2, v3]`: `(v0, v1)` is the shared edge, ordered as it appears in triangle
    /// `tris[0]`, so `tris[0]` winds `(v0, v1, v2)` and `tris[1]` winds `(v1, v0, v3)`;
    /// `v2`, `v3` are the opposite vertices.
    pub v: [usize; 4],
    /// The two triangles: `tris[0] < tris[1]` (the same order as in [`Edge::tris`]).
    pub tris: [usize; 2],
    /// Index into [`ClothMesh::edges`].
    pub edge: usize,
}

/// An undirected mesh edge with the triangles that contain it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The two vertices, `v[0] < v[1]`.
    pub v: [usize; 2],
    /// The triangles containing the edge, smaller index first; `tris[1]` is
    /// [`NO_TRIANGLE`] (`usize::MAX`) on a boundary edge.
    pub tris: [usize; 2],
}

impl Edge {
    /// True when the edge has only one triangle.
    pub fn is_boundary(&self) -> bool {
        self.tris[1] == NO_TRIANGLE
    }
}

/// A validated triangle mesh for cloth.
///
/// Holds world positions (m) — one per vertex, a vertex is one particle — and **rest (u, v)
/// coordinates per triangle corner** (m, the flat material space in which each triangle is
/// unstretched), triangles counter-clockwise in (u, v), and topology derived once at
/// construction: unique edges, boundary edges, hinges (bend stencils), vertex to triangle
/// adjacency, the symmetric vertex-pair sparsity pattern, rest areas, the inverse rest basis
/// of each triangle and rest lengths per edge. Topology is immutable; only positions can change.
///
/// Rest coordinates belong to corners, not to vertices: a vertex shared by several triangles
/// may have different (u, v) in each (a UV seam, or triangles flattened one by one from a
/// modelled surface), and each triangle takes its rest shape from its own corners. Where the
/// two triangles of an edge see it in different frames, [`ClothMesh::rest_map`] carries one
/// frame onto the other. Meshes built from one (u, v) per vertex ([`ClothMesh::new`], the
/// builders, sewing patterns) also keep that per-vertex chart ([`ClothMesh::vertex_rest`]).
///
/// Invariants (checked by [`ClothMesh::new`] and [`ClothMesh::from_corner_rest`]): at least
/// one vertex and one triangle; every vertex used by some triangle; finite coordinates; every
/// triangle has three distinct in-range vertices, positive rest area and counter-clockwise
/// rest winding; every edge has at most two triangles which traverse it in opposite
/// directions (an oriented manifold with boundary; non-manifold *vertices*, such as two fans
/// touching at a point, are allowed).
#[derive(Clone, Debug)]
pub struct ClothMesh {
    positions: Vec<Vec3>,
    corner_rest: Vec<[Vec2; 3]>,
    vertex_rest: Option<Vec<Vec2>>,
    triangles: Vec<[usize; 3]>,
    edges: Vec<Edge>,
    edge_rest: Vec<f64>,
    boundary_edges: Vec<usize>,
    hinges: Vec<Hinge>,
    vt_offsets: Vec<usize>,
    vt_indices: Vec<usize>,
    vertex_pairs: Vec<(usize, usize)>,
    rest_areas: Vec<f64>,
    rest_inverse: Vec<Matrix2<f64>>,
    total_rest_area: f64,
    original: Vec<usize>,
}

/// How one triangle's rest (u, v) frame maps onto a neighbouring triangle's across their
/// shared edge: the similarity (rotation, uniform scale, translation) that carries the
/// neighbour's copy of the edge exactly onto this triangle's copy. See [`ClothMesh::rest_map`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RestMap {
    /// Both triangles give the shared edge the same rest coordinates (one chart).
    Identity,
    /// `q -> to + factor * (q - from)` with `factor` a complex number `(re, im)` (rotation
    /// by `atan2(im, re)`, scale `|factor|`).
    Similarity {
        /// Complex multiplier `(re, im)`.
        factor: Vec2,
        /// Rest coordinates of the edge's first vertex in the neighbour's frame (m).
        from: Vec2,
        /// Rest coordinates of the same vertex in this triangle's frame (m).
        to: Vec2,
    },
}

impl RestMap {
    /// Maps neighbour rest coordinates `q` (m) into this triangle's frame.
    pub fn apply(&self, q: Vec2) -> Vec2 {
        match self {
            RestMap::Identity => q,
            RestMap::Similarity { factor, from, to } => {
                let d = q - from;
                to + Vec2::new(
                    factor.x * d.x - factor.y * d.y,
                    factor.x * d.y + factor.y * d.x,
                )
            }
        }
    }

    /// `(cos, sin)` of the rotation from the neighbour's frame to this one; `None` for
    /// [`RestMap::Identity`] (no rotation, exactly).
    pub fn rotation(&self) -> Option<(f64, f64)> {
        match self {
            RestMap::Identity => None,
            RestMap::Similarity { factor, .. } => {
                let l = factor.norm();
                (l > 0.0 && l.is_finite()).then(|| (factor.x / l, factor.y / l))
            }
        }
    }
}

impl ClothMesh {
    /// Validates and builds topology from **one rest coordinate per vertex** (the builders'
    /// and sewing patterns' form). `positions`: world (m); `rest`: (u, v) per vertex (m);
    /// `triangles`: vertex indices, counter-clockwise in (u, v). Every corner of vertex `v`
    /// gets `rest[v]`; [`Self::vertex_rest`] returns `rest`.
    ///
    /// Triangles whose rest winding is clockwise are rejected with
    /// [`MeshError::ClockwiseRestTriangle`] rather than flipped, so the caller's triangle
    /// order and orientation are kept exactly. Checks run in the order: empty, lengths,
    /// finite coordinates, indices and repeated vertices, rest degeneracy and winding, edge
    /// manifoldness and winding consistency, isolated vertices; the first failure is returned.
    pub fn new(
        positions: Vec<Vec3>,
        rest: Vec<Vec2>,
        triangles: Vec<[usize; 3]>,
    ) -> Result<Self, MeshError> {
        let n = positions.len();
        check_not_empty(n, &triangles)?;
        if rest.len() != n {
            return Err(MeshError::LengthMismatch {
                what: "rest coordinates",
                expected: n,
                found: rest.len(),
            });
        }
        check_positions(&positions)?;
        if let Some(vertex) = rest
            .iter()
            .position(|r| !(r.x.is_finite() && r.y.is_finite()))
        {
            return Err(MeshError::NonFiniteRest { vertex });
        }
        check_indices(&triangles, n)?;
        let corners = triangles.iter().map(|t| t.map(|v| rest[v])).collect();
        Self::build(positions, corners, triangles)
    }

    /// Validates and builds topology from **rest coordinates per triangle corner**:
    /// `corner_rest[t][k]` is the (u, v) (m) of corner `k` of triangle `t`. The checks are
    /// those of [`ClothMesh::new`] (a non-finite corner is
    /// [`MeshError::NonFiniteCornerRest`]). When every corner of each vertex has the same
    /// coordinates (bit for bit), [`Self::vertex_rest`] returns them.
    pub fn from_corner_rest(
        positions: Vec<Vec3>,
        corner_rest: Vec<[Vec2; 3]>,
        triangles: Vec<[usize; 3]>,
    ) -> Result<Self, MeshError> {
        check_not_empty(positions.len(), &triangles)?;
        if corner_rest.len() != triangles.len() {
            return Err(MeshError::LengthMismatch {
                what: "corner rest coordinates",
                expected: triangles.len(),
                found: corner_rest.len(),
            });
        }
        check_positions(&positions)?;
        for (triangle, c) in corner_rest.iter().enumerate() {
            if let Some(corner) = c.iter().position(|r| !(r.x.is_finite() && r.y.is_finite())) {
                return Err(MeshError::NonFiniteCornerRest { triangle, corner });
            }
        }
        check_indices(&triangles, positions.len())?;
        Self::build(positions, corner_rest, triangles)
    }

    /// The common part of the constructors: rest data per triangle, topology, edge lengths.
    fn build(
        positions: Vec<Vec3>,
        corner_rest: Vec<[Vec2; 3]>,
        triangles: Vec<[usize; 3]>,
    ) -> Result<Self, MeshError> {
        let n = positions.len();
        let mut rest_areas = Vec::with_capacity(triangles.len());
        let mut rest_inverse = Vec::with_capacity(triangles.len());
        for (t, c) in corner_rest.iter().enumerate() {
            let (area, inv) = rest_triangle(t, c)?;
            rest_areas.push(area);
            rest_inverse.push(inv);
        }

        let (edges, hinges) = build_edges(&triangles)?;

        let (vt_offsets, vt_indices) = vertex_triangles(n, &triangles)?;

        let boundary_edges = edges
            .iter()
            .enumerate()
            .filter(|(_, e)| e.is_boundary())
            .map(|(i, _)| i)
            .collect();

        let vertex_pairs = vertex_pairs(&edges, &hinges);

        // Serial sum in triangle order: deterministic.
        let total_rest_area = rest_areas.iter().sum();
        let edge_rest = edge_rest_lengths(&edges, &triangles, &corner_rest);
        let vertex_rest = vertex_chart(n, &triangles, &corner_rest);

        Ok(Self {
            original: (0..n).collect(),
            positions,
            corner_rest,
            vertex_rest,
            triangles,
            edges,
            edge_rest,
            boundary_edges,
            hinges,
            vt_offsets,
            vt_indices,
            vertex_pairs,
            rest_areas,
            rest_inverse,
            total_rest_area,
        })
    }

    /// Joins several meshes into one with disjoint components, in the given order: vertices
    /// and triangles of `parts[k]` follow those of `parts[k - 1]` (indices offset by the
    /// vertices before). Rest coordinates, positions and original position indices (offset
    /// like the vertices) are kept. Errors if `parts` is empty.
    pub fn concat(parts: &[&ClothMesh]) -> Result<ClothMesh, MeshError> {
        if parts.is_empty() {
            return Err(MeshError::Empty {
                vertices: 0,
                triangles: 0,
            });
        }
        let (mut positions, mut corners, mut triangles, mut original) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut orig_base = 0;
        for m in parts {
            let base = positions.len();
            positions.extend_from_slice(m.positions());
            corners.extend_from_slice(m.corner_rest());
            triangles.extend(m.triangles().iter().map(|t| t.map(|v| v + base)));
            let orig = m.original_position_indices();
            original.extend(orig.iter().map(|o| o + orig_base));
            orig_base += orig.iter().map(|&o| o + 1).max().unwrap_or(0);
        }
        let mut mesh = ClothMesh::from_corner_rest(positions, corners, triangles)?;
        mesh.set_original_position_indices(original)?;
        Ok(mesh)
    }

    /// Number of vertices (particles).
    pub fn num_vertices(&self) -> usize {
        self.positions.len()
    }

    /// Number of triangles.
    pub fn num_triangles(&self) -> usize {
        self.triangles.len()
    }

    /// World positions (m), one per vertex.
    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }

    /// Replaces the world positions (m). Errors if the length differs from
    /// [`Self::num_vertices`] or a coordinate is not finite; the mesh is unchanged on error.
    pub fn set_positions(&mut self, p: Vec<Vec3>) -> Result<(), MeshError> {
        if p.len() != self.positions.len() {
            return Err(MeshError::LengthMismatch {
                what: "positions",
                expected: self.positions.len(),
                found: p.len(),
            });
        }
        if let Some(vertex) = p.iter().position(|x| !all_finite3(x)) {
            return Err(MeshError::NonFinitePosition { vertex });
        }
        self.positions = p;
        Ok(())
    }

    /// Rest (u, v) coordinates (m) per triangle corner: `corner_rest()[t][k]` belongs to
    /// vertex `triangles()[t][k]`. Each triangle's unstretched shape in the flat material space.
    pub fn corner_rest(&self) -> &[[Vec2; 3]] {
        &self.corner_rest
    }

    /// Rest (u, v) coordinates (m) of the three corners of triangle `t`.
    ///
    /// # Panics
    /// If `t >= num_triangles()`.
    pub fn triangle_rest(&self, t: usize) -> [Vec2; 3] {
        self.corner_rest[t]
    }

    /// One rest (u, v) coordinate (m) per vertex, when the mesh has one chart: every corner of
    /// each vertex carries the same coordinates (meshes from [`ClothMesh::new`], the builders,
    /// sewing patterns, OBJ files without UV seams). `None` when some vertex has different
    /// coordinates in different triangles.
    pub fn vertex_rest(&self) -> Option<&[Vec2]> {
        self.vertex_rest.as_deref()
    }

    /// Rest length (m) of every edge, in [`Self::edges`] order: the mean over the edge's one or
    /// two triangles of its length in their rest coordinates (the two agree unless the
    /// triangles' rest shapes disagree along the edge, e.g. across a UV seam with a scale jump).
    pub fn edge_rest_lengths(&self) -> &[f64] {
        &self.edge_rest
    }

    /// How triangle `from`'s rest frame maps onto triangle `onto`'s across their shared edge
    /// ([`RestMap`]): the similarity carrying `from`'s rest coordinates of the edge's two
    /// vertices exactly onto `onto`'s. `None` if the triangles share no edge (or are out of
    /// range). [`RestMap::Identity`] when both give the edge the same coordinates bit for bit.
    pub fn rest_map(&self, onto: usize, from: usize) -> Option<RestMap> {
        let (a, b) = (self.triangles.get(onto)?, self.triangles.get(from)?);
        let shared: Vec<usize> = a.iter().copied().filter(|v| b.contains(v)).collect();
        let [p, q] = shared[..] else {
            return None;
        };
        let (ra, rb) = (&self.corner_rest[onto], &self.corner_rest[from]);
        let (pa, qa) = (ra[corner_of(a, p)], ra[corner_of(a, q)]);
        let (pb, qb) = (rb[corner_of(b, p)], rb[corner_of(b, q)]);
        if pa == pb && qa == qb {
            return Some(RestMap::Identity);
        }
        let (da, db) = (qa - pa, qb - pb);
        let l2 = db.norm_squared();
        if !(l2 > 0.0 && l2.is_finite()) {
            return None;
        }
        let factor = Vec2::new(
            (da.x * db.x + da.y * db.y) / l2,
            (da.y * db.x - da.x * db.y) / l2,
        );
        Some(RestMap::Similarity {
            factor,
            from: pb,
            to: pa,
        })
    }

    /// The flap of edge `i` of triangle `t` (edge `i` joins corners `i + 1` and `i + 2`): the
    /// neighbouring triangle across it and the rest coordinates (m) of its vertex off the edge,
    /// carried into `t`'s rest frame by [`Self::rest_map`] (the two triangles unfolded flat).
    /// `None` on a boundary edge or for out-of-range input.
    pub fn flap_rest(&self, t: usize, i: usize) -> Option<(usize, Vec2)> {
        let tri = self.triangles.get(t)?;
        let (a, b) = (tri[(i + 1) % 3], tri[(i + 2) % 3]);
        let e = self.edges[self.edge_index(a, b)?];
        if e.is_boundary() {
            return None;
        }
        let g = if e.tris[0] == t { e.tris[1] } else { e.tris[0] };
        let gt = self.triangles[g];
        let k = (0..3).find(|&k| gt[k] != a && gt[k] != b)?;
        let map = self.rest_map(t, g)?;
        Some((g, map.apply(self.corner_rest[g][k])))
    }

    /// The rest coordinates (m) of the four vertices of hinge `h` (`[v0, v1, v2, v3]`, see
    /// [`Hinge`]) in the rest frame of its first triangle `tris[0]`, with `v3` carried over from
    /// `tris[1]` by [`Self::rest_map`]: the two triangles unfolded flat.
    ///
    /// # Panics
    /// If `h >= hinges().len()`.
    pub fn hinge_rest(&self, h: usize) -> [Vec2; 4] {
        let hg = self.hinges[h];
        let t0 = hg.tris[0];
        let tri = self.triangles[t0];
        let c = |v: usize| self.corner_rest[t0][corner_of(&tri, v)];
        let opp = corner_of(&tri, hg.v[2]);
        let v3 = self.flap_rest(t0, opp).map_or(c(hg.v[2]), |(_, q)| q);
        [c(hg.v[0]), c(hg.v[1]), c(hg.v[2]), v3]
    }

    /// Triangles as vertex indices, counter-clockwise in rest (u, v) space.
    pub fn triangles(&self) -> &[[usize; 3]] {
        &self.triangles
    }

    /// Unique undirected edges, sorted by `(v[0], v[1])`.
    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }

    /// Indices into [`Self::edges`] of the boundary edges (one triangle), ascending.
    pub fn boundary_edges(&self) -> &[usize] {
        &self.boundary_edges
    }

    /// One hinge (bend stencil) per interior edge, in [`Self::edges`] order.
    pub fn hinges(&self) -> &[Hinge] {
        &self.hinges
    }

    /// Vertices on boundary edges, ascending and unique (e.g. to pin a sheet's outline).
    pub fn boundary_vertices(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .boundary_edges
            .iter()
            .flat_map(|&e| self.edges[e].v)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Triangles incident to vertex `v`, ascending. Empty if `v` is out of range.
    pub fn vertex_triangles(&self, v: usize) -> &[usize] {
        match (self.vt_offsets.get(v), self.vt_offsets.get(v + 1)) {
            (Some(&a), Some(&b)) => &self.vt_indices[a..b],
            _ => &[],
        }
    }

    /// Symmetric sparsity pairs `(i, j)` with `i < j`, sorted, unique: every edge plus every
    /// hinge's `(v2, v3)`. These are the off-diagonal 3x3 blocks that stretch, shear and bend
    /// forces can fill (the diagonal blocks `(i, i)` are not listed).
    pub fn vertex_pairs(&self) -> &[(usize, usize)] {
        &self.vertex_pairs
    }

    /// Rest area of triangle `t` in m^2 (always > 0).
    ///
    /// # Panics
    /// If `t >= num_triangles()` (like slice indexing).
    pub fn rest_area(&self, t: usize) -> f64 {
        self.rest_areas[t]
    }

    /// Rest areas of all triangles in m^2, in triangle order.
    pub fn rest_areas(&self) -> &[f64] {
        &self.rest_areas
    }

    /// Sum of the rest areas in m^2 (summed serially in triangle order).
    pub fn total_rest_area(&self) -> f64 {
        self.total_rest_area
    }

    /// Inverse of the rest basis of triangle `t` (1/m):
    /// `[[du1, du2], [dv1, dv2]]^-1` with `du1 = u1 - u0`, `du2 = u2 - u0` (same for v).
    /// With `dx1 = x1 - x0`, `dx2 = x2 - x0`, the deformation gradient columns of
    /// Baraff & Witkin (1998, eq. 9) are `[w_u, w_v] = [dx1, dx2] * rest_basis_inverse(t)`.
    ///
    /// # Panics
    /// If `t >= num_triangles()`.
    pub fn rest_basis_inverse(&self, t: usize) -> Matrix2<f64> {
        self.rest_inverse[t]
    }

    /// Index into [`Self::edges`] of the edge between vertices `a` and `b` (either order), if any.
    pub fn edge_index(&self, a: usize, b: usize) -> Option<usize> {
        let key = [a.min(b), a.max(b)];
        self.edges.binary_search_by(|e| e.v.cmp(&key)).ok()
    }

    /// Lumped vertex masses in kg: `density` (kg/m^2) times rest area / 3 from every incident
    /// triangle. Errors on a negative or non-finite density.
    pub fn vertex_masses(&self, density: f64) -> Result<Vec<f64>, MeshError> {
        if !(density.is_finite() && density >= 0.0) {
            return Err(MeshError::InvalidDensity { density });
        }
        let mut m = vec![0.0; self.num_vertices()];
        for (tri, &a) in self.triangles.iter().zip(&self.rest_areas) {
            let share = density * a / 3.0;
            for &v in tri {
                m[v] += share;
            }
        }
        Ok(m)
    }

    /// Area-weighted unit vertex normals of the given positions (m).
    ///
    /// Each triangle contributes its unnormalised face normal `(x1 - x0) x (x2 - x0)`
    /// (twice its area times the unit normal, right-hand rule on the triangle's winding).
    /// For the grid and disc builders, whose triangles are counter-clockwise in (u, v) with
    /// u along +x and v along +z, face normals point along **-y**.
    ///
    /// Zero-safe and NaN-free: a vertex whose triangles are all degenerate, whose sum is
    /// zero or non-finite (non-finite input), or that is beyond `positions.len()`, gets
    /// `(0, 1, 0)`. Triangles referring past `positions.len()` are skipped. The result
    /// always has [`Self::num_vertices`] entries.
    pub fn vertex_normals(&self, positions: &[Vec3]) -> Vec<Vec3> {
        let mut acc = vec![Vec3::zeros(); self.num_vertices()];
        for tri in &self.triangles {
            let (Some(x0), Some(x1), Some(x2)) = (
                positions.get(tri[0]),
                positions.get(tri[1]),
                positions.get(tri[2]),
            ) else {
                continue;
            };
            let n = (x1 - x0).cross(&(x2 - x0));
            for &v in tri {
                acc[v] += n;
            }
        }
        acc.into_iter()
            .map(|n| {
                let len = n.norm();
                if len.is_finite() && len > 0.0 {
                    let u = n / len;
                    if all_finite3(&u) {
                        return u;
                    }
                }
                Vec3::new(0.0, 1.0, 0.0)
            })
            .collect()
    }

    /// Transforms the world positions in place: `x <- rotation * x + translation` (m).
    /// Rest coordinates and topology are unchanged.
    pub fn transform(&mut self, rotation: &Rotation3<f64>, translation: &Vec3) {
        for p in &mut self.positions {
            *p = rotation * *p + translation;
        }
    }

    /// For each vertex, the index of the original position it came from.
    ///
    /// For meshes read from OBJ this is the 0-based index of the `v` statement: a cloth
    /// vertex is a unique `(v, vt)` pair, so one OBJ position on a UV seam becomes several
    /// cloth vertices with the same original index. For other meshes it is the identity.
    ///
    /// # Panics
    /// If `v >= num_vertices()`.
    pub fn original_position_index(&self, v: usize) -> usize {
        self.original[v]
    }

    /// The full map of [`Self::original_position_index`], one entry per vertex.
    pub fn original_position_indices(&self) -> &[usize] {
        &self.original
    }

    /// Groups of two or more vertices that share an original position (UV seams), each
    /// group ascending, groups ordered by original index. Callers can weld seams with
    /// constraints or stiff springs between the members of a group.
    pub fn seam_groups(&self) -> Vec<Vec<usize>> {
        let mut order: Vec<usize> = (0..self.num_vertices()).collect();
        order.sort_by_key(|&v| (self.original[v], v));
        let mut groups = Vec::new();
        let mut i = 0;
        while i < order.len() {
            let mut j = i + 1;
            while j < order.len() && self.original[order[j]] == self.original[order[i]] {
                j += 1;
            }
            if j - i >= 2 {
                groups.push(order[i..j].to_vec());
            }
            i = j;
        }
        groups
    }

    /// Sets the map from vertices to original position indices (see
    /// [`Self::original_position_index`]), e.g. to mark seams of a mesh built by hand.
    /// Errors if the length differs from [`Self::num_vertices`].
    pub fn set_original_position_indices(&mut self, original: Vec<usize>) -> Result<(), MeshError> {
        if original.len() != self.num_vertices() {
            return Err(MeshError::LengthMismatch {
                what: "original position indices",
                expected: self.num_vertices(),
                found: original.len(),
            });
        }
        self.original = original;
        Ok(())
    }
}

fn all_finite3(p: &Vec3) -> bool {
    p.x.is_finite() && p.y.is_finite() && p.z.is_finite()
}

/// The corner (0, 1, 2) of `tri` holding vertex `v` (0 if absent; callers pass members).
fn corner_of(tri: &[usize; 3], v: usize) -> usize {
    tri.iter().position(|&x| x == v).unwrap_or(0)
}

fn check_not_empty(vertices: usize, triangles: &[[usize; 3]]) -> Result<(), MeshError> {
    if vertices == 0 || triangles.is_empty() {
        return Err(MeshError::Empty {
            vertices,
            triangles: triangles.len(),
        });
    }
    Ok(())
}

fn check_positions(positions: &[Vec3]) -> Result<(), MeshError> {
    match positions.iter().position(|p| !all_finite3(p)) {
        Some(vertex) => Err(MeshError::NonFinitePosition { vertex }),
        None => Ok(()),
    }
}

/// Every index in range, no triangle repeating a vertex.
fn check_indices(triangles: &[[usize; 3]], n: usize) -> Result<(), MeshError> {
    for (t, tri) in triangles.iter().enumerate() {
        for (corner, &index) in tri.iter().enumerate() {
            if index >= n {
                return Err(MeshError::IndexOutOfRange {
                    triangle: t,
                    corner,
                    index,
                    count: n,
                });
            }
        }
        if tri[0] == tri[1] || tri[0] == tri[2] {
            return Err(MeshError::RepeatedVertex {
                triangle: t,
                vertex: tri[0],
            });
        }
        if tri[1] == tri[2] {
            return Err(MeshError::RepeatedVertex {
                triangle: t,
                vertex: tri[1],
            });
        }
    }
    Ok(())
}

/// Vertex -> triangle adjacency (CSR): offsets per vertex and triangles, ascending per vertex.
/// Fails on a vertex in no triangle.
fn vertex_triangles(
    n: usize,
    triangles: &[[usize; 3]],
) -> Result<(Vec<usize>, Vec<usize>), MeshError> {
    let mut vt_offsets = vec![0usize; n + 1];
    for tri in triangles {
        for &v in tri {
            vt_offsets[v + 1] += 1;
        }
    }
    for v in 0..n {
        if vt_offsets[v + 1] == 0 {
            return Err(MeshError::IsolatedVertex { vertex: v });
        }
        vt_offsets[v + 1] += vt_offsets[v];
    }
    let mut fill = vt_offsets.clone();
    let mut vt_indices = vec![0usize; vt_offsets[n]];
    for (t, tri) in triangles.iter().enumerate() {
        for &v in tri {
            vt_indices[fill[v]] = t;
            fill[v] += 1;
        }
    }
    Ok((vt_offsets, vt_indices))
}

/// The sorted, unique vertex pairs of the system matrix: every edge and every hinge's
/// `(v2, v3)`.
fn vertex_pairs(edges: &[Edge], hinges: &[Hinge]) -> Vec<(usize, usize)> {
    let mut vertex_pairs: Vec<(usize, usize)> = edges.iter().map(|e| (e.v[0], e.v[1])).collect();
    for h in hinges {
        let (a, b) = (h.v[2], h.v[3]);
        if a != b {
            vertex_pairs.push((a.min(b), a.max(b)));
        }
    }
    vertex_pairs.sort_unstable();
    vertex_pairs.dedup();
    vertex_pairs
}

/// Rest length of every edge (m): in its one triangle's rest frame, or the mean over both.
fn edge_rest_lengths(
    edges: &[Edge],
    triangles: &[[usize; 3]],
    corner_rest: &[[Vec2; 3]],
) -> Vec<f64> {
    edges
        .iter()
        .map(|e| {
            let len = |t: usize| {
                let (a, b) = (
                    corner_of(&triangles[t], e.v[0]),
                    corner_of(&triangles[t], e.v[1]),
                );
                (corner_rest[t][b] - corner_rest[t][a]).norm()
            };
            if e.is_boundary() {
                len(e.tris[0])
            } else {
                0.5 * (len(e.tris[0]) + len(e.tris[1]))
            }
        })
        .collect()
}

/// Rest area (m^2) and inverse rest basis (1/m) of triangle `t` with corners `c`; errors on a
/// degenerate or clockwise rest triangle.
fn rest_triangle(t: usize, c: &[Vec2; 3]) -> Result<(f64, Matrix2<f64>), MeshError> {
    let (r0, r1, r2) = (c[0], c[1], c[2]);
    let d1 = r1 - r0;
    let d2 = r2 - r0;
    let signed_area = 0.5 * (d1.x * d2.y - d1.y * d2.x);
    let longest = d1
        .norm_squared()
        .max(d2.norm_squared())
        .max((r2 - r1).norm_squared());
    let threshold = DEGENERATE_RELATIVE_AREA * longest;
    let area = signed_area.abs();
    if !(area.is_finite() && area > threshold && longest.is_finite()) {
        return Err(MeshError::DegenerateRestTriangle {
            triangle: t,
            area,
            threshold,
        });
    }
    if signed_area < 0.0 {
        return Err(MeshError::ClockwiseRestTriangle {
            triangle: t,
            signed_area,
        });
    }
    let det = 2.0 * signed_area;
    let inv = Matrix2::new(d2.y, -d2.x, -d1.y, d1.x) / det;
    if !inv.iter().all(|x| x.is_finite()) {
        return Err(MeshError::DegenerateRestTriangle {
            triangle: t,
            area,
            threshold,
        });
    }
    Ok((signed_area, inv))
}

/// One (u, v) per vertex when every corner of each vertex agrees bit for bit, else `None`.
fn vertex_chart(n: usize, triangles: &[[usize; 3]], corners: &[[Vec2; 3]]) -> Option<Vec<Vec2>> {
    let mut chart: Vec<Option<Vec2>> = vec![None; n];
    for (tri, c) in triangles.iter().zip(corners) {
        for k in 0..3 {
            match chart[tri[k]] {
                None => chart[tri[k]] = Some(c[k]),
                Some(r) if r == c[k] => {}
                Some(_) => return None,
            }
        }
    }
    chart.into_iter().collect()
}

/// Builds sorted unique edges and hinges; checks manifoldness and consistent winding.
fn build_edges(triangles: &[[usize; 3]]) -> Result<(Vec<Edge>, Vec<Hinge>), MeshError> {
    // (min, max, triangle, corner k) where the directed half-edge is tri[k] -> tri[k+1].
    let mut half: Vec<(usize, usize, usize, usize)> = Vec::with_capacity(3 * triangles.len());
    for (t, tri) in triangles.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            half.push((a.min(b), a.max(b), t, k));
        }
    }
    half.sort_unstable();
    let mut edges = Vec::with_capacity(half.len() / 2 + 1);
    let mut hinges = Vec::new();
    let mut i = 0;
    while i < half.len() {
        let (a, b, _, _) = half[i];
        let mut j = i + 1;
        while j < half.len() && half[j].0 == a && half[j].1 == b {
            j += 1;
        }
        let group = &half[i..j];
        match group {
            [(_, _, t, _)] => edges.push(Edge {
                v: [a, b],
                tris: [*t, NO_TRIANGLE],
            }),
            [(_, _, t0, k0), (_, _, t1, k1)] => {
                let tri0 = triangles[*t0];
                let tri1 = triangles[*t1];
                let (v0, v1, v2) = (tri0[*k0], tri0[(k0 + 1) % 3], tri0[(k0 + 2) % 3]);
                let (w0, w1, v3) = (tri1[*k1], tri1[(k1 + 1) % 3], tri1[(k1 + 2) % 3]);
                if v0 == w0 {
                    debug_assert_eq!(v1, w1);
                    return Err(MeshError::InconsistentWinding {
                        v0,
                        v1,
                        triangles: [*t0, *t1],
                    });
                }
                hinges.push(Hinge {
                    v: [v0, v1, v2, v3],
                    tris: [*t0, *t1],
                    edge: edges.len(),
                });
                edges.push(Edge {
                    v: [a, b],
                    tris: [*t0, *t1],
                });
            }
            _ => {
                return Err(MeshError::NonManifoldEdge {
                    v0: a,
                    v1: b,
                    triangles: group.iter().map(|h| h.2).collect(),
                });
            }
        }
        i = j;
    }
    Ok((edges, hinges))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unit square, triangles (0, 1, 2) and (0, 2, 3).
    fn square() -> ClothMesh {
        let rest = vec![
            Vec2::new(0.0, 0.0),
            Vec2::new(1.0, 0.0),
            Vec2::new(1.0, 1.0),
            Vec2::new(0.0, 1.0),
        ];
        let pos = rest.iter().map(|r| Vec3::new(r.x, 0.0, r.y)).collect();
        ClothMesh::new(pos, rest, vec![[0, 1, 2], [0, 2, 3]]).unwrap()
    }

    #[test]
    fn square_topology_by_hand() {
        let m = square();
        let e: Vec<[usize; 2]> = m.edges().iter().map(|e| e.v).collect();
        assert_eq!(e, vec![[0, 1], [0, 2], [0, 3], [1, 2], [2, 3]]);
        assert_eq!(m.boundary_edges(), &[0, 2, 3, 4]);
        // Diagonal 0-2: triangle 0 traverses 2 -> 0 (opposite 1), triangle 1 traverses 0 -> 2
        // (opposite 3).
        assert_eq!(
            m.hinges(),
            &[Hinge {
                v: [2, 0, 1, 3],
                tris: [0, 1],
                edge: 1
            }]
        );
        assert_eq!(
            m.vertex_pairs(),
            &[(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
        );
        assert_eq!(m.vertex_triangles(0), &[0, 1]);
        assert_eq!(m.vertex_triangles(1), &[0]);
        assert_eq!(m.edge_index(3, 1), None);
        assert_eq!(m.edge_index(2, 0), Some(1));
        assert_eq!(m.rest_area(0), 0.5);
        assert_eq!(m.total_rest_area(), 1.0);
        assert_eq!(m.boundary_vertices(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn rest_basis_inverse_gives_identity_deformation_at_rest() {
        // Positions equal to (u, 0, v): w_u = (1, 0, 0), w_v = (0, 0, 1) for every triangle.
        let m = square();
        for (t, tri) in m.triangles().iter().enumerate() {
            let x = m.positions();
            let d =
                nalgebra::Matrix3x2::from_columns(&[x[tri[1]] - x[tri[0]], x[tri[2]] - x[tri[0]]]);
            let w = d * m.rest_basis_inverse(t);
            assert!((w.column(0) - Vec3::x()).norm() < 1e-15);
            assert!((w.column(1) - Vec3::z()).norm() < 1e-15);
        }
    }

    #[test]
    fn seam_groups_from_an_original_index_map() {
        let mut m = square();
        assert!(m.seam_groups().is_empty());
        m.set_original_position_indices(vec![7, 3, 7, 3]).unwrap();
        assert_eq!(m.seam_groups(), vec![vec![1, 3], vec![0, 2]]);
        assert_eq!(m.original_position_index(2), 7);
    }
}
