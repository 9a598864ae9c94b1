//! Every CUDA engine against the cpu-scalar oracle, on the GPU. Without a GPU these tests skip
//! with a notice; with `GOL_REQUIRE_GPU=1` (set by the GPU bundle's run-tests.sh) a missing GPU
//! is a failure.

use gol_core::engine::{evolve, find};
use gol_core::rule::Topology;
use gol_core::seed::{density_soup, glibc_soup, states_soup};
use gol_core::{cpu, EngineId, EngineOptions, Grid, Rule};

/// Whether a GPU is usable; panics if one is required and missing.
fn have_gpu() -> bool {
    match gol_cuda::device::gpu() {
        Ok(_) => true,
        Err(e) => {
            assert!(
                std::env::var_os("GOL_REQUIRE_GPU").is_none(),
                "GOL_REQUIRE_GPU is set but: {e}"
            );
            eprintln!("notice: no GPU ({e}); skipping");
            false
        }
    }
}

/// Runs the test `name` of this binary (ignored or not) in a child process with `vars` in its
/// environment (read when an engine loads a world, and shared by the tests of one process), and
/// fails if it fails.
fn run_ignored_test(name: &str, vars: &[(&str, &str)]) {
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--include-ignored", "--nocapture"])
        .envs(vars.iter().copied())
        .status()
        .unwrap();
    assert!(status.success(), "{name} with {vars:?}: {status}");
}

fn run(id: EngineId, options: &EngineOptions, grid: &Grid, rule: Rule, gens: u64) -> Grid {
    let spec = find(gol_cuda::ENGINES, id).unwrap();
    let mut engine = (spec.create)(options).unwrap();
    engine.load(grid, rule).unwrap();
    engine.step(gens / 3).unwrap();
    engine.step(gens - gens / 3).unwrap();
    let end = engine.snapshot().unwrap();
    assert_eq!(engine.population().unwrap(), end.population(), "{id}");
    end
}

/// The CUDA engines of two-state rules: all but cuda-states, which runs only rule tables and
/// Larger than Life rules.
fn life_engines() -> impl Iterator<Item = &'static gol_core::EngineSpec> {
    gol_cuda::ENGINES
        .iter()
        .filter(|s| !gol_core::rule::STATES_ENGINES.contains(&s.id))
}

#[test]
fn every_engine_matches_the_oracle_on_awkward_sizes_and_rules() {
    if !have_gpu() {
        return;
    }
    let oracle = find(cpu::ENGINES, EngineId::CpuScalar).unwrap();
    let sizes = [
        (1, 1),
        (2, 1),
        (1, 3),
        (3, 3),
        (31, 17),
        (33, 15),
        (64, 2),
        (65, 33),
        (100, 1),
        (257, 129),
        // Widths that are multiples of four: cuda-texture's four cells a texel, from one
        // texel (its own neighbour each side) to rows longer than a warp's segment.
        (4, 4),
        (8, 3),
        (12, 5),
        (124, 9),
        (128, 3),
    ];
    let rules = [
        "B3/S23",
        "B36/S23",
        "B2/S",
        "B0123478/S01234678",
        "B3678/S34678",
    ];
    // Each size on a torus and, under the first two rules (each rule compiles its own
    // kernels), on a bounded plane.
    let cases = sizes.iter().enumerate().flat_map(|(i, &size)| {
        let torus = Rule::parse(rules[i % rules.len()]).unwrap();
        let plane = Rule::parse(rules[i % 2]).unwrap().on(Topology::Plane);
        [(i, size, torus), (i, size, plane)]
    });
    for (i, (w, h), rule) in cases {
        let grid = density_soup(w, h, 0.45, i as u64).unwrap();
        let gens = 5 + i as u64 * 3;
        let expected = evolve(oracle, &grid, rule, gens).unwrap();
        for spec in life_engines() {
            let got = run(spec.id, &EngineOptions::default(), &grid, rule, gens);
            assert_eq!(
                expected.first_difference(&got),
                None,
                "{} on {w}x{h} {rule} {gens} gens",
                spec.name()
            );
        }
    }
}

/// cuda-bitsliced against `oracle` on `grid`, `gens` generations of `rule`.
fn bitsliced_matches(oracle: &gol_core::EngineSpec, grid: &Grid, rule: Rule, gens: u64) {
    let expected = evolve(oracle, grid, rule, gens).unwrap();
    let got = run(
        EngineId::CudaBitsliced,
        &EngineOptions::default(),
        grid,
        rule,
        gens,
    );
    let (w, h) = (grid.width(), grid.height());
    assert_eq!(
        expected.first_difference(&got),
        None,
        "cuda-bitsliced on {w}x{h} {rule} {gens} gens"
    );
}

/// The width and height of case `i` of a test: sides around the engines' words and strips (1–5,
/// 31–33, 63–65, 100, 127), the height `step` sides on from the width for each case, starting
/// `offset` on.
fn awkward_size(i: u64, step: usize, offset: usize) -> (usize, usize) {
    const SIDES: [usize; 12] = [1, 2, 3, 5, 31, 32, 33, 63, 64, 65, 100, 127];
    let i = i as usize;
    (
        SIDES[i % SIDES.len()],
        SIDES[(i * step + offset) % SIDES.len()],
    )
}

/// A random rule of a 2D family other than outer-totalistic Moore, from `seed`.
fn family_rule(seed: u64) -> Rule {
    let mut rng = gol_core::seed::SplitMix64::new(seed);
    let family = gol_core::rule::Family::ALL[1 + seed as usize % 3];
    Rule::random(family, &mut || rng.next())
}

#[test]
fn bitsliced_runs_random_rules_of_every_2d_family_as_the_oracle() {
    if !have_gpu() {
        return;
    }
    let oracle = find(cpu::ENGINES, EngineId::CpuScalar).unwrap();
    // Each rule compiles its own kernels (about 6 s each with NVRTC on the H100 machine).
    for i in 0..12u64 {
        let (w, h) = awkward_size(i, 7, 3);
        let rule = family_rule(i);
        let grid = density_soup(w, h, 0.2 + 0.01 * i as f64, 700 + i).unwrap();
        let gens = 1 + i * 7 % 40;
        bitsliced_matches(oracle, &grid, rule, gens);
    }
    // Engines that cannot run them refuse them, naming those that can.
    let friends = Rule::parse("B2-a/S12").unwrap();
    let spec = find(gol_cuda::ENGINES, EngineId::CudaLut).unwrap();
    let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
    let err = engine
        .load(&Grid::new(8, 8).unwrap(), friends)
        .unwrap_err()
        .to_string();
    assert!(err.contains("cuda-bitsliced"), "{err}");
}

