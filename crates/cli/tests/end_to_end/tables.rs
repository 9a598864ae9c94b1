//! Rule tables (Golly's `.rule` files, its RuleLoader algorithm), end to end: a rule of our own
//! written as a table and as a tree runs as its definition on tori and on the infinite plane;
//! Golly's own rules agree with `bgolly -a RuleLoader` on random soups; rules are found where
//! Golly finds them, and bad ones are refused in one line.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use gol_core::seed::SplitMix64;

use crate::common::{bgolly, error_of, golly_agrees, stdout_of};

/// Golly's rules, where Debian's `golly` puts them.
const GOLLY_RULES: &str = "/usr/share/golly/Rules/";

/// A wire world of our own (Silverman's WireWorld, by its definition): an electron head (1)
/// becomes a tail (2), a tail becomes wire (3), wire becomes a head where one or two of its
/// eight neighbours are heads, and empty cells (0) stay empty. Written with unbound
/// variables under `permute`, and left to the default (no change) elsewhere.
const WIRES_TABLE: &str = "@RULE Wires
Our own wire world, for the tests.

@TABLE
n_states:4
neighborhood:Moore
symmetries:permute
var a={0,1,2,3}
var b={0,1,2,3}
var c={0,1,2,3}
var d={0,1,2,3}
var e={0,1,2,3}
var f={0,1,2,3}
var g={0,1,2,3}
var h={0,1,2,3}
var p={0,2,3}
var q={0,2,3}
var r={0,2,3}
var s={0,2,3}
var t={0,2,3}
var u={0,2,3}
var v={0,2,3}
1,a,b,c,d,e,f,g,h,2
2,a,b,c,d,e,f,g,h,3
3,1,p,q,r,s,t,u,v,1 # one head
3,1,1,q,r,s,t,u,v,1 # two heads

@COLORS
1 255 255 255
";

/// The wire world's next state of a cell in `centre` with `heads` heads around it.
fn wires(centre: u8, heads: usize) -> u8 {
    match (centre, heads) {
        (1, _) => 2,
        (2, _) => 3,
        (3, 1 | 2) => 1,
        (other, _) => other,
    }
}

/// The wire world as a `@TREE` (Golly's order: nw, ne, sw, se, n, w, e, s, c), built by
/// enumerating every neighbourhood and sharing equal nodes.
fn wires_tree() -> String {
    struct Tree {
        lines: Vec<String>,
        seen: std::collections::HashMap<String, usize>,
    }
    impl Tree {
        /// The node for the variables after `depth` of them, `heads` heads among the
        /// neighbours so far.
        fn node(&mut self, depth: usize, heads: usize) -> usize {
            let values: Vec<usize> = (0..4u8)
                .map(|v| match depth {
                    8 => wires(v, heads) as usize,
                    _ => self.node(depth + 1, heads + (v == 1) as usize),
                })
                .collect();
            let mut line = (9 - depth).to_string();
            for v in values {
                write!(line, " {v}").unwrap();
            }
            let next = self.lines.len();
            let id = *self.seen.entry(line.clone()).or_insert(next);
            if id == next {
                self.lines.push(line);
            }
            id
        }
    }
    let mut tree = Tree {
        lines: Vec::new(),
        seen: Default::default(),
    };
    tree.node(0, 0);
    format!(
        "@RULE Wires\n@TREE\nnum_states=4\nnum_neighbors=8\nnum_nodes={}\n{}\n",
        tree.lines.len(),
        tree.lines.join("\n")
    )
}

/// Random cells of the wire world (mostly wire and empty, a few heads and tails), row-major.
fn random_wires(width: usize, height: usize, rng: &mut SplitMix64) -> Vec<u8> {
    (0..width * height)
        .map(|_| match rng.next() % 16 {
            0 => 1,
            1 => 2,
            2..=8 => 3,
            _ => 0,
        })
        .collect()
}

