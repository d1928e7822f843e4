//! Prints counts and build times of the standard meshes:
//! `cargo run -p cloth-mesh --release --example mesh_stats`.

use std::time::Instant;

use cloth_mesh::{GridPattern, disc, grid};

fn main() -> Result<(), cloth_mesh::MeshError> {
    for n in [51usize, 101, 201, 401] {
        for p in [
            GridPattern::Uniform,
            GridPattern::Alternating,
            GridPattern::Equilateral,
        ] {
            let t0 = Instant::now();
            let m = grid(n, n, 1.0, 1.0, p)?;
            let dt = t0.elapsed();
            println!(
                "grid {n}x{n} {p:?}: {} vertices, {} triangles, {} edges, {} hinges, {} pairs, built in {:.2} ms",
                m.num_vertices(),
                m.num_triangles(),
                m.edges().len(),
                m.hinges().len(),
                m.vertex_pairs().len(),
                dt.as_secs_f64() * 1e3
            );
        }
    }
    for r in [10usize, 50, 100] {
        let t0 = Instant::now();
        let m = disc(1.0, r)?;
        println!(
            "disc {r} rings: {} vertices, {} triangles, built in {:.2} ms",
            m.num_vertices(),
            m.num_triangles(),
            t0.elapsed().as_secs_f64() * 1e3
        );
    }
    Ok(())
}
