//! The skinned, animated mannequin as binary glTF 2.0: skeleton, linear-blend-skinning weights,
//! inverse bind matrices and three clips (issue 13), written with `gltf-json`.
//!
//! * Skeleton: 19 joints (hips root; spine, chest, neck, head; shoulder, upper arm, forearm and
//!   hand per side; thigh, shin and foot per side). The bind pose has no joint rotation: each
//!   joint's node is translated by its offset from its parent, and its inverse bind matrix is
//!   the translation by minus its world position (glTF 2.0 section 3.7.3.1), so in the bind
//!   pose every joint matrix is exactly the identity.
//! * Weights: each body primitive belongs to one joint; a vertex's weight for a joint is
//!   exp(-(d_j - d_min) / SIGMA), d_j the signed distance from the vertex to that joint's
//!   primitives, keeping the 4 largest above 1% and normalising them (stored as normalised
//!   unsigned bytes that sum to exactly 255).
//! * Clips, sampled at 25 Hz as LINEAR quaternion channels (and the hips' translation where it
//!   moves): `twist`, `walk`, `dance` (see [`clip_summary`]). Every clip ends where it starts,
//!   so it loops without a jump.

use std::collections::BTreeMap;
use std::f64::consts::{PI, TAU};

use cloth_mesh::nalgebra::{Unit, UnitQuaternion};
use gltf_json as json;
use json::validation::{Checked::Valid, USize64};

use crate::body::{self, Joint, V3};
use crate::model::Mannequin;

/// Width of the skinning weight falloff (m).
const SIGMA: f64 = 0.015;
/// Keyframe rate of the clips (Hz).
const RATE: f64 = 25.0;

/// A clip: name, duration (s), description.
const CLIPS: [(&str, f64, &str); 3] = [
    (
        "twist",
        2.0,
        "torso twists about the vertical axis, 55 degrees each way at the shoulders (spine 25, \
         chest 30), head counter-turning 15, hips and legs still (the paper's Figure 3)",
    ),
    (
        "walk",
        1.2,
        "walk cycle in place: thighs swing +-25 degrees, knees flex up to 55 in swing, feet \
         kept level, arms swing +-18 opposite the legs, hips bob down so the stance foot stays \
         on the floor (Figure 4)",
    ),
    (
        "dance",
        4.0,
        "arms rise to 65 degrees above horizontal, the whole body turns a full 360 degrees about \
         the vertical with two knee dips and a chest sway, then the arms come down (Figures 5-6)",
    ),
];

/// One line per clip for the task's report.
pub fn clip_summary() -> Vec<String> {
    CLIPS
        .iter()
        .map(|(n, d, text)| format!("clip {n} ({d} s, {} keys): {text}", keys(*d)))
        .collect()
}

fn keys(duration: f64) -> usize {
    (duration * RATE).round() as usize + 1
}

fn rot(axis: V3, deg: f64) -> UnitQuaternion<f64> {
    UnitQuaternion::from_axis_angle(&Unit::new_normalize(axis), deg.to_radians())
}

/// Cubic ease from 0 to 1 over [a, b] (0 before, 1 after).
fn ease(t: f64, a: f64, b: f64) -> f64 {
    let s = ((t - a) / (b - a)).clamp(0.0, 1.0);
    s * s * (3.0 - 2.0 * s)
}

