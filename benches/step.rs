//! One simulated frame of the paper's Figure 2 analogue (a 51 x 51 = 2601-vertex, 1 m sheet
//! pinned at two corners), after one second of swinging, with the implicit integrator.

use cloth::forces::{ClothModel, Definiteness, External, Material};
use cloth::mesh::{GridPattern, grid};
use cloth::sim::{
    collide::Motion, implicit::ImplicitSettings, pins::PinGroup, simulation::Integrator,
    simulation::Simulation, system::ClothSystem, world::World,
};
use criterion::{Criterion, criterion_group, criterion_main};

fn fixed_sheet() -> Simulation {
    let n = 51;
    let mesh = grid(n, n, 1.0, 1.0, GridPattern::Alternating).unwrap();
    let material = Material::default();
    let model = ClothModel::new(&mesh, &material, Definiteness::default()).unwrap();
    let sys = ClothSystem::new(mesh, model, External::default()).unwrap();
    let pins = vec![PinGroup::new(vec![0, n - 1], &sys.x0, Motion::Static)];
    let world = World::new(sys, pins).unwrap();
    let mut sim = Simulation::new(
        world,
        Integrator::Implicit(ImplicitSettings::default()),
        30.0,
    )
    .unwrap();
    for _ in 0..30 {
        sim.step_frame().unwrap();
    }
    sim
}

fn bench(c: &mut Criterion) {
    let mut sim = fixed_sheet();
    let mut g = c.benchmark_group("fixed_sheet_2601");
    g.sample_size(20);
    // Frames continue the swing from t = 1 s; the state changes slowly from sample to sample.
    g.bench_function("frame", |b| b.iter(|| sim.step_frame().unwrap()));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
