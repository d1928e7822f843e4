//! Fixed-size chunking shared by all parallel passes, so that reductions are deterministic.
//!
//! Every parallel pass splits its block vectors into chunks of [`ROW_CHUNK`] blocks; each
//! chunk is processed serially and produces one partial sum; partial sums are then added
//! serially in chunk order. The chunking depends only on the vector length, never on the
//! number of threads, so results are bit-identical for any rayon pool size.

/// Number of 3-vector blocks (particles) per parallel task and per partial sum.
///
/// 256: small enough that a system of a few thousand particles splits evenly between two
/// threads and a first coarse level of a few hundred particles still makes two chunks (with
/// 512, a 2,601-particle system splits 1,536 : 1,065 and such a coarse level is one chunk,
/// so one thread does all of it); 64 and 128 cost the same as 256, and on large systems the
/// size does not matter.
pub(crate) const ROW_CHUNK: usize = 256;

/// Serial, in-order sum of partial sums.
#[inline]
pub(crate) fn sum_in_order(partials: &[f64]) -> f64 {
    partials.iter().fold(0.0, |acc, v| acc + v)
}
