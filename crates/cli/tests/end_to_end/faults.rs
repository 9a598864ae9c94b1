//! Faults `gol run` survives (docs/reliability.md): sizes beyond memory or beyond a limit the
//! process runs under (`ulimit -v`), outputs that cannot be written, files cut short by a full
//! disk (`ulimit -f`), and SIGINT or SIGTERM in the middle of a run. Limits and signals are
//! applied to a child process through `sh`.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{gol, gol_path, stdout_of};

/// Runs `gol ARGS` under `sh` after `limits` (such as `ulimit -v 1000000`).
fn limited(limits: &str, args: &[&str]) -> Output {
    let script = format!("{limits}; exec \"$0\" \"$@\"");
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(gol_path())
        .args(args)
        .output()
        .unwrap()
}

/// A failure in one line of our own: exit code 1, no signal, no panic or backtrace.
fn refused(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("backtrace"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("gol: "), "{stderr}");
    stderr
}

#[test]
fn impossible_sizes_are_refused_not_aborted() {
    let e = refused(&gol(&[
        "run",
        "--width",
        "4000000000",
        "--height",
        "4000000000",
        "--gens",
        "1",
    ]));
    assert!(e.contains("4000000000x4000000000"), "{e}");
    let e = refused(&gol(&[
        "run",
        "--width",
        "1000000000",
        "--height",
        "1000000000",
        "--gens",
        "1",
    ]));
    assert!(e.contains("needs") && e.contains("memory"), "{e}");
}

