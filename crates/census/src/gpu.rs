//! The census with its soups stepped on a GPU: the same tallies as the CPU's ([`census::soup`]),
//! soup for soup.
//!
//! Each soup runs on a box of 256² cells of its own ([`gol_cuda::soups`]) until it settles,
//! dies, or a cell comes within [`BAND`] cells of the box's edge. Then the CPU looks:
//!
//! - **Cells in the band**: where each cluster there is a ship (a glider, most often) flying
//!   out of the box, and every other cell within [`ISOLATION`] cells of it is another ship's,
//!   the ships in the band are taken away and counted, and the soup runs on. Nothing but those
//!   other ships can come near a ship taken away without coming into the band itself, which
//!   stops the soup again: the ship flies out, and whatever lay [`ISOLATION`] cells away cannot
//!   catch it up, at the speed of light, before it is deep in the band. The other ships near
//!   it are watched: each must be taken away later where it would have flown to untouched.
//!   Ships taken away or watched must not come within reach of one another (the CPU census's
//!   meeting test, strictly): what is left of the soup runs as it would have with them. The
//!   commonest case, the band's cells one glider flying out with nothing within [`ISOLATION`]
//!   cells of it, the GPU settles itself, as this would: it takes the glider away, logs it
//!   (`glider_phases` are the shapes it knows), and runs on; the CPU reads the log as flights
//!   the next time the soup stops.
//! - **Settled**: its period is checked on the CPU's copy (the GPU compares hashes), and its
//!   ash cut into objects and named as the CPU's census names it.
//!
//! A soup that does not pass (a cluster in the band that is not such a ship, or one with something
//! else near it) moves to a box of 512² ([`TIERS`]), and from there to one of 1024², and goes on
//! there from where it stopped, the ships taken away put back where they have flown to (or kept
//! taken away where they have flown deep into its band); or starts again from generation 0 where
//! that cannot be known. Where it does not pass there either, or died, ran past
//! [`MOST_GENERATIONS`], left a megasized ash or ships that come within reach of one another, it is
//! censused from the start by the CPU's census (on threads of its own, while the GPU goes on),
//! which is what the GPU's answer must equal. So the haul is byte-identical to the CPU's whatever
//! runs where, as long as the CPU's census names the true ash; the tests check that it is, soup for
//! soup, on 10⁶ soups.

use std::collections::{BTreeMap, VecDeque};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use gol_cuda::soups::{self, Lone, SoupBoxes, SoupState, Status, Taken, BAND};

use crate::census::{self, Flight, Tally};
use crate::objects::{clusters_of_rows, take_lone, Classifier, APART_KINDS};
use crate::soup::{self, Rows};
use crate::universe::{bounds, step_rows, steps_back, Universe};

/// Generations a soup may run on the GPU; one that runs longer is censused by the CPU.
pub const MOST_GENERATIONS: u32 = 1 << 14;

/// Cells around a ship in the band within which there may be nothing but other ships for it to
/// be taken away: more than anything starting there could cover, at the speed of light, before
/// the ship (flying out at c/4 or faster) is four cells deeper in the band than when it came
/// in (16 generations), give or take its size and reach. The kernel's own ([`soups::ISOLATION`]),
/// which takes lone gliders away by the same rule.
pub const ISOLATION: i64 = soups::ISOLATION as i64;

/// Generations the GPU runs between two looks at the soups that stopped. A soup stopped early
/// in a run waits in its box for the run's end, but fewer looks cost the host less: 1024 gave
/// 6% more soups a second than 256 over 2^23 soups on one H200, and 4096 more again than 1024
/// on H100 hosts, where the host's look bounds a census (docs/benchmarks/census.md).
const ROUND: u32 = 4096;

/// The boxes by default, (side, how many): a soup runs in a box of the smallest side (two sets
/// of them, each looked at while the other runs), and in one of the next larger side where the
/// CPU cannot go on with it there; 4.25 GiB of the GPU's memory in all (each box's two
/// copies). Boxes of 1024 take about one soup in 2,700, from boxes of 512.
pub const TIERS: [(usize, usize); 4] = [
    (256, 1 << 16),
    (256, 1 << 16),
    (512, 1 << 15),
    (1024, 1 << 10),
];

/// How long the GPU's loop sleeps when no kind of box has ended its run.
const WAIT: Duration = Duration::from_micros(100);

/// New soups made at a time ahead of need, while the GPU's loop would sleep: about 60 µs of
/// one core.
const AHEAD_BATCH: usize = 1024;

/// Soups a CPU thread takes from the back of those not yet taken at a time, when no soup
/// handed back waits.
const BACK_BATCH: u64 = 16;

/// The soups in flight on one GPU.
pub struct GpuCensus {
    tiers: Vec<Tier>,
    /// Whether the CPU's threads census soups from the back of the range when none is handed
    /// back (true; the tests turn it off to compare the GPU's tallies with the CPU's).
    pub share: bool,
    /// Soups moved to larger boxes so far, by why.
    pub moved: BTreeMap<&'static str, u64>,
    /// Of those, the soups that went on from where they stopped (not from generation 0).
    pub went_on: u64,
    /// Soups handed back to the CPU's census so far, by why.
    pub handed_back: BTreeMap<&'static str, u64>,
    /// Soups the CPU's threads took from the back of the ranges so far ([`GpuCensus::share`]).
    pub from_back: u64,
    /// Where the GPU's driving thread spent its time so far.
    pub driving: Driving,
    /// Soups of the next call's range taken while this call's last soups finished.
    ahead: Ahead,
    /// The flights of the glider phases the kernel takes away ([`glider_flights`]).
    gliders: Vec<Flight>,
}

/// Where the thread that drives a GPU spent its time ([`GpuCensus::driving`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Driving {
    /// Reading back the states, words and logs of the soups that stopped.
    pub reading: Duration,
    /// Looking at the soups that stopped, `reading` included.
    pub looking: Duration,
    /// Making new soups and putting soups in boxes.
    pub filling: Duration,
    /// Making new soups from their IDs: in `filling`, and ahead of need while no kind of box
    /// had ended its run (not in `waiting`).
    pub making: Duration,
    /// Waiting for a kind of box to end its run.
    pub waiting: Duration,
    /// Writing back to the boxes what was made of their stopped soups (`looking` included).
    pub writing: Duration,
    /// The GPU's loop in all, every counter above within it.
    pub running: Duration,
    /// Waiting, once the GPU's soups of a call were done, for the CPU's threads to finish theirs.
    pub tail: Duration,
    /// Kinds of box looked at after a run.
    pub looks: u64,
    /// The stopped soups looked at, by how they stopped, in the order of [`STOPPED`].
    pub looked: [Looked; STOPPED.len()],
}

/// How a soup in a box stopped, as [`Driving::looked`] counts them: cells in the band ("paused"),
/// settled with period 1 or 2 and its ash named by the GPU ("named") or on the box's bits
/// ("settled"), settled with a longer period ("oscillating"), died or ran too long ("ended").
pub const STOPPED: [&str; 5] = ["paused", "named", "settled", "oscillating", "ended"];

/// Stopped soups looked at, and the time the CPU's threads spent on them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Looked {
    /// How many.
    pub soups: u64,
    /// The CPU time, summed over threads.
    pub cpu: Duration,
}

/// Soups taken ahead of their call ([`GpuCensus::tallies`]'s `next`): those from `taken.start`
/// to `taken.end`, in the boxes or done.
#[derive(Default)]
struct Ahead {
    taken: Range<u64>,
    /// The tallies of those done.
    done: Vec<(u64, Tally)>,
    /// Those handed back to the CPU and not yet censused, for the next call's CPU threads.
    handed: Vec<(u64, Rows)>,
}

impl Ahead {
    /// Up to `want` new soups: from the front of the `backlog`, or once it is empty, from
    /// the front of `next`.
    fn take_new(&mut self, backlog: &Backlog, next: &Range<u64>, want: u64) -> Range<u64> {
        let new = backlog.take_front(want);
        if !new.is_empty() || !backlog.is_empty() {
            return new;
        }
        let taken = &mut self.taken;
        let new = taken.end..next.end.min(taken.end + want);
        taken.end = new.end;
        new
    }

