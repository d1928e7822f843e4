//! Stage 3, assemble: every force term reaches the linear system through this one path
//! (paper §3 and §6.2). At the step's start ([`Linearization::Start`]):
//!
//! `A = M - h df/dv - h^2 df/dx`, `b = h (f0 + h df/dx v0 + df/dx y)`,
//!
//! where f, df/dx and df/dv sum the cloth's internal and external forces (`cloth-forces`,
//! evaluated once per start state and kept for retries), the cloth-cloth penalty springs (with
//! their Jacobians, once per start state), the garment stitch springs
//! ([`crate::sewing::Sewing`]; with their Jacobians, per attempt, as how far a step may close a
//! stitch depends on h) and the kinetic friction of sliding contacts (a force without
//! Jacobian, per attempt).
//!
//! For a Newton correction ([`Linearization::End`]) the same terms are evaluated at the
//! attempt's candidate end state, `A` is assembled from their Jacobians there, and `b` is the
//! residual of the backward Euler equations.

use super::attempt::Attempt;
use super::constrain::Constraints;
use crate::error::SimError;
use crate::state::State;
use crate::stats::Clock;
use crate::system::{ClothSystem, ExtraTerms};
use crate::world::World;
use cloth_forces::Evaluation;
use cloth_mesh::{Par, Vec3};
use cloth_solver::{AssemblyPlan, BlockMatrix, SolverError};
use nalgebra::Matrix3;
use rayon::prelude::*;

/// Where the system is linearised.
#[derive(Clone, Copy)]
pub(crate) enum Linearization<'a> {
    /// At the step's start: the paper's step.
    Start,
    /// At the candidate end state `end` (positions `x0 + h (v0 + dv) + y`, velocities
    /// `v0 + dv`) of a solved attempt whose velocity change is `dv`: a Newton correction.
    End {
        /// The candidate end state.
        end: &'a State,
        /// The attempt's velocity change (m/s).
        dv: &'a [Vec3],
    },
}

/// Which set of extra terms a system is assembled with.
#[derive(Clone, Copy)]
enum Terms {
    /// The start state's contact terms.
    Start,
    /// The start state's contact terms with the attempt's stitches.
    Sewn,
    /// The contact and stitch terms at a Newton correction's end state.
    End,
}

/// The sets of extra terms an assembly keeps, one per [`Terms`].
#[derive(Default)]
struct TermSets {
    /// Cloth-cloth penalty springs and friction at the start state.
    start: ExtraTerms,
    /// `start` plus the garment stitch springs of the attempt being assembled.
    sewn: ExtraTerms,
    /// The contact and stitch terms at the end state of a Newton correction.
    end: ExtraTerms,
}

impl TermSets {
    fn get(&self, which: Terms) -> &ExtraTerms {
        match which {
            Terms::Start => &self.start,
            Terms::Sewn => &self.sewn,
            Terms::End => &self.end,
        }
    }
}

/// The linear system of a step and the force terms it is made of.
pub(crate) struct Assembly {
    /// Internal and external forces of the cloth and their Jacobians, in the model's entry
    /// order (fixed pattern).
    eval: Evaluation,
    /// Force terms outside the model's pattern.
    terms: TermSets,
    /// Whether `eval` and the start's extra terms belong to the current start state.
    evaluated: bool,
    /// Whether a Newton correction evaluated the model into `eval` at its end state since:
    /// the start's model terms are then evaluated again for a retry (its extra terms stay). One
    /// evaluation's Jacobians are kept instead of two (each array is large).
    model_stale: bool,
    /// Off-diagonal vertex pairs of the matrix pattern (mesh pairs plus contact pairs seen).
    pairs: Vec<(usize, usize)>,
    pub matrix: BlockMatrix,
    /// Whether the pattern changed since the solver last saw it.
    pub pattern_changed: bool,
    plan: AssemblyPlan,
    diagonal: Vec<Matrix3<f64>>,
    w: Vec<Vec3>,
    kw: Vec<Vec3>,
    pub b: Vec<Vec3>,
}

