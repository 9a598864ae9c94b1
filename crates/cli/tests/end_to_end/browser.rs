//! `gol view` in a real browser: headless Chromium driven through chromedriver (WebDriver).
//! Skipped with a notice where Chromium or chromedriver is missing; `GOL_REQUIRE_BROWSER=1`
//! (set by CI, which installs them) makes that a failure. Leaves a screenshot of the page in
//! `target/viewer-screenshot.png` for a person to look at.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;

use crate::common::{gol_path, gzip, png_indices, stdout_of, zip_bytes};
use serde_json::{json, Value};

/// A child process killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One HTTP request to `address`, its JSON answer (read to the length the headers give).
fn http(address: &str, method: &str, path: &str, body: Option<&Value>) -> Value {
    try_http(address, method, path, body)
        .unwrap_or_else(|e| panic!("{method} {path} to {address}: {e}"))
}

/// [`http`], or the connection's failure.
fn try_http(
    address: &str,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> std::io::Result<Value> {
    let stream = TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        &stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap();
            }
        }
    }
    let mut json = vec![0; length];
    reader.read_exact(&mut json)?;
    Ok(serde_json::from_slice(&json).unwrap_or(Value::Null))
}

/// A WebDriver session of headless Chromium.
struct Browser {
    driver: String,
    session: String,
    _chromedriver: Killed,
}

impl Browser {
    fn start(chromium: &Path, chromedriver: &Path) -> Browser {
        let port = free_port();
        let child = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let driver = format!("127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(&driver).is_err() {
            assert!(Instant::now() < deadline, "chromedriver does not answer");
            std::thread::sleep(Duration::from_millis(100));
        }
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1100,760"]
            },
            "goog:loggingPrefs": {"browser": "ALL"}
        }}});
        // A chromedriver that has just begun to listen, on a loaded machine, may drop the
        // first connection (CI once saw "connection reset" here): asked again, it answers.
        let mut tries = 0;
        let answer = loop {
            match try_http(&driver, "POST", "/session", Some(&capabilities)) {
                Ok(answer) => break answer,
                Err(e) if tries < 3 => {
                    eprintln!("chromedriver: {e}; asking again");
                    tries += 1;
                    std::thread::sleep(Duration::from_secs(1));
                }
                Err(e) => panic!("chromedriver starts no session: {e}"),
            }
        };
        let session = answer["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {answer}"))
            .to_string();
        Browser {
            driver,
            session,
            _chromedriver: Killed(child),
        }
    }

    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let path = format!("/session/{}{path}", self.session);
        http(&self.driver, method, &path, body)["value"].clone()
    }

    fn script(&self, code: &str) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(&json!({"script": code, "args": []})),
        )
    }

    /// The WebDriver id of the element `css` finds.
    fn element(&self, css: &str) -> String {
        let found = self.call(
            "POST",
            "/element",
            Some(&json!({"using": "css selector", "value": css})),
        );
        found
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no element {css}: {found}"))
            .to_string()
    }

    fn click(&self, css: &str) {
        let id = self.element(css);
        self.call("POST", &format!("/element/{id}/click"), Some(&json!({})));
    }

    /// Chooses the file at `path` in the file input `css`, as a person would.
    fn choose_file(&self, css: &str, path: &Path) {
        let id = self.element(css);
        let text = path.to_str().unwrap();
        self.call(
            "POST",
            &format!("/element/{id}/value"),
            Some(&json!({"text": text})),
        );
    }

    /// Waits until the script's value is true.
    fn wait_for(&self, what: &str, code: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.script(code) != Value::Bool(true) {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Opens the viewer at `url` and waits for frames of the fitted view of a world `width`
    /// cells wide.
    fn open_viewer(&self, url: &str, width: usize) {
        self.call("POST", "/url", Some(&json!({"url": url})));
        self.wait_for(
            "the first frames of the fitted view",
            &format!("const v = window.golViewer; return !!v && v.state.frames > 2 && !!v.state.status && v.state.status.width === {width}"),
        );
        // Let a frame of the fitted view arrive.
        std::thread::sleep(Duration::from_millis(300));
    }

    /// Clicks Step and waits for the frame of generation `gens`.
    fn step_to(&self, gens: u64) {
        self.click("#step");
        self.wait_for("the step", &format!("return window.golViewer.state.status.generation === {gens} && window.golViewer.state.frame !== null"));
        std::thread::sleep(Duration::from_millis(150));
    }

    fn generation(&self) -> u64 {
        self.script(
            "return window.golViewer.state.status ? window.golViewer.state.status.generation : -1",
        )
        .as_u64()
        .unwrap_or(u64::MAX)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = http(
            &self.driver,
            "DELETE",
            &format!("/session/{}", self.session),
            None,
        );
    }
}

fn find(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// The live cells of a `.cells` file `gol run` wrote.
fn cells_of(path: &Path) -> Vec<Vec<bool>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('!'))
        .map(|l| l.chars().map(|c| c == 'O').collect())
        .collect()
}

