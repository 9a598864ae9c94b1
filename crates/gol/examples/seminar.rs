//! Kurnosov's seminar's case (docs/lineage.md): a 1024² torus seeded with glibc's `srand(0)` and
//! `rand() % 2`, 1024 generations of B3/S23; the seminar's program prints 47026.
//!
//! `cargo run -p gol --example seminar`

use gol::{Setup, Simulation, Size, Start};

fn main() -> gol::Result<()> {
    let mut sim: Simulation = Simulation::new(&Setup {
        start: Start::Glibc { seed: 0 },
        size: Some(Size::Side(1024)),
        generations: Some(1024),
        ..Setup::default()
    })?;
    sim.step(1024)?;
    let alive = sim.population()?;
    println!("Total alive cells: {alive}");
    println!("engine {} ({})", sim.engine(), sim.resolved().reason);
    assert_eq!(alive, 47026);
    Ok(())
}
