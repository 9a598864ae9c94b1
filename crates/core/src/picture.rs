//! Pictures of worlds: PNG stills and GIF animations.
//!
//! A picture shows a *view*, a rectangle of cells that wraps round the torus. Where the view
//! fits, each cell is a square of `scale` × `scale` pixels (by default as many as make the
//! picture at least [`MIN_WIDTH`] pixels wide, at most [`MAX_PIXELS`] a side); a view too large
//! for one pixel a cell at [`MAX_PIXELS`] is shrunk by a whole factor, each pixel then the share
//! of live cells in its block. A 3D cube is drawn as the live cells along one axis ([`Axis`]),
//! relative to the fullest column. Shares go through a perceptual colour map ([`PALETTE`], dark violet for none,
//! yellow for all), so a dead cell is dark and a live one bright.
//!
//! A [`Frame`] holds one byte a pixel, an index into [`PALETTE`] (0 no live cells, 255 all
//! live): PNGs and GIFs are written with that palette, so a frame is encoded as it is.

use std::io::{self, Write};

use crate::cube::Cube;
use crate::error::{Error, Result};
use rayon::prelude::*;

use crate::grid::{age_planes, Grid, WORD_BITS};

/// The largest picture side, in pixels.
pub const MAX_PIXELS: usize = 4096;

/// The width the default scale makes a small view at least, in pixels.
pub const MIN_WIDTH: usize = 512;

/// Colours of a perceptual map (dark violet through blue and green to yellow, close to
/// matplotlib's viridis), anchors that [`PALETTE`] interpolates.
const ANCHORS: [[u8; 3]; 9] = [
    [68, 1, 84],
    [71, 44, 122],
    [59, 81, 139],
    [44, 113, 142],
    [33, 144, 141],
    [39, 173, 129],
    [92, 200, 99],
    [170, 220, 50],
    [253, 231, 37],
];

/// The colour map: entry i is the colour of a share i / 255 of live cells.
pub static PALETTE: [[u8; 3]; 256] = {
    let mut table = [[0u8; 3]; 256];
    let mut i = 0;
    while i < 256 {
        // Position among the anchors, in 1/255ths of a segment: 8 segments over 0..=255.
        let at = i * 8;
        let segment = if at / 255 >= 8 { 7 } else { at / 255 };
        let within = at - segment * 255;
        let mut c = 0;
        while c < 3 {
            let from = ANCHORS[segment][c] as usize;
            let to = ANCHORS[segment + 1][c] as usize;
            table[i][c] = ((from * (255 - within) + to * within + 127) / 255) as u8;
            c += 1;
        }
        i += 1;
    }
    table
};

/// A rectangle of cells: its top-left cell and size; it wraps round the torus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    /// Column of the top-left cell.
    pub x: usize,
    /// Row of the top-left cell.
    pub y: usize,
    /// Cells across.
    pub width: usize,
    /// Cells down.
    pub height: usize,
}

impl View {
    /// The whole of a `width` × `height` world.
    pub fn whole(width: usize, height: usize) -> View {
        View {
            x: 0,
            y: 0,
            width,
            height,
        }
    }

    /// Refuses a view that does not lie on a `width` × `height` grid: it starts on one of its
    /// cells and shows each at most once each way (it may wrap round the torus).
    pub fn check_within(&self, width: usize, height: usize) -> Result<()> {
        if self.x >= width || self.y >= height || self.width > width || self.height > height {
            return Err(Error::Invalid(format!(
                "view {},{},{},{}: a view of a {width}x{height} grid starts on one of its cells \
                 and is at most {width}x{height} cells",
                self.x, self.y, self.width, self.height
            )));
        }
        Ok(())
    }

    /// Parses `X,Y,W,H`.
    pub fn parse(text: &str) -> Result<View> {
        let numbers: Vec<usize> = text
            .split(',')
            .map(|n| n.trim().parse::<usize>())
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| Error::Invalid(format!("view {text:?}: expected X,Y,W,H in cells")))?;
        match numbers[..] {
            [x, y, width, height] if width > 0 && height > 0 => Ok(View {
                x,
                y,
                width,
                height,
            }),
            _ => Err(Error::Invalid(format!(
                "view {text:?}: expected X,Y,W,H in cells, W and H at least 1"
            ))),
        }
    }
}

/// The axis a cube is projected along.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Axis {
    /// Along x: the picture's columns are z, its rows y.
    #[default]
    X,
    /// Along y: columns z, rows x.
    Y,
    /// Along z: columns y, rows x.
    Z,
}

impl std::str::FromStr for Axis {
    type Err = Error;

    fn from_str(text: &str) -> Result<Axis> {
        match text {
            "x" | "X" => Ok(Axis::X),
            "y" | "Y" => Ok(Axis::Y),
            "z" | "Z" => Ok(Axis::Z),
            _ => Err(Error::Invalid(format!("axis {text:?}: expected x, y or z"))),
        }
    }
}