/// Local joint rotations and the hips' translation offset (m) of clip `name` at time t (s).
fn clip_pose(name: &str, t: f64, joints: &[Joint]) -> (Vec<UnitQuaternion<f64>>, V3) {
    let j = |n: &str| body::joint_index(joints, n);
    let mut q = vec![UnitQuaternion::identity(); joints.len()];
    let mut hips = V3::zeros();
    let y = V3::y();
    // Forward flexion axis of an arm segment on `side`: d x z moves the arm towards +z.
    let arm_axis = |side: f64| body::arm_dir(side).cross(&V3::z());
    match name {
        "twist" => {
            let a = (TAU * t / 2.0).sin();
            q[j("spine")] = rot(y, 25.0 * a);
            q[j("chest")] = rot(y, 30.0 * a);
            q[j("neck")] = rot(y, -15.0 * a);
        }
        "walk" => {
            let phi = TAU * t / 1.2;
            let (s, c) = phi.sin_cos();
            for (side, tag, sign) in [(1.0, "l", 1.0), (-1.0, "r", -1.0)] {
                let fwd = 25.0 * sign * s; // thigh forward angle (deg)
                let knee = 55.0 * (sign * c).max(0.0) + 5.0; // flexion in swing
                q[j(&format!("thigh_{tag}"))] = rot(V3::x(), -fwd);
                q[j(&format!("shin_{tag}"))] = rot(V3::x(), knee);
                q[j(&format!("foot_{tag}"))] = rot(V3::x(), fwd - knee);
                let arm = -18.0 * sign * s;
                q[j(&format!("upper_arm_{tag}"))] = rot(arm_axis(side), arm);
                q[j(&format!("forearm_{tag}"))] =
                    rot(arm_axis(side), 15.0 + 10.0 * arm.max(0.0) / 18.0);
            }
            q[j("chest")] = rot(y, 6.0 * s);
            q[j("spine")] = rot(y, -3.0 * s);
            hips.y = floor_offset(&q, joints);
        }
        "dance" => {
            let up = ease(t, 0.0, 0.8) - ease(t, 3.2, 4.0);
            let turn = 360.0 * ease(t, 0.8, 3.2);
            let dip = 0.5 - 0.5 * (TAU * t / 2.0).cos(); // 0 at 0, 2 and 4 s
            let knee = 30.0 * dip;
            for (side, tag) in [(1.0, "l"), (-1.0, "r")] {
                q[j(&format!("upper_arm_{tag}"))] = rot(V3::z() * side, 110.0 * up);
                q[j(&format!("forearm_{tag}"))] = rot(arm_axis(side), 25.0 * up);
                q[j(&format!("hand_{tag}"))] = rot(arm_axis(side), 15.0 * up);
                q[j(&format!("thigh_{tag}"))] = rot(V3::x(), -knee);
                q[j(&format!("shin_{tag}"))] = rot(V3::x(), 2.0 * knee);
                q[j(&format!("foot_{tag}"))] = rot(V3::x(), -knee);
            }
            q[j("hips")] = rot(y, turn);
            q[j("chest")] = rot(V3::z(), 8.0 * (PI * t).sin());
            q[j("head")] = rot(V3::x(), -10.0 * up);
            hips.y = floor_offset(&q, joints);
        }
        _ => {}
    }
    (q, hips)
}

/// Vertical offset (m) of the hips that puts the lower ankle at its bind height: with level
/// feet, the lower foot then stands on the floor.
fn floor_offset(q: &[UnitQuaternion<f64>], joints: &[Joint]) -> f64 {
    let j = |n: &str| body::joint_index(joints, n);
    let mut lowest = f64::INFINITY;
    for tag in ["l", "r"] {
        let (h, k, a) = (
            j(&format!("thigh_{tag}")),
            j(&format!("shin_{tag}")),
            j(&format!("foot_{tag}")),
        );
        let (ph, pk, pa) = (joints[h].position, joints[k].position, joints[a].position);
        // Ankle relative to the hip joint, posed (the hips' own rotation is about y and does
        // not change heights).
        let posed = q[h] * ((pk - ph) + q[k] * (pa - pk));
        lowest = lowest.min(posed.y - (pa - ph).y);
    }
    -lowest
}

