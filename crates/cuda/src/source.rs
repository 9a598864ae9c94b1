//! The kernels' source text: the `.cu` files under `kernels/`, embedded in the binary, and what
//! the host pastes in front of them for a rule.
//!
//! NVRTC gets no headers: shared pieces are pasted together instead. The rule is pasted in as
//! `#define BIRTH`/`SURVIVE` masks; `rule.cu` (or `constant.cu`) defines `NEXT_STATE` from it
//! for the update kernels, and `cuda-bitsliced` gets the rule as a circuit of LOP3s
//! ([`crate::circuit::source`]) in front of its source.
//!
//! This module and [`crate::circuit`] depend on nothing but `gol-core`, because the build script
//! compiles them too: it builds [`shipped`]'s sources into CUBINs when `gol` is built
//! (`build.rs`), so that a first run needs no NVRTC.

use gol_core::rule::Topology;
use gol_core::Rule;

/// The compiled-in rule's `NEXT_STATE`.
pub const RULE: &str = include_str!("../kernels/rule.cu");
/// Ghost-cell refresh and update kernels of cuda-global and cuda-constant.
pub const GLOBAL: &str = include_str!("../kernels/global.cu");
/// cuda-constant's rule table in constant memory and its `NEXT_STATE`.
pub const CONSTANT: &str = include_str!("../kernels/constant.cu");
/// The strips of cuda-shared and cuda-texture and their row sums in shared memory.
pub const STRIP: &str = include_str!("../kernels/strip.cu");
/// cuda-shared's update kernel.
pub const SHARED: &str = include_str!("../kernels/shared.cu");
/// cuda-texture's update kernel.
pub const TEXTURE: &str = include_str!("../kernels/texture.cu");
/// cuda-lut's and cuda-lut6's update kernels.
pub const LUT: &str = include_str!("../kernels/lut.cu");
/// Programmatic dependent launch in a kernel: `start_next_grid` and `wait_for_previous_grid`.
pub const DEPENDENT: &str = include_str!("../kernels/dependent.cu");
/// cuda-bitsliced's multi-generation kernels and its population count.
pub const BITSLICED: &str = include_str!("../kernels/bitsliced.cu");
/// cuda-bitsliced's kernel for small grids, which keeps the grid in one cluster's shared memory.
pub const RESIDENT: &str = include_str!("../kernels/resident.cu");
/// The rule of cuda-bitsliced's generic 2D kernels, read from constant memory ([`Generic`]).
pub const GENERIC: &str = include_str!("../kernels/generic.cu");
/// cuda-states' kernels: rule tables and Larger than Life.
pub const STATES: &str = include_str!("../kernels/states.cu");
/// The census's soups, each on a box of its own (crate::soups).
pub const SOUPS: &str = include_str!("../kernels/soups.cu");
/// `before` and `after` on one axis of the 3D torus, pasted in front of every 3D kernel.
pub const CUBE_WRAP: &str = include_str!("../kernels/cube_wrap.cu");
/// The 3D byte-cell kernels of cuda-global and cuda-shared.
pub const CUBE_BYTES: &str = include_str!("../kernels/cube_bytes.cu");
/// The 3D cuda-swar kernel (four byte cells per word).
pub const CUBE_SWAR: &str = include_str!("../kernels/cube_swar.cu");
/// The 3D cuda-bitsliced kernel.
pub const CUBE_BITSLICED: &str = include_str!("../kernels/cube_bitsliced.cu");

/// `parts` behind the rule's masks as `#define`s, and `PLANE` where the rule runs on a bounded
/// plane (the kernels then take cells past the edges as dead instead of wrapping).
pub fn with_rule(rule: Rule, parts: &[&str]) -> String {
    let mut source = format!(
        "#define BIRTH {}u\n#define SURVIVE {}u\n",
        rule.birth_mask(),
        rule.survive_mask()
    );
    if rule.topology() == Topology::Plane {
        source.push_str("#define PLANE\n");
    }
    for part in parts {
        source.push_str(part);
        source.push('\n');
    }
    source
}

/// Generations one launch can advance: the kernel is compiled for each (`advance_<depth>`).
pub const DEPTHS: [u32; 5] = [1, 2, 4, 8, 16];

