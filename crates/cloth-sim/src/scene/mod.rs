//! Scene files: a TOML description of one simulation, read into validated, defaulted data.
//!
//! A scene holds the run length, the cloths, pins, colliders and solver settings; it is parsed
//! into plain, validated, fully defaulted data ([`Scene`]) and built into a simulation
//! ([`build_simulation`]).
//!
//! # Format
//!
//! World: y is up. Lengths in metres, times in seconds, masses in kilograms, angles in
//! degrees. Rotations `[rx, ry, rz]` rotate about world x, then world y, then world z
//! (`R = Rz * Ry * Rx`), see [`cloth_collide::euler_degrees`].
//!
//! ```toml
//! [run]                      # optional
//! fps = 30                   # output frames per second (default 30)
//! frames = 60                # frames to simulate after frame 0 (default 60)
//! gravity = [0, -9.81, 0]    # m/s^2 (default [0, -9.81, 0]); gravity lives in [run]
//!
//! [cloth]                    # or [[cloth]] tables, one per cloth (each with a `name`)
//! mesh = { kind = "grid", nx = 51, ny = 51, width = 1.0, height = 1.0, pattern = "alternating" }
//! # or { kind = "disc", radius = 0.5, resolution = 20 }
//! # or { kind = "obj", path = "shirt.obj", rest = "auto", uv_scale = 1.0 }
//! # or { kind = "garmentcode", path = "tshirt.json", edge_length = 0.02 }  (sewn: sew_time;
//! #    sew_edge_length = 0.04 sews a coarser copy during the preroll, then carries it over)
//! position = [0, 1, 0]       # m, where the mesh centre goes (default origin)
//! rotation = [0, 0, 0]       # degrees (default none)
//! material = "cotton"        # preset, or a table { preset = "cotton", bend = 1e-5, ... }
//! thickness = 0.005          # m, collision thickness (default 0.005)
//! drag = 0.0                 # normal air drag, kg/(m^2 s) (default 0 = no air)
//! wind = [0, 0, 0]           # m/s (default still air)
//! self_collision = false     # cloth-cloth contact (default false)
//! friction = 0.3             # Coulomb coefficient between layers (default 0.3)
//! self_ccd = true            # cloth-cloth: continuous collision check of every step (default)
//! velocity = [0, 0, 0]       # m/s, initial velocity of the unpinned vertices (default rest)
//! stretch_targets = [1, 1]   # [b_u, b_v]: rest stretch targets (default the material's, [1, 1])
//! bend_uv = [1, 1]           # [k_u, k_v]: bending multipliers along u and v (default [1, 1])
//!
//! [[pin]]                    # any number of pin groups
//! vertices = [0, 50]         # and/or region = { min = [...], max = [...] }
//! # cloth = "shirt"          # which cloth (required with several; indices are the cloth's own)
//! keyframes = [{ t = 0, translation = [0, 0, 0] }, { t = 1, translation = [0, 0.5, 0] }]
//!
//! [[collider]]               # any number of colliders
//! shape = "sphere"           # sphere | cylinder | capsule | box | plane | obj | gltf
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
//!
//! This module holds the scene's data; [`Scene::load`] (module `load`) reads the text in
//! three steps, each a module: `raw` (the TOML as written, every key optional), `validate`
//! (defaults applied, ranges checked, paths resolved: a [`Scene`]) and `build` (the runtime
//! objects: mesh, forces, colliders, integrator: a [`crate::simulation::Simulation`]);
//! `locate` maps key paths to lines and columns for the errors ([`SceneError`], module
//! `error`), and `pattern` reads the frame-number patterns of animated OBJ colliders.

mod build;
mod cloth;
pub(crate) mod error;
mod load;
mod locate;
mod pattern;
mod raw;
mod validate;

pub use build::{
    BuiltCloth, MULTIGRID_MIN_VERTICES, MULTIGRID_MIN_VERTICES_WITHOUT_CONTACT, build_cloth,
    build_collider, build_integrator, build_mesh, build_simulation, resolve_preconditioner,
};
pub use error::SceneError;

use std::path::PathBuf;

