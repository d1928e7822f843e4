//! The GarmentCode pattern reader on arbitrary text, and the panel triangulation of whatever
//! it accepts (coarse, 5 cm edges, to keep each input fast).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(pattern) = cloth_mesh::parse_pattern(text) {
        let _ = pattern.build(0.05);
    }
});
