//! Sewing patterns in the GarmentCode JSON pattern specification, made into a cloth mesh plus
//! the stitches that sew its panels into a garment.
//!
//! # The format, as the reference reader interprets it
//!
//! The GarmentCode pattern specification (used by GarmentCode and GarmentCodeData; reference
//! reader `pygarment/pattern/core.py`, mesher `pygarment/meshgen/boxmeshgen.py`) is a JSON
//! object:
//!
//! ```json
//! { "pattern": {
//!     "panels": { "front": {
//!         "vertices": [[x, y], ...],
//!         "edges": [ {"endpoints": [0, 1]},
//!                    {"endpoints": [1, 2], "curvature": {"type": "quadratic", "params": [[0.5, 0.1]]}},
//!                    ... ],
//!         "translation": [tx, ty, tz], "rotation": [rx, ry, rz] }, ... },
//!     "stitches": [ [{"panel": "front", "edge": 1}, {"panel": "back", "edge": 3}], ... ],
//!     "panel_order": ["back", "front"] },
//!   "properties": { "units_in_meter": 100, "curvature_coords": "relative" } }
//! ```
//!
//! - Lengths (vertices, translation, circle radii) are in units of `1 / units_in_meter`
//!   metres (100: centimetres); this reader converts everything to metres. Missing units are
//!   an error.
//! - A panel is a closed loop of edges in array order, edge `k` ending where edge `k + 1`
//!   starts. Its vertices are 2-D panel coordinates. GarmentCode writes loops
//!   counter-clockwise, and the panel's outside (its normal) is then the local `+z` axis
//!   carried to 3-D by the panel rotation: the right-hand rule on the loop.
//! - 3-D placement: `world = R (x, y, 0) + translation` with `R = Rz(rz) Ry(ry) Rx(rx)`,
//!   angles in degrees (`rotation.euler_xyz_to_R`): rotations about the fixed world x, then
//!   y, then z axes, i.e. scipy's extrinsic `"xyz"` (equivalently intrinsic `"ZYX"`). The
//!   reader's comment calls this Maya's "xyz" order.
//! - Bezier curvature (`quadratic`: one control point, `cubic`: two, and the legacy form of a
//!   bare `[a, b]` list for a quadratic) is given relative to the edge: with `d = end -
//!   start` and its left normal `n = (-d.y, d.x)` (same length), a control point `[a, b]`
//!   sits at `start + a d + b n` (`utils.rel_to_abs_2d`). With `properties.curvature_coords
//!   = "absolute"` (legacy files) control points are panel coordinates; the reader converts
//!   them to relative ones.
//! - `circle` curvature is `params: [radius, large_arc, right]`, an SVG arc from start to
//!   end: `radius` in length units, `large_arc` picks the arc longer than half a circle, and
//!   `right` (GarmentCode's `control_y < 0`, passed as the SVG sweep flag by the mesher
//!   `boxmeshgen.py`) makes the arc turn counter-clockwise about its centre in panel
//!   coordinates, which puts it to the right of the direction start -> end, small or large.
//!   (The 2-D drawing code `wrappers.py` negates the flag because it flips y for SVG.)
//! - A stitch `[{panel, edge}, {panel, edge}]` sews two edges. By default the edges run in
//!   opposite directions: the end of the first meets the start of the second, which sews the
//!   outside of one panel to the outside of the other and keeps the garment consistently
//!   oriented. A trailing `"right_wrong"` sews them in the same direction (start to start).
//!
//! # From pattern to garment
//!
//! [`Pattern::build`] discretises every edge into segments of at most about the target
//! length by arc length, triangulates each panel (constrained Delaunay with refinement,
//! keeping the outline), places it in 3-D and collects the stitches:
//!
//! - Rest (u, v) coordinates are the panel's own 2-D coordinates in metres. A panel whose
//!   loop is clockwise is mirrored (`u = -x`), so its triangles are counter-clockwise in
//!   (u, v) while their normals keep the reference's orientation (the loop's right-hand
//!   normal); [`GarmentPanel::mirrored`] records it.
//! - Both edges of a stitch get the same number of segments, `max(ceil(L1 / h), ceil(L2 /
//!   h))`, at equal arc-length fractions, so vertex `i` of one meets vertex `i` of the other
//!   (counted from the matching ends). Unstitched edges get `ceil(L / h)` segments.
//! - An edge takes part in at most one stitch (as in the reference mesher, which rejects
//!   "multi-stitching"); stitched edges must not differ in length by more than
//!   [`MAX_STITCH_LENGTH_RATIO`].
//! - Panel corners are shared by the two edges meeting there, so a corner at the end of two
//!   stitched edges is paired by both stitches; sewing welds all paired vertices
//!   transitively (a corner may end up joined to corners of several panels, e.g. the
//!   underarm point of a shirt).
//! - [`Garment::stitches`] lists each pair of vertices to sew once: pairs of a vertex with
//!   itself (the tip of a dart sewn in its own panel) and repeats of a pair met in an earlier
//!   stitch are left out.
//! - [`Garment::openings`] is the number of boundary loops of the sewn surface, found by
//!   welding every stitched pair and counting the connected components of the edges that then
//!   have one triangle ([`count_boundary_loops`]). Openings touching at a single vertex count
//!   as one.
//!
//! ```
//! use cloth_mesh::parse_pattern;
//!
//! // One 100 x 60 cm panel with a curved hem, its two sides sewn together: a tube.
//! // (`read_pattern(path)` reads the same from a file, e.g. `assets/patterns/tshirt.json`.)
//! let json = r#"{"pattern": {"panels": {"skirt": {
//!         "translation": [0, 0, 0], "rotation": [0, 0, 0],
//!         "vertices": [[0, 0], [100, 0], [100, 60], [0, 60]],
//!         "edges": [{"endpoints": [0, 1],
//!                    "curvature": {"type": "quadratic", "params": [[0.5, -0.1]]}},
//!                   {"endpoints": [1, 2]}, {"endpoints": [2, 3]}, {"endpoints": [3, 0]}]}},
//!         "stitches": [[{"panel": "skirt", "edge": 1}, {"panel": "skirt", "edge": 3}]]},
//!     "properties": {"units_in_meter": 100}}"#;
//! let pattern = parse_pattern(json)?;
//! let tube = pattern.build(0.05)?; // edges of about 5 cm
//! assert_eq!(tube.openings, 2); // waist and hem
//! // Both edges of every stitch carry the same number of vertices.
//! for st in &pattern.stitches {
//!     let [a, b] = st.sides;
//!     assert_eq!(
//!         tube.panels[a.panel].edges[a.edge].len(),
//!         tube.panels[b.panel].edges[b.edge].len()
//!     );
//! }
//! println!("{}", tube.summary());
//! # Ok::<(), cloth_mesh::MeshError>(())
//! ```

