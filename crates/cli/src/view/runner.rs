//! The simulation of `gol view`, in a thread of its own: it advances the world, takes the
//! viewers' frames between steps and obeys their commands.
//!
//! Pacing: at a speed of k generations a frame the world advances k generations each tick of
//! [`TICK`] (about 30 a second, the pace viewers ask for frames at); at full speed it advances
//! in chunks that grow until each takes [`CHUNK`], with frames taken between chunks, so a frame
//! never waits for more than one chunk.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use gol::{Grid, Setup, Simulation};
use gol_core::picture::{self, View};
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
        reply: oneshot::Sender<Result<Frame, String>>,
    },
}

/// The cells of a frame, taken between steps, and the state they were taken in; the picture
/// is made from them off the simulation's thread ([`Frame::picture`]).
pub struct Frame {
    /// The cells: the view itself where a pixel is a cell, else the whole world.
    cells: Grid,
    /// The view of `cells` to draw.
    within: View,
    pub block: usize,
    pub view: View,
    pub status: Status,
}

impl Frame {
    /// The picture: one pixel for each `block` × `block` cells of the view.
    pub fn picture(&self) -> picture::Frame {
        picture::blocks(&self.cells, &self.within, self.block)
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
    pub rule: String,
    pub engine: String,
    pub running: bool,
    /// Generations a tick; 0 for full speed.
    pub speed: u64,
}

struct Runner {
    sim: Simulation<Grid>,
    running: bool,
    speed: u64,
    /// Generations of the next chunk at full speed.
    chunk: u64,
    population: u64,
    /// Generations and time since the rate was last measured.
    since: (u64, Instant),
    rate: f64,
}

impl Runner {
    fn new(sim: Simulation<Grid>) -> Runner {
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
        let (width, height, _) = self.sim.extent();
        Status {
            generation: self.sim.generation(),
            population: self.population,
            generations_per_second: self.rate,
            width,
            height,
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

    /// The cells of a frame: a copy of the view where a pixel is a cell (a window no larger
    /// than the canvas), else of the whole world, whose blocks are then counted.
    fn frame(&self, view: View, block: usize) -> Result<Frame, String> {
        let (cells, within) = if block == 1 {
            let window = (self.sim.window(view.x, view.y, view.width, view.height))
                .map_err(|e| e.to_string())?;
            (window, View::whole(view.width, view.height))
        } else {
            (self.sim.world().map_err(|e| e.to_string())?, view)
        };
        Ok(Frame {
            cells,
            within,
            block,
            view,
            status: self.status(),
        })
    }

    /// Obeys one command.
    fn obey(&mut self, command: Command, make: &dyn Fn(&Setup) -> gol::Result<Simulation<Grid>>) {
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
            Command::Frame { view, block, reply } => {
                let _ = reply.send(self.frame(view, block));
            }
        }
    }
}

/// Runs the simulation `sim` until every sender of `commands` is gone; `make` makes the
/// simulation of a restart.
pub fn run(
    sim: Simulation<Grid>,
    commands: Receiver<Command>,
    make: impl Fn(&Setup) -> gol::Result<Simulation<Grid>>,
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
