//! Bounded resources: before anything large is allocated, a scene's memory and run time are
//! estimated from its counts and refused above documented limits, with the figures.
//!
//! - **Memory.** [`IMPLICIT_BYTES_PER_VERTEX`] / [`EXPLICIT_BYTES_PER_VERTEX`] times the
//!   cloth's vertices plus [`COLLIDER_BYTES_PER_VERTEX`] times the mesh colliders' vertices
//!   (per frame for OBJ sequences) plus [`GLTF_COLLIDER_BYTES_PER_VERTEX`] times a skinned
//!   glTF body's vertices (read from its accessors), upper bounds of the peak resident memory of `cloth run`.
//!   The limit is `run.max_memory_gb` when the scene sets it, else 80% of the memory the
//!   machine has available (`MemAvailable` of `/proc/meminfo`; 8 GiB where it cannot be
//!   read).
//! - **Time.** The steps a run implies — the simulated duration over the step (`verlet_h` for
//!   Verlet; for the implicit integrator the smaller of `h_max` and [`TYPICAL_IMPLICIT_STEP`],
//!   since the stretch controller rarely keeps cloth at larger steps) — times the vertices, at
//!   [`VERTEX_STEPS_PER_SECOND`]. The limit is `run.max_hours` (default 4 h: a
//!   100,000-vertex garment of 300 frames estimates at about 5 minutes).
//! - **Counts.** OBJ cloth meshes are counted by streaming their `v` and `f` lines before they
//!   are read (the readers also stop at a size limit).

use crate::error::SimError;
use crate::scene::{ColliderShape, IntegratorKind, MeshSpec, Scene};
use std::io::BufRead;
use std::path::Path;

/// Peak memory per cloth vertex of an implicit run (bytes; runs with self-contact, the most
/// demanding, stay below 13 KB).
pub const IMPLICIT_BYTES_PER_VERTEX: f64 = 16_000.0;
/// Peak memory per cloth vertex of an explicit (Verlet) run (bytes).
pub const EXPLICIT_BYTES_PER_VERTEX: f64 = 2_000.0;
/// Memory per vertex of a mesh collider, per stored frame (bytes).
pub const COLLIDER_BYTES_PER_VERTEX: f64 = 1_000.0;
/// Memory per vertex of a skinned glTF collider (bytes): the body, its collider mesh and the
/// two poses kept around the current time (about 1.1 KB measured; posed on demand, so the
/// run's length does not count).
pub const GLTF_COLLIDER_BYTES_PER_VERTEX: f64 = 2_000.0;
/// Step the implicit estimate assumes when `h_max` is larger (s).
pub const TYPICAL_IMPLICIT_STEP: f64 = 1.0 / 60.0;
/// Vertex-steps per second assumed for the time estimate (an implicit step of a 2,601-vertex
/// sheet takes about 10 ms on one core: 2.6e5; the estimate rounds down to stay on the safe
/// side).
pub const VERTEX_STEPS_PER_SECOND: f64 = 2.0e5;
/// Default `run.max_hours`.
pub const DEFAULT_MAX_HOURS: f64 = 4.0;

/// What a scene will cost, estimated from its counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    /// Cloth vertices (an upper bound for OBJ meshes with seams).
    pub vertices: usize,
    /// Peak memory (bytes).
    pub bytes: f64,
    /// Steps of the whole run.
    pub steps: f64,
    /// Run time (s).
    pub seconds: f64,
}

/// Estimates the cost of `scene` without building it.
pub fn estimate(scene: &Scene) -> Result<Budget, SimError> {
    let mut vertices = 0usize;
    for c in &scene.cloths {
        vertices = vertices.saturating_add(cloth_vertices(&c.mesh)?);
    }
    let duration = scene.run.duration() + scene.run.preroll;
    let (per_vertex, h) = match scene.solver.integrator {
        IntegratorKind::Implicit => (
            IMPLICIT_BYTES_PER_VERTEX,
            scene.solver.h_max.min(TYPICAL_IMPLICIT_STEP),
        ),
        IntegratorKind::Verlet => (EXPLICIT_BYTES_PER_VERTEX, scene.solver.verlet_h),
    };
    let mut bytes = per_vertex * vertices as f64;
    for (k, c) in scene.colliders.iter().enumerate() {
        if let ColliderShape::Obj { path, frames, .. } = &c.shape {
            let (v, _) = count_obj(path)?;
            let stored = if frames.is_some() {
                scene.run.frames as f64 + 1.0
            } else {
                1.0
            };
            bytes += COLLIDER_BYTES_PER_VERTEX * v as f64 * stored;
        }
        if let ColliderShape::Gltf {
            path, animation, ..
        } = &c.shape
        {
            // Posed on demand: the body and two samples, whatever the run's length. The
            // counts come from the file's accessors, before welding (an upper bound).
            let counts =
                cloth_collide::GltfCounts::read(path, animation.as_deref()).map_err(|e| {
                    SimError::Invalid {
                        key: format!("collider[{k}].path"),
                        message: e.to_string(),
                    }
                })?;
            bytes += GLTF_COLLIDER_BYTES_PER_VERTEX * counts.vertices as f64;
        }
    }
    let steps = (duration / h).ceil();
    Ok(Budget {
        vertices,
        bytes,
        steps,
        seconds: steps * vertices as f64 / VERTEX_STEPS_PER_SECOND,
    })
}

