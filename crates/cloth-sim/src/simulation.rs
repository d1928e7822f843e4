//! The frame driver: advances a [`State`] frame by frame with either integrator, adapting the
//! implicit step with the [`StepController`], and measures each frame.

use crate::checkpoint::Checkpoint;
use crate::coarse::CoarseStart;
use crate::error::SimError;
use crate::explicit::{Verlet, VerletSettings};
use crate::implicit::{Implicit, ImplicitMemory, ImplicitSettings, Step, StepController, StepInfo};
use crate::pins::PinGroup;
use crate::projection::Cleared;
use crate::sanity::Sanity;
use crate::state::State;
use crate::stats::{FrameStats, Stopwatch};
use crate::strain::StrainLimit;
use crate::world::{DirectionalConstraint, World};
use cloth_collide::{Keyframe, Motion, Untangled};
use cloth_mesh::Vec3;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Steps of the relaxation after a coarse copy's state is carried to a garment.
const RELAX_STEPS: usize = 8;

/// Length (s) of each relaxation step (shorter when the preroll has less than twice
/// `RELAX_STEPS` of them left).
const RELAX_STEP: f64 = 0.002;

/// Sweeps per round of the projection that moves the initial positions out of solids.
const CLEAR_SWEEPS: usize = 200;

/// Rounds of [`cloth_collide::untangle`] on a state carried from a coarse copy: each finds
/// the crossings left and moves the vertices poking through; a crossing left after this many
/// is not undone by more.
const UNTANGLE_ROUNDS: usize = 16;

/// Which integrator advances the cloth, with its settings.
#[derive(Clone, Debug, PartialEq)]
pub enum Integrator {
    /// Linearized backward Euler with constraints and adaptive steps (Baraff & Witkin 1998).
    Implicit(ImplicitSettings),
    /// Position Verlet on springs with the maximum-stretch pass (the second seed).
    Verlet(VerletSettings),
}

/// The integrator in use, each carrying its settings and scratch.
enum Engine {
    Implicit {
        stepper: Box<Implicit>,
        controller: StepController,
    },
    Verlet(Box<Verlet>),
}

/// A running simulation: the world, the state, the integrator and the frame clock.
pub struct Simulation {
    world: World,
    engine: Engine,
    state: State,
    fps: f64,
    frame: usize,
    stretch: Vec<[f64; 2]>,
    sanity: Sanity,
    /// The per-frame crossing count's hierarchy, refitted from frame to frame.
    crossings: cloth_collide::IntersectionCounter,
    /// A coarse copy that sews before this simulation's preroll continues (see
    /// [`crate::scene::MeshSpec::Garmentcode`]'s `sew_edge_length`); taken when the preroll runs.
    coarse: Option<(Box<Simulation>, CoarseStart)>,
    /// What untangling the initial positions did ([`Simulation::with_untangled_start`]).
    start_untangled: Untangled,
    /// Checked between steps ([`Simulation::set_stop_flag`]).
    stop: Option<Arc<AtomicBool>>,
    /// What moving the initial positions out of solids did ([`Simulation::with_clear_start`]).
    start_cleared: Cleared,
}

impl Simulation {
    /// A simulation of `world` at rest at the cloth's initial positions (pinned vertices on
    /// their targets at t = 0), writing frames at `fps` (1/s).
    pub fn new(world: World, integrator: Integrator, fps: f64) -> Result<Self, SimError> {
        if !(fps.is_finite() && fps > 0.0) {
            return Err(SimError::Invalid {
                key: "run.fps".into(),
                message: format!("must be a positive number, got {fps}"),
            });
        }
        let engine = match integrator {
            Integrator::Implicit(s) => Engine::Implicit {
                controller: StepController::with_control(s.h_max, s.step_control),
                stepper: Box::new(Implicit::new(&world, s)?),
            },
            Integrator::Verlet(s) => Engine::Verlet(Box::new(Verlet::new(&world, s)?)),
        };
        let mut state = State::at_rest(world.cloth.x0.clone());
        let mut targets = Vec::new();
        for pin in world.pins() {
            pin.targets(0.0, &mut targets);
            for (&i, p) in pin.vertices.iter().zip(&targets) {
                state.x[i] = *p;
            }
        }
        Ok(Self {
            sanity: Sanity::new(&world, &state),
            world,
            engine,
            state,
            fps,
            frame: 0,
            stretch: Vec::new(),
            crossings: Default::default(),
            coarse: None,
            start_untangled: Untangled::default(),
            stop: None,
            start_cleared: Cleared::default(),
        })
    }

