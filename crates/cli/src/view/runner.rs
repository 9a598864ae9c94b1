//! The simulation of `gol view`, in a thread of its own: it advances the world, takes the
//! viewers' frames between steps and obeys their commands.
//!
//! Pacing: at a speed of k generations a frame the world advances k generations each tick of
//! [`TICK`] (about 30 a second, the pace viewers ask for frames at); at full speed it advances
//! in chunks that grow until each takes [`CHUNK`], with frames taken between chunks, so a frame
//! never waits for more than one chunk. A step, and a tick's k generations, are made in chunks
//! too, which grow while they take less than [`CHUNK`] or cost less than twice the time for
//! twice the generations, up to [`LONGEST_CHUNK`]: commands and frames are served between
//! chunks, `pause` or a new step ends a step, and no request holds the simulation's thread for
//! longer than a chunk. On the plane a step is one call instead (HashLife's cost does not grow
//! with the generations, and `auto` chooses its engine from a call's length), which
//! [`Interrupt`] stops where it has got to: at once for `pause`, a new step or a restart, and
//! once it has taken [`LONGEST_CHUNK`] for a frame; the rest of it goes on after the frame.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gol::{Cube, Dimension, Grid, PlaneSimulation, PlaneView, Setup, Simulation};
use gol_core::picture::{self, Look, StateColours, View};
use num_bigint::{BigInt, BigUint};
use num_traits::ToPrimitive;
use serde::Serialize;
use tokio::sync::oneshot;

/// Time between two advances at a set speed, and between two frames a viewer asks for: 30 a
/// second.
pub const TICK: Duration = Duration::from_millis(33);

/// The time a chunk of generations aims at, at full speed: a frame waits at most this long.
const CHUNK: Duration = Duration::from_millis(10);

