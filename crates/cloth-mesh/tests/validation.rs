//! Every `MeshError` variant is produced by the input it describes, and names the culprit.

use cloth_mesh::{
    ClothMesh, GridPattern, MeshError, ObjImport, RestShape, Vec2, Vec3, disc, grid, parse_obj,
    parse_obj_data, read_obj, write_obj_file_atomic,
};

/// Unit square split into two CCW triangles (0,1,2), (0,2,3).
fn square() -> (Vec<Vec3>, Vec<Vec2>, Vec<[usize; 3]>) {
    let rest = vec![
        Vec2::new(0.0, 0.0),
        Vec2::new(1.0, 0.0),
        Vec2::new(1.0, 1.0),
        Vec2::new(0.0, 1.0),
    ];
    let pos = rest.iter().map(|r| Vec3::new(r.x, 0.0, r.y)).collect();
    (pos, rest, vec![[0, 1, 2], [0, 2, 3]])
}

#[test]
fn valid_square_builds() {
    let (p, r, t) = square();
    let m = ClothMesh::new(p, r, t).unwrap();
    assert_eq!(m.hinges().len(), 1);
    assert_eq!(m.hinges()[0].v, [2, 0, 1, 3]);
}

#[test]
fn empty_mesh() {
    let e = ClothMesh::new(vec![], vec![], vec![]).unwrap_err();
    assert!(
        matches!(
            e,
            MeshError::Empty {
                vertices: 0,
                triangles: 0
            }
        ),
        "{e}"
    );
    let (p, r, _) = square();
    let e = ClothMesh::new(p, r, vec![]).unwrap_err();
    assert!(
        matches!(
            e,
            MeshError::Empty {
                vertices: 4,
                triangles: 0
            }
        ),
        "{e}"
    );
}

