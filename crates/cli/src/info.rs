//! `gol info`: the machine and the engines.

use anyhow::Result;
use gol_core::EngineOptions;

use crate::{engines, machine};

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
    println!("Engines (2D, fastest first; auto picks the first that runs here):");
    for spec in engines::all() {
        let status = match (spec.create)(&EngineOptions::default()) {
            Ok(_) => "available".to_string(),
            Err(e) => format!("unavailable: {e}"),
        };
        println!("  {:<14} {} [{status}]", spec.name, spec.description);
    }
    Ok(())
}
