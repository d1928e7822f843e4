//! Scene files: a TOML description of one simulation (run length, cloth, pins, colliders,
//! solver settings), parsed into plain, validated, fully defaulted data.
//!
//! # Format
//!
//! World: y is up. Lengths in metres, times in seconds, masses in kilograms, angles in
//! degrees. Rotations `[rx, ry, rz]` rotate about world x, then world y, then world z
//! (`R = Rz * Ry * Rx`), see [`rotation_from_degrees`].
//!
//! ```toml
//! [run]                      # optional
//! fps = 30                   # output frames per second (default 30)
//! frames = 60                # frames to simulate after frame 0 (default 60)
//! gravity = [0, -9.81, 0]    # m/s^2 (default [0, -9.81, 0]); gravity lives in [run]
//!
//! [cloth]
//! mesh = { kind = "grid", nx = 51, ny = 51, width = 1.0, height = 1.0, pattern = "alternating" }
//! # or { kind = "disc", radius = 0.5, resolution = 20 } or { kind = "obj", path = "shirt.obj", uv_scale = 1.0 }
//! position = [0, 1, 0]       # m, where the mesh centre goes (default origin)
//! rotation = [0, 0, 0]       # degrees (default none)
//! material = "cotton"        # preset, or a table { preset = "cotton", bend = 1e-5, ... }
//! thickness = 0.005          # m, collision thickness (default 0.005)
//! drag = 0.0                 # normal air drag, kg/(m^2 s) (default 0 = no air)
//! wind = [0, 0, 0]           # m/s (default still air)
//! self_collision = false     # cloth-cloth contact (default false)
//! stretch_targets = [1, 1]   # [b_u, b_v]: rest stretch targets (default the material's, [1, 1])
//! bend_uv = [1, 1]           # [k_u, k_v]: bending multipliers along u and v (default [1, 1])
//!
//! [[pin]]                    # any number of pin groups
//! vertices = [0, 50]         # and/or region = { min = [...], max = [...] }
//! keyframes = [{ t = 0, translation = [0, 0, 0] }, { t = 1, translation = [0, 0.5, 0] }]
//!
//! [[collider]]               # any number of colliders
//! shape = "sphere"           # sphere | cylinder | capsule | box | plane | obj
//! radius = 0.3
//! position = [0, 0.5, 0]
//!
//! [solver]                   # optional, see SolverSettings for every key and default
//! integrator = "implicit"
//! ```
//!
//! Unknown keys, wrong types, out-of-range or non-finite numbers and missing files are
//! reported as a [`SceneError`] that names the key path (e.g. `pin[1].region.min`) and, when
//! the key is in the file, its line and column.

use std::ffi::OsString;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use nalgebra::{Matrix3, Rotation3, Vector3};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use cloth_forces::{
    DEFAULT_BEND_DAMPING, DEFAULT_SHEAR_DAMPING, DEFAULT_STRETCH_DAMPING, Material, PRESET_NAMES,
};

/// Largest number of cloth vertices a grid or disc mesh may have (protects against scene
/// typos that would allocate gigabytes).
pub const MAX_MESH_VERTICES: usize = 10_000_000;

/// Largest number of frames and iteration counts accepted (10^7).
const MAX_COUNT: usize = 10_000_000;

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// Error from loading or validating a scene file.
///
/// Every variant that comes from the file's content names the key path
/// (`cloth.material.stretch`, `pin[1].region.min`, `collider[0].radius`) and gives the
/// 1-based line and column in the TOML text when the key is present there.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// The text is not valid TOML, a key is unknown, a value has the wrong type or a
    /// required key is missing (reported by the TOML reader).
    #[error("scene{}{}: {message}", fmt_key(.key), fmt_location(*.line, *.column))]
    Parse {
        /// Key path of the offending entry, when known.
        key: Option<String>,
        /// What is wrong.
        message: String,
        /// 1-based line in the scene text, when known.
        line: Option<usize>,
        /// 1-based column (in characters) in the scene text, when known.
        column: Option<usize>,
    },
    /// A value is well-typed but not acceptable (out of range, non-finite, inconsistent).
    #[error("scene key `{key}`{}: {message}", fmt_location(*.line, *.column))]
    Invalid {
        /// Key path of the offending entry.
        key: String,
        /// What is wrong and what is accepted.
        message: String,
        /// 1-based line in the scene text, when the key is present there.
        line: Option<usize>,
        /// 1-based column in the scene text, when the key is present there.
        column: Option<usize>,
    },
    /// A file named by the scene does not exist or is not a regular file.
    #[error("scene key `{key}`{}: file {} not found", fmt_location(*.line, *.column), .path.display())]
    MissingFile {
        /// Key path of the entry naming the file.
        key: String,
        /// The resolved path that was looked for.
        path: PathBuf,
        /// 1-based line in the scene text, when known.
        line: Option<usize>,
        /// 1-based column in the scene text, when known.
        column: Option<usize>,
    },
    /// The scene file itself could not be read.
    #[error("cannot read scene file {}: {source}", .path.display())]
    Io {
        /// The path that was read.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The scene could not be written as TOML (only possible for non-UTF-8 paths).
    #[error("cannot write scene as TOML: {message}")]
    Serialize {
        /// What the TOML writer reported.
        message: String,
    },
}

fn fmt_key(key: &Option<String>) -> String {
    match key {
        Some(k) => format!(" key `{k}`"),
        None => String::new(),
    }
}

fn fmt_location(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(" (line {l}, column {c})"),
        (Some(l), None) => format!(" (line {l})"),
        _ => String::new(),
    }
}

impl SceneError {
    /// Key path of the offending entry (`None` for I/O errors and syntax errors that are not
    /// inside a key).
    pub fn key(&self) -> Option<&str> {
        match self {
            SceneError::Parse { key, .. } => key.as_deref(),
            SceneError::Invalid { key, .. } | SceneError::MissingFile { key, .. } => Some(key),
            SceneError::Io { .. } | SceneError::Serialize { .. } => None,
        }
    }

    /// 1-based `(line, column)` in the scene text, when known.
    pub fn line_column(&self) -> Option<(usize, usize)> {
        match self {
            SceneError::Parse { line, column, .. }
            | SceneError::Invalid { line, column, .. }
            | SceneError::MissingFile { line, column, .. } => line.zip(*column),
            SceneError::Io { .. } | SceneError::Serialize { .. } => None,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Public, resolved data
// ---------------------------------------------------------------------------------------

/// A fully resolved scene: every default applied, every value validated, every file path
/// resolved against the scene file's directory.
///
/// Serializes (TOML via [`Scene::to_toml_string`], or JSON with `serde_json`) with the same
/// keys as the scene file, so the written text loads back into an equal `Scene`; `base_dir`
/// is not written.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scene {
    /// `[run]`: frame rate, length, gravity.
    pub run: RunSettings,
    /// `[cloth]`: mesh, placement, material.
    pub cloth: ClothSettings,
    /// `[[pin]]`: pinned vertex groups, in file order.
    #[serde(rename = "pin", skip_serializing_if = "Vec::is_empty")]
    pub pins: Vec<PinSettings>,
    /// `[[collider]]`: solid obstacles, in file order.
    #[serde(rename = "collider", skip_serializing_if = "Vec::is_empty")]
    pub colliders: Vec<ColliderSettings>,
    /// `[solver]`: integrator and its parameters.
    pub solver: SolverSettings,
    /// Directory relative paths in the scene were resolved against (the scene file's
    /// directory for [`Scene::load`]). Not serialized.
    #[serde(skip)]
    pub base_dir: PathBuf,
}

/// `[run]`: how long and how finely the simulation is sampled, and the world's forces.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSettings {
    /// Output frames per second, 1/s. Key `fps`, default 30, > 0.
    pub fps: f64,
    /// Number of frames simulated after the initial frame 0 (the run ends at
    /// `frames / fps` seconds). Key `frames`, default 60, >= 1.
    pub frames: usize,
    /// Gravitational acceleration in m/s^2 (y is up, so it points down by default). Key
    /// `gravity`, default `[0, -9.81, 0]`.
    #[serde(serialize_with = "ser_vec3")]
    pub gravity: Vector3<f64>,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            fps: 30.0,
            frames: 60,
            gravity: Vector3::new(0.0, -9.81, 0.0),
        }
    }
}

impl RunSettings {
    /// Duration of one frame, `1 / fps`, in seconds.
    pub fn frame_time(&self) -> f64 {
        1.0 / self.fps
    }

