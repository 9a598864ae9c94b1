//! The soup census: each soup run on the plane until it settles, its escaping ships counted
//! and taken away, its ash cut into objects and each named ([`crate::objects`]); the counts of
//! many soups gathered into a haul in apgsearch's format.
//!
//! A soup has settled when the whole pattern, escaping ships taken away, is exactly what it
//! was some generations before, where it was: from then on it repeats for ever. A ship
//! (glider, *WSS, any cluster that moves) escapes when it lies past the rest of the pattern by
//! [`CLEARANCE`] cells on a side it moves towards; it is counted by its apgcode then. This is
//! the true ash, not apgsearch's guess from populations (docs/benchmarks/census.md lists where the
//! two differ).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::apgcode::{self, Code};
use crate::objects::{clusters, Classifier, Named};
use crate::soup::{self, Rows};
use crate::universe::{bounds, Box4, Envelope, Shot, Universe};

/// Cells a ship must lie past the rest of the pattern, towards where it moves, to be taken as
/// escaping.
pub const CLEARANCE: i64 = 12;

/// Generations a soup may run before it is given up as not settling.
pub const MOST_GENERATIONS: u64 = 1 << 15;

/// Generations between two looks for escaping ships. A look (clusters on the edges, each run
/// as a possible ship) costs as much as a few hundred generations of a soup, and a pattern
/// rarely settles but for its ships long before they are gone: 256 made the census 20% faster
/// than 32, with the same tallies (6 × 10^4 soups).
const LOOK_EVERY: u64 = 256;

/// Generations a shot of the pattern taken at generation `at` is kept, looking for the pattern
/// back where it was (periods up to that are found then): 32 at first, more for patterns that
/// run longer, so that long periods are found too.
fn shot_every(at: u64) -> u64 {
    (at / 16).next_power_of_two().max(32)
}

/// What one soup left.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Objects by apgcode.
    pub objects: BTreeMap<Code, u64>,
    /// A generation from which it repeats: the first for periods 1 and 2, and within a few
    /// periods of the first for longer ones (or the generation where it was given up).
    pub settled_at: u64,
    /// Its period then (0: it died out or was given up).
    pub period: u64,
}

impl Tally {
    pub(crate) fn add(&mut self, code: Code, n: u64) {
        *self.objects.entry(code).or_default() += n;
    }
}

/// Applies `change` to the value of `code` in `map`, made (the default) where there is none:
/// looked up before the code is copied into a key, as most codes are there already.
fn update<V: Default>(map: &mut BTreeMap<String, V>, code: &str, change: impl FnOnce(&mut V)) {
    match map.get_mut(code) {
        Some(value) => change(value),
        None => change(map.entry(code.to_string()).or_default()),
    }
}

/// Takes away the ships that escape from `u`, counting them in `tally`: whether any went.
///
/// Only a ship on an edge of the pattern's box can escape: it does when, on a side it moves
/// towards, it lies past everything else by [`CLEARANCE`] cells (ships on the edges flying
/// at its velocity apart), and no other ship on the edges moves that way faster.
fn clear_escaping(
    u: &mut Universe,
    classifier: &mut Classifier,
    clearance: i64,
    tally: &mut Tally,
    flights: &mut Vec<Flight>,
    looks: &mut Vec<Look>,
) -> bool {
    // Ships on the edges, then those on the edges of what is left, and so on (a train of
    // gliders flies one behind another), each taken away for the next look.
    let mut ships: Vec<Ship> = Vec::new();
    for _ in 0..SHIP_ROUNDS {
        let found: Vec<_> = u
            .edge_clusters(SHIP_CELLS)
            .into_iter()
            .filter_map(|cells| {
                let (named, period) = classifier.ship(&cells)?;
                Some((cells, named, period))
            })
            .collect();
        if found.is_empty() {
            break;
        }
        for (cells, _, _) in &found {
            for &(x, y) in cells {
                u.set(x, y, false);
            }
        }
        ships.extend(found);
    }
    // The box of everything but these ships.
    let rest = u.bounds();
    looks.push((u.generation, rest));
    if ships.is_empty() {
        return false;
    }
    for (cells, _, _) in &ships {
        for &(x, y) in cells {
            u.set(x, y, true);
        }
    }
    let boxes: Vec<Box4> = ships
        .iter()
        .map(|(cells, _, _)| bounds(cells).expect("cells"))
        .chain(rest)
        .collect();
    let mut escaping = Vec::new();
    for (i, (_, named, period)) in ships.iter().enumerate() {
        let (dx, dy) = named.displacement;
        let (l, t, r, b) = boxes[i];
        // Its velocity, in cells a generation times the product of the periods, along the
        // sides right, left, down and up.
        let along = |(x, y): (i64, i64), scale: i64| [x * scale, -x * scale, y * scale, -y * scale];
        let mine = along((dx, dy), 1);
        // Apart from each other thing along a side it moves towards, where the other does
        // not move that way as fast.
        let escapes = boxes.iter().enumerate().all(|(j, &(ol, ot, or, ob))| {
            if j == i {
                return true;
            }
            let (theirs, scale) = match ships.get(j) {
                Some((_, o, p)) if (o.displacement, *p) == (named.displacement, *period) => {
                    return true
                }
                Some((_, o, p)) => (along(o.displacement, *period as i64), *p as i64),
                None => ([0; 4], 1),
            };
            let past = [
                l > or + clearance,
                r < ol - clearance,
                t > ob + clearance,
                b < ot - clearance,
            ];
            (0..4).any(|s| mine[s] > 0 && past[s] && theirs[s] <= mine[s] * scale)
        });
        let sides = [escapes];
        if sides.iter().any(|&s| s) {
            escaping.push(i);
        }
    }
    for &i in &escaping {
        let (cells, named, period) = &ships[i];
        for &(x, y) in cells {
            u.set(x, y, false);
        }
        flights.push(Flight {
            glider: named.codes == [GLIDER],
            bounds: boxes[i],
            at: u.generation,
            displacement: named.displacement,
            period: *period,
            codes: named.codes.clone(),
            cells: cells.clone(),
        });
        for &code in &named.codes {
            tally.add(code, 1);
        }
    }
    !escaping.is_empty()
}

