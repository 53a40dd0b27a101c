//! Hints to the host CPU's caches, for the simulator's hot paths. Nothing to do with the
//! GPU's instruction set: this is the lowest crate that the functional engine, the timing
//! model and the GPU driver share. A hint changes no result.
//!
//! A loaded GPU's state (every warp's register rows and in-flight records, every warp's
//! trace records) is far larger than the host's caches, and each warp touches its part only
//! every few simulated cycles, between the other SMs' steps: without hints most of those
//! reads miss every cache (docs/performance-log.md, thirteenth session of 2026-11-27).

/// A hint that the cache line holding `p` will be read soon, where the target has such an
/// instruction. `p` need not point to anything: a prefetch never faults.
#[inline(always)]
pub fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` never faults and changes nothing the program can observe, for any
    // address; SSE is part of every x86_64 target.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// [`prefetch`] of every cache line of the `len` bytes from `p`.
#[inline(always)]
pub fn prefetch_bytes(p: *const u8, len: usize) {
    if len == 0 {
        return;
    }
    let mut off = 0;
    while off < len {
        prefetch(p.wrapping_add(off));
        off += LINE_BYTES;
    }
    // The last byte's line (`p` need not be aligned).
    prefetch(p.wrapping_add(len - 1));
}

/// [`prefetch_bytes`] of what `x` occupies.
#[inline(always)]
pub fn prefetch_val<T: ?Sized>(x: &T) {
    prefetch_bytes(std::ptr::from_ref(x).cast(), std::mem::size_of_val(x));
}

/// The cache-line size assumed by [`prefetch_bytes`] (x86_64, most ARM cores).
pub const LINE_BYTES: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_never_read_what_they_point_to() {
        // Addresses that any read would fault on: null, the last byte of the address space,
        // freed memory, and a range that wraps.
        prefetch(std::ptr::null());
        prefetch(usize::MAX as *const u8);
        let freed = Box::new([7u8; 256]);
        let p = std::ptr::from_ref(&*freed).cast::<u8>();
        drop(freed);
        prefetch_bytes(p, 256);
        prefetch_bytes((usize::MAX - 100) as *const u8, 1_000);
        prefetch_bytes(std::ptr::null(), 0);
        let v = vec![1u32; 100];
        prefetch_val(&v[..]);
        assert_eq!(v.iter().sum::<u32>(), 100);
    }
}
