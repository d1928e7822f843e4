//! Simulator errors as the package's Python exceptions (`cloth._errors`): the message is the
//! one the `cloth` command prints, and the scene key it names is kept as an attribute.

use cloth_sim::error::SimError;
use cloth_sim::scene::SceneError;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// Which exception class of `cloth._errors` an error becomes.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    /// `cloth.InputError` (a `ValueError`): a scene, a setting or an array is wrong.
    Input,
    /// `cloth.SimulationError` (a `RuntimeError`): the run failed (diverged, step too small).
    Simulation,
    /// `cloth.OutputError` (an `OSError`): a file could not be read or written.
    Output,
}

/// An exception of class `kind` with `message`, naming `key` (a scene key path) and the
/// place in the scene text when known.
pub(crate) fn error(
    kind: Kind,
    message: String,
    key: Option<String>,
    place: Option<(usize, usize)>,
) -> PyErr {
    let name = match kind {
        Kind::Input => "InputError",
        Kind::Simulation => "SimulationError",
        Kind::Output => "OutputError",
    };
    Python::attach(|py| {
        let (line, column) = place.unzip();
        let made = py
            .import("cloth._errors")
            .and_then(|m| m.getattr(name))
            .and_then(|cls| cls.call1((message.clone(), key, line, column)));
        match made {
            Ok(e) => PyErr::from_value(e),
            // The package's Python half is missing (the native module imported alone).
            Err(_) => match kind {
                Kind::Input => PyValueError::new_err(message),
                Kind::Simulation => PyRuntimeError::new_err(message),
                Kind::Output => PyOSError::new_err(message),
            },
        }
    })
}

/// A bad input naming `key`.
pub(crate) fn input(key: &str, message: impl Into<String>) -> PyErr {
    let message = message.into();
    error(
        Kind::Input,
        format!("invalid setting `{key}`: {message}"),
        Some(key.to_string()),
        None,
    )
}

/// A scene error. `located`: whether its line and column refer to text the user wrote (not
/// to TOML made from a dict), and so are kept in the message.
pub(crate) fn scene(e: SceneError, located: bool) -> PyErr {
    let kind = match e {
        SceneError::Io { .. } => Kind::Output,
        _ => Kind::Input,
    };
    let key = e.key().map(str::to_string);
    let place = if located { e.line_column() } else { None };
    let e = if located { e } else { unlocated(e) };
    error(kind, e.to_string(), key, place)
}

/// The error without its line and column.
fn unlocated(e: SceneError) -> SceneError {
    match e {
        SceneError::Parse { key, message, .. } => SceneError::Parse {
            key,
            message,
            line: None,
            column: None,
        },
        SceneError::Invalid { key, message, .. } => SceneError::Invalid {
            key,
            message,
            line: None,
            column: None,
        },
        SceneError::MissingFile { key, path, .. } => SceneError::MissingFile {
            key,
            path,
            line: None,
            column: None,
        },
        e => e,
    }
}

/// A simulator error, as the exception of its kind.
pub(crate) fn sim(e: SimError) -> PyErr {
    sim_with(e, true)
}

/// [`sim`], keeping the scene text's line and column only when `located`.
pub(crate) fn sim_with(e: SimError, located: bool) -> PyErr {
    if let SimError::Scene(s) = e {
        return scene(s, located);
    }
    let (kind, key) = match &e {
        SimError::Invalid { key, .. } | SimError::Budget { key, .. } => {
            (Kind::Input, Some(key.clone()))
        }
        SimError::Mesh(_) | SimError::Forces(_) | SimError::Collide(_) => (Kind::Input, None),
        SimError::Io { .. } | SimError::Json { .. } | SimError::Locked { .. } => {
            (Kind::Output, None)
        }
        _ => (Kind::Simulation, None),
    };
    error(kind, e.to_string(), key, None)
}

/// A failed file operation (`what`: the file and what was done).
pub(crate) fn output(message: String) -> PyErr {
    error(Kind::Output, message, None, None)
}

/// A run that failed part way (the frames before the failure are valid).
pub(crate) fn simulation(message: String) -> PyErr {
    error(Kind::Simulation, message, None, None)
}
