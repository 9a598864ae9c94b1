//! `gol verify`: every engine against the scalar reference, on random cases and known patterns.

use std::time::Instant;

use anyhow::{bail, Result};
use gol_core::cpu::{Bitsliced, Isa};
use gol_core::engine::{self, Engine};
use gol_core::seed::{density_soup, glibc_soup, SplitMix64};
use gol_core::{EngineOptions, Grid, Rule};

use crate::cli::VerifyArgs;
use crate::engines;

/// An engine under test: a label and a way to make a fresh one.
struct Candidate {
    label: String,
    make: Box<dyn Fn() -> Result<Box<dyn Engine>>>,
    /// Byte-per-cell engines, too slow for the largest known counts.
    slow: bool,
}

/// One random case: a soup, a rule and a number of generations.
struct Case {
    width: usize,
    height: usize,
    rule: Rule,
    gens: u64,
    density: f64,
    seed: u64,
}

impl std::fmt::Display for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}x{} torus, rule {}, {} generations, density-{} soup with seed {}",
            self.width, self.height, self.rule, self.gens, self.density, self.seed
        )
    }
}

/// Sides that trip up word, block and tile boundaries.
const AWKWARD_SIDES: &[usize] = &[
    1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 191, 192, 193,
    255, 256, 257, 319, 320, 321,
];

fn random_side(rng: &mut SplitMix64, max: usize) -> usize {
    if rng.next() % 2 == 0 {
        let small: Vec<usize> = AWKWARD_SIDES
            .iter()
            .copied()
            .filter(|&s| s <= max)
            .collect();
        small[(rng.next() % small.len() as u64) as usize]
    } else {
        1 + (rng.next() % max as u64) as usize
    }
}

fn random_rule(rng: &mut SplitMix64) -> Rule {
    if rng.next() % 4 == 0 {
        return Rule::LIFE;
    }
    let birth = (rng.next() & 0x1FF) as u32;
    let survive = (rng.next() & 0x1FF) as u32;
    Rule::from_masks(birth, survive).expect("masks of 9 bits are valid 2D rules")
}

fn random_case(rng: &mut SplitMix64, quick: bool) -> Case {
    let max_side = if quick { 130 } else { 321 };
    let gens = match rng.next() % 4 {
        0 => rng.next() % 4,
        1 | 2 => rng.next() % 40,
        _ => 40 + rng.next() % (if quick { 40 } else { 160 }),
    };
    Case {
        width: random_side(rng, max_side),
        height: random_side(rng, max_side),
        rule: random_rule(rng),
        gens,
        density: [0.1, 0.3, 0.5, 0.7][(rng.next() % 4) as usize],
        seed: rng.next(),
    }
}

/// Every engine available here, with `cpu-bitsliced` once per instruction set of this CPU.
fn candidates(only: &[String]) -> Result<Vec<Candidate>> {
    let mut list = Vec::new();
    for spec in engines::all() {
        if !only.is_empty() && !only.iter().any(|n| n == spec.name) {
            continue;
        }
        if spec.name == "cpu-bitsliced" {
            for isa in Isa::available() {
                list.push(Candidate {
                    label: format!("cpu-bitsliced[{}]", isa.name()),
                    make: Box::new(move || {
                        Ok(Box::new(Bitsliced::with_isa(isa)?) as Box<dyn Engine>)
                    }),
                    slow: false,
                });
            }
            continue;
        }
        match (spec.create)(&EngineOptions::default()) {
            Ok(_) => list.push(Candidate {
                label: spec.name.to_string(),
                make: Box::new(move || Ok((spec.create)(&EngineOptions::default())?)),
                slow: matches!(spec.name, "cpu-scalar" | "cpu-table"),
            }),
            Err(e) => eprintln!("{}: skipped: {e}", spec.name),
        }
    }
    for name in only {
        engine::find(&engines::all(), name)?;
    }
    Ok(list)
}

fn evolve(candidate: &Candidate, grid: &Grid, rule: Rule, gens: u64) -> Result<Grid> {
    let mut engine = (candidate.make)()?;
    engine.load(grid, rule)?;
    // Two calls, the first of an odd length where it can be: state carried between calls
    // (buffer parity, captured graphs) must not change the result.
    let first = (gens / 3) | 1;
    let first = first.min(gens);
    engine.step(first)?;
    engine.step(gens - first)?;
    let grid = engine.snapshot()?;
    let population = engine.population()?;
    if population != grid.population() {
        bail!(
            "{}: population() says {population} but the snapshot holds {}",
            candidate.label,
            grid.population()
        );
    }
    Ok(grid)
}

fn compare(label: &str, what: &str, expected: &Grid, got: &Grid) -> Result<()> {
    if let Some((x, y)) = expected.first_difference(got) {
        let state = |alive: bool| if alive { "alive" } else { "dead" };
        bail!(
            "MISMATCH: {label} on {what}: first difference at cell ({x}, {y}): cpu-scalar says {}, {label} says {}",
            state(expected.get(x, y)),
            state(got.get(x, y))
        );
    }
    Ok(())
}

