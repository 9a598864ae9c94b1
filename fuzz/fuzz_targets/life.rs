#![no_main]

//! The Life 1.06 and 1.05 readers: the data after a `#Life 1.06` or `#Life 1.05` line (the
//! first byte's lowest bit chooses).

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(text) = common::life_text(data) {
        common::exercise("fuzz.lif", &text);
    }
});
