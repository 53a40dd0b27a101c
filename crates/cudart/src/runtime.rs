//! The runtime's state: the simulated device, registered modules, allocations, streams and
//! events, the error state, and the results file.

use crate::abi::*;
use crate::config::{Event, ExecConfig, CONFIG_ENV};
use crate::error::{RtError, RtResult};
use crate::module::{load_image, select_cubins, LoadedImage, Module, VarLoc};
use sassim_config::GpuConfig;
use sassim_cubin::SassSource;
use sassim_functional::GlobalMemory;
use sassim_gpu::Gpu;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

/// First device address handed out: above 2^48, where no host (user-space) address can be,
/// so that device pointers and host pointers mapped for the device (managed and pinned
/// memory) never collide, and `cudaMemcpyDefault` can tell them apart.
pub const DEVICE_BASE: u64 = 0x0002_0000_0000_0000;

/// Host memory the device also sees (managed or pinned): its bytes are copied into device
/// memory before each kernel and back after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostKind {
    Managed,
    Pinned,
}

/// A launch configuration pushed by `<<<...>>>` (`__cudaPushCallConfiguration`).
#[derive(Debug, Clone, Copy)]
pub struct CallConfig {
    pub grid: dim3,
    pub block: dim3,
    pub shared: usize,
    pub stream: usize,
}

/// Per-kernel attributes set by `cudaFuncSetAttribute`.
#[derive(Debug, Clone, Copy, Default)]
pub struct FuncAttrs {
    pub max_dynamic_shared: Option<u32>,
    pub carveout: Option<i32>,
}

/// The runtime.
pub struct Runtime {
    pub cfg: ExecConfig,
    pub gpu_cfg: GpuConfig,
    /// SM version of the simulated GPU (86 for sm_86).
    pub sm: u32,
    pub gpu: Gpu,
    pub mem: GlobalMemory,
    pub modules: Vec<Module>,
    /// Host stub address of a kernel → (module index, device function name).
    pub functions: HashMap<usize, (usize, String)>,
    /// Host shadow address of a device variable → (module index, name).
    pub vars: HashMap<usize, (usize, String)>,
    /// Device allocations (`cudaMalloc`): address → size.
    pub device_allocs: BTreeMap<u64, u64>,
    /// Host memory mapped into the device: address → (size, kind).
    pub host_regions: BTreeMap<usize, (usize, HostKind)>,
    /// Streams created by the program (handles), with the time they are free.
    pub streams: BTreeMap<usize, u64>,
    next_handle: usize,
    /// Events: handle → recorded time (cycles; None until recorded).
    pub events: BTreeMap<usize, Option<u64>>,
    /// Simulated device time (cycles of the core clock).
    pub now: u64,
    pub last_error: cudaError_t,
    /// An error that poisons the context (a kernel fault), returned by every later call.
    pub sticky: Option<cudaError_t>,
    pub call_stack: Vec<CallConfig>,
    pub func_attrs: HashMap<usize, FuncAttrs>,
    pub stack_limit: u64,
    pub heap_limit: u64,
    pub printf_fifo: u64,
    pub sass: SassSource,
    pub launches: u32,
    results: Option<std::fs::File>,
    /// A fatal problem found while registering (reported at the first launch).
    pub init_error: Option<RtError>,
    /// When simulation must stop (`--max-wall`).
    pub deadline: Option<std::time::Instant>,
    /// Why the last kernel was stopped by a limit.
    pub stopped: Option<String>,
}

static RUNTIME: Mutex<Option<Runtime>> = Mutex::new(None);

/// The runtime, created on first use.
pub fn runtime() -> MutexGuard<'static, Option<Runtime>> {
    let mut g = RUNTIME.lock().unwrap_or_else(|p| p.into_inner());
    if g.is_none() {
        *g = Some(Runtime::new());
    }
    g
}

