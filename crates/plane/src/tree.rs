//! [`Tree`]: a pattern on the plane as a quadtree of nodes in a [`Store`], and what can be read
//! from it (population, bounding box, the cells of a window, runs of rows).
//!
//! # Coordinates
//!
//! Golly's: x to the right, y down, exact integers of any size ([`BigInt`]). The root, of level
//! L, spans x from −2^(L−1) to 2^(L−1) − 1 and y from −2^(L−1) + 1 to 2^(L−1), as Golly places
//! the root of a macrocell file: its quadrants meet between columns −1 and 0 and between rows 0
//! and 1. Growing the root around its centre, and taking the centre of a node as HashLife's
//! results do, keep that place. A node's four children are its north-west, north-east,
//! south-west and south-east quadrants, in that order.

use std::collections::{BTreeMap, HashMap};

use num_bigint::{BigInt, BigUint};
use num_traits::{One, ToPrimitive, Zero};

use gol_core::pattern::Run;

use crate::leaf::Leaf;
use crate::store::{Id, Store, MAX_LEVEL};

/// A rectangle of the plane: its top-left cell and its size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rect {
    /// The left column.
    pub x: BigInt,
    /// The top row.
    pub y: BigInt,
    /// Columns.
    pub width: BigUint,
    /// Rows.
    pub height: BigUint,
}

impl Rect {
    /// The rectangle's size as machine integers, where it has one.
    pub fn size(&self) -> Option<(u64, u64)> {
        Some((self.width.to_u64()?, self.height.to_u64()?))
    }

    /// The rectangle's top-left cell as machine integers, where it has one.
    pub fn corner(&self) -> Option<(i64, i64)> {
        Some((self.x.to_i64()?, self.y.to_i64()?))
    }
}

impl std::fmt::Display for Rect {
    /// `x,y,w,h`, as `--view` takes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{},{},{},{}", self.x, self.y, self.width, self.height)
    }
}

/// Levels at and below which a node's span fits in an `i128` offset with room to spare.
const SMALL_LEVEL: u32 = 100;

/// A pattern on the plane: nodes in a store and the root they hang from.
pub struct Tree<L: Leaf> {
    pub(crate) store: Store,
    pub(crate) leaf: L,
    pub(crate) root: Id,
    pub(crate) level: u32,
}

/// The failure of a tree operation: the store could not make a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full;

impl<L: Leaf> Tree<L> {
    /// An empty plane in `store`, its leaves stepped by `leaf`.
    pub fn empty(store: Store, leaf: L) -> Result<Tree<L>, Full> {
        let level = L::LEVEL + 1;
        let root = store.empty(level).ok_or(Full)?;
        Ok(Tree {
            store,
            leaf,
            root,
            level,
        })
    }

    /// The plane holding the leaf nodes `leaves`, each as (j, i, id) where the leaf at (i, j)
    /// of leaves spans x from i·2^LEVEL and y from j·2^LEVEL + 1 ([`leaf_of`]): sorted by j,
    /// then i, one at each place, none empty. Made level by level: the nodes of two rows of
    /// one level are merged, column by column, into the row of their parents.
    pub fn from_leaf_nodes(
        mut store: Store,
        leaf: L,
        leaves: Vec<(i64, i64, Id)>,
    ) -> Result<Tree<L>, Full> {
        let mut nodes = leaves;
        let mut level = L::LEVEL;
        // Parents of one level up, until every node is one of the four around the origin.
        while level == L::LEVEL
            || nodes
                .iter()
                .any(|&(y, x, _)| !(-1..=0).contains(&x) || !(-1..=0).contains(&y))
        {
            store.reserve(nodes.len() as u64 + 1);
            nodes = parents(&store, level, &nodes)?;
            level += 1;
        }
        store.reserve(2);
        let empty = store.empty(level).ok_or(Full)?;
        let at = |x, y| {
            nodes
                .iter()
                .find(|&&(ny, nx, _)| (nx, ny) == (x, y))
                .map_or(empty, |&(_, _, id)| id)
        };
        let root = store
            .join(level + 1, at(-1, -1), at(0, -1), at(-1, 0), at(0, 0))
            .ok_or(Full)?;
        Ok(Tree {
            store,
            leaf,
            root,
            level: level + 1,
        })
    }

