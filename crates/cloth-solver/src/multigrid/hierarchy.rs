//! The levels of a hierarchy for `D` near-null-space vectors per aggregate: their symbolic
//! build, numeric refresh and the V-cycle over them.

use nalgebra::{SMatrix, Vector3};

use super::cycle::{Coarsest, Smoothing};
use super::level::{Level, Vecs, rigid_block, rigid_centres};
use super::ops::{CoarseOp, FineOp, Operator};
use super::params::{MultigridParams, Smoother};
use crate::{BlockMatrix, Constraint, SolverError};

/// Chebyshev smoothing targets `[l / ratio, l]` with `l` this factor times the Lanczos
/// estimate of `lambda_max(D_f^-1 A_f)`: a Chebyshev polynomial amplifies eigen-components
/// above its interval (by 1.5x at 10% above, degree 2), so the estimate, which may be a few
/// percent low, is padded (pyamg and hypre pad by 1.1 as well).
const CHEBYSHEV_PAD: f64 = 1.1;

/// Largest coarsest level (unknowns) factorised densely; a coarsest level left larger (when
/// coarsening stalls, e.g. on an almost diagonal matrix) is smoothed instead.
const DENSE_LIMIT: usize = 3000;

/// A coarse level: its Galerkin operator and its smoother/transfer data.
#[derive(Clone, Debug)]
struct CoarseLevel<const D: usize> {
    op: CoarseOp<D>,
    level: Level<D, D>,
}

/// The levels of a hierarchy with `D` near-null-space vectors per aggregate (3 or 6).
#[derive(Clone, Debug)]
pub(super) struct Hierarchy<const D: usize> {
    fine: Level<3, D>,
    coarse: Vec<CoarseLevel<D>>,
    coarsest: Coarsest,
}

/// The hierarchy, by near-null space ([`NearNullSpace`]).
#[derive(Clone, Debug)]
pub(super) enum Levels {
    Translations(Hierarchy<3>),
    RigidBody(Hierarchy<6>),
}

/// Candidate source for a refresh that does not rebuild prolongators (never called).
fn unreachable_cand<const D: usize>() -> SMatrix<f64, 3, D> {
    SMatrix::zeros()
}

/// What a numeric refresh recomputes (see [`super::Multigrid::refresh`]).
#[derive(Clone, Copy)]
pub(super) struct Refresh<'p> {
    /// The hierarchy's parameters.
    pub params: &'p MultigridParams,
    /// New prolongators (candidates, QR, smoothing) instead of the kept ones.
    pub rebuild: bool,
    /// New coarse operators (Galerkin products, coarsest factor) instead of the kept ones.
    pub galerkin: bool,
    /// Smoother intervals topped by the guaranteed bound instead of the Lanczos estimate.
    pub bounded: bool,
}

impl<'p> Refresh<'p> {
    /// Everything, with the Lanczos estimate: the numeric part of a new hierarchy.
    fn all(params: &'p MultigridParams) -> Self {
        Self {
            params,
            rebuild: true,
            galerkin: true,
            bounded: false,
        }
    }
}

/// Whether a level of `dofs` unknowns at `index` (0 = fine) gets a coarser level below it.
fn coarsen(params: &MultigridParams, dofs: usize, index: usize) -> bool {
    dofs > params.coarse_size && index + 1 < params.max_levels
}

/// Numeric refresh of a level with a transfer: smoother data, and either a new prolongator
/// (returning the next level's candidates) or the kept one; then the Galerkin product.
fn refresh_transfer<const B: usize, const D: usize, O: Operator<B>>(
    level: &mut Level<B, D>,
    op: &O,
    index: usize,
    how: Refresh<'_>,
    cand: impl Fn(usize, usize) -> SMatrix<f64, B, D> + Sync,
    coarse: &mut CoarseOp<D>,
) -> Result<Option<Vec<SMatrix<f64, D, D>>>, SolverError> {
    let params = how.params;
    level.invert_diagonal(op, index)?;
    let chebyshev = matches!(params.smoother, Smoother::Chebyshev { .. });
    if how.rebuild || chebyshev {
        level.smooth.lambda = top_of_spectrum(level, op, how);
    }
    let Some(tr) = level.transfer.as_mut() else {
        return Ok(None);
    };
    if !how.galerkin {
        return Ok(None);
    }
    let next = if how.rebuild {
        let r = tr.fit(cand);
        let omega = params.prolongator_damping / level.smooth.lambda * CHEBYSHEV_PAD;
        tr.smooth_prolongator(op, &level.smooth.dinv, omega);
        Some(r)
    } else {
        None
    };
    tr.galerkin(op, coarse);
    Ok(next)
}

