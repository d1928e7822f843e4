//! A small glTF 2.0 builder for tests (documents written with `gltf-json`, packed as GLB),
//! and the two-bone arm whose poses are known in closed form.

use std::collections::{BTreeMap, HashMap};

use gltf_json as json;
use json::validation::{Checked::Valid, USize64};

// ---------------------------------------------------------------------------------------------
// A small glTF builder.

/// A document under construction and its single binary buffer.
#[derive(Default)]
pub struct Doc {
    pub root: json::Root,
    pub bin: Vec<u8>,
}

pub type Acc = json::Index<json::Accessor>;
/// Per-vertex joints and weights.
pub type Weights<'a> = (&'a [[u8; 4]], &'a [[f32; 4]]);
/// Positions, triangles, joints and weights of a test mesh.
pub type ArmMesh = (Vec<[f32; 3]>, Vec<[u32; 3]>, Vec<[u8; 4]>, Vec<[f32; 4]>);

impl Doc {
    pub fn raw(
        &mut self,
        bytes: &[u8],
        count: usize,
        component: json::accessor::ComponentType,
        ty: json::accessor::Type,
        normalized: bool,
    ) -> Acc {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let offset = self.bin.len();
        self.bin.extend_from_slice(bytes);
        let view = self.root.push(json::buffer::View {
            buffer: json::Index::new(0),
            byte_length: USize64::from(bytes.len()),
            byte_offset: Some(USize64::from(offset)),
            byte_stride: None,
            name: None,
            target: None,
            extensions: None,
            extras: Default::default(),
        });
        self.root.push(json::Accessor {
            buffer_view: Some(view),
            byte_offset: None,
            count: USize64::from(count),
            component_type: Valid(json::accessor::GenericComponentType(component)),
            extensions: None,
            extras: Default::default(),
            type_: Valid(ty),
            min: None,
            max: None,
            name: None,
            normalized,
            sparse: None,
        })
    }

    pub fn floats(&mut self, v: &[f32], ty: json::accessor::Type) -> Acc {
        let n = match ty {
            json::accessor::Type::Scalar => 1,
            json::accessor::Type::Vec3 => 3,
            json::accessor::Type::Vec4 => 4,
            json::accessor::Type::Mat4 => 16,
            _ => unreachable!(),
        };
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.raw(
            &bytes,
            v.len() / n,
            json::accessor::ComponentType::F32,
            ty,
            false,
        )
    }

    /// POSITION accessor with the min/max the format requires.
    pub fn positions(&mut self, p: &[[f32; 3]]) -> Acc {
        let flat: Vec<f32> = p.iter().flatten().copied().collect();
        let a = self.floats(&flat, json::accessor::Type::Vec3);
        let mut lo = [f32::INFINITY; 3];
        let mut hi = [f32::NEG_INFINITY; 3];
        for q in p {
            for k in 0..3 {
                lo[k] = lo[k].min(q[k]);
                hi[k] = hi[k].max(q[k]);
            }
        }
        let acc = &mut self.root.accessors[a.value()];
        acc.min = Some(json::Value::from(lo.to_vec()));
        acc.max = Some(json::Value::from(hi.to_vec()));
        a
    }

    pub fn indices(&mut self, t: &[[u32; 3]]) -> Acc {
        let bytes: Vec<u8> = t.iter().flatten().flat_map(|i| i.to_le_bytes()).collect();
        self.raw(
            &bytes,
            t.len() * 3,
            json::accessor::ComponentType::U32,
            json::accessor::Type::Scalar,
            false,
        )
    }

    pub fn node(&mut self, n: json::Node) -> u32 {
        self.root.push(n).value() as u32
    }

    pub fn child(&mut self, parent: u32, child: u32) {
        self.root.nodes[parent as usize]
            .children
            .get_or_insert_with(Vec::new)
            .push(json::Index::new(child));
    }

    /// A triangle mesh; with `skin` = (joints, weights) per vertex it gets JOINTS_0/WEIGHTS_0.
    pub fn mesh(
        &mut self,
        name: &str,
        p: &[[f32; 3]],
        t: &[[u32; 3]],
        skin: Option<Weights>,
    ) -> u32 {
        let mut attributes = BTreeMap::new();
        attributes.insert(Valid(json::mesh::Semantic::Positions), self.positions(p));
        if let Some((j, w)) = skin {
            let jb: Vec<u8> = j.iter().flatten().copied().collect();
            let ja = self.raw(
                &jb,
                j.len(),
                json::accessor::ComponentType::U8,
                json::accessor::Type::Vec4,
                false,
            );
            let wf: Vec<f32> = w.iter().flatten().copied().collect();
            let wa = self.floats(&wf, json::accessor::Type::Vec4);
            attributes.insert(Valid(json::mesh::Semantic::Joints(0)), ja);
            attributes.insert(Valid(json::mesh::Semantic::Weights(0)), wa);
        }
        let indices = Some(self.indices(t));
        self.root
            .push(json::Mesh {
                extensions: None,
                extras: Default::default(),
                name: Some(name.into()),
                primitives: vec![json::mesh::Primitive {
                    attributes,
                    extensions: None,
                    extras: Default::default(),
                    indices,
                    material: None,
                    mode: Valid(json::mesh::Mode::Triangles),
                    targets: None,
                }],
                weights: None,
            })
            .value() as u32
    }

