//! The CPU engines and their registry.

mod bitsliced;
mod bitsliced3d;
mod blocks;
mod generations;
mod ghost;
#[cfg(target_arch = "x86_64")]
mod jit;
mod larger_bits;
mod program;
mod scalar;
mod scalar3d;
mod states;
mod stencil;
mod table;
mod vector;

pub use bitsliced::{dispatch, Bitsliced, Isa, Kernel, STRIP_WORDS};
pub use bitsliced3d::Bitsliced3d;
pub use ghost::{CellUpdate, GhostCells, GhostEngine};
pub use scalar::{Scalar, SetTest};
pub use scalar3d::Scalar3d;
pub use states::{States, MOST_FLAT};
pub use stencil::Stencil;
pub use table::{StateTable, Table};
pub use vector::{Simd, Vector, VectorKernel};

use crate::cube::Cube;
use crate::engine::{Engine, EngineId, EngineOptions, EngineSpec, World};
use crate::error::Result;

/// The CPU engines, fastest first (the order `--engine auto` prefers).
pub const ENGINES: &[EngineSpec] = &[
    EngineSpec {
        id: EngineId::CpuBitsliced,
        description: "64 cells per word, bit-sliced counts, SIMD chosen at run time, all cores",
        create: |o| cpu_engine(o, Bitsliced::default()),
    },
    EngineSpec {
        id: EngineId::CpuStates,
        description: "byte cells of up to 256 states, all cores, SIMD chosen at run time: rule tables by one flat lookup a cell, Larger than Life by running sums (two-state squares in bits)",
        create: |o| cpu_engine(o, States::default()),
    },
    EngineSpec {
        id: EngineId::CpuTable,
        description: "byte cells with ghost cells, next state from a states[2][9] table (the variant of M. Kurnosov's CUDA seminar, Seminar 18)",
        create: |o| cpu_engine(o, Table::default()),
    },
    EngineSpec {
        id: EngineId::CpuScalar,
        description: "byte cells with ghost cells, the sequential C program of M. Kurnosov's CUDA seminar (Seminar 18, docs/lineage.md): the oracle",
        create: |o| cpu_engine(o, Scalar::default()),
    },
];

/// The 3D CPU engines, fastest first.
pub const ENGINES_3D: &[EngineSpec<Cube>] = &[
    EngineSpec {
        id: EngineId::CpuBitsliced,
        description:
            "64 cells per word, bit-sliced 27-cell sums, SIMD chosen at run time, all cores",
        create: |o| cpu_engine(o, Bitsliced3d::default()),
    },
    EngineSpec {
        id: EngineId::CpuScalar,
        description: "byte cells, 26 wrapped neighbours added one by one: the 3D oracle",
        create: |o| cpu_engine(o, Scalar3d::default()),
    },
];

fn cpu_engine<W: World>(
    options: &EngineOptions,
    engine: impl Engine<W> + 'static,
) -> Result<Box<dyn Engine<W>>> {
    options.refuse_gpu_options()?;
    Ok(Box::new(engine))
}
