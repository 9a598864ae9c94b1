//! `cuda-texture`: byte cells in two CUDA arrays, read through texture objects with wrap
//! addressing (normalised coordinates, point sampling, integer reads), so that the texture unit
//! does the torus (on a bounded plane, border addressing: zero past the edges), and written
//! through surface objects. The arrays swap roles each generation.
//! Where the width is a multiple of four, each texel holds four cells (one 32-bit element: the
//! host's row bytes unchanged) and the kernel moves four cells a fetch and a store; elsewhere a
//! texel is one cell and the kernel reads 2×2 gathers.
//!
//! cudarc wraps texture and surface objects only in its raw `sys` layer; `CellArray` owns one
//! array with its texture and surface objects and destroys them on drop.

use std::sync::Arc;

use cudarc::driver::sys::{
    self, CUaddress_mode, CUarray, CUarray_format, CUfilter_mode, CUmemorytype, CUresourcetype,
};
use cudarc::driver::{CudaFunction, CudaStream, PushKernelArg};
use gol_core::rule::Topology;
use gol_core::{EngineId, Grid, Rule};

use crate::device::Gpu;
use crate::engine::Backend;
use crate::error::{CudaError, Result};
use crate::kernels::{self, KernelSpec, Tiling};
use crate::source;

/// The kernel for arrays of [`Texels::Quads`] (the spec's function reads single cells).
const QUAD_FUNCTION: &str = "update_cells_texture_quad";

/// A W×H array of byte cells with a texture object (wrap or border, point, integer reads) and a surface
/// object; its texels are single cells, or four cells where [`Texels::Quads`].
struct CellArray {
    stream: Arc<CudaStream>,
    array: CUarray,
    texture: u64,
    surface: u64,
    width: usize,
    height: usize,
}

// SAFETY: the handles are plain driver objects of the context, usable from any thread that
// binds the context, which every method does first.
unsafe impl Send for CellArray {}

impl CellArray {
    fn new(
        stream: &Arc<CudaStream>,
        width: usize,
        height: usize,
        texels: Texels,
        topology: Topology,
    ) -> Result<CellArray> {
        stream.context().bind_to_thread()?;
        let (format, flags) = match texels {
            // Surface writes, and 2x2 gathers for the texture reads.
            Texels::Cells => (
                CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8,
                sys::CUDA_ARRAY3D_SURFACE_LDST | sys::CUDA_ARRAY3D_TEXTURE_GATHER,
            ),
            Texels::Quads => (
                CUarray_format::CU_AD_FORMAT_UNSIGNED_INT32,
                sys::CUDA_ARRAY3D_SURFACE_LDST,
            ),
        };
        let descriptor = sys::CUDA_ARRAY3D_DESCRIPTOR {
            Width: texels.per_row(width),
            Height: height,
            Depth: 0,
            Format: format,
            NumChannels: 1,
            Flags: flags,
        };
        let mut array: CUarray = std::ptr::null_mut();
        // SAFETY: both pointers are valid for the call; the descriptor asks for a 2D array.
        unsafe { sys::cuArray3DCreate_v2(&mut array, &descriptor) }.result()?;
        let mut cells = CellArray {
            stream: stream.clone(),
            array,
            texture: 0,
            surface: 0,
            width,
            height,
        };
        // SAFETY: all zeros is a valid resource descriptor (its enum's first variant, ARRAY, is
        // 0; the rest are integers, pointers and a union of them).
        let mut resource: sys::CUDA_RESOURCE_DESC = unsafe { std::mem::zeroed() };
        resource.resType = CUresourcetype::CU_RESOURCE_TYPE_ARRAY;
        resource.res.array.hArray = array;
        let texture_desc = sys::CUDA_TEXTURE_DESC {
            addressMode: [match topology {
                Topology::Plane => CUaddress_mode::CU_TR_ADDRESS_MODE_BORDER,
                // Only tori reach here: the other grids are refused (Rule::check_engine).
                _ => CUaddress_mode::CU_TR_ADDRESS_MODE_WRAP,
            }; 3],
            filterMode: CUfilter_mode::CU_TR_FILTER_MODE_POINT,
            flags: sys::CU_TRSF_NORMALIZED_COORDINATES | sys::CU_TRSF_READ_AS_INTEGER,
            maxAnisotropy: 0,
            mipmapFilterMode: CUfilter_mode::CU_TR_FILTER_MODE_POINT,
            mipmapLevelBias: 0.0,
            minMipmapLevelClamp: 0.0,
            maxMipmapLevelClamp: 0.0,
            borderColor: [0.0; 4],
            reserved: [0; 12],
        };
        // SAFETY: the descriptors are initialised and name the live array; no view descriptor.
        unsafe {
            sys::cuTexObjectCreate(
                &mut cells.texture,
                &resource,
                &texture_desc,
                std::ptr::null(),
            )
        }
        .result()?;
        // SAFETY: as above; the array was created with surface load/store enabled.
        unsafe { sys::cuSurfObjectCreate(&mut cells.surface, &resource) }.result()?;
        Ok(cells)
    }

