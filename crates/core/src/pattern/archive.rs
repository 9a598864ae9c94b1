//! Zip archives of patterns, as Golly ships part of its collection: a pattern with the rule
//! tables it runs under (`Calcyman-primer.zip`), or a folder of patterns (`Flow6.zip`).
//!
//! An archive is told by its first bytes (`PK\x03\x04`), whatever its name; it is a file, or
//! bytes given whole (a page's upload to `gol view`, named as a file would be). It is read as
//! Golly's desktop version opens one: its `.rule` files are offered to the rule search
//! ([`crate::rule::table::provide`]: after the folders of `--rules`, before the pattern's own
//! folder and Golly's), and where it holds exactly one pattern file, that is the pattern. One
//! of several is named after the archive and a colon, as Golly's `unzip:` links name them:
//! `Flow6.zip:Flow6/Demo/Features.mc`. Entries Golly passes over are passed over here too
//! (a Mac's `__MACOSX/` folder and `.DS_Store` files); scripts (Lua, Python, Perl), text and
//! HTML are not patterns. A member is read bounded like a compressed file
//! ([`super::MAX_INFLATED_BYTES`]), so that a small archive cannot inflate without end.

use std::fs::File;
use std::io::{Cursor, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};

/// The first bytes of a zip archive (a local file header).
const MAGIC: [u8; 4] = *b"PK\x03\x04";

/// Pattern files named in a message, at most.
const LISTED: usize = 12;

/// What an archive's member is, by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A pattern file in a format `gol` reads (by its extension, a final `.gz` looked through).
    Pattern,
    /// A rule table (`.rule`).
    Rule,
    /// A script (`.lua`, `.py`, `.pl`), which Golly runs and `gol` does not.
    Script,
    /// Anything else: text, HTML, folders, a Mac's metadata.
    Other,
}

/// The kind of the member named `name` (its path inside the archive).
fn kind(name: &str) -> Kind {
    let base = name.rsplit('/').next().unwrap_or(name);
    if name.ends_with('/') || name.starts_with("__MACOSX/") || base == ".DS_Store" {
        return Kind::Other;
    }
    match super::extension(Path::new(base)).as_deref() {
        Some("rle" | "mc" | "cells" | "lif" | "life" | "l" | "mcl") => Kind::Pattern,
        Some("rule") => Kind::Rule,
        Some("lua" | "py" | "pl") => Kind::Script,
        _ => Kind::Other,
    }
}

/// Whether the file at `path` is a zip archive (by its first bytes).
pub(crate) fn is_archive(file: &mut File, path: &Path) -> Result<bool> {
    let mut first = [0u8; 4];
    let mut read = 0;
    while read < first.len() {
        match file.read(&mut first[read..]) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    file.rewind().map_err(|e| Error::io(path, e))?;
    Ok(is_zip(&first[..read]))
}

/// Whether `bytes` are a zip archive (by its first bytes).
pub(crate) fn is_zip(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// The ways `name` splits into an archive's name ending in `.zip` (any case) and a member's
/// after a colon, `ARCHIVE.zip:MEMBER`, the shortest archive first.
fn splits(name: &str) -> impl Iterator<Item = (&str, &str)> {
    name.match_indices(':').filter_map(|(at, _)| {
        let (archive, member) = (&name[..at], &name[at + 1..]);
        let zip = archive.len() >= 4
            && archive.is_char_boundary(archive.len() - 4)
            && archive[archive.len() - 4..].eq_ignore_ascii_case(".zip");
        (zip && !member.is_empty()).then_some((archive, member))
    })
}

/// Splits `path` where it names a member of an archive, `ARCHIVE:MEMBER`, into the two: where
/// `path` itself is no file, and a part of it before a colon is a file whose name ends in
/// `.zip` (any case).
pub(crate) fn split(path: &Path) -> Option<(PathBuf, String)> {
    if path.exists() {
        return None;
    }
    splits(path.to_str()?)
        .find(|(archive, _)| Path::new(archive).is_file())
        .map(|(archive, member)| (PathBuf::from(archive), member.to_string()))
}

/// Where an archive's bytes are: a file, or bytes held whole (an upload), with the name they
/// are shown by. Tables an archive offers to the rule search keep it, to read them when they
/// are first looked for.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    File(PathBuf),
    Bytes { name: PathBuf, bytes: Arc<[u8]> },
}

/// An archive's bytes as read: the file, or those held.
enum Reader {
    File(File),
    Bytes(Cursor<Arc<[u8]>>),
}

impl Read for Reader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Reader::File(file) => file.read(buf),
            Reader::Bytes(bytes) => bytes.read(buf),
        }
    }
}

