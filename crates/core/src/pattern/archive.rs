//! Zip archives of patterns, as Golly ships part of its collection: a pattern with the rule
//! tables it runs under (`Calcyman-primer.zip`), or a folder of patterns (`Flow6.zip`).
//!
//! An archive is told by its first bytes (`PK\x03\x04`), whatever its name. It is read as
//! Golly's desktop version opens one: its `.rule` files are offered to the rule search
//! ([`crate::rule::table::provide`]: after the folders of `--rules`, before the pattern's own
//! folder and Golly's), and where it holds exactly one pattern file, that is the pattern. One
//! of several is named after the archive and a colon, as Golly's `unzip:` links name them:
//! `Flow6.zip:Flow6/Demo/Features.mc`. Entries Golly passes over are passed over here too
//! (a Mac's `__MACOSX/` folder and `.DS_Store` files); scripts (Lua, Python, Perl), text and
//! HTML are not patterns. A member is read bounded like a compressed file
//! ([`super::MAX_INFLATED_BYTES`]), so that a small archive cannot inflate without end.

use std::fs::File;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};

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
    Ok(read == first.len() && first == MAGIC)
}

/// Splits `path` where it names a member of an archive, `ARCHIVE:MEMBER`, into the two: where
/// `path` itself is no file, and a part of it before a colon is a file whose name ends in
/// `.zip` (any case).
pub(crate) fn split(path: &Path) -> Option<(PathBuf, String)> {
    if path.exists() {
        return None;
    }
    let text = path.to_str()?;
    text.match_indices(':').find_map(|(at, _)| {
        let (archive, member) = (&text[..at], &text[at + 1..]);
        let zip = archive.len() >= 4 && archive[archive.len() - 4..].eq_ignore_ascii_case(".zip");
        (zip && !member.is_empty() && Path::new(archive).is_file())
            .then(|| (PathBuf::from(archive), member.to_string()))
    })
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
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| damaged(path, e))?;
    let mut names = Vec::with_capacity(zip.len());
    for i in 0..zip.len() {
        let entry = zip.by_index_raw(i).map_err(|e| damaged(path, e))?;
        let name = entry.name().map_err(|e| damaged(path, e))?.into_owned();
        names.push(name);
    }
    for name in names.iter().filter(|n| kind(n) == Kind::Rule) {
        let file = name.rsplit('/').next().unwrap_or(name);
        crate::rule::table::provide(file, path, name);
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

/// The bytes of member `name` of the archive at `path` (a rule table it offered), refused past
/// `limit` bytes.
pub(crate) fn read_member(path: &Path, name: &str, limit: u64) -> Result<Vec<u8>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| damaged(path, e))?;
    read(&mut zip, path, name, limit)
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
