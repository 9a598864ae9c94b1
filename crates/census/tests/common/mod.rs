//! What the census crate's tests share.

use std::path::{Path, PathBuf};

/// apgsearch's reference output, where this checkout has it (`GOL_CENSUS_REF`, or the shared
/// folder beside the project).
pub fn census_ref() -> Option<PathBuf> {
    let folder = match std::env::var_os("GOL_CENSUS_REF") {
        Some(f) => PathBuf::from(f),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/census-ref"),
    };
    if folder.is_dir() {
        return Some(folder);
    }
    assert!(
        std::env::var_os("GOL_REQUIRE_CENSUS_REF").is_none(),
        "GOL_REQUIRE_CENSUS_REF is set but {} is missing",
        folder.display()
    );
    println!("skipped: no census reference at {}", folder.display());
    None
}
