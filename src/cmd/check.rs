//! `cloth check`: validate a scene and print what it contains.

use crate::cmd::print::outln;
use crate::cmd::run::cleared_summary;
use cloth::sim::state::State;
use cloth::sim::system::{ClothPart, ClothSystem};
use cloth::sim::{scene::Scene, scene::build_simulation, start::start_contacts};
use std::path::Path;
use std::process::ExitCode;

/// Loads and builds the scene at `path` and prints its counts, then one block per cloth: rest
/// shape, boundary loops, UV seams, and for sewing patterns the panels and stitches; then the
/// crossings of the cloth with itself and, per collider, the cloth vertices that start inside
/// its solid or within its contact layer.
pub fn check(path: &Path) -> Result<ExitCode, String> {
    let scene = Scene::load(path).map_err(|e| e.to_string())?;
    let sim = build_simulation(&scene).map_err(|e| e.to_string())?;
    let sys = sim.system();
    let mesh = &sys.mesh;
    outln!("scene      {}", path.display());
    outln!("vertices   {}", mesh.num_vertices());
    outln!("triangles  {}", mesh.num_triangles());
    outln!("edges      {}", mesh.edges().len());
    outln!("bend edges {}", mesh.hinges().len());
    outln!("area       {:.6} m^2", mesh.total_rest_area());
    outln!("mass       {:.6} kg", sys.masses.iter().sum::<f64>());
    outln!(
        "pinned     {} vertices in {} groups",
        sim.pins().iter().map(|p| p.vertices.len()).sum::<usize>(),
        sim.pins().len()
    );
    outln!("colliders  {}", scene.colliders.len());
    for note in super::run::scene_notices(&sim) {
        outln!("           {note}");
    }
    outln!("frames     {} at {} fps", scene.run.frames, scene.run.fps);
    let stitches: Vec<[usize; 2]> = sim.world().sewing.pairs().collect();
    for (part, c) in sys.parts.iter().zip(&scene.cloths) {
        print_cloth(sys, part, &stitches);
        if let Some(time) = c.sew_time {
            let start = c.sew_start.unwrap_or(0.0);
            outln!(
                "  sews       from {start} s to {} s after the start of the {}",
                start + time,
                if scene.run.preroll > 0.0 {
                    "preroll"
                } else {
                    "run"
                }
            );
        }
    }
    let u = sim.start_untangled();
    if u.found > 0 {
        outln!(
            "crossings  {} pair{} of triangles at the start; {} left after moving the vertices \
             that poke through",
            u.found,
            if u.found == 1 { "" } else { "s" },
            u.remaining
        );
    }
    // The cloth as the scene places it, before the start is cleared of the solids.
    let placed = State::at_rest(sim.world().cloth.x0.clone());
    for c in start_contacts(sim.world(), &placed).colliders {
        if let Some(line) = c.summary() {
            outln!("inside     {line}");
        }
    }
    if let Some(line) = cleared_summary(&sim) {
        outln!("cleared    {line}");
    }
    outln!("problems   none");
    Ok(ExitCode::SUCCESS)
}

/// One cloth's block of the report.
fn print_cloth(sys: &ClothSystem, part: &ClothPart, stitches: &[[usize; 2]]) {
    outln!(
        "cloth      {}: {} vertices, {} triangles",
        part.name,
        part.vertices.len(),
        part.triangles.len()
    );
    let topo = sys.part_topology(part, stitches);
    outln!("  rest       {}", topo.rest.describe());
    outln!("  boundary   {} loops", topo.boundary_loops);
    if let Some(seams) = topo.uv_seams {
        outln!("  uv seams   {seams} edges (kept closed)");
    }
    if let Some(g) = &part.garment {
        for line in g.to_string().lines() {
            outln!("  {line}");
        }
        outln!(
            "  sewn       {} boundary loops once the {} stitched pairs close",
            topo.sewn_boundary_loops.unwrap_or(topo.boundary_loops),
            topo.stitches
        );
    }
}
