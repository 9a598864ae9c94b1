#![no_main]

//! The checkpoint reader on arbitrary bytes, as a 2D and as a 3D state: a refusal is fine, a
//! panic is a bug.

use gol_core::{checkpoint, Cube, Grid};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("gol-fuzz-{}.gol", std::process::id()));
    std::fs::write(&path, data).unwrap();
    if let Ok(opened) = checkpoint::open(&path) {
        let _ = opened.read::<Grid>();
        let _ = opened.read::<Cube>();
    }
});
