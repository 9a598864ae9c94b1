//! A small universe of B3/S23 for soups and the objects they leave: a window of bits that
//! grows with the pattern, stepped 64 cells a word and many rows at once (SIMD, chosen at run
//! time).
//!
//! Layout: `columns` columns of `rows` 64-bit words, column-major: word `c·rows + r` holds the
//! cells (x0 + 64·c + b, y0 + r) for bits b = 0..63, and `x0` is [`COLUMN_START`] give or take
//! multiples of 64 (the same cells make the same words in any universe). A column's words are
//! consecutive, so one generation of a column is a loop down its rows that the compiler
//! vectorises. The window keeps a dead border of at least [`MARGIN`] cells round every live
//! one, so a generation is computed exactly as on the unbounded plane; [`Universe::step`]
//! grows the window (by whole columns and rows) when the pattern comes nearer. Three generations are kept: now, the one
//! before, and the one before that (where the next is written), so that a pattern back where it
//! was two generations ago (still lifes and blinkers) is seen at once, column by column too: a
//! column that repeats with its neighbours is not computed (copied, or left as it is where it
//! has not changed at all), so a switch engine's trail of ash sleeps while the engine moves on.
//! [`Envelope`] ORs generations together in the same layout.

use std::ops::Range;

use gol_core::cpu::{Isa, Simd, Vector, VectorKernel};

/// Dead cells kept between the pattern and the window's edge.
pub const MARGIN: i64 = 2;

/// Where columns start on the plane, give or take multiples of 64: a soup placed as
/// apgsearch places it (its 16 × 16 cells from (8, 8)) lies in the middle of one, and so does
/// most of its ash.
pub const COLUMN_START: i64 = -16;

/// Rows computed from which each column is computed over its own rows and its neighbours'
/// (a row more each way) rather than all of them: below it, finding each column's live rows
/// costs more than the rows it saves. Measured on dev-2c, one thread: the first 8,000 soups
/// of `k_testseed` (windows mostly 100-200 rows tall) took 8-15% longer with every column
/// computed over its own rows, whatever the height; a glider-making switch engine (soup
/// 455751, a window about 4,000 rows tall) took 2.3 s with all rows and under 0.5 s with its
/// own.
const BY_COLUMN: usize = 256;

/// Rows added above or below when the window grows, at least.
const GROWTH_ROWS: usize = 32;

/// A side of the window grows by its columns or rows over this, at least.
const GROWTH: usize = 4;

/// A box: left, top, right, bottom (inclusive).
pub(crate) type Box4 = (i64, i64, i64, i64);

/// Where a buffer may hold live cells: first and last column, first and last row (indices of
/// the window); nothing when the first column is past the last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Region {
    columns: (usize, usize),
    rows: (usize, usize),
}

impl Region {
    const NONE: Region = Region {
        columns: (1, 0),
        rows: (1, 0),
    };

    fn is_none(&self) -> bool {
        self.columns.0 > self.columns.1 || self.rows.0 > self.rows.1
    }

    /// The same words in a window grown by `left` columns before and `up` rows above.
    fn moved(self, left: usize, up: usize) -> Region {
        match self.is_none() {
            true => self,
            false => Region {
                columns: (self.columns.0 + left, self.columns.1 + left),
                rows: (self.rows.0 + up, self.rows.1 + up),
            },
        }
    }

    fn with(self, column: usize, row: usize) -> Region {
        if self.is_none() {
            return Region {
                columns: (column, column),
                rows: (row, row),
            };
        }
        Region {
            columns: (self.columns.0.min(column), self.columns.1.max(column)),
            rows: (self.rows.0.min(row), self.rows.1.max(row)),
        }
    }
}

/// The rows of one column of a buffer that may hold live cells, first and last; nothing when
/// the first is past the last. A column is computed only over its own and its neighbours'
/// rows (a row more each way), so a glider crossing a column 4,000 rows tall costs a few rows,
/// not the column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span(usize, usize);

impl Span {
    const NONE: Span = Span(1, 0);

    fn is_none(self) -> bool {
        self.0 > self.1
    }

    fn union(self, other: Span) -> Span {
        match (self.is_none(), other.is_none()) {
            (true, _) => other,
            (_, true) => self,
            _ => Span(self.0.min(other.0), self.1.max(other.1)),
        }
    }

    fn within(self, other: Span) -> Span {
        Span(self.0.max(other.0), self.1.min(other.1))
    }

    fn holds(self, other: Span) -> bool {
        other.is_none() || (!self.is_none() && self.0 <= other.0 && other.1 <= self.1)
    }

    /// A row more each way, within `rows` (first and last).
    fn widened(self, (first, last): (usize, usize)) -> Span {
        match self.is_none() {
            true => self,
            false => Span(self.0.saturating_sub(1).max(first), (self.1 + 1).min(last)),
        }
    }

    fn moved(self, up: usize) -> Span {
        match self.is_none() {
            true => self,
            false => Span(self.0 + up, self.1 + up),
        }
    }

    fn with(self, row: usize) -> Span {
        self.union(Span(row, row))
    }

    /// The rows, as indices of a column's words.
    fn range(self) -> std::ops::Range<usize> {
        match self.is_none() {
            true => 0..0,
            false => self.0..self.1 + 1,
        }
    }
}

/// How a column of the window repeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Still {
    /// Not known to.
    No,
    /// It is now what it was two generations ago: its next generation is the one before,
    /// copied where its neighbours repeat too.
    Two,
    /// It is the same in all three generations kept (whose live bits, ORed, are these): its
    /// next generation is already in place where its neighbours repeat too.
    One(u64),
}

impl Still {
    fn repeats(self) -> bool {
        self != Still::No
    }
}

/// A pattern of B3/S23 on the plane.
#[derive(Clone, Debug)]
pub struct Universe {
    x0: i64,
    y0: i64,
    columns: usize,
    rows: usize,
    /// Now, a generation ago, two generations ago.
    cells: Vec<u64>,
    before: Vec<u64>,
    spare: Vec<u64>,
    /// Where `cells` may hold live cells.
    region: Region,
    /// Where `cells`, `before` and `spare` may hold live cells, column by column: the rows of
    /// each.
    spans: [Vec<Span>; 3],
    /// A dead column, for the neighbours of the window's first and last columns.
    dead: Vec<u64>,
    /// Steps still to come before the pattern may be found back where it was two generations
    /// ago: a cell set by hand breaks the chain of generations for two steps.
    edited: u8,
    /// Whether `cells` is exactly what it was two generations ago (as far as the last step
    /// could tell).
    repeats: bool,
    /// The bounding box now, when known.
    bbox: Option<Option<Box4>>,
    /// Scratch for [`Universe::step`]: the OR of the words of each column computed.
    live_columns: Vec<u64>,
    /// By column, how it repeats (as the last step found it). A column that repeats, and
    /// whose neighbours do, is not computed: a switch engine's trail of still lifes sleeps
    /// while the engine moves on.
    still: Vec<Still>,
    /// By column, its live cells now and a generation ago, kept once
    /// [`Universe::track_population`] asks for them (empty before): a column that sleeps is
    /// not counted again, so a switch engine's trail costs nothing a generation.
    counts: Vec<u32>,
    counts_before: Vec<u32>,
    /// Scratch for [`Universe::step`]: the counts of the generation written.
    next_counts: Vec<u32>,
    /// The instruction set steps are compiled for.
    simd: Simd,
    /// Rows computed from which each column is computed over its own rows ([`BY_COLUMN`]; the
    /// tests try others).
    by_column: usize,
    /// Generations stepped.
    pub generation: u64,
}

