//! Rough timings of the collision queries on the paper's 2601-vertex sheet (not a benchmark
//! suite: run with `cargo run -p cloth-collide --release --example collide_timing`).

use std::time::Instant;

use cloth_collide::{Collider, ColliderSet, SelfCollision, Shape, Vec3, count_self_intersections};
use cloth_mesh::{GridPattern, grid};

fn time<T>(label: &str, reps: usize, mut f: impl FnMut() -> T) -> T {
    let mut out = f();
    let start = Instant::now();
    for _ in 0..reps {
        out = f();
    }
    println!(
        "{label}: {:.3} ms",
        start.elapsed().as_secs_f64() * 1e3 / reps as f64
    );
    out
}

fn main() {
    let mesh = grid(51, 51, 1.0, 1.0, GridPattern::Alternating).expect("grid");
    // Drape-like state: the sheet pushed down over a ball of radius 0.3.
    let x: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| {
            let r2 = p.x * p.x + p.z * p.z;
            Vec3::new(p.x, 0.3 * (-r2 / 0.05).exp() - 0.002, p.z)
        })
        .collect();
    let (sv, st) = Shape::Sphere { radius: 0.3 }.tessellate(140);
    println!(
        "cloth {} verts / {} tris; mesh ball {} verts / {} tris",
        x.len(),
        mesh.num_triangles(),
        sv.len(),
        st.len()
    );
    let analytic = ColliderSet::new(vec![Collider {
        shape: Shape::Sphere { radius: 0.3 },
        ..Collider::default()
    }])
    .unwrap();
    let meshed = ColliderSet::new(vec![Collider {
        shape: Shape::Mesh {
            vertices: sv,
            triangles: st,
        },
        ..Collider::default()
    }])
    .unwrap();
    let mut out = Vec::new();
    time("vertex_contacts, analytic sphere", 200, || {
        analytic.vertex_contacts(&x, 0.005, 0.01, &mut out)
    });
    println!("  contacts: {}", out.len());
    time("vertex_contacts, mesh sphere", 50, || {
        meshed.vertex_contacts(&x, 0.005, 0.01, &mut out)
    });
    println!("  contacts: {}", out.len());
    let mut fo = Vec::new();
    time("feature_contacts, box", 50, || {
        let b = ColliderSet::new(vec![Collider {
            shape: Shape::Cuboid {
                size: Vec3::repeat(0.5),
            },
            ..Collider::default()
        }])
        .unwrap();
        b.feature_contacts(mesh.triangles(), &x, 0.005, 0.01, &mut fo)
    });
    let mut sc = SelfCollision::new(&mesh, 0.005, 100.0, 0.1).unwrap();
    time("self-collision detect (refit + queries)", 50, || {
        sc.detect(&x)
    });
    println!("  proximities: {}", sc.num_proximities());
    time("count_self_intersections", 50, || {
        count_self_intersections(&mesh, &x)
    });
}
