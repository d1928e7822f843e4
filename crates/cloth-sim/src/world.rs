//! What is simulated besides the state: the cloth, what holds it and what it touches.

use crate::contact::{ContactSettings, Surface};
use crate::error::SimError;
use crate::pins::PinGroup;
use crate::sewing::Sewing;
use crate::system::ClothSystem;
use cloth_collide::{ColliderSet, Motion, SelfCollision};
use cloth_solver::Constraint;

/// A constraint on one vertex along one or two directions, holding its velocity component(s)
/// along those directions at zero (a frictionless rail or slot).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DirectionalConstraint {
    /// Constrained vertex.
    pub vertex: usize,
    /// The constraint (Plane: no motion along p; Line: no motion along p and q).
    pub constraint: Constraint,
}

/// The cloth and its surroundings: everything a step reads besides the [`crate::state::State`].
///
/// Colliders keep a cache of their pose at the time last asked for, which is why steps take
/// the world mutably; nothing else in it changes while simulating.
pub struct World {
    /// The cloth: mesh, force model, masses, initial positions, external forces.
    pub cloth: ClothSystem,
    pub(crate) pins: Vec<PinGroup>,
    /// Directional constraints (rails and slots).
    pub directional: Vec<DirectionalConstraint>,
    pub(crate) colliders: Option<ColliderSet>,
    /// Cloth-cloth contact by penalty springs (none: off).
    pub self_collision: Option<SelfCollision>,
    /// Whether every frame's statistics count intersecting pairs of non-adjacent triangles.
    pub count_intersections: bool,
    /// Stitches of sewn garments (none: empty); see [`Sewing`].
    pub sewing: Sewing,
    /// Contact parameters.
    pub contact: ContactSettings,
    /// Per vertex: pinned by some group.
    pinned: Vec<bool>,
    /// Per collider: friction and thickness.
    surfaces: Vec<Surface>,
}

impl World {
    /// A world of `cloth` held by `pins`, with no colliders and no self-collision.
    pub fn new(cloth: ClothSystem, pins: Vec<PinGroup>) -> Result<Self, SimError> {
        let n = cloth.num_vertices();
        for (g, pin) in pins.iter().enumerate() {
            if let Some(&bad) = pin.vertices.iter().find(|&&i| i >= n) {
                return Err(SimError::Invalid {
                    key: format!("pin[{g}].vertices"),
                    message: format!("vertex {bad} is out of range (the cloth has {n} vertices)"),
                });
            }
        }
        let mut w = World {
            cloth,
            pins,
            directional: Vec::new(),
            colliders: None,
            self_collision: None,
            count_intersections: false,
            sewing: Sewing::new(),
            contact: ContactSettings::default(),
            pinned: Vec::new(),
            surfaces: Vec::new(),
        };
        w.refresh();
        Ok(w)
    }

    /// Enables cloth-solid contact with `colliders` and these contact settings.
    pub fn with_colliders(mut self, colliders: ColliderSet, contact: ContactSettings) -> Self {
        self.colliders = Some(colliders);
        self.contact = contact;
        self.refresh();
        self
    }

    /// Enables cloth-cloth contact by penalty springs (Baraff & Witkin 1998, Section 6). When
    /// `count_intersections` is set, every frame's statistics count intersecting pairs of
    /// non-adjacent triangles.
    pub fn with_self_collision(mut self, mut sc: SelfCollision, count_intersections: bool) -> Self {
        let pairs: Vec<[usize; 2]> = self.sewing.pairs().collect();
        if !pairs.is_empty() {
            sc.set_welded(&pairs);
        }
        self.self_collision = Some(sc);
        self.count_intersections = count_intersections;
        self
    }

    /// Sews garments: `sewing`'s stitches pull their vertices together (a force term of the
    /// implicit step's assemble stage) and, when self-collision is on, stitched vertices count
    /// as one for its neighbour tests, so a closing seam is not held open by contact.
    pub fn with_sewing(mut self, sewing: Sewing) -> Self {
        let pairs: Vec<[usize; 2]> = sewing.pairs().collect();
        if let Some(sc) = self.self_collision.as_mut() {
            sc.set_welded(&pairs);
        }
        self.sewing = sewing;
        self
    }

