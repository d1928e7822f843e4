//! Force and Jacobian evaluation, and the full assembly of the implicit system, on the paper's
//! draping mesh (51 x 51 = 2601 vertices, 5000 triangles).

use cloth::forces::{ClothModel, Definiteness, Evaluation, Material};
use cloth::mesh::{GridPattern, Par, Vec3, grid};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn deformed(n: usize) -> (cloth::mesh::ClothMesh, Vec<Vec3>, Vec<Vec3>) {
    let mesh = grid(n, n, 1.0, 1.0, GridPattern::Alternating).unwrap();
    // A smooth, non-trivial deformation: a wave with some stretch, and a swirl of velocities.
    let x: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| {
            Vec3::new(
                p.x * 1.02,
                0.1 * (4.0 * p.x).sin() * (3.0 * p.z).cos(),
                p.z * 0.99,
            )
        })
        .collect();
    let v: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| Vec3::new(-p.z, 0.1, p.x))
        .collect();
    (mesh, x, v)
}

fn bench(c: &mut Criterion) {
    let (mesh, x, v) = deformed(51);
    for (name, def) in [
        ("clamped", Definiteness::default()),
        ("exact", Definiteness::Exact),
    ] {
        let model = ClothModel::new(&mesh, &Material::default(), def).unwrap();
        let mut eval = Evaluation::default();
        c.bench_function(&format!("forces_and_jacobians_2601_{name}"), |b| {
            b.iter(|| {
                model.evaluate(black_box(&x), black_box(&v), &mut eval, Par::default());
                black_box(eval.forces[0]);
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
