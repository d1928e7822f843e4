//! Sewing patterns (GarmentCode JSON): the example garments build with the expected openings,
//! stitched edges match vertex for vertex, rest areas equal the panels' areas computed
//! independently from the file, placement follows the reference reader's conventions, and
//! every kind of bad input is a one-line error naming its element.

mod common;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use cloth_mesh::{
    ClothMesh, Garment, MeshError, Pattern, PatternProblem, Vec2, Vec3, count_boundary_loops,
    parse_pattern, read_pattern,
};
use common::check_invariants;
use serde_json::Value;

fn asset(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../assets/patterns")
        .join(name)
}

/// The example garments and the openings each must have once sewn.
const EXAMPLES: [(&str, usize); 5] = [
    ("skirt.json", 2),
    ("long_skirt.json", 2),
    ("tshirt.json", 4),
    ("blouse.json", 4),
    ("trousers.json", 3),
];

// ---------------------------------------------------------------------------------------
// Independent evaluation of the file: its own curve formulas (Bernstein polynomials, the SVG
// endpoint-to-centre arc conversion of SVG 1.1 appendix F.6.5), no code shared with the
// reader.

fn xy(v: &Value) -> [f64; 2] {
    [v[0].as_f64().unwrap(), v[1].as_f64().unwrap()]
}

/// Points along one edge, in file units, `n + 1` of them, start and end included.
fn independent_edge_points(verts: &[[f64; 2]], edge: &Value, n: usize) -> Vec<[f64; 2]> {
    let ends = &edge["endpoints"];
    let s = verts[ends[0].as_u64().unwrap() as usize];
    let e = verts[ends[1].as_u64().unwrap() as usize];
    let d = [e[0] - s[0], e[1] - s[1]];
    let rel = |p: [f64; 2]| {
        [
            s[0] + p[0] * d[0] - p[1] * d[1],
            s[1] + p[0] * d[1] + p[1] * d[0],
        ]
    };
    let curv = &edge["curvature"];
    let ts = (0..=n).map(|i| i as f64 / n as f64);
    match curv["type"].as_str() {
        None => vec![s, e],
        Some("quadratic") | Some("cubic") => {
            let mut ctrl = vec![s];
            for p in curv["params"].as_array().unwrap() {
                ctrl.push(rel(xy(p)));
            }
            ctrl.push(e);
            let deg = ctrl.len() - 1;
            ts.map(|t| {
                let mut q = [0.0, 0.0];
                for (i, c) in ctrl.iter().enumerate() {
                    let binom = (1..=i).fold(1.0, |acc, j| acc * (deg + 1 - j) as f64 / j as f64);
                    let b = binom * (1.0 - t).powi((deg - i) as i32) * t.powi(i as i32);
                    q[0] += b * c[0];
                    q[1] += b * c[1];
                }
                q
            })
            .collect()
        }
        Some("circle") => {
            let p = curv["params"].as_array().unwrap();
            let mut r = p[0].as_f64().unwrap();
            let fa = p[1].as_f64().unwrap() != 0.0;
            let fs = p[2].as_f64().unwrap() != 0.0; // the reference mesher: sweep = right
            let (x1p, y1p) = ((s[0] - e[0]) / 2.0, (s[1] - e[1]) / 2.0);
            let lambda = (x1p * x1p + y1p * y1p) / (r * r);
            if lambda > 1.0 {
                r *= lambda.sqrt();
            }
            let num = r * r * r * r - r * r * y1p * y1p - r * r * x1p * x1p;
            let den = r * r * y1p * y1p + r * r * x1p * x1p;
            let sign = if fa != fs { 1.0 } else { -1.0 };
            let coef = sign * (num / den).max(0.0).sqrt();
            let (cxp, cyp) = (coef * y1p, -coef * x1p);
            let (cx, cy) = (cxp + (s[0] + e[0]) / 2.0, cyp + (s[1] + e[1]) / 2.0);
            let angle = |u: [f64; 2], v: [f64; 2]| {
                (u[0] * v[1] - u[1] * v[0]).atan2(u[0] * v[0] + u[1] * v[1])
            };
            let u = [(x1p - cxp) / r, (y1p - cyp) / r];
            let v = [(-x1p - cxp) / r, (-y1p - cyp) / r];
            let th1 = angle([1.0, 0.0], u);
            let mut dth = angle(u, v);
            if !fs && dth > 0.0 {
                dth -= std::f64::consts::TAU;
            }
            if fs && dth < 0.0 {
                dth += std::f64::consts::TAU;
            }
            ts.map(|t| {
                let a = th1 + t * dth;
                [cx + r * a.cos(), cy + r * a.sin()]
            })
            .collect()
        }
        Some(other) => panic!("unexpected curvature {other}"),
    }
}

/// Area (m^2) of every panel of a pattern file, by the shoelace formula on a polyline of
/// 4000 points per curved edge.
fn independent_panel_areas(json: &str) -> HashMap<String, f64> {
    let root: Value = serde_json::from_str(json).unwrap();
    let units = root["properties"]["units_in_meter"].as_f64().unwrap();
    let mut out = HashMap::new();
    for (name, panel) in root["pattern"]["panels"].as_object().unwrap() {
        let verts: Vec<[f64; 2]> = panel["vertices"]
            .as_array()
            .unwrap()
            .iter()
            .map(xy)
            .collect();
        let mut pts = Vec::new();
        for e in panel["edges"].as_array().unwrap() {
            let p = independent_edge_points(&verts, e, 4000);
            pts.extend_from_slice(&p[..p.len() - 1]);
        }
        let mut twice = 0.0;
        for i in 0..pts.len() {
            let (a, b) = (pts[i], pts[(i + 1) % pts.len()]);
            twice += a[0] * b[1] - b[0] * a[1];
        }
        out.insert(name.clone(), (0.5 * twice).abs() / (units * units));
    }
    out
}