    /// Starts the unpinned vertices among `vertices` (e.g. one cloth's [`crate::system::ClothPart`]
    /// range) at velocity `v` (m/s) instead of at rest (a thrown cloth);
    /// only before the first frame, since the sanity references are taken again from the
    /// new initial state.
    pub fn with_initial_velocity(mut self, vertices: std::ops::Range<usize>, v: Vec3) -> Self {
        let pinned = self.world.pinned();
        for i in vertices {
            if let (Some(vi), Some(&p)) = (self.state.v.get_mut(i), pinned.get(i)) {
                *vi = if p { Vec3::zeros() } else { v };
            }
        }
        self.sanity = Sanity::new(&self.world, &self.state);
        self
    }

    /// The world: cloth, pins, colliders.
    pub fn world(&self) -> &World {
        &self.world
    }
    /// The simulated cloth.
    pub fn system(&self) -> &crate::system::ClothSystem {
        &self.world.cloth
    }
    /// The integrator and its settings.
    pub fn integrator(&self) -> Integrator {
        match &self.engine {
            Engine::Implicit { stepper, .. } => Integrator::Implicit(stepper.settings.clone()),
            Engine::Verlet(v) => Integrator::Verlet(v.settings),
        }
    }
    /// The current state.
    pub fn state(&self) -> &State {
        &self.state
    }
    /// The current state, to be changed by the caller (e.g. to restart from a checkpoint).
    pub fn state_mut(&mut self) -> &mut State {
        &mut self.state
    }
    /// Current positions (m).
    pub fn positions(&self) -> &[Vec3] {
        &self.state.x
    }
    /// Current velocities (m/s).
    pub fn velocities(&self) -> &[Vec3] {
        &self.state.v
    }
    /// Current simulated time (s).
    pub fn time(&self) -> f64 {
        self.state.t
    }
    /// Number of frames computed so far.
    pub fn frame(&self) -> usize {
        self.frame
    }
    /// Frames per second of the output.
    pub fn fps(&self) -> f64 {
        self.fps
    }
    /// The pin groups.
    pub fn pins(&self) -> &[PinGroup] {
        self.world.pins()
    }
    /// The colliders, if contact is enabled.
    pub fn colliders(&self) -> Option<&cloth_collide::ColliderSet> {
        self.world.colliders()
    }
    /// Constraint forces (N) of the last accepted implicit step, per vertex (paper §5.4): `e / h`
    /// with `e = A dv - b`. Empty for the explicit integrator.
    pub fn constraint_forces(&self) -> &[Vec3] {
        match &self.engine {
            Engine::Implicit { stepper, .. } => stepper.constraint_forces(),
            Engine::Verlet(_) => &[],
        }
    }

    /// Adds a directional constraint (ndof 2 or 1) that holds the vertex's velocity along the
    /// constrained directions at zero.
    pub fn add_directional_constraint(&mut self, c: DirectionalConstraint) -> Result<(), SimError> {
        self.world.add_directional_constraint(c)
    }

    /// Schedules a position alteration y (paper §6.2) of vertex `i` by `shift` (m) in the next
    /// implicit step (ignored by the explicit integrator); see [`Implicit::shift_vertex`].
    /// Such shifts are work done on the cloth, so the kinetic-energy sanity check is off from
    /// then on.
    pub fn shift_vertex(&mut self, i: usize, shift: Vec3) {
        if let Engine::Implicit { stepper, .. } = &mut self.engine {
            stepper.shift_vertex(i, shift);
            self.sanity.external_work();
        }
    }