/// A pattern and where it must be after some generations.
struct KnownPattern {
    name: &'static str,
    start: Grid,
    gens: u64,
    end: Grid,
}

fn grid_with(width: usize, height: usize, cells: &[(usize, usize)]) -> Grid {
    let mut grid = Grid::new(width, height).expect("small grid");
    for &(x, y) in cells {
        grid.set(x % width, y % height, true);
    }
    grid
}

fn known_patterns() -> Vec<KnownPattern> {
    let glider = [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)];
    let shifted = |dx: usize, dy: usize, w: usize, h: usize| {
        let cells: Vec<(usize, usize)> = glider.iter().map(|&(x, y)| (x + dx, y + dy)).collect();
        grid_with(w, h, &cells)
    };
    let blinker = grid_with(5, 5, &[(1, 2), (2, 2), (3, 2)]);
    vec![
        KnownPattern {
            name: "glider moving (1, 1) every 4 generations on a 10x7 torus",
            start: shifted(0, 0, 10, 7),
            gens: 4 * 9,
            end: shifted(9, 9, 10, 7),
        },
        KnownPattern {
            name: "glider around a 67x13 torus (lcm 871 steps, 3484 generations)",
            start: shifted(0, 0, 67, 13),
            gens: 4 * 871,
            end: shifted(0, 0, 67, 13),
        },
        KnownPattern {
            name: "blinker after 3 generations",
            start: blinker.clone(),
            gens: 3,
            end: grid_with(5, 5, &[(2, 1), (2, 2), (2, 3)]),
        },
    ]
}

/// Alive-cell counts known from the seeds and from Golly.
struct KnownCount {
    side: usize,
    seed: u32,
    gens: u64,
    alive: u64,
    /// Only engines this fast run it (the scalar ones would take minutes).
    fast_only: bool,
}

const KNOWN_COUNTS: &[KnownCount] = &[
    KnownCount {
        side: 1024,
        seed: 0,
        gens: 1024,
        alive: 47026,
        fast_only: false,
    },
    KnownCount {
        side: 4096,
        seed: 1,
        gens: 256,
        alive: 1_149_593,
        fast_only: true,
    },
];

pub fn verify(args: &VerifyArgs) -> Result<()> {
    let master = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let cases = if args.quick {
        args.cases.min(40)
    } else {
        args.cases
    };
    println!(
        "gol verify: seed {master} (replay with --seed {master}), {cases} random cases per engine"
    );
    let candidates = candidates(&args.engines)?;
    let oracle = gol_core::cpu::ENGINES
        .iter()
        .find(|s| s.name == "cpu-scalar")
        .expect("cpu-scalar is registered");
    let start = Instant::now();

    // Known counts, on every engine (and on the oracle itself).
    for known in KNOWN_COUNTS {
        if known.fast_only && args.quick {
            continue;
        }
        let grid = glibc_soup(known.side, known.side, known.seed)?;
        let what = format!(
            "{0}x{0}, {1} generations, glibc seed {2}",
            known.side, known.gens, known.seed
        );
        for c in candidates.iter().filter(|c| !(known.fast_only && c.slow)) {
            let end = evolve(c, &grid, Rule::LIFE, known.gens)?;
            if end.population() != known.alive {
                bail!(
                    "MISMATCH: {} on {what}: {} alive cells, expected {}",
                    c.label,
                    end.population(),
                    known.alive
                );
            }
        }
        println!("known count {what}: {} alive: ok", known.alive);
    }

    // Known patterns.
    for pattern in known_patterns() {
        for c in &candidates {
            let end = evolve(c, &pattern.start, Rule::LIFE, pattern.gens)?;
            compare(&c.label, pattern.name, &pattern.end, &end)?;
        }
        println!("known pattern: {}: ok", pattern.name);
    }

    // Random cases, each run once on the oracle and compared on every engine.
    let mut rng = SplitMix64::new(master);
    let mut checked = 0u64;
    for index in 0..cases {
        let case = random_case(&mut rng, args.quick);
        let grid = density_soup(case.width, case.height, case.density, case.seed)?;
        let expected = engine::evolve(oracle, &grid, case.rule, case.gens)?;
        for c in &candidates {
            if c.label == "cpu-scalar" {
                continue;
            }
            let got = evolve(c, &grid, case.rule, case.gens)?;
            compare(
                &c.label,
                &format!("random case {index} ({case})"),
                &expected,
                &got,
            )?;
            checked += 1;
        }
    }
    let labels: Vec<&str> = candidates
        .iter()
        .map(|c| c.label.as_str())
        .filter(|&l| l != "cpu-scalar")
        .collect();
    println!(
        "random cases: {checked} engine runs identical to cpu-scalar ({cases} cases x {})",
        labels.join(", ")
    );
    println!(
        "gol verify: all engines agree ({:.1} s)",
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
