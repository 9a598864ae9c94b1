//! Checkpoints of long runs: the whole state with its rule and generation count, written
//! atomically (temporary file, `fsync`, rename) and checked on reading (a CRC-32 of the whole
//! file, the sizes, the padding bits).
//!
//! A checkpoint holds the world's rows ([`World::rows`]) in the [`Grid`] layout, whatever
//! engine, slab decomposition or number of processes wrote it, so that any of them can resume
//! it. Ranks that hold a slab each read only their rows ([`Opened::read_rows`]) and write through
//! one streaming writer ([`write_with`]), so no process ever needs the whole world at once.
//!
//! # File layout (little-endian)
//!
//! | offset | bytes | what |
//! | ---: | ---: | --- |
//! | 0 | 8 | magic `GOLCHKPT` |
//! | 8 | 4 | format version, 1 |
//! | 12 | 4 | dimension: 2 or 3 |
//! | 16 | 8 | W, cells per row (the side M in 3D) |
//! | 24 | 8 | R, rows (the height in 2D, the M² lines in 3D) |
//! | 32 | 8 | stamp: the generation count of the run's starting state (a `.bin` input's T) |
//! | 40 | 8 | done: generations advanced from that starting state |
//! | 48 | 4 | n, the length of the rule text |
//! | 52 | n | the rule in B/S notation |
//! | 52 + n | 8 · R · ⌈W / 64⌉ | the rows, each ⌈W / 64⌉ words (see [`crate::grid`]) |
//! | | 8 · R · P · ⌈W / 64⌉ | under a Generations rule of C states, the dying cells' ages: P = [`grid::age_planes`]`(C)` planes a row, laid out as [`Grid::ages`] |
//! | end − 4 | 4 | CRC-32 (ISO-HDLC, as zlib) of every byte before it |
//!
//! # The infinite plane
//!
//! A checkpoint of the plane ([`write_plane`], [`open_plane`]) holds the state as Golly's
//! macrocell text, whose `#G` line is the generation reached (the input's stamp plus the
//! generations advanced), with the generations advanced written before it:
//!
//! | offset | bytes | what |
//! | ---: | ---: | --- |
//! | 0 | 8 | magic `GOLPLANE` |
//! | 8 | 4 | format version, 1 |
//! | 12 | 4 | n, the length of the next field |
//! | 16 | n | done: the generations advanced from the starting state, in decimal (any size) |
//! | 16 + n | | the macrocell file (`[M2]`, `#R rule`, `#G generation`, the nodes) |
//! | end − 4 | 4 | CRC-32 of every byte before it |

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use num_bigint::BigUint;
use rayon::prelude::*;

use crate::engine::World;
use crate::error::{Error, Result};
use crate::grid::{self, Grid};
use crate::replace::replace;
use crate::rule::Rule;

const MAGIC: &[u8; 8] = b"GOLCHKPT";
const PLANE_MAGIC: &[u8; 8] = b"GOLPLANE";
/// The longest decimal count of generations accepted in a plane checkpoint.
const MAX_DONE_DIGITS: usize = 4096;
const VERSION: u32 = 1;
/// Bytes of the header before the rule text.
const FIXED_BYTES: usize = 52;
/// The longest rule text accepted (a 3D rule listing every count is under 100 bytes).
const MAX_RULE_BYTES: usize = 1024;
/// Bytes each thread reads and checks at a time.
const CHUNK_BYTES: usize = 8 << 20;

/// What a checkpoint says besides its cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// 2 or 3.
    pub dimension: u32,
    /// Cells per row (the side in 3D).
    pub width: usize,
    /// Rows (the height in 2D, M² lines in 3D).
    pub rows: usize,
    /// The generation count of the starting state (a `.bin` input's stamp, else 0).
    pub stamp: u64,
    /// Generations advanced from the starting state.
    pub done: u64,
    /// The rule the run advances under.
    pub rule: Rule,
}