    /// The tree whose cells are this one's moved by (x, y − 1) (a block's corner,
    /// [`block_corner`]), where every cell lies in the square of side 2^(`level` + 1) whose
    /// top-left cell is the block's corner of the origin, (0, 1).
    pub fn moved(mut self, level: u32, x: &BigInt, y: &BigInt) -> Result<Tree<L>, Full> {
        while self.level < level + 2 {
            self.expand()?;
        }
        // The south-east quadrant, then its north-west corner down to level + 1: the square
        // from (0, 1); its four quarters are blocks of `level`.
        let s = &self.store;
        let mut node = s.key(self.root)[3];
        for _ in level + 1..self.level - 1 {
            node = s.key(node)[0];
        }
        let quarters = s.key(node);
        let empty = s.empty(L::LEVEL + 1).ok_or(Full)?;
        self.root = empty;
        self.level = L::LEVEL + 1;
        let side = BigInt::one() << level;
        for (q, &quarter) in quarters.iter().enumerate() {
            let qx = x + if q & 1 == 1 {
                side.clone()
            } else {
                BigInt::zero()
            };
            let qt = y - ROW_SHIFT
                + if q >> 1 == 1 {
                    side.clone()
                } else {
                    BigInt::zero()
                };
            self.put(quarter, level, &qx, &qt)?;
        }
        Ok(self)
    }

    /// Replaces the node of `level` whose top-left corner is (x, t) in the tree's own rows
    /// (t = y − 1; both multiples of 2^`level`) by `node`, growing the root to hold it.
    fn put(&mut self, node: Id, level: u32, x: &BigInt, t: &BigInt) -> Result<(), Full> {
        let covers = |tree: &Tree<L>| {
            let half = BigInt::one() << (tree.level - 1);
            let end = |v: &BigInt| v + (BigInt::one() << level);
            *x >= -half.clone() && *t >= -half.clone() && end(x) <= half && end(t) <= half
        };
        while self.level <= level || !covers(self) {
            self.expand()?;
        }
        let half = BigInt::one() << (self.level - 1);
        self.root = self.replace(
            self.root,
            self.level,
            -half.clone(),
            -half,
            node,
            level,
            x,
            t,
        )?;
        Ok(())
    }

    /// [`Tree::put`] below `id`, of `at`, whose top-left corner is (ix, it).
    #[allow(clippy::too_many_arguments)]
    fn replace(
        &self,
        id: Id,
        at: u32,
        ix: BigInt,
        it: BigInt,
        node: Id,
        level: u32,
        x: &BigInt,
        t: &BigInt,
    ) -> Result<Id, Full> {
        if at == level {
            return Ok(node);
        }
        let half = BigInt::one() << (at - 1);
        let (east, south) = (*x >= &ix + &half, *t >= &it + &half);
        let q = east as usize + 2 * south as usize;
        let mut children = self.store.key(id);
        let cx = if east { ix + &half } else { ix };
        let ct = if south { it + &half } else { it };
        children[q] = self.replace(children[q], at - 1, cx, ct, node, level, x, t)?;
        self.store.node(at, children).ok_or(Full)
    }

    /// The store holding the nodes.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The root's level.
    pub fn level(&self) -> u32 {
        self.level
    }

    /// The leaf kind (and so the rule).
    pub fn leaf(&self) -> &L {
        &self.leaf
    }

    /// The root grown by one level, its cells in place: the old root is the centre of the new.
    pub(crate) fn expand(&mut self) -> Result<(), Full> {
        if self.level >= MAX_LEVEL {
            return Err(Full);
        }
        let s = &self.store;
        let e = s.empty(self.level - 1).ok_or(Full)?;
        let [nw, ne, sw, se] = s.key(self.root);
        let l = self.level;
        let children = [
            s.join(l, e, e, e, nw),
            s.join(l, e, e, ne, e),
            s.join(l, e, sw, e, e),
            s.join(l, se, e, e, e),
        ];
        let [a, b, c, d] = children.map(|c| c.ok_or(Full));
        self.root = s.join(l + 1, a?, b?, c?, d?).ok_or(Full)?;
        self.level += 1;
        Ok(())
    }

