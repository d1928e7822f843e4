//! The error of reading a scene: the key path and, when the key is in the text, its line and
//! column.

use std::path::PathBuf;

/// Error from loading or validating a scene file.
///
/// Every variant that comes from the file's content names the key path
/// (`cloth.material.stretch`, `pin[1].region.min`, `collider[0].radius`) and gives the
/// 1-based line and column in the TOML text when the key is present there.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// The text is not valid TOML, a key is unknown, a value has the wrong type or a
    /// required key is missing (reported by the TOML reader).
    #[error("scene{}{}: {message}", fmt_key(.key), fmt_location(*.line, *.column))]
    Parse {
        /// Key path of the offending entry, when known.
        key: Option<String>,
        /// What is wrong.
        message: String,
        /// 1-based line in the scene text, when known.
        line: Option<usize>,
        /// 1-based column (in characters) in the scene text, when known.
        column: Option<usize>,
    },
    /// A value is well-typed but not acceptable (out of range, non-finite, inconsistent).
    #[error("scene key `{key}`{}: {message}", fmt_location(*.line, *.column))]
    Invalid {
        /// Key path of the offending entry.
        key: String,
        /// What is wrong and what is accepted.
        message: String,
        /// 1-based line in the scene text, when the key is present there.
        line: Option<usize>,
        /// 1-based column in the scene text, when the key is present there.
        column: Option<usize>,
    },
    /// A file named by the scene does not exist or is not a regular file.
    #[error("scene key `{key}`{}: file {} not found or not a regular file", fmt_location(*.line, *.column), cloth_mesh::sanitize_message(&.path.display().to_string()))]
    MissingFile {
        /// Key path of the entry naming the file.
        key: String,
        /// The resolved path that was looked for.
        path: PathBuf,
        /// 1-based line in the scene text, when known.
        line: Option<usize>,
        /// 1-based column in the scene text, when known.
        column: Option<usize>,
    },
    /// The scene file itself could not be read.
    #[error("cannot read scene file {}: {source}", .path.display())]
    Io {
        /// The path that was read.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The scene could not be written as TOML (only possible for non-UTF-8 paths).
    #[error("cannot write scene as TOML: {message}")]
    Serialize {
        /// What the TOML writer reported.
        message: String,
    },
}

fn fmt_key(key: &Option<String>) -> String {
    match key {
        Some(k) => format!(" key `{k}`"),
        None => String::new(),
    }
}

fn fmt_location(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(" (line {l}, column {c})"),
        (Some(l), None) => format!(" (line {l})"),
        _ => String::new(),
    }
}

impl SceneError {
    /// Key path of the offending entry (`None` for I/O errors and syntax errors that are not
    /// inside a key).
    pub fn key(&self) -> Option<&str> {
        match self {
            SceneError::Parse { key, .. } => key.as_deref(),
            SceneError::Invalid { key, .. } | SceneError::MissingFile { key, .. } => Some(key),
            SceneError::Io { .. } | SceneError::Serialize { .. } => None,
        }
    }

    /// 1-based `(line, column)` in the scene text, when known.
    pub fn line_column(&self) -> Option<(usize, usize)> {
        match self {
            SceneError::Parse { line, column, .. }
            | SceneError::Invalid { line, column, .. }
            | SceneError::MissingFile { line, column, .. } => line.zip(*column),
            SceneError::Io { .. } | SceneError::Serialize { .. } => None,
        }
    }
}
