//! The census's soups on the GPU: square boxes of cells ([`SIDES`]), each holding one soup
//! stepped under B3/S23 until it settles, dies, comes near the box's edge or runs out of
//! generations (`kernels/soups.cu`, whose header gives the bit layout). What to do then (take
//! escaping ships away, name the ash, give a soup to the CPU) is the census's (gol-census's
//! `gpu` module); this is the device side only.

use std::sync::Arc;

use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{
    CudaEvent, CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PinnedHostSlice,
    PushKernelArg, ValidAsZeroBits,
};

use crate::device::Gpu;
use crate::error::Result;
use crate::source::soups::warps;
pub use crate::source::soups::{source, BAND, ISOLATION, LOGGED, MOST_KINDS, SIDES};

/// A kind of object that soups_live names where it stands apart, in one orientation and phase:
/// a window of 8 × 8 cells, row by row, bit `i` of a row its column `i`, whose corner is two
/// rows and columns before the corner of the object's envelope (its cells in both phases,
/// four or fewer a side): its live cells in this phase, its envelope, and its envelope with
/// every cell next to it (as a king moves). The object stands apart where the envelope of the
/// ash (its cells and its next generation's) has nothing else next to the object's envelope.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lone {
    /// Its live cells.
    pub live: [u8; 8],
    /// Its cells in both phases.
    pub envelope: [u8; 8],
    /// Its envelope and the cells next to it.
    pub around: [u8; 8],
}

// SAFETY: `#[repr(C)]` fields in the order and of the types of the kernels' `struct Lone`.
unsafe impl DeviceRepr for Lone {}
// SAFETY: bytes only; all zeros is a window (of an object with no cells, which no box has).
unsafe impl ValidAsZeroBits for Lone {}

/// A glider the kernel took away, as its log holds it: at `generation`, phase `phase` of the
/// census's table (the kernel's `gliders`), its 3 × 3 box's top-left cell at (`x`, `y`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Taken {
    /// The generation it was taken away at.
    pub generation: u32,
    /// Its phase in the table of glider phases the boxes were made with.
    pub phase: usize,
    /// Its box's left column.
    pub x: usize,
    /// Its box's top row.
    pub y: usize,
}

impl Taken {
    /// A log entry read (`generation << 32 | 1 | phase << 1 | x << 5 | y << 16`).
    fn of(entry: u64) -> Taken {
        let low = entry as u32;
        Taken {
            generation: (entry >> 32) as u32,
            phase: (low >> 1 & 15) as usize,
            x: (low >> 5 & 0x7ff) as usize,
            y: (low >> 16 & 0x7ff) as usize,
        }
    }
}

/// The shared memory a launch of soups_run is given for a box of `side` cells a side: the box,
/// its rows a word longer (the kernel's STRIDE), and a row above and below.
fn run_shared_bytes(side: usize) -> u32 {
    ((side + 2) * (side / 32 + 1) * 4) as u32
}

/// Shared memory a launch of `run` (soups_run, built for boxes of `side`) takes in all: the
/// kernel's own and the box's.
fn launch_shared_bytes(run: &CudaFunction, side: usize) -> Result<usize> {
    let own = run.get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?;
    Ok(own as usize + run_shared_bytes(side) as usize)
}

/// Where a soup's top-left cell is placed in a box of `side` cells (both coordinates): its
/// middle.
pub fn left(side: usize) -> usize {
    side / 2 - 8
}

/// 32-bit words in a box of `side` cells a side.
fn box_words(side: usize) -> usize {
    side * side / 32
}

/// The live words `words` of a box of `from` cells a side as those of a box of `to` cells
/// (larger), each cell as far from the box's middle as it was: where a soup moved from the
/// one to the other goes on.
pub fn moved_words(words: &[u64], from: usize, to: usize) -> Vec<u64> {
    let shift = left(to) - left(from);
    assert!(
        to > from && shift.is_multiple_of(32),
        "a larger box, the soup moved by whole words"
    );
    let (across, wider) = ((from / 32) as u64, (to / 32) as u64);
    let shift = shift as u64;
    words
        .iter()
        .map(|&entry| {
            let place = entry >> 32;
            let (y, w) = (place / across, place % across);
            ((y + shift) * wider + w + shift / 32) << 32 | (entry & 0xffff_ffff)
        })
        .collect()
}

