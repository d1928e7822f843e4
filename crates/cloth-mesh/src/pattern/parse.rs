//! Reading the GarmentCode JSON pattern specification into a [`Pattern`].

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::validate::check;
use super::{
    Curvature, Panel, PanelEdge, Pattern, PatternLocation, PatternProblem, PatternStitch,
    StitchSide, curve::perp, panel_key, pattern_err,
};
use crate::{MeshError, Vec2, Vec3};

/// Largest pattern file [`read_pattern`] accepts (bytes): 256 MiB, far above any garment, so
/// that a wrong path fails at once instead of exhausting memory.
pub const MAX_PATTERN_BYTES: u64 = 256 << 20;

/// Reads a GarmentCode pattern specification file (see [`parse_pattern`]); files over
/// [`MAX_PATTERN_BYTES`] are refused.
pub fn read_pattern(path: impl AsRef<Path>) -> Result<Pattern, MeshError> {
    parse_pattern(&crate::obj::read_text_limited(
        path.as_ref(),
        MAX_PATTERN_BYTES,
    )?)
}

/// Parses a GarmentCode JSON pattern specification (format in the [module
/// documentation](crate::pattern)) and validates it.
///
/// Lengths are converted to metres with `properties.units_in_meter`. Panels come in
/// `pattern.panel_order` when given (it must list every panel once), else sorted by name.
/// Unknown keys are ignored. Every failure is a [`MeshError::Pattern`] naming the panel,
/// edge or stitch and the JSON path: malformed JSON, missing or mistyped keys, non-finite
/// numbers, missing units, unknown curvature types, endpoints out of range, edges that do
/// not form one closed loop, zero-length edges, outlines that enclose no area or intersect
/// themselves (checked on an outline with 32 segments per curved edge), stitches naming a
/// missing panel or edge, an edge in two stitches, and stitched edges whose lengths differ
/// by more than [`super::MAX_STITCH_LENGTH_RATIO`].
pub fn parse_pattern(json: &str) -> Result<Pattern, MeshError> {
    let json = json.strip_prefix('\u{feff}').unwrap_or(json);
    let root: Value = serde_json::from_str(json).map_err(|e| {
        pattern_err(
            PatternLocation::default(),
            PatternProblem::Json {
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            },
        )
    })?;
    let root = object(&root, "")?;

    let (units, absolute) = properties(root)?;
    let scale = 1.0 / units;

    let pattern = object(required(root, "pattern", "pattern")?, "pattern")?;
    let panels_json = object(
        required(pattern, "panels", "pattern.panels")?,
        "pattern.panels",
    )?;
    if panels_json.is_empty() {
        return Err(pattern_err(
            PatternLocation::key("pattern.panels"),
            PatternProblem::NoPanels,
        ));
    }

    let names = panel_order(pattern, panels_json)?;

    let mut panels = Vec::with_capacity(names.len());
    for name in &names {
        panels.push(parse_panel(
            name,
            &panels_json[name.as_str()],
            scale,
            absolute,
        )?);
    }
    let index: HashMap<&str, usize> = panels
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.as_str(), i))
        .collect();

    let stitches = parse_stitches(pattern, &panels, &index)?;

    let pattern = Pattern {
        panels,
        stitches,
        units_in_meter: units,
    };
    check(&pattern)?;
    Ok(pattern)
}

/// `properties.units_in_meter` (finite, positive) and whether curvature control points are
/// absolute panel coordinates (`properties.curvature_coords`).
fn properties(root: &Map<String, Value>) -> Result<(f64, bool), MeshError> {
    let props = match root.get("properties") {
        None => None,
        Some(p) => Some(object(p, "properties")?),
    };
    let units = match props.and_then(|p| p.get("units_in_meter")) {
        None => {
            return Err(pattern_err(
                PatternLocation::key("properties.units_in_meter"),
                PatternProblem::MissingUnits,
            ));
        }
        Some(v) => number(v, &PatternLocation::key("properties.units_in_meter"))?,
    };
    if !(units.is_finite() && units > 0.0) {
        return Err(pattern_err(
            PatternLocation::key("properties.units_in_meter"),
            PatternProblem::InvalidUnits { value: units },
        ));
    }
    let absolute = match props.and_then(|p| p.get("curvature_coords")) {
        None => false,
        Some(Value::String(s)) if s == "relative" => false,
        Some(Value::String(s)) if s == "absolute" => true,
        Some(_) => {
            return Err(pattern_err(
                PatternLocation::key("properties.curvature_coords"),
                PatternProblem::WrongType {
                    expected: "\"relative\" or \"absolute\"",
                },
            ));
        }
    };
    Ok((units, absolute))
}

