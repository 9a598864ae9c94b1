//! The node store: every quadtree node of a plane, hash-consed, shared by all threads.
//!
//! A *node* of level `k` is a square of 2^k × 2^k cells. A node above the leaves has four
//! *children* of level `k − 1` (north-west, north-east, south-west, south-east); a *leaf* holds
//! its cells directly (the leaf level and the cells' encoding belong to the [`crate::Leaf`]
//! kind). Every distinct node exists once: [`Store::node`] finds a node by its level and
//! children, or makes it. A node is named by its [`Id`], which never changes while it lives.
//!
//! # Layout
//!
//! Nodes live in an *arena*, an array of slots reserved for the whole memory cap at once and
//! filled from the start (pages the system backs only once touched, so an arena costs what
//! it holds); a node's id is its slot. A slot is eight `u32` words, 32 bytes, two to a cache
//! line:
//!
//! | word | what |
//! | --- | --- |
//! | 0–3 | the *key*: the children's ids (nw, ne, sw, se), or a leaf's cells |
//! | 4 | the level (bits 0–15); 0 for a free slot; bit 31 marks the node during garbage collection |
//! | 5 | the memoised *result* (see [`crate::hashlife`]): [`NONE`] while not computed, [`BUSY`] while a thread computes it |
//! | 6 | the number of cells not in state 0, plus one, saturating (0: not counted yet) |
//! | 7 | the node's *tag*: the high 32 bits of the hash of its level and key |
//!
//! Nodes are found through an *index*, an open-addressed hash table (linear probing) of
//! 64-bit entries: a node's tag in the high half, its id in the low half, 0 for an empty
//! entry. A probe compares tags and reads only the nodes whose tag matches, so a lookup costs
//! one miss in the index and, where the node exists, one in the arena. Slot 0 is never a
//! node, so that id 0 can mean "none".
//!
//! The earlier store kept the nodes in the hash table's own slots (one miss a lookup, but a
//! table at most half full whose every page is touched at random, and every node moved and
//! renamed when it grew): jagged2.mc at 2^20 generations took 12.1–12.8 s and 2.7 GB where
//! bgolly takes 5.8 s and 0.48 GB, a third of the time in growing the table and the system
//! zeroing its pages. Nodes made one after another now sit side by side (a node's children
//! were mostly made just before it), growing the index moves 8-byte entries and no node, and
//! ids never change, so nothing the caller holds is rewritten.
//!
//! The index starts small and doubles with the nodes, in room reserved for its largest size
//! as the arena's is: past `GROW_AT` full (`LARGE_GROW_AT` once large) it says it is crowded
//! ([`Store::is_crowded`]); a step then stops, [`Store::grow`] doubles it in place (entries
//! moved by their tags alone, no node read; only the new half's pages are fresh), and the
//! step goes on from what it memoised. Past [`COLLECT_AT`] of the arena in nodes, the store
//! asks for garbage to be collected ([`Store::wants_collection`]): the stepping threads stop
//! at their next safe point and one of them [`Store::sweep`]s, keeping every node reachable
//! from the ids they hold: the others' slots are freed and the index is made anew. Threads
//! take slots in runs of `RUN` from a cursor that walks the arena, and after a sweep walks it
//! again from the start, taking the freed slots of each run; where it reaches the end, the
//! store is full ([`Store::is_full`]) and the step stops; between steps [`Store::collect`]
//! does the same as a sweep.
//!
//! # Concurrency
//!
//! Many threads find and make nodes at once, without locks. To make a node, a thread writes
//! it into a slot of its own run, then publishes it by a compare-and-swap of the empty index
//! entry its probe ended at (release; probes load entries with acquire, so a node is whole
//! before its id can be read). A thread that loses the swap looks at the entry that won: the
//! same key (another thread made the node first) gives that node, and its own slot is
//! freed for its next node; another key sends the probe on.
//! Results are written with one atomic store (release) and read with acquire: two threads that
//! compute the same result store the same id.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

use gol_core::{memory, Error, Result};

/// A node's slot in the arena; [`NONE`] is no node.
pub type Id = u32;

/// No node.
pub const NONE: Id = 0;

/// A result word's value while one thread computes the result ([`Store::claim`]); never a
/// node's id (arenas have fewer than 2^31 slots).
pub const BUSY: Id = u32::MAX;

/// The words of a slot.
const WORDS: usize = 8;
/// Word of the level and the mark.
const META: usize = 4;
/// Word of the memoised result.
const RESULT: usize = 5;
/// Word of the population plus one.
const POPULATION: usize = 6;
/// Word of the node's tag.
const TAG: usize = 7;
/// The level's bits of [`META`].
const LEVEL: u32 = 0xffff;
/// The mark bit of [`META`] (garbage collection).
const MARK: u32 = 1 << 31;

/// Bytes a slot takes.
const SLOT_BYTES: u64 = WORDS as u64 * 4;
/// Bytes an index entry takes.
const ENTRY_BYTES: u64 = 8;
/// Bytes of the cap each node of the arena's capacity stands for: its slot and 4/3 entries of
/// the largest index (at most [`GROW_AT`] = 3/4 full), rounded up. The index grows in place.
const BYTES_PER_NODE: u64 = (3 * SLOT_BYTES + 4 * ENTRY_BYTES).div_ceil(3);

/// Entries of a fresh index.
const FIRST_ENTRIES: usize = 1 << 16;

/// Share of its entries an index holds before it is crowded and doubles. Probes at 3/4 full
/// are long (about 2.5 entries to find a node, 8.5 to miss one) but entries are small, eight
/// to a cache line, and probes compare tags without reading nodes: a smaller index misses
/// the cache less and costs fewer fresh pages. Measured on jagged2.mc (2^20) and
/// logarithmic-width.mc (2^28), one thread: at 1/2, 7.9 and 12.8 s; 0.65, 6.8–8.2 and 10.4 s;
/// 3/4, 6.3–6.4 and 10.1 s; 0.85, 6.8 and 10.2 s.
const GROW_AT: f64 = 0.75;

/// Entries from which an index holds [`LARGE_GROW_AT`] of them before it doubles: a doubling
/// there takes 128 MiB or more of fresh memory, which costs more than the longer probes. On
/// broken-lines.mc (2^24 generations, 25.7 million nodes, one thread) the last doubling, at 3/4
/// of 2^25 entries, took 17.1–18.8 s against 14.7–15.7 s without it; under 2^24 entries a
/// fuller index was measured no faster. (Measured when a doubling copied the index into a
/// fresh one twice its size, twice the fresh memory of a doubling in place.)
const LARGE_INDEX: usize = 1 << 24;

