//! `gol info`: the machine and the engines.

use anyhow::Result;
use gol_core::{Cube, EngineOptions, Grid};

use crate::machine;
use gol::Dimension;

pub fn info() -> Result<()> {
    let m = machine::describe();
    println!("CPU: {}", m.cpu);
    println!("CPU features: {}", m.features.join(" "));
    println!("Threads: {}", m.threads);
    println!("cpu-bitsliced instruction set: {}", m.bitsliced_isa);
    match gol_cuda::report() {
        Ok(lines) => lines.iter().for_each(|l| println!("{l}")),
        Err(e) => println!("GPU: none usable ({e})"),
    }
    println!("{}", gol_cuda::shipped_report());
    list::<Grid>();
    list::<Cube>();
    println!("Engines (the infinite plane; auto races the two on the pattern, see `gol run`):");
    println!(
        "  {:<14} Gosper's HashLife on every core: a hash-consed quadtree with memoised results, any number of generations [available]",
        "hashlife"
    );
    println!(
        "  {:<14} dense 64x64 bit-sliced tiles where there are cells, asleep where nothing changes, every core; two-state rules [available]",
        "tiles"
    );
    Ok(())
}

/// The engines of one dimension and whether they run here.
fn list<W: Dimension>() {
    println!(
        "Engines ({}, fastest first; auto picks by estimated whole-run time, see `gol run`):",
        W::DIMENSION
    );
    for spec in W::registry() {
        let status = match (spec.create)(&EngineOptions::default()) {
            Ok(_) => "available".to_string(),
            Err(e) => format!("unavailable: {e}"),
        };
        println!("  {:<14} {} [{status}]", spec.name(), spec.description);
    }
}
