//! Whole-model tests: forces vs energy, reference vs fast path, entry order, determinism,
//! definiteness of the assembled matrix, rest angles, state checks.

mod common;

use cloth_forces::Par;
use cloth_forces::{BendModel, ClothModel, Definiteness, Evaluation, ForceError, Material, Vec3};
use cloth_mesh::{ClothMesh, GridPattern, grid};
use common::{Rng, dense, flat};

fn deformed(mesh: &ClothMesh, amp: f64, seed: u64) -> Vec<Vec3> {
    let mut rng = Rng(seed);
    mesh.positions()
        .iter()
        .map(|p| Vec3::new(1.02 * p.x, p.y, 0.97 * p.z) + rng.vec() * amp)
        .collect()
}

fn velocities(n: usize, seed: u64) -> Vec<Vec3> {
    let mut rng = Rng(seed);
    (0..n).map(|_| rng.vec()).collect()
}

fn material() -> Material {
    // Bending strong enough to matter against stretch at this size.
    Material {
        bend: 1e-3,
        bend_uv: [1.0, 0.7],
        stretch_targets: [1.0, 0.98],
        ..Material::default()
    }
}

/// Forces are minus the energy gradient for both bend models. The hinge's `Exact` df/dx is
/// the Jacobian of the forces; the shape operator's is its Hessian at a fixed midedge split,
/// which bounds the Jacobian of the forces (the minimised energy's Hessian) from above and is
/// symmetric (`tests/split.rs` checks the same on random meshes).
#[test]
fn forces_are_minus_energy_gradient_and_dfdx_matches_fd() {
    for bend_model in [BendModel::Hinge, BendModel::ShapeOperator] {
        let mesh = grid(4, 4, 0.3, 0.3, GridPattern::Alternating).unwrap();
        let mat = Material {
            bend_model,
            ..material()
        };
        let model = ClothModel::new(&mesh, &mat, Definiteness::Exact).unwrap();
        let n = mesh.num_vertices();
        let x = deformed(&mesh, 0.02, 7);
        let z = vec![Vec3::zeros(); n];
        let mut ev = Evaluation::default();
        model.evaluate(&x, &z, &mut ev, Par::default());
        assert!((ev.energy - model.energy(&x)).abs() <= 1e-12 * ev.energy);
        let eps = 1e-7;
        let k = dense(&ev, n, false);
        let mut fd_k = nalgebra::DMatrix::zeros(3 * n, 3 * n);
        for i in 0..n {
            for c in 0..3 {
                let (mut xp, mut xm) = (x.clone(), x.clone());
                xp[i][c] += eps;
                xm[i][c] -= eps;
                let g = (model.energy(&xp) - model.energy(&xm)) / (2.0 * eps);
                assert!(
                    (g + ev.forces[i][c]).abs()
                        <= 1e-5 * ev.forces.iter().map(|f| f.amax()).fold(0.0, f64::max),
                    "{bend_model:?}: vertex {i}"
                );
                let (mut ep, mut em) = (Evaluation::default(), Evaluation::default());
                model.evaluate(&xp, &z, &mut ep, Par::default());
                model.evaluate(&xm, &z, &mut em, Par::default());
                let col = (flat(&ep.forces) - flat(&em.forces)) / (2.0 * eps);
                fd_k.set_column(3 * i + c, &col);
            }
        }
        assert!((&k - k.transpose()).amax() <= 1e-12 * k.amax());
        if bend_model == BendModel::Hinge {
            let err = (&fd_k - &k).amax();
            assert!(err <= 1e-5 * k.amax(), "{err}");
        } else {
            // df/dx is negative: -k bounds -fd_k from above.
            let sym = (&fd_k + fd_k.transpose()) * 0.5;
            let gap = (&sym - &k).symmetric_eigen().eigenvalues.min();
            assert!(gap >= -1e-6 * k.amax(), "{gap}");
        }
    }
}

