//! Cloth-solid contact of the explicit integrator, by position projection: each vertex near a
//! solid at the start of the step must end the step on the outer side of the solid's tangent
//! plane (offset by the cloth's and the collider's thickness), with Coulomb friction limiting
//! its slip along the plane.
//!
//! The plane is the tangent plane at the surface point closest to the vertex's position at the
//! start of the step, with the collider placed at the end of the step. For a convex solid
//! (sphere, box, capsule, plane) that half-space lies outside the solid, so a vertex kept in
//! it cannot penetrate, and it contains the start position of a vertex that was outside: the
//! projection onto it does not add kinetic energy. The velocity consequence comes with the
//! velocity update `v = (x_new - x_old) / h` of the step: the normal approach is stopped, the
//! slip reduced by friction.
//!
//! Each row keeps its accumulated push (its multiplier, in the dual Gauss-Seidel form of the
//! `pairs` rows) and, before the global phase, gives it back when the vertex is above its
//! plane: a vertex the row pushed out and something else later lifted is pulled back towards
//! the plane, by up to what was pushed. That is right while the rows are the only moves, and
//! wrong once the global projection (and the tree) move vertices outside that bookkeeping:
//! a row that gave back its push would pull a vertex the global projection lifted back into
//! the edge above it, sweep after sweep. From then on (the global phase) a row only pushes
//! out.
//!
//! Friction acts in the first half of a step's sweep cap (`verlet`). Each row also keeps its
//! friction correction (`slip`, the tangential move undone so far in the step) and whether the
//! last sweep undid the whole slip (the vertex sticks). The global projection holds a
//! sticking vertex along its plane (`global`, [`Plane::stick`], with the budget
//! `mu * push - |slip|` left) and reports the tangential move each hold prevented, which the
//! row adds to its correction ([`SolidContacts::add_global`]): the sweep's Coulomb test then
//! covers what the global solves pulled, and lets the vertex slide once the step's pulls
//! exceed `mu * push`. Without the holds, where a sheet rests on a solid is decided by a
//! projection without friction, and a draped sheet creeps off a ball at large steps.

use super::global::Plane;
use crate::world::World;
use cloth_collide::Contact;
use cloth_mesh::Vec3;

/// One contact of a step.
#[derive(Clone, Copy, Debug)]
struct Row {
    vertex: usize,
    /// Outward unit normal.
    normal: Vec3,
    /// Plane offset: `normal . x >= offset` (m).
    offset: f64,
    /// Motion of the surface over the step (m).
    surface_shift: Vec3,
    /// Coulomb coefficient.
    friction: f64,
    /// Accumulated normal correction (m, >= 0).
    push: f64,
    /// Accumulated friction correction (m, tangential).
    slip: Vec3,
    /// Whether the last sweep undid the whole slip (static friction holds the vertex).
    stuck: bool,
    /// Whether this is the vertex's first row (the one the global projection uses).
    first: bool,
}

/// The contacts of the step being taken.
#[derive(Default)]
pub(crate) struct SolidContacts {
    rows: Vec<Row>,
    found: Vec<Contact>,
    /// Per vertex: whether a row of the step has it (scratch of `detect`).
    seen: Vec<bool>,
}

