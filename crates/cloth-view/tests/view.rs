//! Tests of cloth-view: rasteriser geometry, image encodings, USD export and read-back, plots
//! and error reporting. Fixtures are physics-free synthetic runs generated into unique
//! temporary directories.

use cloth_sim::{stats::FrameStats, stats::Rejections, stats::RunReport, stats::Timings};
use cloth_view::{
    Aabb, Animation, Camera, Canvas, ClothPart, ColliderTrack, FRAME_FILL, Image, Material,
    PLOT_FILES, RenderOptions, Style, View, ViewError, animation_bounds, gif_delays, gif_palette,
    ground_grid, list_frames, load_animation, parse_usd, plot, quantize, read_fps, read_usd,
    render, render_frame, write_usd, write_usd_stage,
};
use proptest::prelude::*;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

// ---------------------------------------------------------------- fixtures

/// A unique temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("cloth-view-test-{}-{tag}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Cloth fixture: an n x n vertex sheet over [0, 1]^2 in x-z, falling and waving.
struct Run {
    positions: Vec<Vec<[f64; 3]>>,
    triangles: Vec<[usize; 3]>,
    uvs: Vec<[f64; 2]>,
    fps: f64,
}

fn sheet(n: usize, frames: usize, fps: f64) -> Run {
    let mut triangles = Vec::new();
    for i in 0..n - 1 {
        for j in 0..n - 1 {
            let a = i * n + j;
            triangles.push([a, a + n, a + 1]);
            triangles.push([a + 1, a + n, a + n + 1]);
        }
    }
    let uvs = (0..n * n)
        .map(|v| {
            [
                (v % n) as f64 / (n - 1) as f64,
                (v / n) as f64 / (n - 1) as f64,
            ]
        })
        .collect();
    let positions = (0..frames)
        .map(|k| {
            let t = k as f64 / fps;
            (0..n * n)
                .map(|v| {
                    let (u, w) = (
                        (v % n) as f64 / (n - 1) as f64,
                        (v / n) as f64 / (n - 1) as f64,
                    );
                    [
                        u,
                        1.0 - 0.5 * 9.81 * t * t + 0.1 * (3.0 * u + 5.0 * t).sin() * w,
                        w + 0.01 * t,
                    ]
                })
                .collect()
        })
        .collect();
    Run {
        positions,
        triangles,
        uvs,
        fps,
    }
}

fn obj_text(run: &Run, k: usize) -> String {
    let mut s = String::from("# test frame\no cloth\n");
    for p in &run.positions[k] {
        writeln!(s, "v {} {} {}", p[0], p[1], p[2]).unwrap();
    }
    for uv in &run.uvs {
        writeln!(s, "vt {} {}", uv[0], uv[1]).unwrap();
    }
    for t in &run.triangles {
        let [a, b, c] = t.map(|i| i + 1);
        writeln!(s, "f {a}/{a} {b}/{b} {c}/{c}").unwrap();
    }
    s
}

/// The run report of the fixture, in cloth-sim's schema: one record per simulated frame
/// (frames 1, 2, ...; frame 0 is the initial state), with varied rejections.
fn report(run: &Run) -> RunReport {
    let frames: Vec<FrameStats> = (1..run.positions.len())
        .map(|k| {
            let rejections = Rejections {
                stretch_change: k % 2,
                penetration: usize::from(k % 3 == 0),
                ..Rejections::default()
            };
            FrameStats {
                frame: k,
                time: k as f64 / run.fps,
                steps: 3,
                rejected_steps: rejections.total(),
                rejections,
                h_min: 0.0333 / (1 + k % 3) as f64,
                h_max: 0.0333,
                cg_iterations: 40 + 7 * k,
                max_stretch: 0.01,
                max_compression: 0.02,
                kinetic_energy: 0.5 * (9.81 * k as f64 / run.fps).powi(2),
                timings: Timings {
                    eval: 0.01,
                    cg: 0.02,
                    cloth_cloth: 0.003,
                    cloth_solid: 0.004,
                    other: 0.001,
                },
                wall: 0.04,
                ..FrameStats::default()
            }
        })
        .collect();
    RunReport {
        settings: serde_json::json!({"run": {"fps": run.fps, "frames": run.positions.len() - 1}}),
        fps: run.fps,
        vertices: run.positions[0].len(),
        triangles: run.triangles.len(),
        threads: 2,
        frames,
        complete: true,
        ..RunReport::default()
    }
}

/// 3x4 matrix rows (column-vector convention) of a rotation about y by `a` plus translation.
fn rot_y(a: f64, t: [f64; 3]) -> [[f64; 4]; 3] {
    let (s, c) = a.sin_cos();
    [[c, 0.0, s, t[0]], [0.0, 1.0, 0.0, t[1]], [-s, 0.0, c, t[2]]]
}

fn cube() -> (Vec<[f64; 3]>, Vec<[usize; 3]>) {
    let v = (0..8)
        .map(|i| {
            [
                if i & 1 == 0 { -0.2 } else { 0.2 },
                if i & 2 == 0 { -0.2 } else { 0.2 },
                if i & 4 == 0 { -0.2 } else { 0.2 },
            ]
        })
        .collect();
    let t = vec![
        [0, 2, 1],
        [1, 2, 3],
        [4, 5, 6],
        [5, 7, 6],
        [0, 1, 4],
        [1, 5, 4],
        [2, 6, 3],
        [3, 6, 7],
        [0, 4, 2],
        [2, 4, 6],
        [1, 3, 5],
        [3, 7, 5],
    ];
    (v, t)
}

fn tetra_frame(k: usize) -> Vec<[f64; 3]> {
    let s = 1.0 + 0.1 * k as f64;
    vec![
        [0.0, 0.0, 0.0],
        [0.3 * s, 0.0, 0.0],
        [0.0, 0.3, 0.0],
        [0.0, 0.0, 0.3 / s],
    ]
}

fn colliders_json(frames: usize) -> String {
    let (cv, ct) = cube();
    let m = |k: usize| rot_y(0.3 * k as f64, [0.5, 0.3 - 0.01 * k as f64, 0.5]);
    let cube_frames: Vec<String> = (0..frames)
        .map(|k| format!(r#"{{"matrix": {:?}, "vertices": null}}"#, m(k)))
        .collect();
    let tetra_frames: Vec<String> = (0..frames)
        .map(|k| {
            let v = if k % 2 == 0 {
                format!("{:?}", tetra_frame(k))
            } else {
                "null".into()
            };
            format!(
                r#"{{"matrix": {:?}, "vertices": {v}}}"#,
                rot_y(0.0, [1.2, 0.0, 0.0])
            )
        })
        .collect();
    format!(
        r#"{{"colliders": [
          {{"name": "box 1", "vertices": {:?}, "triangles": {:?}, "frames": [{}]}},
          {{"name": "2tet", "vertices": {:?}, "triangles": [[0,2,1],[0,1,3],[0,3,2],[1,2,3]], "frames": [{}]}}
        ]}}"#,
        cv,
        ct,
        cube_frames.join(", "),
        tetra_frame(0),
        tetra_frames.join(", ")
    )
}

/// Writes a run directory: frames, stats.json, optionally colliders.json.
fn write_run(dir: &Path, run: &Run, colliders: bool) {
    for k in 0..run.positions.len() {
        std::fs::write(dir.join(format!("frame_{k:04}.obj")), obj_text(run, k)).unwrap();
    }
    report(run).write(dir.join("stats.json")).unwrap();
    if colliders {
        std::fs::write(
            dir.join("colliders.json"),
            colliders_json(run.positions.len()),
        )
        .unwrap();
    }
}

fn flat(color: [u8; 3]) -> Material {
    Material {
        front: color,
        back: color,
        ambient: 1.0,
    }
}

const BG: [u8; 3] = [0, 0, 0];

fn count_not(image: &Image, color: [u8; 3]) -> usize {
    image.rgb.chunks_exact(3).filter(|p| *p != color).count()
}

/// Draws the parallelogram `origin + a*u + b*v`, (a, b) in [0,1]^2, as two triangles.
fn draw_quad(canvas: &mut Canvas, origin: [f64; 3], u: [f64; 3], v: [f64; 3], m: &Material) {
    let p = |a: f64, b: f64| std::array::from_fn(|k| origin[k] + a * u[k] + b * v[k]);
    let n = [0.0; 3];
    canvas.draw_triangle([p(0.0, 0.0), p(1.0, 0.0), p(1.0, 1.0)], [n; 3], m);
    canvas.draw_triangle([p(0.0, 0.0), p(1.0, 1.0), p(0.0, 1.0)], [n; 3], m);
}

// ---------------------------------------------------------------- rasteriser geometry

/// Orthographic projection: a unit square facing the camera covers scale^2 pixels (within 2%),
/// and a square turned by `tilt` about the image's up axis covers scale^2 * cos(tilt).
fn square_area_case(view: View, scale: f64, offset: [f64; 2], tilt: f64) {
    let (w, h) = (480u32, 400u32);
    let cam = Camera::new(view, [0.0; 3], scale, w, h);
    let mut canvas = Canvas::new(cam, BG);
    let (s, c) = tilt.sin_cos();
    // Edge vectors: along the tilted right axis and along up.
    let u: [f64; 3] = std::array::from_fn(|k| c * cam.right[k] + s * cam.forward[k]);
    let v = cam.up;
    let origin: [f64; 3] =
        std::array::from_fn(|k| (offset[0] - 0.5) * cam.right[k] + (offset[1] - 0.5) * cam.up[k]);
    draw_quad(&mut canvas, origin, u, v, &flat([255, 255, 255]));
    let covered = count_not(canvas.image(), BG) as f64;
    let expected = scale * scale * c.abs();
    assert!(
        (covered - expected).abs() <= 0.02 * expected,
        "{view}: scale {scale}, tilt {tilt}: {covered} pixels, expected {expected}"
    );
}

