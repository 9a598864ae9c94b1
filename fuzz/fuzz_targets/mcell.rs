#![no_main]

//! MCell files (`.mcl`): the data after an `#MCell` line, read and placed as `gol run` places
//! a pattern. A refusal is fine, a panic is a bug.

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut text = b"#MCell 4.00\n".to_vec();
    text.extend_from_slice(data);
    common::exercise("fuzz.mcl", &text)
});
