//! Temporal blocking for small 2D grids on several threads: each band of rows runs several
//! generations on its own copy between two hand-overs, and the bands advance as a wave.
//!
//! # The wave
//!
//! A run of `generations` is cut into blocks of `depth` generations (the last one shorter). Block
//! `k` of band `b` reads the band's rows and `depth` halo rows each side from buffer `k % 2`,
//! runs `depth` generations on a private copy ([`BandCopy`]) and writes the band's own rows to
//! buffer `(k + 1) % 2`. A band's halo reaches into its [`Wave::reach`] nearest bands each side
//! and no further, so block `k` of band `b` may start as soon as those bands and `b` itself have
//! finished block `k - 1`:
//! - what it reads (their rows in buffer `k % 2`) is then written, and nothing writes it again
//!   before they have all finished block `k` (they wait for `b` in turn);
//! - what it writes (its rows in buffer `(k + 1) % 2`) was last read by their block `k - 1`.
//!
//! There is no barrier across the whole grid. The (block, band) pairs are tickets handed out in
//! order from one counter, and every thread that joins takes the next ticket until none is
//! left, waiting (spinning, then yielding) only for the bands its ticket depends on. A ticket
//! only ever waits for smaller tickets, every one of which has been taken by a thread that is
//! running this same loop, so the wave always progresses: with a single thread it runs every
//! ticket itself, and a pool thread that is busy elsewhere (another simulation stepping in the
//! same pool, for instance) is never waited for. Before, each block was one fork-join across the
//! pool, 64 of them in the seminar's run on 16 threads.

use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use super::bitsliced::{BandWork, Frame, Isa};

/// Grids of at most this many cells are run in [`Blocks`] on several threads: above it, a
/// generation's work (a few hundred µs on two threads) dwarfs a hand-over between threads.
const BLOCKED_CELLS: u64 = 1 << 24;

/// Grids of fewer cells than this are run on the calling thread alone, even in blocks.
pub(super) const BLOCKED_MIN_CELLS: u64 = 1 << 14;

/// The most generations a thread runs on its own between two hand-overs.
const MAX_DEPTH: usize = 16;

/// The fewest rows of a band in [`Blocks`]: smaller grids use fewer threads. Measured on the
/// H100 machine's 16 threads (docs/benchmarks/cpu.md, "Small grids on the CPU"): bands of 32 rows and
/// a depth of a quarter of a band beat 16, 64 and 128 rows and an eighth.
pub(super) const MIN_BAND_ROWS: usize = 32;

/// Spins of a waiting thread before it sleeps until a band finishes: a block of a band takes
/// tens of µs, and a thread that only spins or yields could keep the one it waits for off a
/// shared core for whole scheduler ticks (seen on dev-2c's two vCPUs: both threads waiting
/// 9 ms in a 16 ms run).
const SPINS: u32 = 1 << 12;

/// Temporal blocking: each thread copies its band of rows with `depth` rows above and below
/// it (round the torus, or as far as a bounded plane's edge), runs `depth` generations on that
/// copy alone, and writes back its band's rows. Each generation the rows that cannot yet be
/// right (those within one row more of the copy's ends, where the rows beyond are unknown) are
/// left out, so after `depth` generations the band's own rows are exact. Bands meet their
/// neighbours once every `depth` generations instead of every generation, for `depth - 1` extra
/// rows a generation at each end of a band: on 1024² over two threads, 15 extra rows in 512 for
/// 16 times fewer hand-overs. Each band's copy is small enough to stay in the thread's own
/// cache.
pub(super) struct Blocks {
    rows_per_band: usize,
    depth: usize,
}

impl Blocks {
    /// How `frame` is run in blocks on this pool's threads, or `None` where it is better run a
    /// generation at a time (one thread, a large grid, a single generation).
    pub(super) fn plan(frame: &Frame, generations: u64) -> Option<Blocks> {
        let threads = rayon::current_num_threads();
        let cells = frame.width as u64 * frame.height as u64;
        if threads == 1 || generations < 2 || !(BLOCKED_MIN_CELLS..=BLOCKED_CELLS).contains(&cells)
        {
            return None;
        }
        // One band a thread, of at least MIN_BAND_ROWS rows.
        let bands = threads.min(frame.height / MIN_BAND_ROWS);
        if bands < 2 {
            return None;
        }
        let rows_per_band = frame.height.div_ceil(bands);
        // Extra rows (depth - 1 at each end) at most half a band's.
        let depth = (rows_per_band / 4).min(MAX_DEPTH);
        (depth > 1).then_some(Blocks {
            rows_per_band,
            depth,
        })
    }