/// The top of the smoother's interval: the padded Lanczos estimate, or, when `how.bounded`,
/// the guaranteed bound [`Level::lambda_bound`] (diagonal inverses must be current).
fn top_of_spectrum<const B: usize, const D: usize, O: Operator<B>>(
    level: &mut Level<B, D>,
    op: &O,
    how: Refresh<'_>,
) -> f64 {
    if how.bounded {
        level.lambda_bound(op)
    } else {
        CHEBYSHEV_PAD * level.estimate_lambda(op, how.params.lanczos_steps)
    }
}

/// Numeric refresh of the coarsest level: smoother data (for [`Coarsest::Smooth`]) and the
/// dense factor.
fn refresh_coarsest<const B: usize, const D: usize, O: Operator<B>>(
    level: &mut Level<B, D>,
    coarsest: &mut Coarsest,
    op: &O,
    index: usize,
    how: Refresh<'_>,
) -> Result<(), SolverError> {
    if let Coarsest::Smooth = coarsest {
        level.invert_diagonal(op, index)?;
        if matches!(how.params.smoother, Smoother::Chebyshev { .. }) {
            level.smooth.lambda = top_of_spectrum(level, op, how);
        }
    }
    coarsest.factor(op, index)
}

impl<const D: usize> Hierarchy<D> {
    /// The hierarchy of the fine operator `A_f` of `a` and `constraints`: symbolic levels
    /// down to [`MultigridParams::coarse_size`] unknowns and their numeric part.
    pub(super) fn build(
        a: &BlockMatrix,
        positions: &[Vector3<f64>],
        constraints: &[Constraint],
        params: &MultigridParams,
    ) -> Result<Self, SolverError> {
        let n = a.n();
        let op0 = FineOp {
            a,
            cons: constraints,
        };
        let theta = params.strength_threshold;
        let (mut fine, first) =
            Level::<3, D>::symbolic(&op0, coarsen(params, 3 * n, 0), theta, true);
        let (coarse, coarsest) = match first {
            None => (Vec::new(), Coarsest::new(3 * n, DENSE_LIMIT)),
            Some(mut cop) => {
                let tr = fine
                    .transfer
                    .as_ref()
                    .expect("transfer with a coarse pattern");
                let centres = rigid_centres(positions, tr);
                let cand = refresh_transfer(
                    &mut fine,
                    &op0,
                    0,
                    Refresh::all(params),
                    |a, i| rigid_block(&op0, i, &positions[i], &centres[a].0, centres[a].1),
                    &mut cop,
                )?
                .expect("rebuilt");
                let coarse = Self::build_coarse(cop, cand, params)?;
                let last = coarse.last().expect("at least one coarse level");
                let coarsest = Coarsest::new(D * last.op.n(), DENSE_LIMIT);
                (coarse, coarsest)
            }
        };
        let mut h = Hierarchy {
            fine,
            coarse,
            coarsest,
        };
        // Coarsest factor (and smoother data of a single-level hierarchy).
        let nl = h.coarse.len();
        let how = Refresh::all(params);
        match h.coarse.last_mut() {
            Some(last) => refresh_coarsest(&mut last.level, &mut h.coarsest, &last.op, nl, how)?,
            None => {
                refresh_coarsest(&mut h.fine, &mut h.coarsest, &op0, 0, how)?;
                h.fine.invert_diagonal(&op0, 0)?;
                h.fine.smooth.lambda =
                    CHEBYSHEV_PAD * h.fine.estimate_lambda(&op0, params.lanczos_steps);
            }
        }
        Ok(h)
    }

    /// The coarse levels from the first coarse operator `cop` and its candidates `cand` down,
    /// each with its numeric part (the last one without a transfer).
    fn build_coarse(
        mut cop: CoarseOp<D>,
        mut cand: Vec<SMatrix<f64, D, D>>,
        params: &MultigridParams,
    ) -> Result<Vec<CoarseLevel<D>>, SolverError> {
        let theta = params.strength_threshold;
        let mut coarse: Vec<CoarseLevel<D>> = Vec::new();
        loop {
            let index = coarse.len() + 1;
            let nc = cop.n();
            let (mut level, next) =
                Level::<D, D>::symbolic(&cop, coarsen(params, D * nc, index), theta, false);
            level.cand = cand;
            let Some(mut next_op) = next else {
                coarse.push(CoarseLevel { op: cop, level });
                return Ok(coarse);
            };
            let cands = std::mem::take(&mut level.cand);
            let r = refresh_transfer(
                &mut level,
                &cop,
                index,
                Refresh::all(params),
                |_, i| cands[i],
                &mut next_op,
            )?
            .expect("rebuilt");
            level.cand = cands;
            coarse.push(CoarseLevel { op: cop, level });
            cop = next_op;
            cand = r;
        }
    }

