//! The workspace's one law of prescribed motion, shared by colliders and pinned vertices:
//! keyframes (translation and Euler angles interpolated linearly), constant velocity, deforming
//! mesh sequences (stored frames, or a skinned glTF body posed on demand), and the Euler-angle
//! convention.

use cloth_mesh::Vec3;
use nalgebra::UnitQuaternion;

use super::gltf::SkinnedTrack;

/// A pose offset at a time, for [`Motion::Keyframes`].
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct Keyframe {
    /// Time (s), >= 0; strictly increasing along a list.
    pub t: f64,
    /// Offset of the moving thing's pivot (a collider's origin, a pin group's centroid) from
    /// where it starts (m, world axes). Default zero.
    #[cfg_attr(feature = "serde", serde(default))]
    pub translation: Vec3,
    /// Extra rotation about the pivot (degrees about world x, then y, then z, see
    /// [`euler_degrees`]), applied after any initial orientation. Default zero.
    #[cfg_attr(feature = "serde", serde(default))]
    pub rotation: Vec3,
}

/// How a collider or a pin group moves. Every motion is an offset from the initial placement:
/// a point `p0` (world, at t = 0) of a rigid motion with pivot `c` goes to
/// `c + d(t) + R(t) (p0 - c)`; a collider's pose is
/// `translate(position + d(t)) * rotate(R(t)) * rotate(rotation)`.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Motion {
    /// Does not move.
    #[default]
    Static,
    /// Offsets d(t) and Euler angles r(t) interpolated linearly between keyframes (sorted by
    /// strictly increasing time); held at the first/last keyframe outside their range (then at
    /// rest).
    Keyframes(Vec<Keyframe>),
    /// Constant velocity: d(t) = linear * t, R(t) = rotation by angle |angular| t about the
    /// world axis `angular` through the pivot.
    Velocity {
        /// Velocity of the pivot (m/s).
        linear: Vec3,
        /// Angular velocity (deg/s) as a rotation vector in world axes, about the moving pivot.
        angular: Vec3,
    },
    /// Deforming mesh (colliders whose shape is a mesh only): local vertex positions per frame
    /// (frame k at time start + k / fps), interpolated linearly and held outside the range;
    /// vertex velocities by frame differences. The collider's position and rotation still place
    /// it.
    MeshSequence {
        /// Local vertex positions (m) per frame; each frame has as many vertices as the mesh.
        frames: Vec<Vec<Vec3>>,
        /// Frames per second (> 0).
        fps: f64,
        /// Time of the first frame (s, finite; negative for a preroll before the run's t = 0).
        start: f64,
    },
    /// A skinned glTF body as a deforming mesh (colliders whose shape is the body's mesh, one
    /// vertex per body vertex): the same law as [`Motion::MeshSequence`] with the track's
    /// samples as frames, posed when needed instead of stored, so memory does not grow with
    /// the run's length.
    Skinned(SkinnedTrack),
    /// A deforming mesh that also moves rigidly: the `deformation` (a [`Motion::MeshSequence`]
    /// or [`Motion::Skinned`]) gives local vertex positions, the `rigid` motion (`Static`,
    /// `Keyframes` or `Velocity`) places them. Material velocity = rigid velocity + rotated
    /// deformation velocity.
    Composite {
        /// Rigid part: `Static`, `Keyframes` or `Velocity`.
        rigid: Box<Motion>,
        /// Deforming part: a `MeshSequence` or `Skinned`.
        deformation: Box<Motion>,
    },
}

/// The deforming part of a motion: stored frames or a skinned track, frame k at time
/// `start + k / fps`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Deformation<'a> {
    Frames {
        frames: &'a [Vec<Vec3>],
        fps: f64,
        start: f64,
    },
    Skinned(&'a SkinnedTrack),
}

impl<'a> Deformation<'a> {
    /// Number of frames.
    pub fn len(&self) -> usize {
        match self {
            Deformation::Frames { frames, .. } => frames.len(),
            Deformation::Skinned(track) => track.sample_count(),
        }
    }

    /// Frames per second.
    pub fn fps(&self) -> f64 {
        match self {
            Deformation::Frames { fps, .. } => *fps,
            Deformation::Skinned(track) => track.rate(),
        }
    }

