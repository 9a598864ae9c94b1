//! MCell files (`.mcl`, Mirek Wojtowicz's MCell), read as Golly reads them: turned into the
//! RLE they stand for, line for line, so that the RLE reader places and draws them and its
//! messages name the file's own lines.
//!
//! An MCell file starts `#MCell`; its `#GAME` names the rule family and `#RULE` the rule
//! (Generations' `S/B/C`, Life's `S/B`, Larger than Life's `R…`), or `#GOLLY` names the rule
//! Golly runs it with (a rule table, for MCell's "Rules table" games). `#BOARD WxH` with
//! `#WRAP 1` makes a W×H torus, with `#WRAP 0` (or none) a W×H bounded plane, as Golly makes
//! them; no `#BOARD`, the infinite plane. `#L` lines hold the cells in RLE's own notation
//! (counts, `.` for state 0, `A`… for states 1…, `$` between rows) without the final `!`.
//! Golly centres the cells in the board, as an RLE on a bounded grid is centred.

use std::path::Path;

use super::parse_error;
use crate::error::{quoted, Result};

/// Whether `text` is an MCell file (its first line starts `#MCell`).
pub(super) fn is_mcell(text: &[u8]) -> bool {
    text.trim_ascii_start().starts_with(b"#MCell")
}

/// The RLE that MCell file `text` (read from `path`) stands for, with the same lines: the line
/// before the first `#L` becomes the RLE header, `#L` lines their cells, every other line a
/// comment (before the cells) or blank (among them).
pub(super) fn to_rle(path: &Path, text: &[u8]) -> Result<Vec<u8>> {
    let text = String::from_utf8_lossy(text);
    let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
    let (mut game, mut rules, mut golly) = (None, Vec::new(), None);
    let (mut board, mut wrap) = (None, false);
    let mut first_cells = None;
    for (i, line) in lines.iter().enumerate() {
        let number = i + 1;
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        let value = value.trim();
        match key {
            "#GAME" => game = Some(value),
            "#RULE" => rules.push(value),
            "#GOLLY" => golly = Some(value),
            "#BOARD" => {
                let size = value.split_once(['x', 'X']).and_then(|(w, h)| {
                    Some((
                        w.trim().parse::<usize>().ok()?,
                        h.trim().parse::<usize>().ok()?,
                    ))
                });
                board = Some(size.filter(|&(w, h)| w > 0 && h > 0).ok_or_else(|| {
                    parse_error(
                        path,
                        number,
                        format!("#BOARD takes WIDTHxHEIGHT, not {}", quoted(value)),
                    )
                })?);
            }
            "#WRAP" => wrap = value == "1",
            "#L" => {
                first_cells.get_or_insert(i);
            }
            _ => {}
        }
    }
    let Some(first) = first_cells else {
        return Err(parse_error(
            path,
            lines.len().max(1),
            "an MCell file with no #L lines of cells",
        ));
    };
    if first == 0 {
        return Err(parse_error(path, 1, "an MCell file starts with #MCell"));
    }
    let rule = match (golly, game) {
        (Some(name), _) => name.to_string(),
        (None, Some("Generations" | "Life" | "Larger than Life")) => rules.concat(),
        (None, game) => {
            return Err(parse_error(
                path,
                1,
                format!(
                    "MCell's game {} has no rule gol runs (Life, Generations and Larger than Life do, and any file with a #GOLLY line naming Golly's rule)",
                    quoted(game.unwrap_or("(none given)"))
                ),
            ))
        }
    };
    let rule = match board {
        Some((w, h)) => format!("{rule}:{}{w},{h}", if wrap { 'T' } else { 'P' }),
        None => rule,
    };
    // The cells' extent, as the RLE header gives it.
    let (mut x, mut y, mut width, mut count) = (0usize, 0usize, 0usize, 0usize);
    let mut last_row_used = false;
    for line in lines.iter().filter_map(|l| l.strip_prefix("#L")) {
        for c in line.trim().bytes() {
            match c {
                b'0'..=b'9' => count = count.saturating_mul(10).saturating_add((c - b'0') as usize),
                b'$' => {
                    y = y.saturating_add(count.max(1));
                    (x, count, last_row_used) = (0, 0, false);
                }
                b'p'..=b'y' => {}
                _ => {
                    x = x.saturating_add(count.max(1));
                    width = width.max(x);
                    count = 0;
                    last_row_used = true;
                }
            }
        }
    }
    let height = if last_row_used { y + 1 } else { y.max(1) };
    let mut out = String::with_capacity(text.len() + 64);
    for (i, line) in lines.iter().enumerate() {
        if i + 1 == first {
            out.push_str(&format!(
                "x = {}, y = {height}, rule = {rule}",
                width.max(1)
            ));
        } else if let Some(cells) = line.strip_prefix("#L") {
            out.push_str(cells.trim());
        } else if i < first {
            out.push('#');
        }
        out.push('\n');
    }
    out.push_str("!\n");
    Ok(out.into_bytes())
}

#[cfg(test)]
mod test {
    use super::*;

    fn rle(text: &str) -> String {
        String::from_utf8(to_rle(Path::new("t.mcl"), text.as_bytes()).unwrap()).unwrap()
    }

    #[test]
    fn games_boards_and_cells_become_rle_line_for_line() {
        let wired = "#MCell 4.00\r\n#GAME Rules table\r\n#GOLLY WireWorld\r\n#RULE 1,0,0\r\n#BOARD 60x40\r\n#WRAP 0\r\n#D note\r\n#L 2.A$C\r\n#L 3$BC\r\n";
        assert_eq!(
            rle(wired),
            "#\n#\n#\n#\n#\n#\nx = 3, y = 5, rule = WireWorld:P60,40\n2.A$C\n3$BC\n!\n"
        );
        let wrapped =
            "#MCell 4.00\n#GAME Generations\n#RULE 345/2/4\n#BOARD 30x20\n#WRAP 1\n#L A$\n";
        assert!(rle(wrapped).contains("x = 1, y = 1, rule = 345/2/4:T30,20\nA$\n!"));
        let unbounded = "#MCell 4.00\n#GAME Life\n#RULE 23/3\n#L 12A\n";
        assert!(rle(unbounded).contains("x = 12, y = 1, rule = 23/3\n"));
    }

    #[test]
    fn files_gol_cannot_run_are_refused_naming_the_line() {
        for (text, says) in [
            (
                "#MCell 4.00\n#GAME Cyclic CA\n#L A\n",
                "game \"Cyclic CA\" has no rule",
            ),
            ("#MCell 4.00\n#GAME Life\n#RULE 23/3\n", "no #L lines"),
            (
                "#MCell 4.00\n#BOARD 10by10\n#L A\n",
                "t.mcl:2: #BOARD takes",
            ),
        ] {
            let err = to_rle(Path::new("t.mcl"), text.as_bytes())
                .unwrap_err()
                .to_string();
            assert!(err.contains(says), "{text:?}: {err}");
        }
    }
}