#[test]
fn fast_path_equals_element_reference_and_dense_products() {
    for (def, bend_model) in [
        (Definiteness::Exact, BendModel::Hinge),
        (Definiteness::Clamped, BendModel::Hinge),
        (Definiteness::Projected, BendModel::Hinge),
        (Definiteness::Exact, BendModel::ShapeOperator),
        (Definiteness::Clamped, BendModel::ShapeOperator),
        (Definiteness::Projected, BendModel::ShapeOperator),
    ] {
        let mesh = grid(5, 4, 0.4, 0.3, GridPattern::Uniform).unwrap();
        let mat = Material {
            bend_model,
            ..material()
        };
        let model = ClothModel::new(&mesh, &mat, def).unwrap();
        let n = mesh.num_vertices();
        let x = deformed(&mesh, 0.03, 11);
        let v = velocities(n, 5);
        let mut ev = Evaluation::default();
        model.evaluate(&x, &v, &mut ev, Par::default());
        // Reference: scatter element responses serially into dense matrices.
        let mut kx = nalgebra::DMatrix::zeros(3 * n, 3 * n);
        let mut kv = kx.clone();
        let mut f = vec![Vec3::zeros(); n];
        let mut energy = 0.0;
        let mut scatter = |verts: &[usize],
                           fx: &dyn Fn(
            usize,
            usize,
        )
            -> (nalgebra::Matrix3<f64>, nalgebra::Matrix3<f64>)| {
            for (a, &i) in verts.iter().enumerate() {
                for (b, &j) in verts.iter().enumerate() {
                    let (bx, bv) = fx(a, b);
                    kx.view_mut((3 * i, 3 * j), (3, 3)).add_assign(&bx);
                    kv.view_mut((3 * i, 3 * j), (3, 3)).add_assign(&bv);
                }
            }
        };
        use std::ops::AddAssign;
        for t in 0..model.num_triangles() {
            let r = model.triangle_element(t, &x, &v);
            let verts = model.triangles()[t];
            scatter(&verts, &|a, b| (r.dfdx[a][b], r.dfdv[a][b]));
            for a in 0..3 {
                f[verts[a]] += r.forces[a];
            }
            energy += r.energy;
        }
        for h in 0..model.num_hinges() {
            let r = model.hinge_element(h, &x, &v);
            let verts = model.hinge_vertices()[h];
            scatter(&verts, &|a, b| (r.dfdx[a][b], r.dfdv[a][b]));
            for a in 0..4 {
                f[verts[a]] += r.forces[a];
            }
            energy += r.energy;
        }
        for t in 0..model.shape_stencils().len() {
            let r = model.shape_element(t, &x, &v);
            let verts = model.shape_stencils()[t];
            scatter(&verts, &|a, b| (r.dfdx[a][b], r.dfdv[a][b]));
            for a in 0..6 {
                f[verts[a]] += r.forces[a];
            }
            energy += r.energy;
        }
        assert_eq!(
            model.shape_stencils().is_empty(),
            bend_model == BendModel::Hinge
        );
        let dx = dense(&ev, n, false);
        let dv = dense(&ev, n, true);
        assert!((&dx - &kx).amax() <= 1e-12 * kx.amax());
        assert!((&dv - &kv).amax() <= 1e-12 * kv.amax());
        assert!((flat(&f) - flat(&ev.forces)).amax() <= 1e-12 * flat(&f).amax());
        assert!((energy - ev.energy).abs() <= 1e-12 * energy);
        // mul_dfdx / mul_dfdv against the dense products.
        let w = velocities(n, 99);
        let mut out = vec![Vec3::zeros(); n];
        ev.mul_dfdx(&w, &mut out);
        assert!((flat(&out) - &dx * flat(&w)).amax() <= 1e-12 * (&dx * flat(&w)).amax());
        ev.mul_dfdv(&w, &mut out);
        assert!((flat(&out) - &dv * flat(&w)).amax() <= 1e-12 * (&dv * flat(&w)).amax());
        // Internal forces: no net force.
        let net: Vec3 = ev.forces.iter().sum();
        assert!(net.amax() <= 1e-10 * flat(&f).amax());
    }
}