/// Chromium and chromedriver, where both are installed; `None` with a notice where not (a
/// failure under `GOL_REQUIRE_BROWSER`).
fn browser_paths() -> Option<(PathBuf, PathBuf)> {
    let (Some(chromium), Some(chromedriver)) = (
        find(&["chromium", "chromium-browser", "google-chrome"]),
        find(&["chromedriver"]),
    ) else {
        assert!(
            std::env::var_os("GOL_REQUIRE_BROWSER").is_none(),
            "GOL_REQUIRE_BROWSER is set but Chromium or chromedriver is missing"
        );
        eprintln!("notice: Chromium or chromedriver not found (Debian: chromium, chromium-driver); skipping");
        return None;
    };
    Some((chromium, chromedriver))
}

/// Starts `gol view` with `args` on a free port: the server (killed when dropped) and its URL.
fn serve(args: &[&str]) -> (Killed, String) {
    let mut server = Command::new(gol_path())
        .arg("view")
        .args(args)
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    (Killed(server), url.trim().to_string())
}

/// Writes the page's screenshot to `target/NAME` (a temporary folder where there is no
/// `target`), for a person to look at.
fn screenshot(browser: &Browser, name: &str) {
    let shot = browser.call("GET", "/screenshot", None);
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot.as_str().unwrap())
        .unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target");
    let path = if target.is_dir() {
        target
    } else {
        std::env::temp_dir()
    }
    .join(name);
    std::fs::write(&path, png).unwrap();
    eprintln!("screenshot: {}", path.display());
}

/// Fails on any error in the page's console.
fn assert_no_console_errors(browser: &Browser) {
    let logs = browser.call("POST", "/se/log", Some(&json!({"type": "browser"})));
    let severe: Vec<&Value> = logs
        .as_array()
        .map(|l| l.iter().filter(|e| e["level"] == "SEVERE").collect())
        .unwrap_or_default();
    assert!(severe.is_empty(), "console errors: {severe:?}");
}

/// The colours of cells (0, 0) to (n - 1, n - 1) on the canvas, row by row.
fn colours(browser: &Browser, n: usize) -> Vec<Value> {
    let code = format!("const out = []; for (let y = 0; y < {n}; y++) for (let x = 0; x < {n}; x++) out.push(window.golViewer.cellColour(x, y)); return out;");
    browser.script(&code).as_array().unwrap().clone()
}

/// Each pixel's colour, as `[r, g, b]`, of the indexed PNG at `path` (one pixel a cell).
fn picture_colours(path: &Path) -> Vec<Value> {
    let (_, _, palette, pixels) = png_indices(path);
    pixels
        .iter()
        .map(|&i| json!(palette[3 * i as usize..][..3]))
        .collect()
}

