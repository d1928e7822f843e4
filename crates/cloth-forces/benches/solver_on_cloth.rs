//! Block-Jacobi MPCG vs smoothed-aggregation multigrid MPCG on realistic cloth matrices
//! (cotton sheet, `A = M - h df/dv - h^2 df/dx`, h = 1/30 s, deformed moving state, two
//! corners fixed) of 51^2, 101^2, 201^2 and 317^2 vertices, tolerance 1e-3.
//!
//! `cargo bench -p cloth-forces --bench solver_on_cloth` prints a markdown table: iterations, median
//! CPU times on one thread (read from /proc, so other load on the machine matters less than
//! for wall-clock time, which is given too, for the default pool) of the block-Jacobi solve
//! and of the multigrid symbolic analysis (`Multigrid::new`, once per pattern), numeric setup
//! and iteration, and memory per vertex (hierarchy; and matrix + hierarchy + PCG workspace). `MG_SIDES=51,101` restricts the sizes, `MG_REPS=5` sets the repetitions
//! (block-Jacobi repeats at most twice above 20k vertices). Further tables: reuse policies
//! over a sequence of systems (`MG_SEQ_ONLY=1`), robustness over materials, time steps and
//! constraints (`MG_ROBUST_ONLY=1`); `MG_SWEEP=1` / `MG_GRID=theta:degree:ratio,...` add
//! parameter variants, `MG_MEMORY=1` a memory breakdown, `MG_PERIT=1` the cost of one
//! iteration, `MG_SKIP_BJ=1` / `MG_NO_SEQ=1` skip tables.

#[path = "../tests/common/solver_problem.rs"]
mod solver_problem;

use std::time::Instant;

use cloth_forces::Material;
use cloth_solver::{
    Multigrid, MultigridParams, NearNullSpace, Par, PcgParams, PcgWorkspace, Preconditioner, Reuse,
    Smoother, System, Vector3, solve_mpcg, solve_mpcg_multigrid,
};
use solver_problem::{cloth_problem, cloth_problem_with};

