//! Pattern files on the plane: a file's cells into a [`Tree`] (through core's [`Sink`], or a
//! macrocell file's nodes taken as they are, whatever their extent), and a tree out as RLE or
//! macrocell (written from its nodes).

use std::collections::HashMap;
use std::io::{self, Write};

use gol_core::pattern::{MacroNode, PatternFile, Sink};
use gol_core::{Error, Grid, Result};
use num_bigint::{BigInt, BigUint};
use num_traits::{One, ToPrimitive};
use rustc_hash::FxHashMap;

use crate::leaf::Leaf;
use crate::store::{Id, Store};
use crate::tree::{leaf_of, Full, Tree};

/// The message of a store too small for the pattern itself.
pub(crate) fn too_large(store: &Store) -> Error {
    Error::Memory(format!(
        "the pattern does not fit in the plane's memory cap of {}",
        gol_core::memory::human_bytes(store.bytes())
    ))
}

/// Leaves gathered from cells given one at a time or a row at a time, in Golly's coordinates,
/// and made into nodes of a store. Where the cells come row by row (RLE, grids), each row of
/// leaves is made into nodes once the cells have gone past it, and kept as their ids (24
/// bytes a leaf): a pattern of hundreds of millions of cells is read in a few bytes a cell
/// beyond its tree. Cells that come out of that order (Life 1.06, a tree's leaves) stay in
/// leaves by their place until [`Builder::build`], which lays them over any made already.
pub struct Builder<L: Leaf> {
    store: Store,
    leaf: L,
    /// Leaves not yet made into nodes, by their column and row of leaves.
    open: FxHashMap<(i64, i64), [u32; 4]>,
    /// The row of leaves of the last cell given.
    row: i64,
    /// Whether no cell so far came in a row of leaves above the one before it.
    ordered: bool,
    /// Leaves made into nodes: (row, column, id), sorted by row, then column.
    made: Vec<(i64, i64, Id)>,
    /// Golly's coordinates of the pattern's (0, 0).
    origin: (i64, i64),
    states: u32,
    /// The first cell given a state the leaves cannot hold.
    bad_state: Option<u32>,
    /// Set where the store filled up while leaves were made into nodes.
    full: bool,
}

impl<L: Leaf> Builder<L> {
    /// An empty builder for cells whose (0, 0) is Golly's `origin`, into `store`, its leaves
    /// stepped by `leaf`.
    pub fn new(origin: (i64, i64), store: Store, leaf: L) -> Builder<L> {
        Builder {
            store,
            states: leaf.states(),
            leaf,
            open: FxHashMap::default(),
            row: i64::MIN,
            ordered: true,
            made: Vec::new(),
            origin,
            bad_state: None,
            full: false,
        }
    }

    /// Sets the cell at (x, y) of the pattern to `state` (1 or more).
    #[inline]
    pub fn set(&mut self, x: i64, y: i64, state: u8) {
        let (at, (cx, cy)) = leaf_of(self.origin.0 + x, self.origin.1 + y, L::LEVEL);
        if at.1 != self.row {
            if at.1 < self.row {
                self.ordered = false;
            } else if self.ordered {
                self.make_open();
            }
            self.row = at.1;
        }
        L::set(self.open.entry(at).or_insert([0; 4]), cx, cy, state);
    }

    /// Makes the open leaves, all of one row of leaves (the cells having come in order), into
    /// nodes.
    fn make_open(&mut self) {
        let mut row: Vec<(i64, [u32; 4])> = self
            .open
            .drain()
            .filter(|(_, key)| *key != [0; 4])
            .map(|((column, _), key)| (column, key))
            .collect();
        row.sort_unstable_by_key(|&(column, _)| column);
        self.store.reserve(row.len() as u64);
        for (column, key) in row {
            match self.store.node(L::LEVEL, key) {
                Some(id) => self.made.push((self.row, column, id)),
                None => self.full = true,
            }
        }
    }

    /// The tree of the cells given.
    pub fn build(mut self) -> Result<Tree<L>> {
        if let Some(state) = self.bad_state {
            return Err(Error::Invalid(format!(
                "cell state {state} needs a Generations rule of more than {state} states; the rule here has {}",
                self.states
            )));
        }
        if self.ordered {
            self.make_open();
        } else {
            self.lay_open();
        }
        if self.full {
            return Err(too_large(&self.store));
        }
        let message = too_large(&self.store);
        Tree::from_leaf_nodes(self.store, self.leaf, self.made).map_err(|Full| message)
    }

