//! From a validated [`Pattern`] to a [`Garment`]: edge discretisation, panel triangulation,
//! placement in 3-D, stitches and the expected openings.

use std::collections::HashSet;
use std::fmt;
use std::ops::Range;

use super::triangulate::triangulate_outline;
use super::validate::{CheckedPanel, check};
use super::{
    Panel, Pattern, PatternLocation, PatternProblem, PatternStitch, outline, panel_key, pattern_err,
};
use crate::{ClothMesh, MeshError, Vec2, Vec3};

/// Largest garment [`Pattern::build`] makes, in (estimated) vertices: 2 million, about
/// 4 million triangles. Beyond it the edge length is surely a unit mistake (centimetres for
/// metres), and building would exhaust memory.
pub const MAX_GARMENT_VERTICES: usize = 2_000_000;

/// A sewing pattern made into cloth: one mesh holding every panel as a separate component,
/// and the vertex pairs to sew.
#[derive(Clone, Debug)]
pub struct Garment {
    /// All panels. World positions: each panel's outline placed by its rotation and
    /// translation (m); rest (u, v): the panel's own 2-D coordinates (m), mirrored
    /// (`u = -x`) for clockwise panels (see [`GarmentPanel::mirrored`]).
    pub mesh: ClothMesh,
    /// Per panel, in [`Pattern::panels`] order.
    pub panels: Vec<GarmentPanel>,
    /// Vertex pairs to sew, stitch by stitch and in order along each stitch; each unordered
    /// pair appears once and no vertex is paired with itself.
    pub stitches: Vec<Stitch>,
    /// The pattern's stitches (sides and direction), indexed by [`Stitch::pattern_stitch`].
    pub pattern_stitches: Vec<PatternStitch>,
    /// Number of boundary loops of the sewn garment (its openings: neck, hem, cuffs, ...):
    /// [`count_boundary_loops`] of the mesh with every stitch pair welded.
    pub openings: usize,
    /// The target edge length the garment was built with (m).
    pub edge_length: f64,
}

/// Where a panel lives in the [`Garment`]'s mesh.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GarmentPanel {
    /// Panel name.
    pub name: String,
    /// Its vertices in the mesh (the outline first, in loop order from the start of edge 0,
    /// then interior vertices).
    pub vertices: Range<usize>,
    /// Its triangles in the mesh.
    pub triangles: Range<usize>,
    /// For each pattern edge, the mesh vertices along it from its start to its end corner,
    /// both included (consecutive edges share their corner vertex).
    pub edges: Vec<Vec<usize>>,
    /// The panel's loop is clockwise in its 2-D coordinates, so rest coordinates are
    /// mirrored (`u = -x`, `v = y`) to keep triangles counter-clockwise in (u, v). Face
    /// normals follow the loop's right-hand rule either way, as in the reference mesher.
    pub mirrored: bool,
}

/// One pair of mesh vertices to sew together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stitch {
    /// The two vertices; `vertices[0]` lies on the first side of the pattern stitch.
    pub vertices: [usize; 2],
    /// Index of the pattern stitch it comes from (into [`Garment::pattern_stitches`]).
    pub pattern_stitch: usize,
}

/// Counts per panel, for reports (`cloth check`).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct PanelSummary {
    /// Panel name.
    pub name: String,
    /// Mesh vertices of the panel.
    pub vertices: usize,
    /// Triangles of the panel.
    pub triangles: usize,
    /// Edges of the panel taking part in a stitch.
    pub stitched_edges: usize,
    /// Rest area (m^2).
    pub rest_area: f64,
}

/// Counts for a whole garment, for reports (`cloth check`); `Display` prints one line per
/// panel and a total.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct GarmentSummary {
    /// Per panel, in pattern order.
    pub panels: Vec<PanelSummary>,
    /// Stitches of the pattern (edge pairs).
    pub pattern_stitches: usize,
    /// Vertex pairs to sew ([`Garment::stitches`]).
    pub stitch_pairs: usize,
    /// Expected openings after sewing ([`Garment::openings`]).
    pub openings: usize,
    /// Mesh vertices.
    pub vertices: usize,
    /// Mesh triangles.
    pub triangles: usize,
    /// Total rest area (m^2).
    pub rest_area: f64,
    /// Target edge length (m).
    pub edge_length: f64,
}

