//! `cloth check`: validate a scene and print what it contains.

use cloth::sim::{Scene, build_simulation};
use std::path::Path;
use std::process::ExitCode;

/// Loads and builds the scene at `path` and prints its counts.
pub fn check(path: &Path) -> Result<ExitCode, String> {
    let scene = Scene::load(path).map_err(|e| e.to_string())?;
    let sim = build_simulation(&scene).map_err(|e| e.to_string())?;
    let sys = sim.system();
    let mesh = &sys.mesh;
    println!("scene      {}", path.display());
    println!("vertices   {}", mesh.num_vertices());
    println!("triangles  {}", mesh.num_triangles());
    println!("edges      {}", mesh.edges().len());
    println!("bend edges {}", mesh.hinges().len());
    println!("area       {:.6} m^2", mesh.total_rest_area());
    println!("mass       {:.6} kg", sys.masses.iter().sum::<f64>());
    println!(
        "pinned     {} vertices in {} groups",
        sim.pins().iter().map(|p| p.vertices.len()).sum::<usize>(),
        sim.pins().len()
    );
    println!("colliders  {}", scene.colliders.len());
    println!("frames     {} at {} fps", scene.run.frames, scene.run.fps);
    println!("problems   none");
    Ok(ExitCode::SUCCESS)
}
