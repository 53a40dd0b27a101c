//! CTAs start and retire: their warp and CTA records, and the storage a retired CTA leaves
//! for the next ones.
//!
//! A shard (or an unsplit kernel) runs many CTAs one after the other in the same few slots.
//! A retired CTA's records are reused in place by the next CTA (the warp's control-flow
//! manager is restarted, not allocated again), and its register rows and shared memory go
//! to a [`Pool`] that the next CTA takes them from: no allocation, no fresh (page-faulting)
//! memory per CTA once the first CTAs of a slot ran, and the storage is warm in the cache.

use super::*;

/// The warp records reserved by a kernel's first CTA ([`KernelExec::start_cta`]).
const MAX_WARPS_HINT: usize = 64;

/// Storage of retired CTAs, for the next CTAs of the kernel (at most what the CTAs resident
/// at once use: one entry per retired CTA or warp not yet reused).
#[derive(Default)]
pub(super) struct Pool {
    /// Register rows of retired warps.
    regs: Vec<Vec<u32>>,
    /// Shared memories of retired CTAs.
    shared: Vec<FlatMemory>,
}

impl Pool {
    /// `n` zeroed registers (a retired warp's storage when there is one): registers read
    /// before they are written read 0, as ever.
    fn regs(&mut self, n: usize) -> Vec<u32> {
        match self.regs.pop() {
            Some(mut r) => {
                r.clear();
                r.resize(n, 0);
                r
            }
            None => vec![0; n],
        }
    }

    /// `size` bytes of zeroed shared memory (a retired CTA's when there is one; only a
    /// memory that was written is cleared).
    fn shared(&mut self, size: usize) -> FlatMemory {
        match self.shared.pop() {
            Some(mut m) => {
                m.reset(size);
                m
            }
            None => FlatMemory::new(size),
        }
    }
}

/// Set `tid` to the thread ids of warp `wi` of a CTA of `nthreads` threads shaped `block`
/// (lanes past the CTA's threads get 0); returns the mask of the lanes that have a thread.
fn thread_ids(tid: &mut [[u32; 3]; 32], wi: u32, nthreads: u32, block: [u32; 3]) -> u32 {
    // Thread `lin` is (lin % b0, lin / b0 % b1, lin / (b0 b1)): the first lane's by
    // division, the next ones counted up (x fastest), without a division per lane.
    let b = [block[0].max(1), block[1].max(1)];
    let lin0 = wi * 32;
    let mut xyz = [lin0 % b[0], (lin0 / b[0]) % b[1], lin0 / (b[0] * b[1])];
    if lin0 + 32 <= nthreads && xyz[0] + 32 <= b[0] {
        // Every lane has a thread, in one row of x (the usual warp): (x0 + lane, y, z).
        for (lane, t) in tid.iter_mut().enumerate() {
            *t = [xyz[0] + lane as u32, xyz[1], xyz[2]];
        }
        return u32::MAX;
    }
    let mut launched = 0u32;
    for (lane, t) in tid.iter_mut().enumerate() {
        *t = if lin0 + (lane as u32) < nthreads {
            launched |= 1 << lane;
            xyz
        } else {
            [0; 3]
        };
        xyz[0] += 1;
        if xyz[0] == b[0] {
            xyz[0] = 0;
            xyz[1] += 1;
            if xyz[1] == b[1] {
                xyz[1] = 0;
                xyz[2] += 1;
            }
        }
    }
    launched
}

impl Warp {
    /// Make a retired warp's record the record of warp `in_cta` of CTA slot `cta` starting
    /// at `start_pc` with `regs` (zeroed): every field as a new record has it, the
    /// control-flow manager restarted in place.
    fn restart(&mut self, cta: usize, in_cta: u32, geom: (u32, [u32; 3]), regs: Vec<u32>, start_pc: u64) {
        let Warp {
            cta: c,
            in_cta: i,
            regs: r,
            ur,
            p,
            up,
            cf,
            cur,
            cf_behind,
            at_barrier,
            cga_arrived,
            exited,
            local,
            tid,
            trace,
            issued,
            local_changes,
            probe,
        } = self;
        let launched = thread_ids(tid, in_cta, geom.0, geom.1);
        cf.restart(launched);
        cf.advance(start_pc);
        *cur = cf.current();
        *c = cta;
        *i = in_cta;
        *r = regs;
        *ur = [0; 64];
        *p = [0, 0, 0, 0, 0, 0, 0, u32::MAX];
        *up = 0x80;
        *cf_behind = false;
        *at_barrier = None;
        *cga_arrived = 0;
        *exited = false;
        *local = Vec::new();
        trace.clear();
        *issued = 0;
        *local_changes = 0;
        probe.reset();
    }
}

