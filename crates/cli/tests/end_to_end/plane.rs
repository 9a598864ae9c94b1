//! End-to-end tests of `gol run` on the infinite plane: exact numbers of any size, files
//! written far out and read back in place, checkpoints, and what is refused.

use crate::common::{error_of, gol, stdout_of};

const GLIDER: &str = "#N Glider\nx = 3, y = 3, rule = B3/S23\nbo$2bo$3o!\n";

fn temp_file(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// The raw JSON text of field `key` (a number of any size stays exact as text).
fn raw<'a>(json: &'a str, key: &str) -> &'a str {
    let start = json
        .find(&format!("\"{key}\":"))
        .unwrap_or_else(|| panic!("no {key} in {json}"))
        + key.len()
        + 3;
    let end = json[start..].find([',', '}']).map(|e| start + e).unwrap();
    &json[start..end]
}

#[test]
fn a_glider_runs_ten_to_the_hundred_generations_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let glider = temp_file(&dir, "glider.rle", GLIDER);
    let json = stdout_of(&["run", "--input", &glider, "--gens", "10^100", "--json"]);
    let googol = format!("1{}", "0".repeat(100));
    // A glider moves one cell down and right every 4 generations: 10^100 / 4 = 25 × 10^98.
    let quarter = format!("25{}", "0".repeat(98));
    assert_eq!(raw(&json, "alive"), "5");
    assert_eq!(raw(&json, "generations"), googol);
    assert_eq!(raw(&json, "universe"), "\"infinite plane\"");
    assert_eq!(raw(&json, "x"), quarter);
    assert_eq!(raw(&json, "y"), quarter);
    assert_eq!(raw(&json, "width"), "3");
    // Cell rates mean nothing where generations are skipped: HashLife reports none.
    assert!(!json.contains("cell_updates_per_second"), "{json}");
    // The report says the same, with the algorithm and the bounding box.
    let report = stdout_of(&["run", "--input", &glider, "--gens", "10^100"]);
    assert!(report.contains("Total alive cells: 5"), "{report}");
    assert!(report.contains(&format!("Bounding box: x {quarter}, y {quarter}")));
    assert!(report.contains("Engine: hashlife"), "{report}");
}

#[test]
fn a_pattern_written_far_out_reads_back_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let glider = temp_file(&dir, "glider.rle", GLIDER);
    let far = dir.path().join("far.rle");
    let far = far.to_str().unwrap();
    stdout_of(&[
        "run", "--input", &glider, "--gens", "10^30", "--output", far,
    ]);
    let text = std::fs::read_to_string(far).unwrap();
    let quarter = format!("25{}", "0".repeat(28));
    assert!(
        text.starts_with(&format!(
            "#CXRLE Pos={quarter},{quarter} Gen=1{}",
            "0".repeat(30)
        )),
        "{text}"
    );
    // Four generations on from there: one cell further.
    let json = stdout_of(&["run", "--input", far, "--gens", "4", "--json"]);
    let next = format!("25{}1", "0".repeat(27));
    assert_eq!(raw(&json, "x"), next);
    assert_eq!(raw(&json, "y"), next);
    // The macrocell written from the tree holds the same.
    let mc = dir.path().join("far.mc");
    let mc = mc.to_str().unwrap();
    stdout_of(&["run", "--input", far, "--gens", "0", "--output", mc]);
    let json = stdout_of(&["run", "--input", mc, "--gens", "4", "--json"]);
    assert_eq!(raw(&json, "alive"), "5");
    assert!(raw(&json, "x").len() <= 31, "{json}");
}

