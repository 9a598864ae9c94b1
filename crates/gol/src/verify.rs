//! Every engine against the scalar reference, on random cases and known patterns: what
//! `gol verify` and the Python package's `gol.verify()` run.

use std::time::Instant;

use gol_core::cpu::{Bitsliced, Bitsliced3d, Isa};
use gol_core::engine::{self, Engine};
use gol_core::rule::{Family, Topology, GENERATIONS_ENGINES};
use gol_core::seed::{density_soup, glibc_soup, SplitMix64};
use gol_core::{Cube, EngineOptions, Grid, Rule, RuleTable};

use crate::error::{Error, Result};
use crate::{registry, Dimension, EngineId};

/// What verifying a dimension needs beyond [`Dimension`].
trait Checked: Dimension {
    /// `cpu-bitsliced` compiled for `isa`.
    fn bitsliced(isa: Isa) -> Result<Box<dyn Engine<Self>>>;
    /// Where `got` first differs from `expected`, described, if it does.
    fn difference(expected: &Self, got: &Self) -> Option<String>;
    /// The soup of a random case.
    fn soup(case: &Case) -> Result<Self>;
}

impl Checked for Grid {
    fn bitsliced(isa: Isa) -> Result<Box<dyn Engine<Grid>>> {
        Ok(Box::new(Bitsliced::with_isa(isa)?))
    }

    fn difference(expected: &Grid, got: &Grid) -> Option<String> {
        let (x, y) = expected.first_difference(got)?;
        Some(format!(
            "cell ({x}, {y}): cpu-scalar says {}",
            state(expected.get(x, y))
        ))
    }

    fn soup(case: &Case) -> Result<Grid> {
        Ok(density_soup(
            case.width,
            case.height,
            case.density,
            case.seed,
        )?)
    }
}

impl Checked for Cube {
    fn bitsliced(isa: Isa) -> Result<Box<dyn Engine<Cube>>> {
        Ok(Box::new(Bitsliced3d::with_isa(isa)?))
    }

    fn difference(expected: &Cube, got: &Cube) -> Option<String> {
        let (x, y, z) = expected.first_difference(got)?;
        Some(format!(
            "cell ({x}, {y}, {z}): cpu-scalar says {}",
            state(expected.get(x, y, z))
        ))
    }

    fn soup(case: &Case) -> Result<Cube> {
        Ok(Cube::density_soup(case.width, case.density, case.seed)?)
    }
}

fn state(alive: bool) -> &'static str {
    if alive {
        "alive"
    } else {
        "dead"
    }
}

/// An engine under test: a label and a way to make a fresh one.
struct Candidate<W> {
    /// The engine (of a split run: the engine of each slab).
    id: EngineId,
    label: String,
    make: Box<dyn Fn() -> Result<Box<dyn Engine<W>>>>,
    /// Byte-per-cell engines, too slow for the largest known counts.
    slow: bool,
    /// A split run, which takes only tori.
    split: bool,
}

/// One random case: a soup, a rule and a number of generations.
struct Case {
    width: usize,
    height: usize,
    /// The cube's side in 3D.
    depth: Option<usize>,
    rule: Rule,
    gens: u64,
    density: f64,
    seed: u64,
}

impl std::fmt::Display for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.depth {
            Some(d) => write!(f, "{}x{}x{d} torus", self.width, self.height)?,
            None => write!(
                f,
                "{}x{} {}",
                self.width,
                self.height,
                self.rule.topology().name()
            )?,
        }
        write!(
            f,
            ", rule {}, {} generations, density-{} soup with seed {}",
            self.rule, self.gens, self.density, self.seed
        )
    }
}

/// Sides that trip up word, block and tile boundaries.
const AWKWARD_SIDES: &[usize] = &[
    1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 191, 192, 193,
    255, 256, 257, 319, 320, 321,
];

