//! The explicit alternative of the second seed ("maximum stretch and bending springs"):
//! position Verlet on a mass-spring network built from the same mesh, with the iterated
//! maximum-stretch pass solved until it holds.
//!
//! # One step of size h
//!
//! 1. **Predict** (explicit): every free vertex moves by its damped velocity and gravity,
//!    `y = x + h v* `, `v* = ((1 - d h) v + h g + h c w) / (1 + c h)` (damping rate `d`, air
//!    drag rate `c = drag A / m` towards the wind `w`, taken implicitly); pinned vertices go
//!    to their targets at `t + h`.
//! 2. **Detect**: vertices near a collider (placed at `t + h`) get a contact plane.
//! 3. **Project**: sweeps, each one an exact projection onto the stretch limits of a spanning
//!    tree of the edges rooted at the pins (`tree`; or long-range attachments, `tether`, or
//!    nothing, see [`LongRange`]), then one Gauss-Seidel pass over the edge and bending pairs
//!    in a fixed colour order (`pairs`: springs, maximum stretch and compression) and one over
//!    the contact planes (`verlet_contact`). The spring rows take part in the first
//!    [`VerletSettings::spring_sweeps`] sweeps only; the sweeps go on until every edge is
//!    within `[min, max]` times its rest length to the tolerance, or the iteration cap. After
//!    [`VerletSettings::global_after`] sweeps, each sweep ends with up to four global
//!    projections (`global`: a sparse Cholesky solve over every edge at or beyond its limit
//!    and the contact planes) after the contact planes, whose rows then only push out (see
//!    "Contacts in the global phase"); friction acts in the first 250 sweeps, and a vertex
//!    it holds moves only along its plane's normal in the global solve (see "Friction in
//!    the global phase").
//! 4. **Velocity**: `v = (x_new - x) / h`, what the projection left (position-based Verlet);
//!    the next prediction damps that velocity.
//!
//! The springs are solved with the limits rather than applied as explicit forces. An explicit
//! spring of stiffness k on a vertex of mass m is stable only for `h < 2 sqrt(m / sum k)`
//! (1e-3 s for the shipped 21 x 21 hanging sheet, about 3e-4 s at 51 x 51): beyond it each
//! step overshoots, the limit catches the edge at 90% or 110%, and the next step throws it to
//! the other limit, a flutter of `0.2 L / h` that damping never removes. Solved in the
//! projection (compliance `1 / (k h^2)`, backward Euler) the springs keep their stiffness at
//! small steps and dissipate instead of feeding energy in at large ones; see `pairs` for the
//! rows and why the problem each step solves is convex. At large steps a few sweeps do not
//! solve the springs exactly (they come out softer than `k`, and more damped); they are
//! soft by design, and the limit, which is iterated to the tolerance, is what holds the shape.
//!
//! # Energy
//!
//! Each step is, when solved exactly, the minimisation of `|x - y|^2_M / (2 h^2) + U(x)`
//! over the set the limits and contact planes allow, `U` the springs' energy with the
//! compression part measured along the frozen direction (convex, equal to the true spring
//! energy at the start of the step and above it elsewhere). For a convex `U` and a start inside
//! the allowed set (itself convex) the kinetic plus spring energy after the step is at most
//! what it was before plus the work of gravity: the bending springs, which have no limit, and
//! the projection cannot add energy. The tests check this on random states of the actual,
//! iterated projection (`tests/verlet.rs`). Warm-starting the multipliers from the previous
//! step broke it (the hanging sheet's kinetic energy exceeded twice the energy gravity had
//! released at every step from 1/240 to 1/30 s) and is not done.
//!
//! # Why the spanning tree
//!
//! Sweeps to reach the 0.5% tolerance, the hanging sheet of `scenes/hanging_verlet.toml` at
//! 51 x 51 (0.5 m, 1 cm edges, pinned along one edge, 50 N/m springs, 5 N/m bending springs)
//! falling from horizontal over its first second, one step per frame, cap raised to 5000
//! (`cargo run --release -p cloth-sim --example verlet_iterations`, 2-core AMD EPYC):
//!
//! | h (s) | long range | mean sweeps/step | max | capped steps | ms/step |
//! |---|---|---|---|---|---|
//! | 1/240 | none | 96.5 | 586 | 0 | 28.6 |
//! | 1/240 | tethers | 60.8 | 259 | 0 | 22.7 |
//! | 1/240 | tree | 8.2 | 19 | 0 | 6.4 |
//! | 1/120 | none | 654.3 | 1417 | 0 | 253.5 |
//! | 1/120 | tethers | 850.5 | 1916 | 0 | 410.5 |
//! | 1/120 | tree | 15.0 | 24 | 0 | 11.8 |
//! | 1/60 | none | 1494.0 | 2477 | 0 | 641.1 |
//! | 1/60 | tethers | 2778.1 | 5000 | 3 | 2374.8 |
//! | 1/60 | tree | 22.9 | 34 | 0 | 11.2 |
//! | 1/30 | none | 2587.6 | 3655 | 0 | 2838.7 |
//! | 1/30 | tethers | 4151.3 | 5000 | 21 | 4280.5 |
//! | 1/30 | tree | 85.3 | 159 | 0 | 55.9 |
//!
//! Gauss-Seidel alone moves a correction about one edge per sweep, so a hanging sheet needs
//! sweeps in proportion to the length of the chain below the pins, and more the further a
//! step lets it fall. Long-range attachments bind only where the path to the pin is straight
//! and fight the edges where it is not. The tree projection lifts every chain below the pins
//! at once (linear time, exact for the tree's edges), leaving the sweeps the sideways detail:
//! 10 to 30 times fewer sweeps, and a cap of 200 is never reached. Over-relaxation
//! (omega 1.5 or 1.8) made the sweeps slower on this sheet (1176 and 1247 mean sweeps at
//! 1/30 s against 85 at omega 1), so the default is plain Gauss-Seidel. The colour order makes
//! a sweep parallel (batches of pairs that share no vertex) and the same for every thread
//! count.
//!
//! # Why the global projection, and why only after 50 sweeps
//!
//! Where the tree does not help, the sweeps alone need many iterations at large steps: the
//! drape on a sphere (`drape_sphere.toml`, 31 x 31) needs 4.9 / 32.5 / 235 / 840 mean sweeps
//! at 1/240 / 1/120 / 1/60 / 1/30 s (one step of 30 above the tolerance at 5000 sweeps), and
//! the sheet held at two corners (`fixed_sheet.toml`, 51 x 51), whose top edge is a taut chain
//! between two pins that no tree spans, 100 / 345 / 934 / 3323 (11 steps of 30 above the
//! tolerance at 5000 sweeps, up to 58% stretch). With global projections (the `global`
//! module) every step of both reaches the tolerance, in 5 to 90 mean sweeps, but each
//! projection costs one or two sparse factorisations (5 to 20 ms at 51 x 51 on a shared
//! 2-core AMD EPYC) and at large steps tens to hundreds of them are needed per step, since
//! the regularised Newton iterations converge linearly there. Measured (ms per step, sweeps
//! only / global from the start / global after 20 sweeps): fixed sheet 40 / 88 / 58 at
//! 1/240 s, 583 / 1544 / 1360 at 1/60 s, 1568 (not holding) / 4855 / 3876 at 1/30 s; drape
//! 25 / 578 / 528 at 1/60 s, 107 (not holding) / 1452 / 1924 at 1/30 s; hanging sheet 11 /
//! 362 / 35 at 1/60 s, 56 / 874 / 802 at 1/30 s. The global projection is therefore the
//! fallback, after [`DEFAULT_GLOBAL_AFTER`] = 50 sweeps: the cheap path is unchanged for every
//! step it finishes in 50 sweeps, and the steps it cannot finish now hold the limit. The
//! full tables are in `docs/verlet.md`. A step that still ends above the tolerance reports the
//! violation left in `stats.json` (`strain_violation`).
//!
//! # Contacts in the global phase
//!
//! The 51 x 51 drape on a sphere at 1/30 s ended one step (t = 3.1 s) at 0.79% after 500
//! sweeps. Dumping the state before it and the worst edges of every sweep showed two causes,
//! both at the floor, both a fight between the global projection and the contact sweep:
//!
//! - **Planes outside the global solve.** The worst edges were compressed (0.892), running
//!   from a vertex on the floor to one 1.6 cm above it. The compression row lengthens an
//!   edge along its frozen direction, which points into the floor; the contact sweep pushed
//!   the vertex back up, and the two half-spaces, met alternately, converged at the rate of
//!   alternating projections at a small angle (the floor vertices' rows pushed them out by
//!   1.4 m in total over the 500 sweeps). Fix: the planes are rows of the global solve
//!   (`global`), which slides such a vertex along the floor.
//! - **Contact rows giving back their push.** A row's accumulated push (its multiplier) is
//!   released when the vertex is above the plane; after the global projection lifted a floor
//!   vertex 0.5 mm to shorten the edge above it, its row pulled it back down, every sweep
//!   from 51 on, until its 10.6 cm of push was used up at sweep 238, where the step (ending
//!   at t = 2.867 s) ended (the edge back at 1.12 to 1.13 after every sweep). Fix: in the
//!   global phase the rows only push out (`verlet_contact`).
//!
//! Measured from the same states (the 51 x 51 drape at 1/30 s, sweeps / global solves /
//! violation left; the cap is 500):
//!
//! | step ending at | before | planes in the solve | rows push only | both |
//! |---|---|---|---|---|
//! | 2.867 s | 238 / 752 / 0.335% | | 105 / 220 / 0.483% | 94 / 176 / 0.482% |
//! | 3.1 s | 500 / 1242 / 0.792% | 234 / 648 / 0.486% | 500 / 1186 / 0.870% | 74 / 96 / 0.469% |
//!
//! Each alone is not enough; together the steps that needed hundreds of sweeps take about
//! 100. Restricting plane-held vertices to their planes in the global solve (tried first)
//! held past 3.1 s but left 1.06% at 3.53 s: it keeps a vertex on its plane even where the
//! limit would lift it off, and leaves the release in place (not examined further).
//!
//! Whole runs with both (5 s, 51 x 51): at 1/30 s the limit held at every step, but the
//! test's energy-decay check failed (mean kinetic energy in the fifth second 19.7% of the
//! peak: the sheet slid off the ball, as it already did, faster, before the fix, and fell
//! to the floor between 4 and 4.6 s, at rest there by 4.67 s); at 1/60 s no step was above
//! the tolerance or at the cap (mean 59 sweeps a step). The slide is the next section's.
//! Details in `docs/verlet.md`.
//!
//! # Friction in the global phase
//!
//! Until then friction acted only in the sweeps before the global projections (acting after
//! them it undid, in every sweep, what they moved, and the limit was not reached). Measured
//! on the 51 x 51 drape at 1/30 s settled on the ball (t = 1.5 to 1.8 s, about 950 vertices
//! touching it, kinetic energy under 2e-4 J): in every step the vertices touching the ball
//! moved 5.1 mm (mean, tangentially, mostly downhill) from the step's start to the end of
//! the 50 sweeps, which have not yet carried the tension that holds the sheet up, so that
//! friction (`mu` = 0.3 times the push, against gravity's pull along slopes steeper than
//! 17 degrees) cannot hold them alone; the global phase, without friction, put them back by
//! as much. Where the sheet stays was thus decided by a projection without friction, and
//! the steps' sideways residue (summed over the vertices, about -0.13 m in x and +0.13 m
//! in z after the sweeps against +0.06 and +0.04 m back in the global phase) grew into the
//! slide: the sheet's centroid 3.6 mm off the axis at 2 s, 17 mm at 3 s, 55 mm at 3.6 s.
//! At 1/240 and 1/120 s the steps end within the 50 sweeps, with friction, and the same
//! sheet does not slide (mean kinetic energy over the fifth second 0.0% of the peak). The
//! slide is an artefact of the projection, not of the scene: by symmetry the centred sheet
//! needs no friction to stay, and against a push to one side the capstan estimate for a
//! band over a half turn (a strip hanging over a cylinder) holds it until one side pulls
//! `e^(0.3 pi)` = 2.6 times the other.
//!
//! Now friction acts in every sweep, and in the global phase the contact sweep comes before
//! the global projections, which hold the vertices friction holds: in the solve such a
//! vertex moves along its plane's normal only (its inverse mass `w` becomes `w n n^T`), so
//! that the solve does not undo what friction keeps and the two no longer fight. What a
//! hold prevents (the tangential move the solve would have made) counts as a friction
//! correction of the contact row, so that Coulomb's law holds over the step: once the pulls
//! add up to more than `mu` times the push, the contact sweep lets the vertex slide. Within
//! a solve a held vertex whose edges pull it along the plane by more than the budget left,
//! or whose plane no longer presses it (the limit lifts it off), is let go (see `global`).
//! Judged per solve instead, without the accounting, the holds made the limit unreachable
//! (1.67% left at t = 0.3 s after 500 sweeps); with the solves' normal pushes added to the
//! budget the impact step ending at t = 0.233 s needed 428 sweeps instead of 116.
//!
//! The holds make the global solve stiffer: with friction in every sweep a settled step of
//! the same drape ended at the cap of 500 sweeps with 0.73% left (t = 1.67 s). The strain
//! limit comes first: friction acts in the first [`FRICTION_SWEEPS`] = 250 sweeps of a step,
//! and a step that has not reached the tolerance by then finishes without it (keeping its
//! corrections), as before; without friction in the global phase no step of that drape
//! needed more than 278 sweeps. Measured figures are in `docs/verlet.md`.

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
    /// the cap on sweeps of the projection (default: `[0.9, 1.1]`, 0.5%, [`DEFAULT_VERLET_ITERATIONS`] sweeps).
    pub strain_limit: StrainLimit,
    /// Over-relaxation factor of the projection's updates, in (0, 2) (default 1: plain
    /// Gauss-Seidel; measured, over-relaxation slows the projection down here, see the module
    /// documentation).
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
/// [`VerletSettings::default`]). Measured: the drape on a sphere at 51 x 51 and 1/60 s needs
/// up to 239 sweeps (mean 87) to reach the 0.5% tolerance at every step; with a cap of 200
/// one step ended at 0.503%. A step that holds its limit sooner stops there, so the cap costs
/// only the steps that need it.
pub const DEFAULT_VERLET_ITERATIONS: usize = 500;

/// Default [`VerletSettings::spring_sweeps`].
pub const DEFAULT_SPRING_SWEEPS: usize = 4;

/// Most global solves (Newton iterations) in one sweep of the projection.
const GLOBAL_SOLVES_PER_SWEEP: usize = 4;

/// Sweeps of a step in which contact friction acts (and holds vertices in the global
/// projections); a step that has not reached the tolerance by then lets friction go, keeping
/// the corrections made, and finishes as before friction held in the global phase: the strain
/// limit comes first. Measured on the 51 x 51 drape at 1/30 s: with friction in every sweep
/// a settled step ended at the cap of 500 with 0.73% left (t = 1.67 s); without friction in
/// the global phase no step needed more than 278 sweeps, so half the cap leaves room.
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
            // push out (see "Friction in the global phase" and `verlet_contact`).
            let global = info.iterations >= first_global;
            let friction = info.iterations <= FRICTION_SWEEPS;
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