impl Seek for Reader {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        match self {
            Reader::File(file) => file.seek(to),
            Reader::Bytes(bytes) => bytes.seek(to),
        }
    }
}

impl Source {
    /// The name the archive is shown by.
    pub(crate) fn name(&self) -> &Path {
        match self {
            Source::File(path) => path,
            Source::Bytes { name, .. } => name,
        }
    }

    /// Whether `self` and `other` are the same bytes held (not a file).
    pub(crate) fn same_bytes(&self, other: &Source) -> bool {
        matches!((self, other), (Source::Bytes { bytes: a, .. }, Source::Bytes { bytes: b, .. }) if Arc::ptr_eq(a, b))
    }

    /// The archive's directory, read.
    fn zip(&self) -> Result<zip::ZipArchive<Reader>> {
        let reader = match self {
            Source::File(path) => Reader::File(File::open(path).map_err(|e| Error::io(path, e))?),
            Source::Bytes { bytes, .. } => Reader::Bytes(Cursor::new(bytes.clone())),
        };
        zip::ZipArchive::new(reader).map_err(|e| damaged(self.name(), e))
    }
}

/// The name a member is shown by in messages (and looked through for its format).
pub(crate) fn shown(archive: &Path, member: &str) -> PathBuf {
    PathBuf::from(format!("{}:{member}", archive.display()))
}

/// Opens the archive `path`: offers its rule tables to the rule search, and gives the pattern
/// file `member` names (or, with none named, its only pattern file) as the name it is shown
/// by and its bytes, read up to `limit` bytes.
pub(crate) fn open(path: &Path, member: Option<&str>, limit: u64) -> Result<(PathBuf, Vec<u8>)> {
    super::metadata(path)?;
    open_source(&Source::File(path.to_path_buf()), member, limit)
}

/// [`open`] on the archive `bytes`, held whole and shown as `name`: where `name` is
/// `ARCHIVE.zip:MEMBER`, the archive is shown as `ARCHIVE.zip` and gives that member.
pub(crate) fn open_bytes(name: &Path, bytes: Vec<u8>, limit: u64) -> Result<(PathBuf, Vec<u8>)> {
    let text = name.to_string_lossy();
    let (archive, member) = match splits(&text).next() {
        Some((archive, member)) => (PathBuf::from(archive), Some(member)),
        None => (name.to_path_buf(), None),
    };
    let source = Source::Bytes {
        name: archive,
        bytes: bytes.into(),
    };
    open_source(&source, member, limit)
}

/// The pattern files to choose from where `bytes` named `name` are a zip archive of several
/// and `name` names none of them (`ARCHIVE.zip:MEMBER`), by their names in it; `None`
/// otherwise (no archive, one that cannot be read, one pattern, or one named).
pub fn choice(name: &Path, bytes: &[u8]) -> Option<Vec<String>> {
    if !is_zip(bytes) || splits(&name.to_string_lossy()).next().is_some() {
        return None;
    }
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).ok()?;
    let names = names(&mut zip, Path::new("")).ok()?;
    let patterns: Vec<String> = names
        .into_iter()
        .filter(|n| kind(n) == Kind::Pattern)
        .collect();
    (patterns.len() > 1).then_some(patterns)
}

/// The names of an archive's members, in its order.
fn names<R: Read + Seek>(zip: &mut zip::ZipArchive<R>, path: &Path) -> Result<Vec<String>> {
    (0..zip.len())
        .map(|i| {
            let entry = zip.by_index_raw(i).map_err(|e| damaged(path, e))?;
            let name = entry.name().map_err(|e| damaged(path, e))?.into_owned();
            Ok(name)
        })
        .collect()
}