/// `R = Rz Ry Rx` written out element by element (the reference's `euler_xyz_to_R`).
fn independent_rotation(deg: [f64; 3]) -> [[f64; 3]; 3] {
    let [a, b, c] = deg.map(f64::to_radians);
    let rx = [
        [1.0, 0.0, 0.0],
        [0.0, a.cos(), -a.sin()],
        [0.0, a.sin(), a.cos()],
    ];
    let ry = [
        [b.cos(), 0.0, b.sin()],
        [0.0, 1.0, 0.0],
        [-b.sin(), 0.0, b.cos()],
    ];
    let rz = [
        [c.cos(), -c.sin(), 0.0],
        [c.sin(), c.cos(), 0.0],
        [0.0, 0.0, 1.0],
    ];
    let mul = |p: [[f64; 3]; 3], q: [[f64; 3]; 3]| {
        let mut m = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                m[i][j] = (0..3).map(|k| p[i][k] * q[k][j]).sum();
            }
        }
        m
    };
    mul(rz, mul(ry, rx))
}

// ---------------------------------------------------------------------------------------
// Helpers on built garments.

fn build(name: &str, h: f64) -> (String, Pattern, Garment) {
    let text = std::fs::read_to_string(asset(name)).unwrap();
    let pattern = parse_pattern(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let garment = pattern
        .build(h)
        .unwrap_or_else(|e| panic!("{name} at {h} m: {e}"));
    (text, pattern, garment)
}

fn panel_rest_area(g: &Garment, p: usize) -> f64 {
    g.mesh.rest_areas()[g.panels[p].triangles.clone()]
        .iter()
        .sum()
}

/// Triangles with every stitched pair welded (smallest vertex of each group as its label).
fn welded_triangles(g: &Garment) -> Vec<[usize; 3]> {
    let n = g.mesh.num_vertices();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for s in &g.stitches {
        let (a, b) = (
            find(&mut parent, s.vertices[0]),
            find(&mut parent, s.vertices[1]),
        );
        parent[a.max(b)] = a.min(b);
    }
    g.mesh
        .triangles()
        .iter()
        .map(|t| t.map(|v| find(&mut parent, v)))
        .collect()
}

// ---------------------------------------------------------------------------------------
// The example garments.

#[test]
fn examples_build_with_the_expected_openings_at_2_and_1_cm() {
    for (name, openings) in EXAMPLES {
        for h in [0.02, 0.01] {
            let (_, pattern, g) = build(name, h);
            assert_eq!(g.openings, openings, "{name} at {h} m");
            assert_eq!(g.panels.len(), pattern.panels.len());
            // Before sewing every panel is a disc: one boundary loop each.
            assert_eq!(
                count_boundary_loops(g.mesh.num_vertices(), g.mesh.triangles(), &[]),
                pattern.panels.len(),
                "{name}"
            );
            // Panels tile the mesh in order.
            let mut v = 0;
            let mut t = 0;
            for p in &g.panels {
                assert_eq!((p.vertices.start, p.triangles.start), (v, t));
                v = p.vertices.end;
                t = p.triangles.end;
            }
            assert_eq!((v, t), (g.mesh.num_vertices(), g.mesh.num_triangles()));
        }
    }
}

#[test]
fn examples_pass_the_mesh_invariants() {
    for (name, _) in EXAMPLES {
        let (_, _, g) = build(name, 0.05);
        check_invariants(&g.mesh);
    }
}

#[test]
fn stitched_edges_carry_the_same_vertices_at_matching_arc_length() {
    for (name, _) in EXAMPLES {
        for h in [0.02, 0.01] {
            let (_, pattern, g) = build(name, h);
            for (s, st) in pattern.stitches.iter().enumerate() {
                let [a, b] = st.sides;
                let la = &g.panels[a.panel].edges[a.edge];
                let lb = &g.panels[b.panel].edges[b.edge];
                assert_eq!(la.len(), lb.len(), "{name} stitch {s}");
                assert!(la.len() >= 2);
                // Segments no longer than about h (ceil(L / h) of them).
                let long = pattern.panels[a.panel].edge_length(a.edge).unwrap();
                assert!((la.len() - 1) as f64 >= long / h - 1e-9);
                // Arc-length fractions of matched vertices agree: side a runs backwards.
                let fractions = |l: &[usize]| {
                    let r = g.mesh.vertex_rest().unwrap();
                    let mut acc = vec![0.0];
                    for w in l.windows(2) {
                        acc.push(acc.last().unwrap() + (r[w[1]] - r[w[0]]).norm());
                    }
                    let total = *acc.last().unwrap();
                    acc.iter().map(|x| x / total).collect::<Vec<f64>>()
                };
                let (fa, fb) = (fractions(la), fractions(lb));
                let n = fa.len() - 1;
                for i in 0..=n {
                    assert!(
                        ((1.0 - fa[n - i]) - fb[i]).abs() < 1e-3,
                        "{name} stitch {s} vertex {i}"
                    );
                }
            }
        }
    }
}

#[test]
fn stitch_pairs_are_unique_follow_the_stitches_and_join_the_right_panels() {
    for (name, _) in EXAMPLES {
        let (_, pattern, g) = build(name, 0.02);
        let mut seen = HashSet::new();
        for s in &g.stitches {
            let [a, b] = s.vertices;
            assert_ne!(a, b);
            assert!(
                seen.insert((a.min(b), a.max(b))),
                "{name}: pair {a} {b} twice"
            );
            let st = &pattern.stitches[s.pattern_stitch];
            assert!(g.panels[st.sides[0].panel].edges[st.sides[0].edge].contains(&a));
            assert!(g.panels[st.sides[1].panel].edges[st.sides[1].edge].contains(&b));
        }
        // Stitch by stitch, in order.
        assert!(
            g.stitches
                .windows(2)
                .all(|w| w[0].pattern_stitch <= w[1].pattern_stitch)
        );
        // Every pattern stitch contributes pairs.
        let used: HashSet<usize> = g.stitches.iter().map(|s| s.pattern_stitch).collect();
        assert_eq!(used.len(), pattern.stitches.len(), "{name}");
    }
}

#[test]
fn total_rest_area_equals_the_panel_areas_computed_from_the_file() {
    for (name, _) in EXAMPLES {
        for h in [0.02, 0.01] {
            let (text, pattern, g) = build(name, h);
            let areas = independent_panel_areas(&text);
            let mut total = 0.0;
            for (p, panel) in pattern.panels.iter().enumerate() {
                let want = areas[&panel.name];
                let got = panel_rest_area(&g, p);
                assert!(
                    (got - want).abs() <= 0.005 * want,
                    "{name} {} at {h} m: {got} vs {want}",
                    panel.name
                );
                total += want;
            }
            let got = g.mesh.total_rest_area();
            assert!(
                (got - total).abs() <= 0.005 * total,
                "{name} at {h}: {got} vs {total}"
            );
        }
    }
}

#[test]
fn examples_are_placed_as_the_reference_reader_places_them() {
    for (name, _) in EXAMPLES {
        let (text, _, g) = build(name, 0.02);
        let root: Value = serde_json::from_str(&text).unwrap();
        let units = root["properties"]["units_in_meter"].as_f64().unwrap();
        for gp in &g.panels {
            let panel = &root["pattern"]["panels"][&gp.name];
            let rot =
                independent_rotation([0, 1, 2].map(|i| panel["rotation"][i].as_f64().unwrap()));
            let t: Vec<f64> = (0..3)
                .map(|i| panel["translation"][i].as_f64().unwrap() / units)
                .collect();
            let verts: Vec<[f64; 2]> = panel["vertices"]
                .as_array()
                .unwrap()
                .iter()
                .map(xy)
                .collect();
            // Each edge's first mesh vertex is its start corner.
            for (k, e) in panel["edges"].as_array().unwrap().iter().enumerate() {
                let c = verts[e["endpoints"][0].as_u64().unwrap() as usize];
                let (x, y) = (c[0] / units, c[1] / units);
                let want = Vec3::from_fn(|i, _| rot[i][0] * x + rot[i][1] * y + t[i]);
                let v = gp.edges[k][0];
                assert!(
                    (g.mesh.positions()[v] - want).norm() < 1e-12,
                    "{name} {} corner of edge {k}",
                    gp.name
                );
                assert!((g.mesh.vertex_rest().unwrap()[v] - Vec2::new(x, y)).norm() < 1e-12);
            }
            // Front panels (in front of the body, z > 0) face +z, back panels -z: the loop's
            // right-hand normal is the outside.
            let mut normal = Vec3::zeros();
            for tri in &g.mesh.triangles()[gp.triangles.clone()] {
                let x = g.mesh.positions();
                normal += (x[tri[1]] - x[tri[0]]).cross(&(x[tri[2]] - x[tri[0]]));
            }
            assert!(!gp.mirrored, "the examples are written counter-clockwise");
            assert!(
                normal.z * t[2] > 0.0,
                "{name} {}: normal {normal} at z = {}",
                gp.name,
                t[2]
            );
        }
    }
}

#[test]
fn sewn_examples_are_consistently_oriented() {
    // Default stitches join edges running in opposite directions, so after welding every
    // shared edge is traversed once each way: outside faces outside everywhere.
    for (name, _) in EXAMPLES {
        let (_, _, g) = build(name, 0.02);
        let mut directed: HashMap<(usize, usize), usize> = HashMap::new();
        for t in welded_triangles(&g) {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                if a != b {
                    *directed.entry((a, b)).or_default() += 1;
                }
            }
        }
        for (&(a, b), &n) in &directed {
            assert_eq!(
                n, 1,
                "{name}: edge {a}->{b} traversed {n} times the same way"
            );
        }
    }
}