impl fmt::Display for GarmentSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.panels {
            writeln!(
                f,
                "panel {:<20} {:>7} vertices {:>7} triangles {:>3} stitched edges {:>8.4} m^2",
                p.name, p.vertices, p.triangles, p.stitched_edges, p.rest_area
            )?;
        }
        write!(
            f,
            "garment: {} panels, {} vertices, {} triangles, {:.4} m^2, {} stitches ({} vertex pairs), {} openings, edge length {} m",
            self.panels.len(),
            self.vertices,
            self.triangles,
            self.rest_area,
            self.pattern_stitches,
            self.stitch_pairs,
            self.openings,
            self.edge_length
        )
    }
}

impl Garment {
    /// Counts per panel and in total.
    pub fn summary(&self) -> GarmentSummary {
        let areas = self.mesh.rest_areas();
        let mut stitched = vec![0usize; self.panels.len()];
        for st in &self.pattern_stitches {
            for side in st.sides {
                if let Some(c) = stitched.get_mut(side.panel) {
                    *c += 1;
                }
            }
        }
        let panels = self
            .panels
            .iter()
            .zip(stitched)
            .map(|(p, stitched_edges)| PanelSummary {
                name: p.name.clone(),
                vertices: p.vertices.len(),
                triangles: p.triangles.len(),
                stitched_edges,
                rest_area: areas[p.triangles.clone()].iter().sum(),
            })
            .collect();
        GarmentSummary {
            panels,
            pattern_stitches: self.pattern_stitches.len(),
            stitch_pairs: self.stitches.len(),
            openings: self.openings,
            vertices: self.mesh.num_vertices(),
            triangles: self.mesh.num_triangles(),
            rest_area: self.mesh.total_rest_area(),
            edge_length: self.edge_length,
        }
    }

    /// The panel a mesh vertex belongs to (index into [`Garment::panels`]).
    pub fn panel_of_vertex(&self, v: usize) -> Option<usize> {
        self.panels.iter().position(|p| p.vertices.contains(&v))
    }
}

/// Segments for an edge of arc length `len` (m) at target length `h` (m): `ceil(len / h)`,
/// at least 1 for a straight edge and 2 for a curved one (so every panel has at least three
/// outline points). A tolerance of 1e-9 keeps an edge of exactly `k h` at `k` segments.
fn segments_for(len: f64, h: f64, straight: bool) -> f64 {
    let n = (len / h - 1e-9).ceil();
    n.max(if straight { 1.0 } else { 2.0 })
}

impl Pattern {
    /// Makes the garment: every edge cut into segments of about `edge_length` (m) by arc
    /// length, every panel triangulated to roughly uniform triangles of that edge length
    /// (constrained Delaunay refinement with a 25 degree angle bound where the outline
    /// allows), placed in 3-D, plus the stitch pairs and the expected number of openings.
    /// See the [module documentation](crate::pattern) for the rules.
    ///
    /// Errors: `edge_length` not finite and positive or so small that the garment would
    /// exceed [`MAX_GARMENT_VERTICES`] ([`MeshError::InvalidParameter`]); any validation
    /// error of [`crate::parse_pattern`] (the pattern is checked again, so hand-made
    /// patterns are safe); a discretised outline that intersects itself or cannot be
    /// triangulated ([`PatternProblem::Triangulation`]); and [`ClothMesh::new`]'s checks.
    pub fn build(&self, edge_length: f64) -> Result<Garment, MeshError> {
        let h = edge_length;
        if !(h.is_finite() && h > 0.0) {
            return Err(MeshError::InvalidParameter {
                name: "edge_length",
                reason: format!("must be finite and positive, got {h} m"),
            });
        }
        let checked = check(self)?;
        let segs = self.segment_counts(&checked, h)?;
        let mut parts = MeshParts::default();
        let mut panels = Vec::with_capacity(self.panels.len());
        for ((panel, c), s) in self.panels.iter().zip(&checked).zip(&segs) {
            panels.push(parts.add_panel(panel, c, s, h)?);
        }
        let mesh = ClothMesh::new(parts.positions, parts.rest, parts.triangles)?;
        let (stitches, welds) = self.stitch_pairs(&panels);
        let openings = count_boundary_loops(mesh.num_vertices(), mesh.triangles(), &welds);
        Ok(Garment {
            mesh,
            panels,
            stitches,
            pattern_stitches: self.stitches.clone(),
            openings,
            edge_length: h,
        })
    }

