//! `auto`: the engine with the shortest whole run, by a cost model of measured rates plus the
//! GPU's start-up. [`resolve`] is the one place where an engine choice becomes an engine.
//!
//! # The model
//!
//! A run of `g` generations of `n` cells is estimated as
//!
//! - on the CPU (`cpu-bitsliced`): `n·g / (threads · rate per thread) + g · per-generation
//!   cost`, the second term being the threads' hand-overs (once every several generations on
//!   small grids, see `gol_core::cpu::Bitsliced`), which matter only on the smallest grids;
//! - on a GPU (`cuda-bitsliced`): `start-up + n·g / rate + g · per-generation cost + 2 · n / 8
//!   / bus`, the start-up being the driver's context and the cached kernels' load, the last
//!   term the bit-packed state's trip to the device and back.
//!
//! Only the bit-sliced engines are candidates: every other engine is slower than one of them
//! on every size (docs/benchmarks/api-python-viewer.md), and is kept to compare strategies, chosen by name. Where a
//! run is split into slabs (over GPUs or MPI ranks), only engines that give row access are.
//!
//! The constants are measured (docs/benchmarks/api-python-viewer.md, "auto"): on the H100 machine's 16 host threads
//! (AVX-512) and on 2-core AVX2/AVX-512 machines for the CPU, on an H100 for the GPU.

use gol_core::EngineId;
use gol_cuda::generic::Readiness;

/// What the machine offers, as the model needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Machine {
    /// GPUs usable by this process.
    pub gpus: usize,
    /// Threads of the CPU engines (rayon's pool).
    pub threads: usize,
}

impl Machine {
    /// This machine, found cheaply (the GPU driver is not started: see
    /// [`gol_cuda::device::gpus_present`]).
    pub fn here() -> Machine {
        Machine {
            gpus: gol_cuda::device::gpus_present(),
            threads: rayon::current_num_threads(),
        }
    }
}

/// The run to choose an engine for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Workload {
    /// Cells of the world (of all slabs together).
    pub cells: u64,
    /// Generations to run.
    pub generations: u64,
    /// 2 or 3.
    pub axes: u32,
    /// Whether the world is split into slabs (`--gpus`, MPI ranks): the engine must give row
    /// access.
    pub slabs: bool,
    /// Whether GPU-only options were given (a thread-block size): the engine must be a GPU one.
    pub gpu_options: bool,
    /// How cuda-bitsliced would start the rule ([`gol_cuda::generic::readiness`]): its own
    /// kernel ready, on a generic kernel while its own compiles, or after a compile.
    pub kernel: Readiness,
    /// Whether cpu-states keeps the rule in bits ([`gol_core::cpu::States::keeps_in_bits`]).
    pub states_in_bits: bool,
}

/// An engine choice as asked: `auto`, or one engine by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EngineChoice {
    /// The engine with the shortest estimated whole run ([`resolve`]).
    #[default]
    Auto,
    /// This engine.
    Named(EngineId),
}

impl std::str::FromStr for EngineChoice {
    type Err = gol_core::Error;

    /// `auto` or an engine's name.
    fn from_str(text: &str) -> Result<EngineChoice, gol_core::Error> {
        match text {
            "auto" => Ok(EngineChoice::Auto),
            name => name.parse().map(EngineChoice::Named),
        }
    }
}

impl std::fmt::Display for EngineChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineChoice::Auto => f.write_str("auto"),
            EngineChoice::Named(id) => id.fmt(f),
        }
    }
}

/// The engine a choice came to, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// The engine.
    pub id: EngineId,
    /// Why it was taken, for reports: "asked for", or the estimates `auto` compared.
    pub reason: String,
}

/// Rates and costs of one engine in one dimension.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Costs {
    /// Cell updates per second: per thread on the CPU, in all on a GPU.
    rate: f64,
    /// Seconds each generation costs whatever the size.
    per_generation: f64,
    /// Seconds before the first generation (a GPU's context and kernels).
    start: f64,
}

