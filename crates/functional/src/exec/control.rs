//! Control-flow instructions (Hanoi paper section V): the engine evaluates guards and
//! operands, the [`ControlFlow`] manager decides which threads run next.

use super::*;

impl Ex<'_> {
    fn target(&self) -> Res<u64> {
        self.d
            .o
            .iter()
            .find_map(|o| match o.k {
                K::Target(t) => Some(t),
                _ => None,
            })
            .ok_or_else(|| self.unsup("missing branch target"))
    }

    /// Lanes of the guard for which the optional second predicate operand (V-A: "the second
    /// predicate register is always the first operand") is also true.
    fn second_pred(&self) -> u32 {
        match self.d.o.iter().find(|o| o.is_pred()) {
            Some(p) => {
                let mut m = 0;
                for l in lanes(self.g) {
                    if self.pred(p, l) {
                        m |= 1 << l;
                    }
                }
                m
            }
            None => self.g,
        }
    }

    fn breg(&self) -> Res<u8> {
        self.d
            .o
            .iter()
            .find_map(|o| match o.k {
                K::B(b) => Some(b),
                _ => None,
            })
            .ok_or_else(|| self.unsup("missing B register"))
    }

    fn first_lane(&self) -> usize {
        if self.g == 0 {
            0
        } else {
            self.g.trailing_zeros() as usize
        }
    }

    pub(super) fn control_op(&mut self, op: &Op) -> Res<()> {
        let np = self.next_pc;
        let pc = self.d.pc;
        let path = self.path;
        match *op {
            Op::Bra { conv, any } => {
                let t = self.target()?;
                let mut taken = self.second_pred();
                if any && taken != 0 {
                    taken = path.mask;
                }
                if let Some(want_conv) = conv {
                    // BRA.CONV / BRA.DIV: branch if the threads named by the (uniform) mask
                    // operand that have not exited are / are not all in the current path.
                    let mask = match self.d.o.iter().find(|o| matches!(o.k, K::UR(_) | K::R(_))) {
                        Some(o) => {
                            let o = o.clone();
                            self.int(&o, self.first_lane())?
                        }
                        None => u32::MAX,
                    };
                    let live = self.k.warps[self.wi].cf.live();
                    let converged = mask & live & !path.mask == 0;
                    if converged != want_conv {
                        taken = 0;
                    }
                }
                let groups = [
                    PathEntry {
                        pc: np,
                        mask: path.mask & !taken,
                    },
                    PathEntry { pc: t, mask: taken },
                ];
                self.k.warps[self.wi].cf.branch(pc, &groups);
            }
            Op::Call if !self.d.o.iter().any(|o| matches!(o.k, K::Target(_))) => {
                // CALL.ABS.NOINC Rn: an external function whose address the driver put in
                // constant bank 4 (device printf, assert, malloc, free).
                let ro = self
                    .d
                    .o
                    .iter()
                    .find(|o| matches!(o.k, K::R(_)))
                    .cloned()
                    .ok_or_else(|| self.unsup("CALL without a target"))?;
                if self.g != 0 {
                    let addr = self.raw64(&ro, self.first_lane())?;
                    for l in lanes(self.g) {
                        if self.raw64(&ro, l)? != addr {
                            return Err(self.unsup("indirect call with different targets per thread"));
                        }
                    }
                    if !self.syscall(addr)? {
                        return Err(self.unsup(&format!(
                            "indirect call to {addr:#x}, which is not an external function sassim provides"
                        )));
                    }
                }
                self.k.warps[self.wi].cf.advance(np);
            }
            Op::Jmp | Op::Call => {
                // V-D: CALL only changes the PC; the return address was put in a register by
                // the compiler (MOV R2, ret) and RET reads it back.
                let t = self.target()?;
                let taken = self.second_pred();
                let groups = [
                    PathEntry {
                        pc: np,
                        mask: path.mask & !taken,
                    },
                    PathEntry { pc: t, mask: taken },
                ];
                self.k.warps[self.wi].cf.branch(pc, &groups);
            }
            Op::Brx { absolute } => {
                let ro = self
                    .d
                    .o
                    .iter()
                    .find(|o| matches!(o.k, K::R(_)))
                    .cloned()
                    .ok_or_else(|| self.unsup("BRX without a register"))?;
                let off = self
                    .d
                    .o
                    .iter()
                    .find_map(|o| match o.k {
                        K::Imm(v) => Some(v),
                        _ => None,
                    })
                    .unwrap_or(0);
                let base = if absolute { 0 } else { np };
                let mut groups = [PathEntry { pc: 0, mask: 0 }; 33];
                let mut n = 1;
                groups[0] = PathEntry {
                    pc: np,
                    mask: path.mask & !self.g,
                };
                for l in lanes(self.g) {
                    let t = self.raw64(&ro, l)?.wrapping_add(off as u64).wrapping_add(base);
                    if self.k.kernel.index_of(t).is_none() {
                        return Err(ExecError::BadPc {
                            warp: self.wi as u32,
                            pc: t,
                        });
                    }
                    match groups[1..n].iter_mut().find(|g| g.pc == t) {
                        Some(g) => g.mask |= 1 << l,
                        None => {
                            groups[n] = PathEntry { pc: t, mask: 1 << l };
                            n += 1;
                        }
                    }
                }
                self.k.warps[self.wi].cf.branch(pc, &groups[..n]);
            }
            Op::Ret => {
                let ro = self
                    .d
                    .o
                    .iter()
                    .find(|o| matches!(o.k, K::R(_)))
                    .cloned()
                    .ok_or_else(|| self.unsup("RET without a register"))?;
                let off = self
                    .d
                    .o
                    .iter()
                    .find_map(|o| match o.k {
                        K::Target(t) => Some(t as i64),
                        K::Imm(v) => Some(v),
                        _ => None,
                    })
                    .unwrap_or(0);
                let mut groups = [PathEntry { pc: 0, mask: 0 }; 33];
                let mut n = 1;
                groups[0] = PathEntry {
                    pc: np,
                    mask: path.mask & !self.g,
                };
                for l in lanes(self.g) {
                    let t = self.raw64(&ro, l)?.wrapping_add(off as u64);
                    match groups[1..n].iter_mut().find(|g| g.pc == t) {
                        Some(g) => g.mask |= 1 << l,
                        None => {
                            groups[n] = PathEntry { pc: t, mask: 1 << l };
                            n += 1;
                        }
                    }
                }
                self.k.warps[self.wi].cf.branch(pc, &groups[..n]);
            }
            Op::Exit => {
                let g = self.g;
                let cf = &mut self.k.warps[self.wi].cf;
                cf.exit(g, np);
                if cf.live() == 0 {
                    self.k.warps[self.wi].exited = true;
                    self.out.exited = true;
                }
            }
            Op::Bssy => {
                if self.g != path.mask {
                    return Err(self.unsup("predicated BSSY"));
                }
                let b = self.breg()?;
                let t = self.target()?;
                self.k.warps[self.wi].cf.bssy(b, t, np);
            }
            Op::Bsync => {
                let b = self.breg()?;
                let g = self.g;
                self.k.warps[self.wi].cf.bsync(b, g, np);
            }
            Op::Break => {
                let b = self.breg()?;
                let m = self.second_pred();
                self.k.warps[self.wi].cf.brk(b, m, np);
            }
            Op::Bmov { clear } => {
                if self.d.o.len() != 2 {
                    return Err(self.unsup("operands"));
                }
                if self.g == 0 {
                    self.k.warps[self.wi].cf.advance(np);
                    return Ok(());
                }
                match (self.d.o[0].k.clone(), self.d.o[1].k.clone()) {
                    (K::R(_), K::B(b)) => {
                        // VII-A / VI-A: all active threads read the same value.
                        let v = self.k.warps[self.wi].cf.bmov_read(b, clear, np);
                        for l in lanes(self.g) {
                            self.wr(0, l, v)?;
                        }
                    }
                    (K::B(b), _) => {
                        if clear {
                            return Err(self.unsup("BMOV.CLEAR into a B register"));
                        }
                        let o = self.d.o[1].clone();
                        let v = self.int(&o, self.first_lane())?;
                        self.k.warps[self.wi].cf.bmov_write(b, v, np);
                    }
                    _ => return Err(self.unsup("operands")),
                }
            }
            Op::Warpsync => {
                let mask = match self.d.o.iter().find(|o| !o.is_pred()) {
                    None => u32::MAX,
                    Some(o) => {
                        let o = o.clone();
                        match o.k {
                            K::Imm(v) => v as u32,
                            K::Target(t) => t as u32,
                            _ => self.int(&o, self.first_lane())?,
                        }
                    }
                };
                let g = self.second_pred();
                // Threads whose guard is false just continue.
                let cf = &mut self.k.warps[self.wi].cf;
                cf.warpsync(mask, g, np);
            }
            Op::Yield => {
                let nop = self.k.opts.yield_as_nop || self.g == 0;
                self.k.warps[self.wi].cf.yield_(np, nop);
            }
            _ => return Err(self.unsup("not a control instruction")),
        }
        Ok(())
    }
}
