//! Rule tables: Golly's `.rule` files, which its RuleLoader algorithm runs. A rule of up to 256
//! cell states whose next state is any function of a cell's neighbourhood, given as a
//! transition table (`@TABLE`) or a decision tree (`@TREE`).
//!
//! # The tree
//!
//! Both forms become one [`RuleTable`]: a decision tree over the cell's neighbourhood in
//! Golly's tree order, north-west, north-east, south-west, south-east, north, west, east,
//! south, centre for the eight-neighbour trees (Moore, and hexagonal tables, whose north-east
//! and south-west cells no branch reads) and north, west, east, south, centre for the
//! four-neighbour ones (von Neumann, and one-dimensional tables, whose north and south no
//! branch reads). A node of the tree is `states` consecutive words of the tree's `nodes`, one
//! per value of its variable: the offset of the child for that value, or, in a node of the
//! last variable (the centre), the next state itself. A cell's next state so takes nine (or
//! five) loads.
//!
//! A table whose tree would be too large to build (AnimatedPixelArt.rule: 253 states, no
//! symmetries) keeps its transitions instead, as Golly's RuleTable algorithm does: for each
//! variable in the tree's order and each state, a bit set of the transitions whose input there
//! holds the state; a cell's next state is the output of the first transition in all nine (or
//! five) of its neighbourhood's sets. Slower a cell, and no GPU engine runs it. A `@TABLE`'s
//! tree is built on a thread of its own (half a second for DragonCurve.rule): until it is
//! there, cells are looked up in the transitions in the same way, and what needs the tree
//! itself ([`RuleTable::tree`]) waits for it.
//!
//! # Tables
//!
//! A `@TABLE` (Golly's `.table` format) names `n_states`, a `neighborhood` (`Moore`,
//! `vonNeumann`, `hexagonal`, `oneDimensional`) and `symmetries`, then variables
//! (`var a={0,1,2}`, which may name earlier variables) and transitions: the centre, the
//! neighbours in the table's order (Moore: N, NE, E, SE, S, SW, W, NW; von Neumann: N, E, S,
//! W; hexagonal: N, E, SE, S, W, NW; one-dimensional: W, E) and the new centre, as states or
//! variables, comma-separated (digits run together where there are at most ten states and no
//! variables). A variable that appears more than once in a transition takes the same state at
//! each place (it is *bound*), and only a bound variable may be the output. The first
//! transition that matches a neighbourhood, in any of the orientations its symmetries allow,
//! gives the next state; a neighbourhood no transition matches keeps its centre. [`RuleTable`]
//! builds its tree by splitting the transitions by the value of each variable in turn,
//! sharing the nodes of equal sub-tables.
//!
//! # Finding a rule
//!
//! A rule named in a pattern file or on the command line (`Codd`) is the file `Codd.rule`,
//! looked for without regard to case in the folders given by [`set_folders`] (`--rules`), then
//! the tables of the zip archives opened (`provide`), then the pattern file's own folder,
//! then Golly's Rules folder where Golly is installed ([`GOLLY_RULES`]). Each table read is
//! kept for the rest of the process, once, so that a [`crate::Rule`] can name it by a shared
//! reference.

use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use hashbrown::HashTable;
use rayon::prelude::*;
use rustc_hash::FxBuildHasher;

use crate::error::{quoted, Error, Result};
use crate::pattern::archive::Source;

/// The most cell states a rule table may have (Golly's limit).
pub const MAX_STATES: u32 = 256;

/// Where Golly keeps its rules, where it is installed (Debian's `golly` package and a build
/// installed under `/usr/local`).
pub const GOLLY_RULES: [&str; 2] = ["/usr/share/golly/Rules", "/usr/local/share/golly/Rules"];

/// The largest `.rule` file read: Golly's largest is 0.3 MB.
const MAX_FILE_BYTES: u64 = 64 << 20;

/// The most transitions a table may expand to (bound variables and symmetries multiplied
/// out) before it is refused as too large to build: Golly's largest, Tempesti.rule, expands to
/// 3066.
const MAX_EXPANDED: usize = 1 << 17;

/// The most words of sets of transitions the tree's builder may look at in all (about a
/// second's work) before the table keeps its transitions instead ([`Masks`]).
const MAX_BUILD_WORK: u64 = 1 << 30;

/// The most words a rule's tree may take: past it the table keeps its transitions instead.
const MAX_TREE_WORDS: usize = 1 << 26;

/// A rule table, read and built into its decision tree (see the module documentation).
#[derive(PartialEq, Eq)]
pub struct RuleTable {
    /// The name of its `@RULE` line.
    name: String,
    states: u32,
    /// Eight-neighbour tree (true) or four-neighbour one.
    eight: bool,
    /// How a cell's next state is found.
    lookup: Lookup,
    /// The colours its `@COLORS` section gives, by state (`None` for the states it leaves
    /// alone); empty where it has none.
    colours: Vec<Option<[u8; 3]>>,
}

/// How a table finds a cell's next state (see the module documentation).
#[derive(PartialEq, Eq)]
enum Lookup {
    /// The decision tree: its nodes, `states` words each, and the root node's offset.
    Tree { nodes: Vec<u32>, root: u32 },
    /// The transitions, for a table whose tree is too large to build.
    Masks(Masks),
    /// The transitions, while the tree is built on a thread of its own.
    Building(Arc<Building>),
}

/// A table's transitions, and its tree once a thread has built it: cells are looked up in
/// the transitions until then, so that a run starts at once however long the tree takes
/// (DragonCurve.rule's half a second, or the second in which AnimatedPixelArt.rule's is found
/// too large).
struct Building {
    masks: Masks,
    /// The tree's nodes and root, or `None` where it is too large to build.
    tree: OnceLock<Option<(Vec<u32>, u32)>>,
}

/// Two tables' transitions tell their trees.
impl PartialEq for Building {
    fn eq(&self, other: &Building) -> bool {
        self.masks == other.masks
    }
}

impl Eq for Building {}

/// A table's transitions as bit sets, one bit a transition in the table's order: for variable
/// `v` (in the tree's order) and state `s`, from word `(v * states + s) * words` of `masks`,
/// the transitions whose input `v` holds `s`.
#[derive(PartialEq, Eq)]
struct Masks {
    /// Words of a set.
    words: usize,
    masks: Vec<u64>,
    /// Each transition's output.
    outputs: Vec<u32>,
}

impl fmt::Debug for RuleTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = match &self.lookup {
            Lookup::Tree { nodes, .. } => format!("{} tree words", nodes.len()),
            Lookup::Masks(masks) => format!("{} transitions", masks.outputs.len()),
            Lookup::Building(building) => {
                format!("{} transitions", building.masks.outputs.len())
            }
        };
        write!(f, "RuleTable({}, {} states, {how})", self.name, self.states)
    }
}

impl RuleTable {
    /// The rule's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its number of cell states.
    pub fn states(&self) -> u32 {
        self.states
    }

    /// The colour its `@COLORS` section gives each state, `None` for a state it leaves to the
    /// default; `None` where the file has no `@COLORS`.
    pub fn colours(&self) -> Option<&[Option<[u8; 3]>]> {
        (!self.colours.is_empty()).then_some(&self.colours[..])
    }

    /// The next state of the cell at the centre of `around` (rows top to bottom, cells west to
    /// east); every state below [`RuleTable::states`].
    #[inline]
    pub fn next(&self, around: &[[u8; 3]; 3]) -> u8 {
        let (n, root) = match &self.lookup {
            Lookup::Tree { nodes, root } => (nodes, *root),
            Lookup::Building(building) => match building.tree.get() {
                Some(Some((nodes, root))) => (nodes, *root),
                _ => return building.masks.next(self.order(), self.states, around),
            },
            Lookup::Masks(masks) => return masks.next(self.order(), self.states, around),
        };
        let at = |node: u32, state: u8| n[node as usize + state as usize];
        let [[nw, no, ne], [w, c, e], [sw, s, se]] = *around;
        let mut node = root;
        if self.eight {
            for v in [nw, ne, sw, se] {
                node = at(node, v);
            }
        }
        for v in [no, w, e, s] {
            node = at(node, v);
        }
        at(node, c) as u8
    }