impl SolidContacts {
    /// Finds the free vertices (`inv_mass` > 0) near a solid at `x_old` with the colliders
    /// placed at `t_end`: within the cloth's and the collider's thickness plus the contact
    /// margin plus `travel` (m, the largest distance a vertex may move in the step of `h` s).
    pub fn detect(
        &mut self,
        world: &mut World,
        x_old: &[Vec3],
        inv_mass: &[f64],
        (t_end, h, travel): (f64, f64, f64),
    ) {
        self.rows.clear();
        let contact = world.contact;
        let Some(set) = world.colliders_mut() else {
            return;
        };
        set.update(t_end);
        let margin = contact.margin + travel;
        set.vertex_contacts(x_old, contact.cloth_thickness, margin, &mut self.found);
        let surfaces = world.surfaces();
        self.seen.clear();
        self.seen.resize(x_old.len(), false);
        for c in self.found.iter().filter(|c| inv_mass[c.vertex] > 0.0) {
            let s = surfaces[c.collider];
            let first = !std::mem::replace(&mut self.seen[c.vertex], true);
            self.rows.push(Row {
                vertex: c.vertex,
                normal: c.normal,
                offset: c.normal.dot(&c.surface_point) + contact.cloth_thickness + s.thickness,
                surface_shift: c.surface_velocity * h,
                friction: s.friction,
                push: 0.0,
                slip: Vec3::zeros(),
                stuck: false,
                first,
            });
        }
    }

    /// Deepest (m) a row's vertex is below its plane at `x` (the plane moved back by the
    /// surface's own motion): positive when the step starts with a penetration of the
    /// contact layer, zero or less otherwise.
    pub fn start_depth(&self, x: &[Vec3]) -> f64 {
        (self.rows.iter())
            .map(|r| r.offset - r.normal.dot(&r.surface_shift) - r.normal.dot(&x[r.vertex]))
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// Number of vertices whose contact row holds a push after the last sweep (in contact;
    /// in the global phase a row keeps its push, so a vertex lifted off its plane by then
    /// still counts).
    pub fn active(&self) -> usize {
        self.rows.iter().filter(|r| r.push > 0.0).count()
    }

    /// The planes of the step, with the friction budget left to the vertices static friction
    /// holds after the last sweep.
    pub fn planes(&self) -> impl Iterator<Item = Plane> + '_ {
        self.rows.iter().map(|r| Plane {
            vertex: r.vertex,
            normal: r.normal,
            offset: r.offset,
            stick: r
                .stuck
                .then(|| [r.friction, (r.friction * r.push - r.slip.norm()).max(0.0)]),
        })
    }

    /// Takes into the rows' accounts what a global projection did at each vertex (`held`:
    /// the tangential move static friction prevented, m, see
    /// `GlobalProjection::friction_moves`): the prevented move counts as a friction
    /// correction, so that Coulomb's law holds over the whole step. (The solve's normal push
    /// is not added to the budget: it would let friction hold through an impact and make the
    /// step need several times the sweeps.)
    pub fn add_global(&mut self, held: impl Fn(usize) -> Vec3) {
        for r in self.rows.iter_mut().filter(|r| r.first) {
            r.slip -= held(r.vertex);
        }
    }

    /// One sweep: each vertex onto the outer side of its plane (over-relaxed by `omega`), then,
    /// if `friction`, its slip since the start of the step, relative to the surface, limited
    /// by friction: undone entirely while it is at most `friction * push` (the vertex then
    /// sticks), else shortened by that much. With `push_only` (the global phase) a row only
    /// pushes out: it no longer gives back its push (see the module documentation).
    pub fn sweep(
        &mut self,
        x: &mut [Vec3],
        x_old: &[Vec3],
        omega: f64,
        (friction, push_only): (bool, bool),
    ) {
        for r in &mut self.rows {
            let p = &mut x[r.vertex];
            let c = r.offset - r.normal.dot(p);
            let push = if push_only {
                r.push + (omega * c).max(0.0)
            } else {
                (r.push + omega * c).max(0.0)
            };
            *p += r.normal * (push - r.push);
            r.push = push;
            r.stuck = false;
            if !friction {
                continue;
            }
            let u = *p - x_old[r.vertex] - r.surface_shift;
            let free = u - r.normal * r.normal.dot(&u) - r.slip;
            let cap = r.friction * r.push;
            let len = free.norm();
            r.stuck = len <= cap && cap > 0.0;
            let slip = if len <= cap {
                -free
            } else {
                -free * (cap / len)
            };
            *p += slip - r.slip;
            r.slip = slip;
        }
    }
}