#[test]
fn unit_square_facing_each_view_covers_scale_squared_pixels() {
    for view in [View::Front, View::Side, View::Top, View::Iso] {
        square_area_case(view, 100.0, [0.0, 0.0], 0.0);
        square_area_case(view, 137.37, [0.123, -0.31], 0.0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Pixel-centre sampling miscounts at most about one pixel row/column per side, so the
    /// sides are kept above ~80 px (scale >= 150, |tilt| <= 1) for 2% to be a fair bound.
    #[test]
    fn square_area_matches_orthographic_scale(
        view in prop::sample::select(vec![View::Front, View::Side, View::Top, View::Iso]),
        scale in 150.0f64..300.0,
        ox in -0.15f64..0.15,
        oy in -0.1f64..0.1,
        tilt in -1.0f64..1.0,
    ) {
        square_area_case(view, scale, [ox, oy], tilt);
    }

    #[test]
    fn framing_puts_every_box_corner_inside_and_fills_the_image(
        view in prop::sample::select(vec![View::Front, View::Side, View::Top, View::Iso]),
        min in prop::array::uniform3(-5.0f64..5.0),
        size in prop::array::uniform3(0.01f64..4.0),
        w in 16u32..900,
        h in 16u32..900,
    ) {
        let b = Aabb { min, max: std::array::from_fn(|k| min[k] + size[k]) };
        let cam = Camera::framing(view, &b, w, h);
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for c in b.corners() {
            let p = cam.project(c);
            for k in 0..2 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        let (wf, hf) = (f64::from(w), f64::from(h));
        prop_assert!(lo[0] >= -1e-9 && hi[0] <= wf + 1e-9 && lo[1] >= -1e-9 && hi[1] <= hf + 1e-9);
        // Centred.
        prop_assert!((lo[0] + hi[0] - wf).abs() < 1e-6 && (lo[1] + hi[1] - hf).abs() < 1e-6);
        // One direction is filled to FRAME_FILL.
        let fill = ((hi[0] - lo[0]) / wf).max((hi[1] - lo[1]) / hf);
        prop_assert!((fill - FRAME_FILL).abs() < 1e-9, "fill {}", fill);
    }

    #[test]
    fn gif_delays_keep_total_duration(count in 1usize..200, fps in 5.0f64..60.0, every in 1usize..4) {
        let seconds = every as f64 / fps;
        let d = gif_delays(count, seconds);
        prop_assert_eq!(d.len(), count);
        let exact = count as f64 * seconds * 100.0;
        let total: f64 = d.iter().map(|&x| f64::from(x)).sum();
        if seconds >= 0.02 {
            // No clamping: the sum is the rounded exact duration, each delay within 1 of exact.
            prop_assert!((total - exact).abs() <= 0.5 + 1e-9);
            for &x in &d {
                prop_assert!((f64::from(x) - seconds * 100.0).abs() < 1.0 + 1e-9);
            }
        }
        prop_assert!(d.iter().all(|&x| x >= 2));
    }
}

#[test]
fn camera_axes_are_right_handed_orthonormal_and_y_up() {
    for view in [View::Front, View::Side, View::Top, View::Iso] {
        let (r, u, f) = view.axes();
        let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
        for (a, b, want) in [
            (r, r, 1.0),
            (u, u, 1.0),
            (f, f, 1.0),
            (r, u, 0.0),
            (r, f, 0.0),
            (u, f, 0.0),
        ] {
            assert!((dot(a, b) - want).abs() < 1e-12, "{view}");
        }
        // right = forward x up
        let c = [
            f[1] * u[2] - f[2] * u[1],
            f[2] * u[0] - f[0] * u[2],
            f[0] * u[1] - f[1] * u[0],
        ];
        assert!((dot(c, r) - 1.0).abs() < 1e-12, "{view}");
        if view != View::Top {
            assert!(u[1] > 0.0, "{view}: world y must point up the image");
        }
    }
}

#[test]
fn nearer_triangle_wins_regardless_of_draw_order() {
    // Front view looks along -z: larger z is nearer.
    let cam = Camera::new(View::Front, [0.0; 3], 50.0, 200, 200);
    let n = [[0.0; 3]; 3];
    let near = [[-1.0, -1.0, 0.5], [1.0, -1.0, 0.5], [0.0, 1.0, 0.5]];
    let far = [[-1.5, -0.5, -0.5], [1.5, -0.5, -0.5], [0.0, 1.5, -0.5]];
    let (red, green) = ([255, 0, 0], [0, 255, 0]);
    let mut alone = Canvas::new(cam, BG);
    alone.draw_triangle(near, n, &flat(red));
    let mut a = Canvas::new(cam, BG);
    a.draw_triangle(near, n, &flat(red));
    a.draw_triangle(far, n, &flat(green));
    let mut b = Canvas::new(cam, BG);
    b.draw_triangle(far, n, &flat(green));
    b.draw_triangle(near, n, &flat(red));
    assert_eq!(a.image(), b.image(), "draw order changed the result");
    let (ia, alone) = (a.image(), alone.image());
    let mut overlap = 0;
    for (pa, pn) in ia.rgb.chunks_exact(3).zip(alone.rgb.chunks_exact(3)) {
        if pn == red {
            assert_eq!(pa, red);
            overlap += 1;
        } else {
            assert!(pa == green || pa == BG);
        }
    }
    assert!(overlap > 1000);
    assert!(
        count_not(ia, BG) > overlap,
        "far triangle must show around the near one"
    );
}

#[test]
fn interpenetrating_triangles_split_along_their_intersection() {
    // A lies in z = 0; B is tilted, z = x: B is nearer for x > 0.
    let cam = Camera::new(View::Front, [0.0; 3], 60.0, 240, 240);
    let n = [[0.0; 3]; 3];
    let a = [[-1.5, -1.5, 0.0], [1.5, -1.5, 0.0], [0.0, 1.5, 0.0]];
    let b = [[-1.5, -1.2, -1.5], [1.5, -1.2, 1.5], [0.0, 1.2, 0.0]];
    let (red, blue) = ([200, 0, 0], [0, 0, 200]);
    for order in [false, true] {
        let mut c = Canvas::new(cam, BG);
        if order {
            c.draw_triangle(a, n, &flat(red));
            c.draw_triangle(b, n, &flat(blue));
        } else {
            c.draw_triangle(b, n, &flat(blue));
            c.draw_triangle(a, n, &flat(red));
        }
        for (x, want) in [(-0.3, red), (-0.1, red), (0.1, blue), (0.3, blue)] {
            let p = cam.project([x, 0.0, 0.0]);
            let got = c.image().pixel(p[0] as u32, p[1] as u32).unwrap();
            assert_eq!(got, want, "x = {x}, order {order}");
        }
    }
}

#[test]
fn two_sided_shading_colours_front_and_back() {
    let cam = Camera::new(View::Front, [0.0; 3], 40.0, 100, 100);
    let m = Material {
        front: [250, 10, 10],
        back: [10, 10, 250],
        ambient: 1.0,
    };
    let ccw = [[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]]; // normal +z, towards eye
    let cw = [ccw[0], ccw[2], ccw[1]];
    for (tri, want) in [(ccw, m.front), (cw, m.back)] {
        let mut c = Canvas::new(cam, BG);
        c.draw_triangle(tri, [[0.0; 3]; 3], &m);
        assert_eq!(c.image().pixel(50, 55).unwrap(), want);
    }
    // Diffuse: a surface lit at grazing angle is darker than one facing the light.
    let lit = Material { ambient: 0.2, ..m };
    let mut c = Canvas::new(cam, BG);
    c.draw_triangle(ccw, [[0.0, 0.0, 1.0]; 3], &lit);
    let facing = c.image().pixel(50, 55).unwrap()[0];
    let mut c = Canvas::new(cam, BG);
    c.draw_triangle(ccw, [[0.0, -1.0, 0.05]; 3], &lit);
    let away = c.image().pixel(50, 55).unwrap()[0];
    assert!(facing > away, "{facing} vs {away}");
    assert!(f64::from(away) >= 0.2 * 250.0 - 1.0, "ambient floor");
}

#[test]
fn shared_edges_are_drawn_once() {
    // A fan of triangles around a centre, drawn additively via a counting trick: each triangle
    // in its own canvas; per pixel, the number of covering triangles must be at most 1.
    let cam = Camera::new(View::Front, [0.013, 0.007, 0.0], 97.0, 160, 160);
    let centre = [0.0, 0.0, 0.0];
    let k = 9;
    let ring: Vec<[f64; 3]> = (0..k)
        .map(|i| {
            let a = i as f64 * std::f64::consts::TAU / k as f64;
            [0.7 * a.cos(), 0.7 * a.sin(), 0.0]
        })
        .collect();
    let mut counts = vec![0u8; 160 * 160];
    let mut union = Canvas::new(cam, BG);
    for i in 0..k {
        let t = [centre, ring[i], ring[(i + 1) % k]];
        let mut c = Canvas::new(cam, BG);
        c.draw_triangle(t, [[0.0; 3]; 3], &flat([9, 9, 9]));
        union.draw_triangle(t, [[0.0; 3]; 3], &flat([9, 9, 9]));
        for (n, p) in counts.iter_mut().zip(c.image().rgb.chunks_exact(3)) {
            *n += u8::from(p != BG);
        }
    }
    assert!(counts.iter().all(|&n| n <= 1), "a pixel was covered twice");
    // No cracks: every pixel inside the polygon (away from its rim) is covered.
    let inner = 0.7 * (std::f64::consts::PI / k as f64).cos() - 0.03;
    for y in 0..160 {
        for x in 0..160 {
            let px = (x as f64 + 0.5 - 80.0) / 97.0 + 0.013;
            let py = (80.0 - y as f64 - 0.5) / 97.0 + 0.007;
            if (px * px + py * py).sqrt() < inner {
                assert_eq!(counts[y * 160 + x], 1, "crack at pixel ({x}, {y})");
            }
        }
    }
}

/// A jittered triangle grid: every pixel centre inside is covered by exactly one triangle.
fn grid_coverage_case(n: usize, jitter: &[f64], view: View, scale: f64) {
    let cam = Camera::new(view, [0.0; 3], scale, 96, 96);
    let (r, u) = (cam.right, cam.up);
    let at = |i: usize, j: usize| -> [f64; 3] {
        let interior = i > 0 && j > 0 && i < n && j < n;
        let (dx, dy) = if interior {
            (
                jitter[(i * 31 + j) % jitter.len()],
                jitter[(i * 17 + j * 5 + 3) % jitter.len()],
            )
        } else {
            (0.0, 0.0)
        };
        let a = (j as f64 + dx) / n as f64 - 0.5;
        let b = (i as f64 + dy) / n as f64 - 0.5;
        std::array::from_fn(|k| a * r[k] + b * u[k])
    };
    let mut counts = vec![0u32; 96 * 96];
    for i in 0..n {
        for j in 0..n {
            for t in [
                [at(i, j), at(i, j + 1), at(i + 1, j + 1)],
                [at(i, j), at(i + 1, j + 1), at(i + 1, j)],
            ] {
                let mut c = Canvas::new(cam, BG);
                c.draw_triangle(t, [[0.0; 3]; 3], &flat([1, 1, 1]));
                for (k, p) in c.image().rgb.chunks_exact(3).enumerate() {
                    counts[k] += u32::from(p != BG);
                }
            }
        }
    }
    let half = 0.5 * scale;
    for y in 0..96 {
        for x in 0..96 {
            let (px, py) = (x as f64 + 0.5 - 48.0, y as f64 + 0.5 - 48.0);
            if px.abs() < half - 1.0 && py.abs() < half - 1.0 {
                assert_eq!(
                    counts[y * 96 + x],
                    1,
                    "{view} scale {scale}: pixel ({x}, {y})"
                );
            } else if px.abs() > half + 1.0 || py.abs() > half + 1.0 {
                assert_eq!(counts[y * 96 + x], 0);
            }
        }
    }
}

/// Regression: pixel centres lying exactly on a shared diagonal were dropped by both triangles
/// when the two evaluated the edge function with opposite vertex order (rounding differs).
#[test]
fn pixel_centres_on_shared_diagonals_are_covered_once() {
    for view in [View::Front, View::Side, View::Top, View::Iso] {
        for (n, scale) in [(8, 86.4), (10, 86.4), (8, 64.8), (5, 81.0)] {
            grid_coverage_case(n, &[0.0], view, scale);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn meshes_render_without_cracks_or_double_cover(
        n in 4usize..12,
        // |jitter| <= 0.2 cell moves two vertices by at most 0.57 cell, less than a triangle's
        // height (0.71): no triangle folds over, so exact single cover is the right answer.
        jitter in prop::collection::vec(-0.2f64..0.2, 16),
        view in prop::sample::select(vec![View::Front, View::Side, View::Top, View::Iso]),
        scale in 40.0f64..90.0,
    ) {
        grid_coverage_case(n, &jitter, view, scale);
    }
}

/// Anti-aliasing: with supersampling, partial coverage becomes intermediate intensity, so the
/// summed intensity of a white unit square on black measures its area (scale^2) more precisely
/// than pixel counting.
#[test]
fn supersampled_frame_conserves_covered_area() {
    let anim = Animation {
        frame_numbers: vec![0],
        positions: vec![vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 1.0, 0.0],
            [0.0, 1.0, 0.0],
        ]],
        triangles: vec![[0, 1, 2], [0, 2, 3]],
        uvs: vec![],
        triangle_uvs: None,
        cloths: vec![],
        colliders: vec![],
        fps: 30.0,
    };
    let white = flat([255, 255, 255]);
    for (k, tolerance) in [(1, 0.02), (2, 0.006), (4, 0.003)] {
        let style = Style {
            background: BG,
            cloth: white,
            supersample: k,
            ..Style::default()
        };
        // Edges at fractional pixel positions; the rotation makes every edge slanted.
        let mut cam = Camera::new(View::Front, [0.4567, 0.5123, 0.0], 41.3, 80, 80);
        let (s, c) = 0.3f64.sin_cos();
        cam.right = [c, s, 0.0];
        cam.up = [-s, c, 0.0];
        let img = render_frame(&anim, 0, &cam, &style, &[]);
        assert_eq!((img.width, img.height), (80, 80));
        let area: f64 = img
            .rgb
            .chunks_exact(3)
            .map(|p| f64::from(p[0]) / 255.0)
            .sum();
        let expected = 41.3 * 41.3;
        assert!(
            (area - expected).abs() <= tolerance * expected,
            "supersample {k}: {area} vs {expected}"
        );
        if k > 1 {
            let partial = img
                .rgb
                .chunks_exact(3)
                .filter(|p| p[0] > 0 && p[0] < 255)
                .count();
            assert!(partial > 100, "supersample {k}: edges not anti-aliased");
        }
    }
}

#[test]
fn ground_grid_lies_on_the_lowest_plane_and_spans_the_box() {
    let b = Aabb {
        min: [-0.3, 0.2, 1.0],
        max: [1.1, 1.4, 1.6],
    };
    let lines = ground_grid(&b);
    assert!(lines.len() >= 10);
    for (a, c) in &lines {
        assert_eq!(a[1], 0.2);
        assert_eq!(c[1], 0.2);
    }
    let g = Aabb::of_points(lines.iter().flat_map(|(a, c)| [a, c]));
    assert!(g.min[0] <= b.min[0] && g.max[0] >= b.max[0]);
    assert!(g.min[2] <= b.min[2] && g.max[2] >= b.max[2]);
}

// ---------------------------------------------------------------- quantisation

#[test]
fn gif_palette_colours_quantize_to_themselves_and_dithering_keeps_means() {
    let exact = [[235, 238, 242], [160, 165, 175]];
    let pal = gif_palette(&exact);
    assert_eq!(pal.len(), 3 * (252 + exact.len()));
    // Every palette colour on a 4x4 block maps to its own index everywhere (exact colours to
    // their reserved slots).
    for (i, c) in pal.chunks_exact(3).enumerate() {
        let img = Image::filled(4, 4, [c[0], c[1], c[2]]);
        assert!(
            quantize(&img, &exact).iter().all(|&q| usize::from(q) == i),
            "colour {i}"
        );
    }
    // A smooth gradient: block means of the dithered image follow the original.
    let (w, h) = (256u32, 8u32);
    let mut img = Image::filled(w, h, [0, 0, 0]);
    for y in 0..h as usize {
        for x in 0..w as usize {
            let v = x as u8;
            img.rgb[3 * (y * w as usize + x)..][..3].copy_from_slice(&[v, 255 - v, v / 2]);
        }
    }
    let q = quantize(&img, &[]);
    for bx in (0..w as usize).step_by(4) {
        for ch in 0..3 {
            let (mut orig, mut got) = (0.0, 0.0);
            for y in 0..4 {
                for x in bx..bx + 4 {
                    let i = y * w as usize + x;
                    orig += f64::from(img.rgb[3 * i + ch]);
                    got += f64::from(pal[3 * usize::from(q[i]) + ch]);
                }
            }
            assert!((orig - got).abs() / 16.0 < 10.0, "block {bx} channel {ch}");
        }
    }
}

// ---------------------------------------------------------------- end to end: render

/// The sorted file names in `dir`.
fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

fn decode_png(path: &Path) -> (png::OutputInfo, Vec<u8>) {
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut reader = png::Decoder::new(file).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info, buf)
}

#[test]
fn png_sequence_decodes_with_requested_size_and_count() {
    let tmp = TempDir::new("png");
    let run = sheet(6, 7, 24.0);
    write_run(tmp.path(), &run, true);
    let out = tmp.path().join("pngs");
    let opts = RenderOptions {
        view: View::Iso,
        width: 120,
        height: 90,
        every: 3,
    };
    // An earlier render of all 7 frames leaves frame_0000..frame_0006; other files stay.
    let all = render(tmp.path(), &out, &RenderOptions { every: 1, ..opts }).unwrap();
    assert_eq!(all.images, 7);
    std::fs::write(out.join("notes.txt"), "keep").unwrap();
    std::fs::write(out.join("frame_12.png"), "not one of ours").unwrap();
    let summary = render(tmp.path(), &out, &opts).unwrap();
    assert_eq!(summary.images, 3); // frames 0, 3, 6
    assert_eq!(summary.frames, vec![0, 3, 6]);
    assert!((summary.frame_seconds - 3.0 / 24.0).abs() < 1e-15);
    let mut names = file_names(&out);
    assert_eq!(
        names,
        [
            "frame_0000.png",
            "frame_0003.png",
            "frame_0006.png",
            "frame_12.png",
            "notes.txt"
        ]
    );
    names.truncate(3);
    let style = Style::default();
    for (path, name) in summary.outputs.iter().zip(&names) {
        assert!(path.ends_with(name));
        let (info, data) = decode_png(path);
        assert_eq!((info.width, info.height), (120, 90));
        assert_eq!(info.color_type, png::ColorType::Rgb);
        assert_eq!(info.bit_depth, png::BitDepth::Eight);
        // Something besides background and grid was drawn.
        let drawn = data
            .chunks_exact(3)
            .filter(|p| *p != style.background && *p != style.grid)
            .count();
        assert!(drawn > 200, "{name}: only {drawn} shaded pixels");
    }
}

/// Pixels of `data` (RGB) shaded in a cloth colour of [`Style::default`]: clearly red
/// (front) or clearly blue (back), unlike the grey background and grid.
fn cloth_pixels(data: &[u8]) -> usize {
    data.chunks_exact(3)
        .filter(|p| {
            let (r, b) = (i32::from(p[0]), i32::from(p[2]));
            (r - b).abs() > 30
        })
        .count()
}

/// A run that starts as a flat horizontal sheet, as the paper's Figure 2 does, shows the sheet
/// in every frame of the default view ([`RenderOptions::default`], the `iso` camera of `cloth
/// render` and `cloth run --render`): the camera looks down from above the horizon and is
/// framed on all frames, so the first frame is not a sheet seen edge-on. (The `front` and
/// `side` views look horizontally and do see such a sheet edge-on.)
#[test]
fn the_default_view_shows_a_flat_horizontal_sheet_in_every_frame() {
    let tmp = TempDir::new("flat");
    let n = 11;
    let mut run = sheet(n, 3, 30.0);
    let uw = |v: usize| {
        (
            (v % n) as f64 / (n - 1) as f64,
            (v / n) as f64 / (n - 1) as f64,
        )
    };
    for (k, frame) in run.positions.iter_mut().enumerate() {
        // Frame 0 flat at y = 1 in the x-z plane, then swinging down about its z = 0 edge to
        // hang in the x-y plane.
        let angle = k as f64 / 2.0 * std::f64::consts::FRAC_PI_2;
        for (v, p) in frame.iter_mut().enumerate() {
            let (u, w) = uw(v);
            *p = [u, 1.0 - w * angle.sin(), w * angle.cos()];
        }
    }
    assert!(run.positions[0].iter().all(|p| p[1] == 1.0));
    write_run(tmp.path(), &run, false);
    let opts = RenderOptions::default();
    assert_eq!(opts.view, View::Iso);
    let summary = render(tmp.path(), tmp.path().join("pngs"), &opts).unwrap();
    assert_eq!(summary.images, 3);
    for path in &summary.outputs {
        let (info, data) = decode_png(path);
        let pixels = (info.width * info.height) as usize;
        let cloth = cloth_pixels(&data);
        assert!(
            cloth > pixels / 20,
            "{}: {cloth} cloth pixels of {pixels}",
            path.display()
        );
    }
    // The front view, by contrast, sees the first frame edge-on.
    let front = RenderOptions {
        view: View::Front,
        ..opts
    };
    let summary = render(tmp.path(), tmp.path().join("front"), &front).unwrap();
    let (info, data) = decode_png(&summary.outputs[0]);
    assert!(cloth_pixels(&data) < (info.width * info.height) as usize / 100);
}

#[test]
fn camera_frames_the_whole_animation() {
    let tmp = TempDir::new("framing");
    let run = sheet(5, 9, 10.0); // falls about 3.5 m
    write_run(tmp.path(), &run, true);
    let opts = RenderOptions {
        view: View::Front,
        width: 100,
        height: 80,
        every: 1,
    };
    let summary = render(tmp.path(), tmp.path().join("x.gif"), &opts).unwrap();
    let anim = load_animation(tmp.path()).unwrap();
    let style = Style::default();
    let margin = 2;
    for i in 0..anim.len() {
        // Without the grid, only cloth and colliders are drawn: the image border stays empty.
        let img = render_frame(&anim, i, &summary.camera, &style, &[]);
        for y in 0..img.height {
            for x in 0..img.width {
                let border =
                    x < margin || y < margin || x >= img.width - margin || y >= img.height - margin;
                if border {
                    assert_eq!(
                        img.pixel(x, y).unwrap(),
                        style.background,
                        "frame {i} ({x}, {y})"
                    );
                }
            }
        }
    }
    // The first frame is near the top, the last near the bottom of the image.
    let rows = |i: usize| {
        let img = render_frame(&anim, i, &summary.camera, &style, &[]);
        let ys: Vec<u32> = (0..img.height)
            .filter(|&y| (0..img.width).any(|x| img.pixel(x, y).unwrap() != style.background))
            .collect();
        (ys[0], *ys.last().unwrap())
    };
    assert!(
        rows(0).0 <= 6,
        "first frame should touch the top margin: {:?}",
        rows(0)
    );
    assert!(
        rows(anim.len() - 1).1 >= 80 - 7,
        "{:?}",
        rows(anim.len() - 1)
    );
    let b = animation_bounds(&anim);
    assert!(b.min[1] < -2.0 && b.max[1] > 1.0);
}

#[test]
fn gif_decodes_with_requested_size_frame_count_and_delays() {
    let tmp = TempDir::new("gif");
    let run = sheet(6, 7, 25.0);
    write_run(tmp.path(), &run, true);
    let out = tmp.path().join("anim.GIF");
    let opts = RenderOptions {
        view: View::Top,
        width: 96,
        height: 64,
        every: 2,
    };
    let summary = render(tmp.path(), &out, &opts).unwrap();
    assert_eq!(summary.outputs, vec![out.clone()]);
    // Nothing but the GIF was written.
    let extra: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.ends_with(".obj") && !n.ends_with(".json"))
        .collect();
    assert_eq!(extra, ["anim.GIF"]);

    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut decoder = options
        .read_info(std::fs::File::open(&out).unwrap())
        .unwrap();
    assert_eq!((decoder.width(), decoder.height()), (96, 64));
    let anim = load_animation(tmp.path()).unwrap();
    let mut count = 0;
    let mut total_delay = 0u32;
    while let Some(frame) = decoder.read_next_frame().unwrap() {
        assert_eq!((frame.width, frame.height), (96, 64));
        total_delay += u32::from(frame.delay);
        // The decoded colours follow the true-colour render: ordered dithering keeps the means
        // of 4x4 blocks close (per-pixel errors are up to half a palette step).
        let grid = ground_grid(&animation_bounds(&anim));
        let truth = render_frame(&anim, 2 * count, &summary.camera, &Style::default(), &grid);
        let (mut err, mut blocks) = (0.0, 0.0);
        for by in (0..64).step_by(4) {
            for bx in (0..96).step_by(4) {
                for ch in 0..3 {
                    let (mut g, mut t) = (0.0, 0.0);
                    for y in by..by + 4 {
                        for x in bx..bx + 4 {
                            g += f64::from(frame.buffer[4 * (y * 96 + x) + ch]);
                            t += f64::from(truth.rgb[3 * (y * 96 + x) + ch]);
                        }
                    }
                    err += (g - t).abs() / 16.0;
                    blocks += 1.0;
                }
            }
        }
        assert!(
            err / blocks < 6.0,
            "frame {count}: mean block error {}",
            err / blocks
        );
        count += 1;
    }
    assert_eq!(count, 4); // frames 0, 2, 4, 6
    // 4 images of 2/25 s = 0.32 s = 32 centiseconds.
    assert_eq!(total_delay, 32);
}

#[test]
fn rendering_is_identical_for_any_thread_count() {
    let tmp = TempDir::new("threads");
    let run = sheet(8, 6, 30.0);
    write_run(tmp.path(), &run, true);
    let opts = RenderOptions {
        view: View::Iso,
        width: 80,
        height: 60,
        every: 1,
    };
    let mut outputs = Vec::new();
    for threads in [1, 2, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let out = tmp.path().join(format!("t{threads}.gif"));
        pool.install(|| render(tmp.path(), &out, &opts)).unwrap();
        outputs.push(std::fs::read(&out).unwrap());
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
}

// ---------------------------------------------------------------- USD

/// Innermost parenthesised number tuples in `s`, in order.
fn tuples(s: &str) -> Vec<Vec<f64>> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, ch) in s.char_indices() {
        match ch {
            '(' => start = Some(i + 1),
            ')' => {
                if let Some(b) = start.take() {
                    out.push(
                        s[b..i]
                            .split(',')
                            .map(|x| x.trim().parse::<f64>().unwrap())
                            .collect(),
                    );
                }
            }
            _ => {}
        }
    }
    out
}

