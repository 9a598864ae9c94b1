//! The node store: every quadtree node of a plane, hash-consed, shared by all threads.
//!
//! A *node* of level `k` is a square of 2^k × 2^k cells. A node above the leaves has four
//! *children* of level `k − 1` (north-west, north-east, south-west, south-east); a *leaf* holds
//! its cells directly (the leaf level and the cells' encoding belong to the [`crate::Leaf`]
//! kind). Every distinct node exists once: [`Store::node`] finds a node by its level and
//! children, or makes it. A node is named by its [`Id`].
//!
//! # Layout
//!
//! The store is one open-addressed hash table whose slots are the nodes themselves: a node's
//! id is its slot, found from its level and key by a hash and linear probing. A lookup so
//! costs one miss of the cache where a table of chains costs two (the bucket, then the node):
//! hashlife-oddity1.mc, 2^24 generations, one thread, took 3.3 s with chains, 1.6 s here. A
//! slot is eight `u32` words, 32 bytes, two to a cache line:
//!
//! | word | what |
//! | --- | --- |
//! | 0–3 | the *key*: the children's ids (nw, ne, sw, se), or a leaf's cells |
//! | 4 | the level (bits 0–15); 0 for an empty slot, [`WRITING`] while one is being filled, [`TOMB`] for a node collected during a step; bit 31 marks the node during garbage collection |
//! | 5 | the memoised *result* (see [`crate::hashlife`]): [`NONE`] while not computed, [`BUSY`] while a thread computes it |
//! | 6 | the number of cells not in state 0, plus one, saturating (0: not counted yet) |
//! | 7 | free; a rebuild keeps the node's new slot there |
//!
//! Slot 0 is never used, so that id 0 can mean "none". The table starts small and grows with
//! the nodes (its pages are all touched at random, so a table of the whole memory cap would
//! cost the whole cap at once): past [`GROW_AT`] full, the store says it is crowded
//! ([`Store::is_crowded`]); a step then stops, and [`Store::grow`] moves every node into a
//! table four times larger (results kept, ids new), after which the step goes on from what it
//! memoised. At the largest table the memory cap allows, the store asks for garbage to be
//! collected past [`COLLECT_AT`] ([`Store::wants_collection`]): the stepping threads stop at
//! their next safe point and one of them [`Store::sweep`]s the table in place, keeping every node
//! reachable from the ids they hold; the nodes it drops become tombstones ([`TOMB`]), which
//! probes pass over and new nodes reuse, so that no kept node moves. Tombstones fill the table
//! too: past [`FULL_AT`] filled ([`Store::is_full`]), the step stops, and between steps
//! [`Store::compact`] moves the nodes into a table without them (or [`Store::collect`] collects
//! garbage that way).
//!
//! # Concurrency
//!
//! Many threads find and make nodes at once, without locks. To make a node, a thread takes the
//! empty slot its probe ends at by a compare-and-swap of the level word from 0 to [`WRITING`],
//! writes the key, then publishes the level (release). A thread probing past a slot being
//! written waits until it is published (it may hold the very key sought): a few nanoseconds,
//! or a time slice where the writer was descheduled, which is why the wait yields and is not
//! counted as a step of the probe.
//! Results are written with one atomic store (release) and read with acquire: two threads that
//! compute the same result store the same id.
//!
//! # Rebuilds
//!
//! [`Store::grow`] and [`Store::collect`] run between steps, with the store to themselves. Both
//! move nodes into a new table: every node (growing), or those reachable from the roots and,
//! while they fit in half the table, the memoised results of kept nodes and what those reach
//! (collecting). Nodes move level by level from the leaves up, so that a node's children have
//! their new ids when its key is hashed anew; every id is rewritten, the caller's roots
//! included.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use gol_core::{memory, Error, Result};

/// A node's slot in the table; [`NONE`] is no node.
pub type Id = u32;

/// No node.
pub const NONE: Id = 0;

/// A result word's value while one thread computes the result ([`Store::claim`]); never a
/// node's id (tables have fewer than 2^31 slots).
pub const BUSY: Id = u32::MAX;

