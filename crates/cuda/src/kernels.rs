//! What each engine compiles and how it launches it ([`KernelSpec`]); the source text itself is
//! [`crate::source`]'s.

use std::sync::Arc;

use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{CudaFunction, CudaModule, DriverError, LaunchConfig};
use gol_core::{EngineId, Rule};

use crate::bitsliced;
use crate::engine::MAX_GRID_Y;

/// What an engine compiles and launches: each backend describes its own engines' kernels
/// ([`crate::engine::Backend::spec`]).
pub struct KernelSpec {
    /// The engine.
    pub engine: EngineId,
    /// The source to compile for a rule: the pieces above pasted together behind the rule
    /// ([`crate::source::with_rule`]) or whatever else the engine compiles in.
    pub build_source: fn(Rule) -> String,
    /// The update kernel's name.
    pub function: &'static str,
    /// A variant of it with `int` indices and no row loop, for grids under 2³¹ bytes whose
    /// rows one launch covers.
    pub small_function: Option<&'static str>,
    /// The default thread block (x, y).
    pub default_block: (u32, u32),
    /// How blocks share out the cells.
    pub tiling: Tiling,
    /// Whether the engine sets its own launch shape (`--block` is refused).
    pub fixed_block: bool,
    /// Dynamic shared memory each block takes for a table, whatever the block (bytes).
    pub shared_table: u32,
}

/// The fewest rows a strip of cuda-shared or cuda-texture covers (where the grid has them).
pub const MIN_STRIP: u64 = 8;

/// How an engine's thread blocks share out the cells (one thread per cell in each case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tiling {
    /// Blocks side by side, one cell per thread and no halo.
    Plain,
    /// Blocks overlap by two cells each way (a one-cell halo each side): a block updates its
    /// (x − 2) × (y − 2) interior.
    Overlap,
    /// `strip.cu`: each row of a block is cut into segments of min(x, 32) threads, each
    /// updating all but its first and last column, so a block updates (x / segment) ×
    /// (segment − 2) columns; each row of threads walks down its own strip of rows. x must be
    /// a power of two up to 32 or a multiple of 32, and x × y a multiple of 32.
    Strips,
    /// `shared.cu`: strips as above, but the segments lie side by side (each thread updates its
    /// column; a segment's end threads also load the cell beside it), and all x × y threads of
    /// a block walk down one strip, so a block updates x × y columns of it. The same rules for
    /// x and y.
    AlignedStrips,
}

impl Tiling {
    /// Whether blocks walk down strips of rows ([`Tiling::Strips`], [`Tiling::AlignedStrips`]).
    pub fn walks_strips(self) -> bool {
        matches!(self, Tiling::Strips | Tiling::AlignedStrips)
    }
}

impl KernelSpec {
    /// The source to compile for `rule`.
    pub fn source(&self, rule: Rule) -> String {
        (self.build_source)(rule)
    }

    /// Dynamic shared memory per block, in bytes.
    pub fn shared_bytes(&self, block: (u32, u32)) -> u32 {
        let tile = match self.tiling {
            Tiling::Plain => 0,
            Tiling::Overlap => block.0 * block.1,
            Tiling::Strips => 2 * block.0 * block.1 + 2,
            // Two rows of segments, each with its two outer cells.
            Tiling::AlignedStrips => {
                let segment = block.0.min(32);
                2 * (block.0 * block.1 + 2 * (block.0 * block.1 / segment))
            }
        };
        tile + self.shared_table
    }

