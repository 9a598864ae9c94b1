//! Property tests: every CPU engine (and every instruction set of cpu-bitsliced) gives the same
//! states as the cpu-scalar oracle, on random sizes, rules, soups and generation counts.

use gol_core::cpu::{self, Bitsliced, Isa, States};
use gol_core::engine::{evolve, find, Engine};
use gol_core::rule::{Family, Topology};
use gol_core::seed::{density_soup, glibc_soup, states_soup, SplitMix64};
use gol_core::{EngineId, EngineOptions, Grid, Rule};
use proptest::prelude::*;

fn oracle(grid: &Grid, rule: Rule, gens: u64) -> Grid {
    evolve(
        find(cpu::ENGINES, EngineId::CpuScalar).unwrap(),
        grid,
        rule,
        gens,
    )
    .unwrap()
}

fn side() -> impl Strategy<Value = usize> {
    prop_oneof![1usize..=4, 60usize..=70, 1usize..=260]
}

fn topology() -> impl Strategy<Value = Topology> {
    prop_oneof![Just(Topology::Torus), Just(Topology::Plane)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn engines_match_the_oracle(
        width in side(),
        height in side(),
        birth in 0u32..512,
        survive in 0u32..512,
        gens in 0u64..48,
        density in 0.05f64..0.95,
        seed in any::<u64>(),
        topology in topology(),
    ) {
        let rule = Rule::from_masks(birth, survive).unwrap().on(topology);
        let grid = density_soup(width, height, density, seed).unwrap();
        let expected = oracle(&grid, rule, gens);
        for spec in cpu::ENGINES.iter().filter(|s| s.id != EngineId::CpuScalar) {
            if spec.id == EngineId::CpuStates {
                continue;
            }
            let got = evolve(spec, &grid, rule, gens).unwrap();
            prop_assert_eq!(expected.first_difference(&got), None, "{}", spec.name());
        }
        every_isa_matches(&grid, rule, gens, &expected)?;
    }
}

/// cpu-bitsliced on every instruction set here, its steps split in two calls (which must give
/// the same as one), against `expected`.
fn every_isa_matches(
    grid: &Grid,
    rule: Rule,
    gens: u64,
    expected: &Grid,
) -> Result<(), TestCaseError> {
    for isa in Isa::available() {
        let mut engine = Bitsliced::with_isa(isa).unwrap();
        engine.load(grid, rule).unwrap();
        engine.step(gens / 2).unwrap();
        engine.step(gens - gens / 2).unwrap();
        let got = engine.snapshot().unwrap();
        prop_assert_eq!(
            expected.first_difference(&got),
            None,
            "{} cpu-bitsliced[{}]",
            rule,
            isa.name()
        );
        prop_assert_eq!(engine.population().unwrap(), expected.population());
    }
    Ok(())
}

#[test]
fn seminar_known_value_on_the_fast_engine() {
    // N = 1024, 1024 generations, srand(0): Kurnosov's seminar (docs/lineage.md) prints 47026.
    let grid = glibc_soup(1024, 1024, 0).unwrap();
    let end = evolve(
        find(cpu::ENGINES, EngineId::CpuBitsliced).unwrap(),
        &grid,
        Rule::LIFE,
        1024,
    )
    .unwrap();
    assert_eq!(end.population(), 47026);
}

#[test]
fn large_grid_spanning_many_bands_and_strips() {
    // Wide enough for several strips and tall enough for several rayon bands.
    let grid = density_soup(64 * 150 + 5, 700, 0.5, 3).unwrap();
    for text in ["B36/S23", "B2-a/S12", "B2/S34H", "B3/S23:P", "B2-a/S12:P"] {
        let rule = Rule::parse(text).unwrap();
        let expected = oracle(&grid, rule, 6);
        for isa in Isa::available() {
            let mut engine = Bitsliced::with_isa(isa).unwrap();
            engine.load(&grid, rule).unwrap();
            engine.step(6).unwrap();
            assert_eq!(
                expected.first_difference(&engine.snapshot().unwrap()),
                None,
                "{text} {isa:?}"
            );
        }
    }
}

#[test]
fn engines_refuse_use_before_load_and_3d_rules() {
    for spec in cpu::ENGINES {
        let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
        assert!(engine.step(1).is_err(), "{}", spec.name());
        assert!(engine.snapshot().is_err(), "{}", spec.name());
        let grid = Grid::new(4, 4).unwrap();
        let rule_3d = Rule::parse("B6/S5-7,12").unwrap();
        let err = engine.load(&grid, rule_3d).unwrap_err().to_string();
        assert!(err.contains("only 8"), "{}: {err}", spec.name());
    }
}

/// A rule of a 2D family other than outer-totalistic Moore: isotropic non-totalistic with
/// random letters, or hexagonal, or von Neumann with random counts.
fn family_rule() -> impl Strategy<Value = Rule> {
    (1usize..4, any::<u64>()).prop_map(|(family, seed)| {
        let mut rng = SplitMix64::new(seed);
        Rule::random(Family::ALL[family], &mut || rng.next())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn bit_sliced_engines_run_every_2d_family_as_the_oracle(
        width in side(),
        height in side(),
        rule in family_rule(),
        gens in 0u64..24,
        density in 0.05f64..0.95,
        seed in any::<u64>(),
        topology in topology(),
    ) {
        let rule = rule.on(topology);
        let grid = density_soup(width, height, density, seed).unwrap();
        let expected = oracle(&grid, rule, gens);
        every_isa_matches(&grid, rule, gens, &expected)?;
        // The oracle's rule reads back from its text.
        prop_assert_eq!(Rule::parse(&rule.to_string()).unwrap(), rule);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn generations_rules_run_on_cpu_bitsliced_as_on_the_oracle(
        width in side(),
        height in side(),
        rule in prop_oneof![family_rule(), (0u32..512, 0u32..512).prop_map(|(b, s)| Rule::from_masks(b, s).unwrap())],
        states in prop_oneof![3u32..=8, 9u32..=256],
        gens in 0u64..24,
        seed in any::<u64>(),
        topology in topology(),
    ) {
        let rule = rule.on(topology).with_states(states).unwrap();
        let grid = states_soup(width, height, states, seed).unwrap();
        let expected = oracle(&grid, rule, gens);
        every_isa_matches(&grid, rule, gens, &expected)?;
        // A two-state grid runs under the rule as one whose cells are all dead or alive.
        let two = Grid::from_bytes(width, height, &grid.to_bytes()).unwrap();
        let expected = oracle(&two, rule, gens);
        prop_assert_eq!(expected.states(), states);
        every_isa_matches(&two, rule, gens, &expected)?;
        prop_assert_eq!(Rule::parse(&rule.to_string()).unwrap(), rule);
    }
}

#[test]
fn the_oracle_runs_generations_as_golly_does() {
    // Brian's Brain, /2/3: a live cell always starts dying, a dying one always dies next; a
    // dead cell is born with exactly two live neighbours. Two live cells side by side on a
    // 6×6 torus: each has one live neighbour and starts dying; the four cells above and below
    // the pair see both and are born.
    let rule = Rule::parse("/2/3").unwrap();
    let mut grid = Grid::with_states(6, 6, 3).unwrap();
    grid.set_state(2, 2, 1);
    grid.set_state(3, 2, 1);
    let next = oracle(&grid, rule, 1);
    let states: Vec<u32> = (0..6).map(|x| next.state(x, 1)).collect();
    assert_eq!(states, [0, 0, 1, 1, 0, 0]);
    assert_eq!((next.state(2, 2), next.state(3, 2)), (2, 2));
    assert_eq!((next.state(2, 3), next.state(3, 3)), (1, 1));
    assert_eq!((next.population(), next.live()), (6, 4));
    // The dying cells are gone a generation later, and block births beside them meanwhile.
    let after = oracle(&next, rule, 1);
    assert_eq!((after.state(2, 2), after.state(3, 2)), (0, 0));
    assert_eq!((after.state(2, 1), after.state(2, 3)), (2, 2));
}

#[test]
fn only_the_oracle_and_bit_sliced_engines_take_other_families() {
    let grid = Grid::new(8, 8).unwrap();
    let rule = Rule::parse("B2-a/S12").unwrap();
    for spec in cpu::ENGINES {
        let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
        let result = engine.load(&grid, rule);
        if spec.id == EngineId::CpuTable {
            let err = result.unwrap_err().to_string();
            assert!(
                err.contains("run on cpu-scalar, cpu-bitsliced, cuda-bitsliced"),
                "{err}"
            );
        } else if spec.id == EngineId::CpuStates {
            let err = result.unwrap_err().to_string();
            assert!(
                err.contains("cpu-states runs only rule tables and Larger than Life rules"),
                "{err}"
            );
        } else {
            result.unwrap();
        }
    }
}

#[test]
fn a_bounded_plane_kills_what_crosses_its_edge() {
    // A blinker along the top row: on a torus it turns and back; on a bounded plane its upper
    // half falls off the edge, and the two cells left die of loneliness.
    let mut grid = Grid::new(5, 5).unwrap();
    for x in 1..4 {
        grid.set(x, 0, true);
    }
    let torus = oracle(&grid, Rule::LIFE, 2);
    assert_eq!(torus, grid);
    let plane = Rule::LIFE.on(Topology::Plane);
    let once = oracle(&grid, plane, 1);
    assert_eq!(
        (once.population(), once.get(2, 0), once.get(2, 1)),
        (2, true, true)
    );
    assert_eq!(oracle(&grid, plane, 2).population(), 0);
}

/// A random rule table (2 to 9 states, Moore or von Neumann; a few of them too large for a
/// flat lookup) or Larger than Life rule (ranges 1 to 20, any shape, 2 to 5 states), from
/// `bits`.
fn states_rule(bits: u64, topology: Topology) -> Rule {
    let mut rng = SplitMix64::new(bits);
    let rule = if rng.next().is_multiple_of(2) {
        let eight = rng.next().is_multiple_of(2);
        let states = 2 + (rng.next() % 8) as u32;
        let table = gol_core::rule::RuleTable::random(states, eight, &mut || rng.next());
        Rule::from_table(gol_core::rule::table::intern(table))
    } else {
        let (larger, states) = gol_core::rule::Larger::random(20, &mut || rng.next());
        Rule::from_larger(larger, states)
    };
    rule.on(topology)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// cpu-states (flat lookups, trees, running sums and row sums) against the oracle.
    #[test]
    fn rule_tables_and_larger_than_life_on_cpu_states_match_the_oracle(
        width in side(),
        height in side(),
        bits in any::<u64>(),
        gens in 0u64..24,
        density in 0.05f64..0.95,
        seed in any::<u64>(),
        topology in topology(),
    ) {
        let rule = states_rule(bits, topology);
        let mut grid = Grid::with_states(width, height, rule.states()).unwrap();
        let mut rng = SplitMix64::new(seed);
        for y in 0..height {
            for x in 0..width {
                if (rng.next() % 1000) as f64 / 1000.0 < density {
                    grid.set_state(x, y, 1 + (rng.next() % (rule.states() as u64 - 1)) as u32);
                }
            }
        }
        let expected = oracle(&grid, rule, gens);
        let got = evolve(find(cpu::ENGINES, EngineId::CpuStates).unwrap(), &grid, rule, gens).unwrap();
        prop_assert_eq!(expected.first_difference(&got), None, "{}", rule);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// cpu-states' bit-sliced path (two-state square Larger than Life rules, B0 and a cell
    /// left out of its count included) on every instruction set here, against the oracle:
    /// ranges past 64 (more than one ghost word a side) and past the grid's own size.
    #[test]
    fn square_larger_than_life_in_bits_matches_the_oracle_on_every_isa(
        width in side(),
        height in side(),
        bits in any::<u64>(),
        wide in 0u32..4,
        gens in 0u64..12,
        density in 0.05f64..0.95,
        topology in topology(),
    ) {
        let mut rng = SplitMix64::new(bits);
        let (mut larger, _) = gol_core::rule::Larger::random(20, &mut || rng.next());
        larger.shape = gol_core::rule::larger::Shape::Moore;
        if wide == 0 {
            larger.range = 60 + (rng.next() % 80) as u32;
        }
        let size = larger.size();
        let mut share = |from: u64| ((size as u64 * (from + rng.next() % 15) / 100).max(1)) as u32;
        larger.survive = (share(20), share(45));
        larger.birth = (share(25), share(40));
        if rng.next().is_multiple_of(4) {
            larger.birth.0 = 0;
        }
        let rule = Rule::from_larger(larger, 2).on(topology);
        let grid = density_soup(width, height, density, bits).unwrap();
        let expected = oracle(&grid, rule, gens);
        for isa in Isa::available() {
            let mut engine = States::with_isa(isa).unwrap();
            engine.load(&grid, rule).unwrap();
            engine.step(gens / 2).unwrap();
            engine.step(gens - gens / 2).unwrap();
            let got = engine.snapshot().unwrap();
            prop_assert_eq!(expected.first_difference(&got), None, "{} [{}]", rule, isa.name());
            prop_assert_eq!(engine.population().unwrap(), expected.population());
            prop_assert!(engine.details().starts_with("running sums of cells in bits"));
        }
    }
}

#[test]
fn ranges_past_127_count_in_32_bits_on_cpu_states() {
    // (2r + 1)² ≥ 2^16 from r = 128: the running sums move from u16 to u32.
    for (range, width, height) in [(127, 300, 290), (128, 300, 290), (140, 61, 300)] {
        let size = (2 * range + 1) * (2 * range + 1);
        let text = format!(
            "R{range},C3,M1,S{}..{},B{}..{},NM",
            size / 4,
            size / 2,
            size / 4,
            size / 3
        );
        for topology in [Topology::Torus, Topology::Plane] {
            let rule = Rule::parse(&text).unwrap().on(topology);
            let grid = density_soup(width, height, 0.4, range as u64).unwrap();
            let expected = oracle(&grid, rule, 3);
            // Nothing is left on the narrow plane, whose neighbourhoods reach past its edges.
            assert!(expected.population() > 0 || width < range, "{text}");
            let got = evolve(
                find(cpu::ENGINES, EngineId::CpuStates).unwrap(),
                &grid,
                rule,
                3,
            )
            .unwrap();
            assert_eq!(expected.first_difference(&got), None, "{text} {topology:?}");
        }
    }
}

/// Golly's other bounded grids of `width` × `height` (a sphere takes the width for both).
fn surfaces(width: usize, height: usize) -> Vec<Topology> {
    let even = |n: usize| if n.is_multiple_of(2) { "+1" } else { "" };
    [
        format!("T{width}+3,{height}"),
        format!("T{width},{height}-2"),
        format!("K{width}*{},{height}", even(width)),
        format!("K{width},{height}*{}", even(height)),
        format!("C{width},{height}"),
        format!("S{width}"),
    ]
    .iter()
    .map(|s| gol_core::rule::topology::parse_suffix(s).unwrap().0)
    .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// cpu-states on Golly's other grids against the oracle's ghost cells.
    #[test]
    fn rule_tables_on_every_surface_match_the_oracle(
        width in 1usize..40,
        height in 1usize..40,
        bits in any::<u64>(),
        gens in 0u64..20,
        seed in any::<u64>(),
    ) {
        let mut rng = SplitMix64::new(bits);
        let (states, eight) = (2 + (rng.next() % 8) as u32, rng.next().is_multiple_of(2));
        let table = gol_core::rule::RuleTable::random(states, eight, &mut || rng.next());
        let rule = Rule::from_table(gol_core::rule::table::intern(table));
        for topology in surfaces(width, height) {
            let side = topology.size().unwrap();
            let rule = rule.on(topology);
            let mut grid = Grid::with_states(side.0, side.1, states).unwrap();
            let mut cells = SplitMix64::new(seed);
            for y in 0..side.1 {
                for x in 0..side.0 {
                    grid.set_state(x, y, (cells.next() % states as u64) as u32);
                }
            }
            let expected = oracle(&grid, rule, gens);
            let got = evolve(find(cpu::ENGINES, EngineId::CpuStates).unwrap(), &grid, rule, gens).unwrap();
            prop_assert_eq!(expected.first_difference(&got), None, "{}", rule);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// cpu-bitsliced on Golly's other grids (a ring of ghost cells round the grid) against
    /// the oracle, under two-state rules of every family; widths past a word or two.
    #[test]
    fn two_state_rules_on_every_surface_match_the_oracle_on_cpu_bitsliced(
        width in 1usize..140,
        height in 1usize..40,
        family in 0usize..4,
        bits in any::<u64>(),
        gens in 0u64..20,
        seed in any::<u64>(),
    ) {
        let mut rng = SplitMix64::new(bits);
        let rule = Rule::random(gol_core::rule::Family::ALL[family], &mut || rng.next());
        for topology in surfaces(width, height) {
            let side = topology.size().unwrap();
            let rule = rule.on(topology);
            let grid = density_soup(side.0, side.1, 0.4, seed).unwrap();
            let expected = oracle(&grid, rule, gens);
            let engine = find(cpu::ENGINES, EngineId::CpuBitsliced).unwrap();
            let got = evolve(engine, &grid, rule, gens).unwrap();
            prop_assert_eq!(expected.first_difference(&got), None, "{}", rule);
            prop_assert_eq!(expected.population(), got.population(), "{}", rule);
        }
    }
}
