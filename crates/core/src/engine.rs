//! The one interface every engine implements, the identity of engines ([`EngineId`]), the
//! optional row access that slabs need ([`RowAccess`]), and registry entries ([`EngineSpec`]).

use std::ops::{Deref, DerefMut};

use crate::cube::Cube;
use crate::error::{Error, Result};
use crate::grid::Grid;
use crate::picture::{Frame, Look, View};
use crate::rule::Rule;

/// What an engine advances: a 2D [`Grid`] or a 3D [`Cube`], both tori.
pub trait World: Clone + Send + Sync + 'static {
    /// `2D` or `3D`, for messages.
    const DIMENSION: &'static str;
    /// 2 or 3.
    const AXES: u32;
    /// Neighbours of a cell (8 or 26): the highest count a rule may mention.
    const NEIGHBOURS: u32;

    /// Number of cells.
    fn cells(&self) -> u64;

    /// Number of live cells.
    fn population(&self) -> u64;

    /// The rows of the bit layout: a grid itself, a cube's lines (see [`crate::cube`]). Slabs,
    /// checkpoints and [`RowAccess::read_rows`] work on these rows.
    fn rows(&self) -> &Grid;

    /// The world whose rows are `rows`; refused where they cannot be (a cube needs M² rows of
    /// M cells).
    fn from_rows(rows: Grid) -> Result<Self>;

    /// Rows of [`World::rows`] in one layer of the axis that slabs split ([`crate::slab`]), for
    /// a world whose rows are `width` cells wide: one row in 2D, one plane of constant x (M
    /// lines) in 3D.
    fn layer_rows(width: usize) -> usize;

    /// The slab whose rows are `rows`, whole layers ([`World::layer_rows`]): a torus of its own
    /// along the split axis, as the engines of a decomposed world advance it.
    fn slab(rows: Grid) -> Result<Self>;
}

impl World for Grid {
    const DIMENSION: &'static str = "2D";
    const AXES: u32 = 2;
    const NEIGHBOURS: u32 = 8;

    fn cells(&self) -> u64 {
        Grid::cells(self)
    }

    fn population(&self) -> u64 {
        Grid::population(self)
    }

    fn rows(&self) -> &Grid {
        self
    }

    fn from_rows(rows: Grid) -> Result<Grid> {
        Ok(rows)
    }

    fn layer_rows(_width: usize) -> usize {
        1
    }

    fn slab(rows: Grid) -> Result<Grid> {
        Ok(rows)
    }
}

impl World for Cube {
    const DIMENSION: &'static str = "3D";
    const AXES: u32 = 3;
    const NEIGHBOURS: u32 = 26;

    fn cells(&self) -> u64 {
        Cube::cells(self)
    }

    fn population(&self) -> u64 {
        Cube::population(self)
    }

    fn rows(&self) -> &Grid {
        self.lines()
    }

    fn from_rows(rows: Grid) -> Result<Cube> {
        Cube::from_lines(rows)
    }

    fn layer_rows(width: usize) -> usize {
        width
    }

    fn slab(rows: Grid) -> Result<Cube> {
        Cube::slab(rows)
    }
}

/// Which engine: every engine of every dimension, by identity rather than by name.
///
/// The names are those given to `--engine` and reported by `gol run`; an engine of the same
/// idea has the same id in 2D and 3D (`cpu-bitsliced`, `cuda-bitsliced`, …). Which of them
/// exist for a dimension is up to that dimension's registry.
///
/// ```
/// use gol_core::EngineId;
///
/// let id: EngineId = "cuda-bitsliced".parse().unwrap();
/// assert_eq!(id, EngineId::CudaBitsliced);
/// assert!(id.on_gpu() && id.gives_rows());
/// assert_eq!(EngineId::CpuScalar.to_string(), "cpu-scalar");
/// assert!("cuda-fast".parse::<EngineId>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EngineId {
    /// Byte cells with ghost cells, the sequential C program: the oracle.
    CpuScalar,
    /// Byte cells, the next state from a `states[2][9]` table.
    CpuTable,
    /// 64 cells per word, bit-sliced counts, SIMD chosen at run time, all cores.
    CpuBitsliced,
    /// Byte cells of up to 256 states on every core: rule tables by flat lookup, Larger than
    /// Life by running sums (`cpu::states`).
    CpuStates,
    /// Byte cells of up to 256 states on the GPU: rule tables and Larger than Life
    /// (`gol_cuda::states`).
    CudaStates,
    /// Byte cells in global memory, one thread per cell.
    CudaGlobal,
    /// As [`EngineId::CudaGlobal`], the rule table in `__constant__` memory.
    CudaConstant,
    /// Byte cells, row neighbours met in shared memory.
    CudaShared,
    /// Byte cells read through textures with wrap addressing.
    CudaTexture,
    /// 32 cells per word, a 4×3-window lookup table.
    CudaLut,
    /// 32 cells per word, a 6×3-window lookup table.
    CudaLut6,
    /// 32 cells per word, bit-sliced counts, many generations per launch: the fastest.
    CudaBitsliced,
    /// 3D: four byte cells per 32-bit word.
    CudaSwar,
    /// The infinite plane: Gosper's HashLife on every core (`gol_plane::hashlife`).
    Hashlife,
    /// The infinite plane: dense tiles of 64 × 64 cells where there are cells, asleep where
    /// nothing changes, on every core (`gol_plane::tiles`).
    Tiles,
    /// The infinite plane: one dense window of byte cells that grows and shrinks with the
    /// pattern, for Larger than Life rules (`gol_plane::window`).
    Window,
}

