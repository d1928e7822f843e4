//! The scene file as written: every key optional, unknown keys refused. Validation
//! (defaults, ranges, paths) is the next step, in `validate`.

use std::fmt;

use cloth_forces::{BendModel, Definiteness, PRESET_NAMES};
use cloth_mesh::{GridPattern, RestShape};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{IntegratorKind, RestAngles, SolverChoice};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScene {
    #[serde(default)]
    pub(super) run: RawRun,
    pub(super) cloth: RawCloths,
    #[serde(default)]
    pub(super) pin: Vec<RawPin>,
    #[serde(default)]
    pub(super) collider: Vec<RawCollider>,
    #[serde(default)]
    pub(super) solver: RawSolver,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRun {
    pub(super) fps: Option<f64>,
    pub(super) frames: Option<usize>,
    #[serde(default, deserialize_with = "opt_exact")]
    pub(super) gravity: Option<[f64; 3]>,
    pub(super) preroll: Option<f64>,
    pub(super) count_intersections: Option<bool>,
    pub(super) max_hours: Option<f64>,
    pub(super) max_memory_gb: Option<f64>,
}

/// `[cloth]` (one table) or `[[cloth]]` (an array of tables); `array` records which, so that
/// errors name `cloth.key` or `cloth[i].key` as written.
pub(super) struct RawCloths {
    pub(super) items: Vec<RawCloth>,
    pub(super) array: bool,
}

impl<'de> Deserialize<'de> for RawCloths {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawCloths;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a [cloth] table or [[cloth]] tables")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawCloths, A::Error> {
                let one = RawCloth::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(RawCloths {
                    items: vec![one],
                    array: false,
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<RawCloths, A::Error> {
                let items =
                    Vec::<RawCloth>::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
                if items.is_empty() {
                    return Err(de::Error::invalid_length(0, &"at least one cloth"));
                }
                Ok(RawCloths { items, array: true })
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCloth {
    pub(super) name: Option<String>,
    pub(super) mesh: RawMesh,
    pub(super) sew_time: Option<f64>,
    pub(super) sew_start: Option<f64>,
    pub(super) sew_gravity: Option<f64>,
    #[serde(default, deserialize_with = "opt_exact")]
    pub(super) position: Option<[f64; 3]>,
    #[serde(default, deserialize_with = "opt_exact")]
    pub(super) rotation: Option<[f64; 3]>,
    pub(super) material: Option<RawMaterial>,
    pub(super) thickness: Option<f64>,
    pub(super) drag: Option<f64>,
    #[serde(default, deserialize_with = "opt_exact")]
    pub(super) wind: Option<[f64; 3]>,
    pub(super) self_collision: Option<bool>,
    pub(super) friction: Option<f64>,
    pub(super) self_ccd: Option<bool>,
    #[serde(default, deserialize_with = "opt_exact")]
    pub(super) velocity: Option<[f64; 3]>,
    #[serde(default, deserialize_with = "opt_exact")]
    pub(super) stretch_targets: Option<[f64; 2]>,
    #[serde(default, deserialize_with = "opt_exact")]
    pub(super) bend_uv: Option<[f64; 2]>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(super) enum MeshKind {
    Grid,
    Disc,
    Obj,
    Garmentcode,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMesh {
    pub(super) kind: MeshKind,
    pub(super) nx: Option<usize>,
    pub(super) ny: Option<usize>,
    pub(super) width: Option<f64>,
    pub(super) height: Option<f64>,
    pub(super) pattern: Option<GridPattern>,
    pub(super) radius: Option<f64>,
    pub(super) resolution: Option<usize>,
    pub(super) path: Option<String>,
    pub(super) uv_scale: Option<f64>,
    pub(super) rest: Option<RestShape>,
    pub(super) rest_angles: Option<RestAngles>,
    pub(super) split_seams: Option<bool>,
    pub(super) edge_length: Option<f64>,
    pub(super) sew_edge_length: Option<f64>,
}

pub(super) enum RawMaterial {
    Preset(String),
    Table(RawMaterialTable),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMaterialTable {
    pub(super) preset: Option<String>,
    pub(super) density: Option<f64>,
    pub(super) stretch: Option<PairOrScalar>,
    pub(super) shear: Option<f64>,
    pub(super) bend: Option<f64>,
    pub(super) stretch_damping: Option<f64>,
    pub(super) shear_damping: Option<f64>,
    pub(super) bend_damping: Option<f64>,
    #[serde(default, deserialize_with = "opt_exact")]
    pub(super) stretch_targets: Option<[f64; 2]>,
    #[serde(default, deserialize_with = "opt_exact")]
    pub(super) bend_uv: Option<[f64; 2]>,
    pub(super) bend_model: Option<BendModel>,
}

impl<'de> Deserialize<'de> for RawMaterial {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawMaterial;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(
                    f,
                    "a preset name ({}) or a material table",
                    PRESET_NAMES.join(", ")
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawMaterial, E> {
                Ok(RawMaterial::Preset(v.to_owned()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawMaterial, A::Error> {
                RawMaterialTable::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawMaterial::Table)
            }
        }
        d.deserialize_any(V)
    }
}

/// A number `k` (meaning `[k, k]`) or a pair `[k_u, k_v]`.
#[derive(Clone, Copy)]
pub(super) struct PairOrScalar(pub(super) [f64; 2]);

impl<'de> Deserialize<'de> for PairOrScalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PairOrScalar;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or an array [u, v] of two numbers")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<PairOrScalar, E> {
                Ok(PairOrScalar([v, v]))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<PairOrScalar, E> {
                self.visit_f64(v as f64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<PairOrScalar, E> {
                self.visit_f64(v as f64)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PairOrScalar, A::Error> {
                let u: f64 = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let v: f64 = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(1, &self))?;
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::invalid_length(3, &self));
                }
                Ok(PairOrScalar([u, v]))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRegion {
    #[serde(deserialize_with = "exact")]
    pub(super) min: [f64; 3],
    #[serde(deserialize_with = "exact")]
    pub(super) max: [f64; 3],
}

/// One keyframe of a pin group or a collider (see [`cloth_collide::Keyframe`]), its arrays of exactly three
/// numbers.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawKeyframe {
    pub(super) t: f64,
    #[serde(default, deserialize_with = "exact")]
    pub(super) translation: [f64; 3],
    #[serde(default, deserialize_with = "exact")]
    pub(super) rotation: [f64; 3],
}

/// An array of exactly `N` numbers; a longer or a shorter one is an error that names the key
/// (serde's own fixed-size arrays stop reading after `N` and drop the rest unseen).
fn exact<'de, D: Deserializer<'de>, const N: usize>(d: D) -> Result<[f64; N], D::Error> {
    struct V<const N: usize>;
    impl<'de, const N: usize> Visitor<'de> for V<N> {
        type Value = [f64; N];
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "an array of {N} numbers")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<[f64; N], A::Error> {
            let mut out = [0.0; N];
            for (i, slot) in out.iter_mut().enumerate() {
                *slot = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(i, &self))?;
            }
            let mut n = N;
            while seq.next_element::<de::IgnoredAny>()?.is_some() {
                n += 1;
            }
            if n != N {
                return Err(de::Error::invalid_length(n, &self));
            }
            Ok(out)
        }
    }
    d.deserialize_seq(V::<N>)
}

/// [`exact`] for an optional key.
fn opt_exact<'de, D: Deserializer<'de>, const N: usize>(
    d: D,
) -> Result<Option<[f64; N]>, D::Error> {
    exact(d).map(Some)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPin {
    pub(super) name: Option<String>,
    pub(super) cloth: Option<String>,
    pub(super) vertices: Option<Vec<usize>>,
    pub(super) region: Option<RawRegion>,
    pub(super) keyframes: Option<Vec<RawKeyframe>>,
    pub(super) attach: Option<String>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(super) enum ShapeKind {
    Sphere,
    Cylinder,
    Capsule,
    Box,
    Plane,
    Obj,
    Gltf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCollider {
    pub(super) name: Option<String>,
    pub(super) shape: ShapeKind,
    pub(super) radius: Option<f64>,
    pub(super) length: Option<f64>,
    #[serde(default, deserialize_with = "opt_exact")]
    pub(super) size: Option<[f64; 3]>,
    pub(super) path: Option<String>,
    pub(super) frames: Option<String>,
    pub(super) frame_start: Option<usize>,
    pub(super) animation: Option<String>,
    pub(super) scale: Option<f64>,
    pub(super) time_offset: Option<f64>,
    #[serde(rename = "loop")]
    pub(super) looping: Option<bool>,
    #[serde(default, deserialize_with = "opt_exact")]
    pub(super) position: Option<[f64; 3]>,
    #[serde(default, deserialize_with = "opt_exact")]
    pub(super) rotation: Option<[f64; 3]>,
    pub(super) friction: Option<f64>,
    pub(super) thickness: Option<f64>,
    pub(super) keyframes: Option<Vec<RawKeyframe>>,
    #[serde(default, deserialize_with = "opt_exact")]
    pub(super) velocity: Option<[f64; 3]>,
    #[serde(default, deserialize_with = "opt_exact")]
    pub(super) angular_velocity: Option<[f64; 3]>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSolver {
    pub(super) integrator: Option<IntegratorKind>,
    pub(super) h_max: Option<f64>,
    pub(super) h_min: Option<f64>,
    pub(super) cg_tolerance: Option<f64>,
    pub(super) cg_max_iterations: Option<usize>,
    pub(super) preconditioner: Option<SolverChoice>,
    pub(super) definiteness: Option<Definiteness>,
    pub(super) stretch_threshold: Option<f64>,
    #[serde(default, deserialize_with = "opt_exact")]
    pub(super) strain_limit: Option<[f64; 2]>,
    pub(super) strain_iterations: Option<usize>,
    pub(super) strain_tolerance: Option<f64>,
    pub(super) strain_relaxation: Option<f64>,
    pub(super) strain_long_range: Option<crate::explicit::LongRange>,
    pub(super) strain_global_after: Option<usize>,
    pub(super) grow_after: Option<usize>,
    pub(super) step_control: Option<crate::implicit::StepControl>,
    pub(super) newton_corrections: Option<usize>,
    pub(super) coulomb_rounds: Option<usize>,
    pub(super) correction_tolerance: Option<f64>,
    pub(super) verlet_h: Option<f64>,
    pub(super) spring_stiffness: Option<f64>,
    pub(super) bend_spring_stiffness: Option<f64>,
    pub(super) verlet_damping: Option<f64>,
}