    /// Time of frame 0 (s).
    pub fn start(&self) -> f64 {
        match self {
            Deformation::Frames { start, .. } => *start,
            Deformation::Skinned(track) => track.start(),
        }
    }

    /// Frame `k` (< `len()`): borrowed, or posed into `buf`.
    pub fn frame<'b>(&self, k: usize, buf: &'b mut Vec<Vec3>) -> &'b [Vec3]
    where
        'a: 'b,
    {
        match self {
            Deformation::Frames { frames, .. } => {
                let frames: &'a [Vec<Vec3>] = frames;
                &frames[k]
            }
            Deformation::Skinned(track) => {
                track.sample(k, buf);
                buf
            }
        }
    }

    /// Which frames the state at time t (s) mixes: held before the first frame and after the
    /// last (velocity zero); otherwise the frame interval ending at or after t (at an exact
    /// frame time, the interval ending there: contacts place the solid at a step's end, and a
    /// step ending on the last frame moved with the last interval). `None` without frames.
    pub fn window(&self, t: f64) -> Option<Window> {
        let last = self.len().checked_sub(1)?;
        let t = if t.is_finite() { t - self.start() } else { 0.0 };
        let f = t * self.fps();
        if last == 0 || f < 0.0 || f > last as f64 {
            return Some(Window::Hold(if f < 0.0 { 0 } else { last }));
        }
        let k = (f.ceil() as usize).saturating_sub(1).min(last - 1);
        Some(Window::Mix(k, f - k as f64))
    }
}

/// The frames a deforming mesh's state at a time is made of.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Window {
    /// Frame k, at rest.
    Hold(usize),
    /// Frames k and k + 1, mixed with weight s on k + 1.
    Mix(usize, f64),
}

impl Window {
    /// Positions and velocities (m, m/s) of frame `a` held, or mixed with the next frame `b`
    /// at `fps`.
    pub fn state(&self, a: &[Vec3], b: &[Vec3], fps: f64) -> (Vec<Vec3>, Vec<Vec3>) {
        match *self {
            Window::Hold(_) => (a.to_vec(), vec![Vec3::zeros(); a.len()]),
            Window::Mix(_, s) => {
                let pos = a.iter().zip(b).map(|(p, q)| p + (q - p) * s).collect();
                let vel = a.iter().zip(b).map(|(p, q)| (q - p) * fps).collect();
                (pos, vel)
            }
        }
    }
}

const STATIC: Motion = Motion::Static;

impl Motion {
    /// A deforming mesh (`frames` at `fps`) placed by a `rigid` motion: a pure
    /// [`Motion::MeshSequence`] when `rigid` is static, a [`Motion::Composite`] otherwise.
    /// The first frame is at time `start`.
    pub fn deforming(rigid: Motion, frames: Vec<Vec<Vec3>>, fps: f64, start: f64) -> Motion {
        let deformation = Motion::MeshSequence { frames, fps, start };
        if matches!(rigid, Motion::Static) {
            deformation
        } else {
            Motion::Composite {
                rigid: Box::new(rigid),
                deformation: Box::new(deformation),
            }
        }
    }

    /// A skinned body (`track`) placed by a `rigid` motion: a pure [`Motion::Skinned`] when
    /// `rigid` is static, a [`Motion::Composite`] otherwise.
    pub fn skinned(rigid: Motion, track: SkinnedTrack) -> Motion {
        let deformation = Motion::Skinned(track);
        if matches!(rigid, Motion::Static) {
            deformation
        } else {
            Motion::Composite {
                rigid: Box::new(rigid),
                deformation: Box::new(deformation),
            }
        }
    }

    /// The rigid part of the motion (`Static` for a pure mesh sequence or skinned body).
    pub fn rigid(&self) -> &Motion {
        match self {
            Motion::MeshSequence { .. } | Motion::Skinned(_) => &STATIC,
            Motion::Composite { rigid, .. } => rigid.as_ref().rigid(),
            m => m,
        }
    }

    /// Whether the motion deforms a mesh (a mesh sequence or a skinned body, alone or placed
    /// by a rigid motion).
    pub fn is_deforming(&self) -> bool {
        self.deformation().is_some()
    }

