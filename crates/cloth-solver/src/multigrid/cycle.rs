//! Smoothers and the coarsest-level solve. Every pass is row-parallel over fixed chunks with
//! no reduction, or serial: results do not depend on the thread count.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::llt;
use faer::{Mat, Par as FaerPar};
use nalgebra::SVector;
use rayon::prelude::*;

use super::level::SmoothData;
use super::ops::Operator;
use super::params::Smoother;
use crate::SolverError;
use crate::par::ROW_CHUNK;

/// Chebyshev interval `[lambda / ratio, lambda]` as `(theta, delta)` = (centre, half width).
fn chebyshev_interval(lambda: f64, ratio: f64) -> (f64, f64) {
    let lo = lambda / ratio;
    (0.5 * (lambda + lo), 0.5 * (lambda - lo))
}

/// `r -= A_f d`.
fn sub_mul<const B: usize, O: Operator<B>>(
    op: &O,
    d: &[SVector<f64, B>],
    r: &mut [SVector<f64, B>],
) {
    r.par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .for_each(|(c, out)| {
            for (o, ri) in out.iter_mut().enumerate() {
                let i = c * ROW_CHUNK + o;
                *ri -= op.mul_row(i, d);
            }
        });
}

/// `r = b - A_f x`.
pub(crate) fn residual<const B: usize, O: Operator<B>>(
    op: &O,
    b: &[SVector<f64, B>],
    x: &[SVector<f64, B>],
    r: &mut [SVector<f64, B>],
) {
    r.par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .for_each(|(c, out)| {
            for (o, ri) in out.iter_mut().enumerate() {
                let i = c * ROW_CHUNK + o;
                *ri = b[i] - op.mul_row(i, x);
            }
        });
}

/// A level's smoother as the V-cycle applies it: its kind, the level's operator and its
/// smoother data.
pub(crate) struct Smoothing<'a, const B: usize, O> {
    kind: Smoother,
    op: &'a O,
    data: &'a SmoothData<B>,
}

impl<'a, const B: usize, O> Smoothing<'a, B, O> {
    /// Smoother `kind` on the level with operator `op` and smoother data `data`.
    pub(crate) fn new(kind: Smoother, op: &'a O, data: &'a SmoothData<B>) -> Self {
        Self { kind, op, data }
    }
}

/// The Chebyshev polynomial of one smoothing: its degree and interval as
/// `(theta, delta)` = (centre, half width), see [`chebyshev_interval`].
#[derive(Clone, Copy)]
struct Chebyshev {
    degree: usize,
    theta: f64,
    delta: f64,
}

