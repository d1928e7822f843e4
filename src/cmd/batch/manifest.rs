//! `batch.toml`: a base scene and the axes swept over it, expanded into task assignments.
//!
//! ```toml
//! base = "scene.toml"          # relative to this file
//! combine = "product"          # or "zip" (default product)
//! frames = 10                  # optional: run.frames of every task
//! name = "{cloth.material}-{solver.h_max}"  # optional task label ({index} and axis keys)
//!
//! [[axis]]
//! key = "cloth.material"       # a scene key path
//! values = ["cotton", "silk"]  # TOML values, as in a scene file
//!
//! [[axis]]
//! key = "collider[0].path"
//! files = "bodies/*.obj"       # every matching file, sorted; relative to this file
//! ```
//!
//! `product` numbers tasks like nested loops in the order the axes are written (the first axis
//! varies slowest); `zip` takes the i-th value of every axis and needs axes of equal length.
//! String values of file keys (`*.path`, `*.frames`) are relative to the manifest.

use super::glob::glob;
use super::keypath::{KeyPath, display_value};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Value;

/// Most tasks a plan may hold: task files are numbered with six digits.
pub const MAX_TASKS: usize = 1_000_000;

/// How the axes combine into tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Combine {
    /// Every combination (nested loops, first axis slowest).
    Product,
    /// The i-th value of every axis (equal lengths).
    Zip,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    base: String,
    combine: Option<Combine>,
    frames: Option<usize>,
    name: Option<String>,
    #[serde(default)]
    axis: Vec<RawAxis>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAxis {
    key: String,
    values: Option<Vec<Value>>,
    files: Option<String>,
}

/// One swept key and its values, in order.
#[derive(Debug, Clone)]
pub struct Axis {
    /// The scene key path.
    pub key: KeyPath,
    /// The values (file axes: absolute paths as strings).
    pub values: Vec<Value>,
    /// The pattern of a `files` axis.
    pub files: Option<String>,
}

/// A validated manifest.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The manifest file (absolute).
    pub path: PathBuf,
    /// The base scene (absolute).
    pub base: PathBuf,
    /// How axes combine.
    pub combine: Combine,
    /// `run.frames` of every task, when given.
    pub frames: Option<usize>,
    /// Label template.
    pub name: Option<String>,
    /// The axes in file order.
    pub axes: Vec<Axis>,
}

/// Parses the manifest text; a syntax error names its line and column.
fn parse_raw(path: &Path, text: &str) -> Result<RawManifest, String> {
    toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| {
                let before = &text[..s.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                format!(" (line {line}, column {col})")
            })
            .unwrap_or_default();
        format!("{}{at}: {}", path.display(), e.message().trim())
    })
}

/// An error naming the manifest and one of its keys.
struct KeyError<'a>(&'a Path);

impl KeyError<'_> {
    fn at(&self, key: &str, msg: String) -> String {
        format!("{}: `{key}` {msg}", self.0.display())
    }
}

/// The values of axis `i` on `key`: `values` as written (the strings of a file key made
/// absolute against `dir`), or the files `files` matches, sorted.
fn axis_values(
    (i, key): (usize, &KeyPath),
    raw: (Option<Vec<Value>>, &Option<String>),
    dir: &Path,
    err: &KeyError,
) -> Result<Vec<Value>, String> {
    let at = |k: &str| format!("axis[{i}].{k}");
    match raw {
        (Some(_), Some(_)) | (None, None) => Err(err.at(
            &format!("axis[{i}]"),
            format!(
                "(`{}`) needs exactly one of `values` and `files`",
                key.as_str()
            ),
        )),
        (Some(values), None) => {
            if values.is_empty() {
                return Err(err.at(
                    &at("values"),
                    format!("is empty: the axis on `{}` has no values", key.as_str()),
                ));
            }
            if !key.is_file_key() {
                return Ok(values);
            }
            values
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => utf8(&dir.join(s)).map(Value::String),
                    other => Ok(other),
                })
                .collect::<Result<_, _>>()
                .map_err(|m| err.at(&at("values"), m))
        }
        (None, Some(pattern)) => {
            let files = glob(dir, pattern).map_err(|m| err.at(&at("files"), m))?;
            if files.is_empty() {
                return Err(err.at(
                    &at("files"),
                    format!(
                        "`{pattern}` matches no file (relative to {}), so the axis on `{}` is empty",
                        dir.display(),
                        key.as_str()
                    ),
                ));
            }
            files
                .iter()
                .map(|f| utf8(f).map(Value::String))
                .collect::<Result<_, _>>()
                .map_err(|m| err.at(&at("files"), m))
        }
    }
}

/// The axes of the manifest in file order, checked: each key valid and swept once, never
/// `run.frames` when the manifest sets `frames`, with its values.
fn axes(
    raw: Vec<RawAxis>,
    frames: Option<usize>,
    dir: &Path,
    err: &KeyError,
) -> Result<Vec<Axis>, String> {
    let mut axes: Vec<Axis> = Vec::with_capacity(raw.len());
    for (i, a) in raw.into_iter().enumerate() {
        let at = |k: &str| format!("axis[{i}].{k}");
        let key = KeyPath::parse(&a.key).map_err(|m| err.at(&at("key"), m))?;
        if let Some(j) = axes.iter().position(|b| b.key == key) {
            return Err(err.at(
                &at("key"),
                format!("`{}` is already swept by axis[{j}]", key.as_str()),
            ));
        }
        if key.as_str() == "run.frames" && frames.is_some() {
            return Err(err.at(
                &at("key"),
                "`run.frames` is swept, but the manifest also sets `frames`".into(),
            ));
        }
        let values = axis_values((i, &key), (a.values, &a.files), dir, err)?;
        axes.push(Axis {
            key,
            values,
            files: a.files,
        });
    }
    Ok(axes)
}

