//! Surface extraction: marching cubes on a regular grid with face ambiguities resolved by the
//! asymptotic decider (Nielson & Hamann 1991), so neighbouring cubes always agree and the
//! surface is a closed 2-manifold; then tangential smoothing with projection back onto the
//! zero level set.
//!
//! Each cube is triangulated from first principles instead of a 256-entry table: on every cube
//! face the sign changes are joined by segments (two or, on an ambiguous face, four crossings);
//! each segment is oriented so that the inside (negative) region lies on its right seen from
//! outside the cube; the segments chain into closed loops around the inside part of the cube's
//! surface, and each loop is fanned into triangles. A segment on a shared face is traversed in
//! opposite directions by the two cubes (their outward normals are opposite), so every mesh
//! edge has exactly two triangles with opposite orientation, and triangle normals point from
//! the inside to the outside.

use std::collections::HashMap;

use crate::body::V3;

/// Cube corner c has offset (c & 1, (c >> 1) & 1, (c >> 2) & 1).
fn corner(c: usize) -> [usize; 3] {
    [c & 1, (c >> 1) & 1, (c >> 2) & 1]
}

/// The 12 cube edges as (corner, corner, axis), the first corner at the lower end.
fn cube_edges() -> Vec<(usize, usize, usize)> {
    let mut e = Vec::new();
    for c in 0..8 {
        for axis in 0..3 {
            if c & (1 << axis) == 0 {
                e.push((c, c | (1 << axis), axis));
            }
        }
    }
    e
}

/// A triangle mesh (m).
#[derive(Clone, Debug, Default)]
pub struct TriMesh {
    /// Vertex positions (m).
    pub vertices: Vec<V3>,
    /// Outward-wound triangles.
    pub triangles: Vec<[usize; 3]>,
}

/// Field samples on the grid `origin + h (i, j, k)`, `0 <= i < n[0]` etc.
struct Grid {
    val: Vec<f64>,
    n: [usize; 3],
    origin: V3,
    h: f64,
}

impl Grid {
    /// Samples `f`; exact zeros are nudged outside so every crossing is strictly inside an
    /// edge.
    fn sample(f: &dyn Fn(&V3) -> f64, origin: V3, h: f64, n: [usize; 3]) -> Grid {
        let mut grid = Grid {
            val: vec![0.0; n[0] * n[1] * n[2]],
            n,
            origin,
            h,
        };
        for k in 0..n[2] {
            for j in 0..n[1] {
                for i in 0..n[0] {
                    let x = f(&grid.pos([i, j, k]));
                    let at = grid.idx([i, j, k]);
                    grid.val[at] = if x == 0.0 { 1e-12 } else { x };
                }
            }
        }
        grid
    }

    fn idx(&self, [i, j, k]: [usize; 3]) -> usize {
        (k * self.n[1] + j) * self.n[0] + i
    }

    fn pos(&self, [i, j, k]: [usize; 3]) -> V3 {
        self.origin + V3::new(i as f64, j as f64, k as f64) * self.h
    }

    /// The field at the 8 corners of the cube whose lowest corner is `g`.
    fn cube(&self, g: [usize; 3]) -> [f64; 8] {
        std::array::from_fn(|c| {
            let o = corner(c);
            self.val[self.idx([g[0] + o[0], g[1] + o[1], g[2] + o[2]])]
        })
    }
}

/// The surface's vertices: one per crossed grid edge, shared by the cubes around that edge.
#[derive(Default)]
struct EdgeVertices {
    /// Grid edge (lower grid point, axis) -> vertex index.
    of: HashMap<(usize, usize), usize>,
}

impl EdgeVertices {
    /// The vertex on the grid edge from `g0` along `axis`, placed by linear interpolation of
    /// the field (kept 2% away from the edge's ends) and added to `mesh` on first use.
    fn vertex(&mut self, grid: &Grid, mesh: &mut TriMesh, g0: [usize; 3], axis: usize) -> usize {
        let key = (grid.idx(g0), axis);
        *self.of.entry(key).or_insert_with(|| {
            let mut g1 = g0;
            g1[axis] += 1;
            let (a, b) = (grid.val[grid.idx(g0)], grid.val[grid.idx(g1)]);
            let t = (a / (a - b)).clamp(0.02, 0.98);
            let p0 = grid.pos(g0);
            let p1 = grid.pos(g1);
            mesh.vertices.push(p0 + (p1 - p0) * t);
            mesh.vertices.len() - 1
        })
    }
}

