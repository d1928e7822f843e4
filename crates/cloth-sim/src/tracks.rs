//! The schema of `colliders.json`: each collider's surface in its local frame and its pose at
//! every output frame, written by the run and read by the viewer.

use crate::error::SimError;
use crate::world::World;
use cloth_collide::Shape;
use cloth_mesh::Vec3;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One output frame of a collider.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColliderFrame {
    /// Rows of the 3x4 affine matrix `[R | t]`, column-vector convention:
    /// world = R * local + t (metres).
    pub matrix: [[f64; 4]; 3],
    /// Local vertices of a deforming collider at this frame (metres), or `None` to use the
    /// collider's rest vertices.
    #[serde(default)]
    pub vertices: Option<Vec<[f64; 3]>>,
}

impl ColliderFrame {
    /// Applies the frame's matrix to a local point (metres).
    pub fn transform(&self, p: [f64; 3]) -> [f64; 3] {
        let m = &self.matrix;
        std::array::from_fn(|r| m[r][0] * p[0] + m[r][1] * p[1] + m[r][2] * p[2] + m[r][3])
    }
}

/// A collider's surface and its motion over the output frames.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ColliderTrack {
    /// The collider's name (may be empty).
    #[serde(default)]
    pub name: String,
    /// Rest vertices in local coordinates (metres); analytic shapes are tessellated, planes
    /// drawn as squares around the cloth.
    pub vertices: Vec<[f64; 3]>,
    /// Triangles, 0-based indices into `vertices`.
    pub triangles: Vec<[usize; 3]>,
    /// `frames[k]` is the collider at output frame `k`; may be empty (identity, rest vertices).
    #[serde(default)]
    pub frames: Vec<ColliderFrame>,
}

impl ColliderTrack {
    /// The collider frame used for animation frame `frame`: `frames[frame]`, the last frame when
    /// the list is shorter, `None` when it is empty (identity transform, rest vertices).
    pub fn frame(&self, frame: usize) -> Option<&ColliderFrame> {
        self.frames.get(frame).or(self.frames.last())
    }

    /// Local vertices at animation frame `frame` (metres).
    pub fn local_vertices(&self, frame: usize) -> &[[f64; 3]] {
        self.frame(frame)
            .and_then(|f| f.vertices.as_deref())
            .unwrap_or(&self.vertices)
    }

    /// World-space vertices at animation frame `frame` (metres).
    pub fn world_vertices(&self, frame: usize) -> Vec<[f64; 3]> {
        let local = self.local_vertices(frame);
        match self.frame(frame) {
            Some(f) => local.iter().map(|&p| f.transform(p)).collect(),
            None => local.to_vec(),
        }
    }

    /// Whether any frame replaces the rest vertices (a deforming collider).
    pub fn is_deforming(&self) -> bool {
        self.frames.iter().any(|f| f.vertices.is_some())
    }
}

/// The contents of `colliders.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CollidersFile {
    /// The colliders, in scene order.
    #[serde(default)]
    pub colliders: Vec<ColliderTrack>,
}

fn point(p: &Vec3) -> [f64; 3] {
    [p.x, p.y, p.z]
}

impl CollidersFile {
    /// The tracks of `world`'s colliders over output frames `0..=frames` at `fps`.
    /// Planes are drawn as squares around the cloth's initial positions.
    pub fn of(world: &World, frames: usize, fps: f64) -> CollidersFile {
        let Some(set) = world.colliders() else {
            return CollidersFile::default();
        };
        let x0 = &world.cloth.x0;
        let lo = x0.iter().fold(Vec3::repeat(f64::INFINITY), |a, p| a.inf(p));
        let hi = x0
            .iter()
            .fold(Vec3::repeat(f64::NEG_INFINITY), |a, p| a.sup(p));
        let half = ((hi - lo).norm() * 0.75).max(0.5);
        let colliders = set
            .colliders()
            .iter()
            .map(|c| {
                let (verts, tris) = match &c.shape {
                    Shape::Plane => {
                        let v = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
                            .map(|(a, b)| Vec3::new(a * half, 0.0, b * half));
                        (v.to_vec(), vec![[0, 2, 1], [0, 3, 2]])
                    }
                    shape => shape.tessellate(32),
                };
                // A deforming mesh's vertices at the output frame's time (its poses may be
                // sampled faster than the frames, as glTF bodies are).
                let mut local = Vec::new();
                let frames = (0..=frames)
                    .map(|k| {
                        let t = k as f64 / fps;
                        let m = c.pose(t).to_homogeneous();
                        let deforming = c.motion.sequence_at(t, &mut local);
                        ColliderFrame {
                            matrix: std::array::from_fn(|r| std::array::from_fn(|col| m[(r, col)])),
                            vertices: deforming.then(|| local.iter().map(point).collect()),
                        }
                    })
                    .collect();
                ColliderTrack {
                    name: c.name.clone(),
                    vertices: verts.iter().map(point).collect(),
                    triangles: tris,
                    frames,
                }
            })
            .collect();
        CollidersFile { colliders }
    }

    /// Writes the file as compact JSON, atomically.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), SimError> {
        let path = path.as_ref();
        let text = serde_json::to_string(self)
            .map_err(|e| SimError::io(path, std::io::Error::other(e)))?;
        cloth_mesh::write_atomic_bytes(path, text.as_bytes()).map_err(|e| SimError::io(path, e))
    }

    /// Reads a file written by [`CollidersFile::write`].
    pub fn read(path: impl AsRef<Path>) -> Result<CollidersFile, SimError> {
        let path = path.as_ref();
        crate::stats::read_json(path)
    }
}
