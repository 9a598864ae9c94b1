//! The byte-cell backends: `cuda-global` and `cuda-constant` on the ghost-cell layout of Kurnosov's seminar (docs/lineage.md)
//! ((W+2)×(H+2) bytes: three launches per generation, ghost columns, ghost rows, update; on a
//! bounded plane the ghosts stay dead and only the update runs) and
//! `cuda-shared` on plain W×H bytes (threads walk down strips of rows, row neighbours met in
//! shared memory; one launch).

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use gol_core::rule::Topology;
use gol_core::{EngineId, Grid, Rule};

use crate::device::Gpu;
use crate::engine::{launch_2d, Backend};
use crate::error::Result;
use crate::kernels::{self, KernelSpec, Tiling};
use crate::pinned::copy_to_host;
use crate::source;

/// Bytes on the device, with or without ghost cells.
pub struct ByteCells {
    spec: &'static KernelSpec,
    width: usize,
    height: usize,
    cells: CudaSlice<u8>,
    next: CudaSlice<u8>,
    update: CudaFunction,
    /// The same update with `int` indices and no row loop, for grids under 2³¹ bytes whose
    /// rows one launch covers.
    update_small: Option<CudaFunction>,
    /// Threads the GPU holds at once (for cuda-shared's strips).
    resident_threads: u32,
    /// The ghost-cell kernels (`None` for cuda-shared).
    ghost_kernels: Option<(CudaFunction, CudaFunction)>,
    /// Whether the grid is a bounded plane, whose ghost cells stay dead (zero) instead.
    plane: bool,
}

impl ByteCells {
    /// Row stride and the offset of cell (0, 0) in the device buffer.
    fn layout(&self) -> (usize, usize) {
        if self.ghost_kernels.is_some() {
            (self.width + 2, self.width + 3)
        } else {
            (self.width, 0)
        }
    }
}

/// The byte-cell engines' kernels: cuda-global and cuda-constant on ghost cells (the rule
/// compiled in, or read from a table in constant memory that the host fills), cuda-shared on
/// strips of rows met in shared memory.
pub const KERNELS: [KernelSpec; 3] = [
    KernelSpec {
        engine: EngineId::CudaGlobal,
        build_source: |rule| source::with_rule(rule, &[source::RULE, source::GLOBAL]),
        function: "update_cells",
        small_function: Some("update_cells_small"),
        default_block: (16, 16),
        tiling: Tiling::Plain,
        fixed_block: false,
        shared_table: 0,
    },
    KernelSpec {
        engine: EngineId::CudaConstant,
        // One module for every rule: the table in constant memory is filled at load.
        build_source: |_| source::with_rule(Rule::LIFE, &[source::CONSTANT, source::GLOBAL]),
        function: "update_cells",
        small_function: Some("update_cells_small"),
        default_block: (16, 16),
        tiling: Tiling::Plain,
        fixed_block: false,
        shared_table: 0,
    },
    KernelSpec {
        engine: EngineId::CudaShared,
        build_source: |rule| {
            source::with_rule(rule, &[source::RULE, source::STRIP, source::SHARED])
        },
        function: "update_cells_shared",
        small_function: None,
        default_block: (32, 16),
        tiling: Tiling::AlignedStrips,
        fixed_block: false,
        shared_table: 0,
    },
];

impl Backend for ByteCells {
    type World = Grid;