/// Share of its entries an index of [`LARGE_INDEX`] entries or more holds before it doubles.
const LARGE_GROW_AT: f64 = 0.85;

/// The share of its `entries` an index holds before it doubles.
fn grow_at(entries: usize) -> f64 {
    if entries >= LARGE_INDEX {
        LARGE_GROW_AT
    } else {
        GROW_AT
    }
}

/// Share of the arena in nodes past which garbage is collected during a step.
pub const COLLECT_AT: f64 = 0.8;

/// Slots a thread takes from the arena's cursor at once.
const RUN: u64 = 64;

/// The highest level a node may have: a square 2^4095 cells wide, far beyond what 10^1000
/// generations can reach.
pub const MAX_LEVEL: u32 = 4095;

/// Nodes a thread counts before adding them to the shared count.
const COUNT_BATCH: u64 = 64;

/// A number no other store (or earlier sweep of the same store) has: it tells a thread's
/// count and run of slots from stale ones.
fn fresh_epoch() -> u64 {
    static EPOCHS: AtomicU64 = AtomicU64::new(1);
    EPOCHS.fetch_add(1, Ordering::Relaxed)
}

/// What a thread keeps for the store it last made a node in: the store's epoch, nodes made
/// and not yet added to the shared count, and the run of slots it takes new nodes from
/// (next, end). A thread that makes a node in another store, or after a sweep, drops the rest
/// of its run (fewer than [`RUN`] free slots, which the cursor's next walk takes again).
#[derive(Clone, Copy)]
struct Local {
    epoch: u64,
    made: u64,
    next: u64,
    end: u64,
}

thread_local! {
    static LOCAL: Cell<Local> = const { Cell::new(Local { epoch: 0, made: 0, next: 0, end: 0 }) };
}

/// What the threads add to, apart from what every lookup reads (the arena's and index's
/// addresses and sizes, the flags): sharing their cache line, each addition would make every
/// other thread's next lookup miss (16 threads ran slower than one).
#[repr(align(128))]
struct Tally {
    /// Nodes in the store (those made lately by threads still counting, aside).
    count: AtomicU64,
    /// The next slot of the arena no thread has taken since the last sweep.
    cursor: AtomicU64,
    /// The slot past the last one ever taken: the arena's part that has been touched.
    high: AtomicU64,
}

/// The store of nodes.
pub struct Store {
    arena: Box<[Slot]>,
    /// Slots of the arena.
    capacity: u64,
    /// Room for the largest index, reserved at once as the arena is.
    index: Box<[AtomicU64]>,
    /// Entries of the index in use: the first of `index`.
    entries: usize,
    /// The most entries the memory cap allows.
    most_entries: usize,
    /// The memory cap.
    cap: u64,
    /// What the threads count and take, in a cache line of its own.
    tally: Tally,
    /// How the arena's pages are chosen (apart: it is read once for a run of slots).
    pager: Box<Pager>,
    /// Set when the arena has no free slot left, or a sweep freed too little.
    full: AtomicBool,
    /// Set when the index is past [`grow_at`] full and can grow.
    crowded: AtomicBool,
    /// Set when the arena holds more than [`COLLECT_AT`] of its slots in nodes.
    collect: AtomicBool,
    epoch: AtomicU64,
    /// The empty node of each level, once made (0 before).
    empty: Box<[AtomicU32]>,
    leaf_level: u32,
}

/// A node's slot in the arena: its words (see the module documentation's table).
type Slot = [AtomicU32; WORDS];

/// `words` as slots of [`WORDS`] words each, so that a node's words are reached by one check
/// of its id against the arena's length.
fn slots(words: Box<[AtomicU32]>) -> Box<[Slot]> {
    assert!(words.len().is_multiple_of(WORDS), "whole slots");
    let count = words.len() / WORDS;
    let first = Box::into_raw(words).cast::<Slot>();
    // SAFETY: the box is owned, its `count * WORDS` atomics are `count` slots laid end to end
    // (an array has its elements' alignment and no padding), so the slice has the same size
    // and alignment and is freed with the same layout.
    unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(first, count)) }
}

/// `values` as atomics.
fn atomics<T, A>(values: Vec<T>) -> Box<[A]> {
    assert!(std::mem::size_of::<T>() == std::mem::size_of::<A>());
    assert!(std::mem::align_of::<T>() == std::mem::align_of::<A>());
    let boxed = Box::into_raw(values.into_boxed_slice());
    // SAFETY: called with (u32, AtomicU32) and (u64, AtomicU64) only, which have the same
    // size, alignment and bit validity (asserted above), and the box is owned, so its contents
    // may be reinterpreted.
    unsafe { Box::from_raw(boxed as *mut [A]) }
}

/// A huge page.
const HUGE: usize = 2 << 20;

/// The bytes of a small page: written once each, where fresh memory must be written before
/// it is read.
const SMALL: u64 = 4096;

