//! What lies past a 2D grid's edges: Golly's bounded-grid suffix after a rule's `:`.
//!
//! - `:TW,H` (or `:TN` for N×N): a torus, the edges joined to the opposite ones. The default.
//! - `:PW,H`: a bounded plane, every cell outside the grid dead for ever, so the edges see no
//!   wrap.
//! - Golly's other bounded grids ([`Surface`]): a torus with a shift on one pair of edges
//!   (`:T30+5,20`, `:T30,20-2`), the Klein bottle (`:K30*,20`, `:K30,20*`, with a shift of 1 on
//!   the twisted edges where their side is even: `:K30*+1,20`), the cross-surface (`:C30,20`)
//!   and the sphere (`:S30`). Each carries its size, and runs on the engines that fill a
//!   border of ghost cells before each generation (`cpu-scalar`; `cpu-bitsliced` for
//!   two-state rules, a ring round the grid; `cpu-states` for rule tables), as Golly itself
//!   runs them: [`Surface::outside`] says which cell each ghost copies.
//!
//! A rule carries its [`Topology`]; the size of a torus or a plane belongs to the grid. Every
//! 2D engine runs those two; split runs ([`crate::slab`]) take only tori. [`parse_suffix`]
//! reads the suffix with or without the size (`B3/S23:P` is a bounded plane of whatever size
//! the grid has).
//! - Golly's grids infinite in one direction ([`Strip`]): a tube (`:T0,20`, `:T30,0`), whose
//!   bounded sides are joined, and a strip (`:P0,20`, `:P30,0`), past whose bounded sides cells
//!   are dead. No grid holds them: they run on the infinite plane's window engine.

use crate::grid::MAX_SIDE;

/// How a 2D grid's edges meet (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Topology {
    /// The edges wrap round to the opposite ones.
    #[default]
    Torus,
    /// Cells outside the grid are dead.
    Plane,
    /// One of Golly's other bounded grids, with its size.
    Surface(Surface),
    /// A tube or a strip: bounded one way, infinite the other.
    Strip(Strip),
}

/// A grid bounded one way and infinite the other, as Golly's `:T0,20` (a tube, 20 rows
/// joined top to bottom, infinitely wide), `:T30,0`, `:P0,20` (a strip: 20 rows, cells above
/// and below dead) and `:P30,0`. The bounded side's cells lie at Golly's coordinates
/// −⌊n/2⌋ .. n − 1 − ⌊n/2⌋, as a bounded grid's do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Strip {
    /// Whether the bounded sides are joined (a tube) rather than dead beyond (a strip).
    pub wrap: bool,
    /// The width; 0 where the grid is infinitely wide.
    pub width: usize,
    /// The height; 0 where the grid is infinitely high.
    pub height: usize,
}

impl Strip {
    /// Whether the bounded side is the height (`:T0,20`) rather than the width.
    pub const fn bounded_rows(&self) -> bool {
        self.width == 0
    }

    /// The bounded side's length.
    pub const fn side(&self) -> usize {
        if self.width == 0 {
            self.height
        } else {
            self.width
        }
    }

    /// Golly's suffix for it (without the `:`): `T0,20`.
    pub fn suffix(&self) -> String {
        let letter = if self.wrap { 'T' } else { 'P' };
        format!("{letter}{},{}", self.width, self.height)
    }
}

/// Which of Golly's other bounded grids a [`Surface`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A torus with a shift on one pair of edges.
    ShiftedTorus,
    /// One pair of edges twisted (reversed) before they are joined.
    Klein,
    /// Both pairs twisted.
    Cross,
    /// Adjacent edges joined: the top to the left, the right to the bottom.
    Sphere,
}

/// One of Golly's bounded grids beyond the torus and the plane (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Surface {
    /// Which grid.
    pub kind: Kind,
    /// Its width.
    pub width: usize,
    /// Its height.
    pub height: usize,
    /// Whether the horizontal edges (top and bottom) are twisted.
    pub twist_rows: bool,
    /// Whether the vertical edges (left and right) are twisted.
    pub twist_columns: bool,
    /// The shift along the horizontal edges (`:T30+5,20`).
    pub shift_rows: i64,
    /// The shift along the vertical edges (`:T30,20-2`).
    pub shift_columns: i64,
}

