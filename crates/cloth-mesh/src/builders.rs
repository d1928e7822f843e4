//! Procedural meshes: rectangular grids and discs in the x-z plane.

use std::f64::consts::PI;

use crate::{ClothMesh, MeshError, Vec2, Vec3};

/// How [`grid`] triangulates the rectangle.
///
/// Bending anisotropy (dihedral-angle bending with the discrete-shells weight, see
/// `docs/physics.md`): a `Uniform` right-triangle grid is about 3x too stiff when bent along its
/// diagonals and 1x along its axes; `Alternating` about 1.5x; `Equilateral` is close to
/// isotropic. The default is `Alternating`: it keeps the simple `nx x ny` vertex lattice
/// and avoids the strong diagonal bias of `Uniform`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum GridPattern {
    /// Every quad split along the same diagonal, from `(i, j)` to `(i + 1, j + 1)`.
    Uniform,
    /// Diagonals alternate in a checkerboard: quad `(i, j)` is split from `(i, j)` to
    /// `(i + 1, j + 1)` when `i + j` is even, from `(i + 1, j)` to `(i, j + 1)` otherwise.
    #[default]
    Alternating,
    /// Staggered rows: even rows `j` have `nx` vertices at `u = i * dx`
    /// (`dx = width / (nx - 1)`); odd rows are shifted by half a spacing and have `nx + 1`
    /// vertices: `u = 0`, `u = (i + 1/2) dx` for `i in 0..nx-1`, and `u = width`, so the
    /// outline stays a straight rectangle (boundary triangles are half-triangles).
    /// The vertex count is `nx * ceil(ny / 2) + (nx + 1) * floor(ny / 2)`, each row pair
    /// strip has `2 nx - 1` triangles, `(ny - 1)(2 nx - 1)` in total.
    /// Interior triangles are equilateral when `height / (ny - 1) = sqrt(3)/2 * width / (nx - 1)`;
    /// [`equilateral_height`] gives that height.
    Equilateral,
}

/// The grid height (m) that makes [`GridPattern::Equilateral`] triangles equilateral for a
/// given `width` (m) and vertex counts: `(ny - 1) * sqrt(3)/2 * width / (nx - 1)`.
/// Returns 0 when `nx < 2` or `ny < 2`.
pub fn equilateral_height(width: f64, nx: usize, ny: usize) -> f64 {
    if nx < 2 || ny < 2 {
        return 0.0;
    }
    (ny - 1) as f64 * 3f64.sqrt() / 2.0 * width / (nx - 1) as f64
}

fn check_length(name: &'static str, value: f64) -> Result<(), MeshError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(MeshError::InvalidParameter {
            name,
            reason: format!("must be finite and positive, got {value} m"),
        })
    }
}

/// A rectangular sheet of `width x height` metres in the x-z plane at y = 0, centred on the
/// origin: vertex rest coordinates `(u, v)` with `u in [0, width]`, `v in [0, height]` and
/// position `(u - width/2, 0, v - height/2)`. Triangles are counter-clockwise in (u, v), so
/// their right-hand normals point along -y.
///
/// For `Uniform` and `Alternating`, vertices form an `nx x ny` lattice, vertex
/// `j * nx + i` at `u = i * width / (nx - 1)`, `v = j * height / (ny - 1)`, with
/// `2 (nx - 1)(ny - 1)` triangles (51 x 51 gives 2601 vertices and 5000 triangles). For
/// `Equilateral` see [`GridPattern::Equilateral`]: rows are numbered the same way (row by
/// row, increasing u within a row) but odd rows have one more vertex.
///
/// Errors: `nx < 2`, `ny < 2`, or a non-finite / non-positive size.
pub fn grid(
    nx: usize,
    ny: usize,
    width: f64,
    height: f64,
    pattern: GridPattern,
) -> Result<ClothMesh, MeshError> {
    if nx < 2 {
        return Err(MeshError::InvalidParameter {
            name: "nx",
            reason: format!("need at least 2 vertices per row, got {nx}"),
        });
    }
    if ny < 2 {
        return Err(MeshError::InvalidParameter {
            name: "ny",
            reason: format!("need at least 2 rows, got {ny}"),
        });
    }
    check_length("width", width)?;
    check_length("height", height)?;
    if nx.checked_mul(ny).and_then(|n| n.checked_mul(8)).is_none() {
        return Err(MeshError::InvalidParameter {
            name: "nx",
            reason: format!("{nx} x {ny} vertices overflow"),
        });
    }
    let dx = width / (nx - 1) as f64;
    let dy = height / (ny - 1) as f64;
    // Row j's v coordinate; the last row is exactly `height` so the outline is exact.
    let row_v = |j: usize| if j + 1 == ny { height } else { j as f64 * dy };
    let col_u = |i: usize| if i + 1 == nx { width } else { i as f64 * dx };
    let (rest, tris) = match pattern {
        GridPattern::Uniform | GridPattern::Alternating => {
            lattice(nx, ny, pattern == GridPattern::Uniform, &col_u, &row_v)
        }
        GridPattern::Equilateral => staggered(nx, ny, dx, width, &col_u, &row_v),
    };
    let positions = rest
        .iter()
        .map(|r| Vec3::new(r.x - 0.5 * width, 0.0, r.y - 0.5 * height))
        .collect();
    ClothMesh::new(positions, rest, tris)
}

