//! SVG plots of a run's `stats.json` (plotters, SVG backend), read as cloth-sim's
//! [`RunReport`].

use crate::ViewError;
use cloth_sim::output::STATS_FILE;
use cloth_sim::{stats::FrameStats, stats::RunReport};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// File names written by [`plot`], in order.
pub const PLOT_FILES: [&str; 6] = [
    "step_size.svg",
    "cg_iterations.svg",
    "kinetic_energy.svg",
    "stretch.svg",
    "rejections.svg",
    "time_split.svg",
];

const SIZE: (u32, u32) = (800, 480);
const COLORS: [RGBColor; 7] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
];

type Series = (String, Vec<(f64, f64)>);

/// Writes the SVG charts of `dir/stats.json` into `out_dir` (created if needed) and returns their
/// paths ([`PLOT_FILES`]), one point per [`FrameStats`] record at its `time`: step sizes
/// h_min/h_max (milliseconds), CG iterations (per frame and per accepted step), kinetic energy,
/// max stretch/compression, rejected steps by reason ([`cloth_sim::stats::Rejections`]), and the
/// stacked wall-time split EVAL / CG / C/C / C/S / other. Frames that took no step are left out
/// of the step-size and per-step curves. Each file is written atomically.
///
/// A missing or malformed `stats.json` is [`ViewError::Stats`].
pub fn plot(dir: impl AsRef<Path>, out_dir: impl AsRef<Path>) -> Result<Vec<PathBuf>, ViewError> {
    let dir = dir.as_ref();
    let out_dir = out_dir.as_ref();
    let path = dir.join(STATS_FILE);
    let report = RunReport::read(&path).map_err(|source| ViewError::Stats {
        path,
        source: Box::new(source),
    })?;
    let stats = &report.frames;
    std::fs::create_dir_all(out_dir).map_err(|e| ViewError::io(out_dir, e))?;
    let charts = line_charts(stats);
    let mut written = Vec::with_capacity(PLOT_FILES.len());
    for ((title, y_desc, lines), file) in charts.into_iter().zip(PLOT_FILES) {
        let path = out_dir.join(file);
        let svg = svg_string(&path, |root| line_chart(root, title, y_desc, &lines))?;
        cloth_mesh::write_atomic(&path, |w| w.write_all(svg.as_bytes()))
            .map_err(|e| ViewError::io(&path, e))?;
        written.push(path);
    }
    let path = out_dir.join(PLOT_FILES[5]);
    let svg = svg_string(&path, |root| time_split_chart(root, stats))?;
    cloth_mesh::write_atomic(&path, |w| w.write_all(svg.as_bytes()))
        .map_err(|e| ViewError::io(&path, e))?;
    written.push(path);
    Ok(written)
}

/// The line charts of [`plot`] in [`PLOT_FILES`] order: title, y axis, curves.
fn line_charts(stats: &[FrameStats]) -> [(&'static str, &'static str, Vec<Series>); 5] {
    let series = |name: &str, f: &dyn Fn(&FrameStats) -> Option<f64>| -> Series {
        (
            name.to_string(),
            stats
                .iter()
                .filter_map(|s| f(s).map(|y| (s.time, y)))
                .collect(),
        )
    };
    let stepped = |s: &FrameStats, y: f64| (s.steps > 0).then_some(y);
    let count = |n: usize| Some(n as f64);
    [
        (
            "Step size per frame",
            "h (ms)",
            vec![
                series("h_min", &|s| stepped(s, 1e3 * s.h_min)),
                series("h_max", &|s| stepped(s, 1e3 * s.h_max)),
            ],
        ),
        (
            "CG iterations",
            "iterations",
            vec![
                series("per frame", &|s| count(s.cg_iterations)),
                series("per step (mean)", &|s| {
                    stepped(s, s.cg_iterations as f64 / s.steps as f64)
                }),
            ],
        ),
        (
            "Kinetic energy",
            "energy (J)",
            vec![series("kinetic energy", &|s| Some(s.kinetic_energy))],
        ),
        (
            "Largest strain per frame",
            "strain",
            vec![
                series("max stretch", &|s| Some(s.max_stretch)),
                series("max compression", &|s| Some(s.max_compression)),
            ],
        ),
        (
            "Rejected steps per frame",
            "rejected steps",
            vec![
                series("stretch change", &|s| count(s.rejections.stretch_change)),
                series("not positive definite", &|s| {
                    count(s.rejections.not_positive_definite)
                }),
                series("factorization", &|s| count(s.rejections.factorization)),
                series("penetration", &|s| count(s.rejections.penetration)),
                series("inside solid", &|s| count(s.rejections.inside_solid)),
                series("self-crossing", &|s| count(s.rejections.self_crossing)),
                series("energy gain", &|s| count(s.rejections.energy_gain)),
            ],
        ),
    ]
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn svg_string(
    path: &Path,
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> DrawResult,
) -> Result<String, ViewError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| ViewError::encode(path, e.to_string()))?;
        draw(&root).map_err(|e| ViewError::encode(path, e))?;
        root.present()
            .map_err(|e| ViewError::encode(path, e.to_string()))?;
    }
    Ok(svg)
}