    /// Makes the open leaves (of any rows, the cells having come out of order) into nodes,
    /// each laid over the node made already at its place, if any.
    fn lay_open(&mut self) {
        let side = 1u32 << L::LEVEL;
        let open: Vec<((i64, i64), [u32; 4])> = self.open.drain().collect();
        self.store.reserve(open.len() as u64);
        let mut new = Vec::new();
        for ((column, row), key) in open {
            let found = self
                .made
                .binary_search_by_key(&(row, column), |&(r, c, _)| (r, c));
            let under = match found {
                Ok(k) => {
                    let mut under = self.store.key(self.made[k].2);
                    for y in 0..side {
                        for x in 0..side {
                            let state = L::get(key, x, y);
                            if state != 0 {
                                L::set(&mut under, x, y, state);
                            }
                        }
                    }
                    under
                }
                Err(_) => key,
            };
            if under == [0; 4] {
                continue;
            }
            let Some(id) = self.store.node(L::LEVEL, under) else {
                self.full = true;
                return;
            };
            match found {
                Ok(k) => self.made[k].2 = id,
                Err(_) => new.push((row, column, id)),
            }
        }
        self.made.append(&mut new);
        self.made
            .sort_unstable_by_key(|&(row, column, _)| (row, column));
    }
}

impl<L: Leaf> Sink for Builder<L> {
    fn states(&self) -> u32 {
        self.states
    }

    fn row(&mut self, y: usize, first: usize, words: &[u64]) {
        for (k, &word) in words.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                self.set((64 * (first + k) + b) as i64, y as i64, 1);
                bits &= bits - 1;
            }
        }
    }

    fn run(&mut self, x: usize, y: usize, len: usize, state: u32) {
        if state >= self.states {
            self.bad_state.get_or_insert(state);
            return;
        }
        for i in 0..len {
            self.set((x + i) as i64, y as i64, state as u8);
        }
    }
}

/// The cells of `file` on the plane, placed as Golly places them on its unbounded plane: where
/// the file gives a position (`#CXRLE Pos=`, Life 1.0x and macrocell coordinates), there; else
/// with its top-left cell at the origin (on a bounded grid Golly centres it instead). In a tree
/// of `store` stepped by `leaf`.
pub fn read<L: Leaf>(file: &PatternFile, store: Store, leaf: L) -> Result<Tree<L>> {
    if let Some(nodes) = file.macrocell_nodes() {
        return macrocell(&nodes?, store, leaf);
    }
    let (x, y) = file.header().position.clone().unwrap_or_default();
    let h = file.header();
    // Near the origin, cells go straight to their leaves; far from it (a file written after
    // very many generations), the pattern is built near the origin and then put in place.
    let near = |v: &BigInt| v.to_i64().is_some_and(|v| v.unsigned_abs() < NEAR);
    if near(&x) && near(&y) {
        let origin = (x.to_i64().unwrap(), y.to_i64().unwrap());
        let mut builder = Builder::new(origin, store, leaf);
        file.paint_into(&mut builder)?;
        return builder.build();
    }
    // The root's level is at most MAX_LEVEL: its corners are ±2^(MAX_LEVEL − 1), and the pattern
    // and a margin must fit inside.
    let reach = BigInt::one() << (crate::store::MAX_LEVEL - 3);
    if x.magnitude() >= reach.magnitude() || y.magnitude() >= reach.magnitude() {
        return Err(Error::Invalid(format!(
            "the pattern's position is beyond what the plane can place: x and y must lie within \
             ±2^{} (about 10^{})",
            crate::store::MAX_LEVEL - 3,
            ((crate::store::MAX_LEVEL - 3) as f64 * std::f64::consts::LOG10_2) as u32
        )));
    }
    let side = h.width.max(h.height).max(1) as u64;
    let level = (64 - (side - 1).leading_zeros()).max(L::LEVEL);
    let (ax, ay) = crate::tree::block_corner(&x, &y, level);
    // Golly's y of the anchor's row is its tree row plus one: so is the builder's.
    let local = (
        (&x - &ax).to_i64().unwrap(),
        (&y - &ay).to_i64().unwrap() + 1,
    );
    let mut builder = Builder::new(local, store, leaf);
    file.paint_into(&mut builder)?;
    let tree = builder.build()?;
    let message = too_large(tree.store());
    tree.moved(level, &ax, &ay).map_err(|Full| message)
}

/// Positions up to this far from the origin are placed directly.
const NEAR: u64 = 1 << 60;

