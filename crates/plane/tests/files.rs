//! Pattern files on the plane: what is written reads back as the same cells at the same place,
//! near the origin or astronomically far from it, two-state and multi-state.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use gol_core::pattern::PatternFile;
use gol_core::{EngineId, Grid, Rule};
use gol_plane::{Options, Plane, Start, Written};
use num_bigint::{BigInt, BigUint};
use proptest::prelude::*;

fn plane(start: Start<'_>, rule: Rule) -> Box<dyn Plane> {
    let options = Options {
        memory: 16 << 20,
        threads: 1,
        parallel_level: None,
    };
    gol_plane::new(EngineId::Hashlife, start, rule, &options).unwrap()
}

/// `plane` written in `format` and read back.
fn round_trip(plane: &dyn Plane, format: Written, generation: &BigUint) -> Box<dyn Plane> {
    let mut text = Vec::new();
    plane.write(format, generation, &mut text).unwrap();
    let name = match format {
        Written::Rle => "x.rle",
        Written::Macrocell => "x.mc",
    };
    let file = PatternFile::from_bytes(Path::new(name), text).unwrap();
    assert_eq!(&file.header().generation, generation);
    self::plane(Start::File(&file), plane.rule())
}

/// The cells of `a` and `b` agree on their bounding box (and the boxes agree).
fn same_cells(a: &dyn Plane, b: &dyn Plane) {
    let (ba, bb) = (a.bounding_box(), b.bounding_box());
    assert_eq!(ba, bb);
    if let Some(bounds) = ba {
        let (w, h) = bounds.size().unwrap();
        let cells = |p: &dyn Plane| p.cells(&bounds.x, &bounds.y, w as usize, h as usize);
        assert_eq!(cells(a), cells(b));
    }
    assert_eq!(a.population(), b.population());
}

/// A grid of `width` × `height` cells from random `bits`, about a quarter of them alive (which
/// `mix`es the bits differently), and its live cells, (x, y) in the grid, row by row.
fn sparse(
    width: usize,
    height: usize,
    bits: &[u64],
    mix: (usize, usize),
) -> (Grid, Vec<(usize, usize)>) {
    let mut grid = Grid::new(width, height).unwrap();
    let mut live = Vec::new();
    for cy in 0..height {
        for cx in 0..width {
            if (bits[(cy * width + cx) % 8] >> ((cx * mix.0 + cy * mix.1) % 60)) & 3 == 0 {
                grid.set_state(cx, cy, 1);
                live.push((cx, cy));
            }
        }
    }
    (grid, live)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn written_files_read_back_in_place(
        width in 1usize..70,
        height in 1usize..70,
        bits in proptest::collection::vec(any::<u64>(), 8),
        states in prop_oneof![Just(2u32), 3u32..9],
        x in -1_000_000i64..1_000_000,
        y in -1_000_000i64..1_000_000,
        far in any::<bool>(),
    ) {
        let mut grid = Grid::with_states(width, height, states).unwrap();
        for cy in 0..height {
            for cx in 0..width {
                let r = bits[(cy * width + cx) % 8] >> ((cx * 5 + cy * 11) % 58);
                if r & 3 == 0 {
                    grid.set_state(cx, cy, if states > 2 { 1 + (r >> 2) as u32 % (states - 1) } else { 1 });
                }
            }
        }
        let rule = Rule::LIFE.with_states(states).unwrap();
        let original = plane(Start::Grid { grid: &grid, x, y }, rule);
        // Far away: the same RLE with its position moved by 10^40 (right and up).
        let moved = match far {
            false => original,
            true if original.bounding_box().is_none() => original,
            true => {
                let a = original.bounding_box().unwrap();
                let mut text = Vec::new();
                original.write(Written::Rle, &BigUint::from(0u32), &mut text).unwrap();
                let text = String::from_utf8(text).unwrap();
                let offset = BigInt::from(10u32).pow(40);
                let pos = format!("#CXRLE Pos={},{}", &a.x + &offset, &a.y - &offset);
                let first = text.lines().next().unwrap().split(' ').take(2).collect::<Vec<_>>().join(" ");
                let text = text.replacen(&first, &pos, 1);
                let file = PatternFile::from_bytes(Path::new("far.rle"), text.into_bytes()).unwrap();
                let moved = plane(Start::File(&file), rule);
                let b = moved.bounding_box().unwrap();
                prop_assert_eq!((&b.x - &offset, &b.y + &offset), (a.x.clone(), a.y.clone()));
                prop_assert_eq!(moved.population(), original.population());
                let (w, h) = a.size().unwrap();
                let (w, h) = (w as usize, h as usize);
                prop_assert_eq!(moved.cells(&b.x, &b.y, w, h), original.cells(&a.x, &a.y, w, h));
                moved
            }
        };
        let generation = BigUint::from(7u32).pow(30);
        for format in [Written::Rle, Written::Macrocell] {
            same_cells(&*moved, &*round_trip(&*moved, format, &generation));
        }
    }
}