    /// The update kernel from `module`, allowed the table's shared memory where that is more
    /// than a block gets without asking.
    pub fn load(&self, module: &Arc<CudaModule>) -> Result<CudaFunction, DriverError> {
        let function = module.load_function(self.function)?;
        if self.shared_table > 0 {
            function.set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                self.shared_table as i32,
            )?;
        }
        Ok(function)
    }

    /// The launch of a strip kernel ([`Tiling::walks_strips`]) over `columns` × `rows` cells with
    /// blocks of `block`, on a GPU that holds `resident_threads` threads at once, and the rows
    /// each strip covers: strips as short as fill the GPU twice over, but at least
    /// [`MIN_STRIP`] rows (each strip loads two rows more than it updates). For
    /// [`Tiling::AlignedStrips`], four times over where that leaves strips of 64 rows or more
    /// (at 16384² on an H100, 7.45e11 → 8.14e11 cell updates/s, the last wave less ragged; at
    /// 4096² strips of 16 rows ran 7% slower than of 31).
    pub fn strips(
        &self,
        columns: usize,
        rows: usize,
        block: (u32, u32),
        resident_threads: u32,
    ) -> (LaunchConfig, u32) {
        // A block covers cells.0 columns of cells.1 strips.
        let cells = self.cells_per_block(block);
        let across = (columns as u64).div_ceil(cells.0 as u64);
        let threads_per_strip = across * (block.0 * block.1 / cells.1) as u64;
        let strip_filling = |times: u64| {
            let wanted_strips = (times * resident_threads as u64).div_ceil(threads_per_strip);
            (rows as u64).div_ceil(wanted_strips).max(MIN_STRIP)
        };
        let mut strip = match strip_filling(4) {
            long if self.tiling == Tiling::AlignedStrips && long >= 64 => long,
            _ => strip_filling(2),
        };
        let most_strips = MAX_GRID_Y as u64 * cells.1 as u64;
        strip = strip
            .max((rows as u64).div_ceil(most_strips))
            .min(rows as u64);
        let strips = (rows as u64).div_ceil(strip);
        let config = LaunchConfig {
            grid_dim: (across as u32, strips.div_ceil(cells.1 as u64) as u32, 1),
            block_dim: (block.0, block.1, 1),
            shared_mem_bytes: self.shared_bytes(block),
        };
        (config, strip as u32)
    }

    /// Cells (x, y) one block updates.
    pub fn cells_per_block(&self, block: (u32, u32)) -> (u32, u32) {
        match self.tiling {
            Tiling::Plain => block,
            Tiling::Overlap => (block.0 - 2, block.1 - 2),
            Tiling::AlignedStrips => (block.0 * block.1, 1),
            Tiling::Strips => {
                let segment = block.0.min(32);
                (block.0 / segment * (segment - 2), block.1)
            }
        }
    }

    /// Refuses blocks the kernel cannot use (overlapping blocks need an interior).
    pub fn check_block(&self, block: (u32, u32)) -> Result<(), String> {
        let (x, y) = block;
        match self.tiling {
            Tiling::Plain => Ok(()),
            Tiling::Overlap if x < 3 || y < 3 => Err(format!(
                "{} needs blocks of at least 3x3 (each block loads a one-cell halo around its interior); got {x}x{y}",
                self.engine
            )),
            Tiling::Strips | Tiling::AlignedStrips if x < 4 => Err(format!(
                "{} needs blocks at least 4 wide (each segment of a block row has a halo column each side); got {x}x{y}",
                self.engine
            )),
            Tiling::Strips | Tiling::AlignedStrips
                if !(x.is_power_of_two() && x <= 32 || x % 32 == 0) =>
            {
                Err(format!(
                "{} needs a block width that is a power of two up to 32 or a multiple of 32 (rows of a block are cut into warps or parts of one); got {x}x{y}",
                self.engine
            ))
            }
            Tiling::Strips | Tiling::AlignedStrips if x * y % 32 != 0 => Err(format!(
                "{} needs blocks of whole warps (a multiple of 32 threads); got {x}x{y}",
                self.engine
            )),
            Tiling::Overlap | Tiling::Strips | Tiling::AlignedStrips => Ok(()),
        }
    }
}

/// Every 2D engine's kernel, as its backend describes it.
pub fn all() -> impl Iterator<Item = &'static KernelSpec> {
    (bitsliced::KERNELS.iter())
        .chain(&crate::bytes::KERNELS)
        .chain(&crate::texture::KERNELS)
        .chain(&crate::lut::KERNELS)
        .chain(&crate::states::KERNELS)
}

/// Every 3D engine's kernel, as its backend describes it.
pub fn all_3d() -> impl Iterator<Item = &'static KernelSpec> {
    crate::cube_bits::KERNELS
        .iter()
        .chain(&crate::cube::KERNELS)
}

/// The kernel of the 2D engine `engine`.
pub fn spec(engine: EngineId) -> &'static KernelSpec {
    find(all(), engine)
}

/// The kernel of the 3D engine `engine`.
pub fn spec_3d(engine: EngineId) -> &'static KernelSpec {
    find(all_3d(), engine)
}

