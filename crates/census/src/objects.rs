//! What the ash of a soup is made of: objects cut apart as apgsearch cuts them, and named by
//! their apgcodes.
//!
//! The settled pattern's live cells and its envelope (every cell alive at some generation of a
//! period) are split into clusters: cells join where one lies within √5 of another (the 5 × 5
//! square without its corners, apgsearch's neighbourhood for B3/S23). Each cluster's live cells
//! are then run alone until they repeat and named ([`Classifier::classify`]); a cluster of parts
//! that each run alone exactly as they do together (a bi-block, a block beside a blinker) is
//! counted as those parts, recursively; parts that need each other (a ship-tie, whose two ships
//! touch) stay one object. Names are remembered by shape. An object that does not repeat is
//! named by the growth of its population where it grows linearly, as apgsearch names switch
//! engines (`yl…`), else `PATHOLOGICAL`; a spark that dies alone is no object.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use gol_cuda::soups::{Lone, MOST_KINDS};

use crate::apgcode::{self, Code, Kind};
use crate::universe::{bounds, step_rows, Universe};

/// Generations an object is run alone, at most, looking for its period.
const MOST_GENERATIONS: u64 = 4096;

/// Cells, normalised: the top-left of their box at (0, 0), sorted.
type Shape = Vec<(i64, i64)>;

/// The shape of `cells` and where its box's top-left lay.
fn normalised(cells: &[(i64, i64)]) -> (Shape, (i64, i64)) {
    let Some((l, t, _, _)) = bounds(cells) else {
        return (Vec::new(), (0, 0));
    };
    let mut shape: Shape = cells.iter().map(|&(x, y)| (x - l, y - t)).collect();
    shape.sort_unstable();
    (shape, (l, t))
}

/// The shape of `cells` as one word where it fits in 8 × 8 cells: the cell (x, y) from the top
/// left of its box is bit 8 y + x.
fn small_key(cells: &[(i64, i64)]) -> Option<u64> {
    let (l, t, r, b) = bounds(cells)?;
    if r - l >= 8 || b - t >= 8 {
        return None;
    }
    Some(
        cells
            .iter()
            .fold(0, |key, &(x, y)| key | 1 << (8 * (y - t) + x - l)),
    )
}

/// An object's name and how it moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    /// The apgcodes of the objects it is made of (one, for most).
    pub codes: Vec<Code>,
    /// How far it moves in a period, (right, down); (0, 0) for all but spaceships.
    pub displacement: (i64, i64),
}

/// Names objects, remembering each shape's name.
#[derive(Default)]
pub struct Classifier {
    known: HashMap<Shape, Named>,
    /// The names of shapes that fit in 8 × 8 cells, by [`small_key`]: most ash, looked up
    /// without a sort or a list.
    small: HashMap<u64, Named>,
    /// Shapes looked at as possible ships: the ship, or `None`.
    ships: HashMap<Shape, Option<(Named, u64)>>,
}

/// Every name made in the process, by shape: naming runs the object a period or more (a
/// hundred microseconds and more), and each thread's classifier would name the same shapes.
static NAMED: std::sync::LazyLock<std::sync::RwLock<HashMap<Shape, Named>>> =
    std::sync::LazyLock::new(Default::default);

/// Names [`NAMED`] holds before it starts afresh, as a thread's classifier does.
const MOST_NAMED: usize = 1 << 16;

/// Generations a cluster is run, looking for a ship's period: the ships soups of B3/S23 make
/// (gliders, *WSS, the loafer) repeat within 7, and a longer look at every spark on the edge
/// of a soup still in turmoil would cost more than the rest of the census.
pub const SHIP_GENERATIONS: u64 = 8;

/// The fewest cells a spaceship of B3/S23 has in any phase (the glider's five): smaller
/// clusters are not looked at as ships.
const SMALLEST_SHIP: usize = 5;

/// Phases (cells where they lie) and the displacement over them.
type Cycle = (Vec<Vec<(i64, i64)>>, (i64, i64));

/// Why an object run alone found no period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unrepeated {
    /// It died out.
    Dies,
    /// It did not repeat within the generations given.
    NotWithin,
}

/// One period of an object run alone: its phases (cells where they lie) and displacement;
/// why not when it dies out or does not repeat within `most` generations.
fn cycle(cells: &[(i64, i64)], most: u64) -> Result<Cycle, Unrepeated> {
    let mut u = Universe::of(cells);
    let mut seen: HashMap<Shape, (u64, (i64, i64))> = HashMap::default();
    let mut phases: Vec<Vec<(i64, i64)>> = Vec::new();
    loop {
        let now = u.cells();
        if now.is_empty() {
            return Err(Unrepeated::Dies);
        }
        let (shape, corner) = normalised(&now);
        if let Some(&(at, was)) = seen.get(&shape) {
            let displacement = (corner.0 - was.0, corner.1 - was.1);
            return Ok((phases.split_off(at as usize), displacement));
        }
        if u.generation >= most {
            return Err(Unrepeated::NotWithin);
        }
        seen.insert(shape, (u.generation, corner));
        phases.push(now);
        u.step();
    }
}

/// A third of the generations whose populations [`linear_growth`] looks at (apgsearch's
/// 4,800): the longest period of growth it finds.
const GROWTH_PERIODS: usize = 4800;

