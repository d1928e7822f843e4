//! The sections of the Markdown report, in the order [`super::markdown`] writes them.

use super::format::{
    CASE_HEADERS, case_row, find, fmt_mem, fmt_num, fmt_percent, fmt_time, group, markdown_table,
    paper_row, ratio, verdict,
};
use super::paper::{
    AIM_EXPONENT, AIM_FIG1_SECONDS, AIM_PEER_SPEEDUP, AIM_SCALE, BARS, PAPER_EXPONENT,
    PAPER_GARMENT_ROWS, PAPER_ROWS, PAPER_SCALING,
};
use crate::analysis::PowerFit;
use crate::case::CaseResult;
use crate::machine::Machine;
use crate::suite::{BenchOptions, Outcome, SuiteResults, VerletSearch};
use std::fmt::Write as _;

/// Title, what the run was made with and on, how to read the times, notes and problems.
/// `provenance` adds the date and the commit (the run's own report; not the docs page).
pub fn header(
    w: &mut String,
    (m, o): (&Machine, &BenchOptions),
    s: &SuiteResults,
    (problems, provenance): (&[String], bool),
) {
    let _ = writeln!(w, "# Benchmarks\n");
    if provenance {
        let _ = writeln!(
            w,
            "Made by `{}` on {}.\n\n- commit: `{}`",
            m.command, m.date, m.commit
        );
    } else {
        let _ = writeln!(w, "Made by `{}`.\n", m.command);
    }
    let _ = writeln!(
        w,
        "- build profile: {}\n- CPU: {} ({} logical CPUs)\n- threads per case: {}\n- set: {}{}\n- repeats per case: {} (median time reported)\n- load average (1/5/15 min) before / after: {} / {}\n",
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
         each case in its own process. Times on a shared machine vary: \"Measurement noise\" \
         below says how far identical runs differ. The \
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
}

/// One line per headline figure.
pub fn summary(w: &mut String, s: &SuiteResults) {
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
}

/// How far repeats and identical configurations differ.
pub fn noise(w: &mut String, s: &SuiteResults) {
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
}

/// The paper's scenes beside its rows.
pub fn paper_scenes(w: &mut String, s: &SuiteResults) {
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
}

/// Garments sewn onto the mannequin, beside the paper's garment rows.
pub fn garments(w: &mut String, s: &SuiteResults) {
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
}

/// Other simulators' times beside ours.
pub fn peers(w: &mut String, s: &SuiteResults) {
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
            format!("{} (given with the aims)", b.who),
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
}

/// The project's aims and where this run stands.
pub fn aims(w: &mut String, s: &SuiteResults) {
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
}

/// Share of a case's attempted steps that were rejected.
fn rejected_share(r: &CaseResult) -> f64 {
    r.totals.rejected_steps as f64 / r.attempts().max(1) as f64
}

/// Peak memory per cloth vertex, KB (10^3 bytes).
fn kb_per_vertex(r: &CaseResult) -> Option<f64> {
    r.peak_memory_bytes
        .map(|b| b as f64 / 1e3 / r.cloth_vertices.max(1) as f64)
}

/// The table of the `scale` cases, in the given order.
fn scale_table(cases: &[&CaseResult]) -> String {
    let rows: Vec<Vec<String>> = cases
        .iter()
        .map(|r| {
            vec![
                r.cloth_vertices.to_string(),
                fmt_time(r.totals.seconds_per_frame),
                format!("{:.1}", r.cg_per_step),
                format!("{} ({})", r.totals.steps, r.totals.rejected_steps),
                fmt_percent(rejected_share(r)),
                r.peak_memory_bytes
                    .map_or("-".into(), |b| format!("{:.0} MB", b as f64 / 1e6)),
                kb_per_vertex(r).map_or("-".into(), |k| format!("{k:.1} KB")),
            ]
        })
        .collect();
    markdown_table(
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
    )
}

/// The solver at scale: the `scale` cases (any order) smallest first, with the fit of time
/// per frame, its split into steps and cost per step, and the aims ([`AIM_SCALE`]).
pub fn scale_section(cases: &[&CaseResult], fit: Option<PowerFit>) -> String {
    let mut w = String::new();
    let mut cases = cases.to_vec();
    cases.sort_by_key(|r| r.cloth_vertices);
    let (Some(small), Some(large)) = (cases.first(), cases.last()) else {
        return w;
    };
    let _ = writeln!(
        w,
        "\n## Solver at scale (the cylinder drape, first {} frames)\n",
        large.totals.frames
    );
    w.push_str(&scale_table(&cases));
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
    let worst = cases.iter().map(|r| rejected_share(r)).fold(0.0, f64::max);
    let kb = kb_per_vertex(large);
    let _ = writeln!(
        w,
        "At {} vertices: {} per frame (aim {}: {}), {} per vertex (aim {} KB: {}), {:.1} CG \
         iterations per solve (aim {}: {}); at {} vertices {:.1} (aim {}: {}); rejected steps \
         at most {} (aim {}: {}).",
        large.cloth_vertices,
        fmt_time(large.totals.seconds_per_frame),
        fmt_time(a.largest_seconds),
        verdict(large.totals.seconds_per_frame <= a.largest_seconds),
        kb.map_or("-".into(), |k| format!("{k:.1} KB")),
        a.kb_per_vertex,
        verdict(kb.is_some_and(|k| k <= a.kb_per_vertex)),
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

/// The scaling series and its fit.
pub fn scaling(w: &mut String, s: &SuiteResults) {
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
}

/// The bending and stretch stiffness sweeps.
pub fn sweeps(w: &mut String, s: &SuiteResults) {
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
}

/// Implicit against explicit Verlet: the step searches and the runs.
pub fn explicit(w: &mut String, s: &SuiteResults) {
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
            cloth::sim::explicit::DEFAULT_VERLET_ITERATIONS
        );
        for search in &s.searches {
            probe_table(w, search);
        }
        let mut rows: Vec<Vec<String>> = find(s, "fig2_fixed_sheet")
            .map(case_row)
            .into_iter()
            .collect();
        rows.extend(group(s, "explicit").into_iter().map(case_row));
        w.push_str(&markdown_table(&CASE_HEADERS, &rows));
    }
}

/// The probes of one explicit step search and the step it found.
fn probe_table(w: &mut String, search: &VerletSearch) {
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
/// Implicit against explicit at equal maximum stretch.
pub fn compare(w: &mut String, s: &SuiteResults) {
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
            cloth::sim::explicit::DEFAULT_VERLET_ITERATIONS,
            cloth::sim::explicit::DEFAULT_GLOBAL_AFTER + 1
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
}

/// The linear solvers and self-contact.
pub fn solvers(w: &mut String, s: &SuiteResults) {
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
}

/// Every case, and the files of the run.
pub fn all_cases(w: &mut String, s: &SuiteResults) {
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
}
