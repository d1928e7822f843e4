//! The hinge pass: the bending of every hinge under [`BendModel::Hinge`] (Baraff & Witkin
//! §4.3), Gauss-Newton fast path under [`Definiteness::Clamped`].

use nalgebra::Matrix3;

use super::ClothModel;
use super::buffers::unpack;
use crate::BendModel;
use crate::bend::{Bend, HINGE_PAIRS, hinge_fast_gauss_newton};
use crate::condition::{Definiteness, ElementResponse, ElementSlots, Vec3, respond};
use crate::scatter::Accumulator;

impl ClothModel {
    fn hinge_response(
        &self,
        h: usize,
        x: &[Vec3],
        v: &[Vec3],
        def: Definiteness,
        out: &mut ElementResponse<4>,
    ) {
        let r = &self.hinge_rest[h];
        if r.stiffness == 0.0 || self.bend_model() != BendModel::Hinge {
            return;
        }
        let k = [r.stiffness];
        let kd = [self.materials[self.hinge_material[h]].bend_damping * r.stiffness];
        respond(
            &Bend::new(r, self.hinge_gather(h, x)),
            &k,
            &kd,
            &self.hinge_gather(h, v),
            def,
            out,
        );
    }

    /// Response of hinge `h` (bend) alone, element-local, through the generic condition routine
    /// (reference path; tested equal to [`ClothModel::evaluate`]). All zero unless the bend
    /// model is [`BendModel::Hinge`].
    pub fn hinge_element(&self, h: usize, x: &[Vec3], v: &[Vec3]) -> ElementResponse<4> {
        let mut out = ElementResponse::zero();
        self.hinge_response(h, x, v, self.definiteness, &mut out);
        out
    }

    /// Every hinge's bending into `acc`, the energy per chunk into `energy`.
    pub(super) fn hinge_pass(
        &self,
        x: &[Vec3],
        v: &[Vec3],
        acc: &Accumulator<'_>,
        energy: &mut [f64],
    ) {
        let s = &self.structure;
        let def = self.definiteness;
        acc.run(&s.bend_colors, &self.hinges, energy, |sink| {
            let mut energy = 0.0;
            let (mut bx, mut bv) = ([Matrix3::zeros(); 10], [Matrix3::zeros(); 10]);
            let mut f = [Vec3::zeros(); 4];
            for h in sink.elements() {
                let hr = &self.hinge_rest[h];
                energy += if def == Definiteness::Clamped || hr.stiffness == 0.0 {
                    let (xs, vs) = (self.hinge_gather(h, x), self.hinge_gather(h, v));
                    let kd = self.materials[self.hinge_material[h]].bend_damping * hr.stiffness;
                    let slots = ElementSlots {
                        dfdx: &mut bx,
                        dfdv: &mut bv,
                        forces: &mut f,
                    };
                    hinge_fast_gauss_newton(hr, xs, &vs, hr.stiffness, kd, slots)
                } else {
                    let mut r = ElementResponse::zero();
                    self.hinge_response(h, x, v, def, &mut r);
                    unpack(&r, &HINGE_PAIRS, [&mut bx, &mut bv], &mut f)
                };
                sink.add_blocks(h, s.bend_pairs(h), &bx, &bv);
                sink.add_forces(h, &f);
            }
            energy
        })
    }
}