    /// The four-neighbour table named `name` of `states` states whose next state is
    /// `next([north, west, east, south], centre)`: its tree built from every neighbourhood,
    /// equal nodes shared (for rules given as a program, such as [`super::jvn`]'s).
    pub fn from_function(name: &str, states: u32, next: impl Fn([u8; 4], u8) -> u8) -> RuleTable {
        let n = states as u8;
        let mut nodes: Vec<u32> = Vec::new();
        let mut shared: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut node = |children: Vec<u32>| -> u32 {
            *shared.entry(children).or_insert_with_key(|children| {
                let at = nodes.len() as u32;
                nodes.extend_from_slice(children);
                at
            })
        };
        let mut norths = Vec::with_capacity(states as usize);
        for north in 0..n {
            let mut wests = Vec::with_capacity(states as usize);
            for west in 0..n {
                let mut easts = Vec::with_capacity(states as usize);
                for east in 0..n {
                    let souths = (0..n)
                        .map(|south| {
                            let centres =
                                (0..n).map(|c| next([north, west, east, south], c) as u32);
                            node(centres.collect())
                        })
                        .collect();
                    easts.push(node(souths));
                }
                wests.push(node(easts));
            }
            norths.push(node(wests));
        }
        let root = node(norths);
        RuleTable {
            name: name.to_string(),
            states,
            eight: false,
            lookup: Lookup::Tree { nodes, root },
            colours: Vec::new(),
        }
    }

    /// The decision tree (see the module documentation): its nodes, the root's offset and
    /// whether it reads eight neighbours (else four); `None` for a table whose tree is too
    /// large to build, which keeps its transitions instead. Waits for a tree being built.
    pub fn tree(&self) -> Option<(&[u32], u32, bool)> {
        let (nodes, root) = match &self.lookup {
            Lookup::Tree { nodes, root } => (nodes, root),
            Lookup::Building(building) => building.tree.wait().as_ref().map(|(n, r)| (n, r))?,
            Lookup::Masks(_) => return None,
        };
        Some((nodes, *root, self.eight))
    }

    /// The cells of the neighbourhood in the tree's order.
    fn order(&self) -> &'static [(usize, usize)] {
        if self.eight {
            &EIGHT_ORDER
        } else {
            &FOUR_ORDER
        }
    }

    /// The cells of the 3×3 neighbourhood (row, column) that some branch of the tree reads,
    /// in row-major order: a cell whose every node gives one child for all its values is left
    /// out (the corners of a four-neighbour tree, the north-east and south-west cells of a
    /// hexagonal table). A table without a tree reads every cell of its neighbourhood.
    pub fn reads(&self) -> Vec<(usize, usize)> {
        let order = self.order();
        let Some((nodes, root, _)) = self.tree() else {
            let mut all = order.to_vec();
            all.sort_unstable();
            return all;
        };
        let states = self.states as usize;
        let mut level = vec![root];
        let mut read = Vec::new();
        for (depth, &cell) in order.iter().enumerate() {
            let children = |&node: &u32| &nodes[node as usize..][..states];
            if level
                .iter()
                .any(|node| children(node).iter().any(|&c| c != children(node)[0]))
            {
                read.push(cell);
            }
            if depth + 1 < order.len() {
                let mut next: Vec<u32> = level.iter().flat_map(children).copied().collect();
                next.sort_unstable();
                next.dedup();
                level = next;
            }
        }
        read.sort_unstable();
        read
    }

    /// The table as one flat lookup ([`Flat`]), or `None` where it would take more than
    /// `most` entries (states to the power of the cells read).
    pub fn flat(&self, most: usize) -> Option<Flat> {
        // While the tree is built, the cells some transition reads (those the tree reads, but
        // for transitions another always hides) tell whether to wait for it.
        if let Lookup::Building(building) = &self.lookup {
            let read = building.masks.reads(self.states);
            if (self.states as usize)
                .checked_pow(read)
                .is_none_or(|e| e > most)
            {
                return None;
            }
        }
        let reads = self.reads();
        let states = self.states as usize;
        let mut entries = 1usize;
        let mut cells = Vec::with_capacity(reads.len());
        for &cell in &reads {
            cells.push((cell, entries as u32));
            entries = entries.checked_mul(states).filter(|&e| e <= most)?;
        }
        let mut next = vec![0u8; entries];
        next.par_chunks_mut(1 << 12)
            .enumerate()
            .for_each(|(chunk, out)| {
                for (i, state) in out.iter_mut().enumerate() {
                    let mut rest = (chunk << 12) + i;
                    let mut around = [[0u8; 3]; 3];
                    for &((row, column), _) in &cells {
                        around[row][column] = (rest % states) as u8;
                        rest /= states;
                    }
                    *state = self.next(&around);
                }
            });
        Some(Flat { cells, next })
    }

    /// A random table of `states` states (for tests and `gol verify`), its choices drawn from
    /// `next`: a few transitions of the Moore (or, for `eight` false, von Neumann)
    /// neighbourhood without symmetries, each input any set of states, after one that keeps
    /// an empty neighbourhood empty (so that it runs on the infinite plane).
    pub fn random(states: u32, eight: bool, next: &mut dyn FnMut() -> u64) -> RuleTable {
        RuleTable::random_within(states, eight, next, MAX_BUILD_WORK)
    }

    /// [`RuleTable::random`], its tree built only within `most_work` ([`MAX_BUILD_WORK`]).
    fn random_within(
        states: u32,
        eight: bool,
        next: &mut dyn FnMut() -> u64,
        most_work: u64,
    ) -> RuleTable {
        let states = states.clamp(2, MAX_STATES);
        let variables = if eight { 9 } else { 5 };
        let set = |next: &mut dyn FnMut() -> u64| {
            let mut set = States::NONE;
            while set == States::NONE {
                for s in 0..states {
                    if !next().is_multiple_of(3) {
                        set = set.or(States::one(s));
                    }
                }
            }
            set
        };
        let mut transitions = vec![Transition {
            inputs: vec![States::one(0); variables],
            output: 0,
        }];
        for _ in 0..1 + next() % 12 {
            let inputs = (0..variables).map(|_| set(next)).collect();
            let output = (next() % states as u64) as u32;
            transitions.push(Transition { inputs, output });
        }
        let mut builder = Builder::new(states, eight, &transitions);
        builder.most_work = most_work;
        let lookup = builder.build();
        RuleTable {
            name: format!("Random{}", next() % 1_000_000),
            states,
            eight,
            lookup,
            colours: Vec::new(),
        }
    }

    /// Reads a `.rule` file's text: its `@RULE` name, and its `@TABLE` or `@TREE` (whichever
    /// comes first). `path` names it in messages.
    pub fn parse(text: &str, path: &Path) -> Result<RuleTable> {
        let fail = |line: usize, message: String| Error::Parse {
            path: path.to_path_buf(),
            line,
            message,
        };
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        let name = loop {
            let Some((n, line)) = lines.next() else {
                return Err(fail(
                    1,
                    "a .rule file starts with @RULE and the rule's name".into(),
                ));
            };
            let line = line.trim_start_matches('\u{feff}').trim();
            if line.is_empty() {
                continue;
            }
            match line.strip_prefix("@RULE") {
                Some(name) if !name.trim().is_empty() => break name.trim().to_string(),
                _ => {
                    return Err(fail(
                        n,
                        format!("expected @RULE and the rule's name, found {}", quoted(line)),
                    ))
                }
            }
        };
        let colours = |table: Result<RuleTable>| {
            let mut table = table?;
            table.colours = read_colours(text, table.states, &fail)?;
            Ok(table)
        };
        for (n, line) in lines.by_ref() {
            match line.trim() {
                "@TABLE" => return colours(build_table(name, lines, &fail)),
                "@TREE" => return colours(read_tree(name, lines, &fail)),
                other if other.starts_with("@TABLE") || other.starts_with("@TREE") => {
                    return Err(fail(n, format!("unexpected text after {}", quoted(other))))
                }
                _ => {}
            }
        }
        Err(Error::Invalid(format!(
            "{}: rule {name} has neither a @TABLE nor a @TREE section, so there is nothing to run",
            path.display()
        )))
    }
}

/// The colours of a `.rule` file's `@COLORS` section, by state, as Golly reads them: lines of
/// `state r g b`, or `r1 g1 b1 r2 g2 b2`, a gradient over the live states (1 to `states` − 1);
/// text after the numbers, blank lines and `#` lines ignored, states the rule does not have
/// ignored. Empty where there is no such section.
fn read_colours(
    text: &str,
    states: u32,
    fail: &dyn Fn(usize, String) -> Error,
) -> Result<Vec<Option<[u8; 3]>>> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim()));
    if !lines.by_ref().any(|(_, l)| l == "@COLORS") {
        return Ok(Vec::new());
    }
    let mut colours = vec![None; states as usize];
    for (n, line) in lines {
        if line.starts_with('@') {
            break;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let numbers: Vec<u32> = line
            .split_whitespace()
            .map_while(|word| word.parse::<u32>().ok())
            .collect();
        let colour = |at: usize| -> Result<[u8; 3]> {
            let mut rgb = [0u8; 3];
            for (k, value) in numbers[at..at + 3].iter().enumerate() {
                rgb[k] = u8::try_from(*value).map_err(|_| {
                    fail(
                        n,
                        format!("colour value {value} is above 255 in {}", quoted(line)),
                    )
                })?;
            }
            Ok(rgb)
        };
        match numbers.len() {
            4 | 5 => {
                let rgb = colour(1)?;
                if let Some(slot) = colours.get_mut(numbers[0] as usize) {
                    *slot = Some(rgb);
                }
            }
            6.. => {
                let (from, to) = (colour(0)?, colour(3)?);
                // State 1 takes the first colour, the last state the second.
                let span = states.saturating_sub(2).max(1);
                for state in 1..states {
                    let t = state - 1;
                    colours[state as usize] = Some(std::array::from_fn(|k| {
                        let (a, b) = (u32::from(from[k]), u32::from(to[k]));
                        ((a * (span - t) + b * t + span / 2) / span) as u8
                    }));
                }
            }
            _ => {
                return Err(fail(
                    n,
                    format!(
                        "a @COLORS line is a state and its red, green and blue (0 255 0 0), or two colours of a gradient, not {}",
                        quoted(line)
                    ),
                ))
            }
        }
    }
    Ok(colours)
}

