//! `gol identify` and `gol run --identify` end to end: the objects of Golly's collection whose
//! period and speed its files state, the JSON report, and bad input.

use crate::common::{bgolly, error_of, stdout_of};
use serde_json::Value;

fn identified(args: &[&str]) -> Value {
    let mut all = vec!["identify", "--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&stdout_of(&all)).expect("one JSON object")
}

/// Golly's pattern folder, where Golly is installed (bgolly is the sign of it).
fn golly_patterns() -> Option<&'static str> {
    bgolly().map(|_| "/usr/share/golly/Patterns/Life")
}

#[test]
fn golly_objects_get_the_periods_and_speeds_their_files_state() {
    let Some(folder) = golly_patterns() else {
        return;
    };
    // File, type, period, speed, as the files' comments or names give them (the c/3, c/4 and
    // 2c/5 files are collections of ships of one speed, which move as one).
    let stated = [
        ("Oscillators/p138.rle", "oscillator", Some(138), None),
        (
            "Oscillators/queen-bee-turn.rle",
            "oscillator",
            Some(88),
            None,
        ),
        (
            "Spaceships/Corder-lineship.rle",
            "spaceship",
            Some(96),
            Some("c/12 diagonal"),
        ),
        (
            "Spaceships/Cordership-LWSS-freeze-tag.rle",
            "spaceship",
            Some(384),
            Some("c/12 diagonal"),
        ),
        (
            "Spaceships/Cordership-boat-burner.rle",
            "spaceship",
            Some(576),
            Some("c/12 diagonal"),
        ),
        (
            "Spaceships/c3-orthogonal.rle",
            "spaceship",
            None,
            Some("c/3 orthogonal"),
        ),
        (
            "Spaceships/c4-diagonal.rle",
            "spaceship",
            None,
            Some("c/4 diagonal"),
        ),
        (
            "Spaceships/c4-orthogonal.rle",
            "spaceship",
            None,
            Some("c/4 orthogonal"),
        ),
        (
            "Spaceships/2c5-orthogonal.rle",
            "spaceship",
            None,
            Some("2c/5 orthogonal"),
        ),
    ];
    for (file, kind, period, speed) in stated {
        let path = format!("{folder}/{file}");
        let report = identified(&[&path]);
        assert_eq!(report["type"], kind, "{file}");
        if let Some(period) = period {
            assert_eq!(report["period"], period, "{file}");
        }
        assert_eq!(report["speed"].as_str(), speed, "{file}");
    }
    // "This example is period 6144, with a minimum population of 4620."
    let path = format!("{folder}/Spaceships/adjustable-Corder-lineship.rle");
    let report = identified(&[&path, "--max-gens", "7000"]);
    assert_eq!(report["period"], 6144);
    assert_eq!(report["population_range"][0], 4620);
    // The p103079214841 oscillator is far beyond the limit.
    let path = format!("{folder}/Oscillators/p103079214841.rle");
    let report = identified(&[&path, "--max-gens", "1000"]);
    assert_eq!(report["type"], "no period found");
    assert_eq!(report["trend"]["limit"], 1000);
}

#[test]
fn a_report_says_what_it_found() {
    let dir = tempfile::tempdir().unwrap();
    let glider = dir.path().join("glider.rle");
    std::fs::write(&glider, "#CXRLE Pos=10,20\nx = 3, y = 3\nbo$2bo$3o!\n").unwrap();
    let text = stdout_of(&["identify", glider.to_str().unwrap()]);
    for line in [
        "Type: spaceship",
        "apgcode: xq4_153",
        "Period: 4 (mod 2)",
        "Speed: c/4 diagonal (moves 1 right, 1 down each period)",
        "Bounding box: x 10, y 20, width 3, height 3",
        "Population: 5",
        "Heat: 4.0000, temperature 0.8000",
    ] {
        assert!(text.contains(line), "{line:?} not in:\n{text}");
    }
    let json = identified(&[glider.to_str().unwrap()]);
    assert_eq!(json["displacement"], serde_json::json!([1, 1]));
    assert_eq!(json["mod"], 2);
    assert_eq!(json["bounding_box"]["x"], 10);
    // A rule of the command line over the file's: under B36/S23 the glider is still a glider,
    // under B3/S2 it dies.
    let other = identified(&[glider.to_str().unwrap(), "--rule", "B3/S2"]);
    assert_eq!(other["type"], "dies out");
}

#[test]
fn a_run_says_what_its_world_became() {
    // The R-pentomino on the plane, then identified at generation 2000: its ash with gliders
    // flying off never repeats as a whole.
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("r.rle");
    std::fs::write(&r, "x = 3, y = 3\nb2o$2o$bo!\n").unwrap();
    let run: Value = serde_json::from_str(&stdout_of(&[
        "run",
        "--input",
        r.to_str().unwrap(),
        "--gens",
        "2000",
        "--json",
        "--identify",
        "--max-gens",
        "300",
    ]))
    .unwrap();
    assert_eq!(run["alive"], 116);
    assert_eq!(run["identity"]["type"], "no period found");
    // A torus soup that has settled: still lifes and blinkers, period 2.
    let run: Value = serde_json::from_str(&stdout_of(&[
        "run",
        "--size",
        "64",
        "--seed",
        "3",
        "--gens",
        "3000",
        "--json",
        "--identify",
    ]))
    .unwrap();
    let identity = &run["identity"];
    assert!(
        identity["type"] == "oscillator"
            || identity["type"] == "still life"
            || identity["type"] == "no period found",
        "{identity}"
    );
    let text = stdout_of(&[
        "run",
        "--size",
        "16",
        "--seed",
        "1",
        "--gens",
        "500",
        "--identify",
    ]);
    assert!(
        text.contains("Total alive cells:") && text.contains("Type: "),
        "{text}"
    );
}

#[test]
fn bad_input_gets_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.rle");
    std::fs::write(&empty, "x = 0, y = 0\n!\n").unwrap();
    assert!(error_of(&["identify", empty.to_str().unwrap()]).contains("empty"));
    let missing = dir.path().join("missing.rle");
    assert!(error_of(&["identify", missing.to_str().unwrap()]).contains("missing.rle"));
    assert!(error_of(&[
        "run",
        "--dim",
        "3",
        "--size",
        "8",
        "--gens",
        "1",
        "--identify"
    ])
    .contains("2D"));
    assert!(error_of(&["run", "--size", "8", "--max-gens", "10"]).contains("--identify"));
}
