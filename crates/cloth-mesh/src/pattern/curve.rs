//! Panel edges as plane curves (segment, quadratic / cubic Bezier, circular arc), with
//! arc-length parametrisation so that stitched edges can be sampled at matching lengths.

use std::f64::consts::{PI, TAU};

use crate::Vec2;

/// Sub-intervals of the Bezier arc-length table; with 8-point Gauss-Legendre on each, the
/// length of any smooth cubic is exact to about 1e-12 relative.
const TABLE_INTERVALS: usize = 64;

/// 8-point Gauss-Legendre nodes on [-1, 1] (positive half) and weights.
const GL_NODES: [f64; 4] = [
    0.183_434_642_495_649_8,
    0.525_532_409_916_329,
    0.796_666_477_413_626_7,
    0.960_289_856_497_536_3,
];
const GL_WEIGHTS: [f64; 4] = [
    0.362_683_783_378_362,
    0.313_706_645_877_887_3,
    0.222_381_034_453_374_5,
    0.101_228_536_290_376_3,
];

/// The left normal of `v` (rotated by +90 degrees), same length.
pub(crate) fn perp(v: Vec2) -> Vec2 {
    Vec2::new(-v.y, v.x)
}

/// One panel edge as a plane curve, in panel coordinates (m).
#[derive(Clone, Debug)]
pub(crate) enum Curve {
    /// Straight segment.
    Line { a: Vec2, b: Vec2 },
    /// Bezier curve of degree 2 or 3 (`p` holds 3 or 4 control points, ends included),
    /// with its cumulative arc-length table (`TABLE_INTERVALS + 1` entries, m).
    Bezier { p: Vec<Vec2>, table: Vec<f64> },
    /// Circular arc: centre, radius (m), start angle and signed sweep (rad, positive is
    /// counter-clockwise), plus the exact end points (kept so that ends are bit-exact).
    Arc {
        c: Vec2,
        r: f64,
        theta0: f64,
        sweep: f64,
        a: Vec2,
        b: Vec2,
    },
}

impl Curve {
    /// A straight segment.
    pub(crate) fn line(a: Vec2, b: Vec2) -> Self {
        Curve::Line { a, b }
    }

    /// A Bezier curve through control points `p` (3 or 4 points, ends included).
    pub(crate) fn bezier(p: Vec<Vec2>) -> Self {
        let mut table = Vec::with_capacity(TABLE_INTERVALS + 1);
        table.push(0.0);
        let mut acc = 0.0;
        for i in 0..TABLE_INTERVALS {
            let t0 = i as f64 / TABLE_INTERVALS as f64;
            let t1 = (i + 1) as f64 / TABLE_INTERVALS as f64;
            acc += bezier_length(&p, t0, t1);
            table.push(acc);
        }
        Curve::Bezier { p, table }
    }

    /// The SVG-style arc from `a` to `b` with the given radius (m) and flags, as GarmentCode
    /// writes circle edges: `right` (the SVG sweep flag in the reference mesher) means the
    /// arc turns counter-clockwise about its centre in panel coordinates, which puts it to the
    /// right of the direction `a -> b` (small or large); `large_arc` picks the arc longer than
    /// a half circle. A radius below half the chord is scaled up to it (as SVG does).
    /// Returns `None` when `a == b` or the numbers overflow.
    pub(crate) fn arc(a: Vec2, b: Vec2, radius: f64, large_arc: bool, right: bool) -> Option<Self> {
        let chord = b - a;
        let d = chord.norm();
        if !(d > 0.0 && d.is_finite() && radius.is_finite()) {
            return None;
        }
        let r = radius.abs().max(0.5 * d);
        let h = (r * r - 0.25 * d * d).max(0.0).sqrt();
        let left = perp(chord) / d;
        // Small counter-clockwise arc (right = true) bulges right: its centre is on the left.
        let side = if large_arc != right { 1.0 } else { -1.0 };
        let c = 0.5 * (a + b) + side * h * left;
        let ta = (a.y - c.y).atan2(a.x - c.x);
        let tb = (b.y - c.y).atan2(b.x - c.x);
        let mut sweep = tb - ta;
        if right {
            while sweep <= 0.0 {
                sweep += TAU;
            }
            while sweep > TAU {
                sweep -= TAU;
            }
        } else {
            while sweep >= 0.0 {
                sweep -= TAU;
            }
            while sweep < -TAU {
                sweep += TAU;
            }
        }
        // An exact half circle can land on either side of pi by rounding; the flags decide.
        if (sweep.abs() - PI).abs() < 1e-9 {
            sweep = sweep.signum() * PI;
        }
        let arc = Curve::Arc {
            c,
            r,
            theta0: ta,
            sweep,
            a,
            b,
        };
        arc.length().is_finite().then_some(arc)
    }