fn random_side(rng: &mut SplitMix64, max: usize) -> usize {
    if rng.next().is_multiple_of(2) {
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

/// A random rule of the dimension (its default one time in four; in 2D, one time in three of
/// the others, of a family other than outer-totalistic Moore, which only some engines run), in
/// 2D on a bounded plane one time in four, and in 2D a Generations rule of 3 to 8 states one
/// time in five.
fn random_rule<W: Dimension>(rng: &mut SplitMix64) -> Rule {
    if W::AXES == 2 && rng.next().is_multiple_of(6) {
        return random_states_rule(rng);
    }
    let rule = if rng.next().is_multiple_of(4) {
        W::DEFAULT_RULE
    } else if W::AXES == 2 && rng.next().is_multiple_of(3) {
        let family = Family::ALL[1 + (rng.next() % 3) as usize];
        Rule::random(family, &mut || rng.next())
    } else {
        let counts = (1u64 << (W::NEIGHBOURS + 1)) - 1;
        let birth = (rng.next() & counts) as u32;
        let survive = (rng.next() & counts) as u32;
        Rule::from_masks(birth, survive).expect("masks within the neighbour count are valid rules")
    };
    let rule = match W::AXES == 2 && rng.next().is_multiple_of(5) {
        true => rule
            .with_states(3 + (rng.next() % 6) as u32)
            .expect("3 to 8 states"),
        false => rule,
    };
    if W::AXES == 2 && rng.next().is_multiple_of(4) {
        return rule.on(Topology::Plane);
    }
    rule
}

/// A random rule table (2 to 7 states, Moore or von Neumann) or Larger than Life rule (ranges
/// 1 to 8), on a bounded plane one time in four: the rules of cpu-states and the oracle.
fn random_states_rule(rng: &mut SplitMix64) -> Rule {
    let rule = if rng.next().is_multiple_of(2) {
        let (states, eight) = (2 + (rng.next() % 6) as u32, rng.next().is_multiple_of(2));
        let table = RuleTable::random(states, eight, &mut || rng.next());
        Rule::from_table(gol_core::rule::table::intern(table))
    } else {
        let (larger, states) = gol_core::rule::Larger::random(8, &mut || rng.next());
        Rule::from_larger(larger, states)
    };
    match rng.next() % 4 {
        0 => rule.on(Topology::Plane),
        _ => rule,
    }
}

/// Distinct random rules per run and dimension: each case draws its rule from this pool, so
/// that a CUDA engine compiles (with NVRTC, its rule compiled in) a few kernels per run rather
/// than one per case.
const RULE_POOL: usize = 16;

fn random_case<W: Dimension>(rng: &mut SplitMix64, rules: &[Rule], quick: bool) -> Case {
    let solid = W::NEIGHBOURS > 8;
    let max_side = match (solid, quick) {
        (false, false) => 321,
        (false, true) => 130,
        (true, false) => 72,
        (true, true) => 40,
    };
    let long = match (solid, quick) {
        (false, false) => 160,
        (true, false) => 60,
        (_, true) => 40,
    };
    let gens = match rng.next() % 4 {
        0 => rng.next() % 4,
        1 | 2 => rng.next() % 40,
        _ => 40 + rng.next() % long,
    };
    let width = random_side(rng, max_side);
    Case {
        width,
        height: if solid {
            width
        } else {
            random_side(rng, max_side)
        },
        depth: solid.then_some(width),
        rule: rules[(rng.next() % rules.len() as u64) as usize],
        gens,
        density: [0.1, 0.3, 0.5, 0.7][(rng.next() % 4) as usize],
        seed: rng.next(),
    }
}

/// Slabs of a split run under test: this many, or one per layer of smaller worlds.
const SPLIT_PARTS: usize = 3;

/// A split run under test ([`gol_core::slab::Decomposed`]): [`SPLIT_PARTS`] slabs of `engine`
/// (fewer where the world has fewer layers) going round `gpus` GPUs, with shallow halos so that
/// most cases exchange many times.
struct Split<W> {
    engine: EngineId,
    gpus: usize,
    halo: usize,
    inner: Option<Box<dyn Engine<W>>>,
}

/// The engine of a loaded split run.
fn loaded<T>(inner: Option<T>) -> gol_core::Result<T> {
    inner.ok_or_else(|| gol_core::Error::Engine("split run: nothing loaded".into()))
}

impl<W: Dimension> Engine<W> for Split<W> {
    fn id(&self) -> EngineId {
        self.engine
    }

    fn load(&mut self, world: &W, rule: Rule) -> gol_core::Result<()> {
        let rows = world.rows();
        let layers = rows.height() / W::layer_rows(rows.width());
        let parts = SPLIT_PARTS.min(layers);
        let options = EngineOptions::default();
        let mut split = registry::split::<W>(self.engine, &options, parts, self.gpus, self.halo)
            .map_err(|e| match e {
                Error::Core(core) => core,
                other => gol_core::Error::Engine(other.to_string()),
            })?;
        split.load(world, rule)?;
        self.inner = Some(split);
        Ok(())
    }

    fn step(&mut self, generations: u64) -> gol_core::Result<()> {
        loaded(self.inner.as_deref_mut())?.step(generations)
    }

    fn snapshot(&self) -> gol_core::Result<W> {
        loaded(self.inner.as_deref())?.snapshot()
    }

    fn population(&self) -> gol_core::Result<u64> {
        loaded(self.inner.as_deref())?.population()
    }
}

/// The split runs under test: cpu-bitsliced, and cuda-bitsliced over every GPU here, where
/// `engines` (the candidates) has them.
fn split_candidates<W: Checked>(engines: &[Candidate<W>]) -> Vec<Candidate<W>> {
    let gpus = gol_cuda::device::device_count().unwrap_or(0);
    let halo = if W::AXES == 2 { 5 } else { 3 };
    let has = |id: EngineId| engines.iter().any(|c| c.id == id);
    let mut list = Vec::new();
    for (engine, gpus) in [(EngineId::CpuBitsliced, 1), (EngineId::CudaBitsliced, gpus)] {
        if !has(engine) || gpus == 0 {
            continue;
        }
        let place = if engine.on_gpu() {
            format!(" over {gpus} GPU(s)")
        } else {
            String::new()
        };
        list.push(Candidate {
            id: engine,
            label: format!(
                "{engine} split {SPLIT_PARTS} ways{place}, {halo}-{} halos",
                if W::AXES == 2 { "row" } else { "plane" }
            ),
            make: Box::new(move || {
                Ok(Box::new(Split::<W> {
                    engine,
                    gpus,
                    halo,
                    inner: None,
                }))
            }),
            slow: false,
            split: true,
        });
    }
    list
}

/// Every engine of the dimension available here, with `cpu-bitsliced` once per instruction set
/// of this CPU, and split runs of the bit-sliced engines ([`split_candidates`]).
fn candidates<W: Checked>(only: &[EngineId], say: &mut dyn FnMut(Line<'_>)) -> Vec<Candidate<W>> {
    let mut list = Vec::new();
    for spec in W::registry() {
        if !only.is_empty() && !only.contains(&spec.id) {
            continue;
        }
        if spec.id == EngineId::CpuBitsliced {
            for isa in Isa::available() {
                list.push(Candidate {
                    id: spec.id,
                    label: format!("cpu-bitsliced[{}]", isa.name()),
                    make: Box::new(move || W::bitsliced(isa)),
                    slow: false,
                    split: false,
                });
            }
            continue;
        }
        match (spec.create)(&EngineOptions::default()) {
            Ok(_) => list.push(Candidate {
                id: spec.id,
                label: spec.name().to_string(),
                make: Box::new(move || Ok((spec.create)(&EngineOptions::default())?)),
                slow: matches!(spec.id, EngineId::CpuScalar | EngineId::CpuTable),
                split: false,
            }),
            Err(e) => say(Line::Skipped(&format!(
                "{} ({}): skipped: {e}",
                spec.name(),
                W::DIMENSION
            ))),
        }
    }
    let splits = split_candidates(&list);
    list.extend(splits);
    list
}

fn evolve<W: Checked>(candidate: &Candidate<W>, world: &W, rule: Rule, gens: u64) -> Result<W> {
    let mut engine = (candidate.make)()?;
    engine.load(world, rule)?;
    // Two calls, the first of an odd length where it can be: state carried between calls
    // (buffer parity, captured graphs) must not change the result.
    let first = (gens / 3) | 1;
    let first = first.min(gens);
    engine.step(first)?;
    engine.step(gens - first)?;
    let world = engine.snapshot()?;
    let population = engine.population()?;
    if population != world.population() {
        return Err(Error::Mismatch(format!(
            "{}: population() says {population} but the snapshot holds {}",
            candidate.label,
            world.population()
        )));
    }
    Ok(world)
}

fn compare<W: Checked>(label: &str, what: &str, expected: &W, got: &W) -> Result<()> {
    if let Some(difference) = W::difference(expected, got) {
        return Err(Error::Mismatch(format!(
            "MISMATCH: {label} on {what}: first difference at {difference}, {label} disagrees"
        )));
    }
    Ok(())
}

/// A pattern and where it must be after some generations.
struct KnownPattern<W> {
    name: &'static str,
    start: W,
    rule: Rule,
    gens: u64,
    end: W,
}

fn grid_with(width: usize, height: usize, cells: &[(usize, usize)]) -> Grid {
    let mut grid = Grid::new(width, height).expect("small grid");
    for &(x, y) in cells {
        grid.set(x % width, y % height, true);
    }
    grid
}

fn known_patterns() -> Vec<KnownPattern<Grid>> {
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
            rule: Rule::LIFE,
            gens: 4 * 9,
            end: shifted(9, 9, 10, 7),
        },
        KnownPattern {
            name: "glider around a 67x13 torus (lcm 871 steps, 3484 generations)",
            start: shifted(0, 0, 67, 13),
            rule: Rule::LIFE,
            gens: 4 * 871,
            end: shifted(0, 0, 67, 13),
        },
        KnownPattern {
            name: "blinker after 3 generations",
            start: blinker.clone(),
            rule: Rule::LIFE,
            gens: 3,
            end: grid_with(5, 5, &[(2, 1), (2, 2), (2, 3)]),
        },
    ]
}

/// Alive-cell counts known from Kurnosov's seminar (docs/lineage.md) and from Golly.
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

/// Known 3D patterns: a still life and the torus's multiplicities on tiny cubes.
fn known_solids() -> Vec<KnownPattern<Cube>> {
    let cube_with = |side: usize, cells: &[(usize, usize, usize)]| {
        let mut cube = Cube::new(side).expect("small cube");
        for &(x, y, z) in cells {
            cube.set(x, y, z, true);
        }
        cube
    };
    let block: Vec<(usize, usize, usize)> = (0..8)
        .map(|i| (2 + (i & 1), 2 + (i >> 1 & 1), 2 + (i >> 2)))
        .collect();
    vec![
        KnownPattern {
            name:
                "2x2x2 block, a still life of B6/S567 (each cell has 7 neighbours), on a 7^3 torus",
            start: cube_with(7, &block),
            rule: Rule::LIFE_3D,
            gens: 9,
            end: cube_with(7, &block),
        },
        KnownPattern {
            name: "lone cell on a 2^3 torus under B8/S: only the opposite corner sees it 8 times",
            start: cube_with(2, &[(0, 0, 0)]),
            rule: Rule::parse("B8/S").expect("a valid rule"),
            gens: 1,
            end: cube_with(2, &[(1, 1, 1)]),
        },
    ]
}

/// What to verify.
#[derive(Clone, Debug)]
pub struct Options {
    /// Seed of the random cases (a run prints it; give it again to replay them); from the
    /// clock where not given.
    pub seed: Option<u64>,
    /// Random cases per engine.
    pub cases: usize,
    /// A short run: at most 40 smaller cases and only the quick known values.
    pub quick: bool,
    /// Only these engines (every engine available here where empty).
    pub engines: Vec<EngineId>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            seed: None,
            cases: 200,
            quick: false,
            engines: Vec::new(),
        }
    }
}

