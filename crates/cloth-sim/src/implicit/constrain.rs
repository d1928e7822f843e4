//! Stage 2, constrain: per-vertex constraint filters S_i, target velocity changes z and
//! position alterations y (paper §5.1, §6.2), from rails, contacts and pins in that order (a
//! later source wins), plus the kinetic friction of sliding contacts (paper §6.1).

use super::attempt::Attempt;
use super::contact::{ConstraintSink, ContactMemory, Inputs};
use super::detect::Detection;
use crate::stats::Clock;
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
    /// Position alterations scheduled for the next accepted step (m).
    scheduled: Vec<Vec3>,
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
            scheduled: vec![Vec3::zeros(); n],
            targets: Vec::new(),
        }
    }

    /// Schedules a position alteration of vertex `i` by `shift` (m) for the next accepted step
    /// (ignored out of range).
    pub fn schedule(&mut self, i: usize, shift: Vec3) {
        if let Some(s) = self.scheduled.get_mut(i) {
            *s += shift;
        }
    }

    /// Forgets the scheduled alterations (an accepted step applied them).
    pub fn clear_scheduled(&mut self) {
        self.scheduled.fill(Vec3::zeros());
    }

    /// Builds the constraints of the attempt: directional rails first, then solid contacts
    /// and features (on top of the scheduled alterations), then pins, which win.
    pub fn build(
        &mut self,
        ctx: &Attempt,
        detection: &Detection,
        contacts: &mut ContactMemory,
        clock: &mut Clock,
    ) {
        let (world, state, h) = (ctx.world, ctx.state, ctx.h);
        self.kind.fill(Constraint::Free);
        self.z.fill(Vec3::zeros());
        self.y.copy_from_slice(&self.scheduled);
        self.landing.fill(Vec3::zeros());
        self.friction.fill(Vec3::zeros());
        for c in &world.directional {
            let i = c.vertex;
            self.kind[i] = c.constraint;
            // Constrained components of v0 + dv vanish: z = -(I - S) v0.
            self.z[i] = -(state.v[i] - c.constraint.filter(&state.v[i]));
        }
        clock.other();
        if world.colliders.is_some() {
            let mut sink = ConstraintSink {
                kind: &mut self.kind,
                z: &mut self.z,
                y: &mut self.y,
                landing: &mut self.landing,
                forces: &mut self.friction,
            };
            let inputs = Inputs {
                surfaces: world.surfaces(),
                settings: &world.contact,
                v: &state.v,
                masses: &world.cloth.masses,
                h,
            };
            contacts.constrain(&detection.contacts, &inputs, &mut sink);
            contacts.push_off_features(&detection.features, &inputs, &mut sink);
            clock.cloth_solid();
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
        clock.other();
    }
}
