//! `cuda-lut`: 32 cells per 32-bit word and a lookup table. A 4-wide, 3-tall window of cells
//! (x−1 … x+2 on the rows above, at and below) indexes a 4096-entry table whose bits 0 and 1 are
//! the next states of cells x and x+1: sixteen lookups make a word. The host builds the table
//! for the rule; each block copies it into shared memory (4 KiB).
//!
//! Layout: rows of `ceil(W/32)` words, cell x at bit x % 32 of word x / 32, padding bits zero.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, PushKernelArg};
use gol_core::{Grid, Rule};

use crate::device::Gpu;
use crate::engine::{launch_2d, words32 as words, Backend};
use crate::error::Result;
use crate::kernels;

/// The table for `rule`: entry `a | m << 4 | b << 8` (4-bit windows of the rows above, at and
/// below, bit 0 the leftmost cell x−1) holds the next states of the window's two middle cells.
pub fn table(rule: Rule) -> Vec<u8> {
    (0..4096u32)
        .map(|index| {
            let rows = [index & 15, (index >> 4) & 15, (index >> 8) & 15];
            let mut entry = 0u8;
            for cell in 0..2 {
                // The cell sits at window bit 1 + cell; its neighbours at bits cell ..= cell + 2.
                let around: u32 = rows.iter().map(|r| (r >> cell & 7).count_ones()).sum();
                let alive = rows[1] >> (1 + cell) & 1 == 1;
                let neighbours = around - alive as u32;
                entry |= (rule.next(alive, neighbours) as u8) << cell;
            }
            entry
        })
        .collect()
}

/// Packed words on the device and the table.
pub struct LutCells {
    width: usize,
    height: usize,
    cells: CudaSlice<u32>,
    next: CudaSlice<u32>,
    table: CudaSlice<u8>,
    update: CudaFunction,
}

impl Backend for LutCells {
    type World = Grid;

    fn prepare(
        gpu: &Gpu,
        stream: &Arc<CudaStream>,
        engine: &'static str,
        grid: &Grid,
        rule: Rule,
    ) -> Result<Self> {
        let (width, height) = (grid.width(), grid.height());
        let len = words(width) * height;
        gpu.check_memory(
            8 * len as u64 + 4096,
            &format!("a {width}x{height} grid on {engine}"),
        )?;
        let spec = kernels::spec(engine);
        let module = gpu.module(&spec.source(rule))?;
        Ok(LutCells {
            width,
            height,
            cells: stream.alloc_zeros::<u32>(len)?,
            next: stream.alloc_zeros::<u32>(len)?,
            table: stream.clone_htod(&table(rule))?,
            update: module.load_function(spec.function)?,
        })
    }

    fn upload(&mut self, stream: &Arc<CudaStream>, grid: &Grid) -> Result<()> {
        let nw = words(self.width);
        let mut packed = vec![0u32; nw * self.height];
        for (y, row) in packed.chunks_exact_mut(nw).enumerate() {
            for (i, word) in row.iter_mut().enumerate() {
                *word = (grid.row(y)[i / 2] >> (32 * (i % 2))) as u32;
            }
        }
        stream.memcpy_htod(&packed, &mut self.cells)?;
        stream.synchronize()?;
        Ok(())
    }

    fn generation(&mut self, stream: &Arc<CudaStream>, block: (u32, u32)) -> Result<()> {
        let nw = words(self.width);
        let (w, h, n) = (self.width as i32, self.height as i32, nw as i32);
        let cfg = launch_2d(nw, self.height, block, block, 0);
        // SAFETY: update_cells_lut takes (const unsigned int*, unsigned int*, const unsigned
        // char*, int w, int h, int nw); the buffers hold nw*h words and 4096 table entries.
        unsafe {
            stream
                .launch_builder(&self.update)
                .arg(&self.cells)
                .arg(&mut self.next)
                .arg(&self.table)
                .arg(&w)
                .arg(&h)
                .arg(&n)
                .launch(cfg)?;
        }
        std::mem::swap(&mut self.cells, &mut self.next);
        Ok(())
    }

    fn download(&self, stream: &Arc<CudaStream>) -> Result<Grid> {
        let nw = words(self.width);
        let packed = stream.clone_dtoh(&self.cells)?;
        let mut grid = Grid::new(self.width, self.height)?;
        for (y, row) in packed.chunks_exact(nw).enumerate() {
            for (i, &word) in row.iter().enumerate() {
                grid.row_mut(y)[i / 2] |= (word as u64) << (32 * (i % 2));
            }
        }
        Ok(grid)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn table_matches_the_rule() {
        let t = table(Rule::LIFE);
        // A vertical blinker through window column 1: cell 0 (column 1) has 2 neighbours and
        // lives; cell 1 (column 2) has 3 and is born.
        let column1 = 0b0010;
        assert_eq!(t[(column1 | column1 << 4 | column1 << 8) as usize], 0b11);
        // Nothing alive: nothing born (B0 is not in Life).
        assert_eq!(t[0], 0);
        let b0 = table(Rule::parse("B0/S").unwrap());
        assert_eq!(b0[0], 0b11);
    }
}
