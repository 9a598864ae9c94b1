//! The simulation of `gol view`, in a thread of its own: it advances the world, takes the
//! viewers' frames between steps and obeys their commands.
//!
//! Pacing: at a speed of k generations a frame the world advances k generations each tick of
//! [`TICK`] (about 30 a second, the pace viewers ask for frames at); at full speed it advances
//! in chunks that grow until each takes [`CHUNK`], with frames taken between chunks, so a frame
//! never waits for more than one chunk.

use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use gol::{Cube, Dimension, Grid, PlaneSimulation, PlaneView, Setup, Simulation};
use gol_core::picture::{self, Look, View};
use num_bigint::{BigInt, BigUint};
use num_traits::ToPrimitive;
use serde::Serialize;
use tokio::sync::oneshot;

/// Time between two advances at a set speed, and between two frames a viewer asks for: 30 a
/// second.
pub const TICK: Duration = Duration::from_millis(33);

/// The time a chunk of generations aims at, at full speed: a frame waits at most this long.
const CHUNK: Duration = Duration::from_millis(10);

/// What a viewer asks of the simulation.
pub enum Command {
    /// Run.
    Play,
    /// Stop running.
    Pause,
    /// Advance this many generations now (paused or not).
    Step(u64),
    /// Generations each tick; 0 for full speed.
    Speed(u64),
    /// Start again from this setup (a new soup, rule, size or an uploaded pattern); the reply
    /// says whether it could.
    Restart(Box<Setup>, oneshot::Sender<Result<(), String>>),
    /// The picture of the cells a page asks for.
    Frame {
        wanted: Wanted,
        /// What a cube's picture shows (ignored for a grid).
        look: Look,
        reply: oneshot::Sender<Result<Frame, String>>,
    },
}

/// The cells a page shows and the canvas they go on: a view's top-left cell and size (on a
/// grid from 0 and wrapped round the torus; on the plane Golly's coordinates, of any size).
#[derive(Clone, Debug)]
pub struct Wanted {
    pub x: BigInt,
    pub y: BigInt,
    pub width: BigUint,
    pub height: BigUint,
    pub pixels_wide: usize,
    pub pixels_high: usize,
}

impl Wanted {
    /// The view on a grid, and the cells a pixel of its frame covers each way.
    fn on_grid(&self) -> Result<(View, usize), String> {
        let small = |n: &BigInt| {
            n.to_usize()
                .ok_or("a grid's view starts at 0 and fits a usize")
        };
        let side = |n: &BigUint| n.to_usize().ok_or("a grid's view fits a usize");
        let (width, height) = (side(&self.width)?, side(&self.height)?);
        let block = width
            .div_ceil(self.pixels_wide)
            .max(height.div_ceil(self.pixels_high))
            .max(1);
        let view = View {
            x: small(&self.x)?,
            y: small(&self.y)?,
            width,
            height,
        };
        Ok((view, block))
    }

    /// The view on the plane, and the level of the blocks a pixel of its frame shows (0: a
    /// cell a pixel; L: 2^L × 2^L cells).
    fn on_plane(&self) -> Result<(PlaneView, u32), String> {
        let side = |n: &BigUint| {
            n.to_u64().filter(|&n| n <= MAX_PLANE_VIEW).ok_or(format!(
                "a view of the plane is at most {MAX_PLANE_VIEW} cells a side"
            ))
        };
        let (width, height) = (side(&self.width)?, side(&self.height)?);
        let most = width
            .div_ceil(self.pixels_wide as u64)
            .max(height.div_ceil(self.pixels_high as u64))
            .max(1);
        let level = 64 - (most - 1).leading_zeros();
        let view = PlaneView {
            x: self.x.clone(),
            y: self.y.clone(),
            width,
            height,
        };
        Ok((view, level))
    }
}

/// The widest view of the plane a page may ask for, each way: 2^62 cells.
pub const MAX_PLANE_VIEW: u64 = 1 << 62;

/// What a frame is made from, taken between steps: a picture the engine made where its cells
/// lie (on a GPU), or cells copied out whose picture is made off the simulation's thread.
pub enum Cells {
    /// The picture itself.
    Made(picture::Frame),
    /// Cells of a grid: the view's own where a pixel is a cell, else the whole world; `within`
    /// is the view of them to draw.
    Grid { cells: Grid, within: View },
    /// The whole cube, whose projection is still to count.
    Cube { cube: Cube, look: Look },
    /// A cube's projection, counted: one count a (row, column) of a `side` × `side` picture.
    Counts { counts: Vec<u32>, side: usize },
}

