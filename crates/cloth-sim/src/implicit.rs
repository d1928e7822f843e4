//! One linearized backward-Euler step (Baraff & Witkin 1998, Knowls 2 and 6), assembled from
//! `cloth-forces` into a `cloth-solver` block matrix and solved with the modified PCG.

use crate::system::ClothSystem;
use cloth_forces::Evaluation;
use cloth_mesh::Vec3;
use cloth_solver::{
    AssemblyPlan, BlockMatrix, Constraint, PcgInfo, PcgParams, PcgWorkspace, SolverError,
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
    pub matrix: BlockMatrix,
    plan: AssemblyPlan,
    blocks: Vec<Matrix3<f64>>,
    diagonal: Vec<Matrix3<f64>>,
    pub forces: Vec<Vec3>,
    w: Vec<Vec3>,
    kw: Vec<Vec3>,
    pub b: Vec<Vec3>,
    pub dv: Vec<Vec3>,
    pub e: Vec<Vec3>,
    pcg: PcgWorkspace,
}

impl ImplicitWorkspace {
    /// Builds the pattern from the mesh's vertex pairs and a first evaluation's entries.
    pub fn new(sys: &ClothSystem) -> Result<Self, SolverError> {
        let n = sys.num_vertices();
        let mut eval = Evaluation::default();
        sys.model.evaluate(&sys.x0, &vec![Vec3::zeros(); n], &mut eval);
        let matrix = BlockMatrix::new(n, sys.mesh.vertex_pairs())?;
        let plan = matrix.plan(eval.entries())?;
        Ok(Self {
            blocks: vec![Matrix3::zeros(); eval.entries().len()],
            eval,
            matrix,
            plan,
            diagonal: vec![Matrix3::zeros(); n],
            forces: vec![Vec3::zeros(); n],
            w: vec![Vec3::zeros(); n],
            kw: vec![Vec3::zeros(); n],
            b: vec![Vec3::zeros(); n],
            dv: vec![Vec3::zeros(); n],
            e: vec![Vec3::zeros(); n],
            pcg: PcgWorkspace::default(),
        })
    }

    /// Evaluates forces at (x0, v0) and assembles
    /// `A = M - h df/dv - h^2 df/dx` and `b = h (f0 + h df/dx v0 + df/dx y)` (Knowl 6).
    pub fn assemble(&mut self, sys: &ClothSystem, x0: &[Vec3], v0: &[Vec3], y: &[Vec3], h: f64) {
        sys.model.evaluate(x0, v0, &mut self.eval);
        sys.external.accumulate(&sys.model, x0, v0, &mut self.eval);
        self.forces.copy_from_slice(&self.eval.forces);
        for (d, &m) in self.diagonal.iter_mut().zip(&sys.masses) {
            *d = Matrix3::from_diagonal_element(m);
        }
        let (dfdx, dfdv) = (self.eval.dfdx(), self.eval.dfdv());
        let h2 = h * h;
        self.blocks
            .par_iter_mut()
            .zip(dfdx.par_iter().zip(dfdv.par_iter()))
            .for_each(|(blk, (kx, kv))| *blk = -(kv * h) - kx * h2);
        self.matrix
            .assemble(&self.plan, &self.blocks, Some(&self.diagonal));
        // b = h f0 + h df/dx (h v0 + y)
        self.w
            .par_iter_mut()
            .zip(v0.par_iter().zip(y.par_iter()))
            .for_each(|(w, (v, y))| *w = v * h + y);
        self.eval.mul_dfdx(&self.w, &mut self.kw);
        self.b
            .par_iter_mut()
            .zip(self.forces.par_iter().zip(self.kw.par_iter()))
            .for_each(|(b, (f, kw))| *b = (f + kw) * h);
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
                &mut self.pcg,
            )?,
            LinearSolver::Direct => {
                cloth_solver::solve_direct(&mut self.dv, &self.matrix, &self.b, z, constraints)?;
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
