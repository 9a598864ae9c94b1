//! `gol`: the command-line tool. Parses the arguments, runs the command, and turns any error
//! into one line on stderr and a non-zero exit code.

mod allocator;
mod bench;
mod census;
mod cli;
mod identify;
mod info;
mod interrupt;
mod machine;
mod plane;
mod plot;
#[cfg(feature = "mpi")]
mod ranks;
mod run;
mod scaling;
mod verify;
mod view;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};

#[global_allocator]
static ALLOCATOR: allocator::Split = allocator::Split;

fn main() -> ExitCode {
    // Like other Unix tools, end quietly when the reader of our output goes away (`gol … | head`)
    // instead of failing on the broken pipe.
    #[cfg(unix)]
    // SAFETY: first thing in main, before any other thread exists; SIG_DFL is a valid disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // A write past the file-size limit (`ulimit -f`) fails with EFBIG, which the writer reports
    // (and the file it replaces stays whole), rather than killing the process.
    #[cfg(unix)]
    // SAFETY: as above; SIG_IGN is a valid disposition.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
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
    if one_queue_is_enough(&cli) && std::env::var_os(CONNECTIONS).is_none() {
        // Still before any other thread exists, so nothing reads the environment meanwhile.
        std::env::set_var(CONNECTIONS, "1");
    }
    match execute(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => match e.downcast_ref::<interrupt::Interrupted>() {
            Some(stopped) => {
                // An MPI rank other than 0 stops without a word: rank 0 says it.
                if !stopped.message.is_empty() {
                    eprintln!("gol: {}", stopped.message);
                }
                ExitCode::from(stopped.exit_code())
            }
            None => {
                eprintln!("gol: {}", one_line(&e));
                ExitCode::FAILURE
            }
        },
    }
}

/// How many hardware queues the CUDA driver gives a context (8 unless set); it reads this when
/// the context is made.
const CONNECTIONS: &str = "CUDA_DEVICE_MAX_CONNECTIONS";

/// Whether the command runs all its GPU work on one stream: `gol run` without `--gpus` (one
/// engine, one stream). One hardware queue then serves it as well as eight, and the driver
/// makes and destroys a context of one queue in about half the time: on the H100, 0.10–0.12 s
/// against 0.05–0.06 s to make it, and a bare CUDA process took 0.28–0.33 s against 0.21 s
/// whole. The split runs of `--gpus` copy halos on streams of their own, which would share
/// the one queue, so they keep the driver's default; so does a user who set the variable.
fn one_queue_is_enough(cli: &Cli) -> bool {
    matches!(&cli.command, Command::Run(args) if args.gpus.is_none())
}

/// The most worker threads `--threads` may ask for, for each CPU the process may use: more
/// only divide the same cores finer (100000 threads ran for ten minutes).
const MOST_THREADS_PER_CPU: usize = 4;

/// Address space a worker thread may take: glibc reserves 64 MiB for the malloc arena of each
/// thread that allocates, besides its stack.
const THREAD_ADDRESS_SPACE: u64 = 66 << 20;

/// Worker threads by default: one a CPU, but under an address-space limit (`ulimit -v`) no more
/// than a quarter of what it leaves can hold ([`THREAD_ADDRESS_SPACE`] each), so that the
/// threads start and the grid's own memory is what the limit refuses, in one line (rayon
/// panics when its default pool cannot start: 32 threads and a GPU driver overran 1 GB).
fn default_threads() -> Option<usize> {
    let left = gol_core::memory::address_space_left()?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    Some(((left / 4 / THREAD_ADDRESS_SPACE) as usize).clamp(1, cpus))
}

fn execute(cli: &Cli) -> anyhow::Result<()> {
    if let Some(threads) = cli.threads {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let most = MOST_THREADS_PER_CPU * cpus;
        if threads == 0 || threads > most {
            anyhow::bail!(
                "--threads {threads}: give 1 to {most} ({MOST_THREADS_PER_CPU} for each of the {cpus} CPUs here)"
            );
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .map_err(|e| {
                anyhow::anyhow!("could not start {threads} worker threads (--threads): {e}")
            })?;
    } else if let Some(threads) = default_threads() {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .map_err(|e| {
                anyhow::anyhow!(
                    "could not start {threads} worker threads under this address-space limit: {e}"
                )
            })?;
    }
    for folder in &cli.rules {
        if !folder.is_dir() {
            anyhow::bail!("--rules {}: not a folder", folder.display());
        }
    }
    gol::rule_table::set_folders(cli.rules.clone());
    match &cli.command {
        Command::Run(args) => run::run(args),
        Command::Bench(args) => bench::bench(args),
        Command::Verify(args) => verify::verify(args),
        Command::View(args) => view::view(args),
        Command::Identify(args) => identify::identify(args),
        Command::Census(args) => census::census(args),
        Command::Info => info::info(),
    }
}

/// The error and its causes on one line; a cause that the message before it already quotes
/// (as errors that name their source do) is not repeated.
fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain().map(|c| c.to_string().replace('\n', " ")) {
        if line.is_empty() {
            line = cause;
        } else if !line.ends_with(&cause) {
            line = format!("{line}: {cause}");
        }
    }
    // Messages quote at most 80 characters of input each; this bounds any that does not.
    const MOST: usize = 2000;
    if let Some((at, _)) = line.char_indices().nth(MOST) {
        line = format!(
            "{}… (message cut; {} bytes in all)",
            &line[..at],
            line.len()
        );
    }
    line
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn a_cause_already_quoted_is_not_repeated() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let core = gol_core::Error::Io {
            path: "x.rle".into(),
            source: io,
        };
        let text = one_line(&anyhow::Error::new(core).context("reading the pattern"));
        assert_eq!(text, "reading the pattern: x.rle: entity not found");
    }

    #[test]
    fn only_a_run_on_one_gpu_asks_for_one_hardware_queue() {
        let wants = |args: &[&str]| one_queue_is_enough(&Cli::try_parse_from(args).unwrap());
        assert!(wants(&["gol", "run", "--size", "64"]));
        assert!(wants(&[
            "gol",
            "run",
            "--dim",
            "3",
            "--size",
            "8",
            "--engine",
            "cuda-bitsliced"
        ]));
        assert!(!wants(&["gol", "run", "--size", "64", "--gpus", "2"]));
        assert!(!wants(&["gol", "run", "--size", "64", "--gpus", "all"]));
        assert!(!wants(&["gol", "bench", "--sizes", "64"]));
        assert!(!wants(&["gol", "info"]));
    }
}
