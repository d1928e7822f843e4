//! Stage 5, accept or reject: the candidate end state is judged before anything is changed.
//! A vertex pulled into a solid asks for a redo with that vertex in contact; a stretch change
//! above the threshold (Knowl 9) asks for a smaller step.

use super::contact::ContactMemory;
use super::detect::Detection;
use super::settings::ImplicitSettings;
use super::zones::Zones;
use crate::error::Reject;
use crate::state::State;
use crate::stats::{Stopwatch, Timings};
use crate::world::World;
use cloth_mesh::Vec3;

/// The candidate state and the stretch measures of the check.
#[derive(Default)]
pub(crate) struct Check {
    /// Stretch `(|w_u|, |w_v|)` per triangle at the start state.
    pub stretch0: Vec<[f64; 2]>,
    /// The same at the candidate end state `x1`.
    pub stretch1: Vec<[f64; 2]>,
    /// The attempt's position corrections y: its alterations less their landing part (empty
    /// when all are zero).
    y: Vec<Vec3>,
    /// Scratch positions.
    scratch: Vec<Vec3>,
    /// Whether `stretch0` belongs to the current start state.
    valid: bool,
    /// Whether the attempt being judged has a non-zero correction y (its alteration less the
    /// landing part; then `stretch1` is not the candidate's own stretch until the accepted
    /// step re-measures it in stage 6).
    pub altered: bool,
    /// Candidate end positions, `x0 + h (v0 + dv) + y` (m), after impact zones.
    pub x1: Vec<Vec3>,
    /// The candidate before impact zones (m).
    x1_free: Vec<Vec3>,
    /// The alteration y before impact zones (empty when there is none).
    y_free: Vec<Vec3>,
    /// Impact zones (the cloth-cloth safety net).
    zones: Zones,
    /// Vertices moved by impact zones in the last judged attempt.
    pub zone_vertices: usize,
    /// Scratch of [`Check::overstretched_vertices`].
    torn: Vec<bool>,
    /// The largest stretch change of the last candidate the threshold was checked on.
    pub last_change: f64,
}

/// A vertex deeper inside a solid than the thickness, as a rejection.
fn inside_solid(detection: &Detection) -> Option<Reject> {
    detection
        .inside
        .map(|(vertex, collider, depth)| Reject::InsideSolid {
            vertex,
            collider,
            depth,
        })
}

impl Check {
    /// Candidate cloth-cloth pairs near the end of the last candidate checked for
    /// crossings (for the next step's proximity search).
    pub fn near_pairs(&self) -> Option<&cloth_collide::NearPairs> {
        self.zones.near_pairs()
    }

    /// Forgets the start state's stretch.
    pub fn invalidate(&mut self) {
        self.valid = false;
    }

    /// Records that `stretch0` now holds the stretch of the (new) start state.
    pub fn start_from_candidate(&mut self) {
        std::mem::swap(&mut self.stretch0, &mut self.stretch1);
        self.valid = true;
    }

    /// Judges the candidate `x0 + h (v0 + dv) + y`: `None` to accept (then `x1` holds it), or why to reject. A vertex pulled into a solid's thickness
    /// layer asks for a redo at the same h with it in contact; one still inside a solid beyond
    /// the thickness when the redos are used up asks for a smaller step, so no accepted step
    /// leaves cloth inside a solid. Last, the motion is made free of cloth-cloth crossings by
    /// impact zones ([`super::zones`]), and the changed candidate is judged again.
    #[allow(clippy::too_many_arguments)]
    pub fn judge(
        &mut self,
        world: &World,
        state: &State,
        dv: &[Vec3],
        y: &[Vec3],
        landing: &[Vec3],
        h: f64,
        settings: &ImplicitSettings,
        detection: &mut Detection,
        contacts: &mut ContactMemory,
        redos: usize,
        timings: &mut Timings,
        sw: &mut Stopwatch,
    ) -> Option<Reject> {
        self.candidate(world, state, dv, y, landing, h);
        timings.other += sw.lap();
        if world.colliders.is_some() {
            detection.penetrations(world, &self.x1);
            timings.cloth_solid += sw.lap();
            if redos < settings.max_penetration_redos {
                let marked = contacts.force_engagement(&detection.deep, world.pinned(), h);
                if marked > 0 {
                    return Some(Reject::Penetration { vertices: marked });
                }
            }
            if let Some(reject) = inside_solid(detection) {
                return Some(reject);
            }
        }
        if let Some(reject) = self.stretch_reject(settings) {
            return Some(reject);
        }
        self.separate(world, state, settings, detection, timings, sw)
    }

