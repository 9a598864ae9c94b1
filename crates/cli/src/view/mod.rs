//! `gol view`: a live viewer in the browser. An HTTP and WebSocket server (axum) serves the
//! page embedded in the binary (`crates/cli/assets/viewer/`) and streams each viewer the frames
//! of its viewport, taken by the simulation's own thread ([`runner`]) between steps.
//!
//! # Protocol (`/ws`)
//!
//! The page sends JSON text messages, `{"type": …}`:
//! - `view`: `x`, `y` (the top-left cell: on a grid wrapped round the torus, on the infinite
//!   plane Golly's coordinates), `width`, `height` (cells) and `pixels_wide`, `pixels_high` (the
//!   canvas): frames of that viewport follow, about 30 a second, never more pixels than the
//!   canvas has. `x`, `y`, `width` and `height` are JSON numbers or decimal strings (the plane's
//!   coordinates have any size; a view of it is at most 2^62 cells a side);
//! - `play`, `pause`, `step` (`generations`, default 1), `speed` (`generations` a frame, 0 for
//!   full speed);
//! - `restart` (`width`, `height`, `seed`, `density` or null, `rule`) and `load` (`name`, `text`:
//!   an RLE or `.cells` file, at most [`MAX_UPLOAD`] bytes).
//!
//! The server answers with binary frames: a little-endian u32 n, n bytes of JSON status
//! (generation, population, generations/s, size, rule, engine, running, speed, restarts), then
//! u32 width, height (pixels), block (cells a pixel, each way), x, y (the view's top-left cell),
//! then one byte a pixel: the share of live cells in its block, 0 to 255 (for a block of 1:
//! 0 dead, 255 alive). On the infinite plane the status's generation and population are decimal
//! strings (exact at any size), `universe` is `"infinite plane"` and `bounding_box` takes the
//! place of the size (x, y, width and height in decimal, null when empty); `frame` gives the
//! first pixel's top-left cell (`x`, `y` in decimal) and `level`, a pixel being 2^level ×
//! 2^level cells (0: one cell, read from the plane; above, the share of live cells in a block
//! of the quadtree, from its populations, so that a pattern of any width draws at once); the
//! binary block, x and y are then 0. Under a Generations rule of C states a dying cell in state s counts as
//! (C − s) / (C − 1) of a live one, so it fades from the live colour towards the dead one as
//! in pictures (`gol_core::picture::blocks`). Errors come as JSON text `{"type": "error",
//! "message": …}`; the server goes on serving.

mod runner;

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use futures_util::{SinkExt, StreamExt};
use gol::{Cube, Dim, Dimension, Grid, PlaneSimulation, Rule, Setup, Simulation, Size, Start};
use gol_core::picture::{Axis, Look};
use num_bigint::{BigInt, BigUint};
use serde::{Deserialize, Deserializer};
use tokio::sync::oneshot;

use crate::cli::ViewArgs;
use runner::{Command, Placed, Shown, Wanted};

/// The page.
const INDEX: &str = include_str!("../../assets/viewer/index.html");
/// The page's script.
const SCRIPT: &str = include_str!("../../assets/viewer/viewer.js");

/// The port tried first, and how many after it before giving up.
const PORT: u16 = 8191;
const PORTS: u16 = 50;

/// The largest pattern a page may upload, in bytes.
pub const MAX_UPLOAD: usize = 16 << 20;

/// The largest message a page may send; a larger one closes its connection.
const MAX_MESSAGE: usize = MAX_UPLOAD + (1 << 20);

/// The largest canvas a frame is made for, each way, in pixels.
const MAX_CANVAS: usize = 8192;

/// What every connection shares: the way to the simulation, and how to make a setup's.
#[derive(Clone)]
struct App {
    commands: Arc<Mutex<Sender<Command>>>,
    /// The command line's setup, which restarts and uploads start from (engine, rule).
    base: Arc<Setup>,
    /// Whether the world is the infinite plane (restarts and uploads stay on it).
    plane: bool,
}

/// Runs `gol view` until interrupted.
pub fn view(args: &ViewArgs) -> Result<()> {
    let setup = crate::run::setup_of(&args.problem, None, args.engine, args.block)?;
    if setup.on_plane()? {
        return serve(PlaneSimulation::new(&setup)?, setup, args);
    }
    match setup.dimension()? {
        Dim::Two => serve(Simulation::<Grid>::new(&setup)?, setup, args),
        Dim::Three => serve(Simulation::<Cube>::new(&setup)?, setup, args),
    }
}

/// Serves viewers of `sim`, made from `setup`, until interrupted.
fn serve<S: Shown>(sim: S, setup: Setup, args: &ViewArgs) -> Result<()> {
    let listener = bind(args.listen.as_deref())?;
    let address = listener.local_addr()?;
    let url = format!("http://{address}/");
    println!("{url}");
    std::io::stdout().flush()?;
    if args.open {
        open_browser(&url);
    }

    let (commands, received) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("simulation".into())
        .spawn(move || runner::run(sim, received))?;
    let app = App {
        commands: Arc::new(Mutex::new(commands)),
        plane: setup.on_plane()?,
        base: Arc::new(setup),
    };
    let router = Router::new()
        .route("/", get(index))
        .route("/viewer.js", get(script))
        .route("/ws", get(socket))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found") })
        .with_state(app);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        listener.set_nonblocking(true)?;
        let listener = tokio::net::TcpListener::from_std(listener)?;
        axum::serve(listener, router).await?;
        Ok(())
    })
}

