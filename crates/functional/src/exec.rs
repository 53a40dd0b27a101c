//! The execution engine: one kernel launch, its CTAs and warps.
//!
//! Execution happens at issue: [`KernelExec::issue`] reads the sources, computes, performs
//! the memory access and updates the control flow, but returns register, predicate and
//! uniform results as [`PendingWrites`]; the caller applies them with
//! [`KernelExec::commit`] (immediately in functional mode, at write-back in the timing
//! model — which is how stale-register reads emerge from too-short stalls).

use crate::alu;
use crate::cflow::hanoi::Hanoi;
use crate::cflow::ipdom::Ipdom;
use crate::cflow::simt::SimtStack;
use crate::cflow::{CfView, ControlFlow, ControlFlowKind, PathEntry};
use crate::cluster::ClusterGeom;
use crate::decode::{
    self, AtomOp, AtomTy, BoolOp, Cmp, DInst, DOp, FOp, HOp, HSel, ImadKind, MemAddr, MemSpace, Mufu, Op,
    ReduxOp, Round, SReg, ShflMode, Ty, VoteMode, D, K,
};
use crate::error::{ExecError, Space};
use crate::memory::{FlatMemory, GlobalMemory, LOCAL_WINDOW, SHARED_WINDOW};
use sassim_isa::{ArchReg, Kernel};
use serde::Serialize;
use std::sync::Arc;

/// Index of a warp within a [`KernelExec`] (dense, in creation order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct WarpId(pub u32);

/// What a warp can do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum WarpStatus {
    /// Can issue the instruction at `pc`.
    Ready {
        pc: u64,
    },
    /// Waiting at CTA barrier `id` until every warp of the CTA arrived.
    AtBarrier {
        id: u32,
    },
    /// Every thread of the warp has waiting threads but no path to run (Hanoi: waiting for a
    /// reconvergence that needs threads of no runnable path). Never leaves this state.
    Blocked,
    Exited,
}

/// Laid out in field order: the fields every issue and commit reads (state, path, CTA,
/// count, register storage, predicates) come first, within two cache lines; the record is
/// usually cold when its warp issues, and the compiler's order spread them over ~0.8 KB.
#[repr(C)]
struct Warp {
    exited: bool,
    /// Hanoi only: `cur.pc` is ahead of `cf`'s top path. An instruction other than control
    /// flow only moves that PC (Hanoi VII-C), so it moves `cur` alone and `cf` gets the PC at
    /// the warp's next control-flow instruction ([`Warp::sync_cf`]): most instructions do
    /// not touch `cf`'s state (two heap blocks, cold cache lines by the warp's next issue).
    cf_behind: bool,
    /// Uniform predicate bits UP0–UP6.
    up: u8,
    at_barrier: Option<u32>,
    /// `cf.current()`, kept up to date: the control flow changes only when the warp issues
    /// (and at its start), while the path is read several times per issue (readiness, next
    /// PC, fetch redirection) — without a call through `cf` and two pointers each time.
    cur: Option<PathEntry>,
    cta: usize,
    /// Instructions issued.
    pub issued: u64,
    /// [reg * 32 + lane].
    regs: Vec<u32>,
    /// Predicate lane masks P0–P6 (index 7 = PT).
    p: [u32; 8],
    in_cta: u32,
    /// Cluster barrier: 1 + the phase in which the warp last arrived (0: never).
    cga_arrived: u32,
    cf: Box<dyn ControlFlow>,
    ur: [u32; 64],
    tid: [[u32; 3]; 32],
    local: Vec<u8>,
    trace: Vec<(u64, u32)>,
    /// Stores that changed a byte of `local` (livelock probes hash this count instead of
    /// the up to 512 KB of local memory: equal counts, unchanged memory).
    local_changes: u64,
    /// Livelock probe (`exec/probe.rs`), fed only while [`KernelExec::set_livelock_probes`]
    /// has the probes on.
    probe: probe::Probe,
}

impl Warp {
    /// Hint the CPU to bring this warp's row of register R`i` into its caches (nothing for
    /// RZ or a register past the kernel's count).
    #[inline]
    fn prefetch_row(&self, i: u8) {
        let b = i as usize * 32;
        if let Some(row) = self.regs.get(b..b + 32) {
            sassim_isa::cpu_hint::prefetch_val(row);
        }
    }

