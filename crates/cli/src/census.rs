//! `gol census`: apgsearch's C1 soups of B3/S23 censused on every core, written as a haul in
//! apgsearch's format; a long census checkpointed and resumed, or run until Ctrl-C.

use std::io::Write;
use std::ops::Range;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use gol_census::census::{self, Haul, Tally};
use gol_census::gpu::{self, GpuCensus};

use crate::cli::{CensusArgs, Gpus, Soups};
use crate::interrupt;

/// A census in progress, as its checkpoint holds it.
#[derive(serde::Serialize, serde::Deserialize)]
struct Saved {
    root: String,
    haul: Haul,
}

/// Soups censused between two looks at Ctrl-C, checkpoints and progress.
const ROUND: u64 = 1 << 16;

/// [`ROUND`] for each GPU with `--gpus`: a GPU holds 2^17 soups at once, and starts on the next
/// round's soups while a round's longest soups finish.
const GPU_ROUND: u64 = 1 << 20;

pub fn census(args: &CensusArgs) -> Result<()> {
    if !args.rule.eq_ignore_ascii_case("b3s23") && !args.rule.eq_ignore_ascii_case("B3/S23") {
        bail!(
            "--rule {}: the census runs B3/S23 (b3s23) only, whose ash apgsearch's object rules are made for",
            args.rule
        );
    }
    if args.symmetry != "C1" {
        bail!(
            "--symmetry {}: the census makes C1 soups only (apgsearch's 16x16 random squares)",
            args.symmetry
        );
    }
    let (root, haul) = match &args.resume {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading the census checkpoint {}", path.display()))?;
            let saved: Saved = serde_json::from_str(&text)
                .with_context(|| format!("{}: not a census checkpoint", path.display()))?;
            if args.root.as_ref().is_some_and(|r| *r != saved.root) {
                bail!(
                    "--root {}: the checkpoint {} is of root {}",
                    args.root.as_deref().unwrap_or(""),
                    path.display(),
                    saved.root
                );
            }
            (saved.root, saved.haul)
        }
        None => {
            let root = match &args.root {
                Some(root) => root.clone(),
                None => census::new_root(&format!(
                    "{:?} {}",
                    std::time::SystemTime::now(),
                    std::process::id()
                )),
            };
            (root, Haul::default())
        }
    };
    census::check_root(&root).map_err(|e| anyhow::anyhow!("--root: {e}"))?;
    let total = match args.soups {
        Soups::Count(0) => bail!("--soups 0: a census needs at least one soup"),
        Soups::Count(n) => Some(n),
        Soups::All => None,
    };
    if let (Some(n), true) = (total, haul.soups > 0) {
        if haul.soups > n {
            bail!(
                "--soups {n}: the checkpoint already holds {} soups",
                haul.soups
            );
        }
    }
    let mut gpus = match args.gpus {
        None => Vec::new(),
        Some(gpus) => {
            let count = match gpus {
                Gpus::All => gol_cuda::device::device_count()?,
                Gpus::Count(n) => n,
            };
            (0..count)
                .map(|ordinal| GpuCensus::new(ordinal, &gpu::TIERS))
                .collect::<Result<Vec<_>, _>>()?
        }
    };
    let round = match gpus.len() {
        0 => ROUND,
        n => GPU_ROUND * n as u64,
    };
    interrupt::catch();
    interrupt::looping();
    let start = Instant::now();
    let began = haul.soups;
    let mut tallies = args
        .tallies
        .as_ref()
        .map(|path| {
            std::fs::File::create(path)
                .map(std::io::BufWriter::new)
                .with_context(|| format!("creating {}", path.display()))
        })
        .transpose()?;
    if let Some(out) = &mut tallies {
        writeln!(out, "index\tsettled_at\tperiod\ttally")?;
    }
    // Each round's tallies are kept (added to the haul, written out, checkpointed) on a thread
    // of their own while the next round runs: on one thread that takes a second or so a round
    // of a GPU's 2^20 soups, while the GPU would wait.
    let mut keeper = Keeper {
        haul,
        tallies,
        checkpoint: args.checkpoint.as_deref(),
        root: &root,
        start,
        began,
    };
    let mut handed = keeper.haul.soups;
    let mut held_up = Duration::ZERO;
    std::thread::scope(|scope| -> Result<()> {
        let (sender, receiver) = std::sync::mpsc::sync_channel::<(u64, Vec<Tally>)>(0);
        let keeping = std::thread::Builder::new()
            .name("census-keeper".into())
            .spawn_scoped(scope, || keeper.keep_all(receiver))
            .expect("the haul's keeper starts");
        while total.is_none_or(|n| handed < n) && interrupt::received().is_none() {
            let count = total.map_or(round, |n| (n - handed).min(round));
            let first = handed;
            let done = match gpus.is_empty() {
                true => census::tallies(&root, first, count, &interrupt::STOP),
                false => {
                    // The next round's soups, for the GPUs to start on while this round's last
                    // soups finish.
                    let next = total.map_or(round, |n| (n - first - count).min(round));
                    on_gpus(&mut gpus, &root, first..first + count, next)?
                }
            };
            handed += done.len() as u64;
            let clock = Instant::now();
            // The keeper only leaves early on an error, which its join gives.
            if sender.send((first, done)).is_err() {
                break;
            }
            held_up += clock.elapsed();
        }
        drop(sender);
        keeping.join().expect("the haul's keeper does not panic")
    })?;
    let haul = keeper.haul;
    if !gpus.is_empty() {
        eprintln!(
            "gol census: the GPUs waited {:.2} s for the haul to be kept",
            held_up.as_secs_f64()
        );
    }
    for (i, gpu) in gpus.iter().enumerate() {
        let list = |counts: &std::collections::BTreeMap<&str, u64>| {
            let items: Vec<String> = counts.iter().map(|(why, n)| format!("{why} {n}")).collect();
            match items.is_empty() {
                true => "none".to_string(),
                false => items.join(", "),
            }
        };
        eprintln!(
            "gol census: GPU {i}: soups moved to larger boxes: {} ({} going on from where they \
             stopped); handed back to the CPU: {}; censused by the CPU's threads beside it: {}; \
             its driving thread looked {:.2} s (read back {:.2} s), filled boxes {:.2} s, waited \
             {:.2} s, waited for the CPU's threads at the ends of calls {:.2} s; its loop ran \
             {:.2} s",
            list(&gpu.moved),
            gpu.went_on,
            list(&gpu.handed_back),
            gpu.from_back,
            gpu.driving.looking.as_secs_f64(),
            gpu.driving.reading.as_secs_f64(),
            gpu.driving.filling.as_secs_f64(),
            gpu.driving.waiting.as_secs_f64(),
            gpu.driving.tail.as_secs_f64(),
            gpu.driving.running.as_secs_f64(),
        );
        let d = &gpu.driving;
        let kinds: Vec<String> = gpu::STOPPED
            .iter()
            .zip(&d.looked)
            .map(|(what, l)| format!("{what} {} ({:.2} s)", l.soups, l.cpu.as_secs_f64()))
            .collect();
        eprintln!(
            "gol census: GPU {i}: {} looks, written back in {:.2} s, new soups made in {:.2} s; \
             stopped soups looked at, with the CPU time spent on them: {}",
            d.looks,
            d.writing.as_secs_f64(),
            d.making.as_secs_f64(),
            kinds.join(", ")
        );
    }
    let mut text = String::new();
    haul.write(&root, &mut text);
    match &args.output {
        Some(path) => gol_core::replace::replace(path, false, |mut file, _| {
            file.write_all(text.as_bytes())
                .map_err(|e| gol_core::Error::Io {
                    path: path.clone(),
                    source: e,
                })
        })?,
        None => print!("{text}"),
    }
    Ok(())
}