impl EngineId {
    /// Every engine id.
    pub const ALL: [EngineId; 16] = [
        EngineId::CpuScalar,
        EngineId::CpuTable,
        EngineId::CpuBitsliced,
        EngineId::CpuStates,
        EngineId::CudaStates,
        EngineId::CudaGlobal,
        EngineId::CudaConstant,
        EngineId::CudaShared,
        EngineId::CudaTexture,
        EngineId::CudaLut,
        EngineId::CudaLut6,
        EngineId::CudaBitsliced,
        EngineId::CudaSwar,
        EngineId::Hashlife,
        EngineId::Tiles,
        EngineId::Window,
    ];

    /// The name given to `--engine`.
    pub const fn name(self) -> &'static str {
        match self {
            EngineId::CpuScalar => "cpu-scalar",
            EngineId::CpuTable => "cpu-table",
            EngineId::CpuBitsliced => "cpu-bitsliced",
            EngineId::CpuStates => "cpu-states",
            EngineId::CudaStates => "cuda-states",
            EngineId::CudaGlobal => "cuda-global",
            EngineId::CudaConstant => "cuda-constant",
            EngineId::CudaShared => "cuda-shared",
            EngineId::CudaTexture => "cuda-texture",
            EngineId::CudaLut => "cuda-lut",
            EngineId::CudaLut6 => "cuda-lut6",
            EngineId::CudaBitsliced => "cuda-bitsliced",
            EngineId::CudaSwar => "cuda-swar",
            EngineId::Hashlife => "hashlife",
            EngineId::Tiles => "tiles",
            EngineId::Window => "window",
        }
    }

    /// Whether the engine runs on a GPU (and so needs one, and pays for its start-up).
    pub const fn on_gpu(self) -> bool {
        !matches!(
            self,
            EngineId::CpuScalar
                | EngineId::CpuTable
                | EngineId::CpuBitsliced
                | EngineId::CpuStates
                | EngineId::Hashlife
                | EngineId::Tiles
                | EngineId::Window
        )
    }

    /// Whether the engine runs the infinite plane (and no grid).
    pub const fn on_plane(self) -> bool {
        matches!(
            self,
            EngineId::Hashlife | EngineId::Tiles | EngineId::Window
        )
    }

    /// Whether the engine hands out [`RowAccess`] ([`Engine::rows`]), and so can advance one
    /// slab of a decomposed world ([`crate::slab`]).
    pub const fn gives_rows(self) -> bool {
        matches!(self, EngineId::CpuBitsliced | EngineId::CudaBitsliced)
    }

    /// The host memory a run of a world of `extent` (width, height and, for a cube, its
    /// depth) under `rule` takes on this engine, in bytes, counted at once
    /// before anything is made: the world as bits (a cube as side² rows of side cells) with its
    /// dying states' planes, once as made and once read back for the report and outputs; 16
    /// bytes a row for the lists of rows that soups and readers work through (a 1×3·10⁸ soup
    /// on cpu-scalar peaked at 31 bytes a row in all); and the engine's
    /// own buffers: two more worlds for the bit-sliced CPU engines, two bytes a cell (with ghost
    /// cells for the seminar's) for the byte-cell CPU engines (cpu-states' two bit arrays where
    /// it keeps the rule in bits), one world as a GPU engine's staging copy, none for the
    /// plane's engines (their memory is `--memory`'s).
    pub fn run_bytes(
        self,
        (width, height, depth): (usize, usize, Option<usize>),
        rule: Rule,
    ) -> u64 {
        let rows = height as u64 * depth.unwrap_or(1) as u64;
        let planes = 1 + crate::grid::age_planes(rule.states()) as u64;
        let world = (8 * crate::grid::words_per_row(width) as u64)
            .saturating_mul(rows)
            .saturating_mul(planes);
        let own = match self {
            EngineId::CpuBitsliced => world.saturating_mul(2),
            EngineId::CpuScalar | EngineId::CpuTable => {
                (2 * (width as u64 + 2)).saturating_mul(rows + 2)
            }
            EngineId::CpuStates => crate::cpu::States::buffer_bytes(rule, width, height),
            EngineId::Hashlife | EngineId::Tiles | EngineId::Window => 0,
            _ => world,
        };
        world
            .saturating_mul(2)
            .saturating_add(rows.saturating_mul(16))
            .saturating_add(own)
    }

    /// Whether the engine is one of the byte-cell programs kept for comparison, whose whole
    /// state is a byte a cell: far slower than the bit-sliced engines on every size.
    pub const fn byte_cells(self) -> bool {
        matches!(
            self,
            EngineId::CpuScalar
                | EngineId::CpuTable
                | EngineId::CudaGlobal
                | EngineId::CudaConstant
                | EngineId::CudaShared
                | EngineId::CudaTexture
        )
    }
}