    /// Give `cf` the PC that `cur` moved to (see `cf_behind`).
    #[inline]
    fn sync_cf(&mut self) {
        if self.cf_behind {
            self.cf_behind = false;
            if let Some(c) = self.cur {
                self.cf.advance(c.pc);
            }
        }
    }

    /// Move the current path to `next_pc` after an instruction other than control flow.
    #[inline]
    fn advance(&mut self, next_pc: u64, pc_only: bool) {
        match &mut self.cur {
            Some(c) if pc_only => {
                c.pc = next_pc;
                self.cf_behind = true;
            }
            _ => {
                self.cf.advance(next_pc);
                self.cur = self.cf.current();
            }
        }
    }
}

struct Cta {
    ctaid: [u32; 3],
    linear: u32,
    /// Rank in its thread-block cluster (`SR_CgaCtaId`, 0 without clusters) and the
    /// cluster's linear id.
    rank: u32,
    cluster: u32,
    shared: FlatMemory,
    warps: Vec<WarpId>,
    /// Warps arrived at each barrier.
    arrived: [u32; 16],
    /// Threads expected at each barrier (BAR with a count); 0 = all warps.
    expected: [u32; 16],
    /// Retired: its slot and its warps' slots are free for later CTAs.
    retired: bool,
}

/// One kernel launch: code, parameters, CTAs and warps.
pub struct KernelExec {
    kernel: Arc<Kernel>,
    /// The decoded instructions (`None` only while an instruction issues, see
    /// [`KernelExec::issue_inner`]).
    code: Option<Arc<Vec<DInst>>>,
    ipdom: Option<Arc<Ipdom>>,
    pub arch: ArchInfo,
    launch: Launch,
    cf_kind: ControlFlowKind,
    opts: ExecOptions,
    /// Constant bank 0, shared with the kernel's shards (copied only if one changes it).
    cbank: Arc<Vec<u8>>,
    /// Constant banks 1.. (index = bank number; None = not loaded, reads 0).
    banks: Vec<Option<Arc<Vec<u8>>>>,
    global: GlobalMemory,
    warps: Vec<Warp>,
    ctas: Vec<Cta>,
    /// Slots of `warps` and `ctas` whose CTA retired, reused by the next CTAs so that the
    /// records stay as many as the CTAs resident at once, however many CTAs a grid has.
    free_warps: Vec<WarpId>,
    free_ctas: Vec<usize>,
    nregs: usize,
    /// Bumped by every event that is progress for deadlock detection (memory change, exit,
    /// barrier release, reconvergence is not counted).
    progress: u64,
    /// Text of device `printf` calls, in execution order.
    printf_out: Vec<u8>,
    /// The message of a failed device `assert`.
    assertion: Option<String>,
    /// The error that stopped execution (the first `issue` that failed).
    fault: Option<ExecError>,
    /// Thread-block clusters: running CTAs by id, cluster barriers.
    clusters: cluster::Clusters,
    /// TMA copies whose mbarrier completion waits for the timing model (`set_defer_bulk`).
    bulk: hopper::BulkCopies,
    /// Storage of retired CTAs for the next ones (`exec/cta.rs`).
    pool: cta::Pool,
    /// CTAs reserved whose records are not made yet (`exec/cta.rs`).
    starting: cta::Starting,
    /// The livelock probes are on (`exec/probe.rs`): warps hash their state at every
    /// control-flow instruction.
    probing: bool,
    /// A shard of a kernel whose SMs are ticked in parallel: its global-memory effects,
    /// applied at the end of each cycle (`exec/shard.rs`). `None`: global memory is `global`.
    shard: Option<Box<shard::ShardLog>>,
}

/// What a kernel's shards share with it (see [`KernelExec::new_shard`]): everything a
/// [`KernelExec`] starts with besides its empty state ([`KernelExec::from_program`]).
struct Program {
    kernel: Arc<Kernel>,
    code: Option<Arc<Vec<DInst>>>,
    ipdom: Option<Arc<Ipdom>>,
    arch: ArchInfo,
    launch: Launch,
    cf_kind: ControlFlowKind,
    opts: ExecOptions,
    cbank: Arc<Vec<u8>>,
    banks: Vec<Option<Arc<Vec<u8>>>>,
    nregs: usize,
}