    /// Arc length (m).
    pub(crate) fn length(&self) -> f64 {
        match self {
            Curve::Line { a, b } => (b - a).norm(),
            Curve::Bezier { table, .. } => *table.last().unwrap_or(&0.0),
            Curve::Arc { r, sweep, .. } => r * sweep.abs(),
        }
    }

    /// Point at curve parameter `t` in [0, 1] (not arc length).
    pub(crate) fn point(&self, t: f64) -> Vec2 {
        match self {
            Curve::Line { a, b } => a + t * (b - a),
            Curve::Bezier { p, .. } => bezier_point(p, t),
            Curve::Arc {
                c,
                r,
                theta0,
                sweep,
                ..
            } => {
                let th = theta0 + t * sweep;
                c + *r * Vec2::new(th.cos(), th.sin())
            }
        }
    }

    /// Point at arc-length fraction `s` in [0, 1]; `s = 0` and `s = 1` give the end points
    /// exactly.
    pub(crate) fn point_at_fraction(&self, s: f64) -> Vec2 {
        let (a, b) = self.ends();
        if s <= 0.0 {
            return a;
        }
        if s >= 1.0 {
            return b;
        }
        match self {
            Curve::Line { .. } | Curve::Arc { .. } => self.point(s),
            Curve::Bezier { p, table } => bezier_point(p, bezier_t_at_length(p, table, s)),
        }
    }

    /// The end points (start, end).
    pub(crate) fn ends(&self) -> (Vec2, Vec2) {
        match self {
            Curve::Line { a, b } | Curve::Arc { a, b, .. } => (*a, *b),
            Curve::Bezier { p, .. } => (p[0], p[p.len() - 1]),
        }
    }

    /// `n + 1` points at equal arc-length steps, ends exact (`n >= 1`).
    pub(crate) fn samples(&self, n: usize) -> Vec<Vec2> {
        let n = n.max(1);
        (0..=n)
            .map(|i| self.point_at_fraction(i as f64 / n as f64))
            .collect()
    }

    /// True for a straight segment.
    pub(crate) fn is_straight(&self) -> bool {
        matches!(self, Curve::Line { .. })
    }
}

fn bezier_point(p: &[Vec2], t: f64) -> Vec2 {
    let s = 1.0 - t;
    match p.len() {
        3 => s * s * p[0] + 2.0 * s * t * p[1] + t * t * p[2],
        4 => s * s * s * p[0] + 3.0 * s * s * t * p[1] + 3.0 * s * t * t * p[2] + t * t * t * p[3],
        _ => p.first().copied().unwrap_or_else(Vec2::zeros),
    }
}

fn bezier_speed(p: &[Vec2], t: f64) -> f64 {
    let s = 1.0 - t;
    let d = match p.len() {
        3 => 2.0 * (s * (p[1] - p[0]) + t * (p[2] - p[1])),
        4 => 3.0 * (s * s * (p[1] - p[0]) + 2.0 * s * t * (p[2] - p[1]) + t * t * (p[3] - p[2])),
        _ => Vec2::zeros(),
    };
    d.norm()
}

/// Arc length of the Bezier between parameters `t0` and `t1` (8-point Gauss-Legendre).
fn bezier_length(p: &[Vec2], t0: f64, t1: f64) -> f64 {
    let half = 0.5 * (t1 - t0);
    let mid = 0.5 * (t1 + t0);
    let mut sum = 0.0;
    for (x, w) in GL_NODES.iter().zip(GL_WEIGHTS) {
        sum += w * (bezier_speed(p, mid - half * x) + bezier_speed(p, mid + half * x));
    }
    sum * half
}

