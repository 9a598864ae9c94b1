//! `gol view` without a browser: the server's pages, its WebSocket protocol, several viewers,
//! bad and oversized requests, and where it listens.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{gol_path, stdout_of};
use tungstenite::{Message, WebSocket};

/// A `gol view` process, killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = Command::new(gol_path())
            .arg("view")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("gol view starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().to_string();
        assert!(url.starts_with("http://"), "{url:?}");
        Server { child, url }
    }

    fn address(&self) -> &str {
        self.url.trim_start_matches("http://").trim_end_matches('/')
    }

    /// GET `path`: the status code and the body.
    fn get(&self, path: &str) -> (u16, String) {
        let mut stream = TcpStream::connect(self.address()).unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        let code = text[9..12].parse().unwrap();
        let body = text
            .split_once("\r\n\r\n")
            .map_or("", |(_, b)| b)
            .to_string();
        (code, body)
    }

    fn socket(&self) -> WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>> {
        let (socket, _) = tungstenite::connect(format!("ws://{}/ws", self.address())).unwrap();
        if let tungstenite::stream::MaybeTlsStream::Plain(stream) = socket.get_ref() {
            stream
                .set_read_timeout(Some(Duration::from_secs(20)))
                .unwrap();
        }
        socket
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A decoded frame: the status and the picture.
#[derive(Debug)]
struct Frame {
    status: serde_json::Value,
    width: u32,
    height: u32,
    block: u32,
    pixels: Vec<u8>,
}

fn decode(bytes: &[u8]) -> Frame {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let n = word(0) as usize;
    let status = serde_json::from_slice(&bytes[4..4 + n]).unwrap();
    let at = 4 + n;
    let (width, height, block) = (word(at), word(at + 4), word(at + 8));
    Frame {
        status,
        width,
        height,
        block,
        pixels: bytes[at + 20..].to_vec(),
    }
}

type Socket = WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>;

fn send(socket: &mut Socket, json: serde_json::Value) {
    socket.send(Message::text(json.to_string())).unwrap();
}

/// The next frame for which `wanted` holds, skipping others; errors (text) are returned too.
fn next(socket: &mut Socket, wanted: impl Fn(&Frame) -> bool) -> Result<Frame, String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        match socket.read().unwrap() {
            Message::Binary(bytes) => {
                let frame = decode(&bytes);
                if wanted(&frame) {
                    return Ok(frame);
                }
            }
            Message::Text(text) => return Err(text.to_string()),
            _ => {}
        }
    }
    panic!("no frame in time")
}

fn view(socket: &mut Socket, cells: usize, pixels: usize) {
    send(
        socket,
        serde_json::json!({"type": "view", "x": 0, "y": 0, "width": cells, "height": cells,
                           "pixels_wide": pixels, "pixels_high": pixels}),
    );
}

fn alive_after(gens: u32) -> u64 {
    let report = stdout_of(&[
        "run",
        "--size",
        "64",
        "--seed",
        "0",
        "--gens",
        &gens.to_string(),
        "--json",
    ]);
    serde_json::from_str::<serde_json::Value>(&report).unwrap()["alive"]
        .as_u64()
        .unwrap()
}

#[test]
fn the_page_is_served_and_nothing_else() {
    let server = Server::start(&["--size", "16", "--listen", "127.0.0.1:0"]);
    let (code, body) = server.get("/");
    assert_eq!(code, 200);
    assert!(body.contains("<canvas id=\"world\""), "{body}");
    assert_eq!(server.get("/viewer.js").0, 200);
    for path in [
        "/nope",
        "/../Cargo.toml",
        "/etc/passwd",
        "/viewer.js/../index.html",
    ] {
        assert_eq!(server.get(path).0, 404, "{path}");
    }
}

#[test]
fn it_listens_on_the_loopback_by_default() {
    let server = Server::start(&["--size", "16"]);
    let port: u16 = server
        .address()
        .strip_prefix("127.0.0.1:")
        .unwrap()
        .parse()
        .unwrap();
    assert!((8191..8241).contains(&port), "{}", server.url);
    // A second one takes the next free port.
    let other = Server::start(&["--size", "16"]);
    assert_ne!(other.address(), server.address());
}