/// How cuda-bitsliced's 2D kernels are built for a rule, which the host needs to know to launch
/// them: the levels per chain at each depth, the deepest kernel built and the blocks an SM fits
/// of the kernel of depth 8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Levels per chain in the kernel of each of [`DEPTHS`] (`kernels/bitsliced.cu`, "Skew"):
    /// longer chains stream fewer rows beyond each tile, but make each level wait for the one
    /// below. Measured on an H100 (docs/benchmarks/gpu-2d.md): with Life's exact circuit,
    /// chains of 6 at depth 16 and 3 at depth 8 run fastest; with the general circuit, which is
    /// deeper, chains were faster for some rules and slower for others (B36/S23), so they stay
    /// at 1.
    pub chains: [u32; DEPTHS.len()],
    /// The deepest of [`DEPTHS`] whose kernel is built.
    pub max_depth: u32,
    /// Blocks of 128 threads that the kernel of depth 8 is built to fit on an SM at once (its
    /// `__launch_bounds__`).
    pub depth_8_blocks: u32,
}

impl Shape {
    /// The shape of `rule`'s own kernels. A two-state rule takes every depth, but one that
    /// keeps each row's cells beside its sums ([`crate::circuit::reads_sums_and_cells`]): five
    /// words a row and level spill past 8 levels (the kernel of depth 16 must fit 168
    /// registers), and its depth-8 kernel is bounded to 3 blocks an SM, at most 168 registers
    /// a thread, for it would otherwise take about 180 registers and fit two (the others fit
    /// three or more unbounded, or would spill under the bound). Generations rules as
    /// deep as their age planes allow (at most 8, and at most 16 age planes a launch).
    pub fn of(rule: Rule) -> Shape {
        let wide_rows = crate::circuit::reads_sums_and_cells(rule);
        let chains = match crate::circuit::is_exact(rule) {
            true => [1, 1, 1, 3, 6],
            false => [1; DEPTHS.len()],
        };
        let planes = gol_core::grid::age_planes(rule.states()) as u32;
        let (max_depth, depth_8_blocks) = match (planes, wide_rows) {
            (0, true) => (8, 3),
            (0, false) => (DEPTHS[DEPTHS.len() - 1], 1),
            (planes, _) => (Shape::ages(planes), 1),
        };
        Shape {
            chains,
            max_depth,
            depth_8_blocks,
        }
    }

    /// The shape of a [`Generic`] 2D kernel for rules of `age_planes` age planes (0 for
    /// two-state rules): chains of 1, at most [`GENERIC_DEPTH`] deep.
    pub fn generic(age_planes: u32) -> Shape {
        Shape {
            chains: [1; DEPTHS.len()],
            max_depth: match age_planes {
                0 => GENERIC_DEPTH,
                planes => Shape::ages(planes).min(GENERIC_DEPTH),
            },
            depth_8_blocks: 1,
        }
    }

    /// The deepest kernel under a Generations rule of `planes` age planes: each level also
    /// holds its middle row's ages, a register per age plane in each of its two slots, so
    /// depths whose levels would hold more than 16 age planes together, or past 8, would spill.
    fn ages(planes: u32) -> u32 {
        DEPTHS
            .iter()
            .copied()
            .filter(|&d| d <= 8 && d * planes <= 16)
            .max()
            .unwrap_or(1)
    }

    /// `#define CHAIN_<depth> <levels>` for each of [`DEPTHS`], `MAX_DEPTH` and
    /// `DEPTH_8_BLOCKS`, which the kernel's source needs.
    fn defines(&self) -> String {
        let mut defines: String = DEPTHS
            .iter()
            .zip(self.chains)
            .map(|(depth, chain)| format!("#define CHAIN_{depth} {chain}\n"))
            .collect();
        defines += &format!("#define MAX_DEPTH {}\n", self.max_depth);
        defines += &format!("#define DEPTH_8_BLOCKS {}\n", self.depth_8_blocks);
        defines
    }
}

/// The deepest kernel the generic 2D kernels build: their rule takes 511 operations a word and
/// level (`kernels/generic.cu`), so deeper kernels would save little of a launch's memory
/// traffic and take NVRTC the longer to build.
pub const GENERIC_DEPTH: u32 = 8;