mod curve;
mod garment;
mod outline;
mod parse;
mod problem;
mod transfer;
mod triangulate;
mod validate;

use nalgebra::Rotation3;

pub use garment::{
    Garment, GarmentPanel, GarmentSummary, MAX_GARMENT_VERTICES, PanelSummary, Stitch,
    count_boundary_loops,
};
pub use parse::{MAX_PATTERN_BYTES, parse_pattern, read_pattern};
pub use problem::{MAX_STITCH_LENGTH_RATIO, PatternLocation, PatternProblem};
pub use transfer::GarmentTransfer;

use crate::{MeshError, Vec2, Vec3};
use curve::Curve;

/// A sewing pattern: panels (2-D outlines placed in 3-D) and stitches between their edges.
/// All lengths in metres. Build one with [`parse_pattern`] / [`read_pattern`]; patterns made
/// or edited by hand are validated again by [`Pattern::build`].
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    /// Panels, in `pattern.panel_order` when the file gives one, else sorted by name.
    pub panels: Vec<Panel>,
    /// Stitches, in file order.
    pub stitches: Vec<PatternStitch>,
    /// `properties.units_in_meter` of the file (e.g. 100 for centimetres); informative only,
    /// lengths here are already in metres.
    pub units_in_meter: f64,
}

/// One flat piece of cloth.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// Name (the key in `pattern.panels`).
    pub name: String,
    /// 2-D panel coordinates of the corners (m).
    pub vertices: Vec<Vec2>,
    /// Edges in loop order: edge `k` ends where edge `k + 1` starts.
    pub edges: Vec<PanelEdge>,
    /// Translation (m) applied after the rotation.
    pub translation: Vec3,
    /// Euler angles in degrees `[rx, ry, rz]`; see [`Panel::rotation`].
    pub rotation_deg: [f64; 3],
}

