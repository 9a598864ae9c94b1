//! `cpu-scalar` in 3D: the contest's straightforward reference program, the 3D oracle.
//!
//! Byte cells in the `.bin` file order (cell `(x, y, z)` at byte `x·M·M + y·M + z`); each cell
//! adds its 26 neighbours at wrapped coordinates and tests the rule's birth or survival set.
//! Planes of constant `x` are computed in parallel; nothing else is clever.

use rayon::prelude::*;

use crate::cube::Cube;
use crate::engine::{Engine, EngineId};
use crate::error::{Error, Result};
use crate::memory;
use crate::rule::Rule;

/// The 3D oracle (see the module documentation).
#[derive(Default)]
pub struct Scalar3d {
    state: Option<State>,
}

struct State {
    side: usize,
    /// Planes of constant x: the side, or a slab's own count.
    planes: usize,
    cells: Vec<u8>,
    next: Vec<u8>,
    rule: Rule,
}

impl Scalar3d {
    fn loaded(&self) -> Result<&State> {
        self.state
            .as_ref()
            .ok_or_else(|| Error::Engine("cpu-scalar: no cube loaded".into()))
    }
}

impl Engine<Cube> for Scalar3d {
    fn id(&self) -> EngineId {
        EngineId::CpuScalar
    }

    fn load(&mut self, cube: &Cube, rule: Rule) -> Result<()> {
        rule.check_neighbours(26)?;
        self.state = None;
        let m = cube.side();
        let what = format!(
            "a {}x{m}x{m} torus on cpu-scalar (two byte buffers)",
            cube.planes()
        );
        memory::check(2 * cube.cells(), &what)?;
        let cells = cube.to_bytes(m);
        let next = memory::zeroed_vec::<u8>(cube.cells(), &what)?;
        self.state = Some(State {
            side: m,
            planes: cube.planes(),
            cells,
            next,
            rule,
        });
        Ok(())
    }

    fn step(&mut self, generations: u64) -> Result<()> {
        let state = self
            .state
            .as_mut()
            .ok_or_else(|| Error::Engine("cpu-scalar: no cube loaded".into()))?;
        let (m, planes) = (state.side, state.planes);
        let wrap = |i: usize, d: usize, n: usize| (i + n + d - 1) % n;
        let table = state.rule.table();
        for _ in 0..generations {
            let cells = &state.cells;
            state
                .next
                .par_chunks_mut(m * m)
                .enumerate()
                .for_each(|(x, plane)| {
                    for y in 0..m {
                        for z in 0..m {
                            let mut count = 0usize;
                            for dx in 0..3 {
                                for dy in 0..3 {
                                    for dz in 0..3 {
                                        if (dx, dy, dz) != (1, 1, 1) {
                                            let at = (wrap(x, dx, planes) * m + wrap(y, dy, m)) * m
                                                + wrap(z, dz, m);
                                            count += cells[at] as usize;
                                        }
                                    }
                                }
                            }
                            let alive = cells[(x * m + y) * m + z] as usize;
                            plane[y * m + z] = table[alive][count];
                        }
                    }
                });
            std::mem::swap(&mut state.cells, &mut state.next);
        }
        Ok(())
    }

    fn snapshot(&self) -> Result<Cube> {
        let state = self.loaded()?;
        let m = state.side;
        Cube::from_bytes(m, &state.cells, m)
    }

    fn population(&self) -> Result<u64> {
        Ok(self.loaded()?.cells.iter().map(|&c| c as u64).sum())
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn run(cube: &Cube, rule: Rule, gens: u64) -> Cube {
        let mut e = Scalar3d::default();
        e.load(cube, rule).unwrap();
        e.step(gens).unwrap();
        e.snapshot().unwrap()
    }

    #[test]
    fn counts_neighbours_with_multiplicity() {
        // Side 1: the cell is its own 26 neighbours. Under B26/S26 it lives on.
        let mut one = Cube::new(1).unwrap();
        let rule = Rule::parse("B26-26/S26-26").unwrap();
        assert_eq!(run(&one, rule, 1).population(), 0);
        one.set(0, 0, 0, true);
        assert_eq!(run(&one, rule, 1).population(), 1);
        assert_eq!(run(&one, Rule::LIFE_3D, 1).population(), 0);
        // Side 2: offsets -1 and +1 land on the same cell, so a lone live cell is counted 2^k
        // times by a cell that differs from it in k axes.
        let mut two = Cube::new(2).unwrap();
        two.set(0, 0, 0, true);
        // Cell (1,1,1) differs in all three axes: 8 of its 26 offsets land on (0,0,0).
        let only8 = run(&two, Rule::parse("B8/S").unwrap(), 1);
        assert!(only8.get(1, 1, 1) && only8.population() == 1);
    }

    #[test]
    fn a_slab_wraps_at_its_own_planes() {
        // A slab of 4 planes of side 5 with one live cell on plane 0: under B1/S its 26
        // neighbours are born, on planes 3, 0 and 1 (x wraps at 4, not at the side).
        let mut slab = Cube::slab(crate::Grid::new(5, 4 * 5).unwrap()).unwrap();
        slab.set(0, 2, 2, true);
        let next = run(&slab, Rule::parse("B1/S").unwrap(), 1);
        assert_eq!(next.population(), 26);
        for x in [3, 0, 1] {
            for (y, z) in (1..4).flat_map(|y| (1..4).map(move |z| (y, z))) {
                assert_eq!(next.get(x, y, z), (x, y, z) != (0, 2, 2), "({x}, {y}, {z})");
            }
        }
    }

    #[test]
    fn a_block_of_the_default_rule_is_stable() {
        // In B6/S567 a 2×2×2 block: each live cell has 7 live neighbours (survives), and dead
        // cells touch at most 4 of them (no birth).
        let mut c = Cube::new(6).unwrap();
        for (x, y, z) in [0, 1]
            .iter()
            .flat_map(|&x| [0, 1].map(move |y| (x, y)))
            .flat_map(|(x, y)| [0, 1].map(move |z| (x + 2, y + 2, z + 2)))
        {
            c.set(x, y, z, true);
        }
        assert_eq!(run(&c, Rule::LIFE_3D, 5), c);
    }
}
