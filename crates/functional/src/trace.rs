//! Control-flow traces and their comparison (Hanoi paper, section IX: Levenshtein distance
//! between two traces divided by the trace length).

use serde::Serialize;

/// The control-flow trace of one warp: the (PC, active mask) of every issued instruction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WarpTrace {
    /// Warp id within the launch.
    pub warp: u32,
    pub cta: u32,
    pub warp_in_cta: u32,
    pub entries: Vec<(u64, u32)>,
}

/// Discrepancy of one warp.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WarpDiscrepancy {
    pub cta: u32,
    pub warp_in_cta: u32,
    /// Levenshtein distance between the two traces.
    pub distance: usize,
    /// Length of the reference trace (`a`).
    pub len: usize,
    /// distance / len (0 when both are empty).
    pub ratio: f64,
}

/// Result of [`cflow_compare`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CflowReport {
    pub per_warp: Vec<WarpDiscrepancy>,
    /// Sum of distances / sum of reference lengths.
    pub overall: f64,
    /// Warps present in only one of the two sets (compared against an empty trace).
    pub unmatched: usize,
}

/// Levenshtein distance (insert, delete, substitute; unit costs). Common prefixes and
/// suffixes are stripped first, so nearly identical traces are cheap.
pub fn levenshtein<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let p = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[p..], &b[p..]);
    let s = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a, b) = (&a[..a.len() - s], &b[..b.len() - s]);
    if a.is_empty() {
        return b.len();
    }
    if b.is_empty() {
        return a.len();
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0usize; b.len() + 1];
    for (i, x) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, y) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(x != y);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Compare two sets of warp traces (`a` is the reference, e.g. hardware), matching warps by
/// (CTA, warp in CTA). Trace elements are (PC, active mask) pairs.
pub fn cflow_compare(a: &[WarpTrace], b: &[WarpTrace]) -> CflowReport {
    let key = |t: &WarpTrace| (t.cta, t.warp_in_cta);
    let mut per_warp = Vec::new();
    let (mut dist, mut len, mut unmatched) = (0usize, 0usize, 0usize);
    let empty: Vec<(u64, u32)> = Vec::new();
    let mut keys: Vec<(u32, u32)> = a.iter().map(key).chain(b.iter().map(key)).collect();
    keys.sort_unstable();
    keys.dedup();
    for k in keys {
        let ta = a.iter().find(|t| key(t) == k);
        let tb = b.iter().find(|t| key(t) == k);
        if ta.is_none() || tb.is_none() {
            unmatched += 1;
        }
        let ea = ta.map_or(&empty, |t| &t.entries);
        let eb = tb.map_or(&empty, |t| &t.entries);
        let d = levenshtein(ea, eb);
        let l = ea.len();
        dist += d;
        len += l;
        per_warp.push(WarpDiscrepancy {
            cta: k.0,
            warp_in_cta: k.1,
            distance: d,
            len: l,
            ratio: if l == 0 {
                if d == 0 {
                    0.0
                } else {
                    1.0
                }
            } else {
                d as f64 / l as f64
            },
        });
    }
    CflowReport {
        per_warp,
        overall: if len == 0 { 0.0 } else { dist as f64 / len as f64 },
        unmatched,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levenshtein_basics() {
        assert_eq!(levenshtein(b"kitten", b"sitting"), 3);
        assert_eq!(levenshtein(b"", b"abc"), 3);
        assert_eq!(levenshtein(b"abc", b"abc"), 0);
        assert_eq!(levenshtein(b"flaw", b"lawn"), 2);
    }

    #[test]
    fn compare_matches_warps_and_normalises() {
        let t = |cta, w, e: &[(u64, u32)]| WarpTrace {
            warp: w,
            cta,
            warp_in_cta: w,
            entries: e.to_vec(),
        };
        let a = vec![
            t(0, 0, &[(0, 0xf), (0x10, 0xf), (0x20, 0x3), (0x30, 0xc)]),
            t(0, 1, &[(0, 0xf)]),
        ];
        // Warp 0: the two paths in the other order (2 edits); warp 1 identical.
        let b = vec![
            t(0, 1, &[(0, 0xf)]),
            t(0, 0, &[(0, 0xf), (0x10, 0xf), (0x30, 0xc), (0x20, 0x3)]),
        ];
        let r = cflow_compare(&a, &b);
        assert_eq!(r.per_warp.len(), 2);
        assert_eq!((r.per_warp[0].distance, r.per_warp[0].len), (2, 4));
        assert_eq!(r.per_warp[0].ratio, 0.5);
        assert_eq!(r.per_warp[1].distance, 0);
        assert!((r.overall - 2.0 / 5.0).abs() < 1e-12);
        assert_eq!(r.unmatched, 0);
        assert_eq!(cflow_compare(&a, &a).overall, 0.0);
    }
}
