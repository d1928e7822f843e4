//! Preview renders of a run: PNG sequences and animated GIFs.

use crate::ViewError;
use crate::animation::Animation;
use crate::frames::{frame_file_number, load_animation};
use crate::raster::{Aabb, Camera, Canvas, Image, Material, View, add, cross};
use cloth_mesh::write_atomic;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Options of [`render`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderOptions {
    /// Camera direction (default: [`View::Iso`]).
    pub view: View,
    /// Image width in pixels (default 800; at most 65535 for GIF).
    pub width: u32,
    /// Image height in pixels (default 600; at most 65535 for GIF).
    pub height: u32,
    /// Render every `every`-th frame (default 1 = all; must be at least 1).
    pub every: usize,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            view: View::Iso,
            width: 800,
            height: 600,
            every: 1,
        }
    }
}

/// What [`render`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderSummary {
    /// Number of images rendered.
    pub images: usize,
    /// Frame numbers of the rendered images, in order.
    pub frames: Vec<usize>,
    /// Files written: the GIF, or the PNGs in order.
    pub outputs: Vec<PathBuf>,
    /// The camera used for every image (framed on the whole animation).
    pub camera: Camera,
    /// Duration each image stands for (seconds): `every / fps`.
    pub frame_seconds: f64,
}

/// Colours and shading of preview renders.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Style {
    /// Background colour.
    pub background: [u8; 3],
    /// Cloth material (front = side the OBJ winding's normal points to).
    pub cloth: Material,
    /// Collider material.
    pub collider: Material,
    /// Ground grid line colour.
    pub grid: [u8; 3],
    /// Anti-aliasing: each pixel is the mean of `supersample x supersample` samples (1 = off;
    /// default 2; at most 4, and lowered for very large images to bound memory).
    pub supersample: u32,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            background: [235, 238, 242],
            cloth: Material {
                front: [214, 96, 62],
                back: [70, 130, 200],
                ambient: 0.3,
            },
            collider: Material {
                front: [170, 170, 170],
                back: [120, 120, 120],
                ambient: 0.3,
            },
            grid: [120, 126, 138],
            supersample: 2,
        }
    }
}

/// Bounding box of the whole animation: cloth over all frames and colliders at those frames
/// (metres).
pub fn animation_bounds(anim: &Animation) -> Aabb {
    let mut b = Aabb::empty();
    for frame in &anim.positions {
        for p in frame {
            b.grow(*p);
        }
    }
    for c in &anim.colliders {
        for &k in &anim.frame_numbers {
            for p in c.world_vertices(k) {
                b.grow(p);
            }
        }
    }
    b
}

/// Ground grid segments: lines on the plane `y = bounds.min.y`, covering the box's x-z extent
/// enlarged by a quarter of its largest extent on every side, spaced by 1, 2 or 5 times a
/// power of ten (about ten cells across the box).
pub fn ground_grid(bounds: &Aabb) -> Vec<([f64; 3], [f64; 3])> {
    if bounds.is_empty() {
        return Vec::new();
    }
    let ext = (0..3)
        .map(|k| bounds.max[k] - bounds.min[k])
        .fold(0.0f64, f64::max);
    let ext = if ext > 0.0 { ext } else { 1.0 };
    let spacing = nice_step(ext / 10.0);
    let pad = 0.25 * ext;
    let y = bounds.min[1];
    let lo = [bounds.min[0] - pad, bounds.min[2] - pad];
    let hi = [bounds.max[0] + pad, bounds.max[2] + pad];
    let first = [(lo[0] / spacing).ceil(), (lo[1] / spacing).ceil()];
    let last = [(hi[0] / spacing).floor(), (hi[1] / spacing).floor()];
    let mut lines = Vec::new();
    for axis in 0..2 {
        let count = (last[axis] - first[axis]).clamp(-1.0, 1000.0) as i64;
        for i in 0..=count {
            let c = (first[axis] + i as f64) * spacing;
            let (a, b) = if axis == 0 {
                ([c, y, lo[1]], [c, y, hi[1]])
            } else {
                ([lo[0], y, c], [hi[0], y, c])
            };
            lines.push((a, b));
        }
    }
    lines
}

/// The smallest of 1, 2, 5 times a power of ten that is at least `x` (> 0).
fn nice_step(x: f64) -> f64 {
    let p = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|s| *s >= x * (1.0 - 1e-12))
        .unwrap_or(10.0 * p)
}

