//! `gol._gol`: the Python extension module under the package `gol` (`python/gol/`).
//!
//! Everything goes through the library's [`Simulation`] (or [`PlaneSimulation`] on the infinite
//! plane): this module converts arguments into a [`Setup`], numpy arrays into worlds and back,
//! and the library's errors into Python exceptions. A simulation sits behind a mutex, so that
//! `step` can run without the GIL while other Python threads (and other simulations) go on.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use gol::{
    Dim, Dimension, EngineId, Grid, PlaneSimulation, PlaneView, Rule, Setup, Simulation, Size,
    Start,
};
use gol_core::EngineOptions;
use num_bigint::{BigInt, BigUint};
use num_traits::ToPrimitive;
use numpy::ndarray::{Array2, Array3};
use numpy::{IntoPyArray, PyArray2, PyArray3, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyMemoryError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

pyo3::create_exception!(
    gol,
    PatternError,
    PyValueError,
    "A malformed pattern file; `path` names it and `line` the line (None where there is none)."
);

/// The library's error as the Python exception a caller expects.
fn error(e: gol::Error) -> PyErr {
    match e {
        gol::Error::Invalid(message) => PyValueError::new_err(message),
        gol::Error::Mismatch(message) => PyRuntimeError::new_err(message),
        gol::Error::Core(core) => core_error(core),
    }
}

fn core_error(e: gol_core::Error) -> PyErr {
    use gol_core::Error as E;
    let text = e.to_string();
    match e {
        E::Rule { .. } | E::Size(_) | E::Invalid(_) | E::UnknownEngine { .. } => {
            PyValueError::new_err(text)
        }
        E::Memory(_) => PyMemoryError::new_err(text),
        E::Parse { path, line, .. } => Python::attach(|py| {
            let err = PatternError::new_err(text);
            let value = err.value(py);
            let line = (line > 0).then_some(line);
            // Setting attributes on a fresh exception instance cannot fail.
            let _ = value.setattr("path", path.display().to_string());
            let _ = value.setattr("line", line);
            err
        }),
        // OSError(errno, strerror, filename) becomes FileNotFoundError, PermissionError … by
        // the errno, as Python's own file errors do.
        E::Io { path, source } => match source.raw_os_error() {
            Some(errno) => PyOSError::new_err((errno, source.to_string(), path)),
            None => PyOSError::new_err(text),
        },
        E::Engine(_) | E::Device(_) => PyRuntimeError::new_err(text),
    }
}

/// A rule from its text (any of Golly's notations, or a rule table's name).
fn rule(text: Option<&str>) -> PyResult<Option<Rule>> {
    text.map(Rule::parse).transpose().map_err(core_error)
}

/// An engine choice from its name (`auto` or an engine's).
fn engine(name: &str) -> PyResult<gol::EngineChoice> {
    name.parse().map_err(core_error)
}

/// A simulation of dimension `W` made from `setup`, without the GIL (making a large soup or
/// reading a large file takes a while).
fn simulation<W: Dimension>(py: Python<'_>, setup: Setup) -> PyResult<Mutex<Simulation<W>>> {
    py.detach(|| Simulation::<W>::new(&setup))
        .map(Mutex::new)
        .map_err(error)
}

fn lock<W: Dimension>(sim: &Mutex<Simulation<W>>) -> PyResult<MutexGuard<'_, Simulation<W>>> {
    sim.lock()
        .map_err(|_| PyRuntimeError::new_err("a step of this simulation failed midway"))
}

/// Advances `sim` by `generations` without the GIL, in chunks that grow while each takes under
/// 50 ms, checking for Python signals (Ctrl-C) between chunks.
fn step<W: Dimension>(
    py: Python<'_>,
    sim: &Mutex<Simulation<W>>,
    generations: u64,
) -> PyResult<()> {
    let mut left = generations;
    let mut chunk = generations.min(64);
    while left > 0 {
        let k = chunk.min(left);
        let took = py.detach(|| -> PyResult<Duration> {
            let start = Instant::now();
            lock(sim)?.step(k).map_err(error)?;
            Ok(start.elapsed())
        })?;
        left -= k;
        py.check_signals()?;
        if took < Duration::from_millis(50) {
            chunk = chunk.saturating_mul(2);
        }
    }
    Ok(())
}

