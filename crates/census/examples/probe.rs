fn main() {
    let mut c = gol_census::objects::Classifier::default();
    let root = std::env::args().nth(1).unwrap();
    let from: u64 = std::env::args().nth(2).unwrap().parse().unwrap();
    let to: u64 = std::env::args().nth(3).unwrap().parse().unwrap();
    for i in from..to {
        let t0 = std::time::Instant::now();
        let t = gol_census::census::of_id(&format!("{root}{i}"), &mut c);
        println!(
            "{i}\t{}\t{}\t{:.4}\t{:?}",
            t.settled_at,
            t.period,
            t0.elapsed().as_secs_f64(),
            t.objects
        );
    }
}
