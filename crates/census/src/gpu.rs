//! The census with its soups stepped on a GPU: the same tallies as the CPU's ([`census::soup`]),
//! soup for soup.
//!
//! Each soup runs on a box of 256² cells of its own ([`gol_cuda::soups`]) until it settles,
//! dies, or a cell comes within [`BAND`] cells of the box's edge. Then the CPU looks:
//!
//! - **Cells in the band**: where each cluster there is a glider flying out of the box, and no
//!   other cell lies within [`ISOLATION`] cells of it, the gliders are taken away and counted,
//!   and the soup runs on. Nothing that was not taken away can ever come near such a glider
//!   without coming into the band itself, which stops the soup again (it lies [`ISOLATION`]
//!   cells from anything, and flies out at a quarter of the speed of light, so anything that
//!   catches it up is in the band by then), and the gliders taken away are checked not to
//!   meet one another ([`census::flights_meet`]): what is left of the soup runs as it would
//!   have with them.
//! - **Settled**: its period is checked on the CPU's copy (the GPU compares hashes), and its
//!   ash cut into objects and named as the CPU's census does ([`census::count_ash`]).
//!
//! Anything else (a cluster in the band that is not such a glider, a soup that died, ran past
//! [`MOST_GENERATIONS`], or left a megasized ash; gliders that meet) is censused from the start
//! by the CPU's census, which is what the GPU's answer must equal. So the haul is
//! byte-identical to the CPU's whatever runs where, as long as the CPU's census names the true
//! ash; the tests check that it is on hundreds of thousands of soups.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rayon::prelude::*;

use gol_cuda::soups::{SoupBoxes, SoupState, Status, BAND, SIDE, WORDS};

use crate::census::{self, Flight, Tally};
use crate::objects::Classifier;
use crate::soup::{self, Rows};
use crate::universe::{bounds, Universe};

/// Generations a soup may run on the GPU; one that runs longer is censused by the CPU.
pub const MOST_GENERATIONS: u32 = 1 << 14;

/// Cells around a glider in the band within which nothing else may be for it to be taken away:
/// more than anything starting there could cover, at the speed of light, before the glider is
/// a cell deeper in the band than the band's depth past where it is (16 generations), give or
/// take the glider's size and reach.
pub const ISOLATION: i64 = 24;

/// Generations the GPU runs between two looks at the soups that stopped.
const ROUND: u32 = 128;

/// Boxes (soups in flight) by default: 1 GiB of the GPU's memory.
pub const SLOTS: usize = 1 << 17;

/// The soups in flight on one GPU.
pub struct GpuCensus {
    boxes: SoupBoxes,
}

/// What is known of a soup in a box.
struct InFlight {
    index: u64,
    rows: Rows,
    /// Ships taken away.
    flights: Vec<Flight>,
    /// Ships that were near one taken away, each to be taken away in its turn.
    watched: Vec<Flight>,
}

/// What the CPU made of a stopped soup.
enum Outcome {
    /// Ships taken away (the edits to the box: slot, word, mask), ships watched, and the rows
    /// of cells left: it runs on.
    Resume(Vec<(u32, u32, u32)>, Vec<Flight>, Vec<Flight>, u32, u32),
    /// Its tally.
    Done(Tally),
    /// For the CPU's census, and why.
    Cpu(&'static str),
}

impl GpuCensus {
    /// Boxes for `slots` soups on GPU `ordinal`.
    pub fn new(ordinal: usize, slots: usize) -> Result<GpuCensus, gol_cuda::CudaError> {
        let gpu: Arc<gol_cuda::device::Gpu> = gol_cuda::device::gpu_on(ordinal)?;
        Ok(GpuCensus {
            boxes: SoupBoxes::new(&gpu, slots)?,
        })
    }