    /// The candidate positions `x1` and their stretch, measured without the position
    /// alteration y except its `landing` part: the check judges the integration and the
    /// vertices' own approach to a solid, not the deliberate geometric correction (Knowl 6),
    /// which would otherwise fail a step at any h. From here on `y` holds that correction only.
    fn candidate(
        &mut self,
        world: &World,
        state: &State,
        dv: &[Vec3],
        y: &[Vec3],
        landing: &[Vec3],
        h: f64,
    ) {
        let model = &world.cloth.model;
        if !self.valid {
            model.triangle_stretch(&state.x, &mut self.stretch0);
            self.valid = true;
        }
        self.x1.resize(state.len(), Vec3::zeros());
        for ((((x1, x), v), dv), l) in (self.x1.iter_mut().zip(&state.x))
            .zip(&state.v)
            .zip(dv)
            .zip(landing)
        {
            *x1 = x + (v + dv) * h + l;
        }
        model.triangle_stretch(&self.x1, &mut self.stretch1);
        self.y.clear();
        self.y.extend(y.iter().zip(landing).map(|(y, l)| y - l));
        self.altered = self.y.iter().any(|y| *y != Vec3::zeros());
        if !self.altered {
            self.y.clear();
        }
        for (x1, y) in self.x1.iter_mut().zip(&self.y) {
            *x1 += y;
        }
    }

    /// The stretch of `x1 - y` into `stretch1` (`y` empty: of `x1`).
    fn stretch_without(&mut self, model: &cloth_forces::ClothModel, y: &[Vec3]) {
        if y.is_empty() {
            model.triangle_stretch(&self.x1, &mut self.stretch1);
            return;
        }
        self.scratch.clear();
        self.scratch
            .extend(self.x1.iter().zip(y).map(|(x, y)| x - y));
        model.triangle_stretch(&self.scratch, &mut self.stretch1);
    }

    /// A stretch change above the threshold (Knowl 9), if any.
    fn stretch_reject(&mut self, settings: &ImplicitSettings) -> Option<Reject> {
        let (triangle, change) = self.largest_stretch_change();
        self.last_change = change;
        (change > settings.stretch_threshold).then_some(Reject::StretchChange {
            triangle,
            change,
            threshold: settings.stretch_threshold,
        })
    }

    /// The safety net: impact zones make the candidate's motion free of cloth-cloth
    /// collisions; a candidate they changed is checked again for stretch and solids.
    fn separate(
        &mut self,
        world: &World,
        state: &State,
        settings: &ImplicitSettings,
        detection: &mut Detection,
        timings: &mut Timings,
        sw: &mut Stopwatch,
    ) -> Option<Reject> {
        self.x1_free.clone_from(&self.x1);
        self.y_free.clone_from(&self.y);
        let zoned = self
            .zones
            .resolve(world, &state.x, &mut self.x1, &mut self.y);
        timings.cloth_cloth += sw.lap();
        self.zone_vertices = match zoned {
            Ok(count) => count,
            Err(reject) => return Some(reject),
        };
        if self.zone_vertices == 0 {
            return None;
        }
        // Judged like the free candidate, without the alteration y (the zones carried it
        // along): y moves a vertex by a fixed distance at any h, and a zone made at a tiny
        // step must not look like a stretch change that no smaller step could cure.
        let y = std::mem::take(&mut self.y);
        self.stretch_without(&world.cloth.model, &y);
        self.y = y;
        if world.colliders.is_some() {
            detection.penetrations(world, &self.x1);
            timings.cloth_solid += sw.lap();
            if let Some(reject) = inside_solid(detection) {
                return Some(reject);
            }
        }
        self.stretch_reject(settings)
    }

    /// Velocity corrections (m/s) of the impact zones for an accepted step of size `h`: the
    /// change of each vertex's integrated end position (without the alteration y, which moves
    /// positions only) divided by h.
    pub fn zone_velocity_changes(&self, h: f64) -> impl Iterator<Item = Vec3> + '_ {
        let zero = Vec3::zeros();
        self.x1
            .iter()
            .zip(&self.x1_free)
            .enumerate()
            .map(move |(i, (x, free))| {
                let y = self.y.get(i).unwrap_or(&zero);
                let y_free = self.y_free.get(i).unwrap_or(&zero);
                ((x - y) - (free - y_free)) / h
            })
    }

    /// Per vertex, whether a triangle around it is stretched beyond `1 + limit` along u or v
    /// in the start state (into a scratch buffer owned by the check).
    pub fn overstretched_vertices(
        &mut self,
        model: &cloth_forces::ClothModel,
        limit: f64,
    ) -> &[bool] {
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
