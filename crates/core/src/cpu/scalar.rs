//! `cpu-scalar`: the sequential C program of Kurnosov's seminar (docs/lineage.md), the oracle every other engine is checked against.

use super::ghost::{CellUpdate, GhostCells, GhostEngine};
use crate::engine::EngineId;
use crate::rule::{Family, Rule};

/// Byte cells with ghost rows and columns; each cell's fate decided by testing the rule's birth
/// or survival set, as the seminar's first program does with its chain of `if`s. Rules of the
/// other 2D families ([`crate::rule::Family`]) are decided from each cell's whole neighbourhood
/// by [`Rule::next_cells`], Generations rules and rule tables by [`Rule::next_of`] over
/// the states of the neighbourhood, and Larger than Life rules by prefix sums
/// ([`crate::rule::larger::step`]).
pub type Scalar = GhostEngine<SetTest>;

/// The update of `cpu-scalar`: a branch on the state, then a test of the matching count set.
pub struct SetTest(Rule);

impl CellUpdate for SetTest {
    const ID: EngineId = EngineId::CpuScalar;

    fn new(rule: Rule) -> Self {
        SetTest(rule)
    }

    #[inline]
    fn next(&self, state: u8, neighbours: u8) -> u8 {
        self.0.next(state == 1, neighbours as u32) as u8
    }

    fn advance(&self, cells: &mut GhostCells) {
        let rule = &self.0;
        if let Some(larger) = rule.larger() {
            cells.step_larger(&larger, rule.states());
        } else if rule.is_multi_state() || rule.rule_table().is_some() {
            cells.step_states(|around| rule.next_of(around));
        } else if rule.family() == Family::OuterTotalistic {
            cells.step(|state, neighbours| self.next(state, neighbours));
        } else {
            cells.step_neighbourhoods(|around, _| rule.next_cells(around) as u8);
        }
    }
}
