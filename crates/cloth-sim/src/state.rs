//! The simulated state, owned by the caller.

use cloth_mesh::Vec3;

/// Positions, velocities and time of the cloth: everything that changes from step to step and
/// nothing else. The caller owns it and hands it to a step ([`crate::implicit::Implicit::step`],
/// [`crate::explicit::Verlet::step`]) or to the frame driver ([`crate::simulation::Simulation`]).
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Vertex positions (m), world frame, y up.
    pub x: Vec<Vec3>,
    /// Vertex velocities (m/s).
    pub v: Vec<Vec3>,
    /// Simulated time (s).
    pub t: f64,
}

impl State {
    /// The cloth at rest at positions `x` at time 0.
    pub fn at_rest(x: Vec<Vec3>) -> Self {
        let v = vec![Vec3::zeros(); x.len()];
        State { x, v, t: 0.0 }
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether the state has no vertices.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// Kinetic energy (J) for lumped vertex masses (kg).
    pub fn kinetic_energy(&self, masses: &[f64]) -> f64 {
        0.5 * self
            .v
            .iter()
            .zip(masses)
            .map(|(v, m)| m * v.norm_squared())
            .sum::<f64>()
    }

    /// The first vertex whose position or velocity is not finite.
    pub fn first_non_finite(&self) -> Option<usize> {
        self.x.iter().zip(&self.v).position(|(x, v)| {
            !(x.iter().all(|c| c.is_finite()) && v.iter().all(|c| c.is_finite()))
        })
    }
}
