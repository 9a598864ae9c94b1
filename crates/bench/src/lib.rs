//! Criterion benches of gol's CPU engines (`benches/engines.rs`) and of its pictures
//! (`benches/pictures.rs`): `cargo bench -p gol-bench`. Nothing is here; the benches are
//! their own targets, kept in a crate of their own so that building the tests does not build
//! criterion.
