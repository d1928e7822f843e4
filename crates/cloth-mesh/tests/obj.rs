//! OBJ reading and writing: round trips, seams, polygons, indices, atomic files.

mod common;

use cloth_mesh::{
    ClothMesh, GridPattern, ObjFrames, ObjImport, RestShape, Vec2, Vec3, disc, grid, parse_obj,
    parse_obj_data, read_obj, write_obj, write_obj_file_atomic, write_obj_grouped,
};
use common::{check_invariants, euler};

fn to_text(m: &ClothMesh, p: &[Vec3]) -> String {
    let mut out = Vec::new();
    write_obj(&mut out, m, p).unwrap();
    String::from_utf8(out).unwrap()
}

fn assert_same(a: &ClothMesh, b: &ClothMesh) {
    assert_eq!(a.triangles(), b.triangles());
    assert_eq!(a.positions(), b.positions(), "positions bit-identical");
    assert_eq!(a.corner_rest(), b.corner_rest(), "rest bit-identical");
    assert_eq!(a.vertex_rest(), b.vertex_rest());
    assert_eq!(a.seam_groups(), b.seam_groups());
}

#[test]
fn round_trip_builders() {
    let meshes = [
        grid(7, 5, 1.3, 0.7, GridPattern::Uniform).unwrap(),
        grid(6, 6, 0.1, 2.0, GridPattern::Alternating).unwrap(),
        grid(9, 8, 1.0, 1.0 / 3.0, GridPattern::Equilateral).unwrap(),
        disc(0.35, 5).unwrap(),
    ];
    for m in &meshes {
        let back = parse_obj(&to_text(m, m.positions()), 1.0).unwrap();
        assert_same(m, &back);
        assert_eq!(
            back.original_position_indices(),
            m.original_position_indices()
        );
    }
}

#[test]
fn round_trip_deformed_positions_and_normals() {
    let m = disc(1.0, 4).unwrap();
    let p: Vec<Vec3> = m
        .positions()
        .iter()
        .map(|x| Vec3::new(x.x, 0.3 * (2.0 * x.x).sin() * x.z + 0.1, x.z))
        .collect();
    let text = to_text(&m, &p);
    let back = parse_obj(&text, 1.0).unwrap();
    assert_eq!(back.positions(), &p[..]);
    assert_eq!(back.corner_rest(), m.corner_rest());
    // One vn per vertex, equal to the mesh's normals of p, and they are unit.
    let vn: Vec<Vec3> = text
        .lines()
        .filter_map(|l| l.strip_prefix("vn "))
        .map(|l| {
            let c: Vec<f64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            Vec3::new(c[0], c[1], c[2])
        })
        .collect();
    assert_eq!(vn, m.vertex_normals(&p));
    assert!(vn.iter().all(|n| (n.norm() - 1.0).abs() < 1e-12));
}

#[test]
fn write_rejects_wrong_positions() {
    let m = grid(3, 3, 1.0, 1.0, GridPattern::Uniform).unwrap();
    let mut out = Vec::new();
    let e = write_obj(&mut out, &m, &m.positions()[..4]).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    let mut p = m.positions().to_vec();
    p[5].x = f64::NAN;
    let e = write_obj(&mut out, &m, &p).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
}

/// A unit cube with outward winding; every face is its own UV panel (24 vt), so each of the
/// 8 corners is split into 3 cloth vertices.
fn cube_obj() -> String {
    let mut s = String::from("# cube, one UV island per face\n");
    for i in 0..8 {
        s += &format!("v {} {} {}\n", i & 1, (i >> 1) & 1, (i >> 2) & 1);
    }
    // Outward-facing quads (CCW seen from outside).
    let faces = [
        [0, 2, 3, 1],
        [4, 5, 7, 6],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 4, 6, 2],
        [1, 3, 7, 5],
    ];
    for f in 0..6 {
        let x0 = 2.0 * f as f64;
        for (du, dv) in [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)] {
            s += &format!("vt {} {}\n", x0 + du, dv);
        }
    }
    s += "o cube\ng sides\ns off\nusemtl cloth\n";
    for (f, face) in faces.iter().enumerate() {
        s += "f";
        for (k, v) in face.iter().enumerate() {
            s += &format!(" {}/{}/1", v + 1, 4 * f + k + 1);
        }
        s += "\n";
    }
    s + "vn 0 0 1\n"
}

/// The cube read with `split_seams`: a vertex is a `(v, vt)` pair.
fn split_cube() -> ClothMesh {
    let opts = ObjImport {
        uv_scale: 0.25,
        split_seams: true,
        ..ObjImport::default()
    };
    ClothMesh::from_obj_with(&parse_obj_data(&cube_obj()).unwrap(), &opts).unwrap()
}