impl std::fmt::Display for EngineId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for EngineId {
    type Err = Error;

    /// The engine of that name; an unknown name is refused with the list of names.
    fn from_str(name: &str) -> Result<EngineId> {
        EngineId::ALL
            .into_iter()
            .find(|id| id.name() == name)
            .ok_or_else(|| Error::UnknownEngine {
                name: name.to_string(),
                known: EngineId::ALL.iter().map(|id| id.name()).collect(),
            })
    }
}

/// A Game of Life engine: holds a torus (a 2D [`Grid`] by default, or a 3D [`Cube`]) and
/// advances it under a rule.
///
/// The life cycle is `load` (copy a world in, in whatever layout the engine likes), any number
/// of `step` calls, then `snapshot` or `population` to read the state back. Every engine must
/// give bit-for-bit the same states as the oracle of its dimension ([`crate::cpu::Scalar`],
/// [`crate::cpu::Scalar3d`]).
///
/// ```
/// use gol_core::{cpu, Engine, Grid, Rule};
///
/// // A blinker on a 5×5 torus turns from a row into a column and back.
/// let mut grid = Grid::new(5, 5)?;
/// for x in 1..4 {
///     grid.set(x, 2, true);
/// }
/// let mut engine = cpu::Bitsliced::default();
/// engine.load(&grid, Rule::LIFE)?;
/// engine.step(1)?;
/// let turned = engine.snapshot()?;
/// assert!(turned.get(2, 1) && turned.get(2, 3) && !turned.get(1, 2));
/// engine.step(1)?;
/// assert_eq!(engine.snapshot()?, grid);
/// # Ok::<(), gol_core::Error>(())
/// ```
pub trait Engine<W: World = Grid>: Send {
    /// Which engine this is.
    fn id(&self) -> EngineId;