/// Where a frame lies: on a grid, the view and the cells a pixel covers each way; on the
/// plane, the top-left cell of its first pixel and the level of its blocks (2^level cells a
/// pixel each way), which the status carries (see the protocol in `view/mod.rs`).
pub enum Placed {
    Grid { view: View, block: usize },
    Plane(PlaneFrame),
}

/// The corner and block level of a frame of the plane, as the page reads them.
#[derive(Clone, Debug, Serialize)]
pub struct PlaneFrame {
    /// Golly's coordinates of the first pixel's top-left cell, in decimal.
    pub x: String,
    pub y: String,
    /// A pixel is 2^level × 2^level cells.
    pub level: u32,
}

/// The cells of a frame and the state they were taken in; the picture is made from them off
/// the simulation's thread ([`Frame::picture`]).
pub struct Frame {
    cells: Cells,
    pub placed: Placed,
    pub status: Status,
}

impl Frame {
    /// The picture: one pixel for each block of cells of the view (of a cube's projection,
    /// each index of the projection a cell).
    pub fn picture(self) -> gol::Result<picture::Frame> {
        let (view, block) = match &self.placed {
            Placed::Grid { view, block } => (*view, *block),
            Placed::Plane(_) => (View::whole(1, 1), 1),
        };
        let projected =
            |counts: &[u32], side| picture::shrink(&picture::relative(counts), side, &view, block);
        Ok(match self.cells {
            Cells::Made(frame) => frame,
            Cells::Grid { cells, within } => picture::blocks(&cells, &within, block),
            Cells::Cube { cube, look } => {
                projected(&picture::cube_counts(&cube, look)?, cube.side())
            }
            Cells::Counts { counts, side } => projected(&counts, side),
        })
    }
}

/// A world the viewer shows: a grid as it is, a cube through its projections and slices, the
/// infinite plane through windows and its tree's block populations.
pub trait Shown: Sized + Send + 'static {
    /// The world of `setup` (a restart or an upload).
    fn make(setup: &Setup) -> gol::Result<Self>;

    /// Advances `generations`.
    fn advance(&mut self, generations: u64) -> gol::Result<()>;

    /// The generation and the population, and what the world is, for the status.
    fn state(&self) -> gol::Result<(Count, Count, World)>;

    /// The cells of a frame of `wanted` (of the grid, of the cube's projection as `look`
    /// says, or of the plane) and where the frame lies.
    fn frame_cells(&self, wanted: &Wanted, look: Look) -> Result<(Cells, Placed), String>;

    /// The rule and the engine, for the status.
    fn names(&self) -> (String, String);
}

/// The generation, population and size of a grid or a cube.
fn bounded_state<W: Dimension>(sim: &Simulation<W>) -> gol::Result<(Count, Count, World)> {
    let (width, height, depth) = sim.extent();
    let world = World::Grid {
        width,
        height,
        depth,
    };
    Ok((
        Count::Word(sim.generation()),
        Count::Word(sim.population()?),
        world,
    ))
}

impl Shown for Simulation<Grid> {
    fn make(setup: &Setup) -> gol::Result<Self> {
        Simulation::new(setup)
    }

    fn advance(&mut self, generations: u64) -> gol::Result<()> {
        self.step(generations)
    }

    fn state(&self) -> gol::Result<(Count, Count, World)> {
        bounded_state(self)
    }

    fn frame_cells(&self, wanted: &Wanted, _: Look) -> Result<(Cells, Placed), String> {
        let (view, block) = wanted.on_grid()?;
        let cells = if block == 1 {
            // A window no larger than the canvas.
            let window = self
                .window(view.x, view.y, view.width, view.height)
                .map_err(|e| e.to_string())?;
            Cells::Grid {
                cells: window,
                within: View::whole(view.width, view.height),
            }
        } else if self.engine().on_gpu() {
            // Counted on the GPU: only the picture crosses the bus.
            Cells::Made(self.blocks(&view, block).map_err(|e| e.to_string())?)
        } else {
            Cells::Grid {
                cells: self.world().map_err(|e| e.to_string())?,
                within: view,
            }
        };
        Ok((cells, Placed::Grid { view, block }))
    }

    fn names(&self) -> (String, String) {
        (self.rule().to_string(), self.engine().to_string())
    }
}

