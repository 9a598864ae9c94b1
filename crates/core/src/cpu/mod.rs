//! The CPU engines and their registry.

mod bitsliced;
mod ghost;
mod scalar;
mod table;

pub use bitsliced::{Bitsliced, Isa, STRIP_WORDS};
pub use ghost::{CellUpdate, GhostCells, GhostEngine};
pub use scalar::{Scalar, SetTest};
pub use table::{StateTable, Table};

use crate::engine::{Engine, EngineSpec};

/// The CPU engines, fastest first (the order `--engine auto` prefers).
pub const ENGINES: &[EngineSpec] = &[
    EngineSpec {
        name: "cpu-bitsliced",
        description: "64 cells per word, bit-sliced counts, SIMD chosen at run time, all cores",
        create: || Ok(Box::new(Bitsliced::default()) as Box<dyn Engine>),
    },
    EngineSpec {
        name: "cpu-table",
        description: "byte cells with ghost cells, next state from a states[2][9] table (the seminar's variant)",
        create: || Ok(Box::new(Table::default()) as Box<dyn Engine>),
    },
    EngineSpec {
        name: "cpu-scalar",
        description: "byte cells with ghost cells, the seeds' sequential program: the oracle",
        create: || Ok(Box::new(Scalar::default()) as Box<dyn Engine>),
    },
];
