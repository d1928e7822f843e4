//! Small exact-arithmetic-free geometric kernels: closest points and intersection tests.

use cloth_mesh::Vec3;

/// Which feature of a triangle a closest point lies on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TriFeature {
    /// Vertex 0, 1 or 2.
    Vertex(u8),
    /// Edge (i, j) with i < j, vertices of the triangle in local numbering.
    Edge(u8, u8),
    /// The interior of the face.
    Face,
}

/// Closest point of triangle (a, b, c) to p: barycentric weights (sum 1, all >= 0) and feature.
/// Follows the Voronoi-region walk of Ericson, "Real-Time Collision Detection" (2005), 5.1.5.
pub(crate) fn closest_on_triangle(
    p: &Vec3,
    a: &Vec3,
    b: &Vec3,
    c: &Vec3,
) -> ([f64; 3], TriFeature) {
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = ab.dot(&ap);
    let d2 = ac.dot(&ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return ([1.0, 0.0, 0.0], TriFeature::Vertex(0));
    }
    let bp = p - b;
    let d3 = ab.dot(&bp);
    let d4 = ac.dot(&bp);
    if d3 >= 0.0 && d4 <= d3 {
        return ([0.0, 1.0, 0.0], TriFeature::Vertex(1));
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return ([1.0 - v, v, 0.0], TriFeature::Edge(0, 1));
    }
    let cp = p - c;
    let d5 = ab.dot(&cp);
    let d6 = ac.dot(&cp);
    if d6 >= 0.0 && d5 <= d6 {
        return ([0.0, 0.0, 1.0], TriFeature::Vertex(2));
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return ([1.0 - w, 0.0, w], TriFeature::Edge(0, 2));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return ([0.0, 1.0 - w, w], TriFeature::Edge(1, 2));
    }
    let denom = va + vb + vc;
    if !(denom > 0.0) || !denom.is_finite() {
        // Degenerate (collinear) triangle: fall back to the closest of the three edges.
        return closest_on_degenerate(p, a, b, c);
    }
    let v = vb / denom;
    let w = vc / denom;
    ([1.0 - v - w, v, w], TriFeature::Face)
}

fn closest_on_degenerate(p: &Vec3, a: &Vec3, b: &Vec3, c: &Vec3) -> ([f64; 3], TriFeature) {
    let mut best = ([1.0, 0.0, 0.0], TriFeature::Vertex(0));
    let mut best_d = f64::INFINITY;
    let pts = [a, b, c];
    for (i, j) in [(0u8, 1u8), (0, 2), (1, 2)] {
        let s = closest_on_segment(p, pts[i as usize], pts[j as usize]);
        let q = pts[i as usize] * (1.0 - s) + pts[j as usize] * s;
        let d = (p - q).norm_squared();
        if d < best_d {
            best_d = d;
            let mut w = [0.0; 3];
            w[i as usize] = 1.0 - s;
            w[j as usize] = s;
            best = (w, TriFeature::Edge(i, j));
        }
    }
    best
}

/// Parameter s in [0, 1] of the point of segment (a, b) closest to p.
pub(crate) fn closest_on_segment(p: &Vec3, a: &Vec3, b: &Vec3) -> f64 {
    let ab = b - a;
    let l2 = ab.norm_squared();
    if !(l2 > 0.0) {
        return 0.0;
    }
    ((p - a).dot(&ab) / l2).clamp(0.0, 1.0)
}