#[test]
fn cube_with_split_uvs_is_one_closed_cloth_with_rest_per_corner() {
    let m = parse_obj(&cube_obj(), 0.25).unwrap();
    check_invariants(&m);
    assert_eq!((m.num_vertices(), m.num_triangles()), (8, 12));
    assert_eq!(m.edges().len(), 18);
    assert!(
        m.boundary_edges().is_empty(),
        "UV seams do not split the cloth"
    );
    assert_eq!(m.hinges().len(), 18);
    assert_eq!(euler(&m), 2, "a closed sphere");
    assert!(m.vertex_rest().is_none(), "corners of a vertex differ");
    assert!(m.seam_groups().is_empty());
    assert!((m.total_rest_area() - 6.0 * 0.0625).abs() < 1e-15);
    // Every edge has its rest length from its faces' UVs: 0.25 m, or the diagonal.
    for (e, l) in m.edges().iter().zip(m.edge_rest_lengths()) {
        let d = (m.positions()[e.v[1]] - m.positions()[e.v[0]]).norm() * 0.25;
        assert!((l - d).abs() < 1e-15, "edge {:?}: {l} vs {d}", e.v);
    }
    // Across every cube edge the two faces are unfolded flat: the flap of one face lands
    // 0.25 m beyond the edge, in the other face's plane coordinates.
    for h in 0..m.hinges().len() {
        let r = m.hinge_rest(h);
        let (e0, e1) = (r[0], r[1]);
        let side = |p: Vec2| (e1 - e0).perp(&(p - e0));
        assert!(side(r[2]) * side(r[3]) < 0.0, "flaps on opposite sides");
    }
    // Re-read from a written frame: the same mesh.
    let back = parse_obj(&to_text(&m, m.positions()), 1.0).unwrap();
    assert_same(&m, &back);
}

#[test]
fn cube_with_split_seams_becomes_six_panels_with_seams() {
    let m = split_cube();
    check_invariants(&m);
    assert_eq!(m.num_vertices(), 24);
    assert_eq!(m.num_triangles(), 12);
    assert_eq!(m.edges().len(), 30);
    assert_eq!(
        m.boundary_edges().len(),
        24,
        "every cube edge is a seam: a boundary in rest space"
    );
    assert_eq!(m.hinges().len(), 6, "only the quad diagonals are interior");
    assert_eq!(euler(&m), 6, "six disc-like panels");
    // uv_scale: each panel is 0.25 m x 0.25 m.
    assert!((m.total_rest_area() - 6.0 * 0.0625).abs() < 1e-15);
    // Seams: 8 groups of 3 cloth vertices; members share the original position.
    let groups = m.seam_groups();
    assert_eq!(groups.len(), 8);
    for (o, g) in groups.iter().enumerate() {
        assert_eq!(g.len(), 3);
        for &v in g {
            assert_eq!(m.original_position_index(v), o);
            assert_eq!(
                m.positions()[v],
                Vec3::new((o & 1) as f64, ((o >> 1) & 1) as f64, ((o >> 2) & 1) as f64)
            );
        }
    }
    // Cloth vertices are numbered by (v, vt): original indices ascend.
    assert!(
        m.original_position_indices()
            .windows(2)
            .all(|w| w[0] <= w[1])
    );
    // Every cloth vertex is written, seam copies too, whether or not they coincide: the
    // layout of a frame never depends on the positions.
    for p in [m.positions().to_vec(), {
        let mut p = m.positions().to_vec();
        p[0].x -= 0.01;
        p
    }] {
        let text = to_text(&m, &p);
        assert_eq!(text.lines().filter(|l| l.starts_with("v ")).count(), 24);
        let back = parse_obj(&text, 1.0).unwrap();
        assert_eq!(back.triangles(), m.triangles());
        assert_eq!(back.positions(), &p[..]);
        assert_eq!(back.corner_rest(), m.corner_rest());
        assert_eq!(back.vertex_rest(), m.vertex_rest());
    }
}

#[test]
fn byte_order_mark_and_crlf_are_read_exactly() {
    let plain = "v 0 0 0\nv 1 0 0\nv 0 0 1\nvt 0 0\nvt 1 0\nvt 0 1\nf 1/1 2/2 3/3\n";
    let a = parse_obj(plain, 1.0).unwrap();
    let bom = format!("\u{feff}{}", plain.replace('\n', "\r\n"));
    let b = parse_obj(&bom, 1.0).unwrap();
    assert_same(&a, &b);
    assert_eq!(b.positions()[1], Vec3::new(1.0, 0.0, 0.0));
}

