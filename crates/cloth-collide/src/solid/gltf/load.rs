//! Building a [`GltfBody`] from a document: node hierarchy, mesh instances, skins and the
//! chosen animation, every reference and number checked.

use std::path::Path;

use ::gltf::accessor::Dimensions;
use ::gltf::json;
use ::gltf::json::validation::Checked;
use cloth_mesh::Vec3;
use nalgebra::Matrix4;

use super::anim::{Channel, Interp, Property, Trs, quat};
use super::body::{Clip, GltfBody, GltfOptions, Local, Part, Skinning};
use super::data::{self, Buffers, label, split_glb};
use crate::error::CollideError;
use crate::solid::report::WeldReport;

impl GltfBody {
    /// Reads a `.glb` or `.gltf` file; external buffers are resolved relative to its folder.
    /// Errors are one-line [`CollideError`]s naming the file and the offending node, mesh,
    /// skin, animation, accessor or buffer.
    pub fn load(path: impl AsRef<Path>, options: &GltfOptions) -> Result<GltfBody, CollideError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let bytes = data::read_limited(path).map_err(|e| CollideError::GltfFile {
            file: file.clone(),
            reason: format!("cannot read: {e}"),
        })?;
        build(&bytes, path.parent(), &file, options)
    }

    /// Reads glTF or GLB bytes held in memory. External buffer files are resolved in
    /// `base_dir` (an error when it is `None`). Errors name the file as `<memory>`.
    pub fn from_slice(
        bytes: &[u8],
        base_dir: Option<&Path>,
        options: &GltfOptions,
    ) -> Result<GltfBody, CollideError> {
        build(bytes, base_dir, "<memory>", options)
    }
}

/// Parses and validates the document, then builds the body.
fn build(
    bytes: &[u8],
    base: Option<&Path>,
    file: &str,
    options: &GltfOptions,
) -> Result<GltfBody, CollideError> {
    let ferr = |reason: String| CollideError::GltfFile {
        file: file.to_string(),
        reason,
    };
    if !(options.scale.is_finite() && options.scale > 0.0) {
        return Err(ferr(format!(
            "option scale = {} must be finite and > 0",
            options.scale
        )));
    }
    if !options.time_offset.is_finite() {
        return Err(ferr(format!(
            "option time_offset = {} must be finite",
            options.time_offset
        )));
    }
    let (doc, blob) = parse(bytes, file)?;
    let buffers = Buffers::load(&doc, blob, base, file)?;
    let b = Builder {
        doc: &doc,
        nodes: doc.nodes().collect(),
        accessors: doc.accessors().collect(),
        buffers: &buffers,
        file,
    };

    let (rest, parent, order) = b.hierarchy()?;
    let scene_nodes = b.scene_order(&parent)?;
    let (parts, triangles) = b.meshes(&scene_nodes)?;
    let vertex_count = parts.iter().map(|p| p.positions.len()).sum();
    let clip_names: Vec<String> = doc
        .as_json()
        .animations
        .iter()
        .enumerate()
        .map(|(i, a)| match a.name.as_deref() {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => format!("#{i}"),
        })
        .collect();
    let clip = match choose_clip(&clip_names, options, file)? {
        Some(i) => Some(b.clip(i, &clip_names[i], &rest)?),
        None => None,
    };
    let mut body = GltfBody {
        rest,
        parent,
        order,
        parts,
        triangles,
        vertex_count,
        clip_names,
        clip,
        options: options.clone(),
        weld_report: WeldReport::unchanged(vertex_count),
        weld_map: None,
    };
    body.weld();
    Ok(body)
}

