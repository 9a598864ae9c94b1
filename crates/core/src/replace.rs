//! Replacing a file all at once: written beside its target under a temporary name, then renamed
//! over it, so that readers (and a run killed half-way) see the old file or the new one, never a
//! part of one.
//!
//! What is replaced keeps what it was: a symbolic link is written through (its target is
//! replaced and the link stays), the new file takes the old one's mode and, where the process
//! may set it, its owner and group, and a read-only file is refused rather than replaced. A
//! target that is neither a regular file nor a folder (`/dev/null`, a pipe, `/dev/stdout`) is
//! written as it is, not replaced.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Writes `path` through `write` (given the temporary file, created empty) and puts it in place
/// of `path` once `write` succeeds (by exchange where it can, see `swap_in`). With `durable`,
/// the data and then the rename are flushed to the disk (`fsync` of the file and of its folder)
/// before returning, so that not even a power cut loses both files. A failed write removes the
/// temporary file and keeps the old one.
pub fn replace(
    path: &Path,
    durable: bool,
    write: impl FnOnce(&File, &Path) -> Result<()>,
) -> Result<()> {
    let staged = Staged::create(path)?;
    write(staged.file(), staged.temporary())?;
    staged.commit(durable)
}

/// A file being written under a temporary name beside its target ([`replace`] for writers that
/// keep it open a while, as an animation does over a run): [`Staged::commit`] puts it in place;
/// dropped before that, it is removed and the target stays as it was.
pub struct Staged {
    file: File,
    tmp: PathBuf,
    path: PathBuf,
    committed: bool,
    /// Written straight to `path`, which is neither a regular file nor a folder (a device such
    /// as `/dev/null`, a pipe such as `/dev/stdout`'s): renaming a file over it would put a
    /// regular file in its place, which for `/dev/null` breaks every program of the machine.
    direct: bool,
}

impl Staged {
    /// Creates the temporary file for `path` (for a symbolic link, its target's), empty, with
    /// the mode and owner of the file it will replace; a read-only file is refused.
    pub fn create(path: &Path) -> Result<Staged> {
        // Through every link, as opening it would: a device or a pipe is written as it is.
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            let file = File::options()
                .write(true)
                .open(path)
                .map_err(|e| Error::io(path, e))?;
            return Ok(Staged {
                file,
                tmp: path.to_path_buf(),
                path: path.to_path_buf(),
                committed: false,
                direct: true,
            });
        }
        let path = &written_path(path);
        let old = std::fs::metadata(path).ok();
        if old.as_ref().is_some_and(|m| m.permissions().readonly()) {
            return Err(Error::io(
                path,
                std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    "the file is read-only, and gol does not replace read-only files",
                ),
            ));
        }
        let tmp = temporary_name(path);
        // Readable too, so that a writer may map it (a `.bin` cube is unpacked into its map).
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(|e| Error::io(path, e))?;
        if let Some(old) = old {
            keep_owner_and_mode(&file, &old).map_err(|e| Error::io(&tmp, e))?;
        }
        Ok(Staged {
            file,
            tmp,
            path: path.to_path_buf(),
            committed: false,
            direct: false,
        })
    }

    /// The temporary file (the target itself where that is a device or a pipe).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The temporary file's name.
    pub fn temporary(&self) -> &Path {
        &self.tmp
    }

    /// Puts the written file in place of the target; with `durable`, flushed to the disk first
    /// and the rename after (see [`replace`]).
    pub fn commit(mut self, durable: bool) -> Result<()> {
        if self.direct {
            // Nothing to put in place, and nothing a device or a pipe flushes to a disk.
            return Ok(());
        }
        if durable {
            self.file.sync_all().map_err(|e| Error::io(&self.tmp, e))?;
        }
        swap_in(&self.tmp, &self.path)?;
        self.committed = true;
        if durable {
            let dir = match self.path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir,
                _ => Path::new("."),
            };
            File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| Error::io(dir, e))?;
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed && !self.direct {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Moves the complete file `tmp` to `path`, atomically for readers of `path`.
///
/// Where `path` is a regular file, the two are exchanged (Linux `renameat2` with
/// `RENAME_EXCHANGE`) and the old file, now named `tmp`, is removed. A plain rename over an existing file would do the same
/// for readers, but ext4 then writes the new file's data out to the disk before the rename
/// returns (its replace-by-rename safeguard, `auto_da_alloc`): 0.8–1.0 s for a 1 GiB `.bin`
/// output on the machines we measured, against a few milliseconds for the exchange. Elsewhere,
/// where the file system cannot exchange, or where `path` is something else (a directory, a
/// link: rename's own rules and errors apply), a plain rename.
fn swap_in(tmp: &Path, path: &Path) -> Result<()> {
    #[cfg(target_os = "linux")]
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) && exchange(tmp, path).is_ok() {
        return std::fs::remove_file(tmp).map_err(|e| Error::io(tmp, e));
    }
    std::fs::rename(tmp, path).map_err(|e| Error::io(path, e))
}

/// Exchanges the files named `a` and `b` (both must exist, on one file system).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let name = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
    };
    let (a, b) = (name(a)?, name(b)?);
    // SAFETY: both names are NUL-terminated strings that outlive the call; renameat2 only reads
    // them, and AT_FDCWD makes relative names relative to the working directory, as for rename.
    let status = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if status == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Gives `file` the mode of `old`, and its owner and group where the process may (a user
/// cannot give a file away; root can).
fn keep_owner_and_mode(file: &File, old: &std::fs::Metadata) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::io::AsRawFd;
    let mine = file.metadata()?;
    if (mine.uid(), mine.gid()) != (old.uid(), old.gid()) {
        // SAFETY: fchown on a descriptor this File owns, open for the call; a refusal (EPERM)
        // leaves the file as it was, and is not an error here.
        let _ = unsafe { libc::fchown(file.as_raw_fd(), old.uid(), old.gid()) };
    }
    file.set_permissions(old.permissions())
}

