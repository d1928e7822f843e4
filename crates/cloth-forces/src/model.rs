//! The force model of a whole mesh: rest data per triangle and hinge, parallel deterministic
//! evaluation into an [`Evaluation`] with a fixed entry order.

use std::sync::Arc;

use cloth_mesh::{ClothMesh, Par};
use nalgebra::Matrix3;
use rayon::prelude::*;

use crate::bend::{
    Bend, HINGE_PAIRS, HingeRest, dihedral_angle, hinge_fast_gauss_newton, wrap_angle,
};
use crate::condition::{Definiteness, ElementResponse, ElementSlots, Vec3, respond};
use crate::triangle::{Shear, Stretch, TRI_PAIRS, TriangleParams, TriangleRest, triangle_fast};
use crate::{ForceError, Material};

/// Minimum number of elements per rayon task.
const MIN_LEN: usize = 128;
/// Fixed chunk size of deterministic parallel energy sums.
const ENERGY_CHUNK: usize = 1024;

/// Fixed structure shared by a model and its evaluations.
#[derive(Debug)]
struct Structure {
    num_vertices: usize,
    num_triangles: usize,
    num_hinges: usize,
    entries: Vec<(usize, usize)>,
    /// CSR over vertices of element force slots (triangle t vertex a: 3t + a; hinge h vertex a:
    /// 3T + 4h + a), ascending.
    slot_start: Vec<usize>,
    slots: Vec<usize>,
    /// CSR over vertices of (entry, other vertex, transposed) for df/dx products, ascending entry.
    mul_start: Vec<usize>,
    mul: Vec<(usize, usize, bool)>,
}

impl Structure {
    fn new(n: usize, tris: &[[usize; 3]], hinges: &[[usize; 4]]) -> Self {
        let mut entries = Vec::with_capacity(6 * tris.len() + 10 * hinges.len() + n);
        for t in tris {
            entries.extend(TRI_PAIRS.iter().map(|&(a, b)| (t[a], t[b])));
        }
        for h in hinges {
            entries.extend(HINGE_PAIRS.iter().map(|&(a, b)| (h[a], h[b])));
        }
        entries.extend((0..n).map(|i| (i, i)));
        let mut owner: Vec<(usize, usize)> = Vec::with_capacity(3 * tris.len() + 4 * hinges.len());
        for (t, tri) in tris.iter().enumerate() {
            owner.extend((0..3).map(|a| (tri[a], 3 * t + a)));
        }
        let base = 3 * tris.len();
        for (h, hv) in hinges.iter().enumerate() {
            owner.extend((0..4).map(|a| (hv[a], base + 4 * h + a)));
        }
        let (slot_start, slots) = csr(n, owner);
        let mut m = Vec::with_capacity(2 * entries.len());
        for (k, &(i, j)) in entries.iter().enumerate() {
            m.push((i, (k, j, false)));
            if i != j {
                m.push((j, (k, i, true)));
            }
        }
        let (mul_start, mul) = csr(n, m);
        Self {
            num_vertices: n,
            num_triangles: tris.len(),
            num_hinges: hinges.len(),
            entries,
            slot_start,
            slots,
            mul_start,
            mul,
        }
    }
}

/// Stable CSR from (row, item) pairs, preserving input order within each row.
fn csr<T: Copy>(n: usize, items: Vec<(usize, T)>) -> (Vec<usize>, Vec<T>) {
    let mut start = vec![0usize; n + 1];
    for &(r, _) in &items {
        start[r + 1] += 1;
    }
    for r in 0..n {
        start[r + 1] += start[r];
    }
    let mut fill = start.clone();
    let mut out: Vec<Option<T>> = vec![None; items.len()];
    for (r, it) in items {
        out[fill[r]] = Some(it);
        fill[r] += 1;
    }
    (start, out.into_iter().flatten().collect())
}

