//! Every kernel, 2D and 3D, compiles with NVRTC for sm_90 under a fixed list of rules. NVRTC needs no GPU,
//! so this runs in CI; where NVRTC is missing it is skipped with a notice, unless
//! `GOL_REQUIRE_NVRTC=1` (set by CI, which installs it) makes that a failure.

use gol_core::Rule;
use gol_cuda::{device, kernels, nvrtc, source};

/// Whether `missing` is the case, which skips a test with a notice (or fails it where
/// `GOL_REQUIRE_NVRTC` is set).
fn skipped(missing: bool, why: &str) -> bool {
    if missing {
        assert!(
            std::env::var_os("GOL_REQUIRE_NVRTC").is_none(),
            "GOL_REQUIRE_NVRTC is set but {why}"
        );
        eprintln!("notice: {why}; skipping");
    }
    missing
}

#[test]
fn every_kernel_compiles_for_sm_90() {
    if skipped(
        !nvrtc::present(),
        "libnvrtc.so.13 cannot be loaded (pip install nvidia-cuda-nvrtc==13.0.*)",
    ) {
        return;
    }
    // Each flat rule also on a bounded plane (PLANE defined), which every 2D engine runs.
    let flat = [
        "B3/S23",
        "B36/S23",
        "B2/S",
        "B0123478/S01234678",
        "B/S",
        "B3/S23:P",
        "B36/S23:P",
    ];
    let solid = ["B6/S567", "B0,26/S0-26", "B5-7,10/S4-9,13", "B/S"];
    // Rules of the other 2D families (by sums and predicates, or by a circuit over the cells)
    // and Generations rules, which only cuda-bitsliced runs.
    let families = [
        "B2-a/S12",
        "B3/S23-a",
        "B2ce3aeijnqry4n/S1e2-a3ae4ejqt",
        "B2/S34H",
        "B2/S013V",
        "B01234/S01234V",
        "B2-a/S12:P",
        // Generations rules: the dying states as planes beside the live cells (AGE_PLANES).
        "345/2/4",
        "/2/3",
        "12/2-a/5:P",
        "34/2/9H",
        "23/3/256:P",
    ];
    let flat_kernels: Vec<_> = kernels::all().collect();
    let solid_kernels: Vec<_> = kernels::all_3d().collect();
    let bitsliced: Vec<_> = kernels::all()
        .filter(|s| s.engine == gol_core::EngineId::CudaBitsliced)
        .collect();
    let cases = flat
        .iter()
        .map(|&r| (r, &flat_kernels, false))
        .chain(families.iter().map(|&r| (r, &bitsliced, false)))
        .chain(solid.iter().map(|&r| (r, &solid_kernels, true)));
    for (rule, specs, is_3d) in cases {
        let rule = Rule::parse(rule).unwrap();
        for spec in specs.iter() {
            let engine = spec.engine;
            let cubin = nvrtc::compile(&spec.source(rule), "sm_90")
                .unwrap_or_else(|e| panic!("{engine} with {rule}: {e}"));
            assert_eq!(
                &cubin[..4],
                b"\x7fELF",
                "{engine}: the CUBIN is not an ELF image"
            );
            let machine = u16::from_le_bytes([cubin[18], cubin[19]]);
            assert_eq!(
                machine, 190,
                "{engine}: the ELF image is not for a CUDA device"
            );
            // cuda-bitsliced's counts and pictures, made where the cells lie.
            let counts: &[&str] = match (engine, is_3d) {
                (gol_core::EngineId::CudaBitsliced, false) => &["population", "block_shares"],
                (gol_core::EngineId::CudaBitsliced, true) => {
                    &["cube_population", "cube_projection"]
                }
                _ => &[],
            };
            // cuda-bitsliced builds its kernels of every depth up to the rule's deepest
            // (shallower under Generations rules, whose levels hold the ages too).
            let has = |name: &str| cubin.windows(name.len()).any(|w| w == name.as_bytes());
            let main = match (engine, is_3d) {
                (gol_core::EngineId::CudaBitsliced, false) => {
                    let deepest = source::Shape::of(rule).max_depth;
                    for depth in source::DEPTHS {
                        let name = format!("advance_{depth}");
                        assert_eq!(has(&name), depth <= deepest, "{engine} with {rule}: {name}");
                    }
                    format!("advance_{deepest}")
                }
                _ => spec.function.to_string(),
            };
            for name in [Some(main.as_str()), spec.small_function]
                .into_iter()
                .flatten()
                .chain(counts.iter().copied())
            {
                assert!(has(name), "{engine}: no kernel {name} in the CUBIN");
            }
        }
    }
}