#[test]
fn bitsliced_runs_generations_rules_as_the_oracle() {
    if !have_gpu() {
        return;
    }
    let oracle = find(cpu::ENGINES, EngineId::CpuScalar).unwrap();
    for i in 0..12u64 {
        let (w, h) = awkward_size(i, 5, 2);
        let base = match i % 3 {
            0 => Rule::parse(["345/2/4", "/2/3", "23/3/8"][(i / 3) as usize % 3]).unwrap(),
            _ => family_rule(i),
        };
        let states = [4, 3, 8, 256][i as usize % 4];
        let topology = [Topology::Torus, Topology::Plane][(i / 2) as usize % 2];
        let rule = base.on(topology).with_states(states).unwrap();
        let grid = match i % 4 {
            // A two-state start under a Generations rule.
            1 => density_soup(w, h, 0.4, 900 + i).unwrap(),
            _ => states_soup(w, h, states, 900 + i).unwrap(),
        };
        // Past 128 generations the engine replays CUDA graphs of 64 launches.
        let gens = if i == 5 { 150 } else { 1 + i * 7 % 40 };
        bitsliced_matches(oracle, &grid, rule, gens);
    }
    // A Generations run hands out no rows: they would not hold its dying states.
    let spec = find(gol_cuda::ENGINES, EngineId::CudaBitsliced).unwrap();
    let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
    engine
        .load(
            &states_soup(40, 30, 4, 1).unwrap(),
            Rule::parse("345/2/4").unwrap(),
        )
        .unwrap();
    assert!(engine.rows().is_none());
    engine
        .load(&Grid::new(40, 30).unwrap(), Rule::LIFE)
        .unwrap();
    assert!(engine.rows().is_some());
}

#[test]
fn other_block_sizes_give_the_same_states() {
    if !have_gpu() {
        return;
    }
    // 300 wide: cuda-texture's four cells a texel; 301: one cell a texel.
    let grids = [
        density_soup(300, 97, 0.4, 5).unwrap(),
        density_soup(301, 50, 0.4, 6).unwrap(),
    ];
    let oracle = find(cpu::ENGINES, EngineId::CpuBitsliced).unwrap();
    let expected: Vec<Grid> = grids
        .iter()
        .map(|grid| evolve(oracle, grid, Rule::LIFE, 20).unwrap())
        .collect();
    // (4, 8) and (16, 6) put several block rows in a warp, (64, 4) two warps in a row; the
    // strip engines refuse (7, 5), (3, 3) and (16, 5).
    for block in [
        (8, 8),
        (32, 32),
        (128, 1),
        (7, 5),
        (3, 3),
        (4, 8),
        (16, 5),
        (16, 6),
        (64, 4),
    ] {
        let options = EngineOptions {
            block: Some(block),
            ..Default::default()
        };
        for spec in life_engines() {
            if gol_cuda::kernels::spec(spec.id).fixed_block {
                let err = (spec.create)(&options).err().expect("fixed").to_string();
                assert!(err.contains("does not apply"), "{err}");
                continue;
            }
            if let Err(why) = gol_cuda::kernels::spec(spec.id).check_block(block) {
                let err = (spec.create)(&options).err().expect("refused").to_string();
                assert!(err.contains(&why), "{err}");
                continue;
            }
            for (grid, expected) in grids.iter().zip(&expected) {
                let got = run(spec.id, &options, grid, Rule::LIFE, 20);
                assert_eq!(
                    expected.first_difference(&got),
                    None,
                    "{} with block {block:?} on {}x{}",
                    spec.name(),
                    grid.width(),
                    grid.height()
                );
            }
        }
    }
}

#[test]
fn seminar_case_gives_47026_on_every_engine() {
    if !have_gpu() {
        return;
    }
    let grid = glibc_soup(1024, 1024, 0).unwrap();
    for spec in life_engines() {
        let end = run(spec.id, &EngineOptions::default(), &grid, Rule::LIFE, 1024);
        assert_eq!(end.population(), 47026, "{}", spec.name());
    }
}

#[test]
fn wide_and_tall_grids_match() {
    if !have_gpu() {
        return;
    }
    // Wide rows exercise texture coordinates far from 0; more rows than 65535 blocks of 16
    // cover exercise the grid-stride loops (and exceed the texture array height, 65536).
    let oracle = find(cpu::ENGINES, EngineId::CpuBitsliced).unwrap();
    for (w, h) in [(20_000, 3), (3, 1_100_000)] {
        let grid = density_soup(w, h, 0.5, 9).unwrap();
        let expected = evolve(oracle, &grid, Rule::LIFE, 7).unwrap();
        for spec in life_engines() {
            let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
            if spec.id == EngineId::CudaTexture && h > 65_536 {
                let err = engine.load(&grid, Rule::LIFE).unwrap_err().to_string();
                assert!(err.contains("largest CUDA array"), "{err}");
                continue;
            }
            let got = run(spec.id, &EngineOptions::default(), &grid, Rule::LIFE, 7);
            assert_eq!(
                expected.first_difference(&got),
                None,
                "{} on {w}x{h}",
                spec.name()
            );
        }
    }
}

#[test]
fn bad_blocks_and_rules_are_refused() {
    if !have_gpu() {
        return;
    }
    let options = EngineOptions {
        block: Some((64, 32)),
        ..Default::default()
    };
    for spec in gol_cuda::ENGINES {
        let err = (spec.create)(&options)
            .err()
            .expect("2048 threads is too many")
            .to_string();
        let expected = if gol_cuda::kernels::spec(spec.id).fixed_block {
            "does not apply"
        } else {
            "2048 threads"
        };
        assert!(err.contains(expected), "{}: {err}", spec.name());
        let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
        let grid = Grid::new(8, 8).unwrap();
        let err = engine
            .load(&grid, Rule::parse("B9,/S").unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("only 8"), "{}: {err}", spec.name());
        assert!(
            engine.step(1).is_err(),
            "{}: step before a successful load",
            spec.name()
        );
    }
}

#[test]
fn graph_replays_and_direct_generations_mix() {
    if !have_gpu() {
        return;
    }
    // 75 = 2 captured-graph replays + 11 direct; then 40 = 1 replay of the same graph + 8.
    let grid = density_soup(97, 61, 0.4, 3).unwrap();
    let rule = Rule::parse("B36/S23").unwrap();
    let expected = evolve(
        find(cpu::ENGINES, EngineId::CpuScalar).unwrap(),
        &grid,
        rule,
        115,
    )
    .unwrap();
    for spec in life_engines() {
        let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
        engine.load(&grid, rule).unwrap();
        engine.step(75).unwrap();
        engine.step(40).unwrap();
        let got = engine.snapshot().unwrap();
        assert_eq!(expected.first_difference(&got), None, "{}", spec.name());
    }
}