    /// Numeric refresh of the levels for the fine operator `op0` (see
    /// [`super::Multigrid::refresh`]): new prolongators when `how.rebuild`, new coarse
    /// operators when `how.galerkin`, the fine smoother always; smoother intervals from the
    /// guaranteed bound when `how.bounded`.
    pub(super) fn refresh(
        &mut self,
        op0: &FineOp<'_>,
        positions: &[Vector3<f64>],
        how: Refresh<'_>,
    ) -> Result<(), SolverError> {
        let Hierarchy {
            fine,
            coarse,
            coarsest,
        } = self;
        if coarse.is_empty() {
            fine.invert_diagonal(op0, 0)?;
            if matches!(how.params.smoother, Smoother::Chebyshev { .. }) {
                fine.smooth.lambda = top_of_spectrum(fine, op0, how);
            }
            refresh_coarsest(fine, coarsest, op0, 0, how)?;
        } else if !how.galerkin {
            // Coarse levels kept: only the fine smoother follows the matrix.
            let how = Refresh {
                rebuild: false,
                ..how
            };
            refresh_transfer(
                fine,
                op0,
                0,
                how,
                |_, _| unreachable_cand::<D>(),
                &mut coarse[0].op,
            )?;
        } else {
            self.refresh_levels(op0, positions, how)?;
        }
        Ok(())
    }

    /// [`Hierarchy::refresh`] of every level, coarse operators included.
    fn refresh_levels(
        &mut self,
        op0: &FineOp<'_>,
        positions: &[Vector3<f64>],
        how: Refresh<'_>,
    ) -> Result<(), SolverError> {
        let Hierarchy {
            fine,
            coarse,
            coarsest,
        } = self;
        let mut cand = {
            let tr = fine
                .transfer
                .as_ref()
                .expect("transfer above a coarse level");
            let centres = if how.rebuild {
                rigid_centres(positions, tr)
            } else {
                Vec::new()
            };
            refresh_transfer(
                fine,
                op0,
                0,
                how,
                |a, i| rigid_block(op0, i, &positions[i], &centres[a].0, centres[a].1),
                &mut coarse[0].op,
            )?
        };
        let nl = coarse.len();
        for l in 0..nl - 1 {
            let (lo, hi) = coarse.split_at_mut(l + 1);
            let cl = &mut lo[l];
            if let Some(c) = cand.take() {
                cl.level.cand = c;
            }
            let cands = std::mem::take(&mut cl.level.cand);
            cand = refresh_transfer(
                &mut cl.level,
                &cl.op,
                l + 1,
                how,
                |_, i| cands[i],
                &mut hi[0].op,
            )?;
            cl.level.cand = cands;
        }
        let last = &mut coarse[nl - 1];
        if let Some(c) = cand.take() {
            last.level.cand = c;
        }
        refresh_coarsest(&mut last.level, coarsest, &last.op, nl, how)
    }

