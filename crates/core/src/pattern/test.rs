use std::path::{Path, PathBuf};

use super::*;
use crate::seed::density_soup;

/// `text` read as a file named `test.rle` or `test.cells` (the name counts only where the
/// content does not tell the format).
fn open(format: Format, text: &str) -> Result<PatternFile> {
    let name = match format {
        Format::Cells => "test.cells",
        _ => "test.rle",
    };
    PatternFile::from_bytes(Path::new(name), text.as_bytes().to_vec())
}

fn cells_of(grid: &Grid) -> Vec<(usize, usize)> {
    let mut live = Vec::new();
    for y in 0..grid.height() {
        for x in 0..grid.width() {
            if grid.get(x, y) {
                live.push((x, y));
            }
        }
    }
    live
}

const GLIDER_RLE: &str =
    "#N Glider\n#O Richard K. Guy\n#C A comment\nx = 3, y = 3, rule = B3/S23\nbob$2bo$3o!\n";

#[test]
fn reads_a_glider_and_places_it_as_golly_does() {
    let file = open(Format::Rle, GLIDER_RLE).unwrap();
    let h = file.header();
    assert_eq!(
        (h.width, h.height, h.rule, h.bounds),
        (3, 3, Some(Rule::LIFE), None)
    );
    let grid = file.place(8, 7).unwrap();
    // Its cell (1, 1) on the grid's (4, 3): the top-left at (3, 2).
    assert_eq!(
        cells_of(&grid),
        vec![(4, 2), (5, 3), (3, 4), (4, 4), (5, 4)]
    );
}

#[test]
fn reads_golly_torus_suffix_and_header_variants() {
    let file = open(Format::Rle, "x=2,y=1,rule=b36/s23:T20,10\n2o!").unwrap();
    assert_eq!(file.header().bounds, Some((20, 10)));
    assert_eq!(file.header().rule, Some(Rule::parse("B36/S23").unwrap()));
    let square = open(Format::Rle, "x = 1, y = 1, rule = B3/S23:T64\no!").unwrap();
    assert_eq!(square.header().bounds, Some((64, 64)));
    let spaced = open(Format::Rle, "X = 1 , Y = 1 , RULE = b3/S23 : t5 , 6\no!").unwrap();
    assert_eq!(spaced.header().bounds, Some((5, 6)));
    let no_rule = open(Format::Rle, "x = 1, y = 1\no!").unwrap();
    assert_eq!(no_rule.header().rule, None);
    let old = open(Format::Rle, "#r 23/36\nx = 1, y = 1\no!").unwrap();
    assert_eq!(old.header().rule, Some(Rule::parse("B36/S23").unwrap()));
}

#[test]
fn reads_multi_line_bodies_and_row_counts() {
    let text = "x = 5, y = 6\r\n2o\r\n3b$\n\n3$o\n3bo!trailing words";
    let grid = open(Format::Rle, text).unwrap().place(5, 6).unwrap();
    assert_eq!(cells_of(&grid), vec![(0, 0), (1, 0), (0, 4), (4, 4)]);
}

#[test]
fn two_state_rle_reads_dots_and_a_as_golly_does() {
    let dotted = open(Format::Rle, "x = 3, y = 2\n.A.$A2.!")
        .unwrap()
        .place(3, 2)
        .unwrap();
    let plain = open(Format::Rle, "x = 3, y = 2\nbob$o2b!")
        .unwrap()
        .place(3, 2)
        .unwrap();
    assert!(dotted == plain && plain.population() == 2);
}

#[test]
fn refuses_malformed_rle_with_line_numbers() {
    let cases = [
        ("", "no RLE header"),
        ("#C only comments\n", "no RLE header"),
        ("x = 3\nooo!", "both x and y"),
        ("x = 3, y = -1\n!", "not a whole number"),
        (
            "x = 99999999999999999999999, y = 1\n!",
            "larger than the largest side",
        ),
        ("x = 2, y = 1, z = 3\n!", "unknown header key"),
        ("x = 2, y = 1, rule = B3/S2Q\n!", "invalid rule"),
        ("x = 2, y = 1, rule = B3/S23:K10,10\n!", "Klein bottle"),
        ("x = 2, y = 1, rule = B3/S23:T10+1,10-1\n!", "not both"),
        ("x = 2, y = 1\n3o!", "wider than"),
        ("x = 2, y = 1\no$o!", "more rows"),
        ("x = 2, y = 1\n99999999999999999999o!", "run count"),
        ("x = 2, y = 1\nB!", "not a two-state cell"),
        ("x = 2, y = 1\n\u{1}!", "unexpected byte"),
        ("x = 2, y = 1\no%!", "unexpected character '%'"),
        ("x = 2, y = 1\n2", "ends inside a run"),
        ("x = 2, y = 1\n2!", "before '!'"),
    ];
    for (text, expected) in cases {
        let err = open(Format::Rle, text)
            .and_then(|f| f.place(2, 1).map(|_| ()))
            .expect_err(text)
            .to_string();
        assert!(err.contains(expected), "{text:?}: {err}");
        assert!(err.starts_with("test.rle:"), "{text:?}: {err}");
    }
    let err = open(Format::Rle, "#C\n\nx = 2, y = 1\no\n\nbbb!")
        .unwrap()
        .place(2, 1)
        .unwrap_err();
    assert!(err.to_string().starts_with("test.rle:6:"), "{err}");
}

#[test]
fn refuses_patterns_larger_than_the_grid() {
    let err = open(Format::Rle, GLIDER_RLE)
        .unwrap()
        .place(2, 9)
        .unwrap_err();
    assert!(err.to_string().contains("does not fit"), "{err}");
}

