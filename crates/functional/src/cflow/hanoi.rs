//! Hanoi (Control Flow Management in Modern GPUs, section VII): a warp-split (WS) stack of
//! PC + active mask, a reconvergence (REC) stack of PC + Bx id, 16 Bx registers with valid
//! bits, a waiting mask and a finished mask.
//!
//! Section references: V-B EXIT, V-C BRA, V-D CALL/RET, V-E BMOV/BSSY/BSYNC/BREAK,
//! V-F WARPSYNC, V-G YIELD; VII-A Bx registers, VII-B REC stack, VII-C WS stack.
//!
//! One documented extension (`yield_release`, on by default): the convergence-barrier
//! patent (US 10,067,768, claim 1) lets threads blocked at a convergence barrier proceed
//! once every other participating thread is either blocked there or has executed YIELD
//! ("yielded state"). The sm_86/sm_90 spinlock listings produced by CUDA 13 place BSYNC
//! *before* the critical section (unlike the paper's Figure 5), so without this rule the
//! lock holder would wait at BSYNC forever while its siblings spin. The rule only applies
//! when the paper's sibling swap does not (YIELD with no sibling path); `yield_as_nop`
//! disables both.

use super::{split_paths, CfView, ControlFlow, PathEntry, RecView};
use std::hash::Hasher;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rec {
    pc: u64,
    b: u8,
    warpsync: bool,
}

/// Hanoi state of one warp.
#[derive(Debug, Clone)]
pub struct Hanoi {
    ws: Vec<PathEntry>,
    rec: Vec<Rec>,
    bx: [u32; 16],
    valid: u16,
    waiting: u32,
    /// Bx each waiting thread waits on. Not in the paper (one waiting mask): used so that a
    /// thread waiting at another reconvergence point is never swept into this one (only
    /// matters for programs that would deadlock on hardware, e.g. a missing BREAK).
    wait_b: [u8; 32],
    finished: u32,
    /// Threads in the yielded state for the current top REC entry (extension, see module doc).
    yielded: u32,
    /// Threads the warp was launched with.
    launched: u32,
    yield_release: bool,
}

impl Hanoi {
    pub fn new(launched: u32, start_pc: u64, yield_release: bool) -> Hanoi {
        Hanoi {
            ws: vec![PathEntry {
                pc: start_pc,
                mask: launched,
            }],
            rec: Vec::new(),
            bx: [0; 16],
            valid: 0,
            waiting: 0,
            wait_b: [0; 32],
            finished: 0,
            yielded: 0,
            launched,
            yield_release,
        }
    }

    fn is_valid(&self, b: u8) -> bool {
        self.valid & (1 << b) != 0
    }
    fn set_valid(&mut self, b: u8, v: bool) {
        if v {
            self.valid |= 1 << b;
        } else {
            self.valid &= !(1 << b);
        }
    }

    fn top_mut(&mut self) -> Option<&mut PathEntry> {
        self.ws.last_mut()
    }

    /// Moves the top path to `next_pc` after its `gone` threads left it (popping it if empty).
    fn leave(&mut self, gone: u32, next_pc: u64) {
        if let Some(t) = self.ws.last_mut() {
            t.mask &= !gone;
            if t.mask == 0 {
                self.ws.pop();
            } else {
                t.pc = next_pc;
            }
        }
    }

    /// Threads of the waiting mask that wait on Bx `b`.
    fn arrived(&self, b: u8) -> u32 {
        let mut m = 0;
        let mut w = self.waiting;
        while w != 0 {
            let l = w.trailing_zeros();
            w &= w - 1;
            if self.wait_b[l as usize] == b {
                m |= 1 << l;
            }
        }
        m
    }

    /// `threads` finish their path and wait on Bx `b` (VII-C: popped, added to the waiting mask).
    fn wait(&mut self, threads: u32, b: u8, next_pc: u64) {
        self.waiting |= threads;
        let mut t = threads;
        while t != 0 {
            let l = t.trailing_zeros();
            t &= t - 1;
            self.wait_b[l as usize] = b;
        }
        self.leave(threads, next_pc);
    }

    fn push_rec(&mut self, r: Rec) {
        self.rec.push(r);
        self.yielded = 0;
    }

    /// Reconvergence check (VII-B): "before scheduling the top entry of the WS stack, Hanoi
    /// checks if the reconvergence mask of the top entry in the REC stack is valid and fully
    /// appears in the waiting mask". If so the REC entry is popped, its Bx invalidated, and a
    /// WS entry (REC PC, reconvergence mask) pushed. Repeats while possible. A reconvergence
    /// mask emptied by BREAK/EXIT pops its entry without pushing a path.
    fn settle(&mut self) {
        loop {
            while self.ws.last().is_some_and(|e| e.mask == 0) {
                self.ws.pop();
            }
            let Some(top) = self.rec.last().copied() else {
                break;
            };
            if !self.is_valid(top.b) {
                // "Hanoi never reconverges threads if the Bx register of the top entry in the
                // REC stack is invalid."
                break;
            }
            let m = self.bx[top.b as usize] & !self.finished;
            if m & !self.arrived(top.b) != 0 {
                break;
            }
            self.rec.pop();
            self.yielded = 0;
            self.set_valid(top.b, false);
            self.waiting &= !m;
            if m != 0 {
                self.ws.push(PathEntry { pc: top.pc, mask: m });
            }
        }
    }

