//! The node store: every quadtree node of a plane, hash-consed, shared by all threads.
//!
//! A *node* of level `k` is a square of 2^k × 2^k cells. A node above the leaves has four
//! *children* of level `k − 1` (north-west, north-east, south-west, south-east); a *leaf* holds
//! its cells directly (the leaf level and the cells' encoding belong to the [`crate::Leaf`]
//! kind). Every distinct node exists once: [`Store::node`] finds a node by its level and
//! children, or makes it. A node is named by its [`Id`], its index in the arena.
//!
//! # Layout
//!
//! A node is eight `u32` words, 32 bytes, two to a cache line:
//!
//! | word | what |
//! | --- | --- |
//! | 0–3 | the *key*: the children's ids (nw, ne, sw, se), or a leaf's cells |
//! | 4 | the next node in the same hash bucket (0 ends the chain) |
//! | 5 | the memoised *result* (see [`crate::hashlife`]), 0 while not computed |
//! | 6 | the level (bits 0–15); bit 31 marks the node during garbage collection |
//! | 7 | the number of cells not in state 0, plus one, saturating (0: not counted yet) |
//!
//! Node 0 is never used, so that id 0 can mean "none". The arena is allocated once, zeroed, at
//! the capacity the memory cap allows; the system maps its pages only when nodes are first
//! written there, so a small pattern costs little whatever the cap. The bucket heads grow with
//! the nodes instead (their pages are all touched at random): once there are fewer than
//! [`BUCKETS_PER_NODE`] buckets a node, the store says it is crowded ([`Store::is_crowded`]),
//! and between two steps [`Store::rehash`] makes four times as many buckets (or more), every
//! node and result kept.
//!
//! A lookup costs about two misses of the cache, the bucket's head and the node it names; a
//! caller that knows several keys ahead gives them to [`Store::prefetch`] first, so that their
//! misses overlap.
//!
//! # Concurrency
//!
//! Many threads find and make nodes at once, without locks. Each thread takes ids from its own
//! chunk of the arena ([`CHUNK`] ids, cut from a shared counter), writes the new node's words,
//! then publishes it by a compare-and-swap of its bucket's head (release); a reader loads the
//! head with acquire and walks the chain. When two threads make the same node at once, the one
//! whose swap fails finds the other's node in the chain and gives its own id back. Results are
//! written with one atomic store: two threads that compute the same result store the same id.
//!
//! # Garbage collection
//!
//! [`Store::collect`] runs between steps, with the store to itself: it marks every node reachable
//! from the roots (and, while they fit in half the arena, the memoised results of marked nodes
//! and what those reach), moves the marked nodes to the front of the arena in the order they
//! were made (children are made before their parents, so a child's id stays below its
//! parent's), rewrites every id, and rebuilds the buckets. The caller's roots are rewritten in
//! place.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use gol_core::{memory, Result};

/// A node's index in the arena; [`NONE`] is no node.
pub type Id = u32;

/// No node.
pub const NONE: Id = 0;

/// A result word's value while one thread computes the result ([`Store::claim`]); never a
/// node's id (ids stay below `u32::MAX - CHUNK`).
pub const BUSY: Id = u32::MAX;

/// The words of a node.
const WORDS: usize = 8;
/// Word of the next node in the bucket.
const NEXT: usize = 4;
/// Word of the memoised result.
const RESULT: usize = 5;
/// Word of the level and the mark.
const META: usize = 6;
/// Word of the population plus one.
const POPULATION: usize = 7;
/// The mark bit of [`META`].
const MARK: u32 = 1 << 31;
/// The level's bits of [`META`].
const LEVEL: u32 = 0xffff;

/// Bytes a node costs: its words, and its share of the bucket heads (one head per node).
pub const NODE_BYTES: u64 = (WORDS as u64 + 1) * 4;

/// Ids a thread takes from the shared counter at once.
const CHUNK: u64 = 256;

