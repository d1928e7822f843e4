//! Settings of the implicit integrator: step sizes, the linear solver, the stretch threshold of
//! adaptive stepping and the Newton corrections.

use super::controller::StepControl;
use crate::error::{SimError, check_range};
use crate::strain::StrainLimit;
use cloth_mesh::Par;
use cloth_solver::{MultigridParams, PcgParams};

/// Which linear solver an implicit step uses.
#[derive(Clone, Debug, PartialEq)]
pub enum LinearSolver {
    /// Modified preconditioned conjugate gradient (paper §5.3) with these parameters (diagonal
    /// or block-Jacobi preconditioner).
    Mpcg(PcgParams),
    /// The modified PCG on the pre-filtered system with a smoothed-aggregation multigrid
    /// preconditioner (Tamstorf, Jones & McCormick 2015; see `cloth_solver::Multigrid`): the
    /// iteration count stays nearly flat with resolution. The hierarchy's structure is kept
    /// while the matrix pattern holds; its values are recomputed every solve.
    Multigrid(PcgParams, MultigridParams),
    /// Sparse Cholesky (faer) of the projected system; exact up to rounding, slower.
    Direct,
}

/// Settings of the implicit (Baraff-Witkin) integrator.
#[derive(Clone, Debug, PartialEq)]
pub struct ImplicitSettings {
    /// Largest step (s). Default 1/30 s, the paper's 33 ms.
    pub h_max: f64,
    /// Smallest step (s) before the run fails with [`SimError::StepTooSmall`]. Default 1e-5 s.
    pub h_min: f64,
    /// Linear solver and its parameters. Default: MPCG with block-Jacobi, tolerance 1e-3.
    pub solver: LinearSolver,
    /// Adaptive stepping (paper §7): a step is rejected and redone with a smaller step when
    /// any triangle's stretch |w_u| or |w_v| changes by more than this in one step
    /// (dimensionless, so 0.03 means three percentage points of strain). Default 0.03: a
    /// looser threshold lets the linearised step overshoot the stretch the cloth would reach
    /// with small steps.
    pub stretch_threshold: f64,
    /// How the next step is chosen: [`StepControl::Predictive`] (default) sizes it from the
    /// stretch change the last step measured; [`StepControl::Halving`] is the paper's rule.
    pub step_control: StepControl,
    /// With [`StepControl::Halving`]: consecutive accepted steps after which the step is
    /// doubled (up to `h_max`). Default 2, as in the paper.
    pub grow_after: usize,
    /// Optional maximum-stretch pass after every accepted step (off by default). Velocities
    /// are corrected by the position change divided by h.
    pub strain_limit: Option<StrainLimit>,
    /// Redos of one step for vertices pulled into solids before the check gives up and
    /// accepts (default 4).
    pub max_penetration_redos: usize,
    /// Newton corrections tried on a step whose stretch change is over the threshold (but at
    /// most [`CORRECTABLE_CHANGE`](super::CORRECTABLE_CHANGE) times it) before it is rejected
    /// (scene key `solver.newton_corrections`, default 1; 0 is the paper's single linearised
    /// solve). Each evaluates the forces and their Jacobians at the step's end state and
    /// solves for the backward Euler residual there; the corrected step is judged again in
    /// full, so the threshold still rejects every step that breaks it. The paper's step is one
    /// Newton iteration, and many of its overshoots are linearisation error (a flat sheet has
    /// no stiffness across its plane to first order; an edge turning about a vertex that a
    /// contact stopped lengthens to first order in the linearisation, not in the cloth): a
    /// correction saves many rejected attempts for little extra work.
    pub newton_corrections: usize,
    /// A step whose stretch change is over the threshold is accepted after a Newton
    /// correction that moved no triangle's stretch `|w_u|` or `|w_v|` by more than this
    /// fraction of the threshold, when every change over the threshold brings its triangle's
    /// stretch no farther from rest than it started (scene key `solver.correction_tolerance`,
    /// default 1; 0 turns it off and the threshold rejects every larger change, as in the
    /// paper). The threshold stands in for the error of the linearised step, which grows with
    /// the change; the correction measures that error directly, and the state it leaves is
    /// closer to the backward Euler solution than the first solve. A triangle out of balance
    /// (where a contact let go or caught it) relaxes towards rest in one step at any h, as its
    /// stiff stretch has a period of a fraction of a millisecond; that change no longer
    /// shrinks the step. A change away from rest is still held to the threshold: a step
    /// accepted over it leaves every triangle that changed by more than the threshold no
    /// farther from rest than it was. The change a correction is tried on is still capped at
    /// [`CORRECTABLE_CHANGE`](super::CORRECTABLE_CHANGE) times the threshold. With a
    /// [`strain_limit`](Self::strain_limit) it does not apply: the maximum-stretch pass after
    /// the step holds its edges in a bounded number of sweeps only when the step's change
    /// stays within the threshold.
    pub correction_tolerance: f64,
    /// Rounds of Coulomb's law within a step (scene key `solver.coulomb_rounds`, default 1;
    /// 0 decides static and sliding contacts only between steps, as the paper does). After
    /// the solve, every static contact with a moving solid whose constraint force holds its
    /// vertex with more than mu times its normal force turns sliding, with kinetic friction
    /// mu N, and, when letting go of the excess would move some vertex by more than
    /// [`stretch_threshold`](Self::stretch_threshold) times the cloth's typical edge length,
    /// the system is solved again from the last solution. Decided only between steps, static
    /// friction holds a vertex dragged by a moving body with whatever force the step takes
    /// (many times mu N) and lets it go in one jump at the next step, and such jumps set the
    /// step size on garments worn by moving bodies.
    pub coulomb_rounds: usize,
    /// Threads for force evaluation, assembly and the solve (default: the current rayon
    /// pool). Results are the same bits for every choice.
    pub par: Par,
}

impl Default for ImplicitSettings {
    fn default() -> Self {
        Self {
            h_max: 1.0 / 30.0,
            h_min: 1e-5,
            solver: LinearSolver::Mpcg(PcgParams::default()),
            stretch_threshold: 0.03,
            step_control: StepControl::default(),
            grow_after: 2,
            strain_limit: None,
            max_penetration_redos: 4,
            newton_corrections: 1,
            correction_tolerance: 1.0,
            coulomb_rounds: 1,
            par: Par::default(),
        }
    }
}

impl ImplicitSettings {
    /// The correction tolerance in effect: [`correction_tolerance`](Self::correction_tolerance),
    /// or 0 with a strain limit.
    pub fn over_threshold_tolerance(&self) -> f64 {
        if self.strain_limit.is_some() {
            0.0
        } else {
            self.correction_tolerance
        }
    }

    /// Checks the ranges (`0 < h_min <= h_max`, positive threshold, non-negative correction
    /// tolerance); the error names the key as in scene files.
    pub fn validate(&self) -> Result<(), SimError> {
        check_range("solver.h_max", self.h_max, 0.0, f64::INFINITY)?;
        check_range("solver.h_min", self.h_min, 0.0, self.h_max)?;
        check_range(
            "solver.stretch_threshold",
            self.stretch_threshold,
            0.0,
            f64::INFINITY,
        )?;
        if !(self.correction_tolerance >= 0.0 && self.correction_tolerance.is_finite()) {
            return Err(SimError::Invalid {
                key: "solver.correction_tolerance".into(),
                message: format!("must be finite and >= 0, got {}", self.correction_tolerance),
            });
        }
        Ok(())
    }
}