/// Per vertex, up to 4 (joint, weight in 1/255) pairs summing to 255.
fn skin_weights(man: &Mannequin) -> Vec<[(u8, u8); 4]> {
    let mut parts = Vec::new();
    let mut out = Vec::with_capacity(man.mesh.vertices.len());
    for p in &man.mesh.vertices {
        man.body.part_distances(p, &mut parts);
        let mut per_joint: BTreeMap<usize, f64> = BTreeMap::new();
        for &(jt, d) in &parts {
            let e = per_joint.entry(jt).or_insert(f64::INFINITY);
            *e = e.min(d);
        }
        let dmin = per_joint.values().copied().fold(f64::INFINITY, f64::min);
        let mut w: Vec<(usize, f64)> = per_joint
            .into_iter()
            .map(|(jt, d)| (jt, (-(d - dmin) / SIGMA).exp()))
            .filter(|&(_, w)| w > 0.01)
            .collect();
        w.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        w.truncate(4);
        let sum: f64 = w.iter().map(|x| x.1).sum();
        // Largest-remainder rounding to bytes that sum to exactly 255.
        let scaled: Vec<f64> = w.iter().map(|x| x.1 / sum * 255.0).collect();
        let mut bytes: Vec<u32> = scaled.iter().map(|x| x.floor() as u32).collect();
        let mut order: Vec<usize> = (0..w.len()).collect();
        order.sort_by(|&a, &b| {
            (scaled[b] - scaled[b].floor())
                .total_cmp(&(scaled[a] - scaled[a].floor()))
                .then(a.cmp(&b))
        });
        let mut missing = 255 - bytes.iter().sum::<u32>();
        for &k in order.iter().cycle() {
            if missing == 0 {
                break;
            }
            bytes[k] += 1;
            missing -= 1;
        }
        let mut v = [(0u8, 0u8); 4];
        for (k, (&(jt, _), &b)) in w.iter().zip(&bytes).enumerate() {
            v[k] = (jt as u8, b as u8);
        }
        out.push(v);
    }
    out
}

/// Binary buffer with its views and accessors.
#[derive(Default)]
struct Bin {
    data: Vec<u8>,
    views: Vec<json::buffer::View>,
    accessors: Vec<json::Accessor>,
}

impl Bin {
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        bytes: &[u8],
        count: usize,
        component: json::accessor::ComponentType,
        type_: json::accessor::Type,
        normalized: bool,
        bounds: Option<(Vec<f32>, Vec<f32>)>,
        target: Option<json::buffer::Target>,
    ) -> json::Index<json::Accessor> {
        while !self.data.len().is_multiple_of(4) {
            self.data.push(0);
        }
        let offset = self.data.len();
        self.data.extend_from_slice(bytes);
        self.views.push(json::buffer::View {
            buffer: json::Index::new(0),
            byte_length: USize64::from(bytes.len()),
            byte_offset: Some(USize64::from(offset)),
            byte_stride: None,
            name: None,
            target: target.map(Valid),
            extensions: None,
            extras: Default::default(),
        });
        let (min, max) = match bounds {
            Some((lo, hi)) => (Some(json::Value::from(lo)), Some(json::Value::from(hi))),
            None => (None, None),
        };
        self.accessors.push(json::Accessor {
            buffer_view: Some(json::Index::new(self.views.len() as u32 - 1)),
            byte_offset: None,
            count: USize64::from(count),
            component_type: Valid(json::accessor::GenericComponentType(component)),
            extensions: None,
            extras: Default::default(),
            type_: Valid(type_),
            min,
            max,
            name: None,
            normalized,
            sparse: None,
        });
        json::Index::new(self.accessors.len() as u32 - 1)
    }
}

fn f32_bytes(v: impl IntoIterator<Item = f64>) -> Vec<u8> {
    v.into_iter()
        .flat_map(|x| (x as f32).to_le_bytes())
        .collect()
}

