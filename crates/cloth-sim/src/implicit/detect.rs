//! Stage 1, detect: every proximity query of a step runs here. At the start state: cloth-solid
//! contacts against the colliders placed at the step's end, solid features against cloth
//! triangles, and cloth-cloth proximities. At a solved attempt's candidate end state: vertices
//! pulled into solids, and continuous collision detection of the candidate motion with its
//! impact zones (the cloth-cloth safety net, [`super::zones`]). The accept stage judges what
//! these find.

use super::candidate::Candidate;
use super::zones::Zones;
use crate::error::Reject;
use crate::state::State;
use crate::stats::Clock;
use crate::world::World;
use cloth_collide::{Contact, FeatureContact, ProximityKind};
use cloth_mesh::Vec3;
use nalgebra::{Isometry3, Point3};

/// What the queries found for the step being attempted.
#[derive(Default)]
pub(crate) struct Detection {
    /// Vertices within thickness + margin of a solid, sorted by vertex.
    pub contacts: Vec<Contact>,
    /// Solid features near cloth triangles.
    pub features: Vec<FeatureContact>,
    /// Vertices of a candidate state deep inside a solid's thickness layer, with their signed
    /// distance to the surface (m).
    pub deep: Vec<(usize, f64)>,
    /// The candidate's vertex deepest inside a solid beyond the thickness layer, if any:
    /// (vertex, collider, depth below the surface in m).
    pub inside: Option<(usize, usize, f64)>,
    /// Per collider: the rigid map from a surface point at t + h back to where that material
    /// point was at t (`None` for deforming meshes).
    back: Vec<Option<Isometry3<f64>>>,
    /// Per vertex of the start state: how far (m) it can move before any solid's contact
    /// range at the candidate check (cloth plus collider thickness) can reach it, with the
    /// colliders where the start query placed them: its distance to the nearest solid's
    /// range, or the search margin where no solid was within the search (negative inside a
    /// range).
    clearance: Vec<f64>,
    /// The vertices the candidate check queries (those that moved at least their clearance).
    moved: Vec<usize>,
    scratch: Vec<Contact>,
    /// Per vertex: the separation direction of a cloth layer it lies on (vertex-triangle
    /// proximity), if any.
    layer_normal: Vec<Option<Vec3>>,
    /// Continuous collision detection of candidate motions and their impact zones.
    zones: Zones,
}

impl Detection {
    /// The queries at the start state of a step of size `h`: cloth-solid contacts and
    /// features, then cloth-cloth proximities when the start state is new (`fresh`; they are
    /// kept for retries of the same step), then the solid contacts shielded by a cloth layer
    /// are dropped.
    pub fn start(
        &mut self,
        world: &mut World,
        state: &State,
        h: f64,
        fresh: bool,
        clock: &mut Clock,
    ) {
        self.solids(world, state, h, clock);
        self.cloth(world, state, fresh, clock);
        self.shield(world);
    }

    /// Cloth-solid queries for a step from `state.t` to `state.t + h`: colliders are placed at
    /// t + h, vertices of the start state within thickness plus a margin are reported with
    /// step-averaged surface velocities, and sharp features near cloth triangles.
    fn solids(&mut self, world: &mut World, state: &State, h: f64, clock: &mut Clock) {
        self.contacts.clear();
        self.features.clear();
        let settings = world.contact;
        let triangles = world.cloth.mesh.triangles();
        let Some(set) = world.colliders.as_mut() else {
            return;
        };
        let t = state.t;
        set.update(t + h);
        // Search far enough that no vertex can cross the whole range within the step: the
        // margin grows with the fastest vertex's travel (twice, for what the step adds).
        // Gravity adds |g| h^2 / 2 to the travel within the step (counted twice as well).
        let vmax = state.v.iter().map(|v| v.norm()).fold(0.0, f64::max);
        let g = world.cloth.external.gravity.norm();
        let margin = settings.margin.max(2.0 * h * vmax + g * h * h);
        set.vertex_contacts(
            &state.x,
            settings.cloth_thickness,
            margin,
            &mut self.contacts,
        );
        // The key of a contact, distance minus the collider's thickness, changes no faster
        // than the vertex moves (the colliders stay where they are until the candidate check),
        // and a vertex with no contact has a key of at least the cloth thickness plus margin.
        self.clearance.clear();
        self.clearance.resize(state.len(), margin);
        let colliders = set.colliders();
        for c in &self.contacts {
            let key = c.distance - colliders[c.collider].thickness;
            self.clearance[c.vertex] = key - settings.cloth_thickness;
        }
        // Surface velocity averaged over the step for rigid motion: the material point that is
        // at `surface_point` at t + h was at `pose(t) pose(t + h)^-1 surface_point` at t. A
        // static contact then lands exactly where the surface goes, also across keyframes.
        self.back.clear();
        for (k, c) in set.colliders().iter().enumerate() {
            let deforming = c.motion.is_deforming();
            let back = match set.pose(k) {
                Some(now) if !deforming => Some(c.pose(t) * now.inverse()),
                _ => None,
            };
            self.back.push(back);
        }
        for c in &mut self.contacts {
            if let Some(b) = &self.back[c.collider] {
                let p0 = b * Point3::from(c.surface_point);
                c.surface_velocity = (c.surface_point - p0.coords) / h;
            }
        }
        if set.feature_count() > 0 {
            set.feature_contacts(
                triangles,
                &state.x,
                settings.cloth_thickness,
                settings.margin,
                &mut self.features,
            );
        }
        clock.cloth_solid();
    }

