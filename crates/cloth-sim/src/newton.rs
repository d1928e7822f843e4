//! The global part of the explicit integrator's projection: Newton iterations on a convex
//! penalty of the hard rows (strain limits and contact planes).
//!
//! PLACEHOLDER DOCS

use cloth_mesh::Vec3;
use cloth_solver::{BlockMatrix, Constraint, DirectSolver};
use nalgebra::Matrix3;

/// One hard row `C(x) <= 0` over one or two vertices.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum HardRow {
    /// `abs(x_j - x_i) - len <= 0`.
    Stretch { i: usize, j: usize, len: f64 },
    /// `len - n . (x_j - x_i) <= 0`.
    Compress { i: usize, j: usize, n: Vec3, len: f64 },
    /// `offset - n . x_v <= 0`.
    Plane { v: usize, n: Vec3, offset: f64 },
}

impl HardRow {
    /// Value of C at `x` (m; positive: violated).
    pub fn value(&self, x: &[Vec3]) -> f64 {
        match *self {
            HardRow::Stretch { i, j, len } => (x[j] - x[i]).norm() - len,
            HardRow::Compress { i, j, n, len } => len - n.dot(&(x[j] - x[i])),
            HardRow::Plane { v, n, offset } => offset - n.dot(&x[v]),
        }
    }
}

/// Why a projection stopped early.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct NewtonFailure(pub String);

/// The penalty projection: its matrix pattern (the limited pairs), factorization and scratch.
pub(crate) struct PenaltyProjection {
    matrix: BlockMatrix,
    solver: DirectSolver,
    constraints: Vec<Constraint>,
    grad: Vec<Vec3>,
    dx: Vec<Vec3>,
    zero: Vec<Vec3>,
    trial: Vec<Vec3>,
}

/// `kappa / 2 * sum C_+^2 + 1/2 |x - x_ref|_M^2`.
fn objective(x: &[Vec3], x_ref: &[Vec3], masses: &[f64], rows: &[HardRow], kappa: f64) -> f64 {
    let inertia: f64 = (x.iter().zip(x_ref).zip(masses))
        .map(|((a, b), m)| 0.5 * m * (a - b).norm_squared())
        .sum();
    let penalty: f64 = rows.iter().map(|r| r.value(x).max(0.0).powi(2)).sum();
    inertia + 0.5 * kappa * penalty
}

impl PenaltyProjection {
    /// The pattern of the pairs `pairs`; vertices with `pinned` never move.
    pub fn new(n: usize, pairs: &[(usize, usize)], pinned: &[bool]) -> Result<Self, NewtonFailure> {
        let fail = |e: cloth_solver::SolverError| NewtonFailure(e.to_string());
        let matrix = BlockMatrix::new(n, pairs).map_err(fail)?;
        let solver = DirectSolver::new(&matrix).map_err(fail)?;
        let constraints = pinned
            .iter()
            .map(|&p| if p { Constraint::Fixed } else { Constraint::Free })
            .collect();
        Ok(Self {
            matrix,
            solver,
            constraints,
            grad: vec![Vec3::zeros(); n],
            dx: vec![Vec3::zeros(); n],
            zero: vec![Vec3::zeros(); n],
            trial: vec![Vec3::zeros(); n],
        })
    }

    /// Gradient and Hessian of the objective at `x`.
    fn assemble(&mut self, x: &[Vec3], x_ref: &[Vec3], masses: &[f64], rows: &[HardRow], kappa: f64) {
        self.matrix.set_zero();
        for (v, ((g, m), (a, b))) in (self.grad.iter_mut().zip(masses)).zip(x.iter().zip(x_ref)).enumerate() {
            *g = (a - b) * *m;
            self.matrix.add_diagonal(v, &(Matrix3::identity() * *m));
        }
        for r in rows {
            let c = r.value(x);
            if c <= 0.0 {
                continue;
            }
            match *r {
                HardRow::Stretch { i, j, .. } => {
                    let d = x[j] - x[i];
                    let len = d.norm();
                    let g = d / len;
                    let k = (g * g.transpose() + (Matrix3::identity() - g * g.transpose()) * (c / len)) * kappa;
                    self.pair(i, j, g * (kappa * c), &k);
                }
                HardRow::Compress { i, j, n, .. } => {
                    self.pair(i, j, -n * (kappa * c), &(n * n.transpose() * kappa));
                }
                HardRow::Plane { v, n, .. } => {
                    self.grad[v] -= n * (kappa * c);
                    self.matrix.add_diagonal(v, &(n * n.transpose() * kappa));
                }
            }
        }
    }

    /// Adds an element on `(i, j)` whose gradient with respect to `x_j` is `gj` (and `-gj`
    /// for `x_i`) and whose Hessian is `[k, -k; -k, k]`.
    fn pair(&mut self, i: usize, j: usize, gj: Vec3, k: &Matrix3<f64>) {
        self.grad[j] += gj;
        self.grad[i] -= gj;
        self.matrix.add_diagonal(i, k);
        self.matrix.add_diagonal(j, k);
        // The pattern holds every limited pair.
        let _ = self.matrix.add_block(i, j, &(-k));
    }

    /// Newton iterations with a backtracking line search on the penalty objective, from `x`
    /// towards the nearest (mass-weighted) point of `x_ref` that satisfies `rows`, until
    /// `done(x)`; the penalty `kappa` (kg) grows tenfold whenever an iteration makes no
    /// progress. Returns the iterations taken.
    #[allow(clippy::too_many_arguments)]
    pub fn project(
        &mut self,
        x: &mut [Vec3],
        x_ref: &[Vec3],
        masses: &[f64],
        rows: &[HardRow],
        mut kappa: f64,
        still: f64,
        cap: usize,
        done: &mut dyn FnMut(&[Vec3]) -> bool,
    ) -> Result<usize, NewtonFailure> {
        let mut it = 0;
        while it < cap {
            if done(x) {
                break;
            }
            it += 1;
            self.assemble(x, x_ref, masses, rows, kappa);
            let b: Vec<Vec3> = self.grad.iter().map(|g| -g).collect();
            (self.solver)
                .solve(&mut self.dx, &self.matrix, &b, &self.zero, &self.constraints)
                .map_err(|e| NewtonFailure(e.to_string()))?;
            let f0 = objective(x, x_ref, masses, rows, kappa);
            let slope: f64 = self.grad.iter().zip(&self.dx).map(|(g, d)| g.dot(d)).sum();
            let mut step = 1.0;
            let mut accepted = false;
            for _ in 0..30 {
                for ((t, a), d) in self.trial.iter_mut().zip(x.iter()).zip(&self.dx) {
                    *t = a + d * step;
                }
                if objective(&self.trial, x_ref, masses, rows, kappa) <= f0 + 1e-4 * step * slope {
                    accepted = true;
                    break;
                }
                step *= 0.5;
            }
            let moved = self.dx.iter().map(|d| d.norm()).fold(0.0, f64::max) * step;
            if accepted {
                x.copy_from_slice(&self.trial);
            }
            if !accepted || moved < still {
                kappa *= 10.0;
            }
        }
        Ok(it)
    }
}
