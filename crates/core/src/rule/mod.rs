//! Two-state rules in B/S notation: outer-totalistic (Life-like) rules of the Moore, hexagonal
//! and von Neumann neighbourhoods, and isotropic non-totalistic rules in Hensel's notation.
//!
//! A rule is two sets of neighbour counts: `birth` (a dead cell becomes alive) and `survive` (a
//! live cell stays alive). Counts go up to 26 so that the same type serves 3D rules; a 2D engine
//! checks with [`Rule::check_neighbours`] that no count exceeds 8. An isotropic non-totalistic
//! rule also names, for some counts, which arrangements of the live neighbours count
//! ([`hensel`]); a hexagonal or von Neumann rule counts only part of the 3×3 square
//! ([`Neighbourhood`]). Those are 2D rules, which only some engines run
//! ([`Rule::check_engine`]); [`Rule::next_cells`] gives any 2D rule's next state of a
//! neighbourhood, and [`circuit`] turns it into logic for the bit-sliced engines.
//!
//! Accepted spellings (case-insensitive, whitespace ignored):
//! - `B3/S23`, `S23/B3`, `B3S23`, `b36/s23`, `B2/S`, `B0123/S` …: each count a single digit;
//! - `B6/S5-7,10,12-14`: a list that holds a comma or a hyphen is read as comma-separated
//!   numbers and ranges (write a lone count of 10 or more as `10-10` or `10,`);
//! - `23/3`: the older survival/birth digits notation used in old RLE files;
//! - `B2-a/S12`, `B2ce3aeijnqry4n/S1e2-a3ae4ejqt`: Hensel's letters after a count keep only
//!   those arrangements, and after a `-` all but those (Golly's notation);
//! - `B2/S34H`, `B2/S013V`: Golly's hexagonal and von Neumann suffixes;
//! - `Life`: B3/S23;
//! - any of those followed by Golly's bounded-grid suffix `:T` (a torus, the default) or `:P`
//!   (a bounded plane), with or without a size ([`topology`]; [`Rule::parse_sized`] keeps the
//!   size).

pub mod circuit;
pub mod hensel;
mod hutton;
pub mod jvn;
pub mod larger;
pub mod table;
pub mod topology;

use std::fmt;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::str::FromStr;

use crate::engine::EngineId;
use crate::error::{Error, Result};
pub use larger::Larger;
pub use table::RuleTable;
pub use topology::Topology;

/// The cells of the 3×3 square whose live cells a rule counts (bit `3r + c` the cell in row
/// `r`, column `c`; the centre, bit 4, is never counted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Neighbourhood {
    /// All eight neighbours.
    #[default]
    Moore,
    /// Golly's hexagonal neighbourhood: the square without its north-east and south-west
    /// corners (a hexagonal grid drawn as a sheared square grid).
    Hexagonal,
    /// The four orthogonal neighbours.
    VonNeumann,
}

impl Neighbourhood {
    /// The counted cells as a 9-bit mask.
    pub const fn mask(self) -> u16 {
        match self {
            Neighbourhood::Moore => 0b111_101_111,
            Neighbourhood::Hexagonal => 0b110_101_011,
            Neighbourhood::VonNeumann => 0b010_101_010,
        }
    }

    /// How many cells are counted.
    pub const fn size(self) -> u32 {
        self.mask().count_ones()
    }

    /// The neighbourhood's name, for messages.
    const fn name(self) -> &'static str {
        match self {
            Neighbourhood::Moore => "Moore",
            Neighbourhood::Hexagonal => "hexagonal",
            Neighbourhood::VonNeumann => "von Neumann",
        }
    }

    /// Golly's suffix for the neighbourhood (`H`, `V`; none for Moore).
    const fn suffix(self) -> &'static str {
        match self {
            Neighbourhood::Moore => "",
            Neighbourhood::Hexagonal => "H",
            Neighbourhood::VonNeumann => "V",
        }
    }
}

/// The highest neighbour count a rule may mention (3D Moore neighbourhood).
pub const MAX_COUNT: u32 = 26;

/// A two-state rule: outer totalistic over a [`Neighbourhood`], or isotropic non-totalistic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    /// Bit `k` set: some dead cells with `k` live neighbours are born.
    birth: u32,
    /// Bit `k` set: some live cells with `k` live neighbours survive.
    survive: u32,
    neighbourhood: Neighbourhood,
    /// For an isotropic non-totalistic rule, the arrangements that count, for births (`[0]`)
    /// and survivals (`[1]`), per count: bit `i` set for the `i`-th of
    /// [`hensel::LETTERS`]`[count]`. A count's entry is 0 where its bit in `birth` or
    /// `survive` is clear, [`hensel::all_letters`] where every arrangement counts. `None` for
    /// outer-totalistic rules, and for rules whose every count takes all arrangements or none.
    letters: Option<[[u16; 9]; 2]>,
    /// What lies past a 2D grid's edges.
    topology: Topology,
    /// Cell states: 2 for a two-state rule; `C` > 2 for a Generations rule, whose live cells
    /// (state 1) that do not survive pass through the dying states 2 to `C - 1` and then die,
    /// and whose dying cells neither count as neighbours nor can be born.
    states: u16,
    /// A rule table ([`table`]): the next state is its function of the neighbourhood, and the
    /// fields above other than `topology` and `states` are unused.
    table: Option<TableRef>,
    /// A Larger than Life rule ([`larger`]): its neighbourhood and counts; `states` its number
    /// of states, and the fields above other than `topology` unused.
    larger: Option<Larger>,
}

