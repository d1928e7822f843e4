//! Cloth-solid contact as constraints (Baraff & Witkin 1998, §5.4 and §6): the
//! memory of which vertices are in contact and how (static or sliding), carried from step to
//! step. The queries themselves run in the step's detect stage; this module turns their
//! results into constraints (ndof 2 along the normal, or 0 when sticking), position alterations
//! and kinetic friction, and updates the contact modes from the constraint forces after a step.

use crate::contact::{ContactSettings, Surface};
use crate::world::World;
use cloth_collide::{Contact, FeatureContact, Motion};
use cloth_mesh::Vec3;
use cloth_solver::Constraint;

/// Serde for `Vec3` as `[x, y, z]`.
mod vec3 {
    use cloth_mesh::Vec3;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &Vec3, s: S) -> Result<S::Ok, S::Error> {
        [v.x, v.y, v.z].serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec3, D::Error> {
        <[f64; 3]>::deserialize(d).map(Vec3::from)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum Mode {
    Static,
    Sliding,
    /// Let go after the last accepted step because the solid pulled on the vertex while the
    /// cloth around it was overstretched: engaged again (if at all) as a sliding contact
    /// without friction (see [`ContactMemory::constrain`]).
    Released,
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct State {
    mode: Mode,
    /// Normal force (N) of the last accepted step, >= 0.
    normal_force: f64,
    /// Whether kinetic friction was strong enough in the step being taken to stop the slip.
    stops: bool,
    /// Tangential constraint force (N) of the last static step: it opposes whatever drives
    /// the vertex along the surface, so kinetic friction starts in its direction.
    #[serde(with = "vec3")]
    hold: Vec3,
    /// Kinetic friction force (N) applied in the step being taken.
    friction: f64,
    /// Normal approach speed (m/s, >= 0) that the step being taken stops: its constraint
    /// force holds the impulse `m approach / h` on top of what presses the vertex on the
    /// surface, and only the latter goes on into the next step's friction.
    #[serde(default)]
    approach: f64,
    /// Whether the contact started in the step being taken: Coulomb's law at impact
    /// ([`impact`]) decided its mode, and [`ContactMemory::slip_overloaded`] leaves it alone
    /// (its constraint force is mostly the impulse that stopped its approach).
    #[serde(default)]
    new: bool,
}

/// The fraction of a vertex's depth in a solid's thickness layer that one step's position
/// alteration removes (what lies inside the solid itself goes at once; the rest goes over the
/// next steps, which keeps the cloth out of the solid). Pushed out all the way in one step, a
/// vertex deep in the layer (pressed there by folds above it) drags its neighbours along
/// through the solve and changes its triangles' stretch by more than the threshold at every
/// step size, so such steps are retried down to a small fraction of their size.
pub const PUSH_OUT_FRACTION: f64 = 0.25;

/// The normal position alteration of a contact vertex from its `pull` (m, positive outwards:
/// what puts it on its layer at the step's end, or towards the surface by its own approach)
/// and the layer's thickness `thick` (m): a push-out keeps the part that takes the vertex out
/// of the solid and [`PUSH_OUT_FRACTION`] of the rest; a pull towards the surface is whole.
fn push_out(pull: f64, thick: f64) -> f64 {
    if pull > 0.0 {
        let out_of_solid = (pull - thick).max(0.0);
        out_of_solid + PUSH_OUT_FRACTION * (pull - out_of_solid)
    } else {
        pull
    }
}

/// What the contacts' constraints are made from besides the contacts themselves.
pub(crate) struct Inputs<'a> {
    /// Per collider: friction and thickness.
    pub surfaces: &'a [Surface],
    /// The contact settings.
    pub settings: &'a ContactSettings,
    /// Velocities at the step's start (m/s).
    pub v: &'a [Vec3],
    /// Vertex masses (kg).
    pub masses: &'a [f64],
    /// The step size (s).
    pub h: f64,
}

/// Outputs of the constrain stage the contacts write into.
pub(crate) struct ConstraintSink<'a> {
    pub kind: &'a mut [Constraint],
    pub z: &'a mut [Vec3],
    pub y: &'a mut [Vec3],
    /// The part of `y` that is a landing (see [`ContactMemory::constrain`]).
    pub landing: &'a mut [Vec3],
    pub forces: &'a mut [Vec3],
}

/// What [`ContactMemory::slip_overloaded`] changes in a solved attempt.
pub(crate) struct Overloaded<'a> {
    pub kind: &'a mut [Constraint],
    pub z: &'a mut [Vec3],
    pub friction: &'a mut [Vec3],
    /// The system's right-hand side.
    pub b: &'a mut [Vec3],
    /// The system's matrix.
    pub matrix: &'a cloth_solver::BlockMatrix,
    /// Written: the largest move (m) within the step that letting go of the force a changed
    /// contact held beyond mu N gives its vertex: `h^2 |B^-1 excess|`, with `B` the vertex's
    /// row of the matrix summed over the vertices let go in the same round
    /// ([`cloth_solver::BlockMatrix::row_sum_over`]). A vertex let go alone is held back by
    /// its neighbours' stiffness; a patch let go together (a cloth resting on a body that
    /// starts to move) moves as one, resisted only by its mass and by the vertices around it.
    pub largest_move: f64,
}