/// The next generation of 64 cells of a row (or a vector of such words), from the rows above,
/// here and below, each as (its cells' west neighbours, the cells, their east neighbours) in
/// the same bits.
#[inline(always)]
pub(crate) fn next_word<V: Vector>(above: (V, V, V), here: (V, V, V), below: (V, V, V)) -> V {
    let alive = here.1;
    next_of(
        Across::of(above).three,
        Across::of(here).two,
        Across::of(below).three,
        alive,
    )
}

/// Cells as rows of `across` 64-bit words, bit `b` of a row's word `j` the cell of column
/// `64 j + b`, every cell beyond the rows and words given dead.
struct WordRows<'a> {
    cells: &'a [u64],
    across: usize,
    height: usize,
}

impl<'a> WordRows<'a> {
    fn new(cells: &'a [u64], across: usize) -> WordRows<'a> {
        WordRows {
            cells,
            across,
            height: cells.len() / across,
        }
    }

    /// Word `j` of row `row` as (its cells' west neighbours, its cells, their east neighbours)
    /// in the same bits.
    #[inline(always)]
    fn sides(&self, row: usize, j: usize) -> (u64, u64, u64) {
        if row >= self.height {
            return (0, 0, 0);
        }
        let word = |j: usize| self.cells[row * self.across + j];
        let m = word(j);
        let before = if j > 0 { word(j - 1) } else { 0 };
        let after = if j + 1 < self.across { word(j + 1) } else { 0 };
        (m << 1 | before >> 63, m, m >> 1 | after << 63)
    }

    /// Word `j` of row `row` a generation on.
    #[inline(always)]
    fn next(&self, row: usize, j: usize) -> u64 {
        let above = self.sides(row.wrapping_sub(1), j);
        next_word(above, self.sides(row, j), self.sides(row + 1, j))
    }
}

/// Steps rows `rows` of `cells` one generation into the same rows of `next`: rows of
/// `across` 64-bit words as [`WordRows`] holds them. Each word's neighbours are slid in once,
/// down its column of words; a word with no live cell near is written dead without a step
/// (most of a spread-out ash's words).
pub(crate) fn step_rows(cells: &[u64], across: usize, rows: Range<usize>, next: &mut [u64]) {
    let cells = WordRows::new(cells, across);
    for j in 0..across {
        // Row usize::MAX (above row 0) is past the rows: dead.
        let (mut above, mut here) = (
            cells.sides(rows.start.wrapping_sub(1), j),
            cells.sides(rows.start, j),
        );
        for row in rows.clone() {
            let below = cells.sides(row + 1, j);
            let near = [above, here, below]
                .iter()
                .fold(0, |any, &(w, m, e)| any | w | m | e);
            next[row * across + j] = match near {
                0 => 0,
                _ => next_word(above, here, below),
            };
            (above, here) = (here, below);
        }
    }
}

/// Whether `one`, stepped over rows `rows`, is `now`, where `one` is `now` stepped (rows of
/// `across` words, at most 64, as [`step_rows`] takes them): whether `now` repeats with period
/// 2. Only the words near a difference between the two are stepped: where `now` and `one`
/// agree on a word and the words round it, `one`'s step there is `now`'s, which is `one`,
/// which is `now` (the still lifes of an ash, all but its blinkers' words).
pub(crate) fn steps_back(now: &[u64], one: &[u64], across: usize, rows: Range<usize>) -> bool {
    debug_assert!(now.len() == one.len() && across <= 64);
    let one = WordRows::new(one, across);
    // By row, the words within a word of a difference, as bits.
    let mut near = vec![0u64; one.height];
    let all = u64::MAX >> (64 - across);
    for (i, _) in now
        .iter()
        .zip(one.cells)
        .enumerate()
        .filter(|(_, (a, b))| a != b)
    {
        let (row, j) = (i / across, i % across);
        let words = (7u128 << j >> 1) as u64 & all;
        let last = (row + 1).min(one.height - 1);
        for near in &mut near[row.saturating_sub(1)..=last] {
            *near |= words;
        }
    }
    rows.into_iter().all(|row| {
        let mut words = near[row];
        while words != 0 {
            let j = words.trailing_zeros() as usize;
            words &= words - 1;
            if one.next(row, j) != now[row * across + j] {
                return false;
            }
        }
        true
    })
}

/// A row's sums across, bit by bit: of each cell and its west and east neighbours, and of
/// those two neighbours alone, each as (sum, carry).
#[derive(Clone, Copy)]
struct Across<V> {
    three: (V, V),
    two: (V, V),
}

impl<V: Vector> Across<V> {
    /// The sums of a row given as (west neighbours, cells, east neighbours).
    #[inline(always)]
    fn of((west, cells, east): (V, V, V)) -> Across<V> {
        Across {
            three: west.full_add(cells, east),
            two: (west.xor(east), west.and(east)),
        }
    }
}

/// The next generation of the cells `alive`, from the sums of three across the rows above and
/// below and of two beside it in its own row.
#[inline(always)]
fn next_of<V: Vector>(above: (V, V), beside: (V, V), below: (V, V), alive: V) -> V {
    let (u0, u1) = above.0.full_add(beside.0, below.0);
    let (v0, v1) = above.1.full_add(beside.1, below.1);
    // The count is u0 + 2·(u1 + v0) + 4·v1: 2 or 3 where exactly one of u1 and v0 is set
    // and v1 is not (with both set it is 4 or more). Alive next with 3, or 2 and alive.
    u1.xor(v0).and(v1.not()).and(u0.or(alive))
}

/// One generation of one column, rows `first..=last`: `west`, `here` and `east` are the
/// column and its neighbours now, `before` the column a generation ago, `out` the column next.
/// Returns the OR of the words written (where its cells live), the OR of how they differ
/// from `before`, and the rows where the words written may be live: the first and last with
/// a live word where `tight`, all of them (where one is) otherwise.
struct Column<'a> {
    west: &'a [u64],
    here: &'a [u64],
    east: &'a [u64],
    before: &'a [u64],
    out: &'a mut [u64],
    first: usize,
    last: usize,
    /// Whether the live rows are found.
    tight: bool,
    /// (live bits, changed bits, live rows), written by `run`.
    result: &'a mut (u64, u64, Span),
}

