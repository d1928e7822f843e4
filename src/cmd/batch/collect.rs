//! `cloth batch collect`: one row per task from its stats.json, written as `DIR/results.csv`
//! and `DIR/results.json`; `DIR/summary.txt`, the same rows without wall times or paths (two
//! runs of one plan on any machines must give the same file); and `DIR/contact_sheet.png`,
//! the last frame of every task in a grid, under one camera.

use super::state::{TaskState, states};
use super::{FNV_START, Plan, fnv1a};
use crate::cmd::print::outln;
use cloth::sim::{
    output::STATS_FILE, output::frame_number, output::frame_path, stats::RunReport, stats::Totals,
};
use cloth::view::{Aabb, Animation, Camera, Image, Style, View, render_frame};
use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;
use std::process::ExitCode;

/// One task's results: the run's own [`Totals`] (from its stats.json) with what only the
/// batch knows (the task, its state, the plan's estimate, the frames' digest). In JSON the
/// totals' fields sit beside the others.
#[derive(Debug, Clone, Serialize)]
struct Row {
    index: usize,
    name: String,
    /// Axis values, in axis order (CSV: one column per key).
    values: Vec<serde_json::Value>,
    state: &'static str,
    frames_planned: usize,
    frames_done: usize,
    vertices: usize,
    #[serde(flatten)]
    totals: Totals,
    cg_not_converged: usize,
    /// Wall time of the run (s), from its stats.json: `seconds_per_frame * frames`.
    seconds: f64,
    /// The plan's estimate (s).
    estimate_seconds: f64,
    error: Option<String>,
    /// FNV-1a 64 of the OBJ frames present, in frame order (hex).
    frames_digest: String,
}

