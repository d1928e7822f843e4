//! The crate's error type.

/// Everything that can go wrong when building colliders or the self-collision structure.
///
/// Collider errors carry `collider`, a label naming the offending collider: its `name` when it
/// has one, and its index in the [`crate::ColliderSet`] when it was built through one
/// (e.g. `'floor' (#0)` or `#3`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CollideError {
    /// A number of the collider (position, rotation, a dimension, friction, thickness, a mesh
    /// vertex, a keyframe, a frame vertex, the frame rate) is NaN or infinite.
    #[error("collider {collider}: {what} is not finite")]
    NonFinite {
        /// Label of the collider.
        collider: String,
        /// Which value, e.g. `"radius"` or `"vertex 12"`.
        what: String,
    },
    /// A shape dimension is out of range (radius <= 0, length < 0, box extent <= 0).
    #[error("collider {collider}: {what} = {value} is out of range ({expected})")]
    BadDimension {
        /// Label of the collider.
        collider: String,
        /// Which dimension.
        what: &'static str,
        /// The offending value (m).
        value: f64,
        /// The allowed range, in words.
        expected: &'static str,
    },
    /// The collision thickness is negative.
    #[error("collider {collider}: thickness {value} m is negative")]
    NegativeThickness {
        /// Label of the collider.
        collider: String,
        /// The offending thickness (m).
        value: f64,
    },
    /// The Coulomb friction coefficient is negative.
    #[error("collider {collider}: friction coefficient {value} is negative")]
    NegativeFriction {
        /// Label of the collider.
        collider: String,
        /// The offending coefficient.
        value: f64,
    },
    /// A mesh collider has no vertices or no triangles.
    #[error("collider {collider}: mesh is empty ({vertices} vertices, {triangles} triangles)")]
    EmptyMesh {
        /// Label of the collider.
        collider: String,
        /// Number of vertices given.
        vertices: usize,
        /// Number of triangles given.
        triangles: usize,
    },
    /// A mesh triangle refers to a vertex that does not exist.
    #[error(
        "collider {collider}: triangle {triangle} refers to vertex {index}, but the mesh has {count} vertices"
    )]
    IndexOutOfRange {
        /// Label of the collider.
        collider: String,
        /// The triangle.
        triangle: usize,
        /// The offending vertex index.
        index: usize,
        /// Number of vertices of the mesh.
        count: usize,
    },
    /// A mesh triangle repeats a vertex or has (nearly) zero area.
    #[error(
        "collider {collider}: triangle {triangle} is degenerate (repeated vertex or zero area)"
    )]
    DegenerateTriangle {
        /// Label of the collider.
        collider: String,
        /// The triangle.
        triangle: usize,
    },
    /// The closed components of a mesh enclose (almost) no volume: they have no inside to keep
    /// the cloth out of.
    #[error(
        "collider {collider}: the closed mesh encloses {volume:.3e} m^3, nothing for its size ({diagonal:.3} m across); a flat or collapsed solid has no inside"
    )]
    FlatMesh {
        /// Label of the collider.
        collider: String,
        /// Enclosed volume (m^3).
        volume: f64,
        /// Bounding-box diagonal of the closed components (m).
        diagonal: f64,
    },
    /// A mesh edge is shared by more than two triangles (after welding; vertices are named by
    /// their indices as given, the first copy of a welded vertex).
    #[error("collider {collider}: edge ({a}, {b}) is shared by {count} triangles (non-manifold)")]
    NonManifoldEdge {
        /// Label of the collider.
        collider: String,
        /// First vertex of the edge (smaller index).
        a: usize,
        /// Second vertex of the edge.
        b: usize,
        /// Number of triangles using it.
        count: usize,
    },
    /// Two triangles traverse a shared edge in the same direction (after welding; vertices are
    /// named as in [`CollideError::NonManifoldEdge`]).
    #[error(
        "collider {collider}: triangles {t0} and {t1} traverse edge ({a}, {b}) in the same direction (inconsistent winding)"
    )]
    InconsistentWinding {
        /// Label of the collider.
        collider: String,
        /// First vertex of the edge (smaller index).
        a: usize,
        /// Second vertex of the edge.
        b: usize,
        /// First triangle.
        t0: usize,
        /// Second triangle.
        t1: usize,
    },
    /// Keyframes are empty or their times are not strictly increasing.
    #[error("collider {collider}: keyframe {index}: {reason}")]
    BadKeyframes {
        /// Label of the collider.
        collider: String,
        /// The offending keyframe.
        index: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// A deforming mesh sequence is malformed (no frames, wrong vertex count, bad fps, or a shape
    /// that is not a mesh).
    #[error("collider {collider}: mesh sequence: {reason}")]
    BadFrames {
        /// Label of the collider.
        collider: String,
        /// What is wrong, naming the frame where relevant.
        reason: String,
    },
    /// A self-collision parameter is out of range.
    #[error("self collision: {what} = {value} is out of range ({expected})")]
    BadParameter {
        /// Which parameter.
        what: &'static str,
        /// The offending value.
        value: f64,
        /// The allowed range, in words.
        expected: &'static str,
    },
    /// A cloth triangle refers to a vertex that does not exist.
    #[error(
        "self collision: cloth triangle {triangle} refers to vertex {index}, but there are {count} vertices"
    )]
    ClothIndexOutOfRange {
        /// The cloth triangle.
        triangle: usize,
        /// The offending vertex index.
        index: usize,
        /// Number of cloth vertices.
        count: usize,
    },
    /// A position array does not have one entry per cloth vertex.
    #[error("self collision: {found} positions given for a mesh of {expected} vertices")]
    WrongLength {
        /// Number of vertices of the mesh.
        expected: usize,
        /// Number of positions given.
        found: usize,
    },
    /// A glTF file cannot be read, is not glTF 2.0, fails the format's validation, or an
    /// option given with it is out of range. `file` is the path (or `<memory>`).
    #[error("glTF {file}: {reason}")]
    GltfFile {
        /// The file.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// A glTF buffer is missing, unreadable or shorter than its declared byte length.
    #[error("glTF {file}: buffer {buffer}: {reason}")]
    GltfBuffer {
        /// The file.
        file: String,
        /// Label of the buffer (`'name' (#i)` or `#i`).
        buffer: String,
        /// What is wrong.
        reason: String,
    },
    /// A glTF accessor is malformed (out of its buffer view, wrong type or count).
    #[error("glTF {file}: accessor #{accessor} ({usage}): {reason}")]
    GltfAccessor {
        /// The file.
        file: String,
        /// The accessor's index.
        accessor: usize,
        /// What the accessor was read for, e.g. `POSITION of mesh 'body' (#0) primitive 0`.
        usage: String,
        /// What is wrong.
        reason: String,
    },
    /// A glTF mesh cannot be used as a collider (not triangles, indices out of range, no
    /// positions, bad skinning attributes).
    #[error("glTF {file}: mesh {mesh}: {reason}")]
    GltfMesh {
        /// The file.
        file: String,
        /// Label of the mesh.
        mesh: String,
        /// What is wrong, naming the primitive and vertex where relevant.
        reason: String,
    },
    /// A glTF node is malformed (non-finite transform, two parents, a cycle).
    #[error("glTF {file}: node {node}: {reason}")]
    GltfNode {
        /// The file.
        file: String,
        /// Label of the node.
        node: String,
        /// What is wrong.
        reason: String,
    },
    /// A glTF skin is malformed (too few or non-finite inverse bind matrices).
    #[error("glTF {file}: skin {skin}: {reason}")]
    GltfSkin {
        /// The file.
        file: String,
        /// Label of the skin.
        skin: String,
        /// What is wrong.
        reason: String,
    },
    /// A glTF animation is malformed or missing (key times not increasing, wrong output
    /// count, an animated node with a matrix, no clip of the requested name).
    #[error("glTF {file}: animation {animation}: {reason}")]
    GltfAnimation {
        /// The file.
        file: String,
        /// Label of the animation.
        animation: String,
        /// What is wrong, naming the channel's node where relevant.
        reason: String,
    },
}
