//! `identify` on objects whose periods, speeds and apgcodes Life people know, and on every
//! object of apgsearch's reference hauls in all 8 orientations and every phase.

use std::path::Path;
use std::sync::atomic::AtomicBool;

mod common;

use common::census_ref;
use gol_census::apgcode;
use gol_census::{identify, Cycle, Identity, Verdict};
use gol_core::pattern::PatternFile;
use gol_core::{EngineId, Grid, Rule};
use gol_plane::{Options, Plane, Start};

const OPTIONS: Options = Options {
    memory: 64 << 20,
    threads: 1,
    parallel_level: None,
};

fn plane_of(rle: &str, engine: EngineId) -> Box<dyn Plane> {
    let file = PatternFile::from_bytes(Path::new("t.rle"), rle.as_bytes().to_vec()).unwrap();
    let rule = file.header().rule.unwrap_or(Rule::LIFE);
    gol_plane::new(engine, Start::File(&file), rule, &OPTIONS).unwrap()
}

fn identified(rle: &str) -> Identity {
    let rle = if rle.starts_with('x') {
        rle.to_string()
    } else {
        format!("#CXRLE Pos=0,0\nx = 100, y = 100, rule = B3/S23\n{rle}")
    };
    identify(
        &mut *plane_of(&rle, EngineId::Tiles),
        1 << 12,
        &AtomicBool::new(false),
    )
    .unwrap()
}

fn cycle(identity: &Identity) -> &Cycle {
    match &identity.verdict {
        Verdict::Periodic(cycle) => cycle,
        other => panic!("not periodic: {other:?}"),
    }
}

#[test]
fn known_objects() {
    // (RLE, apgcode, kind, period, mod, speed)
    let known = [
        ("2o$2o!", "xs4_33", "still life", 1, 1, None),
        ("3o!", "xp2_7", "oscillator", 2, 1, None),
        ("b3o$3o!", "xp2_7e", "oscillator", 2, 2, None),
        ("2o$2o$2b2o$2b2o!", "xp2_318c", "oscillator", 2, 2, None),
        ("2bo4bo$2ob4ob2o$2bo4bo!", "xp15_4r4z4r4", "oscillator", 15, 15, None),
        (
            "2b3o3b3o2$o4bobo4bo$o4bobo4bo$o4bobo4bo$2b3o3b3o2$2b3o3b3o$o4bobo4bo$o4bobo4bo$o4bobo4bo2$2b3o3b3o!",
            "xp3_co9nas0san9oczgoldlo0oldlogz1047210127401",
            "oscillator",
            3,
            3,
            None,
        ),
        ("bo$2bo$3o!", "xq4_153", "spaceship", 4, 2, Some("c/4 diagonal")),
        ("bo2bo$o4b$o3bo$4o!", "xq4_6frc", "spaceship", 4, 2, Some("c/2 orthogonal")),
        ("3bo2b$bo3bo$o5b$o4bo$5o!", "xq4_27dee6", "spaceship", 4, 2, Some("c/2 orthogonal")),
        ("3b2o2b$bo4bo$o6b$o5bo$6o!", "xq4_27deee6", "spaceship", 4, 2, Some("c/2 orthogonal")),
    ];
    for (rle, code, kind, period, modulus, speed) in known {
        let identity = identified(rle);
        let cycle = cycle(&identity);
        assert_eq!(cycle.apgcode.as_deref(), Some(code), "{rle}");
        assert_eq!(cycle.kind(), kind, "{rle}");
        assert_eq!(cycle.period, period, "{rle}");
        assert_eq!(cycle.modulus, modulus, "{rle}");
        assert_eq!(cycle.speed().as_deref(), speed, "{rle}");
        assert_eq!(identity.settled_at, 0, "{rle}");
    }
}