/// Buckets a node has at least: below that the store is crowded. Two: a lookup that finds
/// nothing walks half a node on average (each step of a chain is a miss of the cache, the cost
/// of a lookup; broken-lines.mc, 2^22 generations, one thread: 5.1 s with two nodes a bucket,
/// 3.6 s with half a node).
const BUCKETS_PER_NODE: u64 = 2;

/// The buckets of a fresh store.
const FIRST_BUCKETS: usize = 1 << 14;

/// The highest level a node may have: a square 2^4095 cells wide, far beyond what 10^1000
/// generations can reach.
pub const MAX_LEVEL: u32 = 4095;

/// A number no other store (or earlier state of the same store) has: it tells a thread's chunk
/// of ids from a stale one.
fn fresh_epoch() -> u64 {
    static EPOCHS: AtomicU64 = AtomicU64::new(1);
    EPOCHS.fetch_add(1, Ordering::Relaxed)
}

thread_local! {
    /// The ids this thread may hand out: (epoch of the store, next id, end of the chunk).
    static IDS: Cell<(u64, u64, u64)> = const { Cell::new((0, 0, 0)) };
}

/// The arena of nodes and the hash buckets that find them.
pub struct Store {
    words: Box<[AtomicU32]>,
    buckets: Box<[AtomicU32]>,
    /// Nodes the arena holds (node 0 included).
    capacity: u64,
    /// The first id never handed out.
    used: AtomicU64,
    /// Set when an id was asked for and none was left.
    full: AtomicBool,
    /// Ids handed out above which the buckets are too few.
    crowded_at: u64,
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

/// Asks Linux to back `memory` with huge pages (2 MiB) where it can: nodes and buckets are
/// read at random, and with 4 KiB pages nearly every lookup also misses the TLB (broken-lines.mc,
/// 2^22 generations, one thread: 4.06–4.12 s with small pages, 3.91–3.96 s with huge ones).
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

/// The bucket of a key: a linear mix, so that nodes made of children that were made close
/// together (close in the arena) land in buckets close together, and a run of lookups touches
/// fewer lines of the cache (Golly's HashLife mixes its children's addresses the same way).
#[inline]
fn hash(level: u32, key: [u32; 4]) -> u64 {
    (key[0] as u64)
        .wrapping_mul(5)
        .wrapping_add((key[1] as u64).wrapping_mul(17))
        .wrapping_add((key[2] as u64).wrapping_mul(257))
        .wrapping_add((key[3] as u64).wrapping_mul(65537))
        .wrapping_add((level as u64).wrapping_mul(0x9e37_79b9))
}

impl Store {
    /// A store of `bytes` (at least a few thousand nodes) for leaves of `leaf_level`.
    pub fn new(bytes: u64, leaf_level: u32) -> Result<Store> {
        let capacity = (bytes / NODE_BYTES).clamp(1 << 12, u32::MAX as u64 - CHUNK);
        let what = "the HashLife node store";
        let words = atomics(memory::zeroed_vec::<u32>(capacity * WORDS as u64, what)?);
        let buckets = atomics(vec![0; FIRST_BUCKETS]);
        Ok(Store {
            words,
            buckets,
            capacity,
            used: AtomicU64::new(1),
            full: AtomicBool::new(false),
            crowded_at: FIRST_BUCKETS as u64 / BUCKETS_PER_NODE,
            epoch: fresh_epoch(),
            empty: atomics(vec![0; MAX_LEVEL as usize + 1]),
            leaf_level,
        })
    }

    /// The level of the leaves.
    pub fn leaf_level(&self) -> u32 {
        self.leaf_level
    }

    /// Nodes the store can hold.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Bytes the store may take: its memory cap.
    pub fn bytes(&self) -> u64 {
        self.capacity * NODE_BYTES
    }

