//! Replacing a file all at once: written beside its target under a temporary name, then renamed
//! over it, so that readers (and a run killed half-way) see the old file or the new one, never a
//! part of one.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Writes `path` through `write` (given the temporary file, created empty) and renames it over
/// `path` once `write` succeeds. With `durable`, the data and then the rename are flushed to the
/// disk (`fsync` of the file and of its folder) before returning, so that not even a power cut
/// loses both files. A failed write removes the temporary file and keeps the old one.
pub fn replace(
    path: &Path,
    durable: bool,
    write: impl FnOnce(&File, &Path) -> Result<()>,
) -> Result<()> {
    let tmp = temporary_name(path);
    let written = (|| {
        let file = File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        write(&file, &tmp)?;
        if durable {
            file.sync_all().map_err(|e| Error::io(&tmp, e))?;
        }
        drop(file);
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
        if durable {
            let dir = match path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir,
                _ => Path::new("."),
            };
            File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| Error::io(dir, e))?;
        }
        Ok(())
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// `path` with `.tmp<pid>` appended: unique to this process, in the same folder (a rename
/// within one file system is atomic).
fn temporary_name(path: &Path) -> PathBuf {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    PathBuf::from(tmp)
}
