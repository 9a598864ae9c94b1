//! The CUDA engines of `gol`: the GPU programs of the tutorials and the seminar in docs/lineage.md, bit-exact with the CPU oracle.
//!
//! - [`bytes`]: `cuda-global`, `cuda-constant` (ghost-cell byte layout, Kurnosov's seminar, docs/lineage.md)
//!   and `cuda-shared` (tile and halo in shared memory, the OLCF program).
//! - [`texture`]: `cuda-texture` (texture objects with wrap addressing do the torus).
//! - [`lut`]: `cuda-lut` (32 cells per word, a 4096-entry table gives two cells per lookup) and
//!   `cuda-lut6` (a 2¹⁸-entry table gives four).
//! - [`bitsliced`]: `cuda-bitsliced` (32 cells per word, bit-sliced counts, up to 16
//!   generations per launch; the fastest), with the rule as a LOP3 circuit from [`circuit`].
//! - [`soups`]: the census's soups, each stepped on a box of its own until it settles.
//! - [`peer`]: copies from GPU to GPU for the halo exchanges of split runs.
//! - [`cube`]: the 3D byte-cell engines `cuda-global`, `cuda-shared`, `cuda-swar`, and
//!   [`cube_bits`] the 3D `cuda-bitsliced`, on an M³ torus ([`ENGINES_3D`]).
//!
//! Kernels are `.cu` files under `kernels/`, embedded with `include_str!` ([`source`]) and
//! compiled by NVRTC ([`nvrtc`]) for the device's own architecture on first use
//! ([`device::Gpu::module`] caches them per process and on disk). The default engine's kernels
//! under each dimension's default rule are also compiled when `gol` is built, where NVRTC is
//! there then, and built in ([`source::shipped`], [`shipped_report`]). Nothing touches the CUDA libraries before [`device::gpu`] has probed
//! for them, so a machine without a GPU gets a clear error, never a panic.
#![deny(missing_docs)]

pub mod bitsliced;
pub mod bytes;
pub mod circuit;
mod clock;
pub mod cube;
pub mod cube_bits;
pub mod device;
pub mod engine;
mod error;
pub mod generic;
pub mod kernels;
pub mod launch;
pub mod lut;
pub mod nvrtc;
pub mod peer;
pub mod pinned;
pub mod soups;
pub mod source;
pub mod states;
pub mod texture;

pub use error::CudaError;

use cudarc::driver::CudaFunction;
use gol_core::{Cube, Engine, EngineId, EngineSpec};

use engine::{Backend, GpuEngine};

fn create<B: Backend + Send + 'static>(
    id: EngineId,
    options: &gol_core::EngineOptions,
) -> gol_core::Result<Box<dyn Engine<B::World>>> {
    Ok(Box::new(GpuEngine::<B>::new(id, options)?))
}

/// The CUDA engines, fastest first.
pub const ENGINES: &[EngineSpec] = &[
    EngineSpec {
        id: EngineId::CudaBitsliced,
        description:
            "32 cells per word, bit-sliced counts, up to 16 generations per launch (the fastest)",
        create: |o| create::<bitsliced::BitCells>(EngineId::CudaBitsliced, o),
    },
    EngineSpec {
        id: EngineId::CudaLut6,
        description:
            "32 cells per word, 6x3-window lookup table of 2^18 entries in 128 KiB of shared memory (4 cells per lookup)",
        create: |o| create::<lut::LutCells>(EngineId::CudaLut6, o),
    },
    EngineSpec {
        id: EngineId::CudaLut,
        description:
            "32 cells per word, 4x3-window lookup table in shared memory (2 cells per lookup)",
        create: |o| create::<lut::LutCells>(EngineId::CudaLut, o),
    },
    EngineSpec {
        id: EngineId::CudaStates,
        description: "byte cells of up to 256 states: rule tables by flat lookup in shared memory, Larger than Life by row and running column sums",
        create: |o| create::<states::StateCells>(EngineId::CudaStates, o),
    },
    EngineSpec {
        id: EngineId::CudaShared,
        description:
            "byte cells, threads walking down strips of rows, row neighbours met in shared memory",
        create: |o| create::<bytes::ByteCells>(EngineId::CudaShared, o),
    },
    EngineSpec {
        id: EngineId::CudaTexture,
        description:
            "byte cells in CUDA arrays read through textures with wrap addressing (four cells a 32-bit texel where the width allows, else 2x2 gathers), surface writes",
        create: |o| create::<texture::TextureCells>(EngineId::CudaTexture, o),
    },
    EngineSpec {
        id: EngineId::CudaGlobal,
        description:
            "byte cells with ghost cells in global memory, three launches per generation (Kurnosov's seminar)",
        create: |o| create::<bytes::ByteCells>(EngineId::CudaGlobal, o),
    },
    EngineSpec {
        id: EngineId::CudaConstant,
        description: "as cuda-global, with the rule table in __constant__ memory (Kurnosov's seminar)",
        create: |o| create::<bytes::ByteCells>(EngineId::CudaConstant, o),
    },
];