/// A picture: one palette index a pixel, row by row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    /// Pixels across.
    pub width: usize,
    /// Pixels down.
    pub height: usize,
    /// Indices into [`PALETTE`] (or `palette`), row-major.
    pub pixels: Vec<u8>,
    /// The frame's own palette, 256 RGB triples flat, where a pixel is a cell's state under a
    /// rule that gives its states colours ([`StateColours`]); `None` for [`PALETTE`].
    pub palette: Option<Vec<u8>>,
}

/// The colours a rule gives its states (a rule table's `@COLORS`), by state; `None` for a
/// state left to the default (the fade of [`PALETTE`] that other multi-state rules take).
pub type StateColours = [Option<[u8; 3]>];

/// The 256-entry palette of a picture whose pixels are states of `states` under `colours`.
fn state_palette(colours: &StateColours, states: u32) -> Vec<u8> {
    (0..256u32)
        .flat_map(|s| {
            let fade = match s {
                0 => 0,
                s if s < states => share(u64::from(states - s), u64::from(states - 1)),
                _ => 0,
            };
            colours
                .get(s as usize)
                .copied()
                .flatten()
                .unwrap_or(PALETTE[fade as usize])
        })
        .collect()
}

/// How cells become pixels: `scale` pixels a cell, or blocks of `block` × `block` cells a pixel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Scaled(usize),
    Blocks(usize),
}

/// The shape of a `width` × `height` view's picture: `scale` pixels a cell where given (refused
/// if the picture would pass [`MAX_PIXELS`]), else the default (see the module's notes).
fn shape(width: usize, height: usize, scale: Option<u32>) -> Result<Shape> {
    let side = width.max(height);
    match scale {
        Some(0) => Err(Error::Invalid("a scale is at least 1 pixel a cell".into())),
        Some(s) if side.saturating_mul(s as usize) > MAX_PIXELS => Err(Error::Invalid(format!(
            "scale {s}: a {width}x{height} view would be more than {MAX_PIXELS} pixels a side"
        ))),
        Some(s) => Ok(Shape::Scaled(s as usize)),
        None if side <= MAX_PIXELS => Ok(Shape::Scaled(
            MIN_WIDTH.div_ceil(width).clamp(1, MAX_PIXELS / side),
        )),
        None => Ok(Shape::Blocks(side.div_ceil(MAX_PIXELS))),
    }
}

/// Live cells among x in `from..to` of a row.
fn count_range(row: &[u64], from: usize, to: usize) -> u32 {
    let mut count = 0;
    let mut x = from;
    while x < to {
        let bit = x % WORD_BITS;
        let take = (WORD_BITS - bit).min(to - x);
        let mask = if take == WORD_BITS {
            !0
        } else {
            ((1u64 << take) - 1) << bit
        };
        count += (row[x / WORD_BITS] & mask).count_ones();
        x += take;
    }
    count
}

/// The share `count / cells` as a palette index, rounded.
fn share(count: u64, cells: u64) -> u8 {
    ((count * 255 + cells / 2) / cells) as u8
}

/// Scales a `width` × `height` picture of one index a cell up by `scale`.
fn scaled(width: usize, height: usize, cells: &[u8], scale: usize) -> Frame {
    let (pw, ph) = (width * scale, height * scale);
    let mut pixels = Vec::with_capacity(pw * ph);
    for row in cells.chunks_exact(width) {
        let line: Vec<u8> = row
            .iter()
            .flat_map(|&c| std::iter::repeat_n(c, scale))
            .collect();
        for _ in 0..scale {
            pixels.extend_from_slice(&line);
        }
    }
    Frame {
        width: pw,
        height: ph,
        pixels,
        palette: None,
    }
}

/// The palette index of cell `(x, y)` of `grid`: 255 alive, 0 dead, and under a Generations
/// rule of C states the dying state s fading from alive towards dead, 255 · (C − s) / (C − 1)
/// rounded.
fn state_index(grid: &Grid, x: usize, y: usize) -> u8 {
    if grid.states() == 2 {
        return if grid.get(x, y) { 255 } else { 0 };
    }
    match grid.state(x, y) {
        0 => 0,
        s => share(u64::from(grid.states() - s), u64::from(grid.states() - 1)),
    }
}

/// The picture of `view` of `grid`, `scale` pixels a cell (or the default; see the module's
/// notes). Where the rule gives its states `colours`, a picture of whole cells shows them
/// (a zoomed-out one still shows the share of cells not in state 0).
pub fn grid(
    grid: &Grid,
    view: &View,
    scale: Option<u32>,
    colours: Option<&StateColours>,
) -> Result<Frame> {
    let (w, h) = (grid.width(), grid.height());
    match shape(view.width, view.height, scale)? {
        Shape::Scaled(s) => {
            let mut cells = Vec::with_capacity(view.width * view.height);
            for dy in 0..view.height {
                let y = (view.y + dy) % h;
                cells.extend((0..view.width).map(|dx| {
                    let x = (view.x + dx) % w;
                    match colours {
                        Some(_) => grid.state(x, y) as u8,
                        None => state_index(grid, x, y),
                    }
                }));
            }
            let mut frame = scaled(view.width, view.height, &cells, s);
            frame.palette = colours.map(|c| state_palette(c, grid.states()));
            Ok(frame)
        }
        Shape::Blocks(block) => Ok(blocks(grid, view, block)),
    }
}

