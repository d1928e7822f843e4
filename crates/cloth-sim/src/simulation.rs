//! The time-stepping driver: frames, adaptive implicit steps (Knowl 9), explicit Verlet steps,
//! constraints and statistics.

use crate::SimError;
use crate::contact::ContactManager;
use crate::implicit::{ImplicitWorkspace, LinearSolver};
use crate::pins::PinGroup;
use crate::stats::{FrameStats, Stopwatch, Timings};
use crate::strain::{EdgeSet, StrainLimit};
use crate::system::ClothSystem;
use crate::verlet::{Verlet, VerletSettings};
use cloth_collide::SelfCollision;
use cloth_mesh::Vec3;
use cloth_solver::{Constraint, PcgParams, SolverError};
use nalgebra::Matrix3;

/// Settings of the implicit (Baraff-Witkin) integrator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImplicitSettings {
    /// Largest step (s). Default 1/30 s, the paper's 33 ms.
    pub h_max: f64,
    /// Smallest step (s) before the run fails with [`SimError::StepTooSmall`]. Default 1e-5 s.
    pub h_min: f64,
    /// Linear solver and its parameters.
    pub solver: LinearSolver,
    /// Adaptive stepping (Knowl 9): a step is rejected and redone with half the step when any
    /// triangle's stretch |w_u| or |w_v| changes by more than this in one step (dimensionless,
    /// so 0.03 means three percentage points of strain). Default 0.03: with 0.1 the linearized
    /// step overshoots (9% stretch on the 2601-vertex fixed sheet in single 33 ms steps,
    /// against 3% with 2 ms steps); with 0.03 it stays near 3% at 1.7 steps per frame.
    pub stretch_threshold: f64,
    /// Consecutive accepted steps after which the step is doubled (up to `h_max`). Default 2,
    /// as in the paper.
    pub grow_after: usize,
    /// Optional maximum-stretch pass after every accepted step (off by default). Velocities
    /// are corrected by the position change divided by h.
    pub strain_limit: Option<StrainLimit>,
}

impl Default for ImplicitSettings {
    fn default() -> Self {
        Self {
            h_max: 1.0 / 30.0,
            h_min: 1e-5,
            solver: LinearSolver::Mpcg(PcgParams::default()),
            stretch_threshold: 0.03,
            grow_after: 2,
            strain_limit: None,
        }
    }
}

/// Which integrator advances the cloth.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Integrator {
    /// Linearized backward Euler with constraints and adaptive steps (Baraff & Witkin 1998).
    Implicit(ImplicitSettings),
    /// Position Verlet on springs with the maximum-stretch pass (the second seed).
    Verlet(VerletSettings),
}

/// A constraint on one vertex along one or two directions, holding its velocity component(s)
/// along those directions at zero (a frictionless rail or slot).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DirectionalConstraint {
    /// Constrained vertex.
    pub vertex: usize,
    /// The constraint (Plane: no motion along p; Line: no motion along p and q).
    pub constraint: Constraint,
}

enum Engine {
    Implicit(Box<ImplicitWorkspace>),
    Verlet(Box<Verlet>),
}

/// A running simulation: state, integrator, constraints and per-frame statistics.
pub struct Simulation {
    system: ClothSystem,
    integrator: Integrator,
    engine: Engine,
    fps: f64,
    frame: usize,
    time: f64,
    x: Vec<Vec3>,
    v: Vec<Vec3>,
    pins: Vec<PinGroup>,
    directional: Vec<DirectionalConstraint>,
    edges: EdgeSet,
    h: f64,
    h_prev: f64,
    successes: usize,
    // Per-step scratch.
    constraints: Vec<Constraint>,
    z: Vec<Vec3>,
    y: Vec<Vec3>,
    pending_shift: Vec<Vec3>,
    inv_mass: Vec<f64>,
    stretch0: Vec<[f64; 2]>,
    stretch1: Vec<[f64; 2]>,
    x1: Vec<Vec3>,
    targets: Vec<Vec3>,
    constraint_forces: Vec<Vec3>,
    extra_forces: Vec<Vec3>,
    penalty_forces: Vec<Vec3>,
    extra_entries: Vec<(usize, usize, Matrix3<f64>, Matrix3<f64>)>,
    pinned: Vec<bool>,
    contacts: Option<ContactManager>,
    self_collision: Option<SelfCollision>,
    self_intersections: bool,
}

