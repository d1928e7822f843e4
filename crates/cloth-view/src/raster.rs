//! Orthographic camera and z-buffered CPU rasteriser (triangles with two-sided diffuse shading,
//! depth-tested lines).

use crate::ViewError;

/// Camera direction presets. The world is y up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    /// Looking along -z (from +z towards the origin); x to the right.
    Front,
    /// Looking along -x (from +x); -z to the right.
    Side,
    /// Looking down along -y; x to the right, -z up the image.
    Top,
    /// Isometric: looking along -(1, 1, 1)/sqrt(3); y projects upwards.
    #[default]
    Iso,
}

impl View {
    /// Orthonormal camera axes `(right, up, forward)`; `forward` points from the eye into the
    /// scene and `right = forward x up`.
    pub fn axes(self) -> ([f64; 3], [f64; 3], [f64; 3]) {
        let (forward, up_hint) = match self {
            View::Front => ([0.0, 0.0, -1.0], [0.0, 1.0, 0.0]),
            View::Side => ([-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
            View::Top => ([0.0, -1.0, 0.0], [0.0, 0.0, -1.0]),
            View::Iso => {
                let s = -(1.0f64 / 3.0).sqrt();
                ([s, s, s], [0.0, 1.0, 0.0])
            }
        };
        let up = normalize(sub(up_hint, scale(forward, dot(up_hint, forward)))).unwrap_or(up_hint);
        let right = cross(forward, up);
        (right, up, forward)
    }
}

impl std::str::FromStr for View {
    type Err = ViewError;

    /// Parses `front`, `side`, `top` or `iso` (case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "front" => Ok(View::Front),
            "side" => Ok(View::Side),
            "top" => Ok(View::Top),
            "iso" => Ok(View::Iso),
            _ => Err(ViewError::BadView(s.to_string())),
        }
    }
}

impl std::fmt::Display for View {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            View::Front => "front",
            View::Side => "side",
            View::Top => "top",
            View::Iso => "iso",
        })
    }
}

/// Axis-aligned bounding box (metres).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb {
    /// Minimum corner.
    pub min: [f64; 3],
    /// Maximum corner.
    pub max: [f64; 3],
}

impl Aabb {
    /// The empty box (min = +inf, max = -inf); growing it by a point gives that point.
    pub fn empty() -> Self {
        Aabb {
            min: [f64::INFINITY; 3],
            max: [f64::NEG_INFINITY; 3],
        }
    }

    /// Whether no point has been added.
    pub fn is_empty(&self) -> bool {
        (0..3).any(|k| self.min[k] > self.max[k])
    }

    /// Grows the box to contain `p` (non-finite points are ignored).
    pub fn grow(&mut self, p: [f64; 3]) {
        if p.iter().all(|x| x.is_finite()) {
            for (k, &x) in p.iter().enumerate() {
                self.min[k] = self.min[k].min(x);
                self.max[k] = self.max[k].max(x);
            }
        }
    }

    /// The box of a set of points.
    pub fn of_points<'a>(points: impl IntoIterator<Item = &'a [f64; 3]>) -> Self {
        let mut b = Aabb::empty();
        for p in points {
            b.grow(*p);
        }
        b
    }

    /// Centre of the box (origin if empty).
    pub fn center(&self) -> [f64; 3] {
        if self.is_empty() {
            return [0.0; 3];
        }
        std::array::from_fn(|k| 0.5 * (self.min[k] + self.max[k]))
    }

    /// The 8 corners (all at the origin if empty).
    pub fn corners(&self) -> [[f64; 3]; 8] {
        if self.is_empty() {
            return [[0.0; 3]; 8];
        }
        std::array::from_fn(|i| {
            [
                if i & 1 == 0 { self.min[0] } else { self.max[0] },
                if i & 2 == 0 { self.min[1] } else { self.max[1] },
                if i & 4 == 0 { self.min[2] } else { self.max[2] },
            ]
        })
    }

    /// Length of the diagonal (metres; 0 if empty).
    pub fn diagonal(&self) -> f64 {
        if self.is_empty() {
            return 0.0;
        }
        norm(sub(self.max, self.min))
    }
}

