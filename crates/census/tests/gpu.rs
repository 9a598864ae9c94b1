//! The census with its soups stepped on the GPU gives each soup the CPU's tally. Without a GPU
//! these tests skip with a notice; with `GOL_REQUIRE_GPU=1` (set by the GPU bundle's
//! run-tests.sh) a missing GPU is a failure.

use std::sync::atomic::AtomicBool;

use gol_census::census;
use gol_census::gpu::GpuCensus;
use gol_census::objects::APART_KINDS;
use gol_cuda::soups::{Lone, SoupBoxes, SoupState, Status};

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

/// Compares the GPU's tallies of `count` soups of `root` from `first` with the CPU's, soup by
/// soup, with `slots` boxes (fewer than the soups, so that boxes are used again); where
/// `share`, the CPU's threads census soups beside the GPU, as they do in a census. The GPU
/// takes them in calls of `round` soups, each told the next call's range, as a census does.
fn same_as_cpu(root: &str, first: u64, count: u64, slots: usize, share: bool, round: u64) {
    let stop = AtomicBool::new(false);
    let mut gpu = GpuCensus::new(0, &[(256, slots), (256, slots), (512, 256), (1024, 64)])
        .expect("the GPU's boxes");
    gpu.share = share;
    let end = first + count;
    let mut on_gpu = Vec::new();
    let mut start = first;
    while start < end {
        let n = round.min(end - start);
        let next = start + n..end.min(start + n + round);
        let tallies = gpu
            .tallies(root, start, n, next, &stop)
            .expect("the GPU's census");
        assert_eq!(tallies.len() as u64, n, "every soup of a call tallied");
        on_gpu.extend(tallies);
        start += n;
    }
    // Most settled soups' ash named on the GPU, the rest on the host: both ways taken.
    let looked = |kind: &str| {
        let k = gol_census::gpu::STOPPED.iter().position(|&s| s == kind);
        gpu.driving.looked[k.expect("a kind of stop")].soups
    };
    let (named, settled) = (looked("named"), looked("settled"));
    assert!(
        named > settled && settled > 0,
        "{named} soups' ash named on the GPU, {settled} on the host"
    );
    let on_cpu = census::tallies(root, first, count, &stop);
    assert_eq!(on_gpu.len(), on_cpu.len());
    let differ: Vec<String> = on_gpu
        .iter()
        .zip(&on_cpu)
        .enumerate()
        .filter(|(_, (g, c))| g.objects != c.objects)
        .map(|(i, (g, c))| {
            format!(
                "soup {}: GPU {:?}, CPU {:?}",
                first + i as u64,
                g.objects,
                c.objects
            )
        })
        .collect();
    assert!(
        differ.is_empty(),
        "{} soups differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

#[test]
fn the_gpus_tallies_are_the_cpus() {
    if !have_gpu() {
        return;
    }
    // The GPU's own tallies, the CPU's threads censusing only the soups it hands back.
    same_as_cpu("k_testseed", 0, 20_000, 4096, false, 20_000);
    same_as_cpu("l_kEwHfF3ArtPb", 5_000, 20_000, 1 << 17, false, 20_000);
    // In calls of 7,000 soups, each call's soups taken by the GPU before the last call's are
    // done: the tallies still the CPU's, soup for soup.
    same_as_cpu("k_testseed", 3, 24_000, 4096, false, 7_000);
    // As in a census: soups shared with the CPU's threads, every one tallied once.
    same_as_cpu("k_testseed", 7, 30_001, 1024, true, 30_001);
    same_as_cpu("k_testseed", 7, 30_001, 1024, true, 10_000);
}

/// The GPU names a settled soup's ash where every object of it is of its kinds and stands
/// apart (none touching another), its period checked; it leaves every other ash to the host.
#[test]
fn the_gpu_names_ash_of_common_objects_apart_only() {
    if !have_gpu() {
        return;
    }
    let gpu = gol_cuda::device::gpu().expect("a GPU");
    let kinds: Vec<Lone> = APART_KINDS.iter().map(|k| k.window).collect();
    let side = 256;
    let block = |x: i64, y: i64| vec![(x, y), (x + 1, y), (x, y + 1), (x + 1, y + 1)];
    let lying = |x: i64, y: i64| vec![(x, y), (x + 1, y), (x + 2, y)];
    let standing = |x: i64, y: i64| vec![(x, y), (x, y + 1), (x, y + 2)];
    let tub = |x: i64, y: i64| vec![(x + 1, y), (x, y + 1), (x + 2, y + 1), (x + 1, y + 2)];
    let eater: Vec<(i64, i64)> = gol_census::apgcode::decode("178c").expect("an eater");
    let at = |cells: &[(i64, i64)], dx: i64, dy: i64| -> Vec<(i64, i64)> {
        cells.iter().map(|&(x, y)| (x + dx, y + dy)).collect()
    };
    // Each case: an ash, the period the kernel found, and what the GPU names it (nothing:
    // the host names it).
    type Case = (Vec<(i64, i64)>, u32, Vec<(&'static str, u64)>);
    let cases: Vec<Case> = vec![
        // Lone blocks and a blinker: named.
        (
            [block(100, 100), lying(140, 100), block(60, 150)].concat(),
            2,
            vec![("xp2_7", 1), ("xs4_33", 2)],
        ),
        // Across words' ends (a block over columns 31 and 32, a blinker whose other phase
        // reaches column 64), and a loaf and a toad: named.
        (
            [
                block(31, 60),
                standing(63, 80),
                at(&gol_census::apgcode::decode("2596").unwrap(), 90, 40),
                at(&gol_census::apgcode::decode("7e").unwrap(), 150, 160),
            ]
            .concat(),
            2,
            vec![("xp2_7", 1), ("xp2_7e", 1), ("xs4_33", 1), ("xs7_2596", 1)],
        ),
        // Blocks within √5 of each other, a column or a row apart (one cluster each pair,
        // which the host cuts into its blocks): named.
        (
            [
                block(100, 100),
                block(103, 100),
                block(60, 60),
                block(60, 63),
            ]
            .concat(),
            1,
            vec![("xs4_33", 4)],
        ),
        // Two tubs touching at a corner (one still life to the host), an eater (no kind of
        // the GPU's), and a blinker said to be still (its hashes matched falsely): the host's.
        ([tub(100, 100), tub(102, 102)].concat(), 1, vec![]),
        ([block(100, 100), at(&eater, 140, 120)].concat(), 1, vec![]),
        (lying(100, 100), 1, vec![]),
    ];
    let mut boxes = SoupBoxes::new(&gpu, cases.len(), side, &[0; 16], &kinds).expect("boxes");
    let going_on: Vec<(SoupState, Vec<u64>)> = cases
        .iter()
        .map(|(cells, period, _)| {
            let (top, bottom) = (
                cells.iter().map(|c| c.1).min().unwrap() as u32,
                cells.iter().map(|c| c.1).max().unwrap() as u32,
            );
            let mut words = std::collections::BTreeMap::new();
            for &(x, y) in cells {
                let place = (y as u64 * side as u64 + x as u64) / 32;
                *words.entry(place).or_insert(0u32) |= 1 << (x % 32);
            }
            let words = words.into_iter().map(|(p, w)| p << 32 | w as u64).collect();
            let state = SoupState::new(Status::Settled, 100, top, bottom, *period);
            (state, words)
        })
        .collect();
    let slots: Vec<u32> = (0..cases.len() as u32).collect();
    boxes.place(&slots, &[], &going_on).expect("placed");
    // Nothing to step (no soup is running): the stopped soups' words gathered, and named.
    boxes.start(0, 1 << 14).expect("gathered");
    let live = boxes.read_back(|_| false).expect("the words").live;
    for (slot, (_, _, want)) in cases.iter().enumerate() {
        let mut named = std::collections::BTreeMap::new();
        for (k, n) in live.named(slot) {
            *named.entry(APART_KINDS[k].codes[0]).or_insert(0) += n;
        }
        let named: Vec<(&str, u64)> = named.into_iter().collect();
        assert_eq!(&named, want, "case {slot}");
        // The words of an ash not named, for the host to name; none of one named.
        let words = if named.is_empty() {
            going_on[slot].1.len()
        } else {
            0
        };
        assert_eq!(live.of(slot).len(), words, "case {slot}: its words");
    }
}
