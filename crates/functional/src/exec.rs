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

/// Launch geometry and parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Parameter block, copied to constant bank 0 at the arch's parameter offset.
    pub params: Vec<u8>,
    /// Shared memory bytes per CTA that the kernel may address (static + dynamic).
    pub shared_bytes: u32,
    /// Constant banks other than 0 (module `__constant__` data in bank 3, addresses of
    /// globals in bank 4, jump tables…), as the driver loads them: (bank, bytes).
    pub const_banks: Vec<(u32, Arc<Vec<u8>>)>,
    /// The kernel's own bank-0 image (`.nv.constant0.<kernel>`) under the driver fields and
    /// the parameters; empty for hand-written launches.
    pub const0: Arc<Vec<u8>>,
    /// Thread-block cluster dimensions (sm_90+, `__cluster_dims__` or the launch attribute);
    /// `[1, 1, 1]` without clusters. The grid is a whole number of clusters.
    pub cluster: [u32; 3],
}

impl Launch {
    pub fn new(grid: [u32; 3], block: [u32; 3], params: Vec<u8>) -> Launch {
        Launch {
            grid,
            block,
            params,
            shared_bytes: DEFAULT_SHARED_BYTES,
            const_banks: Vec::new(),
            const0: Arc::new(Vec::new()),
            cluster: [1, 1, 1],
        }
    }
    pub fn threads_per_cta(&self) -> u32 {
        self.block[0] * self.block[1] * self.block[2]
    }
    pub fn num_ctas(&self) -> u32 {
        self.grid[0] * self.grid[1] * self.grid[2]
    }
    pub fn warps_per_cta(&self) -> u32 {
        self.threads_per_cta().div_ceil(32)
    }

    /// The grid's cluster geometry.
    pub fn clusters(&self) -> ClusterGeom {
        ClusterGeom {
            grid: self.grid,
            cluster: self.cluster,
        }
    }

    /// CTAs per cluster (1 without clusters).
    pub fn cluster_size(&self) -> u32 {
        self.clusters().size()
    }
}

/// Shared memory available when the launch does not say (the static-allocation limit).
pub const DEFAULT_SHARED_BYTES: u32 = 48 * 1024;
/// Local memory per thread (the stack pointer `c[0x0][0x28]` starts at its top).
pub const LOCAL_BYTES: u32 = 16 * 1024;
/// Device heap for `malloc` in kernels (CUDA's default `cudaLimitMallocHeapSize`, 8 MiB).
pub const DEVICE_HEAP_BYTES: u64 = 8 << 20;

/// Options of a launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOptions {
    /// Treat YIELD as a NOP (demonstrates the SIMT-induced deadlock of the spinlock).
    pub yield_as_nop: bool,
    /// Only these warps (index within the CTA) are created; None = all.
    pub active_warps: Option<Vec<u32>>,
    /// Record each warp's (PC, active mask) sequence.
    pub record_cflow_trace: bool,
    /// Hanoi extension: YIELD with no sibling may release a convergence barrier whose other
    /// participants all wait (see `cflow::hanoi`). On by default.
    pub yield_release: bool,
    /// Local memory bytes per thread.
    pub local_bytes: u32,
    /// Largest device `malloc` allowed (the device heap size limit).
    pub device_heap_bytes: u64,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            yield_as_nop: false,
            active_warps: None,
            record_cflow_trace: false,
            yield_release: true,
            local_bytes: LOCAL_BYTES,
            device_heap_bytes: DEVICE_HEAP_BYTES,
        }
    }
}

/// Maximum number of architectural registers one instruction writes.
pub const MAX_WRITES: usize = 6;

/// One register write produced at issue and applied at commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegWrite {
    pub reg: ArchReg,
    /// Lanes written (all-ones for uniform registers).
    pub mask: u32,
    /// Per-lane values (predicates: 0/1; uniform registers: `vals[0]`).
    pub vals: [u32; 32],
}