    /// Simulated time at the end of the run, `frames / fps`, in seconds.
    pub fn duration(&self) -> f64 {
        self.frames as f64 / self.fps
    }
}

/// How the rest mesh of the cloth is made (key `cloth.mesh`, selected by `kind`).
///
/// Built meshes (grid, disc) lie in the local x-z plane, centred on the local origin, with
/// rest coordinates `u` along x and `v` along z; `cloth.position` and `cloth.rotation` then
/// place them in the world.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum MeshSpec {
    /// A rectangular grid of `ny` rows of vertices along z (v), each row of `nx` vertices
    /// along x (u); for `uniform` and `alternating`, vertex `i + nx * j` is column `i`, row
    /// `j` (see [`Pattern::Equilateral`] for the staggered rows).
    Grid {
        /// Vertices along x (u), >= 2.
        nx: usize,
        /// Vertices along z (v), >= 2.
        ny: usize,
        /// Extent along x in m, > 0.
        width: f64,
        /// Extent along z in m, > 0.
        height: f64,
        /// How the quads are split into triangles (default `alternating`).
        pattern: Pattern,
    },
    /// A disc in the x-z plane made of `resolution` concentric rings around a centre vertex;
    /// ring `r` (1-based) holds `6 r` vertices, so the disc has `1 + 3 R (R + 1)` vertices.
    Disc {
        /// Radius in m, > 0.
        radius: f64,
        /// Number of rings, >= 1.
        resolution: usize,
    },
    /// A triangle mesh read from a Wavefront OBJ file; its texture coordinates give the rest
    /// (u, v) coordinates.
    Obj {
        /// The OBJ file, resolved against the scene directory (key `path`, must exist).
        path: PathBuf,
        /// Metres per texture-coordinate unit: rest `(u, v) = uv_scale * vt`. Default 1, > 0.
        uv_scale: f64,
    },
}

impl MeshSpec {
    /// Number of vertices the mesh will have, when known without reading files
    /// (grid: `nx * ny`, plus `ny / 2` (rounded down) for `equilateral`;
    /// disc: `1 + 3 R (R + 1)`; OBJ: `None`).
    pub fn vertex_count(&self) -> Option<usize> {
        match self {
            MeshSpec::Grid {
                nx,
                ny,
                pattern: Pattern::Equilateral,
                ..
            } => {
                // Even rows hold nx vertices, odd rows nx + 1.
                let odd = ny / 2;
                nx.checked_mul(*ny)?.checked_add(odd)
            }
            MeshSpec::Grid { nx, ny, .. } => nx.checked_mul(*ny),
            MeshSpec::Disc { resolution, .. } => disc_vertex_count(*resolution),
            MeshSpec::Obj { .. } => None,
        }
    }
}

fn disc_vertex_count(rings: usize) -> Option<usize> {
    rings
        .checked_add(1)
        .and_then(|r1| rings.checked_mul(r1))
        .and_then(|p| p.checked_mul(3))
        .and_then(|p| p.checked_add(1))
}

/// Triangulation of a grid mesh (key `cloth.mesh.pattern`).
///
/// Bending stiffness of a hinge model depends on mesh regularity: relative to a plate, a
/// `uniform` grid is about 3x too stiff bent along its diagonals, `alternating` about 1.5x,
/// `equilateral` about 1.08x (see `PHYSICS.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Every quad split along the same diagonal.
    Uniform,
    /// Diagonals alternate in a checkerboard (the default).
    Alternating,
    /// Staggered rows giving near-equilateral triangles: odd rows are shifted by half a
    /// spacing and hold `nx + 1` vertices (the two ends stay on the straight outline), so the
    /// grid has `nx * ny + ny / 2` vertices; rows are numbered row by row.
    Equilateral,
}

/// `[cloth]`: the one cloth of the scene.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClothSettings {
    /// How the rest mesh is made (key `mesh`, required).
    pub mesh: MeshSpec,
    /// World position of the mesh's local origin (the grid or disc centre), m. Key `position`,
    /// default origin.
    #[serde(serialize_with = "ser_vec3")]
    pub position: Vector3<f64>,
    /// Rotation `[rx, ry, rz]` in degrees about world x, then y, then z, applied about the
    /// local origin before `position`. Key `rotation`, default `[0, 0, 0]`.
    #[serde(serialize_with = "ser_vec3")]
    pub rotation: Vector3<f64>,
    /// Resolved material (key `material`, default preset `cotton`).
    pub material: Material,
    /// Collision thickness in m (distance kept from solids and from itself). Key
    /// `thickness`, default 0.005, >= 0.
    pub thickness: f64,
    /// Normal air drag coefficient in kg/(m^2 s): a triangle of rest area `A` and unit normal
    /// `n` moving at `v` relative to the wind feels `-drag A ((v - wind).n) n` (linear in the
    /// normal speed, so its Jacobian enters the implicit solve). A flat sheet of areal
    /// density `rho_A` falls at the terminal speed `rho_A g / drag`; real sheets fall at about
    /// 1.2-2.1 m/s (PHYSICS.md), so `drag = rho_A g / 1.5` (0.7 for cotton) is a calibrated
    /// choice. Key `drag`, default 0 (no air), >= 0.
    pub drag: f64,
    /// Wind velocity in m/s (only acts when `drag > 0`). Key `wind`, default zero.
    #[serde(serialize_with = "ser_vec3")]
    pub wind: Vector3<f64>,
    /// Whether cloth-cloth contact is handled. Key `self_collision`, default false.
    pub self_collision: bool,
}

impl ClothSettings {
    /// Rotation matrix of `rotation` (local to world).
    pub fn rotation_matrix(&self) -> Matrix3<f64> {
        rotation_from_degrees(&self.rotation)
    }

    /// World position of a point given in the mesh's local frame: `R * local + position`.
    pub fn place(&self, local: &Vector3<f64>) -> Vector3<f64> {
        self.rotation_matrix() * local + self.position
    }
}

/// An axis-aligned world box (key `region` of a pin), m.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Region {
    /// Lower corner, m (each component <= `max`).
    #[serde(serialize_with = "ser_vec3")]
    pub min: Vector3<f64>,
    /// Upper corner, m.
    #[serde(serialize_with = "ser_vec3")]
    pub max: Vector3<f64>,
}

impl Region {
    /// Whether `p` lies in the closed box.
    pub fn contains(&self, p: &Vector3<f64>) -> bool {
        (0..3).all(|k| p[k] >= self.min[k] && p[k] <= self.max[k])
    }
}

/// A key of a piecewise linear motion (pins and colliders).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Keyframe {
    /// Time in s (>= 0, strictly increasing along the list). Key `t`.
    pub t: f64,
    /// Translation in m added to the initial positions. Key `translation`, default zero.
    #[serde(serialize_with = "ser_vec3")]
    pub translation: Vector3<f64>,
    /// Rotation `[rx, ry, rz]` in degrees (x, then y, then z) about the group's pivot (see
    /// [`PinSettings`] and [`ColliderSettings`]). Key `rotation`, default zero.
    #[serde(serialize_with = "ser_vec3")]
    pub rotation: Vector3<f64>,
}

/// Translation (m) and Euler rotation (degrees) at time `t` of a keyframed motion.
///
/// Both are interpolated linearly (component-wise) between neighbouring keys and held
/// constant before the first and after the last key. No keys means no motion (zero,
/// zero). The returned key has `t` set to the query time. Keys are expected sorted by strictly
/// increasing `t` (validated for scene files); other lists give some key's value, never a
/// panic.
pub fn interpolate_keyframes(keyframes: &[Keyframe], t: f64) -> Keyframe {
    let at = |k: &Keyframe| Keyframe {
        t,
        translation: k.translation,
        rotation: k.rotation,
    };
    match keyframes {
        [] => Keyframe {
            t,
            translation: Vector3::zeros(),
            rotation: Vector3::zeros(),
        },
        [only] => at(only),
        [first, ..] if t <= first.t => at(first),
        [.., last] if t >= last.t => at(last),
        _ => {
            // Here 2 <= len and first.t < t < last.t for sorted keys (which scene files
            // guarantee); the clamp keeps hand-built unsorted lists from indexing out of range.
            let n = keyframes.len();
            let i = keyframes
                .iter()
                .position(|k| k.t > t)
                .unwrap_or(n - 1)
                .clamp(1, n - 1);
            let (a, b) = (&keyframes[i - 1], &keyframes[i]);
            let s = (t - a.t) / (b.t - a.t);
            Keyframe {
                t,
                translation: a.translation + (b.translation - a.translation) * s,
                rotation: a.rotation + (b.rotation - a.rotation) * s,
            }
        }
    }
}

