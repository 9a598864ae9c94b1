//! What a pattern is: run on the plane until it repeats, then its kind, period, speed, heat
//! and apgcode.
//!
//! The pattern is read every generation as its bounding box's cells; a generation whose cells
//! (states included) equal an earlier one's, wherever each lay, closes the cycle: the period is
//! the generations between the two, the displacement how far the box moved. Every earlier
//! generation differs from all before it, so the period is the least one. The cycle is then run
//! once more, a phase at a time, for what is measured over one period:
//! - **heat**: cells that change state from one generation to the next, on average;
//! - **temperature**: the heat over the mean population;
//! - **volatility** (oscillators and still lifes): the share of the cells ever alive in a
//!   period that change state during it (rotor over rotor and stator, as LifeWiki has it);
//! - **mod** (LifeViewer's): the least number of generations after which the pattern is the
//!   same shape again, turned or reflected (a quarter or half of the period) or not;
//! - the **apgcode** ([`crate::apgcode`]), of two-state rules.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use gol_core::{Error, Result};
use gol_plane::Plane;
use num_bigint::BigUint;
use num_traits::{One, Zero};

use crate::apgcode::{self, Kind};

/// What a pattern was found to be.
#[derive(Clone, Debug, PartialEq)]
pub struct Identity {
    /// Generations run before the cycle began (0 for an object given in one of its phases).
    pub settled_at: u64,
    /// What it does: the repeat found, or how it went without one.
    pub verdict: Verdict,
    /// The bounding box at the generation the cycle begins (or at the limit): x, y, width,
    /// height in Golly's coordinates.
    pub bounding_box: Option<(i64, i64, u64, u64)>,
    /// The population at that generation.
    pub population: u64,
}

/// What a run found.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// It repeats.
    Periodic(Cycle),
    /// Nothing was left at this generation.
    DiesOut {
        /// The first generation with no cells.
        generation: u64,
    },
    /// No generation repeated an earlier one within the limit.
    NotFound {
        /// Generations run.
        limit: u64,
        /// Whether the run ended before the limit, the bounding box grown past
        /// [`MOST_CELLS`].
        outgrew: bool,
        /// The population at generation 0.
        first: u64,
        /// The largest population over the first and the second half of the run.
        most: (u64, u64),
        /// The population at the limit.
        last: u64,
        /// apgsearch's code for a B3/S23 pattern whose population grows linearly (a switch
        /// engine: `yl…`), from the populations of the run.
        growth: Option<String>,
    },
}

/// What a periodic pattern does in one period.
#[derive(Clone, Debug, PartialEq)]
pub struct Cycle {
    /// Generations of one period.
    pub period: u64,
    /// The least generations after which it is the same shape, turned or reflected or not.
    pub modulus: u64,
    /// How far it moves in one period, (right, down).
    pub displacement: (i64, i64),
    /// Cells that change state a generation, on average over the period.
    pub heat: f64,
    /// The heat over the mean population.
    pub temperature: f64,
    /// Rotor over rotor and stator; `None` for spaceships.
    pub volatility: Option<f64>,
    /// The smallest and largest population in the period, and the mean.
    pub populations: (u64, u64, f64),
    /// The apgcode; `None` under rules of more than two states.
    pub apgcode: Option<String>,
}

