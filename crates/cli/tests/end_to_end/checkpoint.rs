//! Checkpoints end to end: a run killed at any moment and resumed ends bit-identical to an
//! uninterrupted one; damaged or mismatched checkpoints are refused.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{error_of, gol_path, stdout_of};

/// A run long enough to be killed part-way (seconds): 4096² on one CPU thread.
const RUN: &[&str] = &[
    "--threads",
    "1",
    "run",
    "--size",
    "4096",
    "--density",
    "0.3",
    "--seed",
    "11",
    "--rule",
    "B36/S23",
    "--gens",
    "3000",
    "--engine",
    "cpu-bitsliced",
];

#[test]
fn a_killed_run_resumes_to_the_same_state() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let whole = at("whole.rle");
    stdout_of(&[RUN, &["--output", &whole]].concat());

    let checkpoint = at("run.ckpt");
    // Kill the run at growing delays: each time a checkpoint is there (or none yet), never a
    // damaged one; resume from whatever is there until the run is complete.
    let mut kills = 0;
    for delay_ms in [200u64, 500, 800, 1100, 1400, 1700] {
        let mut args: Vec<String> = RUN.iter().map(|s| s.to_string()).collect();
        if std::path::Path::new(&checkpoint).exists() {
            // Resume: the grid, rule and generation come from the checkpoint.
            args = vec![
                "--threads",
                "1",
                "run",
                "--gens",
                "3000",
                "--engine",
                "cpu-bitsliced",
            ]
            .into_iter()
            .map(String::from)
            .collect();
            args.extend(["--resume".into(), checkpoint.clone()]);
        }
        args.extend(["--checkpoint".into(), checkpoint.clone()]);
        args.extend(["--checkpoint-every".into(), "37".into()]);
        let mut child = Command::new(gol_path())
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(delay_ms) {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL: no chance to tidy up
            kills += 1;
        }
        child.wait().unwrap();
        if let Ok(bytes) = std::fs::read(&checkpoint) {
            // Whatever moment the kill came at, the checkpoint reads back whole: resumed for
            // no further generations (its count is the u64 at byte 40).
            let done = u64::from_le_bytes(bytes[40..48].try_into().unwrap()).to_string();
            stdout_of(&["run", "--resume", &checkpoint, "--gens", &done, "--json"]);
        }
    }
    assert!(
        kills >= 2,
        "the run should have been killed part-way at least twice"
    );
    let resumed = at("resumed.rle");
    let report = stdout_of(&[
        "run",
        "--resume",
        &checkpoint,
        "--gens",
        "3000",
        "--output",
        &resumed,
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert!(report["resumed_at"].as_u64().unwrap() > 0, "{report}");
    assert_eq!(
        std::fs::read(&whole).unwrap(),
        std::fs::read(&resumed).unwrap(),
        "killed and resumed run differs from the uninterrupted one"
    );
}

#[test]
fn checkpoints_of_cubes_resume_with_their_stamp() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let cube = at("in.bin");
    stdout_of(&[
        "run", "--dim", "3", "--size", "21", "--gens", "0", "--output", &cube,
    ]);
    let whole = at("whole.bin");
    stdout_of(&["run", "--input", &cube, "--gens", "9", "--output", &whole]);
    let ckpt = at("c.ckpt");
    stdout_of(&[
        "run",
        "--input",
        &cube,
        "--gens",
        "4",
        "--checkpoint",
        &ckpt,
    ]);
    let resumed = at("resumed.bin");
    stdout_of(&[
        "run", "--resume", &ckpt, "--gens", "9", "--output", &resumed,
    ]);
    assert_eq!(
        std::fs::read(&whole).unwrap(),
        std::fs::read(&resumed).unwrap()
    );
}

#[test]
fn bad_checkpoints_and_mismatches_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("c.ckpt");
    let path = ckpt.to_str().unwrap();
    stdout_of(&[
        "run",
        "--width",
        "70",
        "--height",
        "30",
        "--gens",
        "20",
        "--checkpoint",
        path,
        "--checkpoint-every",
        "8",
    ]);
    let err = error_of(&["run", "--resume", path, "--gens", "10"]);
    assert!(err.contains("generation 20 is beyond --gens 10"), "{err}");
    let err = error_of(&["run", "--resume", path, "--gens", "30", "--rule", "B2/S"]);
    assert!(
        err.contains("runs rule B3/S23, not the rule asked for, B2/S"),
        "{err}"
    );
    let err = error_of(&["run", "--resume", path, "--gens", "30", "--size", "70"]);
    assert!(err.contains("holds a 70x30 world"), "{err}");
    let err = error_of(&["run", "--resume", path, "--gens", "30", "--seed", "1"]);
    assert!(err.contains("cannot be used with"), "{err}");

    let mut bytes = std::fs::read(&ckpt).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&ckpt, &bytes).unwrap();
    let err = error_of(&["run", "--resume", path, "--gens", "30"]);
    assert!(err.contains("corrupted"), "{err}");
    std::fs::write(&ckpt, &bytes[..bytes.len() - 9]).unwrap();
    let err = error_of(&["run", "--resume", path, "--gens", "30"]);
    assert!(err.contains("truncated"), "{err}");
    std::fs::write(
        &ckpt,
        "#C a pattern, not a checkpoint\nx = 3, y = 3\nbo$2bo$3o!\n",
    )
    .unwrap();
    let err = error_of(&["run", "--resume", path, "--gens", "30"]);
    assert!(err.contains("not a gol checkpoint"), "{err}");
}

/// `gol census` checkpointed part-way and resumed: the haul and the per-soup tallies of the
/// uninterrupted census.
#[test]
fn a_census_resumed_from_its_checkpoint_gives_the_whole_haul_and_tallies() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let census = ["census", "--root", "k_testseed"];
    let (whole, whole_tallies) = (at("whole.txt"), at("whole.tsv"));
    stdout_of(
        &[
            &census[..],
            &[
                "--soups",
                "900",
                "--output",
                &whole,
                "--tallies",
                &whole_tallies,
            ],
        ]
        .concat(),
    );

    let (checkpoint, first_tallies, rest_tallies) =
        (at("census.json"), at("first.tsv"), at("rest.tsv"));
    let part = [
        &census[..],
        &[
            "--soups",
            "400",
            "--checkpoint",
            &checkpoint,
            "--tallies",
            &first_tallies,
        ],
    ]
    .concat();
    stdout_of(&part);
    let resumed = stdout_of(&[
        "census",
        "--resume",
        &checkpoint,
        "--soups",
        "900",
        "--tallies",
        &rest_tallies,
    ]);

    let read = |path: &str| std::fs::read_to_string(path).unwrap();
    assert_eq!(resumed, read(&whole), "the haul");
    let lines =
        |path: &str| -> Vec<String> { read(path).lines().skip(1).map(String::from).collect() };
    let (first, rest) = (lines(&first_tallies), lines(&rest_tallies));
    assert_eq!((first.len(), rest.len()), (400, 500));
    assert_eq!(
        [first, rest].concat(),
        lines(&whole_tallies),
        "the tallies, soup for soup"
    );
    assert!(read(&whole).contains("@NUM_SOUPS 900"));
}
