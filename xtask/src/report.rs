//! The Markdown report (with the paper's figures beside ours) and the JSON file.

use crate::analysis::PowerFit;
use crate::case::CaseResult;
use crate::machine::Machine;
use crate::suite::{BenchOptions, Outcome, SuiteResults};
use serde::Serialize;
use std::fmt::Write as _;

/// A row of the paper's table (Baraff & Witkin 1998, Knowl 10/11), 195 MHz R10000.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct PaperRow {
    /// Scene.
    pub scene: &'static str,
    /// Cloth vertices / triangles.
    pub cloth: (usize, usize),
    /// Solid vertices / triangles.
    pub solid: (usize, usize),
    /// Seconds per frame.
    pub seconds_per_frame: f64,
    /// Step min / max, ms.
    pub step_ms: (f64, f64),
    /// Frames / steps.
    pub frames_steps: (usize, usize),
    /// EVAL / CG / C/C / C/S, percent.
    pub percent: [f64; 4],
}

/// The paper's Figure 1 and Figure 2 rows.
pub const PAPER_ROWS: [PaperRow; 2] = [
    PaperRow {
        scene: "Fig 1 (drape on cylinder)",
        cloth: (2602, 4942),
        solid: (322, 640),
        seconds_per_frame: 2.23,
        step_ms: (16.5, 33.0),
        frames_steps: (75, 80),
        percent: [25.7, 50.4, 18.3, 1.4],
    },
    PaperRow {
        scene: "Fig 2 (fixed sheet)",
        cloth: (2602, 4942),
        solid: (322, 640),
        seconds_per_frame: 3.06,
        step_ms: (16.5, 33.0),
        frames_steps: (75, 80),
        percent: [17.9, 63.6, 15.3, 0.2],
    },
];

/// The paper's garment rows (Figures 3-6: shirts, pants, skirts and blouses on animated
/// figures), same machine.
pub const PAPER_GARMENT_ROWS: [PaperRow; 7] = [
    garment_row(
        "Fig 3 (shirt, twisting figure)",
        (6450, 12654),
        (9941, 18110),
        7.32,
        (16.5, 33.0),
        (50, 52),
        [18.9, 37.9, 30.9, 2.6],
    ),
    garment_row(
        "Fig 4 (shirt, walking man)",
        (6450, 12654),
        (9941, 18110),
        14.5,
        (2.5, 20.0),
        (430, 748),
        [16.7, 29.9, 46.1, 2.2],
    ),
    garment_row(
        "Fig 4 (pants, walking man)",
        (8757, 17352),
        (9941, 18110),
        38.5,
        (0.625, 20.0),
        (430, 1214),
        [16.4, 35.7, 42.5, 1.7],
    ),
    garment_row(
        "Fig 5 (short skirt, dancer)",
        (2153, 4020),
        (7630, 14008),
        3.68,
        (5.0, 20.0),
        (393, 715),
        [18.1, 30.0, 44.5, 1.5],
    ),
    garment_row(
        "Fig 5 (blouse, dancer)",
        (5108, 10016),
        (7630, 14008),
        16.7,
        (5.0, 20.0),
        (393, 701),
        [11.2, 26.0, 57.7, 1.3],
    ),
    garment_row(
        "Fig 6 (long skirt, dancer)",
        (4530, 8844),
        (7630, 14008),
        10.2,
        (10.0, 20.0),
        (393, 670),
        [20.1, 36.8, 29.7, 2.6],
    ),
    garment_row(
        "Fig 6 (blouse, dancer)",
        (5188, 10194),
        (7630, 14008),
        16.6,
        (1.25, 20.0),
        (393, 753),
        [13.2, 30.9, 50.2, 1.4],
    ),
];

const fn garment_row(
    scene: &'static str,
    cloth: (usize, usize),
    solid: (usize, usize),
    seconds_per_frame: f64,
    step_ms: (f64, f64),
    frames_steps: (usize, usize),
    percent: [f64; 4],
) -> PaperRow {
    PaperRow {
        scene,
        cloth,
        solid,
        seconds_per_frame,
        step_ms,
        frames_steps,
        percent,
    }
}

/// The paper's scaling series: (vertices, seconds per frame); it reports O(n^1.5).
pub const PAPER_SCALING: [(usize, f64); 4] = [(500, 0.23), (899, 0.46), (2602, 2.23), (7359, 10.3)];
/// The paper's scaling exponent.
pub const PAPER_EXPONENT: f64 = 1.5;
/// Aim of the project: Figure 1 time per frame, s.
pub const AIM_FIG1_SECONDS: f64 = 0.010;
/// Aim of the project: scaling exponent.
pub const AIM_EXPONENT: f64 = 1.2;
/// Aim of issue 14: Figure 1 at least this many times faster than Blender in the same run.
pub const AIM_PEER_SPEEDUP: f64 = 14.0;
/// Aims of issue 14 at its largest size (100,489 vertices): seconds per frame, KB (10^3
/// bytes) of peak memory per vertex; CG iterations per solve at its smallest and largest
/// size; share of rejected steps.
pub const AIM_SCALE: ScaleAims = ScaleAims {
    largest_seconds: 1.5,
    kb_per_vertex: 4.0,
    cg_smallest: 30.0,
    cg_largest: 45.0,
    rejected: 0.15,
};

/// See [`AIM_SCALE`].
#[derive(Clone, Copy, Debug)]
pub struct ScaleAims {
    /// Seconds per frame at the largest size.
    pub largest_seconds: f64,
    /// Peak memory per vertex at the largest size, KB.
    pub kb_per_vertex: f64,
    /// CG iterations per solve at the smallest size.
    pub cg_smallest: f64,
    /// CG iterations per solve at the largest size.
    pub cg_largest: f64,
    /// Largest share of rejected steps.
    pub rejected: f64,
}

