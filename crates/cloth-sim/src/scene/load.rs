//! Reading a scene: the text is parsed as written ([`super::raw`]), then validated and resolved
//! into a [`Scene`] ([`super::validate`]).

use std::path::Path;

use toml::de::DeTable;

use super::error::SceneError;
use super::raw::RawScene;
use super::validate::Ctx;
use super::{MAX_SCENE_BYTES, Scene};

impl Scene {
    /// Parses and validates scene text; relative file paths are resolved against
    /// `base_dir` (and must exist).
    ///
    /// # Example
    ///
    /// ```
    /// use std::path::Path;
    /// use cloth_sim::scene::Scene;
    ///
    /// let scene = Scene::from_toml_str(
    ///     r#"
    ///     [cloth]
    ///     mesh = { kind = "grid", nx = 11, ny = 11, width = 0.5, height = 0.5 }
    ///     position = [0, 1, 0]
    ///     material = { preset = "silk", bend = 1e-6 }
    ///     [[pin]]
    ///     vertices = [0, 10]
    ///     "#,
    ///     Path::new("."),
    /// )?;
    /// assert_eq!(scene.cloths[0].mesh.vertex_count(), Some(121));
    /// assert_eq!(scene.cloths[0].material.bend, 1e-6); // overrides the silk preset
    /// assert_eq!(scene.run.fps, 30.0); // default
    ///
    /// // Mistakes name the key and its place in the text.
    /// let text = "[cloth]\nmesh = { kind = \"disc\", radius = -1, resolution = 4 }\n";
    /// let err = Scene::from_toml_str(text, Path::new(".")).unwrap_err();
    /// assert_eq!(err.key(), Some("cloth.mesh.radius"));
    /// assert_eq!(err.line_column(), Some((2, 34)));
    /// # Ok::<(), cloth_sim::scene::SceneError>(())
    /// ```
    pub fn from_toml_str(text: &str, base_dir: impl AsRef<Path>) -> Result<Scene, SceneError> {
        let base_dir = base_dir.as_ref();
        let doc = DeTable::parse(text).ok();
        let ctx = Ctx {
            text,
            doc: doc.as_ref(),
            base_dir,
        };
        let raw: RawScene = toml::from_str(text).map_err(|e| ctx.parse_error(&e))?;
        ctx.resolve(raw)
    }

    /// Reads the scene file at `path` and parses it with [`Scene::from_toml_str`], resolving
    /// relative paths against the file's directory.
    pub fn load(path: impl AsRef<Path>) -> Result<Scene, SceneError> {
        let path = path.as_ref();
        let text = cloth_mesh::read_to_string_limited(path, MAX_SCENE_BYTES).map_err(|source| {
            SceneError::Io {
                path: path.to_path_buf(),
                source,
            }
        })?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let dir = path.parent().unwrap_or(Path::new(""));
        Scene::from_toml_str(text, dir)
    }
}