/// Area-weighted vertex normals of a triangle mesh (unnormalised; zero for isolated vertices).
pub fn vertex_normals(positions: &[[f64; 3]], triangles: &[[usize; 3]]) -> Vec<[f64; 3]> {
    let mut n = vec![[0.0; 3]; positions.len()];
    for t in triangles {
        let [a, b, c] = t.map(|i| positions[i]);
        let fnorm = cross(
            [b[0] - a[0], b[1] - a[1], b[2] - a[2]],
            [c[0] - a[0], c[1] - a[1], c[2] - a[2]],
        );
        for &i in t {
            n[i] = add(n[i], fnorm);
        }
    }
    n
}

/// Renders frame index `index` of `anim` (cloth with smooth normals, colliders flat, ground grid
/// `grid`) through `camera`, anti-aliased by [`Style::supersample`].
pub fn render_frame(
    anim: &Animation,
    index: usize,
    camera: &Camera,
    style: &Style,
    grid: &[([f64; 3], [f64; 3])],
) -> Image {
    let k = supersampling(camera, style.supersample);
    let fine = Camera {
        width: camera.width * k,
        height: camera.height * k,
        scale: camera.scale * f64::from(k),
        ..*camera
    };
    let mut canvas = Canvas::new(fine, style.background);
    let bias = 1e-4 * grid_bias_scale(grid);
    for (a, b) in grid {
        canvas.draw_line(*a, *b, style.grid, bias);
    }
    let frame = anim.frame_numbers[index];
    for c in &anim.colliders {
        let world = c.world_vertices(frame);
        for t in &c.triangles {
            let corners = t.map(|i| world[i]);
            let n = cross(
                [
                    corners[1][0] - corners[0][0],
                    corners[1][1] - corners[0][1],
                    corners[1][2] - corners[0][2],
                ],
                [
                    corners[2][0] - corners[0][0],
                    corners[2][1] - corners[0][1],
                    corners[2][2] - corners[0][2],
                ],
            );
            canvas.draw_triangle(corners, [n; 3], &style.collider);
        }
    }
    let positions = &anim.positions[index];
    let normals = vertex_normals(positions, &anim.triangles);
    for t in &anim.triangles {
        canvas.draw_triangle(t.map(|i| positions[i]), t.map(|i| normals[i]), &style.cloth);
    }
    downsample(canvas.into_image(), k)
}

/// Samples per pixel side actually used: `requested` clamped to 1..=4 and lowered until the
/// supersampled image has at most 40 million pixels.
fn supersampling(camera: &Camera, requested: u32) -> u32 {
    let pixels = u64::from(camera.width) * u64::from(camera.height);
    let mut k = requested.clamp(1, 4);
    while k > 1 && pixels * u64::from(k * k) > 40_000_000 {
        k -= 1;
    }
    k
}

/// Box filter: each output pixel is the rounded mean of a `k x k` block.
fn downsample(image: Image, k: u32) -> Image {
    if k == 1 {
        return image;
    }
    let (w, h) = (image.width / k, image.height / k);
    let (k, fine_w) = (k as usize, image.width as usize);
    let n = (k * k) as u32;
    let mut rgb = Vec::with_capacity(3 * w as usize * h as usize);
    for y in 0..h as usize {
        for x in 0..w as usize {
            let mut sum = [0u32; 3];
            for dy in 0..k {
                let row = (y * k + dy) * fine_w;
                for dx in 0..k {
                    let i = 3 * (row + x * k + dx);
                    for (s, &v) in sum.iter_mut().zip(&image.rgb[i..i + 3]) {
                        *s += u32::from(v);
                    }
                }
            }
            rgb.extend(sum.map(|v| ((v + n / 2) / n) as u8));
        }
    }
    Image {
        width: w,
        height: h,
        rgb,
    }
}

fn grid_bias_scale(grid: &[([f64; 3], [f64; 3])]) -> f64 {
    let b = Aabb::of_points(grid.iter().flat_map(|(a, b)| [a, b]));
    b.diagonal().max(1e-9)
}

/// Maximum image side accepted (pixels).
pub const MAX_SIDE: u32 = 16384;

/// Where [`render`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// An animated GIF file.
    Gif,
    /// A directory of PNG images.
    Pngs,
}

/// What `out` asks for: an existing directory or a path without extension is a PNG directory,
/// a `.gif` path (any case) a GIF; any other extension is refused.
fn target(out: &Path) -> Result<Target, ViewError> {
    if out.is_dir() {
        return Ok(Target::Pngs);
    }
    match out.extension() {
        None => Ok(Target::Pngs),
        Some(e) if e.eq_ignore_ascii_case("gif") => Ok(Target::Gif),
        Some(e) => Err(ViewError::UnknownOutput {
            path: out.to_path_buf(),
            extension: e.to_string_lossy().into_owned(),
        }),
    }
}