impl Header {
    /// The header of a checkpoint of `world`.
    pub fn of<W: World>(world: &W, rule: Rule, stamp: u64, done: u64) -> Header {
        let rows = world.rows();
        Header {
            dimension: W::AXES,
            width: rows.width(),
            rows: rows.height(),
            stamp,
            done,
            rule,
        }
    }

    fn words_per_row(&self) -> usize {
        grid::words_per_row(self.width)
    }

    /// Rows of words the file holds: the live cells' rows, then the rows of the dying cells'
    /// age planes under a Generations rule.
    fn data_rows(&self) -> usize {
        self.rows * (1 + grid::age_planes(self.rule.states()))
    }

    fn encode(&self) -> Vec<u8> {
        let rule = self.rule.to_string();
        let mut bytes = Vec::with_capacity(FIXED_BYTES + rule.len());
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&VERSION.to_le_bytes());
        bytes.extend_from_slice(&self.dimension.to_le_bytes());
        for n in [self.width as u64, self.rows as u64, self.stamp, self.done] {
            bytes.extend_from_slice(&n.to_le_bytes());
        }
        bytes.extend_from_slice(&(rule.len() as u32).to_le_bytes());
        bytes.extend_from_slice(rule.as_bytes());
        bytes
    }

    /// Fails unless a run of `W` can resume from this checkpoint.
    pub fn check_dimension<W: World>(&self, path: &Path) -> Result<()> {
        if self.dimension != W::AXES {
            return Err(invalid(
                path,
                format!(
                    "a {}D checkpoint cannot resume a {} run",
                    self.dimension,
                    W::DIMENSION
                ),
            ));
        }
        Ok(())
    }
}

fn invalid(path: &Path, message: String) -> Error {
    Error::Invalid(format!("{}: {message}", path.display()))
}

/// Writes a checkpoint of `world` to `path` atomically and durably.
pub fn write<W: World>(path: &Path, world: &W, rule: Rule, stamp: u64, done: u64) -> Result<()> {
    let rows = world.rows();
    if rows.states() > 2 && rows.states() != rule.states() {
        return Err(Error::Invalid(format!(
            "{}: a grid of {} states cannot be saved under rule {rule}",
            path.display(),
            rows.states()
        )));
    }
    write_with(path, &Header::of(world, rule, stamp, done), |sink| {
        sink.put(rows.words())?;
        if rule.is_multi_state() {
            match rows.states() {
                2 => sink.put(&vec![
                    0;
                    rows.words().len() * grid::age_planes(rule.states())
                ])?,
                _ => sink.put(rows.ages())?,
            }
        }
        Ok(())
    })
}

/// Where [`write_with`] takes the rows, in order.
pub struct RowSink<'a> {
    out: BufWriter<&'a File>,
    path: &'a Path,
    hasher: crc32fast::Hasher,
    words_left: u64,
    mask: u64,
    words_per_row: usize,
}

impl RowSink<'_> {
    /// Appends whole rows (`words` holds a multiple of the row length).
    pub fn put(&mut self, words: &[u64]) -> Result<()> {
        assert_eq!(words.len() % self.words_per_row, 0, "whole rows only");
        assert!(
            words.len() as u64 <= self.words_left,
            "more rows than the header says"
        );
        debug_assert!(words
            .chunks(self.words_per_row)
            .all(|row| row[self.words_per_row - 1] & !self.mask == 0));
        self.words_left -= words.len() as u64;
        for chunk in words.chunks(CHUNK_BYTES / 8) {
            let bytes = words_as_bytes(chunk);
            self.hasher.update(&bytes);
            self.out
                .write_all(&bytes)
                .map_err(|e| Error::io(self.path, e))?;
        }
        Ok(())
    }
}

