//! Larger than Life rules end to end: random rules of every neighbourhood against Golly's
//! `bgolly -a "Larger than Life"`, on the infinite plane (the growing window) and on tori
//! (`cpu-scalar`), and the refusals of engines and worlds that do not run them.

use gol_core::seed::SplitMix64;

use crate::common::{bgolly, error_of, golly_run, same_cells_anywhere, stdout_of};

/// bgolly's algorithm for these rules (it writes RLE without a position, and no macrocell).
const LTL: &str = "Larger than Life";

/// A random Larger than Life rule in Golly's notation: ranges 1 to 7, each neighbourhood,
/// 2 to 5 states, births from at least one live cell (no B0).
fn random_rule(rng: &mut SplitMix64) -> String {
    let range = 1 + rng.next() % 7;
    let (shape, size) = match rng.next() % 3 {
        0 => ("M", (2 * range + 1).pow(2)),
        1 => ("N", 2 * range * (range + 1) + 1),
        _ => (
            "C",
            (0..=range)
                .map(|dy| {
                    let half = ((range * range + range - dy * dy) as f64).sqrt() as u64;
                    (2 * half + 1) * if dy == 0 { 1 } else { 2 }
                })
                .sum(),
        ),
    };
    let states = [0, 3, 4, 5][(rng.next() % 4) as usize];
    let middle = rng.next() % 2;
    // Thresholds round the share of live cells a 40% soup has keep soups alive a while.
    let share = |rng: &mut SplitMix64, from: u64, spread: u64| {
        (size * (from + rng.next() % spread) / 100).max(1)
    };
    let s_low = share(rng, 20, 15);
    let s = (s_low, (s_low + share(rng, 10, 20)).min(size));
    let b_low = share(rng, 25, 10);
    let b = (b_low, (b_low + share(rng, 5, 10)).min(size));
    format!(
        "R{range},C{states},M{middle},S{}..{},B{}..{},N{shape}",
        s.0, s.1, b.0, b.1
    )
}

/// An RLE of a random `side` × `side` soup under `rule`.
fn soup(rule: &str, side: usize, rng: &mut SplitMix64) -> String {
    let mut text = format!("x = {side}, y = {side}, rule = {rule}\n");
    for _ in 0..side {
        for _ in 0..side {
            text.push(if rng.next() % 5 < 2 { 'o' } else { 'b' });
        }
        text.push_str("$\n");
    }
    text.push_str("!\n");
    text
}

/// `alive` of a JSON report.
fn alive(report: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(report).expect("JSON");
    v["alive"].to_string()
}

#[test]
fn golly_agrees_on_random_rules_on_the_plane_and_on_tori() {
    let Some(bgolly) = bgolly() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let mut rng = SplitMix64::new(2026);
    let mut living = 0;
    for case in 0..12 {
        let rule = random_rule(&mut rng);
        let gens = 30 + rng.next() % 40;
        // The infinite plane: the same cells where bgolly has them.
        std::fs::write(path("plane.rle"), soup(&rule, 20, &mut rng)).unwrap();
        let ours = stdout_of(&[
            "run",
            "--input",
            path("plane.rle").to_str().unwrap(),
            "--gens",
            &gens.to_string(),
            "--json",
            "--output",
            path("ours.rle").to_str().unwrap(),
        ]);
        assert!(ours.contains("\"engine\":\"window\""), "{ours}");
        let population = golly_run(&bgolly, LTL, &path("plane.rle"), gens, &path("theirs.rle"));
        assert_eq!(
            alive(&ours),
            population,
            "case {case}: {rule}, {gens} generations"
        );
        living += (population != "0") as usize;
        assert!(
            same_cells_anywhere(&path("ours.rle"), &path("theirs.rle"), dir.path()),
            "case {case}: the cells of {rule} after {gens} generations differ from bgolly's"
        );
        // A torus a little wider than the neighbourhood reaches: the populations.
        let side = 2 * 7 + 3 + (rng.next() % 20) as usize;
        let torus = format!("{rule}:T{side},{}", side + 3);
        std::fs::write(path("torus.rle"), soup(&torus, 16, &mut rng)).unwrap();
        let ours = stdout_of(&[
            "run",
            "--input",
            path("torus.rle").to_str().unwrap(),
            "--gens",
            &gens.to_string(),
            "--json",
        ]);
        assert!(ours.contains("\"engine\":\"cpu-states\""), "{ours}");
        let population = golly_run(
            &bgolly,
            LTL,
            &path("torus.rle"),
            gens,
            &path("torus-out.rle"),
        );
        assert_eq!(
            alive(&ours),
            population,
            "case {case}: {torus}, {gens} generations"
        );
    }
    assert!(
        living >= 6,
        "only {living} of 12 soups on the plane lived: a weak check"
    );
}

#[test]
fn engines_and_worlds_that_do_not_run_them_say_so() {
    let bosco = "R5,C0,M1,S34..58,B34..45,NM";
    for (args, says) in [
        (
            &["--size", "32", "--engine", "cpu-bitsliced"][..],
            "cpu-bitsliced does not run Larger than Life rules",
        ),
        (
            &["--infinite", "--size", "16", "--engine", "hashlife"],
            "hashlife does not run Larger than Life rules on the infinite plane; window does",
        ),
        (
            &["--dim", "3", "--size", "16"],
            "Larger than Life rules are 2D rules",
        ),
    ] {
        let mut all = vec!["run", "--rule", bosco];
        all.extend(args);
        let err = error_of(&all);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    for (rule, says) in [
        ("R501,C0,M1,S1..2,B1..2,NM", "range is 1 to 500"),
        ("R2,C0,M1,S1..30,B1..2,NM", "beyond the 25 cells"),
        ("R2,C0,M1,S1..3,B1..2,NX", "NM, NN or NC"),
    ] {
        let err = error_of(&["run", "--rule", rule, "--size", "16"]);
        assert!(err.contains(says), "{rule}: {err}");
    }
    let b0 = "R2,C0,M1,S1..3,B0..2,NM";
    let err = error_of(&["run", "--rule", b0, "--infinite", "--size", "8"]);
    assert!(err.contains("turn the whole infinite plane on"), "{err}");
    // On a torus B0 is fine, and the rule reads back as written.
    let report = stdout_of(&["run", "--rule", b0, "--size", "8", "--gens", "3", "--json"]);
    assert!(report.contains(&format!("\"rule\":\"{b0}\"")), "{report}");
    // Kellie Evans' notation is Golly's too.
    let report = stdout_of(&[
        "run",
        "--rule",
        "1,3,3,3,4",
        "--size",
        "8",
        "--gens",
        "1",
        "--json",
    ]);
    assert!(
        report.contains("\"rule\":\"R1,C0,M1,S3..4,B3..3,NM\""),
        "{report}"
    );
}
