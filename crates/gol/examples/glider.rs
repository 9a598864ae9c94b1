//! A glider on a 16×16 torus: every 4 generations it moves one cell diagonally, so after 64 it is
//! back where it started, having crossed the torus's edges on the way.
//!
//! `cargo run -p gol --example glider`

use gol::{Grid, Setup, Simulation, Start};

fn main() -> gol::Result<()> {
    let mut start = Grid::new(16, 16)?;
    // .O.
    // ..O
    // OOO
    for (x, y) in [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)] {
        start.set(x, y, true);
    }
    let mut sim: Simulation = Simulation::new(&Setup {
        start: Start::Grid(start.clone()),
        ..Setup::default()
    })?;
    for _ in 0..16 {
        sim.step(4)?;
        let window = sim.window(0, 0, 16, 16)?;
        let row = |y| -> String {
            (0..16)
                .map(|x| if window.get(x, y) { 'O' } else { '.' })
                .collect()
        };
        let live: Vec<String> = (0..16).map(row).filter(|r| r.contains('O')).collect();
        println!("generation {:>2}: {}", sim.generation(), live.join(" "));
    }
    assert_eq!(sim.population()?, 5);
    assert_eq!(sim.world()?, start, "the glider came back");
    println!("after {} generations the glider is home", sim.generation());
    Ok(())
}