#[test]
fn entries_are_fixed_and_storage_is_reused() {
    let mesh = grid(6, 5, 0.5, 0.4, GridPattern::Alternating).unwrap();
    let model = ClothModel::new(&mesh, &material(), Definiteness::Clamped).unwrap();
    let n = mesh.num_vertices();
    let mut ev = Evaluation::default();
    assert!(ev.entries().is_empty());
    model.evaluate(
        &deformed(&mesh, 0.01, 1),
        &velocities(n, 2),
        &mut ev,
        Par::default(),
    );
    let e1 = ev.entries().to_vec();
    let p1 = ev.dfdx().as_ptr();
    model.evaluate(
        &deformed(&mesh, 0.05, 3),
        &velocities(n, 4),
        &mut ev,
        Par::default(),
    );
    assert_eq!(e1, ev.entries());
    assert_eq!(p1, ev.dfdx().as_ptr(), "buffers reallocated");
    // One entry per coupled vertex pair and per vertex, sorted, each row starting with its
    // diagonal.
    assert_eq!(model.bend_model(), BendModel::ShapeOperator);
    assert_eq!(ev.entries().len(), model.num_entries());
    assert!(ev.entries().windows(2).all(|w| w[0] < w[1]));
    assert!(ev.entries().iter().all(|&(i, j)| i <= j));
    for i in 0..n {
        let k = ev.entry_of(i, i).unwrap();
        assert_eq!(ev.entries()[k], (i, i));
        assert!(k == 0 || ev.entries()[k - 1].0 < i);
    }
    // Default (shape operator, Clamped): the off-diagonal entries are exactly the mesh's vertex
    // pairs (edges and the wing pairs of interior edges).
    let pairs = mesh.vertex_pairs();
    assert_eq!(model.vertex_pairs(), pairs);
    assert_eq!(ev.entries().len(), pairs.len() + n);
    for &(i, j) in pairs {
        assert_eq!(ev.entries()[ev.entry_of(j, i).unwrap()], (i, j));
    }
    assert_eq!(ev.entry_of(0, n - 1), None);
    // The hinge model: the same pattern.
    let hinge = ClothModel::new(
        &mesh,
        &Material {
            bend_model: BendModel::Hinge,
            ..material()
        },
        Definiteness::Clamped,
    )
    .unwrap();
    let mut eh = Evaluation::default();
    hinge.evaluate(
        &deformed(&mesh, 0.01, 1),
        &velocities(n, 2),
        &mut eh,
        Par::default(),
    );
    assert_eq!(eh.entries(), ev.entries());
    // Exact needs the flap-flap pairs too: 21 per triangle, pattern grows beyond the mesh's.
    let mut exact = model.clone();
    exact.set_definiteness(Definiteness::Exact);
    model.evaluate(
        &deformed(&mesh, 0.01, 1),
        &velocities(n, 2),
        &mut ev,
        Par::default(),
    );
    let mut ee = Evaluation::default();
    exact.evaluate(
        &deformed(&mesh, 0.01, 1),
        &velocities(n, 2),
        &mut ee,
        Par::default(),
    );
    let wide = exact.vertex_pairs();
    assert!(wide.len() > pairs.len());
    assert!(pairs.iter().all(|p| wide.binary_search(p).is_ok()));
    assert_eq!(ee.entries().len(), wide.len() + n);
    assert!(
        ee.entries()
            .iter()
            .all(|&(i, j)| i == j || wide.binary_search(&(i, j)).is_ok())
    );
}