/// CPU time of the whole process (all threads), ns, from /proc (Linux); robust to other
/// processes competing for the cores, unlike wall-clock time.
fn cpu_ns() -> f64 {
    let mut total = 0.0;
    if let Ok(dir) = std::fs::read_dir("/proc/self/task") {
        for e in dir.flatten() {
            if let Ok(s) = std::fs::read_to_string(e.path().join("schedstat")) {
                total += s
                    .split_whitespace()
                    .next()
                    .and_then(|t| t.parse::<f64>().ok())
                    .unwrap_or(0.0);
            }
        }
    }
    total
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn env_list(name: &str, default: &[usize]) -> Vec<usize> {
    std::env::var(name)
        .ok()
        .map(|s| s.split(',').filter_map(|t| t.trim().parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}

fn variants() -> Vec<(String, MultigridParams)> {
    let d = MultigridParams::default();
    let mut v = vec![
        ("default".to_string(), d),
        (
            "rigid-body modes".to_string(),
            MultigridParams {
                near_null_space: NearNullSpace::RigidBody,
                ..d
            },
        ),
    ];
    if let Ok(grid) = std::env::var("MG_GRID") {
        // MG_GRID="0.02:2,0.05:1:4": strength threshold : Chebyshev degree : ratio.
        v.clear();
        for item in grid.split(',') {
            let mut it = item.split(':');
            let theta: f64 = it.next().and_then(|t| t.parse().ok()).unwrap_or(0.02);
            let degree: usize = it.next().and_then(|t| t.parse().ok()).unwrap_or(2);
            let ratio: f64 = it.next().and_then(|t| t.parse().ok()).unwrap_or(30.0);
            v.push((
                format!("theta {theta} cheb{degree} ratio {ratio}"),
                MultigridParams {
                    strength_threshold: theta,
                    smoother: Smoother::Chebyshev { degree, ratio },
                    ..d
                },
            ));
        }
    }
    if std::env::var("MG_SWEEP").is_ok() {
        for theta in [0.0, 0.01, 0.05, 0.1] {
            v.push((
                format!("theta {theta}"),
                MultigridParams {
                    strength_threshold: theta,
                    ..d
                },
            ));
        }
        for (name, sm) in [
            (
                "cheb1",
                Smoother::Chebyshev {
                    degree: 1,
                    ratio: 30.0,
                },
            ),
            (
                "cheb3",
                Smoother::Chebyshev {
                    degree: 3,
                    ratio: 30.0,
                },
            ),
            (
                "cheb2 r10",
                Smoother::Chebyshev {
                    degree: 2,
                    ratio: 10.0,
                },
            ),
            ("gs1", Smoother::GaussSeidel { sweeps: 1 }),
            ("gs2", Smoother::GaussSeidel { sweeps: 2 }),
        ] {
            v.push((name.to_string(), MultigridParams { smoother: sm, ..d }));
        }
        for cs in [100, 1000] {
            v.push((
                format!("coarse {cs}"),
                MultigridParams {
                    coarse_size: cs,
                    ..d
                },
            ));
        }
    }
    v
}

/// Median CPU time (ms) of `f` over `reps` runs, and the last result.
fn cpu_median<T>(reps: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::with_capacity(reps);
    let mut last = None;
    for _ in 0..reps {
        let t = cpu_ns();
        last = Some(f());
        times.push((cpu_ns() - t) * 1e-6);
    }
    (median(times), last.expect("reps >= 1"))
}

/// Median wall-clock time (ms) of `f` over `reps` runs.
fn wall_median(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        f();
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    median(times)
}

/// Bytes of a BlockMatrix: diagonal blocks, off-diagonal blocks with column and mirror
/// indices, row pointers.
fn matrix_bytes(a: &cloth_solver::BlockMatrix) -> usize {
    let n = a.n();
    let off = a.nnz_blocks() - n;
    n * 72 + off * (72 + 16) + (n + 1) * 8
}

/// A sequence of `steps` systems of one pattern (the deformation travels by 0.1 rad per
/// step, moving particles by up to 1 cm, like a falling sheet at h = 1/30 s): mean iterations
/// and mean single-thread CPU ms per solve (setup included) for each reuse policy.
fn sequence_table(sides: &[usize], steps: usize) {
    println!();
    println!("Reuse across {steps} consecutive systems of one pattern (mean per solve, CPU ms):");
    println!("| vertices | reuse | iterations | setup | iterate | total |");
    println!("|---|---|---|---|---|---|");
    for &side in sides {
        let problems: Vec<_> = (0..steps)
            .map(|k| cloth_problem(side, 0.1 * k as f64))
            .collect();
        let n = problems[0].b.len();
        let pcg = PcgParams {
            tolerance: 1e-3,
            max_iterations: 10_000,
            ..Default::default()
        };
        for reuse in [
            Reuse::Nothing,
            Reuse::Prolongators { solves: 2 },
            Reuse::Prolongators { solves: 4 },
            Reuse::Hierarchy { solves: 2 },
            Reuse::Hierarchy { solves: 4 },
        ] {
            let params = MultigridParams {
                reuse,
                ..Default::default()
            };
            let p0 = &problems[0];
            let mut mg = Multigrid::new(&p0.a, &p0.positions, &p0.constraints, &params, Par::Seq)
                .expect("hierarchy");
            let mut ws = PcgWorkspace::new();
            let mut dv = vec![Vector3::zeros(); n];
            let (mut its, mut setup, mut total) = (0.0, 0.0, 0.0);
            for p in &problems {
                let t = cpu_ns();
                let w = Instant::now();
                let info = solve_mpcg_multigrid(
                    &mut dv,
                    &System::new(&p.a, &p.b, &p.z, &p.constraints),
                    &mut mg,
                    &p.positions,
                    &pcg,
                    Par::Seq,
                    &mut ws,
                )
                .expect("multigrid solve");
                let cpu = (cpu_ns() - t) * 1e-6;
                let wall = w.elapsed().as_secs_f64() * 1e3;
                assert!(info.converged);
                its += info.iterations as f64;
                total += cpu;
                // Split the CPU time by the wall-clock share of the setup.
                setup += cpu * (mg.last_setup().seconds * 1e3 / wall).min(1.0);
            }
            let k = steps as f64;
            println!(
                "| {n} | {reuse:?} | {:.1} | {:.1} | {:.1} | {:.1} |",
                its / k,
                setup / k,
                (total - setup) / k,
                total / k
            );
        }
    }
}

/// Iterations and CPU ms per solve over materials, time steps and a mixed constraint set, for
/// a few smoother/threshold choices: the robustness side of choosing defaults.
fn robustness_table(side: usize, reps: usize) {
    println!();
    println!("Robustness at {side}^2 (iterations / CPU ms per solve incl. setup):");
    let choices: Vec<(String, MultigridParams)> = [
        (0.05, 1, NearNullSpace::Translations),
        (0.05, 1, NearNullSpace::RigidBody),
        (0.05, 2, NearNullSpace::Translations),
        (0.02, 2, NearNullSpace::Translations),
    ]
    .iter()
    .map(|&(theta, degree, near_null_space)| {
        (
            format!("theta {theta} cheb{degree} {near_null_space:?}"),
            MultigridParams {
                strength_threshold: theta,
                smoother: Smoother::Chebyshev {
                    degree,
                    ratio: 30.0,
                },
                near_null_space,
                ..Default::default()
            },
        )
    })
    .collect();
    print!("| case |");
    for (name, _) in &choices {
        print!(" {name} |");
    }
    println!();
    println!("|---|{}", "---|".repeat(choices.len()));
    for (label, material, h, mixed) in [
        ("cotton h=1/30", Material::COTTON, 1.0 / 30.0, false),
        ("cotton h=1/120", Material::COTTON, 1.0 / 120.0, false),
        ("denim h=1/30", Material::DENIM, 1.0 / 30.0, false),
        ("silk h=1/30", Material::SILK, 1.0 / 30.0, false),
        (
            "cotton h=1/30 + contact band and sliding edge",
            Material::COTTON,
            1.0 / 30.0,
            true,
        ),
    ] {
        let mut p = cloth_problem_with(side, 0.3, &material, h);
        if mixed {
            for c in 0..side {
                p.constraints[(side - 1) * side + c] = cloth_solver::Constraint::line(
                    Vector3::new(0.0, 1.0, 0.0),
                    Vector3::new(0.0, 0.0, 1.0),
                )
                .expect("valid line");
            }
            for r in side / 3..side / 2 {
                for c in 0..side {
                    let normal = Vector3::new(0.3 * (c as f64).sin(), 1.0, 0.2 * (r as f64).cos());
                    p.constraints[r * side + c] =
                        cloth_solver::Constraint::plane(normal).expect("valid plane");
                }
            }
        }
        print!("| {label} |");
        for (_, params) in &choices {
            let mut mg = Multigrid::new(&p.a, &p.positions, &p.constraints, params, Par::Seq)
                .expect("hierarchy");
            let mut ws = PcgWorkspace::new();
            let mut dv = vec![Vector3::zeros(); p.b.len()];
            let pcg = PcgParams {
                tolerance: 1e-3,
                max_iterations: 1000,
                ..Default::default()
            };
            let (cpu, info) = cpu_median(reps, || {
                solve_mpcg_multigrid(
                    &mut dv,
                    &System::new(&p.a, &p.b, &p.z, &p.constraints),
                    &mut mg,
                    &p.positions,
                    &pcg,
                    Par::Seq,
                    &mut ws,
                )
                .expect("multigrid solve")
            });
            print!(" {} / {cpu:.1} |", info.iterations);
        }
        println!();
    }
}

/// Marker for "40 iterations at tolerance 0" in the bench's solve closure.
const FORCED: usize = usize::MAX;

fn main() {
    // criterion-style arguments (--bench, filters) are accepted and ignored.
    let sides = env_list("MG_SIDES", &[51, 101, 201, 317]);
    let reps = env_list("MG_REPS", &[5])[0].max(1);
    let seq_steps = if std::env::var("MG_NO_SEQ").is_ok() {
        0
    } else {
        8
    };
    if std::env::var("MG_ROBUST_ONLY").is_ok() {
        robustness_table(sides[0], reps);
        return;
    }
    if std::env::var("MG_SEQ_ONLY").is_ok() {
        sequence_table(&sides, 8);
        return;
    }
    let seq = Par::Seq;
    println!(
        "Times: median of {reps} runs; CPU ms on one thread (Par::Seq, robust to other load), \
         wall ms with the default pool in the last column."
    );
    println!(
        "| vertices | solver | iterations | analyse | setup | iterate | total | total wall | hierarchy B/vertex | solver B/vertex |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &side in &sides {
        let p = cloth_problem(side, 0.0);
        let n = p.b.len();
        let a_bytes = matrix_bytes(&p.a);
        let pcg = PcgParams {
            tolerance: 1e-3,
            max_iterations: 10_000,
            preconditioner: Preconditioner::BlockJacobi,
        };
        let mut ws = PcgWorkspace::new();
        let mut dv = vec![Vector3::zeros(); n];
        let ws_bytes = 5 * 24 * n + 72 * n;
        if std::env::var("MG_SKIP_BJ").is_err() {
            // Block-Jacobi takes seconds per solve from 40k vertices on: fewer repetitions.
            let reps = if n > 20_000 { reps.min(2) } else { reps };
            let (cpu, info) = cpu_median(reps, || {
                solve_mpcg(
                    &mut dv,
                    &System::new(&p.a, &p.b, &p.z, &p.constraints),
                    &pcg,
                    seq,
                    &mut ws,
                )
                .expect("block-Jacobi solve")
            });
            let wall = wall_median(reps, || {
                solve_mpcg(
                    &mut dv,
                    &System::new(&p.a, &p.b, &p.z, &p.constraints),
                    &pcg,
                    Par::default(),
                    &mut ws,
                )
                .expect("block-Jacobi solve");
            });
            println!(
                "| {n} | block-Jacobi | {} | - | - | {cpu:.1} | {cpu:.1} | {wall:.1} | - | {} |",
                info.iterations,
                (a_bytes + ws_bytes) / n
            );
        }
        for (name, params) in variants() {
            let (analyse, mg) = cpu_median(reps.min(3), || {
                Multigrid::new(&p.a, &p.positions, &p.constraints, &params, seq).expect("hierarchy")
            });
            let mut mg = mg;
            let mut solve = |mg: &mut Multigrid, max_iterations: usize, par: Par| {
                let params = if max_iterations == FORCED {
                    // Iteration cost: a fixed number of iterations (tolerance 0).
                    PcgParams {
                        max_iterations: 40,
                        tolerance: 0.0,
                        ..pcg
                    }
                } else {
                    PcgParams {
                        max_iterations,
                        ..pcg
                    }
                };
                solve_mpcg_multigrid(
                    &mut dv,
                    &System::new(&p.a, &p.b, &p.z, &p.constraints),
                    mg,
                    &p.positions,
                    &params,
                    par,
                    &mut ws,
                )
                .expect("multigrid solve")
            };
            // Setup + initial residual + one V-cycle, then the full solve.
            let (t0, _) = cpu_median(reps, || solve(&mut mg, 0, seq));
            let (total, info) = cpu_median(reps, || solve(&mut mg, 10_000, seq));
            assert!(info.converged, "{info:?}");
            let per_it = (total - t0) / info.iterations.max(1) as f64;
            if std::env::var("MG_PERIT").is_ok() {
                let (forced, finfo) = cpu_median(reps, || solve(&mut mg, FORCED, seq));
                println!(
                    "|   | per iteration ({} forced) | {:.2} ms | | | | | | | |",
                    finfo.iterations,
                    (forced - t0) / finfo.iterations.max(1) as f64
                );
            }
            let setup = t0 - per_it;
            let wall = wall_median(reps, || {
                solve(&mut mg, 10_000, Par::default());
            });
            let mg_bytes = mg.memory_bytes();
            let ws_mg = 5 * 24 * n;
            println!(
                "| {n} | SA-AMG {name} ({} levels {:?}, op. cx {:.2}) | {} | {analyse:.1} | {setup:.1} | {:.1} | {total:.1} | {wall:.1} | {} | {} |",
                mg.levels(),
                mg.level_unknowns(),
                mg.operator_complexity(),
                info.iterations,
                total - setup,
                mg_bytes / n,
                (a_bytes + ws_mg + mg_bytes) / n,
            );
            if std::env::var("MG_MEMORY").is_ok() {
                for (what, bytes) in mg.memory_breakdown() {
                    println!("|   | {what} | | | | | | | {} | |", bytes / n);
                }
            }
        }
    }
    if seq_steps > 0 {
        sequence_table(&sides, seq_steps);
    }
}
