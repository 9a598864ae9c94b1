//! Criterion benches of the CPU engines on random soups.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gol_core::{cpu, seed, EngineId, EngineOptions, Rule};

fn engines(c: &mut Criterion) {
    let mut group = c.benchmark_group("generation");
    for &(id, size) in &[
        (EngineId::CpuScalar, 512),
        (EngineId::CpuTable, 512),
        (EngineId::CpuBitsliced, 512),
        (EngineId::CpuBitsliced, 4096),
    ] {
        let spec = gol_core::engine::find(cpu::ENGINES, id).unwrap();
        let grid = seed::glibc_soup(size, size, 1).unwrap();
        let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
        engine.load(&grid, Rule::LIFE).unwrap();
        group.throughput(Throughput::Elements((size * size) as u64));
        group.bench_with_input(BenchmarkId::new(id.name(), size), &size, |b, _| {
            b.iter(|| engine.step(1).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, engines);
criterion_main!(benches);
