//! `gol run` end to end: reports, files, errors, verify, bench, and Golly.

use crate::common::{bgolly, error_of, gol, golly_agrees, stdout_of};

const GLIDER_TORUS: &str = include_str!("../fixtures/glider-torus.rle");
const GOSPER_GUN: &str = include_str!("../fixtures/gosper-gun.rle");
const GLIDER_CELLS: &str = include_str!("../fixtures/glider.cells");

fn alive(report: &str) -> u64 {
    let line = report
        .lines()
        .find_map(|l| l.strip_prefix("Total alive cells: "))
        .unwrap_or_else(|| panic!("no alive line in {report}"));
    line.trim().parse().expect("a number")
}

fn temp_file(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write fixture");
    path.display().to_string()
}

#[test]
fn seminar_case_gives_47026_on_every_cpu_engine() {
    for engine in ["cpu-scalar", "cpu-table", "cpu-bitsliced", "auto"] {
        let report = stdout_of(&[
            "run", "--size", "1024", "--gens", "1024", "--seed", "0", "--engine", engine,
        ]);
        assert_eq!(alive(&report), 47026, "{engine}: {report}");
        assert!(report.contains("Generation loop time"), "{report}");
        assert!(report.contains("Set-up time"), "{report}");
    }
}

#[test]
fn json_report_is_one_object_with_the_fixed_keys() {
    let out = stdout_of(&[
        "run", "--width", "300", "--height", "200", "--gens", "10", "--json", "--rule", "b36/s23",
    ]);
    let value: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    for key in [
        "alive",
        "generations",
        "width",
        "height",
        "engine",
        "seconds",
        "cell_updates_per_second",
    ] {
        assert!(value.get(key).is_some(), "missing {key} in {out}");
    }
    assert_eq!(value["width"], 300);
    assert_eq!(value["height"], 200);
    assert_eq!(value["generations"], 10);
    assert_eq!(value["rule"], "B36/S23");
    assert_eq!(out.trim().lines().count(), 1);
}

#[test]
fn every_engine_agrees_on_a_density_soup_with_another_rule() {
    let args = |engine: &'static str| {
        [
            "run",
            "--width",
            "131",
            "--height",
            "77",
            "--gens",
            "57",
            "--density",
            "0.37",
            "--seed",
            "11",
            "--rule",
            "B3678/S34678",
            "--engine",
            engine,
        ]
    };
    let counts: Vec<u64> = ["cpu-scalar", "cpu-table", "cpu-bitsliced"]
        .iter()
        .map(|e| alive(&stdout_of(&args(e))))
        .collect();
    assert!(counts.iter().all(|&c| c == counts[0]), "{counts:?}");
}

#[test]
fn torus_size_comes_from_the_rle_and_output_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let input = temp_file(&dir, "glider.rle", GLIDER_TORUS);
    let output = dir.path().join("after.rle");
    // On an 8x8 torus a glider is back where it started after 4 * 8 generations.
    let report = stdout_of(&[
        "run",
        "--input",
        &input,
        "--gens",
        "32",
        "--output",
        output.to_str().unwrap(),
    ]);
    assert_eq!(alive(&report), 5);
    let written = std::fs::read_to_string(&output).unwrap();
    let start = dir.path().join("start.rle");
    stdout_of(&[
        "run",
        "--input",
        &input,
        "--gens",
        "0",
        "--output",
        start.to_str().unwrap(),
    ]);
    // 32 generations take the glider round the torus: the same cells, a later generation.
    let start = std::fs::read_to_string(&start).unwrap();
    assert_eq!(
        written.replacen("Gen=32", "Gen=0", 1),
        start,
        "{written} against {start}"
    );
    // The glider's centre cell goes on the grid's (4, 4), Golly's (0, 0): its top-left on (3, 3).
    assert_eq!(
        start,
        "#CXRLE Pos=-4,-4 Gen=0\nx = 8, y = 8, rule = B3/S23:T8,8\n3$4bo$5bo$3b3o!\n"
    );
}