/// Range covering `values` with 5% margins (a unit range around a single value, `[0, 1]` if
/// empty).
fn padded_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
        (l.min(v), h.max(v))
    });
    if lo > hi {
        return (0.0, 1.0);
    }
    if lo == hi {
        let d = if lo == 0.0 { 1.0 } else { 0.1 * lo.abs() };
        return (lo - d, hi + d);
    }
    let pad = 0.05 * (hi - lo);
    (lo - pad, hi + pad)
}

fn x_range(lines: &[Series]) -> (f64, f64) {
    let (lo, hi) = padded_range(lines.iter().flat_map(|(_, p)| p.iter().map(|q| q.0)));
    (lo.min(hi), hi)
}

fn line_chart(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    title: &str,
    y_desc: &str,
    lines: &[Series],
) -> DrawResult {
    let (x0, x1) = x_range(lines);
    let (y0, y1) = padded_range(lines.iter().flat_map(|(_, p)| p.iter().map(|q| q.1)));
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc(y_desc)
        .draw()?;
    for (k, (name, points)) in lines.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(2),
            ))?
            .label(name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}

fn time_split_chart(root: &DrawingArea<SVGBackend<'_>, Shift>, stats: &[FrameStats]) -> DrawResult {
    const NAMES: [&str; 5] = ["EVAL", "CG", "C/C", "C/S", "other"];
    let rows: Vec<(f64, [f64; 5])> = stats
        .iter()
        .map(|s| {
            let t = &s.timings;
            (
                s.time,
                [t.eval, t.cg, t.cloth_cloth, t.cloth_solid, t.other],
            )
        })
        .collect();
    // Cumulative sums: band k lies between cum[k] and cum[k + 1].
    let cum: Vec<(f64, [f64; 6])> = rows
        .iter()
        .map(|(t, v)| {
            let mut c = [0.0; 6];
            for k in 0..5 {
                c[k + 1] = c[k] + v[k];
            }
            (*t, c)
        })
        .collect();
    let xs: Vec<Series> = vec![(String::new(), rows.iter().map(|(t, _)| (*t, 0.0)).collect())];
    let (x0, x1) = x_range(&xs);
    let top = cum.iter().map(|(_, c)| c[5]).fold(0.0f64, f64::max);
    let y1 = if top > 0.0 { 1.05 * top } else { 1.0 };
    let mut chart = ChartBuilder::on(root)
        .caption("Wall time per frame (stacked)", ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, 0.0..y1)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("wall time (s)")
        .draw()?;
    for (k, name) in NAMES.iter().enumerate() {
        let color = COLORS[k];
        let band: Vec<(f64, f64)> = cum
            .iter()
            .map(|(t, c)| (*t, c[k + 1]))
            .chain(cum.iter().rev().map(|(t, c)| (*t, c[k])))
            .collect();
        let upper: Vec<(f64, f64)> = cum.iter().map(|(t, c)| (*t, c[k + 1])).collect();
        if cum.len() >= 2 {
            chart.draw_series(std::iter::once(Polygon::new(band, color.mix(0.6).filled())))?;
        }
        chart
            .draw_series(LineSeries::new(upper, color.stroke_width(1)))?
            .label(*name)
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.mix(0.6).filled())
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}
