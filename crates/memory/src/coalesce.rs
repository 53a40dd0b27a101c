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

/// Most lines one warp access is split into (each lane's piece may cross one line
/// boundary: 32 lanes × 2; a longer access is cut there).
pub(crate) const MAX_LINES: usize = 64;

/// One coalesced line of a warp access.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LineReq {
    pub line: u64,
    /// Set of the line in the L1 (computed once, with the coalescing).
    pub set: u32,
    pub sectors: u8,
    pub bytes: u32,
    /// Lane pieces merged into the line.
    pub lanes: u16,
}

/// How an access is split: the line and sector sizes (as shifts).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LineGeometry {
    pub line_shift: u32,
    pub sector_shift: u32,
}

/// Mask of sectors `s0..=s1`.
#[inline]
fn sector_range(s0: u64, s1: u64) -> u8 {
    (((1u32 << (s1 + 1)) - 1) & !((1u32 << s0) - 1)) as u8
}

/// Adds a piece (`line`, `mask`, `bytes`) to the lines `out[..n]`: merged into its line (the
/// last one added to, `*last`, is tried first), else appended (dropped past `MAX_LINES`).
#[inline]
fn merge_piece(
    out: &mut [LineReq; MAX_LINES],
    n: &mut usize,
    last: &mut usize,
    piece: LineReq,
    set_of: &impl Fn(u64) -> u32,
) {
    let i = if *last < *n && out[*last].line == piece.line {
        *last
    } else if let Some(i) = out[..*n].iter().position(|l| l.line == piece.line) {
        i
    } else if *n < MAX_LINES {
        out[*n] = LineReq {
            set: set_of(piece.line),
            ..piece
        };
        *last = *n;
        *n += 1;
        return;
    } else {
        return;
    };
    *last = i;
    let l = &mut out[i];
    l.sectors |= piece.sectors;
    l.bytes += piece.bytes;
    l.lanes += piece.lanes;
}

/// The lines of a warp access (`addrs`, `active`, `bytes_per_lane`) written to `out`, in
/// order of first touch, each with the sectors, bytes and lane pieces of every active lane
/// ([`lane_pieces`]) merged; `set_of` gives a line's set. Returns how many.
pub(crate) fn coalesce_lines(
    addrs: &[u64; 32],
    active: u32,
    bytes_per_lane: u32,
    g: LineGeometry,
    out: &mut [LineReq; MAX_LINES],
    set_of: impl Fn(u64) -> u32,
) -> usize {
    if let Some(n) = coalesce_contiguous(addrs, active, bytes_per_lane, g, out, &set_of) {
        return n;
    }
    if let Some(n) = coalesce_uncrossed(addrs, active, bytes_per_lane, g, out, &set_of) {
        return n;
    }
    let (mut n, mut last) = (0usize, 0usize);
    lane_pieces(
        addrs,
        active,
        bytes_per_lane,
        g.line_shift,
        g.sector_shift,
        |line, sectors, bytes| {
            let piece = LineReq {
                line,
                set: 0,
                sectors,
                bytes,
                lanes: 1,
            };
            merge_piece(out, &mut n, &mut last, piece, &set_of)
        },
    );
    n
}

/// [`coalesce_lines`] of a whole warp reading consecutive, naturally aligned elements
/// (lane `i` at `addrs[0] + i × bytes`): the lines of that one range, each with as many
/// lanes as elements (none crosses a line); `None` for any other access.
#[inline]
fn coalesce_contiguous(
    addrs: &[u64; 32],
    active: u32,
    bytes_per_lane: u32,
    g: LineGeometry,
    out: &mut [LineReq; MAX_LINES],
    set_of: &impl Fn(u64) -> u32,
) -> Option<usize> {
    let bytes = bytes_per_lane.max(1) as u64;
    let a0 = addrs[0];
    let lmask = (1u64 << g.line_shift) - 1;
    if active != u32::MAX || !bytes.is_power_of_two() || a0 & (bytes - 1) != 0 || bytes > lmask + 1 {
        return None;
    }
    let end = a0.checked_add(addrs.len() as u64 * bytes - 1)?;
    // Every lane at its place (one pass, no early exit: the compiler vectorises it).
    let mut diff = 0u64;
    for (i, &a) in addrs.iter().enumerate() {
        diff |= a ^ a0.wrapping_add(i as u64 * bytes);
    }
    if diff != 0 {
        return None;
    }
    let mut n = 0usize;
    let mut lo = a0;
    loop {
        let hi = end.min(lo | lmask);
        let len = hi - lo + 1;
        let line = lo >> g.line_shift;
        out[n] = LineReq {
            line,
            set: set_of(line),
            sectors: sector_range((lo & lmask) >> g.sector_shift, (hi & lmask) >> g.sector_shift),
            bytes: len as u32,
            lanes: (len / bytes) as u16,
        };
        n += 1;
        if hi == end {
            return Some(n);
        }
        lo = hi + 1;
    }
}

