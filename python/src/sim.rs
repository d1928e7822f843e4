//! `cloth._cloth.Simulation`: a scene's simulation stepped frame by frame from Python.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, TryLockError};

use cloth_sim::mesh::{ObjFrames, Vec3};
use cloth_sim::scene::build_simulation;
use cloth_sim::simulation::Simulation;
use numpy::ndarray::{Array1, Array2, Array3};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArray3, PyReadonlyArray2};
use pyo3::exceptions::{PyIndexError, PyKeyError, PyRuntimeError, PyTypeError};
use pyo3::prelude::*;

use crate::scene::{PyScene, mesh_notices};
use crate::{convert, errors};

/// What a step needs: the simulation and the threads it runs on.
pub(crate) struct Engine {
    pub(crate) sim: Simulation,
    /// Its own pool of worker threads, or `None` for the process's global pool.
    pub(crate) pool: Option<rayon::ThreadPool>,
}

impl Engine {
    /// Runs `f` on the engine's threads.
    pub(crate) fn install<R: Send>(
        pool: &Option<rayon::ThreadPool>,
        f: impl FnOnce() -> R + Send,
    ) -> R {
        match pool {
            Some(p) => p.install(f),
            None => f(),
        }
    }

    /// Worker threads the simulation runs on.
    pub(crate) fn threads(&self) -> usize {
        self.pool
            .as_ref()
            .map_or_else(rayon::current_num_threads, |p| p.current_num_threads())
    }
}

/// A pool of `n` worker threads (capped at the machine's cores, as `cloth run --threads`
/// does), or `None` for the global pool when `n` is not given.
pub(crate) fn thread_pool(n: Option<usize>) -> PyResult<Option<rayon::ThreadPool>> {
    let Some(mut n) = n else { return Ok(None) };
    if n == 0 {
        return Err(errors::input("threads", "must be at least 1"));
    }
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    n = n.min(cores);
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .map(Some)
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start {n} threads: {e}")))
}

/// A simulation built from a scene, stepped by the caller.
#[pyclass(name = "Simulation", module = "cloth._cloth", frozen)]
pub(crate) struct PySimulation {
    engine: Mutex<Engine>,
    /// The OBJ layout of the frames (texture coordinates, faces), formatted once.
    obj: ObjFrames,
    /// Collider names, in scene order (`name`, or `collider[k]`).
    collider_names: Vec<String>,
    notes: Vec<String>,
    crossings: (usize, usize),
}

impl PySimulation {
    /// The engine, waited for without holding the GIL: the thread that has it may need the
    /// GIL back to finish (it computes with the GIL released).
    fn lock(&self, py: Python<'_>) -> PyResult<MutexGuard<'_, Engine>> {
        loop {
            match self.engine.try_lock() {
                Ok(g) => return Ok(g),
                Err(TryLockError::WouldBlock) => {
                    py.detach(|| std::thread::sleep(std::time::Duration::from_millis(1)));
                }
                Err(TryLockError::Poisoned(_)) => {
                    return Err(PyRuntimeError::new_err(
                        "the simulation failed in another thread and is unusable",
                    ));
                }
            }
        }
    }

    /// The index of a collider given by index or name.
    fn collider_index(&self, which: &Bound<'_, PyAny>) -> PyResult<usize> {
        let n = self.collider_names.len();
        if let Ok(i) = which.extract::<i64>() {
            let k = if i < 0 { i + n as i64 } else { i };
            return usize::try_from(k)
                .ok()
                .filter(|&k| k < n)
                .ok_or_else(|| PyIndexError::new_err(format!("collider {i} of {n}")));
        }
        let name: String = which
            .extract()
            .map_err(|_| PyTypeError::new_err("a collider is given by its index or name"))?;
        self.collider_names
            .iter()
            .position(|c| *c == name)
            .ok_or_else(|| {
                PyKeyError::new_err(format!(
                    "no collider is named {name:?} (colliders: {})",
                    self.collider_names.join(", ")
                ))
            })
    }
}

/// A cloth of the system: name, first and end vertex, first and end triangle.
type Part = (String, usize, usize, usize, usize);

/// Positions or velocities as a new (n, 3) array.
fn vec3_array<'py>(py: Python<'py>, v: &[Vec3]) -> Bound<'py, PyArray2<f64>> {
    let flat: Vec<f64> = v.iter().flat_map(|p| [p.x, p.y, p.z]).collect();
    Array2::from_shape_vec((v.len(), 3), flat)
        .expect("3 numbers per vector")
        .into_pyarray(py)
}