impl Simulation {
    /// A simulation of `system` at rest at its initial positions, writing frames at `fps`.
    pub fn new(
        system: ClothSystem,
        integrator: Integrator,
        fps: f64,
        pins: Vec<PinGroup>,
    ) -> Result<Self, SimError> {
        if !(fps.is_finite() && fps > 0.0) {
            return Err(SimError::Invalid {
                key: "run.fps".into(),
                message: format!("must be a positive number, got {fps}"),
            });
        }
        let n = system.num_vertices();
        for (g, pin) in pins.iter().enumerate() {
            if let Some(&bad) = pin.vertices.iter().find(|&&i| i >= n) {
                return Err(SimError::Invalid {
                    key: format!("pin[{g}].vertices"),
                    message: format!("vertex {bad} is out of range (the cloth has {n} vertices)"),
                });
            }
        }
        let x = system.x0.clone();
        let v = vec![Vec3::zeros(); n];
        let (engine, h) = match &integrator {
            Integrator::Implicit(s) => {
                check_range("solver.h_max", s.h_max, 0.0, f64::INFINITY)?;
                check_range("solver.h_min", s.h_min, 0.0, s.h_max)?;
                check_range(
                    "solver.stretch_threshold",
                    s.stretch_threshold,
                    0.0,
                    f64::INFINITY,
                )?;
                (
                    Engine::Implicit(Box::new(ImplicitWorkspace::new(&system)?)),
                    s.h_max,
                )
            }
            Integrator::Verlet(s) => {
                check_range("solver.h_max", s.h, 0.0, f64::INFINITY)?;
                (
                    Engine::Verlet(Box::new(Verlet::new(&system.mesh, s, &x, &v, s.h))),
                    s.h,
                )
            }
        };
        let edges = EdgeSet::from_mesh(&system.mesh);
        let mut sim = Self {
            engine,
            integrator,
            fps,
            frame: 0,
            time: 0.0,
            pins,
            directional: Vec::new(),
            edges,
            h,
            h_prev: h,
            successes: 0,
            constraints: vec![Constraint::Free; n],
            z: vec![Vec3::zeros(); n],
            y: vec![Vec3::zeros(); n],
            pending_shift: vec![Vec3::zeros(); n],
            inv_mass: vec![0.0; n],
            stretch0: Vec::new(),
            stretch1: Vec::new(),
            x1: vec![Vec3::zeros(); n],
            targets: Vec::new(),
            constraint_forces: vec![Vec3::zeros(); n],
            extra_forces: vec![Vec3::zeros(); n],
            penalty_forces: vec![Vec3::zeros(); n],
            extra_entries: Vec::new(),
            pinned: vec![false; n],
            contacts: None,
            self_collision: None,
            self_intersections: false,
            x,
            v,
            system,
        };
        sim.update_inv_mass();
        // Pinned vertices start on their targets at t = 0.
        sim.apply_pin_positions(0.0);
        Ok(sim)
    }

    fn update_inv_mass(&mut self) {
        for (w, m) in self.inv_mass.iter_mut().zip(&self.system.masses) {
            *w = 1.0 / m;
        }
        self.pinned.fill(false);
        for pin in &self.pins {
            for &i in &pin.vertices {
                self.inv_mass[i] = 0.0;
                self.pinned[i] = true;
            }
        }
    }

    /// Enables cloth-solid contact with the given colliders (implicit integrator only; the
    /// Verlet integrator ignores colliders).
    pub fn set_colliders(
        &mut self,
        colliders: cloth_collide::ColliderSet,
        settings: crate::ContactSettings,
    ) {
        let friction = colliders.colliders().iter().map(|c| c.friction).collect();
        let thickness = colliders.colliders().iter().map(|c| c.thickness).collect();
        self.contacts = Some(ContactManager::new(
            colliders,
            friction,
            thickness,
            settings,
            self.system.mesh.triangles().to_vec(),
            self.x.len(),
        ));
    }

    /// Enables cloth-cloth contact by penalty springs (Baraff & Witkin 1998, Section 6;
    /// implicit integrator only). When `count_intersections` is set, every frame's statistics
    /// count intersecting pairs of non-adjacent triangles.
    pub fn set_self_collision(&mut self, sc: SelfCollision, count_intersections: bool) {
        self.self_collision = Some(sc);
        self.self_intersections = count_intersections;
    }

    /// The colliders, if contact is enabled.
    pub fn colliders(&self) -> Option<&cloth_collide::ColliderSet> {
        self.contacts.as_ref().map(|c| &c.colliders)
    }

    fn apply_pin_positions(&mut self, t: f64) {
        for pin in &self.pins {
            pin.targets(t, &mut self.targets);
            for (&i, p) in pin.vertices.iter().zip(&self.targets) {
                self.x[i] = *p;
            }
        }
    }