#[test]
fn examples_are_dressed_around_an_adult_at_the_origin() {
    // Rough bounding boxes (m): y up from the floor, the body centred on the y axis. The
    // shirt's shoulder seams sit above the shoulders (1.41-1.45 m) and the trouser hems above
    // the feet, so that sewing pulls the seams closed over the body, not through it.
    let (_, _, skirt) = build("skirt.json", 0.05);
    let (_, _, shirt) = build("tshirt.json", 0.05);
    let (_, _, trousers) = build("trousers.json", 0.05);
    let bbox = |m: &ClothMesh| {
        let mut lo = Vec3::repeat(f64::INFINITY);
        let mut hi = Vec3::repeat(f64::NEG_INFINITY);
        for p in m.positions() {
            lo = lo.inf(p);
            hi = hi.sup(p);
        }
        (lo, hi)
    };
    let (lo, hi) = bbox(&skirt.mesh);
    assert!(lo.y > 0.3 && hi.y < 1.15 && hi.y > 1.0, "skirt {lo} {hi}");
    let (lo, hi) = bbox(&shirt.mesh);
    assert!(
        lo.y > 0.7 && hi.y > 1.46 && hi.y < 1.55 && hi.x > 0.35 && lo.x < -0.35,
        "shirt {lo} {hi}"
    );
    let (lo, hi) = bbox(&trousers.mesh);
    assert!(
        lo.y > 0.1 && lo.y < 0.15 && hi.y > 1.0 && hi.y < 1.15,
        "trousers {lo} {hi}"
    );
    for g in [&skirt, &shirt, &trousers] {
        let (lo, hi) = bbox(&g.mesh);
        assert!((lo.x + hi.x).abs() < 1e-9, "left-right symmetric");
        assert!(lo.z < -0.08 && hi.z > 0.08);
    }
}