/// The listener: `--listen` as given (port 0: any free port), else 127.0.0.1 from [`PORT`] on,
/// the first port free.
fn bind(listen: Option<&str>) -> Result<TcpListener> {
    if let Some(text) = listen {
        let address: SocketAddr = text
            .parse()
            .with_context(|| format!("--listen {text:?}: expected ADDRESS:PORT"))?;
        return TcpListener::bind(address).with_context(|| format!("listening on {address}"));
    }
    for port in PORT..PORT + PORTS {
        if let Ok(listener) = TcpListener::bind(("127.0.0.1", port)) {
            return Ok(listener);
        }
    }
    bail!(
        "ports {PORT} to {} of 127.0.0.1 are all taken; choose one with --listen",
        PORT + PORTS - 1
    )
}

/// Starts the default browser on `url`, or says why it cannot.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let started = std::process::Command::new(opener)
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        eprintln!("gol view: no browser to open ({opener}: {e}); open {url} yourself");
    }
}

async fn index() -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX).into_response()
}

async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
        .into_response()
}

async fn socket(upgrade: WebSocketUpgrade, State(app): State<App>) -> Response {
    upgrade
        .max_message_size(MAX_MESSAGE)
        .max_frame_size(MAX_MESSAGE)
        .on_upgrade(move |socket| client(socket, app))
}

/// A message from the page.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Request {
    View {
        #[serde(deserialize_with = "integer")]
        x: BigInt,
        #[serde(deserialize_with = "integer")]
        y: BigInt,
        #[serde(deserialize_with = "integer")]
        width: BigInt,
        #[serde(deserialize_with = "integer")]
        height: BigInt,
        pixels_wide: usize,
        pixels_high: usize,
    },
    Play,
    Pause,
    Step {
        generations: Option<u64>,
    },
    Speed {
        generations: u64,
    },
    Restart {
        width: usize,
        height: usize,
        seed: u32,
        density: Option<f64>,
        rule: String,
    },
    Load {
        name: String,
        text: String,
    },
    Look {
        axis: String,
        slice: Option<usize>,
    },
}

/// An integer written as a JSON number or as a decimal string (of any size).
fn integer<'de, D: Deserializer<'de>>(d: D) -> Result<BigInt, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Signed(i64),
        Unsigned(u64),
        Text(String),
    }
    match Written::deserialize(d)? {
        Written::Signed(n) => Ok(n.into()),
        Written::Unsigned(n) => Ok(n.into()),
        Written::Text(text) => text.trim().parse().map_err(|_| {
            let shown: String = text.chars().take(40).collect();
            serde::de::Error::custom(format!("{shown:?} is not an integer"))
        }),
    }
}

/// What a page watches: the cells it shows, and what a cube's picture shows (set apart from the
/// view: a page may choose it first).
#[derive(Default)]
struct Watch {
    view: Option<Wanted>,
    look: Look,
}

type Viewport = Arc<Mutex<Watch>>;

/// One page: its requests in, its frames out.
async fn client(socket: WebSocket, app: App) {
    let (mut sink, mut stream) = socket.split();
    let (replies, mut pending) = tokio::sync::mpsc::channel::<Message>(16);
    let viewport: Viewport = Arc::default();
    let frames = {
        let (app, viewport) = (app.clone(), viewport.clone());
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(runner::TICK);
            // The error of the last frame, sent once rather than every tick.
            let mut failing = None;
            // A frame that took longer than a tick delays the next by as much, no more.
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                let message = tokio::select! {
                    _ = ticker.tick() => {
                        let (watched, look) = {
                            let watch = viewport.lock().expect("not poisoned");
                            (watch.view.clone(), watch.look)
                        };
                        let Some(wanted) = watched else {
                            continue;
                        };
                        match frame(&app, wanted, look).await {
                            Ok(bytes) => {
                                failing = None;
                                Message::Binary(bytes.into())
                            }
                            Err(e) if failing.as_ref() == Some(&e) => continue,
                            Err(e) => {
                                let message = error_message(&e);
                                failing = Some(e);
                                message
                            }
                        }
                    }
                    reply = pending.recv() => match reply {
                        Some(reply) => reply,
                        None => return,
                    },
                };
                if sink.send(message).await.is_err() {
                    return;
                }
            }
        })
    };
    while let Some(Ok(message)) = stream.next().await {
        let answer = match message {
            Message::Text(text) => obey(&app, &viewport, &text).await.err(),
            Message::Close(_) => break,
            _ => None,
        };
        if let Some(e) = answer {
            if replies.send(error_message(&e)).await.is_err() {
                break;
            }
        }
    }
    frames.abort();
}