/// cuda-bitsliced's rates on its generic kernels (the rule read from constant memory), cell
/// updates per second, measured on the H200 at 16384² × 256 (docs/benchmarks/gpu-2d.md, "First
/// runs of new rules"): 2D rules by the sums 4.05e12 (B36/S23; 3.42e12 for the Generations rule
/// 345/2/4), 2D rules over the nine cells 3.36e11 (B2-a/S12, B2/S34H); 3D 1.83e12 (512³ × 64).
const GENERIC_BY_SUMS_2D: f64 = 3.4e12;
const GENERIC_BY_CELLS_2D: f64 = 3.4e11;
const GENERIC_3D: f64 = 1.8e12;

/// Seconds a first run waits for NVRTC to build a rule's own cuda-bitsliced kernel on the H200
/// machine's host: 1.9–12.4 s, 3.5–4.5 s for most rules (docs/benchmarks/gpu-2d.md, "First runs
/// of new rules").
const COMPILE_SECONDS: f64 = 4.0;

/// Host-to-device bandwidth for the state's trips, bytes per second (PCIe 5 from pageable
/// memory, measured about 20 GB/s on the H100 machine).
const BUS: f64 = 2e10;

/// The model's costs of `id` in `axes` dimensions; `None` for engines that are never chosen
/// automatically.
fn costs(id: EngineId, work: &Workload) -> Option<Costs> {
    match (id, work.axes) {
        // 16 threads: 5.3e11 at 16384² (3.3e10 a thread); 2 threads: 9.5e10 (4.8e10). The
        // seminar's case (1024², 1024 generations) loops in 0.0115 s on 2 threads and 0.0052 s
        // on 16, the threads meeting once every 16 generations (temporal blocking): about 3 µs
        // a generation beyond the rate's time on 16 threads.
        (EngineId::CpuBitsliced, 2) => Some(Costs {
            rate: 3.5e10,
            per_generation: 3e-6,
            start: 0.0,
        }),
        // 16 threads: 9.8e10 at 1024³ (6e9 a thread); 2 threads: 7.2e9 at 256³.
        (EngineId::CpuBitsliced, _) => Some(Costs {
            rate: 4.5e9,
            per_generation: 2e-5,
            start: 0.0,
        }),
        // 2 threads: 2.1e9 on a WireWorld soup of 4096² (a flat lookup), 3.4e9 on a Larger
        // than Life soup of 2048² at range 5 and 2.0e9 at range 100 (running sums). In bits
        // (two-state squares), 2 threads of dev-2c-emr: 1.2e10 at range 5, 4.2e9 at range 20,
        // 1.8e9 at range 100; one thread 1.3e10 at range 5.
        (EngineId::CpuStates, 2) => Some(Costs {
            rate: if work.states_in_bits { 3e9 } else { 1e9 },
            per_generation: 1e-5,
            start: 0.0,
        }),
        // Measured on the H200: see docs/benchmarks/rule-tables.md; the
        // module is compiled once for every rule.
        (EngineId::CudaStates, 2) => Some(Costs {
            rate: 2e11,
            per_generation: 2e-5,
            start: 0.4,
        }),
        // H100: 3.5e13 at 65536², 2.75e13 at 16384²; 1024² × 1024 loops in 0.69 ms. A warm
        // process with a cached kernel spends 0.23–0.33 s in all on a 0.7 ms loop.
        (EngineId::CudaBitsliced, 2) => Some(Costs {
            rate: 3.2e13,
            per_generation: 6e-7,
            start: 0.25,
        }),
        // H100: 1024³ × 1024 loops in 0.099 s (1.1e13).
        (EngineId::CudaBitsliced, _) => Some(Costs {
            rate: 1.1e13,
            per_generation: 2e-6,
            start: 0.25,
        }),
        _ => None,
    }
}

