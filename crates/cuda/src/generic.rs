//! A rule never seen before runs at once: cuda-bitsliced starts it on a generic kernel, built
//! into `gol`, that reads the rule from constant memory ([`Generic`]), while NVRTC compiles the
//! rule's own kernel on another thread; the engine moves to the rule's own kernel at the first
//! launch after that compile is done, and a run that ends first does not wait for it.
//!
//! `GOL_RULE_KERNEL` chooses otherwise: `own` waits for the rule's own kernel as before (a
//! kernel cached or built in runs at once either way), `generic` runs the generic kernel
//! throughout (compiled first where `gol` does not ship it), `auto` (the default) as above.

use std::sync::Arc;

use cudarc::driver::{CudaModule, CudaStream};
use gol_core::Rule;

use crate::device::{Compiling, Gpu};
use crate::error::{CudaError, Result};
use crate::source::Generic;

/// Which kernel a rule runs on (`GOL_RULE_KERNEL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// The rule's own kernel where it is ready, else the generic one while it compiles.
    Auto,
    /// The rule's own kernel, compiled first where it must be.
    Own,
    /// The generic kernel throughout.
    Generic,
}

impl Choice {
    /// `GOL_RULE_KERNEL`: `auto` (or unset), `own` or `generic`.
    pub fn from_env() -> Result<Choice> {
        match std::env::var("GOL_RULE_KERNEL").as_deref() {
            Err(_) | Ok("auto") => Ok(Choice::Auto),
            Ok("own") => Ok(Choice::Own),
            Ok("generic") => Ok(Choice::Generic),
            Ok(other) => Err(CudaError::Refused(format!(
                "GOL_RULE_KERNEL={other:?}: expected auto, own or generic"
            ))),
        }
    }
}

/// How cuda-bitsliced would start a rule in a new process here, found without a GPU: what
/// `auto` counts ([`readiness`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readiness {
    /// The rule's own kernel is built into `gol` or cached on disk.
    Ready,
    /// The rule starts on a generic kernel built into `gol`; its own kernel is compiled
    /// meanwhile where `compiling` (NVRTC is there, and `GOL_RULE_KERNEL` allows it).
    Generic {
        /// Whether the rule's own kernel is compiled meanwhile.
        compiling: bool,
        /// Whether the generic kernel takes the rule by the sums (the 3x3 sum and the
        /// centre, [`sums_leaves`]; 3D rules always), about ten times faster than over the
        /// nine cells.
        by_sums: bool,
    },
    /// The rule's own kernel must be compiled before the first generation.
    Compile,
}

/// How cuda-bitsliced would start `rule` in `axes` dimensions in a new process here: whether
/// its own kernel is built in or cached for any of the architectures `gol` ships, else whether
/// a generic kernel built in runs it. Reads the disk cache's folder, and loads NVRTC only for a
/// rule that starts on a generic kernel.
pub fn readiness(rule: Rule, axes: u32) -> Readiness {
    let choice = Choice::from_env().unwrap_or(Choice::Auto);
    let (own, generic) = match axes {
        2 => (crate::source::bitsliced(rule), Generic::flat(rule)),
        _ => (crate::source::cube_bitsliced(rule), Generic::Solid),
    };
    if choice != Choice::Generic && crate::device::is_ready_anywhere(&own) {
        return Readiness::Ready;
    }
    if choice != Choice::Own && crate::device::is_ready_anywhere(&generic.source()) {
        return Readiness::Generic {
            compiling: choice == Choice::Auto && crate::nvrtc::present(),
            by_sums: axes == 3 || sums_leaves(rule).is_some(),
        };
    }
    Readiness::Compile
}

/// The table `kernels/generic.cu` reads for 2D `rule` (`rule_leaves`): entry `i` all ones where
/// a cell whose neighbourhood is `i` lives at the next generation (bit 3r + c of `i` the cell
/// in row r, column c; the centre bit 4), else 0.
pub fn flat_leaves(rule: Rule) -> [u32; 512] {
    std::array::from_fn(|cells| match rule.next_cells(cells as u16) {
        true => u32::MAX,
        false => 0,
    })
}

/// The table `kernels/generic.cu` reads for 2D `rule` by the sums (`rule_sums`), where the
/// rule's next state depends on the 3x3 sum and the centre alone: entry `e` (bits t0, u0, k0,
/// u1 and the centre, as the kernel hands them to `rule_next`) all ones where that sum's cells
/// live on. Checked against every neighbourhood: `None` for other rules.
pub fn sums_leaves(rule: Rule) -> Option<[u32; 32]> {
    let entry = |cells: u32| {
        let row = |r: u32| (cells >> (3 * r) & 7).count_ones();
        let (a, b, c) = (row(0), row(1), row(2));
        let low = (a & 1) + (b & 1) + (c & 1);
        let high = (a >> 1) + (b >> 1) + (c >> 1);
        (low & 1) | (high & 1) << 1 | (low >> 1) << 2 | (high >> 1) << 3 | (cells >> 4 & 1) << 4
    };
    let mut sums = [0u32; 32];
    for cells in 0..512u32 {
        sums[entry(cells) as usize] = match rule.next_cells(cells as u16) {
            true => u32::MAX,
            false => 0,
        };
    }
    (0..512u32)
        .all(|cells| (sums[entry(cells) as usize] != 0) == rule.next_cells(cells as u16))
        .then_some(sums)
}

