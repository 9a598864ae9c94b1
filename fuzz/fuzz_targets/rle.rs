#![no_main]

mod common;

use gol_core::pattern::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::exercise(Format::Rle, data));
