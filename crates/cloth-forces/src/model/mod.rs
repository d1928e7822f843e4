//! The force model of a whole mesh: rest data per triangle and hinge, parallel deterministic
//! evaluation into an [`Evaluation`] with a fixed entry order.
//!
//! [`ClothModel`] (this file) holds the rest data and runs [`ClothModel::evaluate`]; the
//! pieces live beside it:
//! * `pattern`: the fixed block structure of an evaluation (entries, element-to-entry codes,
//!   colourings, the CSR of the df/dx products);
//! * `buffers`: [`Evaluation`], the forces and Jacobian blocks with their reusable storage;
//! * `rest`: the rest-data builders (triangles, hinges, shape-operator stencils, the midedge
//!   split system) and `adjust`: rest angles and clamped vertices changed after construction;
//! * `triangle_pass`, `hinge_pass`, `shape_pass`: one element pass each (stretch and shear,
//!   hinge bending, shape-operator bending);
//! * `energy`: the elastic energy alone.

mod adjust;
mod buffers;
mod energy;
mod hinge_pass;
mod pattern;
mod rest;
mod shape_pass;
mod triangle_pass;

use std::sync::Arc;

use cloth_mesh::{ClothMesh, Par};
use nalgebra::Matrix3;
use rayon::prelude::*;

use self::pattern::Structure;
use self::rest::{BendRef, BendRest, check_materials, hinge_rests, make_split, shape_rests};
use crate::bend::HingeRest;
use crate::condition::{Definiteness, Vec3};
use crate::scatter::{Accumulator, TRANSPOSED};
use crate::shape::ShapeRest;
use crate::split::EdgeSplit;
use crate::triangle::TriangleRest;
use crate::{BendModel, ForceError, Material};

pub use self::buffers::Evaluation;

/// Internal cloth forces of one mesh (Baraff & Witkin section 4): stretch and shear per
/// triangle, bend per hinge (interior edge, [`BendModel::Hinge`]) or per triangle and its
/// flaps ([`BendModel::ShapeOperator`], the default), each with condition damping.
///
/// Built once from a [`ClothMesh`] and a [`Material`]; evaluation is stateless (positions and
/// velocities are passed in) and writes into a reusable [`Evaluation`].
#[derive(Clone, Debug)]
pub struct ClothModel {
    tris: Vec<[usize; 3]>,
    tri_rest: Vec<TriangleRest>,
    hinges: Vec<[usize; 4]>,
    hinge_rest: Vec<HingeRest>,
    /// Shape-operator stencils `[p0, p1, p2, q0, q1, q2]` per triangle (a missing flap q_i is
    /// stored as p_i); empty under the hinge model.
    shape_stencils: Vec<[usize; 6]>,
    shape_rest: Vec<ShapeRest>,
    /// Per triangle, bit i set where [`ClothModel::set_clamped_vertices`] doubled column i of
    /// its `shape_rest` weights: halving those columns gives the free weights back exactly
    /// (a power of two), so they need no second copy (72 bytes per triangle).
    shape_doubled: Vec<u8>,
    /// Hinge across edge i of each triangle (`usize::MAX` on a boundary edge); empty under the
    /// hinge model.
    shape_hinges: Vec<[usize; 3]>,
    /// The midedge split system of the shape-operator model (`None` under the hinge model or
    /// without bending), see the `split` module.
    split: Option<Arc<EdgeSplit>>,
    /// The materials; triangle t uses `materials[tri_material[t]]`.
    materials: Vec<Material>,
    tri_material: Vec<usize>,
    /// Material of each hinge (that of its first triangle).
    hinge_material: Vec<usize>,
    definiteness: Definiteness,
    masses: Vec<f64>,
    vertex_areas: Vec<f64>,
    structure: Arc<Structure>,
}

impl ClothModel {
    /// Precomputes rest data (inverse (u, v) edge matrices, areas, hinge stiffnesses
    /// `k_e = D |e|^2/(A1 + A2) * (k_u du^2 + k_v dv^2)/(du^2 + dv^2)`), flat rest angles, and
    /// lumped masses, for one material everywhere. Fails on an invalid material or a
    /// degenerate rest triangle/hinge.
    ///
    /// Rest shapes come from the mesh's per-corner rest coordinates
    /// ([`ClothMesh::triangle_rest`]); where two triangles see their shared edge in different
    /// (u, v) frames (UV seams, triangles flattened one by one), bend stencils are unfolded
    /// with [`ClothMesh::flap_rest`] and the hinge's `|e|^2` and `bend_uv` weight are the means
    /// over both triangles.
    pub fn new(
        mesh: &ClothMesh,
        material: &Material,
        definiteness: Definiteness,
    ) -> Result<Self, ForceError> {
        Self::with_materials(
            mesh,
            std::slice::from_ref(material),
            &vec![0; mesh.num_triangles()],
            definiteness,
        )
    }

