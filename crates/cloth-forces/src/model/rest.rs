//! Rest-data builders of a [`super::ClothModel`]: the checks of its materials, the hinges'
//! stiffnesses, the shape-operator stencils and curvature maps, and the midedge split system.

use std::sync::Arc;

use cloth_mesh::ClothMesh;

use crate::bend::HingeRest;
use crate::shape::{ShapeRest, flap_matrix, midedge_map};
use crate::split::EdgeSplit;
use crate::triangle::TriangleRest;
use crate::{ForceError, Material};

/// Rest data of the bend elements (hinges, and shape-operator elements when that model is on).
pub(super) struct BendRest {
    pub(super) hinges: Vec<[usize; 4]>,
    pub(super) hinge_rest: Vec<HingeRest>,
    pub(super) shape_stencils: Vec<[usize; 6]>,
    pub(super) shape_rest: Vec<ShapeRest>,
    pub(super) shape_hinges: Vec<[usize; 3]>,
}

/// The bend rest data a split system is built from.
#[derive(Clone, Copy)]
pub(super) struct BendRef<'a> {
    pub(super) hinges: &'a [[usize; 4]],
    pub(super) shape_stencils: &'a [[usize; 6]],
    pub(super) shape_rest: &'a [ShapeRest],
    pub(super) shape_hinges: &'a [[usize; 3]],
}

/// The midedge split system of the shape-operator elements in `bend` (`rigid` triangles held
/// flat; empty: none).
pub(super) fn make_split(
    bend: BendRef<'_>,
    materials: &[Material],
    material_of_triangle: &[usize],
    rigid: &[bool],
) -> Option<Arc<EdgeSplit>> {
    let signs: Vec<[f64; 3]> = (bend.shape_hinges.iter().zip(bend.shape_stencils))
        .map(|(hs, st)| {
            std::array::from_fn(|i| {
                let h = hs[i];
                if h != usize::MAX && bend.hinges[h][2] != st[i] {
                    -1.0
                } else {
                    1.0
                }
            })
        })
        .collect();
    let d: Vec<f64> = material_of_triangle
        .iter()
        .map(|&m| materials[m].bend)
        .collect();
    EdgeSplit::new(
        bend.hinges.len(),
        bend.shape_rest,
        bend.shape_hinges,
        &signs,
        &d,
        rigid,
    )
}

/// Checks the materials and the triangle-to-material map of [`ClothModel::with_materials`].
pub(super) fn check_materials(
    mesh: &ClothMesh,
    materials: &[Material],
    material_of_triangle: &[usize],
) -> Result<(), ForceError> {
    let Some(first) = materials.first() else {
        return Err(ForceError::LengthMismatch {
            what: "materials",
            expected: 1,
            got: 0,
        });
    };
    for m in materials {
        m.validate()?;
        if m.bend_model != first.bend_model {
            return Err(ForceError::InvalidMaterial {
                field: "bend_model",
                value: f64::NAN,
                reason: "must be the same for every material of one model",
            });
        }
    }
    if material_of_triangle.len() != mesh.num_triangles() {
        return Err(ForceError::LengthMismatch {
            what: "material of triangle",
            expected: mesh.num_triangles(),
            got: material_of_triangle.len(),
        });
    }
    if let Some(t) = material_of_triangle
        .iter()
        .position(|&m| m >= materials.len())
    {
        return Err(ForceError::MaterialIndex {
            triangle: t,
            index: material_of_triangle[t],
            count: materials.len(),
        });
    }
    Ok(())
}