/// The panel names in order: the file's `pattern.panel_order` (every panel once), else by
/// name (serde_json maps are sorted).
fn panel_order<'a>(
    pattern: &'a Map<String, Value>,
    panels_json: &'a Map<String, Value>,
) -> Result<Vec<&'a String>, MeshError> {
    let names: Vec<&String> = match pattern.get("panel_order") {
        None | Some(Value::Null) => panels_json.keys().collect(),
        Some(order) => {
            let at = PatternLocation::key("pattern.panel_order");
            let list = array(order, &at, "an array of panel names")?;
            let mut names = Vec::with_capacity(list.len());
            for v in list {
                match v {
                    Value::String(s) if panels_json.contains_key(s) => names.push(s),
                    Value::String(s) => {
                        return Err(pattern_err(
                            at,
                            PatternProblem::BadPanelOrder {
                                reason: format!("it names {s:?}, which is not a panel"),
                            },
                        ));
                    }
                    _ => {
                        return Err(pattern_err(
                            at,
                            PatternProblem::WrongType {
                                expected: "an array of panel names",
                            },
                        ));
                    }
                }
            }
            let mut sorted = names.clone();
            sorted.sort();
            sorted.dedup();
            if sorted.len() != names.len() || names.len() != panels_json.len() {
                return Err(pattern_err(
                    at,
                    PatternProblem::BadPanelOrder {
                        reason: format!(
                            "it lists {} names for {} panels; every panel must appear once",
                            names.len(),
                            panels_json.len()
                        ),
                    },
                ));
            }
            names
        }
    };
    Ok(names)
}

/// The stitches of `pattern.stitches` (none when absent), naming panels by their `index`.
fn parse_stitches(
    pattern: &Map<String, Value>,
    panels: &[Panel],
    index: &HashMap<&str, usize>,
) -> Result<Vec<PatternStitch>, MeshError> {
    let mut stitches = Vec::new();
    if let Some(list) = pattern.get("stitches") {
        let list = array(
            list,
            &PatternLocation::key("pattern.stitches"),
            "an array of stitches",
        )?;
        for (s, st) in list.iter().enumerate() {
            stitches.push(parse_stitch(s, st, panels, index)?);
        }
    }
    Ok(stitches)
}

fn parse_panel(name: &str, v: &Value, scale: f64, absolute: bool) -> Result<Panel, MeshError> {
    let key = panel_key(name);
    let at = |k: String| PatternLocation::panel(name, k);
    let obj = object_at(v, at(key.clone()))?;

    let verts_json = required_at(obj, "vertices", at(format!("{key}.vertices")))?;
    let verts_json = array(
        verts_json,
        &at(format!("{key}.vertices")),
        "an array of [x, y] points",
    )?;
    let mut vertices = Vec::with_capacity(verts_json.len());
    for (i, p) in verts_json.iter().enumerate() {
        let [x, y] = numbers::<2>(p, &at(format!("{key}.vertices[{i}]")), "[x, y]")?;
        vertices.push(Vec2::new(x, y) * scale);
    }

    let translation = match obj.get("translation") {
        None => Vec3::zeros(),
        Some(t) => {
            let [x, y, z] = numbers::<3>(t, &at(format!("{key}.translation")), "[x, y, z]")?;
            Vec3::new(x, y, z) * scale
        }
    };
    let rotation_deg = match obj.get("rotation") {
        None => [0.0; 3],
        Some(r) => numbers::<3>(
            r,
            &at(format!("{key}.rotation")),
            "[rx, ry, rz] Euler angles in degrees",
        )?,
    };

    let edges_json = required_at(obj, "edges", at(format!("{key}.edges")))?;
    let edges_json = array(edges_json, &at(format!("{key}.edges")), "an array of edges")?;
    let mut edges = Vec::with_capacity(edges_json.len());
    for (k, e) in edges_json.iter().enumerate() {
        edges.push(parse_edge(name, k, e, &vertices, scale, absolute)?);
    }
    Ok(Panel {
        name: name.to_string(),
        vertices,
        edges,
        translation,
        rotation_deg,
    })
}