#[test]
fn summary_counts_add_up() {
    let (_, pattern, g) = build("tshirt.json", 0.02);
    let s = g.summary();
    assert_eq!(s.panels.len(), 6);
    assert_eq!(
        s.vertices,
        s.panels.iter().map(|p| p.vertices).sum::<usize>()
    );
    assert_eq!(
        s.triangles,
        s.panels.iter().map(|p| p.triangles).sum::<usize>()
    );
    assert_eq!(s.pattern_stitches, pattern.stitches.len());
    assert_eq!(s.stitch_pairs, g.stitches.len());
    assert_eq!(
        s.panels.iter().map(|p| p.stitched_edges).sum::<usize>(),
        2 * pattern.stitches.len()
    );
    assert!((s.rest_area - s.panels.iter().map(|p| p.rest_area).sum::<f64>()).abs() < 1e-12);
    assert_eq!(s.openings, 4);
    let text = s.to_string();
    assert_eq!(text.lines().count(), 7);
    assert!(
        text.contains("left_sleeve_front") && text.contains("4 openings"),
        "{text}"
    );
    assert_eq!(g.panel_of_vertex(g.panels[2].vertices.start), Some(2));
}

#[test]
fn building_is_deterministic() {
    let (_, pattern, a) = build("trousers.json", 0.02);
    let b = pattern.build(0.02).unwrap();
    assert_eq!(a.mesh.positions(), b.mesh.positions());
    assert_eq!(a.mesh.corner_rest(), b.mesh.corner_rest());
    assert_eq!(a.mesh.triangles(), b.mesh.triangles());
    assert_eq!(a.stitches, b.stitches);
}

#[test]
fn triangles_are_well_shaped_and_near_the_target_length() {
    for (name, _) in EXAMPLES {
        let h = 0.02;
        let (_, _, g) = build(name, h);
        let m = &g.mesh;
        let r = m.vertex_rest().unwrap();
        let lens: Vec<f64> = m
            .edges()
            .iter()
            .map(|e| (r[e.v[1]] - r[e.v[0]]).norm())
            .collect();
        let mean = lens.iter().sum::<f64>() / lens.len() as f64;
        assert!((mean - h).abs() < 0.15 * h, "{name}: mean edge {mean}");
        // Triangles of area at most 0.6 h^2 with no angle below 25 degrees have edges of at
        // most about sqrt(1.2 / sin 25) h = 1.69 h (measured: up to 1.70 h); outline segments
        // are at most h.
        let longest = lens.iter().cloned().fold(0.0, f64::max);
        println!(
            "{name}: mean {:.3} h, longest {:.3} h",
            mean / h,
            longest / h
        );
        assert!(longest < 1.8 * h, "{name}: an edge of {longest} m");
        for t in 0..m.num_triangles() {
            assert!(common::min_angle_deg(m, t) > 20.0, "{name}: triangle {t}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Format semantics on small hand-written patterns (centimetres).

/// A pattern with one square panel `a` of side 100 cm, its bottom edge (0) given by
/// `bottom_curvature` (JSON), plus extra panels and stitches.
fn square_pattern(bottom_curvature: &str, rotation: &str, extra: &str) -> String {
    format!(
        r#"{{"pattern": {{"panels": {{"a": {{
            "translation": [10, 20, 30], "rotation": {rotation},
            "vertices": [[0, 0], [100, 0], [100, 100], [0, 100]],
            "edges": [{{"endpoints": [0, 1] {bottom_curvature}}}, {{"endpoints": [1, 2]}},
                      {{"endpoints": [2, 3]}}, {{"endpoints": [3, 0]}}]}} {extra} }},
            "stitches": []}},
          "properties": {{"units_in_meter": 100}}}}"#
    )
}

fn area_of(json: &str) -> f64 {
    parse_pattern(json)
        .unwrap()
        .build(0.01)
        .unwrap()
        .mesh
        .total_rest_area()
}