    /// The tallies of soups `first..first + count` of `root`, in index order, as
    /// [`census::tallies`] gives them; `stop` ends it early: the tallies of the soups done, from
    /// `first` on without a gap.
    pub fn tallies(
        &mut self,
        root: &str,
        first: u64,
        count: u64,
        stop: &AtomicBool,
    ) -> Result<Vec<Tally>, gol_cuda::CudaError> {
        let slots = self.boxes.slots();
        let mut flying: Vec<Option<InFlight>> = (0..slots).map(|_| None).collect();
        let mut results: Vec<Option<Tally>> = vec![None; count as usize];
        let mut cpu: Vec<(u64, Rows)> = Vec::new();
        let mut next = first;
        let end = first + count;
        let profile = std::env::var_os("GOL_CENSUS_PROFILE").is_some();
        let (mut t_run, mut t_boxes, mut t_look, mut rounds, mut n_look, mut n_resume) =
            (0f64, 0f64, 0f64, 0, 0, 0);
        let clock = std::time::Instant::now();
        let mut reasons = std::collections::BTreeMap::new();
        loop {
            // New soups in the free boxes.
            let free: Vec<u32> = (0..slots as u32)
                .filter(|&s| flying[s as usize].is_none())
                .take((end - next) as usize)
                .collect();
            if stop.load(Ordering::Relaxed) {
                // Only the soups in flight are finished.
            } else if !free.is_empty() {
                let placed: Vec<InFlight> = (next..next + free.len() as u64)
                    .into_par_iter()
                    .map(|index| InFlight {
                        index,
                        rows: soup::rows(&soup::id(root, index)),
                        flights: Vec::new(),
                        watched: Vec::new(),
                    })
                    .collect();
                next += placed.len() as u64;
                let rows: Vec<Rows> = placed.iter().map(|p| p.rows).collect();
                self.boxes.place(&free, &rows)?;
                for (&slot, p) in free.iter().zip(placed) {
                    flying[slot as usize] = Some(p);
                }
            }
            if flying.iter().all(Option::is_none) {
                break;
            }
            let t0 = std::time::Instant::now();
            let mut states = self.boxes.run(ROUND, MOST_GENERATIONS)?;
            t_run += t0.elapsed().as_secs_f64();
            rounds += 1;
            let stopped: Vec<u32> = (0..slots as u32)
                .filter(|&s| {
                    flying[s as usize].is_some() && states[s as usize].status() != Status::Running
                })
                .collect();
            let looked: Vec<u32> = stopped
                .iter()
                .copied()
                .filter(|&s| {
                    matches!(
                        states[s as usize].status(),
                        Status::Paused | Status::Settled
                    )
                })
                .collect();
            let t0 = std::time::Instant::now();
            let words = self.boxes.live_words(&looked)?;
            t_boxes += t0.elapsed().as_secs_f64();
            n_look += looked.len();
            let t0 = std::time::Instant::now();
            let outcomes: Vec<Outcome> = looked
                .par_iter()
                .zip(&words)
                .map(|(&slot, words)| {
                    let state = &states[slot as usize];
                    let soup = flying[slot as usize].as_ref().expect("a soup in flight");
                    census::with_classifier(|classifier| {
                        look(slot, state, words, &soup.flights, &soup.watched, classifier)
                    })
                })
                .collect();
            t_look += t0.elapsed().as_secs_f64();
            let mut edits = Vec::new();
            let mut done = HashSet::new();
            for (&slot, outcome) in looked.iter().zip(outcomes) {
                let soup = flying[slot as usize].as_mut().expect("a soup in flight");
                match outcome {
                    Outcome::Resume(mut cleared, mut flights, mut watched, top, bottom) => {
                        n_resume += 1;
                        edits.append(&mut cleared);
                        soup.flights.append(&mut flights);
                        soup.watched.append(&mut watched);
                        states[slot as usize].resume(top, bottom);
                    }
                    Outcome::Done(tally) => {
                        results[(soup.index - first) as usize] = Some(tally);
                        done.insert(slot);
                    }
                    Outcome::Cpu(why) => {
                        *reasons.entry(why).or_insert(0u64) += 1;
                        cpu.push((soup.index, soup.rows));
                        done.insert(slot);
                    }
                }
            }
            for &slot in &stopped {
                if matches!(
                    states[slot as usize].status(),
                    Status::Died | Status::GivenUp
                ) {
                    let soup = flying[slot as usize].as_ref().expect("a soup in flight");
                    *reasons
                        .entry(if states[slot as usize].status() == Status::Died {
                            "died"
                        } else {
                            "given up"
                        })
                        .or_insert(0u64) += 1;
                    cpu.push((soup.index, soup.rows));
                    done.insert(slot);
                }
            }
            for slot in done {
                flying[slot as usize] = None;
            }
            self.boxes.clear(&edits)?;
            self.boxes.set_states(&states)?;
        }
        let gpu_part = clock.elapsed().as_secs_f64();
        let t0 = std::time::Instant::now();
        let n_cpu = cpu.len();
        let from_cpu: Vec<(u64, Tally)> = cpu
            .par_iter()
            .map(|(index, rows)| {
                let tally = census::with_classifier(|classifier| census::soup(rows, classifier));
                (*index, tally)
            })
            .collect();
        for (index, tally) in from_cpu {
            results[(index - first) as usize] = Some(tally);
        }
        if profile {
            eprintln!("profile: gpu loop {gpu_part:.2}s ({rounds} rounds: run {t_run:.2}s, boxes {t_boxes:.2}s, look {t_look:.2}s; {n_look} looked, {n_resume} resumed), cpu {:.2}s for {n_cpu} soups {reasons:?}", t0.elapsed().as_secs_f64());
        }
        Ok(results.into_iter().map_while(|t| t).collect())
    }
}

/// The live cells of a box, (x, y) in the box, from its live words (place, word).
fn box_cells(words: &[(u32, u32)]) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    for &(place, mut bits) in words {
        let (y, w) = (place as usize / WORDS, place as usize % WORDS);
        while bits != 0 {
            let b = bits.trailing_zeros() as usize;
            out.push(((32 * w + b) as i64, y as i64));
            bits &= bits - 1;
        }
    }
    out
}