/// The words of `words` as little-endian bytes.
fn words_as_bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Writes a checkpoint with `header` to `path` atomically and durably, its rows given by `fill`
/// in order through a [`RowSink`] (all of them: fewer is an error and keeps the old file).
pub fn write_with(
    path: &Path,
    header: &Header,
    fill: impl FnOnce(&mut RowSink) -> Result<()>,
) -> Result<()> {
    replace(path, true, |file, tmp| {
        let head = header.encode();
        let mut sink = RowSink {
            out: BufWriter::with_capacity(1 << 20, file),
            path: tmp,
            hasher: crc32fast::Hasher::new(),
            words_left: header.data_rows() as u64 * header.words_per_row() as u64,
            mask: grid::last_word_mask(header.width),
            words_per_row: header.words_per_row(),
        };
        sink.hasher.update(&head);
        sink.out.write_all(&head).map_err(|e| Error::io(tmp, e))?;
        fill(&mut sink)?;
        if sink.words_left != 0 {
            return Err(Error::Invalid(format!(
                "{}: checkpoint incomplete ({} words missing)",
                path.display(),
                sink.words_left
            )));
        }
        let crc = sink.hasher.clone().finalize();
        sink.out
            .write_all(&crc.to_le_bytes())
            .and_then(|()| sink.out.flush())
            .map_err(|e| Error::io(tmp, e))
    })
}

/// A checkpoint file whose header has been read and checked.
pub struct Opened {
    /// What the checkpoint holds.
    pub header: Header,
    path: PathBuf,
    file: File,
    /// Where the rows begin.
    data_offset: u64,
}

/// Opens the checkpoint at `path` and checks its header and length (the cells and checksum are
/// checked by [`Opened::read_rows`]).
pub fn open(path: &Path) -> Result<Opened> {
    let fail = |message: String| invalid(path, message);
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    let mut fixed = [0u8; FIXED_BYTES];
    let head = (len as usize).min(FIXED_BYTES);
    file.read_exact_at(&mut fixed[..head], 0)
        .map_err(|e| Error::io(path, e))?;
    if head < MAGIC.len() || &fixed[0..8] != MAGIC {
        return Err(fail("not a gol checkpoint (no GOLCHKPT magic)".into()));
    }
    if len < FIXED_BYTES as u64 + 4 {
        return Err(fail(format!("{len} bytes: too short for a checkpoint")));
    }
    let u32_at = |at: usize| u32::from_le_bytes(fixed[at..at + 4].try_into().expect("4 bytes"));
    let u64_at = |at: usize| u64::from_le_bytes(fixed[at..at + 8].try_into().expect("8 bytes"));
    let version = u32_at(8);
    if version != VERSION {
        return Err(fail(format!(
            "checkpoint format version {version}; this gol reads version {VERSION}"
        )));
    }
    let dimension = u32_at(12);
    if dimension != 2 && dimension != 3 {
        return Err(fail(format!(
            "dimension {dimension} (expected 2 or 3): corrupted"
        )));
    }
    let (width, rows) = (u64_at(16), u64_at(24));
    if width == 0 || rows == 0 || width > grid::MAX_SIDE as u64 || rows > (1u64 << 40) {
        return Err(fail(format!("a {width}x{rows} state: corrupted")));
    }
    let rule_len = u32_at(48) as usize;
    if rule_len > MAX_RULE_BYTES {
        return Err(fail(format!("a rule of {rule_len} bytes: corrupted")));
    }
    let mut rule = vec![0u8; rule_len];
    file.read_exact_at(&mut rule, FIXED_BYTES as u64)
        .map_err(|_| fail("truncated in its header".into()))?;
    let rule = std::str::from_utf8(&rule)
        .ok()
        .and_then(|text| Rule::parse(text).ok())
        .ok_or_else(|| fail("its rule does not parse: corrupted".into()))?;
    let header = Header {
        dimension,
        width: width as usize,
        rows: rows as usize,
        stamp: u64_at(32),
        done: u64_at(40),
        rule,
    };
    let data_offset = (FIXED_BYTES + rule_len) as u64;
    let expected = data_offset + 8 * header.data_rows() as u64 * header.words_per_row() as u64 + 4;
    if len != expected {
        return Err(fail(format!(
            "{len} bytes, but a {width}x{rows} checkpoint takes {expected}: truncated or corrupted"
        )));
    }
    Ok(Opened {
        header,
        path: path.to_path_buf(),
        file,
        data_offset,
    })
}

