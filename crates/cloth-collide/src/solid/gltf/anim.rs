//! Animation channels and their interpolation at an exact time (glTF 2.0 section 3.11,
//! "Animations", and Appendix C, "Interpolation").

use cloth_mesh::Vec3;
use nalgebra::{Quaternion, UnitQuaternion};

/// Which node property a channel drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Property {
    Translation,
    Rotation,
    Scale,
}

/// Interpolation between keyframes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Interp {
    Step,
    Linear,
    CubicSpline,
}

/// One channel: a node property keyed over time.
#[derive(Clone, Debug)]
pub(crate) struct Channel {
    /// Target node.
    pub node: usize,
    pub property: Property,
    pub interp: Interp,
    /// Key times (s), strictly increasing.
    pub times: Vec<f64>,
    /// Values, `width` components per element; for CUBICSPLINE three elements per key
    /// (in-tangent, value, out-tangent). Rotations are (x, y, z, w), values normalised.
    pub values: Vec<f64>,
}

/// A node's local transform as translation, rotation and scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Trs {
    pub t: Vec3,
    pub r: UnitQuaternion<f64>,
    pub s: Vec3,
}

impl Trs {
    /// Mixes two transforms: translations and scales linearly, rotations by slerp (a in
    /// [0, 1]; 0 gives `self`).
    pub fn mix(&self, other: &Trs, a: f64) -> Trs {
        Trs {
            t: self.t + (other.t - self.t) * a,
            r: slerp(&self.r, &other.r, a),
            s: self.s + (other.s - self.s) * a,
        }
    }
}

/// Spherical linear interpolation along the shorter arc, as glTF 2.0 Appendix C
/// ("Spherical Linear Interpolation") writes it:
/// a = acos|q0 . q1|, s = sign(q0 . q1),
/// q = sin(a (1 - t)) / sin(a) q0 + s sin(a t) / sin(a) q1.
/// Nearly equal rotations (sin a < 1e-9) fall back to normalised linear interpolation.
pub(crate) fn slerp(
    q0: &UnitQuaternion<f64>,
    q1: &UnitQuaternion<f64>,
    t: f64,
) -> UnitQuaternion<f64> {
    let (a, b) = (q0.coords, q1.coords);
    let d = a.dot(&b);
    let s = if d < 0.0 { -1.0 } else { 1.0 };
    let ang = d.abs().min(1.0).acos();
    let sa = ang.sin();
    let v = if sa < 1e-9 {
        a * (1.0 - t) + b * (s * t)
    } else {
        a * ((ang * (1.0 - t)).sin() / sa) + b * (s * (ang * t).sin() / sa)
    };
    UnitQuaternion::new_normalize(Quaternion::from(v))
}

impl Channel {
    /// Components per element: 3 (translation, scale) or 4 (rotation).
    pub fn width(&self) -> usize {
        if self.property == Property::Rotation {
            4
        } else {
            3
        }
    }

    /// Element `e` of the output (for CUBICSPLINE, e = 3 k + 1 is key k's value).
    fn elem(&self, e: usize) -> &[f64] {
        let w = self.width();
        &self.values[e * w..(e + 1) * w]
    }

    /// The value of key k.
    fn key(&self, k: usize) -> &[f64] {
        match self.interp {
            Interp::CubicSpline => self.elem(3 * k + 1),
            _ => self.elem(k),
        }
    }

    /// The channel's value at time `t` (s), exactly (no resampling): held at the first and last
    /// keys outside their range (section 3.11: "the animated values are clamped").
    pub fn sample(&self, t: f64) -> [f64; 4] {
        let mut out = [0.0; 4];
        let w = self.width();
        let n = self.times.len();
        let copy = |out: &mut [f64; 4], v: &[f64]| out[..w].copy_from_slice(v);
        // A NaN time is held at the first key.
        if n == 1 || t.is_nan() || t <= self.times[0] {
            copy(&mut out, self.key(0));
            return out;
        }
        if t >= self.times[n - 1] {
            copy(&mut out, self.key(n - 1));
            return out;
        }
        // times[k] <= t < times[k + 1].
        let k = self.times.partition_point(|&x| x <= t) - 1;
        let (t0, t1) = (self.times[k], self.times[k + 1]);
        let td = t1 - t0;
        let s = (t - t0) / td;
        match self.interp {
            Interp::Step => copy(&mut out, self.key(k)),
            Interp::Linear => {
                let (a, b) = (self.key(k), self.key(k + 1));
                if self.property == Property::Rotation {
                    let q = slerp(&quat(a), &quat(b), s);
                    out = [q.i, q.j, q.k, q.w];
                } else {
                    for i in 0..w {
                        out[i] = a[i] + (b[i] - a[i]) * s;
                    }
                }
            }
            Interp::CubicSpline => {
                // Appendix C, "Cubic Spline Interpolation": Hermite basis with tangents scaled by
                // the key interval td; key k's out-tangent b_k and key k+1's in-tangent a_{k+1}.
                let (s2, s3) = (s * s, s * s * s);
                let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
                let h10 = td * (s3 - 2.0 * s2 + s);
                let h01 = -2.0 * s3 + 3.0 * s2;
                let h11 = td * (s3 - s2);
                let (v0, b0) = (self.elem(3 * k + 1), self.elem(3 * k + 2));
                let (a1, v1) = (self.elem(3 * k + 3), self.elem(3 * k + 4));
                for i in 0..w {
                    out[i] = h00 * v0[i] + h10 * b0[i] + h01 * v1[i] + h11 * a1[i];
                }
                if self.property == Property::Rotation {
                    let q = quat(&out);
                    out = [q.i, q.j, q.k, q.w];
                }
            }
        }
        out
    }

    /// Applies the channel's value at time t to a node's transform.
    pub fn apply(&self, t: f64, trs: &mut Trs) {
        let v = self.sample(t);
        match self.property {
            Property::Translation => trs.t = Vec3::new(v[0], v[1], v[2]),
            Property::Scale => trs.s = Vec3::new(v[0], v[1], v[2]),
            Property::Rotation => trs.r = quat(&v),
        }
    }
}

/// A unit quaternion from (x, y, z, w); a zero quaternion gives the identity.
pub(crate) fn quat(v: &[f64]) -> UnitQuaternion<f64> {
    let q = Quaternion::new(v[3], v[0], v[1], v[2]);
    if q.norm() > 0.0 {
        UnitQuaternion::new_normalize(q)
    } else {
        UnitQuaternion::identity()
    }
}
