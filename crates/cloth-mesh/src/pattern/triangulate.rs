//! Triangulation of one panel outline: constrained Delaunay with Ruppert/Chew refinement
//! (`spade`), keeping the outline's vertices and segments exactly as given so that stitched
//! edges keep their matching vertices.

use std::collections::HashSet;

use spade::handles::FixedVertexHandle;
use spade::{
    AngleLimit, ConstrainedDelaunayTriangulation, Point2, RefinementParameters, Triangulation,
};

use crate::Vec2;

/// Smallest angle the refinement aims for, in degrees. 25 degrees terminates reliably
/// (Ruppert's bound is about 20.7; spade's default is 30 and may over-refine next to small
/// input angles).
pub(crate) const ANGLE_LIMIT_DEG: f64 = 25.0;

/// Largest triangle area the refinement allows, as a multiple of `h^2` for target edge length
/// `h`. An equilateral triangle of side `h` has `sqrt(3)/4 h^2 = 0.433 h^2`; the refinement
/// splits every triangle above the limit, which leaves triangles between about a third of the
/// limit and the limit, so the limit sits above the equilateral area to make the mean interior
/// edge close to `h` (checked by a test).
pub(crate) const MAX_AREA_FACTOR: f64 = 0.6;

/// A triangulated panel in rest (u, v) coordinates.
pub(crate) struct PanelTriangulation {
    /// The outline points (first, in the given order), then the inserted interior points.
    pub points: Vec<Vec2>,
    /// Triangles, counter-clockwise.
    pub triangles: Vec<[usize; 3]>,
}

/// Triangulates the simple closed polygon `outline` (either orientation; no repeated points,
/// no self-intersections: the caller checks) with interior points added until triangles have
/// edges of about `h` (m) and angles above [`ANGLE_LIMIT_DEG`] where the outline allows.
/// The outline's segments are never split. `area` is the polygon's area (m^2), used to bound
/// the work.
pub(crate) fn triangulate_outline(
    outline: &[Vec2],
    h: f64,
    area: f64,
) -> Result<PanelTriangulation, String> {
    // spade may panic on inputs at the edge of floating point (it asserts on some failed
    // insertions); the outline was validated, but a panic must never escape to the caller.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        triangulate_unguarded(outline, h, area)
    })) {
        Ok(r) => r,
        Err(_) => Err("the triangulation library panicked on this outline".to_string()),
    }
}

fn triangulate_unguarded(
    outline: &[Vec2],
    h: f64,
    area: f64,
) -> Result<PanelTriangulation, String> {
    let n = outline.len();
    if n < 3 {
        return Err(format!("outline has {n} points, need at least 3"));
    }
    let mut cdt = framed_cdt(outline, h)?;
    let excluded = refine(&mut cdt, n, h, area)?;
    let mut points: Vec<Vec2> = outline.to_vec();
    for v in cdt.vertices().skip(n + 4) {
        let p = v.position();
        points.push(Vec2::new(p.x, p.y));
    }
    let triangles = inner_triangles(&cdt, &excluded, &points, n)?;
    drop_unused(points, triangles, n)
}

/// The constrained Delaunay triangulation of the closed polygon `outline` inside a square
/// frame well outside it (vertices: the outline's `n`, then the frame's 4): the frame keeps
/// the outline off the convex hull, whose edges spade may split during refinement even when
/// asked to keep constraint edges.
fn framed_cdt(
    outline: &[Vec2],
    h: f64,
) -> Result<ConstrainedDelaunayTriangulation<Point2<f64>>, String> {
    let n = outline.len();
    let (mut lo, mut hi) = (outline[0], outline[0]);
    for p in outline {
        lo = lo.inf(p);
        hi = hi.sup(p);
    }
    let pad = (hi - lo).norm().max(h);
    let (lo, hi) = (lo - Vec2::repeat(pad), hi + Vec2::repeat(pad));
    let mut vertices: Vec<Point2<f64>> = outline.iter().map(|p| Point2::new(p.x, p.y)).collect();
    vertices.extend([
        Point2::new(lo.x, lo.y),
        Point2::new(hi.x, lo.y),
        Point2::new(hi.x, hi.y),
        Point2::new(lo.x, hi.y),
    ]);
    let edges: Vec<[usize; 2]> = (0..n).map(|i| [i, (i + 1) % n]).collect();
    let mut conflicts = 0usize;
    let cdt: ConstrainedDelaunayTriangulation<Point2<f64>> =
        ConstrainedDelaunayTriangulation::try_bulk_load_cdt(vertices, edges, |_| conflicts += 1)
            .map_err(|e| format!("cannot insert the outline: {e:?}"))?;
    if cdt.num_vertices() != n + 4 {
        return Err("outline points coincide".to_string());
    }
    if conflicts > 0 || cdt.num_constraints() != n {
        return Err("outline segments cross or pass through outline points".to_string());
    }
    Ok(cdt)
}

