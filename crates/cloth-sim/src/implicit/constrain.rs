//! Stage 2, constrain: per-vertex constraint filters S_i, target velocity changes z and
//! position alterations y (Knowls 6, 7), from rails, contacts and pins in that order (a later
//! source wins), plus the kinetic friction of sliding contacts (Knowl 8).

use super::contact::{ConstraintSink, ContactMemory};
use super::detect::Detection;
use crate::state::State;
use crate::stats::{Stopwatch, Timings};
use crate::world::World;
use cloth_mesh::Vec3;
use cloth_solver::Constraint;

/// The constraints of the step being attempted.
pub(crate) struct Constraints {
    /// Filter of each vertex.
    pub kind: Vec<Constraint>,
    /// Prescribed velocity change along the constrained directions (m/s).
    pub z: Vec<Vec3>,
    /// Position alteration (m).
    pub y: Vec<Vec3>,
    /// The part of `y` that lands an approaching vertex on a solid's thickness layer (m): at
    /// most the vertex's own approach within the step, so the stretch check judges it as
    /// motion (see `ContactMemory::constrain`).
    pub landing: Vec<Vec3>,
    /// Kinetic friction of sliding contacts (N), a force term of the assemble stage.
    pub friction: Vec<Vec3>,
    targets: Vec<Vec3>,
}

impl Constraints {
    pub fn new(n: usize) -> Self {
        Self {
            kind: vec![Constraint::Free; n],
            z: vec![Vec3::zeros(); n],
            y: vec![Vec3::zeros(); n],
            landing: vec![Vec3::zeros(); n],
            friction: vec![Vec3::zeros(); n],
            targets: Vec::new(),
        }
    }

    /// Builds the constraints of a step of size `h` from `state`: directional rails first,
    /// then solid contacts and features (with the alterations scheduled by the caller in
    /// `shift`), then pins, which win.
    #[allow(clippy::too_many_arguments)]
    pub fn build(
        &mut self,
        world: &World,
        state: &State,
        detection: &Detection,
        contacts: &mut ContactMemory,
        shift: &[Vec3],
        h: f64,
        timings: &mut Timings,
        sw: &mut Stopwatch,
    ) {
        self.kind.fill(Constraint::Free);
        self.z.fill(Vec3::zeros());
        self.y.copy_from_slice(shift);
        self.landing.fill(Vec3::zeros());
        self.friction.fill(Vec3::zeros());
        for c in &world.directional {
            let i = c.vertex;
            self.kind[i] = c.constraint;
            // Constrained components of v0 + dv vanish: z = -(I - S) v0.
            self.z[i] = -(state.v[i] - c.constraint.filter(&state.v[i]));
        }
        timings.other += sw.lap();
        if world.colliders.is_some() {
            let mut sink = ConstraintSink {
                kind: &mut self.kind,
                z: &mut self.z,
                y: &mut self.y,
                landing: &mut self.landing,
                forces: &mut self.friction,
            };
            let surfaces = world.surfaces();
            let settings = &world.contact;
            contacts.constrain(
                &detection.contacts,
                surfaces,
                settings,
                &state.v,
                &world.cloth.masses,
                h,
                &mut sink,
            );
            contacts.push_off_features(
                &detection.features,
                surfaces,
                settings,
                &state.v,
                &mut sink,
            );
            timings.cloth_solid += sw.lap();
        }
        for pin in &world.pins {
            pin.targets(state.t + h, &mut self.targets);
            for (&i, p) in pin.vertices.iter().zip(&self.targets) {
                self.kind[i] = Constraint::Fixed;
                self.y[i] = Vec3::zeros();
                self.landing[i] = Vec3::zeros();
                // x0 + h (v0 + dv) = target exactly.
                self.z[i] = (p - state.x[i]) / h - state.v[i];
            }
        }
        timings.other += sw.lap();
    }
}
