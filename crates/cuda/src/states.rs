//! `cuda-states`: byte cells of up to 256 states under rule tables and Larger than Life rules
//! (`kernels/states.cu` describes the kernels). One module serves every rule: the rule travels
//! as kernel arguments and tables, so a new rule starts at once.
//!
//! - Rule tables: the flat lookup ([`gol_core::rule::RuleTable::flat`]) packed 1, 2, 4 or 8
//!   bits an entry, in shared memory where it fits [`MOST_SHARED`], else read through the
//!   read-only cache; tables too large for a flat lookup walk their tree per cell.
//! - Larger than Life: the square by row sums and running column sums (O(1) a cell); the
//!   diamond and the disc by row prefix sums (O(r) a cell).

use std::sync::Arc;

use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg,
};
use gol_core::rule::larger::Shape;
use gol_core::rule::Topology;
use gol_core::{EngineId, Grid, Rule};

use crate::device::Gpu;
use crate::engine::{Backend, MAX_GRID_Y};
use crate::error::Result;
use crate::kernels::{self, KernelSpec, Tiling};
use crate::pinned::copy_to_host;
use crate::source;

/// The most bytes of packed lookup a block copies into its shared memory (two blocks an SM
/// still fit on an H100).
pub const MOST_SHARED: usize = 96 << 10;

/// Threads a block.
const BLOCK: u32 = 256;

/// Threads a block of `table_shared`: two blocks of 1024 fill an SM's 2048 threads with up to
/// [`MOST_SHARED`] of lookup each (with 256, a 64 KiB lookup let three blocks, 37% of the
/// threads, onto an SM).
const TABLE_BLOCK: u32 = 1024;

/// Columns of a row one block of `ltl_rows` sums at a time.
const SEGMENT: i32 = 2048;

/// The one kernel description of cuda-states (its kernels take no `--block`).
pub const KERNELS: [KernelSpec; 1] = [KernelSpec {
    engine: EngineId::CudaStates,
    build_source: |_| source::STATES.to_string(),
    function: "table_global",
    small_function: None,
    default_block: (BLOCK, 1),
    tiling: Tiling::Plain,
    fixed_block: true,
    shared_table: 0,
}];

/// The weights of the nine cells of the neighbourhood in a flat lookup's index (row-major).
#[repr(C)]
#[derive(Clone, Copy)]
struct Weights([i32; 9]);

// SAFETY: a plain `#[repr(C)]` array of `int`, as the kernels' `struct Weights` declares it.
unsafe impl DeviceRepr for Weights {}

/// A Larger than Life rule as the kernels' `struct Larger` takes it.
#[repr(C)]
#[derive(Clone, Copy)]
struct LargerArgs {
    r: i32,
    middle: i32,
    states: i32,
    birth_low: u32,
    birth_high: u32,
    survive_low: u32,
    survive_high: u32,
}

// SAFETY: `#[repr(C)]` fields in the order and of the types of the kernels' `struct Larger`.
unsafe impl DeviceRepr for LargerArgs {}

enum Work {
    Flat {
        function: CudaFunction,
        lookup: CudaSlice<u32>,
        words: i32,
        weights: Weights,
        bits: i32,
        shared: u32,
        /// Threads a block.
        block: u32,
        /// Blocks that fill the GPU once.
        blocks: u32,
    },
    Tree {
        function: CudaFunction,
        nodes: CudaSlice<u32>,
        root: u32,
        eight: i32,
    },
    Square {
        /// ltl_rows8 or ltl_rows, as the row sums are bytes or not.
        rows: CudaFunction,
        /// ltl_square4_8 or ltl_square4 where the width is a multiple of four, else
        /// ltl_square8 or ltl_square.
        square: CudaFunction,
        sums: RowSums,
        rule: LargerArgs,
    },
    Shaped {
        prefix: CudaFunction,
        shaped: CudaFunction,
        sums: CudaSlice<u32>,
        reach: CudaSlice<i32>,
        rule: LargerArgs,
    },
}

/// Each row's sums of the 2r + 1 live cells centred on each column: bytes up to range 127,
/// halving their traffic, else 16-bit words.
enum RowSums {
    Bytes(CudaSlice<u8>),
    Words(CudaSlice<u16>),
}

