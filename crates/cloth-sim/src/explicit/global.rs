//! The global part of the maximum-stretch projection: one linearised projection onto the
//! stretch limits of every edge at or over its limit at once, solved with a sparse Cholesky
//! factorisation ("fast projection", Goldenthal, Harmon, Fattal, Bercovier & Grinspun 2007,
//! "Efficient Simulation of Inextensible Cloth", restricted to the edges that pull).
//!
//! For the active edges (stretched to within `slack` of their limit, or beyond) with
//! constraints `C_e(x) = abs(x_j - x_i) - max L_e`, unit directions `g_e` (and for the
//! edges compressed to within `slack` of the lower limit `C_e = min L_e - n_e . (x_j - x_i)`,
//! the frozen direction `n_e` of the `pairs` module, `g_e = -n_e`) and inverse masses
//! `W` (0 for pinned vertices), one solve finds the multipliers of
//! `(J W J^T + eps D) lambda = C(x)` and moves `x -= W J^T lambda`: the mass-weighted smallest
//! move that brings every active edge to its limit to first order. Entry `(e, f)` of
//! `J W J^T` is `s_e s_f w_v g_e . g_f` for edges sharing the free vertex `v` (`s = +1` at an
//! edge's second vertex, `-1` at its first) and `w_i + w_j` on the diagonal. The
//! regularisation `eps D` (`D` the diagonal, `eps` = 1%) keeps the system positive definite
//! where a triangle mesh stretched flat has more active edges than its vertices have free
//! directions (the linearised limits then conflict and the solve is their mass-weighted least
//! squares compromise); the move stops 1% short of the linearised limit, which the next
//! solve makes up.
//!
//! The limit is an inequality: the active set follows the primal-dual active set method (rows
//! with a negative multiplier leave, rows the move would violate join, at most
//! [`ACTIVE_SET_ROUNDS`] solves), and the move is halved until the sum of squared violations
//! decreases (a line search). What is left (the curvature of `C`) the next solve or the
//! sweeps of the projection finish.
//!
//! The contact planes of the step ([`GlobalProjection::set_planes`]) are rows of the same
//! solve: `C_v = offset - n . x_v <= 0` for a vertex that must stay on the outer side of its
//! plane, one row per free vertex (gradient `-n` at `v`; entry `-s_e w_v g_e . n` with the
//! edges at `v`; diagonal `w_v`, not regularised: the rows of distinct vertices are
//! independent, so the system stays positive definite), in the active set like the limits
//! (a row that would pull leaves it), and the line search counts the depth below a plane,
//! relative to the mean rest length, with the edges' violations. Without them the solve would
//! move vertices into their planes (a compressed edge running down to the floor is
//! lengthened along its frozen direction, which points into the floor), the contact sweep
//! would push them back out, and the limit and the plane, met alternately, would converge
//! only like alternating projections onto two half-spaces at a small angle.
//!
//! # Static friction
//!
//! A vertex that friction holds in the contact sweep ([`Plane::stick`]) moves along its
//! plane's normal only: its inverse mass `w` becomes `w n n^T` in `J W J^T` and in the move
//! (the regularisation keeps `eps (w_i + w_j)` on an edge's diagonal, so an edge between two
//! held vertices lying along their planes stays positive). Without the hold the solve would
//! slide such vertices along their planes with nothing to resist, and where the sweeps alone
//! do not reach the limit that frictionless move would decide where the sheet stays.
//! Coulomb's law in the active set: after each round, judged on that round's
//! multipliers, a held vertex is let go when its plane does not press it (its row inactive,
//! or pulling) or when the tangential move its hold prevented, `w |P_t (J^T lambda)_v|`
//! (`P_t` the projection onto the plane), exceeds the budget left in the step plus `mu`
//! times its row's push `w lambda_c`. The tangential move prevented in the move taken is
//! reported ([`GlobalProjection::friction_moves`]) for the contact rows to count over the
//! step.
//!
//! The pattern is that of every edge with a free vertex and, when the cloth has solids to
//! touch, one contact row per free vertex, fixed when the cloth is built: an inactive row (or
//! a vertex without a plane) is the identity. Without solids the pattern and every solve are
//! those of the edges alone. The symbolic analysis (AMD ordering) is done once and every
//! solve refactorises numerically. Everything runs sequentially (`faer::Par::Seq`), so
//! the result is the same for every thread count.

