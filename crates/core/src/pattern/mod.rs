//! Pattern files: reading RLE (with Golly's `#CXRLE` extension), plaintext `.cells`, Golly's
//! macrocell `.mc`, Life 1.06, Life 1.05 and MCell `.mcl` (`mcell.rs`), any of them gzip-compressed
//! or in a zip archive with the rule tables they need (`archive.rs`); writing RLE, `.cells`,
//! macrocell and PNG.
//!
//! Reading happens in two steps so that a large pattern goes straight into the final grid:
//! [`PatternFile::open`] reads the file and its header (size, rule, Golly bounded-grid
//! suffix, position), the caller decides the grid size, then [`PatternFile::place`] (or
//! [`PatternFile::paint`]) draws the cells into it. The format is told by the file's content
//! first, then by its extension ([`Format::detect`]).
//!
//! # Placement
//!
//! Patterns are placed as Golly places them. Golly's coordinates put x to the right and y
//! down; a W×H grid spans x from −⌊W/2⌋ and y from −⌊H/2⌋, so grid cell (⌊W/2⌋, ⌊H/2⌋) is
//! Golly's (0, 0). A file that gives its position (`#CXRLE Pos=x,y`, Life 1.06 and 1.05
//! and macrocell coordinates) is drawn there; a w×h pattern that does not has its top-left cell at
//! (−⌊w/2⌋, −⌊h/2⌋), that is its cell (⌊w/2⌋, ⌊h/2⌋) on the grid's (⌊W/2⌋, ⌊H/2⌋). On the
//! unbounded plane Golly does not centre it: its top-left cell is (0, 0) (the plane's readers,
//! `gol_plane::files`, follow that).

pub(crate) mod archive;
mod cells;
mod life;
mod macrocell;
mod mcell;
mod rle;
mod rle_body;
mod runs;
mod states;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use num_bigint::{BigInt, BigUint};
use num_traits::ToPrimitive;

use crate::error::{Error, Result};
use crate::grid::Grid;
use crate::rule::Rule;

pub use archive::choice as archive_choice;
pub use macrocell::MacroNode;

/// The largest file accepted as a pattern (an RLE of a 65536² soup is well under this).
pub const MAX_FILE_BYTES: u64 = 4 << 30;

/// The most a gzip-compressed pattern file may inflate to, in bytes: 1 GiB, counted as it
/// streams, so that a file of a few megabytes that inflates to terabytes (a "gzip bomb") is
/// refused having used about this much memory. The largest compressed pattern Golly ships
/// inflates to 0.7 MB.
pub const MAX_INFLATED_BYTES: u64 = 1 << 30;

/// The file formats `gol` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Run-length encoded (`.rle`), read and written.
    Rle,
    /// Plaintext (`.cells`), read and written.
    Cells,
    /// A picture (`.png`), written only.
    Png,
    /// Life 1.06 (`#Life 1.06`, `.lif`): one `x y` line per live cell, read only.
    Life106,
    /// Life 1.05 (`#Life 1.05`): `#P` blocks of `.`/`*` rows, read only.
    Life105,
    /// Golly's macrocell (`.mc`, `[M2]`), two-state, read and written.
    Macrocell,
}

