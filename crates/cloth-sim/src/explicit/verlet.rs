//! The explicit integrator itself: its settings, the spring network and one step (see the
//! [`super`] module for what a step does).

use super::contact::SolidContacts;
use super::global::GlobalProjection;
use super::pairs::{Pair, PairSet, SweepParams};
use super::tether::Tethers;
use super::tree::TreeProjection;
use crate::error::{SimError, check_range};
use crate::state::State;
use crate::strain::{EdgeSet, StrainLimit};
use crate::world::World;
use cloth_mesh::{Par, Vec3};
use rayon::prelude::*;

/// Settings of the explicit Verlet integrator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VerletSettings {
    /// Largest time step (s); each frame is split into equal steps no larger than this.
    pub h: f64,
    /// Stiffness of the springs on mesh edges (N/m per spring). Low on purpose: the
    /// maximum-stretch pass, not the spring, keeps the cloth from stretching far.
    pub stretch_stiffness: f64,
    /// Stiffness of the bending springs between the two opposite vertices of every interior
    /// edge (the "two-ring" neighbours), N/m per spring.
    pub bend_stiffness: f64,
    /// Velocity damping rate (1/s): each step keeps a fraction `1 - damping * h` of the
    /// previous velocity.
    pub damping: f64,
    /// The maximum-stretch limits, the tolerance to which they must hold after every step and
    /// the cap on sweeps of the projection (default: `[0.9, 1.1]`, 0.5%,
    /// [`DEFAULT_VERLET_ITERATIONS`] sweeps).
    pub strain_limit: StrainLimit,
    /// Over-relaxation factor of the projection's updates, in (0, 2) (default 1: plain
    /// Gauss-Seidel, which converges faster than over-relaxed sweeps on hanging and draped
    /// sheets).
    pub relaxation: f64,
    /// Sweeps in which the spring rows (edge and bending springs) are updated; later sweeps
    /// update the hard rows only (strain limits, contacts). Default [`DEFAULT_SPRING_SWEEPS`].
    pub spring_sweeps: usize,
    /// How the projection removes stretch accumulated along long chains of edges (default
    /// [`LongRange::Tree`]).
    pub long_range: LongRange,
    /// Sweeps after which every further sweep of a step starts with a global projection onto
    /// the limits of all stretched edges (the `global` module: a sparse Cholesky solve per
    /// sweep). Default [`DEFAULT_GLOBAL_AFTER`]; 0 uses it from the first sweep, a value at
    /// or above the cap never.
    pub global_after: usize,
    /// Threads (default: the current rayon pool); results do not depend on it.
    pub par: Par,
}

/// Default cap on the projection's sweeps per step ([`StrainLimit::iterations`] of
/// [`VerletSettings::default`]): room for the few hundred sweeps a draped sheet's hardest
/// steps need to reach the 0.5% tolerance. A step that holds its limit sooner stops there, so
/// the cap costs only the steps that need it.
pub const DEFAULT_VERLET_ITERATIONS: usize = 500;

/// Default [`VerletSettings::spring_sweeps`].
pub const DEFAULT_SPRING_SWEEPS: usize = 4;

/// Most global solves (Newton iterations) in one sweep of the projection.
const GLOBAL_SOLVES_PER_SWEEP: usize = 4;

/// Most position projections that move a step's start out of the contact layers it is in.
const RELAX_PROJECTIONS: usize = 50;

/// A start projection that moves no vertex further than this (m) ends the relaxation.
const RELAX_TOLERANCE: f64 = 1e-5;

/// Sweeps of each projection of [`Verlet::relax_start`] (the springs' and a few more for the
/// limits; the next projection goes on from there).
const START_SWEEPS: usize = 8;

/// Most projections [`Verlet::relax_start`] takes.
const START_PROJECTIONS: usize = 400;

/// A projection of [`Verlet::relax_start`] that moves no vertex further than this (m) ends it.
const START_TOLERANCE: f64 = 1e-7;

/// The step size (s) [`Verlet::relax_start`] gives its projections: long enough that the
/// springs act nearly as hard constraints, so each projection relaxes them nearly all the way.
const START_H: f64 = 0.1;