    /// Soup `index`'s tally put in `results` (soup `first` first), or kept here where it is
    /// past them (a soup taken ahead).
    fn keep(&mut self, results: &mut [Option<Tally>], first: u64, index: u64, tally: Tally) {
        match results.get_mut((index - first) as usize) {
            Some(result) => *result = Some(tally),
            None => self.done.push((index, tally)),
        }
    }
}

/// Boxes of one size and the soups in them.
struct Tier {
    boxes: SoupBoxes,
    flying: Vec<Option<InFlight>>,
    /// Soups waiting for a box.
    waiting: VecDeque<InFlight>,
    /// Whether the boxes were started and not looked at since.
    running: bool,
}

/// The work of the CPU's threads beside a GPU ([`GpuCensus::tallies`]).
struct Backlog {
    state: Mutex<BacklogState>,
    /// Signalled when a soup is handed back and when the GPU is done.
    ready: Condvar,
}

struct BacklogState {
    /// Soups handed back by the GPU, censused first: those of the call's range (before `end`);
    /// those of the next call wait for its threads, so that none is still being censused
    /// when the call's own soups are done.
    handed: VecDeque<(u64, Rows)>,
    end: u64,
    /// Soups not yet taken: the GPU takes them from the front as its boxes free up, the CPU's
    /// threads from the back, a few at a time, when nothing is handed back.
    left: Range<u64>,
    /// Whether the GPU is done: a thread with nothing to do then leaves.
    closed: bool,
    /// Whether the CPU's threads take soups from the back ([`GpuCensus::share`]).
    share: bool,
}

/// What a CPU thread takes from the backlog.
enum Job {
    Handed(u64, Rows),
    Back(Range<u64>),
}

impl Backlog {
    /// The next job for a CPU thread, waiting for one; `None` once the GPU is done and nothing
    /// is left (no soup taken from the back after `stop`).
    fn next(&self, stop: &AtomicBool) -> Option<Job> {
        let mut state = self.state.lock().expect("the backlog's lock");
        loop {
            let end = state.end;
            if let Some(at) = state.handed.iter().position(|&(index, _)| index < end) {
                let (index, rows) = state.handed.remove(at).expect("a soup there");
                return Some(Job::Handed(index, rows));
            }
            if state.share && !state.left.is_empty() && !stop.load(Ordering::Relaxed) {
                let end = state.left.end;
                state.left.end -= BACK_BATCH.min(end - state.left.start);
                return Some(Job::Back(state.left.end..end));
            }
            if state.closed {
                return None;
            }
            state = self.ready.wait(state).expect("the backlog's lock");
        }
    }

    /// Whether every soup was taken.
    fn is_empty(&self) -> bool {
        self.state
            .lock()
            .expect("the backlog's lock")
            .left
            .is_empty()
    }

    /// Up to `most` soups for the GPU, from the front.
    fn take_front(&self, most: u64) -> Range<u64> {
        let mut state = self.state.lock().expect("the backlog's lock");
        let start = state.left.start;
        state.left.start += most.min(state.left.end - start);
        start..state.left.start
    }

    fn hand_back(&self, index: u64, rows: Rows) {
        let mut state = self.state.lock().expect("the backlog's lock");
        state.handed.push_back((index, rows));
        self.ready.notify_one();
    }

    /// Tells the threads that the GPU is done, and takes back the soups of the next call
    /// handed back.
    fn close(&self) -> Vec<(u64, Rows)> {
        let mut state = self.state.lock().expect("the backlog's lock");
        state.closed = true;
        let end = state.end;
        let (later, now): (Vec<_>, Vec<_>) =
            state.handed.drain(..).partition(|&(index, _)| index >= end);
        state.handed.extend(now);
        self.ready.notify_all();
        later
    }
}

/// What is known of a soup in a box.
struct InFlight {
    index: u64,
    rows: Rows,
    /// Ships taken away.
    flights: Vec<Flight>,
    /// Ships that were near one taken away, each to be taken away in its turn.
    watched: Vec<Flight>,
    /// Where it goes on from in a larger box, moved from a smaller one: its state and live
    /// words there (none: it starts at generation 0). Boxed: few soups have one, and every
    /// soup made is moved through the queues.
    stopped: Option<Box<(SoupState, Vec<u64>)>>,
}

impl InFlight {
    fn new(index: u64, rows: Rows) -> InFlight {
        InFlight {
            index,
            rows,
            flights: Vec::new(),
            watched: Vec::new(),
            stopped: None,
        }
    }

    /// Soup `index` of `root`, new.
    fn made(root: &str, index: u64) -> InFlight {
        InFlight::new(index, soup::of(root, index))
    }

    /// The soup for a box of `larger` cells a side, from one of `side` where it stopped in
    /// `state` with live words `words`: it goes on from there, every ship taken away put back
    /// where it has flown to, unmet, or kept taken away where it has flown deep into the larger
    /// box's band ([`deep_in_band`]). That is the soup's true generation: before it, nothing
    /// came within reach of a ship taken away (the module's doc says why) but the ships watched
    /// and the others taken away, and those are checked to have flown free of it, as a settled
    /// soup's are. Where they cannot be shown to, or a ship is on the larger box's band but not
    /// deep in it, the soup starts again from generation 0.
    fn moved(&self, side: usize, larger: usize, state: &SoupState, words: &[u64]) -> InFlight {
        let mut soup = InFlight::new(self.index, self.rows);
        if census::flights_meet(&self.flights, true)
            || !self.watched.iter().all(|w| taken_later(w, &self.flights))
        {
            return soup;
        }
        let shift = (soups::left(larger) - soups::left(side)) as i64;
        let (inner, at) = (BAND as i64..(larger - BAND) as i64, state.generation as u64);
        let mut ships = Vec::new();
        for f in &self.flights {
            let cells: Vec<(i64, i64)> = f
                .cells_at(at)
                .into_iter()
                .map(|(x, y)| (x + shift, y + shift))
                .collect();
            if cells
                .iter()
                .all(|(x, y)| inner.contains(x) && inner.contains(y))
            {
                ships.extend(cells);
            } else if deep_in_band(&cells, f.displacement, f.period, larger) {
                soup.flights.push(f.moved_by((shift, shift)));
            } else {
                return InFlight::new(self.index, self.rows);
            }
        }
        let row_words = larger / 32;
        let mut all = soups::moved_words(words, side, larger);
        all.extend(ships.iter().map(|&(x, y)| {
            let place = y as usize * row_words + x as usize / 32;
            (place as u64) << 32 | 1u64 << (x % 32)
        }));
        // A word for each place, its cells ORed.
        all.sort_unstable();
        let mut words: Vec<u64> = Vec::with_capacity(all.len());
        for entry in all {
            match words.last_mut() {
                Some(last) if *last >> 32 == entry >> 32 => *last |= entry & 0xffff_ffff,
                _ => words.push(entry),
            }
        }
        let shift = shift as u32;
        let rows = (state.top + shift, state.bottom + shift);
        let (top, bottom) = ships
            .iter()
            .fold(rows, |(t, b), &(_, y)| (t.min(y as u32), b.max(y as u32)));
        let going_on = SoupState::new(Status::Running, state.generation, top, bottom, 0);
        soup.stopped = Some(Box::new((going_on, words)));
        soup
    }
}

/// A stopped soup looked at: how it stopped (its place in [`STOPPED`]), the CPU time its look
/// took, and what became of it.
struct Seen {
    kind: usize,
    cpu: Duration,
    after: After,
}