#[test]
fn the_blinkers_heat_and_volatility() {
    let blinker = identified("3o!");
    let c = cycle(&blinker);
    // Two cells die and two are born each generation; of the 5 cells ever alive, the centre
    // never changes.
    assert_eq!(c.heat, 4.0);
    assert_eq!(c.temperature, 4.0 / 3.0);
    assert_eq!(c.volatility, Some(0.8));
    assert_eq!(c.populations, (3, 3, 3.0));
    let block = identified("2o$2o!");
    assert_eq!(
        (cycle(&block).heat, cycle(&block).volatility),
        (0.0, Some(0.0))
    );
    // A glider: two cells die and two are born each generation, where they lie.
    let glider = identified("bo$2bo$3o!");
    assert_eq!(cycle(&glider).heat, 4.0);
    assert_eq!(cycle(&glider).volatility, None);
    assert_eq!(cycle(&glider).displacement, (1, 1));
    assert_eq!(glider.bounding_box, Some((0, 0, 3, 3)));
}

#[test]
fn what_settles_dies_or_does_not_repeat() {
    // Three cells of an L become a block at generation 1.
    let pre_block = identified("2o$bo!");
    assert_eq!(pre_block.settled_at, 1);
    assert_eq!(cycle(&pre_block).apgcode.as_deref(), Some("xs4_33"));
    assert_eq!(pre_block.bounding_box, Some((0, 0, 2, 2)));
    // A domino dies at generation 1.
    assert_eq!(
        identified("2o!").verdict,
        Verdict::DiesOut { generation: 1 }
    );
    // The Gosper glider gun never repeats as a whole: its gliders fly off.
    let gun = identified(
        "24bo$22bobo$12b2o6b2o12b2o$11bo3bo4b2o12b2o$2o8bo5bo3b2o$2o8bo3bob2o4bobo$10bo5bo7bo$11bo3bo$12b2o!",
    );
    match gun.verdict {
        Verdict::NotFound {
            limit,
            outgrew: false,
            first,
            most,
            last,
            growth: None,
        } => {
            assert_eq!((limit, first), (1 << 12, 36));
            assert!(most.1 > most.0 && last > 36 * 4, "{most:?} {last}");
        }
        other => panic!("{other:?}"),
    }
    let empty = PatternFile::from_bytes(Path::new("e.rle"), b"x = 0, y = 0\n!".to_vec()).unwrap();
    let mut plane =
        gol_plane::new(EngineId::Tiles, Start::File(&empty), Rule::LIFE, &OPTIONS).unwrap();
    let refused = identify(&mut *plane, 100, &AtomicBool::new(false)).unwrap_err();
    assert!(refused.to_string().contains("empty"), "{refused}");
}

#[test]
fn other_rules_and_engines() {
    // HighLife's replicator never repeats; its B36/S23 blinker does, on every engine.
    for engine in [EngineId::Tiles, EngineId::Hashlife, EngineId::Window] {
        let mut plane = plane_of("x = 3, y = 1, rule = B36/S23\n3o!", engine);
        let identity = identify(&mut *plane, 100, &AtomicBool::new(false)).unwrap();
        assert_eq!(
            cycle(&identity).apgcode.as_deref(),
            Some("xp2_7"),
            "{engine}"
        );
    }
    // A Generations rule (Brian's Brain): no apgcode, but period and speed.
    let mut plane = plane_of("x = 2, y = 2, rule = /2/3\n2o$2B!", EngineId::Hashlife);
    let identity = identify(&mut *plane, 100, &AtomicBool::new(false)).unwrap();
    let c = cycle(&identity);
    assert_eq!((c.period, c.apgcode.as_deref()), (1, None));
    assert_eq!(c.speed().as_deref(), Some("c orthogonal"));
}

