//! Validation of a [`Pattern`], parsed or made by hand: units, panel loops, edge shapes,
//! outlines and stitches.

use std::collections::HashMap;

use super::curve::Curve;
use super::problem::MAX_STITCH_LENGTH_RATIO;
use super::{
    Curvature, Panel, Pattern, PatternLocation, PatternProblem, StitchSide, edge_curve, outline,
    panel_key, pattern_err,
};
use crate::MeshError;

/// Segments per curved edge in the coarse outline used for validation.
const COARSE_CURVE_SEGMENTS: usize = 32;

/// What validation learns about a panel.
pub(crate) struct CheckedPanel {
    /// Edge curves in loop order.
    pub curves: Vec<Curve>,
    /// Area enclosed by the coarse outline (m^2, positive).
    pub coarse_area: f64,
}

/// Validates a pattern (whether parsed or made by hand): units, panel loops, edge shapes,
/// outlines, stitches.
pub(crate) fn check(pattern: &Pattern) -> Result<Vec<CheckedPanel>, MeshError> {
    let units = pattern.units_in_meter;
    if !(units.is_finite() && units > 0.0) {
        return Err(pattern_err(
            PatternLocation::key("properties.units_in_meter"),
            PatternProblem::InvalidUnits { value: units },
        ));
    }
    if pattern.panels.is_empty() {
        return Err(pattern_err(
            PatternLocation::key("pattern.panels"),
            PatternProblem::NoPanels,
        ));
    }
    let mut names: Vec<&str> = pattern.panels.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(pattern_err(
            PatternLocation::panel(w[0], "pattern.panels"),
            PatternProblem::BadPanelOrder {
                reason: format!("panel name {:?} is used twice", w[0]),
            },
        ));
    }
    let mut checked = Vec::with_capacity(pattern.panels.len());
    for panel in &pattern.panels {
        checked.push(check_panel(panel)?);
    }
    check_stitches(pattern, &checked)?;
    Ok(checked)
}

fn check_panel(panel: &Panel) -> Result<CheckedPanel, MeshError> {
    check_panel_numbers(panel)?;
    let size = panel_size(panel)?;
    let curves = edge_curves(panel, size)?;
    check_loop(panel)?;
    let coarse_area = check_outline(panel, &curves, size)?;
    Ok(CheckedPanel {
        curves,
        coarse_area,
    })
}

/// Finite vertices, translation and rotation; at least one edge; endpoints in range.
fn check_panel_numbers(panel: &Panel) -> Result<(), MeshError> {
    let name = panel.name.as_str();
    let key = panel_key(name);
    for (i, v) in panel.vertices.iter().enumerate() {
        if !(v.x.is_finite() && v.y.is_finite()) {
            return Err(pattern_err(
                PatternLocation::panel(name, format!("{key}.vertices[{i}]")),
                PatternProblem::NonFinite,
            ));
        }
    }
    let t = panel.translation;
    if !(t.x.is_finite() && t.y.is_finite() && t.z.is_finite()) {
        return Err(pattern_err(
            PatternLocation::panel(name, format!("{key}.translation")),
            PatternProblem::NonFinite,
        ));
    }
    if !panel.rotation_deg.iter().all(|a| a.is_finite()) {
        return Err(pattern_err(
            PatternLocation::panel(name, format!("{key}.rotation")),
            PatternProblem::NonFinite,
        ));
    }
    if panel.edges.is_empty() {
        return Err(pattern_err(
            PatternLocation::panel(name, format!("{key}.edges")),
            PatternProblem::OpenLoop {
                reason: "the panel has no edges".to_string(),
            },
        ));
    }
    let nv = panel.vertices.len();
    for (k, e) in panel.edges.iter().enumerate() {
        for (j, &i) in e.endpoints.iter().enumerate() {
            if i >= nv {
                return Err(pattern_err(
                    PatternLocation::edge(name, k, format!("{key}.edges[{k}].endpoints[{j}]")),
                    PatternProblem::VertexOutOfRange {
                        index: i64::try_from(i).unwrap_or(i64::MAX),
                        count: nv,
                    },
                ));
            }
        }
    }
    Ok(())
}

