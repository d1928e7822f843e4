//! Fixed-size chunking shared by all parallel passes, so that reductions are deterministic.
//!
//! Every parallel pass splits its block vectors into chunks of [`ROW_CHUNK`] blocks; each
//! chunk is processed serially and produces one partial sum; partial sums are then added
//! serially in chunk order. The chunking depends only on the vector length, never on the
//! number of threads, so results are bit-identical for any rayon pool size.

/// Number of 3-vector blocks (particles) per parallel task and per partial sum.
pub(crate) const ROW_CHUNK: usize = 512;

/// Serial, in-order sum of partial sums.
#[inline]
pub(crate) fn sum_in_order(partials: &[f64]) -> f64 {
    partials.iter().fold(0.0, |acc, v| acc + v)
}