/// The cells of `grid` on the plane, its top-left cell at Golly's (x, y).
pub fn from_grid<L: Leaf>(grid: &Grid, x: i64, y: i64, store: Store, leaf: L) -> Result<Tree<L>> {
    let mut builder = Builder::new((x, y), store, leaf);
    if grid.states() > 2 {
        for (i, &state) in grid.to_states().iter().enumerate() {
            if state != 0 {
                let (cx, cy) = (i % grid.width(), i / grid.width());
                builder.run(cx, cy, 1, state as u32);
            }
        }
    } else {
        for row in 0..grid.height() {
            builder.row(row, 0, grid.row(row));
        }
    }
    builder.build()
}

/// A macrocell file's node as this tree takes it: a node of the store, or cells of a square
/// below the leaves' level (side 2^level, the node's level; row-major with a stride of 8).
#[derive(Clone, Copy)]
enum Part {
    Node(Id),
    Cells([u8; 64]),
}

/// The tree of a macrocell file's `nodes` (the last is the root), node by node.
fn macrocell<L: Leaf>(nodes: &[MacroNode], mut store: Store, leaf: L) -> Result<Tree<L>> {
    let root_level = match nodes.last() {
        Some(MacroNode::Inner(level, _)) => *level,
        Some(MacroNode::Leaf(_)) => 3,
        Some(MacroNode::States(_)) | None => 1,
    };
    if root_level <= L::LEVEL + 1 {
        // Small enough to take cell by cell: the root of level k spans x from −2^(k−1) and y
        // from −2^(k−1) + 1.
        let half = 1i64 << (root_level - 1);
        let mut builder = Builder::new((-half, -half + 1), store, leaf);
        cells_of(nodes, nodes.len() - 1, (0, 0), &mut builder);
        return builder.build();
    }
    // A file's node, and for multi-state leaves the four nodes of 8x8 cells a leaf of the
    // file may become, and the empty nodes of each level.
    store.reserve(4 * nodes.len() as u64 + 2 * root_level as u64);
    let full = |_| too_large(&store);
    let mut parts: Vec<Part> = Vec::with_capacity(nodes.len());
    for (i, node) in nodes.iter().enumerate() {
        let part = match *node {
            _ if i == 0 => Part::Node(0),
            MacroNode::Leaf(bits) => {
                let mut cells = [0u8; 64];
                for (c, cell) in cells.iter_mut().enumerate() {
                    *cell = (bits >> c & 1) as u8;
                }
                lift(&store, Part::Cells(cells), 3, leaf.states())?
            }
            MacroNode::States(states) => {
                let mut cells = [0u8; 64];
                cells[..2].copy_from_slice(&states[..2]);
                cells[8..10].copy_from_slice(&states[2..]);
                lift(&store, Part::Cells(cells), 1, leaf.states())?
            }
            MacroNode::Inner(level, children) => {
                let child = |q: usize| -> Result<Part> {
                    match children[q] {
                        0 if level > L::LEVEL => Ok(Part::Node(
                            store.empty(level - 1).ok_or(Full).map_err(full)?,
                        )),
                        0 => Ok(Part::Cells([0; 64])),
                        c => Ok(parts[c]),
                    }
                };
                let quads = [child(0)?, child(1)?, child(2)?, child(3)?];
                if level > L::LEVEL {
                    let ids = quads.map(|p| match p {
                        Part::Node(id) => id,
                        Part::Cells(..) => unreachable!("parts at the leaves' level are nodes"),
                    });
                    Part::Node(store.node(level, ids).ok_or(Full).map_err(full)?)
                } else {
                    let half = 1usize << (level - 1);
                    let mut cells = [0u8; 64];
                    for (q, part) in quads.iter().enumerate() {
                        let Part::Cells(c) = part else {
                            unreachable!("parts below the leaves' level are cells")
                        };
                        let (ox, oy) = ((q & 1) * half, (q >> 1) * half);
                        for y in 0..half {
                            for x in 0..half {
                                cells[(oy + y) * 8 + ox + x] = c[y * 8 + x];
                            }
                        }
                    }
                    lift(&store, Part::Cells(cells), level, leaf.states())?
                }
            }
        };
        parts.push(part);
    }
    let Some(&Part::Node(root)) = parts.last() else {
        unreachable!("a root above the leaves is a node")
    };
    Ok(Tree {
        store,
        leaf,
        root,
        level: root_level,
    })
}

