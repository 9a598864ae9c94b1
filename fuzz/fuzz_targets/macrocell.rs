#![no_main]

//! The macrocell reader: the data after an `[M2]` line.

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::exercise("fuzz.mc", &common::macrocell_text(data)));