fn error_message(text: &str) -> Message {
    Message::Text(
        serde_json::json!({ "type": "error", "message": text })
            .to_string()
            .into(),
    )
}

/// Carries out one request of a page; an error is for the page to show.
async fn obey(app: &App, viewport: &Viewport, text: &str) -> Result<(), String> {
    let request: Request = serde_json::from_str(text).map_err(|e| format!("bad request: {e}"))?;
    let command = match request {
        Request::View {
            x,
            y,
            width,
            height,
            pixels_wide,
            pixels_high,
        } => {
            let side = |n: BigInt| {
                BigUint::try_from(n)
                    .ok()
                    .filter(|n| *n > BigUint::ZERO)
                    .ok_or("a view is at least one cell each way")
            };
            let wanted = Wanted {
                x,
                y,
                width: side(width)?,
                height: side(height)?,
                pixels_wide: pixels_wide.clamp(1, MAX_CANVAS),
                pixels_high: pixels_high.clamp(1, MAX_CANVAS),
            };
            viewport.lock().expect("not poisoned").view = Some(wanted);
            return Ok(());
        }
        Request::Look { axis, slice } => {
            let axis: Axis = axis.parse().map_err(|e: gol_core::Error| e.to_string())?;
            viewport.lock().expect("not poisoned").look = Look { axis, slice };
            return Ok(());
        }
        Request::Play => Command::Play,
        Request::Pause => Command::Pause,
        Request::Step { generations } => Command::Step(generations.unwrap_or(1)),
        Request::Speed { generations } => Command::Speed(generations),
        Request::Restart {
            width,
            height,
            seed,
            density,
            rule,
        } => {
            let setup = Setup {
                start: match density {
                    Some(density) => Start::Density { density, seed },
                    None => Start::Glibc { seed },
                },
                // A cube's side is the width.
                size: Some(match app.base.dim {
                    Dim::Two => Size::Rect { width, height },
                    Dim::Three => Size::Side(width),
                }),
                rule: Some(Rule::parse(&rule).map_err(|e| e.to_string())?),
                // A soup of the plane's viewer goes on the plane.
                infinite: app.plane,
                ..(*app.base).clone()
            };
            return restart(app, setup).await;
        }
        Request::Load { name, text } => {
            if text.len() > MAX_UPLOAD {
                return Err(format!(
                    "{name}: {} bytes is more than the {} an upload may have",
                    text.len(),
                    MAX_UPLOAD
                ));
            }
            let name = PathBuf::from(name);
            let file = gol_core::pattern::PatternFile::from_bytes(&name, text.clone().into_bytes())
                .map_err(|e| e.to_string())?;
            // On the plane, the file goes on the plane (a bounded-grid suffix overridden, as
            // --infinite does); on a grid, the file's bounded grid where it has one, else the
            // grid of the command line.
            let size = match file.header().bounds {
                _ if app.plane => None,
                Some(_) => None,
                None => Some(app.base.size.unwrap_or(Size::Side(Grid::DEFAULT_SIDE))),
            };
            let setup = Setup {
                start: Start::Pattern {
                    name,
                    text: text.into_bytes(),
                },
                size,
                rule: None,
                infinite: app.plane,
                ..(*app.base).clone()
            };
            return restart(app, setup).await;
        }
    };
    send(app, command)
}

fn send(app: &App, command: Command) -> Result<(), String> {
    app.commands
        .lock()
        .expect("not poisoned")
        .send(command)
        .map_err(|_| "the simulation has stopped".to_string())
}

/// Starts the simulation again from `setup`, keeping the base's engine; a size the file does not
/// set comes from the base too.
async fn restart(app: &App, setup: Setup) -> Result<(), String> {
    let (reply, answer) = oneshot::channel();
    send(app, Command::Restart(Box::new(setup), reply))?;
    answer
        .await
        .map_err(|_| "the simulation has stopped".to_string())?
}

/// The encoded frame of `wanted` (see the module's notes).
async fn frame(app: &App, wanted: Wanted, look: Look) -> Result<Vec<u8>, String> {
    let (reply, answer) = oneshot::channel();
    send(
        app,
        Command::Frame {
            wanted,
            look,
            reply,
        },
    )?;
    let frame = answer
        .await
        .map_err(|_| "the simulation has stopped".to_string())??;
    let status = serde_json::to_vec(&frame.status).map_err(|e| e.to_string())?;
    // Counting blocks takes a while on a large world: off the simulation's thread, and off the
    // threads that serve the sockets.
    let (block, x, y) = match &frame.placed {
        Placed::Grid { view, block } => (*block, view.x, view.y),
        Placed::Plane(_) => (0, 0, 0),
    };
    let p = tokio::task::spawn_blocking(move || frame.picture())
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    let mut bytes = Vec::with_capacity(4 + status.len() + 20 + p.pixels.len());
    bytes.extend_from_slice(&(status.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&status);
    for n in [p.width, p.height, block, x, y] {
        bytes.extend_from_slice(&(n as u32).to_le_bytes());
    }
    bytes.extend_from_slice(&p.pixels);
    Ok(bytes)
}
