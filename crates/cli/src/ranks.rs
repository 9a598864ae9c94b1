//! `mpirun -n P gol run …`: a torus split into P slabs along its slowest axis (rows of a 2D
//! grid, planes of constant x of a 3D cube), one per rank, each advanced by its own engine (a
//! GPU where the node has them, else the CPU engine) with halos exchanged through MPI every
//! `--halo` generations ([`gol_core::slab`] explains why that stays exact).
//!
//! Each rank makes or reads only its own layers (soups row by row, `.bin` files and checkpoints
//! by rows) and holds only its extended slab. Rank 0 writes checkpoints as the other ranks' rows
//! arrive, one rank at a time, so no rank ever holds the whole torus; only `--output` gathers
//! the whole final state on rank 0 (a file needs it), and a 2D pattern `--input` is placed in
//! the whole grid on each rank before its slab is cut.

use std::time::Instant;

use anyhow::{bail, Context, Result};
use gol_core::checkpoint::{self, Header};
use gol_core::engine::HostRows;
use gol_core::slab::{Slab, Slabs};
use gol_core::{Cube, EngineOptions, Grid, World};
use mpi::collective::SystemOperation;
use mpi::point_to_point::send_receive_into_with_tags;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use gol::auto::{self, Machine, Workload};
use gol::output::{Format, Picture};
use gol::{registry, Dim, Dimension, EngineId, Setup};

use crate::cli::RunArgs;
use crate::interrupt::{self, Interrupted};
use crate::run::{print_report, Ranks, Report};

/// The most words one message carries (MPI counts are 32-bit).
const MESSAGE_WORDS: usize = 1 << 24;

/// Whether this process was started as one rank of an MPI job.
pub fn launched() -> bool {
    crate::machine::mpi_ranks().is_some()
}

/// Runs this rank's part of the job; any rank's error stops every rank.
pub fn run(args: &RunArgs, setup: &Setup) -> Result<()> {
    let Some(universe) = mpi::initialize() else {
        bail!("MPI was already started in this process");
    };
    let world = universe.world();
    match run_rank(&world, args, setup) {
        // Every rank stopped at the same generation and the checkpoint is written: end as one
        // process would (MPI is finalised as `universe` goes).
        Err(e) if e.is::<Interrupted>() => Err(e),
        Err(e) => {
            eprintln!("gol: rank {}: {e:#}", world.rank());
            world.abort(1);
        }
        Ok(()) => Ok(()),
    }
}

fn run_rank(world: &SimpleCommunicator, args: &RunArgs, setup: &Setup) -> Result<()> {
    if args.gpus.is_some() {
        bail!("--gpus is for one process driving several GPUs; under mpirun each rank takes one");
    }
    match setup.dimension()? {
        Dim::Two => run_rank_in::<Grid>(world, args, setup),
        Dim::Three => run_rank_in::<Cube>(world, args, setup),
    }
}

