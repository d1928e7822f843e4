//! Sanity checks of the state after every accepted step of either integrator.
//!
//! The state is checked for what can only be garbage, so a run stops with a typed error naming
//! the frame, the vertex and the cause instead of writing frames at 1e31 m and exiting 0.
//!
//! The checks and their documented limits:
//! - **finite**: every position and velocity is finite;
//! - **bounds**: no vertex farther from the scene's centre than
//!   `BOUND_FACTOR * L + |g| t^2 / 2 + v_drive t`, with `L` the scene's extent (the cloth's
//!   initial box, the colliders' origins and the pins' keyframed offsets, at least 1 m), `g`
//!   gravity and `v_drive` the fastest prescribed motion (pins, colliders);
//! - **stretch**: no triangle stretched beyond [`MAX_STRETCH`] (`|w_u|` or `|w_v|` more than
//!   `1 + MAX_STRETCH` times its rest length);
//! - **energy** (kinetic energy growth without external work): where nothing does work on the
//!   cloth but gravity — no moving pins or colliders, no wind, no user springs, no sewing
//!   (stitches pull and hold gravity off while they close) — the kinetic
//!   energy may not exceed [`ENERGY_FACTOR`] times the initial kinetic and elastic energy plus
//!   the gravitational energy released since the start, plus the energy of lifting the cloth
//!   0.1 mm (backward Euler dissipates, Verlet nearly conserves: a correct run stays well
//!   inside it). Static colliders are allowed but
//!   loosen the factor to [`ENERGY_FACTOR_CONTACT`]: the position alteration (paper §6.2)
//!   moves vertices onto surfaces without a force and so does work of its own (up to a little
//!   more than the released energy); where it lifts vertices against gravity (cloth started
//!   inside a solid's layer) its work counts as supplied energy (implicit integrator). Where
//!   pins or colliders are driven, they can do any amount of work and the check is off.
//! - **solids**: the implicit step never accepts a vertex inside a solid deeper than the
//!   cloth's thickness after contact handling ([`crate::error::Reject::InsideSolid`] halves
//!   the step instead); when that cannot be resolved above `h_min` the run ends with
//!   [`SimError::StepTooSmall`] naming the vertex and the collider.

pub(crate) mod limits;

pub use limits::{BOUND_FACTOR, Divergence, ENERGY_FACTOR, ENERGY_FACTOR_CONTACT, MAX_STRETCH};

use crate::error::SimError;
use crate::state::State;
use crate::world::World;
use cloth_mesh::Vec3;

/// Reference quantities of a run, fixed at its start.
#[derive(Clone, Debug)]
pub(crate) struct Sanity {
    centre: Vec3,
    extent: f64,
    gravity: Vec3,
    drive: f64,
    /// Energy factor, or `None` where external work makes the energy check meaningless.
    energy_factor: Option<f64>,
    /// Kinetic + elastic energy at the start plus the gravitational potential there, plus the
    /// lift of position alterations since ([`Sanity::credit`]) (J).
    start: f64,
    /// Work of position alterations against gravity since the start (J).
    supplied: f64,
    /// Energy (J) the check allows regardless: the cloth's weight lifted by
    /// [`ENERGY_FLOOR_HEIGHT`] (at least 1 nJ), the scale below which a cloth at rest jitters.
    floor: f64,
}

/// Height (m) whose potential energy, over the whole cloth, the energy checks (this one and
/// the implicit step's) allow regardless of what the scene supplied: the scale below which
/// the energies of a cloth at rest are round-off and jitter.
pub(crate) const ENERGY_FLOOR_HEIGHT: f64 = 1e-4;

impl Sanity {
    /// The references of `world` starting from `state`.
    pub fn new(world: &World, state: &State) -> Self {
        let cloth = &world.cloth;
        let mut lo = Vec3::repeat(f64::INFINITY);
        let mut hi = Vec3::repeat(f64::NEG_INFINITY);
        let mut grow = |p: &Vec3| {
            lo = lo.inf(p);
            hi = hi.sup(p);
        };
        state.x.iter().for_each(&mut grow);
        for pin in world.pins() {
            if let cloth_collide::Motion::Keyframes(keys) = &pin.motion {
                keys.iter()
                    .for_each(|k| grow(&(pin.centre + k.translation)));
            }
        }
        let colliders = world.colliders().map(|s| s.colliders()).unwrap_or(&[]);
        colliders.iter().for_each(|c| grow(&c.position));
        let extent = (hi - lo).norm().max(1.0);
        let drive = drive(world, extent);
        let gravity = cloth.external.gravity;
        let elastic = cloth.model.energy(&state.x);
        let closed = work_free(world, drive);
        let factor = if colliders.is_empty() {
            ENERGY_FACTOR
        } else {
            ENERGY_FACTOR_CONTACT
        };
        let energy_factor = closed.then_some(factor);
        Self {
            centre: (lo + hi) * 0.5,
            extent,
            gravity,
            drive,
            energy_factor,
            start: state.kinetic_energy(&cloth.masses)
                + elastic
                + potential(&gravity, &cloth.masses, &state.x),
            supplied: 0.0,
            floor: (cloth.masses.iter().sum::<f64>() * gravity.norm() * ENERGY_FLOOR_HEIGHT)
                .max(1e-9),
        }
    }

