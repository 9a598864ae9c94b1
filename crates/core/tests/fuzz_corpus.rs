//! The fuzz corpora (fuzz/corpus/, grown by `cargo fuzz run`, see docs/reliability.md) as
//! regression tests: every input of the rule parser's and the pattern readers' corpora goes
//! through the same checks as in its fuzz target, so a fixed crash stays fixed without a fuzzer.

#[path = "../../../fuzz/fuzz_targets/common.rs"]
mod common;

use std::path::PathBuf;

use gol_core::Rule;

/// The inputs of one target's corpus. The folder is found from the crate (under cargo) or the
/// working directory (the project root, where test binaries run elsewhere); missing, it is
/// skipped with a notice.
fn corpus(target: &str) -> Vec<Vec<u8>> {
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(|dir| PathBuf::from(dir).join("../.."))
        .unwrap_or_else(|| PathBuf::from("."));
    let dir = root.join("fuzz/corpus").join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("notice: no corpus at {}; skipping", dir.display());
        return Vec::new();
    };
    let inputs: Vec<Vec<u8>> = entries
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    assert!(!inputs.is_empty(), "{} is empty", dir.display());
    inputs
}

#[test]
fn rule_corpus_parses_and_reads_back() {
    for data in corpus("rule") {
        let Ok(text) = std::str::from_utf8(&data) else {
            continue;
        };
        if let Ok(rule) = Rule::parse(text) {
            assert_eq!(Rule::parse(&rule.to_string()).ok(), Some(rule), "{text:?}");
        }
    }
}

#[test]
fn pattern_corpora_parse_and_place_without_panics() {
    for data in corpus("rle") {
        common::exercise("fuzz.rle", &data);
    }
    for data in corpus("cells") {
        common::exercise("fuzz.cells", &data);
    }
    for data in corpus("life") {
        if let Some(text) = common::life_text(&data) {
            common::exercise("fuzz.lif", &text);
        }
    }
    for data in corpus("macrocell") {
        common::exercise("fuzz.mc", &common::macrocell_text(&data));
    }
}
