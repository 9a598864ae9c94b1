//! `gol view`: a live viewer in the browser. An HTTP and WebSocket server (axum) serves the
//! page embedded in the binary (`crates/cli/assets/viewer/`) and streams each viewer the frames
//! of its viewport, taken by the simulation's own thread ([`runner`]) between steps.
//!
//! # Who may talk to it
//!
//! Only the page it serves, to the person who started it: every request must name the served
//! address in `Host` (`localhost` or an IP address, with the port served; a DNS name that an
//! attacker's page could rebind to this machine is refused), the page and the socket need the
//! random token printed in the URL at start-up (as Jupyter does), and a WebSocket upgrade whose
//! `Origin` is not the page's own is refused. At most [`MAX_CLIENTS`] sockets at once; a client
//! that does not take a frame within [`SLOW_READER`] is dropped. A bind other than the loopback
//! prints a warning.
//!
//! # Protocol (`/ws?token=…`)
//!
//! The page sends JSON text messages, `{"type": …}`:
//! - `view`: `x`, `y` (the top-left cell: on a grid wrapped round the torus, on the infinite
//!   plane Golly's coordinates), `width`, `height` (cells) and `pixels_wide`, `pixels_high` (the
//!   canvas): frames of that viewport follow, about 30 a second, never more pixels than the
//!   canvas has (nor than [`MAX_PIXELS`]: a larger canvas gets a frame scaled down). `x`, `y`,
//!   `width` and `height` are JSON numbers or decimal strings (the plane's coordinates have any
//!   size; a view of it is at most 2^62 cells a side; a view of a grid lies within it);
//! - `play`, `pause`, `step` (`generations`, default 1), `speed` (`generations` a frame, 0 for
//!   full speed); steps and speeds are at most [`request::MOST_GENERATIONS`]. A step is made in
//!   chunks with frames between them, and `pause` or another `step` ends it;
//! - `restart` (`width`, `height`, `seed`, `density` or null, `rule`) and `load` (`name`, and
//!   `text`, the file as text, or `bytes`, the file in base64: any pattern file `gol run`
//!   reads, gzip-compressed or a zip archive too, at most [`MAX_UPLOAD`] bytes), whose world
//!   passes `gol run`'s memory check and is made on a thread of its own: frames of the old
//!   world go on until it is in place. A zip archive of several pattern files with none named
//!   (`name` is then `ARCHIVE.zip:MEMBER`) is answered with `{"type": "choose", "name": …,
//!   "patterns": [the members' names]}`, for the page to ask which.
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
//! binary block, x and y are then 0. Where the rule gives its states colours (a rule table's
//! `@COLORS`) and a pixel is one cell, a pixel is the cell's state instead and the status
//! carries `palette`, the colours of the 256 values as 768 bytes (RGB). Under a Generations rule of C states a dying cell in state s counts as
//! (C − s) / (C − 1) of a live one, so it fades from the live colour towards the dead one as
//! in pictures (`gol_core::picture::blocks`). Errors come as JSON text `{"type": "error",
//! "message": …}`; the server goes on serving.

mod request;
mod runner;

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpListener, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use base64::Engine as _;
use futures_util::{SinkExt, StreamExt};
use gol::{Cube, Dim, Dimension, Grid, PlaneSimulation, Rule, Setup, Simulation, Size, Start};
use gol_core::picture::{Axis, Look};
use num_bigint::{BigInt, BigUint};
use tokio::sync::oneshot;

use crate::cli::ViewArgs;
use request::{canvas, most, Request};
use runner::{Command, Interrupt, Placed, Shown, Wanted};

/// The page.
const INDEX: &str = include_str!("../../assets/viewer/index.html");
/// The page's script.
const SCRIPT: &str = include_str!("../../assets/viewer/viewer.js");

/// The port tried first, and how many after it before giving up.
const PORT: u16 = 8191;
const PORTS: u16 = 50;

/// The largest pattern a page may upload, in bytes.
pub const MAX_UPLOAD: usize = 16 << 20;