    /// Ids handed out so far (nodes made, and the unused rest of threads' chunks).
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed).min(self.capacity)
    }

    /// Bytes of nodes in use.
    pub fn bytes_used(&self) -> u64 {
        self.used() * NODE_BYTES
    }

    /// Whether a node could not be made for want of room since the last collection.
    pub fn is_full(&self) -> bool {
        self.full.load(Ordering::Relaxed)
    }

    /// Whether the buckets are too few for the nodes: chains grow long, and a step should stop
    /// for [`Store::rehash`].
    #[inline]
    pub fn is_crowded(&self) -> bool {
        self.used.load(Ordering::Relaxed) > self.crowded_at
    }

    /// Makes enough buckets for the nodes and those of a step to come (four times as many,
    /// as often as needed), and puts every node in its bucket again; nodes, ids and results
    /// stay as they are.
    pub fn rehash(&mut self) {
        let used = self.used() as usize;
        let mut buckets = self.buckets.len();
        let most = (self.capacity as usize).next_power_of_two();
        while (buckets as u64) < used as u64 * 2 * BUCKETS_PER_NODE && buckets < most {
            buckets *= 4;
        }
        self.crowded_at = buckets as u64 / BUCKETS_PER_NODE;
        self.rebuild(buckets, used);
    }

    /// Fresh buckets, `count` of them, with the nodes below `used` chained in (a node never
    /// written, its level 0, is left out).
    fn rebuild(&mut self, count: usize, used: usize) {
        // Fresh zero pages, not a pass over the old ones.
        self.buckets = atomics(vec![0; count]);
        let heads = plain(&mut self.buckets);
        let words = plain(&mut self.words);
        let mask = count - 1;
        for id in 1..used {
            let node = &mut words[id * WORDS..(id + 1) * WORDS];
            let level = node[META] & LEVEL;
            if level == 0 {
                continue;
            }
            let key = [node[0], node[1], node[2], node[3]];
            let bucket = &mut heads[hash(level, key) as usize & mask];
            node[NEXT] = *bucket;
            *bucket = id as Id;
        }
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

    /// Forgets the results of every node above `level`.
    pub fn forget_results_above(&mut self, level: u32) {
        let used = self.used() as usize;
        let words = plain(&mut self.words);
        for node in words[..used * WORDS].chunks_exact_mut(WORDS) {
            if node[META] & LEVEL > level {
                node[RESULT] = NONE;
            }
        }
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

    /// Takes an id from this thread's chunk, cutting a new chunk where it is used up; `None`
    /// when the arena is full.
    #[inline]
    fn take_id(&self) -> Option<Id> {
        IDS.with(|ids| {
            let (epoch, next, end) = ids.get();
            if epoch == self.epoch && next < end {
                ids.set((epoch, next + 1, end));
                return Some(next as Id);
            }
            let start = self.used.fetch_add(CHUNK, Ordering::Relaxed);
            if start + CHUNK > self.capacity {
                self.full.store(true, Ordering::Relaxed);
                return None;
            }
            ids.set((self.epoch, start + 1, start + CHUNK));
            Some(start as Id)
        })
    }

    /// Gives back `id`, the last one this thread took (unwritten: of level 0 until taken again).
    fn give_back(&self, id: Id) {
        self.word(id, META).store(0, Ordering::Relaxed);
        IDS.with(|ids| {
            let (epoch, next, end) = ids.get();
            if epoch == self.epoch && next == id as u64 + 1 {
                ids.set((epoch, next - 1, end));
            }
        });
    }

    /// The node of `level` with `key` (children's ids, or a leaf's cells): found, or made;
    /// `None` when it had to be made and the arena is full.
    #[inline]
    pub fn node(&self, level: u32, key: [u32; 4]) -> Option<Id> {
        debug_assert!(level <= MAX_LEVEL);
        let bucket = &self.buckets[hash(level, key) as usize & (self.buckets.len() - 1)];
        let mut head = bucket.load(Ordering::Acquire);
        if let Some(found) = self.find(head, NONE, level, key) {
            return Some(found);
        }
        let id = self.take_id()?;
        for (i, &k) in key.iter().enumerate() {
            self.word(id, i).store(k, Ordering::Relaxed);
        }
        self.word(id, RESULT).store(NONE, Ordering::Relaxed);
        self.word(id, META).store(level, Ordering::Relaxed);
        self.word(id, POPULATION).store(0, Ordering::Relaxed);
        loop {
            self.word(id, NEXT).store(head, Ordering::Relaxed);
            match bucket.compare_exchange(head, id, Ordering::Release, Ordering::Acquire) {
                Ok(_) => return Some(id),
                Err(now) => {
                    // Others published since: one of theirs may be this very node.
                    if let Some(found) = self.find(now, head, level, key) {
                        self.give_back(id);
                        return Some(found);
                    }
                    head = now;
                }
            }
        }
    }

    /// Asks the processor to fetch what looking up `keys` (of `level`) will read: their buckets,
    /// then the first node of each chain, so that the lookups that follow find them in the
    /// cache and their misses overlap rather than follow one another.
    #[inline]
    pub fn prefetch(&self, level: u32, keys: &[[u32; 4]]) {
        let mask = self.buckets.len() - 1;
        let buckets: [usize; 5] = std::array::from_fn(|i| match keys.get(i) {
            Some(&key) => hash(level, key) as usize & mask,
            None => usize::MAX,
        });
        for &b in buckets.iter().filter(|&&b| b != usize::MAX) {
            prefetch(&self.buckets[b]);
        }
        for &b in buckets.iter().filter(|&&b| b != usize::MAX) {
            let head = self.buckets[b].load(Ordering::Relaxed);
            if head != NONE {
                prefetch(self.word(head, 0));
            }
        }
    }

    /// The node of `level` with `key` in the chain from `from` to `until` (exclusive).
    #[inline]
    fn find(&self, from: Id, until: Id, level: u32, key: [u32; 4]) -> Option<Id> {
        let mut id = from;
        while id != until {
            if self.key(id) == key && self.level(id) == level {
                return Some(id);
            }
            id = self.word(id, NEXT).load(Ordering::Relaxed);
        }
        None
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

    /// Collects garbage: keeps the nodes reachable from `roots` and, while the kept nodes
    /// fill at most half the arena, memoised results and what they reach; rewrites `roots` to
    /// the nodes' new ids. See the module documentation.
    pub fn collect(&mut self, roots: &mut [Id]) {
        let used = self.used() as usize;
        let leaf_level = self.leaf_level;
        let empties: Vec<Id> = self
            .empty
            .iter()
            .map(|e| e.load(Ordering::Relaxed))
            .collect();
        let words = plain(&mut self.words);
        let is_inner = |node: &[u32]| node[META] & LEVEL > leaf_level;
        // Marks `from` and what it reaches by its children; returns how many were marked.
        let mark = |words: &mut [u32], from: Id, stack: &mut Vec<Id>| -> usize {
            let mut marked = 0;
            stack.push(from);
            while let Some(id) = stack.pop() {
                let node = &mut words[id as usize * WORDS..][..WORDS];
                if id == NONE || node[META] & MARK != 0 {
                    continue;
                }
                node[META] |= MARK;
                marked += 1;
                if is_inner(node) {
                    stack.extend_from_slice(&node[..4]);
                }
            }
            marked
        };
        let mut stack = Vec::new();
        let mut kept = 0;
        for &root in roots.iter().chain(empties.iter()) {
            kept += mark(words, root, &mut stack);
        }
        // Results of kept nodes, breadth first, while they fit.
        let budget = self.capacity as usize / 2;
        let mut frontier: Vec<Id> = (1..used as Id)
            .filter(|&id| words[id as usize * WORDS + META] & MARK != 0)
            .collect();
        while kept < budget && !frontier.is_empty() {
            let mut next = Vec::new();
            for id in frontier {
                let result = words[id as usize * WORDS + RESULT];
                if result == NONE || words[result as usize * WORDS + META] & MARK != 0 {
                    continue;
                }
                let before = next.len();
                // The newly marked nodes are the next frontier (their own results).
                stack.push(result);
                while let Some(n) = stack.pop() {
                    let node = &mut words[n as usize * WORDS..][..WORDS];
                    if n == NONE || node[META] & MARK != 0 {
                        continue;
                    }
                    node[META] |= MARK;
                    next.push(n);
                    if is_inner(node) {
                        stack.extend_from_slice(&node[..4]);
                    }
                }
                kept += next.len() - before;
                if kept >= budget {
                    break;
                }
            }
            frontier = next;
        }
        // New ids, in the order the nodes were made, kept in the NEXT word for now.
        let mut count: u32 = 1;
        for node in words[WORDS..used * WORDS].chunks_exact_mut(WORDS) {
            if node[META] & MARK != 0 {
                node[NEXT] = count;
                count += 1;
            }
        }
        let new_id = |words: &[u32], id: Id| -> Id {
            match id {
                NONE | BUSY => NONE,
                _ if words[id as usize * WORDS + META] & MARK == 0 => NONE,
                _ => words[id as usize * WORDS + NEXT],
            }
        };
        // Every id rewritten: children (all kept) and results (kept where their node is).
        for id in 1..used {
            if words[id * WORDS + META] & MARK == 0 {
                continue;
            }
            if words[id * WORDS + META] & LEVEL > leaf_level {
                for i in 0..4 {
                    let child = words[id * WORDS + i];
                    words[id * WORDS + i] = new_id(words, child);
                }
            }
            let result = words[id * WORDS + RESULT];
            words[id * WORDS + RESULT] = new_id(words, result);
        }
        for root in roots.iter_mut() {
            *root = new_id(words, *root);
        }
        let empties: Vec<Id> = empties.iter().map(|&e| new_id(words, e)).collect();
        // Moved down, in order: a node's new slot is below or at its old one.
        for id in 1..used {
            let meta = words[id * WORDS + META];
            if meta & MARK == 0 {
                continue;
            }
            let to = words[id * WORDS + NEXT] as usize;
            words.copy_within(id * WORDS..(id + 1) * WORDS, to * WORDS);
            words[to * WORDS + META] = meta & !MARK;
        }
        let buckets = self.buckets.len();
        self.rebuild(buckets, count as usize);
        for (slot, id) in self.empty.iter_mut().zip(empties) {
            *slot.get_mut() = id;
        }
        *self.used.get_mut() = count as u64;
        *self.full.get_mut() = false;
        self.epoch = fresh_epoch();
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn equal_nodes_are_one_node() {
        let store = Store::new(1 << 20, 3).unwrap();
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
        let store = Store::new(1 << 24, 3).unwrap();
        let made: Vec<Vec<Id>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        (0..5000u32)
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
        assert_eq!(ids.len(), 5000);
    }

    #[test]
    fn a_full_store_says_so() {
        let store = Store::new(1 << 12, 3).unwrap();
        let made = (0..1_000_000u32)
            .map_while(|k| store.node(3, [k, 0, 0, 0]))
            .count();
        assert!(made < 1_000_000 && store.is_full());
    }

    #[test]
    fn collection_keeps_what_roots_reach() {
        let mut store = Store::new(1 << 20, 3).unwrap();
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
        store.collect(&mut roots);
        let kept = roots[0];
        // The kept node, its four leaves and its result, and the empty nodes made so far (none).
        assert_eq!(store.used(), 1 + 6);
        let children = store.key(kept);
        let keys: Vec<[u32; 4]> = children.iter().map(|&c| store.key(c)).collect();
        assert_eq!(keys, (1..=4).map(|k| [k, 0, 0, 0]).collect::<Vec<_>>());
        assert_eq!(store.key(store.result(kept)), [99, 0, 0, 0]);
        // Found again by key after the buckets were rebuilt, and new nodes made after them.
        assert_eq!(store.node(3, [3, 0, 0, 0]), Some(children[2]));
        let fresh = store.node(3, [5, 0, 0, 0]).unwrap();
        assert!(fresh as u64 >= 7);
    }
}
