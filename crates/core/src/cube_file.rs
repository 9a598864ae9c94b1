//! The 3D contest's `.bin` files: little-endian `u64` M, little-endian `u64` T (a generation
//! stamp), then M³ bytes, 1 alive and 0 dead, cell `(x, y, z)` at byte `16 + x·M·M + y·M + z`.
//!
//! Files are read memory-mapped and packed into a [`Cube`] line by line on all cores, and
//! written by unpacking the cube on all cores straight into the new file's pages, mapped, after
//! those pages were made by writing zeros ([`Output`], which a run begins before it starts): a
//! 1 GiB file never needs a 1 GiB buffer of its own.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use memmap2::{Mmap, MmapMut};
use rayon::prelude::*;

use crate::cube::{check_side, pack_lines, Cube};
use crate::error::{Error, Result};
use crate::grid::Grid;
use crate::replace::Staged;

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
/// input). See [`Output`], which this is begun and finished at once.
pub fn write(path: &Path, cube: &Cube, stamp: u64) -> Result<()> {
    Output::begin(path, cube.side())?.finish(cube, stamp)
}

/// A `.bin` file begun before its cube is known, so that a run can make it while the run
/// starts and computes. [`Output::begin`] makes the file under a temporary name beside its
/// target, reserves its space, and writes zeros over it on background threads, which puts its
/// pages in the page cache; [`Output::finish`] then unpacks the cube straight into those pages,
/// mapped, on all cores, and puts the file in place as [`write()`] does.
///
/// Most of the time of writing a large file goes to the page cache taking in new pages, which
/// `write` calls on one file do one at a time (the file's lock): 1 GiB took 0.16–0.26 s on the
/// H100 host from 16 threads. Filling pages already there through a map took 0.015–0.019 s,
/// and unmapping them 0.015 s. A run that begins its output first hides the rest behind CUDA's
/// start and the generation loop.
///
/// Dropped unfinished, it stops the background writes and removes the temporary file; the
/// file at the target stays as it was.
pub struct Output {
    // Declared first, so dropped first: the zeros stop before the file goes.
    zeros: Zeros,
    staged: Staged,
    side: usize,
}

impl Output {
    /// Begins the `.bin` file `path` for a cube of side `side`: the temporary file is made, given
    /// its length (its disk space reserved where the file system can, so that a full disk is
    /// refused here), and its zeros started.
    pub fn begin(path: &Path, side: usize) -> Result<Output> {
        check_side(side)?;
        let staged = Staged::create(path)?;
        let len = HEADER_BYTES + (side as u64).pow(3);
        let fail = |e| Error::io(staged.temporary(), e);
        reserve(staged.file(), len).map_err(fail)?;
        let zeros = Zeros::start(staged.file(), len).map_err(fail)?;
        Ok(Output {
            zeros,
            staged,
            side,
        })
    }

    /// Writes `cube`, stamped `stamp`, into the file once its zeros are written, and puts the
    /// file in place of the target. Refuses a cube of another side than the one begun.
    pub fn finish(self, cube: &Cube, stamp: u64) -> Result<()> {
        self.finish_by(cube, stamp, true)
    }

    /// [`Output::finish`], through a map of the file where `map` and the file system allow,
    /// else by writes (for file systems that cannot map a file for writing, and for tests).
    fn finish_by(self, cube: &Cube, stamp: u64, map: bool) -> Result<()> {
        let Output {
            mut zeros,
            staged,
            side,
        } = self;
        assert!(
            cube.is_whole(),
            "a .bin file holds a whole cube, not a slab"
        );
        let tmp = staged.temporary();
        if cube.side() != side {
            return Err(Error::Invalid(format!(
                "{}: begun for a cube of side {side}, given one of side {}",
                tmp.display(),
                cube.side()
            )));
        }
        zeros.wait().map_err(|e| Error::io(tmp, e))?;
        let mut header = [0u8; HEADER_BYTES as usize];
        header[0..8].copy_from_slice(&(side as u64).to_le_bytes());
        header[8..16].copy_from_slice(&stamp.to_le_bytes());
        let file = staged.file();
        // SAFETY: the map is of our own temporary file, which nothing else is expected to
        // write or truncate meanwhile, and whose pages `populate` makes present and writable
        // before they are written (a failure, such as a full disk where the space could not
        // be reserved, is then an error, not SIGBUS).
        let map = map
            .then(|| unsafe { MmapMut::map_mut(file) }.ok())
            .flatten();
        match map {
            Some(mut map) => {
                map[..HEADER_BYTES as usize].copy_from_slice(&header);
                unpack_into_map(cube, &mut map[HEADER_BYTES as usize..])
            }
            // A file system that cannot map files for writing: written a chunk at a time.
            None => file
                .write_all_at(&header, 0)
                .and_then(|()| unpack_into_writes(cube, file)),
        }
        .map_err(|e| Error::io(tmp, e))?;
        staged.commit(false)
    }
}

/// Lines of the cube per chunk of [`Output`]'s unpacking: about [`WRITE_CHUNK_BYTES`] of cells.
fn lines_per_chunk(side: usize) -> usize {
    (WRITE_CHUNK_BYTES / side).max(1)
}