impl Surface {
    /// The grid cell that the ghost cell (x, y) copies, for x in −1..=W and y in −1..=H
    /// (a cell of the grid itself is its own), as Golly's help draws each grid's border.
    pub fn outside(&self, x: isize, y: isize) -> (usize, usize) {
        let (w, h) = (self.width as isize, self.height as isize);
        if self.kind == Kind::Sphere {
            // The top edge meets the left one, the right edge the bottom one; each corner
            // copies the corner cell beside it.
            let (x, y) = match (x, y) {
                (-1, -1) => (0, 0),
                (-1, y) if y >= h => (0, h - 1),
                (x, -1) if x >= w => (w - 1, 0),
                (x, y) if x >= w && y >= h => (w - 1, h - 1),
                (-1, y) => (y, 0),
                (x, -1) => (0, x),
                (x, y) if x >= w => (y, h - 1),
                (x, y) if y >= h => (w - 1, x),
                inside => inside,
            };
            return (x as usize, y as usize);
        }
        // Past the top or bottom edge first (twisted, or shifted along it), then past a side.
        let (mut x, mut y) = (x, y);
        if y < 0 || y >= h {
            let below = y >= h;
            y = if below { 0 } else { h - 1 };
            if self.twist_rows {
                // Golly's help draws a Klein bottle's shift the other way; bgolly 3.3 runs
                // it this way, which the tests check.
                x = w - 1 - x - self.shift_rows as isize;
            } else if below {
                x += self.shift_rows as isize;
            } else {
                x -= self.shift_rows as isize;
            }
        }
        if x < 0 || x >= w {
            let right = x >= w;
            x = x.rem_euclid(w);
            if self.twist_columns {
                y = h - 1 - y - self.shift_columns as isize;
            } else if right {
                y += self.shift_columns as isize;
            } else {
                y -= self.shift_columns as isize;
            }
        }
        (x.rem_euclid(w) as usize, y.rem_euclid(h) as usize)
    }

    /// The same grid at `width` × `height` (a size given for a pattern file overrides its
    /// suffix's, as it does a torus's), read back from its suffix so that Golly's rules on
    /// which sizes each grid takes are checked again.
    pub fn resized(&self, width: usize, height: usize) -> Result<Surface, String> {
        let suffix = Surface {
            width,
            height,
            ..*self
        }
        .suffix();
        match parse_suffix(&suffix)? {
            (Topology::Surface(surface), _) => Ok(surface),
            _ => unreachable!("a surface's suffix reads back as a surface"),
        }
    }

    /// Golly's suffix for it (without the `:`), as it reads it back: `K40*,20`.
    pub fn suffix(&self) -> String {
        let side = |n: usize, twist: bool, shift: i64| {
            let mut text = n.to_string();
            if twist {
                text.push('*');
            }
            if shift != 0 {
                text.push_str(&format!("{shift:+}"));
            }
            text
        };
        match self.kind {
            Kind::Sphere => format!("S{}", self.width),
            Kind::Cross => format!("C{},{}", self.width, self.height),
            kind => format!(
                "{}{},{}",
                if kind == Kind::Klein { 'K' } else { 'T' },
                side(self.width, self.twist_rows, self.shift_rows),
                side(self.height, self.twist_columns, self.shift_columns)
            ),
        }
    }
}

impl Topology {
    /// The topology's name, for reports and messages ("torus", "bounded plane").
    pub const fn name(self) -> &'static str {
        match self {
            Topology::Torus => "torus",
            Topology::Plane => "bounded plane",
            Topology::Surface(s) => match s.kind {
                Kind::ShiftedTorus => "shifted torus",
                Kind::Klein => "Klein bottle",
                Kind::Cross => "cross-surface",
                Kind::Sphere => "sphere",
            },
            Topology::Strip(s) if s.wrap => "tube",
            Topology::Strip(_) => "strip",
        }
    }

    /// Golly's letter for it.
    pub const fn letter(self) -> char {
        match self {
            Topology::Torus => 'T',
            Topology::Plane => 'P',
            Topology::Surface(s) => match s.kind {
                Kind::ShiftedTorus => 'T',
                Kind::Klein => 'K',
                Kind::Cross => 'C',
                Kind::Sphere => 'S',
            },
            Topology::Strip(s) if s.wrap => 'T',
            Topology::Strip(_) => 'P',
        }
    }

    /// The grid's own size, where the topology carries one ([`Topology::Surface`]).
    pub const fn size(self) -> Option<(usize, usize)> {
        match self {
            Topology::Surface(s) => Some((s.width, s.height)),
            _ => None,
        }
    }
}

/// One side of a suffix: its length, whether it is twisted (`*`), and its shift (`+5`, `-2`).
fn parse_twisted_side(what: &str, text: &str) -> Result<(usize, bool, i64), String> {
    let text = text.trim();
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, mut rest) = text.split_at(end);
    let side = parse_side(what, digits)?;
    let twist = rest.starts_with('*');
    if twist {
        rest = &rest[1..];
    }
    let shift = match rest {
        "" => 0,
        shift => shift
            .parse::<i64>()
            .ok()
            .filter(|_| shift.starts_with(['+', '-']))
            .ok_or_else(|| {
                format!(
                    "the bounded grid's {what} {} is not a side with an optional * and shift (+5, -2)",
                    crate::error::quoted(text)
                )
            })?,
    };
    Ok((side, twist, shift))
}

