fn main() {
    let root = std::env::args().nth(1).unwrap();
    let from: u64 = std::env::args().nth(2).unwrap().parse().unwrap();
    let to: u64 = std::env::args().nth(3).unwrap().parse().unwrap();
    let t0 = std::time::Instant::now();
    let tallies = gol_census::census::tallies(&root, from, to - from, &Default::default());
    eprintln!(
        "{:.1} soups/s",
        (to - from) as f64 / t0.elapsed().as_secs_f64()
    );
    for (i, t) in tallies.iter().enumerate() {
        let items: Vec<String> = t.objects.iter().map(|(c, n)| format!("{c}:{n}")).collect();
        println!("{}\t{}", from + i as u64, items.join(" "));
    }
}
