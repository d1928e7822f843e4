//! The skinned, animated mannequin as binary glTF 2.0: skeleton, linear-blend-skinning weights,
//! inverse bind matrices and three clips, written with `gltf-json`.
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
use json::accessor::{ComponentType as C, Type as T};
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

/// One accessor's data: `count` elements of `type_` made of `component`s, little-endian.
struct Data {
    bytes: Vec<u8>,
    count: usize,
    component: C,
    type_: T,
    /// Integer components read as fractions of their maximum (glTF `normalized`).
    normalized: bool,
    /// Per-component minimum and maximum (glTF requires them for positions and times).
    bounds: Option<(Vec<f32>, Vec<f32>)>,
    /// The buffer view's target (vertex attributes and indices).
    target: Option<json::buffer::Target>,
}

impl Data {
    /// Plain data: not normalised, no bounds, no target.
    fn new(bytes: Vec<u8>, count: usize, component: C, type_: T) -> Self {
        Data {
            bytes,
            count,
            component,
            type_,
            normalized: false,
            bounds: None,
            target: None,
        }
    }

    /// A vertex attribute.
    fn vertices(mut self) -> Self {
        self.target = Some(json::buffer::Target::ArrayBuffer);
        self
    }

    /// With component bounds.
    fn bounded(mut self, lo: Vec<f32>, hi: Vec<f32>) -> Self {
        self.bounds = Some((lo, hi));
        self
    }
}