use cloth_collide::{Keyframe, euler_degrees};
use cloth_forces::{Definiteness, Material};
use cloth_mesh::{GridPattern, RestShape};
use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize, Serializer};

/// Largest number of cloth vertices a grid or disc mesh may have (protects against scene
/// typos that would allocate gigabytes).
pub const MAX_MESH_VERTICES: usize = 10_000_000;

/// Largest scene file read (bytes): 16 MiB, far above any hand-written or generated scene, so a
/// wrong path (`/dev/zero`, a binary) fails at once.
pub const MAX_SCENE_BYTES: u64 = 16 << 20;

/// Largest number of frames and iteration counts accepted (10^7).
const MAX_COUNT: usize = 10_000_000;

// ---------------------------------------------------------------------------------------
// Public, resolved data
// ---------------------------------------------------------------------------------------

/// Largest accepted gravity magnitude (m/s^2), 10,000 g: beyond it a cloth leaves any bound
/// within a few steps.
pub const MAX_GRAVITY: f64 = 1e5;

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
    /// `[cloth]` or `[[cloth]]`: the cloths (mesh, placement, material, name), in file order;
    /// at least one. Written back as a `[cloth]` table when there is one, as `[[cloth]]`
    /// tables otherwise.
    #[serde(rename = "cloth", serialize_with = "ser_cloths")]
    pub cloths: Vec<ClothSettings>,
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
    /// `gravity`, default `[0, -9.81, 0]`; magnitude at most [`MAX_GRAVITY`].
    #[serde(serialize_with = "ser_vec3")]
    pub gravity: Vector3<f64>,
    /// Seconds simulated before frame 0 while the cloth settles and glTF bodies blend from
    /// their bind pose into their clip's first pose; frame 0 is the end of the preroll, and
    /// other motions hold their t = 0 pose during it. Key `preroll`, default 0, finite, >= 0.
    #[serde(skip_serializing_if = "is_zero_f64")]
    pub preroll: f64,
    /// Whether every frame's statistics count the intersecting pairs of non-adjacent cloth
    /// triangles (`self_intersections` in stats.json). Key `count_intersections`, default
    /// (`None`): when self-collision is on. Set it to compare runs with self-collision on and
    /// off like for like (the count costs about 2-4 ms per frame on 5,000 triangles).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count_intersections: Option<bool>,
    /// Largest estimated run time in hours before the scene is refused (see the `budget`
    /// module). Key `max_hours`, default 4, > 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_hours: Option<f64>,
    /// Largest estimated memory in GiB before the scene is refused. Key `max_memory_gb`,
    /// default 80% of the machine's available memory, > 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_memory_gb: Option<f64>,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            fps: crate::stats::DEFAULT_FPS,
            frames: 60,
            gravity: Vector3::new(0.0, -9.81, 0.0),
            preroll: 0.0,
            count_intersections: None,
            max_hours: None,
            max_memory_gb: None,
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
    /// `j` (see [`GridPattern::Equilateral`] for the staggered rows).
    Grid {
        /// Vertices along x (u), >= 2.
        nx: usize,
        /// Vertices along z (v), >= 2.
        ny: usize,
        /// Extent along x in m, > 0.
        width: f64,
        /// Extent along z in m, > 0.
        height: f64,
        /// How the quads are split into triangles (default `alternating`; see
        /// [`GridPattern`] for the bending anisotropy of each).
        #[serde(serialize_with = "ser_pattern")]
        pattern: GridPattern,
    },
    /// A disc in the x-z plane made of `resolution` concentric rings around a centre vertex;
    /// ring `r` (1-based) holds `6 r` vertices, so the disc has `1 + 3 R (R + 1)` vertices.
    Disc {
        /// Radius in m, > 0.
        radius: f64,
        /// Number of rings, >= 1.
        resolution: usize,
    },
    /// A triangle mesh read from a Wavefront OBJ file: one particle per OBJ position, rest
    /// shape per triangle corner (see [`cloth_mesh::ClothMesh::from_obj_with`]).
    Obj {
        /// The OBJ file, resolved against the scene directory (key `path`, must exist).
        path: PathBuf,
        /// Metres per texture-coordinate unit: rest `(u, v) = uv_scale * vt`. Default 1, > 0.
        uv_scale: f64,
        /// Where the rest shape comes from: `"uv"` (texture coordinates), `"mesh"` (each
        /// triangle flattened as modelled) or `"auto"` (default: `uv` when every face corner
        /// has a `vt`, `mesh` otherwise; `cloth check` says which).
        #[serde(serialize_with = "ser_rest_shape")]
        rest: RestShape,
        /// Rest dihedral angles: `"flat"` or `"mesh"` (as modelled). Default: flat for a `uv`
        /// rest shape, as modelled for `mesh`.
        #[serde(skip_serializing_if = "Option::is_none")]
        rest_angles: Option<RestAngles>,
        /// `true`: a vertex is a `(v, vt)` pair, so UV seams split the cloth into panels (the
        /// behaviour before per-corner rest shapes). Default false.
        split_seams: bool,
    },
    /// A sewing pattern in the GarmentCode JSON format ([`cloth_mesh::read_pattern`]): its
    /// panels triangulated, placed around the body as the file says, and sewn together by the
    /// simulation during the cloth's `sew_time`.
    Garmentcode {
        /// The pattern file, resolved against the scene directory (must exist).
        path: PathBuf,
        /// Target triangle edge length in m (key `edge_length`, default 0.02), > 0.
        edge_length: f64,
        /// Sew on a coarser copy (key `sew_edge_length`, m, > 0; default none): the pattern
        /// is also built at this edge length, that copy is simulated through the sewing (to
        /// the time every seam of the scene is held closed, which must fall within
        /// `run.preroll`), and its positions and velocities are carried to this mesh through
        /// the panels' rest coordinates ([`cloth_mesh::GarmentTransfer`]); where the fine
        /// triangles, chords of the coarse surface, then cut through another layer within
        /// its thickness, the vertices poking through are moved back
        /// ([`cloth_collide::untangle`], self-collision on); this mesh then runs the rest of
        /// the preroll and the frames. A fine garment pulled closed at full
        /// resolution can catch on itself; the coarse copy sews in a fraction of the time.
        /// Not with pins on the scene.
        #[serde(skip_serializing_if = "Option::is_none")]
        sew_edge_length: Option<f64>,
    },
}

