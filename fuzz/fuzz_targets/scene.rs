//! `cloth check` on arbitrary scene text: load, then build the whole simulation within a
//! 0.1 GB memory budget. Errors are fine; panics, hangs and large allocations are findings.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Relative paths resolve against scenes/, so seeds that name meshes find them.
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenes");
    if let Ok(mut scene) = cloth_sim::Scene::from_toml_str(text, &base) {
        scene.run.max_memory_gb = Some(0.1);
        let _ = cloth_sim::build_simulation(&scene);
    }
});