    /// Runs `generations` of `frame` with `work`, `next` being the spare buffer: as a wave
    /// over the pool's threads (the module's notes).
    pub(super) fn advance(
        &self,
        isa: Isa,
        frame: &mut Frame,
        next: &mut Vec<u64>,
        generations: u64,
        work: &impl BandWork,
    ) {
        let bands = frame.height.div_ceil(self.rows_per_band);
        let blocks = generations.div_ceil(self.depth as u64);
        let len = frame.height * frame.words_per_row;
        assert!(frame.words.len() == len && next.len() == len);
        let wave = Wave {
            shape: Frame {
                words: Vec::new(),
                ..*frame
            },
            buffers: [frame.words.as_mut_ptr(), next.as_mut_ptr()],
            rows_per_band: self.rows_per_band,
            depth: self.depth,
            generations,
            bands,
            reach: reach(frame.height, self.rows_per_band, self.depth),
            tickets: AtomicU64::new(0),
            last: blocks * bands as u64,
            done: (0..bands).map(|_| AtomicU64::new(0)).collect(),
            abandoned: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        };
        let helpers = rayon::current_num_threads().min(bands) - 1;
        rayon::scope(|scope| {
            for _ in 0..helpers {
                scope.spawn(|_| wave.join(isa, work));
            }
            wave.join(isa, work);
        });
        if blocks % 2 == 1 {
            std::mem::swap(&mut frame.words, next);
        }
    }
}

/// How many bands each side a band's halo of `depth` rows reaches into: one, unless the last
/// band (the only one shorter than `rows_per_band`) is shorter than the halo.
fn reach(height: usize, rows_per_band: usize, depth: usize) -> usize {
    let last = height - (height.div_ceil(rows_per_band) - 1) * rows_per_band;
    if last >= depth {
        1
    } else {
        2
    }
}

/// A run of [`Blocks`] in progress, shared by the threads that work on it.
struct Wave {
    /// The grid's geometry (its words are in `buffers`).
    shape: Frame,
    /// The two generations' buffers, each `shape.height` rows, borrowed mutably by
    /// [`Blocks::advance`] for as long as the wave lasts.
    buffers: [*mut u64; 2],
    rows_per_band: usize,
    depth: usize,
    generations: u64,
    bands: usize,
    /// How many bands each side a band's halo reaches into.
    reach: usize,
    /// The next ticket: block `t / bands` of band `t % bands`.
    tickets: AtomicU64,
    /// The number of tickets.
    last: u64,
    /// Blocks each band has finished.
    done: Vec<AtomicU64>,
    /// Set when a thread unwinds out of a ticket, so that no one waits for it forever.
    abandoned: AtomicBool,
    /// Threads asleep (or about to be) in `wait`, woken through `lock` and `wake`.
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

// SAFETY: the buffers are only reached through `Wave::run`, whose tickets give each row of
// each buffer to one writer at a time and no readers while it writes (the module's notes).
unsafe impl Sync for Wave {}

impl Wave {
    /// Takes tickets and runs them until none is left.
    fn join(&self, isa: Isa, work: &impl BandWork) {
        let mut copy = BandCopy::default();
        let on_unwind = Abandon(self);
        loop {
            let ticket = self.tickets.fetch_add(1, Ordering::Relaxed);
            if ticket >= self.last {
                break;
            }
            let block = ticket / self.bands as u64;
            let band = (ticket % self.bands as u64) as usize;
            if !self.wait(band, block) {
                break;
            }
            self.run(&mut copy, isa, band, block, work);
            self.done[band].store(block + 1, Ordering::Release);
            // Pairs with the fence in `wait`: a thread that saw no progress before it went to
            // sleep is counted in `sleepers` here.
            fence(Ordering::SeqCst);
            if self.sleepers.load(Ordering::Relaxed) > 0 {
                self.wake_all();
            }
        }
        std::mem::forget(on_unwind);
    }

