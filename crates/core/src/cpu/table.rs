//! `cpu-table`: the state-table variant (Kurnosov's seminar, docs/lineage.md) of the sequential program.

use super::ghost::{CellUpdate, GhostEngine};
use crate::engine::EngineId;
use crate::rule::Rule;

/// Byte cells with ghost rows and columns; the next state read from a `states[2][9]` table
/// indexed by the current state and the neighbour count, with no branches.
pub type Table = GhostEngine<StateTable>;

/// The update of `cpu-table`: one lookup in `states[state][neighbours]`.
pub struct StateTable([[u8; 9]; 2]);

impl CellUpdate for StateTable {
    const ID: EngineId = EngineId::CpuTable;

    fn new(rule: Rule) -> Self {
        let full = rule.table();
        let mut states = [[0u8; 9]; 2];
        for (row, full_row) in states.iter_mut().zip(full) {
            row.copy_from_slice(&full_row[..9]);
        }
        StateTable(states)
    }

    #[inline]
    fn next(&self, state: u8, neighbours: u8) -> u8 {
        self.0[state as usize][neighbours as usize]
    }
}
