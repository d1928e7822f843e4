//! SVG plots of the suite (plotters, SVG backend).

use crate::case::CaseResult;
use crate::report::{AIM_EXPONENT, AIM_FIG1_SECONDS, BARS, PAPER_SCALING};
use crate::suite::{Outcome, SuiteResults};
use plotters::coord::Shift;
use plotters::prelude::*;

type DrawResult = Result<(), Box<dyn std::error::Error>>;

const COLORS: [RGBColor; 5] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
];

/// Renders into an SVG string of `size` pixels.
fn svg(
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> DrawResult,
) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        draw(&root).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// Log range around positive values with a factor-1.5 margin (`[1, 10]` if none).
fn log_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(v), h.max(v))
        });
    if lo > hi {
        (1.0, 10.0)
    } else {
        (lo / 1.5, hi * 1.5)
    }
}

/// The series of the scaling plot: (vertices, ms per frame).
struct ScalingSeries {
    ours: Vec<(f64, f64)>,
    paper: Vec<(f64, f64)>,
    bars: Vec<(f64, f64)>,
    /// The axes' ranges.
    x: (f64, f64),
    y: (f64, f64),
}

/// The aim line: 10 ms at 2601 vertices growing as n^[`AIM_EXPONENT`], in ms.
fn aim(n: f64) -> f64 {
    1e3 * AIM_FIG1_SECONDS * (n / 2601.0).powf(AIM_EXPONENT)
}

impl ScalingSeries {
    fn of(s: &SuiteResults) -> Self {
        let mut ours: Vec<(f64, f64)> = (s.outcomes.iter())
            .filter(|o| o.group() == "scaling")
            .filter_map(Outcome::result)
            .filter(|r| r.error.is_none())
            .map(|r| (r.cloth_vertices as f64, 1e3 * r.totals.seconds_per_frame))
            .collect();
        ours.sort_by(|a, b| a.0.total_cmp(&b.0));
        let paper: Vec<(f64, f64)> = (PAPER_SCALING.iter())
            .map(|&(n, t)| (n as f64, 1e3 * t))
            .collect();
        let bars: Vec<(f64, f64)> = (BARS.iter())
            .filter(|b| b.scene != "fig2")
            .map(|b| (b.vertices as f64, 1e3 * b.seconds_per_frame))
            .collect();
        let xs = ours.iter().chain(&paper).map(|p| p.0);
        let (x0, x1) = log_range(xs.chain([400.0, 60000.0]));
        let ys = ours.iter().chain(&paper).chain(&bars).map(|p| p.1);
        let y = log_range(ys.chain([aim(x0), aim(x1)]));
        ScalingSeries {
            ours,
            paper,
            bars,
            x: (x0, x1),
            y,
        }
    }

    /// 41 points spread evenly on the log x axis.
    fn log_points(&self, f: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
        let (x0, x1) = self.x;
        (0..=40)
            .map(|i| x0 * (x1 / x0).powf(i as f64 / 40.0))
            .map(|n| (n, f(n)))
            .collect()
    }
}

/// A legend entry drawing a short line.
fn line_legend(
    c: RGBColor,
    width: u32,
) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> + 'static {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(width))
}

/// Time per frame (ms) against cloth vertices, log-log: our scaling series and its fit, the
/// paper's series, the other simulators' bars and the aim line.
pub fn scaling_svg(s: &SuiteResults) -> Result<String, String> {
    let d = ScalingSeries::of(s);
    let ((x0, x1), (y0, y1)) = (d.x, d.y);
    svg((900, 600), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(
                "Time per frame against cloth vertices (drape on a cylinder)",
                ("sans-serif", 20),
            )
            .margin(14)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("cloth vertices")
            .y_desc("time per frame (ms)")
            .draw()?;
        let c = COLORS[0];
        chart
            .draw_series(LineSeries::new(d.ours.iter().copied(), c.stroke_width(2)))?
            .label("ours (measured)")
            .legend(line_legend(c, 2));
        chart.draw_series(d.ours.iter().map(|&p| Circle::new(p, 4, c.filled())))?;
        if let Some(f) = s.scaling_fit {
            let c = COLORS[4];
            chart
                .draw_series(LineSeries::new(
                    d.log_points(|n| 1e3 * f.at(n)),
                    c.stroke_width(1),
                ))?
                .label(format!("fit: n^{:.2}", f.exponent))
                .legend(line_legend(c, 1));
        }
        let c = COLORS[1];
        chart
            .draw_series(LineSeries::new(d.paper.iter().copied(), c.stroke_width(2)))?
            .label("paper (195 MHz R10000), n^1.5")
            .legend(line_legend(c, 2));
        chart.draw_series(d.paper.iter().map(|&p| Circle::new(p, 4, c.filled())))?;
        let c = COLORS[3];
        chart
            .draw_series(
                d.bars
                    .iter()
                    .map(|&p| TriangleMarker::new(p, 6, c.filled())),
            )?
            .label("Blender 3.4 / Newton Style3D CPU (this machine)")
            .legend(move |(x, y)| TriangleMarker::new((x + 10, y), 6, c.filled()));
        let c = COLORS[2];
        chart
            .draw_series(LineSeries::new(d.log_points(aim), c.stroke_width(1)))?
            .label("aim: 10 ms at 2601, n^1.2")
            .legend(line_legend(c, 1));
        legend(&mut chart, SeriesLabelPosition::UpperLeft)
    })
}