/// The estimated whole run of `work` on `id` here, in seconds; `None` where the engine cannot
/// take it (no GPU, no row access for slabs, GPU options on a CPU engine) or is never chosen
/// automatically.
pub fn estimate(id: EngineId, work: &Workload, machine: &Machine) -> Option<f64> {
    let c = costs(id, work)?;
    if !can_take(id, work, machine) {
        return None;
    }
    let updates = work.cells as f64 * work.generations as f64;
    let gens = work.generations as f64;
    let generations_at = |rate: f64| updates / rate + gens * c.per_generation;
    Some(if id.on_gpu() {
        // A rule whose own kernel is not ready runs on the generic one until its own is
        // compiled (at most the compile's time, then at the full rate), or waits for it.
        let generations = match (id, work.kernel) {
            (EngineId::CudaBitsliced, Readiness::Generic { compiling, by_sums }) => {
                let generic = generations_at(match (work.axes, by_sums) {
                    (2, true) => GENERIC_BY_SUMS_2D,
                    (2, false) => GENERIC_BY_CELLS_2D,
                    _ => GENERIC_3D,
                });
                match compiling {
                    true => generic.min(COMPILE_SECONDS + generations_at(c.rate)),
                    false => generic,
                }
            }
            (EngineId::CudaBitsliced, Readiness::Compile) => {
                COMPILE_SECONDS + generations_at(c.rate)
            }
            _ => generations_at(c.rate),
        };
        c.start + generations + 2.0 * work.cells as f64 / 8.0 / BUS
    } else {
        updates / (c.rate * machine.threads.max(1) as f64) + gens * c.per_generation
    })
}

/// The estimated time of one generation of `work` on `id` here once the run has started: the
/// whole run's [`estimate`] less a run of no generations, over its generations.
pub fn generation_seconds(id: EngineId, work: &Workload, machine: &Machine) -> Option<f64> {
    let gens = work.generations.max(1);
    let whole = estimate(
        id,
        &Workload {
            generations: gens,
            ..*work
        },
        machine,
    )?;
    let none = estimate(
        id,
        &Workload {
            generations: 0,
            ..*work
        },
        machine,
    )?;
    Some((whole - none) / gens as f64)
}

/// Whether `id` can take `work` here: no GPU engine without a GPU, no engine without row
/// access for slabs, no GPU options on a CPU engine.
fn can_take(id: EngineId, work: &Workload, machine: &Machine) -> bool {
    !((id.on_gpu() && machine.gpus == 0)
        || (work.slabs && !id.gives_rows())
        || (work.gpu_options && !id.on_gpu()))
}

/// Resolves `choice` among the engines `available` (one dimension's registry): a named engine
/// is checked to exist there; `auto` takes the one with the shortest estimated whole run.
pub fn resolve(
    choice: EngineChoice,
    available: &[EngineId],
    work: &Workload,
    machine: &Machine,
) -> crate::Result<Resolved> {
    let dimension = if work.axes == 2 { "2D" } else { "3D" };
    let names = || {
        let names: Vec<&str> = available.iter().map(|id| id.name()).collect();
        names.join(", ")
    };
    if let EngineChoice::Named(id) = choice {
        if id.on_plane() {
            crate::error::invalid!(
                "{id} runs the infinite plane only: drop the size and the grid suffix, or put the world on the infinite plane"
            );
        }
        if !available.contains(&id) {
            crate::error::invalid!(
                "{id} is not an engine for {dimension}; engines for {dimension}: auto, {}",
                names()
            );
        }
        return Ok(Resolved {
            id,
            reason: "asked for".into(),
        });
    }
    let mut estimates: Vec<(EngineId, f64)> = available
        .iter()
        .filter_map(|&id| Some((id, estimate(id, work, machine)?)))
        .collect();
    estimates.sort_by(|a, b| a.1.total_cmp(&b.1));
    // An engine never chosen by estimate (the oracle) where it is the only one left: the
    // only one that runs the rule.
    if let ([only], true) = (available, estimates.is_empty()) {
        if can_take(*only, work, machine) {
            return Ok(Resolved {
                id: *only,
                reason: "auto: the only engine here that runs the rule (one CPU thread)".into(),
            });
        }
    }
    let Some(&(id, best)) = estimates.first() else {
        crate::error::invalid!(
            "no {dimension} engine can take this run here{}; {dimension} engines: {}",
            if machine.gpus == 0 { " (no GPU)" } else { "" },
            names()
        );
    };
    let others: Vec<String> = estimates[1..]
        .iter()
        .map(|(other, seconds)| format!("{seconds:.3} s on {other}"))
        .collect();
    let gpu = if machine.gpus == 0 {
        "no GPU here".to_string()
    } else {
        let kernel = match work.kernel {
            Readiness::Ready => "",
            Readiness::Generic {
                compiling: true, ..
            } => ", the generic rule kernel until the rule's own is compiled",
            Readiness::Generic {
                compiling: false, ..
            } => ", the generic rule kernel throughout (no compile of the rule's own here)",
            Readiness::Compile => ", the rule's kernel compile",
        };
        format!("{} GPU(s), start-up{kernel} counted", machine.gpus)
    };
    let reason = if others.is_empty() {
        format!(
            "auto: the only candidate ({gpu}; estimated {best:.3} s with {} threads)",
            machine.threads
        )
    } else {
        format!(
            "auto: estimated {best:.3} s, against {} ({gpu}, {} CPU threads)",
            others.join(", "),
            machine.threads
        )
    };
    Ok(Resolved { id, reason })
}