#[test]
fn reads_cells_files() {
    let text = "!Name: Glider\n!\n.O\n..O\r\nOOO   \n\n";
    let file = open(Format::Cells, text).unwrap();
    assert_eq!((file.header().width, file.header().height), (3, 3));
    let grid = file.place(3, 3).unwrap();
    assert_eq!(
        cells_of(&grid),
        vec![(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]
    );
    let err = open(Format::Cells, "!x\n.O\n.X.\n")
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.starts_with("test.cells:3:") && err.contains("'X'"),
        "{err}"
    );
    let empty = open(Format::Cells, "!nothing\n").unwrap();
    assert_eq!((empty.header().width, empty.header().height), (0, 0));
}

#[test]
fn rle_round_trips_with_torus_and_short_lines() {
    for (w, h) in [(1, 1), (3, 2), (64, 5), (150, 40), (333, 17)] {
        let grid = density_soup(w, h, 0.35, w as u64).unwrap();
        let (rule, suffix) = if w % 2 == 1 {
            (Rule::parse("B36/S23").unwrap(), "T")
        } else {
            (Rule::parse("B36/S23:P").unwrap(), "P")
        };
        let text = String::from_utf8(encode(Format::Rle, &grid, rule, 0)).unwrap();
        let (x, y) = (-((w / 2) as i64), -((h / 2) as i64));
        assert!(text.starts_with(&format!(
            "#CXRLE Pos={x},{y} Gen=0\nx = {w}, y = {h}, rule = B36/S23:{suffix}{w},{h}\n"
        )));
        assert!(text.lines().all(|l| l.len() <= 70), "{text}");
        let back = open(Format::Rle, &text).unwrap();
        assert_eq!(back.header().bounds, Some((w, h)));
        assert_eq!(back.header().rule, Some(rule));
        let (bw, bh) = (back.header().width, back.header().height);
        assert_eq!(back.place(bw, bh).unwrap(), grid);
    }
}

#[test]
fn rle_writes_row_gaps_and_empty_grids() {
    let mut grid = Grid::new(5, 6).unwrap();
    grid.set(4, 1, true);
    grid.set(0, 4, true);
    let text = String::from_utf8(encode(Format::Rle, &grid, Rule::LIFE, 7)).unwrap();
    assert_eq!(
        text,
        "#CXRLE Pos=-2,-3 Gen=7\nx = 5, y = 6, rule = B3/S23:T5,6\n$4bo3$o!\n"
    );
    let empty = encode(Format::Rle, &Grid::new(2, 2).unwrap(), Rule::LIFE, 0);
    assert_eq!(
        String::from_utf8(empty).unwrap(),
        "#CXRLE Pos=-1,-1 Gen=0\nx = 2, y = 2, rule = B3/S23:T2,2\n!\n"
    );
}

#[test]
fn cells_round_trip() {
    let grid = density_soup(70, 9, 0.5, 3).unwrap();
    let text = String::from_utf8(encode(Format::Cells, &grid, Rule::LIFE, 0)).unwrap();
    let back = open(Format::Cells, &text).unwrap();
    // Trailing dead cells of a row are kept on writing, so the width is the grid's.
    assert_eq!(back.place(70, 9).unwrap(), grid);
}

/// `.cells` rows land at any column of a larger grid, with lines cut short, `*` for live
/// cells and lines longer than a word, as a cell-by-cell paste puts them.
#[test]
fn cells_rows_land_at_any_column() {
    let pattern = density_soup(150, 23, 0.5, 9).unwrap();
    let mut text = String::from("!soup\n");
    for y in 0..pattern.height() {
        let row: String = (0..pattern.width())
            .map(|x| match (pattern.get(x, y), (x + y) % 3) {
                (true, 0) => '*',
                (true, _) => 'O',
                (false, _) => '.',
            })
            .collect();
        // Trailing dead cells dropped on every other line, as LifeWiki's files do.
        let row = if y % 2 == 0 {
            row.trim_end_matches('.')
        } else {
            &row
        };
        text.push_str(row);
        text.push('\n');
    }
    let file = open(Format::Cells, &text).unwrap();
    for extra in [0, 1, 2, 31, 63, 64, 65, 127, 130] {
        let (w, h) = (150 + extra, 23 + extra % 5);
        let mut expected = Grid::new(w, h).unwrap();
        let (left, top) = file.corner(w, h).unwrap();
        expected.paste(&pattern, left, top).unwrap();
        assert_eq!(file.place(w, h).unwrap(), expected, "{w}x{h}");
    }
}

/// Files of a megabyte or more are mapped rather than read, gzip-compressed ones too; a
/// plaintext file whose first wrong character lies past the bytes the format is told by gets
/// the header pass's line.
#[test]
fn large_files_are_mapped_and_checked_whole() {
    let grid = density_soup(1100, 1000, 0.5, 4).unwrap();
    let text = encode(Format::Cells, &grid, Rule::LIFE, 0);
    assert!(text.len() as u64 >= MAP_BYTES);
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("big.cells");
    std::fs::write(&plain, &text).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&text).unwrap();
    let packed = dir.path().join("big.cells.gz");
    std::fs::write(&packed, gz.finish().unwrap()).unwrap();
    for path in [&plain, &packed] {
        let file = PatternFile::open(path).unwrap();
        assert_eq!(file.place(1100, 1000).unwrap(), grid, "{path:?}");
    }
    let mut bad = text.clone();
    let at = bad.len() - 10;
    bad[at] = b'x';
    let line = bad[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    let named = dir.path().join("bad.txt");
    std::fs::write(&named, &bad).unwrap();
    let err = PatternFile::open(&named).err().unwrap().to_string();
    assert!(
        err.contains(&format!("bad.txt:{line}:")) && err.contains("'x'"),
        "{err}"
    );
}

