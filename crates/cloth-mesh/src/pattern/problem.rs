//! What went wrong in a sewing pattern, and where: the payload of [`crate::MeshError::Pattern`].

use std::fmt;

/// Largest allowed ratio between the arc lengths of two stitched edges. Sewing a longer edge
/// to a shorter one gathers the longer one; beyond this ratio the pattern is taken to be in
/// error (a wrong edge index, typically) rather than a deliberate gather.
pub const MAX_STITCH_LENGTH_RATIO: f64 = 1.5;

/// Where in a sewing pattern a problem was found.
///
/// `panel`, `edge` and `stitch` name the garment element when the problem belongs to one;
/// `key` is the JSON path of the offending value (e.g. `pattern.panels.front.edges[3].curvature`),
/// empty for problems of the whole document (such as a JSON syntax error). Edge and stitch
/// indices are 0-based, as in the file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PatternLocation {
    /// Panel name, when the problem belongs to a panel.
    pub panel: Option<String>,
    /// Edge index within `panel` (0-based, as in the panel's `edges` array).
    pub edge: Option<usize>,
    /// Stitch index (0-based, as in `pattern.stitches`).
    pub stitch: Option<usize>,
    /// JSON path of the offending value; empty for the whole document.
    pub key: String,
}

impl PatternLocation {
    /// A location given only by its JSON path.
    pub(crate) fn key(key: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            ..Self::default()
        }
    }

    /// A location in panel `panel` at JSON path `key`.
    pub(crate) fn panel(panel: &str, key: impl Into<String>) -> Self {
        Self {
            panel: Some(panel.to_string()),
            key: key.into(),
            ..Self::default()
        }
    }

    /// A location at edge `edge` of panel `panel`.
    pub(crate) fn edge(panel: &str, edge: usize, key: impl Into<String>) -> Self {
        Self {
            panel: Some(panel.to_string()),
            edge: Some(edge),
            key: key.into(),
            ..Self::default()
        }
    }

    /// A location in stitch `stitch`.
    pub(crate) fn stitch(stitch: usize, key: impl Into<String>) -> Self {
        Self {
            stitch: Some(stitch),
            key: key.into(),
            ..Self::default()
        }
    }
}

impl fmt::Display for PatternLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(s) = self.stitch {
            parts.push(format!("stitch {s}"));
        }
        if let Some(p) = &self.panel {
            parts.push(format!("panel {p:?}"));
        }
        if let Some(e) = self.edge {
            parts.push(format!("edge {e}"));
        }
        let named = parts.join(", ");
        match (named.is_empty(), self.key.is_empty()) {
            (true, true) => write!(f, "document"),
            (true, false) => write!(f, "{}", self.key),
            (false, true) => write!(f, "{named}"),
            (false, false) => write!(f, "{named} ({})", self.key),
        }
    }
}