    /// As [`ClothModel::new`] with a material per triangle: triangle `t` uses
    /// `materials[material_of_triangle[t]]` for stretch, shear, their damping, its lumped
    /// mass (density) and, under [`BendModel::ShapeOperator`], its bend element; a hinge uses
    /// the material of its first triangle (`Hinge::tris[0]`). Several cloths joined into one
    /// mesh ([`ClothMesh::concat`]) each keep their material this way.
    ///
    /// Errors: `materials` empty or an invalid material
    /// ([`ForceError::InvalidMaterial`]), `material_of_triangle` not one entry per triangle
    /// or an index out of range ([`ForceError::LengthMismatch`],
    /// [`ForceError::MaterialIndex`]), materials with different bend models
    /// ([`ForceError::InvalidMaterial`] on `bend_model`), degenerate rest data.
    pub fn with_materials(
        mesh: &ClothMesh,
        materials: &[Material],
        material_of_triangle: &[usize],
        definiteness: Definiteness,
    ) -> Result<Self, ForceError> {
        check_materials(mesh, materials, material_of_triangle)?;
        let tris = mesh.triangles().to_vec();
        let mut tri_rest = Vec::with_capacity(tris.len());
        for (t, tri) in tris.iter().enumerate() {
            let r =
                TriangleRest::new(mesh.triangle_rest(t)).ok_or(ForceError::DegenerateTriangle {
                    triangle: t,
                    vertices: *tri,
                    area: mesh.rest_area(t),
                })?;
            tri_rest.push(r);
        }
        let hinge_material: Vec<usize> = mesh
            .hinges()
            .iter()
            .map(|h| material_of_triangle[h.tris[0]])
            .collect();
        let bend_model = materials[0].bend_model;
        let (hinges, hinge_rest) = hinge_rests(mesh, &tri_rest, materials, &hinge_material)?;
        let mut bend = BendRest {
            hinges,
            hinge_rest,
            shape_stencils: Vec::new(),
            shape_rest: Vec::new(),
            shape_hinges: Vec::new(),
        };
        let mut split = None;
        if bend_model == BendModel::ShapeOperator {
            shape_rests(mesh, materials, material_of_triangle, &mut bend)?;
            let r = BendRef {
                hinges: &bend.hinges,
                shape_stencils: &bend.shape_stencils,
                shape_rest: &bend.shape_rest,
                shape_hinges: &bend.shape_hinges,
            };
            split = make_split(r, materials, material_of_triangle, &[]);
        }
        let mut masses = vec![0.0; mesh.num_vertices()];
        for ((tri, &a), &m) in tris.iter().zip(mesh.rest_areas()).zip(material_of_triangle) {
            let share = materials[m].density * a / 3.0;
            for &v in tri {
                masses[v] += share;
            }
        }
        let vertex_areas = mesh.vertex_masses(1.0)?;
        let structure = Arc::new(Structure::for_model(
            mesh.num_vertices(),
            &tris,
            &bend.hinges,
            &bend.shape_stencils,
            bend_model,
            definiteness,
        ));
        Ok(Self {
            tris,
            tri_rest,
            hinges: bend.hinges,
            hinge_rest: bend.hinge_rest,
            shape_stencils: bend.shape_stencils,
            shape_doubled: vec![0; bend.shape_rest.len()],
            shape_rest: bend.shape_rest,
            shape_hinges: bend.shape_hinges,
            split,
            materials: materials.to_vec(),
            tri_material: material_of_triangle.to_vec(),
            hinge_material,
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
        self.hinges.len()
    }

    /// The material the model was built with (with several, see
    /// [`ClothModel::with_materials`], the first).
    pub fn material(&self) -> &Material {
        &self.materials[0]
    }

    /// Every material of the model; triangle `t` uses
    /// `materials()[material_of_triangle()[t]]`.
    pub fn materials(&self) -> &[Material] {
        &self.materials
    }

    /// Index into [`ClothModel::materials`] of each triangle's material.
    pub fn material_of_triangle(&self) -> &[usize] {
        &self.tri_material
    }

    /// The definiteness treatment of df/dx.
    pub fn definiteness(&self) -> Definiteness {
        self.definiteness
    }

    /// Changes the definiteness treatment. Entries are unaffected except under
    /// [`BendModel::ShapeOperator`] when switching between `Clamped` (12 entries per bend
    /// element) and `Exact`/`Projected` (21, see [`Evaluation`]).
    pub fn set_definiteness(&mut self, d: Definiteness) {
        let wide = |d: Definiteness| d != Definiteness::Clamped;
        let rebuild =
            self.bend_model() == BendModel::ShapeOperator && wide(d) != wide(self.definiteness);
        self.definiteness = d;
        if rebuild {
            self.structure = Arc::new(Structure::for_model(
                self.num_vertices(),
                &self.tris,
                &self.hinges,
                &self.shape_stencils,
                self.bend_model(),
                d,
            ));
        }
    }

    /// The bend model (from the materials, which share it).
    pub fn bend_model(&self) -> BendModel {
        self.materials[0].bend_model
    }

    /// Shape-operator stencils `[p0, p1, p2, q0, q1, q2]`, one per triangle in mesh order
    /// (triangle vertices, then the flap vertex across edge i = (p_{i+1}, p_{i+2}); a boundary
    /// edge's slot repeats p_i and carries no force). Empty under [`BendModel::Hinge`].
    pub fn shape_stencils(&self) -> &[[usize; 6]] {
        &self.shape_stencils
    }

    /// Shape-operator rest data, one per triangle. Empty under [`BendModel::Hinge`].
    pub fn shape_rest(&self) -> &[ShapeRest] {
        &self.shape_rest
    }

    /// Sorted, unique off-diagonal vertex pairs `(i, j)`, `i < j`, of this model's entries:
    /// the 3x3 blocks its df/dx and df/dv can fill. Equal to (a subset of)
    /// `ClothMesh::vertex_pairs` except for [`BendModel::ShapeOperator`] under `Exact` or
    /// `Projected`, which adds the flap-flap pairs of every triangle.
    pub fn vertex_pairs(&self) -> Vec<(usize, usize)> {
        let s = &self.structure.entries;
        s.iter().filter(|(i, j)| i != j).copied().collect()
    }

    /// Number of entries (blocks) of this model's evaluations: its vertex pairs and one
    /// diagonal per vertex.
    pub fn num_entries(&self) -> usize {
        self.structure.entries.len()
    }

    /// Entry of vertex i's diagonal block (i, i).
    pub(crate) fn diagonal_entry(&self, i: usize) -> usize {
        self.structure.row_start[i]
    }

    /// Entries of triangle t's 6 local pairs (their blocks may be stored transposed).
    pub(crate) fn triangle_entries(&self, t: usize) -> [usize; 6] {
        let p = self.structure.tri_pairs(t);
        std::array::from_fn(|k| (p[k] & !TRANSPOSED) as usize)
    }

    /// Whether `out` holds an evaluation of this model's structure.
    pub(crate) fn evaluated(&self, out: &Evaluation) -> bool {
        (out.structure.as_ref()).is_some_and(|o| Arc::ptr_eq(o, &self.structure))
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
            out.dfdx.resize(s.entries.len(), Matrix3::zeros());
            out.dfdv.resize(s.entries.len(), Matrix3::zeros());
            out.forces.resize(s.num_vertices, Vec3::zeros());
            let chunks = s.tri_colors.num_chunks() + s.bend_colors.num_chunks();
            out.chunk_energy.resize(chunks, 0.0);
        }
        let zero = |b: &mut Matrix3<f64>| *b = Matrix3::zeros();
        out.dfdx.par_iter_mut().with_min_len(4096).for_each(zero);
        out.dfdv.par_iter_mut().with_min_len(4096).for_each(zero);
        (out.forces.par_iter_mut().with_min_len(4096)).for_each(|f| *f = Vec3::zeros());
        let shape = self.bend_model() == BendModel::ShapeOperator;
        if shape {
            self.shape_prepass(x, out);
        }
        let Evaluation {
            dfdx,
            dfdv,
            forces,
            hinge_angles,
            split_psi,
            chunk_energy,
            ..
        } = out;
        let psi = self.split.as_ref().map(|_| &split_psi[..]);
        let acc = Accumulator::new(&s.entries, dfdx, dfdv, forces);
        let (tri, bend) = chunk_energy.split_at_mut(s.tri_colors.num_chunks());
        if shape && self.definiteness == Definiteness::Clamped {
            // One pass: each triangle's stretch, shear and bend blocks are summed before they
            // reach the pairs (their triangle-triangle pairs are the same).
            tri.fill(0.0);
            self.shape_clamped_pass(x, v, hinge_angles, psi, &acc, bend);
        } else {
            self.triangle_pass(x, v, &acc, tri);
            if shape {
                self.shape_pass(x, v, psi, &acc, bend);
            } else {
                self.hinge_pass(x, v, &acc, bend);
            }
        }
        out.energy = chunk_energy.iter().sum();
    }
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
