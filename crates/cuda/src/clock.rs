//! Timing on the device: CUDA events around the generation loop, host clocks around copies.

use std::time::Instant;

use cudarc::driver::sys::CUevent_flags;

use cudarc::driver::CudaStream;

use crate::error::Result;

/// Seconds spent so far by an engine, by phase.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timings {
    /// Host-to-device copies (and layout conversion on the host).
    pub upload: f64,
    /// Generation loop, between two CUDA events.
    pub generations: f64,
    /// Device-to-host copies (and layout conversion on the host).
    pub download: f64,
}

impl Timings {
    /// The phases as [`gol_core::Engine::timings`] reports them.
    pub fn report(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("host-to-device copy", self.upload),
            ("generation loop (CUDA events)", self.generations),
            ("device-to-host copy", self.download),
        ]
    }
}

/// Runs `launches` on `stream` between two events, waits for them, and returns the
/// seconds between the events.
pub fn time_on_device(stream: &CudaStream, launches: impl FnOnce() -> Result<()>) -> Result<f64> {
    let ctx = stream.context();
    let start = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    let stop = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    start.record(stream)?;
    launches()?;
    stop.record(stream)?;
    stop.synchronize()?;
    Ok(start.elapsed_ms(&stop)? as f64 / 1e3)
}

/// Runs `copy` (which must leave the stream idle) and returns its result and the seconds taken.
pub fn time_on_host<T>(copy: impl FnOnce() -> Result<T>) -> Result<(T, f64)> {
    let t = Instant::now();
    let value = copy()?;
    Ok((value, t.elapsed().as_secs_f64()))
}