/// The contact state of every vertex between steps (static or sliding, last normal force,
/// friction), as a checkpoint stores it.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ContactModes(Vec<Option<State>>);

/// Contact modes across steps.
pub(crate) struct ContactMemory {
    state: Vec<Option<State>>,
    /// Contacts engaged in the step being attempted, sorted by vertex.
    active: Vec<Contact>,
    /// Vertices within contact range of some solid in the step being attempted.
    near: Vec<bool>,
    /// Vertices that a rejected attempt of this step moved into a solid's thickness layer, with
    /// the signed distance they would have ended at (m): they are engaged in the next attempt
    /// whatever their velocity.
    forced: Vec<Option<f64>>,
    /// The step size (s) of the attempt that marked `forced`: the marks hold only for a redo
    /// at that size (the approach they record is that step's).
    forced_h: f64,
    /// Scratch of [`ContactMemory::slip_overloaded`]: the contacts it let go, with the force
    /// each held beyond mu N (N), and which vertices they are.
    released: Vec<(usize, Vec3)>,
    in_released: Vec<bool>,
}

impl ContactMemory {
    pub fn new(n: usize) -> Self {
        Self {
            state: vec![None; n],
            active: Vec::new(),
            near: vec![false; n],
            forced: vec![None; n],
            forced_h: 0.0,
            released: Vec::new(),
            in_released: vec![false; n],
        }
    }

    /// The contact modes carried from step to step, for a checkpoint.
    pub fn modes(&self) -> ContactModes {
        ContactModes(self.state.clone())
    }

    /// Restores modes saved by [`ContactMemory::modes`]; false if they are for another cloth.
    pub fn set_modes(&mut self, modes: &ContactModes) -> bool {
        if modes.0.len() != self.state.len() {
            return false;
        }
        self.state.clone_from(&modes.0);
        true
    }

    /// Number of vertices currently in contact.
    pub fn num_contacts(&self) -> usize {
        let in_contact = |s: &&Option<State>| s.is_some_and(|s| s.mode != Mode::Released);
        self.state.iter().filter(in_contact).count()
    }