#[test]
fn bezier_controls_are_relative_to_the_edge_with_the_left_normal() {
    // Quadratic [0.5, 0.3] on the bottom edge (0,0)->(1,0) m: control at (0.5, 0.3), inside
    // the square; the curve cuts off 2/3 of the control triangle, 0.1 m^2.
    let q = square_pattern(
        r#", "curvature": {"type": "quadratic", "params": [[0.5, 0.3]]}"#,
        "[0, 0, 0]",
        "",
    );
    assert!((area_of(&q) - 0.9).abs() < 1e-3, "{}", area_of(&q));
    // Legacy bare list, same curve.
    let legacy = square_pattern(r#", "curvature": [0.5, 0.3]"#, "[0, 0, 0]", "");
    assert!((area_of(&legacy) - area_of(&q)).abs() < 1e-12);
    // Cubic [[1/3, -0.2], [2/3, -0.2]]: y = -0.6 t (1 - t) below the square, adds 0.1 m^2.
    let c = square_pattern(
        r#", "curvature": {"type": "cubic", "params": [[0.3333333333333333, -0.2], [0.6666666666666666, -0.2]]}"#,
        "[0, 0, 0]",
        "",
    );
    assert!((area_of(&c) - 1.1).abs() < 1e-3, "{}", area_of(&c));
    // Absolute legacy coordinates: the same quadratic given in panel units.
    let abs = q.replace("[[0.5, 0.3]]", "[[50, 30]]").replace(
        r#""units_in_meter": 100"#,
        r#""units_in_meter": 100, "curvature_coords": "absolute""#,
    );
    assert!((area_of(&abs) - area_of(&q)).abs() < 1e-12);
}

#[test]
fn circle_edges_follow_the_svg_flags_of_the_reference_mesher() {
    use std::f64::consts::PI;
    // Half circle of radius 0.5 m on the bottom edge: `right` = 1 bulges to the right of
    // (0,0)->(1,0), out of the square.
    let out = square_pattern(
        r#", "curvature": {"type": "circle", "params": [50, 0, 1]}"#,
        "[0, 0, 0]",
        "",
    );
    assert!((area_of(&out) - (1.0 + PI / 8.0)).abs() < 2e-3);
    let inward = out.replace("[50, 0, 1]", "[50, 0, 0]");
    assert!((area_of(&inward) - (1.0 - PI / 8.0)).abs() < 2e-3);
    // Radius 1 m, small arc bulging out: a segment of 60 degrees.
    let seg = PI / 6.0 - 3f64.sqrt() / 4.0;
    let small = out.replace("[50, 0, 1]", "[100, false, true]");
    assert!(
        (area_of(&small) - (1.0 + seg)).abs() < 1e-3,
        "{}",
        area_of(&small)
    );
    // A radius below half the chord is raised to it (as SVG does).
    let tiny = out.replace("[50, 0, 1]", "[1, 0, 1]");
    assert!((area_of(&tiny) - area_of(&out)).abs() < 1e-9);
}

#[test]
fn rotation_is_rz_ry_rx_in_degrees_then_translation() {
    // rx = 90, ry = 90: R = Ry(90) Rx(90) maps panel x to world -z and panel y to world x.
    // (Intrinsic X-Y-Z, scipy "XYZ", would send panel x to world +y instead.)
    let json = square_pattern("", "[90, 90, 0]", "");
    let g = parse_pattern(&json).unwrap().build(0.25).unwrap();
    let t = Vec3::new(0.1, 0.2, 0.3);
    let corner = |k: usize| g.mesh.positions()[g.panels[0].edges[k][0]];
    assert!((corner(0) - t).norm() < 1e-12);
    assert!(
        (corner(1) - (t + Vec3::new(0.0, 0.0, -1.0))).norm() < 1e-12,
        "{}",
        corner(1)
    );
    assert!(
        (corner(3) - (t + Vec3::new(1.0, 0.0, 0.0))).norm() < 1e-12,
        "{}",
        corner(3)
    );
    // Rotation about z alone turns the panel in its plane.
    let g = parse_pattern(&square_pattern("", "[0, 0, 90]", ""))
        .unwrap()
        .build(0.25)
        .unwrap();
    let c1 = g.mesh.positions()[g.panels[0].edges[1][0]];
    assert!((c1 - (t + Vec3::new(0.0, 1.0, 0.0))).norm() < 1e-12);
}

const SECOND_SQUARE: &str = r#", "b": {"translation": [120, 20, 30], "rotation": [0, 0, 0],
    "vertices": [[0, 0], [100, 0], [100, 100], [0, 100]],
    "edges": [{"endpoints": [0, 1]}, {"endpoints": [1, 2]}, {"endpoints": [2, 3]}, {"endpoints": [3, 0]}]}"#;

#[test]
fn stitches_join_the_end_of_the_first_edge_to_the_start_of_the_second() {
    // a's right edge runs up (1) and b's left edge runs down (3): sewn end to start, the
    // pairs are at equal heights.
    let json = square_pattern("", "[0, 0, 0]", SECOND_SQUARE).replace(
        r#""stitches": []"#,
        r#""stitches": [[{"panel": "a", "edge": 1}, {"panel": "b", "edge": 3}]]"#,
    );
    let g = parse_pattern(&json).unwrap().build(0.1).unwrap();
    assert_eq!(g.stitches.len(), 11);
    let r = g.mesh.vertex_rest().unwrap();
    for s in &g.stitches {
        let [a, b] = s.vertices;
        assert!((r[a].y - r[b].y).abs() < 1e-12);
        assert!((r[a].x - 1.0).abs() < 1e-12 && r[b].x.abs() < 1e-12);
    }
    // The first pair is the end of a's edge with the start of b's edge.
    assert_eq!(
        g.stitches[0].vertices,
        [g.panels[0].edges[2][0], g.panels[1].edges[3][0]]
    );
    assert_eq!(g.openings, 1);
    // "right_wrong" sews start to start: heights mirror.
    let rw = json.replace(
        r#"{"panel": "b", "edge": 3}]"#,
        r#"{"panel": "b", "edge": 3}, "right_wrong"]"#,
    );
    let g = parse_pattern(&rw).unwrap().build(0.1).unwrap();
    assert!(g.pattern_stitches[0].right_wrong);
    let r = g.mesh.vertex_rest().unwrap();
    for s in &g.stitches {
        let [a, b] = s.vertices;
        assert!((r[a].y - (1.0 - r[b].y)).abs() < 1e-12);
    }
}

