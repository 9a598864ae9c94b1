//! Hensel's letters: the arrangements of live neighbours that isotropic non-totalistic rules
//! name (LifeWiki, "Isotropic non-totalistic rule"; docs/lineage.md).
//!
//! A neighbourhood is a 9-bit number, bit `3r + c` the cell in row `r` (0 at the top) and
//! column `c` (0 at the left) of the 3×3 square, the centre at bit 4. For each count of live
//! neighbours, the arrangements fall into classes under the square's eight rotations and
//! reflections, and each class has a letter. Counts 0 and 8 have one class and no letter.

/// The letters of each count (0 to 8), in the order of their indices.
pub const LETTERS: [&str; 9] = [
    "",
    "ce",
    "cekain",
    "cekainyqjr",
    "cekainyqjrtwz",
    "cekainyqjr",
    "cekain",
    "ce",
    "",
];

/// One arrangement of each class, as a 9-bit neighbourhood (centre clear), in the order of
/// [`LETTERS`]. Checked against Golly's `bgolly` (crates/cli/tests/end_to_end/rules.rs).
const REPRESENTATIVES: [&[u16]; 9] = [
    &[],
    &[0b000000001, 0b000000010],
    &[
        0b000000101,
        0b000001010,
        0b000001100,
        0b000000011,
        0b000101000,
        0b001000100,
    ],
    &[
        0b001000101,
        0b000101010,
        0b001100010,
        0b000001011,
        0b000000111,
        0b000001101,
        0b001100001,
        0b001000110,
        0b000001110,
        0b000101001,
    ],
    &[
        0b101000101,
        0b010101010,
        0b001100011,
        0b000001111,
        0b000101101,
        0b001000111,
        0b001100101,
        0b001100110,
        0b001101010,
        0b000101011,
        0b001101001,
        0b001001110,
        0b001101100,
    ],
    &[
        0b010101011,
        0b101000111,
        0b011100101,
        0b001001111,
        0b000101111,
        0b001101011,
        0b010101101,
        0b001101110,
        0b001100111,
        0b001101101,
    ],
    &[
        0b010101111,
        0b101001111,
        0b011100111,
        0b001101111,
        0b101101101,
        0b011101110,
    ],
    &[0b011101111, 0b101101111],
    &[],
];

/// The neighbourhood turned a quarter turn (`(r, c)` to `(c, 2 - r)`), or where `mirrored`,
/// mirrored left to right (`(r, c)` to `(r, 2 - c)`).
const fn moved(cells: u16, mirrored: bool) -> u16 {
    let mut out = 0;
    let mut bit = 0;
    while bit < 9 {
        if cells >> bit & 1 == 1 {
            let (r, c) = (bit / 3, bit % 3);
            out |= if mirrored {
                1 << (3 * r + 2 - c)
            } else {
                1 << (3 * c + 2 - r)
            };
        }
        bit += 1;
    }
    out
}

/// The neighbourhood turned a quarter turn.
const fn rotate(cells: u16) -> u16 {
    moved(cells, false)
}

/// The neighbourhood mirrored left to right.
const fn mirror(cells: u16) -> u16 {
    moved(cells, true)
}

/// For every 9-bit neighbourhood with its centre clear, the index of its letter among its
/// count's [`LETTERS`] (0 for counts 0 and 8).
const CLASSES: [u8; 512] = {
    let mut classes = [0u8; 512];
    let mut count = 1;
    while count < 8 {
        let mut letter = 0;
        while letter < REPRESENTATIVES[count].len() {
            let mut cells = REPRESENTATIVES[count][letter];
            let mut turn = 0;
            while turn < 4 {
                classes[cells as usize] = letter as u8;
                classes[mirror(cells) as usize] = letter as u8;
                cells = rotate(cells);
                turn += 1;
            }
            letter += 1;
        }
        count += 1;
    }
    classes
};

/// The index of the letter of the arrangement of `cells`' live neighbours (its centre is
/// ignored) among its count's [`LETTERS`].
#[inline]
pub fn letter_index(cells: u16) -> usize {
    CLASSES[(cells & 0x1ef) as usize] as usize
}

/// The letters' indices with every letter of `count`: the set a bare count stands for.
pub const fn all_letters(count: usize) -> u16 {
    match LETTERS[count].len() {
        0 => 1,
        n => (1 << n) - 1,
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn classes_split_each_count_into_its_letters() {
        for count in 1..8 {
            let mut sizes = vec![0; LETTERS[count].len()];
            for cells in (0..512u16).filter(|c| c & 16 == 0 && c.count_ones() == count as u32) {
                sizes[letter_index(cells)] += 1;
            }
            // Every letter has arrangements, and they add up to 8 choose count.
            assert!(sizes.iter().all(|&n| n > 0), "{count}: {sizes:?}");
            let choose = (1..=count as u32).fold(1, |n, k| n * (9 - k) / k);
            assert_eq!(sizes.iter().sum::<u32>(), choose, "{count}");
            assert_eq!(REPRESENTATIVES[count].len(), LETTERS[count].len());
        }
    }

    #[test]
    fn complements_keep_their_letter() {
        // LifeWiki: for counts other than 4, letter x of count n is the complement of letter x
        // of count 8 - n.
        for cells in (0..512u16).filter(|c| c & 16 == 0 && c.count_ones() != 4) {
            let complement = !cells & 0x1ef;
            let (n, m) = (
                cells.count_ones() as usize,
                complement.count_ones() as usize,
            );
            if (1..8).contains(&n) {
                assert_eq!(
                    LETTERS[n].as_bytes()[letter_index(cells)],
                    LETTERS[m].as_bytes()[letter_index(complement)],
                    "{cells:09b}"
                );
            }
        }
    }

    #[test]
    fn symmetric_arrangements_share_a_letter() {
        for cells in (0..512u16).filter(|c| c & 16 == 0) {
            assert_eq!(letter_index(rotate(cells)), letter_index(cells));
            assert_eq!(letter_index(mirror(cells)), letter_index(cells));
        }
    }
}
