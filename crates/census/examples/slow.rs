fn main() {
    let root = std::env::args().nth(1).unwrap();
    let from: u64 = std::env::args().nth(2).unwrap().parse().unwrap();
    let to: u64 = std::env::args().nth(3).unwrap().parse().unwrap();
    let mut c = gol_census::objects::Classifier::default();
    for i in from..to {
        let t0 = std::time::Instant::now();
        let t = gol_census::census::of_id(&format!("{root}{i}"), &mut c);
        let s = t0.elapsed().as_secs_f64();
        if s > 0.05 {
            println!("{i}\t{s:.3}\t{}\t{}", t.settled_at, t.period);
        }
    }
}