/// The neighbourhood's cells in the order an eight-neighbour tree reads them: north-west,
/// north-east, south-west, south-east, north, west, east, south, centre (row, column).
const EIGHT_ORDER: [(usize, usize); 9] = [
    (0, 0),
    (0, 2),
    (2, 0),
    (2, 2),
    (0, 1),
    (1, 0),
    (1, 2),
    (2, 1),
    (1, 1),
];

/// The order a four-neighbour tree reads them: north, west, east, south, centre.
const FOUR_ORDER: [(usize, usize); 5] = [(0, 1), (1, 0), (1, 2), (2, 1), (1, 1)];

/// A rule table as one flat lookup, for the fast engines: the next state of a neighbourhood
/// is `next[Σ state(cell) × weight]` over `cells`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flat {
    /// The cells read (row and column in the 3×3 neighbourhood, row-major) and the weight
    /// of each one's state in the index: 1, S, S², … for S states.
    pub cells: Vec<((usize, usize), u32)>,
    /// The next state at each index.
    pub next: Vec<u8>,
}

/// A set of states, bit `s` for state `s`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
struct States([u64; 4]);

impl States {
    const NONE: States = States([0; 4]);

    fn one(state: u32) -> States {
        let mut set = States::NONE;
        set.0[state as usize / 64] |= 1 << (state % 64);
        set
    }

    fn all(states: u32) -> States {
        let mut set = States::NONE;
        for s in 0..states {
            set = set.or(States::one(s));
        }
        set
    }

    fn or(self, other: States) -> States {
        States(std::array::from_fn(|i| self.0[i] | other.0[i]))
    }

    fn has(&self, state: u32) -> bool {
        self.0[state as usize / 64] >> (state % 64) & 1 == 1
    }

    fn iter(self) -> impl Iterator<Item = u32> {
        (0..256).filter(move |&s| self.has(s))
    }
}

/// A table's neighbourhood: its inputs (the centre first, then the neighbours in the table's
/// order) and where each goes in the tree's order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Neighbourhood {
    Moore,
    VonNeumann,
    Hexagonal,
    OneDimensional,
}

impl Neighbourhood {
    fn parse(text: &str) -> Option<Neighbourhood> {
        Some(match text {
            "Moore" => Neighbourhood::Moore,
            "vonNeumann" => Neighbourhood::VonNeumann,
            "hexagonal" => Neighbourhood::Hexagonal,
            "oneDimensional" => Neighbourhood::OneDimensional,
            _ => return None,
        })
    }

    /// The tree variable of each of the table's inputs (the centre first).
    fn tree_places(self) -> &'static [usize] {
        match self {
            // C, N, NE, E, SE, S, SW, W, NW → nw 0, ne 1, sw 2, se 3, n 4, w 5, e 6, s 7, c 8.
            Neighbourhood::Moore => &[8, 4, 1, 6, 3, 7, 2, 5, 0],
            // C, N, E, SE, S, W, NW.
            Neighbourhood::Hexagonal => &[8, 4, 6, 3, 7, 5, 0],
            // C, N, E, S, W → n 0, w 1, e 2, s 3, c 4.
            Neighbourhood::VonNeumann => &[4, 0, 2, 3, 1],
            // C, W, E.
            Neighbourhood::OneDimensional => &[4, 1, 2],
        }
    }

    fn eight(self) -> bool {
        matches!(self, Neighbourhood::Moore | Neighbourhood::Hexagonal)
    }

    /// The orders of the neighbours that `symmetries` makes equivalent, each as the place of
    /// every neighbour (0 is the first after the centre); `None` where the neighbourhood has
    /// no such symmetry. `permute` is not among them (it is every order).
    fn orders(self, symmetries: &str) -> Option<Vec<Vec<usize>>> {
        let n = self.tree_places().len() - 1;
        // Rotations by `step` places of the ring of neighbours, `turns` of them.
        let rotations = |step: usize, turns: usize| -> Vec<Vec<usize>> {
            (0..turns)
                .map(|t| (0..n).map(|i| (i + t * step) % n).collect())
                .collect()
        };
        // The mirror image that swaps east and west.
        let mirror: Vec<usize> = match self {
            // N NE E SE S SW W NW → N NW W SW S SE E NE.
            Neighbourhood::Moore => vec![0, 7, 6, 5, 4, 3, 2, 1],
            // N E S W → N W S E.
            Neighbourhood::VonNeumann => vec![0, 3, 2, 1],
            // N E SE S W NW → the hexagon mirrored across its N–S axis: N NW W S SE E.
            Neighbourhood::Hexagonal => vec![0, 5, 4, 3, 2, 1],
            // W E → E W.
            Neighbourhood::OneDimensional => vec![1, 0],
        };
        let with_mirror = |orders: Vec<Vec<usize>>| -> Vec<Vec<usize>> {
            let mirrored: Vec<Vec<usize>> = orders
                .iter()
                .map(|o| mirror.iter().map(|&m| o[m]).collect())
                .collect();
            orders.into_iter().chain(mirrored).collect()
        };
        use Neighbourhood::*;
        Some(match (self, symmetries) {
            (_, "none") => rotations(1, 1),
            (Moore, "rotate4") => rotations(2, 4),
            (Moore, "rotate8") => rotations(1, 8),
            (Moore, "rotate4reflect") => with_mirror(rotations(2, 4)),
            (Moore, "rotate8reflect") => with_mirror(rotations(1, 8)),
            (VonNeumann, "rotate4") => rotations(1, 4),
            (VonNeumann, "rotate4reflect") => with_mirror(rotations(1, 4)),
            (Hexagonal, "rotate2") => rotations(3, 2),
            (Hexagonal, "rotate3") => rotations(2, 3),
            (Hexagonal, "rotate6") => rotations(1, 6),
            (Hexagonal, "rotate6reflect") => with_mirror(rotations(1, 6)),
            (Moore | VonNeumann | Hexagonal, "reflect_horizontal" | "reflect")
            | (OneDimensional, "reflect") => with_mirror(rotations(1, 1)),
            _ => return None,
        })
    }
}

/// One transition with its variables bound: the states each input may take (in the tree's
/// order of variables) and the next state.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Transition {
    inputs: Vec<States>,
    output: u32,
}