    /// Adds a directional constraint (ndof 2 or 1) that holds the vertex's velocity along the
    /// constrained directions at zero.
    pub fn add_directional_constraint(&mut self, c: DirectionalConstraint) -> Result<(), SimError> {
        if c.vertex >= self.cloth.num_vertices() {
            return Err(SimError::Invalid {
                key: "constraint.vertex".into(),
                message: format!("vertex {} is out of range", c.vertex),
            });
        }
        self.directional.push(c);
        Ok(())
    }

    /// Pinned vertex groups (ndof 0, following their motion).
    pub fn pins(&self) -> &[PinGroup] {
        &self.pins
    }

    /// Solid obstacles, if cloth-solid contact is on.
    pub fn colliders(&self) -> Option<&ColliderSet> {
        self.colliders.as_ref()
    }

    /// Solid obstacles, mutably (their pose cache is updated by the steps).
    pub fn colliders_mut(&mut self) -> Option<&mut ColliderSet> {
        self.colliders.as_mut()
    }

    /// Number of cloth vertices.
    pub fn num_vertices(&self) -> usize {
        self.cloth.num_vertices()
    }

    /// With self-collision on, its thickness (m), how many of the cloth's edges are shorter at
    /// rest and how many edges there are, when more than 1% of them are shorter: vertices two
    /// edges apart then lie within the thickness of each other's triangles where the cloth is
    /// flat, and the penalty springs push them apart at rest, so the cloth never comes fully
    /// to rest. `None` otherwise.
    pub fn self_contact_thicker_than_edges(&self) -> Option<(f64, usize, usize)> {
        let thickness = self.self_collision.as_ref()?.thickness();
        let rest = self.cloth.mesh.edge_rest_lengths();
        let short = rest.iter().filter(|&&l| l < thickness).count();
        let total = rest.len();
        (short as f64 > 0.01 * total as f64).then_some((thickness, short, total))
    }

    /// Per vertex: whether a pin group holds it.
    pub fn pinned(&self) -> &[bool] {
        &self.pinned
    }

    pub(crate) fn surfaces(&self) -> &[Surface] {
        &self.surfaces
    }

    /// Inverse masses with pinned vertices at 0 (for position projections).
    pub fn inverse_masses(&self) -> Vec<f64> {
        self.cloth
            .masses
            .iter()
            .zip(&self.pinned)
            .map(|(m, &p)| if p { 0.0 } else { 1.0 / m })
            .collect()
    }

    /// Recomputes derived per-vertex and per-collider data after pins or colliders change.
    pub(crate) fn refresh(&mut self) {
        self.pinned = vec![false; self.cloth.num_vertices()];
        for pin in &self.pins {
            for &i in &pin.vertices {
                self.pinned[i] = true;
            }
        }
        // Triangles held by one rigidly moving pin group are clamped: the shape-operator
        // bending gives the clamp line the whole bending moment (`set_clamped_vertices`).
        // Vertices carried by a deforming body (mesh sequences, attachments) are not.
        let mut group = vec![usize::MAX; self.cloth.num_vertices()];
        for (g, pin) in self.pins.iter().enumerate() {
            if matches!(
                pin.motion,
                Motion::Static | Motion::Keyframes(_) | Motion::Velocity { .. }
            ) {
                for &i in &pin.vertices {
                    group[i] = g;
                }
            }
        }
        let mut clamped = vec![false; group.len()];
        for t in self.cloth.model.triangles() {
            if group[t[0]] != usize::MAX && group[t[0]] == group[t[1]] && group[t[1]] == group[t[2]]
            {
                for &v in t {
                    clamped[v] = true;
                }
            }
        }
        // One flag per vertex by construction, so this cannot fail.
        let _ = self.cloth.model.set_clamped_vertices(&clamped);
        self.surfaces = self
            .colliders
            .iter()
            .flat_map(|set| set.colliders())
            .map(|c| Surface {
                friction: c.friction,
                thickness: c.thickness,
            })
            .collect();
    }
}
