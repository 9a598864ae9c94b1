//! The simulation of `gol view`, in a thread of its own: it advances the world, takes the
//! viewers' frames between steps and obeys their commands.
//!
//! Pacing: at a speed of k generations a frame the world advances k generations each tick of
//! [`TICK`] (about 30 a second, the pace viewers ask for frames at); at full speed it advances
//! in chunks that grow until each takes [`CHUNK`], with frames taken between chunks, so a frame
//! never waits for more than one chunk.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use gol::{Cube, Dimension, Grid, Setup, Simulation};
use gol_core::picture::{self, Look, View};
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
    /// The picture of a view, one pixel for each `block` × `block` cells.
    Frame {
        view: View,
        block: usize,
        /// What a cube's picture shows (ignored for a grid).
        look: Look,
        reply: oneshot::Sender<Result<Frame, String>>,
    },
}

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

/// The cells of a frame and the state they were taken in; the picture is made from them off
/// the simulation's thread ([`Frame::picture`]).
pub struct Frame {
    cells: Cells,
    pub block: usize,
    pub view: View,
    pub status: Status,
}

impl Frame {
    /// The picture: one pixel for each `block` × `block` cells of the view (of a cube's
    /// projection, each index of the projection a cell).
    pub fn picture(self) -> gol::Result<picture::Frame> {
        let projected = |counts: &[u32], side| {
            picture::shrink(&picture::relative(counts), side, &self.view, self.block)
        };
        Ok(match self.cells {
            Cells::Made(frame) => frame,
            Cells::Grid { cells, within } => picture::blocks(&cells, &within, self.block),
            Cells::Cube { cube, look } => {
                projected(&picture::cube_counts(&cube, look)?, cube.side())
            }
            Cells::Counts { counts, side } => projected(&counts, side),
        })
    }
}

/// A world the viewer shows: a grid as it is, a cube through its projections and slices.
pub trait Shown: Dimension {
    /// The cells of a frame of `view` (of the grid, or of the cube's projection as `look`
    /// says), one pixel for each `block` × `block` of them.
    fn frame_cells(
        sim: &Simulation<Self>,
        view: View,
        block: usize,
        look: Look,
    ) -> gol::Result<Cells>;
}

impl Shown for Grid {
    fn frame_cells(
        sim: &Simulation<Grid>,
        view: View,
        block: usize,
        _: Look,
    ) -> gol::Result<Cells> {
        Ok(if block == 1 {
            // A window no larger than the canvas.
            let window = sim.window(view.x, view.y, view.width, view.height)?;
            Cells::Grid {
                cells: window,
                within: View::whole(view.width, view.height),
            }
        } else if sim.engine().on_gpu() {
            // Counted on the GPU: only the picture crosses the bus.
            Cells::Made(sim.blocks(&view, block)?)
        } else {
            Cells::Grid {
                cells: sim.world()?,
                within: view,
            }
        })
    }
}

impl Shown for Cube {
    fn frame_cells(sim: &Simulation<Cube>, _: View, _: usize, look: Look) -> gol::Result<Cells> {
        let (side, _, _) = sim.extent();
        look.check(side)?;
        Ok(if sim.engine().on_gpu() {
            Cells::Counts {
                counts: sim.projection(look)?,
                side,
            }
        } else {
            Cells::Cube {
                cube: sim.world()?,
                look,
            }
        })
    }
}

/// The simulation's state, as viewers show it.
#[derive(Clone, Debug, Serialize)]
pub struct Status {
    pub generation: u64,
    pub population: u64,
    pub generations_per_second: f64,
    pub width: usize,
    pub height: usize,
    /// The side along the third axis of a cube; absent for a grid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<usize>,
    pub rule: String,
    pub engine: String,
    pub running: bool,
    /// Generations a tick; 0 for full speed.
    pub speed: u64,
}

struct Runner<W: Shown> {
    sim: Simulation<W>,
    running: bool,
    speed: u64,
    /// Generations of the next chunk at full speed.
    chunk: u64,
    population: u64,
    /// Generations and time since the rate was last measured.
    since: (u64, Instant),
    rate: f64,
}

impl<W: Shown> Runner<W> {
    fn new(sim: Simulation<W>) -> Runner<W> {
        let population = sim.population().unwrap_or(0);
        Runner {
            sim,
            running: false,
            speed: 1,
            chunk: 1,
            population,
            since: (0, Instant::now()),
            rate: 0.0,
        }
    }

    fn status(&self) -> Status {
        let (width, height, depth) = self.sim.extent();
        Status {
            generation: self.sim.generation(),
            population: self.population,
            generations_per_second: self.rate,
            width,
            height,
            depth,
            rule: self.sim.rule().to_string(),
            engine: self.sim.engine().to_string(),
            running: self.running,
            speed: self.speed,
        }
    }

    fn advance(&mut self, generations: u64) -> Result<(), String> {
        self.sim.step(generations).map_err(|e| e.to_string())?;
        self.population = self.sim.population().map_err(|e| e.to_string())?;
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

    fn frame(&self, view: View, block: usize, look: Look) -> Result<Frame, String> {
        Ok(Frame {
            cells: W::frame_cells(&self.sim, view, block, look).map_err(|e| e.to_string())?,
            block,
            view,
            status: self.status(),
        })
    }

    /// Obeys one command.
    fn obey(&mut self, command: Command, make: &dyn Fn(&Setup) -> gol::Result<Simulation<W>>) {
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
                let made = make(&setup).map_err(|e| e.to_string());
                let answer = made.map(|sim| {
                    let (running, speed) = (self.running, self.speed);
                    *self = Runner::new(sim);
                    (self.running, self.speed) = (running, speed);
                });
                let _ = reply.send(answer);
            }
            Command::Frame {
                view,
                block,
                look,
                reply,
            } => {
                let _ = reply.send(self.frame(view, block, look));
            }
        }
    }
}

/// Runs the simulation `sim` until every sender of `commands` is gone; `make` makes the
/// simulation of a restart.
pub fn run<W: Shown>(
    sim: Simulation<W>,
    commands: Receiver<Command>,
    make: impl Fn(&Setup) -> gol::Result<Simulation<W>>,
) {
    let mut runner = Runner::new(sim);
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
                runner.obey(command, &make);
                while let Ok(command) = commands.try_recv() {
                    runner.obey(command, &make);
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
