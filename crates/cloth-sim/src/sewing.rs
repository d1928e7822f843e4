//! Sewing: the stitched vertex pairs of garments are pulled together during a cloth's
//! `sew_time` and held closed afterwards by stiff springs whose Jacobians enter the implicit
//! matrix (a force term of the assemble stage, through its extra terms).
//!
//! Why springs and not exact constraints: the modified PCG enforces constraints per particle
//! (a filter `S_i` on one vertex's velocity change), and a stitch couples two particles: "the
//! relative velocity of i and j is zero" is not a per-particle filter. Welding the pair into
//! one particle would enforce it exactly but changes the vertex count, which every frame must
//! keep. A zero-length spring of stiffness `k` treated implicitly is stable at any step and
//! leaves a gap `g = F / k` under a seam force `F`: with `k` a multiple `c` of the cloth's
//! stretch stiffness (N/m), a seam carrying the cloth's tension at strain `e` over stitch
//! spacing `l` opens by about `e l / c` (a 2 % strain on 2 cm edges with `c = 10`: 0.04 mm),
//! the same fraction of an edge at every resolution.
//!
//! Schedule: a stitch whose vertices start `d0` apart has rest length
//! `L(t) = d0 (1 - s(t / T))`, `s(u) = 3u^2 - 2u^3` (smoothstep) for `t < T = sew_time`, and
//! `L = 0` afterwards: the seams close smoothly in `T` and are held closed for the rest of the
//! run. `t` counts from the start of the run, which a preroll moves before t = 0 (sewing is
//! part of the preroll: the garment is sewn while the body blends into its first pose). The
//! spring only pulls (`|d| > L`), never pushes. While a cloth sews, gravity on its vertices
//! is scaled by `gravity_scale` (default 0: garments are sewn weightless, as they would
//! otherwise fall off the body before their seams close).

use std::ops::Range;

use crate::error::SimError;
use crate::state::State;
use crate::system::ExtraTerms;
use cloth_mesh::Vec3;
use nalgebra::Matrix3;

/// Fastest closing (m/s) a stitch asks of the step: a stitch open wider than its scheduled
/// rest length `L` pulls towards `max(L, |d| - STITCH_CLOSING_SPEED * h)` in a step of size h,
/// not towards `L` at once. Without the limit a stitch pulled open by contact would snap shut
/// in one step at every h (its spring is stiff enough that h^2 k exceeds the vertex mass down
/// to steps of microseconds), changing the triangles beside it by the same amount whatever
/// the step, so that no step passes the stretch check. With it the change shrinks with h.
/// 20 m/s is far above the sewing schedule's own speed (at most `1.5 d0 / sew_time`: 0.9 m/s
/// for a 0.3 m gap sewn in 0.5 s), so it binds only on steps shorter than a gap divided by it
/// (0.1 ms for 2 mm); much slower limits let seams lag open by more than a millimetre.
pub const STITCH_CLOSING_SPEED: f64 = 20.0;

/// Default stitch stiffness as a multiple of the cloth's largest stretch stiffness (see the
/// module documentation): 10.
pub const SEAM_STIFFNESS_FACTOR: f64 = 10.0;

/// How one cloth's stitches sew.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SewSettings {
    /// Time (s) after the start of sewing at which this cloth's seams begin to close, >= 0
    /// (scene key `sew_start`, default 0). Until then its stitches are slack and its gravity
    /// is scaled as while it sews: a garment that goes over another (a shirt over trousers)
    /// waits until the one beneath is sewn.
    pub sew_start: f64,
    /// Time (s) in which the seams are pulled closed, >= 0 (scene key `sew_time`, default 0.5).
    pub sew_time: f64,
    /// Stiffness of each stitch spring (N/m), > 0 (default [`SEAM_STIFFNESS_FACTOR`] times the
    /// cloth's largest stretch stiffness).
    pub stiffness: f64,
    /// Damping of each stitch (N s/m) on the relative velocity of its two vertices, >= 0.
    pub damping: f64,
    /// Factor on gravity for this cloth's vertices while it sews (`t < sew_time`), in
    /// [0, 1]; default 0.
    pub gravity_scale: f64,
}

