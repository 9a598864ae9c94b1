//! `gol`: a Game of Life engine on CUDA GPUs and the CPU, as a library.
//!
//! One API drives every engine, in 2D and 3D, and every front end (the `gol` command, the
//! viewer, the Python package) goes through it:
//!
//! - [`Setup`]: the typed description of a run: where it starts ([`Start`]: a glibc or
//!   density soup, a pattern or `.bin` file, a checkpoint, cells in memory), its [`Size`],
//!   rule, engine ([`EngineChoice`]), split over GPUs and [`Checkpoints`].
//! - [`Simulation`]: what a setup becomes: `step`, `generation`, `population`, `world`, a
//!   `window` of it, `save` in every output format, `checkpoint`, and the timings.
//! - [`auto`]: the one place where `auto` is resolved, by a cost model of whole runs.
//! - [`registry`]: every engine of this build by [`EngineId`].
//! - [`verify`]: every engine here against the scalar oracle (`gol verify`).
//! - [`identify`](mod@identify): what a pattern is (period, speed, heat, apgcode), from a
//!   simulation or cells.
//! - [`output`]: output formats, checked before a run, pictures and animations.
//!
//! ```
//! use gol::{Setup, Simulation, Size, Start};
//!
//! let mut sim: Simulation = Simulation::new(&Setup {
//!     start: Start::Glibc { seed: 0 },
//!     size: Some(Size::Side(1024)),
//!     generations: Some(1024),
//!     ..Setup::default()
//! })?;
//! sim.step(1024)?;
//! assert_eq!(sim.population()?, 47026); // Kurnosov's seminar prints the same
//! # Ok::<(), gol::Error>(())
//! ```
#![deny(missing_docs)]

pub mod auto;
pub mod dimension;
mod error;
pub mod identify;
pub mod output;
pub mod plane;
pub mod registry;
pub mod setup;
mod simulation;
pub mod verify;

pub use auto::EngineChoice;
pub use dimension::Dimension;
pub use error::{Error, Result};
pub use gol_census::Identity;
pub use gol_core::rule::table as rule_table;
pub use gol_core::{Cube, EngineId, Grid, Rule};
pub use identify::identify;
pub use plane::{PlaneSimulation, PlaneView};
pub use setup::{Checkpoints, Dim, Setup, Size, Source, Split, Start};
pub use simulation::{Simulation, Timings};

/// The README's Rust examples, run as doc tests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;