impl VectorKernel for Column<'_> {
    #[inline(always)]
    fn run<V: Vector>(self) {
        let (first, last) = (self.first, self.last);
        let n = last + 1 - first;
        // Rows first - 1 ..= last + 1 are read.
        let west = &self.west[first - 1..last + 2];
        let here = &self.here[first - 1..last + 2];
        let east = &self.east[first - 1..last + 2];
        let before = &self.before[first..=last];
        let out = &mut self.out[first..=last];
        let (live, changed) = if n >= V::WORDS {
            rows::<V>(west, here, east, before, out)
        } else {
            rows::<u64>(west, here, east, before, out)
        };
        let rows = match (live, self.tight) {
            (0, _) => Span::NONE,
            (_, false) => Span(first, last),
            (_, true) => {
                let (top, bottom) = live_rows::<V>(out);
                Span(first + top, first + bottom)
            }
        };
        *self.result = (live, changed, rows);
    }
}

/// A column's words copied `from` one generation `to` another, in the kernels' instruction set:
/// the OR of the words copied (`live`) and of how they differ from those replaced (`differs`).
struct Repeat<'a> {
    from: &'a [u64],
    to: &'a mut [u64],
    live: &'a mut u64,
    differs: &'a mut u64,
}

impl VectorKernel for Repeat<'_> {
    #[inline(always)]
    fn run<V: Vector>(self) {
        let (mut live, mut differs) = (0, 0);
        for (to, &from) in self.to.iter_mut().zip(self.from) {
            differs |= *to ^ from;
            live |= from;
            *to = from;
        }
        (*self.live, *self.differs) = (live, differs);
    }
}

/// The live cells of `words`, counted in the kernels' instruction set (vectorised there; not
/// in the baseline's, which has no population count).
struct Count<'a> {
    words: &'a [u64],
    count: &'a mut u32,
}

impl VectorKernel for Count<'_> {
    #[inline(always)]
    fn run<V: Vector>(self) {
        *self.count = self.words.iter().map(|w| w.count_ones()).sum();
    }
}

/// Row `k` of a column as (its cells' west neighbours, its cells, their east neighbours): bit
/// b's west neighbour is bit b - 1 of the same word, or bit 63 of the word west.
#[inline(always)]
fn side<V: Vector>(west: &[u64], here: &[u64], east: &[u64], k: usize) -> (V, V, V) {
    let (w, m, e) = (
        V::load(&west[k..]),
        V::load(&here[k..]),
        V::load(&east[k..]),
    );
    (w.funnel(m, 63), m, m.funnel(e, 1))
}

/// [`Column`]'s rows in vectors `V` of as many rows (`out.len()` at least `V::WORDS`). Each
/// row's sums across are worked out once and carried from vector to vector down the column
/// (the rows above and below a vector's are its own moved a row, the missing one taken from
/// the vector before or after); the last vector, which may be short, is taken back to end at
/// the last row and computed from its rows afresh (its first rows computed twice).
#[inline(always)]
fn rows<V: Vector>(
    west: &[u64],
    here: &[u64],
    east: &[u64],
    before: &[u64],
    out: &mut [u64],
) -> (u64, u64) {
    let n = out.len();
    let w = V::WORDS;
    // (live bits, changed bits) of the words written. (Helpers, not closures: a closure is
    // compiled without the kernel's target features, and its intrinsics become calls.)
    let mut result = (V::splat(0), V::splat(0));
    let mut j = 0;
    // Slice row k is window row first - 1 + k: output row j reads slice rows j, j + 1, j + 2.
    if n + 1 >= 2 * w {
        // Sums of slice rows j .. j + w (above) and j + 1 .. j + w + 1 (here).
        let mut above = Across::of(side::<V>(west, here, east, 0)).three;
        let mut middle = Across::of(side::<V>(west, here, east, 1));
        // The vector after reads slice rows j + w + 1 .. j + 2w + 1, of the n + 2.
        while j + 2 * w <= n + 1 {
            let next = Across::of(side::<V>(west, here, east, j + w + 1));
            let below = (
                middle.three.0.next_row(next.three.0),
                middle.three.1.next_row(next.three.1),
            );
            let new = next_of(above, middle.two, below, V::load(&here[j + 1..]));
            emit(new, j, before, out, &mut result);
            above = (
                middle.three.0.last_row_then(next.three.0),
                middle.three.1.last_row_then(next.three.1),
            );
            middle = next;
            j += w;
        }
    }
    while j < n {
        let j0 = j.min(n - w);
        let new = next_word(
            side::<V>(west, here, east, j0),
            side(west, here, east, j0 + 1),
            side(west, here, east, j0 + 2),
        );
        emit(new, j0, before, out, &mut result);
        j = j0 + w;
    }
    (result.0.or_words(), result.1.or_words())
}

/// The first and last of `words` that are not 0 (there is one): vectors `V` at a time from
/// each end while they are 0 (a column's dead rows cost a fraction of computing them).
#[inline(always)]
fn live_rows<V: Vector>(words: &[u64]) -> (usize, usize) {
    let w = V::WORDS;
    let mut top = 0;
    while top + w <= words.len() && V::load(&words[top..]).is_zero() {
        top += w;
    }
    let top = top
        + words[top..]
            .iter()
            .position(|&x| x != 0)
            .expect("a live word");
    let mut end = words.len();
    while end >= top + w && V::load(&words[end - w..]).is_zero() {
        end -= w;
    }
    let bottom = top
        + words[top..end]
            .iter()
            .rposition(|&x| x != 0)
            .expect("a live word");
    (top, bottom)
}

/// Writes `new` to `out` at row `at`, adding it to `result`'s live bits and how it differs
/// from `before` to its changed bits.
#[inline(always)]
fn emit<V: Vector>(new: V, at: usize, before: &[u64], out: &mut [u64], result: &mut (V, V)) {
    new.store(&mut out[at..]);
    result.0 = result.0.or(new);
    result.1 = result.1.or(new.xor(V::load(&before[at..])));
}

impl Universe {
    /// An empty universe whose window holds (x, y) to (x + width, y + height) at least.
    pub fn empty(x: i64, y: i64, width: usize, height: usize) -> Universe {
        // Columns start at the same places on the plane in every universe.
        let offset = (x - COLUMN_START).rem_euclid(64);
        let (x, width) = (x - offset, width + offset as usize);
        let columns = width.div_ceil(64).max(1);
        let rows = height.max(1);
        Universe {
            x0: x,
            y0: y,
            columns,
            rows,
            cells: vec![0; columns * rows],
            before: vec![0; columns * rows],
            spare: vec![0; columns * rows],
            region: Region::NONE,
            spans: std::array::from_fn(|_| vec![Span::NONE; columns]),
            dead: vec![0; rows],
            edited: 0,
            repeats: false,
            live_columns: Vec::new(),
            still: vec![Still::One(0); columns],
            counts: Vec::new(),
            counts_before: Vec::new(),
            next_counts: Vec::new(),
            bbox: Some(None),
            simd: Simd::new(Isa::detect()),
            by_column: BY_COLUMN,
            generation: 0,
        }
    }

    /// A universe holding `cells`.
    pub fn of(cells: &[(i64, i64)]) -> Universe {
        let (left, top, right, bottom) = bounds(cells).unwrap_or((0, 0, 0, 0));
        let border = 32;
        let mut u = Universe::empty(
            left - border,
            top - border,
            (right - left + 1 + 2 * border) as usize,
            (bottom - top + 1 + 2 * border) as usize,
        );
        for &(x, y) in cells {
            u.set(x, y, true);
        }
        u
    }