/// A step that starts deeper than this (m) inside a contact layer relaxes its start with up
/// to [`RELAX_PROJECTIONS`] projections; shallower, with one.
const RELAX_DEPTH: f64 = 0.5e-3;

/// Sweeps of a step in which contact friction acts (and holds vertices in the global
/// projections); a step that has not reached the tolerance by then lets friction go, keeping
/// the corrections made, and finishes without it: the strain limit comes first. Held by
/// friction, the global solve is stiffer and a settled step may not reach the tolerance
/// within the cap; half the cap leaves the rest room to finish.
const FRICTION_SWEEPS: usize = DEFAULT_VERLET_ITERATIONS / 2;

/// Default [`VerletSettings::global_after`].
pub const DEFAULT_GLOBAL_AFTER: usize = 50;

impl Default for VerletSettings {
    fn default() -> Self {
        Self {
            h: 1.0 / 600.0,
            stretch_stiffness: 50.0,
            bend_stiffness: 5.0,
            damping: 0.5,
            strain_limit: StrainLimit {
                iterations: DEFAULT_VERLET_ITERATIONS,
                ..StrainLimit::default()
            },
            relaxation: 1.0,
            spring_sweeps: DEFAULT_SPRING_SWEEPS,
            long_range: LongRange::Tree,
            global_after: DEFAULT_GLOBAL_AFTER,
            par: Par::default(),
        }
    }
}

/// The long-range part of the projection, run before every sweep over the edges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LongRange {
    /// None: Gauss-Seidel sweeps over the edges only.
    None,
    /// Long-range attachments of every free vertex to the nearest pinned vertex of each pin
    /// group (Kim, Chentanez & Müller 2012); they bind only where the chain to the pin is
    /// straight.
    Tethers,
    /// An exact projection onto the stretch limits of a spanning tree of the edges, rooted at
    /// the pins (the `tree` module).
    #[default]
    Tree,
}

/// What the last step's projection did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VerletInfo {
    /// Sweeps of the projection.
    pub iterations: usize,
    /// Global projections (sparse Cholesky solves, see [`VerletSettings::global_after`]).
    pub global_solves: usize,
    /// Largest violation of the strain limit left, as a fraction of the edge's rest length.
    pub violation: f64,
    /// Whether the sweeps stopped at the cap with the violation above the tolerance.
    pub capped: bool,
    /// Free vertices pushed out of a solid during the step (see the contact rows: a vertex
    /// pushed out and lifted off again in the global phase counts).
    pub contacts: usize,
}

/// The explicit integrator: its settings, spring network and scratch. The state belongs to the
/// caller; the velocity of a vertex is its last step's displacement divided by that step
/// (position Verlet in velocity form, so a step of any size can follow any other).
pub struct Verlet {
    /// Settings; may be changed between steps.
    pub settings: VerletSettings,
    pairs: PairSet,
    tethers: Tethers,
    tree: Option<TreeProjection>,
    /// The global projection, built when first needed (`Err`: it could not be built and
    /// the sweeps go on without it).
    global: Option<Result<GlobalProjection, cloth_solver::SolverError>>,
    contacts: SolidContacts,
    /// Whether the world has solids (the global projection then carries contact rows).
    solids: bool,
    edges: EdgeSet,
    inv_mass: Vec<f64>,
    /// Air drag rate `drag * area / mass` per vertex (1/s).
    drag_rate: Vec<f64>,
    x_old: Vec<Vec3>,
    /// Whether the projections place a cloth at rest ([`Verlet::relax_start`]): no friction.
    placing: bool,
    /// Work (J) against gravity of the last step's move out of a contact layer it began in.
    start_lift: f64,
    targets: Vec<Vec3>,
    last: VerletInfo,
}

/// Mesh edges (strain-limited springs, rest lengths
/// [`cloth_mesh::ClothMesh::edge_rest_lengths`]) and two-ring bending springs across each
/// hinge unfolded flat in rest space ([`cloth_mesh::ClothMesh::hinge_rest`]).
fn spring_pairs(world: &World, s: &VerletSettings) -> Vec<Pair> {
    let mesh = &world.cloth.mesh;
    let edges = mesh
        .edges()
        .iter()
        .zip(mesh.edge_rest_lengths())
        .map(|(e, &rest)| Pair {
            i: e.v[0],
            j: e.v[1],
            rest,
            k: s.stretch_stiffness,
            limited: true,
        });
    let bends = mesh.hinges().iter().enumerate().map(|(h, hg)| {
        let r = mesh.hinge_rest(h);
        Pair {
            i: hg.v[2],
            j: hg.v[3],
            rest: (r[3] - r[2]).norm(),
            k: s.bend_stiffness,
            limited: false,
        }
    });
    edges.chain(bends).filter(|p| p.rest > 0.0).collect()
}