#[test]
fn a_memory_limit_is_honoured() {
    // 1 GB of address space: a 100000² grid (1.2 GiB) and a 2048³ cube (1 GiB) cannot fit.
    for args in [
        &["run", "--size", "100000", "--gens", "1"][..],
        &["run", "--dim", "3", "--size", "2048", "--gens", "1"],
    ] {
        let e = refused(&limited("ulimit -v 1000000", args));
        assert!(
            e.contains("needs") && e.contains("available"),
            "{args:?}: {e}"
        );
    }
    // Under 4 GB a 30000² grid (107 MiB, twice for the engine) runs. (The process's own
    // address space counts against the limit: with 16 threads and a GPU driver loaded it is
    // near 1 GB before any grid.)
    let out = limited(
        "ulimit -v 4000000",
        &["run", "--size", "30000", "--density", "0.5", "--gens", "1"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn tall_worlds_are_refused_at_once_with_their_whole_cost() {
    // A grid one cell wide costs a word a row in each buffer and its lists of rows: counted
    // together before anything is made (before: cpu-scalar was killed by the OOM killer, and
    // cpu-bitsliced spent 8 GB and 20 s before refusing).
    for (limit, height) in [
        ("ulimit -v 4000000", "200000000"),
        ("ulimit -v 30000000", "1073741824"),
    ] {
        for engine in ["cpu-scalar", "cpu-table", "cpu-bitsliced", "auto"] {
            let start = std::time::Instant::now();
            let args = [
                "run", "--width", "1", "--height", height, "--gens", "1", "--engine", engine,
            ];
            let e = refused(&limited(limit, &args));
            assert!(
                start.elapsed() < std::time::Duration::from_secs(1),
                "{engine}: {:?}",
                start.elapsed()
            );
            let shown = if engine == "auto" {
                "cpu-bitsliced"
            } else {
                engine
            };
            assert!(
                e.contains(&format!("a 1x{height} grid on {shown} needs"))
                    && e.contains("available"),
                "{engine}: {e}"
            );
        }
    }
}

#[test]
fn outputs_keep_their_mode_and_links_and_read_only_or_clashing_files_are_refused_first() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--size", "16", "--gens", "2"];
        args.extend_from_slice(extra);
        gol(&args)
    };
    let text = |name: &str| at(name).to_str().unwrap().to_string();
    // A mode-600 output stays 600; a symlinked output is written through, the link kept.
    let private = text("private.rle");
    assert!(run(&["--output", &private]).status.success());
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(run(&["--output", &private]).status.success());
    let mode = std::fs::metadata(&private).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let (real, link) = (text("real.gol"), text("link.gol"));
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert!(run(&["--checkpoint", &link]).status.success());
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(
        std::fs::metadata(&real).unwrap().len() > 0,
        "the checkpoint is the link's target"
    );
    // A read-only output is refused before the run (no report), on a grid and on the plane.
    let fixed = text("fixed.rle");
    std::fs::write(&fixed, "kept").unwrap();
    std::fs::set_permissions(&fixed, std::fs::Permissions::from_mode(0o444)).unwrap();
    for extra in [
        &["--output", &fixed][..],
        &["--output", &fixed, "--infinite"],
    ] {
        let out = run(extra);
        let e = refused(&out);
        assert!(e.contains("read-only"), "{e}");
        assert!(out.stdout.is_empty(), "refused before the run");
    }
    assert_eq!(std::fs::read_to_string(&fixed).unwrap(), "kept");
    // Input, output and checkpoint naming one file, directly or through a link: refused.
    let pattern = text("p.rle");
    std::fs::write(&pattern, "x = 3, y = 3\nbo$2bo$3o!\n").unwrap();
    let alias = text("alias.rle");
    std::os::unix::fs::symlink(&pattern, &alias).unwrap();
    let same = text("same.rle");
    for (args, flags) in [
        (
            vec![
                "run",
                "--input",
                &pattern,
                "--checkpoint",
                &pattern,
                "--gens",
                "2",
            ],
            ("--input", "--checkpoint"),
        ),
        (
            vec![
                "run", "--input", &pattern, "--output", &alias, "--gens", "2",
            ],
            ("--input", "--output"),
        ),
        (
            vec![
                "run",
                "--size",
                "8",
                "--checkpoint",
                &same,
                "--output",
                &same,
                "--gens",
                "2",
            ],
            ("--output", "--checkpoint"),
        ),
    ] {
        let e = refused(&gol(&args));
        assert!(
            e.contains(flags.0) && e.contains(flags.1) && e.contains("same file"),
            "{e}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&pattern).unwrap(),
        "x = 3, y = 3\nbo$2bo$3o!\n"
    );
    assert!(!std::path::Path::new(&same).exists());
}

#[test]
fn a_view_beyond_the_grid_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    for output in ["v.png", "v.gif"] {
        let path = dir.path().join(output);
        let out = gol(&[
            "run",
            "--size",
            "64",
            "--gens",
            "1000",
            "--view",
            "0,0,18446744073709551615,1",
            "--output",
            path.to_str().unwrap(),
        ]);
        let e = refused(&out);
        assert!(e.contains("at most 64x64 cells"), "{e}");
        assert!(out.stdout.is_empty(), "refused before the run");
    }
    // Nothing is left behind, not even a .gif's temporary file.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn thread_counts_are_bounded() {
    let cpus = std::thread::available_parallelism().unwrap().get();
    for n in ["0", "100000", &(4 * cpus + 1).to_string()] {
        let e = refused(&gol(&["--threads", n, "run", "--size", "8", "--gens", "1"]));
        assert!(e.contains(&format!("give 1 to {}", 4 * cpus)), "{n}: {e}");
    }
    let most = (4 * cpus).to_string();
    assert!(
        gol(&["--threads", &most, "run", "--size", "8", "--gens", "1"])
            .status
            .success()
    );
}

#[test]
fn generation_stamps_never_wrap() {
    let dir = tempfile::tempdir().unwrap();
    let rle = dir.path().join("late.rle");
    std::fs::write(
        &rle,
        "#CXRLE Pos=0,0 Gen=18446744073709551615\nx = 3, y = 3, rule = B3/S23:T8,8\nbo$2bo$3o!\n",
    )
    .unwrap();
    // A .bin cube of side 4 stamped 2^64 - 2.
    let bin = dir.path().join("late.bin");
    let header = [4u64.to_le_bytes(), (u64::MAX - 1).to_le_bytes()].concat();
    std::fs::write(&bin, [header, vec![0u8; 64]].concat()).unwrap();
    let out = dir.path().join("out.rle");
    let (rle, bin, out) = (
        rle.to_str().unwrap(),
        bin.to_str().unwrap(),
        out.to_str().unwrap(),
    );
    for args in [
        vec!["run", "--input", rle, "--gens", "4", "--output", out],
        vec!["run", "--input", bin, "--gens", "4"],
    ] {
        let e = refused(&gol(&args));
        assert!(
            e.contains("pass 2^64 - 1") && e.contains("the infinite plane counts exactly"),
            "{e}"
        );
    }
    assert!(!Path::new(out).exists(), "refused before the run");
    // Up to the last count it runs; on the plane the stamp is exact past 2^64.
    assert!(gol(&["run", "--input", bin, "--gens", "1"])
        .status
        .success());
    assert!(gol(&[
        "run",
        "--input",
        rle,
        "--gens",
        "4",
        "--output",
        out,
        "--infinite"
    ])
    .status
    .success());
    let written = std::fs::read_to_string(out).unwrap();
    assert!(
        written.starts_with("#CXRLE")
            && written
                .lines()
                .next()
                .unwrap()
                .ends_with("Gen=18446744073709551619"),
        "{written}"
    );
}

#[test]
fn gzip_bombs_of_every_format_are_refused_within_bounded_memory() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    // Each: a header of its format, then one gzip member of 64 MiB of filler repeated 20
    // times (a gzip stream may be many members): under 2 MB on disk, 1.3 GiB inflated.
    let filler = |byte: u8| {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&vec![byte; 64 << 20]).unwrap();
        gz.finish().unwrap()
    };
    for (name, head, byte) in [
        ("bomb.rle", "x = 3, y = 3\n", b'b'),
        ("bomb.cells", "!Name: bomb\n", b'.'),
        ("bomb.lif", "#Life 1.06\n", b' '),
        ("bomb.mc", "[M2] (bomb)\n", b'#'),
    ] {
        let mut first = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        first.write_all(head.as_bytes()).unwrap();
        let mut bytes = first.finish().unwrap();
        let member = filler(byte);
        for _ in 0..20 {
            bytes.extend_from_slice(&member);
        }
        assert!(bytes.len() < 2 << 20, "{name}: {} bytes", bytes.len());
        let path = dir.path().join(format!("{name}.gz"));
        std::fs::write(&path, &bytes).unwrap();
        // 3 GB of address space: enough for the 1 GiB the reader may inflate, not for the
        // doubling past it that took 12 GB.
        let e = refused(&limited(
            "ulimit -v 3000000",
            &["run", "--input", path.to_str().unwrap(), "--gens", "1"],
        ));
        assert!(
            e.contains("bytes a pattern file may have once decompressed"),
            "{name}: {e}"
        );
        assert!(e.len() < 300, "{name}: a message of {} bytes", e.len());
    }
}