/// The body of prim `def Mesh "<name>"` (up to its closing brace at 4 spaces).
fn prim<'a>(text: &'a str, name: &str) -> &'a str {
    let head = format!("def Mesh \"{name}\"");
    let start = text.find(&head).unwrap_or_else(|| panic!("no prim {name}"));
    let end = text[start..].find("\n    }").unwrap() + start;
    &text[start..end]
}

/// `time -> tuples` of a `.timeSamples = { ... }` block of `attr` in `body`.
fn samples(body: &str, attr: &str) -> Vec<(usize, Vec<Vec<f64>>)> {
    let head = format!("{attr}.timeSamples = {{");
    let start = body.find(&head).unwrap_or_else(|| panic!("no {head}")) + head.len();
    let end = body[start..].find("\n        }").unwrap() + start;
    body[start..end]
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap();
            (k.trim().parse().unwrap(), tuples(v))
        })
        .collect()
}

fn ints(body: &str, attr: &str) -> Vec<usize> {
    let head = format!("int[] {attr} = [");
    let start = body.find(&head).unwrap() + head.len();
    let end = body[start..].find(']').unwrap() + start;
    body[start..end]
        .split(',')
        .map(|x| x.trim().parse().unwrap())
        .collect()
}

#[test]
fn usd_points_and_transforms_round_trip() {
    let tmp = TempDir::new("usd");
    let run = sheet(5, 4, 24.0);
    write_run(tmp.path(), &run, true);
    let out = tmp.path().join("run.usda");
    write_usd(tmp.path(), &out).unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("#usda 1.0\n"));
    for needle in [
        "upAxis = \"Y\"",
        "metersPerUnit = 1\n",
        "timeCodesPerSecond = 24\n",
        "startTimeCode = 0\n",
        "endTimeCode = 3\n",
    ] {
        assert!(text.contains(needle), "missing {needle:?}");
    }
    // No temporary file left behind.
    let leftovers = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".tmp")
        })
        .count();
    assert_eq!(leftovers, 0);

    let cloth = prim(&text, "cloth");
    let pts = samples(cloth, "point3f[] points");
    assert_eq!(pts.len(), run.positions.len());
    for (k, p) in &pts {
        let want: Vec<Vec<f64>> = run.positions[*k].iter().map(|q| q.to_vec()).collect();
        assert_eq!(p, &want, "points at time {k}");
    }
    assert_eq!(
        ints(cloth, "faceVertexCounts"),
        vec![3; run.triangles.len()]
    );
    let fvi = ints(cloth, "faceVertexIndices");
    assert_eq!(
        fvi,
        run.triangles.iter().flatten().copied().collect::<Vec<_>>()
    );
    // Texture coordinates: per corner, st[indices[c]] = uv of the corner's vertex.
    let st_line = cloth
        .lines()
        .find(|l| l.contains("texCoord2f[] primvars:st"))
        .unwrap();
    let st = tuples(st_line.split_once('=').unwrap().1);
    let st_idx = ints(cloth, "primvars:st:indices");
    for (c, &v) in fvi.iter().enumerate() {
        assert_eq!(st[st_idx[c]], run.uvs[v].to_vec());
    }
    assert!(cloth.contains("interpolation = \"faceVarying\""));

    // Colliders: names made valid identifiers; transform rows follow USD's row-vector convention.
    let (cv, _) = cube();
    let body = prim(&text, "box_1");
    let mats = samples(body, "matrix4d xformOp:transform");
    assert_eq!(mats.len(), run.positions.len());
    for (k, m) in &mats {
        let expected = rot_y(0.3 * *k as f64, [0.5, 0.3 - 0.01 * *k as f64, 0.5]);
        assert_eq!(m.len(), 4);
        for p in &cv {
            // world = [p 1] * M (row vector) must equal R p + t.
            let usd: Vec<f64> = (0..4)
                .map(|j| (0..3).map(|i| p[i] * m[i][j]).sum::<f64>() + m[3][j])
                .collect();
            for r in 0..3 {
                let want = (0..3).map(|c| expected[r][c] * p[c]).sum::<f64>() + expected[r][3];
                assert!((usd[r] - want).abs() < 1e-12, "time {k}");
            }
            assert!((usd[3] - 1.0).abs() < 1e-15);
        }
    }
    assert!(body.contains("uniform token[] xformOpOrder = [\"xformOp:transform\"]"));
    // The deforming collider has per-frame points: given ones, else the rest vertices.
    let tet = prim(&text, "_2tet");
    for (k, p) in samples(tet, "point3f[] points") {
        let want = if k % 2 == 0 {
            tetra_frame(k)
        } else {
            tetra_frame(0)
        };
        assert_eq!(
            p,
            want.iter().map(|q| q.to_vec()).collect::<Vec<_>>(),
            "tet time {k}"
        );
    }
}

