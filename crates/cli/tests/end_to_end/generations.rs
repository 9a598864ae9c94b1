//! Generations rules end to end: random rules of every neighbourhood family with 3 to 8 states
//! (and some with many more), on tori and bounded planes of odd sizes, from multi-state soups,
//! checked against Golly's `bgolly -a Generations`; multi-state RLE and macrocell files through
//! gol and Golly both ways; the report's counts; and the refusals.

use std::path::Path;
use std::process::Command;

use gol_core::rule::Family;
use gol_core::seed::{states_soup, SplitMix64};
use gol_core::Rule;

use crate::common::{bgolly, error_of, stdout_of};

/// The states of a multi-state (or two-state) RLE text, row by row, cropped to the bounding box
/// of the cells not in state 0. Parsed here, apart from gol's own reader, as Golly writes it.
fn states_box(text: &str) -> Vec<Vec<u8>> {
    let mut rows: Vec<Vec<u8>> = vec![Vec::new()];
    let body = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .skip_while(|l| !l.trim_start().starts_with('x'))
        .skip(1)
        .collect::<String>();
    let mut count = 0usize;
    let mut bytes = body.bytes().peekable();
    while let Some(b) = bytes.next() {
        let n = count.max(1);
        let state = match b {
            b'0'..=b'9' => {
                count = count * 10 + (b - b'0') as usize;
                continue;
            }
            b'!' => break,
            b'$' => {
                rows.extend((0..n).map(|_| Vec::new()));
                count = 0;
                continue;
            }
            b'.' | b'b' => 0,
            b'o' => 1,
            b'A'..=b'X' => b - b'A' + 1,
            b'p'..=b'y' => 24 * (b - b'o') + bytes.next().unwrap() - b'A' + 1,
            b if b.is_ascii_whitespace() => continue,
            other => panic!("unexpected {:?} in {text}", other as char),
        };
        rows.last_mut()
            .unwrap()
            .extend(std::iter::repeat_n(state, n));
        count = 0;
    }
    let live = |row: &Vec<u8>| row.iter().any(|&s| s != 0);
    let (Some(top), Some(bottom)) = (rows.iter().position(live), rows.iter().rposition(live))
    else {
        return Vec::new();
    };
    let rows = &rows[top..=bottom];
    let left = rows
        .iter()
        .filter_map(|r| r.iter().position(|&s| s != 0))
        .min()
        .unwrap();
    let right = rows
        .iter()
        .filter_map(|r| r.iter().rposition(|&s| s != 0))
        .max()
        .unwrap();
    rows.iter()
        .map(|r| {
            (left..=right)
                .map(|x| r.get(x).copied().unwrap_or(0))
                .collect()
        })
        .collect()
}

/// A random `width` × `height` soup of `states` states (25 at most: a letter a cell) as an RLE
/// file under `rule` (with its grid suffix), written here one letter a cell.
fn soup_file(path: &Path, width: u64, height: u64, states: u32, rule: &str, rng: &mut SplitMix64) {
    let soup = states_soup(width as usize, height as usize, states, rng.next()).unwrap();
    let mut body = String::new();
    for y in 0..height as usize {
        for x in 0..width as usize {
            body.push(match soup.state(x, y) {
                0 => '.',
                s => (b'A' + s as u8 - 1) as char,
            });
            if x % 60 == 59 {
                body.push('\n');
            }
        }
        body.push(if y + 1 == height as usize { '!' } else { '$' });
        body.push('\n');
    }
    let text = format!("x = {width}, y = {height}, rule = {rule}\n{body}");
    std::fs::write(path, text).unwrap();
}

/// Runs `start` for `gens` generations in bgolly and in gol (on `engine`), and compares the
/// states; returns gol's `--json` report.
fn golly_agrees(bgolly: &Path, dir: &Path, start: &Path, gens: u64, engine: &str) -> String {
    let (theirs, ours) = (dir.join("theirs.rle"), dir.join("ours.rle"));
    let status = Command::new(bgolly)
        .args([
            "-a",
            "Generations",
            "-q",
            "-q",
            "-m",
            &gens.to_string(),
            "-o",
        ])
        .arg(&theirs)
        .arg(start)
        .status()
        .expect("bgolly runs");
    assert!(status.success(), "bgolly failed on {}", start.display());
    let report = stdout_of(&[
        "run",
        "--input",
        start.to_str().unwrap(),
        "--gens",
        &gens.to_string(),
        "--engine",
        engine,
        "--json",
        "--output",
        ours.to_str().unwrap(),
    ]);
    let theirs = states_box(&std::fs::read_to_string(&theirs).unwrap());
    let ours_box = states_box(&std::fs::read_to_string(&ours).unwrap());
    assert_eq!(
        ours_box,
        theirs,
        "gol ({engine}) and Golly differ after {gens} generations of {}",
        std::fs::read_to_string(start).unwrap()
    );
    let alive: usize = theirs.iter().flatten().filter(|&&s| s != 0).count();
    let live: usize = theirs.iter().flatten().filter(|&&s| s == 1).count();
    assert!(
        report.contains(&format!("\"alive\":{alive},\"live\":{live},")),
        "{report}"
    );
    report
}

