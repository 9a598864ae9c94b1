//! The rule families beyond outer-totalistic Moore rules (isotropic non-totalistic, hexagonal,
//! von Neumann) and bounded planes (`:P`), checked end to end against Golly's `bgolly` on grids
//! of odd sizes, and refused in one line by the engines that cannot run them.

use gol_core::rule::Family;
use gol_core::seed::SplitMix64;
use gol_core::Rule;

use crate::common::{bgolly, bounding_box, error_of, golly_agrees, golly_cells, stdout_of};

/// A random rule of `family` without births on 0 neighbours (which Golly runs by emulation).
fn random_rule(family: Family, rng: &mut SplitMix64) -> Rule {
    loop {
        let rule = Rule::random(family, &mut || rng.next());
        if rule.birth_mask() & 1 == 0 {
            return rule;
        }
    }
}

/// The `gol run` arguments of a `width` × `height` soup of `density` under `rule`.
fn soup(
    width: impl ToString,
    height: impl ToString,
    density: f64,
    seed: impl ToString,
    rule: &str,
    engine: Option<&str>,
) -> Vec<String> {
    let mut args = vec![
        "--width".to_string(),
        width.to_string(),
        "--height".into(),
        height.to_string(),
        "--density".into(),
        density.to_string(),
        "--seed".into(),
        seed.to_string(),
        "--rule".into(),
        rule.into(),
    ];
    if let Some(engine) = engine {
        args.extend(["--engine".into(), engine.into()]);
    }
    args
}

#[test]
fn golly_agrees_on_random_rules_of_every_family() {
    let Some(bgolly) = bgolly() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = SplitMix64::new(24);
    let families = [
        (Family::Isotropic, 40),
        (Family::Hexagonal, 12),
        (Family::VonNeumann, 12),
    ];
    let mut case = 0;
    for (family, count) in families {
        for _ in 0..count {
            let rule = random_rule(family, &mut rng);
            let (width, height) = (5 + rng.next() % 40, 3 + rng.next() % 30);
            let gens = 1 + rng.next() % 40;
            let problem = soup(width, height, 0.4, case, &rule.to_string(), None);
            golly_agrees(
                &bgolly,
                &dir.path().join(case.to_string()),
                &problem,
                gens,
                "start.rle",
            );
            case += 1;
        }
    }
}

#[test]
fn golly_agrees_on_named_rules() {
    let Some(bgolly) = bgolly() else { return };
    let dir = tempfile::tempdir().unwrap();
    for (i, (rule, width, height, gens)) in [
        ("B2-a/S12", 61, 47, 100),
        ("B3/S23-a", 64, 33, 80),
        ("B2e3/S23", 37, 41, 60),
        ("B2ce3aeijnqry4n/S1e2-a3ae4ejqt", 45, 45, 50),
        ("B2/S34H", 50, 31, 90),
        ("B2/S013V", 33, 65, 70),
    ]
    .into_iter()
    .enumerate()
    {
        let engine = ["cpu-bitsliced", "cpu-scalar"][i % 2];
        let problem = soup(width, height, 0.3, i, rule, Some(engine));
        golly_agrees(
            &bgolly,
            &dir.path().join(i.to_string()),
            &problem,
            gens,
            "start.rle",
        );
    }
}

#[test]
fn golly_agrees_on_bounded_planes_of_every_family() {
    let Some(bgolly) = bgolly() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = SplitMix64::new(26);
    for case in 0..32u64 {
        let family = Family::ALL[case as usize % Family::ALL.len()];
        let rule = random_rule(family, &mut rng);
        let (width, height) = (1 + rng.next() % 45, 1 + rng.next() % 33);
        let gens = 1 + rng.next() % 60;
        let engine = ["cpu-bitsliced", "cpu-scalar"][case as usize % 2];
        let problem = soup(
            width,
            height,
            0.45,
            case,
            &format!("{rule}:P"),
            Some(engine),
        );
        golly_agrees(
            &bgolly,
            &dir.path().join(case.to_string()),
            &problem,
            gens,
            "start.rle",
        );
    }
    // Life itself, where the edges keep killing and feeding a soup for long.
    for (case, engine) in ["cpu-bitsliced", "cpu-table"].into_iter().enumerate() {
        let problem = soup(99, 67, 0.35, case, "B3/S23:P", Some(engine));
        golly_agrees(
            &bgolly,
            &dir.path().join(format!("life{case}")),
            &problem,
            300,
            "start.rle.gz",
        );
    }
}