/// The largest message a page may send (an upload's bytes in base64, and room for the rest);
/// a larger one closes its connection.
const MAX_MESSAGE: usize = MAX_UPLOAD.div_ceil(3) * 4 + (1 << 20);

/// The most sockets open at once; more are refused (503).
pub const MAX_CLIENTS: usize = 16;

/// How long a client may leave a frame untaken before it is dropped.
pub const SLOW_READER: Duration = Duration::from_secs(10);

/// What every connection shares: the way to the simulation, how to make a setup's, and who may
/// connect.
#[derive(Clone)]
struct App {
    commands: Arc<Mutex<Sender<Command>>>,
    /// The command line's setup, which restarts and uploads start from (engine, rule).
    base: Arc<Setup>,
    /// Whether the world is the infinite plane (restarts and uploads stay on it).
    plane: bool,
    /// The port served, which `Host` must name.
    port: u16,
    /// The token the page and the socket must give.
    token: Arc<str>,
    /// Sockets open now.
    clients: Arc<AtomicUsize>,
    /// How a step under way is stopped.
    interrupt: Arc<Interrupt>,
}

/// Runs `gol view` until interrupted.
pub fn view(args: &ViewArgs) -> Result<()> {
    let setup = crate::run::setup_of(&args.problem, None, args.engine, args.block)?.opened()?;
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
    let token = token()?;
    let url = format!("http://{address}/?token={token}");
    if !address.ip().is_loopback() {
        eprintln!(
            "gol view: warning: serving on {address}, which other machines may reach: anyone \
             who has the token in the URL can watch and drive this viewer"
        );
    }
    println!("{url}");
    std::io::stdout().flush()?;
    if args.open {
        open_browser(&url);
    }

    let (commands, received) = std::sync::mpsc::channel();
    let interrupt = Arc::<Interrupt>::default();
    let stopper = interrupt.clone();
    std::thread::Builder::new()
        .name("simulation".into())
        .spawn(move || runner::run(sim, received, stopper))?;
    let app = App {
        commands: Arc::new(Mutex::new(commands)),
        plane: setup.on_plane()?,
        base: Arc::new(setup),
        port: address.port(),
        token: token.into(),
        clients: Arc::default(),
        interrupt,
    };
    let router = Router::new()
        .route("/", get(index))
        .route("/viewer.js", get(script))
        .route("/ws", get(socket))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found") })
        .layer(axum::middleware::from_fn_with_state(app.clone(), own_host))
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

/// The listener: `--listen` as given (a name such as `localhost` resolved; port 0: any free
/// port), else 127.0.0.1 from [`PORT`] on, the first port free.
fn bind(listen: Option<&str>) -> Result<TcpListener> {
    if let Some(text) = listen {
        let address: SocketAddr = text
            .to_socket_addrs()
            .with_context(|| {
                format!(
                    "--listen {text:?}: expected an address or host name and a port, such as \
                     127.0.0.1:8191 or localhost:0"
                )
            })?
            .next()
            .with_context(|| format!("--listen {text:?}: the name has no address"))?;
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

/// A fresh random token: 128 bits from the system, in hex.
fn token() -> Result<String> {
    let mut bytes = [0u8; 16];
    std::io::Read::read_exact(
        &mut std::fs::File::open("/dev/urandom").context("reading /dev/urandom for a token")?,
        &mut bytes,
    )
    .context("reading /dev/urandom for a token")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `host`, a `Host` header, names this server: `localhost` or an IP address (a name that
/// DNS could point anywhere is refused: it is how a page of another site reaches a server on
/// the loopback), with the port served (80 when none is written).
fn own_host_name(host: &str, port: u16) -> bool {
    let (name, written) = match host.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((v6, after)) => (v6, after),
            None => return false,
        },
        None => match host.rfind(':') {
            Some(at) => (&host[..at], &host[at..]),
            None => (host, ""),
        },
    };
    let given = match written.strip_prefix(':') {
        Some(digits) => digits.parse().ok(),
        None if written.is_empty() => Some(80),
        None => None,
    };
    given == Some(port)
        && (name.eq_ignore_ascii_case("localhost") || name.parse::<IpAddr>().is_ok())
}

/// Refuses every request whose `Host` is not this server's ([`own_host_name`]).
async fn own_host(State(app): State<App>, request: axum::extract::Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok());
    match host {
        Some(host) if own_host_name(host, app.port) => next.run(request).await,
        _ => (
            StatusCode::FORBIDDEN,
            "gol view answers only requests for its own address (Host: localhost or an IP address, and its port)\n",
        )
            .into_response(),
    }
}

/// Whether the query of `uri` carries the token.
fn has_token(uri: &Uri, token: &str) -> bool {
    let given = uri
        .query()
        .unwrap_or("")
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="));
    // Compared in time that does not depend on where they differ.
    given.is_some_and(|given| {
        given.len() == token.len()
            && given
                .bytes()
                .zip(token.bytes())
                .fold(0, |or, (a, b)| or | (a ^ b))
                == 0
    })
}

fn without_token() -> Response {
    (
        StatusCode::FORBIDDEN,
        "this viewer needs the token of the URL that `gol view` printed when it started\n",
    )
        .into_response()
}

async fn index(State(app): State<App>, uri: Uri) -> Response {
    if !has_token(&uri, &app.token) {
        return without_token();
    }
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX).into_response()
}

async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
        .into_response()
}

