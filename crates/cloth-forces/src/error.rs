//! The crate's error type.

/// Errors of `cloth-forces`. Every variant names the offending field, triangle, hinge, vertex or spring.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ForceError {
    /// A material parameter is out of range or not finite.
    #[error("material field `{field}` = {value}: {reason}")]
    InvalidMaterial {
        /// Field name, e.g. `"stretch[0]"`.
        field: &'static str,
        /// The offending value.
        value: f64,
        /// What the field must satisfy.
        reason: &'static str,
    },
    /// An external-force parameter is out of range or not finite.
    #[error("external force field `{field}` = {value}: {reason}")]
    InvalidExternal {
        /// Field name, e.g. `"drag"`.
        field: &'static str,
        /// The offending value (first non-finite component for vectors).
        value: f64,
        /// What the field must satisfy.
        reason: &'static str,
    },
    /// User spring `spring` is invalid (vertex out of range, negative or non-finite parameters).
    #[error("user spring {spring} (vertex {vertex}): {reason}")]
    InvalidSpring {
        /// Index of the spring in `External::springs`.
        spring: usize,
        /// The vertex it pulls.
        vertex: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// Triangle `triangle` has a (nearly) zero or non-finite area in rest (u, v) space.
    #[error(
        "triangle {triangle} (vertices {vertices:?}) is degenerate in rest space (area {area} m^2)"
    )]
    DegenerateTriangle {
        /// Triangle index.
        triangle: usize,
        /// Its vertex indices.
        vertices: [usize; 3],
        /// Its rest area (m^2).
        area: f64,
    },
    /// Hinge (interior edge) `hinge` has a zero rest edge length or zero adjacent area.
    #[error("hinge {hinge} (vertices {vertices:?}) is degenerate in rest space")]
    DegenerateHinge {
        /// Hinge index (into `ClothMesh::hinges()`).
        hinge: usize,
        /// Its stencil `[v0, v1, v2, v3]`.
        vertices: [usize; 4],
    },
    /// The shape-operator bend element of triangle `triangle` is degenerate in rest space (a
    /// flap on its edge line or on the wrong side of it).
    #[error(
        "bend stencil of triangle {triangle} (vertices {vertices:?}) is degenerate in rest space"
    )]
    DegenerateBendStencil {
        /// Triangle index.
        triangle: usize,
        /// Its stencil `[p0, p1, p2, q0, q1, q2]` (see `ClothModel::shape_stencils`).
        vertices: [usize; 6],
    },
    /// A per-vertex slice has the wrong length.
    #[error("{what}: expected {expected} entries, got {got}")]
    LengthMismatch {
        /// Which argument.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
    /// `material_of_triangle[triangle]` names a material that does not exist.
    #[error("triangle {triangle}: material index {index} out of range ({count} materials)")]
    MaterialIndex {
        /// Triangle index.
        triangle: usize,
        /// The bad material index.
        index: usize,
        /// Number of materials given.
        count: usize,
    },
    /// A value is not finite: the position or velocity of vertex `index`, or the rest angle of
    /// hinge `index`.
    #[error("{what} {index} is not finite")]
    NonFinite {
        /// `"position"`, `"velocity"` (of vertex) or `"rest angle of hinge"`.
        what: &'static str,
        /// Vertex (or hinge) index.
        index: usize,
    },
    /// The mesh rejected a request (e.g. vertex masses for the material's density).
    #[error(transparent)]
    Mesh(#[from] cloth_mesh::MeshError),
}
