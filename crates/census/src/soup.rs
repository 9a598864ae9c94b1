//! apgsearch's C1 soups of B3/S23: a 16 × 16 square of random cells made from a soup's ID.
//!
//! A soup's ID is its root followed by its index in decimal (`k_testseed` and 17 give
//! `k_testseed17`). Its SHA-256 digest, bytes d₀…d₃₁, gives row y (top row 0) the 16-bit word
//! 256·d₂ᵧ + d₂ᵧ₊₁, whose bit x is the cell of column x (left column 0): the left half of a row
//! is byte d₂ᵧ₊₁ from its lowest bit, the right half byte d₂ᵧ. This is the soup apgsearch 5
//! (apgluxe) and lifelib make, which put it at (8, 8) on their plane; Python apgsearch 1.x made
//! its mirror image.

use sha2::{Digest, Sha256};

/// A soup's rows, top first: bit x of a row is the cell in column x.
pub type Rows = [u16; 16];

/// The ID of soup `index` of `root`.
pub fn id(root: &str, index: u64) -> String {
    format!("{root}{index}")
}

/// The soup of `id`.
pub fn rows(id: &str) -> Rows {
    of_digest(&Sha256::digest(id.as_bytes()))
}

/// The soup of [`id`]`(root, index)`, made without building the ID (a census makes millions).
pub fn of(root: &str, index: u64) -> Rows {
    // The index's decimal digits, written from the end.
    let mut digits = [0u8; 20];
    let (mut at, mut rest) = (digits.len(), index);
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let digest = Sha256::new()
        .chain_update(root)
        .chain_update(&digits[at..])
        .finalize();
    of_digest(&digest)
}

/// The soup of an ID's SHA-256 digest (the module's doc gives the bit order).
fn of_digest(digest: &[u8]) -> Rows {
    std::array::from_fn(|y| u16::from_be_bytes([digest[2 * y], digest[2 * y + 1]]))
}

/// The live cells of a soup, (x, y) with its top-left cell at (0, 0).
pub fn cells(rows: &Rows) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    for (y, &row) in rows.iter().enumerate() {
        for x in 0..16 {
            if row >> x & 1 != 0 {
                out.push((x, y as i64));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picture(rows: &Rows, y: usize) -> String {
        (0..16)
            .map(|x| if rows[y] >> x & 1 != 0 { 'o' } else { '.' })
            .collect()
    }

    #[test]
    fn soups_are_apgsearchs() {
        // IDs, populations and first and last rows as apgluxe 5.2 and lifelib make them.
        let known = [
            ("k_testseed0", 141, ".....o.ooo.ooooo", "oo.ooooooooo.oo."),
            ("k_testseed1", 126, "oo..ooo.oo....oo", "oo.o....o.ooo..."),
            ("k_testseed999", 113, "o.o.o.o..o.oo..o", ".ooo.o..o.o.oo.."),
            (
                "l_kEwHfF3ArtPb0",
                124,
                "o...oooo.o.o.ooo",
                ".oo.oooooo...o..",
            ),
            ("k_abc123", 104, "oo....o....o.o..", "..o....oooo....."),
        ];
        for (id, population, top, bottom) in known {
            let soup = rows(id);
            assert_eq!(cells(&soup).len(), population, "{id}");
            assert_eq!(picture(&soup, 0), top, "{id}");
            assert_eq!(picture(&soup, 15), bottom, "{id}");
        }
        assert_eq!(rows(&id("k_testseed", 0))[0], 0xfba0);
    }

    #[test]
    fn soups_made_from_an_index_are_those_of_its_id() {
        for index in [0, 1, 9, 10, 99, 100, 12345, 8388607, u64::MAX / 7, u64::MAX] {
            for root in ["k_testseed", "", "l_kEwHfF3ArtPb0"] {
                assert_eq!(of(root, index), rows(&id(root, index)), "{root}{index}");
            }
        }
    }
}
