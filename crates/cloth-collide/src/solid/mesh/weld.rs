//! Welding of a mesh's vertices by bit-identical position.
//!
//! Exporters split a vertex wherever a normal or texture coordinate is discontinuous: the
//! copies sit at exactly the same position, so the surface is closed geometrically but has
//! boundary edges by index. Welding makes each set of copies one vertex again. Only
//! bit-identical positions weld (`-0.0` counts as `0.0`): vertices that are merely close stay
//! apart, since welding by distance would join distinct surfaces that nearly touch (lips,
//! eyelids) into non-manifold edges.

use std::collections::HashMap;

use cloth_mesh::Vec3;

use crate::solid::report::{KeptSplit, SplitReason};

/// Which vertices of a mesh are one.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Weld {
    /// Welded index of each original vertex.
    pub map: Vec<usize>,
    /// First original vertex (the one whose data the welded vertex keeps) of each welded
    /// vertex. Welded vertices are numbered in the order of their first copies, so this is
    /// increasing.
    pub first: Vec<usize>,
    /// Copies that share a position but were kept apart, with an example.
    pub kept_split: Option<KeptSplit>,
}

/// The bits of a position, `-0.0` and `0.0` alike.
pub(crate) fn position_key(p: &Vec3) -> [u64; 3] {
    [
        (p.x + 0.0).to_bits(),
        (p.y + 0.0).to_bits(),
        (p.z + 0.0).to_bits(),
    ]
}

impl Weld {
    /// No vertex merged.
    pub fn identity(n: usize) -> Weld {
        Weld {
            map: (0..n).collect(),
            first: (0..n).collect(),
            kept_split: None,
        }
    }

    /// Whether no vertex was merged.
    pub fn is_identity(&self) -> bool {
        self.first.len() == self.map.len()
    }

    /// Welded vertex count.
    pub fn len(&self) -> usize {
        self.first.len()
    }

    /// The welded vertices' positions: those of their first copies.
    pub fn gather(&self, positions: &[Vec3]) -> Vec<Vec3> {
        self.first.iter().map(|&v| positions[v]).collect()
    }

    /// Groups vertices by `keys` (equal keys weld), then splits each group into the classes of
    /// `same` (vertices `a` and `b` of one group stay together only if `same(a, b)` holds for
    /// the group's first vertex `a`, or for the first vertex of a class split off before).
    /// `reason(a, b)` says why two vertices of one group were kept apart.
    pub fn by_keys<K: std::hash::Hash + Eq>(
        keys: impl Iterator<Item = K>,
        mut same: impl FnMut(usize, usize) -> bool,
        mut reason: impl FnMut(usize, usize) -> SplitReason,
    ) -> Weld {
        let mut group_of: HashMap<K, usize> = HashMap::new();
        // Per position group: the first vertex of each class.
        let mut classes: Vec<Vec<usize>> = Vec::new();
        let mut map = Vec::new();
        let mut first = Vec::new();
        let mut kept: Option<KeptSplit> = None;
        for (v, k) in keys.enumerate() {
            let g = *group_of.entry(k).or_insert_with(|| {
                classes.push(Vec::new());
                classes.len() - 1
            });
            let found = classes[g].iter().copied().find(|&a| same(a, v));
            match found {
                Some(a) => map.push(map[a]),
                None => {
                    if let Some(&a) = classes[g].first() {
                        match &mut kept {
                            Some(k) => k.count += 1,
                            None => {
                                kept = Some(KeptSplit {
                                    count: 1,
                                    a,
                                    b: v,
                                    reason: reason(a, v),
                                })
                            }
                        }
                    }
                    classes[g].push(v);
                    map.push(first.len());
                    first.push(v);
                }
            }
        }
        Weld {
            map,
            first,
            kept_split: kept,
        }
    }
}

/// Welds vertices with bit-identical `positions` that also coincide in every frame of a
/// deforming mesh (`frames`, each as long as `positions`): copies a frame moves apart stay
/// apart (reported with the first such frame).
pub(crate) fn weld_positions(positions: &[Vec3], frames: &[Vec<Vec3>]) -> Weld {
    let differs = |a: usize, b: usize| {
        frames
            .iter()
            .position(|f| position_key(&f[a]) != position_key(&f[b]))
    };
    Weld::by_keys(
        positions.iter().map(position_key),
        |a, b| differs(a, b).is_none(),
        |a, b| SplitReason::Frame(differs(a, b).unwrap_or(0)),
    )
}
