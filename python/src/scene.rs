//! `cloth._cloth.Scene`: a scene read and validated by the simulator's scene reader, from a
//! file, TOML text, or a dict turned into TOML.

use std::path::PathBuf;

use cloth_sim::collide::MeshReport;
use cloth_sim::scene::{Scene, build_simulation};
use cloth_sim::simulation::Simulation;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::{convert, errors};

/// A validated scene (every default applied, every path resolved).
#[pyclass(name = "Scene", module = "cloth._cloth", frozen)]
pub(crate) struct PyScene {
    pub(crate) scene: Scene,
    /// Whether errors may quote lines and columns of the text (false for dict scenes: their
    /// TOML is made here, not written by the user).
    pub(crate) located: bool,
    /// The scene file it was read from, if any (as given, for the default output directory).
    pub(crate) path: Option<PathBuf>,
}

#[pymethods]
impl PyScene {
    /// Reads the scene file at `path` (as `cloth run` does: relative paths in it resolve
    /// against its directory, made absolute).
    #[staticmethod]
    fn from_path(path: PathBuf) -> PyResult<Self> {
        let abs = std::fs::canonicalize(&path)
            .map_err(|e| errors::output(format!("{}: {e}", path.display())))?;
        let scene = Scene::load(&abs).map_err(|e| errors::scene(e, true))?;
        Ok(Self {
            scene,
            located: true,
            path: Some(path),
        })
    }

    /// Parses scene TOML text; relative paths resolve against `base_dir`.
    #[staticmethod]
    fn from_toml(text: &str, base_dir: PathBuf) -> PyResult<Self> {
        let scene = Scene::from_toml_str(text, &base_dir).map_err(|e| errors::scene(e, true))?;
        Ok(Self {
            scene,
            located: true,
            path: None,
        })
    }

    /// Reads a scene given as a dict with the scene file's keys (`None` values are left out);
    /// relative paths resolve against `base_dir`.
    #[staticmethod]
    fn from_dict(data: &Bound<'_, PyAny>, base_dir: PathBuf) -> PyResult<Self> {
        let text = convert::scene_text(data)?;
        let scene = Scene::from_toml_str(&text, &base_dir).map_err(|e| errors::scene(e, false))?;
        Ok(Self {
            scene,
            located: false,
            path: None,
        })
    }

    /// The resolved scene as TOML, every default written out.
    fn to_toml(&self) -> PyResult<String> {
        self.scene
            .to_toml_string()
            .map_err(|e| errors::scene(e, false))
    }

    /// The resolved scene as a dict with the scene file's keys.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::serialized(py, &self.scene)
    }

    /// A copy with `run.frames` set to `frames`.
    fn with_frames(&self, frames: usize) -> PyResult<Self> {
        if frames == 0 {
            return Err(errors::input("run.frames", "must be at least 1"));
        }
        let mut scene = self.scene.clone();
        scene.run.frames = frames;
        Ok(Self {
            scene,
            located: self.located,
            path: self.path.clone(),
        })
    }

    /// Frames simulated after frame 0.
    #[getter]
    fn frames(&self) -> usize {
        self.scene.run.frames
    }

    /// Output frames per second.
    #[getter]
    fn fps(&self) -> f64 {
        self.scene.run.fps
    }

    /// The scene file this scene was read from, if any.
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    /// Builds the simulation and returns what `cloth check` prints, as a dict.
    fn check<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let scene = &self.scene;
        let sim = py
            .detach(|| build_simulation(scene))
            .map_err(|e| errors::sim_with(e, self.located))?;
        counts(py, scene, &sim)
    }
}

/// The counts of `cloth check`: the whole cloth, pins, colliders, frames, then each cloth.
fn counts<'py>(py: Python<'py>, scene: &Scene, sim: &Simulation) -> PyResult<Bound<'py, PyDict>> {
    let sys = sim.system();
    let mesh = &sys.mesh;
    let d = PyDict::new(py);
    d.set_item("vertices", mesh.num_vertices())?;
    d.set_item("triangles", mesh.num_triangles())?;
    d.set_item("edges", mesh.edges().len())?;
    d.set_item("bend_edges", mesh.hinges().len())?;
    d.set_item("area", mesh.total_rest_area())?;
    d.set_item("mass", sys.masses.iter().sum::<f64>())?;
    let pinned: usize = sim.pins().iter().map(|p| p.vertices.len()).sum();
    d.set_item("pinned_vertices", pinned)?;
    d.set_item("pin_groups", sim.pins().len())?;
    d.set_item("colliders", scene.colliders.len())?;
    d.set_item("notes", mesh_notices(sim))?;
    d.set_item("frames", scene.run.frames)?;
    d.set_item("fps", scene.run.fps)?;
    let stitches: Vec<[usize; 2]> = sim.world().sewing.pairs().collect();
    let mut cloths = Vec::new();
    for (part, c) in sys.parts.iter().zip(&scene.cloths) {
        let e = PyDict::new(py);
        e.set_item("name", &part.name)?;
        e.set_item("vertices", part.vertices.len())?;
        e.set_item("triangles", part.triangles.len())?;
        let topo = sys.part_topology(part, &stitches);
        e.set_item("rest", topo.rest.name())?;
        e.set_item("boundary_loops", topo.boundary_loops)?;
        if let Some(seams) = topo.uv_seams {
            e.set_item("uv_seams", seams)?;
        }
        if let Some(g) = &part.garment {
            e.set_item("garment", g.to_string())?;
            e.set_item("stitches", topo.stitches)?;
            e.set_item("sewn_boundary_loops", topo.sewn_boundary_loops)?;
        }
        if let Some(time) = c.sew_time {
            e.set_item("sew_start", c.sew_start.unwrap_or(0.0))?;
            e.set_item("sew_time", time)?;
        }
        cloths.push(e);
    }
    d.set_item("cloths", cloths)?;
    let u = sim.start_untangled();
    d.set_item("crossings", (u.found, u.remaining))?;
    Ok(d)
}

/// What the collider set did to the mesh colliders as given (welded vertices, open parts), one
/// line per collider that needed it (the notes `cloth run` and `cloth check` print).
pub(crate) fn mesh_notices(sim: &Simulation) -> Vec<String> {
    sim.colliders()
        .map(|set| {
            set.mesh_reports()
                .iter()
                .filter_map(MeshReport::notice)
                .collect()
        })
        .unwrap_or_default()
}
