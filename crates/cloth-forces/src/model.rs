//! The force model of a whole mesh: rest data per triangle and hinge, parallel deterministic
//! evaluation into an [`Evaluation`] with a fixed entry order.

use std::sync::Arc;

use cloth_mesh::{ClothMesh, Par};
use nalgebra::Matrix3;
use rayon::prelude::*;

use crate::bend::{
    Bend, HINGE_PAIRS, HingeRest, dihedral_angle, hinge_fast_gauss_newton, wrap_angle,
};
use crate::condition::{
    Blocks, Definiteness, ElementResponse, ElementSlots, Kernel, Vec3, respond,
};
use crate::scatter::{Accumulator, Coloring, TRANSPOSED};
use crate::shape::{
    SHAPE_PAIRS_FLAP, SHAPE_PAIRS_WIDE, Shape, ShapeRest, drop_flap_pairs, flap_matrix,
    midedge_map, shape_energy,
};
use crate::split::{EdgeSplit, SplitScratch, hinges_of};
use crate::triangle::{Shear, Stretch, TRI_PAIRS, TriangleParams, TriangleRest, triangle_fast};
use crate::{BendModel, ForceError, Material};

/// Minimum number of elements per rayon task.
const MIN_LEN: usize = 128;
/// Fixed chunk size of deterministic parallel energy sums.
const ENERGY_CHUNK: usize = 1024;

/// The bend elements of a structure: hinges (4 vertices, 10 entries) or shape-operator
/// triangles (6 vertices; 12 entries, the pairs with a flap but no flap-flap pair, or all 21).
enum BendLayout<'a> {
    Hinge(&'a [[usize; 4]]),
    Shape {
        stencils: &'a [[usize; 6]],
        wide: bool,
    },
}

/// Triangles per chunk of the colour-ordered evaluation (see the `scatter` module).
const TRI_CHUNK: usize = 256;
/// Bend elements per chunk.
const BEND_CHUNK: usize = 128;

/// Fixed structure shared by a model and its evaluations.
#[derive(Debug)]
struct Structure {
    num_vertices: usize,
    num_triangles: usize,
    /// Entries per bend element (10 hinge, 12 or 21 shape).
    bend_entries: usize,
    /// The evaluation's blocks: every vertex pair (i, j), i <= j, that an element couples, and
    /// (i, i) for every vertex, sorted; row i starts at `row_start[i]` with its diagonal.
    entries: Vec<(usize, usize)>,
    row_start: Vec<usize>,
    /// Block of each element entry (6 per triangle, then `bend_entries` per bend element), with
    /// [`TRANSPOSED`] when the element's pair (i, j) has i > j.
    elem_pair: Vec<u32>,
    /// Chunk colourings of the triangles and of the bend elements.
    tri_colors: Coloring,
    bend_colors: Coloring,
    /// CSR over vertices of `[block | TRANSPOSED, other vertex]` for df/dx products, ascending
    /// block (row i's own blocks, then the blocks (j, i) of rows j < i, transposed).
    mul_start: Vec<usize>,
    mul: Vec<[u32; 2]>,
}