#[test]
fn png_is_the_picture_of_the_whole_grid() {
    let mut grid = Grid::new(3, 2).unwrap();
    grid.set(1, 0, true);
    let bytes = encode(Format::Png, &grid, Rule::LIFE, 0);
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::IDENTITY);
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    // 171 pixels a cell make it at least 512 wide; one palette index a pixel.
    assert_eq!(info.color_type, png::ColorType::Indexed);
    assert_eq!((info.width, info.height), (513, 342));
    let at = |x: usize, y: usize| pixels[y * 513 + x];
    assert_eq!(
        (at(171, 0), at(341, 170), at(0, 0), at(342, 0), at(171, 171)),
        (255, 255, 0, 0, 0)
    );
}

#[test]
fn format_comes_from_the_extension() {
    assert_eq!(Format::of(Path::new("a/b.RLE")).unwrap(), Format::Rle);
    assert_eq!(Format::of(Path::new("x.cells")).unwrap(), Format::Cells);
    assert!(Format::of(Path::new("x.txt")).is_err());
    assert!(PatternFile::open(Path::new("/nonexistent/file.rle")).is_err());
}

#[test]
fn gzip_is_read_by_content_and_written_by_name() {
    use std::io::Write as _;
    let text = "x = 3, y = 3, rule = B3/S23\nbo$2bo$3o!\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    let packed = gz.finish().unwrap();
    // Compressed under a plain name: found by its magic bytes.
    let plain = open(Format::Rle, text).unwrap();
    let inflated = PatternFile::from_bytes(Path::new("g.rle"), packed).unwrap();
    assert_eq!(inflated.header(), plain.header());
    assert_eq!(
        cells_of(&inflated.place(8, 8).unwrap()),
        cells_of(&plain.place(8, 8).unwrap())
    );
    // Written compressed where the name ends in .gz, and read back.
    let dir = tempfile::tempdir().unwrap();
    let grid = density_soup(70, 9, 0.4, 2).unwrap();
    for name in ["w.rle.gz", "w.cells.GZ"] {
        let path = dir.path().join(name);
        assert_eq!(
            Format::of(&path).unwrap(),
            if name.contains("rle") {
                Format::Rle
            } else {
                Format::Cells
            }
        );
        write(&path, &grid, Rule::LIFE, 0).unwrap();
        assert_eq!(&std::fs::read(&path).unwrap()[..2], &GZIP_MAGIC);
        let back = PatternFile::open(&path).unwrap();
        assert_eq!(back.place(70, 9).unwrap(), grid, "{name}");
    }
    assert!(write(&dir.path().join("w.png.gz"), &grid, Rule::LIFE, 0).is_err());
}

#[test]
fn inflating_past_the_limit_is_refused() {
    use std::io::Write as _;
    // 1 MiB of zeros packs into about a kilobyte.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&vec![0u8; 1 << 20]).unwrap();
    let packed = gz.finish().unwrap();
    assert!(packed.len() < 4096);
    let inflated = flate2::read::MultiGzDecoder::new(&packed[..]);
    let e = read_bounded(Path::new("bomb.rle.gz"), inflated, 1000).unwrap_err();
    assert!(e.to_string().contains("more than the 1000 bytes"), "{e}");
    let inflated = flate2::read::MultiGzDecoder::new(&packed[..]);
    assert_eq!(
        read_bounded(Path::new("ok"), inflated, 1 << 20)
            .unwrap()
            .len(),
        1 << 20
    );
}

#[test]
fn placement_follows_golly_on_even_grids_and_odd_patterns() {
    // A 19x15 pattern on a 20x16 grid: its cell (9, 7) on the grid's (10, 8), one cell right
    // of and below ⌊(W−w)/2⌋ = (0, 0).
    let text = format!("x = 19, y = 15\no17bo${}o17bo!\n", "$".repeat(13));
    let file = open(Format::Rle, &text).unwrap();
    assert_eq!(file.corner(20, 16).unwrap(), (1, 1));
    assert_eq!(file.corner(19, 15).unwrap(), (0, 0));
    assert_eq!(file.corner(21, 17).unwrap(), (1, 1));
    let grid = file.place(20, 16).unwrap();
    assert_eq!(cells_of(&grid), vec![(1, 1), (19, 1), (1, 15), (19, 15)]);
}

#[test]
fn cxrle_gives_position_and_generation() {
    let text = "\n#CXRLE Pos=-6,2 Gen=1234\n#N glider\nx = 3, y = 3, rule = B3/S23\nbo$2bo$3o!\n";
    let file = open(Format::Rle, text).unwrap();
    // Anywhere but first, a comment (as bgolly reads it: at (0, 0), generation 0).
    let later = "#N glider\n#CXRLE Pos=-6,2 Gen=1234\nx = 3, y = 3, rule = B3/S23\nbo$2bo$3o!\n";
    let later = open(Format::Rle, later).unwrap();
    assert_eq!(
        (&later.header().position, &later.header().generation),
        (&None, &BigUint::default())
    );
    assert_eq!(
        (
            file.header().position.clone(),
            file.header().generation.clone()
        ),
        (Some(((-6).into(), 2.into())), 1234u32.into())
    );
    // On a 16x10 grid Golly's (-6, 2) is cell (2, 7).
    let grid = file.place(16, 10).unwrap();
    assert_eq!(
        cells_of(&grid),
        vec![(3, 7), (4, 8), (2, 9), (3, 9), (4, 9)]
    );
    let err = file.place(16, 8).unwrap_err().to_string();
    assert!(
        err.contains("at (-6, 2) does not fit in the 16x8 grid"),
        "{err}"
    );
    for (line, says) in [
        ("#CXRLE Pos=1", "expected Pos=x,y"),
        ("#CXRLE Pos=a,2", "not a whole number"),
        ("#CXRLE Gen=-1", "not a generation count"),
        ("#CXRLE Pos", "expected key=value"),
    ] {
        let text = format!("{line}\nx = 1, y = 1\no!\n");
        let err = open(Format::Rle, &text).err().unwrap().to_string();
        assert!(
            err.starts_with("test.rle:1:") && err.contains(says),
            "{line}: {err}"
        );
    }
    // Written RLE reads back in the same place, at the generation written.
    let grid = density_soup(33, 20, 0.4, 5).unwrap();
    let back = String::from_utf8(encode(Format::Rle, &grid, Rule::LIFE, 99)).unwrap();
    let file = open(Format::Rle, &back).unwrap();
    assert_eq!(file.header().generation, 99u32.into());
    assert_eq!(file.place(33, 20).unwrap(), grid);
}

