//! Builds the CUBINs that `gol` ships ([`source::shipped`] for each of
//! [`source::SHIPPED_ARCHES`]) with NVRTC, where NVRTC can be loaded, into
//! `$OUT_DIR/shipped.bin`, each deflated (the layout `src/device.rs` reads: about 1 MB for
//! 3.5 MB of CUBINs). Without NVRTC the file is empty and
//! every kernel is compiled at run time, as before; `GOL_REQUIRE_NVRTC=1` makes that an error,
//! and `GOL_SHIP_KERNELS=0` builds none on purpose.
//!
//! The kernels' source text, the rule circuits and the NVRTC calls are the crate's own modules,
//! compiled here as well, so that what is shipped is exactly what a run would compile.

#[allow(dead_code)]
#[path = "src/circuit.rs"]
mod circuit;
#[allow(dead_code)]
#[path = "src/nvrtc.rs"]
mod nvrtc;
#[allow(dead_code)]
#[path = "src/source.rs"]
mod source;

use std::io::Write;
use std::path::PathBuf;

use flate2::write::DeflateEncoder;
use flate2::Compression;

fn main() {
    for path in [
        "build.rs",
        "kernels",
        "src/circuit.rs",
        "src/nvrtc.rs",
        "src/source.rs",
    ] {
        println!("cargo:rerun-if-changed={path}");
    }
    for var in [
        "LD_LIBRARY_PATH",
        "CUDA_HOME",
        "CUDA_PATH",
        "GOL_REQUIRE_NVRTC",
        "GOL_SHIP_KERNELS",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let wanted = std::env::var("GOL_SHIP_KERNELS").map_or(true, |v| v != "0");
    let required = std::env::var_os("GOL_REQUIRE_NVRTC").is_some();
    let mut shipped = Vec::new();
    if !wanted {
        println!(
            "cargo:warning=GOL_SHIP_KERNELS=0: no CUBINs built in; kernels compile at run time"
        );
    } else if !nvrtc::present() {
        assert!(
            !required,
            "GOL_REQUIRE_NVRTC is set but libnvrtc.so.13 cannot be loaded to build the shipped CUBINs"
        );
        println!(
            "cargo:warning=no NVRTC (libnvrtc.so.13) found: no CUBINs built in; a first GPU run will compile its kernels (put NVRTC's lib folder on LD_LIBRARY_PATH to build them in)"
        );
    } else {
        let sources = source::shipped();
        let jobs: Vec<(&str, &str)> = sources
            .iter()
            .flat_map(|s| source::SHIPPED_ARCHES.iter().map(move |&a| (s.as_str(), a)))
            .collect();
        // As many compiles at once as there are cores: each takes hundreds of megabytes.
        let next = std::sync::atomic::AtomicUsize::new(0);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut done: Vec<(usize, Vec<u8>)> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads.min(jobs.len()))
                .map(|_| {
                    scope.spawn(|| {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(&(source, arch)) = jobs.get(i) else {
                                return mine;
                            };
                            let cubin = nvrtc::compile(source, arch)
                                .unwrap_or_else(|e| panic!("shipped kernel for {arch}: {e}"));
                            mine.push((i, cubin));
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().expect("an NVRTC thread panicked"))
                .collect()
        });
        done.sort_by_key(|&(i, _)| i);
        for ((source, arch), (_, cubin)) in jobs.iter().zip(&done) {
            let mut deflate = DeflateEncoder::new(Vec::new(), Compression::best());
            deflate.write_all(cubin).expect("deflating into memory");
            let packed = deflate.finish().expect("deflating into memory");
            shipped.extend_from_slice(&nvrtc::key(source, arch).to_le_bytes());
            shipped.extend_from_slice(&(packed.len() as u64).to_le_bytes());
            shipped.extend_from_slice(&packed);
        }
    }
    std::fs::write(out.join("shipped.bin"), shipped).expect("writing shipped.bin");
}