/// A random rule of `family` without births on 0 neighbours (which Golly's Generations
/// algorithm does not run), with `states` states.
fn random_rule(family: Family, states: u32, rng: &mut SplitMix64) -> Rule {
    loop {
        let rule = Rule::random(family, &mut || rng.next());
        if rule.birth_mask() & 1 == 0 {
            return rule.with_states(states).unwrap();
        }
    }
}

#[test]
fn golly_agrees_on_random_generations_rules_of_every_family() {
    let Some(bgolly) = bgolly() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = SplitMix64::new(34);
    for case in 0..48u64 {
        let family = Family::ALL[case as usize % Family::ALL.len()];
        let states = match case % 8 {
            7 => 9 + (rng.next() % 200) as u32,
            _ => 3 + (rng.next() % 6) as u32,
        };
        let rule = random_rule(family, states, &mut rng);
        let (width, height) = (1 + rng.next() % 45, 1 + rng.next() % 33);
        let topology = ["T", "P"][(case / 4) as usize % 2];
        let rule_text = format!("{rule}:{topology}{width},{height}");
        let here = dir.path().join(case.to_string());
        std::fs::create_dir_all(&here).unwrap();
        let start = here.join("start.rle");
        soup_file(&start, width, height, states.min(25), &rule_text, &mut rng);
        let gens = 1 + rng.next() % 40;
        let engine = ["cpu-bitsliced", "cpu-scalar"][case as usize % 2];
        golly_agrees(&bgolly, &here, &start, gens, engine);
    }
}

#[test]
fn golly_agrees_on_named_generations_rules() {
    let Some(bgolly) = bgolly() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = SplitMix64::new(35);
    // Star Wars, Brian's Brain, a B/S/C spelling, Life with a tail, a hexagonal and an
    // isotropic one, on grids of odd sides.
    for (i, (rule, golly, width, height, gens)) in [
        ("345/2/4", "345/2/4", 61, 47, 100),
        ("/2/3", "/2/3", 64, 33, 80),
        ("B2/S/C3", "/2/3", 37, 41, 60),
        ("23/3/5:P", "23/3/5:P", 45, 45, 120),
        ("B2/S34/C6H", "34/2/6H", 50, 31, 90),
        ("B2-a/S12/C4", "12/2-a/4", 33, 65, 70),
    ]
    .into_iter()
    .enumerate()
    {
        let parsed = Rule::parse(rule.split(':').next().unwrap()).unwrap();
        let here = dir.path().join(i.to_string());
        std::fs::create_dir_all(&here).unwrap();
        let start = here.join("start.rle");
        let sized = format!(
            "{golly}{}{width},{height}",
            if golly.contains(':') { "" } else { ":T" }
        );
        soup_file(&start, width, height, parsed.states(), &sized, &mut rng);
        let engine = ["cpu-bitsliced", "cpu-scalar"][i % 2];
        let report = golly_agrees(&bgolly, &here, &start, gens, engine);
        assert!(
            report.contains(&format!("\"rule\":\"{golly}\"")),
            "{report}"
        );
    }
}

