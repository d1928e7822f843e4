//! Values between Python and the simulator's formats: a scene given as a dict becomes TOML
//! (then read by the scene reader like any scene file), and statistics (JSON values) become
//! Python dicts and lists.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString};

/// The TOML value of a Python object: dicts (string keys) become tables, lists, tuples and
/// NumPy arrays arrays, `bool`, `int`, `float` and `str` themselves, path-like objects their
/// path. A key whose value is `None` is left out (as if not given). `key` is the object's
/// key path, for the error.
pub(crate) fn to_toml(obj: &Bound<'_, PyAny>, key: &str) -> PyResult<Option<toml::Value>> {
    if obj.is_none() {
        return Ok(None);
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Some(toml::Value::Boolean(obj.extract()?)));
    }
    if obj.is_instance_of::<PyInt>() {
        return match obj.extract::<i64>() {
            Ok(i) => Ok(Some(toml::Value::Integer(i))),
            Err(_) => Err(PyTypeError::new_err(format!(
                "scene key `{key}`: integer {obj} does not fit in 64 bits"
            ))),
        };
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Some(toml::Value::Float(obj.extract()?)));
    }
    if obj.is_instance_of::<PyString>() {
        return Ok(Some(toml::Value::String(obj.extract()?)));
    }
    if let Ok(m) = obj.cast::<PyMapping>() {
        return table(m, key).map(|t| Some(toml::Value::Table(t)));
    }
    let py = obj.py();
    let os = py.import("os")?;
    if obj.hasattr("__fspath__")? {
        let p = os.call_method1("fspath", (obj,))?;
        return Ok(Some(toml::Value::String(p.extract()?)));
    }
    // NumPy arrays and scalars: their Python equivalents.
    if obj.hasattr("tolist")? {
        let plain = obj.call_method0("tolist")?;
        return to_toml(&plain, key);
    }
    if obj.is_instance_of::<PyList>() || obj.cast::<pyo3::types::PyTuple>().is_ok() {
        let mut items = Vec::new();
        for (k, item) in obj.try_iter()?.enumerate() {
            let item = item?;
            match to_toml(&item, &format!("{key}[{k}]"))? {
                Some(v) => items.push(v),
                None => {
                    return Err(PyTypeError::new_err(format!(
                        "scene key `{key}[{k}]`: None in a list"
                    )));
                }
            }
        }
        return Ok(Some(toml::Value::Array(items)));
    }
    Err(PyTypeError::new_err(format!(
        "scene key `{key}`: a {} cannot be a scene value (use dict, list, str, int, float, \
         bool or a path)",
        obj.get_type().name()?
    )))
}

/// The TOML table of a mapping with string keys.
fn table(m: &Bound<'_, PyMapping>, key: &str) -> PyResult<toml::Table> {
    let mut t = toml::Table::new();
    for item in m.items()?.try_iter()? {
        let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        let Ok(name) = k.extract::<String>() else {
            return Err(PyTypeError::new_err(format!(
                "scene key `{key}`: keys must be strings, got {k}"
            )));
        };
        let path = if key.is_empty() {
            name.clone()
        } else {
            format!("{key}.{name}")
        };
        if let Some(v) = to_toml(&v, &path)? {
            t.insert(name, v);
        }
    }
    Ok(t)
}

/// The TOML text of a scene given as a mapping.
pub(crate) fn scene_text(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let Ok(m) = obj.cast::<PyMapping>() else {
        return Err(PyTypeError::new_err("a scene dict must be a mapping"));
    };
    let t = table(m, "")?;
    toml::to_string(&t).map_err(|e| PyTypeError::new_err(format!("scene dict: {e}")))
}

/// The Python object of a JSON value: dicts, lists, floats, ints, strings, bools and `None`.
pub(crate) fn to_python<'py>(
    py: Python<'py>,
    v: &serde_json::Value,
) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::IntoPyObjectExt;
    Ok(match v {
        serde_json::Value::Null => py.None().into_bound(py),
        serde_json::Value::Bool(b) => b.into_bound_py_any(py)?,
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_bound_py_any(py)?
            } else if let Some(u) = n.as_u64() {
                u.into_bound_py_any(py)?
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_bound_py_any(py)?
            }
        }
        serde_json::Value::String(s) => s.into_bound_py_any(py)?,
        serde_json::Value::Array(a) => {
            let items = a
                .iter()
                .map(|x| to_python(py, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        serde_json::Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, to_python(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// A serializable value (statistics, a scene) as Python objects, through JSON.
pub(crate) fn serialized<'py, T: serde::Serialize>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    let v = serde_json::to_value(value)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    to_python(py, &v)
}