impl Verlet {
    /// Builds the spring network of `world`'s cloth (rest lengths from the (u, v) rest plane),
    /// its colouring and the long-range attachments to the pins.
    pub fn new(world: &World, settings: VerletSettings) -> Result<Self, SimError> {
        check_range("solver.verlet_h", settings.h, 0.0, f64::INFINITY)?;
        check_range(
            "solver.strain_tolerance",
            settings.strain_limit.tolerance,
            0.0,
            1.0,
        )?;
        if !(settings.relaxation > 0.0 && settings.relaxation < 2.0) {
            return Err(SimError::Invalid {
                key: "solver.strain_relaxation".into(),
                message: format!("must be in (0, 2), got {}", settings.relaxation),
            });
        }
        let n = world.num_vertices();
        let edges = EdgeSet::from_mesh(&world.cloth.mesh);
        let groups: Vec<&[usize]> = if settings.long_range == LongRange::Tethers {
            world.pins().iter().map(|p| p.vertices.as_slice()).collect()
        } else {
            Vec::new()
        };
        let tethers = Tethers::new(n, &edges.edges, &edges.rest, &groups, world.pinned());
        let tree = (settings.long_range == LongRange::Tree).then(|| {
            TreeProjection::new(&edges.edges, &edges.rest, world.pinned(), &world.cloth.x0)
        });
        let model = &world.cloth.model;
        let drag = world.cloth.external.drag;
        let drag_rate = (model.vertex_areas().iter().zip(&world.cloth.masses))
            .map(|(a, m)| drag * a / m)
            .collect();
        Ok(Self {
            settings,
            pairs: PairSet::new(spring_pairs(world, &settings), n),
            tethers,
            tree,
            global: None,
            contacts: SolidContacts::default(),
            solids: world.colliders().is_some(),
            edges,
            inv_mass: world.inverse_masses(),
            drag_rate,
            x_old: Vec::new(),
            placing: false,
            start_lift: 0.0,
            targets: Vec::new(),
            last: VerletInfo::default(),
        })
    }

    /// One step of size `h` (s): the explicit prediction, the projection onto springs, strain
    /// limits and contact planes, and `v = (x_new - x) / h` (see the module documentation).
    pub fn step(&mut self, world: &mut World, state: &mut State, h: f64) -> Result<(), SimError> {
        check_range("h", h, 0.0, f64::INFINITY)?;
        let par = self.settings.par;
        par.install(|| self.advance(world, state, h));
        Ok(())
    }

    /// Moves the positions `x` (a cloth at rest) out of the contact layers when some vertex
    /// starts deeper than 0.5 mm in one, as the explicit integrator moves a step's start:
    /// projections of the positions alone (default settings, no gravity), each from the last
    /// one's result, until one moves no vertex more than 0.1 um or 400 are done, so the
    /// springs relax the bend and stretch the push-out leaves. Returns whether it ran. An
    /// implicit run starts with it ([`crate::simulation::Simulation::with_clear_start`]): its
    /// stiff stretch and bend forces would otherwise give the push-out's deformation back as
    /// motion.
    pub fn relax_start(world: &mut World, x: &mut Vec<Vec3>) -> Result<bool, SimError> {
        let mut settings = VerletSettings::default();
        settings.strain_limit.iterations = START_SWEEPS;
        let mut verlet = Verlet::new(world, settings)?;
        let h = START_H;
        verlet.placing = true;
        let mut state = State::at_rest(std::mem::take(x));
        verlet.x_old.clone_from(&state.x);
        (verlet.contacts).detect(world, &verlet.x_old, &verlet.inv_mass, (state.t, h, 0.0));
        let deep = verlet.contacts.start_depth(&verlet.x_old) > RELAX_DEPTH;
        if deep {
            verlet.relax_out(world, &mut state, h, (START_PROJECTIONS, START_TOLERANCE));
        }
        *x = state.x;
        Ok(deep)
    }

