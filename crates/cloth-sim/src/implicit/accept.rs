//! Stage 5, accept or reject: the candidate end state is judged before anything is changed,
//! on what the detect stage found at it. A vertex pulled into a solid asks for a redo with that
//! vertex in contact; a stretch change above the threshold (paper §7) asks for a smaller step.

use super::contact::ContactMemory;
use super::detect::Detection;
use super::settings::ImplicitSettings;
use crate::error::Reject;
use cloth_forces::ClothModel;
use cloth_mesh::Vec3;

/// The stretch measures of the check.
#[derive(Default)]
pub(crate) struct Check {
    /// Stretch `(|w_u|, |w_v|)` per triangle at the start state.
    pub stretch0: Vec<[f64; 2]>,
    /// The same at the candidate end state.
    pub stretch1: Vec<[f64; 2]>,
    /// Scratch positions.
    scratch: Vec<Vec3>,
    /// Whether `stretch0` belongs to the current start state.
    valid: bool,
    /// Scratch of [`Check::overstretched_vertices`].
    torn: Vec<bool>,
    /// The largest stretch change of the last candidate the threshold was checked on.
    pub last_change: f64,
    /// The candidate stretch of the attempt's previous solve, which a Newton correction
    /// started from (valid while `has_reference`).
    reference: Vec<[f64; 2]>,
    /// Whether `reference` belongs to the current attempt.
    has_reference: bool,
    /// The largest stretch change the last Newton correction made, when the last stretch
    /// check passed a change over the threshold because of it (see [`Check::stretch`]).
    pub corrected_over: Option<f64>,
}

/// What the detect stage found of the candidate in solids, judged: a vertex pulled into a
/// solid's thickness layer is engaged as a contact and the step redone at the same h (while
/// `redo` allows); one still inside a solid beyond the thickness asks for a smaller step, so
/// no accepted step leaves cloth inside a solid. `pinned` and `h` as for
/// [`ContactMemory::force_engagement`].
pub(crate) fn solids(
    detection: &Detection,
    contacts: &mut ContactMemory,
    redo: bool,
    pinned: &[bool],
    h: f64,
) -> Option<Reject> {
    if redo {
        let marked = contacts.force_engagement(&detection.deep, pinned, h);
        if marked > 0 {
            return Some(Reject::Penetration { vertices: marked });
        }
    }
    inside_solid(detection)
}

/// A vertex deeper inside a solid than the thickness, as a rejection.
pub(crate) fn inside_solid(detection: &Detection) -> Option<Reject> {
    detection
        .inside
        .map(|(vertex, collider, depth)| Reject::InsideSolid {
            vertex,
            collider,
            depth,
        })
}

impl Check {
    /// Forgets the start state's stretch.
    pub fn invalidate(&mut self) {
        self.valid = false;
    }

    /// Records that `stretch0` now holds the stretch of the (new) start state.
    pub fn start_from_candidate(&mut self) {
        std::mem::swap(&mut self.stretch0, &mut self.stretch1);
        self.valid = true;
    }

    /// Measures the stretch of the start state `x0` (once per start state) and of the
    /// candidate's integrated motion `x1`.
    pub fn measure(&mut self, model: &ClothModel, x0: &[Vec3], x1: &[Vec3]) {
        if !self.valid {
            model.triangle_stretch(x0, &mut self.stretch0);
            self.valid = true;
        }
        model.triangle_stretch(x1, &mut self.stretch1);
    }

    /// The stretch of `x1 - y` into `stretch1` (`y` empty: of `x1`): a candidate that impact
    /// zones changed is judged like the free one, without the correction y (the zones carried
    /// it along), as y moves a vertex by a fixed distance at any h and a zone made at a tiny
    /// step must not look like a stretch change that no smaller step could cure.
    pub fn measure_without(&mut self, model: &ClothModel, x1: &[Vec3], y: &[Vec3]) {
        if y.is_empty() {
            model.triangle_stretch(x1, &mut self.stretch1);
            return;
        }
        self.scratch.clear();
        self.scratch.extend(x1.iter().zip(y).map(|(x, y)| x - y));
        model.triangle_stretch(&self.scratch, &mut self.stretch1);
    }

    /// Starts an attempt: no Newton correction has been made yet.
    pub fn start_attempt(&mut self) {
        self.has_reference = false;
        self.corrected_over = None;
    }

    /// Keeps the candidate stretch of the solve a Newton correction is about to correct.
    pub fn keep_reference(&mut self) {
        self.reference.clone_from(&self.stretch1);
        self.has_reference = true;
    }

    /// A stretch change above the threshold (paper §7), if any. After a Newton correction, a
    /// change above the threshold passes when the correction moved no triangle's stretch by
    /// more than [`ImplicitSettings::correction_tolerance`] times the threshold (the error of
    /// the linearised step, which the threshold stands in for, is then measured and within
    /// it) and every change over the threshold relaxes towards rest. The correction's move is
    /// recorded in [`Check::corrected_over`].
    pub fn stretch(&mut self, settings: &ImplicitSettings) -> Option<Reject> {
        let (triangle, change) = self.largest_stretch_change();
        self.last_change = change;
        self.corrected_over = None;
        let threshold = settings.stretch_threshold;
        if change <= threshold {
            return None;
        }
        let tolerance = settings.over_threshold_tolerance();
        if self.has_reference && tolerance > 0.0 && change.is_finite() {
            let (_, moved) = largest_change(&self.reference, &self.stretch1);
            if moved <= tolerance * threshold && self.over_threshold_relaxes(threshold) {
                self.corrected_over = Some(moved);
                return None;
            }
        }
        Some(Reject::StretchChange {
            triangle,
            change,
            threshold,
        })
    }