    /// Counts `work` (J, >= 0) done on the cloth by position alterations that lift it against
    /// gravity (a push-out onto a solid's thickness layer, paper §6.2) as energy the scene
    /// supplied: the potential it added is not held against the budget, and the budget grows
    /// by the same amount again for the speed the push drags neighbours to. Without it, a
    /// sheet started at rest inside the floor's layer would fail the check as soon as the
    /// push-out set it moving, with nothing yet fallen.
    pub fn credit(&mut self, work: f64) {
        if work.is_finite() && work > 0.0 {
            self.start += work;
            self.supplied += work;
        }
    }

    /// Turns the energy check off: the caller moves vertices by hand (position alterations),
    /// which is work the scene does not account for.
    pub fn external_work(&mut self) {
        self.energy_factor = None;
    }

    /// Checks `state` after an accepted step; `stretch` is the most stretched triangle and its
    /// stretch `|w| - 1`, when the integrator knows it.
    pub fn check(
        &self,
        world: &World,
        state: &State,
        frame: usize,
        stretch: Option<(usize, f64)>,
    ) -> Result<(), SimError> {
        let fail = |vertex: usize, cause: Divergence| {
            Err(SimError::Diverged {
                frame,
                time: state.t,
                vertex,
                cause,
            })
        };
        if let Some(vertex) = state.first_non_finite() {
            return Err(SimError::NonFinite { frame, vertex });
        }
        let t = state.t.max(0.0);
        let bound = BOUND_FACTOR * self.extent + 0.5 * self.gravity.norm() * t * t + self.drive * t;
        let (far, distance) = farthest(&state.x, &self.centre);
        if distance > bound {
            return fail(far, Divergence::OutOfBounds { distance, bound });
        }
        if let Some((triangle, s)) = stretch.filter(|&(_, s)| s.is_nan() || s > MAX_STRETCH) {
            let vertex = world.cloth.mesh.triangles()[triangle][0];
            return fail(
                vertex,
                Divergence::Stretch {
                    triangle,
                    stretch: s,
                },
            );
        }
        let Some(factor) = self.energy_factor else {
            return Ok(());
        };
        let masses = &world.cloth.masses;
        let kinetic = state.kinetic_energy(masses);
        let released = self.start - potential(&self.gravity, masses, &state.x);
        let budget = factor * (released.max(0.0) + self.supplied) + self.floor;
        if kinetic.is_nan() || kinetic > budget {
            let fastest = (0..state.len())
                .max_by(|&a, &b| {
                    (masses[a] * state.v[a].norm_squared())
                        .total_cmp(&(masses[b] * state.v[b].norm_squared()))
                })
                .unwrap_or(0);
            return fail(fastest, Divergence::Energy { kinetic, budget });
        }
        Ok(())
    }
}

/// The fastest prescribed motion (m/s) of a pin or collider point within `extent` (m) of its
/// centre.
fn drive(world: &World, extent: f64) -> f64 {
    let pin_drive = world.pins().iter().map(|p| {
        let r = p
            .initial
            .iter()
            .map(|x| (x - p.centre).norm())
            .fold(0.0, f64::max);
        p.motion.max_speed(r)
    });
    let colliders = world.colliders().map(|s| s.colliders()).unwrap_or(&[]);
    let collider_drive = colliders
        .iter()
        .map(|c| c.motion.max_speed(c.shape.bounding_radius().min(extent)));
    pin_drive.chain(collider_drive).fold(0.0, f64::max)
}

/// Whether nothing but gravity does work on the cloth of `world` (`drive` its fastest
/// prescribed motion): no driven pins or colliders, no wind, no user springs, no sewing.
fn work_free(world: &World, drive: f64) -> bool {
    let ext = &world.cloth.external;
    drive == 0.0
        && (ext.wind == Vec3::zeros() || (ext.drag == 0.0 && ext.wind_coefficient == 0.0))
        && ext.springs.is_empty()
        && world.sewing.is_empty()
}

/// Whether nothing but gravity does work on the cloth of `world` (see [`Sanity`]'s energy
/// check).
pub(crate) fn closed(world: &World) -> bool {
    work_free(world, drive(world, 1.0))
}

/// Gravitational potential energy `-sum m g . x` (J).
fn potential(g: &Vec3, masses: &[f64], x: &[Vec3]) -> f64 {
    -x.iter().zip(masses).map(|(p, m)| m * g.dot(p)).sum::<f64>()
}

/// The vertex farthest from `c` and its distance (m).
fn farthest(x: &[Vec3], c: &Vec3) -> (usize, f64) {
    x.iter()
        .map(|p| (p - c).norm())
        .enumerate()
        .fold(
            (0, 0.0),
            |best, (i, d)| if d > best.1 { (i, d) } else { best },
        )
}