    /// Turns the step's vertex contacts (sorted by vertex, colliders placed at t + h) into
    /// constraints, targets z, alterations y and sliding-friction forces. Pinned vertices are
    /// overwritten later by the caller.
    pub fn constrain(
        &mut self,
        contacts: &[Contact],
        inputs: &Inputs,
        out: &mut ConstraintSink<'_>,
    ) {
        let (settings, v, h) = (inputs.settings, inputs.v, inputs.h);
        self.active.clear();
        self.near.fill(false);
        self.forget_forced_unless(h);
        for c in contacts {
            self.near[c.vertex] = true;
        }
        let mut k = 0;
        for c in contacts {
            let i = c.vertex;
            // Vertices that left the search range lose their contact state.
            while k < i {
                self.state[k] = None;
                k += 1;
            }
            k = i + 1;
            let surface = inputs.surfaces[c.collider];
            let thick = settings.cloth_thickness + surface.thickness;
            let n = c.normal;
            let rel = v[i] - c.surface_velocity;
            let rel_n = rel.dot(&n);
            // A new contact needs the vertex inside the thickness layer (beyond rounding of a
            // previous push-out), or approaching so that it would enter it within the step.
            // A vertex let go after the last step while the cloth around it was overstretched
            // ([`Mode::Released`]) comes back as a sliding contact without friction, so the
            // cloth can pull it off: engaged as a new static contact, it would be held and
            // carried along by the solid for as long as it stayed inside the layer, however
            // far the cloth around it stretched.
            let released = self.state[i].is_some_and(|s| s.mode == Mode::Released);
            let engaged = (self.state[i].is_some() && !released)
                || self.forced[i].is_some()
                || c.distance < thick * (1.0 - 1e-3)
                || (rel_n < 0.0 && c.distance + h * rel_n < thick);
            if !engaged {
                self.state[i] = None;
                continue;
            }
            if released {
                self.state[i] = Some(State {
                    mode: Mode::Sliding,
                    normal_force: 0.0,
                    stops: false,
                    hold: Vec3::zeros(),
                    friction: 0.0,
                    approach: 0.0,
                    new: false,
                });
            }
            self.engage(c, surface, inputs, out);
            self.active.push(*c);
        }
        for s in &mut self.state[k.min(v.len())..] {
            *s = None;
        }
    }

    /// Constrains vertex `c.vertex`, engaged in contact `c`: position alteration onto the
    /// thickness layer, then a static (ndof 0) or sliding (ndof 2 plus kinetic friction)
    /// constraint by its mode.
    fn engage(
        &mut self,
        c: &Contact,
        surface: Surface,
        inputs: &Inputs,
        out: &mut ConstraintSink<'_>,
    ) {
        let (settings, v, masses, h) = (inputs.settings, inputs.v, inputs.masses, inputs.h);
        let i = c.vertex;
        let thick = settings.cloth_thickness + surface.thickness;
        let n = c.normal;
        let rel = v[i] - c.surface_velocity;
        let rel_n = rel.dot(&n);
        let forced = self.forced[i];
        let st = self.state[i].get_or_insert_with(|| {
            impact(
                rel - n * rel_n,
                rel_n,
                surface.friction,
                masses[i],
                h,
                settings,
            )
        });
        st.approach = (-rel_n).max(0.0);
        // Position alteration (paper §6.2): with its normal velocity equal to the surface's,
        // the vertex moves by h v_s.n along n; y adds what puts it exactly at the
        // thickness from the surface at t + h (distance `d` is measured there). This
        // removes penetration, and lands an approaching vertex on the surface instead of
        // leaving it hovering where it was. It is never pulled towards the surface by
        // more than its own approach would have brought it in this step, so a contact that
        // lingers away from the surface does not snap the cloth onto it.
        // A vertex that a rejected attempt of this step carried through the surface into
        // the solid is pulled by at most the approach that attempt showed (it may have
        // started far from the surface and slow, e.g. under strong gravity), instead of its
        // start velocity's.
        let to_layer = thick - c.distance - h * c.surface_velocity.dot(&n);
        let approach = match forced {
            Some(d1) if d1 < 0.0 => d1 - c.distance,
            _ => h * rel_n,
        };
        let pull = push_out(to_layer.max(approach.min(0.0)), thick);
        out.y[i] += n * pull;
        // Towards the surface, the pull is at most the approach this step would have made
        // anyway: motion, which the stretch check judges like the integrated motion. Left
        // out of the check, a vertex landing on the floor would look as if it had stopped in
        // the air while its neighbours fell on, and its triangles' stretch would change by
        // more than the threshold at every step size.
        out.landing[i] += n * pull.min(0.0);
        match st.mode {
            Mode::Static => {
                out.kind[i] = Constraint::Fixed;
                out.z[i] = c.surface_velocity - v[i];
            }
            // A released vertex was made a sliding contact before it got here.
            Mode::Sliding | Mode::Released => {
                out.kind[i] = Constraint::Plane { p: n };
                out.z[i] = n * (-rel_n);
                out.forces[i] += kinetic_friction(
                    st,
                    rel - n * rel_n,
                    surface.friction,
                    masses[i],
                    h,
                    settings,
                );
            }
        }
    }