/// apgsearch's name for a pattern whose population grows linearly (a switch engine, say):
/// `yl<p>_<q>_<m0>_<h>`, from the populations of 3 × [`GROWTH_PERIODS`] generations. p is the
/// least period after which the growth repeats (the population's change over p generations is
/// the same p generations later, over the first third), q the least period of those changes,
/// m0, m1 and m2 the sums over p generations of the change over q generations, its square and
/// its cube (32-bit, as apgsearch keeps them), and h the MD5 of `m1#m2` in hex: the same from
/// any generation once the growth repeats. Where it does not repeat from the start (debris
/// beside the engine still settling) it is looked for again [`GROWTH_PERIODS`] generations
/// on. `None` where no such p is found or the population does not change over a period
/// (apgsearch then tries a power law, giving `zz_…` or `PATHOLOGICAL`: here `PATHOLOGICAL`).
fn linear_growth(cells: &[(i64, i64)]) -> Option<String> {
    let most = GROWTH_PERIODS;
    let mut u = Universe::of(cells);
    u.track_population();
    let mut population = Vec::with_capacity(4 * most);
    for _ in 0..4 * most {
        population.push(u.population() as i32);
        u.step();
    }
    growth_code(&population)
}

/// [`linear_growth`]'s code from the populations of a pattern's generations 0, 1, … (at least
/// 3 × [`GROWTH_PERIODS`]; from generation [`GROWTH_PERIODS`] too where there are 4 × as many
/// and it is not found from 0).
pub(crate) fn growth_code(population: &[i32]) -> Option<String> {
    [0, GROWTH_PERIODS]
        .into_iter()
        .filter(|start| population.len() >= start + 3 * GROWTH_PERIODS)
        .find_map(|start| growth_code_from(&population[start..]))
}

/// [`growth_code`] from the first generation of `population`.
fn growth_code_from(population: &[i32]) -> Option<String> {
    let most = GROWTH_PERIODS;
    let change = |p: usize, i: usize| population[i + p].wrapping_sub(population[i]);
    let p = (1..most).find(|&p| (0..most).all(|i| change(p, i) == change(p, i + p)))?;
    let q = (1..most).find(|&q| (0..most).all(|i| change(p, i) == change(p, i + q)))?;
    let (mut m0, mut m1, mut m2) = (0i32, 0i32, 0i32);
    for i in 0..p {
        let d = change(q, i);
        m0 = m0.wrapping_add(d);
        m1 = m1.wrapping_add(d.wrapping_mul(d));
        m2 = m2.wrapping_add(d.wrapping_mul(d).wrapping_mul(d));
    }
    if m0 == 0 {
        return None;
    }
    let hash = crate::census::md5_hex(&format!("{m1}#{m2}"));
    Some(format!("yl{p}_{q}_{m0}_{hash}"))
}

/// The side of the board [`motion`] runs small patterns on.
const BOARD: usize = 64;

/// How a small pattern moves: its period and displacement when it repeats (moved or not)
/// within `most` generations, `Some(None)` when it does not (or dies out), as [`cycle`] finds
/// them; `None` when it does not fit the board it is run on (64 × 64 cells, with a cell a
/// generation to spare on every side). Run as rows of bits, for the many sparks on the edge
/// of a soup that are looked at as possible ships.
fn motion(cells: &[(i64, i64)], most: u64) -> Option<Option<(u64, (i64, i64))>> {
    let (l, t, r, b) = bounds(cells)?;
    let margin = most as i64 + 1;
    if r - l + 1 + 2 * margin > BOARD as i64 || b - t + 1 + 2 * margin > BOARD as i64 {
        return None;
    }
    let mut rows = [0u64; BOARD];
    for &(x, y) in cells {
        rows[(y - t + margin) as usize] |= 1 << (x - l + margin);
    }
    // Each phase: its box's top-left, and its rows shifted there.
    let mut phases: Vec<((i64, i64), Vec<u64>)> = Vec::new();
    let mut next = [0u64; BOARD];
    for generation in 0.. {
        let Some(top) = rows.iter().position(|&w| w != 0) else {
            return Some(None);
        };
        let bottom = rows.iter().rposition(|&w| w != 0).expect("live");
        let live = rows.iter().fold(0, |a, &w| a | w);
        let left = live.trailing_zeros() as usize;
        if top == 0 || bottom == BOARD - 1 || left == 0 || live >> (BOARD - 1) != 0 {
            // Outgrew the board (it does not within `most`, with the margin: never, in fact).
            return None;
        }
        let shape: Vec<u64> = rows[top..=bottom].iter().map(|&w| w >> left).collect();
        let corner = (left as i64, top as i64);
        if let Some(at) = phases.iter().position(|(_, was)| *was == shape) {
            let was = phases[at].0;
            return Some(Some((
                (phases.len() - at) as u64,
                (corner.0 - was.0, corner.1 - was.1),
            )));
        }
        if generation >= most {
            return Some(None);
        }
        phases.push((corner, shape));
        step_rows(&rows, 1, top - 1..bottom + 2, &mut next);
        rows[top - 1..=bottom + 1].copy_from_slice(&next[top - 1..=bottom + 1]);
    }
    unreachable!("the loop returns")
}

impl Classifier {
    /// Forgets every shape once more than `most` are remembered.
    pub fn forget_if_over(&mut self, most: usize) {
        if self.known.len() + self.small.len() + self.ships.len() > most {
            *self = Classifier::default();
        }
    }

    /// The names of the object whose live cells are `cells`.
    pub fn classify(&mut self, cells: &[(i64, i64)]) -> &Named {
        if let Some(key) = small_key(cells) {
            if !self.small.contains_key(&key) {
                let (shape, _) = normalised(cells);
                let named = self.name(&shape);
                self.small.insert(key, named);
            }
            return &self.small[&key];
        }
        let (shape, _) = normalised(cells);
        if !self.known.contains_key(&shape) {
            let named = self.name(&shape);
            self.known.insert(shape.clone(), named);
        }
        &self.known[&shape]
    }