/// The formats a pattern may be read in, for messages.
const READABLE: &str = "RLE (a header such as x = 3, y = 3), plaintext .cells (! comments, rows of . and O), Golly's macrocell (an [M2] first line), Life 1.06 or Life 1.05 (a #Life 1.06 or #Life 1.05 first line), MCell (an #MCell first line), any of them gzip-compressed or in a zip archive (ARCHIVE.zip, or ARCHIVE.zip:MEMBER for one of several)";

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
            Some("lif" | "life") => Ok(Format::Life106),
            Some("mc") => Ok(Format::Macrocell),
            _ => Err(Error::Invalid(format!(
                "{}: unknown pattern format (expected a .rle, .cells, .mc or .png file name)",
                path.display()
            ))),
        }
    }

    /// The format of the pattern `text` read from `path`: by its content first (a `#Life`
    /// line, an RLE header, plaintext rows in its first 64 KiB), then by the extension; an
    /// unknown one is refused with the list of formats read.
    pub fn detect(path: &Path, text: &[u8]) -> Result<Format> {
        let first = lines(text, 0, 1)
            .map(|(_, _, line)| line.trim_ascii())
            .find(|line| !line.is_empty());
        if let Some(line) = first {
            if line.starts_with(b"#Life 1.06") {
                return Ok(Format::Life106);
            }
            if line.starts_with(b"#Life 1.05") {
                return Ok(Format::Life105);
            }
            if line.starts_with(b"[M2]") {
                return Ok(Format::Macrocell);
            }
        }
        // RLE: `#` comment lines, then a header line starting with x.
        let header = lines(text, 0, 1)
            .map(|(_, _, line)| line.trim_ascii())
            .find(|line| !line.is_empty() && line[0] != b'#');
        if header.is_some_and(|h| h.starts_with(b"x") && h.contains(&b'=')) {
            return Ok(Format::Rle);
        }
        // Plaintext rows: the lines of the first [`DETECT_BYTES`] (the header pass checks every
        // character of the file, and reports the first that is wrong with its line).
        let plain = lines(&text[..text.len().min(DETECT_BYTES)], 0, 1)
            .map(|(_, _, line)| line.trim_ascii_end())
            .filter(|line| line.first() != Some(&b'!'))
            .all(cells::all_cells);
        if plain && first.is_some_and(|l| l[0] == b'!' || l[0] == b'.' || l[0] == b'O') {
            return Ok(Format::Cells);
        }
        match Format::of(path) {
            Ok(Format::Png) | Err(_) => Err(Error::Invalid(format!(
                "{}: not a pattern file gol reads; formats read: {READABLE}",
                path.display()
            ))),
            Ok(format) => Ok(format),
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
    /// The size of Golly's bounded-grid suffix on the rule (`:TW,H`, `:PW,H`), if any; the
    /// rule holds the topology.
    pub bounds: Option<(usize, usize)>,
    /// Where the file puts the bounding box's top-left cell, in Golly's coordinates (see the
    /// module documentation), exact at any size: `#CXRLE Pos=x,y`, or the live cells' least x
    /// and y in Life 1.06 and 1.05 and macrocell files. `None` where the file does not say.
    pub position: Option<(BigInt, BigInt)>,
    /// Whether the pattern spans more than any grid can hold (a macrocell file whose root is
    /// above level 62): `width`, `height` and `position` then say nothing (0, 0 and `None`),
    /// and only the infinite plane takes it, from its nodes.
    pub oversized: bool,
    /// The generation the file was saved at (`#CXRLE Gen=g`, macrocell `#G g`), exact at any
    /// size; 0 where it does not say.
    pub generation: BigUint,
}

/// The bytes [`Format::detect`] looks at for plaintext rows.
const DETECT_BYTES: usize = 1 << 16;

/// Files of at least this many bytes are memory-mapped rather than read: no copy of the page
/// cache into fresh memory (a 16.8 MB `.cells` file opened in 6–9 ms warm, but 24 ms in a
/// fresh process, most of it faulting in and filling the new buffer).
const MAP_BYTES: u64 = 1 << 20;

/// A pattern file's bytes: read into memory, or mapped.
enum Text {
    Read(Vec<u8>),
    Mapped(Mmap),
}

impl std::ops::Deref for Text {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Text::Read(bytes) => bytes,
            Text::Mapped(map) => map,
        }
    }
}

/// A pattern file read into memory (or mapped), its header parsed.
pub struct PatternFile {
    path: PathBuf,
    format: Format,
    text: Text,
    header: Header,
    /// Byte offset and line number where the cells begin.
    body: (usize, usize),
}

impl std::fmt::Debug for PatternFile {
    /// Its name, format, size in bytes and header (not its cells).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PatternFile")
            .field("path", &self.path)
            .field("format", &self.format)
            .field("bytes", &self.text.len())
            .field("header", &self.header)
            .finish()
    }
}

