//! Stage 3, assemble: every force term of the step's start state reaches the linear system
//! through this one path (Knowls 2 and 6):
//!
//! `A = M - h df/dv - h^2 df/dx`, `b = h (f0 + h df/dx v0 + df/dx y)`,
//!
//! where f, df/dx and df/dv sum the cloth's internal and external forces (`cloth-forces`,
//! evaluated once per start state and kept for retries), the cloth-cloth penalty springs (with
//! their Jacobians, once per start state), the garment stitch springs ([`crate::sewing::Sewing`]; with
//! their Jacobians, per attempt, as how far a step may close a stitch depends on h) and the
//! kinetic friction of sliding contacts (a force without Jacobian, per attempt).
//!
//! A Newton correction ([`Assembly::correction`]) assembles the same terms at a candidate end
//! state instead, with the backward Euler residual as right-hand side.

use super::constrain::Constraints;
use crate::error::SimError;
use crate::state::State;
use crate::stats::{Stopwatch, Timings};
use crate::system::ClothSystem;
use crate::world::World;
use cloth_forces::Evaluation;
use cloth_mesh::{Par, Vec3};
use cloth_solver::{AssemblyPlan, BlockMatrix, SolverError};
use nalgebra::Matrix3;
use rayon::prelude::*;

/// Force terms with Jacobian blocks outside the cloth's fixed element pattern: `forces` per
/// vertex (N) and `blocks` `(i, j, df/dx, df/dv)` with `i <= j`, which may couple vertices the
/// mesh does not (contact pairs).
#[derive(Default)]
pub(crate) struct ExtraTerms {
    pub forces: Vec<Vec3>,
    pub blocks: Vec<(usize, usize, Matrix3<f64>, Matrix3<f64>)>,
}

/// The linear system of a step and the force terms it is made of.
pub(crate) struct Assembly {
    /// Internal and external forces of the cloth and their Jacobians, in the model's entry
    /// order (fixed pattern).
    eval: Evaluation,
    /// Cloth-cloth penalty springs.
    extra: ExtraTerms,
    /// `extra` plus the garment stitch springs of the attempt being assembled.
    sewn: ExtraTerms,
    /// Whether `eval` and `extra` belong to the current start state.
    evaluated: bool,
    /// Whether a Newton correction evaluated the model into `eval` at its end state since:
    /// the start's model terms are then evaluated again for a retry (`extra` stays). One
    /// evaluation's Jacobians instead of two (for 100k vertices, ~50 MB per array).
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
    /// The contact and stitch terms at the end state of a Newton correction.
    end_terms: ExtraTerms,
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
            extra: ExtraTerms::default(),
            sewn: ExtraTerms::default(),
            evaluated: false,
            model_stale: false,
            matrix,
            pattern_changed: true,
            plan,
            diagonal: vec![Matrix3::zeros(); n],
            w: vec![Vec3::zeros(); n],
            kw: vec![Vec3::zeros(); n],
            b: vec![Vec3::zeros(); n],
            end_terms: ExtraTerms::default(),
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