#[test]
fn multi_state_files_go_between_gol_and_golly() {
    let Some(bgolly) = bgolly() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = SplitMix64::new(36);
    let start = dir.path().join("start.rle");
    soup_file(&start, 40, 30, 6, "345/2/6:T40,30", &mut rng);
    // Golly writes macrocell and compressed RLE; gol reads both and agrees with its own run.
    for name in ["golly.mc", "golly.rle.gz", "golly.mc.gz"] {
        let theirs = dir.path().join(name);
        let status = Command::new(&bgolly)
            .args(["-a", "Generations", "-q", "-q", "-m", "17", "-o"])
            .arg(&theirs)
            .arg(&start)
            .status()
            .unwrap();
        assert!(status.success());
        let again = dir.path().join(format!("{name}.again.rle"));
        stdout_of(&[
            "run",
            "--input",
            theirs.to_str().unwrap(),
            "--gens",
            "0",
            "--output",
            again.to_str().unwrap(),
        ]);
        let ours = dir.path().join("ours.rle");
        stdout_of(&[
            "run",
            "--input",
            start.to_str().unwrap(),
            "--gens",
            "17",
            "--output",
            ours.to_str().unwrap(),
        ]);
        assert_eq!(
            states_box(&std::fs::read_to_string(&again).unwrap()),
            states_box(&std::fs::read_to_string(&ours).unwrap()),
            "{name}"
        );
    }
    // gol writes macrocell and RLE; Golly reads both, at the generation they were saved at
    // (bgolly's -m is the generation to reach), and runs on from them as from its own.
    for name in ["ours.mc", "ours.rle", "ours.mc.gz"] {
        let ours = dir.path().join(name);
        stdout_of(&[
            "run",
            "--input",
            start.to_str().unwrap(),
            "--gens",
            "9",
            "--output",
            ours.to_str().unwrap(),
        ]);
        let (from_ours, from_start) = (dir.path().join("a.rle"), dir.path().join("b.rle"));
        for (input, out) in [(&ours, &from_ours), (&start, &from_start)] {
            let status = Command::new(&bgolly)
                .args(["-a", "Generations", "-q", "-q", "-m", "17", "-o"])
                .arg(out)
                .arg(input)
                .status()
                .unwrap();
            assert!(status.success(), "bgolly on {}", input.display());
        }
        assert_eq!(
            states_box(&std::fs::read_to_string(&from_ours).unwrap()),
            states_box(&std::fs::read_to_string(&from_start).unwrap()),
            "{name}"
        );
    }
}

#[test]
fn the_report_counts_every_state_and_the_live_ones() {
    let report = stdout_of(&["run", "--size", "64", "--gens", "30", "--rule", "345/2/4"]);
    let count = |label: &str| -> u64 {
        report
            .lines()
            .find_map(|l| l.strip_prefix(label))
            .unwrap_or_else(|| panic!("no {label} in {report}"))
            .trim()
            .parse()
            .unwrap()
    };
    let (alive, live) = (count("Total alive cells:"), count("Live (state 1) cells:"));
    assert!(0 < live && live < alive, "{report}");
    assert!(report.contains("rule 345/2/4"), "{report}");
    // Two-state rules keep the report as it was.
    let life = stdout_of(&["run", "--size", "64", "--gens", "3"]);
    assert!(!life.contains("Live (state 1)"), "{life}");
    let json = stdout_of(&["run", "--size", "64", "--gens", "3", "--json"]);
    assert!(!json.contains("\"live\""), "{json}");
}

#[test]
fn generations_runs_refuse_what_they_cannot_do() {
    let err = error_of(&[
        "run",
        "--size",
        "32",
        "--rule",
        "345/2/4",
        "--engine",
        "cpu-table",
    ]);
    assert!(
        err.contains("cpu-table runs only two-state rules")
            && err.contains("Generations rules run on cpu-scalar, cpu-bitsliced"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let cells = dir.path().join("x.cells");
    let err = error_of(&[
        "run",
        "--size",
        "32",
        "--rule",
        "/2/3",
        "--output",
        cells.to_str().unwrap(),
    ]);
    assert!(err.contains("a .cells file holds two states"), "{err}");
    assert!(!cells.exists());
    let err = error_of(&["run", "--dim", "3", "--size", "8", "--rule", "/2/3"]);
    assert!(err.contains("Generations rules are 2D rules"), "{err}");
    let err = error_of(&["run", "--size", "8", "--rule", "345/2/1"]);
    assert!(err.contains("2 to 256"), "{err}");
    // A multi-state file under a two-state rule names its line.
    let file = dir.path().join("brain.rle");
    std::fs::write(&file, "x = 3, y = 2, rule = /2/3\nA.B$\n.AA!\n").unwrap();
    let err = error_of(&[
        "run",
        "--input",
        file.to_str().unwrap(),
        "--size",
        "8",
        "--rule",
        "B3/S23",
    ]);
    assert!(
        err.contains("brain.rle:2") && err.contains("cell 'B' is not a two-state cell"),
        "{err}"
    );
    // A state the rule does not have.
    std::fs::write(&file, "x = 3, y = 2, rule = /2/3\nA.B$\n.AC!\n").unwrap();
    let err = error_of(&["run", "--input", file.to_str().unwrap(), "--size", "8"]);
    assert!(
        err.contains("brain.rle:3") && err.contains("cell state 3"),
        "{err}"
    );
}
