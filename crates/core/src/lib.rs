//! The core of `gol`, a Game of Life engine: grids, rules, seeding, pattern files and the CPU
//! engines.
//!
//! - [`Grid`]: a bit-packed W×H torus (the layout is documented in [`grid`]).
//! - [`Cube`]: a bit-packed M×M×M torus (layout in [`cube`]); [`cube_file`] reads and writes
//!   the 3D contest's `.bin` files.
//! - [`Rule`]: a Life-like rule in B/S notation.
//! - [`slab`]: a torus split into slabs of rows, one engine each, halos exchanged every few
//!   generations.
//! - [`checkpoint`]: checkpoints of long runs, written atomically and checked on reading;
//!   [`replace`] writes any file that way.
//! - [`seed`]: glibc-exact `rand() % 2` soups and fast density soups.
//! - [`pattern`]: RLE and plaintext `.cells` reading and writing.
//! - [`picture`]: PNG pictures and GIF animations of a view of a world, through a colour map.
//! - [`Engine`]: the one interface of every engine; [`cpu::ENGINES`] registers the CPU ones,
//!   [`cpu::Scalar`] is the oracle the others are checked against; [`cpu::ENGINES_3D`] and
//!   [`cpu::Scalar3d`] are their 3D counterparts.
#![deny(missing_docs)]

pub mod checkpoint;
pub mod cpu;
pub mod cube;
pub mod cube_file;
pub mod engine;
pub mod error;
pub mod grid;
pub mod memory;
pub mod pattern;
pub mod picture;
pub mod replace;
pub mod rule;
pub mod seed;
pub mod slab;

pub use cube::Cube;
pub use engine::{Engine, EngineId, EngineOptions, EngineSpec, RowAccess, World};
pub use error::{Error, Result};
pub use grid::Grid;
pub use rule::{Rule, RuleTable};