/// Rest dihedral angles of a cloth (key `cloth.mesh.rest_angles`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RestAngles {
    /// Flat rest: the cloth bends back to a plane.
    Flat,
    /// The angles of the mesh as modelled (its initial positions).
    Mesh,
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
                pattern: GridPattern::Equilateral,
                ..
            } => {
                // Even rows hold nx vertices, odd rows nx + 1.
                let odd = ny / 2;
                nx.checked_mul(*ny)?.checked_add(odd)
            }
            MeshSpec::Grid { nx, ny, .. } => nx.checked_mul(*ny),
            MeshSpec::Disc { resolution, .. } => disc_vertex_count(*resolution),
            MeshSpec::Obj { .. } | MeshSpec::Garmentcode { .. } => None,
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

/// `[cloth]` (or one of the `[[cloth]]` tables): one cloth of the scene. Several cloths are
/// simulated as one particle system with disjoint components, so they touch each other as a
/// cloth touches itself.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClothSettings {
    /// Name (key `name`): the cloth's `o` group in the OBJ frames and its prim in USD, and what
    /// `[[pin]] cloth` refers to. Default `"cloth"` for a single cloth, `"cloth_<i>"` for the
    /// i-th of several; names are unique.
    pub name: String,
    /// How the rest mesh is made (key `mesh`, required).
    pub mesh: MeshSpec,
    /// Sewing patterns only: time in s in which the stitches are pulled closed (they are held
    /// closed afterwards). Key `sew_time`, default 0.5, >= 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sew_time: Option<f64>,
    /// Sewing patterns only: time in s from the start of sewing (the start of the run or of
    /// the preroll) at which this cloth's stitches begin to close; until then they are slack
    /// and gravity is scaled as while sewing. A garment worn over another waits until the one
    /// beneath is sewn. Key `sew_start`, default 0, >= 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sew_start: Option<f64>,
    /// Sewing patterns only: factor on gravity until the cloth is sewn
    /// (`t < sew_start + sew_time`), so the panels do not fall before their seams close. Key
    /// `sew_gravity`, default 0, in [0, 1].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sew_gravity: Option<f64>,
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
    /// 1.2-2.1 m/s (docs/physics.md), so `drag = rho_A g / 1.5` (0.7 for cotton) is a calibrated
    /// choice. Key `drag`, default 0 (no air), >= 0.
    pub drag: f64,
    /// Wind velocity in m/s (only acts when `drag > 0`). Key `wind`, default zero.
    #[serde(serialize_with = "ser_vec3")]
    pub wind: Vector3<f64>,
    /// Whether cloth-cloth contact is handled. Key `self_collision`, default false (true for
    /// sewing patterns). With several cloths, contact within and between all cloths is on
    /// when any cloth asks for it.
    pub self_collision: bool,
    /// Coulomb friction coefficient between layers of the cloth (cloth-cloth contact; the
    /// friction against solids is each collider's own). Key `friction`, default 0.3, >= 0.
    /// With several cloths the largest applies to all cloth-cloth contact.
    pub friction: f64,
    /// Whether cloth-cloth contact also checks every step's motion for the cloth passing
    /// through itself (continuous collision detection with impact zones). Key `self_ccd`,
    /// default true; only for measuring what the penalty springs alone do. With several
    /// cloths it is off when any cloth turns it off.
    pub self_ccd: bool,
    /// Initial velocity of every unpinned vertex in m/s (a thrown cloth). Key `velocity`,
    /// default zero.
    #[serde(serialize_with = "ser_vec3")]
    pub velocity: Vector3<f64>,
}