/// A look for ships: its generation, and the box of everything but the ships on the edges.
type Look = (u64, Option<Box4>);

/// A ship on an edge: its cells, its name and its period.
type Ship = (Vec<(i64, i64)>, Named, u64);

/// A ship taken away: where it was, when, and how it moves.
pub(crate) struct Flight {
    /// Whether it is a glider (apgsearch takes away gliders only, and a soup that left nothing
    /// else has died).
    pub(crate) glider: bool,
    pub(crate) bounds: Box4,
    pub(crate) at: u64,
    pub(crate) displacement: (i64, i64),
    pub(crate) period: u64,
    /// Its apgcodes.
    pub(crate) codes: Vec<Code>,
    /// Its cells when taken away.
    pub(crate) cells: Vec<(i64, i64)>,
}

impl Flight {
    /// The same ship, `dx` cells further across and `dy` down: as a larger box sees it, or a
    /// glider's phase placed where the kernel took it away.
    pub(crate) fn moved_by(&self, (dx, dy): (i64, i64)) -> Flight {
        let (l, t, r, b) = self.bounds;
        Flight {
            bounds: (l + dx, t + dy, r + dx, b + dy),
            cells: self.cells.iter().map(|&(x, y)| (x + dx, y + dy)).collect(),
            codes: self.codes.clone(),
            ..*self
        }
    }

    /// Its cells at generation `t` (from when it was taken away), flown there untouched; in
    /// order.
    pub(crate) fn cells_at(&self, t: u64) -> Vec<(i64, i64)> {
        let generations = t - self.at;
        let periods = (generations / self.period) as i64;
        let (dx, dy) = (self.displacement.0 * periods, self.displacement.1 * periods);
        let moved: Vec<(i64, i64)> = self.cells.iter().map(|&(x, y)| (x + dx, y + dy)).collect();
        let mut u = Universe::of(&moved);
        for _ in 0..generations % self.period {
            u.step();
        }
        let mut now = u.cells();
        now.sort_unstable();
        now
    }

    /// The first generation after `t` (from when it was taken away) where its box
    /// ([`Flight::at`]) moves: where its next period ends.
    fn next_move(&self, t: u64) -> u64 {
        self.at + ((t - self.at) / self.period + 1) * self.period
    }

    /// Its box at generation `t` (from when it was taken away), grown by `margin`: where it
    /// would be, give or take the cells a ship sways within its period.
    fn at(&self, t: u64, margin: i64) -> Box4 {
        let periods = (t - self.at) as i64 / self.period as i64;
        let (dx, dy) = (self.displacement.0 * periods, self.displacement.1 * periods);
        let sway = self.period as i64;
        let (l, t, r, b) = self.bounds;
        (
            l + dx - margin - sway,
            t + dy - margin - sway,
            r + dx + margin + sway,
            b + dy + margin + sway,
        )
    }
}

/// Cells between two boxes, the larger of the gaps across and down (0 where they overlap).
fn gap(a: Box4, b: Box4) -> i64 {
    let across = (b.0 - a.2).max(a.0 - b.2).max(0);
    let down = (b.1 - a.3).max(a.1 - b.3).max(0);
    across.max(down)
}

fn overlap(a: Box4, b: Box4) -> bool {
    a.0 <= b.2 && b.0 <= a.2 && a.1 <= b.3 && b.1 <= a.3
}

/// Whether every ship taken away truly escaped: nothing else came near where the ship would
/// have been, up to the last look, when the rest began to repeat; nor does it ever meet
/// another ship taken away. What else there was each generation lies within the pattern's box
/// (`boxes`) and within the box of all but ships at the last look, grown by a cell a
/// generation since.
fn flights_clear(flights: &[Flight], looks: &[Look], boxes: &[Option<Box4>]) -> bool {
    let last = looks.last().map_or(0, |l| l.0);
    for f in flights {
        let mut look = 0;
        for t in f.at..=last {
            while look + 1 < looks.len() && looks[look + 1].0 <= t {
                look += 1;
            }
            let (seen, rest) = looks[look];
            let (Some((l, top, r, b)), Some(Some(whole))) = (rest, boxes.get(t as usize)) else {
                continue;
            };
            let grown = t.saturating_sub(seen) as i64;
            let near = (
                (l - grown).max(whole.0),
                (top - grown).max(whole.1),
                (r + grown).min(whole.2),
                (b + grown).min(whole.3),
            );
            if overlap(f.at(t, 2), near) {
                return false;
            }
        }
    }
    !flights_meet(flights, false)
}

