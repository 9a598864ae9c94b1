//! What the end-to-end tests share: running the `gol` binary.
#![allow(dead_code)] // mpi.rs (a test binary of its own) uses only a share of these

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `gol` binary: `$GOL_BIN`, else the one cargo built, else `../bin/gol` beside this test
/// binary (the layout of the bundle carried to the GPU machine).
pub fn gol_path() -> PathBuf {
    if let Some(path) = std::env::var_os("GOL_BIN") {
        return PathBuf::from(path);
    }
    let built = PathBuf::from(env!("CARGO_BIN_EXE_gol"));
    if built.exists() {
        return built;
    }
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("bundle layout")
        .join("bin/gol")
}

pub fn gol(args: &[&str]) -> Output {
    Command::new(gol_path())
        .args(args)
        .output()
        .expect("gol runs")
}

pub fn stdout_of(args: &[&str]) -> String {
    let out = gol(args);
    assert!(
        out.status.success(),
        "gol {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Runs gol expecting failure: one line on stderr, no panic, exit code non-zero.
pub fn error_of(args: &[&str]) -> String {
    let out = gol(args);
    let stderr = String::from_utf8(out.stderr).expect("utf-8 stderr");
    assert!(!out.status.success(), "gol {args:?} should fail");
    assert!(
        !stderr.contains("panicked"),
        "gol {args:?} panicked: {stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "gol {args:?}: {stderr}");
    stderr
}

/// Golly's bgolly, the independent check. Skipped with a notice where it is not installed,
/// unless `GOL_REQUIRE_GOLLY=1` (set by CI, which installs it).
pub fn bgolly() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("bgolly"))
            .find(|p| p.exists())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("GOL_REQUIRE_GOLLY").is_none(),
            "GOL_REQUIRE_GOLLY is set but bgolly is not on PATH"
        );
        eprintln!(
            "notice: bgolly (Debian package golly) not found; skipping the Golly cross-check"
        );
    }
    found
}

/// The rows of a `.cells` text cropped to the bounding box of its live cells.
pub fn bounding_box(cells: &str) -> Vec<String> {
    let rows: Vec<&str> = cells.lines().filter(|l| !l.starts_with('!')).collect();
    let live_rows: Vec<usize> = (0..rows.len()).filter(|&y| rows[y].contains('O')).collect();
    let (Some(&top), Some(&bottom)) = (live_rows.first(), live_rows.last()) else {
        return Vec::new();
    };
    let left = rows.iter().filter_map(|r| r.find('O')).min().unwrap();
    let right = rows.iter().filter_map(|r| r.rfind('O')).max().unwrap();
    rows[top..=bottom]
        .iter()
        .map(|r| {
            format!(
                "{:.<width$}",
                r.get(left..).unwrap_or(""),
                width = right - left + 1
            )[..right - left + 1]
                .to_string()
        })
        .collect()
}

/// Runs the problem `problem` (`gol run` arguments naming a torus and its start) for `gens`
/// generations in gol and in Golly's `bgolly` (QuickLife), in folder `dir`, and fails unless
/// both end with the same cells. gol writes the start as `start` (an RLE name, `.gz` for
/// compressed), with the rule and torus in Golly's notation. Golly writes the bounding box of
/// the live cells, without its position: it is compared with the bounding box of ours (Golly's
/// torus maps onto ours by a fixed offset).
pub fn golly_agrees(bgolly: &Path, dir: &Path, problem: &[String], gens: u64, start: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let (start, theirs) = (dir.join(start), dir.join("theirs.rle"));
    let (ours, again) = (dir.join("ours.cells"), dir.join("again.cells"));
    let run = |extra: &[&str]| {
        let mut args: Vec<&str> = vec!["run"];
        args.extend(problem.iter().map(String::as_str));
        args.extend(extra);
        stdout_of(&args)
    };
    run(&["--gens", "0", "--output", start.to_str().unwrap()]);
    let status = Command::new(bgolly)
        .args(["-a", "QuickLife", "-q", "-q", "-m", &gens.to_string(), "-o"])
        .arg(&theirs)
        .arg(&start)
        .status()
        .expect("bgolly runs");
    assert!(status.success(), "bgolly failed on {problem:?}");
    run(&[
        "--gens",
        &gens.to_string(),
        "--output",
        ours.to_str().unwrap(),
    ]);
    let ours = bounding_box(&std::fs::read_to_string(&ours).unwrap());
    let theirs = golly_cells(&theirs, &again);
    assert_eq!(
        ours, theirs,
        "gol and Golly differ after {gens} generations of {problem:?}"
    );
}

