//! Stage 6, update: the accepted candidate becomes the state (`v += dv`,
//! `x += h (v0 + dv) + y`), the optional maximum-stretch pass corrects positions and
//! velocities, and contacts change mode from their constraint forces (Knowl 8).

use super::accept::Check;
use super::contact::ContactMemory;
use super::solve::Solution;
use crate::state::State;
use crate::strain::{EdgeSet, StrainLimit};
use crate::world::World;
use cloth_mesh::Vec3;

/// The maximum-stretch pass's edges and inverse masses (pinned vertices at 0), made on first
/// use.
pub(crate) struct StrainPass {
    edges: EdgeSet,
    inv_mass: Vec<f64>,
}

impl StrainPass {
    pub fn new(world: &World) -> Self {
        Self {
            edges: EdgeSet::from_mesh(&world.cloth.mesh),
            inv_mass: world.inverse_masses(),
        }
    }
}

/// Stretch (fraction of the rest length, along u or v) of a triangle beyond which a contact at
/// its corners that the cloth pulls off a solid slides off it without friction instead of
/// being engaged again as a static contact (see `ContactMemory::constrain`). Below it the
/// paper's rule stands: sewn panels pulled onto a body by their stitches keep the hold of a
/// new static contact (letting every attracted contact slide stopped the twisting shirt's
/// preroll at t = -0.8 s); the walking trousers' hem stays under 25% with it.
const RELEASE_STRETCH: f64 = 0.2;

/// Applies an accepted step of size `h` (the candidate in `check` already holds the position
/// alterations y).
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply(
    world: &World,
    state: &mut State,
    h: f64,
    strain: Option<(&StrainPass, &StrainLimit)>,
    solution: &Solution,
    check: &mut Check,
    contacts: &mut ContactMemory,
    constraint_forces: &mut [Vec3],
) {
    for (((v, dv), f), e) in state
        .v
        .iter_mut()
        .zip(&solution.dv)
        .zip(constraint_forces.iter_mut())
        .zip(&solution.e)
    {
        *v += dv;
        *f = e / h;
    }
    if check.zone_vertices > 0 {
        for (v, dv) in state.v.iter_mut().zip(check.zone_velocity_changes(h)) {
            *v += dv;
        }
    }
    std::mem::swap(&mut state.x, &mut check.x1);
    let model = &world.cloth.model;
    if let Some((pass, limit)) = strain {
        // The pass moves positions; velocities take the same correction divided by h.
        check.x1.clone_from(&state.x);
        pass.edges.project(&mut state.x, &pass.inv_mass, limit);
        for ((v, x), x1) in state.v.iter_mut().zip(&state.x).zip(&check.x1) {
            *v += (x - x1) / h;
        }
        model.triangle_stretch(&state.x, &mut check.stretch1);
    } else if check.altered {
        // The candidate's stretch was measured without y.
        model.triangle_stretch(&state.x, &mut check.stretch1);
    }
    check.start_from_candidate();
    if world.colliders.is_some() {
        let torn = check.overstretched_vertices(model, RELEASE_STRETCH);
        contacts.after_step(world, constraint_forces, &state.v, h, torn);
    }
    state.t += h;
}