/// cuda-bitsliced's 2D source for `rule`: the rule as a LOP3 circuit, the lengths of its
/// chains of levels and a Generations rule's dying states in front of the multi-generation
/// kernels, the small grids' resident kernel and programmatic dependent launch.
pub fn bitsliced(rule: Rule) -> String {
    let mut circuit = crate::circuit::source(rule) + &Shape::of(rule).defines();
    let planes = gol_core::grid::age_planes(rule.states());
    if planes > 0 {
        circuit += &format!(
            "#define AGE_PLANES {planes}\n#define AGE_LAST {}u\n",
            rule.states() - 2
        );
    }
    with_rule(rule, &[&circuit, DEPENDENT, BITSLICED, RESIDENT])
}

/// cuda-bitsliced's 3D source for `rule`: the 27-cell wrap helpers and programmatic dependent
/// launch in front of the kernel.
pub fn cube_bitsliced(rule: Rule) -> String {
    with_rule(rule, &[CUBE_WRAP, DEPENDENT, CUBE_BITSLICED])
}

/// A cuda-bitsliced kernel that runs every rule of a kind, reading the rule from its module's
/// constant memory (`rule_leaves` and `rule_age_last` in 2D, `rule_masks` in 3D), so that a
/// rule without a compiled kernel of its own runs at once (`crate::generic`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Generic {
    /// 2D rules.
    Flat {
        /// Whether the grid is a bounded plane (else a torus).
        plane: bool,
        /// A Generations rule's age planes; 0 for two-state rules.
        age_planes: u32,
    },
    /// 3D outer-totalistic rules on the torus.
    Solid,
}

impl Generic {
    /// The generic kernel that runs 2D `rule` on cuda-bitsliced.
    pub fn flat(rule: Rule) -> Generic {
        Generic::Flat {
            plane: rule.topology() == Topology::Plane,
            age_planes: gol_core::grid::age_planes(rule.states()) as u32,
        }
    }

    /// The kernel's source, the same for every rule of its kind.
    pub fn source(self) -> String {
        match self {
            Generic::Flat { plane, age_planes } => {
                let mut head = String::new();
                if plane {
                    head.push_str("#define PLANE\n");
                }
                head += crate::circuit::PREAMBLE;
                head += GENERIC;
                head += &Shape::generic(age_planes).defines();
                if age_planes > 0 {
                    head += &format!(
                        "#define AGE_PLANES {age_planes}\n#define AGE_LAST rule_age_last\n"
                    );
                }
                [head.as_str(), DEPENDENT, BITSLICED, RESIDENT].join("\n")
            }
            Generic::Solid => [
                "#define GENERIC_RULE\n__constant__ unsigned int rule_masks[2];\n\
                 #define BIRTH rule_masks[0]\n#define SURVIVE rule_masks[1]\n",
                CUBE_WRAP,
                DEPENDENT,
                CUBE_BITSLICED,
            ]
            .join("\n"),
        }
    }

    /// The generic kernels built into `gol` beside the default rules' ([`shipped`]): 2D
    /// two-state rules on the torus and the bounded plane, Generations rules of up to
    /// [`SHIPPED_AGE_PLANES`] age planes on the torus, and 3D rules.
    pub fn shipped() -> Vec<Generic> {
        let flat = |plane, age_planes| Generic::Flat { plane, age_planes };
        let mut kinds = vec![flat(false, 0), flat(true, 0)];
        kinds.extend((1..=SHIPPED_AGE_PLANES).map(|planes| flat(false, planes)));
        kinds.push(Generic::Solid);
        kinds
    }
}

/// The census's soup kernels (`crate::soups` is their host side): the constants their source
/// is built with, and the source for each size of box.
pub mod soups {
    /// The sides a box may have, in cells: those the census uses (gol-census's `gpu::TIERS`),
    /// whose kernels are built into `gol` ([`super::shipped`]). soups_run keeps a box in shared
    /// memory for a launch (9 and 34 KiB, rows a word longer, a row more above and below) and
    /// steps it there in place, in tiles of one word. Boxes of 512 in shared memory, stepped in
    /// place by four warps, ran that tier's launches of a 2^19-soup census in 238 ms against
    /// 283 in global memory with tiles of two words, from one copy into the other, and whole
    /// 2^23 runs 7% faster (H100, 2026-12-06; in the strips the kernel had before its tiles,
    /// shared memory had been slower for them). A box of 1024 (132 KiB, a block an SM) takes
    /// the few soups a box of 512 cannot hold, which the CPU would census from generation 0.
    pub const SIDES: [usize; 3] = [256, 512, 1024];

    /// Cells from an edge of the box in which a cell stops its soup (`Status::Paused` in
    /// `crate::soups`).
    pub const BAND: usize = 12;