/// The haul of a census in progress, and where each round's tallies go.
struct Keeper<'a> {
    haul: Haul,
    /// `--tallies`' file.
    tallies: Option<std::io::BufWriter<std::fs::File>>,
    checkpoint: Option<&'a std::path::Path>,
    root: &'a str,
    /// When the census started, and the soups its haul held then (for soups/s).
    start: Instant,
    began: u64,
}

impl Keeper<'_> {
    /// Keeps the tallies of each round received, (first soup, tallies) in order: added to the
    /// haul, written to `--tallies`, checkpointed and reported; `--tallies` flushed at the end.
    fn keep_all(&mut self, rounds: std::sync::mpsc::Receiver<(u64, Vec<Tally>)>) -> Result<()> {
        for (first, done) in rounds {
            self.keep(first, &done)?;
        }
        if let Some(out) = &mut self.tallies {
            out.flush()?;
        }
        Ok(())
    }

    fn keep(&mut self, first: u64, done: &[Tally]) -> Result<()> {
        self.haul.add_all(first, done);
        if let Some(out) = &mut self.tallies {
            for (i, tally) in done.iter().enumerate() {
                let items: Vec<String> = tally
                    .objects
                    .iter()
                    .map(|(c, n)| format!("{c}:{n}"))
                    .collect();
                writeln!(
                    out,
                    "{}\t{}\t{}\t{}",
                    first + i as u64,
                    tally.settled_at,
                    tally.period,
                    items.join(" ")
                )?;
            }
        }
        if let Some(path) = self.checkpoint {
            let text = serde_json::to_string(&Saved {
                root: self.root.to_string(),
                haul: self.haul.clone(),
            })?;
            gol_core::replace::replace(path, true, |mut file, _| {
                file.write_all(text.as_bytes())
                    .map_err(|e| gol_core::Error::Io {
                        path: path.to_path_buf(),
                        source: e,
                    })
            })?;
        }
        let seconds = self.start.elapsed().as_secs_f64();
        eprintln!(
            "gol census: {} soups, {} objects, {:.0} soups/s",
            self.haul.soups,
            self.haul.objects(),
            (self.haul.soups - self.began) as f64 / seconds.max(1e-9)
        );
        Ok(())
    }
}