    /// Adds a directional constraint (ndof 2 or 1) that holds the vertex's velocity along the
    /// constrained directions at zero.
    pub fn add_directional_constraint(&mut self, c: DirectionalConstraint) -> Result<(), SimError> {
        if c.vertex >= self.x.len() {
            return Err(SimError::Invalid {
                key: "constraint.vertex".into(),
                message: format!("vertex {} is out of range", c.vertex),
            });
        }
        self.directional.push(c);
        Ok(())
    }

    /// Schedules a position alteration y (Knowl 6) of vertex `i` by `shift` (m) in the next
    /// implicit step: the vertex moves by `h (v0 + dv) + shift`, and its neighbours feel the
    /// shift through `df/dx y` within the same step.
    pub fn shift_vertex(&mut self, i: usize, shift: Vec3) {
        if i < self.pending_shift.len() {
            self.pending_shift[i] += shift;
        }
    }

    /// The simulated cloth.
    pub fn system(&self) -> &ClothSystem {
        &self.system
    }
    /// The integrator and its settings.
    pub fn integrator(&self) -> &Integrator {
        &self.integrator
    }
    /// Current positions (m).
    pub fn positions(&self) -> &[Vec3] {
        &self.x
    }
    /// Current velocities (m/s).
    pub fn velocities(&self) -> &[Vec3] {
        &self.v
    }
    /// Current simulated time (s).
    pub fn time(&self) -> f64 {
        self.time
    }
    /// Number of frames computed so far.
    pub fn frame(&self) -> usize {
        self.frame
    }
    /// Frames per second of the output.
    pub fn fps(&self) -> f64 {
        self.fps
    }
    /// Constraint forces (N) of the last accepted implicit step, per vertex (Knowl 8):
    /// `e / h` with `e = A dv - b`. Zero for free vertices up to the solver tolerance.
    pub fn constraint_forces(&self) -> &[Vec3] {
        &self.constraint_forces
    }
    /// The pin groups.
    pub fn pins(&self) -> &[PinGroup] {
        &self.pins
    }

    /// Advances to the next frame time, `(frame + 1) / fps`, and returns its statistics.
    pub fn step_frame(&mut self) -> Result<FrameStats, SimError> {
        let mut timings = Timings::default();
        let mut stats = FrameStats {
            frame: self.frame + 1,
            h_min: f64::INFINITY,
            ..Default::default()
        };
        let t_end = (self.frame + 1) as f64 / self.fps;
        match self.integrator {
            Integrator::Implicit(s) => self.frame_implicit(&s, t_end, &mut stats, &mut timings)?,
            Integrator::Verlet(s) => self.frame_verlet(&s, t_end, &mut stats, &mut timings)?,
        }
        let mut sw = Stopwatch::start();
        self.frame += 1;
        self.time = t_end;
        if let Some(i) = self.x.iter().zip(&self.v).position(|(x, v)| {
            !(x.iter().all(|c| c.is_finite()) && v.iter().all(|c| c.is_finite()))
        }) {
            return Err(SimError::NonFinite {
                frame: self.frame,
                vertex: i,
            });
        }
        // Stretch as the paper measures it: |w_u| and |w_v| of every triangle (Knowl 4).
        self.system
            .model
            .triangle_stretch(&self.x, &mut self.stretch1);
        let (mut s, mut c) = (0.0f64, 0.0f64);
        for w in &self.stretch1 {
            for &l in w {
                s = s.max(l - 1.0);
                c = c.max(1.0 - l);
            }
        }
        stats.max_stretch = s;
        stats.max_compression = c;
        stats.kinetic_energy = self.system.kinetic_energy(&self.v);
        stats.contacts = self.contacts.as_ref().map_or(0, |c| c.num_contacts());
        timings.other += sw.lap();
        if self.self_intersections {
            stats.self_intersections =
                cloth_collide::count_self_intersections(&self.system.mesh, &self.x);
            timings.cloth_cloth += sw.lap();
        }
        stats.time = self.time;
        if stats.steps == 0 {
            stats.h_min = 0.0;
        }
        timings.other += sw.lap();
        stats.timings = timings;
        Ok(stats)
    }