/// An orthographic camera producing `width` x `height` pixel images.
///
/// A world point `p` maps to pixel coordinates
/// `x = width/2 + scale * (p - center).right`, `y = height/2 - scale * (p - center).up`
/// (y grows downwards, pixel (i, j) covers `[i, i+1) x [j, j+1)`), and depth
/// `(p - center).forward` in metres (larger = farther from the eye).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// Unit vector of the image's x axis in world space.
    pub right: [f64; 3],
    /// Unit vector of the image's upward axis in world space.
    pub up: [f64; 3],
    /// Unit viewing direction (from the eye into the scene).
    pub forward: [f64; 3],
    /// World point imaged at the image centre (metres).
    pub center: [f64; 3],
    /// Pixels per metre.
    pub scale: f64,
    /// Image width (pixels).
    pub width: u32,
    /// Image height (pixels).
    pub height: u32,
}

/// Fraction of the image (in each direction) that automatic framing fills.
pub const FRAME_FILL: f64 = 0.9;

impl Camera {
    /// A camera of the given view looking at `center` with `scale` pixels per metre.
    pub fn new(view: View, center: [f64; 3], scale: f64, width: u32, height: u32) -> Self {
        let (right, up, forward) = view.axes();
        Camera {
            right,
            up,
            forward,
            center,
            scale,
            width,
            height,
        }
    }

    /// A camera that shows the whole box: its projection is centred and fills
    /// [`FRAME_FILL`] of the width or of the height, whichever is tighter. A box that is a
    /// single point (or empty) is shown at 1 m across.
    pub fn framing(view: View, bounds: &Aabb, width: u32, height: u32) -> Self {
        let (right, up, forward) = view.axes();
        let corners = bounds.corners();
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for c in &corners {
            let s = [dot(*c, right), dot(*c, up)];
            for k in 0..2 {
                lo[k] = lo[k].min(s[k]);
                hi[k] = hi[k].max(s[k]);
            }
        }
        let extent = [hi[0] - lo[0], hi[1] - lo[1]];
        let mid = [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1])];
        // Centre: the box centre moved within the image plane so that the projection is centred.
        let c = bounds.center();
        let along = dot(c, forward);
        let center = add(
            add(scale(right, mid[0]), scale(up, mid[1])),
            scale(forward, along),
        );
        let fit = |pixels: u32, ext: f64| {
            if ext > 0.0 {
                FRAME_FILL * f64::from(pixels.max(1)) / ext
            } else {
                f64::INFINITY
            }
        };
        let mut s = fit(width, extent[0]).min(fit(height, extent[1]));
        if !s.is_finite() {
            s = FRAME_FILL * f64::from(width.min(height).max(1));
        }
        Camera {
            right,
            up,
            forward,
            center,
            scale: s,
            width,
            height,
        }
    }

    /// Projects a world point to `[pixel x, pixel y, depth]` (see the type's doc).
    pub fn project(&self, p: [f64; 3]) -> [f64; 3] {
        let d = sub(p, self.center);
        [
            0.5 * f64::from(self.width) + self.scale * dot(d, self.right),
            0.5 * f64::from(self.height) - self.scale * dot(d, self.up),
            dot(d, self.forward),
        ]
    }
}

/// An 8-bit RGB image, rows from top to bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Width (pixels).
    pub width: u32,
    /// Height (pixels).
    pub height: u32,
    /// `3 * width * height` bytes, row-major, R G B per pixel.
    pub rgb: Vec<u8>,
}

impl Image {
    /// An image filled with one colour.
    pub fn filled(width: u32, height: u32, color: [u8; 3]) -> Self {
        let n = width as usize * height as usize;
        let mut rgb = Vec::with_capacity(3 * n);
        for _ in 0..n {
            rgb.extend_from_slice(&color);
        }
        Image { width, height, rgb }
    }

