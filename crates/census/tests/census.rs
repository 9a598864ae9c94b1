//! The census against apgsearch 5.2's own output (`shared/census-ref`): soups bit for bit, and
//! per-soup tallies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gol_census::census::{self, Tally};
use gol_census::objects::Classifier;
use gol_census::soup;

/// apgsearch's reference output, where this checkout has it (`GOL_CENSUS_REF`, or the shared
/// folder beside the project).
fn census_ref() -> Option<PathBuf> {
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

/// The reference's per-soup tallies: index → objects.
fn tallies(text: &str) -> Vec<(u64, BTreeMap<String, u64>)> {
    text.lines()
        .skip(1)
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            let objects = fields[8]
                .split_whitespace()
                .map(|item| {
                    let (code, n) = item.rsplit_once(':').unwrap();
                    (code.to_string(), n.parse().unwrap())
                })
                .collect();
            (fields[1].parse().unwrap(), objects)
        })
        .collect()
}

#[test]
fn soups_are_bit_for_bit_apgsearchs() {
    let Some(folder) = census_ref() else { return };
    let text = std::fs::read_to_string(folder.join("soups.tsv")).unwrap();
    let mut checked = 0;
    for line in text.lines().skip(1) {
        let fields: Vec<&str> = line.split('\t').collect();
        let rows = soup::rows(fields[0]);
        let cells: String = (0..256)
            .map(|i| {
                if rows[i / 16] >> (i % 16) & 1 != 0 {
                    '1'
                } else {
                    '0'
                }
            })
            .collect();
        assert_eq!(cells, fields[3], "{}", fields[0]);
        checked += 1;
    }
    assert_eq!(checked, 2000);
}

#[test]
fn tallies_match_the_first_thousand_soups() {
    let Some(folder) = census_ref() else { return };
    let text = std::fs::read_to_string(folder.join("tallies-k_testseed-0-999.tsv")).unwrap();
    let mut classifier = Classifier::default();
    let mut differ = Vec::new();
    for (index, want) in tallies(&text) {
        let Tally { objects, .. } = census::of_id(&soup::id("k_testseed", index), &mut classifier);
        if objects != want {
            differ.push(format!("{index}: ours {objects:?}\n   theirs {want:?}"));
        }
    }
    assert!(
        differ.is_empty(),
        "{} soups differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}