/// A soup played: the generations go on while it plays, and once paused the page shows the
/// population `gol run` gives at that generation. The README's picture (docs/viewer.png) is the
/// page while it plays.
#[test]
fn the_viewer_plays_a_soup_in_chromium() {
    let Some((chromium, chromedriver)) = browser_paths() else {
        return;
    };
    let soup = ["--size", "128", "--density", "0.3", "--seed", "7"];
    let (_server, url) = serve(&soup);
    let browser = Browser::start(&chromium, &chromedriver);
    browser.open_viewer(&url, 128);
    browser.click("#play");
    browser.wait_for(
        "a hundred generations played",
        "const s = window.golViewer.state.status; return s.running && s.generation >= 100",
    );
    std::thread::sleep(Duration::from_millis(300));
    screenshot(&browser, "viewer-playing.png");
    browser.click("#play");
    browser.wait_for(
        "the pause",
        "const s = window.golViewer.state.status; return !s.running",
    );
    std::thread::sleep(Duration::from_millis(300));
    let generation = browser.generation();
    assert!(generation >= 100, "{generation}");
    let population = browser.script("return document.getElementById('population').textContent");
    let mut run = vec!["run", "--gens"];
    let gens = generation.to_string();
    run.push(&gens);
    run.extend(soup);
    run.push("--json");
    let report = stdout_of(&run);
    let alive = serde_json::from_str::<Value>(&report).unwrap()["alive"].clone();
    // The page writes thousands apart with commas.
    let shown = population.as_str().unwrap().replace(',', "");
    assert_eq!(shown, alive.to_string(), "generation {generation}");
}

#[test]
fn the_viewer_draws_steps_and_reports_errors_in_chromium() {
    let Some((chromium, chromedriver)) = browser_paths() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let glider = dir.path().join("glider.rle");
    std::fs::write(&glider, "x = 3, y = 3, rule = B3/S23:T16,16\nbo$2bo$3o!\n").unwrap();
    let expected = |gens: u32| {
        let out = dir.path().join(format!("g{gens}.cells"));
        stdout_of(&[
            "run",
            "--input",
            glider.to_str().unwrap(),
            "--gens",
            &gens.to_string(),
            "--output",
            out.to_str().unwrap(),
        ]);
        cells_of(&out)
    };

    let (_server, url) = serve(&["--input", glider.to_str().unwrap()]);
    let browser = Browser::start(&chromium, &chromedriver);
    browser.open_viewer(&url, 16);

    let check = |gens: u32| {
        let cells = expected(gens);
        let colours = colours(&browser, 16);
        for y in 0..16 {
            for x in 0..16 {
                let colour = &colours[y * 16 + x];
                let want = if cells[y][x] {
                    json!([253, 231, 37])
                } else {
                    json!([68, 1, 84])
                };
                assert_eq!(colour, &want, "cell ({x}, {y}) at generation {gens}");
            }
        }
    };
    assert_eq!(browser.generation(), 0);
    check(0);

    // Pause/step: each click advances exactly one generation.
    for gens in 1..=4u64 {
        browser.step_to(gens);
        assert_eq!(browser.generation(), gens);
    }
    check(4);
    let population = browser.script("return document.getElementById('population').textContent");
    let report = stdout_of(&[
        "run",
        "--input",
        glider.to_str().unwrap(),
        "--gens",
        "4",
        "--json",
    ]);
    let alive = serde_json::from_str::<Value>(&report).unwrap()["alive"].clone();
    assert_eq!(population.as_str().unwrap(), alive.to_string());
    screenshot(&browser, "viewer-screenshot.png");

    // A malformed upload: an error on the page, and the frames go on.
    browser.script("window.golViewer.send({type: 'load', name: 'broken.rle', text: 'x = 3, y = 3\\nbo$2bo$3q!'}); return null");
    browser.wait_for(
        "the error",
        "return document.getElementById('error').textContent.includes('broken.rle')",
    );
    let frames = browser
        .script("return window.golViewer.state.frames")
        .as_u64()
        .unwrap();
    browser.wait_for(
        "more frames",
        &format!("return window.golViewer.state.frames > {frames}"),
    );

    screenshot(&browser, "viewer-error.png");

    // A zip archive of two patterns chosen in the file input: the page asks which, and loads
    // the gzipped one chosen.
    let archive = dir.path().join("two.zip");
    let blinker = gzip(b"x = 3, y = 1, rule = B3/S23:T12,12\n3o!\n");
    std::fs::write(
        &archive,
        zip_bytes(&[
            (
                "two/block.rle",
                b"x = 2, y = 2, rule = B3/S23:T8,8\n2o$2o!\n",
            ),
            ("two/blinker.rle.gz", &blinker),
        ]),
    )
    .unwrap();
    browser.choose_file("#file", &archive);
    browser.wait_for(
        "the archive's patterns",
        "return !document.getElementById('member-row').hidden && document.getElementById('member').options.length === 3",
    );
    screenshot(&browser, "viewer-archive-choice.png");
    browser.script("const m = document.getElementById('member'); m.value = 'two/blinker.rle.gz'; m.dispatchEvent(new Event('change')); return null");
    browser.wait_for(
        "the blinker",
        "const s = window.golViewer.state.status; return s.width === 12 && s.population === 3",
    );
    assert_no_console_errors(&browser);
}