/// Closest points of segments (p0, p1) and (q0, q1): parameters (s, t) in [0, 1]^2 so that
/// p0 + s (p1 - p0) and q0 + t (q1 - q0) are closest. Ericson (2005), 5.1.9.
pub(crate) fn closest_segment_segment(p0: &Vec3, p1: &Vec3, q0: &Vec3, q1: &Vec3) -> (f64, f64) {
    let d1 = p1 - p0;
    let d2 = q1 - q0;
    let r = p0 - q0;
    let a = d1.norm_squared();
    let e = d2.norm_squared();
    let f = d2.dot(&r);
    let tiny = 1e-30;
    if a <= tiny && e <= tiny {
        return (0.0, 0.0);
    }
    if a <= tiny {
        return (0.0, (f / e).clamp(0.0, 1.0));
    }
    let c = d1.dot(&r);
    if e <= tiny {
        return ((-c / a).clamp(0.0, 1.0), 0.0);
    }
    let b = d1.dot(&d2);
    let denom = a * e - b * b;
    let mut s = if denom > 1e-14 * a * e {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    (s, t)
}

/// Whether the closed segment (p, q) crosses triangle (a, b, c) (Moeller-Trumbore style test).
/// Segments lying in the triangle's plane are reported as not crossing.
pub(crate) fn segment_crosses_triangle(p: &Vec3, q: &Vec3, a: &Vec3, b: &Vec3, c: &Vec3) -> bool {
    let dir = q - p;
    let e1 = b - a;
    let e2 = c - a;
    let h = dir.cross(&e2);
    let det = e1.dot(&h);
    let scale = dir.norm() * e1.norm() * e2.norm();
    if !(det.abs() > 1e-12 * scale) {
        return false;
    }
    let inv = 1.0 / det;
    let s = p - a;
    let u = inv * s.dot(&h);
    if !(0.0..=1.0).contains(&u) {
        return false;
    }
    let qv = s.cross(&e1);
    let v = inv * dir.dot(&qv);
    if v < 0.0 || u + v > 1.0 {
        return false;
    }
    let t = inv * e2.dot(&qv);
    (0.0..=1.0).contains(&t)
}

/// Whether two triangles intersect: an edge of one crosses the other. Coplanar overlaps are not
/// detected (they have no transversal crossing).
pub(crate) fn triangles_intersect(t0: [&Vec3; 3], t1: [&Vec3; 3]) -> bool {
    for (x, y) in [(0, 1), (1, 2), (2, 0)] {
        if segment_crosses_triangle(t0[x], t0[y], t1[0], t1[1], t1[2])
            || segment_crosses_triangle(t1[x], t1[y], t0[0], t0[1], t0[2])
        {
            return true;
        }
    }
    false
}

/// Unit normal of triangle (a, b, c) by the right-hand rule, or `None` if degenerate.
pub(crate) fn triangle_normal(a: &Vec3, b: &Vec3, c: &Vec3) -> Option<Vec3> {
    let n = (b - a).cross(&(c - a));
    let l = n.norm();
    if l > 0.0 && l.is_finite() {
        Some(n / l)
    } else {
        None
    }
}

/// A unit vector perpendicular to v (v need not be unit; returns +x for v = 0).
pub(crate) fn any_perpendicular(v: &Vec3) -> Vec3 {
    let axis = if v.x.abs() <= v.y.abs() && v.x.abs() <= v.z.abs() {
        Vec3::x()
    } else if v.y.abs() <= v.z.abs() {
        Vec3::y()
    } else {
        Vec3::z()
    };
    let p = v.cross(&axis);
    let l = p.norm();
    if l > 0.0 { p / l } else { Vec3::x() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f64, y: f64, z: f64) -> Vec3 {
        Vec3::new(x, y, z)
    }

    #[test]
    fn closest_on_triangle_regions() {
        let (a, b, c) = (v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0));
        let (w, f) = closest_on_triangle(&v(0.25, 0.25, 1.0), &a, &b, &c);
        assert_eq!(f, TriFeature::Face);
        assert!((w[1] - 0.25).abs() < 1e-15 && (w[2] - 0.25).abs() < 1e-15);
        let (_, f) = closest_on_triangle(&v(-1.0, -1.0, 0.3), &a, &b, &c);
        assert_eq!(f, TriFeature::Vertex(0));
        let (w, f) = closest_on_triangle(&v(0.5, -2.0, 0.0), &a, &b, &c);
        assert_eq!(f, TriFeature::Edge(0, 1));
        assert!((w[1] - 0.5).abs() < 1e-15);
        let (w, f) = closest_on_triangle(&v(1.0, 1.0, 0.0), &a, &b, &c);
        assert_eq!(f, TriFeature::Edge(1, 2));
        assert!((w[1] - 0.5).abs() < 1e-15);
    }

    #[test]
    fn closest_on_triangle_is_the_minimum_over_a_dense_sample() {
        let (a, b, c) = (v(0.1, -0.2, 0.3), v(1.2, 0.4, -0.1), v(-0.3, 0.9, 0.5));
        for p in [
            v(0.3, 0.3, 2.0),
            v(2.0, 2.0, 0.0),
            v(-1.0, 0.0, -1.0),
            v(0.5, -1.0, 0.2),
        ] {
            let (w, _) = closest_on_triangle(&p, &a, &b, &c);
            let q = a * w[0] + b * w[1] + c * w[2];
            let d = (p - q).norm();
            let n = 200;
            for i in 0..=n {
                for j in 0..=(n - i) {
                    let (s, t) = (i as f64 / n as f64, j as f64 / n as f64);
                    let r = a * (1.0 - s - t) + b * s + c * t;
                    assert!((p - r).norm() >= d - 1e-12);
                }
            }
        }
    }

    #[test]
    fn segment_segment_known_cases() {
        let (s, t) = closest_segment_segment(
            &v(-1.0, 0.0, 0.0),
            &v(1.0, 0.0, 0.0),
            &v(0.5, -1.0, 1.0),
            &v(0.5, 1.0, 1.0),
        );
        assert!((s - 0.75).abs() < 1e-15 && (t - 0.5).abs() < 1e-15);
        // Parallel segments: some pair at the true distance 1.
        let (s, t) = closest_segment_segment(
            &v(0.0, 0.0, 0.0),
            &v(1.0, 0.0, 0.0),
            &v(0.5, 1.0, 0.0),
            &v(2.0, 1.0, 0.0),
        );
        let d = (v(s, 0.0, 0.0) - v(0.5 + 1.5 * t, 1.0, 0.0)).norm();
        assert!((d - 1.0).abs() < 1e-15);
    }

    #[test]
    fn crossing_and_coplanar_triangles() {
        let t0 = [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0)];
        let t1 = [v(0.2, 0.2, -1.0), v(0.2, 0.2, 1.0), v(3.0, 3.0, 0.0)];
        assert!(triangles_intersect(
            [&t0[0], &t0[1], &t0[2]],
            [&t1[0], &t1[1], &t1[2]]
        ));
        let t2 = [v(2.0, 0.0, 0.0), v(3.0, 0.0, 0.0), v(2.0, 1.0, 0.0)];
        assert!(!triangles_intersect(
            [&t0[0], &t0[1], &t0[2]],
            [&t2[0], &t2[1], &t2[2]]
        ));
        let t3 = [v(0.2, 0.2, 0.1), v(0.2, 0.2, 1.0), v(3.0, 3.0, 0.5)];
        assert!(!triangles_intersect(
            [&t0[0], &t0[1], &t0[2]],
            [&t3[0], &t3[1], &t3[2]]
        ));
    }
}