/// The soup of `seed` (glibc's `rand() % 2`), or of the fast generator at `density`.
fn soup(seed: u32, density: Option<f64>) -> Start {
    match density {
        Some(density) => Start::Density { density, seed },
        None => Start::Glibc { seed },
    }
}

/// An array-like of `ndim` dimensions of 0/1 (or bool), or of states 0 to `states - 1`, as a
/// contiguous uint8 numpy array, checked.
fn cells_u8<'py>(
    py: Python<'py>,
    cells: &Bound<'py, PyAny>,
    ndim: usize,
    states: u32,
) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let array = np.call_method1("asarray", (cells,))?;
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    if shape.len() != ndim {
        return Err(PyValueError::new_err(format!(
            "cells must be a {ndim}-dimensional array; got shape {shape:?}"
        )));
    }
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    if !matches!(kind.as_str(), "b" | "i" | "u") {
        return Err(PyValueError::new_err(format!(
            "cells must be 0/1 integers or booleans; got an array of dtype kind {kind:?}"
        )));
    }
    if kind != "b" && array.getattr("size")?.extract::<usize>()? > 0 {
        let (least, most): (i64, i64) = (
            array.call_method0("min")?.extract()?,
            array.call_method0("max")?.extract()?,
        );
        if states == 2 && (least < 0 || most > 1) {
            return Err(PyValueError::new_err(format!(
                "cells must be 0 (dead) or 1 (alive); found values from {least} to {most}"
            )));
        }
        if least < 0 || most >= states as i64 {
            return Err(PyValueError::new_err(format!(
                "cells must be states 0 to {} (0 dead, 1 alive, 2 and up dying); found values from {least} to {most}",
                states - 1
            )));
        }
    }
    np.call_method1("ascontiguousarray", (array, "uint8"))
}

/// What a `Life` runs: a grid (a torus or a bounded plane), or the infinite plane.
enum World {
    Grid(Simulation<Grid>),
    Plane(PlaneSimulation),
}

/// A 2D Game of Life: on the infinite plane (a pattern file that names no size, or anything
/// with `infinite=True`), a torus, or a bounded plane under a rule such as `"B3/S23:P"`; a soup,
/// a pattern file or numpy cells, advanced on any engine.
///
/// Make one with `Life.soup`, `Life.load` or `Life.from_cells`; `step` advances it without
/// holding the GIL; `cells()` returns numpy arrays (shape (height, width), 1 = alive). On the
/// plane, generations, populations and coordinates are Python ints of any size.
#[pyclass(module = "gol", frozen)]
struct Life {
    sim: Mutex<World>,
}

/// `setup` made into a simulation (on the plane where it says so) without the GIL.
fn life(py: Python<'_>, setup: Setup) -> PyResult<Life> {
    let world = py.detach(|| -> gol::Result<World> {
        // A pattern file read once, for its header and its cells.
        let setup = setup.opened()?;
        Ok(match setup.on_plane()? {
            true => World::Plane(PlaneSimulation::new(&setup)?),
            false => World::Grid(Simulation::new(&setup)?),
        })
    });
    Ok(Life {
        sim: Mutex::new(world.map_err(error)?),
    })
}

/// The size of `width` and `height` given together, or neither.
fn size_of(width: Option<usize>, height: Option<usize>) -> PyResult<Option<Size>> {
    match (width, height) {
        (Some(width), Some(height)) => Ok(Some(Size::Rect { width, height })),
        (None, None) => Ok(None),
        _ => Err(PyValueError::new_err(
            "give both width and height, or neither",
        )),
    }
}

