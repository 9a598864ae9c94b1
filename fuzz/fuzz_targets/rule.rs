#![no_main]

//! The rule parser on arbitrary text: a refusal is fine, a panic is a bug; a rule it accepts
//! reads back the same from its own notation.

use gol_core::Rule;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(rule) = Rule::parse(text) {
        assert_eq!(
            Rule::parse(&rule.to_string()).ok(),
            Some(rule),
            "{text:?} → {rule}"
        );
    }
});
