//! The crate's error type.

use cloth_mesh::MeshError;
use cloth_sim::error::SimError;
use std::path::PathBuf;

/// Everything that can go wrong while reading a run's output directory or writing previews.
///
/// Messages name the offending file, line, frame, triangle or collider.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// The directory holds no `frame_NNNN.obj` file and no `animation.usda`.
    #[error("no frame_NNNN.obj files and no animation.usda in {}", dir.display())]
    NoFrames {
        /// The directory that was searched.
        dir: PathBuf,
    },
    /// An OBJ frame could not be parsed (cloth-mesh's reader; the message names the line).
    #[error("{}: {source}", path.display())]
    Obj {
        /// The frame file.
        path: PathBuf,
        /// The reader's error.
        #[source]
        source: Box<MeshError>,
    },
    /// `stats.json` could not be read as a [`cloth_sim::stats::RunReport`] (the message names the
    /// file and, for malformed JSON, the line).
    #[error("run statistics: {source}")]
    Stats {
        /// The statistics file.
        path: PathBuf,
        /// The reader's error.
        #[source]
        source: Box<SimError>,
    },
    /// The frame rate of a run is not a positive finite number.
    #[error("{}: fps {fps} is not a positive finite number", path.display())]
    BadFps {
        /// The file that gave it.
        path: PathBuf,
        /// The value found (frames per second).
        fps: f64,
    },
    /// A frame has a different number of vertices than the first frame.
    #[error("frame {frame} has {found} vertices, but the first frame has {expected}")]
    VertexCountMismatch {
        /// The frame number (from the file name).
        frame: usize,
        /// Vertex count of the first frame.
        expected: usize,
        /// Vertex count of this frame.
        found: usize,
    },
    /// A frame has a different number of triangles than the first frame.
    #[error("frame {frame} has {found} triangles, but the first frame has {expected}")]
    TriangleCountMismatch {
        /// The frame number (from the file name).
        frame: usize,
        /// Triangle count of the first frame.
        expected: usize,
        /// Triangle count of this frame.
        found: usize,
    },
    /// A triangle of a frame has other vertices than the same triangle of the first frame.
    #[error(
        "frame {frame}: triangle {triangle} has vertices {found:?}, but {expected:?} in the first frame (0-based)"
    )]
    TriangleMismatch {
        /// The frame number (from the file name).
        frame: usize,
        /// The triangle index (0-based, after fan triangulation of polygons).
        triangle: usize,
        /// Its vertices in the first frame (0-based).
        expected: [usize; 3],
        /// Its vertices in this frame (0-based).
        found: [usize; 3],
    },
    /// The cloths (`o` groups) of an OBJ frame cannot be told apart, or differ from those of
    /// the first frame.
    #[error("{}: {message}", path.display())]
    Parts {
        /// The frame file.
        path: PathBuf,
        /// What is wrong (names the cloths).
        message: String,
    },
    /// A text file (`.usda` or `colliders.json`) could not be parsed.
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number (0 when unknown).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// An unknown view name was given.
    #[error("unknown view {0:?}: expected one of front, side, top, iso")]
    BadView(String),
    /// A render option is out of range.
    #[error("invalid render option `{name}`: {message}")]
    BadOption {
        /// The option name (`width`, `height`, `every`).
        name: &'static str,
        /// Why it is invalid.
        message: String,
    },
    /// A collider triangle refers to a vertex the collider does not have.
    #[error(
        "collider {collider:?}: triangle {triangle} refers to vertex {vertex}, but the collider has {count} vertices"
    )]
    ColliderTriangle {
        /// Collider name.
        collider: String,
        /// Triangle index (0-based).
        triangle: usize,
        /// The bad vertex index (0-based).
        vertex: usize,
        /// Number of vertices of the collider.
        count: usize,
    },
    /// A deforming collider frame has the wrong number of vertices.
    #[error("collider {collider:?}: frame {frame} has {found} vertices, expected {expected}")]
    ColliderVertexCount {
        /// Collider name.
        collider: String,
        /// Frame index in the collider's `frames` list.
        frame: usize,
        /// Number of vertices of the collider's rest mesh.
        expected: usize,
        /// Number of vertices given for this frame.
        found: usize,
    },
    /// A collider value is not a finite number.
    #[error("collider {collider:?}: frame {frame}: {what} is not finite")]
    ColliderNotFinite {
        /// Collider name.
        collider: String,
        /// Frame index in the collider's `frames` list.
        frame: usize,
        /// Which value (`matrix` or `vertex N`).
        what: String,
    },
    /// The render output is neither a `.gif` file nor a directory for PNG images.
    #[error(
        "cannot render to {}: unknown extension `.{extension}`; expected a .gif file, or a directory (a path without extension) for PNG images",
        path.display()
    )]
    UnknownOutput {
        /// The output path given.
        path: PathBuf,
        /// Its extension.
        extension: String,
    },
    /// Encoding an image or plot failed.
    #[error("{}: {message}", path.display())]
    Encode {
        /// The file being written.
        path: PathBuf,
        /// The encoder's message.
        message: String,
    },
}

impl ViewError {
    /// Wraps an I/O error with the path it concerns.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ViewError::Io {
            path: path.into(),
            source,
        }
    }

    /// Wraps an OBJ reader error with the frame file it concerns (I/O errors become
    /// [`ViewError::Io`]).
    pub(crate) fn obj(path: impl Into<PathBuf>, source: MeshError) -> Self {
        match source {
            MeshError::Io { path, source } => ViewError::Io { path, source },
            source => ViewError::Obj {
                path: path.into(),
                source: Box::new(source),
            },
        }
    }

    /// Builds an encoder error for `path`.
    pub(crate) fn encode(path: impl Into<PathBuf>, message: impl std::fmt::Display) -> Self {
        ViewError::Encode {
            path: path.into(),
            message: message.to_string(),
        }
    }
}