#[test]
fn the_census_kernels_compile_for_sm_90() {
    if skipped(
        !nvrtc::present(),
        "libnvrtc.so.13 cannot be loaded (pip install nvidia-cuda-nvrtc==13.0.*)",
    ) {
        return;
    }
    for side in gol_cuda::soups::SIDES {
        let cubin = nvrtc::compile(&gol_cuda::soups::source(side), "sm_90")
            .unwrap_or_else(|e| panic!("{side}: {e}"));
        for name in ["soups_run", "soups_place", "soups_live", "soups_clear"] {
            assert!(
                cubin.windows(name.len()).any(|w| w == name.as_bytes()),
                "{side}: no kernel {name} in the CUBIN"
            );
        }
    }
}

#[test]
fn a_broken_kernel_reports_the_compiler_log() {
    if !nvrtc::present() {
        eprintln!("notice: NVRTC not found; skipping");
        return;
    }
    let err = nvrtc::compile(
        "extern \"C\" __global__ void k() { undefined_thing(); }",
        "sm_90",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("undefined_thing"), "{err}");
}

/// The CUBINs built into the binary are exactly the kernels that cuda-bitsliced asks for under
/// each dimension's default rule, its generic kernels and the census's soup kernels, on every
/// shipped architecture, and what NVRTC makes of those sources now: the build script and a run
/// agree on the source text and on the key.
#[test]
fn shipped_cubins_are_what_a_default_run_compiles() {
    use gol_core::EngineId::CudaBitsliced;
    use gol_cuda::source;

    let shipped: Vec<_> = device::shipped_cubins().collect();
    if skipped(shipped.is_empty(), "the build shipped no CUBINs") {
        return;
    }
    // The default rules' kernels, and the generic kernels that run other rules at once.
    let mut sources = vec![
        (
            kernels::spec(CudaBitsliced).source(Rule::LIFE),
            "advance_16",
        ),
        (
            kernels::spec_3d(CudaBitsliced).source(Rule::LIFE_3D),
            "cube_bitsliced",
        ),
    ];
    for kind in source::Generic::shipped() {
        let function = match kind {
            source::Generic::Flat { .. } => "rule_leaves",
            source::Generic::Solid => "rule_masks",
        };
        sources.push((kind.source(), function));
    }
    for side in source::soups::SIDES {
        sources.push((gol_cuda::soups::source(side), "soups_run"));
    }
    assert_eq!(shipped.len(), sources.len() * source::SHIPPED_ARCHES.len());
    for (source, function) in &sources {
        for arch in source::SHIPPED_ARCHES {
            let key = nvrtc::key(source, arch);
            let (_, packed) = shipped
                .iter()
                .find(|&&(k, _)| k == key)
                .unwrap_or_else(|| panic!("no shipped {function} for {arch}"));
            let cubin = device::inflate(packed).unwrap();
            assert_eq!(&cubin[..4], b"\x7fELF", "{function} for {arch}");
            assert_eq!(u16::from_le_bytes([cubin[18], cubin[19]]), 190);
            assert!(cubin
                .windows(function.len())
                .any(|w| w == function.as_bytes()));
            if arch == "sm_90" && nvrtc::present() {
                assert!(
                    cubin == nvrtc::compile(source, arch).unwrap(),
                    "{function}: the shipped sm_90 CUBIN is not NVRTC's for today's source"
                );
            }
        }
    }
}

/// The generic kernels (a rule read from constant memory) compile for sm_90, each with the
/// kernels of every depth its shape builds, the resident kernel and the counts, and with the
/// globals a run writes the rule into.
#[test]
fn generic_kernels_compile_with_their_rule_globals() {
    if skipped(
        !nvrtc::present(),
        "libnvrtc.so.13 cannot be loaded (pip install nvidia-cuda-nvrtc==13.0.*)",
    ) {
        return;
    }
    let mut kinds = source::Generic::shipped();
    // Not shipped, compiled on first use: Generations on a bounded plane, and of 8 age planes.
    kinds.extend([
        source::Generic::Flat {
            plane: true,
            age_planes: 2,
        },
        source::Generic::Flat {
            plane: false,
            age_planes: 8,
        },
    ]);
    for kind in kinds {
        let cubin =
            nvrtc::compile(&kind.source(), "sm_90").unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        let has = |name: &str| cubin.windows(name.len()).any(|w| w == name.as_bytes());
        let names: Vec<String> = match kind {
            source::Generic::Flat { age_planes, .. } => {
                let deepest = source::Shape::generic(age_planes).max_depth;
                for depth in source::DEPTHS {
                    let name = format!("advance_{depth}");
                    assert_eq!(has(&name), depth <= deepest, "{kind:?}: {name}");
                }
                let mut names = vec![
                    "rule_leaves",
                    "rule_sums",
                    "rule_by_sums",
                    "resident",
                    "population",
                    "block_shares",
                ];
                if age_planes > 0 {
                    names.push("rule_age_last");
                }
                names.into_iter().map(String::from).collect()
            }
            source::Generic::Solid => ["rule_masks", "cube_population", "cube_projection"]
                .into_iter()
                .map(String::from)
                .collect(),
        };
        for name in names {
            assert!(has(&name), "{kind:?}: no {name} in the CUBIN");
        }
    }
}
