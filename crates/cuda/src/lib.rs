//! The CUDA engines of `gol`. None is built yet: [`ENGINES`] is empty, so `--engine auto` and
//! `gol verify` use the CPU engines only. The CUDA backend (kernels compiled by NVRTC, driver
//! probed before use) arrives with the CUDA issue.
#![deny(missing_docs)]

use gol_core::EngineSpec;

/// The CUDA engines, fastest first.
pub const ENGINES: &[EngineSpec] = &[];