#[test]
fn two_constant_engines_keep_their_own_rules() {
    if !have_gpu() {
        return;
    }
    // The rule table lives in the module's constant memory: a shared module would let the
    // second engine's rule overwrite the first's.
    let grid = density_soup(64, 64, 0.5, 1).unwrap();
    let (life, seeds) = (Rule::LIFE, Rule::parse("B2/S").unwrap());
    let spec = find(gol_cuda::ENGINES, EngineId::CudaConstant).unwrap();
    let mut a = (spec.create)(&EngineOptions::default()).unwrap();
    let mut b = (spec.create)(&EngineOptions::default()).unwrap();
    a.load(&grid, life).unwrap();
    b.load(&grid, seeds).unwrap();
    a.step(9).unwrap();
    b.step(9).unwrap();
    let oracle = find(cpu::ENGINES, EngineId::CpuScalar).unwrap();
    assert_eq!(
        evolve(oracle, &grid, life, 9)
            .unwrap()
            .first_difference(&a.snapshot().unwrap()),
        None
    );
    assert_eq!(
        evolve(oracle, &grid, seeds, 9)
            .unwrap()
            .first_difference(&b.snapshot().unwrap()),
        None
    );
}

#[test]
fn bitsliced_matches_across_column_groups_tiles_and_launch_depths() {
    if !have_gpu() {
        return;
    }
    // Widths around the 960 cells of a column group and the word size, heights of many tiles
    // and of fewer rows than a launch's depth; generation counts that need every depth.
    let oracle = find(cpu::ENGINES, EngineId::CpuBitsliced).unwrap();
    let cases = [
        (961, 50, "B3/S23", 77),
        (1000, 333, "B36/S23", 131),
        (2000, 700, "B3/S23", 64),
        (31, 1000, "B0123478/S01234678", 45),
        (5000, 17, "B2/S", 29),
        (1919, 2, "B3678/S34678", 100),
        (33, 5, "B3/S23", 203),
        (4097, 4099, "B3/S23", 150),
        // Steps of 533 and 1067 generations: graph replays between direct launches.
        (97, 61, "B36/S23", 1600),
        // Rules that read whole neighbourhoods, at every depth they are built for.
        (961, 50, "B2-a/S12", 77),
        (2000, 700, "B3/S23-a", 64),
        (4097, 4099, "B2/S34H", 150),
        (1919, 2, "B2/S013V", 100),
        // Bounded planes: tiles within a launch's depth of the top and bottom edges, and
        // column groups at the row's ends, keep only the cells on the grid.
        (961, 50, "B3/S23:P", 77),
        (2000, 700, "B36/S23:P", 64),
        (31, 1000, "B3/S23:P", 45),
        (4097, 4099, "B3/S23:P", 150),
        (97, 61, "B36/S23:P", 1600),
        (1000, 333, "B2-a/S12:P", 131),
        // Heights at and just past twice a launch's depth, where the top and bottom rows
        // become tiles of their own (2K + 1) or stay in the tiles (2K).
        (300, 9, "B3/S23:P", 45),
        (300, 17, "B3/S23:P", 45),
        (300, 32, "B3/S23:P", 90),
        (300, 33, "B36/S23:P", 90),
    ];
    for (i, &(w, h, rule, gens)) in cases.iter().enumerate() {
        let rule = Rule::parse(rule).unwrap();
        let density = 0.3 + 0.05 * (i % 12) as f64;
        let grid = density_soup(w, h, density, 100 + i as u64).unwrap();
        bitsliced_matches(oracle, &grid, rule, gens);
    }
}

/// cuda-bitsliced's two kernels, each forced on every grid it can take: the cost model would
/// send most small grids to the resident kernel and large ones to the streaming kernels.
/// `GOL_BITSLICED_PLAN` is read when a grid is loaded and tests share their process's
/// environment, so each plan runs [`bitsliced_with_the_plan_asked_for`] in a child process.
#[test]
fn bitsliced_kernels_each_match_when_forced() {
    if !have_gpu() {
        return;
    }
    for plan in [
        "stream",
        "16:3",
        "8:20",
        "4:40",
        "2:7",
        "resident",
        "resident:16:32",
        "resident:2:64",
        "resident:1",
    ] {
        run_ignored_test(
            "bitsliced_with_the_plan_asked_for",
            &[("GOL_BITSLICED_PLAN", plan)],
        );
    }
}

/// cuda-bitsliced's generic kernels, which read the rule from constant memory (what runs a new
/// rule while its own kernel compiles), forced (`GOL_RULE_KERNEL=generic`) on every case and plan
/// the rule's own kernels are checked on: 2D rules of every family, Generations rules on tori
/// and bounded planes (of age planes whose generic kernel is not built in too), and 3D rules.
#[test]
fn generic_rule_kernels_match_the_oracle_when_forced() {
    if !have_gpu() {
        return;
    }
    let generic = ("GOL_RULE_KERNEL", "generic");
    for plan in ["stream", "8:20", "4:40", "2:7", "1:5", "resident", "16:3"] {
        run_ignored_test(
            "bitsliced_with_the_plan_asked_for",
            &[("GOL_BITSLICED_PLAN", plan), generic],
        );
    }
    for test in [
        "bitsliced_runs_random_rules_of_every_2d_family_as_the_oracle",
        "bitsliced_runs_generations_rules_as_the_oracle",
        "every_3d_engine_matches_the_oracle_on_awkward_sides_rules_and_depths",
    ] {
        run_ignored_test(test, &[generic]);
    }
    run_ignored_test(
        "bitsliced_3d_pairs_of_generations_match_the_oracle",
        &[("GOL_CUBE_PAIRS", "always"), generic],
    );
}