/// A rule table kept for the whole process ([`table::intern`]), so compared by identity.
#[derive(Clone, Copy)]
struct TableRef(&'static RuleTable);

impl PartialEq for TableRef {
    fn eq(&self, other: &TableRef) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for TableRef {}

impl Hash for TableRef {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::ptr::hash(self.0, state)
    }
}

impl fmt::Debug for TableRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Rule {
    /// Conway's Life, B3/S23: the 2D default.
    pub const LIFE: Rule = Rule {
        birth: 1 << 3,
        survive: (1 << 2) | (1 << 3),
        neighbourhood: Neighbourhood::Moore,
        letters: None,
        topology: Topology::Torus,
        states: 2,
        table: None,
        larger: None,
    };

    /// B6/S567: the 3D default.
    pub const LIFE_3D: Rule = Rule {
        birth: 1 << 6,
        survive: (1 << 5) | (1 << 6) | (1 << 7),
        neighbourhood: Neighbourhood::Moore,
        letters: None,
        topology: Topology::Torus,
        states: 2,
        table: None,
        larger: None,
    };

    /// Builds a rule from bit masks (bit `k` set: count `k` is in the set).
    ///
    /// Fails if a mask holds a count above [`MAX_COUNT`].
    pub fn from_masks(birth: u32, survive: u32) -> Result<Rule> {
        let rule = Rule {
            birth,
            survive,
            neighbourhood: Neighbourhood::Moore,
            letters: None,
            topology: Topology::Torus,
            states: 2,
            table: None,
            larger: None,
        };
        if (birth | survive) >> (MAX_COUNT + 1) != 0 {
            return Err(Error::Rule {
                rule: format!("{birth:#x}/{survive:#x}"),
                reason: format!("counts above {MAX_COUNT} cannot occur"),
            });
        }
        Ok(rule)
    }

    /// The outer-totalistic rule of `neighbourhood` with those count masks (bit `k` set: count
    /// `k` is in the set); fails where a count exceeds the neighbourhood (Moore: [`MAX_COUNT`],
    /// for 3D rules).
    pub fn outer_totalistic(
        neighbourhood: Neighbourhood,
        birth: u32,
        survive: u32,
    ) -> Result<Rule> {
        let rule = Rule {
            neighbourhood,
            ..Rule::from_masks(birth, survive)?
        };
        let highest = 31 - (birth | survive | 1).leading_zeros();
        if neighbourhood != Neighbourhood::Moore && highest > neighbourhood.size() {
            return Err(Error::Rule {
                rule: rule.to_string(),
                reason: format!(
                    "it mentions {highest} neighbours, but the {} neighbourhood has {}",
                    neighbourhood.name(),
                    neighbourhood.size()
                ),
            });
        }
        Ok(rule)
    }

    /// The isotropic non-totalistic rule whose births and survivals take, for each count `k`
    /// (0 to 8), the arrangements of the letters in `birth[k]` and `survive[k]` (bit `i` set:
    /// the `i`-th of [`hensel::LETTERS`]`[k]`; bit 0 stands for the one arrangement of counts 0
    /// and 8; other bits are ignored).
    pub fn isotropic(birth: [u16; 9], survive: [u16; 9]) -> Rule {
        let keep = |sets: [u16; 9]| -> [u16; 9] {
            std::array::from_fn(|k| sets[k] & hensel::all_letters(k))
        };
        Rule::with_letters(
            0,
            0,
            Neighbourhood::Moore,
            Some([keep(birth), keep(survive)]),
        )
    }

    /// A random 2D rule of `family`, its bits drawn from `next` (for tests and `gol verify`):
    /// any counts the neighbourhood has, and for isotropic rules any letters.
    pub fn random(family: Family, next: &mut dyn FnMut() -> u64) -> Rule {
        let mut counts = |size: u32| (next() & ((1 << (size + 1)) - 1)) as u32;
        let (neighbourhood, size) = match family {
            Family::OuterTotalistic => (Neighbourhood::Moore, 8),
            Family::Hexagonal => (Neighbourhood::Hexagonal, 6),
            Family::VonNeumann => (Neighbourhood::VonNeumann, 4),
            Family::Isotropic => {
                let mut sets = || -> [u16; 9] { std::array::from_fn(|_| next() as u16) };
                return Rule::isotropic(sets(), sets());
            }
        };
        let (birth, survive) = (counts(size), counts(size));
        Rule::outer_totalistic(neighbourhood, birth, survive)
            .expect("counts within the neighbourhood")
    }

    /// Parses B/S notation (see the module documentation). A bounded-grid suffix may name the
    /// topology but not a size, which belongs to the grid ([`Rule::parse_sized`] keeps it).
    pub fn parse(text: &str) -> Result<Rule> {
        Rule::parse_in(text, None)
    }

    /// [`Rule::parse`] for a pattern file in folder `near`, where a rule table it names is also
    /// looked for ([`table::find`]).
    pub fn parse_in(text: &str, near: Option<&Path>) -> Result<Rule> {
        let (rule, size) = Rule::parse_sized_in(text, near)?;
        if let (Some((w, h)), None) = (size, rule.topology.size()) {
            return Err(Error::Rule {
                rule: text.trim().to_string(),
                reason: format!(
                    "the size {w}x{h} belongs to the grid, not the rule: write :{} and give the grid its size apart from the rule",
                    rule.topology.letter()
                ),
            });
        }
        Ok(rule)
    }

    /// Parses a rule with Golly's optional bounded-grid suffix (`B3/S23:P64,48`), as pattern
    /// files give it: the rule, with the suffix's topology, and the suffix's size if it has one.
    pub fn parse_sized(text: &str) -> Result<(Rule, Option<(usize, usize)>)> {
        Rule::parse_sized_in(text, None)
    }

    /// [`Rule::parse_sized`] for a pattern file in folder `near`, where a rule table it names
    /// is also looked for ([`table::find`]).
    pub fn parse_sized_in(
        text: &str,
        near: Option<&Path>,
    ) -> Result<(Rule, Option<(usize, usize)>)> {
        let (rule, suffix) = match text.split_once(':') {
            Some((rule, suffix)) => (rule, Some(suffix)),
            None => (text, None),
        };
        let rule = Rule::parse_named(rule, near)?;
        let Some(suffix) = suffix else {
            return Ok((rule, None));
        };
        let (topology, size) = topology::parse_suffix(suffix).map_err(|reason| Error::Rule {
            rule: text.trim().to_string(),
            reason,
        })?;
        Ok((rule.on(topology), size))
    }

    /// Parses B/S notation or a rule table's name ([`table::find`], in `near` too) without a
    /// bounded-grid suffix.
    fn parse_named(text: &str, near: Option<&Path>) -> Result<Rule> {
        let compact: String = text
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        match Larger::parse(&compact) {
            Some(Ok((larger, states))) => return Ok(Rule::from_larger(larger, states)),
            Some(Err(reason)) => {
                return Err(Error::Rule {
                    rule: text.to_string(),
                    reason,
                })
            }
            None => {}
        }
        if let Some(table) = jvn::table(&compact) {
            return Ok(Rule::from_table(table));
        }
        if let Some(digits) = compact.strip_prefix('w') {
            if !digits.is_empty() && digits.len() <= 3 && digits.bytes().all(|b| b.is_ascii_digit())
            {
                let table = table::wolfram(digits.parse().expect("three digits")).map_err(|e| {
                    Error::Rule {
                        rule: text.to_string(),
                        reason: e.to_string(),
                    }
                })?;
                return Ok(Rule::from_table(table));
            }
        }
        let notation = match Rule::parse_counts(text) {
            Err(Error::Rule { reason, .. }) => reason,
            parsed => return parsed,
        };
        let name = text.trim();
        if !table::is_name(name) {
            return Err(Error::Rule {
                rule: text.to_string(),
                reason: notation,
            });
        }
        if let Some(found) = table::find(name, near)? {
            return Ok(Rule::from_table(found));
        }
        let folders: Vec<String> = table::folders(near)
            .iter()
            .map(|f| f.display().to_string())
            .collect();
        Err(Error::Rule {
            rule: text.to_string(),
            reason: format!(
                "no rule table {name}.rule in {} (--rules DIR adds a folder), and not B/S notation: {notation}",
                folders.join(", ")
            ),
        })
    }

    /// No births and no survivals on a torus: what rule tables and Larger than Life rules
    /// leave of the B/S fields, which they do not use.
    const NO_COUNTS: Rule = Rule {
        birth: 0,
        survive: 0,
        neighbourhood: Neighbourhood::Moore,
        letters: None,
        topology: Topology::Torus,
        states: 2,
        table: None,
        larger: None,
    };

    /// The rule of a rule table, on a torus.
    pub fn from_table(table: &'static RuleTable) -> Rule {
        Rule {
            states: table.states() as u16,
            table: Some(TableRef(table)),
            ..Rule::NO_COUNTS
        }
    }

    /// The Larger than Life rule `larger` of `states` states (2 to 256), on a torus.
    pub fn from_larger(larger: Larger, states: u32) -> Rule {
        Rule {
            states: states.clamp(2, MAX_STATES) as u16,
            larger: Some(larger),
            ..Rule::NO_COUNTS
        }
    }

    /// The Larger than Life rule this is, if it is one.
    pub fn larger(&self) -> Option<Larger> {
        self.larger
    }

    /// The rule table the rule is, if it is one.
    pub fn rule_table(&self) -> Option<&'static RuleTable> {
        self.table.map(|t| t.0)
    }

    /// Parses B/S notation without a bounded-grid suffix.
    fn parse_counts(text: &str) -> Result<Rule> {
        let fail = |reason: String| Error::Rule {
            rule: text.to_string(),
            reason,
        };
        let mut compact: String = text
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        if compact.is_empty() {
            return Err(fail("the rule is empty".into()));
        }
        if compact == "life" || compact == "conway" {
            return Ok(Rule::LIFE);
        }
        let neighbourhood = match compact.pop() {
            Some('h') => Neighbourhood::Hexagonal,
            Some('v') => Neighbourhood::VonNeumann,
            Some(last) => {
                compact.push(last);
                Neighbourhood::Moore
            }
            None => unreachable!("the rule is not empty"),
        };
        let (compact, states) = split_states(&compact).map_err(fail)?;
        let rule = Rule::parse_two_state(text, &compact, neighbourhood)?;
        rule.with_states(states).map_err(|e| match e {
            Error::Rule { reason, .. } => fail(reason),
            other => other,
        })
    }

    /// Parses B/S notation (lower case, no whitespace, no neighbourhood suffix or number of
    /// states) for a rule of `neighbourhood`; `text` is the rule as given, for messages.
    fn parse_two_state(text: &str, compact: &str, neighbourhood: Neighbourhood) -> Result<Rule> {
        let fail = |reason: String| Error::Rule {
            rule: text.to_string(),
            reason,
        };
        let (birth, survive) = if compact.starts_with('b') || compact.starts_with('s') {
            split_letters(compact).map_err(fail)?
        } else if let Some((s, b)) = compact.split_once('/') {
            // Old notation: survival counts, a slash, birth counts.
            (b, s)
        } else {
            return Err(fail(
                "expected B/S notation such as B3/S23 (or S/B digits such as 23/3, or a Generations rule such as 345/2/4 or B2/S/C3)".into(),
            ));
        };
        let birth = parse_list(birth).map_err(|r| fail(format!("birth list: {r}")))?;
        let survive = parse_list(survive).map_err(|r| fail(format!("survival list: {r}")))?;
        if neighbourhood != Neighbourhood::Moore {
            if birth.1.is_some() || survive.1.is_some() {
                return Err(fail(
                    "Hensel's letters go with the Moore neighbourhood only".into(),
                ));
            }
            return Rule::outer_totalistic(neighbourhood, birth.0, survive.0).map_err(
                |e| match e {
                    Error::Rule { reason, .. } => fail(reason),
                    other => other,
                },
            );
        }
        let letters = match (birth.1, survive.1) {
            (None, None) => None,
            (b, s) => {
                let sets = |(mask, sets): (u32, Option<[u16; 9]>)| match sets {
                    Some(sets) => Ok(sets),
                    None if mask >> 9 != 0 => Err(fail(
                        "a rule with Hensel's letters counts at most 8 neighbours".into(),
                    )),
                    None => Ok(std::array::from_fn(|k| {
                        if mask >> k & 1 == 1 {
                            hensel::all_letters(k)
                        } else {
                            0
                        }
                    })),
                };
                Some([sets((birth.0, b))?, sets((survive.0, s))?])
            }
        };
        Ok(Rule::with_letters(
            birth.0,
            survive.0,
            neighbourhood,
            letters,
        ))
    }

    /// The rule of those counts and letters, with `letters` dropped where every count takes
    /// all arrangements or none (an outer-totalistic rule).
    fn with_letters(
        birth: u32,
        survive: u32,
        neighbourhood: Neighbourhood,
        letters: Option<[[u16; 9]; 2]>,
    ) -> Rule {
        let Some(sets) = letters else {
            return Rule {
                birth,
                survive,
                neighbourhood,
                letters: None,
                topology: Topology::Torus,
                states: 2,
                table: None,
                larger: None,
            };
        };
        let mask = |sets: &[u16; 9]| {
            (0..9)
                .filter(|&k| sets[k] != 0)
                .fold(0u32, |m, k| m | 1 << k)
        };
        let partial = sets
            .iter()
            .flatten()
            .enumerate()
            .any(|(i, &set)| set != 0 && set != hensel::all_letters(i % 9));
        Rule {
            birth: mask(&sets[0]),
            survive: mask(&sets[1]),
            neighbourhood,
            letters: partial.then_some(sets),
            topology: Topology::Torus,
            states: 2,
            table: None,
            larger: None,
        }
    }

    /// The number of cell states: 2, or more for a Generations rule.
    pub const fn states(&self) -> u32 {
        self.states as u32
    }

    /// Whether the rule is a Generations rule (more than two states, not a rule table).
    pub const fn is_generations(&self) -> bool {
        self.states > 2 && self.table.is_none() && self.larger.is_none()
    }

    /// Whether cells have more than two states (a Generations rule, or a rule table of more).
    pub const fn is_multi_state(&self) -> bool {
        self.states > 2
    }

    /// The next state of the cell at the centre of `around` (states of a 3×3 square, rows top
    /// to bottom): the rule on any neighbourhood, for every family but Larger than Life
    /// ([`larger::step`]).
    #[inline]
    pub fn next_of(&self, around: &[[u8; 3]; 3]) -> u8 {
        debug_assert!(
            self.larger.is_none(),
            "a Larger than Life rule reaches beyond 3x3"
        );
        if let Some(table) = self.table {
            return table.0.next(around);
        }
        let mut cells = 0u16;
        for (r, row) in around.iter().enumerate() {
            for (c, &state) in row.iter().enumerate() {
                cells |= ((state == 1) as u16) << (3 * r + c);
            }
        }
        let lives = self.next_cells(cells);
        match self.is_generations() {
            true => self.next_state(around[1][1], lives),
            false => lives as u8,
        }
    }

    /// The same births and survivals with `states` cell states (2 to [`MAX_STATES`]): a
    /// Generations rule for more than two. Generations rules are 2D rules; a 3D world refuses
    /// them ([`Rule::check_neighbours`]).
    pub fn with_states(self, states: u32) -> Result<Rule> {
        if !(2..=MAX_STATES).contains(&states) {
            return Err(Error::Rule {
                rule: self.to_string(),
                reason: format!("a rule has 2 to {MAX_STATES} states, not {states}"),
            });
        }
        Ok(Rule {
            states: states as u16,
            ..self
        })
    }

    /// The next state of a cell in `state` (0 to [`Rule::states`] − 1) whose fate as a
    /// two-state cell would be `lives` ([`Rule::next_cells`] with the cell alive only in state
    /// 1): a dead cell is born where it lives, a live one stays alive where it lives and
    /// starts dying (state 2, or 0 under a two-state rule) where it does not, and a dying cell
    /// goes on to the next state, the last one back to 0.
    #[inline]
    pub fn next_state(&self, state: u8, lives: bool) -> u8 {
        let next = match (state, lives) {
            (0 | 1, true) => 1,
            (0, false) => 0,
            // In u16: the last of 256 states, 255, goes on to 256, that is back to 0.
            (dying, _) => dying as u16 + 1,
        };
        if next >= self.states {
            0
        } else {
            next as u8
        }
    }

    /// Which family the rule belongs to.
    pub fn family(&self) -> Family {
        match (self.neighbourhood, self.letters) {
            (_, Some(_)) => Family::Isotropic,
            (Neighbourhood::Moore, None) => Family::OuterTotalistic,
            (Neighbourhood::Hexagonal, None) => Family::Hexagonal,
            (Neighbourhood::VonNeumann, None) => Family::VonNeumann,
        }
    }

    /// The cells the rule counts.
    pub const fn neighbourhood(&self) -> Neighbourhood {
        self.neighbourhood
    }

    /// What lies past the grid's edges.
    pub const fn topology(&self) -> Topology {
        self.topology
    }

    /// The same rule on `topology`.
    pub const fn on(self, topology: Topology) -> Rule {
        Rule { topology, ..self }
    }

    /// The rule with Golly's bounded-grid suffix for a `width` × `height` grid, as pattern
    /// files write it: `B3/S23:T64,48`, `B3/S23:P64,48`.
    pub fn sized(&self, width: usize, height: usize) -> String {
        if let Topology::Surface(surface) = self.topology {
            return format!("{}:{}", self.on(Topology::Torus), surface.suffix());
        }
        format!(
            "{}:{}{width},{height}",
            self.on(Topology::Torus),
            self.topology.letter()
        )
    }

    /// The next state of the centre of a 3×3 neighbourhood (bit `3r + c` the cell in row `r`,
    /// column `c`; the centre at bit 4), for every 2D rule.
    #[inline]
    pub fn next_cells(&self, cells: u16) -> bool {
        let alive = cells >> 4 & 1 == 1;
        let around = cells & self.neighbourhood.mask();
        let count = around.count_ones();
        if !self.next(alive, count) {
            return false;
        }
        match &self.letters {
            None => true,
            Some(sets) => {
                sets[alive as usize][count as usize] >> hensel::letter_index(around) & 1 == 1
            }
        }
    }

    /// The colours the rule gives its states (a rule table's `@COLORS`), if it gives any.
    pub fn colours(&self) -> Option<&'static crate::picture::StateColours> {
        self.rule_table().and_then(RuleTable::colours)
    }

    /// Whether a two-state rule of B/S notation gives birth on 0 live neighbours (B0): a dead
    /// background turns alive.
    pub fn births_on_nothing(&self) -> bool {
        self.is_complementable() && self.next_cells(0)
    }

    /// Whether a two-state rule of B/S notation keeps a live cell whose every neighbour is
    /// alive (S8, S6 on the hexagonal grid, S4 on von Neumann's): a live background stays so.
    pub fn survives_in_everything(&self) -> bool {
        self.is_complementable() && self.next_cells(0x1ff)
    }

    /// Whether the rule is two-state, of B/S notation: what [`Rule::complemented`] turns.
    fn is_complementable(&self) -> bool {
        !self.is_multi_state() && self.table.is_none() && self.larger.is_none()
    }

    /// For Golly's emulation of B0 rules on an unbounded grid, where the cells are kept
    /// complemented whenever the background is alive: the two-state rule that takes cells kept
    /// complemented or not (`invert_now`) to the next generation's, kept complemented or not
    /// (`invert_next`). It is `x ↦ ¬? R(¬? x)`, a rule of the same family and neighbourhood
    /// (on the same topology) that has no B0 whenever `invert_next` is the background's next
    /// state. `None` for Generations rules, rule tables and Larger than Life rules.
    pub fn complemented(&self, invert_now: bool, invert_next: bool) -> Option<Rule> {
        if !self.is_complementable() {
            return None;
        }
        let mask = self.neighbourhood.mask() | 1 << 4;
        let next = |cells: u16| {
            let seen = if invert_now { !cells & mask } else { cells };
            self.next_cells(seen) != invert_next
        };
        let rule = match self.letters {
            None => {
                let size = self.neighbourhood.size();
                // A cell and `n` live neighbours kept complemented is a cell of the other
                // state with `size - n` of them.
                let set = |alive: bool| {
                    (0..=size).fold(0u32, |m, n| {
                        let real = if invert_now { size - n } else { n };
                        let value = self.next(alive != invert_now, real) != invert_next;
                        m | (value as u32) << n
                    })
                };
                Rule::outer_totalistic(self.neighbourhood, set(false), set(true))
                    .expect("counts within the neighbourhood")
            }
            Some(_) => {
                let mut sets = [[0u16; 9]; 2];
                for around in (0..512u16).filter(|c| c & 1 << 4 == 0) {
                    let count = around.count_ones() as usize;
                    for alive in [false, true] {
                        if next(around | (alive as u16) << 4) {
                            sets[alive as usize][count] |= 1 << hensel::letter_index(around);
                        }
                    }
                }
                Rule::isotropic(sets[0], sets[1])
            }
        };
        Some(rule.on(self.topology))
    }

    /// Bit `k` set: a dead cell with `k` live neighbours is born.
    pub const fn birth_mask(&self) -> u32 {
        self.birth
    }

    /// Bit `k` set: a live cell with `k` live neighbours survives.
    pub const fn survive_mask(&self) -> u32 {
        self.survive
    }

    /// The next state of a cell that is `alive` now and has `neighbours` live neighbours,
    /// under an outer-totalistic rule (under an isotropic one: whether some arrangement of that
    /// count gives a live cell; [`Rule::next_cells`] decides).
    #[inline]
    pub fn next(&self, alive: bool, neighbours: u32) -> bool {
        let set = if alive { self.survive } else { self.birth };
        (set >> neighbours) & 1 != 0
    }

    /// The rule's table indexed `[state][count]`, as Kurnosov's seminar's `states[2][9]` (docs/lineage.md) (for 2D) and
    /// its 3D counterpart: `table[0]` for dead cells, `table[1]` for live ones.
    pub fn table(&self) -> [[u8; MAX_COUNT as usize + 1]; 2] {
        let mut table = [[0u8; MAX_COUNT as usize + 1]; 2];
        for n in 0..=MAX_COUNT {
            table[0][n as usize] = self.next(false, n) as u8;
            table[1][n as usize] = self.next(true, n) as u8;
        }
        table
    }

    /// Checks that every count the rule mentions can occur with `neighbours` neighbours
    /// (8 in 2D, 26 in 3D).
    pub fn check_neighbours(&self, neighbours: u32) -> Result<()> {
        if neighbours != 8 && (self.table.is_some() || self.larger.is_some()) {
            let what = match self.table {
                Some(_) => "rule tables",
                None => "Larger than Life rules",
            };
            return Err(Error::Rule {
                rule: self.to_string(),
                reason: format!("{what} are 2D rules; cells here have {neighbours} neighbours"),
            });
        }
        if neighbours != 8 && self.topology != Topology::Torus {
            return Err(Error::Rule {
                rule: self.to_string(),
                reason: format!(
                    "a {} is 2D; cells here have {neighbours} neighbours",
                    self.topology.name()
                ),
            });
        }
        if neighbours != 8 && self.family() != Family::OuterTotalistic {
            return Err(Error::Rule {
                rule: self.to_string(),
                reason: format!(
                    "{} rules are 2D rules; cells here have {neighbours} neighbours",
                    self.family().name()
                ),
            });
        }
        if neighbours != 8 && self.is_generations() {
            return Err(Error::Rule {
                rule: self.to_string(),
                reason: format!(
                    "Generations rules are 2D rules; cells here have {neighbours} neighbours"
                ),
            });
        }
        let highest = 31 - (self.birth | self.survive | 1).leading_zeros();
        if highest > neighbours {
            return Err(Error::Rule {
                rule: self.to_string(),
                reason: format!(
                    "it mentions {highest} neighbours, but a cell here has only {neighbours}"
                ),
            });
        }
        Ok(())
    }
}