    /// Work (J) against gravity of the last step's move out of a contact layer it began in.
    pub fn start_lift(&self) -> f64 {
        self.start_lift
    }

    /// What the last step's projection did.
    pub fn last_step(&self) -> VerletInfo {
        self.last
    }

    /// Number of colours of the spring network: batches of springs that share no vertex and
    /// are updated in parallel.
    pub fn num_colours(&self) -> usize {
        self.pairs.num_batches()
    }

    /// Number of long-range attachments.
    pub fn num_tethers(&self) -> usize {
        self.tethers.tethers().len()
    }

    fn advance(&mut self, world: &mut World, state: &mut State, h: f64) {
        self.x_old.clone_from(&state.x);
        // A step that starts inside a contact layer first moves the cloth out of it by a
        // projection of the positions alone (contact planes and limits, no prediction), so
        // that the push-out and what it drags along are not turned into velocity.
        (self.contacts).detect(world, &self.x_old, &self.inv_mass, (state.t, h, 0.0));
        self.start_lift = 0.0;
        let depth = self.contacts.start_depth(&self.x_old);
        if depth > 0.0 {
            let start = self.x_old.clone();
            let projections = if depth > RELAX_DEPTH {
                RELAX_PROJECTIONS
            } else {
                1
            };
            self.relax_out(world, state, h, (projections, RELAX_TOLERANCE));
            let g = world.cloth.external.gravity;
            self.start_lift = (state.x.iter().zip(&start))
                .zip(&self.inv_mass)
                .filter(|(_, w)| **w > 0.0)
                .map(|((a, b), w)| -g.dot(&(a - b)) / w)
                .sum();
            self.x_old.clone_from(&state.x);
        }
        let travel = self.predict(world, state, h);
        let t_end = state.t + h;
        (self.contacts).detect(world, &self.x_old, &self.inv_mass, (t_end, h, travel));
        self.project(&mut state.x, h);
        let x_old = &self.x_old;
        (state
            .v
            .par_iter_mut()
            .zip(state.x.par_iter())
            .zip(x_old.par_iter()))
        .for_each(|((v, x), x0)| *v = (x - x0) / h);
        state.t = t_end;
    }

    /// Moves the cloth out of the contact layers it starts in by projections of the positions
    /// alone, repeated (each from the last one's result, with the contacts found again) until
    /// a projection moves no vertex more than `tolerance` (m) or `projections` are done: the
    /// springs relax the bend the push-out leaves, which the next steps would otherwise turn
    /// into motion.
    fn relax_out(
        &mut self,
        world: &mut World,
        state: &mut State,
        h: f64,
        (projections, tolerance): (usize, f64),
    ) {
        for k in 0..projections {
            if k > 0 {
                self.x_old.clone_from(&state.x);
                (self.contacts).detect(world, &self.x_old, &self.inv_mass, (state.t, h, 0.0));
            }
            self.project(&mut state.x, h);
            let moved = (state.x.par_iter().zip(self.x_old.par_iter()))
                .map(|(a, b)| (a - b).norm())
                .reduce(|| 0.0, f64::max);
            if moved <= tolerance {
                break;
            }
        }
    }

    /// Step 1: the explicit prediction of every free vertex and the pins' targets. Returns the
    /// largest distance a vertex moved (m).
    fn predict(&mut self, world: &World, state: &mut State, h: f64) -> f64 {
        let keep = (1.0 - self.settings.damping * h).max(0.0);
        let ext = &world.cloth.external;
        let (g, wind) = (ext.gravity, ext.wind);
        (state.x.par_iter_mut().zip(state.v.par_iter()))
            .zip(self.inv_mass.par_iter().zip(self.drag_rate.par_iter()))
            .for_each(|((x, v), (&w, &c))| {
                if w > 0.0 {
                    let v1 = (v * keep + (g + wind * c) * h) / (1.0 + c * h);
                    *x += v1 * h;
                }
            });
        for pin in &world.pins {
            pin.targets(state.t + h, &mut self.targets);
            for (&i, p) in pin.vertices.iter().zip(&self.targets) {
                state.x[i] = *p;
            }
        }
        (state.x.par_iter().zip(self.x_old.par_iter()))
            .map(|(a, b)| (a - b).norm())
            .reduce(|| 0.0, f64::max)
    }

