//! `gol census`: apgsearch's C1 soups of B3/S23 censused on every core, written as a haul in
//! apgsearch's format; a long census checkpointed and resumed, or run until Ctrl-C.

use std::io::Write;
use std::time::Instant;

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

/// [`ROUND`] for each GPU with `--gpus`: a GPU holds 2^17 soups at once, and a round ends
/// waiting for its longest soups.
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
    let (root, mut haul) = match &args.resume {
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
    while total.is_none_or(|n| haul.soups < n) && interrupt::received().is_none() {
        let count = total.map_or(round, |n| (n - haul.soups).min(round));
        let first = haul.soups;
        let done = match gpus.is_empty() {
            true => census::tallies(&root, first, count, &interrupt::STOP),
            false => on_gpus(&mut gpus, &root, first, count)?,
        };
        for (i, tally) in done.iter().enumerate() {
            haul.add(first + i as u64, tally);
            if let Some(out) = &mut tallies {
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
        if let Some(path) = &args.checkpoint {
            let text = serde_json::to_string(&Saved {
                root: root.clone(),
                haul: haul.clone(),
            })?;
            gol_core::replace::replace(path, true, |mut file, _| {
                file.write_all(text.as_bytes())
                    .map_err(|e| gol_core::Error::Io {
                        path: path.clone(),
                        source: e,
                    })
            })?;
        }
        let seconds = start.elapsed().as_secs_f64();
        eprintln!(
            "gol census: {} soups, {} objects, {:.0} soups/s",
            haul.soups,
            haul.objects(),
            (haul.soups - began) as f64 / seconds.max(1e-9)
        );
    }
    if let Some(mut out) = tallies {
        out.flush()?;
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
            "gol census: GPU {i}: soups moved to larger boxes: {}; handed back to the CPU: {}",
            list(&gpu.moved),
            list(&gpu.handed_back)
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

/// The tallies of soups `first..first + count` of `root`, each GPU of `gpus` taking an equal
/// share of them in turn, all at once; stopped by Ctrl-C, those done from `first` on without
/// a gap.
fn on_gpus(gpus: &mut [GpuCensus], root: &str, first: u64, count: u64) -> Result<Vec<Tally>> {
    let share = count.div_ceil(gpus.len() as u64);
    let parts: Vec<Result<(u64, Vec<Tally>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = gpus
            .iter_mut()
            .enumerate()
            .map(|(i, gpu)| {
                let start = first + i as u64 * share;
                let n = share.min((first + count).saturating_sub(start));
                scope.spawn(move || {
                    let tallies = gpu.tallies(root, start, n, &interrupt::STOP)?;
                    Ok((n, tallies))
                })
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
