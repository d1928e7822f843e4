//! `cloth batch plan`: every task's scene made, resolved, checked and written.
//!
//! For each task the base scene's TOML *as written* gets the manifest's `frames` and the
//! task's axis values ([`super::keypath`]); the result is loaded with [`Scene::from_toml_str`]
//! against the base scene's directory (so its relative paths become absolute) and built with
//! [`build_simulation`] — the same two steps as `cloth check`. The task file is the resolved
//! scene ([`Scene::to_toml_string`]: every default written out, every path absolute), and it
//! must load back from `DIR/tasks/` into an equal scene. Any failure refuses the whole plan
//! before a file is written, naming the lowest failing task, its values and the key.

use super::estimate::Estimate;
use super::keypath::{KeyPath, display_value};
use super::manifest::Manifest;
use super::{AxisRecord, Plan, TASKS_FILE, TaskRecord, task_output_rel, task_scene_rel};
use crate::cmd::print::outln;
use cloth::sim::{scene::Scene, scene::SceneError, scene::build_simulation};
use rayon::prelude::*;
use std::path::Path;
use std::process::ExitCode;
use toml::{Table, Value};

/// The base scene as written, checked alone first so that its own mistakes point at its own
/// lines.
fn base_document(manifest: &Manifest) -> Result<Table, String> {
    let m = manifest.path.display().to_string();
    let base_scene = Scene::load(&manifest.base).map_err(|e| format!("{m}: base scene: {e}"))?;
    build_simulation(&base_scene).map_err(|e| format!("{m}: base scene: {e}"))?;
    let base_text = std::fs::read_to_string(&manifest.base)
        .map_err(|e| format!("{m}: cannot read {}: {e}", manifest.base.display()))?;
    base_text
        .parse()
        .map_err(|e: toml::de::Error| format!("{m}: base scene: {}", e.message()))
}

/// Every task's scene text and table row, made in parallel; the lowest failing task's error
/// (with the count of the others) refuses them all.
fn make_tasks(
    manifest: &Manifest,
    base_doc: &Table,
    tasks_dir: &Path,
) -> Result<(Vec<String>, Vec<TaskRecord>), String> {
    let base_dir = manifest.base.parent().unwrap_or(Path::new("/"));
    let made: Vec<Result<(String, TaskRecord), String>> = (0..manifest.task_count())
        .into_par_iter()
        .map(|i| make_task(manifest, base_doc, base_dir, tasks_dir, i))
        .collect();
    let failures: Vec<&String> = made.iter().filter_map(|r| r.as_ref().err()).collect();
    if let Some(first) = failures.first() {
        let more = match failures.len() - 1 {
            0 => String::new(),
            1 => " (and 1 more task fails)".into(),
            n => format!(" (and {n} more tasks fail)"),
        };
        let m = manifest.path.display();
        return Err(format!("{m}: {first}{more}; nothing was planned"));
    }
    Ok(made.into_iter().flatten().unzip())
}

/// Whether `out` already holds this very plan (the same task scenes): `Ok(true)` to keep it,
/// an error when it holds a different one, `Ok(false)` when it holds none.
fn existing_plan(out: &Path, plan: &Plan, texts: &[String]) -> Result<bool, String> {
    if !out.join(TASKS_FILE).exists() {
        return Ok(false);
    }
    let old = Plan::read(out)?;
    let same_scenes = old.tasks.len() == plan.tasks.len()
        && texts.iter().enumerate().all(|(i, t)| {
            std::fs::read_to_string(out.join(task_scene_rel(i))).is_ok_and(|o| o == *t)
        });
    if same_scenes {
        return Ok(true);
    }
    Err(format!(
        "{} already holds a different plan ({} tasks); plan into a new directory, or remove it",
        out.display(),
        old.tasks.len()
    ))
}

