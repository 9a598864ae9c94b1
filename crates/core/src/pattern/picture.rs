//! PNG pictures of a grid: one grey pixel per cell (live white, dead black) up to
//! [`MAX_PIXELS`] per side; a larger grid is shrunk by a whole factor so that it fits, each pixel
//! then the share of live cells in its block as a grey level.

use std::io::{self, Write};

use crate::grid::{Grid, WORD_BITS};

/// The largest picture side.
pub const MAX_PIXELS: usize = 4096;

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

pub(super) fn write(out: &mut impl Write, grid: &Grid) -> io::Result<()> {
    let (w, h) = (grid.width(), grid.height());
    let block = w.max(h).div_ceil(MAX_PIXELS);
    let (pw, ph) = (w.div_ceil(block), h.div_ceil(block));
    let mut encoder = png::Encoder::new(out, pw as u32, ph as u32);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(io::Error::other)?;
    let mut pixels = vec![0u8; pw * ph];
    let mut counts = vec![0u32; pw];
    for (py, line) in pixels.chunks_exact_mut(pw).enumerate() {
        counts.fill(0);
        let rows = py * block..((py + 1) * block).min(h);
        let height = rows.len();
        for y in rows {
            let row = grid.row(y);
            for (px, count) in counts.iter_mut().enumerate() {
                *count += count_range(row, px * block, ((px + 1) * block).min(w));
            }
        }
        for (px, (pixel, &count)) in line.iter_mut().zip(&counts).enumerate() {
            let cells = (((px + 1) * block).min(w) - px * block) * height;
            *pixel = ((count as usize * 255 + cells / 2) / cells) as u8;
        }
    }
    writer.write_image_data(&pixels).map_err(io::Error::other)?;
    writer.finish().map_err(io::Error::other)
}
