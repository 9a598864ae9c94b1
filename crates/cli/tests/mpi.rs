//! MPI runs (`--features mpi`): 1, 2 and 3 ranks on the CPU give the single-process result bit
//! for bit, checkpoints move between decompositions, and each rank holds only its slab.
#![cfg(feature = "mpi")]

#[path = "end_to_end/common.rs"]
mod common;

use std::process::Command;

use common::{gol_path, stdout_of};

/// `mpirun`, or `None` (with a notice) where it is missing; `GOL_REQUIRE_MPI=1` makes that a
/// failure.
fn mpirun() -> Option<&'static str> {
    let found = Command::new("mpirun").arg("--version").output().is_ok();
    if !found {
        assert!(
            std::env::var("GOL_REQUIRE_MPI").as_deref() != Ok("1"),
            "GOL_REQUIRE_MPI=1 but mpirun is not installed"
        );
        eprintln!("skipping MPI tests: no mpirun");
        return None;
    }
    Some("mpirun")
}

/// `mpirun` for `ranks` ranks, with a session directory of its own: Open MPI's default one
/// under `/tmp` is shared, and mpiruns started at once by tests running side by side raced to
/// create it ("File exists", a CI failure). The directory is left empty when the run ends;
/// [`ranks`] removes it.
fn mpi_command(mpirun: &str, ranks: usize) -> (Command, std::path::PathBuf) {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let session = std::env::temp_dir().join(format!("gol-mpi-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&session).expect("a session directory");
    let mut command = Command::new(mpirun);
    command
        .env("TMPDIR", &session)
        .env("OMPI_MCA_orte_tmpdir_base", &session)
        .args([
            "--allow-run-as-root",
            "--oversubscribe",
            "-n",
            &ranks.to_string(),
        ]);
    (command, session)
}

/// `gol` on `ranks` MPI ranks; its JSON report.
fn ranks(mpirun: &str, ranks: usize, args: &[&str]) -> serde_json::Value {
    let (mut command, session) = mpi_command(mpirun, ranks);
    let out = command
        .arg(gol_path())
        .args(args)
        .arg("--json")
        .output()
        .expect("mpirun runs");
    let _ = std::fs::remove_dir_all(session);
    assert!(
        out.status.success(),
        "{ranks} ranks, gol {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON report, from rank 0")
}

#[test]
fn ranks_match_one_process_bit_for_bit() {
    let Some(mpirun) = mpirun() else { return };
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    for (problem, halo) in [
        (
            &[
                "--width", "333", "--height", "97", "--seed", "3", "--gens", "150",
            ][..],
            "64",
        ),
        (
            &[
                "--width",
                "64",
                "--height",
                "5",
                "--density",
                "0.4",
                "--gens",
                "41",
                "--rule",
                "B36/S23",
            ],
            "2",
        ),
        (
            &[
                "--size",
                "200",
                "--density",
                "0.5",
                "--gens",
                "77",
                "--rule",
                "B2/S",
            ],
            "9",
        ),
        // A bounded plane: the top and bottom ranks keep no halo past its edges.
        (
            &[
                "--width", "150", "--height", "61", "--seed", "5", "--gens", "90", "--rule",
                "B3/S23:P",
            ],
            "7",
        ),
    ] {
        let one = at("one.rle");
        stdout_of(&[&["run", "--output", &one], problem].concat());
        for n in 1..=3 {
            let out = at(&format!("{n}.rle"));
            let report = ranks(
                mpirun,
                n,
                &[&["run", "--halo", halo, "--output", &out], problem].concat(),
            );
            assert_eq!(report["ranks"]["count"], n);
            assert_eq!(
                std::fs::read(&one).unwrap(),
                std::fs::read(&out).unwrap(),
                "{n} ranks differ from one process on {problem:?}"
            );
        }
    }
}

#[test]
fn cube_ranks_match_one_process_bit_for_bit() {
    let Some(mpirun) = mpirun() else { return };
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let input = at("in.bin");
    stdout_of(&[
        "run",
        "--dim",
        "3",
        "--size",
        "29",
        "--density",
        "0.25",
        "--seed",
        "4",
        "--gens",
        "0",
        "--output",
        &input,
    ]);
    for (problem, halo) in [
        (&["--input", &input, "--gens", "13"][..], "3"),
        (
            &["--dim", "3", "--size", "17", "--seed", "2", "--gens", "9"],
            "64",
        ),
        (
            &[
                "--dim",
                "3",
                "--size",
                "40",
                "--density",
                "0.3",
                "--gens",
                "21",
                "--rule",
                "B4-6/S3-8",
            ],
            "5",
        ),
    ] {
        let one = at("one.bin");
        let alone = stdout_of(&[&["run", "--json", "--output", &one], problem].concat());
        let alone: serde_json::Value = serde_json::from_str(&alone).unwrap();
        for n in 1..=3 {
            let out = at(&format!("{n}.bin"));
            let report = ranks(
                mpirun,
                n,
                &[&["run", "--halo", halo, "--output", &out], problem].concat(),
            );
            assert_eq!(report["ranks"]["layer"], "plane");
            assert_eq!(report["alive"], alone["alive"], "{n} ranks on {problem:?}");
            assert_eq!(report["depth"], alone["depth"]);
            assert_eq!(report["stamp"], alone["stamp"]);
            assert_eq!(
                std::fs::read(&one).unwrap(),
                std::fs::read(&out).unwrap(),
                "{n} ranks differ from one process on {problem:?}"
            );
        }
    }
    // A 3D checkpoint moves between decompositions too: 3 ranks to 8, one process to 15,
    // 2 ranks to 21.
    let problem = [
        "--dim",
        "3",
        "--size",
        "40",
        "--density",
        "0.3",
        "--rule",
        "B4-6/S3-8",
    ];
    let (a, b, out) = (at("a.ckpt"), at("b.ckpt"), at("resumed.bin"));
    ranks(
        mpirun,
        3,
        &[
            &["run", "--gens", "8", "--halo", "3", "--checkpoint", &a][..],
            &problem,
        ]
        .concat(),
    );
    stdout_of(&["run", "--resume", &a, "--gens", "15", "--checkpoint", &b]);
    ranks(
        mpirun,
        2,
        &["run", "--resume", &b, "--gens", "21", "--output", &out],
    );
    assert_eq!(
        std::fs::read(at("one.bin")).unwrap(),
        std::fs::read(&out).unwrap()
    );
}

#[test]
fn checkpoints_do_not_depend_on_the_decomposition() {
    let Some(mpirun) = mpirun() else { return };
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let problem = [
        "--width",
        "250",
        "--height",
        "120",
        "--density",
        "0.3",
        "--seed",
        "9",
    ];
    let whole = at("whole.rle");
    stdout_of(&[&["run", "--gens", "300", "--output", &whole][..], &problem].concat());
    // 3 ranks to 100, one process to 200, 2 ranks to 300.
    let (a, b) = (at("a.ckpt"), at("b.ckpt"));
    ranks(
        mpirun,
        3,
        &[&["run", "--gens", "100", "--checkpoint", &a][..], &problem].concat(),
    );
    stdout_of(&[
        "run",
        "--resume",
        &a,
        "--gens",
        "200",
        "--checkpoint",
        &b,
        "--checkpoint-every",
        "30",
    ]);
    let out = at("out.rle");
    let report = ranks(
        mpirun,
        2,
        &["run", "--resume", &b, "--gens", "300", "--output", &out],
    );
    assert_eq!(report["resumed_at"], 200);
    assert_eq!(std::fs::read(&whole).unwrap(), std::fs::read(&out).unwrap());
}

/// Each rank's state bytes and peak resident memory, from a report.
fn rank_memory(report: &serde_json::Value) -> Vec<(u64, u64)> {
    let list = |key: &str| -> Vec<u64> {
        serde_json::from_value(report["ranks"][key].clone()).expect("a list of byte counts")
    };
    list("state_bytes")
        .into_iter()
        .zip(list("peak_rss_bytes"))
        .collect()
}

#[test]
fn each_rank_holds_only_its_slab() {
    let Some(mpirun) = mpirun() else { return };
    // 32768² is 128 MiB at one bit per cell: an engine holding the whole torus would need
    // 256 MiB (two buffers) on every rank.
    let side = 32768u64;
    let whole = side * side / 8;
    let report = ranks(
        mpirun,
        2,
        &[
            "run",
            "--size",
            "32768",
            "--density",
            "0.3",
            "--gens",
            "2",
            "--engine",
            "cpu-bitsliced",
        ],
    );
    for (rank, (state, rss)) in rank_memory(&report).into_iter().enumerate() {
        // Two buffers of half the rows plus two halos of the default depth.
        let halo = gol_core::slab::DEFAULT_DEPTH as u64;
        assert_eq!(state, 2 * (whole / 2 + 2 * halo * side / 8), "rank {rank}");
        // Its slab (made, then copied into the engine's two buffers) and the program: well
        // under the 2 × 128 MiB a whole-torus engine needs.
        assert!(rss < 2 * whole, "rank {rank} peaked at {rss} bytes");
    }
}

#[test]
fn each_rank_holds_only_its_planes() {
    let Some(mpirun) = mpirun() else { return };
    // 1024³ is 128 MiB at one bit per cell, as above; 4 ranks of 256 planes each, with 8-plane
    // halos.
    let side = 1024u64;
    let plane = side * side / 8;
    let report = ranks(
        mpirun,
        4,
        &[
            "run",
            "--dim",
            "3",
            "--size",
            "1024",
            "--density",
            "0.2",
            "--gens",
            "1",
            "--halo",
            "8",
            "--engine",
            "cpu-bitsliced",
        ],
    );
    assert_eq!(
        report["ranks"]["layers"],
        serde_json::json!([256, 256, 256, 256])
    );
    for (rank, (state, rss)) in rank_memory(&report).into_iter().enumerate() {
        assert_eq!(state, 2 * (256 + 2 * 8) * plane, "rank {rank}");
        assert!(rss < side * plane, "rank {rank} peaked at {rss} bytes");
    }
}

/// The `gol` processes whose command line holds `marker` (not `mpirun`'s own).
fn ranks_running(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<String> = cmdline
            .split(|&b| b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        if args.first().is_some_and(|a| a.ends_with("gol")) && args.iter().any(|a| a == marker) {
            found.push(pid);
        }
    }
    found
}

/// A run of 10⁹ generations of a 1024² soup on 3 ranks, its seed `marker` (to find its ranks
/// by), not started yet.
fn long_run(mpirun: &str, marker: &str) -> Command {
    let (mut run, _session) = mpi_command(mpirun, 3);
    run.arg(gol_path()).args([
        "run",
        "--size",
        "1024",
        "--gens",
        "1000000000",
        "--seed",
        marker,
    ]);
    run
}

/// The three ranks of a run whose command line holds `marker`, once they have all started.
fn three_ranks(marker: &str) -> Vec<u32> {
    let start = std::time::Instant::now();
    loop {
        let pids = ranks_running(marker);
        if pids.len() == 3 {
            return pids;
        }
        assert!(
            start.elapsed().as_secs() < 30,
            "3 ranks did not start: {pids:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// A rank killed mid-run (SIGKILL, as the kernel's OOM killer would): the others do not hang;
/// the run ends within a bounded time with an error naming the rank.
#[test]
fn a_rank_that_dies_ends_the_run_promptly() {
    let Some(mpirun) = mpirun() else { return };
    let marker = "424242";
    let mut run = long_run(mpirun, marker)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pids = three_ranks(marker);
    // Let them exchange halos for a while, then kill one.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let killed = Command::new("kill")
        .args(["-KILL", &pids[1].to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let killed_at = std::time::Instant::now();
    let status = loop {
        if let Some(status) = run.try_wait().unwrap() {
            break status;
        }
        if killed_at.elapsed().as_secs() > 30 {
            let _ = run.kill();
            for pid in ranks_running(marker) {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
            panic!("the other ranks hung for 30 s after one died");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut run.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success());
    assert!(
        stderr.contains("rank") && stderr.contains("signal 9"),
        "{stderr}"
    );
    eprintln!("ended {:?} after the kill", killed_at.elapsed());
    assert!(ranks_running(marker).is_empty(), "no rank is left running");
}

/// SIGTERM to every rank (as a batch scheduler sends it): the ranks agree on the round to stop
/// after, rank 0 writes the final checkpoint and a report with `interrupted`, and the
/// checkpoint resumes, in one process, to the result of an uninterrupted run.
#[test]
fn ranks_stop_together_on_sigterm_with_a_checkpoint() {
    let Some(mpirun) = mpirun() else { return };
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = dir.path().join("c.gol");
    let c = checkpoint.to_str().unwrap();
    let marker = "434343";
    let run = long_run(mpirun, marker)
        .args(["--checkpoint", c, "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pids = three_ranks(marker);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    for pid in &pids {
        Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap();
    }
    let out = run.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert_eq!(report["interrupted"], true, "{report}");
    // Rank 0's exit code, as mpirun passes it on.
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    let reached = report["generations"].as_u64().unwrap();
    assert!(stderr.contains("interrupted by SIGTERM"), "{stderr}");
    assert_eq!(
        stderr.matches("interrupted by").count(),
        1,
        "rank 0 alone says it: {stderr}"
    );
    let until = (reached + 3).to_string();
    let resumed = stdout_of(&["run", "--resume", c, "--gens", &until, "--json"]);
    let fresh = stdout_of(&[
        "run", "--size", "1024", "--seed", marker, "--gens", &until, "--json",
    ]);
    let alive =
        |json: &str| serde_json::from_str::<serde_json::Value>(json).unwrap()["alive"].clone();
    assert_eq!(alive(&resumed), alive(&fresh));
}
