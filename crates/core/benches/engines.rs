//! Criterion benches of the CPU engines on random soups.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gol_core::{cpu, seed, EngineOptions, Rule};

fn engines(c: &mut Criterion) {
    let mut group = c.benchmark_group("generation");
    for &(name, size) in &[
        ("cpu-scalar", 512),
        ("cpu-table", 512),
        ("cpu-bitsliced", 512),
        ("cpu-bitsliced", 4096),
    ] {
        let spec = gol_core::engine::find(cpu::ENGINES, name).unwrap();
        let grid = seed::glibc_soup(size, size, 1).unwrap();
        let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
        engine.load(&grid, Rule::LIFE).unwrap();
        group.throughput(Throughput::Elements((size * size) as u64));
        group.bench_with_input(BenchmarkId::new(name, size), &size, |b, _| {
            b.iter(|| engine.step(1).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, engines);
criterion_main!(benches);