use cloth_mesh::Vec3;
use cloth_solver::{SolverError, SparseLlt};
use faer::Mat;

/// Relative regularisation `eps` of the diagonal: much smaller lets the active set cycle
/// between conflicting limits, much larger makes each move too soft to converge in few
/// solves.
const REGULARISATION: f64 = 1e-2;

/// Most halvings of the move in the line search.
const LINE_SEARCH: usize = 4;

/// Most solves (rounds of the active set) of one projection: one round leaves too many rows
/// wrong for the next projection, more cost factorisations the sweeps save anyway.
const ACTIVE_SET_ROUNDS: usize = 2;

/// One contact plane of a step: the vertex must stay on the side `normal . x >= offset`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plane {
    /// The vertex.
    pub vertex: usize,
    /// Unit outward normal.
    pub normal: Vec3,
    /// Offset (m).
    pub offset: f64,
    /// For a vertex that static friction holds (see "Static friction" in the module
    /// documentation): the Coulomb coefficient and the tangential correction (m) friction can
    /// still make in the step; `None` for a vertex free to slide.
    pub stick: Option<[f64; 2]>,
}

/// One off-diagonal entry of a column of the lower triangle: the other edge (row > column)
/// and the shared vertex.
#[derive(Clone, Copy, Debug)]
struct Entry {
    row: usize,
    vertex: usize,
}

/// The pattern, its symbolic factorisation and the scratch of the solves.
pub(crate) struct GlobalProjection {
    edges: Vec<[usize; 2]>,
    rest: Vec<f64>,
    /// The free vertices, in the order of their contact rows (rows `edges.len()..`).
    free: Vec<usize>,
    /// Per vertex: its contact row's index among `free` (`usize::MAX` if pinned).
    free_row: Vec<usize>,
    /// Per contact row: the plane `normal . x >= offset` (a zero normal: no plane).
    planes: Vec<(Vec3, f64)>,
    /// Per contact row: `[mu, budget]` of a vertex held by static friction (see [`Plane`]),
    /// for the solve under way; `None` when it may slide.
    stick: Vec<Option<[f64; 2]>>,
    /// Per vertex: the sum over the active edge rows of their gradients times their
    /// multipliers (`J^T lambda` of the edges, the pull the move answers).
    react: Vec<Vec3>,
    /// Per contact row, of the last solve's move as taken: the tangential move static
    /// friction prevented (m).
    held: Vec<Vec3>,
    /// Length scale of the contact rows in the line search's measure (m): the mean rest
    /// length.
    scale: f64,
    /// The off-diagonal entries, in the order of `row_idx` without the diagonals.
    entries: Vec<Entry>,
    values: Vec<f64>,
    llt: SparseLlt,
    rhs: Mat<f64>,
    /// Per edge: frozen direction of the step (compression rows).
    normal: Vec<Vec3>,
    /// Per row (the edges, then the contact rows): the row's unit direction `u` (`C` changes
    /// by `u . (dx_j - dx_i)`: the edge's direction for stretch, minus the frozen direction
    /// for compression; by `u . dx_v` for a contact row, `u` minus the plane's normal),
    /// constraint value, active.
    rows: Vec<(Vec3, f64, bool)>,
    /// Per vertex: the move of a solve, and the positions it is tried at.
    dx: Vec<Vec3>,
    trial: Vec<Vec3>,
}

fn err(e: impl std::fmt::Debug) -> SolverError {
    SolverError::Factorization {
        detail: format!("global strain projection: {e:?}"),
    }
}