/// 41 x 41 vertices: 3,200 triangles, 13 chunks of the colour-ordered evaluation, several of
/// each colour running at once on two threads.
#[test]
fn evaluation_is_bitwise_identical_for_one_and_two_threads() {
    let mesh = grid(41, 41, 1.0, 1.0, GridPattern::Alternating).unwrap();
    let model = ClothModel::new(&mesh, &material(), Definiteness::Clamped).unwrap();
    let n = mesh.num_vertices();
    let x = deformed(&mesh, 0.01, 21);
    let v = velocities(n, 22);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut ev = Evaluation::default();
            model.evaluate(&x, &v, &mut ev, Par::default());
            let mut kw = vec![Vec3::zeros(); n];
            ev.mul_dfdx(&v, &mut kw);
            let mut st = Vec::new();
            model.triangle_stretch(&x, &mut st);
            (ev, kw, model.energy(&x), st)
        })
    };
    let (a, ka, ea, sa) = run(1);
    let (b, kb, eb, sb) = run(2);
    let bits = |v: &[Vec3]| {
        v.iter()
            .flat_map(|p| p.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&a.forces), bits(&b.forces));
    assert_eq!(bits(&ka), bits(&kb));
    assert_eq!(a.energy.to_bits(), b.energy.to_bits());
    assert_eq!(ea.to_bits(), eb.to_bits());
    assert_eq!(sa, sb);
    let mb = |m: &[nalgebra::Matrix3<f64>]| {
        m.iter()
            .flat_map(|b| b.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    };
    assert_eq!(mb(a.dfdx()), mb(b.dfdx()));
    assert_eq!(mb(a.dfdv()), mb(b.dfdv()));
}

#[test]
fn clamped_system_matrix_is_positive_definite_under_compression() {
    let mesh = grid(6, 6, 0.5, 0.5, GridPattern::Alternating).unwrap();
    let n = mesh.num_vertices();
    // Compress by 20% and crumple: stretch and bend Hessians are strongly indefinite.
    let mut rng = Rng(5);
    let x: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| p * 0.8 + rng.vec() * 0.02)
        .collect();
    let v = velocities(n, 6);
    let mut ev = Evaluation::default();
    let exact = ClothModel::new(&mesh, &material(), Definiteness::Exact).unwrap();
    exact.evaluate(&x, &v, &mut ev, Par::default());
    let ke = -dense(&ev, n, false);
    assert!(
        ke.clone().symmetric_eigen().eigenvalues.min() < -1e-3 * ke.amax(),
        "test configuration not indefinite"
    );
    let clamped = ClothModel::new(&mesh, &material(), Definiteness::Clamped).unwrap();
    clamped.evaluate(&x, &v, &mut ev, Par::default());
    let kc = -dense(&ev, n, false);
    assert!(kc.clone().symmetric_eigen().eigenvalues.min() >= -1e-10 * kc.amax());
    let dv = -dense(&ev, n, true);
    assert!(dv.clone().symmetric_eigen().eigenvalues.min() >= -1e-10 * dv.amax());
    // A = M - h dfdv - h^2 dfdx is SPD for h = 1/30 s.
    let h = 1.0 / 30.0;
    let masses = clamped.masses();
    let mut a = kc * (h * h) + dv * h;
    for i in 0..n {
        for c in 0..3 {
            a[(3 * i + c, 3 * i + c)] += masses[i];
        }
    }
    assert!(a.cholesky().is_some());
}

#[test]
fn rest_angles_from_a_prefolded_sheet_give_zero_bend_energy() {
    let mesh = grid(7, 7, 0.6, 0.6, GridPattern::Equilateral).unwrap();
    let m = Material {
        stretch: [0.0; 2],
        shear: 0.0,
        bend: 1e-3,
        ..Material::default()
    };
    let mut model = ClothModel::new(&mesh, &m, Definiteness::Clamped).unwrap();
    // Fold the sheet onto a cylinder: it has bend energy until the rest angles are taken from it.
    let x: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| {
            Vec3::new(
                0.3 * (p.x / 0.3).sin(),
                0.3 * (1.0 - (p.x / 0.3).cos()),
                p.z,
            )
        })
        .collect();
    assert!(model.energy(&x) > 1e-6);
    model.set_rest_angles_from(&x);
    assert!(model.energy(&x) < 1e-20);
    assert!(model.energy(mesh.positions()) > 1e-6);
    assert!(model.rest_angles().iter().any(|a| a.abs() > 0.01));
    let mut ev = Evaluation::default();
    model.evaluate(&x, &vec![Vec3::zeros(); x.len()], &mut ev, Par::default());
    assert!(ev.forces.iter().all(|f| f.amax() < 1e-12));
    // Errors name the problem.
    assert!(matches!(
        model.try_set_rest_angles_from(&x[1..]),
        Err(ForceError::LengthMismatch { .. })
    ));
    let mut bad = x.clone();
    bad[4].y = f64::NAN;
    assert!(matches!(
        model.try_set_rest_angles_from(&bad),
        Err(ForceError::NonFinite { index: 4, .. })
    ));
    assert!(matches!(
        model.set_rest_angles(&[0.0]),
        Err(ForceError::LengthMismatch { .. })
    ));
    let mut angles = model.rest_angles();
    angles[2] = f64::INFINITY;
    assert!(matches!(
        model.set_rest_angles(&angles),
        Err(ForceError::NonFinite { index: 2, .. })
    ));
}

