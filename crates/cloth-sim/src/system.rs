//! The cloth being simulated: mesh, force model, masses and external forces.

use cloth_forces::{ClothModel, External};
use cloth_mesh::{ClothMesh, Vec3};

/// The cloth: its mesh, internal force model (which holds the lumped masses) and external
/// forces (gravity, drag, wind, user springs; see [`cloth_forces::External`]).
pub struct ClothSystem {
    /// Topology and rest shape.
    pub mesh: ClothMesh,
    /// Internal forces (stretch, shear, bend, damping) and lumped masses.
    pub model: ClothModel,
    /// Lumped vertex masses (kg), a copy of the model's.
    pub masses: Vec<f64>,
    /// Positions at t = 0 (m).
    pub x0: Vec<Vec3>,
    /// Gravity, drag, wind and user springs.
    pub external: External,
}

impl ClothSystem {
    /// Builds the system from a mesh (whose positions are the initial state), a force model
    /// built from the same mesh, and external forces.
    pub fn new(
        mesh: ClothMesh,
        model: ClothModel,
        external: External,
    ) -> Result<Self, crate::SimError> {
        if model.num_vertices() != mesh.num_vertices() {
            return Err(crate::SimError::Invalid {
                key: "cloth".into(),
                message: format!(
                    "force model has {} vertices but the mesh has {}",
                    model.num_vertices(),
                    mesh.num_vertices()
                ),
            });
        }
        external.validate(mesh.num_vertices())?;
        let masses = model.masses().to_vec();
        let x0 = mesh.positions().to_vec();
        Ok(Self {
            mesh,
            model,
            masses,
            x0,
            external,
        })
    }

    /// Number of cloth vertices.
    pub fn num_vertices(&self) -> usize {
        self.masses.len()
    }

    /// Kinetic energy (J) of velocities v.
    pub fn kinetic_energy(&self, v: &[Vec3]) -> f64 {
        0.5 * v
            .iter()
            .zip(&self.masses)
            .map(|(v, m)| m * v.norm_squared())
            .sum::<f64>()
    }
}