/// Whether two of the ships taken away meet; where `strict`, also two that are within reach
/// of each other when the later of them is taken away: ships of one velocity where their
/// cells come within reach ([`in_reach`]), others where their boxes do.
pub(crate) fn flights_meet<F: std::borrow::Borrow<Flight>>(flights: &[F], strict: bool) -> bool {
    for (i, f) in flights.iter().enumerate() {
        let f = f.borrow();
        for g in &flights[i + 1..] {
            let g = g.borrow();
            let from = f.at.max(g.at);
            let together = (f.displacement, f.period) == (g.displacement, g.period);
            if together && !strict {
                // Ships of one velocity keep their distance: only the strict check meets them.
                continue;
            }
            let boxes = (f.at(from, 0), g.at(from, 0));
            if strict && gap(boxes.0, boxes.1) <= 2 && (!together || in_reach(f, g, from)) {
                return true;
            }
            // The boxes move only where a period of one ship or the other ends: the gap is
            // looked at then.
            let moves =
                std::iter::successors(Some(from), |&t| Some(f.next_move(t).min(g.next_move(t))));
            if !together && boxes_meet(f, g, from, boxes, moves.skip(1)) {
                return true;
            }
        }
    }
    false
}

/// Whether the boxes of two ships of different velocities, flown untouched, meet after
/// generation `from` (the later of the two was taken away then; their boxes were `boxes`) at
/// one of the generations `times` (after `from`, in order, each generation where either box
/// moves among them): where they come nearer than they were and within reach. Both move in
/// straight lines, so the gap between them falls, then rises for ever (give or take the cells
/// they move at once): once it is well past its least, they never meet.
fn boxes_meet(
    f: &Flight,
    g: &Flight,
    from: u64,
    (a, b): (Box4, Box4),
    times: impl Iterator<Item = u64>,
) -> bool {
    if least_gap_after(f, g, a, b) > 2 {
        return false;
    }
    let start = gap(a, b);
    let mut least = start;
    for t in times.take_while(|&t| t < from + MEETING_HORIZON) {
        let now = gap(f.at(t, 0), g.at(t, 0));
        if now < start && now <= 2 {
            return true;
        }
        least = least.min(now);
        if now > least + PAST_LEAST {
            return false;
        }
    }
    false
}

/// A bound below the gap between the boxes of two ships flown untouched ([`Flight::at`]) at
/// every generation from one on, where their boxes are `a` and `b`: on each axis along which
/// one box never gains on the other, the gap there then, less the cells each box may lag or
/// lead its mean motion (a box moves its ship's whole displacement at the end of each period,
/// so it is never further than that from where the ship's mean speed puts it). Two ships whose
/// paths only part cost one look.
fn least_gap_after(f: &Flight, g: &Flight, a: Box4, b: Box4) -> i64 {
    let (fp, gp) = (f.period as i64, g.period as i64);
    let axis = |(f_low, f_high): (i64, i64), (g_low, g_high): (i64, i64), df: i64, dg: i64| {
        // g's speed along the axis less f's, times both periods.
        let faster = dg * fp - df * gp;
        let lag = df.abs() + dg.abs();
        let mut least = 0;
        if faster >= 0 {
            least = least.max(g_low - f_high - lag);
        }
        if faster <= 0 {
            least = least.max(f_low - g_high - lag);
        }
        least
    };
    let (fd, gd) = (f.displacement, g.displacement);
    axis((a.0, a.2), (b.0, b.2), fd.0, gd.0).max(axis((a.1, a.3), (b.1, b.3), fd.1, gd.1))
}

/// Whether two ships of one velocity, flown untouched from generation `from`, ever have cells
/// within two cells of each other (a cell with neighbours in both, which neither would have
/// alone). Where they never do, each runs as it would alone. Their places to each other come
/// back every period, so one period from `from` shows it.
fn in_reach(f: &Flight, g: &Flight, from: u64) -> bool {
    let (mut a, mut b) = (
        Universe::of(&f.cells_at(from)),
        Universe::of(&g.cells_at(from)),
    );
    for _ in 0..f.period {
        let (near, far) = (a.cells(), b.cells());
        let reach = |p: &(i64, i64)| {
            far.iter()
                .any(|q| (p.0 - q.0).abs().max((p.1 - q.1).abs()) <= 2)
        };
        if near.iter().any(reach) {
            return true;
        }
        a.step();
        b.step();
    }
    false
}

/// Generations two ships taken away are followed, looking for a meeting: ships of different
/// velocities in soups are far apart by then.
const MEETING_HORIZON: u64 = 4096;

/// Cells the gap between two ships taken away must grow past its least so far to be known to
/// grow for ever: more than the few cells a ship moves at once, either way.
const PAST_LEAST: i64 = 8;

/// Rounds of looking for ships on the edges, each inside the last.
const SHIP_ROUNDS: usize = 8;

/// The most cells of a cluster looked at as a ship.
const SHIP_CELLS: usize = 24;

/// The census of the soup `rows`, placed as apgsearch places it (its top-left cell at (8, 8)).
///
/// Ships are taken away once [`CLEARANCE`] cells past the rest; where one of them turns out not
/// to have escaped (something came near where it would have flown), the soup is run again
/// with four times the clearance, up to [`MOST_CLEARANCE`].
pub fn soup(rows: &Rows, classifier: &mut Classifier) -> Tally {
    let mut clearance = CLEARANCE;
    loop {
        let last = clearance >= MOST_CLEARANCE;
        if let Some(tally) = soup_with(rows, classifier, clearance, last) {
            return tally;
        }
        clearance *= 4;
    }
}