/// The picture of `view` of `grid` with one pixel for each `block` × `block` cells, the share
/// of live cells among them (one pixel a cell, 0 or 255, for `block` 1): what a viewer shows
/// of a view larger than its canvas. Under a Generations rule a dying cell counts as the part
/// of a live one that its fade is in still pictures (state s of C weighs (C − s) / (C − 1)), so
/// a block's pixel is the mean of its cells' indices. Bands of pixel rows are counted in
/// parallel.
pub fn blocks(grid: &Grid, view: &View, block: usize) -> Frame {
    let (w, h) = (grid.width(), grid.height());
    let block = block.max(1);
    let (pw, ph) = (view.width.div_ceil(block), view.height.div_ceil(block));
    let mut pixels = vec![0u8; pw * ph];
    // Aligned blocks of a power of two from 2 to 64 cells that do not wrap lie inside words:
    // counted a word at a time ([`Fields`]).
    let fields = (block.is_power_of_two()
        && (2..=WORD_BITS).contains(&block)
        && view.x.is_multiple_of(block)
        && view.x + view.width <= w)
        .then(|| Fields::new(block, view));
    let count = |rows: &mut dyn Iterator<Item = &[u64]>, counts: &mut [u64]| match &fields {
        Some(fields) => fields.count(rows, counts),
        None => count_band(rows, w, view, block, counts),
    };
    // A cell in state s of C weighs C − s (C − 1 alive, 0 dead); its share is that over C − 1.
    let (states, planes, wpr) = (
        grid.states() as u64,
        age_planes(grid.states()),
        grid.words_per_row(),
    );
    let whole = states - 1;
    // The shares of a whole block, looked up rather than divided for each pixel.
    let cells = block * block;
    let full = (cells as u64 * whole <= 1 << 16).then(|| {
        (0..=cells as u64 * whole)
            .map(|n| share(n, cells as u64 * whole))
            .collect::<Vec<u8>>()
    });
    pixels
        .par_chunks_mut(pw)
        .enumerate()
        .for_each(|(py, line)| {
            let rows = py * block..((py + 1) * block).min(view.height);
            let tall = rows.len();
            let ys = || rows.clone().map(|dy| (view.y + dy) % h);
            let mut weights = vec![0u64; pw];
            count(&mut ys().map(|y| grid.row(y)), &mut weights);
            if planes > 0 {
                // A dying cell of age a (state a + 1) weighs C − 1 − a: (C − 1) for each live or
                // dying cell, less the sum of the dying cells' ages, plane by plane.
                let dying: Vec<Vec<u64>> = ys()
                    .map(|y| {
                        let ages: Vec<&[u64]> = (0..planes).map(|p| grid.age_row(y, p)).collect();
                        (0..wpr)
                            .map(|i| ages.iter().fold(0, |or, plane| or | plane[i]))
                            .collect()
                    })
                    .collect();
                count(&mut dying.iter().map(Vec::as_slice), &mut weights);
                for weight in &mut weights {
                    *weight *= whole;
                }
                let mut ages = vec![0u64; pw];
                for p in 0..planes {
                    ages.fill(0);
                    count(&mut ys().map(|y| grid.age_row(y, p)), &mut ages);
                    for (weight, age) in weights.iter_mut().zip(&ages) {
                        *weight -= age << p;
                    }
                }
            }
            for (px, (pixel, &weight)) in line.iter_mut().zip(&weights).enumerate() {
                let across = block.min(view.width - px * block);
                *pixel = match &full {
                    Some(table) if across * tall == cells => table[weight as usize],
                    _ => share(weight, (across * tall) as u64 * whole),
                };
            }
        });
    Frame {
        width: pw,
        height: ph,
        pixels,
        palette: None,
    }
}

