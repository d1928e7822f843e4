//! Builds the example sewing patterns and prints their summaries, triangle quality and build
//! times: `cargo run -p cloth-mesh --release --example pattern_stats [FILE.json ...]`.

use std::path::PathBuf;
use std::time::Instant;

use cloth_mesh::{ClothMesh, read_pattern};

/// Mean interior edge length (m) and smallest angle (degrees) over all triangles.
fn quality(mesh: &ClothMesh) -> (f64, f64, f64) {
    let r = mesh.vertex_rest().expect("one chart");
    let interior: Vec<f64> = mesh
        .edges()
        .iter()
        .filter(|e| !e.is_boundary())
        .map(|e| (r[e.v[1]] - r[e.v[0]]).norm())
        .collect();
    let mean = interior.iter().sum::<f64>() / interior.len().max(1) as f64;
    let var =
        interior.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / interior.len().max(1) as f64;
    let mut min_angle = f64::INFINITY;
    for t in mesh.triangles() {
        for k in 0..3 {
            let p = r[t[k]];
            let a = r[t[(k + 1) % 3]] - p;
            let b = r[t[(k + 2) % 3]] - p;
            let ang = (a.dot(&b) / (a.norm() * b.norm())).clamp(-1.0, 1.0).acos();
            min_angle = min_angle.min(ang.to_degrees());
        }
    }
    (mean, var.sqrt(), min_angle)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut files: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if files.is_empty() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../assets/patterns");
        for name in ["skirt.json", "tshirt.json", "trousers.json"] {
            files.push(dir.join(name));
        }
    }
    for f in files {
        let pattern = read_pattern(&f)?;
        for h in [0.02, 0.01] {
            let t0 = Instant::now();
            let g = pattern.build(h)?;
            let dt = t0.elapsed().as_secs_f64() * 1e3;
            let (mean, sd, min_angle) = quality(&g.mesh);
            println!("{} at h = {h} m, built in {dt:.1} ms", f.display());
            println!("{}", g.summary());
            println!(
                "interior edges {:.4} +- {:.4} m (h = {h}), smallest angle {min_angle:.1} deg\n",
                mean, sd
            );
        }
    }
    Ok(())
}