/// Zipped axes must have the same number of values.
fn check_zip(combine: Combine, axes: &[Axis], err: &KeyError) -> Result<(), String> {
    if combine == Combine::Zip
        && let Some(first) = axes.first()
        && let Some((j, other)) = axes
            .iter()
            .enumerate()
            .find(|(_, a)| a.values.len() != first.values.len())
    {
        return Err(err.at(
            "combine",
            format!(
                "is \"zip\", which needs axes of equal length: axis[0] (`{}`) has {}, axis[{j}] (`{}`) has {}",
                first.key.as_str(),
                first.values.len(),
                other.key.as_str(),
                other.values.len()
            ),
        ));
    }
    Ok(())
}

impl Manifest {
    /// Reads and checks the manifest; errors are one line naming the manifest key.
    pub fn load(path: &Path) -> Result<Manifest, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read manifest {}: {e}", path.display()))?;
        let path = std::fs::canonicalize(path)
            .map_err(|e| format!("cannot resolve {}: {e}", path.display()))?;
        let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        let raw = parse_raw(&path, &text)?;
        let err = KeyError(&path);
        let base = dir.join(&raw.base);
        if !base.is_file() {
            return Err(err.at(
                "base",
                format!("names {}, which is not a file", base.display()),
            ));
        }
        let base = std::fs::canonicalize(&base).map_err(|e| err.at("base", e.to_string()))?;
        if raw.frames == Some(0) {
            return Err(err.at("frames", "must be at least 1".into()));
        }
        let axes = axes(raw.axis, raw.frames, &dir, &err)?;
        let combine = raw.combine.unwrap_or(Combine::Product);
        check_zip(combine, &axes, &err)?;
        let manifest = Manifest {
            path: path.clone(),
            base,
            combine,
            frames: raw.frames,
            name: raw.name,
            axes,
        };
        if let Some(name) = &manifest.name {
            manifest.check_name(name).map_err(|m| err.at("name", m))?;
        }
        let count = manifest.task_count();
        if count > MAX_TASKS {
            return Err(err.at(
                "axis",
                format!("make {count} tasks, more than the {MAX_TASKS} a plan may hold"),
            ));
        }
        Ok(manifest)
    }

    /// Number of tasks.
    pub fn task_count(&self) -> usize {
        match self.combine {
            Combine::Product => self
                .axes
                .iter()
                .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
                .unwrap_or(usize::MAX),
            Combine::Zip => self.axes.first().map_or(1, |a| a.values.len()),
        }
    }

    /// The value index on each axis for task `index` (< [`Manifest::task_count`]).
    pub fn choice(&self, index: usize) -> Vec<usize> {
        match self.combine {
            Combine::Zip => vec![index; self.axes.len()],
            Combine::Product => {
                let mut rest = index;
                let mut out = vec![0; self.axes.len()];
                for (slot, a) in out.iter_mut().zip(&self.axes).rev() {
                    *slot = rest % a.values.len();
                    rest /= a.values.len();
                }
                out
            }
        }
    }

    /// The `(key, value)` pairs of task `index`, in axis order.
    pub fn assignment(&self, index: usize) -> Vec<(&Axis, &Value)> {
        self.choice(index)
            .into_iter()
            .zip(&self.axes)
            .map(|(c, a)| (a, &a.values[c]))
            .collect()
    }

    /// The task's label: the `name` template filled in, or its six-digit index.
    pub fn label(&self, index: usize) -> String {
        let Some(template) = &self.name else {
            return format!("{index:06}");
        };
        let assignment = self.assignment(index);
        let mut out = String::new();
        let mut rest = template.as_str();
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let close = rest[open..].find('}').map_or(rest.len(), |c| open + c);
            let field = &rest[open + 1..close.min(rest.len())];
            if field == "index" {
                out.push_str(&format!("{index:06}"));
            } else if let Some((a, v)) = assignment.iter().find(|(a, _)| a.key.as_str() == field) {
                out.push_str(&value_label(a, v));
            }
            rest = rest.get(close + 1..).unwrap_or("");
        }
        out.push_str(rest);
        out.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-+".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    }

    fn check_name(&self, template: &str) -> Result<(), String> {
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            let close = rest[open..]
                .find('}')
                .map(|c| open + c)
                .ok_or_else(|| format!("`{template}`: `{{` is not closed by `}}`"))?;
            let field = &rest[open + 1..close];
            if field != "index" && !self.axes.iter().any(|a| a.key.as_str() == field) {
                return Err(format!(
                    "`{template}`: `{{{field}}}` is neither `{{index}}` nor a swept key"
                ));
            }
            rest = &rest[close + 1..];
        }
        Ok(())
    }
}

/// A value as it reads in a label: file axes by file stem.
fn value_label(axis: &Axis, v: &Value) -> String {
    match v {
        Value::String(s) if axis.files.is_some() || axis.key.is_file_key() => Path::new(s)
            .file_stem()
            .map_or_else(|| s.clone(), |n| n.to_string_lossy().into_owned()),
        other => display_value(other),
    }
}

fn utf8(p: &Path) -> Result<String, String> {
    p.to_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("path {} is not valid UTF-8", p.display()))
}
