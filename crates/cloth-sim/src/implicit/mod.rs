//! One implicit step of Baraff & Witkin (1998), as stages that run in this order, each a
//! module:
//!
//! 1. `detect`: every proximity query of the step, cloth-solid and cloth-cloth;
//! 2. `constrain`: per-vertex constraints S_i, target velocity changes z and position
//!    alterations y (pins, rails, contacts; Knowls 6, 7);
//! 3. `assemble`: forces and Jacobians of every force term at the step's start, through one
//!    path, into `A = M - h df/dv - h^2 df/dx` and `b = h (f0 + h df/dx v0 + df/dx y)`
//!    (Knowls 2, 6);
//! 4. `solve`: the modified PCG (or the direct solve) for dv, and the constraint forces
//!    `e = A dv - b` (Knowls 1, 8);
//! 5. `accept`: the candidate state is judged: stretch change (Knowl 9), penetration,
//!    definiteness — a [`Reject`] or acceptance; last, the safety net of cloth-cloth contact
//!    (`zones`): continuous collision detection of the candidate motion, and rigid impact
//!    zones (or a halved step) so that no accepted step makes the cloth pass through itself.
//!    A step whose only fault is a stretch change over the threshold first gets Newton
//!    corrections (stages 3 and 4 again at its end state, [`ImplicitSettings::newton_corrections`])
//!    and is judged again;
//! 6. `update`: `v += dv`, `x += h (v0 + dv) + y`, optional strain limiting, contact modes.
//!
//! The frame driver and the step-size controller ([`crate::simulation::Simulation`]) sit on top of
//! [`Implicit::step`].

mod accept;
mod assemble;
mod constrain;
mod contact;
mod controller;
mod detect;
mod settings;
mod solve;
mod update;
mod zones;

pub use contact::{ContactModes, PUSH_OUT_FRACTION};
pub use controller::{STEP_TARGET, StepControl, StepController};
pub use settings::{ImplicitSettings, LinearSolver};

use crate::error::{Reject, SimError, check_range};
use crate::state::State;
use crate::stats::{Stopwatch, Timings};
use crate::world::World;
use cloth_mesh::Vec3;
use cloth_solver::PcgParams;
use contact::ContactMemory;
use serde::{Deserialize, Serialize};

/// The largest stretch change, as a multiple of the threshold, that a Newton correction is
/// tried on: beyond it the linearisation is too far off for one correction to bring the step
/// under the threshold (on the thrown sheet none of the corrections tried above 10 times the
/// threshold succeeded, and 2 of 7 between 5 and 10 times).
pub const CORRECTABLE_CHANGE: f64 = 5.0;

/// `solver` with its relative tolerance multiplied by `ratio` (at least 1, at most up to
/// [`LOOSEST_CORRECTION_TOLERANCE`]).
fn loosened(solver: &LinearSolver, ratio: f64) -> LinearSolver {
    let loosen = |p: &PcgParams| PcgParams {
        tolerance: (p.tolerance * ratio)
            .min(LOOSEST_CORRECTION_TOLERANCE)
            .max(p.tolerance),
        ..*p
    };
    match solver {
        LinearSolver::Mpcg(p) => LinearSolver::Mpcg(loosen(p)),
        LinearSolver::Multigrid(p, mg) => LinearSolver::Multigrid(loosen(p), *mg),
        LinearSolver::Direct => LinearSolver::Direct,
    }
}

/// The loosest relative tolerance a Newton correction's solve is given.
const LOOSEST_CORRECTION_TOLERANCE: f64 = 0.1;

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
    /// suffices.
    pub stretch_change: f64,
    /// Newton corrections the attempt took (each an evaluation and a linear solve, counted in
    /// `cg_iterations` and `timings`).
    pub corrections: usize,
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

/// The implicit integrator: its settings, the memory it carries between steps (contact modes)
/// and the scratch of every stage. The state itself belongs to the caller.
pub struct Implicit {
    /// Settings; may be changed between steps.
    pub settings: ImplicitSettings,
    contacts: ContactMemory,
    /// Position alterations scheduled for the next accepted step (m).
    pending_shift: Vec<Vec3>,
    /// Constraint forces of the last accepted step (N).
    constraint_forces: Vec<Vec3>,
    key: StateKey,
    /// Redos of the current step for penetration.
    redos: usize,
    detect: detect::Detection,
    constrain: constrain::Constraints,
    assemble: assemble::Assembly,
    solve: solve::Solution,
    accept: accept::Check,
    strain: Option<update::StrainPass>,
}

impl Implicit {
    /// The integrator for `world`; builds the matrix pattern from the cloth's force model.
    pub fn new(world: &World, settings: ImplicitSettings) -> Result<Self, SimError> {
        settings.validate()?;
        let par = settings.par;
        let n = world.num_vertices();
        Ok(Self {
            settings,
            contacts: ContactMemory::new(n),
            pending_shift: vec![Vec3::zeros(); n],
            constraint_forces: vec![Vec3::zeros(); n],
            key: StateKey::default(),
            redos: 0,
            detect: detect::Detection::default(),
            constrain: constrain::Constraints::new(n),
            assemble: assemble::Assembly::new(&world.cloth, par)?,
            solve: solve::Solution::new(n),
            accept: accept::Check::default(),
            strain: None,
        })
    }

