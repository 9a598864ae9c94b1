//! The 3D contest's `.bin` files: little-endian `u64` M, little-endian `u64` T (a generation
//! stamp), then M³ bytes, 1 alive and 0 dead, cell `(x, y, z)` at byte `16 + x·M·M + y·M + z`.
//!
//! Files are read memory-mapped and packed into a [`Cube`] line by line on all cores, and
//! written in chunks unpacked and written in parallel: a 1 GiB file never needs a 1 GiB buffer
//! of its own.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use rayon::prelude::*;

use crate::cube::{check_side, pack_lines, Cube};
use crate::error::{Error, Result};
use crate::grid::Grid;
use crate::replace::replace;

/// Bytes before the cells: M and T.
pub const HEADER_BYTES: u64 = 16;

/// Reads a `.bin` file: the cube and its generation stamp T.
///
/// Refused with a message naming the file: a file shorter than its header, a side of 0 or above
/// [`crate::cube::MAX_SIDE`], a size other than 16 + M³ bytes, a cell byte other than 0 or 1.
pub fn read(path: &Path) -> Result<(Cube, u64)> {
    let file = open(path)?;
    Ok((file.read()?, file.stamp))
}

/// A `.bin` file whose header and size were checked, mapped, its cells not yet read.
pub struct Opened {
    /// The cube's side M.
    pub side: usize,
    /// The generation stamp T.
    pub stamp: u64,
    map: Mmap,
    path: PathBuf,
}

/// Opens a `.bin` file and checks its header and size (see [`read`]).
pub fn open(path: &Path) -> Result<Opened> {
    let fail = |message: String| Error::Invalid(format!("{}: {message}", path.display()));
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if len < HEADER_BYTES {
        return Err(fail(format!(
            "{len} bytes: too short for the 16-byte header (side M and stamp T) of a .bin cube"
        )));
    }
    let map = crate::memory::map_file(path, &file)?;
    let side = u64::from_le_bytes(map[0..8].try_into().expect("8 bytes"));
    let stamp = u64::from_le_bytes(map[8..16].try_into().expect("8 bytes"));
    let expected = side
        .checked_pow(3)
        .and_then(|cells| cells.checked_add(HEADER_BYTES));
    if side == 0 || side > crate::cube::MAX_SIDE as u64 {
        check_side(side.min(usize::MAX as u64) as usize).map_err(|e| fail(e.to_string()))?;
    }
    if expected != Some(len) {
        return Err(fail(format!(
            "{len} bytes, but a cube of side {side} takes 16 + {side}³ = {} bytes (truncated, or not a .bin cube)",
            expected.map_or("more than 2⁶⁴".into(), |n| n.to_string())
        )));
    }
    Ok(Opened {
        side: side as usize,
        stamp,
        map,
        path: path.to_path_buf(),
    })
}

impl Opened {
    /// The whole cube.
    pub fn read(&self) -> Result<Cube> {
        let m = self.side;
        Cube::from_lines(self.read_lines(&(0..m * m).collect::<Vec<_>>())?)
    }

    /// Lines `lines` (line `(x, y)` is `x·M + y`; in that order, repeats allowed) as the rows of
    /// a grid of M columns: what a slab of the cube needs, without reading the rest.
    pub fn read_lines(&self, lines: &[usize]) -> Result<Grid> {
        let side = self.side;
        let mut grid = Grid::new(side, lines.len())?;
        let cells = &self.map[HEADER_BYTES as usize..];
        let line_of = |k: usize| {
            let line = lines[k];
            assert!(line < side * side, "line {line} of a cube of side {side}");
            &cells[line * side..][..side]
        };
        if let Err(bad) = pack_lines(&mut grid, line_of) {
            let line = lines[bad.line];
            return Err(Error::Invalid(format!(
                "{}: byte {} (cell x={}, y={}, z={}) is {}: cells must be 0 (dead) or 1 (alive)",
                self.path.display(),
                HEADER_BYTES as usize + line * side + bad.z,
                line / side,
                line % side,
                bad.z,
                bad.value
            )));
        }
        Ok(grid)
    }
}

/// Writes `cube` with generation stamp `stamp` as a `.bin` file. The file is written beside
/// `path` under a temporary name and renamed over it once complete, so a failed write (a full
/// disk) never leaves a truncated file or destroys the one that was there (which may be the
/// input).
pub fn write(path: &Path, cube: &Cube, stamp: u64) -> Result<()> {
    replace(path, false, |file, tmp| write_into(file, tmp, cube, stamp))
}

