//! File patterns of `files = "..."` axes: `*` (any characters within one path component),
//! `?` (one character) and a `**` component (any number of directories). Matches are regular
//! files, sorted by path so that task numbering does not depend on the directory order; names
//! starting with `.` match only a pattern component that starts with `.`.

use std::path::{Path, PathBuf};

/// The regular files under `base` that match `pattern` (`/`-separated, relative to `base`, or
/// absolute), sorted.
pub fn glob(base: &Path, pattern: &str) -> Result<Vec<PathBuf>, String> {
    let (root, rest) = match pattern.strip_prefix('/') {
        Some(rest) => (PathBuf::from("/"), rest),
        None => (base.to_path_buf(), pattern),
    };
    let parts: Vec<&str> = rest
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.is_empty() {
        return Err(format!("`{pattern}` names no file"));
    }
    let mut found = Vec::new();
    walk(&root, &parts, &mut found);
    found.sort();
    found.dedup();
    Ok(found)
}

fn walk(dir: &Path, parts: &[&str], found: &mut Vec<PathBuf>) {
    let Some((first, rest)) = parts.split_first() else {
        if dir.is_file() {
            found.push(dir.to_path_buf());
        }
        return;
    };
    if *first == "**" {
        // Zero directories, then one more level for each subdirectory.
        walk(dir, rest, found);
        for sub in entries(dir).into_iter().filter(|p| p.is_dir()) {
            if !hidden(&sub) {
                walk(&sub, parts, found);
            }
        }
    } else if first.contains(['*', '?']) {
        for entry in entries(dir) {
            let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if (!name.starts_with('.') || first.starts_with('.')) && matches(first, name) {
                walk(&entry, rest, found);
            }
        }
    } else {
        walk(&dir.join(first), rest, found);
    }
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(dir) {
        Ok(it) => it.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(_) => Vec::new(),
    }
}

fn hidden(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.'))
}

/// Whether `name` matches the component pattern (`*`, `?`, literal characters).
pub fn matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Iterative wildcard matching with one backtrack point (the last `*`).
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_patterns() {
        assert!(matches("*.obj", "body.obj"));
        assert!(matches("b?dy_*.obj", "body_01.obj"));
        assert!(matches("*", "x"));
        assert!(!matches("*.obj", "body.objx"));
        assert!(!matches("a*b*c", "abx"));
        assert!(matches("a*b*c", "axxbyyc"));
    }

    #[test]
    fn walks_directories_and_sorts() {
        let d = std::env::temp_dir().join(format!("cloth-glob-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        for f in [
            "b/2.obj",
            "a/1.obj",
            "a/deep/3.obj",
            "a/.hidden.obj",
            "a/x.txt",
        ] {
            let p = d.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let names = |pat: &str| -> Vec<String> {
            glob(&d, pat)
                .unwrap()
                .iter()
                .map(|p| p.strip_prefix(&d).unwrap().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(names("*/*.obj"), ["a/1.obj", "b/2.obj"]);
        assert_eq!(names("**/*.obj"), ["a/1.obj", "a/deep/3.obj", "b/2.obj"]);
        assert_eq!(names("a/.*.obj"), ["a/.hidden.obj"]);
        assert_eq!(names("a/1.obj"), ["a/1.obj"]);
        assert!(names("c/*.obj").is_empty());
        let _ = std::fs::remove_dir_all(&d);
    }
}
