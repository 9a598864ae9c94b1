fn main() {
    let root = std::env::args().nth(1).unwrap();
    let mut c = gol_census::objects::Classifier::default();
    for i in std::env::args().skip(2) {
        let id = format!("{root}{i}");
        let rows = gol_census::soup::rows(&id);
        let t = gol_census::census::truth(&rows, 1 << 14, &mut c).unwrap();
        let ours = gol_census::census::of_id(&id, &mut c);
        println!("{i}\ttruth {:?}\n\tours  {:?}", t.objects, ours.objects);
    }
}
