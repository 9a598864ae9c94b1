//! The results of a step from the parallel level up, as tasks that wait for one another
//! without holding up a thread.
//!
//! Every thread of the pool runs a loop that takes tasks: the one it pushed last, else the
//! oldest of another thread's (the largest node there). A task is a node of a level from
//! [`Stepper::parallel_level`] up whose result is wanted. It asks for its nine results, then,
//! where it advances twice, its four ([`crate::hashlife`] says what they are). A result
//! memoised is there already; one of a level below the parallel level is computed on the spot
//! by plain recursion ([`Stepper::result`]); one that is already a task's gets this task added
//! to that task's dependents; any other becomes a new task on this thread's queue. A task
//! whose results are not all there is put aside, counting those it waits for. A task that ends
//! memoises its result and counts down each of its dependents, and the thread whose count
//! falls to nought pushes that dependent onto its own queue.
//!
//! So no result from the parallel level up is computed twice, and no thread ever waits for
//! another's result: it takes other work, or, where there is none (a narrow pattern, whose
//! tasks form a chain), sleeps a little and looks again. Threads meeting the same node below
//! the parallel level still claim and help there ([`Stepper::result`]).
//!
//! The tasks put aside live in a map by node, cut into shards each behind a lock; a task, its
//! nodes and its dependents change only under its shard's lock, and a task's result is
//! memoised under it too, so a thread that asks for a node either finds its result or finds
//! the task there to wait for. No thread ever holds two locks.
//!
//! Collections within the step: a thread is active while it runs a task ([`Stepper::enter`],
//! [`Stepper::leave`]); the tasks put aside and their nodes are roots of the sweep, beside
//! what each thread holds.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crossbeam_deque::{Steal, Stealer, Worker};

use crate::hashlife::Stepper;
use crate::leaf::Leaf;
use crate::store::{Id, BUSY, NONE};

/// Shards of the map of tasks put aside: enough that threads seldom meet on a lock.
const SHARDS: usize = 256;

/// Looks at the queues before a thread with nothing to do sleeps, and the longest it sleeps.
const SPINS: u32 = 64;
const LONGEST_NAP: Duration = Duration::from_micros(500);

/// How far a task has got.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Not started: its nine nodes are not made yet.
    Start,
    /// Waiting for the results of its nine nodes.
    Nine,
    /// Waiting for the results of its four quarters.
    Four,
}

/// A task put aside (or queued, or running).
struct Task {
    level: u32,
    stage: Stage,
    /// The nodes whose results it waits for: the nine, or the four quarters (then [`NONE`]).
    nodes: [Id; 9],
    /// Results it still waits for, less those that came before it counted them: negative
    /// for a while, and the thread that brings it to nought queues the task.
    waiting: i32,
    /// The tasks waiting for this one's result, once for each time they asked for it.
    dependents: Vec<Id>,
}