fn read_config() -> Result<ExecConfig, String> {
    let Some(path) = std::env::var_os(CONFIG_ENV) else {
        return Ok(ExecConfig::default());
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: {e}", std::path::Path::new(&path).display()))?;
    let where_ = std::path::Path::new(&path).display().to_string();
    let cfg: ExecConfig = serde_json::from_str(&text).map_err(|e| format!("{where_}: {e}"))?;
    // The threads that tick SMs are spawned from this count.
    if cfg.threads == 0 || cfg.threads > MAX_THREADS {
        return Err(format!(
            "{where_}: field `threads`: {} (1 to {MAX_THREADS})",
            cfg.threads
        ));
    }
    Ok(cfg)
}

/// Most threads a kernel's SMs may tick on (as `sassim exec --threads` accepts).
const MAX_THREADS: usize = 1024;

impl Runtime {
    pub(crate) fn new() -> Runtime {
        let (cfg, mut init_error) = match read_config() {
            Ok(c) => (c, None),
            Err(e) => (
                ExecConfig::default(),
                Some(RtError::fatal(
                    cudaErrorInitializationError,
                    format!("sassim: configuration {e}"),
                )),
            ),
        };
        let gpu_cfg = match GpuConfig::load(&cfg.gpu, &cfg.sets) {
            Ok(g) => g,
            Err(e) => {
                init_error.get_or_insert(RtError::fatal(
                    cudaErrorInitializationError,
                    format!("sassim: {e}"),
                ));
                GpuConfig::default_preset()
            }
        };
        let sm = gpu_cfg
            .gpu
            .arch
            .trim_start_matches("sm_")
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap_or(86);
        let results = cfg
            .results
            .as_ref()
            .and_then(|p| std::fs::OpenOptions::new().create(true).append(true).open(p).ok());
        if let Some(fd) = cfg.progress_fd {
            // Never block the simulation on a slow reader.
            // SAFETY: fcntl on a descriptor number; failures are ignored.
            unsafe {
                let fl = libc::fcntl(fd, libc::F_GETFL);
                if fl >= 0 {
                    libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
                }
            }
        }
        // Also `sass/` beside this process's executable or its parent directory (the
        // program may have been started by a script `sassim exec` ran).
        let mut cache_dirs = cfg.sass_cache.clone();
        if let Some(dir) = std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(Path::to_path_buf))
        {
            for d in [Some(dir.join("sass")), dir.parent().map(|p| p.join("sass"))]
                .into_iter()
                .flatten()
            {
                if !cache_dirs.contains(&d) {
                    cache_dirs.push(d);
                }
            }
        }
        let deadline = (cfg.max_wall_seconds.is_finite() && cfg.max_wall_seconds > 0.0).then(|| {
            std::time::Instant::now() + std::time::Duration::from_secs_f64(cfg.max_wall_seconds.min(1e9))
        });
        let sass = SassSource {
            cache_dirs,
            nvdisasm: cfg.nvdisasm.clone(),
            write_cache: cfg.write_cache.clone(),
            deadline,
        };
        let gpu = Gpu::new(gpu_cfg.clone());
        let mut rt = Runtime {
            sm,
            gpu,
            mem: GlobalMemory::with_base(DEVICE_BASE),
            modules: Vec::new(),
            functions: HashMap::new(),
            vars: HashMap::new(),
            device_allocs: BTreeMap::new(),
            host_regions: BTreeMap::new(),
            streams: BTreeMap::new(),
            next_handle: 0x5a5_0000,
            events: BTreeMap::new(),
            now: 0,
            last_error: cudaSuccess,
            sticky: None,
            call_stack: Vec::new(),
            func_attrs: HashMap::new(),
            stack_limit: 1024,
            heap_limit: sassim_functional::exec::DEVICE_HEAP_BYTES,
            printf_fifo: 1 << 20,
            sass,
            launches: 0,
            results,
            init_error,
            deadline,
            stopped: None,
            cfg,
            gpu_cfg,
        };
        let config = serde_json::to_value(&rt.gpu_cfg).unwrap_or(serde_json::Value::Null);
        rt.event(&Event::Device {
            gpu: rt.gpu_cfg.gpu.name.clone(),
            arch: rt.gpu_cfg.gpu.arch.clone(),
            config,
        });
        rt
    }

    /// Append an event to the results file.
    pub fn event(&mut self, e: &Event) {
        if let Some(f) = &mut self.results {
            if let Ok(mut line) = serde_json::to_vec(e) {
                line.push(b'\n');
                let _ = f.write_all(&line);
            }
        }
    }

    /// Report an error to the user (stderr and the results file) when it is one the
    /// program may not notice, and return its code.
    pub fn fail(&mut self, call: &str, e: RtError) -> cudaError_t {
        if e.fatal {
            eprintln!("sassim: {call}: {}", e.message);
            self.event(&Event::Error {
                call: call.to_string(),
                message: e.message.clone(),
            });
        }
        self.last_error = e.code;
        e.code
    }

    /// A new opaque handle (streams, events).
    pub fn handle(&mut self) -> usize {
        self.next_handle += 0x10;
        self.next_handle
    }

    /// Whether `[addr, addr+len)` is device memory (an allocation or a module's globals).
    pub fn is_device(&self, addr: u64, len: u64) -> bool {
        addr >= DEVICE_BASE && self.mem.is_mapped(addr, len.max(1))
    }

    /// The device image of module `m` (loaded on first use).
    pub fn image_of(&mut self, m: usize, kernel: Option<&str>) -> RtResult<&mut LoadedImage> {
        if self.modules.get(m).is_none() {
            return Err(RtError::new(cudaErrorInvalidResourceHandle, "unknown module"));
        }
        if let Some(e) = &self.modules[m].load_error {
            return Err(RtError::new(e.code, e.message.clone()));
        }
        if self.modules[m].images.is_none() {
            let r = self.load_module(m, kernel);
            if let Err(e) = &r {
                self.modules[m].load_error = Some(e.clone());
            }
            r?;
        }
        let images = self.modules[m].images.as_mut().expect("loaded");
        let idx = match kernel {
            Some(k) => images.iter().position(|i| i.kernels.contains_key(k)),
            None => Some(0),
        };
        match idx {
            Some(i) if i < images.len() => Ok(&mut images[i]),
            _ => Err(RtError::fatal(
                cudaErrorInvalidDeviceFunction,
                format!(
                    "kernel {} is registered but none of the module's sm_{} cubins contains it",
                    kernel.unwrap_or("?"),
                    self.sm
                ),
            )),
        }
    }

    fn load_module(&mut self, m: usize, kernel: Option<&str>) -> RtResult<()> {
        {
            let module = &self.modules[m];
            let cubins = select_cubins(&module.fatbin, self.sm).map_err(|why| {
                RtError::fatal(
                    cudaErrorNoKernelImageForDevice,
                    format!(
                        "{}{}: {why} (the GPU is {}, {})",
                        kernel.map(|k| format!("kernel {k}: ")).unwrap_or_default(),
                        module.origin,
                        self.gpu_cfg.gpu.name,
                        self.gpu_cfg.gpu.arch
                    ),
                )
            })?;
            let origin = module.origin.clone();
            let mut images = Vec::new();
            for (i, (arch, bytes)) in cubins.into_iter().enumerate() {
                let o = format!("{origin} cubin {} (sm_{arch})", i + 1);
                images.push(
                    load_image(bytes, arch, &o, &mut self.mem, &self.sass).map_err(|mut e| {
                        e.fatal = true;
                        e
                    })?,
                );
            }
            // LTRF with renumbering: the kernels run renumbered (functionally and timed).
            if sassim_gpu::ltrf::renumbers(&self.gpu_cfg) {
                for img in images.iter_mut() {
                    for k in img.kernels.values_mut() {
                        if let Some(r) = sassim_gpu::ltrf::kernel_for(&k.code, &self.gpu_cfg) {
                            k.code = std::sync::Arc::new(r);
                        }
                    }
                }
            }
            self.modules[m].images = Some(images);
        }
        Ok(())
    }

    /// Where the device variable registered at host address `host` lives.
    pub fn var(&mut self, host: usize) -> RtResult<(usize, VarLoc, u64)> {
        let (m, name) = self.vars.get(&host).cloned().ok_or_else(|| {
            RtError::new(
                cudaErrorInvalidSymbol,
                format!("{host:#x} is not a registered device symbol"),
            )
        })?;
        let img = self.image_of(m, None)?;
        // The symbol may live in any image of the module.
        let found = img.vars.get(&name).copied();
        let (loc, size) = match found {
            Some(v) => v,
            None => {
                let images = self.modules[m].images.as_ref().expect("loaded");
                images
                    .iter()
                    .find_map(|i| i.vars.get(&name).copied())
                    .ok_or_else(|| {
                        RtError::new(
                            cudaErrorInvalidSymbol,
                            format!("device symbol {name} is not in the module"),
                        )
                    })?
            }
        };
        Ok((m, loc, size))
    }

    /// Copy mirrored host memory into the device (before a kernel).
    pub fn host_to_device_mirrors(&mut self) {
        for (&addr, &(len, _)) in &self.host_regions {
            // SAFETY: the region was allocated by this runtime (cudaMallocHost /
            // cudaMallocManaged) with `len` bytes and is not freed while registered.
            let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
            self.mem.write(addr as u64, bytes);
        }
    }

    /// Copy mirrored device memory back to the host (after a kernel).
    pub fn device_to_host_mirrors(&mut self) {
        for (&addr, &(len, _)) in &self.host_regions {
            // SAFETY: as in `host_to_device_mirrors`; no other reference to the region is
            // alive while the runtime lock is held.
            let bytes = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, len) };
            self.mem.read_into(addr as u64, bytes);
        }
    }

    /// Cycles → milliseconds at the core clock.
    pub fn cycles_to_ms(&self, cycles: u64) -> f64 {
        cycles as f64 / (self.gpu_cfg.gpu.core_clock_mhz * 1000.0)
    }
}
