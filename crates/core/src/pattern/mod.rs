//! Pattern files: reading RLE and plaintext `.cells`, writing RLE, `.cells` and PNG.
//!
//! Reading happens in two steps so that a large pattern goes straight into the final grid:
//! [`PatternFile::open`] reads the file and its header (size, rule, Golly torus suffix), the
//! caller decides the grid size, then [`PatternFile::paint`] draws the cells into it.

mod cells;
mod rle;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::grid::Grid;
use crate::rule::Rule;

/// The largest file accepted as a pattern (an RLE of a 65536² soup is well under this).
pub const MAX_FILE_BYTES: u64 = 4 << 30;

/// The file formats `gol` knows, by extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Run-length encoded (`.rle`), read and written.
    Rle,
    /// Plaintext (`.cells`), read and written.
    Cells,
    /// A picture (`.png`), written only.
    Png,
}

/// Whether `path` names a gzip-compressed file (`….gz`, any case): an output written so, and
/// the extension looked through for the format.
pub fn gzipped(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
}

/// The extension that names `path`'s format, in lower case, a final `.gz` looked through
/// (`x.rle.gz` gives `rle`).
pub fn extension(path: &Path) -> Option<String> {
    let inner = if gzipped(path) {
        Path::new(path.file_stem().unwrap_or_default())
    } else {
        path
    };
    inner
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}

impl Format {
    /// The format of `path`, from its extension (case-insensitive; a final `.gz` is looked
    /// through: `x.rle.gz` is RLE).
    pub fn of(path: &Path) -> Result<Format> {
        match extension(path).as_deref() {
            Some("rle") => Ok(Format::Rle),
            Some("cells") => Ok(Format::Cells),
            Some("png") => Ok(Format::Png),
            _ => Err(Error::Invalid(format!(
                "{}: unknown pattern format (expected a .rle, .cells or .png file name)",
                path.display()
            ))),
        }
    }
}

/// What a pattern file says about itself before its cells are drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Width of the pattern's bounding box.
    pub width: usize,
    /// Height of the pattern's bounding box.
    pub height: usize,
    /// The rule the file names, if any.
    pub rule: Option<Rule>,
    /// The torus size of Golly's `:TW,H` suffix, if any.
    pub torus: Option<(usize, usize)>,
}

/// A pattern file read into memory, its header parsed.
pub struct PatternFile {
    path: PathBuf,
    format: Format,
    text: Vec<u8>,
    header: Header,
    /// Byte offset and line number where the cells begin.
    body: (usize, usize),
}

impl PatternFile {
    /// Reads `path` (RLE or `.cells`, by extension) and parses its header.
    pub fn open(path: &Path) -> Result<PatternFile> {
        let format = Format::of(path)?;
        if format == Format::Png {
            return Err(Error::Invalid(format!(
                "{}: PNG files can be written but not read as patterns",
                path.display()
            )));
        }
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        if meta.is_dir() {
            return Err(Error::Invalid(format!(
                "{}: is a directory",
                path.display()
            )));
        }
        if meta.len() > MAX_FILE_BYTES {
            return Err(Error::Invalid(format!(
                "{}: {} bytes is larger than the {MAX_FILE_BYTES} bytes a pattern file may have",
                path.display(),
                meta.len()
            )));
        }
        crate::memory::check(meta.len(), &format!("reading {}", path.display()))?;
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let text = read_bounded(path, file, MAX_FILE_BYTES)?;
        PatternFile::from_bytes(path, format, text)
    }

    /// Parses the header of `text`, in `format`, as if read from `path` (used in messages);
    /// gzip-compressed text (found by its magic bytes, whatever the name) is first inflated.
    pub fn from_bytes(path: &Path, format: Format, text: Vec<u8>) -> Result<PatternFile> {
        let text = if text.starts_with(&GZIP_MAGIC) {
            let inflated = flate2::read::MultiGzDecoder::new(&text[..]);
            read_bounded(path, inflated, MAX_FILE_BYTES)?
        } else {
            text
        };
        let (header, body) = match format {
            Format::Rle => rle::header(path, &text)?,
            Format::Cells => cells::header(path, &text)?,
            Format::Png => {
                return Err(Error::Invalid(
                    "PNG files cannot be read as patterns".into(),
                ))
            }
        };
        Ok(PatternFile {
            path: path.to_path_buf(),
            format,
            text,
            header,
            body,
        })
    }

    /// The parsed header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Draws the pattern's live cells into `grid` with its top-left corner at `(left, top)`.
    /// The caller has checked that the bounding box fits.
    pub fn paint(&self, grid: &mut Grid, left: usize, top: usize) -> Result<()> {
        let canvas = Canvas {
            grid,
            left,
            top,
            width: self.header.width,
            height: self.header.height,
        };
        match self.format {
            Format::Rle => rle::paint(&self.path, &self.text, self.body, canvas),
            Format::Cells => cells::paint(&self.path, &self.text, self.body, canvas),
            Format::Png => unreachable!("PNG files are refused by open"),
        }
    }

    /// The pattern centred in a `width`×`height` grid, at (⌊(W−w)/2⌋, ⌊(H−h)/2⌋). A pattern
    /// larger than the grid is refused.
    pub fn place(&self, width: usize, height: usize) -> Result<Grid> {
        let h = &self.header;
        if h.width > width || h.height > height {
            return Err(Error::Invalid(format!(
                "{}: the {}x{} pattern does not fit in the {width}x{height} grid",
                self.path.display(),
                h.width,
                h.height
            )));
        }
        let mut grid = Grid::new(width, height)?;
        self.paint(&mut grid, (width - h.width) / 2, (height - h.height) / 2)?;
        Ok(grid)
    }
}

