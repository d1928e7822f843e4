//! The heavy cantilever (ASTM D1388, Peirce 1930): exact heavy-elastica reference, strip meshes
//! of several kinds and orientations, and a static equilibrium solver (Newton on the total
//! energy, sparse Cholesky from `cloth-solver`). Shared by `tests/cantilever.rs` and
//! `examples/cantilever.rs`.
#![allow(dead_code)]

use cloth_forces::{
    BendModel, ClothModel, Definiteness, Evaluation, External, Material, Par, Vec3,
};
use cloth_mesh::{ClothMesh, GridPattern, Vec2, grid};
use cloth_solver::{BlockMatrix, Constraint, DirectSolver, Matrix3, SolverError};

/// Strip length (m), width (m), clamped length (m): overhang `LENGTH - CLAMP` = 9 cm.
pub const LENGTH: f64 = 0.12;
pub const WIDTH: f64 = 0.02;
pub const CLAMP: f64 = 0.03;
/// Areal density (kg/m^2) and gravity (m/s^2).
pub const DENSITY: f64 = 0.2;
pub const G: f64 = 9.81;

/// Chord angle (degrees below horizontal, from the clamp edge to the tip) of the exact heavy
/// elastica with overhang `l` and bending length `c`, ratio `lambda = l / c`.
///
/// With arc length s in units of c, the moment balance of an inextensible strip under its own
/// weight is `theta'' = -(lambda - s) cos(theta)` (theta the downward slope angle; the moment
/// at s is carried by the weight `w (l - s)` beyond s; Peirce 1930, Wang 1986), with
/// `theta(0) = 0` (clamp) and `theta'(lambda) = 0` (free tip). The initial curvature
/// `theta'(0)` is found by bisection on the tip moment, each trial integrated by RK4 (4000
/// steps); the chord comes from integrating `(cos theta, sin theta)`.
pub fn elastica_chord_deg(lambda: f64) -> f64 {
    let steps = 4000;
    let ds = lambda / steps as f64;
    // State (theta, theta', x, y).
    let shoot = |k0: f64| -> [f64; 4] {
        let f = |s: f64, y: [f64; 4]| -> [f64; 4] {
            [y[1], -(lambda - s) * y[0].cos(), y[0].cos(), y[0].sin()]
        };
        let mut y = [0.0, k0, 0.0, 0.0];
        for i in 0..steps {
            let s = i as f64 * ds;
            let add = |a: [f64; 4], b: [f64; 4], h: f64| std::array::from_fn(|k| a[k] + h * b[k]);
            let k1 = f(s, y);
            let k2 = f(s + ds / 2.0, add(y, k1, ds / 2.0));
            let k3 = f(s + ds / 2.0, add(y, k2, ds / 2.0));
            let k4 = f(s + ds, add(y, k3, ds));
            y = std::array::from_fn(|k| {
                y[k] + ds / 6.0 * (k1[k] + 2.0 * k2[k] + 2.0 * k3[k] + k4[k])
            });
        }
        y
    };
    // theta'(lambda) as a function of k0 changes sign between 0 (tip curvature > 0: the tip
    // still bends down) and lambda^2/2 (the linear-beam clamp curvature is an upper bound).
    let (mut lo, mut hi) = (0.0, lambda * lambda / 2.0 + 1.0);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        // theta'(lambda) grows with the clamp curvature k0.
        if shoot(mid)[1] > 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let y = shoot(0.5 * (lo + hi));
    y[3].atan2(y[2]).to_degrees()
}

/// Mesh kinds of the cantilever table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Alternating,
    Uniform,
    Equilateral,
    /// Jittered points (up to 0.35 spacing), Delaunay triangulated.
    Irregular,
}

/// Strip orientation relative to the mesh lattice (= the rest (u, v) axes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Orientation {
    AlongU,
    AlongV,
    Diagonal,
}

/// A strip mesh and, per vertex, its strip coordinates (s along the length from the clamped
/// end, t across). World position = (s, 0, t).
pub struct Strip {
    pub mesh: ClothMesh,
    pub st: Vec<Vec2>,
}