    /// Drives collider `i` (its index in the scene) from its pose now to the pose with its
    /// origin at `position` (m) and orientation `rotation` (degrees about world x, then y,
    /// then z, as a scene's `rotation`), reached at the end of the next frame and held after
    /// it. The solid moves at constant speed over that frame (rotation interpolated in those
    /// angles), so the cloth meets a moving surface with its velocity, not one that jumps.
    /// Replaces the collider's rigid motion (a deforming body keeps deforming). Rigid motions
    /// hold their t = 0 pose during a preroll, so a pose set before the preroll has run is
    /// reached at the end of frame 1. Driven colliders do work on the cloth, so the
    /// kinetic-energy sanity check is off while one moves.
    pub fn set_collider_pose(
        &mut self,
        i: usize,
        position: Vec3,
        rotation: Vec3,
    ) -> Result<(), SimError> {
        let bad = |message: String| SimError::Invalid {
            key: format!("collider[{i}]"),
            message,
        };
        if !(position.iter().chain(rotation.iter())).all(|x| x.is_finite()) {
            return Err(bad("the pose must be finite".into()));
        }
        let t1 = (self.frame + 1) as f64 / self.fps;
        let t0 = self.state.t.max(0.0).min(t1 * (1.0 - 1e-9));
        let Some(c) = self.world.colliders().and_then(|s| s.colliders().get(i)) else {
            let n = self.world.colliders().map_or(0, |s| s.len());
            return Err(bad(format!("no such collider (the simulation has {n})")));
        };
        let r0_inv = cloth_collide::euler_degrees(&c.rotation).inverse();
        let now = c.pose(t0);
        let degrees = |q: nalgebra::UnitQuaternion<f64>| {
            let (x, y, z) = q.euler_angles();
            Vec3::new(x, y, z).map(f64::to_degrees)
        };
        let r_now = degrees(now.rotation * r0_inv);
        let mut r_next = degrees(cloth_collide::euler_degrees(&rotation) * r0_inv);
        // The same angles within a turn of the current ones: no spin through 360 degrees.
        for k in 0..3 {
            r_next[k] += 360.0 * ((r_now[k] - r_next[k]) / 360.0).round();
        }
        let keys = vec![
            Keyframe {
                t: t0,
                translation: now.translation.vector - c.position,
                rotation: r_now,
            },
            Keyframe {
                t: t1,
                translation: position - c.position,
                rotation: r_next,
            },
        ];
        if let Some(set) = self.world.colliders.as_mut() {
            set.set_rigid_motion(i, Motion::Keyframes(keys))?;
        }
        self.sanity = Sanity::new(&self.world, &self.state);
        Ok(())
    }

    /// Drives pin group `g`'s vertices (in the order of [`PinGroup::vertices`]) in straight
    /// lines from their targets now to `targets` (m), reached at the end of the next frame and
    /// held after it. Replaces the group's motion: from then on the group is a set of moving
    /// points, not a rigid clamp (the bending of triangles it holds whole is no longer
    /// clamped to it). Driven pins do work on the cloth, so the kinetic-energy sanity check is
    /// off while they move.
    pub fn set_pin_targets(&mut self, g: usize, targets: &[Vec3]) -> Result<(), SimError> {
        let bad = |message: String| SimError::Invalid {
            key: format!("pin[{g}]"),
            message,
        };
        let n = self.world.pins.len();
        let Some(pin) = self.world.pins.get_mut(g) else {
            return Err(bad(format!("no such pin group (the simulation has {n})")));
        };
        if targets.len() != pin.vertices.len() {
            return Err(bad(format!(
                "{} targets given for a group of {} vertices",
                targets.len(),
                pin.vertices.len()
            )));
        }
        if let Some(k) = targets
            .iter()
            .position(|p| !p.iter().all(|x| x.is_finite()))
        {
            return Err(bad(format!("target {k} is not finite")));
        }
        let t0 = self.state.t;
        let t1 = (self.frame + 1) as f64 / self.fps;
        let mut now = Vec::new();
        pin.targets(t0, &mut now);
        pin.motion = Motion::MeshSequence {
            frames: vec![now, targets.to_vec()],
            fps: 1.0 / (t1 - t0),
            start: t0,
        };
        self.world.refresh();
        self.sanity = Sanity::new(&self.world, &self.state);
        Ok(())
    }

