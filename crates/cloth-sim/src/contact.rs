//! Cloth-solid contact as constraints (Baraff & Witkin 1998, Section 6 and Knowls 6, 8):
//! a vertex near a solid gets its normal velocity constrained to the solid's (ndof 2), is
//! moved onto the surface plus thickness by position alteration within the same implicit
//! step, is released when its constraint force turns attractive, and sticks (ndof 0) or slides
//! (ndof 2 plus a dissipative tangential force) by Coulomb's law.

use cloth_collide::{ColliderSet, Contact, FeatureContact};
use cloth_mesh::Vec3;
use cloth_solver::Constraint;

/// Settings of cloth-solid contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactSettings {
    /// Distance (m) the cloth keeps from every surface, added to each collider's own thickness.
    pub cloth_thickness: f64,
    /// Extra search distance (m) beyond the thickness, so contacts are seen a step ahead;
    /// each step widens it to twice the fastest vertex's travel when that is larger.
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
    /// Tangential constraint force (N) of the last static step: it opposes whatever drives
    /// the vertex along the surface, so kinetic friction starts in its direction.
    hold: Vec3,
    /// Kinetic friction force (N) applied in the step being taken.
    friction: f64,
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
    /// Cloth triangles, for solid features (box corners, rims, tips) poking into them.
    triangles: Vec<[usize; 3]>,
    features: Vec<FeatureContact>,
    has_features: bool,
    /// Vertices within contact range of some solid in the step being taken.
    near: Vec<bool>,
    /// Vertices that a rejected attempt of this step moved into a solid's thickness layer:
    /// they are engaged in the next attempt whatever their velocity.
    force: Vec<bool>,
}

impl ContactManager {
    pub fn new(
        colliders: ColliderSet,
        friction: Vec<f64>,
        thickness: Vec<f64>,
        settings: ContactSettings,
        triangles: Vec<[usize; 3]>,
        n: usize,
    ) -> Self {
        let has_features = colliders.feature_count() > 0;
        Self {
            triangles,
            features: Vec::new(),
            has_features,
            near: vec![false; n],
            force: vec![false; n],
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
        // Search far enough that no vertex can cross the whole range within the step: the
        // margin grows with the fastest vertex's travel (twice, for what the step adds).
        let vmax = v.iter().map(|v| v.norm()).fold(0.0, f64::max);
        let margin = self.settings.margin.max(2.0 * h * vmax);
        self.colliders
            .vertex_contacts(x, self.settings.cloth_thickness, margin, &mut self.scratch);
        // Surface velocity averaged over the step for rigid motion: the material point that is
        // at `surface_point` at t + h was at `pose(t) pose(t + h)^-1 surface_point` at t. A
        // static contact then lands exactly where the surface goes, also across keyframes.
        let back: Vec<Option<nalgebra::Isometry3<f64>>> = (0..self.colliders.len())
            .map(|k| {
                let c = &self.colliders.colliders()[k];
                let deforming = matches!(
                    c.motion,
                    cloth_collide::Motion::MeshSequence { .. }
                        | cloth_collide::Motion::Composite { .. }
                );
                let now = self.colliders.pose(k)?;
                (!deforming).then(|| c.pose(t) * now.inverse())
            })
            .collect();
        for c in &mut self.scratch {
            if let Some(b) = &back[c.collider] {
                let p0 = b * nalgebra::Point3::from(c.surface_point);
                c.surface_velocity = (c.surface_point - p0.coords) / h;
            }
        }
        self.active.clear();
        self.near.fill(false);
        for c in &self.scratch {
            self.near[c.vertex] = true;
        }
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
            // A new contact needs the vertex inside the thickness layer (beyond rounding of a
            // previous push-out), or approaching so that it would enter it within the step.
            let engaged = self.state[i].is_some()
                || self.force[i]
                || c.distance < thick * (1.0 - 1e-3)
                || (rel_n < 0.0 && c.distance + h * rel_n < thick);
            if !engaged {
                self.state[i] = None;
                continue;
            }
            // A new contact starts static; Coulomb's test on its first constraint force decides.
            let st = self.state[i].get_or_insert(State {
                mode: Mode::Static,
                normal_force: 0.0,
                stops: false,
                hold: Vec3::zeros(),
                friction: 0.0,
            });
            // Position alteration (Knowl 6): with its normal velocity equal to the surface's,
            // the vertex moves by h v_s.n along n; y adds what puts it exactly at the
            // thickness from the surface at t + h (distance `d` is measured there). This
            // removes penetration, and lands an approaching vertex on the surface instead of
            // leaving it hovering where it was.
            // It is never pulled towards the surface by more than its own approach would have
            // brought it in this step, so a contact that lingers away from the surface does
            // not snap the cloth onto it.
            let to_layer = thick - c.distance - h * c.surface_velocity.dot(&n);
            y[i] += n * to_layer.max(h * rel_n.min(0.0));
            match st.mode {
                Mode::Static => {
                    constraints[i] = Constraint::Fixed;
                    z[i] = c.surface_velocity - v[i];
                }
                Mode::Sliding => {
                    constraints[i] = Constraint::Plane { p: n };
                    z[i] = n * (-rel_n);
                    // Kinetic friction mu N against the slip (or, from rest, against the
                    // drive that broke static friction), capped so it cannot reverse a slip
                    // within one step.
                    let rel_t = rel - n * rel_n;
                    let speed = rel_t.norm();
                    let mu = self.friction[c.collider];
                    let full = mu * st.normal_force;
                    let (dir, f) = if speed > self.settings.stick_speed {
                        let cap = masses[i] * speed / h;
                        st.stops = full >= cap;
                        (-rel_t / speed, full.min(cap))
                    } else {
                        st.stops = false;
                        let hn = st.hold.norm();
                        if hn > 0.0 {
                            (st.hold / hn, full.min(hn))
                        } else {
                            (Vec3::zeros(), 0.0)
                        }
                    };
                    st.friction = f;
                    forces[i] += dir * f;
                }
            }
            self.active.push(c);
        }
        for s in &mut self.state[k.min(x.len())..] {
            *s = None;
        }
        if self.has_features {
            self.push_off_features(x, v, constraints, z, y);
        }
    }

