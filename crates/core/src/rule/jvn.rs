//! John von Neumann's 29-state rule (`JvN29`) and Renato Nobili's 32-state extension
//! (`Nobili32`), as Golly's JvN algorithm runs them, made into rule tables
//! ([`RuleTable::from_function`]) so that every rule-table engine runs them.
//!
//! # States (Golly's numbering)
//!
//! - 0: the ground state U.
//! - 1–8: the sensitized states S, S0, S1, S00, S01, S10, S11, S000: a cell under
//!   construction, which takes one bit a generation (excited input or not) until it becomes a
//!   transmission or confluent state.
//! - 9–12 and 13–16: ordinary transmission states, quiescent and excited, pointing east,
//!   north, west and south; 17–20 and 21–24: the special transmission states likewise.
//! - 25–28: confluent states: quiescent, excited next generation, excited now, excited now
//!   and next.
//! - 29–31 (`Nobili32` only): crossing confluent states carrying an excitation east–west,
//!   north–south, or both.
//!
//! # The rule
//!
//! A cell looks at its four orthogonal neighbours. A transmission neighbour pointing at it is
//! an input (ordinary or special, excited or not); one pointing elsewhere is an output (on the
//! east–west or north–south axis). A confluent neighbour passes its excitation to every cell
//! except a transmission state pointing into it.
//!
//! - U and the sensitized states: each generation doubles the inner value and adds 1 where an
//!   excited input (of either kind) arrives; the values 9 to 17 it reaches become the
//!   transmission and confluent states that `SENSITIZED_ENDS` lists.
//! - Transmission states: an excited special input kills an ordinary one and an excited
//!   ordinary input a special one (back to U); otherwise the cell is excited next when an
//!   input of its own kind not pointing head to head, or a confluent neighbour, excites it.
//! - Confluent states: an excited special input kills them; otherwise they pass an excitation
//!   on one generation late, when every ordinary input is excited (at least one). Under
//!   `Nobili32` a confluent state with inputs and outputs on both axes becomes a crossing,
//!   passing each axis's excitation straight through.

use std::sync::OnceLock;

use super::table::{intern, RuleTable};

/// Golly's direction numbering inside a state: east, north, west, south.
const EAST: u8 = 0;
const NORTH: u8 = 1;
const WEST: u8 = 2;
const SOUTH: u8 = 3;

/// The inner form of a state, as bits: the kind (confluent, ordinary or special
/// transmission), the direction of a transmission state (two bits), and the excitations.
const CONFLUENT: u8 = 0x10;
const ORDINARY: u8 = 0x20;
const SPECIAL: u8 = 0x40;
/// A transmission state's excitation; a confluent state's excitation of the next generation.
const EXCITED: u8 = 0x80;
/// A confluent state's excitation now.
const NOW: u8 = 1;
/// A crossing confluent state's excitations along the east–west and north–south axes.
const CROSS_EW: u8 = 2;
const CROSS_NS: u8 = 4;

/// Inner forms in Golly's state order (see the module documentation).
const INNER: [u8; 32] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, // U and the sensitized states
    0x20, 0x21, 0x22, 0x23, 0xa0, 0xa1, 0xa2, 0xa3, // ordinary, quiescent then excited
    0x40, 0x41, 0x42, 0x43, 0xc0, 0xc1, 0xc2, 0xc3, // special, quiescent then excited
    0x10, 0x90, 0x11, 0x91, // confluent
    0x92, 0x94, 0x96, // crossing confluent
];

/// What a sensitized sequence ends in, for the inner values 9 to 17 it reaches: ordinary
/// west and south, special east to south, confluent, ordinary east and north.
const SENSITIZED_ENDS: [u8; 9] = [0x22, 0x23, 0x40, 0x41, 0x42, 0x43, 0x10, 0x20, 0x21];

/// What a cell sees of its four neighbours.
#[derive(Default)]
struct Inputs {
    /// An ordinary transmission input that is not excited.
    ordinary_quiet: bool,
    /// Excited ordinary inputs, on the east–west and north–south axes.
    ordinary_ew: bool,
    ordinary_ns: bool,
    /// An excited special input.
    special: bool,
    /// An excited confluent neighbour that passes its excitation here.
    confluent: bool,
    /// Transmission inputs and outputs on each axis.
    in_ns: bool,
    in_ew: bool,
    out_ns: bool,
    out_ew: bool,
    /// Excitations that a transmission cell takes on: excited inputs not head to head.
    ordinary_other: bool,
    special_other: bool,
}

impl Inputs {
    fn ordinary(&self) -> bool {
        self.ordinary_ew || self.ordinary_ns
    }