    /// Whether every cell not in state 0 lies in the square of side 2^(L − `depth`) around the
    /// root's centre (L the root's level): depth 1 is the root's centre node, which a step's
    /// result keeps. Never where that square would be smaller than a leaf's parent.
    pub(crate) fn within(&self, depth: u32) -> bool {
        if self.level < L::LEVEL + depth + 1 {
            return false;
        }
        let s = &self.store;
        // From each quadrant, towards the centre: the corner that touches it, `depth` times.
        s.key(self.root).iter().enumerate().all(|(q, &quadrant)| {
            let inner = 3 - q;
            let mut node = quadrant;
            (0..depth).all(|_| {
                let key = s.key(node);
                node = key[inner];
                (0..4).all(|c| c == inner || s.is_empty(key[c]))
            })
        })
    }

    /// The root made as small as it can be while keeping its cells, one level above the leaves
    /// at least.
    pub(crate) fn shrink(&mut self) -> Result<(), Full> {
        while self.level > L::LEVEL + 1 && self.within(1) {
            let s = &self.store;
            let [nw, ne, sw, se] = s.key(self.root);
            self.root = s
                .join(
                    self.level - 1,
                    s.key(nw)[3],
                    s.key(ne)[2],
                    s.key(sw)[1],
                    s.key(se)[0],
                )
                .ok_or(Full)?;
            self.level -= 1;
        }
        Ok(())
    }

    /// Whether the plane has no cell out of state 0.
    pub fn is_empty(&self) -> bool {
        self.store.is_empty(self.root)
    }

    /// Cells not in state 0.
    pub fn population(&self) -> BigUint {
        self.count(|key| L::population(key))
    }

    /// Cells in state 1.
    pub fn live(&self) -> BigUint {
        let mut memo = HashMap::new();
        self.sum(self.root, self.level, &|key| L::live(key), &mut memo)
    }

    /// The sum of `leaf` over the leaves, through the store's cached populations.
    fn count(&self, leaf: impl Fn([u32; 4]) -> u64) -> BigUint {
        let total = self.small_count(self.root, self.level, &leaf);
        if total < CACHE_LIMIT {
            return BigUint::from(total);
        }
        let mut memo = HashMap::new();
        self.big_count(self.root, self.level, &leaf, &mut memo)
    }

    /// The population of `id`, cached in the store, saturating at [`CACHE_LIMIT`].
    fn small_count(&self, id: Id, level: u32, leaf: &impl Fn([u32; 4]) -> u64) -> u64 {
        let s = &self.store;
        if let Some(p) = s.cached_population(id) {
            return p as u64;
        }
        if s.population_overflows(id) {
            return CACHE_LIMIT;
        }
        let total = if level == L::LEVEL {
            leaf(s.key(id))
        } else {
            s.key(id)
                .iter()
                .map(|&c| self.small_count(c, level - 1, leaf))
                .fold(0u64, u64::saturating_add)
        };
        s.cache_population(id, total);
        total.min(CACHE_LIMIT)
    }

    /// The exact population of `id`, whose cached count saturated.
    fn big_count(
        &self,
        id: Id,
        level: u32,
        leaf: &impl Fn([u32; 4]) -> u64,
        memo: &mut HashMap<Id, BigUint>,
    ) -> BigUint {
        let small = self.small_count(id, level, leaf);
        if small < CACHE_LIMIT {
            return BigUint::from(small);
        }
        if let Some(p) = memo.get(&id) {
            return p.clone();
        }
        let total: BigUint = self
            .store
            .key(id)
            .iter()
            .map(|&c| self.big_count(c, level - 1, leaf, memo))
            .sum();
        memo.insert(id, total.clone());
        total
    }

    /// The sum of `leaf` over the leaves, memoised per node (for counts the store does not
    /// cache).
    fn sum(
        &self,
        id: Id,
        level: u32,
        leaf: &impl Fn([u32; 4]) -> u64,
        memo: &mut HashMap<Id, BigUint>,
    ) -> BigUint {
        if self.store.is_empty(id) {
            return BigUint::zero();
        }
        if level == L::LEVEL {
            return BigUint::from(leaf(self.store.key(id)));
        }
        if let Some(p) = memo.get(&id) {
            return p.clone();
        }
        let total: BigUint = self
            .store
            .key(id)
            .iter()
            .map(|&c| self.sum(c, level - 1, leaf, memo))
            .sum();
        memo.insert(id, total.clone());
        total
    }