/// Hinge stencils and rest data: `k_e = D |e|^2 / (A1 + A2) * w` with `|e|^2` and the
/// `bend_uv` weight `w = (m_u du^2 + m_v dv^2) / |e|^2` the means over the hinge's two
/// triangles, each in its own rest frame (equal when the frames agree); flat rest angles.
pub(super) fn hinge_rests(
    mesh: &ClothMesh,
    tri_rest: &[TriangleRest],
    materials: &[Material],
    hinge_material: &[usize],
) -> Result<(Vec<[usize; 4]>, Vec<HingeRest>), ForceError> {
    let tris = mesh.triangles();
    let mut hinges = Vec::with_capacity(mesh.hinges().len());
    let mut hinge_rest = Vec::with_capacity(mesh.hinges().len());
    for (h, hg) in mesh.hinges().iter().enumerate() {
        let material = &materials[hinge_material[h]];
        let edge = |t: usize| {
            let c = mesh.triangle_rest(t);
            let k = |v: usize| tris[t].iter().position(|&x| x == v).unwrap_or(0);
            c[k(hg.v[1])] - c[k(hg.v[0])]
        };
        let (d0, d1) = (edge(hg.tris[0]), edge(hg.tris[1]));
        let le2 = 0.5 * (d0.norm_squared() + d1.norm_squared());
        let a = tri_rest[hg.tris[0]].area + tri_rest[hg.tris[1]].area;
        if !(le2 > 0.0 && a > 0.0 && le2.is_finite()) {
            return Err(ForceError::DegenerateHinge {
                hinge: h,
                vertices: hg.v,
            });
        }
        let weight = |d: cloth_mesh::Vec2| {
            (material.bend_uv[0] * d.x * d.x + material.bend_uv[1] * d.y * d.y) / d.norm_squared()
        };
        let w = 0.5 * (weight(d0) + weight(d1));
        hinges.push(hg.v);
        hinge_rest.push(HingeRest {
            stiffness: material.bend * le2 / a * w,
            rest_angle: 0.0,
            rest_edge_sq: le2,
        });
    }
    Ok((hinges, hinge_rest))
}

/// Shape-operator stencils and rest data (see the `shape` module): per triangle its corners
/// and the flaps unfolded into its rest frame, curvature maps made conservative across every
/// hinge (in a common frame: the second triangle's column is rotated by the tensor rotation
/// between the two rest frames when they differ).
pub(super) fn shape_rests(
    mesh: &ClothMesh,
    materials: &[Material],
    material_of_triangle: &[usize],
    bend: &mut BendRest,
) -> Result<(), ForceError> {
    let tris = mesh.triangles();
    let nt = tris.len();
    bend.shape_stencils = tris
        .iter()
        .map(|t| [t[0], t[1], t[2], t[0], t[1], t[2]])
        .collect();
    bend.shape_hinges = vec![[usize::MAX; 3]; nt];
    for (h, hg) in mesh.hinges().iter().enumerate() {
        // Triangle tris[0] winds (v0, v1, v2): its edge opposite v2 has flap v3;
        // tris[1] winds (v1, v0, v3): its edge opposite v3 has flap v2.
        for (t, opp, flap) in [
            (hg.tris[0], hg.v[2], hg.v[3]),
            (hg.tris[1], hg.v[3], hg.v[2]),
        ] {
            let i = tris[t].iter().position(|&x| x == opp).unwrap_or(0);
            bend.shape_stencils[t][3 + i] = flap;
            bend.shape_hinges[t][i] = h;
        }
    }
    let gather = |t: usize| {
        let p = mesh.triangle_rest(t);
        let q: [Option<_>; 3] = std::array::from_fn(|i| mesh.flap_rest(t, i).map(|(_, q)| q));
        (p, q)
    };
    // Curvature maps: the midedge-average columns `|e_i|/(2A) t_i t_i^T` (conservative); the
    // split of each angle between its two triangles is minimised out per evaluation (the
    // `split` module). A free edge's unobservable curvature is the one normal to it (its
    // column), minimised out of the triangle in `ShapeRest::from_map`. The flap matrix is
    // only checked: a flap on its edge's line (or beyond) is a degenerate stencil.
    let mut kmaps = Vec::with_capacity(nt);
    for (t, st) in bend.shape_stencils.iter().enumerate() {
        let (p, q) = gather(t);
        flap_matrix(p, q).ok_or(ForceError::DegenerateBendStencil {
            triangle: t,
            vertices: *st,
        })?;
        kmaps.push(midedge_map(p));
    }
    let bnd: Vec<[bool; 3]> = bend
        .shape_hinges
        .iter()
        .map(|h| h.map(|x| x == usize::MAX))
        .collect();
    bend.shape_rest.reserve(nt);
    for (t, st) in bend.shape_stencils.iter().enumerate() {
        let (p, q) = gather(t);
        let flaps = bnd[t].map(|b| !b);
        let bend_uv = materials[material_of_triangle[t]].bend_uv;
        let r = ShapeRest::from_map(p, q, flaps, &kmaps[t], bend_uv).ok_or(
            ForceError::DegenerateBendStencil {
                triangle: t,
                vertices: *st,
            },
        )?;
        bend.shape_rest.push(r);
    }
    Ok(())
}
