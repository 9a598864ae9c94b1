//! HashLife (Gosper's algorithm) over the [`Store`], on every core.
//!
//! The *result* of a node of level k is its centre, a node of level k − 1, advanced 2^s
//! generations, where s = min(j, k − 2) and 2^j is the step being taken: the most a node of
//! level k can be advanced knowing nothing outside it. Results are memoised in the store, so a
//! region met again (in space or in time) is not computed again.
//!
//! For a node of level k above the base, the nine overlapping nodes of level k − 1 inside it
//! (its four children, and five made of its grandchildren) give nine results of level k − 2.
//! Where s = k − 2, those nine form four nodes of level k − 1 whose results (another
//! 2^(k−3) generations) are the four children of the result; where s < k − 2, the nine results
//! are already 2^s generations on, and the four children are the centres of those four nodes.
//! At the base (one level above the leaves) the [`Leaf`] kind steps the cells itself. Stepping
//! sixteen leaves at once instead, as Golly does, hashes fewer nodes but memoises less:
//! measured slower on every pattern tried (hashlife-oddity1.mc, 2^24 generations, one thread:
//! 5.95 s against 3.51 s; puzzle.mc, 2^26: 6.07 s against 4.23 s; broken-lines.mc, 2^22: 4.09
//! s against 3.56 s).
//!
//! Results of levels up to j + 2 are full steps and do not depend on j; those above do, and are
//! forgotten when j changes ([`Store::forget_results_above`]).
//!
//! # Threads
//!
//! From `PARALLEL_LEVEL` up, results are *tasks* that the threads share (`tasks.rs`): a
//! task waiting for others' results is put aside, never blocking its thread, and no result
//! there is computed twice. Below, a task's nine and four are computed by plain recursion on
//! its thread. (Rayon's `join` over the nine, as this was first, could not wait for a result
//! another thread was computing without risking deadlock, so threads computed such results
//! again: on 16 threads oddity2.mc at 2^36 made 101.7 million results where one thread makes
//! 26.9 million, and ran slower than one thread.)
//!
//! Below the parallel level, threads working side by side on neighbouring tasks meet the same
//! nodes, whose nine overlap. So a thread *claims* a node before computing its result
//! ([`Store::claim`]: a compare-and-swap of its result word to [`BUSY`]). A thread that needs
//! a result another has claimed does not wait for it: it *helps*, computing the same result
//! itself, on its own thread and going through the node's nine and four the other way round.
//! The parts the claimant has finished are memoised, those it is working on are claimed (and
//! helped with in turn), and the others the helper claims, so the two meet midway and split
//! what is left between them; both store the same result. Going the same way instead, the
//! helper trails the claimant and computes what it computes (two threads, hashlife-oddity1.mc,
//! 2^24 generations, when this was done over all levels: 5.62 million results; the other way
//! round, 3.22 million against one thread's 3.01 million).
//!
//! A step that runs out of room or is asked to stop returns `None` from any depth, giving its
//! claims back; what it memoised stays valid.
//!
//! # Garbage within a step
//!
//! A step that fills the store's arena to [`crate::store::COLLECT_AT`] does not start again:
//! every thread stops at its next safe point and one of them sweeps the store in place,
//! keeping what the threads hold (`Pause`), as Golly does. Where the index will be crowded
//! first, the step stops and the index grows instead, and the bookkeeping is off (kept on,
//! its fences cost two threads on puzzle.mc 3 % to 12 % when they came at every `join`).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

use gol_core::{Error, Result};
use num_bigint::BigUint;
use num_traits::{One, Zero};

use crate::leaf::Leaf;
use crate::store::{Id, Store, BUSY, MAX_LEVEL, NONE};
use crate::tasks::Tasks;
use crate::tree::Tree;