#[test]
#[ignore = "run by bitsliced_kernels_each_match_when_forced, with GOL_BITSLICED_PLAN set"]
fn bitsliced_with_the_plan_asked_for() {
    if !have_gpu() {
        return;
    }
    let plan = std::env::var("GOL_BITSLICED_PLAN").expect("set by the parent test");
    // The deepest launch of the kernels that run `rule`: the generic ones where forced.
    let generic = std::env::var("GOL_RULE_KERNEL").is_ok_and(|k| k == "generic");
    let deepest = |rule: Rule| match generic {
        true => {
            let planes = gol_core::grid::age_planes(rule.states()) as u32;
            gol_cuda::source::Shape::generic(planes).max_depth
        }
        false => gol_cuda::source::Shape::of(rule).max_depth,
    };
    let oracle = find(cpu::ENGINES, EngineId::CpuBitsliced).unwrap();
    // Widths round the word (32 cells) and its edge cases (1 to 3 cells), heights of fewer
    // rows than a cluster has blocks, bands of one row, and rows of more words than a block
    // has threads.
    let cases = [
        (1, 1, "B3/S23", 7),
        (2, 1, "B36/S23", 8),
        (1, 3, "B2/S", 9),
        (3, 3, "B0123478/S01234678", 10),
        (3, 2, "B3678/S34678", 11),
        (31, 17, "B3/S23", 31),
        (32, 16, "B36/S23", 12),
        (33, 15, "B3/S23", 64),
        (64, 2, "B2/S", 13),
        (65, 33, "B3678/S34678", 50),
        (100, 1, "B3/S23", 14),
        (961, 50, "B3/S23", 77),
        (1000, 333, "B36/S23", 131),
        (1024, 1024, "B3/S23", 100),
        (1500, 37, "B3/S23", 33),
        (4100, 20, "B2/S", 21),
        // Rules that read whole neighbourhoods: by sums and predicates (B2-a/S12, B3/S23-a),
        // or by a circuit over the cells.
        (1, 1, "B2-a/S12", 5),
        (2, 3, "B2/S34H", 6),
        (3, 1, "B2/S013V", 7),
        (33, 31, "B3/S23-a", 40),
        (100, 7, "B2ce3aeijnqry4n/S1e2-a3ae4ejqt", 19),
        (1000, 333, "B2-a/S12", 131),
        (1500, 37, "B2/S34H", 33),
        // Bounded planes.
        (1, 1, "B3/S23:P", 7),
        (2, 3, "B36/S23:P", 8),
        (3, 3, "B3/S23:P", 10),
        (33, 15, "B3/S23:P", 64),
        (65, 33, "B36/S23:P", 50),
        (1024, 1024, "B3/S23:P", 100),
        (1500, 37, "B36/S23:P", 33),
        (100, 7, "B2-a/S12:P", 19),
        // Generations rules, whose ages ride through the levels (1 to 8 age planes: the
        // deepest kernel 8, 8, 4 and 2 generations).
        (2, 3, "23/3/256", 9),
        (33, 15, "345/2/4", 37),
        (65, 33, "/2/3:P", 50),
        (100, 7, "B3/S23/C17", 19),
        (1000, 333, "12/2-a/4", 131),
        (1024, 1024, "345/2/4:P", 100),
        (1500, 37, "34/2/9H", 33),
    ];
    for (i, &(w, h, rule, gens)) in cases.iter().enumerate() {
        let rule = Rule::parse(rule).unwrap();
        let seed = 300 + i as u64;
        let grid = match rule.states() {
            2 => density_soup(w, h, 0.3 + 0.03 * (i % 20) as f64, seed).unwrap(),
            states => states_soup(w, h, states, seed).unwrap(),
        };
        let expected = evolve(oracle, &grid, rule, gens).unwrap();
        let spec = find(gol_cuda::ENGINES, EngineId::CudaBitsliced).unwrap();
        let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
        // Generations rules stream, and every rule at most as deep as its kernels are built
        // (Generations rules, and isotropic rules that keep cells and sums, stop short of 16).
        let depth = plan.split(':').next().unwrap().parse::<u32>().ok();
        let refused = if rule.is_generations() && plan.starts_with("resident") {
            Some("dying states")
        } else if depth.is_some_and(|d| d > deepest(rule)) {
            Some("at most")
        } else {
            None
        };
        if let Some(why) = refused {
            let err = engine.load(&grid, rule).unwrap_err().to_string();
            assert!(err.contains(why), "{plan}, {rule}: {err}");
            continue;
        }
        // A cluster whose size is forced may be too small for the grid's bands.
        let blocks = plan.split(':').nth(1).map(|b| b.parse().unwrap());
        let most = gol_cuda::device::gpu()
            .unwrap()
            .max_shared_per_block()
            .unwrap() as u64;
        if let Some(blocks) = blocks {
            let launch = gol_cuda::bitsliced::Resident::new(w, h, blocks, None);
            if launch.shared_bytes() > most {
                let err = engine.load(&grid, rule).unwrap_err().to_string();
                assert!(err.contains("does not fit"), "{plan}, {w}x{h}: {err}");
                continue;
            }
        }
        engine.load(&grid, rule).unwrap();
        let resident = engine.details().contains("cluster");
        assert_eq!(
            resident,
            plan.starts_with("resident"),
            "{plan}: {}",
            engine.details()
        );
        engine.step(gens / 3).unwrap();
        engine.step(1).unwrap();
        engine.step(gens - gens / 3 - 1).unwrap();
        let got = engine.snapshot().unwrap();
        assert_eq!(
            expected.first_difference(&got),
            None,
            "cuda-bitsliced ({plan}) on {w}x{h} {rule} {gens} gens"
        );
        assert_eq!(engine.population().unwrap(), got.population());
    }
}

#[test]
fn every_3d_engine_matches_the_oracle_on_awkward_sides_rules_and_depths() {
    if !have_gpu() {
        return;
    }
    let oracle = find(cpu::ENGINES_3D, EngineId::CpuScalar).unwrap();
    // Sides around the word sizes (4 cells per SWAR word, 32 per bit-sliced word, lines of 1 to
    // 10 words sharing a warp in segments of 1 to 16 lanes, whole and partial last words, word
    // counts that are and are not powers of two), the tile (30x14 interior) and the 16-plane
    // depth; generation counts that are odd and long enough for graph replays.
    let sides = [
        1, 2, 3, 4, 5, 15, 16, 17, 31, 33, 63, 64, 65, 96, 97, 128, 200, 300,
    ];
    let rules = [
        "B6/S567",
        "B5-7/S4-9",
        "B0,3,26/S0-2,13,26",
        "B4/S",
        "B/S0-26",
    ];
    for (i, &side) in sides.iter().enumerate() {
        let rule = Rule::parse(rules[i % rules.len()]).unwrap();
        let cube = gol_core::Cube::density_soup(side, 0.3, i as u64).unwrap();
        let gens = [3, 7, 70][i % 3];
        let expected = evolve(oracle, &cube, rule, gens).unwrap();
        for spec in gol_cuda::ENGINES_3D {
            let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
            engine.load(&cube, rule).unwrap();
            engine.step(gens / 3).unwrap();
            engine.step(gens - gens / 3).unwrap();
            let got = engine.snapshot().unwrap();
            assert_eq!(
                expected.first_difference(&got),
                None,
                "{} on side {side}, {rule}, {gens} gens",
                spec.name()
            );
            assert_eq!(engine.population().unwrap(), got.population());
        }
    }
}