/// Adds the live cells of the view's blocks in `rows` (one band of pixels) to `counts`, for
/// any block and any view, wrapping round a torus `width` cells wide: the rows are first added
/// up column by column into bit planes (column c's count is the sum of 2^p times bit c of plane
/// p), and each plane is then counted between the pixels' edges by prefix sums of its words,
/// so that a pixel costs a few operations a plane rather than a count of each of its rows.
fn count_band<'a>(
    rows: impl Iterator<Item = &'a [u64]>,
    width: usize,
    view: &View,
    block: usize,
    counts: &mut [u64],
) {
    let mut planes: Vec<Vec<u64>> = Vec::new();
    for row in rows {
        for (i, &word) in row.iter().enumerate() {
            let mut carry = word;
            let mut p = 0;
            while carry != 0 {
                if p == planes.len() {
                    planes.push(vec![0; row.len()]);
                }
                let bit = &mut planes[p][i];
                (*bit, carry) = (*bit ^ carry, *bit & carry);
                p += 1;
            }
        }
    }
    let mut before = Vec::new();
    for (p, plane) in planes.iter().enumerate() {
        // before[i]: the plane's cells in words 0..i.
        before.clear();
        before.push(0u64);
        for word in plane {
            before.push(before.last().copied().unwrap_or(0) + word.count_ones() as u64);
        }
        let total = before[plane.len()];
        // The plane's cells in columns 0..x of the torus unrolled (x may pass the width).
        let prefix = |x: usize| {
            let (laps, x) = (x / width, x % width);
            let partial = plane[x / WORD_BITS] & ((1u64 << (x % WORD_BITS)) - 1);
            laps as u64 * total + before[x / WORD_BITS] + partial.count_ones() as u64
        };
        let mut left = prefix(view.x);
        for (px, count) in counts.iter_mut().enumerate() {
            let right = prefix(view.x + ((px + 1) * block).min(view.width));
            *count += (right - left) << p;
            left = right;
        }
    }
}

/// Counting aligned blocks of `block` cells (a power of two from 2 to 64) a word at a time: the
/// live cells of each `block`-bit field of a word by SWAR additions, summed over the band's
/// rows while still packed, and only then split into pixels. Fields of 2 and 4 bits are first
/// spread into lanes twice as wide (even and odd fields apart), where the sums of up to
/// `block` rows fit; wider fields hold them as they are (at most 64 in 8 bits).
struct Fields {
    block: usize,
    /// The words of a row the view covers, and each one's mask of the view's columns.
    words: std::ops::Range<usize>,
    masks: Vec<u64>,
    /// The view's first column.
    x: usize,
}

impl Fields {
    fn new(block: usize, view: &View) -> Fields {
        let (from, to) = (view.x, view.x + view.width);
        let words = from / WORD_BITS..to.div_ceil(WORD_BITS);
        let masks = words
            .clone()
            .map(|i| {
                let (start, end) = (i * WORD_BITS, (i + 1) * WORD_BITS);
                let low = from.saturating_sub(start).min(WORD_BITS);
                let high = end.saturating_sub(to).min(WORD_BITS);
                let ones = WORD_BITS - low - high;
                if ones == WORD_BITS {
                    !0
                } else {
                    ((1u64 << ones) - 1) << low
                }
            })
            .collect();
        Fields {
            block,
            words,
            masks,
            x: view.x,
        }
    }

    /// Adds the live cells of the view's blocks in `rows` to `counts` (one a pixel).
    fn count<'a>(&self, rows: impl Iterator<Item = &'a [u64]>, counts: &mut [u64]) {
        const ODD_2: u64 = 0x3333_3333_3333_3333;
        const ODD_4: u64 = 0x0F0F_0F0F_0F0F_0F0F;
        let b = self.block;
        // Per word: the sums of the even fields' lanes and of the odd fields' (or all fields).
        let mut sums = vec![[0u64; 2]; self.words.len()];
        for row in rows {
            for ((sum, &mask), &word) in sums
                .iter_mut()
                .zip(&self.masks)
                .zip(&row[self.words.clone()])
            {
                let v = word & mask;
                let pairs = v - ((v >> 1) & 0x5555_5555_5555_5555);
                match b {
                    2 => {
                        sum[0] += pairs & ODD_2;
                        sum[1] += (pairs >> 2) & ODD_2;
                    }
                    4 => {
                        let nibbles = (pairs & ODD_2) + ((pairs >> 2) & ODD_2);
                        sum[0] += nibbles & ODD_4;
                        sum[1] += (nibbles >> 4) & ODD_4;
                    }
                    64 => sum[0] += v.count_ones() as u64,
                    _ => {
                        let nibbles = (pairs & ODD_2) + ((pairs >> 2) & ODD_2);
                        let mut fields = (nibbles + (nibbles >> 4)) & ODD_4;
                        let mut width = 8;
                        while width < b {
                            let keep = lanes(width);
                            fields = (fields & keep) + ((fields >> width) & keep);
                            width *= 2;
                        }
                        sum[0] += fields;
                    }
                }
            }
        }
        // Field f of word i is pixel (64i + b·f − x) / b: the fields of the view's pixels.
        let per_word = WORD_BITS / b;
        let first = self.x / b;
        for (i, sum) in self.words.clone().zip(&sums) {
            let pixel = i * per_word;
            let f0 = first.saturating_sub(pixel);
            let f1 = per_word.min((first + counts.len()).saturating_sub(pixel));
            if f0 >= f1 {
                continue;
            }
            let out = &mut counts[pixel + f0 - first..pixel + f1 - first];
            match b {
                2 | 4 => {
                    let lane = (1u64 << (2 * b)) - 1;
                    for (f, count) in (f0..f1).zip(out) {
                        *count += (sum[f % 2] >> (2 * b * (f / 2))) & lane;
                    }
                }
                64 => out[0] += sum[0],
                _ => {
                    let lane = (1u64 << b) - 1;
                    for (f, count) in (f0..f1).zip(out) {
                        *count += (sum[0] >> (b * f)) & lane;
                    }
                }
            }
        }
    }
}