    /// The smallest rectangle holding every cell not in state 0; `None` for an empty plane.
    pub fn bounding_box(&self) -> Option<Rect> {
        if self.is_empty() {
            return None;
        }
        let mut memo = HashMap::new();
        let (left, top, right, bottom) = self.extent(self.root, self.level, &mut memo)?;
        let half = BigInt::one() << (self.level - 1);
        Some(Rect {
            x: BigInt::from(left.clone()) - &half,
            y: BigInt::from(top.clone()) - &half + ROW_SHIFT,
            width: right - left + 1u32,
            height: bottom - top + 1u32,
        })
    }

    /// The extent of the cells of `id` relative to its top-left corner: left, top, right and
    /// bottom (inclusive); `None` where it is empty.
    fn extent(&self, id: Id, level: u32, memo: &mut HashMap<Id, Option<Extent>>) -> Option<Extent> {
        let s = &self.store;
        if s.is_empty(id) {
            return None;
        }
        if let Some(e) = memo.get(&id) {
            return e.clone();
        }
        let extent = if level == L::LEVEL {
            let key = s.key(id);
            let side = 1u32 << L::LEVEL;
            let mut e: Option<(u32, u32, u32, u32)> = None;
            for y in 0..side {
                for x in 0..side {
                    if L::get(key, x, y) != 0 {
                        e = Some(match e {
                            None => (x, y, x, y),
                            Some((l, t, r, b)) => (l.min(x), t.min(y), r.max(x), b.max(y)),
                        });
                    }
                }
            }
            e.map(|(l, t, r, b)| (l.into(), t.into(), r.into(), b.into()))
        } else {
            let half = BigUint::one() << (level - 1);
            let mut e: Option<Extent> = None;
            for (q, &child) in s.key(id).iter().enumerate() {
                let Some((l, t, r, b)) = self.extent(child, level - 1, memo) else {
                    continue;
                };
                let (dx, dy) = match q {
                    0 => (BigUint::zero(), BigUint::zero()),
                    1 => (half.clone(), BigUint::zero()),
                    2 => (BigUint::zero(), half.clone()),
                    _ => (half.clone(), half.clone()),
                };
                let c = (l + &dx, t + &dy, r + dx, b + dy);
                e = Some(match e {
                    None => c,
                    Some(o) => (o.0.min(c.0), o.1.min(c.1), o.2.max(c.2), o.3.max(c.3)),
                });
            }
            e
        };
        memo.insert(id, extent.clone());
        extent
    }

    /// Calls `visit` with each node of `level` (at least the leaves') that holds a cell not in
    /// state 0 and overlaps the `width` × `height` rectangle whose top-left cell is (x, y): the
    /// node, and its top-left corner's offset from that cell, in cells for a `level` up to 100
    /// and in units of the node's side above (where (x, y) must be a block's corner,
    /// [`block_corner`]).
    pub fn visit(
        &self,
        x: &BigInt,
        y: &BigInt,
        width: u64,
        height: u64,
        level: u32,
        visit: &mut dyn FnMut(Id, i128, i128),
    ) {
        let level = level.max(L::LEVEL);
        debug_assert!(level <= self.level, "a visit to nodes above the root");
        let half = BigInt::one() << (self.level - 1);
        let (dx, dy) = (-half.clone() - x, -half + ROW_SHIFT - y);
        let size = (width as i128, height as i128);
        self.visit_big(self.root, self.level, dx, dy, size, level, visit);
    }