#[test]
fn the_viewer_fades_dying_cells_as_pictures_do_in_chromium() {
    let Some((chromium, chromedriver)) = browser_paths() else {
        return;
    };
    // Star Wars on a 16x16 torus from a soup; after each step the canvas must show every cell
    // in the colour a still picture of the same generation gives it (dying cells faded).
    let dir = tempfile::tempdir().unwrap();
    let soup = dir.path().join("wars.rle");
    stdout_of(&[
        "run",
        "--size",
        "16",
        "--seed",
        "5",
        "--rule",
        "345/2/4",
        "--gens",
        "0",
        "--output",
        soup.to_str().unwrap(),
    ]);
    let expected = |gens: u64| -> Vec<Value> {
        let png = dir.path().join(format!("w{gens}.png"));
        stdout_of(&[
            "run",
            "--input",
            soup.to_str().unwrap(),
            "--gens",
            &gens.to_string(),
            "--scale",
            "1",
            "--output",
            png.to_str().unwrap(),
        ]);
        picture_colours(&png)
    };
    let (_server, url) = serve(&["--input", soup.to_str().unwrap()]);
    let browser = Browser::start(&chromium, &chromedriver);
    browser.open_viewer(&url, 16);
    let mut faded = 0;
    for gens in 1..=3u64 {
        browser.step_to(gens);
        let want = expected(gens);
        let got = colours(&browser, 16);
        for (i, (got, want)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                got,
                want,
                "cell ({}, {}) at generation {gens}",
                i % 16,
                i / 16
            );
        }
        faded += want
            .iter()
            .filter(|c| **c != json!([253, 231, 37]) && **c != json!([68, 1, 84]))
            .count();
    }
    assert!(faded > 0, "some cells were dying");
    screenshot(&browser, "viewer-generations.png");
    assert_no_console_errors(&browser);
}

#[test]
fn the_viewer_shows_a_rule_table_s_colours_in_chromium() {
    let Some((chromium, chromedriver)) = browser_paths() else {
        return;
    };
    // A rule table whose states stay as they are, coloured by its @COLORS: the canvas shows
    // each cell in the colour a still picture gives it.
    let dir = tempfile::tempdir().unwrap();
    crate::common::still_rule(dir.path(), "0 20 20 20\n1 255 128 0\n2 0 0 255\n");
    let start = dir.path().join("start.rle");
    std::fs::write(&start, "x = 4, y = 3, rule = Still\nA.B$2BAB$3.A!\n").unwrap();
    let rules = dir.path().to_str().unwrap();
    let png = dir.path().join("still.png");
    let world = [
        "--rules",
        rules,
        "--input",
        start.to_str().unwrap(),
        "--size",
        "16",
    ];
    let picture = [
        "--gens",
        "0",
        "--scale",
        "1",
        "--output",
        png.to_str().unwrap(),
    ];
    stdout_of(&[&["run"][..], &world, &picture].concat());
    let want = picture_colours(&png);
    let coloured = want.iter().filter(|c| **c == json!([255, 128, 0])).count();
    assert_eq!(coloured, 3, "the picture's own colours");
    let (_server, url) = serve(&world);
    let browser = Browser::start(&chromium, &chromedriver);
    browser.open_viewer(&url, 16);
    browser.step_to(1);
    let got = colours(&browser, 16);
    for (i, (got, want)) in got.iter().zip(&want).enumerate() {
        assert_eq!(got, want, "cell ({}, {})", i % 16, i / 16);
    }
    assert_no_console_errors(&browser);
}

