//! Refusing allocations that cannot fit before making them, and mapping large input files
//! instead of reading them into fresh memory (`map_file`).
//!
//! A grid of 10⁶×10⁶ cells would abort the process if it were simply allocated; instead every
//! large buffer is checked here against the memory the system has available and refused with a
//! message that gives both sizes.

use rayon::prelude::*;

use crate::error::{Error, Result};

/// `file`, opened from `path`, mapped read-only.
pub(crate) fn map_file(path: &std::path::Path, file: &std::fs::File) -> Result<memmap2::Mmap> {
    // SAFETY: the map is read-only, and its users read it while no one else is expected to
    // change the file (if someone truncates it meanwhile, the process may get SIGBUS, as any
    // reader of a memory-mapped file can).
    unsafe { memmap2::Mmap::map(file) }.map_err(|e| Error::io(path, e))
}

/// The memory this process can still be given, in bytes, where the platform tells: the least of
/// Linux's `MemAvailable`, what the address-space limit (`RLIMIT_AS`, `ulimit -v`) leaves above
/// the process's present size, and what its cgroup's memory limit leaves above the cgroup's
/// present use (a container's limit, which `MemAvailable` does not see).
pub fn available_bytes() -> Option<u64> {
    [mem_available(), address_space_left(), cgroup_left()]
        .into_iter()
        .flatten()
        .min()
}

/// What this process has used so far, as `getrusage` tells it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Time spent on the CPU in user mode, over all threads.
    pub user: std::time::Duration,
    /// Time the kernel spent for the process (mostly backing fresh pages in a run of ours).
    pub system: std::time::Duration,
    /// The most resident memory the process has held, in bytes.
    pub peak_rss_bytes: u64,
}

/// This process's [`Usage`] so far; all zero where `getrusage` fails.
pub fn usage() -> Usage {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one rusage where it is pointed, which holds one (zeroed, so
    // initialised whatever it writes).
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } != 0 {
        return Usage::default();
    }
    // SAFETY: zeroed above and filled by getrusage: every field is an integer.
    let usage = unsafe { usage.assume_init() };
    let time =
        |t: libc::timeval| std::time::Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Usage {
        user: time(usage.ru_utime),
        system: time(usage.ru_stime),
        // Linux gives kibibytes.
        peak_rss_bytes: usage.ru_maxrss as u64 * 1024,
    }
}

/// `MemAvailable` of `/proc/meminfo`.
fn mem_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// What `RLIMIT_AS` leaves above the process's address space now (`VmSize`); `None` without a
/// limit.
pub fn address_space_left() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit through a valid pointer to a local.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0
        || limit.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let used = line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024;
    Some(limit.rlim_cur.saturating_sub(used))
}

/// What the memory limits of the process's own cgroup and of those above it leave above their
/// present use, the least of them ([`cgroup_left_in`] on `/proc/self/cgroup` and
/// `/sys/fs/cgroup`); `None` without a limit.
fn cgroup_left() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    cgroup_left_in(std::path::Path::new("/sys/fs/cgroup"), &own)
}

/// What the memory limits leave above present use, the least of them, for a process whose
/// `/proc/self/cgroup` reads `own`, with the cgroup file systems mounted at `root`: cgroup
/// v2's `memory.max` and `memory.current` (the line `0::PATH`, under `root`), or v1's
/// `memory.limit_in_bytes` and `memory.usage_in_bytes` (the line naming the `memory`
/// controller, under `root/memory`), in the process's own cgroup and each above it up to the
/// mount (inside a container the mount is often the container's own cgroup, and the path
/// named does not exist under it: then the levels that do exist are read).
fn cgroup_left_in(root: &std::path::Path, own: &str) -> Option<u64> {
    let read = |path: std::path::PathBuf| -> Option<u64> {
        std::fs::read_to_string(path).ok()?.trim().parse().ok()
    };
    let mut least: Option<u64> = None;
    for line in own.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let (base, limit_file, usage_file) = if controllers.is_empty() {
            (root.to_path_buf(), "memory.max", "memory.current")
        } else if controllers.split(',').any(|c| c == "memory") {
            (
                root.join("memory"),
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            )
        } else {
            continue;
        };
        let mut dir = base.join(path.trim_start_matches('/'));
        loop {
            // v1 writes a huge number for no limit; v2 writes "max", which does not parse.
            if let (Some(limit), Some(used)) =
                (read(dir.join(limit_file)), read(dir.join(usage_file)))
            {
                if limit < 1 << 60 {
                    let left = limit.saturating_sub(used);
                    least = Some(least.map_or(left, |l| l.min(left)));
                }
            }
            if dir == base || !dir.pop() {
                break;
            }
        }
    }
    least
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