/// The stitches of one cloth.
#[derive(Clone, Debug)]
struct SeamGroup {
    pairs: Vec<[usize; 2]>,
    /// Distance of each pair at t = 0 (m).
    initial: Vec<f64>,
    vertices: Range<usize>,
    settings: SewSettings,
}

/// Every stitch of a world, cloth by cloth (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct Sewing {
    groups: Vec<SeamGroup>,
    /// Time (s) at which sewing starts: the start of the run (`-preroll`, else 0).
    start: f64,
}

impl Sewing {
    /// No stitches.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the stitches `pairs` (vertex indices of the whole world) of the cloth whose
    /// vertices are `vertices`, with initial positions `x0` (m, every vertex of the world).
    /// Errors name the stitch (a vertex outside the cloth or a pair of one vertex) or the
    /// setting out of range.
    pub fn add_cloth(
        &mut self,
        pairs: Vec<[usize; 2]>,
        x0: &[Vec3],
        vertices: Range<usize>,
        settings: SewSettings,
    ) -> Result<(), SimError> {
        let bad = |key: &str, message: String| {
            Err(SimError::Invalid {
                key: key.into(),
                message,
            })
        };
        let s = &settings;
        if !(s.sew_start.is_finite() && s.sew_start >= 0.0) {
            return bad(
                "sew_start",
                format!("must be finite and >= 0, got {}", s.sew_start),
            );
        }
        if !(s.sew_time.is_finite() && s.sew_time >= 0.0) {
            return bad(
                "sew_time",
                format!("must be finite and >= 0, got {}", s.sew_time),
            );
        }
        if !(s.stiffness.is_finite() && s.stiffness > 0.0) {
            return bad(
                "stitch stiffness",
                format!("must be > 0, got {}", s.stiffness),
            );
        }
        if !(s.damping.is_finite() && s.damping >= 0.0) {
            return bad("stitch damping", format!("must be >= 0, got {}", s.damping));
        }
        if !(0.0..=1.0).contains(&s.gravity_scale) {
            return bad(
                "sew_gravity",
                format!("must be in [0, 1], got {}", s.gravity_scale),
            );
        }
        if vertices.end > x0.len() {
            return bad(
                "stitch",
                format!("cloth vertices {vertices:?} beyond {} positions", x0.len()),
            );
        }
        for (k, &[a, b]) in pairs.iter().enumerate() {
            if a == b || !vertices.contains(&a) || !vertices.contains(&b) {
                return bad(
                    &format!("stitch[{k}]"),
                    format!("pair ({a}, {b}) must be two vertices of the cloth {vertices:?}"),
                );
            }
        }
        let initial = pairs.iter().map(|&[a, b]| (x0[a] - x0[b]).norm()).collect();
        self.groups.push(SeamGroup {
            pairs,
            initial,
            vertices,
            settings,
        });
        Ok(())
    }

    /// Measures the stitches' initial distances again at positions `x` (m): the schedule
    /// closes them from where the cloth starts, after the start state was moved out of solids.
    pub fn measure_initial(&mut self, x: &[Vec3]) {
        for g in &mut self.groups {
            for (d0, &[a, b]) in g.initial.iter_mut().zip(&g.pairs) {
                *d0 = (x[a] - x[b]).norm();
            }
        }
    }

    /// Starts sewing at `t0` (s) instead of t = 0: the start of a run with a preroll.
    pub fn set_start(&mut self, t0: f64) {
        self.start = t0;
    }

