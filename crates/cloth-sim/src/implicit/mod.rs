//! The implicit integrator: linearised backward Euler with constraints and adaptive steps.
//!
//! [`Implicit`] is the method of Baraff & Witkin, "Large Steps in Cloth Simulation" (1998).
//!
//! One call of [`Implicit::step`] attempts a step of size h in stages, each a module that
//! reads the attempt's context (the world, the start state, h and the settings):
//!
//! 1. `detect`: every proximity query of the step, cloth-solid and cloth-cloth, at the start
//!    state and (for stage 5) at the candidate end state;
//! 2. `constrain`: per-vertex constraints S_i, target velocity changes z and position
//!    alterations y from rails, contacts and pins (paper §5.1, §6.2);
//! 3. `assemble`: forces and Jacobians of every force term into
//!    `A = M - h df/dv - h^2 df/dx` and `b = h (f0 + h df/dx v0 + df/dx y)` (paper §3, §6.2);
//! 4. `solve`: the modified PCG (or a direct solve) for dv, and the constraint forces
//!    `e = A dv - b` (paper §5.3, §5.4);
//! 5. `accept`: the candidate end state `x0 + h (v0 + dv) + y` is judged on its stretch change
//!    (paper §7), on vertices pulled into solids and, after the impact zones of the detect
//!    stage made its motion free of cloth-cloth crossings, again, and against static solids on
//!    its kinetic energy (`energy`): a [`Reject`] or acceptance. An attempt whose only fault
//!    is a stretch change over the threshold first gets Newton corrections (`correct`: stages
//!    3 and 4 again, linearised at its end state, [`ImplicitSettings::newton_corrections`])
//!    and is judged again;
//! 6. `update`: `v += dv`, `x += h (v0 + dv) + y`, the optional maximum-stretch pass, and the
//!    contact modes from the constraint forces.
//!
//! A rejected attempt leaves the state unchanged; the frame driver
//! ([`crate::simulation::Simulation`]) and its step-size controller ([`StepController`])
//! choose the next h.

mod accept;
mod assemble;
mod attempt;
mod candidate;
mod constrain;
mod contact;
mod controller;
mod correct;
mod detect;
mod energy;
mod settings;
mod solve;
mod update;
mod zones;

pub use contact::{ContactModes, PUSH_OUT_FRACTION};
pub use controller::{STEP_TARGET, StepControl, StepController};
pub use correct::CORRECTABLE_CHANGE;
pub use energy::ENERGY_CHECK_H;
pub use settings::{ImplicitSettings, LinearSolver};

use accept::Check;
use assemble::{Assembly, Linearization};
use attempt::Attempt;
use candidate::Candidate;
use constrain::Constraints;
use contact::ContactMemory;
use detect::Detection;
use energy::{EnergyCheck, Judged};
use solve::{Solution, Solve};
use update::Update;

use crate::error::{Reject, SimError, check_range};
use crate::state::State;
use crate::stats::{Clock, Timings};
use crate::world::World;
use cloth_mesh::Vec3;
use serde::{Deserialize, Serialize};

/// What the implicit integrator carries between steps.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ImplicitMemory {
    /// The step-size controller.
    pub controller: Option<StepController>,
    /// Contact modes.
    pub contacts: ContactModes,
    /// Off-diagonal vertex pairs of the system matrix's pattern.
    pub pattern: Vec<(usize, usize)>,
}

