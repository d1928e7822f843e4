//! The triangle pass: stretch and shear of every triangle (Baraff & Witkin §4.2), by the
//! F-space fast path or, under [`Definiteness::Projected`], the generic condition routine.

use nalgebra::Matrix3;
use rayon::prelude::*;

use super::ClothModel;
use super::buffers::unpack;
use crate::condition::{Definiteness, ElementResponse, ElementSlots, Vec3, respond};
use crate::scatter::Accumulator;
use crate::triangle::{Shear, Stretch, TRI_PAIRS, TriangleParams, triangle_fast};

impl ClothModel {
    fn triangle_response(
        &self,
        t: usize,
        x: &[Vec3],
        v: &[Vec3],
        def: Definiteness,
        out: &mut ElementResponse<3>,
    ) {
        let m = &self.materials[self.tri_material[t]];
        let r = &self.tri_rest[t];
        let xs = self.tri_gather(t, x);
        let vs = self.tri_gather(t, v);
        let (wu, wv) = r.deformation(&xs);
        let ks = m.stretch;
        let kds = [m.stretch_damping * ks[0], m.stretch_damping * ks[1]];
        respond(
            &Stretch::new(r, wu, wv, m.stretch_targets),
            &ks,
            &kds,
            &vs,
            def,
            out,
        );
        if m.shear != 0.0 {
            respond(
                &Shear::new(r, wu, wv),
                &[m.shear],
                &[m.shear_damping * m.shear],
                &vs,
                def,
                out,
            );
        }
    }

    /// Response of triangle `t` (stretch + shear) alone, element-local, through the generic
    /// condition routine (reference path; [`ClothModel::evaluate`] uses an equivalent F-space
    /// fast path, tested equal).
    pub fn triangle_element(&self, t: usize, x: &[Vec3], v: &[Vec3]) -> ElementResponse<3> {
        let mut out = ElementResponse::zero();
        self.triangle_response(t, x, v, self.definiteness, &mut out);
        out
    }

    /// Stretch and shear of every triangle into `acc`, the energy per chunk into `energy`.
    pub(super) fn triangle_pass(
        &self,
        x: &[Vec3],
        v: &[Vec3],
        acc: &Accumulator<'_>,
        energy: &mut [f64],
    ) {
        let s = &self.structure;
        let def = self.definiteness;
        acc.run(&s.tri_colors, &self.tris, energy, |sink| {
            let mut energy = 0.0;
            let (mut bx, mut bv) = ([Matrix3::zeros(); 6], [Matrix3::zeros(); 6]);
            let mut f = [Vec3::zeros(); 3];
            for t in sink.elements() {
                energy += if def == Definiteness::Projected {
                    let mut r = ElementResponse::zero();
                    self.triangle_response(t, x, v, def, &mut r);
                    unpack(&r, &TRI_PAIRS, [&mut bx, &mut bv], &mut f)
                } else {
                    self.triangle_fast_at(t, x, v, &mut bx, &mut bv, &mut f)
                };
                sink.add_blocks(t, s.tri_pairs(t), &bx, &bv);
                sink.add_forces(t, &f);
            }
            energy
        })
    }

    /// The stretch and shear element of triangle `t` (fast path, `Clamped` or `Exact`) into
    /// its 6 entry blocks and 3 force slots; returns its energy.
    pub(super) fn triangle_fast_at(
        &self,
        t: usize,
        x: &[Vec3],
        v: &[Vec3],
        bx: &mut [Matrix3<f64>],
        bv: &mut [Matrix3<f64>],
        f: &mut [Vec3],
    ) -> f64 {
        let (xs, vs) = (self.tri_gather(t, x), self.tri_gather(t, v));
        let m = &self.materials[self.tri_material[t]];
        let tp = TriangleParams {
            stretch: m.stretch,
            stretch_damping: [
                m.stretch_damping * m.stretch[0],
                m.stretch_damping * m.stretch[1],
            ],
            targets: m.stretch_targets,
            shear: m.shear,
            shear_damping: m.shear_damping * m.shear,
        };
        triangle_fast(
            &self.tri_rest[t],
            &xs,
            &vs,
            &tp,
            self.definiteness == Definiteness::Clamped,
            ElementSlots {
                dfdx: bx,
                dfdv: bv,
                forces: f,
            },
        )
    }

    /// Per-triangle stretch `(|w_u|, |w_v|)` at `x` (dimensionless; 1 = rest length along u / v),
    /// for adaptive stepping and statistics. `out` is resized to `num_triangles()`.
    ///
    /// # Panics
    /// If `x` is shorter than `num_vertices()`.
    pub fn triangle_stretch(&self, x: &[Vec3], out: &mut Vec<[f64; 2]>) {
        out.resize(self.tris.len(), [0.0; 2]);
        out.par_iter_mut()
            .enumerate()
            .with_min_len(512)
            .for_each(|(t, o)| {
                let (wu, wv) = self.tri_rest[t].deformation(&self.tri_gather(t, x));
                *o = [wu.norm(), wv.norm()];
            });
    }
}