/// The parameter t at which the arc length from 0 is `s` times the total (0 < s < 1).
fn bezier_t_at_length(p: &[Vec2], table: &[f64], s: f64) -> f64 {
    let total = *table.last().unwrap_or(&0.0);
    let target = s * total;
    // Interval i with table[i] <= target < table[i + 1].
    let i = table
        .partition_point(|&l| l <= target)
        .saturating_sub(1)
        .min(TABLE_INTERVALS - 1);
    let n = TABLE_INTERVALS as f64;
    let (mut lo, mut hi) = (i as f64 / n, (i + 1) as f64 / n);
    let base = table[i];
    let span = table[i + 1] - base;
    let mut t = if span > 0.0 {
        lo + (hi - lo) * ((target - base) / span).clamp(0.0, 1.0)
    } else {
        lo
    };
    // Safeguarded Newton: f(t) = length(lo_i, t) - (target - base), increasing in t.
    let t_start = lo;
    for _ in 0..40 {
        let f = bezier_length(p, t_start, t) - (target - base);
        if f.abs() <= 1e-14 * total.max(f64::MIN_POSITIVE) {
            break;
        }
        if f > 0.0 {
            hi = t;
        } else {
            lo = t;
        }
        let speed = bezier_speed(p, t);
        let newton = t - f / speed;
        t = if speed > 0.0 && newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if hi - lo < 1e-15 {
            break;
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn straight_bezier_has_chord_length_and_uniform_samples() {
        // Control points bunched towards the start: parameter speed is not uniform, but the
        // arc-length samples must be.
        let p = vec![
            Vec2::new(0.0, 0.0),
            Vec2::new(0.1, 0.0),
            Vec2::new(0.2, 0.0),
            Vec2::new(3.0, 0.0),
        ];
        let c = Curve::bezier(p);
        assert!((c.length() - 3.0).abs() < 1e-12);
        for (i, q) in c.samples(6).iter().enumerate() {
            assert!((q.x - 0.5 * i as f64).abs() < 1e-10, "{i}: {q}");
        }
    }

    #[test]
    fn quadratic_bezier_length_matches_the_closed_form() {
        // y = x^2 from 0 to 1: quadratic Bezier (0,0), (0.5,0), (1,1).
        let c = Curve::bezier(vec![
            Vec2::new(0.0, 0.0),
            Vec2::new(0.5, 0.0),
            Vec2::new(1.0, 1.0),
        ]);
        let exact = 0.5 * 5f64.sqrt() + 0.25 * (2.0 + 5f64.sqrt()).ln();
        assert!((c.length() - exact).abs() < 1e-12);
        let q = c.point_at_fraction(0.5);
        // Half the arc length from x = 0: solve numerically with a fine polyline.
        let mut acc = 0.0;
        let mut prev = Vec2::zeros();
        let mut x_half = 0.0;
        for k in 1..=200_000 {
            let x = k as f64 / 200_000.0;
            let p = Vec2::new(x, x * x);
            acc += (p - prev).norm();
            prev = p;
            if acc >= 0.5 * exact {
                x_half = x;
                break;
            }
        }
        assert!((q.x - x_half).abs() < 1e-5, "{q} vs {x_half}");
        assert!((q.y - q.x * q.x).abs() < 1e-12);
    }

    #[test]
    fn arc_flags_follow_svg_semantics_in_panel_coordinates() {
        let a = Vec2::new(0.0, 0.0);
        let b = Vec2::new(2.0, 0.0);
        // Half circle, right = true: counter-clockwise about (1, 0), so through (1, -1).
        let c = Curve::arc(a, b, 1.0, false, true).unwrap();
        assert!((c.point_at_fraction(0.5) - Vec2::new(1.0, -1.0)).norm() < 1e-12);
        assert!((c.length() - PI).abs() < 1e-12);
        let c = Curve::arc(a, b, 1.0, false, false).unwrap();
        assert!((c.point_at_fraction(0.5) - Vec2::new(1.0, 1.0)).norm() < 1e-12);
        // Radius 2: the small arc to the right dips by 2 - sqrt(3).
        let small = Curve::arc(a, b, 2.0, false, true).unwrap();
        let mid = small.point_at_fraction(0.5);
        assert!((mid - Vec2::new(1.0, -(2.0 - 3f64.sqrt()))).norm() < 1e-12);
        assert!((small.length() - 2.0 * PI / 3.0).abs() < 1e-12);
        // The large arc turns the same way, so it also passes right of the chord, the long
        // way round a centre now below the chord.
        let large = Curve::arc(a, b, 2.0, true, true).unwrap();
        let mid = large.point_at_fraction(0.5);
        assert!(
            (mid - Vec2::new(1.0, -(2.0 + 3f64.sqrt()))).norm() < 1e-12,
            "{mid}"
        );
        assert!((large.length() - 2.0 * 5.0 * PI / 3.0).abs() < 1e-12);
        // Too small a radius is scaled up to the half chord.
        let c = Curve::arc(a, b, 0.1, false, true).unwrap();
        assert!((c.length() - PI).abs() < 1e-12);
        assert_eq!(c.ends(), (a, b));
        assert!(Curve::arc(a, a, 1.0, false, true).is_none());
    }
}