/// A factorisation error of the shared sparse Cholesky, said to come from this projection.
fn prefixed(e: SolverError) -> SolverError {
    match e {
        SolverError::Factorization { detail } => err(detail),
        other => other,
    }
}

impl GlobalProjection {
    /// The pattern of the edges `edges` (rest lengths `rest`) that have a vertex with
    /// `inv_mass` > 0 and, if `planes` (the cloth has solids to touch), a contact row for
    /// every such vertex, analysed once. Without `planes` the pattern, and every solve, is
    /// that of the edges alone.
    pub fn new(
        edges: &[[usize; 2]],
        rest: &[f64],
        inv_mass: &[f64],
        planes: bool,
    ) -> Result<Self, SolverError> {
        let keep: Vec<usize> = (0..edges.len())
            .filter(|&e| inv_mass[edges[e][0]] > 0.0 || inv_mass[edges[e][1]] > 0.0)
            .collect();
        let edges: Vec<[usize; 2]> = keep.iter().map(|&e| edges[e]).collect();
        let rest: Vec<f64> = keep.iter().map(|&e| rest[e]).collect();
        let free: Vec<usize> = (0..inv_mass.len())
            .filter(|&v| planes && inv_mass[v] > 0.0)
            .collect();
        let mut free_row = vec![usize::MAX; inv_mass.len()];
        for (r, &v) in free.iter().enumerate() {
            free_row[v] = r;
        }
        let (col_ptr, row_idx, entries) = pattern(&edges, inv_mass, &free_row);
        let m = edges.len() + free.len();
        let scale = rest.iter().sum::<f64>() / rest.len().max(1) as f64;
        let values = vec![0.0; row_idx.len()];
        // Lower-triangular CSC pattern: every column starts with its diagonal.
        let llt = SparseLlt::new(m, col_ptr, row_idx).map_err(prefixed)?;
        Ok(Self {
            values,
            llt,
            rhs: Mat::zeros(m, 1),
            rows: vec![(Vec3::zeros(), 0.0, false); m],
            normal: vec![Vec3::zeros(); edges.len()],
            planes: vec![(Vec3::zeros(), 0.0); free.len()],
            stick: vec![None; free.len()],
            react: vec![Vec3::zeros(); inv_mass.len()],
            held: vec![Vec3::zeros(); free.len()],
            scale: if scale > 0.0 { scale } else { 1.0 },
            free,
            free_row,
            dx: vec![Vec3::zeros(); inv_mass.len()],
            trial: vec![Vec3::zeros(); inv_mass.len()],
            edges,
            rest,
            entries,
        })
    }

    /// Starts a step from positions `x0`: freezes the directions of the compression rows.
    pub fn begin(&mut self, x0: &[Vec3]) {
        for (n, e) in self.normal.iter_mut().zip(&self.edges) {
            let d = x0[e[1]] - x0[e[0]];
            let len = d.norm();
            *n = if len > 0.0 { d / len } else { Vec3::zeros() };
        }
    }

    /// Sets the contact planes of the step and which of their vertices static friction
    /// holds. A vertex keeps its first plane (the sweeps handle any further one); pinned or
    /// unknown vertices are ignored. Replaces the planes set before.
    pub fn set_planes(&mut self, planes: impl IntoIterator<Item = Plane>) {
        self.planes.fill((Vec3::zeros(), 0.0));
        self.stick.fill(None);
        for p in planes {
            let (n, offset) = (p.normal, p.offset);
            let r = self.free_row.get(p.vertex).copied().unwrap_or(usize::MAX);
            if let Some(q) = self.planes.get_mut(r)
                && q.0 == Vec3::zeros()
                && n.iter().all(|c| c.is_finite())
                && offset.is_finite()
            {
                *q = (n, offset);
                self.stick[r] = p.stick.filter(|s| s.iter().all(|c| c.is_finite()));
            }
        }
    }

    /// The normal of vertex `v`'s plane if static friction holds it in the solve under way
    /// (it then moves along that normal only).
    fn held(&self, v: usize) -> Option<Vec3> {
        let r = *self.free_row.get(v)?;
        self.stick.get(r)?.map(|_| self.planes[r].0)
    }

