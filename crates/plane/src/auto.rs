//! `auto` on the plane: tiles and HashLife raced on the pattern itself.
//!
//! Which of the two is faster depends on the pattern and on how far it runs: tiles for chaos
//! (soups, methuselahs), HashLife for the regular and the engineered, and for runs so long that
//! HashLife's memory of what it computed pays. No cheap look at a pattern tells which, so the
//! pattern runs on one for a time slice, then on the other for half as long (tiles, whose rate
//! shows at once, for no longer than the first slice), from where the first stopped; the one
//! that advanced more generations a second (the move from one to the other counted against the
//! newcomer) runs three slices, and the race is run again with slices four times as long, the
//! winner going first with the rate of its last slice. Tiles run their three slices one at a
//! time, so that their rate is the pattern's as it is now (a growing pattern slows them down),
//! and a rate that doubles or halves from one slice to the next ends them: the pattern changed
//! its nature (a soup that settled into gliders and ash), and the race is run again at once,
//! with slices no longer. The loser's half slice is at most a seventh of a full round, and a
//! pattern gets the engine that suits it now. A move builds one engine's cells straight from
//! the other's; HashLife left for tiles is kept aside with its store and what it memoised, and
//! the pattern comes back into it.
//!
//! A run that the engine on it would finish within about two more slices, where that engine was
//! not the slower when last measured, is not raced further. A macrocell file runs on HashLife,
//! not raced: it was written for it, and moving a pattern of that kind onto tiles and back costs
//! more than a slice. Anything else starts on tiles. Tiles
//! take part only where they can: two-state rules, populations up to [`TILES_MOST`] and cells
//! within their reach. In a slice HashLife takes steps that double, so that its progress
//! shows, each reusing what the last memoised, from 1 generation on a fresh HashLife and from
//! about its last whole step on one that has run, and begins none that would not end within the
//! slice at the last one's time (a step cut short shows no generations). Its rate is that of
//! its last whole step where that is higher than the slice's mean.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use gol_core::{EngineId, Result, Rule};
use num_bigint::{BigInt, BigUint};
use num_traits::{One, ToPrimitive, Zero};

use crate::{Bits, Hashed, Options, Plane, Rect, Start, Stepped, Tiles, Written};

/// The largest population `auto` moves onto tiles: beyond it, making them would cost more
/// than a slice.
pub const TILES_MOST: u64 = 8_000_000;

/// The first time slice.
const FIRST_SLICE: Duration = Duration::from_millis(250);

/// The engine a pattern is on under `auto`.
enum On {
    Tiles(Tiles),
    Hashed(Hashed<Bits>),
    /// What only HashLife runs here (a rule of more states, a macrocell file): never moved.
    Fixed(Box<dyn Plane>),
}

impl On {
    fn get(&self) -> &dyn Plane {
        match self {
            On::Tiles(tiles) => tiles,
            On::Hashed(hashed) => hashed,
            On::Fixed(plane) => plane.as_ref(),
        }
    }

    fn get_mut(&mut self) -> &mut dyn Plane {
        match self {
            On::Tiles(tiles) => tiles,
            On::Hashed(hashed) => hashed,
            On::Fixed(plane) => plane.as_mut(),
        }
    }
}

/// The plane under `auto`.
pub struct Auto {
    plane: On,
    options: Options,
    /// Whether tiles may run this pattern.
    tiles_able: bool,
    slice: Duration,
    /// Generations a second each engine made in its last slice (tiles, hashlife).
    rates: [Option<f64>; 2],
    /// HashLife's last whole step in a slice and its time: the next slice goes on from it.
    pace: Option<(BigUint, Duration)>,
    /// HashLife, kept aside with its store while the pattern is on tiles.
    parked: Option<Hashed<Bits>>,
    switches: u64,
}