    /// Solid features (box corners and edges' ends, cylinder rims, capsule tips, sharp mesh
    /// vertices) against cloth triangles: the triangle's point nearest the feature is moved
    /// out to the thickness by a position alteration of its three vertices, weighted by the
    /// barycentric weights (`y_k = w_k (thick - d) n / sum w^2`, which moves that point by
    /// exactly `thick - d`), and vertices that are otherwise free may not approach the
    /// feature during the step (ndof 2 along the feature normal, approaching speed removed).
    /// Triangles with a vertex within contact range of a solid are left to the vertex contacts.
    pub fn push_off_features(
        &self,
        features: &[FeatureContact],
        inputs: &Inputs,
        out: &mut ConstraintSink<'_>,
    ) {
        let (surfaces, settings, v) = (inputs.surfaces, inputs.settings, inputs.v);
        for f in features {
            let thick = settings.cloth_thickness + surfaces[f.collider].thickness;
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
                    out.y[i] += n * (w * (thick - f.distance) / w2);
                }
                if matches!(out.kind[i], Constraint::Free) {
                    let rel_n = (v[i] - f.surface_velocity).dot(&n);
                    out.kind[i] = Constraint::Plane { p: n };
                    out.z[i] = n * (-rel_n).max(0.0);
                }
            }
        }
    }

    /// Coulomb's law within the step (paper §6.1, applied to the step's own constraint forces
    /// rather than after it): every static contact of the attempt with a moving solid, but
    /// those that started in it, whose constraint impulse `e` (N s, step `h`) holds its vertex with a tangential
    /// force above mu times its normal force becomes a sliding contact, for the rest of the
    /// attempt and the steps after it: its filter keeps only the normal (the target's normal
    /// component stays), and kinetic friction mu N in the direction of the force that held it
    /// is added to `friction` (N) and, times h, to the system's right-hand side `b`. A static
    /// contact otherwise holds its vertex with whatever force the step takes, and lets it go
    /// in one jump at the next step. Returns how many contacts changed, and sets
    /// [`Overloaded::largest_move`].
    pub fn slip_overloaded(
        &mut self,
        world: &World,
        e: &[Vec3],
        h: f64,
        out: &mut Overloaded<'_>,
    ) -> usize {
        let (masses, pinned, surfaces) = (&world.cloth.masses, world.pinned(), world.surfaces());
        let Some(set) = world.colliders() else {
            return 0;
        };
        let mut changed = 0;
        for c in &self.active {
            let i = c.vertex;
            let Some(st) = self.state[i].as_mut() else {
                continue;
            };
            let moving = !matches!(set.colliders()[c.collider].motion, Motion::Static);
            if st.mode != Mode::Static
                || !moving
                || st.new
                || pinned[i]
                || !matches!(out.kind[i], Constraint::Fixed)
            {
                continue;
            }
            let f = e[i] / h;
            let n = c.normal;
            let fn_ = f.dot(&n);
            let ft = f - n * fn_;
            let mu = surfaces[c.collider].friction;
            let ftn = ft.norm();
            if fn_ <= 0.0 || ftn <= mu * fn_ {
                continue;
            }
            let kinetic = ft * (mu * fn_ / ftn);
            st.mode = Mode::Sliding;
            st.hold = ft;
            st.normal_force = (fn_ - masses[i] * st.approach / h).max(0.0);
            st.stops = false;
            st.friction = mu * fn_;
            out.kind[i] = Constraint::Plane { p: n };
            out.z[i] = n * out.z[i].dot(&n);
            out.friction[i] += kinetic;
            out.b[i] += kinetic * h;
            self.released.push((i, ft - kinetic));
            self.in_released[i] = true;
            changed += 1;
        }
        // The move letting go of the excess gives each vertex, with the vertices let go
        // together moving along and the others held.
        for &(i, excess) in &self.released {
            let block = out.matrix.row_sum_over(i, &self.in_released);
            let impulse = excess * h;
            let dv = block
                .try_inverse()
                .map(|inv| inv * impulse)
                .filter(|dv| dv.dot(&impulse) > 0.0)
                .unwrap_or(impulse / masses[i]);
            out.largest_move = out.largest_move.max(h * dv.norm());
        }
        for &(i, _) in &self.released {
            self.in_released[i] = false;
        }
        self.released.clear();
        changed
    }

    /// Marks free vertices (not in contact, not pinned, not yet marked) for engagement in the
    /// next attempt of this step; returns how many were newly marked. `deep` lists the vertices
    /// the detect stage found deep inside a solid's thickness layer at the candidate state,
    /// with their signed distance there (m), at the candidate of a step of size `h` (s).
    pub fn force_engagement(&mut self, deep: &[(usize, f64)], pinned: &[bool], h: f64) -> usize {
        self.forget_forced_unless(h);
        let mut marked = 0;
        for &(i, d1) in deep {
            let free = self.state[i].is_none_or(|s| s.mode == Mode::Released);
            if free && !pinned[i] && self.forced[i].is_none() {
                self.forced[i] = Some(d1);
                marked += 1;
            }
        }
        marked
    }

    /// Drops the engagement marks made at another step size than `h` (s): the approach a
    /// rejected attempt showed belongs to its step, and applied to a much smaller one it
    /// would pull the vertex onto the solid far faster than it moves, stretching its
    /// triangles beyond what any step passes. A smaller step that still carries the vertex in
    /// is caught and marked again.
    fn forget_forced_unless(&mut self, h: f64) {
        if h != self.forced_h {
            self.forced.fill(None);
            self.forced_h = h;
        }
    }

    /// Updates contact states after an accepted step from the constraint forces `f` (N):
    /// release on attraction (as [`Mode::Released`] where `torn` marks the vertex: a triangle
    /// around it is overstretched), static/sliding transitions by Coulomb's law (paper §6.1).
    pub fn after_step(&mut self, world: &World, f: &[Vec3], v: &[Vec3], h: f64, torn: &[bool]) {
        let (masses, pinned) = (&world.cloth.masses, world.pinned());
        let (surfaces, stick_speed) = (world.surfaces(), world.contact.stick_speed);
        self.forced.fill(None);
        for c in &self.active {
            let i = c.vertex;
            let Some(st) = self.state[i].as_mut() else {
                continue;
            };
            if pinned[i] {
                self.state[i] = None;
                continue;
            }
            st.new = false;
            let n = c.normal;
            let fn_ = f[i].dot(&n);
            if fn_ < 0.0 {
                // Attractive: the solid would have to pull the cloth; let go (paper §5.4).
                if torn[i] {
                    st.mode = Mode::Released;
                } else {
                    self.state[i] = None;
                }
                continue;
            }
            // The impulse that stopped the approach was this step's; what presses the vertex
            // on the surface goes on (counted with the impulse, the step after an impact
            // would take away the slip Coulomb's law leaves a second time).
            st.normal_force = (fn_ - masses[i] * st.approach / h).max(0.0);
            let mu = surfaces[c.collider].friction;
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
                    if (st.stops && slip * masses[i] <= mu * fn_ * h)
                        || slip < stick_speed && st.friction == 0.0
                    {
                        st.mode = Mode::Static;
                    }
                }
                Mode::Released => {}
            }
        }
    }
}