/// The cells of the RLE that Golly wrote at `theirs` (its live cells' bounding box, without a
/// position), cropped to their bounding box as [`bounding_box`] crops ours: read by gol onto a
/// grid of that box and written to `again`.
pub fn golly_cells(theirs: &Path, again: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(theirs).unwrap();
    let header = text.lines().find(|l| l.starts_with('x')).unwrap();
    let size = |key: &str| -> String {
        header
            .split(',')
            .find_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
            .unwrap()
    };
    if size("x") == "0" {
        return Vec::new();
    }
    // Only the cells: the rule's grid suffix (whose size is Golly's whole grid) is dropped.
    let plain = again.with_extension("plain.rle");
    let unsuffixed: Vec<String> = text
        .lines()
        .map(|line| match (line.starts_with('x'), line.split_once(':')) {
            (true, Some((head, _))) => head.to_string(),
            _ => line.to_string(),
        })
        .collect();
    std::fs::write(&plain, unsuffixed.join("\n")).unwrap();
    stdout_of(&[
        "run",
        "--input",
        plain.to_str().unwrap(),
        "--width",
        &size("x"),
        "--height",
        &size("y"),
        "--gens",
        "0",
        "--output",
        again.to_str().unwrap(),
    ]);
    bounding_box(&std::fs::read_to_string(again).unwrap())
}

/// An indexed PNG as gol writes it: (width, height, its palette's RGB triples, one palette
/// index a pixel).
pub fn png_indices(path: &Path) -> (u32, u32, Vec<u8>, Vec<u8>) {
    let mut decoder = png::Decoder::new(std::fs::File::open(path).expect("the PNG opens"));
    decoder.set_transformations(png::Transformations::IDENTITY);
    let mut reader = decoder.read_info().expect("a PNG");
    let palette = reader
        .info()
        .palette
        .as_deref()
        .unwrap_or_default()
        .to_vec();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).expect("a frame");
    pixels.truncate(info.buffer_size());
    (info.width, info.height, palette, pixels)
}

/// Whether the RLE files `ours` and `theirs` hold the same cells wherever each puts them
/// (bgolly's Larger than Life algorithm writes no position): each without its `#CXRLE` line,
/// read by gol onto the plane and written again (to files in `dir`), gives the same bytes.
pub fn same_cells_anywhere(ours: &Path, theirs: &Path, dir: &Path) -> bool {
    let again = |from: &Path, name: &str| {
        let text = text_of(from);
        let bare: String = text
            .lines()
            .filter(|l| !l.starts_with("#CXRLE"))
            .map(|l| format!("{l}\n"))
            .collect();
        let (bare_path, out) = (
            dir.join(format!("{name}-bare.rle")),
            dir.join(format!("{name}-again.rle")),
        );
        std::fs::write(&bare_path, bare).unwrap();
        rewritten(&bare_path, &out)
    };
    again(ours, "ours") == again(theirs, "theirs")
}

/// The text of `file`, gunzipped where its name ends in `.gz`.
pub fn text_of(file: &Path) -> String {
    let bytes = std::fs::read(file).unwrap();
    if !file.to_string_lossy().ends_with(".gz") {
        return String::from_utf8(bytes).unwrap();
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)
        .unwrap();
    text
}

/// The text of `file` read by gol (where it lies) and written again to `out`.
pub fn rewritten(file: &Path, out: &Path) -> String {
    stdout_of(&[
        "run",
        "--input",
        file.to_str().unwrap(),
        "--gens",
        "0",
        "--output",
        out.to_str().unwrap(),
    ]);
    std::fs::read_to_string(out).unwrap()
}

/// bgolly's population after `gens` generations of `start` by its algorithm `algo`, its
/// cells written to `out`.
pub fn golly_run(bgolly: &Path, algo: &str, start: &Path, gens: u64, out: &Path) -> String {
    let output = Command::new(bgolly)
        .args(["-a", algo, "-m", &gens.to_string(), "-o"])
        .arg(out)
        .arg(start)
        .output()
        .expect("bgolly runs");
    assert!(output.status.success(), "bgolly: {output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    let last = text
        .lines()
        .rev()
        .find(|l| l.contains(": "))
        .expect("a population");
    last.rsplit(": ")
        .next()
        .unwrap()
        .replace(',', "")
        .trim()
        .to_string()
}

/// Writes `Still.rule` into `dir`: three states under which every cell stays as it is (a von
/// Neumann table with no transitions), with `colours` as its `@COLORS` lines.
pub fn still_rule(dir: &Path, colours: &str) {
    let text = format!(
        "@RULE Still\n@TABLE\nn_states:3\nneighborhood:vonNeumann\nsymmetries:none\n@COLORS\n{colours}"
    );
    std::fs::write(dir.join("Still.rule"), text).unwrap();
}

/// `bytes` gzip-compressed.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// A zip archive (deflated) of `members`, each a name and its bytes.
pub fn zip_bytes(members: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write as _;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for &(name, bytes) in members {
        zip.start_file(name, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap().into_inner()
}