/// A word of `width`-bit lanes alternately all ones and all zeros, the lowest ones.
fn lanes(width: usize) -> u64 {
    let lane = (1u64 << width) - 1;
    (0..WORD_BITS / (2 * width)).fold(0, |m, k| m | lane << (2 * width * k))
}

/// What a picture of a cube shows: the live cells along one axis, or one slice across it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Look {
    /// The axis summed along, or cut across.
    pub axis: Axis,
    /// The index along `axis` of the one slice shown; `None` sums every slice.
    pub slice: Option<usize>,
}

impl Look {
    /// The sum along `axis`.
    pub fn along(axis: Axis) -> Look {
        Look { axis, slice: None }
    }

    /// Refuses a slice outside a cube of side `side`.
    pub fn check(&self, side: usize) -> Result<()> {
        match self.slice {
            Some(k) if k >= side => Err(Error::Invalid(format!(
                "slice {k} of a cube of side {side}: slices run from 0 to {}",
                side - 1
            ))),
            _ => Ok(()),
        }
    }
}

/// The live cells of `cube` that `look` shows, one count a (row, column) of the projection,
/// row-major (rows and columns as [`Axis`] says): the sum along the axis, or 0 or 1 for the
/// cells of one slice.
pub fn cube_counts(cube: &Cube, look: Look) -> Result<Vec<u32>> {
    let m = cube.side();
    look.check(m)?;
    let lines = cube.lines();
    let bit = |line: &[u64], z: usize| (line[z / WORD_BITS] >> (z % WORD_BITS) & 1) as u32;
    let mut counts = vec![0u32; m * m];
    for x in 0..cube.planes() {
        if look.axis == Axis::X && look.slice.is_some_and(|k| k != x) {
            continue;
        }
        for y in 0..m {
            if look.axis == Axis::Y && look.slice.is_some_and(|k| k != y) {
                continue;
            }
            let line = lines.row(x * m + y);
            match (look.axis, look.slice) {
                (Axis::Z, None) => counts[x * m + y] = count_range(line, 0, m),
                (Axis::Z, Some(z)) => counts[x * m + y] = bit(line, z),
                (Axis::X | Axis::Y, _) => {
                    let row = if look.axis == Axis::X { y } else { x };
                    for (z, count) in counts[row * m..(row + 1) * m].iter_mut().enumerate() {
                        *count += bit(line, z);
                    }
                }
            }
        }
    }
    Ok(counts)
}

/// `counts` as palette indices relative to the largest (255), so that sparse cubes still show
/// their shape; all 0 where every count is.
pub fn relative(counts: &[u32]) -> Vec<u8> {
    let most = counts.iter().copied().max().unwrap_or(0).max(1);
    counts
        .iter()
        .map(|&c| share(c as u64, most as u64))
        .collect()
}

/// The picture of `view` of a `width`-wide image of palette indices (`image.len() / width`
/// rows, wrapping round both ways), one pixel for each `block` × `block` of its pixels, their
/// mean rounded.
pub fn shrink(image: &[u8], width: usize, view: &View, block: usize) -> Frame {
    let height = image.len() / width;
    let block = block.max(1);
    let (pw, ph) = (view.width.div_ceil(block), view.height.div_ceil(block));
    let mut pixels = vec![0u8; pw * ph];
    let mut sums = vec![0u64; pw];
    for (py, line) in pixels.chunks_exact_mut(pw).enumerate() {
        sums.fill(0);
        let rows = py * block..((py + 1) * block).min(view.height);
        let tall = rows.len() as u64;
        for dy in rows {
            let row = &image[(view.y + dy) % height * width..][..width];
            for dx in 0..view.width {
                sums[dx / block] += row[(view.x + dx) % width] as u64;
            }
        }
        for (px, (pixel, &sum)) in line.iter_mut().zip(&sums).enumerate() {
            let n = block.min(view.width - px * block) as u64 * tall;
            *pixel = ((sum + n / 2) / n) as u8;
        }
    }
    Frame {
        width: pw,
        height: ph,
        pixels,
        palette: None,
    }
}

/// The picture of what `look` shows of `cube`, `scale` pixels an index of the projection (or
/// the default): 255 for the column with the most live cells, the others in proportion (0 for
/// none).
pub fn cube(cube: &Cube, look: Look, scale: Option<u32>) -> Result<Frame> {
    let m = cube.side();
    let cells = relative(&cube_counts(cube, look)?);
    match shape(m, m, scale)? {
        Shape::Scaled(s) => Ok(scaled(m, m, &cells, s)),
        Shape::Blocks(block) => Ok(shrink(&cells, m, &View::whole(m, m), block)),
    }
}

