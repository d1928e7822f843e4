//! A run loaded into memory ([`Animation`]): cloth positions per frame, shared topology, the
//! cloths it holds ([`ClothPart`]) and the colliders' tracks.

pub use cloth_sim::{tracks::ColliderFrame, tracks::ColliderTrack};
use std::ops::Range;

/// One cloth of an [`Animation`]: its name and where its vertices and triangles lie in the
/// animation's concatenated arrays (the cloths of a scene, in scene order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClothPart {
    /// The cloth's name (the scene's `[[cloth]] name`; `cloth` when the run does not say).
    pub name: String,
    /// Its vertices: indices into every frame of [`Animation::positions`].
    pub vertices: Range<usize>,
    /// Its triangles: indices into [`Animation::triangles`] (and [`Animation::triangle_uvs`]).
    /// They refer only to the part's own vertices.
    pub triangles: Range<usize>,
}

impl ClothPart {
    /// The single part named `name` that holds `vertices` vertices and `triangles` triangles
    /// from index 0: all of a one-cloth animation.
    pub fn whole(name: impl Into<String>, vertices: usize, triangles: usize) -> Self {
        ClothPart {
            name: name.into(),
            vertices: 0..vertices,
            triangles: 0..triangles,
        }
    }
}

/// A whole run loaded into memory: cloth positions per frame, shared topology, colliders, fps.
///
/// The cloths of a run with several are concatenated (vertices, triangles, texture
/// coordinates), so that rendering sees one mesh; [`Animation::cloths`] says which part of the
/// arrays is which cloth.
#[derive(Debug, Clone, PartialEq)]
pub struct Animation {
    /// Frame numbers, ascending (frame k is at time k / fps).
    pub frame_numbers: Vec<usize>,
    /// Cloth vertex positions per frame (metres), parallel to `frame_numbers`.
    pub positions: Vec<Vec<[f64; 3]>>,
    /// Cloth triangles (0-based), the same in every frame.
    pub triangles: Vec<[usize; 3]>,
    /// Cloth texture coordinates (of the first frame); empty when `triangle_uvs` is `None`.
    pub uvs: Vec<[f64; 2]>,
    /// Per-corner indices into `uvs`, if every face corner has one.
    pub triangle_uvs: Option<Vec<[usize; 3]>>,
    /// The cloths, in scene order: consecutive vertex and triangle ranges that cover the
    /// arrays. Empty means one cloth named `cloth` holding everything (see
    /// [`Animation::parts`]); a loaded animation always lists its cloths.
    pub cloths: Vec<ClothPart>,
    /// Colliders (empty if the run has none).
    pub colliders: Vec<ColliderTrack>,
    /// Frames per second.
    pub fps: f64,
}

impl Animation {
    /// Number of frames.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether there are no frames (never true for a loaded animation).
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Time of frame index `i` (seconds): frame number / fps.
    pub fn time(&self, i: usize) -> f64 {
        self.frame_numbers[i] as f64 / self.fps
    }

    /// The cloths: [`Animation::cloths`], or when that is empty one cloth named `cloth`
    /// holding every vertex and triangle.
    pub fn parts(&self) -> Vec<ClothPart> {
        if self.cloths.is_empty() {
            let n = self.positions.first().map_or(0, Vec::len);
            vec![ClothPart::whole("cloth", n, self.triangles.len())]
        } else {
            self.cloths.clone()
        }
    }

    /// Checks [`Animation::parts`]: consecutive vertex and triangle ranges from 0 that cover
    /// every vertex of every frame and every triangle, each triangle using only its own
    /// cloth's vertices. The message names the first cloth that is wrong.
    pub fn check_parts(&self) -> Result<(), String> {
        let (mut v, mut t) = (0, 0);
        for p in &self.parts() {
            if p.vertices.start != v || p.triangles.start != t || p.vertices.end < v {
                return Err(format!(
                    "cloth `{}` does not follow the cloth before it (vertices {}..{}, triangles \
                     {}..{})",
                    p.name, p.vertices.start, p.vertices.end, p.triangles.start, p.triangles.end
                ));
            }
            let triangles = self.triangles.get(p.triangles.clone()).ok_or_else(|| {
                format!(
                    "cloth `{}`: triangles {}..{}, but there are {}",
                    p.name,
                    p.triangles.start,
                    p.triangles.end,
                    self.triangles.len()
                )
            })?;
            if let Some(i) = triangles
                .iter()
                .position(|tri| tri.iter().any(|i| !p.vertices.contains(i)))
            {
                return Err(format!(
                    "cloth `{}`: triangle {} uses a vertex outside its vertices {}..{}",
                    p.name,
                    p.triangles.start + i,
                    p.vertices.start,
                    p.vertices.end
                ));
            }
            (v, t) = (p.vertices.end, p.triangles.end);
        }
        if let Some(k) = self.positions.iter().position(|f| f.len() != v) {
            return Err(format!(
                "frame index {k} has {} vertices, but the cloths hold {v}",
                self.positions[k].len()
            ));
        }
        if t != self.triangles.len() {
            return Err(format!(
                "the cloths hold {t} triangles, but there are {}",
                self.triangles.len()
            ));
        }
        Ok(())
    }
}