    /// A skin over `joints` whose inverse bind matrices undo the joints' world translations.
    pub fn skin(&mut self, joints: &[u32], bind_positions: &[[f32; 3]]) -> u32 {
        let m: Vec<f32> = bind_positions
            .iter()
            .flat_map(|p| {
                [
                    1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, -p[0], -p[1],
                    -p[2], 1.0,
                ]
            })
            .collect();
        let ibm = self.floats(&m, json::accessor::Type::Mat4);
        self.root
            .push(json::Skin {
                extensions: None,
                extras: Default::default(),
                inverse_bind_matrices: Some(ibm),
                joints: joints.iter().map(|&j| json::Index::new(j)).collect(),
                name: Some("skin".into()),
                skeleton: None,
            })
            .value() as u32
    }

    /// Adds a channel to animation `name` (created on first use).
    pub fn channel(
        &mut self,
        name: &str,
        node: u32,
        path: json::animation::Property,
        interp: json::animation::Interpolation,
        times: &[f32],
        values: &[f32],
    ) {
        let input = self.floats(times, json::accessor::Type::Scalar);
        let ty = if path == json::animation::Property::Rotation {
            json::accessor::Type::Vec4
        } else {
            json::accessor::Type::Vec3
        };
        let output = self.floats(values, ty);
        let acc = &mut self.root.accessors[input.value()];
        acc.min = Some(json::Value::from(vec![times[0]]));
        acc.max = Some(json::Value::from(vec![times[times.len() - 1]]));
        let pos = match self
            .root
            .animations
            .iter()
            .position(|a| a.name.as_deref() == Some(name))
        {
            Some(i) => i,
            None => {
                self.root.animations.push(json::Animation {
                    extensions: None,
                    extras: Default::default(),
                    channels: Vec::new(),
                    name: Some(name.into()),
                    samplers: Vec::new(),
                });
                self.root.animations.len() - 1
            }
        };
        let a = &mut self.root.animations[pos];
        a.samplers.push(json::animation::Sampler {
            extensions: None,
            extras: Default::default(),
            input,
            interpolation: Valid(interp),
            output,
        });
        a.channels.push(json::animation::Channel {
            sampler: json::Index::new(a.samplers.len() as u32 - 1),
            target: json::animation::Target {
                extensions: None,
                extras: Default::default(),
                node: json::Index::new(node),
                path: Valid(path),
            },
            extensions: None,
            extras: Default::default(),
        });
    }

    pub fn scene(&mut self, roots: &[u32]) {
        self.root.scenes = vec![json::Scene {
            extensions: None,
            extras: Default::default(),
            name: None,
            nodes: roots.iter().map(|&r| json::Index::new(r)).collect(),
        }];
        self.root.scene = Some(json::Index::new(0));
    }

    pub fn with_buffer(&self, uri: Option<String>) -> json::Root {
        let mut root = self.root.clone();
        root.buffers = vec![json::Buffer {
            byte_length: USize64::from(self.bin.len()),
            name: Some("data".into()),
            uri,
            extensions: None,
            extras: Default::default(),
        }];
        root
    }

    pub fn glb(&self) -> Vec<u8> {
        glb(&self.with_buffer(None).to_vec().unwrap(), &self.bin)
    }
}

/// A GLB container (glTF 2.0 section 4).
pub fn glb(json_text: &[u8], bin: &[u8]) -> Vec<u8> {
    let mut j = json_text.to_vec();
    while !j.len().is_multiple_of(4) {
        j.push(b' ');
    }
    let mut b = bin.to_vec();
    while !b.len().is_multiple_of(4) {
        b.push(0);
    }
    let total = 12 + 8 + j.len() + 8 + b.len();
    let mut out = Vec::new();
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&b);
    out
}

pub fn quat_z(deg: f64) -> [f32; 4] {
    let h = deg.to_radians() / 2.0;
    [0.0, 0.0, h.sin() as f32, h.cos() as f32]
}

// ---------------------------------------------------------------------------------------------
// The bending arm: two bones, a cylinder along +y from 0 to 2 m, the elbow at y = 1.

/// Rings of 8 vertices at y = 0, 0.25, ..., 2 (radius 0.1) with caps' centres; vertices below
/// y = 0.75 belong to the upper arm, above 1.25 to the forearm, blended linearly between.
pub fn arm_cylinder() -> ArmMesh {
    let (mut p, mut t, mut j, mut w) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let rings = 9;
    for r in 0..rings {
        let y = 0.25 * r as f32;
        for k in 0..8 {
            let a = std::f32::consts::TAU * k as f32 / 8.0;
            p.push([0.1 * a.cos(), y, 0.1 * a.sin()]);
            let s = ((y - 0.75) / 0.5).clamp(0.0, 1.0);
            j.push([0, 1, 0, 0]);
            w.push([1.0 - s, s, 0.0, 0.0]);
        }
    }
    for r in 0..rings - 1 {
        for k in 0..8u32 {
            let a = r * 8 + k;
            let b = r * 8 + (k + 1) % 8;
            t.push([a, b + 8, b]);
            t.push([a, a + 8, b + 8]);
        }
    }
    (p, t, j, w)
}