    /// Whether no cloth sews (no stitches and no gravity held off).
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Every stitched pair, cloth by cloth.
    pub fn pairs(&self) -> impl Iterator<Item = [usize; 2]> + '_ {
        self.groups.iter().flat_map(|g| g.pairs.iter().copied())
    }

    /// The time (s) by which every seam is held closed: the start of sewing plus the latest
    /// `sew_start + sew_time` of all cloths.
    pub fn sewn_by(&self) -> f64 {
        self.start
            + self
                .groups
                .iter()
                .map(|g| g.settings.sew_start + g.settings.sew_time)
                .fold(0.0, f64::max)
    }

    /// Largest distance (m) between the two vertices of a stitch at positions `x`; 0 without
    /// stitches.
    pub fn largest_gap(&self, x: &[Vec3]) -> f64 {
        self.pairs()
            .filter(|&[a, b]| a < x.len() && b < x.len())
            .map(|[a, b]| (x[a] - x[b]).norm())
            .fold(0.0, f64::max)
    }

    /// Adds the stitch springs of a step of size `h` (s) from the state's time `t` (s),
    /// positions `x` (m) and velocities `v` (m/s) to `terms` (forces in N, with their Jacobian
    /// blocks), and the gravity taken off sewing cloths (`-(1 - gravity_scale) m_i g`, no
    /// Jacobian). `masses` (kg) and `gravity` (m/s^2) are the world's. A stitch asks the step
    /// to close it by at most [`STITCH_CLOSING_SPEED`] times h.
    pub fn add_terms(
        &self,
        state: &State,
        h: f64,
        masses: &[f64],
        gravity: &Vec3,
        terms: &mut ExtraTerms,
    ) {
        self.add_terms_from(state, &state.x, h, masses, gravity, terms);
    }

    /// [`Sewing::add_terms`] at `state` for a step that started at positions `start` (m): how
    /// far the step may close a stitch is measured from `start`, so the springs are those of
    /// the step's start however far `state` has moved (a Newton correction evaluates them at
    /// the step's candidate end).
    pub fn add_terms_from(
        &self,
        state: &State,
        start: &[Vec3],
        h: f64,
        masses: &[f64],
        gravity: &Vec3,
        terms: &mut ExtraTerms,
    ) {
        let (forces, blocks) = (&mut terms.forces, &mut terms.blocks);
        let (t, x, v) = (state.t - self.start, &state.x, &state.v);
        for g in &self.groups {
            let s = &g.settings;
            let t = t - s.sew_start;
            let progress = if t < 0.0 {
                0.0
            } else if s.sew_time > 0.0 {
                smoothstep(t / s.sew_time)
            } else {
                1.0
            };
            for (&[a, b], &d0) in g.pairs.iter().zip(&g.initial) {
                let d = x[a] - x[b];
                let gap = (start[a] - start[b]).norm();
                let rest = (d0 * (1.0 - progress)).max(gap - STITCH_CLOSING_SPEED * h);
                let Some((f, k)) = stitch_force(d, rest, s.stiffness) else {
                    continue;
                };
                let fd = (v[a] - v[b]) * s.damping;
                forces[a] += f - fd;
                forces[b] -= f - fd;
                let c = Matrix3::from_diagonal_element(s.damping);
                blocks.push((a, a, -k, -c));
                blocks.push((b, b, -k, -c));
                blocks.push((a.min(b), a.max(b), k, c));
            }
            if t < s.sew_time && s.gravity_scale < 1.0 {
                let lift = -(1.0 - s.gravity_scale);
                for i in g.vertices.clone() {
                    forces[i] += gravity * (lift * masses[i]);
                }
            }
        }
    }
}

/// `3u^2 - 2u^3` clamped to [0, 1].
fn smoothstep(u: f64) -> f64 {
    let u = u.clamp(0.0, 1.0);
    u * u * (3.0 - 2.0 * u)
}