/// cuda-bitsliced's launches of two generations, forced on small cubes, where by default it
/// makes one at a time (too few blocks); `GOL_CUBE_PAIRS` is read when a cube is loaded, so the
/// check runs in a child process, as in [`bitsliced_kernels_each_match_when_forced`].
#[test]
fn bitsliced_3d_pairs_match_when_forced() {
    if !have_gpu() {
        return;
    }
    run_ignored_test(
        "bitsliced_3d_pairs_of_generations_match_the_oracle",
        &[("GOL_CUBE_PAIRS", "always")],
    );
}

#[test]
#[ignore = "run by bitsliced_3d_pairs_match_when_forced, with GOL_CUBE_PAIRS=always"]
fn bitsliced_3d_pairs_of_generations_match_the_oracle() {
    if !have_gpu() {
        return;
    }
    let oracle = find(cpu::ENGINES_3D, EngineId::CpuScalar).unwrap();
    let spec = find(gol_cuda::ENGINES_3D, EngineId::CudaBitsliced).unwrap();
    // Every side on which cuda-bitsliced makes two generations a launch but 512 and 1024 (too
    // slow for the oracle): lines of 1, 2, 4 and 8 words, one to eight lines a warp. Steps of
    // odd and even counts mix launches of two generations with launches of one.
    for (i, &side) in [32, 64, 128, 256].iter().enumerate() {
        let rule = Rule::parse(["B6/S567", "B5-7/S4-9", "B0,3,26/S0-2,13,26", "B4/S"][i]).unwrap();
        let cube = gol_core::Cube::density_soup(side, 0.3, 100 + i as u64).unwrap();
        let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
        engine.load(&cube, rule).unwrap();
        assert!(
            engine.details().contains("two generations a launch"),
            "{}",
            engine.details()
        );
        let mut expected = cube;
        for gens in [1, 4, 3, 2] {
            expected = evolve(oracle, &expected, rule, gens).unwrap();
            engine.step(gens).unwrap();
            let got = engine.snapshot().unwrap();
            assert_eq!(
                expected.first_difference(&got),
                None,
                "side {side}, {rule}, after a step of {gens}"
            );
        }
        assert_eq!(engine.population().unwrap(), expected.population());
    }
    // Sides that do not fit make one generation a launch even so.
    let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
    engine
        .load(
            &gol_core::Cube::density_soup(96, 0.3, 1).unwrap(),
            Rule::parse("B6/S567").unwrap(),
        )
        .unwrap();
    assert!(
        engine.details().contains("one generation a launch"),
        "{}",
        engine.details()
    );
}

/// `parts` slabs of `spec`'s engine going round `gpus` GPUs, with halos `depth` layers deep,
/// exchanged GPU to GPU with `peer`, else through host memory.
fn split_over_gpus<W: gol_core::World>(
    spec: &gol_core::engine::EngineSpec<W>,
    parts: usize,
    gpus: usize,
    depth: usize,
    peer: bool,
) -> gol_core::slab::Decomposed<W> {
    let engines = (0..parts)
        .map(|p| {
            let options = EngineOptions {
                device: p % gpus,
                ..Default::default()
            };
            (spec.create)(&options).unwrap()
        })
        .collect();
    let split = gol_core::slab::Decomposed::new(engines, depth).unwrap();
    if peer {
        split.with_peer_copy(Box::new(gol_cuda::peer::Peers::open(gpus).unwrap()))
    } else {
        split
    }
}

#[test]
fn every_3d_engine_matches_the_oracle_on_slabs() {
    if !have_gpu() {
        return;
    }
    let oracle = find(cpu::ENGINES_3D, EngineId::CpuScalar).unwrap();
    // Slabs of X planes of side M, X ≠ M, where x wraps at X: fewer and more planes than the
    // side, and than the 16-plane depth of the streaming kernels; thin slabs of wide planes
    // whose lines span more than one warp (33 and 35 words), with whole and partial last words.
    let shapes = [
        (1, 5),
        (3, 33),
        (20, 17),
        (17, 64),
        (40, 65),
        (5, 200),
        (2, 1056),
        (3, 1100),
    ];
    for (i, &(planes, side)) in shapes.iter().enumerate() {
        let rule = Rule::parse(["B6/S567", "B4-6/S3-8", "B0,2/S1,26"][i % 3]).unwrap();
        let lines = density_soup(side, planes * side, 0.3, i as u64).unwrap();
        let slab = gol_core::Cube::slab(lines).unwrap();
        let gens = [5, 33][i % 2];
        let expected = evolve(oracle, &slab, rule, gens).unwrap();
        for spec in gol_cuda::ENGINES_3D {
            let got = evolve(spec, &slab, rule, gens).unwrap();
            assert_eq!(
                expected.first_difference(&got),
                None,
                "{} on a {planes}x{side}x{side} slab, {rule}, {gens} gens",
                spec.name()
            );
            assert_eq!(got.planes(), planes);
        }
    }
}

/// Cubes of `(side, parts, depth, generations)` split into slabs going round every GPU, with
/// halos through host memory and GPU to GPU, against the oracle; each run in two steps.
fn check_cube_slabs(cases: &[(usize, usize, usize, u64)]) {
    use gol_core::Engine;
    let oracle = find(cpu::ENGINES_3D, EngineId::CpuScalar).unwrap();
    let gpus = gol_cuda::device::device_count().unwrap();
    let spec = find(gol_cuda::ENGINES_3D, EngineId::CudaBitsliced).unwrap();
    for (i, &(side, parts, depth, gens)) in cases.iter().enumerate() {
        let rule = Rule::parse(["B6/S567", "B4-6/S3-8", "B5-7/S4-9", "B0,2/S1,26"][i % 4]).unwrap();
        let cube = gol_core::Cube::density_soup(side, 0.3, i as u64).unwrap();
        let expected = evolve(oracle, &cube, rule, gens).unwrap();
        for peer in [false, true] {
            let mut split = split_over_gpus(spec, parts, gpus, depth, peer);
            split.load(&cube, rule).unwrap();
            split.step(gens / 2).unwrap();
            split.step(gens - gens / 2).unwrap();
            let details = split.details();
            assert_eq!(details.contains("GPU to GPU"), peer, "{details}");
            assert_eq!(split.population().unwrap(), expected.population());
            let got = split.snapshot().unwrap();
            assert_eq!(
                expected.first_difference(&got),
                None,
                "side {side}, {parts} slabs over {gpus} GPU(s), halo {depth}, {gens} gens, \
                 {rule}, GPU to GPU: {peer}; {details}"
            );
        }
    }
}