/// What one step attempt cost.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepInfo {
    /// CG iterations of the attempt (0 for the direct solver).
    pub cg_iterations: usize,
    /// Whether the linear solve stopped at its iteration cap before reaching the tolerance.
    pub cg_capped: bool,
    /// Vertices whose motion was replaced by their impact zone's (0 unless the cloth would
    /// have passed through itself).
    pub zone_vertices: usize,
    /// Wall time split of the attempt (s).
    pub timings: Timings,
    /// The largest change of any triangle's `|w_u|` or `|w_v|` over the step (the measure of
    /// [`ImplicitSettings::stretch_threshold`]) of an accepted attempt; 0 for a rejected one
    /// (a stretch rejection carries its change in [`Reject::StretchChange`]). For a step
    /// accepted after Newton corrections it is the change of its first solve, over the
    /// threshold: the step control sizes the next step from it, so steps stay where one solve
    /// suffices. For a step accepted over the threshold on its correction
    /// ([`ImplicitSettings::correction_tolerance`]) it is the stretch the correction moved
    /// divided by the tolerance: at the largest move allowed the next step keeps its size,
    /// below it the step grows.
    pub stretch_change: f64,
    /// Newton corrections the attempt took (each an evaluation and a linear solve, counted in
    /// `cg_iterations` and `timings`).
    pub corrections: usize,
    /// Linear solves again after static contacts slid within the step
    /// ([`ImplicitSettings::coulomb_rounds`]; counted in `cg_iterations` and `timings`).
    pub coulomb_solves: usize,
    /// Whether the attempt was accepted with a stretch change over the threshold because its
    /// Newton correction moved the stretch by little
    /// ([`ImplicitSettings::correction_tolerance`]).
    pub over_threshold: bool,
    /// Work (J) the position alterations y of an accepted attempt did against gravity: the sum
    /// over vertices of `m g . (-y)` where it is positive (a push-out lifting a vertex onto a
    /// solid's layer). The energy sanity check counts it as energy the scene supplied.
    pub lift_work: f64,
}

/// The outcome of [`Implicit::step`].
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// The state was advanced by h.
    Accepted(StepInfo),
    /// The state is unchanged; the reason says whether to retry with a smaller h
    /// ([`Reject::halves_step`]).
    Rejected(Reject, StepInfo),
}

/// Identifies the state the cached start-of-step data (forces, proximities, stretch) belong to.
#[derive(Default)]
struct StateKey {
    t: f64,
    x: Vec<Vec3>,
    v: Vec<Vec3>,
    valid: bool,
}

impl StateKey {
    fn matches(&self, s: &State) -> bool {
        self.valid && self.t == s.t && self.x == s.x && self.v == s.v
    }
    fn set(&mut self, s: &State) {
        self.t = s.t;
        self.x.clone_from(&s.x);
        self.v.clone_from(&s.v);
        self.valid = true;
    }
}

/// The implicit integrator: its settings, the memory it carries between steps (contact modes,
/// the matrix pattern) and the data of every stage. The state itself belongs to the caller.
pub struct Implicit {
    /// Settings; may be changed between steps.
    pub settings: ImplicitSettings,
    stages: Stages,
}

impl Implicit {
    /// The integrator for `world`; builds the matrix pattern from the cloth's force model.
    pub fn new(world: &World, settings: ImplicitSettings) -> Result<Self, SimError> {
        settings.validate()?;
        let n = world.num_vertices();
        let stages = Stages {
            contacts: ContactMemory::new(n),
            key: StateKey::default(),
            redos: 0,
            edge_scale: edge_scale(world),
            detect: Detection::default(),
            constrain: Constraints::new(n),
            assemble: Assembly::new(&world.cloth, settings.par)?,
            solve: Solution::new(n),
            candidate: Candidate::default(),
            accept: Check::default(),
            energy: EnergyCheck::default(),
            update: Update::new(n),
        };
        Ok(Self { settings, stages })
    }

    /// Constraint forces (N) of the last accepted step, per vertex (paper §5.4): `e / h` with
    /// `e = A dv - b`. Zero for free vertices up to the solver tolerance.
    pub fn constraint_forces(&self) -> &[Vec3] {
        &self.stages.update.constraint_forces
    }

    /// The most stretched triangle of the last accepted state and its stretch
    /// `max(|w_u|, |w_v|) - 1` (known after a step; `None` before the first).
    pub fn most_stretched(&self) -> Option<(usize, f64)> {
        self.stages.accept.most_stretched()
    }

    /// Number of vertices currently in contact with solids.
    pub fn num_contacts(&self) -> usize {
        self.stages.contacts.num_contacts()
    }

    /// Schedules a position alteration y (paper §6.2) of vertex `i` by `shift` (m) in the next
    /// accepted step: the vertex moves by `h (v0 + dv) + shift`, and its neighbours feel the
    /// shift through `df/dx y` within the same step. Out-of-range vertices are ignored.
    pub fn shift_vertex(&mut self, i: usize, shift: Vec3) {
        self.stages.constrain.schedule(i, shift);
    }