/// The diagonal of the bounding box of the edges' endpoints (panel units), finite.
fn panel_size(panel: &Panel) -> Result<f64, MeshError> {
    let mut lo = panel.vertices[panel.edges[0].endpoints[0]];
    let mut hi = lo;
    for e in &panel.edges {
        for &i in &e.endpoints {
            lo = lo.inf(&panel.vertices[i]);
            hi = hi.sup(&panel.vertices[i]);
        }
    }
    let size = (hi - lo).norm();
    if !size.is_finite() {
        let name = panel.name.as_str();
        return Err(pattern_err(
            PatternLocation::panel(name, format!("{}.vertices", panel_key(name))),
            PatternProblem::NonFinite,
        ));
    }
    Ok(size)
}

/// The curve of every edge, in loop order: chords finite and not negligible against the
/// panel `size`, curvature parameters finite (circle radii positive).
fn edge_curves(panel: &Panel, size: f64) -> Result<Vec<Curve>, MeshError> {
    let name = panel.name.as_str();
    let key = panel_key(name);
    let mut curves = Vec::with_capacity(panel.edges.len());
    for (k, e) in panel.edges.iter().enumerate() {
        let ekey = format!("{key}.edges[{k}]");
        let chord = (panel.vertices[e.endpoints[1]] - panel.vertices[e.endpoints[0]]).norm();
        if !chord.is_finite() {
            return Err(pattern_err(
                PatternLocation::edge(name, k, ekey),
                PatternProblem::NonFinite,
            ));
        }
        if chord <= 1e-9 * size {
            return Err(pattern_err(
                PatternLocation::edge(name, k, format!("{ekey}.endpoints")),
                PatternProblem::ZeroLengthEdge { length: chord },
            ));
        }
        check_curvature(panel, k)?;
        let Some(c) = edge_curve(panel, k) else {
            return Err(pattern_err(
                PatternLocation::edge(name, k, format!("{ekey}.curvature")),
                PatternProblem::NonFinite,
            ));
        };
        curves.push(c);
    }
    Ok(curves)
}

/// Finite curvature parameters of edge `k` (a positive radius for a circle).
fn check_curvature(panel: &Panel, k: usize) -> Result<(), MeshError> {
    let e = &panel.edges[k];
    let finite_params = match &e.curvature {
        Curvature::Straight => true,
        Curvature::Quadratic { control } => control.iter().all(|x| x.is_finite()),
        Curvature::Cubic { controls } => controls.iter().flatten().all(|x| x.is_finite()),
        Curvature::Circle { radius, .. } => radius.is_finite() && *radius > 0.0,
    };
    if finite_params {
        return Ok(());
    }
    let problem = match &e.curvature {
        Curvature::Circle { radius, .. } if radius.is_finite() => PatternProblem::BadCurvature {
            reason: format!("circle radius must be positive, got {radius} m"),
        },
        _ => PatternProblem::NonFinite,
    };
    let name = panel.name.as_str();
    let at = format!("{}.edges[{k}].curvature", panel_key(name));
    Err(pattern_err(PatternLocation::edge(name, k, at), problem))
}

/// One closed loop in array order, each vertex starting one edge.
fn check_loop(panel: &Panel) -> Result<(), MeshError> {
    let name = panel.name.as_str();
    let key = panel_key(name);
    let ne = panel.edges.len();
    let mut starts = vec![usize::MAX; panel.vertices.len()];
    for (k, e) in panel.edges.iter().enumerate() {
        let next = &panel.edges[(k + 1) % ne];
        if e.endpoints[1] != next.endpoints[0] {
            return Err(pattern_err(
                PatternLocation::edge(name, k, format!("{key}.edges[{k}].endpoints")),
                PatternProblem::OpenLoop {
                    reason: format!(
                        "edge {k} ends at vertex {} but edge {} starts at vertex {}",
                        e.endpoints[1],
                        (k + 1) % ne,
                        next.endpoints[0]
                    ),
                },
            ));
        }
        let s = &mut starts[e.endpoints[0]];
        if *s != usize::MAX {
            return Err(pattern_err(
                PatternLocation::edge(name, k, format!("{key}.edges[{k}].endpoints")),
                PatternProblem::OpenLoop {
                    reason: format!(
                        "vertex {} starts both edge {} and edge {k}: the loop passes through it twice",
                        e.endpoints[0], *s
                    ),
                },
            ));
        }
        *s = k;
    }
    Ok(())
}