/// Requests below this are not checked: reading what is available (three files) costs more
/// than making a small grid, which engines do once a generation on the plane's window; an
/// allocation the system refuses is an error anyway ([`zeroed_vec`]).
const UNCHECKED: u64 = 16 << 20;

/// Refuses `bytes` for `what` if it is more than the memory available.
pub fn check(bytes: u64, what: &str) -> Result<()> {
    if bytes < UNCHECKED {
        return Ok(());
    }
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

/// Element types whose all-zero bytes are a value: what [`zeroed_vec`] hands out.
pub trait Zeroed: Copy + Default {}
impl Zeroed for u8 {}
impl Zeroed for u32 {}
impl Zeroed for u64 {}

/// A zero-filled vector of `count` elements, checked with [`check`] first; an allocation the
/// system refuses anyway (a limit `check` could not see) is an error too, never an abort.
pub fn zeroed_vec<T: Zeroed>(count: u64, what: &str) -> Result<Vec<T>> {
    let too_large = || Error::Memory(format!("{what} is too large to address"));
    let bytes = count
        .checked_mul(std::mem::size_of::<T>() as u64)
        .filter(|&b| b <= isize::MAX as u64)
        .ok_or_else(too_large)?;
    check(bytes, what)?;
    let count = count as usize;
    let layout = std::alloc::Layout::array::<T>(count).map_err(|_| too_large())?;
    if layout.size() == 0 {
        return Ok(Vec::new());
    }
    // Zeroed pages from the allocator cost nothing until touched, as with `vec![0; n]`.
    // SAFETY: the layout has a non-zero size.
    let pointer = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if pointer.is_null() {
        return Err(Error::Memory(format!(
            "{what} needs {} of memory, which the system refused",
            human_bytes(bytes)
        )));
    }
    // SAFETY: the pointer comes from the global allocator with the layout of `count` elements
    // of T, and those `count` elements are initialised: all-zero bytes are a T ([`Zeroed`]).
    Ok(unsafe { Vec::from_raw_parts(pointer, count, count) })
}

/// The indices `0..count`, as the readers of rows take them: checked with [`check`] and
/// allocated fallibly, so that a list for a world too large is an error, not an abort.
pub fn indices(count: usize, what: &str) -> Result<Vec<usize>> {
    let bytes = (count as u64).saturating_mul(std::mem::size_of::<usize>() as u64);
    check(bytes, what)?;
    let mut list = Vec::new();
    list.try_reserve_exact(count).map_err(|_| {
        Error::Memory(format!(
            "{what} needs {} of memory, which the system refused",
            human_bytes(bytes)
        ))
    })?;
    list.extend(0..count);
    Ok(list)
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn cgroup_limits_are_read_from_the_process_own_group_and_those_above() {
        let root = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = root.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        // v2: the own group allows 1000 with 400 used; its parent 5000 with 4700 used.
        write("a/b/memory.max", "1000\n");
        write("a/b/memory.current", "400\n");
        write("a/memory.max", "5000\n");
        write("a/memory.current", "4700\n");
        write("memory.max", "max\n");
        write("memory.current", "9999\n");
        assert_eq!(cgroup_left_in(root.path(), "0::/a/b\n"), Some(300));
        write("a/memory.max", "max\n");
        assert_eq!(cgroup_left_in(root.path(), "0::/a/b\n"), Some(600));
        // A path that is not under the mount (a container's own view): the mount's own.
        write("memory.max", "2000\n");
        assert_eq!(cgroup_left_in(root.path(), "0::/elsewhere/c\n"), Some(0));
        // v1, the memory controller's line among others; no limit is a huge number.
        write("memory/x/memory.limit_in_bytes", "800\n");
        write("memory/x/memory.usage_in_bytes", "100\n");
        write("memory/memory.limit_in_bytes", "9223372036854771712\n");
        write("memory/memory.usage_in_bytes", "5\n");
        let v1 = "5:cpu,cpuacct:/x\n4:memory:/x\n1:name=systemd:/\n";
        assert_eq!(cgroup_left_in(root.path(), v1), Some(700));
        assert_eq!(cgroup_left_in(root.path(), "4:memory:/y\n"), None);
    }

    #[test]
    fn usage_counts_time_on_the_cpu_and_the_memory_held() {
        let before = usage();
        // 64 MiB written: resident at once, and some user time to count.
        let mut held = vec![1u8; 64 << 20];
        let spin = std::time::Instant::now();
        let mut x = 0u64;
        while spin.elapsed() < std::time::Duration::from_millis(50) {
            for b in held.iter_mut().step_by(4096) {
                x = x.wrapping_mul(31).wrapping_add(*b as u64);
                *b = x as u8;
            }
        }
        std::hint::black_box(&held);
        let after = usage();
        assert!(after.user + after.system > before.user + before.system);
        assert!(after.peak_rss_bytes >= 64 << 20, "{after:?}");
    }

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