    /// The engine's registered name (`cpu-scalar`, `cpu-bitsliced`, …).
    fn name(&self) -> &'static str {
        self.id().name()
    }

    /// Replaces the engine's state with `world`, to be advanced under `rule`.
    fn load(&mut self, world: &W, rule: Rule) -> Result<()>;

    /// Advances the loaded state by `generations` generations.
    fn step(&mut self, generations: u64) -> Result<()>;

    /// The current state.
    fn snapshot(&self) -> Result<W>;

    /// The number of live cells now.
    fn population(&self) -> Result<u64>;

    /// Row access to the state, where the engine gives it ([`EngineId::gives_rows`]): what
    /// lets it advance one slab of a larger world ([`crate::slab`]). `None` by default.
    fn rows(&self) -> Option<&dyn RowAccess> {
        None
    }

    /// [`Engine::rows`], to write rows too.
    fn rows_mut(&mut self) -> Option<&mut dyn RowAccess> {
        None
    }

    /// Queues `generations` generations without waiting for them, where the engine runs on a
    /// device with a queue of work ([`DeviceRows::queue`]); everything else the engine does
    /// comes after them. By default the same as [`Engine::step`].
    fn queue(&mut self, generations: u64) -> Result<()> {
        self.step(generations)
    }

    /// Queues one round of a slab ([`crate::slab`]) as [`Engine::queue`] does: `generations`
    /// (at most the halo depth) of an extended slab whose halos, `halos.0` layers before the
    /// interior and `halos.1` after it, are being refreshed meanwhile by copies on other queues.
    /// Work that neither reads a halo layer nor changes the current layers (it may write
    /// elsewhere) may be queued first; `refreshed(None)` is then called, and work queued after
    /// it waits for the new halos. `refreshed(Some(queue))` makes another queue of the engine's
    /// device wait for them instead; the engine's own queue must then wait for that queue's
    /// work before it reads a halo or changes the current layers. Only the layers that can
    /// still be exact need be made: after t generations of the round, those at least t layers
    /// from an end that has a halo; the others may be left holding anything. By default
    /// `refreshed(None)`, then [`Engine::queue`].
    fn queue_round(
        &mut self,
        generations: u64,
        halos: (usize, usize),
        refreshed: &mut dyn FnMut(Option<u64>) -> Result<()>,
    ) -> Result<()> {
        let _ = halos;
        refreshed(None)?;
        self.queue(generations)
    }

    /// Waits for the work [`Engine::queue`] left running, and accounts for its time in
    /// [`Engine::timings`]. By default nothing to wait for.
    fn wait(&mut self) -> Result<()> {
        Ok(())
    }

    /// How the engine runs here (instruction set, threads, device…), for reports.
    fn details(&self) -> String {
        String::new()
    }

    /// Times the engine measured itself, in seconds, by name (for a GPU engine: the
    /// host-to-device copy, the generation loop timed with device events, the copy back).
    fn timings(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// Access to whole rows of an engine's state, in the layout of [`World::rows`]: the capability
/// an engine hands out through [`Engine::rows`] when it can advance one slab of a decomposed
/// world ([`crate::slab`]).
pub trait RowAccess {
    /// Copies rows `first..` of the current state into `words` (whole rows).
    fn read_rows(&self, first: usize, words: &mut [u64]) -> Result<()>;

    /// Overwrites rows `first..` of the current state with `words` (whole rows, padding bits
    /// zero).
    fn write_rows(&mut self, first: usize, words: &[u64]) -> Result<()>;

    /// Where rows `first..first + rows` of the current state lie in GPU memory, so that another
    /// GPU can copy them without the host ([`crate::slab::PeerCopy`]). `None` (the default)
    /// where the state is not kept that way. Nothing is waited for: the rows hold these
    /// generations' values once the work queued on [`DeviceRows::queue`] so far has run.
    fn device_rows(&self, first: usize, rows: usize) -> Option<Result<DeviceRows>> {
        let _ = (first, rows);
        None
    }

    /// Live cells in rows `first..first + rows` of the current state, where the engine counts
    /// them where they lie (on a GPU); `None` (the default) where reading them with
    /// [`RowAccess::read_rows`] is as good.
    fn population_of_rows(&self, first: usize, rows: usize) -> Option<Result<u64>> {
        let _ = (first, rows);
        None
    }

    /// The picture of `view` of a grid, one pixel for each `block` × `block` cells, as
    /// [`crate::picture::blocks`] makes it, made where the cells lie (on a GPU, so that only
    /// the picture crosses the bus); `None` (the default) where reading rows is as good.
    fn blocks(&self, view: &View, block: usize) -> Option<Result<Frame>> {
        let _ = (view, block);
        None
    }

    /// What `look` shows of a whole cube, as [`crate::picture::cube_counts`] counts it, counted
    /// where the cells lie; `None` (the default) as for [`RowAccess::blocks`].
    fn projection(&self, look: Look) -> Option<Result<Vec<u32>>> {
        let _ = look;
        None
    }

    /// `words` zeroed words of host memory for rows that go through [`RowAccess::read_rows`]
    /// and [`RowAccess::write_rows`] again and again, as halos do: page-locked for engines that
    /// copy them across a bus (so that the copies go straight to the device), plain memory by
    /// default.
    fn host_rows(&self, words: usize) -> Result<HostRows> {
        Ok(HostRows::zeroed(words))
    }
}

/// Whole rows of an engine's state in one GPU's memory ([`RowAccess::device_rows`]). A description
/// only: copying through it is the unsafe business of [`crate::slab::PeerCopy`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceRows {
    /// Ordinal of the GPU.
    pub device: usize,
    /// Device address of the first row.
    pub address: u64,
    /// Length in bytes.
    pub bytes: usize,
    /// The engine's queue of device work (a CUDA stream handle): the rows hold their values
    /// once the work queued there so far has run, and work queued there later may change them.
    pub queue: u64,
}

