//! The candidate end state of an attempt, `x1 = x0 + h (v0 + dv) + y`, as the checks see it and
//! as impact zones change it.

use crate::state::State;
use cloth_mesh::Vec3;

/// The candidate positions of an attempt and the position corrections they contain.
#[derive(Default)]
pub(crate) struct Candidate {
    /// Candidate end positions, `x0 + h (v0 + dv) + y` (m), after impact zones.
    pub x1: Vec<Vec3>,
    /// The attempt's position corrections y: its alterations less their landing part (empty
    /// when all are zero).
    pub y: Vec<Vec3>,
    /// Whether the attempt has a non-zero correction y (then the stretch measured before it was
    /// added is not the candidate's own until the accepted step measures it again).
    pub altered: bool,
    /// The candidate before impact zones (m).
    x1_free: Vec<Vec3>,
    /// The corrections y before impact zones (empty when there are none).
    y_free: Vec<Vec3>,
    /// Vertices moved by impact zones in the last attempt that reached them.
    pub zone_vertices: usize,
}

impl Candidate {
    /// The integrated motion with the `landing` part of the alterations:
    /// `x1 = x0 + h (v0 + dv) + landing`. The stretch check measures this, without the
    /// deliberate geometric correction (paper §6.2), which would otherwise fail a step at any
    /// h; [`Candidate::correct`] adds the correction afterwards.
    pub fn integrate(&mut self, state: &State, dv: &[Vec3], landing: &[Vec3], h: f64) {
        self.x1.resize(state.len(), Vec3::zeros());
        for ((((x1, x), v), dv), l) in (self.x1.iter_mut().zip(&state.x))
            .zip(&state.v)
            .zip(dv)
            .zip(landing)
        {
            *x1 = x + (v + dv) * h + l;
        }
    }

    /// Adds the position corrections, the alterations `y` less their `landing` part, to `x1`.
    pub fn correct(&mut self, y: &[Vec3], landing: &[Vec3]) {
        self.y.clear();
        self.y.extend(y.iter().zip(landing).map(|(y, l)| y - l));
        self.altered = self.y.iter().any(|y| *y != Vec3::zeros());
        if !self.altered {
            self.y.clear();
        }
        for (x1, y) in self.x1.iter_mut().zip(&self.y) {
            *x1 += y;
        }
    }

    /// Keeps the candidate as it is before impact zones change it.
    pub fn keep_free(&mut self) {
        self.x1_free.clone_from(&self.x1);
        self.y_free.clone_from(&self.y);
    }

    /// Velocity corrections (m/s) of the impact zones for an accepted step of size `h`: the
    /// change of each vertex's integrated end position (without the correction y, which moves
    /// positions only) divided by h.
    pub fn zone_velocity_changes(&self, h: f64) -> impl Iterator<Item = Vec3> + '_ {
        let zero = Vec3::zeros();
        self.x1
            .iter()
            .zip(&self.x1_free)
            .enumerate()
            .map(move |(i, (x, free))| {
                let y = self.y.get(i).unwrap_or(&zero);
                let y_free = self.y_free.get(i).unwrap_or(&zero);
                ((x - y) - (free - y_free)) / h
            })
    }
}
