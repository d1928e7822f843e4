//! Per-particle constraint filters `S_i` (Baraff & Witkin 1998, §5.1).

use nalgebra::{Matrix3, Vector3};

use crate::SolverError;

/// Tolerance on `|p| - 1` and `p . q` accepted by [`Constraint::validate`].
const UNIT_TOL: f64 = 1e-9;

/// Per-particle kinematic constraint, i.e. the filter `S_i` of the paper's §5.1.
///
/// The prohibited directions are unit vectors; use [`Constraint::plane`] and
/// [`Constraint::line`] to build them from arbitrary input (they normalise and check).
/// The solvers reject (with [`SolverError::InvalidConstraint`]) directions that are not unit
/// or not orthogonal to within `1e-9`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Constraint {
    /// Unconstrained, `S = I`, 3 degrees of freedom.
    #[default]
    Free,
    /// No motion along the unit vector `p` (e.g. a contact normal), `S = I - p p^T`, 2 dof.
    Plane {
        /// Unit prohibited direction.
        p: Vector3<f64>,
    },
    /// Motion only along `p x q`: no motion along the orthonormal `p` and `q`,
    /// `S = I - p p^T - q q^T`, 1 dof.
    Line {
        /// First unit prohibited direction.
        p: Vector3<f64>,
        /// Second unit prohibited direction, orthogonal to `p`.
        q: Vector3<f64>,
    },
    /// Completely prescribed, `S = 0`, 0 dof.
    Fixed,
}

fn unit(v: &Vector3<f64>) -> Result<Vector3<f64>, SolverError> {
    if !v.iter().all(|x| x.is_finite()) {
        return Err(SolverError::InvalidConstraint {
            index: usize::MAX,
            reason: "direction is not finite",
        });
    }
    let norm = v.norm();
    if norm <= f64::MIN_POSITIVE || !norm.is_finite() {
        return Err(SolverError::InvalidConstraint {
            index: usize::MAX,
            reason: "direction is zero (or too small/large to normalise)",
        });
    }
    Ok(v / norm)
}

impl Constraint {
    /// Plane constraint prohibiting motion along `p` (any non-zero finite length; normalised).
    ///
    /// # Errors
    /// [`SolverError::InvalidConstraint`] if `p` is zero or not finite.
    pub fn plane(p: Vector3<f64>) -> Result<Self, SolverError> {
        Ok(Constraint::Plane { p: unit(&p)? })
    }

    /// Line constraint prohibiting motion along `p` and `q` (normalised; `q` is
    /// Gram-Schmidt-orthogonalised against `p`). The particle may move along `p x q`.
    ///
    /// # Errors
    /// [`SolverError::InvalidConstraint`] if either vector is zero or not finite, or if `q`
    /// is (numerically) parallel to `p`.
    pub fn line(p: Vector3<f64>, q: Vector3<f64>) -> Result<Self, SolverError> {
        let p = unit(&p)?;
        let qn = unit(&q)?;
        let q_orth = qn - p * p.dot(&qn);
        if q_orth.norm() < 1e-8 {
            return Err(SolverError::InvalidConstraint {
                index: usize::MAX,
                reason: "q is parallel to p",
            });
        }
        Ok(Constraint::Line {
            p,
            q: unit(&q_orth)?,
        })
    }

    /// Number of free degrees of freedom (3, 2, 1 or 0).
    pub fn ndof(&self) -> usize {
        match self {
            Constraint::Free => 3,
            Constraint::Plane { .. } => 2,
            Constraint::Line { .. } => 1,
            Constraint::Fixed => 0,
        }
    }

    /// `S_i a`: removes the components of `a` along the prohibited directions.
    #[inline]
    pub fn filter(&self, a: &Vector3<f64>) -> Vector3<f64> {
        match self {
            Constraint::Free => *a,
            Constraint::Plane { p } => a - p * p.dot(a),
            Constraint::Line { p, q } => a - p * p.dot(a) - q * q.dot(a),
            Constraint::Fixed => Vector3::zeros(),
        }
    }

    /// `(I - S_i) a`: the constrained (prohibited) components of `a`.
    #[inline]
    pub fn complement(&self, a: &Vector3<f64>) -> Vector3<f64> {
        match self {
            Constraint::Free => Vector3::zeros(),
            Constraint::Plane { p } => p * p.dot(a),
            Constraint::Line { p, q } => p * p.dot(a) + q * q.dot(a),
            Constraint::Fixed => *a,
        }
    }

    /// The filter matrix `S_i` (symmetric orthogonal projection, dimensionless).
    pub fn matrix(&self) -> Matrix3<f64> {
        match self {
            Constraint::Free => Matrix3::identity(),
            Constraint::Plane { p } => Matrix3::identity() - p * p.transpose(),
            Constraint::Line { p, q } => {
                Matrix3::identity() - p * p.transpose() - q * q.transpose()
            }
            Constraint::Fixed => Matrix3::zeros(),
        }
    }

    /// Checks that the directions are finite, unit (to `1e-9`) and orthogonal (to `1e-9`).
    ///
    /// # Errors
    /// [`SolverError::InvalidConstraint`] naming particle `index`.
    pub fn validate(&self, index: usize) -> Result<(), SolverError> {
        let bad = |reason| Err(SolverError::InvalidConstraint { index, reason });
        let is_unit = |v: &Vector3<f64>| {
            v.iter().all(|x| x.is_finite()) && (v.norm() - 1.0).abs() <= UNIT_TOL
        };
        match self {
            Constraint::Free | Constraint::Fixed => Ok(()),
            Constraint::Plane { p } => {
                if is_unit(p) {
                    Ok(())
                } else {
                    bad("p is not a finite unit vector")
                }
            }
            Constraint::Line { p, q } => {
                if !is_unit(p) || !is_unit(q) {
                    bad("p or q is not a finite unit vector")
                } else if p.dot(q).abs() > UNIT_TOL {
                    bad("p and q are not orthogonal")
                } else {
                    Ok(())
                }
            }
        }
    }
}