impl Bin {
    /// Appends `d` (aligned to 4 bytes) with its buffer view and accessor.
    fn push(&mut self, d: Data) -> json::Index<json::Accessor> {
        while !self.data.len().is_multiple_of(4) {
            self.data.push(0);
        }
        let offset = self.data.len();
        self.data.extend_from_slice(&d.bytes);
        self.views.push(json::buffer::View {
            buffer: json::Index::new(0),
            byte_length: USize64::from(d.bytes.len()),
            byte_offset: Some(USize64::from(offset)),
            byte_stride: None,
            name: None,
            target: d.target.map(Valid),
            extensions: None,
            extras: Default::default(),
        });
        let (min, max) = match d.bounds {
            Some((lo, hi)) => (Some(json::Value::from(lo)), Some(json::Value::from(hi))),
            None => (None, None),
        };
        self.accessors.push(json::Accessor {
            buffer_view: Some(json::Index::new(self.views.len() as u32 - 1)),
            byte_offset: None,
            count: USize64::from(d.count),
            component_type: Valid(json::accessor::GenericComponentType(d.component)),
            extensions: None,
            extras: Default::default(),
            type_: Valid(d.type_),
            min,
            max,
            name: None,
            normalized: d.normalized,
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

/// The mesh's vertex attributes (positions, joints, weights) and its index accessor.
type Geometry = (
    BTreeMap<json::validation::Checked<json::mesh::Semantic>, json::Index<json::Accessor>>,
    json::Index<json::Accessor>,
);

/// Pushes the skinned mesh: positions with their bounds, joint indices and normalised weights
/// ([`skin_weights`]), and 16-bit triangle indices.
fn geometry(bin: &mut Bin, man: &Mannequin) -> Result<Geometry, String> {
    let mesh = &man.mesh;
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for p in &mesh.vertices {
        for a in 0..3 {
            lo[a] = lo[a].min(p[a] as f32);
            hi[a] = hi[a].max(p[a] as f32);
        }
    }
    let n = mesh.vertices.len();
    let positions = f32_bytes(mesh.vertices.iter().flat_map(|p| [p.x, p.y, p.z]));
    let positions = bin.push(
        Data::new(positions, n, C::F32, T::Vec3)
            .bounded(lo.to_vec(), hi.to_vec())
            .vertices(),
    );
    let weights = skin_weights(man);
    let ids: Vec<u8> = weights.iter().flat_map(|w| w.map(|x| x.0)).collect();
    let joint_ids = bin.push(Data::new(ids, weights.len(), C::U8, T::Vec4).vertices());
    let amounts: Vec<u8> = weights.iter().flat_map(|w| w.map(|x| x.1)).collect();
    let mut amounts = Data::new(amounts, weights.len(), C::U8, T::Vec4).vertices();
    amounts.normalized = true;
    let joint_weights = bin.push(amounts);
    if n > u16::MAX as usize {
        return Err("more than 65535 vertices".into());
    }
    let triangles: Vec<u8> = (mesh.triangles.iter())
        .flat_map(|t| t.map(|i| i as u16))
        .flat_map(u16::to_le_bytes)
        .collect();
    let mut indices = Data::new(triangles, mesh.triangles.len() * 3, C::U16, T::Scalar);
    indices.target = Some(json::buffer::Target::ElementArrayBuffer);
    let indices = bin.push(indices);
    let mut attributes = BTreeMap::new();
    attributes.insert(Valid(json::mesh::Semantic::Positions), positions);
    attributes.insert(Valid(json::mesh::Semantic::Joints(0)), joint_ids);
    attributes.insert(Valid(json::mesh::Semantic::Weights(0)), joint_weights);
    Ok((attributes, indices))
}

/// Pushes the inverse bind matrices: translation by minus each joint's bind position
/// (column-major).
fn inverse_bind_matrices(bin: &mut Bin, joints: &[Joint]) -> json::Index<json::Accessor> {
    let ibm: Vec<f64> = joints
        .iter()
        .flat_map(|jt| {
            let p = jt.position;
            [
                1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, -p.x, -p.y, -p.z, 1.0,
            ]
        })
        .collect();
    bin.push(Data::new(f32_bytes(ibm), joints.len(), C::F32, T::Mat4))
}

/// The nodes: the joints (translated by their offsets from their parents, children listed),
/// then the skinned mesh node, whose index is returned with them.
fn nodes(joints: &[Joint]) -> (Vec<json::Node>, u32) {
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
    (nodes, mesh_node)
}

/// The samplers and channels of one clip under construction.
struct Clip {
    /// The clip's key times.
    times: json::Index<json::Accessor>,
    /// Keys per channel.
    keys: usize,
    samplers: Vec<json::animation::Sampler>,
    channels: Vec<json::animation::Channel>,
}

impl Clip {
    /// Adds a LINEAR channel animating `path` of `node` through `values` (one per key).
    fn channel(
        &mut self,
        bin: &mut Bin,
        node: usize,
        path: json::animation::Property,
        (values, ty): (Vec<f64>, T),
    ) {
        let output = bin.push(Data::new(f32_bytes(values), self.keys, C::F32, ty));
        self.samplers.push(json::animation::Sampler {
            extensions: None,
            extras: Default::default(),
            input: self.times,
            interpolation: Valid(json::animation::Interpolation::Linear),
            output,
        });
        self.channels.push(json::animation::Channel {
            sampler: json::Index::new(self.samplers.len() as u32 - 1),
            target: json::animation::Target {
                extensions: None,
                extras: Default::default(),
                node: json::Index::new(node as u32),
                path: Valid(path),
            },
            extensions: None,
            extras: Default::default(),
        });
    }
}

/// Pushes clip `name` of `duration` seconds: its key times, a rotation channel per joint that
/// moves (consecutive quaternions kept in one hemisphere) and the hips' translation when it
/// moves.
fn animation(bin: &mut Bin, name: &str, duration: f64, joints: &[Joint]) -> json::Animation {
    let n = keys(duration);
    let times: Vec<f64> = (0..n)
        .map(|k| duration * k as f64 / (n - 1) as f64)
        .collect();
    let samples: Vec<(Vec<UnitQuaternion<f64>>, V3)> =
        times.iter().map(|&t| clip_pose(name, t, joints)).collect();
    let times = Data::new(f32_bytes(times.iter().copied()), n, C::F32, T::Scalar)
        .bounded(vec![0.0], vec![duration as f32]);
    let mut clip = Clip {
        times: bin.push(times),
        keys: n,
        samplers: Vec::new(),
        channels: Vec::new(),
    };
    for jt in 0..joints.len() {
        if samples.iter().all(|s| s.0[jt].angle() < 1e-12) {
            continue;
        }
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
        let rotation = json::animation::Property::Rotation;
        clip.channel(bin, jt, rotation, (vals, T::Vec4));
    }
    if samples.iter().any(|s| s.1.norm() > 0.0) {
        let root = joints[0].position;
        let vals = (samples.iter())
            .flat_map(|s| {
                let p = root + s.1;
                [p.x, p.y, p.z]
            })
            .collect();
        let translation = json::animation::Property::Translation;
        clip.channel(bin, 0, translation, (vals, T::Vec3));
    }
    json::Animation {
        extensions: None,
        extras: Default::default(),
        channels: clip.channels,
        name: Some(name.to_string()),
        samplers: clip.samplers,
    }
}

/// The glTF document: one buffer, one skinned mesh, its skin and nodes, one scene.
fn root(
    bin: &mut Bin,
    (attributes, indices): Geometry,
    skin: json::Skin,
    (nodes, mesh_node): (Vec<json::Node>, u32),
    animations: Vec<json::Animation>,
) -> json::Root {
    json::Root {
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
        skins: vec![skin],
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
    }
}

/// The GLB container (glTF 2.0 section 4): header, JSON chunk padded with spaces, BIN chunk
/// padded with zeros.
fn container(mut json_chunk: Vec<u8>, mut bin_chunk: Vec<u8>) -> Vec<u8> {
    while !json_chunk.len().is_multiple_of(4) {
        json_chunk.push(b' ');
    }
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
    out
}

/// The whole .glb file.
pub fn glb_bytes(man: &Mannequin) -> Result<Vec<u8>, String> {
    let joints = &man.joints;
    let mut bin = Bin::default();
    let geometry = geometry(&mut bin, man)?;
    let skin = json::Skin {
        extensions: None,
        extras: Default::default(),
        inverse_bind_matrices: Some(inverse_bind_matrices(&mut bin, joints)),
        joints: (0..joints.len() as u32).map(json::Index::new).collect(),
        name: Some("skeleton".into()),
        skeleton: Some(json::Index::new(0)),
    };
    let nodes = nodes(joints);
    let animations = (CLIPS.iter())
        .map(|&(name, duration, _)| animation(&mut bin, name, duration, joints))
        .collect();
    let root = root(&mut bin, geometry, skin, nodes, animations);
    let text = root.to_vec().map_err(|e| format!("glTF JSON: {e}"))?;
    Ok(container(text, bin.data))
}