    /// Copies between host bytes (row-major, W×H) and the array, in the direction given, on
    /// the engine's stream, and waits for the copy.
    fn copy(&self, host: *mut u8, to_device: bool) -> Result<()> {
        self.stream.context().bind_to_thread()?;
        let (host_side, array_side) = (
            CUmemorytype::CU_MEMORYTYPE_HOST,
            CUmemorytype::CU_MEMORYTYPE_ARRAY,
        );
        let copy = sys::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: if to_device { host_side } else { array_side },
            srcHost: host as *const _,
            srcDevice: 0,
            srcArray: if to_device {
                std::ptr::null_mut()
            } else {
                self.array
            },
            srcPitch: self.width,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: if to_device { array_side } else { host_side },
            dstHost: host as *mut _,
            dstDevice: 0,
            dstArray: if to_device {
                self.array
            } else {
                std::ptr::null_mut()
            },
            dstPitch: self.width,
            WidthInBytes: self.width,
            Height: self.height,
        };
        // SAFETY: the host buffer holds width*height bytes (callers pass such a buffer), the
        // array has height rows of width bytes (one or four cells a texel), and the host buffer
        // outlives the copy: the stream is synchronised before returning.
        unsafe { sys::cuMemcpy2DAsync_v2(&copy, self.stream.cu_stream()) }.result()?;
        self.stream.synchronize()?;
        Ok(())
    }
}

impl Drop for CellArray {
    fn drop(&mut self) {
        // Errors cannot be reported from drop; the objects are gone with the context anyway.
        let _ = self.stream.synchronize();
        let _ = self.stream.context().bind_to_thread();
        // SAFETY: the objects were created by `new`, are destroyed once, and no launch that
        // uses them is pending after the synchronisation above.
        unsafe {
            let _ = sys::cuSurfObjectDestroy(self.surface);
            let _ = sys::cuTexObjectDestroy(self.texture);
            let _ = sys::cuArrayDestroy(self.array);
        }
    }
}

/// What one texel of the arrays holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Texels {
    /// One cell (a byte).
    Cells,
    /// Four cells in a 32-bit element, for widths that are multiples of four.
    Quads,
}

impl Texels {
    /// Texels in a row of `width` cells.
    fn per_row(self, width: usize) -> usize {
        match self {
            Texels::Cells => width,
            Texels::Quads => width / 4,
        }
    }
}

/// Two arrays, swapped each generation.
pub struct TextureCells {
    spec: &'static KernelSpec,
    texels: Texels,
    /// Threads the GPU holds at once (for the launch shape).
    resident_threads: u32,
    cells: CellArray,
    next: CellArray,
    update: CudaFunction,
}

/// cuda-texture's kernel: strips of rows read through textures, written through surfaces (the
/// kernel of four cells a texel is in the same module).
pub const KERNELS: [KernelSpec; 1] = [KernelSpec {
    engine: EngineId::CudaTexture,
    build_source: |rule| source::with_rule(rule, &[source::RULE, source::STRIP, source::TEXTURE]),
    function: "update_cells_texture",
    small_function: None,
    default_block: (128, 2),
    tiling: Tiling::Strips,
    fixed_block: false,
    shared_table: 0,
}];

impl Backend for TextureCells {
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
        let (width, height) = (grid.width(), grid.height());
        let (max_w, max_h) = gpu.info.max_array_2d;
        if width > max_w || height > max_h {
            return Err(CudaError::Refused(format!(
                "{engine}: a {width}x{height} grid is larger than the largest CUDA array with texture and surface access on the {}, {max_w}x{max_h}",
                gpu.info.name
            )));
        }
        gpu.check_memory(
            2 * (width * height) as u64,
            &format!("a {width}x{height} grid on {engine}"),
        )?;
        let spec = Self::spec(engine);
        let module = gpu.module(&spec.source(rule))?;
        let (texels, function) = if width % 4 == 0 {
            (Texels::Quads, QUAD_FUNCTION)
        } else {
            (Texels::Cells, spec.function)
        };
        Ok(TextureCells {
            spec,
            texels,
            resident_threads: gpu.resident_threads(),
            cells: CellArray::new(stream, width, height, texels, rule.topology())?,
            next: CellArray::new(stream, width, height, texels, rule.topology())?,
            update: module.load_function(function)?,
        })
    }

    fn upload(&mut self, _stream: &Arc<CudaStream>, grid: &Grid) -> Result<()> {
        let mut bytes = grid.to_bytes();
        self.cells.copy(bytes.as_mut_ptr(), true)
    }

    fn generation(&mut self, stream: &Arc<CudaStream>, block: (u32, u32)) -> Result<()> {
        let columns = self.texels.per_row(self.cells.width);
        let (cfg, strip) =
            self.spec
                .strips(columns, self.cells.height, block, self.resident_threads);
        let (w, h, strip) = (columns as i32, self.cells.height as i32, strip as i32);
        // SAFETY: update_cells_texture and update_cells_texture_quad take (unsigned long long
        // texture, unsigned long long surface, int texels per row, int h, int strip); both
        // objects belong to live arrays of w x h texels of the kind the function reads.
        unsafe {
            stream
                .launch_builder(&self.update)
                .arg(&self.cells.texture)
                .arg(&self.next.surface)
                .arg(&w)
                .arg(&h)
                .arg(&strip)
                .launch(cfg)?;
        }
        std::mem::swap(&mut self.cells, &mut self.next);
        Ok(())
    }

    fn describe(&self) -> Option<String> {
        (self.texels == Texels::Quads).then(|| "four cells a texel".to_string())
    }

    fn download(&self, _stream: &Arc<CudaStream>) -> Result<Grid> {
        let (width, height) = (self.cells.width, self.cells.height);
        let mut bytes = vec![0u8; width * height];
        self.cells.copy(bytes.as_mut_ptr(), false)?;
        Ok(Grid::from_bytes(width, height, &bytes)?)
    }
}