    /// One V-cycle: `x = V b` for a fine-level `b` in the range of `S` (result in that range).
    pub(super) fn vcycle(
        &mut self,
        kind: Smoother,
        op0: &FineOp<'_>,
        b0: &[Vector3<f64>],
        x0: &mut [Vector3<f64>],
    ) {
        let Hierarchy {
            fine,
            coarse,
            coarsest,
        } = self;
        let fine_smoothing = Smoothing::new(kind, op0, &fine.smooth);
        if coarse.is_empty() {
            let Vecs { r, d, .. } = &mut fine.vecs;
            coarsest.solve(&fine_smoothing, b0, x0, r, d);
            return;
        }
        let tr0 = fine
            .transfer
            .as_ref()
            .expect("transfer above a coarse level");
        fine_smoothing.pre(b0, x0, &mut fine.vecs.r, &mut fine.vecs.d);
        tr0.restrict(&fine.vecs.r, &mut coarse[0].level.vecs.b);
        let nl = coarse.len();
        for l in 0..nl - 1 {
            let (lo, hi) = coarse.split_at_mut(l + 1);
            let cl = &mut lo[l];
            let Vecs { x, b, r, d } = &mut cl.level.vecs;
            Smoothing::new(kind, &cl.op, &cl.level.smooth).pre(b, x, r, d);
            let tr = cl
                .level
                .transfer
                .as_ref()
                .expect("transfer above a coarse level");
            tr.restrict(r, &mut hi[0].level.vecs.b);
        }
        {
            let last = &mut coarse[nl - 1];
            let Vecs { x, b, r, d } = &mut last.level.vecs;
            coarsest.solve(
                &Smoothing::new(kind, &last.op, &last.level.smooth),
                b,
                x,
                r,
                d,
            );
        }
        for l in (0..nl - 1).rev() {
            let (lo, hi) = coarse.split_at_mut(l + 1);
            let cl = &mut lo[l];
            let tr = cl
                .level
                .transfer
                .as_ref()
                .expect("transfer above a coarse level");
            let Vecs { x, b, r, d } = &mut cl.level.vecs;
            tr.prolong_add(&hi[0].level.vecs.x, x);
            Smoothing::new(kind, &cl.op, &cl.level.smooth).post(b, x, r, d);
        }
        tr0.prolong_add(&coarse[0].level.vecs.x, x0);
        fine_smoothing.post(b0, x0, &mut fine.vecs.r, &mut fine.vecs.d);
    }

    /// Number of levels (1 = no coarsening).
    pub(super) fn levels(&self) -> usize {
        1 + self.coarse.len()
    }

    /// Unknowns of the coarse levels, finest first.
    pub(super) fn coarse_unknowns(&self) -> impl Iterator<Item = usize> + '_ {
        self.coarse.iter().map(|c| D * c.op.n())
    }

    /// Stored scalar entries of the coarse operators.
    pub(super) fn coarse_entries(&self) -> f64 {
        self.coarse
            .iter()
            .map(|c| (D * D * c.op.full_blocks()) as f64)
            .sum()
    }

    /// Bytes of the levels (see [`Multigrid::memory_bytes`]).
    pub(super) fn memory_bytes(&self) -> usize {
        let level = |l: &Level<3, D>| {
            l.transfer.as_ref().map_or(0, |t| t.memory_bytes())
                + l.smooth.dinv.len() * size_of::<SMatrix<f64, 3, 3>>()
                + (l.smooth.colour_ptr.len() + l.smooth.colour_nodes.len()) * size_of::<usize>()
                + l.vecs.memory_bytes()
        };
        let clevel = |l: &Level<D, D>| {
            l.transfer.as_ref().map_or(0, |t| t.memory_bytes())
                + l.smooth.dinv.len() * size_of::<SMatrix<f64, D, D>>()
                + (l.smooth.colour_ptr.len() + l.smooth.colour_nodes.len()) * size_of::<usize>()
                + l.vecs.memory_bytes()
                + l.cand.len() * size_of::<SMatrix<f64, D, D>>()
        };
        level(&self.fine)
            + self
                .coarse
                .iter()
                .map(|c| c.op.memory_bytes() + clevel(&c.level))
                .sum::<usize>()
            + self.coarsest.memory_bytes()
    }

    /// Adds the levels' components to `v` (see [`Multigrid::memory_breakdown`]).
    pub(super) fn memory_breakdown(&self, v: &mut Vec<(&'static str, usize)>) {
        if let Some(t) = &self.fine.transfer {
            v.push(("L0 P", t.p.memory_bytes()));
            v.push(("L0 AP pattern", (t.ap_ptr.len() + t.ap_cols.len()) * 8));
            v.push(("L0 P^T", t.pt.memory_bytes()));
            v.push(("L0 tent", t.tent.len() * size_of::<SMatrix<f64, 3, D>>()));
        }
        v.push((
            "L0 smoother+vecs",
            self.fine.smooth.dinv.len() * 72
                + (self.fine.smooth.colour_nodes.len() * 8)
                + self.fine.vecs.memory_bytes(),
        ));
        v.push((
            "coarse ops",
            self.coarse.iter().map(|c| c.op.memory_bytes()).sum(),
        ));
        v.push((
            "coarse transfers",
            self.coarse
                .iter()
                .map(|c| c.level.transfer.as_ref().map_or(0, |t| t.memory_bytes()))
                .sum(),
        ));
        v.push(("coarsest", self.coarsest.memory_bytes()));
    }
}
