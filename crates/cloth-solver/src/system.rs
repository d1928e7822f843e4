//! [`System`], the constrained linear system every solver of the crate takes, and the input
//! checks the solvers share.

use nalgebra::Vector3;

use crate::{BlockMatrix, Constraint, SolverError};

/// One constrained linear system (Baraff & Witkin §5.1 and §5.3): `A dv = b` on the free
/// subspace of each particle's filter `S_i`, and `dv_i = z_i` on its constrained subspace.
/// The solvers solve it in the pre-filtered form `(S A S + I - S) y = S (b - A z)`,
/// `dv = z + S y` (see the crate documentation).
///
/// Units follow the caller: with `A` in kg and `b` an impulse in N*s, `dv` and `z` are
/// velocity changes in m/s. `b`, `z` and `constraints` hold one entry per block row of `a`
/// (checked by the solvers).
#[derive(Clone, Copy, Debug)]
pub struct System<'a> {
    /// The symmetric block matrix `A`, positive definite on the free subspace.
    pub a: &'a BlockMatrix,
    /// The right-hand side `b`, one vector per particle.
    pub b: &'a [Vector3<f64>],
    /// The prescribed values `z` of the constrained components, one vector per particle (only
    /// `(I - S_i) z_i` matters).
    pub z: &'a [Vector3<f64>],
    /// The filter `S_i` of each particle.
    pub constraints: &'a [Constraint],
    /// Where the iteration starts (a warm start, one vector per particle), or `None` to start
    /// at `z`. Only the free components `S_i start_i` matter: the constrained ones are `z`'s.
    /// The stopping test still measures the residual against the cold start's `S (b - A z)`,
    /// so a start near the solution meets the same accuracy in fewer iterations.
    pub start: Option<&'a [Vector3<f64>]>,
}

impl<'a> System<'a> {
    /// The system `A dv = b` with `dv_i = z_i` on the subspaces the `constraints` prohibit.
    pub fn new(
        a: &'a BlockMatrix,
        b: &'a [Vector3<f64>],
        z: &'a [Vector3<f64>],
        constraints: &'a [Constraint],
    ) -> Self {
        Self {
            a,
            b,
            z,
            constraints,
            start: None,
        }
    }

    /// The same system, iterated from `start` (see [`System::start`]): for a system solved
    /// before and since changed a little (a few constraints or right-hand side entries), the
    /// last solution is a good start.
    pub fn starting_from(self, start: &'a [Vector3<f64>]) -> Self {
        Self {
            start: Some(start),
            ..self
        }
    }

    /// Checks lengths against `a` and `dv`, finiteness of `b`, `z` and `A`, and the
    /// constraint directions.
    pub(crate) fn validate(&self, dv: &[Vector3<f64>]) -> Result<(), SolverError> {
        let Self {
            a,
            b,
            z,
            constraints,
            start,
        } = *self;
        let n = a.n();
        check_len("dv", n, dv.len())?;
        check_len("b", n, b.len())?;
        check_len("z", n, z.len())?;
        check_len("constraints", n, constraints.len())?;
        let finite = |v: &Vector3<f64>| v.iter().all(|x| x.is_finite());
        if let Some(i) = b.iter().position(|v| !finite(v)) {
            return Err(SolverError::NonFinite {
                what: "b",
                index: i,
            });
        }
        if let Some(i) = z.iter().position(|v| !finite(v)) {
            return Err(SolverError::NonFinite {
                what: "z",
                index: i,
            });
        }
        if let Some(start) = start {
            check_len("start", n, start.len())?;
            if let Some(i) = start.iter().position(|v| !finite(v)) {
                return Err(SolverError::NonFinite {
                    what: "start",
                    index: i,
                });
            }
        }
        if let Some(i) = a.first_non_finite_row() {
            return Err(SolverError::NonFinite {
                what: "matrix block row",
                index: i,
            });
        }
        for (i, c) in constraints.iter().enumerate() {
            c.validate(i)?;
        }
        Ok(())
    }
}

/// [`SolverError::DimensionMismatch`] unless `found == expected`.
pub(crate) fn check_len(
    what: &'static str,
    expected: usize,
    found: usize,
) -> Result<(), SolverError> {
    if expected == found {
        Ok(())
    } else {
        Err(SolverError::DimensionMismatch {
            what,
            expected,
            found,
        })
    }
}

/// Checks one finite position per particle (the multigrid's rigid-body modes).
pub(crate) fn check_positions(n: usize, positions: &[Vector3<f64>]) -> Result<(), SolverError> {
    check_len("positions", n, positions.len())?;
    match positions
        .iter()
        .position(|p| !p.iter().all(|v| v.is_finite()))
    {
        Some(index) => Err(SolverError::NonFinite {
            what: "positions",
            index,
        }),
        None => Ok(()),
    }
}