/// Writes 2D `rule` into a generic kernel's module: its table (and by the sums, where the rule
/// takes them) and, under a Generations rule, its last dying state.
pub fn fill_flat(module: &Arc<CudaModule>, stream: &Arc<CudaStream>, rule: Rule) -> Result<()> {
    write(module, stream, "rule_leaves", &flat_leaves(rule))?;
    let sums = sums_leaves(rule);
    write(module, stream, "rule_sums", &sums.unwrap_or([0; 32]))?;
    write(module, stream, "rule_by_sums", &[sums.is_some() as u32])?;
    if rule.is_generations() {
        write(module, stream, "rule_age_last", &[rule.states() - 2])?;
    }
    stream.synchronize()?;
    Ok(())
}

/// Writes 3D `rule` into the generic 3D kernel's module: its birth and survival masks.
pub fn fill_solid(module: &Arc<CudaModule>, stream: &Arc<CudaStream>, rule: Rule) -> Result<()> {
    let masks = [rule.birth_mask(), rule.survive_mask()];
    write(module, stream, "rule_masks", &masks)?;
    stream.synchronize()?;
    Ok(())
}

/// Writes `words` into the module's global `name` (queued on `stream`).
fn write(
    module: &Arc<CudaModule>,
    stream: &Arc<CudaStream>,
    name: &str,
    words: &[u32],
) -> Result<()> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut global = module.get_global(name, stream)?;
    stream.memcpy_htod(&bytes, &mut global)?;
    Ok(())
}

/// A backend's kernels `K`, made from the rule's own module or, while that compiles, from a
/// generic one.
pub struct RuleKernels<K> {
    /// The kernels launched now.
    pub kernels: K,
    /// The rule's own module compiling, while the generic kernels run.
    compiling: Option<Compiling>,
    /// Whether `kernels` are the generic ones.
    generic: bool,
    /// Why the rule's own kernel could not be had, where its compile failed.
    failed: Option<String>,
}

impl<K> RuleKernels<K> {
    /// The kernels for a rule whose own source is `own`, as `choice` says: under
    /// [`Choice::Auto`], the rule's own where they are ready, else those of `generic`'s module
    /// (filled with the rule by `fill`) while `own` compiles, where `gol` ships it; `build`
    /// makes the kernels from a module and whether it is generic.
    pub fn start(
        gpu: &Gpu,
        choice: Choice,
        own: String,
        generic: Generic,
        fill: impl FnOnce(&Arc<CudaModule>) -> Result<()>,
        build: impl FnOnce(&Arc<CudaModule>, bool) -> Result<K>,
    ) -> Result<RuleKernels<K>> {
        let ready = match choice {
            Choice::Generic => None,
            Choice::Own => Some(gpu.module(&own)?),
            Choice::Auto => gpu.ready_module(&own),
        };
        let (module, compiling, generic) = match ready {
            Some(module) => (module, None, false),
            None => {
                let generic_module = match choice {
                    Choice::Generic => Some(gpu.private_module(&generic.source())?),
                    _ => gpu.ready_private_module(&generic.source()),
                };
                match generic_module {
                    Some(module) => {
                        fill(&module)?;
                        let compiling =
                            (choice == Choice::Auto).then(|| gpu.compile_in_background(own));
                        (module, compiling, true)
                    }
                    None => (gpu.module(&own)?, None, false),
                }
            }
        };
        Ok(RuleKernels {
            kernels: build(&module, generic)?,
            compiling,
            generic,
            failed: None,
        })
    }

    /// Moves to the rule's own kernels, made by `build`, where their compile is done; keeps
    /// the generic ones where it failed (noted for [`RuleKernels::describe`]).
    pub fn poll(
        &mut self,
        stream: &Arc<CudaStream>,
        build: impl FnOnce(&Gpu, &Arc<CudaModule>) -> Result<K>,
    ) -> Result<()> {
        let Some(compiling) = &mut self.compiling else {
            return Ok(());
        };
        let gpu = crate::device::gpu_on(stream.context().ordinal())?;
        let Some(compiled) = compiling.module(&gpu) else {
            return Ok(());
        };
        self.compiling = None;
        match compiled.and_then(|module| build(&gpu, &module)) {
            Ok(kernels) => {
                self.kernels = kernels;
                self.generic = false;
            }
            Err(e) => self.failed = Some(e.to_string()),
        }
        Ok(())
    }

    /// Whether the kernels are the generic ones.
    pub fn is_generic(&self) -> bool {
        self.generic
    }

    /// What the report should say of the rule's kernel where it is the generic one.
    pub fn describe(&self) -> Option<String> {
        if !self.generic {
            return None;
        }
        Some(match (&self.compiling, &self.failed) {
            (Some(_), _) => "the generic rule kernel while the rule's own compiles".into(),
            (None, Some(why)) => format!(
                "the generic rule kernel (the rule's own failed to compile: {})",
                why.lines().next().unwrap_or_default()
            ),
            (None, None) => "the generic rule kernel".into(),
        })
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn rules_of_the_sums_alone_take_the_sums_table() {
        for text in [
            "B3/S23",
            "B36/S23",
            "B0123478/S01234678",
            "B/S",
            "B3/S23/C5",
        ] {
            let rule = Rule::parse(text).unwrap();
            let sums = sums_leaves(rule).unwrap_or_else(|| panic!("{text}"));
            // Life: a dead centre (bit 4 clear) with a sum of 3 (t0 = 1, u0 + k0 = 1).
            if text == "B3/S23" {
                assert_eq!(sums[0b00011], u32::MAX);
                assert_eq!(sums[0b00101], u32::MAX);
                assert_eq!(sums[0b01000], 0);
            }
        }
        for text in ["B2-a/S12", "B2/S34H", "B2/S013V"] {
            assert_eq!(sums_leaves(Rule::parse(text).unwrap()), None, "{text}");
        }
        let life = flat_leaves(Rule::LIFE);
        assert_eq!(life.iter().filter(|&&l| l != 0).count(), 140);
    }
}