#[test]
fn messages_quote_little_of_the_input_and_say_what_is_true() {
    let dir = tempfile::tempdir().unwrap();
    let long = "9".repeat(1_000_000);
    let refusal = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        refused(&gol(&[
            "run",
            "--input",
            path.to_str().unwrap(),
            "--gens",
            "1",
        ]))
    };
    // A megabyte of input in a message is cut to 80 characters and says so.
    for (name, text) in [
        ("a.rle", format!("#CXRLE {long}\nx = 3, y = 3\nbo!\n")),
        ("b.rle", format!("x = 3, y = {long}\nbo!\n")),
        (
            "c.rle",
            format!("x = 3, y = 3, rule = B3/S23:Q{long}\nbo!\n"),
        ),
        ("d.lif", format!("#Life 1.06\n0 {long}x\n")),
    ] {
        let e = refusal(name, text);
        assert!(e.len() < 400 && e.contains("(cut; "), "{name}: {e}");
    }
    let e = refused(&gol(&[
        "run",
        "--size",
        "8",
        "--rule",
        &format!("B3/S2{}x", "3".repeat(100_000)),
    ]));
    assert!(e.len() < 400 && e.contains("(cut; "), "{e}");
    // A number too large is not "not a whole number".
    let e = refusal("big.lif", "#Life 1.06\n0 99999999999999999999\n".into());
    assert!(e.contains("is beyond ±2^62"), "{e}");
    // The rule as the file writes it, and a strip named for what it is.
    let e = refusal(
        "strip.rle",
        "x = 3, y = 3, rule = B0/S23:P0,68\nbo!\n".into(),
    );
    assert!(
        e.contains("\"B0/S23:P0,68\"") && e.contains("B0 rules on a strip"),
        "{e}"
    );
    // A macrocell without its [M2] line is refused, not read without its first line.
    let e = refusal("headless.mc", "#R B3/S23\n$$*$\n".into());
    assert!(e.contains("[M2]"), "{e}");
    // A byte-order mark is skipped; :T0,0 is Golly's unbounded plane.
    for (name, text) in [
        ("bom.rle", "\u{feff}x = 3, y = 3\nbo$2bo$3o!\n"),
        (
            "plane.rle",
            "x = 3, y = 3, rule = B3/S23:T0,0\nbo$2bo$3o!\n",
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let out = gol(&[
            "run",
            "--input",
            path.to_str().unwrap(),
            "--gens",
            "4",
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (alive, report) = alive(&out.stdout);
        assert_eq!(alive, 5, "{name}");
        if name == "plane.rle" {
            assert_eq!(report["universe"], "infinite plane");
        }
    }
    // --listen's message says what it takes.
    let e = refused(&gol(&["view", "--size", "8", "--listen", "nowhere"]));
    assert!(e.contains("localhost:0"), "{e}");
}

#[test]
fn outputs_are_checked_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("no/such/folder/x.rle");
    let checkpoint = dir.path().join("no/c.gol");
    for (flag, path, name) in [
        ("--output", &output, "x.rle"),
        ("--checkpoint", &checkpoint, "c.gol"),
    ] {
        let out = gol(&[
            "run",
            "--size",
            "64",
            "--gens",
            "3",
            flag,
            path.to_str().unwrap(),
        ]);
        let e = refused(&out);
        assert!(
            out.stdout.is_empty(),
            "{flag}: refused before the run, so no report"
        );
        assert_eq!(e.matches(name).count(), 1, "the path once: {e}");
        assert_eq!(e.matches("os error 2").count(), 1, "the OS error once: {e}");
    }
    let e = refused(&gol(&[
        "run", "--size", "64", "--gens", "3", "--output", "x.xyz",
    ]));
    assert!(e.contains(".rle, .cells, .mc, .png or .gif"), "{e}");
    // Nothing is left behind by the probes.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn an_output_cut_short_leaves_the_previous_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["old.rle", "old.cells", "old.png", "old.gif"] {
        let path = dir.path().join(name);
        std::fs::write(&path, "the previous file").unwrap();
        // Files of at most 1 KiB (ulimit -f counts 1024-byte blocks here): a 512² output is larger.
        let out = limited(
            "ulimit -f 1",
            &[
                "run",
                "--size",
                "512",
                "--gens",
                "2",
                "--output",
                path.to_str().unwrap(),
            ],
        );
        let e = refused(&out);
        assert!(e.contains("File too large"), "{name}: {e}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "the previous file",
            "{name}"
        );
    }
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 4, "no temporary file is left behind");
}