/// Whether `ok`, as the report words it.
fn verdict(ok: bool) -> &'static str {
    if ok { "reached" } else { "not reached" }
}

/// A max/min ratio with two decimals, `-` when absent.
fn ratio(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{x:.2}"))
}

/// Issue 14's table over the `scale` cases (any order), with its aims.
fn scale_section(cases: &[&CaseResult], fit: Option<PowerFit>) -> String {
    let mut w = String::new();
    let mut cases = cases.to_vec();
    cases.sort_by_key(|r| r.cloth_vertices);
    let (Some(small), Some(large)) = (cases.first(), cases.last()) else {
        return w;
    };
    let _ = writeln!(
        w,
        "\n## Solver at scale (issue 14: the cylinder drape, first {} frames)\n",
        large.totals.frames
    );
    let rejected = |r: &CaseResult| r.totals.rejected_steps as f64 / r.attempts().max(1) as f64;
    let kb = |r: &CaseResult| {
        r.peak_memory_bytes
            .map(|b| b as f64 / 1e3 / r.cloth_vertices.max(1) as f64)
    };
    let rows: Vec<Vec<String>> = cases
        .iter()
        .map(|r| {
            vec![
                r.cloth_vertices.to_string(),
                fmt_time(r.totals.seconds_per_frame),
                format!("{:.1}", r.cg_per_step),
                format!("{} ({})", r.totals.steps, r.totals.rejected_steps),
                fmt_percent(rejected(r)),
                r.peak_memory_bytes
                    .map_or("-".into(), |b| format!("{:.0} MB", b as f64 / 1e6)),
                kb(r).map_or("-".into(), |k| format!("{k:.1} KB")),
            ]
        })
        .collect();
    w.push_str(&markdown_table(
        &[
            "verts",
            "time/frame",
            "CG it/solve",
            "steps (rejected)",
            "rejected",
            "peak mem",
            "per vertex",
        ],
        &rows,
    ));
    let a = AIM_SCALE;
    if let Some(f) = fit {
        let _ = writeln!(
            w,
            "\nTime per frame ~ n^{:.2} over these sizes (aim <= {AIM_EXPONENT}: {}).",
            f.exponent,
            verdict(f.exponent <= AIM_EXPONENT)
        );
    }
    // The exponent split into how many steps the sizes take and what one costs.
    let fit_of = |y: fn(&CaseResult) -> Option<f64>| crate::suite::fit_over_vertices(&cases, y);
    if let (Some(steps), Some(cost)) = (
        fit_of(|r| Some(r.attempts() as f64)),
        fit_of(CaseResult::seconds_per_attempt),
    ) {
        let _ = writeln!(
            w,
            "Of that, attempted steps ~ n^{:.2} and wall time per attempted step ~ n^{:.2}.",
            steps.exponent, cost.exponent
        );
    }
    let worst = cases.iter().map(|r| rejected(r)).fold(0.0, f64::max);
    let _ = writeln!(
        w,
        "At {} vertices: {} per frame (aim {}: {}), {} per vertex (aim {} KB: {}), {:.1} CG \
         iterations per solve (aim {}: {}); at {} vertices {:.1} (aim {}: {}); rejected steps \
         at most {} (aim {}: {}).",
        large.cloth_vertices,
        fmt_time(large.totals.seconds_per_frame),
        fmt_time(a.largest_seconds),
        verdict(large.totals.seconds_per_frame <= a.largest_seconds),
        kb(large).map_or("-".into(), |k| format!("{k:.1} KB")),
        a.kb_per_vertex,
        verdict(kb(large).is_some_and(|k| k <= a.kb_per_vertex)),
        large.cg_per_step,
        a.cg_largest,
        verdict(large.cg_per_step <= a.cg_largest),
        small.cloth_vertices,
        small.cg_per_step,
        a.cg_smallest,
        verdict(small.cg_per_step <= a.cg_smallest),
        fmt_percent(worst),
        fmt_percent(a.rejected),
        verdict(worst <= a.rejected),
    );
    w
}

/// Other simulators on this 2-core machine, seconds per frame.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Bar {
    /// Simulator.
    pub who: &'static str,
    /// Scene.
    pub scene: &'static str,
    /// Vertices.
    pub vertices: usize,
    /// Seconds per frame.
    pub seconds_per_frame: f64,
}

/// The bars given in the issue.
pub const BARS: [Bar; 5] = [
    Bar {
        who: "Blender 3.4",
        scene: "fig1",
        vertices: 2601,
        seconds_per_frame: 0.164,
    },
    Bar {
        who: "Newton Style3D (CPU)",
        scene: "fig1",
        vertices: 2601,
        seconds_per_frame: 0.140,
    },
    Bar {
        who: "Blender 3.4",
        scene: "scaling",
        vertices: 7396,
        seconds_per_frame: 0.620,
    },
    Bar {
        who: "Newton Style3D (CPU)",
        scene: "scaling",
        vertices: 7396,
        seconds_per_frame: 0.295,
    },
    Bar {
        who: "Blender 3.4",
        scene: "fig2",
        vertices: 2601,
        seconds_per_frame: 0.056,
    },
];