impl Auto {
    /// `start` under `rule`: on HashLife for a macrocell file (written for it), a Generations
    /// rule or a rule table, else on tiles where they run it.
    pub fn new(start: Start<'_>, rule: Rule, options: &Options) -> Result<Auto> {
        let engineered = matches!(start, Start::File(file) if file.macrocell_nodes().is_some());
        let tiles_able = !crate::in_bytes(&rule) && !engineered;
        let plane = match tiles_able {
            false => On::Fixed(crate::new(EngineId::Hashlife, start, rule, options)?),
            true => match crate::tiles_of(copy(&start), rule, options) {
                Ok(tiles) => On::Tiles(tiles),
                Err(_) => On::Hashed(crate::hashed_of(start, Bits::new(&rule), rule, options)?),
            },
        };
        Ok(Auto {
            plane,
            options: *options,
            tiles_able,
            slice: FIRST_SLICE,
            rates: [None, None],
            pace: None,
            parked: None,
            switches: 0,
        })
    }

    /// Moves the pattern onto `engine`, straight from one engine's cells into the other's;
    /// false where it cannot go. HashLife left for tiles is kept aside with its store where
    /// that holds at most a quarter of the memory cap (the tiles get the rest), and the
    /// pattern comes back into it: what it memoised stays (the ash of a soup that is
    /// settling is the same nodes as before), its memory is in pages already touched, and its
    /// steps go on from the size they had reached.
    fn switch(&mut self, engine: EngineId) -> Result<bool> {
        let rule = self.plane.get().rule();
        let options = &self.options;
        let kept = |hashed: &Hashed<Bits>| hashed.memory_bytes() <= options.memory / 4;
        let moved = match (&self.plane, engine) {
            (On::Hashed(hashed), EngineId::Tiles) => {
                let memory = match kept(hashed) {
                    true => options.memory - hashed.memory_bytes(),
                    false => options.memory,
                };
                match hashed.engine.tree().population() > BigUint::from(TILES_MOST) {
                    true => Err(gol_core::Error::Invalid("too many cells for tiles".into())),
                    false => Tiles::new(hashed.engine.tree(), rule, options.threads, memory)
                        .map(On::Tiles),
                }
            }
            (On::Tiles(tiles), EngineId::Hashlife) => {
                let fresh = || {
                    tiles
                        .tree()
                        .and_then(|tree| Hashed::new(tree, rule, options))
                };
                match self.parked.take() {
                    Some(parked) => {
                        parked
                            .replanted(|store, _| tiles.tree_in(store))
                            .or_else(|_| {
                                self.pace = None;
                                fresh()
                            })
                    }
                    None => {
                        self.pace = None;
                        fresh()
                    }
                }
                .map(On::Hashed)
            }
            _ => return Ok(false),
        };
        match moved {
            Ok(plane) => {
                match std::mem::replace(&mut self.plane, plane) {
                    On::Hashed(left) if kept(&left) => {
                        self.parked = Some(left);
                    }
                    _ => {}
                }
                self.switches += 1;
                Ok(true)
            }
            Err(_) if engine == EngineId::Tiles => {
                self.tiles_able = false;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Runs the engine now for up to `slice` (or until `stop`): the generations taken, whether
    /// it was `stop` that ended it, and on HashLife the rate of its last whole step.
    fn run_for(
        &mut self,
        left: &BigUint,
        slice: Duration,
        stop: &AtomicBool,
    ) -> Result<(BigUint, bool, Option<f64>)> {
        let halt = AtomicBool::new(false);
        let done = AtomicBool::new(false);
        let start = Instant::now();
        let (plane, pace) = (self.plane.get_mut(), &mut self.pace);
        let mut marginal = None;
        let (taken, _) = std::thread::scope(|scope| {
            scope.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    if stop.load(Ordering::Relaxed) || start.elapsed() >= slice {
                        halt.store(true, Ordering::Relaxed);
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            });
            let result = match plane.engine() {
                // Steps that double, each reusing what the last memoised, from the last whole
                // step of a slice before on this engine (from one on a fresh one), halved
                // until four times its time then fits in this slice (a growing pattern makes
                // the same step slower). The first step always begins.
                EngineId::Hashlife => {
                    let mut taken = BigUint::zero();
                    let (mut step, mut time) =
                        pace.clone().unwrap_or((BigUint::one(), Duration::ZERO));
                    while 4 * time > slice && step > BigUint::one() {
                        (step, time) = (step >> 1, time / 2);
                    }
                    let mut last = Duration::ZERO;
                    let mut how = Stepped::Done;
                    while &taken < left && how == Stepped::Done {
                        // A step takes about the last one's time where the pattern is regular,
                        // up to twice where it is not: one that would not end within the slice
                        // even at the last one's time is not begun (halted at the slice's end,
                        // a step shows no generations; what it memoised stays).
                        if start.elapsed() + last > slice {
                            break;
                        }
                        let begun = Instant::now();
                        let n = (left - &taken).min(step.clone());
                        match plane.step(&n, &halt) {
                            Ok((more, ended)) => {
                                let time = begun.elapsed();
                                if ended == Stepped::Done && more == step {
                                    marginal = Some(rate(&step, time.as_secs_f64()));
                                    *pace = Some((step.clone(), time));
                                } else if ended == Stepped::Stopped {
                                    // Cut short: the next slice starts lower.
                                    *pace = Some((step.clone() >> 1, time));
                                }
                                taken += more;
                                how = ended;
                            }
                            Err(e) => {
                                done.store(true, Ordering::Relaxed);
                                return Err(e);
                            }
                        }
                        last = begun.elapsed();
                        step <<= 1;
                    }
                    Ok((taken, how))
                }
                // Tiles take counts below 2^60, more than a slice ever runs.
                _ => plane.step(&left.clone().min(BigUint::one() << 59), &halt),
            };
            done.store(true, Ordering::Relaxed);
            result
        })?;
        Ok((taken, stop.load(Ordering::Relaxed), marginal))
    }

    /// Runs the engine now for `slice` of what `run` has left, noting its rate from `start`:
    /// how the step ended, once it has.
    fn slice(
        &mut self,
        run: &mut Run,
        slice: Duration,
        start: Instant,
        stop: &AtomicBool,
    ) -> Result<Option<Stepped>> {
        let here = self.plane.get().engine();
        let (more, stopped, marginal) = self.run_for(&run.left, slice, stop)?;
        // HashLife's rate is that of its last whole step where that is higher: its doubling
        // steps reuse more as they go (a settled pattern's cost a step stops growing), so the
        // slice's mean, which counts the move and the first cold steps, says too little of
        // what the next steps will do.
        let mean = rate(&more, start.elapsed().as_secs_f64());
        self.rates[Self::slot(here)] = Some(marginal.map_or(mean, |m| m.max(mean)));
        run.left -= &more;
        run.taken += more;
        Ok(match (stopped, run.left.is_zero()) {
            (true, _) => Some(Stepped::Stopped),
            (false, true) => Some(Stepped::Done),
            (false, false) => None,
        })
    }

    fn slot(engine: EngineId) -> usize {
        match engine {
            EngineId::Tiles => 0,
            _ => 1,
        }
    }
}

/// A step under way: the generations taken and those left.
struct Run {
    taken: BigUint,
    left: BigUint,
}

/// Generations a second, roughly.
fn rate(taken: &BigUint, seconds: f64) -> f64 {
    taken.to_f64().unwrap_or(f64::MAX) / seconds.max(1e-6)
}

/// A second look at a start (a start is a borrow: both engines may read it).
fn copy<'a>(start: &Start<'a>) -> Start<'a> {
    match *start {
        Start::File(file) => Start::File(file),
        Start::Grid { grid, x, y } => Start::Grid { grid, x, y },
    }
}