#[test]
fn frames_show_the_viewport_and_steps_advance_exactly() {
    let server = Server::start(&["--size", "64", "--seed", "0", "--listen", "127.0.0.1:0"]);
    let mut socket = server.socket();
    view(&mut socket, 64, 64);
    let first = next(&mut socket, |_| true).unwrap();
    assert_eq!((first.width, first.height, first.block), (64, 64, 1));
    assert_eq!(first.status["generation"], 0);
    assert_eq!(first.status["running"], false);
    let population = first.status["population"].as_u64().unwrap();
    assert_eq!(population, alive_after(0));
    assert_eq!(
        first.pixels.iter().filter(|&&p| p == 255).count() as u64,
        population
    );
    assert!(first.pixels.iter().all(|&p| p == 0 || p == 255));

    send(&mut socket, serde_json::json!({"type": "step"}));
    let one = next(&mut socket, |f| f.status["generation"] != 0).unwrap();
    assert_eq!(one.status["generation"], 1);
    assert_eq!(one.status["population"].as_u64().unwrap(), alive_after(1));

    // Zoomed out: 64 cells on 16 pixels, blocks of 4, each the share of its 16 cells.
    view(&mut socket, 64, 16);
    let small = next(&mut socket, |f| f.block == 4).unwrap();
    assert_eq!((small.width, small.height), (16, 16));
    for by in 0..16 {
        for bx in 0..16 {
            let live: u32 = (0..4)
                .flat_map(|dy| (0..4).map(move |dx| (by * 4 + dy) * 64 + bx * 4 + dx))
                .map(|i| (one.pixels[i] == 255) as u32)
                .sum();
            assert_eq!(
                small.pixels[by * 16 + bx] as u32,
                (live * 255 + 8) / 16,
                "block ({bx}, {by})"
            );
        }
    }

    send(
        &mut socket,
        serde_json::json!({"type": "speed", "generations": 4}),
    );
    send(&mut socket, serde_json::json!({"type": "play"}));
    let running = next(&mut socket, |f| {
        f.status["generation"].as_u64().unwrap() >= 41
    })
    .unwrap();
    assert_eq!(running.status["running"], true);
    send(&mut socket, serde_json::json!({"type": "pause"}));
    let paused = next(&mut socket, |f| f.status["running"] == false).unwrap();
    let at = paused.status["generation"].as_u64().unwrap();
    assert_eq!((at - 1) % 4, 0, "whole ticks of 4 after generation 1");
}

#[test]
fn dying_cells_fade_under_generations_rules() {
    // Star Wars (345/2/4): state 2 shows as 2/3 of a live cell, state 3 as 1/3.
    let server = Server::start(&[
        "--size",
        "64",
        "--seed",
        "0",
        "--rule",
        "345/2/4",
        "--listen",
        "127.0.0.1:0",
    ]);
    let mut socket = server.socket();
    view(&mut socket, 64, 64);
    send(
        &mut socket,
        serde_json::json!({"type": "step", "generations": 3}),
    );
    let frame = next(&mut socket, |f| f.status["generation"] == 3).unwrap();
    assert_eq!(frame.block, 1);
    let report: serde_json::Value = serde_json::from_str(&stdout_of(&[
        "run", "--size", "64", "--seed", "0", "--rule", "345/2/4", "--gens", "3", "--json",
    ]))
    .unwrap();
    let count = |value: u8| frame.pixels.iter().filter(|&&p| p == value).count() as u64;
    assert_eq!(count(255), report["live"].as_u64().unwrap());
    assert_eq!(64 * 64 - count(0), report["alive"].as_u64().unwrap());
    assert_eq!(count(255) + count(170) + count(85) + count(0), 64 * 64);
    assert!(
        count(170) > 0 && count(85) > 0,
        "dying cells of both states"
    );

    // Zoomed out: each block the mean of its cells' fades (thirds of a live cell).
    view(&mut socket, 64, 16);
    let small = next(&mut socket, |f| f.block == 4).unwrap();
    for by in 0..16 {
        for bx in 0..16 {
            let thirds: u32 = (0..4)
                .flat_map(|dy| (0..4).map(move |dx| (by * 4 + dy) * 64 + bx * 4 + dx))
                .map(|i| frame.pixels[i] as u32 / 85)
                .sum();
            assert_eq!(
                small.pixels[by * 16 + bx] as u32,
                (thirds * 255 + 24) / 48,
                "block ({bx}, {by})"
            );
        }
    }
}

