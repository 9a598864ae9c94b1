//! Tim Hutton's `Hutton32` (2008), the third rule of Golly's JvN algorithm: Nobili32's 32
//! states (numbered as in [`super::jvn`]) under changed rules, so that one line of ordinary
//! transmission states builds and retracts as it writes, and what it writes is turned
//! relative to the writing arrow (the construction is rotation-invariant).
//!
//! # The changes from Nobili32
//!
//! - The sensitized states read their bits only from excited *ordinary* arrows pointing at
//!   them, and end (after 3 to 5 bits) in a state turned relative to the excited arrow that
//!   points at them: an ordinary arrow forward, left, right or reversed, a special arrow
//!   forward, left, right or reversed, or a confluent state (the codes are in `construct`).
//! - An excited special arrow pointing at the ground state makes it an ordinary arrow in the
//!   same direction at once.
//! - An ordinary arrow whose target is about to end its sensitized sequence retracts (becomes
//!   the ground state, or sensitized where the target becomes confluent); at the end of a
//!   line, with a ground or sensitized target, an excited ordinary arrow marks itself as the
//!   writer by turning into the excited special arrow of its direction, which goes back to
//!   ordinary once the target is finished.
//! - An excited ordinary arrow pointing at a special one destroys it, and an excited special
//!   arrow destroys ordinary arrows and confluent states, as under Nobili32.
//!
//! Written from Tim Hutton's description of the rule and Golly 3.3's behaviour, its integer
//! arithmetic included (C's remainder of a negative number where no arrow points in, as in
//! `turned`). Checked on every one of the 32^5 neighbourhoods against `bgolly -a JvN`: probe
//! patterns of isolated neighbourhoods, a generation each (in batches of a million probes,
//! bgolly 3.3 answers differently for about 1.5% of them, depending on the batch; run again in
//! batches of 4096, and then of 4, every one agrees with this function). The tests run random
//! soups against bgolly (`crates/cli/tests/end_to_end/tables.rs`) and the corpus test Golly's three
//! Hutton32 patterns.

/// Golly's directions inside a transmission state: east, north, west, south.
const EAST: usize = 0;
const NORTH: usize = 1;
const WEST: usize = 2;
const SOUTH: usize = 3;

fn ordinary(s: u8) -> bool {
    (9..=16).contains(&s)
}

fn special(s: u8) -> bool {
    (17..=24).contains(&s)
}

fn transmission(s: u8) -> bool {
    (9..=24).contains(&s)
}

fn sensitized(s: u8) -> bool {
    (1..=8).contains(&s)
}

fn excited(s: u8) -> bool {
    (13..=16).contains(&s) || (21..=24).contains(&s)
}

/// A transmission state's direction (east, north, west, south).
fn direction(s: u8) -> usize {
    (s as usize - 9) % 4
}

/// The state with its excitation dropped (transmission) or its confluent excitations and
/// crossings dropped.
fn quiet(s: u8) -> u8 {
    match s {
        13..=16 | 21..=24 => s - 4,
        26..=31 => 25,
        s => s,
    }
}

/// A cell's four neighbours, indexed by the side they lie on (east, north, west, south).
struct Around {
    centre: u8,
    side: [u8; 4],
}

impl Around {
    /// Whether the neighbour on `side` is a transmission state pointing at the centre.
    fn points_in(&self, side: usize) -> bool {
        let s = self.side[side];
        transmission(s) && direction(s) == (side + 2) % 4
    }

    /// Whether the centre is a transmission state of `kind` (ordinary or special) pointing at
    /// the neighbour on `side`, which then cannot excite it.
    fn faces(&self, side: usize, kind: fn(u8) -> bool) -> bool {
        kind(self.centre) && direction(self.centre) == side
    }

    /// An excited arrow of `kind` pointing in (not head to head with the centre).
    fn arrow_in(&self, kind: fn(u8) -> bool) -> bool {
        (0..4).any(|k| {
            let s = self.side[k];
            kind(s) && excited(s) && self.points_in(k) && !self.faces(k, kind)
        })
    }

    /// An excitation of `kind` arriving: an excited arrow of that kind pointing in, or an
    /// excited confluent state passing one along the axis it lies on (both axes for 27 and
    /// 28, east–west for the crossing 29, north–south for 30, both for 31); not where the
    /// centre, of that kind, points at it.
    fn arriving(&self, kind: fn(u8) -> bool) -> bool {
        (0..4).any(|k| {
            let s = self.side[k];
            let from_confluent = match s {
                27 | 28 | 31 => true,
                29 => k == EAST || k == WEST,
                30 => k == NORTH || k == SOUTH,
                _ => false,
            };
            let from_arrow = kind(s) && excited(s) && self.points_in(k);
            (from_confluent || from_arrow) && !self.faces(k, kind)
        })
    }

    /// The excited arrow (either kind) pointing in, looked for west, south, east, north, as
    /// Golly looks; 0 where there is none.
    fn writer(&self) -> u8 {
        [WEST, SOUTH, EAST, NORTH]
            .into_iter()
            .find(|&k| excited(self.side[k]) && self.points_in(k))
            .map_or(0, |k| self.side[k])
    }

    /// The state the centre (a transmission state) points at.
    fn target(&self) -> u8 {
        self.side[direction(self.centre)]
    }