impl Shown for Simulation<Cube> {
    fn make(setup: &Setup) -> gol::Result<Self> {
        Simulation::new(setup)
    }

    fn advance(&mut self, generations: u64) -> gol::Result<()> {
        self.step(generations)
    }

    fn state(&self) -> gol::Result<(Count, Count, World)> {
        bounded_state(self)
    }

    fn frame_cells(&self, wanted: &Wanted, look: Look) -> Result<(Cells, Placed), String> {
        let (view, block) = wanted.on_grid()?;
        let (side, _, _) = self.extent();
        look.check(side).map_err(|e| e.to_string())?;
        let cells = if self.engine().on_gpu() {
            Cells::Counts {
                counts: self.projection(look).map_err(|e| e.to_string())?,
                side,
            }
        } else {
            Cells::Cube {
                cube: self.world().map_err(|e| e.to_string())?,
                look,
            }
        };
        Ok((cells, Placed::Grid { view, block }))
    }

    fn names(&self) -> (String, String) {
        (self.rule().to_string(), self.engine().to_string())
    }
}

impl Shown for PlaneSimulation {
    fn make(setup: &Setup) -> gol::Result<Self> {
        PlaneSimulation::new(setup)
    }

    fn advance(&mut self, generations: u64) -> gol::Result<()> {
        self.step(&BigUint::from(generations), &AtomicBool::new(false))?;
        Ok(())
    }

    fn state(&self) -> gol::Result<(Count, Count, World)> {
        let text = |n: &dyn ToString| n.to_string();
        let bounding_box = self.bounding_box().map(|r| PlaneBox {
            x: text(&r.x),
            y: text(&r.y),
            width: text(&r.width),
            height: text(&r.height),
        });
        Ok((
            Count::Exact(self.generation().to_string()),
            Count::Exact(self.population().to_string()),
            World::Plane {
                universe: "infinite plane",
                bounding_box,
            },
        ))
    }

    fn frame_cells(&self, wanted: &Wanted, _: Look) -> Result<(Cells, Placed), String> {
        let (view, level) = wanted.on_plane()?;
        let (cells, (x, y)) = if level == 0 {
            let window = self.window(&view).map_err(|e| e.to_string())?;
            let within = View::whole(window.width(), window.height());
            (
                Cells::Grid {
                    cells: window,
                    within,
                },
                (view.x, view.y),
            )
        } else {
            // From the tree's populations: a pixel is a block of the tree, however wide.
            let corner = gol_plane::tree::block_corner(&view.x, &view.y, level);
            (Cells::Made(self.blocks(&view, level)), corner)
        };
        let placed = Placed::Plane(PlaneFrame {
            x: x.to_string(),
            y: y.to_string(),
            level,
        });
        Ok((cells, placed))
    }

    fn names(&self) -> (String, String) {
        (self.rule().to_string(), self.engine().to_string())
    }
}

/// A count in the status: a JSON number on a grid, a decimal string on the plane, exact at any
/// size (JavaScript's numbers are not above 2^53).
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Count {
    Word(u64),
    Exact(String),
}

/// What the world is, in the status.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum World {
    Grid {
        width: usize,
        height: usize,
        /// The side along the third axis of a cube; absent for a grid.
        #[serde(skip_serializing_if = "Option::is_none")]
        depth: Option<usize>,
    },
    Plane {
        /// "infinite plane".
        universe: &'static str,
        /// The smallest rectangle holding every live cell; null for an empty plane.
        bounding_box: Option<PlaneBox>,
    },
}

/// A bounding box on the plane, in decimal.
#[derive(Clone, Debug, Serialize)]
pub struct PlaneBox {
    pub x: String,
    pub y: String,
    pub width: String,
    pub height: String,
}

/// The simulation's state, as viewers show it.
#[derive(Clone, Debug, Serialize)]
pub struct Status {
    pub generation: Count,
    pub population: Count,
    pub generations_per_second: f64,
    #[serde(flatten)]
    pub world: World,
    pub rule: String,
    pub engine: String,
    pub running: bool,
    /// Generations a tick; 0 for full speed.
    pub speed: u64,
    /// Restarts and uploads so far: a page fits its view to a new world.
    pub restarts: u64,
    /// Where a frame of the plane lies; absent for a grid or a cube, whose frames say it
    /// themselves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame: Option<PlaneFrame>,
}