/// Builds the tree of a `@TABLE` section, whose lines `lines` gives (numbered).
fn build_table<'a>(
    name: String,
    lines: impl Iterator<Item = (usize, &'a str)>,
    fail: &dyn Fn(usize, String) -> Error,
) -> Result<RuleTable> {
    let mut states: Option<u32> = None;
    let mut neighbourhood: Option<Neighbourhood> = None;
    let mut symmetries: Option<String> = None;
    let mut variables: HashMap<String, States> = HashMap::new();
    let mut transitions: Vec<Transition> = Vec::new();
    let mut last = 0;
    for (n, raw) in lines {
        last = n;
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.starts_with('@') {
            break;
        }
        if line.is_empty() {
            continue;
        }
        if let Some((key, value)) = line.split_once(':') {
            let value = value.trim();
            // Found by fuzzing: a descriptor changed after the variables and transitions read
            // under it would leave them of another size.
            if !variables.is_empty() || !transitions.is_empty() {
                return Err(fail(
                    n,
                    format!(
                        "{} comes after the first variable or transition; n_states, neighborhood and symmetries come before them",
                        quoted(line)
                    ),
                ));
            }
            match key.trim() {
                "n_states" => {
                    let count = value
                        .parse::<u32>()
                        .ok()
                        .filter(|c| (2..=MAX_STATES).contains(c));
                    states = Some(count.ok_or_else(|| {
                        fail(
                            n,
                            format!("n_states must be 2 to {MAX_STATES}, not {}", quoted(value)),
                        )
                    })?);
                }
                "neighborhood" => {
                    neighbourhood = Some(Neighbourhood::parse(value).ok_or_else(|| {
                        fail(n, format!("unknown neighborhood {}: Golly's are Moore, vonNeumann, hexagonal and oneDimensional", quoted(value)))
                    })?);
                }
                "symmetries" => symmetries = Some(value.to_string()),
                other => return Err(fail(n, format!("unknown descriptor {}", quoted(other)))),
            }
            continue;
        }
        let (Some(count), Some(hood), Some(symmetry)) = (states, neighbourhood, &symmetries) else {
            return Err(fail(
                n,
                "n_states, neighborhood and symmetries come before the first variable or transition".into(),
            ));
        };
        if hood.orders(symmetry).is_none() && symmetry != "permute" {
            return Err(fail(
                n,
                format!(
                    "the {hood:?} neighbourhood has no symmetries {}",
                    quoted(symmetry)
                ),
            ));
        }
        if let Some(rest) = line.strip_prefix("var ") {
            // Golly also reads `var a{0,1}`, with no `=` (Flow6.rule has it).
            let (var, values) = rest
                .split_once('=')
                .or_else(|| rest.find('{').map(|at| (&rest[..at], &rest[at..])))
                .ok_or_else(|| {
                    fail(
                        n,
                        format!("expected var NAME={{...}}, found {}", quoted(line)),
                    )
                })?;
            let var = var.trim();
            let values = values.trim();
            let inner = match values.strip_prefix('{').and_then(|v| v.strip_suffix('}')) {
                Some(inner) => inner,
                // One state or one variable needs no braces (`var b = a`, as Golly reads it:
                // a copy of a's states, bound apart from a's).
                None if !values.contains(['{', '}', ',']) => values,
                None => {
                    return Err(fail(
                        n,
                        format!("a variable's states go in braces: {}", quoted(line)),
                    ))
                }
            };
            let mut set = States::NONE;
            for token in inner.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                set = set.or(value_of(token, count, &variables).map_err(|r| fail(n, r))?);
            }
            if set == States::NONE {
                return Err(fail(n, format!("variable {var} has no states")));
            }
            variables.insert(var.to_string(), set);
            continue;
        }
        let inputs = hood.tree_places().len();
        let tokens: Vec<&str> = if count <= 10
            && variables.is_empty()
            && !line.contains(',')
            && line.len() > inputs
            && line.as_bytes()[..=inputs].iter().all(u8::is_ascii_digit)
        {
            (0..=inputs).map(|i| &line[i..i + 1]).collect()
        } else {
            line.split([',', ' ', '\t'])
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .collect()
        };
        if tokens.len() != inputs + 1 {
            return Err(fail(
                n,
                format!(
                    "a transition of the {hood:?} neighbourhood has {} entries, not {}: {}",
                    inputs + 1,
                    tokens.len(),
                    quoted(line)
                ),
            ));
        }
        expand(&tokens, hood, count, &variables, &mut transitions).map_err(|r| fail(n, r))?;
        if transitions.len() > MAX_EXPANDED {
            return Err(fail(
                n,
                format!("the table expands to over {MAX_EXPANDED} transitions"),
            ));
        }
    }
    let (Some(count), Some(hood), Some(symmetry)) = (states, neighbourhood, symmetries) else {
        return Err(fail(
            last,
            "the @TABLE names no n_states, neighborhood or symmetries".into(),
        ));
    };
    let transitions = symmetric(transitions, hood, &symmetry).ok_or_else(|| {
        fail(
            last,
            format!("the table's symmetries expand it to over {MAX_EXPANDED} transitions"),
        )
    })?;
    Ok(RuleTable {
        name,
        states: count,
        eight: hood.eight(),
        lookup: Builder::new(count, hood.eight(), &transitions).build_behind(),
        colours: Vec::new(),
    })
}

/// The states a transition's or variable's token stands for: a state, or a variable's states.
fn value_of(
    token: &str,
    states: u32,
    variables: &HashMap<String, States>,
) -> std::result::Result<States, String> {
    if let Some(set) = variables.get(token) {
        return Ok(*set);
    }
    match token.parse::<u32>() {
        Ok(s) if s < states => Ok(States::one(s)),
        Ok(s) => Err(format!(
            "state {s} is out of range: the rule has {states} states"
        )),
        Err(_) => Err(format!(
            "{} is neither a state nor a variable defined above",
            quoted(token)
        )),
    }
}

/// Adds the transitions of one line `tokens` (inputs in the table's order, then the output):
/// one for each combination of the states of its bound variables.
fn expand(
    tokens: &[&str],
    hood: Neighbourhood,
    states: u32,
    variables: &HashMap<String, States>,
    out: &mut Vec<Transition>,
) -> std::result::Result<(), String> {
    let mut bound: Vec<&str> = Vec::new();
    for t in tokens {
        if variables.contains_key(*t)
            && tokens.iter().filter(|u| *u == t).count() > 1
            && !bound.contains(t)
        {
            bound.push(t);
        }
    }
    let output = tokens[tokens.len() - 1];
    if variables.contains_key(output) && !bound.contains(&output) {
        return Err(format!(
            "the output {} is a variable that appears nowhere else in the transition, so it has no one state",
            quoted(output)
        ));
    }
    let choices: Vec<Vec<u32>> = bound
        .iter()
        .map(|v| variables[*v].iter().collect())
        .collect();
    let combinations: usize = choices.iter().map(Vec::len).product();
    if out.len() + combinations > MAX_EXPANDED {
        return Err(format!(
            "the table expands to over {MAX_EXPANDED} transitions"
        ));
    }
    let places = hood.tree_places();
    let width = if hood.eight() { 9 } else { 5 };
    let mut pick = vec![0usize; bound.len()];
    loop {
        let state_of = |t: &str| -> std::result::Result<States, String> {
            match bound.iter().position(|b| *b == t) {
                Some(i) => Ok(States::one(choices[i][pick[i]])),
                None => value_of(t, states, variables),
            }
        };
        let mut inputs = vec![States::all(states); width];
        for (i, t) in tokens[..tokens.len() - 1].iter().enumerate() {
            inputs[places[i]] = state_of(t)?;
        }
        let output = state_of(output)?.iter().next().expect("one state");
        out.push(Transition { inputs, output });
        // The next combination, the first variable fastest.
        let Some(i) = (0..pick.len()).find(|&i| pick[i] + 1 < choices[i].len()) else {
            break;
        };
        pick[i] += 1;
        pick[..i].fill(0);
    }
    Ok(())
}

/// Every orientation of each transition that `symmetries` allows, in the order of the
/// transitions (orientations of one transition share its output, so their order does not
/// matter), each distinct one once; `None` past [`MAX_EXPANDED`].
fn symmetric(
    transitions: Vec<Transition>,
    hood: Neighbourhood,
    symmetries: &str,
) -> Option<Vec<Transition>> {
    let places = hood.tree_places();
    let neighbours = &places[1..];
    let mut out = Vec::with_capacity(transitions.len());
    let mut seen = std::collections::HashSet::new();
    for t in transitions {
        seen.clear();
        let ring: Vec<States> = neighbours.iter().map(|&p| t.inputs[p]).collect();
        let mut emit = |ring: &[States], out: &mut Vec<Transition>| {
            let mut inputs = t.inputs.clone();
            for (&place, &set) in neighbours.iter().zip(ring) {
                inputs[place] = set;
            }
            let turned = Transition {
                inputs,
                output: t.output,
            };
            if seen.insert(turned.clone()) {
                out.push(turned);
            }
        };
        match hood.orders(symmetries) {
            Some(orders) => {
                for order in orders {
                    let turned: Vec<States> = order.iter().map(|&i| ring[i]).collect();
                    emit(&turned, &mut out);
                }
            }
            None => {
                // permute: every distinct order of the neighbours' sets.
                let mut ring = ring;
                ring.sort();
                loop {
                    emit(&ring, &mut out);
                    if out.len() > MAX_EXPANDED || !next_permutation(&mut ring) {
                        break;
                    }
                }
            }
        }
        if out.len() > MAX_EXPANDED {
            return None;
        }
    }
    Some(out)
}

/// Rearranges `items` into the next order in lexicographic order; false (and sorted) after the
/// last.
fn next_permutation<T: Ord>(items: &mut [T]) -> bool {
    let Some(i) = (1..items.len()).rev().find(|&i| items[i - 1] < items[i]) else {
        items.reverse();
        return false;
    };
    let j = (i..items.len())
        .rev()
        .find(|&j| items[i - 1] < items[j])
        .expect("a larger item");
    items.swap(i - 1, j);
    items[i..].reverse();
    true
}