/// Where a reader draws: the pattern's bounding box inside a grid.
pub(crate) struct Canvas<'a> {
    grid: &'a mut Grid,
    left: usize,
    top: usize,
    width: usize,
    height: usize,
}

impl Canvas<'_> {
    /// Sets `len` cells alive from pattern coordinates `(x, y)`, which the reader has checked
    /// to lie inside the bounding box.
    fn run(&mut self, x: usize, y: usize, len: usize) {
        debug_assert!(x + len <= self.width && y < self.height);
        self.grid.fill_run(self.left + x, self.top + y, len);
    }
}

/// A parse error at `line` of `path`.
pub(crate) fn parse_error(path: &Path, line: usize, message: impl Into<String>) -> Error {
    Error::Parse {
        path: path.to_path_buf(),
        line,
        message: message.into(),
    }
}

/// Writes `grid` to `path` in the format its extension names: `.rle` (the whole torus, with
/// `rule` and the `:TW,H` suffix), `.cells` (the whole grid) or `.png` (a picture); RLE and
/// `.cells` gzip-compressed where the name ends in `.gz`.
pub fn write(path: &Path, grid: &Grid, rule: Rule) -> Result<()> {
    let format = Format::of(path)?;
    if gzipped(path) && format == Format::Png {
        return Err(Error::Invalid(format!(
            "{}: .gz applies to .rle and .cells outputs",
            path.display()
        )));
    }
    // Under a temporary name, then renamed: a write cut short keeps the file it would replace.
    crate::replace::replace(path, false, |file, _| {
        let out = std::io::BufWriter::new(file);
        let written = if gzipped(path) {
            let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
            encode_into(&mut gz, format, grid, rule)
                .and_then(|()| gz.finish())
                .and_then(|mut out| out.flush())
        } else {
            let mut out = out;
            encode_into(&mut out, format, grid, rule).and_then(|()| out.flush())
        };
        written.map_err(|e| Error::io(path, e))
    })
}

/// The first bytes of a gzip stream.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// All of `reader` (the file `path`, or its inflated contents), refused past `limit` bytes and
/// read into memory allocated fallibly, so that neither a large file under a memory limit nor
/// a small archive that inflates without end can abort the process.
fn read_bounded(path: &Path, reader: impl std::io::Read, limit: u64) -> Result<Vec<u8>> {
    const CHUNK: usize = 1 << 20;
    let mut text = Vec::new();
    let mut reader = reader.take(limit + 1);
    loop {
        if text.capacity() - text.len() < CHUNK {
            // The vector is about to grow (to about twice its size): within the memory
            // available, which an overcommitting system would not refuse by itself.
            let grown = (text.len() + CHUNK).max(2 * text.capacity()) as u64;
            crate::memory::check(grown, &format!("reading {}", path.display()))?;
        }
        text.try_reserve(CHUNK).map_err(|_| {
            Error::Memory(format!(
                "reading {}: {} bytes so far, and no memory for more",
                path.display(),
                text.len()
            ))
        })?;
        let start = text.len();
        text.resize(start + CHUNK, 0);
        let n = reader
            .read(&mut text[start..])
            .map_err(|e| Error::io(path, e))?;
        text.truncate(start + n);
        if n == 0 {
            break;
        }
    }
    if text.len() as u64 > limit {
        return Err(Error::Invalid(format!(
            "{}: more than the {limit} bytes a pattern file may have",
            path.display()
        )));
    }
    Ok(text)
}

/// Encodes `grid` in `format` into memory, as [`write()`] would write it to a file.
pub fn encode(format: Format, grid: &Grid, rule: Rule) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(&mut out, format, grid, rule).expect("writing to memory cannot fail");
    out
}

fn encode_into(
    out: &mut impl Write,
    format: Format,
    grid: &Grid,
    rule: Rule,
) -> std::io::Result<()> {
    match format {
        Format::Rle => rle::write(out, grid, rule),
        Format::Cells => cells::write(out, grid, rule),
        Format::Png => crate::picture::write_png(
            out,
            &crate::picture::grid(
                grid,
                &crate::picture::View::whole(grid.width(), grid.height()),
                None,
            )
            .map_err(std::io::Error::other)?,
        ),
    }
}

/// Splits `text` into lines (without `\n` or a trailing `\r`), each with its 1-based number and
/// byte offset, starting at byte `from`, which is the start of line `first_line`.
pub(crate) fn lines(
    text: &[u8],
    from: usize,
    first_line: usize,
) -> impl Iterator<Item = (usize, usize, &[u8])> {
    let mut at = from;
    let mut number = first_line;
    std::iter::from_fn(move || {
        if at >= text.len() {
            return None;
        }
        let end = text[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(text.len(), |p| at + p);
        let mut line = &text[at..end];
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        let item = (number, at, line);
        at = end + 1;
        number += 1;
        Some(item)
    })
}

/// Describes an unexpected byte for a message.
pub(crate) fn describe(byte: u8) -> String {
    if byte.is_ascii_graphic() {
        format!("unexpected character '{}'", byte as char)
    } else {
        format!("unexpected byte 0x{byte:02x}")
    }
}

#[cfg(test)]
mod test;