#[test]
fn cube_slabs_on_every_gpu_match_the_oracle() {
    if !have_gpu() {
        return;
    }
    // Slabs of 2 planes under halos of 2 make every plane of each round's first launch at
    // once: no plane needs no halo.
    check_cube_slabs(&[
        (17, 5, 2, 9),
        (9, 4, 2, 7),
        (33, 3, 4, 23),
        (64, 4, 16, 70),
        (130, 2, 64, 100),
    ]);
}

/// Slabs of cubes with two generations a launch and walks of 3 planes (4 in the rings round
/// the wrap), so that the launches of a round that make only part of a slab (the planes that
/// need no halo, the ring round the wrap, then fewer planes each launch) take many walks, wrap,
/// and mix pairs with single generations; the variables are read when a cube is loaded, so it
/// runs in a child process.
#[test]
fn cube_slabs_match_with_pairs_and_short_walks() {
    if !have_gpu() {
        return;
    }
    run_ignored_test(
        "cube_slabs_with_pairs_and_short_walks_match_the_oracle",
        &[("GOL_CUBE_PAIRS", "always"), ("GOL_CUBE_DEPTH", "3")],
    );
}

#[test]
#[ignore = "run by cube_slabs_match_with_pairs_and_short_walks, with its variables"]
fn cube_slabs_with_pairs_and_short_walks_match_the_oracle() {
    if !have_gpu() {
        return;
    }
    check_cube_slabs(&[
        (32, 2, 5, 23),
        (64, 3, 8, 41),
        (32, 4, 2, 9),
        (64, 2, 16, 33),
    ]);
}

#[test]
fn slabs_on_every_gpu_match_the_oracle() {
    if !have_gpu() {
        return;
    }
    let oracle = find(cpu::ENGINES, EngineId::CpuScalar).unwrap();
    let gpus = gol_cuda::device::device_count().unwrap();
    let spec = find(gol_cuda::ENGINES, EngineId::CudaBitsliced).unwrap();
    // Several slabs per GPU where there are few GPUs, so that the exchange is exercised on any
    // machine; the slabs go round the GPUs.
    // Bounded planes too: the top and bottom slabs have no halo past the plane's edges.
    for (i, &(w, h, parts, depth, gens, rule)) in [
        (100, 37, 4, 5, 23, "B3/S23"),
        (257, 130, 3, 64, 200, "B36/S23"),
        (64, 6, 6, 64, 17, "B2/S"),
        (1000, 999, 4, 16, 131, "B3678/S34678"),
        (257, 130, 3, 40, 200, "B3/S23:P"),
        (1000, 333, 4, 16, 131, "B2-a/S12:P"),
    ]
    .iter()
    .enumerate()
    {
        let grid = density_soup(w, h, 0.4, i as u64);
        let grid = grid.unwrap();
        let rule = Rule::parse(rule).unwrap();
        let expected = evolve(oracle, &grid, rule, gens).unwrap();
        // Halos through host memory, then GPU to GPU.
        for peer in [false, true] {
            let mut split = split_over_gpus(spec, parts, gpus, depth, peer);
            let got = {
                use gol_core::Engine;
                split.load(&grid, rule).unwrap();
                split.step(gens / 2).unwrap();
                split.step(gens - gens / 2).unwrap();
                assert_eq!(
                    split.details().contains("GPU to GPU"),
                    peer,
                    "{}",
                    split.details()
                );
                assert_eq!(split.population().unwrap(), expected.population());
                split.snapshot().unwrap()
            };
            assert_eq!(
                got, expected,
                "{w}x{h}, {parts} slabs over {gpus} GPU(s), {rule}, GPU to GPU: {peer}"
            );
        }
    }
}

#[test]
fn halo_rows_travel_through_page_locked_memory() {
    if !have_gpu() {
        return;
    }
    let grid = density_soup(200, 40, 0.5, 3).unwrap();
    let wpr = grid.words_per_row();
    let spec = find(gol_cuda::ENGINES, EngineId::CudaBitsliced).unwrap();
    let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
    engine.load(&grid, Rule::LIFE).unwrap();
    let access = engine.rows_mut().expect("cuda-bitsliced gives row access");
    let mut rows = access.host_rows(7 * wpr).unwrap();
    assert_eq!(rows.len(), 7 * wpr);
    assert!(rows.iter().all(|&w| w == 0), "zeroed");
    access.read_rows(10, &mut rows).unwrap();
    assert_eq!(&rows[..], &grid.words()[10 * wpr..17 * wpr]);
    // Written back one row down: the state's rows 11..18 become the old 10..17.
    access.write_rows(11, &rows).unwrap();
    let mut again = access.host_rows(7 * wpr).unwrap();
    access.read_rows(11, &mut again).unwrap();
    assert_eq!(&again[..], &grid.words()[10 * wpr..17 * wpr]);
}

/// Zoomed-out pictures made on the GPU (a viewer's frames) against the host's, on awkward
/// sizes, views that wrap round the torus (more than once), and blocks that do and do not fit
/// the words.
#[test]
fn pictures_made_on_the_gpu_match_the_host() {
    if !have_gpu() {
        return;
    }
    use gol_core::picture::{self, View};
    let spec = find(gol_cuda::ENGINES, EngineId::CudaBitsliced).unwrap();
    for (i, &(w, h)) in [(1, 1), (3, 2), (33, 17), (100, 64), (257, 129), (1000, 999)]
        .iter()
        .enumerate()
    {
        let grid = density_soup(w, h, 0.4, i as u64).unwrap();
        let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
        engine.load(&grid, Rule::LIFE).unwrap();
        engine.step(5).unwrap();
        let world = engine.snapshot().unwrap();
        let rows = engine.rows().expect("cuda-bitsliced gives rows");
        let views = [
            View::whole(w, h),
            View {
                x: w - 1,
                y: h / 2,
                width: w.max(2),
                height: h + 3,
            },
            View {
                x: w / 3,
                y: h - 1,
                width: 2 * w + 5,
                height: 2 * h + 1,
            },
        ];
        for view in views {
            for block in [1, 2, 3, 7, 64, 100] {
                let gpu = rows.blocks(&view, block).expect("made on the GPU").unwrap();
                assert_eq!(
                    gpu,
                    picture::blocks(&world, &view, block),
                    "{w}x{h}, {view:?}, blocks of {block}"
                );
            }
        }
    }
}