/// A line of a verification's report.
#[derive(Clone, Copy, Debug)]
pub enum Line<'a> {
    /// What was checked and found identical (the seed first).
    Checked(&'a str),
    /// An engine that cannot run here, skipped, and why.
    Skipped(&'a str),
}

/// Cross-checks every engine available here (or those of [`Options::engines`]) against the
/// scalar oracle of each dimension, telling `say` what it checked; fails with
/// [`Error::Mismatch`] on the first difference, naming the case.
pub fn run(options: &Options, say: &mut dyn FnMut(Line<'_>)) -> Result<()> {
    let args = options;
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
    say(Line::Checked(&format!(
        "gol verify: seed {master} (replay with --seed {master}), {cases} random cases per engine"
    )));
    for &id in &args.engines {
        let elsewhere = Cube::registry().iter().any(|s| s.id == id) || id.on_plane();
        if !elsewhere {
            engine::find(&Grid::registry(), id)?;
        }
    }
    let start = Instant::now();

    let flat = candidates::<Grid>(&args.engines, say);
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
        let engines: Vec<&Candidate<Grid>> = flat
            .iter()
            .filter(|c| !(known.fast_only && c.slow))
            .filter(|c| Rule::LIFE.check_engine(c.id, 8).is_ok())
            .collect();
        for c in &engines {
            let end = evolve(c, &grid, Rule::LIFE, known.gens)?;
            if end.population() != known.alive {
                return Err(Error::Mismatch(format!(
                    "MISMATCH: {} on {what}: {} alive cells, expected {}",
                    c.label,
                    end.population(),
                    known.alive
                )));
            }
        }
        if !engines.is_empty() {
            say(Line::Checked(&format!(
                "known count {what}: {} alive: ok",
                known.alive
            )));
        }
    }
    check(&flat, known_patterns(), cases, master, args.quick, say)?;
    check_plane(&args.engines, cases, master, args.quick, say)?;
    let solid = candidates::<Cube>(&args.engines, say);
    check(&solid, known_solids(), cases, master, args.quick, say)?;
    say(Line::Checked(&format!(
        "gol verify: all engines agree ({:.1} s)",
        start.elapsed().as_secs_f64()
    )));
    Ok(())
}

/// Runs random cases on the infinite plane's engines (those of `only`, or all where it is
/// empty): each a soup under a random rule (no B0: the plane refuses it), stepped in up to
/// three parts on one to three threads, some under the smallest memory cap, and compared with
/// cpu-scalar on a torus wide enough that nothing reaches its edge ([`gol_plane::check`]).
fn check_plane(
    only: &[EngineId],
    cases: usize,
    master: u64,
    quick: bool,
    say: &mut dyn FnMut(Line<'_>),
) -> Result<()> {
    let engines: Vec<EngineId> = crate::plane::ENGINES
        .iter()
        .copied()
        .filter(|id| only.is_empty() || only.contains(id))
        .collect();
    if engines.is_empty() {
        return Ok(());
    }
    let mut rng = SplitMix64::new(master ^ 0x70_6c61_6e65);
    let mut rules: Vec<Rule> = (0..RULE_POOL)
        .map(|_| loop {
            let rule = random_rule::<Grid>(&mut rng).on(Topology::Torus);
            if rule.birth_mask() & 1 == 0 {
                break rule;
            }
        })
        .collect();
    // Rule tables of 2 to 7 states, Moore and von Neumann (HashLife runs them on the plane),
    // and Larger than Life rules of ranges 1 to 3 (the window runs them).
    for eight in [true, false] {
        let states = 2 + (rng.next() % 6) as u32;
        let table = RuleTable::random(states, eight, &mut || rng.next());
        rules.push(Rule::from_table(gol_core::rule::table::intern(table)));
        let (larger, states) = gol_core::rule::Larger::random(3, &mut || rng.next());
        rules.push(Rule::from_larger(larger, states));
    }
    let cases = cases.min(if quick { 20 } else { 60 });
    let stop = std::sync::atomic::AtomicBool::new(false);
    for index in 0..cases {
        let mut case = random_case::<Grid>(&mut rng, &rules, true);
        case.width = case.width.min(64);
        case.height = case.height.min(64);
        case.gens = rng.next() % if quick { 80 } else { 300 };
        let parts = 1 + (rng.next() % 3) as usize;
        let mut cuts: Vec<u64> = (1..parts).map(|_| rng.next() % (case.gens + 1)).collect();
        cuts.extend([0, case.gens]);
        cuts.sort_unstable();
        let threads = 1 + index % 3;
        let small = index % 5 == 4;
        let soup = Grid::soup(&case)?;
        let expected = gol_plane::check::oracle(&soup, case.rule, case.gens)?;
        for &id in &engines {
            if !gol_plane::runs(id, &case.rule) {
                // Tiles run two-state B/S rules, HashLife all but Larger than Life rules,
                // the window every rule.
                continue;
            }
            let options = gol_plane::Options {
                memory: if small {
                    gol_plane::store::Store::LEAST
                } else {
                    64 << 20
                },
                threads,
                // Small cases reach the parallel levels only if they start low.
                parallel_level: Some(6),
            };
            let start = gol_plane::Start::Grid {
                grid: &soup,
                x: 0,
                y: 0,
            };
            let mut plane = gol_plane::new(id, start, case.rule, &options)?;
            for pair in cuts.windows(2) {
                plane.step(&num_bigint::BigUint::from(pair[1] - pair[0]), &stop)?;
            }
            if let Some(difference) = gol_plane::check::difference(&*plane, &expected) {
                return Err(Error::Mismatch(format!(
                    "MISMATCH: {} on the infinite plane, random case {index} ({}x{} soup of \
                     density {} and seed {}, rule {}, {} generations in steps {cuts:?}, {threads} \
                     threads{}): {difference}",
                    id.name(),
                    case.width,
                    case.height,
                    case.density,
                    case.seed,
                    case.rule,
                    case.gens,
                    if small {
                        ", the smallest memory cap"
                    } else {
                        ""
                    }
                )));
            }
        }
    }
    let names: Vec<&str> = engines.iter().map(|id| id.name()).collect();
    say(Line::Checked(&format!(
        "infinite plane: {cases} random cases (B/S and Generations rules, rule tables, Larger \
         than Life) identical to cpu-scalar on a torus wider than their reach ({}: each on \
         the rules it runs)",
        names.join(", ")
    )));
    Ok(())
}

/// Runs the known patterns and `cases` random cases of one dimension on every candidate,
/// against cpu-scalar.
fn check<W: Checked>(
    candidates: &[Candidate<W>],
    patterns: Vec<KnownPattern<W>>,
    cases: usize,
    master: u64,
    quick: bool,
    say: &mut dyn FnMut(Line<'_>),
) -> Result<()> {
    if candidates.is_empty() {
        return Ok(());
    }
    let dimension = W::DIMENSION;
    for pattern in patterns {
        for c in candidates {
            if pattern.rule.check_engine(c.id, W::NEIGHBOURS).is_err() {
                continue;
            }
            let end = evolve(c, &pattern.start, pattern.rule, pattern.gens)?;
            compare(&c.label, pattern.name, &pattern.end, &end)?;
        }
        say(Line::Checked(&format!(
            "known pattern ({dimension}): {}: ok",
            pattern.name
        )));
    }

    // Random cases, each run once on the oracle and compared on every engine.
    let registry = W::registry();
    let oracle = engine::find(&registry, EngineId::CpuScalar)?;
    let mut rng = SplitMix64::new(master);
    let rules: Vec<Rule> = (0..RULE_POOL).map(|_| random_rule::<W>(&mut rng)).collect();
    let mut checked = 0u64;
    let mut other_families = 0;
    let mut planes = 0;
    let mut generations = 0;
    for index in 0..cases {
        let case = random_case::<W>(&mut rng, &rules, quick);
        other_families += (case.rule.family() != Family::OuterTotalistic) as usize;
        planes += (case.rule.topology() == Topology::Plane) as usize;
        generations += case.rule.is_generations() as usize;
        let world = W::soup(&case)?;
        let expected = engine::evolve(oracle, &world, case.rule, case.gens)?;
        for c in candidates {
            let runs = case.rule.check_engine(c.id, W::NEIGHBOURS).is_ok()
                && !(c.split && case.rule.is_generations());
            if c.id == EngineId::CpuScalar || !runs {
                continue;
            }
            let got = evolve(c, &world, case.rule, case.gens)?;
            compare(
                &c.label,
                &format!("random {dimension} case {index} ({case})"),
                &expected,
                &got,
            )?;
            checked += 1;
        }
    }
    let labels: Vec<&str> = candidates
        .iter()
        .filter(|c| c.id != EngineId::CpuScalar)
        .map(|c| c.label.as_str())
        .collect();
    say(Line::Checked(&format!(
        "random {dimension} cases: {checked} engine runs identical to cpu-scalar ({cases} cases x {})",
        labels.join(", ")
    )));
    if other_families > 0 {
        let names: Vec<&str> = Family::ENGINES.iter().map(|id| id.name()).collect();
        say(Line::Checked(&format!(
            "  {other_families} of those cases have isotropic non-totalistic, hexagonal or von Neumann rules, run on {} only",
            names.join(", ")
        )));
    }
    if generations > 0 {
        let names: Vec<&str> = GENERATIONS_ENGINES.iter().map(|id| id.name()).collect();
        say(Line::Checked(&format!(
            "  {generations} of those cases have Generations rules, run on {} only",
            names.join(", ")
        )));
    }
    if planes > 0 {
        say(Line::Checked(&format!(
            "  {planes} of those cases are bounded planes"
        )));
    }
    Ok(())
}