    /// Waits until `band` and the bands its halo reaches have finished `block - 1`: spinning,
    /// then asleep until a band finishes; false if the run was abandoned.
    fn wait(&self, band: usize, block: u64) -> bool {
        for _ in 0..SPINS {
            if self.ready(band, block) {
                return true;
            }
            std::hint::spin_loop();
        }
        self.sleepers.fetch_add(1, Ordering::Relaxed);
        // Pairs with the fence after a band's `done` is stored: either this thread sees the
        // band done below, or that thread sees it counted and wakes it.
        fence(Ordering::SeqCst);
        let mut guard = self.locked();
        while !self.ready(band, block) && !self.abandoned.load(Ordering::Relaxed) {
            guard = self.wake.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
        drop(guard);
        self.sleepers.fetch_sub(1, Ordering::Relaxed);
        !self.abandoned.load(Ordering::Relaxed)
    }

    /// Wakes the threads asleep in `wait`. Taking the lock first means that a thread between
    /// its last check and its sleep cannot miss the call.
    fn wake_all(&self) {
        drop(self.locked());
        self.wake.notify_all();
    }

    fn locked(&self) -> MutexGuard<'_, ()> {
        self.lock.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether block `block` of `band` may start.
    fn ready(&self, band: usize, block: u64) -> bool {
        let n = self.bands;
        (n * self.reach + band - self.reach..=n * self.reach + band + self.reach)
            .map(|b| b % n)
            .all(|b| self.done[b].load(Ordering::Acquire) >= block)
    }

    /// Runs block `block` of `band` with `copy`.
    fn run(&self, copy: &mut BandCopy, isa: Isa, band: usize, block: u64, work: &impl BandWork) {
        let (wpr, h) = (self.shape.words_per_row, self.shape.height);
        let top = band * self.rows_per_band;
        let rows = self.rows_per_band.min(h - top);
        let depth = (self.generations - block * self.depth as u64).min(self.depth as u64) as usize;
        let (from, to) = (
            self.buffers[block as usize % 2],
            self.buffers[1 - block as usize % 2],
        );
        // SAFETY: row `y < h` of a buffer of `h` rows; block `block` of `band` reads only rows
        // of `from` that `wait` saw finished and that no band writes again before this block
        // is done (the module's notes).
        let row = |y: usize| unsafe { std::slice::from_raw_parts(from.add(y * wpr), wpr) };
        // SAFETY: the band's own rows of `to`, inside its `h` rows, which no other band reads or
        // writes while this block runs (the module's notes).
        let out = unsafe { std::slice::from_raw_parts_mut(to.add(top * wpr), rows * wpr) };
        copy.run(isa, &self.shape, row, top, depth, out, work);
    }
}

/// Marks a wave abandoned if dropped while its thread unwinds (`Wave::join` forgets it on the
/// way out otherwise), so that the other threads stop waiting and the panic reaches the caller.
struct Abandon<'a>(&'a Wave);

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        self.0.abandoned.store(true, Ordering::Relaxed);
        self.0.wake_all();
    }
}

/// One thread's copy of a band in [`Blocks`]: its current and next generation.
#[derive(Default)]
struct BandCopy {
    now: Vec<u64>,
    next: Vec<u64>,
}

