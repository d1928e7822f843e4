//! [`Evaluation`]: the forces and Jacobian blocks of one evaluation, with the storage the
//! element passes reuse from call to call.

use std::sync::Arc;

use nalgebra::Matrix3;
use rayon::prelude::*;

use super::pattern::Structure;
use crate::condition::{ElementResponse, Vec3};
use crate::scatter::TRANSPOSED;
use crate::split::SplitScratch;

/// Forces and Jacobian blocks at one state, with storage reused across calls.
///
/// One block per vertex pair: the entries are every pair (i, j), i <= j, that an element
/// couples, and the diagonal (i, i) of every vertex, sorted (row i's pairs start with its
/// diagonal), fixed for a model and independent of positions and velocities. The elements'
/// blocks are summed into them as they are evaluated (about 7 blocks per vertex instead of
/// the elements' 37), in an order that does not depend on the thread count.
///
/// The elements: 6 local pairs per triangle (stretch + shear); then the bend elements:
/// [`BendModel::Hinge`](crate::BendModel::Hinge): 10 local pairs per hinge `[v0, v1, v2, v3]`;
/// [`BendModel::ShapeOperator`](crate::BendModel::ShapeOperator): per triangle, local pairs of its stencil
/// `[p0, p1, p2, q0, q1, q2]` (see [`ClothModel::shape_stencils`](super::ClothModel::shape_stencils)), 12 under
/// [`Definiteness::Clamped`](crate::Definiteness::Clamped) (the pairs with a flap, without the flap-flap pairs (3,4), (3,5),
/// (4,5), so every off-diagonal entry is in `ClothMesh::vertex_pairs`; the element's
/// triangle-triangle blocks add onto its triangle's pairs) and 21 under `Exact` and `Projected`
/// (the flap-flap pairs couple vertices outside the mesh pattern: build the matrix pattern
/// from [`ClothModel::vertex_pairs`](super::ClothModel::vertex_pairs)). The diagonal blocks carry no internal term of their own
/// beyond the elements' (i, i) blocks; [`crate::External`] adds to them. Callers can precompute
/// where each entry goes once.
#[derive(Clone, Debug, Default)]
pub struct Evaluation {
    /// Force per vertex (N): internal elastic + damping (+ external if accumulated).
    pub forces: Vec<Vec3>,
    /// Elastic energy (J) of the internal model at the evaluated positions.
    pub energy: f64,
    pub(super) structure: Option<Arc<Structure>>,
    pub(super) dfdx: Vec<Matrix3<f64>>,
    pub(super) dfdv: Vec<Matrix3<f64>>,
    /// Energy per element chunk (the triangles' chunks, then the bend elements').
    pub(super) chunk_energy: Vec<f64>,
    /// Shape-operator pre-pass: wrapped `theta - theta0` and its gradient per hinge.
    pub(super) hinge_angles: Vec<(f64, [Vec3; 4])>,
    /// Shape-operator midedge split per hinge (see the `split` module), its right-hand side
    /// scratch and solve scratch.
    pub(super) split_psi: Vec<f64>,
    pub(super) split_dtheta: Vec<f64>,
    pub(super) split_scratch: SplitScratch,
}

impl Evaluation {
    /// `(i, j)`, i <= j, of every entry; entry k contributes block `dfdx()[k]` (and
    /// `dfdv()[k]`) to (i, j) and its transpose to (j, i) when i != j. Empty before the first
    /// evaluation.
    pub fn entries(&self) -> &[(usize, usize)] {
        self.structure.as_ref().map_or(&[], |s| &s.entries)
    }

    /// Index of the entry of vertex pair (i, j) or (j, i) in [`Evaluation::entries`], if the
    /// model couples them (every (i, i) of an evaluated model is an entry).
    pub fn entry_of(&self, i: usize, j: usize) -> Option<usize> {
        self.structure.as_ref()?.find(i, j)
    }

    /// Position Jacobian blocks df_i/dx_j (N/m), one per entry.
    pub fn dfdx(&self) -> &[Matrix3<f64>] {
        &self.dfdx
    }

    /// Velocity Jacobian blocks df_i/dv_j (N s/m), one per entry.
    pub fn dfdv(&self) -> &[Matrix3<f64>] {
        &self.dfdv
    }

    /// Mutable access to forces and both Jacobians (for adding further force terms in the same
    /// entry layout).
    pub fn parts_mut(&mut self) -> (&mut [Vec3], &mut [Matrix3<f64>], &mut [Matrix3<f64>]) {
        (&mut self.forces, &mut self.dfdx, &mut self.dfdv)
    }

    /// `out = (df/dx) w` over all vertices (w in m, out in N); deterministic (each vertex sums its
    /// entries in entry order), parallel over vertices.
    ///
    /// # Panics
    /// If `w` or `out` is shorter than the number of vertices evaluated.
    pub fn mul_dfdx(&self, w: &[Vec3], out: &mut [Vec3]) {
        self.mul(&self.dfdx, w, out);
    }

    /// `out = (df/dv) w` (w in m/s, out in N); same conventions as [`Evaluation::mul_dfdx`].
    ///
    /// # Panics
    /// If `w` or `out` is shorter than the number of vertices evaluated.
    pub fn mul_dfdv(&self, w: &[Vec3], out: &mut [Vec3]) {
        self.mul(&self.dfdv, w, out);
    }

    fn mul(&self, blocks: &[Matrix3<f64>], w: &[Vec3], out: &mut [Vec3]) {
        let Some(s) = self.structure.as_ref() else {
            out.iter_mut().for_each(|o| *o = Vec3::zeros());
            return;
        };
        let n = s.num_vertices;
        out[..n]
            .par_iter_mut()
            .enumerate()
            .with_min_len(256)
            .for_each(|(i, o)| {
                let mut acc = Vec3::zeros();
                for &[code, j] in &s.mul[s.mul_start[i]..s.mul_start[i + 1]] {
                    let (k, j) = ((code & !TRANSPOSED) as usize, j as usize);
                    acc += if code & TRANSPOSED != 0 {
                        blocks[k].tr_mul(&w[j])
                    } else {
                        blocks[k] * w[j]
                    };
                }
                *o = acc;
            });
    }

    /// Reference path: calls `sink(i, j, dfdx, dfdv)` for every entry, in entry order.
    pub fn for_each_entry(&self, mut sink: impl FnMut(usize, usize, &Matrix3<f64>, &Matrix3<f64>)) {
        for (k, &(i, j)) in self.entries().iter().enumerate() {
            sink(i, j, &self.dfdx[k], &self.dfdv[k]);
        }
    }
}

/// Copies an element response's blocks of the local `pairs` into `[bx, bv]` and its forces
/// into `f`; returns its energy.
pub(super) fn unpack<const S: usize>(
    r: &ElementResponse<S>,
    pairs: &[(usize, usize)],
    [bx, bv]: [&mut [Matrix3<f64>]; 2],
    f: &mut [Vec3; S],
) -> f64 {
    for (k, &(a, b)) in pairs.iter().enumerate() {
        bx[k] = r.dfdx[a][b];
        bv[k] = r.dfdv[a][b];
    }
    *f = r.forces;
    r.energy
}