    /// The word holding (x, y), if the window holds it: its index and the bit.
    fn word(&self, x: i64, y: i64) -> Option<(usize, u32)> {
        let (cx, cy) = (x - self.x0, y - self.y0);
        if cx < 0 || cy < 0 || cx >= 64 * self.columns as i64 || cy >= self.rows as i64 {
            return None;
        }
        Some((
            (cx / 64) as usize * self.rows + cy as usize,
            (cx % 64) as u32,
        ))
    }

    /// Whether (x, y) is alive.
    pub fn get(&self, x: i64, y: i64) -> bool {
        self.word(x, y)
            .is_some_and(|(i, bit)| self.cells[i] >> bit & 1 != 0)
    }

    /// Sets (x, y), growing the window to hold it.
    pub fn set(&mut self, x: i64, y: i64, alive: bool) {
        self.reach(x, y, x, y);
        let (i, bit) = self.word(x, y).expect("the window holds it");
        let was = self.cells[i];
        if alive {
            self.cells[i] |= 1 << bit;
        } else {
            self.cells[i] &= !(1 << bit);
        }
        if self.cells[i] != was {
            if self.is_counting() {
                let c = i / self.rows;
                match alive {
                    true => self.counts[c] += 1,
                    false => self.counts[c] -= 1,
                }
            }
            self.edited = 2;
            self.repeats = false;
            self.bbox = None;
            self.region = self.region.with(i / self.rows, i % self.rows);
            let span = &mut self.spans[0][i / self.rows];
            *span = span.with(i % self.rows);
        }
    }

    /// Grows the window until it holds the rectangle with [`MARGIN`] to spare.
    fn reach(&mut self, left: i64, top: i64, right: i64, bottom: i64) {
        let width = 64 * self.columns as i64;
        let grow_left = left - MARGIN < self.x0;
        let grow_right = right + MARGIN >= self.x0 + width;
        let grow_up = top - MARGIN < self.y0;
        let grow_down = bottom + MARGIN >= self.y0 + self.rows as i64;
        if !(grow_left || grow_right || grow_up || grow_down) {
            return;
        }
        // A side grows by what it needs, or by a quarter of the window where that is more:
        // a pattern that keeps growing (a switch engine, a stream of gliders) is moved to a
        // fresh window a few dozen times, not once every few generations.
        let (more_columns, more_rows) =
            (self.columns / GROWTH, (self.rows / GROWTH).max(GROWTH_ROWS));
        let columns_left = if grow_left {
            ((self.x0 - (left - MARGIN)) as usize)
                .div_ceil(64)
                .max(more_columns)
        } else {
            0
        };
        let columns_right = if grow_right {
            ((right + MARGIN - (self.x0 + width) + 1) as usize)
                .div_ceil(64)
                .max(more_columns)
        } else {
            0
        };
        let rows_up = if grow_up {
            ((self.y0 - (top - MARGIN)) as usize).max(more_rows)
        } else {
            0
        };
        let rows_down = if grow_down {
            ((bottom + MARGIN - (self.y0 + self.rows as i64) + 1) as usize).max(more_rows)
        } else {
            0
        };
        let (columns, rows) = (
            self.columns + columns_left + columns_right,
            self.rows + rows_up + rows_down,
        );
        let (old_columns, old_rows) = (self.columns, self.rows);
        let moved = |old: &[u64]| {
            relaid(
                old,
                (old_columns, old_rows),
                (columns, rows),
                (columns_left, rows_up),
            )
        };
        self.cells = moved(&self.cells);
        self.before = moved(&self.before);
        self.spare = moved(&self.spare);
        self.dead = vec![0; rows];
        self.region = self.region.moved(columns_left, rows_up);
        for spans in &mut self.spans {
            for span in spans.iter_mut() {
                *span = span.moved(rows_up);
            }
            spans.splice(0..0, std::iter::repeat_n(Span::NONE, columns_left));
            spans.resize(columns, Span::NONE);
        }
        // New columns are dead in all three generations.
        (self.still).splice(0..0, std::iter::repeat_n(Still::One(0), columns_left));
        self.still.resize(columns, Still::One(0));
        for counts in [&mut self.counts, &mut self.counts_before] {
            if !counts.is_empty() {
                counts.splice(0..0, std::iter::repeat_n(0, columns_left));
                counts.resize(columns, 0);
            }
        }
        self.x0 -= 64 * columns_left as i64;
        self.y0 -= rows_up as i64;
        self.columns = columns;
        self.rows = rows;
    }