impl BandCopy {
    /// Runs `depth` generations of the band whose rows `top..` of `shape` are `out`'s, reading
    /// row `y` of the generation before with `row(y)`, and writes its rows of the last one to
    /// `out`.
    #[allow(clippy::too_many_arguments)]
    fn run<'a>(
        &mut self,
        isa: Isa,
        shape: &Frame,
        row: impl Fn(usize) -> &'a [u64],
        top: usize,
        depth: usize,
        out: &mut [u64],
        work: &impl BandWork,
    ) {
        let (wpr, h) = (shape.words_per_row, shape.height);
        let rows = out.len() / wpr;
        let (above, below) = if shape.wraps_rows {
            (depth, depth)
        } else {
            (depth.min(top), depth.min(h - top - rows))
        };
        // Whether the copy ends at a bounded plane's edge, past which the rows stay dead.
        let dead_top = !shape.wraps_rows && above == top;
        let dead_bottom = !shape.wraps_rows && top + rows + below == h;
        let n = above + rows + below;
        self.now.clear();
        for r in 0..n {
            self.now
                .extend_from_slice(row((top + depth * h - above + r) % h));
        }
        self.next.resize(n * wpr, 0);
        let mut copy = Frame {
            width: shape.width,
            height: n,
            words_per_row: wpr,
            words: std::mem::take(&mut self.now),
            wraps_columns: shape.wraps_columns,
            wraps_rows: false,
        };
        for j in 1..=depth {
            let first = if dead_top { 0 } else { j };
            let end = if dead_bottom { n } else { n - j };
            work.band(isa, &copy, &mut self.next[first * wpr..end * wpr], first);
            std::mem::swap(&mut copy.words, &mut self.next);
        }
        out.copy_from_slice(&copy.words[above * wpr..(above + rows) * wpr]);
        self.now = copy.words;
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::cpu::bitsliced::test::check;
    use crate::cpu::{Bitsliced, Scalar};
    use crate::engine::Engine;
    use crate::rule::Rule;
    use crate::seed::density_soup;
    use rayon::prelude::*;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    fn shape(width: usize, height: usize) -> Frame {
        Frame {
            width,
            height,
            words_per_row: crate::grid::words_per_row(width),
            words: Vec::new(),
            wraps_columns: true,
            wraps_rows: true,
        }
    }

    #[test]
    fn blocks_match_scalar_on_every_thread_count() {
        let rules = ["B3/S23", "B3/S23:P", "B36/S23", "B2-a/S12:P", "B2e3/S23"];
        for threads in [2, 3, 5, 8] {
            pool(threads).install(|| {
                for (i, &(w, h)) in [(130, 131), (64, 300), (200, 97), (1000, 20)]
                    .iter()
                    .enumerate()
                {
                    // Blocks wherever two bands of MIN_BAND_ROWS fit.
                    let blocked = Blocks::plan(&shape(w, h), 37).is_some();
                    let expected = (h / MIN_BAND_ROWS).min(threads) >= 2
                        && w * h >= BLOCKED_MIN_CELLS as usize;
                    assert_eq!(blocked, expected, "{w}x{h} on {threads} threads");
                    let rule = Rule::parse(rules[(i + threads) % rules.len()]).unwrap();
                    // Not a multiple of the depth, and a single generation.
                    check(w, h, rule, 37, Isa::detect());
                    check(w, h, rule, 1, Isa::detect());
                }
            });
        }
    }

    #[test]
    fn halos_reaching_past_a_short_last_band() {
        // 32 bands of 33 rows but the last, of 2, under a halo of 8 rows.
        pool(32).install(|| {
            let blocks = Blocks::plan(&shape(20, 1025), 37).unwrap();
            assert_eq!((blocks.rows_per_band, blocks.depth), (33, 8));
            assert_eq!(reach(1025, 33, 8), 2);
            for rule in ["B3/S23", "B3/S23:P", "B36/S23"] {
                check(20, 1025, Rule::parse(rule).unwrap(), 37, Isa::detect());
            }
        });
        assert_eq!(reach(1024, 64, 16), 1);
        assert_eq!(reach(1000, 63, 15), 1);
    }

    #[test]
    fn waves_stepping_at_once_in_one_pool() {
        // Six simulations at once on two threads: each wave's helpers may never be run until
        // it is over, and its threads may be taken by another wave meanwhile.
        let grids: Vec<_> = (0..6)
            .map(|i| density_soup(300, 256 + 7 * i, 0.4, i as u64).unwrap())
            .collect();
        let stepped: Vec<_> = pool(2).install(|| {
            grids
                .par_iter()
                .map(|grid| {
                    let mut engine = Bitsliced::default();
                    engine.load(grid, Rule::LIFE).unwrap();
                    engine.step(45).unwrap();
                    engine.snapshot().unwrap()
                })
                .collect()
        });
        for (grid, got) in grids.iter().zip(stepped) {
            let mut oracle = Scalar::default();
            oracle.load(grid, Rule::LIFE).unwrap();
            oracle.step(45).unwrap();
            assert_eq!(oracle.snapshot().unwrap().first_difference(&got), None);
        }
    }

    /// Band work that panics in its `n`th band.
    struct Faulty(AtomicUsize);

    impl BandWork for Faulty {
        fn band(&self, _: Isa, _: &Frame, _: &mut [u64], _: usize) {
            if self.0.fetch_sub(1, Ordering::Relaxed) == 1 {
                panic!("a fault in a band");
            }
        }
    }

    #[test]
    fn a_panic_in_a_band_reaches_the_caller() {
        let mut frame = shape(256, 512);
        frame.words = vec![0; 512 * 4];
        let mut next = frame.words.clone();
        for n in [1, 50, 300] {
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pool(4).install(|| {
                    let blocks = Blocks::plan(&frame, 100).unwrap();
                    let work = Faulty(AtomicUsize::new(n));
                    blocks.advance(Isa::Portable, &mut frame, &mut next, 100, &work);
                })
            }));
            assert!(caught.is_err(), "the panic in band {n} was lost");
        }
    }
}
