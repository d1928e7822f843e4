//! Colour-ordered parallel accumulation of element contributions into per-vertex-pair Jacobian
//! blocks and per-vertex forces.
//!
//! Elements are cut into chunks of fixed size (independent of the thread count), and the chunks
//! are coloured greedily so that no two chunks of one colour share a vertex. The colours run
//! one after the other; the chunks of a colour run in parallel, each chunk's elements in order.
//! Every block and force therefore receives its contributions in one fixed order (colour, then
//! element), whatever the number of threads: the sums are the same bits for any pool.
//!
//! This replaces per-element storage gathered per vertex pair afterwards (five, then three,
//! arrays of 37 blocks per vertex for the shape-operator model) by two arrays of about seven
//! blocks per vertex, written where they are summed.

// Chunks of one colour write to the same arrays from several threads at indices that are
// disjoint by construction: their elements share no vertex, and every pair and force an
// element writes belongs to its own vertices (the model's table of element pairs is checked
// when it is built, each write in debug builds). Safe Rust cannot express writes to disjoint
// scattered indices without a lock or an atomic per entry, hence the unsafe blocks of this
// module (the writes through `Shared`, and a prefetch hint).
#![allow(unsafe_code)]

use std::marker::PhantomData;
use std::ops::Range;

use nalgebra::Matrix3;
use rayon::prelude::*;

use crate::condition::Vec3;

/// Flag of an element entry whose block is stored transposed (its vertex pair (i, j) has
/// i > j; the stored pair is (j, i)).
pub(crate) const TRANSPOSED: u32 = 1 << 31;

/// Element chunks grouped into colours: no two chunks of one colour share a vertex.
#[derive(Debug)]
pub(crate) struct Coloring {
    /// Elements per chunk (the last chunk may be shorter).
    chunk: usize,
    /// Number of elements.
    count: usize,
    /// Chunk indices per colour, ascending within a colour.
    colors: Vec<Vec<u32>>,
}

impl Coloring {
    /// Greedy colouring of the chunks of `stencils` (the vertices of each element; repeats
    /// allowed), `chunk` elements per chunk, over `n` vertices. A chunk takes the lowest of 64
    /// colours no chunk sharing one of its vertices took before it; when all 64 are taken it
    /// gets a colour of its own.
    pub fn new<const K: usize>(n: usize, stencils: &[[usize; K]], chunk: usize) -> Self {
        let chunk = chunk.max(1);
        let count = stencils.len();
        let mut mask = vec![0u64; n];
        let mut colors: Vec<Vec<u32>> = Vec::new();
        for c in 0..count.div_ceil(chunk) {
            let elems = &stencils[c * chunk..((c + 1) * chunk).min(count)];
            let used = elems.iter().flatten().fold(0u64, |m, &v| m | mask[v]);
            let color = if used == u64::MAX {
                colors.len().max(64)
            } else {
                let k = (!used).trailing_zeros() as usize;
                for &v in elems.iter().flatten() {
                    mask[v] |= 1 << k;
                }
                k
            };
            if colors.len() <= color {
                colors.resize(color + 1, Vec::new());
            }
            colors[color].push(u32::try_from(c).expect("chunk index within u32"));
        }
        colors.retain(|c| !c.is_empty());
        Self {
            chunk,
            count,
            colors,
        }
    }

    /// Number of chunks.
    pub fn num_chunks(&self) -> usize {
        self.count.div_ceil(self.chunk)
    }

    /// Element range of chunk `c`.
    fn range(&self, c: u32) -> Range<usize> {
        let c = c as usize;
        c * self.chunk..((c + 1) * self.chunk).min(self.count)
    }
}

/// A mutable slice written from several threads at disjoint indices.
struct Shared<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: `Shared` hands out access to single elements only through `update`, whose callers
// guarantee that no two threads touch the same index at once; `T: Send` lets the values be
// written from another thread.
unsafe impl<T: Send> Sync for Shared<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for Shared<'_, T> {}