impl Structure {
    fn new(n: usize, tris: &[[usize; 3]], bend: BendLayout<'_>) -> Self {
        let (pairs, nb, bend_colors): (&[(usize, usize)], _, _) = match bend {
            BendLayout::Hinge(h) => (&HINGE_PAIRS, h.len(), Coloring::new(n, h, BEND_CHUNK)),
            BendLayout::Shape { stencils, wide } => (
                if wide {
                    &SHAPE_PAIRS_WIDE
                } else {
                    &SHAPE_PAIRS_FLAP
                },
                stencils.len(),
                Coloring::new(n, stencils, BEND_CHUNK),
            ),
        };
        // Vertex pairs of the element entries, in entry order.
        let stencil = |e: usize| -> &[usize] {
            match bend {
                BendLayout::Hinge(h) => &h[e],
                BendLayout::Shape { stencils, .. } => &stencils[e],
            }
        };
        let elem_vertices = || {
            let tri = tris
                .iter()
                .flat_map(|t| TRI_PAIRS.iter().map(|&(a, b)| (t[a], t[b])));
            let bend = (0..nb).flat_map(move |e| {
                pairs
                    .iter()
                    .map(move |&(a, b)| (stencil(e)[a], stencil(e)[b]))
            });
            tri.chain(bend)
        };
        // Entry and vertex indices fit 31 and 32 bits: a mesh with 2^31 blocks (hundreds of
        // millions of vertices) would need over 300 GB for its Jacobians; the `cloth` command's
        // budget refuses it, and a direct caller runs out of memory before reaching these.
        let index = |k: usize| u32::try_from(k).expect("block or vertex index within u32");
        // Half the bytes of usize pairs while the repeats are still in (the construction's
        // peak).
        let mut all: Vec<(u32, u32)> = elem_vertices()
            .map(|(i, j)| (index(i.min(j)), index(i.max(j))))
            .chain((0..n).map(|i| (index(i), index(i))))
            .collect();
        all.sort_unstable();
        all.dedup();
        let entries: Vec<(usize, usize)> = all
            .into_iter()
            .map(|(i, j)| (i as usize, j as usize))
            .collect();
        assert!(entries.len() < 1 << 31, "blocks exceed 2^31");
        let mut row_start = vec![0usize; n + 1];
        for &(i, _) in &entries {
            row_start[i + 1] += 1;
        }
        for r in 0..n {
            row_start[r + 1] += row_start[r];
        }
        let find = |i: usize, j: usize| -> u32 {
            // The colour-ordered evaluation's safety rests on this: an element's codes name
            // pairs of its own vertices.
            let k = locate(&entries, &row_start, i, j).expect("every element pair is an entry");
            index(k) | if i > j { TRANSPOSED } else { 0 }
        };
        let elem_pair: Vec<u32> = elem_vertices().map(|(i, j)| find(i, j)).collect();
        let mut m = Vec::with_capacity(2 * entries.len());
        for (k, &(i, j)) in entries.iter().enumerate() {
            m.push((i, [index(k), index(j)]));
            if i != j {
                m.push((j, [index(k) | TRANSPOSED, index(i)]));
            }
        }
        let (mul_start, mul) = csr(n, m);
        Self {
            num_vertices: n,
            num_triangles: tris.len(),
            bend_entries: pairs.len(),
            entries,
            row_start,
            elem_pair,
            tri_colors: Coloring::new(n, tris, TRI_CHUNK),
            bend_colors,
            mul_start,
            mul,
        }
    }

    /// Block codes of triangle t's 6 entries.
    fn tri_pairs(&self, t: usize) -> &[u32] {
        &self.elem_pair[6 * t..6 * t + 6]
    }

    /// Block codes of bend element e's entries.
    fn bend_pairs(&self, e: usize) -> &[u32] {
        let (base, k) = (6 * self.num_triangles, self.bend_entries);
        &self.elem_pair[base + k * e..base + k * (e + 1)]
    }

    /// Index of the block of pair (i, j) (either order), if the structure has it.
    fn find(&self, i: usize, j: usize) -> Option<usize> {
        locate(&self.entries, &self.row_start, i, j)
    }
}