    /// Cloth-cloth proximities at the start state, when the start state is new (`fresh`); they
    /// are kept for retries of the same step. The candidate pairs the last crossing check
    /// recorded at the end of its motion are used when they are for exactly this state.
    fn cloth(&mut self, world: &mut World, state: &State, fresh: bool, clock: &mut Clock) {
        if let (true, Some(sc)) = (fresh, world.self_collision.as_mut()) {
            if sc
                .try_detect_near(&state.x, self.zones.near_pairs())
                .is_err()
            {
                sc.detect(&state.x);
            }
            clock.cloth_cloth();
        }
    }

    /// Drops the solid contacts of vertices that rest on another layer of the cloth lying
    /// between them and the solid (a vertex-triangle proximity whose direction is within 60
    /// degrees of the solid's normal) and are outside the solid's thickness layer: such a
    /// vertex touches the cloth under it, not the solid, and must not be held by the solid's
    /// friction (a layer sliding on another would stop dead when it came within the contact
    /// search range of the floor underneath).
    fn shield(&mut self, world: &World) {
        let Some(sc) = world.self_collision.as_ref() else {
            return;
        };
        if self.contacts.is_empty() {
            return;
        }
        self.layer_normal.clear();
        self.layer_normal.resize(world.num_vertices(), None);
        for p in sc.proximities() {
            if p.kind == ProximityKind::VertexTriangle {
                self.layer_normal[p.vertices[0]].get_or_insert(p.normal);
            }
        }
        let (surfaces, thick) = (world.surfaces(), world.contact.cloth_thickness);
        let layer_normal = &self.layer_normal;
        self.contacts.retain(|c| {
            let outside = c.distance > thick + surfaces[c.collider].thickness;
            let on_layer = layer_normal[c.vertex].is_some_and(|n| n.dot(&c.normal) > 0.5);
            !(outside && on_layer)
        });
    }

    /// Vertices of the candidate end state `x1` (colliders already at t + h) that are deep
    /// inside a solid's thickness layer (less than half the thickness from the surface), into
    /// [`Detection::deep`], and the deepest one inside a solid, into [`Detection::inside`].
    /// Only the vertices that moved from the start state `x0` by at least their clearance
    /// (see [`Detection::start`]) are queried: the others are out of every solid's range, and
    /// a full query would find nothing for them either.
    pub fn candidate(&mut self, world: &World, x0: &[Vec3], x1: &[Vec3]) {
        self.deep.clear();
        self.inside = None;
        let Some(set) = world.colliders() else {
            return;
        };
        let cloth_thickness = world.contact.cloth_thickness;
        self.moved.clear();
        if self.clearance.len() == x1.len() && x0.len() == x1.len() {
            // A nanometre of slack covers the rounding of the distances.
            let far = |i: usize| (x1[i] - x0[i]).norm() + 1e-9 < self.clearance[i];
            self.moved.extend((0..x1.len()).filter(|&i| !far(i)));
        } else {
            self.moved.extend(0..x1.len());
        }
        set.vertex_contacts_of(x1, &self.moved, cloth_thickness, 0.0, &mut self.scratch);
        let surfaces = world.surfaces();
        for c in self.scratch.drain(..) {
            let thick = cloth_thickness + surfaces[c.collider].thickness;
            if c.distance < thick * 0.5 {
                self.deep.push((c.vertex, c.distance));
            }
            if c.distance < -thick && self.inside.is_none_or(|(_, _, d)| -c.distance > d) {
                self.inside = Some((c.vertex, c.collider, -c.distance));
            }
        }
    }

    /// Makes the candidate motion from `x0` free of cloth-cloth collisions by impact zones
    /// (see [`Zones::resolve`]), after keeping the candidate as it was. Returns how many
    /// vertices moved, or the rejection when the zones could not separate the cloth.
    pub fn crossings(
        &mut self,
        world: &World,
        x0: &[Vec3],
        candidate: &mut Candidate,
    ) -> Result<usize, Reject> {
        candidate.keep_free();
        (self.zones).resolve(world, x0, &mut candidate.x1, &mut candidate.y)
    }
}