/// A float `r` with `trunc(y · r) = y / n` for every CTA index `y < 65536` (the reciprocal the
/// `%clusterid.y/z` code multiplies by): 1/n rounded up, so that exact multiples of `n` do not
/// fall just below an integer.
fn recip_for_trunc(n: u32) -> f32 {
    let n = n.max(1);
    let r = 1.0f32 / n as f32;
    if f64::from(r) * f64::from(n) >= 1.0 {
        r
    } else {
        f32::from_bits(r.to_bits() + 1)
    }
}

/// Bytes of one constant bank.
const CBANK_BYTES: usize = 0x1_0000;
/// Constant banks an instruction may name (`c[0x0]` to `c[0x11]` on sm_75 to sm_90).
pub const MAX_CONST_BANKS: usize = 18;

fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(l)
        }
    })
}

impl KernelExec {
    pub fn new(
        kernel: Arc<Kernel>,
        arch: &str,
        launch: Launch,
        cf: ControlFlowKind,
        opts: ExecOptions,
    ) -> Result<KernelExec, ExecError> {
        let arch = ArchInfo::parse(arch)?;
        if launch.threads_per_cta() == 0 || launch.threads_per_cta() > 1024 {
            return Err(ExecError::Launch(format!(
                "block {:?} has {} threads (1 to 1024)",
                launch.block,
                launch.threads_per_cta()
            )));
        }
        if launch.num_ctas() == 0 {
            return Err(ExecError::Launch(format!("grid {:?} is empty", launch.grid)));
        }
        let code = decode::decode_kernel(&kernel);
        let mut maxr = 0usize;
        for ins in &kernel.instructions {
            for o in &ins.operands {
                let mut note = |r: &sassim_isa::Reg| {
                    if r.file == sassim_isa::RegFile::R && !r.is_zero() {
                        // Multi-register operands (warpgroup-MMA accumulators: up to 128).
                        maxr = maxr.max(r.idx as usize + (r.width as usize).max(4));
                    }
                };
                match &o.kind {
                    sassim_isa::OperandKind::Reg(r) => note(r),
                    sassim_isa::OperandKind::Mem(a) => a.regs.iter().for_each(|t| note(&t.reg)),
                    sassim_isa::OperandKind::Const(c) => c.addr.regs.iter().for_each(|t| note(&t.reg)),
                    _ => {}
                }
            }
        }
        let nregs = maxr.clamp(8, 256);
        let ipdom = match cf {
            ControlFlowKind::SimtStack => Some(Arc::new(Ipdom::compute(&code, |pc| kernel.index_of(pc)))),
            ControlFlowKind::Hanoi => None,
        };
        let mut cbank = vec![0u8; CBANK_BYTES];
        let n0 = launch.const0.len().min(CBANK_BYTES);
        cbank[..n0].copy_from_slice(&launch.const0[..n0]);
        let put = |cb: &mut Vec<u8>, off: usize, v: u32| cb[off..off + 4].copy_from_slice(&v.to_le_bytes());
        for k in 0..3 {
            put(&mut cbank, 4 * k, launch.block[k]);
            put(&mut cbank, 0xc + 4 * k, launch.grid[k]);
        }
        // Generic-address windows (64-bit): shared at 0x18, local at 0x20 (the offsets the
        // sm_75/86 code of `cvta.shared` / `cvta.local` reads; sm_90 uses SR_SWINHI).
        for (off, v) in [(0x18, SHARED_WINDOW), (0x20, LOCAL_WINDOW)] {
            put(&mut cbank, off, v as u32);
            put(&mut cbank, off + 4, (v >> 32) as u32);
        }
        put(&mut cbank, 0x28, opts.local_bytes);
        if arch.sm >= 90 {
            // Driver fields of sm_90 that ptxas reads (docs/validation/hopper-isa-facts.md
            // §6.1; H800 bank-0 dump of the cicuvc notes): 0x140 explicit-cluster flag,
            // 0x144.. cluster shape, 0x150.. float reciprocals of it (the y/z `%clusterid`
            // divisions multiply by them and truncate), 0x15c.. grid in clusters, 0x188 CTAs
            // per cluster, 0x198 the generic address of the parameter block.
            let c = launch.cluster;
            let cg = launch.clusters().clusters_per_grid();
            put(&mut cbank, 0x140, u32::from(launch.cluster_size() > 1));
            for d in 0..3 {
                put(&mut cbank, 0x144 + 4 * d, c[d]);
                put(&mut cbank, 0x150 + 4 * d, recip_for_trunc(c[d]).to_bits());
                put(&mut cbank, 0x15c + 4 * d, cg[d]);
            }
            put(&mut cbank, 0x188, launch.cluster_size());
            let p = crate::memory::CONST_WINDOW + u64::from(arch.param_offset);
            put(&mut cbank, 0x198, p as u32);
            put(&mut cbank, 0x19c, (p >> 32) as u32);
        }
        let mut banks: Vec<Option<Arc<Vec<u8>>>> = Vec::new();
        for (b, bytes) in &launch.const_banks {
            let b = *b as usize;
            if b == 0 || b >= MAX_CONST_BANKS || bytes.len() > CBANK_BYTES {
                return Err(ExecError::Launch(format!(
                    "constant bank {b} of {} bytes (banks 1 to {}, at most {CBANK_BYTES} bytes)",
                    bytes.len(),
                    MAX_CONST_BANKS - 1
                )));
            }
            if banks.len() <= b {
                banks.resize(b + 1, None);
            }
            banks[b] = Some(bytes.clone());
        }
        let po = arch.param_offset as usize;
        if po + launch.params.len() > CBANK_BYTES {
            return Err(ExecError::Launch(format!(
                "{} parameter bytes do not fit",
                launch.params.len()
            )));
        }
        cbank[po..po + launch.params.len()].copy_from_slice(&launch.params);
        Ok(KernelExec::from_program(
            Program {
                kernel,
                code: Some(Arc::new(code)),
                ipdom,
                arch,
                launch,
                cf_kind: cf,
                opts,
                cbank: Arc::new(cbank),
                banks,
                nregs,
            },
            None,
        ))
    }