/// Builds a tree from transitions (see the module documentation). A set of transitions is a
/// bit set, one bit a transition in the table's order, so that the transitions left for a
/// state of a variable are the set and that state's mask, word by word.
struct Builder {
    states: u32,
    variables: usize,
    /// Words of a set.
    words: usize,
    /// For variable `v` and state `s`, from word `(v * states + s) * words`: the transitions
    /// whose input `v` has `s`.
    masks: Vec<u64>,
    /// For variable `v`, from word `v * words`: the transitions that match whatever the
    /// variables after `v` are (every state from there on), which hide those after them.
    open_after: Vec<u64>,
    /// Each transition's output.
    outputs: Vec<u32>,
    nodes: Vec<u32>,
    /// Nodes made, each as the hash of its words and their offset in `nodes`, so that equal
    /// nodes are one.
    made: HashTable<(u64, u32)>,
    /// Sub-tables built, each as the hash of its key, the key's offset in `keys` and the node.
    built: HashTable<(u64, u32, u32)>,
    /// The keys of `built`, `words + 1` words each: the variable, then the transitions left.
    keys: Vec<u64>,
    /// For each variable `v`, from word `v * words`: the set of the node being built there
    /// (each node's children are built in the part after its own).
    left: Vec<u64>,
    /// For each variable `v`, from word `v * states`: the words of the node being built there.
    out: Vec<u32>,
    /// Words of sets looked at so far, and the most it may look at ([`MAX_BUILD_WORK`]).
    work: u64,
    most_work: u64,
}

impl Builder {
    fn new(states: u32, eight: bool, transitions: &[Transition]) -> Builder {
        let variables = if eight { 9 } else { 5 };
        let words = transitions.len().div_ceil(64).max(1);
        let all = States::all(states);
        let mut masks = vec![0u64; variables * states as usize * words];
        let mut open_after = vec![0u64; variables * words];
        for (t, transition) in transitions.iter().enumerate() {
            let bit = 1u64 << (t % 64);
            for (v, input) in transition.inputs.iter().enumerate() {
                for s in input.iter() {
                    masks[(v * states as usize + s as usize) * words + t / 64] |= bit;
                }
            }
            let last = (0..variables)
                .rev()
                .find(|&v| transition.inputs[v] != all)
                .unwrap_or(0);
            for v in last + 1..variables {
                open_after[v * words + t / 64] |= bit;
            }
        }
        Builder {
            states,
            variables,
            words,
            masks,
            open_after,
            outputs: transitions.iter().map(|t| t.output).collect(),
            nodes: Vec::new(),
            made: HashTable::new(),
            built: HashTable::new(),
            keys: Vec::new(),
            left: vec![0; variables * words],
            out: vec![0; variables * states as usize],
            work: 0,
            most_work: MAX_BUILD_WORK,
        }
    }

    /// The whole tree, or where it is too large to build ([`MAX_BUILD_WORK`],
    /// [`MAX_TREE_WORDS`]), the transitions as [`Masks`].
    fn build(mut self) -> Lookup {
        for t in 0..self.outputs.len() {
            self.left[t / 64] |= 1 << (t % 64);
        }
        match self.node(0) {
            Some(root) => Lookup::Tree {
                nodes: self.nodes,
                root,
            },
            None => Lookup::Masks(Masks {
                words: self.words,
                masks: self.masks,
                outputs: self.outputs,
            }),
        }
    }

    /// The transitions at once, the tree built on a thread of its own ([`Building`]); where
    /// no thread can be started, the transitions alone.
    fn build_behind(self) -> Lookup {
        let building = Arc::new(Building {
            masks: Masks {
                words: self.words,
                masks: self.masks.clone(),
                outputs: self.outputs.clone(),
            },
            tree: OnceLock::new(),
        });
        let filled = Arc::clone(&building);
        let started = std::thread::Builder::new()
            .name("rule-tree".into())
            .spawn(move || {
                let tree = match self.build() {
                    Lookup::Tree { nodes, root } => Some((nodes, root)),
                    _ => None,
                };
                let _ = filled.tree.set(tree);
            });
        if started.is_err() {
            let _ = building.tree.set(None);
        }
        Lookup::Building(building)
    }

    /// The node of variable `v` for the transitions left there (`left`'s part for `v`), which
    /// match every variable before `v`; `None` where the tree is too large to build.
    fn node(&mut self, v: usize) -> Option<u32> {
        let (words, states) = (self.words, self.states as usize);
        let here = v * words..(v + 1) * words;
        // A transition that matches whatever comes after `v` hides those after it.
        let open = &self.open_after[here.clone()];
        let left = &mut self.left[here.clone()];
        if let Some(t) = first(left.iter().zip(open).map(|(l, o)| l & o)) {
            left[t / 64] &= u64::MAX >> (63 - t % 64);
            left[t / 64 + 1..].fill(0);
        }
        let key_hash = FxBuildHasher.hash_one((v, &*left));
        let keys = &self.keys;
        let same_key = |&(hash, at, _): &(u64, u32, u32)| {
            let at = at as usize;
            hash == key_hash && keys[at] == v as u64 && same(&keys[at + 1..], left)
        };
        if let Some(&(_, _, node)) = self.built.find(key_hash, same_key) {
            return Some(node);
        }
        self.work += (words * states) as u64;
        if self.work > self.most_work {
            return None;
        }
        for state in 0..states {
            let from = (v * states + state) * words;
            let mask = &self.masks[from..from + words];
            let word = if v + 1 == self.variables {
                // The centre, last: the first match's output, or the centre unchanged.
                let matching = self.left[here.clone()].iter().zip(mask).map(|(l, m)| l & m);
                first(matching).map_or(state as u32, |t| self.outputs[t])
            } else {
                let (this, after) = self.left.split_at_mut(here.end);
                for ((next, l), m) in after[..words].iter_mut().zip(&this[here.clone()]).zip(mask) {
                    *next = l & m;
                }
                self.node(v + 1)?
            };
            self.out[v * states + state] = word;
        }
        let out = &self.out[v * states..(v + 1) * states];
        let nodes = &self.nodes;
        let out_hash = FxBuildHasher.hash_one(out);
        let same_node =
            |&(hash, at): &(u64, u32)| hash == out_hash && same(&nodes[at as usize..], out);
        let node = match self.made.find(out_hash, same_node) {
            Some(&(_, node)) => node,
            None => {
                let node = self.nodes.len() as u32;
                if self.nodes.len() + states > MAX_TREE_WORDS {
                    return None;
                }
                self.nodes.extend_from_slice(out);
                self.made
                    .insert_unique(out_hash, (out_hash, node), |&(hash, _)| hash);
                node
            }
        };
        let at = self.keys.len() as u32;
        self.keys.push(v as u64);
        self.keys.extend_from_slice(&self.left[here]);
        self.built
            .insert_unique(key_hash, (key_hash, at, node), |&(hash, _, _)| hash);
        Some(node)
    }
}

impl Masks {
    /// How many variables some transition does not match in every state.
    fn reads(&self, states: u32) -> u32 {
        let (words, states) = (self.words, states as usize);
        let every = |w: usize| match (w + 1) * 64 <= self.outputs.len() {
            true => u64::MAX,
            false => (1u64 << (self.outputs.len() % 64)) - 1,
        };
        let variables = self.masks.len() / (states * words);
        (0..variables)
            .filter(|&v| {
                (0..states).any(|s| {
                    let mask = &self.masks[(v * states + s) * words..][..words];
                    mask.iter().enumerate().any(|(w, &m)| m != every(w))
                })
            })
            .count() as u32
    }

    /// The next state of the centre of `around`, whose cells `order` gives in the tree's order:
    /// the output of the first transition in every cell's set, or the centre unchanged.
    fn next(&self, order: &[(usize, usize)], states: u32, around: &[[u8; 3]; 3]) -> u8 {
        let words = self.words;
        let mut sets: [&[u64]; 9] = [&[]; 9];
        for (v, &(row, column)) in order.iter().enumerate() {
            let from = (v * states as usize + around[row][column] as usize) * words;
            sets[v] = &self.masks[from..from + words];
        }
        let sets = &sets[..order.len()];
        for w in 0..words {
            let all = sets.iter().fold(u64::MAX, |all, set| all & set[w]);
            if all != 0 {
                return self.outputs[w * 64 + all.trailing_zeros() as usize] as u8;
            }
        }
        around[1][1]
    }
}

/// Whether the first words of `stored` are `words`, compared in line (a call to `memcmp` a
/// comparison took a sixth of the builder's time).
#[inline(always)]
fn same<T: PartialEq + Copy>(stored: &[T], words: &[T]) -> bool {
    stored.len() >= words.len() && words.iter().zip(stored).all(|(a, b)| a == b)
}

/// The first transition of a set given word by word.
fn first(words: impl Iterator<Item = u64>) -> Option<usize> {
    words
        .enumerate()
        .find(|&(_, w)| w != 0)
        .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
}