/// The level from which results of nodes are tasks shared by the threads ([`crate::tasks`]),
/// for steps of 2^j with j ≥ 23. Measured with 16 threads on a 16-core host (gpu-host-16c,
/// `GOL_HASHLIFE_PARALLEL_LEVEL`, two sweeps; oddity2.mc 2^36, totalperiodic.mc 2^24,
/// logarithmic-width.mc 2^28, ruler.mc 2^56, puzzle.mc 2^32): level 6 17.8, 4.0, 20.4, 4.0,
/// 4.7 s; level 12 15.4, 3.4, 9.6, 3.6, 4.0 s; level 15 11.5–12.3, 2.3–2.8, 8.8–10.7, 3.2–3.5,
/// 3.6–4.1 s; level 21 10.7, 9.2, 9.3, 3.1, 3.7 s; level 30 11.8, 25.0, 9.4, 2.6, 4.3 s. Lower,
/// tasks are too small for what a task costs (its place in the map, and the nodes it makes
/// read on another core when it is stolen); higher, a pattern as wide as totalperiodic has too
/// few of them to share. Every pattern of Golly's `HashLife` folder run with a step of 2^24 or
/// more ran faster at level 15 than the build before (rayon's `join` from level 12).
const PARALLEL_LEVEL: u32 = 15;

/// The lowest level from which results are tasks by default.
const LOWEST_PARALLEL_LEVEL: u32 = 8;

/// The default parallel level of a step of 2^j: j − 8, from [`LOWEST_PARALLEL_LEVEL`] (steps
/// of 2^16 and less) to [`PARALLEL_LEVEL`] (2^23 and more). Measured on 16 threads (gpu-host-16c,
/// one call, `GOL_HASHLIFE_PARALLEL_LEVEL` = 8 / 10 / 12 / 14): triple-Snark 2^16 1.05 / 1.74 /
/// 5.35 / 6.84 s; the three patterns of the folder run with steps of 2^20, together (jagged2,
/// hexadecimal, unlimited-novelty) 5.62 / 6.10 / 6.17 / 7.61 s. A short step has fewer
/// results to share at each level, so its tasks must start lower to be enough of them.
fn default_parallel_level(j: u32) -> u32 {
    j.saturating_sub(8)
        .clamp(LOWEST_PARALLEL_LEVEL, PARALLEL_LEVEL)
}

/// The level asked for: `asked`, or `GOL_HASHLIFE_PARALLEL_LEVEL` where it is set (`None`:
/// the default of each step, [`default_parallel_level`]).
fn parallel_level(asked: Option<u32>) -> Option<u32> {
    asked.or_else(|| {
        std::env::var("GOL_HASHLIFE_PARALLEL_LEVEL")
            .ok()
            .and_then(|v| v.parse().ok())
    })
}

/// One step of 2^j generations in progress: what the recursion shares.
pub(crate) struct Stepper<'a, L: Leaf> {
    pub(crate) store: &'a Store,
    pub(crate) leaf: &'a L,
    /// The step is 2^j generations.
    pub(crate) j: u32,
    /// Set from outside to stop the step.
    pub(crate) stop: &'a AtomicBool,
    /// Whether other threads compute results too (and so whether to claim them).
    pub(crate) shared: bool,
    /// The level from which results are parallel tasks.
    pub(crate) parallel_level: u32,
    /// How the threads stop together for a collection.
    pub(crate) pause: Pause,
    /// The results from the parallel level up, where several threads step.
    pub(crate) tasks: Tasks,
}

/// What the stepping threads share to collect garbage in the middle of a step.
///
/// Each thread keeps the ids its recursion holds on a stack of its own ([`Lane`]): the node
/// whose result each frame computes, its nine and its quarters (the results it has obtained
/// are those nodes' memoised results, which a collection keeps). A thread is *active* while
/// it runs a task or the recursion, from [`Stepper::enter`] to [`Stepper::leave`]; it leaves
/// between tasks. The tasks put aside, and the nodes they wait for, are roots too.
/// A thread that finds the store wanting a collection sets `requested`; every active thread
/// stops at its next safe point (the start of a result's computation, its stack complete),
/// leaving and waiting; no thread can enter while `requested` is set. A thread that leaves
/// while `requested` is set and finds no thread active sweeps the store ([`Store::sweep`])
/// with every stack as roots, then clears `requested` and wakes the others.
///
/// Each thread's flag lives in a cache line of its own: a shared count of active threads,
/// written at every `join` when threads shared results through rayon's `join`, cost two
/// threads a third of their speed in the line's traffic.
pub(crate) struct Pause {
    /// Whether collections can happen in this step ([`Store::may_collect`]): where the index
    /// will be crowded first, it grows between attempts instead, and the step skips all of
    /// this.
    on: bool,
    requested: AtomicBool,
    sweeping: AtomicBool,
    lock: Mutex<()>,
    resumed: Condvar,
    lanes: Vec<Lane>,
    /// The root of the tree, held by the engine.
    root: Id,
    /// Collections made during the step.
    pub(crate) collections: AtomicU64,
}