/// Reads Golly's suffixes for the grids other than the plain torus and plane: `letter` and
/// the sides after it (`dims`).
fn parse_surface(letter: char, dims: &str, suffix: &str) -> Result<Topology, String> {
    let whole = || crate::error::quoted(&format!(":{suffix}"));
    let (w, h) = match dims.split_once(',') {
        Some((w, h)) => (w, h),
        None => (dims, dims),
    };
    let (width, twist_rows, shift_rows) = parse_twisted_side("width", w)?;
    let (height, twist_columns, shift_columns) = parse_twisted_side("height", h)?;
    if width == 0 || height == 0 {
        return Err(format!(
            "{}: a side of 0 (infinite) is not possible on this grid, nor with a shift",
            whole()
        ));
    }
    let surface = Surface {
        kind: Kind::ShiftedTorus,
        width,
        height,
        twist_rows,
        twist_columns,
        shift_rows,
        shift_columns,
    };
    let shifted = shift_rows != 0 || shift_columns != 0;
    let twisted = twist_rows || twist_columns;
    let refuse = |why: &str| Err(format!("{}: {why}", whole()));
    match letter {
        't' | 'p' if twisted => refuse("only a Klein bottle (:K) has twisted edges"),
        'p' => refuse("a bounded plane has no shift"),
        't' if shift_rows != 0 && shift_columns != 0 => {
            refuse("a torus has a shift on one pair of edges, not both")
        }
        't' => Ok(Topology::Surface(surface)),
        'k' if twist_rows == twist_columns => {
            refuse("a Klein bottle has one pair of edges twisted: put * after one side")
        }
        'k' => {
            let (twisted_side, other_shift) = if twist_rows {
                (width, shift_columns)
            } else {
                (height, shift_rows)
            };
            if other_shift != 0 {
                return refuse("a Klein bottle's shift goes on its twisted edges");
            }
            let shift = if twist_rows {
                shift_rows
            } else {
                shift_columns
            };
            if shift != 0 && twisted_side % 2 == 1 {
                return refuse(
                    "a Klein bottle's twisted edges take a shift only where their side is even",
                );
            }
            // Every shift of a Klein bottle's twisted edges is equivalent to a shift of 1.
            let one = (shift != 0) as i64;
            Ok(Topology::Surface(Surface {
                kind: Kind::Klein,
                shift_rows: if twist_rows { one } else { 0 },
                shift_columns: if twist_columns { one } else { 0 },
                ..surface
            }))
        }
        'c' | 's' if shifted || twisted => {
            refuse("a cross-surface or a sphere takes no shift or *")
        }
        'c' => Ok(Topology::Surface(Surface {
            kind: Kind::Cross,
            twist_rows: true,
            twist_columns: true,
            ..surface
        })),
        _ if width != height => refuse("a sphere's width and height are equal (:S30)"),
        _ => Ok(Topology::Surface(Surface {
            kind: Kind::Sphere,
            ..surface
        })),
    }
}