/// Reads a `@TREE` section, whose lines `lines` gives (numbered).
fn read_tree<'a>(
    name: String,
    lines: impl Iterator<Item = (usize, &'a str)>,
    fail: &dyn Fn(usize, String) -> Error,
) -> Result<RuleTable> {
    let (mut states, mut neighbours, mut count) = (None, None, None);
    let mut nodes: Vec<u32> = Vec::new();
    // Each node's depth and offset.
    let mut made: Vec<(u32, u32)> = Vec::new();
    let mut last = 0;
    for (n, raw) in lines {
        last = n;
        let line = raw.trim();
        if line.starts_with('@') {
            break;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some((key, value)) = line.split_once('=') {
            let value: u32 = value
                .trim()
                .parse()
                .map_err(|_| fail(n, format!("{} is not a number", quoted(value.trim()))))?;
            match key.trim() {
                "num_states" if (2..=MAX_STATES).contains(&value) => states = Some(value),
                "num_neighbors" if value == 4 || value == 8 => neighbours = Some(value),
                "num_nodes" => count = Some(value),
                other => {
                    return Err(fail(
                        n,
                        format!("unexpected {}", quoted(&format!("{other}={value}"))),
                    ))
                }
            }
            continue;
        }
        let (Some(s), Some(k), Some(total)) = (states, neighbours, count) else {
            return Err(fail(
                n,
                "num_states, num_neighbors and num_nodes come before the first node".into(),
            ));
        };
        let numbers: Vec<u32> = line
            .split_whitespace()
            .map(|t| {
                t.parse::<u32>()
                    .map_err(|_| fail(n, format!("{} is not a number", quoted(t))))
            })
            .collect::<Result<_>>()?;
        if numbers.len() != s as usize + 1 {
            return Err(fail(
                n,
                format!(
                    "a node has {} numbers (its depth and one per state), not {}",
                    s + 1,
                    numbers.len()
                ),
            ));
        }
        if made.len() as u32 >= total {
            return Err(fail(n, format!("more nodes than num_nodes={total}")));
        }
        let depth = numbers[0];
        if !(1..=k + 1).contains(&depth) {
            return Err(fail(
                n,
                format!("a node's depth is 1 to {}, not {depth}", k + 1),
            ));
        }
        let offset = nodes.len() as u32;
        for &value in &numbers[1..] {
            nodes.push(if depth == 1 {
                if value >= s {
                    return Err(fail(
                        n,
                        format!("state {value} is out of range: the rule has {s} states"),
                    ));
                }
                value
            } else {
                match made.get(value as usize) {
                    Some(&(d, at)) if d + 1 == depth => at,
                    Some(&(d, _)) => {
                        return Err(fail(
                            n,
                            format!("node {value} has depth {d}, not {}", depth - 1),
                        ))
                    }
                    None => return Err(fail(n, format!("node {value} is not defined above"))),
                }
            });
        }
        made.push((depth, offset));
    }
    let (Some(s), Some(k), Some(total)) = (states, neighbours, count) else {
        return Err(fail(
            last,
            "the @TREE names no num_states, num_neighbors or num_nodes".into(),
        ));
    };
    if made.len() as u32 != total {
        return Err(fail(
            last,
            format!("num_nodes={total}, but the tree has {} nodes", made.len()),
        ));
    }
    match made.last() {
        Some(&(depth, root)) if depth == k + 1 => Ok(RuleTable {
            lookup: Lookup::Tree { nodes, root },
            name,
            states: s,
            eight: k == 8,
            colours: Vec::new(),
        }),
        _ => Err(fail(
            last,
            format!("the last node, the root, must have depth {}", k + 1),
        )),
    }
}

/// Folders given by the user (`--rules`), searched first.
static FOLDERS: RwLock<Vec<PathBuf>> = RwLock::new(Vec::new());

/// The rule tables of the zip archives opened in this process, searched after the folders of
/// `--rules` (where Golly installs an archive's rule files): the file's name in lower case,
/// the archive and the member's name in it. A later archive's table of a name replaces an
/// earlier's, and of archives held in memory (uploads) only the last one's tables are kept.
static ARCHIVED: Mutex<Vec<(String, Source, String)>> = Mutex::new(Vec::new());

/// Every table read in this process, once each.
static TABLES: Mutex<Vec<&'static RuleTable>> = Mutex::new(Vec::new());

/// The `.rule` files' texts parsed in this process, and their tables ([`parse_once`]).
static PARSED: Mutex<Vec<(String, &'static RuleTable)>> = Mutex::new(Vec::new());

/// Sets the folders searched for rules before a pattern's own folder and Golly's
/// ([`find`]).
pub fn set_folders(folders: Vec<PathBuf>) {
    *FOLDERS.write().unwrap_or_else(|e| e.into_inner()) = folders;
}

/// Offers the rule table `file` (`NAME.rule`), member `member` of the zip archive `archive`,
/// to [`find`]: read when first looked for.
pub(crate) fn provide(file: &str, archive: &Source, member: &str) {
    let file = file.to_ascii_lowercase();
    let mut archived = ARCHIVED.lock().unwrap_or_else(|e| e.into_inner());
    let held = matches!(archive, Source::Bytes { .. });
    archived.retain(|(f, source, _)| {
        // Only the last archive held in memory keeps its tables here.
        let other_held =
            held && matches!(source, Source::Bytes { .. }) && !source.same_bytes(archive);
        *f != file && !other_held
    });
    archived.push((file, archive.clone(), member.to_string()));
}

/// Whether `name` could be a rule table's name: letters, digits, `-` and `_`, starting with a
/// letter (as Golly advises).
pub fn is_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The folders searched for a rule, in order: [`set_folders`]'s, `near` (a pattern file's
/// folder), and Golly's.
pub fn folders(near: Option<&Path>) -> Vec<PathBuf> {
    let mut all = FOLDERS.read().unwrap_or_else(|e| e.into_inner()).clone();
    all.extend(near.map(Path::to_path_buf));
    all.extend(GOLLY_RULES.iter().map(PathBuf::from));
    all
}

/// The table of rule `name` (matched without regard to case to `NAME.rule`) from the first of
/// [`folders`]`(near)` that has it, read once per process; `Ok(None)` where none has it.
pub fn find(name: &str, near: Option<&Path>) -> Result<Option<&'static RuleTable>> {
    let wanted = format!("{name}.rule").to_ascii_lowercase();
    let users = FOLDERS.read().unwrap_or_else(|e| e.into_inner()).len();
    for (i, folder) in folders(near).into_iter().enumerate() {
        if i == users {
            let archived = ARCHIVED.lock().unwrap_or_else(|e| e.into_inner()).clone();
            if let Some((_, archive, member)) = archived.iter().find(|(f, _, _)| *f == wanted) {
                let text = crate::pattern::archive::read_member(archive, member, MAX_FILE_BYTES)?;
                let shown = crate::pattern::archive::shown(archive.name(), member);
                let text = String::from_utf8(text).map_err(|_| {
                    Error::Invalid(format!("{}: a .rule file is text", shown.display()))
                })?;
                return parse_once(text, &shown).map(Some);
            }
        }
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut matches: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|f| f.to_str())
                    .is_some_and(|f| f.to_ascii_lowercase() == wanted)
            })
            .collect();
        // The exact spelling first, where two files differ only in case.
        matches.sort_by_key(|p| {
            p.file_name().and_then(|f| f.to_str()) != Some(&format!("{name}.rule"))
        });
        if let Some(path) = matches.first() {
            return read(path).map(Some);
        }
    }
    Ok(None)
}

/// The table of the `.rule` file at `path`, read once per process.
pub fn read(path: &Path) -> Result<&'static RuleTable> {
    let size = std::fs::metadata(path)
        .map_err(|e| Error::io(path, e))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(Error::Invalid(format!(
            "{}: a .rule file of {size} bytes is beyond the {MAX_FILE_BYTES} bytes read",
            path.display()
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse_once(text, path)
}

/// The table of a `.rule` file's `text` (named `path` in messages), parsed once per process
/// for each text: a rule named again (a pattern's header read again, the viewer started
/// again) is not parsed and its tree not built again (DragonCurve's took 0.9 s).
fn parse_once(text: String, path: &Path) -> Result<&'static RuleTable> {
    let parsed = |text: &str| {
        PARSED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(t, _)| t == text)
            .map(|&(_, table)| table)
    };
    if let Some(table) = parsed(&text) {
        return Ok(table);
    }
    // Parsed without the lock held: two threads may both parse a text, and `intern` keeps one.
    let table = intern(RuleTable::parse(&text, path)?);
    if parsed(&text).is_none() {
        PARSED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((text, table));
    }
    Ok(table)
}