/// The Python (env `CLOTH_PYTHON`, default `python3`) if it can import `pxr`; otherwise
/// prints why test `test` is skipped and returns `None`.
fn pxr_python(test: &str) -> Option<String> {
    let python = std::env::var("CLOTH_PYTHON").unwrap_or_else(|_| "python3".into());
    match std::process::Command::new(&python)
        .args(["-c", "import pxr.Usd"])
        .output()
    {
        Ok(o) if o.status.success() => Some(python),
        Ok(_) => {
            eprintln!("SKIP {test}: `{python}` cannot import pxr (pip install usd-core)");
            None
        }
        Err(e) => {
            eprintln!("SKIP {test}: cannot run `{python}`: {e}");
            None
        }
    }
}

/// Runs the Python `script` with the stage `stage` as its argument; it must succeed.
fn run_pxr(python: &str, script: &str, stage: &std::path::Path) {
    let result = std::process::Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(stage)
        .output()
        .unwrap();
    assert!(
        result.status.success(),
        "pxr check failed:\n{}\n{}",
        String::from_utf8_lossy(&result.stdout),
        String::from_utf8_lossy(&result.stderr)
    );
}

/// Runs `python` (env `CLOTH_PYTHON`, default `python3`) with `pxr` on the exported stage, if
/// the module is importable; prints a skip reason otherwise.
#[test]
fn usd_opens_in_pxr_when_available() {
    let Some(python) = pxr_python("usd_opens_in_pxr_when_available") else {
        return;
    };
    let tmp = TempDir::new("pxr");
    let run = sheet(4, 3, 30.0);
    write_run(tmp.path(), &run, true);
    let out = tmp.path().join("stage.usda");
    write_usd(tmp.path(), &out).unwrap();
    let expected: Vec<String> = run
        .positions
        .iter()
        .map(|f| format!("{:?}", f.iter().map(|p| p.to_vec()).collect::<Vec<_>>()))
        .collect();
    let (cv, _) = cube();
    let script = format!(
        r#"
import sys
from pxr import Usd, UsdGeom, Gf
stage = Usd.Stage.Open(sys.argv[1])
assert stage is not None
assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y
assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0
assert stage.GetTimeCodesPerSecond() == 30.0
assert stage.GetStartTimeCode() == 0 and stage.GetEndTimeCode() == {last}
mesh = UsdGeom.Mesh(stage.GetPrimAtPath("/World/cloth"))
expected = [{expected}]
for k, frame in enumerate(expected):
    pts = mesh.GetPointsAttr().Get(k)
    assert len(pts) == len(frame), (k, len(pts))
    for p, q in zip(pts, frame):
        assert all(abs(p[i] - q[i]) < 1e-6 for i in range(3)), (k, p, q)
st = UsdGeom.PrimvarsAPI(mesh).GetPrimvar("st")
assert st.IsIndexed() and st.GetInterpolation() == "faceVarying"
try:
    from pxr import UsdValidation
except ImportError:
    UsdValidation = None
if UsdValidation is not None:
    validators = UsdValidation.ValidationRegistry().GetOrLoadAllValidators()
    errors = UsdValidation.ValidationContext(validators).Validate(stage)
    assert not errors, [e.GetMessage() for e in errors]
assert len(st.ComputeFlattened()) == 3 * len(mesh.GetFaceVertexCountsAttr().Get())
box = UsdGeom.Xformable(stage.GetPrimAtPath("/World/box_1"))
cube = {cube:?}
import math
for k in range({frames}):
    m = box.ComputeLocalToWorldTransform(k)
    a = 0.3 * k
    t = (0.5, 0.3 - 0.01 * k, 0.5)
    for p in cube:
        w = m.Transform(Gf.Vec3d(*p))
        want = (math.cos(a) * p[0] + math.sin(a) * p[2] + t[0], p[1] + t[1], -math.sin(a) * p[0] + math.cos(a) * p[2] + t[2])
        assert all(abs(w[i] - want[i]) < 1e-9 for i in range(3)), (k, w, want)
print("ok")
"#,
        last = run.positions.len() - 1,
        expected = expected.join(", "),
        cube = cv.iter().map(|p| p.to_vec()).collect::<Vec<_>>(),
        frames = run.positions.len(),
    );
    run_pxr(&python, &script, &out);
}