/// The longest a chunk grows to where doubling it costs less than doubling its time; a chunk
/// that took longer is halved.
pub const LONGEST_CHUNK: Duration = Duration::from_millis(250);

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
    /// The view on a grid of `extent` (width, height; a cube's picture is side × side), and
    /// the cells a pixel of its frame covers each way: its top-left cell wrapped round the
    /// torus, and at most the grid once each way (a view asked for a larger world before a
    /// restart, or a view of any size a page sends, shows the whole grid).
    fn on_grid(&self, (w, h): (usize, usize)) -> (View, usize) {
        let wrapped = |n: &BigInt, side: usize| {
            let side = BigInt::from(side);
            (((n % &side) + &side) % side)
                .to_usize()
                .expect("below a usize")
        };
        let side = |n: &BigUint, most: usize| n.to_usize().map_or(most, |n| n.min(most));
        let (width, height) = (side(&self.width, w), side(&self.height, h));
        let block = width
            .div_ceil(self.pixels_wide)
            .max(height.div_ceil(self.pixels_high))
            .max(1);
        let view = View {
            x: wrapped(&self.x, w),
            y: wrapped(&self.y, h),
            width,
            height,
        };
        (view, block)
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

/// How the server stops a step under way on the simulation's thread (on the plane, where a step
/// is one call): a request that ends it (pause, a new step, a restart) at once, and a frame once
/// the step has taken [`LONGEST_CHUNK`].
#[derive(Default)]
pub struct Interrupt {
    stop: AtomicBool,
    /// When the step under way began, in microseconds after `epoch`; 0 for none.
    since: AtomicU64,
    epoch: std::sync::OnceLock<Instant>,
}

impl Interrupt {
    fn now(&self) -> u64 {
        self.epoch.get_or_init(Instant::now).elapsed().as_micros() as u64 + 1
    }

    /// Ends the step under way, if any.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Ends the step under way if it has taken [`LONGEST_CHUNK`], so that a frame waits no
    /// longer.
    pub fn stop_if_long(&self) {
        let since = self.since.load(Ordering::Relaxed);
        if since != 0 && self.now() - since >= LONGEST_CHUNK.as_micros() as u64 {
            self.stop();
        }
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
    /// The colours the rule gives its states: a frame of whole cells shows them.
    colours: Option<&'static StateColours>,
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
            Cells::Grid { cells, within } if block == 1 && self.colours.is_some() => {
                picture::grid(&cells, &within, Some(1), self.colours)?
            }
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

    /// Whether a step is made in one call that [`Interrupt`] stops, rather than in chunks: on
    /// the plane, where HashLife's cost does not grow with the generations and `auto` chooses
    /// its engine from a call's length.
    const WHOLE_STEPS: bool = false;

    /// Advances `generations`, or fewer where `stop` is set and the world can stop early: the
    /// generations made.
    fn advance(&mut self, generations: u64, stop: &AtomicBool) -> gol::Result<u64>;

    /// The generation and the population, and what the world is, for the status.
    fn state(&self) -> gol::Result<(Count, Count, World)>;

    /// The cells of a frame of `wanted` (of the grid, of the cube's projection as `look`
    /// says, or of the plane) and where the frame lies.
    fn frame_cells(&self, wanted: &Wanted, look: Look) -> Result<(Cells, Placed), String>;

    /// The rule and the engine, for the status.
    fn names(&self) -> (String, String);

    /// The colours the rule gives its states, if it gives any.
    fn colours(&self) -> Option<&'static StateColours> {
        None
    }
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

    fn advance(&mut self, generations: u64, _: &AtomicBool) -> gol::Result<u64> {
        self.step(generations)?;
        Ok(generations)
    }

    fn state(&self) -> gol::Result<(Count, Count, World)> {
        bounded_state(self)
    }

    fn frame_cells(&self, wanted: &Wanted, _: Look) -> Result<(Cells, Placed), String> {
        let (width, height, _) = self.extent();
        let (view, block) = wanted.on_grid((width, height));
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

    fn colours(&self) -> Option<&'static StateColours> {
        self.rule().colours()
    }
}

impl Shown for Simulation<Cube> {
    fn make(setup: &Setup) -> gol::Result<Self> {
        Simulation::new(setup)
    }

    fn advance(&mut self, generations: u64, _: &AtomicBool) -> gol::Result<u64> {
        self.step(generations)?;
        Ok(generations)
    }

    fn state(&self) -> gol::Result<(Count, Count, World)> {
        bounded_state(self)
    }

    fn frame_cells(&self, wanted: &Wanted, look: Look) -> Result<(Cells, Placed), String> {
        let (side, _, _) = self.extent();
        let (view, block) = wanted.on_grid((side, side));
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

    fn colours(&self) -> Option<&'static StateColours> {
        self.rule().colours()
    }
}

impl Shown for PlaneSimulation {
    fn make(setup: &Setup) -> gol::Result<Self> {
        PlaneSimulation::new(setup)
    }

    const WHOLE_STEPS: bool = true;

    fn advance(&mut self, generations: u64, stop: &AtomicBool) -> gol::Result<u64> {
        let before = self.generation().clone();
        self.step(&BigUint::from(generations), stop)?;
        Ok((self.generation() - before)
            .to_u64()
            .expect("at most what was asked"))
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

    fn colours(&self) -> Option<&'static StateColours> {
        self.rule().colours()
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
    /// The frame's own palette (256 RGB triples, flat) where its pixels are states under a
    /// rule that colours them; absent for the shares of live cells in the common palette.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub palette: Option<Vec<u8>>,
}

struct Runner<S: Shown> {
    sim: S,
    running: bool,
    speed: u64,
    /// Generations of the next chunk.
    chunk: u64,
    /// The generations and time of the last chunk.
    last: (u64, Duration),
    /// Generations of a step, or of this tick, still to make.
    owed: u64,
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
            last: (0, Duration::ZERO),
            owed: 0,
            restarts,
            since: (0, Instant::now()),
            rate: 0.0,
        })
    }

    /// Takes the world of `made`, a restart's, keeping how this one was running.
    fn replace(&mut self, made: Runner<S>) {
        let (running, speed, chunk) = (self.running, self.speed, self.chunk);
        *self = made;
        (self.running, self.speed, self.chunk) = (running, speed, chunk);
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
            palette: None,
        }
    }

    /// Advances one chunk: of what is owed (all of it, on a world of [`Shown::WHOLE_STEPS`]),
    /// else (at full speed) a whole chunk. An error stops the run.
    fn work(&mut self, interrupt: &Interrupt) {
        let owing = self.owed > 0;
        let generations = match owing {
            true if S::WHOLE_STEPS => self.owed,
            true => self.owed.min(self.chunk),
            false => self.chunk,
        };
        let start = Instant::now();
        interrupt.since.store(interrupt.now(), Ordering::Relaxed);
        let made = self.advance(generations, &interrupt.stop);
        interrupt.since.store(0, Ordering::Relaxed);
        let made = match made {
            Ok(made) => made,
            Err(e) => {
                eprintln!("gol view: {e}");
                (self.running, self.owed) = (false, 0);
                return;
            }
        };
        self.owed -= made.min(self.owed);
        let took = start.elapsed();
        if generations == self.chunk {
            let (was, was_took) = self.last;
            // Twice the generations for less than 1.5 times the time: HashLife's steps.
            let sublinear =
                owing && generations > was && took.as_secs_f64() < 1.5 * was_took.as_secs_f64();
            if took < CHUNK || (sublinear && took < LONGEST_CHUNK) {
                self.chunk = self
                    .chunk
                    .saturating_mul(2)
                    .min(super::request::MOST_GENERATIONS);
            } else if took > LONGEST_CHUNK {
                self.chunk = (self.chunk / 2).max(1);
            }
            self.last = (generations, took);
        }
    }

    fn advance(&mut self, generations: u64, stop: &AtomicBool) -> Result<u64, String> {
        let made = self
            .sim
            .advance(generations, stop)
            .map_err(|e| e.to_string())?;
        self.state = self.sim.state().map_err(|e| e.to_string())?;
        let (done, start) = &mut self.since;
        *done += made;
        let elapsed = start.elapsed().as_secs_f64();
        if elapsed >= 0.5 {
            self.rate = *done as f64 / elapsed;
            *done = 0;
            *start = Instant::now();
        }
        Ok(made)
    }

    fn frame(&self, wanted: &Wanted, look: Look) -> Result<Frame, String> {
        // A frame only reads the world: a panic in making it (a defect) is an error for its
        // page, and the simulation goes on.
        let (cells, placed) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.sim.frame_cells(wanted, look)
        }))
        .map_err(|_| "internal error: this frame could not be made".to_string())??;
        let status = self.status(match &placed {
            Placed::Plane(corner) => Some(corner.clone()),
            Placed::Grid { .. } => None,
        });
        Ok(Frame {
            cells,
            colours: self.sim.colours(),
            placed,
            status,
        })
    }

    /// Obeys one command; a restart begins making its world in `making`.
    fn obey(&mut self, command: Command, making: &mut Option<Making<S>>) {
        match command {
            Command::Play => self.running = true,
            Command::Pause => {
                (self.running, self.owed) = (false, 0);
                self.rate = 0.0;
            }
            // Made in chunks by the loop; a step still being made is replaced.
            Command::Step(n) => (self.running, self.owed) = (false, n),
            Command::Speed(k) => {
                self.speed = k;
                self.chunk = 1;
            }
            // Made on a thread of its own ([`Making`]); one still being made is replaced, its
            // page told so.
            Command::Restart(setup, reply) => {
                if let Some(old) = making.take() {
                    let _ = old.reply.send(Err("replaced by a newer restart".into()));
                }
                let started = std::thread::Builder::new()
                    .name("restart".into())
                    .spawn(move || S::make(&setup));
                match started {
                    Ok(thread) => *making = Some(Making { thread, reply }),
                    Err(e) => {
                        let _ = reply.send(Err(format!("could not start making the world: {e}")));
                    }
                }
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

/// A restart's world being made on a thread of its own (a large soup or file takes seconds),
/// while the old world goes on serving frames; the reply waits for it.
struct Making<S> {
    thread: std::thread::JoinHandle<gol::Result<S>>,
    reply: oneshot::Sender<Result<(), String>>,
}

/// Puts the world a restart made in place, once it is made, and answers its page.
fn finish<S: Shown>(runner: &mut Runner<S>, making: &mut Option<Making<S>>) {
    if !making.as_ref().is_some_and(|m| m.thread.is_finished()) {
        return;
    }
    let Some(Making { thread, reply }) = making.take() else {
        return;
    };
    let made = match thread.join() {
        Ok(made) => made
            .and_then(|sim| Runner::new(sim, runner.restarts + 1))
            .map_err(|e| e.to_string()),
        Err(_) => Err("internal error: making the world failed".to_string()),
    };
    let _ = reply.send(made.map(|made| runner.replace(made)));
}

/// Runs the simulation `sim` until every sender of `commands` is gone.
pub fn run<S: Shown>(sim: S, commands: Receiver<Command>, interrupt: Arc<Interrupt>) {
    let mut runner = match Runner::new(sim, 0) {
        Ok(runner) => runner,
        Err(e) => return eprintln!("gol view: {e}"),
    };
    let mut next_tick = Instant::now();
    let mut making = None;
    loop {
        // Commands first; when there is nothing to make, wait for one (or for the next tick).
        let busy = runner.owed > 0 || (runner.running && runner.speed == 0);
        let wait = if busy {
            Duration::ZERO
        } else if !runner.running {
            Duration::from_millis(100)
        } else {
            next_tick.saturating_duration_since(Instant::now())
        };
        // A world being made is looked for every 20 ms.
        let wait = match making {
            Some(_) => wait.min(Duration::from_millis(20)),
            None => wait,
        };
        // A stop asked for before the commands are read is for them: they are obeyed now.
        interrupt.stop.store(false, Ordering::Relaxed);
        match commands.recv_timeout(wait) {
            Ok(command) => {
                runner.obey(command, &mut making);
                while let Ok(command) = commands.try_recv() {
                    runner.obey(command, &mut making);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        // A tick's generations are owed once the last tick's are made (a slow world skips
        // ticks rather than falling behind).
        if runner.running && runner.speed > 0 && runner.owed == 0 && Instant::now() >= next_tick {
            next_tick = next_tick.max(Instant::now() - TICK) + TICK;
            runner.owed = runner.speed;
        }
        finish(&mut runner, &mut making);
        if runner.owed > 0 || (runner.running && runner.speed == 0) {
            runner.work(&interrupt);
        }
    }
}