    /// Advances one generation; the window grows first where the pattern is near its edge.
    /// Only the words round the live cells are computed: in each column, the rows by a live
    /// cell of it or its neighbours.
    pub fn step(&mut self) {
        let Some((l, t, r, b)) = self.bounds() else {
            // Dead, and dead next.
            let rows = self.rows;
            let mut next = std::mem::take(&mut self.spans[2]);
            std::mem::swap(&mut self.counts_before, &mut self.counts);
            self.counts.fill(0);
            clear_columns(&mut self.spare, rows, &mut next, |_| true);
            self.repeats = self.spans[1].iter().all(|s| s.is_none());
            self.rotate(Region::NONE, next);
            return;
        };
        self.reach(l - 1, t - 1, r + 1, b + 1);
        let rows = self.rows;
        // The spans of `spare`, overwritten column by column with the next generation's.
        let mut next = std::mem::take(&mut self.spans[2]);
        let computed = Region {
            columns: (
                ((l - 1 - self.x0) / 64) as usize,
                ((r + 1 - self.x0) / 64) as usize,
            ),
            rows: ((t - 1 - self.y0) as usize, (b + 1 - self.y0) as usize),
        };
        let computed_columns = computed.columns.0..=computed.columns.1;
        // Outside the columns computed the next generation is dead.
        clear_columns(&mut self.spare, rows, &mut next, |c| {
            !computed_columns.contains(&c)
        });
        let mut changed = 0u64;
        // Whether no column held a live cell a generation ago outside the rows compared.
        let mut held = true;
        let live_columns = &mut self.live_columns;
        live_columns.clear();
        // Where populations are counted: the generation written's, by column (dead outside
        // the columns computed).
        let counting = !self.counts.is_empty();
        let next_counts = &mut self.next_counts;
        next_counts.clear();
        next_counts.resize(self.counts.len(), 0);
        let [now_spans, before_spans, _] = &self.spans;
        // Where a column and its neighbours are what they were two generations ago, its next
        // generation is the one before: unless a cell was set by hand since then. `still` is
        // overwritten column by column, the west neighbour's old state carried. A column
        // computed alike repeats only where the generation before holds no live cell outside
        // the rows computed.
        let chained = self.edited == 0 && self.generation >= 2;
        // Whether each column is computed over its own rows, found as it is written: worth it
        // where the window is tall (a switch engine's trail, gliders flying off), not for a
        // soup still in a box.
        let by_column = computed.rows.1 - computed.rows.0 >= self.by_column;
        let still = &mut self.still;
        let mut west = computed.columns.0 == 0 || still[computed.columns.0 - 1].repeats();
        for c in computed_columns.clone() {
            let here = still[c];
            let east = still.get(c + 1).is_none_or(|s| s.repeats());
            let asleep = chained && west && here.repeats() && east;
            west = here.repeats();
            let column = &mut self.spare[c * rows..(c + 1) * rows];
            if asleep {
                let live = match here {
                    Still::One(live) => {
                        if counting {
                            next_counts[c] = self.counts[c];
                        }
                        next[c] = now_spans[c];
                        live
                    }
                    _ => {
                        // The rows the generation before holds, and those to be cleared.
                        let copied = before_spans[c].union(next[c]);
                        let words = copied.range();
                        let (mut live, mut differs) = (0, 0);
                        self.simd.run(Repeat {
                            from: &self.before[c * rows..(c + 1) * rows][words.clone()],
                            to: &mut column[words],
                            live: &mut live,
                            differs: &mut differs,
                        });
                        // Two generations ago it was what it is now, and that was what it
                        // was a generation ago: the same in all three from now on.
                        if differs == 0 {
                            still[c] = Still::One(live);
                        }
                        // Its next generation is the one before, counted then.
                        if counting {
                            next_counts[c] = self.counts_before[c];
                        }
                        next[c] = before_spans[c];
                        live
                    }
                };
                live_columns.push(live);
                continue;
            }
            let beside = |d: Option<usize>| {
                d.and_then(|d| now_spans.get(d).copied())
                    .unwrap_or(Span::NONE)
            };
            let span = match by_column {
                true => now_spans[c]
                    .union(beside(c.checked_sub(1)))
                    .union(beside(Some(c + 1)))
                    .widened(computed.rows),
                false => Span(computed.rows.0, computed.rows.1),
            };
            clear_outside(column, next[c], span);
            let mut result = (0, 0, Span::NONE);
            if !span.is_none() {
                let west = if c > 0 {
                    &self.cells[(c - 1) * rows..c * rows]
                } else {
                    &self.dead[..]
                };
                let east = if c + 1 < self.columns {
                    &self.cells[(c + 1) * rows..(c + 2) * rows]
                } else {
                    &self.dead[..]
                };
                self.simd.run(Column {
                    west,
                    here: &self.cells[c * rows..(c + 1) * rows],
                    east,
                    before: &self.before[c * rows..(c + 1) * rows],
                    out: &mut *column,
                    first: span.0,
                    last: span.1,
                    tight: by_column,
                    result: &mut result,
                });
                if counting {
                    self.simd.run(Count {
                        words: &column[span.range()],
                        count: &mut next_counts[c],
                    });
                }
            }
            live_columns.push(result.0);
            let repeats = span.holds(before_spans[c]);
            held &= repeats;
            still[c] = match result.1 == 0 && repeats {
                true => Still::Two,
                false => Still::No,
            };
            changed |= result.1;
            next[c] = result.2;
        }
        // Outside the columns computed the next generation is dead, and so is now's: the same
        // in all three where the one before holds no live cell there either.
        for (c, still) in still.iter_mut().enumerate() {
            if !computed_columns.contains(&c) {
                let dead_before = before_spans[c].is_none();
                held &= dead_before;
                *still = match dead_before {
                    true => Still::One(0),
                    false => Still::No,
                };
            }
        }
        // The live rows: the first and last rows with a live word in any column (a row or two
        // from the ends, mostly).
        let (mut top, mut bottom) = (usize::MAX, 0);
        if live_columns.iter().any(|&w| w != 0) {
            let columns = computed_columns.clone();
            let row_live = |row: usize| columns.clone().any(|c| self.spare[c * rows + row] != 0);
            let (r0, r1) = computed.rows;
            top = (r0..=r1).find(|&row| row_live(row)).expect("a live row");
            bottom = (r0..=r1)
                .rev()
                .find(|&row| row_live(row))
                .expect("a live row");
        }
        // Each column's rows within them (where its own were not found).
        for span in &mut next[computed_columns] {
            *span = span.within(Span(top, bottom));
        }
        let (bbox, region) = if top == usize::MAX {
            (None, Region::NONE)
        } else {
            let first = live_columns.iter().position(|&w| w != 0).expect("live");
            let last = live_columns.iter().rposition(|&w| w != 0).expect("live");
            let left = 64 * (computed.columns.0 + first) as i64
                + live_columns[first].trailing_zeros() as i64;
            let right = 64 * (computed.columns.0 + last) as i64 + 63
                - live_columns[last].leading_zeros() as i64;
            (
                Some((
                    self.x0 + left,
                    self.y0 + top as i64,
                    self.x0 + right,
                    self.y0 + bottom as i64,
                )),
                Region {
                    columns: (computed.columns.0 + first, computed.columns.0 + last),
                    rows: (top, bottom),
                },
            )
        };
        // Back where it was two generations ago: no word computed differs, and none was
        // alive then outside those compared.
        self.repeats = changed == 0 && held;
        // Counts: written → now → a generation ago → scratch.
        std::mem::swap(&mut self.counts_before, &mut self.next_counts);
        std::mem::swap(&mut self.counts, &mut self.counts_before);
        self.rotate(region, next);
        self.bbox = Some(bbox);
    }

    /// Makes the generation written into `spare`, whose cells lie in `region` (by column in
    /// `spans`), the one now.
    fn rotate(&mut self, region: Region, spans: Vec<Span>) {
        self.edited = self.edited.saturating_sub(1);
        // Now → a generation ago → two generations ago → now.
        std::mem::swap(&mut self.before, &mut self.spare);
        std::mem::swap(&mut self.cells, &mut self.before);
        self.region = region;
        // (`spans[2]` was taken for `spans`.)
        self.spans.swap(1, 2);
        self.spans.swap(0, 1);
        self.spans[0] = spans;
        self.bbox = Some(None);
        self.generation += 1;
    }

    /// Whether the pattern is now what it was two generations ago, with no cell set by hand
    /// since.
    pub fn repeats_in_two(&self) -> bool {
        self.edited == 0 && self.generation >= 2 && self.repeats
    }