    /// Step 3: sweeps until every edge is within the limits to the tolerance (after at least
    /// `spring_sweeps` sweeps) or the cap; records what the projection did.
    fn project(&mut self, x: &mut [Vec3], h: f64) {
        let s = self.settings;
        let lim = s.strain_limit;
        let mut params = SweepParams {
            h,
            min: lim.min,
            max: lim.max,
            omega: s.relaxation,
            springs: true,
        };
        self.pairs.begin(&self.x_old);
        self.tethers.begin();
        if let Some(Ok(g)) = self.global.as_mut() {
            g.begin(&self.x_old);
        }
        let mut info = VerletInfo::default();
        let mut violation = f64::INFINITY;
        let first_global = s.global_after.max(s.spring_sweeps.saturating_sub(1)) + 1;
        while info.iterations < lim.iterations.max(1) {
            info.iterations += 1;
            params.springs = info.iterations <= s.spring_sweeps;
            if let Some(tree) = self.tree.as_mut() {
                tree.solve(x, &self.inv_mass, lim.max, lim.tolerance);
            }
            self.tethers.sweep(x, &self.inv_mass, lim.max, s.relaxation);
            let mut seen = self.pairs.sweep(x, &self.inv_mass, &params).violation;
            // Friction in the first FRICTION_SWEEPS sweeps; in the global phase before the
            // global projections, which hold the vertices it holds, and the rows then only
            // push out (see the `contact` module).
            let global = info.iterations >= first_global;
            let friction = info.iterations <= FRICTION_SWEEPS && !self.placing;
            self.contacts
                .sweep(x, &self.x_old, s.relaxation, (friction, global));
            if global {
                let (solves, left) = self.global_newton(x);
                info.global_solves += solves;
                seen = left;
            }
            if info.iterations >= s.spring_sweeps && seen <= lim.tolerance {
                violation = self.pairs.violation(x, lim.min, lim.max);
                if violation <= lim.tolerance {
                    break;
                }
            }
        }
        if violation.is_infinite() {
            violation = self.pairs.violation(x, lim.min, lim.max);
        }
        info.violation = violation;
        info.capped = violation > lim.tolerance;
        info.contacts = self.contacts.active();
        self.last = info;
    }

    /// Newton iterations of the global projection (at most [`GLOBAL_SOLVES_PER_SWEEP`]) until
    /// the limits hold to half the tolerance; returns the solves and the violation left
    /// (infinite if the global projection could not be used).
    fn global_newton(&mut self, x: &mut [Vec3]) -> (usize, f64) {
        let lim = self.settings.strain_limit;
        let mut solves = 0;
        loop {
            let v = self.pairs.violation(x, lim.min, lim.max);
            if v <= 0.5 * lim.tolerance || solves == GLOBAL_SOLVES_PER_SWEEP {
                return (solves, v);
            }
            if !self.global_projection(x) {
                return (solves, f64::INFINITY);
            }
            solves += 1;
        }
    }

    /// One global projection of `x` (built on first use); false if it could not be used.
    fn global_projection(&mut self, x: &mut [Vec3]) -> bool {
        let lim = self.settings.strain_limit;
        let (edges, inv_mass, solids) = (&self.edges, &self.inv_mass, self.solids);
        let fresh = self.global.is_none();
        let global = self.global.get_or_insert_with(|| {
            GlobalProjection::new(&edges.edges, &edges.rest, inv_mass, solids)
        });
        let Ok(g) = global.as_mut() else { return false };
        if fresh {
            g.begin(&self.x_old);
        }
        g.set_planes(self.contacts.planes());
        let ok = (g.solve(x, inv_mass, [lim.min, lim.max], lim.tolerance)).is_ok();
        if ok {
            self.contacts.add_global(|v| g.friction_moves(v));
        }
        ok
    }

    /// Largest edge stretch and compression at `x` (dimensionless).
    pub fn edge_extremes(&self, x: &[Vec3]) -> (f64, f64) {
        self.edges.extremes(x)
    }
}