impl Life {
    fn lock(&self) -> PyResult<MutexGuard<'_, World>> {
        self.sim
            .lock()
            .map_err(|_| PyRuntimeError::new_err("a step of this simulation failed midway"))
    }

    /// Advances the plane by `generations` on a thread of its own, while this one looks for
    /// Python's signals every 50 ms: Ctrl-C stops the step inside it (the plane keeps the
    /// state of the last power of two completed) and raises KeyboardInterrupt.
    fn step_plane(&self, py: Python<'_>, generations: BigUint) -> PyResult<()> {
        let stop = AtomicBool::new(false);
        let finished = AtomicBool::new(false);
        std::thread::scope(|s| {
            let worker = s.spawn(|| {
                let stepped = match &mut *self.lock()? {
                    World::Plane(sim) => sim.step(&generations, &stop).map(drop).map_err(error),
                    World::Grid(_) => unreachable!("step_plane is for the plane"),
                };
                finished.store(true, Ordering::SeqCst);
                stepped
            });
            loop {
                py.detach(|| {
                    let until = Instant::now() + Duration::from_millis(50);
                    while !finished.load(Ordering::SeqCst) && Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                });
                if finished.load(Ordering::SeqCst) {
                    break;
                }
                if let Err(interrupted) = py.check_signals() {
                    stop.store(true, Ordering::SeqCst);
                    let _ = py.detach(|| worker.join());
                    return Err(interrupted);
                }
            }
            py.detach(|| worker.join())
                .map_err(|_| PyRuntimeError::new_err("a step of this simulation panicked"))?
        })
    }
}

#[pymethods]
impl Life {
    /// A `width` × `height` torus filled by glibc's `srand(seed)` and one `rand() % 2` per cell
    /// in row-major order (the C programs' soup: 1024², 1024 generations, seed 0 gives 47026),
    /// or, with `density`, each cell alive with that probability from a fast generator. With
    /// `infinite=True` the soup is placed on the infinite plane instead, its cell
    /// (width // 2, height // 2) on the origin.
    #[staticmethod]
    #[pyo3(signature = (width, height, *, seed=0, density=None, rule="B3/S23", engine="auto", infinite=false, memory=None))]
    #[allow(clippy::too_many_arguments)]
    fn soup(
        py: Python<'_>,
        width: usize,
        height: usize,
        seed: u32,
        density: Option<f64>,
        rule: &str,
        engine: &str,
        infinite: bool,
        memory: Option<u64>,
    ) -> PyResult<Life> {
        let setup = Setup {
            start: soup(seed, density),
            size: Some(Size::Rect { width, height }),
            rule: self::rule(Some(rule))?,
            engine: self::engine(engine)?,
            infinite,
            memory,
            ..Setup::default()
        };
        life(py, setup)
    }

    /// A pattern file (RLE, plaintext `.cells`, macrocell `.mc`, Life 1.06 or 1.05, any of them
    /// gzip-compressed or in a zip archive, `"pack.zip"` for its only pattern or
    /// `"pack.zip:dir/one.rle"` for one of several, its rule files used; multi-state under a
    /// Generations rule or a rule table). With no size, and no
    /// bounded-grid suffix on the file's rule, it runs on the infinite plane, placed as Golly
    /// places it (`infinite=True` forces the plane, overriding a suffix); with `width` and
    /// `height`, on that torus. `rule` overrides the file's, its topology included; `memory`
    /// caps the plane's memory in bytes.
    #[staticmethod]
    #[pyo3(signature = (path, *, width=None, height=None, rule=None, engine="auto", infinite=false, memory=None))]
    #[allow(clippy::too_many_arguments)]
    fn load(
        py: Python<'_>,
        path: PathBuf,
        width: Option<usize>,
        height: Option<usize>,
        rule: Option<&str>,
        engine: &str,
        infinite: bool,
        memory: Option<u64>,
    ) -> PyResult<Life> {
        let setup = Setup {
            start: Start::File(path),
            size: size_of(width, height)?,
            rule: self::rule(rule)?,
            engine: self::engine(engine)?,
            infinite,
            memory,
            ..Setup::default()
        };
        life(py, setup)
    }

    /// A torus holding a copy of `cells`: any 2D array-like of 0/1 or booleans, shape
    /// (height, width); under a Generations rule of C states, of states 0 to C - 1. With
    /// `infinite=True`, those cells on the infinite plane, the array's cell
    /// (width // 2, height // 2) on the origin.
    #[staticmethod]
    #[pyo3(signature = (cells, *, rule="B3/S23", engine="auto", infinite=false, memory=None))]
    fn from_cells(
        py: Python<'_>,
        cells: &Bound<'_, PyAny>,
        rule: &str,
        engine: &str,
        infinite: bool,
        memory: Option<u64>,
    ) -> PyResult<Life> {
        let rule = self::rule(Some(rule))?.expect("a rule given");
        let array = cells_u8(py, cells, 2, rule.states())?;
        let array = array.cast::<PyArray2<u8>>()?.readonly();
        let (height, width) = (array.shape()[0], array.shape()[1]);
        let bytes = array.as_slice()?;
        let grid = py
            .detach(|| match rule.states() {
                2 => Grid::from_bytes(width, height, bytes),
                states => Grid::from_states(width, height, states, bytes),
            })
            .map_err(core_error)?;
        let setup = Setup {
            start: Start::Grid(grid),
            rule: Some(rule),
            engine: self::engine(engine)?,
            infinite,
            memory,
            ..Setup::default()
        };
        life(py, setup)
    }