    /// A kernel with `p`'s code, launch and constant banks and nothing else yet: no warps,
    /// no CTAs, an empty global memory (`shard`: the log of a shard, see `exec/shard.rs`).
    fn from_program(p: Program, shard: Option<Box<shard::ShardLog>>) -> KernelExec {
        KernelExec {
            kernel: p.kernel,
            code: p.code,
            ipdom: p.ipdom,
            arch: p.arch,
            launch: p.launch,
            cf_kind: p.cf_kind,
            opts: p.opts,
            cbank: p.cbank,
            banks: p.banks,
            global: GlobalMemory::new(),
            warps: Vec::new(),
            ctas: Vec::new(),
            free_warps: Vec::new(),
            free_ctas: Vec::new(),
            nregs: p.nregs,
            progress: 0,
            printf_out: Vec::new(),
            assertion: None,
            fault: None,
            clusters: cluster::Clusters::default(),
            bulk: hopper::BulkCopies::default(),
            pool: cta::Pool::default(),
            starting: cta::Starting::default(),
            probing: false,
            shard,
        }
    }

    pub fn kernel(&self) -> &Arc<Kernel> {
        &self.kernel
    }
    pub fn launch(&self) -> &Launch {
        &self.launch
    }
    pub fn options(&self) -> &ExecOptions {
        &self.opts
    }
    pub fn memory(&mut self) -> &mut GlobalMemory {
        &mut self.global
    }
    pub fn memory_ref(&self) -> &GlobalMemory {
        &self.global
    }
    /// Constant bank 0 (mutable, e.g. to change parameters before the first CTA starts).
    pub fn cbank0(&mut self) -> &mut [u8] {
        Arc::make_mut(&mut self.cbank).as_mut_slice()
    }
    /// Replace the parameter block (written at the arch's parameter offset of bank 0).
    pub fn set_params(&mut self, params: &[u8]) -> Result<(), ExecError> {
        let po = self.arch.param_offset as usize;
        if po + params.len() > CBANK_BYTES {
            return Err(ExecError::Launch(format!(
                "{} parameter bytes do not fit",
                params.len()
            )));
        }
        Arc::make_mut(&mut self.cbank)[po..po + params.len()].copy_from_slice(params);
        self.launch.params = params.to_vec();
        Ok(())
    }
    /// Device `printf` output produced so far (taken: the buffer is emptied).
    pub fn take_printf_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.printf_out)
    }
    /// The message of a device `assert` that failed.
    pub fn assertion(&self) -> Option<&str> {
        self.assertion.as_deref()
    }
    /// The first error an instruction raised (illegal address, unsupported opcode, assert…).
    pub fn fault(&self) -> Option<&ExecError> {
        self.fault.as_ref()
    }
    /// Warp records held: the warps of live CTAs and the slots of retired ones, which the
    /// next CTAs reuse (so at most the warps resident at once, unless the control-flow
    /// trace is recorded: its records are kept until they are taken).
    pub fn num_warps(&self) -> usize {
        self.warps.len()
    }
    /// CTA records held (live and free for reuse; see [`KernelExec::num_warps`]).
    pub fn num_cta_records(&self) -> usize {
        self.ctas.len()
    }
    /// A progress counter: changes whenever memory changes, a thread exits or a barrier
    /// is released (used by deadlock detection).
    pub fn progress_counter(&self) -> u64 {
        self.progress + self.global.changes
    }

    pub fn warp_state(&self, w: WarpId) -> WarpStatus {
        let wp = &self.warps[w.0 as usize];
        if wp.exited {
            return WarpStatus::Exited;
        }
        if let Some(id) = wp.at_barrier {
            return WarpStatus::AtBarrier { id };
        }
        match wp.cur {
            Some(p) => WarpStatus::Ready { pc: p.pc },
            None => WarpStatus::Blocked,
        }
    }

    /// The PC the warp will execute next.
    pub fn next_pc(&self, w: WarpId) -> Option<u64> {
        debug_assert!(
            !self.starts_pending(),
            "a warp read before its CTA's records were made"
        );
        let wp = &self.warps[w.0 as usize];
        if wp.exited {
            return None;
        }
        wp.cur.map(|p| p.pc)
    }

    /// The active mask of the path that will execute next.
    pub fn next_mask(&self, w: WarpId) -> Option<u32> {
        let wp = &self.warps[w.0 as usize];
        if wp.exited {
            return None;
        }
        wp.cur.map(|p| p.mask)
    }

    /// CTA (linear id) and warp-in-CTA of a warp.
    pub fn warp_location(&self, w: WarpId) -> (u32, u32) {
        let wp = &self.warps[w.0 as usize];
        (self.ctas[wp.cta].linear, wp.in_cta)
    }

    /// Warps of the CTA that `w` belongs to.
    pub fn cta_warps(&self, w: WarpId) -> &[WarpId] {
        &self.ctas[self.warps[w.0 as usize].cta].warps
    }

    /// Debug view of the warp's control-flow state.
    pub fn cflow_view(&self, w: WarpId) -> CfView {
        let wp = &self.warps[w.0 as usize];
        let mut v = wp.cf.view();
        if let (true, Some(c), CfView::Hanoi { ws, .. }) = (wp.cf_behind, wp.cur, &mut v) {
            if let Some(top) = ws.last_mut() {
                top.pc = c.pc;
            }
        }
        v
    }

    /// Why the warp is blocked (for deadlock reports).
    pub fn stuck_reason(&self, w: WarpId) -> Option<String> {
        self.warps[w.0 as usize].cf.stuck_reason()
    }

    /// The recorded control-flow trace ((PC, active mask) per issued instruction).
    pub fn cflow_trace(&self, w: WarpId) -> &[(u64, u32)] {
        &self.warps[w.0 as usize].trace
    }

    pub fn take_cflow_trace(&mut self, w: WarpId) -> Vec<(u64, u32)> {
        std::mem::take(&mut self.warps[w.0 as usize].trace)
    }

    /// Shared memory of the CTA of warp `w` (window offsets; sm_90 starts user data at 0x400).
    pub fn shared(&self, w: WarpId) -> &[u8] {
        self.ctas[self.warps[w.0 as usize].cta].shared.bytes()
    }
    pub fn shared_mut(&mut self, w: WarpId) -> &mut [u8] {
        let c = self.warps[w.0 as usize].cta;
        self.ctas[c].shared.bytes_mut()
    }

    /// Called when a warp exits: releases barriers that no longer wait for it.
    fn check_barriers(&mut self, cta: usize) {
        for id in 0..16usize {
            // Only a barrier some warp arrived at can be released (`try_release`'s own
            // first test, done here without the call for the usual idle barriers).
            if self.ctas[cta].arrived[id] != 0 {
                self.try_release(cta, id);
            }
        }
    }

    fn try_release(&mut self, cta: usize, id: usize) {
        let c = &self.ctas[cta];
        if c.arrived[id] == 0 {
            return;
        }
        let live = c
            .warps
            .iter()
            .filter(|x| !self.warps[x.0 as usize].exited)
            .count() as u32;
        let need = if c.expected[id] > 0 {
            c.expected[id].div_ceil(32).min(live)
        } else {
            live
        };
        if c.arrived[id] >= need {
            let ws = c.warps.clone();
            for x in ws {
                let wp = &mut self.warps[x.0 as usize];
                if wp.at_barrier == Some(id as u32) {
                    wp.at_barrier = None;
                }
            }
            self.ctas[cta].arrived[id] = 0;
            self.ctas[cta].expected[id] = 0;
            self.progress += 1;
        }
    }

    /// Execute the next instruction of warp `w`. `clock` is the value clock reads return.
    pub fn issue(&mut self, w: WarpId, clock: u64) -> Result<Issued, ExecError> {
        let mut out = Issued::default();
        self.issue_into(w, clock, &mut out)?;
        Ok(out)
    }

    /// [`KernelExec::issue`] into a record the caller keeps and reuses: every field of
    /// `out` is overwritten (the unused entries of `out.writes` are left as they were, see
    /// [`PendingWrites`]), so no ~1.2 KB record is built and moved per instruction. After an
    /// error `out` holds nothing meaningful.
    pub fn issue_into(&mut self, w: WarpId, clock: u64, out: &mut Issued) -> Result<(), ExecError> {
        self.issue_with(w, clock, out, None)
    }

    /// [`KernelExec::issue_into`] with global memory given from outside (a shard's view
    /// when SMs are ticked in parallel, see `exec/shard.rs`): reads see `global`, writes
    /// and global atomics are logged and applied by [`KernelExec::apply_shard_log`].
    pub(crate) fn issue_with(
        &mut self,
        w: WarpId,
        clock: u64,
        out: &mut Issued,
        gmem: Option<&GlobalMemory>,
    ) -> Result<(), ExecError> {
        debug_assert!(
            !self.starts_pending(),
            "an issue before its CTA's records were made"
        );
        // The usual outcome returns without moving an error value around.
        match self.issue_inner(w, clock, out, gmem) {
            Ok(()) => Ok(()),
            Err(e) => {
                if self.fault.is_none() && !matches!(e, ExecError::NotReady { .. }) {
                    self.fault = Some(e.clone());
                }
                Err(e)
            }
        }
    }

    fn issue_inner(
        &mut self,
        w: WarpId,
        clock: u64,
        out: &mut Issued,
        gmem: Option<&GlobalMemory>,
    ) -> Result<(), ExecError> {
        let wi = w.0 as usize;
        let (path, cta_idx) = {
            let wp = self.warps.get(wi).ok_or_else(|| ExecError::NotReady {
                warp: w.0,
                why: "no such warp".into(),
            })?;
            if wp.exited {
                return Err(ExecError::NotReady {
                    warp: w.0,
                    why: "exited".into(),
                });
            }
            if let Some(id) = wp.at_barrier {
                return Err(ExecError::NotReady {
                    warp: w.0,
                    why: format!("waiting at barrier {id}"),
                });
            }
            let p = wp.cur.ok_or_else(|| ExecError::NotReady {
                warp: w.0,
                why: wp.cf.stuck_reason().unwrap_or_else(|| "blocked".into()),
            })?;
            (p, wp.cta)
        };
        // The decoded code is taken out for the issue (no reference count touched per issue)
        // and put back below, whatever the outcome; nothing the issue runs reads `self.code`.
        let code = self.code.take().ok_or_else(|| ExecError::NotReady {
            warp: w.0,
            why: "the kernel's code is in use".into(),
        })?;
        let r = self.issue_code(w, &code, path, cta_idx, clock, out, gmem);
        self.code = Some(code);
        r
    }

    /// [`KernelExec::issue_inner`] once the path is known: `code` is the kernel's decoded code.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn issue_code(
        &mut self,
        w: WarpId,
        code: &[DInst],
        path: PathEntry,
        cta_idx: usize,
        clock: u64,
        out: &mut Issued,
        gmem: Option<&GlobalMemory>,
    ) -> Result<(), ExecError> {
        let wi = w.0 as usize;
        // The instruction at `path.pc`: where its PC says (one per 16 bytes), else searched
        // (as `Kernel::index_of`). The error is built only when there is one (an `ok_or`
        // builds and drops it on every issue).
        let Some(index) = slot_at(code, path.pc).or_else(|| self.kernel.index_of(path.pc)) else {
            return Err(ExecError::BadPc {
                warp: w.0,
                pc: path.pc,
            });
        };
        let d = &code[index];
        let next_pc = d.next_pc;
        let guard = {
            let wp = &self.warps[wi];
            match d.guard {
                None => path.mask,
                Some((i, neg, uni)) => {
                    let m = if uni {
                        if wp.up >> i & 1 == 1 {
                            u32::MAX
                        } else {
                            0
                        }
                    } else {
                        wp.p[i as usize]
                    };
                    path.mask & if neg { !m } else { m }
                }
            }
        };
        if self.opts.record_cflow_trace {
            self.warps[wi].trace.push((path.pc, path.mask));
        }
        self.warps[wi].issued += 1;
        out.pc = path.pc;
        out.index = index;
        out.path_mask = path.mask;
        out.active_mask = guard;
        out.mem = None;
        out.writes.clear();
        out.exited = false;
        out.barrier = None;
        out.clock_read = false;
        let mut ex = Ex {
            k: self,
            gmem,
            wi,
            cta: cta_idx,
            d,
            g: guard,
            path,
            next_pc,
            clock,
            out,
        };
        let r = ex.run();
        if d.op.is_control() {
            // The control flow changes only here (other instructions move `cur` themselves,
            // `Warp::advance`): the cached path follows it.
            let wp = &mut self.warps[wi];
            wp.cur = wp.cf.current();
            // Every loop passes a control-flow instruction: where the probes look.
            if self.probing && r.is_ok() {
                self.probe_warp(wi, cta_idx);
            }
        }
        r?;
        if out.exited {
            self.progress += 1;
            self.check_barriers(cta_idx);
            self.cluster_warp_exited(cta_idx);
        } else {
            self.prefetch_next_operands(wi, code);
        }
        Ok(())
    }

    /// Hint the CPU to bring the register rows of warp `wi`'s next instruction (in `code`)
    /// into its caches: its next issue reads them ([`sassim_isa::cpu_hint`]).
    #[inline]
    fn prefetch_next_operands(&self, wi: usize, code: &[DInst]) {
        // Where its PC says only (a hint is not worth the search `issue_code` falls back on).
        let wp = &self.warps[wi];
        let Some(d) = wp.cur.and_then(|p| slot_at(code, p.pc)).map(|i| &code[i]) else {
            return;
        };
        // Its register operands as decoded ([`DInst::rows`]), the warp looked up once.
        for &r in d.rows.iter().take_while(|&&r| r != 255) {
            wp.prefetch_row(r);
        }
    }

    /// Hint the CPU to bring warp `w`'s row of register R`i` into its caches (nothing for RZ,
    /// a register past the kernel's count or a warp that does not exist).
    #[inline]
    pub fn prefetch_row(&self, w: WarpId, i: u8) {
        if let Some(wp) = self.warps.get(w.0 as usize) {
            wp.prefetch_row(i);
        }
    }
}

