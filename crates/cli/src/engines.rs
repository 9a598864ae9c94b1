//! Every engine this build has, CUDA and CPU, and `--engine auto`.

use anyhow::Result;
use gol_core::engine::{self, Engine, EngineOptions, EngineSpec};

/// All registered 2D engines, fastest first: the CUDA ones, then the CPU ones.
pub fn all() -> Vec<EngineSpec> {
    gol_cuda::ENGINES
        .iter()
        .chain(gol_core::cpu::ENGINES)
        .copied()
        .collect()
}

/// Makes the engine `name`; `auto` gives the first (fastest) engine that can run here with
/// these options.
pub fn create(name: &str, options: &EngineOptions) -> Result<Box<dyn Engine>> {
    let specs = all();
    if name == "auto" {
        let mut reasons: Vec<String> = Vec::new();
        for spec in &specs {
            match (spec.create)(options) {
                Ok(engine) => return Ok(engine),
                Err(e) if !reasons.contains(&e.to_string()) => reasons.push(e.to_string()),
                Err(_) => {}
            }
        }
        anyhow::bail!("no engine can run here: {}", reasons.join("; "));
    }
    let spec = engine::find(&specs, name)?;
    Ok((spec.create)(options)?)
}
