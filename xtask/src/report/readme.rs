//! The README's headline table: a few rows of the run between two marker lines
//! ([`START`], [`END`]) that `cargo xtask bench --docs` rewrites in place, the rest of the
//! README untouched.

use super::format::{find, fmt_time, group, markdown_table};
use super::paper::{PAPER_EXPONENT, PAPER_GARMENT_ROWS, PAPER_ROWS};
use crate::case::CaseResult;
use crate::machine::Machine;
use crate::suite::{BenchOptions, SuiteResults};
use std::path::Path;

/// The line before the headline block.
pub const START: &str = "<!-- bench:headline:start -->";
/// The line after the headline block.
pub const END: &str = "<!-- bench:headline:end -->";

/// The case of `name` when it ran to its end without error.
fn ok<'a>(s: &'a SuiteResults, name: &str) -> Option<&'a CaseResult> {
    find(s, name).filter(|r| r.error.is_none())
}

/// A row of ours: label, vertices, time per frame and what to compare it with.
fn row(label: &str, r: &CaseResult, compare: String) -> Vec<String> {
    vec![
        label.to_string(),
        r.cloth_vertices.to_string(),
        fmt_time(r.totals.seconds_per_frame),
        compare,
    ]
}

/// The headline table's rows: Figures 1 and 2, a garment (the Figure 3 shirt, else the
/// `garment` case), the largest drape of the scale (or scaling) cases, and Blender's
/// Figure 1 when it was timed in the run.
fn rows(s: &SuiteResults) -> Vec<Vec<String>> {
    let paper = |t: f64| format!("paper: {}", fmt_time(t));
    let mut rows = Vec::new();
    if let Some(r) = ok(s, "fig1_drape") {
        let p = paper(PAPER_ROWS[0].seconds_per_frame);
        rows.push(row("Figure 1: drape on a cylinder", r, p));
    }
    if let Some(r) = ok(s, "fig2_fixed_sheet") {
        let p = paper(PAPER_ROWS[1].seconds_per_frame);
        rows.push(row("Figure 2: sheet held at two corners", r, p));
    }
    if let Some(r) = ok(s, "shirt_twist") {
        let p = paper(PAPER_GARMENT_ROWS[0].seconds_per_frame);
        rows.push(row("Figure 3: shirt on a twisting body", r, p));
    } else if let Some(r) = ok(s, "garment") {
        rows.push(row("garment", r, "-".into()));
    }
    let largest = |g: &str| {
        (group(s, g).into_iter())
            .filter(|r| r.error.is_none())
            .max_by_key(|r| r.cloth_vertices)
    };
    if let Some(r) = largest("scale").or_else(|| largest("scaling")) {
        rows.push(row("drape on a cylinder at scale", r, "-".into()));
    }
    for peer in &s.peers {
        if let Some(us) = ok(s, &peer.mirrors) {
            let speedup = peer.seconds_per_frame / us.totals.seconds_per_frame;
            rows.push(vec![
                format!("Figure 1 in {} (same machine and run)", peer.who),
                peer.vertices.to_string(),
                fmt_time(peer.seconds_per_frame),
                format!("ours: {speedup:.1}x faster"),
            ]);
        }
    }
    rows
}

/// The block between the markers: the table, the scaling exponent, and the command and
/// machine that made it.
pub fn headline((m, o): (&Machine, &BenchOptions), s: &SuiteResults) -> String {
    let mut out = markdown_table(
        &["scene", "cloth vertices", "time per frame", "compare"],
        &rows(s),
    );
    out.push('\n');
    if let Some(f) = s.scaling_fit {
        out.push_str(&format!(
            "Time per frame grows as n^{:.2} with the vertex count n over the scaling series \
             (the paper: n^{PAPER_EXPONENT}).\n\n",
            f.exponent
        ));
    }
    out.push_str(&format!(
        "Made by `{}` on {} ({} logical CPUs, {} threads per case; {} set, median of {} \
         run(s) per case). Every table: [docs/benchmarks.md](docs/benchmarks.md).\n",
        m.command,
        m.cpu,
        m.cores,
        m.threads,
        if o.quick { "quick" } else { "full" },
        o.repeat
    ));
    out
}

/// `text` with what lies between the [`START`] and [`END`] lines replaced by `block`
/// (which ends with a line break); every byte outside stays as it was.
pub fn replace_block(text: &str, block: &str) -> Result<String, String> {
    let start = match text
        .match_indices(START)
        .map(|(i, _)| i)
        .collect::<Vec<_>>()[..]
    {
        [i] => i + START.len(),
        [] => return Err(format!("no `{START}` line")),
        _ => return Err(format!("more than one `{START}` line")),
    };
    let end = text[start..]
        .find(END)
        .map(|i| start + i)
        .ok_or_else(|| format!("no `{END}` line after `{START}`"))?;
    Ok(format!("{}\n{block}{}", &text[..start], &text[end..]))
}

