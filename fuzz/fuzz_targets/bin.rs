#![no_main]

//! The 3D contest's `.bin` reader on arbitrary bytes: a refusal is fine, a panic is a bug.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The reader maps a file: write the bytes to one of this process's own.
    let path = std::env::temp_dir().join(format!("gol-fuzz-{}.bin", std::process::id()));
    std::fs::write(&path, data).unwrap();
    if let Ok((cube, _stamp)) = gol_core::cube_file::read(&path) {
        // What was read is a cube of the side the header gave, with as many live cells as
        // one bytes.
        assert_eq!(
            cube.population(),
            data[16..].iter().filter(|&&b| b == 1).count() as u64
        );
    }
});