    /// Evaluates the force terms at the start state when it is new, then assembles A and b for
    /// step size `h` with the attempt's constraints (alterations y and friction).
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &mut self,
        world: &World,
        state: &State,
        cons: &Constraints,
        h: f64,
        par: Par,
        timings: &mut Timings,
        sw: &mut Stopwatch,
    ) -> Result<(), SimError> {
        if !self.evaluated || self.model_stale {
            let sys = &world.cloth;
            sys.model.evaluate(&state.x, &state.v, &mut self.eval, par);
            sys.external
                .accumulate(&sys.model, &state.x, &state.v, &mut self.eval);
            self.model_stale = false;
            timings.eval += sw.lap();
        }
        if !self.evaluated {
            self.extra.blocks.clear();
            self.extra.forces.clear();
            self.extra.forces.resize(state.len(), Vec3::zeros());
            if let Some(sc) = &world.self_collision {
                sc.penalty(
                    &state.x,
                    &state.v,
                    &mut self.extra.forces,
                    &mut self.extra.blocks,
                );
                let masses = &world.cloth.masses;
                let (forces, blocks) = (&mut self.extra.forces, &mut self.extra.blocks);
                sc.friction(&state.x, &state.v, masses, h, forces, blocks);
                timings.cloth_cloth += sw.lap();
            }
            self.evaluated = true;
        }
        // The stitches depend on h (how far one step may close them), so they join the terms
        // of each attempt.
        let sewing = !world.sewing.is_empty();
        if sewing {
            let (terms, sys) = (&mut self.sewn, &world.cloth);
            terms.forces.clone_from(&self.extra.forces);
            terms.blocks.clone_from(&self.extra.blocks);
            let (f, blocks) = (&mut terms.forces, &mut terms.blocks);
            let gravity = &sys.external.gravity;
            world
                .sewing
                .add_terms(state, h, &sys.masses, gravity, f, blocks);
        }
        self.system(
            &state.v,
            &cons.y,
            &cons.friction,
            h,
            &world.cloth.masses,
            sewing,
        )?;
        timings.eval += sw.lap();
        Ok(())
    }

    /// `A = M - h df/dv - h^2 df/dx` and `b = h (f0 + friction) + h df/dx (h v0 + y)` from the
    /// evaluated terms (with the attempt's stitches when `sewing`).
    fn system(
        &mut self,
        v0: &[Vec3],
        y: &[Vec3],
        friction: &[Vec3],
        h: f64,
        masses: &[f64],
        sewing: bool,
    ) -> Result<(), SolverError> {
        for (d, &m) in self.diagonal.iter_mut().zip(masses) {
            *d = Matrix3::from_diagonal_element(m);
        }
        let h2 = h * h;
        let terms = if sewing { &self.sewn } else { &self.extra };
        if (terms.blocks.iter()).any(|e| self.matrix.block(e.0, e.1).is_none()) {
            self.grow_pattern(sewing)?;
        }
        let terms = if sewing { &self.sewn } else { &self.extra };
        let extra = &terms.blocks;
        // The model's entries are one per vertex pair: each block of A is made where it is
        // stored, with no array of combined blocks.
        let (dfdx, dfdv) = (self.eval.dfdx(), self.eval.dfdv());
        let block = |e: usize| -(dfdv[e] * h) - dfdx[e] * h2;
        (self.matrix).assemble_with(&self.plan, block, Some(&self.diagonal));
        for (i, j, kx, kv) in extra {
            self.matrix.add_block(*i, *j, &(-(kv * h) - kx * h2))?;
        }
        // b = h (f0 + extra) + h df/dx (h v0 + y)
        self.w
            .par_iter_mut()
            .zip(v0.par_iter().zip(y.par_iter()))
            .for_each(|(w, (v, y))| *w = v * h + y);
        self.eval.mul_dfdx(&self.w, &mut self.kw);
        for (i, j, kx, _) in extra {
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
        Ok(())
    }

    /// Assembles one Newton correction of a solved step of size `h` (Knowl 2 solved beyond
    /// its first linearisation): every force term is evaluated at the candidate `end`
    /// (positions `x0 + h (v0 + dv) + y`, velocities `v0 + dv`), `A` is assembled from their
    /// Jacobians there, and `b` is the residual of the backward Euler equations,
    /// `h f(end) - M dv`. The correction `A d = b`, with the constrained components of `d`
    /// zero, moves dv towards the nonlinear solution; for forces linear in x and v the residual
    /// is the solve's own. The start's cloth-cloth proximities and the attempt's kinetic
    /// friction are kept, and the stitches' closing bound is measured from the `start`
    /// positions. The start's contact terms stay for retries at other step sizes; its model
    /// terms are evaluated again then (the end's take their buffers).
    #[allow(clippy::too_many_arguments)]
    pub fn correction(
        &mut self,
        world: &World,
        start: &[Vec3],
        end: &State,
        dv: &[Vec3],
        friction: &[Vec3],
        h: f64,
        par: Par,
    ) -> Result<(), SimError> {
        let sys = &world.cloth;
        // The end state's model terms take the start's place (evaluated again for a retry).
        self.model_stale = true;
        sys.model.evaluate(&end.x, &end.v, &mut self.eval, par);
        sys.external
            .accumulate(&sys.model, &end.x, &end.v, &mut self.eval);
        let terms = &mut self.end_terms;
        terms.forces.clear();
        terms.forces.resize(end.len(), Vec3::zeros());
        terms.blocks.clear();
        let (forces, blocks) = (&mut terms.forces, &mut terms.blocks);
        if let Some(sc) = &world.self_collision {
            sc.penalty(&end.x, &end.v, forces, blocks);
            sc.friction(&end.x, &end.v, &sys.masses, h, forces, blocks);
        }
        if !world.sewing.is_empty() {
            let gravity = &sys.external.gravity;
            let (sewing, masses) = (&world.sewing, &sys.masses);
            sewing.add_terms_from(end, start, h, masses, gravity, forces, blocks);
        }
        // The end state's terms take the start's place while A is assembled (its b is then
        // replaced by the residual).
        std::mem::swap(&mut self.extra, &mut self.end_terms);
        let zeros = vec![Vec3::zeros(); end.len()];
        let assembled = self.system(&end.v, &zeros, friction, h, &sys.masses, false);
        std::mem::swap(&mut self.extra, &mut self.end_terms);
        assembled?;
        let ef = &self.end_terms.forces;
        self.b
            .par_iter_mut()
            .zip(self.eval.forces.par_iter().zip(ef.par_iter()))
            .zip(
                friction
                    .par_iter()
                    .zip(dv.par_iter().zip(sys.masses.par_iter())),
            )
            .for_each(|((b, (f, fe)), (ff, (dv, m)))| *b = (f + fe + ff) * h - dv * *m);
        Ok(())
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

    /// Adds the off-diagonal pairs of the extra terms (with the attempt's stitches when
    /// `sewing`) to the matrix pattern and rebuilds the plan; the pattern stays grown.
    fn grow_pattern(&mut self, sewing: bool) -> Result<(), SolverError> {
        let matrix = &self.matrix;
        let terms = if sewing { &self.sewn } else { &self.extra };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::ClothSystem;
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
        let (par, h) = (Par::default(), 0.01);
        let mut asm = Assembly::new(&world.cloth, par).unwrap();
        let (mut timings, mut sw) = (Timings::default(), Stopwatch::start());
        asm.run(&world, &state, &cons, h, par, &mut timings, &mut sw)
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
        let zeros = vec![Vec3::zeros(); n];
        asm.correction(&world, &state.x, &end, &dv, &zeros, h, par)
            .unwrap();
        assert_ne!(
            snapshot(&asm),
            first,
            "the end state's system differs from the start's"
        );
        // ...and a retry from the same start gets the start's system back, bit for bit.
        asm.run(&world, &state, &cons, h, par, &mut timings, &mut sw)
            .unwrap();
        assert_eq!(snapshot(&asm), first);
    }
}