    /// Colour of pixel `(x, y)` (column, row from the top), or `None` outside.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 3]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = 3 * (y as usize * self.width as usize + x as usize);
        Some([self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]])
    }
}

/// Surface colours and shading of a triangle.
///
/// Shading is two-sided diffuse with one directional light fixed relative to the camera
/// (from above, slightly left, behind the eye): intensity `ambient + (1 - ambient) * max(0, n.l)`
/// with `n` the unit normal turned towards the eye. `ambient = 1` gives flat colours.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Material {
    /// Colour of the side whose geometric normal `(b - a) x (c - a)` faces the eye.
    pub front: [u8; 3],
    /// Colour of the other side.
    pub back: [u8; 3],
    /// Ambient fraction in `[0, 1]`.
    pub ambient: f64,
}

/// A colour image with a depth buffer, for drawing triangles and lines through a [`Camera`].
#[derive(Debug, Clone)]
pub struct Canvas {
    camera: Camera,
    image: Image,
    depth: Vec<f64>,
    light: [f64; 3],
}

/// A triangle projected through a camera, ready to fill: what [`Canvas::draw_triangle`]
/// computes once per triangle before its pixel loop.
struct Projected {
    /// Corners as `[pixel x, pixel y, depth]`.
    p: [[f64; 3]; 3],
    /// Colour of the side the eye sees.
    color: [u8; 3],
    /// +1 when the eye sees the front, -1 the back: turns normals towards the eye.
    sign: f64,
    /// Sign of the projected area: every edge function is positive inside once multiplied.
    orient: f64,
    inv_area: f64,
    /// Pixel range covered, inclusive: x0, x1, y0, y1.
    pixels: [f64; 4],
    /// Corner normals, unit, on the geometric normal's side.
    unit_normals: [[f64; 3]; 3],
    geometric_unit: [f64; 3],
    /// Edge k is opposite corner k: from p[k+1] to p[k+2].
    edges: [([f64; 3], [f64; 3]); 3],
    /// Whether a pixel centre exactly on edge k belongs to this triangle (top-left rule).
    owns_tie: [bool; 3],
}

impl Projected {
    /// The triangle through `cam`, or `None` when it is degenerate, not finite or off the
    /// image.
    fn new(
        cam: &Camera,
        corners: [[f64; 3]; 3],
        normals: [[f64; 3]; 3],
        material: &Material,
    ) -> Option<Projected> {
        let geometric = cross(sub(corners[1], corners[0]), sub(corners[2], corners[0]));
        let facing = dot(geometric, cam.forward);
        let geometric_unit = normalize(geometric)?;
        // Side seen by the eye, and the sign that turns normals towards it.
        let (color, sign) = if facing < 0.0 {
            (material.front, 1.0)
        } else {
            (material.back, -1.0)
        };
        let p = corners.map(|c| cam.project(c));
        if p.iter().flatten().any(|x| !x.is_finite()) {
            return None;
        }
        let area = edge(p[0], p[1], p[2]);
        if area == 0.0 {
            return None;
        }
        let orient = area.signum();
        let inv_area = 1.0 / area.abs();
        let pixels = pixel_range(&p, cam)?;
        let unit_normals = normals.map(|n| {
            normalize(n)
                .map(|u| {
                    if dot(u, geometric_unit) < 0.0 {
                        scale(u, -1.0)
                    } else {
                        u
                    }
                })
                .unwrap_or(geometric_unit)
        });
        let edges: [([f64; 3], [f64; 3]); 3] = [(p[1], p[2]), (p[2], p[0]), (p[0], p[1])];
        let owns_tie = edges.map(|(a, b)| {
            let (dx, dy) = (orient * (b[0] - a[0]), orient * (b[1] - a[1]));
            dy > 0.0 || (dy == 0.0 && dx > 0.0)
        });
        Some(Projected {
            p,
            color,
            sign,
            orient,
            inv_area,
            pixels,
            unit_normals,
            geometric_unit,
            edges,
            owns_tie,
        })
    }

