//! The body the pattern fuzz targets share (and the corpus regression test,
//! crates/core/tests/fuzz_corpus.rs): parse, then place the pattern the way `gol run` does.

use std::path::Path;

use gol_core::pattern::PatternFile;

/// Parses `data` as if read from a file called `name` (whose extension counts only where the
/// content does not tell the format); where the header is sane, places the pattern in a grid
/// of the file's bounded-grid size (or its own size) and in one a little larger. Any panic is a bug.
pub fn exercise(name: &str, data: &[u8]) {
    let Ok(file) = PatternFile::from_bytes(Path::new(name), data.to_vec()) else {
        return;
    };
    let header = file.header().clone();
    let (w, h) = header
        .bounds
        .unwrap_or((header.width.max(1), header.height.max(1)));
    // Keep grids small so that the fuzzer explores parsing, not allocation.
    if (w as u64) * (h as u64) <= 1 << 20 {
        let _ = file.place(w, h);
    }
    if (header.width as u64 + 3) * (header.height as u64 + 3) <= 1 << 20 {
        let _ = file.place(header.width + 3, header.height + 3);
    }
}

/// The text the `life` target reads: the data after a `#Life 1.06` or `#Life 1.05` line (the
/// first byte's lowest bit chooses); `None` for empty data.
pub fn life_text(data: &[u8]) -> Option<Vec<u8>> {
    let (&first, rest) = data.split_first()?;
    let mut text = if first & 1 == 0 {
        b"#Life 1.06\n".to_vec()
    } else {
        b"#Life 1.05\n".to_vec()
    };
    text.extend_from_slice(rest);
    Some(text)
}

/// The text the `macrocell` target reads: the data after an `[M2]` line.
pub fn macrocell_text(data: &[u8]) -> Vec<u8> {
    let mut text = b"[M2] (fuzz)\n".to_vec();
    text.extend_from_slice(data);
    text
}