#[test]
fn state_checks_and_model_errors() {
    let mesh = grid(3, 3, 0.2, 0.2, GridPattern::Uniform).unwrap();
    let model = ClothModel::new(&mesh, &Material::default(), Definiteness::default()).unwrap();
    let n = mesh.num_vertices();
    let x = mesh.positions().to_vec();
    let v = vec![Vec3::zeros(); n];
    model.check_state(&x, &v).unwrap();
    assert!(
        matches!(model.check_state(&x[..n - 1], &v), Err(ForceError::LengthMismatch { expected, got, .. }) if expected == n && got == n - 1)
    );
    let mut bad = v.clone();
    bad[3].x = f64::INFINITY;
    let e = model.check_state(&x, &bad).unwrap_err();
    assert!(matches!(e, ForceError::NonFinite { index: 3, .. }));
    assert!(e.to_string().contains("velocity of vertex 3"), "{e}");
    let m = Material {
        density: -1.0,
        ..Material::default()
    };
    assert!(matches!(
        ClothModel::new(&mesh, &m, Definiteness::Clamped),
        Err(ForceError::InvalidMaterial {
            field: "density",
            ..
        })
    ));
}

#[test]
fn one_evaluation_can_serve_different_models() {
    let small = grid(3, 3, 0.2, 0.2, GridPattern::Uniform).unwrap();
    let large = grid(5, 4, 0.4, 0.3, GridPattern::Equilateral).unwrap();
    let ms = ClothModel::new(&small, &material(), Definiteness::Clamped).unwrap();
    let ml = ClothModel::new(&large, &material(), Definiteness::Clamped).unwrap();
    let (xs, xl) = (deformed(&small, 0.01, 1), deformed(&large, 0.01, 2));
    let (vs, vl) = (velocities(xs.len(), 3), velocities(xl.len(), 4));
    let mut shared = Evaluation::default();
    let mut fresh = Evaluation::default();
    ms.evaluate(&xs, &vs, &mut shared, Par::default());
    ml.evaluate(&xl, &vl, &mut shared, Par::default());
    ml.evaluate(&xl, &vl, &mut fresh, Par::default());
    assert_eq!(shared.entries(), fresh.entries());
    assert_eq!(shared.forces, fresh.forces);
    assert_eq!(shared.dfdx(), fresh.dfdx());
    ms.evaluate(&xs, &vs, &mut shared, Par::default());
    assert_eq!(shared.forces.len(), xs.len());
    assert_eq!(shared.dfdx().len(), shared.entries().len());
}