#[test]
fn the_viewer_shows_a_cube_summed_and_sliced_in_chromium() {
    let Some((chromium, chromedriver)) = browser_paths() else {
        return;
    };
    let m = 24;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("c.bin");
    let side = m.to_string();
    stdout_of(&[
        "run",
        "--dim",
        "3",
        "--size",
        &side,
        "--gens",
        "0",
        "--output",
        bin.to_str().unwrap(),
    ]);
    // The cells from the file: byte 16 + x·M·M + y·M + z.
    let bytes = std::fs::read(&bin).unwrap();
    let cell = |x: usize, y: usize, z: usize| bytes[16 + x * m * m + y * m + z] == 1;

    let (_server, url) = serve(&["--dim", "3", "--size", &side]);
    let browser = Browser::start(&chromium, &chromedriver);
    browser.call("POST", "/url", Some(&json!({"url": url})));
    browser.wait_for(
        "the first frames of the cube",
        &format!("const v = window.golViewer; return !!v && v.state.frames > 2 && !!v.state.status && v.state.status.depth === {m}"),
    );
    assert_eq!(
        browser.script("return document.getElementById('cube').hidden"),
        Value::Bool(false)
    );
    assert_eq!(
        browser.script("return document.getElementById('size').textContent"),
        json!(format!("{m} × {m} × {m}"))
    );
    // The slice z = 5: rows x, columns y, each cell bright where it lives.
    browser.script(
        "document.getElementById('axis').value = 'z'; document.getElementById('axis').dispatchEvent(new Event('change')); return null",
    );
    browser.click("#slice-on");
    browser.script(
        "const s = document.getElementById('slice'); s.value = 5; s.dispatchEvent(new Event('input')); return null",
    );
    let live = |colour: &Value| colour == &json!([253, 231, 37]);
    let wanted: Vec<bool> = (0..m * m).map(|i| cell(i / m, i % m, 5)).collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let shown: Vec<bool> = colours(&browser, m).iter().map(live).collect();
        if shown == wanted {
            break;
        }
        assert!(Instant::now() < deadline, "the slice z = 5 is not drawn");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        browser.script("return document.getElementById('slice-index').textContent"),
        json!("5")
    );
    screenshot(&browser, "viewer-cube-screenshot.png");
    assert_no_console_errors(&browser);
}

/// The canvas colours of the live and the dead cells (the palette's two ends).
const LIVE: [u8; 3] = [253, 231, 37];
const DEAD: [u8; 3] = [68, 1, 84];