/// The validated document of glTF or GLB `bytes`, and the GLB file's BIN chunk.
fn parse<'b>(
    bytes: &'b [u8],
    file: &str,
) -> Result<(::gltf::Document, Option<&'b [u8]>), CollideError> {
    let ferr = |reason: String| CollideError::GltfFile {
        file: file.to_string(),
        reason,
    };
    let (json_bytes, blob) = if bytes.starts_with(b"glTF") {
        split_glb(bytes).map_err(ferr)?
    } else {
        (bytes, None)
    };
    let root: json::Root = json::deserialize::from_slice(json_bytes)
        .map_err(|e| ferr(format!("not valid glTF JSON: {e}")))?;
    // The crate's validation indexes the POSITION accessor without a bounds check: check first.
    for (mi, mesh) in root.meshes.iter().enumerate() {
        for (pi, prim) in mesh.primitives.iter().enumerate() {
            if let Some(acc) = prim
                .attributes
                .get(&Checked::Valid(json::mesh::Semantic::Positions))
                && acc.value() >= root.accessors.len()
            {
                return Err(CollideError::GltfMesh {
                    file: file.to_string(),
                    mesh: label(mesh.name.as_deref(), mi),
                    reason: format!(
                        "primitive {pi}: POSITION refers to accessor #{}, but there are {}",
                        acc.value(),
                        root.accessors.len()
                    ),
                });
            }
        }
    }
    let doc = ::gltf::Document::from_json(root).map_err(|e| match e {
        ::gltf::Error::Validation(list) => ferr(match list.first() {
            Some((path, err)) => format!(
                "invalid glTF: {path}: {err}{}",
                if list.len() > 1 {
                    format!(" (and {} more problems)", list.len() - 1)
                } else {
                    String::new()
                }
            ),
            None => "invalid glTF".into(),
        }),
        other => ferr(format!("invalid glTF: {other}")),
    })?;
    Ok((doc, blob))
}

/// The index of the clip `options` ask for among `clip_names`: by name, else the first
/// (`None` when the file has no animation). A name not found is an error listing the clips.
fn choose_clip(
    clip_names: &[String],
    options: &GltfOptions,
    file: &str,
) -> Result<Option<usize>, CollideError> {
    Ok(match &options.clip {
        None => (!clip_names.is_empty()).then_some(0),
        Some(name) => Some(clip_names.iter().position(|n| n == name).ok_or_else(|| {
            let mut list = clip_names
                .iter()
                .take(12)
                .map(|n| format!("'{n}'"))
                .collect::<Vec<_>>()
                .join(", ");
            if clip_names.len() > 12 {
                list.push_str(", ...");
            }
            CollideError::GltfAnimation {
                file: file.to_string(),
                animation: format!("'{name}'"),
                reason: if clip_names.is_empty() {
                    "not found: the file has no animation".into()
                } else {
                    format!("not found; the file has {list}")
                },
            }
        })?),
    })
}

struct Builder<'a> {
    doc: &'a ::gltf::Document,
    nodes: Vec<::gltf::Node<'a>>,
    accessors: Vec<::gltf::Accessor<'a>>,
    buffers: &'a Buffers,
    file: &'a str,
}

fn finite(v: &[f32]) -> bool {
    v.iter().all(|x| x.is_finite())
}