#[test]
fn cells_input_runs_on_the_plane_or_a_grid_and_writes_cells_and_png() {
    let dir = tempfile::tempdir().unwrap();
    let input = temp_file(&dir, "glider.cells", GLIDER_CELLS);
    // No size: the infinite plane, the glider's top-left cell on Golly's origin (as bgolly
    // places a file without a position), then one cell down and right in four generations.
    let json = stdout_of(&["run", "--input", &input, "--gens", "4", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["universe"], "infinite plane");
    assert_eq!(report["alive"], 5);
    assert_eq!(
        report["bounding_box"],
        serde_json::json!({"x": 1, "y": 1, "width": 3, "height": 3})
    );
    let cells = dir.path().join("out.cells");
    stdout_of(&[
        "run",
        "--input",
        &input,
        "--size",
        "6",
        "--gens",
        "4",
        "--output",
        cells.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&cells).unwrap();
    let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('!')).collect();
    // Placed at (2, 2) (its centre on the grid's (3, 3)), then moved (1, 1) by 4 generations.
    assert_eq!(
        rows,
        vec!["......", "......", "......", "....O.", ".....O", "...OOO"]
    );
    let png = dir.path().join("out.png");
    stdout_of(&[
        "run",
        "--size",
        "5000",
        "--gens",
        "1",
        "--output",
        png.to_str().unwrap(),
    ]);
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    // Width and height in the IHDR chunk: 5000 cells in blocks of 2 give 2500 pixels.
    assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 2500);
    assert_eq!(u32::from_be_bytes(bytes[20..24].try_into().unwrap()), 2500);
}

#[test]
fn rule_option_overrides_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = temp_file(&dir, "glider.rle", GLIDER_TORUS);
    // Under B2/S (Seeds) a glider does not survive as a glider.
    let seeds = stdout_of(&["run", "--input", &input, "--gens", "3", "--rule", "B2/S"]);
    assert!(
        seeds.contains("rule B2/S,") || seeds.contains("rule B2/S "),
        "{seeds}"
    );
    assert_ne!(alive(&seeds), 5);
}

#[test]
fn bad_input_is_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad_rle = temp_file(&dir, "bad.rle", "#C fine\nx = 3, y = 3\nbo$2bo$3q!\n");
    let huge_rle = temp_file(&dir, "huge.rle", "x = 1000000000, y = 1000000000\no!\n");
    let empty = temp_file(&dir, "empty.rle", "");
    let notes = temp_file(&dir, "notes.txt", "hello\n");
    let binary = temp_file(&dir, "binary.cells", "\u{0}\u{1}\u{2}\u{7f}");
    let gun = temp_file(&dir, "gun.rle", GOSPER_GUN);
    let cube = |name: &str, cells: &[u8]| {
        let path = dir.path().join(name);
        let mut bytes = Vec::from(2u64.to_le_bytes());
        bytes.extend_from_slice(&0u64.to_le_bytes());
        bytes.extend_from_slice(cells);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_string()
    };
    let short_bin = cube("short.bin", &[0; 7]);
    let bad_bin = cube("bad.bin", &[0, 1, 0, 1, 2, 0, 0, 0]);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", "--size", "0"], "at least 1"),
        (vec!["run", "--size", "abc"], "invalid value"),
        (
            vec!["run", "--engine", "warp-drive", "--size", "8"],
            "cpu-scalar",
        ),
        (
            vec!["run", "--rule", "B3/S2x", "--size", "8"],
            "invalid rule",
        ),
        (vec!["run", "--rule", "B9,/S", "--size", "8"], "only 8"),
        (
            vec!["run", "--density", "1.5", "--size", "8"],
            "between 0 and 1",
        ),
        (
            vec!["run", "--input", "/nonexistent/x.rle", "--size", "8"],
            "/nonexistent/x.rle",
        ),
        (
            vec!["run", "--input", &bad_rle, "--size", "8"],
            "bad.rle:3:",
        ),
        (
            vec!["run", "--input", &huge_rle, "--size", "8"],
            "does not fit",
        ),
        (
            vec!["run", "--input", &empty, "--size", "8"],
            "no RLE header",
        ),
        (
            vec!["run", "--input", &binary, "--size", "8"],
            "unexpected byte",
        ),
        (vec!["run", "--input", &gun, "--size", "20"], "does not fit"),
        (
            vec!["run", "--input", &notes, "--size", "8"],
            "not a pattern file gol reads; formats read: RLE",
        ),
        (vec!["run", "--dim", "4"], "use 2 or 3"),
        (
            vec!["run", "--dim", "3", "--width", "4", "--height", "4"],
            "one side",
        ),
        (
            vec!["run", "--dim", "3", "--rule", "B5-30/S", "--size", "4"],
            "above 26",
        ),
        (
            vec!["run", "--dim", "3", "--size", "4", "--engine", "cuda-lut"],
            "for 3D",
        ),
        (
            vec!["run", "--dim", "3", "--size", "4", "--output", "x.rle"],
            ".bin",
        ),
        (vec!["run", "--size", "4", "--output", "x.bin"], "3D cubes"),
        (vec!["run", "--input", "/nonexistent/cube.bin"], "cube.bin"),
        (vec!["run", "--input", &short_bin], "truncated"),
        (vec!["run", "--input", &bad_bin], "cells must be 0"),
        (
            vec!["run", "--input", &bad_bin, "--size", "3"],
            "sets the cube",
        ),
        (vec!["run", "--dim", "3", "--input", &gun], "2D"),
        (
            vec!["run", "--size", "8", "--output", "x.xyz"],
            "unknown output format",
        ),
        (vec!["run", "--size", "100000000"], "memory"),
        (vec!["run", "--width", "5"], "--height"),
        (
            vec!["bench", "--engines", "nope", "--sizes", "8"],
            "unknown engine",
        ),
        (vec!["verify", "--engines", "nope"], "unknown engine"),
    ];
    for (args, expected) in cases {
        let err = error_of(&args);
        assert!(err.contains(expected), "gol {args:?}: {err}");
    }
}