impl Plane for Auto {
    fn engine(&self) -> EngineId {
        self.plane.get().engine()
    }

    fn rule(&self) -> Rule {
        self.plane.get().rule()
    }

    fn step(&mut self, generations: &BigUint, stop: &AtomicBool) -> Result<(BigUint, Stepped)> {
        crate::hashlife::check_generations(generations)?;
        let mut run = Run {
            taken: BigUint::zero(),
            left: generations.clone(),
        };
        loop {
            if !self.tiles_able {
                let (more, how) = self.plane.get_mut().step(&run.left, stop)?;
                return Ok((run.taken + more, how));
            }
            // The engine now runs its slice, where it has not run one yet (after the first
            // race, the engine now is the one that won the last and has just run).
            let here = self.plane.get().engine();
            if self.rates[Self::slot(here)].is_none() {
                if let Some(how) = self.slice(&mut run, self.slice, Instant::now(), stop)? {
                    return Ok((run.taken, how));
                }
            }
            // Where the engine now would finish within about two more slices, and is not the
            // slower of the two when last measured, the race would cost more than it could
            // save.
            let now = self.rates[Self::slot(here)].unwrap_or(0.0);
            let other = self.rates[1 - Self::slot(here)].unwrap_or(0.0);
            let left = run.left.to_f64().unwrap_or(f64::MAX);
            if now >= other && left <= 2.0 * now * self.slice.as_secs_f64() {
                let (more, how) = self.plane.get_mut().step(&run.left, stop)?;
                return Ok((run.taken + more, how));
            }
            // The other runs half as long, from here, the move counted against it.
            let other = match here {
                EngineId::Tiles => EngineId::Hashlife,
                _ => EngineId::Tiles,
            };
            let start = Instant::now();
            if !self.switch(other)? {
                continue;
            }
            // Tiles show their rate at once (one generation costs about what the next does):
            // their half slice is never longer than the first; HashLife's doubling steps need
            // the whole half to show what they reuse.
            let probe = match other {
                EngineId::Tiles => (self.slice / 2).min(FIRST_SLICE),
                _ => self.slice / 2,
            };
            if let Some(how) = self.slice(&mut run, probe, start, stop)? {
                return Ok((run.taken, how));
            }
            // The faster runs on, three slices as long; then the race again, each slice four
            // times as long.
            let [tiles, hashlife] = self.rates.map(|r| r.unwrap_or(0.0));
            let best = if tiles > hashlife {
                EngineId::Tiles
            } else {
                EngineId::Hashlife
            };
            if best != self.plane.get().engine() {
                self.switch(best)?;
            }
            // Three slices: on tiles one at a time, so that their rate is that of the last, as
            // the pattern is now (a growing pattern slows tiles down); on HashLife at once (its
            // steps double through it).
            let (slices, long) = match best {
                EngineId::Tiles => (3, 1),
                _ => (1, 3),
            };
            let mut changed = false;
            for _ in 0..slices {
                let before = self.rates[Self::slot(best)].unwrap_or(0.0);
                if let Some(how) = self.slice(&mut run, long * self.slice, Instant::now(), stop)? {
                    return Ok((run.taken, how));
                }
                // A rate that doubled or halved in a slice: the pattern changed its nature (a
                // soup that settled), and the race is run again at once.
                let now = self.rates[Self::slot(best)].unwrap_or(0.0);
                if now > 2.0 * before || 2.0 * now < before {
                    changed = true;
                    break;
                }
            }
            // Slices grow where the pattern kept its nature through the round; where it changed,
            // the race is run again as short (a soup still settling gives HashLife's half slice
            // little to reuse: a longer one would only lose more).
            if !changed {
                self.slice *= 4;
            }
        }
    }

