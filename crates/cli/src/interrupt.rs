//! Ctrl-C (SIGINT) and SIGTERM during `gol run`: once the generation loop runs, the first asks
//! the run to stop at its next pause between steps, where it writes a final checkpoint if it
//! keeps them; the second ends the process at once with exit code 130, leaving the files it had
//! written (checkpoints are replaced atomically, so the previous one stays whole). Before the
//! loop (reading the input, starting a GPU) there is nothing to save: a signal ends the process
//! at once, with the shell's exit code for it. Ending at once, it first removes the temporary
//! file of an output being written ([`remove_if_ended`]), so that no partial file is left.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};

/// The first signal received; 0 for none.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// Set by the first signal once the loop runs: what long steps on the infinite plane look at
/// inside a step.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Whether the generation loop has started ([`looping`]).
static LOOPING: AtomicBool = AtomicBool::new(false);

/// The temporary file to remove before ending at once ([`remove_if_ended`]): a C string
/// leaked for the handler, or null.
static TEMPORARY: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

extern "C" fn on_signal(signal: libc::c_int) {
    let first = RECEIVED.swap(signal, Ordering::SeqCst) == 0;
    STOP.store(true, Ordering::SeqCst);
    if !LOOPING.load(Ordering::SeqCst) {
        const SAID: &[u8] = b"gol: interrupted during set-up, before any generation\n";
        // SAFETY: write and _exit are async-signal-safe; the message is a static buffer.
        unsafe {
            libc::write(2, SAID.as_ptr().cast(), SAID.len());
            end(128 + signal);
        }
    }
    if !first {
        end(130);
    }
}

/// Removes the temporary file, if one was named, and ends the process with `code`.
fn end(code: libc::c_int) -> ! {
    let temporary = TEMPORARY.load(Ordering::SeqCst);
    // SAFETY: unlink and _exit are async-signal-safe; `temporary` is null or a NUL-terminated
    // string that is never freed. _exit ends the process without running anything else.
    unsafe {
        if !temporary.is_null() {
            libc::unlink(temporary);
        }
        libc::_exit(code)
    }
}

/// Names the temporary file of the output, to be removed if a signal ends the process at once:
/// named before it is made, so that no signal falls between the two. Before the output is begun
/// and after it is in place, that name is not there (or, for an instant, holds the replaced
/// file, about to be removed anyway), so it needs no clearing.
pub fn remove_if_ended(temporary: &Path) {
    if let Ok(name) = CString::new(temporary.as_os_str().as_bytes()) {
        // The name before, if any, is leaked: the handler may be reading it.
        TEMPORARY.store(name.into_raw(), Ordering::SeqCst);
    }
}

/// Says that the generation loop starts: from now on a first signal stops the run between
/// steps rather than ending the process.
pub fn looping() {
    LOOPING.store(true, Ordering::SeqCst);
}

/// Catches SIGINT and SIGTERM from now on.
pub fn catch() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only touches atomics and calls write, unlink and _exit, all
        // async-signal-safe.
        unsafe {
            libc::signal(signal, on_signal as *const () as libc::sighandler_t);
        }
    }
}

/// The signal that asked the run to stop, if one has.
pub fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// A run stopped by a signal: the error `gol run` ends with, whose exit code is the shell's for
/// the signal (130 for SIGINT, 143 for SIGTERM).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Interrupted {
    pub signal: i32,
    pub message: String,
}

impl Interrupted {
    /// 128 + the signal's number.
    pub fn exit_code(&self) -> u8 {
        (128 + self.signal).clamp(0, 255) as u8
    }
}

/// The signal's name, for messages.
pub fn name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}
