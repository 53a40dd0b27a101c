//! Tensor-core instructions of a warp: MMA (`HMMA`/`IMMA`/`DMMA`), `LDSM` and `MOVM`
//! (semantics and fragment layouts in `crate::tensor`).
//!
//! These are warp-collective (`.sync.aligned` in PTX): every thread supplies part of the
//! operands. The engine executes them only for a full, converged warp whose guard is true in
//! all lanes (or false in all lanes: then nothing happens); anything else is undefined in PTX
//! and is reported as unsupported.

use super::*;
use crate::tensor::{self, Frag, TensorOp, MAX_FRAG_REGS};
use sassim_isa::MmaSpec;

impl Ex<'_> {
    pub(super) fn tensor_op(&mut self, t: TensorOp) -> Res<()> {
        if self.g == 0 {
            return Ok(());
        }
        if self.g != u32::MAX {
            return Err(self.unsup("tensor-core instruction executed by a partial warp"));
        }
        match t {
            TensorOp::Mma(spec) => self.mma(&spec, None),
            TensorOp::SparseMma { spec, selector } => self.mma(&spec, Some(selector)),
            TensorOp::Ldsm { matrices, trans } => self.ldsm(matrices, trans),
            TensorOp::Movm => self.movm(),
        }
    }

    /// Registers `first .. first + n` of every lane (RZ reads zeros).
    fn frag(&self, i: usize, n: u8) -> Res<Frag> {
        let mut f: Frag = [[0; 32]; MAX_FRAG_REGS];
        let first = match self.op(i)?.k {
            K::R(r) => r,
            _ => return Err(self.unsup(&format!("operand {} is not a register", i + 1))),
        };
        if first == 255 {
            return Ok(f);
        }
        if first as usize + n as usize > 255 {
            return Err(self.unsup("fragment beyond R254"));
        }
        for (r, regs) in f.iter_mut().enumerate().take(n as usize) {
            for (lane, v) in regs.iter_mut().enumerate() {
                *v = self.reg(first + r as u8, lane);
            }
        }
        Ok(f)
    }

    fn write_frag(&mut self, f: &Frag, n: u8) -> Res<()> {
        let d = match self.op(0)?.k {
            K::R(r) => r,
            _ => return Err(self.unsup("destination is not a register")),
        };
        if d == 255 {
            return Ok(());
        }
        if d as usize + n as usize > 255 {
            return Err(self.unsup("fragment beyond R254"));
        }
        for (r, regs) in f.iter().enumerate().take(n as usize) {
            for (lane, v) in regs.iter().enumerate() {
                self.out.writes.r(d + r as u8, lane, *v);
            }
        }
        Ok(())
    }

    /// `selector`: the sparsity selector of `HMMA.SP`/`IMMA.SP`, whose metadata is operand 5.
    fn mma(&mut self, spec: &MmaSpec, selector: Option<u8>) -> Res<()> {
        let a = self.frag(1, spec.a_regs())?;
        let b = self.frag(2, spec.b_regs())?;
        let c = self.frag(3, spec.c_regs())?;
        let e = match selector {
            Some(_) => self.frag(4, 1)?[0],
            None => [0; 32],
        };
        let d = tensor::mma(spec, &a, &b, &c, selector.map(|s| (&e, s)));
        self.write_frag(&d, spec.c_regs())
    }

    /// `ldmatrix.m8n8.x{1,2,4}[.trans].b16`: matrix `j` has its 8 row addresses (16 bytes
    /// each) in threads `8j .. 8j + 7` and lands in destination register `j`. Without
    /// `.trans` thread `l` receives row `l / 4`, elements `2(l % 4)` and `2(l % 4) + 1`;
    /// with `.trans` it receives column `l / 4`, rows `2(l % 4)` and `2(l % 4) + 1`.
    fn ldsm(&mut self, matrices: u8, trans: bool) -> Res<()> {
        if self.d.o.len() != 2 {
            return Err(self.unsup("operands"));
        }
        let m = self.mem_operand(1)?;
        let mut rows = [0u64; 32];
        for (l, r) in rows.iter_mut().enumerate().take(8 * matrices as usize) {
            *r = self.address(&m, l, MemSpace::Shared);
            if *r % 16 != 0 {
                return Err(self.fault(l, *r, 16, MemSpace::Shared, true));
            }
        }
        let mut out: Frag = [[0; 32]; MAX_FRAG_REGS];
        for j in 0..matrices as usize {
            for l in 0..32usize {
                let v = if trans {
                    let col = (l / 4) as u64 * 2;
                    let mut h = [0u8; 2];
                    let mut w = 0u32;
                    for half in 0..2 {
                        let row = rows[8 * j + 2 * (l % 4) + half];
                        self.load(MemSpace::Shared, 8 * j + 2 * (l % 4) + half, row + col, &mut h)?;
                        w |= (u16::from_le_bytes(h) as u32) << (16 * half);
                    }
                    w
                } else {
                    let mut b = [0u8; 4];
                    self.load(
                        MemSpace::Shared,
                        8 * j + l / 4,
                        rows[8 * j + l / 4] + 4 * (l % 4) as u64,
                        &mut b,
                    )?;
                    u32::from_le_bytes(b)
                };
                out[j][l] = v;
            }
        }
        self.write_frag(&out, matrices)?;
        // Timing: each lane's access is the 16-byte row it supplies (lanes past 8·matrices
        // repeat the rows of the first ones: same banks, no extra wavefront).
        let mut addrs = [0u64; 32];
        for (l, a) in addrs.iter_mut().enumerate() {
            *a = rows[l % (8 * matrices as usize)];
        }
        self.record(MemSpace::Shared, MemKind::Load, 16, &addrs);
        Ok(())
    }

    /// `movmatrix.m8n8.trans.b16`: thread `l` holds row `l / 4`, columns `2(l % 4)` and
    /// `2(l % 4) + 1` of an 8×8 matrix M and receives the same positions of Mᵀ.
    fn movm(&mut self) -> Res<()> {
        if self.d.o.len() != 2 {
            return Err(self.unsup("operands"));
        }
        let src = self.frag(1, 1)?;
        let elem = |row: usize, col: usize| (src[0][4 * row + col / 2] >> (16 * (col % 2))) & 0xffff;
        let mut out: Frag = [[0; 32]; MAX_FRAG_REGS];
        for (l, v) in out[0].iter_mut().enumerate() {
            let (r, c) = (l / 4, 2 * (l % 4));
            *v = elem(c, r) | elem(c + 1, r) << 16;
        }
        self.write_frag(&out, 1)
    }
}
