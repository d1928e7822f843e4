//! No input makes the OBJ reader panic: a small UV-mapped OBJ with a seam, mutated at random
//! (bytes cut, inserted or duplicated, indices and numbers replaced by extreme values, a
//! byte-order mark or CR line ends added), reads to a mesh whose faces index its vertices or
//! to a one-line error.

use cloth_mesh::{parse_obj, parse_obj_data};
use proptest::prelude::*;

/// Two quads sharing an edge, with a UV seam along it, normals and a group line.
const BASE: &str = "# seam\no sheet\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 2 0 0\nv 2 1 0\n\
vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvt 1.5 0\nvt 2.5 0\nvt 2.5 1\nvt 1.5 1\nvn 0 0 1\n\
f 1/1/1 2/2/1 3/3/1\nf 1/1/1 3/3/1 4/4/1\nf 2/5/1 5/6/1 6/7/1\nf 2/5/1 6/7/1 3/8/1\n";

const PIECES: [&str; 16] = [
    "0",
    "-1",
    "-7",
    "1e300",
    "-1e300",
    "1e400",
    "nan",
    "inf",
    "18446744073709551616",
    "/",
    "//",
    "\u{feff}",
    "\r\n",
    "f 1 1 1\n",
    "v 1 2\n",
    "\0",
];

fn mutate(s: &mut Vec<u8>, kind: u8, pos: usize, arg: usize) {
    let n = s.len().max(1);
    let at = pos % n;
    match kind % 4 {
        0 => {
            let end = (at + arg % 8).min(s.len());
            s.drain(at.min(s.len())..end);
        }
        1 => {
            let piece = PIECES[arg % PIECES.len()].as_bytes();
            let at = at.min(s.len());
            s.splice(at..at, piece.iter().copied());
        }
        2 => {
            let end = (at + arg % 16).min(s.len());
            let piece = s[at.min(end)..end].to_vec();
            s.splice(end..end, piece);
        }
        _ => {
            // Replace a number (a maximal run of digits) with an extreme one.
            let start = (at..s.len()).find(|&i| s[i].is_ascii_digit());
            if let Some(a) = start {
                let b = (a..s.len())
                    .find(|&i| !s[i].is_ascii_digit())
                    .unwrap_or(s.len());
                s.splice(a..b, PIECES[arg % 9].bytes());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_objs_never_panic(
        edits in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 1..6),
    ) {
        let mut bytes = BASE.as_bytes().to_vec();
        for (kind, pos, arg) in edits {
            mutate(&mut bytes, kind, pos, arg);
        }
        let text = String::from_utf8_lossy(&bytes);
        match parse_obj_data(&text) {
            Ok(data) => {
                for t in &data.triangles {
                    prop_assert!(t.iter().all(|&i| i < data.positions.len()));
                }
                for t in data.triangle_texcoords.iter().flatten().flatten() {
                    prop_assert!(*t < data.texcoords.len());
                }
            }
            Err(e) => prop_assert_eq!(e.to_string().lines().count(), 1, "{}", e),
        }
        match parse_obj(&text, 1.0) {
            Ok(mesh) => prop_assert!(mesh.num_vertices() > 0),
            Err(e) => prop_assert_eq!(e.to_string().lines().count(), 1, "{}", e),
        }
    }
}