impl Rule {
    /// Checks that `engine` runs the rule in a world whose cells have `neighbours` neighbours
    /// ([`Rule::check_neighbours`]): outer-totalistic Moore rules run everywhere, the other 2D
    /// families only on the engines of [`Family::ENGINES`]. The refusal names those.
    pub fn check_engine(&self, engine: EngineId, neighbours: u32) -> Result<()> {
        self.check_neighbours(neighbours)?;
        if self.larger.is_some() && !LARGER_ENGINES.contains(&engine) {
            return Err(Error::Rule {
                rule: self.to_string(),
                reason: format!(
                    "{engine} does not run Larger than Life rules; they run on cpu-states, cuda-states and cpu-scalar (grids) and window (the infinite plane)"
                ),
            });
        }
        if self.table.is_some() && !TABLE_ENGINES.contains(&engine) {
            return Err(Error::Rule {
                rule: self.to_string(),
                reason: format!(
                    "{engine} does not run rule tables; they run on cpu-states, cuda-states and cpu-scalar (grids) and hashlife (the infinite plane)"
                ),
            });
        }
        if engine == EngineId::CudaStates && self.table.is_some_and(|t| t.0.tree().is_none()) {
            return Err(Error::Rule {
                rule: self.to_string(),
                reason: "its table's tree is too large to build, and cuda-states runs trees; the table's transitions run on cpu-states and cpu-scalar (grids) and hashlife (the infinite plane)".into(),
            });
        }
        if let Topology::Strip(_) = self.topology {
            if !engine.on_plane() {
                return Err(Error::Rule {
                    rule: self.to_string(),
                    reason: format!(
                        "a {} is infinite one way: no grid holds it, and {engine} runs grids; it runs on the infinite plane (window)",
                        self.topology.name()
                    ),
                });
            }
        }
        if let Topology::Surface(_) = self.topology {
            let runs = engine == EngineId::CpuScalar
                || (engine == EngineId::CpuStates && self.table.is_some())
                || (engine == EngineId::CpuBitsliced && !self.is_multi_state());
            if self.larger.is_some() || !runs {
                return Err(Error::Rule {
                    rule: self.to_string(),
                    reason: format!(
                        "{engine} does not run a {}; Golly's grids other than tori and bounded planes run on cpu-scalar, two-state B/S rules on them on cpu-bitsliced too, and rule tables on cpu-states (not Larger than Life rules)",
                        self.topology.name()
                    ),
                });
            }
        }
        if STATES_ENGINES.contains(&engine) && self.table.is_none() && self.larger.is_none() {
            return Err(Error::Rule {
                rule: self.to_string(),
                reason: format!(
                    "{engine} runs only rule tables and Larger than Life rules; this rule runs on cpu-bitsliced"
                ),
            });
        }
        let family = self.family();
        if family != Family::OuterTotalistic && !Family::ENGINES.contains(&engine) {
            let names: Vec<&str> = Family::ENGINES.iter().map(|id| id.name()).collect();
            return Err(Error::Rule {
                rule: self.to_string(),
                reason: format!(
                    "{engine} runs only outer-totalistic Moore rules; {} rules run on {}",
                    family.name(),
                    names.join(", ")
                ),
            });
        }
        if self.is_generations() && !GENERATIONS_ENGINES.contains(&engine) {
            let names: Vec<&str> = GENERATIONS_ENGINES.iter().map(|id| id.name()).collect();
            return Err(Error::Rule {
                rule: self.to_string(),
                reason: format!(
                    "{engine} runs only two-state rules; Generations rules run on {}",
                    names.join(", ")
                ),
            });
        }
        Ok(())
    }
}

