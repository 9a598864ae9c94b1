//! The body both fuzz targets share: parse, then place the pattern the way `gol run` does.

use std::path::Path;

use gol_core::pattern::{Format, PatternFile};

/// Parses `data` as `format`; where the header is sane, places the pattern in a grid of the
/// file's torus size (or its own size) and in one a little larger. Any panic is a bug.
pub fn exercise(format: Format, data: &[u8]) {
    let Ok(file) = PatternFile::from_bytes(Path::new("fuzz"), format, data.to_vec()) else {
        return;
    };
    let header = file.header().clone();
    let (w, h) = header.torus.unwrap_or((header.width.max(1), header.height.max(1)));
    // Keep grids small so that the fuzzer explores parsing, not allocation.
    if (w as u64) * (h as u64) <= 1 << 20 {
        let _ = file.place(w, h);
    }
    if (header.width as u64 + 3) * (header.height as u64 + 3) <= 1 << 20 {
        let _ = file.place(header.width + 3, header.height + 3);
    }
}