/// Internal cloth forces of one mesh (Baraff & Witkin section 4): stretch and shear per
/// triangle, bend per hinge (interior edge), each with condition damping.
///
/// Built once from a [`ClothMesh`] and a [`Material`]; evaluation is stateless (positions and
/// velocities are passed in) and writes into a reusable [`Evaluation`].
#[derive(Clone, Debug)]
pub struct ClothModel {
    tris: Vec<[usize; 3]>,
    tri_rest: Vec<TriangleRest>,
    hinges: Vec<[usize; 4]>,
    hinge_rest: Vec<HingeRest>,
    material: Material,
    definiteness: Definiteness,
    masses: Vec<f64>,
    vertex_areas: Vec<f64>,
    structure: Arc<Structure>,
}

/// Forces and Jacobian blocks at one state, with storage reused across calls.
///
/// Entries are listed once per element-local vertex pair (a <= b) in a FIXED order independent
/// of positions and velocities: 6 per triangle (stretch + shear of that triangle, local pairs
/// (0,0),(0,1),(0,2),(1,1),(1,2),(2,2) of its vertices), then 10 per hinge (local pairs of
/// `[v0, v1, v2, v3]`), then one diagonal entry (i, i) per vertex (zero from the internal model;
/// used by [`crate::External`]). Callers can precompute where each entry goes once.
#[derive(Clone, Debug, Default)]
pub struct Evaluation {
    /// Force per vertex (N): internal elastic + damping (+ external if accumulated).
    pub forces: Vec<Vec3>,
    /// Elastic energy (J) of the internal model at the evaluated positions.
    pub energy: f64,
    structure: Option<Arc<Structure>>,
    dfdx: Vec<Matrix3<f64>>,
    dfdv: Vec<Matrix3<f64>>,
    slot_forces: Vec<Vec3>,
    elem_energy: Vec<f64>,
}

