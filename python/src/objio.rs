//! Meshes given as arrays, written as OBJ files for the scene reader: a cloth or a collider
//! built from NumPy arrays goes through the same reader (and so the same checks and the same
//! rest shapes) as one read from a file. Numbers are written in Rust's shortest form that
//! reads back to the same `f64`, so the mesh read is bit for bit the arrays given.

use std::fmt::Write as _;
use std::path::PathBuf;

use numpy::{PyReadonlyArray2, PyReadonlyArray3, PyUntypedArrayMethods};
use pyo3::prelude::*;

use crate::errors;

/// Per-vertex `(n, 2)` or per-corner `(m, 3, 2)` texture coordinates.
#[derive(FromPyObject)]
pub(crate) enum Uv<'py> {
    PerVertex(PyReadonlyArray2<'py, f64>),
    PerCorner(PyReadonlyArray3<'py, f64>),
}

/// Writes `vertices` (n, 3), `triangles` (m, 3, 0-based) and optional texture coordinates
/// `uv` as an OBJ file at `path`; `what` names the mesh in errors (`cloth`, `collider`).
#[pyfunction]
#[pyo3(signature = (path, vertices, triangles, uv = None, what = "mesh"))]
pub(crate) fn write_mesh_obj(
    path: PathBuf,
    vertices: PyReadonlyArray2<'_, f64>,
    triangles: PyReadonlyArray2<'_, i64>,
    uv: Option<Uv<'_>>,
    what: &str,
) -> PyResult<()> {
    let (v, t) = (vertices.as_array(), triangles.as_array());
    if v.ncols() != 3 {
        return Err(errors::input(
            &format!("{what}.vertices"),
            format!("must have shape (n, 3), got {:?}", vertices.shape()),
        ));
    }
    if t.ncols() != 3 {
        return Err(errors::input(
            &format!("{what}.triangles"),
            format!("must have shape (m, 3), got {:?}", triangles.shape()),
        ));
    }
    let n = v.nrows();
    if let Some((k, bad)) = t
        .iter()
        .enumerate()
        .find(|&(_, &i)| i < 0 || i as usize >= n)
    {
        return Err(errors::input(
            &format!("{what}.triangles"),
            format!(
                "triangle {} refers to vertex {bad}, the mesh has {n} vertices",
                k / 3
            ),
        ));
    }
    let mut text = String::with_capacity(40 * (n + 2 * t.nrows()));
    for p in v.rows() {
        let _ = writeln!(text, "v {:?} {:?} {:?}", p[0], p[1], p[2]);
    }
    let corner_uv = texcoords(&mut text, uv.as_ref(), n, t.nrows(), what)?;
    for (k, tri) in t.rows().into_iter().enumerate() {
        let (a, b, c) = (tri[0] + 1, tri[1] + 1, tri[2] + 1);
        let _ = match corner_uv {
            None => writeln!(text, "f {a} {b} {c}"),
            Some(false) => writeln!(text, "f {a}/{a} {b}/{b} {c}/{c}"),
            Some(true) => {
                let u = 3 * k + 1;
                writeln!(text, "f {a}/{u} {b}/{} {c}/{}", u + 1, u + 2)
            }
        };
    }
    std::fs::write(&path, text)
        .map_err(|e| errors::output(format!("cannot write {}: {e}", path.display())))
}

/// Appends the `vt` lines of `uv` (for `n` vertices and `m` triangles) to `text`: `None`
/// without texture coordinates, `Some(per_corner)` with them.
fn texcoords(
    text: &mut String,
    uv: Option<&Uv<'_>>,
    n: usize,
    m: usize,
    what: &str,
) -> PyResult<Option<bool>> {
    match uv {
        None => Ok(None),
        Some(Uv::PerVertex(a)) => {
            let a = a.as_array();
            if a.shape() != [n, 2] {
                return Err(errors::input(
                    &format!("{what}.uv"),
                    format!("per vertex must have shape ({n}, 2), got {:?}", a.shape()),
                ));
            }
            for q in a.rows() {
                let _ = writeln!(text, "vt {:?} {:?}", q[0], q[1]);
            }
            Ok(Some(false))
        }
        Some(Uv::PerCorner(a)) => {
            let a = a.as_array();
            if a.shape() != [m, 3, 2] {
                return Err(errors::input(
                    &format!("{what}.uv"),
                    format!(
                        "per corner must have shape ({m}, 3, 2), got {:?}",
                        a.shape()
                    ),
                ));
            }
            for c in a.outer_iter() {
                for q in c.outer_iter() {
                    let _ = writeln!(text, "vt {:?} {:?}", q[0], q[1]);
                }
            }
            Ok(Some(true))
        }
    }
}