    /// The reconvergence mask that defines siblings: the top REC entry's Bx, or every
    /// unfinished thread when the REC stack is empty (the whole warp reconverges at exit).
    fn sibling_scope(&self) -> u32 {
        match self.rec.last() {
            Some(r) => self.bx[r.b as usize],
            None => self.launched & !self.finished,
        }
    }

    fn free_bx(&self) -> Option<u8> {
        (0..16u8)
            .rev()
            .find(|&b| !self.is_valid(b) && !self.rec.iter().any(|r| r.b == b))
    }
}

impl ControlFlow for Hanoi {
    fn restart(&mut self, launched: u32) {
        // Every field, as `Hanoi::new(launched, 0, yield_release)` sets it; the stacks keep
        // their storage.
        let Hanoi {
            ws,
            rec,
            bx,
            valid,
            waiting,
            wait_b,
            finished,
            yielded,
            launched: l,
            yield_release: _,
        } = self;
        ws.clear();
        ws.push(PathEntry {
            pc: 0,
            mask: launched,
        });
        rec.clear();
        *bx = [0; 16];
        *valid = 0;
        *waiting = 0;
        *wait_b = [0; 32];
        *finished = 0;
        *yielded = 0;
        *l = launched;
    }
    fn current(&self) -> Option<PathEntry> {
        self.ws.last().copied()
    }
    fn finished(&self) -> u32 {
        self.finished
    }
    fn live(&self) -> u32 {
        self.launched & !self.finished
    }

    /// VII-C: "For other instructions, only the PC for the top entry in the WS stack needs
    /// to be updated."
    fn advance(&mut self, next_pc: u64) {
        if let Some(t) = self.top_mut() {
            t.pc = next_pc;
        }
    }

    /// V-C / VII-C: a divergent BRA pops its path and pushes one entry per target; "the path
    /// followed by the majority of threads is executed first, so Hanoi pushes this path after
    /// the other one". Also used for CALL/RET (V-D: they only change the PC) and JMP.
    fn branch(&mut self, _pc: u64, groups: &[PathEntry]) {
        let mut buf = [PathEntry { pc: 0, mask: 0 }; 32];
        let paths = split_paths(groups, &mut buf);
        if let [only] = paths {
            self.advance(only.pc);
            return;
        }
        self.ws.pop();
        self.ws.extend_from_slice(paths);
        self.settle();
    }

    /// V-B: EXIT terminates the executing threads; predicated-off threads continue with the
    /// next instruction. VII-A: "Hanoi removes finished threads from all Bx registers and adds
    /// them to the finished mask." VII-C: the WS entry is popped only when all its threads
    /// executed EXIT.
    fn exit(&mut self, mask: u32, next_pc: u64) {
        self.finished |= mask;
        for b in self.bx.iter_mut() {
            *b &= !mask;
        }
        self.waiting &= !mask;
        self.yielded &= !mask;
        self.leave(mask, next_pc);
        self.settle();
    }

    /// V-E / VII-A: BSSY copies the active mask of the top WS entry to Bx and sets its valid
    /// bit; VII-B: it pushes (reconvergence PC, Bx) on the REC stack.
    fn bssy(&mut self, b: u8, rec_pc: u64, next_pc: u64) {
        let m = self.ws.last().map_or(0, |t| t.mask);
        self.bx[b as usize] = m;
        self.set_valid(b, true);
        self.push_rec(Rec {
            pc: rec_pc,
            b,
            warpsync: false,
        });
        self.advance(next_pc);
    }

    /// V-E: BSYNC reconverges the threads of the reconvergence mask in Bx. VII-C: the path
    /// finishes, its threads are added to the waiting mask; VII-B decides when they
    /// reconverge. Threads not in Bx (removed by BREAK) and BSYNCs whose Bx no REC entry
    /// refers to (already reconverged / released) just continue.
    fn bsync(&mut self, b: u8, mask: u32, next_pc: u64) {
        let armed = self.is_valid(b) && self.rec.iter().any(|r| r.b == b);
        if !armed {
            self.advance(next_pc);
            return;
        }
        let waiters = mask & self.bx[b as usize];
        self.wait(waiters, b, next_pc);
        self.settle();
    }

    /// V-E / VII-A: BREAK removes the executing threads from the reconvergence mask in Bx.
    fn brk(&mut self, b: u8, mask: u32, next_pc: u64) {
        self.bx[b as usize] &= !mask;
        self.advance(next_pc);
        self.settle();
    }

    /// VII-A: moving Bx to a register invalidates Bx (`.CLEAR` also zeroes it).
    fn bmov_read(&mut self, b: u8, clear: bool, next_pc: u64) -> u32 {
        let v = self.bx[b as usize];
        self.set_valid(b, false);
        if clear {
            self.bx[b as usize] = 0;
        }
        self.advance(next_pc);
        v
    }