/// Projections and slices of cubes counted on the GPU against the host's count.
#[test]
fn cube_projections_on_the_gpu_match_the_host() {
    if !have_gpu() {
        return;
    }
    use gol_core::picture::{self, Axis, Look};
    let spec = find(gol_cuda::ENGINES_3D, EngineId::CudaBitsliced).unwrap();
    for (i, side) in [1, 2, 5, 31, 33, 64, 100].into_iter().enumerate() {
        let cube = gol_core::Cube::density_soup(side, 0.3, i as u64).unwrap();
        let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
        engine.load(&cube, Rule::LIFE_3D).unwrap();
        engine.step(3).unwrap();
        let world = engine.snapshot().unwrap();
        let rows = engine.rows().expect("3D cuda-bitsliced gives rows");
        for axis in [Axis::X, Axis::Y, Axis::Z] {
            for slice in [None, Some(0), Some(side / 2), Some(side - 1)] {
                let look = Look { axis, slice };
                let gpu = rows.projection(look).expect("counted on the GPU").unwrap();
                assert_eq!(
                    gpu,
                    picture::cube_counts(&world, look).unwrap(),
                    "side {side}, {look:?}"
                );
            }
        }
        let outside = Look {
            axis: Axis::Y,
            slice: Some(side),
        };
        assert!(rows.projection(outside).unwrap().is_err());
    }
}

/// One cuda-bitsliced run against the oracle, in a child process whose `GOL_CACHE_DIR` the
/// caller chose (the module cache of a process would otherwise hide the disk's). HighLife,
/// whose kernel is not built into the binary (Life's is), so that it goes through the cache.
#[test]
#[ignore = "run by a_damaged_or_unwritable_kernel_cache_is_survived in a child process"]
fn one_bitsliced_run_matches_the_oracle() {
    let rule = Rule::parse("B36/S23").unwrap();
    let grid = density_soup(300, 200, 0.4, 3).unwrap();
    let oracle = find(cpu::ENGINES, EngineId::CpuScalar).unwrap();
    let expected = evolve(oracle, &grid, rule, 50).unwrap();
    let got = run(
        EngineId::CudaBitsliced,
        &EngineOptions::default(),
        &grid,
        rule,
        50,
    );
    assert_eq!(expected.first_difference(&got), None);
}

/// Whether there is a GPU for whose architecture the binary has CUBINs built in (a notice
/// where there is none).
fn kernels_built_in_here() -> bool {
    if !have_gpu() {
        return false;
    }
    let arch = gol_cuda::device::gpu().unwrap().arch();
    let built_in = gol_cuda::source::SHIPPED_ARCHES.contains(&arch.as_str())
        && gol_cuda::device::shipped_cubins().next().is_some();
    if !built_in {
        eprintln!("notice: no CUBINs built in for {arch}; skipping");
    }
    built_in
}

/// The default engine under each dimension's default rule runs from the CUBINs built into the
/// binary: a child process with an empty kernel cache matches the oracle in 2D and 3D without
/// loading NVRTC (what made a first run on a fresh machine take seconds) or writing the cache.
#[test]
fn default_kernels_run_from_the_binary_without_nvrtc() {
    if !kernels_built_in_here() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("kernels");
    run_ignored_test(
        "default_kernels_from_the_binary",
        &[("GOL_CACHE_DIR", cache.to_str().unwrap())],
    );
    assert!(!cache.exists(), "a built-in kernel was compiled and cached");
}

#[test]
#[ignore = "run by default_kernels_run_from_the_binary_without_nvrtc in a child process"]
fn default_kernels_from_the_binary() {
    let grid = density_soup(300, 200, 0.4, 5).unwrap();
    let oracle = find(cpu::ENGINES, EngineId::CpuScalar).unwrap();
    let expected = evolve(oracle, &grid, Rule::LIFE, 50).unwrap();
    let got = run(
        EngineId::CudaBitsliced,
        &EngineOptions::default(),
        &grid,
        Rule::LIFE,
        50,
    );
    assert_eq!(expected.first_difference(&got), None);
    let cube = gol_core::Cube::density_soup(40, 0.3, 5).unwrap();
    let oracle = find(cpu::ENGINES_3D, EngineId::CpuScalar).unwrap();
    let spec = find(gol_cuda::ENGINES_3D, EngineId::CudaBitsliced).unwrap();
    assert_eq!(
        evolve(spec, &cube, Rule::LIFE_3D, 7).unwrap(),
        evolve(oracle, &cube, Rule::LIFE_3D, 7).unwrap()
    );
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    assert!(
        !maps.contains("libnvrtc"),
        "NVRTC was loaded for a built-in kernel"
    );
}

/// A rule never compiled before runs at once on the generic kernel built into the binary and
/// moves to its own kernel once NVRTC has built it, matching the oracle before and after; the
/// compile fills the kernel cache. In 2D and 3D, in a child process with an empty cache.
#[test]
fn a_new_rule_starts_on_the_generic_kernel_and_moves_to_its_own() {
    if !kernels_built_in_here() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("kernels");
    run_ignored_test(
        "new_rules_move_to_their_own_kernels",
        &[("GOL_CACHE_DIR", cache.to_str().unwrap())],
    );
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 2);
}

