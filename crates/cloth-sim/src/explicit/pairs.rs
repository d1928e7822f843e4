//! The pair constraints of the explicit integrator's projection: every mesh edge (a spring
//! and the maximum-stretch limits) and every two-ring bending spring, in coloured batches.
//!
//! # Rows
//!
//! A pair `(i, j)` with rest length `L`, spring stiffness `k` and direction `n` frozen at the
//! start of the step (`n = d0 / |d0|`, `d0 = x_j - x_i` before the step) carries up to four
//! scalar rows `C(x) <= 0`, each with its accumulated multiplier `lambda >= 0` (the dual
//! coordinate-ascent form of position-based dynamics, Macklin, Müller & Chentanez 2016,
//! "XPBD", eqs. 17-18, restricted to `lambda >= 0`):
//!
//! | row | `C` | compliance | meaning |
//! |---|---|---|---|
//! | spring, tension | `abs(d) - L` | `1 / (k h^2)` | `k/2 (abs(d) - L)^2` where stretched |
//! | spring, compression | `L - n.d` | `1 / (k h^2)` | `k/2 (L - n.d)^2` where shorter along `n` |
//! | limit, stretch | `abs(d) - max L` | 0 (hard) | the maximum-stretch limit |
//! | limit, compression | `min L - n.d` | 0 (hard) | the compression limit |
//!
//! Every row is a convex function of the positions, so the step solves a convex problem
//! (backward Euler on the springs, projection onto the limits): the springs cannot feed
//! energy into the cloth at any step size. The compression rows use the frozen direction:
//! `L - n.d >= L - abs(d)`, so the spring energy of the row bounds the true compressed
//! spring's, and `n.d >= min L` implies `abs(d) >= min L`; both equal the true terms when the
//! edge has not turned during the step.
//!
//! # Order
//!
//! Pairs are greedily coloured so that no two pairs of a batch share a vertex; a sweep runs
//! the batches in a fixed order, each batch's updates computed in parallel and applied in
//! order, so the result is the same bits for every thread count (a Gauss-Seidel sweep in a
//! fixed colour order).

use cloth_mesh::Vec3;
use rayon::prelude::*;
use std::ops::Range;

/// Batches larger than this are computed in parallel.
const PARALLEL_BATCH: usize = 1024;

/// One pair of vertices joined by a spring, possibly strain-limited.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Pair {
    pub i: usize,
    pub j: usize,
    /// Rest length (m).
    pub rest: f64,
    /// Spring stiffness (N/m), >= 0.
    pub k: f64,
    /// Whether the strain limit applies (mesh edges: yes; bending springs: no).
    pub limited: bool,
}

/// Per-step parameters of a sweep.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SweepParams {
    /// Step (s).
    pub h: f64,
    /// Strain limits `[min, max]` (length / rest length).
    pub min: f64,
    pub max: f64,
    /// Over-relaxation of every multiplier update, in (0, 2).
    pub omega: f64,
    /// Whether the spring rows run in this sweep.
    pub springs: bool,
}

/// What one sweep saw.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SweepInfo {
    /// Largest relative violation of a hard row before its update (fraction of rest length).
    pub violation: f64,
    /// Largest position change of a vertex by one row, relative to the rest length.
    pub correction: f64,
}

impl SweepInfo {
    fn merge(self, o: SweepInfo) -> SweepInfo {
        SweepInfo {
            violation: self.violation.max(o.violation),
            correction: self.correction.max(o.correction),
        }
    }
}

/// One pair of a batch with its frozen direction, multipliers and correction slot.
type BatchItem<'a> = (
    ((&'a Pair, &'a Vec3), &'a mut [f64; 4]),
    &'a mut (Vec3, Vec3),
);

/// The pairs in colour order with their per-step state.
pub(crate) struct PairSet {
    pairs: Vec<Pair>,
    batches: Vec<Range<usize>>,
    /// Frozen directions `n` of the step.
    normal: Vec<Vec3>,
    /// Multipliers of the four rows (tension, compression, stretch limit, compression limit).
    lambda: Vec<[f64; 4]>,
    /// Corrections of `(x_i, x_j)` computed by the batch being applied.
    corr: Vec<(Vec3, Vec3)>,
}

