//! The CPU engines and their registry.

mod bitsliced;
mod ghost;
mod scalar;
mod table;

pub use bitsliced::{Bitsliced, Isa, STRIP_WORDS};
pub use ghost::{CellUpdate, GhostCells, GhostEngine};
pub use scalar::{Scalar, SetTest};
pub use table::{StateTable, Table};

use crate::engine::{Engine, EngineOptions, EngineSpec};
use crate::error::Result;

/// The CPU engines, fastest first (the order `--engine auto` prefers).
pub const ENGINES: &[EngineSpec] = &[
    EngineSpec {
        name: "cpu-bitsliced",
        description: "64 cells per word, bit-sliced counts, SIMD chosen at run time, all cores",
        create: |o| cpu_engine(o, Bitsliced::default()),
    },
    EngineSpec {
        name: "cpu-table",
        description: "byte cells with ghost cells, next state from a states[2][9] table (the seminar's variant)",
        create: |o| cpu_engine(o, Table::default()),
    },
    EngineSpec {
        name: "cpu-scalar",
        description: "byte cells with ghost cells, the seeds' sequential program: the oracle",
        create: |o| cpu_engine(o, Scalar::default()),
    },
];

fn cpu_engine(options: &EngineOptions, engine: impl Engine + 'static) -> Result<Box<dyn Engine>> {
    options.refuse_block()?;
    Ok(Box::new(engine))
}