#[test]
fn reads_life_106_and_105_at_their_coordinates() {
    let life106 = "#Life 1.06\n#D a glider\n0 -1\n1 0\n-1 1\n0 1\n1 1\n";
    let file = open(Format::Cells, life106).unwrap();
    assert_eq!(file.format(), Format::Life106);
    let h = file.header();
    assert_eq!(
        (h.width, h.height, h.position.clone()),
        (3, 3, Some(((-1).into(), (-1).into())))
    );
    // Golly's (0, 0) is cell (4, 3) of an 8x7 grid.
    let grid = file.place(8, 7).unwrap();
    assert_eq!(
        cells_of(&grid),
        vec![(4, 2), (5, 3), (3, 4), (4, 4), (5, 4)]
    );
    let life105 =
        "#Life 1.05\n#D glider in two blocks\n#R 23/36\n#P -1 -1\n.*\n#P -1 0\n..*\n***\n";
    let file = open(Format::Rle, life105).unwrap();
    assert_eq!(file.format(), Format::Life105);
    assert_eq!(file.header().rule, Some(Rule::parse("B36/S23").unwrap()));
    assert_eq!(file.place(8, 7).unwrap(), grid);
    // A bare #P, and rows before any #P, are at 0 0, as Golly reads them (acorn.lif).
    for text in [
        "#Life 1.05\n#P\n.*\n..*\n***\n",
        "#Life 1.05\n.*\n..*\n***\n",
    ] {
        let file = open(Format::Rle, text).unwrap();
        assert_eq!(
            file.header().position,
            Some((0.into(), 0.into())),
            "{text:?}"
        );
        assert_eq!((file.header().width, file.header().height), (3, 3));
    }
    for (text, line, says) in [
        ("#Life 1.06\n0 0\n1 x\n", 3, "not a whole number"),
        ("#Life 1.06\n0 0 0\n", 2, "unexpected"),
        ("#Life 1.06\n5\n", 2, "expected x and y"),
        ("#Life 1.06\n5 99999999999999999999\n", 2, "beyond ±2^62"),
        ("#Life 1.05\n#P 3\n*\n", 2, "expected the block's x and y"),
        ("#Life 1.05\n#P 0 0\n*o\n", 3, "expected '.' or '*'"),
        ("#Life 1.05\n#R 2x/3\n", 2, "invalid rule"),
        ("#Life 1.06\n-9000000000 0\n9000000000 0\n", 1, "more than"),
    ] {
        let err = open(Format::Rle, text).err().unwrap().to_string();
        assert!(
            err.starts_with(&format!("test.rle:{line}:")) && err.contains(says),
            "{text:?}: {err}"
        );
    }
}

#[test]
fn formats_are_told_by_content_first() {
    let read = |name: &str, text: &str| {
        PatternFile::from_bytes(Path::new(name), text.as_bytes().to_vec()).map(|f| f.format())
    };
    assert_eq!(read("x.txt", GLIDER_RLE).unwrap(), Format::Rle);
    assert_eq!(read("x.cells", GLIDER_RLE).unwrap(), Format::Rle);
    assert_eq!(read("x", "!glider\n.O\n..O\nOOO\n").unwrap(), Format::Cells);
    assert_eq!(read("x.rle", "#Life 1.06\n0 0\n").unwrap(), Format::Life106);
    let err = read("x.txt", "hello\n").unwrap_err().to_string();
    assert!(
        err.starts_with("x.txt: not a pattern file gol reads; formats read: RLE"),
        "{err}"
    );
    // An empty pattern, as Golly writes one.
    let empty = read("x.txt", "[M2] (golly 3.3)\n#R B3/S23\n").unwrap();
    assert_eq!(empty, Format::Macrocell);
}

