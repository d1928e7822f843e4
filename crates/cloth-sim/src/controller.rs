//! The step-size controller of Baraff & Witkin (Knowl 9): halve after a rejected step, double
//! after a run of accepted ones, and land exactly on frame times without sliver steps.

use crate::{Reject, SimError};

/// Step-size state carried from step to step.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepController {
    /// The step the next attempt uses, before fitting it to the frame (s).
    pub h: f64,
    /// Consecutive accepted steps since the last change of h.
    pub successes: usize,
}

impl StepController {
    /// Starts at `h` (s), typically `h_max`.
    pub fn new(h: f64) -> Self {
        Self { h, successes: 0 }
    }

    /// The step to attempt when `remaining` (s) is left of the frame: what is left is taken
    /// whole when it is within 0.1% of h, and split into two equal steps when it is less than
    /// 2 h, so a frame never ends with a sliver step.
    pub fn fit(&self, remaining: f64) -> f64 {
        if remaining <= self.h * (1.0 + 1e-3) {
            remaining
        } else if remaining < 2.0 * self.h {
            0.5 * remaining
        } else {
            self.h
        }
    }

    /// After an accepted step: h doubles (up to `h_max`) once `grow_after` steps in a row were
    /// accepted.
    pub fn accepted(&mut self, grow_after: usize, h_max: f64) {
        self.successes += 1;
        if self.successes >= grow_after.max(1) && self.h < h_max {
            self.h = (self.h * 2.0).min(h_max);
            self.successes = 0;
        }
    }

    /// After a rejected attempt of size `h` at time `t` of frame `frame`: reasons that call for
    /// a smaller step halve it; below `h_min` the run fails with [`SimError::StepTooSmall`].
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
        self.h = h * 0.5;
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
        let mut c = StepController::new(0.01);
        assert_eq!(c.fit(0.05), 0.01);
        assert_eq!(c.fit(0.015), 0.0075);
        assert_eq!(c.fit(0.010005), 0.010005);
        c.accepted(2, 0.04);
        assert_eq!(c.h, 0.01);
        c.accepted(2, 0.04);
        assert_eq!(c.h, 0.02);
        let r = Reject::NotPositiveDefinite { iteration: 3 };
        c.rejected(r.clone(), 0.02, 1e-3, 1, 0.0).unwrap();
        assert_eq!((c.h, c.successes), (0.01, 0));
        c.rejected(Reject::Penetration { vertices: 2 }, 0.01, 1e-3, 1, 0.0)
            .unwrap();
        assert_eq!(c.h, 0.01, "penetration redoes the step at the same h");
        let e = c.rejected(r, 0.0015, 1e-3, 7, 0.2).unwrap_err();
        assert!(matches!(e, SimError::StepTooSmall { frame: 7, .. }));
    }
}