impl PairSet {
    /// Colours `pairs` (stable: pairs keep their relative order within a colour).
    pub fn new(pairs: Vec<Pair>, num_vertices: usize) -> Self {
        let colour = greedy_colours(&pairs, num_vertices);
        let colours = colour.iter().map(|&c| c + 1).max().unwrap_or(0);
        let mut order: Vec<usize> = (0..pairs.len()).collect();
        order.sort_by_key(|&p| colour[p]);
        let mut batches = Vec::with_capacity(colours);
        let mut start = 0;
        for c in 0..colours {
            let len = colour.iter().filter(|&&k| k == c).count();
            batches.push(start..start + len);
            start += len;
        }
        let pairs: Vec<Pair> = order.iter().map(|&p| pairs[p]).collect();
        let n = pairs.len();
        Self {
            pairs,
            batches,
            normal: vec![Vec3::zeros(); n],
            lambda: vec![[0.0; 4]; n],
            corr: vec![(Vec3::zeros(), Vec3::zeros()); n],
        }
    }

    /// The pairs in colour order.
    #[cfg(test)]
    pub fn pairs(&self) -> &[Pair] {
        &self.pairs
    }

    /// Number of colours (batches).
    pub fn num_batches(&self) -> usize {
        self.batches.len()
    }

    /// Starts a step from positions `x0` (the state): freezes the directions `n` there and
    /// clears the multipliers (warm-starting them with the previous step's multipliers feeds
    /// energy into the cloth).
    pub fn begin(&mut self, x0: &[Vec3]) {
        for (n, p) in self.normal.iter_mut().zip(&self.pairs) {
            let d = x0[p.j] - x0[p.i];
            let len = d.norm();
            *n = if len > 0.0 { d / len } else { Vec3::zeros() };
        }
        self.lambda.fill([0.0; 4]);
    }

    /// One Gauss-Seidel sweep over all batches.
    pub fn sweep(&mut self, x: &mut [Vec3], inv_mass: &[f64], p: &SweepParams) -> SweepInfo {
        let mut info = SweepInfo::default();
        for b in self.batches.clone() {
            let pairs = &self.pairs[b.clone()];
            let normal = &self.normal[b.clone()];
            let lambda = &mut self.lambda[b.clone()];
            let corr = &mut self.corr[b.clone()];
            let xr: &[Vec3] = x;
            let run = |(((pair, n), lam), c): BatchItem| {
                let (ci, cj, s) = update(pair, n, lam, xr, inv_mass, p);
                *c = (ci, cj);
                s
            };
            let zipped = pairs
                .iter()
                .zip(normal)
                .zip(lambda.iter_mut())
                .zip(corr.iter_mut());
            let s = if pairs.len() > PARALLEL_BATCH {
                let par = (pairs.par_iter().zip(normal.par_iter()))
                    .zip(lambda.par_iter_mut())
                    .zip(corr.par_iter_mut());
                par.with_min_len(512)
                    .map(run)
                    .reduce(SweepInfo::default, SweepInfo::merge)
            } else {
                zipped.map(run).fold(SweepInfo::default(), SweepInfo::merge)
            };
            info = info.merge(s);
            for (pair, (ci, cj)) in pairs.iter().zip(corr.iter()) {
                x[pair.i] += ci;
                x[pair.j] += cj;
            }
        }
        info
    }

    /// Largest relative violation of the strain limit over the limited pairs at `x`.
    pub fn violation(&self, x: &[Vec3], min: f64, max: f64) -> f64 {
        let one = |p: &Pair| -> f64 {
            if !p.limited {
                return 0.0;
            }
            let r = (x[p.j] - x[p.i]).norm() / p.rest;
            (r - max).max(min - r).max(0.0)
        };
        if self.pairs.len() > PARALLEL_BATCH {
            (self.pairs.par_iter().with_min_len(1024))
                .map(one)
                .reduce(|| 0.0, f64::max)
        } else {
            self.pairs.iter().map(one).fold(0.0, f64::max)
        }
    }
}

/// Greedy colouring: each pair takes the smallest colour used by neither of its vertices.
fn greedy_colours(pairs: &[Pair], num_vertices: usize) -> Vec<usize> {
    let mut used: Vec<Vec<usize>> = vec![Vec::new(); num_vertices];
    pairs
        .iter()
        .map(|p| {
            let c = (0..)
                .find(|c| !used[p.i].contains(c) && !used[p.j].contains(c))
                .unwrap_or(0);
            used[p.i].push(c);
            used[p.j].push(c);
            c
        })
        .collect()
}

/// A row's multiplier update `dlambda = omega (C - alpha lambda) / (w + alpha)` clamped so that
/// `lambda` stays >= 0; returns the applied change.
fn row(c: f64, alpha: f64, w: f64, lambda: &mut f64, omega: f64) -> f64 {
    let next = (*lambda + omega * (c - alpha * *lambda) / (w + alpha)).max(0.0);
    let dl = next - *lambda;
    *lambda = next;
    dl
}