/// The coarse outline (`COARSE_CURVE_SEGMENTS` per curved edge): no self-intersection, an
/// area not negligible against the panel `size`; returns the area it encloses (positive).
fn check_outline(panel: &Panel, curves: &[Curve], size: f64) -> Result<f64, MeshError> {
    let name = panel.name.as_str();
    let key = panel_key(name);
    let mut pts = Vec::new();
    let mut seg_edge = Vec::new();
    for (k, c) in curves.iter().enumerate() {
        let n = if c.is_straight() {
            1
        } else {
            COARSE_CURVE_SEGMENTS
        };
        let s = c.samples(n);
        pts.extend_from_slice(&s[..n]);
        seg_edge.extend(std::iter::repeat_n(k, n));
    }
    if let Some((i, j)) = outline::self_intersection(&pts) {
        let (ei, ej) = (seg_edge[i], seg_edge[j]);
        return Err(pattern_err(
            PatternLocation::edge(name, ei, format!("{key}.edges[{ei}]")),
            PatternProblem::SelfIntersection { other_edge: ej },
        ));
    }
    let area = outline::signed_area(&pts);
    if !area.is_finite() {
        return Err(pattern_err(
            PatternLocation::panel(name, format!("{key}.vertices")),
            PatternProblem::NonFinite,
        ));
    }
    if area.abs() <= 1e-12 * size * size {
        return Err(pattern_err(
            PatternLocation::panel(name, key),
            PatternProblem::ZeroArea,
        ));
    }
    Ok(area.abs())
}

fn check_stitches(pattern: &Pattern, checked: &[CheckedPanel]) -> Result<(), MeshError> {
    let mut used: HashMap<StitchSide, usize> = HashMap::new();
    for (s, st) in pattern.stitches.iter().enumerate() {
        let mut lengths = [0.0; 2];
        for (j, side) in st.sides.iter().enumerate() {
            let key = format!("pattern.stitches[{s}][{j}]");
            let Some(panel) = pattern.panels.get(side.panel) else {
                return Err(pattern_err(
                    PatternLocation::stitch(s, format!("{key}.panel")),
                    PatternProblem::UnknownPanel {
                        name: format!("#{}", side.panel),
                    },
                ));
            };
            let mut at = PatternLocation::stitch(s, format!("{key}.edge"));
            at.panel = Some(panel.name.clone());
            let Some(c) = checked[side.panel].curves.get(side.edge) else {
                return Err(pattern_err(
                    at,
                    PatternProblem::EdgeOutOfRange {
                        edge: i64::try_from(side.edge).unwrap_or(i64::MAX),
                        count: panel.edges.len(),
                    },
                ));
            };
            at.edge = Some(side.edge);
            if j == 1 && st.sides[0] == st.sides[1] {
                return Err(pattern_err(at, PatternProblem::SelfStitch));
            }
            if let Some(&first) = used.get(side) {
                return Err(pattern_err(
                    at,
                    PatternProblem::StitchedTwice {
                        first_stitch: first,
                    },
                ));
            }
            used.insert(*side, s);
            lengths[j] = c.length();
        }
        let ratio = lengths[0].max(lengths[1]) / lengths[0].min(lengths[1]);
        if ratio.is_nan() || ratio > MAX_STITCH_LENGTH_RATIO {
            let side = st.sides[0];
            let mut at = PatternLocation::stitch(s, format!("pattern.stitches[{s}]"));
            at.panel = Some(pattern.panels[side.panel].name.clone());
            at.edge = Some(side.edge);
            return Err(pattern_err(
                at,
                PatternProblem::StitchLengthMismatch { lengths },
            ));
        }
    }
    Ok(())
}