struct Runner<S: Shown> {
    sim: S,
    running: bool,
    speed: u64,
    /// Generations of the next chunk at full speed.
    chunk: u64,
    /// The generation, the population and the world, as of the last advance.
    state: (Count, Count, World),
    restarts: u64,
    /// Generations and time since the rate was last measured.
    since: (u64, Instant),
    rate: f64,
}

impl<S: Shown> Runner<S> {
    fn new(sim: S, restarts: u64) -> gol::Result<Runner<S>> {
        Ok(Runner {
            state: sim.state()?,
            sim,
            running: false,
            speed: 1,
            chunk: 1,
            restarts,
            since: (0, Instant::now()),
            rate: 0.0,
        })
    }

    fn status(&self, frame: Option<PlaneFrame>) -> Status {
        let (generation, population, world) = self.state.clone();
        let (rule, engine) = self.sim.names();
        Status {
            generation,
            population,
            generations_per_second: self.rate,
            world,
            rule,
            engine,
            running: self.running,
            speed: self.speed,
            restarts: self.restarts,
            frame,
        }
    }

    fn advance(&mut self, generations: u64) -> Result<(), String> {
        self.sim.advance(generations).map_err(|e| e.to_string())?;
        self.state = self.sim.state().map_err(|e| e.to_string())?;
        let (done, start) = &mut self.since;
        *done += generations;
        let elapsed = start.elapsed().as_secs_f64();
        if elapsed >= 0.5 {
            self.rate = *done as f64 / elapsed;
            *done = 0;
            *start = Instant::now();
        }
        Ok(())
    }

    fn frame(&self, wanted: &Wanted, look: Look) -> Result<Frame, String> {
        let (cells, placed) = self.sim.frame_cells(wanted, look)?;
        let status = self.status(match &placed {
            Placed::Plane(corner) => Some(corner.clone()),
            Placed::Grid { .. } => None,
        });
        Ok(Frame {
            cells,
            placed,
            status,
        })
    }

    /// Obeys one command.
    fn obey(&mut self, command: Command) {
        match command {
            Command::Play => self.running = true,
            Command::Pause => {
                self.running = false;
                self.rate = 0.0;
            }
            Command::Step(n) => {
                self.running = false;
                if let Err(e) = self.advance(n) {
                    eprintln!("gol view: {e}");
                }
            }
            Command::Speed(k) => {
                self.speed = k;
                self.chunk = 1;
            }
            Command::Restart(setup, reply) => {
                let made = S::make(&setup).and_then(|sim| Runner::new(sim, self.restarts + 1));
                let answer = made.map_err(|e| e.to_string()).map(|runner| {
                    let (running, speed) = (self.running, self.speed);
                    *self = runner;
                    (self.running, self.speed) = (running, speed);
                });
                let _ = reply.send(answer);
            }
            Command::Frame {
                wanted,
                look,
                reply,
            } => {
                let _ = reply.send(self.frame(&wanted, look));
            }
        }
    }
}

/// Runs the simulation `sim` until every sender of `commands` is gone.
pub fn run<S: Shown>(sim: S, commands: Receiver<Command>) {
    let mut runner = match Runner::new(sim, 0) {
        Ok(runner) => runner,
        Err(e) => return eprintln!("gol view: {e}"),
    };
    let mut next_tick = Instant::now();
    loop {
        // Commands first; when there is nothing to run, wait for one (or for the next tick).
        let wait = if !runner.running {
            Duration::from_millis(100)
        } else if runner.speed == 0 {
            Duration::ZERO
        } else {
            next_tick.saturating_duration_since(Instant::now())
        };
        match commands.recv_timeout(wait) {
            Ok(command) => {
                runner.obey(command);
                while let Ok(command) = commands.try_recv() {
                    runner.obey(command);
                }
                if runner.running && runner.speed > 0 && Instant::now() < next_tick {
                    continue;
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        if !runner.running {
            continue;
        }
        let generations = match runner.speed {
            0 => runner.chunk,
            k => {
                next_tick = next_tick.max(Instant::now() - TICK) + TICK;
                k
            }
        };
        let start = Instant::now();
        if let Err(e) = runner.advance(generations) {
            eprintln!("gol view: {e}");
            runner.running = false;
        }
        if runner.speed == 0 && start.elapsed() < CHUNK {
            runner.chunk = runner.chunk.saturating_mul(2);
        }
    }
}
