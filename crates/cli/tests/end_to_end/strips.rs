//! What the window engine runs besides Larger than Life, end to end against Golly's `bgolly`
//! (QuickLife): Golly's tubes and strips (`:T0,20`, `:T30,0`, `:P0,20`, `:P30,0`), and two-state
//! B0 rules on the infinite plane, which Golly emulates by keeping the cells complemented while
//! the background is alive. Both the population and the cells, in place, must be Golly's.

use std::path::Path;

use gol_core::rule::Family;
use gol_core::seed::SplitMix64;
use gol_core::Rule;

use crate::common::{bgolly, error_of, golly_run, rewritten, same_cells_anywhere, stdout_of};

/// An RLE of a random `width` × `height` soup at 40% under `rule`, its top-left cell at Golly's
/// (x, y).
fn soup(
    rule: &str,
    (x, y): (i64, i64),
    (width, height): (usize, usize),
    rng: &mut SplitMix64,
) -> String {
    let mut text = format!("#CXRLE Pos={x},{y}\nx = {width}, y = {height}, rule = {rule}\n");
    for _ in 0..height {
        for _ in 0..width {
            text.push(if rng.next() % 5 < 2 { 'o' } else { 'b' });
        }
        text.push_str("$\n");
    }
    text.push_str("!\n");
    text
}

/// `file` read by gol where it lies and written again as RLE (`#CXRLE Pos=` included).
fn in_place(file: &Path, again: &Path) -> String {
    let text = rewritten(file, again);
    // The stamp aside: gol's own file carries its generation, bgolly's was read back at 0.
    text.lines()
        .map(|l| match l.split_once(" Gen=") {
            Some((head, _)) => head.to_string(),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `start` (under `rule`) `gens` generations in gol and bgolly: the same population, and
/// the same cells in the same place; gol's report as JSON. bgolly's HashLife writes a macrocell,
/// which keeps the cells' place; B0 rules without the top S count it does not run, and
/// QuickLife writes RLE with no position: there the cells are compared wherever they lie.
fn agree(bgolly: &Path, dir: &Path, rule: &Rule, start: &str, gens: u64, what: &str) -> String {
    let path = |name: &str| dir.join(name);
    std::fs::write(path("start.rle"), start).unwrap();
    let ours = stdout_of(&[
        "run",
        "--input",
        path("start.rle").to_str().unwrap(),
        "--gens",
        &gens.to_string(),
        "--json",
        "--output",
        path("ours.rle").to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&ours).expect("JSON");
    let hashed = !rule.births_on_nothing() || rule.survives_in_everything();
    let (algo, theirs) = match hashed {
        true => ("HashLife", path("theirs.mc")),
        false => ("QuickLife", path("theirs.rle")),
    };
    let population = golly_run(bgolly, algo, &path("start.rle"), gens, &theirs);
    assert_eq!(
        v["alive"].to_string(),
        population,
        "{what}, {gens} generations"
    );
    let same = match hashed {
        true => {
            in_place(&path("ours.rle"), &path("ours-again.rle"))
                == in_place(&theirs, &path("theirs-again.rle"))
        }
        false => same_cells_anywhere(&path("ours.rle"), &theirs, dir),
    };
    assert!(
        same,
        "{what}: the cells after {gens} generations differ from bgolly's"
    );
    ours
}

#[test]
fn golly_agrees_on_tubes_and_strips() {
    let Some(bgolly) = bgolly() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = SplitMix64::new(68);
    for case in 0..16 {
        let side = 1 + (rng.next() % 40) as usize;
        let wrap = case % 2 == 0;
        let rows = case % 4 < 2;
        let suffix = match (wrap, rows) {
            (true, true) => format!("T0,{side}"),
            (true, false) => format!("T{side},0"),
            (false, true) => format!("P0,{side}"),
            (false, false) => format!("P{side},0"),
        };
        let life_like = Rule::random(Family::OuterTotalistic, &mut || rng.next());
        // Life, or a rule with births from 2 or 3 cells and no B0.
        let rule = match rng.next() % 2 {
            0 => Rule::LIFE,
            _ => Rule::from_masks(
                (life_like.birth_mask() & !0b11) | 0b1000,
                life_like.survive_mask(),
            )
            .unwrap(),
        };
        // The soup spans the bounded side (a tube's wraps) and a stretch of the other.
        let first = -((side / 2) as i64);
        let other = 3 + (rng.next() % 20) as usize;
        let (at, size) = if rows {
            ((-7, first), (other, side))
        } else {
            ((first, 5), (side, other))
        };
        let start = soup(&format!("{rule}:{suffix}"), at, size, &mut rng);
        let gens = 1 + rng.next() % 120;
        let what = format!("case {case}: {rule}:{suffix}");
        let ours = agree(&bgolly, dir.path(), &rule, &start, gens, &what);
        assert!(ours.contains("\"engine\":\"window\""), "{what}: {ours}");
    }
}

#[test]
fn golly_agrees_on_b0_rules_on_the_plane() {
    let Some(bgolly) = bgolly() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = SplitMix64::new(1680);
    let mut top = [0usize; 2];
    for case in 0..24 {
        let family = Family::ALL[case % 4];
        let mut rule = Rule::random(family, &mut || rng.next());
        if !rule.births_on_nothing() {
            // B0 added: every random rule of the family with it.
            let text = rule.to_string().replacen('B', "B0", 1);
            rule = Rule::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        }
        assert!(rule.births_on_nothing(), "{rule}");
        top[rule.survives_in_everything() as usize] += 1;
        let side = 1 + (rng.next() % 16) as usize;
        let start = soup(&rule.to_string(), (-3, 2), (side, side + 1), &mut rng);
        for gens in [1, 2, 1 + rng.next() % 60] {
            let what = format!("case {case}: {rule}");
            let ours = agree(&bgolly, dir.path(), &rule, &start, gens, &what);
            assert!(ours.contains("\"engine\":\"window\""), "{what}: {ours}");
        }
    }
    assert!(top[0] > 0 && top[1] > 0, "both kinds of B0 rule: {top:?}");
}

#[test]
fn what_the_window_does_not_run_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let outside = write(
        "outside.rle",
        "#CXRLE Pos=0,3\nx = 1, y = 1, rule = B3/S23:T0,6\no!\n",
    );
    let strip_b0 = write("b0.rle", "x = 1, y = 1, rule = B0/S23:P0,6\no!\n");
    let generations_b0 = write("gen.rle", "x = 1, y = 1, rule = 23/0/3\no!\n");
    let tube = write("tube.rle", "x = 1, y = 1, rule = B3/S23:T0,6\no!\n");
    for (args, says) in [
        (
            vec!["--input", &outside],
            "outside the tube's 6 cells (-3 .. 2)",
        ),
        (vec!["--input", &strip_b0], "B0 rules on a strip"),
        (
            vec!["--input", &generations_b0],
            "B0 rules turn the whole infinite plane on",
        ),
        (
            vec!["--input", &tube, "--engine", "hashlife"],
            "hashlife does not run tubes",
        ),
        (
            vec!["--input", &tube, "--engine", "cpu-bitsliced"],
            "runs bounded grids, not the infinite plane",
        ),
    ] {
        let mut all = vec!["run", "--gens", "4"];
        all.extend(args.iter().copied());
        let e = error_of(&all);
        assert!(e.contains(says), "{args:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
    }
    // A size makes a tube a torus, a strip a bounded plane.
    let report = stdout_of(&["run", "--input", &tube, "--size", "8", "--gens", "1"]);
    assert!(report.contains("torus"), "{report}");
}
