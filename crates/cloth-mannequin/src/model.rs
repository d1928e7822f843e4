//! The mannequin as built: skeleton, distance field and extracted surface, quantised.

use crate::body::{self, V3};
use crate::measure;
use crate::surface::{self, TriMesh};

/// Coordinate quantum (m): 2^-12, exact in f32 for |x| < 2^11 and printed exactly.
pub const QUANTUM: f64 = 1.0 / 4096.0;
/// Marching-cubes cell size (m).
const CELL: f64 = 0.0175;
/// Smoothing passes after extraction.
const RELAX_PASSES: usize = 8;

fn quantize(x: f64) -> f64 {
    (x / QUANTUM).round() * QUANTUM
}

/// The generated mannequin.
pub struct Mannequin {
    /// Skeleton (positions quantized).
    pub joints: Vec<body::Joint>,
    /// The surface (vertices quantized, feet on y = 0).
    pub mesh: TriMesh,
    /// The field the surface was extracted from.
    pub body: body::Body,
}

/// Builds the mannequin: skeleton, field, surface.
pub fn build() -> Mannequin {
    let mut joints = body::skeleton();
    for j in &mut joints {
        j.position = j.position.map(quantize);
    }
    let body = body::Body::new(&joints);
    let f = |p: &V3| body.sdf(p);
    let g = |p: &V3| body.gradient(p);
    // Grid covering the body with a margin of two cells; offset by a fraction of a cell so
    // that no sample lies on a symmetry plane of the body.
    let lo = V3::new(-0.80, -0.05, -0.22) + V3::repeat(CELL * 0.37);
    let hi = V3::new(0.80, 1.75, 0.32);
    let n = [0, 1, 2].map(|a| ((hi[a] - lo[a]) / CELL).ceil() as usize + 1);
    let mut mesh = surface::marching_cubes(&f, lo, CELL, n);
    surface::relax(&mut mesh, &f, &g, RELAX_PASSES);
    let (min_y, _) = measure::y_range(&mesh);
    for p in &mut mesh.vertices {
        p.y -= min_y;
        *p = p.map(quantize);
    }
    Mannequin { joints, mesh, body }
}