#[test]
fn shared_uvs_join_panels_and_split_uvs_make_a_seam() {
    // Two quads sharing the positional edge 2-5 (1-based v 2, 5).
    let pos = "v 0 0 0\nv 1 0 0\nv 2 0 0\nv 0 0 1\nv 1 0 1\nv 2 0 1\n";
    let joined = format!(
        "{pos}vt 0 0\nvt 1 0\nvt 2 0\nvt 0 1\nvt 1 1\nvt 2 1\nf 1/1 2/2 5/5 4/4\nf 2/2 3/3 6/6 5/5\n"
    );
    let m = parse_obj(&joined, 1.0).unwrap();
    check_invariants(&m);
    assert_eq!(m.num_vertices(), 6);
    assert_eq!(m.hinges().len(), 3);
    assert!(m.seam_groups().is_empty());
    // Same geometry, the second panel has its own UVs, offset in rest space.
    let split = format!(
        "{pos}vt 0 0\nvt 1 0\nvt 0 1\nvt 1 1\nvt 3 0\nvt 4 0\nvt 3 1\nvt 4 1\nf 1/1 2/2 5/4 4/3\nf 2/5 3/6 6/8 5/7\n"
    );
    // By default a particle is a position: the panels stay joined across the UV seam,
    // each quad with its own rest shape.
    let d = parse_obj(&split, 1.0).unwrap();
    check_invariants(&d);
    assert_eq!(d.num_vertices(), 6);
    assert_eq!(d.hinges().len(), 3);
    assert!((d.total_rest_area() - 2.0).abs() < 1e-15);
    let opts = ObjImport {
        split_seams: true,
        ..ObjImport::default()
    };
    let s = ClothMesh::from_obj_with(&parse_obj_data(&split).unwrap(), &opts).unwrap();
    check_invariants(&s);
    assert_eq!(s.num_vertices(), 8);
    assert_eq!(
        s.hinges().len(),
        2,
        "the seam edge is a boundary in rest space"
    );
    assert_eq!(euler(&s), 2);
    let groups = s.seam_groups();
    assert_eq!(groups.len(), 2);
    let originals: Vec<usize> = groups
        .iter()
        .map(|g| s.original_position_index(g[0]))
        .collect();
    assert_eq!(originals, vec![1, 4]);
    for g in &groups {
        assert_eq!(s.positions()[g[0]], s.positions()[g[1]]);
        let r = s.vertex_rest().unwrap();
        assert_ne!(r[g[0]], r[g[1]]);
    }
}

#[test]
fn polygons_are_fan_triangulated_and_negative_indices_resolve() {
    // A convex pentagon with relative indices and a trailing comment.
    let text = "v 0 0 0\nv 2 0 0\nv 3 0 2\nv 1 0 3\nv -1 0 2\n\
                vt 0 0\nvt 2 0\nvt 3 2\nvt 1 3\nvt -1 2\n\
                f -5/-5 -4/-4 -3/-3 -2/-2 -1/-1 # pentagon\n";
    let m = parse_obj(text, 1.0).unwrap();
    assert_eq!(m.triangles(), &[[0, 1, 2], [0, 2, 3], [0, 3, 4]]);
    // Shoelace area of the pentagon.
    let pts = [(0.0, 0.0), (2.0, 0.0), (3.0, 2.0), (1.0, 3.0), (-1.0, 2.0)];
    let shoelace: f64 = (0..5)
        .map(|i| {
            let (a, b) = (pts[i], pts[(i + 1) % 5]);
            a.0 * b.1 - b.0 * a.1
        })
        .sum::<f64>()
        / 2.0;
    assert!((m.total_rest_area() - shoelace).abs() < 1e-14);
}