    /// Solid features (box corners and edges' ends, cylinder rims, capsule tips, sharp mesh
    /// vertices) against cloth triangles: the triangle's point nearest the feature is moved
    /// out to the thickness by a position alteration of its three vertices, weighted by the
    /// barycentric weights (`y_k = w_k (thick - d) n / sum w^2`, which moves that point by
    /// exactly `thick - d`), and vertices that are otherwise free may not approach the
    /// feature during the step (ndof 2 along the feature normal, approaching speed removed).
    /// Triangles with a vertex within contact range of a solid are left to the vertex contacts.
    fn push_off_features(
        &mut self,
        x: &[Vec3],
        v: &[Vec3],
        constraints: &mut [Constraint],
        z: &mut [Vec3],
        y: &mut [Vec3],
    ) {
        self.colliders.feature_contacts(
            &self.triangles,
            x,
            self.settings.cloth_thickness,
            self.settings.margin,
            &mut self.features,
        );
        for f in &self.features {
            let thick = self.settings.cloth_thickness + self.thickness[f.collider];
            let n = f.normal;
            let w2: f64 = f.weights.iter().map(|w| w * w).sum();
            // Where a vertex of the triangle is near a solid, vertex contacts hold the cloth;
            // pushing the triangle as well would lift it off the face next to the feature.
            if w2 <= 0.0 || f.vertices.iter().any(|&i| self.near[i]) {
                continue;
            }
            for (&i, &w) in f.vertices.iter().zip(&f.weights) {
                if w <= 0.0 {
                    continue;
                }
                if f.distance < thick {
                    y[i] += n * (w * (thick - f.distance) / w2);
                }
                if matches!(constraints[i], Constraint::Free) {
                    let rel_n = (v[i] - f.surface_velocity).dot(&n);
                    constraints[i] = Constraint::Plane { p: n };
                    z[i] = n * (-rel_n).max(0.0);
                }
            }
        }
    }

    /// Checks a candidate end-of-step state `x1` (colliders already at t + h): vertices that
    /// are free of contact but ended up deep in a solid's thickness layer (pulled there by
    /// their neighbours, not by their own velocity, which `prepare` looks at) are marked to be
    /// engaged when the step is redone. Returns how many were marked.
    pub fn mark_new_penetrations(&mut self, x1: &[Vec3], pinned: &[bool]) -> usize {
        self.colliders
            .vertex_contacts(x1, self.settings.cloth_thickness, 0.0, &mut self.scratch);
        let mut marked = 0;
        for c in self.scratch.drain(..) {
            let i = c.vertex;
            let thick = self.settings.cloth_thickness + self.thickness[c.collider];
            if self.state[i].is_none() && !pinned[i] && !self.force[i] && c.distance < thick * 0.5 {
                self.force[i] = true;
                marked += 1;
            }
        }
        marked
    }

    /// Updates contact states after an accepted step from the constraint forces `f` (N):
    /// release on attraction, static/sliding transitions by Coulomb's law.
    pub fn after_step(&mut self, f: &[Vec3], v: &[Vec3], masses: &[f64], h: f64, pinned: &[bool]) {
        self.force.fill(false);
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
                    let ft = f[i] - n * fn_;
                    st.hold = ft;
                    if ft.norm() > mu * fn_ {
                        st.mode = Mode::Sliding;
                    }
                }
                Mode::Sliding => {
                    // Stick again when friction could stop the slip: it was capped in this
                    // step and what is left is less than one step of full friction removes.
                    let rel = v[i] - c.surface_velocity;
                    let slip = (rel - n * rel.dot(&n)).norm();
                    let m = masses[i];
                    if (st.stops && slip * m <= mu * fn_ * h)
                        || slip < self.settings.stick_speed && st.friction == 0.0
                    {
                        st.mode = Mode::Static;
                    }
                }
            }
        }
    }
}
