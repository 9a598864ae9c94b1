//! The soup census: each soup run on the plane until it settles, its escaping ships counted
//! and taken away, its ash cut into objects and each named ([`crate::objects`]); the counts of
//! many soups gathered into a haul in apgsearch's format.
//!
//! A soup has settled when the whole pattern, escaping ships taken away, is exactly what it
//! was some generations before, where it was: from then on it repeats for ever. A ship
//! (glider, *WSS, any cluster that moves) escapes when it lies past the rest of the pattern by
//! [`CLEARANCE`] cells on a side it moves towards; it is counted by its apgcode then. This is
//! the true ash, not apgsearch's guess from populations (see `docs/census.md` for where the
//! two differ).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap as HashMap;

use crate::objects::{clusters, Classifier, Named};
use crate::soup::{self, Rows};
use crate::universe::{bounds, Universe};

/// Cells a ship must lie past the rest of the pattern, towards where it moves, to be taken as
/// escaping.
pub const CLEARANCE: i64 = 12;

/// Generations a soup may run before it is given up as not settling.
pub const MOST_GENERATIONS: u64 = 1 << 17;

/// Generations between two looks for escaping ships.
const LOOK_EVERY: u64 = 32;

/// What one soup left.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Objects by apgcode.
    pub objects: BTreeMap<String, u64>,
    /// The generation from which it repeats (or where it was given up).
    pub settled_at: u64,
    /// Its period then (0: it died out or was given up).
    pub period: u64,
}

impl Tally {
    fn add(&mut self, code: &str, n: u64) {
        *self.objects.entry(code.to_string()).or_default() += n;
    }
}

/// Takes away the ships that escape from `u`, counting them in `tally`: whether any went.
///
/// Only a ship on an edge of the pattern's box can escape: it does when, on a side it moves
/// towards, it lies past everything else by [`CLEARANCE`] cells (ships on the edges flying
/// at its velocity apart), and no other ship on the edges moves that way faster.
fn clear_escaping(u: &mut Universe, classifier: &mut Classifier, tally: &mut Tally) -> bool {
    // Ships on the edges, then those on the edges of what is left, and so on (a train of
    // gliders flies one behind another), each taken away for the next look.
    let mut ships: Vec<(Vec<(i64, i64)>, Named, u64)> = Vec::new();
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
    if ships.is_empty() {
        return false;
    }
    // The box of everything but these ships.
    let rest = u.bounds();
    for (cells, _, _) in &ships {
        for &(x, y) in cells {
            u.set(x, y, true);
        }
    }
    let boxes: Vec<(i64, i64, i64, i64)> = ships
        .iter()
        .map(|(cells, _, _)| bounds(cells).expect("cells"))
        .chain(rest)
        .collect();
    let mut escaping = Vec::new();
    for (i, (_, named, period)) in ships.iter().enumerate() {
        let (dx, dy) = named.displacement;
        let (l, t, r, b) = boxes[i];
        // The sides it moves towards: right, left, down, up.
        let mut sides = [dx > 0, dx < 0, dy > 0, dy < 0];
        for (j, &(ol, ot, or, ob)) in boxes.iter().enumerate() {
            if j == i {
                continue;
            }
            if let Some((_, o, p)) = ships.get(j) {
                if (o.displacement, *p) == (named.displacement, *period) {
                    continue;
                }
                // A ship moving the same way faster could catch it up.
                let (ox, oy) = o.displacement;
                let (mine, theirs) = (*period as i64, *p as i64);
                if (dx >= 0 && ox > 0 && ox * mine > dx * theirs)
                    || (dx <= 0 && ox < 0 && ox * mine < dx * theirs)
                {
                    sides[0] = false;
                    sides[1] = false;
                }
                if (dy >= 0 && oy > 0 && oy * mine > dy * theirs)
                    || (dy <= 0 && oy < 0 && oy * mine < dy * theirs)
                {
                    sides[2] = false;
                    sides[3] = false;
                }
            }
            sides[0] &= l > or + CLEARANCE;
            sides[1] &= r < ol - CLEARANCE;
            sides[2] &= t > ob + CLEARANCE;
            sides[3] &= b < ot - CLEARANCE;
        }
        if sides.iter().any(|&s| s) {
            escaping.push(i);
        }
    }
    for &i in &escaping {
        let (cells, named, _) = &ships[i];
        for &(x, y) in cells {
            u.set(x, y, false);
        }
        for code in &named.codes {
            tally.add(code, 1);
        }
    }
    !escaping.is_empty()
}

/// Rounds of looking for ships on the edges, each inside the last.
const SHIP_ROUNDS: usize = 8;

/// The most cells of a cluster looked at as a ship.
const SHIP_CELLS: usize = 24;

/// The census of the soup `rows`, placed as apgsearch places it (its top-left cell at (8, 8)).
pub fn soup(rows: &Rows, classifier: &mut Classifier) -> Tally {
    let cells: Vec<(i64, i64)> = soup::cells(rows)
        .into_iter()
        .map(|(x, y)| (x + 8, y + 8))
        .collect();
    let mut u = Universe::of(&cells);
    let mut tally = Tally::default();
    let mut seen: HashMap<(i64, i64, i64, i64, u64, u64), u64> = HashMap::default();
    let period = loop {
        if u.population() == 0 {
            tally.settled_at = u.generation;
            return tally;
        }
        if u.generation % LOOK_EVERY == 0
            && u.generation > 0
            && clear_escaping(&mut u, classifier, &mut tally)
        {
            seen.clear();
        }
        if u.repeats_in_two() {
            // Still lifes and blinkers alone: period 2 (1 if nothing changed at all).
            tally.settled_at = u.generation - 2;
            break 2;
        }
        if let Some(at) = seen.insert(u.key(), u.generation) {
            tally.settled_at = at;
            break u.generation - at;
        }
        if u.generation >= MOST_GENERATIONS {
            tally.settled_at = u.generation;
            break 0;
        }
        u.step();
    };
    tally.period = period;
    // The live cells now and every cell alive over a period (two generations at least).
    let live = u.cells();
    let mut envelope = Universe::of(&live);
    let mut history = live.clone();
    for _ in 0..period.max(2) {
        envelope.step();
        history.extend(envelope.cells());
    }
    history.sort_unstable();
    history.dedup();
    for cluster in clusters(&live, &history) {
        for code in classifier.classify(&cluster).codes {
            tally.add(&code, 1);
        }
    }
    tally
}

/// The census of many soups: counts, and the soups that show each code.
#[derive(Clone, Debug, Default)]
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
    /// Adds soup `index`'s tally (soups are added in index order).
    pub fn add(&mut self, index: u64, tally: &Tally) {
        self.soups += 1;
        for (code, &n) in &tally.objects {
            let total = self.counts.entry(code.clone()).or_default();
            *total += n;
            let samples = self.samples.entry(code.clone()).or_default();
            if *total <= SAMPLED_UP_TO && samples.len() < SAMPLES && samples.last() != Some(&index)
            {
                samples.push(index);
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

/// The MD5 of `text`, in lower-case hex.
fn md5_hex(text: &str) -> String {
    use md5::{Digest, Md5};
    Md5::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The ID's soup's census.
pub fn of_id(id: &str, classifier: &mut Classifier) -> Tally {
    soup(&soup::rows(id), classifier)
}