/// Writes the task scenes, then the table: a directory with tasks.json holds a whole plan.
fn write_plan(out: &Path, plan: &Plan, texts: &[String]) -> Result<(), String> {
    let tasks_dir = out.join("tasks");
    std::fs::create_dir_all(&tasks_dir)
        .map_err(|e| format!("cannot create {}: {e}", tasks_dir.display()))?;
    for (i, text) in texts.iter().enumerate() {
        let path = out.join(task_scene_rel(i));
        cloth::mesh::write_atomic_bytes(&path, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let table = serde_json::to_string_pretty(plan).map_err(|e| e.to_string())?;
    cloth::mesh::write_atomic_bytes(out.join(TASKS_FILE), table.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", out.join(TASKS_FILE).display()))
}

/// Prints what was planned and the estimates.
fn print_summary(out: &Path, plan: &Plan) {
    let total: f64 = plan.tasks.iter().map(|t| t.estimate.seconds).sum();
    let longest = plan
        .tasks
        .iter()
        .map(|t| t.estimate.seconds)
        .fold(0.0, f64::max);
    let disk: f64 = plan.tasks.iter().map(|t| t.estimate.output_mib).sum();
    outln!(
        "planned {} tasks in {} ({} axes, {}); every task passes `cloth check`",
        plan.tasks.len(),
        out.display(),
        plan.axes.len(),
        match plan.combine {
            super::manifest::Combine::Product => "product",
            super::manifest::Combine::Zip => "zip",
        }
    );
    outln!(
        "estimate: {total:.1} core-seconds in all, {longest:.2} s for the longest task, {disk:.1} MiB of frames"
    );
}

/// Plans `manifest` into `out`.
pub fn plan(manifest_path: &Path, out: &Path) -> Result<ExitCode, String> {
    let manifest = Manifest::load(manifest_path)?;
    let base_doc = base_document(&manifest)?;
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let out = std::fs::canonicalize(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let (texts, tasks) = make_tasks(&manifest, &base_doc, &out.join("tasks"))?;
    let plan = Plan {
        manifest: manifest.path.clone(),
        base: manifest.base.clone(),
        combine: manifest.combine,
        axes: manifest
            .axes
            .iter()
            .map(|a| AxisRecord {
                key: a.key.as_str().to_owned(),
                files: a.files.clone(),
                values: a.values.iter().map(json).collect(),
            })
            .collect(),
        tasks,
    };
    if existing_plan(&out, &plan, &texts)? {
        outln!(
            "{}: unchanged plan of {} tasks (runs kept)",
            out.display(),
            plan.tasks.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    write_plan(&out, &plan, &texts)?;
    print_summary(&out, &plan);
    Ok(ExitCode::SUCCESS)
}

/// Makes task `i`: its resolved scene text and its table row, or a one-line error.
fn make_task(
    manifest: &Manifest,
    base_doc: &Table,
    base_dir: &Path,
    tasks_dir: &Path,
    i: usize,
) -> Result<(String, TaskRecord), String> {
    let assignment = manifest.assignment(i);
    let described = assignment
        .iter()
        .map(|(a, v)| format!("{} = {}", a.key.as_str(), display_value(v)))
        .collect::<Vec<_>>()
        .join(", ");
    let fail = |msg: String| {
        if described.is_empty() {
            format!("task {i}: {msg}")
        } else {
            format!("task {i} ({described}): {msg}")
        }
    };
    let mut doc = base_doc.clone();
    if let Some(frames) = manifest.frames {
        let frames = i64::try_from(frames).map_err(|_| fail("`frames` is too large".into()))?;
        KeyPath::parse("run.frames")
            .and_then(|k| k.set(&mut doc, Value::Integer(frames)))
            .map_err(fail)?;
    }
    for (axis, value) in &assignment {
        axis.key
            .set(&mut doc, (*value).clone())
            .map_err(|e| fail(format!("key `{}`: {e}", axis.key.as_str())))?;
    }
    let text = toml::to_string(&doc).map_err(|e| fail(e.to_string()))?;
    let scene = Scene::from_toml_str(&text, base_dir).map_err(|e| fail(one_line(&e)))?;
    let resolved = scene.to_toml_string().map_err(|e| fail(one_line(&e)))?;
    let header = format!(
        "# Task {i} of {}{}\n# Written by `cloth batch plan`: the resolved scene, every default written out.\n\n",
        manifest.path.display(),
        if described.is_empty() {
            String::new()
        } else {
            format!(": {described}")
        }
    );
    let text = header + &resolved;
    // What `cloth run` will read: the task file, from the tasks directory.
    let mut reloaded = Scene::from_toml_str(&text, tasks_dir)
        .map_err(|e| fail(format!("the resolved scene does not load back: {e}")))?;
    reloaded.base_dir = scene.base_dir.clone();
    if reloaded != scene {
        return Err(fail(
            "the resolved scene loads back different from the original (a path that does not survive being written?)".into(),
        ));
    }
    let sim = build_simulation(&reloaded).map_err(|e| fail(e.to_string()))?;
    let record = TaskRecord {
        index: i,
        name: manifest.label(i),
        values: assignment.iter().map(|(_, v)| json(v)).collect(),
        scene: task_scene_rel(i),
        output: task_output_rel(i),
        estimate: Estimate::of(&reloaded, &sim),
    };
    Ok((text, record))
}

/// A scene error in one line without its line and column (which would point into generated
/// text, not into a file the user wrote).
fn one_line(e: &SceneError) -> String {
    match e {
        SceneError::Parse {
            key: Some(k),
            message,
            ..
        }
        | SceneError::Invalid {
            key: k, message, ..
        } => format!("scene key `{k}`: {}", flat(message)),
        SceneError::Parse {
            key: None, message, ..
        } => format!("scene: {}", flat(message)),
        SceneError::MissingFile { key, path, .. } => {
            format!("scene key `{key}`: file {} not found", path.display())
        }
        other => flat(&other.to_string()),
    }
}

fn flat(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn json(v: &Value) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}