impl Cycle {
    /// Still life, oscillator or spaceship.
    pub fn kind(&self) -> &'static str {
        match (self.period, self.displacement) {
            (1, (0, 0)) => "still life",
            (_, (0, 0)) => "oscillator",
            _ => "spaceship",
        }
    }

    /// The speed as Life people write it: `c/4 diagonal`, `c/2 orthogonal`, `(2,1)c/6`;
    /// `None` for what does not move.
    pub fn speed(&self) -> Option<String> {
        let (dx, dy) = (
            self.displacement.0.unsigned_abs(),
            self.displacement.1.unsigned_abs(),
        );
        if dx == 0 && dy == 0 {
            return None;
        }
        let (big, small) = (dx.max(dy), dx.min(dy));
        let common = gcd(gcd(big, small), self.period);
        let (big, small, period) = (big / common, small / common, self.period / common);
        let fraction = |n: u64| match (n, period) {
            (1, 1) => "c".to_string(),
            (n, 1) => format!("{n}c"),
            (1, p) => format!("c/{p}"),
            (n, p) => format!("{n}c/{p}"),
        };
        Some(if small == 0 {
            format!("{} orthogonal", fraction(big))
        } else if small == big {
            format!("{} diagonal", fraction(big))
        } else if period == 1 {
            format!("({big},{small})c")
        } else {
            format!("({big},{small})c/{period}")
        })
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// One generation's cells: the bounding box and its states row by row.
#[derive(Clone)]
struct Phase {
    x: i64,
    y: i64,
    width: usize,
    height: usize,
    states: Vec<u8>,
}

impl Phase {
    /// The plane's cells now.
    fn read(plane: &dyn Plane) -> Result<Read> {
        let Some(rect) = plane.bounding_box() else {
            return Ok(Read::Empty);
        };
        let (Some((x, y)), Some((width, height))) = (rect.corner(), rect.size()) else {
            return Ok(Read::TooLarge);
        };
        if width.saturating_mul(height) > MOST_CELLS {
            return Ok(Read::TooLarge);
        }
        let (width, height) = (width as usize, height as usize);
        let states = plane.cells(&rect.x, &rect.y, width, height);
        Ok(Read::Phase(Phase {
            x,
            y,
            width,
            height,
            states,
        }))
    }

    /// The part of row `y` within columns `left..right`, and the column it starts at (empty
    /// where the box does not reach).
    fn within(&self, y: i64, left: i64, right: i64) -> (i64, &[u8]) {
        let (from, to) = (left.max(self.x), right.min(self.x + self.width as i64));
        if y < self.y || y >= self.y + self.height as i64 || from >= to {
            return (left, &[]);
        }
        let start = (y - self.y) as usize * self.width;
        let (from_at, to_at) = ((from - self.x) as usize, (to - self.x) as usize);
        (from, &self.states[start + from_at..start + to_at])
    }

    /// The states over the larger box `(x, y, width, height)`, row by row.
    fn spread(&self, (x, y, width, height): (i64, i64, u64, u64)) -> Vec<u8> {
        let width = width as usize;
        let mut cells = vec![0u8; width * height as usize];
        for (row, at) in self.states.chunks_exact(self.width).zip(self.y - y..) {
            let start = at as usize * width + (self.x - x) as usize;
            cells[start..start + self.width].copy_from_slice(row);
        }
        cells
    }

    /// Cells not in state 0.
    fn population(&self) -> u64 {
        live(&self.states)
    }

    /// The cells in state 1, where they lie.
    fn live(&self) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        for (i, &s) in self.states.iter().enumerate() {
            if s == 1 {
                out.push((
                    self.x + (i % self.width) as i64,
                    self.y + (i / self.width) as i64,
                ));
            }
        }
        out
    }

    /// What identifies the shape wherever it lies: its size and 128 bits of hash of its
    /// states, eight cells at a time (a chance of 2^-128 that two shapes share it).
    fn key(&self) -> Key {
        let mut chunks = self.states.chunks_exact(8);
        let (mut a, mut b) = (0x243f_6a88_85a3_08d3u64, 0x1319_8a2e_0370_7344u64);
        let mut mix = |word: u64| {
            a = (a ^ word)
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .rotate_left(31);
            b = (b ^ word.rotate_left(17))
                .wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
                .rotate_left(27);
        };
        for chunk in &mut chunks {
            mix(u64::from_le_bytes(chunk.try_into().expect("eight bytes")));
        }
        let mut last = [0u8; 8];
        last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        mix(u64::from_le_bytes(last));
        (self.width, self.height, a ^ (a >> 29), b ^ (b >> 32))
    }
}

/// A shape's size and hash ([`Phase::key`]).
type Key = (usize, usize, u64, u64);

/// What a look at the plane found.
enum Read {
    Empty,
    Phase(Phase),
    /// A bounding box past [`MOST_CELLS`] or the machine's integers.
    TooLarge,
}

/// The largest bounding box (in cells) read a generation; a pattern that outgrows it ends the
/// search.
pub const MOST_CELLS: u64 = 1 << 24;