    /// Adds neighbour `other`, which lies in direction `from` of the centre cell `centre`
    /// seen from the neighbour (`from` is the direction a signal would travel to reach the
    /// centre).
    fn add(&mut self, centre: u8, other: u8, from: u8) {
        let transmission = |s: u8| s & (ORDINARY | SPECIAL) != 0;
        let direction = |s: u8| s & 3;
        let ns = from & 1 == 1;
        // The centre, a transmission state, points at the neighbour.
        let facing = transmission(centre) && direction(centre) ^ 2 == from;
        if other & CONFLUENT != 0 {
            let crossing = if ns {
                other & CROSS_NS
            } else {
                other & CROSS_EW
            };
            if !facing && (crossing != 0 || other & NOW != 0) {
                self.confluent = true;
            }
            return;
        }
        if !transmission(other) {
            return;
        }
        if direction(other) != from {
            if ns {
                self.out_ns = true;
            } else {
                self.out_ew = true;
            }
            return;
        }
        let excited = other & EXCITED != 0;
        let (mut ordinary, mut special) = (false, false);
        if other & ORDINARY != 0 {
            if ns {
                self.in_ns = true;
            } else {
                self.in_ew = true;
            }
            match (excited, ns) {
                (false, _) => self.ordinary_quiet = true,
                (true, true) => (self.ordinary_ns, ordinary) = (true, true),
                (true, false) => (self.ordinary_ew, ordinary) = (true, true),
            }
        } else if excited {
            (self.special, special) = (true, true);
        }
        if !facing {
            self.ordinary_other |= ordinary;
            self.special_other |= special;
        }
    }
}

/// The next inner state of `centre` under `nobili` (Nobili32) or JvN29, given its
/// neighbours to the north, west, east and south.
fn next_inner(centre: u8, [n, w, e, s]: [u8; 4], nobili: bool) -> u8 {
    let mut seen = Inputs::default();
    seen.add(centre, n, SOUTH);
    seen.add(centre, w, EAST);
    seen.add(centre, e, WEST);
    seen.add(centre, s, NORTH);
    if centre < CONFLUENT {
        let grown = 2 * centre + (seen.ordinary() || seen.special) as u8;
        return if grown > 8 {
            SENSITIZED_ENDS[grown as usize - 9]
        } else {
            grown
        };
    }
    if centre & CONFLUENT != 0 {
        if seen.special {
            return 0;
        }
        let crossed = seen.in_ns && seen.in_ew && seen.out_ns && seen.out_ew;
        if nobili && crossed {
            let axes = (seen.ordinary_ew as u8) * CROSS_EW + (seen.ordinary_ns as u8) * CROSS_NS;
            return match axes {
                0 => CONFLUENT,
                _ => CONFLUENT | EXCITED | axes,
            };
        }
        let mut c = centre;
        if c & (CROSS_EW | CROSS_NS) != 0 {
            // A crossing no longer.
            c &= !(CROSS_EW | CROSS_NS | EXCITED);
        }
        let carried = (c & EXCITED != 0) as u8;
        return if seen.ordinary() && !seen.ordinary_quiet {
            CONFLUENT | EXCITED | carried
        } else if seen.out_ns || seen.out_ew || !nobili {
            CONFLUENT | carried
        } else {
            c
        };
    }
    let ordinary = centre & ORDINARY != 0;
    if (ordinary && seen.special) || (!ordinary && seen.ordinary()) {
        return 0;
    }
    if seen.special_other || seen.ordinary_other || seen.confluent {
        centre | EXCITED
    } else {
        centre & !EXCITED
    }
}

/// The rule named `name` (case aside; Golly's older names `JvN-29`, `JvN-32` and
/// `modJvN-32` too) if it is one of Golly's JvN family (this module's two, and
/// Hutton32, in `rule/hutton.rs`), made once per process.
pub fn table(name: &str) -> Option<&'static RuleTable> {
    let (canonical, states, which) = match name.to_ascii_lowercase().as_str() {
        "jvn29" | "jvn-29" => ("JvN29", 29u32, 0),
        "nobili32" | "jvn-32" => ("Nobili32", 32, 1),
        "hutton32" | "modjvn-32" => ("Hutton32", 32, 2),
        _ => return None,
    };
    // Made once per process: a table takes about half a second to make.
    static MADE: [OnceLock<&'static RuleTable>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    Some(MADE[which].get_or_init(|| {
        if which == 2 {
            return intern(RuleTable::from_function(canonical, states, |around, c| {
                super::hutton::next(c, around)
            }));
        }
        let mut outer = [0u8; 256];
        for (state, &inner) in INNER.iter().enumerate() {
            outer[inner as usize] = state as u8;
        }
        let inner = |s: u8| INNER[s as usize];
        let nobili = which == 1;
        let table = RuleTable::from_function(canonical, states, |[n, w, e, s], c| {
            outer[next_inner(inner(c), [inner(n), inner(w), inner(e), inner(s)], nobili) as usize]
        });
        intern(table)
    }))
}