// ---------------------------------------------------------------- plots

/// Trimmed contents of the `<text>` elements of an SVG document.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let start = t.find('>')? + 1;
            let end = t.find("</text>")?;
            Some(t[start..end].trim().to_string())
        })
        .collect()
}

#[test]
fn plots_are_svgs_with_one_point_per_frame() {
    let tmp = TempDir::new("plot");
    let run = sheet(3, 7, 30.0); // 6 simulated frames
    write_run(tmp.path(), &run, false);
    let out = tmp.path().join("plots");
    let files = plot(tmp.path(), &out).unwrap();
    assert_eq!(files.len(), PLOT_FILES.len());
    for (f, name) in files.iter().zip(PLOT_FILES) {
        assert!(f.ends_with(name));
        let svg = std::fs::read_to_string(f).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{name}"
        );
        // Every curve has one vertex per simulated frame.
        let polylines = curve_lengths(&svg);
        assert!(!polylines.is_empty(), "{name}: no curve");
        assert!(polylines.iter().all(|&n| n == 6), "{name}: {polylines:?}");
    }
    let time_split = std::fs::read_to_string(out.join("time_split.svg")).unwrap();
    let texts = svg_texts(&time_split);
    for label in ["EVAL", "CG", "C/C", "C/S", "other"] {
        assert!(
            texts.iter().any(|t| t == label),
            "legend {label} in {texts:?}"
        );
    }
    let step = svg_texts(&std::fs::read_to_string(out.join("step_size.svg")).unwrap());
    assert!(step.iter().any(|t| t == "h_min") && step.iter().any(|t| t == "h_max"));
    let rejections = svg_texts(&std::fs::read_to_string(out.join("rejections.svg")).unwrap());
    for label in [
        "stretch change",
        "not positive definite",
        "factorization",
        "penetration",
    ] {
        assert!(
            rejections.iter().any(|t| t == label),
            "legend {label} in {rejections:?}"
        );
    }
}

/// Vertex counts of the curves of an SVG document (axis ticks are short polylines).
fn curve_lengths(svg: &str) -> Vec<usize> {
    svg.match_indices("<polyline")
        .map(|(i, _)| {
            let rest = &svg[i..];
            let p = rest.find("points=\"").unwrap() + 8;
            let end = rest[p..].find('"').unwrap();
            rest[p..p + end].split_whitespace().count()
        })
        .filter(|&n| n > 2)
        .collect()
}

#[test]
fn plots_read_the_run_report_schema_and_name_bad_json() {
    let tmp = TempDir::new("plot-missing");
    // Missing fields take the schema's defaults; frames that took no step are left out of the
    // step-size curves.
    std::fs::write(
        tmp.path().join("stats.json"),
        r#"{"frames": [{"frame": 1, "time": 0.1, "steps": 2, "h_min": 0.01, "h_max": 0.02},
                       {"frame": 2, "time": 0.2},
                       {"frame": 3, "time": 0.3, "steps": 1, "h_min": 0.01, "h_max": 0.01},
                       {"frame": 4, "time": 0.4, "steps": 1, "h_min": 0.01, "h_max": 0.01}]}"#,
    )
    .unwrap();
    let files = plot(tmp.path(), tmp.path().join("p")).unwrap();
    assert_eq!(files.len(), PLOT_FILES.len());
    let step = std::fs::read_to_string(&files[0]).unwrap();
    assert_eq!(curve_lengths(&step), [3, 3]);
    let energy = std::fs::read_to_string(&files[2]).unwrap();
    assert_eq!(curve_lengths(&energy), [4]);

    std::fs::write(
        tmp.path().join("stats.json"),
        "{\n  \"frames\": [\n  oops\n]}",
    )
    .unwrap();
    let err = plot(tmp.path(), tmp.path().join("p")).unwrap_err();
    assert!(
        matches!(&err, ViewError::Stats { path, .. } if path.ends_with("stats.json")),
        "{err}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("stats.json") && msg.contains("line 3"),
        "{msg}"
    );
    assert!(!msg.contains('\n'), "{msg}");
    // No stats.json: plotting needs one.
    std::fs::remove_file(tmp.path().join("stats.json")).unwrap();
    assert!(matches!(
        plot(tmp.path(), tmp.path().join("p")),
        Err(ViewError::Stats { .. })
    ));
}