/// The words of a slot.
const WORDS: usize = 8;
/// Word of the level and the flags.
const META: usize = 4;
/// Word of the memoised result.
const RESULT: usize = 5;
/// Word of the population plus one.
const POPULATION: usize = 6;
/// Word a rebuild keeps a node's new slot in.
const MOVED: usize = 7;
/// The level's bits of [`META`].
const LEVEL: u32 = 0xffff;
/// `META` of a slot being filled.
pub const WRITING: u32 = 1 << 30;
/// `META` of a slot whose node was collected during a step: a probe passes over it, a new
/// node may take it.
pub const TOMB: u32 = 1 << 29;
/// The mark bit of [`META`] (garbage collection).
const MARK: u32 = 1 << 31;

/// Bytes a slot takes.
pub const SLOT_BYTES: u64 = WORDS as u64 * 4;

/// Slots of a fresh table.
const FIRST_SLOTS: usize = 1 << 16;

/// Share of its slots a table holds before it is crowded and grows: linear probing stays short
/// (about 1.5 probes to find a node, 2.5 to miss one).
pub const GROW_AT: f64 = 0.5;

/// Share of its slots the largest table holds in nodes before garbage is collected during a
/// step.
pub const COLLECT_AT: f64 = 0.5;

/// Share of its slots the largest table has filled (nodes and tombstones) before it is full.
pub const FULL_AT: f64 = 0.8;

/// The highest level a node may have: a square 2^4095 cells wide, far beyond what 10^1000
/// generations can reach.
pub const MAX_LEVEL: u32 = 4095;

/// Nodes a thread counts before adding them to the shared count.
const COUNT_BATCH: u64 = 64;

/// A number no other store (or earlier table of the same store) has: it tells a thread's count
/// of nodes made from a stale one.
fn fresh_epoch() -> u64 {
    static EPOCHS: AtomicU64 = AtomicU64::new(1);
    EPOCHS.fetch_add(1, Ordering::Relaxed)
}

thread_local! {
    /// Nodes this thread made and has not added to the shared count yet, and empty slots it
    /// filled: (epoch, nodes, filled).
    static MADE: Cell<(u64, u64, u64)> = const { Cell::new((0, 0, 0)) };
}

/// The counts every thread adds to, apart from what every lookup reads (the table's address
/// and size, the flags): sharing their cache line, each addition would make every other
/// thread's next lookup miss (16 threads ran slower than one).
#[repr(align(128))]
struct Tally {
    /// Nodes in the table (those made lately by threads still counting, aside).
    count: AtomicU64,
    /// Slots that are not empty: nodes and tombstones (likewise).
    filled: AtomicU64,
}

/// The table of nodes.
pub struct Store {
    words: Box<[AtomicU32]>,
    /// Slots of the table.
    slots: usize,
    /// The most slots the memory cap allows.
    most_slots: usize,
    /// What the threads count as they make nodes, in a cache line of its own.
    tally: Tally,
    /// Set when a probe found no empty slot, or the largest table is past [`FULL_AT`].
    full: AtomicBool,
    /// Set when the table is past [`GROW_AT`] filled and can grow.
    crowded: AtomicBool,
    /// Set when the largest table is past [`COLLECT_AT`] in nodes.
    collect: AtomicBool,
    epoch: u64,
    /// The empty node of each level, once made (0 before).
    empty: Box<[AtomicU32]>,
    leaf_level: u32,
}

/// `values` as atomics, in huge pages where the system gives them.
fn atomics(values: Vec<u32>) -> Box<[AtomicU32]> {
    let boxed = Box::into_raw(values.into_boxed_slice());
    // SAFETY: AtomicU32 has the same size, alignment and bit validity as u32, and the box is
    // owned, so its contents may be reinterpreted.
    let atomics = unsafe { Box::from_raw(boxed as *mut [AtomicU32]) };
    huge_pages(&atomics);
    atomics
}