/// Where a write to `path` goes: through every symbolic link to its target (which need not
/// exist yet), else `path` itself.
pub fn written_path(path: &Path) -> PathBuf {
    let mut at = path.to_path_buf();
    // As the kernel does, at most 40 links.
    for _ in 0..40 {
        match std::fs::read_link(&at) {
            // A relative target is relative to the link's folder.
            Ok(target) => at = at.parent().map_or(target.clone(), |dir| dir.join(&target)),
            Err(_) => break,
        }
    }
    at
}

/// The name under which this process writes `path` before putting it in place: the file
/// written ([`written_path`]) with `.tmp<pid>` appended, unique to this process, in the same
/// folder (a rename within one file system is atomic).
pub fn temporary_name(path: &Path) -> PathBuf {
    let mut tmp = written_path(path).into_os_string();
    tmp.push(format!(".tmp{}", std::process::id()));
    PathBuf::from(tmp)
}

#[cfg(test)]
mod test {
    use super::*;
    use std::io::Write;

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn put(path: &Path, text: &str) -> Result<()> {
        replace(path, false, |mut file, _| {
            file.write_all(text.as_bytes()).unwrap();
            Ok(())
        })
    }

    #[test]
    fn a_new_file_and_a_replaced_one_leave_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        put(&path, "first").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "first");
        // Over an existing file (exchanged, then the old one removed), and over it again.
        put(&path, "second, longer").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second, longer");
        put(&path, "3").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "3");
        assert_eq!(names_in(dir.path()), ["out.bin"]);
    }

    #[test]
    fn a_replaced_file_keeps_its_mode_and_links_and_read_only_files_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        // A private file stays private.
        let private = dir.path().join("private.rle");
        put(&private, "a").unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
        put(&private, "b").unwrap();
        assert_eq!(
            (
                mode(&private),
                std::fs::read_to_string(&private).unwrap().as_str()
            ),
            (0o600, "b")
        );
        // A link is written through: its target is replaced, the link stays a link.
        let real = dir.path().join("real.rle");
        put(&real, "r").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link.rle");
        std::os::unix::fs::symlink("real.rle", &link).unwrap();
        put(&link, "through the link").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "through the link");
        assert_eq!(mode(&real), 0o640);
        // A link to a file not yet made makes the file.
        let dangling = dir.path().join("dangling.rle");
        std::os::unix::fs::symlink(dir.path().join("new.rle"), &dangling).unwrap();
        put(&dangling, "n").unwrap();
        assert!(std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("new.rle")).unwrap(),
            "n"
        );
        // A read-only file is refused, even for root, and left as it was.
        let fixed = dir.path().join("fixed.rle");
        put(&fixed, "keep").unwrap();
        std::fs::set_permissions(&fixed, std::fs::Permissions::from_mode(0o444)).unwrap();
        let e = put(&fixed, "lost").unwrap_err().to_string();
        assert!(e.contains("fixed.rle") && e.contains("read-only"), "{e}");
        assert_eq!(std::fs::read_to_string(&fixed).unwrap(), "keep");
        assert_eq!(
            names_in(dir.path()),
            [
                "dangling.rle",
                "fixed.rle",
                "link.rle",
                "new.rle",
                "private.rle",
                "real.rle"
            ]
        );
    }

    #[test]
    fn a_file_open_for_reading_keeps_its_old_contents() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.bin");
        put(&path, "old").unwrap();
        let reader = std::fs::read_to_string(&path).unwrap();
        let open = File::open(&path).unwrap();
        put(&path, "new").unwrap();
        let mut still = String::new();
        std::io::Read::read_to_string(&mut &open, &mut still).unwrap();
        assert_eq!((reader.as_str(), still.as_str()), ("old", "old"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(names_in(dir.path()), ["in.bin"]);
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_removes_the_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        put(&path, "kept").unwrap();
        let failed = replace(&path, false, |mut file, tmp| {
            file.write_all(b"half").unwrap();
            Err(Error::io(tmp, std::io::Error::other("disk full")))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "kept");
        assert_eq!(names_in(dir.path()), ["out.bin"]);
    }

    #[test]
    fn a_pipe_is_written_as_it_is_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo only reads the NUL-terminated name, which outlives the call.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        // A link to it is written through too, as `/dev/stdout` is.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        replace(&link, true, |mut file, _| {
            file.write_all(b"through the pipe")
                .map_err(|e| Error::io(&link, e))
        })
        .unwrap();
        // Checked before the reader is waited for, which a pipe renamed over never opens.
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "the pipe is still a pipe: {kind:?}");
        assert_eq!(reader.join().unwrap(), "through the pipe");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 2, "no temporary file left");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn exchange_swaps_two_files() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, "A").unwrap();
        std::fs::write(&b, "B").unwrap();
        match exchange(&a, &b) {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                eprintln!("notice: this file system cannot exchange files; skipping");
            }
            result => {
                result.unwrap();
                assert_eq!(std::fs::read_to_string(&a).unwrap(), "B");
                assert_eq!(std::fs::read_to_string(&b).unwrap(), "A");
            }
        }
        // A missing target is an error, which swap_in meets with a plain rename.
        assert!(exchange(&a, &dir.path().join("missing")).is_err());
    }
}