/// The JSON file: machine, options, every figure, and the paper's.
#[derive(Serialize)]
pub struct JsonReport<'a> {
    /// What it ran on.
    pub machine: &'a Machine,
    /// Quick set.
    pub quick: bool,
    /// Filter.
    pub filter: Option<&'a str>,
    /// Repeats per case.
    pub repeat: usize,
    /// Everything measured.
    pub results: &'a SuiteResults,
    /// The paper's table.
    pub paper: &'a [PaperRow],
    /// The paper's scaling series.
    pub paper_scaling: &'a [(usize, f64)],
    /// Other simulators.
    pub bars: &'a [Bar],
    /// Problems found (empty = success).
    pub problems: &'a [String],
}

/// A Markdown table; `|` inside cells is escaped.
pub fn markdown_table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut out = String::new();
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    out += &line(headers.iter().map(|h| esc(h)).collect());
    out += &line(headers.iter().map(|_| "---".to_string()).collect());
    for r in rows {
        let mut cells: Vec<String> = r.iter().map(|c| esc(c)).collect();
        cells.resize(headers.len(), String::new());
        out += &line(cells);
    }
    out
}

/// A number with 3 decimals, or in scientific notation when very large or small.
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        "-".into()
    } else if x != 0.0 && !(1e-3..1e4).contains(&x.abs()) {
        format!("{x:.3e}")
    } else {
        format!("{x:.3}")
    }
}

/// A strain as a percentage (0.05 -> `5.0%`), scientific when huge.
pub fn fmt_percent(strain: f64) -> String {
    let p = 100.0 * strain;
    if !p.is_finite() {
        "-".into()
    } else if p.abs() >= 1e4 {
        format!("{p:.2e}%")
    } else {
        format!("{p:.1}%")
    }
}

/// Time with a unit: ms below one second, else s.
pub fn fmt_time(seconds: f64) -> String {
    if !seconds.is_finite() {
        "-".into()
    } else if seconds < 1.0 {
        format!("{:.1} ms", 1e3 * seconds)
    } else {
        format!("{seconds:.2} s")
    }
}

/// Solid vertices/triangles: `-` without contact, `analytic` when every collider is an
/// exact shape (no tessellation), else the mesh colliders' counts.
fn fmt_solid(r: &CaseResult) -> String {
    match (r.solid_vertices, r.solid_triangles) {
        (Some(0), Some(0)) if r.colliders > 0 => format!("analytic ({})", r.colliders),
        (Some(a), Some(b)) if r.colliders > 0 => format!("{a}/{b}"),
        _ => "-".into(),
    }
}

fn fmt_mem(bytes: Option<u64>) -> String {
    bytes.map_or("-".into(), |b| format!("{:.0} MiB", b as f64 / 1048576.0))
}

/// The paper's columns plus CG iterations per step, peak memory and threads.
pub const CASE_HEADERS: [&str; 13] = [
    "case",
    "cloth verts/tris",
    "solid verts/tris",
    "time/frame",
    "CPU/frame",
    "step min/max (ms)",
    "frames/steps",
    "max stretch",
    "EVAL/CG/C/C/C/S %",
    "CG it/step",
    "peak mem",
    "threads",
    "notes",
];

/// One row in [`CASE_HEADERS`] order.
pub fn case_row(r: &CaseResult) -> Vec<String> {
    let p = r.percent;
    let mut notes = Vec::new();
    if r.totals.rejected_steps > 0 {
        notes.push(format!("{} rejected", r.totals.rejected_steps));
    }
    if r.cg_not_converged > 0 {
        notes.push(format!("{} CG capped", r.cg_not_converged));
    }
    if r.integrator == "verlet" {
        notes.push("explicit".into());
    } else if r.solver != "block_jacobi" {
        notes.push(r.solver.clone());
    }
    if r.repeats.len() > 1 {
        notes.push(format!("median of {}", r.repeats.len()));
    }
    if let Some(e) = &r.error {
        notes.push(format!("ERROR: {e}"));
    }
    vec![
        r.spec.name.clone(),
        format!("{}/{}", r.cloth_vertices, r.cloth_triangles),
        fmt_solid(r),
        fmt_time(r.totals.seconds_per_frame),
        r.cpu_seconds_per_frame.map_or("-".into(), fmt_time),
        format!("{:.3}/{:.3}", 1e3 * r.totals.h_min, 1e3 * r.totals.h_max),
        format!("{}/{}", r.totals.frames, r.totals.steps),
        fmt_percent(r.totals.max_stretch),
        format!("{:.1}/{:.1}/{:.1}/{:.1}", p[0], p[1], p[2], p[3]),
        format!("{:.1}", r.cg_per_step),
        fmt_mem(r.peak_memory_bytes),
        r.threads.to_string(),
        notes.join(", "),
    ]
}

fn paper_row(p: &PaperRow) -> Vec<String> {
    vec![
        format!("paper: {}", p.scene),
        format!("{}/{}", p.cloth.0, p.cloth.1),
        format!("{}/{}", p.solid.0, p.solid.1),
        fmt_time(p.seconds_per_frame),
        "-".into(),
        format!("{}/{}", p.step_ms.0, p.step_ms.1),
        format!("{}/{}", p.frames_steps.0, p.frames_steps.1),
        "-".into(),
        format!(
            "{}/{}/{}/{}",
            p.percent[0], p.percent[1], p.percent[2], p.percent[3]
        ),
        "50-100".into(),
        "-".into(),
        "1".into(),
        "195 MHz R10000".into(),
    ]
}

/// Tolerance of the Verlet projection (`solver.strain_tolerance` default: 0.5% of the rest
/// length) by which a Verlet row's max stretch may exceed the implicit run's and still count
/// as holding the limit.
const COMPARE_TOLERANCE: f64 = 0.005;