    fn frame_verlet(
        &mut self,
        s: &VerletSettings,
        t_end: f64,
        stats: &mut FrameStats,
        timings: &mut Timings,
    ) -> Result<(), SimError> {
        let mut sw = Stopwatch::start();
        let Engine::Verlet(engine) = &mut self.engine else {
            unreachable!("verlet settings always come with a verlet engine")
        };
        let dt = t_end - self.time;
        let n = (dt / s.h * (1.0 - 1e-9)).ceil().max(1.0) as usize;
        let h = dt / n as f64;
        let mut pinned = Vec::new();
        for k in 0..n {
            let t1 = self.time + (k + 1) as f64 * h;
            pinned.clear();
            for pin in &self.pins {
                pin.targets(t1, &mut self.targets);
                pinned.extend(
                    pin.vertices
                        .iter()
                        .copied()
                        .zip(self.targets.iter().copied()),
                );
            }
            engine.step(
                &mut self.x,
                &pinned,
                &self.system.masses,
                &self.inv_mass,
                &self.system.external.gravity,
                s,
                h,
                self.h_prev,
            );
            self.h_prev = h;
        }
        for ((v, x), xp) in self.v.iter_mut().zip(&self.x).zip(&engine.x_prev) {
            *v = (x - xp) / h;
        }
        stats.steps = n;
        stats.h_min = h;
        stats.h_max = h;
        timings.eval += sw.lap();
        Ok(())
    }

