//! Welding a glTF body's vertices: copies an exporter split at normal or texture seams become
//! one vertex again, when the skin moves them alike.

use super::body::{GltfBody, Part, Skinning};
use crate::solid::mesh::weld::{Weld, position_key};
use crate::solid::report::{SplitReason, WeldReport};

/// What moves a vertex: its node (rigid) or its skin influences, as bits (joint node, weight,
/// inverse bind matrix), sorted so that the order of the influences does not matter.
fn driver(part: &Part, v: usize) -> Vec<u64> {
    match &part.skin {
        None => vec![u64::MAX, part.node as u64],
        Some(sk) => {
            let mut list: Vec<Vec<u64>> = sk.influences[sk.offsets[v]..sk.offsets[v + 1]]
                .iter()
                .map(|&(slot, w)| {
                    let mut key = vec![sk.joints[slot] as u64, w.to_bits()];
                    key.extend(sk.inverse_bind[slot].iter().map(|x| x.to_bits()));
                    key
                })
                .collect();
            list.sort_unstable();
            list.concat()
        }
    }
}

impl GltfBody {
    /// Welds vertices at bit-identical bind-pose world positions (the rest pose, `scale`
    /// applied) that are moved alike: the same node for rigid parts, the same joints, weights
    /// and inverse bind matrices for skinned ones. Copies at one position that would move
    /// apart stay separate (reported in [`GltfBody::weld_report`]). Welded vertices keep the
    /// data of their first copy; triangles are renumbered, and those that come to repeat a
    /// vertex (zero area) are left out.
    pub(super) fn weld(&mut self) {
        let mut rest = Vec::new();
        self.emit(&self.rest, &mut rest);
        // Part and local index of each vertex.
        let owner: Vec<(usize, usize)> = self
            .parts
            .iter()
            .enumerate()
            .flat_map(|(p, part)| (0..part.positions.len()).map(move |v| (p, v)))
            .collect();
        let drive = |g: usize| driver(&self.parts[owner[g].0], owner[g].1);
        let weld = Weld::by_keys(
            rest.iter().map(position_key),
            |a, b| drive(a) == drive(b),
            |_, _| SplitReason::Skin,
        );
        self.weld_report = WeldReport {
            vertices: rest.len(),
            welded_vertices: weld.len(),
            kept_split: weld.kept_split,
        };
        if weld.is_identity() {
            return;
        }
        let mut keep = vec![false; rest.len()];
        weld.first.iter().for_each(|&v| keep[v] = true);
        let mut start = 0;
        for part in &mut self.parts {
            let n = part.positions.len();
            compact(part, &keep[start..start + n]);
            start += n;
        }
        self.triangles = self
            .triangles
            .iter()
            .map(|t| t.map(|i| weld.map[i]))
            .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
            .collect();
        self.vertex_count = weld.len();
        self.weld_map = Some(weld.map);
    }
}

/// Keeps the vertices of `part` marked in `keep`, in order, with their influences.
fn compact(part: &mut Part, keep: &[bool]) {
    let kept = |v: &usize| keep[*v];
    part.positions = (0..keep.len())
        .filter(kept)
        .map(|v| part.positions[v])
        .collect();
    if let Some(sk) = &mut part.skin {
        let mut offsets = vec![0];
        let mut influences = Vec::new();
        for v in (0..keep.len()).filter(kept) {
            influences.extend_from_slice(&sk.influences[sk.offsets[v]..sk.offsets[v + 1]]);
            offsets.push(influences.len());
        }
        *sk = Skinning {
            joints: std::mem::take(&mut sk.joints),
            inverse_bind: std::mem::take(&mut sk.inverse_bind),
            offsets,
            influences,
        };
    }
}