/// The copies of each box in `cells`: two, the second soups_run's, where a generation's tiles
/// wait to be stored into the box it keeps in shared memory.
const COPIES: usize = 2;

/// Where a soup stands (the kernels' numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Still being stepped.
    Running = 0,
    /// It repeats with [`SoupState::period`] from [`SoupState::shot_at`] on, as far as the
    /// hashes of its generations tell.
    Settled,
    /// A cell came into the band; nothing was stepped after.
    Paused,
    /// No cell is left.
    Died,
    /// It reached the generation limit of [`SoupBoxes::start`].
    GivenUp,
}

/// A soup's state as the kernels keep it (their `struct Soup`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SoupState {
    /// Generations stepped.
    pub generation: u32,
    /// The first row of the box with live cells.
    pub top: u32,
    /// The last row of the box with live cells.
    pub bottom: u32,
    status: u32,
    /// The generation whose hash is kept to find the pattern back ([`NO_SHOT`]: none yet).
    pub shot_at: u32,
    /// Its period, once settled.
    pub period: u32,
    /// Gliders the kernel took away since the soup was placed or last looked at: the first
    /// entries of its log.
    pub taken: u32,
    shot: u64,
}

// SAFETY: `#[repr(C)]` fields in the order and of the types of the kernels' `struct Soup`.
unsafe impl DeviceRepr for SoupState {}
// SAFETY: integers only; all zeros is a state (a running soup at generation 0).
unsafe impl ValidAsZeroBits for SoupState {}

/// [`SoupState::shot_at`] of a soup that has no shot yet: its next generation's is taken.
pub const NO_SHOT: u32 = u32::MAX;

impl SoupState {
    /// A soup's state at `generation`, standing at `status`, with cells in rows `top..=bottom`
    /// (and `period`, where settled).
    pub fn new(status: Status, generation: u32, top: u32, bottom: u32, period: u32) -> SoupState {
        SoupState {
            generation,
            top,
            bottom,
            status: status as u32,
            shot_at: NO_SHOT,
            period,
            taken: 0,
            shot: 0,
        }
    }

    /// Where the soup stands.
    pub fn status(&self) -> Status {
        match self.status {
            0 => Status::Running,
            1 => Status::Settled,
            2 => Status::Paused,
            3 => Status::Died,
            _ => Status::GivenUp,
        }
    }

    /// Runs the soup on, its rows of cells now `top..=bottom`, from a new shot (after cells
    /// were taken away from a paused soup), its log read.
    pub fn resume(&mut self, top: u32, bottom: u32) {
        self.top = top;
        self.bottom = bottom;
        self.status = 0;
        self.shot_at = NO_SHOT;
        self.taken = 0;
    }
}

/// Threads a block of every kernel here but soups_run, which has `warps(side)` warps a box
/// (the kernels' THREADS).
const BLOCK: u32 = 256;

/// Live words gathered after each run at most, at first ([`SoupBoxes::read_back`] makes more
/// room where a run stops more): 32 MiB. A stopped soup has some hundreds.
const LIVE_WORDS: usize = 1 << 22;