    /// `W_v a`: the move of vertex `v` for a reaction `a`, `inv_mass[v] a`, or its normal
    /// part only for a vertex static friction holds.
    fn weigh(&self, inv_mass: &[f64], v: usize, a: Vec3) -> Vec3 {
        match self.held(v) {
            Some(n) => n * (inv_mass[v] * n.dot(&a)),
            None => a * inv_mass[v],
        }
    }

    /// The derivative of row `row`'s constraint with respect to the position of its vertex
    /// `v`.
    fn grad(&self, row: usize, v: usize) -> Vec3 {
        let u = self.rows[row].0;
        match self.edges.get(row) {
            Some(&e) => u * side(e, v),
            None => u,
        }
    }

    /// One linearised projection of `x` onto the limits `abs(d) <= max * rest` of the edges
    /// that exceed `(max - slack) * rest` and `n . d >= min * rest` (`n` the direction frozen
    /// by [`GlobalProjection::begin`]) of those below `(min + slack) * rest` along `n`, and
    /// onto the contact planes of [`GlobalProjection::set_planes`] (of the vertices within
    /// `slack` times the mean rest length of theirs, or that the move would take below it);
    /// vertices with `inv_mass` 0 do not move. Returns the number of rows that pulled or
    /// pushed; on error `x` is unchanged.
    pub fn solve(
        &mut self,
        x: &mut [Vec3],
        inv_mass: &[f64],
        [min, max]: [f64; 2],
        slack: f64,
    ) -> Result<usize, SolverError> {
        self.held.fill(Vec3::zeros());
        let it = self.edges.iter().zip(&self.rest).zip(&self.normal);
        let mid = 0.5 * (min + max);
        for (r, ((e, &l), &n)) in self.rows.iter_mut().zip(it) {
            let d = x[e[1]] - x[e[0]];
            let len = d.norm();
            *r = if len > mid * l || (n == Vec3::zeros() && len > 0.0) {
                (d / len, len - max * l, false)
            } else if n != Vec3::zeros() {
                (-n, min * l - n.dot(&d), false)
            } else {
                (Vec3::zeros(), f64::NEG_INFINITY, false)
            };
            r.2 = r.1 > -slack * l;
        }
        let m = self.edges.len();
        for (k, &(n, offset)) in self.planes.iter().enumerate() {
            let c = offset - n.dot(&x[self.free[k]]);
            self.rows[m + k] = if n == Vec3::zeros() {
                (Vec3::zeros(), f64::NEG_INFINITY, false)
            } else {
                (-n, c, c > -slack * self.scale)
            };
            // Friction holds only a vertex on its plane.
            if !self.rows[m + k].2 {
                self.stick[k] = None;
            }
        }
        for _ in 0..ACTIVE_SET_ROUNDS {
            self.factor_and_solve(inv_mass)?;
            self.moves(inv_mass);
            if self.coulomb(inv_mass) + self.update_active_set() == 0 {
                break;
            }
        }
        self.moves(inv_mass);
        Ok(self.line_search(x, [min, max]))
    }

