use std::path::Path;

use super::*;
use crate::seed::density_soup;

fn open(format: Format, text: &str) -> Result<PatternFile> {
    PatternFile::from_bytes(Path::new("test"), format, text.as_bytes().to_vec())
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
fn reads_a_glider_and_centres_it() {
    let file = open(Format::Rle, GLIDER_RLE).unwrap();
    let h = file.header();
    assert_eq!(
        (h.width, h.height, h.rule, h.torus),
        (3, 3, Some(Rule::LIFE), None)
    );
    let grid = file.place(8, 7).unwrap();
    // Offset (⌊(8−3)/2⌋, ⌊(7−3)/2⌋) = (2, 2).
    assert_eq!(
        cells_of(&grid),
        vec![(3, 2), (4, 3), (2, 4), (3, 4), (4, 4)]
    );
}

#[test]
fn reads_golly_torus_suffix_and_header_variants() {
    let file = open(Format::Rle, "x=2,y=1,rule=b36/s23:T20,10\n2o!").unwrap();
    assert_eq!(file.header().torus, Some((20, 10)));
    assert_eq!(file.header().rule, Some(Rule::parse("B36/S23").unwrap()));
    let square = open(Format::Rle, "x = 1, y = 1, rule = B3/S23:T64\no!").unwrap();
    assert_eq!(square.header().torus, Some((64, 64)));
    let spaced = open(Format::Rle, "X = 1 , Y = 1 , RULE = b3/S23 : t5 , 6\no!").unwrap();
    assert_eq!(spaced.header().torus, Some((5, 6)));
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
        ("x = 2, y = 1, rule = B3/S23:P10,10\n!", "bounded plane"),
        ("x = 2, y = 1, rule = B3/S23:K10,10\n!", "Klein bottle"),
        ("x = 2, y = 1, rule = B3/S23:T10+1,10\n!", "shifted"),
        ("x = 2, y = 1, rule = B3/S23:T0,10\n!", "unbounded"),
        ("x = 2, y = 1\n3o!", "wider than"),
        ("x = 2, y = 1\no$o!", "more rows"),
        ("x = 2, y = 1\n99999999999999999999o!", "run count"),
        ("x = 2, y = 1\nA!", "not a two-state cell"),
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
        assert!(err.starts_with("test:"), "{text:?}: {err}");
    }
    let err = open(Format::Rle, "#C\n\nx = 2, y = 1\no\n\nbbb!")
        .unwrap()
        .place(2, 1)
        .unwrap_err();
    assert!(err.to_string().starts_with("test:6:"), "{err}");
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
    assert!(err.starts_with("test:3:") && err.contains("'X'"), "{err}");
    let empty = open(Format::Cells, "!nothing\n").unwrap();
    assert_eq!((empty.header().width, empty.header().height), (0, 0));
}

#[test]
fn rle_round_trips_with_torus_and_short_lines() {
    for (w, h) in [(1, 1), (3, 2), (64, 5), (150, 40), (333, 17)] {
        let grid = density_soup(w, h, 0.35, w as u64).unwrap();
        let rule = Rule::parse("B36/S23").unwrap();
        let text = String::from_utf8(encode(Format::Rle, &grid, rule)).unwrap();
        assert!(text.starts_with(&format!("x = {w}, y = {h}, rule = B36/S23:T{w},{h}\n")));
        assert!(text.lines().all(|l| l.len() <= 70), "{text}");
        let back = open(Format::Rle, &text).unwrap();
        assert_eq!(back.header().torus, Some((w, h)));
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
    let text = String::from_utf8(encode(Format::Rle, &grid, Rule::LIFE)).unwrap();
    assert_eq!(text, "x = 5, y = 6, rule = B3/S23:T5,6\n$4bo3$o!\n");
    let empty =
        String::from_utf8(encode(Format::Rle, &Grid::new(2, 2).unwrap(), Rule::LIFE)).unwrap();
    assert_eq!(empty, "x = 2, y = 2, rule = B3/S23:T2,2\n!\n");
}

#[test]
fn cells_round_trip() {
    let grid = density_soup(70, 9, 0.5, 3).unwrap();
    let text = String::from_utf8(encode(Format::Cells, &grid, Rule::LIFE)).unwrap();
    let back = open(Format::Cells, &text).unwrap();
    // Trailing dead cells of a row are kept on writing, so the width is the grid's.
    assert_eq!(back.place(70, 9).unwrap(), grid);
}

#[test]
fn png_is_the_picture_of_the_whole_grid() {
    let mut grid = Grid::new(3, 2).unwrap();
    grid.set(1, 0, true);
    let bytes = encode(Format::Png, &grid, Rule::LIFE);
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
    let inflated = PatternFile::from_bytes(Path::new("g.rle"), Format::Rle, packed).unwrap();
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
        write(&path, &grid, Rule::LIFE).unwrap();
        assert_eq!(&std::fs::read(&path).unwrap()[..2], &GZIP_MAGIC);
        let back = PatternFile::open(&path).unwrap();
        assert_eq!(back.place(70, 9).unwrap(), grid, "{name}");
    }
    assert!(write(&dir.path().join("w.png.gz"), &grid, Rule::LIFE).is_err());
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