    /// Advances `generations` generations: any non-negative int on the infinite plane, up to
    /// 2^64 - 1 on a grid. The GIL is released meanwhile; Ctrl-C interrupts a long step (on a
    /// grid between chunks of generations, on the plane inside a step).
    #[pyo3(signature = (generations=BigUint::from(1u32)))]
    fn step(&self, py: Python<'_>, generations: BigUint) -> PyResult<()> {
        if matches!(&*self.lock()?, World::Plane(_)) {
            return self.step_plane(py, generations);
        }
        let Some(generations) = generations.to_u64() else {
            return Err(PyValueError::new_err(format!(
                "{generations} generations: a grid counts to 2^64 - 1; the infinite plane (infinite=True) goes further"
            )));
        };
        let mut left = generations;
        let mut chunk = generations.min(64);
        while left > 0 {
            let k = chunk.min(left);
            let took = py.detach(|| -> PyResult<Duration> {
                let start = Instant::now();
                match &mut *self.lock()? {
                    World::Grid(sim) => sim.step(k).map_err(error)?,
                    World::Plane(_) => unreachable!("the plane stepped above"),
                }
                Ok(start.elapsed())
            })?;
            left -= k;
            py.check_signals()?;
            if took < Duration::from_millis(50) {
                chunk = chunk.saturating_mul(2);
            }
        }
        Ok(())
    }

    /// Cells not in state 0 now (the live ones; under a Generations rule the dying ones too,
    /// Golly's population): an int of any size on the plane.
    #[getter]
    fn population(&self, py: Python<'_>) -> PyResult<BigUint> {
        py.detach(|| match &*self.lock()? {
            World::Grid(sim) => sim.population().map(BigUint::from).map_err(error),
            World::Plane(sim) => Ok(sim.population()),
        })
    }

    /// Cells in state 1 now: under a two-state rule the same as `population`.
    #[getter]
    fn live(&self, py: Python<'_>) -> PyResult<BigUint> {
        py.detach(|| match &*self.lock()? {
            World::Grid(sim) => match sim.live().map_err(error)? {
                Some(live) => Ok(live.into()),
                None => sim.population().map(BigUint::from).map_err(error),
            },
            World::Plane(sim) => Ok(sim.live().unwrap_or_else(|| sim.population())),
        })
    }

    /// Cell states of the rule: 2, or C of a Generations rule.
    #[getter]
    fn states(&self) -> PyResult<u32> {
        Ok(self.rule_now()?.states())
    }

    /// Generations advanced so far (an int of any size on the plane).
    #[getter]
    fn generation(&self) -> PyResult<BigUint> {
        Ok(match &*self.lock()? {
            World::Grid(sim) => sim.generation().into(),
            World::Plane(sim) => sim.generation().clone(),
        })
    }

    /// Cells per row; None on the infinite plane.
    #[getter]
    fn width(&self) -> PyResult<Option<usize>> {
        Ok(match &*self.lock()? {
            World::Grid(sim) => Some(sim.extent().0),
            World::Plane(_) => None,
        })
    }

    /// Rows; None on the infinite plane.
    #[getter]
    fn height(&self) -> PyResult<Option<usize>> {
        Ok(match &*self.lock()? {
            World::Grid(sim) => Some(sim.extent().1),
            World::Plane(_) => None,
        })
    }

