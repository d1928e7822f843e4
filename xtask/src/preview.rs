//! Side-by-side previews of the implicit-against-explicit comparison: each compare case writes
//! its last frame ([`FinalFrame`], JSON) and the cases of one scene are rendered in one image,
//! left to right in run order, through one camera, so their shapes compare at the same scale.

use cloth::view::{
    Aabb, Animation, Camera, Image, Style, View, encode_png, ground_grid, render_frame,
};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A run's cloth at its last frame.
#[derive(Debug, Serialize, Deserialize)]
pub struct FinalFrame {
    /// Vertex positions (m).
    pub positions: Vec<[f64; 3]>,
    /// Triangles (0-based vertex indices).
    pub triangles: Vec<[usize; 3]>,
}

/// Writes `frame` as JSON to `path` (creating its folder).
pub fn write_final_frame(path: &Path, frame: &FinalFrame) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let text = serde_json::to_string(frame).map_err(|e| e.to_string())?;
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Gap between two cloths in the image, as a fraction of the widest cloth's width.
const GAP: f64 = 0.15;

/// Pixels per panel side.
const PANEL: u32 = 320;

/// Renders the last frames in `frames` (JSON files written by [`write_final_frame`]) side by
/// side, front view, into the PNG `out` (see [`side_by_side_image`]). Returns the number of
/// cloths shown.
pub fn side_by_side(frames: &[&Path], out: &Path) -> Result<usize, String> {
    let image = side_by_side_image(frames)?;
    let bytes = encode_png(&image).map_err(|e| format!("{}: {e}", out.display()))?;
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(out, bytes).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(frames.len())
}

/// The image of [`side_by_side`]: each cloth shifted along x so that its box starts where the
/// previous one's ended plus a gap, [`PANEL`] pixels high and `PANEL` wide per cloth.
pub fn side_by_side_image(frames: &[&Path]) -> Result<Image, String> {
    let mut parts = Vec::new();
    for path in frames {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let f: FinalFrame =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if f.positions.iter().flatten().any(|c| !c.is_finite()) {
            return Err(format!("{}: non-finite positions", path.display()));
        }
        parts.push(f);
    }
    let boxes: Vec<Aabb> = parts
        .iter()
        .map(|f| Aabb::of_points(&f.positions))
        .collect();
    let width = boxes
        .iter()
        .map(|b| b.max[0] - b.min[0])
        .fold(0.0, f64::max);
    let (mut positions, mut triangles) = (Vec::new(), Vec::new());
    let mut x = 0.0;
    for (f, b) in parts.iter().zip(&boxes) {
        let base = positions.len();
        let shift = x - b.min[0];
        positions.extend(f.positions.iter().map(|p| [p[0] + shift, p[1], p[2]]));
        triangles.extend(f.triangles.iter().map(|t| t.map(|v| v + base)));
        x += b.max[0] - b.min[0] + GAP * width.max(1e-3);
    }
    let anim = Animation {
        frame_numbers: vec![0],
        positions: vec![positions],
        triangles,
        uvs: Vec::new(),
        triangle_uvs: None,
        colliders: Vec::new(),
        fps: 30.0,
        cloths: Vec::new(),
    };
    let bounds = Aabb::of_points(&anim.positions[0]);
    let n = u32::try_from(parts.len().max(1)).unwrap_or(1);
    let camera = Camera::framing(View::Front, &bounds, PANEL * n, PANEL);
    Ok(render_frame(
        &anim,
        0,
        &camera,
        &Style::default(),
        &ground_grid(&bounds),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two unit squares at the origin come out as an image twice as wide as high, with cloth
    /// pixels in both halves and background between them.
    #[test]
    fn two_cloths_are_drawn_apart() {
        let dir = std::env::temp_dir().join(format!("xtask-preview-{}", std::process::id()));
        let square = FinalFrame {
            positions: vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [1.0, 1.0, 0.0],
                [0.0, 1.0, 0.0],
            ],
            triangles: vec![[0, 1, 2], [0, 2, 3]],
        };
        let (a, b) = (dir.join("a.json"), dir.join("b.json"));
        write_final_frame(&a, &square).unwrap();
        write_final_frame(&b, &square).unwrap();
        let image = side_by_side_image(&[&a, &b]).unwrap();
        assert_eq!((image.width, image.height), (2 * PANEL, PANEL));
        let style = Style::default();
        let row = image.height / 2;
        let cols: Vec<bool> = (0..image.width)
            .map(|x| {
                image
                    .pixel(x, row)
                    .is_some_and(|p| p != style.background && p != style.grid)
            })
            .collect();
        // Runs of cloth pixels along the middle row: exactly two.
        let runs = cols.windows(2).filter(|w| !w[0] && w[1]).count() + usize::from(cols[0]);
        assert_eq!(runs, 2, "cloth runs along the middle row");
        let out = dir.join("side.png");
        assert_eq!(side_by_side(&[&a, &b], &out).unwrap(), 2);
        assert!(std::fs::metadata(&out).unwrap().len() > 0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