    /// The ship `cells` are, if they are one (a cluster that repeats moved within
    /// [`SHIP_GENERATIONS`]), and its period.
    pub fn ship(&mut self, cells: &[(i64, i64)]) -> Option<(Named, u64)> {
        if cells.len() < SMALLEST_SHIP {
            return None;
        }
        let (shape, _) = normalised(cells);
        if let Some(ship) = self.ships.get(&shape) {
            return ship.clone();
        }
        let moves = motion(&shape, SHIP_GENERATIONS).unwrap_or_else(|| {
            cycle(&shape, SHIP_GENERATIONS)
                .ok()
                .map(|(phases, displacement)| (phases.len() as u64, displacement))
        });
        let ship = match moves {
            Some((period, displacement)) if displacement != (0, 0) => {
                Some((self.classify(&shape).clone(), period))
            }
            _ => None,
        };
        self.ships.insert(shape, ship.clone());
        ship
    }

    /// The names of the object of `cells` (a shape): named once in the process, each thread's
    /// classifier learning it from the others' where one has named it.
    fn name(&mut self, cells: &[(i64, i64)]) -> Named {
        let named = NAMED.read().expect("the names' lock").get(cells).cloned();
        named.unwrap_or_else(|| {
            let named = self.run_and_name(cells);
            let mut all = NAMED.write().expect("the names' lock");
            if all.len() >= MOST_NAMED {
                all.clear();
            }
            all.insert(cells.to_vec(), named.clone());
            named
        })
    }

    fn run_and_name(&mut self, cells: &[(i64, i64)]) -> Named {
        let (phases, displacement) = match cycle(cells, MOST_GENERATIONS) {
            Ok(cycle) => cycle,
            // A spark of a soup given up before it settled, which dies alone: nothing.
            Err(Unrepeated::Dies) => {
                return Named {
                    codes: Vec::new(),
                    displacement: (0, 0),
                }
            }
            Err(Unrepeated::NotWithin) => {
                return Named {
                    codes: vec![
                        linear_growth(cells).map_or("PATHOLOGICAL", |c| apgcode::intern(&c))
                    ],
                    displacement: (0, 0),
                }
            }
        };
        if let Some(parts) = parts(&phases, displacement) {
            let mut codes = Vec::new();
            for part in parts {
                codes.extend(self.classify(&part).codes.iter().cloned());
            }
            return Named {
                codes,
                displacement,
            };
        }
        let period = phases.len() as u64;
        let kind = match (period, displacement) {
            (1, (0, 0)) => Kind::Still {
                population: phases[0].len() as u64,
            },
            (_, (0, 0)) => Kind::Oscillator { period },
            _ => Kind::Spaceship { period },
        };
        Named {
            codes: vec![apgcode::intern(&apgcode::code(
                kind,
                phases.iter().map(Vec::as_slice),
            ))],
            displacement,
        }
    }
}

/// The parts of an object (its phases over a period, then its displacement) that each run
/// alone as they do in it, as the first phase's cells of each; `None` when it is one object.
///
/// Parts start as islands: live cells joined when they touch (as kings move) in one
/// generation or in two consecutive ones. Islands that do not run alone as they do together
/// are joined with those whose cells they touch through a dead cell with three or more live
/// neighbours (a birth that the others hold back or cause), until every part runs alone as in
/// the whole or only one is left.
fn parts(phases: &[Vec<(i64, i64)>], displacement: (i64, i64)) -> Option<Vec<Vec<(i64, i64)>>> {
    let period = phases.len();
    // Union-find over every live cell of every phase.
    let index: Vec<HashMap<(i64, i64), usize>> = {
        let mut next = 0;
        phases
            .iter()
            .map(|phase| {
                phase
                    .iter()
                    .map(|&c| {
                        next += 1;
                        (c, next - 1)
                    })
                    .collect::<HashMap<_, _>>()
            })
            .collect()
    };
    let total: usize = phases.iter().map(Vec::len).sum();
    let mut parent: Vec<usize> = (0..total).collect();
    fn find(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    fn join(parent: &mut [usize], a: usize, b: usize) {
        let (a, b) = (find(parent, a), find(parent, b));
        if a != b {
            parent[a] = b;
        }
    }
    for t in 0..period {
        let here = &index[t];
        // The next phase: phase 0 moved by the displacement after the last.
        let (next, shift) = if t + 1 < period {
            (&index[t + 1], (0, 0))
        } else {
            (&index[0], displacement)
        };
        for (&(x, y), &i) in here {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    if let Some(&j) = here.get(&(x + dx, y + dy)) {
                        join(&mut parent, i, j);
                    }
                    if let Some(&j) = next.get(&(x + dx - shift.0, y + dy - shift.1)) {
                        join(&mut parent, i, j);
                    }
                }
            }
        }
    }
    let island_of = |parent: &mut Vec<usize>, t: usize, c: (i64, i64)| find(parent, index[t][&c]);
    // Islands, as sets of cells of each phase.
    let mut islands: Vec<usize> = phases[0]
        .iter()
        .map(|&c| island_of(&mut parent, 0, c))
        .collect();
    islands.sort_unstable();
    islands.dedup();
    if islands.len() < 2 {
        return None;
    }
    loop {
        let mut groups: HashMap<usize, Vec<Vec<(i64, i64)>>> = HashMap::default();
        for (t, phase) in phases.iter().enumerate() {
            for &c in phase {
                let root = island_of(&mut parent, t, c);
                let cells = groups
                    .entry(root)
                    .or_insert_with(|| vec![Vec::new(); period]);
                cells[t].push(c);
            }
        }
        if groups.len() < 2 {
            return None;
        }
        let unfaithful: Vec<usize> = groups
            .iter()
            .filter(|(_, cells)| !runs_alone(cells, displacement))
            .map(|(&root, _)| root)
            .collect();
        if unfaithful.is_empty() {
            let mut parts: Vec<Vec<(i64, i64)>> =
                groups.into_values().map(|mut c| c.swap_remove(0)).collect();
            parts.sort();
            return Some(parts);
        }
        // Join each part that does not run alone with those its cells hold back or feed.
        let mut joined = false;
        for (t, phase) in phases.iter().enumerate() {
            let live: HashSet<(i64, i64)> = phase.iter().copied().collect();
            let mut candidates: HashSet<(i64, i64)> = HashSet::default();
            for &(x, y) in phase {
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        if !live.contains(&(x + dx, y + dy)) {
                            candidates.insert((x + dx, y + dy));
                        }
                    }
                }
            }
            for (x, y) in candidates {
                let around: Vec<(i64, i64)> = (-1..=1)
                    .flat_map(|dy| (-1..=1).map(move |dx| (x + dx, y + dy)))
                    .filter(|c| live.contains(c))
                    .collect();
                if around.len() < 3 {
                    continue;
                }
                let roots: Vec<usize> = around
                    .iter()
                    .map(|&c| island_of(&mut parent, t, c))
                    .collect();
                if !roots.iter().any(|r| unfaithful.contains(r)) {
                    continue;
                }
                for pair in roots.windows(2) {
                    if find(&mut parent, pair[0]) != find(&mut parent, pair[1]) {
                        join(&mut parent, pair[0], pair[1]);
                        joined = true;
                    }
                }
            }
        }
        if !joined {
            return None;
        }
    }
}