/// Runs `plane` a generation at a time, at most `limit` generations, until it repeats, and says
/// what it is; `stop` ends the search early (an error).
pub fn identify(plane: &mut dyn Plane, limit: u64, stop: &AtomicBool) -> Result<Identity> {
    let two_states = plane.rule().states() == 2;
    let one = BigUint::one();
    let step = |plane: &mut dyn Plane| -> Result<()> {
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Invalid("stopped before the pattern repeated".into()));
        }
        let (taken, _) = plane.step(&one, stop)?;
        if taken.is_zero() {
            return Err(Error::Invalid("stopped before the pattern repeated".into()));
        }
        Ok(())
    };
    // Each shape seen: the generation and where it lay.
    let mut seen: HashMap<Key, (u64, i64, i64)> = HashMap::new();
    let mut populations = Vec::new();
    // Each generation's bounding box: an oscillator's cycle lies in the union of its phases'.
    let mut boxes = Vec::new();
    let mut generation = 0u64;
    let (first, start, settled) = loop {
        let phase = match Phase::read(plane)? {
            Read::Phase(phase) => phase,
            Read::TooLarge if generation == 0 => {
                return Err(Error::Invalid(format!(
                    "the pattern's bounding box is larger than {MOST_CELLS} cells: too large to identify"
                )))
            }
            Read::TooLarge => return Ok(not_found(generation, true, &populations, plane)),
            Read::Empty => {
            if generation == 0 {
                return Err(Error::Invalid(
                    "the pattern is empty: nothing to identify".into(),
                ));
            }
            return Ok(Identity {
                settled_at: generation,
                verdict: Verdict::DiesOut { generation },
                bounding_box: None,
                population: 0,
            });
            }
        };
        populations.push(phase.population());
        boxes.push(box_of(&phase));
        match seen.entry(phase.key()) {
            Entry::Occupied(earlier) => {
                let (at, x, y) = *earlier.get();
                let moved = (phase.x - x, phase.y - y);
                break (phase, generation - at, (at, moved));
            }
            Entry::Vacant(slot) => {
                slot.insert((generation, phase.x, phase.y));
            }
        }
        if generation == limit {
            return Ok(not_found(generation, false, &populations, plane));
        }
        step(plane)?;
        generation += 1;
    };
    let (period, (settled_at, displacement)) = (start, settled);
    // The first phase is that of `settled_at`, one period on: where it was then.
    let (x, y, width, height) = box_of(&first);
    let bounding_box = Some((x - displacement.0, y - displacement.1, width, height));
    let population = first.population();
    // Once more round the cycle, from where it closed (the phases of `settled_at` on, moved
    // by the displacement): every phase and the one after the last, a phase at a time.
    let reach = union(&boxes[settled_at as usize..]);
    let mut gauge = Gauge::new(first, period, displacement, two_states, reach);
    for _ in 0..period {
        step(plane)?;
        match Phase::read(plane)? {
            Read::Phase(phase) => gauge.see(phase),
            _ => unreachable!("a periodic pattern never dies nor grows"),
        }
    }
    Ok(Identity {
        settled_at,
        bounding_box,
        population,
        verdict: Verdict::Periodic(gauge.cycle()),
    })
}

/// No repeat by generation `generation` (`outgrew`: its box grew too large to go on), after
/// `populations`.
fn not_found(generation: u64, outgrew: bool, populations: &[u64], plane: &dyn Plane) -> Identity {
    let half = populations.len() / 2;
    let most = |p: &[u64]| p.iter().copied().max().unwrap_or(0);
    let bounding_box = plane
        .bounding_box()
        .and_then(|r| Some((r.corner()?, r.size()?)))
        .map(|((x, y), (w, h))| (x, y, w, h));
    let population = plane.population().try_into().unwrap_or(u64::MAX);
    // apgsearch's linear-growth code, checked against its hauls for B3/S23 only.
    let growth = (plane.rule() == gol_core::Rule::LIFE)
        .then(|| {
            let populations: Vec<i32> = populations.iter().map(|&p| p as i32).collect();
            crate::objects::growth_code(&populations)
        })
        .flatten();
    Identity {
        settled_at: generation,
        verdict: Verdict::NotFound {
            limit: generation,
            outgrew,
            first: populations[0],
            most: (most(&populations[..half]), most(&populations[half..])),
            last: population,
            growth,
        },
        bounding_box,
        population,
    }
}

