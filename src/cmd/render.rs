//! `cloth render` and `cloth plot`: looking at a run's output directory.

use crate::cmd::print::outln;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn plot(dir: &Path, out: Option<PathBuf>) -> Result<ExitCode, String> {
    let out = out.unwrap_or_else(|| dir.join("plots"));
    let files = cloth::view::plot(dir, &out).map_err(|e| e.to_string())?;
    for f in files {
        outln!("{}", f.display());
    }
    Ok(ExitCode::SUCCESS)
}

pub fn render(
    dir: &Path,
    out: Option<PathBuf>,
    view: &str,
    size: &str,
    every: usize,
) -> Result<ExitCode, String> {
    let view: cloth::view::View = view
        .parse()
        .map_err(|e: cloth::view::ViewError| e.to_string())?;
    let (w, h) = size
        .split_once(['x', 'X'])
        .and_then(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)))
        .ok_or_else(|| format!("--size must look like 800x600, got `{size}`"))?;
    let out = out.unwrap_or_else(|| dir.join(cloth::sim::output::PREVIEW_FILE));
    let opts = cloth::view::RenderOptions {
        view,
        width: w,
        height: h,
        every,
    };
    let summary = cloth::view::render(dir, &out, &opts).map_err(|e| e.to_string())?;
    outln!("rendered {} images to {}", summary.images, out.display());
    Ok(ExitCode::SUCCESS)
}