impl Rule {
    /// Refuses a `width` × `height` grid under a topology that carries its own size (one of
    /// Golly's other bounded grids) of another size.
    pub fn check_grid(&self, width: usize, height: usize) -> Result<()> {
        match self.topology.size() {
            Some(size) if size != (width, height) => Err(Error::Rule {
                rule: self.to_string(),
                reason: format!(
                    "the {} is {}x{}, the grid {width}x{height}",
                    self.topology.name(),
                    size.0,
                    size.1
                ),
            }),
            _ => Ok(()),
        }
    }

    /// Refuses to run a grid of `states` cell states ([`crate::Grid::states`]) under the rule:
    /// a grid of dying cells needs a Generations rule of the same number of states (a
    /// two-state grid runs under any rule).
    pub fn check_states(&self, states: u32) -> Result<()> {
        if states == 2 || states == self.states() {
            return Ok(());
        }
        Err(Error::Rule {
            rule: self.to_string(),
            reason: format!(
                "the rule has {} states, but the grid's cells have {states}",
                self.states()
            ),
        })
    }
}

/// The engines that run only rule tables and Larger than Life rules.
pub const STATES_ENGINES: [EngineId; 2] = [EngineId::CpuStates, EngineId::CudaStates];

/// The engines that run Larger than Life rules: the fast engines and the oracle on grids, the
/// growing window on the infinite plane.
pub const LARGER_ENGINES: [EngineId; 4] = [
    EngineId::CpuStates,
    EngineId::CudaStates,
    EngineId::CpuScalar,
    EngineId::Window,
];