/// Whether the cells of a part (each phase's) run alone as they do in the whole: each phase
/// the step of the one before, the first the step of the last moved back.
fn runs_alone(cells: &[Vec<(i64, i64)>], displacement: (i64, i64)) -> bool {
    let period = cells.len();
    let mut u = Universe::of(&cells[0]);
    for t in 1..=period {
        u.step();
        let mut now = u.cells();
        now.sort_unstable();
        let mut want: Vec<(i64, i64)> = if t < period {
            cells[t].clone()
        } else {
            cells[0]
                .iter()
                .map(|&(x, y)| (x + displacement.0, y + displacement.1))
                .collect()
        };
        want.sort_unstable();
        if now != want {
            return false;
        }
    }
    true
}

/// The clusters of the settled cells: `live` and `envelope` (the cells alive at some
/// generation of a period) joined within √5; each cluster's live cells. The clusters come in
/// the order of their first cells by row, then column.
pub fn clusters(live: &[(i64, i64)], envelope: &[(i64, i64)]) -> Vec<Vec<(i64, i64)>> {
    let all = || envelope.iter().chain(live);
    match Grid::around(all()) {
        Some(mut left) => {
            let mut alive = left.empty();
            for cell in live {
                alive.insert(*cell);
            }
            for &cell in all() {
                left.insert(cell);
            }
            left.joined(&alive)
        }
        None => {
            let mut order: Vec<(i64, i64)> = all().copied().collect();
            order.sort_unstable_by_key(|&(x, y)| (y, x));
            order.dedup();
            let alive: HashSet<(i64, i64)> = live.iter().copied().collect();
            let mut left: HashSet<(i64, i64)> = order.iter().copied().collect();
            joined(&order, &alive, &mut left)
        }
    }
}

/// The clusters of [`clusters`] for cells given as rows of bits, `width` cells a row (a
/// multiple of 64) from the cell `(x0, y0)`, cell (x, y) bit `(x - x0) % 64` of word
/// `((y - y0) * width + x - x0) / 64`: `envelope` holds every cell of `live` and every other
/// cell of the envelope, each two or more rows and columns inside the rows given.
pub(crate) fn clusters_of_rows(
    (x0, y0): (i64, i64),
    width: usize,
    live: Vec<u64>,
    envelope: Vec<u64>,
) -> Vec<Vec<(i64, i64)>> {
    debug_assert!(width.is_multiple_of(64) && live.len() == envelope.len());
    let grid = |bits| Grid {
        x0,
        y0,
        width,
        bits,
    };
    grid(envelope).joined(&grid(live))
}

/// The window of a common object standing apart ([`Lone`]), as the GPU finds it, and the cells
/// within √5 of its envelope in the same window (where [`take_lone`] wants nothing else), from
/// its live cells `cells`, its envelope's corner at (0, 0) (its envelope four cells or fewer a
/// side).
fn window(cells: &[(i64, i64)]) -> (Lone, [u8; 8]) {
    let envelope = envelope_of(cells);
    let (l, t, r, b) = bounds(&envelope).expect("cells");
    assert_eq!((l, t), (0, 0), "the envelope's corner at (0, 0)");
    assert!(r < 4 && b < 4, "an envelope of four cells or fewer a side");
    let rows_of = |cells: &[(i64, i64)]| {
        let mut rows = [0u8; 8];
        for &(x, y) in cells {
            rows[(y + 2) as usize] |= 1 << (x + 2);
        }
        rows
    };
    // The envelope spread by a neighbourhood given as JOINED gives it.
    let spread = |neighbourhood: &[(i64, u64)]| {
        let mut rows = [0u8; 8];
        for &(x, y) in &envelope {
            for &(dy, row) in neighbourhood {
                rows[(y + 2 + dy) as usize] |= (row << x) as u8;
            }
        }
        rows
    };
    let lone = Lone {
        live: rows_of(cells),
        envelope: rows_of(&envelope),
        around: spread(&TOUCHING),
    };
    (lone, spread(&JOINED))
}

/// The cells of `cells` and of their next generation.
fn envelope_of(cells: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut next = Universe::of(cells);
    next.step();
    let mut envelope: Vec<(i64, i64)> = cells.iter().copied().chain(next.cells()).collect();
    envelope.sort_unstable();
    envelope.dedup();
    envelope
}

