//! Counts of a glTF file read from its JSON alone, for estimates before loading a body.

use std::io::Read;
use std::path::Path;

use ::gltf::json;
use ::gltf::json::validation::Checked;

use super::data::{MAX_GLTF_BYTES, label, read_limited};
use crate::error::CollideError;

/// What a glTF file holds, read from its JSON without its binary data (a GLB file's BIN
/// chunk and external buffers are not read), so that memory and time can be estimated before
/// a body is loaded.
///
/// The counts are those of the stored mesh, before [`crate::GltfBody`] welds split vertices:
/// upper bounds of [`crate::GltfBody::vertex_count`] and of its triangles.
#[derive(Clone, Debug, PartialEq)]
pub struct GltfCounts {
    /// Vertices of the mesh instances of the scene (each node that places a mesh counts its
    /// primitives' POSITION accessors).
    pub vertices: usize,
    /// Triangles of those instances (strips and fans unrolled; primitives that are not
    /// triangles count 0).
    pub triangles: usize,
    /// Name of the clip that plays (the one asked for, else the first; `#i` when unnamed);
    /// `None` when the file has no animation.
    pub clip: Option<String>,
    /// The clip's duration (s): its largest key time, from the key-time accessors' `max`
    /// (which glTF 2.0 requires); `None` without a clip or when an accessor does not state
    /// it.
    pub duration: Option<f64>,
    /// The largest number of keys of one channel of the clip (0 without a clip).
    pub keys: usize,
}

impl GltfCounts {
    /// Reads the counts of the `.glb` or `.gltf` file at `path`, for the clip `clip` (by name;
    /// `None` for the first). Errors name the file; a clip that is not there is an error, as
    /// when loading.
    pub fn read(path: impl AsRef<Path>, clip: Option<&str>) -> Result<GltfCounts, CollideError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let json = json_bytes(path).map_err(|e| CollideError::GltfFile {
            file: file.clone(),
            reason: format!("cannot read: {e}"),
        })?;
        counts(&json, clip, &file)
    }

    /// The counts of glTF or GLB bytes held in memory (errors name the file `<memory>`).
    pub fn from_slice(bytes: &[u8], clip: Option<&str>) -> Result<GltfCounts, CollideError> {
        let json = if bytes.starts_with(b"glTF") {
            super::data::split_glb(bytes)
                .map_err(|reason| CollideError::GltfFile {
                    file: "<memory>".into(),
                    reason,
                })?
                .0
        } else {
            bytes
        };
        counts(json, clip, "<memory>")
    }
}

/// The JSON of a file: a GLB file's JSON chunk (its header and that chunk only are read), or
/// the whole of a `.gltf` file.
fn json_bytes(path: &Path) -> std::io::Result<Vec<u8>> {
    let bad = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidData, m);
    let mut f = std::fs::File::open(path)?;
    let mut header = Vec::with_capacity(20);
    (&mut f).take(20).read_to_end(&mut header)?;
    if !header.starts_with(b"glTF") {
        return read_limited(path);
    }
    if header.len() < 20 || &header[16..20] != b"JSON" {
        return Err(bad("GLB file has no JSON chunk after its header".into()));
    }
    let version = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
    if version != 2 {
        return Err(bad(format!(
            "GLB version {version} is not supported (only 2)"
        )));
    }
    let len = u32::from_le_bytes([header[12], header[13], header[14], header[15]]) as u64;
    if len > MAX_GLTF_BYTES {
        return Err(bad(format!("GLB JSON chunk of {len} bytes is too large")));
    }
    let mut json = Vec::with_capacity(len as usize);
    f.take(len).read_to_end(&mut json)?;
    if (json.len() as u64) < len {
        return Err(bad(format!(
            "GLB JSON chunk declares {len} bytes, the file has {}",
            json.len()
        )));
    }
    Ok(json)
}