/// Per scene of the comparison (`compare_<scene>_implicit` and `compare_<scene>_verlet_k<k>`
/// rows), one line: the largest Verlet step whose max stretch stays within the implicit run's
/// plus [`COMPARE_TOLERANCE`], with its time per frame beside the implicit integrator's.
fn largest_holding_steps(compare: &[&CaseResult]) -> String {
    let mut out = String::new();
    for imp in compare
        .iter()
        .filter(|r| r.spec.name.ends_with("_implicit"))
    {
        let scene = imp.spec.name.trim_end_matches("_implicit");
        let limit = imp.totals.max_stretch + COMPARE_TOLERANCE + 1e-9;
        let holding = compare
            .iter()
            .filter(|r| r.integrator == "verlet" && r.spec.name.starts_with(scene))
            .filter(|r| r.error.is_none() && r.totals.max_stretch <= limit)
            .max_by(|a, b| a.totals.h_max.total_cmp(&b.totals.h_max));
        let scene = scene.trim_start_matches("compare_");
        let _ = match holding {
            Some(r) => writeln!(
                out,
                "- {scene}: the largest explicit step that keeps the limit ({} + 0.5%) is \
                 {:.1} ms, at {} per frame (CPU {}) against the implicit integrator's {} \
                 (CPU {}).",
                fmt_percent(imp.totals.max_stretch),
                1e3 * r.totals.h_max,
                fmt_time(r.totals.seconds_per_frame),
                r.cpu_seconds_per_frame.map_or("-".into(), fmt_time),
                fmt_time(imp.totals.seconds_per_frame),
                imp.cpu_seconds_per_frame.map_or("-".into(), fmt_time),
            ),
            None => writeln!(
                out,
                "- {scene}: no explicit step tried keeps the limit ({} + 0.5%).",
                fmt_percent(imp.totals.max_stretch)
            ),
        };
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

fn find<'a>(s: &'a SuiteResults, name: &str) -> Option<&'a CaseResult> {
    s.outcomes
        .iter()
        .find(|o| o.name() == name)
        .and_then(Outcome::result)
}

fn group<'a>(s: &'a SuiteResults, g: &str) -> Vec<&'a CaseResult> {
    s.outcomes
        .iter()
        .filter(|o| o.group() == g)
        .filter_map(Outcome::result)
        .collect()
}

