//! Golly's own pattern collection (Debian's `golly`, `/usr/share/golly/Patterns`) against
//! `bgolly`: every file of the folders whose rules `gol` runs, run with no options (on the
//! infinite plane unless the file names a bounded grid), gives bgolly's population, bounding
//! box and cells. So does every pattern file of the collection's zip archives, read by `gol`
//! from the archive (`ARCHIVE.zip:MEMBER`) and by bgolly from a copy taken out of it, with
//! the archive's rule tables beside Golly's.
//!
//! Long: CI runs it (`.ci/run`: `cargo test -p gol-cli --test end_to_end -- --ignored
//! corpus::`); the README's quick test command leaves it out. `GOL_CORPUS_ONLY=TEXT` checks only the files
//! whose names hold TEXT.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{bgolly, gol_path};

/// The collection.
const PATTERNS: &str = "/usr/share/golly/Patterns";

/// Golly's rules, which bgolly is pointed at (RuleLoader's rule tables).
const RULES: &str = "/usr/share/golly/Rules/";

/// The folders whose rules and formats this test covers.
const FOLDERS: [&str; 13] = [
    "Life",
    "Life-Like",
    "Non-Totalistic",
    "Generations",
    "HashLife",
    "Larger-than-Life",
    "Loops",
    "Margolus",
    "Other-Rules",
    "Patersons-Worms",
    "Self-Rep",
    "Turmites",
    "WireWorld",
];

/// HashLife files checked below 2^20 generations, with the count they are checked at: one
/// bgolly cannot take to 2^20 within a few minutes, and `wolfram22.mc`, which runs to 2^20 in
/// a blink on both (4,649,045,870 cells, equal) but whose comparison would write both worlds
/// as RLE: a Sierpinski triangle a million rows tall, 3^20 runs, gigabytes of text. It is
/// compared at 2^12 (3^12 runs).
const SLOW: [(&str, &str); 2] = [
    ("HashLife/triple-Snark-wick-extruder.rle.gz", "65536"),
    ("HashLife/wolfram22.mc", "4096"),
];

/// One pattern to check: by its name in the collection (an archive's member after a colon),
/// `gol`'s `--input`, bgolly's file and the rules folder bgolly is pointed at.
struct Case {
    name: String,
    input: String,
    file: PathBuf,
    rules: PathBuf,
}

/// Every file of the folders, scripts aside, relative to [`PATTERNS`]; an archive's pattern
/// files taken out into `tmp` for bgolly (each archive's with its rule tables and links to
/// Golly's in a folder of its own).
fn corpus(tmp: &Path) -> Vec<Case> {
    let mut cases = Vec::new();
    for name in files() {
        let file = Path::new(PATTERNS).join(&name);
        if !name.ends_with(".zip") {
            cases.push(Case {
                name,
                input: file.to_str().unwrap().to_string(),
                file,
                rules: PathBuf::from(RULES),
            });
            continue;
        }
        let out = tmp.join(format!("archive{}", cases.len()));
        let mut zip = zip::ZipArchive::new(std::fs::File::open(&file).unwrap()).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        for entry in std::fs::read_dir(RULES).unwrap() {
            let rule = entry.unwrap().path();
            std::os::unix::fs::symlink(&rule, out.join(rule.file_name().unwrap())).unwrap();
        }
        for i in 0..zip.len() {
            let mut entry = zip.by_index(i).unwrap();
            let member = entry.name().unwrap().into_owned();
            let base = member.rsplit('/').next().unwrap().to_string();
            let pattern = [".rle", ".mc", ".cells", ".lif", ".mcl"]
                .iter()
                .any(|e| base.ends_with(e));
            if member.starts_with("__MACOSX/") || !(pattern || base.ends_with(".rule")) {
                continue;
            }
            let to = out.join(if pattern { format!("{i}-{base}") } else { base });
            let _ = std::fs::remove_file(&to);
            std::io::copy(&mut entry, &mut std::fs::File::create(&to).unwrap()).unwrap();
            if pattern {
                cases.push(Case {
                    name: format!("{name}:{member}"),
                    input: format!("{}:{member}", file.display()),
                    file: to,
                    rules: out.clone(),
                });
            }
        }
    }
    cases
}

