//! Material parameters (SI units, independent of mesh resolution).

use crate::ForceError;

/// Standard gravity (m/s^2) used to convert between flexural rigidity and bending length.
pub const STANDARD_GRAVITY: f64 = 9.81;

/// Default stretch damping `beta` (s) of every material and preset.
///
/// For a 1 m sheet of 51 x 51 vertices (edge 2 cm, vertex mass about 8e-5 kg) and a woven
/// membrane stiffness of about 4000 N/m, the stiffest grid-scale stretch mode has
/// `omega ~ 7e3 rad/s`, so `beta = 2e-4 s` gives it a damping ratio `beta * omega / 2` of
/// about 0.7, while the sheet-scale stretch mode (`omega ~ 4e2 rad/s`) keeps a damping ratio
/// of about 0.04 and swinging (a few rad/s) is untouched. Finer meshes have stiffer modes
/// and are damped more strongly by the same `beta`.
pub const DEFAULT_STRETCH_DAMPING: f64 = 2.0e-4;
/// Default shear damping `beta` (s) of every material and preset (same reasoning as
/// [`DEFAULT_STRETCH_DAMPING`]).
pub const DEFAULT_SHEAR_DAMPING: f64 = 2.0e-4;
/// Default bend damping `beta` (s) of every material and preset.
///
/// Grid-scale bending modes of a 2 cm mesh have `omega ~ 50-200 rad/s`, so `beta = 1e-3 s`
/// damps wrinkle jitter with a damping ratio of 0.02-0.1 while folds at the scale of the
/// sheet (below 1 rad/s) are not slowed down visibly (no "cloth in syrup", see Stam's account
/// of Maya's first implicit solver).
pub const DEFAULT_BEND_DAMPING: f64 = 1.0e-3;

/// Which discrete bending energy a [`crate::ClothModel`] uses (see `docs/bending.md` for the
/// measurements behind the choice).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum BendModel {
    /// Baraff & Witkin's dihedral-angle hinge per interior edge (§4.3), energy
    /// `k_e/2 (theta - theta0)^2` with `k_e = D |e|^2/(A1 + A2)` times the `bend_uv` weight
    /// (docs/physics.md). Exact for cylindrical bending along the axes of a right-triangle grid, but
    /// on a triangle lattice it couples bending to twist: on a uniform grid
    /// `z = (a x^2 + 2c xy + b y^2)/2` costs `D/2 ((a+c)^2 + (b+c)^2 + 4c^2)` per area instead
    /// of `D/2 (a^2 + b^2 + 2c^2)` (twist 3x), discs are 1.15-1.55x too stiff, and a heavy
    /// cantilever at `l = 2c` sags 4.7-5.3 degrees too far on uniform and alternating grids at
    /// every resolution (`docs/bending.md`). Serde name `"hinge"`.
    Hinge,
    /// Default. A discrete shape operator per triangle built from the dihedral angles of its
    /// three edges, `K = sum_i M_i (theta_i - theta0_i)`, with weights `M_i` fixed at rest
    /// (conservative, and consistent with quadratic surfaces as far as a conservative map can
    /// be); energy `A D/2 |K|^2` (Poisson ratio 0, `bend_uv` anisotropy). Stencil: the
    /// triangle and its three flap vertices. Exact against plate theory on uniform, equilateral
    /// and disc meshes; see [`crate::ShapeRest`] and `docs/bending.md` for what it gets right
    /// and wrong. Serde name `"shape_operator"`.
    #[default]
    ShapeOperator,
}