#[test]
fn rest_length_mismatch() {
    let (p, mut r, t) = square();
    r.pop();
    let e = ClothMesh::new(p, r, t).unwrap_err();
    assert!(
        matches!(
            e,
            MeshError::LengthMismatch {
                expected: 4,
                found: 3,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn set_positions_checks_length_and_finiteness() {
    let (p, r, t) = square();
    let mut m = ClothMesh::new(p.clone(), r, t).unwrap();
    let e = m.set_positions(p[..3].to_vec()).unwrap_err();
    assert!(
        matches!(
            e,
            MeshError::LengthMismatch {
                expected: 4,
                found: 3,
                ..
            }
        ),
        "{e}"
    );
    let mut bad = p.clone();
    bad[2].z = f64::INFINITY;
    let e = m.set_positions(bad).unwrap_err();
    assert!(
        matches!(e, MeshError::NonFinitePosition { vertex: 2 }),
        "{e}"
    );
    assert_eq!(m.positions(), &p[..], "unchanged after a failed set");
    let e = m.set_original_position_indices(vec![0; 5]).unwrap_err();
    assert!(
        matches!(
            e,
            MeshError::LengthMismatch {
                expected: 4,
                found: 5,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn index_out_of_range() {
    let (p, r, mut t) = square();
    t[1] = [0, 2, 4];
    let e = ClothMesh::new(p, r, t).unwrap_err();
    assert!(
        matches!(
            e,
            MeshError::IndexOutOfRange {
                triangle: 1,
                corner: 2,
                index: 4,
                count: 4
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("triangle 1"));
}

#[test]
fn repeated_vertex() {
    let (p, r, mut t) = square();
    t[1] = [0, 2, 2];
    let e = ClothMesh::new(p, r, t).unwrap_err();
    assert!(
        matches!(
            e,
            MeshError::RepeatedVertex {
                triangle: 1,
                vertex: 2
            }
        ),
        "{e}"
    );
}

#[test]
fn non_finite_position_and_rest() {
    let (mut p, r, t) = square();
    p[3].y = f64::NAN;
    let e = ClothMesh::new(p, r, t).unwrap_err();
    assert!(
        matches!(e, MeshError::NonFinitePosition { vertex: 3 }),
        "{e}"
    );
    let (p, mut r, t) = square();
    r[1].x = f64::NEG_INFINITY;
    let e = ClothMesh::new(p, r, t).unwrap_err();
    assert!(matches!(e, MeshError::NonFiniteRest { vertex: 1 }), "{e}");
}

#[test]
fn degenerate_rest_triangle() {
    // Vertex 3 on the line through 0 and 2: triangle 1 has zero rest area.
    let (p, mut r, t) = square();
    r[3] = Vec2::new(0.5, 0.5);
    let e = ClothMesh::new(p.clone(), r, t.clone()).unwrap_err();
    assert!(
        matches!(e, MeshError::DegenerateRestTriangle { triangle: 1, .. }),
        "{e}"
    );
    // A needle of relative area 1e-13 is degenerate; 1e-9 is kept (threshold is relative).
    for (eps, ok) in [(1e-13, false), (1e-9, true)] {
        let mut r = vec![
            Vec2::new(0.0, 0.0),
            Vec2::new(1.0, 0.0),
            Vec2::new(1.0, 1.0),
            Vec2::new(0.0, 1.0),
        ];
        r[3] = Vec2::new(0.5, 0.5 + eps);
        let res = ClothMesh::new(p.clone(), r, t.clone());
        assert_eq!(res.is_ok(), ok, "eps {eps}: {res:?}");
    }
    // Tiny but well-shaped triangles are fine: the threshold scales with the triangle.
    let m = grid(3, 3, 1e-6, 1e-6, GridPattern::Uniform).unwrap();
    assert!((m.total_rest_area() - 1e-12).abs() < 1e-24);
    // Overflowing rest coordinates are reported, not turned into NaN areas.
    let (p, mut r, t) = square();
    r[2] = Vec2::new(1e300, 1e300);
    let e = ClothMesh::new(p, r, t).unwrap_err();
    assert!(
        matches!(e, MeshError::DegenerateRestTriangle { triangle: 0, .. }),
        "{e}"
    );
}

#[test]
fn clockwise_rest_triangle_is_rejected() {
    let (p, r, _) = square();
    let e = ClothMesh::new(p, r, vec![[0, 2, 1], [0, 3, 2]]).unwrap_err();
    match e {
        MeshError::ClockwiseRestTriangle {
            triangle: 0,
            signed_area,
        } => assert!((signed_area + 0.5).abs() < 1e-15),
        other => panic!("{other}"),
    }
}

#[test]
fn non_manifold_edge() {
    // Three triangles share edge (0, 2); a fifth vertex off to the side in rest space.
    let (mut p, mut r, mut t) = square();
    r.push(Vec2::new(2.0, -1.0));
    p.push(Vec3::new(0.5, 1.0, 0.5));
    t.push([0, 4, 2]);
    let e = ClothMesh::new(p, r, t).unwrap_err();
    match &e {
        MeshError::NonManifoldEdge {
            v0: 0,
            v1: 2,
            triangles,
        } => assert_eq!(triangles, &vec![0, 1, 2]),
        other => panic!("{other}"),
    }
    assert!(e.to_string().contains("(0, 2)"));
}

#[test]
fn inconsistent_winding() {
    // Triangles 0 -> 1 -> 2 and a second one also going 1 -> 2, both CCW in rest space
    // (overlapping in (u, v)): the shared edge is traversed the same way twice.
    let rest = vec![
        Vec2::new(0.0, 0.0),
        Vec2::new(1.0, 0.0),
        Vec2::new(0.0, 1.0),
        Vec2::new(0.2, 0.2),
    ];
    let pos = rest.iter().map(|r| Vec3::new(r.x, 0.0, r.y)).collect();
    let e = ClothMesh::new(pos, rest, vec![[0, 1, 2], [1, 2, 3]]).unwrap_err();
    assert!(
        matches!(
            e,
            MeshError::InconsistentWinding {
                v0: 1,
                v1: 2,
                triangles: [0, 1]
            }
        ),
        "{e}"
    );
}

#[test]
fn isolated_vertex() {
    let (mut p, mut r, t) = square();
    p.push(Vec3::zeros());
    r.push(Vec2::new(5.0, 5.0));
    let e = ClothMesh::new(p, r, t).unwrap_err();
    assert!(matches!(e, MeshError::IsolatedVertex { vertex: 4 }), "{e}");
}

#[test]
fn invalid_density() {
    let m = grid(2, 2, 1.0, 1.0, GridPattern::Uniform).unwrap();
    for d in [-0.1, f64::NAN, f64::INFINITY] {
        let e = m.vertex_masses(d).unwrap_err();
        assert!(matches!(e, MeshError::InvalidDensity { .. }), "{e}");
    }
}

#[test]
fn invalid_builder_parameters() {
    let cases = [
        (
            grid(1, 3, 1.0, 1.0, GridPattern::Uniform).unwrap_err(),
            "nx",
        ),
        (
            grid(3, 1, 1.0, 1.0, GridPattern::Alternating).unwrap_err(),
            "ny",
        ),
        (
            grid(3, 3, 0.0, 1.0, GridPattern::Equilateral).unwrap_err(),
            "width",
        ),
        (
            grid(3, 3, 1.0, f64::NAN, GridPattern::Uniform).unwrap_err(),
            "height",
        ),
        (
            grid(usize::MAX, 3, 1.0, 1.0, GridPattern::Uniform).unwrap_err(),
            "nx",
        ),
        (disc(-1.0, 3).unwrap_err(), "radius"),
        (disc(1.0, 0).unwrap_err(), "resolution"),
        (parse_obj("", 0.0).unwrap_err(), "uv_scale"),
    ];
    for (e, want) in cases {
        match e {
            MeshError::InvalidParameter { name, .. } => assert_eq!(name, want),
            other => panic!("{want}: {other}"),
        }
    }
}

/// Parses with rest coordinates from the texture coordinates (`rest = "uv"`).
fn parse_uv(text: &str) -> Result<ClothMesh, MeshError> {
    let opts = ObjImport {
        rest: RestShape::Uv,
        ..ObjImport::default()
    };
    ClothMesh::from_obj_with(&parse_obj_data(text)?, &opts)
}

#[test]
fn obj_missing_uv() {
    let text = "v 0 0 0\nv 1 0 0\nv 0 0 1\nvt 0 0\n\nf 1/1 2 3\n";
    let e = parse_uv(text).unwrap_err();
    assert!(
        matches!(e, MeshError::MissingUv { line: 6, corner: 1 }),
        "{e}"
    );
    let e = parse_uv("v 0 0 0\nv 1 0 0\nv 0 0 1\nvn 0 1 0\nf 1//1 2//1 3//1\n").unwrap_err();
    assert!(
        matches!(e, MeshError::MissingUv { line: 5, corner: 0 }),
        "{e}"
    );
}

#[test]
fn obj_parse_errors_name_the_line() {
    let cases = [
        ("v 0 0\n", 1),
        ("v 0 0 0\nv 1 x 0\n", 2),
        ("vt 0\n", 1),
        ("v 0 0 0\nvt 0 0\nf 1/1 1/1\n", 3),
        ("v 0 0 0\nvt 0 0\n# comment\nf 1/1 2/1 1/1\n", 4),
        ("v 0 0 0\nvt 0 0\nf 0/1 1/1 1/1\n", 3),
        ("v 0 0 0\nvt 0 0\nf -2/1 1/1 1/1\n", 3),
        ("v 0 0 0\nvt 0 0\nf 1/2 1/1 1/1\n", 3),
        ("v 0 0 0\nvt 0 0\nf a/1 1/1 1/1\n", 3),
    ];
    for (text, line) in cases {
        match parse_obj(text, 1.0).unwrap_err() {
            MeshError::ObjParse { line: l, message } => assert_eq!(l, line, "{text:?}: {message}"),
            other => panic!("{text:?}: {other}"),
        }
    }
    // No faces at all: an empty mesh.
    assert!(matches!(
        parse_obj("v 0 0 0\nvt 0 0\n", 1.0).unwrap_err(),
        MeshError::Empty { .. }
    ));
}

#[test]
fn io_errors_name_the_path() {
    let missing = std::path::Path::new("/nonexistent-cloth-mesh-dir/x.obj");
    let e = read_obj(missing, 1.0).unwrap_err();
    assert!(
        matches!(&e, MeshError::Io { path, .. } if path == missing),
        "{e}"
    );
    assert!(e.to_string().contains("nonexistent-cloth-mesh-dir"));
    let m = grid(2, 2, 1.0, 1.0, GridPattern::Uniform).unwrap();
    let e = write_obj_file_atomic(missing, &m, m.positions()).unwrap_err();
    assert!(
        matches!(&e, MeshError::Io { path, .. } if path == missing),
        "{e}"
    );
}

#[test]
fn obj_mesh_errors_carry_the_face_line() {
    let head = "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n";
    // Line 9 is fine; line 10 is clockwise in (u, v).
    let e = parse_obj(&format!("{head}f 1/1 2/2 3/3\nf 1/1 4/4 3/3\n"), 1.0).unwrap_err();
    match &e {
        MeshError::ObjMesh { line: 10, source } => {
            assert!(
                matches!(
                    **source,
                    MeshError::ClockwiseRestTriangle { triangle: 1, .. }
                ),
                "{source}"
            )
        }
        other => panic!("{other}"),
    }
    assert!(e.to_string().starts_with("OBJ line 10: triangle 1"), "{e}");
    assert!(std::error::Error::source(&e).is_some());
    // Repeated corner in a quad: the fan triangle from it is on line 9.
    let e = parse_obj(&format!("{head}f 1/1 2/2 2/2 3/3\n"), 1.0).unwrap_err();
    assert!(
        matches!(&e, MeshError::ObjMesh { line: 9, source } if matches!(**source, MeshError::RepeatedVertex { .. })),
        "{e}"
    );
    // Non-finite numbers are rejected where they are written.
    let e = parse_obj("v 0 nan 0\n", 1.0).unwrap_err();
    assert!(matches!(e, MeshError::ObjParse { line: 1, .. }), "{e}");
    // uv_scale overflow produces a non-finite rest coordinate: wrapped with the face line.
    let big = "v 0 0 0\nv 1 0 0\nv 1 0 1\nvt 0 0\nvt 2 0\nvt 2 2\nf 1/1 2/2 3/3\n";
    let e = parse_obj(big, f64::MAX).unwrap_err();
    assert!(
        matches!(&e, MeshError::ObjMesh { line: 7, source } if matches!(**source, MeshError::NonFiniteCornerRest { triangle: 0, corner: 1 })),
        "{e}"
    );
}
