//! One linearized backward-Euler step (Baraff & Witkin 1998, Knowls 2 and 6), assembled from
//! `cloth-forces` into a `cloth-solver` block matrix and solved with the modified PCG.

use crate::system::ClothSystem;
use cloth_forces::Evaluation;
use cloth_mesh::{Par, Vec3};
use cloth_solver::{
    AssemblyPlan, BlockMatrix, Constraint, DirectSolver, PcgInfo, PcgParams, PcgWorkspace,
    SolverError,
};
use nalgebra::Matrix3;
use rayon::prelude::*;

/// Which linear solver an implicit step uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LinearSolver {
    /// Modified preconditioned conjugate gradient (Knowl 1) with these parameters.
    Mpcg(PcgParams),
    /// Sparse Cholesky (faer) of the projected system; exact up to rounding, slower.
    Direct,
}

/// The outcome of solving one step's linear system.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SolveOutcome {
    /// CG statistics (iterations 0 for the direct solver).
    pub info: PcgInfo,
}

/// Scratch memory and the fixed sparsity pattern of the implicit integrator.
///
/// The matrix pattern and the assembly plan are built once from the force model's Jacobian
/// entries; every step only refills values.
pub(crate) struct ImplicitWorkspace {
    pub eval: Evaluation,
    /// Off-diagonal vertex pairs of the matrix pattern (mesh pairs plus any contact pairs seen).
    pairs: Vec<(usize, usize)>,
    pub matrix: BlockMatrix,
    plan: AssemblyPlan,
    blocks: Vec<Matrix3<f64>>,
    diagonal: Vec<Matrix3<f64>>,
    w: Vec<Vec3>,
    kw: Vec<Vec3>,
    pub b: Vec<Vec3>,
    pub dv: Vec<Vec3>,
    pub e: Vec<Vec3>,
    pcg: PcgWorkspace,
    /// Ordering and symbolic factorisation for the direct solver, made on first use and kept
    /// while the pattern stays the same.
    direct: Option<DirectSolver>,
}

impl ImplicitWorkspace {
    /// Builds the pattern from the mesh's vertex pairs and a first evaluation's entries.
    pub fn new(sys: &ClothSystem) -> Result<Self, SolverError> {
        let n = sys.num_vertices();
        let mut eval = Evaluation::default();
        sys.model
            .evaluate(&sys.x0, &vec![Vec3::zeros(); n], &mut eval, Par::default());
        let pairs = sys.mesh.vertex_pairs().to_vec();
        let matrix = BlockMatrix::new(n, &pairs)?;
        let plan = matrix.plan(eval.entries())?;
        Ok(Self {
            pairs,
            blocks: vec![Matrix3::zeros(); eval.entries().len()],
            eval,
            matrix,
            plan,
            diagonal: vec![Matrix3::zeros(); n],
            w: vec![Vec3::zeros(); n],
            kw: vec![Vec3::zeros(); n],
            b: vec![Vec3::zeros(); n],
            dv: vec![Vec3::zeros(); n],
            e: vec![Vec3::zeros(); n],
            pcg: PcgWorkspace::default(),
            direct: None,
        })
    }

    /// Evaluates the cloth's internal and external forces and their Jacobians at (x0, v0).
    /// A step that is rejected and retried with a smaller h from the same state reuses them.
    pub fn evaluate(&mut self, sys: &ClothSystem, x0: &[Vec3], v0: &[Vec3]) {
        sys.model.evaluate(x0, v0, &mut self.eval, Par::default());
        sys.external.accumulate(&sys.model, x0, v0, &mut self.eval);
    }

    /// Assembles `A = M - h df/dv - h^2 df/dx` and `b = h (f0 + h df/dx v0 + df/dx y)`
    /// (Knowls 2 and 6) from the last [`Self::evaluate`], plus `extra_forces` (N; friction,
    /// contact penalties) and `extra` Jacobian entries `(i, j, df/dx, df/dv)` with `i <= j`
    /// (cloth-cloth penalty springs), which may couple vertices outside the mesh's pattern:
    /// the pattern then grows (and stays grown) to hold them.
    pub fn assemble(
        &mut self,
        v0: &[Vec3],
        y: &[Vec3],
        h: f64,
        masses: &[f64],
        extra_forces: &[Vec3],
        extra: &[(usize, usize, Matrix3<f64>, Matrix3<f64>)],
    ) -> Result<(), SolverError> {
        for (d, &m) in self.diagonal.iter_mut().zip(masses) {
            *d = Matrix3::from_diagonal_element(m);
        }
        let (dfdx, dfdv) = (self.eval.dfdx(), self.eval.dfdv());
        let h2 = h * h;
        self.blocks
            .par_iter_mut()
            .zip(dfdx.par_iter().zip(dfdv.par_iter()))
            .for_each(|(blk, (kx, kv))| *blk = -(kv * h) - kx * h2);
        if !extra.is_empty() && extra.iter().any(|e| self.matrix.block(e.0, e.1).is_none()) {
            self.grow_pattern(extra)?;
        }
        self.matrix
            .assemble(&self.plan, &self.blocks, Some(&self.diagonal));
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
        self.b
            .par_iter_mut()
            .zip(self.eval.forces.par_iter().zip(self.kw.par_iter()))
            .zip(extra_forces.par_iter())
            .for_each(|((b, (f, kw)), fe)| *b = (f + fe + kw) * h);
        Ok(())
    }

    /// Adds the off-diagonal pairs of `extra` to the matrix pattern and rebuilds the plan.
    fn grow_pattern(
        &mut self,
        extra: &[(usize, usize, Matrix3<f64>, Matrix3<f64>)],
    ) -> Result<(), SolverError> {
        self.pairs.extend(
            extra
                .iter()
                .filter(|e| e.0 != e.1 && self.matrix.block(e.0, e.1).is_none())
                .map(|e| (e.0.min(e.1), e.0.max(e.1))),
        );
        self.pairs.sort_unstable();
        self.pairs.dedup();
        self.matrix = BlockMatrix::new(self.matrix.n(), &self.pairs)?;
        self.plan = self.matrix.plan(self.eval.entries())?;
        self.direct = None;
        Ok(())
    }

    /// Solves `A dv = b` with the constrained components of dv equal to z, then computes the
    /// constraint forces `e = A dv - b` (Knowl 8; divide by h for newtons).
    pub fn solve(
        &mut self,
        solver: &LinearSolver,
        constraints: &[Constraint],
        z: &[Vec3],
    ) -> Result<SolveOutcome, SolverError> {
        let info = match solver {
            LinearSolver::Mpcg(params) => cloth_solver::solve_mpcg(
                &mut self.dv,
                &self.matrix,
                &self.b,
                z,
                constraints,
                params,
                Par::default(),
                &mut self.pcg,
            )?,
            LinearSolver::Direct => {
                let direct = match &mut self.direct {
                    Some(d) => d,
                    None => self.direct.insert(DirectSolver::new(&self.matrix)?),
                };
                direct.solve(&mut self.dv, &self.matrix, &self.b, z, constraints)?;
                PcgInfo {
                    iterations: 0,
                    relative_residual: 0.0,
                    converged: true,
                }
            }
        };
        cloth_solver::constraint_forces(&self.matrix, &self.dv, &self.b, &mut self.e);
        Ok(SolveOutcome { info })
    }
}
