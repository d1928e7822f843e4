//! `cloth._cloth`: the native half of the `cloth` Python package.
//!
//! It wraps the simulator's crates, with no simulation logic of its own: scenes are read and
//! validated by `cloth_sim::scene`, built by `build_simulation`, stepped by
//! `cloth_sim::simulation::Simulation`, and runs write the files `cloth run` writes with the
//! same writers. The Python modules of the package (`python/cloth/*.py`) give it its public
//! API; this module's names are private to it (see `cloth/_cloth.pyi`).
//!
//! The GIL is released while the simulator computes (`Python::detach`) and taken back
//! between frames, where `Python::check_signals` lets Ctrl-C stop a long call.

#![allow(
    clippy::result_large_err,
    reason = "closures around the simulator return its error type as it is; each is turned into a Python exception at once"
)]

mod convert;
mod errors;
mod objio;
mod run;
mod scene;
mod sim;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _cloth(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<scene::PyScene>()?;
    m.add_class::<sim::PySimulation>()?;
    m.add_function(wrap_pyfunction!(run::run, m)?)?;
    m.add_function(wrap_pyfunction!(run::resume, m)?)?;
    m.add_function(wrap_pyfunction!(run::render, m)?)?;
    m.add_function(wrap_pyfunction!(objio::write_mesh_obj, m)?)?;
    m.add("MATERIAL_PRESETS", cloth_sim::forces::PRESET_NAMES.to_vec())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
