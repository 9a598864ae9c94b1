//! `gol identify FILE` and `gol run … --identify`: what a pattern is, as a report or JSON.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::Result;
use gol::{PlaneSimulation, Setup, Start};

use crate::cli::IdentifyArgs;

pub fn identify(args: &IdentifyArgs) -> Result<()> {
    let start = Instant::now();
    let setup = Setup {
        start: Start::File(args.input.clone()),
        rule: args.rule.as_deref().map(gol::Rule::parse).transpose()?,
        infinite: true,
        memory: args.memory,
        ..Setup::default()
    };
    let sim = PlaneSimulation::new(&setup)?;
    let identity = sim.identify(args.max_gens, &AtomicBool::new(false))?;
    let report = gol::identify::Report::of(
        &identity,
        sim.rule().to_string(),
        sim.source().to_string(),
        start.elapsed().as_secs_f64(),
    );
    if args.json {
        println!("{}", report.json());
    } else {
        print!("{report}");
    }
    Ok(())
}

/// The report of `gol run … --identify`: what `identify` finds (at most `limit` generations,
/// Ctrl-C stopping it) of the world at the end of a run under `rule`.
pub fn after_run(
    identify: impl FnOnce(u64, &std::sync::atomic::AtomicBool) -> gol::Result<gol::Identity>,
    limit: u64,
    rule: &str,
    source: &str,
) -> Result<gol::identify::Report> {
    let start = Instant::now();
    let identity = identify(limit, &crate::interrupt::STOP)?;
    Ok(gol::identify::Report::of(
        &identity,
        rule.to_string(),
        source.to_string(),
        start.elapsed().as_secs_f64(),
    ))
}