    fn frame_implicit(
        &mut self,
        s: &ImplicitSettings,
        t_end: f64,
        stats: &mut FrameStats,
        timings: &mut Timings,
    ) -> Result<(), SimError> {
        let mut sw = Stopwatch::start();
        let mut t = self.time;
        self.system
            .model
            .triangle_stretch(&self.x, &mut self.stretch0);
        timings.other += sw.lap();
        // Forces and Jacobians at the current state; valid until a step is accepted.
        let mut evaluated = false;
        // Attempts of the current step redone because a vertex moved into a solid.
        let mut redo = 0;
        while t_end - t > 1e-12 * t_end.max(1.0) {
            let remaining = t_end - t;
            // Land exactly on the frame time without a sliver step at the end: what is left
            // of the frame is taken whole when it is within 0.1% of h, and split into two
            // equal steps when it is less than 2 h.
            let h = if remaining <= self.h * (1.0 + 1e-3) {
                remaining
            } else if remaining < 2.0 * self.h {
                0.5 * remaining
            } else {
                self.h
            };
            let Engine::Implicit(ws) = &mut self.engine else {
                unreachable!("implicit settings always come with an implicit workspace")
            };
            if !evaluated {
                ws.evaluate(&self.system, &self.x, &self.v);
                evaluated = true;
                timings.eval += sw.lap();
                self.extra_entries.clear();
                if let Some(sc) = &mut self.self_collision {
                    self.penalty_forces.fill(Vec3::zeros());
                    sc.detect(&self.x);
                    sc.penalty(
                        &self.x,
                        &self.v,
                        &mut self.penalty_forces,
                        &mut self.extra_entries,
                    );
                    timings.cloth_cloth += sw.lap();
                }
            }
            // Constraints: directional first, then contacts, then pins (which win).
            self.constraints.fill(Constraint::Free);
            self.z.fill(Vec3::zeros());
            self.y.copy_from_slice(&self.pending_shift);
            // Penalty forces of this state, plus friction added by the contacts below.
            self.extra_forces.copy_from_slice(&self.penalty_forces);
            for c in &self.directional {
                let i = c.vertex;
                self.constraints[i] = c.constraint;
                // Constrained components of v0 + dv vanish: z = -(I - S) v0.
                self.z[i] = -(self.v[i] - c.constraint.filter(&self.v[i]));
            }
            timings.other += sw.lap();
            if let Some(cm) = &mut self.contacts {
                cm.prepare(
                    &self.x,
                    &self.v,
                    &self.system.masses,
                    t,
                    h,
                    &mut self.constraints,
                    &mut self.z,
                    &mut self.y,
                    &mut self.extra_forces,
                );
                timings.cloth_solid += sw.lap();
            }
            for pin in &self.pins {
                pin.targets(t + h, &mut self.targets);
                for (&i, p) in pin.vertices.iter().zip(&self.targets) {
                    self.constraints[i] = Constraint::Fixed;
                    self.y[i] = Vec3::zeros();
                    // x0 + h (v0 + dv) = target exactly.
                    self.z[i] = (p - self.x[i]) / h - self.v[i];
                }
            }
            timings.other += sw.lap();
            let Engine::Implicit(ws) = &mut self.engine else {
                unreachable!("implicit settings always come with an implicit workspace")
            };
            ws.assemble(
                &self.v,
                &self.y,
                h,
                &self.system.masses,
                &self.extra_forces,
                &self.extra_entries,
            )?;
            timings.eval += sw.lap();
            let solved = ws.solve(&s.solver, &self.constraints, &self.z);
            timings.cg += sw.lap();
            let reject_reason = match solved {
                Ok(out) => {
                    stats.cg_iterations += out.info.iterations;
                    if !out.info.converged {
                        stats.cg_not_converged += 1;
                    }
                    // Candidate state without the position alteration: the check judges the
                    // integration, not the deliberate geometric correction y (Knowl 6), which
                    // would otherwise fail a step at any h.
                    for i in 0..self.x.len() {
                        self.x1[i] = self.x[i] + (self.v[i] + ws.dv[i]) * h;
                    }
                    self.system
                        .model
                        .triangle_stretch(&self.x1, &mut self.stretch1);
                    for i in 0..self.x.len() {
                        self.x1[i] += self.y[i];
                    }
                    if let Some(cm) = self.contacts.as_mut().filter(|_| redo < 4) {
                        let t0 = Stopwatch::start().0;
                        let marked = cm.mark_new_penetrations(&self.x1, &self.pinned);
                        timings.cloth_solid += t0.elapsed().as_secs_f64();
                        if marked > 0 {
                            redo += 1;
                            stats.rejected_steps += 1;
                            continue;
                        }
                    }
                    let worst = self
                        .stretch0
                        .iter()
                        .zip(&self.stretch1)
                        .map(|(a, b)| (a[0] - b[0]).abs().max((a[1] - b[1]).abs()))
                        .fold(
                            0.0f64,
                            |m, d| if d.is_nan() { f64::INFINITY } else { m.max(d) },
                        );
                    if worst > s.stretch_threshold {
                        Some(format!(
                            "stretch changed by {worst:.3} in one step (threshold {})",
                            s.stretch_threshold
                        ))
                    } else {
                        None
                    }
                }
                Err(SolverError::NotPositiveDefinite { iteration, .. }) => Some(format!(
                    "system matrix not positive definite at CG iteration {iteration}"
                )),
                Err(SolverError::Factorization { detail }) => {
                    Some(format!("direct factorisation failed: {detail}"))
                }
                Err(other) => return Err(other.into()),
            };
            if let Some(reason) = reject_reason {
                stats.rejected_steps += 1;
                self.successes = 0;
                self.h = h * 0.5;
                timings.other += sw.lap();
                if self.h < s.h_min {
                    return Err(SimError::StepTooSmall {
                        frame: self.frame + 1,
                        time: t,
                        h_min: s.h_min,
                        reason,
                    });
                }
                continue;
            }
            // Accept.
            for i in 0..self.x.len() {
                self.v[i] += ws.dv[i];
                self.constraint_forces[i] = ws.e[i] / h;
            }
            std::mem::swap(&mut self.x, &mut self.x1);
            self.pending_shift.fill(Vec3::zeros());
            evaluated = false;
            redo = 0;
            if let Some(lim) = &s.strain_limit {
                self.x1.copy_from_slice(&self.x);
                self.edges.project(&mut self.x, &self.inv_mass, lim);
                for i in 0..self.x.len() {
                    self.v[i] += (self.x[i] - self.x1[i]) / h;
                }
                self.system
                    .model
                    .triangle_stretch(&self.x, &mut self.stretch1);
            }
            if s.strain_limit.is_none() && self.y.iter().any(|y| *y != Vec3::zeros()) {
                self.system
                    .model
                    .triangle_stretch(&self.x, &mut self.stretch1);
            }
            std::mem::swap(&mut self.stretch0, &mut self.stretch1);
            if let Some(cm) = &mut self.contacts {
                cm.after_step(
                    &self.constraint_forces,
                    &self.v,
                    &self.system.masses,
                    h,
                    &self.pinned,
                );
            }
            t += h;
            stats.steps += 1;
            stats.h_min = stats.h_min.min(h);
            stats.h_max = stats.h_max.max(h);
            self.successes += 1;
            if self.successes >= s.grow_after.max(1) && self.h < s.h_max {
                self.h = (self.h * 2.0).min(s.h_max);
                self.successes = 0;
            }
            timings.other += sw.lap();
        }
        Ok(())
    }
}

fn check_range(key: &str, value: f64, lo: f64, hi: f64) -> Result<(), SimError> {
    if value.is_finite() && value > lo && value <= hi {
        Ok(())
    } else {
        Err(SimError::Invalid {
            key: key.into(),
            message: format!("must be in ({lo}, {hi}], got {value}"),
        })
    }
}
