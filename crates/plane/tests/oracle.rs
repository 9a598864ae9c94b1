//! The plane against the oracle: `cpu-scalar` on a torus large enough that nothing reaches its
//! edge in the generations run gives the plane's cells exactly.

use std::sync::atomic::AtomicBool;

use gol_core::rule::Family;
use gol_core::{Grid, Rule, RuleTable};
use gol_plane::check::{self, Expected};
use gol_plane::store::Store;
use gol_plane::{files, Bits, HashLife, Leaf, Options, Plane, Start, Stepped};
use num_bigint::{BigInt, BigUint};
use proptest::prelude::*;

/// `pattern` run `gens` generations by the oracle.
fn oracle(pattern: &Grid, rule: Rule, gens: u64) -> Expected {
    check::oracle(pattern, rule, gens).unwrap()
}

fn plane_of(pattern: &Grid, rule: Rule, memory: u64, threads: usize) -> Box<dyn Plane> {
    plane_on(gol_core::EngineId::Hashlife, pattern, rule, memory, threads)
}

fn plane_on(
    engine: gol_core::EngineId,
    pattern: &Grid,
    rule: Rule,
    memory: u64,
    threads: usize,
) -> Box<dyn Plane> {
    // Results are parallel tasks from level 6 up, so that the small patterns here run the
    // threads' claims and helping.
    let start = Start::Grid {
        grid: pattern,
        x: 0,
        y: 0,
    };
    gol_plane::new(
        engine,
        start,
        rule,
        &Options {
            memory,
            threads,
            parallel_level: Some(6),
        },
    )
    .unwrap()
}

/// Checks that `plane` holds the oracle's torus exactly, and nothing outside it.
fn assert_matches(plane: &dyn Plane, expected: &Expected, what: &str) {
    if let Some(difference) = check::difference(plane, expected) {
        panic!("{what}: {difference}");
    }
}

fn random_pattern(width: usize, height: usize, states: u32, bits: &[u64]) -> Grid {
    let mut grid = Grid::with_states(width, height, states).unwrap();
    for y in 0..height {
        for x in 0..width {
            let r = bits[(y * width + x) % bits.len()] >> ((x * 7 + y * 3) % 60);
            if r & 3 == 0 {
                let state = if states > 2 && r & 12 == 4 {
                    1 + (r >> 4) as u32 % (states - 1)
                } else {
                    1
                };
                grid.set_state(x, y, state);
            }
        }
    }
    grid
}

/// The words `multiplier` × k for k in 1..`end`: bits that look random enough for a soup.
fn multiples(end: u64, multiplier: u64) -> Vec<u64> {
    (1..end).map(|k| k.wrapping_mul(multiplier)).collect()
}

/// A stream of pseudo-random numbers from `seed` (a linear congruential generator).
fn numbers(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        seed >> 11
    }
}

/// Steps `plane` `gens` generations in two steps, split at `split` sevenths, and checks it
/// against the oracle's run of `pattern` under `rule`.
fn step_in_two_and_check(plane: &mut dyn Plane, pattern: &Grid, rule: Rule, gens: u64, split: u64) {
    let stop = AtomicBool::new(false);
    let first = gens * split / 7;
    plane.step(&BigUint::from(first), &stop).unwrap();
    plane.step(&BigUint::from(gens - first), &stop).unwrap();
    assert_matches(
        plane,
        &oracle(pattern, rule, gens),
        &format!("{rule}, {gens} generations"),
    );
}

fn rule_from(family: usize, bits: u64, states: u32) -> Rule {
    let mut next = numbers(bits);
    let mut rule = Rule::random(Family::ALL[family % 4], &mut next);
    // No B0 on the plane.
    while rule.birth_mask() & 1 != 0 {
        rule = Rule::random(Family::ALL[family % 4], &mut next);
    }
    rule.with_states(states).unwrap()
}

#[test]
fn a_line_grows_at_light_speed_and_the_oracle_reaches_as_far() {
    // A row of 60 live cells grows into empty space at c for a while (each generation the rows
    // beside it are born): the oracle's torus must be as wide as light speed reaches, not the
    // c/2 that Life's sustained growth keeps to.
    let mut pattern = Grid::with_states(60, 1, 2).unwrap();
    for x in 0..60 {
        pattern.set_state(x, 0, 1);
    }
    let stop = AtomicBool::new(false);
    let mut plane = plane_of(&pattern, Rule::LIFE, 64 << 20, 1);
    plane.step(&BigUint::from(20u32), &stop).unwrap();
    assert_matches(
        &*plane,
        &oracle(&pattern, Rule::LIFE, 20),
        "a line, 20 generations",
    );
    let size = plane.bounding_box().and_then(|b| b.size()).unwrap();
    assert_eq!(size.1, 41, "20 rows out on each side");
}