/// Counts of the document `json` (of `file`, for errors) for the clip `clip`.
fn counts(json: &[u8], clip: Option<&str>, file: &str) -> Result<GltfCounts, CollideError> {
    let root: json::Root =
        json::deserialize::from_slice(json).map_err(|e| CollideError::GltfFile {
            file: file.to_string(),
            reason: format!("not valid glTF JSON: {e}"),
        })?;
    let count = |a: &json::Index<json::Accessor>| {
        root.accessors
            .get(a.value())
            .map_or(0, |acc| usize::try_from(acc.count.0).unwrap_or(usize::MAX))
    };
    let (mut vertices, mut triangles) = (0usize, 0usize);
    for n in scene_nodes(&root) {
        let Some(mesh) = root.nodes[n].mesh.and_then(|m| root.meshes.get(m.value())) else {
            continue;
        };
        for prim in &mesh.primitives {
            let nv = prim
                .attributes
                .get(&Checked::Valid(json::mesh::Semantic::Positions))
                .map_or(0, count);
            let ni = prim.indices.as_ref().map_or(nv, count);
            let nt = match prim.mode {
                Checked::Valid(json::mesh::Mode::Triangles) => ni / 3,
                Checked::Valid(json::mesh::Mode::TriangleStrip)
                | Checked::Valid(json::mesh::Mode::TriangleFan) => ni.saturating_sub(2),
                _ => 0,
            };
            vertices = vertices.saturating_add(nv);
            triangles = triangles.saturating_add(nt);
        }
    }
    let (clip, duration, keys) = clip_counts(&root, clip, file)?;
    Ok(GltfCounts {
        vertices,
        triangles,
        clip,
        duration,
        keys,
    })
}

/// The nodes of the scene a body shows (the default scene, else the first, else every root),
/// each once.
fn scene_nodes(root: &json::Root) -> Vec<usize> {
    let n = root.nodes.len();
    let children = |i: usize| -> Vec<usize> {
        root.nodes[i]
            .children
            .iter()
            .flatten()
            .map(|c| c.value())
            .filter(|&c| c < n)
            .collect()
    };
    let scene = root
        .scene
        .and_then(|s| root.scenes.get(s.value()))
        .or(root.scenes.first());
    let mut stack: Vec<usize> = match scene {
        Some(s) => s
            .nodes
            .iter()
            .map(|x| x.value())
            .filter(|&x| x < n)
            .collect(),
        None => {
            let mut has_parent = vec![false; n];
            (0..n).flat_map(children).for_each(|c| has_parent[c] = true);
            (0..n).filter(|&i| !has_parent[i]).collect()
        }
    };
    stack.reverse();
    let mut seen = vec![false; n];
    let mut order = Vec::new();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        order.push(i);
        stack.extend(children(i).into_iter().rev());
    }
    order
}

/// The clip's name, duration (from the key-time accessors' `max`) and largest key count.
fn clip_counts(
    root: &json::Root,
    clip: Option<&str>,
    file: &str,
) -> Result<(Option<String>, Option<f64>, usize), CollideError> {
    let names: Vec<String> = root
        .animations
        .iter()
        .enumerate()
        .map(|(i, a)| match a.name.as_deref() {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => format!("#{i}"),
        })
        .collect();
    let index = match clip {
        None if names.is_empty() => return Ok((None, None, 0)),
        None => 0,
        Some(name) => {
            names
                .iter()
                .position(|n| n == name)
                .ok_or_else(|| CollideError::GltfAnimation {
                    file: file.to_string(),
                    animation: format!("'{name}'"),
                    reason: "not found".into(),
                })?
        }
    };
    let anim = &root.animations[index];
    let (mut duration, mut keys) = (Some(0.0f64), 0usize);
    for ch in &anim.channels {
        if matches!(
            ch.target.path,
            Checked::Valid(json::animation::Property::MorphTargetWeights)
        ) {
            continue;
        }
        let input = anim
            .samplers
            .get(ch.sampler.value())
            .and_then(|s| root.accessors.get(s.input.value()));
        let Some(input) = input else {
            return Err(CollideError::GltfAnimation {
                file: file.to_string(),
                animation: label(anim.name.as_deref(), index),
                reason: "a channel has no sampler or key-time accessor".into(),
            });
        };
        keys = keys.max(usize::try_from(input.count.0).unwrap_or(usize::MAX));
        let max = input
            .max
            .as_ref()
            .and_then(|m| m.get(0))
            .and_then(|v| v.as_f64());
        duration = match (duration, max) {
            (Some(d), Some(m)) if m.is_finite() => Some(d.max(m)),
            _ => None,
        };
    }
    Ok((Some(names[index].clone()), duration, keys))
}
