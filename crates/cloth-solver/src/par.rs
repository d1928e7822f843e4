//! Fixed-size chunking shared by all parallel passes, so that reductions are deterministic.
//!
//! Every parallel pass splits its block vectors into chunks of [`ROW_CHUNK`] blocks; each
//! chunk is processed serially and produces one partial sum; partial sums are then added
//! serially in chunk order. The chunking depends only on the vector length, never on the
//! number of threads, so results are bit-identical for any rayon pool size.

/// Number of 3-vector blocks (particles) per parallel task and per partial sum.
///
/// 256 rather than 512 (measured 2026-12-06, Figure 1's 2,601-vertex drape, 2 threads, three
/// interleaved runs): CG time 0.93-0.94 s against 1.10-1.17 s, the same steps and iterations.
/// At 2,601 rows, 512-row chunks (five full ones and one of 41 rows) split the work 1,536 :
/// 1,065 between two threads, and the first coarse level (454 particles) was one chunk, so
/// one thread did all of it; 128 and 64 measured like 256. One thread, and 40,401 vertices
/// on two: no change.
pub(crate) const ROW_CHUNK: usize = 256;

/// Serial, in-order sum of partial sums.
#[inline]
pub(crate) fn sum_in_order(partials: &[f64]) -> f64 {
    partials.iter().fold(0.0, |acc, v| acc + v)
}