/// Whether process `pid` catches SIGINT and SIGTERM (its `SigCgt` mask in `/proc`): `gol run`
/// has installed its handler.
fn catches_signals(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let caught = status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .unwrap_or(0);
    // Bit n - 1 for signal n: SIGINT 2, SIGTERM 15.
    caught & (1 << 1) != 0 && caught & (1 << 14) != 0
}

/// Starts `gol run ARGS`, waits until it catches signals and, where `running` names a file,
/// until that file exists (a first `--checkpoint-every` checkpoint: the generation loop runs),
/// then 300 ms more; sends `signals` (kill's names) one after another, and returns the output
/// and how long the process took to end after the first signal. (Waiting for the handler
/// rather than a fixed time keeps a slow start, as on a freshly started machine, from meeting
/// the signal's default action.)
fn interrupt(args: &[&str], running: Option<&Path>, signals: &[&str]) -> (Output, Duration) {
    let child = Command::new(gol_path())
        .arg("run")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !catches_signals(child.id()) || running.is_some_and(|file| !file.exists()) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "gol run did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let sent = Instant::now();
    for signal in signals {
        let killed = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
    }
    let out = child.wait_with_output().unwrap();
    (out, sent.elapsed())
}

fn alive(json: &[u8]) -> (u64, serde_json::Value) {
    let report: serde_json::Value = serde_json::from_slice(json).unwrap();
    (report["alive"].as_u64().unwrap(), report)
}