    /// Where the cells live: "infinite plane", "torus" or "bounded plane".
    #[getter]
    fn universe(&self) -> PyResult<&'static str> {
        Ok(match &*self.lock()? {
            World::Grid(sim) => sim.rule().topology().name(),
            World::Plane(_) => "infinite plane",
        })
    }

    /// On the infinite plane, the smallest rectangle holding every cell not in state 0, as
    /// (x, y, width, height) in Golly's coordinates (ints of any size), or None when there is
    /// none; on a grid, the whole grid (0, 0, width, height).
    #[getter]
    fn bounding_box(&self, py: Python<'_>) -> PyResult<Option<(BigInt, BigInt, BigUint, BigUint)>> {
        py.detach(|| {
            Ok(match &*self.lock()? {
                World::Grid(sim) => {
                    let (w, h, _) = sim.extent();
                    Some((0.into(), 0.into(), w.into(), h.into()))
                }
                World::Plane(sim) => sim.bounding_box().map(|b| (b.x, b.y, b.width, b.height)),
            })
        })
    }

    /// What the pattern now is, as `gol identify` says (its keys are the JSON report's):
    /// its cells run on a plane of their own, at most `max_gens` generations, until they
    /// repeat; this Life does not move. A dict: "type" ("still life", "oscillator",
    /// "spaceship", "dies out" or "no period found"), and where found "apgcode", "period",
    /// "mod", "displacement", "speed", "heat", "temperature", "volatility", "population",
    /// "bounding_box", "settled_at", "trend".
    #[pyo3(signature = (max_gens=gol::identify::DEFAULT_LIMIT))]
    fn identify<'py>(&self, py: Python<'py>, max_gens: u64) -> PyResult<Bound<'py, PyAny>> {
        let text = py.detach(|| -> PyResult<String> {
            let start = Instant::now();
            let stop = AtomicBool::new(false);
            let (identity, source) = match &*self.lock()? {
                World::Grid(sim) => (
                    sim.identify(max_gens, &stop),
                    format!("the grid at generation {}", sim.generation()),
                ),
                World::Plane(sim) => (
                    sim.identify(max_gens, &stop),
                    format!("the pattern at generation {}", sim.generation()),
                ),
            };
            let report = gol::identify::Report::of(
                &identity.map_err(error)?,
                self.rule_now()?.to_string(),
                source,
                start.elapsed().as_secs_f64(),
            );
            Ok(report.json())
        })?;
        py.import("json")?.call_method1("loads", (text,))
    }

    /// The rule, in B/S notation.
    #[getter]
    fn rule(&self) -> PyResult<String> {
        Ok(self.rule_now()?.to_string())
    }

    /// The engine running the simulation (the one `auto` resolved to, never "auto").
    #[getter]
    fn engine(&self) -> PyResult<&'static str> {
        Ok(match &*self.lock()? {
            World::Grid(sim) => sim.engine().name(),
            World::Plane(sim) => sim.engine().name(),
        })
    }

    /// The cells now as a numpy uint8 array of shape (height, width), 1 = alive (under a
    /// Generations rule 2 and up the dying states). On a grid: the whole grid, or with `x`,
    /// `y`, `width`, `height` that window of the torus (wrapping round its edges). On the
    /// infinite plane: the bounding box's cells, or that window in Golly's coordinates (x and y
    /// any ints; width and height are then required).
    #[pyo3(signature = (x=None, y=None, width=None, height=None))]
    fn cells<'py>(
        &self,
        py: Python<'py>,
        x: Option<BigInt>,
        y: Option<BigInt>,
        width: Option<usize>,
        height: Option<usize>,
    ) -> PyResult<Bound<'py, PyArray2<u8>>> {
        let (rows, columns, bytes) = py.detach(|| -> PyResult<(usize, usize, Vec<u8>)> {
            let grid = match &*self.lock()? {
                World::Grid(sim) => {
                    let (w, h, _) = sim.extent();
                    let at = |v: &Option<BigInt>| -> PyResult<usize> {
                        v.as_ref().map_or(Ok(0), |v| {
                            v.to_usize().ok_or_else(|| {
                                PyValueError::new_err("a grid's window starts at x, y from 0")
                            })
                        })
                    };
                    let (x0, y0) = (at(&x)?, at(&y)?);
                    if (x0, y0, width, height) == (0, 0, None, None) {
                        sim.world()
                    } else {
                        sim.window(x0, y0, width.unwrap_or(w), height.unwrap_or(h))
                    }
                    .map_err(error)?
                }
                World::Plane(sim) => {
                    let view = match (x, y, width, height) {
                        (None, None, None, None) => match sim.bounding_box() {
                            Some(b) => PlaneView::of(&b),
                            None => return Ok((0, 0, Vec::new())),
                        },
                        (Some(x), Some(y), Some(width), Some(height)) => PlaneView {
                            x,
                            y,
                            width: width as u64,
                            height: height as u64,
                        },
                        _ => {
                            return Err(PyValueError::new_err(
                                "on the infinite plane give x, y, width and height, or none (the bounding box)",
                            ))
                        }
                    };
                    sim.window(&view).map_err(error)?
                }
            };
            Ok((grid.height(), grid.width(), grid.to_states()))
        })?;
        let array =
            Array2::from_shape_vec((rows, columns), bytes).expect("a grid's bytes fill its shape");
        Ok(array.into_pyarray(py))
    }

    /// Writes the cells now to `path`, in the format its extension names: on a grid `.rle`
    /// (the whole torus, with the rule and its `:TW,H` suffix), `.cells`, `.mc` or `.png`; on
    /// the infinite plane `.rle` (the bounding box, with its position and generation), `.mc` or
    /// `.png` (a picture of the bounding box).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| match &*self.lock()? {
            World::Grid(sim) => sim.save(&path).map_err(error),
            World::Plane(sim) => sim.save(&path, None, None).map_err(error),
        })
    }

    /// The world (on the plane, its bounding box) as a PNG picture, for notebooks.
    fn _repr_png_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let png = py.detach(|| -> PyResult<Vec<u8>> {
            match &*self.lock()? {
                World::Grid(sim) => {
                    let world = sim.world().map_err(error)?;
                    Ok(gol_core::pattern::encode(
                        gol_core::pattern::Format::Png,
                        &world,
                        sim.rule(),
                        sim.generation(),
                    ))
                }
                World::Plane(sim) => {
                    let frame = sim.picture(None, None).map_err(error)?;
                    let mut png = Vec::new();
                    gol_core::picture::write_png(&mut png, &frame)
                        .expect("writing to memory cannot fail");
                    Ok(png)
                }
            }
        })?;
        Ok(PyBytes::new(py, &png))
    }

    fn __repr__(&self) -> PyResult<String> {
        Ok(match &*self.lock()? {
            World::Grid(sim) => {
                let (w, h, _) = sim.extent();
                format!(
                    "Life({w}x{h} {}, rule {}, generation {}, engine {})",
                    sim.rule().topology().name(),
                    sim.rule(),
                    sim.generation(),
                    sim.engine()
                )
            }
            World::Plane(sim) => format!(
                "Life(infinite plane, rule {}, generation {}, engine {})",
                sim.rule(),
                sim.generation(),
                sim.engine()
            ),
        })
    }
}