/// The register results of one instruction (fixed size, no heap). Only the first `len`
/// entries are meaningful: [`PendingWrites::clear`] leaves the others as they were, and
/// equality and `Debug` look at the used entries only.
#[derive(Clone, Copy)]
pub struct PendingWrites {
    len: u8,
    /// A global atomic whose returned values are written when its shard's memory effects
    /// are applied (parallel ticking, `exec/shard.rs`): 0 = none.
    pub(crate) ticket: u32,
    w: [RegWrite; MAX_WRITES],
}

impl PartialEq for PendingWrites {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}
impl Eq for PendingWrites {}

impl std::fmt::Debug for PendingWrites {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl Default for PendingWrites {
    fn default() -> Self {
        PendingWrites {
            len: 0,
            ticket: 0,
            w: [RegWrite {
                reg: ArchReg::R(0),
                mask: 0,
                vals: [0; 32],
            }; MAX_WRITES],
        }
    }
}

impl PendingWrites {
    #[inline]
    pub fn as_slice(&self) -> &[RegWrite] {
        &self.w[..self.len as usize]
    }
    /// No writes (the entries' storage is kept, not cleared).
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
        self.ticket = 0;
    }
    /// Make `self` hold the writes of `other`, copying only the used entries (a record
    /// reused for every issue, without copying the whole fixed-size array).
    #[inline]
    pub fn copy_from(&mut self, other: &PendingWrites) {
        let n = other.len as usize;
        self.w[..n].copy_from_slice(&other.w[..n]);
        self.len = other.len;
        self.ticket = other.ticket;
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The registers written.
    pub fn regs(&self) -> impl Iterator<Item = ArchReg> + '_ {
        self.as_slice().iter().map(|w| w.reg)
    }
    #[inline]
    fn slot(&mut self, reg: ArchReg) -> &mut RegWrite {
        let n = self.len as usize;
        if let Some(i) = self.w[..n].iter().position(|w| w.reg == reg) {
            return &mut self.w[i];
        }
        assert!(n < MAX_WRITES, "too many register writes in one instruction");
        self.w[n] = RegWrite {
            reg,
            mask: 0,
            vals: [0; 32],
        };
        self.len += 1;
        &mut self.w[n]
    }
    #[inline]
    fn set(&mut self, reg: ArchReg, lane: usize, v: u32) {
        let s = self.slot(reg);
        s.mask |= 1 << lane;
        s.vals[lane] = v;
    }
    /// Write regular register `idx` (RZ ignored).
    #[inline]
    pub(crate) fn r(&mut self, idx: u8, lane: usize, v: u32) {
        if idx != 255 {
            self.set(ArchReg::R(idx), lane, v);
        }
    }
    pub(crate) fn ur(&mut self, idx: u8, v: u32) {
        if idx != 63 {
            let s = self.slot(ArchReg::UR(idx));
            s.mask = u32::MAX;
            s.vals[0] = v;
        }
    }
    pub(crate) fn p(&mut self, idx: u8, lane: usize, v: bool) {
        if idx != 7 {
            self.set(ArchReg::P(idx), lane, v as u32);
        }
    }
    pub(crate) fn up(&mut self, idx: u8, v: bool) {
        if idx != 7 {
            let s = self.slot(ArchReg::UP(idx));
            s.mask = u32::MAX;
            s.vals[0] = v as u32;
        }
    }
}

/// Kind of memory access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum MemKind {
    Load,
    Store,
    Atomic,
    Ldgsts,
}

/// The memory access of one instruction (for the timing/memory model).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemAccess {
    pub space: Space,
    pub kind: MemKind,
    pub bytes_per_lane: u32,
    /// Per-lane addresses, valid for the lanes of `Issued::active_mask` (LDGSTS: the global
    /// source addresses).
    pub addrs: [u64; 32],
    /// A shared-memory access to another CTA of the thread-block cluster (distributed shared
    /// memory, sm_90+), as the first active lane's address says.
    pub remote: bool,
}