/// Every file of the folders, scripts aside, relative to [`PATTERNS`].
fn files() -> Vec<String> {
    let mut files = Vec::new();
    let mut stack: Vec<PathBuf> = FOLDERS
        .iter()
        .map(|f| Path::new(PATTERNS).join(f))
        .collect();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("the collection's folders") {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if !matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("py" | "lua" | "pl")
            ) {
                let name = path.strip_prefix(PATTERNS).unwrap();
                files.push(name.to_string_lossy().into_owned());
            }
        }
    }
    files.sort();
    files
}

/// What `gol run --json` said, as JSON; `Err` with its stderr where it failed.
fn gol_json(args: &[&str]) -> Result<serde_json::Value, String> {
    let out = Command::new(gol_path()).args(args).output().unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(serde_json::from_slice(&out.stdout).expect("one JSON object"))
}

/// The exact number `key` of a report, as text.
fn number(report: &serde_json::Value, key: &str) -> String {
    report[key].to_string()
}

/// bgolly's population after `gens` generations of `file` with algorithm `algo`, writing its
/// final state to `out` (a macrocell file, which gives the position too).
fn golly(bgolly: &Path, algo: &str, case: &Case, gens: &str, out: &Path) -> String {
    let file = &case.file;
    let mut rules = case.rules.clone().into_os_string();
    rules.push("/");
    let output = Command::new(bgolly)
        .args(["-a", algo, "-s"])
        .arg(rules)
        .args(["-m", gens, "-o"])
        .arg(out)
        .arg(file)
        .output()
        .expect("bgolly runs");
    assert!(
        output.status.success(),
        "bgolly {algo} {}: {output:?}",
        file.display()
    );
    let text = String::from_utf8_lossy(&output.stdout);
    let counted = |line: &&str| {
        line.split_once(": ").is_some_and(|(a, b)| {
            [a, b]
                .iter()
                .all(|n| n.bytes().all(|c| c.is_ascii_digit() || c == b','))
        })
    };
    let last = text
        .lines()
        .rev()
        .find(counted)
        .expect("bgolly prints populations");
    let (at, population) = last.split_once(": ").expect("generation: population");
    assert_eq!(
        at.replace(',', ""),
        gens,
        "bgolly stopped early on {}",
        file.display()
    );
    population.replace(',', "")
}

/// The `#` lines that open gzipped RLE file `path` (none where gol wrote nothing).
fn comments(path: &Path) -> Vec<String> {
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    std::io::BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .map_while(Result::ok)
        .take_while(|line| line.starts_with('#'))
        .collect()
}