/// The clearance of the last run of a soup, whose ships are taken as escaped whatever comes
/// near them later.
pub const MOST_CLEARANCE: i64 = 16 * CLEARANCE;

/// [`soup`] with ships taken away `clearance` cells past the rest; `None` when one of them did
/// not escape (unless `last`).
fn soup_with(
    rows: &Rows,
    classifier: &mut Classifier,
    clearance: i64,
    last: bool,
) -> Option<Tally> {
    let cells: Vec<(i64, i64)> = soup::cells(rows)
        .into_iter()
        .map(|(x, y)| (x + 8, y + 8))
        .collect();
    let mut u = Universe::of(&cells);
    let mut tally = Tally::default();
    // The pattern as it was at some generation, to find it back: periods beyond two.
    let mut shot: Option<(u64, Shot)> = None;
    let mut flights = Vec::new();
    let mut looks = Vec::new();
    let mut boxes = Vec::new();
    let period = loop {
        if u.generation.is_multiple_of(LOOK_EVERY)
            && u.generation > 0
            && clear_escaping(
                &mut u,
                classifier,
                clearance,
                &mut tally,
                &mut flights,
                &mut looks,
            )
        {
            shot = None;
        }
        boxes.push(u.bounds());
        if u.is_empty() {
            tally.settled_at = u.generation;
            break 0;
        }
        if u.repeats_in_two() {
            // Still lifes and blinkers alone: period 2 (1 if nothing changed at all).
            tally.settled_at = u.generation - 2;
            break 2;
        }
        match &shot {
            Some((at, was)) if u.is(was) => {
                tally.settled_at = *at;
                break u.generation - at;
            }
            Some((at, _)) if u.generation - at < shot_every(*at) => {}
            _ => shot = Some((u.generation, u.shot())),
        }
        if u.generation >= MOST_GENERATIONS {
            tally.settled_at = u.generation;
            break 0;
        }
        u.step();
    };
    looks.push((u.generation, u.bounds()));
    if !last && !flights_clear(&flights, &looks, &boxes) {
        return None;
    }
    if period == 0 && u.is_empty() {
        // Died, as apgsearch sees it: nothing left but gliders flown away.
        let died = flights.iter().all(|f| f.glider);
        if died && tally.settled_at >= MESSLESS {
            if let Some(code) = long_lived(rows, tally.settled_at, true) {
                tally.add(apgcode::intern(&code), 1);
            }
        }
        return Some(tally);
    }
    tally.period = period;
    if period > 0 && tally.settled_at >= METHUSELAH {
        if let Some(code) = long_lived(rows, tally.settled_at, false) {
            tally.add(apgcode::intern(&code), 1);
        }
    }
    let ash = u.cells();
    if period > 0 {
        // The whole pattern's population, the ships taken away counted where they are now.
        let most = ash.len() + flights.len() * MOST_SHIP_CELLS;
        if most >= MEGASIZED {
            let ships: usize = flights
                .iter()
                .map(|f| population_after(&f.cells, (u.generation - f.at) % f.period))
                .sum();
            if let Some(code) = megasized(ash.len() + ships) {
                tally.add(apgcode::intern(&code), 1);
            }
        }
    }
    // Over a period, two generations at least; over apgsearch's 1,280 for a soup given up,
    // so that a switch engine's path joins it into one object, named by its growth.
    let history = match period {
        0 => GIVEN_UP_HISTORY,
        _ => period.max(2),
    };
    count_ash(&ash, history, None, classifier, &mut tally);
    Some(tally)
}

/// Generations over which the ash of a soup given up is cut into objects: apgsearch's history
/// run for a soup that did not settle (it gives up after 4,000 rounds and returns 1,280).
const GIVEN_UP_HISTORY: u64 = 1280;

/// The fewest cells of a settled soup, ships in flight included, that make it megasized.
pub(crate) const MEGASIZED: usize = 3000;

/// The most cells a ship taken away has in any phase (the heavyweight spaceship's 18).
pub(crate) const MOST_SHIP_CELLS: usize = 18;

/// apgsearch's pseudo-object for a soup that settles with `population` cells or more than
/// [`MEGASIZED`] (ships in flight included): `megasized_31h` for 3,100 to 3,199.
fn megasized(population: usize) -> Option<String> {
    (population >= MEGASIZED).then(|| format!("megasized_{}h", population / 100))
}

/// The apgcode of the glider.
pub(crate) const GLIDER: &str = "xq4_153";

/// The fewest generations a soup that died must have lived to be `messless_…h`.
const MESSLESS: u64 = 500;

/// The fewest generations a soup must have lived to be `methuselah_…k`.
const METHUSELAH: u64 = 25_000;

/// Generations run past a long-lived soup's settling, whose populations show its period.
const LIFETIME_TAIL: usize = 8000;

/// Periods of population looked for in the tail: those below this.
const LIFETIME_PERIODS: usize = 4000;