/// The palette as the flat RGB list encoders take.
fn palette_rgb() -> Vec<u8> {
    PALETTE.iter().flatten().copied().collect()
}

/// Writes `frame` as an indexed PNG.
pub fn write_png(out: &mut impl Write, frame: &Frame) -> io::Result<()> {
    let mut encoder = png::Encoder::new(out, frame.width as u32, frame.height as u32);
    encoder.set_color(png::ColorType::Indexed);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_palette(frame.palette.clone().unwrap_or_else(palette_rgb));
    let mut writer = encoder.write_header().map_err(io::Error::other)?;
    writer
        .write_image_data(&frame.pixels)
        .map_err(io::Error::other)?;
    writer.finish().map_err(io::Error::other)
}

/// A GIF animation being written, frame by frame, looping forever.
pub struct Gif<W: Write> {
    encoder: gif::Encoder<W>,
    width: usize,
    height: usize,
    /// Hundredths of a second each frame shows.
    delay: u16,
}

impl<W: Write> Gif<W> {
    /// An animation of `width` × `height` frames, each shown `delay` hundredths of a second.
    pub fn new(out: W, width: usize, height: usize, delay: u16) -> io::Result<Gif<W>> {
        let too_big = |side: usize| u16::try_from(side).map_err(|_| io::Error::other("too large"));
        let mut encoder = gif::Encoder::new(out, too_big(width)?, too_big(height)?, &palette_rgb())
            .map_err(io::Error::other)?;
        encoder
            .set_repeat(gif::Repeat::Infinite)
            .map_err(io::Error::other)?;
        Ok(Gif {
            encoder,
            width,
            height,
            delay,
        })
    }

    /// Appends `frame`, which must have the animation's size.
    pub fn add(&mut self, frame: &Frame) -> io::Result<()> {
        assert_eq!(
            (frame.width, frame.height),
            (self.width, self.height),
            "every frame of an animation has its size"
        );
        let mut gif_frame = gif::Frame {
            width: self.width as u16,
            height: self.height as u16,
            delay: self.delay,
            buffer: std::borrow::Cow::Borrowed(&frame.pixels),
            palette: frame.palette.clone(),
            ..gif::Frame::default()
        };
        gif_frame.make_lzw_pre_encoded();
        self.encoder
            .write_lzw_pre_encoded_frame(&gif_frame)
            .map_err(io::Error::other)
    }

    /// Ends the animation and hands back the writer.
    pub fn finish(self) -> io::Result<W> {
        self.encoder.into_inner().map_err(io::Error::other)
    }
}

