//! Golly's macrocell format (`.mc`, `[M2]`), two-state and multi-state: read and written.
//!
//! A file is an `[M2]` line, `#R rule` and `#G generation` lines (other `#` lines are
//! comments), then one quadtree node per line, numbered from 1 in the order given:
//!
//! - two-state, a leaf is an 8×8 square (level 3): its rows top to bottom, each `.` (dead) and
//!   `*` (alive) cells ended by `$`, trailing dead cells and trailing empty rows left out;
//! - multi-state (Generations rules), a leaf is a 2×2 square (level 1): `1 nw ne sw se`, the
//!   four cells' states;
//! - a node of level `k` above the leaves (a 2^k square): `k nw ne sw se`, the numbers of its
//!   four quadrants (each of level `k - 1`), 0 for an empty one.
//!
//! The last node is the root. Golly centres it: the root of level `k` spans x from −2^(k−1) to
//! 2^(k−1) − 1 and y from −2^(k−1) + 1 to 2^(k−1) in its coordinates (y down; see [`super`]),
//! which the files Golly writes for bounded grids confirm (crates/cli/tests/end_to_end/rules.rs).

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::Path;

use super::{lines, parse_error, Canvas, Header};
use crate::error::Result;
use crate::grid::Grid;
use crate::rule::Rule;
use num_bigint::BigUint;

/// The level of a two-state leaf: 8×8 cells.
const LEAF_LEVEL: u32 = 3;

/// The level of a multi-state leaf: 2×2 cells.
const STATES_LEVEL: u32 = 1;

/// The deepest node read: a square 2^4095 cells wide, as deep as the infinite plane's trees
/// go. Roots above level 62 are too wide for grids ([`super::Header::oversized`]).
const MAX_LEVEL: u32 = 4095;

/// The deepest root whose extent a header gives (its coordinates stay inside `i64`).
const GRID_LEVEL: u32 = 62;

/// A node as read.
#[derive(Clone, Copy, Debug)]
enum Node {
    /// An 8×8 leaf, row `r` in bits `8r..8r + 8` (cell `c` at bit `8r + c`).
    Leaf(u64),
    /// A 2×2 leaf of states (nw, ne, sw, se), and the line it was read from.
    States([u8; 4], usize),
    /// A node of this level and its quadrants (nw, ne, sw, se), 0 for empty.
    Inner(u32, [usize; 4]),
}

impl Node {
    fn level(&self) -> u32 {
        match self {
            Node::Leaf(_) => LEAF_LEVEL,
            Node::States(..) => STATES_LEVEL,
            Node::Inner(level, _) => *level,
        }
    }
}

/// The file's nodes (index 0 unused: the empty node), rule, bounds and generation.
struct Tree {
    nodes: Vec<Node>,
    rule: Option<Rule>,
    bounds: Option<(usize, usize)>,
    generation: BigUint,
}