    /// Segments per edge of every panel (both sides of a stitch take the larger count);
    /// fails if the garment would exceed [`MAX_GARMENT_VERTICES`].
    fn segment_counts(&self, checked: &[CheckedPanel], h: f64) -> Result<Vec<Vec<f64>>, MeshError> {
        let mut segs: Vec<Vec<f64>> = checked
            .iter()
            .map(|c| {
                c.curves
                    .iter()
                    .map(|cv| segments_for(cv.length(), h, cv.is_straight()))
                    .collect()
            })
            .collect();
        for st in &self.stitches {
            let [a, b] = st.sides;
            let n = segs[a.panel][a.edge].max(segs[b.panel][b.edge]);
            segs[a.panel][a.edge] = n;
            segs[b.panel][b.edge] = n;
        }
        let estimate: f64 = checked
            .iter()
            .zip(&segs)
            .map(|(c, s)| s.iter().sum::<f64>() + c.coarse_area / (0.433 * h * h))
            .sum();
        if estimate.is_nan() || estimate > MAX_GARMENT_VERTICES as f64 {
            return Err(MeshError::InvalidParameter {
                name: "edge_length",
                reason: format!(
                    "{h} m would make about {estimate:.3e} vertices, more than the limit of {MAX_GARMENT_VERTICES}"
                ),
            });
        }
        Ok(segs)
    }

    /// The vertex pairs to sew (by default the end of side 0 meets the start of side 1) and
    /// every pair welded, self-pairs and repeats included.
    fn stitch_pairs(&self, panels: &[GarmentPanel]) -> (Vec<Stitch>, Vec<[usize; 2]>) {
        let mut stitches = Vec::new();
        let mut welds = Vec::new();
        let mut seen: HashSet<(usize, usize)> = HashSet::new();
        for (s, st) in self.stitches.iter().enumerate() {
            let [a, b] = st.sides;
            let la = &panels[a.panel].edges[a.edge];
            let lb = &panels[b.panel].edges[b.edge];
            let n = la.len().min(lb.len());
            for i in 0..n {
                let va = if st.right_wrong {
                    la[i]
                } else {
                    la[la.len() - 1 - i]
                };
                let vb = lb[i];
                welds.push([va, vb]);
                if va != vb && seen.insert((va.min(vb), va.max(vb))) {
                    stitches.push(Stitch {
                        vertices: [va, vb],
                        pattern_stitch: s,
                    });
                }
            }
        }
        (stitches, welds)
    }
}

/// The garment mesh as it is assembled, panel by panel.
#[derive(Default)]
struct MeshParts {
    positions: Vec<Vec3>,
    rest: Vec<Vec2>,
    triangles: Vec<[usize; 3]>,
}

impl MeshParts {
    /// Adds `panel` (checked as `c`, `segs` segments per edge, target edge length `h`):
    /// its outline, triangulation and placement in 3-D; returns where it lives.
    fn add_panel(
        &mut self,
        panel: &Panel,
        c: &CheckedPanel,
        segs: &[f64],
        h: f64,
    ) -> Result<GarmentPanel, MeshError> {
        let name = panel.name.as_str();
        // Outline in loop order; edge k's points start at offsets[k].
        let mut outline_pts = Vec::new();
        let mut seg_edge = Vec::new();
        let mut offsets = Vec::with_capacity(c.curves.len());
        for (k, (cv, &n)) in c.curves.iter().zip(segs).enumerate() {
            let n = n as usize;
            offsets.push(outline_pts.len());
            let pts = cv.samples(n);
            outline_pts.extend_from_slice(&pts[..n]);
            seg_edge.extend(std::iter::repeat_n(k, n));
        }
        let total = outline_pts.len();
        let fail = |reason: String| {
            pattern_err(
                PatternLocation::panel(name, panel_key(name)),
                PatternProblem::Triangulation { reason },
            )
        };
        if let Some((i, j)) = outline::self_intersection(&outline_pts) {
            return Err(fail(format!(
                "at edge length {h} m the discretised outline intersects itself between edges {} and {}; use a shorter edge length",
                seg_edge[i], seg_edge[j]
            )));
        }
        let area = outline::signed_area(&outline_pts);
        if !(area.is_finite() && area != 0.0) {
            return Err(fail(format!(
                "at edge length {h} m the discretised outline encloses no area"
            )));
        }
        let mirrored = area < 0.0;
        let uv: Vec<Vec2> = outline_pts
            .iter()
            .map(|p| if mirrored { Vec2::new(-p.x, p.y) } else { *p })
            .collect();
        let tri = triangulate_outline(&uv, h, area.abs()).map_err(fail)?;

        let base = self.positions.len();
        let rot = panel.rotation();
        for q in &tri.points {
            let p = if mirrored { Vec2::new(-q.x, q.y) } else { *q };
            self.positions
                .push(rot * Vec3::new(p.x, p.y, 0.0) + panel.translation);
            self.rest.push(*q);
        }
        let t0 = self.triangles.len();
        (self.triangles).extend(tri.triangles.iter().map(|t| t.map(|v| v + base)));
        let edges = offsets
            .iter()
            .zip(segs)
            .map(|(&o, &n)| {
                let n = n as usize;
                (0..=n).map(|i| base + (o + i) % total).collect()
            })
            .collect();
        Ok(GarmentPanel {
            name: name.to_string(),
            vertices: base..self.positions.len(),
            triangles: t0..self.triangles.len(),
            edges,
            mirrored,
        })
    }
}

