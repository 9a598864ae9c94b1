//! What patterns are and what soups make: pattern identification (period, speed, heat,
//! apgcode) and apgsearch's soups, for the `gol` Game of Life engine.
//!
//! - [`apgcode`]: the names apgsearch, lifelib and Catagolue give objects.
//! - [`identify`](mod@identify): a pattern run on the plane until it repeats, and what it is.
//! - [`census`]: the soup census on the CPU's cores, and [`gpu`](mod@gpu) with the soups
//!   stepped on GPUs.
//! - [`soup`]: apgsearch's C1 soups of B3/S23, made from their IDs as it makes them.
#![deny(missing_docs)]

pub mod apgcode;
pub mod census;
pub mod gpu;
pub mod identify;
pub mod objects;
pub mod soup;
pub mod universe;

pub use identify::{identify, Cycle, Identity, Verdict};