#[test]
fn atomic_file_write_and_read() {
    let dir = std::env::temp_dir().join(format!("cloth-mesh-obj-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sheet.obj");
    let m = grid(4, 3, 1.0, 0.5, GridPattern::Alternating).unwrap();
    std::fs::write(&path, "old contents").unwrap();
    write_obj_file_atomic(&path, &m, m.positions()).unwrap();
    let back = read_obj(&path, 1.0).unwrap();
    assert_same(&m, &back);
    // Only the target remains: the temporary file was renamed away.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("sheet.obj")]);
    // A failed write (wrong positions) leaves the old file intact and no temporary behind.
    assert!(write_obj_file_atomic(&path, &m, &m.positions()[..2]).is_err());
    assert_same(&m, &read_obj(&path, 1.0).unwrap());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn obj_without_uvs_is_flattened_as_modelled() {
    // A bent strip: two squares folded 90 degrees along x = 1, no vt.
    let text = "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nv 1 1 0\nv 1 1 1\n\
                f 1 4 3 2\nf 2 3 6 5\n";
    let obj = parse_obj_data(text).unwrap();
    assert_eq!(ObjImport::default().resolve(&obj), RestShape::Mesh);
    let m = ClothMesh::from_obj(&obj, 1.0).unwrap();
    check_invariants(&m);
    assert!((m.total_rest_area() - 2.0).abs() < 1e-14);
    for (e, l) in m.edges().iter().zip(m.edge_rest_lengths()) {
        let d = (m.positions()[e.v[1]] - m.positions()[e.v[0]]).norm();
        assert!((l - d).abs() < 1e-14);
    }
    // The fold is undone in rest space: the hinge across x = 1 lies flat.
    let h = m
        .hinges()
        .iter()
        .position(|h| {
            let x = |v: usize| m.positions()[v];
            (x(h.v[0]).x - 1.0).abs() < 1e-12 && (x(h.v[1]).x - 1.0).abs() < 1e-12
        })
        .unwrap();
    let r = m.hinge_rest(h);
    let side = |p: Vec2| (r[1] - r[0]).perp(&(p - r[0]));
    assert!((side(r[2]) + side(r[3])).abs() < 1e-12 && side(r[2]).abs() > 0.5);
    // Asking for UVs where there are none names the face line.
    let opts = ObjImport {
        rest: RestShape::Uv,
        ..ObjImport::default()
    };
    let e = ClothMesh::from_obj_with(&obj, &opts)
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 7"), "{e}");
}

#[test]
fn groups_are_written_and_read_back() {
    let a = grid(3, 3, 1.0, 1.0, GridPattern::Uniform).unwrap();
    let b = disc(0.5, 2).unwrap();
    let m = ClothMesh::concat(&[&a, &b]).unwrap();
    let groups = vec![
        ("shirt".to_string(), 0),
        ("skirt".to_string(), a.num_triangles()),
    ];
    let mut out = Vec::new();
    write_obj_grouped(&mut out, &m, m.positions(), &groups).unwrap();
    let text = String::from_utf8(out).unwrap();
    let data = parse_obj_data(&text).unwrap();
    assert_eq!(data.groups, groups);
    assert_same(&m, &ClothMesh::from_obj(&data, 1.0).unwrap());
    // Disjoint components: the second mesh's vertices follow the first's.
    assert_eq!(m.num_vertices(), a.num_vertices() + b.num_vertices());
    assert_eq!(
        m.triangles()[a.num_triangles()],
        b.triangles()[0].map(|v| v + 9)
    );
    let bad = vec![("x".to_string(), 99)];
    assert!(write_obj_grouped(&mut Vec::new(), &m, m.positions(), &bad).is_err());
}

#[test]
fn one_frame_writer_serves_every_frame_of_its_mesh() {
    let m = disc(1.0, 4).unwrap();
    let groups = vec![("cape".to_string(), 0)];
    let frames = ObjFrames::new(&m, &groups).unwrap();
    for k in 0..3 {
        // Tiny, huge and negative coordinates: the short forms must still read back exactly.
        let s = [1e-9, 1.0, -3.7e5][k];
        let p: Vec<Vec3> = m
            .positions()
            .iter()
            .map(|x| Vec3::new(s * x.x, s * (x.x * x.z).sin() - 1e-7, -x.z / 3.0))
            .collect();
        let mut out = Vec::new();
        frames.write(&mut out, &m, &p).unwrap();
        let data = parse_obj_data(std::str::from_utf8(&out).unwrap()).unwrap();
        assert_eq!(data.groups, groups);
        let back = ClothMesh::from_obj(&data, 1.0).unwrap();
        assert_eq!(
            back.positions(),
            &p[..],
            "frame {k}: positions bit-identical"
        );
        assert_eq!(back.corner_rest(), m.corner_rest());
        assert_eq!(back.triangles(), m.triangles());
    }
    // Another mesh, or positions of the wrong length, are refused.
    let other = grid(3, 3, 1.0, 1.0, GridPattern::Uniform).unwrap();
    let e = frames
        .write(&mut Vec::new(), &other, other.positions())
        .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    let e = frames
        .write(&mut Vec::new(), &m, &m.positions()[1..])
        .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
}