/// What became of a stopped soup, once its [`Outcome`] was applied to its box.
enum After {
    /// It runs on, with these edits to its box (slot, word, mask).
    Resumed(Vec<(u32, u32, u32)>),
    /// Soup `index`'s tally.
    Done(u64, Tally),
    /// For a larger box, and why.
    Moved(&'static str, InFlight),
    /// For the CPU's census, and why.
    HandedBack(&'static str, InFlight),
}

/// What the CPU made of a stopped soup.
enum Outcome {
    /// Ships taken away (the edits to the box: slot, word, mask), ships watched, and the rows
    /// of cells left: it runs on.
    Resume(Vec<(u32, u32, u32)>, Vec<Flight>, Vec<Flight>, u32, u32),
    /// Its tally.
    Done(Tally),
    /// For a larger box, or the CPU's census, and why.
    Elsewhere(&'static str),
    /// For the CPU's census (it died or ran too long: a larger box would not help), and why.
    Cpu(&'static str),
}

impl GpuCensus {
    /// Boxes of each of `tiers` (side, how many) on GPU `ordinal`, but for those larger than
    /// the first that the GPU cannot run ([`SoupBoxes::fits`]): the soups that would have gone
    /// on in them go to the CPU.
    pub fn new(ordinal: usize, tiers: &[(usize, usize)]) -> Result<GpuCensus, gol_cuda::CudaError> {
        let gpu: std::sync::Arc<gol_cuda::device::Gpu> = gol_cuda::device::gpu_on(ordinal)?;
        let gliders = glider_phases();
        let kinds: Vec<Lone> = APART_KINDS.iter().map(|kind| kind.window).collect();
        let mut kept = Vec::new();
        for (k, &(side, slots)) in tiers.iter().enumerate() {
            // The first kind of box is refused in one line where it does not fit.
            if k > 0 && !SoupBoxes::fits(&gpu, side)? {
                continue;
            }
            kept.push(Tier {
                boxes: SoupBoxes::new(&gpu, slots, side, &gliders, &kinds)?,
                flying: (0..slots).map(|_| None).collect(),
                waiting: Default::default(),
                running: false,
            });
        }
        Ok(GpuCensus {
            tiers: kept,
            share: true,
            moved: BTreeMap::new(),
            went_on: 0,
            handed_back: BTreeMap::new(),
            from_back: 0,
            driving: Driving::default(),
            ahead: Ahead::default(),
            gliders: census::with_classifier(|classifier| glider_flights(&gliders, classifier)),
        })
    }

    /// The tallies of soups `first..first + count` of `root`, in index order, as
    /// [`census::tallies`] gives them; `stop` ends it early: the tallies of the soups done, from
    /// `first` on without a gap.
    ///
    /// Once every soup of the range is taken, the GPU fills the boxes that free up with soups
    /// from the front of `next` (the range of the next call), and returns as soon as the
    /// range's own soups are done, on the GPU and on the CPU's threads, those of `next` still
    /// running or handed back: so that the boxes do not run empty while the range's longest
    /// soups finish. A next call for another range drops them.
    ///
    /// The CPU's threads (as many as rayon's, at the least priority, on the cores left idle)
    /// census the soups the GPU hands back, and meanwhile soups from the back of the range,
    /// which the GPU takes from the front: the GPU's loop leaves most cores idle.
    pub fn tallies(
        &mut self,
        root: &str,
        first: u64,
        count: u64,
        next: Range<u64>,
        stop: &AtomicBool,
    ) -> Result<Vec<Tally>, gol_cuda::CudaError> {
        let end = first + count;
        let mut results: Vec<Option<Tally>> = vec![None; count as usize];
        let ahead = std::mem::take(&mut self.ahead);
        let mut left = first..end;
        let mut handed = VecDeque::new();
        if ahead.taken.start == first && ahead.taken.end <= end {
            left.start = ahead.taken.end;
            for (index, tally) in ahead.done {
                results[(index - first) as usize] = Some(tally);
            }
            handed.extend(ahead.handed);
        } else {
            for tier in &mut self.tiers {
                tier.flying.iter_mut().for_each(|f| *f = None);
                tier.waiting.clear();
            }
        }
        self.ahead.taken = next.start..next.start;
        let backlog = Backlog {
            state: Mutex::new(BacklogState {
                handed,
                end,
                left,
                closed: false,
                share: self.share,
            }),
            ready: Condvar::new(),
        };
        let (sender, receiver) = std::sync::mpsc::channel();
        let from_back = AtomicU64::new(0);
        let on_gpu = std::thread::scope(|scope| {
            for _ in 0..rayon::current_num_threads() {
                let (sender, backlog, from_back) = (sender.clone(), &backlog, &from_back);
                std::thread::Builder::new()
                    .name("census-share".into())
                    .spawn_scoped(scope, move || {
                        in_background();
                        while let Some(job) = backlog.next(stop) {
                            let soups: Vec<(u64, Rows)> = match job {
                                Job::Handed(index, rows) => vec![(index, rows)],
                                Job::Back(range) => {
                                    from_back.fetch_add(range.end - range.start, Ordering::Relaxed);
                                    range.map(|index| (index, soup::of(root, index))).collect()
                                }
                            };
                            census::with_classifier(|classifier| {
                                for (index, rows) in soups {
                                    // The receiver outlives every thread.
                                    let _ = sender.send((index, census::soup(&rows, classifier)));
                                }
                            });
                        }
                    })
                    .expect("a census thread starts");
            }
            let clock = Instant::now();
            let on_gpu = self.run(root, first, &next, stop, &backlog, &receiver, &mut results);
            self.driving.running += clock.elapsed();
            // Also on an error, or the threads would wait for more; the soups of the next call
            // handed back are kept for its threads.
            self.ahead.handed = backlog.close();
            (on_gpu, Instant::now())
        });
        let (on_gpu, gpu_done) = on_gpu;
        drop(sender);
        self.from_back += from_back.into_inner();
        on_gpu?;
        for (index, tally) in receiver {
            self.ahead.keep(&mut results, first, index, tally);
        }
        self.driving.tail += gpu_done.elapsed();
        Ok(results.into_iter().map_while(|t| t).collect())
    }

    /// The GPU's part of [`GpuCensus::tallies`]: soups taken from the front of the `backlog`
    /// until none is left, then from the front of `next`, run in the boxes, their tallies put
    /// in `results` (soup `first` first) or handed back to the backlog, and the tallies of the
    /// CPU's threads taken from `tallied`; until every soup of `results` is done, or after
    /// `stop`, every soup in the boxes.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        root: &str,
        first: u64,
        next: &Range<u64>,
        stop: &AtomicBool,
        backlog: &Backlog,
        tallied: &std::sync::mpsc::Receiver<(u64, Tally)>,
        results: &mut [Option<Tally>],
    ) -> Result<(), gol_cuda::CudaError> {
        let hand_back = |soup: &InFlight| backlog.hand_back(soup.index, soup.rows);
        let end = first + results.len() as u64;
        let smallest = self.tiers[0].boxes.side();
        // Each kind of box whose run has ended, in turn: its soups that stopped looked at, then
        // its boxes filled and started again, on its own streams, to run while the others are
        // looked at. Runs of larger boxes last longer (22 ms against 11 on average, each run
        // alone under ncu, measured): the smaller are not kept waiting for them.
        let held = |t: &Tier| {
            t.flying
                .iter()
                .flatten()
                .chain(&t.waiting)
                .any(|s| s.index < end)
        };
        // Whether the boxes hold a soup of the range: only a kind of box served changes it, and
        // finding out may take a walk over every box.
        let mut holding = true;
        // The results before this one are all in.
        let mut done_to = 0;
        loop {
            let mut served = false;
            for t in 0..self.tiers.len() {
                if self.tiers[t].running && !self.tiers[t].boxes.is_done()? {
                    continue;
                }
                served = true;
                let clock = Instant::now();
                if self.tiers[t].running {
                    let up = self.look_at(t, first, results, &hand_back)?;
                    // The first larger kind of box takes the soups moved.
                    let side = self.tiers[t].boxes.side();
                    match self.tiers.iter_mut().find(|l| l.boxes.side() > side) {
                        Some(larger) => larger.waiting.extend(up),
                        None => assert!(up.is_empty(), "nothing moves from the largest boxes"),
                    }
                }
                let looked = Instant::now();
                self.driving.looking += looked - clock;
                let tier = &mut self.tiers[t];
                if tier.boxes.side() == smallest && !stop.load(Ordering::Relaxed) {
                    let free = tier.flying.iter().filter(|f| f.is_none()).count();
                    let want = free.saturating_sub(tier.waiting.len()) as u64;
                    let new = self.ahead.take_new(backlog, next, want);
                    let making = Instant::now();
                    let soups: Vec<InFlight> = new
                        .into_par_iter()
                        .map(|index| InFlight::made(root, index))
                        .collect();
                    tier.waiting.extend(soups);
                    self.driving.making += making.elapsed();
                }
                tier.place()?;
                tier.running = tier.flying.iter().any(Option::is_some);
                if tier.running {
                    tier.boxes.start(ROUND, MOST_GENERATIONS)?;
                }
                self.driving.filling += looked.elapsed();
            }
            if served {
                holding = self.tiers.iter().any(held);
            }
            for (index, tally) in tallied.try_iter() {
                self.ahead.keep(results, first, index, tally);
            }
            if !holding && !stop.load(Ordering::Relaxed) && backlog.is_empty() {
                // The GPU is done with the range; it goes on with the next call's soups while
                // the CPU's threads finish the range's.
                while done_to < results.len() && results[done_to].is_some() {
                    done_to += 1;
                }
                if done_to == results.len() {
                    return Ok(());
                }
            }
            let idle = |t: &Tier| !t.running && t.waiting.is_empty();
            if self.tiers.iter().all(idle) {
                return Ok(());
            }
            if !served {
                let clock = Instant::now();
                // Soups made ahead of need, or else a nap.
                if !stop.load(Ordering::Relaxed) && self.make_ahead(root, next, backlog) {
                    self.driving.making += clock.elapsed();
                } else {
                    std::thread::sleep(WAIT);
                    self.driving.waiting += clock.elapsed();
                }
            }
        }
    }

    /// While no box has ended its run, makes a few new soups ahead of need, for the set of
    /// smallest boxes running: whether it made any.
    fn make_ahead(&mut self, root: &str, next: &Range<u64>, backlog: &Backlog) -> bool {
        let smallest = self.tiers[0].boxes.side();
        let Some(tier) = self
            .tiers
            .iter_mut()
            .filter(|t| t.boxes.side() == smallest && t.running)
            .min_by_key(|t| t.waiting.len())
        else {
            return false;
        };
        let room = tier.flying.len().saturating_sub(tier.waiting.len());
        let new = self
            .ahead
            .take_new(backlog, next, room.min(AHEAD_BATCH) as u64);
        let made = !new.is_empty();
        tier.waiting
            .extend(new.map(|index| InFlight::made(root, index)));
        made
    }

    /// Looks at the soups of the boxes of kind `t` that stopped in the last run: the tallies of
    /// those done go to `results` (soup `first` first), those for the CPU to `hand_back`, those
    /// for larger boxes are returned, the others run on.
    fn look_at(
        &mut self,
        t: usize,
        first: u64,
        results: &mut [Option<Tally>],
        hand_back: &impl Fn(&InFlight),
    ) -> Result<Vec<InFlight>, gol_cuda::CudaError> {
        let larger = self
            .tiers
            .iter()
            .map(|l| l.boxes.side())
            .filter(|&l| l > self.tiers[t].boxes.side())
            .min();
        let gliders = &self.gliders;
        let tier = &mut self.tiers[t];
        let clock = Instant::now();
        let side = tier.boxes.side();
        let stopped_with_gliders = |s: &SoupState| s.status() != Status::Running && s.taken > 0;
        let soups::Stopped {
            states,
            live: words,
            log,
        } = tier
            .boxes
            .read_back(|states| states.iter().any(stopped_with_gliders))?;
        self.driving.reading += clock.elapsed();
        self.driving.looks += 1;
        // Each soup that stopped looked at, and what the CPU made of it applied to its box, on
        // every core; with how it stopped and the CPU time it took, summed afterwards, so that
        // the threads share nothing while they look.
        let seen: Vec<Seen> = tier
            .flying
            .par_iter_mut()
            .zip(states.par_iter_mut())
            .enumerate()
            .filter_map(|(slot, (place, state))| {
                let seen = match place.as_mut() {
                    None => None,
                    Some(_) if state.status() == Status::Running => return None,
                    Some(soup) => {
                        let began = Instant::now();
                        // Named by the GPU: its words were not gathered.
                        let named = words.named(slot).next().is_some();
                        let kind = match (state.status(), state.period) {
                            (Status::Paused, _) => 0,
                            (Status::Settled, 1 | 2) if named => 1,
                            (Status::Settled, 1 | 2) => 2,
                            (Status::Settled, _) => 3,
                            _ => 4,
                        };
                        let outcome = census::with_classifier(|classifier| {
                            // The gliders the kernel took away are the soup's flights too.
                            let taken = log.iter().flat_map(|log| log.of(slot, state));
                            for glider in taken {
                                soup.flights.push(flight_of(glider, gliders));
                            }
                            let (live, named) = (words.of(slot), words.named(slot));
                            look(slot as u32, state, side, live, named, soup, classifier)
                        });
                        let cpu = began.elapsed();
                        let (index, rows) = (soup.index, soup.rows);
                        let after = match outcome {
                            Outcome::Resume(cleared, mut flights, mut watched, top, bottom) => {
                                soup.flights.append(&mut flights);
                                soup.watched.append(&mut watched);
                                state.resume(top, bottom);
                                let after = After::Resumed(cleared);
                                return Some(Seen { kind, cpu, after });
                            }
                            Outcome::Done(tally) => After::Done(index, tally),
                            Outcome::Elsewhere(why) if larger.is_some() && !named => {
                                let larger = larger.expect("a larger box");
                                After::Moved(why, soup.moved(side, larger, state, words.of(slot)))
                            }
                            Outcome::Elsewhere(why) | Outcome::Cpu(why) => {
                                After::HandedBack(why, InFlight::new(index, rows))
                            }
                        };
                        *place = None;
                        Some(Seen { kind, cpu, after })
                    }
                };
                // A box left empty is dead to the kernels: its words are not gathered again.
                *state = SoupState::new(Status::Died, 0, 0, 0, 0);
                seen
            })
            .collect();
        let clock = Instant::now();
        let mut edits = Vec::new();
        let mut up = Vec::new();
        for Seen { kind, cpu, after } in seen {
            let looked = &mut self.driving.looked[kind];
            looked.soups += 1;
            looked.cpu += cpu;
            match after {
                After::Resumed(mut cleared) => edits.append(&mut cleared),
                After::Done(index, tally) => self.ahead.keep(results, first, index, tally),
                After::Moved(why, soup) => {
                    *self.moved.entry(why).or_default() += 1;
                    self.went_on += soup.stopped.is_some() as u64;
                    up.push(soup);
                }
                After::HandedBack(why, soup) => {
                    *self.handed_back.entry(why).or_default() += 1;
                    hand_back(&soup);
                }
            }
        }
        tier.boxes.clear(&edits)?;
        tier.boxes.write_states()?;
        self.driving.writing += clock.elapsed();
        Ok(up)
    }
}

impl Tier {
    /// Puts waiting soups in the free boxes.
    fn place(&mut self) -> Result<(), gol_cuda::CudaError> {
        let free: Vec<u32> = (0..self.flying.len() as u32)
            .filter(|&s| self.flying[s as usize].is_none())
            .take(self.waiting.len())
            .collect();
        if free.is_empty() {
            return Ok(());
        }
        // The boxes' slots, those of soups that start at generation 0 from the front, those of
        // soups that go on from the back.
        let mut slots = vec![0; free.len()];
        let (mut fresh, mut back) = (0, free.len());
        let mut rows: Vec<Rows> = Vec::with_capacity(free.len());
        let mut going_on: Vec<(SoupState, Vec<u64>)> = Vec::new();
        for (&slot, mut soup) in free.iter().zip(self.waiting.drain(..free.len())) {
            match soup.stopped.take() {
                None => {
                    rows.push(soup.rows);
                    slots[fresh] = slot;
                    fresh += 1;
                }
                Some(stopped) => {
                    back -= 1;
                    slots[back] = slot;
                    going_on.push(*stopped);
                }
            }
            self.flying[slot as usize] = Some(soup);
        }
        going_on.reverse();
        self.boxes.place(&slots, &rows, &going_on)
    }
}

/// Puts the calling thread in the least priority (on Linux, the idle class, `SCHED_IDLE`, or
/// where that is refused nice 19): a CPU thread beside the GPU then takes only the cores that
/// the driving thread and the look at the GPU's stopped soups leave idle, and gives a core up
/// at once to a thread of theirs that wakes. The look is on the GPU's critical path and a third
/// as costly a soup as a whole census of it on the CPU, so the CPU's threads must never slow it
/// down.
fn in_background() {
    #[cfg(target_os = "linux")]
    {
        let idle = libc::sched_param { sched_priority: 0 };
        // SAFETY: sched_setscheduler and setpriority only read their arguments (`idle` lives
        // across the call); on Linux, pid 0 and PRIO_PROCESS with `who` 0 change the calling
        // thread alone. Lowering a thread's priority needs no privilege; where both fail the
        // thread runs on at its priority, which is only slower.
        unsafe {
            if libc::sched_setscheduler(0, libc::SCHED_IDLE, &idle) != 0 {
                libc::setpriority(libc::PRIO_PROCESS, 0, 19);
            }
        }
    }
}

/// The live cells of a box of `side` cells a side, (x, y) in the box, from its live words
/// (place, word).
fn box_cells(words: &[u64], side: usize) -> Vec<(i64, i64)> {
    let row = side / 32;
    let mut out = Vec::new();
    for &entry in words {
        let (place, mut bits) = (entry >> 32, entry as u32);
        let (y, w) = (place as usize / row, place as usize % row);
        while bits != 0 {
            let b = bits.trailing_zeros() as usize;
            out.push(((32 * w + b) as i64, y as i64));
            bits &= bits - 1;
        }
    }
    out
}

/// What to do with `soup`, in box `slot` of `side` cells a side, stopped in `state` with live
/// words `words` and its ash named by the GPU as `named` (empty where it was not).
fn look(
    slot: u32,
    state: &SoupState,
    side: usize,
    words: &[u64],
    named: impl Iterator<Item = (usize, u64)> + Clone,
    soup: &InFlight,
    classifier: &mut Classifier,
) -> Outcome {
    match state.status() {
        Status::Paused => take_ships(slot, state, side, words, classifier),
        Status::Settled => {
            let (flights, watched) = (&soup.flights, &soup.watched);
            settle(state, side, words, named, flights, watched, classifier)
        }
        Status::Died => Outcome::Cpu("died"),
        _ => Outcome::Cpu("given up"),
    }
}

/// A box's cells as bits, for looking cells up and taking them out: its side and its words,
/// row by row, cell (x, y) bit `x % 32` of word `(y * side + x) / 32` (the GPU's live words'
/// layout).
struct Bits(usize, Vec<u32>);

impl Bits {
    fn of(words: &[u64], side: usize) -> Bits {
        let mut bits = vec![0u32; side * side / 32];
        for &entry in words {
            bits[(entry >> 32) as usize] = entry as u32;
        }
        Bits(side, bits)
    }

    /// Whether `cell` is in the box and set; it is not now.
    fn take(&mut self, (x, y): (i64, i64)) -> bool {
        let side = self.0 as i64;
        if !(0..side).contains(&x) || !(0..side).contains(&y) {
            return false;
        }
        let (word, bit) = ((y * side + x) as usize / 32, 1u32 << (x % 32));
        let was = self.1[word] & bit != 0;
        self.1[word] &= !bit;
        was
    }

    /// The first cell set in row `y` from column `from` to column `to`, if any.
    fn first_in_row(&self, y: i64, from: i64, to: i64) -> Option<(i64, i64)> {
        let row = y as usize * self.0 / 32;
        for w in from / 32..=to / 32 {
            let low = (from - 32 * w).max(0);
            let high = (to - 32 * w).min(31);
            let mask = (u32::MAX >> (31 - high)) & (u32::MAX << low);
            let bits = self.1[row + w as usize] & mask;
            if bits != 0 {
                return Some((32 * w + bits.trailing_zeros() as i64, y));
            }
        }
        None
    }
}

/// The cells joined to `cell` within two cells (a ship's are), taken out of `left` with it,
/// or `None` where there are more than a ship has.
fn cluster_of(cell: (i64, i64), left: &mut Bits) -> Option<Vec<(i64, i64)>> {
    let mut cluster = vec![cell];
    let mut i = 0;
    while i < cluster.len() {
        if cluster.len() > census::MOST_SHIP_CELLS {
            return None;
        }
        let (x, y) = cluster[i];
        for dy in -2..=2 {
            for dx in -2..=2 {
                let n = (x + dx, y + dy);
                if left.take(n) {
                    cluster.push(n);
                }
            }
        }
        i += 1;
    }
    Some(cluster)
}

/// The 16 phases of a glider, as the kernel takes them away ([`SoupBoxes::new`]): phase `p`
/// of the glider flying south-east, reflected east to west where bit 0 of `k / 4` is set and
/// north to south where bit 1 is, at `k`; each its 3 × 3 cells as bits `3 y + x`, bit 9 set
/// where it flies east, bit 10 where south.
fn glider_phases() -> [u32; 16] {
    let mut phases = [0; 16];
    let mut glider = Universe::of(&[(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]);
    for p in 0..4 {
        let cells = glider.cells();
        let (l, t, ..) = bounds(&cells).expect("a glider");
        for k in (0..4).map(|r| 4 * r + p) {
            let (west, north) = (k & 4 == 4, k & 8 == 8);
            phases[k] = cells.iter().fold(0, |bits, &(x, y)| {
                let (x, y) = ((x - l) as u32, (y - t) as u32);
                let x = if west { 2 - x } else { x };
                let y = if north { 2 - y } else { y };
                bits | 1 << (3 * y + x)
            }) | u32::from(!west) << 9
                | u32::from(!north) << 10;
        }
        glider.step();
    }
    phases
}

/// The flights of the glider phases `gliders` ([`glider_phases`]), each with its box's top-left
/// cell at (0, 0), taken away at generation 0: those the kernel takes away, named once.
fn glider_flights(gliders: &[u32; 16], classifier: &mut Classifier) -> Vec<Flight> {
    gliders
        .iter()
        .map(|&shape| {
            let cells: Vec<(i64, i64)> = (0..9)
                .filter(|i| shape >> i & 1 == 1)
                .map(|i| ((i % 3) as i64, (i / 3) as i64))
                .collect();
            ship(cells, 0, classifier).expect("a glider is a ship")
        })
        .collect()
}

/// The flight of a glider the kernel took away: phase `taken.phase` of `gliders`
/// ([`glider_flights`]) moved to where it was taken.
fn flight_of(taken: Taken, gliders: &[Flight]) -> Flight {
    Flight {
        at: taken.generation as u64,
        ..gliders[taken.phase].moved_by((taken.x as i64, taken.y as i64))
    }
}

/// The ship `cells` are, as a flight from generation `at`, where they are one.
fn ship(cells: Vec<(i64, i64)>, at: u64, classifier: &mut Classifier) -> Option<Flight> {
    let (named, period) = classifier.ship(&cells)?;
    Some(Flight {
        glider: named.codes == [census::GLIDER],
        bounds: bounds(&cells).expect("cells"),
        at,
        displacement: named.displacement,
        period,
        codes: named.codes,
        cells,
    })
}

/// The ships in the band of a paused soup taken away, if every cluster there is a ship flying
/// out of the box, and every cell within [`ISOLATION`] of one is another ship's, flying free
/// of it: each of those others is watched ([`Watched`]), to be taken away in its turn.
fn take_ships(
    slot: u32,
    state: &SoupState,
    side: usize,
    words: &[u64],
    classifier: &mut Classifier,
) -> Outcome {
    // The cells not yet in a cluster looked at.
    let mut left = Bits::of(words, side);
    let mut taken: Vec<Flight> = Vec::new();
    let band = BAND as i64;
    let last = side as i64 - 1;
    let at = state.generation as u64;
    let row_words = side / 32;
    for &entry in words {
        let (place, bits) = ((entry >> 32) as usize, entry as u32);
        let (y, w) = ((place / row_words) as i64, place % row_words);
        // The band's cells of the word: all of it in the band's rows, else its first or last
        // columns in the first or last word of a row.
        let mut band_bits = match y < band || y > last - band {
            true => bits,
            false => {
                let left_edge = if w == 0 { u32::MAX >> (32 - band) } else { 0 };
                let right_edge = if w == row_words - 1 {
                    u32::MAX << (32 - band)
                } else {
                    0
                };
                bits & (left_edge | right_edge)
            }
        };
        while band_bits != 0 {
            let cell = (32 * w as i64 + band_bits.trailing_zeros() as i64, y);
            band_bits &= band_bits - 1;
            if !left.take(cell) {
                continue;
            }
            let Some(cluster) = cluster_of(cell, &mut left) else {
                return Outcome::Elsewhere("big cluster");
            };
            let Some(flight) = ship(cluster, at, classifier) else {
                return Outcome::Elsewhere("not a ship");
            };
            let (dx, dy) = flight.displacement;
            let (l, t, r, b) = flight.bounds;
            // Out of the box across every edge whose band it is in.
            let out = (l >= band || dx < 0)
                && (r <= last - band || dx > 0)
                && (t >= band || dy < 0)
                && (b <= last - band || dy > 0);
            if !out {
                return Outcome::Elsewhere("inward");
            }
            taken.push(flight);
        }
    }
    // What lies near each ship taken: other ships only, each flying free of it.
    let mut watched: Vec<Flight> = Vec::new();
    for flight in &taken {
        let (l, t, r, b) = flight.bounds;
        let (from, to) = ((l - ISOLATION).max(0), (r + ISOLATION).min(last));
        for y in (t - ISOLATION).max(0)..=(b + ISOLATION).min(last) {
            while let Some(cell) = left.first_in_row(y, from, to) {
                left.take(cell);
                let Some(cluster) = cluster_of(cell, &mut left) else {
                    return Outcome::Elsewhere("not alone");
                };
                let Some(other) = ship(cluster, at, classifier) else {
                    return Outcome::Elsewhere("not alone");
                };
                watched.push(other);
            }
        }
    }
    // Each ship taken or watched apart from every other one.
    let all: Vec<&Flight> = taken.iter().chain(&watched).collect();
    if census::flights_meet(&all, true) {
        return Outcome::Cpu("meet");
    }
    let mut edits: Vec<(u32, u32, u32)> = taken
        .iter()
        .flat_map(|f| &f.cells)
        .map(|&(x, y)| {
            let word = (y as u32 * side as u32 + x as u32) / 32;
            (slot, word, 1u32 << (x % 32))
        })
        .collect();
    edits.sort_unstable();
    // The rows of the cells left.
    let rows = words.iter().filter_map(|&entry| {
        let place = (entry >> 32) as u32;
        let from = edits.partition_point(|e| e.1 < place);
        let gone = edits[from..]
            .iter()
            .take_while(|e| e.1 == place)
            .fold(0, |m, e| m | e.2);
        (entry as u32 & !gone != 0).then_some(place as usize / row_words)
    });
    let Some((top, bottom)) = rows.fold(None, |span, y| match span {
        None => Some((y, y)),
        Some((t, b)) => Some((y.min(t), y.max(b))),
    }) else {
        // Nothing but ships: it died (the CPU's census says whether it is messless).
        return Outcome::Cpu("only ships");
    };
    Outcome::Resume(edits, taken, watched, top as u32, bottom as u32)
}

/// Whether a ship of `cells`, moving by `displacement` each `period` generations, flies out
/// of a box of `side` cells a side so deep in its band that every cell within reach of it,
/// in any phase, is in the band now and later: nothing can come near it without stopping the
/// soup first, as nothing can a ship taken away at the band ([`take_ships`]).
fn deep_in_band(cells: &[(i64, i64)], displacement: (i64, i64), period: u64, side: usize) -> bool {
    let Some((l, t, r, b)) = bounds(cells) else {
        return true;
    };
    let (dx, dy) = displacement;
    // Reach, and the cells a ship sways within its period.
    let (near, band, last) = (2 + period as i64, BAND as i64, side as i64 - 1);
    (b + near < band && dy < 0)
        || (t - near > last - band && dy > 0)
        || (r + near < band && dx < 0)
        || (l - near > last - band && dx > 0)
}

/// Whether `watched`, a ship as it was, is one of `flights`, taken away later where it would
/// have flown to untouched.
fn taken_later(watched: &Flight, flights: &[Flight]) -> bool {
    flights.iter().any(|f| {
        if (f.displacement, f.period) != (watched.displacement, watched.period) || f.at < watched.at
        {
            return false;
        }
        let now = watched.cells_at(f.at);
        let mut then = f.cells.clone();
        then.sort_unstable();
        now == then
    })
}

/// The tally of a settled soup, in a box of `side` cells a side with live words `words`: its
/// period checked, its ash named, its gliders counted. Where the GPU named the ash (`named`,
/// each of [`APART_KINDS`] it has and how many, in place of the words; empty where it did
/// not), it checked the period too, and the counts are added.
fn settle(
    state: &SoupState,
    side: usize,
    words: &[u64],
    named: impl Iterator<Item = (usize, u64)> + Clone,
    flights: &[Flight],
    watched: &[Flight],
    classifier: &mut Classifier,
) -> Outcome {
    let cells: u64 = words
        .iter()
        .map(|&w| (w as u32).count_ones() as u64)
        .sum::<u64>()
        + named
            .clone()
            .map(|(k, n)| n * APART_KINDS[k].population)
            .sum::<u64>();
    if cells as usize + flights.len() * census::MOST_SHIP_CELLS >= census::MEGASIZED {
        return Outcome::Elsewhere("megasized");
    }
    if census::flights_meet(flights, true) {
        return Outcome::Cpu("meet");
    }
    if !watched.iter().all(|w| taken_later(w, flights)) {
        return Outcome::Elsewhere("watched");
    }
    let period = state.period as u64;
    let mut tally = Tally {
        settled_at: state.shot_at as u64,
        period: period.max(2),
        ..Tally::default()
    };
    for flight in flights {
        for &code in &flight.codes {
            tally.add(code, 1);
        }
    }
    let mut named = named.peekable();
    let back = match period {
        1 | 2 if named.peek().is_some() => {
            for (k, n) in named {
                for &code in &APART_KINDS[k].codes {
                    tally.add(code, n);
                }
            }
            true
        }
        1 | 2 => ash_of_bits(state, side, words, classifier, &mut tally),
        _ => {
            let ash = box_cells(words, side);
            census::count_ash(&ash, period.max(2), Some(period), classifier, &mut tally)
        }
    };
    if !back {
        return Outcome::Elsewhere("period");
    }
    Outcome::Done(tally)
}

/// [`census::count_ash`] of the ash of a soup settled with period 1 or 2 (`state.period`), in
/// a box of `side` cells a side with live words `words`, on the box's bits: its cells stepped
/// two generations, the period checked, the clusters of those generations' cells found and
/// named; whether the period held. Cells lie [`BAND`] or more cells inside the box, so its rows
/// from three above the first with cells to three below the last hold every generation with
/// two rows and columns to spare.
fn ash_of_bits(
    state: &SoupState,
    side: usize,
    words: &[u64],
    classifier: &mut Classifier,
    tally: &mut Tally,
) -> bool {
    debug_assert!(state.top as usize >= BAND && state.bottom as usize + BAND < side);
    if words.is_empty() {
        // Nothing, which repeats with any period.
        return true;
    }
    // Rows of `across` 64-bit words, the first at row `y0` of the box and column `x0`: from
    // three rows and columns before the first with cells to three after the last (a blinker's
    // other phase reaches one further, and clusters_of_rows wants two to spare), so that most
    // ash takes one or two words a row.
    let (y0, rows) = (
        state.top as usize - 3,
        (state.bottom - state.top) as usize + 7,
    );
    let row_words = side / 32;
    let (low, high) = words.iter().fold((usize::MAX, 0), |(low, high), &entry| {
        let (x, bits) = (32 * ((entry >> 32) as usize % row_words), entry as u32);
        (
            low.min(x + bits.trailing_zeros() as usize),
            high.max(x + 31 - bits.leading_zeros() as usize),
        )
    });
    let x0 = low - 3;
    let across = (high + 4 - x0).div_ceil(64);
    let mut now = vec![0u64; rows * across];
    for &entry in words {
        let (place, bits) = ((entry >> 32) as usize, entry & 0xffff_ffff);
        let (y, x) = (place / row_words, 32 * (place % row_words));
        // The word's cells from column x0 on (none lie before it), then placed at their offset.
        let (bits, offset) = match x.checked_sub(x0) {
            Some(offset) => (bits, offset),
            None => (bits >> (x0 - x), 0),
        };
        let (at, shift) = ((y - y0) * across + offset / 64, offset % 64);
        now[at] |= bits << shift;
        let spill = bits >> 1 >> (63 - shift);
        if spill != 0 {
            now[at + 1] |= spill;
        }
    }
    let mut one = vec![0u64; now.len()];
    step_rows(&now, across, 1..rows - 1, &mut one);
    let repeats = match state.period {
        1 => one == now,
        _ => steps_back(&now, &one, across, 1..rows - 1),
    };
    if !repeats {
        return false;
    }
    // The envelope: the cells of generations 0 and 1 (generation 2 is generation 0's).
    let mut envelope = one;
    for (cells, &alive) in envelope.iter_mut().zip(&now) {
        *cells |= alive;
    }
    // `n` objects of live cells `cells` named and counted.
    let mut name = |cells: &[(i64, i64)], n: u64| {
        for &code in &classifier.classify(cells).codes {
            tally.add(code, n);
        }
    };
    take_lone(across, &mut now, &mut envelope, &mut name);
    let corner = (x0 as i64, y0 as i64);
    for cluster in clusters_of_rows(corner, 64 * across, now, envelope) {
        name(&cluster, 1);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIDE: usize = 256;

    /// The live words of a box holding `cells`.
    fn words(cells: &[(i64, i64)]) -> Vec<u64> {
        let mut words = std::collections::BTreeMap::new();
        for &(x, y) in cells {
            *words
                .entry((y as u64 * SIDE as u64 + x as u64) / 32)
                .or_insert(0u32) |= 1 << (x % 32);
        }
        words
            .into_iter()
            .map(|(place, word)| place << 32 | word as u64)
            .collect()
    }

    /// A glider flying up and left, its top-left corner at (x, y).
    fn glider(x: i64, y: i64) -> Vec<(i64, i64)> {
        [(0, 0), (1, 0), (0, 1), (2, 1), (0, 2)]
            .iter()
            .map(|&(dx, dy)| (x + dx, y + dy))
            .collect()
    }

    fn block(x: i64, y: i64) -> Vec<(i64, i64)> {
        vec![(x, y), (x + 1, y), (x, y + 1), (x + 1, y + 1)]
    }

    fn paused(cells: &[(i64, i64)]) -> Outcome {
        let (_, top, _, bottom) = bounds(cells).unwrap();
        let state = SoupState::new(Status::Paused, 900, top as u32, bottom as u32, 0);
        take_ships(7, &state, SIDE, &words(cells), &mut Classifier::default())
    }

    #[test]
    fn a_glider_flying_out_alone_is_taken_away() {
        let ship = glider(100, 5);
        let cells: Vec<_> = ship.iter().copied().chain(block(128, 128)).collect();
        let Outcome::Resume(edits, taken, watched, top, bottom) = paused(&cells) else {
            panic!("the glider is not taken away");
        };
        assert_eq!((top, bottom), (128, 129), "the rows left are the block's");
        assert!(watched.is_empty());
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].codes, [census::GLIDER]);
        assert_eq!(taken[0].displacement, (-1, -1));
        assert_eq!(taken[0].at, 900);
        // The edits clear the glider's five cells and nothing else.
        let cleared: usize = edits.iter().map(|e| e.2.count_ones() as usize).sum();
        assert_eq!(cleared, 5);
        assert!(edits.iter().all(|e| e.0 == 7));
        let mut left = words(&cells);
        for &(_, word, mask) in &edits {
            for w in left.iter_mut().filter(|w| (**w >> 32) as u32 == word) {
                *w &= !(mask as u64);
            }
        }
        left.retain(|w| *w as u32 != 0);
        assert_eq!(left, words(&block(128, 128)));
    }

    #[test]
    fn a_soup_moved_goes_on_with_its_ships_put_back_where_they_flew() {
        let flier = glider(100, 5);
        let cells: Vec<_> = flier.iter().copied().chain(block(128, 128)).collect();
        let Outcome::Resume(_, taken, watched, ..) = paused(&cells) else {
            panic!("the glider is not taken away");
        };
        let mut soup = InFlight::new(3, [0; 16]);
        soup.flights = taken;
        soup.watched = watched;
        // Stopped 10 generations later by something in the band that is not a ship.
        let mut rest = block(128, 128);
        rest.extend(block(5, 200));
        let state = SoupState::new(Status::Paused, 910, 128, 201, 0);
        let moved = soup.moved(SIDE, 512, &state, &words(&rest));
        let (going_on, placed) = *moved.stopped.expect("it goes on");
        assert_eq!(going_on.generation, 910);
        assert_eq!(going_on.status(), Status::Running);
        let mut flying = Universe::of(&flier);
        for _ in 0..10 {
            flying.step();
        }
        let mut want: Vec<(i64, i64)> = rest.into_iter().chain(flying.cells()).collect();
        want.iter_mut().for_each(|c| *c = (c.0 + 128, c.1 + 128));
        want.sort_unstable();
        let mut got = box_cells(&placed, 512);
        got.sort_unstable();
        assert_eq!(got, want);
        let top = want.iter().map(|c| c.1).min().unwrap() as u32;
        let bottom = want.iter().map(|c| c.1).max().unwrap() as u32;
        assert_eq!((going_on.top, going_on.bottom), (top, bottom));
        // Where the glider has flown onto the larger box's band, it starts again; deeper in
        // the band, it goes on with the glider still taken away.
        let late = SoupState::new(Status::Paused, 900 + 4 * 125, 128, 129, 0);
        let from_start = soup.moved(SIDE, 512, &late, &words(&block(128, 128)));
        assert!(from_start.stopped.is_none());
        let later = SoupState::new(Status::Paused, 900 + 4 * 130, 128, 129, 0);
        let far = soup.moved(SIDE, 512, &later, &words(&block(128, 128)));
        let (_, placed) = *far.stopped.expect("it goes on");
        assert_eq!(box_cells(&placed, 512).len(), 4, "the block alone");
        assert_eq!(far.flights.len(), 1);
        assert_eq!(
            far.flights[0].cells,
            soup.flights[0]
                .cells
                .iter()
                .map(|&(x, y)| (x + 128, y + 128))
                .collect::<Vec<_>>()
        );
        assert_eq!(far.flights[0].at, 900);
        // So it does where a ship watched was not taken away yet.
        let other = ship(glider(150, 30), 905, &mut Classifier::default());
        soup.watched.push(other.expect("a glider"));
        assert!(soup
            .moved(SIDE, 512, &state, &words(&block(128, 128)))
            .stopped
            .is_none());
    }

    #[test]
    fn a_glider_flying_in_or_not_alone_goes_elsewhere() {
        // Flying down and right, into the box.
        let inward: Vec<_> = glider(100, 5)
            .iter()
            .map(|&(x, y)| (202 - x, 12 - y))
            .collect();
        assert!(matches!(paused(&inward), Outcome::Elsewhere("inward")));
        // A block within ISOLATION of it.
        let near: Vec<_> = glider(100, 5).into_iter().chain(block(110, 20)).collect();
        assert!(matches!(paused(&near), Outcome::Elsewhere("not alone")));
        // Anything but a ship in the band.
        let still: Vec<_> = block(100, 5).into_iter().chain(block(128, 128)).collect();
        assert!(matches!(paused(&still), Outcome::Elsewhere("not a ship")));
        // Nothing left but the glider: the CPU says whether the soup was messless.
        assert!(matches!(
            paused(&glider(100, 5)),
            Outcome::Cpu("only ships")
        ));
    }

    #[test]
    fn a_glider_near_one_taken_away_is_watched_until_it_is_taken_too() {
        // Two gliders flying side by side, one in the band, one 14 cells behind.
        let cells: Vec<_> = glider(100, 5)
            .into_iter()
            .chain(glider(114, 19))
            .chain(block(128, 128))
            .collect();
        let Outcome::Resume(_, taken, watched, _, _) = paused(&cells) else {
            panic!("the glider in the band is not taken away");
        };
        assert_eq!((taken.len(), watched.len()), (1, 1));
        // Taken later where it would have flown to, in the same phase or another.
        let mut later = ship(glider(114 - 4, 19 - 4), 916, &mut Classifier::default()).unwrap();
        assert!(taken_later(&watched[0], std::slice::from_ref(&later)));
        later.cells = glider(114 - 5, 19 - 4);
        assert!(!taken_later(&watched[0], &[later]));
    }

    #[test]
    fn ships_of_one_velocity_meet_only_where_their_cells_come_within_reach() {
        let mut classifier = Classifier::default();
        let mut flight = |cells, at| ship(cells, at, &mut classifier).expect("a glider");
        let first = flight(glider(100, 100), 500);
        let meet = |other: &Flight| census::flights_meet(&[&first, other], true);
        // Side by side, four cells apart in every phase (their boxes, swaying, overlap): each
        // flies as it would alone, whether taken with the first or two periods later.
        assert!(!meet(&flight(glider(106, 100), 500)));
        assert!(!meet(&flight(glider(104, 98), 508)));
        // Two cells apart: a cell between them has neighbours in both.
        assert!(meet(&flight(glider(104, 100), 500)));
        assert!(meet(&flight(glider(102, 98), 508)));
        // Ten cells apart, flying the other way across: ships of other velocities meet where
        // their boxes come within reach.
        let across = glider(112, 100)
            .iter()
            .map(|&(x, y)| (226 - x, y))
            .collect();
        assert!(meet(&flight(across, 500)));
    }

    /// The kernel's table: 16 different shapes, each a glider flying the way its bits say, and
    /// each read back from a log entry as the glider it is, where it is.
    #[test]
    fn the_glider_phases_are_the_sixteen_gliders() {
        let phases = glider_phases();
        let shapes: std::collections::BTreeSet<u32> = phases.iter().map(|p| p & 0x1ff).collect();
        assert_eq!(shapes.len(), 16);
        let flights = glider_flights(&phases, &mut Classifier::default());
        for (phase, &bits) in phases.iter().enumerate() {
            let taken = Taken {
                generation: 40,
                phase,
                x: 100,
                y: 7,
            };
            let flight = flight_of(taken, &flights);
            assert!(flight.glider);
            assert_eq!((flight.at, flight.period), (40, 4));
            assert_eq!(flight.bounds, (100, 7, 102, 9));
            let east = if bits >> 9 & 1 == 1 { 1 } else { -1 };
            let south = if bits >> 10 & 1 == 1 { 1 } else { -1 };
            assert_eq!(flight.displacement, (east, south), "phase {phase}");
        }
    }

    #[test]
    fn a_settled_soup_is_named_once_its_period_is_checked() {
        let blinker = vec![(140, 100), (141, 100), (142, 100)];
        let ash: Vec<_> = blinker.into_iter().chain(block(128, 128)).collect();
        let flight = ship(glider(100, 5), 300, &mut Classifier::default()).unwrap();
        // The box's words, or (the GPU having named the ash) in their place its counts.
        let named_as = |period, named: &[(usize, u64)]| {
            let state = SoupState::new(Status::Settled, 1000, 100, 129, period);
            let flights = std::slice::from_ref(&flight);
            let words = if named.is_empty() {
                words(&ash)
            } else {
                vec![]
            };
            let named = named.iter().copied();
            let classifier = &mut Classifier::default();
            settle(&state, SIDE, &words, named, flights, &[], classifier)
        };
        let settled = |period| named_as(period, &[]);
        // What a tally counts of each code.
        let objects = |outcome: Outcome| -> Vec<String> {
            let Outcome::Done(tally) = outcome else {
                panic!("not named");
            };
            tally
                .objects
                .iter()
                .map(|(code, n)| format!("{code} {n}"))
                .collect()
        };
        assert_eq!(objects(settled(2)), ["xp2_7 1", "xq4_153 1", "xs4_33 1"]);
        // A period the ash does not have (the GPU's hashes matched by chance), on the box's
        // bits and on a universe.
        assert!(matches!(settled(1), Outcome::Elsewhere("period")));
        assert!(matches!(settled(3), Outcome::Elsewhere("period")));
        // Named by the GPU (which checked the period): its counts.
        let kind = |code: &str| APART_KINDS.iter().position(|k| k.codes == [code]).unwrap();
        let named = named_as(2, &[(kind("xs4_33"), 2), (kind("xs7_2596"), 3)]);
        assert_eq!(objects(named), ["xq4_153 1", "xs4_33 2", "xs7_2596 3"]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// The ash named on a box's bits is the ash a universe names: the same tally, and the
        /// same answer to whether the period holds. The ash is a soup's, run until most have
        /// settled, with what left the box dropped every 100 generations.
        #[test]
        fn ash_on_bits_is_ash_on_a_universe(
            index in 0u64..1 << 20,
            generations in 0u64..3000,
            period in 1u32..3,
        ) {
            let in_box = |cells: Vec<(i64, i64)>| -> Vec<(i64, i64)> {
                let inside = BAND as i64 + 2..SIDE as i64 - BAND as i64 - 2;
                cells
                    .into_iter()
                    .filter(|(x, y)| inside.contains(x) && inside.contains(y))
                    .collect()
            };
            let rows = soup::rows(&soup::id("k_bits", index));
            let mut cells: Vec<_> = soup::cells(&rows).iter().map(|&(x, y)| (x + 120, y + 120)).collect();
            for left in (0..generations).step_by(100) {
                let mut u = Universe::of(&cells);
                (0..(generations - left).min(100)).for_each(|_| u.step());
                cells = in_box(u.cells());
            }
            proptest::prop_assume!(!cells.is_empty());
            let (_, top, _, bottom) = bounds(&cells).expect("cells");
            let state = SoupState::new(Status::Settled, 0, top as u32, bottom as u32, period);
            let (mut on_bits, mut on_universe) = (Tally::default(), Tally::default());
            let held = ash_of_bits(&state, SIDE, &words(&cells), &mut Classifier::default(), &mut on_bits);
            let period = Some(period as u64);
            let also = census::count_ash(&cells, 2, period, &mut Classifier::default(), &mut on_universe);
            proptest::prop_assert_eq!(held, also);
            proptest::prop_assert_eq!(on_bits, on_universe);
        }
    }
}