/// The objects the GPU names where they stand apart (the census's look at a settled soup is
/// then the counts it adds up): still lifes and period-2 oscillators whose envelopes are four
/// cells or fewer a side, the most common of a soup's ash. Of 99,588 soups of `k_testseed`
/// settled with period 1 or 2 (run on the CPU), the ash of 95.4% was nothing but these: 83.6%
/// with each standing alone (nothing else within √5), the rest with some closer together but
/// apart (none touching another), each of which the GPU names too.
const NAMED_APART: [&str; 12] = [
    "xs4_33", "xp2_7", "xs6_696", "xs7_2596", "xs5_253", "xs6_356", "xs8_6996", "xs4_252",
    "xs7_25ac", "xp2_7e", "xp2_318c", "xs6_25a4",
];

/// A kind of object the GPU names where it stands apart: one of twelve common objects, in one
/// orientation and phase.
pub struct ApartKind {
    /// Its window, as the GPU looks for it.
    pub window: Lone,
    /// The apgcodes an ash counts for each (one: these are single objects).
    pub codes: Vec<Code>,
    /// Its live cells.
    pub population: u64,
}

/// Each orientation and phase of the twelve objects the GPU names (block, blinker, beehive,
/// loaf, boat, ship, pond, tub, long boat, toad, beacon and barge), once: the kinds its census
/// names ([`gol_cuda::soups::SoupBoxes::new`]).
pub static APART_KINDS: std::sync::LazyLock<Vec<ApartKind>> = std::sync::LazyLock::new(|| {
    let mut classifier = Classifier::default();
    let mut seen: Vec<Vec<(i64, i64)>> = Vec::new();
    let mut kinds = Vec::new();
    for code in NAMED_APART {
        let (_, wechsler) = code.split_once('_').expect("an apgcode");
        let first = apgcode::decode(wechsler).expect("a Wechsler string");
        let mut next = Universe::of(&first);
        next.step();
        for phase in [first, next.cells()] {
            for orientation in 0..8 {
                let cells: Vec<(i64, i64)> = phase
                    .iter()
                    .map(|&c| apgcode::orient(c, orientation))
                    .collect();
                let (l, t, _, _) = bounds(&envelope_of(&cells)).expect("cells");
                let mut cells: Vec<(i64, i64)> =
                    cells.iter().map(|&(x, y)| (x - l, y - t)).collect();
                cells.sort_unstable();
                if seen.contains(&cells) {
                    continue;
                }
                kinds.push(ApartKind {
                    window: window(&cells).0,
                    codes: classifier.classify(&cells).codes.clone(),
                    population: cells.len() as u64,
                });
                seen.push(cells);
            }
        }
    }
    assert!(kinds.len() <= MOST_KINDS, "room on the GPU for every kind");
    kinds
});

/// Blocks, blinkers and beehives, in each orientation and phase (two of three objects of a
/// soup's ash, most of them standing alone): their live cells from their envelopes' corners,
/// in the order of [`lone_starts`].
const LONE_CELLS: [&[(i64, i64)]; 5] = [
    &[(0, 0), (1, 0), (0, 1), (1, 1)],
    // A blinker lying, its envelope a row above and below it; then one standing.
    &[(0, 1), (1, 1), (2, 1)],
    &[(1, 0), (1, 1), (1, 2)],
    &[(1, 0), (2, 0), (0, 1), (3, 1), (1, 2), (2, 2)],
    &[(1, 0), (0, 1), (2, 1), (0, 2), (2, 2), (1, 3)],
];

/// [`LONE_CELLS`]' windows, and the cells within √5 of each one's envelope.
static LONE: std::sync::LazyLock<[(Lone, [u8; 8]); 5]> =
    std::sync::LazyLock::new(|| LONE_CELLS.map(window));

/// Where the live cells of each of [`LONE_CELLS`] are, from four rows of 128 cells (`a` the
/// top row of the envelope): bit `x` where its envelope's corner may be in column `x`.
#[inline(always)]
fn lone_starts([a, b, c, d]: [u128; 4]) -> [u64; 5] {
    [
        a & a >> 1 & b & b >> 1,
        b & b >> 1 & b >> 2,
        (a & b & c) >> 1,
        (a & a >> 1 & c & c >> 1) >> 1 & b & b >> 3,
        (a & d) >> 1 & b & b >> 2 & c & c >> 2,
    ]
    .map(|at| at as u64)
}

