//! What the machine is: CPU model, instruction sets, threads.

use serde::Serialize;

#[derive(Serialize)]
pub struct Machine {
    pub cpu: String,
    pub threads: usize,
    pub features: Vec<&'static str>,
    pub bitsliced_isa: &'static str,
}

/// The CPU's model name as the OS reports it.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// The SIMD-related features this CPU has, of those the engines care about.
fn features() -> Vec<&'static str> {
    #[allow(unused_mut)]
    let mut found = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! probe {
            ($($f:tt),*) => {$(
                if is_x86_feature_detected!($f) {
                    found.push($f);
                }
            )*};
        }
        probe!(
            "sse4.2",
            "popcnt",
            "bmi2",
            "avx",
            "avx2",
            "avx512f",
            "avx512vl",
            "avx512bw",
            "avx512vpopcntdq"
        );
    }
    found
}

pub fn describe() -> Machine {
    Machine {
        cpu: cpu_model(),
        threads: rayon::current_num_threads(),
        features: features(),
        bitsliced_isa: gol_core::cpu::Isa::detect().name(),
    }
}

/// The number of ranks of the MPI job this process was started in (by `mpirun` or a launcher
/// of the same kind), if any.
pub fn mpi_ranks() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"]
        .iter()
        .find_map(|var| std::env::var(var).ok()?.parse().ok())
}