/// What is wrong with a sewing pattern (see [`crate::MeshError::Pattern`]).
///
/// Lengths are in metres (after applying `properties.units_in_meter`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PatternProblem {
    /// The text is not valid JSON (1-based line and column).
    Json {
        /// 1-based line of the syntax error.
        line: usize,
        /// 1-based column of the syntax error.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// A required key is missing.
    Missing,
    /// A value has the wrong JSON type or shape.
    WrongType {
        /// What was expected, e.g. "an array of two numbers".
        expected: &'static str,
    },
    /// A number is not finite, or a computed length or area overflowed.
    NonFinite,
    /// `properties.units_in_meter` is missing: lengths cannot be converted to metres.
    MissingUnits,
    /// `properties.units_in_meter` is not a finite positive number.
    InvalidUnits {
        /// The value found.
        value: f64,
    },
    /// The pattern has no panels.
    NoPanels,
    /// `pattern.panel_order` does not list every panel exactly once.
    BadPanelOrder {
        /// What is wrong with it.
        reason: String,
    },
    /// An edge curvature `type` other than `quadratic`, `cubic` or `circle`.
    UnknownCurvature {
        /// The type found.
        kind: String,
    },
    /// A curvature's `params` do not fit its type.
    BadCurvature {
        /// What is wrong with them.
        reason: String,
    },
    /// An edge endpoint refers to a vertex that does not exist.
    VertexOutOfRange {
        /// The index given.
        index: i64,
        /// Number of vertices in the panel.
        count: usize,
    },
    /// An edge whose endpoints coincide (or nearly: below 1e-9 of the panel's size).
    ZeroLengthEdge {
        /// Distance between its endpoints (m).
        length: f64,
    },
    /// The panel's edges do not form one closed loop, each edge starting where the previous
    /// one ends.
    OpenLoop {
        /// Where the chain breaks.
        reason: String,
    },
    /// The panel outline encloses no area.
    ZeroArea,
    /// The panel outline crosses or touches itself: the edge named by the location meets
    /// `other_edge` of the same panel.
    SelfIntersection {
        /// The other edge involved (0-based index in the panel).
        other_edge: usize,
    },
    /// A stitch names a panel that does not exist.
    UnknownPanel {
        /// The name given.
        name: String,
    },
    /// A stitch names an edge index that the panel does not have.
    EdgeOutOfRange {
        /// The index given.
        edge: i64,
        /// Number of edges of the panel.
        count: usize,
    },
    /// Both sides of a stitch name the same edge.
    SelfStitch,
    /// The edge is already sewn by an earlier stitch; an edge may take part in one stitch only.
    StitchedTwice {
        /// The earlier stitch (0-based).
        first_stitch: usize,
    },
    /// A stitch trailing element other than `"right_wrong"`.
    UnknownStitchFlag {
        /// The element found, as JSON text.
        flag: String,
    },
    /// The two stitched edges differ in length by more than
    /// [`MAX_STITCH_LENGTH_RATIO`].
    StitchLengthMismatch {
        /// Arc lengths of the two sides (m), in stitch order.
        lengths: [f64; 2],
    },
    /// Triangulating the panel failed.
    Triangulation {
        /// What failed.
        reason: String,
    },
}

impl fmt::Display for PatternProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Json {
                line,
                column,
                message,
            } => write!(f, "invalid JSON at line {line} column {column}: {message}"),
            Self::Missing => write!(f, "required key is missing"),
            Self::WrongType { expected } => write!(f, "expected {expected}"),
            Self::NonFinite => write!(f, "number is not finite (or a length overflows)"),
            Self::MissingUnits => write!(
                f,
                "properties.units_in_meter is missing: cannot convert lengths to metres"
            ),
            Self::InvalidUnits { value } => {
                write!(f, "units_in_meter must be finite and positive, got {value}")
            }
            Self::NoPanels => write!(f, "the pattern has no panels"),
            Self::BadPanelOrder { reason } => write!(f, "invalid panel_order: {reason}"),
            Self::UnknownCurvature { kind } => write!(
                f,
                "unknown curvature type {kind:?} (expected quadratic, cubic or circle)"
            ),
            Self::BadCurvature { reason } => write!(f, "invalid curvature: {reason}"),
            Self::VertexOutOfRange { index, count } => write!(
                f,
                "endpoint {index} out of range: the panel has {count} vertices"
            ),
            Self::ZeroLengthEdge { length } => {
                write!(f, "edge has zero length (endpoints {length:e} m apart)")
            }
            Self::OpenLoop { reason } => write!(f, "edges do not form a closed loop: {reason}"),
            Self::ZeroArea => write!(f, "panel outline encloses no area"),
            Self::SelfIntersection { other_edge } => {
                write!(
                    f,
                    "panel outline intersects itself: meets edge {other_edge}"
                )
            }
            Self::UnknownPanel { name } => write!(f, "no panel named {name:?}"),
            Self::EdgeOutOfRange { edge, count } => {
                write!(f, "edge {edge} out of range: the panel has {count} edges")
            }
            Self::SelfStitch => write!(f, "both sides of the stitch are the same edge"),
            Self::StitchedTwice { first_stitch } => write!(
                f,
                "edge is already sewn by stitch {first_stitch}; an edge takes part in one stitch only"
            ),
            Self::UnknownStitchFlag { flag } => {
                write!(
                    f,
                    "unknown stitch element {flag} (only \"right_wrong\" is known)"
                )
            }
            Self::StitchLengthMismatch { lengths } => write!(
                f,
                "stitched edges differ too much in length: {:.4} m and {:.4} m (ratio {:.3} > {})",
                lengths[0],
                lengths[1],
                lengths[0].max(lengths[1]) / lengths[0].min(lengths[1]),
                MAX_STITCH_LENGTH_RATIO
            ),
            Self::Triangulation { reason } => write!(f, "triangulation failed: {reason}"),
        }
    }
}