/// Corrections of one pair's two vertices, accumulated row by row.
struct Moves {
    wi: f64,
    wj: f64,
    ci: Vec3,
    cj: Vec3,
    /// Largest single move of a vertex (m).
    largest: f64,
}

impl Moves {
    /// Moves along the unit gradient `g` of a row's `C` with respect to `x_j` by `-dl`:
    /// `x_j -= wj g dl`, `x_i += wi g dl`; `d = x_j - x_i` follows.
    fn apply(&mut self, d: &mut Vec3, g: Vec3, dl: f64) {
        if dl != 0.0 {
            self.ci += g * (self.wi * dl);
            self.cj -= g * (self.wj * dl);
            *d -= g * ((self.wi + self.wj) * dl);
            self.largest = self.largest.max(self.wi.max(self.wj) * dl.abs());
        }
    }
}

/// The four rows of one pair at the current positions; returns the corrections of `x_i` and
/// `x_j` and what the update saw.
fn update(
    pair: &Pair,
    n: &Vec3,
    lambda: &mut [f64; 4],
    x: &[Vec3],
    inv_mass: &[f64],
    p: &SweepParams,
) -> (Vec3, Vec3, SweepInfo) {
    let (wi, wj) = (inv_mass[pair.i], inv_mass[pair.j]);
    let w = wi + wj;
    let mut info = SweepInfo::default();
    if w == 0.0 {
        return (Vec3::zeros(), Vec3::zeros(), info);
    }
    let l = pair.rest;
    let mut d = x[pair.j] - x[pair.i];
    let mut m = Moves {
        wi,
        wj,
        ci: Vec3::zeros(),
        cj: Vec3::zeros(),
        largest: 0.0,
    };
    if p.springs && pair.k > 0.0 {
        let alpha = 1.0 / (pair.k * p.h * p.h);
        let len = d.norm();
        if len > 0.0 {
            let dl = row(len - l, alpha, w, &mut lambda[0], p.omega);
            let g = d / len;
            m.apply(&mut d, g, dl);
        }
        if *n != Vec3::zeros() {
            let dl = row(l - n.dot(&d), alpha, w, &mut lambda[1], p.omega);
            m.apply(&mut d, -n, dl);
        }
    }
    if pair.limited {
        let len = d.norm();
        if len > 0.0 {
            let c = len - p.max * l;
            info.violation = info.violation.max(c / l);
            let dl = row(c, 0.0, w, &mut lambda[2], p.omega);
            let g = d / len;
            m.apply(&mut d, g, dl);
        }
        if *n != Vec3::zeros() {
            let c = p.min * l - n.dot(&d);
            info.violation = info.violation.max(c / l);
            let dl = row(c, 0.0, w, &mut lambda[3], p.omega);
            m.apply(&mut d, -n, dl);
        }
    }
    info.correction = m.largest / l;
    (m.ci, m.cj, info)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: usize) -> Vec<Pair> {
        (0..n - 1)
            .map(|i| Pair {
                i,
                j: i + 1,
                rest: 1.0,
                k: 0.0,
                limited: true,
            })
            .collect()
    }

    #[test]
    fn batches_share_no_vertex_and_cover_every_pair() {
        let mut pairs = chain(10);
        pairs.push(Pair {
            i: 0,
            j: 5,
            rest: 5.0,
            k: 1.0,
            limited: false,
        });
        let set = PairSet::new(pairs.clone(), 10);
        assert_eq!(set.pairs().len(), pairs.len());
        for b in &set.batches {
            let mut seen = [false; 10];
            for p in &set.pairs()[b.clone()] {
                assert!(!seen[p.i] && !seen[p.j]);
                seen[p.i] = true;
                seen[p.j] = true;
            }
        }
        for p in &pairs {
            assert!(set.pairs().contains(p));
        }
    }

    #[test]
    fn hard_rows_bring_a_stretched_edge_to_the_limit_in_one_update() {
        let mut set = PairSet::new(chain(2), 2);
        let mut x = vec![Vec3::zeros(), Vec3::new(2.0, 0.0, 0.0)];
        let x0 = x.clone();
        set.begin(&x0);
        let p = SweepParams {
            h: 0.01,
            min: 0.9,
            max: 1.1,
            omega: 1.0,
            springs: true,
        };
        let info = set.sweep(&mut x, &[0.0, 1.0], &p);
        assert!((info.violation - 0.9).abs() < 1e-12);
        assert!((x[1].x - 1.1).abs() < 1e-12 && x[0] == Vec3::zeros());
        assert!(set.violation(&x, 0.9, 1.1) < 1e-12);
    }
}