/// The whole Markdown report.
pub fn markdown(m: &Machine, o: &BenchOptions, s: &SuiteResults, problems: &[String]) -> String {
    let mut md = String::new();
    let w = &mut md;
    let _ = writeln!(w, "# Benchmarks\n");
    let _ = writeln!(
        w,
        "Generated by `{}` on {}.\n\n- commit: `{}`\n- build profile: {}\n- CPU: {} ({} logical CPUs)\n- threads per case: {}\n- set: {}{}\n- repeats per case: {} (median time reported)\n- load average (1/5/15 min) before / after: {} / {}\n",
        m.command,
        m.date,
        m.commit,
        m.profile,
        m.cpu,
        m.cores,
        m.threads,
        if o.quick { "quick" } else { "full" },
        o.filter
            .as_ref()
            .map_or(String::new(), |f| format!(" (filter `{f}`)")),
        o.repeat,
        m.load_before,
        m.load_after
    );
    let _ = writeln!(
        w,
        "Times are wall-clock time of the frame loop divided by frames (scene setup excluded), \
         each case in its own process. The machine is shared and noisy (other engineers build \
         on it): see \"Measurement noise\" below for how far identical runs differ. The \
         paper's times are from a 195 MHz R10000 (1998); compare ratios and exponents, not \
         absolute times. Phase percentages are of \
         the frame-loop wall time. `solid verts/tris` counts mesh colliders only: the \
         cylinder, sphere and floor are exact analytic shapes here (`analytic (k)` = k \
         colliders, no tessellation), where the paper used a 322-vertex cylinder mesh.\n"
    );
    for n in &s.notes {
        let _ = writeln!(w, "- note: {n}");
    }
    if !problems.is_empty() {
        let _ = writeln!(w, "\n**Problems in this run:**\n");
        for p in problems {
            let _ = writeln!(w, "- {p}");
        }
    }

    // Summary.
    let _ = writeln!(w, "\n## Summary\n");
    let ok = |name: &str| find(s, name).filter(|r| r.error.is_none());
    for (name, label, paper) in [
        (
            "fig1_drape",
            "Figure 1 drape",
            Some(PAPER_ROWS[0].seconds_per_frame),
        ),
        (
            "fig2_fixed_sheet",
            "Figure 2 fixed sheet",
            Some(PAPER_ROWS[1].seconds_per_frame),
        ),
        ("garment", "garment on a twisting figure", None),
    ] {
        if let Some(r) = ok(name) {
            let _ = writeln!(
                w,
                "- {label}: {} per frame, {} cloth vertices, {:.1} CG iterations per solve{}.",
                fmt_time(r.totals.seconds_per_frame),
                r.cloth_vertices,
                r.cg_per_step,
                paper.map_or(String::new(), |p| format!(" (paper: {})", fmt_time(p)))
            );
        }
    }
    if let Some(f) = s.scaling_fit {
        let _ = writeln!(
            w,
            "- scaling: time per frame ~ n^{:.2} over {} sizes (paper n^{PAPER_EXPONENT}, aim <= {AIM_EXPONENT}).",
            f.exponent, f.points
        );
    }
    if let Some(q) = s.bend_spread.wall {
        let _ = writeln!(
            w,
            "- bending stiffness x0.1 to x1000: max/min time {q:.2} (paper: < 1.05); attempted \
             steps {}, time per attempted step {}; CG iterations {}.",
            ratio(s.bend_spread.solves),
            ratio(s.bend_spread.per_attempt),
            ratio(s.bend_spread.cg_iterations),
        );
    }
    if let Some(q) = s.stretch_spread.wall {
        let _ = writeln!(w, "- stretch stiffness x0.1 to x10: max/min time {q:.2}.");
    }
    for search in &s.searches {
        if let (Some(r), Some(h)) = (ok(&search.case), search.h) {
            let _ = writeln!(
                w,
                "- `{}`: largest stable step {h:.2e} s, {} per frame, max stretch {}.",
                search.case,
                fmt_time(r.totals.seconds_per_frame),
                fmt_percent(r.totals.max_stretch)
            );
        }
    }

    // Noise.
    if !s.duplicates.is_empty() || s.repeat_spread_median.is_some() {
        let _ = writeln!(w, "\n**Measurement noise in this run.**");
        if let Some(m) = s.repeat_spread_median {
            let _ = writeln!(
                w,
                "Repeats of the same case differ by a factor {m:.2} (median over cases of max/min)."
            );
        }
        for g in &s.duplicates {
            let times: Vec<String> = g
                .cases
                .iter()
                .zip(&g.seconds_per_frame)
                .map(|(c, t)| format!("`{c}` {}", fmt_time(*t)))
                .collect();
            let _ = writeln!(
                w,
                "Identical configurations (same deterministic step and CG counts): {} — max/min {:.2}.",
                times.join(", "),
                g.ratio
            );
        }
    }

    // Headline: the paper's scenes.
    let _ = writeln!(w, "\n## The paper's scenes\n");
    let mut rows = Vec::new();
    for (name, paper) in [
        ("fig1_drape", Some(&PAPER_ROWS[0])),
        ("fig2_fixed_sheet", Some(&PAPER_ROWS[1])),
        ("garment", None),
    ] {
        if let Some(r) = find(s, name) {
            rows.push(case_row(r));
        }
        if let Some(p) = paper {
            rows.push(paper_row(p));
        }
    }
    w.push_str(&markdown_table(&CASE_HEADERS, &rows));

    // Garments sewn onto the mannequin, beside the paper's garment rows.
    let garments = group(s, "garment");
    if !garments.is_empty() {
        let _ = writeln!(
            w,
            "\n## Garments\n\n\
             Sewing patterns from `assets/patterns/` sewn onto the project's mannequin and draped \
             (time per frame from frame 1: a scene's preroll, in which the garment is sewn, is not \
             counted). `shirt_twist` plays the mannequin's twist clip (the paper's Figure 3), \
             `trousers_walk` its walk (Figure 4) and `outfit_walk` the same walk in the trousers \
             with the T-shirt sewn over them (as the paper's walking man is dressed), `dancer_skirt` its dance (Figure 5) and \
             `dancer_long_skirt` the same dance in a mid-calf skirt (Figure 6), both without the \
             blouse, and `dancer_skirt_blouse` and `dancer_long_skirt_blouse` with the \
             sleeveless blouse sewn over them (not under `--quick`); `outfit` is the trousers with the shirt sewn over them; the others stand \
             in A-pose. The rows of Figures 3-6 have the paper's vertex counts within 4% \
             (`--quick` coarsens them to 3 cm edges; at full size the walking trousers sew on a \
             4 cm copy in the preroll, then walk at 1.26 cm, and the walking outfit's shirt \
             sews on a 2.5 cm copy and walks at 1.3 cm); the standing garments are coarser: \
             compare time per vertex and the split of the time there, not the totals.\n"
        );
        let mut rows: Vec<Vec<String>> = garments.into_iter().map(case_row).collect();
        rows.extend(PAPER_GARMENT_ROWS.iter().map(paper_row));
        w.push_str(&markdown_table(&CASE_HEADERS, &rows));
    }

    // The bar and the aim.
    let _ = writeln!(w, "\n## Against other simulators and the aim\n");
    let ours = |scene: &str| match scene {
        "fig1" => find(s, "fig1_drape"),
        "fig2" => find(s, "fig2_fixed_sheet"),
        _ => group(s, "scaling")
            .into_iter()
            .find(|r| r.cloth_vertices == 7396),
    };
    let mut rows = Vec::new();
    // Peers timed in this run first (same scene, same machine, same threads).
    for peer in &s.peers {
        let us = find(s, &peer.mirrors).filter(|r| r.error.is_none());
        rows.push(vec![
            format!("fig1 ({} verts, {} frames)", peer.vertices, peer.frames),
            format!("{}, this run, {} threads", peer.who, peer.threads),
            fmt_time(peer.seconds_per_frame),
            us.map_or("-".into(), |r| fmt_time(r.totals.seconds_per_frame)),
            us.map_or("-".into(), |r| {
                format!(
                    "{:.2}x",
                    r.totals.seconds_per_frame / peer.seconds_per_frame
                )
            }),
        ]);
    }
    for b in &BARS {
        let us = ours(b.scene).filter(|r| r.error.is_none());
        rows.push(vec![
            format!("{} ({} verts)", b.scene, b.vertices),
            format!("{} (an earlier issue's figure)", b.who),
            fmt_time(b.seconds_per_frame),
            us.map_or("-".into(), |r| fmt_time(r.totals.seconds_per_frame)),
            us.map_or("-".into(), |r| {
                format!("{:.2}x", r.totals.seconds_per_frame / b.seconds_per_frame)
            }),
        ]);
    }
    w.push_str(&markdown_table(
        &[
            "scene",
            "simulator",
            "their time/frame",
            "ours",
            "ours / theirs",
        ],
        &rows,
    ));
    if let Some(r) = find(s, "fig1_drape").filter(|r| r.error.is_none()) {
        let _ = writeln!(
            w,
            "\nAim: {} per frame on Figure 1; we take {} ({:.1}x the aim{}).",
            fmt_time(AIM_FIG1_SECONDS),
            fmt_time(r.totals.seconds_per_frame),
            r.totals.seconds_per_frame / AIM_FIG1_SECONDS,
            if r.totals.seconds_per_frame <= AIM_FIG1_SECONDS {
                ", reached"
            } else {
                ""
            }
        );
    }
    for peer in &s.peers {
        if let Some(r) = find(s, &peer.mirrors).filter(|r| r.error.is_none()) {
            let speedup = peer.seconds_per_frame / r.totals.seconds_per_frame;
            let _ = writeln!(
                w,
                "Aim: Figure 1 at least {AIM_PEER_SPEEDUP}x faster than {} in the same run; \
                 we are {speedup:.1}x faster ({}, medians of {} and {} runs; Blender's scene: \
                 the same mesh and colliders, its Cotton preset, 5 steps per frame, see \
                 xtask/src/peer.rs).",
                peer.who,
                verdict(speedup >= AIM_PEER_SPEEDUP),
                peer.repeats.len(),
                r.repeats.len().max(1),
            );
        }
    }
    if let Some(f) = s.scaling_fit {
        let _ = writeln!(
            w,
            "Aim: scaling exponent <= {AIM_EXPONENT}; we fit {:.2} (paper {PAPER_EXPONENT}; {}).",
            f.exponent,
            if f.exponent <= AIM_EXPONENT {
                "reached".to_string()
            } else {
                format!("{:.2} above the aim", f.exponent - AIM_EXPONENT)
            }
        );
    }

    w.push_str(&scale_section(&group(s, "scale"), s.scale_fit));

    // Scaling.
    let scaling = group(s, "scaling");
    if !scaling.is_empty() {
        let _ = writeln!(w, "\n## Scaling (drape on the cylinder, grid nx = ny)\n");
        let mut rows: Vec<Vec<String>> = scaling
            .iter()
            .map(|r| {
                let paper = PAPER_SCALING
                    .iter()
                    .min_by_key(|(n, _)| n.abs_diff(r.cloth_vertices))
                    .filter(|(n, _)| n.abs_diff(r.cloth_vertices) * 20 < *n)
                    .map_or("-".into(), |(n, t)| format!("{} ({n} verts)", fmt_time(*t)));
                vec![
                    r.cloth_vertices.to_string(),
                    r.cloth_triangles.to_string(),
                    r.totals.frames.to_string(),
                    fmt_time(r.totals.seconds_per_frame),
                    format!("{:.1}", r.cg_per_step),
                    format!("{:.3}/{:.3}", 1e3 * r.totals.h_min, 1e3 * r.totals.h_max),
                    fmt_mem(r.peak_memory_bytes),
                    s.scaling_fit
                        .map_or("-".into(), |f| fmt_time(f.at(r.cloth_vertices as f64))),
                    paper,
                ]
            })
            .collect();
        rows.sort_by_key(|r| r[0].parse::<usize>().unwrap_or(0));
        w.push_str(&markdown_table(
            &[
                "verts",
                "tris",
                "frames",
                "time/frame",
                "CG it/step",
                "step min/max (ms)",
                "peak mem",
                "fit",
                "paper",
            ],
            &rows,
        ));
        match s.scaling_fit {
            Some(f) => {
                let _ = writeln!(
                    w,
                    "\nFitted: time per frame = {:.3e} s * n^{:.3} (least squares on log time vs log n, {} points, R^2 = {:.3}). Paper: O(n^{PAPER_EXPONENT}). Aim: <= {AIM_EXPONENT}.",
                    f.prefactor, f.exponent, f.points, f.r_squared
                );
            }
            None => {
                let _ = writeln!(w, "\nToo few points for a fit.");
            }
        }
    }

    // Sweeps.
    for (g, title, spread, paper) in [
        (
            "bend",
            "Bending stiffness sweep (2601-vertex drape)",
            s.bend_spread,
            "the paper: under 5% change in running time over a 10,000x range",
        ),
        (
            "stretch",
            "Stretch stiffness sweep (2601-vertex drape)",
            s.stretch_spread,
            "no paper figure",
        ),
    ] {
        let rs = group(s, g);
        if rs.is_empty() {
            continue;
        }
        let _ = writeln!(w, "\n## {title}\n");
        w.push_str(&markdown_table(
            &CASE_HEADERS,
            &rs.iter().map(|r| case_row(r)).collect::<Vec<_>>(),
        ));
        if let Some(q) = spread.wall {
            let f = |x: Option<f64>| x.map_or("-".into(), |x| format!("{x:.3}"));
            let _ = writeln!(
                w,
                "\nmax/min over the sweep: wall time per frame {q:.3} ({:+.1}%; {paper}); CPU time \
                 per frame {}; CG iterations {} and linear solves {} (these two are \
                 deterministic, free of timing noise); wall time per attempted step {} (the cost \
                 of a step, apart from how many the run takes).",
                100.0 * (q - 1.0),
                f(spread.cpu),
                f(spread.cg_iterations),
                f(spread.solves),
                f(spread.per_attempt),
            );
        }
    }

    // Explicit against implicit.
    if !s.searches.is_empty() {
        let _ = writeln!(w, "\n## Implicit against explicit Verlet (fixed sheet)\n");
        let _ = writeln!(
            w,
            "The explicit integrator runs with the Verlet defaults of the scene format (soft \
             50 N/m springs, `[0.9, 1.1]` strain limit iterated to 0.5% or {} sweeps per step; \
             `_stiff` uses springs as stiff as the cloth's mean membrane stiffness). The largest stable step is searched \
             over equal steps per frame: a probe (a short run) is stable when it finishes all \
             frames with finite positions, kinetic energy below 2 M |g| L (cloth mass M, \
             diagonal L of the initial box) and triangle stretch below 50%. From 20 steps per \
             frame (the default `verlet_h`) the search halves or doubles the steps until \
             stability flips, then bisects to 5%. The full run then uses that step; if it is \
             not stable over all frames, the steps per frame grow by 25% until it is. Compare \
             the max stretch column: the implicit sheet stays near its 3% step-control \
             threshold.\n",
            cloth::sim::DEFAULT_VERLET_ITERATIONS
        );
        for search in &s.searches {
            let rows: Vec<Vec<String>> = search
                .probes
                .iter()
                .map(|p| {
                    vec![
                        p.steps_per_frame.to_string(),
                        format!("{:.3e}", p.h),
                        if p.stable { "stable" } else { "unstable" }.to_string(),
                        fmt_num(p.energy_ratio),
                        fmt_percent(p.max_stretch),
                        p.error.clone().unwrap_or_default(),
                    ]
                })
                .collect();
            let _ = writeln!(
                w,
                "`{}` ({} frames per probe):\n",
                search.case, search.probe_frames
            );
            w.push_str(&markdown_table(
                &[
                    "steps/frame",
                    "h (s)",
                    "result",
                    "max KE / bound",
                    "max stretch",
                    "error",
                ],
                &rows,
            ));
            match (search.steps_per_frame, search.h) {
                (Some(k), Some(h)) => {
                    let _ = writeln!(
                        w,
                        "\nLargest stable step: h = {h:.3e} s ({k} steps per frame){}{}.\n",
                        if search.stable_at_frame_step {
                            ", the largest the scene allows"
                        } else {
                            ""
                        },
                        if search.retried {
                            " (raised after the full run was unstable at the probed step)"
                        } else {
                            ""
                        }
                    );
                }
                _ => {
                    let _ = writeln!(w, "\nNo stable step found.\n");
                }
            }
        }
        let mut rows: Vec<Vec<String>> = find(s, "fig2_fixed_sheet")
            .map(case_row)
            .into_iter()
            .collect();
        rows.extend(group(s, "explicit").into_iter().map(case_row));
        w.push_str(&markdown_table(&CASE_HEADERS, &rows));
    }

    // Implicit against explicit at equal maximum stretch.
    let compare = group(s, "compare");
    if !compare.is_empty() {
        let _ = writeln!(
            w,
            "\n## Implicit against explicit at equal maximum stretch\n\n\
             Each scene runs with the implicit integrator (its material's stiffness, no strain \
             limit), then with Verlet at 1, 2 and 4 steps per frame, its strain limit set to \
             `[0.9, 1 + s]` with `s` the implicit run's maximum stretch, so both columns of max \
             stretch should agree. Verlet's projection iterates to 0.5% of the rest length or \
             {} sweeps per step (global projections from sweep {} on); a max stretch above \
             `s + 0.5%` means the sweeps hit the cap.\n",
            cloth::sim::DEFAULT_VERLET_ITERATIONS,
            cloth::sim::DEFAULT_GLOBAL_AFTER + 1
        );
        w.push_str(&largest_holding_steps(&compare));
        let rows: Vec<Vec<String>> = compare.iter().map(|r| case_row(r)).collect();
        w.push_str(&markdown_table(&CASE_HEADERS, &rows));
        let mut scenes: Vec<&str> = compare
            .iter()
            .filter_map(|r| r.spec.name.strip_prefix("compare_"))
            .filter_map(|n| n.rsplit_once("_implicit").map(|(s, _)| s))
            .collect();
        scenes.dedup();
        for scene in scenes {
            let _ = writeln!(
                w,
                "\nLast frames of `{scene}`, left to right: implicit, then Verlet at 1, 2 and 4 \
                 steps per frame (front view, one camera):\n\n![{scene}]({})",
                crate::suite::compare_preview_name(scene)
            );
        }
    }

    // Solvers.
    let solvers = group(s, "solver");
    if !solvers.is_empty() {
        let _ = writeln!(w, "\n## Linear solvers (fixed sheet)\n");
        w.push_str(&markdown_table(
            &CASE_HEADERS,
            &solvers.iter().map(|r| case_row(r)).collect::<Vec<_>>(),
        ));
    }

    // Self-contact.
    let selfcontact = group(s, "selfcontact");
    if !selfcontact.is_empty() {
        let _ = writeln!(
            w,
            "\n## Self-contact (thrown sheet: off, penalty springs only, on; twisting tube: off, on)\n"
        );
        w.push_str(&markdown_table(
            &CASE_HEADERS,
            &selfcontact.iter().map(|r| case_row(r)).collect::<Vec<_>>(),
        ));
    }

    // Everything.
    let _ = writeln!(w, "\n## All cases\n");
    let rows: Vec<Vec<String>> = s
        .outcomes
        .iter()
        .map(|o| match o {
            Outcome::Ran(r) => case_row(r),
            Outcome::Failed { spec, message } => {
                vec![spec.name.clone(), format!("FAILED: {message}")]
            }
            Outcome::Skipped { name, reason, .. } => {
                vec![name.clone(), format!("skipped: {reason}")]
            }
        })
        .collect();
    w.push_str(&markdown_table(&CASE_HEADERS, &rows));
    let _ = writeln!(
        w,
        "\nFiles: `results.json` (every figure, per-frame series), `report.md` (this text), \
         `scaling.svg` (time per frame against vertices, log-log), `run_series.svg` (step size \
         and CG iterations over the Figure 1 and Figure 2 runs)."
    );
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::CaseSpec;

    #[test]
    fn scale_table_lists_every_size_with_its_rejections_and_memory() {
        let drape = crate::suite::workspace_root().join("scenes/drape_cylinder.toml");
        let runs: Vec<CaseResult> = [8, 6]
            .iter()
            .map(|&n| {
                let mut spec =
                    CaseSpec::new(&format!("scale_{}", n * n), "scale", drape.clone(), 1);
                spec.grid = Some(n);
                spec.frames = Some(4);
                crate::case::measure(&spec).expect("tiny drape runs")
            })
            .collect();
        let refs: Vec<&CaseResult> = runs.iter().collect();
        let points: Vec<(f64, f64)> = (runs.iter())
            .map(|r| (r.cloth_vertices as f64, r.totals.seconds_per_frame))
            .collect();
        let text = scale_section(&refs, crate::analysis::fit_power_law(&points));
        let rows: Vec<&str> = (text.lines())
            .filter(|l| l.starts_with("| ") && !l.starts_with("| ---"))
            .collect();
        // Header and two rows, smallest first whatever the input order.
        assert_eq!(rows.len(), 3, "{text}");
        assert!(
            rows[1].starts_with("| 36 |") && rows[2].starts_with("| 64 |"),
            "{text}"
        );
        for (row, r) in rows[1..].iter().zip([&runs[1], &runs[0]]) {
            let share =
                r.totals.rejected_steps as f64 / (r.totals.steps + r.totals.rejected_steps) as f64;
            assert!(
                row.contains(&format!(
                    "| {} ({}) |",
                    r.totals.steps, r.totals.rejected_steps
                )),
                "{row}"
            );
            assert!(row.contains(&fmt_percent(share)), "{row}");
            let kb =
                r.peak_memory_bytes.expect("peak memory") as f64 / 1e3 / r.cloth_vertices as f64;
            assert!(row.contains(&format!("{kb:.1} KB")), "{row}");
        }
        assert!(text.contains("Time per frame ~ n^"), "{text}");
        // The exponent's two factors, each the slope between the two sizes on log-log axes.
        let slope = |y: &dyn Fn(&CaseResult) -> f64| {
            (y(&runs[0]) / y(&runs[1])).ln() / (64.0f64 / 36.0).ln()
        };
        let shown = |label: &str| -> f64 {
            let at = text
                .find(label)
                .unwrap_or_else(|| panic!("{label} in {text}"));
            let rest = &text[at + label.len()..];
            let end = rest.find(|c: char| c != '.' && c != '-' && !c.is_ascii_digit());
            let number = rest[..end.unwrap_or(rest.len())].trim_end_matches('.');
            number.parse().expect("a number")
        };
        let attempts = |r: &CaseResult| (r.totals.steps + r.totals.rejected_steps) as f64;
        let per_attempt =
            |r: &CaseResult| r.totals.seconds_per_frame * r.totals.frames as f64 / attempts(r);
        for (label, want) in [
            ("attempted steps ~ n^", slope(&attempts)),
            ("per attempted step ~ n^", slope(&per_attempt)),
        ] {
            assert!(
                (shown(label) - want).abs() <= 0.006,
                "{label} {want:.3}: {text}"
            );
        }
        // The sweeps' spread of the cost of a step.
        let costs: Vec<f64> = runs.iter().map(per_attempt).collect();
        let want = costs[0].max(costs[1]) / costs[0].min(costs[1]);
        let got = crate::suite::Spread::of(&refs)
            .per_attempt
            .expect("two cases");
        assert!((got - want).abs() <= 1e-12 * want, "{got} against {want}");
        assert!(
            text.contains("At 64 vertices:") && text.contains("at 36 vertices"),
            "{text}"
        );
        assert!(scale_section(&[], None).is_empty());
    }

    #[test]
    fn table_has_header_separator_and_padded_rows() {
        let t = markdown_table(
            &["a", "b|c"],
            &[vec!["1".into(), "2".into()], vec!["x".into()]],
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0], r"| a | b\|c |");
        assert_eq!(lines[1], "| --- | --- |");
        assert_eq!(lines[2], "| 1 | 2 |");
        assert_eq!(lines[3], "| x |  |");
        // Every line has the same number of unescaped separators.
        let seps = |l: &str| l.replace(r"\|", "").matches('|').count();
        assert!(lines.iter().all(|l| seps(l) == 3));
    }

    #[test]
    fn numbers_switch_to_scientific_notation_when_huge() {
        assert_eq!(fmt_num(0.3456), "0.346");
        assert_eq!(fmt_num(3.25e300), "3.250e300");
        assert_eq!(fmt_num(f64::INFINITY), "-");
        assert_eq!(fmt_percent(0.031), "3.1%");
        assert_eq!(fmt_percent(2.0e150), "2.00e152%");
    }

    #[test]
    fn times_switch_units_at_one_second() {
        assert_eq!(fmt_time(0.0116), "11.6 ms");
        assert_eq!(fmt_time(2.23), "2.23 s");
        assert_eq!(fmt_time(f64::NAN), "-");
    }

    #[test]
    fn paper_rows_match_the_headers() {
        for p in PAPER_ROWS.iter().chain(&PAPER_GARMENT_ROWS) {
            assert_eq!(paper_row(p).len(), CASE_HEADERS.len());
        }
    }
}