    /// Whether every ordinary arrow pointing in is excited, and one is.
    fn ordinary_all_on(&self) -> bool {
        let ins = (0..4).filter(|&k| ordinary(self.side[k]) && self.points_in(k));
        let (mut any, mut all) = (false, true);
        for k in ins {
            any |= excited(self.side[k]);
            all &= excited(self.side[k]);
        }
        any && all
    }

    /// Two transmission inputs and two transmission outputs: a confluent state becomes a
    /// crossing.
    fn crossing(&self) -> bool {
        let inputs = (0..4).filter(|&k| self.points_in(k)).count();
        let outputs = (0..4)
            .filter(|&k| transmission(self.side[k]) && !self.points_in(k))
            .count();
        inputs == 2 && outputs == 2
    }

    /// What an excited ordinary arrow on each axis makes of a crossing: 31 both, 30
    /// north–south, 29 east–west, 25 neither.
    fn crossed(&self) -> u8 {
        let on = |k: usize| self.side[k] == [15, 16, 13, 14][k];
        match (on(NORTH) || on(SOUTH), on(EAST) || on(WEST)) {
            (true, true) => 31,
            (true, false) => 30,
            (false, true) => 29,
            (false, false) => 25,
        }
    }
}

/// What the centre's target (an arrow's) is about to become, by the centre's excitation.
fn target_ends_ordinary(centre: u8, target: u8) -> bool {
    target == 8 || (target == 4 && excited(centre)) || (target == 5 && !excited(centre))
}

fn target_ends_confluent(centre: u8, target: u8) -> bool {
    target == 7 && excited(centre)
}

fn target_stays_sensitized(centre: u8, target: u8) -> bool {
    (target == 0 && excited(centre))
        || (1..=3).contains(&target)
        || (target == 4 && !ordinary(centre))
}

/// A transmission state of `base` (9 ordinary, 17 special) turned `turn` quarter turns
/// anticlockwise from the writer's direction, by Golly's arithmetic: `(w − 9 + turn) % 4`
/// with C's remainder (negative where no writer points in).
fn turned(writer: u8, turn: i32, base: i32) -> u8 {
    ((i32::from(quiet(writer)) - 9 + turn) % 4 + base) as u8
}

/// The next state of a sensitized state `c` (1 to 8): a bit a generation, 1 where an excited
/// ordinary arrow points in; the sequences 1000 (reverse), 1001… end in states turned from the
/// writer's direction.
fn construct(c: u8, around: &Around) -> u8 {
    let bit = around.arrow_in(ordinary);
    let writer = around.writer();
    match (c, bit) {
        (1, false) => 2,
        (1, true) => 3,
        (2, false) => 4,
        (2, true) => 5,
        (3, false) => 6,
        (3, true) => 7,
        (4, false) => 8,
        (4, true) => turned(writer, 2, 9),
        (5, false) => turned(writer, 3, 9),
        (5, true) => quiet(writer) + 8,
        (6, false) => turned(writer, 1, 17),
        (6, true) => turned(writer, 2, 17),
        (7, false) => turned(writer, 3, 17),
        (7, true) => 25,
        (8, false) => (9 + (i32::from(writer) - 9) % 4) as u8,
        (8, true) => (9 + (i32::from(writer) + 1 - 9) % 4) as u8,
        _ => unreachable!("sensitized states are 1 to 8"),
    }
}

/// Hutton32's next state of `c` given its neighbours to the north, west, east and south.
pub(super) fn next(c: u8, [n, w, e, s]: [u8; 4]) -> u8 {
    let around = Around {
        centre: c,
        side: [e, n, w, s],
    };
    match c {
        0 if around.arrow_in(ordinary) => 1,
        0 if around.arrow_in(special) => quiet(around.writer()) - 8,
        0 => 0,
        _ if sensitized(c) => construct(c, &around),
        _ if ordinary(c) => {
            let target = around.target();
            if around.arrow_in(special) {
                0
            } else if around.arriving(ordinary) {
                if target_ends_ordinary(c, target) || (special(target) && !excited(target)) {
                    0
                } else if target_ends_confluent(c, target) {
                    1
                } else {
                    quiet(c) + 4
                }
            } else if target_ends_confluent(c, target) {
                0
            } else if excited(c) && target_stays_sensitized(c, target) {
                // The writer's mark: the excited special arrow of the same direction.
                quiet(c) + 12
            } else {
                quiet(c)
            }
        }
        _ if special(c) => {
            let target = around.target();
            let ordinary_in = (0..4).any(|k| ordinary(around.side[k]) && around.points_in(k));
            if excited(c) && sensitized(target) && ordinary_in {
                // The writer's mark at the end of an ordinary line.
                match (
                    target_stays_sensitized(c, target),
                    around.arrow_in(ordinary),
                ) {
                    (true, true) => c - 8,
                    (true, false) => c,
                    (false, true) => 0,
                    (false, false) => quiet(c) - 8,
                }
            } else if excited(c) && target == 0 {
                if around.arrow_in(special) {
                    c
                } else {
                    quiet(c)
                }
            } else if around.arrow_in(ordinary) {
                0
            } else if around.arriving(special) {
                quiet(c) + 4
            } else {
                quiet(c)
            }
        }
        _ if around.arrow_in(special) => 0,
        25 if around.crossing() => around.crossed(),
        25 | 27 => 25 + around.ordinary_all_on() as u8,
        26 | 28 => 27 + around.ordinary_all_on() as u8,
        29..=31 => around.crossed(),
        other => other,
    }
}