/// The whole .glb file.
pub fn glb_bytes(man: &Mannequin) -> Result<Vec<u8>, String> {
    use json::accessor::{ComponentType as C, Type as T};
    let joints = &man.joints;
    let mesh = &man.mesh;
    let mut bin = Bin::default();

    // Geometry.
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for p in &mesh.vertices {
        for a in 0..3 {
            lo[a] = lo[a].min(p[a] as f32);
            hi[a] = hi[a].max(p[a] as f32);
        }
    }
    let positions = bin.push(
        &f32_bytes(mesh.vertices.iter().flat_map(|p| [p.x, p.y, p.z])),
        mesh.vertices.len(),
        C::F32,
        T::Vec3,
        false,
        Some((lo.to_vec(), hi.to_vec())),
        Some(json::buffer::Target::ArrayBuffer),
    );
    let weights = skin_weights(man);
    let joint_ids = bin.push(
        &weights
            .iter()
            .flat_map(|w| w.map(|x| x.0))
            .collect::<Vec<u8>>(),
        weights.len(),
        C::U8,
        T::Vec4,
        false,
        None,
        Some(json::buffer::Target::ArrayBuffer),
    );
    let joint_weights = bin.push(
        &weights
            .iter()
            .flat_map(|w| w.map(|x| x.1))
            .collect::<Vec<u8>>(),
        weights.len(),
        C::U8,
        T::Vec4,
        true,
        None,
        Some(json::buffer::Target::ArrayBuffer),
    );
    if mesh.vertices.len() > u16::MAX as usize {
        return Err("more than 65535 vertices".into());
    }
    let indices = bin.push(
        &mesh
            .triangles
            .iter()
            .flat_map(|t| t.map(|i| i as u16))
            .flat_map(u16::to_le_bytes)
            .collect::<Vec<u8>>(),
        mesh.triangles.len() * 3,
        C::U16,
        T::Scalar,
        false,
        None,
        Some(json::buffer::Target::ElementArrayBuffer),
    );
    // Inverse bind matrices: translation by minus the joint's bind position (column-major).
    let ibm: Vec<f64> = joints
        .iter()
        .flat_map(|jt| {
            let p = jt.position;
            [
                1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, -p.x, -p.y, -p.z, 1.0,
            ]
        })
        .collect();
    let ibm = bin.push(
        &f32_bytes(ibm),
        joints.len(),
        C::F32,
        T::Mat4,
        false,
        None,
        None,
    );

    // Nodes: the joints (0..19), then the skinned mesh node.
    let mut nodes: Vec<json::Node> = joints
        .iter()
        .map(|jt| {
            let parent = jt.parent.map(|p| joints[p].position).unwrap_or(V3::zeros());
            let d = jt.position - parent;
            json::Node {
                name: Some(jt.name.clone()),
                translation: Some([d.x as f32, d.y as f32, d.z as f32]),
                ..Default::default()
            }
        })
        .collect();
    for (i, jt) in joints.iter().enumerate() {
        if let Some(p) = jt.parent {
            nodes[p]
                .children
                .get_or_insert_with(Vec::new)
                .push(json::Index::new(i as u32));
        }
    }
    let mesh_node = nodes.len() as u32;
    nodes.push(json::Node {
        name: Some("mannequin".into()),
        mesh: Some(json::Index::new(0)),
        skin: Some(json::Index::new(0)),
        ..Default::default()
    });

    // Animations.
    let mut animations = Vec::new();
    for (name, duration, _) in CLIPS {
        let n = keys(duration);
        let times: Vec<f64> = (0..n)
            .map(|k| duration * k as f64 / (n - 1) as f64)
            .collect();
        let samples: Vec<(Vec<UnitQuaternion<f64>>, V3)> =
            times.iter().map(|&t| clip_pose(name, t, joints)).collect();
        let time_acc = bin.push(
            &f32_bytes(times.iter().copied()),
            n,
            C::F32,
            T::Scalar,
            false,
            Some((vec![0.0], vec![duration as f32])),
            None,
        );
        let mut samplers = Vec::new();
        let mut channels = Vec::new();
        let mut channel = |bin: &mut Bin,
                           samplers: &mut Vec<json::animation::Sampler>,
                           node: usize,
                           path: json::animation::Property,
                           values: Vec<f64>,
                           ty: T| {
            let out = bin.push(&f32_bytes(values), n, C::F32, ty, false, None, None);
            samplers.push(json::animation::Sampler {
                extensions: None,
                extras: Default::default(),
                input: time_acc,
                interpolation: Valid(json::animation::Interpolation::Linear),
                output: out,
            });
            channels.push(json::animation::Channel {
                sampler: json::Index::new(samplers.len() as u32 - 1),
                target: json::animation::Target {
                    extensions: None,
                    extras: Default::default(),
                    node: json::Index::new(node as u32),
                    path: Valid(path),
                },
                extensions: None,
                extras: Default::default(),
            });
        };
        for jt in 0..joints.len() {
            if samples.iter().all(|s| s.0[jt].angle() < 1e-12) {
                continue;
            }
            // Keep consecutive quaternions in the same hemisphere.
            let mut prev = UnitQuaternion::identity();
            let mut vals = Vec::with_capacity(4 * n);
            for s in &samples {
                let mut q = s.0[jt];
                if q.coords.dot(&prev.coords) < 0.0 {
                    q = UnitQuaternion::new_unchecked(-q.into_inner());
                }
                prev = q;
                vals.extend([q.i, q.j, q.k, q.w]);
            }
            channel(
                &mut bin,
                &mut samplers,
                jt,
                json::animation::Property::Rotation,
                vals,
                T::Vec4,
            );
        }
        if samples.iter().any(|s| s.1.norm() > 0.0) {
            let root = joints[0].position;
            let vals = samples
                .iter()
                .flat_map(|s| {
                    let p = root + s.1;
                    [p.x, p.y, p.z]
                })
                .collect();
            channel(
                &mut bin,
                &mut samplers,
                0,
                json::animation::Property::Translation,
                vals,
                T::Vec3,
            );
        }
        animations.push(json::Animation {
            extensions: None,
            extras: Default::default(),
            channels,
            name: Some(name.to_string()),
            samplers,
        });
    }

    let mut attributes = BTreeMap::new();
    attributes.insert(Valid(json::mesh::Semantic::Positions), positions);
    attributes.insert(Valid(json::mesh::Semantic::Joints(0)), joint_ids);
    attributes.insert(Valid(json::mesh::Semantic::Weights(0)), joint_weights);
    let root = json::Root {
        asset: json::Asset {
            copyright: None,
            extensions: None,
            extras: Default::default(),
            generator: Some("cloth xtask mannequin".into()),
            min_version: None,
            version: "2.0".into(),
        },
        buffers: vec![json::Buffer {
            byte_length: USize64::from(bin.data.len()),
            name: None,
            uri: None,
            extensions: None,
            extras: Default::default(),
        }],
        buffer_views: std::mem::take(&mut bin.views),
        accessors: std::mem::take(&mut bin.accessors),
        meshes: vec![json::Mesh {
            extensions: None,
            extras: Default::default(),
            name: Some("mannequin".into()),
            primitives: vec![json::mesh::Primitive {
                attributes,
                extensions: None,
                extras: Default::default(),
                indices: Some(indices),
                material: None,
                mode: Valid(json::mesh::Mode::Triangles),
                targets: None,
            }],
            weights: None,
        }],
        skins: vec![json::Skin {
            extensions: None,
            extras: Default::default(),
            inverse_bind_matrices: Some(ibm),
            joints: (0..joints.len() as u32).map(json::Index::new).collect(),
            name: Some("skeleton".into()),
            skeleton: Some(json::Index::new(0)),
        }],
        nodes,
        scenes: vec![json::Scene {
            extensions: None,
            extras: Default::default(),
            name: Some("mannequin".into()),
            nodes: vec![json::Index::new(0), json::Index::new(mesh_node)],
        }],
        scene: Some(json::Index::new(0)),
        animations,
        ..Default::default()
    };
    let text = root.to_vec().map_err(|e| format!("glTF JSON: {e}"))?;
    // GLB container (glTF 2.0 section 4): header, JSON chunk padded with spaces, BIN chunk
    // padded with zeros.
    let mut json_chunk = text;
    while !json_chunk.len().is_multiple_of(4) {
        json_chunk.push(b' ');
    }
    let mut bin_chunk = bin.data;
    while !bin_chunk.len().is_multiple_of(4) {
        bin_chunk.push(0);
    }
    let total = 12 + 8 + json_chunk.len() + 8 + bin_chunk.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json_chunk.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json_chunk);
    out.extend_from_slice(&(bin_chunk.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin_chunk);
    Ok(out)
}