#[test]
fn several_viewers_watch_at_once_and_bad_requests_get_errors() {
    let server = Server::start(&["--size", "32", "--listen", "127.0.0.1:0"]);
    let mut a = server.socket();
    let mut b = server.socket();
    view(&mut a, 32, 32);
    view(&mut b, 16, 16);
    assert_eq!(next(&mut a, |_| true).unwrap().width, 32);
    assert_eq!(next(&mut b, |_| true).unwrap().width, 16);

    send(&mut a, serde_json::json!({"type": "fly"}));
    let err = next(&mut a, |_| false).unwrap_err();
    assert!(err.contains("bad request"), "{err}");
    send(
        &mut a,
        serde_json::json!({"type": "load", "name": "bad.rle", "text": "x = 3, y = 3\nbo$2bo$3q!\n"}),
    );
    let err = next(&mut a, |_| false).unwrap_err();
    assert!(err.contains("bad.rle"), "{err}");
    send(
        &mut a,
        serde_json::json!({"type": "restart", "width": 8, "height": 8, "seed": 1,
                           "density": null, "rule": "B9/S"}),
    );
    let err = next(&mut a, |_| false).unwrap_err();
    assert!(err.contains("invalid rule"), "{err}");
    // Still serving both.
    assert!(next(&mut a, |_| true).is_ok());
    assert!(next(&mut b, |_| true).is_ok());

    // A good upload: a glider on its own 10×10 torus.
    send(
        &mut b,
        serde_json::json!({"type": "load", "name": "glider.rle",
                           "text": "x = 3, y = 3, rule = B3/S23:T10,10\nbo$2bo$3o!\n"}),
    );
    let loaded = next(&mut b, |f| f.status["width"] == 10).unwrap();
    assert_eq!(loaded.status["population"], 5);
}

#[test]
fn an_oversized_message_closes_only_its_connection() {
    let server = Server::start(&["--size", "16", "--listen", "127.0.0.1:0"]);
    let mut big = server.socket();
    let text = format!(
        "{{\"type\": \"load\", \"name\": \"huge.rle\", \"text\": \"{}\"}}",
        "b".repeat(18 << 20)
    );
    let _ = big.send(Message::text(text));
    let closed =
        (0..50).any(|_| !matches!(big.read(), Ok(Message::Binary(_)) | Ok(Message::Text(_))));
    assert!(closed, "the connection closes");
    let mut fresh = server.socket();
    view(&mut fresh, 16, 16);
    assert!(
        next(&mut fresh, |_| true).is_ok(),
        "the server goes on serving"
    );
    // An upload under the message limit but over the upload limit gets an error.
    let text = format!(
        "{{\"type\": \"load\", \"name\": \"big.rle\", \"text\": \"{}\"}}",
        "b".repeat((16 << 20) + 10)
    );
    fresh.send(Message::text(text)).unwrap();
    let err = next(&mut fresh, |_| false).unwrap_err();
    assert!(err.contains("more than"), "{err}");
}

/// Frames a second and generations a second of `gol view` at full speed, with a 1920×1080
/// canvas showing the whole world, against a 1×1 viewport (next to no frame production): what
/// BENCHMARKS.md reports. `GOL_VIEW_ARGS` gives the world and engine (default: a 4096² soup on
/// cpu-bitsliced). Run with `cargo test --release -p gol-cli --test view -- --ignored
/// --nocapture frame_rate`; on the GPU machine, the bundled test binary the same way.
#[test]
#[ignore]
fn frame_rate() {
    let args = std::env::var("GOL_VIEW_ARGS")
        .unwrap_or_else(|_| "--size 4096 --density 0.5 --engine cpu-bitsliced".into());
    let mut all: Vec<&str> = args.split_whitespace().collect();
    all.extend(["--listen", "127.0.0.1:0"]);
    let server = Server::start(&all);
    let mut socket = server.socket();
    view(&mut socket, 1, 1);
    let size = next(&mut socket, |_| true).unwrap().status["width"]
        .as_u64()
        .unwrap() as usize;
    send(
        &mut socket,
        serde_json::json!({"type": "speed", "generations": 0}),
    );
    send(&mut socket, serde_json::json!({"type": "play"}));
    let measure = |socket: &mut Socket, cells: usize, wide: usize, high: usize| {
        send(
            socket,
            serde_json::json!({"type": "view", "x": 0, "y": 0, "width": cells, "height": cells,
                               "pixels_wide": wide, "pixels_high": high}),
        );
        // Settle, then count for 5 s.
        let settle = Instant::now();
        while settle.elapsed() < Duration::from_secs(2) {
            next(socket, |_| true).unwrap();
        }
        let first = next(socket, |_| true).unwrap();
        let start = Instant::now();
        let mut frames = 0u32;
        let mut last = first;
        while start.elapsed() < Duration::from_secs(5) {
            last = next(socket, |_| true).unwrap();
            frames += 1;
        }
        let seconds = start.elapsed().as_secs_f64();
        let generations = last.status["generation"].as_u64().unwrap() as f64;
        let rate = last.status["generations_per_second"].as_f64().unwrap();
        (
            frames as f64 / seconds,
            rate,
            generations,
            last.width,
            last.height,
        )
    };
    let (idle_fps, idle_rate, _, _, _) = measure(&mut socket, 1, 1, 1);
    let (fps, rate, _, w, h) = measure(&mut socket, size, 1920, 1080);
    println!(
        "gol view {args}: {fps:.1} frames/s of {w}x{h} pixels for a 1920x1080 canvas, {rate:.1} generations/s; with a 1x1 viewport {idle_fps:.1} frames/s, {idle_rate:.1} generations/s; lost to frames: {:.1}%",
        (1.0 - rate / idle_rate) * 100.0
    );
}

