//! The elastic energy of a model alone (no forces or Jacobians), as a deterministic parallel
//! sum.

use rayon::prelude::*;

use super::ClothModel;
use crate::BendModel;
use crate::bend::{dihedral_angle, wrap_angle};
use crate::condition::Vec3;
use crate::shape::shape_energy;

/// Fixed chunk size of deterministic parallel energy sums.
const ENERGY_CHUNK: usize = 1024;

impl ClothModel {
    /// Elastic energy (J) at positions `x` (m): stretch + shear + bend. Deterministic parallel
    /// sum (fixed chunks, partial sums added in order).
    ///
    /// # Panics
    /// If `x.len() < num_vertices()` (check with [`ClothModel::check_positions`]).
    pub fn energy(&self, x: &[Vec3]) -> f64 {
        let tri: Vec<f64> = chunk_ranges(self.tris.len())
            .map(|c| {
                c.map(|t| {
                    let m = &self.materials[self.tri_material[t]];
                    let r = &self.tri_rest[t];
                    let (wu, wv) = r.deformation(&self.tri_gather(t, x));
                    let du = wu.norm() - m.stretch_targets[0];
                    let dv = wv.norm() - m.stretch_targets[1];
                    let s = wu.dot(&wv);
                    0.5 * r.area
                        * (m.stretch[0] * du * du + m.stretch[1] * dv * dv + m.shear * s * s)
                })
                .sum::<f64>()
            })
            .collect();
        let hin: Vec<f64> = match self.bend_model() {
            BendModel::Hinge => chunk_ranges(self.hinges.len())
                .map(|c| {
                    c.map(|h| {
                        let r = &self.hinge_rest[h];
                        let d = wrap_angle(dihedral_angle(&self.hinge_gather(h, x)) - r.rest_angle);
                        0.5 * r.stiffness * d * d
                    })
                    .sum::<f64>()
                })
                .collect(),
            BendModel::ShapeOperator => {
                let psi = self.split_at(x);
                chunk_ranges(self.shape_rest.len())
                    .map(|c| {
                        c.map(|t| {
                            let d = self.shape_rigidity(t);
                            let o = self.split_offsets(t, Some(&psi));
                            shape_energy(&self.shape_rest[t], &self.shape_gather(t, x), d, o)
                        })
                        .sum::<f64>()
                    })
                    .collect()
            }
        };
        tri.iter().chain(&hin).sum()
    }
}

/// Parallel iterator over fixed ranges of `ENERGY_CHUNK` indices covering `0..n`, in order.
fn chunk_ranges(n: usize) -> impl IndexedParallelIterator<Item = std::ops::Range<usize>> {
    (0..n.div_ceil(ENERGY_CHUNK))
        .into_par_iter()
        .map(move |c| c * ENERGY_CHUNK..((c + 1) * ENERGY_CHUNK).min(n))
}
