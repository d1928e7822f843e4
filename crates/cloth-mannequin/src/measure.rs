//! Checks and anthropometric measurements of the mannequin mesh.

use crate::body::V3;
use crate::surface::TriMesh;

/// Enclosed volume (m^3) by the divergence theorem; positive for an outward-wound closed mesh.
pub fn volume(m: &TriMesh) -> f64 {
    m.triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| m.vertices[i]);
            a.dot(&b.cross(&c)) / 6.0
        })
        .sum()
}

/// Surface area (m^2).
pub fn area(m: &TriMesh) -> f64 {
    m.triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| m.vertices[i]);
            (b - a).cross(&(c - a)).norm() * 0.5
        })
        .sum()
}

/// Points where the mesh edges cross the horizontal plane at height y, as (x, z).
fn slice(m: &TriMesh, y: f64) -> Vec<[f64; 2]> {
    let mut pts = Vec::new();
    for t in &m.triangles {
        for k in 0..3 {
            let (a, b) = (m.vertices[t[k]], m.vertices[t[(k + 1) % 3]]);
            if (a.y - y) * (b.y - y) < 0.0 {
                let s = (y - a.y) / (b.y - a.y);
                let p = a + (b - a) * s;
                pts.push([p.x, p.z]);
            }
        }
    }
    pts
}

