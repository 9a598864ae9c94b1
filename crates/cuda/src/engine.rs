//! One [`Engine`] implementation for every CUDA engine: [`GpuEngine`] owns the GPU handle, the
//! block size and the timings, and drives a [`Backend`] that knows one kernel's data layout.

use std::cell::Cell;
use std::sync::Arc;

use gol_core::{Engine, EngineOptions, Grid, Rule};

use crate::clock::{time_on_device, time_on_host, Timings};
use crate::device::{gpu, Gpu};
use crate::error::{CudaError, Result};
use crate::kernels;

/// The most blocks launched along y; kernels loop over the rest (grid-stride).
pub const MAX_GRID_Y: u32 = 65_535;

/// A kernel's data on the device and how to advance it.
pub trait Backend: Sized {
    /// Checks the problem against the device, compiles the module and allocates buffers.
    fn prepare(gpu: &Arc<Gpu>, engine: &'static str, grid: &Grid, rule: Rule) -> Result<Self>;
    /// Copies `grid` to the device.
    fn upload(&mut self, gpu: &Gpu, grid: &Grid) -> Result<()>;
    /// Queues one generation on the GPU's stream.
    fn generation(&mut self, gpu: &Gpu, block: (u32, u32)) -> Result<()>;
    /// Copies the state back.
    fn download(&self, gpu: &Gpu) -> Result<Grid>;
}

/// A CUDA engine: one [`Backend`] on the GPU.
pub struct GpuEngine<B> {
    name: &'static str,
    gpu: Arc<Gpu>,
    block: (u32, u32),
    backend: Option<B>,
    timings: Cell<Timings>,
}

impl<B: Backend> GpuEngine<B> {
    /// The engine `name`; fails where there is no GPU or the block is too large.
    pub fn new(name: &'static str, options: &EngineOptions) -> Result<GpuEngine<B>> {
        let gpu = gpu()?;
        let block = options.block.unwrap_or(kernels::spec(name).default_block);
        gpu.check_block(block)?;
        Ok(GpuEngine {
            name,
            gpu,
            block,
            backend: None,
            timings: Cell::new(Timings::default()),
        })
    }

    fn backend(&self) -> Result<&B> {
        self.backend
            .as_ref()
            .ok_or_else(|| CudaError::Refused(format!("{}: no grid loaded", self.name)))
    }

    fn add(&self, update: impl FnOnce(&mut Timings)) {
        let mut t = self.timings.get();
        update(&mut t);
        self.timings.set(t);
    }
}

impl<B: Backend + Send> Engine for GpuEngine<B> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn load(&mut self, grid: &Grid, rule: Rule) -> gol_core::Result<()> {
        self.backend = None;
        rule.check_neighbours(8)?;
        check_dims(grid.width(), grid.height())?;
        let mut backend = B::prepare(&self.gpu, self.name, grid, rule)?;
        let ((), upload) = time_on_host(|| backend.upload(&self.gpu, grid))?;
        self.timings.set(Timings {
            upload,
            ..Timings::default()
        });
        self.backend = Some(backend);
        Ok(())
    }

    fn step(&mut self, generations: u64) -> gol_core::Result<()> {
        let (gpu, block) = (self.gpu.clone(), self.block);
        let backend = self
            .backend
            .as_mut()
            .ok_or_else(|| CudaError::Refused(format!("{}: no grid loaded", self.name)))?;
        let seconds = time_on_device(&gpu, || {
            (0..generations).try_for_each(|_| backend.generation(&gpu, block))
        })?;
        self.add(|t| t.generations += seconds);
        Ok(())
    }

    fn snapshot(&self) -> gol_core::Result<Grid> {
        let (grid, seconds) = time_on_host(|| self.backend()?.download(&self.gpu))?;
        self.add(|t| t.download += seconds);
        Ok(grid)
    }

    fn population(&self) -> gol_core::Result<u64> {
        Ok(self.snapshot()?.population())
    }

    fn details(&self) -> String {
        format!(
            "block {}x{}, {}",
            self.block.0, self.block.1, self.gpu.info.name
        )
    }

    fn timings(&self) -> Vec<(&'static str, f64)> {
        self.timings.get().report()
    }
}

/// Kernels index with `int` sides.
fn check_dims(width: usize, height: usize) -> Result<()> {
    let limit = i32::MAX as usize - 2;
    if width > limit || height > limit {
        return Err(CudaError::Refused(format!(
            "a {width}x{height} grid is too large for the CUDA engines (at most {limit} a side)"
        )));
    }
    Ok(())
}

/// A 2D launch over `columns` × `rows` threads (rows capped by [`MAX_GRID_Y`] blocks).
pub fn launch_2d(
    columns: usize,
    rows: usize,
    block: (u32, u32),
    shared: u32,
) -> cudarc::driver::LaunchConfig {
    cudarc::driver::LaunchConfig {
        grid_dim: (
            (columns as u32).div_ceil(block.0),
            (rows as u32).div_ceil(block.1).min(MAX_GRID_Y),
            1,
        ),
        block_dim: (block.0, block.1, 1),
        shared_mem_bytes: shared,
    }
}