    fn population(&self) -> BigUint {
        self.plane.get().population()
    }

    fn live(&self) -> BigUint {
        self.plane.get().live()
    }

    fn bounding_box(&self) -> Option<Rect> {
        self.plane.get().bounding_box()
    }

    fn cells(&self, x: &BigInt, y: &BigInt, width: usize, height: usize) -> Vec<u8> {
        self.plane.get().cells(x, y, width, height)
    }

    fn block_populations(
        &self,
        x: &BigInt,
        y: &BigInt,
        columns: usize,
        rows: usize,
        level: u32,
    ) -> Vec<u64> {
        self.plane
            .get()
            .block_populations(x, y, columns, rows, level)
    }

    fn write(
        &self,
        format: Written,
        generation: &BigUint,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        self.plane.get().write(format, generation, out)
    }

    fn details(&self) -> String {
        let speed = |r: Option<f64>| r.map_or("not run".to_string(), |r| format!("{r:.0} gens/s"));
        format!(
            "auto, on {} now ({} moves between engines; last slices: tiles {}, hashlife {}): {}",
            self.plane.get().engine(),
            self.switches,
            speed(self.rates[0]),
            speed(self.rates[1]),
            self.plane.get().details()
        )
    }

    fn memory_bytes(&self) -> u64 {
        self.plane.get().memory_bytes() + self.parked.as_ref().map_or(0, |p| p.memory_bytes())
    }
}
