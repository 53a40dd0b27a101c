//! The classic immediate-post-dominator SIMT stack (pre-Volta baseline).
//!
//! Each entry holds (PC, active mask, reconvergence PC). A divergent branch turns the top
//! entry into the reconvergence entry (its PC becomes the branch's immediate post-dominator)
//! and pushes one entry per target with that reconvergence PC, the path with most threads
//! on top (same policy as Hanoi, so traces differ only by the reconvergence rules). An entry
//! whose PC reaches its reconvergence PC is popped. Divergence with no post-dominator (e.g. a
//! divergent RET) replaces the top entry and never reconverges.
//!
//! The convergence instructions are hints here: BSSY, BSYNC, BREAK, WARPSYNC and YIELD only
//! advance the PC; BMOV moves values to/from a plain B register file so that programs that
//! spill barrier masks still compute the same values. `BRA.CONV`/`BRA.DIV` test the current
//! mask as usual. As on pre-Volta GPUs, intra-warp spinlocks deadlock under this manager.

use super::ipdom::Ipdom;
use super::{split_paths, CfView, ControlFlow, PathEntry};
use std::hash::Hasher;
use std::sync::Arc;

#[derive(Debug, Clone, Copy)]
struct Entry {
    pc: u64,
    mask: u32,
    rpc: Option<u64>,
}

/// SIMT-stack state of one warp.
#[derive(Debug, Clone)]
pub struct SimtStack {
    stack: Vec<Entry>,
    finished: u32,
    launched: u32,
    b: [u32; 16],
    ipdom: Arc<Ipdom>,
}

impl SimtStack {
    pub fn new(launched: u32, start_pc: u64, ipdom: Arc<Ipdom>) -> SimtStack {
        SimtStack {
            stack: vec![Entry {
                pc: start_pc,
                mask: launched,
                rpc: None,
            }],
            finished: 0,
            launched,
            b: [0; 16],
            ipdom,
        }
    }

    fn settle(&mut self) {
        while let Some(t) = self.stack.last() {
            if t.mask == 0 || t.rpc == Some(t.pc) {
                self.stack.pop();
            } else {
                break;
            }
        }
    }
}

impl ControlFlow for SimtStack {
    fn restart(&mut self, launched: u32) {
        // Every field, as `SimtStack::new(launched, 0, ipdom)` sets it (same code: same
        // post-dominators); the stack keeps its storage.
        let SimtStack {
            stack,
            finished,
            launched: l,
            b,
            ipdom: _,
        } = self;
        stack.clear();
        stack.push(Entry {
            pc: 0,
            mask: launched,
            rpc: None,
        });
        *finished = 0;
        *l = launched;
        *b = [0; 16];
    }
    fn current(&self) -> Option<PathEntry> {
        self.stack.last().map(|e| PathEntry {
            pc: e.pc,
            mask: e.mask,
        })
    }
    fn finished(&self) -> u32 {
        self.finished
    }
    fn live(&self) -> u32 {
        self.launched & !self.finished
    }
    fn advance(&mut self, next_pc: u64) {
        if let Some(t) = self.stack.last_mut() {
            t.pc = next_pc;
        }
        self.settle();
    }
    fn branch(&mut self, pc: u64, groups: &[PathEntry]) {
        let mut buf = [PathEntry { pc: 0, mask: 0 }; 32];
        let paths = split_paths(groups, &mut buf);
        if let [only] = paths {
            self.advance(only.pc);
            return;
        }
        let idx = self.ipdom.pcs.binary_search(&pc).ok();
        let rpc = idx.and_then(|i| self.ipdom.rpc(i));
        let top = *self.stack.last().expect("branch on an empty stack");
        match rpc {
            Some(r) => {
                self.stack.last_mut().expect("top").pc = r;
                for g in paths {
                    self.stack.push(Entry {
                        pc: g.pc,
                        mask: g.mask,
                        rpc: Some(r),
                    });
                }
            }
            None => {
                self.stack.pop();
                for g in paths {
                    self.stack.push(Entry {
                        pc: g.pc,
                        mask: g.mask,
                        rpc: top.rpc,
                    });
                }
            }
        }
        self.settle();
    }
    fn exit(&mut self, mask: u32, next_pc: u64) {
        self.finished |= mask;
        for e in self.stack.iter_mut() {
            e.mask &= !mask;
        }
        if let Some(t) = self.stack.last_mut() {
            if t.mask != 0 {
                t.pc = next_pc;
            }
        }
        // Empty entries anywhere are useless; drop them (keeps the stack small).
        self.stack.retain(|e| e.mask != 0);
        self.settle();
    }
    fn bssy(&mut self, _b: u8, _rec_pc: u64, next_pc: u64) {
        self.advance(next_pc);
    }
    fn bsync(&mut self, _b: u8, _mask: u32, next_pc: u64) {
        self.advance(next_pc);
    }
    fn brk(&mut self, _b: u8, _mask: u32, next_pc: u64) {
        self.advance(next_pc);
    }
    fn bmov_read(&mut self, b: u8, clear: bool, next_pc: u64) -> u32 {
        let v = self.b[b as usize];
        if clear {
            self.b[b as usize] = 0;
        }
        self.advance(next_pc);
        v
    }
    fn bmov_write(&mut self, b: u8, val: u32, next_pc: u64) {
        self.b[b as usize] = val;
        self.advance(next_pc);
    }
    fn warpsync(&mut self, _mask: u32, _executing: u32, next_pc: u64) {
        self.advance(next_pc);
    }
    fn yield_(&mut self, next_pc: u64, _as_nop: bool) {
        self.advance(next_pc);
    }
    fn view(&self) -> CfView {
        CfView::Simt {
            stack: self.stack.iter().map(|e| (e.pc, e.mask, e.rpc)).collect(),
            finished: self.finished,
        }
    }
    fn stuck_reason(&self) -> Option<String> {
        None
    }
    fn state_hash(&self, h: &mut dyn Hasher) {
        // The stack's depth first: stacks of different depths never hash as concatenations.
        h.write_u64(self.stack.len() as u64);
        for e in &self.stack {
            h.write_u64(e.pc);
            h.write_u32(e.mask);
            h.write_u64(e.rpc.unwrap_or(u64::MAX));
        }
        h.write_u32(self.finished);
        h.write_u32(self.launched);
        self.b.iter().for_each(|&b| h.write_u32(b));
    }
}