impl Opened {
    /// Rows `rows` (in that order, repeats allowed) as a grid of that many rows, after
    /// checking the CRC of the whole file (read in parallel chunks; only the rows asked for are
    /// kept) and that no padding bit is set. Under a Generations rule the rows from
    /// [`Header::rows`] on are those of the dying cells' ages ([`Opened::read`] reads them).
    pub fn read_rows(&self, rows: &[usize]) -> Result<Grid> {
        let h = &self.header;
        let data_rows = h.data_rows();
        let fail = |message: String| invalid(&self.path, message);
        let mut out = Grid::new(h.width, rows.len())?;
        let wpr = h.words_per_row();
        let mask = grid::last_word_mask(h.width);
        let total = self.data_offset + 8 * (data_rows * wpr) as u64;
        // (global row, place in `out`), sorted so that each chunk finds its rows by search.
        let mut wanted: Vec<(usize, usize)> =
            rows.iter().enumerate().map(|(i, &y)| (y, i)).collect();
        wanted.sort_unstable();
        assert!(
            wanted.last().is_none_or(|&(y, _)| y < data_rows),
            "rows beyond the checkpoint"
        );
        // Chunks of whole rows; the first also holds the header.
        let chunk_rows = (CHUNK_BYTES / 8 / wpr).max(1);
        let chunks = data_rows.div_ceil(chunk_rows);
        let out_rows = std::sync::Mutex::new(&mut out);
        let hashers = (0..chunks)
            .into_par_iter()
            .map(|c| {
                let first = c * chunk_rows;
                let last = (first + chunk_rows).min(data_rows);
                let cells_at = self.data_offset + 8 * (first * wpr) as u64;
                let from = if c == 0 { 0 } else { cells_at };
                let to = self.data_offset + 8 * (last * wpr) as u64;
                let mut bytes = vec![0u8; (to - from) as usize];
                self.file
                    .read_exact_at(&mut bytes, from)
                    .map_err(|e| Error::io(&self.path, e))?;
                let mut hasher = crc32fast::Hasher::new();
                hasher.update(&bytes);
                let words: Vec<u64> = bytes[(cells_at - from) as usize..]
                    .chunks_exact(8)
                    .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
                    .collect();
                if let Some(bad) = words.chunks(wpr).position(|row| row[wpr - 1] & !mask != 0) {
                    return Err(fail(format!(
                        "row {} has cells beyond its width {}: corrupted",
                        first + bad,
                        h.width
                    )));
                }
                let start = wanted.partition_point(|&(y, _)| y < first);
                let end = wanted.partition_point(|&(y, _)| y < last);
                if start < end {
                    let mut out = out_rows.lock().expect("no panic while copying");
                    for &(y, at) in &wanted[start..end] {
                        out.row_mut(at)
                            .copy_from_slice(&words[(y - first) * wpr..(y - first + 1) * wpr]);
                    }
                }
                Ok(hasher)
            })
            .collect::<Result<Vec<_>>>()?;
        let mut crc = crc32fast::Hasher::new();
        for hasher in hashers {
            crc.combine(&hasher);
        }
        let mut stored = [0u8; 4];
        self.file
            .read_exact_at(&mut stored, total)
            .map_err(|e| Error::io(&self.path, e))?;
        let (computed, stored) = (crc.finalize(), u32::from_le_bytes(stored));
        if computed != stored {
            return Err(fail(format!(
                "checksum mismatch (stored {stored:08x}, computed {computed:08x}): the checkpoint is corrupted"
            )));
        }
        Ok(out)
    }