#[test]
fn fps_is_the_run_reports_or_the_scene_default() {
    let tmp = TempDir::new("fps");
    assert_eq!(read_fps(tmp.path()).unwrap(), 30.0);
    let run = sheet(3, 2, 24.0);
    write_run(tmp.path(), &run, false);
    assert_eq!(read_fps(tmp.path()).unwrap(), 24.0);
    assert_eq!(load_animation(tmp.path()).unwrap().fps, 24.0);
    // Older reports without the field read with the schema's default.
    std::fs::write(tmp.path().join("stats.json"), r#"{"frames": []}"#).unwrap();
    assert_eq!(read_fps(tmp.path()).unwrap(), 30.0);
    std::fs::write(tmp.path().join("stats.json"), r#"{"fps": 0}"#).unwrap();
    assert!(matches!(
        read_fps(tmp.path()),
        Err(ViewError::BadFps { fps, .. }) if fps == 0.0
    ));
    std::fs::write(tmp.path().join("stats.json"), "not json").unwrap();
    assert!(matches!(
        load_animation(tmp.path()),
        Err(ViewError::Stats { .. })
    ));
}

// ---------------------------------------------------------------- bad input

#[test]
fn directory_without_frames_is_reported() {
    let tmp = TempDir::new("empty");
    // Only the names the simulator writes (cloth_sim::output::frame_path) are frames.
    for name in [
        "frame_x.obj",
        "frame_7.obj",
        "frame_+0001.obj",
        "frame_0001.obj.bak",
    ] {
        std::fs::write(tmp.path().join(name), "v 0 0 0\n").unwrap();
    }
    std::fs::write(tmp.path().join("notes.txt"), "hello").unwrap();
    let err = render(
        tmp.path(),
        tmp.path().join("a.gif"),
        &RenderOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&err, ViewError::NoFrames { dir } if dir == tmp.path()),
        "{err}"
    );
    assert!(err.to_string().contains("no frame_NNNN.obj"));
    let err = write_usd(tmp.path(), tmp.path().join("a.usda")).unwrap_err();
    assert!(matches!(err, ViewError::NoFrames { .. }));
    assert!(!tmp.path().join("a.gif").exists() && !tmp.path().join("a.usda").exists());
}

#[test]
fn mismatched_vertex_count_names_the_frame() {
    let tmp = TempDir::new("mismatch");
    let run = sheet(4, 5, 30.0);
    write_run(tmp.path(), &run, false);
    let mut text = obj_text(&run, 3);
    text.push_str("v 9 9 9\n");
    std::fs::write(tmp.path().join("frame_0003.obj"), text).unwrap();
    let err = write_usd(tmp.path(), tmp.path().join("x.usda")).unwrap_err();
    match &err {
        ViewError::VertexCountMismatch {
            frame,
            expected,
            found,
        } => assert_eq!((*frame, *expected, *found), (3, 16, 17)),
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("frame 3 has 17 vertices"), "{err}");
    assert!(!tmp.path().join("x.usda").exists());
}

#[test]
fn changed_topology_names_frame_and_triangle() {
    let tmp = TempDir::new("topology");
    let mut run = sheet(3, 3, 30.0);
    write_run(tmp.path(), &run, false);
    run.triangles[5] = [0, 1, 2];
    std::fs::write(tmp.path().join("frame_0002.obj"), obj_text(&run, 2)).unwrap();
    match render(tmp.path(), tmp.path().join("o"), &RenderOptions::default()) {
        Err(ViewError::TriangleMismatch {
            frame: 2,
            triangle: 5,
            found,
            ..
        }) => {
            assert_eq!(found, [0, 1, 2])
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_view_names_value_and_choices() {
    let err = "diagonal".parse::<View>().unwrap_err();
    assert!(matches!(&err, ViewError::BadView(v) if v == "diagonal"));
    let msg = err.to_string();
    for word in ["diagonal", "front", "side", "top", "iso"] {
        assert!(msg.contains(word), "{msg}");
    }
    for (s, v) in [
        ("front", View::Front),
        ("Side", View::Side),
        (" top ", View::Top),
        ("ISO", View::Iso),
    ] {
        assert_eq!(s.parse::<View>().unwrap(), v);
        assert_eq!(v.to_string().parse::<View>().unwrap(), v);
    }
}

#[test]
fn bad_render_options_are_rejected_before_reading() {
    let tmp = TempDir::new("opts");
    let run = sheet(3, 2, 30.0);
    write_run(tmp.path(), &run, false);
    for (opts, name) in [
        (
            RenderOptions {
                every: 0,
                ..Default::default()
            },
            "every",
        ),
        (
            RenderOptions {
                width: 0,
                ..Default::default()
            },
            "width",
        ),
        (
            RenderOptions {
                height: 70000,
                ..Default::default()
            },
            "height",
        ),
    ] {
        match render(tmp.path(), tmp.path().join("a.gif"), &opts) {
            Err(ViewError::BadOption { name: n, .. }) => assert_eq!(n, name),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn frames_are_listed_by_frame_number() {
    let tmp = TempDir::new("list");
    for k in [10, 2, 0, 12345] {
        std::fs::write(cloth_sim::output::frame_path(tmp.path(), k), "").unwrap();
    }
    std::fs::write(tmp.path().join("frame_3.obj"), "").unwrap();
    let frames = list_frames(tmp.path()).unwrap();
    let numbers: Vec<usize> = frames.iter().map(|f| f.0).collect();
    assert_eq!(numbers, [0, 2, 10, 12345]);
    for (k, path) in frames {
        assert_eq!(path, cloth_sim::output::frame_path(tmp.path(), k));
    }
}

/// OBJ parsing itself is cloth-mesh's (tested there); the viewer names the frame file around
/// the reader's line.
#[test]
fn malformed_frame_names_file_and_line() {
    let tmp = TempDir::new("bad-obj");
    let run = sheet(3, 3, 30.0);
    write_run(tmp.path(), &run, false);
    std::fs::write(
        tmp.path().join("frame_0001.obj"),
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n",
    )
    .unwrap();
    let err = load_animation(tmp.path()).unwrap_err();
    match &err {
        ViewError::Obj { path, source }
            if matches!(**source, cloth_mesh::MeshError::ObjParse { line: 4, .. }) =>
        {
            assert!(path.ends_with("frame_0001.obj"))
        }
        other => panic!("{other}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("frame_0001.obj") && msg.contains("line 4"),
        "{msg}"
    );
}

#[test]
fn malformed_colliders_name_the_element() {
    let tmp = TempDir::new("colliders");
    let run = sheet(3, 2, 30.0);
    write_run(tmp.path(), &run, false);
    std::fs::write(
        tmp.path().join("colliders.json"),
        r#"{"colliders": [{"name": "c", "vertices": [[0,0,0],[1,0,0],[0,1,0]], "triangles": [[0,1,2],[0,2,7]], "frames": []}]}"#,
    )
    .unwrap();
    match load_animation(tmp.path()) {
        Err(ViewError::ColliderTriangle {
            collider,
            triangle: 1,
            vertex: 7,
            count: 3,
        }) => {
            assert_eq!(collider, "c")
        }
        other => panic!("{other:?}"),
    }
    std::fs::write(
        tmp.path().join("colliders.json"),
        r#"{"colliders": [{"name": "d", "vertices": [[0,0,0],[1,0,0],[0,1,0]], "triangles": [[0,1,2]],
           "frames": [{"matrix": [[1,0,0,0],[0,1,0,0],[0,0,1,0]], "vertices": [[0,0,0]]}]}]}"#,
    )
    .unwrap();
    assert!(matches!(
        load_animation(tmp.path()),
        Err(ViewError::ColliderVertexCount {
            frame: 0,
            expected: 3,
            found: 1,
            ..
        })
    ));
}

/// The viewer takes what the frames give: polygons fan-triangulated, no texture coordinates
/// when a corner lacks one (then no `primvars:st` in the USD), per-corner texture indices.
#[test]
fn texture_coordinates_follow_the_frames() {
    let tmp = TempDir::new("uv");
    let quad = "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nvn 0 1 0\nf 1//1 2//1 3//1 4//1\nf -4 -3 -1\n";
    std::fs::write(tmp.path().join("frame_0000.obj"), quad).unwrap();
    let anim = load_animation(tmp.path()).unwrap();
    assert_eq!(anim.triangles, vec![[0, 1, 2], [0, 2, 3], [0, 1, 3]]);
    assert_eq!(anim.triangle_uvs, None);
    assert!(anim.uvs.is_empty());
    let out = tmp.path().join("a.usda");
    write_usd(tmp.path(), &out).unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(!text.contains("primvars:st"));
    assert_eq!(read_usd(&out).unwrap(), anim);

    let tri = "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\nf 1/3 2/2 3/1\n";
    std::fs::write(tmp.path().join("frame_0000.obj"), tri).unwrap();
    let anim = load_animation(tmp.path()).unwrap();
    assert_eq!(anim.triangle_uvs, Some(vec![[2, 1, 0]]));
    assert_eq!(anim.uvs, vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]);
    write_usd(tmp.path(), &out).unwrap();
    assert_eq!(read_usd(&out).unwrap(), anim);
}

// ---------------------------------------------------------------- render targets

#[test]
fn unknown_output_extensions_are_refused_before_reading() {
    let tmp = TempDir::new("target");
    // No frames at all: the output is checked first.
    for name in ["x.mp4", "x.png", "x.usda"] {
        let out = tmp.path().join(name);
        let err = render(tmp.path(), &out, &RenderOptions::default()).unwrap_err();
        assert!(
            matches!(&err, ViewError::UnknownOutput { path, .. } if *path == out),
            "{name}: {err}"
        );
        let msg = err.to_string();
        let ext = name.rsplit('.').next().unwrap();
        assert!(
            msg.contains(&format!("`.{ext}`")) && msg.contains(".gif") && !msg.contains('\n'),
            "{msg}"
        );
        assert!(!out.exists());
    }
    // Accepted: a path without extension (created), an existing directory whatever its name,
    // a .gif file in any case.
    let run = sheet(3, 2, 30.0);
    write_run(tmp.path(), &run, false);
    let opts = RenderOptions {
        width: 32,
        height: 24,
        ..RenderOptions::default()
    };
    let dotted = tmp.path().join("renders.v2");
    std::fs::create_dir(&dotted).unwrap();
    for out in [tmp.path().join("pngs"), dotted] {
        let s = render(tmp.path(), &out, &opts).unwrap();
        assert_eq!(file_names(&out), ["frame_0000.png", "frame_0001.png"]);
        assert_eq!(s.outputs.len(), 2);
    }
    render(tmp.path(), tmp.path().join("a.Gif"), &opts).unwrap();
    assert!(tmp.path().join("a.Gif").is_file());
}

/// Regression: PNGs were numbered 0..k by render order, so `--every 7` gave frame_0001.png for
/// frame 7.
#[test]
fn png_images_are_numbered_by_frame_number() {
    let tmp = TempDir::new("png-every");
    let run = sheet(3, 16, 30.0);
    write_run(tmp.path(), &run, false);
    let out = tmp.path().join("pngs");
    let opts = RenderOptions {
        width: 32,
        height: 24,
        every: 7,
        ..RenderOptions::default()
    };
    let summary = render(tmp.path(), &out, &opts).unwrap();
    assert_eq!(summary.frames, [0, 7, 14]);
    let names = file_names(&out);
    assert_eq!(
        names,
        ["frame_0000.png", "frame_0007.png", "frame_0014.png"]
    );
    for ((path, name), k) in summary.outputs.iter().zip(&names).zip(&summary.frames) {
        assert!(path.ends_with(name));
        // Each image is the render of its frame.
        let anim = load_animation(tmp.path()).unwrap();
        let i = anim.frame_numbers.iter().position(|f| f == k).unwrap();
        let grid = ground_grid(&animation_bounds(&anim));
        let truth = render_frame(&anim, i, &summary.camera, &Style::default(), &grid);
        assert_eq!(decode_png(path).1, truth.rgb, "{name}");
    }
    // Frame numbers from the file names: a run whose frames start at 3.
    let late = TempDir::new("png-late");
    for k in 3..6 {
        std::fs::write(
            cloth_sim::output::frame_path(late.path(), k),
            obj_text(&run, k),
        )
        .unwrap();
    }
    let summary = render(late.path(), late.path().join("p"), &opts).unwrap();
    assert_eq!(summary.frames, [3]);
    assert_eq!(file_names(&late.path().join("p")), ["frame_0003.png"]);
}

// ---------------------------------------------------------------- USD read-back

/// The cloth of an animation, without colliders.
fn cloth_only(a: &Animation) -> Animation {
    Animation {
        colliders: Vec::new(),
        ..a.clone()
    }
}

#[test]
fn usd_reads_back_to_the_frames() {
    let tmp = TempDir::new("usd-read");
    let run = sheet(5, 4, 24.0);
    write_run(tmp.path(), &run, true);
    let anim = load_animation(tmp.path()).unwrap();
    let mut text = Vec::new();
    write_usd_stage(&anim, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    let back = parse_usd(&text, Path::new("run.usda")).unwrap();
    // The cloth comes back bit for bit, with its frame numbers, texture coordinates and fps.
    assert_eq!(cloth_only(&back), cloth_only(&anim));
    // Colliders come back under their prim names, at the same place in every frame.
    let names: Vec<&str> = back.colliders.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["box_1", "_2tet"]);
    for (a, b) in anim.colliders.iter().zip(&back.colliders) {
        assert_eq!(a.triangles, b.triangles);
        assert_eq!(a.is_deforming(), b.is_deforming());
        for k in 0..run.positions.len() + 2 {
            assert_eq!(
                a.world_vertices(k),
                b.world_vertices(k),
                "{} frame {k}",
                a.name
            );
        }
    }
    // Writing what was read gives the same stage.
    let mut again = Vec::new();
    write_usd_stage(&back, &mut again).unwrap();
    assert_eq!(String::from_utf8(again).unwrap(), text);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    /// Every finite coordinate, however small or large, reads back bit for bit.
    #[test]
    fn usd_round_trip_is_exact(
        coords in prop::collection::vec(
            prop::num::f64::NORMAL | prop::num::f64::SUBNORMAL | prop::num::f64::ZERO, 9 * 3),
        first in 0usize..5000,
        fps in 0.5f64..1000.0,
    ) {
        let positions: Vec<Vec<[f64; 3]>> = coords
            .chunks_exact(9)
            .map(|f| f.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect())
            .collect();
        let anim = Animation {
            frame_numbers: (first..first + positions.len()).collect(),
            positions,
            triangles: vec![[0, 1, 2]],
            uvs: vec![[coords[0], coords[1]], [0.5, 1e-300], [-3e200, 0.0]],
            triangle_uvs: Some(vec![[2, 0, 1]]),
            cloths: vec![ClothPart::whole("cloth", 3, 1)],
            colliders: vec![],
            fps,
        };
        let mut text = Vec::new();
        write_usd_stage(&anim, &mut text).unwrap();
        let back = parse_usd(std::str::from_utf8(&text).unwrap(), Path::new("p.usda")).unwrap();
        prop_assert_eq!(&back, &anim);
        for (a, b) in back.positions.iter().flatten().zip(anim.positions.iter().flatten()) {
            prop_assert!(a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits() || *x == 0.0 && *y == 0.0));
        }
    }
}

/// A run made with `--format usd` keeps only `animation.usda` (and stats.json, colliders.json):
/// it renders exactly like the OBJ frames it was made from.
#[test]
fn usd_only_run_renders_like_its_obj_frames() {
    let obj = TempDir::new("usd-run-obj");
    let run = sheet(6, 7, 25.0);
    write_run(obj.path(), &run, true);
    let usd = TempDir::new("usd-run-usd");
    write_usd(obj.path(), usd.path().join("animation.usda")).unwrap();
    std::fs::copy(obj.path().join("stats.json"), usd.path().join("stats.json")).unwrap();
    assert!(matches!(
        list_frames(usd.path()),
        Err(ViewError::NoFrames { .. })
    ));
    let from_obj = load_animation(obj.path()).unwrap();
    let from_usd = load_animation(usd.path()).unwrap();
    assert_eq!(cloth_only(&from_usd), cloth_only(&from_obj));
    assert_eq!(from_usd.colliders.len(), 2);
    let opts = RenderOptions {
        view: View::Iso,
        width: 72,
        height: 54,
        every: 2,
    };
    let a = render(obj.path(), obj.path().join("a.gif"), &opts).unwrap();
    let b = render(usd.path(), usd.path().join("a.gif"), &opts).unwrap();
    assert_eq!(
        (a.frames, a.camera, a.frame_seconds),
        (b.frames, b.camera, b.frame_seconds)
    );
    assert_eq!(
        std::fs::read(obj.path().join("a.gif")).unwrap(),
        std::fs::read(usd.path().join("a.gif")).unwrap()
    );
    render(usd.path(), usd.path().join("pngs"), &opts).unwrap();
    assert_eq!(
        file_names(&usd.path().join("pngs")),
        [
            "frame_0000.png",
            "frame_0002.png",
            "frame_0004.png",
            "frame_0006.png"
        ]
    );
    // Exporting the USD-only run again gives the same stage.
    write_usd(usd.path(), usd.path().join("again.usda")).unwrap();
    assert_eq!(
        std::fs::read_to_string(usd.path().join("again.usda")).unwrap(),
        std::fs::read_to_string(usd.path().join("animation.usda")).unwrap()
    );
}

/// 1-based number of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    1 + text
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?}"))
}

/// `text` with line `line` (1-based) passed through `f`.
fn edit_line(text: &str, line: usize, f: impl Fn(&str) -> String) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| if i + 1 == line { f(l) } else { l.to_string() } + "\n")
        .collect()
}

