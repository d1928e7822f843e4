//! Looking at cloth runs: preview renders (PNG/GIF), USD export and SVG plots of the statistics.
//!
//! This crate holds no simulation logic: it reads what a run left in its output directory,
//! through the workspace's one definition of each format — OBJ frames with cloth-mesh's reader
//! ([`cloth_mesh::read_obj_data`]), `stats.json` as cloth-sim's [`cloth_sim::stats::RunReport`], frame
//! file names after [`cloth_sim::output::frame_path`] — and writes every file with cloth-mesh's atomic
//! writer ([`cloth_mesh::write_atomic`]).
//!
//! A run's output directory holds `frame_NNNN.obj` (the cloths, one `o NAME` group each, same
//! topology in every frame, frame k at time k / fps), `stats.json` (per-frame statistics and the frame rate, default 30)
//! and optionally `colliders.json` (collider meshes and their per-frame 3x4 matrices
//! `world = M * local`). A run kept only as `animation.usda` (`--format usd`) is read back from
//! that stage instead ([`read_usd`]).
//!
//! - [`render`]: z-buffered CPU rasteriser, orthographic camera framed on the whole animation,
//!   two-sided diffuse shading, ground grid; PNG sequence (one `frame_NNNN.png` per frame) or
//!   animated GIF.
//! - [`write_usd`]: one ASCII `.usda` stage with one mesh prim per cloth (time-sampled points,
//!   named after the cloth) and the colliders; [`read_usd`] reads it back.
//! - [`plot`]: SVG charts of step sizes, CG iterations, kinetic energy, strain, rejected steps
//!   and the time split.
//!
//! ```
//! use cloth_view::{RenderOptions, View, load_animation, plot, read_usd, render, write_usd};
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
//! // Neither a .gif nor a directory: refused.
//! assert!(render(&dir, &dir.join("preview.mp4"), &opts).is_err());
//! // The USD stage reads back to the same frames.
//! write_usd(&dir, &dir.join("run.usda")).unwrap();
//! assert_eq!(read_usd(&dir.join("run.usda")).unwrap(), load_animation(&dir).unwrap());
//! // No stats.json here: plotting needs one.
//! assert!(plot(&dir, &dir.join("plots")).is_err());
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

mod animation;
mod error;
mod frames;
mod plot;
mod raster;
mod render;
mod usd;
mod usd_read;

pub use animation::{Animation, ClothPart, ColliderFrame, ColliderTrack};
pub use error::ViewError;
pub use frames::{list_frames, load_animation, obj_cloth_parts, read_colliders, read_fps};
pub use plot::{PLOT_FILES, plot};
pub use raster::{Aabb, Camera, Canvas, FRAME_FILL, Image, Material, View};
pub use render::{
    GIF_EXACT_COLORS, MAX_SIDE, RenderOptions, RenderSummary, Style, animation_bounds, encode_png,
    gif_delays, gif_palette, ground_grid, quantize, render, render_frame, vertex_normals,
};
pub use usd::{write_usd, write_usd_stage};
pub use usd_read::{parse_usd, read_usd};