/// Boxes for soups on one GPU: `slots` of them, each with its state.
pub struct SoupBoxes {
    side: usize,
    /// Where everything but soups_run is queued, at the GPU's greatest priority: the other
    /// kernels are short, and a block of a kernel waits until every block of those queued
    /// before it at its priority has started, which for the other boxes' soups_run is most of
    /// its length (50 to 80 ms, measured, before a soups_live began).
    stream: Arc<CudaStream>,
    /// Where soups_run is queued, at the least priority, after what `stream` holds.
    running: Arc<CudaStream>,
    /// Recorded on `stream` after the soups stopped in the last run were gathered.
    done: Option<CudaEvent>,
    cells: CudaSlice<u32>,
    states: CudaSlice<SoupState>,
    run: CudaFunction,
    place: CudaFunction,
    live_fn: CudaFunction,
    clear: CudaFunction,
    slots: usize,
    /// The glider phases the kernel takes away, and each box's log of those it took.
    gliders: CudaSlice<u32>,
    /// The kinds of object soups_live names (at least one, for a room to hand it), and
    /// how many there are.
    kinds: CudaSlice<Lone>,
    named_kinds: i32,
    log: CudaSlice<u64>,
    /// What the kernels are handed: lists of slots, soups' rows, the words, where each soup's
    /// start and the states of soups that go on, edits; and the states set,
    /// copied from page-locked memory as an [`Upload`]'s are, and for the same reason.
    list: Upload<u32>,
    rows: Upload<u16>,
    words: Upload<u64>,
    spans_of_words: Upload<u32>,
    placed: Upload<SoupState>,
    edits: Upload<u32>,
    /// Every box's state in page-locked memory: read back into, changed by the host and written
    /// back from ([`SoupBoxes::read_back`], [`SoupBoxes::write_states`]).
    set: PinnedHostSlice<SoupState>,
    /// Page-locked rooms that the live words, their spans and the log are read back into.
    live_back: Download<u64>,
    spans_back: Download<u32>,
    log_back: Download<u64>,
    /// The live words of the boxes stopped in the last run, gathered by soups_live after it
    /// with the counts of the kinds it named, and each box's span of them.
    live: CudaSlice<u64>,
    spans: CudaSlice<u32>,
    /// soups_live's count of the live words (written where `live` holds them).
    used: CudaSlice<u32>,
}

/// What [`SoupBoxes::read_back`] gives of the soups of the last run, in the boxes' own rooms
/// of page-locked memory.
pub struct Stopped<'a> {
    /// Every box's state, to be changed in place and written back by
    /// [`SoupBoxes::write_states`].
    pub states: &'a mut [SoupState],
    /// The live words of the boxes whose soups stopped.
    pub live: Live<'a>,
    /// The log of the gliders taken away, where it was asked for.
    pub log: Option<Log<'a>>,
}

/// The words with live cells of the boxes whose soups stopped ([`SoupBoxes::read_back`]),
/// or the ash the GPU named.
pub struct Live<'a> {
    /// Each box's words, each as `place << 32 | word`, place being `y * words + w` for word
    /// `w` of row `y` ([`SoupBoxes::words`]), in order of place; or, where the GPU named its
    /// ash, the kinds it has as `k << 32 | count`.
    words: &'a [u64],
    /// Where each box's entries start, how many words there are, and how many kinds.
    spans: &'a [u32],
}

impl Live<'_> {
    /// The words of the box of `slot` (none where its soup is running or died, or where the GPU
    /// named its ash).
    pub fn of(&self, slot: usize) -> &[u64] {
        let (start, n) = (
            self.spans[3 * slot] as usize,
            self.spans[3 * slot + 1] as usize,
        );
        &self.words[start..start + n]
    }

    /// The ash of the box of `slot` as the GPU named it, where it did (its soup settled with
    /// period 1 or 2, and every object of its ash is of a kind [`SoupBoxes::new`] was given,
    /// standing apart): each kind `k` of those it has, and how many, in order of `k`. Empty
    /// where it did not, or where the box has no cells.
    pub fn named(&self, slot: usize) -> impl Iterator<Item = (usize, u64)> + Clone + '_ {
        let (start, n, kinds) = (
            self.spans[3 * slot] as usize,
            self.spans[3 * slot + 1] as usize,
            self.spans[3 * slot + 2] as usize,
        );
        self.words[start + n..start + n + kinds]
            .iter()
            .map(|&entry| ((entry >> 32) as usize, entry & 0xffff_ffff))
    }
}

/// Each box's log of the gliders the kernel took away ([`SoupBoxes::read_back`]).
pub struct Log<'a>(&'a [u64]);

