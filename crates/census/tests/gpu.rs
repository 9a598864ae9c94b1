//! The census with its soups stepped on the GPU gives each soup the CPU's tally. Without a GPU
//! these tests skip with a notice; with `GOL_REQUIRE_GPU=1` (set by the GPU bundle's
//! run-tests.sh) a missing GPU is a failure.

use std::sync::atomic::AtomicBool;

use gol_census::census;
use gol_census::gpu::GpuCensus;

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
    let mut gpu =
        GpuCensus::new(0, &[(256, slots), (256, slots), (512, 256)]).expect("the GPU's boxes");
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
