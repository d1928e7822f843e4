//! From the file as written ([`super::raw`]) to a [`Scene`]: defaults applied, every value
//! checked, every path resolved against the scene's directory. Errors name the key path and,
//! through [`super::locate`], its line and column.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use cloth_collide::Keyframe;
use nalgebra::Vector3;
use toml::Spanned;
use toml::de::DeTable;

use super::pattern::FramePattern;
use super::raw::*;
use super::*;
use crate::start::{MAX_ANGULAR_SPEED, MAX_COORDINATE, MAX_SIZE, MAX_SPEED, MIN_SIZE, SCALE_RANGE};

/// Validation context: the text (for line/column), its spanned parse (for key spans) and the
/// directory relative paths are resolved against.
pub(super) struct Ctx<'a> {
    pub(super) text: &'a str,
    pub(super) doc: Option<&'a Spanned<DeTable<'a>>>,
    pub(super) base_dir: &'a Path,
}

impl Ctx<'_> {
    pub(super) fn invalid(&self, key: &str, message: impl Into<String>) -> SceneError {
        let (line, column) = self.location_of(key);
        SceneError::Invalid {
            key: cloth_mesh::sanitize_message(key),
            message: cloth_mesh::sanitize_message(&message.into()),
            line,
            column,
        }
    }

    pub(super) fn finite(&self, key: &str, v: f64) -> Result<f64, SceneError> {
        if v.is_finite() {
            Ok(v)
        } else {
            Err(self.invalid(key, format!("must be a finite number, got {v}")))
        }
    }

    pub(super) fn positive(&self, key: &str, v: f64) -> Result<f64, SceneError> {
        self.finite(key, v)?;
        if v > 0.0 {
            Ok(v)
        } else {
            Err(self.invalid(key, format!("must be > 0, got {v}")))
        }
    }

    pub(super) fn non_negative(&self, key: &str, v: f64) -> Result<f64, SceneError> {
        self.finite(key, v)?;
        if v >= 0.0 {
            Ok(v)
        } else {
            Err(self.invalid(key, format!("must be >= 0, got {v}")))
        }
    }

    pub(super) fn count(&self, key: &str, v: usize, min: usize) -> Result<usize, SceneError> {
        if v < min {
            Err(self.invalid(key, format!("must be >= {min}, got {v}")))
        } else if v > MAX_COUNT {
            Err(self.invalid(key, format!("must be <= {MAX_COUNT}, got {v}")))
        } else {
            Ok(v)
        }
    }

    pub(super) fn vec3(&self, key: &str, v: [f64; 3]) -> Result<Vector3<f64>, SceneError> {
        for (i, x) in v.iter().enumerate() {
            self.finite(&format!("{key}[{i}]"), *x)?;
        }
        Ok(Vector3::from(v))
    }

    pub(super) fn opt_vec3(
        &self,
        key: &str,
        v: Option<[f64; 3]>,
    ) -> Result<Vector3<f64>, SceneError> {
        v.map_or(Ok(Vector3::zeros()), |v| self.vec3(key, v))
    }

    /// A point or offset (m): every coordinate within [`MAX_COORDINATE`].
    pub(super) fn coordinates(&self, key: &str, v: [f64; 3]) -> Result<Vector3<f64>, SceneError> {
        let v = self.vec3(key, v)?;
        if let Some(i) = (0..3).find(|&i| v[i].abs() > MAX_COORDINATE) {
            return Err(self.invalid(
                &format!("{key}[{i}]"),
                format!(
                    "{:e} m is beyond the admitted |coordinate| <= {MAX_COORDINATE:e} m",
                    v[i]
                ),
            ));
        }
        Ok(v)
    }

    /// An optional point or offset (default the origin), see [`Ctx::coordinates`].
    pub(super) fn opt_coordinates(
        &self,
        key: &str,
        v: Option<[f64; 3]>,
    ) -> Result<Vector3<f64>, SceneError> {
        v.map_or(Ok(Vector3::zeros()), |v| self.coordinates(key, v))
    }

    /// An optional velocity (default zero) of magnitude at most `max` (in `unit`).
    pub(super) fn opt_speed(
        &self,
        key: &str,
        v: Option<[f64; 3]>,
        max: f64,
        unit: &str,
    ) -> Result<Vector3<f64>, SceneError> {
        let v = self.opt_vec3(key, v)?;
        let norm = scaled_norm(&v);
        if norm > max {
            return Err(self.invalid(
                key,
                format!("magnitude {norm:.3e} {unit} is above the limit of {max:e} {unit}"),
            ));
        }
        Ok(v)
    }

    /// A dimension (m) in [[`MIN_SIZE`], [`MAX_SIZE`]].
    pub(super) fn size(&self, key: &str, v: f64) -> Result<f64, SceneError> {
        self.positive(key, v)?;
        if (MIN_SIZE..=MAX_SIZE).contains(&v) {
            Ok(v)
        } else {
            Err(self.invalid(
                key,
                format!("must be in [{MIN_SIZE:e}, {MAX_SIZE:e}] m, got {v:e}"),
            ))
        }
    }

    /// A thickness (m) in [0, [`MAX_SIZE`]].
    pub(super) fn thickness(&self, key: &str, v: f64) -> Result<f64, SceneError> {
        self.non_negative(key, v)?;
        if v <= MAX_SIZE {
            Ok(v)
        } else {
            Err(self.invalid(key, format!("must be <= {MAX_SIZE:e} m, got {v:e}")))
        }
    }

    /// A scale factor in [`SCALE_RANGE`].
    pub(super) fn scale(&self, key: &str, v: f64) -> Result<f64, SceneError> {
        self.positive(key, v)?;
        let [lo, hi] = SCALE_RANGE;
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(self.invalid(key, format!("must be in [{lo:e}, {hi:e}], got {v:e}")))
        }
    }

    pub(super) fn unused<T>(
        &self,
        key: &str,
        v: &Option<T>,
        context: &str,
    ) -> Result<(), SceneError> {
        match v {
            Some(_) => Err(self.invalid(key, format!("is not used by {context}"))),
            None => Ok(()),
        }
    }

    pub(super) fn existing_file(&self, key: &str, rel: &str) -> Result<PathBuf, SceneError> {
        if rel.is_empty() {
            return Err(self.invalid(key, "must not be empty"));
        }
        let path = self.base_dir.join(rel);
        if path.is_file() {
            Ok(path)
        } else {
            let (line, column) = self.location_of(key);
            Err(SceneError::MissingFile {
                key: key.to_owned(),
                path,
                line,
                column,
            })
        }
    }

    pub(super) fn resolve(&self, raw: RawScene) -> Result<Scene, SceneError> {
        let run = self.run(raw.run)?;
        let cloths = self.cloths(raw.cloth)?;
        let pins = raw
            .pin
            .into_iter()
            .enumerate()
            .map(|(i, p)| self.pin(&format!("pin[{i}]"), p, &cloths))
            .collect::<Result<Vec<_>, _>>()?;
        let colliders = raw
            .collider
            .into_iter()
            .enumerate()
            .map(|(i, c)| self.collider(&format!("collider[{i}]"), c, &run))
            .collect::<Result<Vec<_>, _>>()?;
        let solver = self.solver(raw.solver, &run)?;
        Ok(Scene {
            run,
            cloths,
            pins,
            colliders,
            solver,
            base_dir: self.base_dir.to_path_buf(),
        })
    }

    fn run(&self, r: RawRun) -> Result<RunSettings, SceneError> {
        let d = RunSettings::default();
        let positive = |key: &str, v: Option<f64>| v.map(|v| self.positive(key, v)).transpose();
        Ok(RunSettings {
            fps: self.positive("run.fps", r.fps.unwrap_or(d.fps))?,
            frames: self.count("run.frames", r.frames.unwrap_or(d.frames), 1)?,
            gravity: r.gravity.map_or(Ok(d.gravity), |g| self.gravity(g))?,
            preroll: self.preroll(r.preroll)?,
            count_intersections: r.count_intersections,
            max_hours: positive("run.max_hours", r.max_hours)?,
            max_memory_gb: positive("run.max_memory_gb", r.max_memory_gb)?,
        })
    }

    /// `run.preroll`: finite and >= 0.
    fn preroll(&self, v: Option<f64>) -> Result<f64, SceneError> {
        let v = v.unwrap_or(0.0);
        let v = self.finite("run.preroll", v)?;
        if v < 0.0 {
            return Err(self.invalid("run.preroll", format!("must be >= 0, got {v}")));
        }
        Ok(v)
    }

    /// Gravity up to [`MAX_GRAVITY`]: beyond it every frame leaves any bound in a few steps
    /// (energies overflow to infinity), which is no simulation.
    fn gravity(&self, g: [f64; 3]) -> Result<Vector3<f64>, SceneError> {
        let g = self.vec3("run.gravity", g)?;
        let norm = scaled_norm(&g);
        if norm > MAX_GRAVITY {
            return Err(self.invalid(
                "run.gravity",
                format!(
                    "magnitude {:.3e} m/s^2 is above the limit of {MAX_GRAVITY:e} m/s^2",
                    norm
                ),
            ));
        }
        Ok(g)
    }

    fn keyframes(
        &self,
        key: &str,
        keys: Option<Vec<RawKeyframe>>,
    ) -> Result<Vec<Keyframe>, SceneError> {
        let mut out: Vec<Keyframe> = Vec::new();
        for (i, k) in keys.unwrap_or_default().into_iter().enumerate() {
            let p = format!("{key}[{i}]");
            let t = self.non_negative(&format!("{p}.t"), k.t)?;
            if let Some(prev) = out.last()
                && t <= prev.t
            {
                return Err(self.invalid(
                    &format!("{p}.t"),
                    format!(
                        "keyframe times must increase strictly, got {t} after {}",
                        prev.t
                    ),
                ));
            }
            out.push(Keyframe {
                t,
                translation: self.coordinates(&format!("{p}.translation"), k.translation)?,
                rotation: self.vec3(&format!("{p}.rotation"), k.rotation)?,
            });
        }
        Ok(out)
    }

    fn pin(&self, k: &str, p: RawPin, cloths: &[ClothSettings]) -> Result<PinSettings, SceneError> {
        let cloth = match &p.cloth {
            Some(name) => cloths.iter().find(|c| &c.name == name).ok_or_else(|| {
                let names: Vec<&str> = cloths.iter().map(|c| c.name.as_str()).collect();
                self.invalid(
                    &format!("{k}.cloth"),
                    format!("no cloth is named `{name}` (cloths: {})", names.join(", ")),
                )
            })?,
            None if cloths.len() > 1 => {
                return Err(self.invalid(
                    k,
                    "needs `cloth = \"<name>\"`: the scene has several cloths",
                ));
            }
            None => &cloths[0],
        };
        let count = cloth.mesh.vertex_count();
        let vertices = p.vertices.unwrap_or_default();
        if let Some(n) = count
            && let Some((i, v)) = vertices.iter().enumerate().find(|(_, v)| **v >= n)
        {
            return Err(self.invalid(
                &format!("{k}.vertices[{i}]"),
                format!("vertex {v} does not exist (the mesh has {n} vertices)"),
            ));
        }
        let region = match p.region {
            Some(r) => {
                let min = self.coordinates(&format!("{k}.region.min"), r.min)?;
                let max = self.coordinates(&format!("{k}.region.max"), r.max)?;
                if let Some(axis) = (0..3).find(|&a| min[a] > max[a]) {
                    return Err(self.invalid(
                        &format!("{k}.region"),
                        format!(
                            "min[{axis}] = {} is greater than max[{axis}] = {}",
                            min[axis], max[axis]
                        ),
                    ));
                }
                Some(Region { min, max })
            }
            None => None,
        };
        if vertices.is_empty() && region.is_none() {
            return Err(self.invalid(k, "a pin needs a non-empty `vertices` list or a `region`"));
        }
        if p.attach.is_some() && p.keyframes.is_some() {
            return Err(self.invalid(
                &format!("{k}.keyframes"),
                "a pin attached to a collider moves with it; give `attach` or `keyframes`",
            ));
        }
        Ok(PinSettings {
            name: p.name,
            cloth: p.cloth,
            vertices,
            region,
            keyframes: self.keyframes(&format!("{k}.keyframes"), p.keyframes)?,
            attach: p.attach,
        })
    }

    fn collider(
        &self,
        k: &str,
        c: RawCollider,
        run: &RunSettings,
    ) -> Result<ColliderSettings, SceneError> {
        let key = |name: &str| format!("{k}.{name}");
        self.collider_unused_keys(k, &c)?;
        let shape = self.collider_shape(k, &c, run)?;
        let keyframes = self.keyframes(&key("keyframes"), c.keyframes)?;
        let velocity = self.opt_speed(&key("velocity"), c.velocity, MAX_SPEED, "m/s")?;
        let angular_velocity = self.opt_speed(
            &key("angular_velocity"),
            c.angular_velocity,
            MAX_ANGULAR_SPEED,
            "degrees/s",
        )?;
        if !keyframes.is_empty()
            && (velocity != Vector3::zeros() || angular_velocity != Vector3::zeros())
        {
            let which = if velocity != Vector3::zeros() {
                "velocity"
            } else {
                "angular_velocity"
            };
            return Err(self.invalid(
                &key(which),
                "cannot be combined with `keyframes`; use one kind of motion",
            ));
        }
        Ok(ColliderSettings {
            name: c.name,
            shape,
            position: self.opt_coordinates(&key("position"), c.position)?,
            rotation: self.opt_vec3(&key("rotation"), c.rotation)?,
            friction: self.non_negative(&key("friction"), c.friction.unwrap_or(0.4))?,
            thickness: self.thickness(&key("thickness"), c.thickness.unwrap_or(0.005))?,
            keyframes,
            velocity,
            angular_velocity,
        })
    }

    /// Keys of other shapes are mistakes: refuse them, naming the shape.
    fn collider_unused_keys(&self, k: &str, c: &RawCollider) -> Result<(), SceneError> {
        let key = |name: &str| format!("{k}.{name}");
        let shape_name = match c.shape {
            ShapeKind::Sphere => "sphere",
            ShapeKind::Cylinder => "cylinder",
            ShapeKind::Capsule => "capsule",
            ShapeKind::Box => "box",
            ShapeKind::Plane => "plane",
            ShapeKind::Obj => "obj",
            ShapeKind::Gltf => "gltf",
        };
        let ctx = format!("shape = \"{shape_name}\"");
        let uses_radius = matches!(
            c.shape,
            ShapeKind::Sphere | ShapeKind::Cylinder | ShapeKind::Capsule
        );
        let uses_length = matches!(c.shape, ShapeKind::Cylinder | ShapeKind::Capsule);
        if !uses_radius {
            self.unused(&key("radius"), &c.radius, &ctx)?;
        }
        if !uses_length {
            self.unused(&key("length"), &c.length, &ctx)?;
        }
        if c.shape != ShapeKind::Box {
            self.unused(&key("size"), &c.size, &ctx)?;
        }
        if !matches!(c.shape, ShapeKind::Obj | ShapeKind::Gltf) {
            self.unused(&key("path"), &c.path, &ctx)?;
        }
        if c.shape != ShapeKind::Obj {
            self.unused(&key("frames"), &c.frames, &ctx)?;
            self.unused(&key("frame_start"), &c.frame_start, &ctx)?;
        }
        if c.shape != ShapeKind::Gltf {
            self.unused(&key("animation"), &c.animation, &ctx)?;
            self.unused(&key("scale"), &c.scale, &ctx)?;
            self.unused(&key("time_offset"), &c.time_offset, &ctx)?;
            self.unused(&key("loop"), &c.looping, &ctx)?;
        }
        Ok(())
    }

    /// The shape of a collider and its dimensions (files resolved and checked).
    fn collider_shape(
        &self,
        k: &str,
        c: &RawCollider,
        run: &RunSettings,
    ) -> Result<ColliderShape, SceneError> {
        let key = |name: &str| format!("{k}.{name}");
        let need = |name: &str, v: Option<f64>| -> Result<f64, SceneError> {
            v.ok_or_else(|| self.invalid(&key(name), "is required for this shape"))
        };
        Ok(match c.shape {
            ShapeKind::Sphere => ColliderShape::Sphere {
                radius: self.size(&key("radius"), need("radius", c.radius)?)?,
            },
            ShapeKind::Cylinder => ColliderShape::Cylinder {
                radius: self.size(&key("radius"), need("radius", c.radius)?)?,
                length: self.size(&key("length"), need("length", c.length)?)?,
            },
            ShapeKind::Capsule => ColliderShape::Capsule {
                radius: self.size(&key("radius"), need("radius", c.radius)?)?,
                // 0: a sphere.
                length: match need("length", c.length)? {
                    0.0 => 0.0,
                    l => self.size(&key("length"), l)?,
                },
            },
            ShapeKind::Box => {
                let size = c
                    .size
                    .ok_or_else(|| self.invalid(&key("size"), "is required for shape = \"box\""))?;
                for (i, s) in size.iter().enumerate() {
                    self.size(&format!("{k}.size[{i}]"), *s)?;
                }
                ColliderShape::Box {
                    size: Vector3::from(size),
                }
            }
            ShapeKind::Plane => ColliderShape::Plane,
            ShapeKind::Obj => {
                let rel = c
                    .path
                    .as_deref()
                    .ok_or_else(|| self.invalid(&key("path"), "is required for shape = \"obj\""))?;
                let path = self.existing_file(&key("path"), rel)?;
                let frame_start = c.frame_start.unwrap_or(0);
                let frames = match &c.frames {
                    None => None,
                    Some(pattern) => {
                        Some(self.frames(&key("frames"), pattern, frame_start, run)?)
                    }
                };
                ColliderShape::Obj {
                    path,
                    frames,
                    frame_start,
                }
            }
            ShapeKind::Gltf => {
                let rel = c.path.as_deref().ok_or_else(|| {
                    self.invalid(&key("path"), "is required for shape = \"gltf\"")
                })?;
                ColliderShape::Gltf {
                    path: self.existing_file(&key("path"), rel)?,
                    animation: c.animation.clone(),
                    scale: self.scale(&key("scale"), c.scale.unwrap_or(1.0))?,
                    time_offset: self.finite(&key("time_offset"), c.time_offset.unwrap_or(0.0))?,
                    looping: c.looping.unwrap_or(false),
                }
            }
        })
    }

    /// Validates an OBJ frame pattern, checks that every frame file exists, and returns the
    /// pattern resolved against the base directory.
    fn frames(
        &self,
        key: &str,
        pattern: &str,
        frame_start: usize,
        run: &RunSettings,
    ) -> Result<String, SceneError> {
        FramePattern::parse(pattern).map_err(|m| self.invalid(key, m))?;
        let joined = self.base_dir.join(pattern);
        let resolved = joined
            .to_str()
            .ok_or_else(|| self.invalid(key, "the scene directory is not valid UTF-8"))?
            .to_owned();
        let p = FramePattern::parse(&resolved)
            .map_err(|m| self.invalid(key, format!("the scene directory contains braces: {m}")))?;
        for k in 0..=run.frames {
            let number = frame_start
                .checked_add(k)
                .ok_or_else(|| self.invalid(key, "frame numbers overflow"))?;
            let path = PathBuf::from(OsString::from(p.format(number)));
            if !path.is_file() {
                let (line, column) = self.location_of(key);
                return Err(SceneError::MissingFile {
                    key: key.to_owned(),
                    path,
                    line,
                    column,
                });
            }
        }
        Ok(resolved)
    }

    /// `h_max` (at most one frame) and `h_min` (at most `h_max`), s.
    fn step_bounds(
        &self,
        s: &RawSolver,
        d: &SolverSettings,
        frame: f64,
    ) -> Result<(f64, f64), SceneError> {
        let h_max = self.positive("solver.h_max", s.h_max.unwrap_or(d.h_max))?;
        if h_max > frame * (1.0 + 1e-12) {
            return Err(self.invalid(
                "solver.h_max",
                format!("must not exceed the frame time 1/fps = {frame} s, got {h_max}"),
            ));
        }
        let h_min = self.positive("solver.h_min", s.h_min.unwrap_or(d.h_min))?;
        if h_min > h_max {
            return Err(self.invalid(
                "solver.h_min",
                format!("must not exceed h_max = {h_max} s, got {h_min}"),
            ));
        }
        Ok((h_max, h_min))
    }

    /// `solver.strain_limit`: `[min, max]` with `0 < min <= 1 <= max`.
    fn strain_limit(
        &self,
        given: Option<[f64; 2]>,
        default: Option<[f64; 2]>,
    ) -> Result<Option<[f64; 2]>, SceneError> {
        let Some([lo, hi]) = given else {
            return Ok(default);
        };
        let k = "solver.strain_limit";
        self.finite(k, lo)?;
        self.finite(k, hi)?;
        if !(lo > 0.0 && lo <= 1.0 && hi >= 1.0) {
            return Err(self.invalid(
                k,
                format!("must be [min, max] with 0 < min <= 1 <= max, got [{lo}, {hi}]"),
            ));
        }
        Ok(Some([lo, hi]))
    }

    /// `solver.strain_tolerance` in (0, 1) and `solver.strain_relaxation` in (0, 2).
    fn strain_pass(&self, s: &RawSolver, d: &SolverSettings) -> Result<(f64, f64), SceneError> {
        let k = "solver.strain_tolerance";
        let tol = self.positive(k, s.strain_tolerance.unwrap_or(d.strain_tolerance))?;
        if tol >= 1.0 {
            return Err(self.invalid(
                k,
                format!("must be < 1 (a fraction of the rest length), got {tol}"),
            ));
        }
        let k = "solver.strain_relaxation";
        let omega = self.positive(k, s.strain_relaxation.unwrap_or(d.strain_relaxation))?;
        if omega >= 2.0 {
            return Err(self.invalid(k, format!("must be in (0, 2), got {omega}")));
        }
        Ok((tol, omega))
    }

    /// `solver.verlet_h` and `solver.verlet_damping` (s, 1/s), checked against the frame time
    /// `frame` (s).
    fn verlet_step(
        &self,
        s: &RawSolver,
        d: &SolverSettings,
        integrator: IntegratorKind,
        frame: f64,
    ) -> Result<(f64, f64), SceneError> {
        let verlet_h = self.positive("solver.verlet_h", s.verlet_h.unwrap_or(d.verlet_h))?;
        if verlet_h > frame * (1.0 + 1e-12) {
            return Err(self.invalid(
                "solver.verlet_h",
                format!("must not exceed the frame time 1/fps = {frame} s, got {verlet_h}"),
            ));
        }
        let verlet_damping = self.non_negative(
            "solver.verlet_damping",
            s.verlet_damping.unwrap_or(d.verlet_damping),
        )?;
        // Checked when the Verlet integrator runs or its keys are given: an implicit scene at a
        // low frame rate is not refused for the defaults of an integrator it does not use.
        let verlet_keys = s.verlet_damping.is_some() || s.verlet_h.is_some();
        if (integrator == IntegratorKind::Verlet || verlet_keys) && verlet_damping * verlet_h >= 1.0
        {
            return Err(self.invalid(
                "solver.verlet_damping",
                format!("times the Verlet step {verlet_h} s must be < 1, got {verlet_damping} 1/s"),
            ));
        }
        Ok((verlet_h, verlet_damping))
    }

    fn solver(&self, s: RawSolver, run: &RunSettings) -> Result<SolverSettings, SceneError> {
        let integrator = s.integrator.unwrap_or(IntegratorKind::Implicit);
        let d = SolverSettings::defaults(integrator, run.fps);
        let frame = run.frame_time();
        let (h_max, h_min) = self.step_bounds(&s, &d, frame)?;
        let cg_tolerance = self.positive(
            "solver.cg_tolerance",
            s.cg_tolerance.unwrap_or(d.cg_tolerance),
        )?;
        if cg_tolerance >= 1.0 {
            return Err(self.invalid(
                "solver.cg_tolerance",
                format!("must be < 1 (a relative residual), got {cg_tolerance}"),
            ));
        }
        let strain_limit = self.strain_limit(s.strain_limit, d.strain_limit)?;
        let (strain_tolerance, strain_relaxation) = self.strain_pass(&s, &d)?;
        let (verlet_h, verlet_damping) = self.verlet_step(&s, &d, integrator, frame)?;
        Ok(SolverSettings {
            integrator,
            h_max,
            h_min,
            cg_tolerance,
            cg_max_iterations: self.count(
                "solver.cg_max_iterations",
                s.cg_max_iterations.unwrap_or(d.cg_max_iterations),
                1,
            )?,
            preconditioner: s.preconditioner.unwrap_or(d.preconditioner),
            definiteness: s.definiteness.unwrap_or(d.definiteness),
            stretch_threshold: self.positive(
                "solver.stretch_threshold",
                s.stretch_threshold.unwrap_or(d.stretch_threshold),
            )?,
            strain_limit,
            strain_iterations: self.count(
                "solver.strain_iterations",
                s.strain_iterations.unwrap_or(d.strain_iterations),
                1,
            )?,
            strain_tolerance,
            strain_relaxation,
            strain_long_range: s.strain_long_range.unwrap_or(d.strain_long_range),
            strain_global_after: s.strain_global_after.unwrap_or(d.strain_global_after),
            step_control: s.step_control.unwrap_or(d.step_control),
            newton_corrections: s.newton_corrections.unwrap_or(d.newton_corrections),
            coulomb_rounds: s.coulomb_rounds.unwrap_or(d.coulomb_rounds),
            correction_tolerance: self.non_negative(
                "solver.correction_tolerance",
                s.correction_tolerance.unwrap_or(d.correction_tolerance),
            )?,
            grow_after: self.count("solver.grow_after", s.grow_after.unwrap_or(d.grow_after), 1)?,
            verlet_h,
            spring_stiffness: self.positive(
                "solver.spring_stiffness",
                s.spring_stiffness.unwrap_or(d.spring_stiffness),
            )?,
            bend_spring_stiffness: self.non_negative(
                "solver.bend_spring_stiffness",
                s.bend_spring_stiffness.unwrap_or(d.bend_spring_stiffness),
            )?,
            verlet_damping,
        })
    }
}

/// The Euclidean norm, scaled so that components of 1e300 do not overflow it to infinity.
fn scaled_norm(v: &Vector3<f64>) -> f64 {
    let big = v.amax();
    if big > 0.0 {
        big * (v / big).norm()
    } else {
        0.0
    }
}