/// apgsearch's pseudo-object for a soup that lived long, `settled_at` being when it settled
/// (or died, if `died`), by [`lifetime_code`]. Its lifetime is apgsearch's ([`lifetime`]):
/// the soup run again with nothing taken away, its population each generation up to
/// [`LIFETIME_TAIL`] past `settled_at` is periodic from there on, with the period that those
/// last generations show.
fn long_lived(rows: &Rows, settled_at: u64, died: bool) -> Option<String> {
    let populations = populations(rows, settled_at + LIFETIME_TAIL as u64).ok()?;
    lifetime_code(lifetime(&populations)?, died)
}

/// apgsearch's pseudo-object for a soup that lived `lifetime` generations (and then died, if
/// `died`): `messless_<l/100>h` for one that died after 500 generations or more,
/// `methuselah_<l/1000>k` for one that lived 25,000 or more.
pub fn lifetime_code(lifetime: u64, died: bool) -> Option<String> {
    if died && lifetime >= MESSLESS {
        Some(format!("messless_{}h", lifetime / 100))
    } else if lifetime >= METHUSELAH {
        Some(format!("methuselah_{}k", lifetime / 1000))
    } else {
        None
    }
}

/// The generation from which `populations` (one a generation, from 0) repeat with the
/// shortest period below 4,000 that their last 8,000 show (apgsearch's): one past
/// the last that differs from the one a period later. `None` when the tail shows no period.
pub fn lifetime(populations: &[u64]) -> Option<u64> {
    let tail = &populations[populations.len().saturating_sub(LIFETIME_TAIL)..];
    let period = (1..LIFETIME_PERIODS.min(tail.len()))
        .find(|&p| tail[p..].iter().zip(tail).all(|(a, b)| a == b))?;
    let last = (0..populations.len() - period)
        .rev()
        .find(|&g| populations[g] != populations[g + period]);
    Some(last.map_or(0, |g| g as u64 + 1))
}

/// The populations of the soup `rows`, placed as apgsearch places it, run on the plane by
/// tiles with nothing taken away: one a generation, from generation 0 to `generations`.
fn populations(rows: &Rows, generations: u64) -> gol_core::Result<Vec<u64>> {
    let mut plane = plane_of(rows, gol_core::EngineId::Tiles)?;
    let stop = AtomicBool::new(false);
    let one = 1u32.into();
    let population =
        |plane: &dyn gol_plane::Plane| u64::try_from(plane.population()).unwrap_or(u64::MAX);
    let mut out = Vec::with_capacity(generations as usize + 1);
    out.push(population(&*plane));
    for _ in 0..generations {
        plane.step(&one, &stop)?;
        out.push(population(&*plane));
    }
    Ok(out)
}

/// The soup `rows` on the plane, placed as apgsearch places it (its top-left cell at (8, 8)),
/// run by `engine` on one thread.
fn plane_of(
    rows: &Rows,
    engine: gol_core::EngineId,
) -> gol_core::Result<Box<dyn gol_plane::Plane>> {
    let mut grid = gol_core::Grid::new(16, 16)?;
    for (x, y) in soup::cells(rows) {
        grid.set(x as usize, y as usize, true);
    }
    let options = gol_plane::Options {
        memory: 256 << 20,
        threads: 1,
        parallel_level: None,
    };
    let start = gol_plane::Start::Grid {
        grid: &grid,
        x: 8,
        y: 8,
    };
    gol_plane::new(engine, start, gol_core::Rule::LIFE, &options)
}

/// The population of `cells` run alone `generations` on.
fn population_after(cells: &[(i64, i64)], generations: u64) -> usize {
    let mut u = Universe::of(cells);
    for _ in 0..generations {
        u.step();
    }
    u.cells().len()
}

/// Counts in `tally` the objects of `live`: its clusters, joined within √5 over the live cells
/// and every cell alive in the next `generations`, each named. Where a `period` (at most
/// `generations`) is given, checks on the way that `live` is back where it was after it: where
/// it is not, counts nothing and returns false.
pub(crate) fn count_ash(
    live: &[(i64, i64)],
    generations: u64,
    period: Option<u64>,
    classifier: &mut Classifier,
    tally: &mut Tally,
) -> bool {
    let mut u = Universe::of(live);
    let start = period.map(|_| u.shot());
    let mut envelope = Envelope::of(&u);
    for generation in 1..=generations {
        u.step();
        if let (Some(period), Some(start)) = (period, &start) {
            if generation == period && !u.is(start) {
                return false;
            }
        }
        envelope.add(&u);
    }
    for cluster in clusters(live, &envelope.cells()) {
        for &code in &classifier.classify(&cluster).codes {
            tally.add(code, 1);
        }
    }
    true
}

/// What a soup truly leaves, for explaining where a census and apgsearch differ: the soup run
/// `generations` on the plane by HashLife with nothing taken away, then every cluster of what
/// is there named, ships in flight included (and `megasized_…h` where there are 3,000 cells or
/// more, as the census marks them).
pub fn truth(
    rows: &Rows,
    generations: u64,
    classifier: &mut Classifier,
) -> gol_core::Result<Tally> {
    let mut plane = plane_of(rows, gol_core::EngineId::Hashlife)?;
    plane.step(&generations.into(), &AtomicBool::new(false))?;
    let mut tally = Tally {
        settled_at: generations,
        ..Tally::default()
    };
    let Some(rect) = plane.bounding_box() else {
        return Ok(tally);
    };
    let (Some((x0, y0)), Some((w, h))) = (rect.corner(), rect.size()) else {
        return Err(gol_core::Error::Invalid("the soup went too far".into()));
    };
    let states = plane.cells(&rect.x, &rect.y, w as usize, h as usize);
    if let Some(code) = megasized(states.iter().filter(|&&s| s != 0).count()) {
        tally.add(apgcode::intern(&code), 1);
    }
    let live: Vec<(i64, i64)> = states
        .iter()
        .enumerate()
        .filter(|(_, &s)| s != 0)
        .map(|(i, _)| (x0 + (i as u64 % w) as i64, y0 + (i as u64 / w) as i64))
        .collect();
    // Over 60 generations: any period of ash up to 60 that divides it.
    count_ash(&live, 60, None, classifier, &mut tally);
    Ok(tally)
}