fn read(path: &Path, text: &[u8]) -> Result<Tree> {
    // The first line is the format's own; a file without it would lose its first line.
    let first = lines(text, 0, 1)
        .next()
        .map(|(_, _, line)| line.trim_ascii());
    if !first.is_some_and(|line| line.starts_with(b"[M2]")) {
        return Err(parse_error(
            path,
            1,
            "a macrocell file begins with its [M2] line, which this one lacks",
        ));
    }
    let mut tree = Tree {
        nodes: vec![Node::Leaf(0)],
        rule: None,
        bounds: None,
        generation: BigUint::default(),
    };
    for (line, _, bytes) in lines(text, 0, 1).skip(1) {
        let trimmed = bytes.trim_ascii();
        let fail = |message: String| parse_error(path, line, message);
        if trimmed.is_empty() {
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix(b"#R") {
            let rule = String::from_utf8_lossy(rest);
            let (rule, bounds) =
                super::rle::parse_rule(rule.trim(), Some(&super::folder_of(path))).map_err(fail)?;
            (tree.rule, tree.bounds) = (Some(rule), bounds);
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix(b"#G") {
            let gen = String::from_utf8_lossy(rest);
            tree.generation = gen.trim().parse().map_err(|_| {
                fail(format!(
                    "#G {}: not a generation count (a whole number)",
                    gen.trim()
                ))
            })?;
            continue;
        }
        if trimmed[0] == b'#' {
            continue;
        }
        let node = if matches!(trimmed[0], b'.' | b'*' | b'$') {
            Node::Leaf(leaf(trimmed).map_err(fail)?)
        } else {
            let text = std::str::from_utf8(trimmed).map_err(|_| fail("not text".into()))?;
            let numbers: Vec<u64> = text
                .split_ascii_whitespace()
                .map(|w| w.parse::<u64>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| {
                    fail(format!(
                        "expected a leaf (rows of . and * ended by $) or \"level nw ne sw se\", found {text:?}"
                    ))
                })?;
            let [level, nw, ne, sw, se] = numbers[..] else {
                return Err(fail(format!(
                    "expected \"level nw ne sw se\" (five numbers), found {text:?}"
                )));
            };
            if level == STATES_LEVEL as u64 {
                let states = [nw, ne, sw, se];
                if let Some(bad) = states.iter().find(|&&s| s > 255) {
                    return Err(fail(format!("state {bad}: cells have states 0 to 255")));
                }
                tree.nodes.push(Node::States(states.map(|s| s as u8), line));
                continue;
            }
            if !(STATES_LEVEL as u64 + 1..=MAX_LEVEL as u64).contains(&level) {
                return Err(fail(format!(
                    "level {level}: nodes here are of levels {STATES_LEVEL} to {MAX_LEVEL}"
                )));
            }
            let mut children = [0usize; 4];
            for (slot, child) in children.iter_mut().zip([nw, ne, sw, se]) {
                if child as usize >= tree.nodes.len() {
                    return Err(fail(format!(
                        "node {child} is not defined before this line"
                    )));
                }
                if child != 0 && tree.nodes[child as usize].level() != level as u32 - 1 {
                    return Err(fail(format!(
                        "node {child} is of level {}, not {}",
                        tree.nodes[child as usize].level(),
                        level - 1
                    )));
                }
                *slot = child as usize;
            }
            Node::Inner(level as u32, children)
        };
        tree.nodes.push(node);
    }
    // No nodes at all is an empty pattern, as Golly writes one (its "root" is node 0).
    Ok(tree)
}

/// Parses a leaf's rows.
fn leaf(text: &[u8]) -> std::result::Result<u64, String> {
    let (mut bits, mut row, mut col) = (0u64, 0usize, 0usize);
    for &b in text {
        match b {
            b'$' => (row, col) = (row + 1, 0),
            b'.' | b'*' => {
                if row >= 8 || col >= 8 {
                    return Err("a leaf holds 8 rows of 8 cells".into());
                }
                bits |= ((b == b'*') as u64) << (8 * row + col);
                col += 1;
            }
            other => {
                return Err(format!(
                    "{} in a leaf (expected '.', '*' or '$')",
                    super::describe(other)
                ))
            }
        }
    }
    Ok(bits)
}

/// A node of a macrocell file, as read ([`super::PatternFile::macrocell_nodes`]). The last
/// node of a file is its root; Golly centres a root of level k so that it spans x from
/// −2^(k−1) to 2^(k−1) − 1 and y from −2^(k−1) + 1 to 2^(k−1) in Golly's coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacroNode {
    /// An 8×8 two-state leaf (level 3): row r in bits 8r to 8r + 7, cell c at bit 8r + c.
    Leaf(u64),
    /// A 2×2 leaf of states (level 1): north-west, north-east, south-west, south-east.
    States([u8; 4]),
    /// A node of this level, with the indices of its quadrants (north-west, north-east,
    /// south-west, south-east) in the file's list of nodes; index 0 is the empty node of the
    /// level below.
    Inner(u32, [usize; 4]),
}

/// The nodes of the file (index 0 stands for an empty node and is not a node of the file).
pub(super) fn nodes(path: &Path, text: &[u8]) -> Result<Vec<MacroNode>> {
    let tree = read(path, text)?;
    Ok(tree
        .nodes
        .iter()
        .map(|node| match *node {
            Node::Leaf(bits) => MacroNode::Leaf(bits),
            Node::States(states, _) => MacroNode::States(states),
            Node::Inner(level, children) => MacroNode::Inner(level, children),
        })
        .collect())
}

/// The bounding box (left, top, right, bottom, inclusive) of each node's live cells, relative
/// to its own top-left corner; `None` for empty nodes.
fn boxes(tree: &Tree) -> Vec<Option<(u64, u64, u64, u64)>> {
    let mut boxes: Vec<Option<(u64, u64, u64, u64)>> = Vec::with_capacity(tree.nodes.len());
    for (i, node) in tree.nodes.iter().enumerate() {
        let b = match *node {
            _ if i == 0 => None,
            Node::Leaf(0) | Node::States([0, 0, 0, 0], _) => None,
            Node::States(states, _) => {
                let (cols, rows) = (0..4).filter(|&q| states[q] != 0).fold(
                    ((1, 0), (1, 0)),
                    |((l, r), (t, b)), q| {
                        let (x, y) = (q as u64 & 1, q as u64 >> 1);
                        ((l.min(x), r.max(x)), (t.min(y), b.max(y)))
                    },
                );
                Some((cols.0, rows.0, cols.1, rows.1))
            }
            Node::Leaf(bits) => {
                let rows: Vec<u64> = (0..8).filter(|r| bits >> (8 * r) & 0xff != 0).collect();
                let cols = (0..8u64)
                    .filter(|c| (0..8).any(|r| bits >> (8 * r + c) & 1 == 1))
                    .collect::<Vec<_>>();
                Some((
                    cols[0],
                    rows[0],
                    *cols.last().unwrap(),
                    *rows.last().unwrap(),
                ))
            }
            Node::Inner(level, children) => {
                let half = 1u64 << (level - 1);
                let mut b: Option<(u64, u64, u64, u64)> = None;
                for (q, &child) in children.iter().enumerate() {
                    let Some((l, t, r, bo)) = boxes[child] else {
                        continue;
                    };
                    let (dx, dy) = ((q as u64 & 1) * half, (q as u64 >> 1) * half);
                    let c = (l + dx, t + dy, r + dx, bo + dy);
                    b = Some(match b {
                        None => c,
                        Some(o) => (o.0.min(c.0), o.1.min(c.1), o.2.max(c.2), o.3.max(c.3)),
                    });
                }
                b
            }
        };
        boxes.push(b);
    }
    boxes
}

/// The header: the live cells' bounding box, its position in Golly's coordinates, the rule,
/// bounds and generation. The body is the whole text.
pub(super) fn header(path: &Path, text: &[u8]) -> Result<(Header, (usize, usize))> {
    let tree = read(path, text)?;
    let root = tree.nodes.len() - 1;
    let level = tree.nodes[root].level();
    let oversized = level > GRID_LEVEL;
    let half = 1i64 << (level.min(GRID_LEVEL) - 1);
    let (width, height, position) = match oversized {
        true => (0, 0, None),
        false => match boxes(&tree)[root] {
            None => (0, 0, None),
            // Larger than any grid where the root is of a level above 30: a grid refuses it
            // when the pattern is placed; the plane takes the nodes as they are.
            Some((l, t, r, b)) => (
                (r - l + 1) as usize,
                (b - t + 1) as usize,
                Some(((l as i64 - half).into(), (t as i64 - half + 1).into())),
            ),
        },
    };
    let header = Header {
        width,
        height,
        rule: tree.rule,
        bounds: tree.bounds,
        position,
        oversized,
        generation: tree.generation,
    };
    Ok((header, (0, 1)))
}

/// Draws the live cells, relative to their bounding box's top-left corner.
pub(super) fn paint(path: &Path, text: &[u8], mut canvas: Canvas<'_>) -> Result<()> {
    let tree = read(path, text)?;
    let boxes = boxes(&tree);
    let root = tree.nodes.len() - 1;
    let Some((left, top, _, _)) = boxes[root] else {
        return Ok(());
    };
    // Depth first, leaves drawn a row run at a time.
    let mut stack = vec![(root, 0u64, 0u64)];
    while let Some((node, x, y)) = stack.pop() {
        match tree.nodes[node] {
            Node::Leaf(bits) => {
                for r in 0..8u64 {
                    let mut row = (bits >> (8 * r)) & 0xff;
                    while row != 0 {
                        let start = row.trailing_zeros() as u64;
                        let len = (row >> start).trailing_ones() as u64;
                        canvas.run(
                            (x + start - left) as usize,
                            (y + r - top) as usize,
                            len as usize,
                        );
                        row &= !(((1u64 << len) - 1) << start);
                    }
                }
            }
            Node::States(states, line) => {
                for (q, &state) in states.iter().enumerate() {
                    let (cx, cy) = (x + (q as u64 & 1), y + (q as u64 >> 1));
                    if state != 0 {
                        let at = ((cx - left) as usize, (cy - top) as usize);
                        canvas
                            .states(at.0, at.1, 1, state as u32)
                            .map_err(|m| parse_error(path, line, m))?;
                    }
                }
            }
            Node::Inner(level, children) => {
                let half = 1u64 << (level - 1);
                for (q, &child) in children.iter().enumerate() {
                    if boxes[child].is_some() {
                        stack.push((child, x + (q as u64 & 1) * half, y + (q as u64 >> 1) * half));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Writes the whole `grid` as a macrocell file: the rule with its `:TW,H` or `:PW,H` bounds, the
/// generation, and the quadtree of a root centred as Golly centres it on the grid's
/// (⌊W/2⌋, ⌊H/2⌋) (see [`super`]).
pub(super) fn write(
    out: &mut impl Write,
    grid: &Grid,
    rule: Rule,
    generation: u64,
) -> io::Result<()> {
    let (w, h) = (grid.width(), grid.height());
    // The root of level k spans x from -2^(k-1) and y from -2^(k-1) + 1: it must reach the
    // grid's Golly coordinates -⌊W/2⌋ .. W-1-⌊W/2⌋ and -⌊H/2⌋ .. H-1-⌊H/2⌋.
    let half_needed = (w / 2).max(w - w / 2).max(h / 2 + 1).max(h - h / 2);
    let leaf = if grid.states() > 2 {
        STATES_LEVEL
    } else {
        LEAF_LEVEL
    };
    let level = (half_needed.next_power_of_two().trailing_zeros() + 1).max(leaf + 1);
    let half = 1u64 << (level - 1);
    // Grid cell (x, y) is root cell (x + ox, y + oy).
    let (ox, oy) = (half - (w / 2) as u64, half - 1 - (h / 2) as u64);
    writeln!(out, "[M2] (gol {})", env!("CARGO_PKG_VERSION"))?;
    writeln!(out, "#R {}", rule.sized(w, h))?;
    writeln!(out, "#G {generation}")?;
    let mut writer = TreeWriter {
        out,
        grid,
        leaf,
        origin: (ox, oy),
        known: HashMap::new(),
        count: 0,
    };
    let root = writer.node(level, 0, 0)?;
    if root == 0 {
        // An empty grid: a root of empty quadrants.
        writeln!(writer.out, "{level} 0 0 0 0")?;
    }
    Ok(())
}

/// Writes nodes bottom-up, each distinct node once.
struct TreeWriter<'a, W: Write> {
    out: &'a mut W,
    grid: &'a Grid,
    /// The level of the leaves: [`LEAF_LEVEL`], or [`STATES_LEVEL`] for a multi-state grid.
    leaf: u32,
    /// Where grid cell (0, 0) lies in the root.
    origin: (u64, u64),
    /// Nodes written: a leaf's bits (level 3) or states (level 1), or a node's level and
    /// quadrants, to its number.
    known: HashMap<(u32, [u64; 4]), u64>,
    count: u64,
}

impl<W: Write> TreeWriter<'_, W> {
    /// Writes the node of `level` whose top-left corner is root cell (x, y) (and the nodes
    /// below it not written yet); returns its number, 0 where it is empty.
    fn node(&mut self, level: u32, x: u64, y: u64) -> io::Result<u64> {
        let size = 1u64 << level;
        let (ox, oy) = self.origin;
        let (gw, gh) = (self.grid.width() as u64, self.grid.height() as u64);
        // Entirely outside the grid: empty.
        if x + size <= ox || y + size <= oy || x >= ox + gw || y >= oy + gh {
            return Ok(0);
        }
        let key = if level == STATES_LEVEL {
            let state = |q: u64| -> u64 {
                let (gx, gy) = (
                    (x + (q & 1)).wrapping_sub(ox),
                    (y + (q >> 1)).wrapping_sub(oy),
                );
                match gx < gw && gy < gh {
                    true => self.grid.state(gx as usize, gy as usize) as u64,
                    false => 0,
                }
            };
            let states = [state(0), state(1), state(2), state(3)];
            if states == [0; 4] {
                return Ok(0);
            }
            (level, states)
        } else if level == LEAF_LEVEL && self.leaf == LEAF_LEVEL {
            let mut bits = 0u64;
            for r in 0..8 {
                let gy = (y + r).wrapping_sub(oy);
                if gy < gh {
                    let row = self.grid.row(gy as usize);
                    bits |= eight_cells(row, x as i64 - ox as i64) << (8 * r);
                }
            }
            if bits == 0 {
                return Ok(0);
            }
            (level, [bits, 0, 0, 0])
        } else {
            let half = size / 2;
            let mut children = [0u64; 4];
            for (q, child) in children.iter_mut().enumerate() {
                let (dx, dy) = ((q as u64 & 1) * half, (q as u64 >> 1) * half);
                *child = self.node(level - 1, x + dx, y + dy)?;
            }
            if children == [0; 4] {
                return Ok(0);
            }
            (level, children)
        };
        if let Some(&number) = self.known.get(&key) {
            return Ok(number);
        }
        if level == STATES_LEVEL {
            let [nw, ne, sw, se] = key.1;
            writeln!(self.out, "{level} {nw} {ne} {sw} {se}")?;
        } else if level == LEAF_LEVEL && self.leaf == LEAF_LEVEL {
            let bits = key.1[0];
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
        } else {
            let [nw, ne, sw, se] = key.1;
            writeln!(self.out, "{level} {nw} {ne} {sw} {se}")?;
        }
        self.count += 1;
        self.known.insert(key, self.count);
        Ok(self.count)
    }
}

/// The 8 cells of a grid row (its words, padding bits zero) from column `start` on, as the
/// low byte (cell `start + c` at bit `c`); columns outside the row are dead.
fn eight_cells(row: &[u64], start: i64) -> u64 {
    let word = |i: i64| -> u64 {
        if i < 0 {
            0
        } else {
            row.get(i as usize).copied().unwrap_or(0)
        }
    };
    let (index, shift) = (start.div_euclid(64), start.rem_euclid(64) as u32);
    let low = word(index) >> shift;
    let high = if shift == 0 {
        0
    } else {
        word(index + 1) << (64 - shift)
    };
    (low | high) & 0xff
}
