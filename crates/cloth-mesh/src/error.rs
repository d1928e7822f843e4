//! The crate's error type.

use std::path::PathBuf;

/// Everything that can go wrong when building, reading or writing a [`crate::ClothMesh`].
///
/// Every variant names the offending element (vertex, triangle, edge, OBJ line) so the
/// problem can be found in the input. Vertex and triangle indices are 0-based indices into
/// the arrays given to [`crate::ClothMesh::new`] (for OBJ input: into the mesh built from
/// the file, see [`crate::parse_obj`]); OBJ line numbers are 1-based.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MeshError {
    /// The mesh has no vertices or no triangles.
    #[error("empty mesh: {vertices} vertices, {triangles} triangles (need at least one of each)")]
    Empty {
        /// Number of vertices given.
        vertices: usize,
        /// Number of triangles given.
        triangles: usize,
    },
    /// Two arrays that must have one entry per vertex have different lengths.
    #[error("length mismatch: {what} has {found} entries, expected {expected}")]
    LengthMismatch {
        /// Which array is wrong (e.g. "rest coordinates", "positions").
        what: &'static str,
        /// Expected length (the number of vertices).
        expected: usize,
        /// Length given.
        found: usize,
    },
    /// A triangle refers to a vertex index that does not exist.
    #[error(
        "triangle {triangle}: vertex index {index} (corner {corner}) out of range, mesh has {count} vertices"
    )]
    IndexOutOfRange {
        /// Offending triangle.
        triangle: usize,
        /// Corner (0, 1 or 2) of the triangle holding the bad index.
        corner: usize,
        /// The bad vertex index.
        index: usize,
        /// Number of vertices in the mesh.
        count: usize,
    },
    /// A triangle uses the same vertex twice.
    #[error("triangle {triangle} uses vertex {vertex} more than once")]
    RepeatedVertex {
        /// Offending triangle.
        triangle: usize,
        /// The repeated vertex.
        vertex: usize,
    },
    /// A world position has a NaN or infinite coordinate.
    #[error("vertex {vertex}: position is not finite")]
    NonFinitePosition {
        /// Offending vertex.
        vertex: usize,
    },
    /// A rest (u, v) coordinate is NaN or infinite.
    #[error("vertex {vertex}: rest (u, v) coordinate is not finite")]
    NonFiniteRest {
        /// Offending vertex.
        vertex: usize,
    },
    /// A rest (u, v) coordinate of a triangle corner is NaN or infinite.
    #[error("triangle {triangle}, corner {corner}: rest (u, v) coordinate is not finite")]
    NonFiniteCornerRest {
        /// Offending triangle.
        triangle: usize,
        /// Its corner (0, 1 or 2).
        corner: usize,
    },
    /// A triangle has (almost) zero area in rest (u, v) space.
    #[error(
        "triangle {triangle} is degenerate in rest space: area {area:e} m^2 is below {threshold:e} m^2"
    )]
    DegenerateRestTriangle {
        /// Offending triangle.
        triangle: usize,
        /// Its rest area in m^2 (absolute value; may be non-finite on overflow).
        area: f64,
        /// Threshold it fell below: 1e-12 times its longest rest edge squared, in m^2.
        threshold: f64,
    },
    /// A triangle winds clockwise in rest (u, v) space; all triangles must be counter-clockwise.
    #[error(
        "triangle {triangle} winds clockwise in rest (u, v) space (signed area {signed_area:e} m^2); triangles must be counter-clockwise"
    )]
    ClockwiseRestTriangle {
        /// Offending triangle.
        triangle: usize,
        /// Its signed rest area in m^2 (negative).
        signed_area: f64,
    },
    /// An edge is shared by three or more triangles.
    #[error("edge ({v0}, {v1}) is non-manifold: shared by triangles {triangles:?}")]
    NonManifoldEdge {
        /// Smaller vertex of the edge.
        v0: usize,
        /// Larger vertex of the edge.
        v1: usize,
        /// All triangles containing the edge (three or more, sorted).
        triangles: Vec<usize>,
    },
    /// Two triangles traverse their shared edge in the same direction (orientation flip).
    #[error("inconsistent winding: triangles {} and {} both traverse edge ({v0}, {v1}) from {v0} to {v1}", triangles[0], triangles[1])]
    InconsistentWinding {
        /// First vertex of the edge, in the direction both triangles traverse it.
        v0: usize,
        /// Second vertex of the edge, in the direction both triangles traverse it.
        v1: usize,
        /// The two triangles (sorted).
        triangles: [usize; 2],
    },
    /// A vertex is used by no triangle (it would have zero mass).
    #[error("vertex {vertex} is not used by any triangle")]
    IsolatedVertex {
        /// Offending vertex.
        vertex: usize,
    },
    /// An areal density is negative or not finite.
    #[error("areal density {density} kg/m^2 must be finite and non-negative")]
    InvalidDensity {
        /// The density given, kg/m^2.
        density: f64,
    },
    /// A builder or reader parameter is out of its valid range.
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter {
        /// Parameter name as in the function signature.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// An OBJ face corner has no texture coordinate (`f v` or `f v//vn`); rest coordinates come from `vt`.
    #[error(
        "OBJ line {line}: face corner {corner} has no texture coordinate (vt); rest (u, v) coordinates are required"
    )]
    MissingUv {
        /// 1-based line number of the face.
        line: usize,
        /// 0-based corner of the face without a `vt` index.
        corner: usize,
    },
    /// A malformed OBJ statement (bad number, bad index, reference out of range, ...).
    #[error("OBJ line {line}: {message}")]
    ObjParse {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// An OBJ file describes an invalid mesh. `source` names the cloth vertex or triangle
    /// (numbered as documented in [`crate::parse_obj`]); `line` is the 1-based line of the
    /// face that introduced the problem (for a vertex: the first face using it).
    #[error("OBJ line {line}: {source}")]
    ObjMesh {
        /// 1-based line number of the face.
        line: usize,
        /// The validation error, in cloth vertex / triangle numbering.
        #[source]
        source: Box<MeshError>,
    },
    /// A sewing pattern (GarmentCode JSON, see [`crate::parse_pattern`]) is malformed or
    /// cannot be made into a garment: `at` names the panel, edge or stitch and the JSON path.
    #[error("sewing pattern: {at}: {problem}")]
    Pattern {
        /// Where: panel, edge, stitch and JSON path.
        at: crate::PatternLocation,
        /// What is wrong.
        problem: crate::PatternProblem,
    },
    /// Reading or writing a file failed.
    #[error("I/O error on {}: {source}", path.display())]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}
