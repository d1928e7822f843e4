//! The cloth being simulated: mesh, force model, masses and external forces; several cloths
//! are one system whose mesh has a component per cloth ([`ClothPart`]).

use std::ops::Range;

use cloth_forces::{ClothModel, External};
use cloth_mesh::{ClothMesh, GarmentSummary, RestMap, RestShape, Vec3, count_boundary_loops};
use nalgebra::Matrix3;

/// Force terms outside the cloth's force model (contact springs between layers, garment
/// stitches): `forces` per vertex (N) and Jacobian blocks `(i, j, df_i/dx_j, df_i/dv_j)` with
/// `i <= j` in `blocks`, which may couple vertices the mesh does not.
#[derive(Clone, Debug, Default)]
pub struct ExtraTerms {
    /// Force per vertex (N).
    pub forces: Vec<Vec3>,
    /// Jacobian blocks `(i, j, df_i/dx_j, df_i/dv_j)`, `i <= j`.
    pub blocks: Vec<(usize, usize, Matrix3<f64>, Matrix3<f64>)>,
}

/// One cloth of a [`ClothSystem`]: a named, contiguous range of its vertices and triangles.
/// Several cloths are simulated as one particle system (so they touch each other as a cloth
/// touches itself); parts say which vertices and triangles belong to which cloth, for output
/// (one OBJ group and one USD prim per part) and reports.
#[derive(Clone, Debug, PartialEq)]
pub struct ClothPart {
    /// Name (the scene's `cloth.name`).
    pub name: String,
    /// Its vertices in the system.
    pub vertices: Range<usize>,
    /// Its triangles in the system's mesh.
    pub triangles: Range<usize>,
    /// For an OBJ mesh, the rest shape it was read with (`Uv` or `Mesh`).
    pub rest: Option<RestShape>,
    /// For a sewing pattern, its panels, stitches and openings.
    pub garment: Option<GarmentSummary>,
}

/// How a cloth's rest shape was given, as the reports name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestSource {
    /// An OBJ's texture coordinates.
    Uv,
    /// An OBJ's triangles as modelled.
    Mesh,
    /// A sewing pattern's flat panels.
    Pattern,
    /// A built-in mesh builder's flat layout.
    Builder,
}

impl RestSource {
    /// Short name: `uv`, `mesh`, `pattern` or `builder`.
    pub fn name(self) -> &'static str {
        match self {
            RestSource::Uv => "uv",
            RestSource::Mesh => "mesh",
            RestSource::Pattern => "pattern",
            RestSource::Builder => "builder",
        }
    }

    /// The name with what it means, for a report line.
    pub fn describe(self) -> &'static str {
        match self {
            RestSource::Uv => "uv (texture coordinates)",
            RestSource::Mesh => "mesh (each triangle as modelled)",
            RestSource::Pattern => "pattern (panels flat)",
            RestSource::Builder => "builder (flat)",
        }
    }
}

/// The topology of one cloth of a system, as `cloth check` and the Python package report it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartTopology {
    /// Where its rest shape comes from.
    pub rest: RestSource,
    /// Boundary loops of its mesh (a disc has 1; each separate panel adds one).
    pub boundary_loops: usize,
    /// For a `uv` rest shape: interior edges whose two triangles give them different rest
    /// coordinates (UV seams, which the simulation keeps closed).
    pub uv_seams: Option<usize>,
    /// Stitched pairs within this cloth.
    pub stitches: usize,
    /// For a sewing pattern: boundary loops once its stitches close (the garment's openings).
    pub sewn_boundary_loops: Option<usize>,
}

/// The cloth: its mesh, internal force model (which holds the lumped masses) and external
/// forces (gravity, drag, wind, user springs; see [`cloth_forces::External`]).
pub struct ClothSystem {
    /// Topology and rest shape.
    pub mesh: ClothMesh,
    /// Internal forces (stretch, shear, bend, damping) and lumped masses.
    pub model: ClothModel,
    /// Lumped vertex masses (kg), a copy of the model's.
    pub masses: Vec<f64>,
    /// Positions at t = 0 (m).
    pub x0: Vec<Vec3>,
    /// Gravity, drag, wind and user springs.
    pub external: External,
    /// The cloths, in order, covering every vertex and triangle (one part named `cloth` unless
    /// set with [`ClothSystem::with_parts`]).
    pub parts: Vec<ClothPart>,
}