/// Takes out of rows of bits as [`clusters_of_rows`] takes them (`live` and `envelope`,
/// `across` 64-bit words a row; `envelope` the cells of `live` and of its next generation, an
/// ash of period 1 or 2) every block, blinker and beehive that is a cluster of its own (no
/// other cell of the envelope within √5 of its envelope), with `found` told each kind's live
/// cells (from its envelope's corner) and how many there were, where there were some: what
/// [`clusters_of_rows`] then finds is the rest.
pub(crate) fn take_lone(
    across: usize,
    live: &mut [u64],
    envelope: &mut [u64],
    mut found: impl FnMut(&[(i64, i64)], u64),
) {
    // Word j of row y, with the row's next word (if any) in the high 64 bits.
    let two = |bits: &[u64], y: usize, j: usize| {
        let i = y * across + j;
        let next = if j + 1 < across { bits[i + 1] } else { 0 };
        bits[i] as u128 | (next as u128) << 64
    };
    // The eight cells of row y from column x.
    let eight = |bits: &[u64], y: usize, x: usize| (two(bits, y, x / 64) >> (x % 64)) as u64 & 0xff;
    let clear = |bits: &mut [u64], y: usize, x: usize, cells: u8| {
        let (i, cells) = (y * across + x / 64, (cells as u128) << (x % 64));
        bits[i] &= !(cells as u64);
        if cells >> 64 != 0 {
            bits[i + 1] &= !((cells >> 64) as u64);
        }
    };
    let kinds = &*LONE;
    let mut taken = [0u64; 5];
    // Windows from row y; their objects' envelopes from row y + 2 (every cell is two or more
    // rows and columns inside the rows, so every window is inside them too). Down each column
    // of words the four rows the objects' live cells may be in slide a row at a time, each row
    // read once: an object taken out stays in them, but whatever they then show of it fails
    // the check against the envelope (read afresh), which no longer has its cells.
    let windows = (live.len() / across).saturating_sub(7);
    if windows == 0 {
        return;
    }
    for j in 0..across {
        let mut rows = [0, two(live, 2, j), two(live, 3, j), two(live, 4, j)];
        for y in 0..windows {
            rows = [rows[1], rows[2], rows[3], two(live, y + 5, j)];
            if rows.iter().all(|&r| r as u64 == 0) {
                continue;
            }
            for (k, mut at) in lone_starts(rows).into_iter().enumerate() {
                let (lone, near) = &kinds[k];
                while at != 0 {
                    // The window's corner, two columns left of the envelope's.
                    let corner = (64 * j + at.trailing_zeros() as usize).checked_sub(2);
                    at &= at - 1;
                    let Some(x) = corner else { continue };
                    // Its live cells are there. Where its envelope is all the envelope has
                    // within √5 of it, it is a cluster of its own, with no other live cell:
                    // a block's or beehive's envelope is its live cells, and a blinker with an
                    // end of its other phase live too would make a birth beside it that is
                    // not in its envelope.
                    let alone = (0..8).all(|r| {
                        let near = near[r] as u64;
                        eight(envelope, y + r, x) & near == lone.envelope[r] as u64
                    });
                    if alone {
                        for r in 0..8 {
                            clear(envelope, y + r, x, lone.envelope[r]);
                            clear(live, y + r, x, lone.live[r]);
                        }
                        taken[k] += 1;
                    }
                }
            }
        }
    }
    for (cells, &n) in LONE_CELLS.iter().zip(&taken) {
        if n > 0 {
            found(cells, n);
        }
    }
}

/// The cells next to a cell (as a king moves) and the cell: (rows down, the columns from two to
/// the left as bits), as [`JOINED`] gives them.
const TOUCHING: [(i64, u64); 3] = [(-1, 0b01110), (0, 0b01110), (1, 0b01110)];

/// The cells within √5 of a cell, row by row: (rows down, the columns from two to the left
/// as bits).
const JOINED: [(i64, u64); 5] = [
    (-2, 0b01110),
    (-1, 0b11111),
    (0, 0b11111),
    (1, 0b11111),
    (2, 0b01110),
];

/// The clusters of `left` (every cell of `order`, which it empties) joined within √5, each
/// started from its first cell in `order`; each cluster's cells in `alive`.
fn joined(
    order: &[(i64, i64)],
    alive: &HashSet<(i64, i64)>,
    left: &mut HashSet<(i64, i64)>,
) -> Vec<Vec<(i64, i64)>> {
    let mut out = Vec::new();
    let mut stack = Vec::new();
    for &start in order {
        if !left.remove(&start) {
            continue;
        }
        stack.push(start);
        let mut cluster = Vec::new();
        while let Some((x, y)) = stack.pop() {
            if alive.contains(&(x, y)) {
                cluster.push((x, y));
            }
            for (dy, row) in JOINED {
                for dx in (0..5).filter(|dx| row >> dx & 1 != 0) {
                    let cell = (x + dx - 2, y + dy);
                    if left.remove(&cell) {
                        stack.push(cell);
                    }
                }
            }
        }
        if !cluster.is_empty() {
            out.push(cluster);
        }
    }
    out
}

/// Cells of a box as bits, row by row, `width` bits a row from (x0, y0), bit `i` of the box
/// bit `i % 64` of word `i / 64`; every cell within two of the cells it was made
/// [`Grid::around`] lies in it.
struct Grid {
    x0: i64,
    y0: i64,
    width: usize,
    bits: Vec<u64>,
}

impl Grid {
    /// Bits a grid may have; cells spread wider are kept in a hash set.
    const MOST_BITS: usize = 1 << 22;