    /// Per vertex, whether a triangle around it is stretched beyond `1 + limit` along u or v
    /// in the start state (into a scratch buffer owned by the check).
    pub fn overstretched_vertices(&mut self, model: &ClothModel, limit: f64) -> &[bool] {
        self.torn.clear();
        self.torn.resize(model.num_vertices(), false);
        for (tri, w) in model.triangles().iter().zip(&self.stretch0) {
            if w[0].max(w[1]) > 1.0 + limit {
                for &i in tri {
                    self.torn[i] = true;
                }
            }
        }
        &self.torn
    }

    /// The most stretched triangle of the start state and its stretch `max(|w_u|, |w_v|) - 1`.
    pub fn most_stretched(&self) -> Option<(usize, f64)> {
        self.stretch0
            .iter()
            .map(|w| w[0].max(w[1]) - 1.0)
            .enumerate()
            .fold(None, |best, (t, s)| match best {
                Some((_, b)) if s <= b => best,
                _ => Some((t, s)),
            })
    }

    /// Whether every `|w_u|` or `|w_v|` that changed by more than `threshold` between the
    /// start and the candidate ends no farther from 1 (rest) than it started: the change
    /// relaxes stretch or compression rather than adding to it.
    fn over_threshold_relaxes(&self, threshold: f64) -> bool {
        (self.stretch0.iter().zip(&self.stretch1)).all(|(a, b)| {
            (0..2).all(|k| {
                (a[k] - b[k]).abs() <= threshold || (b[k] - 1.0).abs() <= (a[k] - 1.0).abs()
            })
        })
    }

    /// The triangle whose `|w_u|` or `|w_v|` changed most between the start and the candidate,
    /// and that change (infinite if not finite).
    fn largest_stretch_change(&self) -> (usize, f64) {
        largest_change(&self.stretch0, &self.stretch1)
    }
}

/// The triangle whose `|w_u|` or `|w_v|` differs most between `a` and `b`, and that difference
/// (infinite if not finite).
fn largest_change(a: &[[f64; 2]], b: &[[f64; 2]]) -> (usize, f64) {
    let mut worst = (0, 0.0f64);
    for (t, (a, b)) in a.iter().zip(b).enumerate() {
        let (du, dv) = ((a[0] - b[0]).abs(), (a[1] - b[1]).abs());
        // A NaN in either direction is an infinite change (`f64::max` would drop it).
        let d = if du.is_nan() || dv.is_nan() {
            f64::INFINITY
        } else {
            du.max(dv)
        };
        if d > worst.1 {
            worst = (t, d);
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_stretch_change_sees_either_direction_and_a_nan_in_either() {
        let mut c = Check {
            stretch0: vec![[1.0, 1.0]; 3],
            stretch1: vec![[1.04, 1.0], [1.0, 0.95], [1.01, 1.0]],
            ..Check::default()
        };
        let (t, change) = c.largest_stretch_change();
        assert_eq!(t, 1);
        assert!((change - 0.05).abs() < 1e-12, "{change}");
        c.stretch1[2] = [1.0, f64::NAN];
        assert_eq!(c.largest_stretch_change(), (2, f64::INFINITY));
        c.stretch1[2] = [f64::NAN, 1.0];
        assert_eq!(c.largest_stretch_change(), (2, f64::INFINITY));
    }

    /// After a correction, a change over the threshold passes only when the correction moved
    /// the stretch by at most the tolerance and the change relaxes towards rest.
    #[test]
    fn a_corrected_change_over_the_threshold_passes_only_when_small_and_towards_rest() {
        let settings = ImplicitSettings::default();
        // The changes below are 4 points of strain, over the default threshold.
        assert!(settings.stretch_threshold < 0.04);
        let judge = |w0: [f64; 2], first: [f64; 2], corrected: [f64; 2], s: &ImplicitSettings| {
            let mut c = Check {
                stretch0: vec![w0, [1.0, 1.0]],
                stretch1: vec![first, [1.0, 1.0]],
                ..Check::default()
            };
            c.start_attempt();
            assert!(
                c.stretch(s).is_some(),
                "the first solve is over the threshold"
            );
            c.keep_reference();
            c.stretch1[0] = corrected;
            let verdict = c.stretch(s);
            (verdict.is_none(), c.corrected_over)
        };
        // Compressed 4%, relaxed to rest; the correction moved it by 0.002.
        let (passed, moved) = judge([0.96, 1.0], [1.002, 1.0], [1.0, 1.0], &settings);
        assert!(passed);
        assert!((moved.unwrap() - 0.002).abs() < 1e-12);
        // The same relaxation, but the correction moved the stretch by more than the threshold.
        let (passed, _) = judge([0.96, 1.0], [1.04, 1.0], [1.0, 1.0], &settings);
        assert!(!passed);
        // Stretched away from rest by 4% (v), however little the correction moved it.
        let (passed, moved) = judge([1.0, 1.0], [1.0, 1.041], [1.0, 1.04], &settings);
        assert!(!passed && moved.is_none());
        // Off: the paper's threshold.
        let off = ImplicitSettings {
            correction_tolerance: 0.0,
            ..ImplicitSettings::default()
        };
        let (passed, _) = judge([0.96, 1.0], [1.0, 1.0], [1.0, 1.0], &off);
        assert!(!passed);
    }
}
