//! Pictures and animations from `gol run`: the GIF's frames, size and cells, decoded; PNG views
//! and 3D projections against counts made here; outputs refused before the run.

use std::time::Instant;

use crate::common::{error_of, png_indices, stdout_of};

/// Every frame of the GIF at `path`: (width, height, one palette index a pixel).
fn gif_frames(path: &std::path::Path) -> Vec<(u16, u16, Vec<u8>)> {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::Indexed);
    let mut decoder = options
        .read_info(std::fs::File::open(path).expect("the gif exists"))
        .expect("a GIF");
    let mut frames = Vec::new();
    while let Some(frame) = decoder.read_next_frame().expect("a frame") {
        frames.push((frame.width, frame.height, frame.buffer.to_vec()));
    }
    frames
}

/// The one-pixel-a-cell picture of a glider `bo$2bo$3o!` on a 12×9 torus, placed at
/// (6 − 1, 4 − 1) = (5, 3), its centre on the grid's (⌊12/2⌋, ⌊9/2⌋) as README.md says, moved `steps` cells down and right.
fn glider(steps: usize) -> Vec<u8> {
    let (w, h) = (12, 9);
    let mut cells = vec![0u8; w * h];
    for (x, y) in [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)] {
        let (x, y) = ((x + 5 + steps) % w, (y + 3 + steps) % h);
        cells[y * w + x] = 255;
    }
    cells
}

#[test]
fn a_gif_has_the_frames_asked_for_with_the_cells_of_each() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("glider.rle");
    std::fs::write(&input, "x = 3, y = 3, rule = B3/S23:T12,9\nbo$2bo$3o!\n").unwrap();
    let gif = dir.path().join("run.gif");
    let report = stdout_of(&[
        "run",
        "--input",
        input.to_str().unwrap(),
        "--gens",
        "10",
        "--every",
        "4",
        "--scale",
        "1",
        "--output",
        gif.to_str().unwrap(),
    ]);
    assert!(report.contains("4 frames"), "{report}");
    let frames = gif_frames(&gif);
    // Generations 0, 4, 8 and the last, 10.
    assert_eq!(frames.len(), 4);
    assert!(frames.iter().all(|f| (f.0, f.1) == (12, 9)));
    assert_eq!(frames[0].2, glider(0));
    assert_eq!(frames[1].2, glider(1));
    assert_eq!(frames[2].2, glider(2));

    // --frames: evenly spread, both ends included; the default scale makes it 512 wide.
    stdout_of(&[
        "run",
        "--input",
        input.to_str().unwrap(),
        "--gens",
        "8",
        "--frames",
        "3",
        "--output",
        gif.to_str().unwrap(),
    ]);
    let frames = gif_frames(&gif);
    assert_eq!(frames.len(), 3);
    assert_eq!((frames[0].0, frames[0].1), (516, 387)); // 43 pixels a cell
    let last = &frames[2].2;
    let at = |x: usize, y: usize| last[y * 43 * 516 + x * 43];
    let expected = glider(2);
    for y in 0..9 {
        for x in 0..12 {
            assert_eq!(at(x, y), expected[y * 12 + x], "cell ({x}, {y})");
        }
    }
}

#[test]
fn a_view_wraps_round_the_torus() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("glider.rle");
    std::fs::write(&input, "x = 3, y = 3, rule = B3/S23:T12,9\nbo$2bo$3o!\n").unwrap();
    let gif = dir.path().join("view.gif");
    // A 4×4 window from (10, 7), across both edges: columns 10, 11, 0, 1, rows 7, 8, 0, 1,
    // after 24 generations (the glider 6 cells on: its box at (11, 0)).
    stdout_of(&[
        "run",
        "--input",
        input.to_str().unwrap(),
        "--gens",
        "24",
        "--view",
        "10,7,4,4",
        "--scale",
        "2",
        "--output",
        gif.to_str().unwrap(),
    ]);
    let frames = gif_frames(&gif);
    // Every generation of a run under 100: 0 to 24.
    assert_eq!(frames.len(), 25);
    let last = frames.last().unwrap();
    assert_eq!((last.0, last.1), (8, 8));
    let whole = glider(6);
    assert!(whole.iter().filter(|&&c| c > 0).count() == 5);
    let mut seen = 0;
    for y in 0..4 {
        for x in 0..4 {
            let cell = whole[((7 + y) % 9) * 12 + (10 + x) % 12];
            seen += (cell > 0) as usize;
            assert_eq!(last.2[2 * y * 8 + 2 * x], cell, "({x}, {y})");
        }
    }
    assert!(
        seen >= 2,
        "the window catches part of the glider across the edges"
    );
}