fn box_of(phase: &Phase) -> (i64, i64, u64, u64) {
    (phase.x, phase.y, phase.width as u64, phase.height as u64)
}

/// The box that holds all of `boxes`.
fn union(boxes: &[(i64, i64, u64, u64)]) -> (i64, i64, u64, u64) {
    let left = boxes.iter().map(|b| b.0).min().expect("a phase");
    let top = boxes.iter().map(|b| b.1).min().expect("a phase");
    let right = boxes
        .iter()
        .map(|b| b.0 + b.2 as i64)
        .max()
        .expect("a phase");
    let bottom = boxes
        .iter()
        .map(|b| b.1 + b.3 as i64)
        .max()
        .expect("a phase");
    (left, top, (right - left) as u64, (bottom - top) as u64)
}

/// What one period shows, gathered a phase at a time as the cycle is run once more: the first
/// phase, the one before, and the two that [`modulus`] looks at are all it holds, besides the
/// live cells of phases small enough for an apgcode.
struct Gauge {
    period: u64,
    displacement: (i64, i64),
    first: Phase,
    /// The phase seen last (`None`: the first).
    last: Option<Phase>,
    /// The index in the period of the next phase.
    next: u64,
    /// Cells that changed from one phase to the next.
    changes: u64,
    /// The phases a quarter and half a period on, where the period divides so.
    turned: Vec<(u64, Phase)>,
    tally: Tally,
}

/// What is counted over the phases of one period.
struct Tally {
    /// The least and largest population, and their sum.
    populations: (u64, u64, u64),
    /// Of an oscillator: where its phases lie, and over that box, whether each cell was ever
    /// alive and whether it ever differed from the first phase.
    rotor: Option<Rotor>,
    /// Of a two-state rule: each phase's live cells (those too large to write are left out, as
    /// [`apgcode::canonical`] leaves them).
    lives: Option<Vec<Vec<(i64, i64)>>>,
}

/// An oscillator's cells over the box that holds its phases.
struct Rotor {
    reach: (i64, i64, u64, u64),
    first: Vec<u8>,
    ever: Vec<bool>,
    moved: Vec<bool>,
}

impl Gauge {
    fn new(
        first: Phase,
        period: u64,
        displacement: (i64, i64),
        two_states: bool,
        reach: (i64, i64, u64, u64),
    ) -> Gauge {
        let rotor = (displacement == (0, 0)).then(|| {
            let cells = (reach.2 * reach.3) as usize;
            Rotor {
                reach,
                first: first.spread(reach),
                ever: vec![false; cells],
                moved: vec![false; cells],
            }
        });
        let mut tally = Tally {
            populations: (u64::MAX, 0, 0),
            rotor,
            lives: two_states.then(Vec::new),
        };
        tally.count(&first);
        Gauge {
            period,
            displacement,
            first,
            last: None,
            next: 1,
            changes: 0,
            turned: Vec::new(),
            tally,
        }
    }

    /// The next phase; after a whole period, the first moved by the displacement.
    fn see(&mut self, phase: Phase) {
        let (at, period) = (self.next, self.period);
        self.changes += changed(self.last.as_ref().unwrap_or(&self.first), &phase);
        if at < period {
            self.tally.count(&phase);
            if [4, 2]
                .iter()
                .any(|&part| period % part == 0 && at == period / part)
            {
                self.turned.push((at, phase.clone()));
            }
        }
        self.next += 1;
        self.last = Some(phase);
    }