fn run_rank_in<W: Dimension>(
    world: &SimpleCommunicator,
    args: &RunArgs,
    setup: &Setup,
) -> Result<()> {
    let start = Instant::now();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    if let Some(path) = &args.output {
        if Format::of(path, W::DIM)? == Format::Gif {
            bail!("--output .gif takes frames during the run, which MPI runs do not; write .png or the world's cells");
        }
    }
    let halo = args.halo.unwrap_or(W::DEFAULT_HALO);
    let (slabs, problem) = W::build_slab(setup, size, rank, halo)?;
    let total = crate::run::grid_generations(&args.problem.gens)?;
    if problem.done > total {
        bail!("{} is beyond --gens {total}", problem.source);
    }
    let gens = total - problem.done;
    let rule = problem.rule;
    let cells = slabs.width() as u64 * slabs.rows() as u64;
    let (engine, engine_choice) = create_engine::<W>(args, setup, cells, total - problem.done)?;
    let mut slab = Slab::new(engine)?;
    slab.load(&slabs, rank, &problem.world, rule)?;
    let state_bytes = 2 * 8 * problem.world.rows().words().len() as u64;
    drop(problem.world);
    let input_seconds = start.elapsed().as_secs_f64();

    world.barrier();
    let loop_start = Instant::now();
    let (mut exchange_seconds, mut checkpoint_seconds, mut checkpoints) = (0.0, 0.0, 0);
    // Every --checkpoint-every generations counted from the original start (so a resumed run
    // keeps the schedule), and once at the end.
    let schedule = setup.checkpoints.as_ref();
    let mut checkpoint = |at: u64, slab: &Slab<W>| -> Result<()> {
        let Some(schedule) = schedule else {
            return Ok(());
        };
        let t = Instant::now();
        let header = header::<W>(&slabs, rule, problem.stamp, at);
        save(world, slab, &slabs, &schedule.path, &header)?;
        checkpoint_seconds += t.elapsed().as_secs_f64();
        checkpoints += 1;
        Ok(())
    };
    let mut done = 0;
    let mut stale = false;
    let mut received = (HostRows::default(), HostRows::default());
    // A signal stops every rank after the same round: they agree on it (the largest signal
    // number any rank has seen, 0 for none) after each round.
    let mut stopped = 0;
    interrupt::looping();
    'run: while done < gens {
        let at = problem.done + done;
        let n = schedule.map_or(gens - done, |s| s.until_next(at).min(gens - done));
        for k in slabs.rounds(n) {
            if stale {
                let t = Instant::now();
                exchange(world, &mut slab, &mut received)?;
                exchange_seconds += t.elapsed().as_secs_f64();
            }
            slab.advance(k)?;
            stale = true;
            done += k;
            let seen = interrupt::received().unwrap_or(0);
            world.all_reduce_into(&seen, &mut stopped, SystemOperation::max());
            if stopped != 0 && done < gens {
                break 'run;
            }
        }
        if done < gens && schedule.is_some_and(|s| s.due(problem.done + done)) {
            checkpoint(problem.done + done, &slab)?;
        }
    }
    let interrupted = stopped != 0 && done < gens;
    checkpoint(problem.done + done, &slab)?;
    world.barrier();
    let seconds = loop_start.elapsed().as_secs_f64() - checkpoint_seconds;
    let count_start = Instant::now();
    let mut alive = 0u64;
    world.all_reduce_into(&slab.population()?, &mut alive, SystemOperation::sum());
    let count_seconds = count_start.elapsed().as_secs_f64();

    let output_start = Instant::now();
    let whole = gather(world, &slab, &slabs, args.output.is_some())?;
    if let (Some(path), Some(whole)) = (&args.output, &whole) {
        whole
            .write(path, rule, problem.stamp + total, &Picture::default())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let output_seconds = output_start.elapsed().as_secs_f64();

    let gathered = |value: f64| -> Vec<f64> {
        let mut all = vec![0.0; if rank == 0 { size } else { 0 }];
        let root = world.process_at_rank(0);
        if rank == 0 {
            root.gather_into_root(&value, &mut all[..]);
        } else {
            root.gather_into(&value);
        }
        all
    };
    let exchange_all = gathered(exchange_seconds);
    let state_all = gathered(state_bytes as f64);
    let rss_all = gathered(gol_core::memory::usage().peak_rss_bytes as f64);
    let stop = |message: String| -> Result<()> {
        if !interrupted {
            return Ok(());
        }
        Err(Interrupted {
            signal: stopped,
            message,
        }
        .into())
    };
    if rank != 0 {
        // Rank 0 says it and ends with the signal's exit code, which becomes mpirun's. The other
        // ranks end cleanly: a rank ending with an error first makes mpirun abort the job,
        // rank 0 included, perhaps before rank 0 has said it.
        return Ok(());
    }
    let updates = slabs.width() as f64 * slabs.rows() as f64 * done as f64;
    let (height, depth) = match W::AXES {
        2 => (slabs.layers(), None),
        _ => (slabs.width(), Some(slabs.width())),
    };
    let report = Report {
        alive,
        // Split runs take two-state rules only.
        live: None,
        generations: problem.done + done,
        width: slabs.width(),
        height,
        depth,
        stamp: depth.map(|_| problem.stamp + total),
        resumed_at: args.resume.as_ref().map(|_| problem.done),
        gpus: None,
        cell_updates_per_second_per_gpu: None,
        frames: None,
        checkpoints,
        checkpoint_seconds,
        interrupted,
        ranks: Some(Ranks {
            count: size,
            layer: slabs.layer(),
            layers: (0..size).map(|p| slabs.interior(p).len()).collect(),
            halo: slabs.depth(),
            state_bytes: state_all.iter().map(|&b| b as u64).collect(),
            peak_rss_bytes: rss_all.iter().map(|&b| b as u64).collect(),
            exchange_seconds: exchange_all,
        }),
        engine: slab.engine().name().to_string(),
        engine_choice: engine_choice.clone(),
        engine_details: format!(
            "{size} MPI ranks, {}-{} halos; rank 0: {}",
            slabs.depth(),
            slabs.layer(),
            slab.engine().details()
        ),
        rule: rule.to_string(),
        topology: rule.topology().name(),
        source: problem.source.to_string(),
        seconds,
        input_seconds,
        setup_seconds: 0.0,
        count_seconds,
        output_seconds,
        total_seconds: start.elapsed().as_secs_f64(),
        generations_per_second: done as f64 / seconds,
        cell_updates_per_second: updates / seconds,
        engine_timings: [(
            gol_core::slab::EXCHANGE_TIMING.to_string(),
            exchange_seconds,
        )]
        .into(),
        identity: None,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print_report(&report, args);
    }
    stop(crate::run::interrupted_message(
        args,
        stopped,
        &(problem.done + done),
        &total,
    ))
}