/// Triangles (counter-clockwise) of the Delaunay triangulation of `p` (Bowyer-Watson with a
/// large super-triangle). Degenerate (zero-area) triangles are dropped.
pub fn delaunay(p: &[Vec2]) -> Vec<[usize; 3]> {
    let n = p.len();
    let (mut lo, mut hi) = (p[0], p[0]);
    for q in p {
        lo = lo.inf(q);
        hi = hi.sup(q);
    }
    let c = (lo + hi) * 0.5;
    let r = (hi - lo).amax() * 100.0;
    let mut pts = p.to_vec();
    pts.push(c + Vec2::new(-r, -r));
    pts.push(c + Vec2::new(r, -r));
    pts.push(c + Vec2::new(0.0, r));
    let circ = |t: &[usize; 3], pts: &[Vec2]| -> (Vec2, f64) {
        let (a, b, cc) = (pts[t[0]], pts[t[1]], pts[t[2]]);
        let d = 2.0 * (a.x * (b.y - cc.y) + b.x * (cc.y - a.y) + cc.x * (a.y - b.y));
        let (a2, b2, c2) = (a.norm_squared(), b.norm_squared(), cc.norm_squared());
        let ux = (a2 * (b.y - cc.y) + b2 * (cc.y - a.y) + c2 * (a.y - b.y)) / d;
        let uy = (a2 * (cc.x - b.x) + b2 * (a.x - cc.x) + c2 * (b.x - a.x)) / d;
        let o = Vec2::new(ux, uy);
        (o, (a - o).norm_squared())
    };
    let mut tris: Vec<([usize; 3], Vec2, f64)> = Vec::new();
    let t0 = [n, n + 1, n + 2];
    let (o, r2) = circ(&t0, &pts);
    tris.push((t0, o, r2));
    for i in 0..n {
        let q = pts[i];
        let mut edges: Vec<[usize; 2]> = Vec::new();
        let mut keep = Vec::with_capacity(tris.len());
        for t in tris.drain(..) {
            if (q - t.1).norm_squared() < t.2 * (1.0 - 1e-12) {
                for k in 0..3 {
                    edges.push([t.0[k], t.0[(k + 1) % 3]]);
                }
            } else {
                keep.push(t);
            }
        }
        tris = keep;
        for (k, e) in edges.iter().enumerate() {
            let shared = edges
                .iter()
                .enumerate()
                .any(|(m, f)| m != k && f[0] == e[1] && f[1] == e[0]);
            if !shared {
                let t = [e[0], e[1], i];
                let (o, r2) = circ(&t, &pts);
                if r2.is_finite() {
                    tris.push((t, o, r2));
                }
            }
        }
    }
    tris.into_iter()
        .map(|t| t.0)
        .filter(|t| t.iter().all(|&v| v < n))
        .filter_map(|t| {
            let (a, b, c) = (pts[t[0]], pts[t[1]], pts[t[2]]);
            let area2 = (b - a).perp(&(c - a));
            let scale = (b - a).norm_squared().max((c - a).norm_squared());
            if area2.abs() <= 1e-9 * scale {
                None
            } else if area2 > 0.0 {
                Some(t)
            } else {
                Some([t[0], t[2], t[1]])
            }
        })
        .collect()
}

fn rot(a: f64, p: Vec2) -> Vec2 {
    Vec2::new(a.cos() * p.x - a.sin() * p.y, a.sin() * p.x + a.cos() * p.y)
}