impl Assembly {
    /// Builds the pattern from the mesh's vertex pairs and a first evaluation's entries.
    pub fn new(sys: &ClothSystem, par: Par) -> Result<Self, SolverError> {
        let n = sys.num_vertices();
        let mut eval = Evaluation::default();
        sys.model
            .evaluate(&sys.x0, &vec![Vec3::zeros(); n], &mut eval, par);
        let pairs = sys.mesh.vertex_pairs().to_vec();
        let matrix = BlockMatrix::new(n, &pairs)?;
        let plan = matrix.plan(eval.entries())?;
        Ok(Self {
            pairs,
            eval,
            terms: TermSets::default(),
            evaluated: false,
            model_stale: false,
            matrix,
            pattern_changed: true,
            plan,
            diagonal: vec![Matrix3::zeros(); n],
            w: vec![Vec3::zeros(); n],
            kw: vec![Vec3::zeros(); n],
            b: vec![Vec3::zeros(); n],
        })
    }

    /// Forgets the evaluation: the next [`Assembly::run`] evaluates the forces again.
    pub fn invalidate(&mut self) {
        self.evaluated = false;
    }

    /// Whether the next run evaluates forces (the start state is new).
    pub fn needs_eval(&self) -> bool {
        !self.evaluated
    }

    /// Assembles A and b of the attempt `ctx` linearised `at` its start or its candidate end,
    /// with the attempt's constraints (alterations y, kinetic friction).
    pub fn run(
        &mut self,
        ctx: &Attempt,
        at: Linearization,
        cons: &Constraints,
        clock: &mut Clock,
    ) -> Result<(), SimError> {
        let (h, masses) = (ctx.h, &ctx.world.cloth.masses);
        let terms = match at {
            Linearization::Start => self.start_terms(ctx, clock),
            Linearization::End { end, .. } => self.end_terms(ctx, end),
        };
        self.matrix(terms, h, masses)?;
        match at {
            Linearization::Start => self.rhs(terms, &ctx.state.v, &cons.y, &cons.friction, h),
            Linearization::End { dv, .. } => self.residual(&cons.friction, dv, h, masses),
        }
        clock.eval();
        Ok(())
    }

    /// Evaluates the force terms at the start state when it is new (the model's again after a
    /// Newton correction), and the attempt's stitches, which depend on h.
    fn start_terms(&mut self, ctx: &Attempt, clock: &mut Clock) -> Terms {
        let (world, state, h) = (ctx.world, ctx.state, ctx.h);
        let par = ctx.settings.par;
        if !self.evaluated || self.model_stale {
            evaluate_model(&world.cloth, state, &mut self.eval, par);
            self.model_stale = false;
            clock.eval();
        }
        if !self.evaluated {
            contact_terms(world, state, h, &mut self.terms.start);
            if world.self_collision.is_some() {
                clock.cloth_cloth();
            }
            self.evaluated = true;
        }
        if world.sewing.is_empty() {
            return Terms::Start;
        }
        // The stitches depend on h (how far one step may close them), so they join the terms
        // of each attempt.
        let (sets, sys) = (&mut self.terms, &world.cloth);
        sets.sewn.forces.clone_from(&sets.start.forces);
        sets.sewn.blocks.clone_from(&sets.start.blocks);
        let gravity = &sys.external.gravity;
        world
            .sewing
            .add_terms(state, h, &sys.masses, gravity, &mut sets.sewn);
        Terms::Sewn
    }

    /// Evaluates every force term at the candidate `end` of a Newton correction: the end
    /// state's model terms take the start's place (evaluated again for a retry), and the
    /// stitches' closing bound is measured from the start positions. The start's contact terms
    /// stay for retries at other step sizes.
    fn end_terms(&mut self, ctx: &Attempt, end: &State) -> Terms {
        let (world, h) = (ctx.world, ctx.h);
        let sys = &world.cloth;
        self.model_stale = true;
        evaluate_model(sys, end, &mut self.eval, ctx.settings.par);
        let terms = &mut self.terms.end;
        contact_terms(world, end, h, terms);
        if !world.sewing.is_empty() {
            let gravity = &sys.external.gravity;
            let (sewing, masses) = (&world.sewing, &sys.masses);
            sewing.add_terms_from(end, &ctx.state.x, h, masses, gravity, terms);
        }
        Terms::End
    }

