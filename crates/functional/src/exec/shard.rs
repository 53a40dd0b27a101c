//! Shards: one kernel's warps split by SM, so that the timing model can tick the SMs of a
//! kernel on several threads with results independent of the thread count.
//!
//! Each SM gets its own [`KernelExec`] (a shard, [`KernelExec::new_shard`]) holding the
//! warps and CTAs that run on it; the kernel's global memory stays with the caller. During
//! a cycle a shard reads global memory as it was at the start of the cycle
//! ([`KernelExec::issue_shard`]); its global stores and global atomics are logged in issue
//! order. At the end of the cycle the caller applies the shards' logs in SM order
//! ([`KernelExec::apply_shard_log`]): stores are written, atomics read, compute and write,
//! and the values an atomic returns are kept until its instruction commits, when they
//! replace the placeholders its issue wrote ([`KernelExec::commit_changed`]). Shared
//! memory, local memory and registers belong to one SM and are not deferred.
//!
//! So a load does not see another warp's store issued in the same cycle (on any SM); it
//! sees every store of earlier cycles. The hardware gives no ordering between warps that
//! do not synchronise, and a store takes hundreds of cycles to reach the L2, so this is
//! one of the orders the hardware allows. Kernels that need state shared between SMs
//! beyond global memory — thread-block clusters (distributed shared memory, cluster
//! barriers), TMA and mbarriers, device `malloc`/`free` — are not split
//! ([`KernelExec::shardable`]).

use super::*;
use std::collections::HashMap;

/// A global-memory effect of one shard's cycle, applied at the end of the cycle.
#[derive(Debug, Clone, Copy)]
enum GlobalOp {
    /// Bytes `start..start + len` of the log's `bytes` stored at `addr`: one lane's store, or
    /// the stores of consecutive lanes (and instructions) that write consecutive bytes.
    Store { addr: u64, start: u32, len: u32 },
    Atomic {
        ticket: u32,
        lane: u8,
        addr: u64,
        op: AtomOp,
        ty: AtomTy,
        b: u64,
        c: u64,
    },
}

/// The values a logged atomic returns, filled when the log is applied.
#[derive(Debug, Clone)]
struct Returned {
    /// First destination register (`wide`: and the next one).
    reg: u8,
    wide: bool,
    /// Lanes whose value has been computed.
    done: u32,
    vals: [u64; 32],
}

/// A shard's log (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct ShardLog {
    ops: Vec<GlobalOp>,
    /// The stored bytes of the `Store` ops.
    bytes: Vec<u8>,
    last_ticket: u32,
    returned: HashMap<u32, Returned>,
    /// Bytes changed by this shard's applied stores and atomics (deadlock detection).
    changes: u64,
}

impl KernelExec {
    /// Whether the kernel can be split into shards: no thread-block clusters, no Hopper
    /// asynchronous operations (TMA, mbarriers, warpgroup MMA with its shared-memory
    /// descriptors), no device `malloc`/`free` (a loader put their addresses in a constant
    /// bank), no recorded control-flow trace.
    pub fn shardable(&self) -> bool {
        let hopper = self
            .code
            .iter()
            .flat_map(|c| c.iter())
            .any(|d| matches!(d.op, Op::Hopper(_)));
        let heap = [syscall::Syscall::Malloc, syscall::Syscall::Free]
            .iter()
            .any(|s| {
                let a = s.address().to_le_bytes();
                self.banks.iter().flatten().any(|b| b.windows(8).any(|w| w == a))
            });
        self.launch.cluster_size() <= 1 && !hopper && !heap && !self.opts.record_cflow_trace
    }

    /// An empty shard of this kernel: same code, launch and constant banks, no warps; its
    /// global memory is the one given to [`KernelExec::issue_shard`].
    pub fn new_shard(&self) -> KernelExec {
        KernelExec::from_program(
            Program {
                kernel: self.kernel.clone(),
                code: self.code.clone(),
                ipdom: self.ipdom.clone(),
                arch: self.arch,
                launch: self.launch.clone(),
                cf_kind: self.cf_kind,
                opts: self.opts.clone(),
                cbank: self.cbank.clone(),
                banks: self.banks.clone(),
                nregs: self.nregs,
            },
            Some(Box::default()),
        )
    }

