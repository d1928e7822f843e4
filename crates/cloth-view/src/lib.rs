//! Looking at a run: preview renders (PNG/GIF), USD export and plots of `stats.json`.
//!
//! Every entry point takes the output directory of `cloth run`: `frame_NNNN.obj` (the cloth,
//! same topology in every frame, frame k at time k / fps), `stats.json` (per-frame statistics;
//! `settings.run.fps`, default 30) and optionally `colliders.json` (collider meshes and their
//! per-frame 3x4 matrices `world = M * local`).
//!
//! - [`render`]: z-buffered CPU rasteriser, orthographic camera framed on the whole animation,
//!   two-sided diffuse shading, ground grid; PNG sequence or animated GIF.
//! - [`write_usd`]: one ASCII `.usda` stage with time-sampled cloth points and colliders.
//! - [`plot`]: SVG charts of step sizes, CG iterations, kinetic energy, stretch and time split.
//!
//! ```
//! use cloth::view::{RenderOptions, View, plot, render, write_usd};
//! let dir = std::env::temp_dir().join(format!("cloth-view-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! // Two frames of a falling triangle.
//! for (k, y) in [1.0, 0.9].iter().enumerate() {
//!     let obj = format!("v 0 {y} 0\nv 1 {y} 0\nv 0 {y} 1\nvt 0 0\nvt 1 0\nvt 0 1\nf 1/1 3/3 2/2\n");
//!     std::fs::write(dir.join(format!("frame_{k:04}.obj")), obj).unwrap();
//! }
//! let opts = RenderOptions { view: "iso".parse::<View>().unwrap(), width: 64, height: 48, every: 1 };
//! let summary = render(&dir, &dir.join("preview.gif"), &opts).unwrap();
//! assert_eq!(summary.images, 2);
//! write_usd(&dir, &dir.join("run.usda")).unwrap();
//! let text = std::fs::read_to_string(dir.join("run.usda")).unwrap();
//! assert!(text.starts_with("#usda 1.0"));
//! // No stats.json here: plotting needs one.
//! assert!(plot(&dir, &dir.join("plots")).is_err());
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

mod error;
mod frames;
mod plot;
mod raster;
mod render;
mod usd;

pub use error::ViewError;
pub use frames::{
    Animation, ColliderFrame, ColliderTrack, DEFAULT_FPS, ObjMesh, list_frames, load_animation,
    parse_obj, read_colliders, read_fps, read_obj,
};
pub use plot::{FrameStats, PLOT_FILES, plot, read_stats};
pub use raster::{Aabb, Camera, Canvas, FRAME_FILL, Image, Material, View};
pub use render::{
    GIF_EXACT_COLORS, MAX_SIDE, RenderOptions, RenderSummary, Style, animation_bounds, encode_png,
    gif_delays, gif_palette, ground_grid, quantize, render, render_frame, vertex_normals,
};
pub use usd::{write_usd, write_usd_stage};

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

/// Writes `path` atomically: the content goes to a temporary file in the same directory, which
/// is renamed over `path` once complete. On failure the temporary file is removed.
pub(crate) fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<(), ViewError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    let result = (|| {
        let file = File::create(&tmp)?;
        let mut w = BufWriter::new(file);
        write(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        ViewError::io(path, e)
    })
}