/// The 3D CUDA engines, fastest first.
pub const ENGINES_3D: &[EngineSpec<Cube>] = &[
    EngineSpec {
        id: EngineId::CudaBitsliced,
        description:
            "32 cells per word, bit-sliced 27-cell sums, 4 lines per thread streaming along x",
        create: |o| create::<cube_bits::CubeBits>(EngineId::CudaBitsliced, o),
    },
    EngineSpec {
        id: EngineId::CudaSwar,
        description:
            "4 byte cells per 32-bit word, sums four at a time, streaming along x (v2 of the 3D Life article)",
        create: |o| create::<cube::CubeCells>(EngineId::CudaSwar, o),
    },
    EngineSpec {
        id: EngineId::CudaShared,
        description:
            "byte cells, (z, y) tiles with a halo in shared memory streaming along x (v1 of the 3D Life article)",
        create: |o| create::<cube::CubeCells>(EngineId::CudaShared, o),
    },
    EngineSpec {
        id: EngineId::CudaGlobal,
        description: "byte cells, one thread per cell, 26 wrapped loads (v0 of the 3D Life article)",
        create: |o| create::<cube::CubeCells>(EngineId::CudaGlobal, o),
    },
];

/// What bounds an engine on this GPU, for `gol bench`.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Device-to-device copy bandwidth, bytes read plus bytes written per second, measured.
    pub copy_bytes_per_second: f64,
    /// Integer (logic) pipe: 64 lanes per SM per clock at the peak clock, in lane operations
    /// per second.
    pub integer_ops_per_second: f64,
}

impl Limits {
    /// Cell updates per second at one bit per cell, one read and one write of the grid per
    /// generation.
    pub fn bandwidth_cups(&self) -> f64 {
        self.copy_bytes_per_second * 4.0
    }

    /// Cell updates per second if the integer pipe did nothing but `ops_per_word` operations
    /// per 32-cell word per generation.
    pub fn integer_cups(&self, ops_per_word: f64) -> f64 {
        self.integer_ops_per_second * 32.0 / ops_per_word
    }
}

/// Measures the copy bandwidth (1 GiB copied device to device, best of five) and reads the
/// integer throughput from the SM count and clock.
pub fn limits() -> Result<Limits, CudaError> {
    let gpu = device::gpu()?;
    let bytes = 1usize << 30;
    gpu.check_memory(2 * bytes as u64, "measuring the copy bandwidth")?;
    let stream = gpu.ctx.new_stream()?;
    let from = stream.alloc_zeros::<u8>(bytes)?;
    let mut to = stream.alloc_zeros::<u8>(bytes)?;
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let seconds = clock::time_on_device(&stream, || Ok(stream.memcpy_dtod(&from, &mut to)?))?;
        best = best.min(seconds);
    }
    Ok(Limits {
        copy_bytes_per_second: 2.0 * bytes as f64 / best,
        integer_ops_per_second: gpu.info.multiprocessors as f64 * 64.0 * gpu.info.clock_hz,
    })
}

/// One line on the kernels built into this binary as CUBINs ([`source::shipped`]), for
/// `gol info`; needs no GPU.
pub fn shipped_report() -> String {
    let built = device::shipped_cubins().count();
    if built == 0 {
        return "Kernels built in: none (NVRTC was missing when gol was built); each kernel compiles with NVRTC on first use".into();
    }
    format!(
        "Kernels built in: {built} CUBINs, cuda-bitsliced under {} (2D) and {} (3D), its generic kernels (any 2D two-state rule, Generations rules of up to {} states, 3D rules) and the census's soup kernels, for {}; a rule's own kernel compiles with NVRTC on first use, other engines' kernels too",
        gol_core::Rule::LIFE,
        gol_core::Rule::LIFE_3D,
        (1u32 << source::SHIPPED_AGE_PLANES) + 1,
        source::SHIPPED_ARCHES.join(" ")
    )
}

/// Lines describing the GPU and, for each engine, its default block and theoretical occupancy;
/// an error where there is no GPU.
pub fn report() -> Result<Vec<String>, CudaError> {
    let gpu = device::gpu()?;
    let info = &gpu.info;
    let mut lines = vec![
        format!(
            "GPU: {} (compute capability {}.{}, {} SMs, {}, driver {}.{})",
            info.name,
            info.capability.0,
            info.capability.1,
            info.multiprocessors,
            gol_core::memory::human_bytes(info.memory as u64),
            info.driver / 1000,
            info.driver % 1000 / 10
        ),
        format!(
            "GPU limits: {} threads per block, 2D CUDA arrays up to {}x{}",
            info.max_threads_per_block, info.max_array_2d.0, info.max_array_2d.1
        ),
    ];
    for spec in kernels::all() {
        let module = gpu.module(&spec.source(gol_core::Rule::LIFE))?;
        let function: CudaFunction = spec.load(&module)?;
        let block = spec.default_block;
        let threads = block.0 * block.1;
        let blocks = function.occupancy_max_active_blocks_per_multiprocessor(
            threads,
            spec.shared_bytes(block) as usize,
            None,
        )?;
        let occupancy = (blocks * threads) as f64 / info.max_threads_per_multiprocessor as f64;
        lines.push(format!(
            "  {:<14} block {}x{}: {blocks} blocks per SM, theoretical occupancy {:.0}%",
            spec.engine,
            block.0,
            block.1,
            occupancy.min(1.0) * 100.0
        ));
    }
    Ok(lines)
}