#[cfg(test)]
mod test {
    use super::*;

    const BOTH: [EngineId; 4] = [
        EngineId::CudaBitsliced,
        EngineId::CudaGlobal,
        EngineId::CpuBitsliced,
        EngineId::CpuScalar,
    ];

    fn work(side: u64, generations: u64) -> Workload {
        Workload {
            cells: side * side,
            generations,
            axes: 2,
            slabs: false,
            gpu_options: false,
            kernel: Readiness::Ready,
            states_in_bits: false,
        }
    }

    fn pick(work: &Workload, machine: Machine) -> EngineId {
        resolve(EngineChoice::Auto, &BOTH, work, &machine)
            .unwrap()
            .id
    }

    const H100_HOST: Machine = Machine {
        gpus: 1,
        threads: 16,
    };

    #[test]
    fn the_seminar_case_stays_on_the_cpu_of_a_gpu_machine() {
        // Measured there: 0.23–0.33 s whole on cuda-bitsliced, 0.011–0.013 s on cpu-bitsliced.
        assert_eq!(pick(&work(1024, 1024), H100_HOST), EngineId::CpuBitsliced);
    }

    #[test]
    fn a_large_long_run_goes_to_the_gpu() {
        // Measured there: 0.87 s whole on cuda-bitsliced against 3.53 s on cpu-bitsliced.
        assert_eq!(pick(&work(16384, 4096), H100_HOST), EngineId::CudaBitsliced);
        let cube = Workload {
            cells: 1024 * 1024 * 1024,
            generations: 1024,
            axes: 3,
            ..work(1, 1)
        };
        assert_eq!(pick(&cube, H100_HOST), EngineId::CudaBitsliced);
    }

    #[test]
    fn larger_than_life_in_bits_stays_on_the_cpu_where_bytes_go_to_the_gpu() {
        // A 4096² Larger than Life soup for 900 generations on the 16-thread GPU host: in bits
        // (1.2e10 on 2 threads of dev-2c-emr) the CPU's loop is shorter than the GPU's
        // start-up and loop; in bytes (or with more states) it is not.
        let states = [
            EngineId::CudaStates,
            EngineId::CpuStates,
            EngineId::CpuScalar,
        ];
        let pick = |states_in_bits| {
            let work = Workload {
                states_in_bits,
                ..work(4096, 900)
            };
            resolve(EngineChoice::Auto, &states, &work, &H100_HOST)
                .unwrap()
                .id
        };
        assert_eq!(pick(true), EngineId::CpuStates);
        assert_eq!(pick(false), EngineId::CudaStates);
    }