/// The `nx x ny` lattice of [`GridPattern::Uniform`] (`uniform`) or
/// [`GridPattern::Alternating`]: rest coordinates (column `col_u`, row `row_v`) and triangles.
fn lattice(
    nx: usize,
    ny: usize,
    uniform: bool,
    col_u: &impl Fn(usize) -> f64,
    row_v: &impl Fn(usize) -> f64,
) -> (Vec<Vec2>, Vec<[usize; 3]>) {
    let mut rest = Vec::new();
    let mut tris = Vec::new();
    rest.reserve(nx * ny);
    for j in 0..ny {
        for i in 0..nx {
            rest.push(Vec2::new(col_u(i), row_v(j)));
        }
    }
    tris.reserve(2 * (nx - 1) * (ny - 1));
    for j in 0..ny - 1 {
        for i in 0..nx - 1 {
            let a = j * nx + i;
            let b = a + 1;
            let c = a + nx + 1;
            let d = a + nx;
            if uniform || (i + j) % 2 == 0 {
                tris.push([a, b, c]);
                tris.push([a, c, d]);
            } else {
                tris.push([a, b, d]);
                tris.push([b, c, d]);
            }
        }
    }
    (rest, tris)
}

/// The staggered rows of [`GridPattern::Equilateral`]: rest coordinates (even rows at
/// `col_u`, odd rows offset by half the spacing `dx` plus both ends, `width` wide) and
/// triangles.
fn staggered(
    nx: usize,
    ny: usize,
    dx: f64,
    width: f64,
    col_u: &impl Fn(usize) -> f64,
    row_v: &impl Fn(usize) -> f64,
) -> (Vec<Vec2>, Vec<[usize; 3]>) {
    let mut rest = Vec::new();
    let mut tris = Vec::new();
    let mut row_start = Vec::with_capacity(ny);
    for j in 0..ny {
        row_start.push(rest.len());
        let v = row_v(j);
        if j % 2 == 0 {
            for i in 0..nx {
                rest.push(Vec2::new(col_u(i), v));
            }
        } else {
            rest.push(Vec2::new(0.0, v));
            for i in 0..nx - 1 {
                rest.push(Vec2::new((i as f64 + 0.5) * dx, v));
            }
            rest.push(Vec2::new(width, v));
        }
    }
    for j in 0..ny - 1 {
        let lo = row_start[j];
        let hi = row_start[j + 1];
        if j % 2 == 0 {
            // Even row below (E_0..E_{nx-1}), odd row above (O_0..O_nx).
            let e = |i: usize| lo + i;
            let o = |k: usize| hi + k;
            tris.push([e(0), o(1), o(0)]);
            for i in 0..nx - 1 {
                tris.push([e(i), e(i + 1), o(i + 1)]);
                if i + 1 < nx - 1 {
                    tris.push([e(i + 1), o(i + 2), o(i + 1)]);
                }
            }
            tris.push([e(nx - 1), o(nx), o(nx - 1)]);
        } else {
            // Odd row below (O_0..O_nx), even row above (E_0..E_{nx-1}).
            let o = |k: usize| lo + k;
            let e = |i: usize| hi + i;
            tris.push([o(0), o(1), e(0)]);
            for k in 1..nx {
                tris.push([o(k), e(k), e(k - 1)]);
                if k + 1 < nx {
                    tris.push([o(k), o(k + 1), e(k)]);
                }
            }
            tris.push([o(nx - 1), o(nx), e(nx - 1)]);
        }
    }
    (rest, tris)
}