#[test]
fn macrocells_round_trip_and_refuse_bad_nodes() {
    for (w, h) in [(1, 1), (2, 3), (8, 8), (9, 7), (70, 33), (130, 129)] {
        let grid = density_soup(w, h, 0.4, (w * h) as u64).unwrap();
        let rule = Rule::parse(["B2-a/S12", "B2-a/S12:P"][w % 2]).unwrap();
        let text = encode(Format::Macrocell, &grid, rule, 12);
        let file = open(Format::Rle, std::str::from_utf8(&text).unwrap()).unwrap();
        assert_eq!(file.format(), Format::Macrocell);
        let header = file.header();
        assert_eq!(
            (header.rule, header.bounds, header.generation.clone()),
            (Some(rule), Some((w, h)), 12u32.into())
        );
        assert_eq!(file.place(w, h).unwrap(), grid, "{w}x{h}");
    }
    let empty = encode(Format::Macrocell, &Grid::new(5, 5).unwrap(), Rule::LIFE, 0);
    let file = open(Format::Rle, std::str::from_utf8(&empty).unwrap()).unwrap();
    assert_eq!((file.header().width, file.header().height), (0, 0));
    assert_eq!(file.place(5, 5).unwrap(), Grid::new(5, 5).unwrap());
    // Golly writes an empty pattern with no nodes at all.
    let golly_empty = open(Format::Rle, "[M2] (golly 3.3)\n#R B3/S23\n#G 1000\n").unwrap();
    assert_eq!(golly_empty.header().generation, 1000u32.into());
    assert_eq!(golly_empty.place(4, 4).unwrap(), Grid::new(4, 4).unwrap());
    for (text, line, says) in [
        ("[M2]\n.*$\n4 1 2 0 0\n", 3, "node 2 is not defined"),
        ("[M2]\n.*$\n5 1 0 0 0\n", 3, "node 1 is of level 3, not 4"),
        ("[M2]\n.*x$\n", 2, "unexpected character 'x'"),
        ("[M2]\n.........*$\n", 2, "8 rows of 8 cells"),
        ("[M2]\n4 0 0\n", 2, "five numbers"),
        ("[M2]\n0 0 0 0 0\n", 2, "levels 1 to"),
        ("[M2]\n1 0 300 0 0\n", 2, "states 0 to 255"),
        (
            "[M2]\n1 0 1 0 0\n3 1 0 0 0\n",
            3,
            "node 1 is of level 1, not 2",
        ),
        ("[M2]\n#G -5\n.*$\n", 2, "not a generation count"),
        ("[M2]\n#R B3/S2x\n.*$\n", 2, "invalid rule"),
    ] {
        let err = open(Format::Rle, text).err().unwrap().to_string();
        assert!(
            err.starts_with(&format!("test.rle:{line}:")) && err.contains(says),
            "{text:?}: {err}"
        );
    }
}

/// A `width` × `height` grid of `states` states, each cell's state drawn from `seed`.
fn states_soup(width: usize, height: usize, states: u32, seed: u64) -> Grid {
    let mut rng = crate::seed::SplitMix64::new(seed);
    let mut grid = Grid::with_states(width, height, states).unwrap();
    for y in 0..height {
        for x in 0..width {
            let draw = rng.next();
            if !draw.is_multiple_of(3) {
                grid.set_state(x, y, (draw >> 8) as u32 % states);
            }
        }
    }
    grid
}

#[test]
fn multi_state_grids_round_trip_through_rle_and_macrocell() {
    for (i, (w, h, states)) in [
        (1, 1, 3),
        (2, 3, 4),
        (9, 7, 25),
        (70, 33, 256),
        (130, 3, 49),
    ]
    .into_iter()
    .enumerate()
    {
        let grid = states_soup(w, h, states, i as u64);
        let rule = Rule::parse(["/2/3", "345/2/4:P"][i % 2])
            .unwrap()
            .with_states(states)
            .unwrap();
        for format in [Format::Rle, Format::Macrocell] {
            let text = encode(format, &grid, rule, 5);
            let file = open(Format::Rle, std::str::from_utf8(&text).unwrap()).unwrap();
            assert_eq!(file.header().rule, Some(rule));
            let back = file.place(w, h).unwrap();
            assert_eq!(back.first_difference(&grid), None, "{format:?} {w}x{h}");
            assert_eq!(back, grid);
        }
    }
    // Golly's letters, `o` and `b` among them, and a state past what the rule has.
    let file = open(Format::Rle, "x = 4, y = 2, rule = /2/30\nbo.B$2pAX!\n").unwrap();
    let grid = file.place(4, 2).unwrap();
    let states: Vec<u32> = (0..4)
        .map(|x| grid.state(x, 0))
        .chain((0..3).map(|x| grid.state(x, 1)))
        .collect();
    assert_eq!(states, [0, 1, 0, 2, 25, 25, 24]);
    let err = open(Format::Rle, "x = 2, y = 2, rule = /2/3\nA$\n.C!\n")
        .unwrap()
        .place(2, 2)
        .unwrap_err();
    assert!(
        err.to_string().starts_with("test.rle:3: cell state 3"),
        "{err}"
    );
    let err = open(Format::Rle, "x = 2, y = 1, rule = /2/30\nApZ!\n")
        .unwrap()
        .place(2, 1)
        .unwrap_err();
    assert!(
        err.to_string().contains("must be followed by A to X"),
        "{err}"
    );
    // A two-state file on a Generations grid, and the grid's state count kept.
    let file = open(Format::Rle, GLIDER_RLE).unwrap();
    let grid = file.place_with_states(8, 8, 5).unwrap();
    assert_eq!((grid.states(), grid.population(), grid.live()), (5, 5, 5));
}

/// The cells of an RLE body the slow way (a cell once for each run that draws it: `o0$o`
/// draws one cell twice), or the line (1-based, the header on line 1) of its first error: a
/// decoder written for this test alone, which the reader must match.
fn decode_slowly(
    body: &str,
    width: usize,
    height: usize,
) -> std::result::Result<Vec<(usize, usize)>, usize> {
    let (mut x, mut y, mut line) = (0usize, 0usize, 2);
    let mut live = Vec::new();
    let mut count: Option<usize> = None;
    for text_line in body.split_inclusive('\n') {
        if text_line.starts_with('#') {
            line += 1;
            continue;
        }
        for c in text_line.chars() {
            match c {
                '0'..='9' => {
                    let digit = c.to_digit(10).unwrap() as usize;
                    count = Some(count.unwrap_or(0).saturating_mul(10).saturating_add(digit))
                }
                'b' | '.' | 'o' => {
                    let n = count.take().unwrap_or(1);
                    if x.saturating_add(n) > width || (c == 'o' && n > 0 && y >= height) {
                        return Err(line);
                    }
                    if c == 'o' {
                        live.extend((x..x + n).map(|x| (x, y)));
                    }
                    x += n;
                }
                '$' => {
                    y = y.saturating_add(count.take().unwrap_or(1));
                    x = 0;
                    if y > height {
                        return Err(line);
                    }
                }
                '!' => return if count.is_some() { Err(line) } else { Ok(live) },
                '\n' => line += 1,
                ' ' | '\r' => {}
                _ => return Err(line),
            }
        }
    }
    if count.is_some() {
        return Err(line);
    }
    Ok(live)
}

