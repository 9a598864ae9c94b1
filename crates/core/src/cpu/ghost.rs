//! Byte cells with ghost rows and columns: the layout of the sequential C programs in docs/lineage.md.
//!
//! The W×H torus is stored as a (W+2)×(H+2) array of bytes (1 alive, 0 dead; under a
//! Generations rule 2 and up for the dying states, under a rule table its states), row-major. Row 0
//! and row H+1, column 0 and column W+1 are ghosts: before each generation the left ghost column
//! gets a copy of column W and the right one of column 1, then the top ghost row (corners
//! included) a copy of row H and the bottom one of row 1. Each interior cell then reads its
//! eight neighbours without any wrap-around arithmetic. On narrow grids the ghosts alias interior
//! cells, which counts neighbours with multiplicity, exactly as the torus semantics ask. On a
//! bounded plane ([`Topology::Plane`]) the ghosts stay zero: the dead cells past the edges. On
//! Golly's other grids ([`Topology::Surface`]) each ghost copies the cell its border names.

use crate::engine::{Engine, EngineId};
use crate::error::{Error, Result};
use crate::grid::{check_size, Grid};
use crate::memory;
use crate::rule::{Larger, Rule, Topology};

/// How a ghost-cell engine turns a cell's state and live-neighbour count into its next state.
pub trait CellUpdate: Send + Sized {
    /// Which engine this update makes.
    const ID: EngineId;
    /// Prepares the update for `rule` (already checked to fit 2D).
    fn new(rule: Rule) -> Self;
    /// The next state (0 or 1) of a cell in `state` (0 or 1) with `neighbours` live neighbours.
    fn next(&self, state: u8, neighbours: u8) -> u8;

    /// Advances `cells` one generation: by neighbour counts and [`CellUpdate::next`] unless
    /// the update needs the whole neighbourhood.
    #[inline]
    fn advance(&self, cells: &mut GhostCells) {
        cells.step(|state, neighbours| self.next(state, neighbours));
    }
}

/// A CPU engine over [`GhostCells`], parameterised by its per-cell update.
pub struct GhostEngine<U> {
    state: Option<(GhostCells, U)>,
}

impl<U> Default for GhostEngine<U> {
    fn default() -> Self {
        GhostEngine { state: None }
    }
}

impl<U: CellUpdate> GhostEngine<U> {
    fn loaded(&self) -> Result<&(GhostCells, U)> {
        self.state
            .as_ref()
            .ok_or_else(|| Error::Engine(format!("{}: no grid loaded", U::ID)))
    }
}

impl<U: CellUpdate> Engine for GhostEngine<U> {
    fn id(&self) -> EngineId {
        U::ID
    }

    fn load(&mut self, grid: &Grid, rule: Rule) -> Result<()> {
        rule.check_engine(U::ID, 8)?;
        rule.check_states(grid.states())?;
        rule.check_grid(grid.width(), grid.height())?;
        self.state = None;
        self.state = Some((GhostCells::new(grid, rule, U::ID.name())?, U::new(rule)));
        Ok(())
    }

    fn step(&mut self, generations: u64) -> Result<()> {
        self.loaded()?;
        if let Some((cells, update)) = self.state.as_mut() {
            for _ in 0..generations {
                update.advance(cells);
            }
        }
        Ok(())
    }

    fn snapshot(&self) -> Result<Grid> {
        self.loaded()?.0.snapshot()
    }

    fn population(&self) -> Result<u64> {
        Ok(self.loaded()?.0.population())
    }
}

/// A ghost-bordered byte grid and the buffer for the next generation.
pub struct GhostCells {
    width: usize,
    height: usize,
    topology: Topology,
    /// Cell states: 2, or more under a Generations rule.
    states: u32,
    cells: Vec<u8>,
    next: Vec<u8>,
}

impl GhostCells {
    /// Copies `grid` into a fresh ghost-bordered pair of buffers, to run under `rule` (its
    /// topology and number of states).
    pub fn new(grid: &Grid, rule: Rule, engine: &str) -> Result<GhostCells> {
        let (width, height) = (grid.width(), grid.height());
        check_size(width, height)?;
        let len = (width as u64 + 2) * (height as u64 + 2);
        let what =
            format!("a {width}x{height} grid on {engine} (two byte arrays with ghost cells)");
        memory::check(2 * len, &what)?;
        let mut cells = grid.to_bytes_in(width + 2, width + 3, len as usize);
        grid.add_ages(&mut cells, width + 2, width + 3);
        let next = memory::zeroed_vec::<u8>(len, &what)?;
        Ok(GhostCells {
            width,
            height,
            topology: rule.topology(),
            states: rule.states(),
            cells,
            next,
        })
    }