    /// [`Tree::visit`] from a node whose offset needs a big integer.
    #[allow(clippy::too_many_arguments)]
    fn visit_big(
        &self,
        id: Id,
        level: u32,
        dx: BigInt,
        dy: BigInt,
        size: (i128, i128),
        target: u32,
        visit: &mut dyn FnMut(Id, i128, i128),
    ) {
        if level <= SMALL_LEVEL {
            // Overlapping the rectangle, the node lies within 2^SMALL_LEVEL of it.
            if let (Some(dx), Some(dy)) = (dx.to_i128(), dy.to_i128()) {
                self.visit_small(id, level, dx, dy, size, target, visit);
            }
            return;
        }
        let side = BigInt::one() << level;
        let outside = dx >= BigInt::from(size.0)
            || dy >= BigInt::from(size.1)
            || &dx + &side <= BigInt::zero()
            || &dy + &side <= BigInt::zero();
        if outside || self.store.is_empty(id) {
            return;
        }
        if level == target {
            // The rectangle is narrower than 2^64 cells: one node of a level above 100
            // overlapping it lies at offset 0 or -1 in its own units.
            let unit = |d: &BigInt| {
                if d.sign() == num_bigint::Sign::Minus {
                    -1
                } else {
                    0
                }
            };
            visit(id, unit(&dx), unit(&dy));
            return;
        }
        let half = BigInt::one() << (level - 1);
        for (q, &child) in self.store.key(id).iter().enumerate() {
            let cx = if q & 1 == 1 { &dx + &half } else { dx.clone() };
            let cy = if q >> 1 == 1 { &dy + &half } else { dy.clone() };
            self.visit_big(child, level - 1, cx, cy, size, target, visit);
        }
    }

    /// [`Tree::visit`] from a node at `(dx, dy)` cells from the rectangle's corner.
    #[allow(clippy::too_many_arguments)]
    fn visit_small(
        &self,
        id: Id,
        level: u32,
        dx: i128,
        dy: i128,
        size: (i128, i128),
        target: u32,
        visit: &mut dyn FnMut(Id, i128, i128),
    ) {
        let side = 1i128 << level;
        if dx >= size.0 || dy >= size.1 || dx + side <= 0 || dy + side <= 0 {
            return;
        }
        if self.store.is_empty(id) {
            return;
        }
        if level == target {
            visit(id, dx, dy);
            return;
        }
        let half = side / 2;
        for (q, &child) in self.store.key(id).iter().enumerate() {
            let (cx, cy) = (dx + (q as i128 & 1) * half, dy + (q as i128 >> 1) * half);
            self.visit_small(child, level - 1, cx, cy, size, target, visit);
        }
    }

    /// The states of the `width` × `height` rectangle whose top-left cell is (x, y), row by
    /// row.
    pub fn cells(&self, x: &BigInt, y: &BigInt, width: usize, height: usize) -> Vec<u8> {
        let mut out = vec![0u8; width * height];
        let side = 1i128 << L::LEVEL;
        self.visit(
            x,
            y,
            width as u64,
            height as u64,
            L::LEVEL,
            &mut |id, dx, dy| {
                let key = self.store.key(id);
                for cy in 0..side {
                    let row = dy + cy;
                    if row < 0 || row >= height as i128 {
                        continue;
                    }
                    for cx in 0..side {
                        let col = dx + cx;
                        if col >= 0 && col < width as i128 {
                            out[row as usize * width + col as usize] =
                                L::get(key, cx as u32, cy as u32);
                        }
                    }
                }
            },
        );
        out
    }

    /// The population of node `id` of `level`, saturating at `u64::MAX`.
    pub fn node_population(&self, id: Id, level: u32) -> u64 {
        let small = self.small_count(id, level, &|key| L::population(key));
        if small < CACHE_LIMIT {
            return small;
        }
        let mut memo = HashMap::new();
        self.big_count(id, level, &|key| L::population(key), &mut memo)
            .to_u64()
            .unwrap_or(u64::MAX)
    }