#[test]
fn checkpoints_on_the_plane_resume_and_refuse_damage() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = dir.path().join("c.gol");
    let c = checkpoint.to_str().unwrap();
    let soup = ["--size", "64", "--infinite", "--seed", "7"];
    let first = [&soup[..], &["--gens", "300", "--checkpoint", c, "--json"]].concat();
    stdout_of(&[&["run"][..], &first].concat());
    let resumed = stdout_of(&["run", "--resume", c, "--gens", "1000", "--json"]);
    let fresh = stdout_of(&[&["run"][..], &soup, &["--gens", "1000", "--json"]].concat());
    for key in ["alive", "generations", "x", "y", "width", "height"] {
        assert_eq!(raw(&resumed, key), raw(&fresh, key), "{key}");
    }
    assert_eq!(raw(&resumed, "universe"), "\"infinite plane\"");
    // A flipped byte in the middle, or a cut, is refused in one line.
    let bytes = std::fs::read(&checkpoint).unwrap();
    let mut flipped = bytes.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x10;
    let damaged = dir.path().join("damaged.gol");
    std::fs::write(&damaged, &flipped).unwrap();
    let err = error_of(&[
        "run",
        "--resume",
        damaged.to_str().unwrap(),
        "--gens",
        "1000",
    ]);
    assert!(err.contains("damaged.gol"), "{err}");
    let cut = dir.path().join("cut.gol");
    std::fs::write(&cut, &bytes[..bytes.len() - 9]).unwrap();
    let err = error_of(&["run", "--resume", cut.to_str().unwrap(), "--gens", "1000"]);
    assert!(err.contains("cut.gol"), "{err}");
}

#[test]
fn bad_input_on_the_plane_is_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let glider = temp_file(&dir, "glider.rle", GLIDER);
    let far = temp_file(
        &dir,
        "far.rle",
        &format!(
            "#CXRLE Pos={},0\nx = 3, y = 3, rule = B3/S23\nbo$2bo$3o!\n",
            "1".repeat(1300)
        ),
    );
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["run", "--input", &glider, "--gens", "1.5"],
            "not a generation count",
        ),
        (
            vec!["run", "--input", &glider, "--gens", "2^x"],
            "not a generation count",
        ),
        (
            vec!["run", "--input", &glider, "--gens", "1e9"],
            "not a generation count",
        ),
        (
            vec![
                "run",
                "--size",
                "64",
                "--infinite",
                "--engine",
                "cpu-bitsliced",
            ],
            "not the infinite plane",
        ),
        (
            vec!["run", "--input", &glider, "--memory", "1M"],
            "too small",
        ),
        (
            vec!["run", "--input", &glider, "--memory", "lots"],
            "invalid value",
        ),
        // Too small for one step: HashLife's nodes of a 2048² soup; under auto, the tiles of
        // an 8192² one and then HashLife's nodes.
        (
            vec![
                "run",
                "--size",
                "2048",
                "--infinite",
                "--engine",
                "hashlife",
                "--memory",
                "4M",
                "--gens",
                "1",
            ],
            "memory cap",
        ),
        (
            vec![
                "run",
                "--size",
                "8192",
                "--infinite",
                "--memory",
                "4M",
                "--gens",
                "1",
            ],
            "memory cap",
        ),
        (vec!["run", "--input", &far, "--gens", "1"], "beyond"),
        (
            vec!["run", "--size", "64", "--gens", "2^64"],
            "only the infinite plane",
        ),
        (
            vec!["run", "--size", "64", "--infinite", "--gpus", "2"],
            "infinite plane",
        ),
        (
            vec!["run", "--input", &glider, "--gens", "2^5000"],
            "too many",
        ),
    ];
    for (args, expected) in cases {
        let err = error_of(&args);
        assert!(err.contains(expected), "gol {args:?}: {err}");
    }
}

#[test]
fn a_pattern_file_without_a_size_runs_on_the_plane_and_with_one_on_a_torus() {
    let dir = tempfile::tempdir().unwrap();
    let glider = temp_file(&dir, "glider.rle", GLIDER);
    // 400 generations on the plane: 100 cells on. On an 8×8 torus it wraps back to its start.
    let json = stdout_of(&["run", "--input", &glider, "--gens", "400", "--json"]);
    assert_eq!(raw(&json, "x"), "100");
    let json = stdout_of(&[
        "run", "--input", &glider, "--gens", "400", "--size", "8", "--json",
    ]);
    assert_eq!(raw(&json, "topology"), "\"torus\"");
    assert_eq!(raw(&json, "alive"), "5");
    // --infinite overrides a file's torus suffix.
    let torus = temp_file(
        &dir,
        "torus.rle",
        "x = 3, y = 3, rule = B3/S23:T8,8\nbo$2bo$3o!\n",
    );
    let json = stdout_of(&[
        "run",
        "--input",
        &torus,
        "--gens",
        "400",
        "--infinite",
        "--json",
    ]);
    assert_eq!(raw(&json, "universe"), "\"infinite plane\"");
    assert_eq!(raw(&json, "x"), "100");
    let out = gol(&["run", "--input", &torus, "--gens", "400", "--json"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"torus\""));
}