/// An (n, 3) float array as vectors; `key` names it in errors.
fn vectors(a: &PyReadonlyArray2<'_, f64>, key: &str) -> PyResult<Vec<Vec3>> {
    let a = a.as_array();
    if a.ncols() != 3 {
        return Err(errors::input(
            key,
            format!("must have shape (n, 3), got {:?}", a.shape()),
        ));
    }
    Ok(a.rows()
        .into_iter()
        .map(|r| Vec3::new(r[0], r[1], r[2]))
        .collect())
}

/// A 3-vector from a sequence of three numbers; `key` names it in errors.
fn vec3(v: Vec<f64>, key: &str) -> PyResult<Vec3> {
    match v[..] {
        [x, y, z] => Ok(Vec3::new(x, y, z)),
        _ => Err(errors::input(
            key,
            format!("must have 3 numbers, got {}", v.len()),
        )),
    }
}

#[pymethods]
impl PySimulation {
    /// Builds the simulation of `scene` (as `cloth run` does) on `threads` worker threads
    /// (default: the global pool, all cores).
    #[new]
    #[pyo3(signature = (scene, threads = None))]
    fn new(py: Python<'_>, scene: &PyScene, threads: Option<usize>) -> PyResult<Self> {
        let pool = thread_pool(threads)?;
        let s = &scene.scene;
        let sim = py
            .detach(|| Engine::install(&pool, || build_simulation(s)))
            .map_err(|e| errors::sim_with(e, scene.located))?;
        let sys = sim.system();
        let obj = ObjFrames::new(&sys.mesh, &sys.obj_groups())
            .map_err(|e| errors::input("cloth", format!("cloth groups: {e}")))?;
        let collider_names = sim
            .colliders()
            .map(|set| set.colliders().iter().map(|c| c.name.clone()).collect())
            .unwrap_or_default();
        let u = sim.start_untangled();
        Ok(Self {
            notes: mesh_notices(&sim),
            crossings: (u.found, u.remaining),
            engine: Mutex::new(Engine { sim, pool }),
            obj,
            collider_names,
        })
    }

