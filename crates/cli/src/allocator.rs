//! `gol`'s global allocator: mimalloc for small blocks, the system's for large ones.
//!
//! The census's look at a GPU's stopped soups, on every core at once, makes and frees many small
//! things (each soup's clusters, tally and codes) on one thread and frees them on another; with
//! mimalloc it took 40% less CPU time than with glibc's malloc (one H200's host,
//! docs/benchmarks/census.md). Large blocks (grids, files read whole) stay with the system's
//! allocator, which maps each one on its own and unmaps it when freed: mimalloc keeps the address
//! space of freed huge blocks in its arenas, so that a buffer grown by doubling under an
//! address-space limit (`ulimit -v`) ran out of room at half the size the limit allows.
//!
//! Which allocator a block came from is told by its size alone: `GlobalAlloc` is always given
//! back the layout a block was allocated with.
//!
//! mimalloc reserves address space an arena at a time, 1 GiB for its first by default, all of it
//! counted against an address-space limit and by what `gol` reckons such a limit leaves; before
//! its first block, [`Split`] makes that first arena 64 MiB (later ones grow as mimalloc grows
//! them). It is set at run time, so that it holds however `gol` is built (a setting of
//! mimalloc's C at build time is lost under a user's own `CFLAGS` or in a `cargo install`);
//! mimalloc's own `MIMALLOC_ARENA_RESERVE` in the environment still overrides it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Once;

use libmimalloc_sys::{mi_option_set_default, mi_option_t};
use mimalloc::MiMalloc;

/// `mi_option_arena_reserve`, its place in mimalloc's `mi_option_e` (mimalloc.h, the same in its
/// versions 2 and 3; libmimalloc-sys names no constant for it): the address space an arena
/// reserves, in KiB.
const ARENA_RESERVE: mi_option_t = 23;

/// The first arena's address space, in KiB: 64 MiB.
const FIRST_ARENA_KIB: std::ffi::c_long = 64 * 1024;

/// Whether mimalloc's arena size has been set.
static SET_UP: Once = Once::new();

/// mimalloc, its first arena's size set before its first block.
fn mimalloc() -> MiMalloc {
    SET_UP.call_once(|| {
        // SAFETY: mi_option_set_default only stores a value in mimalloc's table of options
        // (where the environment has not set it), for an option that exists; it allocates
        // nothing, so it cannot re-enter this allocator.
        unsafe { mi_option_set_default(ARENA_RESERVE, FIRST_ARENA_KIB) }
    });
    MiMalloc
}

/// Blocks of this many bytes or more go to the system's allocator.
const LARGE: usize = 1 << 20;

/// Whether a block of `size` bytes is mimalloc's (below [`LARGE`]), not the system's.
fn small(size: usize) -> bool {
    size < LARGE
}

/// mimalloc below [`LARGE`] bytes, the system's allocator from there up.
pub struct Split;

// SAFETY: every block is allocated and freed by the same allocator, chosen by its layout's size,
// which `GlobalAlloc`'s callers give back unchanged on `dealloc` and `realloc`; a block that
// changes side on `realloc` is copied into a new block of the other side and the old one freed by
// its own. Both allocators are themselves sound `GlobalAlloc`s.
unsafe impl GlobalAlloc for Split {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract (a layout of non-zero size) passes on unchanged.
        unsafe {
            if small(layout.size()) {
                mimalloc().alloc(layout)
            } else {
                System.alloc(layout)
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        unsafe {
            if small(layout.size()) {
                mimalloc().alloc_zeroed(layout)
            } else {
                System.alloc_zeroed(layout)
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` with this layout, so from the allocator its size picks.
        unsafe {
            if small(layout.size()) {
                MiMalloc.dealloc(ptr, layout)
            } else {
                System.dealloc(ptr, layout)
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match (small(layout.size()), small(new_size)) {
            // SAFETY: `ptr` came from the allocator both sizes pick, with this layout.
            (true, true) => unsafe { mimalloc().realloc(ptr, layout, new_size) },
            // SAFETY: as above.
            (false, false) => unsafe { System.realloc(ptr, layout, new_size) },
            _ => {
                // SAFETY: `new_size` with the old alignment is a valid layout by `realloc`'s
                // contract; the new block holds at least the bytes copied, which the old one
                // holds too, and the two are distinct blocks; the old one is freed with its own
                // layout after the copy.
                unsafe {
                    let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                    let new = self.alloc(new_layout);
                    if !new.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    new
                }
            }
        }
    }
}
