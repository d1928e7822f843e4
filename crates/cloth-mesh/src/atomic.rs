//! The workspace's one atomic file writer: frames, statistics, previews and exports all go
//! through [`write_atomic`], so a reader (or a run interrupted at any instant) never sees a
//! partial file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Writes a file atomically: `write` fills a temporary file in the same directory
/// (`.NAME.PID.tmp`), which is flushed, synced to disk and renamed over `path`. On any error
/// the temporary file is removed and `path` is left as it was.
pub fn write_atomic(
    path: impl AsRef<Path>,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let path = path.as_ref();
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} has no file name", path.display()),
        )
    })?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let result = (|| {
        let mut buf = BufWriter::new(File::create(&tmp)?);
        write(&mut buf)?;
        let file = buf.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// [`write_atomic`] of a byte slice.
pub fn write_atomic_bytes(path: impl AsRef<Path>, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic(path, |w| w.write_all(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_writes_leave_the_old_file_and_no_temporary() {
        let dir = std::env::temp_dir().join(format!("cloth-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.txt");
        write_atomic_bytes(&path, b"first").unwrap();
        let err = write_atomic(&path, |w| {
            w.write_all(b"partial")?;
            Err(std::io::Error::other("disk full"))
        });
        assert!(err.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(names.len(), 1, "temporary file left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