impl Life {
    fn rule_now(&self) -> PyResult<Rule> {
        Ok(match &*self.lock()? {
            World::Grid(sim) => sim.rule(),
            World::Plane(sim) => sim.rule(),
        })
    }
}

/// A 3D Game of Life on an M×M×M torus (26 neighbours; B6/S567 by default): a soup, a `.bin`
/// file of the 3D contest's format or numpy cells of shape (M, M, M) indexed [x, y, z].
#[pyclass(module = "gol", frozen)]
struct Cube {
    sim: Mutex<Simulation<gol::Cube>>,
}

#[pymethods]
impl Cube {
    /// An M³ torus (`side` = M) filled by glibc's `srand(seed)` / `rand() % 2`, one call per
    /// byte in the `.bin` order, or at `density` from a fast generator.
    #[staticmethod]
    #[pyo3(signature = (side, *, seed=0, density=None, rule="B6/S567", engine="auto"))]
    fn soup(
        py: Python<'_>,
        side: usize,
        seed: u32,
        density: Option<f64>,
        rule: &str,
        engine: &str,
    ) -> PyResult<Cube> {
        let setup = Setup {
            start: soup(seed, density),
            dim: Dim::Three,
            size: Some(Size::Side(side)),
            rule: self::rule(Some(rule))?,
            engine: self::engine(engine)?,
            ..Setup::default()
        };
        Ok(Cube {
            sim: simulation(py, setup)?,
        })
    }