/// This rank's engine and why it was chosen: the one asked for, or `auto`'s choice for slabs of the whole world over
/// all ranks; on the GPU of its rank within the node where it runs on a GPU.
fn create_engine<W: Dimension>(
    args: &RunArgs,
    setup: &Setup,
    cells: u64,
    generations: u64,
) -> Result<(Box<dyn gol_core::Engine<W>>, String)> {
    let machine = Machine::here();
    let work = Workload {
        cells,
        generations,
        axes: W::AXES,
        slabs: true,
        gpu_options: args.block.is_some(),
        // Slabs run long enough for any compile: the rule's own kernel is taken as ready.
        kernel: gol_cuda::generic::Readiness::Ready,
        // Slabs need row access, which cpu-states does not give.
        states_in_bits: false,
    };
    let resolved = auto::resolve(setup.engine, &registry::ids::<W>(), &work, &machine)?;
    let id: EngineId = resolved.id;
    let local_rank: usize = [
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "MPI_LOCALRANKID",
        "PMI_LOCAL_RANK",
    ]
    .iter()
    .find_map(|var| std::env::var(var).ok()?.parse().ok())
    .unwrap_or(0);
    let options = EngineOptions {
        block: args.block,
        device: if id.on_gpu() && machine.gpus > 0 {
            local_rank % machine.gpus
        } else {
            0
        },
    };
    Ok((registry::create::<W>(id, &options)?, resolved.reason))
}

/// Swaps halos with the ranks above and below (on a ring: the torus wraps), receiving into
/// `top` and `bottom`: host memory of the engine's choosing ([`gol_core::RowAccess::host_rows`]),
/// kept from one exchange to the next, as fresh buffers would cost a page fault per page every
/// time.
fn exchange<W: World>(
    world: &SimpleCommunicator,
    slab: &mut Slab<W>,
    (top, bottom): &mut (HostRows, HostRows),
) -> Result<()> {
    let (rank, size) = (world.rank(), world.size());
    let above = world.process_at_rank((rank + size - 1) % size);
    let below = world.process_at_rank((rank + 1) % size);
    let words = slab.halo_words();
    if top.len() != words {
        *top = slab.host_rows(words)?;
        *bottom = slab.host_rows(words)?;
    }
    let out = slab.outgoing()?;
    for (sent, received) in out
        .bottom
        .chunks(MESSAGE_WORDS)
        .zip(top.chunks_mut(MESSAGE_WORDS))
    {
        send_receive_into_with_tags(sent, &below, 1, received, &above, 1);
    }
    for (sent, received) in out
        .top
        .chunks(MESSAGE_WORDS)
        .zip(bottom.chunks_mut(MESSAGE_WORDS))
    {
        send_receive_into_with_tags(sent, &above, 2, received, &below, 2);
    }
    slab.incoming(top, bottom)?;
    Ok(())
}

fn header<W: World>(slabs: &Slabs, rule: gol_core::Rule, stamp: u64, done: u64) -> Header {
    Header {
        dimension: W::AXES,
        width: slabs.width(),
        rows: slabs.rows(),
        stamp,
        done,
        rule,
    }
}

/// Writes a checkpoint: rank 0 streams its rows, then each other rank's as they arrive.
fn save<W: World>(
    world: &SimpleCommunicator,
    slab: &Slab<W>,
    slabs: &Slabs,
    path: &std::path::Path,
    header: &Header,
) -> Result<()> {
    let interior = slab.interior()?;
    if world.rank() != 0 {
        send(world, interior.words());
    } else {
        checkpoint::write_with(path, header, |sink| {
            sink.put(interior.words())?;
            let wpr = interior.words_per_row();
            for p in 1..slabs.parts() {
                let mut words = vec![0u64; slabs.interior_rows(p).len() * wpr];
                receive(world, p, &mut words);
                sink.put(&words)?;
            }
            Ok(())
        })
        .with_context(|| format!("writing checkpoint {}", path.display()))?;
    }
    world.barrier();
    Ok(())
}

/// With `wanted`, the whole state on rank 0 (every rank sends its rows); else nothing.
fn gather<W: World>(
    world: &SimpleCommunicator,
    slab: &Slab<W>,
    slabs: &Slabs,
    wanted: bool,
) -> Result<Option<W>> {
    if !wanted {
        return Ok(None);
    }
    let interior = slab.interior()?;
    if world.rank() != 0 {
        send(world, interior.words());
        return Ok(None);
    }
    let mut whole = Grid::new(slabs.width(), slabs.rows())?;
    let wpr = whole.words_per_row();
    for p in 0..slabs.parts() {
        let rows = slabs.interior_rows(p);
        let words = &mut whole.words_mut()[rows.start * wpr..rows.end * wpr];
        if p == 0 {
            words.copy_from_slice(interior.words());
        } else {
            receive(world, p, words);
        }
    }
    Ok(Some(W::from_rows(whole)?))
}

fn send(world: &SimpleCommunicator, words: &[u64]) {
    let root = world.process_at_rank(0);
    for chunk in words.chunks(MESSAGE_WORDS) {
        root.send(chunk);
    }
}

fn receive(world: &SimpleCommunicator, from: usize, words: &mut [u64]) {
    let source = world.process_at_rank(from as i32);
    for chunk in words.chunks_mut(MESSAGE_WORDS) {
        source.receive_into(chunk);
    }
}
