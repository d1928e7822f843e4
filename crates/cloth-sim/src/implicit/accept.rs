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

    /// A stretch change above the threshold (paper §7), if any.
    pub fn stretch(&mut self, settings: &ImplicitSettings) -> Option<Reject> {
        let (triangle, change) = self.largest_stretch_change();
        self.last_change = change;
        (change > settings.stretch_threshold).then_some(Reject::StretchChange {
            triangle,
            change,
            threshold: settings.stretch_threshold,
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

    /// The triangle whose `|w_u|` or `|w_v|` changed most between the start and the candidate,
    /// and that change (infinite if not finite).
    fn largest_stretch_change(&self) -> (usize, f64) {
        let mut worst = (0, 0.0f64);
        for (t, (a, b)) in self.stretch0.iter().zip(&self.stretch1).enumerate() {
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
}
