//! File patterns of `files = "..."` axes: `*` (any characters within one path component),
//! `?` (one character) and a `**` component (any number of directories). Matches are regular
//! files, sorted by path so that task numbering does not depend on the directory order; names
//! starting with `.` match only a pattern component that starts with `.`.
//!
//! Decision: nothing is skipped without a word. A match that cannot be used (a link to
//! nothing, a file that cannot be opened, a name that is not UTF-8) is an error naming it and
//! why: a sweep must not quietly lose a member. A directory the pattern leads into but that
//! cannot be listed is a warning naming it (whether it holds a match cannot be known), and
//! the plan goes on with what could be read.

use crate::cmd::print::errln;
use std::path::{Path, PathBuf};

/// The regular files under `base` that match `pattern` (`/`-separated, relative to `base`, or
/// absolute), sorted; directories that could not be listed are reported on standard error.
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
    let mut walk = Walk::default();
    walk.walk(&root, &parts);
    if let Some((path, why)) = walk.unusable.first() {
        return Err(format!(
            "`{pattern}` matches {}, which cannot be used: {why}{}",
            path.display(),
            match walk.unusable.len() {
                1 => String::new(),
                n => format!(" ({} more such matches)", n - 1),
            }
        ));
    }
    walk.unlisted.sort();
    walk.unlisted.dedup();
    for (dir, why) in &walk.unlisted {
        errln!(
            "warning: `{pattern}`: cannot list {} ({why}); files in it are not in the sweep",
            dir.display()
        );
    }
    let mut found = walk.found;
    found.sort();
    found.dedup();
    Ok(found)
}

/// What a walk found: the matches, the matches that cannot be used and the directories that
/// could not be listed, each with the reason.
#[derive(Default)]
struct Walk {
    found: Vec<PathBuf>,
    unusable: Vec<(PathBuf, String)>,
    unlisted: Vec<(PathBuf, String)>,
}

impl Walk {
    fn walk(&mut self, dir: &Path, parts: &[&str]) {
        let Some((first, rest)) = parts.split_first() else {
            self.matched(dir);
            return;
        };
        if *first == "**" {
            // Zero directories, then one more level for each subdirectory.
            self.walk(dir, rest);
            for sub in self.entries(dir).into_iter().filter(|p| p.is_dir()) {
                if !hidden(&sub) {
                    self.walk(&sub, parts);
                }
            }
        } else if first.contains(['*', '?']) {
            for entry in self.entries(dir) {
                let Some(os) = entry.file_name() else {
                    continue;
                };
                let name = os.to_string_lossy();
                if (!name.starts_with('.') || first.starts_with('.')) && matches(first, &name) {
                    if os.to_str().is_none() {
                        self.unusable
                            .push((entry.clone(), "its name is not valid UTF-8".into()));
                        continue;
                    }
                    self.walk(&entry, rest);
                }
            }
        } else {
            self.walk(&dir.join(first), rest);
        }
    }

    /// A path the whole pattern matched: a regular file that can be opened is found; a link
    /// to nothing or an unreadable file is unusable; anything else (a directory, a device,
    /// nothing at all) is no match.
    fn matched(&mut self, path: &Path) {
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() => match std::fs::File::open(path) {
                Ok(_) => self.found.push(path.to_path_buf()),
                Err(e) => self.unusable.push((path.to_path_buf(), e.to_string())),
            },
            Ok(_) => {}
            Err(e) if std::fs::symlink_metadata(path).is_ok() => self
                .unusable
                .push((path.to_path_buf(), format!("a link to nothing ({e})"))),
            Err(_) => {}
        }
    }

    /// The entries of `dir`; a directory that exists but cannot be listed is noted.
    fn entries(&mut self, dir: &Path) -> Vec<PathBuf> {
        match std::fs::read_dir(dir) {
            Ok(it) => it
                .filter_map(|e| match e {
                    Ok(e) => Some(e.path()),
                    Err(e) => {
                        self.unlisted.push((dir.to_path_buf(), e.to_string()));
                        None
                    }
                })
                .collect(),
            Err(e) if dir.is_dir() => {
                self.unlisted.push((dir.to_path_buf(), e.to_string()));
                Vec::new()
            }
            Err(_) => Vec::new(),
        }
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
        // A link to nothing that matches is refused, naming it.
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(d.join("missing.obj"), d.join("b/broken.obj")).unwrap();
            let e = glob(&d, "b/*.obj").unwrap_err();
            assert!(
                e.contains("broken.obj") && e.contains("link to nothing"),
                "{e}"
            );
            assert_eq!(
                names("a/*.obj"),
                ["a/1.obj"],
                "elsewhere the pattern still works"
            );
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}