/// Host memory for rows that travel between engines ([`RowAccess::host_rows`]): ordinary memory,
/// or memory of an engine's own kind behind the same slice.
pub struct HostRows(Box<dyn DerefMut<Target = [u64]> + Send + Sync>);

impl HostRows {
    /// `words` zeroed words of ordinary memory.
    pub fn zeroed(words: usize) -> HostRows {
        HostRows(Box::new(vec![0; words]))
    }

    /// Rows in `memory`, which an engine allocated its own way.
    pub fn new(memory: impl DerefMut<Target = [u64]> + Send + Sync + 'static) -> HostRows {
        HostRows(Box::new(memory))
    }
}

impl Default for HostRows {
    fn default() -> HostRows {
        HostRows::zeroed(0)
    }
}

impl Deref for HostRows {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        &self.0
    }
}

impl DerefMut for HostRows {
    fn deref_mut(&mut self) -> &mut [u64] {
        &mut self.0
    }
}

/// The refusal of an engine that has no row access ([`Engine::rows`]).
pub fn no_slabs(id: EngineId) -> Error {
    let able: Vec<&str> = EngineId::ALL
        .iter()
        .filter(|id| id.gives_rows())
        .map(|id| id.name())
        .collect();
    Error::Engine(format!(
        "{id} cannot run as a slab of a decomposed world ({} can)",
        able.join(" and ")
    ))
}

/// Options that tune an engine without changing its results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EngineOptions {
    /// Thread-block size (x, y) for the GPU engines; `None` for each engine's default.
    pub block: Option<(u32, u32)>,
    /// The GPU (CUDA device ordinal) a GPU engine runs on.
    pub device: usize,
}

impl EngineOptions {
    /// Fails if options of the GPU engines (a block size, a device other than the first) are
    /// given to an engine that has none (the CPU engines).
    pub fn refuse_gpu_options(&self) -> Result<()> {
        match (self.block, self.device) {
            (Some((x, y)), _) => Err(Error::Engine(format!(
                "--block {x}x{y} applies to the CUDA engines only"
            ))),
            (None, 0) => Ok(()),
            (None, device) => Err(Error::Engine(format!(
                "device {device}: the CPU engines run on no GPU"
            ))),
        }
    }
}

/// How an engine is found and made: one entry of a registry of one dimension.
pub struct EngineSpec<W: World = Grid> {
    /// Which engine.
    pub id: EngineId,
    /// One line on what the engine does.
    pub description: &'static str,
    /// Makes an engine; fails with a clear message where it cannot run on this machine.
    pub create: fn(&EngineOptions) -> Result<Box<dyn Engine<W>>>,
}

impl<W: World> Clone for EngineSpec<W> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<W: World> Copy for EngineSpec<W> {}

impl<W: World> std::fmt::Debug for EngineSpec<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id.name())
    }
}

impl<W: World> EngineSpec<W> {
    /// The engine's name ([`EngineId::name`]).
    pub fn name(&self) -> &'static str {
        self.id.name()
    }
}

/// Finds `id` in `specs`, or explains which engines there are for this dimension.
pub fn find<W: World>(specs: &[EngineSpec<W>], id: EngineId) -> Result<&EngineSpec<W>> {
    specs.iter().find(|s| s.id == id).ok_or_else(|| {
        let names: Vec<&str> = specs.iter().map(|s| s.name()).collect();
        Error::Engine(format!(
            "{id} is not an engine for {}; engines for {}: auto, {}",
            W::DIMENSION,
            W::DIMENSION,
            names.join(", ")
        ))
    })
}

/// Runs `generations` generations of `world` under `rule` on a fresh engine from `spec` and
/// returns the final state: the shape every cross-check uses.
pub fn evolve<W: World>(
    spec: &EngineSpec<W>,
    world: &W,
    rule: Rule,
    generations: u64,
) -> Result<W> {
    let mut engine = (spec.create)(&EngineOptions::default())?;
    engine.load(world, rule)?;
    engine.step(generations)?;
    engine.snapshot()
}
