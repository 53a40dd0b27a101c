//! Real and optimal register-interval lengths (LTRF paper §7.5, Table 4), in dynamic
//! instructions. The real length is the number of dynamic instructions a warp executes in one
//! interval before it enters another (where it would prefetch); the optimal one is the length
//! of the longest runs of consecutive dynamic instructions that access at most N registers —
//! the greedy split of each warp's instruction stream, which needs the fewest runs. Their ratio
//! shows what the single-entry constraint of intervals costs.

use super::LtrfKernel;
use crate::regset::RegSet;

/// Dynamic instructions and the segments (intervals entered, or optimal runs) they form.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lengths {
    pub instructions: u64,
    pub segments: u64,
}

impl Lengths {
    /// Mean dynamic instructions per segment.
    pub fn mean(&self) -> f64 {
        self.instructions as f64 / self.segments.max(1) as f64
    }
    pub fn add(&mut self, o: &Lengths) {
        self.instructions += o.instructions;
        self.segments += o.segments;
    }
}

/// Real and optimal lengths over `streams`: each warp's executed instructions, as indices
/// into the kernel `a` was computed for; `n` registers per interval.
pub fn dynamic_lengths(a: &LtrfKernel, streams: &[Vec<usize>], n: usize) -> (Lengths, Lengths) {
    let mut real = Lengths::default();
    let mut optimal = Lengths::default();
    for s in streams {
        let mut prev: Option<usize> = None;
        let mut cur = RegSet::default();
        for (k, &i) in s.iter().enumerate() {
            let iv = a.intervals.interval_of.get(i).copied();
            if iv != prev || k == 0 {
                real.segments += 1;
                prev = iv;
            }
            let acc = a.accessed.get(i).copied().unwrap_or_default();
            let merged = cur.or(&acc);
            if k == 0 || merged.regular_len() > n {
                optimal.segments += 1;
                cur = acc;
            } else {
                cur = merged;
            }
        }
        real.instructions += s.len() as u64;
        optimal.instructions += s.len() as u64;
    }
    (real, optimal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ltrf::{analyze, LtrfOptions};
    use crate::test_kernels::kernel;

    /// 16 FADDs of two registers each: with 8 registers per interval, four intervals of four
    /// FADDs (the EXIT joins the last). Run straight, real and optimal runs agree (4 of 4.25
    /// instructions); a warp that runs the first interval's FADDs twice (as a loop would)
    /// stays in it (one real segment), and the optimal split of that stream is as long.
    #[test]
    fn straight_and_repeated_streams() {
        let mut src = String::new();
        for i in 0..16 {
            src += &format!("FADD R{}, R{}, R{} ;\n", 2 * i, 2 * i + 1, 2 * i + 1);
        }
        src += "EXIT ;\n";
        let k = kernel(&src);
        let opts = LtrfOptions {
            registers_per_interval: 8,
            ..LtrfOptions::default()
        };
        let a = analyze(&k, &opts);
        assert_eq!(a.intervals.intervals.len(), 4);
        let straight: Vec<usize> = (0..17).collect();
        let (r, o) = dynamic_lengths(&a, &[straight], 8);
        assert_eq!((r.segments, o.segments, r.instructions), (4, 4, 17));
        assert!((r.mean() - 4.25).abs() < 1e-9);
        let repeated = vec![0, 1, 2, 3, 0, 1, 2, 3, 4, 5];
        let (r, o) = dynamic_lengths(&a, &[repeated], 8);
        assert_eq!((r.segments, o.segments), (2, 2));
        // With 4 registers, the optimal split halves every interval.
        let (_, o4) = dynamic_lengths(&a, &[(0..16).collect()], 4);
        assert_eq!(o4.segments, 8);
    }
}