#[test]
fn a_panel_sewn_to_itself_makes_a_tube_with_two_openings() {
    let json = square_pattern("", "[0, 0, 0]", "").replace(
        r#""stitches": []"#,
        r#""stitches": [[{"panel": "a", "edge": 1}, {"panel": "a", "edge": 3}]]"#,
    );
    let g = parse_pattern(&json).unwrap().build(0.1).unwrap();
    assert_eq!(g.openings, 2);
}

#[test]
fn clockwise_panels_are_mirrored_in_rest_space_and_keep_the_loop_normal() {
    // The square written clockwise: (0,0) -> (0,1) -> (1,1) -> (1,0).
    let json = r#"{"pattern": {"panels": {"cw": {"translation": [0, 0, 0], "rotation": [0, 0, 0],
        "vertices": [[0, 0], [0, 100], [100, 100], [100, 0]],
        "edges": [{"endpoints": [0, 1]}, {"endpoints": [1, 2]}, {"endpoints": [2, 3]}, {"endpoints": [3, 0]}]}},
        "stitches": []}, "properties": {"units_in_meter": 100}}"#;
    let g = parse_pattern(json).unwrap().build(0.1).unwrap();
    assert!(g.panels[0].mirrored);
    assert!((g.mesh.total_rest_area() - 1.0).abs() < 1e-12);
    for (x, r) in g.mesh.positions().iter().zip(g.mesh.vertex_rest().unwrap()) {
        assert_eq!((r.x, r.y), (-x.x, x.y));
    }
    // Normals follow the clockwise loop: -z.
    for n in g.mesh.vertex_normals(g.mesh.positions()) {
        assert!((n - Vec3::new(0.0, 0.0, -1.0)).norm() < 1e-9);
    }
}

#[test]
fn stitched_edges_of_different_lengths_get_the_longer_ones_count() {
    // b's left edge is 1.2 m (b is taller): both stitched edges get ceil(1.2 / 0.1) = 12
    // segments.
    let extra = SECOND_SQUARE.replace("[100, 100], [0, 100]", "[100, 120], [0, 120]");
    let json = square_pattern("", "[0, 0, 0]", &extra).replace(
        r#""stitches": []"#,
        r#""stitches": [[{"panel": "a", "edge": 1}, {"panel": "b", "edge": 3}]]"#,
    );
    let g = parse_pattern(&json).unwrap().build(0.1).unwrap();
    assert_eq!(g.panels[0].edges[1].len(), 13);
    assert_eq!(g.panels[1].edges[3].len(), 13);
    assert_eq!(
        g.panels[0].edges[3].len(),
        11,
        "unstitched edges keep their own count"
    );
}

// ---------------------------------------------------------------------------------------
// Errors.

fn pattern_error(json: &str) -> (cloth_mesh::PatternLocation, PatternProblem, String) {
    match parse_pattern(json) {
        Err(e @ MeshError::Pattern { .. }) => {
            let text = e.to_string();
            assert_eq!(text.lines().count(), 1, "one line: {text}");
            let MeshError::Pattern { at, problem } = e else {
                unreachable!()
            };
            (at, problem, text)
        }
        Err(other) => panic!("not a pattern error: {other}"),
        Ok(_) => panic!("accepted: {json}"),
    }
}