/// The census of many soups: counts, and the soups that show each code.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Haul {
    /// Soups censused.
    pub soups: u64,
    /// Objects by apgcode.
    pub counts: BTreeMap<String, u64>,
    /// Up to 10 soups that showed each code, as apgsearch picks them.
    pub samples: BTreeMap<String, Vec<u64>>,
}

/// The most soups listed for a code.
const SAMPLES: usize = 10;

/// A code's samples stop once it has been counted this often.
const SAMPLED_UP_TO: u64 = 1000;

impl Haul {
    /// Adds the tallies of soups `first`, `first + 1`, and so on (soups are added in index
    /// order), in parts on every core: each part's counts and first soups of each code made
    /// apart, then joined in order. (Soup by soup, in two ordered maps of strings, a GPU's
    /// round of 2^20 soups took 0.6 s of a core, which the GPUs' last round waited for.)
    pub fn add_all(&mut self, first: u64, tallies: &[Tally]) {
        let parts: Vec<Part> = tallies
            .par_chunks(PART)
            .enumerate()
            .map(|(p, part)| Part::of(first + (p * PART) as u64, part))
            .collect();
        self.soups += tallies.len() as u64;
        for part in parts {
            for (code, Seen { count: n, firsts }) in part.codes {
                let mut before = 0;
                update(&mut self.counts, code, |count| {
                    before = *count;
                    *count += n;
                });
                update(&mut self.samples, code, |samples| {
                    // A soup's count from the part's start only grows, so those past the limit
                    // end the list.
                    for (index, counted) in firsts {
                        if before + counted > SAMPLED_UP_TO || samples.len() == SAMPLES {
                            break;
                        }
                        samples.push(index);
                    }
                });
            }
        }
    }

    /// Objects in all.
    pub fn objects(&self) -> u64 {
        self.counts.values().sum()
    }

    /// The haul in apgsearch's format (its `@VERSION` line `gol` and its version).
    pub fn write(&self, root: &str, out: &mut String) {
        use std::fmt::Write;
        let mut rows: Vec<(&String, &u64)> = self.counts.iter().collect();
        rows.sort_by(|a, b| (b.1, b.0.as_bytes()).cmp(&(a.1, a.0.as_bytes())));
        let _ = writeln!(out, "testing");
        let _ = writeln!(out, "@VERSION gol-{}", env!("CARGO_PKG_VERSION"));
        let _ = writeln!(out, "@MD5 {}", md5_hex(root));
        let _ = writeln!(out, "@ROOT {root}");
        let _ = writeln!(out, "@RULE b3s23");
        let _ = writeln!(out, "@SYMMETRY C1");
        let _ = writeln!(out, "@NUM_SOUPS {}", self.soups);
        let _ = writeln!(out, "@NUM_OBJECTS {}", self.objects());
        let _ = writeln!(out);
        let _ = writeln!(out, "@CENSUS TABLE");
        for (code, n) in &rows {
            let _ = writeln!(out, "{code} {n}");
        }
        let _ = writeln!(out);
        let _ = writeln!(out, "@SAMPLE_SOUPIDS");
        for (code, _) in &rows {
            let ids: Vec<String> = self.samples[*code].iter().map(u64::to_string).collect();
            let _ = writeln!(out, "{code} {}", ids.join(" "));
        }
    }
}

/// Soups a part of [`Haul::add_all`] holds.
const PART: usize = 8192;

/// What consecutive soups add to a haul: for each code its count and the first soups that
/// show it ([`SAMPLES`] at most, while the count from the part's start is at most
/// [`SAMPLED_UP_TO`]), each with that count up to and including it.
struct Part {
    codes: FxHashMap<Code, Seen>,
}

/// A code in a [`Part`]: its count, and its first soups with the count up to each.
#[derive(Default)]
struct Seen {
    count: u64,
    firsts: Vec<(u64, u64)>,
}

impl Part {
    /// The part of `tallies`, those of soups `first` on.
    fn of(first: u64, tallies: &[Tally]) -> Part {
        let mut codes = FxHashMap::<Code, Seen>::default();
        for (i, tally) in tallies.iter().enumerate() {
            for (&code, &n) in &tally.objects {
                let seen = codes.entry(code).or_default();
                seen.count += n;
                if seen.count <= SAMPLED_UP_TO && seen.firsts.len() < SAMPLES {
                    seen.firsts.push((first + i as u64, seen.count));
                }
            }
        }
        Part { codes }
    }
}

