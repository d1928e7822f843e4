//! Contact settings shared by both integrators: the cloth's thickness, the search margin and
//! the cloth-cloth parameters, and the per-collider surface properties a world derives from
//! its colliders.

/// Settings of cloth-solid and cloth-cloth contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactSettings {
    /// Distance (m) the cloth keeps from every surface, added to each collider's own
    /// thickness. Default 0.005 m.
    pub cloth_thickness: f64,
    /// Extra search distance (m) beyond the thickness, so contacts are seen a step ahead;
    /// each step widens it to twice the fastest vertex's travel when that is larger.
    /// Default 0.02 m.
    pub margin: f64,
    /// Relative tangential speed (m/s) below which a sliding contact becomes static again.
    /// Default 1e-3 m/s.
    pub stick_speed: f64,
    /// Stiffness (N/m) of the cloth-cloth penalty springs, per proximity: a pair closer than
    /// the cloth thickness is pushed apart with `self_stiffness * (thickness - distance)`.
    /// Default 500 N/m: 2.5 N at full thickness (5 mm), far above the weight of a vertex.
    pub self_stiffness: f64,
    /// Damping (N s/m) of the cloth-cloth penalty springs along the contact normal.
    /// Default 0.5 N s/m.
    pub self_damping: f64,
    /// Coulomb coefficient between layers of the cloth (static and kinetic), scene key
    /// `cloth.friction`. Default 0.3.
    pub self_friction: f64,
    /// Whether each step's motion is checked for the cloth passing through itself (continuous
    /// collision detection, vertex-triangle and edge-edge) and repaired by rigid impact zones
    /// (or a smaller step), when cloth-cloth contact is on. Default true.
    pub self_ccd: bool,
    /// The distance counted as a collision by that check, as a fraction of `cloth_thickness`:
    /// features ending a step closer than this, or touching within it, are put in an impact
    /// zone (a pair that starts closer than twice this counts when it comes within half its
    /// start distance). Default 0.5, so a layer arriving within one step does not end it
    /// closer than half the thickness to another; pressed layers are held there by the
    /// penalty spring's stiffening (`cloth_collide::INNER_GAP`).
    pub ccd_gap: f64,
}

impl Default for ContactSettings {
    fn default() -> Self {
        Self {
            cloth_thickness: 0.005,
            margin: 0.02,
            stick_speed: 1e-3,
            self_stiffness: 500.0,
            self_damping: 0.5,
            self_friction: 0.3,
            self_ccd: true,
            ccd_gap: 0.5,
        }
    }
}

/// Per-collider contact properties the contact responses need.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Surface {
    /// Coulomb coefficient.
    pub friction: f64,
    /// Collider thickness (m), added to the cloth's.
    pub thickness: f64,
}
