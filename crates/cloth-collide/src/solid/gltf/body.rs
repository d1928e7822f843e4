//! A body read from a glTF file: what is kept of the file, and its posing at a time.

use cloth_mesh::Vec3;
use nalgebra::{Matrix4, Vector4};

use super::anim::{Channel, Trs};
use crate::solid::report::WeldReport;

/// How to read and play a glTF body.
#[derive(Clone, Debug, PartialEq)]
pub struct GltfOptions {
    /// Animation to play, by name; `None` plays the file's first animation (if it has any).
    /// Default: `None`.
    pub clip: Option<String>,
    /// Clip time at simulation time 0 (s): the clip is sampled at `t + time_offset`. Finite.
    /// Default: 0.
    pub time_offset: f64,
    /// Whether the clip repeats (clip time wrapped into [0, duration)); otherwise it holds its
    /// first pose before 0 and its last pose after its end. Default: `false`.
    pub looping: bool,
    /// Uniform scale applied to the posed world positions (e.g. 0.01 for a file in
    /// centimetres). Finite and > 0. Default: 1.
    pub scale: f64,
}

impl Default for GltfOptions {
    fn default() -> Self {
        GltfOptions {
            clip: None,
            time_offset: 0.0,
            looping: false,
            scale: 1.0,
        }
    }
}

/// A node's rest transform: TRS (animatable) or a fixed matrix.
#[derive(Clone, Copy, Debug)]
pub(super) enum Local {
    Trs(Trs),
    Matrix(Matrix4<f64>),
}

impl Local {
    /// The local matrix T * R * S (glTF 2.0 section 3.5.3).
    fn matrix(&self) -> Matrix4<f64> {
        match self {
            Local::Matrix(m) => *m,
            Local::Trs(x) => {
                let mut m = x.r.to_homogeneous();
                for c in 0..3 {
                    for r in 0..3 {
                        m[(r, c)] *= x.s[c];
                    }
                }
                m[(0, 3)] = x.t.x;
                m[(1, 3)] = x.t.y;
                m[(2, 3)] = x.t.z;
                m
            }
        }
    }
}

/// Skinning data of one mesh instance.
#[derive(Clone, Debug)]
pub(super) struct Skinning {
    /// Node index of each joint slot.
    pub(super) joints: Vec<usize>,
    /// Inverse bind matrix of each joint slot.
    pub(super) inverse_bind: Vec<Matrix4<f64>>,
    /// Influences of vertex v: `influences[offsets[v]..offsets[v + 1]]` as (slot, weight), the
    /// weights summing to 1.
    pub(super) offsets: Vec<usize>,
    pub(super) influences: Vec<(usize, f64)>,
}

/// One mesh primitive placed by a node.
#[derive(Clone, Debug)]
pub(super) struct Part {
    /// The node carrying the mesh.
    pub(super) node: usize,
    /// Vertex positions in the mesh's frame (m, before `scale`).
    pub(super) positions: Vec<Vec3>,
    /// `None`: rigid, placed by the node's world transform.
    pub(super) skin: Option<Skinning>,
}

/// The chosen animation.
#[derive(Clone, Debug)]
pub(super) struct Clip {
    pub(super) name: String,
    pub(super) duration: f64,
    pub(super) channels: Vec<Channel>,
}

/// A body read from a glTF 2.0 file, posed by linear blend skinning at any time.
///
/// Exporters split vertices where normals or texture coordinates are discontinuous; the body
/// welds the copies back into one vertex where their bind-pose positions are bit-identical and
/// the skin moves them alike (same joints, weights and inverse bind matrices), so a closed
/// surface is closed by index. Copies the skin would move apart stay separate and are counted
/// in [`GltfBody::weld_report`]. Vertices are welded by identical position only, never by
/// distance: distinct surfaces that nearly touch (lips, eyelids) stay apart.
///
/// ```no_run
/// use cloth_collide::{GltfBody, GltfOptions};
///
/// let options = GltfOptions { clip: Some("walk".into()), looping: true, ..GltfOptions::default() };
/// let body = GltfBody::load("assets/mannequin/mannequin.glb", &options)?;
/// let mut x = Vec::new();
/// body.pose(0.25, &mut x); // world positions (m) at t = 0.25 s
/// assert_eq!(x.len(), body.vertex_count());
/// # Ok::<(), cloth_collide::CollideError>(())
/// ```
#[derive(Clone, Debug)]
pub struct GltfBody {
    pub(super) rest: Vec<Local>,
    pub(super) parent: Vec<Option<usize>>,
    /// Every node, parents before children.
    pub(super) order: Vec<usize>,
    pub(super) parts: Vec<Part>,
    pub(super) triangles: Vec<[usize; 3]>,
    pub(super) vertex_count: usize,
    pub(super) clip_names: Vec<String>,
    pub(super) clip: Option<Clip>,
    pub(super) options: GltfOptions,
    /// What welding did.
    pub(super) weld_report: WeldReport,
    /// Welded index of each vertex of the file (`None` when nothing was welded).
    pub(super) weld_map: Option<Vec<usize>>,
}