    /// Constraint forces (N) of the last accepted step, per vertex (Knowl 8): `e / h` with
    /// `e = A dv - b`. Zero for free vertices up to the solver tolerance.
    pub fn constraint_forces(&self) -> &[Vec3] {
        &self.constraint_forces
    }

    /// The most stretched triangle of the last accepted state and its stretch
    /// `max(|w_u|, |w_v|) - 1` (known after a step; `None` before the first).
    pub fn most_stretched(&self) -> Option<(usize, f64)> {
        self.accept.most_stretched()
    }

    /// Number of vertices currently in contact with solids.
    pub fn num_contacts(&self) -> usize {
        self.contacts.num_contacts()
    }

    /// Schedules a position alteration y (Knowl 6) of vertex `i` by `shift` (m) in the next
    /// accepted step: the vertex moves by `h (v0 + dv) + shift`, and its neighbours feel the
    /// shift through `df/dx y` within the same step. Out-of-range vertices are ignored.
    pub fn shift_vertex(&mut self, i: usize, shift: Vec3) {
        if let Some(s) = self.pending_shift.get_mut(i) {
            *s += shift;
        }
    }

    /// What the step carries between steps besides the state (for checkpoints); the
    /// controller is the frame driver's.
    pub fn memory(&self) -> ImplicitMemory {
        ImplicitMemory {
            controller: None,
            contacts: self.contacts.modes(),
            pattern: self.assemble.pattern().to_vec(),
        }
    }

    /// Restores what [`Implicit::memory`] saved. Caches built from history (the multigrid
    /// hierarchy) are dropped, as [`Implicit::drop_history`] does.
    pub fn restore_memory(&mut self, m: &ImplicitMemory) -> Result<(), SimError> {
        if !self.contacts.set_modes(&m.contacts) {
            return Err(SimError::Invalid {
                key: "checkpoint".into(),
                message: "its contact modes are for a cloth of another size".into(),
            });
        }
        self.assemble.set_pattern(&m.pattern)?;
        self.key = StateKey::default();
        self.assemble.invalidate();
        self.accept.invalidate();
        self.drop_history();
        Ok(())
    }

    /// Drops caches whose content depends on the run's history rather than on the state (the
    /// multigrid hierarchy), so a run continued from a checkpoint taken here computes the same
    /// bits as one that goes on.
    pub fn drop_history(&mut self) {
        self.solve.drop_history();
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
        let par = self.settings.par;
        par.install(|| self.stages(world, state, h))
    }

    /// The six stages, in order.
    fn stages(&mut self, world: &mut World, state: &mut State, h: f64) -> Result<Step, SimError> {
        let mut sw = Stopwatch::start();
        let mut info = StepInfo::default();
        let t = &mut info.timings;
        self.start_from(state);
        // 1. detect
        self.detect.solids(world, state, h, t, &mut sw);
        let fresh = self.assemble.needs_eval();
        let near = self.accept.near_pairs();
        self.detect.cloth(world, state, fresh, near, t, &mut sw);
        self.detect.shield(world);
        // 2. constrain
        let (detect, shift) = (&self.detect, &self.pending_shift);
        let contacts = &mut self.contacts;
        (self.constrain).build(world, state, detect, contacts, shift, h, t, &mut sw);
        // 3. assemble
        let par = self.settings.par;
        (self.assemble).run(world, state, &self.constrain, h, par, t, &mut sw)?;
        // 4. solve
        let solver = &self.settings.solver;
        let solved =
            (self.solve).run(solver, &mut self.assemble, &self.constrain, &state.x, par)?;
        t.cg += sw.lap();
        // 5. accept or reject
        let mut verdict = match solved {
            Ok(cg) => {
                info.cg_iterations = cg.iterations;
                info.cg_capped = !cg.converged;
                self.judge(world, state, h, &mut info.timings, &mut sw)
            }
            Err(reject) => Some(reject),
        };
        let first_change = self.accept.last_change;
        while info.corrections < self.settings.newton_corrections
            && self.correctable(&verdict, first_change)
        {
            info.corrections += 1;
            let Some(cg) = self.correct(world, state, h, &mut info.timings, &mut sw)? else {
                break;
            };
            info.cg_iterations += cg.iterations;
            info.cg_capped |= !cg.converged;
            verdict = self.judge(world, state, h, &mut info.timings, &mut sw);
        }
        if let Some(reject) = verdict {
            // Redos for penetration count per step size: a smaller step starts afresh.
            if reject.halves_step() {
                self.redos = 0;
            } else {
                self.redos += 1;
            }
            info.timings.other += sw.lap();
            return Ok(Step::Rejected(reject, info));
        }
        // 6. update
        info.zone_vertices = self.accept.zone_vertices;
        info.stretch_change = if info.corrections > 0 {
            first_change
        } else {
            self.accept.last_change
        };
        let g = world.cloth.external.gravity;
        info.lift_work = (self.constrain.y.iter().zip(&world.cloth.masses))
            .map(|(y, m)| (-m * g.dot(y)).max(0.0))
            .sum();
        self.update(world, state, h);
        info.timings.other += sw.lap();
        Ok(Step::Accepted(info))
    }