#[test]
fn the_viewer_draws_the_infinite_plane_zoomed_out_and_pans_to_a_far_glider_in_chromium() {
    let Some((chromium, chromedriver)) = browser_paths() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Two blocks 2^20 cells apart, the pattern file without a size: the infinite plane.
    let wide = dir.path().join("wide.rle");
    let gap = (1 << 20) - 4;
    std::fs::write(
        &wide,
        format!("x = 1048576, y = 2, rule = B3/S23\n2o{gap}b2o$2o{gap}b2o!\n"),
    )
    .unwrap();
    let (_server, url) = serve(&["--input", wide.to_str().unwrap()]);
    let browser = Browser::start(&chromium, &chromedriver);
    browser.call("POST", "/url", Some(&json!({"url": url})));
    browser.wait_for(
        "the first frames of the plane",
        "const v = window.golViewer; return !!v && v.state.frames > 2 && v.state.plane && v.state.frame.level > 0",
    );
    std::thread::sleep(Duration::from_millis(300));
    let status = browser.script("return window.golViewer.state.status");
    let b = &status["bounding_box"];
    assert_eq!(b["width"], "1048576", "{status}");
    assert_eq!(b["height"], "2", "{status}");
    let x: i64 = b["x"].as_str().unwrap().parse().unwrap();
    let y: i64 = b["y"].as_str().unwrap().parse().unwrap();
    // Fitted: the whole box on a canvas about a thousand pixels wide, a pixel a block of the
    // tree of 2^11 cells or so, from its populations.
    let level = browser
        .script("return window.golViewer.state.frame.level")
        .as_u64()
        .unwrap();
    assert!((10..=12).contains(&level), "level {level}");
    let colour = |cx: i64, cy: i64| {
        browser.script(&format!(
            "return window.golViewer.cellColour('{cx}', '{cy}')"
        ))
    };
    for (cx, what) in [(x, "left"), (x + (1 << 20) - 1, "right")] {
        let c = colour(cx, y);
        assert!(
            c.is_array() && c != json!(DEAD),
            "the {what} block is not drawn: {c}"
        );
    }
    assert_eq!(colour(x + (1 << 19), y), json!(DEAD), "between the blocks");
    screenshot(&browser, "viewer-plane-wide.png");

    // A glider, stepped 2^40 generations in one step: it is 2^38 cells down and right, far off
    // the fitted view, until the page goes to it.
    let glider = dir.path().join("glider.rle");
    std::fs::write(
        &glider,
        "#CXRLE Pos=0,0\nx = 3, y = 3, rule = B3/S23\nbo$2bo$3o!\n",
    )
    .unwrap();
    let text = std::fs::read_to_string(&glider).unwrap();
    browser.script(&format!(
        "window.golViewer.send({{type: 'load', name: 'glider.rle', text: {}}}); return null",
        json!(text)
    ));
    browser.wait_for(
        "the glider",
        "const s = window.golViewer.state.status; return s.restarts === 1 && s.population === '5'",
    );
    browser.script("const s = document.getElementById('speed'); s.value = '1099511627776'; s.dispatchEvent(new Event('change')); return null");
    browser.click("#step");
    browser.wait_for(
        "generation 2^40",
        "return window.golViewer.state.status.generation === '1099511627776'",
    );
    let far = 1i64 << 38;
    let status = browser.script("return window.golViewer.state.status");
    assert_eq!(status["bounding_box"]["x"], far.to_string(), "{status}");
    assert_eq!(status["bounding_box"]["y"], far.to_string(), "{status}");
    std::thread::sleep(Duration::from_millis(300));
    assert_ne!(
        colour(far, far + 2),
        json!(LIVE),
        "the glider is not yet in view"
    );

    browser.script(&format!("document.getElementById('goto-x').value = '{}'; document.getElementById('goto-y').value = '{}'; return null", far + 1, far + 1));
    browser.click("#goto");
    browser.wait_for(
        "a frame of the glider",
        &format!("const f = window.golViewer.state.frame; return f.level === 0 && f.px <= {far}n && f.px + BigInt(f.width) > {}n", far + 2),
    );
    std::thread::sleep(Duration::from_millis(300));
    let live = [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)];
    for dy in 0..3 {
        for dx in 0..3 {
            let want = if live.contains(&(dx, dy)) { LIVE } else { DEAD };
            assert_eq!(
                colour(far + dx, far + dy),
                json!(want),
                "cell ({dx}, {dy}) of the glider"
            );
        }
    }
    let cursor = browser.script("return document.getElementById('generation').textContent");
    assert_eq!(cursor, "1,099,511,627,776");
    screenshot(&browser, "viewer-plane-glider.png");
    assert_no_console_errors(&browser);
}
