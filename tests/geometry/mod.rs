//! Geometry the root integration tests check the simulator's output with, written apart from
//! the simulator's own contact queries: point-to-triangle and point-to-mesh distances, a
//! ray-parity inside test for closed meshes, and an OBJ reader of vertices and triangles.

// Each test file that declares `mod geometry;` uses a part of it.
#![allow(dead_code)]

use nalgebra::Vector3;
use std::path::Path;

type Vec3 = Vector3<f64>;

/// Distance from `p` to triangle (a, b, c): the plane projection when it falls inside, else
/// the nearest of the three edges.
pub fn point_triangle_distance(p: &Vec3, a: &Vec3, b: &Vec3, c: &Vec3) -> f64 {
    let seg = |u: &Vec3, w: &Vec3| {
        let d = w - u;
        let s = ((p - u).dot(&d) / d.norm_squared()).clamp(0.0, 1.0);
        (p - (u + d * s)).norm()
    };
    let n = (b - a).cross(&(c - a)).normalize();
    let q = p - n * (p - a).dot(&n);
    let side = |u: &Vec3, w: &Vec3| (w - u).cross(&(q - u)).dot(&n) >= 0.0;
    if side(a, b) && side(b, c) && side(c, a) {
        return (p - q).norm();
    }
    seg(a, b).min(seg(b, c)).min(seg(c, a))
}

/// Distance from `p` to the nearest triangle of the mesh, skipping triangles whose box is
/// farther than `cap` (the answer is then at least `cap`; `f64::INFINITY` checks them all).
pub fn mesh_distance(p: &Vec3, v: &[Vec3], t: &[[usize; 3]], cap: f64) -> f64 {
    let mut best = cap;
    for f in t {
        let [a, b, c] = f.map(|i| v[i]);
        let lo = a.inf(&b).inf(&c) - Vec3::repeat(best);
        let hi = a.sup(&b).sup(&c) + Vec3::repeat(best);
        if (0..3).all(|k| p[k] >= lo[k] && p[k] <= hi[k]) {
            best = best.min(point_triangle_distance(p, &a, &b, &c));
        }
    }
    best
}

/// Crossings of the ray from `p` along `dir` with the triangles (Moller-Trumbore).
fn crossings(p: &Vec3, dir: &Vec3, v: &[Vec3], t: &[[usize; 3]]) -> usize {
    let mut n = 0;
    for tri in t {
        let [a, b, c] = tri.map(|i| v[i]);
        let (e1, e2) = (b - a, c - a);
        let h = dir.cross(&e2);
        let det = e1.dot(&h);
        if det.abs() < 1e-15 {
            continue;
        }
        let s = p - a;
        let u = s.dot(&h) / det;
        let qv = s.cross(&e1);
        let w = dir.dot(&qv) / det;
        if u >= 0.0 && w >= 0.0 && u + w <= 1.0 && e2.dot(&qv) / det > 0.0 {
            n += 1;
        }
    }
    n
}

/// Whether `p` is inside the closed mesh: the majority of three rays in skew directions
/// cross it an odd number of times (one ray grazing an edge does not decide).
pub fn inside_mesh(p: &Vec3, v: &[Vec3], t: &[[usize; 3]]) -> bool {
    let dirs = [
        Vec3::new(0.3123, -0.1378, 0.9399),
        Vec3::new(-0.7063, 0.5377, 0.4591),
        Vec3::new(0.1618, 0.9511, -0.2630),
    ];
    let odd = dirs
        .iter()
        .filter(|d| crossings(p, &d.normalize(), v, t) % 2 == 1)
        .count();
    odd >= 2
}

/// The `v` and `f` lines of an OBJ file (1-based, `a/b/c` corners; polygons are fanned into
/// triangles).
pub fn read_obj(path: &Path) -> (Vec<Vec3>, Vec<[usize; 3]>) {
    let text = std::fs::read_to_string(path).unwrap();
    let (mut v, mut f) = (Vec::new(), Vec::new());
    for line in text.lines() {
        let mut it = line.split_whitespace();
        match it.next() {
            Some("v") => {
                let c: Vec<f64> = it.take(3).map(|s| s.parse().unwrap()).collect();
                v.push(Vec3::new(c[0], c[1], c[2]));
            }
            Some("f") => {
                let c: Vec<usize> = it
                    .map(|s| s.split('/').next().unwrap().parse::<usize>().unwrap() - 1)
                    .collect();
                for k in 1..c.len() - 1 {
                    f.push([c[0], c[k], c[k + 1]]);
                }
            }
            _ => {}
        }
    }
    (v, f)
}