impl ClothSettings {
    /// Rotation matrix of `rotation` (local to world).
    pub fn rotation_matrix(&self) -> Matrix3<f64> {
        euler_degrees(&self.rotation)
            .to_rotation_matrix()
            .into_inner()
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

/// `[[pin]]`: a group of vertices whose positions are prescribed (hard constraints).
///
/// The group is the union of `vertices` and of the vertices whose initial world position
/// (after `cloth.position`/`rotation`) lies in `region`. With keyframes, a pinned vertex with
/// initial position `x0` follows `x(t) = c + R(t) (x0 - c) + T(t)`, where `c` is the centroid
/// of the group's initial positions (rotations turn the group about its own centre) and
/// `T`, `R` come from [`Motion::place`](cloth_collide::Motion::place).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PinSettings {
    /// Optional label for reports. Key `name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The cloth the group belongs to, by name (key `cloth`; required when the scene has
    /// several cloths, else optional). `vertices` index that cloth's own vertices and `region`
    /// selects among them only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cloth: Option<String>,
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
    /// The collider the group is glued to, by its `name` or as `collider[k]` (key `attach`,
    /// not with `keyframes`): each vertex keeps its place on the collider as it moves, on its
    /// closest triangle (barycentric, plus its distance along the normal) on a deforming mesh,
    /// in the collider's local frame otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attach: Option<String>,
}

impl PinSettings {
    /// Whether vertex `index` with initial world position `x0` belongs to this group.
    pub fn selects(&self, index: usize, x0: &Vector3<f64>) -> bool {
        self.vertices.contains(&index) || self.region.as_ref().is_some_and(|r| r.contains(x0))
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
    /// A skinned (or rigid) glTF 2.0 body (`.glb` or `.gltf`; metres, y up), played from one
    /// of its animations with linear blend skinning. The collider's own placement and motion
    /// are applied on top.
    Gltf {
        /// The file, resolved against the scene directory (must exist).
        path: PathBuf,
        /// Animation clip by name. Key `animation`, default the file's first.
        #[serde(skip_serializing_if = "Option::is_none")]
        animation: Option<String>,
        /// Uniform scale of the posed body (e.g. 0.01 for centimetres). Key `scale`, default 1.
        scale: f64,
        /// Clip time at simulation time 0 (s). Key `time_offset`, default 0.
        time_offset: f64,
        /// Whether the clip repeats. Key `loop`, default false (the last pose is held).
        #[serde(rename = "loop")]
        looping: bool,
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
                let p = pattern::FramePattern::parse(pattern).ok()?;
                Some(PathBuf::from(p.format(frame_start.checked_add(frame)?)))
            }
            _ => None,
        }
    }
}

