//! Front-end caches: the per-sub-core L0 instruction cache with its stream-buffer
//! prefetcher and the SM's shared L1 instruction/constant cache
//! (modern-nvidia-gpu-cores §5.2; MICRO'25 reference A6, rules 30–33).

use crate::config::CacheGeom;

/// A set-associative cache of line tags with LRU replacement (tags only).
#[derive(Debug, Clone)]
pub struct TagCache {
    sets: u32,
    assoc: usize,
    line: u64,
    /// `sets - 1` and `log2(line)` when they are powers of two (every preset's caches): the
    /// set and the line are then a mask and a shift, not divisions (a lookup per fetch and
    /// per constant operand).
    set_mask: Option<u64>,
    line_shift: Option<u32>,
    ways: Vec<Way>,
    tick: u64,
}

const INVALID: u64 = u64::MAX;

/// A way of a [`TagCache`] set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Way {
    /// The line it holds (`INVALID`: none).
    tag: u64,
    /// The cache's use count at its last hit or fill (the least recently used way goes).
    last_use: u64,
}

/// A line on its way into an instruction or constant cache: a demand miss, a stream-buffer
/// prefetch or an L1 fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineFill {
    pub line: u64,
    /// The cycle it arrives (`u64::MAX`: not known yet; a demand miss until the L1 arbiter
    /// sends it, a stream-buffer line until it arrives).
    pub ready: u64,
}

impl LineFill {
    /// `line`, with no arrival cycle yet.
    pub fn waiting(line: u64) -> Self {
        LineFill {
            line,
            ready: u64::MAX,
        }
    }
}

impl TagCache {
    pub fn new(g: &CacheGeom) -> Self {
        let sets = g.sets();
        let line = g.line_bytes.max(1) as u64;
        TagCache {
            sets,
            assoc: g.assoc.max(1) as usize,
            line,
            set_mask: sets.is_power_of_two().then(|| u64::from(sets) - 1),
            line_shift: line.is_power_of_two().then(|| line.trailing_zeros()),
            ways: vec![
                Way {
                    tag: INVALID,
                    last_use: 0
                };
                sets as usize * g.assoc.max(1) as usize
            ],
            tick: 0,
        }
    }

    #[inline]
    pub fn line_of(&self, addr: u64) -> u64 {
        match self.line_shift {
            Some(k) => addr >> k,
            None => addr / self.line,
        }
    }

    #[inline]
    fn set_range(&self, line: u64) -> std::ops::Range<usize> {
        let s = match self.set_mask {
            Some(m) => (line & m) as usize,
            None => (line % self.sets as u64) as usize,
        };
        s * self.assoc..(s + 1) * self.assoc
    }

    /// Look up a line; updates LRU on a hit (a miss changes nothing: the LRU order is that
    /// of the use times, which only hits and fills set).
    pub fn probe(&mut self, line: u64) -> bool {
        let r = self.set_range(line);
        for w in &mut self.ways[r] {
            if w.tag == line {
                self.tick += 1;
                w.last_use = self.tick;
                return true;
            }
        }
        false
    }

    pub fn contains(&self, line: u64) -> bool {
        self.ways[self.set_range(line)].iter().any(|w| w.tag == line)
    }

    /// Insert a line, evicting the LRU way.
    pub fn fill(&mut self, line: u64) {
        self.tick += 1;
        let t = self.tick;
        let r = self.set_range(line);
        let set = &mut self.ways[r];
        if let Some(w) = set.iter_mut().find(|w| w.tag == line) {
            w.last_use = t;
            return;
        }
        if let Some(w) = set
            .iter_mut()
            .min_by_key(|w| if w.tag == INVALID { 0 } else { w.last_use })
        {
            *w = Way {
                tag: line,
                last_use: t,
            };
        }
    }
}

/// A stream buffer: on a miss it prefetches the next `entries` sequential lines.
#[derive(Debug, Clone, Default)]
pub struct StreamBuffer {
    pub entries: usize,
    /// The lines it prefetched, in order.
    pub lines: std::collections::VecDeque<LineFill>,
}

impl StreamBuffer {
    pub fn new(entries: u32) -> Self {
        StreamBuffer {
            entries: entries as usize,
            lines: std::collections::VecDeque::with_capacity(entries as usize),
        }
    }

    /// Position of `line` in the buffer.
    pub fn find(&self, line: u64) -> Option<usize> {
        self.lines.iter().position(|l| l.line == line)
    }
}