    /// The barycentric coordinates of pixel centre `q` when the triangle covers it.
    fn barycentric(&self, q: [f64; 3]) -> Option<[f64; 3]> {
        let mut bary = [0.0; 3];
        for (k, b) in bary.iter_mut().enumerate() {
            let e = self.orient * shared_edge(self.edges[k].0, self.edges[k].1, q);
            if e < 0.0 || (e == 0.0 && !self.owns_tie[k]) {
                return None;
            }
            *b = e * self.inv_area;
        }
        Some(bary)
    }
}

/// The pixels (x0, x1, y0, y1, inclusive) whose centres may lie in the projected triangle
/// `p`, clipped to the image; `None` when none do.
fn pixel_range(p: &[[f64; 3]; 3], cam: &Camera) -> Option<[f64; 4]> {
    let (w, h) = (cam.width as f64, cam.height as f64);
    let x0 = (p.iter().map(|q| q[0]).fold(f64::INFINITY, f64::min) - 0.5)
        .floor()
        .max(0.0);
    let x1 = (p.iter().map(|q| q[0]).fold(f64::NEG_INFINITY, f64::max) - 0.5)
        .ceil()
        .min(w - 1.0);
    let y0 = (p.iter().map(|q| q[1]).fold(f64::INFINITY, f64::min) - 0.5)
        .floor()
        .max(0.0);
    let y1 = (p.iter().map(|q| q[1]).fold(f64::NEG_INFINITY, f64::max) - 0.5)
        .ceil()
        .min(h - 1.0);
    (x0 <= x1 && y0 <= y1).then_some([x0, x1, y0, y1])
}

impl Canvas {
    /// A canvas of the camera's size filled with `background`, depth +infinity.
    pub fn new(camera: Camera, background: [u8; 3]) -> Self {
        let n = camera.width as usize * camera.height as usize;
        let light = normalize(add(
            add(scale(camera.up, 0.6), scale(camera.right, -0.3)),
            scale(camera.forward, -0.75),
        ))
        .unwrap_or([0.0, 1.0, 0.0]);
        Canvas {
            camera,
            image: Image::filled(camera.width, camera.height, background),
            depth: vec![f64::INFINITY; n],
            light,
        }
    }

    /// The camera.
    pub fn camera(&self) -> &Camera {
        &self.camera
    }

    /// The image drawn so far.
    pub fn image(&self) -> &Image {
        &self.image
    }

    /// Finishes drawing and returns the image.
    pub fn into_image(self) -> Image {
        self.image
    }

    /// Draws a triangle with per-corner normals (any length; zero or non-finite normals fall
    /// back to the geometric normal). A pixel is covered when its centre lies inside the
    /// projected triangle (edges shared by two triangles are drawn once); it is written when the
    /// interpolated depth is smaller than the stored one.
    pub fn draw_triangle(
        &mut self,
        corners: [[f64; 3]; 3],
        normals: [[f64; 3]; 3],
        material: &Material,
    ) {
        if let Some(t) = Projected::new(&self.camera, corners, normals, material) {
            self.fill(&t, material.ambient);
        }
    }

    /// Writes the pixels `t` covers that are nearer than what is drawn, shaded.
    fn fill(&mut self, t: &Projected, ambient: f64) {
        let p = &t.p;
        let width = self.camera.width as usize;
        let [x0, x1, y0, y1] = t.pixels;
        for py in (y0 as usize)..=(y1 as usize) {
            let cy = py as f64 + 0.5;
            for px in (x0 as usize)..=(x1 as usize) {
                let q = [px as f64 + 0.5, cy, 0.0];
                let Some(bary) = t.barycentric(q) else {
                    continue;
                };
                let z = bary[0] * p[0][2] + bary[1] * p[1][2] + bary[2] * p[2][2];
                let i = py * width + px;
                if z >= self.depth[i] || z.is_nan() {
                    continue;
                }
                let n = add(
                    add(
                        scale(t.unit_normals[0], bary[0]),
                        scale(t.unit_normals[1], bary[1]),
                    ),
                    scale(t.unit_normals[2], bary[2]),
                );
                let n = normalize(n).unwrap_or(t.geometric_unit);
                let lambert = (t.sign * dot(n, self.light)).max(0.0);
                let intensity = ambient + (1.0 - ambient) * lambert;
                self.depth[i] = z;
                let rgb = &mut self.image.rgb[3 * i..3 * i + 3];
                for (c, &v) in rgb.iter_mut().zip(&t.color) {
                    *c = (f64::from(v) * intensity).round().clamp(0.0, 255.0) as u8;
                }
            }
        }
    }