    /// Runs the preroll (if the scene has one and it has not run) and returns its statistics.
    fn preroll<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut guard = self.lock(py)?;
        let e = &mut *guard;
        let (sim, pool) = (&mut e.sim, &e.pool);
        let stats = py
            .detach(|| Engine::install(pool, || sim.preroll()))
            .map_err(errors::sim)?;
        convert::serialized(py, &stats)
    }

    /// Advances one frame (running the preroll first if needed) and returns its statistics.
    fn step_frame<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut guard = self.lock(py)?;
        let e = &mut *guard;
        let (sim, pool) = (&mut e.sim, &e.pool);
        let stats = py
            .detach(|| Engine::install(pool, || sim.step_frame()))
            .map_err(errors::sim)?;
        convert::serialized(py, &stats)
    }

    /// Advances `frames` frames; `callback(stats)` after each. Ctrl-C stops between frames
    /// (KeyboardInterrupt; the frames done stay done).
    #[pyo3(signature = (frames, callback = None))]
    fn step_frames<'py>(
        &self,
        py: Python<'py>,
        frames: usize,
        callback: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let mut out = Vec::with_capacity(frames);
        for _ in 0..frames {
            py.check_signals()?;
            let stats = self.step_frame(py)?;
            if let Some(cb) = &callback {
                cb.call1((&stats,))?;
            }
            out.push(stats);
        }
        Ok(out)
    }

    /// Current positions (m), a new (n, 3) float64 array.
    #[getter]
    fn positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        Ok(vec3_array(py, self.lock(py)?.sim.positions()))
    }

    /// Current velocities (m/s), a new (n, 3) float64 array.
    #[getter]
    fn velocities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        Ok(vec3_array(py, self.lock(py)?.sim.velocities()))
    }

    /// Constraint forces (N) of the last accepted implicit step, a new (n, 3) array (empty
    /// for the explicit integrator).
    #[getter]
    fn constraint_forces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        Ok(vec3_array(py, self.lock(py)?.sim.constraint_forces()))
    }

    /// Simulated time (s).
    #[getter]
    fn time(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.lock(py)?.sim.time())
    }

    /// Frames computed so far.
    #[getter]
    fn frame(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.lock(py)?.sim.frame())
    }

    /// Output frames per second.
    #[getter]
    fn fps(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.lock(py)?.sim.fps())
    }

    /// Worker threads the simulation runs on.
    #[getter]
    fn threads(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.lock(py)?.threads())
    }

    /// Triangles (m, 3), vertex indices.
    #[getter]
    fn triangles<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<i64>>> {
        let g = self.lock(py)?;
        let t = g.sim.system().mesh.triangles();
        let flat: Vec<i64> = t.iter().flatten().map(|&i| i as i64).collect();
        Ok(Array2::from_shape_vec((t.len(), 3), flat)
            .expect("3 indices per triangle")
            .into_pyarray(py))
    }

    /// Rest (u, v) of each triangle corner (m), (m, 3, 2).
    #[getter]
    fn rest_uv<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray3<f64>>> {
        let g = self.lock(py)?;
        let c = g.sim.system().mesh.corner_rest();
        let flat: Vec<f64> = c.iter().flatten().flat_map(|r| [r.x, r.y]).collect();
        Ok(Array3::from_shape_vec((c.len(), 3, 2), flat)
            .expect("2 numbers per corner")
            .into_pyarray(py))
    }

    /// Lumped vertex masses (kg), (n,).
    #[getter]
    fn masses<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let g = self.lock(py)?;
        Ok(Array1::from_vec(g.sim.system().masses.clone()).into_pyarray(py))
    }

    /// The cloths: `(name, first vertex, end vertex, first triangle, end triangle)` each.
    #[getter]
    fn parts(&self, py: Python<'_>) -> PyResult<Vec<Part>> {
        let g = self.lock(py)?;
        Ok((g.sim.system().parts.iter())
            .map(|p| {
                let (v, t) = (&p.vertices, &p.triangles);
                (p.name.clone(), v.start, v.end, t.start, t.end)
            })
            .collect())
    }

    /// Vertex indices of each pin group (sorted), in scene order.
    #[getter]
    fn pins<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyArray1<i64>>>> {
        let g = self.lock(py)?;
        Ok((g.sim.pins().iter())
            .map(|p| {
                let v: Vec<i64> = p.vertices.iter().map(|&i| i as i64).collect();
                Array1::from_vec(v).into_pyarray(py)
            })
            .collect())
    }

    /// Where pin group `group`'s vertices are held now (m), (k, 3).
    fn pin_targets<'py>(
        &self,
        py: Python<'py>,
        group: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let g = self.lock(py)?;
        let pins = g.sim.pins();
        let pin = pins
            .get(group)
            .ok_or_else(|| PyIndexError::new_err(format!("pin group {group} of {}", pins.len())))?;
        let mut out = Vec::new();
        pin.targets(g.sim.time(), &mut out);
        Ok(vec3_array(py, &out))
    }

    /// Drives pin group `group` to `targets` (k, 3), reached at the end of the next frame.
    fn set_pin_targets(
        &self,
        py: Python<'_>,
        group: usize,
        targets: PyReadonlyArray2<'_, f64>,
    ) -> PyResult<()> {
        let key = format!("pin[{group}]");
        let t = vectors(&targets, &key)?;
        self.lock(py)?
            .sim
            .set_pin_targets(group, &t)
            .map_err(errors::sim)
    }

    /// Collider names, in scene order.
    #[getter]
    fn colliders(&self) -> Vec<String> {
        self.collider_names.clone()
    }

    /// The pose of a collider (index or name) now: its origin (m) and its rotation matrix.
    fn collider_pose(&self, which: &Bound<'_, PyAny>) -> PyResult<([f64; 3], [[f64; 3]; 3])> {
        let py = which.py();
        let i = self.collider_index(which)?;
        let g = self.lock(py)?;
        let set = g
            .sim
            .colliders()
            .expect("a simulation with named colliders has a set");
        let pose = set.colliders()[i].pose(g.sim.time().max(0.0));
        let (p, r) = (pose.translation.vector, pose.rotation.to_rotation_matrix());
        let m = r.matrix();
        Ok((
            [p.x, p.y, p.z],
            [0, 1, 2].map(|row| [0, 1, 2].map(|col| m[(row, col)])),
        ))
    }

    /// Drives a collider (index or name) to a pose reached at the end of the next frame.
    fn set_collider_pose(
        &self,
        which: &Bound<'_, PyAny>,
        position: Vec<f64>,
        rotation: Vec<f64>,
    ) -> PyResult<()> {
        let py = which.py();
        let i = self.collider_index(which)?;
        let key = format!("collider[{i}]");
        let p = vec3(position, &format!("{key}.position"))?;
        let r = vec3(rotation, &format!("{key}.rotation"))?;
        self.lock(py)?
            .sim
            .set_collider_pose(i, p, r)
            .map_err(errors::sim)
    }

    /// Writes the current positions as an OBJ file, byte for byte as `cloth run` writes a
    /// frame.
    fn write_obj(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let g = self.lock(py)?;
        self.obj
            .write_file_atomic(&path, &g.sim.system().mesh, g.sim.positions())
            .map_err(|e| errors::output(format!("cannot write {}: {e}", path.display())))
    }

    /// Notes on the mesh colliders as given (welded vertices, open parts).
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    /// Crossings of the cloth with itself at the start: (found, left after untangling).
    #[getter]
    fn start_crossings(&self) -> (usize, usize) {
        self.crossings
    }
}