/// [`coalesce_lines`] when no lane's access crosses a line boundary (the common case: each
/// lane is one piece), lane by lane with the line of the previous lane tried first; `None`
/// (and `out` to be rewritten) at the first lane that crosses.
#[inline]
fn coalesce_uncrossed(
    addrs: &[u64; 32],
    active: u32,
    bytes_per_lane: u32,
    g: LineGeometry,
    out: &mut [LineReq; MAX_LINES],
    set_of: &impl Fn(u64) -> u32,
) -> Option<usize> {
    let bytes = bytes_per_lane.max(1) as u64;
    let lmask = (1u64 << g.line_shift) - 1;
    let (mut n, mut last) = (0usize, 0usize);
    let mut m = active;
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        let a = addrs[lane & 31];
        let off = a & lmask;
        let end = off + (bytes - 1);
        if end > lmask {
            return None;
        }
        let line = a >> g.line_shift;
        if n == 0 || out[last].line != line {
            last = match out[..n].iter().position(|l| l.line == line) {
                Some(i) => i,
                None => {
                    // At most one line per lane: never past `MAX_LINES`.
                    out[n] = LineReq {
                        line,
                        set: set_of(line),
                        sectors: 0,
                        bytes: 0,
                        lanes: 0,
                    };
                    n += 1;
                    n - 1
                }
            };
        }
        let l = &mut out[last];
        l.sectors |= sector_range(off >> g.sector_shift, end >> g.sector_shift);
        l.bytes += bytes as u32;
        l.lanes += 1;
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines of an access merged the plain way: every piece of [`lane_pieces`] added
    /// to its line, found by a search from the first.
    fn reference(addrs: &[u64; 32], active: u32, bytes: u32, g: LineGeometry) -> Vec<(u64, u8, u32, u16)> {
        let mut v: Vec<(u64, u8, u32, u16)> = Vec::new();
        lane_pieces(
            addrs,
            active,
            bytes,
            g.line_shift,
            g.sector_shift,
            |line, s, b| match v.iter_mut().find(|l| l.0 == line) {
                Some(l) => {
                    l.1 |= s;
                    l.2 += b;
                    l.3 += 1;
                }
                None => v.push((line, s, b, 1)),
            },
        );
        v
    }

    /// A small deterministic generator (xorshift).
    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    #[test]
    fn fast_coalescing_matches_lane_pieces() {
        let g = LineGeometry {
            line_shift: 7,
            sector_shift: 5,
        };
        let mut x = 0x1234_5678_9abc_def1u64;
        let (mut crossed, mut contiguous) = (0, 0);
        for case in 0..4000 {
            let bytes = 1u32 << (next(&mut x) % 5);
            let base = match case % 4 {
                0 => next(&mut x) % (1 << 20),
                1 => u64::MAX - (next(&mut x) % 512),
                _ => (next(&mut x) % (1 << 20)) & !(bytes as u64 - 1),
            };
            let mut addrs = [0u64; 32];
            for (lane, a) in addrs.iter_mut().enumerate() {
                *a = match case % 3 {
                    // Unit stride, strided, or scattered over a few lines.
                    0 => base.wrapping_add(lane as u64 * bytes as u64),
                    1 => base.wrapping_add(lane as u64 * (next(&mut x) % 300)),
                    _ => base.wrapping_add(next(&mut x) % 1024),
                };
            }
            let active = if case % 5 == 0 {
                u32::MAX
            } else {
                next(&mut x) as u32
            };
            let mut out = [LineReq::default(); MAX_LINES];
            let n = coalesce_lines(&addrs, active, bytes, g, &mut out, |l| (l % 64) as u32);
            let got: Vec<_> = out[..n]
                .iter()
                .map(|l| (l.line, l.sectors, l.bytes, l.lanes))
                .collect();
            assert_eq!(got, reference(&addrs, active, bytes, g), "case {case}");
            assert!(out[..n].iter().all(|l| l.set == (l.line % 64) as u32));
            crossed += coalesce_uncrossed(&addrs, active, bytes, g, &mut out, &|_| 0).is_none() as u32;
            contiguous += coalesce_contiguous(&addrs, active, bytes, g, &mut out, &|_| 0).is_some() as u32;
        }
        // Every path was taken.
        assert!(
            crossed > 100 && crossed < 3900,
            "{crossed} accesses crossed a line"
        );
        assert!(contiguous > 20, "{contiguous} contiguous accesses");
    }

    #[test]
    fn unit_stride_access_is_one_line_per_128_bytes() {
        let g = LineGeometry {
            line_shift: 7,
            sector_shift: 5,
        };
        let addrs: [u64; 32] = std::array::from_fn(|i| 0x1000 + 8 * i as u64);
        let mut out = [LineReq::default(); MAX_LINES];
        let n = coalesce_lines(&addrs, u32::MAX, 8, g, &mut out, |_| 0);
        assert_eq!(n, 2);
        assert_eq!(
            (out[0].line, out[0].sectors, out[0].bytes, out[0].lanes),
            (0x20, 0xf, 128, 16)
        );
        assert_eq!(
            (out[1].line, out[1].sectors, out[1].bytes, out[1].lanes),
            (0x21, 0xf, 128, 16)
        );
    }
}
