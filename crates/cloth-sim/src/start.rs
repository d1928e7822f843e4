//! What a simulation starts from: coordinates within the bounds a run can simulate, and where
//! the cloth is relative to the solids at its first instant.
//!
//! The bounds are the admitted ranges of the scene's values (checked key by key when a scene
//! is read) and of the geometry built from its files (checked by [`check_start_bounds`] when
//! the simulation is built: a GarmentCode panel translated by 1e308, an OBJ in the wrong
//! units). Beyond them a value is a typo or a unit mistake, and the run would fail mid-way with
//! a solver message after writing frames at absurd positions.
//!
//! [`start_contacts`] counts, per collider, the cloth vertices that start inside its solid and
//! within its contact layer: a garment placed around a body by another tool can start partly
//! inside it, which `cloth check` reports before a run stops on it.

use crate::error::SimError;
use crate::state::State;
use crate::world::World;
use cloth_collide::Shape;
use cloth_mesh::Vec3;
use rayon::prelude::*;

/// Largest coordinate (m) of anything placed in a scene (cloth and collider positions, pin
/// regions, keyframe translations, built cloth and collider vertices): 10 km. Doubles there
/// still resolve 2e-12 m, far below any thickness.
pub const MAX_COORDINATE: f64 = 1e4;

/// Largest speed (m/s) a scene may give (a cloth's initial velocity, wind, a collider's
/// velocity): 1 km/s, three times the speed of sound, beyond any cloth motion.
pub const MAX_SPEED: f64 = 1e3;

/// Largest angular speed (degrees/s) of a collider: 1e5, about 280 turns per second.
pub const MAX_ANGULAR_SPEED: f64 = 1e5;

/// Smallest size (m) of a dimension (a mesh's width, height, radius, edge length; a collider's
/// radius, length, box side): 0.1 mm, a fiftieth of the default thickness, so that contact
/// layers and triangles stay resolvable.
pub const MIN_SIZE: f64 = 1e-4;

/// Largest size (m) of a dimension or a thickness: 1 km.
pub const MAX_SIZE: f64 = 1e3;

/// Smallest and largest scale factor (a glTF body's `scale`, an OBJ cloth's `uv_scale`): four
/// orders of magnitude either way covers every unit change (mm, cm, inches to m).
pub const SCALE_RANGE: [f64; 2] = [1e-4, 1e4];

/// Refuses a world whose cloth or mesh collider geometry starts beyond [`MAX_COORDINATE`]:
/// the error names the cloth vertex (or the collider) and the coordinate.
pub fn check_start_bounds(world: &World, state: &State) -> Result<(), SimError> {
    let far = |p: &Vec3| p.iter().any(|c| !(c.abs() <= MAX_COORDINATE));
    if let Some((i, p)) = state.x.iter().enumerate().find(|(_, p)| far(p)) {
        let parts = &world.cloth.parts;
        let (k, part) = parts
            .iter()
            .enumerate()
            .find(|(_, part)| part.vertices.contains(&i))
            .map_or((0, "cloth"), |(k, part)| (k, part.name.as_str()));
        let key = if parts.len() > 1 {
            format!("cloth[{k}].mesh")
        } else {
            "cloth.mesh".into()
        };
        let own = i - parts.get(k).map_or(0, |part| part.vertices.start);
        return Err(SimError::Invalid {
            key,
            message: format!(
                "vertex {own} of '{part}' starts at ({:e}, {:e}, {:e}) m, beyond the admitted \
                 |coordinate| <= {MAX_COORDINATE:e} m (a panel or a mesh placed or scaled \
                 wrongly?)",
                p.x, p.y, p.z
            ),
        });
    }
    let Some(set) = world.colliders() else {
        return Ok(());
    };
    // Analytic shapes are bounded by their keys; only a mesh read from a file is checked here.
    for (k, c) in set.colliders().iter().enumerate() {
        if !matches!(c.shape, Shape::Mesh { .. }) {
            continue;
        }
        let Some((vertices, _)) = set.world_mesh(k, 3) else {
            continue;
        };
        if let Some(p) = vertices.iter().find(|p| far(p)) {
            return Err(SimError::Invalid {
                key: format!("collider[{k}]"),
                message: format!(
                    "'{}' has a vertex at ({:e}, {:e}, {:e}) m, beyond the admitted \
                     |coordinate| <= {MAX_COORDINATE:e} m",
                    c.name, p.x, p.y, p.z
                ),
            });
        }
    }
    Ok(())
}

/// Where the cloth starts relative to one collider.
#[derive(Clone, Debug, PartialEq)]
pub struct ColliderStart {
    /// Collider index.
    pub collider: usize,
    /// Its name (may be empty).
    pub name: String,
    /// Cloth vertices inside its solid (signed distance below 0; open parts of a mesh have no
    /// inside).
    pub inside: usize,
    /// Cloth vertices outside the solid but within its contact layer (distance below
    /// `layer`).
    pub in_layer: usize,
    /// The contact layer (m): the cloth's thickness plus the collider's.
    pub layer: f64,
    /// The vertex deepest inside and its depth (m, > 0), if any is inside.
    pub deepest: Option<(usize, f64)>,
}

/// Where the cloth starts relative to every collider (see the module docs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StartReport {
    /// One entry per collider, in collider order.
    pub colliders: Vec<ColliderStart>,
}

impl StartReport {
    /// Whether any cloth vertex starts inside a solid.
    pub fn any_inside(&self) -> bool {
        self.colliders.iter().any(|c| c.inside > 0)
    }
}

impl ColliderStart {
    /// `93 vertices inside 'body' (deepest 19.4 mm, vertex 1423); 210 within its 4 mm layer`,
    /// or `None` when no vertex is inside or in the layer.
    pub fn summary(&self) -> Option<String> {
        if self.inside == 0 && self.in_layer == 0 {
            return None;
        }
        let name = if self.name.is_empty() {
            format!("collider #{}", self.collider)
        } else {
            format!("'{}'", self.name)
        };
        let layer = format!(
            "{} within its {:.1} mm layer",
            self.in_layer,
            self.layer * 1e3
        );
        Some(match self.deepest {
            Some((v, d)) => format!(
                "{} vertices inside {name} (deepest {:.1} mm, vertex {v}); {layer}",
                self.inside,
                d * 1e3
            ),
            None => format!("no vertex inside {name}; {layer}"),
        })
    }
}

/// The cloth's start relative to each collider: signed distances of every vertex of `state`
/// (positions at its time) to every collider of `world` posed at that time.
pub fn start_contacts(world: &World, state: &State) -> StartReport {
    let Some(set) = world.colliders() else {
        return StartReport::default();
    };
    let mut set = set.clone();
    if set.time() != state.t {
        set.update(state.t);
    }
    let cloth = world.contact.cloth_thickness;
    let colliders = set
        .colliders()
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let layer = cloth + c.thickness;
            let distances: Vec<f64> = state
                .x
                .par_iter()
                .map(|p| set.query(k, p).map_or(f64::INFINITY, |ct| ct.distance))
                .collect();
            let mut start = ColliderStart {
                collider: k,
                name: c.name.clone(),
                inside: 0,
                in_layer: 0,
                layer,
                deepest: None,
            };
            for (v, &d) in distances.iter().enumerate() {
                if d < 0.0 {
                    start.inside += 1;
                    if start.deepest.is_none_or(|(_, depth)| -d > depth) {
                        start.deepest = Some((v, -d));
                    }
                } else if d < layer {
                    start.in_layer += 1;
                }
            }
            start
        })
        .collect();
    StartReport { colliders }
}