/// Parses the part of a rule after `:`: `T` or `P`, optionally followed by `W,H` or `N` (N×N).
/// Returns the topology and the size, if given.
pub fn parse_suffix(suffix: &str) -> Result<(Topology, Option<(usize, usize)>), String> {
    let lower = suffix.trim().to_ascii_lowercase();
    let mut chars = lower.chars();
    let letter = chars.next();
    let dims = chars.as_str().trim();
    let topology = match letter {
        Some('t') | Some('p') if dims.contains(['+', '-', '*']) => {
            let topology = parse_surface(letter.unwrap_or('t'), dims, suffix)?;
            return Ok(match topology {
                // A shift of 0 (`:T60-0,60`): the plain torus.
                Topology::Surface(s)
                    if s.kind == Kind::ShiftedTorus
                        && s.shift_rows == 0
                        && s.shift_columns == 0 =>
                {
                    (Topology::Torus, Some((s.width, s.height)))
                }
                _ => (topology, topology.size()),
            });
        }
        Some('t') => Topology::Torus,
        Some('p') => Topology::Plane,
        Some(other @ ('k' | 'c' | 's')) => {
            if dims.is_empty() {
                return Err(format!(
                    "{} needs its size (:K30*,20, :C30,20, :S30)",
                    crate::error::quoted(&format!(":{suffix}"))
                ));
            }
            let topology = parse_surface(other, dims, suffix)?;
            return Ok((topology, topology.size()));
        }
        Some(_) => {
            return Err(format!(
                "unknown bounded-grid suffix {}",
                crate::error::quoted(&format!(":{suffix}"))
            ))
        }
        None => return Err("an empty bounded-grid suffix after ':'".into()),
    };
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
        let strip = Strip {
            wrap: topology == Topology::Torus,
            width: w,
            height: h,
        };
        return Ok((Topology::Strip(strip), None));
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
        // Found by fuzzing: a shift of 0 is no shift.
        assert_eq!(
            parse_suffix("t060-0"),
            Ok((Topology::Torus, Some((60, 60))))
        );
    }

    /// Golly's help's border diagrams (`Help/bounded.html`), each a 4×3 grid (3×4, 3×3) of
    /// cells A, B, C, … row by row, and the border read from its top-left ghost row by row;
    /// the two shifted Klein bottles as bgolly 3.3 runs them (the help draws their shift the
    /// other way round).
    #[test]
    fn borders_are_golly_s() {
        for (suffix, border) in [
            ("T4+1,3", "KLIJKL DA HE LI ABCDAB"),
            ("T4,3+1", "HIJKLA LE DI HA LABCDE"),
            ("K4*,3", "ILKJIL DA HE LI ADCBAD"),
            ("K4,3*", "DIJKLA LI HE DA LABCDI"),
            ("K4*+1,3", "LKJILK DA HE LI DCBADC"),
            ("K3,4*+1", "LJKLJ IG FD CA LJ IABCG"),
            ("C4,3", "ALKJID LI HE DA IDCBAL"),
            ("S3", "AADGC AG BH CI GCFII"),
        ] {
            let (Topology::Surface(surface), Some((w, h))) = parse_suffix(suffix).unwrap() else {
                panic!("{suffix}: not a surface");
            };
            let letter = |(x, y): (usize, usize)| (b'A' + (y * w + x) as u8) as char;
            let cell = |x: isize, y: isize| letter(surface.outside(x, y));
            let (w, h) = (w as isize, h as isize);
            let top: String = (-1..=w).map(|x| cell(x, -1)).collect();
            let sides = (0..h).map(|y| format!("{}{}", cell(-1, y), cell(w, y)));
            let bottom: String = (-1..=w).map(|x| cell(x, h)).collect();
            let drawn: Vec<String> = std::iter::once(top)
                .chain(sides)
                .chain(std::iter::once(bottom))
                .collect();
            assert_eq!(drawn.join(" "), border, "{suffix}");
            assert_eq!(
                surface.suffix().to_ascii_lowercase(),
                suffix.to_ascii_lowercase()
            );
        }
    }

    #[test]
    fn zero_by_zero_is_golly_s_unbounded_plane() {
        assert_eq!(parse_suffix("T0,0"), Ok((Topology::Torus, None)));
        assert_eq!(parse_suffix("p0,0"), Ok((Topology::Plane, None)));
    }

    #[test]
    fn a_side_of_0_is_a_tube_or_a_strip() {
        for (suffix, wrap, width, height, name) in [
            ("T0,68", true, 0, 68, "tube"),
            ("t30,0", true, 30, 0, "tube"),
            ("P0,5", false, 0, 5, "strip"),
            ("P7,0", false, 7, 0, "strip"),
        ] {
            let strip = Strip {
                wrap,
                width,
                height,
            };
            assert_eq!(parse_suffix(suffix), Ok((Topology::Strip(strip), None)));
            assert_eq!(Topology::Strip(strip).name(), name);
            assert_eq!(strip.suffix(), suffix.to_ascii_uppercase());
            assert_eq!(strip.side(), width.max(height));
            assert_eq!(strip.bounded_rows(), width == 0);
        }
    }

    #[test]
    fn refuses_what_it_cannot_run() {
        for (suffix, says) in [
            ("K10,10", "one pair of edges twisted"),
            ("K11*+1,10", "only where their side is even"),
            ("K10*,10+1", "shift goes on its twisted edges"),
            ("S10,11", "equal"),
            ("C10*,10", "no shift or *"),
            ("T10+1,10-1", "not both"),
            ("P10*,10", "twisted"),
            ("K", "needs its size"),
            ("K0*,10", "a side of 0"),
            ("Px,10", "not a whole number"),
            ("Q3", "unknown"),
            ("", "empty"),
        ] {
            let e = parse_suffix(suffix).unwrap_err();
            assert!(e.contains(says), "{suffix}: {e}");
        }
    }
}