    #[test]
    fn without_a_gpu_the_cpu_takes_everything() {
        let machine = Machine {
            gpus: 0,
            threads: 2,
        };
        assert_eq!(pick(&work(65536, 100_000), machine), EngineId::CpuBitsliced);
        let resolved = resolve(EngineChoice::Auto, &BOTH, &work(8, 8), &machine).unwrap();
        assert!(
            resolved.reason.contains("no GPU here"),
            "{}",
            resolved.reason
        );
    }

    #[test]
    fn gpu_options_and_slabs_narrow_the_candidates() {
        let gpu_only = Workload {
            gpu_options: true,
            ..work(64, 1)
        };
        assert_eq!(pick(&gpu_only, H100_HOST), EngineId::CudaBitsliced);
        let no_gpu = Machine {
            gpus: 0,
            threads: 2,
        };
        let err = resolve(EngineChoice::Auto, &BOTH, &gpu_only, &no_gpu).unwrap_err();
        assert!(err.to_string().contains("no GPU"), "{err}");
        let slabs = Workload {
            slabs: true,
            ..work(64, 1)
        };
        assert_eq!(pick(&slabs, no_gpu), EngineId::CpuBitsliced);
        let only_bytes = [EngineId::CpuScalar];
        assert!(resolve(EngineChoice::Auto, &only_bytes, &slabs, &no_gpu).is_err());
        // The oracle, never chosen by estimate, where it is the only engine of a rule.
        let only = resolve(EngineChoice::Auto, &only_bytes, &work(64, 1), &no_gpu).unwrap();
        assert_eq!(only.id, EngineId::CpuScalar);
        assert!(only
            .reason
            .contains("the only engine here that runs the rule"));
    }

    #[test]
    fn a_rule_without_its_own_kernel_counts_the_generic_rate_or_the_compile() {
        let at = |side, gens, kernel| Workload {
            kernel,
            ..work(side, gens)
        };
        // An isotropic rule, which the generic kernel takes over the nine cells.
        let generic = Readiness::Generic {
            compiling: false,
            by_sums: false,
        };
        let compiling = Readiness::Generic {
            compiling: true,
            by_sums: false,
        };
        // A run the GPU wins on its own kernel (65536², 1024 generations: 0.39 s against
        // 7.9 s) still goes to the GPU when that kernel comes after a compile of about 4 s,
        // but not on the generic kernel alone (13 s).
        let long = |kernel| at(65536, 1024, kernel);
        for kernel in [Readiness::Ready, compiling, Readiness::Compile] {
            assert_eq!(pick(&long(kernel), H100_HOST), EngineId::CudaBitsliced);
        }
        assert_eq!(pick(&long(generic), H100_HOST), EngineId::CpuBitsliced);
        let reason = resolve(EngineChoice::Auto, &BOTH, &long(generic), &H100_HOST)
            .unwrap()
            .reason;
        assert!(
            reason.contains("generic rule kernel throughout"),
            "{reason}"
        );
    }

    #[test]
    fn the_crossover_moves_with_the_threads() {
        // 8192² × 1024: about 1 s on 2 threads, 0.14 s on 16, 0.26 s on the GPU.
        let middling = work(8192, 1024);
        let few = Machine {
            gpus: 1,
            threads: 2,
        };
        assert_eq!(pick(&middling, few), EngineId::CudaBitsliced);
        assert_eq!(pick(&middling, H100_HOST), EngineId::CpuBitsliced);
    }

    #[test]
    fn named_engines_are_checked_against_the_dimension() {
        let machine = Machine {
            gpus: 0,
            threads: 2,
        };
        let asked = EngineChoice::Named(EngineId::CpuScalar);
        assert_eq!(
            resolve(asked, &BOTH, &work(8, 8), &machine).unwrap().id,
            EngineId::CpuScalar
        );
        let swar = EngineChoice::Named(EngineId::CudaSwar);
        let err = resolve(swar, &BOTH, &work(8, 8), &machine).unwrap_err();
        assert!(
            err.to_string()
                .contains("cuda-swar is not an engine for 2D"),
            "{err}"
        );
        assert_eq!("auto".parse::<EngineChoice>().unwrap(), EngineChoice::Auto);
        assert!("fastest".parse::<EngineChoice>().is_err());
    }
}