    /// An empty grid over `cells`' bounding box and two cells round it, where that is at most
    /// [`Grid::MOST_BITS`].
    fn around<'a>(cells: impl IntoIterator<Item = &'a (i64, i64)>) -> Option<Grid> {
        let (l, t, r, b) = bounds(cells)?;
        let width = (r - l + 5) as usize;
        let bits = width.checked_mul((b - t + 5) as usize)?;
        (bits <= Grid::MOST_BITS).then(|| Grid {
            x0: l - 2,
            y0: t - 2,
            width,
            bits: vec![0; bits.div_ceil(64)],
        })
    }

    /// An empty grid of the same box.
    fn empty(&self) -> Grid {
        Grid {
            bits: vec![0; self.bits.len()],
            ..*self
        }
    }

    fn index(&self, (x, y): (i64, i64)) -> usize {
        (y - self.y0) as usize * self.width + (x - self.x0) as usize
    }

    fn insert(&mut self, cell: (i64, i64)) {
        let i = self.index(cell);
        self.bits[i / 64] |= 1 << (i % 64);
    }

    fn contains(&self, i: usize) -> bool {
        self.bits[i / 64] >> (i % 64) & 1 != 0
    }

    /// The cells of `mask` (five bits) from bit `i` on that are set, as bits from `i`; they are
    /// cleared. Bit `i + 4` is in the grid.
    fn take(&mut self, i: usize, mask: u64) -> u64 {
        let (w, b) = (i / 64, i % 64);
        let mut found = self.bits[w] >> b & mask;
        self.bits[w] &= !(found << b);
        if b > 59 {
            let high = self.bits[w + 1] << (64 - b) & mask;
            self.bits[w + 1] &= !(high >> (64 - b));
            found |= high;
        }
        found
    }

    /// The clusters of the cells set (which it clears) joined within √5, in the order of
    /// their first cells by row, then column; each cluster's cells in `alive` (of the same box).
    fn joined(&mut self, alive: &Grid) -> Vec<Vec<(i64, i64)>> {
        let mut out = Vec::new();
        // Cells to look round, (column, row) in the grid: a cell's index is found by a
        // multiply, where its place from its index would take a division.
        let mut stack: Vec<(usize, usize)> = Vec::new();
        let width = self.width;
        for w in 0..self.bits.len() {
            while self.bits[w] != 0 {
                let start = 64 * w + self.bits[w].trailing_zeros() as usize;
                self.bits[w] &= self.bits[w] - 1;
                stack.push((start % width, start / width));
                let mut cluster = Vec::new();
                while let Some((x, y)) = stack.pop() {
                    if alive.contains(y * width + x) {
                        cluster.push((self.x0 + x as i64, self.y0 + y as i64));
                    }
                    // Every cell set is two or more cells inside the box: the five rows and
                    // columns around it are in the grid.
                    for (dy, row) in JOINED {
                        let y = y.wrapping_add_signed(dy as isize);
                        let mut found = self.take(y * width + x - 2, row);
                        while found != 0 {
                            stack.push((x - 2 + found.trailing_zeros() as usize, y));
                            found &= found - 1;
                        }
                    }
                }
                if !cluster.is_empty() {
                    out.push(cluster);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apgcode::cells;

    #[test]
    fn the_gpus_kinds_are_each_object_in_each_orientation_and_phase_once() {
        let kinds = &*APART_KINDS;
        // Orientations and phases: a block has one, a blinker two, a toad eight (four
        // orientations of each of its two phases).
        let of = |code: &str| kinds.iter().filter(|k| k.codes == [code]).count();
        let counts: Vec<usize> = NAMED_APART.iter().map(|&code| of(code)).collect();
        assert_eq!(counts, [1, 2, 2, 4, 4, 2, 1, 1, 4, 8, 4, 2]);
        assert_eq!(counts.iter().sum::<usize>(), kinds.len());
        for (i, kind) in kinds.iter().enumerate() {
            assert!(kinds[..i].iter().all(|k| k.window != kind.window));
        }
        // take_lone's kinds are among them.
        for (lone, _) in LONE.iter() {
            assert!(kinds.iter().any(|k| k.window == *lone));
        }
        // A block's window: its cells two rows and columns in, and round them the cells next
        // to them, and those within √5.
        let (block, near) = window(&[(0, 0), (1, 0), (0, 1), (1, 1)]);
        let square = [0, 0, 0b1100, 0b1100, 0, 0, 0, 0];
        assert_eq!((block.live, block.envelope), (square, square));
        assert_eq!(
            block.around,
            [0, 0b11110, 0b11110, 0b11110, 0b11110, 0, 0, 0]
        );
        let round = [
            0b11110, 0b111111, 0b111111, 0b111111, 0b111111, 0b11110, 0, 0,
        ];
        assert_eq!(near, round);
    }

    #[test]
    fn lone_objects_are_taken_where_nothing_is_within_reach() {
        // Each kind found where its live cells are, and nowhere else.
        for (k, cells) in LONE_CELLS.iter().enumerate() {
            let mut rows = [0u128; 4];
            for &(x, y) in cells.iter() {
                rows[y as usize] |= 1 << (x + 70);
            }
            let starts = lone_starts([rows[0] >> 10, rows[1] >> 10, rows[2] >> 10, rows[3] >> 10]);
            assert_eq!(starts[k], 1 << 60, "kind {k}");
        }
        // Rows of two words: a block, a blinker lying across the words' end, a beehive, a
        // block with a cell beyond √5 of it (two columns right and two rows down of its
        // corner), and blocks with a cell within √5 of them (two columns right and one row
        // down, two rows down).
        let (across, height) = (2, 24);
        let (mut live, mut envelope) = (vec![0u64; across * height], vec![0u64; across * height]);
        let set =
            |bits: &mut Vec<u64>, x: usize, y: usize| bits[y * across + x / 64] |= 1 << (x % 64);
        let block = [(5, 3), (6, 3), (5, 4), (6, 4)];
        let blinker = [(62, 5), (63, 5), (64, 5)];
        let other_phase = [(63, 4), (63, 5), (63, 6)];
        let beehive = [(30, 14), (31, 14), (29, 15), (32, 15), (30, 16), (31, 16)];
        let spaced = [(40, 3), (41, 3), (40, 4), (41, 4), (43, 6)];
        let crowded = [
            (10, 12),
            (11, 12),
            (50, 12),
            (51, 12),
            (10, 13),
            (11, 13),
            (50, 13),
            (51, 13),
            (13, 14),
            (50, 15),
        ];
        let all = [&block[..], &blinker, &beehive, &spaced, &crowded];
        for &(x, y) in all.into_iter().flatten() {
            set(&mut live, x, y);
            set(&mut envelope, x, y);
        }
        for &(x, y) in &other_phase {
            set(&mut envelope, x, y);
        }
        let mut found = Vec::new();
        take_lone(across, &mut live, &mut envelope, |cells, n| {
            found.push((cells.to_vec(), n))
        });
        let kinds: Vec<(usize, u64)> = found
            .iter()
            .map(|(cells, n)| {
                (
                    LONE_CELLS.iter().position(|c| c == cells).expect("a kind"),
                    *n,
                )
            })
            .collect();
        assert_eq!(kinds, [(0, 2), (1, 1), (3, 1)]);
        let mut left = Vec::new();
        for (i, &word) in live.iter().enumerate() {
            (0..64).filter(|b| word >> b & 1 != 0).for_each(|b| {
                left.push((64 * (i % across) + b, i / across));
            });
        }
        left.sort_unstable_by_key(|&(x, y)| (y, x));
        let mut kept = crowded.to_vec();
        kept.insert(0, (43, 6));
        assert_eq!(left, kept);
        assert_eq!(live, envelope);
    }

    #[test]
    fn a_gun_grows_by_a_glider_a_period() {
        // Gosper's gun: its population's change over 30 generations is one glider (5 cells)
        // from the start, the same at every generation (q = 1), 5 over a period (m0).
        let gun = cells(&[
            "........................o...........",
            "......................o.o...........",
            "............oo......oo............oo",
            "...........o...o....oo............oo",
            "oo........o.....o...oo..............",
            "oo........o...o.oo....o.o...........",
            "..........o.....o.......o...........",
            "...........o...o....................",
            "............oo......................",
        ]);
        let code = linear_growth(&gun).expect("linear growth");
        assert!(code.starts_with("yl30_1_5_"), "{code}");
        assert_eq!(code.len(), "yl30_1_5_".len() + 32, "{code}");
        // A still life does not grow, and a blinker's population changes but does not grow.
        assert_eq!(linear_growth(&cells(&["oo", "oo"])), None);
        assert_eq!(linear_growth(&cells(&["ooo"])), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// The board finds what running the cells as a universe finds, ships and sparks alike.
        #[test]
        fn motion_is_the_cycle(cells in proptest::collection::btree_set((0i64..12, 0i64..12), 1..24)) {
            let cells: Vec<(i64, i64)> = cells.into_iter().collect();
            let cycled = cycle(&cells, SHIP_GENERATIONS)
                .ok()
                .map(|(phases, displacement)| (phases.len() as u64, displacement));
            proptest::prop_assert_eq!(motion(&cells, SHIP_GENERATIONS), Some(cycled));
        }

        /// Cells looked up as bits and in a hash set join into the same clusters, in the same
        /// order (each cluster's cells in an order of their own).
        #[test]
        fn clusters_by_grid_are_by_hash(
            envelope in proptest::collection::btree_set((-70i64..70, -20i64..20), 1..80),
            keep in proptest::collection::vec(proptest::bool::ANY, 80),
        ) {
            let order: Vec<(i64, i64)> = {
                let mut o: Vec<_> = envelope.iter().copied().collect();
                o.sort_unstable_by_key(|&(x, y)| (y, x));
                o
            };
            let live: Vec<(i64, i64)> =
                order.iter().zip(&keep).filter(|(_, &k)| k).map(|(&c, _)| c).collect();
            let mut left = Grid::around(&order).expect("a small box");
            let mut alive = left.empty();
            for &c in &live {
                alive.insert(c);
            }
            for &c in &order {
                left.insert(c);
            }
            let by_grid = left.joined(&alive);
            let alive: HashSet<(i64, i64)> = live.iter().copied().collect();
            let mut left: HashSet<(i64, i64)> = order.iter().copied().collect();
            let sorted = |clusters: &[Vec<(i64, i64)>]| -> Vec<Vec<(i64, i64)>> {
                clusters.iter().map(|c| { let mut c = c.clone(); c.sort_unstable(); c }).collect()
            };
            proptest::prop_assert_eq!(sorted(&by_grid), sorted(&joined(&order, &alive, &mut left)));
            proptest::prop_assert_eq!(by_grid, clusters(&live, &order));
        }
    }

    #[test]
    fn ships_move_on_the_board() {
        let glider = cells(&[".o.", "..o", "ooo"]);
        assert_eq!(motion(&glider, SHIP_GENERATIONS), Some(Some((4, (1, 1)))));
        let lwss = cells(&[".o..o", "o....", "o...o", "oooo."]);
        assert_eq!(motion(&lwss, SHIP_GENERATIONS), Some(Some((4, (-2, 0)))));
        // Too wide for the board with room to grow: left to the universe.
        let wide: Vec<(i64, i64)> = (0..50).map(|x| (x, 0)).collect();
        assert_eq!(motion(&wide, SHIP_GENERATIONS), None);
    }

    #[test]
    fn pseudo_objects_split_and_true_ones_do_not() {
        let mut c = Classifier::default();
        // A bi-block: two blocks a column apart.
        assert_eq!(
            c.classify(&cells(&["oo.oo", "oo.oo"])).codes,
            ["xs4_33", "xs4_33"]
        );
        // A ship-tie: two ships touching corner to corner, one object.
        let tie = cells(&["oo....", "o.o...", ".oo...", "...oo.", "...o.o", "....oo"]);
        assert_eq!(c.classify(&tie).codes, ["xs12_g8o653z11"]);
        // A block beside a blinker.
        let mut codes = c
            .classify(&cells(&["oo....", "oo....", "......", "...ooo"]))
            .codes
            .clone();
        codes.sort();
        assert_eq!(codes, ["xp2_7", "xs4_33"]);
        // A glider moves.
        let glider = c.classify(&cells(&[".o.", "..o", "ooo"]));
        assert_eq!((glider.codes[0], glider.displacement), ("xq4_153", (1, 1)));
    }

    #[test]
    fn clusters_join_within_root_five() {
        let live = cells(&["oo...oo", "oo...oo"]);
        assert_eq!(clusters(&live, &[]).len(), 2);
        let live = cells(&["oo.oo", "oo.oo"]);
        assert_eq!(clusters(&live, &[]).len(), 1);
        // Knight's-move apart joins; (3, 0) does not.
        assert_eq!(clusters(&[(0, 0), (2, 1)], &[]).len(), 1);
        assert_eq!(clusters(&[(0, 0), (3, 0)], &[]).len(), 2);
        // Spread too wide for a grid: looked up by hash.
        let far = [(0, 0), (1, 0), (4000, 4000), (4001, 4001)];
        assert!(Grid::around(&far).is_none());
        assert_eq!(
            clusters(&far, &[]),
            [vec![(0, 0), (1, 0)], vec![(4000, 4000), (4001, 4001)]]
        );
    }
}