/// The arm file: joint 0 "upper" at the origin, joint 1 "lower" at (0, 1, 0); the mesh node
/// sits under a translated parent, which skinning must ignore. `anim` adds a LINEAR rotation of
/// the elbow about z from 0 to 90 degrees over 1 s.
pub fn arm_doc(anim: bool) -> Doc {
    arm_doc_with(arm_cylinder(), anim)
}

/// [`arm_doc`] with another mesh on the same two bones.
pub fn arm_doc_with(arm: ArmMesh, anim: bool) -> Doc {
    let mut d = Doc::default();
    let (p, t, j, w) = arm;
    let mesh = d.mesh("arm", &p, &t, Some((&j, &w)));
    let upper = d.node(json::Node {
        name: Some("upper".into()),
        ..Default::default()
    });
    let lower = d.node(json::Node {
        name: Some("lower".into()),
        translation: Some([0.0, 1.0, 0.0]),
        ..Default::default()
    });
    d.child(upper, lower);
    let skin = d.skin(&[upper, lower], &[[0.0; 3], [0.0, 1.0, 0.0]]);
    let holder = d.node(json::Node {
        name: Some("holder".into()),
        translation: Some([5.0, 0.0, 0.0]),
        ..Default::default()
    });
    let body = d.node(json::Node {
        name: Some("arm".into()),
        mesh: Some(json::Index::new(mesh)),
        skin: Some(json::Index::new(skin)),
        ..Default::default()
    });
    d.child(holder, body);
    d.scene(&[upper, holder]);
    if anim {
        let mut v = quat_z(0.0).to_vec();
        v.extend(quat_z(90.0));
        d.channel(
            "bend",
            lower,
            json::animation::Property::Rotation,
            json::animation::Interpolation::Linear,
            &[0.0, 1.0],
            &v,
        );
    }
    d
}

/// The arm cylinder closed by two caps: [`arm_cylinder`]'s 72 vertices, then the centres of
/// the bottom (y = 0) and top (y = 2) caps; its 128 side triangles, then 8 bottom and 8 top
/// cap triangles, all wound outward. A closed surface.
pub fn capped_arm() -> ArmMesh {
    let (mut p, mut t, mut j, mut w) = arm_cylinder();
    let (bottom, top) = (72u32, 73u32);
    p.push([0.0, 0.0, 0.0]);
    p.push([0.0, 2.0, 0.0]);
    j.extend([[0, 1, 0, 0]; 2]);
    w.push([1.0, 0.0, 0.0, 0.0]);
    w.push([0.0, 1.0, 0.0, 0.0]);
    for k in 0..8u32 {
        t.push([bottom, k, (k + 1) % 8]);
    }
    for k in 0..8u32 {
        t.push([top, 64 + (k + 1) % 8, 64 + k]);
    }
    (p, t, j, w)
}

/// Number of vertices [`split_capped_arm`] adds to [`capped_arm`]'s 74.
pub const SPLIT_ARM_COPIES: usize = 9 + 16;

/// [`capped_arm`] as an exporter writes it: vertices split where normals are discontinuous
/// (the cap triangles use their own copies of the rim vertices) and along a texture seam (the
/// side triangles of the last column use copies of the first column's vertices). The copies
/// come after the 74 vertices of `capped_arm`, with the same joints and weights, and the
/// triangles keep their order: welding gives `capped_arm` exactly.
pub fn split_capped_arm() -> ArmMesh {
    let (mut p, mut t, mut j, mut w) = capped_arm();
    let mut seam: HashMap<u32, u32> = HashMap::new();
    let mut cap: HashMap<u32, u32> = HashMap::new();
    for (ti, tri) in t.iter_mut().enumerate() {
        // Side triangles of the last column: the first column's vertices come from the seam
        // copies; cap triangles: every rim vertex comes from the cap copies.
        let seam_side = ti < 128 && (ti / 2) % 8 == 7;
        if ti < 128 && !seam_side {
            continue;
        }
        for v in tri.iter_mut() {
            let copies = if seam_side && *v < 72 && *v % 8 == 0 {
                &mut seam
            } else if !seam_side && *v < 72 {
                &mut cap
            } else {
                continue;
            };
            let orig = *v as usize;
            *v = *copies.entry(*v).or_insert_with(|| {
                p.push(p[orig]);
                j.push(j[orig]);
                w.push(w[orig]);
                (p.len() - 1) as u32
            });
        }
    }
    assert_eq!(p.len(), 74 + SPLIT_ARM_COPIES);
    (p, t, j, w)
}
