//! What was done to a mesh collider's mesh on the way in: vertices welded by identical
//! position, copies kept apart, and the parts left open. The library does not print; a caller
//! shows [`MeshReport::notice`] to the user.

use std::fmt;

/// Why two vertices at the same position were not welded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitReason {
    /// A glTF skin moves them differently: their joints or weights differ (or one is skinned
    /// and the other not, or they hang on different nodes).
    Skin,
    /// A mesh sequence moves them apart in this frame.
    Frame(usize),
}

/// Copies at one position that stay separate vertices, with the first example.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeptSplit {
    /// How many vertices are kept apart from a copy at their position (the welded count
    /// minus the number of distinct positions).
    pub count: usize,
    /// First vertex of the example pair (an index of the mesh as given).
    pub a: usize,
    /// Second vertex of the example pair, at the same position as `a`.
    pub b: usize,
    /// Why `a` and `b` were kept apart.
    pub reason: SplitReason,
}

/// What welding did to a mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WeldReport {
    /// Vertices as given (in the file, or in the collider's mesh).
    pub vertices: usize,
    /// Vertices after welding bit-identical positions.
    pub welded_vertices: usize,
    /// Copies at one position kept apart (`None` when every such set was welded).
    pub kept_split: Option<KeptSplit>,
}

impl WeldReport {
    /// Nothing merged and nothing kept apart.
    pub fn unchanged(vertices: usize) -> WeldReport {
        WeldReport {
            vertices,
            welded_vertices: vertices,
            kept_split: None,
        }
    }
}

/// The shape of one mesh collider as the [`crate::ColliderSet`] uses it.
///
/// A mesh is welded first (vertices at bit-identical positions become one; see
/// [`WeldReport`]), then split into edge-connected components. A component without boundary
/// edges is closed: it has an inside, and contact with it is signed (negative inside). The
/// others are open (a sheet, a body without a head, eye sockets): they have no inside, and a
/// cloth vertex is kept the contact distance away on whichever side of them it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeshReport {
    /// Index of the collider in the set.
    pub collider: usize,
    /// Label of the collider, as in errors: `'name' (#i)` or `#i`.
    pub label: String,
    /// The welding.
    pub weld: WeldReport,
    /// Triangles.
    pub triangles: usize,
    /// Edges used by one triangle only, after welding.
    pub boundary_edges: usize,
    /// Edge-connected components.
    pub components: usize,
    /// Components without a boundary edge.
    pub closed_components: usize,
}

impl MeshReport {
    /// Whether the mesh was used exactly as given: nothing welded or kept apart, and closed.
    pub fn is_plain(&self) -> bool {
        self.weld.welded_vertices == self.weld.vertices
            && self.weld.kept_split.is_none()
            && self.boundary_edges == 0
    }

    /// Whether every component is closed.
    pub fn is_closed(&self) -> bool {
        self.boundary_edges == 0
    }

    /// One line for the user saying what was done, or `None` for a plain mesh
    /// ([`MeshReport::is_plain`]).
    pub fn notice(&self) -> Option<String> {
        (!self.is_plain()).then(|| format!("collider {}: {self}", self.label))
    }
}

impl fmt::Display for MeshReport {
    /// The welding, the components and what open parts mean, in one line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = &self.weld;
        if w.welded_vertices == w.vertices {
            write!(f, "{} vertices", w.vertices)?;
        } else {
            write!(
                f,
                "{} vertices welded to {} by identical position",
                w.vertices, w.welded_vertices
            )?;
        }
        if let Some(k) = &w.kept_split {
            let why = match k.reason {
                SplitReason::Skin => "their joints or weights differ".to_string(),
                SplitReason::Frame(frame) => format!("frame {frame} moves them apart"),
            };
            write!(
                f,
                "; {} kept apart from a copy at their position (e.g. vertices {} and {}: {why})",
                k.count, k.a, k.b
            )?;
        }
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        if self.boundary_edges == 0 {
            write!(
                f,
                "; closed ({} component{})",
                self.components,
                plural(self.components)
            )
        } else {
            write!(
                f,
                "; open: {} boundary edge{}, {} of {} component{} closed; open parts have no \
                 inside, the cloth is kept away on the side it is on",
                self.boundary_edges,
                plural(self.boundary_edges),
                self.closed_components,
                self.components,
                plural(self.components)
            )
        }
    }
}
