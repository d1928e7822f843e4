//! Parallelism as an argument (in the style of faer's `Par`), shared by every crate of the
//! workspace: force evaluation, assembly, the linear solve and collision queries take a [`Par`]
//! instead of reading a global setting.

use std::sync::{Arc, Mutex, OnceLock};

/// How many threads a computation may use.
///
/// Every parallel pass of the workspace splits its work into fixed chunks and reduces them in a
/// fixed order, so the result is the same, bit for bit, for every choice: `Par` changes only
/// the speed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Par {
    /// On the calling thread only.
    Seq,
    /// On rayon's current thread pool (the global one unless the caller is inside another);
    /// the default.
    #[default]
    Rayon,
    /// On a pool of exactly this many threads (kept and reused across calls; 0 and 1 mean
    /// [`Par::Seq`]).
    Threads(usize),
}

/// Pools made for [`Par::Seq`] and [`Par::Threads`], by thread count.
type Pools = Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>>;

fn pools() -> &'static Pools {
    static POOLS: OnceLock<Pools> = OnceLock::new();
    POOLS.get_or_init(|| Mutex::new(Vec::new()))
}

fn pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    let mut list = pools().lock().ok()?;
    if let Some((_, p)) = list.iter().find(|(n, _)| *n == threads) {
        return Some(p.clone());
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(move |i| format!("cloth-par{threads}-{i}"))
            .build()
            .ok()?,
    );
    list.push((threads, p.clone()));
    Some(p)
}

impl Par {
    /// The number of threads this choice runs on.
    pub fn threads(self) -> usize {
        match self {
            Par::Seq => 1,
            Par::Rayon => rayon::current_num_threads(),
            Par::Threads(n) => n.max(1),
        }
    }

    /// Runs `f` with this parallelism: rayon work inside `f` runs on the chosen pool. When the
    /// calling thread already is on a pool of the requested size, `f` runs directly. If a pool
    /// cannot be created (the system refuses threads), `f` runs on the current pool instead;
    /// results do not depend on it.
    pub fn install<R: Send>(self, f: impl FnOnce() -> R + Send) -> R {
        let want = match self {
            Par::Rayon => return f(),
            Par::Seq => 1,
            Par::Threads(n) => n.max(1),
        };
        if rayon::current_thread_index().is_some() && rayon::current_num_threads() == want {
            return f();
        }
        match pool(want) {
            Some(p) => p.install(f),
            None => f(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    #[test]
    fn install_runs_on_the_requested_number_of_threads() {
        assert_eq!(Par::Seq.install(rayon::current_num_threads), 1);
        assert_eq!(Par::Threads(3).install(rayon::current_num_threads), 3);
        assert_eq!(Par::Threads(0).threads(), 1);
        // Nested installs of the same size run directly.
        assert_eq!(
            Par::Threads(3).install(|| Par::Threads(3).install(rayon::current_num_threads)),
            3
        );
        let s: u64 = Par::Threads(2).install(|| (0..1000u64).into_par_iter().sum());
        assert_eq!(s, 499_500);
    }
}