/// CTAs whose warp and CTA ids are given out but whose records are not made yet
/// ([`KernelExec::reserve_cta`]): the ids are what [`KernelExec::start_cta`] would give, and
/// [`KernelExec::finish_starts`] makes the records, in the order the CTAs were reserved.
#[derive(Default)]
pub(super) struct Starting {
    ctas: Vec<PendingCta>,
    /// Warp lists of CTAs made, kept for the next reservations: a CTA is reserved on the
    /// thread that runs the launch and made on its SM's thread, so a list allocated per CTA
    /// was allocated on one thread and freed on the other, in the cycle loop.
    spare: Vec<Vec<(WarpId, u32)>>,
    /// New warp records given out (ids from `warps.len()` on), not pushed yet.
    new_warps: usize,
    /// New CTA records given out (indices from `ctas.len()` on), not pushed yet.
    new_ctas: usize,
}

/// One reserved CTA: its linear id, its CTA record, its warps (id, index in the CTA).
struct PendingCta {
    linear: u32,
    cidx: usize,
    warps: Vec<(WarpId, u32)>,
}

impl KernelExec {
    /// Create CTA `cta_linear_id`'s warps (x fastest). Returns their ids: slots of retired
    /// CTAs' warps are reused first (an id names a warp from its CTA's start to its
    /// retirement).
    pub fn start_cta(&mut self, cta_linear_id: u32) -> Vec<WarpId> {
        let ids = self.reserve_cta(cta_linear_id).iter().map(|&(w, _)| w).collect();
        self.finish_starts();
        ids
    }

    /// The ids [`KernelExec::start_cta`] gives CTA `cta_linear_id`'s warps, with each
    /// warp's index in the CTA, without making their records: [`KernelExec::finish_starts`]
    /// makes them, and must run before anything else reads or changes this executor's
    /// warps or CTAs. A parallel step makes them on the SM's own thread (the records and
    /// the registers a CTA zeroes are then written where they are used).
    pub fn reserve_cta(&mut self, cta_linear_id: u32) -> &[(WarpId, u32)] {
        let st = &mut self.starting;
        let cidx = self.free_ctas.pop().unwrap_or_else(|| {
            st.new_ctas += 1;
            self.ctas.len() + st.new_ctas - 1
        });
        let mut ids = st.spare.pop().unwrap_or_default();
        ids.clear();
        ids.reserve(self.launch.warps_per_cta() as usize);
        for wi in 0..self.launch.warps_per_cta() {
            if let Some(a) = &self.opts.active_warps {
                if !a.contains(&wi) {
                    continue;
                }
            }
            let id = self.free_warps.pop().unwrap_or_else(|| {
                st.new_warps += 1;
                WarpId((self.warps.len() + st.new_warps - 1) as u32)
            });
            ids.push((id, wi));
        }
        st.ctas.push(PendingCta {
            linear: cta_linear_id,
            cidx,
            warps: ids,
        });
        st.ctas.last().map_or(&[], |p| &p.warps)
    }

    /// Whether CTAs were reserved whose records are not made ([`KernelExec::reserve_cta`]).
    #[inline]
    pub fn starts_pending(&self) -> bool {
        !self.starting.ctas.is_empty()
    }

    /// Make the records of the CTAs reserved ([`KernelExec::reserve_cta`]), in order.
    pub fn finish_starts(&mut self) {
        let mut pending = std::mem::take(&mut self.starting.ctas);
        for p in pending.drain(..) {
            let ids = self.make_cta(p);
            self.starting.spare.push(ids);
        }
        // The list's storage is kept for the next CTAs.
        self.starting.ctas = pending;
        self.starting.new_warps = 0;
        self.starting.new_ctas = 0;
    }