/// `part` of `level` as the tree holds it: cells at the leaves' level become a leaf, cells
/// above it a node of leaves; refused where a cell's state is beyond `states`.
fn lift(store: &Store, part: Part, level: u32, states: u32) -> Result<Part> {
    let Part::Cells(cells) = part else {
        return Ok(part);
    };
    if let Some(&bad) = cells.iter().find(|&&s| s as u32 >= states) {
        return Err(Error::Invalid(format!(
            "cell state {bad} needs a Generations rule of more than {bad} states; the rule here has {states}"
        )));
    }
    let leaf_level = store.leaf_level();
    if level < leaf_level {
        return Ok(part);
    }
    let full = |_| too_large(store);
    let leaf_at = |ox: usize, oy: usize| -> Result<Id> {
        let side = 1usize << leaf_level;
        let mut key = [0u32; 4];
        for y in 0..side {
            for x in 0..side {
                let s = cells[(oy + y) * 8 + ox + x];
                // Both kinds of leaves, by their level.
                if leaf_level == 3 {
                    crate::leaf::Bits::set(&mut key, x as u32, y as u32, s);
                } else {
                    <crate::leaf::States as Leaf>::set(&mut key, x as u32, y as u32, s);
                }
            }
        }
        store.node(leaf_level, key).ok_or(Full).map_err(full)
    };
    if level == leaf_level {
        return Ok(Part::Node(leaf_at(0, 0)?));
    }
    // An 8×8 two-state leaf of the file over 4×4 leaves.
    let half = 1usize << (level - 1);
    let quads = [
        leaf_at(0, 0)?,
        leaf_at(half, 0)?,
        leaf_at(0, half)?,
        leaf_at(half, half)?,
    ];
    Ok(Part::Node(
        store.node(level, quads).ok_or(Full).map_err(full)?,
    ))
}

/// Gives the cells of node `i` of a macrocell file, its top-left corner at (x, y) of the
/// builder's pattern, to `builder`.
fn cells_of<L: Leaf>(nodes: &[MacroNode], i: usize, (x, y): (i64, i64), builder: &mut Builder<L>) {
    if i == 0 {
        return;
    }
    match nodes[i] {
        MacroNode::Leaf(bits) => {
            for c in 0..64 {
                if bits >> c & 1 == 1 {
                    builder.run((x + c % 8) as usize, (y + c / 8) as usize, 1, 1);
                }
            }
        }
        MacroNode::States(states) => {
            for (q, &s) in states.iter().enumerate() {
                if s != 0 {
                    let (cx, cy) = (x + (q & 1) as i64, y + (q >> 1) as i64);
                    builder.run(cx as usize, cy as usize, 1, s as u32);
                }
            }
        }
        MacroNode::Inner(level, children) => {
            let half = 1i64 << (level - 1);
            for (q, &c) in children.iter().enumerate() {
                let (cx, cy) = (x + (q as i64 & 1) * half, y + (q as i64 >> 1) * half);
                cells_of(nodes, c, (cx, cy), builder);
            }
        }
    }
}

/// Writes `tree` under `rule` in `format`, stamped with `generation`.
pub fn write_as<L: Leaf>(
    tree: &Tree<L>,
    format: crate::Written,
    rule: &gol_core::Rule,
    generation: &BigUint,
    mut out: &mut dyn Write,
) -> io::Result<()> {
    let rule = rule.to_string();
    match format {
        crate::Written::Rle => write_rle(tree, &rule, generation, &mut out),
        crate::Written::Macrocell => write_macrocell(tree, &rule, generation, &mut out),
    }
}

/// Writes `tree` as RLE: its bounding box, with `#CXRLE Pos=` and `Gen=generation`, `rule` as
/// given.
pub fn write_rle<L: Leaf>(
    tree: &Tree<L>,
    rule: &str,
    generation: &BigUint,
    out: &mut impl Write,
) -> io::Result<()> {
    let Some(bounds) = tree.bounding_box() else {
        let head = gol_core::pattern::RleHead {
            position: ("0".into(), "0".into()),
            generation: generation.to_string(),
            size: (0, 0),
            rule: rule.into(),
            states: tree.leaf().states(),
        };
        return gol_core::pattern::write_rle_runs(out, &head, |_| {});
    };
    let Some((width, height)) = bounds.size() else {
        return Err(io::Error::other(format!(
            "the pattern spans {}x{} cells, too many for an RLE file: write .mc",
            bounds.width, bounds.height
        )));
    };
    let head = gol_core::pattern::RleHead {
        position: (bounds.x.to_string(), bounds.y.to_string()),
        generation: generation.to_string(),
        size: (width, height),
        rule: rule.into(),
        states: tree.leaf().states(),
    };
    gol_core::pattern::write_rle_runs(out, &head, |row| {
        tree.runs(&bounds.x, &bounds.y, width, height, row)
    })
}