/// What one issued instruction did.
#[derive(Debug, Clone, Copy, Default)]
pub struct Issued {
    pub pc: u64,
    /// Index into `kernel.instructions`.
    pub index: usize,
    /// Threads of the path that issued (before the guard).
    pub path_mask: u32,
    /// Lanes that executed (guard true).
    pub active_mask: u32,
    pub mem: Option<MemAccess>,
    pub writes: PendingWrites,
    /// The warp finished (all its threads exited) with this instruction.
    pub exited: bool,
    /// The warp arrived at CTA barrier `id` (BAR.SYNC/BAR.ARV).
    pub barrier: Option<u32>,
    /// The instruction read a clock special register.
    pub clock_read: bool,
}

struct Warp {
    cta: usize,
    in_cta: u32,
    /// [reg * 32 + lane].
    regs: Vec<u32>,
    ur: [u32; 64],
    /// Predicate lane masks P0–P6 (index 7 = PT).
    p: [u32; 8],
    /// Uniform predicate bits UP0–UP6.
    up: u8,
    cf: Box<dyn ControlFlow>,
    /// `cf.current()`, kept up to date: the control flow changes only when the warp issues
    /// (and at its start), while the path is read several times per issue (readiness, next
    /// PC, fetch redirection) — without a call through `cf` and two pointers each time.
    cur: Option<PathEntry>,
    at_barrier: Option<u32>,
    /// Cluster barrier: 1 + the phase in which the warp last arrived (0: never).
    cga_arrived: u32,
    exited: bool,
    local: Vec<u8>,
    tid: [[u32; 3]; 32],
    trace: Vec<(u64, u32)>,
    /// Instructions issued.
    pub issued: u64,
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
    cbank: Vec<u8>,
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
    /// A shard of a kernel whose SMs are ticked in parallel: its global-memory effects,
    /// applied at the end of each cycle (`exec/shard.rs`). `None`: global memory is `global`.
    shard: Option<Box<shard::ShardLog>>,
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
        Ok(KernelExec {
            kernel,
            code: Some(Arc::new(code)),
            ipdom,
            arch,
            launch,
            cf_kind: cf,
            opts,
            cbank,
            banks,
            global: GlobalMemory::new(),
            warps: Vec::new(),
            ctas: Vec::new(),
            free_warps: Vec::new(),
            free_ctas: Vec::new(),
            nregs,
            progress: 0,
            printf_out: Vec::new(),
            assertion: None,
            fault: None,
            clusters: cluster::Clusters::default(),
            bulk: hopper::BulkCopies::default(),
            shard: None,
        })
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
        &mut self.cbank
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
        self.cbank[po..po + params.len()].copy_from_slice(params);
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

