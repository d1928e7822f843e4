//! The position projection that clears the start of a run out of the solids: Gauss-Seidel
//! sweeps that move the two ends of every edge back into `[min, max]` times its rest length,
//! the two vertices of every stitch to no farther apart than they start, and every
//! vertex within half its thickness layer of a solid back onto that half-space (the solid's
//! tangent plane at the vertex's closest point, queried again after each round of sweeps).
//! Corrections are shared in proportion to inverse masses; pinned vertices do not move.

use crate::strain::{EdgeSet, StrainLimit};
use crate::world::World;
use cloth_collide::Contact;
use cloth_mesh::Vec3;

/// The part of a solid's thickness layer a projected vertex must stay out of: half of it, as
/// the accept stage's "deep in the layer" test; the contact constraints of the next steps
/// move it out of the rest of the layer.
const LAYER_FLOOR: f64 = 0.5;

/// A half-space a vertex must stay in: `normal . (x - point) >= 0`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plane {
    pub normal: Vec3,
    pub point: Vec3,
}

/// The projection's data: the edges (made on first use), inverse masses, planes and stitches.
#[derive(Default)]
pub(crate) struct Projection {
    edges: Option<EdgeSet>,
    inv_mass: Vec<f64>,
    pub(crate) planes: Vec<Option<Plane>>,
    /// Stitched pairs with the largest distance they may have (m).
    stitches: Vec<([usize; 2], f64)>,
    scratch: Vec<Contact>,
    /// Largest relative edge violation the last projection left (fraction of rest length).
    pub violation: f64,
    /// Sweeps the last projection took.
    pub sweeps: usize,
    /// Vertices the last projection found within half their layer of a solid.
    pub planes_set: usize,
}

impl Projection {
    /// Projects `x` onto the strain limit, the stitches (no longer than they are in `x`) and
    /// the solids (colliders where they are placed now), in up to `rounds` rounds of (query
    /// solids, sweeps).
    pub fn solve(&mut self, world: &World, limit: &StrainLimit, rounds: usize, x: &mut [Vec3]) {
        if self.edges.is_none() {
            self.edges = Some(EdgeSet::from_mesh(&world.cloth.mesh));
        }
        self.inv_mass = world.inverse_masses();
        self.planes.clear();
        self.planes.resize(x.len(), None);
        self.stitches.clear();
        let pairs = world.sewing.pairs();
        self.stitches
            .extend(pairs.map(|[a, b]| ([a, b], (x[a] - x[b]).norm())));
        self.sweeps = 0;
        self.planes_set = 0;
        for _ in 0..rounds {
            let added = self.query_planes(world, x);
            self.planes_set += added;
            if added == 0 && self.sweeps > 0 {
                break;
            }
            self.sweep(limit, x);
        }
        let edges = self.edges.as_ref().expect("made above");
        self.violation = edges.violation(x, limit);
    }

    /// Adds or replaces the plane of every vertex of `x1` within half its layer of a solid
    /// (colliders at the step's end); returns how many vertices got a new plane.
    fn query_planes(&mut self, world: &World, x1: &[Vec3]) -> usize {
        let Some(set) = world.colliders() else {
            return 0;
        };
        let cloth_thickness = world.contact.cloth_thickness;
        set.vertex_contacts(x1, cloth_thickness, 0.0, &mut self.scratch);
        let surfaces = world.surfaces();
        let mut added = 0;
        for c in &self.scratch {
            let thick = cloth_thickness + surfaces[c.collider].thickness;
            let floor = LAYER_FLOOR * thick;
            if c.distance >= floor || self.inv_mass[c.vertex] == 0.0 {
                continue;
            }
            self.planes[c.vertex] = Some(Plane {
                normal: c.normal,
                point: c.surface_point + c.normal * floor,
            });
            added += 1;
        }
        added
    }

    /// Gauss-Seidel sweeps over the edges, then the planes, until every edge is within the
    /// limit to its tolerance or the sweep cap.
    fn sweep(&mut self, limit: &StrainLimit, x: &mut [Vec3]) {
        let edges = self.edges.as_ref().expect("made before sweeping");
        for _ in 0..limit.iterations.max(1) {
            self.sweeps += 1;
            let mut worst: f64 = 0.0;
            for (e, &l0) in edges.edges.iter().zip(&edges.rest) {
                worst = worst.max(project_edge(x, &self.inv_mass, *e, l0, limit));
            }
            for &(pair, allowed) in &self.stitches {
                close_stitch(x, &self.inv_mass, pair, allowed);
            }
            for (xi, plane) in x.iter_mut().zip(&self.planes) {
                if let Some(p) = plane {
                    let d = p.normal.dot(&(*xi - p.point));
                    if d < 0.0 {
                        *xi -= p.normal * d;
                    }
                }
            }
            if worst <= limit.tolerance {
                break;
            }
        }
    }
}