impl Builder<'_> {
    fn node_err(&self, node: usize, reason: String) -> CollideError {
        let name = self.nodes.get(node).and_then(|n| n.name());
        CollideError::GltfNode {
            file: self.file.to_string(),
            node: label(name, node),
            reason,
        }
    }

    fn node_label(&self, node: usize) -> String {
        label(self.nodes.get(node).and_then(|n| n.name()), node)
    }

    /// Rest transforms, parents and an order with parents first, for every node. Rejects a
    /// node with two parents and cycles.
    #[allow(clippy::type_complexity)]
    fn hierarchy(&self) -> Result<(Vec<Local>, Vec<Option<usize>>, Vec<usize>), CollideError> {
        let n = self.doc.nodes().len();
        let mut rest = Vec::with_capacity(n);
        let mut parent: Vec<Option<usize>> = vec![None; n];
        for node in self.doc.nodes() {
            let i = node.index();
            let local = match node.transform() {
                ::gltf::scene::Transform::Matrix { matrix } => {
                    if !matrix.iter().all(|c| finite(c)) {
                        return Err(self.node_err(i, "matrix is not finite".into()));
                    }
                    // Column-major: matrix[column][row].
                    Local::Matrix(Matrix4::from_fn(|r, c| matrix[c][r] as f64))
                }
                ::gltf::scene::Transform::Decomposed {
                    translation,
                    rotation,
                    scale,
                } => {
                    if !finite(&translation) || !finite(&rotation) || !finite(&scale) {
                        return Err(
                            self.node_err(i, "translation, rotation or scale is not finite".into())
                        );
                    }
                    let r = rotation.map(f64::from);
                    if r.iter().all(|&x| x == 0.0) {
                        return Err(self.node_err(i, "rotation is the zero quaternion".into()));
                    }
                    Local::Trs(Trs {
                        t: Vec3::from(translation.map(f64::from)),
                        r: quat(&r),
                        s: Vec3::from(scale.map(f64::from)),
                    })
                }
            };
            rest.push(local);
            for child in node.children() {
                let c = child.index();
                if c == i {
                    return Err(self.node_err(i, "is its own child".into()));
                }
                if let Some(p) = parent[c] {
                    return Err(self.node_err(
                        c,
                        format!(
                            "has two parents, {} and {}",
                            self.node_label(p),
                            self.node_label(i)
                        ),
                    ));
                }
                parent[c] = Some(i);
            }
        }
        // Depth-first from the roots with an explicit stack: any depth works.
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for node in self.doc.nodes() {
            children[node.index()] = node.children().map(|c| c.index()).collect();
        }
        let roots: Vec<usize> = (0..n).filter(|&i| parent[i].is_none()).collect();
        let order = depth_first(&roots, &children);
        if order.len() != n {
            let mut seen = vec![false; n];
            for &i in &order {
                seen[i] = true;
            }
            let bad = (0..n).find(|&i| !seen[i]).unwrap_or(0);
            return Err(self.node_err(bad, "is part of a cycle in the node hierarchy".into()));
        }
        Ok((rest, parent, order))
    }

    /// The nodes of the scene to show (the default scene, else the first, else every root), in
    /// depth-first order.
    fn scene_order(&self, parent: &[Option<usize>]) -> Result<Vec<usize>, CollideError> {
        let n = self.doc.nodes().len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for node in self.doc.nodes() {
            children[node.index()] = node.children().map(|c| c.index()).collect();
        }
        let scene = self
            .doc
            .default_scene()
            .or_else(|| self.doc.scenes().next());
        let roots: Vec<usize> = match scene {
            Some(s) => {
                let roots: Vec<usize> = s.nodes().map(|x| x.index()).collect();
                if let Some(&r) = roots.iter().find(|&&r| parent[r].is_some()) {
                    return Err(self.node_err(
                        r,
                        format!(
                            "is listed as a root of scene {} but has a parent",
                            label(s.name(), s.index())
                        ),
                    ));
                }
                roots
            }
            None => (0..n).filter(|&i| parent[i].is_none()).collect(),
        };
        Ok(depth_first(&roots, &children))
    }

    fn mesh_err(&self, mesh: &::gltf::Mesh, reason: String) -> CollideError {
        CollideError::GltfMesh {
            file: self.file.to_string(),
            mesh: label(mesh.name(), mesh.index()),
            reason,
        }
    }

    /// Mesh instances of the scene nodes and the concatenated triangle list.
    fn meshes(&self, scene: &[usize]) -> Result<(Vec<Part>, Vec<[usize; 3]>), CollideError> {
        let mut parts = Vec::new();
        let mut triangles = Vec::new();
        let mut first = 0usize;
        for &ni in scene {
            let Some(node) = self.nodes.get(ni) else {
                continue;
            };
            let Some(mesh) = node.mesh() else { continue };
            let skin = match node.skin() {
                Some(s) => Some(self.skin(&s)?),
                None => None,
            };
            for prim in mesh.primitives() {
                let (positions, tris) = self.primitive(&mesh, &prim)?;
                let nv = positions.len();
                triangles.extend(
                    tris.into_iter()
                        .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
                        .map(|t| t.map(|i| i + first)),
                );
                let skinning = match &skin {
                    None => None,
                    Some((joints, ibm, slabel)) => {
                        Some(self.influences(&mesh, &prim, nv, joints, ibm, slabel)?)
                    }
                };
                parts.push(Part {
                    node: ni,
                    positions,
                    skin: skinning,
                });
                first += nv;
            }
        }
        Ok((parts, triangles))
    }

    /// A primitive's vertex positions and its triangles (strips and fans unrolled, degenerate
    /// ones kept), every index checked.
    fn primitive(
        &self,
        mesh: &::gltf::Mesh,
        prim: &::gltf::Primitive,
    ) -> Result<(Vec<Vec3>, Vec<[usize; 3]>), CollideError> {
        use ::gltf::mesh::Mode;
        let mlabel = label(mesh.name(), mesh.index());
        let pi = prim.index();
        let usage = |what: &str| format!("{what} of mesh {mlabel} primitive {pi}");
        let mode = prim.mode();
        if !matches!(
            mode,
            Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan
        ) {
            return Err(self.mesh_err(
                mesh,
                format!("primitive {pi} has mode {mode:?}; only triangles are supported"),
            ));
        }
        let pos_acc = prim
            .get(&::gltf::Semantic::Positions)
            .ok_or_else(|| self.mesh_err(mesh, format!("primitive {pi} has no POSITION")))?;
        let p = self
            .buffers
            .read(&pos_acc, &[Dimensions::Vec3], &usage("POSITION"))?;
        let positions: Vec<Vec3> = p
            .chunks_exact(3)
            .map(|c| Vec3::new(c[0], c[1], c[2]))
            .collect();
        let nv = positions.len();
        let index: Vec<usize> = match prim.indices() {
            Some(acc) => self
                .buffers
                .read_uints(&acc, &[Dimensions::Scalar], &usage("indices"))?,
            None => (0..nv).collect(),
        };
        if let Some((k, &i)) = index.iter().enumerate().find(|(_, i)| **i >= nv) {
            return Err(self.mesh_err(
                mesh,
                format!(
                    "primitive {pi}: index {k} refers to vertex {i}, but there are {nv} vertices"
                ),
            ));
        }
        let tris: Vec<[usize; 3]> = match mode {
            Mode::Triangles => index.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect(),
            // Strip: triangle k is (k, k+1, k+2), every other one flipped to keep the
            // winding (section 3.7.2.1).
            Mode::TriangleStrip => (0..index.len().saturating_sub(2))
                .map(|k| {
                    if k % 2 == 0 {
                        [index[k], index[k + 1], index[k + 2]]
                    } else {
                        [index[k + 1], index[k], index[k + 2]]
                    }
                })
                .collect(),
            _ => (1..index.len().saturating_sub(1))
                .map(|k| [index[0], index[k], index[k + 1]])
                .collect(),
        };
        Ok((positions, tris))
    }

    /// A skin's joint nodes, inverse bind matrices and label.
    #[allow(clippy::type_complexity)]
    fn skin(
        &self,
        s: &::gltf::Skin,
    ) -> Result<(Vec<usize>, Vec<Matrix4<f64>>, String), CollideError> {
        let slabel = label(s.name(), s.index());
        let err = |reason: String| CollideError::GltfSkin {
            file: self.file.to_string(),
            skin: slabel.clone(),
            reason,
        };
        let joints: Vec<usize> = s.joints().map(|j| j.index()).collect();
        let ibm = match s.inverse_bind_matrices() {
            Some(acc) => {
                let m = self.buffers.read(
                    &acc,
                    &[Dimensions::Mat4],
                    &format!("inverse bind matrices of skin {slabel}"),
                )?;
                if m.len() / 16 < joints.len() {
                    return Err(err(format!(
                        "{} inverse bind matrices for {} joints",
                        m.len() / 16,
                        joints.len()
                    )));
                }
                m.chunks_exact(16)
                    .take(joints.len())
                    .map(Matrix4::from_column_slice)
                    .collect()
            }
            None => vec![Matrix4::identity(); joints.len()],
        };
        Ok((joints, ibm, slabel))
    }

    /// Per-vertex influences from JOINTS_n / WEIGHTS_n (glTF 2.0 section 3.7.3.3), weights
    /// renormalised to sum 1; zero weights dropped.
    fn influences(
        &self,
        mesh: &::gltf::Mesh,
        prim: &::gltf::Primitive,
        nv: usize,
        joints: &[usize],
        ibm: &[Matrix4<f64>],
        slabel: &str,
    ) -> Result<Skinning, CollideError> {
        let pi = prim.index();
        let sets = self.weight_sets(mesh, prim, nv)?;
        if sets.is_empty() {
            return Err(self.mesh_err(
                mesh,
                format!("primitive {pi} is bound to skin {slabel} but has no JOINTS_0/WEIGHTS_0"),
            ));
        }
        let mut offsets = Vec::with_capacity(nv + 1);
        let mut influences = Vec::with_capacity(4 * nv);
        offsets.push(0);
        for v in 0..nv {
            let start = influences.len();
            for (jv, wv) in &sets {
                for k in 0..4 {
                    let (slot, w) = (jv[4 * v + k], wv[4 * v + k]);
                    if w < 0.0 {
                        return Err(self.mesh_err(
                            mesh,
                            format!("primitive {pi}: vertex {v} has a negative weight {w}"),
                        ));
                    }
                    if w == 0.0 {
                        continue;
                    }
                    if slot >= joints.len() {
                        return Err(self.mesh_err(
                            mesh,
                            format!(
                                "primitive {pi}: vertex {v} uses joint {slot}, but skin {slabel} has {} joints",
                                joints.len()
                            ),
                        ));
                    }
                    influences.push((slot, w));
                }
            }
            let sum: f64 = influences[start..].iter().map(|x| x.1).sum();
            if !(sum > 0.0) {
                return Err(self.mesh_err(
                    mesh,
                    format!("primitive {pi}: vertex {v} has no joint weight"),
                ));
            }
            for x in &mut influences[start..] {
                x.1 /= sum;
            }
            offsets.push(influences.len());
        }
        Ok(Skinning {
            joints: joints.to_vec(),
            inverse_bind: ibm.to_vec(),
            offsets,
            influences,
        })
    }

    /// The JOINTS_n / WEIGHTS_n attribute pairs of a primitive of `nv` vertices, n = 0, 1, ...
    /// up to the first missing pair, four joints and four weights per vertex each.
    fn weight_sets(
        &self,
        mesh: &::gltf::Mesh,
        prim: &::gltf::Primitive,
        nv: usize,
    ) -> Result<Vec<WeightSet>, CollideError> {
        let mlabel = label(mesh.name(), mesh.index());
        let pi = prim.index();
        let mut sets: Vec<WeightSet> = Vec::new();
        for set in 0.. {
            let (j, w) = (
                prim.get(&::gltf::Semantic::Joints(set)),
                prim.get(&::gltf::Semantic::Weights(set)),
            );
            match (j, w) {
                (None, None) => break,
                (Some(j), Some(w)) => {
                    let usage =
                        |what: &str| format!("{what}_{set} of mesh {mlabel} primitive {pi}");
                    let jv = self
                        .buffers
                        .read_uints(&j, &[Dimensions::Vec4], &usage("JOINTS"))?;
                    let wv = self
                        .buffers
                        .read(&w, &[Dimensions::Vec4], &usage("WEIGHTS"))?;
                    if jv.len() != 4 * nv || wv.len() != 4 * nv {
                        return Err(self.mesh_err(
                            mesh,
                            format!(
                                "primitive {pi}: JOINTS_{set}/WEIGHTS_{set} have {}/{} elements for {nv} vertices",
                                jv.len() / 4,
                                wv.len() / 4
                            ),
                        ));
                    }
                    sets.push((jv, wv));
                }
                _ => {
                    return Err(self.mesh_err(
                        mesh,
                        format!(
                            "primitive {pi}: JOINTS_{set} and WEIGHTS_{set} must come together"
                        ),
                    ));
                }
            }
        }
        Ok(sets)
    }

    /// The channels of animation `index` (read from the JSON: the crate's validation does not
    /// check channel targets).
    fn clip(&self, index: usize, name: &str, rest: &[Local]) -> Result<Clip, CollideError> {
        let anim = &self.doc.as_json().animations[index];
        let a = Animation {
            json: anim,
            label: label(anim.name.as_deref(), index),
            file: self.file,
        };
        let mut channels: Vec<Channel> = Vec::new();
        let mut duration = 0.0f64;
        for (ci, ch) in anim.channels.iter().enumerate() {
            let Some((node, property)) = self.channel_target(&a, ci, ch, rest, &channels)? else {
                continue;
            };
            let channel = self.channel(&a, ci, ch, node, property)?;
            duration = duration.max(channel.times[channel.times.len() - 1]);
            channels.push(channel);
        }
        Ok(Clip {
            name: name.to_string(),
            duration: duration.max(0.0),
            channels,
        })
    }

    /// The node and property channel `ci` of animation `a` drives, checked against the nodes'
    /// rest transforms `rest` and the channels read before (`None` for morph target weights,
    /// which do not move the vertices this reader keeps).
    fn channel_target(
        &self,
        a: &Animation,
        ci: usize,
        ch: &json::animation::Channel,
        rest: &[Local],
        channels: &[Channel],
    ) -> Result<Option<(usize, Property)>, CollideError> {
        let node = ch.target.node.value();
        if node >= rest.len() {
            return Err(a.err(format!(
                "channel {ci} targets node #{node}, but there are {} nodes",
                rest.len()
            )));
        }
        let nlabel = self.node_label(node);
        let property = match ch.target.path {
            Checked::Valid(json::animation::Property::Translation) => Property::Translation,
            Checked::Valid(json::animation::Property::Rotation) => Property::Rotation,
            Checked::Valid(json::animation::Property::Scale) => Property::Scale,
            Checked::Valid(json::animation::Property::MorphTargetWeights) => return Ok(None),
            Checked::Invalid => {
                return Err(a.err(format!(
                    "channel {ci} (node {nlabel}) has an unknown target path"
                )));
            }
        };
        if matches!(rest[node], Local::Matrix(_)) {
            return Err(a.err(format!(
                "channel {ci} animates node {nlabel}, which has a matrix (animated nodes must use translation/rotation/scale)"
            )));
        }
        if channels
            .iter()
            .any(|c| c.node == node && c.property == property)
        {
            return Err(a.err(format!("node {nlabel} has two {property:?} channels")));
        }
        Ok(Some((node, property)))
    }

    /// Channel `ci` of animation `a`, driving `property` of `node`: its sampler's
    /// interpolation, key times (increasing) and values (rotations normalised).
    fn channel(
        &self,
        a: &Animation,
        ci: usize,
        ch: &json::animation::Channel,
        node: usize,
        property: Property,
    ) -> Result<Channel, CollideError> {
        let nlabel = self.node_label(node);
        let alabel = &a.label;
        let (sampler, interp) = sampler(a, ci, ch, &nlabel)?;
        let accessor = |i: usize| {
            self.accessors.get(i).ok_or_else(|| {
                a.err(format!(
                    "channel {ci} (node {nlabel}) refers to a missing accessor #{i}"
                ))
            })
        };
        let usage =
            |what: &str| format!("{what} of animation {alabel} channel {ci} (node {nlabel})");
        let times = self.buffers.read(
            accessor(sampler.input.value())?,
            &[Dimensions::Scalar],
            &usage("key times"),
        )?;
        if times.is_empty() {
            return Err(a.err(format!("channel {ci} (node {nlabel}) has no keys")));
        }
        if let Some(k) = (1..times.len()).find(|&k| times[k] <= times[k - 1]) {
            return Err(a.err(format!(
                "channel {ci} (node {nlabel}): key time {k} ({}) is not after the previous ({})",
                times[k],
                times[k - 1]
            )));
        }
        let dims = if property == Property::Rotation {
            Dimensions::Vec4
        } else {
            Dimensions::Vec3
        };
        let width = if property == Property::Rotation { 4 } else { 3 };
        let mut values = self.buffers.read(
            accessor(sampler.output.value())?,
            &[dims],
            &usage("key values"),
        )?;
        let per_key = if interp == Interp::CubicSpline { 3 } else { 1 };
        if values.len() != times.len() * per_key * width {
            return Err(a.err(format!(
                "channel {ci} (node {nlabel}): {} output elements for {} keys ({interp:?} needs {})",
                values.len() / width,
                times.len(),
                times.len() * per_key
            )));
        }
        if interp == Interp::CubicSpline && times.len() < 2 {
            return Err(a.err(format!(
                "channel {ci} (node {nlabel}): CUBICSPLINE needs at least two keys"
            )));
        }
        if property == Property::Rotation {
            normalise_rotations(&mut values, times.len(), per_key).map_err(|k| {
                a.err(format!(
                    "channel {ci} (node {nlabel}): key {k} is the zero quaternion"
                ))
            })?;
        }
        Ok(Channel {
            node,
            property,
            interp,
            times,
            values,
        })
    }
}

