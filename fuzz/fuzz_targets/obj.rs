//! The OBJ reader on arbitrary bytes: as a mesh with UV rest shape and as raw data.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = cloth_mesh::parse_obj_data(&text);
    let _ = cloth_mesh::parse_obj(&text, 1.0);
});