/// Refines `cdt` (outline of `n` points enclosing `area`) to triangles of about edge `h`;
/// returns the faces outside the outline. Fails if the refinement does not finish or splits
/// an outline segment.
fn refine(
    cdt: &mut ConstrainedDelaunayTriangulation<Point2<f64>>,
    n: usize,
    h: f64,
    area: f64,
) -> Result<HashSet<usize>, String> {
    let target_area = MAX_AREA_FACTOR * h * h;
    // Enough room for the interior points (about area / (0.43 h^2) of them) plus margin.
    let interior_estimate = (area / (0.25 * h * h)).ceil();
    let budget = if interior_estimate.is_finite() {
        (interior_estimate as usize)
            .saturating_mul(2)
            .saturating_add(10 * n)
    } else {
        10 * n
    };
    let params = RefinementParameters::<f64>::new()
        .exclude_outer_faces(true)
        .keep_constraint_edges()
        .with_angle_limit(AngleLimit::from_deg(ANGLE_LIMIT_DEG))
        .with_max_allowed_area(target_area)
        .with_min_required_area(0.01 * h * h)
        .with_max_additional_vertices(budget);
    let result = cdt.refine(params);
    if !result.refinement_complete {
        return Err(format!(
            "refinement did not finish within {budget} added points"
        ));
    }
    for i in 0..n {
        let (a, b) = (
            FixedVertexHandle::from_index(i),
            FixedVertexHandle::from_index((i + 1) % n),
        );
        if !cdt.exists_constraint(a, b) {
            return Err(format!("outline segment {i} was split"));
        }
    }
    Ok(result.excluded_faces.iter().map(|f| f.index()).collect())
}

/// The counter-clockwise triangles of `cdt` inside the outline (`excluded`: the faces
/// outside), indexed into `points` (outline `0..n`, then the inserted points).
fn inner_triangles(
    cdt: &ConstrainedDelaunayTriangulation<Point2<f64>>,
    excluded: &HashSet<usize>,
    points: &[Vec2],
    n: usize,
) -> Result<Vec<[usize; 3]>, String> {
    // spade keeps vertex indices: outline 0..n, frame n..n+4, inserted points after.
    let map = |v: usize| -> Option<usize> {
        if v < n {
            Some(v)
        } else if v >= n + 4 {
            Some(v - 4)
        } else {
            None
        }
    };
    let mut triangles = Vec::new();
    for face in cdt.inner_faces() {
        if excluded.contains(&face.fix().index()) {
            continue;
        }
        let [a, b, c] = face.vertices().map(|v| map(v.fix().index()));
        let (Some(a), Some(b), Some(c)) = (a, b, c) else {
            return Err("an inner triangle touches the bounding frame".to_string());
        };
        let (pa, pb, pc) = (points[a], points[b], points[c]);
        let twice = (pb - pa).perp(&(pc - pa));
        if twice > 0.0 {
            triangles.push([a, b, c]);
        } else if twice < 0.0 {
            triangles.push([a, c, b]);
        } else {
            return Err("a triangle has zero area".to_string());
        }
    }
    if triangles.is_empty() {
        return Err("no triangle inside the outline".to_string());
    }
    Ok(triangles)
}

/// The triangulation with every outline point (the first `n` points) in a triangle; inserted
/// points that ended up in no kept triangle (none are expected) are dropped so the mesh has
/// no isolated vertex.
fn drop_unused(
    mut points: Vec<Vec2>,
    mut triangles: Vec<[usize; 3]>,
    n: usize,
) -> Result<PanelTriangulation, String> {
    let mut used = vec![false; points.len()];
    for t in &triangles {
        for &v in t {
            used[v] = true;
        }
    }
    if let Some(i) = used[..n].iter().position(|u| !u) {
        return Err(format!("outline point {i} is in no triangle"));
    }
    if used.iter().any(|u| !u) {
        let mut new_index = vec![usize::MAX; points.len()];
        let mut kept = Vec::with_capacity(points.len());
        for (i, p) in points.iter().enumerate() {
            if used[i] {
                new_index[i] = kept.len();
                kept.push(*p);
            }
        }
        for t in &mut triangles {
            *t = t.map(|v| new_index[v]);
        }
        points = kept;
    }
    Ok(PanelTriangulation { points, triangles })
}