/// Hashes a node's id (already well spread: ids are slots handed out in runs) by one multiply.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u32(&mut self, id: u32) {
        self.0 = (id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type Shard = HashMap<Id, Task, BuildHasherDefault<IdHasher>>;

/// The tasks of one step that the threads share.
pub(crate) struct Tasks {
    shards: Vec<Mutex<Shard>>,
    /// Set where a task could not go on (the store full, or the step asked to stop): every
    /// thread leaves its loop.
    failed: AtomicBool,
}

impl Tasks {
    pub(crate) fn new() -> Tasks {
        Tasks {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            failed: AtomicBool::new(false),
        }
    }

    /// The shard of node `id`'s task: by the id's low bits (nodes made one after another, as
    /// a task and those it asks for often are, fall in different shards), leaving the
    /// hasher's high bits, which the map's probes compare, free to differ within a shard.
    fn shard(&self, id: Id) -> MutexGuard<'_, Shard> {
        self.shards[id as usize % SHARDS]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Appends to `roots` every task's node and the nodes it waits for (for a sweep, while no
    /// thread runs a task).
    pub(crate) fn roots(&self, roots: &mut Vec<Id>) {
        for shard in &self.shards {
            let shard = shard.lock().unwrap_or_else(|e| e.into_inner());
            for (&id, task) in shard.iter() {
                roots.push(id);
                roots.extend(task.nodes.iter().filter(|&&n| n != NONE));
            }
        }
    }
}

/// Whether `result`, read from a result word, is a result.
fn is_result(result: Id) -> bool {
    result != NONE && result != BUSY
}

impl<L: Leaf> Stepper<'_, L> {
    /// Whether results of `level` are tasks.
    pub(crate) fn is_task(&self, level: u32) -> bool {
        level >= self.parallel_level && level > L::LEVEL + 1
    }

    /// The result of `root`, of `level` (a task's level), computed by the threads of `pool` as
    /// tasks; `None` where the step was stopped or the store is full.
    pub(crate) fn tasks_result(
        &self,
        pool: &rayon::ThreadPool,
        root: Id,
        level: u32,
    ) -> Option<Id> {
        let memo = self.store.result(root);
        if is_result(memo) {
            return Some(memo);
        }
        let threads = pool.current_num_threads();
        let workers: Vec<Worker<Id>> = (0..threads).map(|_| Worker::new_lifo()).collect();
        let stealers: Vec<Stealer<Id>> = workers.iter().map(Worker::stealer).collect();
        self.tasks.shard(root).insert(root, Task::new(level, None));
        workers[0].push(root);
        let workers: Vec<Mutex<Option<Worker<Id>>>> =
            workers.into_iter().map(|w| Mutex::new(Some(w))).collect();
        pool.broadcast(|context| {
            let index = context.index();
            let queue = workers[index]
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .expect("one queue a thread");
            self.work(index, &queue, &stealers, root);
        });
        match self.tasks.failed.load(Ordering::SeqCst) {
            true => None,
            false => Some(self.store.result(root)),
        }
    }

    /// One thread's loop: tasks from its queue or stolen, until the root's result is there or
    /// a task failed.
    fn work(&self, index: usize, queue: &Worker<Id>, stealers: &[Stealer<Id>], root: Id) {
        let mut idle = 0u32;
        loop {
            if self.tasks.failed.load(Ordering::Relaxed) || is_result(self.store.result(root)) {
                return;
            }
            let Some(id) = queue.pop().or_else(|| steal(index, stealers)) else {
                idle += 1;
                match idle {
                    0..SPINS => std::hint::spin_loop(),
                    _ => {
                        let nap = Duration::from_micros(1 << (idle - SPINS).min(9));
                        std::thread::sleep(nap.min(LONGEST_NAP));
                    }
                }
                continue;
            };
            idle = 0;
            self.enter();
            let went_on = self.run(id, queue);
            self.leave();
            if went_on.is_none() {
                self.tasks.failed.store(true, Ordering::SeqCst);
                return;
            }
        }
    }

    /// Runs task `id` as far as it can go: to its result (then its dependents are counted
    /// down), or until it waits for other tasks (then it is put aside). `None` where it cannot
    /// go on.
    fn run(&self, id: Id, queue: &Worker<Id>) -> Option<()> {
        let (level, mut stage, mut nodes) = {
            let shard = self.tasks.shard(id);
            let task = &shard[&id];
            (task.level, task.stage, task.nodes)
        };
        let height = self.pause.hold(&[]);
        let advanced = self.advance(id, level, &mut stage, &mut nodes, queue);
        self.pause.drop_to(height);
        if let Some(result) = advanced? {
            self.finish(id, result, queue);
        }
        Some(())
    }

    /// Takes task `id` (of `level`) from `stage` on: its result, or `None` inside where it was
    /// put aside to wait.
    fn advance(
        &self,
        id: Id,
        level: u32,
        stage: &mut Stage,
        nodes: &mut [Id; 9],
        queue: &Worker<Id>,
    ) -> Option<Option<Id>> {
        let store = self.store;
        if store.is_empty(id) {
            return Some(Some(store.empty(level - 1)?));
        }
        let l = level - 1;
        let s = self.j.min(level - 2);
        loop {
            self.safe_point();
            if self.halted() {
                return None;
            }
            match *stage {
                Stage::Start => {
                    *nodes = self.nine(id, level)?;
                    self.pause.hold(nodes);
                    *stage = Stage::Nine;
                }
                Stage::Nine | Stage::Four => {
                    let count = if *stage == Stage::Nine { 9 } else { 4 };
                    if !self.ask(id, *stage, nodes, count, l, queue)? {
                        return Some(None);
                    }
                    let mut r = [NONE; 9];
                    for (r, &n) in r.iter_mut().zip(&nodes[..count]) {
                        *r = store.result(n);
                    }
                    match *stage {
                        Stage::Nine if s == level - 2 => {
                            let quarters = self.quarters(r, l)?;
                            *nodes = [NONE; 9];
                            nodes[..4].copy_from_slice(&quarters);
                            self.pause.hold(&quarters);
                            *stage = Stage::Four;
                        }
                        Stage::Nine => return Some(Some(store.node(l, self.centres(r, l)?)?)),
                        _ => return Some(Some(store.node(l, [r[0], r[1], r[2], r[3]])?)),
                    }
                }
            }
        }
    }

    /// Asks for the results of the first `count` of `nodes`, of `level`, for task `id` at
    /// `stage`: `true` where they are all there, `false` where the task was put aside to wait.
    fn ask(
        &self,
        id: Id,
        stage: Stage,
        nodes: &[Id; 9],
        count: usize,
        level: u32,
        queue: &Worker<Id>,
    ) -> Option<bool> {
        let store = self.store;
        if !self.is_task(level) {
            for &n in &nodes[..count] {
                self.result(n, level)?;
            }
            return Some(true);
        }
        let mut fresh = [NONE; 9];
        let mut new = 0;
        let mut missing = 0;
        for &n in &nodes[..count] {
            if is_result(store.result(n)) {
                continue;
            }
            if store.is_empty(n) {
                self.result(n, level)?;
                continue;
            }
            let mut shard = self.tasks.shard(n);
            if is_result(store.result(n)) {
                continue;
            }
            match shard.entry(n) {
                Entry::Occupied(mut task) => task.get_mut().dependents.push(id),
                Entry::Vacant(place) => {
                    place.insert(Task::new(level, Some(id)));
                    fresh[new] = n;
                    new += 1;
                }
            }
            missing += 1;
        }
        // The first node is taken first.
        for &n in fresh[..new].iter().rev() {
            queue.push(n);
        }
        if missing == 0 {
            return Some(true);
        }
        let mut shard = self.tasks.shard(id);
        let task = shard.get_mut(&id).expect("a task asking");
        task.stage = stage;
        task.nodes = *nodes;
        task.waiting += missing;
        Some(task.waiting == 0)
    }

    /// Memoises `result` as task `id`'s and counts its dependents down, queueing those that
    /// wait for nothing more.
    fn finish(&self, id: Id, result: Id, queue: &Worker<Id>) {
        let dependents = {
            let mut shard = self.tasks.shard(id);
            self.store.set_result(id, result);
            shard.remove(&id).expect("a task ending").dependents
        };
        self.pause.count(false);
        for d in dependents {
            let mut shard = self.tasks.shard(d);
            let task = shard.get_mut(&d).expect("a task waiting");
            task.waiting -= 1;
            if task.waiting == 0 {
                queue.push(d);
            }
        }
    }
}

impl Task {
    /// A task of `level` not started, asked for by `by`.
    fn new(level: u32, by: Option<Id>) -> Task {
        Task {
            level,
            stage: Stage::Start,
            nodes: [NONE; 9],
            waiting: 0,
            dependents: by.into_iter().collect(),
        }
    }
}

/// A task taken from another thread's queue (the oldest there), looking at each in turn from
/// the next one round.
fn steal(index: usize, stealers: &[Stealer<Id>]) -> Option<Id> {
    let n = stealers.len();
    for k in 1..n {
        let victim = &stealers[(index + k) % n];
        loop {
            match victim.steal() {
                Steal::Success(id) => return Some(id),
                Steal::Empty => break,
                Steal::Retry => {}
            }
        }
    }
    None
}