    /// Draws a 1-pixel line from `a` to `b` (world points), depth-tested like triangles.
    /// `depth_bias` (metres) is added to the line's depth so that surfaces lying on it win.
    pub fn draw_line(&mut self, a: [f64; 3], b: [f64; 3], color: [u8; 3], depth_bias: f64) {
        let cam = self.camera;
        let (pa, pb) = (cam.project(a), cam.project(b));
        if pa.iter().chain(pb.iter()).any(|x| !x.is_finite()) {
            return;
        }
        let (w, h) = (f64::from(cam.width), f64::from(cam.height));
        let d = sub(pb, pa);
        // Liang-Barsky clipping of the parameter range to the image rectangle.
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for (delta, lo, hi, start) in [(d[0], 0.0, w, pa[0]), (d[1], 0.0, h, pa[1])] {
            if delta == 0.0 {
                if start < lo || start >= hi {
                    return;
                }
            } else {
                let (ta, tb) = ((lo - start) / delta, (hi - start) / delta);
                let (tmin, tmax) = if ta < tb { (ta, tb) } else { (tb, ta) };
                t0 = t0.max(tmin);
                t1 = t1.min(tmax);
            }
        }
        if t0 > t1 {
            return;
        }
        let steps = ((t1 - t0) * d[0].abs().max(d[1].abs())).ceil().max(1.0) as usize;
        let width = cam.width as usize;
        for s in 0..=steps {
            let t = t0 + (t1 - t0) * s as f64 / steps as f64;
            let x = (pa[0] + t * d[0]).floor();
            let y = (pa[1] + t * d[1]).floor();
            if x < 0.0 || y < 0.0 || x >= w || y >= h {
                continue;
            }
            let z = pa[2] + t * d[2] + depth_bias;
            let i = y as usize * width + x as usize;
            if z < self.depth[i] {
                self.depth[i] = z;
                self.image.rgb[3 * i..3 * i + 3].copy_from_slice(&color);
            }
        }
    }
}

/// Twice the signed area of (a, b, q) in the image plane (pixel units).
fn edge(a: [f64; 3], b: [f64; 3], q: [f64; 3]) -> f64 {
    (b[0] - a[0]) * (q[1] - a[1]) - (b[1] - a[1]) * (q[0] - a[0])
}

/// [`edge`] evaluated with the endpoints in a canonical order, so that the two triangles sharing
/// an edge get exactly opposite values (rounding would otherwise let a pixel centre on the edge
/// fall outside both, leaving a crack).
fn shared_edge(a: [f64; 3], b: [f64; 3], q: [f64; 3]) -> f64 {
    if (a[0], a[1]) <= (b[0], b[1]) {
        edge(a, b, q)
    } else {
        -edge(b, a, q)
    }
}

pub(crate) fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

pub(crate) fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub(crate) fn scale(a: [f64; 3], s: f64) -> [f64; 3] {
    [a[0] * s, a[1] * s, a[2] * s]
}

pub(crate) fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub(crate) fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

pub(crate) fn norm(a: [f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

/// Unit vector along `a`, or `None` if `a` is zero or not finite.
pub(crate) fn normalize(a: [f64; 3]) -> Option<[f64; 3]> {
    let n = norm(a);
    (n > 0.0 && n.is_finite()).then(|| scale(a, 1.0 / n))
}