    /// Fills the values of `J W J^T + eps D` (the regularisation on the edge rows only;
    /// identity rows for inactive rows), factorises and leaves the multipliers in `rhs`.
    fn factor_and_solve(&mut self, inv_mass: &[f64]) -> Result<(), SolverError> {
        let (m, me) = (self.rows.len(), self.edges.len());
        let mut next = 0;
        for col in 0..m {
            let (lo, hi) = (self.llt.col_ptr()[col], self.llt.col_ptr()[col + 1]);
            let (_, c, active) = self.rows[col];
            self.values[lo] = match self.edges.get(col) {
                _ if !active => 1.0,
                Some(&[i, j]) if self.held(i).is_none() && self.held(j).is_none() => {
                    (inv_mass[i] + inv_mass[j]) * (1.0 + REGULARISATION)
                }
                Some(&[i, j]) => {
                    let g = self.rows[col].0;
                    let reg = (inv_mass[i] + inv_mass[j]) * REGULARISATION;
                    g.dot(&self.weigh(inv_mass, i, g)) + g.dot(&self.weigh(inv_mass, j, g)) + reg
                }
                None => inv_mass[self.free[col - me]],
            };
            self.rhs[(col, 0)] = if active { c } else { 0.0 };
            for p in lo + 1..hi {
                let en = self.entries[next];
                next += 1;
                self.values[p] = if active && self.rows[en.row].2 {
                    let v = en.vertex;
                    let b = self.grad(en.row, v);
                    match self.held(v) {
                        None => inv_mass[v] * self.grad(col, v).dot(&b),
                        Some(_) => self.grad(col, v).dot(&self.weigh(inv_mass, v, b)),
                    }
                } else {
                    0.0
                };
            }
        }
        self.llt
            .factor_solve(&self.values, self.rhs.as_mut())
            .map_err(prefixed)?;
        match (0..m).find(|&k| !self.rhs[(k, 0)].is_finite()) {
            Some(k) => Err(err(format!("non-finite multiplier of row {k}"))),
            None => Ok(()),
        }
    }

    /// The vertices of row `k` (an edge's two, or a contact row's one twice).
    fn vertices(&self, k: usize) -> [usize; 2] {
        match self.edges.get(k) {
            Some(&e) => e,
            None => [self.free[k - self.edges.len()]; 2],
        }
    }

    /// The move `dx = -W J^T lambda` of the multipliers in `rhs` over all active rows (and
    /// the reaction `J^T lambda` of the edge rows in `react`).
    fn moves(&mut self, inv_mass: &[f64]) {
        self.dx.fill(Vec3::zeros());
        self.react.fill(Vec3::zeros());
        let me = self.edges.len();
        for k in 0..self.rows.len() {
            if !self.rows[k].2 {
                continue;
            }
            let (lambda, [i, j]) = (self.rhs[(k, 0)], self.vertices(k));
            let gi = self.grad(k, i);
            self.dx[i] -= gi * (inv_mass[i] * lambda);
            if j != i {
                let gj = self.grad(k, j);
                self.dx[j] -= gj * (inv_mass[j] * lambda);
                self.react[i] += gi * lambda;
                self.react[j] += gj * lambda;
            }
        }
        // A vertex static friction holds moves along its plane's normal only.
        for r in 0..self.free.len() {
            let v = self.free[r];
            let lambda = self.rhs[(me + r, 0)];
            self.held[r] = Vec3::zeros();
            if self.stick[r].is_some() {
                let mut f = self.react[v];
                if self.rows[me + r].2 {
                    f += self.grad(me + r, v) * lambda;
                }
                let allowed = -self.weigh(inv_mass, v, f);
                self.held[r] = -f * inv_mass[v] - allowed;
                self.dx[v] = allowed;
            }
        }
    }

    /// Coulomb's law for the vertices static friction holds in the solve under way, judged on
    /// the multipliers of the round's active set (before it is updated): a vertex whose
    /// edges pull it along its plane by more than friction can resist (the tangential move
    /// its hold prevented, `w |P_t J^T lambda|`, above the budget left in the step plus `mu`
    /// times the normal push of its contact row, `w lambda_c`) slides from the next round
    /// on (from the final move if this was the last round). A vertex whose contact row
    /// would pull is judged in the next round, without it. Returns the number let go.
    fn coulomb(&mut self, inv_mass: &[f64]) -> usize {
        let me = self.edges.len();
        let mut released = 0;
        for (r, &v) in self.free.iter().enumerate() {
            let Some([mu, budget]) = self.stick[r] else {
                continue;
            };
            let (n, lambda) = (self.planes[r].0, self.rhs[(me + r, 0)]);
            let f = self.react[v];
            let tangential = inv_mass[v] * (f - n * n.dot(&f)).norm();
            // Off its plane (its contact row inactive, or pulling), nothing presses the
            // vertex on: it is let go.
            let pressed = self.rows[me + r].2 && lambda >= 0.0;
            if !pressed || tangential > budget + mu * inv_mass[v] * lambda {
                self.stick[r] = None;
                released += 1;
            }
        }
        released
    }

