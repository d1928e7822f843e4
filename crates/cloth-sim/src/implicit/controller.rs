//! The step-size controller: the paper's rule (§7: halve after a rejected step, double
//! after a run of accepted ones) or a predictive one that sizes each step from the stretch
//! change the last one measured; both land exactly on frame times without sliver steps.

use crate::error::{Reject, SimError};

/// How the implicit integrator chooses its next step (scene key `solver.step_control`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepControl {
    /// Baraff & Witkin's rule (paper §7): halve after a rejected step, double after
    /// `grow_after` accepted ones in a row, up to `h_max`.
    Halving,
    /// The stretch change of a step grows about in proportion to h, so each accepted step
    /// predicts the step that would change the stretch by [`STEP_TARGET`] of the threshold:
    /// the next step is `h * STEP_TARGET * threshold / change`, but never shorter than the
    /// accepted one nor more than twice it, and at most `h_max`. A step rejected for its
    /// stretch change is retried at the step that prediction gives (at most half, at least a
    /// fifth of the rejected one); other rejections halve it. A frame is split into equal
    /// steps, each at most 10% longer than the predicted one. The threshold still rejects
    /// every step that breaks it. The default: it rejects far fewer steps than the halving
    /// rule on drapes and garments, and is faster on them.
    #[default]
    Predictive,
}

/// The fraction of the stretch threshold the predictive control aims a step's change at:
/// far enough below it that a step a little more eventful than the last still passes. A
/// step's change is not always proportional to h (where a contact stops a vertex it is not),
/// so an accepted step never shrinks the next one: shrinking by the prediction after accepted
/// steps lets h collapse to a small fraction of a millisecond on large drapes and garments.
pub const STEP_TARGET: f64 = 0.75;

/// Step-size state carried from step to step.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepController {
    /// The step the next attempt uses, before fitting it to the frame (s).
    pub h: f64,
    /// Consecutive accepted steps since the last change of h (the paper's rule).
    pub successes: usize,
    /// The rule: the scene's, so checkpoints do not carry it (a restore keeps the scene's).
    #[serde(skip)]
    pub control: StepControl,
}

impl StepController {
    /// Starts at `h` (s), typically `h_max`, with the default rule ([`StepControl`]'s
    /// default, the one scenes get without `solver.step_control`).
    pub fn new(h: f64) -> Self {
        Self::with_control(h, StepControl::default())
    }

    /// Starts at `h` (s) with the rule `control`.
    pub fn with_control(h: f64, control: StepControl) -> Self {
        Self {
            h,
            successes: 0,
            control,
        }
    }

    /// The step to attempt when `remaining` (s) is left of the frame. The paper's rule takes
    /// what is left whole when it is within 0.1% of h and splits it into two equal steps when
    /// it is less than 2 h, so a frame never ends with a sliver step; the predictive rule
    /// splits what is left into the fewest equal steps no longer than 1.1 h.
    pub fn fit(&self, remaining: f64) -> f64 {
        match self.control {
            StepControl::Halving => {
                if remaining <= self.h * (1.0 + 1e-3) {
                    remaining
                } else if remaining < 2.0 * self.h {
                    0.5 * remaining
                } else {
                    self.h
                }
            }
            StepControl::Predictive => {
                let n = (remaining / (1.1 * self.h)).ceil().max(1.0);
                remaining / n
            }
        }
    }

    /// After an accepted step of size `h` whose stretch changed by `change` (threshold
    /// `threshold`): the paper's rule doubles h (up to `h_max`) once `grow_after` steps in a
    /// row were accepted; the predictive rule sizes the next step from `change`. A `change`
    /// over the threshold is that of a step accepted after Newton corrections (its first
    /// solve's): the paper's rule keeps h and starts counting again; the predictive rule plans
    /// the next step from it as after a rejection, shrinking it by at most half.
    pub fn accepted(&mut self, h: f64, change: f64, threshold: f64, grow_after: usize, h_max: f64) {
        let corrected = change > threshold;
        match self.control {
            StepControl::Halving if corrected => self.successes = 0,
            StepControl::Halving => {
                self.successes += 1;
                if self.successes >= grow_after.max(1) && self.h < h_max {
                    self.h = (self.h * 2.0).min(h_max);
                    self.successes = 0;
                }
            }
            StepControl::Predictive => {
                let least = if corrected { 0.5 } else { 1.0 };
                let factor = if change > 0.0 {
                    (STEP_TARGET * threshold / change).clamp(least, 2.0)
                } else {
                    2.0
                };
                self.h = (h * factor).min(h_max);
            }
        }
    }