/// Draws the legend of `chart` at `position`.
fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(position)
        .draw()?;
    Ok(())
}

/// Step sizes (ms, max and min per frame) of every run against simulated time.
fn step_panel(
    panel: &DrawingArea<SVGBackend<'_>, Shift>,
    cases: &[&CaseResult],
    t1: f64,
) -> DrawResult {
    let hmax = cases
        .iter()
        .flat_map(|r| r.series.iter().map(|p| 1e3 * p.h_max))
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let mut chart = ChartBuilder::on(panel)
        .caption("Step size per frame", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..t1, 0.0..(1.1 * hmax).max(1.0))?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("h (ms)")
        .draw()?;
    for (k, r) in cases.iter().enumerate() {
        let c = COLORS[k % COLORS.len()];
        let max: Vec<(f64, f64)> = r.series.iter().map(|p| (p.time, 1e3 * p.h_max)).collect();
        let min: Vec<(f64, f64)> = r.series.iter().map(|p| (p.time, 1e3 * p.h_min)).collect();
        chart
            .draw_series(LineSeries::new(max, c.stroke_width(2)))?
            .label(format!("{} h_max", r.spec.name))
            .legend(line_legend(c, 2));
        let faint = c.mix(0.5);
        chart
            .draw_series(LineSeries::new(min, faint.stroke_width(1)))?
            .label(format!("{} h_min", r.spec.name))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], faint.stroke_width(1))
            });
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)
}

/// CG iterations per step (mean over each frame's steps) of every run against simulated time.
fn cg_panel(
    panel: &DrawingArea<SVGBackend<'_>, Shift>,
    cases: &[&CaseResult],
    t1: f64,
) -> DrawResult {
    let per_step = |r: &CaseResult| -> Vec<(f64, f64)> {
        r.series
            .iter()
            .filter(|p| p.steps + p.rejected_steps > 0)
            .map(|p| {
                (
                    p.time,
                    p.cg_iterations as f64 / (p.steps + p.rejected_steps) as f64,
                )
            })
            .collect()
    };
    let cmax = cases
        .iter()
        .flat_map(|r| per_step(r).into_iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    let mut chart = ChartBuilder::on(panel)
        .caption(
            "CG iterations per step (mean over each frame's steps)",
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..t1, 0.0..(1.1 * cmax).max(1.0))?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("CG iterations")
        .draw()?;
    for (k, r) in cases.iter().enumerate() {
        let c = COLORS[k % COLORS.len()];
        chart
            .draw_series(LineSeries::new(per_step(r), c.stroke_width(2)))?
            .label(r.spec.name.clone())
            .legend(line_legend(c, 2));
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)
}

/// Step size (ms, min and max per frame) and CG iterations per step over the runs of `cases`,
/// against simulated time: two panels, one above the other.
pub fn series_svg(cases: &[&CaseResult]) -> Result<String, String> {
    svg((900, 800), |root| {
        let panels = root.split_evenly((2, 1));
        let t1 = cases
            .iter()
            .flat_map(|r| r.series.iter().map(|p| p.time))
            .fold(0.0f64, f64::max)
            .max(1e-3);
        step_panel(&panels[0], cases, t1)?;
        cg_panel(&panels[1], cases, t1)
    })
}