impl<'a, T> Shared<'a, T> {
    fn new(s: &'a mut [T]) -> Self {
        Self {
            ptr: s.as_mut_ptr(),
            len: s.len(),
            _borrow: PhantomData,
        }
    }

    /// Asks the processor to bring element `i` into cache (a hint; no effect on values, and
    /// none at all off x86-64).
    #[inline]
    fn prefetch(&self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        if i < self.len {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let first = self.ptr.wrapping_add(i).cast::<i8>();
            let last = first.wrapping_add(std::mem::size_of::<T>().saturating_sub(1));
            // SAFETY: a prefetch reads nothing into the program and cannot fault; the
            // addresses are in the slice anyway (checked above).
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(first);
                _mm_prefetch::<_MM_HINT_T0>(last);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }

    /// Applies `f` to element `i`.
    ///
    /// # Safety
    /// No other thread may access element `i` while this runs.
    unsafe fn update(&self, i: usize, f: impl FnOnce(&mut T)) {
        assert!(i < self.len, "index {i} out of {}", self.len);
        // SAFETY: in bounds (checked above), the slice outlives `'a`, and the caller
        // guarantees exclusive access to element i for the duration.
        f(unsafe { &mut *self.ptr.add(i) });
    }
}

/// Per-pair Jacobian blocks and per-vertex forces that element chunks add into, colour by
/// colour.
pub(crate) struct Accumulator<'a> {
    /// Vertex pair (i <= j) of every block.
    pairs: &'a [(usize, usize)],
    dfdx: Shared<'a, Matrix3<f64>>,
    dfdv: Shared<'a, Matrix3<f64>>,
    forces: Shared<'a, Vec3>,
}

impl<'a> Accumulator<'a> {
    /// Accumulates into `dfdx` and `dfdv` (one block per pair of `pairs`) and `forces` (one
    /// per vertex).
    ///
    /// # Panics
    /// If `dfdx` or `dfdv` differ in length from `pairs`.
    pub fn new(
        pairs: &'a [(usize, usize)],
        dfdx: &'a mut [Matrix3<f64>],
        dfdv: &'a mut [Matrix3<f64>],
        forces: &'a mut [Vec3],
    ) -> Self {
        assert!(dfdx.len() == pairs.len() && dfdv.len() == pairs.len());
        Self {
            pairs,
            dfdx: Shared::new(dfdx),
            dfdv: Shared::new(dfdv),
            forces: Shared::new(forces),
        }
    }

    /// Runs `body` once per chunk of `coloring` (built from `stencils`), colour by colour,
    /// the chunks of a colour in parallel, and stores each chunk's value (its energy) in
    /// `values[chunk]`. Allocates nothing.
    ///
    /// # Panics
    /// If `coloring` was made for a different number of elements or `values` is not one per
    /// chunk.
    pub fn run<const K: usize>(
        &self,
        coloring: &Coloring,
        stencils: &[[usize; K]],
        values: &mut [f64],
        body: impl Fn(&ElementSink<'_, K>) -> f64 + Sync,
    ) {
        assert_eq!(
            coloring.count,
            stencils.len(),
            "colouring of other elements"
        );
        assert_eq!(values.len(), coloring.num_chunks(), "one value per chunk");
        let values = Shared::new(values);
        for color in &coloring.colors {
            color.par_iter().for_each(|&c| {
                let sink = ElementSink {
                    acc: self,
                    stencils,
                    range: coloring.range(c),
                };
                let e = body(&sink);
                // SAFETY: every chunk appears in exactly one colour, once, so no other thread
                // writes `values[c]`.
                unsafe { values.update(c as usize, |v| *v = e) };
            });
        }
    }
}

/// Write access of one chunk: the elements of its range may add blocks on pairs of their own
/// vertices and forces on their own vertices.
pub(crate) struct ElementSink<'s, const K: usize> {
    acc: &'s Accumulator<'s>,
    stencils: &'s [[usize; K]],
    range: Range<usize>,
}