/// Per-issue execution context.
struct Ex<'a> {
    k: &'a mut KernelExec,
    /// Global memory when it is not `k.global` (a shard's read view; writes are logged).
    gmem: Option<&'a GlobalMemory>,
    wi: usize,
    cta: usize,
    d: &'a DInst,
    g: u32,
    path: PathEntry,
    next_pc: u64,
    clock: u64,
    out: &'a mut Issued,
}

type Res<T> = Result<T, ExecError>;

impl<'a> Ex<'a> {
    #[inline]
    fn w(&self) -> &Warp {
        &self.k.warps[self.wi]
    }
    #[cold]
    #[inline(never)]
    fn unsup(&self, what: &str) -> ExecError {
        ExecError::unsupported(format!("{} ({what})", self.d.name), self.d.pc)
    }
    /// Operand `i` of the instruction (borrowed from the decoded instruction, not from
    /// `self`: no copy per lane).
    #[inline]
    fn op(&self, i: usize) -> Res<&'a D> {
        self.d
            .o
            .get(i)
            .ok_or_else(|| self.unsup(&format!("missing operand {}", i + 1)))
    }

    /// Lanes to execute: all guard-true lanes, or only the first for uniform instructions.
    fn exec_lanes(&self) -> u32 {
        if self.d.uniform {
            if self.g == 0 {
                0
            } else {
                1 << self.g.trailing_zeros()
            }
        } else {
            self.g
        }
    }

    fn run(&mut self) -> Res<()> {
        let op = &self.d.op;
        if !op.is_control() {
            self.data_op(op)?;
            let np = self.next_pc;
            if let Some(id) = self.out.barrier {
                // BAR.SYNC: the warp waits (BAR.ARV only counts).
                let arrive_only = matches!(op, Op::Bar { arrive_only: true });
                self.barrier(id, arrive_only)?;
            }
            // Hanoi: only the top path's PC moves (VII-C), kept in `cur` (`Warp::cf_behind`).
            let pc_only = self.k.cf_kind == ControlFlowKind::Hanoi;
            self.k.warps[self.wi].advance(np, pc_only);
            return Ok(());
        }
        self.k.warps[self.wi].sync_cf();
        self.control_op(op)
    }

    fn barrier(&mut self, id: u32, arrive_only: bool) -> Res<()> {
        let cta = self.cta;
        let idu = id as usize;
        if idu >= 16 {
            return Err(self.unsup("barrier id > 15"));
        }
        // Thread count operand (BAR.SYNC id, count).
        if let Some(o) = self.d.o.get(1) {
            let cnt = self.raw(&o.clone(), self.g.trailing_zeros().min(31) as usize)?;
            self.k.ctas[cta].expected[idu] = cnt;
        }
        self.k.ctas[cta].arrived[idu] += 1;
        if !arrive_only {
            self.k.warps[self.wi].at_barrier = Some(id);
        }
        self.k.try_release(cta, idu);
        Ok(())
    }
}

mod arch;
mod cluster;
mod control;
mod cta;
mod data;
mod hfloat;
mod hopper;
mod lanes;
mod launch;
mod mem;
mod mma;
mod operands;
mod probe;
mod regs;
mod shard;
pub mod syscall;
mod warpwide;
mod writes;

pub use arch::ArchInfo;
pub use launch::{ExecOptions, Launch, DEFAULT_SHARED_BYTES, DEVICE_HEAP_BYTES, LOCAL_BYTES};
pub use probe::ProbeTally;
pub use writes::{Issued, MemAccess, MemKind, PendingWrites, RegWrite, MAX_WRITES};

/// The index in `code` of the instruction at `pc` where its PC says (one per 16 bytes), if
/// it is there; otherwise `Kernel::index_of` searches.
#[inline]
fn slot_at(code: &[DInst], pc: u64) -> Option<usize> {
    let at = (pc / sassim_isa::INSTRUCTION_BYTES) as usize;
    code.get(at).filter(|d| d.pc == pc).map(|_| at)
}