/// Perimeter (m) of the convex hull of 2D points (a tape measure around the section).
fn hull_perimeter(mut p: Vec<[f64; 2]>) -> f64 {
    p.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    p.dedup();
    if p.len() < 3 {
        return 0.0;
    }
    let cross = |o: [f64; 2], a: [f64; 2], b: [f64; 2]| {
        (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    };
    let mut hull: Vec<[f64; 2]> = Vec::new();
    for pass in 0..2 {
        let start = hull.len();
        let iter: Box<dyn Iterator<Item = &[f64; 2]>> = if pass == 0 {
            Box::new(p.iter())
        } else {
            Box::new(p.iter().rev())
        };
        for &q in iter {
            while hull.len() >= start + 2
                && cross(hull[hull.len() - 2], hull[hull.len() - 1], q) <= 0.0
            {
                hull.pop();
            }
            hull.push(q);
        }
        hull.pop();
    }
    (0..hull.len())
        .map(|i| {
            let (a, b) = (hull[i], hull[(i + 1) % hull.len()]);
            ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
        })
        .sum()
}

/// The closed section curves of the mesh at height y, as polygons in (x, z).
fn section_loops(m: &TriMesh, y: f64) -> Vec<Vec<[f64; 2]>> {
    use std::collections::HashMap;
    let above = |i: usize| m.vertices[i].y > y;
    let key = |a: usize, b: usize| (a.min(b), a.max(b));
    let point = |(a, b): (usize, usize)| {
        let (p, q) = (m.vertices[a], m.vertices[b]);
        let s = (y - p.y) / (q.y - p.y);
        let r = p + (q - p) * s;
        [r.x, r.z]
    };
    // Each crossing triangle gives one segment between two crossing edges.
    type E = (usize, usize);
    let mut adj: HashMap<E, Vec<E>> = HashMap::new();
    let mut order = Vec::new();
    for t in &m.triangles {
        let cut: Vec<(usize, usize)> = (0..3)
            .filter(|&k| above(t[k]) != above(t[(k + 1) % 3]))
            .map(|k| key(t[k], t[(k + 1) % 3]))
            .collect();
        if cut.len() == 2 {
            adj.entry(cut[0]).or_default().push(cut[1]);
            adj.entry(cut[1]).or_default().push(cut[0]);
            order.push(cut[0]);
        }
    }
    let mut loops = Vec::new();
    let mut used = std::collections::HashSet::new();
    for start in order {
        if used.contains(&start) {
            continue;
        }
        let mut lp = Vec::new();
        let mut e = start;
        while used.insert(e) {
            lp.push(point(e));
            match adj[&e].iter().find(|n| !used.contains(*n)) {
                Some(&n) => e = n,
                None => break,
            }
        }
        loops.push(lp);
    }
    loops
}

/// Whether the point lies inside the polygon (even-odd rule).
fn contains(poly: &[[f64; 2]], p: [f64; 2]) -> bool {
    let mut inside = false;
    for i in 0..poly.len() {
        let (a, b) = (poly[i], poly[(i + 1) % poly.len()]);
        if (a[1] > p[1]) != (b[1] > p[1]) {
            let x = a[0] + (p[1] - a[1]) / (b[1] - a[1]) * (b[0] - a[0]);
            if x > p[0] {
                inside = !inside;
            }
        }
    }
    inside
}

/// Girth (m) of the trunk at height y: a tape measure around the section curve that encloses
/// the body's axis (x, z) = (0, 0), i.e. the convex hull of that curve (the arms are separate
/// curves and are left out).
pub fn girth(m: &TriMesh, y: f64) -> f64 {
    section_loops(m, y)
        .into_iter()
        .find(|l| contains(l, [0.0, 0.0]))
        .map_or(0.0, hull_perimeter)
}

/// Armpit height (m): the lowest height above 1.1 m where the trunk section reaches beyond
/// |x| = 0.24 m, i.e. where the arms join it (sampled every millimetre).
pub fn armpit_height(m: &TriMesh) -> f64 {
    (0..400)
        .map(|i| 1.1 + 0.001 * i as f64)
        .find(|&y| {
            section_loops(m, y)
                .into_iter()
                .find(|l| contains(l, [0.0, 0.0]))
                .is_some_and(|l| l.iter().any(|p| p[0].abs() > 0.24))
        })
        .unwrap_or(1.5)
}

/// (height, girth) of the largest (or smallest, with `max = false`) trunk girth between y0 and
/// y1, sampled every millimetre.
pub fn extreme_girth(m: &TriMesh, y0: f64, y1: f64, max: bool) -> (f64, f64) {
    let mut best = (y0, if max { 0.0 } else { f64::INFINITY });
    let n = ((y1 - y0) / 0.001).round() as usize;
    for i in 0..=n {
        let y = y0 + (y1 - y0) * i as f64 / n as f64;
        let g = girth(m, y);
        if (max && g > best.1) || (!max && g < best.1 && g > 0.0) {
            best = (y, g);
        }
    }
    best
}

/// Width (m) of the section at height y across x (the breadth across the shoulders there).
pub fn breadth(m: &TriMesh, y: f64) -> f64 {
    let s = slice(m, y);
    let lo = s.iter().map(|p| p[0]).fold(f64::INFINITY, f64::min);
    let hi = s.iter().map(|p| p[0]).fold(f64::NEG_INFINITY, f64::max);
    hi - lo
}

/// Crotch height (m, the inseam): the lowest point of the body on the mid-sagittal line x = 0
/// (searched over z in [-0.15, 0.15] m).
pub fn crotch_height(m: &TriMesh) -> f64 {
    let mut best = f64::INFINITY;
    for iz in 0..=60 {
        let z = -0.15 + 0.005 * iz as f64;
        for t in &m.triangles {
            let [a, b, c] = t.map(|i| m.vertices[i]);
            // Barycentric coordinates of (0, z) in the triangle projected on xz.
            let d = (b.x - a.x) * (c.z - a.z) - (c.x - a.x) * (b.z - a.z);
            if d.abs() < 1e-18 {
                continue;
            }
            let u = ((0.0 - a.x) * (c.z - a.z) - (c.x - a.x) * (z - a.z)) / d;
            let w = ((b.x - a.x) * (z - a.z) - (0.0 - a.x) * (b.z - a.z)) / d;
            if u >= 0.0 && w >= 0.0 && u + w <= 1.0 {
                let y = a.y + u * (b.y - a.y) + w * (c.y - a.y);
                if y > 0.3 {
                    best = best.min(y);
                }
            }
        }
    }
    best
}

/// Number of connected vertex fans around each vertex that is not a single disc; 0 for a
/// 2-manifold.
pub fn non_manifold_vertices(m: &TriMesh) -> usize {
    // For each vertex, the (next, prev) corner pairs of its triangles must form one cycle.
    let mut fans: Vec<Vec<(usize, usize)>> = vec![Vec::new(); m.vertices.len()];
    for t in &m.triangles {
        for k in 0..3 {
            fans[t[k]].push((t[(k + 1) % 3], t[(k + 2) % 3]));
        }
    }
    let mut bad = 0;
    for f in &fans {
        if f.is_empty() {
            bad += 1;
            continue;
        }
        // Walk next -> prev links from the first corner; a disc visits every corner once.
        let mut seen = 1;
        let mut cur = f[0].1;
        while cur != f[0].0 && seen <= f.len() {
            match f.iter().find(|c| c.0 == cur) {
                Some(c) => {
                    cur = c.1;
                    seen += 1;
                }
                None => break,
            }
        }
        if seen != f.len() || cur != f[0].0 {
            bad += 1;
        }
    }
    bad
}

/// Number of unique undirected edges.
pub fn edge_count(m: &TriMesh) -> usize {
    let mut e: Vec<(usize, usize)> = m
        .triangles
        .iter()
        .flat_map(|t| (0..3).map(move |k| (t[k].min(t[(k + 1) % 3]), t[k].max(t[(k + 1) % 3]))))
        .collect();
    e.sort_unstable();
    e.dedup();
    e.len()
}

/// Smallest interior angle (degrees) over all triangles, and the smallest triangle area (m^2).
pub fn worst_triangle(m: &TriMesh) -> (f64, f64) {
    let mut min_angle = 180.0f64;
    let mut min_area = f64::INFINITY;
    for t in &m.triangles {
        let p = t.map(|i| m.vertices[i]);
        for k in 0..3 {
            let (a, b, c) = (p[k], p[(k + 1) % 3], p[(k + 2) % 3]);
            let ang = (b - a).angle(&(c - a)).to_degrees();
            min_angle = min_angle.min(ang);
        }
        min_area = min_area.min((p[1] - p[0]).cross(&(p[2] - p[0])).norm() * 0.5);
    }
    (min_angle, min_area)
}

/// Lowest and highest vertex heights (m).
pub fn y_range(m: &TriMesh) -> (f64, f64) {
    let lo = m.vertices.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
    let hi = m
        .vertices
        .iter()
        .map(|p| p.y)
        .fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

/// Triangles whose normal points into the solid (normal . gradient <= 0 at the centroid).
pub fn inward_triangles(m: &TriMesh, grad: &dyn Fn(&V3) -> V3) -> usize {
    m.triangles
        .iter()
        .filter(|t| {
            let [a, b, c] = t.map(|i| m.vertices[i]);
            let n = (b - a).cross(&(c - a));
            n.dot(&grad(&((a + b + c) / 3.0))) <= 0.0
        })
        .count()
}
