use gol_core::pattern::PatternFile;
use gol_plane::{Bits, HashLife};
use num_bigint::BigUint;
use std::sync::atomic::AtomicBool;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let file = PatternFile::open(std::path::Path::new(&args[1])).unwrap();
    let gens: BigUint = args[2].parse().unwrap();
    let rule = file.header().rule.unwrap_or(gol_core::Rule::LIFE);
    let store = gol_plane::store::Store::new(4000 << 20, 3).unwrap();
    let tree = gol_plane::files::read(&file, store, Bits::new(&rule)).unwrap();
    let mut hl = HashLife::new(tree, 1).unwrap();
    let t = std::time::Instant::now();
    hl.step(&gens, &AtomicBool::new(false)).unwrap();
    println!("step {:.3}", t.elapsed().as_secs_f64());
    let s = hl.tree().store();
    let mut hist = vec![0u64; 64];
    for id in 1..s.used() as u32 {
        hist[s.level(id).min(63) as usize] += 1;
    }
    for (l, n) in hist.iter().enumerate() {
        if *n > 0 {
            println!("level {l}: {n}");
        }
    }
}