/// Index of pair (min(i, j), max(i, j)) in sorted `entries` whose row r starts at
/// `row_start[r]`, if present.
fn locate(entries: &[(usize, usize)], row_start: &[usize], i: usize, j: usize) -> Option<usize> {
    let (a, b) = (i.min(j), i.max(j));
    let row = row_start.get(a..a + 2)?;
    let row = &entries[row[0]..row[1]];
    let k = row.partition_point(|&(_, c)| c < b);
    (row.get(k) == Some(&(a, b))).then(|| row_start[a] + k)
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

/// Forces and Jacobian blocks at one state, with storage reused across calls.
///
/// One block per vertex pair: the entries are every pair (i, j), i <= j, that an element
/// couples, and the diagonal (i, i) of every vertex, sorted (row i's pairs start with its
/// diagonal), fixed for a model and independent of positions and velocities. The elements'
/// blocks are summed into them as they are evaluated (about 7 blocks per vertex instead of
/// the elements' 37), in an order that does not depend on the thread count.
///
/// The elements: 6 local pairs per triangle (stretch + shear); then the bend elements:
/// [`BendModel::Hinge`]: 10 local pairs per hinge `[v0, v1, v2, v3]`;
/// [`BendModel::ShapeOperator`]: per triangle, local pairs of its stencil
/// `[p0, p1, p2, q0, q1, q2]` (see [`ClothModel::shape_stencils`]), 12 under
/// [`Definiteness::Clamped`] (the pairs with a flap, without the flap-flap pairs (3,4), (3,5),
/// (4,5), so every off-diagonal entry is in `ClothMesh::vertex_pairs`; the element's
/// triangle-triangle blocks add onto its triangle's pairs) and 21 under `Exact` and `Projected`
/// (the flap-flap pairs couple vertices outside the mesh pattern: build the matrix pattern
/// from [`ClothModel::vertex_pairs`]). The diagonal blocks carry no internal term of their own
/// beyond the elements' (i, i) blocks; [`crate::External`] adds to them. Callers can precompute
/// where each entry goes once.
#[derive(Clone, Debug, Default)]
pub struct Evaluation {
    /// Force per vertex (N): internal elastic + damping (+ external if accumulated).
    pub forces: Vec<Vec3>,
    /// Elastic energy (J) of the internal model at the evaluated positions.
    pub energy: f64,
    structure: Option<Arc<Structure>>,
    dfdx: Vec<Matrix3<f64>>,
    dfdv: Vec<Matrix3<f64>>,
    /// Energy per element chunk (the triangles' chunks, then the bend elements').
    chunk_energy: Vec<f64>,
    /// Shape-operator pre-pass: wrapped `theta - theta0` and its gradient per hinge.
    hinge_angles: Vec<(f64, [Vec3; 4])>,
    /// Shape-operator midedge split per hinge (see the `split` module), its right-hand side
    /// scratch and solve scratch.
    split_psi: Vec<f64>,
    split_dtheta: Vec<f64>,
    split_scratch: SplitScratch,
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

/// Rest data of the bend elements (hinges, and shape-operator elements when that model is on).
struct BendRest {
    hinges: Vec<[usize; 4]>,
    hinge_rest: Vec<HingeRest>,
    shape_stencils: Vec<[usize; 6]>,
    shape_rest: Vec<ShapeRest>,
    shape_hinges: Vec<[usize; 3]>,
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
        let structure = Arc::new(Self::structure_for(
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

    fn structure_for(
        n: usize,
        tris: &[[usize; 3]],
        hinges: &[[usize; 4]],
        stencils: &[[usize; 6]],
        model: BendModel,
        definiteness: Definiteness,
    ) -> Structure {
        let layout = match model {
            BendModel::Hinge => BendLayout::Hinge(hinges),
            BendModel::ShapeOperator => BendLayout::Shape {
                stencils,
                wide: definiteness != Definiteness::Clamped,
            },
        };
        Structure::new(n, tris, layout)
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
            self.structure = Arc::new(Self::structure_for(
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

    /// Response of triangle `t` (stretch + shear) alone, element-local, through the generic
    /// condition routine (reference path; [`ClothModel::evaluate`] uses an equivalent F-space
    /// fast path, tested equal).
    pub fn triangle_element(&self, t: usize, x: &[Vec3], v: &[Vec3]) -> ElementResponse<3> {
        let mut out = ElementResponse::zero();
        self.triangle_response(t, x, v, self.definiteness, &mut out);
        out
    }

    fn shape_gather(&self, t: usize, x: &[Vec3]) -> [Vec3; 6] {
        self.shape_stencils[t].map(|i| x[i])
    }

    /// The midedge split offsets of triangle `t`'s angles for the split `psi` (zero without a
    /// split system).
    fn split_offsets(&self, t: usize, psi: Option<&[f64]>) -> [f64; 3] {
        match (self.split.as_ref(), psi) {
            (Some(sp), Some(p)) => sp.offsets(t, p),
            _ => [0.0; 3],
        }
    }

    /// The midedge split per hinge at positions `x` (empty without a split system).
    fn split_at(&self, x: &[Vec3]) -> Vec<f64> {
        let mut psi = Vec::new();
        if let Some(sp) = &self.split {
            let dth: Vec<f64> = (0..self.hinges.len())
                .map(|h| {
                    let d = dihedral_angle(&self.hinge_gather(h, x));
                    wrap_angle(d - self.hinge_rest[h].rest_angle)
                })
                .collect();
            sp.solve(&dth, &mut psi, &mut SplitScratch::default());
        }
        psi
    }

    /// Bend rigidity (N m) of shape element `t`: its material's, 0 if the triangle is held
    /// flat ([`ClothModel::set_clamped_vertices`]).
    fn shape_rigidity(&self, t: usize) -> f64 {
        if self.split.as_ref().is_some_and(|s| s.is_rigid(t)) {
            0.0
        } else {
            self.materials[self.tri_material[t]].bend
        }
    }

    fn shape_response(
        &self,
        t: usize,
        x: &[Vec3],
        v: &[Vec3],
        def: Definiteness,
        offsets: [f64; 3],
        out: &mut ElementResponse<6>,
    ) {
        let m = &self.materials[self.tri_material[t]];
        let d = self.shape_rigidity(t);
        if d == 0.0 || self.bend_model() != BendModel::ShapeOperator {
            return;
        }
        let kd = m.bend_damping * d;
        let r = &self.shape_rest[t];
        respond(
            &Shape::new(r, &self.shape_gather(t, x)).with_offsets(offsets),
            &[d; 3],
            &[kd; 3],
            &self.shape_gather(t, v),
            def,
            out,
        );
        if def == Definiteness::Clamped {
            narrow(&mut out.dfdx, &r.flap_bary);
            narrow(&mut out.dfdv, &r.flap_bary);
        }
    }

    /// Response of shape-operator bend element `t` (triangle t and its flaps, stencil
    /// [`ClothModel::shape_stencils`]`[t]`) alone, element-local, through the generic
    /// condition routine (reference path; tested equal to [`ClothModel::evaluate`]). Under
    /// `Clamped` the flap-flap blocks are folded into the flap diagonal blocks as in
    /// `evaluate` (see [`Definiteness::Clamped`]). All zero under [`BendModel::Hinge`]. The
    /// midedge split (the `split` module) is solved from all of `x` first: a whole-mesh
    /// solve per call.
    ///
    /// # Panics
    /// If `t >= shape_stencils().len()` or `x`, `v` are shorter than the vertex count.
    pub fn shape_element(&self, t: usize, x: &[Vec3], v: &[Vec3]) -> ElementResponse<6> {
        let mut out = ElementResponse::zero();
        let psi = self.split_at(x);
        let offsets = self.split_offsets(t, Some(&psi));
        self.shape_response(t, x, v, self.definiteness, offsets, &mut out);
        out
    }

    /// Response of hinge `h` (bend) alone, element-local, through the generic condition routine
    /// (reference path; tested equal to [`ClothModel::evaluate`]). All zero unless the bend
    /// model is [`BendModel::Hinge`].
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

    /// Stretch and shear of every triangle into `acc`, the energy per chunk into `energy`.
    fn triangle_pass(&self, x: &[Vec3], v: &[Vec3], acc: &Accumulator<'_>, energy: &mut [f64]) {
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

    /// Every hinge's bending into `acc`, the energy per chunk into `energy`.
    fn hinge_pass(&self, x: &[Vec3], v: &[Vec3], acc: &Accumulator<'_>, energy: &mut [f64]) {
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

    /// Shape-operator pre-pass: the wrapped angle deviation and its gradient per hinge (into
    /// `out.hinge_angles`) and the midedge split for those angles (into `out.split_psi`).
    fn shape_prepass(&self, x: &[Vec3], out: &mut Evaluation) {
        let angles = &mut out.hinge_angles;
        angles.resize(self.hinges.len(), (0.0, [Vec3::zeros(); 4]));
        angles
            .par_iter_mut()
            .enumerate()
            .with_min_len(MIN_LEN)
            .for_each(|(h, o)| {
                let b = Bend::new(&self.hinge_rest[h], self.hinge_gather(h, x));
                *o = (b.value()[0], b.gradient()[0]);
            });
        if let Some(sp) = &self.split {
            out.split_dtheta.clear();
            out.split_dtheta.extend(angles.iter().map(|a| a.0));
            sp.solve(
                &out.split_dtheta,
                &mut out.split_psi,
                &mut out.split_scratch,
            );
        }
    }

    /// The stretch and shear element of triangle `t` (fast path, `Clamped` or `Exact`) into
    /// its 6 entry blocks and 3 force slots; returns its energy.
    fn triangle_fast_at(
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

    /// The shape-operator element of triangle `t` under `Clamped` (Gauss-Newton at a fixed
    /// split, [`shape_fast_gauss_newton`]) from the pre-pass's `angles` and split `psi`: its
    /// triangle-triangle blocks are added to `tri` (the triangle's own 6 entries, `[dfdx,
    /// dfdv]`), the rest written to `out` (12 entries, [`SHAPE_PAIRS_FLAP`], 6 force slots).
    /// Returns its energy.
    fn shape_clamped_at(
        &self,
        t: usize,
        v: &[Vec3],
        angles: &[(f64, [Vec3; 4])],
        psi: Option<&[f64]>,
        tri: [&mut [Matrix3<f64>]; 2],
        out: ElementSlots<'_>,
    ) -> f64 {
        let m = &self.materials[self.tri_material[t]];
        let (d, beta) = (self.shape_rigidity(t), m.bend_damping);
        // Angles and gradients from the hinge pre-pass, scattered onto the stencil (a hinge
        // seen from its second triangle lists the edge and the wings the other way round;
        // theta is symmetric).
        let st = &self.shape_stencils[t];
        let mut dth = [0.0; 3];
        let mut ga = [[Vec3::zeros(); 6]; 3];
        for i in 0..3 {
            let h = self.shape_hinges[t][i];
            if h == usize::MAX {
                continue;
            }
            let (th, g) = &angles[h];
            dth[i] = *th;
            let order = if self.hinges[h][2] == st[i] {
                [0, 1, 2, 3]
            } else {
                [1, 0, 3, 2]
            };
            for a in 0..4 {
                ga[i][crate::shape::hinge_slot(i, a)] += g[order[a]];
            }
        }
        // The midedge split: this triangle's share of each angle.
        let o = self.split_offsets(t, psi);
        for i in 0..3 {
            dth[i] += o[i];
        }
        shape_fast_gauss_newton(
            &self.shape_rest[t],
            st,
            dth,
            &ga,
            &self.shape_gather(t, v),
            d,
            beta,
            tri,
            out,
        )
    }

    /// Every triangle's stretch and shear and its shape-operator element under `Clamped`, in
    /// one pass into `acc` (the bend element's triangle-triangle blocks add onto the
    /// triangle's own before they reach the pairs), from the pre-pass's `angles` and split
    /// `psi`; the energy per chunk into `energy`.
    fn shape_clamped_pass(
        &self,
        x: &[Vec3],
        v: &[Vec3],
        angles: &[(f64, [Vec3; 4])],
        psi: Option<&[f64]>,
        acc: &Accumulator<'_>,
        energy: &mut [f64],
    ) {
        let s = &self.structure;
        acc.run(&s.bend_colors, &self.shape_stencils, energy, |sink| {
            let mut energy = 0.0;
            let (mut tx, mut tv) = ([Matrix3::zeros(); 6], [Matrix3::zeros(); 6]);
            let (mut sx, mut sv) = ([Matrix3::zeros(); 12], [Matrix3::zeros(); 12]);
            let (mut ft, mut f) = ([Vec3::zeros(); 3], [Vec3::zeros(); 6]);
            let range = sink.elements();
            for t in range.clone() {
                if t + 1 < range.end {
                    sink.prefetch(s.tri_pairs(t + 1));
                    sink.prefetch(s.bend_pairs(t + 1));
                }
                energy += self.triangle_fast_at(t, x, v, &mut tx, &mut tv, &mut ft);
                let slots = ElementSlots {
                    dfdx: &mut sx,
                    dfdv: &mut sv,
                    forces: &mut f,
                };
                energy += self.shape_clamped_at(t, v, angles, psi, [&mut tx, &mut tv], slots);
                // Stencil slots 0..3 are the triangle's vertices, in its order.
                for (fa, fb) in f.iter_mut().zip(&ft) {
                    *fa += fb;
                }
                sink.add_blocks(t, s.tri_pairs(t), &tx, &tv);
                sink.add_blocks(t, s.bend_pairs(t), &sx, &sv);
                sink.add_forces(t, &f);
            }
            energy
        })
    }

    /// The shape-operator elements under `Exact` or `Projected` (21 entries each, the generic
    /// routine at the split `psi`) into `acc`, the energy per chunk into `energy`.
    fn shape_pass(
        &self,
        x: &[Vec3],
        v: &[Vec3],
        psi: Option<&[f64]>,
        acc: &Accumulator<'_>,
        energy: &mut [f64],
    ) {
        let s = &self.structure;
        let def = self.definiteness;
        acc.run(&s.bend_colors, &self.shape_stencils, energy, |sink| {
            let mut energy = 0.0;
            let (mut bx, mut bv) = ([Matrix3::zeros(); 21], [Matrix3::zeros(); 21]);
            for t in sink.elements() {
                let mut r = ElementResponse::zero();
                let offsets = self.split_offsets(t, psi);
                self.shape_response(t, x, v, def, offsets, &mut r);
                let st = &self.shape_stencils[t];
                for (k, &(a, b)) in SHAPE_PAIRS_WIDE.iter().enumerate() {
                    bx[k] = pair_block(&r.dfdx, st, a, b);
                    bv[k] = pair_block(&r.dfdv, st, a, b);
                }
                sink.add_blocks(t, s.bend_pairs(t), &bx, &bv);
                sink.add_forces(t, &r.forces);
                energy += r.energy;
            }
            energy
        })
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

/// The bend rest data a split system is built from.
#[derive(Clone, Copy)]
struct BendRef<'a> {
    hinges: &'a [[usize; 4]],
    shape_stencils: &'a [[usize; 6]],
    shape_rest: &'a [ShapeRest],
    shape_hinges: &'a [[usize; 3]],
}

/// The midedge split system of the shape-operator elements in `bend` (`rigid` triangles held
/// flat; empty: none).
fn make_split(
    bend: BendRef<'_>,
    materials: &[Material],
    material_of_triangle: &[usize],
    rigid: &[bool],
) -> Option<Arc<EdgeSplit>> {
    let signs: Vec<[f64; 3]> = (bend.shape_hinges.iter().zip(bend.shape_stencils))
        .map(|(hs, st)| {
            std::array::from_fn(|i| {
                let h = hs[i];
                if h != usize::MAX && bend.hinges[h][2] != st[i] {
                    -1.0
                } else {
                    1.0
                }
            })
        })
        .collect();
    let d: Vec<f64> = material_of_triangle
        .iter()
        .map(|&m| materials[m].bend)
        .collect();
    EdgeSplit::new(
        bend.hinges.len(),
        bend.shape_rest,
        bend.shape_hinges,
        &signs,
        &d,
        rigid,
    )
}

/// `narrow` for a df/dx or df/dv element matrix (negative semidefinite): applies
/// [`drop_flap_pairs`] to its negation.
fn narrow(m: &mut Blocks<6>, bary: &[[f64; 3]; 3]) {
    for row in m.iter_mut() {
        for b in row.iter_mut() {
            *b = -*b;
        }
    }
    drop_flap_pairs(m, bary);
    for row in m.iter_mut() {
        for b in row.iter_mut() {
            *b = -*b;
        }
    }
}

/// The entry block of local pair (a, b), a <= b: `m[a][b]`, or `m[a][b] + m[b][a]` when both
/// slots are the same vertex (two flaps of a triangle can coincide, and a missing flap repeats
/// a triangle vertex), since an entry (i, i) is added once, without its transpose.
#[inline]
fn pair_block(m: &Blocks<6>, stencil: &[usize; 6], a: usize, b: usize) -> Matrix3<f64> {
    if a != b && stencil[a] == stencil[b] {
        m[a][b] + m[b][a]
    } else {
        m[a][b]
    }
}

/// Fast path of one shape-operator element under `Clamped`: energy `d/2 |C|^2`, forces
/// `-sum_i sigma_i dtheta_i` with `sigma = P^T (d C + beta d Cdot)`, Gauss-Newton
/// `df/dx = -d G_a S G_b^T` (`S = P^T P`, `G_a` the 3x3 matrix of the angle gradients at
/// stencil slot a), `df/dv = beta df/dx`, flap-flap blocks folded by [`drop_flap_pairs`];
/// the same result as the generic routine (tested). The triangle-triangle blocks (pairs of
/// [`TRI_PAIRS`]) are added to `tri` (`[dfdx, dfdv]`, the triangle's own entries), the
/// [`SHAPE_PAIRS_FLAP`] blocks written to `out`. Returns the energy.
#[allow(clippy::too_many_arguments)]
fn shape_fast_gauss_newton(
    rest: &ShapeRest,
    stencil: &[usize; 6],
    dth: [f64; 3],
    ga: &[[Vec3; 6]; 3],
    v: &[Vec3; 6],
    d: f64,
    beta: f64,
    tri: [&mut [Matrix3<f64>]; 2],
    out: ElementSlots<'_>,
) -> f64 {
    if d == 0.0 {
        out.forces.iter_mut().for_each(|f| *f = Vec3::zeros());
        out.dfdx.iter_mut().for_each(|b| *b = Matrix3::zeros());
        out.dfdv.iter_mut().for_each(|b| *b = Matrix3::zeros());
        return 0.0;
    }
    let p = &rest.weights;
    let thdot: [f64; 3] = std::array::from_fn(|i| (0..6).map(|a| ga[i][a].dot(&v[a])).sum());
    let mut sigma = [0.0; 3];
    let mut energy = 0.0;
    for l in 0..3 {
        let c: f64 = (0..3).map(|i| p[l][i] * dth[i]).sum();
        let cdot: f64 = (0..3).map(|i| p[l][i] * thdot[i]).sum();
        let mu = d * c + beta * d * cdot;
        energy += 0.5 * d * c * c;
        for i in 0..3 {
            sigma[i] += p[l][i] * mu;
        }
    }
    for a in 0..6 {
        out.forces[a] = -(ga[0][a] * sigma[0] + ga[1][a] * sigma[1] + ga[2][a] * sigma[2]);
    }
    // Gauss-Newton d G_a S G_b^T with S = P^T P, in the relative coordinates of
    // `drop_flap_pairs` (y_a = x_a for triangle slots, r_j = x_{3+j} - sum_k l_jk x_k for
    // flaps, l = `flap_bary`): angle j moves flap j alone, with gradient u_j, and the r-r
    // blocks d S_ij u_i u_j^T (i != j) are folded onto the r diagonal (for B = d S_ij u_i u_j^T
    // the added term is d |S_ij| sqrt(S_ii / S_jj) u_i u_i^T, so the flap diagonal becomes
    // F_j = d w_j u_j u_j^T); the blocks are then mapped back to x: K_x = T^T K_y T. Since
    // the fold changes only the r-r part, K_x is the plain Gauss-Newton matrix plus the change
    // mapped back: with E = diag(d w) - d S (the fold's change in the r-r part, per pair of
    // angles) and the r_j of slot a carrying -l_ja x_a (or x_a itself for flap slot 3 + j),
    //   triangle-triangle (a, b): G_a dS G_b^T + V_a E V_b^T,  V_a = [l_0a u_0, l_1a u_1, l_2a u_2];
    //   triangle-flap (a, 3 + j): (G_a dS - V_a E)_j u_j^T (a rank-one block);
    //   flap-flap (3 + j, 3 + j): F_j (the off-diagonal flap pairs are folded away).
    // (G_a: the 3x3 matrix whose column i is angle i's gradient at slot a; flap j's own
    // gradient is u_j = G_{3+j} column j, the only angle that moves it.)
    let l = &rest.flap_bary;
    let s = rest.gram();
    let sm = Matrix3::from_fn(|i, j| d * s[i][j]);
    let u: [Vec3; 3] = std::array::from_fn(|j| ga[j][3 + j]);
    let w: [f64; 3] = std::array::from_fn(|i| {
        let mut w = s[i][i];
        for j in 0..3 {
            if j != i && s[j][j] > 0.0 && s[i][j] != 0.0 {
                w += s[i][j].abs() * (s[i][i] / s[j][j]).sqrt();
            }
        }
        d * w
    });
    let e = Matrix3::from_fn(|i, j| if i == j { w[i] } else { 0.0 } - sm[(i, j)]);
    let g: [Matrix3<f64>; 3] =
        std::array::from_fn(|a| Matrix3::from_columns(&[ga[0][a], ga[1][a], ga[2][a]]));
    let vm: [Matrix3<f64>; 3] = std::array::from_fn(|a| {
        Matrix3::from_columns(&[u[0] * l[0][a], u[1] * l[1][a], u[2] * l[2][a]])
    });
    let gs: [Matrix3<f64>; 3] = std::array::from_fn(|a| g[a] * sm);
    let ve: [Matrix3<f64>; 3] = std::array::from_fn(|a| vm[a] * e);
    let [tri_x, tri_v] = tri;
    for (k, &(a, b)) in TRI_PAIRS.iter().enumerate() {
        let blk = gs[a] * g[b].transpose() + ve[a] * vm[b].transpose();
        tri_x[k] -= blk;
        tri_v[k] -= blk * beta;
    }
    let flap_diag = |j: usize| u[j] * u[j].transpose() * w[j];
    let block = |a: usize, b: usize| -> Matrix3<f64> {
        match (a < 3, b < 3) {
            (true, false) => (gs[a].column(b - 3) - ve[a].column(b - 3)) * u[b - 3].transpose(),
            (false, true) => u[a - 3] * (gs[b].column(a - 3) - ve[b].column(a - 3)).transpose(),
            (false, false) if a == b => flap_diag(a - 3),
            _ => Matrix3::zeros(),
        }
    };
    for (e, &(a, b)) in SHAPE_PAIRS_FLAP.iter().enumerate() {
        // A boundary edge's flap slot repeats the triangle vertex across it.
        let blk = if a != b && stencil[a] == stencil[b] {
            block(a, b) + block(b, a)
        } else {
            block(a, b)
        };
        out.dfdx[e] = -blk;
        out.dfdv[e] = blk * -beta;
    }
    energy
}

/// Copies an element response's blocks of the local `pairs` into `[bx, bv]` and its forces
/// into `f`; returns its energy.
fn unpack<const S: usize>(
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

/// Checks the materials and the triangle-to-material map of [`ClothModel::with_materials`].
fn check_materials(
    mesh: &ClothMesh,
    materials: &[Material],
    material_of_triangle: &[usize],
) -> Result<(), ForceError> {
    let Some(first) = materials.first() else {
        return Err(ForceError::LengthMismatch {
            what: "materials",
            expected: 1,
            got: 0,
        });
    };
    for m in materials {
        m.validate()?;
        if m.bend_model != first.bend_model {
            return Err(ForceError::InvalidMaterial {
                field: "bend_model",
                value: f64::NAN,
                reason: "must be the same for every material of one model",
            });
        }
    }
    if material_of_triangle.len() != mesh.num_triangles() {
        return Err(ForceError::LengthMismatch {
            what: "material of triangle",
            expected: mesh.num_triangles(),
            got: material_of_triangle.len(),
        });
    }
    if let Some(t) = material_of_triangle
        .iter()
        .position(|&m| m >= materials.len())
    {
        return Err(ForceError::MaterialIndex {
            triangle: t,
            index: material_of_triangle[t],
            count: materials.len(),
        });
    }
    Ok(())
}

/// Hinge stencils and rest data: `k_e = D |e|^2 / (A1 + A2) * w` with `|e|^2` and the
/// `bend_uv` weight `w = (m_u du^2 + m_v dv^2) / |e|^2` the means over the hinge's two
/// triangles, each in its own rest frame (equal when the frames agree); flat rest angles.
fn hinge_rests(
    mesh: &ClothMesh,
    tri_rest: &[TriangleRest],
    materials: &[Material],
    hinge_material: &[usize],
) -> Result<(Vec<[usize; 4]>, Vec<HingeRest>), ForceError> {
    let tris = mesh.triangles();
    let mut hinges = Vec::with_capacity(mesh.hinges().len());
    let mut hinge_rest = Vec::with_capacity(mesh.hinges().len());
    for (h, hg) in mesh.hinges().iter().enumerate() {
        let material = &materials[hinge_material[h]];
        let edge = |t: usize| {
            let c = mesh.triangle_rest(t);
            let k = |v: usize| tris[t].iter().position(|&x| x == v).unwrap_or(0);
            c[k(hg.v[1])] - c[k(hg.v[0])]
        };
        let (d0, d1) = (edge(hg.tris[0]), edge(hg.tris[1]));
        let le2 = 0.5 * (d0.norm_squared() + d1.norm_squared());
        let a = tri_rest[hg.tris[0]].area + tri_rest[hg.tris[1]].area;
        if !(le2 > 0.0 && a > 0.0 && le2.is_finite()) {
            return Err(ForceError::DegenerateHinge {
                hinge: h,
                vertices: hg.v,
            });
        }
        let weight = |d: cloth_mesh::Vec2| {
            (material.bend_uv[0] * d.x * d.x + material.bend_uv[1] * d.y * d.y) / d.norm_squared()
        };
        let w = 0.5 * (weight(d0) + weight(d1));
        hinges.push(hg.v);
        hinge_rest.push(HingeRest {
            stiffness: material.bend * le2 / a * w,
            rest_angle: 0.0,
            rest_edge_sq: le2,
        });
    }
    Ok((hinges, hinge_rest))
}

/// Shape-operator stencils and rest data (see the `shape` module): per triangle its corners
/// and the flaps unfolded into its rest frame, curvature maps made conservative across every
/// hinge (in a common frame: the second triangle's column is rotated by the tensor rotation
/// between the two rest frames when they differ).
fn shape_rests(
    mesh: &ClothMesh,
    materials: &[Material],
    material_of_triangle: &[usize],
    bend: &mut BendRest,
) -> Result<(), ForceError> {
    let tris = mesh.triangles();
    let nt = tris.len();
    bend.shape_stencils = tris
        .iter()
        .map(|t| [t[0], t[1], t[2], t[0], t[1], t[2]])
        .collect();
    bend.shape_hinges = vec![[usize::MAX; 3]; nt];
    for (h, hg) in mesh.hinges().iter().enumerate() {
        // Triangle tris[0] winds (v0, v1, v2): its edge opposite v2 has flap v3;
        // tris[1] winds (v1, v0, v3): its edge opposite v3 has flap v2.
        for (t, opp, flap) in [
            (hg.tris[0], hg.v[2], hg.v[3]),
            (hg.tris[1], hg.v[3], hg.v[2]),
        ] {
            let i = tris[t].iter().position(|&x| x == opp).unwrap_or(0);
            bend.shape_stencils[t][3 + i] = flap;
            bend.shape_hinges[t][i] = h;
        }
    }
    let gather = |t: usize| {
        let p = mesh.triangle_rest(t);
        let q: [Option<_>; 3] = std::array::from_fn(|i| mesh.flap_rest(t, i).map(|(_, q)| q));
        (p, q)
    };
    // Curvature maps: the midedge-average columns `|e_i|/(2A) t_i t_i^T` (conservative); the
    // split of each angle between its two triangles is minimised out per evaluation (the
    // `split` module). A free edge's unobservable curvature is the one normal to it (its
    // column), minimised out of the triangle in `ShapeRest::from_map`. The flap matrix is
    // only checked: a flap on its edge's line (or beyond) is a degenerate stencil.
    let mut kmaps = Vec::with_capacity(nt);
    for (t, st) in bend.shape_stencils.iter().enumerate() {
        let (p, q) = gather(t);
        flap_matrix(p, q).ok_or(ForceError::DegenerateBendStencil {
            triangle: t,
            vertices: *st,
        })?;
        kmaps.push(midedge_map(p));
    }
    let bnd: Vec<[bool; 3]> = bend
        .shape_hinges
        .iter()
        .map(|h| h.map(|x| x == usize::MAX))
        .collect();
    bend.shape_rest.reserve(nt);
    for (t, st) in bend.shape_stencils.iter().enumerate() {
        let (p, q) = gather(t);
        let flaps = bnd[t].map(|b| !b);
        let bend_uv = materials[material_of_triangle[t]].bend_uv;
        let r = ShapeRest::from_map(p, q, flaps, &kmaps[t], bend_uv).ok_or(
            ForceError::DegenerateBendStencil {
                triangle: t,
                vertices: *st,
            },
        )?;
        bend.shape_rest.push(r);
    }
    Ok(())
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