impl Log<'_> {
    /// The gliders taken away from the soup of box `slot`, whose state is `state`: the first
    /// [`SoupState::taken`] entries of its log.
    pub fn of(&self, slot: usize, state: &SoupState) -> impl Iterator<Item = Taken> + '_ {
        self.0[slot * LOGGED..][..state.taken as usize]
            .iter()
            .map(|&entry| Taken::of(entry))
    }
}

/// A launch of `count` blocks of [`BLOCK`] threads.
fn blocks(count: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (count as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Room for what a kernel is handed, on the device and in page-locked host memory to copy it
/// from, each grown as needed and kept: allocating and freeing device memory as the census goes
/// would wait on the other boxes' work, and so would a copy from pageable memory. Such a copy
/// waits for its stream's work queued before it, whose kernels wait for room on the GPU, which
/// the other boxes' long runs hold (19 ms a look, measured); from page-locked memory the copy
/// is queued and the host goes on.
struct Upload<T> {
    host: Option<PinnedHostSlice<T>>,
    device: Option<CudaSlice<T>>,
    /// Recorded after the last copy from `host`: the host room is written again only once it
    /// has passed (the context tracks no events, `device.rs`, so the page-locked slice's own
    /// wait would not cover the copy).
    copied: Option<CudaEvent>,
}

impl<T> Default for Upload<T> {
    fn default() -> Upload<T> {
        Upload {
            host: None,
            device: None,
            copied: None,
        }
    }
}

impl<T: DeviceRepr + ValidAsZeroBits + Copy> Upload<T> {
    /// `data` queued for copying to the start of the device room, which is grown to twice its
    /// length where shorter; the host room is written once the copy before has read it (by
    /// then, as the census goes, long since).
    fn send(&mut self, stream: &Arc<CudaStream>, data: &[T]) -> Result<&CudaSlice<T>> {
        if let Some(copied) = self.copied.take() {
            copied.synchronize()?;
        }
        if self.device.as_ref().is_none_or(|d| d.len() < data.len()) {
            self.device = None;
            self.device = Some(stream.alloc_zeros::<T>(2 * data.len())?);
        }
        let host = pinned(&mut self.host, stream, data.len())?;
        host.as_mut_slice()?[..data.len()].copy_from_slice(data);
        let device = self.device.as_mut().expect("allocated above");
        stream.memcpy_htod(host, device)?;
        self.copied = Some(stream.record_event(None)?);
        Ok(device)
    }
}

/// Room in page-locked host memory that device memory is read back into, grown as needed and
/// kept: a copy into pageable memory is staged by the driver through page-locked buffers of its
/// own, and a vector made for each copy is fresh pages to fault in (the live words are some
/// megabytes a look).
struct Download<T> {
    host: Option<PinnedHostSlice<T>>,
}

impl<T> Default for Download<T> {
    fn default() -> Download<T> {
        Download { host: None }
    }
}

impl<T: DeviceRepr + ValidAsZeroBits + Copy> Download<T> {
    /// The first `n` values of `device`, once the work queued on `stream` before has run.
    fn fetch(&mut self, stream: &Arc<CudaStream>, device: &CudaSlice<T>, n: usize) -> Result<&[T]> {
        let host = &mut pinned(&mut self.host, stream, n)?.as_mut_slice()?[..n];
        // The copy is asynchronous (page-locked memory) and reads no more than `n` values (as
        // many as it writes): it is waited for before the values are handed out (the context
        // tracks no events: `device.rs`).
        stream.memcpy_dtoh(&device.slice(..n), host)?;
        stream.synchronize()?;
        Ok(host)
    }
}

/// `room`, page-locked host memory for at least `n` values of T, made anew for twice `n` (and
/// at least one) where it holds fewer: what is read of it must be written first, as
/// [`Upload::send`] and [`Download::fetch`] do.
fn pinned<'a, T: DeviceRepr + ValidAsZeroBits>(
    room: &'a mut Option<PinnedHostSlice<T>>,
    stream: &Arc<CudaStream>,
    n: usize,
) -> Result<&'a mut PinnedHostSlice<T>> {
    if room.as_ref().is_none_or(|h| h.len() < n) {
        *room = None;
        // SAFETY: page-locked host memory for 2 * n values of T (at least one), every one of
        // which is valid as zero bits; the callers write what they read of it first.
        *room = Some(unsafe { stream.context().alloc_pinned::<T>(2 * n.max(1))? });
    }
    Ok(room.as_mut().expect("allocated above"))
}