    /// Refreshes the ghost columns, then the ghost rows (corners included), on a torus; on a
    /// bounded plane they stay zero (neither buffer's ghosts are ever written).
    fn refresh_ghosts(&mut self) {
        let (w, h, stride) = (self.width, self.height, self.width + 2);
        let surface = match self.topology {
            Topology::Plane => return,
            Topology::Torus => None,
            Topology::Surface(surface) => Some(surface),
            Topology::Strip(_) => unreachable!("check_engine refuses strips on grid engines"),
        };
        let c = &mut self.cells;
        if let Some(surface) = surface {
            // Each ghost copies the cell Golly's border for this grid names.
            let at = |(x, y): (usize, usize)| (y + 1) * stride + x + 1;
            let (wi, hi) = (w as isize, h as isize);
            let ghosts = (-1..=wi)
                .flat_map(|x| [(x, -1), (x, hi)])
                .chain((0..hi).flat_map(|y| [(-1, y), (wi, y)]));
            for (x, y) in ghosts {
                let ghost = ((y + 1) as usize) * stride + (x + 1) as usize;
                c[ghost] = c[at(surface.outside(x, y))];
            }
            return;
        }
        for y in 1..=h {
            c[y * stride] = c[y * stride + w];
            c[y * stride + w + 1] = c[y * stride + 1];
        }
        c.copy_within(h * stride..(h + 1) * stride, 0);
        c.copy_within(stride..2 * stride, (h + 1) * stride);
    }

    /// Advances one generation: `update(state, live_neighbours)` gives each cell's next state.
    #[inline]
    pub fn step(&mut self, update: impl Fn(u8, u8) -> u8) {
        self.refresh_ghosts();
        let stride = self.width + 2;
        let (c, n) = (&self.cells, &mut self.next);
        for y in 1..=self.height {
            let (up, rest) = c[(y - 1) * stride..(y + 2) * stride].split_at(stride);
            let (mid, down) = rest.split_at(stride);
            let out = &mut n[y * stride..(y + 1) * stride];
            for x in 1..=self.width {
                // At most 8, so the byte sum never wraps; wrapping adds spare the tests' build
                // (which checks every add for overflow) a branch an add.
                let neighbours = [
                    up[x - 1],
                    up[x],
                    up[x + 1],
                    mid[x - 1],
                    mid[x + 1],
                    down[x - 1],
                    down[x],
                    down[x + 1],
                ]
                .iter()
                .fold(0u8, |sum, &cell| sum.wrapping_add(cell));
                out[x] = update(mid[x], neighbours);
            }
        }
        std::mem::swap(&mut self.cells, &mut self.next);
    }

    /// Advances one generation: `update(cells, state)` gives each cell's next state from its 3×3
    /// neighbourhood of live cells (state 1), bit `3r + c` the cell in row `r` and column `c`
    /// (the cell itself at 4), and its own state.
    pub fn step_neighbourhoods(&mut self, update: impl Fn(u16, u8) -> u8) {
        self.refresh_ghosts();
        let stride = self.width + 2;
        let (c, n) = (&self.cells, &mut self.next);
        for y in 1..=self.height {
            for x in 1..=self.width {
                let mut cells = 0u16;
                for r in 0..3 {
                    let row = (y + r - 1) * stride + x - 1;
                    for col in 0..3 {
                        cells |= ((c[row + col] == 1) as u16) << (3 * r + col);
                    }
                }
                n[y * stride + x] = update(cells, c[y * stride + x]);
            }
        }
        std::mem::swap(&mut self.cells, &mut self.next);
    }

    /// Advances one generation: `update(around)` gives each cell's next state from the states
    /// of its 3×3 neighbourhood (rows top to bottom, the cell itself at the centre).
    pub fn step_states(&mut self, update: impl Fn(&[[u8; 3]; 3]) -> u8) {
        self.refresh_ghosts();
        let stride = self.width + 2;
        let (c, n) = (&self.cells, &mut self.next);
        for y in 1..=self.height {
            for x in 1..=self.width {
                let around: [[u8; 3]; 3] = std::array::from_fn(|r| {
                    let row = (y + r - 1) * stride + x - 1;
                    [c[row], c[row + 1], c[row + 2]]
                });
                n[y * stride + x] = update(&around);
            }
        }
        std::mem::swap(&mut self.cells, &mut self.next);
    }

    /// Advances one generation under the Larger than Life rule `larger` of `states` states,
    /// whose neighbourhoods reach past the ghosts: the interior is stepped on its own, wrapped
    /// on a torus.
    pub fn step_larger(&mut self, larger: &Larger, states: u32) {
        let (w, h, stride) = (self.width, self.height, self.width + 2);
        let interior: Vec<u8> = (1..=h)
            .flat_map(|y| self.cells[y * stride + 1..][..w].iter().copied())
            .collect();
        let mut next = vec![0u8; w * h];
        let wrap = self.topology == Topology::Torus;
        crate::rule::larger::step(larger, states, &interior, w, h, wrap, &mut next);
        for (y, row) in next.chunks(w).enumerate() {
            self.cells[(y + 1) * stride + 1..][..w].copy_from_slice(row);
        }
    }

    /// The interior as a bit-packed grid.
    pub fn snapshot(&self) -> Result<Grid> {
        let (w, h) = (self.width, self.height);
        if self.states > 2 {
            return Grid::from_states_in(w, h, self.states, &self.cells, w + 2, w + 3);
        }
        Grid::from_bytes_in(w, h, &self.cells, w + 2, w + 3)
    }

    /// Cells not in state 0 in the interior.
    pub fn population(&self) -> u64 {
        let stride = self.width + 2;
        (1..=self.height)
            .map(|y| {
                self.cells[y * stride + 1..][..self.width]
                    .iter()
                    .map(|&c| (c != 0) as u64)
                    .sum::<u64>()
            })
            .sum()
    }
}