/// Builds the strip of `kind` and `orientation` with `m` cells across the 2 cm width.
pub fn strip(kind: Kind, orientation: Orientation, m: usize) -> Strip {
    let h = WIDTH / m as f64;
    let n_len = (LENGTH / h).round() as usize;
    let pattern = match kind {
        Kind::Alternating => Some(GridPattern::Alternating),
        Kind::Uniform => Some(GridPattern::Uniform),
        Kind::Equilateral => Some(GridPattern::Equilateral),
        Kind::Irregular => None,
    };
    // An equilateral lattice along u has every other row offset by half a cell, so no column
    // of it lies on the clamp line: that strip is built as the 45-degree ones are (lattice
    // points plus conforming points on the boundary and the clamp line).
    let staggered = kind == Kind::Equilateral && orientation == Orientation::AlongU;
    if let (Some(pat), false) = (pattern, orientation == Orientation::Diagonal || staggered) {
        // Lattice-aligned strips straight from the grid builder. For Equilateral the rows
        // run along u; the row spacing is adjusted so that the width is exact.
        let (nu, nv, wu, wv, along_u) = match orientation {
            Orientation::AlongU => {
                let nv = if pat == GridPattern::Equilateral {
                    ((WIDTH / (h * 3f64.sqrt() / 2.0)).round() as usize).max(2) + 1
                } else {
                    m + 1
                };
                (n_len + 1, nv, LENGTH, WIDTH, true)
            }
            _ => {
                // A multiple of 4 rows so that the clamp line s = LENGTH/4 is a row.
                let nv = if pat == GridPattern::Equilateral {
                    4 * ((LENGTH / (4.0 * h * 3f64.sqrt() / 2.0)).round() as usize) + 1
                } else {
                    n_len + 1
                };
                (m + 1, nv, WIDTH, LENGTH, false)
            }
        };
        let mesh = grid(nu, nv, wu, wv, pat).expect("grid strip");
        let st: Vec<Vec2> = mesh
            .vertex_rest()
            .expect("one chart")
            .iter()
            .map(|r| if along_u { *r } else { Vec2::new(r.y, r.x) })
            .collect();
        return with_positions(mesh, st);
    }
    // Point sets triangulated by Delaunay: boundary points every h (every h on the clamp
    // line too), lattice points at least h/2 from the boundary and the clamp line.
    let mut st: Vec<Vec2> = Vec::new();
    for k in 0..=n_len {
        let s = k as f64 * LENGTH / n_len as f64;
        st.push(Vec2::new(s, 0.0));
        st.push(Vec2::new(s, WIDTH));
    }
    for k in 1..m {
        let t = k as f64 * WIDTH / m as f64;
        st.push(Vec2::new(0.0, t));
        st.push(Vec2::new(LENGTH, t));
        st.push(Vec2::new(CLAMP, t));
    }
    let nb = st.len();
    let angle = match orientation {
        Orientation::AlongU => 0.0,
        Orientation::AlongV => std::f64::consts::FRAC_PI_2,
        Orientation::Diagonal => std::f64::consts::FRAC_PI_4,
    };
    let (e1, e2) = match kind {
        Kind::Equilateral => (Vec2::new(h, 0.0), Vec2::new(0.5 * h, 0.5 * 3f64.sqrt() * h)),
        _ => (Vec2::new(h, 0.0), Vec2::new(0.0, h)),
    };
    let (e1, e2) = (rot(angle, e1), rot(angle, e2));
    let mut rng = super::Rng(0x9e37_79b9 ^ (m as u64) ^ ((orientation as u64) << 8));
    let span = (2.0 * LENGTH / h) as i64 + 4;
    let mut lattice: Vec<Option<(i64, i64)>> = vec![None; nb];
    let origin = Vec2::new(CLAMP + 0.123 * h, 0.5 * WIDTH + 0.071 * h);
    for i in -span..=span {
        for j in -span..=span {
            let mut p = origin + e1 * i as f64 + e2 * j as f64;
            if kind == Kind::Irregular {
                p += Vec2::new(rng.next(), rng.next()) * (0.35 * h);
            }
            let margin = 0.5 * h;
            if p.x > margin
                && p.x < LENGTH - margin
                && p.y > margin
                && p.y < WIDTH - margin
                && (p.x - CLAMP).abs() > margin
            {
                st.push(p);
                lattice.push(Some((i, j)));
            }
        }
    }
    // Tiny anisotropic squeeze along the lattice's (1, 1) direction so that Delaunay ties in
    // square cells pick the (i, j)-(i+1, j+1) diagonal; Alternating cells are flipped below.
    let d11 = (e1 + e2).normalize();
    let squeezed: Vec<Vec2> = st.iter().map(|p| p - d11 * (1e-6 * d11.dot(p))).collect();
    let mut tris = delaunay(&squeezed);
    if kind == Kind::Alternating {
        alternate(&mut tris, &lattice);
    }
    // Rest (u, v): the lattice axes (strip coordinates rotated back by the angle).
    let rest: Vec<Vec2> = st.iter().map(|p| rot(-angle, *p)).collect();
    let pos = st.iter().map(|p| Vec3::new(p.x, 0.0, p.y)).collect();
    let mesh = ClothMesh::new(pos, rest, tris).expect("strip mesh");
    let area = mesh.total_rest_area();
    assert!(
        (area - LENGTH * WIDTH).abs() < 1e-9 * area,
        "strip area {area}"
    );
    Strip { mesh, st }
}

