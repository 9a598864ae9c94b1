//! Pattern files against Golly's `bgolly`: macrocells written by Golly read in place, ours read
//! by Golly, and generation counts carried through `#G` and `#CXRLE Gen=`.

use std::process::Command;

use crate::common::{bgolly, bounding_box, stdout_of};

/// Runs bgolly (HashLife, which writes macrocells) on `input` for `gens` generations, writing
/// `output`.
fn golly(bgolly: &std::path::Path, input: &std::path::Path, gens: u64, output: &std::path::Path) {
    let status = Command::new(bgolly)
        .args(["-a", "HashLife", "-q", "-q", "-m", &gens.to_string(), "-o"])
        .arg(output)
        .arg(input)
        .status()
        .expect("bgolly runs");
    assert!(status.success(), "bgolly failed on {}", input.display());
}

#[test]
fn golly_macrocells_are_read_in_place_and_ours_are_read_by_golly() {
    let Some(bgolly) = bgolly() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let text = |name: &str| std::fs::read_to_string(path(name)).unwrap();
    for (i, (width, height, rule, gens)) in [
        (40, 30, "B3/S23", 37),
        (33, 17, "B36/S23", 20),
        (64, 64, "B2-a/S12", 25),
        (9, 7, "B3/S23", 5),
        (100, 3, "B2/S34H", 11),
    ]
    .into_iter()
    .enumerate()
    {
        let (width, height) = (width.to_string(), height.to_string());
        let problem = [
            "--width",
            &width,
            "--height",
            &height,
            "--density",
            "0.35",
            "--seed",
        ];
        let run = |gens: u64, output: &str| {
            let mut args = vec!["run"];
            args.extend(problem);
            let seed = i.to_string();
            let gens = gens.to_string();
            let output = path(output);
            args.extend([seed.as_str(), "--rule", rule, "--gens", &gens, "--output"]);
            args.push(output.to_str().unwrap());
            stdout_of(&args);
        };
        // Golly runs our start (a whole torus, placed the same under any convention) and
        // writes a macrocell; read back, it must be our own run cell for cell, in place.
        run(0, &format!("start{i}.rle"));
        run(gens, &format!("ours{i}.rle"));
        golly(
            &bgolly,
            &path(&format!("start{i}.rle")),
            gens,
            &path(&format!("theirs{i}.mc")),
        );
        stdout_of(&[
            "run",
            "--input",
            path(&format!("theirs{i}.mc")).to_str().unwrap(),
            "--gens",
            "0",
            "--output",
            path(&format!("again{i}.rle")).to_str().unwrap(),
        ]);
        assert_eq!(
            text(&format!("again{i}.rle")),
            text(&format!("ours{i}.rle")),
            "case {i}: Golly's macrocell of {rule} after {gens} generations, read back"
        );
        // Golly reads our macrocell, at its generation, and ends where we do.
        run(0, &format!("start{i}.mc.gz"));
        golly(
            &bgolly,
            &path(&format!("start{i}.mc.gz")),
            gens,
            &path(&format!("golly{i}.rle")),
        );
        run(gens, &format!("ours{i}.cells"));
        let golly_rle = text(&format!("golly{i}.rle"));
        let header = golly_rle.lines().find(|l| l.starts_with('x')).unwrap();
        let size: Vec<String> = header
            .split(',')
            .take(2)
            .map(|kv| kv.split_once('=').unwrap().1.trim().to_string())
            .collect();
        let ours = bounding_box(&text(&format!("ours{i}.cells")));
        if size[0] == "0" {
            assert!(
                ours.is_empty(),
                "case {i}: Golly's run died out, ours did not"
            );
            continue;
        }
        stdout_of(&[
            "run",
            "--input",
            path(&format!("golly{i}.rle")).to_str().unwrap(),
            "--width",
            &size[0],
            "--height",
            &size[1],
            "--gens",
            "0",
            "--output",
            path(&format!("golly{i}.cells")).to_str().unwrap(),
        ]);
        assert_eq!(
            bounding_box(&text(&format!("golly{i}.cells"))),
            ours,
            "case {i}: Golly on our macrocell"
        );
    }
}

#[test]
fn generations_carry_through_macrocells_and_extended_rle() {
    let Some(bgolly) = bgolly() else { return };
    let dir = tempfile::tempdir().unwrap();
    let start = dir.path().join("start.rle");
    stdout_of(&[
        "run",
        "--size",
        "32",
        "--density",
        "0.4",
        "--gens",
        "0",
        "--output",
        start.to_str().unwrap(),
    ]);
    let mc = dir.path().join("at50.mc");
    golly(&bgolly, &start, 50, &mc);
    assert!(std::fs::read_to_string(&mc).unwrap().contains("#G 50"));
    let out = dir.path().join("at60.rle");
    let report = stdout_of(&[
        "run",
        "--input",
        mc.to_str().unwrap(),
        "--gens",
        "10",
        "--output",
        out.to_str().unwrap(),
    ]);
    assert!(
        report.contains("10 generations from generation 50 to 60"),
        "{report}"
    );
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(
        written.starts_with("#CXRLE Pos=-16,-16 Gen=60\n"),
        "{written}"
    );
    // The same cells as 60 generations from the start.
    let direct = dir.path().join("direct.rle");
    stdout_of(&[
        "run",
        "--input",
        start.to_str().unwrap(),
        "--gens",
        "60",
        "--output",
        direct.to_str().unwrap(),
    ]);
    let body = |text: &str| text.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(
        body(&written),
        body(&std::fs::read_to_string(&direct).unwrap())
    );
}
