//! What lies past a 2D grid's edges: Golly's bounded-grid suffix after a rule's `:`.
//!
//! - `:TW,H` (or `:TN` for N×N): a torus, the edges joined to the opposite ones. The default.
//! - `:PW,H`: a bounded plane, every cell outside the grid dead for ever, so the edges see no
//!   wrap.
//!
//! A rule carries its [`Topology`]; the size belongs to the grid. Every 2D engine runs both;
//! split runs ([`crate::slab`]) take only tori. [`parse_suffix`] reads the
//! suffix with or without the size (`B3/S23:P` is a bounded plane of whatever size the grid has).
//! Golly's other bounded grids (a shifted torus `:T64+3,48`, the Klein bottle `:K`, the
//! cross-surface `:C`, the sphere `:S`) are refused by name.

use crate::grid::MAX_SIDE;

/// How a 2D grid's edges meet (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Topology {
    /// The edges wrap round to the opposite ones.
    #[default]
    Torus,
    /// Cells outside the grid are dead.
    Plane,
}

impl Topology {
    /// The topology's name, for reports and messages ("torus", "bounded plane").
    pub const fn name(self) -> &'static str {
        match self {
            Topology::Torus => "torus",
            Topology::Plane => "bounded plane",
        }
    }

    /// Golly's letter for it.
    pub const fn letter(self) -> char {
        match self {
            Topology::Torus => 'T',
            Topology::Plane => 'P',
        }
    }
}

/// Parses the part of a rule after `:`: `T` or `P`, optionally followed by `W,H` or `N` (N×N).
/// Returns the topology and the size, if given.
pub fn parse_suffix(suffix: &str) -> Result<(Topology, Option<(usize, usize)>), String> {
    let lower = suffix.trim().to_ascii_lowercase();
    let mut chars = lower.chars();
    let topology = match chars.next() {
        Some('t') => Topology::Torus,
        Some('p') => Topology::Plane,
        Some(other) => {
            let kind = match other {
                'k' => "a Klein bottle (:K)",
                's' => "a sphere (:S)",
                'c' => "a cross-surface (:C)",
                _ => {
                    return Err(format!(
                        "unknown bounded-grid suffix {}",
                        crate::error::quoted(&format!(":{suffix}"))
                    ))
                }
            };
            return Err(format!(
                "the rule asks for {kind}; only a torus (:TW,H) or a bounded plane (:PW,H) is supported"
            ));
        }
        None => return Err("an empty bounded-grid suffix after ':'".into()),
    };
    let dims = chars.as_str().trim();
    if dims.contains(['+', '-', '*']) {
        return Err(format!(
            "the rule asks for a shifted or twisted grid ({}); only a plain torus (:TW,H) or a bounded plane (:PW,H) is supported",
            crate::error::quoted(&format!(":{suffix}"))
        ));
    }
    if dims.is_empty() {
        return Ok((topology, None));
    }
    let (w, h) = match dims.split_once(',') {
        Some((w, h)) => (w.trim(), h.trim()),
        None => (dims, dims),
    };
    let (w, h) = (parse_side("width", w)?, parse_side("height", h)?);
    // Golly's :T0,0 is unbounded both ways: the plane, with no size.
    if (w, h) == (0, 0) {
        return Ok((topology, None));
    }
    if w == 0 || h == 0 {
        let way = if w == 0 { "wide" } else { "high" };
        return Err(format!(
            "the grid :{suffix} is infinitely {way} (a tube), which gol does not run; give both sides a size, or 0,0 for the infinite plane"
        ));
    }
    Ok((topology, Some((w, h))))
}

/// A side of a bounded grid: a whole number up to [`MAX_SIDE`].
fn parse_side(what: &str, value: &str) -> Result<usize, String> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "the bounded grid's {what} {} is not a whole number",
            crate::error::quoted(value)
        ));
    }
    match value.parse::<usize>() {
        Ok(n) if n <= MAX_SIDE => Ok(n),
        _ => Err(format!(
            "the bounded grid's {what} {} is larger than the largest side, {MAX_SIDE}",
            crate::error::quoted(value)
        )),
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn reads_golly_suffixes() {
        assert_eq!(
            parse_suffix("T20,10"),
            Ok((Topology::Torus, Some((20, 10))))
        );
        assert_eq!(parse_suffix("t64"), Ok((Topology::Torus, Some((64, 64)))));
        assert_eq!(parse_suffix("P 5 , 6"), Ok((Topology::Plane, Some((5, 6)))));
        assert_eq!(parse_suffix("P"), Ok((Topology::Plane, None)));
        assert_eq!(parse_suffix("T"), Ok((Topology::Torus, None)));
    }

    #[test]
    fn zero_by_zero_is_golly_s_unbounded_plane() {
        assert_eq!(parse_suffix("T0,0"), Ok((Topology::Torus, None)));
        assert_eq!(parse_suffix("p0,0"), Ok((Topology::Plane, None)));
    }

    #[test]
    fn refuses_what_it_cannot_run() {
        for (suffix, says) in [
            ("K10,10", "Klein bottle"),
            ("S10", "sphere"),
            ("C10,10", "cross-surface"),
            ("T10+1,10", "shifted"),
            ("P10*,10", "twisted"),
            ("T0,10", "infinitely wide (a tube)"),
            ("T10,0", "infinitely high (a tube)"),
            ("Px,10", "not a whole number"),
            ("Q3", "unknown"),
            ("", "empty"),
        ] {
            let e = parse_suffix(suffix).unwrap_err();
            assert!(e.contains(says), "{suffix}: {e}");
        }
    }
}
