//! Criterion benches of the pictures a viewer asks for: a 4096² world shown zoomed out.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gol_core::picture::{blocks, View};
use gol_core::seed;

fn zoomed_out(c: &mut Criterion) {
    let mut group = c.benchmark_group("blocks");
    let side = 4096;
    let grid = seed::density_soup(side, side, 0.5, 1).unwrap();
    // Blocks of 4 (the whole world on a 1920×1080 canvas), 3 (no word alignment) and 16.
    for block in [4, 3, 16] {
        group.throughput(Throughput::Elements((side * side) as u64));
        group.bench_with_input(BenchmarkId::new("4096", block), &block, |b, &block| {
            b.iter(|| blocks(&grid, &View::whole(side, side), block))
        });
    }
    group.finish();
}

criterion_group!(benches, zoomed_out);
criterion_main!(benches);