/// The engines that run rule tables: the fast engines and the oracle on grids, HashLife on the
/// infinite plane.
pub const TABLE_ENGINES: [EngineId; 4] = [
    EngineId::CpuStates,
    EngineId::CudaStates,
    EngineId::CpuScalar,
    EngineId::Hashlife,
];

/// The engines that run Generations rules: the oracle, and the bit-sliced engines, which keep
/// the dying states as extra bit planes.
pub const GENERATIONS_ENGINES: [EngineId; 3] = [
    EngineId::CpuScalar,
    EngineId::CpuBitsliced,
    EngineId::CudaBitsliced,
];

/// The families of 2D rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// Life-like rules: counts of the eight Moore neighbours.
    OuterTotalistic,
    /// Isotropic non-totalistic rules (Hensel's letters).
    Isotropic,
    /// Outer-totalistic rules of the hexagonal neighbourhood.
    Hexagonal,
    /// Outer-totalistic rules of the von Neumann neighbourhood.
    VonNeumann,
}

impl Family {
    /// Every family.
    pub const ALL: [Family; 4] = [
        Family::OuterTotalistic,
        Family::Isotropic,
        Family::Hexagonal,
        Family::VonNeumann,
    ];

    /// The engines that run the families other than [`Family::OuterTotalistic`]: the oracle,
    /// and the bit-sliced engines through [`circuit`].
    pub const ENGINES: [EngineId; 3] = [
        EngineId::CpuScalar,
        EngineId::CpuBitsliced,
        EngineId::CudaBitsliced,
    ];