#[test]
fn life_patterns_match_the_oracle_over_many_steps() {
    let bits = multiples(40, 0x9e3779b97f4a7c15);
    let pattern = random_pattern(37, 29, 2, &bits);
    let stop = AtomicBool::new(false);
    let mut plane = plane_of(&pattern, Rule::LIFE, 64 << 20, 2);
    let mut done = 0u64;
    for n in [1u64, 3, 8, 5, 16, 27, 64, 2, 100] {
        let (taken, how) = plane.step(&BigUint::from(n), &stop).unwrap();
        assert_eq!((taken, how), (BigUint::from(n), Stepped::Done));
        done += n;
        assert_matches(
            &*plane,
            &oracle(&pattern, Rule::LIFE, done),
            &format!("after {done}"),
        );
    }
}

#[test]
fn a_step_stopped_among_tasks_goes_on_exactly() {
    // Four threads share the step as tasks (from level 6); a stop lands while they run, or
    // after. Whatever was memoised or put aside then, the rest of the run must be exact.
    let bits = multiples(48, 0x94d0_49bb_1331_11eb);
    let pattern = random_pattern(256, 256, 2, &bits);
    let mut plane = plane_of(&pattern, Rule::LIFE, 256 << 20, 4);
    let mut done = BigUint::from(0u32);
    for wait_ms in [1u64, 4, 16] {
        let stop = AtomicBool::new(false);
        let (taken, _) = std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(wait_ms));
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            });
            plane.step(&BigUint::from(511u32), &stop).unwrap()
        });
        done += taken;
    }
    let total = 900u32;
    let rest = BigUint::from(total) - &done;
    let (taken, how) = plane.step(&rest, &AtomicBool::new(false)).unwrap();
    assert_eq!((taken, how), (rest, Stepped::Done));
    assert_matches(
        &*plane,
        &oracle(&pattern, Rule::LIFE, total as u64),
        &format!("stopped after {done} generations, then run on to {total}"),
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// On HashLife, or on the window, which also runs B0 rules (kept complemented as Golly
    /// keeps them; `crates/cli/tests/end_to_end/strips.rs` checks them against bgolly).
    #[test]
    fn any_rule_matches_the_oracle(
        family in 0usize..4,
        rule_bits in any::<u64>(),
        generations_rule in any::<bool>(),
        window in any::<bool>(),
        b0 in any::<bool>(),
        states in 3u32..7,
        width in 1usize..40,
        height in 1usize..40,
        bits in proptest::collection::vec(any::<u64>(), 4),
        gens in 0u64..80,
        split in 1u64..7,
        threads in 1usize..4,
    ) {
        let b0 = window && b0;
        let states = if generations_rule && !b0 { states } else { 2 };
        let mut rule = rule_from(family, rule_bits, states);
        if b0 {
            rule = Rule::parse(&rule.to_string().replacen('B', "B0", 1)).unwrap();
        }
        prop_assert_eq!(rule.births_on_nothing(), b0);
        let pattern = random_pattern(width, height, states, &bits);
        let engine = match window {
            true => gol_core::EngineId::Window,
            false => gol_core::EngineId::Hashlife,
        };
        let mut plane = plane_on(engine, &pattern, rule, 32 << 20, threads);
        // In two steps, split where the case says.
        step_in_two_and_check(&mut *plane, &pattern, rule, gens, split);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn any_rule_table_matches_the_oracle(
        rule_bits in any::<u64>(),
        eight in any::<bool>(),
        states in 2u32..9,
        width in 1usize..30,
        height in 1usize..30,
        bits in proptest::collection::vec(any::<u64>(), 4),
        gens in 0u64..60,
        split in 1u64..7,
        threads in 1usize..4,
    ) {
        let table = RuleTable::random(states, eight, &mut numbers(rule_bits));
        let rule = Rule::from_table(gol_core::rule::table::intern(table));
        let pattern = random_pattern(width, height, states, &bits);
        let mut plane = plane_of(&pattern, rule, 32 << 20, threads);
        step_in_two_and_check(&mut *plane, &pattern, rule, gens, split);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn any_larger_than_life_rule_on_the_window_matches_the_oracle(
        rule_bits in any::<u64>(),
        width in 1usize..30,
        height in 1usize..30,
        bits in proptest::collection::vec(any::<u64>(), 4),
        gens in 0u64..30,
        split in 1u64..7,
        threads in 1usize..4,
    ) {
        let (larger, states) = gol_core::rule::Larger::random(4, &mut numbers(rule_bits));
        let rule = Rule::from_larger(larger, states);
        let pattern = random_pattern(width, height, 2, &bits);
        let mut plane = plane_on(gol_core::EngineId::Window, &pattern, rule, 32 << 20, threads);
        step_in_two_and_check(&mut *plane, &pattern, rule, gens, split);
    }
}

#[test]
fn a_small_memory_cap_collects_garbage_and_stays_exact() {
    let bits = multiples(64, 0xd1b54a32d192ed03);
    let pattern = random_pattern(160, 160, 2, &bits);
    let stop = AtomicBool::new(false);
    // The least cap (4 MiB, about 97,000 nodes at most): far fewer than a thousand
    // generations of this soup make.
    let mut plane = plane_of(&pattern, Rule::LIFE, 4 << 20, 2);
    plane.step(&BigUint::from(1000u32), &stop).unwrap();
    let details = plane.details();
    // "… N garbage collections (M within a step), …": one step of 1000 generations, so the
    // collections happen in the middle of it, both threads stopped.
    let within: u64 = details
        .split(" garbage collections (")
        .nth(1)
        .and_then(|last| last.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(within > 0, "{details}");
    assert_matches(
        &*plane,
        &oracle(&pattern, Rule::LIFE, 1000),
        "after 1000 under a small cap",
    );
}

#[test]
fn several_threads_claim_and_help_and_stay_exact() {
    // A 256² soup for 600 generations, whose nodes reach level 12, stepped by 4 threads (more
    // than this machine may have: they interleave), results parallel from level 6.
    let bits = multiples(64, 0xa076_1d64_78bd_642f);
    let pattern = random_pattern(256, 256, 2, &bits);
    let stop = AtomicBool::new(false);
    let mut plane = plane_of(&pattern, Rule::LIFE, 256 << 20, 4);
    for n in [600u64, 255] {
        plane.step(&BigUint::from(n), &stop).unwrap();
    }
    assert_matches(
        &*plane,
        &oracle(&pattern, Rule::LIFE, 855),
        "four threads, 855 generations",
    );
    // "… N results computed (M helping)": threads met each other's claims and helped.
    let details = plane.details();
    let helping: u64 = details
        .rsplit('(')
        .next()
        .and_then(|last| last.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(helping > 0, "{details}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn tiles_match_the_oracle_under_any_two_state_rule(
        family in 0usize..4,
        rule_bits in any::<u64>(),
        life in any::<bool>(),
        width in 1usize..150,
        height in 1usize..150,
        bits in proptest::collection::vec(any::<u64>(), 4),
        gens in 0u64..160,
        split in 1u64..7,
        threads in 1usize..4,
    ) {
        let rule = if life { Rule::LIFE } else { rule_from(family, rule_bits, 2) };
        let pattern = random_pattern(width, height, 2, &bits);
        let mut plane = plane_on(gol_core::EngineId::Tiles, &pattern, rule, 64 << 20, threads);
        let stop = AtomicBool::new(false);
        let first = gens * split / 7;
        plane.step(&BigUint::from(first), &stop).unwrap();
        plane.step(&BigUint::from(gens - first), &stop).unwrap();
        assert_matches(&*plane, &oracle(&pattern, rule, gens), &format!("tiles, {rule}, {gens} generations"));
    }
}

/// The counts of "… tile steps: C computed of T (…)": computed, and all.
fn tile_steps(details: &str) -> (u64, u64) {
    let n = |after: &str| -> u64 {
        let tail = details.split(after).next().unwrap();
        tail.rsplit(' ').next().unwrap().parse().unwrap()
    };
    (n(" computed of"), n(" (the rest"))
}

#[test]
fn tiles_leave_settled_ash_alone_and_stay_exact() {
    // A 100² Life soup for 1000 generations: its ash (blinkers beside still lifes) is left
    // alone, its gliders leave and their tiles are dropped.
    let bits = multiples(64, 0x2545_f491_4f6c_dd1d);
    let pattern = random_pattern(100, 100, 2, &bits);
    let stop = AtomicBool::new(false);
    let mut plane = plane_on(gol_core::EngineId::Tiles, &pattern, Rule::LIFE, 64 << 20, 2);
    let mut done = 0;
    for n in [1u64, 99, 900] {
        plane.step(&BigUint::from(n), &stop).unwrap();
        done += n;
        assert_matches(
            &*plane,
            &oracle(&pattern, Rule::LIFE, done),
            &format!("tiles after {done}"),
        );
    }
    // Most of the ash is left alone.
    let (computed, all) = tile_steps(&plane.details());
    assert!(computed > 0 && computed < all, "{}", plane.details());
}

#[test]
fn tiles_shared_among_threads_stay_exact() {
    // An 1100² soup (some 300 tiles) has enough tiles to look at a generation for them to be
    // shared among the threads (a small pattern's are looked at on one).
    let mut next = numbers(0x5851_f42d_4c95_7f2d);
    let bits: Vec<u64> = (0..1021).map(|_| next()).collect();
    let pattern = random_pattern(1100, 1100, 2, &bits);
    let stop = AtomicBool::new(false);
    let mut plane = plane_on(
        gol_core::EngineId::Tiles,
        &pattern,
        Rule::LIFE,
        256 << 20,
        3,
    );
    plane.step(&BigUint::from(60u32), &stop).unwrap();
    assert_matches(
        &*plane,
        &oracle(&pattern, Rule::LIFE, 60),
        "an 1100² soup on three threads",
    );
}

#[test]
fn still_lifes_on_tiles_sleep() {
    // A block and, two tiles away, a beehive: after the first generations nothing is computed.
    let mut pattern = Grid::new(200, 4).unwrap();
    for (x, y) in [
        (0, 0),
        (1, 0),
        (0, 1),
        (1, 1),
        (181, 0),
        (182, 0),
        (180, 1),
        (183, 1),
        (181, 2),
        (182, 2),
    ] {
        pattern.set_state(x, y, 1);
    }
    let stop = AtomicBool::new(false);
    let mut plane = plane_on(gol_core::EngineId::Tiles, &pattern, Rule::LIFE, 16 << 20, 1);
    plane.step(&BigUint::from(3u32), &stop).unwrap();
    let (before, _) = tile_steps(&plane.details());
    plane.step(&BigUint::from(200u32), &stop).unwrap();
    let (computed, all) = tile_steps(&plane.details());
    assert_eq!(computed, before, "{}", plane.details());
    assert!(all >= 200, "{}", plane.details());
    assert_matches(&*plane, &oracle(&pattern, Rule::LIFE, 203), "still lifes");
}

#[test]
fn a_glider_on_tiles_keeps_only_the_tiles_round_it() {
    let glider = gol_core::pattern::PatternFile::from_bytes(
        std::path::Path::new("g.rle"),
        b"x = 3, y = 3\nbo$2bo$3o!\n".to_vec(),
    )
    .unwrap();
    let mut plane = gol_plane::new(
        gol_core::EngineId::Tiles,
        Start::File(&glider),
        Rule::LIFE,
        &Options {
            memory: 16 << 20,
            threads: 1,
            parallel_level: None,
        },
    )
    .unwrap();
    plane
        .step(&BigUint::from(4000u32), &AtomicBool::new(false))
        .unwrap();
    let b = plane.bounding_box().unwrap();
    assert_eq!((b.x, b.y), (1000.into(), 1000.into()));
    assert_eq!(plane.population(), BigUint::from(5u32));
    // Sixteen tiles' worth of travel, yet only the few round the glider remain.
    assert!(plane.memory_bytes() < 10 * 1200, "{}", plane.details());
}

fn auto_of(pattern: &Grid, rule: Rule, threads: usize) -> Box<dyn Plane> {
    let start = Start::Grid {
        grid: pattern,
        x: 0,
        y: 0,
    };
    let options = Options {
        memory: 64 << 20,
        threads,
        parallel_level: None,
    };
    gol_plane::auto(start, rule, &options).unwrap()
}

#[test]
fn auto_races_the_engines_and_stays_exact() {
    // A 400² soup for a million generations, long enough to be raced (a slice is 0.25 s):
    // whichever engine runs each part, the cells are those of HashLife alone (checked against
    // the oracle above).
    let bits = multiples(64, 0x9fb2_1c65_1e98_df25);
    let pattern = random_pattern(400, 400, 2, &bits);
    let stop = AtomicBool::new(false);
    let gens = BigUint::from(1_000_000u32);
    let mut plane = auto_of(&pattern, Rule::LIFE, 2);
    plane.step(&gens, &stop).unwrap();
    let moves: u64 = plane
        .details()
        .split(" moves between engines")
        .next()
        .and_then(|head| head.rsplit('(').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(moves >= 1, "{}", plane.details());
    let mut hashlife = plane_of(&pattern, Rule::LIFE, 256 << 20, 2);
    hashlife.step(&gens, &stop).unwrap();
    assert_eq!(plane.population(), hashlife.population());
    let b = hashlife.bounding_box().unwrap();
    assert_eq!(plane.bounding_box(), Some(b.clone()));
    // The settled soup's middle (its gliders are far apart by now).
    let (x, y) = (BigInt::from(-200), BigInt::from(-200));
    assert_eq!(
        plane.cells(&x, &y, 800, 800),
        hashlife.cells(&x, &y, 800, 800)
    );
}

#[test]
fn hashlife_replanted_with_another_pattern_runs_it_as_a_fresh_one_does() {
    // auto's HashLife, taken off a pattern and given it back later from tiles, keeps what it
    // memoised: the pattern planted in its store (mostly the same nodes as the one before,
    // some changed) runs as it does in a fresh store, under steps whose memoised results the
    // two share (2^5 after 2^5) and others, counts that are not powers of two included.
    let rule = Rule::LIFE;
    let first = random_pattern(90, 70, 2, &multiples(64, 0x9fb2_1c65_1e98_df25));
    let mut second = first.clone();
    for y in 20..35 {
        for x in 10..60 {
            second.set_state(x, y, u32::from((x * y) % 3 == 0));
        }
    }
    let stop = AtomicBool::new(false);
    let hashlife = |grid: &Grid| {
        let store = Store::new(64 << 20, Bits::LEVEL).unwrap();
        let tree = files::from_grid(grid, 0, 0, store, Bits::new(&rule)).unwrap();
        HashLife::new(tree, 2, Some(6)).unwrap()
    };
    let mut replanted = hashlife(&first);
    replanted.step(&BigUint::from(32u32), &stop).unwrap();
    let mut replanted = replanted
        .replanted(|store, leaf| files::from_grid(&second, 0, 0, store, leaf))
        .unwrap();
    let mut fresh = hashlife(&second);
    for gens in [32u32, 32, 300, 1, 7] {
        let gens = BigUint::from(gens);
        assert_eq!(replanted.step(&gens, &stop).unwrap().0, gens);
        fresh.step(&gens, &stop).unwrap();
        let (a, b) = (replanted.tree(), fresh.tree());
        assert_eq!(a.population(), b.population());
        let bounds = b.bounding_box().unwrap();
        assert_eq!(a.bounding_box(), Some(bounds.clone()));
        let (w, h) = bounds.size().unwrap();
        assert_eq!(
            a.cells(&bounds.x, &bounds.y, w as usize, h as usize),
            b.cells(&bounds.x, &bounds.y, w as usize, h as usize)
        );
    }
}

#[test]
fn auto_moves_a_long_run_onto_hashlife() {
    // A glider for 2^40 generations: tiles would take hours; the race hands it to HashLife.
    let mut glider = Grid::new(3, 3).unwrap();
    for (x, y) in [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)] {
        glider.set_state(x, y, 1);
    }
    let mut plane = auto_of(&glider, Rule::LIFE, 1);
    assert_eq!(plane.engine(), gol_core::EngineId::Tiles);
    let (taken, _) = plane
        .step(&(BigUint::from(1u32) << 40), &AtomicBool::new(false))
        .unwrap();
    assert_eq!(taken, BigUint::from(1u32) << 40);
    assert_eq!(
        plane.engine(),
        gol_core::EngineId::Hashlife,
        "{}",
        plane.details()
    );
    let b = plane.bounding_box().unwrap();
    assert_eq!((b.x, b.y), ((1i64 << 38).into(), (1i64 << 38).into()));
}

#[test]
fn auto_runs_generations_rules_on_hashlife() {
    let rule = Rule::parse("345/2/4").unwrap();
    let bits = multiples(9, 0x9e37_79b9_7f4a_7c15);
    let pattern = random_pattern(30, 30, 4, &bits);
    let mut plane = auto_of(&pattern, rule, 1);
    assert_eq!(plane.engine(), gol_core::EngineId::Hashlife);
    plane
        .step(&BigUint::from(40u32), &AtomicBool::new(false))
        .unwrap();
    assert_matches(&*plane, &oracle(&pattern, rule, 40), "auto, Generations");
}