impl GltfBody {
    /// Triangles of the whole body as indices into the posed positions (outward orientation
    /// as stored in the file). Triangles that repeat a vertex are left out.
    pub fn triangles(&self) -> &[[usize; 3]] {
        &self.triangles
    }

    /// Number of posed vertices (all mesh instances together, after welding).
    pub fn vertex_count(&self) -> usize {
        self.vertex_count
    }

    /// What welding did: the file's vertex count, the welded count, and copies kept apart
    /// because the skin moves them differently.
    pub fn weld_report(&self) -> &WeldReport {
        &self.weld_report
    }

    /// The posed index of each vertex of the file (mesh instances concatenated in scene
    /// order, primitives in order), or `None` when nothing was welded (the indices are the
    /// file's).
    pub fn weld_map(&self) -> Option<&[usize]> {
        self.weld_map.as_deref()
    }

    /// Names of the file's animations, in file order (unnamed ones as `#i`).
    pub fn clip_names(&self) -> Vec<&str> {
        self.clip_names.iter().map(String::as_str).collect()
    }

    /// Name of the clip being played (`None` when the file has no animation).
    pub fn clip(&self) -> Option<&str> {
        self.clip.as_ref().map(|c| c.name.as_str())
    }

    /// Duration of the clip being played (s): its last key time; 0 without a clip.
    pub fn duration(&self) -> f64 {
        self.clip.as_ref().map_or(0.0, |c| c.duration)
    }

    /// The options the body was loaded with.
    pub fn options(&self) -> &GltfOptions {
        &self.options
    }

    /// Clip time for simulation time t: t + time_offset, wrapped when looping. A non-finite t
    /// is treated as 0.
    pub fn clip_time(&self, t: f64) -> f64 {
        let t = if t.is_finite() { t } else { 0.0 };
        let tau = t + self.options.time_offset;
        let d = self.duration();
        if self.options.looping && d > 0.0 {
            tau.rem_euclid(d)
        } else {
            tau
        }
    }

    /// World vertex positions (m) at simulation time t (s), written into `out` (resized to
    /// [`GltfBody::vertex_count`]). Without an animation this is the static rest pose.
    pub fn pose(&self, t: f64, out: &mut Vec<Vec3>) {
        let tau = self.clip_time(t);
        let mut local = self.rest.clone();
        if let Some(clip) = &self.clip {
            for ch in &clip.channels {
                if let Local::Trs(trs) = &mut local[ch.node] {
                    ch.apply(tau, trs);
                }
            }
        }
        self.emit(&local, out);
    }

    /// The "preroll" pose: every node's transform mixed between its rest transform
    /// (`blend = 0`) and the clip's pose at simulation time 0 (`blend = 1`; clip time
    /// `time_offset`), translations and scales linearly and rotations by slerp, then skinned.
    /// Lets a simulation drape cloth on the rest (bind) pose and move it into the clip's first
    /// frame. `blend` is clamped to [0, 1]; NaN counts as 0.
    pub fn pose_blend(&self, blend: f64, out: &mut Vec<Vec3>) {
        let a = if blend.is_nan() {
            0.0
        } else {
            blend.clamp(0.0, 1.0)
        };
        let tau = self.clip_time(0.0);
        let mut local = self.rest.clone();
        if let Some(clip) = &self.clip {
            for ch in &clip.channels {
                if let (Local::Trs(trs), Local::Trs(rest)) =
                    (&mut local[ch.node], &self.rest[ch.node])
                {
                    ch.apply(tau, trs);
                    *trs = rest.mix(trs, a);
                }
            }
        }
        self.emit(&local, out);
    }

    /// World matrices from local transforms, parents first (no recursion).
    fn world(&self, local: &[Local]) -> Vec<Matrix4<f64>> {
        let mut world = vec![Matrix4::identity(); local.len()];
        for &n in &self.order {
            let m = local[n].matrix();
            world[n] = match self.parent[n] {
                Some(p) => world[p] * m,
                None => m,
            };
        }
        world
    }

    pub(super) fn emit(&self, local: &[Local], out: &mut Vec<Vec3>) {
        let world = self.world(local);
        let s = self.options.scale;
        out.clear();
        out.reserve(self.vertex_count);
        let apply = |m: &Matrix4<f64>, p: &Vec3| -> Vec3 {
            let q = m * Vector4::new(p.x, p.y, p.z, 1.0);
            Vec3::new(q.x, q.y, q.z) * s
        };
        for part in &self.parts {
            match &part.skin {
                None => {
                    let m = world[part.node];
                    out.extend(part.positions.iter().map(|p| apply(&m, p)));
                }
                Some(sk) => {
                    let joint: Vec<Matrix4<f64>> = sk
                        .joints
                        .iter()
                        .zip(&sk.inverse_bind)
                        .map(|(&j, ib)| world[j] * ib)
                        .collect();
                    for (v, p) in part.positions.iter().enumerate() {
                        let mut m = Matrix4::zeros();
                        for &(slot, w) in &sk.influences[sk.offsets[v]..sk.offsets[v + 1]] {
                            m += joint[slot] * w;
                        }
                        out.push(apply(&m, p));
                    }
                }
            }
        }
    }
}
