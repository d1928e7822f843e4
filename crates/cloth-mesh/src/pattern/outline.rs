//! Closed polylines: signed area and self-intersection.

use crate::Vec2;

/// Signed area of the closed polyline (shoelace formula), positive when counter-clockwise.
pub(crate) fn signed_area(pts: &[Vec2]) -> f64 {
    let n = pts.len();
    let mut twice = 0.0;
    for i in 0..n {
        let (p, q) = (pts[i], pts[(i + 1) % n]);
        twice += p.x * q.y - q.x * p.y;
    }
    0.5 * twice
}

fn orient(a: Vec2, b: Vec2, c: Vec2) -> f64 {
    (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)
}

/// `c` is collinear with segment `a b`: is it within the segment's bounding box?
fn within(a: Vec2, b: Vec2, c: Vec2) -> bool {
    c.x >= a.x.min(b.x) && c.x <= a.x.max(b.x) && c.y >= a.y.min(b.y) && c.y <= a.y.max(b.y)
}

/// Do the closed segments `p1 q1` and `p2 q2` share any point?
fn segments_meet(p1: Vec2, q1: Vec2, p2: Vec2, q2: Vec2) -> bool {
    let o1 = orient(p1, q1, p2);
    let o2 = orient(p1, q1, q2);
    let o3 = orient(p2, q2, p1);
    let o4 = orient(p2, q2, q1);
    if ((o1 > 0.0 && o2 < 0.0) || (o1 < 0.0 && o2 > 0.0))
        && ((o3 > 0.0 && o4 < 0.0) || (o3 < 0.0 && o4 > 0.0))
    {
        return true;
    }
    (o1 == 0.0 && within(p1, q1, p2))
        || (o2 == 0.0 && within(p1, q1, q2))
        || (o3 == 0.0 && within(p2, q2, p1))
        || (o4 == 0.0 && within(p2, q2, q1))
}

/// The first pair `(i, j)`, `i < j`, of segments of the closed polyline `pts` (segment `k`
/// runs from `pts[k]` to `pts[k + 1]`, the last one back to `pts[0]`) that cross, touch or
/// overlap, other than neighbours meeting only at their shared point. Neighbours that fold
/// back onto each other (a zero-angle spike) count as overlapping.
///
/// A sweep over x: segments are sorted by their smallest x and each is tested against the
/// following ones whose x-range overlaps, so an outline costs about O(n log n) for the
/// shapes of garment panels.
pub(crate) fn self_intersection(pts: &[Vec2]) -> Option<(usize, usize)> {
    let n = pts.len();
    if n < 3 {
        return None;
    }
    let seg = |k: usize| (pts[k], pts[(k + 1) % n]);
    let adjacent = |i: usize, j: usize| (i + 1) % n == j || (j + 1) % n == i;
    // Neighbours folding back on each other.
    for i in 0..n {
        let (p, q) = seg(i);
        let r = pts[(i + 2) % n];
        let (u, v) = (q - p, r - q);
        let cross = u.x * v.y - u.y * v.x;
        if cross.abs() <= 1e-12 * u.norm() * v.norm() && u.dot(&v) < 0.0 {
            let j = (i + 1) % n;
            return Some((i.min(j), i.max(j)));
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    let xmin = |k: usize| {
        let (p, q) = seg(k);
        p.x.min(q.x)
    };
    order.sort_by(|&a, &b| xmin(a).total_cmp(&xmin(b)).then(a.cmp(&b)));
    let mut found: Option<(usize, usize)> = None;
    for (oi, &i) in order.iter().enumerate() {
        let (p1, q1) = seg(i);
        let xmax = p1.x.max(q1.x);
        let (ymin, ymax) = (p1.y.min(q1.y), p1.y.max(q1.y));
        for &j in &order[oi + 1..] {
            if xmin(j) > xmax {
                break;
            }
            if adjacent(i, j) {
                continue;
            }
            let (p2, q2) = seg(j);
            if p2.y.max(q2.y) < ymin || p2.y.min(q2.y) > ymax {
                continue;
            }
            if segments_meet(p1, q1, p2, q2) {
                let pair = (i.min(j), i.max(j));
                // Report the pair that comes first in loop order, independent of the sweep.
                if found.is_none_or(|f| pair < f) {
                    found = Some(pair);
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f64, y: f64) -> Vec2 {
        Vec2::new(x, y)
    }

    #[test]
    fn squares_and_bow_ties() {
        let sq = [v(0.0, 0.0), v(1.0, 0.0), v(1.0, 1.0), v(0.0, 1.0)];
        assert_eq!(signed_area(&sq), 1.0);
        assert_eq!(self_intersection(&sq), None);
        let bow = [v(0.0, 0.0), v(1.0, 1.0), v(1.0, 0.0), v(0.0, 1.0)];
        assert_eq!(self_intersection(&bow), Some((0, 2)));
        // A vertex touching a non-adjacent segment.
        let touch = [
            v(0.0, 0.0),
            v(2.0, 0.0),
            v(2.0, 2.0),
            v(1.0, 0.0),
            v(0.0, 2.0),
        ];
        assert!(self_intersection(&touch).is_some());
        // A spike folding back on itself.
        let spike = [v(0.0, 0.0), v(2.0, 0.0), v(1.0, 0.0), v(1.0, 1.0)];
        assert!(self_intersection(&spike).is_some());
    }
}
