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
/// cuda-states' kernels: rule tables and Larger than Life.
pub const STATES: &str = include_str!("../kernels/states.cu");
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

/// Levels per chain in the kernel of each of [`DEPTHS`] for `rule` (`kernels/bitsliced.cu`,
/// "Skew"): longer chains stream fewer rows beyond each tile, but make each level wait for the
/// one below. Measured on an H100 (docs/benchmarks/gpu-2d.md): with Life's exact circuit, chains of 6 at
/// depth 16 and 3 at depth 8 run fastest; with the general circuit, which is deeper, chains
/// were faster for some rules and slower for others (B36/S23), so they stay at 1.
pub fn chains(rule: Rule) -> [u32; DEPTHS.len()] {
    if crate::circuit::is_exact(rule) {
        [1, 1, 1, 3, 6]
    } else {
        [1; DEPTHS.len()]
    }
}

/// The deepest of [`DEPTHS`] whose kernel is built for `rule`. A two-state rule takes them all,
/// but for one that keeps each row's cells beside its sums
/// ([`crate::circuit::reads_sums_and_cells`]): five words a row and level spill past 8 levels
/// (the kernel of depth 16 must fit 168 registers). Under a Generations rule each level also
/// holds its middle row's ages, a register per age plane in each of its two slots: depths whose
/// levels would hold more than 16 age planes together, or past 8, would spill.
pub fn max_depth(rule: Rule) -> u32 {
    let wide_rows = crate::circuit::reads_sums_and_cells(rule);
    if !rule.is_generations() {
        return if wide_rows {
            8
        } else {
            DEPTHS[DEPTHS.len() - 1]
        };
    }
    let planes = gol_core::grid::age_planes(rule.states()) as u32;
    DEPTHS
        .iter()
        .copied()
        .filter(|&d| d <= 8 && d * planes <= 16)
        .max()
        .unwrap_or(1)
}

/// Blocks of 128 threads that the kernel of depth 8 is built to fit on an SM at once (its
/// `__launch_bounds__`): 3, at most 168 registers a thread, for two-state rules whose rows keep
/// their cells beside their sums, for which it is the deepest kernel and would otherwise take
/// about 180 registers and fit two blocks; 1 for the others, which fit three or more unbounded
/// or would spill under the bound.
pub fn depth_8_blocks(rule: Rule) -> u32 {
    if crate::circuit::reads_sums_and_cells(rule) && !rule.is_generations() {
        3
    } else {
        1
    }
}

/// `#define CHAIN_<depth> <levels>` for each of [`DEPTHS`], `MAX_DEPTH` and `DEPTH_8_BLOCKS`,
/// which the kernel's source needs.
pub fn chain_defines(rule: Rule) -> String {
    let mut defines: String = DEPTHS
        .iter()
        .zip(chains(rule))
        .map(|(depth, chain)| format!("#define CHAIN_{depth} {chain}\n"))
        .collect();
    defines += &format!("#define MAX_DEPTH {}\n", max_depth(rule));
    defines += &format!("#define DEPTH_8_BLOCKS {}\n", depth_8_blocks(rule));
    defines
}

/// cuda-bitsliced's 2D source for `rule`: the rule as a LOP3 circuit, the lengths of its
/// chains of levels and a Generations rule's dying states in front of the multi-generation kernels, the small grids' resident kernel
/// and programmatic dependent launch.
pub fn bitsliced(rule: Rule) -> String {
    let mut circuit = crate::circuit::source(rule) + &chain_defines(rule);
    if rule.is_generations() {
        circuit += &format!(
            "#define AGE_PLANES {}\n#define AGE_LAST {}u\n",
            gol_core::grid::age_planes(rule.states()),
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

/// The GPU architectures whose CUBINs are built into `gol` (where NVRTC was there when it was
/// built): Ampere (datacentre and consumer), Ada, Hopper, Blackwell (datacentre and consumer).
/// A CUBIN runs only on its own architecture; any other GPU compiles at run time. Turing is not
/// among them: the 3D kernel's asynchronous copies (`cp.async`) need sm_80.
pub const SHIPPED_ARCHES: [&str; 6] = ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"];

/// The sources built into `gol` as CUBINs for each of [`SHIPPED_ARCHES`]: what `--engine auto`
/// runs on a GPU under each dimension's default rule, `cuda-bitsliced` with Life in 2D and
/// B6/S567 in 3D. Other engines and rules are compiled by NVRTC on first use and cached on disk.
pub fn shipped() -> [String; 2] {
    [bitsliced(Rule::LIFE), cube_bitsliced(Rule::LIFE_3D)]
}