/// The MD5 of `text`, in lower-case hex.
pub(crate) fn md5_hex(text: &str) -> String {
    use md5::{Digest, Md5};
    Md5::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether apgsearch would take `root` as a seed root: 1 to 40 characters, each an ASCII
/// letter, digit, `_` or `-` (soup IDs are root and index, hashed as one SHA-256 block on the
/// GPU, which leaves 55 bytes for both); the reason where not.
pub fn check_root(root: &str) -> Result<(), String> {
    if root.is_empty() {
        return Err("a census root is at least one character".into());
    }
    if root.len() > 40 {
        return Err(format!(
            "a census root is at most 40 characters; {:?} has {}",
            root,
            root.len()
        ));
    }
    if let Some(c) = root
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(format!(
            "{c:?} is not allowed in a census root (letters, digits, _ and - are)"
        ));
    }
    Ok(())
}

/// A new root as apgsearch makes them: `k_` and 12 characters of its alphabet (letters but
/// l, o, I and O, and digits 2–9), from `seed`.
pub fn new_root(seed: &str) -> String {
    use sha2::{Digest, Sha256};
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let digest = Sha256::digest(seed.as_bytes());
    let tail: String = digest[..12]
        .iter()
        .map(|&b| ALPHABET[b as usize % ALPHABET.len()] as char)
        .collect();
    format!("k_{tail}")
}

/// The ID's soup's census.
pub fn of_id(id: &str, classifier: &mut Classifier) -> Tally {
    soup(&soup::rows(id), classifier)
}

thread_local! {
    /// Each thread's classifier, kept from batch to batch and census to census: what it
    /// learns (objects' names, which sparks are not ships) is learnt once.
    static CLASSIFIER: std::cell::RefCell<Classifier> = std::cell::RefCell::new(Classifier::default());
}

/// Shapes a thread's classifier remembers before it starts afresh (some tens of megabytes):
/// the sparks looked at as possible ships are new in nearly every soup, and a census can run
/// for ever.
const MOST_REMEMBERED: usize = 1 << 16;

/// Runs `work` with this thread's classifier.
///
/// The classifier is taken out of its cell for the work, not borrowed in it: a thread of
/// rayon's pool waiting on an engine's own pool (a plane's step) runs other jobs of its pool
/// meanwhile, and one of those may be a batch of soups that wants a classifier too. That one
/// starts with a fresh classifier; what either learns is only remembered names, so the
/// tallies are the same.
pub(crate) fn with_classifier<R>(work: impl FnOnce(&mut Classifier) -> R) -> R {
    let mut classifier = CLASSIFIER.take();
    classifier.forget_if_over(MOST_REMEMBERED);
    let result = work(&mut classifier);
    CLASSIFIER.set(classifier);
    result
}

/// Soups handed to a thread at a time.
const BATCH: u64 = 256;

