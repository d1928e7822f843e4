//! Formatting of the report's numbers, tables and rows, and finding cases in the results.

use super::paper::PaperRow;
use crate::case::CaseResult;
use crate::suite::{Outcome, SuiteResults};

/// Whether `ok`, as the report words it.
pub fn verdict(ok: bool) -> &'static str {
    if ok { "reached" } else { "not reached" }
}

/// A max/min ratio with two decimals, `-` when absent.
pub fn ratio(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{x:.2}"))
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
pub fn fmt_solid(r: &CaseResult) -> String {
    match (r.solid_vertices, r.solid_triangles) {
        (Some(0), Some(0)) if r.colliders > 0 => format!("analytic ({})", r.colliders),
        (Some(a), Some(b)) if r.colliders > 0 => format!("{a}/{b}"),
        _ => "-".into(),
    }
}

/// Peak memory in MiB, `-` when unknown.
pub fn fmt_mem(bytes: Option<u64>) -> String {
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

/// A paper row in [`CASE_HEADERS`] order.
pub fn paper_row(p: &PaperRow) -> Vec<String> {
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

/// The result of case `name`, if it ran.
pub fn find<'a>(s: &'a SuiteResults, name: &str) -> Option<&'a CaseResult> {
    s.outcomes
        .iter()
        .find(|o| o.name() == name)
        .and_then(Outcome::result)
}

/// The results of the cases of group `g` that ran, in run order.
pub fn group<'a>(s: &'a SuiteResults, g: &str) -> Vec<&'a CaseResult> {
    s.outcomes
        .iter()
        .filter(|o| o.group() == g)
        .filter_map(Outcome::result)
        .collect()
}