/// Byte cells on the device and the rule's kernels and tables.
pub struct StateCells {
    width: usize,
    height: usize,
    wrap: i32,
    states: u32,
    cells: CudaSlice<u8>,
    next: CudaSlice<u8>,
    work: Work,
    /// Blocks of a grid-stride launch that fill the GPU.
    fill: u32,
}

/// A flat lookup's entries packed `bits` (1, 2, 4 or 8) to an entry into 32-bit words.
fn pack(next: &[u8], states: u32) -> (Vec<u32>, u32) {
    let need = 32 - (states - 1).max(1).leading_zeros();
    let bits = need.next_power_of_two();
    let per_word = (32 / bits) as usize;
    let words = next
        .chunks(per_word)
        .map(|entries| {
            entries
                .iter()
                .enumerate()
                .fold(0u32, |word, (i, &e)| word | (e as u32) << (i as u32 * bits))
        })
        .collect();
    (words, bits)
}

impl Backend for StateCells {
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
        let len = width * height;
        let module = gpu.module(&Self::spec(engine).source(rule))?;
        let sms = gpu.info.multiprocessors as u32;
        let fill = sms * (gpu.info.max_threads_per_multiprocessor as u32 / BLOCK);
        let what = format!("a {width}x{height} grid on {engine}");
        let larger_args = |larger: gol_core::rule::Larger| LargerArgs {
            r: larger.range as i32,
            middle: larger.middle as i32,
            states: rule.states() as i32,
            birth_low: larger.birth.0,
            birth_high: larger.birth.1,
            survive_low: larger.survive.0,
            survive_high: larger.survive.1,
        };
        let work = match (rule.rule_table(), rule.larger()) {
            (Some(table), _) => match table.flat(gol_core::cpu::MOST_FLAT) {
                Some(flat) => {
                    let (words, bits) = pack(&flat.next, table.states());
                    let bytes = 4 * words.len();
                    gpu.check_memory(2 * len as u64 + bytes as u64, &what)?;
                    let mut weights = [0i32; 9];
                    for &((row, column), weight) in &flat.cells {
                        weights[3 * row + column] = weight as i32;
                    }
                    let in_shared = bytes <= MOST_SHARED;
                    let function = module.load_function(if in_shared {
                        "table_shared"
                    } else {
                        "table_global"
                    })?;
                    let shared = if in_shared { bytes as u32 } else { 0 };
                    if shared > 48 << 10 {
                        function.set_attribute(
                            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            shared as i32,
                        )?;
                    }
                    let block = if in_shared { TABLE_BLOCK } else { BLOCK };
                    let per_sm = function
                        .occupancy_max_active_blocks_per_multiprocessor(
                            block,
                            shared as usize,
                            None,
                        )?
                        .max(1);
                    Work::Flat {
                        function,
                        lookup: stream.clone_htod(&words)?,
                        words: words.len() as i32,
                        weights: Weights(weights),
                        bits: bits as i32,
                        shared,
                        block,
                        blocks: sms * per_sm,
                    }
                }
                None => {
                    let (nodes, root, eight) = table
                        .tree()
                        .expect("check_engine refuses tables without a tree on cuda-states");
                    gpu.check_memory(2 * len as u64 + 4 * nodes.len() as u64, &what)?;
                    Work::Tree {
                        function: module.load_function("table_tree")?,
                        nodes: stream.clone_htod(nodes)?,
                        root,
                        eight: eight as i32,
                    }
                }
            },
            (None, Some(larger)) if larger.shape == Shape::Moore => {
                gpu.check_memory(4 * len as u64, &what)?;
                let bytes = 2 * larger.range < 255;
                let (rows, square) = match (bytes, width % 4 == 0) {
                    (true, true) => ("ltl_rows8", "ltl_square4_8"),
                    (true, false) => ("ltl_rows8", "ltl_square8"),
                    (false, true) => ("ltl_rows", "ltl_square4"),
                    (false, false) => ("ltl_rows", "ltl_square"),
                };
                Work::Square {
                    rows: module.load_function(rows)?,
                    square: module.load_function(square)?,
                    sums: match bytes {
                        true => RowSums::Bytes(stream.alloc_zeros::<u8>(len)?),
                        false => RowSums::Words(stream.alloc_zeros::<u16>(len)?),
                    },
                    rule: larger_args(larger),
                }
            }
            (None, Some(larger)) => {
                let r = larger.range as usize;
                let span = (width + 2 * r + 1) * height;
                gpu.check_memory(2 * len as u64 + 4 * span as u64, &what)?;
                let reach: Vec<i32> = (0..=larger.range)
                    .map(|dy| larger.reach(dy) as i32)
                    .collect();
                Work::Shaped {
                    prefix: module.load_function("ltl_prefix")?,
                    shaped: module.load_function("ltl_shaped")?,
                    sums: stream.alloc_zeros::<u32>(span)?,
                    reach: stream.clone_htod(&reach)?,
                    rule: larger_args(larger),
                }
            }
            (None, None) => unreachable!("check_engine refuses other rules on cuda-states"),
        };
        Ok(StateCells {
            width,
            height,
            wrap: (rule.topology() == Topology::Torus) as i32,
            states: rule.states(),
            cells: stream.alloc_zeros::<u8>(len)?,
            next: stream.alloc_zeros::<u8>(len)?,
            work,
            fill,
        })
    }

    fn upload(&mut self, stream: &Arc<CudaStream>, grid: &Grid) -> Result<()> {
        let mut bytes = grid.to_bytes_in(self.width, 0, self.cells.len());
        grid.add_ages(&mut bytes, self.width, 0);
        stream.memcpy_htod(&bytes, &mut self.cells)?;
        stream.synchronize()?;
        Ok(())
    }

    fn generation(&mut self, stream: &Arc<CudaStream>, _block: (u32, u32)) -> Result<()> {
        let (w, h, wrap) = (self.width as i32, self.height as i32, self.wrap);
        let cells = self.width as u64 * self.height as u64;
        let line = |blocks: u64| LaunchConfig {
            grid_dim: (blocks.clamp(1, i32::MAX as u64) as u32, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let spread = (cells.div_ceil(BLOCK as u64)).min(self.fill as u64 * 8);
        match &self.work {
            Work::Flat {
                function,
                lookup,
                words,
                weights,
                bits,
                shared,
                block,
                blocks,
            } => {
                // Blocks along x cover a row's quads of four cells, along y bands of rows: as
                // many bands as fill the GPU twice (each band loads two rows more than it
                // updates, so not thinner than 16 rows where the grid has them).
                let across = (self.width as u32).div_ceil(4).div_ceil(*block);
                let down = (2 * *blocks)
                    .div_ceil(across)
                    .min((self.height as u32).div_ceil(16))
                    .clamp(1, (self.height as u32).min(MAX_GRID_Y));
                let cfg = LaunchConfig {
                    grid_dim: (across, down, 1),
                    block_dim: (*block, 1, 1),
                    shared_mem_bytes: *shared,
                };
                // SAFETY: table_shared/table_global take (const uchar* cells, uchar* next,
                // const uint* lookup, int words, Weights, int bits, int w, int h, int wrap)
                // (table_shared with `words` words of shared memory); the buffers hold w·h
                // bytes and `words` words, every index < states^cells.
                unsafe {
                    stream
                        .launch_builder(function)
                        .arg(&self.cells)
                        .arg(&mut self.next)
                        .arg(lookup)
                        .arg(words)
                        .arg(weights)
                        .arg(bits)
                        .arg(&w)
                        .arg(&h)
                        .arg(&wrap)
                        .launch(cfg)?;
                }
            }
            Work::Tree {
                function,
                nodes,
                root,
                eight,
            } => {
                // SAFETY: table_tree takes (const uchar* cells, uchar* next, const uint* nodes,
                // uint root, int eight, int w, int h, int wrap); the tree's offsets stay inside
                // `nodes` for every state below the rule's.
                unsafe {
                    stream
                        .launch_builder(function)
                        .arg(&self.cells)
                        .arg(&mut self.next)
                        .arg(nodes)
                        .arg(root)
                        .arg(eight)
                        .arg(&w)
                        .arg(&h)
                        .arg(&wrap)
                        .launch(line(spread))?;
                }
            }
            Work::Square {
                rows,
                square,
                sums,
                rule,
            } => {
                let shared = 4 * (SEGMENT as u32 + 2 * rule.r as u32 + 1);
                let segments = (self.width as u32).div_ceil(SEGMENT as u32);
                let row_cfg = LaunchConfig {
                    grid_dim: (segments, (self.height as u32).min(MAX_GRID_Y), 1),
                    block_dim: (BLOCK, 1, 1),
                    shared_mem_bytes: shared,
                };
                // Strips at least 4r tall (each starts with 2r + 1 rows), as many as fill the
                // GPU twice, within the launch's 65535 along y.
                let columns = match self.width % 4 {
                    0 => self.width / 4,
                    _ => self.width,
                };
                let across = (columns as u32).div_ceil(BLOCK);
                let wanted = (2 * self.fill).div_ceil(across).max(1);
                let strip = (self.height as u32)
                    .div_ceil(wanted)
                    .max(4 * rule.r as u32)
                    .max((self.height as u32).div_ceil(MAX_GRID_Y))
                    .min(self.height as u32);
                let square_cfg = LaunchConfig {
                    grid_dim: (across, (self.height as u32).div_ceil(strip), 1),
                    block_dim: (BLOCK, 1, 1),
                    shared_mem_bytes: 0,
                };
                let strip = strip as i32;
                let mut by_rows = stream.launch_builder(rows);
                by_rows.arg(&self.cells);
                let mut squares = stream.launch_builder(square);
                squares.arg(&self.cells);
                match sums {
                    RowSums::Bytes(sums) => (by_rows.arg(sums), squares.arg(sums)),
                    RowSums::Words(sums) => (by_rows.arg(sums), squares.arg(sums)),
                };
                by_rows
                    .arg(&w)
                    .arg(&h)
                    .arg(&rule.r)
                    .arg(&wrap)
                    .arg(&SEGMENT);
                squares
                    .arg(&mut self.next)
                    .arg(&w)
                    .arg(&h)
                    .arg(&wrap)
                    .arg(rule)
                    .arg(&strip);
                // SAFETY: ltl_rows8 and ltl_rows take (const uchar* cells, uchar* or ushort*
                // sums, int w, int h, int r, int wrap, int segment) with (segment + 2r + 1)
                // words of shared memory; the square kernels (const uchar* cells, const uchar*
                // or ushort* sums as the rows kernel wrote them, uchar* next, int w, int h,
                // int wrap, Larger, int strip), the four-column ones only where w is a
                // multiple of four (their words aligned); every buffer holds w·h cells.
                unsafe {
                    by_rows.launch(row_cfg)?;
                    squares.launch(square_cfg)?;
                }
            }
            Work::Shaped {
                prefix,
                shaped,
                sums,
                reach,
                rule,
            } => {
                let rows = (self.height as u64).min(i32::MAX as u64);
                // SAFETY: ltl_prefix takes (const uchar* cells, uint* prefix, int w, int h,
                // int r, int wrap), the prefix buffer h rows of w + 2r + 1 words; ltl_shaped
                // (const uchar* cells, const uint* prefix, const int* reach, uchar* next,
                // int w, int h, int wrap, Larger), reach holding r + 1 ints.
                unsafe {
                    stream
                        .launch_builder(prefix)
                        .arg(&self.cells)
                        .arg(sums)
                        .arg(&w)
                        .arg(&h)
                        .arg(&rule.r)
                        .arg(&wrap)
                        .launch(line(rows))?;
                    stream
                        .launch_builder(shaped)
                        .arg(&self.cells)
                        .arg(sums)
                        .arg(reach)
                        .arg(&mut self.next)
                        .arg(&w)
                        .arg(&h)
                        .arg(&wrap)
                        .arg(rule)
                        .launch(line(spread))?;
                }
            }
        }
        std::mem::swap(&mut self.cells, &mut self.next);
        Ok(())
    }

    fn download(&self, stream: &Arc<CudaStream>) -> Result<Grid> {
        let bytes = copy_to_host(stream, &self.cells)?;
        let (w, h) = (self.width, self.height);
        Ok(if self.states > 2 {
            Grid::from_states_in(w, h, self.states, &bytes, w, 0)?
        } else {
            Grid::from_bytes_in(w, h, &bytes, w, 0)?
        })
    }

    fn describe(&self) -> Option<String> {
        Some(match &self.work {
            Work::Flat { bits, shared, .. } => format!(
                "flat lookup, {bits} bits an entry, in {} memory",
                if *shared > 0 { "shared" } else { "global" }
            ),
            Work::Tree { .. } => "the rule's tree walked per cell".into(),
            Work::Square { .. } => "row sums and running column sums".into(),
            Work::Shaped { .. } => "row prefix sums".into(),
        })
    }
}
