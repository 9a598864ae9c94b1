//! `gol view` without a browser: the server's pages, its WebSocket protocol, several viewers,
//! bad and oversized requests, and where it listens.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{gol_path, stdout_of};
use tungstenite::client::IntoClientRequest;
use tungstenite::{Message, WebSocket};

/// A `gol view` process, killed when dropped.
struct Server {
    child: Child,
    /// The URL it printed, with its token.
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
        let rest = self.url.trim_start_matches("http://");
        &rest[..rest.find('/').unwrap()]
    }

    fn token(&self) -> &str {
        self.url.split_once("?token=").unwrap().1
    }

    /// GET `path` with the server's own address as Host: the status code and the body.
    fn get(&self, path: &str) -> (u16, String) {
        self.get_as(path, self.address())
    }

    /// GET `path` with `host` as Host.
    fn get_as(&self, path: &str, host: &str) -> (u16, String) {
        let mut stream = TcpStream::connect(self.address()).unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
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

    fn socket(&self) -> Socket {
        self.socket_with(&format!("token={}", self.token()), None)
            .unwrap()
    }

    /// A socket opened with `query` and, where given, an `Origin`; the status code of a
    /// refusal.
    fn socket_with(&self, query: &str, origin: Option<&str>) -> Result<Socket, u16> {
        let mut request = format!("ws://{}/ws?{query}", self.address())
            .into_client_request()
            .unwrap();
        if let Some(origin) = origin {
            request
                .headers_mut()
                .insert("Origin", origin.parse().unwrap());
        }
        let socket = match tungstenite::connect(request) {
            Ok((socket, _)) => socket,
            Err(tungstenite::Error::Http(response)) => return Err(response.status().as_u16()),
            Err(e) => panic!("{e}"),
        };
        if let tungstenite::stream::MaybeTlsStream::Plain(stream) = socket.get_ref() {
            stream
                .set_read_timeout(Some(Duration::from_secs(20)))
                .unwrap();
        }
        Ok(socket)
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
#[track_caller]
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
    let (code, body) = server.get(&format!("/?token={}", server.token()));
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
fn a_rule_table_s_colours_reach_the_page() {
    let dir = tempfile::tempdir().unwrap();
    // Three states that stay as they are, states 1 and 2 coloured.
    crate::common::still_rule(dir.path(), "1 255 128 0\n2 0 0 255\n");
    let start = dir.path().join("start.rle");
    std::fs::write(&start, "x = 3, y = 2, rule = Still\nA.B$2B!\n").unwrap();
    let server = Server::start(&[
        "--rules",
        dir.path().to_str().unwrap(),
        "--input",
        start.to_str().unwrap(),
        "--size",
        "8",
        "--listen",
        "127.0.0.1:0",
    ]);
    let mut socket = server.socket();
    // One cell a pixel: each pixel the cell's state, and the status carries the palette.
    view(&mut socket, 8, 64);
    let frame = next(&mut socket, |f| {
        f.block == 1 && f.status.get("palette").is_some()
    })
    .unwrap();
    let palette: Vec<u64> = frame.status["palette"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(palette.len(), 768);
    assert_eq!(&palette[3..9], &[255, 128, 0, 0, 0, 255]);
    let mut states = frame.pixels.clone();
    states.sort_unstable();
    assert_eq!(
        &states[states.len() - 4..],
        &[1, 2, 2, 2],
        "the pattern's states"
    );
    assert_eq!(states.iter().filter(|&&p| p == 0).count(), 60);
    // Zoomed out: each block the mean of its cells' fades in the common palette, as under
    // Generations rules; a block with no cells is dark.
    view(&mut socket, 8, 2);
    let small = next(&mut socket, |f| f.block == 4).unwrap();
    assert!(small.status.get("palette").is_none(), "{:?}", small.status);
    for (i, &pixel) in small.pixels.iter().enumerate() {
        let (bx, by) = (i % 2 * 4, i / 2 * 4);
        let weight: u32 = (0..16)
            .map(|j| match frame.pixels[(by + j / 4) * 8 + bx + j % 4] {
                0 => 0,
                state => 3 - state as u32,
            })
            .sum();
        assert_eq!(pixel as u32, (weight * 255 + 16) / 32, "block {i}");
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
fn uploads_of_compressed_files_and_archives_are_read_and_an_archive_asks_which_pattern() {
    use crate::common::{gzip, zip_bytes};
    use base64::Engine as _;
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let server = Server::start(&["--size", "16", "--listen", "127.0.0.1:0"]);
    let mut s = server.socket();
    view(&mut s, 16, 16);
    next(&mut s, |_| true).unwrap();
    // A gzipped RLE, as bytes: a glider on its own 10×10 torus.
    let glider = gzip(b"x = 3, y = 3, rule = B3/S23:T10,10\nbo$2bo$3o!\n");
    send(
        &mut s,
        serde_json::json!({"type": "load", "name": "glider.rle.gz", "bytes": b64(&glider)}),
    );
    let loaded = next(&mut s, |f| f.status["width"] == 10).unwrap();
    assert_eq!(loaded.status["population"], 5);
    // An archive of two patterns, none named: the page is asked which.
    let blinker = gzip(b"x = 3, y = 1, rule = B3/S23:T12,12\n3o!\n");
    let archive = zip_bytes(&[
        (
            "flow/block.rle",
            b"x = 2, y = 2, rule = B3/S23:T8,8\n2o$2o!\n",
        ),
        ("flow/blinker.rle.gz", &blinker),
        ("flow/readme.txt", b"not a pattern"),
    ]);
    send(
        &mut s,
        serde_json::json!({"type": "load", "name": "flow.zip", "bytes": b64(&archive)}),
    );
    let asked: serde_json::Value =
        serde_json::from_str(&next(&mut s, |_| false).unwrap_err()).unwrap();
    assert_eq!(
        asked,
        serde_json::json!({"type": "choose", "name": "flow.zip",
                           "patterns": ["flow/block.rle", "flow/blinker.rle.gz"]})
    );
    send(
        &mut s,
        serde_json::json!({"type": "load", "name": "flow.zip:flow/blinker.rle.gz",
                           "bytes": b64(&archive)}),
    );
    let loaded = next(&mut s, |f| f.status["width"] == 12).unwrap();
    assert_eq!(loaded.status["population"], 3);
    // A pattern under a rule table the archive holds, found nowhere else.
    let still =
        "@RULE UploadedStill\n@TABLE\nn_states:3\nneighborhood:vonNeumann\nsymmetries:none\n";
    let archive = zip_bytes(&[
        ("UploadedStill.rule", still.as_bytes()),
        (
            "dots.rle",
            b"x = 3, y = 1, rule = UploadedStill:T9,9\nA.B!\n",
        ),
    ]);
    send(
        &mut s,
        serde_json::json!({"type": "load", "name": "dots.zip", "bytes": b64(&archive)}),
    );
    let loaded = next(&mut s, |f| f.status["width"] == 9).unwrap();
    assert_eq!(loaded.status["population"], 2);
    assert!(
        loaded.status["rule"]
            .as_str()
            .unwrap()
            .contains("UploadedStill"),
        "{}",
        loaded.status
    );
    // Bytes that are not base64, or text and bytes both: one error each.
    for (request, said) in [
        (
            serde_json::json!({"type": "load", "name": "x.rle", "bytes": "not base64!"}),
            "not base64",
        ),
        (
            serde_json::json!({"type": "load", "name": "x.rle", "text": "o!", "bytes": "bw=="}),
            "one of the two",
        ),
    ] {
        send(&mut s, request);
        let err = next(&mut s, |_| false).unwrap_err();
        assert!(err.contains(said), "{err}");
    }
}

#[test]
fn an_oversized_message_closes_only_its_connection() {
    let server = Server::start(&["--size", "16", "--listen", "127.0.0.1:0"]);
    let mut big = server.socket();
    let text = format!(
        "{{\"type\": \"load\", \"name\": \"huge.rle\", \"text\": \"{}\"}}",
        "b".repeat(24 << 20)
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

#[test]
fn only_its_own_page_may_talk_to_it() {
    let server = Server::start(&["--size", "16", "--listen", "127.0.0.1:0"]);
    let (address, token) = (server.address().to_string(), server.token().to_string());
    let port = address.rsplit_once(':').unwrap().1;
    assert_eq!(token.len(), 32, "128 random bits in hex: {}", server.url);
    let page = format!("/?token={token}");
    // Host: this server's address, or localhost, with its port; a DNS name (which another site
    // could point at 127.0.0.1) or another port is refused, on every path.
    for host in [
        address.clone(),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ] {
        assert_eq!(server.get_as(&page, &host).0, 200, "{host}");
    }
    for host in [
        format!("attacker.example:{port}"),
        format!("localhost.attacker.example:{port}"),
        "127.0.0.1:1".to_string(),
        "127.0.0.1".to_string(),
        String::new(),
    ] {
        let (code, body) = server.get_as(&page, &host);
        assert_eq!(code, 403, "{host:?}");
        assert!(body.contains("its own address"), "{body}");
        assert_eq!(server.get_as("/viewer.js", &host).0, 403, "{host:?}");
    }
    // The page and the socket need the token.
    for path in [
        "/",
        "/?token=",
        "/?token=0123",
        &format!("/?token={}", "0".repeat(32)),
    ] {
        let (code, body) = server.get(path);
        assert_eq!(code, 403, "{path}");
        assert!(body.contains("token"), "{body}");
    }
    assert_eq!(server.socket_with("", None).unwrap_err(), 403);
    assert_eq!(server.socket_with("token=nope", None).unwrap_err(), 403);
    // A browser's socket from another site's page: refused; from the page's own origin: served.
    let query = format!("token={token}");
    for origin in [
        "http://attacker.example",
        "null",
        &format!("http://attacker.example:{port}"),
    ] {
        assert_eq!(
            server.socket_with(&query, Some(origin)).unwrap_err(),
            403,
            "{origin}"
        );
    }
    let mut own = server
        .socket_with(&query, Some(&format!("http://{address}")))
        .unwrap();
    view(&mut own, 16, 16);
    assert!(next(&mut own, |_| true).is_ok());
}

#[test]
fn a_bind_beyond_the_loopback_warns_and_names_may_be_resolved() {
    let mut child = Command::new(gol_path())
        .args(["view", "--size", "8", "--listen", "0.0.0.0:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut warning = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut warning)
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        warning.contains("warning") && warning.contains("token"),
        "{warning}"
    );
    // A name resolves; nonsense is refused saying what is expected.
    let server = Server::start(&["--size", "8", "--listen", "localhost:0"]);
    assert!(server.get(&format!("/?token={}", server.token())).0 == 200);
    let out = Command::new(gol_path())
        .args(["view", "--size", "8", "--listen", "nowhere"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("such as 127.0.0.1:8191 or localhost:0"),
        "{err}"
    );
}

#[test]
fn oversized_requests_are_refused_once_and_long_steps_can_be_stopped() {
    let server = Server::start(&["--size", "512", "--seed", "1", "--listen", "127.0.0.1:0"]);
    let mut socket = server.socket();
    view(&mut socket, 512, 64);
    next(&mut socket, |_| true).unwrap();
    for (request, said) in [
        (
            serde_json::json!({"type": "step", "generations": 1_000_000_000_000_000_000u64}),
            "a step is at most 2^40",
        ),
        (
            serde_json::json!({"type": "speed", "generations": 1u64 << 41}),
            "a speed is at most 2^40",
        ),
    ] {
        send(&mut socket, request.clone());
        let err = next(&mut socket, |_| false).unwrap_err();
        assert!(err.contains(said), "{request}: {err}");
        // Once: the next message is a frame, not the error again.
        assert!(next(&mut socket, |_| true).is_ok(), "{request}");
        view(&mut socket, 512, 64);
    }
    // Views larger than the world, or starting outside it, show the world once each way, its
    // corner wrapped round the torus.
    for (x, width, height, pixels) in [
        (
            serde_json::json!(0),
            5_000_000_000u64,
            5_000_000_000u64,
            (100, 100),
        ),
        (serde_json::json!(0), u64::MAX, 1, (100, 100)),
        (
            serde_json::json!("-1000000000000000000000000"),
            600,
            512,
            (1, 1),
        ),
    ] {
        send(
            &mut socket,
            serde_json::json!({"type": "view", "x": x, "y": 0, "width": width, "height": height,
                               "pixels_wide": pixels.0, "pixels_high": pixels.1}),
        );
        let want = 512usize.div_ceil(pixels.0);
        let frame = next(&mut socket, |f| f.block as usize == want).unwrap();
        assert_eq!(frame.width as usize, 512usize.div_ceil(want), "{x} {width}");
    }
    // An upload naming a torus of 2^60 cells meets the memory check of gol run: refused.
    send(
        &mut socket,
        serde_json::json!({"type": "load", "name": "huge.rle",
                           "text": "x = 1, y = 1, rule = B3/S23:T1073741824,1073741824\no!\n"}),
    );
    let err = next(&mut socket, |_| false).unwrap_err();
    assert!(err.contains("needs") && err.contains("available"), "{err}");
    // A world that takes a while to make is made aside: frames of the old one go on, each
    // within a second, until the new one is in place.
    send(
        &mut socket,
        serde_json::json!({"type": "restart", "width": 8192, "height": 8192, "seed": 1,
                           "density": null, "rule": "B3/S23"}),
    );
    let mut last = Instant::now();
    loop {
        let frame = next(&mut socket, |_| true).unwrap();
        assert!(
            last.elapsed() < Duration::from_secs(1),
            "a frame waited {:?}",
            last.elapsed()
        );
        last = Instant::now();
        if frame.status["width"] == 8192 {
            break;
        }
    }
    send(
        &mut socket,
        serde_json::json!({"type": "restart", "width": 512, "height": 512, "seed": 1,
                           "density": null, "rule": "B3/S23"}),
    );
    next(&mut socket, |f| f.status["width"] == 512).unwrap();
    // A canvas of 8192² pixels gets a frame of at most 2^24 pixels showing the whole view.
    send(
        &mut socket,
        serde_json::json!({"type": "view", "x": 0, "y": 0, "width": 512, "height": 512,
                           "pixels_wide": 100_000, "pixels_high": 100_000}),
    );
    let big = next(&mut socket, |f| f.block == 1).unwrap();
    assert_eq!((big.width, big.height), (512, 512));

    // The longest step a message may ask for runs in chunks: frames keep coming, and a pause
    // stops it within a second.
    view(&mut socket, 512, 64);
    send(
        &mut socket,
        serde_json::json!({"type": "step", "generations": 1u64 << 40}),
    );
    let started = Instant::now();
    let moving = next(&mut socket, |f| {
        f.status["generation"].as_u64().unwrap() > 100
    })
    .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(moving.status["running"], false);
    send(&mut socket, serde_json::json!({"type": "pause"}));
    let paused = Instant::now();
    let mut last = next(&mut socket, |_| true).unwrap();
    let mut same = 0;
    while same < 10 {
        let frame = next(&mut socket, |_| true).unwrap();
        if frame.status["generation"] == last.status["generation"] {
            same += 1;
        } else {
            assert!(paused.elapsed() < Duration::from_secs(1), "still stepping");
            same = 0;
        }
        last = frame;
    }
    // A new step replaces one under way.
    send(
        &mut socket,
        serde_json::json!({"type": "step", "generations": 1u64 << 40}),
    );
    send(
        &mut socket,
        serde_json::json!({"type": "step", "generations": 3}),
    );
    // The long step may take a few generations before the short one replaces it (on a loaded
    // machine), then the short one takes its three, and nothing steps after: twenty frames
    // alike come within a second or two.
    let at = last.status["generation"].as_u64().unwrap();
    let replaced = Instant::now();
    let generation = |socket: &mut _| {
        next(socket, |_| true).unwrap().status["generation"]
            .as_u64()
            .unwrap()
    };
    let mut seen = generation(&mut socket);
    let mut same = 0;
    while same < 20 {
        let now = generation(&mut socket);
        if now == seen {
            same += 1;
        } else {
            assert!(
                replaced.elapsed() < Duration::from_secs(2),
                "stepping on: {seen} then {now}"
            );
            same = 0;
        }
        seen = now;
    }
    assert!(
        seen >= at + 3,
        "the short step was not taken: {at} then {seen}"
    );
}

#[test]
fn a_long_step_on_the_plane_lets_frames_through_and_stops_on_pause() {
    // A soup of Life without Death on the plane, growing without end and chaotic at its edge:
    // 2^40 generations of it take far longer than the test.
    let server = Server::start(&[
        "--size",
        "256",
        "--density",
        "0.3",
        "--seed",
        "3",
        "--rule",
        "B3/S012345678",
        "--infinite",
        "--listen",
        "127.0.0.1:0",
    ]);
    let mut socket = server.socket();
    send(
        &mut socket,
        serde_json::json!({"type": "view", "x": -128, "y": -128, "width": 256, "height": 256,
                           "pixels_wide": 256, "pixels_high": 256}),
    );
    next(&mut socket, |_| true).unwrap();
    send(
        &mut socket,
        serde_json::json!({"type": "step", "generations": 1u64 << 40}),
    );
    let generation = |f: &Frame| {
        f.status["generation"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    let start = Instant::now();
    let mut last = Instant::now();
    let mut moved = false;
    while start.elapsed() < Duration::from_secs(4) {
        let frame = next(&mut socket, |_| true).unwrap();
        assert!(
            last.elapsed() < Duration::from_millis(1500),
            "a frame waited {:?}",
            last.elapsed()
        );
        last = Instant::now();
        moved |= generation(&frame) > 0;
    }
    assert!(moved, "the step advances between frames");
    send(&mut socket, serde_json::json!({"type": "pause"}));
    let paused = Instant::now();
    let mut at = generation(&next(&mut socket, |_| true).unwrap());
    let mut same = 0;
    while same < 10 {
        let now = generation(&next(&mut socket, |_| true).unwrap());
        if now == at {
            same += 1;
        } else {
            assert!(paused.elapsed() < Duration::from_secs(1), "still stepping");
            (at, same) = (now, 0);
        }
    }
    assert!(at < 1 << 40, "stopped short of the whole step: {at}");
    // An upload on the plane is read once, by the restart: a bad one is refused with its
    // name and the world goes on; a good one lands on the plane, its torus suffix overridden.
    send(
        &mut socket,
        serde_json::json!({"type": "load", "name": "bad.rle", "text": "x = 3, y = 3\nbo$2bo$3q!\n"}),
    );
    let err = next(&mut socket, |_| false).unwrap_err();
    assert!(err.contains("bad.rle"), "{err}");
    assert_eq!(generation(&next(&mut socket, |_| true).unwrap()), at);
    send(
        &mut socket,
        serde_json::json!({"type": "load", "name": "glider.rle",
                           "text": "x = 3, y = 3, rule = B3/S23:T4,4\nbo$2bo$3o!\n"}),
    );
    let population = |f: &Frame| {
        f.status["population"]
            .to_string()
            .trim_matches('"')
            .to_string()
    };
    let glider = next(&mut socket, |f| generation(f) == 0 && population(f) == "5").unwrap();
    send(
        &mut socket,
        serde_json::json!({"type": "step", "generations": 64}),
    );
    // On a 4 × 4 torus a glider dies; on the plane it flies on.
    next(&mut socket, |f| generation(f) == 64 && population(f) == "5").unwrap();
    assert_eq!(glider.status["universe"], "infinite plane");
}

#[test]
fn a_client_that_does_not_read_holds_up_no_one_and_sockets_are_bounded() {
    let server = Server::start(&["--size", "2048", "--seed", "2", "--listen", "127.0.0.1:0"]);
    // A client asks for whole-world frames of 2048² pixels and never reads them.
    let mut greedy = server.socket();
    send(
        &mut greedy,
        serde_json::json!({"type": "view", "x": 0, "y": 0, "width": 2048, "height": 2048,
                           "pixels_wide": 2048, "pixels_high": 2048}),
    );
    send(
        &mut greedy,
        serde_json::json!({"type": "speed", "generations": 0}),
    );
    send(&mut greedy, serde_json::json!({"type": "play"}));
    // Another keeps getting frames, each within a second, while the first's pile up unread.
    let mut polite = server.socket();
    view(&mut polite, 64, 64);
    let mut last = Instant::now();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(12) {
        next(&mut polite, |_| true).unwrap();
        assert!(
            last.elapsed() < Duration::from_secs(1),
            "a frame took {:?}",
            last.elapsed()
        );
        last = Instant::now();
    }
    // By now the slow reader has been dropped: reading what is left ends in a closed socket.
    let closed = (0..10_000).any(|_| greedy.read().is_err());
    assert!(closed, "the slow reader's socket is closed");

    // At most 16 sockets at once; one more is refused until one closes.
    let mut many: Vec<Socket> = (0..15).map(|_| server.socket()).collect();
    let query = format!("token={}", server.token());
    assert_eq!(server.socket_with(&query, None).unwrap_err(), 503);
    drop(polite);
    let deadline = Instant::now() + Duration::from_secs(5);
    let again = loop {
        match server.socket_with(&query, None) {
            Ok(socket) => break socket,
            Err(503) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            Err(code) => panic!("{code}"),
        }
    };
    many.push(again);
    view(many.last_mut().unwrap(), 8, 8);
    assert!(next(many.last_mut().unwrap(), |_| true).is_ok());
}

/// Frames a second and generations a second of `gol view` at full speed, with a 1920×1080
/// canvas showing the whole world, against a 1×1 viewport (next to no frame production): what
/// docs/benchmarks/api-python-viewer.md reports. `GOL_VIEW_ARGS` gives the world and engine (default: a 4096² soup on
/// cpu-bitsliced). Run with `cargo test --release -p gol-cli --test end_to_end -- --ignored
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
            (state >> 16).is_multiple_of(3) as u8
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
