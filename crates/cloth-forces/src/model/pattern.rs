//! The fixed block structure of a model's evaluations: which vertex pairs carry a 3x3 block,
//! where each element entry goes, the colour-ordered chunks of the element passes and the
//! vertex lists of the df/dx products. Built once per model (and bend layout).

use crate::BendModel;
use crate::bend::HINGE_PAIRS;
use crate::condition::Definiteness;
use crate::scatter::{Coloring, TRANSPOSED};
use crate::shape::{SHAPE_PAIRS_FLAP, SHAPE_PAIRS_WIDE};
use crate::triangle::TRI_PAIRS;

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
pub(super) struct Structure {
    pub(super) num_vertices: usize,
    pub(super) num_triangles: usize,
    /// Entries per bend element (10 hinge, 12 or 21 shape).
    pub(super) bend_entries: usize,
    /// The evaluation's blocks: every vertex pair (i, j), i <= j, that an element couples, and
    /// (i, i) for every vertex, sorted; row i starts at `row_start[i]` with its diagonal.
    pub(super) entries: Vec<(usize, usize)>,
    pub(super) row_start: Vec<usize>,
    /// Block of each element entry (6 per triangle, then `bend_entries` per bend element), with
    /// [`TRANSPOSED`] when the element's pair (i, j) has i > j.
    pub(super) elem_pair: Vec<u32>,
    /// Chunk colourings of the triangles and of the bend elements.
    pub(super) tri_colors: Coloring,
    pub(super) bend_colors: Coloring,
    /// CSR over vertices of `[block | TRANSPOSED, other vertex]` for df/dx products, ascending
    /// block (row i's own blocks, then the blocks (j, i) of rows j < i, transposed).
    pub(super) mul_start: Vec<usize>,
    pub(super) mul: Vec<[u32; 2]>,
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
        let (entries, row_start) = sorted_entries(n, elem_vertices());
        let find = |i: usize, j: usize| -> u32 {
            // The colour-ordered evaluation's safety rests on this: an element's codes name
            // pairs of its own vertices.
            let k = locate(&entries, &row_start, i, j).expect("every element pair is an entry");
            index(k) | if i > j { TRANSPOSED } else { 0 }
        };
        let elem_pair: Vec<u32> = elem_vertices().map(|(i, j)| find(i, j)).collect();
        let (mul_start, mul) = mul_lists(n, &entries);
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

    /// The structure of a model with `n` vertices, its triangles and the bend elements of
    /// `model`: hinges, or shape-operator stencils with 12 entries each under
    /// [`Definiteness::Clamped`] and 21 otherwise.
    pub(super) fn for_model(
        n: usize,
        tris: &[[usize; 3]],
        hinges: &[[usize; 4]],
        stencils: &[[usize; 6]],
        model: BendModel,
        definiteness: Definiteness,
    ) -> Self {
        let layout = match model {
            BendModel::Hinge => BendLayout::Hinge(hinges),
            BendModel::ShapeOperator => BendLayout::Shape {
                stencils,
                wide: definiteness != Definiteness::Clamped,
            },
        };
        Self::new(n, tris, layout)
    }

    /// Block codes of triangle t's 6 entries.
    pub(super) fn tri_pairs(&self, t: usize) -> &[u32] {
        &self.elem_pair[6 * t..6 * t + 6]
    }

    /// Block codes of bend element e's entries.
    pub(super) fn bend_pairs(&self, e: usize) -> &[u32] {
        let (base, k) = (6 * self.num_triangles, self.bend_entries);
        &self.elem_pair[base + k * e..base + k * (e + 1)]
    }

    /// Index of the block of pair (i, j) (either order), if the structure has it.
    pub(super) fn find(&self, i: usize, j: usize) -> Option<usize> {
        locate(&self.entries, &self.row_start, i, j)
    }
}

/// A block or vertex index as `u32`.
///
/// Entry and vertex indices fit 31 and 32 bits: a mesh with 2^31 blocks (hundreds of millions
/// of vertices) would need over 300 GB for its Jacobians; the `cloth` command's budget refuses
/// it, and a direct caller runs out of memory before reaching these.
fn index(k: usize) -> u32 {
    u32::try_from(k).expect("block or vertex index within u32")
}

/// The sorted, unique entries `(i, j)`, `i <= j`, of the element vertex pairs and of every
/// diagonal `(i, i)` of `n` vertices, and the start of each row.
fn sorted_entries(
    n: usize,
    elem_vertices: impl Iterator<Item = (usize, usize)>,
) -> (Vec<(usize, usize)>, Vec<usize>) {
    // Half the bytes of usize pairs while the repeats are still in (the construction's
    // peak).
    let mut all: Vec<(u32, u32)> = elem_vertices
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
    (entries, row_start)
}

/// The CSR over vertices of `[block | TRANSPOSED, other vertex]` for the df/dx products (see
/// [`Structure::mul`]).
fn mul_lists(n: usize, entries: &[(usize, usize)]) -> (Vec<usize>, Vec<[u32; 2]>) {
    let mut m = Vec::with_capacity(2 * entries.len());
    for (k, &(i, j)) in entries.iter().enumerate() {
        m.push((i, [index(k), index(j)]));
        if i != j {
            m.push((j, [index(k) | TRANSPOSED, index(i)]));
        }
    }
    csr(n, m)
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
