//! Greedy aggregation of the strength graph (Vanek, Mandel & Brezina 1996, "Algebraic
//! multigrid by smoothed aggregation for second and fourth order elliptic problems",
//! aggregation by neighbourhoods of the strength graph; the three passes as in pyamg's
//! `standard_aggregation`).

/// Marks a node that belongs to no aggregate (it has no strong neighbour; only the smoother
/// acts on it).
pub(crate) const NONE: usize = usize::MAX;

/// Aggregates of the graph whose edges are the slots `k` of the pattern `(row_ptr, cols)`
/// with `strength[k] >= theta` (self loops `cols[k] == i` ignored). Returns the aggregate of
/// every node ([`NONE`] for isolated nodes) and the number of aggregates.
///
/// 1. Every node whose strong neighbours are all still free becomes the root of an aggregate
///    made of itself and those neighbours.
/// 2. Every remaining node with a strong neighbour in a pass-1 aggregate joins the aggregate
///    of its strongest such neighbour (lowest index on ties).
/// 3. Every node still free forms an aggregate with its free strong neighbours.
///
/// Serial and deterministic (nodes in index order); O(number of slots).
pub(crate) fn aggregate(
    row_ptr: &[usize],
    cols: &[usize],
    strength: &[f64],
    theta: f64,
) -> (Vec<usize>, usize) {
    let n = row_ptr.len() - 1;
    let strong = |i: usize, k: usize| cols[k] != i && strength[k] >= theta;
    let mut agg = vec![NONE; n];
    let mut count = 0;
    let mut has_strong = vec![false; n];
    // Pass 1.
    for i in 0..n {
        let row = row_ptr[i]..row_ptr[i + 1];
        has_strong[i] = row.clone().any(|k| strong(i, k));
        if !has_strong[i] || agg[i] != NONE {
            continue;
        }
        if row.clone().any(|k| strong(i, k) && agg[cols[k]] != NONE) {
            continue;
        }
        agg[i] = count;
        for k in row {
            if strong(i, k) {
                agg[cols[k]] = count;
            }
        }
        count += 1;
    }
    // Pass 2: join the strongest neighbouring pass-1 aggregate.
    let pass1 = agg.clone();
    for i in 0..n {
        if agg[i] != NONE || !has_strong[i] {
            continue;
        }
        let mut best: Option<(f64, usize)> = None;
        for k in row_ptr[i]..row_ptr[i + 1] {
            let j = cols[k];
            if strong(i, k) && pass1[j] != NONE && best.is_none_or(|(s, _)| strength[k] > s) {
                best = Some((strength[k], pass1[j]));
            }
        }
        if let Some((_, a)) = best {
            agg[i] = a;
        }
    }
    // Pass 3: leftovers (only possible when pass 2 found no aggregated neighbour).
    for i in 0..n {
        if agg[i] != NONE || !has_strong[i] {
            continue;
        }
        agg[i] = count;
        for k in row_ptr[i]..row_ptr[i + 1] {
            if strong(i, k) && agg[cols[k]] == NONE {
                agg[cols[k]] = count;
            }
        }
        count += 1;
    }
    (agg, count)
}

/// Node lists of the aggregates, each ascending: `(ptr, nodes)` with aggregate `a` made of
/// `nodes[ptr[a]..ptr[a + 1]]`.
pub(crate) fn members(agg: &[usize], count: usize) -> (Vec<usize>, Vec<usize>) {
    let mut ptr = vec![0usize; count + 1];
    for &a in agg {
        if a != NONE {
            ptr[a + 1] += 1;
        }
    }
    for a in 0..count {
        ptr[a + 1] += ptr[a];
    }
    let mut fill = ptr.clone();
    let mut nodes = vec![0usize; ptr[count]];
    for (i, &a) in agg.iter().enumerate() {
        if a != NONE {
            nodes[fill[a]] = i;
            fill[a] += 1;
        }
    }
    (ptr, nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Path graph 0-1-2-...-(n-1), all edges strong.
    fn path(n: usize) -> (Vec<usize>, Vec<usize>) {
        let mut row_ptr = vec![0];
        let mut cols = Vec::new();
        for i in 0..n {
            if i > 0 {
                cols.push(i - 1);
            }
            if i + 1 < n {
                cols.push(i + 1);
            }
            row_ptr.push(cols.len());
        }
        (row_ptr, cols)
    }

    #[test]
    fn path_is_cut_into_triples() {
        let (rp, c) = path(9);
        let s = vec![1.0; c.len()];
        let (agg, count) = aggregate(&rp, &c, &s, 0.0);
        assert_eq!(count, 3);
        assert_eq!(agg, vec![0, 0, 1, 1, 1, 2, 2, 2, 2]);
        // Every node aggregated, each aggregate connected and of size 2..=4.
        let (ptr, nodes) = members(&agg, count);
        assert_eq!(nodes.len(), 9);
        for a in 0..count {
            let m = &nodes[ptr[a]..ptr[a + 1]];
            assert!((2..=4).contains(&m.len()), "{m:?}");
            assert!(m.windows(2).all(|w| w[1] == w[0] + 1), "{m:?}");
        }
    }

    #[test]
    fn weak_edges_leave_isolated_nodes_out() {
        let (rp, c) = path(4);
        // Edge 1-2 weak in both directions: {0,1} and {2,3}.
        let s: Vec<f64> = (0..4)
            .flat_map(|i| {
                let mut v = Vec::new();
                if i > 0 {
                    v.push(if i == 2 { 0.01 } else { 1.0 });
                }
                if i < 3 {
                    v.push(if i == 1 { 0.01 } else { 1.0 });
                }
                v
            })
            .collect();
        let (agg, count) = aggregate(&rp, &c, &s, 0.1);
        assert_eq!(count, 2);
        assert_eq!(agg[0], agg[1]);
        assert_eq!(agg[2], agg[3]);
        assert_ne!(agg[1], agg[2]);
        // All weak: nobody is aggregated.
        let (agg, count) = aggregate(&rp, &c, &vec![0.0; c.len()], 0.1);
        assert_eq!(count, 0);
        assert!(agg.iter().all(|&a| a == NONE));
    }
}