    /// The whole world, checked like [`Opened::read_rows`].
    pub fn read<W: World>(&self) -> Result<W> {
        let h = &self.header;
        h.check_dimension::<W>(&self.path)?;
        let data = self.read_rows(&(0..h.data_rows()).collect::<Vec<_>>())?;
        if !h.rule.is_multi_state() {
            return W::from_rows(data);
        }
        let mut grid = Grid::with_states(h.width, h.rows, h.rule.states())?;
        let (live, ages) = data.words().split_at(grid.words().len());
        let dying = ages
            .chunks(h.words_per_row())
            .enumerate()
            .find_map(|(i, ages)| {
                let y = i / grid::age_planes(h.rule.states());
                ages.iter()
                    .zip(grid::words_per_row(h.width) * y..)
                    .any(|(&a, k)| a & live[k] != 0)
                    .then_some(y)
            });
        if let Some(y) = dying {
            return Err(invalid(
                &self.path,
                format!("row {y} has cells both alive and dying: corrupted"),
            ));
        }
        grid.words_mut().copy_from_slice(live);
        grid.ages_mut().copy_from_slice(ages);
        W::from_rows(grid)
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::cube::Cube;
    use crate::seed::density_soup;

    fn roundtrip_header(dir: &Path) -> (PathBuf, Grid) {
        let grid = density_soup(130, 77, 0.4, 3).unwrap();
        let path = dir.join("a.ckpt");
        write(&path, &grid, Rule::parse("B36/S23").unwrap(), 5, 600).unwrap();
        (path, grid)
    }

    #[test]
    fn round_trips_grids_cubes_and_row_ranges() {
        let dir = tempfile::tempdir().unwrap();
        let (path, grid) = roundtrip_header(dir.path());
        let opened = open(&path).unwrap();
        assert_eq!(
            opened.header,
            Header {
                dimension: 2,
                width: 130,
                rows: 77,
                stamp: 5,
                done: 600,
                rule: Rule::parse("B36/S23").unwrap()
            }
        );
        assert_eq!(opened.read::<Grid>().unwrap(), grid);
        let wanted = [76, 0, 10, 11, 76];
        let rows = opened.read_rows(&wanted).unwrap();
        for (i, &y) in wanted.iter().enumerate() {
            assert_eq!(rows.row(i), grid.row(y));
        }
        assert!(opened
            .read::<Cube>()
            .unwrap_err()
            .to_string()
            .contains("2D checkpoint"));

        let cube = Cube::density_soup(9, 0.3, 1).unwrap();
        let path = dir.path().join("c.ckpt");
        write(&path, &cube, Rule::LIFE_3D, 0, 1).unwrap();
        assert_eq!(open(&path).unwrap().read::<Cube>().unwrap(), cube);
    }

    #[test]
    fn streamed_rows_make_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let (path, grid) = roundtrip_header(dir.path());
        let streamed = dir.path().join("b.ckpt");
        let header = open(&path).unwrap().header;
        write_with(&streamed, &header, |sink| {
            for y in 0..grid.height() {
                sink.put(grid.row(y))?;
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            std::fs::read(&streamed).unwrap()
        );
        // Too few rows: refused, and the old file stays.
        let err = write_with(&streamed, &header, |sink| sink.put(grid.row(0))).unwrap_err();
        assert!(err.to_string().contains("incomplete"), "{err}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            std::fs::read(&streamed).unwrap()
        );
    }

    #[test]
    fn refuses_every_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = roundtrip_header(dir.path());
        let good = std::fs::read(&path).unwrap();
        let check = |bytes: &[u8], expect: &str| {
            std::fs::write(&path, bytes).unwrap();
            let err = open(&path).and_then(|o| o.read::<Grid>()).unwrap_err();
            assert!(err.to_string().contains(expect), "{expect}: {err}");
        };
        // A flipped bit in the cells or the trailer is caught (by the checksum, or first by
        // the padding check where it lands beyond a row's width).
        for at in [60, 100, good.len() / 2, good.len() - 5, good.len() - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            check(&bad, "corrupted");
        }
        let mut bad = good.clone();
        bad[good.len() - 1] ^= 1;
        check(&bad, "checksum mismatch");
        check(&good[..good.len() - 1], "truncated");
        check(&good[..10], "too short");
        check(&good[..5], "not a gol checkpoint");
        let mut bad = good.clone();
        bad[0] = b'X';
        check(&bad, "not a gol checkpoint");
        let mut bad = good.clone();
        bad[8] = 9;
        check(&bad, "format version 9");
        let mut bad = good.clone();
        bad[16] = 131; // width 131 instead of 130: same words per row, padding bits now cells
        check(&bad, "checksum mismatch");
        let mut bad = good.clone();
        bad[24] = 78; // one row more than the file holds
        check(&bad, "truncated or corrupted");
    }
}

/// Whether the file at `path` begins as a checkpoint of the infinite plane does.
pub fn is_plane(path: &Path) -> bool {
    let mut magic = [0u8; 8];
    File::open(path)
        .and_then(|file| file.read_exact_at(&mut magic, 0))
        .is_ok_and(|()| &magic == PLANE_MAGIC)
}

/// A checkpoint of the infinite plane, read and checked ([`open_plane`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlaneState {
    /// Generations advanced from the starting state.
    pub done: BigUint,
    /// The state as a macrocell file.
    pub macrocell: Vec<u8>,
}