/// What to do with the soup of box `slot`, stopped in `state` with cells `words`, its gliders
/// taken away so far `flights`.
fn look(
    slot: u32,
    state: &SoupState,
    words: &[(u32, u32)],
    flights: &[Flight],
    watched: &[Flight],
    classifier: &mut Classifier,
) -> Outcome {
    match state.status() {
        Status::Paused => take_ships(slot, state, words, classifier),
        Status::Settled => settle(state, box_cells(words), flights, watched, classifier),
        _ => Outcome::Cpu("status"),
    }
}

/// Cells from the nearest edge of the box.
fn depth((x, y): (i64, i64)) -> i64 {
    let last = SIDE as i64 - 1;
    x.min(y).min(last - x).min(last - y)
}

/// A box's cells as bits, for looking cells up.
struct Bits(Vec<u32>);

impl Bits {
    fn of(words: &[(u32, u32)]) -> Bits {
        let mut bits = vec![0u32; SIDE * WORDS];
        for &(place, word) in words {
            bits[place as usize] = word;
        }
        Bits(bits)
    }

    fn get(&self, (x, y): (i64, i64)) -> bool {
        let side = SIDE as i64;
        (0..side).contains(&x)
            && (0..side).contains(&y)
            && self.0[y as usize * WORDS + x as usize / 32] >> (x % 32) & 1 != 0
    }
}

/// The cells joined to `cell` within two cells (a ship's are), or `None` where there are more
/// than a ship has.
fn cluster_of(
    cell: (i64, i64),
    bits: &Bits,
    seen: &mut HashSet<(i64, i64)>,
) -> Option<Vec<(i64, i64)>> {
    let mut cluster = vec![cell];
    seen.insert(cell);
    let mut i = 0;
    while i < cluster.len() {
        if cluster.len() > census::MOST_SHIP_CELLS {
            return None;
        }
        let (x, y) = cluster[i];
        for dy in -2..=2 {
            for dx in -2..=2 {
                let n = (x + dx, y + dy);
                if bits.get(n) && seen.insert(n) {
                    cluster.push(n);
                }
            }
        }
        i += 1;
    }
    Some(cluster)
}