/// The generations an animation of a run of `generations` takes frames at: every `every`th
/// (and always the last), or `frames` spread evenly from 0 to the last, both included; by
/// default 100 frames, or every generation of a run shorter than 100.
pub fn frame_generations(
    generations: u64,
    every: Option<u64>,
    frames: Option<u64>,
) -> Result<Vec<u64>> {
    let g = generations;
    let mut at: Vec<u64> = match (every, frames) {
        (Some(_), Some(_)) => {
            return Err(Error::Invalid(
                "--every and --frames both choose the frames; give one".into(),
            ))
        }
        (Some(0), _) => return Err(Error::Invalid("--every is at least 1".into())),
        (Some(k), None) => (0..=g).step_by(k.min(usize::MAX as u64) as usize).collect(),
        (None, Some(0 | 1)) => {
            return Err(Error::Invalid(
                "--frames is at least 2 (the first generation and the last)".into(),
            ))
        }
        (None, Some(n)) => (0..n).map(|i| (i * g + (n - 1) / 2) / (n - 1)).collect(),
        (None, None) if g < 100 => (0..=g).collect(),
        (None, None) => (0..100).map(|i| (i * g + 49) / 99).collect(),
    };
    if at.last() != Some(&g) {
        at.push(g);
    }
    at.dedup();
    Ok(at)
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn the_palette_runs_from_the_first_anchor_to_the_last() {
        assert_eq!(PALETTE[0], ANCHORS[0]);
        assert_eq!(PALETTE[255], ANCHORS[8]);
        // Brighter as the share grows (the map's lightness rises monotonically).
        let light = |c: [u8; 3]| 299 * c[0] as u32 + 587 * c[1] as u32 + 114 * c[2] as u32;
        assert!(PALETTE.windows(2).all(|w| light(w[1]) + 300 >= light(w[0])));
    }

    #[test]
    fn dying_cells_fade_towards_dead() {
        let mut g = Grid::with_states(4, 1, 5).unwrap();
        for (x, state) in [1, 2, 4, 0].into_iter().enumerate() {
            g.set_state(x, 0, state);
        }
        let frame = grid(&g, &View::whole(4, 1), Some(1), None).unwrap();
        assert_eq!(frame.pixels, [255, 191, 64, 0]);
    }

    #[test]
    fn small_views_are_scaled_up_and_wrap() {
        let mut g = Grid::new(8, 4).unwrap();
        g.set(7, 3, true);
        let f = grid(&g, &View::whole(8, 4), None, None).unwrap();
        assert_eq!((f.width, f.height), (512, 256)); // 64 pixels a cell
        assert_eq!(f.pixels[255 * 512 + 511], 255);
        assert_eq!(f.pixels[0], 0);
        // A 2×2 view across the corner: the live cell first.
        let corner = View {
            x: 7,
            y: 3,
            width: 2,
            height: 2,
        };
        let f = grid(&g, &corner, Some(1), None).unwrap();
        assert_eq!(f.pixels, vec![255, 0, 0, 0]);
        assert!(grid(&g, &View::whole(8, 4), Some(1024), None).is_err());
    }

    #[test]
    fn large_views_show_shares_of_blocks() {
        // 8193 cells wide: blocks of 3×3, 2731 pixels wide; the first block has 3 of 9 alive.
        let mut big = Grid::new(8193, 4).unwrap();
        for x in 0..3 {
            big.set(x, 0, true);
        }
        let f = grid(&big, &View::whole(8193, 4), None, None).unwrap();
        assert_eq!((f.width, f.height), (2731, 2));
        assert_eq!(f.pixels[0], 85);
        assert_eq!(f.pixels[1], 0);
    }

    #[test]
    fn aligned_blocks_count_as_the_general_path_does() {
        let g = crate::seed::density_soup(300, 70, 0.4, 5).unwrap();
        for (x, width, block) in [
            (0, 300, 4),
            (64, 200, 8),
            (32, 100, 32),
            (0, 300, 64),
            (8, 37, 2),
            (4, 250, 4),
            (2, 297, 2),
            (16, 283, 16),
            (24, 59, 8),
            (0, 128, 64),
            (32, 268, 32),
        ] {
            let view = View {
                x,
                y: 3,
                width,
                height: 60,
            };
            let fast = blocks(&g, &view, block);
            // The same cells through the wrapping path: a view starting one torus further on.
            let wrapped = View { x: x + 300, ..view };
            assert_eq!(
                fast,
                blocks(&g, &wrapped, block),
                "{view:?} in blocks of {block}"
            );
        }
    }

    /// Checks each pixel of `blocks(g, view, block)` against the mean of its cells' indices,
    /// counted cell by cell: a cell in state s of C weighs C − s, a dead one 0.
    fn assert_blocks_are_means(g: &Grid, view: &View, block: usize) {
        let (w, h, states) = (g.width(), g.height(), g.states());
        let weight = |x: usize, y: usize| match g.state(x, y) {
            0 => 0,
            s => u64::from(states - s),
        };
        let f = blocks(g, view, block);
        for (p, &pixel) in f.pixels.iter().enumerate() {
            let (px, py) = (p % f.width, p / f.width);
            let (xs, ys) = (
                px * block..((px + 1) * block).min(view.width),
                py * block..((py + 1) * block).min(view.height),
            );
            let cells = (xs.len() * ys.len()) as u64;
            let sum: u64 = ys
                .flat_map(|dy| xs.clone().map(move |dx| (dx, dy)))
                .map(|(dx, dy)| weight((view.x + dx) % w, (view.y + dy) % h))
                .sum();
            assert_eq!(
                pixel,
                share(sum, cells * u64::from(states - 1)),
                "{states} states, {view:?}, blocks of {block}, ({px}, {py})"
            );
        }
    }

    #[test]
    fn blocks_count_every_cell_of_views_that_wrap() {
        let g = crate::seed::density_soup(131, 45, 0.4, 9).unwrap();
        for (i, block) in [1, 2, 3, 5, 7, 10, 64, 70].into_iter().enumerate() {
            let view = View {
                x: 17 * i + 90,
                y: 40,
                width: 131 + 29 * i,
                height: 30 + 11 * i,
            };
            assert_blocks_are_means(&g, &view, block);
        }
    }

    #[test]
    fn blocks_of_dying_cells_show_the_mean_of_their_fades() {
        for (states, seed) in [(3, 1), (4, 2), (9, 3), (256, 4)] {
            let g = crate::seed::states_soup(131, 45, states, seed).unwrap();
            for (i, block) in [1, 2, 3, 4, 8, 64, 70].into_iter().enumerate() {
                // Aligned views (counted a word at a time) and views that wrap.
                for x in [0, 17 * i + 90] {
                    let view = View {
                        x,
                        y: 40,
                        width: 131 - x % 131 + 29 * i,
                        height: 30 + 11 * i,
                    };
                    assert_blocks_are_means(&g, &view, block);
                }
            }
            // One pixel a cell: the same index as a still picture's.
            let view = View::whole(131, 45);
            let one = blocks(&g, &view, 1);
            assert_eq!(
                one,
                grid(&g, &view, Some(1), None).unwrap(),
                "{states} states"
            );
            assert!(one.pixels.iter().any(|&p| p != 0 && p != 255));
        }
    }

    #[test]
    fn cubes_project_along_each_axis() {
        let mut c = Cube::new(4).unwrap();
        c.set(1, 2, 3, true);
        c.set(1, 2, 0, true);
        let at = |f: &Frame, col: usize, row: usize| f.pixels[row * f.width + col];
        let x = cube(&c, Look::along(Axis::X), Some(1)).unwrap();
        assert_eq!((at(&x, 3, 2), at(&x, 0, 2), at(&x, 1, 2)), (255, 255, 0));
        let z = cube(&c, Look::along(Axis::Z), Some(1)).unwrap();
        assert_eq!(at(&z, 2, 1), 255); // both cells along one z line: the fullest
        let y = cube(&c, Look::along(Axis::Y), Some(1)).unwrap();
        assert_eq!(at(&y, 3, 1), 255);
        // Three cells on one line along x, one on another: 255 and 85.
        c.set(2, 2, 3, true);
        c.set(3, 2, 3, true);
        let x = cube(&c, Look::along(Axis::X), Some(1)).unwrap();
        assert_eq!((at(&x, 3, 2), at(&x, 0, 2)), (255, 85));
        assert_eq!(x.pixels.iter().filter(|&&p| p > 0).count(), 2);
    }

    #[test]
    fn slices_show_the_cells_of_one_plane() {
        let mut c = Cube::new(5).unwrap();
        c.set(1, 2, 3, true);
        c.set(4, 2, 3, true);
        let counts = |axis, k| {
            cube_counts(
                &c,
                Look {
                    axis,
                    slice: Some(k),
                },
            )
            .unwrap()
        };
        // Slice x = 1: rows y, columns z.
        assert_eq!(counts(Axis::X, 1)[2 * 5 + 3], 1);
        assert_eq!(counts(Axis::X, 1).iter().sum::<u32>(), 1);
        assert_eq!(counts(Axis::X, 2).iter().sum::<u32>(), 0);
        // Slice y = 2: rows x, columns z: both cells.
        let y = counts(Axis::Y, 2);
        assert_eq!((y[5 + 3], y[4 * 5 + 3], y.iter().sum::<u32>()), (1, 1, 2));
        // Slice z = 3: rows x, columns y.
        let z = counts(Axis::Z, 3);
        assert_eq!((z[5 + 2], z[4 * 5 + 2], z.iter().sum::<u32>()), (1, 1, 2));
        assert_eq!(counts(Axis::Z, 0).iter().sum::<u32>(), 0);
        // The sums of the slices are the projection.
        for axis in [Axis::X, Axis::Y, Axis::Z] {
            let mut sum = vec![0; 25];
            for k in 0..5 {
                sum.iter_mut()
                    .zip(counts(axis, k))
                    .for_each(|(s, n)| *s += n);
            }
            assert_eq!(sum, cube_counts(&c, Look::along(axis)).unwrap());
        }
        assert!(cube_counts(
            &c,
            Look {
                axis: Axis::X,
                slice: Some(5)
            }
        )
        .is_err());
    }

    #[test]
    fn shrinking_averages_blocks_and_wraps() {
        // A 3×2 image; blocks of 2 over a view that wraps across the right edge.
        let image = [0, 10, 20, 30, 40, 50];
        let f = shrink(
            &image,
            3,
            &View {
                x: 2,
                y: 1,
                width: 3,
                height: 2,
            },
            2,
        );
        assert_eq!((f.width, f.height), (2, 1));
        // Pixel 0: columns 2, 0 of rows 1, 0: 50 30 20 0 → 25; pixel 1: column 1: 40 10 → 25.
        assert_eq!(f.pixels, [25, 25]);
        let same = shrink(&image, 3, &View::whole(3, 2), 1);
        assert_eq!(same.pixels, image);
    }

    #[test]
    fn frames_are_chosen_as_asked() {
        assert_eq!(frame_generations(10, Some(4), None).unwrap(), [0, 4, 8, 10]);
        assert_eq!(frame_generations(10, None, Some(3)).unwrap(), [0, 5, 10]);
        assert_eq!(
            frame_generations(5, None, None).unwrap(),
            [0, 1, 2, 3, 4, 5]
        );
        let hundred = frame_generations(1000, None, None).unwrap();
        assert_eq!((hundred.len(), hundred[0], hundred[99]), (100, 0, 1000));
        assert!(frame_generations(10, Some(2), Some(3)).is_err());
        assert!(frame_generations(10, None, Some(1)).is_err());
        assert_eq!(frame_generations(0, None, None).unwrap(), [0]);
    }

    #[test]
    fn views_parse() {
        assert_eq!(
            View::parse("1, 2,30,40").unwrap(),
            View {
                x: 1,
                y: 2,
                width: 30,
                height: 40
            }
        );
        assert!(View::parse("1,2,0,4").is_err());
        assert!(View::parse("1,2,3").is_err());
    }
}