/// Flips the diagonals of complete square lattice cells into the Alternating rule: cell
/// (i, j) is split from (i, j) to (i+1, j+1) when i + j is even, else from (i+1, j) to (i, j+1).
fn alternate(tris: &mut [[usize; 3]], lattice: &[Option<(i64, i64)>]) {
    use std::collections::HashMap;
    let mut cells: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
    for (k, t) in tris.iter().enumerate() {
        let ij: Option<Vec<(i64, i64)>> = t.iter().map(|&v| lattice[v]).collect();
        let Some(ij) = ij else { continue };
        let i0 = ij.iter().map(|p| p.0).min().unwrap_or(0);
        let j0 = ij.iter().map(|p| p.1).min().unwrap_or(0);
        if ij.iter().all(|p| p.0 - i0 <= 1 && p.1 - j0 <= 1) {
            cells.entry((i0, j0)).or_default().push(k);
        }
    }
    let find = |ij: (i64, i64), t: &[usize; 3]| t.iter().copied().find(|&v| lattice[v] == Some(ij));
    for ((i, j), ks) in cells {
        if ks.len() != 2 {
            continue;
        }
        let (a, b) = (tris[ks[0]], tris[ks[1]]);
        let corner = |di, dj| find((i + di, j + dj), &a).or_else(|| find((i + di, j + dj), &b));
        let (Some(p00), Some(p10), Some(p11), Some(p01)) =
            (corner(0, 0), corner(1, 0), corner(1, 1), corner(0, 1))
        else {
            continue;
        };
        let want_main = (i + j).rem_euclid(2) == 0;
        // Orientation of (p00, p10, p11) in the caller's rest frame is fixed up by the caller
        // (ClothMesh checks winding); keep the winding of the original triangles.
        let (t1, t2) = if want_main {
            ([p00, p10, p11], [p00, p11, p01])
        } else {
            ([p00, p10, p01], [p10, p11, p01])
        };
        // Match the winding of the existing triangles: (p00, p10, p11) has the lattice's
        // orientation; flip both if the existing ones wind the other way.
        let orient = |t: &[usize; 3]| {
            let pos = |v: usize| lattice[v].map_or((0, 0), |p| p);
            let (a, b, c) = (pos(t[0]), pos(t[1]), pos(t[2]));
            (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0)
        };
        let flip = orient(&a) < 0;
        let fix = |t: [usize; 3]| if flip { [t[0], t[2], t[1]] } else { t };
        tris[ks[0]] = fix(t1);
        tris[ks[1]] = fix(t2);
    }
}

fn with_positions(mesh: ClothMesh, st: Vec<Vec2>) -> Strip {
    let pos = st.iter().map(|p| Vec3::new(p.x, 0.0, p.y)).collect();
    let mesh = ClothMesh::new(
        pos,
        mesh.vertex_rest().expect("one chart").to_vec(),
        mesh.triangles().to_vec(),
    )
    .expect("strip mesh");
    Strip { mesh, st }
}

/// The cotton preset's membrane with density 0.2 kg/m^2 and `D = rho g c^3`.
pub fn material(bend_model: BendModel, c: f64) -> Material {
    Material {
        density: DENSITY,
        bend: DENSITY * G * c.powi(3),
        bend_model,
        ..Material::COTTON
    }
}

/// Result of one static solve.
pub struct Equilibrium {
    /// Chord angle (degrees below horizontal) from the clamp edge to the tip.
    pub chord_deg: f64,
    /// Newton iterations.
    pub iterations: usize,
    /// Final largest residual force on a free vertex (N).
    pub residual: f64,
    pub x: Vec<Vec3>,
}