/// One thread's part of a [`Pause`]: whether it is active, and the ids its recursion holds.
#[repr(align(128))]
struct Lane {
    active: AtomicBool,
    held: UnsafeCell<Vec<Id>>,
    /// Results this thread computed above the base, and of those, as a helper.
    computed: AtomicU64,
    helped: AtomicU64,
}

// SAFETY: a thread reads and writes only its own lane's stack, and only while it is active;
// the one thread that sweeps reads them all while no thread is active, and none can become
// active before the sweep ends (`enter` stands aside while `requested` is set, which is
// cleared only after the sweep). The SeqCst stores and loads of the `active` flags and of
// `requested` order each thread's writes before the sweeper's reads, and the sweep before the
// threads resume.
unsafe impl Sync for Lane {}

impl Pause {
    /// The state for `threads` threads stepping from `root`, collecting where `on`.
    pub(crate) fn new(threads: usize, root: Id, on: bool) -> Pause {
        Pause {
            on,
            requested: AtomicBool::new(false),
            sweeping: AtomicBool::new(false),
            lock: Mutex::new(()),
            resumed: Condvar::new(),
            lanes: (0..threads.max(1))
                .map(|_| Lane {
                    active: AtomicBool::new(false),
                    held: UnsafeCell::new(Vec::new()),
                    computed: AtomicU64::new(0),
                    helped: AtomicU64::new(0),
                })
                .collect(),
            root,
            collections: AtomicU64::new(0),
        }
    }

    /// Results computed above the base in this step, and of those, by helpers.
    pub(crate) fn work(&self) -> (u64, u64) {
        self.lanes.iter().fold((0, 0), |(c, h), lane| {
            (
                c + lane.computed.load(Ordering::Relaxed),
                h + lane.helped.load(Ordering::Relaxed),
            )
        })
    }

    /// This thread's lane.
    fn lane(&self) -> &Lane {
        &self.lanes[rayon::current_thread_index().unwrap_or(0)]
    }

    /// Counts a result computed above the base by this thread, `helping` another or not.
    pub(crate) fn count(&self, helping: bool) {
        // Only this thread writes its lane's counts (others read them after the step), so a
        // load and a store do what a locked add would, without its cost on every result.
        let lane = self.lane();
        let add = |count: &AtomicU64, n: u64| {
            count.store(count.load(Ordering::Relaxed) + n, Ordering::Relaxed)
        };
        add(&lane.computed, 1);
        add(&lane.helped, helping as u64);
    }

    /// Pushes `ids` on this thread's stack of held ids (where collections are on), returning
    /// the stack's height before, for [`Pause::drop_to`].
    #[inline]
    pub(crate) fn hold(&self, ids: &[Id]) -> usize {
        if !self.on {
            return 0;
        }
        // SAFETY: see `Lane`: only this thread touches its own stack while active, which it
        // is whenever it calls this.
        let held = unsafe { &mut *self.lane().held.get() };
        let height = held.len();
        held.extend_from_slice(ids);
        height
    }

    /// Drops this thread's held ids above `height`.
    pub(crate) fn drop_to(&self, height: usize) {
        if self.on {
            // SAFETY: as in `hold`.
            unsafe { &mut *self.lane().held.get() }.truncate(height);
        }
    }
}

