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

    /// The state of the cell at (x, y) of the plane.
    fn at(&self, x: i64, y: i64) -> u8 {
        let (cx, cy) = (x - self.x, y - self.y);
        if cx < 0 || cy < 0 || cx >= self.width as i64 || cy >= self.height as i64 {
            return 0;
        }
        self.states[cy as usize * self.width + cx as usize]
    }

    /// Cells not in state 0.
    fn population(&self) -> u64 {
        self.states.iter().filter(|&&s| s != 0).count() as u64
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
    // Once more round the cycle, from where it closed (the phases of `settled_at` on, moved
    // by the displacement): every phase and the one after the last.
    let mut phases = vec![first];
    for _ in 0..period {
        step(plane)?;
        match Phase::read(plane)? {
            Read::Phase(phase) => phases.push(phase),
            _ => unreachable!("a periodic pattern never dies nor grows"),
        }
    }
    let cycle = measure(&phases, period, displacement, two_states);
    // The first phase is that of `settled_at`, one period on: where it was then.
    let phase = &phases[0];
    let (x, y, width, height) = box_of(phase);
    Ok(Identity {
        settled_at,
        bounding_box: Some((x - displacement.0, y - displacement.1, width, height)),
        population: phase.population(),
        verdict: Verdict::Periodic(cycle),
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
    Identity {
        settled_at: generation,
        verdict: Verdict::NotFound {
            limit: generation,
            outgrew,
            first: populations[0],
            most: (most(&populations[..half]), most(&populations[half..])),
            last: population,
        },
        bounding_box,
        population,
    }
}

fn box_of(phase: &Phase) -> (i64, i64, u64, u64) {
    (phase.x, phase.y, phase.width as u64, phase.height as u64)
}

/// What one period of `phases` (period + 1 of them, the last the first moved) shows.
fn measure(phases: &[Phase], period: u64, displacement: (i64, i64), two_states: bool) -> Cycle {
    let pops: Vec<u64> = phases[..period as usize]
        .iter()
        .map(Phase::population)
        .collect();
    let mean = pops.iter().sum::<u64>() as f64 / period as f64;
    let mut changes = 0u64;
    for pair in phases.windows(2) {
        changes += changed(&pair[0], &pair[1]);
    }
    let heat = changes as f64 / period as f64;
    let volatility = (displacement == (0, 0)).then(|| {
        let cycle = &phases[..period as usize];
        let (left, top) = (
            cycle.iter().map(|p| p.x).min().unwrap(),
            cycle.iter().map(|p| p.y).min().unwrap(),
        );
        let right = cycle.iter().map(|p| p.x + p.width as i64).max().unwrap();
        let bottom = cycle.iter().map(|p| p.y + p.height as i64).max().unwrap();
        let (mut ever, mut rotor) = (0u64, 0u64);
        for y in top..bottom {
            for x in left..right {
                let first = cycle[0].at(x, y);
                let alive = cycle.iter().any(|p| p.at(x, y) != 0);
                ever += alive as u64;
                rotor += (alive && cycle.iter().any(|p| p.at(x, y) != first)) as u64;
            }
        }
        rotor as f64 / ever as f64
    });
    let kind = match (period, displacement) {
        (1, (0, 0)) => Kind::Still {
            population: pops[0],
        },
        (_, (0, 0)) => Kind::Oscillator { period },
        _ => Kind::Spaceship { period },
    };
    let live: Vec<Vec<(i64, i64)>> = match two_states {
        true => phases[..period as usize].iter().map(Phase::live).collect(),
        false => Vec::new(),
    };
    let modulus = modulus(phases, period);
    Cycle {
        period,
        modulus,
        displacement,
        heat,
        temperature: if mean > 0.0 { heat / mean } else { 0.0 },
        volatility,
        populations: (
            *pops.iter().min().unwrap(),
            *pops.iter().max().unwrap(),
            mean,
        ),
        apgcode: two_states.then(|| apgcode::code(kind, live.iter().map(Vec::as_slice))),
    }
}

/// Cells whose state differs between `a` and `b`, where they lie.
fn changed(a: &Phase, b: &Phase) -> u64 {
    let (left, top) = (a.x.min(b.x), a.y.min(b.y));
    let right = (a.x + a.width as i64).max(b.x + b.width as i64);
    let bottom = (a.y + a.height as i64).max(b.y + b.height as i64);
    let mut n = 0;
    for y in top..bottom {
        for x in left..right {
            n += (a.at(x, y) != b.at(x, y)) as u64;
        }
    }
    n
}

/// The least generations after which the first phase's shape comes back turned or reflected
/// (a quarter or a half of the period), else the period.
fn modulus(phases: &[Phase], period: u64) -> u64 {
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
    let first = shape(&phases[0], 0);
    for part in [4, 2] {
        if period % part != 0 {
            continue;
        }
        let q = period / part;
        let later = &phases[q as usize];
        if (1..8).any(|o| shape(later, o) == first) {
            return q;
        }
    }
    period
}