/// The state of a new contact, by Coulomb's law at impact: stopping the vertex's approach
/// speed `-rel_n` (m/s) within the step takes a normal impulse `m |rel_n|`, and friction can
/// take at most `mu` times that from the tangential slip `rel_t`. A contact whose slip that
/// impulse can stop starts static (paper §6.1: Coulomb's test on its first constraint force
/// then decides); one that slides faster starts sliding, with the normal force of the impact
/// (`m |rel_n| / h`) as the first step's kinetic friction, so it keeps `|rel_t| - mu |rel_n|`
/// of its slip. Started static at any slip, a vertex landing on a solid would stop dead while
/// its neighbours fly on, and a cloth thrown along a floor would stop where it landed.
fn impact(
    rel_t: Vec3,
    rel_n: f64,
    mu: f64,
    mass: f64,
    h: f64,
    settings: &ContactSettings,
) -> State {
    let approach = (-rel_n).max(0.0);
    let slip = rel_t.norm();
    let mode = if slip > settings.stick_speed && slip > mu * approach {
        Mode::Sliding
    } else {
        Mode::Static
    };
    State {
        mode,
        normal_force: if mode == Mode::Sliding {
            mass * approach / h
        } else {
            0.0
        },
        stops: false,
        hold: Vec3::zeros(),
        friction: 0.0,
        approach: 0.0,
        new: true,
    }
}