impl SoupBoxes {
    /// Whether `gpu` runs boxes of `side` cells a side (one of [`SIDES`]): a launch keeps a
    /// box in shared memory beside the kernel's own, about 150 KiB for a box of 1024, which
    /// the GPUs of compute capability 8.6 and 8.9 (99 KiB a block) and 7.x do not give.
    pub fn fits(gpu: &Arc<Gpu>, side: usize) -> Result<bool> {
        let run = gpu.module(&source(side))?.load_function("soups_run")?;
        Ok(launch_shared_bytes(&run, side)? <= gpu.max_shared_per_block()?)
    }

    /// `slots` empty boxes of `side` cells a side (one of [`SIDES`]) on `gpu`, two copies of
    /// `side`² / 8 bytes each; refused where the GPU has not that much free. `gliders` are the
    /// 16 phases of a glider the kernel may take away: each its 3 × 3 cells as bits `3 y + x`,
    /// bit 9 set where it flies east (towards higher x), bit 10 where south (higher y).
    /// `kinds` (at most [`MOST_KINDS`], each orientation and phase of an object one) are those
    /// that the GPU names where they stand apart ([`Live::named`]).
    pub fn new(
        gpu: &Arc<Gpu>,
        slots: usize,
        side: usize,
        gliders: &[u32; 16],
        kinds: &[Lone],
    ) -> Result<SoupBoxes> {
        assert!(SIDES.contains(&side), "a box's side is one of {SIDES:?}");
        assert!(kinds.len() <= MOST_KINDS, "at most {MOST_KINDS} kinds");
        let box_words = box_words(side);
        let live = LIVE_WORDS.min(slots * box_words);
        let bytes = slots as u64
            * (COPIES as u64 * box_words as u64 * 4
                + size_of::<SoupState>() as u64
                + 12
                + 8 * LOGGED as u64)
            + live as u64 * 8;
        gpu.check_memory(bytes, "the census's soup boxes")?;
        let module = gpu.module(&source(side))?;
        let run = module.load_function("soups_run")?;
        let shared = launch_shared_bytes(&run, side)?;
        gpu.check_shared(shared, &format!("the census's boxes of {side} cells"))?;
        // A box of 1024 keeps 132 KiB in shared memory, more than a launch may ask for unless
        // the kernel is let.
        run.set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            run_shared_bytes(side) as i32,
        )?;
        let (least, greatest) = cudarc::driver::result::stream::get_priority_range()?;
        let stream = gpu.ctx.new_stream_with_priority(greatest)?;
        let running = gpu.ctx.new_stream_with_priority(least)?;
        // A box without a soup is dead: soups_run passes it by.
        let dead = SoupState {
            status: 3,
            ..SoupState::default()
        };
        Ok(SoupBoxes {
            side,
            cells: stream.alloc_zeros::<u32>(COPIES * slots * box_words)?,
            states: stream.clone_htod(&vec![dead; slots])?,
            run,
            place: module.load_function("soups_place")?,
            live_fn: module.load_function("soups_live")?,
            clear: module.load_function("soups_clear")?,
            gliders: stream.clone_htod(gliders)?,
            kinds: match kinds.is_empty() {
                true => stream.alloc_zeros::<Lone>(1)?,
                false => stream.clone_htod(kinds)?,
            },
            named_kinds: kinds.len() as i32,
            log: stream.alloc_zeros::<u64>(slots * LOGGED)?,
            used: stream.alloc_zeros::<u32>(1)?,
            live: stream.alloc_zeros::<u64>(live)?,
            spans: stream.alloc_zeros::<u32>(3 * slots)?,
            stream,
            running,
            done: None,
            slots,
            list: Upload::default(),
            rows: Upload::default(),
            words: Upload::default(),
            spans_of_words: Upload::default(),
            placed: Upload::default(),
            edits: Upload::default(),
            // SAFETY: page-locked host memory for `slots` states, valid as zero bits; it is
            // read back whole (read_back) before any copy from it (write_states).
            set: unsafe { gpu.ctx.alloc_pinned::<SoupState>(slots)? },
            live_back: Download::default(),
            spans_back: Download::default(),
            log_back: Download::default(),
        })
    }

    /// How many boxes there are.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Cells on a side of a box.
    pub fn side(&self) -> usize {
        self.side
    }

    /// 32-bit words in a row of a box.
    pub fn words(&self) -> usize {
        self.side / 32
    }

    fn box_words(&self) -> usize {
        box_words(self.side)
    }

    /// Puts soups in boxes `slots`, in order: first soups `rows` at generation 0 (16 rows each,
    /// bit x of a row the cell in column x), their top-left cells at ([`left`], [`left`]);
    /// then soups `going_on`, each from a state and its live words there (`place << 32 |
    /// word`, as [`Live`] holds a box's, each place once). The rest of each box is empty.
    pub fn place(
        &mut self,
        slots: &[u32],
        rows: &[[u16; 16]],
        going_on: &[(SoupState, Vec<u64>)],
    ) -> Result<()> {
        assert_eq!(
            slots.len(),
            rows.len() + going_on.len(),
            "a soup for each slot"
        );
        self.check(slots);
        if slots.is_empty() {
            return Ok(());
        }
        let box_words = self.box_words() as u64;
        let mut words: Vec<u64> = going_on.iter().flat_map(|s| &s.1).copied().collect();
        assert!(
            words.iter().all(|&w| w >> 32 < box_words),
            "words within a box"
        );
        let mut spans = vec![0u32];
        for (_, w) in going_on {
            spans.push(spans[spans.len() - 1] + w.len() as u32);
        }
        let mut states: Vec<SoupState> = going_on.iter().map(|s| s.0).collect();
        let mut flat: Vec<u16> = rows.iter().flatten().copied().collect();
        // A room no soup reads from still gets a value: nothing is sent of none.
        flat.resize(flat.len().max(1), 0);
        words.resize(words.len().max(1), 0);
        states.resize(states.len().max(1), SoupState::default());
        let fresh = rows.len() as i32;
        let slots_dev = self.list.send(&self.stream, slots)?;
        let rows_dev = self.rows.send(&self.stream, &flat)?;
        let words_dev = self.words.send(&self.stream, &words)?;
        let spans_dev = self.spans_of_words.send(&self.stream, &spans)?;
        let states_dev = self.placed.send(&self.stream, &states)?;
        let cfg = blocks(slots.len());
        // SAFETY: soups_place takes (unsigned int* cells, Soup* soups, const int* slots,
        // int fresh, const unsigned short* rows, const unsigned long long* words,
        // const unsigned int* spans, const Soup* states); block i reads slot i (checked to be
        // below `slots`), and for i below `fresh` rows 16 i..16 i + 16, for the others, j being
        // i - fresh, spans j and j + 1 (there are going_on.len() + 1), the words between them
        // (each within a box, checked) and state j; it writes that slot's box and state.
        unsafe {
            self.stream
                .launch_builder(&self.place)
                .arg(&mut self.cells)
                .arg(&mut self.states)
                .arg(slots_dev)
                .arg(&fresh)
                .arg(rows_dev)
                .arg(words_dev)
                .arg(spans_dev)
                .arg(states_dev)
                .launch(cfg)?;
        }
        Ok(())
    }

    /// Whether the work queued by the last [`SoupBoxes::start`] has run:
    /// [`SoupBoxes::read_back`] would not wait.
    pub fn is_done(&self) -> Result<bool> {
        Ok(match &self.done {
            Some(done) => done.try_is_complete()?,
            None => true,
        })
    }

    /// Queues on the boxes' own streams (to run beside other work): every running soup stepped
    /// up to `generations` generations on, none beyond generation `most`, then the live words
    /// of those that stop gathered. Their states and words then come from
    /// [`SoupBoxes::read_back`].
    pub fn start(&mut self, generations: u32, most: u32) -> Result<()> {
        let count = self.slots as i32;
        // A block of `warps` warps a box, with the box's room in shared memory where it keeps
        // it there.
        let cfg = LaunchConfig {
            grid_dim: (self.slots as u32, 1, 1),
            block_dim: (32 * warps(self.side) as u32, 1, 1),
            shared_mem_bytes: run_shared_bytes(self.side),
        };
        // After what `stream` holds (the boxes filled, cleared and set), and before what it is
        // given next.
        self.running.join(&self.stream)?;
        // SAFETY: soups_run takes (unsigned int* cells, Soup* soups, int count,
        // unsigned int generations, unsigned int most, const unsigned int* gliders,
        // unsigned long long* log); `cells` holds two copies of `count` boxes (the second the
        // kernel's own), `states` `count` states, `log` LOGGED entries for each (the kernel
        // writes entry `taken` only while below LOGGED), `gliders` the 16 phases it reads, and a
        // block a box, of the WARPS warps its source is built with (`warps`); the shared memory
        // it is given is a box's where `shared` has it keep one there (as its source says).
        unsafe {
            self.running
                .launch_builder(&self.run)
                .arg(&mut self.cells)
                .arg(&mut self.states)
                .arg(&count)
                .arg(&generations)
                .arg(&most)
                .arg(&self.gliders)
                .arg(&mut self.log)
                .launch(cfg)?;
        }
        self.stream.join(&self.running)?;
        self.gather()?;
        self.done = Some(self.stream.record_event(None)?);
        Ok(())
    }

    /// Queues soups_live: the live words of the boxes whose soups stopped, and the kinds of
    /// the ash it names, into `live`.
    fn gather(&mut self) -> Result<()> {
        self.stream.memset_zeros(&mut self.used)?;
        let capacity = self.live.len() as u32;
        // SAFETY: soups_live takes (const unsigned int* cells, const Soup* soups,
        // unsigned long long* out, unsigned int* spans, unsigned int* used,
        // unsigned int capacity, const Lone* kinds, int n_kinds); block b reads box b and
        // state b (one block a box) and kinds[0..n_kinds] (`kinds` holds at least that many,
        // and n_kinds is at most MOST_KINDS, its room for counts), writes spans[3 b..3 b + 3]
        // (`spans` holds three a box) and its entries only where they end within `capacity`,
        // the length of `live`.
        unsafe {
            self.stream
                .launch_builder(&self.live_fn)
                .arg(&self.cells)
                .arg(&self.states)
                .arg(&mut self.live)
                .arg(&mut self.spans)
                .arg(&mut self.used)
                .arg(&capacity)
                .arg(&self.kinds)
                .arg(&self.named_kinds)
                .launch(blocks(self.slots))?;
        }
        Ok(())
    }

    /// Once the work queued so far has run: every box's state, the live words of the boxes
    /// whose soups stopped in the last run and the ash the GPU named ([`Live`]; gathered again
    /// with more room where they did not fit), and the log of the gliders taken away where
    /// `logged` says, from the states, that it is wanted.
    pub fn read_back(&mut self, logged: impl FnOnce(&[SoupState]) -> bool) -> Result<Stopped<'_>> {
        let mut total = self.stream.clone_dtoh(&self.used)?[0] as usize;
        if total > self.live.len() {
            self.live = self.stream.alloc_zeros::<u64>(2 * total)?;
            self.gather()?;
            total = self.stream.clone_dtoh(&self.used)?[0] as usize;
        }
        // Waited for here: the context tracks no events (`device.rs`), so the page-locked
        // slice's own wait would not cover the copy.
        self.stream.memcpy_dtoh(&self.states, &mut self.set)?;
        self.stream.synchronize()?;
        let states = self.set.as_mut_slice()?;
        let log = match logged(states) {
            true => Some(Log(self.log_back.fetch(
                &self.stream,
                &self.log,
                self.log.len(),
            )?)),
            false => None,
        };
        let spans = self
            .spans_back
            .fetch(&self.stream, &self.spans, 3 * self.slots)?;
        let words = self.live_back.fetch(&self.stream, &self.live, total)?;
        Ok(Stopped {
            states,
            live: Live { words, spans },
            log,
        })
    }

    /// Writes back every box's state as [`SoupBoxes::read_back`] gave it (and the host changed
    /// it).
    pub fn write_states(&mut self) -> Result<()> {
        Ok(self.stream.memcpy_htod(&self.set, &mut self.states)?)
    }

    /// Clears cells: edit (slot, word, mask) clears the bits `mask` of word `word` of the box
    /// of `slot`.
    pub fn clear(&mut self, edits: &[(u32, u32, u32)]) -> Result<()> {
        if edits.is_empty() {
            return Ok(());
        }
        let slots: Vec<u32> = edits.iter().map(|e| e.0).collect();
        self.check(&slots);
        assert!(
            edits.iter().all(|e| (e.1 as usize) < self.box_words()),
            "words within a box"
        );
        let flat: Vec<u32> = edits.iter().flat_map(|&(s, w, m)| [s, w, m]).collect();
        let edits_dev = self.edits.send(&self.stream, &flat)?;
        let n = edits.len() as i32;
        let cfg = blocks(edits.len().div_ceil(BLOCK as usize));
        // SAFETY: soups_clear takes (unsigned int* cells, const unsigned int* edits, int n);
        // edit i, for i below n, is edits[3 i..3 i + 3]: it touches word edits[3 i + 1] (within
        // a box) of box edits[3 i] (below `slots`).
        unsafe {
            self.stream
                .launch_builder(&self.clear)
                .arg(&mut self.cells)
                .arg(edits_dev)
                .arg(&n)
                .launch(cfg)?;
        }
        Ok(())
    }

    /// Panics unless every slot is a box's.
    fn check(&self, slots: &[u32]) {
        assert!(
            slots.iter().all(|&s| (s as usize) < self.slots),
            "slots within the boxes"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The live cells of a box of `side` cells a side from its live words, (x, y) in the box.
    fn cells(words: &[u64], side: usize) -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = words
            .iter()
            .flat_map(|&entry| {
                let (place, word) = ((entry >> 32) as usize, entry as u32);
                let (y, w) = (place / (side / 32), place % (side / 32));
                (0..32)
                    .filter(move |b| word >> b & 1 == 1)
                    .map(move |b| (32 * w + b, y))
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// Live words of a box of `side` cells a side holding `cells`.
    fn words_of(cells: &[(usize, usize)], side: usize) -> Vec<u64> {
        let mut words = std::collections::BTreeMap::new();
        for &(x, y) in cells {
            *words.entry((y * side + x) / 32).or_insert(0u32) |= 1 << (x % 32);
        }
        words
            .into_iter()
            .map(|(place, word)| (place as u64) << 32 | word as u64)
            .collect()
    }

    #[test]
    fn a_moved_soup_keeps_its_place_from_the_middle() {
        for (from, to) in [(256, 512), (512, 1024), (256, 1024)] {
            // A cell at each corner and edge of the box and two in its middle.
            let (l, m) = (from - 1, from / 2);
            let mut cells_in = vec![(0, 0), (l, 0), (0, l), (l, l), (m, 0), (0, m), (m, m)];
            cells_in.push((m + 1, m));
            let shift = left(to) - left(from);
            let moved = cells(&moved_words(&words_of(&cells_in, from), from, to), to);
            let mut want: Vec<(usize, usize)> = cells_in
                .iter()
                .map(|&(x, y)| (x + shift, y + shift))
                .collect();
            want.sort_unstable();
            assert_eq!(moved, want);
        }
    }
}
