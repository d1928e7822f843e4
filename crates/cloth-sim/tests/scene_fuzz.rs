//! The smoke fuzz of `cloth check` that runs on every submission: every scene in `scenes/`,
//! damaged at random (spans cut, text inserted, numbers replaced by extreme values), either
//! fails to load with a one-line error or builds a whole simulation, within a memory budget of
//! 0.1 GB, or is refused by that budget with its figures. Never a panic. The coverage-guided
//! version of the same harness is `fuzz/fuzz_targets/scene.rs` (see `fuzz/README.md`).

use cloth_sim::prelude::*;
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn scenes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes")
}

fn scenes() -> Vec<String> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(scenes_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

const NUMBERS: [&str; 14] = [
    "0", "-1", "1e-300", "1e300", "-1e300", "1e30", "3e9", "100000", "4000", "nan", "inf", "0.0",
    "-0.5", "7",
];

fn mutate(s: &mut String, kind: u8, pos: usize, arg: usize) {
    let mut at = pos % s.len().max(1);
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    match kind % 3 {
        0 => {
            let mut end = (at + arg % 10).min(s.len());
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s.replace_range(at..end, "");
        }
        1 => s.insert_str(at, ["\n", "=", "[", "]", "\"", ",", "{", "#"][arg % 8]),
        _ => {
            let bytes = s.as_bytes();
            if let Some(a) = (at..bytes.len()).find(|&i| bytes[i].is_ascii_digit()) {
                let b = (a..bytes.len())
                    .find(|&i| !(bytes[i].is_ascii_digit() || bytes[i] == b'.'))
                    .unwrap_or(bytes.len());
                s.replace_range(a..b, NUMBERS[arg % NUMBERS.len()]);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn damaged_scenes_load_and_build_or_fail_in_one_line(
        which in any::<usize>(),
        edits in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 1..4),
    ) {
        let all = scenes();
        let mut text = all[which % all.len()].clone();
        for (kind, pos, arg) in edits {
            mutate(&mut text, kind, pos, arg);
        }
        match Scene::from_toml_str(&text, scenes_dir()) {
            Ok(mut scene) => {
                scene.run.max_memory_gb = Some(0.1);
                if let Err(e) = build_simulation(&scene) {
                    prop_assert_eq!(e.to_string().lines().count(), 1, "{}", e);
                }
            }
            Err(e) => prop_assert_eq!(e.to_string().lines().count(), 1, "{}", e),
        }
    }
}