/// Writes `tree` as a macrocell file, straight from its nodes: `#R rule`, `#G generation`,
/// then each distinct node once, children before parents, the root last. Multi-state leaves
/// of 4×4 cells are written as Golly's 2×2 leaves and the nodes of four of them.
pub fn write_macrocell<L: Leaf>(
    tree: &Tree<L>,
    rule: &str,
    generation: &BigUint,
    out: &mut impl Write,
) -> io::Result<()> {
    writeln!(out, "[M2] (gol {})", env!("CARGO_PKG_VERSION"))?;
    writeln!(out, "#R {rule}")?;
    writeln!(out, "#G {generation}")?;
    let mut writer = NodeWriter {
        tree,
        out,
        numbers: HashMap::new(),
        small: HashMap::new(),
        count: 0,
    };
    let root = writer.node(tree.root, tree.level)?;
    if root == 0 {
        writeln!(writer.out, "{} 0 0 0 0", tree.level)?;
    }
    Ok(())
}

/// Writes nodes of a tree once each, numbering them as the file does (from 1).
struct NodeWriter<'a, L: Leaf, W: Write> {
    tree: &'a Tree<L>,
    out: &'a mut W,
    numbers: HashMap<Id, u64>,
    /// Golly's 2×2 multi-state leaves written, by their states.
    small: HashMap<[u8; 4], u64>,
    count: u64,
}

impl<L: Leaf, W: Write> NodeWriter<'_, L, W> {
    /// Writes node `id` of `level` (and what it needs first); its number, 0 for an empty one.
    fn node(&mut self, id: Id, level: u32) -> io::Result<u64> {
        let store = &self.tree.store;
        if store.is_empty(id) {
            return Ok(0);
        }
        if let Some(&n) = self.numbers.get(&id) {
            return Ok(n);
        }
        let key = store.key(id);
        let number = if level == L::LEVEL && L::LEVEL == 3 {
            let bits = crate::leaf::Bits::word(key);
            let last_row = (0..8)
                .rev()
                .find(|r| bits >> (8 * r) & 0xff != 0)
                .unwrap_or(0);
            let mut line = Vec::with_capacity(80);
            for r in 0..=last_row {
                let row = (bits >> (8 * r)) & 0xff;
                let len = 64 - row.leading_zeros() as usize;
                line.extend((0..len).map(|c| if row >> c & 1 == 1 { b'*' } else { b'.' }));
                line.push(b'$');
            }
            line.push(b'\n');
            self.out.write_all(&line)?;
            self.next()
        } else if level == L::LEVEL {
            // Four 2×2 leaves of states, then their node of level 2.
            let mut quads = [0u64; 4];
            for (q, quad) in quads.iter_mut().enumerate() {
                let (ox, oy) = (2 * (q as u32 & 1), 2 * (q as u32 >> 1));
                let states =
                    [(0, 0), (1, 0), (0, 1), (1, 1)].map(|(x, y)| L::get(key, ox + x, oy + y));
                *quad = self.small_leaf(states)?;
            }
            let [a, b, c, d] = quads;
            writeln!(self.out, "2 {a} {b} {c} {d}")?;
            self.next()
        } else {
            let mut children = [0u64; 4];
            for (q, child) in children.iter_mut().enumerate() {
                *child = self.node(key[q], level - 1)?;
            }
            let [a, b, c, d] = children;
            writeln!(self.out, "{level} {a} {b} {c} {d}")?;
            self.next()
        };
        self.numbers.insert(id, number);
        Ok(number)
    }

    /// Writes Golly's 2×2 leaf of `states` once; its number, 0 for an empty one.
    fn small_leaf(&mut self, states: [u8; 4]) -> io::Result<u64> {
        if states == [0; 4] {
            return Ok(0);
        }
        if let Some(&n) = self.small.get(&states) {
            return Ok(n);
        }
        let [a, b, c, d] = states;
        writeln!(self.out, "1 {a} {b} {c} {d}")?;
        let n = self.next();
        self.small.insert(states, n);
        Ok(n)
    }

    fn next(&mut self) -> u64 {
        self.count += 1;
        self.count
    }
}