    /// After a rejected attempt of size `h` at time `t` of frame `frame`: reasons that call for
    /// a smaller step shrink it (see [`StepControl`]); below `h_min` the run fails with
    /// [`SimError::StepTooSmall`].
    pub fn rejected(
        &mut self,
        reason: Reject,
        h: f64,
        h_min: f64,
        frame: usize,
        t: f64,
    ) -> Result<(), SimError> {
        if !reason.halves_step() {
            return Ok(());
        }
        self.successes = 0;
        self.h = match (self.control, &reason) {
            (
                StepControl::Predictive,
                Reject::StretchChange {
                    change, threshold, ..
                },
            ) if change.is_finite() => h * (STEP_TARGET * threshold / change).clamp(0.2, 0.5),
            _ => h * 0.5,
        };
        if self.h < h_min {
            return Err(SimError::StepTooSmall {
                frame,
                time: t,
                h_min,
                reason,
            });
        }
        Ok(())
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_end_without_slivers_and_steps_grow_and_shrink() {
        let mut c = StepController::with_control(0.01, StepControl::Halving);
        assert_eq!(c.fit(0.05), 0.01);
        assert_eq!(c.fit(0.015), 0.0075);
        assert_eq!(c.fit(0.010005), 0.010005);
        c.accepted(0.01, 0.001, 0.03, 2, 0.04);
        assert_eq!(c.h, 0.01);
        c.accepted(0.01, 0.001, 0.03, 2, 0.04);
        assert_eq!(c.h, 0.02);
        // A step accepted after a Newton correction (its first change over the threshold)
        // keeps h and is not a success.
        c.accepted(0.02, 0.001, 0.03, 2, 0.04);
        c.accepted(0.02, 0.05, 0.03, 2, 0.04);
        assert_eq!((c.h, c.successes), (0.02, 0));
        let r = Reject::NotPositiveDefinite { iteration: 3 };
        c.rejected(r.clone(), 0.02, 1e-3, 1, 0.0).unwrap();
        assert_eq!((c.h, c.successes), (0.01, 0));
        c.rejected(Reject::Penetration { vertices: 2 }, 0.01, 1e-3, 1, 0.0)
            .unwrap();
        assert_eq!(c.h, 0.01, "penetration redoes the step at the same h");
        let e = c.rejected(r, 0.0015, 1e-3, 7, 0.2).unwrap_err();
        assert!(matches!(e, SimError::StepTooSmall { frame: 7, .. }));
    }

    #[test]
    fn a_new_controller_takes_the_scenes_default_rule() {
        assert_eq!(StepController::new(0.01).control, StepControl::Predictive);
    }

    #[test]
    fn the_predictive_rule_aims_the_next_change_at_the_target() {
        let (threshold, h_max) = (0.03, 0.04);
        let mut c = StepController::with_control(0.01, StepControl::Predictive);
        // Half the target's change: the step may double, but no more than that.
        c.accepted(0.01, 0.5 * STEP_TARGET * threshold, threshold, 2, h_max);
        assert!((c.h - 0.02).abs() < 1e-15);
        c.accepted(0.01, 0.0, threshold, 2, h_max);
        assert!((c.h - 0.02).abs() < 1e-15, "a still cloth doubles the step");
        c.accepted(0.03, 0.0, threshold, 2, h_max);
        assert_eq!(c.h, h_max);
        // Between the target and the threshold the step is kept: an accepted step never
        // shrinks the next.
        c.accepted(0.01, 0.8 * STEP_TARGET * threshold, threshold, 2, h_max);
        assert!((c.h - 0.0125).abs() < 1e-15);
        c.accepted(0.01, 0.99 * threshold, threshold, 2, h_max);
        assert_eq!(c.h, 0.01);
        // A step accepted after a Newton correction reports its first solve's change, over
        // the threshold: the next is planned from it, shrinking by at most half.
        c.accepted(0.01, 1.2 * threshold, threshold, 2, h_max);
        assert!((c.h - 0.01 * STEP_TARGET / 1.2).abs() < 1e-15);
        c.accepted(0.01, 3.0 * threshold, threshold, 2, h_max);
        assert!((c.h - 0.005).abs() < 1e-15);
        // A rejected step is retried at the predicted step, between a fifth and a half.
        let over = |change| Reject::StretchChange {
            triangle: 0,
            change,
            threshold,
        };
        c.rejected(over(0.033), 0.01, 1e-5, 1, 0.0).unwrap();
        assert!((c.h - 0.005).abs() < 1e-15);
        c.rejected(over(0.06), 0.01, 1e-5, 1, 0.0).unwrap();
        assert!((c.h - 0.01 * STEP_TARGET * 0.5).abs() < 1e-15);
        c.rejected(over(1.0), 0.01, 1e-5, 1, 0.0).unwrap();
        assert!((c.h - 0.002).abs() < 1e-15);
        c.rejected(over(f64::INFINITY), 0.01, 1e-5, 1, 0.0).unwrap();
        assert!((c.h - 0.005).abs() < 1e-15, "a non-finite change halves");
        // Frames split into the fewest equal steps at most 10% above h.
        c.h = 0.031;
        assert_eq!(c.fit(1.0 / 30.0), 1.0 / 30.0);
        c.h = 0.02;
        assert_eq!(c.fit(1.0 / 30.0), 1.0 / 60.0);
        c.h = 0.01;
        assert!((c.fit(0.035) - 0.035 / 4.0).abs() < 1e-15);
    }
}