    /// A `.bin` file (u64 M, u64 generation stamp T, M³ bytes); `generation` starts at T.
    #[staticmethod]
    #[pyo3(signature = (path, *, rule=None, engine="auto"))]
    fn load(py: Python<'_>, path: PathBuf, rule: Option<&str>, engine: &str) -> PyResult<Cube> {
        let setup = Setup {
            start: Start::File(path),
            rule: self::rule(rule)?,
            engine: self::engine(engine)?,
            ..Setup::default()
        };
        Ok(Cube {
            sim: simulation(py, setup)?,
        })
    }

    /// A cube holding a copy of `cells`: a 3D array-like of 0/1 or booleans, shape (M, M, M),
    /// indexed [x, y, z].
    #[staticmethod]
    #[pyo3(signature = (cells, *, rule="B6/S567", engine="auto"))]
    fn from_cells(
        py: Python<'_>,
        cells: &Bound<'_, PyAny>,
        rule: &str,
        engine: &str,
    ) -> PyResult<Cube> {
        let array = cells_u8(py, cells, 3, 2)?;
        let array = array.cast::<PyArray3<u8>>()?.readonly();
        let shape = array.shape().to_vec();
        let side = shape[0];
        if shape.iter().any(|&s| s != side) || side == 0 {
            return Err(PyValueError::new_err(format!(
                "a cube's cells have shape (M, M, M) with M ≥ 1; got {shape:?}"
            )));
        }
        let bytes = array.as_slice()?;
        let cube = py
            .detach(|| gol::Cube::from_bytes(side, bytes, side))
            .map_err(core_error)?;
        let setup = Setup {
            start: Start::Cube(cube),
            rule: self::rule(Some(rule))?,
            engine: self::engine(engine)?,
            ..Setup::default()
        };
        Ok(Cube {
            sim: simulation(py, setup)?,
        })
    }

    /// Advances `generations` generations without the GIL (Ctrl-C interrupts between chunks).
    #[pyo3(signature = (generations=1))]
    fn step(&self, py: Python<'_>, generations: u64) -> PyResult<()> {
        step(py, &self.sim, generations)
    }

    /// Live cells now.
    #[getter]
    fn population(&self, py: Python<'_>) -> PyResult<u64> {
        py.detach(|| lock(&self.sim)?.population().map_err(error))
    }

    /// The generation stamp: the input file's stamp plus the generations advanced.
    #[getter]
    fn generation(&self) -> PyResult<u64> {
        Ok(lock(&self.sim)?.stamp())
    }

    /// M, the cube's side.
    #[getter]
    fn side(&self) -> PyResult<usize> {
        Ok(lock(&self.sim)?.extent().0)
    }

    /// The rule, in B/S notation.
    #[getter]
    fn rule(&self) -> PyResult<String> {
        Ok(lock(&self.sim)?.rule().to_string())
    }

    /// The engine running the simulation (never "auto").
    #[getter]
    fn engine(&self) -> PyResult<&'static str> {
        Ok(lock(&self.sim)?.engine().name())
    }

    /// The cells now: numpy uint8 of shape (M, M, M), indexed [x, y, z], 1 = alive.
    fn cells<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray3<u8>>> {
        let (side, bytes) = py.detach(|| -> PyResult<(usize, Vec<u8>)> {
            let cube = lock(&self.sim)?.world().map_err(error)?;
            Ok((cube.side(), cube.to_bytes(cube.side())))
        })?;
        let array = Array3::from_shape_vec((side, side, side), bytes)
            .expect("a cube's bytes fill its shape");
        Ok(array.into_pyarray(py))
    }

    /// Writes the cube to `path` as a `.bin` file stamped with `generation`.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| lock(&self.sim)?.save(&path).map_err(error))
    }

    fn __repr__(&self) -> PyResult<String> {
        let sim = lock(&self.sim)?;
        let m = sim.extent().0;
        Ok(format!(
            "Cube({m}x{m}x{m} torus, rule {}, generation {}, engine {})",
            sim.rule(),
            sim.stamp(),
            sim.engine()
        ))
    }
}

