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