#[test]
fn speeds_are_written_as_life_people_write_them() {
    let speed = |period, displacement| {
        Cycle {
            period,
            modulus: period,
            displacement,
            heat: 0.0,
            temperature: 0.0,
            volatility: None,
            populations: (1, 1, 1.0),
            apgcode: None,
        }
        .speed()
        .unwrap()
    };
    assert_eq!(speed(4, (-1, 1)), "c/4 diagonal");
    assert_eq!(speed(4, (0, -2)), "c/2 orthogonal");
    assert_eq!(speed(5, (2, 0)), "2c/5 orthogonal");
    assert_eq!(speed(6, (2, -1)), "(2,1)c/6");
    assert_eq!(speed(12, (4, 2)), "(2,1)c/6");
    assert_eq!(speed(1, (1, 0)), "c orthogonal");
    assert_eq!(speed(7, (1, 3)), "(3,1)c/7");
}

/// The cells as an RLE of Life at the origin.
fn rle_of(cells: &[(i64, i64)]) -> String {
    let (w, h) = (
        cells.iter().map(|c| c.0).max().unwrap() + 1,
        cells.iter().map(|c| c.1).max().unwrap() + 1,
    );
    let mut grid = Grid::new(w as usize, h as usize).unwrap();
    for &(x, y) in cells {
        grid.set(x as usize, y as usize, true);
    }
    let mut text = String::new();
    for y in 0..h as usize {
        for x in 0..w as usize {
            text.push(if grid.get(x, y) { 'o' } else { 'b' });
        }
        text.push('$');
    }
    text.push('!');
    format!("x = {w}, y = {h}, rule = B3/S23\n{text}")
}

#[test]
fn every_object_of_the_reference_hauls_in_every_orientation_and_phase() {
    let Some(folder) = census_ref() else { return };
    let mut codes = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(&folder).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !(name.starts_with("haul-") && name.ends_with("-p1.txt")) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let table = text.split("@CENSUS TABLE").nth(1).unwrap();
        let table = table.split("@SAMPLE_SOUPIDS").next().unwrap();
        for line in table.lines().filter(|l| l.starts_with('x')) {
            codes.insert(line.split_whitespace().next().unwrap().to_string());
        }
    }
    assert!(codes.len() >= 150, "{} codes", codes.len());
    for code in &codes {
        let (prefix, wechsler) = code.split_once('_').unwrap();
        let period: u64 = prefix[2..].parse().unwrap_or(1);
        let cells = apgcode::decode(wechsler).unwrap();
        for orientation in 0..8u8 {
            let turned: Vec<(i64, i64)> = cells
                .iter()
                .map(|&c| apgcode::orient(c, orientation))
                .collect();
            let (left, top) = (
                turned.iter().map(|c| c.0).min().unwrap(),
                turned.iter().map(|c| c.1).min().unwrap(),
            );
            let turned: Vec<(i64, i64)> =
                turned.iter().map(|&(x, y)| (x - left, y - top)).collect();
            let mut plane = plane_of(&rle_of(&turned), EngineId::Tiles);
            let phases = if prefix.starts_with("xs") { 1 } else { period };
            for phase in 0..phases {
                if phase > 0 {
                    plane.step(&1u32.into(), &AtomicBool::new(false)).unwrap();
                }
                let one = gol_plane::new(
                    EngineId::Tiles,
                    Start::File(
                        &PatternFile::from_bytes(Path::new("p.mc"), {
                            let mut out = Vec::new();
                            plane
                                .write(gol_plane::Written::Rle, &0u32.into(), &mut out)
                                .unwrap();
                            out
                        })
                        .unwrap(),
                    ),
                    Rule::LIFE,
                    &OPTIONS,
                );
                let identity =
                    identify(&mut *one.unwrap(), 1 << 12, &AtomicBool::new(false)).unwrap();
                let c = cycle(&identity);
                assert_eq!(
                    c.apgcode.as_deref(),
                    Some(code.as_str()),
                    "orientation {orientation}, phase {phase}"
                );
                assert_eq!(identity.settled_at, 0, "{code}");
            }
        }
    }
}