/// [`open`] on the archive `source`.
fn open_source(source: &Source, member: Option<&str>, limit: u64) -> Result<(PathBuf, Vec<u8>)> {
    let path = source.name();
    let mut zip = source.zip()?;
    let names = names(&mut zip, path)?;
    for name in names.iter().filter(|n| kind(n) == Kind::Rule) {
        let file = name.rsplit('/').next().unwrap_or(name);
        crate::rule::table::provide(file, source, name);
    }
    let patterns: Vec<&String> = names.iter().filter(|n| kind(n) == Kind::Pattern).collect();
    let chosen = match member {
        Some(wanted) => names
            .iter()
            .find(|n| *n == wanted)
            .or_else(|| {
                let alike: Vec<&String> = names
                    .iter()
                    .filter(|n| n.eq_ignore_ascii_case(wanted))
                    .collect();
                (alike.len() == 1).then(|| alike[0])
            })
            .filter(|n| !n.ends_with('/'))
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "{}: the archive has no file {wanted}; {}",
                    path.display(),
                    listing(&patterns)
                ))
            })?,
        None => match patterns[..] {
            [one] => one,
            [] => {
                let scripts: Vec<&str> = names
                    .iter()
                    .filter(|n| kind(n) == Kind::Script)
                    .map(|n| n.as_str())
                    .collect();
                let besides = match scripts.is_empty() {
                    true => String::new(),
                    false => format!(
                        " (it holds the script{} {}: gol runs no scripts)",
                        if scripts.len() > 1 { "s" } else { "" },
                        scripts.join(", ")
                    ),
                };
                return Err(Error::Invalid(format!(
                    "{}: the archive holds no pattern file{besides}",
                    path.display()
                )));
            }
            _ => {
                return Err(Error::Invalid(format!(
                    "{}: the archive holds {} pattern files: name one after the archive and a colon, as in {}; {}",
                    path.display(),
                    patterns.len(),
                    shown(path, patterns[0]).display(),
                    listing(&patterns)
                )))
            }
        },
    };
    let text = read(&mut zip, path, chosen, limit)?;
    Ok((shown(path, chosen), text))
}

/// The pattern files of an archive, for a message.
fn listing(patterns: &[&String]) -> String {
    if patterns.is_empty() {
        return "it holds no pattern file".into();
    }
    let mut list: Vec<&str> = patterns.iter().take(LISTED).map(|n| n.as_str()).collect();
    let more = format!("and {} more", patterns.len().saturating_sub(LISTED));
    if patterns.len() > LISTED {
        list.push(&more);
    }
    format!("its pattern files: {}", list.join(", "))
}

/// The bytes of member `name` of the archive `path`, refused past `limit` bytes.
fn read<R: Read + Seek>(
    zip: &mut zip::ZipArchive<R>,
    path: &Path,
    name: &str,
    limit: u64,
) -> Result<Vec<u8>> {
    let shown = shown(path, name);
    let entry = zip.by_name(name).map_err(|e| damaged(&shown, e))?;
    super::read_bounded(&shown, entry, limit)
}

/// The bytes of member `name` of the archive `source` (a rule table it offered), refused past
/// `limit` bytes.
pub(crate) fn read_member(source: &Source, name: &str, limit: u64) -> Result<Vec<u8>> {
    read(&mut source.zip()?, source.name(), name, limit)
}

/// An archive (or a member of one, `path`) that cannot be read.
fn damaged(path: &Path, e: zip::result::ZipError) -> Error {
    Error::Invalid(format!(
        "{}: not a zip archive gol can read: {e}",
        path.display()
    ))
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn members_are_told_apart_by_name_as_golly_does() {
        assert_eq!(kind("Calcyman-primer.rle"), Kind::Pattern);
        assert_eq!(kind("Flow6/Demo/Arm Mechanics.mc"), Kind::Pattern);
        assert_eq!(kind("a/b.RLE.gz"), Kind::Pattern);
        assert_eq!(kind("Primer.rule"), Kind::Rule);
        assert_eq!(kind("__MACOSX/._Primer.rule"), Kind::Other);
        assert_eq!(kind("Flow6/Demo/"), Kind::Other);
        assert_eq!(kind("init.lua"), Kind::Script);
        assert_eq!(kind("NoTimeAtAll.ruel"), Kind::Other);
        assert_eq!(kind("readme.txt"), Kind::Other);
    }
}