/// Asks Linux to back `memory` with huge pages (2 MiB) where it can: slots are read at random,
/// and with 4 KiB pages nearly every lookup also misses the TLB (broken-lines.mc, 2^22
/// generations, one thread: 4.06–4.12 s with small pages, 3.91–3.96 s with huge ones, with the
/// table of chains this store replaced).
fn huge_pages(memory: &[AtomicU32]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = memory.as_ptr() as usize;
        let end = start + std::mem::size_of_val(memory);
        let (first, last) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if last > first {
            // SAFETY: madvise only advises on pages of this allocation (the range lies inside
            // it); MADV_HUGEPAGE changes no content. A refusal is harmless and ignored.
            unsafe {
                libc::madvise(
                    first as *mut libc::c_void,
                    last - first,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = memory;
}

/// The values of `atomics`, to write with the store to oneself.
fn plain(atomics: &mut [AtomicU32]) -> &mut [u32] {
    // SAFETY: as in `atomics`; the borrow is exclusive, so no other thread reads meanwhile.
    unsafe { &mut *(atomics as *mut [AtomicU32] as *mut [u32]) }
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

/// The hash of a key: every bit of the key reaches the low bits that choose the slot (linear
/// probing clusters under a weaker mix).
#[inline]
fn hash(level: u32, key: [u32; 4]) -> u64 {
    let mut h = (level as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for k in key {
        h = (h ^ k as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^= h >> 31;
    }
    h
}

/// The slot a hash's probe starts at in a table of `slots` slots (never slot 0): the hash's
/// high bits scaled to the table, so that tables of any size are filled evenly.
#[inline]
fn home(hash: u64, slots: usize) -> usize {
    (((hash as u128 * slots as u128) >> 64) as usize).max(1)
}

/// The slot after `i` in a probe (slot 0 skipped).
#[inline]
fn next(i: usize, slots: usize) -> usize {
    if i + 1 == slots {
        1
    } else {
        i + 1
    }
}

/// A zeroed table of `slots` slots; refused (not aborted) where the system has no room.
fn table(slots: usize) -> Result<Box<[AtomicU32]>> {
    let words = memory::zeroed_vec::<u32>((slots * WORDS) as u64, "the HashLife node table")?;
    Ok(atomics(words))
}

impl Store {
    /// The smallest memory cap: two of the first table.
    pub const LEAST: u64 = 2 * FIRST_SLOTS as u64 * SLOT_BYTES;

    /// A store of at most `bytes` for leaves of `leaf_level`; refused below [`Store::LEAST`].
    /// The largest table takes half the cap: a rebuild holds the old table and the new.
    pub fn new(bytes: u64, leaf_level: u32) -> Result<Store> {
        if bytes < Store::LEAST {
            return Err(Error::Invalid(format!(
                "a memory cap of {} is too small: HashLife needs at least {}",
                memory::human_bytes(bytes),
                memory::human_bytes(Store::LEAST)
            )));
        }
        let most_slots = (bytes / 2 / SLOT_BYTES).clamp(FIRST_SLOTS as u64, 1 << 31) as usize;
        let slots = FIRST_SLOTS;
        Ok(Store {
            words: table(slots)?,
            slots,
            most_slots,
            tally: Tally {
                count: AtomicU64::new(0),
                filled: AtomicU64::new(0),
            },
            full: AtomicBool::new(false),
            crowded: AtomicBool::new(false),
            collect: AtomicBool::new(false),
            epoch: fresh_epoch(),
            empty: atomics(vec![0; MAX_LEVEL as usize + 1]),
            leaf_level,
        })
    }

    /// The level of the leaves.
    pub fn leaf_level(&self) -> u32 {
        self.leaf_level
    }

    /// Bytes the store may take: its memory cap (twice its largest table).
    pub fn bytes(&self) -> u64 {
        2 * self.most_slots as u64 * SLOT_BYTES
    }

    /// Nodes in the store (to within a few dozen a thread).
    pub fn nodes(&self) -> u64 {
        self.tally.count.load(Ordering::Relaxed)
    }

    /// Bytes of the table now.
    pub fn bytes_used(&self) -> u64 {
        self.words.len() as u64 * 4
    }

    /// Slots of the table now.
    fn slots(&self) -> usize {
        self.slots
    }

    /// Slots filled: nodes and tombstones.
    fn filled(&self) -> u64 {
        self.tally.filled.load(Ordering::Relaxed)
    }

    /// Whether the store has no room left for a step: a probe found no empty slot, or the
    /// largest table is past [`FULL_AT`] filled.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.full.load(Ordering::Relaxed)
    }

    /// Whether the table is past [`GROW_AT`] filled and can still grow: a step should stop
    /// for [`Store::grow`].
    #[inline]
    pub fn is_crowded(&self) -> bool {
        self.crowded.load(Ordering::Relaxed)
    }

    /// Whether the table is as large as the cap allows.
    pub fn is_largest(&self) -> bool {
        self.slots() == self.most_slots
    }

    /// Whether the largest table holds more than [`COLLECT_AT`] of its slots in nodes: garbage
    /// should be collected ([`Store::sweep`]).
    #[inline]
    pub fn wants_collection(&self) -> bool {
        self.collect.load(Ordering::Relaxed)
    }

    /// Sets the flags that the counts call for ([`Store::is_crowded`],
    /// [`Store::wants_collection`], [`Store::is_full`]), and clears the first two where the
    /// counts no longer call for them.
    fn signal(&self) {
        let (nodes, filled, slots) = (self.nodes() as f64, self.filled() as f64, self.slots as f64);
        let largest = self.is_largest();
        let set = |flag: &AtomicBool, on: bool| {
            if flag.load(Ordering::Relaxed) != on {
                flag.store(on, Ordering::Relaxed);
            }
        };
        set(&self.crowded, !largest && filled > GROW_AT * slots);
        set(&self.collect, largest && nodes > COLLECT_AT * slots);
        if largest && filled > FULL_AT * slots {
            set(&self.full, true);
        }
    }

    /// Whether tombstones take more than a quarter of the slots: worth a [`Store::compact`]
    /// between steps.
    pub fn has_tombs(&self) -> bool {
        (self.filled().saturating_sub(self.nodes())) as f64 > 0.25 * self.slots() as f64
    }

    #[inline(always)]
    fn word(&self, id: Id, word: usize) -> &AtomicU32 {
        &self.words[id as usize * WORDS + word]
    }

    /// The key of node `id`: its children's ids, or a leaf's cells.
    #[inline]
    pub fn key(&self, id: Id) -> [u32; 4] {
        std::array::from_fn(|i| self.word(id, i).load(Ordering::Relaxed))
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

    /// Forgets the results of every node above `level`: a pass over the whole table, split
    /// among the threads of the rayon pool it is called in (a run to 10^100 generations makes
    /// one for each of its step sizes).
    pub fn forget_results_above(&mut self, level: u32) {
        use rayon::prelude::*;
        let words = plain(&mut self.words);
        words.par_chunks_mut(WORDS << 12).for_each(|nodes| {
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

    /// The first slot a key's probe looks at.
    #[inline]
    fn home(&self, level: u32, key: [u32; 4]) -> usize {
        home(hash(level, key), self.slots)
    }

    /// Counts a node made by this thread, in an empty slot (`fresh`) or a tombstone.
    #[inline]
    fn count_one(&self, fresh: bool) {
        MADE.with(|made| {
            let (epoch, n, f) = made.get();
            let (n, f) = match epoch == self.epoch {
                true => (n + 1, f + fresh as u64),
                false => (1, fresh as u64),
            };
            if n >= COUNT_BATCH {
                self.tally.count.fetch_add(n, Ordering::Relaxed);
                self.tally.filled.fetch_add(f, Ordering::Relaxed);
                self.signal();
                made.set((self.epoch, 0, 0));
            } else {
                made.set((self.epoch, n, f));
            }
        });
    }

    /// The node of `level` with `key` (children's ids, or a leaf's cells): found, or made (in
    /// the first tombstone of its probe, else the empty slot that ends it); `None` where the
    /// table has no empty slot left.
    #[inline]
    pub fn node(&self, level: u32, key: [u32; 4]) -> Option<Id> {
        debug_assert!((1..=MAX_LEVEL).contains(&level));
        'probe: loop {
            let mut i = self.home(level, key);
            let mut tomb = None;
            for _ in 0..self.slots {
                let meta = self.settled_meta(i as Id);
                if meta == 0 {
                    // Not in the table: made in the first tombstone passed, or here.
                    let (at, was) = match tomb {
                        Some(t) => (t, TOMB),
                        None => (i, 0),
                    };
                    let slot = self.word(at as Id, META);
                    if slot
                        .compare_exchange(was, WRITING, Ordering::Acquire, Ordering::Relaxed)
                        .is_err()
                    {
                        // Another thread took it, perhaps for this very key: look again.
                        continue 'probe;
                    }
                    let id = at as Id;
                    for (w, &k) in key.iter().enumerate() {
                        self.word(id, w).store(k, Ordering::Relaxed);
                    }
                    self.word(id, RESULT).store(NONE, Ordering::Relaxed);
                    self.word(id, POPULATION).store(0, Ordering::Relaxed);
                    slot.store(level, Ordering::Release);
                    self.count_one(was == 0);
                    return Some(id);
                }
                if meta == TOMB {
                    tomb.get_or_insert(i);
                } else if meta & LEVEL == level && self.key(i as Id) == key {
                    return Some(i as Id);
                }
                i = next(i, self.slots);
            }
            self.full.store(true, Ordering::Relaxed);
            return None;
        }
    }

    /// The [`META`] word of slot `id` once no thread is filling it. A wait does not count as a
    /// step of the probe: a writer descheduled mid-fill (more threads than cores) would
    /// otherwise run a probe out of steps and make the table look full.
    #[inline]
    fn settled_meta(&self, id: Id) -> u32 {
        let word = self.word(id, META);
        let mut waits = 0u32;
        loop {
            let meta = word.load(Ordering::Acquire);
            if meta & WRITING == 0 {
                return meta;
            }
            waits += 1;
            match waits < 64 {
                true => std::hint::spin_loop(),
                false => std::thread::yield_now(),
            }
        }
    }

    /// Asks the processor to fetch the slots where looking up `keys` (of `level`) will start,
    /// so that the lookups that follow find them in the cache and their misses overlap rather
    /// than follow one another.
    #[inline]
    pub fn prefetch(&self, level: u32, keys: &[[u32; 4]]) {
        for &key in keys {
            prefetch(self.word(self.home(level, key) as Id, 0));
        }
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

    /// Makes room for `more` nodes beyond those there, as far as the cap allows: a builder of
    /// many nodes calls it first, since the table grows only when asked to. Growing changes
    /// every id; `roots` are rewritten.
    pub fn reserve(&mut self, more: u64, roots: &mut [Id]) -> Result<()> {
        let want = (self.nodes() + more) as f64 / GROW_AT;
        let mut slots = self.slots();
        while (slots as f64) < want && slots < self.most_slots {
            slots *= 4;
        }
        let slots = slots.min(self.most_slots);
        if slots > self.slots() {
            self.rebuild(slots, false, roots)?;
        }
        Ok(())
    }

    /// Moves every node into a table of the same size without tombstones, rewriting `roots`.
    pub fn compact(&mut self, roots: &mut [Id]) -> Result<()> {
        let slots = self.slots();
        self.rebuild(slots, false, roots)
    }

    /// Moves every node into a table four times larger (at most the cap's), rewriting `roots`.
    pub fn grow(&mut self, roots: &mut [Id]) -> Result<()> {
        let slots = (self.slots() * 4).min(self.most_slots);
        self.rebuild(slots, false, roots)
    }

    /// Collects garbage: keeps the nodes reachable from `roots` and, while the kept nodes
    /// fill at most half the table, memoised results and what they reach; rewrites `roots` to
    /// the nodes' new ids. See the module documentation.
    pub fn collect(&mut self, roots: &mut [Id]) -> Result<()> {
        let slots = self.slots();
        self.rebuild(slots, true, roots)
    }

    /// Moves the nodes into a table of `slots` slots: all of them, or where `collect`, those
    /// reachable from `roots` (and results while they fit, see [`Store::collect`]).
    fn rebuild(&mut self, slots: usize, collect: bool, roots: &mut [Id]) -> Result<()> {
        let leaf_level = self.leaf_level;
        let empties: Vec<Id> = self
            .empty
            .iter()
            .map(|e| e.load(Ordering::Relaxed))
            .collect();
        let old_slots = self.slots();
        let words = plain(&mut self.words);
        let is_inner = |node: &[u32]| node[META] & LEVEL > leaf_level;
        let live = |words: &[u32], id: Id| -> bool {
            let meta = words[id as usize * WORDS + META];
            meta & LEVEL != 0 && (!collect || meta & MARK != 0)
        };
        if collect {
            mark(words, roots, &empties, leaf_level, old_slots / 2);
        }
        // Nodes by level, so that each node's children move before it.
        let mut by_level: Vec<Vec<Id>> = Vec::new();
        for id in 1..old_slots as Id {
            if live(words, id) {
                let level = (words[id as usize * WORDS + META] & LEVEL) as usize;
                if by_level.len() <= level {
                    by_level.resize(level + 1, Vec::new());
                }
                by_level[level].push(id);
            }
        }
        let mut new =
            match memory::zeroed_vec::<u32>((slots * WORDS) as u64, "the HashLife node table") {
                Ok(new) => new,
                Err(e) => {
                    unmark(words);
                    return Err(e);
                }
            };
        let mut count = 0u64;
        for ids in &by_level {
            for &id in ids {
                let old = &words[id as usize * WORDS..][..WORDS];
                let level = old[META] & LEVEL;
                let mut key = [old[0], old[1], old[2], old[3]];
                if is_inner(old) {
                    for k in key.iter_mut() {
                        *k = words[*k as usize * WORDS + MOVED];
                    }
                }
                let mut i = home(hash(level, key), slots);
                while new[i * WORDS + META] != 0 {
                    i = next(i, slots);
                }
                let slot = &mut new[i * WORDS..][..WORDS];
                slot[..4].copy_from_slice(&key);
                slot[META] = level;
                slot[RESULT] = old[RESULT];
                slot[POPULATION] = old[POPULATION];
                words[id as usize * WORDS + MOVED] = i as u32;
                count += 1;
            }
        }
        // Results, to the new ids of the nodes they name (where those were kept).
        let moved = |words: &[u32], id: Id| -> Id {
            match id {
                NONE | BUSY => NONE,
                _ if live(words, id) => words[id as usize * WORDS + MOVED],
                _ => NONE,
            }
        };
        for node in new.chunks_exact_mut(WORDS) {
            if node[META] != 0 {
                node[RESULT] = moved(words, node[RESULT]);
            }
        }
        for root in roots.iter_mut() {
            *root = moved(words, *root);
        }
        for (slot, &old) in self.empty.iter_mut().zip(&empties) {
            *slot.get_mut() = moved(words, old);
        }
        self.words = atomics(new);
        self.slots = slots;
        *self.tally.count.get_mut() = count;
        *self.tally.filled.get_mut() = count;
        *self.full.get_mut() = false;
        self.signal();
        self.epoch = fresh_epoch();
        Ok(())
    }
}

impl Store {
    /// Collects garbage during a step, in place: keeps the nodes reachable from `roots` and
    /// their results (and what those reach), the empty nodes, and while they fit in a quarter
    /// of the table the memoised results of kept nodes; the other nodes become tombstones, and
    /// results naming them are forgotten. No kept node moves. Only while no other thread uses
    /// the store (the stepping threads all stopped at a safe point); returns the nodes kept.
    pub fn sweep(&self, roots: &[Id]) -> u64 {
        let leaf_level = self.leaf_level;
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
        let budget = (self.slots() / 4) as u64;
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
        // dropped nodes made tombstones.
        for id in 1..self.slots() as Id {
            if marked(id) {
                let result = self.result(id);
                if result != NONE && result != BUSY && !marked(result) {
                    self.word(id, RESULT).store(NONE, Ordering::Relaxed);
                }
            }
        }
        for id in 1..self.slots() as Id {
            let m = meta(id);
            if m & MARK != 0 {
                self.word(id, META).store(m & !MARK, Ordering::Relaxed);
            } else if is_node(m) {
                self.word(id, META).store(TOMB, Ordering::Relaxed);
                self.word(id, RESULT).store(NONE, Ordering::Relaxed);
                self.word(id, POPULATION).store(0, Ordering::Relaxed);
            }
        }
        self.tally.count.store(kept, Ordering::Relaxed);
        self.signal();
        // Too little garbage to be worth going on: the step stops for a smaller one.
        if kept as f64 > 0.9 * COLLECT_AT * self.slots() as f64 {
            self.full.store(true, Ordering::Relaxed);
        }
        kept
    }
}

/// Marks the nodes reachable from `roots` and `empties` by their children, then, breadth
/// first while fewer than `budget` are marked, the results of marked nodes and what those
/// reach.
fn mark(words: &mut [u32], roots: &[Id], empties: &[Id], leaf_level: u32, budget: usize) {
    let is_inner = |node: &[u32]| node[META] & LEVEL > leaf_level;
    // Marks `from` and what it reaches by its children; pushes what it marks on `marked`.
    let mut stack = Vec::new();
    let mut mark_from = |words: &mut [u32], from: Id, marked: &mut Vec<Id>| {
        stack.push(from);
        while let Some(id) = stack.pop() {
            if id == NONE || id == BUSY {
                continue;
            }
            let node = &mut words[id as usize * WORDS..][..WORDS];
            if node[META] & MARK != 0 {
                continue;
            }
            node[META] |= MARK;
            marked.push(id);
            if is_inner(node) {
                stack.extend_from_slice(&node[..4]);
            }
        }
    };
    let mut frontier = Vec::new();
    for &root in roots.iter().chain(empties.iter()) {
        mark_from(words, root, &mut frontier);
    }
    let mut kept = frontier.len();
    while kept < budget && !frontier.is_empty() {
        let mut next = Vec::new();
        for id in frontier {
            let result = words[id as usize * WORDS + RESULT];
            let before = next.len();
            mark_from(words, result, &mut next);
            kept += next.len() - before;
            if kept >= budget {
                break;
            }
        }
        frontier = next;
    }
}

/// Clears every mark (a rebuild that could not get its new table).
fn unmark(words: &mut [u32]) {
    for node in words.chunks_exact_mut(WORDS) {
        node[META] &= !MARK;
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
    fn a_crowded_store_grows_and_a_full_one_says_so() {
        let mut store = Store::new(16 * FIRST_SLOTS as u64 * SLOT_BYTES, 3).unwrap();
        let mut made: Vec<Id> = Vec::new();
        for k in 1..=40_000u32 {
            made.push(store.node(3, [k, 0, 0, 0]).unwrap());
        }
        assert!(store.is_crowded());
        store.grow(&mut made).unwrap();
        assert!(!store.is_crowded());
        // Every node found again under its new id.
        for (k, &id) in (1..=40_000u32).zip(&made) {
            assert_eq!(store.key(id), [k, 0, 0, 0]);
            assert_eq!(store.node(3, [k, 0, 0, 0]), Some(id));
        }
        // At the cap's largest table, full past FULL_AT.
        let mut k = 40_001u32;
        while !store.is_full() {
            if store.is_crowded() {
                store.grow(&mut []).unwrap();
            }
            store.node(3, [k, 0, 0, 0]).unwrap();
            k += 1;
        }
        assert!(!store.is_crowded());
    }

    #[test]
    fn collection_keeps_what_roots_reach() {
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
        let mut roots = [kept];
        store.collect(&mut roots).unwrap();
        let kept = roots[0];
        // The kept node, its four leaves and its result.
        assert_eq!(store.nodes(), 6);
        let children = store.key(kept);
        let keys: Vec<[u32; 4]> = children.iter().map(|&c| store.key(c)).collect();
        assert_eq!(keys, (1..=4).map(|k| [k, 0, 0, 0]).collect::<Vec<_>>());
        assert_eq!(store.key(store.result(kept)), [99, 0, 0, 0]);
        // Found again by key, and the dropped ones are gone.
        assert_eq!(store.node(3, [3, 0, 0, 0]), Some(children[2]));
        assert_eq!(store.nodes(), 6);
        store.node(3, [5, 0, 0, 0]).unwrap();
    }
}
