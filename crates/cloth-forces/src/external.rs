//! External forces with Jacobians: gravity, linear air drag, wind pressure through triangle
//! normals, and user springs pulling vertices to target points.

use nalgebra::Matrix3;

use crate::condition::Vec3;
use crate::{ClothModel, Evaluation, ForceError};

/// A zero-rest-length spring pulling vertex `vertex` towards `target` (e.g. a mouse drag or a
/// soft pin): `f = -stiffness (x - target) - damping (v - target_velocity)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UserSpring {
    /// Vertex index.
    pub vertex: usize,
    /// Target point (m).
    pub target: Vec3,
    /// Velocity of the target (m/s), for the damping term.
    pub target_velocity: Vec3,
    /// Stiffness (N/m), >= 0.
    pub stiffness: f64,
    /// Damping coefficient (N s/m), >= 0.
    pub damping: f64,
}

/// External forces. All terms are optional (zero coefficients switch them off).
///
/// * gravity: `f_i = m_i g` (masses from the model: density * lumped rest area);
/// * drag: `f_i = -drag * A_i * (v_i - wind)`, A_i the vertex's lumped rest area (m^2), `drag`
///   in kg/(m^2 s) (a flat sheet then falls at `rho_A g / drag`; for a quadratic-drag terminal
///   speed v_t of docs/physics.md choose `drag = rho_A g / v_t`); df/dv diagonal, df/dx = 0;
/// * wind through normals: per triangle with rest area a and current unit normal n,
///   `f_tri = -wind_coefficient * a * ((v_avg - wind) . n) n`, split equally over its three
///   vertices; `df_a/dv_b = -wind_coefficient * a / 9 * n n^T`; df/dx (the normal's rotation)
///   is ignored;
/// * user springs: see [`UserSpring`], `df/dx = -stiffness I`, `df/dv = -damping I`.
#[derive(Clone, Debug, PartialEq)]
pub struct External {
    /// Gravitational acceleration (m/s^2). Default (0, -9.81, 0): y up.
    pub gravity: Vec3,
    /// Linear isotropic drag coefficient (kg/(m^2 s)), >= 0. Default 0 (off).
    pub drag: f64,
    /// Wind velocity (m/s) that drag and normal wind act relative to. Default zero.
    pub wind: Vec3,
    /// Normal (pressure) wind coefficient (kg/(m^2 s)), >= 0. Default 0 (off).
    pub wind_coefficient: f64,
    /// User springs.
    pub springs: Vec<UserSpring>,
}

impl Default for External {
    fn default() -> Self {
        Self {
            gravity: Vec3::new(0.0, -9.81, 0.0),
            drag: 0.0,
            wind: Vec3::zeros(),
            wind_coefficient: 0.0,
            springs: Vec::new(),
        }
    }
}

fn finite3(v: &Vec3) -> bool {
    v.iter().all(|c| c.is_finite())
}

fn first_bad(v: &Vec3) -> f64 {
    v.iter()
        .copied()
        .find(|c| !c.is_finite())
        .unwrap_or(f64::NAN)
}

impl External {
    /// Checks every field for a mesh of `num_vertices` vertices; the error names the field or
    /// the spring.
    pub fn validate(&self, num_vertices: usize) -> Result<(), ForceError> {
        let bad = |field, value, reason| {
            Err(ForceError::InvalidExternal {
                field,
                value,
                reason,
            })
        };
        if !finite3(&self.gravity) {
            return bad("gravity", first_bad(&self.gravity), "must be finite");
        }
        if !finite3(&self.wind) {
            return bad("wind", first_bad(&self.wind), "must be finite");
        }
        if !(self.drag.is_finite() && self.drag >= 0.0) {
            return bad("drag", self.drag, "must be finite and >= 0");
        }
        if !(self.wind_coefficient.is_finite() && self.wind_coefficient >= 0.0) {
            return bad(
                "wind_coefficient",
                self.wind_coefficient,
                "must be finite and >= 0",
            );
        }
        for (k, s) in self.springs.iter().enumerate() {
            let err = |reason| {
                Err(ForceError::InvalidSpring {
                    spring: k,
                    vertex: s.vertex,
                    reason,
                })
            };
            if s.vertex >= num_vertices {
                return err("vertex out of range");
            }
            if !(finite3(&s.target) && finite3(&s.target_velocity)) {
                return err("target or target velocity not finite");
            }
            if !(s.stiffness.is_finite() && s.stiffness >= 0.0) {
                return err("stiffness must be finite and >= 0");
            }
            if !(s.damping.is_finite() && s.damping >= 0.0) {
                return err("damping must be finite and >= 0");
            }
        }
        Ok(())
    }

