//! What a simulation starts from: coordinates within the bounds a run can simulate.
//!
//! The bounds are the admitted ranges of the scene's values (checked key by key when a scene
//! is read) and of the geometry built from its files (checked by [`check_start_bounds`] when
//! the simulation is built: a GarmentCode panel translated by 1e308, an OBJ in the wrong
//! units). Beyond them a value is a typo or a unit mistake, and the run would fail mid-way with
//! a solver message after writing frames at absurd positions.

use crate::error::SimError;
use crate::state::State;
use crate::world::World;
use cloth_collide::Shape;
use cloth_mesh::Vec3;

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