/// Runs `gol run --size SIZE --gens 10⁹ --checkpoint … --checkpoint-every 1000 --json EXTRA`,
/// sends SIGINT once the first checkpoint is written, and checks the stop: exit code 130, `interrupted` in the report, a message saying
/// how to resume, and a checkpoint that resumes to the result of an uninterrupted run.
fn stop_and_resume(size: &str, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = dir.path().join("c.gol");
    let c = checkpoint.to_str().unwrap();
    let gens = "1000000000";
    let every = ["--checkpoint-every", "1000"];
    let args = [
        &["--size", size, "--gens", gens, "--checkpoint", c, "--json"][..],
        &every,
        extra,
    ]
    .concat();
    let report = stopped(&args, &checkpoint);
    let reached = report["generations"].as_u64().unwrap();
    assert!(reached > 0 && reached < 1_000_000_000, "{report}");
    // The checkpoint holds generation `reached`: resuming for 5 more is a fresh run of reached + 5.
    let until = (reached + 5).to_string();
    let resumed = resumed(c, &until);
    let fresh = gol(&[
        "run",
        "--size",
        size,
        "--gens",
        &until,
        "--json",
        "--engine",
        "cpu-bitsliced",
    ]);
    assert_eq!(alive(&resumed.stdout).0, alive(&fresh.stdout).0);
}