/// Cloth material, in SI units that mean the same at every mesh resolution (see
/// `docs/physics.md`, "Resolution independence"). This is the one material type of the
/// workspace: scene files (`cloth.material`) resolve to it, and its defaults are the only
/// defaults.
///
/// `u` and `v` are the directions of the rest (u, v) parameterisation of the mesh; for a
/// grid, `u` runs along world x and `v` along world z before the cloth's rotation (warp and
/// weft respectively for the presets).
///
/// Default: the `cotton` preset ([`Material::preset`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct Material {
    /// Areal density rho_A (kg/m^2, mass per unit rest area), > 0.
    pub density: f64,
    /// Membrane (stretch) stiffness `[k_u, k_v]` (N/m), >= 0: a triangle of rest area a stores
    /// `a * k/2 * (|w| - b)^2` per direction (the paper's condition scaled by `sqrt(a)`).
    pub stretch: [f64; 2],
    /// In-plane shear stiffness (N/m), >= 0: energy `a * k/2 * (w_u . w_v)^2`.
    pub shear: f64,
    /// Flexural rigidity D (N*m), >= 0: a plate bent to curvature kappa stores `D/2 kappa^2`
    /// per unit area; the cantilever test measures it (bending length
    /// `c = (D / (rho_A g))^(1/3)`, Peirce 1930, ASTM D1388).
    pub bend: f64,
    /// Anisotropic bending multipliers `[m_u, m_v]` (dimensionless, >= 0) applied to `bend`:
    /// curvature along u (fold line parallel to v) has rigidity `m_u * D`, curvature along v
    /// has `m_v * D`. [`BendModel::ShapeOperator`]: energy density
    /// `D/2 (m_u K_uu^2 + m_v K_vv^2 + 2 sqrt(m_u m_v) K_uv^2)` (twist rigidity the geometric
    /// mean); [`BendModel::Hinge`]: a hinge whose rest edge runs along `(du, dv)` gets the
    /// paper's weight `(m_u du^2 + m_v dv^2) / (du^2 + dv^2)` (§4.3). Default `[1, 1]`.
    pub bend_uv: [f64; 2],
    /// Rest stretch targets `[b_u, b_v]` (dimensionless, > 0) of the paper's stretch condition
    /// `C = a (|w_u| - b_u, |w_v| - b_v)`: 1 keeps the rest shape, values below 1 make the cloth
    /// contract (cuffs, waistbands). Default `[1, 1]`.
    pub stretch_targets: [f64; 2],
    /// Stretch damping `beta` (s), >= 0: damping stiffness `k_d = beta * k` (§4.5).
    /// Default [`DEFAULT_STRETCH_DAMPING`].
    pub stretch_damping: f64,
    /// Shear damping `beta` (s), >= 0. Default [`DEFAULT_SHEAR_DAMPING`].
    pub shear_damping: f64,
    /// Bend damping `beta` (s), >= 0. Default [`DEFAULT_BEND_DAMPING`].
    pub bend_damping: f64,
    /// The discrete bending energy (serde name `bend_model`, values `"hinge"` and
    /// `"shape_operator"`). Default [`BendModel::ShapeOperator`]; `bend` means the same
    /// rigidity D in both.
    #[cfg_attr(feature = "serde", serde(default))]
    pub bend_model: BendModel,
}

impl Default for Material {
    fn default() -> Self {
        Material::COTTON
    }
}

/// Names accepted by [`Material::preset`] (and by `material = "..."` in scene files).
pub const PRESET_NAMES: [&str; 5] = ["cotton", "denim", "silk", "polyester", "wool"];

impl Material {
    const fn woven(density: f64, stretch: [f64; 2], shear: f64, bend: f64) -> Material {
        Material {
            density,
            stretch,
            shear,
            bend,
            bend_uv: [1.0, 1.0],
            stretch_targets: [1.0, 1.0],
            stretch_damping: DEFAULT_STRETCH_DAMPING,
            shear_damping: DEFAULT_SHEAR_DAMPING,
            bend_damping: DEFAULT_BEND_DAMPING,
            bend_model: BendModel::ShapeOperator,
        }
    }