    /// A checkpoint of the run at the end of the current frame, made from `scene` (the
    /// resolved scene's TOML text, kept in the checkpoint so a resume needs nothing else).
    /// Caches that depend on history are dropped here, in this run as in a run resumed from
    /// the checkpoint, so both compute the same bits from here on.
    pub fn checkpoint(&mut self, scene: String) -> Checkpoint {
        let implicit = match &mut self.engine {
            Engine::Implicit {
                stepper,
                controller,
            } => {
                stepper.drop_history();
                Some(ImplicitMemory {
                    controller: Some(*controller),
                    ..stepper.memory()
                })
            }
            Engine::Verlet(_) => None,
        };
        let to_array = |p: &Vec3| [p.x, p.y, p.z];
        Checkpoint {
            version: Checkpoint::VERSION,
            scene,
            frame: self.frame,
            t: self.state.t,
            x: self.state.x.iter().map(to_array).collect(),
            v: self.state.v.iter().map(to_array).collect(),
            implicit,
        }
    }

    /// Continues from a checkpoint of the same scene: state, frame counter, controller, contact
    /// modes and matrix pattern.
    pub fn restore(&mut self, c: &Checkpoint) -> Result<(), SimError> {
        let state = c.state();
        let bad = |message: String| SimError::Invalid {
            key: "checkpoint".into(),
            message,
        };
        if state.len() != self.state.len() || state.v.len() != state.x.len() {
            return Err(bad(format!(
                "holds {} vertices, the scene's cloth has {}",
                state.len(),
                self.state.len()
            )));
        }
        match (&mut self.engine, &c.implicit) {
            (
                Engine::Implicit {
                    stepper,
                    controller,
                },
                Some(m),
            ) => {
                stepper.restore_memory(m)?;
                // The step and its run of successes continue; the rule is the scene's.
                if let Some(saved) = m.controller {
                    controller.h = saved.h;
                    controller.successes = saved.successes;
                }
            }
            (Engine::Verlet(_), None) => {}
            _ => return Err(bad("was written by the other integrator".into())),
        }
        self.state = state;
        self.frame = c.frame;
        self.coarse = None;
        Ok(())
    }

    /// Lets `flag` stop the simulation promptly: once it is set, the step loops of the
    /// preroll (a coarse sewing copy's included) and of the frames end after the step being
    /// computed with [`SimError::Stopped`], leaving the state at that step's end and the frame
    /// uncounted. A signal handler sets it; reading it changes nothing else in the run.
    pub fn set_stop_flag(&mut self, flag: Arc<AtomicBool>) {
        self.stop = Some(flag);
    }

    /// [`SimError::Stopped`] when the stop flag is set.
    fn check_stop(stop: Option<&AtomicBool>) -> Result<(), SimError> {
        match stop {
            Some(s) if s.load(Ordering::Relaxed) => Err(SimError::Stopped),
            _ => Ok(()),
        }
    }

    /// Starts the run `seconds` (finite, >= 0) before t = 0: a preroll in which the cloth
    /// settles while deforming colliders move into their first pose (glTF bodies blend from
    /// their bind pose) and garments sew (`sew_time` counts from the new start). Pinned
    /// vertices are placed on their targets at the new start.
    /// [`Simulation::preroll`] runs it; frame 0 is its end.
    pub fn with_preroll(mut self, seconds: f64) -> Result<Self, SimError> {
        if !(seconds.is_finite() && seconds >= 0.0) {
            return Err(SimError::Invalid {
                key: "run.preroll".into(),
                message: format!("must be a finite number >= 0, got {seconds}"),
            });
        }
        self.state.t = -seconds;
        self.world.sewing.set_start(-seconds);
        let mut targets = Vec::new();
        for pin in self.world.pins() {
            pin.targets(self.state.t, &mut targets);
            for (&i, p) in pin.vertices.iter().zip(&targets) {
                self.state.x[i] = *p;
            }
        }
        self.sanity = Sanity::new(&self.world, &self.state);
        Ok(self)
    }