/// `gol run ARGS` stopped by SIGINT: exit 130, a report that says so and a suggested resume
/// from `checkpoint`; the report.
fn stopped(args: &[&str], checkpoint: &Path) -> serde_json::Value {
    let (out, _) = interrupt(args, Some(checkpoint), &["INT"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let (_, report) = alive(&out.stdout);
    assert_eq!(report["interrupted"], true);
    let c = checkpoint.to_str().unwrap();
    assert!(
        stderr.contains(&format!("gol run --resume {c}")),
        "{stderr}"
    );
    report
}

/// The checkpoint `c` resumed until generation `until`, which succeeds.
fn resumed(c: &str, until: &str) -> Output {
    let resumed = gol(&["run", "--resume", c, "--gens", until, "--json"]);
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    resumed
}

#[test]
fn an_interrupted_run_says_what_it_did_not_write_and_its_resume_command_runs() {
    let dir = tempfile::tempdir().unwrap();
    // Names with a space and a quote: the command must quote them.
    let checkpoint = dir.path().join("my run's c.gol");
    let output = dir.path().join("final state.rle");
    let (c, o) = (checkpoint.to_str().unwrap(), output.to_str().unwrap());
    let soup = ["--size", "1024", "--seed", "5"];
    let args = [
        &soup[..],
        &[
            "--gens",
            "1000000000",
            "--checkpoint",
            c,
            "--checkpoint-every",
            "1000",
        ],
        &["--output", o, "--engine", "cpu-bitsliced"],
    ]
    .concat();
    let (out, _) = interrupt(&args, Some(&checkpoint), &["INT"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stdout.contains(&format!(
            "Output not written to {o}: the run was interrupted"
        )),
        "{stdout}"
    );
    assert!(!stdout.contains("Output written"), "{stdout}");
    assert!(stderr.contains(&format!("{o} was not written")), "{stderr}");
    assert!(!output.exists());
    // The command carries the output, the checkpoints and the engine; the world is the
    // checkpoint's. Run through the shell, a few generations past the stop, it writes the output.
    let command = stderr
        .trim()
        .split_once("resume with: ")
        .unwrap()
        .1
        .to_string();
    for kept in [
        "--checkpoint-every 1000",
        "--engine cpu-bitsliced",
        "--output",
        "--checkpoint",
        "--resume",
    ] {
        assert!(command.contains(kept), "{kept}: {command}");
    }
    assert!(
        !command.contains("--size") && !command.contains("--seed"),
        "{command}"
    );
    let reached: u64 = stderr
        .split_once("at generation ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    let until = (reached + 5).to_string();
    let command = command
        .replacen("gol ", &format!("'{}' ", gol_path().display()), 1)
        .replace("--gens 1000000000", &format!("--gens {until}"));
    let resumed = Command::new("sh").arg("-c").arg(&command).output().unwrap();
    assert!(
        resumed.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let fresh = gol(&[&["run"][..], &soup, &["--gens", &until, "--json"]].concat());
    let written = std::fs::read_to_string(&output).unwrap();
    let cells: usize = written
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('x'))
        .collect::<String>()
        .len();
    assert!(cells > 0, "{written}");
    assert!(String::from_utf8_lossy(&resumed.stdout)
        .contains(&format!("Total alive cells: {}", alive(&fresh.stdout).0)));
}

#[test]
fn sigint_writes_a_final_checkpoint_to_resume_from() {
    stop_and_resume("1024", &[]);
}

#[test]
fn sigint_on_the_plane_writes_a_final_checkpoint_to_resume_from() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = dir.path().join("c.gol");
    let c = checkpoint.to_str().unwrap();
    let soup = ["--size", "256", "--infinite"];
    let args = [
        &soup[..],
        &[
            "--gens",
            "10^30",
            "--checkpoint",
            c,
            "--checkpoint-every",
            "1000",
            "--json",
        ],
    ]
    .concat();
    let report = stopped(&args, &checkpoint);
    assert_eq!(report["universe"], "infinite plane");
    let reached = report["generations"].as_u64().unwrap();
    // Stopped where a power of two of the step ended: the final checkpoint holds that.
    assert!(reached > 0, "{report}");
    let until = (reached + 5).to_string();
    let resumed = resumed(c, &until);
    let fresh = gol(&[&["run"][..], &soup, &["--gens", &until, "--json"]].concat());
    let (resumed, resumed_report) = alive(&resumed.stdout);
    let (fresh, fresh_report) = alive(&fresh.stdout);
    assert_eq!(resumed, fresh);
    assert_eq!(resumed_report["bounding_box"], fresh_report["bounding_box"]);
}

#[test]
fn sigterm_without_a_checkpoint_ends_promptly() {
    // On the CPU: its set-up is over within the 300 ms that `interrupt` waits (a GPU's first
    // start on a fresh machine can take seconds, and a signal is answered after set-up).
    let (out, took) = interrupt(
        &[
            "--size",
            "4096",
            "--gens",
            "100000000",
            "--engine",
            "cpu-bitsliced",
        ],
        None,
        &["TERM"],
    );
    assert_eq!(out.status.code(), Some(143));
    assert!(
        took < Duration::from_secs(1),
        "ended {took:?} after the signal"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Stopped between steps; on a machine slow enough that set-up outlasts the wait, at once.
    assert!(
        stderr.contains("interrupted by SIGTERM at generation")
            || stderr.contains("interrupted during set-up"),
        "{stderr}"
    );
}

#[test]
fn a_signal_during_set_up_ends_the_run_at_once() {
    // A 30000² glibc soup takes seconds to make: the signal comes while it is being made.
    let start = Instant::now();
    let child = Command::new(gol_path())
        .args(["run", "--size", "30000", "--gens", "10", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while !catches_signals(child.id()) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "gol run did not start"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let sent = Instant::now();
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    assert_eq!(out.status.code(), Some(143));
    assert!(
        took < Duration::from_secs(1),
        "ended {took:?} after the signal"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim(),
        "gol: interrupted during set-up, before any generation"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_second_sigint_ends_the_run_at_once_and_keeps_the_previous_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = dir.path().join("c.gol");
    let c = checkpoint.to_str().unwrap();
    let (out, took) = interrupt(
        &[
            "--size",
            "4096",
            "--gens",
            "100000000",
            "--checkpoint",
            c,
            "--checkpoint-every",
            "100",
        ],
        Some(&checkpoint),
        &["INT", "INT"],
    );
    assert_eq!(out.status.code(), Some(130));
    assert!(
        took < Duration::from_secs(1),
        "ended {took:?} after the signals"
    );
    // A whole checkpoint is there, the last one written before the second signal or the final
    // one: it opens, names its generation, and resumes.
    let e = refused(&gol(&["run", "--resume", c, "--gens", "1"]));
    let at: u64 = e
        .split("at generation ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{e}"));
    assert!(at >= 100, "{e}");
    let resumed = gol(&["run", "--resume", c, "--gens", &(at + 1).to_string()]);
    assert!(resumed.status.success());
}

/// Starts `gol run ARGS --output DIR/o.bin` over an existing `o.bin`, waits until the output's
/// temporary file is there (a `.bin` output is begun before the run), then `wait` more, sends
/// `signals`, and checks the exit code `code`, the old file kept, and no temporary left.
fn signals_leave_the_old_output(args: &[&str], wait: Duration, signals: &[&str], code: i32) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("o.bin");
    std::fs::write(&path, "old").unwrap();
    let child = Command::new(gol_path())
        .arg("run")
        .args(args)
        .args([
            "--output",
            path.to_str().unwrap(),
            "--engine",
            "cpu-bitsliced",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::fs::read_dir(dir.path()).unwrap().count() < 2 || !catches_signals(child.id()) {
        assert!(start.elapsed() < Duration::from_secs(60), "no output begun");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(wait);
    for signal in signals {
        Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary file is left behind"
    );
}

#[test]
fn a_signal_in_set_up_removes_the_begun_output() {
    // A 768³ glibc soup takes a second or more to make: the signal comes while it is made, and
    // the process ends at once.
    let args = ["--dim", "3", "--size", "768", "--gens", "5"];
    signals_leave_the_old_output(&args, Duration::ZERO, &["TERM"], 143);
}

#[test]
fn two_sigints_in_the_loop_remove_the_begun_output() {
    // The second signal ends the process at once, from inside the loop.
    let args = ["--dim", "3", "--size", "200", "--gens", "1000000000"];
    signals_leave_the_old_output(&args, Duration::from_millis(500), &["INT", "INT"], 130);
}

/// Whether the NVIDIA driver lists a GPU here; without one the GPU faults are skipped with a
/// notice (a failure under `GOL_REQUIRE_GPU`).
fn gpu_listed() -> bool {
    let listed =
        std::fs::read_dir("/proc/driver/nvidia/gpus").is_ok_and(|mut d| d.next().is_some());
    if !listed {
        assert!(
            std::env::var_os("GOL_REQUIRE_GPU").is_none(),
            "GOL_REQUIRE_GPU is set but no GPU is listed"
        );
        eprintln!("notice: no GPU; skipping");
    }
    listed
}

/// A GPU that cannot start (`CUDA_VISIBLE_DEVICES` naming a device the machine lacks: the GPU
/// is listed, the driver finds none): `auto` falls back to the CPU and says why; a GPU engine
/// asked for by name is refused in one line.
#[test]
fn auto_falls_back_to_the_cpu_when_the_gpu_cannot_start() {
    if !gpu_listed() {
        return;
    }
    let args = ["run", "--size", "2048", "--gens", "50000", "--json"];
    let out = Command::new(gol_path())
        .args(args)
        .env("CUDA_VISIBLE_DEVICES", "7")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let (population, report) = alive(&out.stdout);
    assert!(
        report["engine"].as_str().unwrap().starts_with("cpu-"),
        "{report}"
    );
    let reason = report["engine_choice"].as_str().unwrap();
    assert!(reason.contains("fell back to cpu-"), "{reason}");
    let cpu = gol(&[&args[..], &["--engine", "cpu-bitsliced"]].concat());
    assert_eq!(alive(&cpu.stdout).0, population);
    let named = Command::new(gol_path())
        .args([
            "run",
            "--size",
            "64",
            "--gens",
            "1",
            "--engine",
            "cuda-bitsliced",
        ])
        .env("CUDA_VISIBLE_DEVICES", "7")
        .output()
        .unwrap();
    refused(&named);
}

/// A run split over GPUs (`--gpus 1`) stops on SIGINT like any other: a final checkpoint
/// that resumes to the uninterrupted result.
#[test]
fn a_split_gpu_run_stops_on_sigint_with_a_checkpoint() {
    if gpu_listed() {
        stop_and_resume("4096", &["--gpus", "1"]);
    }
}

/// `gol run` with `args`, NVRTC hidden: `/usr/local/cuda` under an empty mount in a private
/// mount namespace (`unshare -m`, which needs root, as the GPU machine's tests run), and an
/// empty kernel cache. `None`, with a notice, where NVRTC cannot be hidden here.
fn run_without_nvrtc(args: &[&str]) -> Option<serde_json::Value> {
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new("unshare")
        .args([
            "-m",
            "sh",
            "-c",
            "mount -t tmpfs none /usr/local/cuda && exec \"$0\" \"$@\"",
        ])
        .arg(gol_path())
        .arg("run")
        .args(args)
        .arg("--json")
        .env("GOL_CACHE_DIR", cache.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && (stderr.contains("unshare") || stderr.contains("mount")) {
        eprintln!(
            "notice: cannot hide NVRTC here ({}); skipping",
            stderr.trim()
        );
        return None;
    }
    assert!(out.status.success(), "{stderr}");
    Some(alive(&out.stdout).1)
}

/// No NVRTC and a rule whose own kernel is not built in: cuda-bitsliced runs it on its generic
/// kernel, built in, with the CPU's result; `auto` counts that kernel's rate, and sends a long
/// run to the CPU, saying why.
#[test]
fn rules_without_a_kernel_run_on_the_generic_one_without_nvrtc() {
    if !gpu_listed() {
        return;
    }
    // An isotropic rule, which the generic kernel takes over the nine cells (its slower way).
    let short = ["--size", "1024", "--gens", "100", "--rule", "B2-a/S12"];
    let gpu = [&short[..], &["--engine", "cuda-bitsliced"]].concat();
    let Some(report) = run_without_nvrtc(&gpu) else {
        return;
    };
    let details = report["engine_details"].as_str().unwrap();
    assert!(
        details.contains("the generic rule kernel (the rule's own failed to compile: no NVRTC"),
        "{report}"
    );
    let cpu = [
        &["run"][..],
        &short,
        &["--engine", "cpu-bitsliced", "--json"],
    ]
    .concat();
    assert_eq!(
        report["alive"],
        alive(stdout_of(&cpu).as_bytes()).1["alive"]
    );
    let long = ["--size", "4096", "--gens", "20000", "--rule", "B2-a/S12"];
    let report = run_without_nvrtc(&long).unwrap();
    assert!(
        report["engine"].as_str().unwrap().starts_with("cpu-"),
        "{report}"
    );
    let reason = report["engine_choice"].as_str().unwrap();
    assert!(
        reason.contains("generic rule kernel throughout"),
        "{reason}"
    );
}

/// No NVRTC, the default rule: cuda-bitsliced runs it from the kernels built into `gol`, in 2D
/// (the seminar's case) and 3D.
#[test]
fn default_rules_run_on_the_gpu_without_nvrtc() {
    if !gpu_listed() {
        return;
    }
    let gpu = ["--engine", "cuda-bitsliced"];
    let seminar = [
        &gpu[..],
        &["--size", "1024", "--gens", "1024", "--seed", "0"],
    ]
    .concat();
    let Some(report) = run_without_nvrtc(&seminar) else {
        return;
    };
    assert_eq!(report["engine"], "cuda-bitsliced", "{report}");
    assert_eq!(report["alive"], 47026);
    let cube = [
        &gpu[..],
        &[
            "--dim", "3", "--size", "256", "--gens", "100", "--seed", "1",
        ],
    ]
    .concat();
    let report = run_without_nvrtc(&cube).unwrap();
    assert_eq!(report["engine"], "cuda-bitsliced", "{report}");
}
