//! Checks shared by the integration tests that do not use the simulator's own bookkeeping: an
//! independent triangle-triangle intersection counter (signed volumes, a uniform grid as broad
//! phase; nothing shared with cloth-collide) and a ray-parity point-in-mesh test.

#![allow(dead_code)]

use std::collections::HashMap;

use cloth_sim::mesh::Vec3;

/// The longest edge of the mesh (at least 1 um): the cell size of the uniform grids below, so a
/// triangle spans at most two cells per axis.
fn longest_edge(x: &[Vec3], tris: &[[usize; 3]]) -> f64 {
    tris.iter()
        .flat_map(|t| (0..3).map(move |k| (x[t[k]] - x[t[(k + 1) % 3]]).norm()))
        .fold(0.0, f64::max)
        .max(1e-6)
}

/// Per vertex, the smallest vertex joined to it through `pairs` (transitively).
fn weld(n: usize, pairs: &[[usize; 2]]) -> Vec<usize> {
    let mut class: Vec<usize> = (0..n).collect();
    // Relax to a fixed point: each pair takes the smaller class of its two ends.
    loop {
        let mut changed = false;
        for &[a, b] in pairs {
            let m = class[a].min(class[b]);
            for v in [a, b] {
                if class[v] != m {
                    class[v] = m;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    class
}

/// Six times the signed volume of tetrahedron (a, b, c, d).
fn orient(a: &Vec3, b: &Vec3, c: &Vec3, d: &Vec3) -> f64 {
    (b - a).cross(&(c - a)).dot(&(d - a))
}

/// Whether segment (p, q) passes through the interior of triangle (a, b, c): its ends lie
/// strictly on both sides of the plane and the segment's line winds the same way around all
/// three edges.
fn segment_hits(p: &Vec3, q: &Vec3, t: [&Vec3; 3]) -> bool {
    let (sp, sq) = (orient(t[0], t[1], t[2], p), orient(t[0], t[1], t[2], q));
    if sp * sq >= 0.0 || sp.is_nan() || sq.is_nan() {
        return false;
    }
    let e = [
        orient(p, q, t[0], t[1]),
        orient(p, q, t[1], t[2]),
        orient(p, q, t[2], t[0]),
    ];
    e.iter().all(|&s| s > 0.0) || e.iter().all(|&s| s < 0.0)
}

fn triangles_cross(a: [&Vec3; 3], b: [&Vec3; 3]) -> bool {
    (0..3).any(|k| {
        let l = (k + 1) % 3;
        segment_hits(a[k], a[l], b) || segment_hits(b[k], b[l], a)
    })
}

/// Crossing pairs of triangles that share no vertex.
pub fn count_crossings(tris: &[[usize; 3]], x: &[Vec3]) -> usize {
    count_crossings_welded(tris, x, &[])
}

/// Crossing pairs of triangles that share no vertex once the vertex pairs `welded` (garment
/// stitches: the two sides of a seam are one point once sewn) count as one vertex.
pub fn count_crossings_welded(tris: &[[usize; 3]], x: &[Vec3], welded: &[[usize; 2]]) -> usize {
    let class = weld(x.len(), welded);
    let cell = longest_edge(x, tris);
    let key = |p: &Vec3| [0, 1, 2].map(|k| (p[k] / cell).floor() as i64);
    let mut grid: HashMap<[i64; 3], Vec<usize>> = HashMap::new();
    let mut ranges = Vec::with_capacity(tris.len());
    for (i, t) in tris.iter().enumerate() {
        let lo = [0, 1, 2].map(|k| t.iter().map(|&v| x[v][k]).fold(f64::INFINITY, f64::min));
        let hi = [0, 1, 2].map(|k| t.iter().map(|&v| x[v][k]).fold(f64::NEG_INFINITY, f64::max));
        let (a, b) = (key(&Vec3::from(lo)), key(&Vec3::from(hi)));
        for cx in a[0]..=b[0] {
            for cy in a[1]..=b[1] {
                for cz in a[2]..=b[2] {
                    grid.entry([cx, cy, cz]).or_default().push(i);
                }
            }
        }
        ranges.push((a, b));
    }
    let mut pairs = Vec::new();
    for cell_tris in grid.values() {
        for (k, &i) in cell_tris.iter().enumerate() {
            for &j in &cell_tris[k + 1..] {
                pairs.push((i.min(j), i.max(j)));
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs
        .into_iter()
        .filter(|&(i, j)| {
            let (a, b) = (tris[i], tris[j]);
            let (ca, cb) = (a.map(|v| class[v]), b.map(|v| class[v]));
            !ca.iter().any(|v| cb.contains(v))
                && triangles_cross(a.map(|v| &x[v]), b.map(|v| &x[v]))
        })
        .count()
}

/// Ray-parity point-in-mesh test against a closed triangle mesh: `p` is inside when a ray
/// from it along a fixed direction crosses the mesh an odd number of times. Brute force over
/// every triangle; [`Solid`] answers the same question for many points.
pub fn inside(p: &Vec3, vertices: &[Vec3], triangles: &[[usize; 3]]) -> bool {
    let crossings = triangles
        .iter()
        .filter(|t| ray_crosses(p, [vertices[t[0]], vertices[t[1]], vertices[t[2]]]))
        .count();
    crossings % 2 == 1
}

/// The fixed ray direction of the parity tests (not along any axis, so it does not graze the
/// edges of axis-aligned meshes).
fn ray_direction() -> Vec3 {
    Vec3::new(0.3141, 0.8660, 0.2718).normalize()
}

/// Whether the ray from `p` along [`ray_direction`] crosses triangle `[a, b, c]`
/// (Moller-Trumbore).
fn ray_crosses(p: &Vec3, [a, b, c]: [Vec3; 3]) -> bool {
    let d = ray_direction();
    let (e1, e2) = (b - a, c - a);
    let h = d.cross(&e2);
    let det = e1.dot(&h);
    if det.abs() < 1e-14 {
        return false;
    }
    let s = p - a;
    let u = s.dot(&h) / det;
    if !(0.0..=1.0).contains(&u) {
        return false;
    }
    let q = s.cross(&e1);
    let v = d.dot(&q) / det;
    if v < 0.0 || u + v > 1.0 {
        return false;
    }
    e2.dot(&q) / det > 0.0
}

/// The parity test of [`inside`] for many points against one posed mesh: the triangles are
/// binned by their shadow on the plane across the ray (a uniform 2-D grid), so a point tests
/// only the triangles whose shadow cell holds its own, with the same answer.
pub struct Solid<'a> {
    vertices: &'a [Vec3],
    triangles: &'a [[usize; 3]],
    /// Two unit vectors spanning the plane across the ray.
    axes: [Vec3; 2],
    cell: f64,
    bins: HashMap<[i64; 2], Vec<usize>>,
}

impl<'a> Solid<'a> {
    pub fn new(vertices: &'a [Vec3], triangles: &'a [[usize; 3]]) -> Self {
        let d = ray_direction();
        let a0 = d.cross(&Vec3::x()).normalize();
        let axes = [a0, d.cross(&a0)];
        let cell = longest_edge(vertices, triangles);
        let mut bins: HashMap<[i64; 2], Vec<usize>> = HashMap::new();
        for (i, t) in triangles.iter().enumerate() {
            let key = |k: usize| t.map(|v| (axes[k].dot(&vertices[v]) / cell).floor() as i64);
            let (ku, kv) = (key(0), key(1));
            let (u0, u1) = (*ku.iter().min().unwrap(), *ku.iter().max().unwrap());
            let (v0, v1) = (*kv.iter().min().unwrap(), *kv.iter().max().unwrap());
            for cu in u0..=u1 {
                for cv in v0..=v1 {
                    bins.entry([cu, cv]).or_default().push(i);
                }
            }
        }
        Self {
            vertices,
            triangles,
            axes,
            cell,
            bins,
        }
    }

    /// Whether `p` is inside the mesh (the answer of [`inside`]).
    pub fn contains(&self, p: &Vec3) -> bool {
        let key = [0, 1].map(|k| (self.axes[k].dot(p) / self.cell).floor() as i64);
        let Some(candidates) = self.bins.get(&key) else {
            return false;
        };
        let crossings = candidates
            .iter()
            .filter(|&&i| {
                let t = self.triangles[i];
                ray_crosses(p, t.map(|v| self.vertices[v]))
            })
            .count();
        crossings % 2 == 1
    }
}

/// Distance (m) from `p` to the segment (a, b).
fn point_segment(p: &Vec3, a: &Vec3, b: &Vec3) -> f64 {
    let ab = b - a;
    let len2 = ab.norm_squared();
    let s = if len2 > 0.0 {
        ((p - a).dot(&ab) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (p - (a + ab * s)).norm()
}

/// Distance (m) from `p` to the triangle (a, b, c): to its plane when the foot of the
/// perpendicular lies inside (same side of all three edges), else to the nearest edge.
fn point_triangle(p: &Vec3, [a, b, c]: [&Vec3; 3]) -> f64 {
    let n = (b - a).cross(&(c - a));
    let n2 = n.norm_squared();
    if n2 > 0.0 {
        let side = |u: &Vec3, w: &Vec3| (w - u).cross(&(p - u)).dot(&n);
        let (s0, s1, s2) = (side(a, b), side(b, c), side(c, a));
        if (s0 >= 0.0 && s1 >= 0.0 && s2 >= 0.0) || (s0 <= 0.0 && s1 <= 0.0 && s2 <= 0.0) {
            return (p - a).dot(&n).abs() / n2.sqrt();
        }
    }
    point_segment(p, a, b)
        .min(point_segment(p, b, c))
        .min(point_segment(p, c, a))
}

/// Per vertex, the vertices within `apart` of it along the cloth at rest: shortest paths over
/// the edges of `tris` at their lengths in `rest`, with the `welded` pairs (the two sides of a
/// garment stitch, one point once sewn) at length zero. What lies this close along the cloth is
/// the vertex's own neighbourhood, closer than the thickness by construction; everything else
/// is another layer, however the cloth folded (a fold brings the cloth onto itself, a seam
/// brings one panel to another, but neither is near along the cloth).
pub struct SameLayer(Vec<Vec<usize>>);

impl SameLayer {
    /// Dijkstra from every vertex, cut at `apart` (m).
    pub fn new(tris: &[[usize; 3]], rest: &[Vec3], welded: &[[usize; 2]], apart: f64) -> Self {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let n = rest.len();
        let mut links: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
        for t in tris {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                let l = (rest[a] - rest[b]).norm();
                links[a].push((b, l));
                links[b].push((a, l));
            }
        }
        for &[a, b] in welded {
            links[a].push((b, 0.0));
            links[b].push((a, 0.0));
        }
        // Distances as bit patterns: non-negative f64s order as their bits do.
        let mut dist: HashMap<usize, f64> = HashMap::new();
        let near = (0..n)
            .map(|v| {
                dist.clear();
                let mut heap = BinaryHeap::from([Reverse((0.0f64.to_bits(), v))]);
                while let Some(Reverse((d, u))) = heap.pop() {
                    let d = f64::from_bits(d);
                    if dist.contains_key(&u) {
                        continue;
                    }
                    dist.insert(u, d);
                    for &(w, l) in &links[u] {
                        if d + l <= apart && !dist.contains_key(&w) {
                            heap.push(Reverse(((d + l).to_bits(), w)));
                        }
                    }
                }
                let mut list: Vec<usize> = dist.keys().copied().collect();
                list.sort_unstable();
                list
            })
            .collect();
        Self(near)
    }

    /// Whether `w` lies within `apart` of `v` along the cloth.
    pub fn contains(&self, v: usize, w: usize) -> bool {
        self.0[v].binary_search(&w).is_ok()
    }
}

/// The smallest distance (m) between a vertex and a triangle of another layer: a triangle
/// none of whose corners is in the vertex's `same` layer neighbourhood. Pairs farther than
/// `reach` are not looked at (`reach` is returned when none is nearer). A uniform grid of cell
/// `reach` plus the longest edge is the broad phase; nothing is shared with the simulator.
pub fn nearest_other_layer(tris: &[[usize; 3]], x: &[Vec3], same: &SameLayer, reach: f64) -> f64 {
    let cell = longest_edge(x, tris) + reach;
    let key = |p: &Vec3| [0, 1, 2].map(|k| (p[k] / cell).floor() as i64);
    let mut grid: HashMap<[i64; 3], Vec<usize>> = HashMap::new();
    for (i, t) in tris.iter().enumerate() {
        // A triangle is filed under the cell of its first corner; a vertex looks at its own
        // cell and the 26 around it, which covers every triangle within `reach`.
        grid.entry(key(&x[t[0]])).or_default().push(i);
    }
    let mut best = reach;
    for (v, p) in x.iter().enumerate() {
        let k = key(p);
        for dx in -1..=1 {
            for dy in -1..=1 {
                for dz in -1..=1 {
                    let Some(list) = grid.get(&[k[0] + dx, k[1] + dy, k[2] + dz]) else {
                        continue;
                    };
                    for &t in list {
                        let tri = tris[t];
                        if tri.iter().any(|&c| same.contains(v, c)) {
                            continue;
                        }
                        best = best.min(point_triangle(p, tri.map(|c| &x[c])));
                    }
                }
            }
        }
    }
    best
}

pub mod cusick;