/// Rotation matrix for Euler angles `[rx, ry, rz]` in degrees, applied about world x first,
/// then world y, then world z: `R = Rz(rz) * Ry(ry) * Rx(rx)`.
pub fn rotation_from_degrees(angles: &Vector3<f64>) -> Matrix3<f64> {
    let r = angles.map(f64::to_radians);
    let rx = Rotation3::from_axis_angle(&Vector3::x_axis(), r.x);
    let ry = Rotation3::from_axis_angle(&Vector3::y_axis(), r.y);
    let rz = Rotation3::from_axis_angle(&Vector3::z_axis(), r.z);
    (rz * ry * rx).into_inner()
}

/// `[[pin]]`: a group of vertices whose positions are prescribed (hard constraints).
///
/// The group is the union of `vertices` and of the vertices whose initial world position
/// (after `cloth.position`/`rotation`) lies in `region`. With keyframes, a pinned vertex with
/// initial position `x0` follows `x(t) = c + R(t) (x0 - c) + T(t)`, where `c` is the centroid
/// of the group's initial positions (rotations turn the group about its own centre) and
/// `T`, `R` come from [`interpolate_keyframes`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PinSettings {
    /// Optional label for reports. Key `name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Explicit vertex indices (each < the mesh's vertex count when it is known). Key
    /// `vertices`, default empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub vertices: Vec<usize>,
    /// World box selecting vertices by initial position. Key `region`, optional. At least one
    /// of `vertices` and `region` is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<Region>,
    /// Motion of the group (key `keyframes`, default empty = fixed in place).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keyframes: Vec<Keyframe>,
}

impl PinSettings {
    /// Whether vertex `index` with initial world position `x0` belongs to this group.
    pub fn selects(&self, index: usize, x0: &Vector3<f64>) -> bool {
        self.vertices.contains(&index) || self.region.as_ref().is_some_and(|r| r.contains(x0))
    }

    /// Prescribed world position at time `t` (s) of a pinned vertex with initial position
    /// `x0`, given the group's initial centroid `centroid`: `c + R(t) (x0 - c) + T(t)`.
    pub fn target_position(
        &self,
        x0: &Vector3<f64>,
        centroid: &Vector3<f64>,
        t: f64,
    ) -> Vector3<f64> {
        let k = interpolate_keyframes(&self.keyframes, t);
        centroid + rotation_from_degrees(&k.rotation) * (x0 - centroid) + k.translation
    }
}

/// Shape of a collider, in its local frame (key `shape` plus the shape's own keys).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "shape", rename_all = "lowercase")]
pub enum ColliderShape {
    /// Sphere centred at the local origin.
    Sphere {
        /// Radius in m, > 0.
        radius: f64,
    },
    /// Solid cylinder with flat caps, axis along local y, centred at the local origin.
    Cylinder {
        /// Radius in m, > 0.
        radius: f64,
        /// Length along local y in m, > 0.
        length: f64,
    },
    /// Capsule: the points within `radius` of the segment from `-length/2` to `+length/2`
    /// along local y.
    Capsule {
        /// Radius in m, > 0.
        radius: f64,
        /// Length of the inner segment (without the caps) in m, >= 0.
        length: f64,
    },
    /// Box centred at the local origin.
    Box {
        /// Full edge lengths along local x, y, z in m, each > 0.
        #[serde(serialize_with = "ser_vec3")]
        size: Vector3<f64>,
    },
    /// Infinite plane through the local origin with normal local +y (solid below).
    Plane,
    /// Triangle mesh from a Wavefront OBJ file, in the local frame.
    Obj {
        /// The OBJ file, resolved against the scene directory (must exist).
        path: PathBuf,
        /// Optional animated sequence: the path pattern of per-frame OBJ files with the same
        /// topology as `path`, resolved against the scene directory, containing one
        /// placeholder `{}` (plain number) or `{:0N}` (zero-padded to N digits), e.g.
        /// `"anim/body_{:04}.obj"`. Output frame `k` (time `k / fps`) uses number
        /// `frame_start + k`; positions are interpolated linearly between frames. Every file
        /// for frames `0..=run.frames` must exist. The collider's own placement and motion
        /// are applied on top.
        #[serde(skip_serializing_if = "Option::is_none")]
        frames: Option<String>,
        /// Number of the file used for frame 0. Key `frame_start`, default 0.
        frame_start: usize,
    },
}

impl ColliderShape {
    /// Path of the OBJ file for output frame `frame` of an animated OBJ collider
    /// (`None` for other shapes and for OBJ colliders without `frames`).
    pub fn frame_path(&self, frame: usize) -> Option<PathBuf> {
        match self {
            ColliderShape::Obj {
                frames: Some(pattern),
                frame_start,
                ..
            } => {
                let p = FramePattern::parse(pattern).ok()?;
                Some(PathBuf::from(p.format(frame_start.checked_add(frame)?)))
            }
            _ => None,
        }
    }
}

/// `[[collider]]`: a solid obstacle the cloth cannot penetrate.
///
/// Pose at time `t`: with keyframes, position `position + T(t)` and orientation
/// `R(t) * R0`, i.e. the keyed rotation turns the collider about its own origin; with
/// `velocity`/`angular_velocity`, position `position + v t` and orientation
/// `exp(omega t) * R0`. Keyframes and a non-zero velocity are mutually exclusive.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColliderSettings {
    /// Optional label for reports. Key `name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Shape and its dimensions.
    #[serde(flatten)]
    pub shape: ColliderShape,
    /// World position of the local origin at t = 0, m. Key `position`, default origin.
    #[serde(serialize_with = "ser_vec3")]
    pub position: Vector3<f64>,
    /// Initial orientation `[rx, ry, rz]` in degrees (x, then y, then z). Key `rotation`,
    /// default zero.
    #[serde(serialize_with = "ser_vec3")]
    pub rotation: Vector3<f64>,
    /// Coulomb friction coefficient between cloth and this collider. Key `friction`,
    /// default 0.4, >= 0.
    pub friction: f64,
    /// Extra collision thickness of the collider surface in m. Key `thickness`, default
    /// 0.005, >= 0.
    pub thickness: f64,
    /// Keyed motion (key `keyframes`, default empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keyframes: Vec<Keyframe>,
    /// Constant linear velocity in m/s. Key `velocity`, default zero.
    #[serde(serialize_with = "ser_vec3", skip_serializing_if = "is_zero")]
    pub velocity: Vector3<f64>,
    /// Constant angular velocity in degrees/s (axis times rate, about the collider origin).
    /// Key `angular_velocity`, default zero.
    #[serde(serialize_with = "ser_vec3", skip_serializing_if = "is_zero")]
    pub angular_velocity: Vector3<f64>,
}

impl ColliderSettings {
    /// World pose at time `t` (s): the position of the local origin (m) and the local-to-world
    /// rotation matrix.
    pub fn pose_at(&self, t: f64) -> (Vector3<f64>, Matrix3<f64>) {
        let r0 = rotation_from_degrees(&self.rotation);
        if self.keyframes.is_empty() {
            let omega = self.angular_velocity.map(f64::to_radians) * t;
            let spin = Rotation3::new(omega).into_inner();
            (self.position + self.velocity * t, spin * r0)
        } else {
            let k = interpolate_keyframes(&self.keyframes, t);
            (
                self.position + k.translation,
                rotation_from_degrees(&k.rotation) * r0,
            )
        }
    }
}

/// Time integration method (key `solver.integrator`). Named `IntegratorKind` because the
/// simulation's own `Integrator` carries the settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IntegratorKind {
    /// Baraff & Witkin's backward Euler with modified PCG and adaptive steps (the default).
    Implicit,
    /// Explicit Verlet mass-spring with iterated maximum stretch.
    Verlet,
}

/// Linear solver of the implicit step: a PCG preconditioner or the direct solve (key
/// `solver.preconditioner`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SolverChoice {
    /// Jacobi: divide by the diagonal of A (as in the paper).
    Diagonal,
    /// Inverse of each vertex's 3x3 diagonal block (the default).
    BlockJacobi,
    /// Sparse direct solve of the filtered system instead of PCG (reference path).
    Direct,
}

