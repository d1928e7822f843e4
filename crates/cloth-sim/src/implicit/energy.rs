//! Part of stage 5, accept or reject: the energy check of a step against static solids.
//! Backward Euler dissipates and a static solid's constraints do no work, so where nothing
//! but gravity does work on the cloth (no driven pins or colliders, no wind, no user springs,
//! no sewing) a step's kinetic energy can grow only by what gravity's work and the elastic
//! energy the step releases supply. A large step that lands cloth on a curved solid can do
//! more: the landed and pushed-out vertices (paper §6.2) deform the cloth by a fixed distance
//! at any h, and the step gives that deformation back as motion (a sheet dropped 10 mm onto a
//! sphere, landing in one 17-33 ms step, flicks sideways with several times the energy its
//! drop released). Such a step is rejected ([`Reject::EnergyGain`]) and h halved, down to
//! [`ENERGY_CHECK_H`]: smaller steps land the cloth gradually, and below it no step is
//! rejected for energy, so the check never stops a run.

use super::candidate::Candidate;
use crate::error::Reject;
use crate::sanity::ENERGY_FLOOR_HEIGHT;
use crate::world::World;
use cloth_mesh::Vec3;

/// Steps no longer than this (s) are not checked for energy.
pub const ENERGY_CHECK_H: f64 = 1e-3;

/// Share of the energy the step starts with and gravity's work over it that its kinetic energy
/// may gain beyond what they and the released elastic energy supply.
const ENERGY_GAIN: f64 = 0.5;

/// The elastic energy of the start state, kept while the start state stands, and scratch.
#[derive(Default)]
pub(crate) struct EnergyCheck {
    /// Elastic energy at the start state (J), once measured.
    start: Option<f64>,
    /// Scratch: candidate velocities.
    v1: Vec<Vec3>,
}

/// What the check needs of an attempt.
pub(crate) struct Judged<'a> {
    /// Start positions (m).
    pub x0: &'a [Vec3],
    /// Start velocities (m/s).
    pub v0: &'a [Vec3],
    /// The solved velocity change (m/s).
    pub dv: &'a [Vec3],
    /// The candidate end state (with the impact zones' changes).
    pub candidate: &'a Candidate,
    /// Work (J) the position alterations did lifting vertices against gravity.
    pub lift: f64,
    /// Step size (s).
    pub h: f64,
}

impl EnergyCheck {
    /// Forgets the start state's energy.
    pub fn invalidate(&mut self) {
        self.start = None;
    }

    /// The rejection of an attempt whose kinetic energy grew by more than gravity's work, the
    /// elastic energy it released and twice the alterations' lift supply (plus
    /// [`ENERGY_GAIN`] of its start kinetic energy and gravity's work, and a floor), if any.
    /// `applies`: nothing but gravity does work on the cloth of `world` and it has colliders.
    pub fn judge(&mut self, world: &World, j: &Judged, applies: bool) -> Option<Reject> {
        if !applies || j.h <= ENERGY_CHECK_H {
            return None;
        }
        let cloth = &world.cloth;
        let (model, masses) = (&cloth.model, &cloth.masses);
        let kinetic = |v: &[Vec3]| -> f64 {
            (v.iter().zip(masses))
                .map(|(v, m)| 0.5 * m * v.norm_squared())
                .sum()
        };
        self.v1.clear();
        (self.v1).extend(j.v0.iter().zip(j.dv).map(|(v, dv)| v + dv));
        if j.candidate.zone_vertices > 0 {
            let zones = j.candidate.zone_velocity_changes(j.h);
            for (v, dz) in self.v1.iter_mut().zip(zones) {
                *v += dz;
            }
        }
        let x1 = &j.candidate.x1;
        let (k0, k1) = (kinetic(j.v0), kinetic(&self.v1));
        let gravity = cloth.external.gravity;
        let fallen: f64 = (j.x0.iter().zip(x1).zip(masses))
            .map(|((a, b), m)| m * gravity.dot(&(b - a)))
            .sum();
        let total_mass: f64 = masses.iter().sum();
        let floor = total_mass * gravity.norm() * ENERGY_FLOOR_HEIGHT;
        let allowed = ENERGY_GAIN * (k0 + fallen.abs()) + floor;
        let unreleased = k1 - k0 - fallen - 2.0 * j.lift;
        // The released elastic energy can only lower the gain: most steps pass without it, and
        // the elastic energies (an evaluation of every element) are measured only when needed.
        if unreleased <= allowed {
            return None;
        }
        let elastic0 = *self.start.get_or_insert_with(|| model.energy(j.x0));
        let released = (elastic0 - model.energy(x1)).max(0.0);
        let gain = unreleased - released;
        (gain.is_nan() || gain > allowed).then_some(Reject::EnergyGain { gain, allowed })
    }
}