    /// Runs the preroll (see [`Simulation::with_preroll`]) up to t = 0 and returns its
    /// statistics (as frame 0); does nothing when there is none left.
    /// [`Simulation::step_frame`] runs it first when it has not been run.
    pub fn preroll(&mut self) -> Result<FrameStats, SimError> {
        self.preroll_with(&mut |_| {})
    }

    /// As [`Simulation::preroll`], calling `progress(t)` with the simulated time (s, below 0)
    /// after every accepted step: a garment's preroll can take minutes before frame 0. The
    /// callback sees the time only; the run is the same with or without it.
    pub fn preroll_with(&mut self, progress: &mut dyn FnMut(f64)) -> Result<FrameStats, SimError> {
        if self.frame > 0 || self.state.t >= 0.0 {
            return Ok(FrameStats::default());
        }
        let sewn = match self.coarse.take() {
            Some((sim, c)) => Some(self.sew_coarse(*sim, &c, progress)?),
            None => None,
        };
        let mut stats = self.advance(0.0, 0, &mut |s: &State| progress(s.t))?;
        if let Some(s) = sewn {
            stats.absorb(&s);
        }
        Ok(stats)
    }

    /// Lets a coarse copy sew first: the preroll runs `sim` and continues from the state `c`
    /// carries over.
    pub(crate) fn with_coarse_start(mut self, sim: Simulation, c: CoarseStart) -> Self {
        self.coarse = Some((Box::new(sim), c));
        self
    }