impl PatternFile {
    /// Reads `path` and parses its header; the format is told by the content, then by the
    /// extension ([`Format::detect`]). A zip archive gives its only pattern file, or the one
    /// named after it and a colon (`ARCHIVE.zip:MEMBER`), its rule tables offered to the rule
    /// search (`archive.rs`).
    pub fn open(path: &Path) -> Result<PatternFile> {
        if let Some((archive, member)) = archive::split(path) {
            let (shown, text) = archive::open(&archive, Some(&member), MAX_INFLATED_BYTES)?;
            return PatternFile::from_member(&shown, text);
        }
        if Format::of(path).is_ok_and(|f| f == Format::Png) {
            return Err(Error::Invalid(format!(
                "{}: PNG files can be written but not read as patterns",
                path.display()
            )));
        }
        let meta = metadata(path)?;
        let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        if meta.is_file() && archive::is_archive(&mut file, path)? {
            let (shown, text) = archive::open(path, None, MAX_INFLATED_BYTES)?;
            return PatternFile::from_member(&shown, text);
        }
        if meta.is_file() && meta.len() >= MAP_BYTES {
            let map = crate::memory::map_file(path, &file)?;
            return PatternFile::from_text(path, Text::Mapped(map));
        }
        crate::memory::check(meta.len(), &format!("reading {}", path.display()))?;
        let text = read_bounded_sized(path, file, MAX_FILE_BYTES, meta.len())?;
        PatternFile::from_bytes(path, text)
    }

    /// Parses the header of `text` as if read from `path` (used in messages and, where the
    /// content does not tell, for the format); gzip-compressed text (found by its magic bytes,
    /// whatever the name) is first inflated, and a zip archive gives its pattern as
    /// [`PatternFile::open`] says, the member named by `path` where it is `ARCHIVE.zip:MEMBER`.
    pub fn from_bytes(path: &Path, text: Vec<u8>) -> Result<PatternFile> {
        if archive::is_zip(&text) {
            let (shown, text) = archive::open_bytes(path, text, MAX_INFLATED_BYTES)?;
            return PatternFile::from_member(&shown, text);
        }
        PatternFile::from_text(path, Text::Read(text))
    }

    /// [`PatternFile::from_bytes`] on a member of an archive, shown as `shown`: an archive
    /// inside it is refused (so that no archive opens itself without end).
    fn from_member(shown: &Path, text: Vec<u8>) -> Result<PatternFile> {
        if archive::is_zip(&text) {
            return Err(Error::Invalid(format!(
                "{}: a zip archive inside an archive is not read",
                shown.display()
            )));
        }
        PatternFile::from_text(shown, Text::Read(text))
    }