    /// Whether no cell is alive.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bounds().is_none()
    }

    /// The smallest rectangle of live cells: (left, top, right, bottom), inclusive.
    #[inline]
    pub fn bounds(&self) -> Option<Box4> {
        if let Some(bbox) = self.bbox {
            return bbox;
        }
        self.scan_bounds()
    }

    fn scan_bounds(&self) -> Option<Box4> {
        let region = self.region;
        if region.is_none() {
            return None;
        }
        let rows = self.rows;
        let columns = region.columns.0..=region.columns.1;
        // The first and last live rows, then the live columns between them.
        let row_live = |row: usize| columns.clone().any(|c| self.cells[c * rows + row] != 0);
        let top = (region.rows.0..=region.rows.1).find(|&row| row_live(row))?;
        let bottom = (top..=region.rows.1).rev().find(|&row| row_live(row))?;
        let (mut left, mut right) = (i64::MAX, i64::MIN);
        for c in columns {
            let live = self.cells[c * rows + top..=c * rows + bottom]
                .iter()
                .fold(0, |a, &w| a | w);
            if live != 0 {
                left = left.min(64 * c as i64 + live.trailing_zeros() as i64);
                right = right.max(64 * c as i64 + 63 - live.leading_zeros() as i64);
            }
        }
        Some((
            self.x0 + left,
            self.y0 + top as i64,
            self.x0 + right,
            self.y0 + bottom as i64,
        ))
    }

    /// The clusters (cells joined within √5) of at most `most` cells that hold a live cell on
    /// an edge of the bounding box: where escaping ships are.
    pub fn edge_clusters(&self, most: usize) -> Vec<Vec<(i64, i64)>> {
        let Some((l, t, r, b)) = self.bounds() else {
            return Vec::new();
        };
        // Cells taken into a cluster: a bit each, laid out as the window's columns are, over
        // the box's columns (and one more, read across) and rows.
        let (first, last) = self.columns_of((l, t, r, b));
        let height = (b - t + 1) as usize;
        let mut seen = vec![0u64; (last + 2 - first) * height];
        // The five cells x - 2 ..= x + 2 of row y, as bits 0..5, from a column layout whose
        // word for column c, row y is `word(c, y)`. The window keeps two dead cells or more
        // round the box: x - 2 is in it.
        let five = |word: &dyn Fn(usize, i64) -> u64, x: i64, y: i64| {
            let from = (x - 2 - self.x0) as usize;
            let (c, o) = (from / 64, from % 64);
            let mut bits = word(c, y) >> o;
            if o > 59 {
                bits |= word(c + 1, y) << (64 - o);
            }
            bits & 31
        };
        let live = |c: usize, y: i64| {
            if c < self.columns {
                self.cells[c * self.rows + (y - self.y0) as usize]
            } else {
                0
            }
        };
        let seen_at = |c: usize, y: i64| (c - first) * height + (y - t) as usize;
        // The live cells on the edges: the top and bottom rows a word at a time, then the
        // left and right columns (the clusters found do not depend on the order).
        let mut edges = Vec::with_capacity(64);
        for y in [t, b] {
            for c in first..=last {
                let mut bits = live(c, y);
                while bits != 0 {
                    let x = self.x0 + 64 * c as i64 + bits.trailing_zeros() as i64;
                    bits &= bits - 1;
                    edges.push((x, y));
                }
            }
        }
        for x in [l, r] {
            let cx = (x - self.x0) as usize;
            let column = &self.cells[(cx / 64) * self.rows..(cx / 64 + 1) * self.rows];
            let rows = (t - self.y0) as usize..=(b - self.y0) as usize;
            for (i, &w) in column[rows].iter().enumerate() {
                if w >> (cx % 64) & 1 != 0 {
                    edges.push((x, t + i as i64));
                }
            }
        }
        let mut out = Vec::new();
        let (mut stack, mut cluster) = (Vec::with_capacity(64), Vec::with_capacity(64));
        for (x, y) in edges {
            let cx = (x - self.x0) as usize;
            let bit = 1u64 << (cx % 64);
            let at = seen_at(cx / 64, y);
            if seen[at] & bit != 0 {
                continue;
            }
            seen[at] |= bit;
            stack.clear();
            stack.push((x, y));
            cluster.clear();
            while let Some((x, y)) = stack.pop() {
                cluster.push((x, y));
                if cluster.len() > most {
                    break;
                }
                // Rows y - 2 ..= y + 2: the cells within √5, not yet taken.
                for (dy, near) in [
                    (-2i64, 0b01110u64),
                    (-1, 0b11111),
                    (0, 0b11011),
                    (1, 0b11111),
                    (2, 0b01110),
                ] {
                    let ny = y + dy;
                    if ny < t || ny > b {
                        continue;
                    }
                    let taken = |c: usize, row: i64| {
                        if c >= first && c <= last + 1 {
                            seen[seen_at(c, row)]
                        } else {
                            0
                        }
                    };
                    let mut fresh = five(&live, x, ny) & !five(&taken, x, ny) & near;
                    while fresh != 0 {
                        let nx = x - 2 + fresh.trailing_zeros() as i64;
                        fresh &= fresh - 1;
                        let cx = (nx - self.x0) as usize;
                        seen[seen_at(cx / 64, ny)] |= 1 << (cx % 64);
                        stack.push((nx, ny));
                    }
                }
            }
            if cluster.len() <= most {
                out.push(cluster.clone());
            }
        }
        out
    }

    /// Keeps each column's live cells counted from now on, so that [`Universe::population`]
    /// costs a sum over the columns rather than a count of every word: for a pattern whose
    /// population is wanted every generation.
    pub fn track_population(&mut self) {
        if !self.is_counting() {
            let counts = |cells: &[u64], spans: &[Span]| -> Vec<u32> {
                (0..self.columns)
                    .map(|c| self.column_population(cells, spans[c], c))
                    .collect()
            };
            let (now, before) = (
                counts(&self.cells, &self.spans[0]),
                counts(&self.before, &self.spans[1]),
            );
            (self.counts, self.counts_before) = (now, before);
        }
    }

    /// Whether each column's live cells are counted ([`Universe::track_population`]).
    fn is_counting(&self) -> bool {
        !self.counts.is_empty()
    }

    /// Live cells.
    pub fn population(&self) -> u64 {
        if self.is_counting() {
            return self.counts.iter().map(|&n| n as u64).sum();
        }
        (0..self.columns)
            .map(|c| self.column_population(&self.cells, self.spans[0][c], c) as u64)
            .sum()
    }

    /// Live cells of column `c` of `cells` (one of the three generations), whose live cells
    /// lie in the rows `span`.
    fn column_population(&self, cells: &[u64], span: Span, c: usize) -> u32 {
        let mut count = 0;
        self.simd.run(Count {
            words: &cells[c * self.rows..(c + 1) * self.rows][span.range()],
            count: &mut count,
        });
        count
    }

    /// Every live cell, row by row.
    pub fn cells(&self) -> Vec<(i64, i64)> {
        live_cells(&self.cells, self.window(), self.region)
    }

    /// Where the window lies: (x0, y0, columns, rows).
    fn window(&self) -> Window {
        (self.x0, self.y0, self.columns, self.rows)
    }

    /// The live cells now, where they lie, to be compared later with [`Universe::is`].
    pub fn shot(&self) -> Shot {
        let Some(bbox) = self.bounds() else {
            return Shot::default();
        };
        let (first, last) = self.columns_of(bbox);
        let rows = self.rows_of(bbox);
        let mut words = Vec::with_capacity((last + 1 - first) * rows.len());
        for c in first..=last {
            words.extend_from_slice(
                &self.cells[c * self.rows + rows.start..c * self.rows + rows.end],
            );
        }
        Shot {
            bbox: Some(bbox),
            words,
        }
    }

    /// Whether the live cells now are those of `shot`, where they were.
    pub fn is(&self, shot: &Shot) -> bool {
        let bbox = self.bounds();
        if bbox != shot.bbox {
            return false;
        }
        let Some(bbox) = bbox else {
            return true;
        };
        let (first, last) = self.columns_of(bbox);
        let rows = self.rows_of(bbox);
        let n = rows.len();
        (first..=last).enumerate().all(|(i, c)| {
            self.cells[c * self.rows + rows.start..c * self.rows + rows.end]
                == shot.words[i * n..(i + 1) * n]
        })
    }

    /// The columns holding the box's cells.
    fn columns_of(&self, (l, _, r, _): Box4) -> (usize, usize) {
        (((l - self.x0) / 64) as usize, ((r - self.x0) / 64) as usize)
    }

    /// The rows holding the box's cells.
    fn rows_of(&self, (_, t, _, b): Box4) -> std::ops::Range<usize> {
        (t - self.y0) as usize..(b - self.y0) as usize + 1
    }
}