/// How the indefinite parts of element Hessians are treated (key `solver.definiteness`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HessianDefiniteness {
    /// Positive semidefinite element Hessians by cheap analytic clamping (the default):
    /// the indefinite parts are dropped or projected per element, so the system matrix is
    /// positive definite.
    Clamped,
    /// The exact element Hessians (may be indefinite; for tests and experiments).
    Exact,
    /// Reference: numerical per-element eigenvalue clamp (slow; for tests and studies).
    Projected,
}

/// `[solver]`: integrator choice and parameters. Keys that do not apply to the chosen
/// integrator are kept but ignored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SolverSettings {
    /// Key `integrator`: `"implicit"` (default) or `"verlet"`.
    pub integrator: IntegratorKind,
    /// Implicit: largest step in s. Key `h_max`, default `1/fps` (the paper steps up to one
    /// 30 Hz frame); `h_min <= h_max <= 1/fps`.
    pub h_max: f64,
    /// Implicit: smallest step in s before the run fails. Key `h_min`, default 1e-5, > 0.
    pub h_min: f64,
    /// Implicit: relative tolerance of the (modified) PCG, the residual measured in the
    /// preconditioner norm relative to that of the filtered right-hand side. Key
    /// `cg_tolerance`, default 1e-3, in (0, 1).
    pub cg_tolerance: f64,
    /// Implicit: iteration cap of the PCG. Key `cg_max_iterations`, default 1000, >= 1.
    pub cg_max_iterations: usize,
    /// Implicit: key `preconditioner`, `"diagonal"`, `"block_jacobi"` (default) or `"direct"`.
    pub preconditioner: SolverChoice,
    /// Implicit: key `definiteness`, `"clamped"` (default), `"exact"` or `"projected"`.
    pub definiteness: HessianDefiniteness,
    /// Implicit: adaptive step control. A step is rejected and halved when any triangle's
    /// stretch `|w_u|` or `|w_v|` changes by more than this (dimensionless strain) in one
    /// step. Key `stretch_threshold`, default 0.03, > 0 (with 0.1 the 2601-vertex fixed sheet overshoots to 9% stretch in single 33 ms steps; with 0.03 it stays near 3%, at 1.7 steps per frame).
    pub stretch_threshold: f64,
    /// Implicit: after this many consecutive accepted steps the step is doubled again (up to
    /// `h_max`). Key `grow_after`, default 2 (as in the paper), >= 1.
    pub grow_after: usize,
    /// Allowed edge-length ratio `[min, max]` to the rest length, enforced by iterated
    /// position projection after each step (maximum-stretch). Key `strain_limit`, with
    /// `0 < min <= 1 <= max`; default `[0.9, 1.1]` for Verlet, off (`None`) for implicit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strain_limit: Option<[f64; 2]>,
    /// Passes over all edges of the strain-limit projection. Key `strain_iterations`,
    /// default 10, >= 1.
    pub strain_iterations: usize,
    /// Verlet: largest step in s; each frame is split into equal steps no longer than this.
    /// Key `verlet_h`, default `1 / (20 fps)`, `0 < verlet_h <= 1/fps`. Explicit steps are
    /// stable only for roughly `h < 2 sqrt(m / sum k)` (vertex mass `m`, stiffness `k` of its
    /// springs), which the scene cannot check without the mesh.
    pub verlet_h: f64,
    /// Verlet: stiffness in N/m of each spring on a mesh edge (force `k (|d| - l)` for rest
    /// length `l`). Soft on purpose: the strain limit, not the spring, keeps the cloth from
    /// stretching far. Key `spring_stiffness`, default 50, > 0.
    pub spring_stiffness: f64,
    /// Verlet: stiffness in N/m of the two-ring bending springs. Key `bend_spring_stiffness`,
    /// default 5, >= 0.
    pub bend_spring_stiffness: f64,
    /// Verlet: velocity damping rate in 1/s (Verlet update
    /// `x + (1 - d h) (x - x_prev) + a h^2`). Key `verlet_damping`, default 0.5, >= 0 with
    /// `d h < 1`.
    pub verlet_damping: f64,
}

impl SolverSettings {
    /// Defaults for `integrator` at frame rate `fps` (1/s, > 0): `h_max = 1/fps` and a
    /// `[0.9, 1.1]` strain limit for Verlet only.
    pub fn defaults(integrator: IntegratorKind, fps: f64) -> Self {
        SolverSettings {
            integrator,
            h_max: 1.0 / fps,
            h_min: 1e-5,
            cg_tolerance: 1e-3,
            cg_max_iterations: 1000,
            preconditioner: SolverChoice::BlockJacobi,
            definiteness: HessianDefiniteness::Clamped,
            stretch_threshold: 0.03,
            grow_after: 2,
            strain_limit: match integrator {
                IntegratorKind::Verlet => Some([0.9, 1.1]),
                IntegratorKind::Implicit => None,
            },
            strain_iterations: 10,
            verlet_h: 1.0 / (20.0 * fps),
            spring_stiffness: 50.0,
            bend_spring_stiffness: 5.0,
            verlet_damping: 0.5,
        }
    }
}

impl Default for SolverSettings {
    /// Implicit integrator at 30 frames per second.
    fn default() -> Self {
        SolverSettings::defaults(IntegratorKind::Implicit, 30.0)
    }
}

impl Scene {
    /// Parses and validates scene text; relative file paths are resolved against
    /// `base_dir` (and must exist).
    ///
    /// # Example
    ///
    /// ```
    /// use std::path::Path;
    /// use cloth_sim::Scene;
    ///
    /// let scene = Scene::from_toml_str(
    ///     r#"
    ///     [cloth]
    ///     mesh = { kind = "grid", nx = 11, ny = 11, width = 0.5, height = 0.5 }
    ///     position = [0, 1, 0]
    ///     material = { preset = "silk", bend = 1e-6 }
    ///     [[pin]]
    ///     vertices = [0, 10]
    ///     "#,
    ///     Path::new("."),
    /// )?;
    /// assert_eq!(scene.cloth.mesh.vertex_count(), Some(121));
    /// assert_eq!(scene.cloth.material.bend, 1e-6); // overrides the silk preset
    /// assert_eq!(scene.run.fps, 30.0); // default
    ///
    /// // Mistakes name the key and its place in the text.
    /// let text = "[cloth]\nmesh = { kind = \"disc\", radius = -1, resolution = 4 }\n";
    /// let err = Scene::from_toml_str(text, Path::new(".")).unwrap_err();
    /// assert_eq!(err.key(), Some("cloth.mesh.radius"));
    /// assert_eq!(err.line_column(), Some((2, 34)));
    /// # Ok::<(), cloth_sim::SceneError>(())
    /// ```
    pub fn from_toml_str(text: &str, base_dir: &Path) -> Result<Scene, SceneError> {
        let doc = DeTable::parse(text).ok();
        let ctx = Ctx {
            text,
            doc: doc.as_ref(),
            base_dir,
        };
        let raw: RawScene = toml::from_str(text).map_err(|e| ctx.parse_error(&e))?;
        ctx.resolve(raw)
    }