/// Every engine of this build: one dict per engine with its `name`, the `dims` of the grids it
/// runs (`[2]`, `[2, 3]`, or `[]` for an engine of the infinite plane only), whether it runs the
/// infinite `plane`, whether it is `available` here and, where not, the `reason`.
#[pyfunction]
fn engines(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    let flat = gol::registry::ids::<Grid>();
    let solid = gol::registry::ids::<gol::Cube>();
    let mut list = Vec::new();
    for id in EngineId::ALL {
        let dims: Vec<u32> = [(2, flat.contains(&id)), (3, solid.contains(&id))]
            .into_iter()
            .filter_map(|(d, has)| has.then_some(d))
            .collect();
        let made = py.detach(|| {
            let options = EngineOptions::default();
            if id.on_plane() {
                Ok(())
            } else if flat.contains(&id) {
                gol::registry::create::<Grid>(id, &options).map(drop)
            } else {
                gol::registry::create::<gol::Cube>(id, &options).map(drop)
            }
        });
        let entry = PyDict::new(py);
        entry.set_item("name", id.name())?;
        entry.set_item("dims", dims)?;
        entry.set_item("plane", id.on_plane())?;
        entry.set_item("available", made.is_ok())?;
        entry.set_item("reason", made.err().map(|e| e.to_string()))?;
        list.push(entry);
    }
    Ok(list)
}

/// Cross-checks every engine available here against the scalar oracle, as `gol verify` does
/// (`quick`: as `gol verify --quick`); returns None, or raises RuntimeError naming the first
/// differing case. `seed` replays a run's random cases.
#[pyfunction]
#[pyo3(signature = (quick=true, seed=None))]
fn verify(py: Python<'_>, quick: bool, seed: Option<u64>) -> PyResult<()> {
    let options = gol::verify::Options {
        quick,
        seed,
        ..gol::verify::Options::default()
    };
    py.detach(|| gol::verify::run(&options, &mut |_| {}))
        .map_err(error)
}

/// Sets the folders searched first for Golly rule files (NAME.rule), before a pattern file's
/// own folder and Golly's Rules folder, as `gol --rules DIR` does; raises ValueError for one
/// that is not a folder.
#[pyfunction]
fn rule_folders(folders: Vec<std::path::PathBuf>) -> PyResult<()> {
    if let Some(bad) = folders.iter().find(|f| !f.is_dir()) {
        return Err(PyValueError::new_err(format!(
            "{}: not a folder",
            bad.display()
        )));
    }
    gol::rule_table::set_folders(folders);
    Ok(())
}

/// apgsearch's C1 soup census of B3/S23: soups 0 to `soups` - 1 of `root` run on every core
/// until they settle, their ash cut into objects and named by apgcode, as `gol census` does.
/// A dict: "haul" (the haul file's text, apgsearch's format), "counts" (apgcode to count),
/// "soups". The GIL is released meanwhile.
#[pyfunction]
fn census<'py>(py: Python<'py>, root: &str, soups: u64) -> PyResult<Bound<'py, PyDict>> {
    gol_census::census::check_root(root).map_err(PyValueError::new_err)?;
    if soups == 0 {
        return Err(PyValueError::new_err(
            "soups=0: a census needs at least one soup",
        ));
    }
    let haul = py.detach(|| {
        let mut haul = gol_census::census::Haul::default();
        let stop = AtomicBool::new(false);
        haul.add_all(0, &gol_census::census::tallies(root, 0, soups, &stop));
        haul
    });
    let mut text = String::new();
    haul.write(root, &mut text);
    let out = PyDict::new(py);
    out.set_item("haul", text)?;
    out.set_item("counts", haul.counts.clone())?;
    out.set_item("soups", haul.soups)?;
    Ok(out)
}

/// The 16 x 16 cells of apgsearch's C1 soup `soup_id` (root and index, such as "k_testseed0"),
/// as a numpy array of 0 and 1, rows top first.
#[pyfunction(name = "soup")]
fn apgsearch_soup<'py>(py: Python<'py>, soup_id: &str) -> Bound<'py, PyArray2<u8>> {
    let rows = gol_census::soup::rows(soup_id);
    Array2::from_shape_fn((16, 16), |(y, x)| (rows[y] >> x & 1) as u8).into_pyarray(py)
}

#[pymodule]
fn _gol(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Life>()?;
    m.add_class::<Cube>()?;
    m.add_function(wrap_pyfunction!(engines, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(rule_folders, m)?)?;
    m.add_function(wrap_pyfunction!(census, m)?)?;
    m.add_function(wrap_pyfunction!(apgsearch_soup, m)?)?;
    m.add("PatternError", m.py().get_type::<PatternError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
