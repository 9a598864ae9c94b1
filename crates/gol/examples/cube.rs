//! 3D Life (B6/S567) through a `.bin` file of the contest format (docs/lineage.md): write a
//! 64³ soup, read it back, run 10 generations and write the result, whose generation stamp is
//! the input's plus 10.
//!
//! `cargo run -p gol --example cube`

use gol::{Cube, Dim, Setup, Simulation, Size, Start};

fn main() -> gol::Result<()> {
    let dir = std::env::temp_dir().join(format!("gol-cube-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| gol::Error::Invalid(e.to_string()))?;
    let input = dir.join("in.bin");
    let output = dir.join("out.bin");

    let soup: Simulation<Cube> = Simulation::new(&Setup {
        start: Start::Density {
            density: 0.2,
            seed: 7,
        },
        dim: Dim::Three,
        size: Some(Size::Side(64)),
        ..Setup::default()
    })?;
    soup.save(&input)?;

    let mut sim: Simulation<Cube> = Simulation::new(&Setup {
        start: Start::File(input.clone()),
        ..Setup::default()
    })?;
    let before = sim.population()?;
    sim.step(10)?;
    sim.save(&output)?;
    println!(
        "{}: {before} live cells; after 10 generations of {} on {}: {} (stamp {})",
        input.display(),
        sim.rule(),
        sim.engine(),
        sim.population()?,
        sim.stamp()
    );
    let bytes = std::fs::read(&output).map_err(|e| gol::Error::Invalid(e.to_string()))?;
    assert_eq!(bytes.len(), 16 + 64 * 64 * 64);
    assert_eq!(u64::from_le_bytes(bytes[8..16].try_into().unwrap()), 10);
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}