/// Edge `k` of panel `name`: endpoints (indices into `vertices`), curvature (made relative
/// when `absolute`), label.
fn parse_edge(
    name: &str,
    k: usize,
    e: &Value,
    vertices: &[Vec2],
    scale: f64,
    absolute: bool,
) -> Result<PanelEdge, MeshError> {
    let key = panel_key(name);
    let ekey = format!("{key}.edges[{k}]");
    let eat = |suffix: &str| PatternLocation::edge(name, k, format!("{ekey}{suffix}"));
    let eobj = object_at(e, eat(""))?;
    let ends = required_at(eobj, "endpoints", eat(".endpoints"))?;
    let ends = array(ends, &eat(".endpoints"), "[start, end] vertex indices")?;
    if ends.len() != 2 {
        return Err(pattern_err(
            eat(".endpoints"),
            PatternProblem::WrongType {
                expected: "[start, end] vertex indices",
            },
        ));
    }
    let mut endpoints = [0usize; 2];
    for (j, x) in ends.iter().enumerate() {
        let i = integer(x, &eat(&format!(".endpoints[{j}]")))?;
        endpoints[j] = match usize::try_from(i) {
            Ok(u) if u < vertices.len() => u,
            _ => {
                return Err(pattern_err(
                    eat(&format!(".endpoints[{j}]")),
                    PatternProblem::VertexOutOfRange {
                        index: i,
                        count: vertices.len(),
                    },
                ));
            }
        };
    }
    let curvature = match eobj.get("curvature") {
        None | Some(Value::Null) => Curvature::Straight,
        Some(c) => {
            let c = parse_curvature(c, &eat(".curvature"), scale)?;
            if absolute {
                to_relative(c, vertices[endpoints[0]], vertices[endpoints[1]], scale)
            } else {
                c
            }
        }
    };
    let label = match eobj.get("label") {
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    Ok(PanelEdge {
        endpoints,
        curvature,
        label,
    })
}

/// Parses an edge's `curvature` (relative control points; circle radius scaled to metres).
fn parse_curvature(c: &Value, at: &PatternLocation, scale: f64) -> Result<Curvature, MeshError> {
    let bad = |reason: &str| {
        pattern_err(
            at.clone(),
            PatternProblem::BadCurvature {
                reason: reason.to_string(),
            },
        )
    };
    // Legacy form: a bare [a, b] is a quadratic control point.
    if c.is_array() {
        let control = numbers::<2>(c, at, "[a, b] (legacy quadratic control point)")?;
        return Ok(Curvature::Quadratic { control });
    }
    let obj = object_at(c, at.clone())?;
    let kind = match obj.get("type") {
        Some(Value::String(s)) => s.as_str(),
        Some(_) => {
            return Err(pattern_err(
                with_key(at, ".type"),
                PatternProblem::WrongType {
                    expected: "a curvature type string",
                },
            ));
        }
        None => return Err(pattern_err(with_key(at, ".type"), PatternProblem::Missing)),
    };
    let params_at = with_key(at, ".params");
    let params = match kind {
        "quadratic" | "cubic" | "circle" => {
            let p = required_at(obj, "params", params_at.clone())?;
            array(p, &params_at, "an array of curvature parameters")?
        }
        other => {
            return Err(pattern_err(
                with_key(at, ".type"),
                PatternProblem::UnknownCurvature {
                    kind: other.to_string(),
                },
            ));
        }
    };
    match kind {
        "quadratic" => {
            // [[a, b]] as GarmentCode writes it; a flat [a, b] is accepted too.
            let control = if params.len() == 2 && params.iter().all(Value::is_number) {
                numbers::<2>(&Value::Array(params.clone()), &params_at, "[[a, b]]")?
            } else if params.len() == 1 {
                numbers::<2>(&params[0], &with_key(&params_at, "[0]"), "[a, b]")?
            } else {
                return Err(bad("a quadratic curve has one control point [[a, b]]"));
            };
            Ok(Curvature::Quadratic { control })
        }
        "cubic" => {
            if params.len() != 2 {
                return Err(bad(
                    "a cubic curve has two control points [[a1, b1], [a2, b2]]",
                ));
            }
            let c0 = numbers::<2>(&params[0], &with_key(&params_at, "[0]"), "[a, b]")?;
            let c1 = numbers::<2>(&params[1], &with_key(&params_at, "[1]"), "[a, b]")?;
            Ok(Curvature::Cubic { controls: [c0, c1] })
        }
        _ => {
            if params.len() != 3 {
                return Err(bad("a circle has params [radius, large_arc, right]"));
            }
            let radius = number(&params[0], &with_key(&params_at, "[0]"))? * scale;
            let large_arc = flag(&params[1], &with_key(&params_at, "[1]"))?;
            let right = flag(&params[2], &with_key(&params_at, "[2]"))?;
            Ok(Curvature::Circle {
                radius,
                large_arc,
                right,
            })
        }
    }
}

/// Converts absolute Bezier control points (panel units, already scaled by the caller for
/// the circle radius only) to control points relative to the edge `a -> b` (metres).
fn to_relative(c: Curvature, a: Vec2, b: Vec2, scale: f64) -> Curvature {
    let d = b - a;
    let dd = d.norm_squared();
    let rel = |p: [f64; 2]| {
        let q = Vec2::new(p[0], p[1]) * scale - a;
        if dd > 0.0 {
            [q.dot(&d) / dd, q.dot(&perp(d)) / dd]
        } else {
            [0.0, 0.0]
        }
    };
    match c {
        Curvature::Quadratic { control } => Curvature::Quadratic {
            control: rel(control),
        },
        Curvature::Cubic { controls } => Curvature::Cubic {
            controls: [rel(controls[0]), rel(controls[1])],
        },
        other => other,
    }
}

fn parse_stitch(
    s: usize,
    st: &Value,
    panels: &[Panel],
    index: &HashMap<&str, usize>,
) -> Result<PatternStitch, MeshError> {
    let key = format!("pattern.stitches[{s}]");
    let at = PatternLocation::stitch(s, key.clone());
    let items = array(
        st,
        &at,
        "[{\"panel\": name, \"edge\": index}, {\"panel\": name, \"edge\": index}]",
    )?;
    if items.len() < 2 {
        return Err(pattern_err(
            at,
            PatternProblem::WrongType {
                expected: "two stitch sides {\"panel\": name, \"edge\": index}",
            },
        ));
    }
    let mut sides = [StitchSide { panel: 0, edge: 0 }; 2];
    for (j, side) in items[..2].iter().enumerate() {
        let skey = format!("{key}[{j}]");
        let obj = object_at(side, PatternLocation::stitch(s, skey.clone()))?;
        let name = match obj.get("panel") {
            Some(Value::String(n)) => n,
            Some(_) => {
                return Err(pattern_err(
                    PatternLocation::stitch(s, format!("{skey}.panel")),
                    PatternProblem::WrongType {
                        expected: "a panel name",
                    },
                ));
            }
            None => {
                return Err(pattern_err(
                    PatternLocation::stitch(s, format!("{skey}.panel")),
                    PatternProblem::Missing,
                ));
            }
        };
        let Some(&p) = index.get(name.as_str()) else {
            return Err(pattern_err(
                PatternLocation::stitch(s, format!("{skey}.panel")),
                PatternProblem::UnknownPanel { name: name.clone() },
            ));
        };
        let mut eat = PatternLocation::stitch(s, format!("{skey}.edge"));
        eat.panel = Some(name.clone());
        let e = required_at(obj, "edge", eat.clone())?;
        let e = integer(e, &eat)?;
        let count = panels[p].edges.len();
        let edge = match usize::try_from(e) {
            Ok(u) if u < count => u,
            _ => {
                return Err(pattern_err(
                    eat,
                    PatternProblem::EdgeOutOfRange { edge: e, count },
                ));
            }
        };
        sides[j] = StitchSide { panel: p, edge };
    }
    let mut right_wrong = false;
    for (j, extra) in items[2..].iter().enumerate() {
        match extra {
            Value::String(f) if f == "right_wrong" => right_wrong = true,
            other => {
                return Err(pattern_err(
                    PatternLocation::stitch(s, format!("{key}[{}]", j + 2)),
                    PatternProblem::UnknownStitchFlag {
                        flag: truncate(other.to_string()),
                    },
                ));
            }
        }
    }
    Ok(PatternStitch { sides, right_wrong })
}

fn truncate(mut s: String) -> String {
    if s.len() > 60 {
        let mut cut = 57;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

fn with_key(at: &PatternLocation, suffix: &str) -> PatternLocation {
    let mut at = at.clone();
    at.key.push_str(suffix);
    at
}

fn object<'a>(v: &'a Value, key: &str) -> Result<&'a Map<String, Value>, MeshError> {
    object_at(v, PatternLocation::key(key))
}

fn object_at(v: &Value, at: PatternLocation) -> Result<&Map<String, Value>, MeshError> {
    v.as_object().ok_or_else(|| {
        pattern_err(
            at,
            PatternProblem::WrongType {
                expected: "a JSON object",
            },
        )
    })
}

fn required<'a>(obj: &'a Map<String, Value>, k: &str, key: &str) -> Result<&'a Value, MeshError> {
    required_at(obj, k, PatternLocation::key(key))
}