impl Evaluation {
    /// `(i, j)` of every entry; entry k contributes block `dfdx()[k]` (and `dfdv()[k]`) to
    /// (i, j) and its transpose to (j, i) when i != j. Empty before the first evaluation.
    pub fn entries(&self) -> &[(usize, usize)] {
        self.structure.as_ref().map_or(&[], |s| &s.entries)
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
                for &(k, j, tr) in &s.mul[s.mul_start[i]..s.mul_start[i + 1]] {
                    acc += if tr {
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

impl ClothModel {
    /// Precomputes rest data (inverse (u, v) edge matrices, areas, hinge stiffnesses
    /// `k_e = D |e|^2/(A1 + A2) * (k_u du^2 + k_v dv^2)/(du^2 + dv^2)`), flat rest angles, and
    /// lumped masses. Fails on an invalid material or a degenerate rest triangle/hinge.
    pub fn new(
        mesh: &ClothMesh,
        material: &Material,
        definiteness: Definiteness,
    ) -> Result<Self, ForceError> {
        material.validate()?;
        let rest = mesh.rest();
        let tris = mesh.triangles().to_vec();
        let mut tri_rest = Vec::with_capacity(tris.len());
        for (t, tri) in tris.iter().enumerate() {
            let r = TriangleRest::new([rest[tri[0]], rest[tri[1]], rest[tri[2]]]).ok_or(
                ForceError::DegenerateTriangle {
                    triangle: t,
                    vertices: *tri,
                    area: mesh.rest_area(t),
                },
            )?;
            tri_rest.push(r);
        }
        let mut hinges = Vec::with_capacity(mesh.hinges().len());
        let mut hinge_rest = Vec::with_capacity(mesh.hinges().len());
        for (h, hg) in mesh.hinges().iter().enumerate() {
            let d = rest[hg.v[1]] - rest[hg.v[0]];
            let le2 = d.norm_squared();
            let a = tri_rest[hg.tris[0]].area + tri_rest[hg.tris[1]].area;
            if !(le2 > 0.0 && a > 0.0 && le2.is_finite()) {
                return Err(ForceError::DegenerateHinge {
                    hinge: h,
                    vertices: hg.v,
                });
            }
            let w = (material.bend_uv[0] * d.x * d.x + material.bend_uv[1] * d.y * d.y) / le2;
            hinges.push(hg.v);
            hinge_rest.push(HingeRest {
                stiffness: material.bend * le2 / a * w,
                rest_angle: 0.0,
                rest_edge_sq: le2,
            });
        }
        let masses = mesh.vertex_masses(material.density)?;
        let vertex_areas = mesh.vertex_masses(1.0)?;
        let structure = Arc::new(Structure::new(mesh.num_vertices(), &tris, &hinges));
        Ok(Self {
            tris,
            tri_rest,
            hinges,
            hinge_rest,
            material: *material,
            definiteness,
            masses,
            vertex_areas,
            structure,
        })
    }

    /// Number of vertices.
    pub fn num_vertices(&self) -> usize {
        self.structure.num_vertices
    }

    /// Number of triangles (stretch + shear elements).
    pub fn num_triangles(&self) -> usize {
        self.structure.num_triangles
    }

    /// Number of hinges (bend elements), in `ClothMesh::hinges()` order.
    pub fn num_hinges(&self) -> usize {
        self.structure.num_hinges
    }

    /// The material the model was built with.
    pub fn material(&self) -> &Material {
        &self.material
    }

    /// The definiteness treatment of df/dx.
    pub fn definiteness(&self) -> Definiteness {
        self.definiteness
    }

    /// Changes the definiteness treatment (entries are unaffected).
    pub fn set_definiteness(&mut self, d: Definiteness) {
        self.definiteness = d;
    }

    /// Lumped vertex masses (kg): density * rest area / 3 per incident triangle.
    pub fn masses(&self) -> &[f64] {
        &self.masses
    }

    /// Lumped vertex areas (m^2): rest area / 3 per incident triangle.
    pub fn vertex_areas(&self) -> &[f64] {
        &self.vertex_areas
    }

    /// Triangles (vertex indices) in mesh order.
    pub fn triangles(&self) -> &[[usize; 3]] {
        &self.tris
    }

    /// Rest data per triangle.
    pub fn triangle_rest(&self) -> &[TriangleRest] {
        &self.tri_rest
    }

    /// Hinge stencils `[v0, v1, v2, v3]` in `ClothMesh::hinges()` order.
    pub fn hinge_vertices(&self) -> &[[usize; 4]] {
        &self.hinges
    }

    /// Rest data per hinge (stiffness N*m/rad^2, rest angle rad).
    pub fn hinge_rest(&self) -> &[HingeRest] {
        &self.hinge_rest
    }

    /// Rest dihedral angles (rad), one per hinge.
    pub fn rest_angles(&self) -> Vec<f64> {
        self.hinge_rest.iter().map(|h| h.rest_angle).collect()
    }

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
        Ok(())
    }

    /// Checks that `x` has one finite position per vertex; the error names the first bad vertex.
    pub fn check_positions(&self, x: &[Vec3]) -> Result<(), ForceError> {
        check(x, self.num_vertices(), "positions")
    }

    /// Checks positions and velocities (lengths, finiteness) before [`ClothModel::evaluate`].
    pub fn check_state(&self, x: &[Vec3], v: &[Vec3]) -> Result<(), ForceError> {
        check(x, self.num_vertices(), "positions")?;
        check(v, self.num_vertices(), "velocities")
    }

    fn tri_gather(&self, t: usize, x: &[Vec3]) -> [Vec3; 3] {
        let [i, j, k] = self.tris[t];
        [x[i], x[j], x[k]]
    }

    fn hinge_gather(&self, h: usize, x: &[Vec3]) -> [Vec3; 4] {
        let [a, b, c, d] = self.hinges[h];
        [x[a], x[b], x[c], x[d]]
    }

    fn triangle_response(
        &self,
        t: usize,
        x: &[Vec3],
        v: &[Vec3],
        def: Definiteness,
        out: &mut ElementResponse<3>,
    ) {
        let m = &self.material;
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

    fn hinge_response(
        &self,
        h: usize,
        x: &[Vec3],
        v: &[Vec3],
        def: Definiteness,
        out: &mut ElementResponse<4>,
    ) {
        let r = &self.hinge_rest[h];
        if r.stiffness == 0.0 {
            return;
        }
        let k = [r.stiffness];
        let kd = [self.material.bend_damping * r.stiffness];
        respond(
            &Bend::new(r, self.hinge_gather(h, x)),
            &k,
            &kd,
            &self.hinge_gather(h, v),
            def,
            out,
        );
    }

    /// Response of triangle `t` (stretch + shear) alone, element-local, through the generic
    /// condition routine (reference path; [`ClothModel::evaluate`] uses an equivalent F-space
    /// fast path, tested equal).
    pub fn triangle_element(&self, t: usize, x: &[Vec3], v: &[Vec3]) -> ElementResponse<3> {
        let mut out = ElementResponse::zero();
        self.triangle_response(t, x, v, self.definiteness, &mut out);
        out
    }

    /// Response of hinge `h` (bend) alone, element-local, through the generic condition routine
    /// (reference path; tested equal to [`ClothModel::evaluate`]).
    pub fn hinge_element(&self, h: usize, x: &[Vec3], v: &[Vec3]) -> ElementResponse<4> {
        let mut out = ElementResponse::zero();
        self.hinge_response(h, x, v, self.definiteness, &mut out);
        out
    }

    /// Elastic energy (J) at positions `x` (m): stretch + shear + bend. Deterministic parallel
    /// sum (fixed chunks, partial sums added in order).
    ///
    /// # Panics
    /// If `x.len() < num_vertices()` (check with [`ClothModel::check_positions`]).
    pub fn energy(&self, x: &[Vec3]) -> f64 {
        let m = &self.material;
        let tri: Vec<f64> = chunk_ranges(self.tris.len())
            .map(|c| {
                c.map(|t| {
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
        let hin: Vec<f64> = chunk_ranges(self.hinges.len())
            .map(|c| {
                c.map(|h| {
                    let r = &self.hinge_rest[h];
                    let d = wrap_angle(dihedral_angle(&self.hinge_gather(h, x)) - r.rest_angle);
                    0.5 * r.stiffness * d * d
                })
                .sum::<f64>()
            })
            .collect();
        tri.iter().chain(&hin).sum()
    }

    /// Internal elastic + damping forces and Jacobians at positions `x` (m) and velocities `v`
    /// (m/s), written into `out` (buffers resized on first use, then reused: no allocation).
    /// Parallel over elements and vertices (rayon); the result is bitwise identical for any
    /// thread count. Overwrites everything in `out`, including the per-vertex diagonal entries
    /// (set to zero).
    ///
    /// Non-finite inputs give non-finite outputs: validate untrusted state with
    /// [`ClothModel::check_state`] (it names the offending vertex).
    ///
    /// `par` chooses the threads ([`Par`]); the result does not depend on it.
    ///
    /// # Panics
    /// If `x` or `v` is shorter than `num_vertices()` (check with [`ClothModel::check_state`]).
    pub fn evaluate(&self, x: &[Vec3], v: &[Vec3], out: &mut Evaluation, par: Par) {
        par.install(|| self.evaluate_on_current_pool(x, v, out));
    }

    fn evaluate_on_current_pool(&self, x: &[Vec3], v: &[Vec3], out: &mut Evaluation) {
        let s = &self.structure;
        if !out.structure.as_ref().is_some_and(|o| Arc::ptr_eq(o, s)) {
            out.structure = Some(Arc::clone(s));
            let ne = s.entries.len();
            out.dfdx.resize(ne, Matrix3::zeros());
            out.dfdv.resize(ne, Matrix3::zeros());
            out.slot_forces
                .resize(3 * s.num_triangles + 4 * s.num_hinges, Vec3::zeros());
            out.elem_energy.resize(s.num_triangles + s.num_hinges, 0.0);
            out.forces.resize(s.num_vertices, Vec3::zeros());
        }
        let nt = s.num_triangles;
        let nh = s.num_hinges;
        let def = self.definiteness;
        let m = &self.material;
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
        let (tx, rest_x) = out.dfdx.split_at_mut(6 * nt);
        let (hx, dx) = rest_x.split_at_mut(10 * nh);
        let (tv, rest_v) = out.dfdv.split_at_mut(6 * nt);
        let (hv, dv) = rest_v.split_at_mut(10 * nh);
        let (tf, hf) = out.slot_forces.split_at_mut(3 * nt);
        let (te, he) = out.elem_energy.split_at_mut(nt);
        tx.par_chunks_mut(6)
            .zip(tv.par_chunks_mut(6))
            .zip(tf.par_chunks_mut(3))
            .zip(te.par_iter_mut())
            .enumerate()
            .with_min_len(MIN_LEN)
            .for_each(|(t, (((bx, bv), f), e))| {
                if def == Definiteness::Projected {
                    let mut r = ElementResponse::zero();
                    self.triangle_response(t, x, v, def, &mut r);
                    for (k, &(a, b)) in TRI_PAIRS.iter().enumerate() {
                        bx[k] = r.dfdx[a][b];
                        bv[k] = r.dfdv[a][b];
                    }
                    f.copy_from_slice(&r.forces);
                    *e = r.energy;
                } else {
                    let (xs, vs) = (self.tri_gather(t, x), self.tri_gather(t, v));
                    *e = triangle_fast(
                        &self.tri_rest[t],
                        &xs,
                        &vs,
                        &tp,
                        def == Definiteness::Clamped,
                        ElementSlots {
                            dfdx: bx,
                            dfdv: bv,
                            forces: f,
                        },
                    );
                }
            });
        hx.par_chunks_mut(10)
            .zip(hv.par_chunks_mut(10))
            .zip(hf.par_chunks_mut(4))
            .zip(he.par_iter_mut())
            .enumerate()
            .with_min_len(MIN_LEN)
            .for_each(|(h, (((bx, bv), f), e))| {
                let hr = &self.hinge_rest[h];
                if def == Definiteness::Clamped || hr.stiffness == 0.0 {
                    let (xs, vs) = (self.hinge_gather(h, x), self.hinge_gather(h, v));
                    let kd = self.material.bend_damping * hr.stiffness;
                    *e = hinge_fast_gauss_newton(
                        hr,
                        xs,
                        &vs,
                        hr.stiffness,
                        kd,
                        ElementSlots {
                            dfdx: bx,
                            dfdv: bv,
                            forces: f,
                        },
                    );
                    return;
                }
                let mut r = ElementResponse::zero();
                self.hinge_response(h, x, v, def, &mut r);
                for (k, &(a, b)) in HINGE_PAIRS.iter().enumerate() {
                    bx[k] = r.dfdx[a][b];
                    bv[k] = r.dfdv[a][b];
                }
                f.copy_from_slice(&r.forces);
                *e = r.energy;
            });
        dx.par_iter_mut().zip(dv.par_iter_mut()).for_each(|(a, b)| {
            *a = Matrix3::zeros();
            *b = Matrix3::zeros();
        });
        let slot_forces = &out.slot_forces;
        out.forces
            .par_iter_mut()
            .enumerate()
            .with_min_len(256)
            .for_each(|(i, f)| {
                let mut acc = Vec3::zeros();
                for &k in &s.slots[s.slot_start[i]..s.slot_start[i + 1]] {
                    acc += slot_forces[k];
                }
                *f = acc;
            });
        out.energy = out.elem_energy.iter().sum();
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

/// Parallel iterator over fixed ranges of `ENERGY_CHUNK` indices covering `0..n`, in order.
fn chunk_ranges(n: usize) -> impl IndexedParallelIterator<Item = std::ops::Range<usize>> {
    (0..n.div_ceil(ENERGY_CHUNK))
        .into_par_iter()
        .map(move |c| c * ENERGY_CHUNK..((c + 1) * ENERGY_CHUNK).min(n))
}

fn check(x: &[Vec3], n: usize, what: &'static str) -> Result<(), ForceError> {
    if x.len() != n {
        return Err(ForceError::LengthMismatch {
            what,
            expected: n,
            got: x.len(),
        });
    }
    if let Some(i) = x
        .iter()
        .position(|p| !(p.x.is_finite() && p.y.is_finite() && p.z.is_finite()))
    {
        let what = if what == "positions" {
            "position of vertex"
        } else {
            "velocity of vertex"
        };
        return Err(ForceError::NonFinite { what, index: i });
    }
    Ok(())
}