    /// What the step carries between steps besides the state (for checkpoints); the
    /// controller is the frame driver's.
    pub fn memory(&self) -> ImplicitMemory {
        ImplicitMemory {
            controller: None,
            contacts: self.stages.contacts.modes(),
            pattern: self.stages.assemble.pattern().to_vec(),
        }
    }

    /// Restores what [`Implicit::memory`] saved. Caches built from history (the multigrid
    /// hierarchy) are dropped, as [`Implicit::drop_history`] does.
    pub fn restore_memory(&mut self, m: &ImplicitMemory) -> Result<(), SimError> {
        let s = &mut self.stages;
        if !s.contacts.set_modes(&m.contacts) {
            return Err(SimError::Invalid {
                key: "checkpoint".into(),
                message: "its contact modes are for a cloth of another size".into(),
            });
        }
        s.assemble.set_pattern(&m.pattern)?;
        s.key = StateKey::default();
        s.assemble.invalidate();
        s.accept.invalidate();
        self.drop_history();
        Ok(())
    }

    /// Drops caches whose content depends on the run's history rather than on the state (the
    /// multigrid hierarchy), so a run continued from a checkpoint taken here computes the same
    /// bits as one that goes on.
    pub fn drop_history(&mut self) {
        self.stages.solve.drop_history();
    }

    /// Attempts one step of size `h` (s) from `state`: on [`Step::Accepted`] the state is at
    /// `t + h`; on [`Step::Rejected`] it is unchanged and may be retried (forces evaluated at
    /// this state are kept for the retry). Errors are failures no smaller step can fix (bad
    /// input, a solver failure other than loss of definiteness).
    pub fn step(&mut self, world: &mut World, state: &mut State, h: f64) -> Result<Step, SimError> {
        if state.len() != world.num_vertices() {
            return Err(SimError::Invalid {
                key: "state".into(),
                message: format!(
                    "has {} vertices, the cloth {}",
                    state.len(),
                    world.num_vertices()
                ),
            });
        }
        check_range("h", h, 0.0, f64::INFINITY)?;
        let (settings, stages) = (&self.settings, &mut self.stages);
        settings
            .par
            .install(|| stages.step(world, state, h, settings))
    }
}

/// The data of every stage: the memory carried from step to step (contact modes, the start
/// state's cached terms) and each stage's scratch.
struct Stages {
    contacts: ContactMemory,
    /// The start state the cached data (forces, proximities, stretch) belong to.
    key: StateKey,
    /// Redos of the current step for penetration.
    redos: usize,
    /// The cloth's typical edge length (m): the mean over triangles of `sqrt(2 area)`.
    edge_scale: f64,
    detect: Detection,
    constrain: Constraints,
    assemble: Assembly,
    solve: Solution,
    candidate: Candidate,
    accept: Check,
    energy: EnergyCheck,
    update: Update,
}

impl Stages {
    /// The six stages, in order.
    fn step(
        &mut self,
        world: &mut World,
        state: &mut State,
        h: f64,
        settings: &ImplicitSettings,
    ) -> Result<Step, SimError> {
        let mut clock = Clock::start();
        let mut info = StepInfo::default();
        self.start_from(state);
        // 1. detect, at the start state (colliders move to the step's end)
        let fresh = self.assemble.needs_eval();
        self.detect.start(world, state, h, fresh, &mut clock);
        // 2. to 5.
        let ctx = Attempt {
            world,
            state,
            h,
            settings,
        };
        if let Some(reject) = self.attempt(&ctx, &mut info, &mut clock)? {
            // Redos for penetration count per step size: a smaller step starts afresh.
            if reject.halves_step() {
                self.redos = 0;
            } else {
                self.redos += 1;
            }
            clock.other();
            info.timings = clock.timings;
            return Ok(Step::Rejected(reject, info));
        }
        // 6. update
        info.zone_vertices = self.candidate.zone_vertices;
        info.lift_work = lift_work(world, &self.constrain.y);
        self.update(world, state, h, settings);
        clock.other();
        info.timings = clock.timings;
        Ok(Step::Accepted(info))
    }