    /// [`PatternFile::from_bytes`] on text read or mapped.
    fn from_text(path: &Path, text: Text) -> Result<PatternFile> {
        let text = if text.starts_with(&GZIP_MAGIC) {
            let inflated = flate2::read::MultiGzDecoder::new(&text[..]);
            Text::Read(read_bounded(path, inflated, MAX_INFLATED_BYTES)?)
        } else {
            text
        };
        // A UTF-8 byte-order mark, which some editors write, is not part of the pattern.
        let text = match text.strip_prefix(&UTF8_BOM) {
            Some(rest) => Text::Read(rest.to_vec()),
            None => text,
        };
        // An MCell file is read as the RLE it stands for.
        let text = match mcell::is_mcell(&text) {
            true => Text::Read(mcell::to_rle(path, &text)?),
            false => text,
        };
        let format = Format::detect(path, &text)?;
        let (header, body) = match format {
            Format::Rle => rle::header(path, &text)?,
            Format::Cells => cells::header(path, &text)?,
            Format::Life106 => life::header(path, &text, life::Version::V106)?,
            Format::Life105 => life::header(path, &text, life::Version::V105)?,
            Format::Macrocell => macrocell::header(path, &text)?,
            Format::Png => unreachable!("Format::detect never gives PNG"),
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
        self.draw(Canvas {
            target: Target::Grid { grid, left, top },
            width: self.header.width,
            height: self.header.height,
        })
    }

    /// Gives the pattern's cells to `sink`, relative to the bounding box's top-left cell
    /// (whose place in Golly's coordinates is the header's position, or the centring of
    /// [`PatternFile::corner`]): rows or runs, in the order the file holds them.
    pub fn paint_into(&self, sink: &mut dyn Sink) -> Result<()> {
        self.draw(Canvas {
            target: Target::Sink(sink),
            width: self.header.width,
            height: self.header.height,
        })
    }

    /// The live cells a two-state [`Sink`] is given by [`PatternFile::paint_into`], counted
    /// without handing them on (what a reader that may refuse a large pattern asks first), or
    /// `None` where they are more than `most`. A large RLE body is counted in pieces on rayon's
    /// threads, and not read to its end once the count passes `most` (so an error further on
    /// may go unseen: the reader that reads the file next finds it).
    pub fn count_cells(&self, most: u64) -> Result<Option<u64>> {
        if self.format == Format::Rle {
            let size = (self.header.width, self.header.height);
            if let Some(cells) = rle::count(&self.path, &self.text, self.body, size, most) {
                return cells;
            }
        }
        let mut count = Count(0);
        self.paint_into(&mut count)?;
        Ok((count.0 <= most).then_some(count.0))
    }

    fn draw(&self, canvas: Canvas<'_>) -> Result<()> {
        let (path, text) = (&self.path, &self.text);
        // Life 1.0x positions come from coordinates read as 64-bit numbers.
        let corner = match &self.header.position {
            Some((x, y)) => (x.to_i64().unwrap_or(0), y.to_i64().unwrap_or(0)),
            None => (0, 0),
        };
        match self.format {
            Format::Rle => rle::paint(path, text, self.body, canvas),
            Format::Cells => cells::paint(path, text, self.body, canvas),
            Format::Life106 => life::paint(path, text, life::Version::V106, corner, canvas),
            Format::Life105 => life::paint(path, text, life::Version::V105, corner, canvas),
            Format::Macrocell => macrocell::paint(path, text, canvas),
            Format::Png => unreachable!("Format::detect never gives PNG"),
        }
    }

    /// A macrocell file's nodes, in the file's order (see [`MacroNode`]); `None` for other
    /// formats. The last node is the root, centred as Golly centres it (see
    /// [`MacroNode`]).
    pub fn macrocell_nodes(&self) -> Option<Result<Vec<MacroNode>>> {
        (self.format == Format::Macrocell).then(|| macrocell::nodes(&self.path, &self.text))
    }

    /// The format the file was read in.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Where the pattern's top-left cell goes on a `width`×`height` grid, as Golly places it
    /// (see the module documentation); refused where the pattern does not fit.
    pub fn corner(&self, width: usize, height: usize) -> Result<(usize, usize)> {
        let h = &self.header;
        if h.oversized {
            return Err(Error::Invalid(format!(
                "{}: the pattern spans more than 2^62 cells, more than any grid holds; it runs on the infinite plane (give no size)",
                self.path.display()
            )));
        }
        let (x, y) = h.position.clone().unwrap_or((
            BigInt::from(-((h.width / 2) as i64)),
            BigInt::from(-((h.height / 2) as i64)),
        ));
        let (left, top) = (&x + width / 2, &y + height / 2);
        let fits = |start: &BigInt, len: usize, side: usize| {
            start
                .to_u64()
                .is_some_and(|s| s + len as u64 <= side as u64)
        };
        if !fits(&left, h.width, width) || !fits(&top, h.height, height) {
            let (x0, y0) = (-((width / 2) as i64), -((height / 2) as i64));
            return Err(Error::Invalid(format!(
                "{}: the {}x{} pattern at ({x}, {y}) does not fit in the {width}x{height} grid, which spans ({x0}, {y0}) to ({}, {}) in Golly's coordinates",
                self.path.display(),
                h.width,
                h.height,
                x0 + width as i64 - 1,
                y0 + height as i64 - 1
            )));
        }
        Ok((
            left.to_usize().expect("fits"),
            top.to_usize().expect("fits"),
        ))
    }

    /// The pattern on a `width`×`height` grid, placed as Golly places it
    /// ([`PatternFile::corner`]), with the cell states of the file's own rule (2 where it names
    /// none).
    pub fn place(&self, width: usize, height: usize) -> Result<Grid> {
        let states = self.header.rule.map_or(2, |rule| rule.states());
        self.place_with_states(width, height, states)
    }

    /// [`PatternFile::place`] on a grid of `states` cell states: 2, or those of the Generations
    /// rule the pattern will run under.
    pub fn place_with_states(&self, width: usize, height: usize, states: u32) -> Result<Grid> {
        let (left, top) = self.corner(width, height)?;
        let mut grid = Grid::with_states(width, height, states)?;
        self.paint(&mut grid, left, top)?;
        Ok(grid)
    }
}

/// Where a reader puts a pattern's cells when they are not drawn into a grid: the infinite
/// plane, which keeps only the parts that hold cells. Coordinates are the pattern's own,
/// relative to its bounding box's top-left cell.
pub trait Sink {
    /// The cell states the sink holds (2 for live and dead only).
    fn states(&self) -> u32;
    /// Row `y`'s live cells as words from the row's word `first` on (cell x at bit x % 64 of
    /// `words[x / 64 - first]`; the row's other cells are dead), to add to the cells already
    /// there.
    fn row(&mut self, y: usize, first: usize, words: &[u64]);
    /// Sets `len` cells from (x, y) to `state` (1 to [`Sink::states`] − 1).
    fn run(&mut self, x: usize, y: usize, len: usize, state: u32);
}

/// A two-state sink that counts the cells it is given.
struct Count(u64);

impl Sink for Count {
    fn states(&self) -> u32 {
        2
    }

