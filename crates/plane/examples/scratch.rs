use gol_core::pattern::PatternFile;
use gol_plane::{Options, Start};
use num_bigint::BigUint;
use std::sync::atomic::AtomicBool;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let file = PatternFile::open(std::path::Path::new(&args[1])).unwrap();
    let gens: BigUint = args[2].parse().unwrap();
    let threads: usize = args.get(3).map_or(1, |t| t.parse().unwrap());
    let rule = file.header().rule.unwrap_or(gol_core::Rule::LIFE);
    let t = std::time::Instant::now();
    let mut plane = gol_plane::new(
        gol_core::EngineId::Hashlife,
        Start::File(&file),
        rule,
        &Options {
            memory: 4000 << 20,
            threads,
        },
    )
    .unwrap();
    let load = t.elapsed().as_secs_f64();
    let stop = AtomicBool::new(false);
    plane.step(&gens, &stop).unwrap();
    let step = t.elapsed().as_secs_f64() - load;
    println!(
        "pop {} bbox {:?} load {load:.3} step {step:.3} {}",
        plane.population(),
        plane.bounding_box().map(|b| b.to_string()),
        plane.details()
    );
}