/// The tallies of the soups of `range` of `root`, each GPU of `gpus` taking an equal share of
/// them at once, and starting on its share of the `next` soups after them once its own are
/// taken; stopped by Ctrl-C, those done from `range.start` on without a gap.
fn on_gpus(gpus: &mut [GpuCensus], root: &str, range: Range<u64>, next: u64) -> Result<Vec<Tally>> {
    let parts = shares(range.clone(), gpus.len());
    let next_parts = shares(range.end..range.end + next, gpus.len());
    let parts: Vec<Result<(u64, Vec<Tally>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = gpus
            .iter_mut()
            .zip(parts.into_iter().zip(next_parts))
            .map(|(gpu, (part, next))| {
                // Named, as the CPU's threads beside it are, for profilers and `top -H`.
                std::thread::Builder::new()
                    .name("census-gpu".into())
                    .spawn_scoped(scope, move || {
                        let n = part.end - part.start;
                        let tallies = gpu.tallies(root, part.start, n, next, &interrupt::STOP)?;
                        Ok((n, tallies))
                    })
                    .expect("a GPU's census thread starts")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a GPU's census thread does not panic"))
            .collect()
    });
    let mut out = Vec::new();
    for part in parts {
        let (asked, tallies) = part?;
        let whole = tallies.len() as u64 == asked;
        out.extend(tallies);
        if !whole {
            break;
        }
    }
    Ok(out)
}

/// `range` cut into `n` shares in order, the last ones shorter (or empty).
fn shares(range: Range<u64>, n: usize) -> Vec<Range<u64>> {
    let share = (range.end - range.start).div_ceil(n as u64);
    (0..n as u64)
        .map(|i| {
            let start = (range.start + i * share).min(range.end);
            start..(start + share).min(range.end)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_the_range_in_order() {
        assert_eq!(shares(10..20, 3), [10..14, 14..18, 18..20]);
        assert_eq!(shares(5..6, 3), [5..6, 6..6, 6..6]);
        assert_eq!(shares(7..7, 2), [7..7, 7..7]);
    }
}