    /// The populations of the `columns` × `rows` blocks of 2^`level` × 2^`level` cells, the
    /// first with its top-left cell at (x, y), row by row: the picture of a zoomed-out view.
    /// Blocks are squares of the tree's grid (nodes, above the leaves): (x, y) is first moved
    /// up and left to the nearest corner of one ([`block_corner`]).
    pub fn block_populations(
        &self,
        x: &BigInt,
        y: &BigInt,
        columns: usize,
        rows: usize,
        level: u32,
    ) -> Vec<u64> {
        let mut out = vec![0u64; columns * rows];
        let (x, y) = &block_corner(x, y, level);
        if level <= L::LEVEL {
            let side = 1usize << level;
            let cells = self.cells(x, y, columns * side, rows * side);
            for (i, &c) in cells.iter().enumerate() {
                let (cx, cy) = (i % (columns * side), i / (columns * side));
                out[(cy / side) * columns + cx / side] += (c != 0) as u64;
            }
            return out;
        }
        if level >= self.level {
            // Blocks as large as the whole tree or larger: each quarter of the root lies within
            // one (both are aligned to their sides), which has its population added.
            let half = BigInt::one() << (self.level - 1);
            for (q, &child) in self.store.key(self.root).iter().enumerate() {
                let cx = -&half
                    + if q & 1 == 1 {
                        half.clone()
                    } else {
                        BigInt::zero()
                    };
                let cy = -&half
                    + ROW_SHIFT
                    + if q >> 1 == 1 {
                        half.clone()
                    } else {
                        BigInt::zero()
                    };
                let (bx, by) = ((cx - x) >> level, (cy - y) >> level);
                let (Some(bx), Some(by)) = (bx.to_usize(), by.to_usize()) else {
                    continue;
                };
                if bx < columns && by < rows {
                    out[by * columns + bx] += self.node_population(child, self.level - 1);
                }
            }
            return out;
        }
        let side = BigUint::one() << level;
        let span = |n: usize| (BigUint::from(n) * &side).to_u64().unwrap_or(u64::MAX);
        self.visit(x, y, span(columns), span(rows), level, &mut |id, dx, dy| {
            let (bx, by) = match level <= SMALL_LEVEL {
                true => (dx >> level, dy >> level),
                false => (dx, dy),
            };
            if (0..columns as i128).contains(&bx) && (0..rows as i128).contains(&by) {
                out[by as usize * columns + bx as usize] = self.node_population(id, level);
            }
        });
        out
    }

    /// Calls `row` with each row of the `width` × `height` rectangle at (x, y) that holds a
    /// cell not in state 0, top to bottom: its offset from the rectangle's top, and its runs
    /// (columns from the rectangle's left edge) left to right. The tree is read a band of
    /// leaves at a time.
    pub fn runs(
        &self,
        x: &BigInt,
        y: &BigInt,
        width: u64,
        height: u64,
        row: &mut dyn FnMut(u64, &[Run]),
    ) {
        let side = 1i128 << L::LEVEL;
        // Leaves by band (the offset of their top row), left to right within one.
        let mut bands: BTreeMap<i128, Vec<(i128, Id)>> = BTreeMap::new();
        self.visit(x, y, width, height, L::LEVEL, &mut |id, dx, dy| {
            bands.entry(dy).or_default().push((dx, id));
        });
        let mut rows: Vec<Vec<Run>> = vec![Vec::new(); side as usize];
        for (dy, mut leaves) in bands {
            leaves.sort_unstable();
            for runs in rows.iter_mut() {
                runs.clear();
            }
            for (dx, id) in leaves {
                let key = self.store.key(id);
                for (cy, runs) in rows.iter_mut().enumerate() {
                    for cx in 0..side {
                        let col = dx + cx;
                        let state = L::get(key, cx as u32, cy as u32);
                        if state == 0 || col < 0 || col >= width as i128 {
                            continue;
                        }
                        let col = col as u64;
                        match runs.last_mut() {
                            Some(last) if last.x + last.len == col && last.state == state => {
                                last.len += 1
                            }
                            _ => runs.push(Run {
                                x: col,
                                len: 1,
                                state,
                            }),
                        }
                    }
                }
            }
            for (cy, runs) in rows.iter().enumerate() {
                let at = dy + cy as i128;
                if !runs.is_empty() && at >= 0 && at < height as i128 {
                    row(at as u64, runs);
                }
            }
        }
    }
}

/// The difference between a tree row and Golly's y: the root's top row is
/// y = −2^(L−1) + `ROW_SHIFT` (see the module documentation).
const ROW_SHIFT: i32 = 1;

/// The top-left cell of the block of 2^`level` × 2^`level` cells of the tree's grid that holds
/// Golly's cell (x, y): where [`Tree::block_populations`] starts.
pub fn block_corner(x: &BigInt, y: &BigInt, level: u32) -> (BigInt, BigInt) {
    let floor = |v: BigInt| (v >> level) << level;
    (floor(x.clone()), floor(y - ROW_SHIFT) + ROW_SHIFT)
}