/// `generations` generations of the wire world on a `width` × `height` torus (`wrap`) or
/// bounded plane, by the definition.
fn run_wires(cells: &[u8], width: usize, height: usize, generations: usize, wrap: bool) -> Vec<u8> {
    let mut cells = cells.to_vec();
    for _ in 0..generations {
        let at = |x: isize, y: isize| -> u8 {
            let (w, h) = (width as isize, height as isize);
            if !wrap && (!(0..w).contains(&x) || !(0..h).contains(&y)) {
                return 0;
            }
            cells[(y.rem_euclid(h) * w + x.rem_euclid(w)) as usize]
        };
        cells = (0..width * height)
            .map(|i| {
                let (x, y) = ((i % width) as isize, (i / width) as isize);
                let heads = (-1..=1)
                    .flat_map(|dy| (-1..=1).map(move |dx| (dx, dy)))
                    .filter(|&(dx, dy)| (dx, dy) != (0, 0) && at(x + dx, y + dy) == 1)
                    .count();
                wires(cells[i], heads)
            })
            .collect();
    }
    cells
}

/// An RLE of the states `cells` (row-major, `width` wide) under `rule`.
fn rle(cells: &[u8], width: usize, height: usize, rule: &str) -> String {
    let mut text = format!("x = {width}, y = {height}, rule = {rule}\n");
    for row in cells.chunks(width) {
        for &state in row {
            // Golly's letters: '.', 'A' to 'X' for 1 to 24, then 'pA' to 'pX', 'qA', ….
            match state {
                0 => text.push('.'),
                s @ 1..=24 => text.push((b'A' + s - 1) as char),
                s => {
                    text.push((b'p' + (s - 25) / 24) as char);
                    text.push((b'A' + (s - 25) % 24) as char);
                }
            }
        }
        text.push_str("$\n");
    }
    text.push_str("!\n");
    text
}

/// `gol run` of `input` for `gens` generations with rules from `rules`, written as RLE to
/// `output`; its JSON report.
fn run_to(rules: &Path, input: &Path, gens: usize, output: &Path, extra: &[&str]) -> String {
    let mut args = vec![
        "--rules",
        rules.to_str().unwrap(),
        "run",
        "--input",
        input.to_str().unwrap(),
        "--json",
        "--output",
        output.to_str().unwrap(),
    ];
    let gens = gens.to_string();
    args.extend(["--gens", &gens]);
    args.extend(extra);
    stdout_of(&args)
}

#[test]
fn a_rule_of_our_own_as_a_table_and_as_a_tree_runs_as_defined_on_tori_and_the_plane() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules");
    std::fs::create_dir(&rules).unwrap();
    let mut rng = SplitMix64::new(43);
    for (form, text) in [("table", WIRES_TABLE.to_string()), ("tree", wires_tree())] {
        std::fs::write(rules.join("Wires.rule"), &text).unwrap();
        for (case, (width, height, gens)) in [(1, 1, 3), (2, 3, 5), (37, 23, 41), (64, 9, 100)]
            .into_iter()
            .enumerate()
        {
            let cells = random_wires(width, height, &mut rng);
            for (wrap, rule) in [
                (true, format!("Wires:T{width},{height}")),
                (false, "Wires".to_string()),
            ] {
                let name = format!("{form}-{case}-{wrap}");
                let (start, expected) = (
                    dir.path().join(format!("{name}.rle")),
                    dir.path().join(format!("{name}-expected.rle")),
                );
                std::fs::write(&start, rle(&cells, width, height, &rule)).unwrap();
                let reference = run_wires(&cells, width, height, gens, wrap);
                let stamp = format!("#CXRLE Gen={gens}\n");
                std::fs::write(&expected, stamp + &rle(&reference, width, height, &rule)).unwrap();
                let (ours, again) = (dir.path().join("ours.rle"), dir.path().join("again.rle"));
                let report = run_to(&rules, &start, gens, &ours, &[]);
                let engine = if wrap { "cpu-states" } else { "hashlife" };
                assert!(
                    report.contains(&format!("\"engine\":\"{engine}\"")),
                    "{report}"
                );
                // The definition's cells, read and written by gol the same way: equal files
                // or the cells differ.
                run_to(&rules, &expected, 0, &again, &[]);
                assert_eq!(
                    std::fs::read_to_string(&ours).unwrap(),
                    std::fs::read_to_string(&again).unwrap(),
                    "{form}, {width}x{height}, {gens} generations, torus {wrap}"
                );
            }
        }
    }
}