    /// Stages 2 to 5 of the attempt `ctx`, with Newton corrections of a correctable stretch
    /// change: the verdict, `None` to accept.
    fn attempt(
        &mut self,
        ctx: &Attempt,
        info: &mut StepInfo,
        clock: &mut Clock,
    ) -> Result<Option<Reject>, SimError> {
        self.accept.start_attempt();
        // 2. constrain
        (self.constrain).build(ctx, &self.detect, &mut self.contacts, clock);
        // 3. assemble
        (self.assemble).run(ctx, Linearization::Start, &self.constrain, clock)?;
        // 4. solve
        let solved = self.solve_coulomb(ctx, info, clock)?;
        // 5. accept or reject
        let mut verdict = match solved {
            Ok(()) => self.verdict(ctx, clock),
            Err(reject) => Some(reject),
        };
        let first_change = self.accept.last_change;
        while info.corrections < ctx.settings.newton_corrections
            && correct::worth_trying(&verdict, first_change)
        {
            info.corrections += 1;
            self.accept.keep_reference();
            let (asm, sol) = (&mut self.assemble, &mut self.solve);
            let Some(cg) = correct::newton(ctx, asm, sol, &mut self.constrain, clock)? else {
                break;
            };
            info.cg_iterations += cg.iterations;
            info.cg_capped |= !cg.converged;
            verdict = self.verdict(ctx, clock);
        }
        if verdict.is_none() {
            info.over_threshold = self.accept.corrected_over.is_some();
            info.stretch_change = match self.accept.corrected_over {
                // Sized by how far the correction moved the stretch (see `stretch_change`).
                Some(moved) => moved / ctx.settings.over_threshold_tolerance(),
                None if info.corrections > 0 => first_change,
                None => self.accept.last_change,
            };
        }
        Ok(verdict)
    }

    /// Stage 4: the solve, then Coulomb's law on its static contacts' constraint forces: those
    /// that hold their vertex beyond friction's reach slide, and when letting go of the excess
    /// would move some vertex by more than the stretch threshold times an edge, the system is
    /// solved again (at most [`ImplicitSettings::coulomb_rounds`] times).
    fn solve_coulomb(
        &mut self,
        ctx: &Attempt,
        info: &mut StepInfo,
        clock: &mut Clock,
    ) -> Result<Result<(), Reject>, SimError> {
        let solver = &ctx.settings.solver;
        let mut round = 0;
        loop {
            let how = if round == 0 {
                Solve::Fresh
            } else {
                Solve::Again
            };
            let (asm, cons) = (&mut self.assemble, &self.constrain);
            let solved = (self.solve).run(ctx, solver, asm, cons, how)?;
            clock.cg();
            match solved {
                Ok(cg) => {
                    info.cg_iterations += cg.iterations;
                    info.cg_capped |= !cg.converged;
                }
                Err(reject) => return Ok(Err(reject)),
            }
            if round >= ctx.settings.coulomb_rounds || ctx.world.colliders.is_none() {
                return Ok(Ok(()));
            }
            round += 1;
            let cons = &mut self.constrain;
            let mut out = contact::Overloaded {
                kind: &mut cons.kind,
                z: &mut cons.z,
                friction: &mut cons.friction,
                b: &mut self.assemble.b,
                matrix: &self.assemble.matrix,
                largest_move: 0.0,
            };
            let (e, h) = (&self.solve.e, ctx.h);
            let changed = (self.contacts).slip_overloaded(ctx.world, e, h, &mut out);
            clock.cloth_solid();
            // A jump smaller than the stretch threshold times an edge cannot by itself change a
            // triangle's stretch by the threshold: the next step takes it up.
            let matters = ctx.settings.stretch_threshold * self.edge_scale;
            if changed == 0 || out.largest_move < matters {
                return Ok(Ok(()));
            }
            info.coulomb_solves += 1;
        }
    }

    /// Stage 5 on the solved system: the candidate's motion is judged ([`Stages::motion`]),
    /// then, where nothing but gravity does work on the cloth and it has static solids, its
    /// kinetic energy (`energy`).
    fn verdict(&mut self, ctx: &Attempt, clock: &mut Clock) -> Option<Reject> {
        if let Some(reject) = self.motion(ctx, clock) {
            return Some(reject);
        }
        let (world, state, cons) = (ctx.world, ctx.state, &self.constrain);
        let applies = world.colliders.is_some() && crate::sanity::closed(world);
        let judged = Judged {
            x0: &state.x,
            v0: &state.v,
            dv: &self.solve.dv,
            candidate: &self.candidate,
            lift: lift_work(world, &cons.y),
            h: ctx.h,
        };
        let reject = self.energy.judge(world, &judged, applies);
        clock.other();
        reject
    }