/// Moves the two vertices of a stitch towards each other until they are at most `allowed`
/// (m) apart, shared in proportion to their inverse masses.
fn close_stitch(x: &mut [Vec3], inv_mass: &[f64], pair: [usize; 2], allowed: f64) {
    let [i, j] = pair;
    let (wi, wj) = (inv_mass[i], inv_mass[j]);
    let w = wi + wj;
    let d = x[j] - x[i];
    let len = d.norm();
    if w == 0.0 || len <= allowed {
        return;
    }
    let corr = d * ((len - allowed) / (len * w));
    x[i] += corr * wi;
    x[j] -= corr * wj;
}

/// Moves the ends of edge `e` (rest length `l0`) of `x` back into the limit, shared in
/// proportion to their inverse masses; returns the relative violation it found.
fn project_edge(
    x: &mut [Vec3],
    inv_mass: &[f64],
    e: [usize; 2],
    l0: f64,
    lim: &StrainLimit,
) -> f64 {
    let [i, j] = e;
    let (wi, wj) = (inv_mass[i], inv_mass[j]);
    let w = wi + wj;
    let d = x[j] - x[i];
    let len = d.norm();
    if w == 0.0 || len == 0.0 {
        return 0.0;
    }
    let target = len.clamp(lim.min * l0, lim.max * l0);
    if target == len {
        return 0.0;
    }
    let corr = d * ((len - target) / (len * w));
    x[i] += corr * wi;
    x[j] -= corr * wj;
    (len - target).abs() / l0
}

/// What clearing a start state of solids did ([`clear_solids`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cleared {
    /// Cloth vertices that started inside a solid (its closed parts; open parts have no
    /// inside).
    pub inside: usize,
    /// How deep the deepest of them was below the surface (m).
    pub deepest: f64,
    /// Vertices that started within half their thickness layer of a solid, inside or not, and
    /// were moved out of it (0 when no vertex started deeper inside than its layer).
    pub moved: usize,
    /// Vertices still within half their layer afterwards (0 when the clearing succeeded).
    pub remaining: usize,
    /// Whether the start was then relaxed out of the contact layers (an implicit run of a cloth
    /// that starts deeper than 0.5 mm in one, a garment being sewn only when it had to be
    /// moved out of a solid; [`crate::explicit::Verlet::relax_start`]).
    pub relaxed: bool,
}

/// Rounds of (query, sweeps) [`clear_solids`] takes at most.
const CLEAR_ROUNDS: usize = 20;

/// Moves a start state `x` out of the solids (colliders where they are placed now) before the
/// first step when some vertex starts deeper inside a solid than its contact layer is thick,
/// as positions only (no velocity is changed, so no energy is added): every vertex
/// within half its thickness layer of a solid goes onto that half-space while the edges are
/// held within `limit` and the stitches no longer than they are, round after round until none
/// is left or 20 rounds are done. A garment placed around a body by another tool, partly inside
/// it, starts clean; what remains is reported.
pub fn clear_solids(world: &World, limit: &StrainLimit, x: &mut [Vec3]) -> Cleared {
    let mut cleared = Cleared::default();
    let Some(set) = world.colliders() else {
        return cleared;
    };
    let mut found = Vec::new();
    let thickness = world.contact.cloth_thickness;
    set.vertex_contacts(x, thickness, 0.0, &mut found);
    let surfaces = world.surfaces();
    let floor = |c: &Contact| LAYER_FLOOR * (thickness + surfaces[c.collider].thickness);
    for c in &found {
        if c.distance < 0.0 {
            cleared.inside += 1;
            cleared.deepest = cleared.deepest.max(-c.distance);
        }
    }
    // Only a start deeper inside a solid than its contact layer is cleared here; shallower
    // ones are left to the contact constraints of the first steps, which lift them smoothly.
    let deep = found.iter().any(|c| -c.distance > 2.0 * floor(c));
    if !deep {
        return cleared;
    }
    cleared.moved = found.iter().filter(|c| c.distance < floor(c)).count();
    let mut projection = Projection::default();
    projection.solve(world, limit, CLEAR_ROUNDS, x);
    set.vertex_contacts(x, thickness, 0.0, &mut found);
    cleared.remaining = found
        .iter()
        .filter(|c| c.distance < floor(c) * 0.99)
        .count();
    cleared
}