/// An RLE body from drawn tokens: runs with counts of every length, row ends, spaces, line
/// breaks (some as CR LF) inside counts, stray letters, and comment lines where `comments` allows.
fn body_of(tokens: Vec<(usize, usize)>, comments: bool) -> String {
    let mut body = String::new();
    for (count, kind) in tokens {
        let count = match count % 8 {
            0..=2 => String::new(),
            3 | 4 => (count % 10).to_string(),
            5 | 6 => (count % 100).to_string(),
            _ => count.to_string(),
        };
        match kind {
            0..=159 => body += &format!("{count}o"),
            160..=319 => body += &format!("{count}b"),
            320..=369 => body += &format!("{count}$"),
            370..=377 => body += &format!("{count}.\n"),
            378..=384 => body += &format!("{count}.\r\n"),
            385..=392 => body += " ",
            393..=398 if comments => body += "\n#C a comment $ 3o\n",
            393..=398 => body += "\n",
            _ => body += &format!("{count}x"),
        }
    }
    body.push('!');
    body
}

/// Reads `body` under an RLE header and compares with [`decode_slowly`].
fn read_as_slowly(
    body: &str,
    width: usize,
    height: usize,
) -> proptest::test_runner::TestCaseResult {
    let text = format!("x = {width}, y = {height}\n{body}");
    let expected = decode_slowly(body, width, height);
    match open(Format::Rle, &text).and_then(|f| f.place(width, height)) {
        Ok(grid) => proptest::prop_assert_eq!(
            Ok(cells_of(&grid)),
            expected.map(|mut v| {
                v.sort_by_key(|&(x, y)| (y, x));
                v.dedup();
                v
            })
        ),
        Err(Error::Parse { line, .. }) => {
            proptest::prop_assert_eq!(Err(line), expected.map(|_| ()))
        }
        Err(e) => proptest::prop_assert!(false, "{e}"),
    }
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// The reader (with its token loop from masks for runs) against [`decode_slowly`].
    #[test]
    fn rle_bodies_read_as_the_slow_decoder_reads_them(
        tokens in proptest::collection::vec((0usize..1200, 0usize..400), 0..300),
        width in 1usize..3000,
        height in 1usize..60,
    ) {
        read_as_slowly(&body_of(tokens, true), width, height)?;
    }

    /// The same without comment lines, so that bodies are read in pieces on several threads
    /// (from 64 bytes on in these tests): cells, and the line of the first error, as in one pass.
    #[test]
    fn rle_bodies_read_in_pieces_as_in_one_pass(
        tokens in proptest::collection::vec((0usize..1200, 0usize..400), 0..600),
        width in 1usize..3000,
        height in 1usize..60,
    ) {
        read_as_slowly(&body_of(tokens, false), width, height)?;
    }

    /// A file's cells counted (in pieces where it has no comment lines) as many as it draws,
    /// or the same error; past a bound, none (or an error in the pieces read before the count
    /// passed it).
    #[test]
    fn rle_bodies_count_the_cells_they_draw(
        tokens in proptest::collection::vec((0usize..1200, 0usize..400), 0..600),
        comments: bool,
        width in 1usize..3000,
        height in 1usize..60,
        bound in proptest::option::of(0u64..5000),
    ) {
        let text = format!("x = {width}, y = {height}\n{}", body_of(tokens, comments));
        let file = open(Format::Rle, &text).unwrap();
        let line = |e: Error| match e {
            Error::Parse { line, .. } => line,
            e => panic!("{e}"),
        };
        let most = bound.unwrap_or(u64::MAX);
        let counted = file.count_cells(most).map_err(line);
        match file.place(width, height).map(|g| g.population()) {
            Ok(cells) => proptest::prop_assert_eq!(counted, Ok((cells <= most).then_some(cells))),
            Err(e) => {
                let error = Err(line(e));
                proptest::prop_assert!(
                    counted == error || (bound.is_some() && counted == Ok(None)),
                    "{counted:?} against {error:?}"
                );
            }
        }
    }
}

/// Every line after the first starts with `0$` and draws over the row the line before drew, so
/// that wherever the body is cut into pieces (at line ends), a piece starts by drawing again
/// cells its piece before drew: counted once.
#[test]
fn cells_drawn_again_after_a_row_end_of_count_0_are_counted_once() {
    let rows = 200;
    let text = format!("x = 3, y = {rows}\n3o\n{}!", "0$2o$3o\n".repeat(rows - 1));
    let file = open(Format::Rle, &text).unwrap();
    assert_eq!(file.place(3, rows).unwrap().population(), 3 * rows as u64);
    assert_eq!(file.count_cells(u64::MAX).unwrap(), Some(3 * rows as u64));
}

/// A count bounded below a body's cells stops at none, and at its cells or above gives them,
/// whether the body is read in pieces (cut into tens of them here) or in one pass.
#[test]
fn a_count_bounded_below_the_cells_gives_none() {
    let rows = 2000;
    for (line_end, pieces) in [("$\n", true), ("$", false)] {
        let text = format!(
            "x = 3, y = {rows}\n{}!",
            format!("3o{line_end}").repeat(rows)
        );
        let file = open(Format::Rle, &text).unwrap();
        let cells = 3 * rows as u64;
        assert_eq!(
            pieces,
            super::rle::pieces(text.as_bytes(), usize::MAX).len() > 2
        );
        for most in [0, cells / 2, cells - 1] {
            assert_eq!(file.count_cells(most).unwrap(), None, "bound {most}");
        }
        for most in [cells, cells + 1, u64::MAX] {
            assert_eq!(file.count_cells(most).unwrap(), Some(cells), "bound {most}");
        }
    }
}