/// Disjoint sets with path halving; union by smaller root, so results do not depend on
/// the order of equivalent unions.
struct Dsu(Vec<usize>);

impl Dsu {
    fn new(n: usize) -> Self {
        Dsu((0..n).collect())
    }
    fn find(&mut self, mut x: usize) -> usize {
        while self.0[x] != x {
            self.0[x] = self.0[self.0[x]];
            x = self.0[x];
        }
        x
    }
    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (lo, hi) = (ra.min(rb), ra.max(rb));
            self.0[hi] = lo;
        }
    }
}

/// Number of boundary loops of a triangle mesh after welding vertex pairs: the connected
/// components of the edges that have exactly one triangle once every pair in `welds` is
/// merged (transitively). Edges whose two ends were welded together vanish. Loops that touch
/// at a vertex count as one. Triangles and welds referring to vertices at or beyond
/// `num_vertices` are ignored.
///
/// With no welds this counts the boundary loops of the mesh itself (a disc has 1, each
/// separate panel of a garment adds one); with a garment's stitch pairs it gives the
/// openings of the sewn garment.
pub fn count_boundary_loops(
    num_vertices: usize,
    triangles: &[[usize; 3]],
    welds: &[[usize; 2]],
) -> usize {
    let mut dsu = Dsu::new(num_vertices);
    for &[a, b] in welds {
        if a < num_vertices && b < num_vertices {
            dsu.union(a, b);
        }
    }
    let mut edges: Vec<(usize, usize)> = Vec::with_capacity(3 * triangles.len());
    for t in triangles {
        if t.iter().any(|&v| v >= num_vertices) {
            continue;
        }
        let r = t.map(|v| dsu.find(v));
        for k in 0..3 {
            let (a, b) = (r[k], r[(k + 1) % 3]);
            if a != b {
                edges.push((a.min(b), a.max(b)));
            }
        }
    }
    edges.sort_unstable();
    let mut loops = Dsu::new(num_vertices);
    let mut on_boundary = vec![false; num_vertices];
    let mut i = 0;
    while i < edges.len() {
        let mut j = i + 1;
        while j < edges.len() && edges[j] == edges[i] {
            j += 1;
        }
        if j - i == 1 {
            let (a, b) = edges[i];
            loops.union(a, b);
            on_boundary[a] = true;
            on_boundary[b] = true;
        }
        i = j;
    }
    let mut roots = HashSet::new();
    for (v, &b) in on_boundary.iter().enumerate() {
        if b {
            roots.insert(loops.find(v));
        }
    }
    roots.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GridPattern, grid};

    #[test]
    fn boundary_loops_of_a_sheet_a_tube_and_a_closed_box() {
        // 4 x 4 lattice: one loop.
        let m = grid(4, 4, 1.0, 1.0, GridPattern::Uniform).unwrap();
        assert_eq!(count_boundary_loops(16, m.triangles(), &[]), 1);
        // Weld the left column to the right column: a tube with two loops.
        let cols: Vec<[usize; 2]> = (0..4).map(|j| [4 * j, 4 * j + 3]).collect();
        assert_eq!(count_boundary_loops(16, m.triangles(), &cols), 2);
        // Also weld the bottom row to the top row: a torus, no boundary.
        let mut all = cols.clone();
        all.extend((0..4).map(|i| [i, 12 + i]));
        assert_eq!(count_boundary_loops(16, m.triangles(), &all), 0);
        // Weld only the two bottom corners: the loop is pinched into two touching loops,
        // which count as one.
        assert_eq!(count_boundary_loops(16, m.triangles(), &[[0, 3]]), 1);
        // Out-of-range input is ignored, not a panic.
        assert_eq!(count_boundary_loops(2, m.triangles(), &[[0, 99]]), 0);
        assert_eq!(count_boundary_loops(16, m.triangles(), &[[0, 99]]), 1);
    }

    #[test]
    fn segment_counts_round_up_with_a_tolerance() {
        assert_eq!(segments_for(0.02, 0.02, true), 1.0);
        assert_eq!(segments_for(0.0200001, 0.02, true), 2.0);
        assert_eq!(segments_for(0.001, 0.02, false), 2.0);
        assert_eq!(segments_for(0.1, 0.02 + 1e-17, true), 5.0);
    }
}