/// Poses of a glTF body per second of simulation: the frame rate times the smallest whole
/// number that reaches 120 Hz. Between poses the surface moves linearly, so its velocity over
/// a step is the skinned motion's mean velocity over at most 1/120 s.
pub(crate) fn gltf_sample_rate(fps: f64) -> f64 {
    fps * (GLTF_SAMPLE_HZ / fps).ceil().max(1.0)
}

/// The least pose rate of glTF colliders (Hz).
const GLTF_SAMPLE_HZ: f64 = 120.0;

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
    /// Block-Jacobi below a size, multigrid from there (the default): see
    /// [`resolve_preconditioner`].
    Auto,
    /// Jacobi: divide by the diagonal of A (as in the paper).
    Diagonal,
    /// Inverse of each vertex's 3x3 diagonal block.
    BlockJacobi,
    /// Smoothed-aggregation multigrid on the pre-filtered system: iterations nearly flat with
    /// resolution.
    Multigrid,
    /// Sparse direct solve of the filtered system instead of PCG (reference path).
    Direct,
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
    /// Implicit: key `preconditioner`, `"auto"` (default), `"diagonal"`, `"block_jacobi"`,
    /// `"multigrid"` or `"direct"`.
    pub preconditioner: SolverChoice,
    /// Implicit: key `definiteness`, `"clamped"` (default), `"exact"` or `"projected"`.
    pub definiteness: Definiteness,
    /// Implicit: adaptive step control. A step is rejected (and h shrunk) when any triangle's
    /// stretch `|w_u|` or `|w_v|` changes by more than this (dimensionless strain) in one
    /// step. Key `stretch_threshold`, default 0.03, > 0 (see
    /// [`crate::implicit::ImplicitSettings::stretch_threshold`]).
    pub stretch_threshold: f64,
    /// Implicit: how the next step is chosen. Key `step_control`, `"predictive"` (default:
    /// from the stretch change the last step measured, see [`crate::implicit::StepControl`]) or
    /// `"halving"` (the paper's: halve after a rejection, double after `grow_after` accepted
    /// steps).
    pub step_control: crate::implicit::StepControl,
    /// Implicit: Newton corrections tried on a step whose stretch change is over
    /// `stretch_threshold` before it is rejected (see
    /// [`crate::implicit::ImplicitSettings::newton_corrections`]). Key `newton_corrections`,
    /// default 1, >= 0 (0: the paper's single linearised solve per attempt).
    pub newton_corrections: usize,
    /// Implicit: rounds of Coulomb's law within a step: static contacts with moving colliders
    /// whose constraint force breaks mu N slide and the system is solved again (see
    /// [`crate::implicit::ImplicitSettings::coulomb_rounds`]). Key `coulomb_rounds`, default
    /// 1, >= 0 (0: contact modes change only between steps, as in the paper).
    pub coulomb_rounds: usize,
    /// Implicit: a step over `stretch_threshold` is accepted after a Newton correction that
    /// moved no triangle's stretch by more than this fraction of the threshold (see
    /// [`crate::implicit::ImplicitSettings::correction_tolerance`]). Key
    /// `correction_tolerance`, default 1, >= 0 (0: every change over the threshold is
    /// rejected, as in the paper).
    pub correction_tolerance: f64,
    /// Implicit, with `step_control = "halving"`: after this many consecutive accepted steps
    /// the step is doubled again (up to `h_max`). Key `grow_after`, default 2 (as in the
    /// paper), >= 1.
    pub grow_after: usize,
    /// Allowed edge-length ratio `[min, max]` to the rest length, enforced by iterated
    /// position projection after each step (maximum-stretch). Key `strain_limit`, with
    /// `0 < min <= 1 <= max`; default `[0.9, 1.1]` for Verlet, off (`None`) for implicit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strain_limit: Option<[f64; 2]>,
    /// Cap on the sweeps over all edges of the strain-limit projection; the projection stops
    /// earlier once every edge is within the limit to `strain_tolerance`. Key
    /// `strain_iterations`, default 500 for Verlet (whose projection also solves its springs
    /// and contacts), 10 for implicit, >= 1.
    pub strain_iterations: usize,
    /// Violation of the strain limit the projection may leave, as a fraction of the edge's
    /// rest length: it iterates until every edge is within `[min - tol, max + tol]` times its
    /// rest length. Key `strain_tolerance`, default 0.005, in (0, 1).
    pub strain_tolerance: f64,
    /// Verlet: over-relaxation factor of the projection's updates. Key `strain_relaxation`,
    /// default 1, in (0, 2) (1 is plain Gauss-Seidel).
    pub strain_relaxation: f64,
    /// Verlet: how the projection removes stretch accumulated along long chains of edges
    /// (see [`crate::explicit::LongRange`]). Key `strain_long_range`: `"tree"` (default; an exact
    /// projection onto the limits of a spanning tree rooted at the pins, before every sweep),
    /// `"tethers"` (long-range attachments to the pins) or `"none"`.
    pub strain_long_range: crate::explicit::LongRange,
    /// Verlet: sweeps of a step's projection after which every further sweep starts with a
    /// global projection onto the limits of all stretched edges (a sparse Cholesky solve; see
    /// [`crate::explicit::VerletSettings::global_after`]). Key `strain_global_after`,
    /// default 50, >= 0; 0 from the first sweep, a value at or above `strain_iterations`
    /// never.
    pub strain_global_after: usize,
    /// Verlet: largest step in s; each frame is split into equal steps no longer than this.
    /// Key `verlet_h`, default `1 / (20 fps)`, `0 < verlet_h <= 1/fps`. No step size is
    /// unstable: the springs are solved with the strain limits in the position projection
    /// (backward Euler), not applied as explicit forces, so the explicit spring bound
    /// `h < 2 sqrt(m / sum k)` does not apply (see [`crate::explicit::VerletSettings`]); the
    /// projection cannot be switched off, it is the method.
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
            preconditioner: SolverChoice::Auto,
            definiteness: Definiteness::Clamped,
            stretch_threshold: 0.03,
            step_control: crate::implicit::StepControl::default(),
            newton_corrections: 1,
            coulomb_rounds: 1,
            correction_tolerance: 1.0,
            grow_after: 2,
            strain_limit: match integrator {
                IntegratorKind::Verlet => Some([0.9, 1.1]),
                IntegratorKind::Implicit => None,
            },
            strain_iterations: match integrator {
                IntegratorKind::Verlet => crate::explicit::DEFAULT_VERLET_ITERATIONS,
                IntegratorKind::Implicit => 10,
            },
            strain_tolerance: crate::strain::DEFAULT_STRAIN_TOLERANCE,
            strain_relaxation: 1.0,
            strain_long_range: crate::explicit::LongRange::Tree,
            strain_global_after: crate::explicit::DEFAULT_GLOBAL_AFTER,
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
        SolverSettings::defaults(IntegratorKind::Implicit, crate::stats::DEFAULT_FPS)
    }
}

impl Scene {
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

    /// Index into [`Scene::cloths`] of the cloth a pin group belongs to (its `cloth` name; the
    /// first cloth when it names none).
    pub fn pin_cloth(&self, pin: &PinSettings) -> usize {
        pin.cloth
            .as_ref()
            .and_then(|n| self.cloths.iter().position(|c| &c.name == n))
            .unwrap_or(0)
    }
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

fn is_zero(v: &Vector3<f64>) -> bool {
    *v == Vector3::zeros()
}

fn ser_vec3<S: Serializer>(v: &Vector3<f64>, s: S) -> Result<S::Ok, S::Error> {
    [v.x, v.y, v.z].serialize(s)
}

fn ser_pattern<S: Serializer>(p: &GridPattern, s: S) -> Result<S::Ok, S::Error> {
    p.serialize(s)
}

fn ser_rest_shape<S: Serializer>(r: &RestShape, s: S) -> Result<S::Ok, S::Error> {
    r.serialize(s)
}

fn ser_cloths<S: Serializer>(c: &[ClothSettings], s: S) -> Result<S::Ok, S::Error> {
    match c {
        [one] => one.serialize(s),
        many => many.serialize(s),
    }
}