    /// Create CTA `cta_linear_id`'s warps (x fastest). Returns their ids: slots of retired
    /// CTAs' warps are reused first (an id names a warp from its CTA's start to its
    /// retirement).
    pub fn start_cta(&mut self, cta_linear_id: u32) -> Vec<WarpId> {
        let g = self.launch.grid;
        let ctaid = [
            cta_linear_id % g[0],
            (cta_linear_id / g[0]) % g[1],
            cta_linear_id / (g[0] * g[1]),
        ];
        let cidx = self.free_ctas.pop().unwrap_or(self.ctas.len());
        let shared = FlatMemory::new((self.arch.shared_base + self.launch.shared_bytes) as usize);
        let b = self.launch.block;
        let nthreads = self.launch.threads_per_cta();
        let mut ids = Vec::new();
        for wi in 0..self.launch.warps_per_cta() {
            if let Some(a) = &self.opts.active_warps {
                if !a.contains(&wi) {
                    continue;
                }
            }
            let mut launched = 0u32;
            let mut tid = [[0u32; 3]; 32];
            for (lane, t) in tid.iter_mut().enumerate() {
                let lin = wi * 32 + lane as u32;
                if lin < nthreads {
                    launched |= 1 << lane;
                    *t = [lin % b[0], (lin / b[0]) % b[1], lin / (b[0] * b[1])];
                }
            }
            let cf: Box<dyn ControlFlow> = match self.cf_kind {
                ControlFlowKind::Hanoi => Box::new(Hanoi::new(launched, 0, self.opts.yield_release)),
                ControlFlowKind::SimtStack => Box::new(SimtStack::new(
                    launched,
                    0,
                    self.ipdom.clone().expect("ipdom computed for SIMT stack"),
                )),
            };
            let start_pc = self.kernel.instructions.first().map_or(0, |i| i.pc);
            let mut cf = cf;
            cf.advance(start_pc);
            let cur = cf.current();
            let warp = Warp {
                cta: cidx,
                in_cta: wi,
                regs: vec![0; self.nregs * 32],
                ur: [0; 64],
                p: [0, 0, 0, 0, 0, 0, 0, u32::MAX],
                up: 0x80,
                cf,
                cur,
                at_barrier: None,
                cga_arrived: 0,
                exited: false,
                local: Vec::new(),
                tid,
                trace: Vec::new(),
                issued: 0,
            };
            let id = match self.free_warps.pop() {
                Some(id) => {
                    self.warps[id.0 as usize] = warp;
                    id
                }
                None => {
                    self.warps.push(warp);
                    WarpId(self.warps.len() as u32 - 1)
                }
            };
            ids.push(id);
        }
        let (cluster, rank) = self.cluster_position(cta_linear_id);
        self.cluster_started(cta_linear_id, cidx);
        let cta = Cta {
            ctaid,
            linear: cta_linear_id,
            rank,
            cluster,
            shared,
            warps: ids.clone(),
            arrived: [0; 16],
            expected: [0; 16],
            retired: false,
        };
        if cidx == self.ctas.len() {
            self.ctas.push(cta);
        } else {
            self.ctas[cidx] = cta;
        }
        ids
    }

