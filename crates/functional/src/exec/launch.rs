//! A launch's geometry, parameters and options.

use super::*;

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