/// Kinetic friction mu N against the tangential slip `rel_t` (or, from rest, against the drive
/// that broke static friction), capped so it cannot reverse a slip within one step.
fn kinetic_friction(
    st: &mut State,
    rel_t: Vec3,
    mu: f64,
    mass: f64,
    h: f64,
    settings: &ContactSettings,
) -> Vec3 {
    let speed = rel_t.norm();
    let full = mu * st.normal_force;
    let (dir, f) = if speed > settings.stick_speed {
        let cap = mass * speed / h;
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
    dir * f
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One vertex falling at 2.6 m/s towards a floor 2.78 cm below (the thrown sheet's case,
    /// cloth thickness 1 cm with the floor's): the alteration y and constraint of one attempt.
    fn attempt(memory: &mut ContactMemory, h: f64) -> (Vec3, Constraint) {
        let n = Vec3::new(0.0, 1.0, 0.0);
        let contact = Contact {
            vertex: 0,
            collider: 0,
            normal: n,
            distance: 0.0278,
            surface_point: Vec3::zeros(),
            surface_velocity: Vec3::zeros(),
        };
        let surfaces = [Surface {
            friction: 0.5,
            thickness: 0.005,
        }];
        let (mut kind, mut z, mut y, mut landing, mut forces) = (
            [Constraint::Free],
            [Vec3::zeros()],
            [Vec3::zeros()],
            [Vec3::zeros()],
            [Vec3::zeros()],
        );
        let mut out = ConstraintSink {
            kind: &mut kind,
            z: &mut z,
            y: &mut y,
            landing: &mut landing,
            forces: &mut forces,
        };
        let v = [n * -2.6];
        let settings = ContactSettings::default();
        let inputs = Inputs {
            surfaces: &surfaces,
            settings: &settings,
            v: &v,
            masses: &[1e-4],
            h,
        };
        memory.constrain(&[contact], &inputs, &mut out);
        (y[0], kind[0])
    }

    #[test]
    fn a_push_out_leaves_the_solid_at_once_and_the_layer_over_a_few_steps() {
        let thick = 0.01;
        // 2 mm inside the solid itself: out of it in this step, and some way into the layer.
        let pull = push_out(thick + 0.002, thick);
        assert!(pull > 0.002 && pull < thick + 0.002, "{pull}");
        // 4 mm deep in the layer: part of the way per step, never past the layer, all of it
        // within a few dozen steps.
        let mut depth = 0.004;
        for _ in 0..40 {
            let step = push_out(depth, thick);
            assert!(step > 0.0 && step < depth, "{step} at {depth}");
            depth -= step;
        }
        assert!(depth < 1e-6, "{depth}");
        // A pull towards the surface (a landing) is kept whole.
        assert_eq!(push_out(-0.003, thick), -0.003);
    }

    #[test]
    fn a_rejected_attempts_marks_hold_only_for_a_redo_at_its_step() {
        let mut memory = ContactMemory::new(1);
        // A 4.4 ms attempt carried the vertex 0.7 mm into the floor: marked for the redo.
        assert_eq!(memory.force_engagement(&[(0, -7e-4)], &[false], 4.4e-3), 1);
        // The redo at that step engages it and pulls it by at most that attempt's approach.
        let (y, kind) = attempt(&mut memory, 4.4e-3);
        assert!(matches!(kind, Constraint::Fixed), "{kind:?}");
        assert!(y.y < 0.0 && y.y >= -7e-4 - 0.0278 - 1e-12, "{y:?}");
        // A 45 us retry is not marked: the vertex, 1.78 cm above its layer at 2.6 m/s, moves
        // 0.12 mm freely instead of being pulled 1.8 cm onto the floor within the step.
        let mut memory = ContactMemory::new(1);
        memory.force_engagement(&[(0, -7e-4)], &[false], 4.4e-3);
        let (y, kind) = attempt(&mut memory, 4.5e-5);
        assert_eq!(y, Vec3::zeros());
        assert!(matches!(kind, Constraint::Free), "{kind:?}");
    }
}
