//! Large zeroed arrays read and written at random: the transposition
//! table, and a layer pair's slot states and the values of the layers its
//! forward moves reach while it is solved.
//!
//! Random access over gigabytes misses the processor's address
//! translation cache on almost every access when memory comes in 4 KiB
//! pages. On Linux these arrays ask for huge pages (2 MiB) instead,
//! which is what `madvise(MADV_HUGEPAGE)` does where the system's
//! transparent huge pages are set to `madvise` (a common default). The
//! advice changes nothing else: where the system has no huge pages to
//! give, the array keeps ordinary ones.

use bytemuck::Zeroable;

/// Arrays smaller than this keep ordinary pages: the translation cache
/// covers them well enough.
const HUGE_FROM_BYTES: usize = 4 << 20;

/// `len` zeroed values, in huge pages where the system gives them. The
/// memory is asked for as zeroed, which the system provides lazily, and
/// the advice comes before the first write, so pages are huge from the
/// start.
pub fn zeroed_vec<T: Zeroable>(len: usize) -> Vec<T> {
    let mut values = bytemuck::zeroed_vec(len);
    prefer_huge_pages(&mut values);
    values
}

/// [`zeroed_vec`] as a boxed slice, or `None` when the memory cannot be
/// had (a `Hash` too large for the machine).
pub fn try_zeroed_slice<T: Zeroable>(len: usize) -> Option<Box<[T]>> {
    let mut values = bytemuck::allocation::try_zeroed_slice_box(len).ok()?;
    prefer_huge_pages(&mut values);
    Some(values)
}

/// Asks the system to back the whole pages inside `values` with huge
/// pages.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn prefer_huge_pages<T>(values: &mut [T]) {
    let bytes = std::mem::size_of_val(values);
    if bytes < HUGE_FROM_BYTES {
        return;
    }
    const PAGE: usize = 4096;
    let start = values.as_mut_ptr() as usize;
    let first = start.next_multiple_of(PAGE);
    let end = (start + bytes) / PAGE * PAGE;
    // SAFETY: [first, end) lies inside the allocation `values` owns, and
    // MADV_HUGEPAGE only says how the system should back those pages: it
    // neither moves nor changes their contents, so no Rust reference is
    // affected. A failure (no huge pages in this kernel) leaves the pages
    // as they were, which is why its result is not needed.
    unsafe {
        libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn prefer_huge_pages<T>(_values: &mut [T]) {}

/// Allocations this large or larger are mapped from the system on their
/// own ([`map_large_blocks`]).
const OWN_MAPPING_FROM_BYTES: usize = 4 << 20;

/// Makes every allocation of [`OWN_MAPPING_FROM_BYTES`] or more a mapping
/// of its own, given back to the system when it is freed. glibc's
/// allocator otherwise raises that bound to the size of each such block
/// freed (up to 32 MiB) and serves blocks below it from its heaps, which
/// keep freed memory resident: a solve, which allocates and frees layers
/// of many sizes on several threads, held 341 to 377 MiB for a 6 x 6
/// four-car solve whose peak is 193 MiB with this. (128 KiB did as well
/// for memory but cost 5 x 5's solve 6 s of page faults, 4 MiB costs it
/// about 1 s; 16 MiB let that peak reach 226 MiB; a `malloc_trim`
/// after each pair did not bring the memory down.)
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn map_large_blocks() {
    // SAFETY: mallopt sets a tuning parameter of the allocator; it
    // touches no memory the program holds, and a refusal (its result)
    // leaves the allocator as it was.
    unsafe {
        libc::mallopt(
            libc::M_MMAP_THRESHOLD,
            OWN_MAPPING_FROM_BYTES as libc::c_int,
        );
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn map_large_blocks() {}

/// The process's peak resident memory in bytes (Linux only).
pub fn peak_bytes() -> Option<u64> {
    status_bytes("VmHWM:")
}

/// The process's resident memory now in bytes (Linux only).
pub fn resident_bytes() -> Option<u64> {
    status_bytes("VmRSS:")
}

/// A line of /proc/self/status (given in KiB) in bytes.
fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU16, Ordering};

    #[test]
    fn arrays_of_every_size_start_zeroed_and_hold_what_is_written() {
        for len in [
            0,
            1,
            4095,
            HUGE_FROM_BYTES / 2 + 3,
            3 * HUGE_FROM_BYTES / 2 + 1,
        ] {
            let values: Vec<AtomicU16> = zeroed_vec(len);
            assert_eq!(values.len(), len);
            assert!(values.iter().all(|v| v.load(Ordering::Relaxed) == 0));
            for (i, v) in values.iter().enumerate().step_by(997) {
                v.store(i as u16 | 1, Ordering::Relaxed);
            }
            for (i, v) in values.iter().enumerate() {
                let expected = if i % 997 == 0 { i as u16 | 1 } else { 0 };
                assert_eq!(v.load(Ordering::Relaxed), expected, "slot {i} of {len}");
            }
            let slice: Box<[u64]> = try_zeroed_slice(len).unwrap();
            assert!(slice.iter().all(|&v| v == 0));
        }
        assert!(try_zeroed_slice::<u64>(usize::MAX / 4).is_none());
    }
}