/// Asks Linux to back the whole huge pages (2 MiB) of `memory` with huge pages (`huge`) or
/// with small ones, before they are touched (pages already faulted in stay as they are).
fn advise<T>(memory: &[T], huge: bool) {
    #[cfg(target_os = "linux")]
    {
        let start = memory.as_ptr() as usize;
        let end = start + std::mem::size_of_val(memory);
        let (first, last) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if last > first {
            let advice = match huge {
                true => libc::MADV_HUGEPAGE,
                false => libc::MADV_NOHUGEPAGE,
            };
            // SAFETY: madvise only advises on pages of this allocation (the range lies inside
            // it); neither advice changes content. A refusal is harmless and ignored.
            unsafe {
                libc::madvise(first as *mut libc::c_void, last - first, advice);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (memory, huge);
}

/// The share of the user time that the system time may take, while a chunk of the arena fills
/// in huge pages, before the next chunks get small pages: past it, fresh huge pages cost more
/// than their fewer TLB misses save (small pages cost 10–20% more user time). Where a host
/// backs memory at once the kernel clears a huge page in 0.1–0.6 ms, a few per cent of a run;
/// in the virtual machines we develop on, huge pages the guest freed a while before come
/// back unbacked, and their first touch took 20–28 ms each (14 s a GiB, against 0.8 s a GiB
/// in small pages): as much system time as user time, or more.
const COSTLY_SYSTEM_SHARE: f64 = 0.25;

/// The system time a huge page of a chunk may cost in any case: a chunk filled while a file
/// was read, or the threads started, spends a share of its little user time on those.
const FREE_SYSTEM_A_PAGE: f64 = 1e-3;

/// The arena's pages are chosen (huge or small) in chunks of this many bytes.
const CHUNK: usize = 16 << 20;

/// Slots of the arena a chunk.
const CHUNK_SLOTS: u64 = (CHUNK / (WORDS * 4)) as u64;

/// After this many chunks in small pages, the next is tried in huge pages again.
const RETRY_HUGE: usize = 16;

/// How the arena's pages are chosen, a chunk at a time as it fills, a chunk ahead: huge pages
/// while the last chunk filled in huge pages cost the process little system time, small pages
/// (tried in huge pages again now and then) where its system time was more than
/// [`COSTLY_SYSTEM_SHARE`] of its user time and [`FREE_SYSTEM_A_PAGE`] a huge page.
struct Pager {
    /// Chunks whose pages are chosen: read by every run of slots taken.
    chosen: AtomicU64,
    /// The thread choosing: each chunk's pages (huge or not), and the process's usage when
    /// the arena's fill entered the last chunk.
    history: Mutex<(Vec<bool>, memory::Usage)>,
}

impl Pager {
    fn new() -> Pager {
        Pager {
            chosen: AtomicU64::new(0),
            history: Mutex::new((Vec::new(), memory::Usage::default())),
        }
    }

    /// Chooses the pages of the arena's chunks up to the one after that of slot `end`, where
    /// the fill has just come.
    #[inline]
    fn ahead(&self, arena: &[Slot], end: u64) {
        let want = end / CHUNK_SLOTS + 2;
        if self.chosen.load(Ordering::Relaxed) >= want {
            return;
        }
        let mut history = self.history.lock().unwrap_or_else(|e| e.into_inner());
        let (huge, entered) = &mut *history;
        while (huge.len() as u64) < want {
            // Chunk c is chosen as the fill enters chunk c - 1, so chunk c - 2 is full: its
            // system time is mostly its pages' (and the index's growth while it filled).
            let now = memory::usage();
            let c = huge.len();
            let (user, system) = (now.user - entered.user, now.system - entered.system);
            *entered = now;
            let choice = match c.checked_sub(2).map(|full| huge[full]) {
                None => true,
                Some(true) => {
                    let system = system.as_secs_f64();
                    system < COSTLY_SYSTEM_SHARE * user.as_secs_f64()
                        || system < FREE_SYSTEM_A_PAGE * (CHUNK / HUGE) as f64
                }
                Some(false) => huge[c.saturating_sub(RETRY_HUGE)..].iter().all(|&h| !h),
            };
            huge.push(choice);
            // The chunk's huge pages: from the one its start falls in (across the end of the
            // chunk before, whose fill has only begun when this one is chosen) to the one its
            // end falls in, which is the next chunk's.
            let (base, size) = (arena.as_ptr() as usize, std::mem::size_of_val(arena));
            let page_at =
                |chunk: usize| ((base + chunk * CHUNK) / HUGE * HUGE).clamp(base, base + size);
            let (from, to) = (page_at(c), page_at(c + 1));
            if from < to {
                let slot = std::mem::size_of::<Slot>();
                advise(&arena[(from - base) / slot..(to - base) / slot], choice);
            }
        }
        self.chosen.store(want, Ordering::Relaxed);
    }
}

/// Zeroed atomics of `count` (`u32` or `u64`), untouched; refused (not aborted) where the
/// system has no room.
fn zeroed<T: memory::Zeroed, A>(count: usize, what: &str) -> Result<Box<[A]>> {
    let values = memory::zeroed_vec::<T>(count as u64, what)?;
    Ok(atomics::<T, A>(values))
}

/// Asks the processor to bring the cache line of `value` in, without waiting for it.
#[inline(always)]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and cannot fault; SSE is part of the
    // x86-64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch(
            (value as *const T).cast::<i8>(),
            std::arch::x86_64::_MM_HINT_T0,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// The tag of a key: the high half of a hash to which every bit of the key reaches (linear
/// probing clusters under a weaker mix). The key's halves are multiplied side by side (the
/// high half of each product depends on every bit of its half), combined and mixed once more:
/// three multiplications, two at once, where a chain of four (one a word) took twice the
/// instructions and latency.
#[inline(always)]
fn tag(level: u32, key: [u32; 4]) -> u32 {
    let pair = |a: u32, b: u32| a as u64 | (b as u64) << 32;
    let low = pair(key[0], key[1]).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let high = (pair(key[2], key[3]) ^ (level as u64) << 52).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let h = low ^ high;
    ((h ^ h >> 32).wrapping_mul(0x94d0_49bb_1331_11eb) >> 32) as u32
}

/// The entry a tag's probe starts at in an index of `entries` entries: the tag scaled to the
/// index, so that indices of any size are filled evenly.
#[inline]
fn home(tag: u32, entries: usize) -> usize {
    ((tag as u64 * entries as u64) >> 32) as usize
}

/// The entry after `i` in a probe.
#[inline]
fn next(i: usize, entries: usize) -> usize {
    if i + 1 == entries {
        0
    } else {
        i + 1
    }
}

/// An index entry: the node's tag and id.
#[inline]
fn entry(tag: u32, id: Id) -> u64 {
    (tag as u64) << 32 | id as u64
}

/// The fewest entries a wave of a doubling moves ([`move_wave`]); below, one thread moves
/// them.
const WAVE_LEAST: usize = 1 << 16;

/// Moves the entries of `index[from..to]`, an index of half `index.len()` entries being
/// doubled, to their homes in the whole, in `pieces` pieces shared by the threads of the rayon
/// pool; returns the entries left aside, to be placed last. Every entry at `to` or past it is
/// either moved already or empty, and none below `from` is moved yet.
///
/// A home doubles with the index (h becomes 2h or 2h + 1), so the entries of a piece
/// `[s, e)` whose old homes lie in it go to `[2s, 2e)`: at or past `to`, apart from the
/// others' pieces, and empty but for what this piece has placed. Each piece probes within its
/// own range only; an entry whose home lies below its piece (its probe ran in from the piece
/// before), or whose probe would leave the range, is left aside. The pieces share the
/// index through atomics, each touching entries no other piece touches.
fn move_wave(index: &[AtomicU64], from: usize, to: usize, pieces: usize) -> Vec<u64> {
    use rayon::prelude::*;
    debug_assert!(to <= index.len() / 2 && to == 2 * from);
    let size = (to - from).div_ceil(pieces);
    let asides: Vec<Vec<u64>> = (0..pieces)
        .into_par_iter()
        .map(|k| {
            let s = (from + k * size).min(to);
            let e = (s + size).min(to);
            let mut aside = Vec::new();
            for i in s..e {
                let moved = index[i].load(Ordering::Relaxed);
                index[i].store(0, Ordering::Relaxed);
                aside.extend(move_entry(index, moved, 2 * s, 2 * e));
            }
            aside
        })
        .collect();
    asides.concat()
}

/// Puts entry `e` (taken out of the index being grown; nothing where it is 0) in the first
/// empty entry of its probe in `index`, where its home is at `lowest` or past and that entry
/// lies before `end`; otherwise gives it back, to be placed last.
fn move_entry(index: &[AtomicU64], e: u64, lowest: usize, end: usize) -> Option<u64> {
    if e == 0 {
        return None;
    }
    let mut at = home((e >> 32) as u32, index.len());
    if at < lowest {
        return Some(e);
    }
    while at < end && index[at].load(Ordering::Relaxed) != 0 {
        at += 1;
    }
    match at < end {
        true => {
            index[at].store(e, Ordering::Relaxed);
            None
        }
        false => Some(e),
    }
}

/// Puts `e` in the first empty entry of its probe in `index` (the store to oneself).
fn place(index: &[AtomicU64], e: u64) {
    let mut i = home((e >> 32) as u32, index.len());
    while index[i].load(Ordering::Relaxed) != 0 {
        i = next(i, index.len());
    }
    index[i].store(e, Ordering::Relaxed);
}

impl Store {
    /// The smallest memory cap.
    pub const LEAST: u64 = 4 << 20;

    /// A store of at most `bytes` for leaves of `leaf_level`; refused below [`Store::LEAST`].
    /// The arena is reserved at once (the system backs what is touched); the index grows.
    pub fn new(bytes: u64, leaf_level: u32) -> Result<Store> {
        if bytes < Store::LEAST {
            return Err(Error::Invalid(format!(
                "a memory cap of {} is too small: HashLife needs at least {}",
                memory::human_bytes(bytes),
                memory::human_bytes(Store::LEAST)
            )));
        }
        let capacity = (bytes / BYTES_PER_NODE).min(1 << 31);
        let most_entries = ((capacity as f64 / GROW_AT) as usize).max(FIRST_ENTRIES);
        // The arena's pages are chosen a chunk at a time as it fills (see `Pager`); the
        // index's are huge: entries are read at random, and with 4 KiB pages nearly every
        // lookup would also miss the TLB.
        let arena = slots(zeroed::<u32, AtomicU32>(
            capacity as usize * WORDS,
            "the HashLife arena",
        )?);
        let index = zeroed::<u64, AtomicU64>(most_entries, "the HashLife index")?;
        advise(&index, true);
        Ok(Store {
            arena,
            capacity,
            index,
            entries: FIRST_ENTRIES.min(most_entries),
            most_entries,
            cap: bytes,
            tally: Tally {
                count: AtomicU64::new(0),
                cursor: AtomicU64::new(1),
                high: AtomicU64::new(1),
            },
            pager: Box::new(Pager::new()),
            full: AtomicBool::new(false),
            crowded: AtomicBool::new(false),
            collect: AtomicBool::new(false),
            epoch: AtomicU64::new(fresh_epoch()),
            empty: atomics::<u32, AtomicU32>(vec![0; MAX_LEVEL as usize + 1]),
            leaf_level,
        })
    }

    /// The level of the leaves.
    pub fn leaf_level(&self) -> u32 {
        self.leaf_level
    }

    /// Bytes the store may take: its memory cap.
    pub fn bytes(&self) -> u64 {
        self.cap
    }

    /// Nodes in the store (to within a few dozen a thread).
    pub fn nodes(&self) -> u64 {
        self.tally.count.load(Ordering::Relaxed)
    }

    /// Bytes the store has touched: the arena's slots ever taken and the index.
    pub fn bytes_used(&self) -> u64 {
        self.tally.high.load(Ordering::Relaxed) * SLOT_BYTES + self.entries as u64 * ENTRY_BYTES
    }

    /// Whether the store has no room left for a step: the arena has no free slot left, or
    /// the last sweep freed too little.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.full.load(Ordering::Relaxed)
    }

    /// Whether the index is past `grow_at` full and can still grow: a step should stop for
    /// [`Store::grow`].
    #[inline]
    pub fn is_crowded(&self) -> bool {
        self.crowded.load(Ordering::Relaxed)
    }

    /// Whether garbage may have to be collected before the index is next crowded: a step
    /// should be ready to stop for a sweep.
    pub fn may_collect(&self) -> bool {
        self.entries >= self.most_entries
            || COLLECT_AT * self.capacity as f64 <= self.crowded_past()
    }

    /// The nodes past which the index is crowded.
    fn crowded_past(&self) -> f64 {
        grow_at(self.entries) * self.entries as f64
    }

    /// Whether the arena holds more than [`COLLECT_AT`] of its slots in nodes: garbage should
    /// be collected ([`Store::sweep`]).
    #[inline]
    pub fn wants_collection(&self) -> bool {
        self.collect.load(Ordering::Relaxed)
    }

    /// Sets the flags that the count calls for ([`Store::is_crowded`],
    /// [`Store::wants_collection`]), and clears them where it no longer does.
    fn signal(&self) {
        let nodes = self.nodes() as f64;
        let set = |flag: &AtomicBool, on: bool| {
            if flag.load(Ordering::Relaxed) != on {
                flag.store(on, Ordering::Relaxed);
            }
        };
        let growable = self.entries < self.most_entries;
        set(&self.crowded, growable && nodes > self.crowded_past());
        set(&self.collect, nodes > COLLECT_AT * self.capacity as f64);
    }

    #[inline(always)]
    fn word(&self, id: Id, word: usize) -> &AtomicU32 {
        &self.arena[id as usize][word]
    }

    /// The key of node `id`: its children's ids, or a leaf's cells.
    #[inline]
    pub fn key(&self, id: Id) -> [u32; 4] {
        let slot = &self.arena[id as usize];
        let w = |i: usize| slot[i].load(Ordering::Relaxed);
        [w(0), w(1), w(2), w(3)]
    }

    /// The level of node `id`.
    #[inline]
    pub fn level(&self, id: Id) -> u32 {
        self.word(id, META).load(Ordering::Relaxed) & LEVEL
    }

    /// The memoised result of node `id`: [`NONE`] while not computed, [`BUSY`] while a
    /// thread computes it.
    #[inline]
    pub fn result(&self, id: Id) -> Id {
        self.word(id, RESULT).load(Ordering::Acquire)
    }

    /// Memoises `result` as the result of node `id`.
    #[inline]
    pub fn set_result(&self, id: Id, result: Id) {
        self.word(id, RESULT).store(result, Ordering::Release);
    }

    /// Claims the computation of node `id`'s result for this thread: its result word goes
    /// from [`NONE`] to [`BUSY`]; `false` where it was not [`NONE`].
    #[inline]
    pub fn claim(&self, id: Id) -> bool {
        self.word(id, RESULT)
            .compare_exchange(NONE, BUSY, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Gives a claim back ([`BUSY`] to [`NONE`]), unless a result was written meanwhile.
    #[inline]
    pub fn release(&self, id: Id) {
        let _ = self.word(id, RESULT).compare_exchange(
            BUSY,
            NONE,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }

    /// The slots ever taken, as words of the arena.
    fn touched(&mut self) -> &mut [u32] {
        let high = *self.tally.high.get_mut() as usize;
        let words = self.arena[..high].as_flattened_mut();
        // SAFETY: AtomicU32 has the same size, alignment and bit validity as u32, and the
        // borrow is exclusive, so no other thread reads meanwhile.
        unsafe { &mut *(words as *mut [AtomicU32] as *mut [u32]) }
    }

    /// Forgets the results of every node above `level`: a pass over the arena's touched
    /// part, split among the threads of the rayon pool it is called in (a run to 10^100
    /// generations makes one for each of its step sizes).
    pub fn forget_results_above(&mut self, level: u32) {
        use rayon::prelude::*;
        self.touched()
            .par_chunks_mut(WORDS << 12)
            .for_each(|nodes| {
                for node in nodes.chunks_exact_mut(WORDS) {
                    if node[META] & LEVEL > level {
                        node[RESULT] = NONE;
                    }
                }
            });
    }

    /// The cached population of `id` (cells not in state 0), where it is known and below
    /// `u32::MAX - 1`.
    #[inline]
    pub fn cached_population(&self, id: Id) -> Option<u32> {
        match self.word(id, POPULATION).load(Ordering::Relaxed) {
            0 | u32::MAX => None,
            n => Some(n - 1),
        }
    }

    /// Whether the population of `id` was found too large for the cache.
    #[inline]
    pub fn population_overflows(&self, id: Id) -> bool {
        self.word(id, POPULATION).load(Ordering::Relaxed) == u32::MAX
    }

    /// Caches the population of `id` (saturating).
    #[inline]
    pub fn cache_population(&self, id: Id, population: u64) {
        let value = population.saturating_add(1).min(u32::MAX as u64) as u32;
        self.word(id, POPULATION).store(value, Ordering::Relaxed);
    }

    /// A free slot for a new node, from this thread's run (taking a new run from the cursor
    /// when it is used up); `None` where the cursor has passed the arena's end. The node is
    /// counted as made here, in the one visit to the thread's `Local` a new node needs
    /// ([`Store::give_back`] uncounts a slot not used).
    #[inline]
    fn take(&self) -> Option<Id> {
        let epoch = self.epoch.load(Ordering::Relaxed);
        LOCAL.with(|local| {
            let mut l = local.get();
            if l.epoch != epoch {
                l = Local {
                    epoch,
                    made: 0,
                    next: 0,
                    end: 0,
                };
            }
            loop {
                while l.next < l.end {
                    let id = l.next as Id;
                    l.next += 1;
                    if self.word(id, META).load(Ordering::Relaxed) == 0 {
                        // Wrapping: a slot given back just after a batch was added leaves
                        // `made` one below zero until the next node.
                        l.made = l.made.wrapping_add(1);
                        let batch = l.made >= COUNT_BATCH;
                        if batch {
                            self.tally.count.fetch_add(l.made, Ordering::Relaxed);
                            l.made = 0;
                        }
                        local.set(l);
                        if batch {
                            self.signal();
                        }
                        return Some(id);
                    }
                }
                let first = self.tally.cursor.fetch_add(RUN, Ordering::Relaxed);
                if first >= self.capacity {
                    self.full.store(true, Ordering::Relaxed);
                    local.set(l);
                    return None;
                }
                l.next = first;
                l.end = (first + RUN).min(self.capacity);
                // Slots at or past the highest end of a run taken before (in any epoch: the
                // high mark never falls) were never in a run: the pages that begin among them
                // are written before the walk above reads them. (Read first, a page would map
                // the shared zero page, which the node's first write then replaces: a second
                // fault, which makes every other core of the process flush its TLB; and on
                // some kernels a huge page read first stays in small pages once written.)
                let fresh = self
                    .tally
                    .high
                    .fetch_max(l.end, Ordering::Relaxed)
                    .max(first);
                self.pager.ahead(&self.arena, l.end);
                let page = SMALL / SLOT_BYTES;
                for id in (fresh.next_multiple_of(page)..l.end).step_by(page as usize) {
                    self.word(id as Id, META).store(0, Ordering::Relaxed);
                }
            }
        })
    }

    /// Frees slot `id`, just taken by [`Store::take`] (in this epoch: no sweep comes between)
    /// and never published: uncounted, and this thread's next node takes it again.
    #[inline]
    fn give_back(&self, id: Id) {
        self.word(id, META).store(0, Ordering::Relaxed);
        LOCAL.with(|local| {
            let mut l = local.get();
            l.made = l.made.wrapping_sub(1);
            if l.next == id as u64 + 1 {
                l.next -= 1;
            }
            local.set(l);
        });
    }

    /// Whether node `id` has `level` and `key`.
    #[inline]
    fn is(&self, id: Id, level: u32, key: [u32; 4]) -> bool {
        self.level(id) == level && self.key(id) == key
    }

    /// The node of `level` with `key` (children's ids, or a leaf's cells): found, or made;
    /// `None` where the arena has no free slot left.
    #[inline]
    pub fn node(&self, level: u32, key: [u32; 4]) -> Option<Id> {
        let tag = tag(level, key);
        // SAFETY: the home is the tag's in the index in use.
        unsafe { self.lookup(level, key, tag, home(tag, self.index().len())) }
    }

    /// [`Store::node`], given the key's tag and its home in the index. The probe for a node
    /// that exists (nine lookups in ten) is inline; a node not found is made out of line
    /// ([`Store::insert`]).
    ///
    /// # Safety
    ///
    /// `home` is below the length of the index in use (as `home(tag, index().len())` is): the
    /// probe reads entries unchecked from it on.
    #[inline(always)]
    unsafe fn lookup(&self, level: u32, key: [u32; 4], tag: u32, home: usize) -> Option<Id> {
        debug_assert!((1..=MAX_LEVEL).contains(&level));
        let index = self.index();
        debug_assert!(home < index.len());
        let mut i = home;
        for _ in 0..index.len() {
            // SAFETY: `home` is below `index.len()` (the caller's promise), and so is every
            // entry `next` gives.
            let e = unsafe { index.get_unchecked(i) }.load(Ordering::Acquire);
            if e == 0 {
                return self.insert(level, key, tag, i);
            }
            if (e >> 32) as u32 == tag && self.is(e as Id, level, key) {
                return Some(e as Id);
            }
            i = next(i, index.len());
        }
        self.full.store(true, Ordering::Relaxed);
        None
    }

    /// Makes the node of `level` with `key` (whose tag is `tag`), not found by a probe that
    /// met an empty entry at `i`: written into a slot of this thread's, then published in
    /// that entry, or, where another thread has filled it first, further on; or found there,
    /// made by another thread meanwhile. `None` where the arena has no free slot left.
    #[inline(never)]
    fn insert(&self, level: u32, key: [u32; 4], tag: u32, mut i: usize) -> Option<Id> {
        let index = self.index();
        let made = self.take()?;
        for (w, &k) in key.iter().enumerate() {
            self.word(made, w).store(k, Ordering::Relaxed);
        }
        self.word(made, RESULT).store(NONE, Ordering::Relaxed);
        self.word(made, POPULATION).store(0, Ordering::Relaxed);
        self.word(made, TAG).store(tag, Ordering::Relaxed);
        self.word(made, META).store(level, Ordering::Relaxed);
        for _ in 0..index.len() {
            let mut e = index[i].load(Ordering::Acquire);
            if e == 0 {
                match index[i].compare_exchange(
                    0,
                    entry(tag, made),
                    Ordering::Release,
                    Ordering::Acquire,
                ) {
                    Ok(_) => return Some(made),
                    // Another thread filled the entry, perhaps with this very key.
                    Err(now) => e = now,
                }
            }
            if (e >> 32) as u32 == tag && self.is(e as Id, level, key) {
                self.give_back(made);
                return Some(e as Id);
            }
            i = next(i, index.len());
        }
        self.give_back(made);
        self.full.store(true, Ordering::Relaxed);
        None
    }

    /// The nodes of `level` with `keys`, as [`Store::node`] finds or makes them, with the
    /// misses of their index entries overlapped rather than one after another. (Fetching the
    /// nodes those entries name before the lookups, as a second stage, was measured slower
    /// twice: jagged2.mc, 2^20 generations, one thread, 6.30–6.43 s of user time against
    /// 6.06–6.13 s; with the lookups inline, medians of 5, 5.80 s against 5.58 s.)
    #[inline]
    pub fn find<const N: usize>(&self, level: u32, keys: [[u32; 4]; N]) -> Option<[Id; N]> {
        let index = self.index();
        // Plain loops: `array::map` over the keys was left a call (a tenth of the
        // instructions of a step, with its closures).
        let (mut tags, mut homes) = ([0; N], [0; N]);
        for k in 0..N {
            tags[k] = tag(level, keys[k]);
            homes[k] = home(tags[k], index.len());
            prefetch(&index[homes[k]]);
        }
        let mut out = [NONE; N];
        for k in 0..N {
            // SAFETY: each home is its tag's in `index`, the index in use.
            out[k] = unsafe { self.lookup(level, keys[k], tags[k], homes[k]) }?;
        }
        Some(out)
    }

    /// Asks the processor to fetch the slots of `ids`, about to be read.
    #[inline]
    pub fn prefetch_nodes(&self, ids: &[Id]) {
        for &id in ids {
            prefetch(self.word(id, 0));
        }
    }

    /// The inner node of `level` with these children.
    #[inline]
    pub fn join(&self, level: u32, nw: Id, ne: Id, sw: Id, se: Id) -> Option<Id> {
        self.node(level, [nw, ne, sw, se])
    }

    /// The empty node of `level` (at least the leaf level).
    pub fn empty(&self, level: u32) -> Option<Id> {
        let cached = self.empty[level as usize].load(Ordering::Relaxed);
        if cached != NONE {
            return Some(cached);
        }
        let id = if level == self.leaf_level {
            self.node(level, [0; 4])?
        } else {
            let e = self.empty(level - 1)?;
            self.join(level, e, e, e, e)?
        };
        self.cache_population(id, 0);
        self.empty[level as usize].store(id, Ordering::Relaxed);
        Some(id)
    }

    /// Whether `id` is the empty node of its level.
    #[inline]
    pub fn is_empty(&self, id: Id) -> bool {
        self.word(id, POPULATION).load(Ordering::Relaxed) == 1
            || self.empty[self.level(id) as usize].load(Ordering::Relaxed) == id
    }

    /// Makes room in the index for `more` nodes beyond those there, as far as the cap
    /// allows: a builder of many nodes calls it first, since the index grows only when asked
    /// to.
    pub fn reserve(&mut self, more: u64) {
        let want = ((self.nodes() + more) as f64 / GROW_AT) as usize;
        let mut entries = self.entries;
        while entries < want && entries < self.most_entries {
            entries *= 2;
        }
        self.rehash(entries.min(self.most_entries));
    }

    /// Doubles the index (at most to the cap's largest). No node moves.
    pub fn grow(&mut self) {
        let entries = (self.entries * 2).min(self.most_entries);
        self.rehash(entries);
    }

    /// The index in use.
    #[inline]
    fn index(&self) -> &[AtomicU64] {
        debug_assert!(self.entries <= self.index.len());
        // SAFETY: `entries` is at most the index's length: it starts so and `rehash` sets it
        // only after slicing the index to it.
        unsafe { self.index.get_unchecked(..self.entries) }
    }

    /// Grows the index to `entries` entries (where that is more), in place: the entries
    /// beyond the old ones are pages never touched, which the system backs only now, and
    /// nothing is copied to a new table. Growing moves each entry to its home in the larger
    /// index or past it (a home scales with the index), so the old entries are taken from the
    /// last down: an entry whose new home is at or past where it was is placed among the
    /// entries already moved, probing no further than the end; the few others (a home moved
    /// below the entry's old place, or a probe that would wrap round) wait aside and are
    /// placed last. No entry is placed over one still to be moved, and no entry placed is
    /// moved again, so every probe finds what it found before.
    ///
    /// Called in a rayon pool of several threads, a doubling moves the upper entries in
    /// waves the threads share ([`move_wave`]): the upper half's entries go to the
    /// fresh half, then the quarter below into the half just emptied, and so on down to
    /// [`WAVE_LEAST`] entries, which are moved as above. The fresh half's pages are written
    /// by all the threads too.
    fn rehash(&mut self, entries: usize) {
        let old = self.entries;
        if entries > old {
            let threads = rayon::current_thread_index().map_or(1, |_| rayon::current_num_threads());
            let index = &self.index[..entries];
            // The new entries' pages written before any is read: a read first would map the
            // shared zero page, and the write after it fault again, making every other core
            // of the process flush its TLB.
            let page = (SMALL / ENTRY_BYTES) as usize;
            let write_pages = |fresh: &[AtomicU64]| {
                for e in fresh.iter().step_by(page) {
                    e.store(0, Ordering::Relaxed);
                }
            };
            let fresh = &index[old..];
            if threads > 1 {
                use rayon::prelude::*;
                fresh.par_chunks(page << 6).for_each(write_pages);
            } else {
                write_pages(fresh);
            }
            let mut aside = Vec::new();
            let mut low = old;
            if entries == 2 * old && threads > 1 {
                while low >= 2 * WAVE_LEAST {
                    aside.extend(move_wave(index, low / 2, low, 4 * threads));
                    low /= 2;
                }
            }
            for i in (0..low).rev() {
                // Only this thread touches the index: a load and a store, not a locked swap.
                let e = index[i].load(Ordering::Relaxed);
                index[i].store(0, Ordering::Relaxed);
                aside.extend(move_entry(index, e, i, entries));
            }
            self.entries = entries;
            for e in aside {
                place(self.index(), e);
            }
        }
        self.signal();
    }

    /// Collects garbage between steps, as [`Store::sweep`] does during one, and lets the next
    /// step try whatever was freed.
    pub fn collect(&mut self, roots: &[Id]) {
        self.sweep(roots);
        *self.full.get_mut() = false;
    }

    /// Collects garbage: keeps the nodes reachable from `roots` and their results (and what
    /// those reach), the empty nodes, and while they fit in half of [`COLLECT_AT`] of the
    /// arena the memoised results of kept nodes; frees the other nodes' slots, forgets results
    /// naming them, and makes the index anew. No kept node moves. Only while no other thread
    /// uses the store (the stepping threads all stopped at a safe point); returns the nodes
    /// kept.
    pub fn sweep(&self, roots: &[Id]) -> u64 {
        let leaf_level = self.leaf_level;
        let high = self.tally.high.load(Ordering::Relaxed) as Id;
        let meta = |id: Id| self.word(id, META).load(Ordering::Relaxed);
        let is_node = |m: u32| m & LEVEL != 0;
        let marked = |id: Id| meta(id) & MARK != 0;
        let mut stack: Vec<Id> = Vec::new();
        let mut kept = 0u64;
        // Marks `from` and what it reaches by its children; appends what it marks to `list`.
        let mut mark_from = |from: Id, list: &mut Vec<Id>, kept: &mut u64| {
            stack.push(from);
            while let Some(id) = stack.pop() {
                if id == NONE || id == BUSY || !is_node(meta(id)) || marked(id) {
                    continue;
                }
                self.word(id, META).fetch_or(MARK, Ordering::Relaxed);
                *kept += 1;
                list.push(id);
                if meta(id) & LEVEL > leaf_level {
                    stack.extend_from_slice(&self.key(id));
                }
            }
        };
        let mut frontier: Vec<Id> = Vec::new();
        let empties: Vec<Id> = self
            .empty
            .iter()
            .map(|e| e.load(Ordering::Relaxed))
            .collect();
        for &id in roots.iter().chain(&empties) {
            mark_from(id, &mut frontier, &mut kept);
        }
        // The results of the ids held: the stepping threads read them once they resume.
        for &id in roots {
            if id != NONE && is_node(meta(id)) {
                mark_from(self.result(id), &mut frontier, &mut kept);
            }
        }
        let budget = (COLLECT_AT / 2.0 * self.capacity as f64) as u64;
        while kept < budget && !frontier.is_empty() {
            let mut next = Vec::new();
            for id in frontier {
                mark_from(self.result(id), &mut next, &mut kept);
                if kept >= budget {
                    break;
                }
            }
            frontier = next;
        }
        // Results naming dropped nodes forgotten (while the marks still tell), then the
        // dropped nodes' slots freed and the kept ones entered in a clean index.
        for id in 1..high {
            if marked(id) {
                let result = self.result(id);
                if result != NONE && result != BUSY && !marked(result) {
                    self.word(id, RESULT).store(NONE, Ordering::Relaxed);
                }
            }
        }
        for e in self.index() {
            e.store(0, Ordering::Relaxed);
        }
        for id in 1..high {
            let m = meta(id);
            if m & MARK != 0 {
                self.word(id, META).store(m & !MARK, Ordering::Relaxed);
                let tag = self.word(id, TAG).load(Ordering::Relaxed);
                place(self.index(), entry(tag, id));
            } else if is_node(m) {
                self.word(id, META).store(0, Ordering::Relaxed);
                self.word(id, RESULT).store(NONE, Ordering::Relaxed);
                self.word(id, POPULATION).store(0, Ordering::Relaxed);
            }
        }
        self.tally.count.store(kept, Ordering::Relaxed);
        self.tally.cursor.store(1, Ordering::Relaxed);
        self.epoch.store(fresh_epoch(), Ordering::Relaxed);
        self.signal();
        // Too little garbage to be worth going on: the step stops for a smaller one.
        if kept as f64 > 0.9 * COLLECT_AT * self.capacity as f64 {
            self.full.store(true, Ordering::Relaxed);
        }
        kept
    }
}

/// The error of a store that cannot hold what it is asked to.
pub(crate) fn too_small(store: &Store, what: &str) -> Error {
    Error::Memory(format!(
        "hashlife: {what} needs more than the {} memory cap",
        memory::human_bytes(store.bytes())
    ))
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn equal_nodes_are_one_node() {
        let store = Store::new(1 << 24, 3).unwrap();
        let a = store.node(3, [1, 2, 0, 0]).unwrap();
        let b = store.node(3, [1, 2, 0, 0]).unwrap();
        let c = store.node(3, [2, 1, 0, 0]).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let e3 = store.empty(3).unwrap();
        let e4 = store.empty(4).unwrap();
        assert_eq!(store.key(e4), [e3; 4]);
        assert!(store.is_empty(e4) && !store.is_empty(a));
        // The same key at another level is another node.
        let d = store.join(4, e3, e3, e3, e3).unwrap();
        assert_eq!(d, e4);
        assert_ne!(store.node(5, [e3; 4]).unwrap(), e4);
    }

    #[test]
    fn threads_making_the_same_nodes_agree() {
        let store = Store::new(1 << 26, 3).unwrap();
        let made: Vec<Vec<Id>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        (0..20000u32)
                            .map(|k| store.node(3, [k, k * 7, 0, 1]).unwrap())
                            .collect()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(made.windows(2).all(|w| w[0] == w[1]));
        let mut ids = made[0].clone();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 20000);
    }

    #[test]
    fn the_arenas_pages_are_chosen_a_chunk_ahead_of_its_fill() {
        let mut store = Store::new(64 << 20, 3).unwrap();
        let chosen = |store: &Store| store.pager.history.lock().unwrap().0.clone();
        assert!(chosen(&store).is_empty());
        // The first node: its chunk and the next, in huge pages (nothing measured yet).
        let first = store.node(3, [1, 0, 0, 0]).unwrap();
        assert_eq!(chosen(&store), [true, true]);
        // Into the second chunk: the third is chosen, from what the first cost.
        let mut k = 2u32;
        while (k as u64) < CHUNK_SLOTS + 1000 {
            if store.is_crowded() {
                store.grow();
            }
            store.node(3, [k, 0, 0, 0]).unwrap();
            k += 1;
        }
        assert_eq!(chosen(&store).len(), 3);
        assert_eq!(store.pager.chosen.load(Ordering::Relaxed), 3);
        // Whatever the pages, the nodes are what they were.
        assert_eq!(store.key(first), [1, 0, 0, 0]);
        assert_eq!(
            store.node(3, [k - 1, 0, 0, 0]).map(|id| store.key(id)),
            Some([k - 1, 0, 0, 0])
        );
    }

    #[test]
    fn a_crowded_store_grows_and_a_full_one_says_so() {
        let mut store = Store::new(Store::LEAST, 3).unwrap();
        let made: Vec<Id> = (1..=60_000u32)
            .map(|k| store.node(3, [k, 0, 0, 0]).unwrap())
            .collect();
        assert!(store.is_crowded());
        store.grow();
        assert!(!store.is_crowded());
        // Every node keeps its id, and is found again by its key.
        for (k, &id) in (1..=60_000u32).zip(&made) {
            assert_eq!(store.key(id), [k, 0, 0, 0]);
            assert_eq!(store.node(3, [k, 0, 0, 0]), Some(id));
        }
        // Past COLLECT_AT of the arena, a collection is wanted; at its end, the store is full.
        let mut k = 60_001u32;
        while !store.is_full() {
            if store.is_crowded() {
                store.grow();
            }
            if store.node(3, [k, 0, 0, 0]).is_none() {
                break;
            }
            assert_eq!(
                store.wants_collection(),
                store.nodes() as f64 > COLLECT_AT * store.capacity as f64
            );
            k += 1;
        }
        assert!(store.is_full() && store.wants_collection() && !store.is_crowded());
        assert_eq!(store.node(3, [k + 1, 0, 0, 0]), None);
        assert_eq!(store.node(3, [5, 0, 0, 0]), Some(made[4]));
    }

    #[test]
    fn an_index_grown_in_place_finds_every_node_once() {
        let mut store = Store::new(64 << 20, 3).unwrap();
        assert!(!store.most_entries.is_power_of_two());
        let mut made: Vec<Id> = Vec::new();
        let more = |store: &mut Store, made: &mut Vec<Id>, to: u32| {
            for k in made.len() as u32 + 1..=to {
                made.push(store.node(3, [k, k.wrapping_mul(7), 0, 0]).unwrap());
            }
        };
        // Every node found again with its id, and no entry made for it anew.
        let check = |store: &Store, made: &[Id]| {
            for (k, &id) in (1u32..).zip(made) {
                assert_eq!(store.node(3, [k, k.wrapping_mul(7), 0, 0]), Some(id));
            }
            let held = store.index().iter();
            let held = held.filter(|e| e.load(Ordering::Relaxed) != 0).count();
            assert_eq!(held, made.len());
        };
        // Past crowded, so that probes are long and some wrap round the end: grown once, and
        // by many doublings at once to a size that is no power of two; then, in another
        // store, doubling by doubling.
        more(&mut store, &mut made, 62_000);
        check(&store, &made);
        store.grow();
        check(&store, &made);
        more(&mut store, &mut made, 124_000);
        store.reserve(1_000_000);
        assert_eq!(store.entries, store.most_entries);
        check(&store, &made);
        // Doubling by doubling, by one thread and then in waves by four.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        for threads in [1, 4] {
            let mut store = Store::new(64 << 20, 3).unwrap();
            made.clear();
            while store.entries < store.most_entries {
                let to = (store.crowded_past() as u32).saturating_sub(10);
                more(&mut store, &mut made, to);
                match threads {
                    1 => store.grow(),
                    _ => pool.install(|| store.grow()),
                }
                check(&store, &made);
            }
        }
    }

    #[test]
    fn collection_keeps_what_roots_reach_and_frees_the_rest() {
        let mut store = Store::new(1 << 24, 3).unwrap();
        let leaves: Vec<Id> = (1..=8u32)
            .map(|k| store.node(3, [k, 0, 0, 0]).unwrap())
            .collect();
        let kept = store
            .join(4, leaves[0], leaves[1], leaves[2], leaves[3])
            .unwrap();
        let dropped = store
            .join(4, leaves[4], leaves[5], leaves[6], leaves[7])
            .unwrap();
        let result = store.node(3, [99, 0, 0, 0]).unwrap();
        store.set_result(kept, result);
        store.set_result(dropped, leaves[0]);
        store.collect(&[kept]);
        // The kept node, its four leaves and its result, under the same ids.
        assert_eq!(store.nodes(), 6);
        assert_eq!(
            store.key(kept),
            [leaves[0], leaves[1], leaves[2], leaves[3]]
        );
        assert_eq!(store.result(kept), result);
        for (k, &leaf) in (1..=4u32).zip(&leaves) {
            assert_eq!(store.node(3, [k, 0, 0, 0]), Some(leaf));
        }
        assert_eq!(store.nodes(), 6);
        // The dropped ones are gone: made again, they take freed slots.
        let again = store.node(3, [5, 0, 0, 0]).unwrap();
        assert!(
            again < result,
            "a freed slot is taken first: {again} after {result}"
        );
    }

    #[test]
    fn threads_making_nodes_through_collections_agree() {
        // Threads make overlapping nodes while sweeps free the rest between rounds: every
        // node kept is found again under its id, and every key maps to one node.
        let store = Store::new(1 << 24, 3).unwrap();
        let mut keep: Vec<Id> = Vec::new();
        for round in 0..4u32 {
            let made: Vec<Vec<Id>> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..4)
                    .map(|t| {
                        let store = &store;
                        s.spawn(move || {
                            (0..5000u32)
                                .map(|k| {
                                    let k = (k * 3 + t) % 7000;
                                    store.node(3, [round, k, 0, 0]).unwrap()
                                })
                                .collect()
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let mut ids: Vec<Id> = made.concat();
            ids.sort();
            ids.dedup();
            for &id in &ids {
                let [r, k, _, _] = store.key(id);
                assert_eq!((r, store.node(3, [r, k, 0, 0])), (round, Some(id)));
            }
            keep.push(ids[0]);
            store.sweep(&keep);
            assert_eq!(store.nodes(), keep.len() as u64);
            for &id in &keep {
                assert_eq!(store.node(3, store.key(id)), Some(id));
            }
        }
    }
}