    /// Cells round a glider in the band within which there must be nothing else for the kernel to
    /// take it away (the census's `ISOLATION`, whose reasons its doc gives).
    pub const ISOLATION: usize = 24;

    /// Gliders a soup's log holds between two looks (`SoupBoxes::log` in `crate::soups`): the
    /// kernel takes a glider flying out alone away itself (the header of `kernels/soups.cu`
    /// says when), and stops the soup as before once its log is full.
    pub const LOGGED: usize = 8;

    /// Kinds of object soups_live may name at most (`SoupBoxes::new` in `crate::soups`).
    pub const MOST_KINDS: usize = 64;

    /// The rows of a tile that soups_run steps: in boxes of 256 cells, 8 rows (ncu over the
    /// runs of a 2^19-soup census: 513–531 ms, 534 with 4 rows, 625 with 16); in boxes of 512,
    /// 8 (238 ms against 256 with 16, 2026-12-06; docs/benchmarks/census.md).
    pub const TILE: usize = 8;

    /// The warps of a block of soups_run, which steps one soup: one for boxes of 256, four for
    /// larger ones. Boxes of 512 are few (3.4% of soups go on in them) and long-lived, so that
    /// a launch holds few at a time: in shared memory, with four warps each, that tier's
    /// launches of a 2^19-soup census ran in 238 ms, with two in 271, with eight in 379 (H100,
    /// 2026-12-06; in global memory, before, four had beaten one, two and eight too). Boxes of 256
    /// ran slower with more than one (592 ms with two against 441, 701 with four, H100): their
    /// soups are small, a generation a few tiles, and each warp pays a generation's listing and
    /// sums (docs/benchmarks/census.md).
    pub fn warps(side: usize) -> usize {
        if side <= 256 {
            1
        } else {
            4
        }
    }

    /// The generations one listing of the tiles to step serves: the tiles with cells and those
    /// with cells of a tile beside them within that many cells of them, marked in the last
    /// generation before each listing. ncu over a 2^19-soup census's runs (H100, 2026-12-06):
    /// 600 ms at 4, 621 at 2, 657 at 1 (docs/benchmarks/census.md).
    pub const EVERY: usize = 4;

    /// The kernels' source for boxes of `side` cells a side, with Life's circuit
    /// ([`crate::circuit::source`]) for their `life`.
    pub fn source(side: usize) -> String {
        format!(
            "#define SIDE {side}\n#define BAND {BAND}\n#define ISOLATION {ISOLATION}\n\
             #define LOGGED {LOGGED}\n#define TILE {TILE}\n#define MOST_KINDS {MOST_KINDS}\n\
             #define WARPS {}\n#define EVERY {EVERY}\n{}{}",
            warps(side),
            crate::circuit::source(gol_core::Rule::LIFE),
            super::SOUPS
        )
    }
}

/// The most age planes of a Generations rule whose generic kernel is built into `gol`: rules of
/// up to 2^SHIPPED_AGE_PLANES + 1 states.
pub const SHIPPED_AGE_PLANES: u32 = 4;

/// The GPU architectures whose CUBINs are built into `gol` (where NVRTC was there when it was
/// built): Ampere (datacentre and consumer), Ada, Hopper, Blackwell (datacentre and consumer).
/// A CUBIN runs only on its own architecture; any other GPU compiles at run time. Turing is not
/// among them: the 3D kernel's asynchronous copies (`cp.async`) need sm_80.
pub const SHIPPED_ARCHES: [&str; 6] = ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"];

/// The sources built into `gol` as CUBINs for each of [`SHIPPED_ARCHES`]: what `--engine auto`
/// runs on a GPU under each dimension's default rule, `cuda-bitsliced` with Life in 2D and
/// B6/S567 in 3D, the [`Generic`] kernels that run other rules while their own compile, and
/// the census's soup kernels for the boxes it uses ([`soups::SIDES`]). Other engines'
/// kernels and rules' own kernels are compiled by NVRTC on first use and cached on disk.
pub fn shipped() -> Vec<String> {
    let defaults = [bitsliced(Rule::LIFE), cube_bitsliced(Rule::LIFE_3D)];
    let generic = Generic::shipped().into_iter().map(Generic::source);
    let census = soups::SIDES.map(soups::source);
    defaults.into_iter().chain(generic).chain(census).collect()
}