impl<L: Leaf> Stepper<'_, L> {
    /// Whether the step must stop: asked to, or the store is full or crowded.
    pub(crate) fn halted(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.store.is_crowded() || self.store.is_full()
    }

    /// This thread starts running the recursion (see [`Pause`]).
    pub(crate) fn enter(&self) {
        let pause = &self.pause;
        if !pause.on {
            return;
        }
        let lane = pause.lane();
        loop {
            lane.active.store(true, Ordering::SeqCst);
            if !pause.requested.load(Ordering::SeqCst) {
                return;
            }
            // A collection is wanted or under way: stand aside until it is done.
            self.leave();
            self.wait();
        }
    }

    /// This thread stops running the recursion (see [`Pause`]); where a collection is wanted
    /// and no thread is active any more, this one makes it.
    pub(crate) fn leave(&self) {
        let pause = &self.pause;
        if !pause.on {
            return;
        }
        pause.lane().active.store(false, Ordering::SeqCst);
        if pause.requested.load(Ordering::SeqCst) {
            self.sweep();
        }
    }

    /// Waits while a collection is wanted or under way.
    fn wait(&self) {
        let pause = &self.pause;
        let mut guard = pause.lock.lock().unwrap_or_else(|e| e.into_inner());
        while pause.requested.load(Ordering::SeqCst) {
            guard = pause.resumed.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Stops here for a collection where one is wanted (or asks for one where the store wants
    /// it): this thread's stack holds every id its recursion uses.
    pub(crate) fn safe_point(&self) {
        let pause = &self.pause;
        if !pause.on {
            return;
        }
        if !pause.requested.load(Ordering::Relaxed) {
            if !self.store.wants_collection() {
                return;
            }
            pause.requested.store(true, Ordering::SeqCst);
        }
        self.leave();
        self.wait();
        self.enter();
    }

    /// Sweeps the store if every thread has stopped (see [`Pause`]).
    fn sweep(&self) {
        let pause = &self.pause;
        if pause
            .lanes
            .iter()
            .any(|lane| lane.active.load(Ordering::SeqCst))
            || pause.sweeping.swap(true, Ordering::SeqCst)
        {
            // Whichever thread stops last finds none active.
            return;
        }
        let mut roots = vec![pause.root];
        for lane in &pause.lanes {
            // SAFETY: see `Lane`: no thread is active, so none touches its stack now.
            roots.extend_from_slice(unsafe { &*lane.held.get() });
        }
        self.tasks.roots(&mut roots);
        self.store.sweep(&roots);
        pause.collections.fetch_add(1, Ordering::Relaxed);
        let _guard = pause.lock.lock().unwrap_or_else(|e| e.into_inner());
        pause.requested.store(false, Ordering::SeqCst);
        pause.sweeping.store(false, Ordering::SeqCst);
        pause.resumed.notify_all();
    }

    /// The result of `id`, of level `level` (see the module documentation); `None` if the step
    /// was stopped or the store is full. Claimed first where other threads step too, and
    /// computed all the same where another thread has claimed it (helping it).
    #[inline(always)]
    pub(crate) fn result(&self, id: Id, level: u32) -> Option<Id> {
        let memo = self.store.result(id);
        if memo != NONE && memo != BUSY {
            return Some(memo);
        }
        self.unmemoised(id, level, memo)
    }

    /// [`Stepper::result`] where `id`'s result word holds `memo`, [`NONE`] or [`BUSY`]: out
    /// of line, so that a result found memoised (most are) costs no call.
    #[inline(never)]
    fn unmemoised(&self, id: Id, level: u32, memo: Id) -> Option<Id> {
        let store = self.store;
        // At the base a claim costs more than the result.
        let above = level > L::LEVEL + 1;
        let claimed = self.shared && above && memo == NONE && store.claim(id);
        // A helper goes through the node the other way round, to meet the claimant midway.
        let helping = self.shared && above && !claimed;
        if above {
            self.pause.count(helping);
        }
        let height = self.pause.hold(&[id]);
        let computed = self.compute(id, level, helping);
        self.pause.drop_to(height);
        match computed {
            Some(result) => {
                store.set_result(id, result);
                Some(result)
            }
            None => {
                if claimed {
                    store.release(id);
                }
                None
            }
        }
    }

    /// Computes the result of `id`, of level `level`, by plain recursion, unmemoised.
    fn compute(&self, id: Id, level: u32, backwards: bool) -> Option<Id> {
        let store = self.store;
        if store.is_empty(id) {
            return store.empty(level - 1);
        }
        let s = self.j.min(level - 2);
        if level == L::LEVEL + 1 {
            let [nw, ne, sw, se] = store.key(id);
            let quads = [store.key(nw), store.key(ne), store.key(sw), store.key(se)];
            return store.node(L::LEVEL, self.leaf.step(quads, s));
        }
        self.safe_point();
        if self.halted() {
            return None;
        }
        let l = level - 1;
        let nine = self.nine(id, level)?;
        self.pause.hold(&nine);
        let r = self.many(nine, l, backwards)?;
        let four = match s == level - 2 {
            true => {
                let quarters = self.quarters(r, l)?;
                self.pause.hold(&quarters);
                self.many(quarters, l, backwards)?
            }
            false => self.centres(r, l)?,
        };
        store.node(l, four)
    }

    /// The results of `nodes`, all of `level`, in order or (`backwards`) the other way round.
    fn many<const N: usize>(&self, nodes: [Id; N], level: u32, backwards: bool) -> Option<[Id; N]> {
        let mut out = [NONE; N];
        if backwards {
            for (o, &n) in out.iter_mut().zip(&nodes).rev() {
                *o = self.result(n, level)?;
            }
        } else {
            for (o, &n) in out.iter_mut().zip(&nodes) {
                *o = self.result(n, level)?;
            }
        }
        Some(out)
    }

    /// The nine overlapping nodes of level − 1 inside node `id` of `level`, row by row: its
    /// four children, and five made of its grandchildren, looked up together.
    pub(crate) fn nine(&self, id: Id, level: u32) -> Option<[Id; 9]> {
        let store = self.store;
        let [nw, ne, sw, se] = store.key(id);
        // The children lie anywhere in the arena: their four misses overlap.
        store.prefetch_nodes(&[nw, ne, sw, se]);
        let [_, nw_ne, nw_sw, nw_se] = store.key(nw);
        let [ne_nw, _, ne_sw, ne_se] = store.key(ne);
        let [sw_nw, sw_ne, _, sw_se] = store.key(sw);
        let [se_nw, se_ne, se_sw, _] = store.key(se);
        let l = level - 1;
        let made = [
            [nw_ne, ne_nw, nw_se, ne_sw],
            [nw_sw, nw_se, sw_nw, sw_ne],
            [nw_se, ne_sw, sw_ne, se_nw],
            [ne_sw, ne_se, se_nw, se_ne],
            [sw_ne, se_nw, sw_se, se_sw],
        ];
        let [n, w, c, e, s] = store.find(l, made)?;
        Some([nw, n, ne, w, c, e, sw, s, se])
    }

    /// The four nodes of level `l` made of the nine results `r` (of level `l` − 1): the
    /// quarters of the result, to be advanced again.
    pub(crate) fn quarters(&self, r: [Id; 9], l: u32) -> Option<[Id; 4]> {
        let four = |a: usize, b: usize, c: usize, d: usize| [r[a], r[b], r[c], r[d]];
        let keys = [
            four(0, 1, 3, 4),
            four(1, 2, 4, 5),
            four(3, 4, 6, 7),
            four(4, 5, 7, 8),
        ];
        self.store.find(l, keys)
    }

    /// The centres (of level `l` − 1) of the four quarters of the nine results `r`: the
    /// children of a result that advances fewer generations than its level allows.
    pub(crate) fn centres(&self, r: [Id; 9], l: u32) -> Option<[Id; 4]> {
        let store = self.store;
        let centre = |[a, b, c, d]: [Id; 4]| {
            if l - 1 == L::LEVEL {
                let quads = [store.key(a), store.key(b), store.key(c), store.key(d)];
                return store.node(L::LEVEL, L::centre(quads));
            }
            store.join(
                l - 1,
                store.key(a)[3],
                store.key(b)[2],
                store.key(c)[1],
                store.key(d)[0],
            )
        };
        Some([
            centre([r[0], r[1], r[3], r[4]])?,
            centre([r[1], r[2], r[4], r[5]])?,
            centre([r[3], r[4], r[6], r[7]])?,
            centre([r[4], r[5], r[7], r[8]])?,
        ])
    }
}

/// Stack of each thread that steps: a step of 2^j recurses about j levels deep.
const STACK_BYTES: usize = 32 << 20;

/// The HashLife engine: a tree, stepped by powers of two.
pub struct HashLife<L: Leaf> {
    pub(crate) tree: Tree<L>,
    /// The j of the last step: results above level j + 2 are for steps of 2^j.
    memo_step: Option<u32>,
    pool: rayon::ThreadPool,
    /// The level from which results are parallel tasks, where one was asked for.
    parallel_level: Option<u32>,
    /// Garbage collections so far: between steps, and within them.
    collections: u64,
    collections_within: u64,
    /// Results computed above the base so far, and of those, by helpers.
    work: (u64, u64),
}

/// How one attempt at a step of a power of two ended.
enum Attempt {
    Done,
    Stopped,
    /// The store is full: collect garbage, or step less at once.
    Full,
}

/// How a step ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stepped {
    /// Every generation asked for was taken.
    Done,
    /// The stop flag was set first; the state is that of the last power of two completed.
    Stopped,
}

/// Refuses, before any step, a generation count whose largest power of two needs a node above
/// [`MAX_LEVEL`]: coordinates the plane cannot hold.
pub fn check_generations(generations: &BigUint) -> Result<()> {
    if generations.bits() + 2 > MAX_LEVEL as u64 {
        return Err(Error::Invalid(format!(
            "{} generations: too many for the plane's coordinates (at most 2^{} - 1)",
            short(generations),
            MAX_LEVEL - 2
        )));
    }
    Ok(())
}

/// A number for a message: written out up to 40 digits, else as its number of digits.
pub(crate) fn short(n: &BigUint) -> String {
    let text = n.to_string();
    match text.len() {
        0..=40 => text,
        digits => format!("a {digits}-digit number of"),
    }
}

impl<L: Leaf> HashLife<L> {
    /// The engine over `tree`, on `threads` threads, results parallel from `parallel_level`
    /// (see [`Options::parallel_level`](crate::Options::parallel_level)).
    pub fn new(tree: Tree<L>, threads: usize, parallel_level: Option<u32>) -> Result<HashLife<L>> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .stack_size(STACK_BYTES)
            .thread_name(|i| format!("hashlife-{i}"))
            .build()
            .map_err(|e| Error::Engine(format!("hashlife: cannot start its threads: {e}")))?;
        Ok(HashLife {
            tree,
            memo_step: None,
            pool,
            parallel_level: self::parallel_level(parallel_level),
            collections: 0,
            collections_within: 0,
            work: (0, 0),
        })
    }

    /// The engine on the cells that `plant` makes in its store, in place of its own: what it
    /// memoised stays (a result is of a node's cells, whatever pattern holds the node), and
    /// the old pattern's nodes are garbage for the next collection.
    pub fn replanted<E>(
        self,
        plant: impl FnOnce(Store, L) -> std::result::Result<Tree<L>, E>,
    ) -> std::result::Result<HashLife<L>, E> {
        let Tree { store, leaf, .. } = self.tree;
        Ok(HashLife {
            tree: plant(store, leaf)?,
            ..self
        })
    }

    /// The tree now.
    pub fn tree(&self) -> &Tree<L> {
        &self.tree
    }

    /// Threads stepping.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Garbage collections so far.
    pub fn collections(&self) -> u64 {
        self.collections + self.collections_within
    }

    /// Results computed above the base so far, and of those, by threads helping another.
    pub fn work(&self) -> (u64, u64) {
        self.work
    }

    /// Garbage collections so far made in the middle of a step.
    pub fn collections_within(&self) -> u64 {
        self.collections_within
    }

    /// Advances `generations`, a power of two at a time (each set bit, the highest first);
    /// returns the generations taken and how it ended.
    ///
    /// Highest first, because a step of 2^j keeps the results memoised for 2^i where they are
    /// whole steps, those of levels up to min(i, j) + 2: going down from the step before, each
    /// step reuses all that a smaller one can; going up from 2^0, the first step would forget
    /// every result above level 2 that a long step before had memoised (`auto`'s slices end
    /// on long steps). From a fresh start the order makes no difference: the line puffer's
    /// 10^5 generations computed 4.63 million results highest first, 4.61 million lowest.
    pub fn step(&mut self, generations: &BigUint, stop: &AtomicBool) -> Result<(BigUint, Stepped)> {
        check_generations(generations)?;
        let mut done = BigUint::zero();
        for j in (0..generations.bits()).rev() {
            if !generations.bit(j) {
                continue;
            }
            let j = j as u32;
            if self.step_power(j, stop)? == Stepped::Stopped {
                return Ok((done, Stepped::Stopped));
            }
            done += BigUint::one() << j;
        }
        Ok((done, Stepped::Done))
    }

    /// Advances 2^j generations; where one step does not fit in the store even after a
    /// collection, two of 2^(j − 1).
    fn step_power(&mut self, j: u32, stop: &AtomicBool) -> Result<Stepped> {
        for attempt in 0..2 {
            match self.try_step(j, stop)? {
                Attempt::Done => return Ok(Stepped::Done),
                Attempt::Stopped => return Ok(Stepped::Stopped),
                Attempt::Full if attempt == 0 => self.collect(),
                Attempt::Full => {}
            }
        }
        if j == 0 {
            self.collect();
            return Err(crate::store::too_small(
                &self.tree.store,
                "one generation of this pattern",
            ));
        }
        for _ in 0..2 {
            if self.step_power(j - 1, stop)? == Stepped::Stopped {
                return Ok(Stepped::Stopped);
            }
        }
        Ok(Stepped::Done)
    }

    /// One step of 2^j. Where the index grows crowded on the way, the step stops, the index
    /// grows, and the step goes on from what it memoised.
    fn try_step(&mut self, j: u32, stop: &AtomicBool) -> Result<Attempt> {
        if self.memo_step != Some(j) {
            if let Some(old) = self.memo_step {
                let store = &mut self.tree.store;
                self.pool
                    .install(|| store.forget_results_above(old.min(j) + 2));
            }
            self.memo_step = Some(j);
        }
        loop {
            if self.tree.store.is_crowded() {
                let store = &mut self.tree.store;
                self.pool.install(|| store.grow());
            }
            // Cells move at most one cell a generation: from the centre's centre, 2^j
            // generations (at most an eighth of the root's side) stay inside the centre, the
            // result.
            while self.tree.level < j + 3 || !self.tree.within(2) {
                if self.tree.expand().is_err() {
                    return Ok(Attempt::Full);
                }
            }
            let (root, level) = (self.tree.root, self.tree.level);
            let threads = self.pool.current_num_threads();
            let stepper = Stepper {
                store: &self.tree.store,
                leaf: &self.tree.leaf,
                j,
                stop,
                shared: threads > 1,
                parallel_level: self
                    .parallel_level
                    .unwrap_or_else(|| default_parallel_level(j)),
                pause: Pause::new(threads, root, self.tree.store.may_collect()),
                tasks: Tasks::new(),
            };
            let stepped = match stepper.shared && stepper.is_task(level) {
                true => stepper.tasks_result(&self.pool, root, level),
                false => self.pool.install(|| {
                    stepper.enter();
                    let result = stepper.result(root, level);
                    stepper.leave();
                    result
                }),
            };
            self.collections_within += stepper.pause.collections.load(Ordering::Relaxed);
            let (computed, helped) = stepper.pause.work();
            self.work = (self.work.0 + computed, self.work.1 + helped);
            match stepped {
                Some(root) => {
                    self.tree.root = root;
                    self.tree.level -= 1;
                    if self.tree.shrink().is_err() {
                        return Ok(Attempt::Full);
                    }
                    return Ok(Attempt::Done);
                }
                None if stop.load(Ordering::Relaxed) => return Ok(Attempt::Stopped),
                None if self.tree.store.is_crowded() => {}
                None => return Ok(Attempt::Full),
            }
        }
    }

    /// Collects the store's garbage, keeping the root.
    pub fn collect(&mut self) {
        self.tree.store.collect(&[self.tree.root]);
        self.collections += 1;
    }
}