    /// Retire the CTA of `w` if all its warps exited: free its registers, shared and local
    /// memory, and make its warp and CTA records free for the next CTAs (their ids must not
    /// be used after this). The records are kept while the control-flow trace is recorded
    /// (it is taken by warp id after the run).
    pub fn retire_cta_of(&mut self, w: WarpId) {
        let c = self.warps[w.0 as usize].cta;
        if self.ctas[c].retired || !self.ctas[c].warps.iter().all(|x| self.warps[x.0 as usize].exited) {
            return;
        }
        self.ctas[c].retired = true;
        self.ctas[c].shared = FlatMemory::default();
        let linear = self.ctas[c].linear;
        self.cluster_retired(linear);
        let ws = std::mem::take(&mut self.ctas[c].warps);
        for &x in &ws {
            let wp = &mut self.warps[x.0 as usize];
            wp.regs = Vec::new();
            wp.local = Vec::new();
        }
        if self.opts.record_cflow_trace {
            self.ctas[c].warps = ws;
        } else {
            // Reversed: the next CTA takes the ids in ascending order.
            self.free_warps.extend(ws.iter().rev());
            self.free_ctas.push(c);
        }
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
        self.warps[w.0 as usize].cf.view()
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

    /// Register values per lane.
    pub fn regs(&self, w: WarpId, reg: ArchReg) -> [u32; 32] {
        let wp = &self.warps[w.0 as usize];
        let mut out = [0u32; 32];
        match reg {
            ArchReg::R(i) => {
                if (i as usize) < self.nregs && !wp.regs.is_empty() && i != 255 {
                    out.copy_from_slice(&wp.regs[i as usize * 32..i as usize * 32 + 32]);
                }
            }
            ArchReg::UR(i) => out = [if i == 63 { 0 } else { wp.ur[i as usize] }; 32],
            ArchReg::P(i) => {
                for (l, o) in out.iter_mut().enumerate() {
                    *o = wp.p[(i & 7) as usize] >> l & 1;
                }
            }
            ArchReg::UP(i) => out = [(wp.up >> (i & 7) & 1) as u32; 32],
            ArchReg::B(i) => {
                if let CfView::Hanoi { bx, .. } = wp.cf.view() {
                    out = [bx[(i & 15) as usize].0; 32];
                }
            }
        }
        out
    }

    /// Set a register for all lanes of a warp (microbenchmark initialisation).
    pub fn set_reg(&mut self, w: WarpId, reg: ArchReg, vals: [u32; 32]) {
        let nregs = self.nregs;
        let wp = &mut self.warps[w.0 as usize];
        match reg {
            ArchReg::R(i) => {
                if (i as usize) < nregs && i != 255 {
                    wp.regs[i as usize * 32..i as usize * 32 + 32].copy_from_slice(&vals);
                }
            }
            ArchReg::UR(i) => {
                if i != 63 {
                    wp.ur[i as usize] = vals[0]
                }
            }
            ArchReg::P(i) => {
                if i < 7 {
                    let mut m = 0;
                    for (l, v) in vals.iter().enumerate() {
                        m |= ((*v != 0) as u32) << l;
                    }
                    wp.p[i as usize] = m;
                }
            }
            ArchReg::UP(i) => {
                if i < 7 {
                    wp.up = (wp.up & !(1 << i)) | (((vals[0] != 0) as u8) << i);
                }
            }
            ArchReg::B(_) => {}
        }
    }

    /// Shared memory of the CTA of warp `w` (window offsets; sm_90 starts user data at 0x400).
    pub fn shared(&self, w: WarpId) -> &[u8] {
        &self.ctas[self.warps[w.0 as usize].cta].shared.bytes
    }
    pub fn shared_mut(&mut self, w: WarpId) -> &mut [u8] {
        let c = self.warps[w.0 as usize].cta;
        &mut self.ctas[c].shared.bytes
    }

    /// [`KernelExec::commit`], returning whether it changed a stored value (deadlock
    /// detection: spinning warps rewrite the same values, a loop that computes does not).
    /// RZ/URZ writes change nothing; predicates compare bit 0 of the lanes written, uniform
    /// registers lane 0 (uniform predicates its bit 0); a register beyond the kernel's
    /// count reads as 0. The old values are compared in place, without a copy.
    pub fn commit_changed(&mut self, w: WarpId, writes: &PendingWrites) -> bool {
        if writes.ticket != 0 {
            if let Some(patched) = self.returned_values(writes) {
                return self.commit_changed(w, &patched);
            }
        }
        let mut changed = false;
        for wr in writes.as_slice() {
            changed |= self.commit_one(w, wr);
        }
        changed
    }

    /// Apply one register write; returns whether it changed a stored value (see
    /// [`KernelExec::commit_changed`]). A regular register's row is compared as it is
    /// written, in one pass.
    #[inline]
    fn commit_one(&mut self, w: WarpId, wr: &RegWrite) -> bool {
        let ArchReg::R(i) = wr.reg else {
            let changed = self.write_changes(w, wr);
            self.commit_other(w, wr);
            return changed;
        };
        let nregs = self.nregs;
        let wp = &mut self.warps[w.0 as usize];
        let b = i as usize * 32;
        let row = match wp.regs.get_mut(b..b + 32).map(<&mut [u32; 32]>::try_from) {
            Some(Ok(row)) if (i as usize) < nregs => row,
            // Past the kernel's registers (or freed): nothing is stored, reads give 0.
            _ => return i != 255 && (0..32).any(|l| wr.mask >> l & 1 == 1 && wr.vals[l] != 0),
        };
        let diff = merge_row(row, &wr.vals, wr.mask);
        i != 255 && diff != 0
    }

    /// Whether committing `wr` would change what [`KernelExec::regs`] reads (see
    /// [`KernelExec::commit_changed`]).
    #[inline]
    fn write_changes(&self, w: WarpId, wr: &RegWrite) -> bool {
        let wp = &self.warps[w.0 as usize];
        match wr.reg {
            ArchReg::R(255) | ArchReg::UR(63) => false,
            ArchReg::R(i) => {
                let i = i as usize;
                if i < self.nregs && !wp.regs.is_empty() {
                    let old = &wp.regs[i * 32..i * 32 + 32];
                    if wr.mask == u32::MAX {
                        return *old != wr.vals; // every lane: one comparison of the rows
                    }
                    let diff = (0..32).fold(0u32, |m, l| m | u32::from(old[l] != wr.vals[l]) << l);
                    diff & wr.mask != 0
                } else {
                    (0..32).any(|l| wr.mask >> l & 1 == 1 && wr.vals[l] != 0)
                }
            }
            ArchReg::UR(i) => wp.ur[i as usize] != wr.vals[0],
            ArchReg::UP(i) => (u32::from(wp.up >> (i & 7) & 1) ^ wr.vals[0]) & 1 != 0,
            ArchReg::P(i) => {
                let old = wp.p[(i & 7) as usize];
                let new = (0..32).fold(0u32, |m, l| m | (wr.vals[l] & 1) << l);
                (old ^ new) & wr.mask != 0
            }
            ArchReg::B(_) => self.regs(w, wr.reg)[0] != wr.vals[0],
        }
    }

    /// Apply the register results of an issued instruction.
    pub fn commit(&mut self, w: WarpId, writes: &PendingWrites) {
        self.commit_changed(w, writes);
    }

    /// Apply a write of a register other than a regular one.
    fn commit_other(&mut self, w: WarpId, wr: &RegWrite) {
        let wp = &mut self.warps[w.0 as usize];
        match wr.reg {
            ArchReg::R(_) | ArchReg::B(_) => {}
            ArchReg::UR(i) => {
                if i != 63 {
                    wp.ur[i as usize] = wr.vals[0];
                }
            }
            ArchReg::P(i) => {
                if i < 7 {
                    let mut m = wp.p[i as usize];
                    for l in lanes(wr.mask) {
                        m = (m & !(1 << l)) | ((wr.vals[l] & 1) << l);
                    }
                    wp.p[i as usize] = m;
                }
            }
            ArchReg::UP(i) => {
                if i < 7 {
                    wp.up = (wp.up & !(1 << i)) | (((wr.vals[0] & 1) as u8) << i);
                }
            }
        }
    }

    /// Called when a warp exits: releases barriers that no longer wait for it.
    fn check_barriers(&mut self, cta: usize) {
        for id in 0..16usize {
            self.try_release(cta, id);
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
        let r = self.issue_inner(w, clock, out, gmem);
        if let Err(e) = &r {
            if self.fault.is_none() && !matches!(e, ExecError::NotReady { .. }) {
                self.fault = Some(e.clone());
            }
        }
        r
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
        // (as `Kernel::index_of`).
        let at = (path.pc / sassim_isa::INSTRUCTION_BYTES) as usize;
        let index = match code.get(at) {
            Some(d) if d.pc == path.pc => at,
            _ => self.kernel.index_of(path.pc).ok_or(ExecError::BadPc {
                warp: w.0,
                pc: path.pc,
            })?,
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
        // The control flow changes only here: the cached path follows it.
        let wp = &mut self.warps[wi];
        wp.cur = wp.cf.current();
        r?;
        if out.exited {
            self.progress += 1;
            self.check_barriers(cta_idx);
            self.cluster_warp_exited(cta_idx);
        }
        Ok(())
    }
}

/// Write the lanes of `mask` of `vals` into `row`; returns the bits that changed, OR-ed
/// over the lanes (0: the row was unchanged). Fixed-size rows: compiled to whole-row vector
/// operations.
#[inline]
fn merge_row(row: &mut [u32; 32], vals: &[u32; 32], mask: u32) -> u32 {
    let old = *row;
    if mask == u32::MAX {
        // Every lane (the common case).
        *row = *vals;
    } else {
        for l in 0..32 {
            let m = 0u32.wrapping_sub(mask >> l & 1);
            row[l] = (old[l] & !m) | (vals[l] & m);
        }
    }
    let mut diff = 0u32;
    for l in 0..32 {
        diff |= old[l] ^ row[l];
    }
    diff
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

    // ---------------- operand reads ----------------

    #[inline]
    fn reg(&self, idx: u8, lane: usize) -> u32 {
        if idx == 255 {
            return 0;
        }
        let w = self.w();
        w.regs.get(idx as usize * 32 + lane).copied().unwrap_or(0)
    }
    #[inline]
    fn ureg(&self, idx: u8) -> u32 {
        if idx >= 63 {
            0
        } else {
            self.w().ur[idx as usize]
        }
    }
    /// The 32-bit word at byte offset `off` of constant bank `bank` (0 outside the bank's
    /// contents, as for a bank the driver did not load).
    fn cword(&self, bank: u32, off: i64) -> u32 {
        if off < 0 || off as usize + 4 > CBANK_BYTES {
            return 0;
        }
        let o = off as usize;
        let bytes: &[u8] = if bank == 0 {
            &self.k.cbank
        } else {
            match self.k.banks.get(bank as usize) {
                Some(Some(b)) => b,
                _ => return 0,
            }
        };
        match bytes.get(o..o + 4) {
            Some(w) => u32::from_le_bytes(w.try_into().expect("4 bytes")),
            None => 0,
        }
    }
    fn const_off(&self, addr: &MemAddr, lane: usize) -> i64 {
        let mut off = addr.offset;
        for t in &addr.terms[..addr.n as usize] {
            let v = if t.uniform {
                self.ureg(t.idx)
            } else {
                self.reg(t.idx, lane)
            };
            off += v as i64 * t.scale as i64;
        }
        off
    }
    fn sreg(&mut self, s: SReg, lane: usize) -> u32 {
        let w = self.w();
        let c = &self.k.ctas[self.cta];
        let v = match s {
            SReg::Tid(k) => w.tid[lane][k as usize],
            SReg::Ctaid(k) => c.ctaid[k as usize],
            SReg::Ntid(k) => self.k.launch.block[k as usize],
            SReg::Nctaid(k) => self.k.launch.grid[k as usize],
            SReg::LaneId => lane as u32,
            SReg::WarpId => w.in_cta,
            SReg::VirtId => w.in_cta,
            SReg::SmId => 0,
            SReg::ClockLo | SReg::GlobalTimerLo => self.clock as u32,
            SReg::ClockHi | SReg::GlobalTimerHi => (self.clock >> 32) as u32,
            SReg::CgaCtaId => c.rank,
            SReg::LtMask => (1u32 << lane) - 1,
            SReg::LeMask => ((1u64 << (lane + 1)) - 1) as u32,
            SReg::EqMask => 1 << lane,
            SReg::GtMask => !(((1u64 << (lane + 1)) - 1) as u32),
            SReg::GeMask => !((1u32 << lane) - 1),
            SReg::SwinHi => (SHARED_WINDOW >> 32) as u32,
            SReg::SwinLo => SHARED_WINDOW as u32,
            SReg::Zero => 0,
        };
        if s.is_clock() {
            self.out.clock_read = true;
        }
        v
    }

    /// Raw 32-bit value of a source (integer view of immediates).
    #[inline]
    fn raw(&mut self, o: &D, lane: usize) -> Res<u32> {
        Ok(match &o.k {
            K::R(i) => self.reg(*i, lane),
            K::UR(i) => self.ureg(*i),
            K::Imm(v) => *v as u32,
            K::ImmF(f) => *f as i64 as u32,
            K::Const { bank, addr } => {
                let off = self.const_off(addr, lane);
                self.cword(*bank, off)
            }
            K::SR(s) => self.sreg(*s, lane),
            K::P(_) | K::UP(_) => self.pred(o, lane) as u32,
            _ => return Err(self.unsup("operand kind")),
        })
    }
    /// Integer source with `~` and `-` applied.
    #[inline]
    fn int(&mut self, o: &D, lane: usize) -> Res<u32> {
        let mut v = self.raw(o, lane)?;
        if o.not {
            v = !v;
        }
        if o.neg {
            v = v.wrapping_neg();
        }
        if o.abs {
            v = (v as i32).unsigned_abs();
        }
        Ok(v)
    }
    /// 64-bit source (register pair, constant pair, immediate).
    #[inline]
    fn raw64(&mut self, o: &D, lane: usize) -> Res<u64> {
        Ok(match &o.k {
            K::R(i) => {
                if *i == 255 {
                    0
                } else {
                    self.reg(*i, lane) as u64 | (self.reg(i + 1, lane) as u64) << 32
                }
            }
            K::UR(i) => {
                if *i >= 63 {
                    0
                } else {
                    self.ureg(*i) as u64 | (self.ureg(i + 1) as u64) << 32
                }
            }
            K::Imm(v) => *v as u64,
            K::Const { bank, addr } => {
                let off = self.const_off(addr, lane);
                self.cword(*bank, off) as u64 | (self.cword(*bank, off + 4) as u64) << 32
            }
            _ => return Err(self.unsup("64-bit operand kind")),
        })
    }
    /// Single-precision source bits with |.| and - applied.
    fn f32b(&mut self, o: &D, lane: usize) -> Res<u32> {
        let mut b = match &o.k {
            K::ImmF(f) => (*f as f32).to_bits(),
            _ => self.raw(o, lane)?,
        };
        if o.abs {
            b &= 0x7fff_ffff;
        }
        if o.neg {
            b ^= 0x8000_0000;
        }
        Ok(b)
    }
    #[inline]
    fn f32v(&mut self, o: &D, lane: usize) -> Res<f32> {
        Ok(f32::from_bits(self.f32b(o, lane)?))
    }
    fn f64v(&mut self, o: &D, lane: usize) -> Res<f64> {
        let mut b = match &o.k {
            K::ImmF(f) => f.to_bits(),
            K::Imm(v) => (*v as u64) << 32,
            _ => self.raw64(o, lane)?,
        };
        if o.abs {
            b &= !(1u64 << 63);
        }
        if o.neg {
            b ^= 1u64 << 63;
        }
        Ok(f64::from_bits(b))
    }
    #[inline]
    fn pred(&self, o: &D, lane: usize) -> bool {
        let w = self.w();
        let v = match o.k {
            K::P(i) => w.p[(i & 7) as usize] >> lane & 1 == 1,
            K::UP(i) => w.up >> (i & 7) & 1 == 1 || i == 7,
            _ => false,
        };
        v ^ o.not
    }
    #[inline]
    fn pred_op(&self, i: usize, lane: usize) -> Res<bool> {
        let o = self.op(i)?;
        if !o.is_pred() {
            return Err(self.unsup(&format!("operand {} is not a predicate", i + 1)));
        }
        Ok(self.pred(o, lane))
    }

    // ---------------- destinations ----------------

    #[inline]
    fn wr(&mut self, i: usize, lane: usize, v: u32) -> Res<()> {
        match self.op(i)?.k {
            K::R(r) => self.out.writes.r(r, lane, v),
            K::UR(r) => self.out.writes.ur(r, v),
            _ => return Err(self.unsup("destination is not a register")),
        }
        Ok(())
    }
    #[inline]
    fn wr64(&mut self, i: usize, lane: usize, v: u64) -> Res<()> {
        match self.op(i)?.k {
            K::R(255) | K::UR(63) => {}
            K::R(r) => {
                self.out.writes.r(r, lane, v as u32);
                self.out.writes.r(r + 1, lane, (v >> 32) as u32);
            }
            K::UR(r) => {
                self.out.writes.ur(r, v as u32);
                self.out.writes.ur(r + 1, (v >> 32) as u32);
            }
            _ => return Err(self.unsup("destination is not a register")),
        }
        Ok(())
    }
    #[inline]
    fn wp(&mut self, i: usize, lane: usize, v: bool) -> Res<()> {
        match self.op(i)?.k {
            K::P(p) => self.out.writes.p(p, lane, v),
            K::UP(p) => self.out.writes.up(p, v),
            _ => return Err(self.unsup("destination is not a predicate")),
        }
        Ok(())
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
            self.k.warps[self.wi].cf.advance(np);
            return Ok(());
        }
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
mod data;
mod hfloat;
mod hopper;
mod lanes;
mod mem;
mod mma;
mod shard;
pub mod syscall;
mod warpwide;

pub use arch::ArchInfo;
