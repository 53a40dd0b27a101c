//! A small deterministic generator for the crate's randomised tests (xorshift64).

/// `rnd(n)`: the next number of the sequence from `seed`, in `0..n` (`n` > 0).
pub(crate) fn xorshift(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = seed;
    move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    }
}