#[test]
fn a_cube_png_is_its_projection() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("c.bin");
    stdout_of(&[
        "run",
        "--dim",
        "3",
        "--size",
        "16",
        "--gens",
        "0",
        "--density",
        "0.3",
        "--output",
        bin.to_str().unwrap(),
    ]);
    let bytes = std::fs::read(&bin).unwrap();
    let cells = &bytes[16..];
    let png = dir.path().join("c.png");
    stdout_of(&[
        "run",
        "--input",
        bin.to_str().unwrap(),
        "--gens",
        "0",
        "--axis",
        "z",
        "--scale",
        "1",
        "--output",
        png.to_str().unwrap(),
    ]);
    let (width, height, _, pixels) = png_indices(&png);
    assert_eq!((width, height), (16, 16));
    // Along z: row x, column y; counts relative to the fullest line.
    let counts: Vec<u64> = (0..256)
        .map(|line| cells[line * 16..][..16].iter().map(|&c| c as u64).sum())
        .collect();
    let most = *counts.iter().max().unwrap();
    for x in 0..16 {
        for y in 0..16 {
            let expected = ((counts[x * 16 + y] * 255 + most / 2) / most) as u8;
            assert_eq!(pixels[x * 16 + y], expected, "({x}, {y})");
        }
    }
}

#[test]
fn outputs_are_checked_before_the_run() {
    let start = Instant::now();
    // A run of minutes, refused at once.
    for (args, expected) in [
        (vec!["--output", "x.xyz"], "unknown output format"),
        (vec!["--output", "x.bin"], ".bin files hold 3D cubes"),
        (
            vec!["--output", "x.rle", "--scale", "2"],
            "apply to .png and .gif",
        ),
        (
            vec!["--output", "x.png", "--frames", "3"],
            "frames of a .gif",
        ),
        (
            vec!["--output", "x.gif", "--frames", "3", "--every", "2"],
            "cannot be used with",
        ),
        (vec!["--output", "x.gif", "--frames", "1"], "at least 2"),
        (
            vec!["--output", "x.png", "--axis", "z"],
            "axis applies to 3D",
        ),
        (vec!["--view", "1,2,3,4"], "draw an --output"),
    ] {
        let mut all = vec!["run", "--size", "16384", "--gens", "100000000"];
        all.extend(args.iter());
        let err = error_of(&all);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert!(start.elapsed().as_secs() < 30, "refused before the run");
    let err = error_of(&[
        "run", "--dim", "3", "--size", "8", "--output", "x.png", "--view", "0,0,2,2",
    ]);
    assert!(err.contains("a view applies to 2D"), "{err}");
}

#[test]
fn a_rule_table_s_colours_colour_its_pictures() {
    let dir = tempfile::tempdir().unwrap();
    // Three states that do nothing (every cell stays as it is), states 1 and 2 coloured.
    crate::common::still_rule(dir.path(), "1 255 128 0 orange\n2 0 0 255\n");
    let rules = dir.path().to_str().unwrap();
    let start = dir.path().join("start.rle");
    std::fs::write(&start, "x = 3, y = 2, rule = Still\nA.B$2B!\n").unwrap();
    let cells = [1u8, 0, 2, 2, 2, 0];
    let (png, gif) = (dir.path().join("s.png"), dir.path().join("s.gif"));
    for (torus, what) in [(true, "torus"), (false, "plane")] {
        // A GIF of the plane frames a wider view than the pattern: a torus's only.
        let outs: &[&std::path::PathBuf] = if torus { &[&png, &gif] } else { &[&png] };
        for out in outs {
            let mut args = vec!["run", "--rules", rules, "--input", start.to_str().unwrap()];
            if torus {
                args.extend(["--width", "3", "--height", "2"]);
            }
            args.extend([
                "--gens",
                "2",
                "--scale",
                "1",
                "--output",
                out.to_str().unwrap(),
            ]);
            stdout_of(&args);
        }
        // Each pixel is its cell's state, and the palette has the file's colours for 1 and
        // 2 (state 0, left to the default, is the dark end of the common palette).
        let (w, h, palette, indices) = png_indices(&png);
        assert_eq!((w, h), (3, 2), "{what}");
        assert_eq!(indices, cells, "{what}");
        assert_eq!(&palette[3..9], &[255, 128, 0, 0, 0, 255], "{what}");
        assert_eq!(&palette[..3], &[68, 1, 84], "{what}");
        if torus {
            let frames = gif_frames(&gif);
            assert!(
                frames.iter().all(|f| f.2 == cells),
                "{what}: the GIF's frames"
            );
        }
    }
    // Without colours, states fade as under Generations rules.
    std::fs::write(
        dir.path().join("Plain.rule"),
        "@RULE Plain\n@TABLE\nn_states:3\nneighborhood:vonNeumann\nsymmetries:none\n",
    )
    .unwrap();
    std::fs::write(&start, "x = 3, y = 2, rule = Plain\nA.B$2B!\n").unwrap();
    let args = [
        "run",
        "--rules",
        rules,
        "--input",
        start.to_str().unwrap(),
        "--width",
        "3",
        "--height",
        "2",
    ];
    stdout_of(
        &[
            &args[..],
            &[
                "--gens",
                "0",
                "--scale",
                "1",
                "--output",
                png.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    let (_, _, _, indices) = png_indices(&png);
    assert_eq!(indices, [255, 0, 128, 128, 128, 0]);
}