impl<const B: usize, O: Operator<B>> Smoothing<'_, B, O> {
    /// Pre-smoothing from a zero guess: `x = M_s^-1 b`, then `r = b - A_f x`.
    pub(crate) fn pre(
        &self,
        b: &[SVector<f64, B>],
        x: &mut [SVector<f64, B>],
        r: &mut [SVector<f64, B>],
        d: &mut [SVector<f64, B>],
    ) {
        let (op, sm) = (self.op, self.data);
        match self.kind {
            Smoother::Chebyshev { degree, ratio } => {
                let (theta, delta) = chebyshev_interval(sm.lambda, ratio);
                x.par_chunks_mut(ROW_CHUNK)
                    .zip(d.par_chunks_mut(ROW_CHUNK))
                    .zip(r.par_chunks_mut(ROW_CHUNK))
                    .enumerate()
                    .for_each(|(c, ((xs, ds), rs))| {
                        for (o, ((xi, di), ri)) in xs
                            .iter_mut()
                            .zip(ds.iter_mut())
                            .zip(rs.iter_mut())
                            .enumerate()
                        {
                            let i = c * ROW_CHUNK + o;
                            *di = op.filter_vec(i, sm.dinv[i] * b[i]) / theta;
                            *xi = *di;
                            *ri = b[i];
                        }
                    });
                let ch = Chebyshev {
                    degree,
                    theta,
                    delta,
                };
                self.chebyshev_tail(ch, x, r, d);
                sub_mul(op, d, r);
            }
            Smoother::GaussSeidel { sweeps } => {
                x.par_iter_mut().for_each(|v| *v = SVector::zeros());
                for _ in 0..sweeps {
                    gauss_seidel_sweep(op, sm, true, b, x, d);
                }
                residual(op, b, x, r);
            }
        }
    }

    /// Post-smoothing (the adjoint of [`Smoothing::pre`], so the V-cycle is symmetric):
    /// improves `x`.
    pub(crate) fn post(
        &self,
        b: &[SVector<f64, B>],
        x: &mut [SVector<f64, B>],
        r: &mut [SVector<f64, B>],
        d: &mut [SVector<f64, B>],
    ) {
        let (op, sm) = (self.op, self.data);
        match self.kind {
            Smoother::Chebyshev { degree, ratio } => {
                let (theta, delta) = chebyshev_interval(sm.lambda, ratio);
                residual(op, b, x, r);
                let r_ro: &[SVector<f64, B>] = r;
                x.par_chunks_mut(ROW_CHUNK)
                    .zip(d.par_chunks_mut(ROW_CHUNK))
                    .enumerate()
                    .for_each(|(c, (xs, ds))| {
                        for (o, (xi, di)) in xs.iter_mut().zip(ds.iter_mut()).enumerate() {
                            let i = c * ROW_CHUNK + o;
                            *di = op.filter_vec(i, sm.dinv[i] * r_ro[i]) / theta;
                            *xi += *di;
                        }
                    });
                let ch = Chebyshev {
                    degree,
                    theta,
                    delta,
                };
                self.chebyshev_tail(ch, x, r, d);
            }
            Smoother::GaussSeidel { sweeps } => {
                for _ in 0..sweeps {
                    gauss_seidel_sweep(op, sm, false, b, x, d);
                }
            }
        }
    }

    /// Chebyshev steps 2..=degree after the first: `r -= A d`, new `d`, `x += d`
    /// (Saad 2003, "Iterative methods for sparse linear systems", chapter 12, Chebyshev
    /// acceleration, with the preconditioner `D_f^-1`).
    fn chebyshev_tail(
        &self,
        ch: Chebyshev,
        x: &mut [SVector<f64, B>],
        r: &mut [SVector<f64, B>],
        d: &mut [SVector<f64, B>],
    ) {
        let (op, sm) = (self.op, self.data);
        let Chebyshev {
            degree,
            theta,
            delta,
        } = ch;
        let sigma = theta / delta;
        let mut rho = 1.0 / sigma;
        for _ in 1..degree {
            sub_mul(op, d, r);
            let rho_new = 1.0 / (2.0 * sigma - rho);
            let (c1, c2) = (rho_new * rho, 2.0 * rho_new / delta);
            let r_ro: &[SVector<f64, B>] = r;
            x.par_chunks_mut(ROW_CHUNK)
                .zip(d.par_chunks_mut(ROW_CHUNK))
                .enumerate()
                .for_each(|(c, (xs, ds))| {
                    for (o, (xi, di)) in xs.iter_mut().zip(ds.iter_mut()).enumerate() {
                        let i = c * ROW_CHUNK + o;
                        *di = *di * c1 + op.filter_vec(i, sm.dinv[i] * r_ro[i]) * c2;
                        *xi += *di;
                    }
                });
            rho = rho_new;
        }
    }
}

/// One multicolour Gauss-Seidel sweep over the colours in the given order: within a colour
/// no two nodes are coupled, so each colour is a parallel block update
/// `x_i += S_i D_i^-1 (b_i - (A_f x)_i)`; `t` is scratch of length >= the largest colour.
fn gauss_seidel_sweep<const B: usize, O: Operator<B>>(
    op: &O,
    sm: &SmoothData<B>,
    forward: bool,
    b: &[SVector<f64, B>],
    x: &mut [SVector<f64, B>],
    t: &mut [SVector<f64, B>],
) {
    let ncol = sm.colour_ptr.len() - 1;
    for step in 0..ncol {
        let c = if forward { step } else { ncol - 1 - step };
        let nodes = &sm.colour_nodes[sm.colour_ptr[c]..sm.colour_ptr[c + 1]];
        let tc = &mut t[..nodes.len()];
        let x_ro: &[SVector<f64, B>] = x;
        tc.par_chunks_mut(ROW_CHUNK)
            .enumerate()
            .for_each(|(ch, out)| {
                for (o, ti) in out.iter_mut().enumerate() {
                    let i = nodes[ch * ROW_CHUNK + o];
                    let res = b[i] - op.mul_row(i, x_ro);
                    *ti = x_ro[i] + op.filter_vec(i, sm.dinv[i] * res);
                }
            });
        for (&i, ti) in nodes.iter().zip(tc.iter()) {
            x[i] = *ti;
        }
    }
}