    /// The deforming part, if any.
    pub(crate) fn deformation(&self) -> Option<Deformation<'_>> {
        match self {
            Motion::MeshSequence { frames, fps, start } => Some(Deformation::Frames {
                frames,
                fps: *fps,
                start: *start,
            }),
            Motion::Skinned(track) => Some(Deformation::Skinned(track)),
            Motion::Composite { deformation, .. } => deformation.deformation(),
            _ => None,
        }
    }

    /// The mesh sequence's positions at time t (s), interpolated linearly between frames and
    /// held outside them, written into `out`; `false` (and `out` untouched) without a
    /// sequence.
    pub fn sequence_at(&self, t: f64, out: &mut Vec<Vec3>) -> bool {
        let Some(d) = self.deformation() else {
            return false;
        };
        let Some(last) = d.len().checked_sub(1) else {
            return false;
        };
        let f = if t.is_finite() {
            (t - d.start()) * d.fps()
        } else {
            0.0
        };
        let f = f.clamp(0.0, last as f64);
        let k = (f.floor() as usize).min(last);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let frame = d.frame(k, &mut a);
        if k == last {
            out.clear();
            out.extend_from_slice(frame);
        } else {
            let s = f - k as f64;
            let next = d.frame(k + 1, &mut b);
            out.clear();
            out.extend(frame.iter().zip(next).map(|(p, q)| p + (q - p) * s));
        }
        true
    }

    /// The rigid offset at time t (s): translation d(t) (m) and rotation R(t) about the pivot.
    /// Identity for static motions and pure mesh sequences. Before t = 0 (a preroll) every
    /// rigid motion holds its pose at t = 0.
    pub fn rigid_offset(&self, t: f64) -> (Vec3, UnitQuaternion<f64>) {
        let t = t.max(0.0);
        match self.rigid() {
            Motion::Static
            | Motion::MeshSequence { .. }
            | Motion::Skinned(_)
            | Motion::Composite { .. } => (Vec3::zeros(), UnitQuaternion::identity()),
            Motion::Velocity { linear, angular } => {
                let rv = angular.map(f64::to_radians) * t;
                (linear * t, UnitQuaternion::from_scaled_axis(rv))
            }
            Motion::Keyframes(keys) => {
                let (d, r) = interpolate_keys(keys, t);
                (d, euler_degrees(&r))
            }
        }
    }

    /// Where a point at `p0` (world, t = 0) of a rigid motion about `pivot` is at time t:
    /// `pivot + d(t) + R(t) (p0 - pivot)`.
    pub fn place(&self, p0: &Vec3, pivot: &Vec3, t: f64) -> Vec3 {
        let (d, r) = self.rigid_offset(t);
        pivot + d + r * (p0 - pivot)
    }

    /// An upper bound (m/s) of the speed of any point within `radius` (m) of the pivot over the
    /// whole motion: linear speed plus angular speed times `radius` for rigid motions (keyframe
    /// segments taken one by one; Euler-angle rates bound the angular speed by their sum), plus
    /// the largest vertex displacement per frame times fps for mesh sequences.
    pub fn max_speed(&self, radius: f64) -> f64 {
        let rigid = match self.rigid() {
            Motion::Static
            | Motion::MeshSequence { .. }
            | Motion::Skinned(_)
            | Motion::Composite { .. } => 0.0,
            Motion::Velocity { linear, angular } => {
                linear.norm() + angular.map(f64::to_radians).norm() * radius
            }
            Motion::Keyframes(keys) => keys
                .windows(2)
                .map(|w| {
                    let dt = w[1].t - w[0].t;
                    let dr = (w[1].rotation - w[0].rotation).map(|d| d.to_radians().abs());
                    ((w[1].translation - w[0].translation).norm() + (dr.x + dr.y + dr.z) * radius)
                        / dt
                })
                .fold(0.0, f64::max),
        };
        let deforming = match self.deformation() {
            None => 0.0,
            Some(Deformation::Frames { frames, fps, .. }) => {
                frames
                    .windows(2)
                    .flat_map(|w| w[0].iter().zip(&w[1]).map(|(a, b)| (b - a).norm()))
                    .fold(0.0, f64::max)
                    * fps
            }
            Some(Deformation::Skinned(track)) => track.max_step() * track.rate(),
        };
        rigid + deforming
    }

    /// Velocity of the rigid part at time t: the pivot's linear velocity (m/s) and the angular
    /// velocity (rad/s, world axes). Zero outside keyframe ranges, before t = 0 and for static
    /// motions.
    pub fn rigid_velocity(&self, t: f64) -> (Vec3, Vec3) {
        if t < 0.0 {
            return (Vec3::zeros(), Vec3::zeros());
        }
        match self.rigid() {
            Motion::Static
            | Motion::MeshSequence { .. }
            | Motion::Skinned(_)
            | Motion::Composite { .. } => (Vec3::zeros(), Vec3::zeros()),
            Motion::Velocity { linear, angular } => (*linear, angular.map(f64::to_radians)),
            Motion::Keyframes(keys) => match key_segment(keys, t) {
                None => (Vec3::zeros(), Vec3::zeros()),
                Some((k, s)) => {
                    let (a, b) = (&keys[k], &keys[k + 1]);
                    let dt = b.t - a.t;
                    let r = (a.rotation + (b.rotation - a.rotation) * s).map(f64::to_radians);
                    let rdot = (b.rotation - a.rotation).map(f64::to_radians) / dt;
                    (
                        (b.translation - a.translation) / dt,
                        euler_rate_to_omega(&r, &rdot),
                    )
                }
            },
        }
    }
}

