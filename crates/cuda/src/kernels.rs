//! The kernel sources, embedded in the binary, and the source each engine compiles.
//!
//! NVRTC gets no headers: shared pieces are pasted together instead. The rule is pasted in as
//! `#define BIRTH`/`SURVIVE` masks; `rule.cu` (or `constant.cu`) defines `NEXT_STATE` from it
//! for the update kernels, and `cuda-bitsliced` gets the rule as a circuit of LOP3s
//! ([`circuit::source`]) in front of its source.

use std::sync::Arc;

use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{CudaFunction, CudaModule, DriverError};
use gol_core::Rule;

use crate::circuit;

/// The compiled-in rule's `NEXT_STATE`.
pub const RULE: &str = include_str!("../kernels/rule.cu");
/// Ghost-cell refresh and update kernels of cuda-global and cuda-constant.
pub const GLOBAL: &str = include_str!("../kernels/global.cu");
/// cuda-constant's rule table in constant memory and its `NEXT_STATE`.
pub const CONSTANT: &str = include_str!("../kernels/constant.cu");
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
/// `before` and `after` on one axis of the 3D torus, pasted in front of every 3D kernel.
pub const CUBE_WRAP: &str = include_str!("../kernels/cube_wrap.cu");
/// The 3D byte-cell kernels of cuda-global and cuda-shared.
pub const CUBE_BYTES: &str = include_str!("../kernels/cube_bytes.cu");
/// The 3D cuda-swar kernel (four byte cells per word).
pub const CUBE_SWAR: &str = include_str!("../kernels/cube_swar.cu");
/// The 3D cuda-bitsliced kernel.
pub const CUBE_BITSLICED: &str = include_str!("../kernels/cube_bitsliced.cu");

/// `parts` behind the rule's masks as `#define`s.
pub fn with_rule(rule: Rule, parts: &[&str]) -> String {
    let mut source = format!(
        "#define BIRTH {}u\n#define SURVIVE {}u\n",
        rule.birth_mask(),
        rule.survive_mask()
    );
    for part in parts {
        source.push_str(part);
        source.push('\n');
    }
    source
}

/// What an engine compiles and launches.
pub struct KernelSpec {
    /// The engine's registered name.
    pub engine: &'static str,
    /// Sources pasted together (after the rule's `#define`s).
    pub parts: &'static [&'static str],
    /// The update kernel's name.
    pub function: &'static str,
    /// A variant of it with `int` indices and no row loop, for grids under 2³¹ bytes whose
    /// rows one launch covers.
    pub small_function: Option<&'static str>,
    /// The default thread block (x, y).
    pub default_block: (u32, u32),
    /// Whether the rule is compiled in (`cuda-constant` fills a table at run time instead).
    pub rule_compiled_in: bool,
    /// Whether blocks overlap by two cells (a one-cell halo each side): each block updates its
    /// (x − 2) × (y − 2) interior and takes x × y bytes of dynamic shared memory.
    pub tiled: bool,
    /// Whether the engine sets its own launch shape (`--block` is refused).
    pub fixed_block: bool,
    /// Whether the source starts with the rule as a LOP3 circuit ([`circuit::source`]).
    pub rule_circuit: bool,
    /// Dynamic shared memory each block takes for a table, whatever the block (bytes).
    pub shared_table: u32,
}

/// Every CUDA engine's kernel.
pub const SPECS: &[KernelSpec] = &[
    KernelSpec {
        engine: "cuda-bitsliced",
        parts: &[DEPENDENT, BITSLICED],
        function: "advance_16",
        small_function: None,
        default_block: (32, 4),
        rule_compiled_in: true,
        tiled: false,
        fixed_block: true,
        rule_circuit: true,
        shared_table: 0,
    },
    KernelSpec {
        engine: "cuda-global",
        parts: &[RULE, GLOBAL],
        function: "update_cells",
        small_function: Some("update_cells_small"),
        default_block: (16, 16),
        rule_compiled_in: true,
        tiled: false,
        fixed_block: false,
        rule_circuit: false,
        shared_table: 0,
    },
    KernelSpec {
        engine: "cuda-constant",
        parts: &[CONSTANT, GLOBAL],
        function: "update_cells",
        small_function: Some("update_cells_small"),
        default_block: (16, 16),
        rule_compiled_in: false,
        tiled: false,
        fixed_block: false,
        rule_circuit: false,
        shared_table: 0,
    },
    KernelSpec {
        engine: "cuda-shared",
        parts: &[RULE, SHARED],
        function: "update_cells_shared",
        small_function: Some("update_cells_shared_small"),
        default_block: (32, 16),
        rule_compiled_in: true,
        tiled: true,
        fixed_block: false,
        rule_circuit: false,
        shared_table: 0,
    },
    KernelSpec {
        engine: "cuda-texture",
        parts: &[RULE, TEXTURE],
        function: "update_cells_texture",
        small_function: None,
        default_block: (16, 16),
        rule_compiled_in: true,
        tiled: false,
        fixed_block: false,
        rule_circuit: false,
        shared_table: 0,
    },
    KernelSpec {
        engine: "cuda-lut",
        parts: &[LUT],
        function: "update_cells_lut",
        small_function: None,
        default_block: (32, 8),
        rule_compiled_in: true,
        tiled: false,
        fixed_block: false,
        rule_circuit: false,
        shared_table: 0,
    },
    KernelSpec {
        engine: "cuda-lut6",
        parts: &[LUT],
        function: "update_cells_lut6",
        small_function: None,
        default_block: (32, 32),
        rule_compiled_in: true,
        tiled: false,
        fixed_block: false,
        rule_circuit: false,
        shared_table: 1 << 17,
    },
];