#[test]
fn malformed_usd_is_refused_naming_the_line() {
    let tmp = TempDir::new("usd-bad");
    let run = sheet(3, 3, 30.0);
    write_run(tmp.path(), &run, true);
    let mut good = Vec::new();
    write_usd_stage(&load_animation(tmp.path()).unwrap(), &mut good).unwrap();
    let good = String::from_utf8(good).unwrap();
    assert!(parse_usd(&good, Path::new("s.usda")).is_ok());
    let at = |needle: &str| line_of(&good, needle);
    let replace = |needle: &str, from: &str, to: &str| {
        (
            edit_line(&good, at(needle), |l| l.replacen(from, to, 1)),
            at(needle),
        )
    };
    let sample = |k: usize| format!("            {k}: [(");
    let cloth_points = at("point3f[] points.timeSamples") + 2; // the sample at time 1
    let cases: Vec<((String, usize), &str)> = vec![
        (replace("#usda", "1.0", "2.0"), "#usda 1.0"),
        (replace("upAxis", "\"Y\"", "\"Z\""), "upAxis"),
        (replace("metersPerUnit", "1", "0.01"), "metersPerUnit"),
        (
            replace("framesPerSecond", "framesPerSecond", "fancyRate"),
            "unknown stage metadata",
        ),
        (
            replace("timeCodesPerSecond", "30", "-30"),
            "must be positive",
        ),
        (
            replace("doubleSided", "doubleSided", "singleSided"),
            "unknown attribute",
        ),
        (replace("faceVertexCounts", "[3,", "[4,"), "only triangles"),
        (
            replace("faceVertexIndices", "= [", "= [999, "),
            "face vertex indices",
        ),
        (
            replace("faceVertexIndices", "= [0,", "= [99,"),
            "refers to point 99",
        ),
        (
            replace("primvars:st:indices", "= [", "= [x, "),
            "not a non-negative integer",
        ),
        (replace(&sample(1), "(", "(nan, 0, 0), ("), "not finite"),
        (
            (
                edit_line(&good, cloth_points, |l| l.replacen("), (", "), ", 1)),
                cloth_points,
            ),
            "expected `(`",
        ),
        (
            (
                edit_line(&good, cloth_points, |l| {
                    let cut = l.rfind(", (").unwrap();
                    format!("{}],", &l[..cut])
                }),
                cloth_points,
            ),
            "points, but the first sample has",
        ),
        (
            (
                edit_line(&good, cloth_points, |l| l.replacen("), (", ") (", 1)),
                cloth_points,
            ),
            "expected `,` or `]`",
        ),
        (replace(&sample(2), "2:", "1:"), "does not follow"),
        (replace(&sample(2), "2:", "two:"), "not a frame number"),
        (
            (
                edit_line(
                    &edit_line(&good, at("cloth:name"), |_| String::new()),
                    at("def Mesh \"cloth\""),
                    |l| l.replace("cloth", "sheet"),
                ),
                at("def Mesh \"cloth\""),
            ),
            "no cloth under /World",
        ),
        (
            replace("cloth:name", "cloth:name", "cloth:label"),
            "unknown attribute `custom string cloth:label`",
        ),
        (replace("cloth:name", "= \"", "= \"\\q"), "unknown escape"),
        (
            replace("def Mesh \"box_1\"", "box_1", "cloth"),
            "defined twice",
        ),
        (
            replace("orientation", "rightHanded", "leftHanded"),
            "orientation",
        ),
        (
            replace("interpolation", "faceVarying", "vertex"),
            "faceVarying",
        ),
        (
            replace("xformOp:transform.timeSamples", "matrix4d", "matrix3d"),
            "unknown attribute",
        ),
        (replace("0: ((", ", 0), (", ", 2), ("), "affine"),
        (
            replace(
                "xformOpOrder",
                "xformOp:transform\"]",
                "xformOp:translate\"]",
            ),
            "xformOpOrder",
        ),
    ];
    let world = at("def Xform");
    for ((text, line), fragment) in cases {
        // The one exception: a missing cloth prim is reported at /World.
        let line = if fragment.starts_with("no cloth") {
            world
        } else {
            line
        };
        match parse_usd(&text, Path::new("s.usda")) {
            Err(ViewError::Parse {
                line: l,
                message,
                path,
            }) => {
                assert_eq!(
                    (l, path.as_path()),
                    (line, Path::new("s.usda")),
                    "{fragment}: {message}"
                );
                assert!(message.contains(fragment), "{fragment}: {message}");
            }
            other => panic!("{fragment}: expected a parse error, got {other:?}"),
        }
    }
    // Truncated files and trailing content.
    let lines = good.lines().count();
    let half: String = good
        .lines()
        .take(lines / 2)
        .map(|l| format!("{l}\n"))
        .collect();
    match parse_usd(&half, Path::new("s.usda")) {
        Err(ViewError::Parse { line, message, .. }) => {
            assert_eq!(line, lines / 2);
            assert!(message.contains("end of file"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    match parse_usd(&format!("{good}\nover\n"), Path::new("s.usda")) {
        Err(ViewError::Parse { line, .. }) => assert_eq!(line, lines + 2),
        other => panic!("{other:?}"),
    }
    // Not a stage at all; a file that does not exist.
    assert!(matches!(
        parse_usd(&obj_text(&run, 0), Path::new("f.obj")),
        Err(ViewError::Parse { line: 1, .. })
    ));
    assert!(matches!(
        read_usd(tmp.path().join("missing.usda")),
        Err(ViewError::Io { .. })
    ));
}

// ---------------------------------------------------------------- several cloths

/// Two cloths over three frames: a square `lower` (4 vertices, 2 triangles) and a triangle
/// whose name USD prim names cannot hold; each with its own texture coordinates. A collider
/// has the first cloth's name.
fn two_cloths() -> Animation {
    let positions = (0..3)
        .map(|k| {
            let y = 1.0 - 0.1 * k as f64;
            let z = 0.25 * k as f64;
            vec![
                [0.0, y, 0.0],
                [1.0, y, 0.0],
                [1.0, y, 1.0],
                [0.0, y, 1.0],
                [0.0, y + 0.5, z],
                [0.5, y + 0.5, z],
                [0.0, y + 0.5, z + 0.5],
            ]
        })
        .collect();
    Animation {
        frame_numbers: vec![4, 5, 6],
        positions,
        triangles: vec![[0, 1, 2], [0, 2, 3], [4, 5, 6]],
        uvs: vec![
            [0.0, 0.0],
            [1.0, 0.0],
            [1.0, 1.0],
            [0.0, 1.0],
            [0.0, 0.0],
            [0.5, 0.0],
            [0.0, 0.5],
        ],
        triangle_uvs: Some(vec![[0, 1, 2], [0, 2, 3], [6, 4, 5]]),
        cloths: vec![
            ClothPart {
                name: "lower".into(),
                vertices: 0..4,
                triangles: 0..2,
            },
            ClothPart {
                name: "upper \"sheet\"\\1\n".into(),
                vertices: 4..7,
                triangles: 2..3,
            },
        ],
        colliders: vec![ColliderTrack {
            name: "lower".into(),
            vertices: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]],
            triangles: vec![[0, 1, 2]],
            frames: vec![],
        }],
        fps: 30.0,
    }
}

fn stage_text(anim: &Animation) -> String {
    let mut text = Vec::new();
    write_usd_stage(anim, &mut text).unwrap();
    String::from_utf8(text).unwrap()
}

#[test]
fn usd_writes_one_mesh_per_cloth_and_reads_the_cloths_back() {
    let anim = two_cloths();
    let text = stage_text(&anim);
    let meshes: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("def Mesh "))
        .collect();
    // Named after the cloths, made identifiers; the collider's name is taken, so it moves.
    assert_eq!(meshes, ["\"lower\"", "\"upper__sheet__1_\"", "\"lower_1\""]);
    let lower = prim(&text, "lower");
    assert!(lower.contains("custom string cloth:name = \"lower\"\n"));
    assert_eq!(ints(lower, "faceVertexIndices"), [0, 1, 2, 0, 2, 3]);
    let upper = prim(&text, "upper__sheet__1_");
    assert!(upper.contains("custom string cloth:name = \"upper \\\"sheet\\\"\\\\1\\n\"\n"));
    // Local topology, the cloth's own points and texture coordinates.
    assert_eq!(ints(upper, "faceVertexIndices"), [0, 1, 2]);
    assert_eq!(ints(upper, "primvars:st:indices"), [2, 0, 1]);
    let points = samples(upper, "point3f[] points");
    assert_eq!(points.len(), 3);
    assert_eq!(points[1].0, 5);
    assert_eq!(
        points[1].1,
        [
            vec![0.0, 1.4, 0.25],
            vec![0.5, 1.4, 0.25],
            vec![0.0, 1.4, 0.75]
        ]
    );
    let extent = samples(upper, "float3[] extent");
    assert_eq!(extent[0].1, [vec![0.0, 1.5, 0.0], vec![0.5, 1.5, 0.5]]);
    assert_eq!(samples(lower, "point3f[] points")[0].1.len(), 4);
    // Read back: the same cloths, names, frames, triangles and texture coordinates.
    let back = parse_usd(&text, Path::new("two.usda")).unwrap();
    assert_eq!(cloth_only(&back), cloth_only(&anim));
    assert_eq!(back.colliders[0].name, "lower_1");
    assert_eq!(stage_text(&back), text);
}

#[test]
fn usd_of_one_cloth_is_one_mesh_named_after_it() {
    let run = sheet(3, 2, 30.0);
    let whole = |name: &str| Animation {
        frame_numbers: vec![0, 1],
        positions: run.positions.clone(),
        triangles: run.triangles.clone(),
        uvs: vec![],
        triangle_uvs: None,
        cloths: vec![ClothPart::whole(name, 9, run.triangles.len())],
        colliders: vec![],
        fps: 30.0,
    };
    for (name, prim_name) in [("flag", "flag"), ("", "cloth"), ("9 lives", "_9_lives")] {
        let text = stage_text(&whole(name));
        let meshes: Vec<&str> = text.lines().filter(|l| l.contains("def Mesh")).collect();
        assert_eq!(
            meshes,
            [format!("    def Mesh \"{prim_name}\"")],
            "{name:?}"
        );
        let back = parse_usd(&text, Path::new("one.usda")).unwrap();
        assert_eq!(back, whole(name));
    }
    // No cloths listed: one cloth named `cloth` holding everything.
    let text = stage_text(&Animation {
        cloths: vec![],
        ..whole("x")
    });
    assert_eq!(
        parse_usd(&text, Path::new("one.usda")).unwrap().cloths,
        [ClothPart::whole("cloth", 9, run.triangles.len())]
    );
    // A stage written before there was one prim per cloth: the prim `cloth`, no name.
    let old = text.replace("        custom string cloth:name = \"cloth\"\n", "");
    assert_eq!(
        parse_usd(&old, Path::new("old.usda")).unwrap().cloths,
        [ClothPart::whole("cloth", 9, run.triangles.len())]
    );
}

#[test]
fn usd_export_refuses_cloths_that_do_not_tile_the_arrays() {
    let overlapping = {
        let mut a = two_cloths();
        a.cloths[1].vertices = 3..7;
        a
    };
    let crossing = {
        let mut a = two_cloths();
        a.triangles[2] = [3, 5, 6];
        a
    };
    let short = {
        let mut a = two_cloths();
        a.cloths.pop();
        a
    };
    let bad_uv = {
        let mut a = two_cloths();
        a.triangle_uvs = Some(vec![[0, 1, 2], [0, 2, 3], [6, 4, 9]]);
        a
    };
    for (anim, fragment) in [
        (overlapping, "does not follow"),
        (crossing, "outside its vertices"),
        (short, "the cloths hold 4"),
        (bad_uv, "texture index 9 out of range"),
    ] {
        let mut out = Vec::new();
        let e = write_usd_stage(&anim, &mut out).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains(fragment), "{fragment}: {e}");
        assert!(out.is_empty(), "nothing written");
    }
}