/// Regression: a triangle whose two flaps are the same vertex (here, around a valence-3 centre
/// vertex) has a stencil pair (q_i, q_j) that is a diagonal entry; its block must include both
/// element blocks (i, j) and (j, i), else the exact matrix is not symmetric nor the sum of its
/// element matrices (the static cantilever solve failed to factorise on such a Delaunay strip).
#[test]
fn coincident_flaps_give_the_exact_symmetric_jacobian() {
    use cloth_mesh::Vec2;
    // Triangle A B C split at its centroid O, plus one outer triangle per side.
    let rest = vec![
        Vec2::new(0.0, 0.0),    // A
        Vec2::new(0.1, 0.0),    // B
        Vec2::new(0.05, 0.09),  // C
        Vec2::new(0.05, 0.03),  // O
        Vec2::new(0.06, -0.07), // below AB
        Vec2::new(0.13, 0.08),  // right of BC
        Vec2::new(-0.03, 0.07), // left of CA
    ];
    let tris = vec![
        [0, 1, 3],
        [1, 2, 3],
        [2, 0, 3],
        [1, 0, 4],
        [2, 1, 5],
        [0, 2, 6],
    ];
    let pos: Vec<Vec3> = rest.iter().map(|r| Vec3::new(r.x, 0.0, r.y)).collect();
    let mesh = ClothMesh::new(pos, rest, tris).unwrap();
    let model = ClothModel::new(&mesh, &material(), Definiteness::Exact).unwrap();
    // Triangle 0 = (A, B, O): the flaps across (B, O) and (O, A) are both C.
    let st = model.shape_stencils()[0];
    assert_eq!(st[3], 2);
    assert_eq!(st[3 + 1], 2);
    let n = mesh.num_vertices();
    let x = deformed(&mesh, 0.01, 3);
    let z = vec![Vec3::zeros(); n];
    let mut ev = Evaluation::default();
    model.evaluate(&x, &z, &mut ev, Par::default());
    let k = dense(&ev, n, false);
    // The reference: every element's blocks (a, b) scattered one by one, so a coincident pair
    // gets both (i, j) and (j, i); the element responses are checked against finite
    // differences by the kernel tests.
    let mut reference = nalgebra::DMatrix::zeros(3 * n, 3 * n);
    let mut add = |verts: &[usize], blk: &dyn Fn(usize, usize) -> nalgebra::Matrix3<f64>| {
        for (a, &i) in verts.iter().enumerate() {
            for (b, &j) in verts.iter().enumerate() {
                let m = blk(a, b);
                for r in 0..3 {
                    for c in 0..3 {
                        reference[(3 * i + r, 3 * j + c)] += m[(r, c)];
                    }
                }
            }
        }
    };
    for t in 0..model.num_triangles() {
        let r = model.triangle_element(t, &x, &z);
        add(&model.triangles()[t], &|a, b| r.dfdx[a][b]);
        let r = model.shape_element(t, &x, &z);
        add(&model.shape_stencils()[t], &|a, b| r.dfdx[a][b]);
    }
    assert!(
        (&reference - &k).amax() <= 1e-12 * k.amax(),
        "{}",
        (&reference - &k).amax()
    );
    assert!((&k - k.transpose()).amax() <= 1e-12 * k.amax());
}

/// The mesh of `m` with each triangle's rest corners turned by its own random angle and moved
/// by its own random offset: per-corner rest coordinates in a different frame per triangle.
fn scrambled_frames(m: &ClothMesh, seed: u64) -> ClothMesh {
    let mut rng = Rng(seed);
    let corners = m
        .corner_rest()
        .iter()
        .map(|c| {
            let a = 3.0 * rng.next();
            let (s, co) = a.sin_cos();
            let off = cloth_mesh::Vec2::new(rng.next(), rng.next());
            c.map(|p| cloth_mesh::Vec2::new(co * p.x - s * p.y, s * p.x + co * p.y) + off)
        })
        .collect();
    ClothMesh::from_corner_rest(m.positions().to_vec(), corners, m.triangles().to_vec()).unwrap()
}

/// Bending does not depend on how each triangle's rest frame is placed: a mesh whose
/// triangles each carry their own rotated (u, v) frame (as from an OBJ with UV seams, or
/// flattened triangle by triangle) has the energy and forces of the one-chart mesh, for both
/// bend models (isotropic bending; stretch and shear are off since Baraff-Witkin stretch is
/// defined along the material axes and does turn with them).
#[test]
fn bending_is_independent_of_per_triangle_rest_frames() {
    let mesh = common::jittered(6, 5, 0.3, 0.25, GridPattern::Alternating, 0.2, 3);
    let other = scrambled_frames(&mesh, 11);
    assert!(other.vertex_rest().is_none());
    let x = deformed(&mesh, 0.03, 5);
    let v = velocities(mesh.num_vertices(), 9);
    for bend_model in [BendModel::ShapeOperator, BendModel::Hinge] {
        let m = Material {
            stretch: [1e-6, 1e-6],
            shear: 0.0,
            bend: 1e-3,
            bend_uv: [1.0, 1.0],
            bend_model,
            ..Material::default()
        };
        let a = ClothModel::new(&mesh, &m, Definiteness::Clamped).unwrap();
        let b = ClothModel::new(&other, &m, Definiteness::Clamped).unwrap();
        let (ea, eb) = (a.energy(&x), b.energy(&x));
        assert!(ea > 1e-6, "{bend_model:?}: the test bends the sheet");
        assert!((ea - eb).abs() <= 1e-6 * ea, "{bend_model:?}: {ea} vs {eb}");
        let (mut fa, mut fb) = (Evaluation::default(), Evaluation::default());
        a.evaluate(&x, &v, &mut fa, Par::default());
        b.evaluate(&x, &v, &mut fb, Par::default());
        let scale = fa.forces.iter().map(|f| f.norm()).fold(0.0, f64::max);
        for (p, q) in fa.forces.iter().zip(&fb.forces) {
            assert!((p - q).norm() <= 1e-5 * scale, "{bend_model:?}: {p} vs {q}");
        }
        for (p, q) in a.masses().iter().zip(b.masses()) {
            assert!((p - q).abs() <= 1e-12 * p);
        }
    }
}

