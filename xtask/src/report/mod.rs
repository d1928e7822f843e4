//! The report of a bench run: the Markdown page (with the paper's figures beside ours), the
//! JSON file, and the README's headline table.

mod format;
mod paper;
pub mod readme;
mod sections;

pub use paper::{AIM_EXPONENT, AIM_FIG1_SECONDS, BARS, Bar, PAPER_ROWS, PAPER_SCALING, PaperRow};

use crate::machine::Machine;
use crate::suite::{BenchOptions, SuiteResults};
use serde::Serialize;

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

/// The whole Markdown report. With `provenance` it names the date and the commit of the run
/// (the run's own `report.md`); without, it is the docs page, which describes the current
/// figures only.
pub fn markdown(
    (m, o): (&Machine, &BenchOptions),
    s: &SuiteResults,
    problems: &[String],
    provenance: bool,
) -> String {
    let mut md = String::new();
    let w = &mut md;
    sections::header(w, (m, o), s, (problems, provenance));
    sections::summary(w, s);
    sections::noise(w, s);
    sections::paper_scenes(w, s);
    sections::garments(w, s);
    sections::peers(w, s);
    sections::aims(w, s);
    w.push_str(&sections::scale_section(
        &format::group(s, "scale"),
        s.scale_fit,
    ));
    sections::scaling(w, s);
    sections::sweeps(w, s);
    sections::explicit(w, s);
    sections::compare(w, s);
    sections::solvers(w, s);
    sections::all_cases(w, s);
    md
}

#[cfg(test)]
mod tests {
    use super::format::{CASE_HEADERS, fmt_num, fmt_percent, fmt_time, markdown_table, paper_row};
    use super::paper::PAPER_GARMENT_ROWS;
    use super::sections::scale_section;
    use super::*;
    use crate::case::{CaseResult, CaseSpec};

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
