//! Rest state changed after construction: rest angles (flat, given, or taken from positions)
//! and the vertices a clamp holds.

use super::ClothModel;
use super::rest::{BendRef, make_split};
use crate::bend::{dihedral_angle, wrap_angle};
use crate::condition::Vec3;
use crate::split::hinges_of;
use crate::{BendModel, ForceError};

impl ClothModel {
    /// Sets the rest dihedral angles (rad), one per hinge, each finite.
    pub fn set_rest_angles(&mut self, angles: &[f64]) -> Result<(), ForceError> {
        if angles.len() != self.hinges.len() {
            return Err(ForceError::LengthMismatch {
                what: "rest angles",
                expected: self.hinges.len(),
                got: angles.len(),
            });
        }
        if let Some(h) = angles.iter().position(|a| !a.is_finite()) {
            return Err(ForceError::NonFinite {
                what: "rest angle of hinge",
                index: h,
            });
        }
        for (r, &a) in self.hinge_rest.iter_mut().zip(angles) {
            r.rest_angle = wrap_angle(a);
        }
        self.sync_shape_rest_angles();
        Ok(())
    }

    /// Sets every hinge's rest angle to its dihedral angle at positions `x` (m), e.g. the rest
    /// positions of a pre-folded garment, so that `x` has zero bend energy.
    ///
    /// # Panics
    /// If `x.len() != num_vertices()`; use [`ClothModel::try_set_rest_angles_from`] to get an error.
    pub fn set_rest_angles_from(&mut self, x: &[Vec3]) {
        if let Err(e) = self.try_set_rest_angles_from(x) {
            panic!("set_rest_angles_from: {e}");
        }
    }

    /// Like [`ClothModel::set_rest_angles_from`], but checks `x` (length, finiteness) first.
    pub fn try_set_rest_angles_from(&mut self, x: &[Vec3]) -> Result<(), ForceError> {
        self.check_positions(x)?;
        for (r, h) in self.hinge_rest.iter_mut().zip(&self.hinges) {
            r.rest_angle = dihedral_angle(&[x[h[0]], x[h[1]], x[h[2]], x[h[3]]]);
        }
        self.sync_shape_rest_angles();
        Ok(())
    }

    /// Declares which vertices a clamp holds (`clamped[v]`, one per vertex; all false: none,
    /// the default). Under [`BendModel::ShapeOperator`] a triangle whose three vertices are
    /// clamped is held flat by the clamp: it stores no bending energy, and the angle of each
    /// of its edges belongs wholly to the triangle across, so the clamp line carries the full
    /// bending moment (the heavy cantilever, `docs/bending.md`). Meant for vertices that only
    /// move rigidly (pinned, or carried by a rigid clamp); for cloth attached to a deforming
    /// body leave them unclamped. No effect under [`BendModel::Hinge`].
    pub fn set_clamped_vertices(&mut self, clamped: &[bool]) -> Result<(), ForceError> {
        if clamped.len() != self.num_vertices() {
            return Err(ForceError::LengthMismatch {
                what: "clamped vertices",
                expected: self.num_vertices(),
                got: clamped.len(),
            });
        }
        if self.bend_model() != BendModel::ShapeOperator {
            return Ok(());
        }
        let rigid: Vec<bool> = (self.tris.iter())
            .map(|t| t.iter().all(|&v| clamped[v]))
            .collect();
        // A hinge with a rigid side puts its whole angle on the other side: phi = theta where
        // the weight columns assume phi = theta/2 + psi, so those columns double.
        let held = hinges_of(self.hinges.len(), &self.shape_hinges, |t| rigid[t]);
        for ((r, doubled), hs) in (self.shape_rest.iter_mut())
            .zip(&mut self.shape_doubled)
            .zip(&self.shape_hinges)
        {
            for i in 0..3 {
                let was = *doubled & (1 << i) != 0;
                let now = hs[i] != usize::MAX && held[hs[i]];
                if was != now {
                    let f = if now { 2.0 } else { 0.5 };
                    for row in r.weights.iter_mut() {
                        row[i] *= f;
                    }
                    *doubled ^= 1 << i;
                }
            }
        }
        let r = BendRef {
            hinges: &self.hinges,
            shape_stencils: &self.shape_stencils,
            shape_rest: &self.shape_rest,
            shape_hinges: &self.shape_hinges,
        };
        self.split = make_split(r, &self.materials, &self.tri_material, &rigid);
        Ok(())
    }

    /// Copies the hinge rest angles into the shape-operator elements.
    fn sync_shape_rest_angles(&mut self) {
        for (r, hs) in self.shape_rest.iter_mut().zip(&self.shape_hinges) {
            for i in 0..3 {
                if hs[i] != usize::MAX {
                    r.rest_angles[i] = self.hinge_rest[hs[i]].rest_angle;
                }
            }
        }
    }
}