    /// Reads the scene file at `path` and parses it with [`Scene::from_toml_str`], resolving
    /// relative paths against the file's directory.
    pub fn load(path: &Path) -> Result<Scene, SceneError> {
        let text = std::fs::read_to_string(path).map_err(|source| SceneError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let dir = path.parent().unwrap_or(Path::new(""));
        Scene::from_toml_str(&text, dir)
    }

    /// The scene as TOML with the scene-file keys, every default written out. Loading the text
    /// with the same `base_dir` gives back an equal scene.
    pub fn to_toml_string(&self) -> Result<String, SceneError> {
        toml::to_string(self).map_err(|e| SceneError::Serialize {
            message: e.to_string(),
        })
    }

    /// Duration of one output frame, `1 / fps`, in s.
    pub fn frame_time(&self) -> f64 {
        self.run.frame_time()
    }
}

fn is_zero(v: &Vector3<f64>) -> bool {
    *v == Vector3::zeros()
}

fn ser_vec3<S: Serializer>(v: &Vector3<f64>, s: S) -> Result<S::Ok, S::Error> {
    [v.x, v.y, v.z].serialize(s)
}

// ---------------------------------------------------------------------------------------
// Raw (as written) data
// ---------------------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScene {
    #[serde(default)]
    run: RawRun,
    cloth: RawCloth,
    #[serde(default)]
    pin: Vec<RawPin>,
    #[serde(default)]
    collider: Vec<RawCollider>,
    #[serde(default)]
    solver: RawSolver,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawRun {
    fps: Option<f64>,
    frames: Option<usize>,
    gravity: Option<[f64; 3]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCloth {
    mesh: RawMesh,
    position: Option<[f64; 3]>,
    rotation: Option<[f64; 3]>,
    material: Option<RawMaterial>,
    thickness: Option<f64>,
    drag: Option<f64>,
    wind: Option<[f64; 3]>,
    self_collision: Option<bool>,
    stretch_targets: Option<[f64; 2]>,
    bend_uv: Option<[f64; 2]>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum MeshKind {
    Grid,
    Disc,
    Obj,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMesh {
    kind: MeshKind,
    nx: Option<usize>,
    ny: Option<usize>,
    width: Option<f64>,
    height: Option<f64>,
    pattern: Option<Pattern>,
    radius: Option<f64>,
    resolution: Option<usize>,
    path: Option<String>,
    uv_scale: Option<f64>,
}

enum RawMaterial {
    Preset(String),
    Table(RawMaterialTable),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMaterialTable {
    preset: Option<String>,
    density: Option<f64>,
    stretch: Option<PairOrScalar>,
    shear: Option<f64>,
    bend: Option<f64>,
    stretch_damping: Option<f64>,
    shear_damping: Option<f64>,
    bend_damping: Option<f64>,
    stretch_targets: Option<[f64; 2]>,
    bend_uv: Option<[f64; 2]>,
}

impl<'de> Deserialize<'de> for RawMaterial {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawMaterial;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(
                    f,
                    "a preset name ({}) or a material table",
                    PRESET_NAMES.join(", ")
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawMaterial, E> {
                Ok(RawMaterial::Preset(v.to_owned()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawMaterial, A::Error> {
                RawMaterialTable::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawMaterial::Table)
            }
        }
        d.deserialize_any(V)
    }
}

/// A number `k` (meaning `[k, k]`) or a pair `[k_u, k_v]`.
struct PairOrScalar([f64; 2]);

impl<'de> Deserialize<'de> for PairOrScalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PairOrScalar;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or an array [u, v] of two numbers")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<PairOrScalar, E> {
                Ok(PairOrScalar([v, v]))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<PairOrScalar, E> {
                self.visit_f64(v as f64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<PairOrScalar, E> {
                self.visit_f64(v as f64)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PairOrScalar, A::Error> {
                let u: f64 = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let v: f64 = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(1, &self))?;
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::invalid_length(3, &self));
                }
                Ok(PairOrScalar([u, v]))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRegion {
    min: [f64; 3],
    max: [f64; 3],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKeyframe {
    t: f64,
    translation: Option<[f64; 3]>,
    rotation: Option<[f64; 3]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPin {
    name: Option<String>,
    vertices: Option<Vec<usize>>,
    region: Option<RawRegion>,
    keyframes: Option<Vec<RawKeyframe>>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum ShapeKind {
    Sphere,
    Cylinder,
    Capsule,
    Box,
    Plane,
    Obj,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCollider {
    name: Option<String>,
    shape: ShapeKind,
    radius: Option<f64>,
    length: Option<f64>,
    size: Option<[f64; 3]>,
    path: Option<String>,
    frames: Option<String>,
    frame_start: Option<usize>,
    position: Option<[f64; 3]>,
    rotation: Option<[f64; 3]>,
    friction: Option<f64>,
    thickness: Option<f64>,
    keyframes: Option<Vec<RawKeyframe>>,
    velocity: Option<[f64; 3]>,
    angular_velocity: Option<[f64; 3]>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSolver {
    integrator: Option<IntegratorKind>,
    h_max: Option<f64>,
    h_min: Option<f64>,
    cg_tolerance: Option<f64>,
    cg_max_iterations: Option<usize>,
    preconditioner: Option<SolverChoice>,
    definiteness: Option<HessianDefiniteness>,
    stretch_threshold: Option<f64>,
    strain_limit: Option<[f64; 2]>,
    strain_iterations: Option<usize>,
    grow_after: Option<usize>,
    verlet_h: Option<f64>,
    spring_stiffness: Option<f64>,
    bend_spring_stiffness: Option<f64>,
    verlet_damping: Option<f64>,
}

// ---------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------

/// A `{}` / `{:0N}` file-number pattern split around its placeholder.
struct FramePattern<'a> {
    prefix: &'a str,
    width: usize,
    suffix: &'a str,
}

impl<'a> FramePattern<'a> {
    fn parse(pattern: &'a str) -> Result<Self, String> {
        let open = pattern
            .find('{')
            .ok_or_else(|| "needs a placeholder `{}` or `{:0N}` for the frame number".to_owned())?;
        let close = pattern[open..]
            .find('}')
            .map(|c| open + c)
            .ok_or_else(|| "placeholder `{` is not closed by `}`".to_owned())?;
        let spec = &pattern[open + 1..close];
        let width = if spec.is_empty() {
            0
        } else {
            let digits = spec
                .strip_prefix(":0")
                .filter(|d| !d.is_empty() && d.len() <= 2 && d.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| format!("placeholder `{{{spec}}}` must be `{{}}` or `{{:0N}}`"))?;
            digits.parse::<usize>().map_err(|e| e.to_string())?
        };
        let suffix = &pattern[close + 1..];
        if suffix.contains('{') || suffix.contains('}') {
            return Err("only one placeholder is allowed".to_owned());
        }
        Ok(FramePattern {
            prefix: &pattern[..open],
            width,
            suffix,
        })
    }

    fn format(&self, number: usize) -> String {
        format!(
            "{}{:0w$}{}",
            self.prefix,
            number,
            self.suffix,
            w = self.width
        )
    }
}

/// Validation context: the text (for line/column), its spanned parse (for key spans) and the
/// directory relative paths are resolved against.
struct Ctx<'a> {
    text: &'a str,
    doc: Option<&'a Spanned<DeTable<'a>>>,
    base_dir: &'a Path,
}

enum Seg<'k> {
    Key(&'k str),
    Index(usize),
}

fn split_path(path: &str) -> Vec<Seg<'_>> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        out.push(Seg::Key(name));
        while let Some(close) = rest.find(']') {
            if let Ok(i) = rest[1..close].parse() {
                out.push(Seg::Index(i));
            }
            rest = &rest[close + 1..];
        }
    }
    out
}

fn span_contains(span: &Range<usize>, pos: usize) -> bool {
    span.start <= pos && pos < span.end
}

/// Deepest key path whose key or value span contains byte offset `pos`.
fn path_in_table(table: &DeTable<'_>, pos: usize, prefix: &str) -> Option<String> {
    for (k, v) in table.iter() {
        let p = if prefix.is_empty() {
            k.get_ref().to_string()
        } else {
            format!("{prefix}.{}", k.get_ref())
        };
        if let Some(deeper) = path_in_value(v.get_ref(), pos, &p) {
            return Some(deeper);
        }
        if span_contains(&k.span(), pos) || span_contains(&v.span(), pos) {
            return Some(p);
        }
    }
    None
}

fn path_in_value(value: &DeValue<'_>, pos: usize, prefix: &str) -> Option<String> {
    match value {
        DeValue::Table(t) => path_in_table(t, pos, prefix),
        DeValue::Array(a) => a.iter().enumerate().find_map(|(i, item)| {
            let p = format!("{prefix}[{i}]");
            path_in_value(item.get_ref(), pos, &p)
                .or_else(|| span_contains(&item.span(), pos).then_some(p))
        }),
        _ => None,
    }
}

impl<'a> Ctx<'a> {
    /// 1-based line and column (in characters) of byte offset `pos`.
    fn line_column(&self, pos: usize) -> (usize, usize) {
        let pos = pos.min(self.text.len());
        let mut pos = pos;
        while !self.text.is_char_boundary(pos) {
            pos -= 1;
        }
        let before = &self.text[..pos];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        (line, column)
    }

    /// Span of the value at `path`, or of its deepest present ancestor below the root.
    fn span_of(&self, path: &str) -> Option<Range<usize>> {
        let doc = self.doc?;
        let mut value: Option<&Spanned<DeValue<'_>>> = None;
        let mut table: Option<&DeTable<'_>> = Some(doc.get_ref());
        for seg in split_path(path) {
            let next = match (seg, value.map(|v| v.get_ref())) {
                (Seg::Key(name), None) => table
                    .and_then(|t| t.iter().find(|(k, _)| k.get_ref() == name))
                    .map(|(_, v)| v),
                (Seg::Key(name), Some(DeValue::Table(t))) => {
                    t.iter().find(|(k, _)| k.get_ref() == name).map(|(_, v)| v)
                }
                (Seg::Index(i), Some(DeValue::Array(a))) => a.get(i),
                _ => None,
            };
            match next {
                Some(v) => {
                    value = Some(v);
                    table = None;
                }
                None => break,
            }
        }
        value.map(|v| v.span())
    }

    fn location_of(&self, path: &str) -> (Option<usize>, Option<usize>) {
        match self.span_of(path) {
            Some(s) => {
                let (l, c) = self.line_column(s.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        }
    }

    fn parse_error(&self, e: &toml::de::Error) -> SceneError {
        let message = e.message().trim().to_owned();
        let span = e.span();
        // An empty span marks the document root or a syntax error between tokens: no key.
        let mut key = match (self.doc, &span) {
            (Some(doc), Some(s)) if !s.is_empty() => path_in_table(doc.get_ref(), s.start, ""),
            _ => None,
        };
        // "missing field `x`" is reported at the enclosing table: name the missing key.
        if let Some(rest) = message.strip_prefix("missing field `")
            && let Some(field) = rest.split('`').next()
        {
            key = Some(match key {
                Some(k) => format!("{k}.{field}"),
                None => field.to_owned(),
            });
        }
        let (line, column) = match span {
            Some(s) => {
                let (l, c) = self.line_column(s.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        SceneError::Parse {
            key,
            message,
            line,
            column,
        }
    }

    fn invalid(&self, key: &str, message: impl Into<String>) -> SceneError {
        let (line, column) = self.location_of(key);
        SceneError::Invalid {
            key: key.to_owned(),
            message: message.into(),
            line,
            column,
        }
    }

    fn finite(&self, key: &str, v: f64) -> Result<f64, SceneError> {
        if v.is_finite() {
            Ok(v)
        } else {
            Err(self.invalid(key, format!("must be a finite number, got {v}")))
        }
    }

    fn positive(&self, key: &str, v: f64) -> Result<f64, SceneError> {
        self.finite(key, v)?;
        if v > 0.0 {
            Ok(v)
        } else {
            Err(self.invalid(key, format!("must be > 0, got {v}")))
        }
    }

    fn non_negative(&self, key: &str, v: f64) -> Result<f64, SceneError> {
        self.finite(key, v)?;
        if v >= 0.0 {
            Ok(v)
        } else {
            Err(self.invalid(key, format!("must be >= 0, got {v}")))
        }
    }

    fn count(&self, key: &str, v: usize, min: usize) -> Result<usize, SceneError> {
        if v < min {
            Err(self.invalid(key, format!("must be >= {min}, got {v}")))
        } else if v > MAX_COUNT {
            Err(self.invalid(key, format!("must be <= {MAX_COUNT}, got {v}")))
        } else {
            Ok(v)
        }
    }

    fn vec3(&self, key: &str, v: [f64; 3]) -> Result<Vector3<f64>, SceneError> {
        for (i, x) in v.iter().enumerate() {
            self.finite(&format!("{key}[{i}]"), *x)?;
        }
        Ok(Vector3::from(v))
    }

    fn opt_vec3(&self, key: &str, v: Option<[f64; 3]>) -> Result<Vector3<f64>, SceneError> {
        v.map_or(Ok(Vector3::zeros()), |v| self.vec3(key, v))
    }

    fn unused<T>(&self, key: &str, v: &Option<T>, context: &str) -> Result<(), SceneError> {
        match v {
            Some(_) => Err(self.invalid(key, format!("is not used by {context}"))),
            None => Ok(()),
        }
    }

    fn existing_file(&self, key: &str, rel: &str) -> Result<PathBuf, SceneError> {
        if rel.is_empty() {
            return Err(self.invalid(key, "must not be empty"));
        }
        let path = self.base_dir.join(rel);
        if path.is_file() {
            Ok(path)
        } else {
            let (line, column) = self.location_of(key);
            Err(SceneError::MissingFile {
                key: key.to_owned(),
                path,
                line,
                column,
            })
        }
    }

    fn resolve(&self, raw: RawScene) -> Result<Scene, SceneError> {
        let run = self.run(raw.run)?;
        let cloth = self.cloth(raw.cloth)?;
        let count = cloth.mesh.vertex_count();
        let pins = raw
            .pin
            .into_iter()
            .enumerate()
            .map(|(i, p)| self.pin(&format!("pin[{i}]"), p, count))
            .collect::<Result<Vec<_>, _>>()?;
        let colliders = raw
            .collider
            .into_iter()
            .enumerate()
            .map(|(i, c)| self.collider(&format!("collider[{i}]"), c, &run))
            .collect::<Result<Vec<_>, _>>()?;
        let solver = self.solver(raw.solver, &run)?;
        Ok(Scene {
            run,
            cloth,
            pins,
            colliders,
            solver,
            base_dir: self.base_dir.to_path_buf(),
        })
    }

    fn run(&self, r: RawRun) -> Result<RunSettings, SceneError> {
        let d = RunSettings::default();
        Ok(RunSettings {
            fps: self.positive("run.fps", r.fps.unwrap_or(d.fps))?,
            frames: self.count("run.frames", r.frames.unwrap_or(d.frames), 1)?,
            gravity: r
                .gravity
                .map_or(Ok(d.gravity), |g| self.vec3("run.gravity", g))?,
        })
    }

    fn mesh(&self, m: RawMesh) -> Result<MeshSpec, SceneError> {
        let k = "cloth.mesh";
        let need = |name: &str, v: Option<f64>| -> Result<f64, SceneError> {
            let key = format!("{k}.{name}");
            let v = v.ok_or_else(|| self.invalid(&key, "is required for this mesh kind"))?;
            self.positive(&key, v)
        };
        let need_count = |name: &str, v: Option<usize>, min: usize| {
            let key = format!("{k}.{name}");
            let v = v.ok_or_else(|| self.invalid(&key, "is required for this mesh kind"))?;
            self.count(&key, v, min)
        };
        let spec = match m.kind {
            MeshKind::Grid => {
                let ctx = "kind = \"grid\"";
                self.unused("cloth.mesh.radius", &m.radius, ctx)?;
                self.unused("cloth.mesh.resolution", &m.resolution, ctx)?;
                self.unused("cloth.mesh.path", &m.path, ctx)?;
                self.unused("cloth.mesh.uv_scale", &m.uv_scale, ctx)?;
                MeshSpec::Grid {
                    nx: need_count("nx", m.nx, 2)?,
                    ny: need_count("ny", m.ny, 2)?,
                    width: need("width", m.width)?,
                    height: need("height", m.height)?,
                    pattern: m.pattern.unwrap_or(Pattern::Alternating),
                }
            }
            MeshKind::Disc => {
                let ctx = "kind = \"disc\"";
                self.unused("cloth.mesh.nx", &m.nx, ctx)?;
                self.unused("cloth.mesh.ny", &m.ny, ctx)?;
                self.unused("cloth.mesh.width", &m.width, ctx)?;
                self.unused("cloth.mesh.height", &m.height, ctx)?;
                self.unused("cloth.mesh.pattern", &m.pattern, ctx)?;
                self.unused("cloth.mesh.path", &m.path, ctx)?;
                self.unused("cloth.mesh.uv_scale", &m.uv_scale, ctx)?;
                MeshSpec::Disc {
                    radius: need("radius", m.radius)?,
                    resolution: need_count("resolution", m.resolution, 1)?,
                }
            }
            MeshKind::Obj => {
                let ctx = "kind = \"obj\"";
                self.unused("cloth.mesh.nx", &m.nx, ctx)?;
                self.unused("cloth.mesh.ny", &m.ny, ctx)?;
                self.unused("cloth.mesh.width", &m.width, ctx)?;
                self.unused("cloth.mesh.height", &m.height, ctx)?;
                self.unused("cloth.mesh.pattern", &m.pattern, ctx)?;
                self.unused("cloth.mesh.radius", &m.radius, ctx)?;
                self.unused("cloth.mesh.resolution", &m.resolution, ctx)?;
                let rel = m.path.ok_or_else(|| {
                    self.invalid("cloth.mesh.path", "is required for kind = \"obj\"")
                })?;
                MeshSpec::Obj {
                    path: self.existing_file("cloth.mesh.path", &rel)?,
                    uv_scale: self.positive("cloth.mesh.uv_scale", m.uv_scale.unwrap_or(1.0))?,
                }
            }
        };
        match spec.vertex_count() {
            Some(n) if n <= MAX_MESH_VERTICES => Ok(spec),
            None if matches!(spec, MeshSpec::Obj { .. }) => Ok(spec),
            n => Err(self.invalid(
                k,
                format!(
                    "has {} vertices, more than the limit {MAX_MESH_VERTICES}",
                    n.map_or("too many".to_owned(), |n| n.to_string())
                ),
            )),
        }
    }

    fn material(&self, m: Option<RawMaterial>) -> Result<Material, SceneError> {
        let k = "cloth.material";
        let lookup = |key: &str, name: &str| {
            Material::preset(name).ok_or_else(|| {
                self.invalid(
                    key,
                    format!(
                        "unknown material preset `{name}`, expected one of: {}",
                        PRESET_NAMES.join(", ")
                    ),
                )
            })
        };
        let t = match m {
            None => return lookup(k, "cotton"),
            Some(RawMaterial::Preset(name)) => return lookup(k, &name),
            Some(RawMaterial::Table(t)) => t,
        };
        let base = match &t.preset {
            Some(name) => Some(lookup("cloth.material.preset", name)?),
            None => None,
        };
        let pick = |name: &str, v: Option<f64>, from: Option<f64>| -> Result<f64, SceneError> {
            let key = format!("{k}.{name}");
            v.or(from).ok_or_else(|| {
                self.invalid(&key, "is required when the material table has no `preset`")
            })
        };
        let b = base.as_ref();
        let density = pick("density", t.density, b.map(|m| m.density))?;
        let stretch = match (t.stretch, b) {
            (Some(PairOrScalar(s)), _) => s,
            (None, Some(m)) => m.stretch,
            (None, None) => {
                return Err(self.invalid(
                    "cloth.material.stretch",
                    "is required when the material table has no `preset`",
                ));
            }
        };
        let spec = Material {
            density: self.positive("cloth.material.density", density)?,
            stretch: [
                self.positive("cloth.material.stretch", stretch[0])?,
                self.positive("cloth.material.stretch", stretch[1])?,
            ],
            shear: self.non_negative(
                "cloth.material.shear",
                pick("shear", t.shear, b.map(|m| m.shear))?,
            )?,
            bend: self.non_negative(
                "cloth.material.bend",
                pick("bend", t.bend, b.map(|m| m.bend))?,
            )?,
            stretch_damping: self.non_negative(
                "cloth.material.stretch_damping",
                t.stretch_damping
                    .or(b.map(|m| m.stretch_damping))
                    .unwrap_or(DEFAULT_STRETCH_DAMPING),
            )?,
            shear_damping: self.non_negative(
                "cloth.material.shear_damping",
                t.shear_damping
                    .or(b.map(|m| m.shear_damping))
                    .unwrap_or(DEFAULT_SHEAR_DAMPING),
            )?,
            bend_damping: self.non_negative(
                "cloth.material.bend_damping",
                t.bend_damping
                    .or(b.map(|m| m.bend_damping))
                    .unwrap_or(DEFAULT_BEND_DAMPING),
            )?,
            stretch_targets: {
                let s = t
                    .stretch_targets
                    .or(b.map(|m| m.stretch_targets))
                    .unwrap_or([1.0, 1.0]);
                [
                    self.positive("cloth.material.stretch_targets[0]", s[0])?,
                    self.positive("cloth.material.stretch_targets[1]", s[1])?,
                ]
            },
            bend_uv: {
                let s = t.bend_uv.or(b.map(|m| m.bend_uv)).unwrap_or([1.0, 1.0]);
                [
                    self.non_negative("cloth.material.bend_uv[0]", s[0])?,
                    self.non_negative("cloth.material.bend_uv[1]", s[1])?,
                ]
            },
        };
        Ok(spec)
    }

    fn cloth(&self, c: RawCloth) -> Result<ClothSettings, SceneError> {
        let mut material = self.material(c.material)?;
        // `[cloth]` may also carry the anisotropy keys; they override the material's.
        if let Some(s) = c.stretch_targets {
            material.stretch_targets = [
                self.positive("cloth.stretch_targets[0]", s[0])?,
                self.positive("cloth.stretch_targets[1]", s[1])?,
            ];
        }
        if let Some(s) = c.bend_uv {
            material.bend_uv = [
                self.non_negative("cloth.bend_uv[0]", s[0])?,
                self.non_negative("cloth.bend_uv[1]", s[1])?,
            ];
        }
        Ok(ClothSettings {
            mesh: self.mesh(c.mesh)?,
            position: self.opt_vec3("cloth.position", c.position)?,
            rotation: self.opt_vec3("cloth.rotation", c.rotation)?,
            material,
            thickness: self.non_negative("cloth.thickness", c.thickness.unwrap_or(0.005))?,
            drag: self.non_negative("cloth.drag", c.drag.unwrap_or(0.0))?,
            wind: self.opt_vec3("cloth.wind", c.wind)?,
            self_collision: c.self_collision.unwrap_or(false),
        })
    }

    fn keyframes(
        &self,
        key: &str,
        keys: Option<Vec<RawKeyframe>>,
    ) -> Result<Vec<Keyframe>, SceneError> {
        let mut out: Vec<Keyframe> = Vec::new();
        for (i, k) in keys.unwrap_or_default().into_iter().enumerate() {
            let p = format!("{key}[{i}]");
            let t = self.non_negative(&format!("{p}.t"), k.t)?;
            if let Some(prev) = out.last()
                && t <= prev.t
            {
                return Err(self.invalid(
                    &format!("{p}.t"),
                    format!(
                        "keyframe times must increase strictly, got {t} after {}",
                        prev.t
                    ),
                ));
            }
            out.push(Keyframe {
                t,
                translation: self.opt_vec3(&format!("{p}.translation"), k.translation)?,
                rotation: self.opt_vec3(&format!("{p}.rotation"), k.rotation)?,
            });
        }
        Ok(out)
    }

    fn pin(&self, k: &str, p: RawPin, count: Option<usize>) -> Result<PinSettings, SceneError> {
        let vertices = p.vertices.unwrap_or_default();
        if let Some(n) = count
            && let Some((i, v)) = vertices.iter().enumerate().find(|(_, v)| **v >= n)
        {
            return Err(self.invalid(
                &format!("{k}.vertices[{i}]"),
                format!("vertex {v} does not exist (the mesh has {n} vertices)"),
            ));
        }
        let region = match p.region {
            Some(r) => {
                let min = self.vec3(&format!("{k}.region.min"), r.min)?;
                let max = self.vec3(&format!("{k}.region.max"), r.max)?;
                if let Some(axis) = (0..3).find(|&a| min[a] > max[a]) {
                    return Err(self.invalid(
                        &format!("{k}.region"),
                        format!(
                            "min[{axis}] = {} is greater than max[{axis}] = {}",
                            min[axis], max[axis]
                        ),
                    ));
                }
                Some(Region { min, max })
            }
            None => None,
        };
        if vertices.is_empty() && region.is_none() {
            return Err(self.invalid(k, "a pin needs a non-empty `vertices` list or a `region`"));
        }
        Ok(PinSettings {
            name: p.name,
            vertices,
            region,
            keyframes: self.keyframes(&format!("{k}.keyframes"), p.keyframes)?,
        })
    }

    fn collider(
        &self,
        k: &str,
        c: RawCollider,
        run: &RunSettings,
    ) -> Result<ColliderSettings, SceneError> {
        let key = |name: &str| format!("{k}.{name}");
        let need = |name: &str, v: Option<f64>| -> Result<f64, SceneError> {
            v.ok_or_else(|| self.invalid(&key(name), "is required for this shape"))
        };
        let shape_name = match c.shape {
            ShapeKind::Sphere => "sphere",
            ShapeKind::Cylinder => "cylinder",
            ShapeKind::Capsule => "capsule",
            ShapeKind::Box => "box",
            ShapeKind::Plane => "plane",
            ShapeKind::Obj => "obj",
        };
        let ctx = format!("shape = \"{shape_name}\"");
        let uses_radius = matches!(
            c.shape,
            ShapeKind::Sphere | ShapeKind::Cylinder | ShapeKind::Capsule
        );
        let uses_length = matches!(c.shape, ShapeKind::Cylinder | ShapeKind::Capsule);
        if !uses_radius {
            self.unused(&key("radius"), &c.radius, &ctx)?;
        }
        if !uses_length {
            self.unused(&key("length"), &c.length, &ctx)?;
        }
        if c.shape != ShapeKind::Box {
            self.unused(&key("size"), &c.size, &ctx)?;
        }
        if c.shape != ShapeKind::Obj {
            self.unused(&key("path"), &c.path, &ctx)?;
            self.unused(&key("frames"), &c.frames, &ctx)?;
            self.unused(&key("frame_start"), &c.frame_start, &ctx)?;
        }
        let shape = match c.shape {
            ShapeKind::Sphere => ColliderShape::Sphere {
                radius: self.positive(&key("radius"), need("radius", c.radius)?)?,
            },
            ShapeKind::Cylinder => ColliderShape::Cylinder {
                radius: self.positive(&key("radius"), need("radius", c.radius)?)?,
                length: self.positive(&key("length"), need("length", c.length)?)?,
            },
            ShapeKind::Capsule => ColliderShape::Capsule {
                radius: self.positive(&key("radius"), need("radius", c.radius)?)?,
                length: self.non_negative(&key("length"), need("length", c.length)?)?,
            },
            ShapeKind::Box => {
                let size = c
                    .size
                    .ok_or_else(|| self.invalid(&key("size"), "is required for shape = \"box\""))?;
                for (i, s) in size.iter().enumerate() {
                    self.positive(&format!("{k}.size[{i}]"), *s)?;
                }
                ColliderShape::Box {
                    size: Vector3::from(size),
                }
            }
            ShapeKind::Plane => ColliderShape::Plane,
            ShapeKind::Obj => {
                let rel = c
                    .path
                    .ok_or_else(|| self.invalid(&key("path"), "is required for shape = \"obj\""))?;
                let path = self.existing_file(&key("path"), &rel)?;
                let frame_start = c.frame_start.unwrap_or(0);
                let frames = match c.frames {
                    None => None,
                    Some(pattern) => {
                        Some(self.frames(&key("frames"), &pattern, frame_start, run)?)
                    }
                };
                ColliderShape::Obj {
                    path,
                    frames,
                    frame_start,
                }
            }
        };
        let keyframes = self.keyframes(&key("keyframes"), c.keyframes)?;
        let velocity = self.opt_vec3(&key("velocity"), c.velocity)?;
        let angular_velocity = self.opt_vec3(&key("angular_velocity"), c.angular_velocity)?;
        if !keyframes.is_empty()
            && (velocity != Vector3::zeros() || angular_velocity != Vector3::zeros())
        {
            let which = if velocity != Vector3::zeros() {
                "velocity"
            } else {
                "angular_velocity"
            };
            return Err(self.invalid(
                &key(which),
                "cannot be combined with `keyframes`; use one kind of motion",
            ));
        }
        Ok(ColliderSettings {
            name: c.name,
            shape,
            position: self.opt_vec3(&key("position"), c.position)?,
            rotation: self.opt_vec3(&key("rotation"), c.rotation)?,
            friction: self.non_negative(&key("friction"), c.friction.unwrap_or(0.4))?,
            thickness: self.non_negative(&key("thickness"), c.thickness.unwrap_or(0.005))?,
            keyframes,
            velocity,
            angular_velocity,
        })
    }

    /// Validates an OBJ frame pattern, checks that every frame file exists, and returns the
    /// pattern resolved against the base directory.
    fn frames(
        &self,
        key: &str,
        pattern: &str,
        frame_start: usize,
        run: &RunSettings,
    ) -> Result<String, SceneError> {
        FramePattern::parse(pattern).map_err(|m| self.invalid(key, m))?;
        let joined = self.base_dir.join(pattern);
        let resolved = joined
            .to_str()
            .ok_or_else(|| self.invalid(key, "the scene directory is not valid UTF-8"))?
            .to_owned();
        let p = FramePattern::parse(&resolved)
            .map_err(|m| self.invalid(key, format!("the scene directory contains braces: {m}")))?;
        for k in 0..=run.frames {
            let number = frame_start
                .checked_add(k)
                .ok_or_else(|| self.invalid(key, "frame numbers overflow"))?;
            let path = PathBuf::from(OsString::from(p.format(number)));
            if !path.is_file() {
                let (line, column) = self.location_of(key);
                return Err(SceneError::MissingFile {
                    key: key.to_owned(),
                    path,
                    line,
                    column,
                });
            }
        }
        Ok(resolved)
    }

    fn solver(&self, s: RawSolver, run: &RunSettings) -> Result<SolverSettings, SceneError> {
        let integrator = s.integrator.unwrap_or(IntegratorKind::Implicit);
        let d = SolverSettings::defaults(integrator, run.fps);
        let h_max = self.positive("solver.h_max", s.h_max.unwrap_or(d.h_max))?;
        let frame = run.frame_time();
        if h_max > frame * (1.0 + 1e-12) {
            return Err(self.invalid(
                "solver.h_max",
                format!("must not exceed the frame time 1/fps = {frame} s, got {h_max}"),
            ));
        }
        let h_min = self.positive("solver.h_min", s.h_min.unwrap_or(d.h_min))?;
        if h_min > h_max {
            return Err(self.invalid(
                "solver.h_min",
                format!("must not exceed h_max = {h_max} s, got {h_min}"),
            ));
        }
        let cg_tolerance = self.positive(
            "solver.cg_tolerance",
            s.cg_tolerance.unwrap_or(d.cg_tolerance),
        )?;
        if cg_tolerance >= 1.0 {
            return Err(self.invalid(
                "solver.cg_tolerance",
                format!("must be < 1 (a relative residual), got {cg_tolerance}"),
            ));
        }
        let strain_limit = match s.strain_limit {
            Some([lo, hi]) => {
                let k = "solver.strain_limit";
                self.finite(k, lo)?;
                self.finite(k, hi)?;
                if !(lo > 0.0 && lo <= 1.0 && hi >= 1.0) {
                    return Err(self.invalid(
                        k,
                        format!("must be [min, max] with 0 < min <= 1 <= max, got [{lo}, {hi}]"),
                    ));
                }
                Some([lo, hi])
            }
            None => d.strain_limit,
        };
        let verlet_h = self.positive("solver.verlet_h", s.verlet_h.unwrap_or(d.verlet_h))?;
        if verlet_h > frame * (1.0 + 1e-12) {
            return Err(self.invalid(
                "solver.verlet_h",
                format!("must not exceed the frame time 1/fps = {frame} s, got {verlet_h}"),
            ));
        }
        let verlet_damping = self.non_negative(
            "solver.verlet_damping",
            s.verlet_damping.unwrap_or(d.verlet_damping),
        )?;
        if verlet_damping * verlet_h >= 1.0 {
            return Err(self.invalid(
                "solver.verlet_damping",
                format!("times the Verlet step {verlet_h} s must be < 1, got {verlet_damping} 1/s"),
            ));
        }
        Ok(SolverSettings {
            integrator,
            h_max,
            h_min,
            cg_tolerance,
            cg_max_iterations: self.count(
                "solver.cg_max_iterations",
                s.cg_max_iterations.unwrap_or(d.cg_max_iterations),
                1,
            )?,
            preconditioner: s.preconditioner.unwrap_or(d.preconditioner),
            definiteness: s.definiteness.unwrap_or(d.definiteness),
            stretch_threshold: self.positive(
                "solver.stretch_threshold",
                s.stretch_threshold.unwrap_or(d.stretch_threshold),
            )?,
            strain_limit,
            strain_iterations: self.count(
                "solver.strain_iterations",
                s.strain_iterations.unwrap_or(d.strain_iterations),
                1,
            )?,
            grow_after: self.count("solver.grow_after", s.grow_after.unwrap_or(d.grow_after), 1)?,
            verlet_h,
            spring_stiffness: self.positive(
                "solver.spring_stiffness",
                s.spring_stiffness.unwrap_or(d.spring_stiffness),
            )?,
            bend_spring_stiffness: self.non_negative(
                "solver.bend_spring_stiffness",
                s.bend_spring_stiffness.unwrap_or(d.bend_spring_stiffness),
            )?,
            verlet_damping,
        })
    }
}