/// The joint slots and weights of one JOINTS_n / WEIGHTS_n pair, four per vertex.
type WeightSet = (Vec<usize>, Vec<f64>);

/// The animation being read, for errors naming it.
struct Animation<'a> {
    json: &'a json::Animation,
    /// `'name' (#i)` or `#i`.
    label: String,
    file: &'a str,
}

impl Animation<'_> {
    fn err(&self, reason: String) -> CollideError {
        CollideError::GltfAnimation {
            file: self.file.to_string(),
            animation: self.label.clone(),
            reason,
        }
    }
}

/// The sampler of channel `ci` (driving node `nlabel`) of animation `a`, and its
/// interpolation.
fn sampler<'j>(
    a: &Animation<'j>,
    ci: usize,
    ch: &json::animation::Channel,
    nlabel: &str,
) -> Result<(&'j json::animation::Sampler, Interp), CollideError> {
    let sampler = a
        .json
        .samplers
        .get(ch.sampler.value())
        .ok_or_else(|| a.err(format!("channel {ci} (node {nlabel}) has no sampler")))?;
    let interp = match sampler.interpolation {
        Checked::Valid(json::animation::Interpolation::Linear) => Interp::Linear,
        Checked::Valid(json::animation::Interpolation::Step) => Interp::Step,
        Checked::Valid(json::animation::Interpolation::CubicSpline) => Interp::CubicSpline,
        Checked::Invalid => {
            return Err(a.err(format!(
                "channel {ci} (node {nlabel}) has an unknown interpolation"
            )));
        }
    };
    Ok((sampler, interp))
}

/// Normalises the rotation values (not the cubic tangents) of `keys` keys of `per_key`
/// quaternions each; `Err(k)` when key k is the zero quaternion.
fn normalise_rotations(values: &mut [f64], keys: usize, per_key: usize) -> Result<(), usize> {
    for k in 0..keys {
        let e = k * per_key + per_key / 2;
        let q = &mut values[4 * e..4 * e + 4];
        let norm = q.iter().map(|x| x * x).sum::<f64>().sqrt();
        if !(norm > 0.0) {
            return Err(k);
        }
        q.iter_mut().for_each(|x| *x /= norm);
    }
    Ok(())
}

/// Depth-first preorder from `roots` (children in file order) with an explicit stack; each
/// node visited once.
fn depth_first(roots: &[usize], children: &[Vec<usize>]) -> Vec<usize> {
    let mut seen = vec![false; children.len()];
    let mut order = Vec::new();
    let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
    while let Some(n) = stack.pop() {
        if n >= children.len() || seen[n] {
            continue;
        }
        seen[n] = true;
        order.push(n);
        stack.extend(children[n].iter().rev().copied());
    }
    order
}