/// The ship `cells` are, as a flight from generation `at`, where they are one.
fn ship(cells: Vec<(i64, i64)>, at: u64, classifier: &mut Classifier) -> Option<Flight> {
    let (named, period) = classifier.ship(&cells)?;
    Some(Flight {
        glider: named.codes.iter().map(String::as_str).eq([census::GLIDER]),
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
    words: &[(u32, u32)],
    classifier: &mut Classifier,
) -> Outcome {
    let cells = box_cells(words);
    let bits = Bits::of(words);
    let mut seen: HashSet<(i64, i64)> = HashSet::new();
    let mut taken: Vec<Flight> = Vec::new();
    let band = BAND as i64;
    let last = SIDE as i64 - 1;
    let at = state.generation as u64;
    for &cell in cells.iter().filter(|&&c| depth(c) < band) {
        if seen.contains(&cell) {
            continue;
        }
        let Some(cluster) = cluster_of(cell, &bits, &mut seen) else {
            return Outcome::Cpu("big cluster");
        };
        let Some(flight) = ship(cluster, at, classifier) else {
            return Outcome::Cpu("not a ship");
        };
        let (dx, dy) = flight.displacement;
        let (l, t, r, b) = flight.bounds;
        // Out of the box across every edge whose band it is in.
        let out = (l >= band || dx < 0)
            && (r <= last - band || dx > 0)
            && (t >= band || dy < 0)
            && (b <= last - band || dy > 0);
        if !out {
            return Outcome::Cpu("inward");
        }
        taken.push(flight);
    }
    // What lies near each ship taken: other ships only, each flying free of it.
    let mut watched: Vec<Flight> = Vec::new();
    for flight in &taken {
        let (l, t, r, b) = flight.bounds;
        let near: Vec<(i64, i64)> = cells
            .iter()
            .copied()
            .filter(|&(x, y)| {
                x >= l - ISOLATION && x <= r + ISOLATION && y >= t - ISOLATION && y <= b + ISOLATION
            })
            .collect();
        for cell in near {
            if seen.contains(&cell) {
                continue;
            }
            let Some(cluster) = cluster_of(cell, &bits, &mut seen) else {
                return Outcome::Cpu("not alone");
            };
            let Some(other) = ship(cluster, at, classifier) else {
                return Outcome::Cpu("not alone");
            };
            watched.push(other);
        }
    }
    // Each ship taken or watched apart from every other one.
    let all: Vec<&Flight> = taken.iter().chain(&watched).collect();
    if census::flights_meet(&all, true) {
        return Outcome::Cpu("meet");
    }
    let gone: HashSet<(i64, i64)> = taken.iter().flat_map(|f| f.cells.clone()).collect();
    let rest: Vec<(i64, i64)> = cells
        .iter()
        .copied()
        .filter(|c| !gone.contains(c))
        .collect();
    let Some((_, top, _, bottom)) = bounds(&rest) else {
        // Nothing but ships: it died (the CPU's census says whether it is messless).
        return Outcome::Cpu("only ships");
    };
    let mut edits: Vec<(u32, u32, u32)> = gone
        .iter()
        .map(|&(x, y)| {
            let word = y as u32 * WORDS as u32 + x as u32 / 32;
            (slot, word, 1u32 << (x % 32))
        })
        .collect();
    edits.sort_unstable();
    Outcome::Resume(edits, taken, watched, top as u32, bottom as u32)
}

/// Whether `watched`, a ship as it was, is one of `flights`, taken away later where it would
/// have flown to untouched.
fn taken_later(watched: &Flight, flights: &[Flight]) -> bool {
    flights.iter().any(|f| {
        if (f.displacement, f.period) != (watched.displacement, watched.period) || f.at < watched.at
        {
            return false;
        }
        let since = f.at - watched.at;
        let periods = (since / f.period) as i64;
        let (dx, dy) = (f.displacement.0 * periods, f.displacement.1 * periods);
        let moved: Vec<(i64, i64)> = watched
            .cells
            .iter()
            .map(|&(x, y)| (x + dx, y + dy))
            .collect();
        let mut u = Universe::of(&moved);
        for _ in 0..since % f.period {
            u.step();
        }
        let mut now = u.cells();
        now.sort_unstable();
        let mut then = f.cells.clone();
        then.sort_unstable();
        now == then
    })
}

/// The tally of a settled soup: its period checked, its ash named, its gliders counted.
fn settle(
    state: &SoupState,
    mut ash: Vec<(i64, i64)>,
    flights: &[Flight],
    watched: &[Flight],
    classifier: &mut Classifier,
) -> Outcome {
    if ash.len() + flights.len() * census::MOST_SHIP_CELLS >= census::MEGASIZED {
        return Outcome::Cpu("megasized");
    }
    if census::flights_meet(flights, true) {
        return Outcome::Cpu("meet");
    }
    if !watched.iter().all(|w| taken_later(w, flights)) {
        return Outcome::Cpu("watched");
    }
    let period = state.period as u64;
    let mut u = Universe::of(&ash);
    for _ in 0..period {
        u.step();
    }
    let mut after = u.cells();
    after.sort_unstable();
    ash.sort_unstable();
    if after != ash {
        return Outcome::Cpu("period");
    }
    let mut tally = Tally {
        settled_at: state.shot_at as u64,
        period: period.max(2),
        ..Tally::default()
    };
    for flight in flights {
        for code in &flight.codes {
            tally.add(code, 1);
        }
    }
    census::count_ash(&ash, period.max(2), classifier, &mut tally);
    Outcome::Done(tally)
}