    fn spec(engine: EngineId) -> &'static KernelSpec {
        kernels::find(KERNELS.iter(), engine)
    }

    fn prepare(
        gpu: &Gpu,
        stream: &Arc<CudaStream>,
        engine: EngineId,
        grid: &Grid,
        rule: Rule,
    ) -> Result<Self> {
        let spec = Self::spec(engine);
        // cuda-global and cuda-constant keep the ghost-cell layout (their ghost-refresh kernels
        // are in global.cu); cuda-shared wraps its indices instead.
        let ghosts = matches!(engine, EngineId::CudaGlobal | EngineId::CudaConstant);
        let (width, height) = (grid.width(), grid.height());
        let len = if ghosts {
            (width + 2) * (height + 2)
        } else {
            width * height
        };
        gpu.check_memory(
            2 * len as u64,
            &format!("a {width}x{height} grid on {engine}"),
        )?;
        let module = if engine != EngineId::CudaConstant {
            gpu.module(&spec.source(rule))?
        } else {
            // cuda-constant: the rule goes into the module's constant memory, so the module
            // must be this engine's own.
            let module = gpu.private_module(&spec.source(rule))?;
            let table = rule.table();
            let mut states = [0u8; 18];
            states[..9].copy_from_slice(&table[0][..9]);
            states[9..].copy_from_slice(&table[1][..9]);
            let mut symbol = module.get_global("states", stream)?;
            stream.memcpy_htod(&states, &mut symbol)?;
            module
        };
        let ghost_kernels = if ghosts {
            Some((
                module.load_function("copy_ghost_cols")?,
                module.load_function("copy_ghost_rows")?,
            ))
        } else {
            None
        };
        Ok(ByteCells {
            spec,
            width,
            height,
            cells: stream.alloc_zeros::<u8>(len)?,
            next: stream.alloc_zeros::<u8>(len)?,
            update: module.load_function(spec.function)?,
            update_small: spec
                .small_function
                .map(|f| module.load_function(f))
                .transpose()?,
            resident_threads: gpu.resident_threads(),
            ghost_kernels,
            plane: rule.topology() == Topology::Plane,
        })
    }

    fn upload(&mut self, stream: &Arc<CudaStream>, grid: &Grid) -> Result<()> {
        let (stride, origin) = self.layout();
        let bytes = grid.to_bytes_in(stride, origin, self.cells.len());
        stream.memcpy_htod(&bytes, &mut self.cells)?;
        stream.synchronize()?;
        Ok(())
    }

    fn generation(&mut self, stream: &Arc<CudaStream>, block: (u32, u32)) -> Result<()> {
        let (w, h) = (self.width as i32, self.height as i32);
        // Neither buffer's ghosts are written by the update, so on a bounded plane they stay
        // as allocated and uploaded: zero.
        if let Some((cols, rows)) = self.ghost_kernels.as_ref().filter(|_| !self.plane) {
            let line = |n: usize| LaunchConfig {
                grid_dim: ((n as u32).div_ceil(256).min(1 << 20), 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: copy_ghost_cols/rows take (unsigned char*, int w, int h) and the buffer
            // holds (w+2)*(h+2) bytes; columns go first so that the rows copy the corners.
            unsafe {
                stream
                    .launch_builder(cols)
                    .arg(&mut self.cells)
                    .arg(&w)
                    .arg(&h)
                    .launch(line(self.height))?;
                stream
                    .launch_builder(rows)
                    .arg(&mut self.cells)
                    .arg(&w)
                    .arg(&h)
                    .launch(line(self.width + 2))?;
            }
        }
        // cuda-shared walks strips (one more argument: their rows); the others take a block
        // per tile of cells.
        let (cfg, strip, update) = if self.spec.tiling.walks_strips() {
            let (cfg, strip) =
                self.spec
                    .strips(self.width, self.height, block, self.resident_threads);
            (cfg, Some(strip as i32), &self.update)
        } else {
            let cells = self.spec.cells_per_block(block);
            let cfg = launch_2d(self.width, self.height, block, cells, 0);
            let fits = self.cells.len() < 1 << 31 && cfg.grid_dim.1 * cells.1 >= self.height as u32;
            let update = match &self.update_small {
                Some(small) if fits => small,
                _ => &self.update,
            };
            (cfg, None, update)
        };
        let mut launch = stream.launch_builder(update);
        launch.arg(&self.cells).arg(&mut self.next).arg(&w).arg(&h);
        if let Some(strip) = &strip {
            launch.arg(strip);
        }
        // SAFETY: the update kernels take (const unsigned char*, unsigned char*, int w, int h),
        // cuda-shared's then int strip; both buffers hold the layout's full size.
        unsafe { launch.launch(cfg) }?;
        std::mem::swap(&mut self.cells, &mut self.next);
        Ok(())
    }

    fn download(&self, stream: &Arc<CudaStream>) -> Result<Grid> {
        let (stride, origin) = self.layout();
        let bytes = copy_to_host(stream, &self.cells)?;
        Ok(Grid::from_bytes_in(
            self.width,
            self.height,
            &bytes,
            stride,
            origin,
        )?)
    }
}