/// A cube face: (axis, side, the 4 corners in cyclic order).
type Face = (usize, usize, [usize; 4]);

/// The 6 cube faces, built in a fixed axis order so that the two cubes sharing a face evaluate
/// the decider on identical arguments.
fn cube_faces() -> Vec<Face> {
    let mut faces = Vec::new();
    for axis in 0..3 {
        let others: Vec<usize> = (0..3).filter(|&a| a != axis).collect();
        for side in 0..2 {
            let base = side << axis;
            let (b0, b1) = (1 << others[0], 1 << others[1]);
            faces.push((axis, side, [base, base | b0, base | b0 | b1, base | b1]));
        }
    }
    faces
}

/// The cube's edge tables: edges as [`cube_edges`] lists them, and the faces.
struct Cube {
    edges: Vec<(usize, usize, usize)>,
    faces: Vec<Face>,
}

impl Cube {
    /// Index in `edges` of the edge joining corners `c0` and `c1`.
    fn edge_id(&self, c0: usize, c1: usize) -> usize {
        let (a, b) = (c0.min(c1), c0.max(c1));
        (self.edges.iter())
            .position(|&(x, y, _)| x == a && y == b)
            .expect("cube edge")
    }

    /// The sign-change segments of one cube on all its faces, as (edge, edge) pairs oriented
    /// so that the inside lies on their right seen from outside the cube.
    fn segments(&self, fv: &[f64; 8], inside: &[bool; 8], segs: &mut Vec<(usize, usize)>) {
        segs.clear();
        for &(axis, side, cs) in &self.faces {
            let crossing: Vec<usize> = (0..4)
                .filter(|&e| inside[cs[e]] != inside[cs[(e + 1) % 4]])
                .collect();
            let mut pairs: Vec<(usize, usize)> = Vec::new();
            match crossing.len() {
                0 => {}
                2 => pairs.push((crossing[0], crossing[1])),
                4 => {
                    // Asymptotic decider: the bilinear interpolant's saddle value.
                    let [f0, f1, f2, f3] = cs.map(|c| fv[c]);
                    let den = f0 + f2 - f1 - f3;
                    let saddle_inside = den != 0.0 && (f0 * f2 - f1 * f3) / den < 0.0;
                    // Cut off the corners whose region does not reach the face centre.
                    for c in 0..4 {
                        if inside[cs[c]] != saddle_inside {
                            pairs.push(((c + 3) % 4, c));
                        }
                    }
                }
                _ => unreachable!("a face has an even number of sign changes"),
            }
            let normal = {
                let mut nv = V3::zeros();
                nv[axis] = if side == 1 { 1.0 } else { -1.0 };
                nv
            };
            let cpos = |c: usize| {
                let o = corner(c);
                V3::new(o[0] as f64, o[1] as f64, o[2] as f64)
            };
            for (ea, eb) in pairs {
                let (a0, a1) = (cs[ea], cs[(ea + 1) % 4]);
                let (b0, b1) = (cs[eb], cs[(eb + 1) % 4]);
                let p = (cpos(a0) + cpos(a1)) * 0.5;
                let q = (cpos(b0) + cpos(b1)) * 0.5;
                let neg = if inside[a0] { a0 } else { a1 };
                let left = (q - p).cross(&(cpos(neg) - p)).dot(&normal) > 0.0;
                let (ia, ib) = (self.edge_id(a0, a1), self.edge_id(b0, b1));
                segs.push(if left { (ib, ia) } else { (ia, ib) });
            }
        }
    }
}