/// The RLE body of `grid` the plain way: tokens as strings (no count for 1), row ends merged,
/// lines broken greedily before 70 characters; what the writer must produce byte for byte.
fn rle_body_plainly(grid: &Grid) -> String {
    let mut tokens = Vec::new();
    let mut pending_rows = 0;
    let token = |n: usize, tag: char| {
        if n == 1 {
            tag.to_string()
        } else {
            format!("{n}{tag}")
        }
    };
    for y in 0..grid.height() {
        let cells: Vec<bool> = (0..grid.width()).map(|x| grid.get(x, y)).collect();
        let mut x = 0;
        while let Some(start) = (x..cells.len()).find(|&i| cells[i]) {
            let end = (start..cells.len())
                .find(|&i| !cells[i])
                .unwrap_or(cells.len());
            if pending_rows > 0 {
                tokens.push(token(pending_rows, '$'));
                pending_rows = 0;
            }
            if start > x {
                tokens.push(token(start - x, 'b'));
            }
            tokens.push(token(end - start, 'o'));
            x = end;
        }
        pending_rows += 1;
    }
    tokens.push("!".into());
    let mut body = String::new();
    let mut length = 0;
    for t in tokens {
        if length + t.len() > 70 {
            body.push('\n');
            length = 0;
        }
        length += t.len();
        body += &t;
    }
    body + "\n"
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// The writer's bytes against [`rle_body_plainly`], on grids with runs of every length
    /// (1, 2 to 9, tens, hundreds), empty rows and rows that fill several lines.
    #[test]
    fn rle_writer_writes_what_a_plain_encoder_writes(
        width in 1usize..700,
        height in 1usize..40,
        density in 0.0f64..1.0,
        sparse in proptest::bool::ANY,
        seed in 0u64..1000,
    ) {
        let grid = density_soup(width, height, if sparse { density / 50.0 } else { density }, seed).unwrap();
        let text = String::from_utf8(encode(Format::Rle, &grid, Rule::LIFE, 0)).unwrap();
        let body = text.splitn(3, '\n').nth(2).unwrap();
        proptest::prop_assert_eq!(body, rle_body_plainly(&grid));
    }
}

#[test]
fn long_counts_read_in_pieces_give_one_pass_errors() {
    // Counts of 25 digits before `$` and before a cell, in a body long enough to be read in
    // pieces: the reader's error, not an overflow in its first pass.
    for tail in [
        "0000000000000000000000003$o!",
        "9999999999999999999999999$o!",
        "99999999999999999999999b!",
    ] {
        let body = format!("{}\n{tail}\n", "2o3b$".repeat(40));
        read_as_slowly(&body, 10, 100).unwrap_or_else(|e| panic!("{tail}: {e}"));
    }
}

/// Writes a zip archive of `members` (name and bytes; a name ending in `/` is a folder),
/// deflated, to `path`.
fn zip_of(path: &Path, members: &[(&str, &[u8])]) {
    std::fs::write(path, zip_bytes(members)).unwrap();
}

/// A zip archive of `members`, as [`zip_of`] writes it.
fn zip_bytes(members: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write as _;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for &(name, bytes) in members {
        if name.ends_with('/') {
            zip.add_directory(name, options).unwrap();
        } else {
            zip.start_file(name, options).unwrap();
            zip.write_all(bytes).unwrap();
        }
    }
    zip.finish().unwrap().into_inner()
}

#[test]
fn a_zip_archive_given_as_bytes_is_read_as_its_file_would_be() {
    let table = |name: &str| {
        format!("@RULE {name}\n@TABLE\nn_states:2\nneighborhood:Moore\nsymmetries:permute\n0,1,1,1,0,0,0,0,0,1\n")
    };
    let rle = |rule: &str| format!("x = 3, y = 1, rule = {rule}\n3o!\n");
    let (first, second) = ("HeldArchiveRuleOne", "HeldArchiveRuleTwo");
    let one = zip_bytes(&[
        ("one.rle", rle(first).as_bytes()),
        ("rules/HeldArchiveRuleOne.rule", table(first).as_bytes()),
    ]);
    // The one pattern, under the archive's own table (no file anywhere).
    let file = PatternFile::from_bytes(Path::new("upload.zip"), one.clone()).unwrap();
    assert!(file.header().rule.unwrap().to_string().contains(first));
    assert_eq!(
        cells_of(&file.place(5, 3).unwrap()),
        [(1, 1), (2, 1), (3, 1)]
    );
    // Of several, the one its name gives after a colon; none named, the refusal lists them.
    let several = zip_bytes(&[
        ("flow/a.rle", b"x = 1, y = 1, rule = B3/S23\no!\n"),
        ("flow/b.rle", b"x = 2, y = 1, rule = B3/S23\n2o!\n"),
        ("flow/notes.txt", b"not a pattern"),
    ]);
    assert_eq!(
        super::archive_choice(Path::new("Flow.zip"), &several).unwrap(),
        ["flow/a.rle", "flow/b.rle"]
    );
    assert_eq!(
        super::archive_choice(Path::new("Flow.zip:flow/a.rle"), &several),
        None
    );
    assert_eq!(super::archive_choice(Path::new("one.zip"), &one), None);
    assert_eq!(
        super::archive_choice(Path::new("a.rle"), b"x = 1, y = 1\no!\n"),
        None
    );
    let b = PatternFile::from_bytes(Path::new("Flow.ZIP:flow/b.rle"), several.clone()).unwrap();
    assert_eq!(cells_of(&b.place(4, 1).unwrap()), [(1, 0), (2, 0)]);
    let e = PatternFile::from_bytes(Path::new("Flow.zip"), several.clone())
        .err()
        .unwrap();
    assert!(e.to_string().contains("Flow.zip:flow/a.rle"), "{e}");
    // An archive inside an archive is refused, not opened without end.
    let nested = zip_bytes(&[("inner.rle", &several)]);
    let e = PatternFile::from_bytes(Path::new("nested.zip"), nested)
        .err()
        .unwrap();
    assert!(e.to_string().contains("inside an archive"), "{e}");
    // A second archive held in memory takes the place of the first's tables.
    let two = zip_bytes(&[
        ("two.rle", rle(second).as_bytes()),
        ("HeldArchiveRuleTwo.rule", table(second).as_bytes()),
    ]);
    PatternFile::from_bytes(Path::new("two.zip"), two).unwrap();
    let after = PatternFile::from_bytes(Path::new("a.rle"), rle(first).into_bytes());
    assert!(after.is_err(), "the first upload's table is kept");
    PatternFile::from_bytes(Path::new("b.rle"), rle(second).into_bytes()).unwrap();
}