/// Checks one file at `gens` generations against bgolly in folder `dir`; returns what
/// differed.
fn check(bgolly: &Path, case: &Case, gens: &str, dir: &Path) -> Result<(), String> {
    let path = case.input.as_str();
    // The worlds are written gzipped: some are large (`HashLife/mosquito5.mc` at 2^20 is
    // 953 MB of RLE, 8.7 MB gzipped), and two threads write two each.
    let ours_rle = dir.join("ours.rle.gz");
    let ours = gol_json(&[
        "run",
        "--input",
        path,
        "--gens",
        gens,
        "--json",
        "--output",
        ours_rle.to_str().unwrap(),
    ])?;
    // HashLife for two-state rules (bgolly's QuickLife cannot write some rules' macrocells),
    // RuleLoader for rule tables (named by a file of Golly's rules), JvN and Larger than Life
    // for theirs.
    let rule = ours["rule"].as_str().unwrap_or("");
    let table = rule.split(':').next().is_some_and(|name| {
        std::fs::read_dir(&case.rules).is_ok_and(|entries| {
            entries.filter_map(|e| e.ok()).any(|e| {
                e.file_name().to_string_lossy().to_ascii_lowercase()
                    == format!("{name}.rule").to_ascii_lowercase()
            })
        })
    });
    let larger = rule.starts_with('R') && rule.contains("..");
    let jvn = ["JvN29", "Nobili32", "Hutton32"].contains(&rule.split(':').next().unwrap_or(""));
    // bgolly's HashLife does not run B0 rules without the top S count; QuickLife does, and
    // writes RLE without a position.
    let alternating = gol_core::Rule::parse(rule)
        .is_ok_and(|r| r.births_on_nothing() && !r.survives_in_everything());
    let algo = match (table, larger, rule.matches('/').count()) {
        _ if jvn => "JvN",
        _ if alternating => "QuickLife",
        (true, _, _) => "RuleLoader",
        (_, true, _) => "Larger than Life",
        (_, _, 2) => "Generations",
        _ => "HashLife",
    };
    // bgolly's Larger than Life and QuickLife write RLE without a position, and no macrocell.
    let anywhere = larger || alternating;
    let theirs_mc = dir.join(if anywhere {
        "theirs-ltl.rle"
    } else {
        "theirs.mc"
    });
    // bgolly runs to a generation, not for a count: the file's own generation (a macrocell's
    // `#G`, as in `Self-Rep/JvN/sphinx-midpoint.mc.gz`) plus `gens`, which ours records.
    let until = comments(&ours_rle)
        .iter()
        .find_map(|line| line.strip_prefix("#CXRLE"))
        .and_then(|line| line.split_whitespace().find_map(|w| w.strip_prefix("Gen=")))
        .unwrap_or(gens)
        .to_string();
    let population = golly(bgolly, algo, case, &until, &theirs_mc);
    if number(&ours, "alive") != population {
        return Err(format!(
            "population {} against bgolly's {population}",
            number(&ours, "alive")
        ));
    }
    if ours.get("universe").is_none() {
        // A bounded grid: populations only (Golly's macrocell keeps the grid's own placing).
        return Ok(());
    }
    if anywhere {
        return match crate::common::same_cells_anywhere(&ours_rle, &theirs_mc, dir) {
            true => Ok(()),
            false => Err("the cells differ from bgolly's".into()),
        };
    }
    // bgolly's state read back by gol and written as RLE: the same bytes as ours, position
    // and generation included, or the cells differ.
    let theirs_rle = dir.join("theirs.rle.gz");
    let theirs = gol_json(&[
        "run",
        "--rules",
        case.rules.to_str().unwrap(),
        "--input",
        theirs_mc.to_str().unwrap(),
        "--gens",
        "0",
        "--json",
        "--output",
        theirs_rle.to_str().unwrap(),
    ])?;
    if ours["bounding_box"] != theirs["bounding_box"] {
        return Err(format!(
            "bounding box {} against bgolly's {}",
            ours["bounding_box"], theirs["bounding_box"]
        ));
    }
    // One writer compresses equal text to equal bytes.
    let (a, b) = (
        std::fs::read(&ours_rle).unwrap(),
        std::fs::read(&theirs_rle).unwrap(),
    );
    if a != b {
        return Err("the cells differ from bgolly's".into());
    }
    Ok(())
}

#[test]
#[ignore = "long: CI runs it with --ignored"]
fn golly_collection_matches_bgolly() {
    let Some(bgolly) = bgolly() else { return };
    if !Path::new(PATTERNS).exists() {
        assert!(
            std::env::var_os("GOL_REQUIRE_GOLLY").is_none(),
            "GOL_REQUIRE_GOLLY is set but {PATTERNS} is missing"
        );
        eprintln!("notice: {PATTERNS} not found; skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut files = corpus(tmp.path());
    assert!(
        files.len() > 200,
        "only {} files in the collection",
        files.len()
    );
    // GOL_CORPUS_ONLY=TEXT checks only the files whose names hold TEXT (a rerun of a few).
    if let Some(only) = std::env::var_os("GOL_CORPUS_ONLY") {
        files.retain(|case| case.name.contains(only.to_string_lossy().as_ref()));
    }
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let failures = std::sync::Mutex::new(Vec::new());
    let checked = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (files, failures, bgolly, tmp) = (&files, &failures, &bgolly, tmp.path());
            let checked = &checked;
            s.spawn(move || {
                let dir = tmp.join(t.to_string());
                std::fs::create_dir_all(&dir).unwrap();
                for case in files.iter().skip(t).step_by(threads) {
                    let name = &case.name;
                    let counts: Vec<&str> = if name.starts_with("HashLife/") {
                        match SLOW.iter().find(|(file, _)| file == name) {
                            Some((_, gens)) => vec!["1000", gens],
                            None => vec!["1000", "1048576"],
                        }
                    } else {
                        vec!["100", "1000"]
                    };
                    for gens in counts {
                        if let Err(e) = check(bgolly, case, gens, &dir) {
                            failures
                                .lock()
                                .unwrap()
                                .push(format!("{name} at {gens}: {e}"));
                        }
                    }
                    checked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    eprintln!(
        "{} files checked against bgolly, {} failures",
        checked.into_inner(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