/// Random cells of `states` states, mostly empty, as RLE on the plane under `rule`.
fn random_soup(rule: &str, states: u8, side: usize, rng: &mut SplitMix64) -> String {
    let cells: Vec<u8> = (0..side * side)
        .map(|_| match rng.next() % 3 {
            0 => 1 + (rng.next() % (states as u64 - 1)) as u8,
            _ => 0,
        })
        .collect();
    rle(&cells, side, side, rule)
}

#[test]
fn golly_agrees_on_its_own_rules_from_random_soups() {
    let Some(bgolly) = bgolly() else { return };
    if !Path::new(GOLLY_RULES).exists() {
        assert!(
            std::env::var_os("GOL_REQUIRE_GOLLY").is_none(),
            "GOL_REQUIRE_GOLLY is set but {GOLLY_RULES} is missing"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rng = SplitMix64::new(7);
    // Tables of each neighbourhood and symmetry Golly ships, and trees; then von Neumann's,
    // Nobili's and Hutton's rules, which bgolly runs with its JvN algorithm and gol as tables
    // of its own (random soups of them are mostly sensitized cells turning into transmission and
    // confluent states, and the signals those pass).
    for (rule, states, gens) in [
        ("JvN29", 29, 40),
        ("Nobili32", 32, 40),
        ("Hutton32", 32, 40),
        ("WireWorld", 4, 60),
        ("Codd", 8, 40),
        ("Langtons-Loops", 8, 40),
        ("Byl-Loop", 6, 40),
        ("Evoloop", 9, 40),
        ("Chou-Reggia-2", 8, 40),
        ("BriansBrain", 3, 60),
        ("StarWars", 4, 60),
        ("TMGasMargolus_emulated", 9, 50),
        ("LifeHistory", 7, 60),
    ] {
        let start = dir.path().join(format!("{rule}.rle"));
        std::fs::write(&start, random_soup(rule, states, 24, &mut rng)).unwrap();
        let (ours, theirs_mc, theirs) = (
            dir.path().join("ours.rle"),
            dir.path().join("theirs.mc"),
            dir.path().join("theirs.rle"),
        );
        let rules = Path::new(GOLLY_RULES);
        let report = run_to(rules, &start, gens, &ours, &[]);
        assert!(
            !report.contains("\"alive\":0,"),
            "{rule}: the soup died out: {report}"
        );
        let algo = if states >= 29 { "JvN" } else { "RuleLoader" };
        let out = Command::new(&bgolly)
            .args(["-a", algo, "-s", GOLLY_RULES])
            .args(["-m", &gens.to_string(), "-o"])
            .arg(&theirs_mc)
            .arg(&start)
            .output()
            .expect("bgolly runs");
        assert!(out.status.success(), "bgolly failed on {rule}: {out:?}");
        run_to(rules, &theirs_mc, 0, &theirs, &[]);
        assert_eq!(
            std::fs::read_to_string(&ours).unwrap(),
            std::fs::read_to_string(&theirs).unwrap(),
            "gol and Golly differ after {gens} generations of a soup under {rule}"
        );
    }
}

#[test]
fn rules_are_found_where_golly_finds_them_and_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let (rules, patterns) = (dir.path().join("rules"), dir.path().join("patterns"));
    std::fs::create_dir(&rules).unwrap();
    std::fs::create_dir(&patterns).unwrap();
    let glider = rle(&[0, 3, 3, 1, 2, 0], 3, 2, "wires");
    let start = patterns.join("start.rle");
    std::fs::write(&start, &glider).unwrap();
    let input = start.to_str().unwrap();
    // Nowhere yet: one line naming the places looked in.
    let err = error_of(&["run", "--input", input, "--gens", "1"]);
    assert!(
        err.contains("no rule table wires.rule in")
            && err.contains(patterns.to_str().unwrap())
            && err.contains("--rules DIR"),
        "{err}"
    );
    // Beside the pattern, its name's case aside; then a --rules folder first.
    std::fs::write(patterns.join("Wires.rule"), WIRES_TABLE).unwrap();
    let report = stdout_of(&["run", "--input", input, "--gens", "1", "--json"]);
    assert!(report.contains("\"rule\":\"Wires\""), "{report}");
    std::fs::write(
        rules.join("WIRES.rule"),
        "@RULE WIRES\n@TABLE\nn_states:5\n",
    )
    .unwrap();
    let err = error_of(&["--rules", rules.to_str().unwrap(), "run", "--input", input]);
    assert!(
        err.contains("WIRES.rule:3:") && err.contains("names no n_states"),
        "{err}"
    );
    std::fs::write(rules.join("WIRES.rule"), wires_tree()).unwrap();
    let report = stdout_of(&[
        "--rules",
        rules.to_str().unwrap(),
        "run",
        "--input",
        input,
        "--gens",
        "4",
        "--json",
    ]);
    assert!(report.contains("\"alive\":4"), "{report}");
    // An MCell file names Golly's rule on its #GOLLY line; its board is a bounded plane.
    let mcell = patterns.join("start.mcl");
    std::fs::write(
        &mcell,
        "#MCell 4.00\r\n#GAME Rules table\r\n#GOLLY Wires\r\n#BOARD 60x40\r\n#WRAP 0\r\n#L .2C$AB\r\n",
    )
    .unwrap();
    let report = stdout_of(&[
        "run",
        "--input",
        mcell.to_str().unwrap(),
        "--gens",
        "2",
        "--json",
    ]);
    assert!(
        report.contains("\"rule\":\"Wires:P\"") && report.contains("\"width\":60"),
        "{report}"
    );
    // --rule names a table too.
    let report = stdout_of(&[
        "--rules",
        rules.to_str().unwrap(),
        "run",
        "--size",
        "16",
        "--rule",
        "Wires",
        "--gens",
        "3",
        "--json",
    ]);
    assert!(
        report.contains("\"engine\":\"cpu-states\"") && report.contains("\"rule\":\"Wires\""),
        "{report}"
    );
    // Engines and worlds that do not run tables say so.
    let with = |extra: &[&str]| {
        let mut args = vec!["--rules", rules.to_str().unwrap(), "run", "--rule", "Wires"];
        args.extend(extra);
        error_of(&args)
    };
    for (extra, says) in [
        (
            &["--size", "16", "--engine", "cpu-bitsliced"][..],
            "cpu-bitsliced does not run rule tables",
        ),
        (
            &["--input", input, "--engine", "tiles"],
            "tables run on hashlife",
        ),
        (&["--dim", "3", "--size", "8"], "rule tables are 2D rules"),
        (&["--size", "16", "--output", "x.cells"], "holds two states"),
    ] {
        let err = with(extra);
        assert!(err.contains(says), "{extra:?}: {err}");
    }
    let err = error_of(&["--rules", "/no/such/folder", "run", "--size", "8"]);
    assert!(
        err.contains("--rules /no/such/folder: not a folder"),
        "{err}"
    );
    // A table under which an empty neighbourhood comes alive would fill the plane.
    std::fs::write(
        rules.join("Fill.rule"),
        "@RULE Fill\n@TABLE\nn_states:2\nneighborhood:vonNeumann\nsymmetries:none\n0,0,0,0,0,1\n",
    )
    .unwrap();
    std::fs::write(&start, rle(&[1], 1, 1, "Fill")).unwrap();
    let err = error_of(&["--rules", rules.to_str().unwrap(), "run", "--input", input]);
    assert!(err.contains("turn the whole infinite plane on"), "{err}");
}

#[test]
fn wolfram_rules_run_as_golly_runs_them() {
    // Each generation's row is drawn below the last: random soups on tori against bgolly's
    // QuickLife, cell for cell.
    if let Some(bgolly) = bgolly() {
        let tmp = tempfile::tempdir().unwrap();
        for (i, number) in [30u32, 110, 22, 90, 254, 0].into_iter().enumerate() {
            let rule = format!("W{number}");
            let seed = i.to_string();
            let problem: Vec<String> = [
                "--width",
                "61",
                "--height",
                "47",
                "--rule",
                &rule,
                "--density",
                "0.1",
                "--seed",
                &seed,
            ]
            .map(String::from)
            .to_vec();
            golly_agrees(&bgolly, &tmp.path().join(&seed), &problem, 40, "start.rle");
        }
    }
    let report = stdout_of(&[
        "run", "--rule", "w110", "--size", "8", "--gens", "1", "--json",
    ]);
    assert!(report.contains("\"rule\":\"W110\""), "{report}");
    for bad in ["W31", "W256"] {
        let err = error_of(&["run", "--rule", bad, "--size", "8"]);
        assert!(err.contains("the even numbers 0 to 254"), "{err}");
    }
}
