//! Triangle meshes for cloth simulation.
//!
//! A [`ClothMesh`] holds world positions (m), rest (u, v) coordinates (m, the flat material
//! space in which the cloth is unstretched, as in Baraff & Witkin 1998, section 2.1) and
//! triangles, validated once, plus the topology every other crate needs: unique [`Edge`]s,
//! boundary edges, [`Hinge`]s (bend stencils), vertex-triangle adjacency, the vertex-pair
//! sparsity pattern of the system matrix, rest areas and inverse rest bases.
//!
//! Builders make sheets ([`grid`] with three [`GridPattern`]s) and discs ([`disc`]);
//! [`parse_obj`] / [`read_obj`] load garments from OBJ (a cloth vertex is a unique
//! `(v, vt)` pair, so UV seams become panel boundaries, recorded in
//! [`ClothMesh::seam_groups`]); [`write_obj`] / [`write_obj_file_atomic`] save frames.
//! Sewing patterns in the GarmentCode JSON format ([`parse_pattern`] / [`read_pattern`],
//! module [`pattern`]) become a [`Garment`]: one mesh of triangulated panels placed around
//! the body, the vertex pairs to sew and the number of openings the sewn garment must have.
//! All failures are [`MeshError`]s naming the offending vertex, triangle, edge or line.
//!
//! The crate is also the foundation of the workspace: the vector types ([`Vec2`], [`Vec3`]) and
//! the one re-exported [`nalgebra`], the parallelism argument [`Par`], the one OBJ reader
//! ([`parse_obj_data`], used for cloth, colliders and the viewer) and the one atomic file
//! writer ([`write_atomic`]).
//!
//! ```
//! use cloth_mesh::{grid, GridPattern, parse_obj, write_obj};
//!
//! // The paper's 2602-vertex sheet analogue: 1 m x 1 m, 51 x 51 vertices.
//! let mesh = grid(51, 51, 1.0, 1.0, GridPattern::Alternating)?;
//! assert_eq!((mesh.num_vertices(), mesh.num_triangles()), (2601, 5000));
//! assert!((mesh.total_rest_area() - 1.0).abs() < 1e-12);
//!
//! // 0.1 kg/m^2 gives 0.1 kg in total, lumped onto the vertices.
//! let masses = mesh.vertex_masses(0.1)?;
//! assert!((masses.iter().sum::<f64>() - 0.1).abs() < 1e-12);
//!
//! // One hinge per interior edge; tris[0] winds (v0, v1, v2).
//! let h = mesh.hinges()[0];
//! let t = mesh.triangles()[h.tris[0]];
//! assert!((0..3).any(|k| [t[k], t[(k + 1) % 3], t[(k + 2) % 3]] == [h.v[0], h.v[1], h.v[2]]));
//!
//! // Save a frame as OBJ and read it back (rest coordinates are written in metres).
//! let mut text = Vec::new();
//! write_obj(&mut text, &mesh, mesh.positions())?;
//! let again = parse_obj(std::str::from_utf8(&text)?, 1.0)?;
//! assert_eq!(again.triangles(), mesh.triangles());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod atomic;
mod builders;
mod echo;
mod error;
mod mesh;
mod obj;
mod par;
pub mod pattern;

/// The one `nalgebra` of the workspace: every crate re-exports it, so users never need a
/// matching version of their own.
pub use nalgebra;

/// A 2D vector of f64: rest (u, v) coordinates in metres.
pub type Vec2 = nalgebra::Vector2<f64>;
/// A 3D vector of f64: world positions in metres, normals, velocities.
pub type Vec3 = nalgebra::Vector3<f64>;

pub use atomic::{write_atomic, write_atomic_bytes};
pub use builders::{GridPattern, disc, equilateral_height, grid};
pub use echo::{ECHO_CHARS, sanitize_message};
pub use error::MeshError;
pub use mesh::{ClothMesh, DEGENERATE_RELATIVE_AREA, Edge, Hinge, NO_TRIANGLE, RestMap};
pub use obj::{
    MAX_OBJ_BYTES, ObjData, ObjFrames, ObjImport, RestShape, flatten_triangle, parse_obj,
    parse_obj_data, read_obj, read_obj_data, read_to_string_limited, write_obj,
    write_obj_file_atomic, write_obj_file_atomic_grouped, write_obj_grouped,
};
pub use par::Par;
pub use pattern::{
    Curvature, Garment, GarmentPanel, GarmentSummary, GarmentTransfer, MAX_GARMENT_VERTICES,
    MAX_PATTERN_BYTES, MAX_STITCH_LENGTH_RATIO, Panel, PanelEdge, PanelSummary, Pattern,
    PatternLocation, PatternProblem, PatternStitch, Stitch, StitchSide, count_boundary_loops,
    parse_pattern, read_pattern,
};