/// Force on the first vertex (N) and stiffness `K = -df_a/dx_a` (N/m, symmetric positive
/// semidefinite) of a tension-only spring of rest length `rest` (m) and stiffness `k` (N/m)
/// across `d = x_a - x_b`; `None` while the spring is slack (`|d| <= rest`, rest > 0).
fn stitch_force(d: Vec3, rest: f64, k: f64) -> Option<(Vec3, Matrix3<f64>)> {
    if rest <= 0.0 {
        return Some((-d * k, Matrix3::from_diagonal_element(k)));
    }
    let r = d.norm();
    if !(r > rest) {
        return None;
    }
    let n = d / r;
    let nn = n * n.transpose();
    let stiff = nn * k + (Matrix3::identity() - nn) * (k * (1.0 - rest / r));
    Some((-n * (k * (r - rest)), stiff))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The force is minus the gradient of the energy `k/2 (|d| - L)^2` (tension only) and the
    /// stiffness is the Jacobian of minus the force, checked by central differences.
    #[test]
    fn stitch_force_and_stiffness_match_finite_differences() {
        let k = 300.0;
        for (d, rest) in [
            (Vec3::new(0.3, -0.1, 0.2), 0.1),
            (Vec3::new(0.01, 0.02, -0.03), 0.0),
            (Vec3::new(-0.2, 0.05, 0.0), 0.15),
        ] {
            let energy = |d: Vec3| {
                let s = if rest > 0.0 {
                    (d.norm() - rest).max(0.0)
                } else {
                    d.norm()
                };
                0.5 * k * s * s
            };
            let (f, stiff) = stitch_force(d, rest, k).unwrap();
            let eps = 1e-6;
            for c in 0..3 {
                let mut e = Vec3::zeros();
                e[c] = eps;
                let grad = (energy(d + e) - energy(d - e)) / (2.0 * eps);
                assert!((f[c] + grad).abs() < 1e-6 * k, "force {c}");
                let (fp, _) = stitch_force(d + e, rest, k).unwrap();
                let (fm, _) = stitch_force(d - e, rest, k).unwrap();
                let col = -(fp - fm) / (2.0 * eps);
                assert!((col - stiff.column(c)).norm() < 1e-5 * k, "stiffness {c}");
            }
            assert!(stiff.symmetric_eigenvalues().iter().all(|&l| l >= -1e-9));
        }
        // Slack: no force.
        assert!(stitch_force(Vec3::new(0.05, 0.0, 0.0), 0.1, k).is_none());
    }

    #[test]
    fn schedule_closes_smoothly_and_holds() {
        let x0 = vec![Vec3::zeros(), Vec3::new(0.2, 0.0, 0.0)];
        let settings = SewSettings {
            sew_start: 0.0,
            sew_time: 0.5,
            stiffness: 100.0,
            damping: 0.0,
            gravity_scale: 0.0,
        };
        let mut s = Sewing::new();
        s.add_cloth(vec![[0, 1]], &x0, 0..2, settings).unwrap();
        let force_at = |t: f64| {
            let mut terms = ExtraTerms {
                forces: vec![Vec3::zeros(); 2],
                blocks: Vec::new(),
            };
            let g = Vec3::new(0.0, -9.81, 0.0);
            let state = State {
                x: x0.clone(),
                v: x0.clone(),
                t,
            };
            // A step long enough that the closing speed does not limit the pull.
            s.add_terms(&state, 1.0, &[1.0, 1.0], &g, &mut terms);
            terms.forces
        };
        // At t = 0 the spring is at its rest length: only the gravity compensation acts.
        assert_eq!(force_at(0.0)[0], Vec3::new(0.0, 9.81, 0.0));
        // Half way the rest length is half: 100 N/m * 0.1 m along +x on vertex 0.
        let f = force_at(0.25);
        assert!((f[0] - Vec3::new(10.0, 9.81, 0.0)).norm() < 1e-12);
        assert!((f[1] - Vec3::new(-10.0, 9.81, 0.0)).norm() < 1e-12);
        // After sew_time: zero rest length and full gravity.
        let f = force_at(0.6);
        assert!((f[0] - Vec3::new(20.0, 0.0, 0.0)).norm() < 1e-12);
        assert_eq!(s.largest_gap(&x0), 0.2);
        assert!(s.add_cloth(vec![[0, 0]], &x0, 0..2, settings).is_err());
        assert!(s.add_cloth(vec![[0, 1]], &x0, 0..1, settings).is_err());
    }

    #[test]
    fn a_delayed_cloth_waits_slack_and_weightless_then_sews_on_the_same_schedule() {
        let x0 = vec![Vec3::zeros(), Vec3::new(0.2, 0.0, 0.0)];
        let base = SewSettings {
            sew_start: 0.0,
            sew_time: 0.5,
            stiffness: 100.0,
            damping: 0.0,
            gravity_scale: 0.0,
        };
        let delayed = SewSettings {
            sew_start: 0.7,
            ..base
        };
        let forces = |settings: SewSettings, t: f64| {
            let mut s = Sewing::new();
            s.add_cloth(vec![[0, 1]], &x0, 0..2, settings).unwrap();
            let mut terms = ExtraTerms {
                forces: vec![Vec3::zeros(); 2],
                blocks: Vec::new(),
            };
            let state = State {
                x: x0.clone(),
                v: vec![Vec3::zeros(); 2],
                t,
            };
            let g = Vec3::new(0.0, -9.81, 0.0);
            s.add_terms(&state, 1.0, &[1.0, 1.0], &g, &mut terms);
            (terms.forces, s.sewn_by())
        };
        // Before its start: no stitch force, gravity held off.
        let (f, sewn_by) = forces(delayed, 0.5);
        assert_eq!(f[0], Vec3::new(0.0, 9.81, 0.0));
        assert_eq!(sewn_by, 1.2);
        // Shifted by sew_start, the schedule is the undelayed one.
        for t in [0.1, 0.25, 0.45, 0.6] {
            assert_eq!(forces(delayed, t + 0.7).0, forces(base, t).0, "t = {t}");
        }
        let bad = SewSettings {
            sew_start: -1.0,
            ..base
        };
        assert!(
            Sewing::new()
                .add_cloth(vec![[0, 1]], &x0, 0..2, bad)
                .is_err()
        );
    }

    /// Closure (m) of a stitch open `gap` (m) in one backward-Euler step of size `h` (s)
    /// between two free vertices of mass `m` (kg): the linear system of the implicit step,
    /// `(M - h df/dv - h^2 df/dx) dv = h f`, built from [`Sewing::add_terms`] for these two
    /// vertices and solved exactly.
    fn one_step_closure(gap: f64, h: f64, m: f64, k: f64) -> f64 {
        let x0 = vec![Vec3::zeros(), Vec3::new(gap, 0.0, 0.0)];
        let settings = SewSettings {
            sew_start: 0.0,
            sew_time: 0.0,
            stiffness: k,
            damping: 0.0,
            gravity_scale: 1.0,
        };
        let mut s = Sewing::new();
        s.add_cloth(vec![[0, 1]], &x0, 0..2, settings).unwrap();
        let state = State {
            x: x0.clone(),
            v: vec![Vec3::zeros(); 2],
            t: 1.0,
        };
        let mut terms = ExtraTerms {
            forces: vec![Vec3::zeros(); 2],
            blocks: Vec::new(),
        };
        s.add_terms(&state, h, &[m, m], &Vec3::zeros(), &mut terms);
        let (f, blocks) = (terms.forces, terms.blocks);
        let mut a = nalgebra::DMatrix::<f64>::identity(6, 6) * m;
        for (i, j, kx, kv) in blocks {
            let blk = -(kv * h) - kx * (h * h);
            let mut view = a.fixed_view_mut::<3, 3>(3 * i, 3 * j);
            view += blk;
            if i != j {
                let mut view = a.fixed_view_mut::<3, 3>(3 * j, 3 * i);
                view += blk.transpose();
            }
        }
        let b = nalgebra::DVector::from_iterator(
            6,
            f.iter().flat_map(|f| [f.x, f.y, f.z]).map(|c| c * h),
        );
        let dv = a.cholesky().expect("SPD").solve(&b);
        let x1 = |i: usize| x0[i] + Vec3::new(dv[3 * i], dv[3 * i + 1], dv[3 * i + 2]) * h;
        gap - (x1(1) - x1(0)).norm()
    }

    #[test]
    fn an_open_stitch_closes_at_most_at_the_closing_speed_and_shut_at_frame_steps() {
        // The dancer's case: a 2 mm gap, vertices of 23 mg, a stitch of 66 kN/m, whose time
        // scale sqrt(m / k) is 19 us. Without the limit the stitch closes 37% of the gap in a
        // 10 us step and 93% in a 50 us one: nearly the same stretch change at every step.
        // With it the closure shrinks in proportion to the step, so some step passes the
        // stretch check.
        let (gap, m, k) = (2e-3, 2.3e-5, 6.6e4);
        let base = one_step_closure(gap, 5e-5, m, k);
        for h in [2e-5, 1e-5] {
            let c = one_step_closure(gap, h, m, k);
            assert!(
                c > 0.0 && c / base <= 1.01 * h / 5e-5,
                "h {h}: closed {c}, against {base} at 50 us"
            );
        }
        for h in [1e-3, 4e-4, 1e-4, 1e-5] {
            let c = one_step_closure(gap, h, m, k);
            assert!(c <= STITCH_CLOSING_SPEED * h * (1.0 + 1e-9), "h {h}: {c}");
        }
        // At the steps a frame is made of, the limit is far away: the stitch snaps shut.
        for h in [1.0 / 30.0, 1.0 / 120.0] {
            let c = one_step_closure(gap, h, m, k);
            assert!(c > 0.99 * gap, "h {h}: closed {c} of {gap}");
        }
    }
}