#[test]
fn a_zip_archive_gives_its_one_pattern_under_its_own_rule_table() {
    let dir = tempfile::tempdir().unwrap();
    // Born with exactly three neighbours, and every live cell stays (no transition kills).
    let table = "@RULE ZipArchiveTestRule\n@TABLE\nn_states:2\nneighborhood:Moore\nsymmetries:permute\n0,1,1,1,0,0,0,0,0,1\n";
    let path = dir.path().join("primer.ZIP");
    zip_of(
        &path,
        &[
            (
                "primer.rle",
                b"x = 3, y = 1, rule = ZipArchiveTestRule\n3o!\n",
            ),
            ("ZipArchiveTestRule.rule", table.as_bytes()),
            ("__MACOSX/", b""),
            (
                "__MACOSX/._ZipArchiveTestRule.rule",
                b"\0\x05\x16\x07 not a rule",
            ),
            ("init.lua", b"-- a script gol does not run"),
        ],
    );
    let file = PatternFile::open(&path).unwrap();
    let rule = file.header().rule.expect("the rule of the archive's table");
    assert!(rule.to_string().contains("ZipArchiveTestRule"), "{rule}");
    assert_eq!(
        cells_of(&file.place(5, 3).unwrap()),
        [(1, 1), (2, 1), (3, 1)]
    );
    // The table is no file anywhere: outside the archive the name is unknown.
    let loose = dir.path().join("loose.rle");
    std::fs::write(&loose, "x = 1, y = 1, rule = ZipArchiveTestRuleNot\no!\n").unwrap();
    assert!(PatternFile::open(&loose).is_err());
}

#[test]
fn a_zip_archive_of_several_patterns_is_opened_at_the_one_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flow.zip");
    zip_of(
        &path,
        &[
            ("flow/", b""),
            ("flow/one.rle", b"x = 1, y = 1, rule = B3/S23\no!\n"),
            ("flow/Two.rle", b"x = 2, y = 1, rule = B3/S23\n2o!\n"),
        ],
    );
    let e = PatternFile::open(&path).expect_err("two patterns, none named");
    let said = e.to_string();
    for part in ["2 pattern files", "flow.zip:flow/one.rle", "flow/Two.rle"] {
        assert!(said.contains(part), "{said}");
    }
    let named = |member: &str| PathBuf::from(format!("{}:{member}", path.display()));
    let two = PatternFile::open(&named("flow/Two.rle")).unwrap();
    assert_eq!(cells_of(&two.place(4, 1).unwrap()), [(1, 0), (2, 0)]);
    // A name matched without regard to case where only one member has it.
    let one = PatternFile::open(&named("FLOW/ONE.RLE")).unwrap();
    assert_eq!(cells_of(&one.place(3, 1).unwrap()), [(1, 0)]);
    let e = PatternFile::open(&named("flow/three.rle")).err().unwrap();
    assert!(e.to_string().contains("has no file flow/three.rle"), "{e}");
    assert!(PatternFile::open(&named("flow/")).is_err());
}

#[test]
fn zip_archives_without_a_pattern_or_damaged_or_too_large_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let scripts = dir.path().join("scripts.zip");
    zip_of(&scripts, &[("show.lua", b"-- draws with a script")]);
    let e = PatternFile::open(&scripts).err().unwrap().to_string();
    assert!(
        e.contains("no pattern file") && e.contains("show.lua"),
        "{e}"
    );
    let damaged = dir.path().join("damaged.rle");
    std::fs::write(&damaged, b"PK\x03\x04 and then nothing of a zip").unwrap();
    let e = PatternFile::open(&damaged).err().unwrap().to_string();
    assert!(e.contains("not a zip archive gol can read"), "{e}");
    // A member that inflates past the limit: 1 MiB of zeros.
    let bomb = dir.path().join("bomb.zip");
    let zeros = vec![b'0'; 1 << 20];
    zip_of(&bomb, &[("bomb.rle", &zeros)]);
    assert!(std::fs::metadata(&bomb).unwrap().len() < 8192);
    let e = archive::open(&bomb, None, 1000).err().unwrap().to_string();
    assert!(e.contains("more than the 1000 bytes"), "{e}");
    // An archive past the size of a pattern file, named with a member (a sparse file).
    let huge = dir.path().join("huge.zip");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(MAX_FILE_BYTES + 1)
        .unwrap();
    let e = PatternFile::open(Path::new(&format!("{}:a.rle", huge.display()))).err();
    assert!(e.unwrap().to_string().contains("is larger than"));
}