async fn socket(
    upgrade: WebSocketUpgrade,
    State(app): State<App>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    if !has_token(&uri, &app.token) {
        return without_token();
    }
    // A browser always sends the page's origin: it must be this server's own (the Host was
    // checked). A client without one is not a browser, and has the token.
    let text = |name| {
        headers
            .get(name)
            .and_then(|v: &header::HeaderValue| v.to_str().ok())
    };
    if let Some(origin) = headers.get(header::ORIGIN) {
        let own = text(header::HOST).map(|host| format!("http://{host}"));
        if origin.to_str().ok().map(str::to_ascii_lowercase) != own.map(|o| o.to_ascii_lowercase())
        {
            return (
                StatusCode::FORBIDDEN,
                "gol view answers only its own page (the socket's Origin is another site's)\n",
            )
                .into_response();
        }
    }
    if app.clients.fetch_add(1, Ordering::SeqCst) >= MAX_CLIENTS {
        app.clients.fetch_sub(1, Ordering::SeqCst);
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("gol view serves at most {MAX_CLIENTS} sockets at once\n"),
        )
            .into_response();
    }
    let leaving = Leaving(app.clients.clone());
    upgrade
        .max_message_size(MAX_MESSAGE)
        .max_frame_size(MAX_MESSAGE)
        .on_upgrade(move |socket| async move {
            client(socket, app).await;
            drop(leaving);
        })
}

/// Counts a socket out when its connection ends (or its upgrade fails).
struct Leaving(Arc<AtomicUsize>);

impl Drop for Leaving {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
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
                // A client that leaves a frame untaken this long is gone, or wants the server's
                // memory: no frame waits behind it.
                match tokio::time::timeout(SLOW_READER, sink.send(message)).await {
                    Ok(Ok(())) => {}
                    _ => return,
                }
            }
        })
    };
    loop {
        let message = tokio::select! {
            message = stream.next() => match message {
                Some(Ok(message)) => message,
                _ => break,
            },
            // The frames' task ended: the client is too slow or gone.
            _ = replies.closed() => break,
        };
        let answer = match message {
            Message::Text(text) => match obey(&app, &viewport, &text).await {
                Ok(answer) => answer,
                Err(e) => Some(error_json(&e)),
            },
            Message::Close(_) => break,
            _ => None,
        };
        if let Some(answer) = answer {
            if replies
                .send(Message::Text(answer.to_string().into()))
                .await
                .is_err()
            {
                break;
            }
        }
    }
    frames.abort();
}

/// An error for the page to show.
fn error_json(text: &str) -> serde_json::Value {
    serde_json::json!({ "type": "error", "message": text })
}

/// An error for the page to show, as a message.
fn error_message(text: &str) -> Message {
    Message::Text(error_json(text).to_string().into())
}

