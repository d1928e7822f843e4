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

/// Extracts the zero level set of `f` (negative inside) on the grid `origin + h (i, j, k)`,
/// `0 <= i < n[0]` etc. `f` must be positive on the grid's boundary.
pub fn marching_cubes(f: &dyn Fn(&V3) -> f64, origin: V3, h: f64, n: [usize; 3]) -> TriMesh {
    let idx = |i: usize, j: usize, k: usize| (k * n[1] + j) * n[0] + i;
    let pos = |i: usize, j: usize, k: usize| origin + V3::new(i as f64, j as f64, k as f64) * h;
    // Field samples; exact zeros are nudged outside so every crossing is strictly inside an edge.
    let mut val = vec![0.0; n[0] * n[1] * n[2]];
    for k in 0..n[2] {
        for j in 0..n[1] {
            for i in 0..n[0] {
                let x = f(&pos(i, j, k));
                val[idx(i, j, k)] = if x == 0.0 { 1e-12 } else { x };
            }
        }
    }
    let edges = cube_edges();
    let mut mesh = TriMesh::default();
    // Grid edge (lower grid point, axis) -> vertex index.
    let mut vertex_of: HashMap<(usize, usize), usize> = HashMap::new();
    let mut edge_vertex = |mesh: &mut TriMesh, g0: [usize; 3], axis: usize| -> usize {
        let key = (idx(g0[0], g0[1], g0[2]), axis);
        *vertex_of.entry(key).or_insert_with(|| {
            let mut g1 = g0;
            g1[axis] += 1;
            let (a, b) = (val[idx(g0[0], g0[1], g0[2])], val[idx(g1[0], g1[1], g1[2])]);
            let t = (a / (a - b)).clamp(0.02, 0.98);
            let p0 = pos(g0[0], g0[1], g0[2]);
            let p1 = pos(g1[0], g1[1], g1[2]);
            mesh.vertices.push(p0 + (p1 - p0) * t);
            mesh.vertices.len() - 1
        })
    };
    // Per face (axis, side): the 4 corners in cyclic order, built in a fixed axis order so that
    // the two cubes sharing the face evaluate the decider on identical arguments.
    let mut faces: Vec<(usize, usize, [usize; 4])> = Vec::new();
    for axis in 0..3 {
        let others: Vec<usize> = (0..3).filter(|&a| a != axis).collect();
        for side in 0..2 {
            let base = side << axis;
            let (b0, b1) = (1 << others[0], 1 << others[1]);
            faces.push((axis, side, [base, base | b0, base | b0 | b1, base | b1]));
        }
    }
    let edge_id = |c0: usize, c1: usize| -> usize {
        let (a, b) = (c0.min(c1), c0.max(c1));
        edges
            .iter()
            .position(|&(x, y, _)| x == a && y == b)
            .expect("cube edge")
    };
    let mut next = [usize::MAX; 12];
    let mut segs: Vec<(usize, usize)> = Vec::new();
    for k in 0..n[2] - 1 {
        for j in 0..n[1] - 1 {
            for i in 0..n[0] - 1 {
                let fv: [f64; 8] = std::array::from_fn(|c| {
                    let o = corner(c);
                    val[idx(i + o[0], j + o[1], k + o[2])]
                });
                let inside = fv.map(|x| x < 0.0);
                if inside.iter().all(|&b| b) || inside.iter().all(|&b| !b) {
                    continue;
                }
                segs.clear();
                for &(axis, side, cs) in &faces {
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
                        let (ia, ib) = (edge_id(a0, a1), edge_id(b0, b1));
                        segs.push(if left { (ib, ia) } else { (ia, ib) });
                    }
                }
                next.fill(usize::MAX);
                for &(a, b) in &segs {
                    next[a] = b;
                }
                let mut used = [false; 12];
                for &(start, _) in &segs {
                    if used[start] {
                        continue;
                    }
                    let mut lp = Vec::new();
                    let mut e = start;
                    while !used[e] {
                        used[e] = true;
                        let (c0, _, axis) = edges[e];
                        let o = corner(c0);
                        lp.push(edge_vertex(&mut mesh, [i + o[0], j + o[1], k + o[2]], axis));
                        e = next[e];
                    }
                    for t in 1..lp.len() - 1 {
                        mesh.triangles.push([lp[0], lp[t], lp[t + 1]]);
                    }
                }
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