    /// Whether `verdict` is a stretch change a Newton correction may cure: finite, at most
    /// [`CORRECTABLE_CHANGE`] times the threshold, and (after a correction) at most 0.9 of
    /// the first solve's `first` change.
    fn correctable(&self, verdict: &Option<Reject>, first: f64) -> bool {
        let Some(Reject::StretchChange {
            change, threshold, ..
        }) = verdict
        else {
            return false;
        };
        let progress = *change == first || *change <= 0.9 * first;
        change.is_finite() && *change <= CORRECTABLE_CHANGE * threshold && progress
    }

    /// One Newton correction of the solved dv ([`assemble::Assembly::correction`]): the
    /// constrained components keep their targets, the constraint forces become those of the
    /// corrected solution. `None` (dv unchanged) when its solve asks for a smaller step.
    fn correct(
        &mut self,
        world: &World,
        state: &State,
        h: f64,
        t: &mut Timings,
        sw: &mut Stopwatch,
    ) -> Result<Option<cloth_solver::PcgInfo>, SimError> {
        let dv0 = std::mem::take(&mut self.solve.dv);
        let y = &self.constrain.y;
        let end = State {
            x: (state.x.iter().zip(&state.v))
                .zip(dv0.iter().zip(y))
                .map(|((x, v), (dv, y))| x + (v + dv) * h + y)
                .collect(),
            v: state.v.iter().zip(&dv0).map(|(v, dv)| v + dv).collect(),
            t: state.t,
        };
        let (par, friction) = (self.settings.par, &self.constrain.friction);
        let first = self.free_norm(&self.assemble.b);
        (self.assemble).correction(world, &state.x, &end, &dv0, friction, h, par)?;
        t.eval += sw.lap();
        // The correction leaves constrained components where the first solve put them.
        let targets = std::mem::replace(&mut self.constrain.z, vec![Vec3::zeros(); state.len()]);
        self.solve.dv = vec![Vec3::zeros(); state.len()];
        // Solved to the first solve's absolute accuracy (an inexact Newton step): the
        // tolerance relative to the residual grows as the residual is smaller than b was.
        let ratio = first / self.free_norm(&self.assemble.b).max(f64::MIN_POSITIVE);
        let solver = &loosened(&self.settings.solver, ratio);
        let solved = (self.solve).run(solver, &mut self.assemble, &self.constrain, &state.x, par);
        self.constrain.z = targets;
        t.cg += sw.lap();
        match solved? {
            Ok(cg) => {
                for (d, d0) in self.solve.dv.iter_mut().zip(&dv0) {
                    *d += d0;
                }
                Ok(Some(cg))
            }
            Err(_) => {
                self.solve.dv = dv0;
                Ok(None)
            }
        }
    }

    /// The 2-norm of `b` over the free vertices.
    fn free_norm(&self, b: &[Vec3]) -> f64 {
        (b.iter().zip(&self.constrain.kind))
            .filter(|(_, k)| matches!(k, cloth_solver::Constraint::Free))
            .map(|(b, _)| b.norm_squared())
            .sum::<f64>()
            .sqrt()
    }

    /// Forgets what was cached for another start state (forces, proximities, stretch).
    fn start_from(&mut self, state: &State) {
        if !self.key.matches(state) {
            self.key.set(state);
            self.assemble.invalidate();
            self.accept.invalidate();
            self.redos = 0;
        }
    }

    /// Stage 5 on the solved system.
    fn judge(
        &mut self,
        world: &World,
        state: &State,
        h: f64,
        timings: &mut Timings,
        sw: &mut Stopwatch,
    ) -> Option<Reject> {
        self.accept.judge(
            world,
            state,
            &self.solve.dv,
            &self.constrain.y,
            &self.constrain.landing,
            h,
            &self.settings,
            &mut self.detect,
            &mut self.contacts,
            self.redos,
            timings,
            sw,
        )
    }

    /// Stage 6: the accepted candidate becomes the state; start-of-step caches move on.
    fn update(&mut self, world: &World, state: &mut State, h: f64) {
        let strain = match &self.settings.strain_limit {
            Some(limit) => Some((
                &*self
                    .strain
                    .get_or_insert_with(|| update::StrainPass::new(world)),
                limit,
            )),
            None => None,
        };
        update::apply(
            world,
            state,
            h,
            strain,
            &self.solve,
            &mut self.accept,
            &mut self.contacts,
            &mut self.constraint_forces,
        );
        self.pending_shift.fill(Vec3::zeros());
        self.key.set(state);
        self.assemble.invalidate();
        self.redos = 0;
    }
}