/// The live cells of a universe at some generation ([`Universe::shot`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shot {
    bbox: Option<Box4>,
    /// The words of the box's columns and rows, column by column.
    words: Vec<u64>,
}

/// A window: where its first column and row lie on the plane (x0, y0), its columns and rows.
type Window = (i64, i64, usize, usize);

/// `words` of a window of `old` (columns, rows) laid out in one of `new`, grown by `left`
/// columns before and `up` rows above.
fn relaid(
    words: &[u64],
    (old_columns, old_rows): (usize, usize),
    (columns, rows): (usize, usize),
    (left, up): (usize, usize),
) -> Vec<u64> {
    let mut new = vec![0u64; columns * rows];
    for c in 0..old_columns {
        let at = (c + left) * rows + up;
        new[at..at + old_rows].copy_from_slice(&words[c * old_rows..(c + 1) * old_rows]);
    }
    new
}

/// The live cells of `words` (laid out as a universe's, in `window`) within `region`, row by
/// row.
fn live_cells(words: &[u64], (x0, y0, _, rows): Window, region: Region) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    if region.is_none() {
        return out;
    }
    for r in region.rows.0..=region.rows.1 {
        for c in region.columns.0..=region.columns.1 {
            let mut bits = words[c * rows + r];
            while bits != 0 {
                let b = bits.trailing_zeros() as i64;
                out.push((x0 + 64 * c as i64 + b, y0 + r as i64));
                bits &= bits - 1;
            }
        }
    }
    out
}

/// The columns `c` of `grid` (`rows` words each) where `cleared(c)` is true made dead, their
/// live rows (`spans`) cleared and their spans set to none.
fn clear_columns(
    grid: &mut [u64],
    rows: usize,
    spans: &mut [Span],
    cleared: impl Fn(usize) -> bool,
) {
    for (c, span) in spans.iter_mut().enumerate() {
        if cleared(c) {
            clear_outside(&mut grid[c * rows..(c + 1) * rows], *span, Span::NONE);
            *span = Span::NONE;
        }
    }
}

/// Zeroes the rows of `old` outside `kept` in `column`.
fn clear_outside(column: &mut [u64], old: Span, kept: Span) {
    if old.is_none() {
        return;
    }
    if kept.is_none() {
        column[old.range()].fill(0);
        return;
    }
    if old.0 < kept.0 {
        column[old.0..kept.0.min(old.1 + 1)].fill(0);
    }
    if old.1 > kept.1 {
        column[(kept.1 + 1).max(old.0)..=old.1].fill(0);
    }
}

/// The cells alive in any of the generations of a universe added to it, kept in the
/// universe's layout: each generation is ORed in word by word.
pub struct Envelope {
    window: Window,
    words: Vec<u64>,
    region: Region,
}

impl Envelope {
    /// The cells of `u` now.
    pub fn of(u: &Universe) -> Envelope {
        Envelope {
            window: u.window(),
            words: u.cells.clone(),
            region: u.region,
        }
    }

    /// Adds the cells of `u` now: a later generation of the universe this envelope was made
    /// of, whose window holds this one's (windows only grow, in whole columns).
    pub fn add(&mut self, u: &Universe) {
        let (x0, y0, columns, rows) = u.window();
        if self.window != u.window() {
            let (old_x0, old_y0, old_columns, old_rows) = self.window;
            let (left, up) = (((old_x0 - x0) / 64) as usize, (old_y0 - y0) as usize);
            self.words = relaid(
                &self.words,
                (old_columns, old_rows),
                (columns, rows),
                (left, up),
            );
            self.region = self.region.moved(left, up);
            self.window = u.window();
        }
        let now = u.region;
        if now.is_none() {
            return;
        }
        for c in now.columns.0..=now.columns.1 {
            let column = c * rows..(c + 1) * rows;
            let span = u.spans[0][c].range();
            let (to, from) = (&mut self.words[column.clone()], &u.cells[column]);
            for (to, from) in to[span.clone()].iter_mut().zip(&from[span]) {
                *to |= from;
            }
        }
        self.region = (self.region)
            .with(now.columns.0, now.rows.0)
            .with(now.columns.1, now.rows.1);
    }

    /// Every cell alive in a generation added, row by row.
    pub fn cells(&self) -> Vec<(i64, i64)> {
        live_cells(&self.words, self.window, self.region)
    }
}