/// Wolfram's elementary one-dimensional rule `number` (even, 0 to 254) as Golly runs it on
/// the plane: each generation's row is drawn below the one before, so an empty cell comes
/// alive where the three cells above it (north-west, north, north-east, read as the bits 4, 2
/// and 1 of a pattern) make a pattern whose bit is set in `number`, and a live cell stays.
/// Made as a two-state `@TABLE` named `W<number>` (every rule-table engine runs it).
pub fn wolfram(number: u32) -> Result<&'static RuleTable> {
    if number > 254 || number % 2 == 1 {
        return Err(Error::Invalid(
            "Wolfram's rules are the even numbers 0 to 254 (an odd one turns the empty plane on, as B0 does, which Golly does not run either)".into(),
        ));
    }
    // Moore order: centre, N, NE, E, SE, S, SW, W, NW, then the new centre; a..h any state.
    let mut text =
        format!("@RULE W{number}\n@TABLE\nn_states:2\nneighborhood:Moore\nsymmetries:none\n");
    for v in ["a", "b", "c", "d", "e", "f", "g", "h"] {
        text.push_str(&format!("var {v}={{0,1}}\n"));
    }
    text.push_str("1,a,b,c,d,e,f,g,h,1\n");
    for pattern in (1..8).filter(|p| number >> p & 1 == 1) {
        let (nw, n, ne) = (pattern >> 2, pattern >> 1 & 1, pattern & 1);
        text.push_str(&format!("0,{n},{ne},a,b,c,d,e,{nw},1\n"));
    }
    RuleTable::parse(&text, Path::new(&format!("W{number}"))).map(intern)
}

/// The one kept copy of `table`.
pub fn intern(table: RuleTable) -> &'static RuleTable {
    let mut tables = TABLES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&kept) = tables.iter().find(|&&t| *t == table) {
        return kept;
    }
    let kept: &'static RuleTable = Box::leak(Box::new(table));
    tables.push(kept);
    kept
}

#[cfg(test)]
mod test {
    use super::*;

    fn parse(text: &str) -> Result<RuleTable> {
        RuleTable::parse(text, Path::new("test.rule"))
    }

    /// The next state of `around` by the definition: the first transition of `lines` (given
    /// as (centre, N, E, S, W, output) with `None` for "any state") matching in some rotation.
    fn by_definition(lines: &[[Option<u8>; 6]], around: [u8; 5]) -> u8 {
        for line in lines {
            for turn in 0..4 {
                let ok = (0..5).all(|i| {
                    let place = if i == 0 { 0 } else { 1 + (i - 1 + turn) % 4 };
                    line[place].is_none_or(|s| s == around[i])
                });
                if ok {
                    return line[5].expect("literal output");
                }
            }
        }
        around[0]
    }

    #[test]
    fn a_von_neumann_table_with_variables_and_rotations_runs_as_defined() {
        let text = "@RULE Test\n@TABLE\nn_states:3\nneighborhood:vonNeumann\nsymmetries:rotate4\nvar a={0,1,2}\nvar b={0,1,2}\n# a comment\n0,1,a,0,b,2\n1,2,0,0,0,0 # trailing\n2,a,b,a,b,1\n";
        let table = parse(text).unwrap();
        assert_eq!(table.states(), 3);
        let lines = [
            [Some(0), Some(1), None, Some(0), None, Some(2)],
            [Some(1), Some(2), Some(0), Some(0), Some(0), Some(0)],
        ];
        for code in 0..3u32.pow(5) {
            let v: [u8; 5] = std::array::from_fn(|i| (code / 3u32.pow(i as u32) % 3) as u8);
            let [c, n, e, s, w] = v;
            let around = [[0, n, 0], [w, c, e], [0, s, 0]];
            // Line 3 binds a and b: N = S and E = W (in any rotation that is the same).
            let expect = match by_definition(&lines, v) {
                keep if keep == c && c == 2 && n == s && e == w => 1,
                other => other,
            };
            assert_eq!(table.next(&around), expect, "{v:?}");
        }
    }