    fn row(&mut self, _: usize, _: usize, words: &[u64]) {
        self.0 += words.iter().map(|w| w.count_ones() as u64).sum::<u64>();
    }

    fn run(&mut self, _: usize, _: usize, len: usize, _: u32) {
        self.0 += len as u64;
    }
}

/// Where a reader draws: the pattern's bounding box inside a grid, or a [`Sink`].
pub(crate) struct Canvas<'a> {
    target: Target<'a>,
    width: usize,
    height: usize,
}

/// A canvas's cells.
enum Target<'a> {
    /// The box's top-left cell at (left, top) of the grid.
    Grid {
        grid: &'a mut Grid,
        left: usize,
        top: usize,
    },
    Sink(&'a mut dyn Sink),
}

impl<'a> Canvas<'a> {
    /// The grid drawn into and the box's top-left cell in it; `None` for a sink, which takes
    /// rows and runs only.
    fn grid(self) -> std::result::Result<(&'a mut Grid, usize, usize), Canvas<'a>> {
        match self.target {
            Target::Grid { grid, left, top } => Ok((grid, left, top)),
            Target::Sink(_) => Err(self),
        }
    }

    /// The cell states the canvas holds.
    fn cell_states(&self) -> u32 {
        match &self.target {
            Target::Grid { grid, .. } => grid.states(),
            Target::Sink(sink) => sink.states(),
        }
    }

    /// Sets `len` cells alive from pattern coordinates `(x, y)`, which the reader has checked
    /// to lie inside the bounding box.
    fn run(&mut self, x: usize, y: usize, len: usize) {
        debug_assert!(x + len <= self.width && y < self.height);
        match &mut self.target {
            Target::Grid { grid, left, top } => grid.fill_run(*left + x, *top + y, len),
            Target::Sink(sink) => sink.run(x, y, len, 1),
        }
    }

    /// Sets `len` cells from pattern coordinates `(x, y)` to `state`, as [`Canvas::run`] does;
    /// refused where the canvas has no such state.
    fn states(
        &mut self,
        x: usize,
        y: usize,
        len: usize,
        state: u32,
    ) -> std::result::Result<(), String> {
        debug_assert!(x + len <= self.width && y < self.height);
        let states = self.cell_states();
        match state {
            0 => {}
            1 => self.run(x, y, len),
            _ if state >= states => {
                return Err(format!(
                    "cell state {state} needs a Generations rule of more than {state} states; the rule here has {states}"
                ))
            }
            _ => match &mut self.target {
                Target::Grid { grid, left, top } => {
                    (0..len).for_each(|i| grid.set_state(*left + x + i, *top + y, state))
                }
                Target::Sink(sink) => sink.run(x, y, len, state),
            },
        }
        Ok(())
    }
}

/// The metadata of the pattern file (or archive) `path`, refused where it is a directory or
/// larger than [`MAX_FILE_BYTES`].
fn metadata(path: &Path) -> Result<std::fs::Metadata> {
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
    Ok(meta)
}

/// The folder of pattern file `path`, where a rule table it names may lie (`.` for a bare
/// file name).
pub(crate) fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder.to_path_buf(),
        _ => PathBuf::from("."),
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

/// Writes `grid` to `path` in the format its extension names: `.rle` (the whole grid, with
/// `rule`, its `:TW,H` or `:PW,H` suffix and a `#CXRLE` line with its position and
/// `generation`), `.cells` (the whole grid), `.mc` (macrocell, with the rule, its suffix and
/// the generation) or `.png`
/// (a picture); all but PNG gzip-compressed where the name ends in `.gz`.
pub fn write(path: &Path, grid: &Grid, rule: Rule, generation: u64) -> Result<()> {
    let format = Format::of(path)?;
    if matches!(format, Format::Life106 | Format::Life105) {
        return Err(Error::Invalid(format!(
            "{}: Life 1.06 and 1.05 files are read, not written; write .rle or .cells",
            path.display()
        )));
    }
    if format == Format::Cells && grid.states() > 2 {
        return Err(Error::Invalid(format!(
            "{}: a .cells file holds two states; write the {} states of this grid as .rle or .mc",
            path.display(),
            grid.states()
        )));
    }
    if gzipped(path) && format == Format::Png {
        return Err(Error::Invalid(format!(
            "{}: .gz applies to .rle, .cells and .mc outputs",
            path.display()
        )));
    }
    // Under a temporary name, then renamed: a write cut short keeps the file it would replace.
    crate::replace::replace(path, false, |file, _| {
        let out = std::io::BufWriter::new(file);
        let written = if gzipped(path) {
            let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
            encode_into(&mut gz, format, grid, rule, generation)
                .and_then(|()| gz.finish())
                .and_then(|mut out| out.flush())
        } else {
            let mut out = out;
            encode_into(&mut out, format, grid, rule, generation).and_then(|()| out.flush())
        };
        written.map_err(|e| Error::io(path, e))
    })
}

/// The first bytes of a gzip stream.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// A UTF-8 byte-order mark.
const UTF8_BOM: [u8; 3] = [0xef, 0xbb, 0xbf];

/// All of `reader` (the file `path`, or its inflated contents), refused past `limit` bytes and
/// read into memory allocated fallibly, so that neither a large file under a memory limit nor
/// a small archive that inflates without end can abort the process.
fn read_bounded(path: &Path, reader: impl std::io::Read, limit: u64) -> Result<Vec<u8>> {
    read_bounded_sized(path, reader, limit, 0)
}

/// [`read_bounded`] for a reader expected to give `expected` bytes, whose memory the caller
/// has checked: read in place, without growing (and copying) the buffer on the way.
fn read_bounded_sized(
    path: &Path,
    reader: impl std::io::Read,
    limit: u64,
    expected: u64,
) -> Result<Vec<u8>> {
    const CHUNK: usize = 1 << 20;
    let no_memory = |len: usize| {
        Error::Memory(format!(
            "reading {}: {len} bytes so far, and no memory for more",
            path.display()
        ))
    };
    let mut text = Vec::new();
    // One more than expected, so that the end of the file is found without growing.
    let first = expected.min(limit) as usize + 1;
    text.try_reserve_exact(first).map_err(|_| no_memory(0))?;
    let mut reader = reader.take(limit + 1);
    while text.len() as u64 <= limit {
        if text.capacity() - text.len() < CHUNK {
            // The vector grows to about twice its size, never past the limit and one byte:
            // within the memory available, which an overcommitting system would not refuse by
            // itself.
            let grown = (text.len() + CHUNK)
                .max(2 * text.capacity())
                .min(limit as usize + 1);
            crate::memory::check(grown as u64, &format!("reading {}", path.display()))?;
            text.try_reserve_exact(grown - text.len())
                .map_err(|_| no_memory(text.len()))?;
        }
        // Into the buffer's spare room, which `read_to_end` leaves unzeroed.
        let room = (text.capacity() - text.len()) as u64;
        let n = (&mut reader)
            .take(room)
            .read_to_end(&mut text)
            .map_err(|e| Error::io(path, e))?;
        if (n as u64) < room {
            // The end: the reader gave less than there was room for.
            break;
        }
    }
    if text.len() as u64 > limit {
        return Err(Error::Invalid(format!(
            "{}: more than the {limit} bytes a pattern file may have{}",
            path.display(),
            if limit == MAX_INFLATED_BYTES {
                " once decompressed"
            } else {
                ""
            }
        )));
    }
    Ok(text)
}

/// What an RLE file says before its cells, for [`write_rle_runs`]: numbers as text, so that
/// they may be of any size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RleHead {
    /// Golly's position of the top-left cell (`#CXRLE Pos=x,y`).
    pub position: (String, String),
    /// The generation (`#CXRLE Gen=`).
    pub generation: String,
    /// The box's columns and rows.
    pub size: (u64, u64),
    /// The rule, as the header's `rule =` gives it.
    pub rule: String,
    /// Cell states: 2 for `b`/`o` cells, more for Golly's multi-state letters.
    pub states: u32,
}