/// The populations of `columns` × `rows` blocks of 2^`level` × 2^`level` cells being counted
/// cell by cell, the first block the one of the tree's grid that holds (x, y) (as
/// [`crate::Plane::block_populations`] gives them).
pub(crate) struct BlockCounts {
    counts: Vec<u64>,
    /// The first block's top-left cell; `None` beyond what cells can reach.
    corner: Option<(i128, i128)>,
    level: u32,
    columns: usize,
    rows: usize,
}

impl BlockCounts {
    /// No cells counted yet.
    pub(crate) fn new(x: &BigInt, y: &BigInt, columns: usize, rows: usize, level: u32) -> Self {
        let (bx, by) = block_corner(x, y, level);
        BlockCounts {
            counts: vec![0; columns * rows],
            corner: bx.to_i128().zip(by.to_i128()),
            level: level.min(126),
            columns,
            rows,
        }
    }

    /// Counts `n` cells at Golly's (x, y) (cells of one block).
    pub(crate) fn add(&mut self, x: i128, y: i128, n: u64) {
        let Some((bx, by)) = self.corner else {
            return;
        };
        let (i, j) = ((x - bx) >> self.level, (y - by) >> self.level);
        if (0..self.columns as i128).contains(&i) && (0..self.rows as i128).contains(&j) {
            self.counts[j as usize * self.columns + i as usize] += n;
        }
    }

    /// The counts, row by row.
    pub(crate) fn done(self) -> Vec<u64> {
        self.counts
    }
}

/// The parents (of `level` + 1) of `nodes` of `level`, each as (row, column, id) sorted by
/// row, then column, as [`Tree::from_leaf_nodes`] takes them; the parents sorted the same way.
fn parents(
    store: &Store,
    level: u32,
    nodes: &[(i64, i64, Id)],
) -> Result<Vec<(i64, i64, Id)>, Full> {
    let empty = store.empty(level).ok_or(Full)?;
    let mut out = Vec::with_capacity(nodes.len() / 2 + 1);
    let mut i = 0;
    while i < nodes.len() {
        // Rows 2py and 2py + 1 (floor halves keep the order, negative rows too): the first
        // from `i` to `mid`, the second from `mid` to `end`.
        let py = nodes[i].0 >> 1;
        let end = i + nodes[i..].partition_point(|n| n.0 >> 1 == py);
        let mid = i + nodes[i..end].partition_point(|n| n.0 & 1 == 0);
        let (mut a, mut b) = (i, mid);
        while a < mid || b < end {
            let column = |k: usize, stop: usize| (k < stop).then(|| nodes[k].1 >> 1);
            let px = match (column(a, mid), column(b, end)) {
                (Some(u), Some(v)) => u.min(v),
                (Some(u), None) | (None, Some(u)) => u,
                (None, None) => unreachable!("the loop runs while either row has nodes"),
            };
            let mut children = [empty; 4];
            for (k, stop, south) in [(&mut a, mid, 0), (&mut b, end, 2)] {
                while *k < stop && nodes[*k].1 >> 1 == px {
                    children[(nodes[*k].1 & 1) as usize + south] = nodes[*k].2;
                    *k += 1;
                }
            }
            out.push((py, px, store.node(level + 1, children).ok_or(Full)?));
        }
        i = end;
    }
    Ok(out)
}

/// The leaf of the tree's grid holding Golly's cell (x, y), and the cell's place in it.
pub fn leaf_of(x: i64, y: i64, level: u32) -> ((i64, i64), (u32, u32)) {
    let t = y - ROW_SHIFT as i64;
    let mask = (1i64 << level) - 1;
    (
        (x >> level, t >> level),
        ((x & mask) as u32, (t & mask) as u32),
    )
}

/// Left, top, right and bottom of a node's cells, relative to its top-left corner.
type Extent = (BigUint, BigUint, BigUint, BigUint);

/// Counts at and above this are not held by the store's cache.
const CACHE_LIMIT: u64 = u32::MAX as u64 - 1;
