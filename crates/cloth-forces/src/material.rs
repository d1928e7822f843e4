//! Material parameters (SI units, independent of mesh resolution).

use crate::ForceError;

/// Cloth material. All stiffnesses are per unit length of cloth so that a parameter set means the
/// same at every mesh resolution (PHYSICS.md, "Resolution independence").
///
/// Default: a cotton-like woven after the C-IPC anisotropic "cotton" preset (Li et al. 2021,
/// presets likely from Clyde, Teran & Tamstorf 2017): warp/weft stiffness 2800/4501 N/m,
/// shear 194 N/m, areal density 0.104 kg/m^2, flexural rigidity D = 5.2e-7 N*m
/// (bending length (D / (rho_A g))^(1/3) ~ 0.8 cm).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Material {
    /// Areal density rho_A (kg/m^2), > 0. Default 0.104.
    pub density: f64,
    /// Membrane (stretch) stiffness along u and v (N/m), >= 0: a triangle of rest area a stores
    /// `a * k/2 * (|w| - b)^2` per direction. Default [2800, 4501].
    pub stretch: [f64; 2],
    /// In-plane shear stiffness (N/m), >= 0: energy `a * k/2 * (w_u . w_v)^2`. Default 194.
    pub shear: f64,
    /// Flexural rigidity D (N*m), >= 0: a plate bent to curvature kappa stores `D/2 kappa^2` per
    /// unit area. Default 5.2e-7.
    pub bend: f64,
    /// Dimensionless bending multipliers (k_u, k_v) for anisotropy, >= 0 (Baraff & Witkin
    /// Knowl 4 weighting `(k_u du^2 + k_v dv^2)/(du^2 + dv^2)` over the hinge's rest edge).
    /// Default [1, 1].
    pub bend_uv: [f64; 2],
    /// Target stretch ratios (b_u, b_v), > 0 (dimensionless; 1 = rest length). Default [1, 1].
    pub stretch_targets: [f64; 2],
    /// Stretch damping beta (s), >= 0: damping coefficient k_d = beta * k (Knowl 5). Default 1e-4.
    pub stretch_damping: f64,
    /// Shear damping beta (s), >= 0: k_d = beta * k_shear. Default 1e-4.
    pub shear_damping: f64,
    /// Bend damping beta (s), >= 0: k_d = beta * k_e per hinge. Default 1e-4.
    pub bend_damping: f64,
}

impl Default for Material {
    fn default() -> Self {
        Self {
            density: 0.104,
            stretch: [2800.0, 4501.0],
            shear: 194.0,
            bend: 5.2e-7,
            bend_uv: [1.0, 1.0],
            stretch_targets: [1.0, 1.0],
            stretch_damping: 1e-4,
            shear_damping: 1e-4,
            bend_damping: 1e-4,
        }
    }
}

fn check(field: &'static str, value: f64, positive: bool) -> Result<(), ForceError> {
    if !value.is_finite() {
        return Err(ForceError::InvalidMaterial {
            field,
            value,
            reason: "must be finite",
        });
    }
    if positive && value <= 0.0 {
        return Err(ForceError::InvalidMaterial {
            field,
            value,
            reason: "must be > 0",
        });
    }
    if value < 0.0 {
        return Err(ForceError::InvalidMaterial {
            field,
            value,
            reason: "must be >= 0",
        });
    }
    Ok(())
}

impl Material {
    /// Checks every field (finite; density and stretch targets > 0, the rest >= 0). The error
    /// names the first offending field.
    pub fn validate(&self) -> Result<(), ForceError> {
        check("density", self.density, true)?;
        check("stretch[0]", self.stretch[0], false)?;
        check("stretch[1]", self.stretch[1], false)?;
        check("shear", self.shear, false)?;
        check("bend", self.bend, false)?;
        check("bend_uv[0]", self.bend_uv[0], false)?;
        check("bend_uv[1]", self.bend_uv[1], false)?;
        check("stretch_targets[0]", self.stretch_targets[0], true)?;
        check("stretch_targets[1]", self.stretch_targets[1], true)?;
        check("stretch_damping", self.stretch_damping, false)?;
        check("shear_damping", self.shear_damping, false)?;
        check("bend_damping", self.bend_damping, false)?;
        Ok(())
    }
}