/// Renders the frames of the run in `dir` (see [`load_animation`]: OBJ frames, or the
/// `animation.usda` of a run kept only as USD).
///
/// `out` decides the format:
/// - a `.gif` path (any case): an animated GIF is written there (and nothing else), with a fixed
///   6x7x6-level colour cube and ordered dithering (background and grid exact), looping
///   forever, each image shown for `every / fps` seconds (rounded to 1/100 s so that the total
///   duration stays exact, at least 2/100 s);
/// - an existing directory or a path without extension: the directory is created if needed and
///   receives one PNG per rendered frame, named after its frame number as the frame files are
///   ([`cloth_sim::output::frame_path`] with `.png`: frame 7 is `frame_0007.png`); `frame_NNNN.png`
///   files of other frames (an earlier render) are removed, other files are left alone;
/// - any other path (`x.mp4`) is [`ViewError::UnknownOutput`], before anything is read.
///
/// The camera is framed once on the whole animation. Images are rendered in parallel; the
/// output does not depend on the thread count. Every file is written to a temporary name and
/// renamed.
pub fn render(
    dir: impl AsRef<Path>,
    out: impl AsRef<Path>,
    opts: &RenderOptions,
) -> Result<RenderSummary, ViewError> {
    let dir = dir.as_ref();
    let out = out.as_ref();
    let target = target(out)?;
    check_options(opts, target == Target::Gif)?;
    let anim = load_animation(dir)?;
    let bounds = animation_bounds(&anim);
    let camera = Camera::framing(opts.view, &bounds, opts.width, opts.height);
    let grid = ground_grid(&bounds);
    let style = Style::default();
    let selected: Vec<usize> = (0..anim.len()).step_by(opts.every).collect();
    let frames: Vec<usize> = selected.iter().map(|&i| anim.frame_numbers[i]).collect();
    let frame_seconds = opts.every as f64 / anim.fps;
    let outputs = match target {
        Target::Gif => {
            write_gif(&anim, &selected, &camera, &style, &grid, out, frame_seconds)?;
            vec![out.to_path_buf()]
        }
        Target::Pngs => {
            std::fs::create_dir_all(out).map_err(|e| ViewError::io(out, e))?;
            let results: Vec<Result<PathBuf, ViewError>> = selected
                .par_iter()
                .map(|&i| {
                    let image = render_frame(&anim, i, &camera, &style, &grid);
                    let path = png_path(out, anim.frame_numbers[i]);
                    let bytes = encode_png(&image).map_err(|e| ViewError::encode(&path, e))?;
                    write_atomic(&path, |w| w.write_all(&bytes))
                        .map_err(|e| ViewError::io(&path, e))?;
                    Ok(path)
                })
                .collect();
            let written = results.into_iter().collect::<Result<Vec<_>, _>>()?;
            remove_stale_pngs(out, &frames)?;
            written
        }
    };
    Ok(RenderSummary {
        images: selected.len(),
        frames,
        outputs,
        camera,
        frame_seconds,
    })
}

/// The PNG of frame `frame` in `out`: the frame file's name with `.png`.
fn png_path(out: &Path, frame: usize) -> PathBuf {
    cloth_sim::output::frame_path(out, frame).with_extension("png")
}

/// Removes the `frame_NNNN.png` files of `out` whose frame is not in `frames` (left by an
/// earlier render), so that the directory holds exactly this render's sequence.
fn remove_stale_pngs(out: &Path, frames: &[usize]) -> Result<(), ViewError> {
    let entries = std::fs::read_dir(out).map_err(|e| ViewError::io(out, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| ViewError::io(out, e))?;
        let name = entry.file_name();
        let Some(k) = name.to_str().and_then(|n| frame_file_number(n, "png")) else {
            continue;
        };
        if frames.binary_search(&k).is_err() {
            let path = entry.path();
            std::fs::remove_file(&path).map_err(|e| ViewError::io(path, e))?;
        }
    }
    Ok(())
}

fn check_options(opts: &RenderOptions, gif: bool) -> Result<(), ViewError> {
    let max = if gif { u32::from(u16::MAX) } else { MAX_SIDE };
    for (name, v) in [("width", opts.width), ("height", opts.height)] {
        if v == 0 || v > max {
            return Err(ViewError::BadOption {
                name,
                message: format!("{v} pixels; must be between 1 and {max}"),
            });
        }
    }
    if opts.every == 0 {
        return Err(ViewError::BadOption {
            name: "every",
            message: "0; must be at least 1".into(),
        });
    }
    Ok(())
}

/// Encodes an image as an 8-bit RGB PNG.
pub fn encode_png(image: &Image) -> Result<Vec<u8>, png::EncodingError> {
    let mut bytes = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut bytes, image.width, image.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&image.rgb)?;
        writer.finish()?;
    }
    Ok(bytes)
}