#[test]
fn stepped_planes_write_what_they_hold() {
    let glider = Grid::from_bytes(3, 3, &[0, 1, 0, 0, 0, 1, 1, 1, 1]).unwrap();
    let mut p = plane(
        Start::Grid {
            grid: &glider,
            x: -1,
            y: -1,
        },
        Rule::LIFE,
    );
    let far = BigUint::from(2u32).pow(200);
    p.step(&far, &AtomicBool::new(false)).unwrap();
    for format in [Written::Rle, Written::Macrocell] {
        same_cells(&*p, &*round_trip(&*p, format, &far));
    }
    let b = p.bounding_box().unwrap();
    assert_eq!(b.x, BigInt::from(far / 4u32) - 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn block_populations_count_the_cells_of_each_block_at_every_level(
        width in 1usize..40,
        height in 1usize..40,
        bits in proptest::collection::vec(any::<u64>(), 8),
        x in -1000i64..1000,
        y in -1000i64..1000,
        vx in -3000i64..3000,
        vy in -3000i64..3000,
        columns in 1usize..9,
        rows in 1usize..9,
        level in 0u32..16,
    ) {
        let (grid, live) = sparse(width, height, &bits, (5, 11));
        let plane = plane(Start::Grid { grid: &grid, x, y }, Rule::LIFE);
        let counts = plane.block_populations(&vx.into(), &vy.into(), columns, rows, level);
        // Blocks lie on the tree's grid: the corner moves to the block holding (vx, vy).
        let (bx, by) = gol_plane::tree::block_corner(&vx.into(), &vy.into(), level);
        let (bx, by): (i64, i64) = (bx.try_into().unwrap(), by.try_into().unwrap());
        prop_assert!(bx <= vx && vx - bx < 1 << level && by <= vy && vy - by < 1 << level);
        let mut want = vec![0u64; columns * rows];
        for (cx, cy) in live {
            let (i, j) = ((x + cx as i64 - bx) >> level, (y + cy as i64 - by) >> level);
            if (0..columns as i64).contains(&i) && (0..rows as i64).contains(&j) {
                want[j as usize * columns + i as usize] += 1;
            }
        }
        prop_assert_eq!(&counts, &want);
        // Tiles count the same blocks.
        let options = Options { memory: 16 << 20, threads: 1, parallel_level: None };
        let tiles = gol_plane::new(EngineId::Tiles, Start::Grid { grid: &grid, x, y }, Rule::LIFE, &options).unwrap();
        prop_assert_eq!(tiles.block_populations(&vx.into(), &vy.into(), columns, rows, level), want);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn files_read_straight_into_tiles_in_place(
        width in 1usize..150,
        height in 1usize..90,
        bits in proptest::collection::vec(any::<u64>(), 8),
        x in -1_000_000i64..1_000_000,
        y in -1_000_000i64..1_000_000,
    ) {
        let (grid, _) = sparse(width, height, &bits, (5, 11));
        let options = Options { memory: 16 << 20, threads: 1, parallel_level: None };
        let hashed = plane(Start::Grid { grid: &grid, x, y }, Rule::LIFE);
        let tiles = gol_plane::new(EngineId::Tiles, Start::Grid { grid: &grid, x, y }, Rule::LIFE, &options).unwrap();
        same_cells(&*hashed, &*tiles);
        let mut text = Vec::new();
        hashed.write(Written::Rle, &BigUint::from(0u32), &mut text).unwrap();
        let file = PatternFile::from_bytes(Path::new("x.rle"), text).unwrap();
        let read = gol_plane::new(EngineId::Tiles, Start::File(&file), Rule::LIFE, &options).unwrap();
        same_cells(&*hashed, &*read);
        // And tiles write what they hold.
        same_cells(&*hashed, &*round_trip(&*read, Written::Macrocell, &BigUint::from(9u32)));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Cells given out of row order (a Life 1.06 file's list, rows of leaves already made into
    /// nodes before cells of theirs come again) build the same plane as the same cells in order.
    #[test]
    fn cells_in_any_order_make_the_same_plane(
        width in 1usize..100,
        height in 1usize..100,
        bits in proptest::collection::vec(any::<u64>(), 8),
        x in -1000i64..1000,
        y in -1000i64..1000,
        late in 0usize..20,
        shuffled in any::<bool>(),
    ) {
        let (grid, live) = sparse(width, height, &bits, (7, 13));
        let live: Vec<(i64, i64)> =
            live.into_iter().map(|(cx, cy)| (x + cx as i64, y + cy as i64)).collect();
        // In row order but for every `late`-th cell, which comes after all the others; or in
        // an order that jumps about.
        let order: Vec<(i64, i64)> = match shuffled {
            false if late > 0 => {
                let (now, after): (Vec<_>, Vec<_>) =
                    live.iter().enumerate().partition(|(i, _)| i % (late + 1) != late);
                now.into_iter().chain(after).map(|(_, &c)| c).collect()
            }
            false => live.clone(),
            true => {
                let mut order = live.clone();
                order.sort_by_key(|&(cx, cy)| (cx * 31 + cy * 17).rem_euclid(101));
                order
            }
        };
        let mut text = String::from("#Life 1.06\n");
        for (cx, cy) in order {
            text += &format!("{cx} {cy}\n");
        }
        let file = PatternFile::from_bytes(Path::new("x.lif"), text.into_bytes()).unwrap();
        let read = plane(Start::File(&file), Rule::LIFE);
        same_cells(&*plane(Start::Grid { grid: &grid, x, y }, Rule::LIFE), &*read);
    }
}

/// A file of more cells than tiles are made from is refused by tiles, its cells counted before
/// any tile is made, and read by HashLife.
#[test]
fn tiles_refuse_a_file_of_more_than_their_most_cells_by_its_count() {
    let side = 7500;
    let mut text = format!("x = {side}, y = {side}\n");
    for _ in 0..side {
        text += &format!("{side}o$\n");
    }
    text += "!\n";
    let file = PatternFile::from_bytes(Path::new("x.rle"), text.into_bytes()).unwrap();
    let options = Options {
        memory: 16 << 20,
        threads: 1,
        parallel_level: None,
    };
    let Err(refused) = gol_plane::new(EngineId::Tiles, Start::File(&file), Rule::LIFE, &options)
    else {
        panic!("tiles took {} cells", side * side);
    };
    assert!(
        refused
            .to_string()
            .starts_with("the file's cells are more than tiles are made from (50000000)"),
        "{refused}"
    );
    let hashed = plane(Start::File(&file), Rule::LIFE);
    assert_eq!(hashed.population(), BigUint::from((side * side) as u64));
}