    /// One step of the primal-dual active set method (Hintermüller, Ito & Kunisch 2002) for
    /// the inequality rows: a row leaves the set when its multiplier is negative (it would
    /// push, or for a contact pull), an inactive row joins it when the move `dx` violates its
    /// linearisation. Returns the number of rows that changed.
    fn update_active_set(&mut self) -> usize {
        let mut changed = 0;
        for k in 0..self.rows.len() {
            let (u, c, active) = self.rows[k];
            let on = if active {
                self.rhs[(k, 0)] >= 0.0
            } else {
                let [i, j] = self.vertices(k);
                let dc = if i == j {
                    u.dot(&self.dx[i])
                } else {
                    u.dot(&(self.dx[j] - self.dx[i]))
                };
                c + dc > 0.0
            };
            changed += usize::from(on != active);
            self.rows[k].2 = on;
        }
        changed
    }

    /// The move `dx` (the sum over all active rows, negative multipliers included after the
    /// last round: where the active rows are redundant the multipliers' redundant parts
    /// cancel only in the sum), taken whole or halved up to [`LINE_SEARCH`] times until the
    /// measure of [`GlobalProjection::violation`] decreases; `x` is left unchanged if none
    /// does. Returns the number of active rows.
    fn line_search(&mut self, x: &mut [Vec3], lim: [f64; 2]) -> usize {
        let active = self.rows.iter().filter(|r| r.2).count();
        let before = self.violation(x, lim);
        let mut t = 1.0;
        for _ in 0..=LINE_SEARCH {
            for ((y, p), d) in self.trial.iter_mut().zip(x.iter()).zip(&self.dx) {
                *y = p + d * t;
            }
            if self.violation(&self.trial, lim) < before {
                x.copy_from_slice(&self.trial);
                self.held.iter_mut().for_each(|h| *h *= t);
                return active;
            }
            t *= 0.5;
        }
        self.held.fill(Vec3::zeros());
        0
    }

    /// Of the last solve's move, for vertex `v`: the tangential move static friction
    /// prevented (m; zero if it did not hold `v`, the solve failed or moved nothing).
    pub fn friction_moves(&self, v: usize) -> Vec3 {
        let r = self.free_row.get(v).copied().unwrap_or(usize::MAX);
        self.held.get(r).copied().unwrap_or(Vec3::zeros())
    }

    /// Sum over the edges of the squared relative violation of `[min, max]` (length / rest)
    /// at `x`, plus over the contact planes the squared depth below the plane relative to the
    /// mean rest length: the line search's measure of progress (a smooth measure; the largest
    /// violation instead makes the search stop early and the projection take more solves).
    fn violation(&self, x: &[Vec3], [min, max]: [f64; 2]) -> f64 {
        let edges: f64 = (self.edges.iter().zip(&self.rest))
            .map(|(e, &l)| {
                let r = (x[e[1]] - x[e[0]]).norm() / l;
                let v = (r - max).max(min - r).max(0.0);
                v * v
            })
            .sum();
        let planes: f64 = (self.planes.iter().zip(&self.free))
            .filter(|(p, _)| p.0 != Vec3::zeros())
            .map(|(&(n, offset), &v)| {
                let d = ((offset - n.dot(&x[v])) / self.scale).max(0.0);
                d * d
            })
            .sum();
        edges + planes
    }
}

/// `+1` if `v` is the edge's second vertex, `-1` if its first.
fn side(e: [usize; 2], v: usize) -> f64 {
    if e[1] == v { 1.0 } else { -1.0 }
}