#[test]
fn errors_name_the_panel_edge_or_stitch() {
    let base = square_pattern("", "[0, 0, 0]", SECOND_SQUARE);
    let with_stitches = |s: &str| base.replace(r#""stitches": []"#, &format!(r#""stitches": {s}"#));

    // Unknown curvature type.
    let (at, problem, text) = pattern_error(&square_pattern(
        r#", "curvature": {"type": "spline", "params": []}"#,
        "[0, 0, 0]",
        "",
    ));
    assert!(matches!(problem, PatternProblem::UnknownCurvature { ref kind } if kind == "spline"));
    assert_eq!((at.panel.as_deref(), at.edge), (Some("a"), Some(0)));
    assert!(
        text.contains("panel \"a\", edge 0") && text.contains("spline"),
        "{text}"
    );

    // Stitch naming a missing panel, then a missing edge.
    let (at, problem, _) = pattern_error(&with_stitches(
        r#"[[{"panel": "a", "edge": 1}, {"panel": "zz", "edge": 0}]]"#,
    ));
    assert!(matches!(problem, PatternProblem::UnknownPanel { ref name } if name == "zz"));
    assert_eq!(at.stitch, Some(0));
    let (at, problem, text) = pattern_error(&with_stitches(
        r#"[[{"panel": "a", "edge": 1}, {"panel": "b", "edge": 7}]]"#,
    ));
    assert!(matches!(
        problem,
        PatternProblem::EdgeOutOfRange { edge: 7, count: 4 }
    ));
    assert_eq!((at.stitch, at.panel.as_deref()), (Some(0), Some("b")));
    assert!(text.contains("stitch 0"), "{text}");

    // An edge in two stitches; the same edge on both sides.
    let (at, problem, _) = pattern_error(&with_stitches(
        r#"[[{"panel": "a", "edge": 1}, {"panel": "b", "edge": 3}],
            [{"panel": "b", "edge": 1}, {"panel": "a", "edge": 1}]]"#,
    ));
    assert!(matches!(
        problem,
        PatternProblem::StitchedTwice { first_stitch: 0 }
    ));
    assert_eq!(
        (at.stitch, at.panel.as_deref(), at.edge),
        (Some(1), Some("a"), Some(1))
    );
    let (_, problem, _) = pattern_error(&with_stitches(
        r#"[[{"panel": "a", "edge": 1}, {"panel": "a", "edge": 1}]]"#,
    ));
    assert!(matches!(problem, PatternProblem::SelfStitch));
    let (_, problem, _) = pattern_error(&with_stitches(
        r#"[[{"panel": "a", "edge": 1}, {"panel": "b", "edge": 3}, "inside_out"]]"#,
    ));
    assert!(matches!(problem, PatternProblem::UnknownStitchFlag { .. }));

    // Stitched edges of very different lengths (1 m and 2 m: ratio 2 > 1.5).
    let long = base
        .replace(
            r#""vertices": [[0, 0], [100, 0], [100, 100], [0, 100]],
    "edges""#,
            r#""vertices": [[0, 0], [100, 0], [100, 200], [0, 200]],
    "edges""#,
        )
        .replace(
            r#""stitches": []"#,
            r#""stitches": [[{"panel": "a", "edge": 1}, {"panel": "b", "edge": 3}]]"#,
        );
    let (at, problem, text) = pattern_error(&long);
    match problem {
        PatternProblem::StitchLengthMismatch { lengths } => {
            assert!((lengths[0] - 1.0).abs() < 1e-12 && (lengths[1] - 2.0).abs() < 1e-12)
        }
        other => panic!("{other}"),
    }
    assert_eq!(
        (at.stitch, at.panel.as_deref(), at.edge),
        (Some(0), Some("a"), Some(1))
    );
    assert!(text.contains("ratio 2.000"), "{text}");

    // Self-intersecting outline: a bow tie.
    let bow = base.replace(
        "[[0, 0], [100, 0], [100, 100], [0, 100]],\n            \"edges\"",
        "[[0, 0], [100, 100], [100, 0], [0, 100]],\n            \"edges\"",
    );
    assert_ne!(bow, base);
    let (at, problem, _) = pattern_error(&bow);
    assert!(
        matches!(problem, PatternProblem::SelfIntersection { other_edge: 2 }),
        "{problem}"
    );
    assert_eq!((at.panel.as_deref(), at.edge), (Some("a"), Some(0)));

    // Edges that do not close, zero-length edges, endpoints out of range.
    let open = base.replacen(r#"{"endpoints": [3, 0]}"#, r#"{"endpoints": [3, 1]}"#, 1);
    let (at, problem, _) = pattern_error(&open);
    assert!(
        matches!(problem, PatternProblem::OpenLoop { .. }),
        "{problem}"
    );
    assert_eq!((at.panel.as_deref(), at.edge), (Some("a"), Some(3)));
    let zero = base.replacen("[100, 100], [0, 100]]", "[100, 0], [0, 100]]", 1);
    let (at, problem, _) = pattern_error(&zero);
    assert!(
        matches!(problem, PatternProblem::ZeroLengthEdge { .. }),
        "{problem}"
    );
    assert_eq!((at.panel.as_deref(), at.edge), (Some("a"), Some(1)));
    let range = base.replacen(r#"{"endpoints": [3, 0]}"#, r#"{"endpoints": [3, 9]}"#, 1);
    let (_, problem, _) = pattern_error(&range);
    assert!(matches!(
        problem,
        PatternProblem::VertexOutOfRange { index: 9, count: 4 }
    ));

    // Non-finite numbers (1e300 cm * 1e10 overflows) and invalid JSON numbers.
    let huge = base
        .replacen("[100, 0], [100, 100]", "[1e300, 0], [100, 100]", 1)
        .replace(r#""units_in_meter": 100"#, r#""units_in_meter": 1e-10"#);
    let (_, problem, _) = pattern_error(&huge);
    assert!(matches!(problem, PatternProblem::NonFinite), "{problem}");
    let (_, problem, _) = pattern_error(&base.replacen("100", "NaN", 1));
    assert!(matches!(problem, PatternProblem::Json { .. }), "{problem}");

    // Missing or invalid units.
    let (at, problem, _) =
        pattern_error(&base.replace(r#""units_in_meter": 100"#, r#""units": 100"#));
    assert!(matches!(problem, PatternProblem::MissingUnits));
    assert_eq!(at.key, "properties.units_in_meter");
    let (_, problem, _) =
        pattern_error(&base.replace(r#""units_in_meter": 100"#, r#""units_in_meter": 0"#));
    assert!(matches!(problem, PatternProblem::InvalidUnits { .. }));

    // JSON syntax: line and column.
    let (_, problem, text) = pattern_error("{\n  \"pattern\": [,\n}");
    assert!(
        matches!(problem, PatternProblem::Json { line: 2, .. }),
        "{problem}"
    );
    assert!(text.contains("line 2"), "{text}");

    // Wrong shapes.
    let (at, problem, _) =
        pattern_error(&base.replacen("[0, 0], [100, 0]", "[0, 0, 0], [100, 0]", 1));
    assert!(matches!(problem, PatternProblem::WrongType { .. }));
    assert_eq!(at.key, "pattern.panels.a.vertices[0]");
    let (_, problem, _) =
        pattern_error(r#"{"properties": {"units_in_meter": 100}, "pattern": {"panels": {}}}"#);
    assert!(matches!(problem, PatternProblem::NoPanels));
    let (_, problem, _) = pattern_error(&base.replace(
        r#""stitches": []"#,
        r#""stitches": [], "panel_order": ["a"]"#,
    ));
    assert!(matches!(problem, PatternProblem::BadPanelOrder { .. }));
}

#[test]
fn build_rejects_bad_edge_lengths_and_hand_made_nonsense() {
    let p = parse_pattern(&square_pattern("", "[0, 0, 0]", "")).unwrap();
    for h in [0.0, -0.01, f64::NAN, f64::INFINITY, 1e-6] {
        let e = p.build(h).unwrap_err();
        assert!(
            matches!(
                e,
                MeshError::InvalidParameter {
                    name: "edge_length",
                    ..
                }
            ),
            "{h}: {e}"
        );
    }
    // Edited by hand into inconsistency: errors, never panics.
    let mut bad = p.clone();
    bad.panels[0].edges[2].endpoints = [2, 7];
    assert!(bad.build(0.1).is_err());
    let mut bad = p.clone();
    bad.stitches.push(cloth_mesh::PatternStitch {
        sides: [
            cloth_mesh::StitchSide { panel: 0, edge: 1 },
            cloth_mesh::StitchSide { panel: 5, edge: 0 },
        ],
        right_wrong: false,
    });
    assert!(bad.build(0.1).is_err());
    let mut bad = p.clone();
    bad.panels[0].vertices[1].x = f64::NAN;
    assert!(bad.build(0.1).is_err());
    let mut bad = p;
    bad.units_in_meter = -1.0;
    assert!(bad.build(0.1).is_err());
}

#[test]
fn read_pattern_names_the_missing_file() {
    let missing = std::path::Path::new("/nonexistent-cloth-pattern/x.json");
    let e = read_pattern(missing).unwrap_err();
    assert!(
        matches!(&e, MeshError::Io { path, .. } if path == missing),
        "{e}"
    );
    assert!(read_pattern(asset("tshirt.json")).is_ok());
}

// ---------------------------------------------------------------------------------------
// Carrying values between builds at two edge lengths.

/// Each panel is placed flat (an affine map of its rest coordinates), so carrying the coarse
/// build's placed positions must give the fine build's placed positions: exactly inside the
/// coarse triangulation, within the chord's sagitta on curved outlines.
#[test]
fn coarse_placement_carried_to_a_fine_build_is_the_fine_placement() {
    for (name, _) in EXAMPLES {
        let (_, _, fine) = build(name, 0.015);
        let (_, _, coarse) = build(name, 0.04);
        let t = fine.transfer_from(&coarse).unwrap();
        assert_eq!(t.len(), fine.mesh.num_vertices());
        let carried = t.apply(coarse.mesh.positions()).unwrap();
        let mut interior_worst: f64 = 0.0;
        for (v, (c, x)) in carried.iter().zip(fine.mesh.positions()).enumerate() {
            let (_, w) = t.weights(v).unwrap();
            assert!(
                w.iter().all(|w| (0.0..=1.0).contains(w)),
                "{name}: vertex {v}: {w:?}"
            );
            assert!(
                (w.iter().sum::<f64>() - 1.0).abs() < 1e-12,
                "{name}: vertex {v}"
            );
            let d = (c - x).norm();
            // A curved edge's fine sample lies off the coarse chord by at most the chord's
            // sagitta, well under a tenth of the coarse edge length for these outlines.
            assert!(
                d < 0.004,
                "{name}: vertex {v} carried {d} m from its placement"
            );
            if fine.mesh.vertex_triangles(v).len() >= 2 && w.iter().all(|&w| w > 1e-9) {
                interior_worst = interior_worst.max(d);
            }
        }
        assert!(
            interior_worst < 1e-9,
            "{name}: interior error {interior_worst} m"
        );
    }
}

/// A smooth non-affine deformation of the coarse build, carried to the fine one, is
/// piecewise-linear interpolation: its error shrinks about fourfold when the source's edge
/// length halves.
#[test]
fn carrying_a_smooth_deformation_converges_at_second_order() {
    let bend = |p: &Vec3| {
        Vec3::new(
            p.x,
            p.y + 0.5 * (3.0 * p.x).sin(),
            p.z + 0.4 * (2.0 * p.y).cos(),
        )
    };
    let (_, _, fine) = build("skirt.json", 0.01);
    let exact: Vec<Vec3> = fine.mesh.positions().iter().map(bend).collect();
    let worst = |h: f64| {
        let (_, _, coarse) = build("skirt.json", h);
        let bent: Vec<Vec3> = coarse.mesh.positions().iter().map(bend).collect();
        let carried = fine.transfer_from(&coarse).unwrap().apply(&bent).unwrap();
        carried
            .iter()
            .zip(&exact)
            .map(|(a, b)| (a - b).norm())
            .fold(0.0, f64::max)
    };
    let (e4, e2) = (worst(0.04), worst(0.02));
    assert!(
        e4 > 0.0 && e2 < 0.4 * e4,
        "error {e4} m at 4 cm, {e2} m at 2 cm"
    );
}

#[test]
fn carrying_between_different_patterns_or_lengths_is_an_error() {
    let (_, _, skirt) = build("skirt.json", 0.04);
    let (_, _, shirt) = build("tshirt.json", 0.04);
    assert!(matches!(
        shirt.transfer_from(&skirt),
        Err(MeshError::InvalidParameter { name: "source", .. })
    ));
    let t = skirt.transfer_from(&skirt).unwrap();
    assert!(t.apply(&[Vec3::zeros(); 3]).is_err());
    // A build carried onto itself is the identity.
    let same = t.apply(skirt.mesh.positions()).unwrap();
    for (a, b) in same.iter().zip(skirt.mesh.positions()) {
        assert!((a - b).norm() < 1e-12);
    }
}