/// Unpacks `cube` into `cells`, its cell bytes in a shared map of the file, a chunk of lines
/// per task.
fn unpack_into_map(cube: &Cube, cells: &mut [u8]) -> std::io::Result<()> {
    let lines = lines_per_chunk(cube.side());
    cells
        .par_chunks_mut(lines * cube.side())
        .enumerate()
        .try_for_each(|(chunk, bytes)| {
            populate(bytes)?;
            cube.unpack_lines(chunk * lines, bytes);
            Ok(())
        })
}

/// Unpacks `cube` a chunk of lines at a time and writes each at its offset in `file`, every
/// thread taking every `threads`-th chunk into one buffer of its own (a fresh buffer per chunk
/// would fault the pages of the whole file in again).
fn unpack_into_writes(cube: &Cube, file: &File) -> std::io::Result<()> {
    let side = cube.side();
    let lines_per_chunk = lines_per_chunk(side);
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
        })
    })
}

/// Makes the pages under `bytes`, part of a shared writable map of a file, present and
/// writable (Linux's `MADV_POPULATE_WRITE`), so that a page the file system cannot give is an
/// error here rather than SIGBUS at the write. Kernels before 5.14 lack the advice (`EINVAL`):
/// the pages are then faulted in by the writes themselves, as in any map.
fn populate(bytes: &mut [u8]) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf reads a constant of the system.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let start = bytes.as_mut_ptr() as usize;
        let first_page = start & !(page - 1);
        // SAFETY: the range runs from the start of the page holding `bytes` to their end, all
        // inside the map (which starts on a page); the advice only faults those pages in,
        // changing no byte of them.
        let status = unsafe {
            libc::madvise(
                first_page as *mut libc::c_void,
                start - first_page + bytes.len(),
                libc::MADV_POPULATE_WRITE,
            )
        };
        if status != 0 {
            let error = std::io::Error::last_os_error();
            if error.raw_os_error() != Some(libc::EINVAL) {
                return Err(error);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bytes;
    Ok(())
}

/// The zeros [`Output`] writes over its file on background threads, each writing every
/// `threads`-th chunk. Dropped before they are done, they stop after the chunks being written.
struct Zeros {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<std::io::Result<()>>>,
}

impl Zeros {
    fn start(file: &File, len: u64) -> std::io::Result<Zeros> {
        let chunk = WRITE_CHUNK_BYTES as u64;
        let chunks = len.div_ceil(chunk);
        let count = (ZERO_THREADS as u64).min(chunks);
        let mut zeros = Zeros {
            stop: Arc::new(AtomicBool::new(false)),
            threads: Vec::new(),
        };
        for thread in 0..count {
            let file = file.try_clone()?;
            let stop = Arc::clone(&zeros.stop);
            let writes = move || {
                let bytes = vec![0u8; WRITE_CHUNK_BYTES];
                for at in (thread * chunk..len).step_by((count * chunk) as usize) {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let n = chunk.min(len - at) as usize;
                    file.write_all_at(&bytes[..n], at)?;
                }
                Ok(())
            };
            let handle = std::thread::Builder::new()
                .name("gol-bin-zeros".into())
                .spawn(writes)?;
            zeros.threads.push(handle);
        }
        Ok(zeros)
    }

    /// Waits for the threads; the first error any of them met.
    fn wait(&mut self) -> std::io::Result<()> {
        let mut first = Ok(());
        for thread in self.threads.drain(..) {
            let result = thread
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            first = first.and(result);
        }
        first
    }
}

impl Drop for Zeros {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.wait();
    }
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

/// Bytes of cells in each chunk that [`Output`] zeros, unpacks or writes at a time.
const WRITE_CHUNK_BYTES: usize = 4 << 20;

/// Threads that write [`Output`]'s zeros: writes to one file take its lock in turn, and 4
/// threads kept it as busy as 16 on the H100 host (0.17–0.19 s for 1 GiB; one thread took
/// 0.22–0.27 s).
const ZERO_THREADS: usize = 4;

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
    fn mapped_and_written_fills_give_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        // 300: 90000 lines in chunks of 13981, the last one shorter; 1, 2 and 33: one chunk.
        for side in [1, 2, 33, 300] {
            let cube = Cube::density_soup(side, 0.3, 5).unwrap();
            let expected = bytes_of(&cube, 12);
            for map in [true, false] {
                let path = dir.path().join(format!("f{side}.bin"));
                // Over a file of other contents and length, which the output must replace.
                std::fs::write(&path, vec![7u8; 1000]).unwrap();
                Output::begin(&path, side)
                    .unwrap()
                    .finish_by(&cube, 12, map)
                    .unwrap();
                assert!(std::fs::read(&path).unwrap() == expected, "side {side}");
            }
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 4);
    }

    #[test]
    fn an_output_dropped_or_refused_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.bin");
        std::fs::write(&path, b"old").unwrap();
        // Dropped while its zeros are being written (96 MiB: 24 chunks on 4 threads).
        drop(Output::begin(&path, 464).unwrap());
        let wrong = Cube::density_soup(5, 0.5, 1).unwrap();
        let err = Output::begin(&path, 6)
            .unwrap()
            .finish(&wrong, 0)
            .unwrap_err();
        assert!(
            err.to_string().contains("side 6, given one of side 5"),
            "{err}"
        );
        assert!(Output::begin(&path, 0).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
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