#[test]
fn usd_cloths_must_agree_on_time_codes_and_texture_coordinates() {
    let text = stage_text(&two_cloths());
    let start = text.find("def Mesh \"upper__sheet__1_\"").unwrap();
    let end = text.find("def Mesh \"lower_1\"").unwrap();
    let (head, upper, tail) = (&text[..start], &text[start..end], &text[end..]);
    let shifted = format!("{head}{}{tail}", upper.replace("  6: ", "  7: "));
    match parse_usd(&shifted, Path::new("t.usda")) {
        Err(ViewError::Parse { line, message, .. }) => {
            let last = shifted.rfind("  7: ").unwrap();
            assert_eq!(line, 1 + shifted[..last].lines().count() - 1, "{message}");
            assert!(message.contains("time code 7"), "{message}");
            assert!(message.contains("first cloth"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let fewer: String = upper
        .lines()
        .filter(|l| !l.contains("  6: "))
        .map(|l| format!("{l}\n"))
        .collect();
    let fewer = format!("{head}{fewer}{tail}");
    let e = parse_usd(&fewer, Path::new("t.usda")).unwrap_err();
    assert!(
        e.to_string()
            .contains("2 time samples, but the first cloth has 3"),
        "{e}"
    );
    let st = upper.find("        texCoord2f[]").unwrap();
    let st_end = upper.find("primvars:st:indices").unwrap();
    let st_end = st_end + upper[st_end..].find('\n').unwrap() + 1;
    let bare = format!("{head}{}{}{tail}", &upper[..st], &upper[st_end..]);
    match parse_usd(&bare, Path::new("t.usda")) {
        Err(ViewError::Parse { line, message, .. }) => {
            assert_eq!(line, line_of(&bare, "def Mesh \"upper__sheet__1_\""));
            assert!(message.contains("has no texture coordinates"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

/// An OBJ frame as `cloth run` writes one for `anim`'s frame `k`: every vertex and texture
/// coordinate, then each cloth's `o NAME` line (for the first `names.len()` cloths) and its
/// faces.
fn grouped_obj(anim: &Animation, k: usize, names: &[&str]) -> String {
    let mut s = String::new();
    for p in &anim.positions[k] {
        writeln!(s, "v {} {} {}", p[0], p[1], p[2]).unwrap();
    }
    for uv in &anim.uvs {
        writeln!(s, "vt {} {}", uv[0], uv[1]).unwrap();
    }
    let corners = anim.triangle_uvs.as_ref().unwrap();
    for (i, part) in anim.cloths.iter().enumerate() {
        if let Some(name) = names.get(i) {
            writeln!(s, "o {name}").unwrap();
        }
        for t in part.triangles.clone() {
            let [a, b, c] = anim.triangles[t].map(|i| i + 1);
            let [ta, tb, tc] = corners[t].map(|i| i + 1);
            writeln!(s, "f {a}/{ta} {b}/{tb} {c}/{tc}").unwrap();
        }
    }
    s
}

#[test]
fn obj_groups_are_the_cloths_and_survive_usd() {
    let mut anim = two_cloths();
    anim.cloths[1].name = "upper".into();
    anim.colliders.clear();
    let tmp = TempDir::new("two-cloths");
    for k in 0..3 {
        let obj = grouped_obj(&anim, k, &["lower", "upper"]);
        std::fs::write(cloth_sim::output::frame_path(tmp.path(), k + 4), obj).unwrap();
    }
    let loaded = load_animation(tmp.path()).unwrap();
    assert_eq!(loaded, anim);
    // Through USD and back.
    write_usd(tmp.path(), tmp.path().join("two.usda")).unwrap();
    assert_eq!(read_usd(tmp.path().join("two.usda")).unwrap(), anim);

    // A frame whose cloths differ from the first frame's is refused, naming the file.
    let renamed = cloth_sim::output::frame_path(tmp.path(), 6);
    std::fs::write(&renamed, grouped_obj(&anim, 2, &["lower", "top"])).unwrap();
    match load_animation(tmp.path()) {
        Err(e @ ViewError::Parts { .. }) => {
            let m = e.to_string();
            assert!(m.contains("frame_0006.obj"), "{m}");
            assert!(m.contains("`top`") && m.contains("`upper`"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    std::fs::write(&renamed, grouped_obj(&anim, 2, &["lower"])).unwrap();
    let e = load_animation(tmp.path()).unwrap_err();
    assert!(e.to_string().contains("frame_0006.obj"), "{e}");
    // A cloth using a vertex of the cloth before it cannot be told apart.
    let mut crossing = anim.clone();
    crossing.triangles[1] = [0, 2, 5];
    let cross = TempDir::new("crossing");
    let first = cloth_sim::output::frame_path(cross.path(), 0);
    std::fs::write(&first, grouped_obj(&crossing, 0, &["lower", "upper"])).unwrap();
    match load_animation(cross.path()) {
        Err(e @ ViewError::Parts { .. }) => {
            let m = e.to_string();
            assert!(m.contains("frame_0000.obj") && m.contains("`upper`"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    // Without group lines: one cloth named `cloth`.
    let plain = TempDir::new("no-groups");
    let text = grouped_obj(&anim, 0, &[]);
    std::fs::write(cloth_sim::output::frame_path(plain.path(), 0), text).unwrap();
    assert_eq!(
        load_animation(plain.path()).unwrap().cloths,
        [ClothPart::whole("cloth", 7, 3)]
    );
}

/// The two-cloth stage opens in `pxr` (as [`usd_opens_in_pxr_when_available`], skipped without
/// it): two meshes with the cloths' points, local topology and exact names.
#[test]
fn usd_cloths_open_in_pxr_when_available() {
    let Some(python) = pxr_python("usd_cloths_open_in_pxr_when_available") else {
        return;
    };
    let tmp = TempDir::new("pxr-cloths");
    let out = tmp.path().join("two.usda");
    std::fs::write(&out, stage_text(&two_cloths())).unwrap();
    let script = r#"
import sys
from pxr import Usd, UsdGeom
stage = Usd.Stage.Open(sys.argv[1])
found = []
for p in stage.GetPrimAtPath("/World").GetChildren():
    a = p.GetAttribute("cloth:name")
    if not a:
        continue
    m = UsdGeom.Mesh(p)
    st = UsdGeom.PrimvarsAPI(m).GetPrimvar("st").ComputeFlattened()
    found.append((p.GetName(), a.Get(), len(m.GetPointsAttr().Get(5)), list(m.GetFaceVertexIndicesAttr().Get()), [tuple(x) for x in st]))
want = [
    ("lower", "lower", 4, [0, 1, 2, 0, 2, 3], [(0, 0), (1, 0), (1, 1), (0, 0), (1, 1), (0, 1)]),
    ("upper__sheet__1_", 'upper "sheet"\\1\n', 3, [0, 1, 2], [(0, 0.5), (0, 0), (0.5, 0)]),
]
assert found == want, found
print("ok")
"#;
    run_pxr(&python, script, &out);
}