/// A disc of `radius` metres in the x-z plane at y = 0, centred on the origin, made of
/// `resolution` concentric rings around a centre vertex: ring `k` (1-based) has radius
/// `k * radius / resolution` and `6k` equally spaced vertices starting on the +x axis,
/// giving `1 + 3 resolution (resolution + 1)` vertices and `6 resolution^2` triangles.
/// Neighbouring rings are stitched by advancing along whichever ring's next vertex has the
/// smaller polar angle, which keeps triangles well shaped (minimum angle above 25 degrees).
/// Rest coordinates are `(u, v) = (x, z) + radius`; triangles are counter-clockwise in
/// (u, v) (normals along -y). The outline is the regular `6 resolution`-gon inscribed in the
/// circle, so the total rest area is `3 resolution radius^2 sin(pi / (3 resolution))`.
///
/// Errors: `resolution == 0` or a non-finite / non-positive radius.
pub fn disc(radius: f64, resolution: usize) -> Result<ClothMesh, MeshError> {
    check_length("radius", radius)?;
    if resolution == 0 {
        return Err(MeshError::InvalidParameter {
            name: "resolution",
            reason: "need at least one ring".to_string(),
        });
    }
    if resolution > 100_000 {
        return Err(MeshError::InvalidParameter {
            name: "resolution",
            reason: format!("{resolution} rings is too many (at most 100000)"),
        });
    }
    let n = resolution;
    let mut xz = vec![(0.0f64, 0.0f64)];
    // ring_start[k] = index of the first vertex of ring k (ring 0 = centre).
    let mut ring_start = vec![0usize];
    for k in 1..=n {
        ring_start.push(xz.len());
        let r = if k == n {
            radius
        } else {
            radius * k as f64 / n as f64
        };
        let m = 6 * k;
        for j in 0..m {
            let th = 2.0 * PI * j as f64 / m as f64;
            xz.push((r * th.cos(), r * th.sin()));
        }
    }
    let mut tris = Vec::with_capacity(6 * n * n);
    for j in 0..6 {
        let s = ring_start[1];
        tris.push([0, s + j, s + (j + 1) % 6]);
    }
    for k in 2..=n {
        let (si, mi) = (ring_start[k - 1], 6 * (k - 1));
        let (so, mo) = (ring_start[k], 6 * k);
        let (mut i, mut j) = (0usize, 0usize);
        while i < mi || j < mo {
            // Compare the next polar angles i+1 / mi and j+1 / mo exactly in integers.
            let advance_outer = i == mi || (j < mo && (j + 1) * mi <= (i + 1) * mo);
            if advance_outer {
                tris.push([si + i % mi, so + j, so + (j + 1) % mo]);
                j += 1;
            } else {
                tris.push([si + i, so + j % mo, si + (i + 1) % mi]);
                i += 1;
            }
        }
    }
    let positions = xz.iter().map(|&(x, z)| Vec3::new(x, 0.0, z)).collect();
    let rest = xz
        .iter()
        .map(|&(x, z)| Vec2::new(x + radius, z + radius))
        .collect();
    ClothMesh::new(positions, rest, tris)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equilateral_height_matches_row_spacing() {
        let h = equilateral_height(2.0, 5, 3);
        // dx = 0.5, two row gaps of sqrt(3)/4 each.
        assert!((h - 3f64.sqrt() / 2.0).abs() < 1e-15);
        assert_eq!(equilateral_height(1.0, 1, 3), 0.0);
    }

    #[test]
    fn disc_ring_strips_have_the_expected_triangle_counts() {
        // Between rings k-1 and k there are 6(k-1) + 6k triangles; the centre fan has 6.
        let m = disc(1.0, 3).unwrap();
        let ring = |v: usize| match v {
            0 => 0,
            1..=6 => 1,
            7..=18 => 2,
            _ => 3,
        };
        let mut per_strip = [0usize; 4];
        for t in m.triangles() {
            per_strip[t.iter().map(|&v| ring(v)).max().unwrap()] += 1;
        }
        assert_eq!(per_strip, [0, 6, 18, 30]);
    }
}
