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

/// The table `kernels/generic.cu` reads for 2D `rule` (`rule_leaves`): entry `i` all ones where
/// a cell whose neighbourhood is `i` lives at the next generation (bit 3r + c of `i` the cell
/// in row r, column c; the centre bit 4), else 0.
pub fn flat_leaves(rule: Rule) -> [u32; 512] {
    std::array::from_fn(|cells| match rule.next_cells(cells as u16) {
        true => u32::MAX,
        false => 0,
    })
}

/// Writes 2D `rule` into a generic kernel's module: its table and, under a Generations rule,
/// its last dying state.
pub fn fill_flat(module: &Arc<CudaModule>, stream: &Arc<CudaStream>, rule: Rule) -> Result<()> {
    write(module, stream, "rule_leaves", &flat_leaves(rule))?;
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