/// Several cloths in one model: each triangle keeps its own material, so the joined model's
/// energy, forces and masses are those of the separate models side by side.
#[test]
fn joined_cloths_keep_their_materials() {
    let a = grid(4, 3, 0.3, 0.2, GridPattern::Alternating).unwrap();
    let b = grid(3, 5, 0.2, 0.4, GridPattern::Uniform).unwrap();
    let joined = ClothMesh::concat(&[&a, &b]).unwrap();
    let ma = material();
    let mb = Material::preset("denim").unwrap();
    let which: Vec<usize> = (0..joined.num_triangles())
        .map(|t| usize::from(t >= a.num_triangles()))
        .collect();
    let model =
        ClothModel::with_materials(&joined, &[ma, mb], &which, Definiteness::Clamped).unwrap();
    let sa = ClothModel::new(&a, &ma, Definiteness::Clamped).unwrap();
    let sb = ClothModel::new(&b, &mb, Definiteness::Clamped).unwrap();
    let x = deformed(&joined, 0.01, 2);
    let (xa, xb) = x.split_at(a.num_vertices());
    let (e, e1, e2) = (model.energy(&x), sa.energy(xa), sb.energy(xb));
    assert!((e - (e1 + e2)).abs() <= 1e-12 * e, "{e} vs {e1} + {e2}");
    assert_eq!(model.masses(), [sa.masses(), sb.masses()].concat());
    let v = velocities(joined.num_vertices(), 4);
    let (mut f, mut fa, mut fb) = (
        Evaluation::default(),
        Evaluation::default(),
        Evaluation::default(),
    );
    model.evaluate(&x, &v, &mut f, Par::default());
    sa.evaluate(xa, &v[..a.num_vertices()], &mut fa, Par::default());
    sb.evaluate(xb, &v[a.num_vertices()..], &mut fb, Par::default());
    // Equal up to rounding: the joined model factorises one split system for both cloths.
    let apart = [fa.forces, fb.forces].concat();
    let scale = apart.iter().map(|f| f.amax()).fold(0.0, f64::max);
    for (i, (p, q)) in f.forces.iter().zip(&apart).enumerate() {
        assert!(
            (p - q).amax() <= 1e-12 * scale,
            "vertex {i}: {p:?} vs {q:?}"
        );
    }
    // Mistakes are typed errors naming what is wrong.
    let bad = ClothModel::with_materials(&joined, &[ma], &which, Definiteness::Clamped);
    assert!(matches!(
        bad,
        Err(ForceError::MaterialIndex { index: 1, .. })
    ));
    let hinge = Material {
        bend_model: BendModel::Hinge,
        ..mb
    };
    let bad = ClothModel::with_materials(&joined, &[ma, hinge], &which, Definiteness::Clamped);
    assert!(matches!(
        bad,
        Err(ForceError::InvalidMaterial {
            field: "bend_model",
            ..
        })
    ));
    let bad = ClothModel::with_materials(&joined, &[ma], &[0], Definiteness::Clamped);
    assert!(matches!(bad, Err(ForceError::LengthMismatch { .. })));
}
