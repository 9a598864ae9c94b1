//! Ctrl-C (SIGINT) and SIGTERM during `gol run`: once the generation loop runs, the first asks
//! the run to stop at its next pause between steps, where it writes a final checkpoint if it
//! keeps them; the second ends the process at once with exit code 130, leaving the files it had
//! written (checkpoints are replaced atomically, so the previous one stays whole). Before the
//! loop (reading the input, starting a GPU) there is nothing to save: a signal ends the process
//! at once, with the shell's exit code for it.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The first signal received; 0 for none.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// Whether the generation loop has started ([`looping`]).
static LOOPING: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(signal: libc::c_int) {
    let first = RECEIVED.swap(signal, Ordering::SeqCst) == 0;
    if !LOOPING.load(Ordering::SeqCst) {
        const SAID: &[u8] = b"gol: interrupted during set-up, before any generation\n";
        // SAFETY: write and _exit are async-signal-safe; the message is a static buffer.
        unsafe {
            libc::write(2, SAID.as_ptr().cast(), SAID.len());
            libc::_exit(128 + signal);
        }
    }
    if !first {
        // SAFETY: _exit is async-signal-safe and ends the process without running anything
        // else.
        unsafe { libc::_exit(130) };
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
        // SAFETY: the handler only touches an atomic and calls _exit, both async-signal-safe.
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