    /// Cotton: C-IPC's anisotropic cotton preset (after Clyde, Teran, Tamstorf 2017,
    /// "Modeling and data-driven parameter estimation for woven fabrics"): warp/weft 2800/4501
    /// N/m, shear 194 N/m, 0.104 kg/m^2. C-IPC's rigidity 5.2e-7 N*m gives a bending length
    /// of only 0.8 cm, below the 1.5-2.5 cm typical of cotton shirting, so `D` is set from a
    /// 1.5 cm bending length instead: `D = rho_A g c^3 = 0.104 * 9.81 * 0.015^3 = 3.44e-6 N*m`.
    pub const COTTON: Material = Material::woven(0.104, [2800.0, 4501.0], 194.0, 3.44e-6);
    /// Denim: C-IPC denim (Clyde et al. 2017): 3163/5959 N/m, shear 1616 N/m, 0.400 kg/m^2,
    /// `D = 5.9e-5 N*m` (bending length 2.47 cm, at the low end of the 2.5-5 cm typical of
    /// denim). Wang, O'Brien, Ramamoorthi 2011 measured a much softer 11 oz denim (411/2028
    /// N/m, shear 53 N/m, 0.324 kg/m^2): use a material table to select it.
    pub const DENIM: Material = Material::woven(0.400, [3163.0, 5959.0], 1616.0, 5.9e-5);
    /// Silk: C-IPC silk charmeuse (Clyde et al. 2017): 774/1790 N/m, shear 103 N/m,
    /// 0.083 kg/m^2, `D = 2.8e-7 N*m` (bending length 0.7 cm, within 0.5-1.5 cm).
    pub const SILK: Material = Material::woven(0.083, [774.0, 1790.0], 103.0, 2.8e-7);
    /// Polyester: Wang, O'Brien, Ramamoorthi 2011, "Data-driven elastic models for cloth"
    /// (polyester tablecloth, as shipped with ARCSim): 4004/4055 N/m, shear 19 N/m,
    /// 0.128 kg/m^2; ARCSim's bending fit 31-52e-6 is for a `|e|^2 theta^2 / (8 (A1 + A2))`
    /// hinge, i.e. `4 D`, so `D = 41.5e-6 / 4 = 1.04e-5 N*m` (bending length 2.0 cm).
    pub const POLYESTER: Material = Material::woven(0.128, [4004.0, 4055.0], 19.0, 41.5e-6 / 4.0);
    /// Wool: C-IPC wool coating (Clyde et al. 2017): 2931/2840 N/m, shear 475 N/m,
    /// 0.481 kg/m^2, `D = 6.5e-5 N*m` (bending length 2.4 cm, within 1.5-3 cm of wool suiting).
    pub const WOOL: Material = Material::woven(0.481, [2931.0, 2840.0], 475.0, 6.5e-5);

    /// The preset called `name` (exact, lower case; see [`PRESET_NAMES`]), or `None`.
    ///
    /// All presets use [`DEFAULT_STRETCH_DAMPING`], [`DEFAULT_SHEAR_DAMPING`],
    /// [`DEFAULT_BEND_DAMPING`], `stretch_targets = [1, 1]` and `bend_uv = [1, 1]`. The stretch
    /// stiffnesses are the measured small-strain values; real wovens stiffen further past a
    /// few percent of strain, which scenes model with a strain limit.
    pub fn preset(name: &str) -> Option<Material> {
        match name {
            "cotton" => Some(Material::COTTON),
            "denim" => Some(Material::DENIM),
            "silk" => Some(Material::SILK),
            "polyester" => Some(Material::POLYESTER),
            "wool" => Some(Material::WOOL),
            _ => None,
        }
    }

    /// Bending length `c = (D / (rho_A g))^(1/3)` in metres with `g = 9.81 m/s^2` (Peirce
    /// 1930): the cantilever test's characteristic length. Uses the isotropic `bend`.
    pub fn bending_length(&self) -> f64 {
        (self.bend / (self.density * STANDARD_GRAVITY)).cbrt()
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