/// Refuses `scene` when its estimate exceeds the limits (see the module docs).
pub fn admit(scene: &Scene) -> Result<Budget, SimError> {
    let b = estimate(scene)?;
    let memory_limit = scene
        .run
        .max_memory_gb
        .map_or_else(available_memory, |gb| gb * (1u64 << 30) as f64);
    if !(b.bytes <= memory_limit) {
        return Err(SimError::Budget {
            key: "cloth.mesh".into(),
            message: format!(
                "{} cloth vertices would need about {:.1} GB, more than the limit of {:.1} GB \
                 (80% of the available memory, or run.max_memory_gb)",
                b.vertices,
                b.bytes / 1e9,
                memory_limit / 1e9
            ),
        });
    }
    let hours = scene.run.max_hours.unwrap_or(DEFAULT_MAX_HOURS);
    if !(b.seconds <= hours * 3600.0) {
        return Err(SimError::Budget {
            key: "run".into(),
            message: format!(
                "{} frames at {} fps with steps of {:.3e} s make {:.3e} steps of {} vertices, \
                 about {:.3e} hours, more than run.max_hours = {hours}",
                scene.run.frames,
                scene.run.fps,
                scene.run.duration() / b.steps,
                b.steps,
                b.vertices,
                b.seconds / 3600.0
            ),
        });
    }
    Ok(b)
}

/// Cloth vertices of a mesh spec: exact for built meshes, counted for OBJ files.
fn cloth_vertices(spec: &MeshSpec) -> Result<usize, SimError> {
    match spec {
        MeshSpec::Obj { path, .. } => {
            // A cloth vertex is a position, or a (v, vt) pair where seams are split: at most one
            // per face corner; seams rarely add more than half the positions.
            let (v, f) = count_obj(path)?;
            Ok((v.saturating_mul(3) / 2).min(f.saturating_mul(3)))
        }
        MeshSpec::Garmentcode {
            path, edge_length, ..
        } => pattern_vertices(path, *edge_length),
        other => Ok(other.vertex_count().unwrap_or(usize::MAX)),
    }
}

/// Vertices of a sewing pattern triangulated to `edge_length` (m), estimated from its panels'
/// corner polygons (area over the area per vertex of an equilateral mesh, plus the outline):
/// reading the pattern is cheap, triangulating it may not be.
fn pattern_vertices(path: &Path, edge_length: f64) -> Result<usize, SimError> {
    let pattern = cloth_mesh::read_pattern(path).map_err(|e| SimError::Invalid {
        key: "cloth.mesh.path".into(),
        message: format!("{}: {e}", path.display()),
    })?;
    let h = edge_length;
    let estimate: f64 = pattern
        .panels
        .iter()
        .map(|p| {
            let n = p.vertices.len();
            let (mut area, mut perimeter) = (0.0, 0.0);
            for k in 0..n {
                let (a, b) = (p.vertices[k], p.vertices[(k + 1) % n]);
                area += 0.5 * (a.x * b.y - a.y * b.x);
                perimeter += (b - a).norm();
            }
            area.abs() / (0.866 * h * h) + perimeter / h
        })
        .sum();
    Ok(if estimate.is_finite() {
        estimate.ceil() as usize
    } else {
        usize::MAX
    })
}

/// `v` and `f` lines of an OBJ file, counted by streaming it (no more than the readers' size
/// limit is read).
fn count_obj(path: &Path) -> Result<(usize, usize), SimError> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| SimError::io(path, e))?;
    let reader = std::io::BufReader::new(file.take(cloth_mesh::MAX_OBJ_BYTES + 1));
    let (mut v, mut f) = (0, 0);
    for line in reader.split(b'\n') {
        let line = line.map_err(|e| SimError::io(path, e))?;
        let t = line.trim_ascii_start();
        if t.starts_with(b"v ") || t.starts_with(b"v\t") {
            v += 1;
        } else if t.starts_with(b"f ") || t.starts_with(b"f\t") {
            f += 1;
        }
    }
    Ok((v, f))
}

/// 80% of the memory available to new processes (bytes): `MemAvailable` of `/proc/meminfo`,
/// or 8 GiB where it cannot be read.
pub fn available_memory() -> f64 {
    let kb = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<f64>()
                    .ok()
            })
    });
    0.8 * kb.map_or(8.0 * (1u64 << 30) as f64, |kb| kb * 1024.0)
}

/// Peak resident memory of this process so far (bytes; `VmHWM` of `/proc/self/status`), or
/// `None` where that file is not available (systems other than Linux).
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_memory_counts_a_buffer_this_process_touched() {
        let Some(before) = peak_memory_bytes() else {
            return; // Not Linux: nothing to read.
        };
        // 256 MB written page by page is resident at once, so the peak is at least that.
        let size = 256 << 20;
        let mut buffer = vec![0u8; size];
        for page in buffer.chunks_mut(4096) {
            page[0] = 1;
        }
        let touched = buffer.iter().step_by(4096).filter(|&&b| b == 1).count();
        let after = peak_memory_bytes().expect("read once, readable again");
        assert_eq!(touched, size / 4096);
        assert!(
            after >= size as u64,
            "peak {after} B after touching {size} B"
        );
        assert!(after >= before);
    }
}
