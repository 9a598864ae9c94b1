//! Refusing allocations that cannot fit before making them.
//!
//! A grid of 10⁶×10⁶ cells would abort the process if it were simply allocated; instead every
//! large buffer is checked here against the memory the system has available and refused with a
//! message that gives both sizes.

use rayon::prelude::*;

use crate::error::{Error, Result};

/// The memory the system can give us now, in bytes, if the platform tells (Linux's
/// `MemAvailable`).
pub fn available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Maps every page of `buf`, a fresh zeroed allocation, into the process from all cores before
/// a copy from a GPU fills it: the driver copies into ordinary memory through its own staging
/// buffers on one thread, which otherwise stops at each fresh page for the kernel to map and
/// zero it (a 128 MiB download on the H100 host took 0.12–0.15 s into fresh memory, 0.02 s into
/// memory mapped first). It writes zeros in chunks of a huge page: a read before the write
/// would first map the shared zero page and then split it, two faults per page.
pub fn prefault_zeroed<T: Default + Copy + Send>(buf: &mut [T]) {
    const CHUNK_BYTES: usize = 2 << 20;
    let per_chunk = (CHUNK_BYTES / std::mem::size_of::<T>().max(1)).max(1);
    buf.par_chunks_mut(per_chunk)
        .for_each(|chunk| chunk.fill(T::default()));
}

/// Formats a byte count with a binary unit.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Refuses `bytes` for `what` if it is more than the memory available.
pub fn check(bytes: u64, what: &str) -> Result<()> {
    if let Some(available) = available_bytes() {
        if bytes > available {
            return Err(Error::Memory(format!(
                "{what} needs {} of memory, but only {} is available",
                human_bytes(bytes),
                human_bytes(available)
            )));
        }
    }
    Ok(())
}

/// A zero-filled vector of `count` elements, checked with [`check`] first.
pub fn zeroed_vec<T: Copy + Default>(count: u64, what: &str) -> Result<Vec<T>> {
    let bytes = count
        .checked_mul(std::mem::size_of::<T>() as u64)
        .filter(|&b| b <= isize::MAX as u64)
        .ok_or_else(|| Error::Memory(format!("{what} is too large to address")))?;
    check(bytes, what)?;
    // `vec![zero; n]` asks the allocator for zeroed pages, which costs nothing until touched.
    Ok(vec![T::default(); count as usize])
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn formats_sizes() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }

    #[test]
    fn refuses_more_than_available() {
        let err = zeroed_vec::<u64>(1 << 50, "a test buffer")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("a test buffer needs"), "{err}");
        assert_eq!(zeroed_vec::<u8>(10, "small").unwrap(), vec![0; 10]);
    }
}
