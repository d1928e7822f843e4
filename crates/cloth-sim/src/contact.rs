//! Cloth-solid contact as constraints (Baraff & Witkin 1998, Section 6 and Knowls 6, 8):
//! a vertex near a solid gets its normal velocity constrained to the solid's (ndof 2), is
//! moved onto the surface plus thickness by position alteration within the same implicit
//! step, is released when its constraint force turns attractive, and sticks (ndof 0) or slides
//! (ndof 2 plus a dissipative tangential force) by Coulomb's law.

use cloth_collide::{ColliderSet, Contact};
use cloth_mesh::Vec3;
use cloth_solver::Constraint;

/// Settings of cloth-solid contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactSettings {
    /// Distance (m) the cloth keeps from every surface, added to each collider's own thickness.
    pub cloth_thickness: f64,
    /// Extra search distance (m) beyond the thickness, so contacts are seen a step ahead.
    pub margin: f64,
    /// Relative tangential speed (m/s) below which a sliding contact becomes static again.
    pub stick_speed: f64,
    /// Stiffness (N/m) of the cloth-cloth penalty springs, per proximity: a pair closer than
    /// the cloth thickness is pushed apart with `self_stiffness * (thickness - distance)`.
    /// Default 500 N/m: 2.5 N at full thickness (5 mm), far above the weight of a vertex.
    pub self_stiffness: f64,
    /// Damping (N s/m) of the cloth-cloth penalty springs along the contact normal.
    /// Default 0.5 N s/m.
    pub self_damping: f64,
}

impl Default for ContactSettings {
    fn default() -> Self {
        Self {
            cloth_thickness: 0.005,
            margin: 0.02,
            stick_speed: 1e-3,
            self_stiffness: 500.0,
            self_damping: 0.5,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Static,
    Sliding,
}

#[derive(Clone, Copy, Debug)]
struct State {
    mode: Mode,
    /// Normal force (N) of the last accepted step, >= 0.
    normal_force: f64,
    /// Whether kinetic friction was strong enough in the step being taken to stop the slip.
    stops: bool,
}

/// Contact bookkeeping across steps.
pub(crate) struct ContactManager {
    pub colliders: ColliderSet,
    settings: ContactSettings,
    friction: Vec<f64>,
    thickness: Vec<f64>,
    state: Vec<Option<State>>,
    /// Contacts found for the step being attempted, sorted by vertex.
    active: Vec<Contact>,
    scratch: Vec<Contact>,
}

impl ContactManager {
    pub fn new(
        colliders: ColliderSet,
        friction: Vec<f64>,
        thickness: Vec<f64>,
        settings: ContactSettings,
        n: usize,
    ) -> Self {
        Self {
            colliders,
            settings,
            friction,
            thickness,
            state: vec![None; n],
            active: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Number of vertices currently in contact.
    pub fn num_contacts(&self) -> usize {
        self.state.iter().filter(|s| s.is_some()).count()
    }

    /// Finds contacts for a step from t to t + h (colliders placed at t + h) and writes their
    /// constraints, targets z, alterations y and sliding-friction forces. Pinned vertices are
    /// overwritten later by the caller.
    #[allow(clippy::too_many_arguments)]
    pub fn prepare(
        &mut self,
        x: &[Vec3],
        v: &[Vec3],
        masses: &[f64],
        t: f64,
        h: f64,
        constraints: &mut [Constraint],
        z: &mut [Vec3],
        y: &mut [Vec3],
        forces: &mut [Vec3],
    ) {
        self.colliders.update(t + h);
        self.colliders.vertex_contacts(
            x,
            self.settings.cloth_thickness,
            self.settings.margin,
            &mut self.scratch,
        );
        self.active.clear();
        let mut k = 0;
        for c in self.scratch.drain(..) {
            let i = c.vertex;
            // Vertices that left the search range lose their contact state.
            while k < i {
                self.state[k] = None;
                k += 1;
            }
            k = i + 1;
            let thick = self.settings.cloth_thickness + self.thickness[c.collider];
            let n = c.normal;
            let rel = v[i] - c.surface_velocity;
            let rel_n = rel.dot(&n);
            let engaged = self.state[i].is_some() || c.distance + h * rel_n < thick;
            if !engaged {
                self.state[i] = None;
                continue;
            }
            // A new contact starts static; Coulomb's test on its first constraint force decides.
            let st = self.state[i].get_or_insert(State {
                mode: Mode::Static,
                normal_force: 0.0,
                stops: false,
            });
            // Position alteration: onto the surface plus thickness (Knowl 6).
            if c.distance < thick {
                y[i] += n * (thick - c.distance);
            }
            match st.mode {
                Mode::Static => {
                    constraints[i] = Constraint::Fixed;
                    z[i] = c.surface_velocity - v[i];
                }
                Mode::Sliding => {
                    constraints[i] = Constraint::Plane { p: n };
                    z[i] = n * (-rel_n);
                    // Kinetic friction opposing the tangential slip, proportional to the
                    // last normal force, and capped so it cannot reverse the slip in one step.
                    let rel_t = rel - n * rel_n;
                    let speed = rel_t.norm();
                    let mu = self.friction[c.collider];
                    let cap = masses[i] * speed / h;
                    st.stops = mu * st.normal_force >= cap;
                    if speed > 0.0 && st.normal_force > 0.0 {
                        let f = (mu * st.normal_force).min(cap);
                        forces[i] -= rel_t * (f / speed);
                    }
                }
            }
            self.active.push(c);
        }
        for s in &mut self.state[k.min(x.len())..] {
            *s = None;
        }
    }

    /// Updates contact states after an accepted step from the constraint forces `f` (N):
    /// release on attraction, static/sliding transitions by Coulomb's law.
    pub fn after_step(&mut self, f: &[Vec3], v: &[Vec3], pinned: &[bool]) {
        for c in &self.active {
            let i = c.vertex;
            let Some(st) = self.state[i].as_mut() else {
                continue;
            };
            if pinned[i] {
                self.state[i] = None;
                continue;
            }
            let n = c.normal;
            let fn_ = f[i].dot(&n);
            if fn_ < 0.0 {
                // Attractive: the solid would have to pull the cloth; let go (Knowl 8).
                self.state[i] = None;
                continue;
            }
            st.normal_force = fn_;
            let mu = self.friction[c.collider];
            match st.mode {
                Mode::Static => {
                    let ft = (f[i] - n * fn_).norm();
                    if ft > mu * fn_ {
                        st.mode = Mode::Sliding;
                    }
                }
                Mode::Sliding => {
                    // Stick again once friction could stop the slip within a step.
                    let rel = v[i] - c.surface_velocity;
                    let rel_t = rel - n * rel.dot(&n);
                    if st.stops || rel_t.norm() < self.settings.stick_speed {
                        st.mode = Mode::Static;
                    }
                }
            }
        }
    }
}