/// Rotation from Euler angles in degrees: about world x, then y, then z (R = Rz Ry Rx).
pub fn euler_degrees(r: &Vec3) -> UnitQuaternion<f64> {
    UnitQuaternion::from_euler_angles(r.x.to_radians(), r.y.to_radians(), r.z.to_radians())
}

/// World-frame angular velocity (rad/s) of R(t) = Rz(c) Ry(b) Rx(a) for angles `r` (rad) and
/// rates `rdot` (rad/s): w = c' z + b' Rz y + a' Rz Ry x.
fn euler_rate_to_omega(r: &Vec3, rdot: &Vec3) -> Vec3 {
    let rz = UnitQuaternion::from_axis_angle(&Vec3::z_axis(), r.z);
    let ry = UnitQuaternion::from_axis_angle(&Vec3::y_axis(), r.y);
    Vec3::z() * rdot.z + (rz * Vec3::y()) * rdot.y + (rz * ry * Vec3::x()) * rdot.x
}

/// Rigid part of a motion at a time: world origin, its velocity (m/s), angular velocity (rad/s).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RigidVelocity {
    pub origin: Vec3,
    pub linear: Vec3,
    pub omega: Vec3,
}

impl RigidVelocity {
    pub fn at(&self, p: &Vec3) -> Vec3 {
        self.linear + self.omega.cross(&(p - self.origin))
    }
}

/// Segment index k and fraction s in [0, 1) with `keys[k].t <= t < keys[k + 1].t`; `None`
/// outside.
pub(crate) fn key_segment(keys: &[Keyframe], t: f64) -> Option<(usize, f64)> {
    if keys.len() < 2 || t < keys[0].t || t >= keys[keys.len() - 1].t {
        return None;
    }
    let k = keys
        .partition_point(|key| key.t <= t)
        .saturating_sub(1)
        .min(keys.len() - 2);
    let s = (t - keys[k].t) / (keys[k + 1].t - keys[k].t);
    Some((k, s))
}

fn interpolate_keys(keys: &[Keyframe], t: f64) -> (Vec3, Vec3) {
    let (Some(first), Some(last)) = (keys.first(), keys.last()) else {
        return (Vec3::zeros(), Vec3::zeros());
    };
    match key_segment(keys, t) {
        Some((k, s)) => {
            let (a, b) = (&keys[k], &keys[k + 1]);
            (
                a.translation + (b.translation - a.translation) * s,
                a.rotation + (b.rotation - a.rotation) * s,
            )
        }
        None if t < first.t => (first.translation, first.rotation),
        None => (last.translation, last.rotation),
    }
}
