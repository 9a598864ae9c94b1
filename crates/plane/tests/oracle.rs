//! The plane against the oracle: `cpu-scalar` on a torus large enough that nothing reaches its
//! edge in the generations run gives the plane's cells exactly.

use std::sync::atomic::AtomicBool;

use gol_core::rule::Family;
use gol_core::{cpu, Engine, Grid, Rule};
use gol_plane::{Options, Plane, Start, Stepped};
use num_bigint::{BigInt, BigUint};
use proptest::prelude::*;

/// The torus margin for `gens` generations: light speed is one cell a generation.
fn margin(gens: u64) -> usize {
    gens as usize + 2
}

/// `pattern` run `gens` generations by cpu-scalar, centred on a torus `margin` wider on each
/// side: the torus, and Golly's coordinates of its top-left cell.
fn oracle(pattern: &Grid, rule: Rule, gens: u64) -> (Grid, i64, i64) {
    let m = margin(gens);
    let (w, h) = (pattern.width() + 2 * m, pattern.height() + 2 * m);
    let mut torus = Grid::with_states(w, h, rule.states()).unwrap();
    torus.paste(pattern, m, m).unwrap();
    let mut engine = cpu::Scalar::default();
    engine.load(&torus, rule).unwrap();
    engine.step(gens).unwrap();
    (engine.snapshot().unwrap(), -(m as i64), -(m as i64))
}

fn plane_of(pattern: &Grid, rule: Rule, memory: u64, threads: usize) -> Box<dyn Plane> {
    // Results are parallel tasks from level 6 up, so that the small patterns here run the
    // threads' claims and helping.
    let start = Start::Grid {
        grid: pattern,
        x: 0,
        y: 0,
    };
    gol_plane::new(
        gol_core::EngineId::Hashlife,
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
fn assert_matches(plane: &dyn Plane, (torus, x0, y0): &(Grid, i64, i64), what: &str) {
    let (w, h) = (torus.width(), torus.height());
    let cells = plane.cells(&BigInt::from(*x0), &BigInt::from(*y0), w, h);
    let want = torus.to_states();
    if let Some(i) = (0..cells.len()).find(|&i| cells[i] != want[i]) {
        panic!(
            "{what}: cell ({}, {}) is {} on the plane, {} by the oracle",
            x0 + (i % w) as i64,
            y0 + (i / w) as i64,
            cells[i],
            want[i]
        );
    }
    assert_eq!(
        plane.population(),
        BigUint::from(torus.population()),
        "{what}: population"
    );
    match plane.bounding_box() {
        None => assert_eq!(torus.population(), 0, "{what}"),
        Some(b) => {
            let (x, y) = b.corner().unwrap();
            let (bw, bh) = b.size().unwrap();
            assert!(
                x >= *x0
                    && y >= *y0
                    && x + bw as i64 <= x0 + w as i64
                    && y + bh as i64 <= y0 + h as i64,
                "{what}: bounding box {b} outside the torus"
            );
        }
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

fn rule_from(family: usize, bits: u64, states: u32) -> Rule {
    let mut seed = bits;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        seed >> 11
    };
    let mut rule = Rule::random(Family::ALL[family % 4], &mut next);
    // No B0 on the plane.
    while rule.birth_mask() & 1 != 0 {
        rule = Rule::random(Family::ALL[family % 4], &mut next);
    }
    rule.with_states(states).unwrap()
}

#[test]
fn life_patterns_match_the_oracle_over_many_steps() {
    let bits: Vec<u64> = (1..40u64)
        .map(|k| k.wrapping_mul(0x9e3779b97f4a7c15))
        .collect();
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_rule_matches_the_oracle(
        family in 0usize..4,
        rule_bits in any::<u64>(),
        generations_rule in any::<bool>(),
        states in 3u32..7,
        width in 1usize..40,
        height in 1usize..40,
        bits in proptest::collection::vec(any::<u64>(), 4),
        gens in 0u64..80,
        split in 1u64..7,
        threads in 1usize..4,
    ) {
        let states = if generations_rule { states } else { 2 };
        let rule = rule_from(family, rule_bits, states);
        let pattern = random_pattern(width, height, states, &bits);
        let mut plane = plane_of(&pattern, rule, 32 << 20, threads);
        let stop = AtomicBool::new(false);
        // In two steps, split where the case says.
        let first = gens * split / 7;
        plane.step(&BigUint::from(first), &stop).unwrap();
        plane.step(&BigUint::from(gens - first), &stop).unwrap();
        assert_matches(&*plane, &oracle(&pattern, rule, gens), &format!("{rule}, {gens} generations"));
    }
}

#[test]
fn a_small_memory_cap_collects_garbage_and_stays_exact() {
    let bits: Vec<u64> = (1..40u64)
        .map(|k| k.wrapping_mul(0xd1b54a32d192ed03))
        .collect();
    let pattern = random_pattern(120, 120, 2, &bits);
    let stop = AtomicBool::new(false);
    // A few thousand nodes: far fewer than a few hundred generations of this soup make.
    let mut plane = plane_of(&pattern, Rule::LIFE, 150 << 10, 2);
    plane.step(&BigUint::from(500u32), &stop).unwrap();
    let details = plane.details();
    // "… N garbage collections (M within a step), …": one step of 500 generations, so the
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
        &oracle(&pattern, Rule::LIFE, 500),
        "after 500 under a small cap",
    );
}

#[test]
fn several_threads_claim_and_help_and_stay_exact() {
    // A 256² soup for 600 generations, whose nodes reach level 12, stepped by 4 threads (more
    // than this machine may have: they interleave), results parallel from level 6.
    let bits: Vec<u64> = (1..64u64)
        .map(|k| k.wrapping_mul(0xa076_1d64_78bd_642f))
        .collect();
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