/// A cube is shown as its live cells summed along the chosen axis, or one slice across it:
/// frames checked against a count made here from the `.bin` file's bytes.
#[test]
fn cubes_show_projections_and_slices() {
    let m = 12;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.bin");
    // A .bin cube of side 12 with a third of its cells alive, from a small linear congruential
    // generator; byte x·M·M + y·M + z is cell (x, y, z).
    let mut state = 12345u32;
    let bytes: Vec<u8> = (0..m * m * m)
        .map(|_| {
            state = state.wrapping_mul(1103515245).wrapping_add(12345);
            ((state >> 16) % 3 == 0) as u8
        })
        .collect();
    // The header: M and a generation stamp, little-endian u64s.
    let header = [(m as u64).to_le_bytes(), 0u64.to_le_bytes()].concat();
    std::fs::write(&path, [header, bytes.clone()].concat()).unwrap();
    let cell = |x: usize, y: usize, z: usize| bytes[x * m * m + y * m + z] as u32;
    // (row, column) to cells along the axis, as the protocol's axes say.
    let expected = |axis: &str, slice: Option<usize>| -> Vec<u8> {
        let mut counts = vec![0u32; m * m];
        for (i, count) in counts.iter_mut().enumerate() {
            let (r, c) = (i / m, i % m);
            let along = slice.map_or(0..m, |k| k..k + 1);
            *count = along
                .map(|k| match axis {
                    "x" => cell(k, r, c),
                    "y" => cell(r, k, c),
                    _ => cell(r, c, k),
                })
                .sum();
        }
        let most = counts.iter().copied().max().unwrap().max(1);
        counts
            .iter()
            .map(|&n| ((n * 255 + most / 2) / most) as u8)
            .collect()
    };
    let server = Server::start(&["--input", path.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
    let mut socket = server.socket();
    view(&mut socket, m, m);
    let first = next(&mut socket, |_| true).unwrap();
    assert_eq!(first.status["depth"], m);
    assert_eq!(
        first.status["population"].as_u64().unwrap(),
        bytes.iter().map(|&b| b as u64).sum::<u64>()
    );
    assert_eq!(first.pixels, expected("x", None), "the default: along x");
    for axis in ["x", "y", "z"] {
        for slice in [None, Some(0), Some(5), Some(m - 1)] {
            send(
                &mut socket,
                serde_json::json!({"type": "look", "axis": axis, "slice": slice}),
            );
            let want = expected(axis, slice);
            // Frames already on their way show the previous look.
            next(&mut socket, |f| f.pixels == want)
                .unwrap_or_else(|e| panic!("{axis} {slice:?}: {e}"));
        }
    }
    // Zoomed out, blocks of 2 of the projection, each its mean.
    send(
        &mut socket,
        serde_json::json!({"type": "look", "axis": "z", "slice": null}),
    );
    view(&mut socket, m, m / 2);
    let whole = expected("z", None);
    let small = next(&mut socket, |f| f.block == 2).unwrap();
    for (i, &p) in small.pixels.iter().enumerate() {
        let (by, bx) = (i / (m / 2), i % (m / 2));
        let sum: u32 = [(0, 0), (0, 1), (1, 0), (1, 1)]
            .iter()
            .map(|&(dy, dx)| whole[(2 * by + dy) * m + 2 * bx + dx] as u32)
            .sum();
        assert_eq!(p as u32, (sum + 2) / 4, "block ({bx}, {by})");
    }
    // A slice beyond the cube is refused (once, not every frame), and frames go on.
    view(&mut socket, m, m);
    send(
        &mut socket,
        serde_json::json!({"type": "look", "axis": "y", "slice": m}),
    );
    let refused = next(&mut socket, |_| false).unwrap_err();
    assert!(
        refused.contains("slice 12 of a cube of side 12"),
        "{refused}"
    );
    send(
        &mut socket,
        serde_json::json!({"type": "look", "axis": "y", "slice": 3}),
    );
    next(&mut socket, |f| f.pixels == expected("y", Some(3))).unwrap();
    // One step: the population is gol run's.
    send(&mut socket, serde_json::json!({"type": "step"}));
    let one = next(&mut socket, |f| f.status["generation"] == 1).unwrap();
    let report = stdout_of(&[
        "run",
        "--input",
        path.to_str().unwrap(),
        "--gens",
        "1",
        "--json",
    ]);
    let alive = serde_json::from_str::<serde_json::Value>(&report).unwrap()["alive"].clone();
    assert_eq!(one.status["population"], alive);
}