/// Carries out one request of a page; an answer (JSON) or an error is for the page.
async fn obey(
    app: &App,
    viewport: &Viewport,
    text: &str,
) -> Result<Option<serde_json::Value>, String> {
    let request = Request::parse(text)?;
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
            let (pixels_wide, pixels_high) = canvas(pixels_wide, pixels_high);
            let wanted = Wanted {
                x,
                y,
                width: side(width)?,
                height: side(height)?,
                pixels_wide,
                pixels_high,
            };
            viewport.lock().expect("not poisoned").view = Some(wanted);
            return Ok(None);
        }
        Request::Look { axis, slice } => {
            let axis: Axis = axis.parse().map_err(|e: gol_core::Error| e.to_string())?;
            viewport.lock().expect("not poisoned").look = Look { axis, slice };
            return Ok(None);
        }
        Request::Play => Command::Play,
        Request::Pause => Command::Pause,
        Request::Step { generations } => Command::Step(most(generations.unwrap_or(1), "step")?),
        Request::Speed { generations } => Command::Speed(most(generations, "speed")?),
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
            return restart(app, setup).await.map(|()| None);
        }
        Request::Load { name, text, bytes } => {
            let text = match (text, bytes) {
                (Some(text), None) => text.into_bytes(),
                (None, Some(bytes)) => base64::engine::general_purpose::STANDARD
                    .decode(bytes)
                    .map_err(|e| format!("{name}: the upload's bytes are not base64: {e}"))?,
                _ => {
                    return Err(format!(
                        "{name}: a load gives the file as text or as bytes, one of the two"
                    ))
                }
            };
            if text.len() > MAX_UPLOAD {
                return Err(format!(
                    "{name}: {} bytes is more than the {} an upload may have",
                    text.len(),
                    MAX_UPLOAD
                ));
            }
            // An archive of several patterns, none named: the page asks which.
            if let Some(patterns) = gol_core::pattern::archive_choice(Path::new(&name), &text) {
                return Ok(Some(serde_json::json!({
                    "type": "choose",
                    "name": name,
                    "patterns": patterns,
                })));
            }
            let path = PathBuf::from(name);
            let file = gol_core::pattern::PatternFile::from_bytes(&path, text)
                .map_err(|e| e.to_string())?;
            // On the plane, the file goes on the plane (a bounded-grid suffix overridden, as
            // --infinite does); on a grid, the file's bounded grid where it has one, else the
            // grid of the command line.
            let size = match app.plane || file.header().bounds.is_some() {
                true => None,
                false => Some(app.base.size.unwrap_or(Size::Side(Grid::DEFAULT_SIDE))),
            };
            let setup = Setup {
                start: Start::Opened {
                    path,
                    file: Arc::new(file),
                },
                size,
                rule: None,
                infinite: app.plane,
                ..(*app.base).clone()
            };
            return restart(app, setup).await.map(|()| None);
        }
    };
    send(app, command).map(|()| None)
}

fn send(app: &App, command: Command) -> Result<(), String> {
    // Requests that end a step under way stop it at once (a frame waiting on one stops it
    // after a while: see `frame`).
    if matches!(
        command,
        Command::Pause | Command::Step(_) | Command::Restart(..)
    ) {
        app.interrupt.stop();
    }
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
    // A step under way on the plane is asked to stop once it has taken a chunk's longest, so
    // the frame waits no longer than that.
    let mut answer = answer;
    let frame = loop {
        tokio::select! {
            got = &mut answer => break got,
            _ = tokio::time::sleep(runner::LONGEST_CHUNK / 5) => app.interrupt.stop_if_long(),
        }
    };
    let frame = frame.map_err(|_| "the simulation has stopped".to_string())??;
    let mut status = frame.status.clone();
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
    status.palette = p.palette.clone();
    let status = serde_json::to_vec(&status).map_err(|e| e.to_string())?;
    let mut bytes = Vec::with_capacity(4 + status.len() + 20 + p.pixels.len());
    bytes.extend_from_slice(&(status.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&status);
    for n in [p.width, p.height, block, x, y] {
        bytes.extend_from_slice(&(n as u32).to_le_bytes());
    }
    bytes.extend_from_slice(&p.pixels);
    Ok(bytes)
}