    /// Potential energy (J) of the conservative external terms at `x`: gravity `-sum m_i g . x_i`
    /// and springs `stiffness/2 |x - target|^2`. Springs whose vertex is out of range are skipped.
    pub fn energy(&self, model: &ClothModel, x: &[Vec3]) -> f64 {
        let g: f64 = model
            .masses()
            .iter()
            .zip(x)
            .map(|(m, p)| -m * self.gravity.dot(p))
            .sum();
        let s: f64 = self
            .springs
            .iter()
            .filter(|s| s.vertex < x.len())
            .map(|s| 0.5 * s.stiffness * (x[s.vertex] - s.target).norm_squared())
            .sum();
        g + s
    }

    /// Adds the external forces at (x, v) to `out.forces` and their Jacobians to `out`'s entries
    /// (drag and springs on the per-vertex diagonal entries, wind on the triangle entries).
    /// Call after [`ClothModel::evaluate`] with the same model, which sets up `out`.
    /// Serial (cheap) and therefore deterministic. Springs whose vertex is out of range are
    /// skipped (use [`External::validate`]).
    ///
    /// # Panics
    /// If `out` was not evaluated by `model` or `x`, `v` are shorter than the vertex count.
    pub fn accumulate(&self, model: &ClothModel, x: &[Vec3], v: &[Vec3], out: &mut Evaluation) {
        let n = model.num_vertices();
        assert!(
            model.evaluated(out),
            "External::accumulate: `out` was not evaluated by this model"
        );
        let (forces, dfdx, dfdv) = out.parts_mut();
        let masses = model.masses();
        let areas = model.vertex_areas();
        for i in 0..n {
            forces[i] += self.gravity * masses[i];
            if self.drag != 0.0 {
                let c = self.drag * areas[i];
                forces[i] -= (v[i] - self.wind) * c;
                dfdv[model.diagonal_entry(i)] -= Matrix3::from_diagonal_element(c);
            }
        }
        if self.wind_coefficient != 0.0 {
            for (t, (tri, rest)) in model
                .triangles()
                .iter()
                .zip(model.triangle_rest())
                .enumerate()
            {
                let [i, j, k] = *tri;
                let nrm = (x[j] - x[i]).cross(&(x[k] - x[i]));
                let len = nrm.norm();
                if !(len > 0.0 && len.is_finite()) {
                    continue;
                }
                let nh = nrm / len;
                let vavg = (v[i] + v[j] + v[k]) / 3.0;
                let c = self.wind_coefficient * rest.area;
                let f = nh * (-c * (vavg - self.wind).dot(&nh) / 3.0);
                forces[i] += f;
                forces[j] += f;
                forces[k] += f;
                let jac = nh * nh.transpose() * (-c / 9.0);
                // Symmetric: the same block whichever way an entry stores the pair.
                for e in model.triangle_entries(t) {
                    dfdv[e] += jac;
                }
            }
        }
        for s in &self.springs {
            if s.vertex >= n {
                continue;
            }
            let i = s.vertex;
            forces[i] -= (x[i] - s.target) * s.stiffness + (v[i] - s.target_velocity) * s.damping;
            let d = model.diagonal_entry(i);
            dfdx[d] -= Matrix3::from_diagonal_element(s.stiffness);
            dfdv[d] -= Matrix3::from_diagonal_element(s.damping);
        }
    }
}