    /// The family's name, for messages.
    pub const fn name(self) -> &'static str {
        match self {
            Family::OuterTotalistic => "outer-totalistic",
            Family::Isotropic => "isotropic non-totalistic",
            Family::Hexagonal => "hexagonal",
            Family::VonNeumann => "von Neumann",
        }
    }
}

impl Default for Rule {
    fn default() -> Self {
        Rule::LIFE
    }
}

impl FromStr for Rule {
    type Err = Error;
    fn from_str(s: &str) -> Result<Rule> {
        Rule::parse(s)
    }
}

/// The most states a Generations rule may have (Golly's limit).
pub const MAX_STATES: u32 = 256;

/// Splits a Generations rule (lower case, no whitespace, no neighbourhood suffix) into its
/// two-state part and its number of states: Golly's `S/B/C` (`345/2/4`, `/2/3`) becomes `S/B`
/// (the older survival/birth notation) and `C`; `B…/S…/C…`, its parts in any order, becomes
/// `b…/s…` and `C`. Any other text is a two-state rule, returned whole with 2 states.
fn split_states(text: &str) -> std::result::Result<(String, u32), String> {
    let parts: Vec<&str> = text.split('/').collect();
    if parts.len() != 3 {
        return Ok((text.to_string(), 2));
    }
    let tagged = |tag: char| parts.iter().find(|p| p.starts_with(tag)).map(|p| &p[1..]);
    let (rest, states) = match (tagged('b'), tagged('s'), tagged('c')) {
        (Some(b), Some(s), Some(c)) => (format!("b{b}/s{s}"), c),
        _ if parts.iter().any(|p| p.starts_with(['b', 's', 'c'])) => {
            return Err("a Generations rule in B/S/C notation needs one B, one S and one C part, such as B2/S/C3".into())
        }
        _ => (format!("{}/{}", parts[0], parts[1]), parts[2]),
    };
    let states = match states.parse::<u32>() {
        Ok(c) if (2..=MAX_STATES).contains(&c) => c,
        _ => {
            return Err(format!(
                "{states:?} is not a number of states: a Generations rule has 2 to {MAX_STATES}"
            ))
        }
    };
    Ok((rest, states))
}

/// Splits `b…/s…`, `s…/b…` or `b…s…` (lower case, no whitespace) into the birth and survival
/// lists.
fn split_letters(text: &str) -> std::result::Result<(&str, &str), String> {
    // `/` or `_` between the parts (Golly reads both), or none; a part alone has the other
    // empty, as Golly reads B234 (B234/S).
    let (first, second) = match text.split_once(['/', '_']) {
        Some((a, b)) => (a, b),
        None => match text.get(1..).and_then(|rest| rest.find(['b', 's'])) {
            Some(at) => (&text[..at + 1], &text[at + 1..]),
            None if text.starts_with('b') => (text, "s"),
            None if text.starts_with('s') => ("b", text),
            None => return Err("expected a B and an S part, such as B3/S23".into()),
        },
    };
    let tag = |part: &str| part.chars().next();
    let (b, s) = match (tag(first), tag(second)) {
        (Some('b'), Some('s')) => (first, second),
        (Some('s'), Some('b')) => (second, first),
        _ => return Err("expected one B part and one S part, such as B3/S23".into()),
    };
    Ok((&b[1..], &s[1..]))
}

/// Parses a birth or survival list: its count mask, and the letters of each count where the
/// list uses Hensel's notation.
fn parse_list(list: &str) -> std::result::Result<(u32, Option<[u16; 9]>), String> {
    if !list.bytes().any(|b| b.is_ascii_lowercase()) {
        return Ok((parse_counts(list)?, None));
    }
    let bytes = list.as_bytes();
    let mut sets = [0u16; 9];
    let mut i = 0;
    while i < bytes.len() {
        let count = match bytes[i] {
            b @ b'0'..=b'8' => (b - b'0') as usize,
            b'9' => return Err("count 9 is above 8".into()),
            other => {
                return Err(format!(
                    "unexpected character {:?}: Hensel's notation is a count and its letters",
                    other as char
                ))
            }
        };
        i += 1;
        let minus = bytes.get(i) == Some(&b'-');
        i += minus as usize;
        let mut named = 0u16;
        while let Some(&b) = bytes.get(i).filter(|b| b.is_ascii_lowercase()) {
            let letters = hensel::LETTERS[count];
            let index = letters.find(b as char).ok_or_else(|| match letters {
                "" => format!("count {count} takes no letters"),
                _ => format!(
                    "letter {:?} does not go with count {count} (its letters: {letters})",
                    b as char
                ),
            })?;
            named |= 1 << index;
            i += 1;
        }
        let all = hensel::all_letters(count);
        sets[count] |= match (minus, named) {
            (true, 0) => return Err(format!("\"{count}-\" needs letters after the minus")),
            (false, 0) => all,
            (true, _) => all & !named,
            (false, _) => named,
        };
    }
    let mask = (0..9)
        .filter(|&k| sets[k] != 0)
        .fold(0u32, |m, k| m | 1 << k);
    Ok((mask, Some(sets)))
}

/// Parses a count list: digits written together, or comma-separated numbers and ranges.
fn parse_counts(list: &str) -> std::result::Result<u32, String> {
    let mut mask = 0u32;
    let mut add = |n: u32| -> std::result::Result<(), String> {
        if n > MAX_COUNT {
            return Err(format!("count {n} is above {MAX_COUNT}"));
        }
        mask |= 1 << n;
        Ok(())
    };
    if list.contains([',', '-']) {
        for item in list.split(',').filter(|i| !i.is_empty()) {
            let number = |s: &str| -> std::result::Result<u32, String> {
                if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(format!(
                        "{} is not a count or a range such as 5-7",
                        crate::error::quoted(item)
                    ));
                }
                s.parse::<u32>()
                    .map_err(|_| format!("count {} is too large", crate::error::quoted(s)))
            };
            match item.split_once('-') {
                Some((lo, hi)) => {
                    let (lo, hi) = (number(lo)?, number(hi)?);
                    if lo > hi {
                        return Err(format!(
                            "range {} runs backwards",
                            crate::error::quoted(item)
                        ));
                    }
                    for n in lo..=hi.min(MAX_COUNT + 1) {
                        add(n)?;
                    }
                }
                None => add(number(item)?)?,
            }
        }
    } else {
        for c in list.chars() {
            let digit = c
                .to_digit(10)
                .ok_or_else(|| format!("unexpected character {c:?}"))?;
            add(digit)?;
        }
    }
    Ok(mask)
}

/// Writes a count set: single digits together when every count is below 10, else
/// comma-separated numbers with ranges.
fn write_counts(f: &mut fmt::Formatter<'_>, mask: u32) -> fmt::Result {
    if mask >> 10 == 0 {
        for n in 0..10 {
            if mask >> n & 1 != 0 {
                write!(f, "{n}")?;
            }
        }
        return Ok(());
    }
    let mut first = true;
    let mut n = 0;
    while n <= MAX_COUNT {
        if mask >> n & 1 == 0 {
            n += 1;
            continue;
        }
        let start = n;
        while n < MAX_COUNT && mask >> (n + 1) & 1 != 0 {
            n += 1;
        }
        if !first {
            write!(f, ",")?;
        }
        first = false;
        if n > start {
            write!(f, "{start}-{n}")?;
        } else {
            write!(f, "{start}")?;
        }
        n += 1;
    }
    // A lone count of 10 or more needs a comma so that it reads back as one number.
    if mask.count_ones() == 1 {
        write!(f, ",")?;
    }
    Ok(())
}