/// Writes a checkpoint of the plane to `path` atomically and durably: `done` generations
/// advanced, the state as the macrocell text `macrocell`.
pub fn write_plane(path: &Path, done: &BigUint, macrocell: &[u8]) -> Result<()> {
    let done = done.to_string();
    replace(path, true, |file, tmp| {
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let mut hasher = crc32fast::Hasher::new();
        let mut put = |bytes: &[u8]| -> Result<()> {
            hasher.update(bytes);
            out.write_all(bytes).map_err(|e| Error::io(tmp, e))
        };
        put(PLANE_MAGIC)?;
        put(&VERSION.to_le_bytes())?;
        put(&(done.len() as u32).to_le_bytes())?;
        put(done.as_bytes())?;
        put(macrocell)?;
        let crc = hasher.finalize();
        out.write_all(&crc.to_le_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| Error::io(tmp, e))
    })
}

/// Reads the checkpoint of the plane at `path`, refused when it is not one, is truncated or
/// fails its CRC.
pub fn open_plane(path: &Path) -> Result<PlaneState> {
    let fail = |message: String| invalid(path, message);
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    if bytes.len() < 8 || &bytes[..8] != PLANE_MAGIC {
        return Err(fail(
            "not a gol checkpoint of the plane (no GOLPLANE magic)".into(),
        ));
    }
    if bytes.len() < 20 {
        return Err(fail(format!("{} bytes: truncated", bytes.len())));
    }
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    let crc = u32::from_le_bytes(crc.try_into().expect("4 bytes"));
    if crc32fast::hash(body) != crc {
        return Err(fail(
            "its CRC-32 does not match: truncated or corrupted".into(),
        ));
    }
    let version = u32::from_le_bytes(body[8..12].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(fail(format!(
            "checkpoint format version {version}; this gol reads version {VERSION}"
        )));
    }
    let n = u32::from_le_bytes(body[12..16].try_into().expect("4 bytes")) as usize;
    let done = body
        .get(16..16 + n)
        .filter(|_| n <= MAX_DONE_DIGITS)
        .and_then(|d| std::str::from_utf8(d).ok())
        .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| fail("its generation count is not a number: corrupted".into()))?;
    Ok(PlaneState {
        done: done.parse().expect("decimal digits"),
        macrocell: body[16 + n..].to_vec(),
    })
}