impl Panel {
    /// The rotation `R = Rz(rz) Ry(ry) Rx(rx)` (rotations about the fixed world x, then y,
    /// then z axes), as the reference reader applies it.
    pub fn rotation(&self) -> Rotation3<f64> {
        let [rx, ry, rz] = self.rotation_deg.map(f64::to_radians);
        Rotation3::from_axis_angle(&Vec3::z_axis(), rz)
            * Rotation3::from_axis_angle(&Vec3::y_axis(), ry)
            * Rotation3::from_axis_angle(&Vec3::x_axis(), rx)
    }

    /// World position (m) of the panel point `p` (panel coordinates, m).
    pub fn to_world(&self, p: Vec2) -> Vec3 {
        self.rotation() * Vec3::new(p.x, p.y, 0.0) + self.translation
    }

    /// Arc length (m) of edge `k`, or `None` if the edge does not exist or is invalid.
    pub fn edge_length(&self, k: usize) -> Option<f64> {
        edge_curve(self, k).map(|c| c.length())
    }
}

/// One edge of a panel.
#[derive(Clone, Debug, PartialEq)]
pub struct PanelEdge {
    /// Start and end vertex (indices into [`Panel::vertices`]).
    pub endpoints: [usize; 2],
    /// Shape of the edge between its endpoints.
    pub curvature: Curvature,
    /// GarmentCode's semantic label (e.g. `"lower_interface"`), if any.
    pub label: Option<String>,
}

/// The shape of an edge. Bezier control points are relative to the edge (see the module
/// documentation): `[a, b]` is at `start + a (end - start) + b n`, `n` the left normal of
/// `end - start` with the same length.
#[derive(Clone, Debug, PartialEq)]
pub enum Curvature {
    /// A straight segment.
    Straight,
    /// Quadratic Bezier with one relative control point.
    Quadratic {
        /// `[a, b]`, relative to the edge.
        control: [f64; 2],
    },
    /// Cubic Bezier with two relative control points.
    Cubic {
        /// `[[a1, b1], [a2, b2]]`, relative to the edge.
        controls: [[f64; 2]; 2],
    },
    /// Circular arc (SVG arc semantics, see the module documentation).
    Circle {
        /// Radius (m); raised to half the chord when smaller.
        radius: f64,
        /// The arc spans more than half a circle.
        large_arc: bool,
        /// The arc turns counter-clockwise about its centre, passing to the right of
        /// start -> end.
        right: bool,
    },
}

/// One side of a stitch: an edge of a panel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StitchSide {
    /// Index into [`Pattern::panels`].
    pub panel: usize,
    /// Index into that panel's [`Panel::edges`].
    pub edge: usize,
}

/// A stitch sewing two panel edges together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PatternStitch {
    /// The two edges.
    pub sides: [StitchSide; 2],
    /// `"right_wrong"`: the edges run in the same direction (start meets start). Otherwise
    /// (the default) the end of `sides[0]` meets the start of `sides[1]`.
    pub right_wrong: bool,
}

/// The curve of edge `k` of `panel` in panel coordinates (m), or `None` when the edge does
/// not exist, its endpoints are out of range or coincide, or a number is not finite.
pub(crate) fn edge_curve(panel: &Panel, k: usize) -> Option<Curve> {
    let e = panel.edges.get(k)?;
    let a = *panel.vertices.get(e.endpoints[0])?;
    let b = *panel.vertices.get(e.endpoints[1])?;
    let d = b - a;
    if d.norm().is_nan() || d.norm() <= 0.0 {
        return None;
    }
    let rel = |c: [f64; 2]| a + c[0] * d + c[1] * curve::perp(d);
    let c = match &e.curvature {
        Curvature::Straight => Curve::line(a, b),
        Curvature::Quadratic { control } => Curve::bezier(vec![a, rel(*control), b]),
        Curvature::Cubic { controls } => {
            Curve::bezier(vec![a, rel(controls[0]), rel(controls[1]), b])
        }
        Curvature::Circle {
            radius,
            large_arc,
            right,
        } => Curve::arc(a, b, *radius, *large_arc, *right)?,
    };
    let l = c.length();
    (l.is_finite() && l > 0.0).then_some(c)
}

fn pattern_err(at: PatternLocation, problem: PatternProblem) -> MeshError {
    MeshError::Pattern { at, problem }
}

/// JSON path of panel `name`.
fn panel_key(name: &str) -> String {
    format!("pattern.panels.{name}")
}