/// Steps `engine` and the oracle's world `expected` alike, checking each step, until the engine
/// has left the generic kernel it started on (at most ten minutes).
fn step_until_own_kernel<W: gol_core::World + std::fmt::Debug + PartialEq>(
    engine: &mut dyn gol_core::Engine<W>,
    oracle: &gol_core::EngineSpec<W>,
    mut expected: W,
    rule: Rule,
) {
    assert!(
        engine.details().contains("the generic rule kernel while"),
        "{}",
        engine.details()
    );
    let started = std::time::Instant::now();
    let mut steps = 0;
    loop {
        engine.step(5).unwrap();
        expected = evolve(oracle, &expected, rule, 5).unwrap();
        assert_eq!(engine.snapshot().unwrap(), expected, "{rule}, step {steps}");
        steps += 1;
        if !engine.details().contains("generic") {
            break;
        }
        assert!(started.elapsed().as_secs() < 600, "{rule}: still generic");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // A few steps more on the rule's own kernel.
    for _ in 0..3 {
        engine.step(5).unwrap();
        expected = evolve(oracle, &expected, rule, 5).unwrap();
    }
    assert_eq!(engine.snapshot().unwrap(), expected, "{rule}, own kernel");
    eprintln!(
        "{rule}: {steps} steps on the generic kernel, {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

#[test]
#[ignore = "run by a_new_rule_starts_on_the_generic_kernel_and_moves_to_its_own"]
fn new_rules_move_to_their_own_kernels() {
    let rule = Rule::parse("B35/S2458").unwrap();
    let grid = density_soup(200, 150, 0.35, 8).unwrap();
    let spec = find(gol_cuda::ENGINES, EngineId::CudaBitsliced).unwrap();
    let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
    engine.load(&grid, rule).unwrap();
    let oracle = find(cpu::ENGINES, EngineId::CpuScalar).unwrap();
    step_until_own_kernel(engine.as_mut(), oracle, grid, rule);

    let rule = Rule::parse("B4,6/S5-8").unwrap();
    let cube = gol_core::Cube::density_soup(40, 0.3, 9).unwrap();
    let spec = find(gol_cuda::ENGINES_3D, EngineId::CudaBitsliced).unwrap();
    let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
    engine.load(&cube, rule).unwrap();
    let oracle = find(cpu::ENGINES_3D, EngineId::CpuScalar).unwrap();
    step_until_own_kernel(engine.as_mut(), oracle, cube, rule);
}

/// Kernels cached on disk that were cut short or damaged are compiled and written again; a
/// cache folder that cannot be made costs only the compilation.
#[test]
fn a_damaged_or_unwritable_kernel_cache_is_survived() {
    if !have_gpu() {
        return;
    }
    // The rule's own kernel, waited for: a run on the generic kernel would end before the
    // compile that fills the cache.
    fn own(cache: &str) -> [(&str, &str); 2] {
        [("GOL_CACHE_DIR", cache), ("GOL_RULE_KERNEL", "own")]
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("kernels");
    let cache_str = cache.to_str().unwrap();
    run_ignored_test("one_bitsliced_run_matches_the_oracle", &own(cache_str));
    let files = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect()
    };
    let written: Vec<(std::path::PathBuf, Vec<u8>)> = files()
        .into_iter()
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    assert!(!written.is_empty(), "the run filled the cache");
    for damage in ["truncate", "flip"] {
        for (path, bytes) in &written {
            let mut bad = bytes.clone();
            match damage {
                "truncate" => bad.truncate(bytes.len() / 2),
                _ => {
                    let middle = bad.len() / 2;
                    bad[middle] ^= 0x40;
                }
            }
            std::fs::write(path, bad).unwrap();
        }
        run_ignored_test("one_bitsliced_run_matches_the_oracle", &own(cache_str));
        for (path, bytes) in &written {
            assert_eq!(
                &std::fs::read(path).unwrap(),
                bytes,
                "{damage}: {path:?} rewritten whole"
            );
        }
    }
    let plain = dir.path().join("plain");
    std::fs::write(&plain, "not a folder").unwrap();
    let under_a_file = plain.join("kernels");
    run_ignored_test(
        "one_bitsliced_run_matches_the_oracle",
        &own(under_a_file.to_str().unwrap()),
    );
}

/// A soup of `states` states: a cell is alive with probability about `density`, in a random
/// state from 1 up.
fn random_states_soup(width: usize, height: usize, states: u32, density: f64, seed: u64) -> Grid {
    let mut rng = gol_core::seed::SplitMix64::new(seed);
    let mut grid = Grid::with_states(width, height, states).unwrap();
    for y in 0..height {
        for x in 0..width {
            if (rng.next() % 1000) as f64 / 1000.0 < density {
                grid.set_state(x, y, 1 + (rng.next() % (states as u64 - 1)) as u32);
            }
        }
    }
    grid
}

#[test]
fn cuda_states_matches_the_oracle_on_tables_and_larger_than_life() {
    if !have_gpu() {
        return;
    }
    let oracle = find(cpu::ENGINES, EngineId::CpuScalar).unwrap();
    let mut rng = gol_core::seed::SplitMix64::new(43);
    // Tables: 4 states Moore (a flat lookup of 2 bits an entry in shared memory), 5 states
    // Moore (4 bits an entry, 1 MB: global memory), 9 states von Neumann (shared), 7 states
    // Moore (no flat lookup: the tree), 2 and 3 states; Larger than Life: every shape, ranges
    // 1 to 20 and 140 (sums past 2^16).
    let mut rules = Vec::new();
    for (states, eight) in [
        (4, true),
        (5, true),
        (9, false),
        (7, true),
        (2, true),
        (3, false),
    ] {
        let table = gol_core::rule::RuleTable::random(states, eight, &mut || rng.next());
        rules.push(Rule::from_table(gol_core::rule::table::intern(table)));
    }
    for _ in 0..6 {
        let (larger, states) = gol_core::rule::Larger::random(20, &mut || rng.next());
        rules.push(Rule::from_larger(larger, states));
    }
    rules.push(Rule::parse("R140,C3,M1,S20000..40000,B20000..27000,NM").unwrap());
    rules.push(Rule::parse("R60,C0,M0,S3000..5000,B3000..4000,NC").unwrap());
    let sizes = [
        (1, 1),
        (2, 3),
        (3, 1),
        (5, 7),
        (33, 17),
        (64, 2),
        (257, 129),
        (300, 301),
    ];
    for (i, rule) in rules.iter().enumerate() {
        for (k, &(w, h)) in sizes.iter().enumerate() {
            let topology = [Topology::Torus, Topology::Plane][(i + k) % 2];
            let rule = rule.on(topology);
            let grid = random_states_soup(w, h, rule.states(), 0.4, (i * 31 + k) as u64);
            let gens = 1 + (i + k) as u64 % 9;
            let expected = evolve(oracle, &grid, rule, gens).unwrap();
            let got = run(
                EngineId::CudaStates,
                &EngineOptions::default(),
                &grid,
                rule,
                gens,
            );
            assert_eq!(
                expected.first_difference(&got),
                None,
                "cuda-states on {w}x{h} {rule} {gens} gens"
            );
        }
        // Long rows (many segments of row sums) and many rows (the launch's limit along y).
        for (w, h) in [(20_000, 3), (3, 200_000)] {
            let rule = rule.on(Topology::Torus);
            let grid = random_states_soup(w, h, rule.states(), 0.4, i as u64);
            let expected = evolve(oracle, &grid, rule, 2).unwrap();
            let got = run(
                EngineId::CudaStates,
                &EngineOptions::default(),
                &grid,
                rule,
                2,
            );
            assert_eq!(
                expected.first_difference(&got),
                None,
                "cuda-states on {w}x{h} {rule}"
            );
        }
    }
}