    /// VII-A: writing Bx sets its valid bit again; finished threads are masked out.
    fn bmov_write(&mut self, b: u8, val: u32, next_pc: u64) {
        self.bx[b as usize] = val & !self.finished;
        self.set_valid(b, true);
        self.advance(next_pc);
        self.settle();
    }

    /// V-F / VII-B: WARPSYNC allocates a free Bx, initialises it with the reconvergence mask
    /// and pushes (PC after WARPSYNC, Bx) on the REC stack — only for the first subset of
    /// threads that reaches it. VII-C: the path then finishes and waits. A WARPSYNC executed
    /// by all the threads of its mask together passes straight through.
    fn warpsync(&mut self, mask: u32, executing: u32, next_pc: u64) {
        let m = mask & self.launched & !self.finished;
        let existing = self.rec.iter().any(|r| r.warpsync && r.pc == next_pc);
        if !existing && m & !executing == 0 {
            self.advance(next_pc);
            return;
        }
        let b = match self.rec.iter().rev().find(|r| r.warpsync && r.pc == next_pc) {
            Some(r) => r.b,
            None => {
                let Some(b) = self.free_bx() else {
                    // No free Bx: behave as if converged (limitation; 16 Bx registers).
                    self.advance(next_pc);
                    return;
                };
                self.bx[b as usize] = m;
                self.set_valid(b, true);
                self.push_rec(Rec {
                    pc: next_pc,
                    b,
                    warpsync: true,
                });
                b
            }
        };
        let waiters = executing & m;
        self.wait(waiters, b, next_pc);
        self.settle();
    }

    /// V-G / VII-C: YIELD switches to the sibling path by swapping the top two WS entries,
    /// provided they are siblings (their union is a subset of the top REC entry's
    /// reconvergence mask); otherwise it behaves like a NOP. Extension (module doc): with no
    /// sibling, the yielding threads enter the yielded state, and a barrier whose other
    /// participants are all waiting is released.
    fn yield_(&mut self, next_pc: u64, as_nop: bool) {
        self.advance(next_pc);
        if as_nop {
            return;
        }
        let n = self.ws.len();
        if n >= 2 {
            let u = self.ws[n - 1].mask | self.ws[n - 2].mask;
            if u & !self.sibling_scope() == 0 {
                self.ws.swap(n - 1, n - 2);
                return;
            }
        }
        if !self.yield_release {
            return;
        }
        let Some(top) = self.rec.last().copied() else {
            return;
        };
        if !self.is_valid(top.b) {
            return;
        }
        let m = self.bx[top.b as usize] & !self.finished;
        let me = self.ws.last().map_or(0, |t| t.mask);
        let arrived = self.arrived(top.b);
        if m & arrived == 0 || me & !m != 0 {
            return;
        }
        self.yielded |= me;
        if m & !(arrived | self.yielded) == 0 {
            let w = m & arrived;
            self.rec.pop();
            self.set_valid(top.b, false);
            self.waiting &= !w;
            self.yielded = 0;
            self.ws.push(PathEntry { pc: top.pc, mask: w });
            self.settle();
        }
    }

    fn view(&self) -> CfView {
        let mut bx = [(0u32, false); 16];
        for (i, v) in bx.iter_mut().enumerate() {
            *v = (self.bx[i], self.is_valid(i as u8));
        }
        CfView::Hanoi {
            ws: self.ws.clone(),
            rec: self
                .rec
                .iter()
                .map(|r| RecView {
                    pc: r.pc,
                    b: r.b,
                    warpsync: r.warpsync,
                })
                .collect(),
            bx,
            waiting: self.waiting,
            finished: self.finished,
        }
    }

    fn stuck_reason(&self) -> Option<String> {
        if !self.ws.is_empty() || self.live() == 0 {
            return None;
        }
        Some(match self.rec.last() {
            Some(r) => format!(
                "threads {:#010x} wait to reconverge at pc {:#x} (B{} = {:#010x}{})",
                self.waiting,
                r.pc,
                r.b,
                self.bx[r.b as usize],
                if self.is_valid(r.b) { "" } else { ", invalid" }
            ),
            None => format!("threads {:#010x} wait with no reconvergence point", self.waiting),
        })
    }

    fn state_hash(&self, h: &mut dyn Hasher) {
        // The stacks' depths first: different splits never hash as the same concatenation.
        h.write_u64(self.ws.len() as u64);
        for p in &self.ws {
            h.write_u64(p.pc);
            h.write_u32(p.mask);
        }
        h.write_u64(self.rec.len() as u64);
        for r in &self.rec {
            h.write_u64(r.pc);
            h.write_u8(r.b);
            h.write_u8(u8::from(r.warpsync));
        }
        self.bx.iter().for_each(|&b| h.write_u32(b));
        h.write_u32(u32::from(self.valid));
        h.write_u32(self.waiting);
        h.write(&self.wait_b);
        h.write_u32(self.finished);
        h.write_u32(self.yielded);
        h.write_u32(self.launched);
    }
}
