//! `gol verify`: the library's cross-check of every engine ([`gol::verify`]), its report on
//! standard output and its notices of skipped engines on standard error.

use anyhow::Result;
use gol::verify::{self, Line, Options};

use crate::cli::VerifyArgs;

pub fn verify(args: &VerifyArgs) -> Result<()> {
    let options = Options {
        seed: args.seed,
        cases: args.cases,
        quick: args.quick,
        engines: args.engines.clone(),
    };
    verify::run(&options, &mut |line| match line {
        Line::Checked(text) => println!("{text}"),
        Line::Skipped(text) => eprintln!("{text}"),
    })?;
    Ok(())
}