/// Rewrites the headline block of the README at `path` in place, atomically.
pub fn rewrite(path: &Path, block: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let new = replace_block(&text, block).map_err(|e| format!("{}: {e}", path.display()))?;
    cloth::mesh::write_atomic_bytes(path, new.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::PowerFit;
    use crate::case::CaseSpec;
    use crate::peer::PeerRun;
    use crate::suite::{Outcome, Spread, parse_options};
    use cloth::sim::stats::Totals;
    use std::path::PathBuf;

    /// A case that ran `vertices` vertices at `seconds` per frame.
    fn ran(name: &str, group: &str, vertices: usize, seconds: f64) -> Outcome {
        let spec = CaseSpec::new(name, group, PathBuf::from("scene.toml"), 2);
        Outcome::Ran(Box::new(CaseResult {
            spec,
            cloth_vertices: vertices,
            cloth_triangles: 2 * vertices,
            colliders: 0,
            solid_vertices: None,
            solid_triangles: None,
            integrator: "implicit".into(),
            solver: "block_jacobi".into(),
            frames_requested: 10,
            totals: Totals {
                frames: 10,
                seconds_per_frame: seconds,
                ..Totals::default()
            },
            cg_not_converged: 0,
            cg_per_step: 20.0,
            cpu_seconds_per_frame: None,
            repeats: vec![seconds],
            setup_seconds: 0.1,
            wall_seconds: 10.0 * seconds,
            percent: [0.0; 5],
            peak_memory_bytes: None,
            threads: 2,
            max_kinetic_energy: 0.0,
            energy_bound: 1.0,
            finite: true,
            error: None,
            series: Vec::new(),
        }))
    }

    fn fake_results() -> SuiteResults {
        SuiteResults {
            outcomes: vec![
                ran("fig1_drape", "paper", 2601, 0.0116),
                ran("fig2_fixed_sheet", "paper", 2601, 0.0093),
                ran("shirt_twist", "garment", 6491, 0.25),
                ran("scale_2601", "scale", 2601, 0.02),
                ran("scale_100489", "scale", 100489, 1.31),
            ],
            searches: Vec::new(),
            scaling_fit: Some(PowerFit {
                exponent: 1.07,
                prefactor: 1e-6,
                r_squared: 0.99,
                points: 6,
            }),
            scale_fit: None,
            bend_spread: Spread::default(),
            stretch_spread: Spread::default(),
            duplicates: Vec::new(),
            repeat_spread_median: None,
            notes: Vec::new(),
            peers: vec![PeerRun {
                name: "blender_fig1".into(),
                who: "Blender 4.0.2".into(),
                mirrors: "fig1_drape".into(),
                vertices: 2601,
                frames: 75,
                threads: 2,
                repeats: vec![0.05],
                seconds_per_frame: 0.05,
                lowest: 0.1,
            }],
            peer_errors: Vec::new(),
        }
    }

    fn fake_machine() -> Machine {
        Machine {
            commit: "0000000".into(),
            profile: "release".into(),
            cpu: "Test CPU".into(),
            cores: 2,
            threads: 2,
            date: "today".into(),
            command: "cargo xtask bench --docs".into(),
            load_before: "0 0 0".into(),
            load_after: "0 0 0".into(),
        }
    }

    #[test]
    fn the_headline_has_the_figures_the_garment_the_scale_and_blender() {
        let o = parse_options(&[]).unwrap();
        let block = headline((&fake_machine(), &o), &fake_results());
        let lines: Vec<&str> = block.lines().collect();
        assert_eq!(
            lines[2],
            "| Figure 1: drape on a cylinder | 2601 | 11.6 ms | paper: 2.23 s |"
        );
        assert!(lines[4].starts_with("| Figure 3: shirt on a twisting body | 6491 | 250.0 ms"));
        assert!(lines[5].starts_with("| drape on a cylinder at scale | 100489 | 1.31 s"));
        assert!(
            lines[6].ends_with("| 50.0 ms | ours: 4.3x faster |"),
            "{block}"
        );
        assert!(
            block.contains("n^1.07") && block.contains("`cargo xtask bench --docs` on Test CPU")
        );
        // No date or commit: the README describes the current figures.
        assert!(!block.contains("today") && !block.contains("0000000"));
    }

    #[test]
    fn the_rewrite_replaces_the_block_and_keeps_every_other_byte() {
        let dir = std::env::temp_dir().join(format!("xtask-readme-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("README.md");
        let before = "# cloth\r\n\nIntro with trailing spaces   \n\n## Benchmarks\n\n";
        let after = "\n\nMore text, ✓ unicode.\n<!-- other marker -->\nno final line break";
        let old = format!("{before}{START}\n| old | table |\n\nMade long ago.\n{END}{after}");
        std::fs::write(&path, &old).unwrap();
        let o = parse_options(&[]).unwrap();
        let block = headline((&fake_machine(), &o), &fake_results());
        rewrite(&path, &block).unwrap();
        let new = std::fs::read_to_string(&path).unwrap();
        assert_eq!(new, format!("{before}{START}\n{block}{END}{after}"));
        assert!(!new.contains("old | table") && new.contains("Figure 2"));
        // Running it again changes nothing.
        rewrite(&path, &block).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), new);
        // Without markers (or with two starts) the file is refused and left alone.
        std::fs::write(&path, "# no markers\n").unwrap();
        assert!(
            rewrite(&path, &block)
                .unwrap_err()
                .contains("no `<!-- bench:headline:start -->`")
        );
        let twice = format!("{START}\n{END}\n{START}\n{END}\n");
        std::fs::write(&path, &twice).unwrap();
        assert!(rewrite(&path, &block).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), twice);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
