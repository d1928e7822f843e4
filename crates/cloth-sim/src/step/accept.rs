//! Stage 5, accept or reject: the candidate end state is judged before anything is changed.
//! A vertex pulled into a solid asks for a redo with that vertex in contact; a stretch change
//! above the threshold (Knowl 9) asks for a smaller step.

use super::ImplicitSettings;
use super::detect::Detection;
use crate::contact::ContactMemory;
use crate::stats::{Stopwatch, Timings};
use crate::{Reject, State, World};
use cloth_mesh::Vec3;

/// The candidate state and the stretch measures of the check.
#[derive(Default)]
pub(crate) struct Check {
    /// Stretch `(|w_u|, |w_v|)` per triangle at the start state.
    pub stretch0: Vec<[f64; 2]>,
    /// The same at the candidate end state (without the position alteration y).
    pub stretch1: Vec<[f64; 2]>,
    /// Whether `stretch0` belongs to the current start state.
    valid: bool,
    /// Candidate end positions, `x0 + h (v0 + dv) + y` (m).
    pub x1: Vec<Vec3>,
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

    /// Judges the candidate `x0 + h (v0 + dv) + y`: `None` to accept (then `x1` holds it),
    /// or why to reject. A vertex pulled into a solid's thickness layer asks for a redo at the
    /// same h with it in contact; one still inside a solid beyond the thickness when the redos
    /// are used up asks for a smaller step, so no accepted step leaves cloth inside a solid.
    #[allow(clippy::too_many_arguments)]
    pub fn judge(
        &mut self,
        world: &World,
        state: &State,
        dv: &[Vec3],
        y: &[Vec3],
        h: f64,
        settings: &ImplicitSettings,
        detection: &mut Detection,
        contacts: &mut ContactMemory,
        redos: usize,
        timings: &mut Timings,
        sw: &mut Stopwatch,
    ) -> Option<Reject> {
        let model = &world.cloth.model;
        if !self.valid {
            model.triangle_stretch(&state.x, &mut self.stretch0);
            self.valid = true;
        }
        // Candidate state without the position alteration: the check judges the integration,
        // not the deliberate geometric correction y (Knowl 6), which would otherwise fail a
        // step at any h.
        self.x1.resize(state.len(), Vec3::zeros());
        for (((x1, x), v), dv) in self.x1.iter_mut().zip(&state.x).zip(&state.v).zip(dv) {
            *x1 = x + (v + dv) * h;
        }
        model.triangle_stretch(&self.x1, &mut self.stretch1);
        for (x1, y) in self.x1.iter_mut().zip(y) {
            *x1 += y;
        }
        timings.other += sw.lap();
        if world.colliders.is_some() {
            detection.penetrations(world, &self.x1);
            timings.cloth_solid += sw.lap();
            if redos < settings.max_penetration_redos {
                let marked = contacts.force_engagement(&detection.deep, world.pinned());
                if marked > 0 {
                    return Some(Reject::Penetration { vertices: marked });
                }
            }
            if let Some((vertex, collider, depth)) = detection.inside {
                return Some(Reject::InsideSolid {
                    vertex,
                    collider,
                    depth,
                });
            }
        }
        let (triangle, change) = self.largest_stretch_change();
        (change > settings.stretch_threshold).then_some(Reject::StretchChange {
            triangle,
            change,
            threshold: settings.stretch_threshold,
        })
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
            let d = (a[0] - b[0]).abs().max((a[1] - b[1]).abs());
            let d = if d.is_nan() { f64::INFINITY } else { d };
            if d > worst.1 {
                worst = (t, d);
            }
        }
        worst
    }
}