/// `cloth batch collect DIR`.
pub fn collect(dir: &Path, tile: &str, sheet_limit: usize) -> Result<ExitCode, String> {
    let plan = Plan::read(dir)?;
    let (tw, th) = tile
        .split_once('x')
        .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)))
        .filter(|&(w, h)| (8..=2048).contains(&w) && (8..=2048).contains(&h))
        .ok_or_else(|| format!("--tile {tile}: expected WIDTHxHEIGHT, 8 to 2048 pixels each"))?;
    let states = states(dir, &plan);
    let rows: Vec<Row> = plan
        .tasks
        .par_iter()
        .zip(&states)
        .map(|(t, s)| row(dir, t, s))
        .collect();

    let json = serde_json::to_string_pretty(&serde_json::json!({
        "manifest": plan.manifest,
        "keys": plan.axes.iter().map(|a| a.key.clone()).collect::<Vec<_>>(),
        "tasks": rows,
    }))
    .map_err(|e| e.to_string())?;
    write(dir, "results.json", json.as_bytes())?;
    write(dir, "results.csv", csv(&plan, &rows).as_bytes())?;
    write(dir, "summary.txt", summary(&plan, &rows).as_bytes())?;
    let sheet = contact_sheet(dir, &plan, &states, (tw, th), sheet_limit)?;

    let done = rows.iter().filter(|r| r.state == "done").count();
    let seconds: f64 = rows.iter().map(|r| r.seconds).sum();
    let steps: usize = rows.iter().map(|r| r.totals.steps).sum();
    outln!(
        "{} tasks: {done} done, {} not done; {:.1} s of runs in all ({:.2} s per task), {steps} steps",
        rows.len(),
        rows.len() - done,
        seconds,
        seconds / rows.len().max(1) as f64
    );
    outln!(
        "wrote {}, {}, {} and {}",
        dir.join("results.csv").display(),
        dir.join("results.json").display(),
        dir.join("summary.txt").display(),
        sheet
    );
    Ok(ExitCode::SUCCESS)
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), String> {
    let path = dir.join(name);
    cloth::mesh::write_atomic_bytes(&path, bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn row(dir: &Path, t: &super::TaskRecord, state: &TaskState) -> Row {
    let out = dir.join(&t.output);
    let report = RunReport::read(out.join(STATS_FILE)).ok();
    let mut digest = FNV_START;
    for k in 0..=t.estimate.frames {
        match std::fs::read(frame_path(&out, k)) {
            Ok(bytes) => digest = fnv1a(&bytes, digest),
            Err(_) => break,
        }
    }
    let r = report.unwrap_or_default();
    let tot = &r.totals;
    Row {
        index: t.index,
        name: t.name.clone(),
        values: t.values.clone(),
        state: state.name(),
        frames_planned: t.estimate.frames,
        frames_done: r.frames.len(),
        vertices: t.estimate.vertices,
        seconds: tot.seconds_per_frame * tot.frames as f64,
        totals: r.totals.clone(),
        cg_not_converged: r.frames.iter().map(|f| f.cg_not_converged).sum(),
        estimate_seconds: t.estimate.seconds,
        error: r.error.clone(),
        frames_digest: format!("{digest:016x}"),
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

fn value_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn csv(plan: &Plan, rows: &[Row]) -> String {
    let mut head = vec!["index".to_string(), "name".into()];
    head.extend(plan.axes.iter().map(|a| a.key.clone()));
    head.extend(
        [
            "state",
            "frames_planned",
            "frames_done",
            "vertices",
            "steps",
            "rejected_steps",
            "cg_iterations",
            "cg_not_converged",
            "h_min",
            "h_max",
            "max_stretch",
            "seconds",
            "estimate_seconds",
            "error",
            "frames_digest",
        ]
        .map(String::from),
    );
    let mut out = head
        .iter()
        .map(|h| csv_field(h))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for r in rows {
        let mut f = vec![r.index.to_string(), r.name.clone()];
        f.extend(r.values.iter().map(value_text));
        f.extend([
            r.state.to_string(),
            r.frames_planned.to_string(),
            r.frames_done.to_string(),
            r.vertices.to_string(),
            r.totals.steps.to_string(),
            r.totals.rejected_steps.to_string(),
            r.totals.cg_iterations.to_string(),
            r.cg_not_converged.to_string(),
            r.totals.h_min.to_string(),
            r.totals.h_max.to_string(),
            r.totals.max_stretch.to_string(),
            format!("{:.3}", r.seconds),
            format!("{:.3}", r.estimate_seconds),
            r.error.clone().unwrap_or_default(),
            r.frames_digest.clone(),
        ]);
        out.push_str(&f.iter().map(|x| csv_field(x)).collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    out
}

/// The deterministic part of every row: equal for two runs of the same plan anywhere.
fn summary(plan: &Plan, rows: &[Row]) -> String {
    let mut out = format!(
        "# cloth batch summary: {} tasks; no wall times, so two runs of one plan give the same file\n",
        plan.tasks.len()
    );
    for r in rows {
        out.push_str(&format!(
            "{:06} {} frames={}/{} steps={} rejected={} cg={} cg_not_converged={} h_min={} h_max={} max_stretch={} frames_digest={}{}\n",
            r.index,
            r.state,
            r.frames_done,
            r.frames_planned,
            r.totals.steps,
            r.totals.rejected_steps,
            r.totals.cg_iterations,
            r.cg_not_converged,
            r.totals.h_min,
            r.totals.h_max,
            r.totals.max_stretch,
            r.frames_digest,
            r.error
                .as_ref()
                .map(|e| format!(" error={}", e.replace('\n', " ")))
                .unwrap_or_default()
        ));
    }
    out
}

/// The last frame of each task as an animation of one frame, or `None` if it has no frame.
fn last_frame(out: &Path) -> Option<Animation> {
    let last = std::fs::read_dir(out)
        .ok()?
        .filter_map(|e| frame_number(e.ok()?.file_name().to_str()?))
        .max()?;
    let obj = cloth::mesh::read_obj_data(frame_path(out, last)).ok()?;
    Some(Animation {
        frame_numbers: vec![last],
        positions: vec![obj.positions.iter().map(|p| [p.x, p.y, p.z]).collect()],
        triangles: obj.triangles,
        uvs: Vec::new(),
        triangle_uvs: None,
        cloths: Vec::new(),
        colliders: cloth::view::read_colliders(out).unwrap_or_default(),
        fps: cloth::view::read_fps(out).unwrap_or(cloth::sim::stats::DEFAULT_FPS),
    })
}

/// Writes `DIR/contact_sheet.png`; returns a description of what it holds.
fn contact_sheet(
    dir: &Path,
    plan: &Plan,
    states: &[TaskState],
    (tw, th): (u32, u32),
    limit: usize,
) -> Result<String, String> {
    let n = plan.tasks.len().min(limit);
    let path = dir.join("contact_sheet.png");
    if n == 0 {
        return Ok("no contact sheet (no tasks)".into());
    }
    let anims: Vec<Option<Animation>> = plan.tasks[..n]
        .par_iter()
        .map(|t| last_frame(&dir.join(&t.output)))
        .collect();
    // One camera for every tile, framed on the cloth (colliders such as floors would shrink
    // it to a speck), so that sizes and positions compare across the sweep.
    let mut bounds = Aabb::empty();
    for a in anims.iter().flatten() {
        for p in &a.positions[0] {
            bounds.grow(*p);
        }
    }
    let camera = Camera::framing(View::Iso, &bounds, tw, th);
    let style = Style::default();
    // Columns: the last axis of a product sweep (a wedge reads as a table), else a square.
    let last_axis = plan.axes.last().map_or(0, |a| a.values.len());
    let cols = if plan.combine == super::manifest::Combine::Product
        && plan.axes.len() >= 2
        && (2..=16).contains(&last_axis)
    {
        last_axis
    } else {
        (n as f64).sqrt().ceil() as usize
    };
    let rows = n.div_ceil(cols);
    let (gap, strip) = (2u32, 4u32);
    let cell_w = tw + gap;
    let cell_h = th + strip + gap;
    let mut sheet = Image::filled(
        cols as u32 * cell_w + gap,
        rows as u32 * cell_h + gap,
        [60, 60, 60],
    );
    let tiles: Vec<Image> = anims
        .par_iter()
        .map(|a| match a {
            Some(a) => render_frame(a, 0, &camera, &style, &[]),
            None => Image::filled(tw, th, [200, 200, 200]),
        })
        .collect();
    for (i, tile) in tiles.iter().enumerate() {
        let x0 = gap + (i % cols) as u32 * cell_w;
        let y0 = gap + (i / cols) as u32 * cell_h;
        blit(&mut sheet, tile, x0, y0);
        let color = match states[i] {
            TaskState::Done => [60, 170, 80],
            TaskState::Failed(_) => [210, 50, 40],
            TaskState::Running => [60, 120, 220],
            TaskState::Interrupted => [230, 160, 30],
            TaskState::Pending => [150, 150, 150],
        };
        blit(&mut sheet, &Image::filled(tw, strip, color), x0, y0 + th);
    }
    let png = cloth::view::encode_png(&sheet).map_err(|e| e.to_string())?;
    write(dir, "contact_sheet.png", &png)?;
    Ok(format!(
        "{} ({n} tasks, {cols} columns; strip: green done, red failed, orange interrupted, grey pending)",
        path.display()
    ))
}

fn blit(dst: &mut Image, src: &Image, x0: u32, y0: u32) {
    for y in 0..src.height {
        let dy = y0 + y;
        if dy >= dst.height {
            break;
        }
        let w = src.width.min(dst.width.saturating_sub(x0)) as usize;
        let s = 3 * (y * src.width) as usize;
        let d = 3 * (dy * dst.width + x0) as usize;
        dst.rgb[d..d + 3 * w].copy_from_slice(&src.rgb[s..s + 3 * w]);
    }
}