/// The kernel of `engine` among `kernels`: a backend is asked only for its own engines.
pub(crate) fn find(
    mut kernels: impl Iterator<Item = &'static KernelSpec>,
    engine: EngineId,
) -> &'static KernelSpec {
    kernels
        .find(|k| k.engine == engine)
        .expect("a backend is asked only for its own engines' kernels")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_blocks_update_all_but_each_segments_edges() {
        let texture = spec(EngineId::CudaTexture);
        assert_eq!(texture.cells_per_block((32, 16)), (30, 16));
        assert_eq!(texture.cells_per_block((16, 5)), (14, 5));
        assert_eq!(texture.cells_per_block((128, 8)), (120, 8));
        assert_eq!(texture.shared_bytes((128, 8)), 2050);
        // cuda-shared's segments lie side by side, each with two outer cells per shared row.
        let shared = spec(EngineId::CudaShared);
        assert_eq!(shared.cells_per_block((32, 16)), (512, 1));
        assert_eq!(shared.cells_per_block((16, 6)), (96, 1));
        assert_eq!(shared.shared_bytes((128, 8)), 2 * (1024 + 2 * 32));
        assert_eq!(shared.shared_bytes((16, 6)), 2 * (96 + 2 * 6));
        assert_eq!(
            spec(EngineId::CudaGlobal).cells_per_block((16, 16)),
            (16, 16)
        );
        assert_eq!(
            spec_3d(EngineId::CudaShared).cells_per_block((32, 16)),
            (30, 14)
        );
    }

    #[test]
    fn strips_cover_every_row_and_fill_the_gpu() {
        let resident = 132 * 2048;
        for engine in [EngineId::CudaShared, EngineId::CudaTexture] {
            let spec = spec(engine);
            for (w, h, block) in [
                (16384, 16384, (32, 16)),
                (1024, 1024, (32, 16)),
                (3, 1_100_000, (32, 16)),
                (5, 3, (8, 4)),
                (100_000, 1, (64, 4)),
                (1, 40_000_000, (4, 8)),
            ] {
                let (cfg, strip) = spec.strips(w, h, block, resident);
                let cells = spec.cells_per_block(block);
                let rows = cfg.grid_dim.1 as u64 * cells.1 as u64 * strip as u64;
                assert!(rows >= h as u64, "{engine} {w}x{h}: {cfg:?} strip {strip}");
                assert!(
                    rows < h as u64 + strip as u64 * cells.1 as u64,
                    "{engine} {w}x{h}: too many strips"
                );
                assert!(
                    strip as u64 >= MIN_STRIP.min(h as u64),
                    "{engine} {w}x{h}: strip {strip}"
                );
                assert!(cfg.grid_dim.1 <= MAX_GRID_Y, "{engine} {w}x{h}: {cfg:?}");
                let columns = cfg.grid_dim.0 * cells.0;
                assert!(columns as usize >= w && columns < w as u32 + cells.0);
                assert_eq!(cfg.shared_mem_bytes, spec.shared_bytes(block));
            }
            // A large grid gets about twice (cuda-texture) or four times (cuda-shared) the
            // resident threads; a smaller one twice, where four times would make strips short.
            let fill = if engine == EngineId::CudaShared { 4 } else { 2 };
            let (cfg, _) = spec.strips(16384, 16384, (32, 16), resident);
            let threads = cfg.grid_dim.0 * cfg.grid_dim.1 * 32 * 16;
            assert!(
                (fill * resident..(fill + 1) * resident).contains(&threads),
                "{engine}: {threads}"
            );
            let (cfg, strip) = spec.strips(4096, 4096, (32, 16), resident);
            let threads = cfg.grid_dim.0 * cfg.grid_dim.1 * 32 * 16;
            assert!(strip >= 16, "{engine}: {strip}");
            assert!(
                (3 * resident / 2..3 * resident).contains(&threads),
                "{engine}: {threads}"
            );
        }
    }

    #[test]
    fn strip_blocks_need_whole_warps_or_power_of_two_parts() {
        for engine in [EngineId::CudaShared, EngineId::CudaTexture] {
            let spec = spec(engine);
            for ok in [
                (4, 8),
                (8, 4),
                (16, 6),
                (32, 1),
                (64, 4),
                (96, 3),
                (1024, 1),
            ] {
                assert_eq!(spec.check_block(ok), Ok(()), "{engine} {ok:?}");
            }
            for (bad, says) in [
                ((3, 3), "at least 4 wide"),
                ((2, 64), "at least 4 wide"),
                ((7, 5), "power of two"),
                ((48, 4), "power of two"),
                ((16, 5), "whole warps"),
                ((4, 1), "whole warps"),
            ] {
                let err = spec.check_block(bad).unwrap_err();
                assert!(err.contains(says), "{engine} {bad:?}: {err}");
            }
        }
        assert_eq!(spec_3d(EngineId::CudaShared).check_block((7, 5)), Ok(()));
        assert!(spec(EngineId::CudaGlobal).check_block((7, 1)).is_ok());
    }
}