    /// Issue warp `w` of a shard, reading global memory `global` (see the module docs).
    pub fn issue_shard(
        &mut self,
        w: WarpId,
        clock: u64,
        out: &mut Issued,
        global: &GlobalMemory,
    ) -> Result<(), ExecError> {
        if self.shard.is_none() {
            return Err(ExecError::Launch(
                "issue_shard on a kernel that is not a shard".into(),
            ));
        }
        self.issue_with(w, clock, out, Some(global))
    }

    /// Log a global store of a shard. Always true (the caller checked the range).
    pub(super) fn log_store(&mut self, addr: u64, data: &[u8]) -> bool {
        let Some(log) = self.shard.as_mut() else {
            return false;
        };
        // A store that continues the previous one (the next lane of a coalesced store) extends
        // it: applying the two in order or as one write gives the same bytes.
        if let Some(GlobalOp::Store { addr: a, len, .. }) = log.ops.last_mut() {
            if a.checked_add(u64::from(*len)) == Some(addr) {
                *len += data.len() as u32;
                log.bytes.extend_from_slice(data);
                return true;
            }
        }
        log.ops.push(GlobalOp::Store {
            addr,
            start: log.bytes.len() as u32,
            len: data.len() as u32,
        });
        log.bytes.extend_from_slice(data);
        true
    }

