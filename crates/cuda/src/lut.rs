//! `cuda-lut` and `cuda-lut6`: 32 cells per 32-bit word and a lookup table.
//!
//! - `cuda-lut`: a 4-wide, 3-tall window of cells (x−1 … x+2 on the rows above, at and below)
//!   indexes a 4096-entry table whose bits 0 and 1 are the next states of cells x and x+1:
//!   sixteen lookups make a word. Each block copies the table into shared memory (4 KiB).
//! - `cuda-lut6`: a 6 × 3 window (x−1 … x+4) indexes a 2¹⁸-entry table of the next states of
//!   cells x … x+3, two 4-bit entries per byte: eight lookups make a word, from 128 KiB of
//!   shared memory, so one block per SM, each looping over many rows.
//!
//! The host builds the tables for the rule.
//!
//! Layout: rows of `ceil(W/32)` words, cell x at bit x % 32 of word x / 32, padding bits zero.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, PushKernelArg};
use gol_core::{EngineId, Grid, Rule};

use crate::device::Gpu;
use crate::engine::{launch_2d, words32 as words, Backend};
use crate::error::Result;
use crate::kernels::{self, KernelSpec, Tiling};
use crate::pinned::copy_to_host;
use crate::source;

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

/// The 6 × 3 table for `rule`: entry `a | m << 6 | b << 12` (6-bit windows of the rows above,
/// at and below, bit 0 the leftmost cell x−1) holds the next states of the window's four middle
/// cells; entry e is the low (e even) or high nibble of byte e / 2.
pub fn table6(rule: Rule) -> Vec<u8> {
    let entry = |index: u32| {
        let rows = [index & 63, (index >> 6) & 63, (index >> 12) & 63];
        (0..4).fold(0u8, |entry, cell| {
            // The cell sits at window bit 1 + cell; its neighbours at bits cell ..= cell + 2.
            let around: u32 = rows.iter().map(|r| (r >> cell & 7).count_ones()).sum();
            let alive = rows[1] >> (1 + cell) & 1 == 1;
            entry | (rule.next(alive, around - alive as u32) as u8) << cell
        })
    };
    (0..1u32 << 17)
        .map(|byte: u32| entry(2 * byte) | entry(2 * byte + 1) << 4)
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
    /// The 6 × 3 window (`cuda-lut6`) rather than 4 × 3.
    wide: bool,
    spec: &'static KernelSpec,
    sms: u32,
}

/// lut.cu, which holds both lookup-table kernels.
fn lut_source(rule: Rule) -> String {
    source::with_rule(rule, &[source::LUT])
}

/// The lookup-table engines' kernels: cuda-lut's 4×3 windows (a table of 4096 entries built in
/// each block's shared memory), cuda-lut6's 6×3 windows (2¹⁸ entries, 128 KiB of it).
pub const KERNELS: [KernelSpec; 2] = [
    KernelSpec {
        engine: EngineId::CudaLut,
        build_source: lut_source,
        function: "update_cells_lut",
        small_function: None,
        default_block: (32, 8),
        tiling: Tiling::Plain,
        fixed_block: false,
        shared_table: 0,
    },
    KernelSpec {
        engine: EngineId::CudaLut6,
        build_source: lut_source,
        function: "update_cells_lut6",
        small_function: None,
        default_block: (32, 32),
        tiling: Tiling::Plain,
        fixed_block: false,
        shared_table: 1 << 17,
    },
];

impl Backend for LutCells {
    type World = Grid;

    fn spec(engine: EngineId) -> &'static KernelSpec {
        kernels::find(KERNELS.iter(), engine)
    }

    fn prepare(
        gpu: &Gpu,
        stream: &Arc<CudaStream>,
        engine: EngineId,
        grid: &Grid,
        rule: Rule,
    ) -> Result<Self> {
        let (width, height) = (grid.width(), grid.height());
        let len = words(width) * height;
        let wide = engine == EngineId::CudaLut6;
        let table = if wide { table6(rule) } else { table(rule) };
        gpu.check_memory(
            8 * len as u64 + table.len() as u64,
            &format!("a {width}x{height} grid on {engine}"),
        )?;
        let spec = Self::spec(engine);
        let module = gpu.module(&spec.source(rule))?;
        gpu.check_shared(spec.shared_table as usize, engine.name())?;
        let update = spec.load(&module)?;
        Ok(LutCells {
            width,
            height,
            cells: stream.alloc_zeros::<u32>(len)?,
            next: stream.alloc_zeros::<u32>(len)?,
            table: stream.clone_htod(&table)?,
            update,
            wide,
            spec,
            sms: gpu.info.multiprocessors as u32,
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
        let cfg = if self.wide {
            // One block per SM (the table fills its shared memory), each looping over rows.
            let mut cfg = launch_2d(nw, self.height, block, block, self.spec.shared_table);
            cfg.grid_dim.1 = cfg.grid_dim.1.min((self.sms / cfg.grid_dim.0).max(1));
            cfg
        } else {
            launch_2d(nw, self.height, block, block, 0)
        };
        // SAFETY: update_cells_lut and update_cells_lut6 take (const unsigned int*, unsigned
        // int*, const table*, int w, int h, int nw); the buffers hold nw*h words and the whole
        // table (4096 bytes, or 2^17 bytes read as 16-byte vectors from an allocation aligned
        // far beyond that, into as much dynamic shared memory).
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
        let packed = copy_to_host(stream, &self.cells)?;
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

    #[test]
    fn wide_table_agrees_with_the_narrow_one() {
        // Cells 0 and 1 of a 6-wide window see what a 4-wide window of its first 4 columns
        // sees, cells 2 and 3 what the 4-wide window of columns 2..6 sees.
        for rule in ["B3/S23", "B36/S23", "B0/S8", "B2/S"] {
            let rule = Rule::parse(rule).unwrap();
            let (narrow, wide) = (table(rule), table6(rule));
            assert_eq!(wide.len(), 1 << 17);
            for index in (0..1u32 << 18).step_by(7) {
                let entry = wide[index as usize / 2] >> (4 * (index & 1)) & 15;
                let rows = [index & 63, (index >> 6) & 63, (index >> 12) & 63];
                let four = |shift: u32| {
                    let r = rows.map(|r| (r >> shift) & 15);
                    narrow[(r[0] | r[1] << 4 | r[2] << 8) as usize]
                };
                assert_eq!(entry, four(0) | four(2) << 2, "{rule} {index:#x}");
            }
        }
    }
}