/// Static equilibrium of the strip (clamped for s <= CLAMP) under gravity: Newton on the total
/// energy `E = E_cloth + sum m_i g y_i` with the exact Hessian when it is positive definite
/// (else the Clamped one), Armijo backtracking on E, gravity ramped in 5 load steps; converged
/// when the largest residual force on a free vertex is below `1e-6` of the largest vertex
/// weight. Returns an error if the linear solver fails on both matrices.
pub fn solve(strip: &Strip, material: &Material) -> Result<Equilibrium, SolverError> {
    let mesh = &strip.mesh;
    let n = mesh.num_vertices();
    let fixed: Vec<bool> = strip.st.iter().map(|p| p.x <= CLAMP + 1e-9).collect();
    // The clamp holds its part of the strip flat (the shape operator then gives the clamp
    // line the whole bending moment; see `ClothModel::set_clamped_vertices`).
    let model = |d| {
        let mut m = ClothModel::new(mesh, material, d).expect("model");
        m.set_clamped_vertices(&fixed).expect("one flag per vertex");
        m
    };
    let clamped = model(Definiteness::Clamped);
    let exact = model(Definiteness::Exact);
    let cons: Vec<Constraint> = fixed
        .iter()
        .map(|&f| {
            if f {
                Constraint::Fixed
            } else {
                Constraint::Free
            }
        })
        .collect();
    let mut a = BlockMatrix::new(n, &exact.vertex_pairs())?;
    let z = vec![Vec3::zeros(); n];
    let mut ev_c = Evaluation::default();
    let mut ev_e = Evaluation::default();
    let v0 = vec![Vec3::zeros(); n];
    clamped.evaluate(mesh.positions(), &v0, &mut ev_c, Par::Seq);
    exact.evaluate(mesh.positions(), &v0, &mut ev_e, Par::Seq);
    let plan_c = a.plan(ev_c.entries())?;
    let plan_e = a.plan(ev_e.entries())?;
    let mut direct = DirectSolver::new(&a)?;
    let masses = clamped.masses().to_vec();
    let wmax = masses.iter().fold(0.0f64, |m, &x| m.max(x)) * G;
    let mut x = mesh.positions().to_vec();
    let mut dx = vec![Vec3::zeros(); n];
    let mut iterations = 0;
    let mut residual = f64::INFINITY;
    for (stage, scale) in [0.2, 0.4, 0.6, 0.8, 1.0].into_iter().enumerate() {
        let ext = External {
            gravity: Vec3::new(0.0, -G * scale, 0.0),
            ..External::default()
        };
        let tol = if stage == 4 { 1e-6 * wmax } else { 1e-3 * wmax };
        let energy = |y: &[Vec3]| clamped.energy(y) + ext.energy(&clamped, y);
        for _ in 0..200 {
            exact.evaluate(&x, &v0, &mut ev_e, Par::Seq);
            ext.accumulate(&exact, &x, &v0, &mut ev_e);
            let mut f = ev_e.forces.clone();
            for (fi, &fx) in f.iter_mut().zip(&fixed) {
                if fx {
                    *fi = Vec3::zeros();
                }
            }
            residual = f.iter().map(|v| v.norm()).fold(0.0, f64::max);
            if residual < tol {
                break;
            }
            iterations += 1;
            // Newton direction: exact Hessian if it is positive definite and its step is
            // accepted by the line search, else the Clamped (Gauss-Newton) one.
            let e0 = energy(&x);
            let mut trial: Vec<Vec3> = Vec::new();
            for use_exact in [true, false] {
                let (ev, plan) = if use_exact {
                    (&ev_e, &plan_e)
                } else {
                    clamped.evaluate(&x, &v0, &mut ev_c, Par::Seq);
                    (&ev_c, &plan_c)
                };
                let blocks: Vec<Matrix3<f64>> = ev.dfdx().iter().map(|b| -b).collect();
                a.assemble(plan, &blocks, None);
                let solved = direct.solve(&mut dx, &a, &f, &z, &cons);
                if !use_exact {
                    solved?;
                } else if solved.is_err() {
                    continue;
                }
                let slope: f64 = dx.iter().zip(&f).map(|(d, g)| d.dot(g)).sum();
                if slope <= 0.0 {
                    continue;
                }
                let mut alpha = 1.0;
                let accepted = loop {
                    trial = x.iter().zip(&dx).map(|(p, d)| p + d * alpha).collect();
                    let e1 = energy(&trial);
                    // Armijo, or (near convergence, where E is flat to rounding) no rise.
                    if e1 <= e0 - 1e-4 * alpha * slope
                        || (e1 - e0).abs() <= 1e-13 * e0.abs().max(1e-30)
                    {
                        break true;
                    }
                    if alpha < 1e-4 {
                        break false;
                    }
                    alpha *= 0.5;
                };
                if std::env::var("CANTI_DEBUG").is_ok() {
                    eprintln!(
                        "it {iterations} exact {use_exact} res {residual:.3e} alpha {alpha:.1e} slope {slope:.3e} ok {accepted}"
                    );
                }
                if accepted || !use_exact {
                    break;
                }
            }
            x = trial;
        }
    }
    Ok(Equilibrium {
        chord_deg: chord(strip, &x),
        iterations,
        residual,
        x,
    })
}

/// Chord angle (degrees below horizontal) from the clamp edge's mid point (s = CLAMP,
/// t = WIDTH/2; fixed) to the mean deformed position of the tip edge's vertices (s = LENGTH).
pub fn chord(strip: &Strip, x: &[Vec3]) -> f64 {
    let tip: Vec<Vec3> = strip
        .st
        .iter()
        .zip(x)
        .filter(|(p, _)| p.x >= LENGTH - 1e-9)
        .map(|(_, q)| *q)
        .collect();
    let mean = tip.iter().sum::<Vec3>() / tip.len() as f64;
    let clamp = Vec3::new(CLAMP, 0.0, 0.5 * WIDTH);
    let d = mean - clamp;
    (-d.y).atan2(d.x).to_degrees()
}
