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

/// cpu-states on Larger than Life squares of ranges 5 (bit planes), 20 and 100 (integers on
/// AVX-512 with VBMI and BITALG), a 2048² soup at half density: issue 43 asks range 100 to cost
/// at most twice range 5's time. The soups thin out as they run (the bit planes' cost does not
/// depend on them, but the CPU's clock may), so compare figures of one run.
fn larger_than_life(c: &mut Criterion) {
    let mut group = c.benchmark_group("larger-than-life");
    let size = 2048;
    let grid = seed::density_soup(size, size, 0.5, 1).unwrap();
    for (range, rule) in [
        (5, "R5,C0,M1,S34..58,B34..45,NM"),
        (20, "R20,C0,M1,S472..805,B472..625,NM"),
        (100, "R100,C0,M1,S11352..19365,B11352..15025,NM"),
    ] {
        let spec = gol_core::engine::find(cpu::ENGINES, EngineId::CpuStates).unwrap();
        let mut engine = (spec.create)(&EngineOptions::default()).unwrap();
        engine.load(&grid, Rule::parse(rule).unwrap()).unwrap();
        group.throughput(Throughput::Elements((size * size) as u64));
        group.bench_with_input(BenchmarkId::new("cpu-states", range), &range, |b, _| {
            b.iter(|| engine.step(1).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, engines, larger_than_life);
criterion_main!(benches);