    /// Make the warp and CTA records of reserved CTA `p` (new records are reserved in
    /// order, so each is the next one pushed); returns its warp list's storage.
    fn make_cta(&mut self, p: PendingCta) -> Vec<(WarpId, u32)> {
        let PendingCta {
            linear: cta_linear_id,
            cidx,
            warps: ids,
        } = p;
        let g = self.launch.grid;
        let ctaid = [
            cta_linear_id % g[0],
            (cta_linear_id / g[0]) % g[1],
            cta_linear_id / (g[0] * g[1]),
        ];
        let shared = self
            .pool
            .shared((self.arch.shared_base + self.launch.shared_bytes) as usize);
        let geom = (self.launch.threads_per_cta(), self.launch.block);
        let start_pc = self.kernel.instructions.first().map_or(0, |i| i.pc);
        if self.warps.capacity() == 0 {
            // Room at once for the warps an SM holds (64 on current GPUs): the records are
            // ~1 KB each and reused, but growing the table one doubling at a time moved them
            // seven times per shard (4 M instructions on the vector add).
            self.warps
                .reserve(MAX_WARPS_HINT.max(self.launch.warps_per_cta() as usize));
        }
        for &(id, wi) in &ids {
            let regs = self.pool.regs(self.nregs * 32);
            if let Some(w) = self.warps.get_mut(id.0 as usize) {
                w.restart(cidx, wi, geom, regs, start_pc);
                continue;
            }
            // (Once per warp record of a shard: a real check costs nothing.)
            assert_eq!(
                id.0 as usize,
                self.warps.len(),
                "new warp records are made in order"
            );
            let mut tid = [[0u32; 3]; 32];
            let launched = thread_ids(&mut tid, wi, geom.0, geom.1);
            let mut cf: Box<dyn ControlFlow> = match self.cf_kind {
                ControlFlowKind::Hanoi => Box::new(Hanoi::new(launched, 0, self.opts.yield_release)),
                ControlFlowKind::SimtStack => Box::new(SimtStack::new(
                    launched,
                    0,
                    self.ipdom.clone().expect("ipdom computed for SIMT stack"),
                )),
            };
            cf.advance(start_pc);
            let cur = cf.current();
            self.warps.push(Warp {
                cta: cidx,
                in_cta: wi,
                regs,
                ur: [0; 64],
                p: [0, 0, 0, 0, 0, 0, 0, u32::MAX],
                up: 0x80,
                cf,
                cur,
                cf_behind: false,
                at_barrier: None,
                cga_arrived: 0,
                exited: false,
                local: Vec::new(),
                tid,
                trace: Vec::new(),
                issued: 0,
                local_changes: 0,
                probe: Default::default(),
            });
        }
        assert!(cidx <= self.ctas.len(), "new CTA records are made in order");
        let (cluster, rank) = self.cluster_position(cta_linear_id);
        self.cluster_started(cta_linear_id, cidx);
        if cidx == self.ctas.len() {
            self.ctas.push(Cta {
                ctaid,
                linear: cta_linear_id,
                rank,
                cluster,
                shared,
                warps: ids.iter().map(|&(w, _)| w).collect(),
                arrived: [0; 16],
                expected: [0; 16],
                retired: false,
            });
        } else {
            // A retired CTA's record: every field set again, its warp list's storage kept.
            let c = &mut self.ctas[cidx];
            c.ctaid = ctaid;
            c.linear = cta_linear_id;
            c.rank = rank;
            c.cluster = cluster;
            c.shared = shared;
            c.warps.clear();
            c.warps.extend(ids.iter().map(|&(w, _)| w));
            c.arrived = [0; 16];
            c.expected = [0; 16];
            c.retired = false;
        }
        ids
    }

    /// Retire the CTA of `w` if all its warps exited: free its registers, shared and local
    /// memory (registers and shared memory go to the pool for the next CTAs), and make its
    /// warp and CTA records free for the next CTAs (their ids must not be used after this).
    /// The records are kept while the control-flow trace is recorded (it is taken by warp
    /// id after the run).
    pub fn retire_cta_of(&mut self, w: WarpId) {
        debug_assert!(
            !self.starts_pending(),
            "a retirement before the CTAs' records were made"
        );
        let c = self.warps[w.0 as usize].cta;
        if self.ctas[c].retired || !self.ctas[c].warps.iter().all(|x| self.warps[x.0 as usize].exited) {
            return;
        }
        self.ctas[c].retired = true;
        let shared = std::mem::take(&mut self.ctas[c].shared);
        self.pool.shared.push(shared);
        let linear = self.ctas[c].linear;
        self.cluster_retired(linear);
        let mut ws = std::mem::take(&mut self.ctas[c].warps);
        for &x in &ws {
            let wp = &mut self.warps[x.0 as usize];
            let regs = std::mem::take(&mut wp.regs);
            if regs.capacity() > 0 {
                self.pool.regs.push(regs);
            }
            wp.local = Vec::new();
        }
        if self.opts.record_cflow_trace {
            self.ctas[c].warps = ws;
        } else {
            // Reversed: the next CTA takes the ids in ascending order.
            self.free_warps.extend(ws.iter().rev());
            self.free_ctas.push(c);
            // The warp list's storage stays with the record for the CTA that reuses it.
            ws.clear();
            self.ctas[c].warps = ws;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::thread_ids;

    /// The counted-up thread ids are the divided ones, for odd block shapes and partial warps.
    #[test]
    fn thread_ids_match_division() {
        for block in [
            [256, 1, 1],
            [7, 5, 3],
            [1, 1, 64],
            [3, 1, 11],
            [33, 2, 2],
            [1, 17, 2],
            [1024, 1, 1],
            [64, 3, 2],
        ] {
            let n: u32 = block[0] * block[1] * block[2];
            for wi in 0..n.div_ceil(32) {
                let mut tid = [[9u32; 3]; 32];
                let launched = thread_ids(&mut tid, wi, n, block);
                for (lane, t) in tid.iter().enumerate() {
                    let lin = wi * 32 + lane as u32;
                    let (want, live) = if lin < n {
                        (
                            [
                                lin % block[0],
                                lin / block[0] % block[1],
                                lin / (block[0] * block[1]),
                            ],
                            true,
                        )
                    } else {
                        ([0; 3], false)
                    };
                    assert_eq!(*t, want, "block {block:?} warp {wi} lane {lane}");
                    assert_eq!(launched >> lane & 1 == 1, live);
                }
            }
        }
    }
}
