//! Stage 6, update: the accepted candidate becomes the state (`v += dv`,
//! `x += h (v0 + dv) + y`), the optional maximum-stretch pass corrects positions and
//! velocities, and contacts change mode from their constraint forces (paper §5.4 and §6.1).

use super::accept::Check;
use super::candidate::Candidate;
use super::contact::ContactMemory;
use super::solve::Solution;
use crate::state::State;
use crate::strain::{EdgeSet, StrainLimit};
use crate::world::World;
use cloth_mesh::Vec3;

/// Stretch (fraction of the rest length, along u or v) of a triangle beyond which a contact at
/// its corners that the cloth pulls off a solid slides off it without friction instead of
/// being engaged again as a static contact (see `ContactMemory::constrain`). Below it the
/// paper's rule stands: sewn panels pulled onto a body by their stitches keep the hold of a
/// new static contact.
const RELEASE_STRETCH: f64 = 0.2;

/// What the update keeps: the constraint forces of the last accepted step and the
/// maximum-stretch pass.
pub(crate) struct Update {
    /// Constraint forces of the last accepted step (N).
    pub constraint_forces: Vec<Vec3>,
    /// The maximum-stretch pass's edges and inverse masses, made on first use.
    strain: Option<StrainPass>,
}

/// The maximum-stretch pass's edges and inverse masses (pinned vertices at 0).
struct StrainPass {
    edges: EdgeSet,
    inv_mass: Vec<f64>,
}

impl Update {
    pub fn new(n: usize) -> Self {
        Self {
            constraint_forces: vec![Vec3::zeros(); n],
            strain: None,
        }
    }

    /// `v += dv` (and the impact zones' corrections), constraint forces `e / h`.
    pub fn velocities(
        &mut self,
        state: &mut State,
        h: f64,
        solution: &Solution,
        candidate: &Candidate,
    ) {
        for (((v, dv), f), e) in state
            .v
            .iter_mut()
            .zip(&solution.dv)
            .zip(self.constraint_forces.iter_mut())
            .zip(&solution.e)
        {
            *v += dv;
            *f = e / h;
        }
        if candidate.zone_vertices > 0 {
            for (v, dv) in state.v.iter_mut().zip(candidate.zone_velocity_changes(h)) {
                *v += dv;
            }
        }
    }

    /// The candidate's positions become the state's, then the optional maximum-stretch pass
    /// (`limit`) moves them and the velocities take the same correction divided by h. The
    /// check's candidate stretch becomes the new state's where it differs.
    pub fn positions(
        &mut self,
        world: &World,
        state: &mut State,
        h: f64,
        limit: Option<&StrainLimit>,
        candidate: &mut Candidate,
        check: &mut Check,
    ) {
        std::mem::swap(&mut state.x, &mut candidate.x1);
        let model = &world.cloth.model;
        if let Some(limit) = limit {
            let pass = self.strain.get_or_insert_with(|| StrainPass {
                edges: EdgeSet::from_mesh(&world.cloth.mesh),
                inv_mass: world.inverse_masses(),
            });
            // The pass moves positions; velocities take the same correction divided by h.
            candidate.x1.clone_from(&state.x);
            pass.edges.project(&mut state.x, &pass.inv_mass, limit);
            for ((v, x), x1) in state.v.iter_mut().zip(&state.x).zip(&candidate.x1) {
                *v += (x - x1) / h;
            }
            model.triangle_stretch(&state.x, &mut check.stretch1);
        } else if candidate.altered {
            // The candidate's stretch was measured without y.
            model.triangle_stretch(&state.x, &mut check.stretch1);
        }
    }

    /// Contact modes after the accepted step from its constraint forces (the check's start
    /// stretch is the new state's).
    pub fn contact_modes(
        &self,
        world: &World,
        state: &State,
        h: f64,
        check: &mut Check,
        contacts: &mut ContactMemory,
    ) {
        let torn = check.overstretched_vertices(&world.cloth.model, RELEASE_STRETCH);
        contacts.after_step(world, &self.constraint_forces, &state.v, h, torn);
    }
}
