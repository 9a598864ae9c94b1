//! `gol`: the command-line tool. Parses the arguments, runs the command, and turns any error
//! into one line on stderr and a non-zero exit code.

mod bench;
mod cli;
mod engines;
mod info;
mod machine;
mod plot;
mod problem;
#[cfg(feature = "mpi")]
mod ranks;
mod run;
mod scaling;
mod verify;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};

fn main() -> ExitCode {
    // Like other Unix tools, end quietly when the reader of our output goes away (`gol … | head`)
    // instead of failing on the broken pipe.
    #[cfg(unix)]
    // SAFETY: first thing in main, before any other thread exists; SIG_DFL is a valid disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // clap's message runs over several lines (the error, the arguments concerned, the
            // usage); keep the part before the usage, on one line.
            let text = e.render().to_string();
            let message: Vec<&str> = text
                .lines()
                .take_while(|l| !l.is_empty() && !l.starts_with("Usage:"))
                .map(str::trim)
                .collect();
            eprintln!("gol: {}", message.join(" ").trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    match execute(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gol: {}", one_line(&e));
            ExitCode::FAILURE
        }
    }
}

fn execute(cli: &Cli) -> anyhow::Result<()> {
    if let Some(threads) = cli.threads {
        if threads == 0 {
            anyhow::bail!("--threads must be at least 1");
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()?;
    }
    match &cli.command {
        Command::Run(args) => run::run(args),
        Command::Bench(args) => bench::bench(args),
        Command::Verify(args) => verify::verify(args),
        Command::Info => info::info(),
    }
}

/// The error and its causes on one line.
fn one_line(e: &anyhow::Error) -> String {
    let parts: Vec<String> = e
        .chain()
        .map(|c| c.to_string().replace('\n', " "))
        .collect();
    parts.join(": ")
}