    /// Quasi-static relaxation of a state carried from a coarse copy: fine triangles that
    /// straddle a fold of the coarse mesh start compressed (by tens of percent), and springing
    /// back they change their stretch faster than any step passes
    /// the stretch-change check. [`RELAX_STEPS`] implicit steps of [`RELAX_STEP`] run with
    /// that check off, each followed by zeroing every velocity: with `h^2 k >> m` each is close
    /// to a Newton step on the elastic energy, so the compressed triangles open out while
    /// contact and the continuous self-collision check still hold. A rejected attempt halves
    /// the step (down to `h_min`, then the relaxation ends).
    fn relax_carried(&mut self) -> Result<(), SimError> {
        let Engine::Implicit { stepper, .. } = &mut self.engine else {
            return Ok(());
        };
        let saved = stepper.settings.stretch_threshold;
        stepper.settings.stretch_threshold = f64::INFINITY;
        let mut h = RELAX_STEP.min(-self.state.t / (2 * RELAX_STEPS) as f64);
        let mut done = 0;
        let mut result = Ok(());
        while done < RELAX_STEPS && h >= stepper.settings.h_min {
            if let Err(e) = Self::check_stop(self.stop.as_deref()) {
                result = Err(e);
                break;
            }
            match stepper.step(&mut self.world, &mut self.state, h) {
                Ok(Step::Accepted(_)) => {
                    done += 1;
                    self.state.v.fill(Vec3::zeros());
                }
                Ok(Step::Rejected(..)) => h *= 0.5,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        stepper.settings.stretch_threshold = saved;
        result
    }

    /// Undoes local crossings of the cloth with itself in the current positions (see
    /// [`cloth_collide::untangle`]): pinned vertices stay, moved ones land a tenth of the
    /// thickness beyond the surface they poked through, and what [`UNTANGLE_ROUNDS`] rounds
    /// leave stays (and is counted). Does nothing without self-collision.
    fn untangle(&mut self) -> Untangled {
        let Some(sc) = self.world.self_collision.as_ref() else {
            return Untangled::default();
        };
        let margin = 0.1 * sc.thickness();
        let welded: Vec<[usize; 2]> = self.world.sewing.pairs().collect();
        cloth_collide::untangle(
            self.world.cloth.mesh.triangles(),
            &mut self.state.x,
            &welded,
            self.world.pinned(),
            margin,
            UNTANGLE_ROUNDS,
        )
    }

    /// Undoes local crossings of the cloth with itself in its initial positions, which the
    /// continuous collision check would otherwise keep for good (it stops the motion that
    /// would undo them): a mesh exported with a vertex or a fold poking through another layer.
    /// Only before the first frame; [`Simulation::start_untangled`] reports what it did.
    pub fn with_untangled_start(mut self) -> Self {
        if self.frame == 0 && self.coarse.is_none() {
            self.start_untangled = self.untangle();
            self.sanity = Sanity::new(&self.world, &self.state);
        }
        self
    }

    /// Moves the initial positions out of the solids when some vertex starts deeper inside one
    /// than its contact layer is thick, as positions only (no velocity changes, so no energy
    /// is added; see [`crate::projection::clear_solids`]): a garment placed around a body by
    /// another tool, partly inside it, starts clean. The edges are held within the
    /// integrator's strain limit (90-110% when it has none) and the stitches no longer than
    /// they are. With the implicit integrator, a cloth that then lies deeper than 0.5 mm in a
    /// contact layer is relaxed out of it (a garment being sewn only when it had to be moved
    /// out of a solid)
    /// ([`crate::explicit::Verlet::relax_start`]). Only before the first frame;
    /// [`Simulation::start_cleared`] reports what it did.
    pub fn with_clear_start(mut self) -> Self {
        if self.frame == 0 && self.coarse.is_none() {
            let t = self.state.t;
            if let Some(set) = self.world.colliders_mut() {
                set.update(t);
            }
            let limit = match &self.engine {
                Engine::Implicit { stepper, .. } => stepper.settings.strain_limit,
                Engine::Verlet(v) => Some(v.settings.strain_limit),
            };
            let limit = StrainLimit {
                iterations: CLEAR_SWEEPS,
                ..limit.unwrap_or_default()
            };
            let x = &mut self.state.x;
            self.start_cleared = crate::projection::clear_solids(&self.world, &limit, x);
            // A garment being sewn that starts clear of its body is left to its sewing, which
            // closes the seams from where the panels are; one that had to be moved out of a
            // solid is relaxed too, as its moved panels are bent and stretched where they met
            // the surface. The default explicit settings are valid, so relax_start cannot fail.
            let sewn = self.world.sewing.pairs().next().is_some();
            self.start_cleared.relaxed = matches!(self.engine, Engine::Implicit { .. })
                && (!sewn || self.start_cleared.moved > 0)
                && Verlet::relax_start(&mut self.world, x).unwrap_or(false);
            if self.start_cleared.moved > 0 || self.start_cleared.relaxed {
                self.world.sewing.measure_initial(&self.state.x);
            }
            self.sanity = Sanity::new(&self.world, &self.state);
        }
        self
    }

    /// What [`Simulation::with_clear_start`] found and did (all zero when it did not run or
    /// found nothing).
    pub fn start_cleared(&self) -> Cleared {
        self.start_cleared
    }

    /// What [`Simulation::with_untangled_start`] found and did (all zero when it did not run
    /// or the start had no crossing).
    pub fn start_untangled(&self) -> Untangled {
        self.start_untangled
    }

    /// Sews on a coarse copy: runs `copy` from the start of the preroll to `c.until` and takes
    /// its carried positions, velocities and time. Returns the copy's statistics.
    fn sew_coarse(
        &mut self,
        mut copy: Simulation,
        c: &CoarseStart,
        progress: &mut dyn FnMut(f64),
    ) -> Result<FrameStats, SimError> {
        let failed = |e: SimError| SimError::Invalid {
            key: "cloth.mesh.sew_edge_length".into(),
            message: format!("the coarse copy failed while sewing (its own vertex numbers): {e}"),
        };
        copy.stop = self.stop.clone();
        let stats = match copy.advance(c.until, 0, &mut |s: &State| progress(s.t)) {
            Err(SimError::Stopped) => return Err(SimError::Stopped),
            other => other.map_err(failed)?,
        };
        let n = self.state.len();
        self.state.x = c.carry(&copy.state.x, n)?;
        self.state.v = c.carry(&copy.state.v, n)?;
        self.state.t = copy.state.t;
        // Fine triangles are chords of the coarse surface and can cut through a layer within
        // the thickness.
        self.untangle();
        self.relax_carried()?;
        self.sanity = Sanity::new(&self.world, &self.state);
        Ok(stats)
    }

    /// Advances to the next frame time, `(frame + 1) / fps`, and returns its statistics.
    pub fn step_frame(&mut self) -> Result<FrameStats, SimError> {
        self.step_frame_watching(&mut |_| {})
    }

    /// As [`Simulation::step_frame`], showing `after_step` the state after every accepted
    /// step of the frame (the last one is the frame's end; the preroll, if it has not run, is
    /// not shown). For checks between frames, such as how close the layers came at the end of
    /// any step; the callback only reads, so the run is the same with or without it.
    pub fn step_frame_watching(
        &mut self,
        after_step: &mut dyn FnMut(&State),
    ) -> Result<FrameStats, SimError> {
        self.preroll()?;
        let t_end = (self.frame + 1) as f64 / self.fps;
        let stats = self.advance(t_end, self.frame + 1, after_step)?;
        self.frame += 1;
        Ok(stats)
    }

    /// Advances the state to `t_end` and measures it as frame `frame`, showing `after_step`
    /// the state after every accepted step.
    fn advance(
        &mut self,
        t_end: f64,
        frame: usize,
        after_step: &mut dyn FnMut(&State),
    ) -> Result<FrameStats, SimError> {
        let start = Instant::now();
        let mut stats = FrameStats {
            frame,
            h_min: f64::INFINITY,
            ..Default::default()
        };
        let mut f = Frame {
            world: &mut self.world,
            state: &mut self.state,
            t_end,
            sanity: &mut self.sanity,
            stats: &mut stats,
            after_step,
            stop: self.stop.as_deref(),
        };
        match &mut self.engine {
            Engine::Implicit {
                stepper,
                controller,
            } => implicit_frame(stepper, controller, &mut f)?,
            Engine::Verlet(v) => verlet_frame(v, &mut f)?,
        }
        self.state.t = t_end;
        self.measure(&mut stats, frame)?;
        stats.wall = start.elapsed().as_secs_f64();
        Ok(stats)
    }

    /// End-of-frame measures: stretch as the paper measures it (|w_u| and |w_v| of every
    /// triangle, paper §4.2), kinetic energy, contacts and self-intersections.
    fn measure(&mut self, stats: &mut FrameStats, frame: usize) -> Result<(), SimError> {
        let mut sw = Stopwatch::start();
        let cloth = &self.world.cloth;
        cloth
            .model
            .triangle_stretch(&self.state.x, &mut self.stretch);
        let (mut s, mut c) = (0.0f64, 0.0f64);
        let mut worst = (0, 0.0f64);
        for (t, w) in self.stretch.iter().enumerate() {
            for &l in w {
                if (l - 1.0).is_nan() || l - 1.0 > worst.1 {
                    worst = (t, l - 1.0);
                }
                s = s.max(l - 1.0);
                c = c.max(1.0 - l);
            }
        }
        // The explicit integrator's steps are checked without stretch; the frame's end is.
        (self.sanity).check(&self.world, &self.state, frame, Some(worst))?;
        stats.max_stretch = s;
        stats.max_compression = c;
        stats.kinetic_energy = self.state.kinetic_energy(&cloth.masses);
        stats.contacts = match &self.engine {
            Engine::Implicit { stepper, .. } => stepper.num_contacts(),
            Engine::Verlet(v) => v.last_step().contacts,
        };
        stats.timings.other += sw.lap();
        stats.seam_gap = self.world.sewing.largest_gap(&self.state.x);
        if self.world.count_intersections {
            let welded: Vec<[usize; 2]> = self.world.sewing.pairs().collect();
            stats.self_intersections =
                (self.crossings).count(cloth.mesh.triangles(), &self.state.x, &welded);
            stats.timings.cloth_cloth += sw.lap();
        }
        stats.time = self.state.t;
        if stats.steps == 0 {
            stats.h_min = 0.0;
        }
        Ok(())
    }
}

/// What the steps of one frame advance, check and report to.
struct Frame<'a> {
    world: &'a mut World,
    state: &'a mut State,
    /// The frame's end time (s).
    t_end: f64,
    sanity: &'a mut Sanity,
    stats: &'a mut FrameStats,
    /// Shown the state after every accepted step.
    after_step: &'a mut dyn FnMut(&State),
    /// Checked before every step ([`Simulation::set_stop_flag`]).
    stop: Option<&'a AtomicBool>,
}

/// Implicit steps from `state.t` to `t_end`, adapting h (paper §7).
fn implicit_frame(
    stepper: &mut Implicit,
    controller: &mut StepController,
    f: &mut Frame,
) -> Result<(), SimError> {
    let (world, state, t_end) = (&mut *f.world, &mut *f.state, f.t_end);
    let (sanity, stats) = (&mut *f.sanity, &mut *f.stats);
    let (grow_after, h_max, h_min, threshold) = {
        let s = &stepper.settings;
        (s.grow_after, s.h_max, s.h_min, s.stretch_threshold)
    };
    while t_end - state.t > 1e-12 * t_end.max(1.0) {
        Simulation::check_stop(f.stop)?;
        let h = controller.fit(t_end - state.t);
        let t = state.t;
        let step = stepper
            .step(world, state, h)
            .map_err(|e| e.in_frame(stats.frame))?;
        match step {
            Step::Accepted(info) => {
                sanity.credit(info.lift_work);
                sanity.check(world, state, stats.frame, stepper.most_stretched())?;
                add_attempt(stats, &info);
                stats.steps += 1;
                stats.over_threshold += usize::from(info.over_threshold);
                stats.zone_vertices += info.zone_vertices;
                stats.h_min = stats.h_min.min(h);
                stats.h_max = stats.h_max.max(h);
                controller.accepted(h, info.stretch_change, threshold, grow_after, h_max);
                (f.after_step)(state);
            }
            Step::Rejected(reason, info) => {
                add_attempt(stats, &info);
                stats.reject(&reason);
                controller.rejected(reason, h, h_min, stats.frame, t)?;
            }
        }
    }
    Ok(())
}

fn add_attempt(stats: &mut FrameStats, info: &StepInfo) {
    stats.cg_iterations += info.cg_iterations;
    stats.corrections += info.corrections;
    stats.coulomb_solves += info.coulomb_solves;
    stats.cg_not_converged += usize::from(info.cg_capped);
    stats.timings.add(&info.timings);
}

/// Equal explicit steps no longer than the integrator's `h` from `state.t` to `t_end`.
fn verlet_frame(verlet: &mut Verlet, f: &mut Frame) -> Result<(), SimError> {
    let (world, state, t_end) = (&mut *f.world, &mut *f.state, f.t_end);
    let (sanity, stats) = (&mut *f.sanity, &mut *f.stats);
    let mut sw = Stopwatch::start();
    let dt = t_end - state.t;
    let n = (dt / verlet.settings.h * (1.0 - 1e-9)).ceil().max(1.0) as usize;
    let h = dt / n as f64;
    for _ in 0..n {
        Simulation::check_stop(f.stop)?;
        verlet.step(world, state, h)?;
        let info = verlet.last_step();
        stats.strain_iterations += info.iterations;
        stats.strain_global_solves += info.global_solves;
        stats.strain_violation = stats.strain_violation.max(info.violation);
        sanity.credit(verlet.start_lift());
        sanity.check(world, state, stats.frame, None)?;
        (f.after_step)(state);
    }
    stats.steps = n;
    stats.h_min = h;
    stats.h_max = h;
    stats.cg_iterations = 0;
    stats.timings.eval += sw.lap();
    Ok(())
}