/// The smallest rectangle of `cells`: (left, top, right, bottom), inclusive.
pub fn bounds<'a>(cells: impl IntoIterator<Item = &'a (i64, i64)>) -> Option<Box4> {
    cells.into_iter().fold(None, |b, &(x, y)| match b {
        None => Some((x, y, x, y)),
        Some((l, t, r, b)) => Some((l.min(x), t.min(y), r.max(x), b.max(y))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeSet, HashMap};

    /// B3/S23 on a set of cells, cell by cell.
    fn naive(cells: &BTreeSet<(i64, i64)>) -> BTreeSet<(i64, i64)> {
        let mut counts: HashMap<(i64, i64), u32> = HashMap::new();
        for &(x, y) in cells {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    if (dx, dy) != (0, 0) {
                        *counts.entry((x + dx, y + dy)).or_default() += 1;
                    }
                }
            }
        }
        counts
            .into_iter()
            .filter(|&(c, n)| n == 3 || (n == 2 && cells.contains(&c)))
            .map(|(c, _)| c)
            .collect()
    }

    /// The vectors this CPU runs: each instruction set it has, AVX-512 with and without its
    /// funnel shifts.
    fn simds() -> Vec<Simd> {
        let mut simds: Vec<Simd> = Isa::available().into_iter().map(Simd::new).collect();
        simds.extend(
            simds
                .iter()
                .filter(|s| s.funnel())
                .map(|s| s.without_funnel())
                .collect::<Vec<_>>(),
        );
        simds
    }

    proptest! {
        /// The period-2 check on the words near a change is the check on every word: on ash of
        /// blinkers and blocks (which may touch), with or without a stray cell, and a few cells
        /// across the first words' end.
        #[test]
        fn steps_back_is_two_steps_back(
            across in 1usize..5,
            objects in proptest::collection::vec((0usize..1000, 3usize..40, any::<bool>()), 1..12),
            stray in proptest::option::of((0usize..1000, 3usize..43)),
            across_end in proptest::collection::vec((0usize..6, 0usize..6), 0..8),
        ) {
            let (rows, width) = (46, 64 * across);
            let mut now = vec![0u64; rows * across];
            let mut set = |x: usize, y: usize| now[y * across + x / 64] |= 1 << (x % 64);
            for (x, y, blinker) in objects {
                let x = 2 + x % (width - 5);
                let cells: &[(usize, usize)] = match blinker {
                    true => &[(0, 0), (1, 0), (2, 0)],
                    false => &[(0, 0), (1, 0), (0, 1), (1, 1)],
                };
                cells.iter().for_each(|&(dx, dy)| set(x + dx, y + dy));
            }
            if let Some((x, y)) = stray {
                set(2 + x % (width - 4), y);
            }
            for (dx, dy) in across_end.into_iter().filter(|_| across > 1) {
                set(61 + dx, 20 + dy);
            }
            let step = |cells: &[u64]| {
                let mut next = vec![0u64; cells.len()];
                step_rows(cells, across, 1..rows - 1, &mut next);
                next
            };
            let one = step(&now);
            prop_assert_eq!(steps_back(&now, &one, across, 1..rows - 1), step(&one) == now);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn steps_as_life_does(
            side in 1usize..40,
            seed in any::<u64>(),
            edits in proptest::collection::vec((0usize..300, -50i64..90, -50i64..90, any::<bool>()), 0..6),
            track_from in 0usize..200,
        ) {
            let mut generator = gol_core::seed::SplitMix64::new(seed);
            let mut random = move || generator.next();
            let mut cells = BTreeSet::new();
            for y in 0..side as i64 {
                for x in 0..side as i64 {
                    if random() % 2 == 0 {
                        cells.insert((x, y));
                    }
                }
            }
            let start: Vec<(i64, i64)> = cells.iter().copied().collect();
            // Every instruction set this CPU has steps it the same.
            let mut u = Universe::of(&start);
            let simds = simds();
            u.simd = simds[seed as usize % simds.len()];
            // Columns computed over all the rows, their own, or each as the window's height
            // says.
            u.by_column = [usize::MAX, 0, 24][(seed >> 32) as usize % 3];
            let mut history = Vec::new();
            for generation in 0..300 {
                for &(at, x, y, alive) in &edits {
                    if at == generation {
                        u.set(x, y, alive);
                        if alive { cells.insert((x, y)); } else { cells.remove(&(x, y)); }
                    }
                }
                let ours: BTreeSet<(i64, i64)> = u.cells().into_iter().collect();
                prop_assert_eq!(&ours, &cells, "generation {}", generation);
                if generation == track_from {
                    u.track_population();
                }
                prop_assert_eq!(u.population(), cells.len() as u64, "generation {}", generation);
                prop_assert_eq!(u.bounds(), bounds(&start_of(&cells)));
                // A shot of the same cells set afresh in another window.
                prop_assert!(u.is(&Universe::of(&start_of(&cells)).shot()));
                if generation >= 2 && edits.iter().all(|e| e.0 + 2 < generation || e.0 > generation) {
                    prop_assert_eq!(u.repeats_in_two(), cells == history[generation - 2], "generation {}", generation);
                }
                history.push(cells.clone());
                u.step();
                cells = naive(&cells);
            }
        }
    }

    /// A shot is the same cells where they were: not one cell moved or added.
    #[test]
    fn shots_tell_cells_apart() {
        let corners = [(30, -2), (210, 5)];
        let places: Vec<(i64, i64)> = (0..3)
            .flat_map(|y| (40..200).map(move |x| (x, y)))
            .collect();
        let with = |more: &[(i64, i64)]| {
            let mut cells = corners.to_vec();
            cells.extend_from_slice(more);
            Universe::of(&cells)
        };
        for (i, &a) in places.iter().enumerate().step_by(7) {
            let shot = with(&[a]).shot();
            assert!(with(&[a]).is(&shot));
            for &b in &places[i + 1..] {
                assert!(!with(&[b]).is(&shot), "{a:?} {b:?}");
                assert!(!with(&[a, b]).is(&shot), "{a:?} {b:?}");
            }
        }
    }

    fn start_of(cells: &BTreeSet<(i64, i64)>) -> Vec<(i64, i64)> {
        cells.iter().copied().collect()
    }

    /// Soups whose columns repeat over the rows computed while two generations ago they held
    /// live cells beyond them (dying sparks that kept a cell from being born): such a column
    /// must not sleep. Found by the census of `k_testseed`, where they settled too early.
    #[test]
    fn columns_that_held_cells_beyond_the_rows_computed_stay_awake() {
        for (index, by_column) in [2525, 13769, 65189]
            .into_iter()
            .flat_map(|i| [(i, 0), (i, usize::MAX)])
        {
            let rows = crate::soup::rows(&crate::soup::id("k_testseed", index));
            let mut cells: BTreeSet<(i64, i64)> = crate::soup::cells(&rows).into_iter().collect();
            let mut u = Universe::of(&start_of(&cells));
            u.by_column = by_column;
            for generation in 0..200 {
                let ours: BTreeSet<(i64, i64)> = u.cells().into_iter().collect();
                assert_eq!(ours, cells, "soup {index}, generation {generation}");
                u.step();
                cells = naive(&cells);
            }
        }
    }

    /// Columns of still lifes and blinkers sleep, and wake as Life does: when a glider flies
    /// into them, when a cell is set beside one, and when one is taken away. The envelope
    /// holds every cell alive in any generation added.
    #[test]
    fn sleeping_columns_wake_as_life_does() {
        for by_column in [0, usize::MAX] {
            sleeping_columns_wake_as_life_does_with(by_column);
        }
    }

    fn sleeping_columns_wake_as_life_does_with(by_column: usize) {
        let mut cells = BTreeSet::new();
        // A block, and a blinker below it, every 70 cells across 13 columns.
        for k in 0..12i64 {
            let x = 70 * k;
            cells.extend([(x, 0), (x + 1, 0), (x, 1), (x + 1, 1)]);
            cells.extend([(x, 40), (x, 41), (x, 42)]);
        }
        // A glider flying down-right into the blinker at x = 280.
        cells.extend([(231, -10), (232, -9), (230, -8), (231, -8), (232, -8)]);
        let mut u = Universe::of(&start_of(&cells));
        u.by_column = by_column;
        u.track_population();
        let mut envelope = Envelope::of(&u);
        let mut union = cells.clone();
        let mut most_asleep = 0;
        for generation in 0..1500 {
            match generation {
                // A cell beside a block far from the glider; a blinker's end taken away.
                700 => {
                    u.set(772, 0, true);
                    cells.insert((772, 0));
                }
                900 => {
                    u.set(630, 40, false);
                    cells.remove(&(630, 40));
                }
                _ => {}
            }
            let ours: BTreeSet<(i64, i64)> = u.cells().into_iter().collect();
            assert_eq!(ours, cells, "generation {generation}");
            assert_eq!(
                u.population(),
                cells.len() as u64,
                "generation {generation}"
            );
            let asleep = u
                .still
                .iter()
                .filter(|s| matches!(s, Still::One(_)))
                .count();
            most_asleep = most_asleep.max(asleep);
            u.step();
            cells = naive(&cells);
            envelope.add(&u);
            union.extend(cells.iter().copied());
        }
        assert!(most_asleep >= 8, "at most {most_asleep} columns slept");
        let enveloped: BTreeSet<(i64, i64)> = envelope.cells().into_iter().collect();
        assert_eq!(enveloped, union);
    }
}