/// The lower-triangular CSC pattern of `J W J^T` over `edges` and the contact rows of the
/// free vertices (row `edges.len() + free_row[v]` for vertex `v`): the diagonal, then one
/// entry per pair of rows sharing a vertex with `inv_mass` > 0, rows ascending.
fn pattern(
    edges: &[[usize; 2]],
    inv_mass: &[f64],
    free_row: &[usize],
) -> (Vec<usize>, Vec<usize>, Vec<Entry>) {
    let n = inv_mass.len();
    let me = edges.len();
    let mut at: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, e) in edges.iter().enumerate() {
        for &v in e {
            if inv_mass[v] > 0.0 {
                at[v].push(k);
            }
        }
    }
    let rows = me + free_row.iter().filter(|&&r| r != usize::MAX).count();
    let mut below: Vec<Vec<(usize, usize)>> = vec![Vec::new(); rows];
    for (v, list) in at.iter().enumerate() {
        for &a in list {
            for &b in list {
                if b > a {
                    below[a].push((b, v));
                }
            }
            if free_row[v] != usize::MAX {
                below[a].push((me + free_row[v], v));
            }
        }
    }
    let mut col_ptr = Vec::with_capacity(rows + 1);
    let mut row_idx = Vec::new();
    let mut entries = Vec::new();
    col_ptr.push(0);
    for (col, list) in below.iter_mut().enumerate() {
        list.sort_unstable();
        list.dedup_by_key(|p| p.0);
        row_idx.push(col);
        for &(row, vertex) in list.iter() {
            row_idx.push(row);
            entries.push(Entry { row, vertex });
        }
        col_ptr.push(row_idx.len());
    }
    (col_ptr, row_idx, entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_bowed_between_two_pins_is_brought_within_its_limit_and_the_pins_stay() {
        // A chain of 20 unit edges pinned at both ends 21 apart, bowed sideways so that its
        // edges are stretched about 9% beyond the 1.1 limit: repeated solves bring every edge
        // within the limit to the 0.5% tolerance (18 solves when written: the regularised
        // iteration converges linearly on this bow), and the pins do not move.
        let n = 21;
        let edges: Vec<[usize; 2]> = (0..n - 1).map(|i| [i, i + 1]).collect();
        let rest = vec![1.0; n - 1];
        let mut inv = vec![1.0; n];
        (inv[0], inv[n - 1]) = (0.0, 0.0);
        let mut g = GlobalProjection::new(&edges, &rest, &inv, false).expect("pattern");
        let mut x: Vec<Vec3> = (0..n)
            .map(|i| {
                let s = (i as f64 * std::f64::consts::PI / 20.0).sin();
                Vec3::new(1.05 * i as f64, 4.0 * s, 0.0)
            })
            .collect();
        let worst = |x: &[Vec3]| {
            (edges.iter())
                .map(|e| (x[e[1]] - x[e[0]]).norm() - 1.1)
                .fold(f64::NEG_INFINITY, f64::max)
        };
        let start = worst(&x);
        assert!(start > 0.05, "{start}");
        let (a, b) = (x[0], x[n - 1]);
        g.begin(&x);
        let mut solves = 0;
        while worst(&x) > 0.005 && solves < 40 {
            g.solve(&mut x, &inv, [0.9, 1.1], 0.005).expect("solve");
            solves += 1;
        }
        assert!(x[0] == a && x[n - 1] == b);
        assert!(worst(&x) <= 0.005, "{} after {solves} solves", worst(&x));
    }

    /// The plane `y >= 0` for vertex `v`, free to slide.
    fn floor(v: usize) -> Plane {
        Plane {
            vertex: v,
            normal: Vec3::y(),
            offset: 0.0,
            stick: None,
        }
    }

    #[test]
    fn a_compressed_edge_tilted_into_a_plane_is_lengthened_along_the_plane() {
        // Vertex 0 lies on the floor (plane y >= 0), vertex 1 is pinned 45 degrees above it;
        // the edge, rest 1, is compressed to 0.71 (limit 0.9). Its compression row alone moves
        // vertex 0 along the edge, into the floor; with the plane as a row of the same solve
        // vertex 0 slides along the floor instead, and the limit holds.
        let edges = [[0, 1]];
        let inv = [1.0, 0.0];
        let mut x = vec![Vec3::zeros(), Vec3::new(0.5, 0.5, 0.0)];
        let mut g = GlobalProjection::new(&edges, &[1.0], &inv, true).expect("pattern");
        g.begin(&x);
        for _ in 0..4 {
            g.set_planes([0, 1, 7].map(floor));
            g.solve(&mut x, &inv, [0.9, 1.1], 0.005).expect("solve");
        }
        let n = Vec3::new(1.0, 1.0, 0.0).normalize();
        assert!(n.dot(&(x[1] - x[0])) >= 0.9 * (1.0 - 0.005), "{x:?}");
        assert!(
            x[0].y >= -1e-12 && x[1] == Vec3::new(0.5, 0.5, 0.0),
            "{x:?}"
        );
        // Without the plane the same solves push vertex 0 into the floor.
        let mut y = vec![Vec3::zeros(), Vec3::new(0.5, 0.5, 0.0)];
        g.set_planes([]);
        g.solve(&mut y, &inv, [0.9, 1.1], 0.005).expect("solve");
        assert!(y[0].y < -0.1, "{y:?}");
    }

    /// Vertex 0 on the floor (plane `y >= 0`, held by static friction as `stick` says, see
    /// [`Plane`]), its edge (rest 1, limit 1.1) to vertex 1 at `other` (`inv_other` its
    /// inverse mass); returns both after the solves that bring the edge within its limit to
    /// the 0.5% tolerance.
    fn pulled(other: Vec3, inv_other: f64, stick: Option<[f64; 2]>) -> [Vec3; 2] {
        let inv = [1.0, inv_other];
        let mut x = vec![Vec3::zeros(), other];
        let mut g = GlobalProjection::new(&[[0, 1]], &[1.0], &inv, true).expect("pattern");
        g.begin(&x);
        for _ in 0..20 {
            if (x[1] - x[0]).norm() <= 1.1 * 1.005 {
                break;
            }
            g.set_planes([Plane { stick, ..floor(0) }]);
            g.solve(&mut x, &inv, [0.9, 1.1], 0.005).expect("solve");
        }
        assert!((x[1] - x[0]).norm() <= 1.1 * 1.005, "{x:?}");
        assert!(x[0].y >= -1e-12, "{x:?}");
        [x[0], x[1]]
    }

    #[test]
    fn static_friction_holds_a_vertex_pressed_on_its_plane_while_it_lasts() {
        // Vertex 1 (free, no plane) 1.204 from vertex 0, pulling it along the floor and a
        // little into it. Held with friction enough for the pull, vertex 0 stays where it is
        // and vertex 1 alone comes back to the limit.
        let other = Vec3::new(1.2, -0.1, 0.0);
        let [held, _] = pulled(other, 1.0, Some([0.3, 1.0]));
        assert!(held == Vec3::zeros(), "{held:?}");
        // Free to slide, it moves towards vertex 1.
        let [free, _] = pulled(other, 1.0, None);
        assert!(free.x > 0.01, "{free:?}");
        // Held with no budget left in the step and pulled by more than mu times the push of
        // its plane (the pull is mostly along the floor), it slides.
        let [spent, _] = pulled(other, 1.0, Some([0.3, 0.0]));
        assert!(spent.x > 0.01, "{spent:?}");
    }

    #[test]
    fn a_vertex_pulled_off_its_plane_is_not_held() {
        // Vertex 1 pinned above and beside vertex 0: the limit lifts vertex 0 off the floor,
        // where nothing presses it on and friction cannot hold it, whatever its budget.
        let [lifted, pin] = pulled(Vec3::new(0.3, 1.2, 0.0), 0.0, Some([0.3, 1.0]));
        assert!(pin == Vec3::new(0.3, 1.2, 0.0), "{pin:?}");
        assert!(lifted.y > 0.0 && lifted.x > 0.0, "{lifted:?}");
    }
}