    #[test]
    fn transitions_kept_for_want_of_a_tree_give_the_trees_next_states() {
        let mut seed = 41u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 33
        };
        for round in 0..60u64 {
            let (states, eight) = (2 + (round % 7) as u32, round % 2 == 0);
            // The generator is a copy: both tables are made of the same transitions.
            let mut again = next;
            let tree = RuleTable::random(states, eight, &mut next);
            let kept = RuleTable::random_within(states, eight, &mut again, 0);
            assert!(tree.tree().is_some() && kept.tree().is_none(), "{round}");
            assert_eq!(kept.reads().len(), if eight { 9 } else { 5 });
            if round == 0 {
                // No GPU engine runs a table without a tree; the CPU's and HashLife do.
                let mut copy = next;
                let rule = crate::Rule::from_table(intern(RuleTable::random_within(
                    states, eight, &mut copy, 0,
                )));
                let refusal = rule.check_engine(crate::EngineId::CudaStates, 8);
                assert!(refusal
                    .unwrap_err()
                    .to_string()
                    .contains("tree is too large"));
                for engine in [crate::EngineId::CpuStates, crate::EngineId::Hashlife] {
                    assert!(rule.check_engine(engine, 8).is_ok(), "{engine}");
                }
            }
            for _ in 0..2000 {
                let around: [[u8; 3]; 3] = std::array::from_fn(|_| {
                    std::array::from_fn(|_| (next() % states as u64) as u8)
                });
                assert_eq!(kept.next(&around), tree.next(&around), "{round} {around:?}");
            }
        }
    }

    #[test]
    fn variables_without_braces_or_equals_are_read_as_golly_reads_them() {
        // `var a{...}` (Flow6.rule) and `var b = a` (DragonCurve.rule): b is a's states, bound
        // apart from a; `var c = 2` is one state.
        let loose = "@RULE L\n@TABLE\nn_states:3\nneighborhood:vonNeumann\nsymmetries:none\nvar a{0,1,2}\nvar b = a\nvar c = 2\n0,a,b,a,b,2\n1,c,0,0,0,0\n";
        let braced = loose
            .replace("var a{0,1,2}", "var a={0,1,2}")
            .replace("var b = a", "var b={0,1,2}")
            .replace("var c = 2", "var c={2}");
        let (loose, braced) = (parse(loose).unwrap(), parse(&braced).unwrap());
        for code in 0..3u32.pow(5) {
            let [c, n, e, s, w]: [u8; 5] =
                std::array::from_fn(|i| (code / 3u32.pow(i as u32) % 3) as u8);
            let around = [[0, n, 0], [w, c, e], [0, s, 0]];
            assert_eq!(loose.next(&around), braced.next(&around), "{code}");
        }
        let two = [[0, 1, 0], [2, 0, 2], [0, 1, 0]];
        assert_eq!(loose.next(&two), 2);
        assert_eq!(loose.next(&[[0, 1, 0], [2, 0, 2], [0, 0, 0]]), 0);
        assert_eq!(loose.next(&[[0, 2, 0], [0, 1, 0], [0, 0, 0]]), 0);
        let mixed =
            "@RULE M\n@TABLE\nn_states:3\nneighborhood:vonNeumann\nsymmetries:none\nvar a = 0,1\n";
        let err = parse(mixed).unwrap_err().to_string();
        assert!(err.contains("go in braces"), "{err}");
    }

    #[test]
    fn bound_outputs_permute_and_digit_rows_are_read() {
        // Moore, permute: a live cell survives with exactly two live neighbours anywhere.
        let text = "@RULE P\n@TABLE\nn_states:2\nneighborhood:Moore\nsymmetries:permute\n111000000 1\n1,0,0,0,0,0,0,0,0,0\n";
        let t = parse(&text.replace("111000000 1", "1110000001")).unwrap();
        for bits in 0..512u32 {
            let c = |i: u32| (bits >> i & 1) as u8;
            let around = [[c(0), c(1), c(2)], [c(3), c(4), c(5)], [c(6), c(7), c(8)]];
            let neighbours = (bits & !(1 << 4)).count_ones();
            let expect = match (c(4), neighbours) {
                (1, 2) => 1,
                (1, 0) => 0,
                (state, _) => state,
            };
            assert_eq!(t.next(&around), expect, "{bits:09b}");
        }
        let bound = "@RULE B\n@TABLE\nn_states:4\nneighborhood:oneDimensional\nsymmetries:none\nvar a={1,2,3}\n0,a,a,a\n";
        let t = parse(bound).unwrap();
        assert_eq!(t.next(&[[0, 0, 0], [2, 0, 2], [0, 0, 0]]), 2);
        assert_eq!(t.next(&[[0, 0, 0], [2, 0, 3], [0, 0, 0]]), 0);
        // An output variable that appears once has no one state.
        let loose = bound.replace("0,a,a,a", "0,a,0,1\n1,0,0,a");
        let err = parse(&loose).unwrap_err().to_string();
        assert!(err.contains(":8:") && err.contains("no one state"), "{err}");
    }

    /// A four-neighbour tree (n, w, e, s, c) of two states whose centre becomes its north
    /// cell, with its nodes' lines replaced by `nodes` where given.
    fn north(count: &str, nodes: Option<&str>) -> String {
        let nodes =
            nodes.unwrap_or("1 0 0\n1 1 1\n2 0 0\n2 1 1\n3 2 2\n3 3 3\n4 4 4\n4 5 5\n5 6 7\n");
        format!(
            "@RULE T\n@TREE\n# header\nnum_states=2\nnum_neighbors=4\nnum_nodes={count}\n{nodes}"
        )
    }

    #[test]
    fn trees_are_read_and_checked() {
        let t = parse(&north("9", None)).unwrap();
        for n in 0..2 {
            for c in 0..2 {
                assert_eq!(t.next(&[[1, n, 1], [0, c, 1], [1, 0, 1]]), n);
            }
        }
        for (tree, says) in [
            (north("10", None), "num_nodes=10, but the tree has 9 nodes"),
            (
                north("5", Some("1 0 0\n1 1 1\n2 0 0\n3 2 2\n4 3 3\n")),
                "the root, must have depth 5",
            ),
            (
                north("2", Some("1 0 0\n5 0 0\n")),
                "node 0 has depth 1, not 4",
            ),
            (
                north("2", Some("1 0 0\n2 0 3\n")),
                "node 3 is not defined above",
            ),
            (north("1", Some("1 0 2\n")), "state 2 is out of range"),
            (north("1", Some("1 0\n")), "a node has 3 numbers"),
        ] {
            let err = parse(&tree).unwrap_err().to_string();
            assert!(err.contains(says), "{tree:?}: {err}");
        }
    }

    #[test]
    fn bad_tables_get_one_line_naming_the_place() {
        // Four transitions of eight distinct neighbours: 4 × 8! orders under permute.
        let permuted = format!(
            "@RULE X\n@TABLE\nn_states:9\nneighborhood:Moore\nsymmetries:permute\n{}",
            (0..4)
                .map(|c| format!("{c},1,2,3,4,5,6,7,8,0\n"))
                .collect::<String>()
        );
        for (text, says) in [
            ("@RULE X\n@TABLE\nn_states:300\n", "n_states must be 2 to 256"),
            ("@RULE X\n@TABLE\nn_states:2\nneighborhood:Square\n", "unknown neighborhood"),
            ("@RULE X\n@TABLE\nn_states:2\nneighborhood:vonNeumann\nsymmetries:none\n0,0,0,0,0,1\nneighborhood:Moore\n", "comes after the first variable or transition"),
            ("@RULE X\n@TABLE\nn_states:2\nneighborhood:vonNeumann\nsymmetries:rotate8\n0,0,0,0,0,1\n", "no symmetries"),
            ("@RULE X\n@TABLE\nn_states:2\nneighborhood:vonNeumann\nsymmetries:none\n0,0,0,0,1\n", "has 6 entries, not 5"),
            ("@RULE X\n@TABLE\nn_states:2\nneighborhood:vonNeumann\nsymmetries:none\n0,0,0,0,q,1\n", "neither a state nor a variable"),
            ("@RULE X\n@TABLE\nn_states:2\nneighborhood:vonNeumann\nsymmetries:none\n0,0,0,0,2,1\n", "state 2 is out of range"),
            ("@RULE X\nno sections\n", "neither a @TABLE nor a @TREE"),
            (&permuted, "expand it to over"),
            ("x = 1\n", "expected @RULE"),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(says) && !err.contains('\n') && err.contains("test.rule"), "{text:?}: {err}");
        }
    }

    #[test]
    fn a_table_answers_alike_while_its_tree_is_built_and_after() {
        let text = "@RULE Behind\n@TABLE\nn_states:3\nneighborhood:Moore\nsymmetries:rotate4\nvar a={0,1,2}\nvar b=a\nvar c=a\nvar d=a\nvar e=a\nvar f=a\n0,1,2,a,b,c,d,e,f,1\n1,a,b,2,c,d,e,f,0,2\n2,0,0,0,0,0,0,0,0,0\n1,1,a,b,c,d,e,f,2,0\n";
        let table = parse(text).unwrap();
        let Lookup::Building(building) = &table.lookup else {
            panic!("a @TABLE's tree is built on a thread of its own");
        };
        let mut checked = 0;
        for code in 0..3u32.pow(9) {
            let mut around = [[0u8; 3]; 3];
            for (i, cell) in around.iter_mut().flatten().enumerate() {
                *cell = (code / 3u32.pow(i as u32) % 3) as u8;
            }
            let meanwhile = building.masks.next(table.order(), table.states, &around);
            table.tree().expect("a small tree");
            assert_eq!(table.next(&around), meanwhile, "{around:?}");
            checked += (meanwhile != around[1][1]) as u32;
        }
        assert!(building.tree.get().is_some_and(Option::is_some));
        assert!(checked > 100, "{checked} changes");
    }

    #[test]
    fn a_file_read_again_is_parsed_again_only_where_its_text_changed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("Cached.rule");
        let text = |output: u32| {
            format!("@RULE Cached\n@TABLE\nn_states:3\nneighborhood:vonNeumann\nsymmetries:none\n0,1,0,0,0,{output}\n")
        };
        // A dead cell with a cell in state 1 to its north.
        let next = |table: &RuleTable| table.next(&[[0, 1, 0], [0, 0, 0], [0, 0, 0]]);
        std::fs::write(&path, text(1)).unwrap();
        let first = super::read(&path).unwrap();
        assert_eq!(next(first), 1);
        assert!(std::ptr::eq(first, super::read(&path).unwrap()));
        std::fs::write(&path, text(2)).unwrap();
        let changed = super::read(&path).unwrap();
        assert_eq!(next(changed), 2);
        std::fs::write(&path, text(1)).unwrap();
        assert!(std::ptr::eq(first, super::read(&path).unwrap()));
    }

    #[test]
    fn permutations_are_each_distinct_order_once() {
        let mut items = vec![1, 1, 2, 3];
        let mut seen = vec![items.clone()];
        while next_permutation(&mut items) {
            seen.push(items.clone());
        }
        assert_eq!(seen.len(), 12);
        assert_eq!(items, vec![1, 1, 2, 3]);
    }

    #[test]
    fn every_rule_golly_ships_is_read() {
        let Ok(entries) = std::fs::read_dir(GOLLY_RULES[0]) else {
            eprintln!(
                "skipped: Golly's rules are not installed at {}",
                GOLLY_RULES[0]
            );
            return;
        };
        let mut read = 0;
        for path in entries.map(|e| e.unwrap().path()) {
            if path.extension().is_some_and(|e| e == "rule") {
                let start = std::time::Instant::now();
                let table = super::read(&path).unwrap_or_else(|e| panic!("{e}"));
                let name = path.file_stem().unwrap().to_str().unwrap();
                assert_eq!(table.name(), name);
                eprintln!(
                    "{name}: {} states, {} words, {:?}",
                    table.states(),
                    table.tree().map_or(0, |(nodes, _, _)| nodes.len()),
                    start.elapsed()
                );
                read += 1;
            }
        }
        assert!(read >= 50, "{read} rules");
    }

    #[test]
    fn colors_are_read_as_golly_reads_them() {
        let table = |colours: &str| {
            let text = format!(
                "@RULE C\n@TABLE\nn_states:5\nneighborhood:vonNeumann\nsymmetries:none\n0,1,0,0,0,1\n{colours}"
            );
            RuleTable::parse(&text, Path::new("c.rule"))
        };
        assert_eq!(table("").unwrap().colours(), None);
        // State lines (text after the numbers ignored, states the rule lacks ignored), a
        // section after it, then a gradient over the live states.
        let t = table(
            "@COLORS\n# dark\n0 48 48 48 dark gray\n\n3 255 128 0\n9 1 2 3\n@ICONS\n1 9 9 9\n",
        )
        .unwrap();
        let c = t.colours().unwrap();
        assert_eq!(
            c,
            &[Some([48, 48, 48]), None, None, Some([255, 128, 0]), None]
        );
        let t = table("@COLORS\n0 0 255  255 0 0 blue to red\n").unwrap();
        let c = t.colours().unwrap();
        assert_eq!(c[0], None);
        assert_eq!(c[1], Some([0, 0, 255]));
        assert_eq!(c[4], Some([255, 0, 0]));
        assert_eq!(c[2], Some([85, 0, 170]));
        for (bad, says) in [
            ("@COLORS\n1 2 3\n", "a @COLORS line is a state"),
            ("@COLORS\n1 256 0 0\n", "above 255"),
        ] {
            let e = table(bad).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("c.rule:8"), "{bad:?}: {e}");
        }
    }
}
