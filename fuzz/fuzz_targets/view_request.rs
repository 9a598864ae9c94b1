#![no_main]

//! `gol view`'s messages on arbitrary text, read by the server's own code
//! (`crates/cli/src/view/request.rs`): a refusal is a short error for the page, never a panic;
//! a request read is held to its bounds (a canvas of at most 8192 a side and 2^24 pixels,
//! steps and speeds of at most 2^40 generations).

#[allow(dead_code)]
#[path = "../../crates/cli/src/view/request.rs"]
mod request;

use libfuzzer_sys::fuzz_target;
use request::{canvas, most, Request, MAX_CANVAS, MAX_PIXELS, MOST_GENERATIONS};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let bounded = |generations: u64, what: &str| match most(generations, what) {
        Ok(n) => assert!(n == generations && n <= MOST_GENERATIONS),
        Err(e) => assert!(generations > MOST_GENERATIONS && e.len() < 100, "{e}"),
    };
    match Request::parse(text) {
        Err(e) => assert!(e.len() < 300, "a message of {} bytes", e.len()),
        Ok(Request::View {
            pixels_wide,
            pixels_high,
            ..
        }) => {
            let (w, h) = canvas(pixels_wide, pixels_high);
            assert!((1..=MAX_CANVAS).contains(&w) && (1..=MAX_CANVAS).contains(&h));
            assert!(w * h <= MAX_PIXELS, "{pixels_wide}x{pixels_high} gave {w}x{h}");
        }
        Ok(Request::Step { generations }) => bounded(generations.unwrap_or(1), "step"),
        Ok(Request::Speed { generations }) => bounded(generations, "speed"),
        Ok(_) => {}
    }
});