    /// `A = M - h df/dv - h^2 df/dx` from the evaluated model and the extra terms `which`.
    fn matrix(&mut self, which: Terms, h: f64, masses: &[f64]) -> Result<(), SolverError> {
        for (d, &m) in self.diagonal.iter_mut().zip(masses) {
            *d = Matrix3::from_diagonal_element(m);
        }
        let h2 = h * h;
        let terms = self.terms.get(which);
        if (terms.blocks.iter()).any(|e| self.matrix.block(e.0, e.1).is_none()) {
            self.grow_pattern(which)?;
        }
        // The model's entries are one per vertex pair: each block of A is made where it is
        // stored, with no array of combined blocks.
        let (dfdx, dfdv) = (self.eval.dfdx(), self.eval.dfdv());
        let block = |e: usize| -(dfdv[e] * h) - dfdx[e] * h2;
        (self.matrix).assemble_with(&self.plan, block, Some(&self.diagonal));
        for (i, j, kx, kv) in &self.terms.get(which).blocks {
            self.matrix.add_block(*i, *j, &(-(kv * h) - kx * h2))?;
        }
        Ok(())
    }

    /// `b = h (f0 + friction) + h df/dx (h v0 + y)` from the evaluated terms `which`.
    fn rhs(&mut self, which: Terms, v0: &[Vec3], y: &[Vec3], friction: &[Vec3], h: f64) {
        self.w
            .par_iter_mut()
            .zip(v0.par_iter().zip(y.par_iter()))
            .for_each(|(w, (v, y))| *w = v * h + y);
        self.eval.mul_dfdx(&self.w, &mut self.kw);
        let terms = self.terms.get(which);
        for (i, j, kx, _) in &terms.blocks {
            self.kw[*i] += kx * self.w[*j];
            if i != j {
                self.kw[*j] += kx.transpose() * self.w[*i];
            }
        }
        let ef = &terms.forces;
        self.b
            .par_iter_mut()
            .zip(self.eval.forces.par_iter().zip(self.kw.par_iter()))
            .zip(ef.par_iter().zip(friction.par_iter()))
            .for_each(|((b, (f, kw)), (fe, ff))| *b = (f + (fe + ff) + kw) * h);
    }

    /// The residual of the backward Euler equations at a Newton correction's end state,
    /// `b = h f(end) - M dv`: a correction `A d = b` with the constrained components of `d`
    /// zero moves dv towards the nonlinear solution (for forces linear in x and v the residual
    /// is the first solve's own). The attempt's kinetic `friction` is kept.
    fn residual(&mut self, friction: &[Vec3], dv: &[Vec3], h: f64, masses: &[f64]) {
        let ef = &self.terms.end.forces;
        self.b
            .par_iter_mut()
            .zip(self.eval.forces.par_iter().zip(ef.par_iter()))
            .zip(
                friction
                    .par_iter()
                    .zip(dv.par_iter().zip(masses.par_iter())),
            )
            .for_each(|((b, (f, fe)), (ff, (dv, m)))| *b = (f + fe + ff) * h - dv * *m);
    }

    /// The off-diagonal vertex pairs of the matrix pattern (the mesh's plus contact pairs seen).
    pub fn pattern(&self) -> &[(usize, usize)] {
        &self.pairs
    }

    /// Rebuilds the matrix on exactly these off-diagonal pairs (sorted, unique; a superset of
    /// the mesh's), as saved by [`Assembly::pattern`].
    pub fn set_pattern(&mut self, pairs: &[(usize, usize)]) -> Result<(), SolverError> {
        let matrix = BlockMatrix::new(self.matrix.n(), pairs)?;
        self.plan = matrix.plan(self.eval.entries())?;
        self.matrix = matrix;
        self.pairs = pairs.to_vec();
        self.pattern_changed = true;
        Ok(())
    }

    /// Adds the off-diagonal pairs of the extra terms `which` to the matrix pattern and
    /// rebuilds the plan; the pattern stays grown.
    fn grow_pattern(&mut self, which: Terms) -> Result<(), SolverError> {
        let (matrix, terms) = (&self.matrix, self.terms.get(which));
        self.pairs.extend(
            terms
                .blocks
                .iter()
                .filter(|e| e.0 != e.1 && matrix.block(e.0, e.1).is_none())
                .map(|e| (e.0.min(e.1), e.0.max(e.1))),
        );
        self.pairs.sort_unstable();
        self.pairs.dedup();
        let grown = BlockMatrix::new(self.matrix.n(), &self.pairs)?;
        // The element entries keep their blocks: the plan is carried over, not rebuilt.
        self.plan = self.plan.regrown(&self.matrix, &grown)?;
        self.matrix = grown;
        self.pattern_changed = true;
        Ok(())
    }
}