impl<const K: usize> ElementSink<'_, K> {
    /// The chunk's elements.
    pub fn elements(&self) -> Range<usize> {
        self.range.clone()
    }

    fn stencil(&self, e: usize) -> &[usize; K] {
        assert!(self.range.contains(&e), "element {e} outside its chunk");
        &self.stencils[e]
    }

    /// Adds element `e`'s blocks: `bx[k]`, `bv[k]` to the pair coded by `pairs[k]` (index, with
    /// [`TRANSPOSED`] when the block is stored transposed).
    ///
    /// `pairs` must be element e's own codes (the model's per-element table, whose pairs join
    /// vertices of the element: asserted when the table is built, and here in debug builds);
    /// the chunk's exclusive access to those pairs rests on it.
    ///
    /// # Panics
    /// If `e` is outside the chunk or a pair index is out of range.
    pub fn add_blocks(&self, e: usize, pairs: &[u32], bx: &[Matrix3<f64>], bv: &[Matrix3<f64>]) {
        let st = self.stencil(e);
        for ((&code, x), v) in pairs.iter().zip(bx).zip(bv) {
            let p = (code & !TRANSPOSED) as usize;
            debug_assert!({
                let (i, j) = self.acc.pairs[p];
                st.contains(&i) && st.contains(&j)
            });
            let t = code & TRANSPOSED != 0;
            // SAFETY: pair (i, j) joins two vertices of element e, which belongs to this chunk;
            // the chunks running at the same time are of this chunk's colour, which gives them
            // no common vertex, so no other thread touches a pair with vertex i now.
            unsafe {
                self.acc
                    .dfdx
                    .update(p, |b| *b += if t { x.transpose() } else { *x });
                self.acc
                    .dfdv
                    .update(p, |b| *b += if t { v.transpose() } else { *v });
            }
        }
    }

    /// Hints that blocks `pairs` (codes as for [`ElementSink::add_blocks`]) are about to be
    /// added to: call it one element ahead, so that their cache misses overlap the element's
    /// arithmetic.
    pub fn prefetch(&self, pairs: &[u32]) {
        for &code in pairs {
            let p = (code & !TRANSPOSED) as usize;
            self.acc.dfdx.prefetch(p);
            self.acc.dfdv.prefetch(p);
        }
    }

    /// Adds element `e`'s forces, `f[a]` to its stencil vertex a.
    ///
    /// # Panics
    /// If `e` is outside the chunk.
    pub fn add_forces(&self, e: usize, f: &[Vec3]) {
        let st = *self.stencil(e);
        for (&i, fa) in st.iter().zip(f) {
            // SAFETY: vertex i belongs to element e of this chunk; chunks running at the same
            // time (one colour) share no vertex.
            unsafe { self.acc.forces.update(i, |g| *g += fa) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Past 64 colours every further chunk gets a colour of its own.
    #[test]
    fn chunks_that_all_conflict_run_one_by_one() {
        let stencils = vec![[0usize, 1, 2]; 100];
        let col = Coloring::new(3, &stencils, 1);
        assert_eq!(col.colors.len(), 100);
        assert!(col.colors.iter().all(|c| c.len() == 1));
        let mut chunks: Vec<u32> = col.colors.iter().flatten().copied().collect();
        chunks.sort_unstable();
        assert_eq!(chunks, (0..100).collect::<Vec<u32>>());
    }

    /// The accumulated sums are those of a serial loop over the elements in colour order, and
    /// the same bits on one thread and on two.
    #[test]
    fn accumulation_matches_a_serial_sum_on_any_pool() {
        let n = 40;
        let stencils: Vec<[usize; 3]> = (0..300)
            .map(|e| [e % n, (7 * e + 3) % n, (13 * e + 5) % n])
            .collect();
        let col = Coloring::new(n, &stencils, 4);
        let mut pairs: Vec<(usize, usize)> = stencils
            .iter()
            .flat_map(|s| [(s[0], s[1]), (s[1], s[2]), (s[0], s[2]), (s[0], s[0])])
            .map(|(i, j)| (i.min(j), i.max(j)))
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        let code = |i: usize, j: usize| {
            let k = pairs.binary_search(&(i.min(j), i.max(j))).unwrap() as u32;
            if i > j { k | TRANSPOSED } else { k }
        };
        let block = |e: usize, k: usize| {
            Matrix3::from_fn(|r, c| ((e * 31 + k * 7 + r * 3 + c) % 17) as f64 * 0.1 + 1e-3)
        };
        let run = |threads: usize| {
            let (mut x, mut v) = (
                vec![Matrix3::zeros(); pairs.len()],
                vec![Matrix3::zeros(); pairs.len()],
            );
            let mut f = vec![Vec3::zeros(); n];
            let mut values = vec![0.0; col.num_chunks()];
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let acc = Accumulator::new(&pairs, &mut x, &mut v, &mut f);
                acc.run(&col, &stencils, &mut values, |sink| {
                    for e in sink.elements() {
                        let s = stencils[e];
                        let codes = [
                            code(s[0], s[1]),
                            code(s[1], s[2]),
                            code(s[0], s[2]),
                            code(s[0], s[0]),
                        ];
                        let b: Vec<Matrix3<f64>> = (0..4).map(|k| block(e, k)).collect();
                        sink.add_blocks(e, &codes, &b, &b);
                        sink.add_forces(e, &[Vec3::new(e as f64, 1.0, 0.5); 3]);
                    }
                    sink.elements().len() as f64
                });
            });
            (x, f, values)
        };
        let (x1, f1, v1) = run(1);
        let (x2, f2, v2) = run(2);
        assert_eq!(x1, x2);
        assert_eq!(f1, f2);
        assert_eq!(v1, v2);
        assert_eq!(v1.iter().sum::<f64>(), 300.0);
        // Serial reference in colour order.
        let mut xr = vec![Matrix3::<f64>::zeros(); pairs.len()];
        for c in col.colors.iter().flatten() {
            for e in col.range(*c) {
                let s = stencils[e];
                for (k, (i, j)) in [(s[0], s[1]), (s[1], s[2]), (s[0], s[2]), (s[0], s[0])]
                    .into_iter()
                    .enumerate()
                {
                    let p = pairs.binary_search(&(i.min(j), i.max(j))).unwrap();
                    xr[p] += if i > j {
                        block(e, k).transpose()
                    } else {
                        block(e, k)
                    };
                }
            }
        }
        assert_eq!(x1, xr);
    }

    proptest! {
        /// No two chunks of one colour share a vertex, and every chunk has exactly one colour.
        #[test]
        fn chunks_of_one_colour_share_no_vertex(
            n in 1usize..60,
            raw in prop::collection::vec(prop::array::uniform3(0usize..1000), 0..300),
            chunk in 1usize..9,
        ) {
            let stencils: Vec<[usize; 3]> =
                raw.iter().map(|s| s.map(|v| v % n)).collect();
            let col = Coloring::new(n, &stencils, chunk);
            let mut seen = vec![false; stencils.len().div_ceil(chunk)];
            for color in &col.colors {
                let mut owner = vec![usize::MAX; n];
                for &c in color {
                    prop_assert!(!seen[c as usize], "chunk {} coloured twice", c);
                    seen[c as usize] = true;
                    for e in col.range(c) {
                        for &v in &stencils[e] {
                            prop_assert!(
                                owner[v] == usize::MAX || owner[v] == c as usize,
                                "vertex {} in chunks {} and {}", v, owner[v], c
                            );
                            owner[v] = c as usize;
                        }
                    }
                }
            }
            prop_assert!(seen.iter().all(|&s| s));
        }
    }
}