/// A 19×15 soup without a position, on Golly's 20×16 bounded plane: where a pattern goes
/// decides what the edges do to it, and gol places it as Golly does (its cell (9, 7) on the
/// grid's (10, 8)). The placement one cell up and left, ⌊(W - w)/2⌋, gives other cells.
#[test]
fn golly_places_a_pattern_on_a_bounded_plane_as_gol_does() {
    let Some(bgolly) = bgolly() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = SplitMix64::new(19);
    let rows: Vec<String> = (0..15)
        .map(|_| {
            (0..19)
                .map(|_| if rng.next() % 5 < 2 { 'o' } else { 'b' })
                .collect()
        })
        .collect();
    let body = rows.join("$") + "!";
    let file = |name: &str, pos: &str| {
        let path = dir.path().join(name);
        let text = format!("{pos}x = 19, y = 15, rule = B3/S23:P20,16\n{body}\n");
        std::fs::write(&path, text).unwrap();
        path
    };
    let centred = file("centred.rle", "");
    let other = file("other.rle", "#CXRLE Pos=-10,-8\n");
    let ours = |start: &std::path::Path, gens: u64| {
        let out = dir.path().join("ours.cells");
        stdout_of(&[
            "run",
            "--input",
            start.to_str().unwrap(),
            "--gens",
            &gens.to_string(),
            "--output",
            out.to_str().unwrap(),
        ]);
        bounding_box(&std::fs::read_to_string(&out).unwrap())
    };
    let mut differs = false;
    for gens in [1u64, 2, 5, 20] {
        let theirs = dir.path().join("theirs.rle");
        let status = std::process::Command::new(&bgolly)
            .args(["-a", "QuickLife", "-q", "-q", "-m", &gens.to_string(), "-o"])
            .arg(&theirs)
            .arg(&centred)
            .status()
            .unwrap();
        assert!(status.success());
        let golly_cells = golly_cells(&theirs, &dir.path().join("again.cells"));
        assert_eq!(ours(&centred, gens), golly_cells, "generation {gens}");
        differs |= ours(&other, gens) != golly_cells;
    }
    assert!(differs, "the other placement should give other cells");
}

#[test]
fn engines_that_cannot_run_a_family_say_which_can() {
    let err = error_of(&[
        "run",
        "--size",
        "32",
        "--rule",
        "B2-a/S12",
        "--engine",
        "cpu-table",
    ]);
    assert!(
        err.contains("cpu-table runs only outer-totalistic Moore rules")
            && err.contains("cpu-scalar, cpu-bitsliced, cuda-bitsliced"),
        "{err}"
    );
    let err = error_of(&["run", "--dim", "3", "--size", "8", "--rule", "B2/S34H"]);
    assert!(err.contains("2D rules"), "{err}");
    let err = error_of(&["run", "--size", "8", "--rule", "B2x/S23"]);
    assert!(err.contains("letter 'x' does not go with count 2"), "{err}");
    // The same run on the oracle and the fast engine, in the report's own words.
    let report = |engine: &str| {
        stdout_of(&[
            "run", "--size", "100", "--gens", "50", "--rule", "b2-a/s12", "--engine", engine,
        ])
    };
    let (scalar, fast) = (report("cpu-scalar"), report("cpu-bitsliced"));
    let alive = |r: &str| {
        r.lines()
            .find(|l| l.starts_with("Total alive"))
            .map(str::to_string)
    };
    assert_eq!(alive(&scalar), alive(&fast));
    assert!(fast.contains("rule B2-a/S12"), "{fast}");
}

#[test]
fn golly_s_other_bounded_grids_run_as_golly_runs_them() {
    // Shifted tori, Klein bottles (with and without a shift), the cross-surface and the
    // sphere, under Life and a rule that spreads, against bgolly's QuickLife cell for cell, on
    // cpu-bitsliced (a ring of ghost cells) and cpu-scalar (the oracle's ghost cells) in turn.
    if let Some(bgolly) = crate::common::bgolly() {
        let tmp = tempfile::tempdir().unwrap();
        let grids = [
            ("T30+7,20", 30, 20),
            ("T30,20-3", 30, 20),
            ("K30*,20", 30, 20),
            ("K30,20*+1", 30, 20),
            ("K16*+1,21", 16, 21),
            ("C25,18", 25, 18),
            ("S23", 23, 23),
        ];
        for (i, (suffix, w, h)) in grids.iter().enumerate() {
            for rule in ["B3/S23", "B36/S23"] {
                let seed = i.to_string();
                let (w, h) = (w.to_string(), h.to_string());
                let rule = format!("{rule}:{suffix}");
                let engine = ["cpu-bitsliced", "cpu-scalar"][(i + rule.len()) % 2];
                let problem: Vec<String> = [
                    "--width",
                    &w,
                    "--height",
                    &h,
                    "--rule",
                    &rule,
                    "--density",
                    "0.35",
                    "--seed",
                    &seed,
                    "--engine",
                    engine,
                ]
                .map(String::from)
                .to_vec();
                let dir = tmp.path().join(format!("{i}-{}", rule.len()));
                crate::common::golly_agrees(&bgolly, &dir, &problem, 60, "start.rle");
            }
        }
    }
    // Engines without these grids refuse in one line; a size other than the grid's too.
    let err = crate::common::error_of(&[
        "run",
        "--rule",
        "B3/S23:K30*,20",
        "--width",
        "30",
        "--height",
        "20",
        "--engine",
        "cpu-table",
    ]);
    assert!(err.contains("does not run a Klein bottle"), "{err}");
    let err = crate::common::error_of(&[
        "run",
        "--rule",
        "23/3/4:C30,20",
        "--width",
        "30",
        "--height",
        "20",
        "--engine",
        "cpu-bitsliced",
    ]);
    assert!(err.contains("does not run a cross-surface"), "{err}");
    let err = crate::common::error_of(&["run", "--rule", "B3/S23:S20", "--size", "30"]);
    assert!(err.contains("the sphere is 20x20, the grid 30x30"), "{err}");
    let err = crate::common::error_of(&["run", "--rule", "B3/S23:K31*+1,20", "--size", "30"]);
    assert!(err.contains("only where their side is even"), "{err}");
}