/// The tallies of soups `first..first + count` of `root`, in index order, on every thread of
/// rayon's pool (each thread with its own classifier, kept from call to call); `stop` ends it
/// early, after a whole batch:
/// the tallies of the soups done, from `first` on without a gap.
pub fn tallies(root: &str, first: u64, count: u64, stop: &AtomicBool) -> Vec<Tally> {
    let batches: Vec<(u64, u64)> = (0..count.div_ceil(BATCH))
        .map(|b| (first + b * BATCH, BATCH.min(count - b * BATCH)))
        .collect();
    let done: Vec<Option<Vec<Tally>>> = batches
        .par_iter()
        .map(|&(start, n)| {
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            Some(with_classifier(|classifier| {
                (start..start + n)
                    .map(|i| soup(&soup::of(root, i), classifier))
                    .collect()
            }))
        })
        .collect();
    done.into_iter()
        .map_while(|batch| batch)
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread that waits on a plane's own pool runs other batches meanwhile, so a batch can
    /// start inside another's classifier: it must get one of its own, and both must name alike.
    #[test]
    fn a_classifier_can_be_asked_for_inside_another() {
        let rows = soup::rows(&soup::id("k_testseed", 3));
        let (outer, inner) = with_classifier(|classifier| {
            let inner = with_classifier(|inner| soup(&rows, inner));
            (soup(&rows, classifier), inner)
        });
        assert_eq!(outer, inner);
        assert!(outer.objects.values().sum::<u64>() > 0);
    }

    /// A glider flying (dx, dy) (each ±1) with its box's top-left at (x, y), taken away at
    /// generation `at`.
    fn glider(x: i64, y: i64, (dx, dy): (i64, i64), at: u64) -> Flight {
        let cells: Vec<(i64, i64)> = [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]
            .iter()
            .map(|&(cx, cy): &(i64, i64)| {
                let cx = if dx > 0 { cx } else { 2 - cx };
                let cy = if dy > 0 { cy } else { 2 - cy };
                (x + cx, y + cy)
            })
            .collect();
        Flight {
            glider: true,
            bounds: (x, y, x + 2, y + 2),
            at,
            displacement: (dx, dy),
            period: 4,
            codes: vec![GLIDER],
            cells,
        }
    }

    /// Tallies of `soups` soups, each with some of four codes, counts up to 302 (so that a
    /// code's count passes [`SAMPLED_UP_TO`] within a part), then repeated past two parts.
    fn tallies_of(soups: &[(u8, u8, u16)]) -> Vec<Tally> {
        let codes = ["xs4_33", "xp2_7", "xs6_696", "xq4_153"];
        let mut tallies: Vec<Tally> = soups
            .iter()
            .map(|&(which, skip, n)| {
                let mut tally = Tally::default();
                for (c, code) in codes.iter().enumerate() {
                    if which as usize & (1 << c) != 0 && skip as usize % 4 != c {
                        tally.add(code, (n % 300) as u64 + c as u64);
                    }
                }
                tally
            })
            .collect();
        // Parts of `PART` soups, several of them.
        tallies.extend(tallies.clone().into_iter().cycle().take(2 * PART + 17));
        tallies
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(16))]

        /// The haul of soups added in parts of any size, cut anywhere, is theirs added one by
        /// one: counts, and the samples under apgsearch's rule.
        #[test]
        fn a_haul_added_in_parts_is_the_haul_added_soup_by_soup(
            soups in proptest::collection::vec((0u8..16, 0u8..8, 0u16..2000), 1..200),
            cut in 0usize..20000,
        ) {
            let tallies = tallies_of(&soups);
            let mut one_by_one = Haul::default();
            for (i, tally) in tallies.iter().enumerate() {
                one_by_one.add_all(7 + i as u64, std::slice::from_ref(tally));
            }
            let cut = cut % tallies.len();
            let mut in_parts = Haul::default();
            in_parts.add_all(7, &tallies[..cut]);
            in_parts.add_all(7 + cut as u64, &tallies[cut..]);
            proptest::prop_assert_eq!(&in_parts, &one_by_one);
            // apgsearch's rule, soup by soup: a soup is a sample of a code while fewer than
            // `SAMPLES` are and the code's count with it is at most `SAMPLED_UP_TO`.
            let mut counts: BTreeMap<String, u64> = BTreeMap::new();
            let mut samples: BTreeMap<String, Vec<u64>> = BTreeMap::new();
            for (i, tally) in tallies.iter().enumerate() {
                for (code, n) in &tally.objects {
                    let count = counts.entry(code.to_string()).or_default();
                    *count += n;
                    let listed = samples.entry(code.to_string()).or_default();
                    if *count <= SAMPLED_UP_TO && listed.len() < SAMPLES {
                        listed.push(7 + i as u64);
                    }
                }
            }
            proptest::prop_assert_eq!(&one_by_one.counts, &counts);
            proptest::prop_assert_eq!(&one_by_one.samples, &samples);
        }
    }

    proptest::proptest! {
        /// Ships of different velocities meet as they do when their boxes are followed a
        /// generation at a time, though only the generations where one of them moves are
        /// looked at.
        #[test]
        fn ships_meet_as_followed_a_generation_at_a_time(
            ships in proptest::collection::vec(
                (-30i64..30, -30i64..30, 0usize..4, 0u64..12),
                2..5,
            ),
        ) {
            let flights: Vec<Flight> = ships
                .iter()
                .map(|&(x, y, way, at)| {
                    let way = [(1, 1), (1, -1), (-1, 1), (-1, -1)][way];
                    glider(x, y, way, at)
                })
                .collect();
            let followed = flights.iter().enumerate().any(|(i, f)| {
                flights[i + 1..].iter().any(|g| {
                    let from = f.at.max(g.at);
                    let boxes = (f.at(from, 0), g.at(from, 0));
                    f.displacement != g.displacement && boxes_meet(f, g, from, boxes, from + 1..)
                })
            });
            proptest::prop_assert_eq!(flights_meet(&flights, false), followed);
        }

        /// The bound below the gap between two ships' boxes holds at every generation after
        /// the one it is taken at, for ships of any velocity and period.
        #[test]
        fn the_least_gap_is_never_above_the_gap(
            ships in proptest::collection::vec(
                (-40i64..40, -40i64..40, 0i64..6, 0i64..6, -2i64..=2, -2i64..=2, 1u64..8, 0u64..20),
                2,
            ),
            later in 0u64..10,
        ) {
            let flights: Vec<Flight> = ships
                .iter()
                .map(|&(x, y, w, h, dx, dy, period, at)| Flight {
                    glider: false,
                    bounds: (x, y, x + w, y + h),
                    at,
                    displacement: (dx, dy),
                    period,
                    codes: Vec::new(),
                    cells: Vec::new(),
                })
                .collect();
            let (f, g) = (&flights[0], &flights[1]);
            let from = f.at.max(g.at) + later;
            let least = least_gap_after(f, g, f.at(from, 0), g.at(from, 0));
            for t in from..from + 400 {
                proptest::prop_assert!(gap(f.at(t, 0), g.at(t, 0)) >= least, "at {}", t);
            }
        }
    }

    /// Ships that only part are let go at once: gliders flying south-east and south-west
    /// twenty rows apart (their gap across falls, then grows); not one flying towards the
    /// first, which meets it.
    #[test]
    fn ships_that_part_are_told_apart_at_once() {
        let (f, g) = (glider(0, 0, (1, 1), 0), glider(40, 20, (-1, 1), 0));
        assert!(least_gap_after(&f, &g, f.at(0, 0), g.at(0, 0)) > 2);
        // Flying towards each other: no bound.
        let towards = glider(40, 0, (-1, 1), 0);
        assert_eq!(
            least_gap_after(&f, &towards, f.at(0, 0), towards.at(0, 0)),
            0
        );
        assert!(!flights_meet(&[&f, &g], true));
        assert!(flights_meet(&[&f, &towards], true));
    }
}
