#![no_main]

//! Golly's `.rule` files (`@TABLE` and `@TREE`) on arbitrary text: a refusal is fine, a panic
//! is a bug; a table it accepts gives a state of its own for every neighbourhood tried, and
//! its `@COLORS` (where it has them) name one colour or none for each of its states.

use std::path::Path;

use gol_core::RuleTable;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(table) = RuleTable::parse(text, Path::new("fuzz.rule")) else {
        return;
    };
    let states = table.states();
    if let Some(colours) = table.colours() {
        assert_eq!(colours.len(), states as usize);
    }
    for seed in 0..64u32 {
        let around: [[u8; 3]; 3] = std::array::from_fn(|r| {
            std::array::from_fn(|c| ((seed.wrapping_mul(2654435761) >> (3 * r + c)) % states) as u8)
        });
        assert!(u32::from(table.next(&around)) < states, "{around:?}");
    }
});