    /// What the period showed.
    fn cycle(self) -> Cycle {
        let (period, displacement) = (self.period, self.displacement);
        let (least, most, sum) = self.tally.populations;
        let mean = sum as f64 / period as f64;
        let heat = self.changes as f64 / period as f64;
        let volatility = self.tally.rotor.map(|rotor| {
            let ever = rotor.ever.iter().filter(|&&e| e).count();
            let rotor = rotor
                .ever
                .iter()
                .zip(&rotor.moved)
                .filter(|(&e, &m)| e && m)
                .count();
            rotor as f64 / ever as f64
        });
        let kind = match (period, displacement) {
            (1, (0, 0)) => Kind::Still { population: least },
            (_, (0, 0)) => Kind::Oscillator { period },
            _ => Kind::Spaceship { period },
        };
        Cycle {
            period,
            modulus: modulus(&self.first, &self.turned, period),
            displacement,
            heat,
            temperature: if mean > 0.0 { heat / mean } else { 0.0 },
            volatility,
            populations: (least, most, mean),
            apgcode: self
                .tally
                .lives
                .map(|lives| apgcode::code(kind, lives.iter().map(Vec::as_slice))),
        }
    }
}

impl Tally {
    fn count(&mut self, phase: &Phase) {
        let population = phase.population();
        let (least, most, sum) = self.populations;
        self.populations = (
            least.min(population),
            most.max(population),
            sum + population,
        );
        if let Some(rotor) = &mut self.rotor {
            let cells = phase.spread(rotor.reach);
            for (i, (&now, &then)) in cells.iter().zip(&rotor.first).enumerate() {
                rotor.ever[i] |= now != 0;
                rotor.moved[i] |= now != then;
            }
        }
        if let Some(lives) = &mut self.lives {
            if apgcode::writable(phase.width as u64, phase.height as u64) {
                lives.push(phase.live());
            }
        }
    }
}

/// Cells whose state differs between `a` and `b`, where they lie: row by row over `a`'s box,
/// where `b` is read as it overlaps, and `b`'s live cells outside that box.
fn changed(a: &Phase, b: &Phase) -> u64 {
    let (left, right) = (a.x, a.x + a.width as i64);
    let mut n = b.population();
    for (y, row) in (a.y..).zip(a.states.chunks_exact(a.width)) {
        let (from, theirs) = b.within(y, left, right);
        let (before, rest) = row.split_at((from - left) as usize);
        let (mine, after) = rest.split_at(theirs.len());
        n += live(before) + live(after);
        n += differ(mine, theirs);
        n -= live(theirs);
    }
    n
}

/// Cells not in state 0, counted in wrapping byte-wide sums of at most 255 cells: the compiler
/// vectorises these even where it checks for overflow (the tests' build), where it leaves a
/// filtered count scalar.
fn live(cells: &[u8]) -> u64 {
    let sum = |chunk: &[u8]| {
        chunk
            .iter()
            .fold(0u8, |n, &s| n.wrapping_add(u8::from(s != 0)))
    };
    cells.chunks(255).map(|chunk| u64::from(sum(chunk))).sum()
}

/// Places where `a` and `b` (of one length) differ, counted as [`live`] counts.
fn differ(a: &[u8], b: &[u8]) -> u64 {
    let sum = |(x, y): (&[u8], &[u8])| {
        x.iter()
            .zip(y)
            .fold(0u8, |n, (p, q)| n.wrapping_add(u8::from(p != q)))
    };
    a.chunks(255)
        .zip(b.chunks(255))
        .map(|pair| u64::from(sum(pair)))
        .sum()
}

/// The least generations after which the first phase's shape comes back turned or reflected
/// (a quarter or a half of the period), else the period.
fn modulus(first: &Phase, turned: &[(u64, Phase)], period: u64) -> u64 {
    let shape = |phase: &Phase, orientation: u8| -> Vec<(i64, i64, u8)> {
        let mut cells: Vec<(i64, i64, u8)> = Vec::new();
        for (i, &s) in phase.states.iter().enumerate() {
            if s != 0 {
                let (x, y) = apgcode::orient(
                    ((i % phase.width) as i64, (i / phase.width) as i64),
                    orientation,
                );
                cells.push((x, y, s));
            }
        }
        let left = cells.iter().map(|c| c.0).min().unwrap_or(0);
        let top = cells.iter().map(|c| c.1).min().unwrap_or(0);
        let mut cells: Vec<_> = cells
            .into_iter()
            .map(|(x, y, s)| (y - top, x - left, s))
            .collect();
        cells.sort_unstable();
        cells
    };
    let first = shape(first, 0);
    turned
        .iter()
        .find(|(_, later)| (1..8).any(|o| shape(later, o) == first))
        .map_or(period, |&(at, _)| at)
}