/// GIF frame delays (1/100 s) for `count` images of `seconds` each: cumulative rounding keeps
/// the total duration exact; each delay is at least 2 (browsers slow smaller delays down).
pub fn gif_delays(count: usize, seconds: f64) -> Vec<u16> {
    let cs = |k: usize| (k as f64 * seconds * 100.0).round();
    (0..count)
        .map(|k| (cs(k + 1) - cs(k)).clamp(2.0, f64::from(u16::MAX)) as u16)
        .collect()
}

const LEVELS: [usize; 3] = [6, 7, 6];

/// Number of exact colours [`gif_palette`] and [`quantize`] reserve after the colour cube.
pub const GIF_EXACT_COLORS: usize = 4;

/// The fixed GIF palette: a 6x7x6-level RGB cube (252 colours, index `(r * 7 + g) * 6 + b`),
/// followed by the first [`GIF_EXACT_COLORS`] colours of `exact` (e.g. background and grid, so
/// that flat areas are not dithered).
pub fn gif_palette(exact: &[[u8; 3]]) -> Vec<u8> {
    let mut p = Vec::with_capacity(3 * 256);
    for r in 0..LEVELS[0] {
        for g in 0..LEVELS[1] {
            for b in 0..LEVELS[2] {
                for (v, n) in [(r, LEVELS[0]), (g, LEVELS[1]), (b, LEVELS[2])] {
                    p.push(((v * 255) as f64 / (n - 1) as f64).round() as u8);
                }
            }
        }
    }
    for c in exact.iter().take(GIF_EXACT_COLORS) {
        p.extend_from_slice(c);
    }
    p
}

/// Maps an image to [`gif_palette`]`(exact)` indices: pixels equal to one of the exact colours
/// get its slot (252, 253, ...), all others the colour cube with 4x4 ordered (Bayer) dithering.
pub fn quantize(image: &Image, exact: &[[u8; 3]]) -> Vec<u8> {
    const BAYER: [[f64; 4]; 4] = [
        [0.0, 8.0, 2.0, 10.0],
        [12.0, 4.0, 14.0, 6.0],
        [3.0, 11.0, 1.0, 9.0],
        [15.0, 7.0, 13.0, 5.0],
    ];
    let exact = &exact[..exact.len().min(GIF_EXACT_COLORS)];
    let cube = LEVELS[0] * LEVELS[1] * LEVELS[2];
    let w = image.width as usize;
    image
        .rgb
        .chunks_exact(3)
        .enumerate()
        .map(|(i, px)| {
            if let Some(slot) = exact.iter().position(|c| c[..] == *px) {
                return (cube + slot) as u8;
            }
            let (x, y) = (i % w, i / w);
            let threshold = (BAYER[y % 4][x % 4] + 0.5) / 16.0 - 0.5;
            let mut index = 0usize;
            for k in 0..3 {
                let n = LEVELS[k] - 1;
                let level = (f64::from(px[k]) * n as f64 / 255.0 + threshold)
                    .round()
                    .clamp(0.0, n as f64) as usize;
                index = index * LEVELS[k] + level;
            }
            index as u8
        })
        .collect()
}

fn write_gif(
    anim: &Animation,
    selected: &[usize],
    camera: &Camera,
    style: &Style,
    grid: &[([f64; 3], [f64; 3])],
    out: &Path,
    frame_seconds: f64,
) -> Result<(), ViewError> {
    let (w, h) = (camera.width as u16, camera.height as u16);
    let delays = gif_delays(selected.len(), frame_seconds);
    let exact = [style.background, style.grid];
    let palette = gif_palette(&exact);
    let chunk = 4 * rayon::current_num_threads().max(1);
    write_atomic(out, |file| {
        let to_io = |e: gif::EncodingError| std::io::Error::other(e.to_string());
        let mut encoder = gif::Encoder::new(file, w, h, &palette).map_err(to_io)?;
        encoder.set_repeat(gif::Repeat::Infinite).map_err(to_io)?;
        for (c, part) in selected.chunks(chunk).enumerate() {
            let indexed: Vec<Vec<u8>> = part
                .par_iter()
                .map(|&i| quantize(&render_frame(anim, i, camera, style, grid), &exact))
                .collect();
            for (k, pixels) in indexed.into_iter().enumerate() {
                let mut frame = gif::Frame::from_indexed_pixels(w, h, pixels, None);
                frame.delay = delays[c * chunk + k];
                encoder.write_frame(&frame).map_err(to_io)?;
            }
        }
        Ok(())
    })
    .map_err(|e| ViewError::io(out, e))
}