    /// The candidate end state is measured, the detect stage queries it and the accept stage
    /// judges what it found. Last comes the safety net of cloth-cloth contact: impact zones
    /// make the candidate's motion free of crossings, and a candidate they changed is judged
    /// again for solids and stretch.
    fn motion(&mut self, ctx: &Attempt, clock: &mut Clock) -> Option<Reject> {
        let (world, state, h) = (ctx.world, ctx.state, ctx.h);
        let (model, cons) = (&world.cloth.model, &self.constrain);
        self.candidate
            .integrate(state, &self.solve.dv, &cons.landing, h);
        self.accept.measure(model, &state.x, &self.candidate.x1);
        self.candidate.correct(&cons.y, &cons.landing);
        clock.other();
        if world.colliders.is_some() {
            self.detect.candidate(world, &state.x, &self.candidate.x1);
            clock.cloth_solid();
            let redo = self.redos < ctx.settings.max_penetration_redos;
            let contacts = &mut self.contacts;
            let judged = accept::solids(&self.detect, contacts, redo, world.pinned(), h);
            if judged.is_some() {
                return judged;
            }
        }
        if let Some(reject) = self.accept.stretch(ctx.settings) {
            return Some(reject);
        }
        let zoned = (self.detect).crossings(world, &state.x, &mut self.candidate);
        clock.cloth_cloth();
        match zoned {
            Ok(count) => self.candidate.zone_vertices = count,
            Err(reject) => return Some(reject),
        }
        if self.candidate.zone_vertices == 0 {
            return None;
        }
        let c = &self.candidate;
        self.accept.measure_without(model, &c.x1, &c.y);
        if world.colliders.is_some() {
            self.detect.candidate(world, &state.x, &self.candidate.x1);
            clock.cloth_solid();
            if let Some(reject) = accept::inside_solid(&self.detect) {
                return Some(reject);
            }
        }
        self.accept.stretch(ctx.settings)
    }

    /// Forgets what was cached for another start state (forces, proximities, stretch).
    fn start_from(&mut self, state: &State) {
        if !self.key.matches(state) {
            self.key.set(state);
            self.assemble.invalidate();
            self.accept.invalidate();
            self.energy.invalidate();
            self.redos = 0;
        }
    }

    /// Stage 6: the accepted candidate becomes the state; start-of-step caches move on.
    fn update(&mut self, world: &World, state: &mut State, h: f64, settings: &ImplicitSettings) {
        let (update, candidate) = (&mut self.update, &mut self.candidate);
        update.velocities(state, h, &self.solve, candidate);
        let limit = settings.strain_limit.as_ref();
        update.positions(world, state, h, limit, candidate, &mut self.accept);
        self.accept.start_from_candidate();
        if world.colliders.is_some() {
            update.contact_modes(world, state, h, &mut self.accept, &mut self.contacts);
        }
        state.t += h;
        self.constrain.clear_scheduled();
        self.key.set(state);
        self.assemble.invalidate();
        self.energy.invalidate();
        self.redos = 0;
    }
}

/// The cloth's typical edge length (m): the mean over its triangles of `sqrt(2 area)` at rest
/// (the legs of a right isosceles triangle); 0 without triangles.
fn edge_scale(world: &World) -> f64 {
    let areas = world.cloth.mesh.rest_areas();
    let sum: f64 = areas.iter().map(|a| (2.0 * a).sqrt()).sum();
    sum / areas.len().max(1) as f64
}

/// Work (J) the position alterations `y` did against gravity: the sum over vertices of
/// `m g . (-y)` where it is positive.
fn lift_work(world: &World, y: &[Vec3]) -> f64 {
    let g = world.cloth.external.gravity;
    (y.iter().zip(&world.cloth.masses))
        .map(|(y, m)| (-m * g.dot(y)).max(0.0))
        .sum()
}
