//! Validation of the cloth tables: `[cloth]` or `[[cloth]]` (mesh, material, placement, name,
//! sewing). Keys are named `cloth.key` for a single `[cloth]` table and `cloth[i].key` for
//! `[[cloth]]` tables, as written.

use cloth_forces::{Material, PRESET_NAMES};
use cloth_mesh::{GridPattern, RestShape};

use super::raw::*;
use super::validate::Ctx;
use super::*;
use crate::start::MAX_SPEED;

/// Default `sew_time` of a sewing pattern (s).
const DEFAULT_SEW_TIME: f64 = 0.5;
/// Default target edge length of a sewing pattern's triangles (m).
const DEFAULT_EDGE_LENGTH: f64 = 0.02;

impl Ctx<'_> {
    /// Every cloth, with unique names and one shared air (drag and wind).
    pub(super) fn cloths(&self, raw: RawCloths) -> Result<Vec<ClothSettings>, SceneError> {
        let many = raw.array;
        let mut out: Vec<ClothSettings> = Vec::with_capacity(raw.items.len());
        for (i, c) in raw.items.into_iter().enumerate() {
            let k = if many {
                format!("cloth[{i}]")
            } else {
                "cloth".to_owned()
            };
            let default_name = if many {
                format!("cloth_{i}")
            } else {
                "cloth".to_owned()
            };
            let cloth = self.cloth(&k, c, default_name)?;
            if out.iter().any(|o| o.name == cloth.name) {
                return Err(self.invalid(
                    &format!("{k}.name"),
                    format!("`{}` names another cloth already", cloth.name),
                ));
            }
            if let Some(first) = out.first() {
                if cloth.drag != first.drag {
                    return Err(self.invalid(
                        &format!("{k}.drag"),
                        "must be the same for every cloth (the air is shared)",
                    ));
                }
                if cloth.wind != first.wind {
                    return Err(self.invalid(
                        &format!("{k}.wind"),
                        "must be the same for every cloth (the air is shared)",
                    ));
                }
            }
            out.push(cloth);
        }
        Ok(out)
    }

    fn cloth(
        &self,
        k: &str,
        c: RawCloth,
        default_name: String,
    ) -> Result<ClothSettings, SceneError> {
        let key = |name: &str| format!("{k}.{name}");
        let mut material = self.material(&key("material"), c.material)?;
        // `[cloth]` may also carry the anisotropy keys; they override the material's.
        if let Some(s) = c.stretch_targets {
            material.stretch_targets = [
                self.positive(&key("stretch_targets[0]"), s[0])?,
                self.positive(&key("stretch_targets[1]"), s[1])?,
            ];
        }
        if let Some(s) = c.bend_uv {
            material.bend_uv = [
                self.non_negative(&key("bend_uv[0]"), s[0])?,
                self.non_negative(&key("bend_uv[1]"), s[1])?,
            ];
        }
        let name = c.name.unwrap_or(default_name);
        if name.trim().is_empty() || name.contains(['\n', '\r']) {
            return Err(self.invalid(&key("name"), "must be a non-empty single line"));
        }
        let mesh = self.mesh(&key("mesh"), c.mesh)?;
        let garment = matches!(mesh, MeshSpec::Garmentcode { .. });
        let (sew_time, sew_start, sew_gravity) = if garment {
            let t = self.non_negative(&key("sew_time"), c.sew_time.unwrap_or(DEFAULT_SEW_TIME))?;
            let start = self.non_negative(&key("sew_start"), c.sew_start.unwrap_or(0.0))?;
            let g = self.non_negative(&key("sew_gravity"), c.sew_gravity.unwrap_or(0.0))?;
            if g > 1.0 {
                return Err(self.invalid(&key("sew_gravity"), format!("must be <= 1, got {g}")));
            }
            (Some(t), Some(start), Some(g))
        } else {
            let ctx = "a mesh that is not a sewing pattern (kind = \"garmentcode\")";
            self.unused(&key("sew_time"), &c.sew_time, ctx)?;
            self.unused(&key("sew_start"), &c.sew_start, ctx)?;
            self.unused(&key("sew_gravity"), &c.sew_gravity, ctx)?;
            (None, None, None)
        };
        Ok(ClothSettings {
            name,
            mesh,
            sew_time,
            sew_start,
            sew_gravity,
            position: self.opt_coordinates(&key("position"), c.position)?,
            rotation: self.opt_vec3(&key("rotation"), c.rotation)?,
            material,
            thickness: self.thickness(&key("thickness"), c.thickness.unwrap_or(0.005))?,
            drag: self.non_negative(&key("drag"), c.drag.unwrap_or(0.0))?,
            wind: self.opt_speed(&key("wind"), c.wind, MAX_SPEED, "m/s")?,
            self_collision: c.self_collision.unwrap_or(garment),
            friction: self.non_negative(&key("friction"), c.friction.unwrap_or(0.3))?,
            self_ccd: c.self_ccd.unwrap_or(true),
            velocity: self.opt_speed(&key("velocity"), c.velocity, MAX_SPEED, "m/s")?,
        })
    }

    /// Keys of other mesh kinds are mistakes: refuse them, naming the kind.
    fn mesh_unused_keys(&self, k: &str, m: &RawMesh) -> Result<(), SceneError> {
        let key = |name: &str| format!("{k}.{name}");
        let (kind, used): (&str, &[&str]) = match m.kind {
            MeshKind::Grid => ("grid", &["nx", "ny", "width", "height", "pattern"]),
            MeshKind::Disc => ("disc", &["radius", "resolution"]),
            MeshKind::Obj => (
                "obj",
                &["path", "uv_scale", "rest", "rest_angles", "split_seams"],
            ),
            MeshKind::Garmentcode => ("garmentcode", &["path", "edge_length", "sew_edge_length"]),
        };
        let ctx = format!("kind = \"{kind}\"");
        let given: [(&str, bool); 15] = [
            ("nx", m.nx.is_some()),
            ("ny", m.ny.is_some()),
            ("width", m.width.is_some()),
            ("height", m.height.is_some()),
            ("pattern", m.pattern.is_some()),
            ("radius", m.radius.is_some()),
            ("resolution", m.resolution.is_some()),
            ("path", m.path.is_some()),
            ("uv_scale", m.uv_scale.is_some()),
            ("rest", m.rest.is_some()),
            ("rest_angles", m.rest_angles.is_some()),
            ("split_seams", m.split_seams.is_some()),
            ("edge_length", m.edge_length.is_some()),
            ("sew_edge_length", m.sew_edge_length.is_some()),
            ("kind", false),
        ];
        for (name, present) in given {
            if present && !used.contains(&name) {
                return Err(self.invalid(&key(name), format!("is not used by {ctx}")));
            }
        }
        Ok(())
    }

    fn mesh(&self, k: &str, m: RawMesh) -> Result<MeshSpec, SceneError> {
        let need = |name: &str, v: Option<f64>| -> Result<f64, SceneError> {
            let key = format!("{k}.{name}");
            let v = v.ok_or_else(|| self.invalid(&key, "is required for this mesh kind"))?;
            self.size(&key, v)
        };
        let need_count = |name: &str, v: Option<usize>, min: usize| {
            let key = format!("{k}.{name}");
            let v = v.ok_or_else(|| self.invalid(&key, "is required for this mesh kind"))?;
            self.count(&key, v, min)
        };
        self.mesh_unused_keys(k, &m)?;
        let path = |kind: &str| {
            let key = format!("{k}.path");
            let rel = m
                .path
                .as_deref()
                .ok_or_else(|| self.invalid(&key, format!("is required for kind = \"{kind}\"")))?;
            self.existing_file(&key, rel)
        };
        let spec = match m.kind {
            MeshKind::Grid => MeshSpec::Grid {
                nx: need_count("nx", m.nx, 2)?,
                ny: need_count("ny", m.ny, 2)?,
                width: need("width", m.width)?,
                height: need("height", m.height)?,
                pattern: m.pattern.unwrap_or(GridPattern::Alternating),
            },
            MeshKind::Disc => MeshSpec::Disc {
                radius: need("radius", m.radius)?,
                resolution: need_count("resolution", m.resolution, 1)?,
            },
            MeshKind::Obj => MeshSpec::Obj {
                path: path("obj")?,
                uv_scale: self.scale(&format!("{k}.uv_scale"), m.uv_scale.unwrap_or(1.0))?,
                rest: m.rest.unwrap_or(RestShape::Auto),
                rest_angles: m.rest_angles,
                split_seams: m.split_seams.unwrap_or(false),
            },
            MeshKind::Garmentcode => MeshSpec::Garmentcode {
                path: path("garmentcode")?,
                edge_length: self.size(
                    &format!("{k}.edge_length"),
                    m.edge_length.unwrap_or(DEFAULT_EDGE_LENGTH),
                )?,
                sew_edge_length: m
                    .sew_edge_length
                    .map(|h| self.size(&format!("{k}.sew_edge_length"), h))
                    .transpose()?,
            },
        };
        match spec.vertex_count() {
            Some(n) if n <= MAX_MESH_VERTICES => Ok(spec),
            None if matches!(spec, MeshSpec::Obj { .. } | MeshSpec::Garmentcode { .. }) => Ok(spec),
            n => Err(self.invalid(
                k,
                format!(
                    "has {} vertices, more than the limit {MAX_MESH_VERTICES}",
                    n.map_or("too many".to_owned(), |n| n.to_string())
                ),
            )),
        }
    }

    /// The material at key `k` (`cloth.material` or `cloth[i].material`).
    fn material(&self, k: &str, m: Option<RawMaterial>) -> Result<Material, SceneError> {
        let lookup = |key: &str, name: &str| {
            Material::preset(name).ok_or_else(|| {
                self.invalid(
                    key,
                    format!(
                        "unknown material preset `{name}`, expected one of: {}",
                        PRESET_NAMES.join(", ")
                    ),
                )
            })
        };
        let t = match m {
            None => return lookup(k, "cotton"),
            Some(RawMaterial::Preset(name)) => return lookup(k, &name),
            Some(RawMaterial::Table(t)) => t,
        };
        let key = |name: &str| format!("{k}.{name}");
        let base = match &t.preset {
            Some(name) => Some(lookup(&key("preset"), name)?),
            None => None,
        };
        let pick = |name: &str, v: Option<f64>, from: Option<f64>| -> Result<f64, SceneError> {
            v.or(from).ok_or_else(|| {
                self.invalid(
                    &key(name),
                    "is required when the material table has no `preset`",
                )
            })
        };
        let b = base.as_ref();
        let density = pick("density", t.density, b.map(|m| m.density))?;
        let stretch = match (t.stretch, b) {
            (Some(PairOrScalar(s)), _) => s,
            (None, Some(m)) => m.stretch,
            (None, None) => {
                return Err(self.invalid(
                    &key("stretch"),
                    "is required when the material table has no `preset`",
                ));
            }
        };
        let spec = Material {
            density: self.positive(&key("density"), density)?,
            stretch: [
                self.positive(&key("stretch"), stretch[0])?,
                self.positive(&key("stretch"), stretch[1])?,
            ],
            shear: self.non_negative(&key("shear"), pick("shear", t.shear, b.map(|m| m.shear))?)?,
            bend: self.non_negative(&key("bend"), pick("bend", t.bend, b.map(|m| m.bend))?)?,
            ..self.material_details(k, &t, b)?
        };
        Ok(spec)
    }

    /// The damping and anisotropy keys of a material table at key `k` (defaults from the
    /// preset `b`, if any, else the workspace defaults). Density, stretch, shear and bend are
    /// set by the caller.
    fn material_details(
        &self,
        k: &str,
        t: &RawMaterialTable,
        b: Option<&Material>,
    ) -> Result<Material, SceneError> {
        let d = b.copied().unwrap_or_default();
        let k = |name: &str| format!("{k}.{name}");
        let targets = t.stretch_targets.unwrap_or(d.stretch_targets);
        let bend_uv = t.bend_uv.unwrap_or(d.bend_uv);
        Ok(Material {
            stretch_damping: self.non_negative(
                &k("stretch_damping"),
                t.stretch_damping.unwrap_or(d.stretch_damping),
            )?,
            shear_damping: self.non_negative(
                &k("shear_damping"),
                t.shear_damping.unwrap_or(d.shear_damping),
            )?,
            bend_damping: self
                .non_negative(&k("bend_damping"), t.bend_damping.unwrap_or(d.bend_damping))?,
            stretch_targets: [
                self.positive(&k("stretch_targets[0]"), targets[0])?,
                self.positive(&k("stretch_targets[1]"), targets[1])?,
            ],
            bend_uv: [
                self.non_negative(&k("bend_uv[0]"), bend_uv[0])?,
                self.non_negative(&k("bend_uv[1]"), bend_uv[1])?,
            ],
            bend_model: t.bend_model.unwrap_or(d.bend_model),
            ..d
        })
    }
}
