//! How a warp's access splits into cache lines and sectors (shared by the L1 and by the loads
//! that bypass it).

/// Calls `f(line, sectors, bytes)` for every line-sized piece of every active lane's access,
/// in lane order: `line` is the line's index (address >> `line_shift`), `sectors` the mask
/// of the 2^`sector_shift`-byte sectors the piece touches, `bytes` its size. An access at the
/// top of the address space (a trace address that wrapped around) ends there instead of
/// wrapping to 0.
#[inline]
pub fn lane_pieces(
    addrs: &[u64; 32],
    active: u32,
    bytes_per_lane: u32,
    line_shift: u32,
    sector_shift: u32,
    mut f: impl FnMut(u64, u8, u32),
) {
    let bytes = bytes_per_lane.max(1) as u64;
    let lmask = (1u64 << line_shift) - 1;
    for (lane, &a) in addrs.iter().enumerate() {
        if active & (1 << lane) == 0 {
            continue;
        }
        let end = a.saturating_add(bytes - 1);
        let mut line_addr = a & !lmask;
        loop {
            let lo = a.max(line_addr);
            let hi = end.min(line_addr + lmask);
            let s0 = (lo & lmask) >> sector_shift;
            let s1 = (hi & lmask) >> sector_shift;
            let mask = (((1u32 << (s1 + 1)) - 1) & !((1u32 << s0) - 1)) as u8;
            f(line_addr >> line_shift, mask, (hi - lo + 1) as u32);
            match line_addr.checked_add(lmask + 1) {
                Some(next) if next <= end => line_addr = next,
                _ => break,
            }
        }
    }
}