/// Every 3D CUDA engine's kernel.
pub const SPECS_3D: &[KernelSpec] = &[
    KernelSpec {
        engine: "cuda-bitsliced",
        parts: &[CUBE_WRAP, DEPENDENT, CUBE_BITSLICED],
        function: "cube_bitsliced",
        small_function: None,
        default_block: (32, 4),
        rule_compiled_in: true,
        tiled: false,
        fixed_block: true,
        rule_circuit: false,
        shared_table: 0,
    },
    KernelSpec {
        engine: "cuda-swar",
        parts: &[CUBE_WRAP, CUBE_SWAR],
        function: "cube_swar",
        small_function: None,
        default_block: (32, 8),
        rule_compiled_in: true,
        tiled: false,
        fixed_block: true,
        rule_circuit: false,
        shared_table: 0,
    },
    KernelSpec {
        engine: "cuda-shared",
        parts: &[RULE, CUBE_WRAP, CUBE_BYTES],
        function: "cube_shared",
        small_function: None,
        default_block: (32, 16),
        rule_compiled_in: true,
        tiled: true,
        fixed_block: false,
        rule_circuit: false,
        shared_table: 0,
    },
    KernelSpec {
        engine: "cuda-global",
        parts: &[RULE, CUBE_WRAP, CUBE_BYTES],
        function: "cube_global",
        small_function: None,
        default_block: (32, 8),
        rule_compiled_in: true,
        tiled: false,
        fixed_block: false,
        rule_circuit: false,
        shared_table: 0,
    },
];

impl KernelSpec {
    /// The source to compile for `rule`.
    pub fn source(&self, rule: Rule) -> String {
        let rule = if self.rule_compiled_in {
            rule
        } else {
            Rule::LIFE
        };
        if self.rule_circuit {
            let circuit = circuit::source(rule);
            let parts: Vec<&str> = std::iter::once(circuit.as_str())
                .chain(self.parts.iter().copied())
                .collect();
            with_rule(rule, &parts)
        } else {
            with_rule(rule, self.parts)
        }
    }

    /// Dynamic shared memory per block, in bytes.
    pub fn shared_bytes(&self, block: (u32, u32)) -> u32 {
        let tile = if self.tiled { block.0 * block.1 } else { 0 };
        tile + self.shared_table
    }

    /// The update kernel from `module`, allowed the table's shared memory where that is more
    /// than a block gets without asking.
    pub fn load(&self, module: &Arc<CudaModule>) -> Result<CudaFunction, DriverError> {
        let function = module.load_function(self.function)?;
        if self.shared_table > 0 {
            function.set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                self.shared_table as i32,
            )?;
        }
        Ok(function)
    }

    /// Cells (x, y) one block updates.
    pub fn cells_per_block(&self, block: (u32, u32)) -> (u32, u32) {
        if self.tiled {
            (block.0 - 2, block.1 - 2)
        } else {
            block
        }
    }

    /// Refuses blocks the kernel cannot use (overlapping blocks need an interior).
    pub fn check_block(&self, block: (u32, u32)) -> Result<(), String> {
        if self.tiled && (block.0 < 3 || block.1 < 3) {
            return Err(format!(
                "{} needs blocks of at least 3x3 (each block loads a one-cell halo around its interior); got {}x{}",
                self.engine, block.0, block.1
            ));
        }
        Ok(())
    }
}

/// The kernel of the 2D engine `engine` (one of [`SPECS`]).
pub fn spec(engine: &str) -> &'static KernelSpec {
    SPECS
        .iter()
        .find(|s| s.engine == engine)
        .expect("every CUDA engine has a kernel spec")
}

/// The kernel of the 3D engine `engine` (one of [`SPECS_3D`]).
pub fn spec_3d(engine: &str) -> &'static KernelSpec {
    SPECS_3D
        .iter()
        .find(|s| s.engine == engine)
        .expect("every 3D CUDA engine has a kernel spec")
}
