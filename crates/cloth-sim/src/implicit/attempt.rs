//! What every stage of one step attempt reads: the world, the start state, the step size and
//! the settings.

use super::settings::ImplicitSettings;
use crate::state::State;
use crate::world::World;

/// The context of one attempt of a step from `state` of size `h`, passed to every stage after
/// detection (which moves the colliders to the step's end and so needs the world mutably).
pub(crate) struct Attempt<'a> {
    /// The cloth and its surroundings, colliders placed at `state.t + h`.
    pub world: &'a World,
    /// The state at the step's start.
    pub state: &'a State,
    /// The step size (s).
    pub h: f64,
    /// The integrator's settings.
    pub settings: &'a ImplicitSettings,
}
