//! Stage 4, solve: `A dv = b` with the constrained components of dv equal to z, by the modified
//! PCG (paper §5.3) or the direct reference solve, then the constraint forces
//! `e = A dv - b` (paper §5.4).

use super::assemble::Assembly;
use super::attempt::Attempt;
use super::constrain::Constraints;
use super::settings::LinearSolver;
use crate::error::{Reject, SimError};
use crate::world::World;
use cloth_mesh::{Par, Vec3};
use cloth_solver::{
    BlockMatrix, DirectSolver, Multigrid, MultigridOn, MultigridParams, PcgInfo, PcgParams,
    PcgWorkspace, SolverError, System,
};

/// The solution of a step's linear system and the solvers' reusable scratch.
pub(crate) struct Solution {
    /// Velocity change (m/s).
    pub dv: Vec<Vec3>,
    /// The previous solution, where a solve again ([`Solve::Again`]) starts.
    start: Vec<Vec3>,
    /// Constraint impulses `A dv - b` (N*s); divide by h for forces.
    pub e: Vec<Vec3>,
    pcg: PcgWorkspace,
    /// Ordering and symbolic factorisation for the direct solver, made on first use and kept
    /// while the pattern stays the same.
    direct: Option<DirectSolver>,
    /// The multigrid hierarchy, made on first use for the fixed pattern of `lumped`.
    multigrid: Option<Multigrid>,
    /// The hierarchy's fixed pattern (the mesh's vertex pairs and the stitches'), made on first
    /// use; when contact pairs have grown the system's pattern beyond it, it holds the system
    /// matrix lumped onto it ([`BlockMatrix::lump_into`]), which the V-cycle inverts.
    lumped: Option<BlockMatrix>,
}

impl Solution {
    pub fn new(n: usize) -> Self {
        Self {
            dv: vec![Vec3::zeros(); n],
            start: Vec::new(),
            e: vec![Vec3::zeros(); n],
            pcg: PcgWorkspace::default(),
            direct: None,
            multigrid: None,
            lumped: None,
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
        how: Solve,
    ) -> Result<Result<PcgInfo, Reject>, SimError> {
        let (x, par) = (&ctx.state.x, ctx.settings.par);
        if asm.pattern_changed {
            self.direct = None;
            asm.pattern_changed = false;
        }
        let again = how == Solve::Again;
        if again {
            self.start.clone_from(&self.dv);
        }
        let solved = match solver {
            LinearSolver::Mpcg(params) => {
                let mut sys = System::new(&asm.matrix, &asm.b, &cons.z, &cons.kind);
                if again {
                    sys = sys.starting_from(&self.start);
                }
                cloth_solver::solve_mpcg(&mut self.dv, &sys, params, par, &mut self.pcg)
            }
            LinearSolver::Multigrid(params, mg) => {
                let on = Hierarchy {
                    params: mg,
                    world: ctx.world,
                    x,
                    par,
                    again,
                };
                self.multigrid(asm, cons, params, on)
            }
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

    /// The multigrid solve: the hierarchy is built once for the mesh's and the stitches'
    /// vertex pairs and kept while contact pairs grow the system's pattern; the V-cycle then
    /// inverts the system matrix with those pairs' couplings lumped onto the diagonal, which
    /// dominates it (so it stays a valid preconditioner) and differs from it only where
    /// layers touch.
    fn multigrid(
        &mut self,
        asm: &Assembly,
        cons: &Constraints,
        params: &PcgParams,
        on: Hierarchy<'_>,
    ) -> Result<PcgInfo, SolverError> {
        let lumped = match &mut self.lumped {
            Some(m) => m,
            slot => slot.insert(BlockMatrix::new(asm.matrix.n(), &base_pairs(on.world))?),
        };
        let matrix = if asm.matrix.same_pattern(lumped) {
            &asm.matrix
        } else {
            asm.matrix.lump_into(lumped)?;
            lumped
        };
        let mg = match &mut self.multigrid {
            Some(mg) => mg,
            slot => slot.insert(Multigrid::new(matrix, on.x, &cons.kind, on.params, on.par)?),
        };
        let mut sys = System::new(&asm.matrix, &asm.b, &cons.z, &cons.kind);
        if on.again {
            sys = sys.starting_from(&self.start);
        }
        let pre = MultigridOn {
            mg,
            matrix,
            positions: on.x,
            only_fine: on.again,
        };
        cloth_solver::solve_mpcg_multigrid_on(
            &mut self.dv,
            &sys,
            pre,
            params,
            on.par,
            &mut self.pcg,
        )
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

/// What a multigrid solve builds its hierarchy from besides the system.
struct Hierarchy<'a> {
    params: &'a MultigridParams,
    world: &'a World,
    /// Positions (m), for rotation modes.
    x: &'a [Vec3],
    par: Par,
    /// A solve again ([`Solve::Again`]).
    again: bool,
}

/// How [`Solution::run`] solves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Solve {
    /// A new system: the iteration starts at the targets z, the multigrid hierarchy is
    /// refreshed for the matrix.
    Fresh,
    /// The last system solved, since changed in a few constraints and right-hand side
    /// entries (the same matrix): the multigrid hierarchy keeps its coarse levels
    /// ([`MultigridOn::only_fine`]) and the iteration starts at the last solution. Its
    /// residual is measured against that of a start at z, so it stops at the accuracy of a
    /// fresh solve.
    Again,
}

/// The pattern the multigrid hierarchy is built for: the mesh's vertex pairs and the
/// stitched pairs (sorted, unique). Contact pairs are left out: they come and go.
fn base_pairs(world: &World) -> Vec<(usize, usize)> {
    let mut pairs = world.cloth.mesh.vertex_pairs().to_vec();
    pairs.extend(
        (world.sewing.pairs())
            .filter(|[i, j]| i != j)
            .map(|[i, j]| (i.min(j), i.max(j))),
    );
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}