impl ClothSystem {
    /// Builds the system from a mesh (whose positions are the initial state), a force model
    /// built from the same mesh, and external forces.
    pub fn new(
        mesh: ClothMesh,
        model: ClothModel,
        external: External,
    ) -> Result<Self, crate::error::SimError> {
        if model.num_vertices() != mesh.num_vertices() {
            return Err(crate::error::SimError::Invalid {
                key: "cloth".into(),
                message: format!(
                    "force model has {} vertices but the mesh has {}",
                    model.num_vertices(),
                    mesh.num_vertices()
                ),
            });
        }
        external.validate(mesh.num_vertices())?;
        let masses = model.masses().to_vec();
        let x0 = mesh.positions().to_vec();
        let parts = vec![ClothPart {
            name: "cloth".into(),
            vertices: 0..mesh.num_vertices(),
            triangles: 0..mesh.num_triangles(),
            rest: None,
            garment: None,
        }];
        Ok(Self {
            mesh,
            model,
            masses,
            x0,
            external,
            parts,
        })
    }

    /// Names the cloths of the system: `parts` must cover the vertices and the triangles in
    /// order, each part's triangles using only its own vertices.
    pub fn with_parts(mut self, parts: Vec<ClothPart>) -> Result<Self, crate::error::SimError> {
        let bad = |message: String| {
            Err(crate::error::SimError::Invalid {
                key: "cloth".into(),
                message,
            })
        };
        let (mut v, mut t) = (0, 0);
        for p in &parts {
            if p.vertices.start != v || p.triangles.start != t || p.vertices.is_empty() {
                return bad(format!("part `{}` does not follow the one before", p.name));
            }
            let tris = self.mesh.triangles().get(p.triangles.clone());
            if !tris.is_some_and(|ts| ts.iter().flatten().all(|i| p.vertices.contains(i))) {
                return bad(format!(
                    "part `{}` has triangles outside its vertices",
                    p.name
                ));
            }
            (v, t) = (p.vertices.end, p.triangles.end);
        }
        if v != self.mesh.num_vertices() || t != self.mesh.num_triangles() {
            return bad("the parts do not cover the mesh".into());
        }
        self.parts = parts;
        Ok(self)
    }

    /// The OBJ groups of the parts: `(name, first triangle)` per cloth, for
    /// [`cloth_mesh::write_obj_grouped`].
    pub fn obj_groups(&self) -> Vec<(String, usize)> {
        self.parts
            .iter()
            .map(|p| (p.name.clone(), p.triangles.start))
            .collect()
    }

    /// The topology of `part` (one of [`ClothSystem::parts`]) with the system's stitched
    /// vertex pairs `stitches`.
    pub fn part_topology(&self, part: &ClothPart, stitches: &[[usize; 2]]) -> PartTopology {
        let rest = match part.rest {
            Some(RestShape::Uv) => RestSource::Uv,
            Some(RestShape::Mesh) => RestSource::Mesh,
            _ if part.garment.is_some() => RestSource::Pattern,
            _ => RestSource::Builder,
        };
        let tris = &self.mesh.triangles()[part.triangles.clone()];
        let base = part.vertices.start;
        let local: Vec<[usize; 3]> = tris.iter().map(|t| t.map(|v| v - base)).collect();
        let own: Vec<[usize; 2]> = stitches
            .iter()
            .filter(|s| part.vertices.contains(&s[0]))
            .map(|s| s.map(|v| v - base))
            .collect();
        let n = part.vertices.len();
        let uv_seams = (rest == RestSource::Uv).then(|| {
            (self.mesh.edges().iter())
                .filter(|e| !e.is_boundary() && part.triangles.contains(&e.tris[0]))
                .filter(|e| self.mesh.rest_map(e.tris[0], e.tris[1]) != Some(RestMap::Identity))
                .count()
        });
        PartTopology {
            rest,
            boundary_loops: count_boundary_loops(n, &local, &[]),
            uv_seams,
            stitches: own.len(),
            sewn_boundary_loops: (part.garment.is_some())
                .then(|| count_boundary_loops(n, &local, &own)),
        }
    }

    /// Number of cloth vertices.
    pub fn num_vertices(&self) -> usize {
        self.masses.len()
    }

    /// Kinetic energy (J) of velocities v.
    pub fn kinetic_energy(&self, v: &[Vec3]) -> f64 {
        0.5 * v
            .iter()
            .zip(&self.masses)
            .map(|(v, m)| m * v.norm_squared())
            .sum::<f64>()
    }
}