    /// Log lane `lane`'s global atomic of a shard. `ticket` is the instruction's ticket so
    /// far (0: none yet); returns it, allocated when the instruction returns a value to
    /// register `reg`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn log_atomic(
        &mut self,
        ticket: u32,
        reg: Option<u8>,
        wide: bool,
        lane: usize,
        addr: u64,
        op: AtomOp,
        ty: AtomTy,
        b: u64,
        c: u64,
    ) -> u32 {
        let Some(log) = self.shard.as_mut() else {
            return ticket;
        };
        let ticket = match (ticket, reg) {
            (0, Some(reg)) => {
                log.last_ticket = log.last_ticket.checked_add(1).unwrap_or(1);
                let t = log.last_ticket;
                log.returned.insert(
                    t,
                    Returned {
                        reg,
                        wide,
                        done: 0,
                        vals: [0; 32],
                    },
                );
                t
            }
            (t, _) => t,
        };
        log.ops.push(GlobalOp::Atomic {
            ticket,
            lane: lane as u8,
            addr,
            op,
            ty,
            b,
            c,
        });
        ticket
    }

    /// Apply the global-memory effects this shard logged since the last call, in their
    /// order, to `global` (the kernel's memory). Call for every shard in SM order at the end
    /// of each cycle. The ranges were checked when logged.
    pub fn apply_shard_log(&mut self, global: &mut GlobalMemory) {
        let Some(log) = self.shard.as_mut() else {
            return;
        };
        let before = global.changes;
        for op in log.ops.drain(..) {
            match op {
                GlobalOp::Store { addr, start, len } => {
                    let (s, n) = (start as usize, len as usize);
                    global.write_run(addr, &log.bytes[s..s + n]);
                }
                GlobalOp::Atomic {
                    ticket,
                    lane,
                    addr,
                    op,
                    ty,
                    b,
                    c,
                } => {
                    let nb = if matches!(ty, AtomTy::U64 | AtomTy::S64 | AtomTy::F64) {
                        8
                    } else {
                        4
                    };
                    let mut buf = [0u8; 8];
                    global.read_into(addr, &mut buf[..nb]);
                    let old = u64::from_le_bytes(buf);
                    let new = mem::atomic_result(op, ty, old, b, c);
                    if new != old {
                        global.write(addr, &new.to_le_bytes()[..nb]);
                    }
                    if let Some(r) = log.returned.get_mut(&ticket) {
                        r.vals[lane as usize] = old;
                        r.done |= 1 << lane;
                    }
                }
            }
        }
        log.bytes.clear();
        log.changes += global.changes - before;
    }

    /// The writes of an instruction with the values its logged atomic returned in place of
    /// the placeholders (`writes` itself when it has no ticket).
    pub(super) fn returned_values(&mut self, writes: &PendingWrites) -> Option<PendingWrites> {
        if writes.ticket == 0 {
            return None;
        }
        let r = self.shard.as_mut()?.returned.remove(&writes.ticket)?;
        let mut w = *writes;
        w.ticket = 0;
        for e in w.w[..w.len as usize].iter_mut() {
            let shift = match e.reg {
                ArchReg::R(i) if i == r.reg => 0,
                ArchReg::R(i) if r.wide && i == r.reg.wrapping_add(1) => 32,
                _ => continue,
            };
            for l in lanes(r.done & e.mask) {
                e.vals[l] = (r.vals[l] >> shift) as u32;
            }
        }
        Some(w)
    }

    /// Move what a shard produced for the whole kernel into `self` (the kernel the shards
    /// were made from): `printf` text (call at the end of every cycle, in SM order, to keep
    /// the text in execution order), the first failed assertion and fault.
    pub fn absorb_shard_output(&mut self, shard: &mut KernelExec) {
        if !shard.printf_out.is_empty() {
            self.printf_out.append(&mut shard.printf_out);
        }
        if self.assertion.is_none() {
            self.assertion = shard.assertion.take();
        }
        if self.fault.is_none() {
            self.fault = shard.fault.take();
        }
    }

    /// Move the CTAs of `shards` (made from `self`, none retired) into `self`, in the order
    /// they started: `started[i]` is the shard that started the i-th CTA. Their warps get
    /// the ids the unsplit kernel gives them (the next free ones, in start order), so that
    /// [`KernelExec::regs`] and the like read them as after a run without shards. Returns,
    /// per shard, the new id of each of its warp ids.
    pub fn adopt_shard_ctas(
        &mut self,
        shards: &mut [&mut KernelExec],
        started: &[usize],
    ) -> Vec<Vec<WarpId>> {
        debug_assert!(
            shards.iter().all(|s| !s.starts_pending()),
            "CTAs adopted before their records were made"
        );
        let mut ctas: Vec<std::vec::IntoIter<Cta>> = shards
            .iter_mut()
            .map(|s| std::mem::take(&mut s.ctas).into_iter())
            .collect();
        let mut warps: Vec<Vec<Option<Warp>>> = shards
            .iter_mut()
            .map(|s| std::mem::take(&mut s.warps).into_iter().map(Some).collect())
            .collect();
        let mut ids: Vec<Vec<WarpId>> = warps.iter().map(|w| vec![WarpId(u32::MAX); w.len()]).collect();
        for &s in started {
            let Some(mut cta) = ctas.get_mut(s).and_then(Iterator::next) else {
                continue;
            };
            let cidx = self.ctas.len();
            for w in cta.warps.iter_mut() {
                let Some(mut wp) = warps[s].get_mut(w.0 as usize).and_then(Option::take) else {
                    continue;
                };
                wp.cta = cidx;
                let id = WarpId(self.warps.len() as u32);
                self.warps.push(wp);
                ids[s][w.0 as usize] = id;
                *w = id;
            }
            self.ctas.push(cta);
        }
        for s in shards.iter_mut() {
            s.free_warps.clear();
            s.free_ctas.clear();
        }
        ids
    }

    /// Whether the shard has something for [`KernelExec::apply_shard_log`] or
    /// [`KernelExec::absorb_shard_output`] (checked every cycle for every SM).
    #[inline]
    pub fn shard_has_output(&self) -> bool {
        self.shard.as_ref().is_some_and(|l| !l.ops.is_empty())
            || !self.printf_out.is_empty()
            || self.fault.is_some()
            || self.assertion.is_some()
    }

    /// Progress counter of a shard: its own events and the memory its logs changed.
    pub fn shard_progress(&self) -> u64 {
        self.progress + self.shard.as_ref().map_or(0, |l| l.changes)
    }
}