/// Writes the cube into `file` (empty, named `path` for messages).
fn write_into(file: &File, path: &Path, cube: &Cube, stamp: u64) -> Result<()> {
    let side = cube.side();
    assert!(
        cube.is_whole(),
        "a .bin file holds a whole cube, not a slab"
    );
    reserve(file, HEADER_BYTES + cube.cells()).map_err(|e| Error::io(path, e))?;
    let mut header = [0u8; HEADER_BYTES as usize];
    header[0..8].copy_from_slice(&(side as u64).to_le_bytes());
    header[8..16].copy_from_slice(&stamp.to_le_bytes());
    file.write_all_at(&header, 0)
        .map_err(|e| Error::io(path, e))?;
    // Chunks of whole lines, each unpacked and written at its offset, every thread taking
    // every `threads`-th chunk into one buffer of its own (a fresh buffer per chunk cost the
    // page faults of the whole file again: 1 GiB took 0.42–0.55 s to write that way on the
    // H100 host, 0.28 s reserved and through kept buffers).
    let lines_per_chunk = (WRITE_CHUNK_BYTES / side).max(1);
    let chunks = (side * side).div_ceil(lines_per_chunk);
    let threads = rayon::current_num_threads().min(chunks);
    (0..threads).into_par_iter().try_for_each(|thread| {
        let mut bytes = Vec::new();
        (thread..chunks).step_by(threads).try_for_each(|chunk| {
            let first = chunk * lines_per_chunk;
            let lines = lines_per_chunk.min(side * side - first);
            bytes.resize(lines * side, 0);
            cube.unpack_lines(first, &mut bytes);
            file.write_all_at(&bytes, HEADER_BYTES + (first * side) as u64)
                .map_err(|e| Error::io(path, e))
        })
    })
}

/// Gives the empty `file` its length `bytes`, with the disk space reserved where the file
/// system can (`fallocate`): a full disk is then refused before anything is written, and the
/// writes that follow do not each allocate blocks. Elsewhere the length alone (`set_len`).
fn reserve(file: &File, bytes: u64) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let len = libc::off_t::try_from(bytes)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        // SAFETY: fallocate reads no memory of ours; the descriptor stays open for the call.
        if unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len) } == 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::EOPNOTSUPP) {
            return Err(error);
        }
    }
    file.set_len(bytes)
}

/// Bytes each thread of [`write()`] unpacks and writes at a time.
const WRITE_CHUNK_BYTES: usize = 4 << 20;

#[cfg(test)]
mod test {
    use super::*;

    fn bytes_of(cube: &Cube, stamp: u64) -> Vec<u8> {
        let m = cube.side();
        let mut out = Vec::new();
        out.extend_from_slice(&(m as u64).to_le_bytes());
        out.extend_from_slice(&stamp.to_le_bytes());
        for x in 0..m {
            for y in 0..m {
                for z in 0..m {
                    out.push(cube.get(x, y, z) as u8);
                }
            }
        }
        out
    }

    #[test]
    fn round_trips_in_file_order() {
        let dir = tempfile::tempdir().unwrap();
        // 260: five chunks of lines, the last one shorter, through buffers the threads keep.
        for side in [1, 2, 3, 7, 8, 9, 63, 64, 65, 130, 260] {
            let cube = Cube::density_soup(side, 0.4, side as u64).unwrap();
            let path = dir.path().join(format!("c{side}.bin"));
            write(&path, &cube, 77).unwrap();
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(bytes, bytes_of(&cube, 77), "side {side}");
            let (back, stamp) = read(&path).unwrap();
            assert_eq!((back, stamp), (cube.clone(), 77));
            let opened = open(&path).unwrap();
            let lines = [side * side - 1, 0, side * side - 1];
            let some = opened.read_lines(&lines).unwrap();
            for (k, &line) in lines.iter().enumerate() {
                assert_eq!(some.row(k), cube.lines().row(line), "side {side}");
            }
        }
    }

    #[test]
    fn a_failed_write_keeps_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keep.bin");
        let cube = Cube::density_soup(4, 0.5, 2).unwrap();
        write(&path, &cube, 1).unwrap();
        let before = std::fs::read(&path).unwrap();
        // A directory where the file should go: the rename fails after the data was written.
        let blocked = dir.path().join("blocked.bin");
        std::fs::create_dir(&blocked).unwrap();
        assert!(write(&blocked, &cube, 2).is_err());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            2,
            "no temporary left"
        );
        // Writing over the input itself works: the cube is read whole before the write.
        let (read_back, _) = read(&path).unwrap();
        write(&path, &read_back, 9).unwrap();
        let after = std::fs::read(&path).unwrap();
        assert_eq!(before[16..], after[16..]);
        assert_eq!(after[8], 9);
    }

    #[test]
    fn refuses_truncated_and_inconsistent_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.bin");
        let cube = Cube::density_soup(5, 0.5, 1).unwrap();
        let mut bytes = bytes_of(&cube, 3);
        let err = |bytes: &[u8]| {
            std::fs::write(&path, bytes).unwrap();
            read(&path).unwrap_err().to_string()
        };
        assert!(err(&bytes[..10]).contains("too short"));
        assert!(
            err(&bytes[..100]).contains("truncated"),
            "{}",
            err(&bytes[..100])
        );
        bytes[16 + 2 * 25 + 3 * 5 + 4] = 7;
        let message = err(&bytes);
        assert!(
            message.contains("x=2, y=3, z=4") && message.contains("is 7"),
            "{message}"
        );
        let mut zero = bytes_of(&cube, 0);
        zero[0] = 0;
        assert!(err(&zero[..16]).contains("between 1 and"));
        let mut huge = vec![0u8; 16];
        huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(err(&huge).contains("between 1 and"));
    }
}
