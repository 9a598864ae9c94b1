//! `cpu-bitsliced` under Generations rules: the dying states as bit planes beside the live
//! cells, in the layout of [`crate::grid`] ("Dying states").
//!
//! Each generation first computes the live cells' next plane as a two-state rule would, with
//! the rule's own band work (dying cells are not alive, so they count as no neighbour and take
//! the birth side of the rule), then one pass over the words of the same band settles the
//! states:
//! - a dying cell is never born: the new live plane loses the dying cells;
//! - a live cell that does not stay alive gets age 1 (state 2);
//! - a dying cell's age goes up by one (a ripple-carry add over the planes), and the cells that
//!   were in the last state, age `C − 2`, go back to 0.
//!
//! Bands are settled as soon as they are computed, one generation at a time: the temporal
//! blocking of two-state rules would need the ages of the halo rows too.

use rayon::prelude::*;

use super::bitsliced::{rows_per_band, BandWork, Frame, Isa};
use crate::grid::{age_planes, occupied};
use crate::memory;

/// The ages of the dying cells of an engine's state: this generation's planes and the next's.
pub(super) struct Ages {
    states: Dying,
    pub(super) now: Vec<u64>,
    next: Vec<u64>,
}

/// The dying states of a Generations rule, as [`Ages`] counts them.
#[derive(Clone, Copy)]
struct Dying {
    /// Bit planes per row ([`age_planes`]).
    planes: usize,
    /// The age of the last dying state, `C − 2`.
    last: u32,
}

impl Ages {
    /// A copy of `ages`, the planes of a grid of `states` states (more than 2).
    pub(super) fn new(ages: &[u64], states: u32, what: &str) -> crate::Result<Ages> {
        memory::check(2 * 8 * ages.len() as u64, what)?;
        let next = memory::zeroed_vec::<u64>(ages.len() as u64, what)?;
        Ok(Ages {
            states: Dying {
                planes: age_planes(states),
                last: states - 2,
            },
            now: ages.to_vec(),
            next,
        })
    }

    /// Cells not in state 0 now, of the live plane `alive`.
    pub(super) fn population(&self, alive: &[u64], words_per_row: usize) -> u64 {
        occupied(alive, &self.now, words_per_row, self.states.planes)
    }

    /// Runs `generations` generations of `frame` (the live plane) with `work`, `next` being the
    /// spare live plane.
    pub(super) fn advance(
        &mut self,
        isa: Isa,
        frame: &mut Frame,
        next: &mut Vec<u64>,
        generations: u64,
        work: &impl BandWork,
    ) {
        let wpr = frame.words_per_row;
        let rows_per_band = rows_per_band(frame.height);
        let dying = self.states;
        let row_ages = dying.planes * wpr;
        // Inside rayon's pool, as in `State::advance`.
        rayon::scope(|_| {
            for _ in 0..generations {
                let (now, ages) = (&*frame, &self.now);
                next.par_chunks_mut(rows_per_band * wpr)
                    .zip(self.next.par_chunks_mut(rows_per_band * row_ages))
                    .enumerate()
                    .for_each(|(b, (out, out_ages))| {
                        let top = b * rows_per_band;
                        work.band(isa, now, out, top);
                        let alive = &now.words[top * wpr..][..out.len()];
                        let ages = &ages[top * row_ages..][..out_ages.len()];
                        dying.settle(alive, ages, out, out_ages, wpr);
                    });
                std::mem::swap(&mut frame.words, next);
                std::mem::swap(&mut self.now, &mut self.next);
            }
        });
    }
}

impl Dying {
    /// Settles the states of a band of rows: `alive` and `ages` this generation's live plane and
    /// age planes, `out` the live plane the rule gives (updated in place), `out_ages` the next
    /// age planes.
    fn settle(
        &self,
        alive: &[u64],
        ages: &[u64],
        out: &mut [u64],
        out_ages: &mut [u64],
        wpr: usize,
    ) {
        let planes = self.planes;
        let row_ages = planes * wpr;
        for (r, out) in out.chunks_exact_mut(wpr).enumerate() {
            let (ages, out_ages) = (
                &ages[r * row_ages..][..row_ages],
                &mut out_ages[r * row_ages..][..row_ages],
            );
            for k in 0..wpr {
                let age = |p: usize| ages[p * wpr + k];
                let dying = (0..planes).fold(0, |any, p| any | age(p));
                let lives = out[k] & !dying;
                out[k] = lives;
                let starts = alive[r * wpr + k] & !lives;
                // The cells in the last dying state: every plane matches the bits of `last`.
                let last = (0..planes).fold(dying, |eq, p| {
                    eq & if self.last >> p & 1 == 1 {
                        age(p)
                    } else {
                        !age(p)
                    }
                });
                let mut carry = dying;
                for p in 0..planes {
                    let sum = age(p) ^ carry;
                    carry &= age(p);
                    out_ages[p * wpr + k] = (sum & !last) | if p == 0 { starts } else { 0 };
                }
            }
        }
    }
}