#[test]
fn cube_files_round_trip_with_stamps_and_runs_compose() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let start = path("start.bin");
    stdout_of(&[
        "run",
        "--dim",
        "3",
        "--size",
        "10",
        "--density",
        "0.3",
        "--seed",
        "4",
        "--gens",
        "0",
        "--output",
        &start,
    ]);
    let bytes = std::fs::read(&start).unwrap();
    assert_eq!(bytes.len(), 16 + 1000);
    assert_eq!(
        bytes[..16],
        [10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    );
    assert!(bytes[16..].iter().all(|&b| b <= 1) && bytes[16..].contains(&1));
    // 5 then 3 generations give the file that 8 do, stamp included, on every CPU engine.
    let (five, eight) = (path("five.bin"), path("eight.bin"));
    let json = stdout_of(&[
        "run", "--input", &start, "--gens", "5", "--output", &five, "--json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["depth"], 10);
    assert_eq!(report["stamp"], 5);
    assert_eq!(report["rule"], "B6/S567");
    for engine in ["cpu-scalar", "cpu-bitsliced"] {
        let then = path(&format!("then-{engine}.bin"));
        let out = stdout_of(&[
            "run", "--input", &five, "--gens", "3", "--output", &then, "--engine", engine,
        ]);
        assert!(out.contains("10x10x10 torus"), "{out}");
        stdout_of(&[
            "run", "--input", &start, "--gens", "8", "--output", &eight, "--engine", engine,
        ]);
        let later = std::fs::read(&then).unwrap();
        assert_eq!(u64::from_le_bytes(later[8..16].try_into().unwrap()), 8);
        assert_eq!(later, std::fs::read(&eight).unwrap(), "{engine}");
    }
}

#[test]
fn verify_quick_passes_and_prints_its_seed() {
    let out = stdout_of(&["verify", "--quick", "--seed", "12345"]);
    assert!(out.contains("seed 12345"), "{out}");
    assert!(out.contains("all engines agree"), "{out}");
    assert!(out.contains("cpu-bitsliced"), "{out}");
    assert!(out.contains("random 3D cases"), "{out}");
}

#[test]
fn bench_over_gpus_reports_weak_and_strong_scaling_or_says_why_not() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("scaling.json");
    let args = [
        "bench", "--gpus", "1", "--sizes", "96", "--gens", "20", "--reps", "1", "--warmup", "0",
        "--halo", "8", "--json",
    ];
    let out = gol(&[&args[..], &[json.to_str().unwrap()]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        assert!(
            stderr.contains("no CUDA device/driver found"),
            "only a missing GPU may stop it: {stderr}"
        );
        assert_ne!(
            std::env::var("GOL_REQUIRE_GPU").as_deref(),
            Ok("1"),
            "{stderr}"
        );
        eprintln!("no GPU: the scaling run was refused as it should be");
    } else {
        let stdout = String::from_utf8(out.stdout).unwrap();
        for run in [
            "| unsplit | 1 | 96×96 |",
            "| weak | 1 | 96×96 |",
            "| strong | 1 | 96×96 |",
        ] {
            assert_eq!(stdout.matches(run).count(), 1, "{run}: {stdout}");
        }
        let value: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let runs = value["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 3);
        for run in &runs[1..] {
            let details = run["details"].as_str().unwrap();
            assert!(details.contains("1 slabs with 8-row halos"), "{details}");
            assert!(run["efficiency"].as_f64().unwrap() > 0.0);
        }
    }
    assert!(error_of(&["bench", "--halo", "8"]).contains("--gpus"));
    assert!(error_of(&["bench", "--gpus", "1", "--dim", "3"]).contains("2D scaling only"));
}

#[test]
fn bench_prints_a_table_and_writes_json_and_a_plot() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bench.json");
    let plot = dir.path().join("bench.svg");
    let out = stdout_of(&[
        "bench",
        "--engines",
        "cpu-bitsliced,cpu-table",
        "--sizes",
        "64,100",
        "--gens",
        "3",
        "--reps",
        "2",
        "--json",
        json.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert!(out.contains("| engine | size |"), "{out}");
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert_eq!(svg.matches("<polyline").count(), 2, "{svg}");
    assert_eq!(
        out.lines().filter(|l| l.starts_with("| cpu-")).count(),
        4,
        "{out}"
    );
    let value: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(value["results"].as_array().unwrap().len(), 4);
    assert!(
        value["baseline"]["cell_updates_per_second"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

#[test]
fn info_lists_the_engines() {
    let out = stdout_of(&["info"]);
    for name in ["cpu-scalar", "cpu-table", "cpu-bitsliced", "Threads:"] {
        assert!(out.contains(name), "{out}");
    }
}

#[test]
fn golly_agrees_on_tori() {
    let Some(bgolly) = bgolly() else { return };
    let dir = tempfile::tempdir().unwrap();
    let gun = temp_file(&dir, "gun.rle", GOSPER_GUN);
    let cases: Vec<(Vec<String>, u64)> = vec![
        (
            vec!["--size".into(), "64".into(), "--seed".into(), "5".into()],
            100,
        ),
        (
            vec![
                "--width".into(),
                "37".into(),
                "--height".into(),
                "23".into(),
                "--seed".into(),
                "2".into(),
                "--rule".into(),
                "B36/S23".into(),
            ],
            77,
        ),
        (
            vec![
                "--width".into(),
                "130".into(),
                "--height".into(),
                "3".into(),
                "--density".into(),
                "0.4".into(),
                "--rule".into(),
                "B3678/S34678".into(),
            ],
            41,
        ),
        (
            vec![
                "--input".into(),
                gun,
                "--width".into(),
                "90".into(),
                "--height".into(),
                "61".into(),
            ],
            300,
        ),
    ];
    for (i, (problem, gens)) in cases.into_iter().enumerate() {
        // The first case's start goes to Golly gzip-compressed (`.rle.gz`), as Golly reads it.
        let start = if i == 0 { "start.rle.gz" } else { "start.rle" };
        golly_agrees(
            &bgolly,
            &dir.path().join(i.to_string()),
            &problem,
            gens,
            start,
        );
    }
}

/// `gol census --gpus`: the CPU census's haul, byte for byte, where there is a GPU; refused in
/// one line where there is none (a failure under `GOL_REQUIRE_GPU`).
#[test]
fn census_on_gpus_gives_the_cpus_haul_or_one_line() {
    let args = ["census", "--root", "k_testseed", "--soups", "3000"];
    let listed =
        std::fs::read_dir("/proc/driver/nvidia/gpus").is_ok_and(|mut d| d.next().is_some());
    for gpus in ["1", "all"] {
        let on_gpus = [&args[..], &["--gpus", gpus]].concat();
        if listed {
            assert_eq!(stdout_of(&on_gpus), stdout_of(&args), "--gpus {gpus}");
        } else {
            assert!(
                std::env::var_os("GOL_REQUIRE_GPU").is_none(),
                "GOL_REQUIRE_GPU is set but no GPU is listed"
            );
            let refused = error_of(&on_gpus);
            assert!(refused.contains("no CUDA device"), "{refused}");
        }
    }
}