/// Chains the segments of the cube at grid point `g` into closed loops and fans each loop
/// into triangles of `mesh`.
fn fan_loops(
    segs: &[(usize, usize)],
    edges: &[(usize, usize, usize)],
    g: [usize; 3],
    (grid, vertices): (&Grid, &mut EdgeVertices),
    mesh: &mut TriMesh,
) {
    let mut next = [usize::MAX; 12];
    for &(a, b) in segs {
        next[a] = b;
    }
    let mut used = [false; 12];
    for &(start, _) in segs {
        if used[start] {
            continue;
        }
        let mut lp = Vec::new();
        let mut e = start;
        while !used[e] {
            used[e] = true;
            let (c0, _, axis) = edges[e];
            let o = corner(c0);
            let g0 = [g[0] + o[0], g[1] + o[1], g[2] + o[2]];
            lp.push(vertices.vertex(grid, mesh, g0, axis));
            e = next[e];
        }
        for t in 1..lp.len() - 1 {
            mesh.triangles.push([lp[0], lp[t], lp[t + 1]]);
        }
    }
}

/// Extracts the zero level set of `f` (negative inside) on the grid `origin + h (i, j, k)`,
/// `0 <= i < n[0]` etc. `f` must be positive on the grid's boundary.
pub fn marching_cubes(f: &dyn Fn(&V3) -> f64, origin: V3, h: f64, n: [usize; 3]) -> TriMesh {
    let grid = Grid::sample(f, origin, h, n);
    let cube = Cube {
        edges: cube_edges(),
        faces: cube_faces(),
    };
    let mut mesh = TriMesh::default();
    let mut vertices = EdgeVertices::default();
    let mut segs: Vec<(usize, usize)> = Vec::new();
    for k in 0..n[2] - 1 {
        for j in 0..n[1] - 1 {
            for i in 0..n[0] - 1 {
                let fv = grid.cube([i, j, k]);
                let inside = fv.map(|x| x < 0.0);
                if inside.iter().all(|&b| b) || inside.iter().all(|&b| !b) {
                    continue;
                }
                cube.segments(&fv, &inside, &mut segs);
                let at = (&grid, &mut vertices);
                fan_loops(&segs, &cube.edges, [i, j, k], at, &mut mesh);
            }
        }
    }
    mesh
}

/// Vertex neighbours (one-ring) of a triangle mesh, sorted and deduplicated.
pub fn neighbours(mesh: &TriMesh) -> Vec<Vec<usize>> {
    let mut nb = vec![Vec::new(); mesh.vertices.len()];
    for t in &mesh.triangles {
        for k in 0..3 {
            nb[t[k]].push(t[(k + 1) % 3]);
            nb[t[k]].push(t[(k + 2) % 3]);
        }
    }
    for l in &mut nb {
        l.sort_unstable();
        l.dedup();
    }
    nb
}

/// Moves `p` onto the zero level set of `f` by Newton steps along the gradient.
pub fn project(f: &dyn Fn(&V3) -> f64, grad: &dyn Fn(&V3) -> V3, p: V3) -> V3 {
    let mut q = p;
    for _ in 0..4 {
        let g = grad(&q);
        let g2 = g.norm_squared();
        if g2 < 1e-12 {
            break;
        }
        q -= g * (f(&q) / g2);
    }
    q
}

/// Tangential Laplacian smoothing with projection onto the surface after each pass: evens out
/// the marching-cubes triangles without moving the surface.
pub fn relax(mesh: &mut TriMesh, f: &dyn Fn(&V3) -> f64, grad: &dyn Fn(&V3) -> V3, passes: usize) {
    let nb = neighbours(mesh);
    for _ in 0..passes {
        let old = mesh.vertices.clone();
        for (i, p) in mesh.vertices.iter_mut().enumerate() {
            if nb[i].is_empty() {
                continue;
            }
            let c = nb[i].iter().map(|&j| old[j]).sum::<V3>() / nb[i].len() as f64;
            let n = grad(&old[i]).normalize();
            let l = c - old[i];
            let tangential = l - n * l.dot(&n);
            *p = project(f, grad, old[i] + tangential * 0.6);
        }
    }
}