fn required_at<'a>(
    obj: &'a Map<String, Value>,
    k: &str,
    at: PatternLocation,
) -> Result<&'a Value, MeshError> {
    obj.get(k)
        .ok_or_else(|| pattern_err(at, PatternProblem::Missing))
}

fn array<'a>(
    v: &'a Value,
    at: &PatternLocation,
    expected: &'static str,
) -> Result<&'a Vec<Value>, MeshError> {
    v.as_array()
        .ok_or_else(|| pattern_err(at.clone(), PatternProblem::WrongType { expected }))
}

fn number(v: &Value, at: &PatternLocation) -> Result<f64, MeshError> {
    match v.as_f64() {
        Some(x) if x.is_finite() => Ok(x),
        Some(_) => Err(pattern_err(at.clone(), PatternProblem::NonFinite)),
        None => Err(pattern_err(
            at.clone(),
            PatternProblem::WrongType {
                expected: "a number",
            },
        )),
    }
}

fn numbers<const N: usize>(
    v: &Value,
    at: &PatternLocation,
    expected: &'static str,
) -> Result<[f64; N], MeshError> {
    let list = array(v, at, expected)?;
    if list.len() != N {
        return Err(pattern_err(
            at.clone(),
            PatternProblem::WrongType { expected },
        ));
    }
    let mut out = [0.0; N];
    for (i, x) in list.iter().enumerate() {
        out[i] = number(x, &with_key(at, &format!("[{i}]")))?;
    }
    Ok(out)
}

fn integer(v: &Value, at: &PatternLocation) -> Result<i64, MeshError> {
    v.as_i64().ok_or_else(|| {
        pattern_err(
            at.clone(),
            PatternProblem::WrongType {
                expected: "an integer index",
            },
        )
    })
}

/// A 0/1 number or a boolean (GarmentCode writes `int(flag)`).
fn flag(v: &Value, at: &PatternLocation) -> Result<bool, MeshError> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Number(_) => match v.as_f64() {
            Some(0.0) => Ok(false),
            Some(1.0) => Ok(true),
            _ => Err(pattern_err(
                at.clone(),
                PatternProblem::WrongType {
                    expected: "a flag: 0, 1, true or false",
                },
            )),
        },
        _ => Err(pattern_err(
            at.clone(),
            PatternProblem::WrongType {
                expected: "a flag: 0, 1, true or false",
            },
        )),
    }
}