/// Writes a count set in Hensel's notation: each count, then its letters (or a minus and the
/// letters left out, where that is shorter), in alphabetical order.
fn write_letters(f: &mut fmt::Formatter<'_>, sets: &[u16; 9]) -> fmt::Result {
    for (count, &set) in sets.iter().enumerate() {
        if set == 0 {
            continue;
        }
        write!(f, "{count}")?;
        let all = hensel::all_letters(count);
        if set == all {
            continue;
        }
        let sorted = |set: u16| {
            let mut letters: Vec<char> = hensel::LETTERS[count]
                .chars()
                .enumerate()
                .filter(|&(i, _)| set >> i & 1 == 1)
                .map(|(_, c)| c)
                .collect();
            letters.sort_unstable();
            letters.into_iter().collect::<String>()
        };
        if (all & !set).count_ones() < set.count_ones() {
            write!(f, "-{}", sorted(all & !set))?;
        } else {
            write!(f, "{}", sorted(set))?;
        }
    }
    Ok(())
}

/// Writes B/S notation (a Generations rule in Golly's `S/B/C`, as Golly writes it).
impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let topology = |f: &mut fmt::Formatter<'_>| match self.topology {
            Topology::Torus => Ok(()),
            Topology::Surface(surface) => write!(f, ":{}", surface.suffix()),
            Topology::Strip(strip) => write!(f, ":{}", strip.suffix()),
            topology => write!(f, ":{}", topology.letter()),
        };
        if let Some(table) = self.table {
            f.write_str(table.0.name())?;
            return topology(f);
        }
        if let Some(larger) = &self.larger {
            larger.write(f, self.states())?;
            return topology(f);
        }
        let birth = |f: &mut fmt::Formatter<'_>| match &self.letters {
            Some([birth, _]) => write_letters(f, birth),
            None => write_counts(f, self.birth),
        };
        let survive = |f: &mut fmt::Formatter<'_>| match &self.letters {
            Some([_, survive]) => write_letters(f, survive),
            None => write_counts(f, self.survive),
        };
        if self.is_generations() {
            survive(f)?;
            f.write_str("/")?;
            birth(f)?;
            write!(f, "/{}", self.states)?;
        } else {
            f.write_str("B")?;
            birth(f)?;
            f.write_str("/S")?;
            survive(f)?;
        }
        f.write_str(self.neighbourhood.suffix())?;
        topology(f)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn counts(mask: u32) -> Vec<u32> {
        (0..=MAX_COUNT).filter(|n| mask >> n & 1 != 0).collect()
    }

    /// `complemented(a, b)` is `x ↦ b ⊕ R(a ⊕ x)` on every neighbourhood, for random rules
    /// of every family, and has no B0 where `b` is the background's next state.
    #[test]
    fn complemented_rules_are_the_rule_seen_through_complements() {
        let mut random = crate::seed::SplitMix64::new(43);
        for family in Family::ALL {
            for _ in 0..200 {
                let rule = Rule::random(family, &mut || random.next());
                let mask = rule.neighbourhood().mask() | 1 << 4;
                for (now, next) in [(false, true), (true, false), (true, true), (false, false)] {
                    let turned = rule.complemented(now, next).unwrap();
                    assert_eq!(turned.family(), family, "{rule} -> {turned}");
                    for cells in 0..512u16 {
                        let cells = cells & mask;
                        let seen = if now { !cells & mask } else { cells };
                        assert_eq!(
                            turned.next_cells(cells),
                            rule.next_cells(seen) != next,
                            "{rule} ({now}, {next}) -> {turned} at {cells:#011b}"
                        );
                    }
                    let background = if now {
                        rule.survives_in_everything()
                    } else {
                        rule.births_on_nothing()
                    };
                    if background == next {
                        assert!(!turned.births_on_nothing(), "{rule} -> {turned}");
                    }
                }
            }
        }
        assert_eq!(
            Rule::parse("23/3/3").unwrap().complemented(true, true),
            None
        );
    }

    #[test]
    fn parses_common_spellings() {
        for text in [
            "B3/S23",
            "b3/s23",
            "S23/B3",
            "B3S23",
            "b3s23",
            "23/3",
            " B3 / S23 ",
            "Life",
        ] {
            assert_eq!(Rule::parse(text).unwrap(), Rule::LIFE, "{text}");
        }
        let highlife = Rule::parse("b36/s23").unwrap();
        assert_eq!(counts(highlife.birth_mask()), vec![3, 6]);
        // `_` between the parts, and a part alone, as Golly reads them.
        for (text, same) in [
            ("B3_S23", "B3/S23"),
            ("b2cek3i_s12cei", "B2cek3i/S12cei"),
            ("B234", "B234/S"),
            ("S23", "B/S23"),
        ] {
            assert_eq!(
                Rule::parse(text).unwrap(),
                Rule::parse(same).unwrap(),
                "{text}"
            );
        }
        let seeds = Rule::parse("B2/S").unwrap();
        assert_eq!(
            (counts(seeds.birth_mask()), seeds.survive_mask()),
            (vec![2], 0)
        );
        let day_night = Rule::parse("B3678/S34678").unwrap();
        assert_eq!(counts(day_night.survive_mask()), vec![3, 4, 6, 7, 8]);
        let b0 = Rule::parse("B0123/S").unwrap();
        assert_eq!(counts(b0.birth_mask()), vec![0, 1, 2, 3]);
    }

    #[test]
    fn parses_generations_rules_in_golly_and_b_s_c_notation() {
        let star_wars = Rule::parse("345/2/4").unwrap();
        assert_eq!(
            (
                counts(star_wars.survive_mask()),
                counts(star_wars.birth_mask())
            ),
            (vec![3, 4, 5], vec![2])
        );
        assert_eq!(star_wars.states(), 4);
        assert!(star_wars.is_generations());
        assert_eq!(star_wars.to_string(), "345/2/4");
        for (text, golly) in [
            ("/2/3", "/2/3"),
            ("B2/S/C3", "/2/3"),
            ("c3/s/b2", "/2/3"),
            ("B2/S34/C6H", "34/2/6H"),
            ("12/2a/3", "12/2a/3"),
            ("B2-a/S12/C4", "12/2-a/4"),
            ("23/3/256:P", "23/3/256:P"),
        ] {
            let rule = Rule::parse(text).unwrap();
            assert_eq!(rule.to_string(), golly, "{text}");
            assert_eq!(Rule::parse(golly).unwrap(), rule, "{text}");
        }
        // Two states is a two-state rule, written as one.
        assert_eq!(Rule::parse("23/3/2").unwrap(), Rule::LIFE);
        for (text, says) in [
            ("345/2/1", "2 to 256"),
            ("345/2/257", "2 to 256"),
            ("345/2/x", "not a number of states"),
            ("B2/S/3", "one B, one S and one C"),
            ("B2/S34/C4/C5", "expected"),
        ] {
            let err = Rule::parse(text).unwrap_err().to_string();
            assert!(err.contains(says), "{text}: {err}");
        }
        // The next states: born, surviving, starting to die, dying on, dying out.
        let rule = Rule::parse("/2/4").unwrap();
        let next: Vec<u8> = [
            (0, true),
            (0, false),
            (1, true),
            (1, false),
            (2, true),
            (3, false),
        ]
        .iter()
        .map(|&(state, lives)| rule.next_state(state, lives))
        .collect();
        assert_eq!(next, [1, 0, 1, 2, 3, 0]);
        assert_eq!(Rule::LIFE.next_state(1, false), 0);
        let most = Rule::parse("/2/256").unwrap();
        assert_eq!(
            (most.next_state(254, false), most.next_state(255, true)),
            (255, 0)
        );
    }

    #[test]
    fn parses_comma_lists_and_ranges() {
        let rule = Rule::parse("B6/S5-7,10,12-14").unwrap();
        assert_eq!(counts(rule.survive_mask()), vec![5, 6, 7, 10, 12, 13, 14]);
        assert_eq!(Rule::parse("B6/S567").unwrap(), Rule::LIFE_3D);
        assert_eq!(
            counts(Rule::parse("B10,/S").unwrap().birth_mask()),
            vec![10]
        );
    }

    #[test]
    fn refuses_bad_rules() {
        for text in [
            "", "B3/S2x", "B3/B3", "X3/S23", "B27,/S", "B5-3/S", "B3/S1--2", "hello",
        ] {
            let err = Rule::parse(text).unwrap_err().to_string();
            assert!(err.starts_with("invalid rule"), "{text}: {err}");
        }
    }

    #[test]
    fn display_round_trips() {
        for text in [
            "B3/S23",
            "B2/S",
            "B0/S8",
            "B6/S5-7,10,12-14",
            "B/S26,",
            "B10-12/S0",
        ] {
            let rule = Rule::parse(text).unwrap();
            assert_eq!(Rule::parse(&rule.to_string()).unwrap(), rule, "{text}");
        }
        assert_eq!(Rule::LIFE.to_string(), "B3/S23");
        assert_eq!(Rule::parse("B6/S5-7,10").unwrap().to_string(), "B6/S5-7,10");
    }

    #[test]
    fn next_and_table_agree() {
        let rule = Rule::LIFE;
        let table = rule.table();
        assert!(rule.next(false, 3) && !rule.next(false, 2));
        assert!(rule.next(true, 2) && rule.next(true, 3) && !rule.next(true, 4));
        for (n, (&dead, &alive)) in table[0].iter().zip(&table[1]).enumerate() {
            assert_eq!(dead != 0, rule.next(false, n as u32));
            assert_eq!(alive != 0, rule.next(true, n as u32));
        }
    }

    #[test]
    fn neighbour_check() {
        assert!(Rule::LIFE.check_neighbours(8).is_ok());
        assert!(Rule::parse("B9,/S").unwrap().check_neighbours(8).is_err());
        assert!(Rule::LIFE_3D.check_neighbours(26).is_ok());
    }

    #[test]
    fn parses_hensel_letters() {
        let friends = Rule::parse("B2-a/S12").unwrap();
        assert_eq!(friends.family(), Family::Isotropic);
        assert_eq!(friends.to_string(), "B2-a/S12");
        // A live NW and N neighbour (2a) give no birth; NW and NE (2c) do.
        assert!(!friends.next_cells(0b000_000_011));
        assert!(friends.next_cells(0b000_000_101));
        assert!(friends.next_cells(0b000_010_001) && !friends.next_cells(0b000_010_111));
        for (text, shown) in [
            ("B3/S23-a", "B3/S23-a"),
            ("b2e3/s23", "B2e3/S23"),
            (
                "B2ce3aeijnqry4n/S1e2-a3ae4ejqt",
                "B2ce3-ck4n/S1e2-a3ae4ejqt",
            ),
            ("B3cekainyqjr/S23", "B3/S23"),
            ("B2-cekain3/S23", "B3/S23"),
            ("S23-a/B3", "B3/S23-a"),
        ] {
            let rule = Rule::parse(text).unwrap();
            assert_eq!(rule.to_string(), shown, "{text}");
            assert_eq!(Rule::parse(shown).unwrap(), rule, "{text}");
        }
        assert_eq!(Rule::parse("B3cekainyqjr/S23").unwrap(), Rule::LIFE);
        assert_eq!(Rule::parse("B3/S23-a").unwrap().family(), Family::Isotropic);
    }

    #[test]
    fn letters_name_the_arrangements_of_their_count() {
        // B2e alone: births on two orthogonal neighbours at right angles, nothing else.
        let rule = Rule::parse("B2e/S").unwrap();
        let born: Vec<u16> = (0..512u16)
            .filter(|&c| c & 16 == 0 && rule.next_cells(c))
            .collect();
        assert_eq!(
            born,
            vec![0b000_001_010, 0b000_100_010, 0b010_001_000, 0b010_100_000]
        );
    }

    #[test]
    fn parses_other_neighbourhoods() {
        let hex = Rule::parse("B2/S34H").unwrap();
        assert_eq!(hex.family(), Family::Hexagonal);
        assert_eq!(hex.to_string(), "B2/S34H");
        // The NE and SW corners are not counted: two live cells there give no birth.
        assert!(!hex.next_cells(0b001_000_100));
        assert!(hex.next_cells(0b100_000_001));
        let von_neumann = Rule::parse("b2/s013v").unwrap();
        assert_eq!(von_neumann.to_string(), "B2/S013V");
        assert!(von_neumann.next_cells(0b000_101_000) && !von_neumann.next_cells(0b101_000_000));
        for text in ["B7/S34H", "B2/S5V", "B2a/S34H", "B2/S9V"] {
            let err = Rule::parse(text).unwrap_err().to_string();
            assert!(err.starts_with("invalid rule"), "{text}: {err}");
        }
    }

    #[test]
    fn refuses_bad_letters() {
        for (text, says) in [
            ("B2x/S23", "letter 'x' does not go with count 2"),
            ("B1k/S23", "letter 'k' does not go with count 1"),
            ("B0c/S23", "count 0 takes no letters"),
            ("B2-a3-/S", "needs letters after the minus"),
            ("B9a/S", "count 9 is above 8"),
            ("B2a/S5-7,10", "at most 8 neighbours"),
        ] {
            let err = Rule::parse(text).unwrap_err().to_string();
            assert!(err.contains(says), "{text}: {err}");
        }
    }

    #[test]
    fn engines_refuse_families_they_cannot_run() {
        let friends = Rule::parse("B2-a/S12").unwrap();
        for id in Family::ENGINES {
            assert!(friends.check_engine(id, 8).is_ok());
        }
        let err = friends
            .check_engine(EngineId::CpuTable, 8)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cpu-table") && err.contains("cpu-scalar, cpu-bitsliced, cuda-bitsliced"),
            "{err}"
        );
        let err = friends
            .check_engine(EngineId::CpuBitsliced, 26)
            .unwrap_err()
            .to_string();
        assert!(err.contains("2D rules"), "{err}");
        assert!(Rule::LIFE.check_engine(EngineId::CudaLut, 8).is_ok());
    }
}