/// The cloth's internal and external forces and their Jacobians at `s`, into `eval`.
fn evaluate_model(sys: &ClothSystem, s: &State, eval: &mut Evaluation, par: Par) {
    sys.model.evaluate(&s.x, &s.v, eval, par);
    sys.external.accumulate(&sys.model, &s.x, &s.v, eval);
}

/// The cloth-cloth penalty springs and friction between layers at `s` for a step of size `h`,
/// into `terms` (emptied first; zero forces without self-collision).
fn contact_terms(world: &World, s: &State, h: f64, terms: &mut ExtraTerms) {
    terms.forces.clear();
    terms.forces.resize(s.len(), Vec3::zeros());
    terms.blocks.clear();
    if let Some(sc) = &world.self_collision {
        let (forces, blocks) = (&mut terms.forces, &mut terms.blocks);
        sc.penalty(&s.x, &s.v, forces, blocks);
        sc.friction(&s.x, &s.v, &world.cloth.masses, h, forces, blocks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::implicit::settings::ImplicitSettings;
    use cloth_forces::{ClothModel, Definiteness, External, Material};
    use cloth_mesh::{GridPattern, grid};

    /// Every block of the pattern and b, to compare two assemblies bit for bit.
    fn snapshot(a: &Assembly) -> (Vec<Matrix3<f64>>, Vec<Vec3>) {
        let n = a.matrix.n();
        let mut blocks: Vec<Matrix3<f64>> = (0..n).map(|i| a.matrix.diagonal_block(i)).collect();
        blocks.extend(a.pairs.iter().filter_map(|&(i, j)| a.matrix.block(i, j)));
        (blocks, a.b.clone())
    }

    #[test]
    fn a_retry_after_a_newton_correction_assembles_the_starts_system_again() {
        let mesh = grid(6, 6, 0.3, 0.3, GridPattern::Alternating).unwrap();
        let model = ClothModel::new(&mesh, &Material::default(), Definiteness::default()).unwrap();
        let system = ClothSystem::new(mesh, model, External::default()).unwrap();
        let world = World::new(system, Vec::new()).unwrap();
        let n = world.cloth.num_vertices();
        // A bent, moving start state, so that its forces and Jacobians are not the rest's.
        let x: Vec<Vec3> = (world.cloth.x0.iter())
            .map(|p| p + Vec3::new(0.0, 0.2 * (7.0 * p.x).sin() * p.z, 0.01 * p.x))
            .collect();
        let v: Vec<Vec3> = x.iter().map(|p| Vec3::new(0.0, -p.x, 0.3 * p.z)).collect();
        let state = State { x, v, t: 0.0 };
        let cons = Constraints::new(n);
        let (settings, h) = (ImplicitSettings::default(), 0.01);
        let ctx = Attempt {
            world: &world,
            state: &state,
            h,
            settings: &settings,
        };
        let mut asm = Assembly::new(&world.cloth, settings.par).unwrap();
        let mut clock = Clock::start();
        asm.run(&ctx, Linearization::Start, &cons, &mut clock)
            .unwrap();
        let first = snapshot(&asm);
        // A correction at a candidate end state far from the start replaces the system...
        let dv: Vec<Vec3> = (0..n)
            .map(|i| Vec3::new(0.1, -0.5, 0.02 * i as f64))
            .collect();
        let end = State {
            x: (state.x.iter().zip(&state.v).zip(&dv))
                .map(|((x, v), dv)| x + (v + dv) * h)
                .collect(),
            v: state.v.iter().zip(&dv).map(|(v, dv)| v + dv).collect(),
            t: h,
        };
        // (The constraints' kinetic friction is zero.)
        let at = Linearization::End { end: &end, dv: &dv };
        asm.run(&ctx, at, &cons, &mut clock).unwrap();
        assert_ne!(
            snapshot(&asm),
            first,
            "the end state's system differs from the start's"
        );
        // ...and a retry from the same start gets the start's system back, bit for bit.
        asm.run(&ctx, Linearization::Start, &cons, &mut clock)
            .unwrap();
        assert_eq!(snapshot(&asm), first);
    }
}
