//! What the end-to-end tests share: running the `gol` binary.
#![allow(dead_code)] // each test file uses its own share of these

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `gol` binary: `$GOL_BIN`, else the one cargo built, else `../bin/gol` beside this test
/// binary (the layout of the bundle carried to the GPU machine).
pub fn gol_path() -> PathBuf {
    if let Some(path) = std::env::var_os("GOL_BIN") {
        return PathBuf::from(path);
    }
    let built = PathBuf::from(env!("CARGO_BIN_EXE_gol"));
    if built.exists() {
        return built;
    }
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("bundle layout")
        .join("bin/gol")
}

pub fn gol(args: &[&str]) -> Output {
    Command::new(gol_path())
        .args(args)
        .output()
        .expect("gol runs")
}

pub fn stdout_of(args: &[&str]) -> String {
    let out = gol(args);
    assert!(
        out.status.success(),
        "gol {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Runs gol expecting failure: one line on stderr, no panic, exit code non-zero.
pub fn error_of(args: &[&str]) -> String {
    let out = gol(args);
    let stderr = String::from_utf8(out.stderr).expect("utf-8 stderr");
    assert!(!out.status.success(), "gol {args:?} should fail");
    assert!(
        !stderr.contains("panicked"),
        "gol {args:?} panicked: {stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "gol {args:?}: {stderr}");
    stderr
}