/// A run of cells of one row: its first column, its length and its state (not 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// The first column, from the box's left edge.
    pub x: u64,
    /// Cells.
    pub len: u64,
    /// The cells' state.
    pub state: u8,
}

/// Writes an RLE file of the box `head` describes, from its rows that hold cells: `rows` calls
/// its argument with each such row (its offset from the box's top, and its runs left to right),
/// top to bottom. Lines of at most 70 characters.
pub fn write_rle_runs(
    out: &mut impl Write,
    head: &RleHead,
    rows: impl FnOnce(&mut dyn FnMut(u64, &[Run])),
) -> std::io::Result<()> {
    writeln!(
        out,
        "#CXRLE Pos={},{} Gen={}",
        head.position.0, head.position.1, head.generation
    )?;
    writeln!(
        out,
        "x = {}, y = {}, rule = {}",
        head.size.0, head.size.1, head.rule
    )?;
    let mut line = rle::LineWriter::new(out);
    let mut result = Ok(());
    // The row the runs go to: the body starts on row 0, and each `$` ends one.
    let mut current = 0u64;
    let multi = head.states > 2;
    let mut emit = |y: u64, runs: &[Run]| -> std::io::Result<()> {
        if y > current {
            line.tag((y - current) as usize, b"$")?;
            current = y;
        }
        let mut x = 0;
        for run in runs {
            if run.x > x {
                line.tag((run.x - x) as usize, if multi { b"." } else { b"b" })?;
            }
            match (multi, run.state) {
                (false, _) => line.tag(run.len as usize, b"o")?,
                (true, s) => {
                    let (letters, n) = states::letters(s as u32);
                    line.tag(run.len as usize, &letters[..n])?
                }
            }
            x = run.x + run.len;
        }
        Ok(())
    };
    rows(&mut |y, runs| {
        if result.is_ok() {
            result = emit(y, runs);
        }
    });
    result?;
    line.finish()
}

/// Encodes `grid` in `format` into memory, as [`write()`] would write it to a file.
pub fn encode(format: Format, grid: &Grid, rule: Rule, generation: u64) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(&mut out, format, grid, rule, generation).expect("writing to memory cannot fail");
    out
}

fn encode_into(
    out: &mut (impl Write + Send),
    format: Format,
    grid: &Grid,
    rule: Rule,
    generation: u64,
) -> std::io::Result<()> {
    match format {
        Format::Life106 | Format::Life105 => Err(std::io::Error::other(
            "Life 1.06 and 1.05 files are read, not written",
        )),
        Format::Rle => rle::write(out, grid, rule, generation),
        Format::Macrocell => macrocell::write(out, grid, rule, generation),
        Format::Cells if grid.states() > 2 => Err(std::io::Error::other(
            "a .cells file holds two states; write a multi-state grid as RLE or macrocell",
        )),
        Format::Cells => cells::write(out, grid, rule),
        Format::Png => crate::picture::write_png(
            out,
            &crate::picture::grid(
                grid,
                &crate::picture::View::whole(grid.width(), grid.height()),
                None,
                rule.colours(),
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
        let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |p| at + p);
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
