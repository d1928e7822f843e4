//! Stage 4, solve: `A dv = b` with the constrained components of dv equal to z, by the modified
//! PCG (paper §5.3) or the direct reference solve, then the constraint forces
//! `e = A dv - b` (paper §5.4).

use super::assemble::Assembly;
use super::attempt::Attempt;
use super::constrain::Constraints;
use super::settings::LinearSolver;
use crate::error::{Reject, SimError};
use cloth_mesh::{Par, Vec3};
use cloth_solver::{
    DirectSolver, Multigrid, MultigridParams, PcgInfo, PcgParams, PcgWorkspace, SolverError, System,
};

/// The solution of a step's linear system and the solvers' reusable scratch.
pub(crate) struct Solution {
    /// Velocity change (m/s).
    pub dv: Vec<Vec3>,
    /// Constraint impulses `A dv - b` (N*s); divide by h for forces.
    pub e: Vec<Vec3>,
    pcg: PcgWorkspace,
    /// Ordering and symbolic factorisation for the direct solver, made on first use and kept
    /// while the pattern stays the same.
    direct: Option<DirectSolver>,
    /// The multigrid hierarchy, made on first use and kept while the pattern stays the same.
    multigrid: Option<Multigrid>,
}

impl Solution {
    pub fn new(n: usize) -> Self {
        Self {
            dv: vec![Vec3::zeros(); n],
            e: vec![Vec3::zeros(); n],
            pcg: PcgWorkspace::default(),
            direct: None,
            multigrid: None,
        }
    }

    /// Forgets the multigrid hierarchy (its aggregates depend on the matrix values it was built
    /// from): the next multigrid solve builds a fresh one.
    pub fn drop_history(&mut self) {
        self.multigrid = None;
    }

    /// Solves the assembled system of the attempt `ctx` with `solver`. `Ok(Err(reject))` when
    /// the attempt should be retried with a smaller step (loss of definiteness, failed
    /// factorisation); `Err` for failures no step size fixes.
    pub fn run(
        &mut self,
        ctx: &Attempt,
        solver: &LinearSolver,
        asm: &mut Assembly,
        cons: &Constraints,
    ) -> Result<Result<PcgInfo, Reject>, SimError> {
        let (x, par) = (&ctx.state.x, ctx.settings.par);
        if asm.pattern_changed {
            self.direct = None;
            self.multigrid = None;
            asm.pattern_changed = false;
        }
        let solved = match solver {
            LinearSolver::Mpcg(params) => {
                let sys = System::new(&asm.matrix, &asm.b, &cons.z, &cons.kind);
                cloth_solver::solve_mpcg(&mut self.dv, &sys, params, par, &mut self.pcg)
            }
            LinearSolver::Multigrid(params, mg) => self.multigrid(asm, cons, x, params, mg, par),
            LinearSolver::Direct => self.direct(asm, cons),
        };
        match solved {
            Ok(info) => {
                cloth_solver::constraint_forces(&asm.matrix, &self.dv, &asm.b, &mut self.e);
                Ok(Ok(info))
            }
            Err(SolverError::NotPositiveDefinite { iteration, .. }) => {
                Ok(Err(Reject::NotPositiveDefinite { iteration }))
            }
            Err(SolverError::Factorization { detail }) => Ok(Err(Reject::Factorization { detail })),
            Err(other) => Err(other.into()),
        }
    }

    fn multigrid(
        &mut self,
        asm: &Assembly,
        cons: &Constraints,
        x: &[Vec3],
        params: &PcgParams,
        mg_params: &MultigridParams,
        par: Par,
    ) -> Result<PcgInfo, SolverError> {
        let mg = match &mut self.multigrid {
            Some(mg) if mg.matches(&asm.matrix) => mg,
            slot => slot.insert(Multigrid::new(&asm.matrix, x, &cons.kind, mg_params, par)?),
        };
        let sys = System::new(&asm.matrix, &asm.b, &cons.z, &cons.kind);
        cloth_solver::solve_mpcg_multigrid(&mut self.dv, &sys, mg, x, params, par, &mut self.pcg)
    }

    fn direct(&mut self, asm: &Assembly, cons: &Constraints) -> Result<PcgInfo, SolverError> {
        let direct = match &mut self.direct {
            Some(d) => d,
            None => self.direct.insert(DirectSolver::new(&asm.matrix)?),
        };
        direct.solve(&mut self.dv, &asm.matrix, &asm.b, &cons.z, &cons.kind)?;
        Ok(PcgInfo {
            iterations: 0,
            relative_residual: 0.0,
            converged: true,
        })
    }
}
