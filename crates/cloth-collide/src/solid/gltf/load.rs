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

impl GltfBody {
    /// Reads a `.glb` or `.gltf` file; external buffers are resolved relative to its folder.
    /// Errors are one-line [`CollideError`]s naming the file and the offending node, mesh,
    /// skin, animation, accessor or buffer.
    pub fn load(path: &std::path::Path, options: &GltfOptions) -> Result<GltfBody, CollideError> {
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
        base_dir: Option<&std::path::Path>,
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
    let chosen = match &options.clip {
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
    };
    let clip = match chosen {
        Some(i) => Some(b.clip(i, &clip_names[i], &rest)?),
        None => None,
    };
    Ok(GltfBody {
        rest,
        parent,
        order,
        parts,
        triangles,
        vertex_count,
        clip_names,
        clip,
        options: options.clone(),
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
        use ::gltf::mesh::Mode;
        let mut parts = Vec::new();
        let mut triangles = Vec::new();
        let mut first = 0usize;
        for &ni in scene {
            let Some(node) = self.nodes.get(ni) else {
                continue;
            };
            let Some(mesh) = node.mesh() else { continue };
            let mlabel = label(mesh.name(), mesh.index());
            let skin = match node.skin() {
                Some(s) => Some(self.skin(&s)?),
                None => None,
            };
            for prim in mesh.primitives() {
                let pi = prim.index();
                let usage = |what: &str| format!("{what} of mesh {mlabel} primitive {pi}");
                let mode = prim.mode();
                if !matches!(
                    mode,
                    Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan
                ) {
                    return Err(self.mesh_err(
                        &mesh,
                        format!("primitive {pi} has mode {mode:?}; only triangles are supported"),
                    ));
                }
                let pos_acc = prim.get(&::gltf::Semantic::Positions).ok_or_else(|| {
                    self.mesh_err(&mesh, format!("primitive {pi} has no POSITION"))
                })?;
                let p = self
                    .buffers
                    .read(&pos_acc, &[Dimensions::Vec3], &usage("POSITION"))?;
                let positions: Vec<Vec3> = p
                    .chunks_exact(3)
                    .map(|c| Vec3::new(c[0], c[1], c[2]))
                    .collect();
                let nv = positions.len();
                let index: Vec<usize> = match prim.indices() {
                    Some(acc) => {
                        self.buffers
                            .read_uints(&acc, &[Dimensions::Scalar], &usage("indices"))?
                    }
                    None => (0..nv).collect(),
                };
                if let Some((k, &i)) = index.iter().enumerate().find(|(_, i)| **i >= nv) {
                    return Err(self.mesh_err(
                        &mesh,
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
        let mlabel = label(mesh.name(), mesh.index());
        let pi = prim.index();
        let mut sets: Vec<(Vec<usize>, Vec<f64>)> = Vec::new();
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

    /// The channels of animation `index` (read from the JSON: the crate's validation does not
    /// check channel targets).
    fn clip(&self, index: usize, name: &str, rest: &[Local]) -> Result<Clip, CollideError> {
        let anim = &self.doc.as_json().animations[index];
        let alabel = label(anim.name.as_deref(), index);
        let err = |reason: String| CollideError::GltfAnimation {
            file: self.file.to_string(),
            animation: alabel.clone(),
            reason,
        };
        let mut channels: Vec<Channel> = Vec::new();
        let mut duration = 0.0f64;
        for (ci, ch) in anim.channels.iter().enumerate() {
            let node = ch.target.node.value();
            if node >= rest.len() {
                return Err(err(format!(
                    "channel {ci} targets node #{node}, but there are {} nodes",
                    rest.len()
                )));
            }
            let nlabel = self.node_label(node);
            let property = match ch.target.path {
                Checked::Valid(json::animation::Property::Translation) => Property::Translation,
                Checked::Valid(json::animation::Property::Rotation) => Property::Rotation,
                Checked::Valid(json::animation::Property::Scale) => Property::Scale,
                // Morph target weights do not move the vertices this reader keeps.
                Checked::Valid(json::animation::Property::MorphTargetWeights) => continue,
                Checked::Invalid => {
                    return Err(err(format!(
                        "channel {ci} (node {nlabel}) has an unknown target path"
                    )));
                }
            };
            if matches!(rest[node], Local::Matrix(_)) {
                return Err(err(format!(
                    "channel {ci} animates node {nlabel}, which has a matrix (animated nodes must use translation/rotation/scale)"
                )));
            }
            if channels
                .iter()
                .any(|c| c.node == node && c.property == property)
            {
                return Err(err(format!("node {nlabel} has two {property:?} channels")));
            }
            let sampler = anim
                .samplers
                .get(ch.sampler.value())
                .ok_or_else(|| err(format!("channel {ci} (node {nlabel}) has no sampler")))?;
            let interp = match sampler.interpolation {
                Checked::Valid(json::animation::Interpolation::Linear) => Interp::Linear,
                Checked::Valid(json::animation::Interpolation::Step) => Interp::Step,
                Checked::Valid(json::animation::Interpolation::CubicSpline) => Interp::CubicSpline,
                Checked::Invalid => {
                    return Err(err(format!(
                        "channel {ci} (node {nlabel}) has an unknown interpolation"
                    )));
                }
            };
            let accessor = |i: usize| {
                self.accessors.get(i).ok_or_else(|| {
                    err(format!(
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
                return Err(err(format!("channel {ci} (node {nlabel}) has no keys")));
            }
            if let Some(k) = (1..times.len()).find(|&k| times[k] <= times[k - 1]) {
                return Err(err(format!(
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
                return Err(err(format!(
                    "channel {ci} (node {nlabel}): {} output elements for {} keys ({interp:?} needs {})",
                    values.len() / width,
                    times.len(),
                    times.len() * per_key
                )));
            }
            if interp == Interp::CubicSpline && times.len() < 2 {
                return Err(err(format!(
                    "channel {ci} (node {nlabel}): CUBICSPLINE needs at least two keys"
                )));
            }
            if property == Property::Rotation {
                // Normalise the rotation values (not the cubic tangents).
                for k in 0..times.len() {
                    let e = k * per_key + per_key / 2;
                    let q = &mut values[4 * e..4 * e + 4];
                    let norm = q.iter().map(|x| x * x).sum::<f64>().sqrt();
                    if !(norm > 0.0) {
                        return Err(err(format!(
                            "channel {ci} (node {nlabel}): key {k} is the zero quaternion"
                        )));
                    }
                    q.iter_mut().for_each(|x| *x /= norm);
                }
            }
            duration = duration.max(times[times.len() - 1]);
            channels.push(Channel {
                node,
                property,
                interp,
                times,
                values,
            });
        }
        Ok(Clip {
            name: name.to_string(),
            duration: duration.max(0.0),
            channels,
        })
    }
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