/// Solver of the coarsest level.
pub(crate) enum Coarsest {
    /// Dense Cholesky factor (lower triangle) of the coarsest operator (faer, sequential).
    Dense {
        l: Mat<f64>,
        rhs: Mat<f64>,
        mem: MemBuffer,
    },
    /// Too large for a dense factor (coarsening stalled): pre- then post-smoothing, a
    /// symmetric approximate solve.
    Smooth,
}

impl std::fmt::Debug for Coarsest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Coarsest::Dense { l, .. } => write!(f, "Coarsest::Dense({} unknowns)", l.nrows()),
            Coarsest::Smooth => write!(f, "Coarsest::Smooth"),
        }
    }
}

impl Clone for Coarsest {
    fn clone(&self) -> Self {
        match self {
            Coarsest::Dense { l, rhs, .. } => Coarsest::Dense {
                l: l.clone(),
                rhs: rhs.clone(),
                mem: MemBuffer::new(StackReq::EMPTY),
            },
            Coarsest::Smooth => Coarsest::Smooth,
        }
    }
}

impl Coarsest {
    /// Allocates the dense factor for an operator of `dofs` unknowns, or chooses smoothing.
    pub fn new(dofs: usize, dense_limit: usize) -> Self {
        if dofs <= dense_limit {
            Coarsest::Dense {
                l: Mat::zeros(dofs, dofs),
                rhs: Mat::zeros(dofs, 1),
                mem: MemBuffer::new(StackReq::EMPTY),
            }
        } else {
            Coarsest::Smooth
        }
    }

    /// Assembles `A_f` densely and factorises it.
    ///
    /// # Errors
    /// [`SolverError::CoarseNotPositiveDefinite`] naming the level and the node of the
    /// failing pivot.
    pub fn factor<const B: usize, O: Operator<B>>(
        &mut self,
        op: &O,
        level: usize,
    ) -> Result<(), SolverError> {
        let Coarsest::Dense { l, .. } = self else {
            return Ok(());
        };
        let n = op.n();
        l.fill(0.0);
        for i in 0..n {
            op.for_each_in_row(i, |j, _, blk| {
                if j == i {
                    return;
                }
                // S_i A_ij S_j (filters are symmetric).
                let left = op.filter_block(i, *blk);
                let both = op.filter_block(j, left.transpose()).transpose();
                for r in 0..B {
                    for c in 0..B {
                        l[(B * i + r, B * j + c)] = both[(r, c)];
                    }
                }
            });
            let d = op.filtered_diagonal(i);
            for r in 0..B {
                for c in 0..B {
                    l[(B * i + r, B * i + c)] = 0.5 * (d[(r, c)] + d[(c, r)]);
                }
            }
        }
        let req =
            llt::factor::cholesky_in_place_scratch::<f64>(B * n, FaerPar::Seq, Default::default());
        let mut mem = MemBuffer::new(req);
        llt::factor::cholesky_in_place(
            l.as_mut(),
            Default::default(),
            FaerPar::Seq,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .map_err(|e| {
            let llt::factor::LltError::NonPositivePivot { index } = e;
            SolverError::CoarseNotPositiveDefinite {
                level,
                index: index / B,
                value: f64::NAN,
            }
        })?;
        Ok(())
    }

    /// `x = A^-1 b` with the dense factor (or the level's smoothing `sm`, see
    /// [`Coarsest::Smooth`]).
    pub fn solve<const B: usize, O: Operator<B>>(
        &mut self,
        sm: &Smoothing<'_, B, O>,
        b: &[SVector<f64, B>],
        x: &mut [SVector<f64, B>],
        r: &mut [SVector<f64, B>],
        d: &mut [SVector<f64, B>],
    ) {
        match self {
            Coarsest::Dense { l, rhs, mem } => {
                for (i, bi) in b.iter().enumerate() {
                    for k in 0..B {
                        rhs[(B * i + k, 0)] = bi[k];
                    }
                }
                llt::solve::solve_in_place(
                    l.as_ref(),
                    rhs.as_mut(),
                    FaerPar::Seq,
                    MemStack::new(mem),
                );
                for (i, xi) in x.iter_mut().enumerate() {
                    for k in 0..B {
                        xi[k] = rhs[(B * i + k, 0)];
                    }
                    *xi = sm.op.filter_vec(i, *xi);
                }
            }
            Coarsest::Smooth => {
                sm.pre(b, x, r, d);
                sm.post(b, x, r, d);
            }
        }
    }

    pub fn memory_bytes(&self) -> usize {
        match self {
            Coarsest::Dense { l, rhs, .. } => (l.nrows() * l.ncols() + rhs.nrows()) * 8,
            Coarsest::Smooth => 0,
        }
    }
}
