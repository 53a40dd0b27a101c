//! The device: count, properties and attributes from the preset, limits, synchronisation,
//! versions and error queries.

use super::*;
use std::ffi::c_char;

/// CUDA version reported (13.5, the toolkit the program suite is built with).
const CUDA_VERSION: i32 = 13050;

impl Runtime {
    /// `cudaDeviceProp` of the simulated GPU, from its preset.
    pub fn properties(&self) -> cudaDeviceProp {
        let g = &self.gpu_cfg.gpu;
        // SAFETY: cudaDeviceProp is plain old data (integers and arrays); all-zero is valid.
        let mut p: cudaDeviceProp = unsafe { std::mem::zeroed() };
        let name = format!("sassim {} ({})", g.name, g.description);
        let n = name.len().min(255);
        p.name[..n].copy_from_slice(&name.as_bytes()[..n]);
        p.totalGlobalMem = (g.memory_mb << 20) as usize;
        p.sharedMemPerBlock = 48 * 1024;
        p.regsPerBlock = g.regs_per_sm.min(65536) as i32;
        p.warpSize = g.warp_size as i32;
        p.memPitch = i32::MAX as usize;
        p.maxThreadsPerBlock = 1024;
        p.maxThreadsDim = [1024, 1024, 64];
        p.maxGridSize = [i32::MAX, 65535, 65535];
        p.totalConstMem = 64 * 1024;
        p.major = (self.sm / 10) as i32;
        p.minor = (self.sm % 10) as i32;
        p.textureAlignment = 512;
        p.texturePitchAlignment = 32;
        p.multiProcessorCount = g.num_sms as i32;
        p.canMapHostMemory = 1;
        p.concurrentKernels = 1;
        p.asyncEngineCount = 2;
        p.unifiedAddressing = 1;
        let d = &self.gpu_cfg.dram;
        let partitions = self.gpu_cfg.l2.partitions;
        p.memoryBusWidth = (partitions * d.channels_per_partition * d.bus_width_bytes * 8) as i32;
        p.l2CacheSize = (self.gpu_cfg.l2.size_kb * 1024) as i32;
        p.maxThreadsPerMultiProcessor = g.max_threads_per_sm as i32;
        p.globalL1CacheSupported = 1;
        p.localL1CacheSupported = 1;
        p.sharedMemPerMultiprocessor = (g.shared_mem_per_sm_max_kb * 1024) as usize;
        p.regsPerMultiprocessor = g.regs_per_sm as i32;
        p.managedMemory = 1;
        p.concurrentManagedAccess = 0;
        p.computePreemptionSupported = 1;
        p.cooperativeLaunch = 1;
        p.sharedMemPerBlockOptin = (g.shared_mem_per_cta_max_kb * 1024) as usize;
        p.maxBlocksPerMultiProcessor = g.max_ctas_per_sm as i32;
        p.reservedSharedMemPerBlock = if self.sm >= 80 { 1024 } else { 0 };
        p.clusterLaunch = i32::from(self.sm >= 90);
        p.hostNumaId = -1;
        p
    }

    /// The core clock in kHz (`clockRate`, `cudaDevAttrClockRate`).
    pub(crate) fn clock_rate_khz(&self) -> i32 {
        (self.gpu_cfg.gpu.core_clock_mhz * 1000.0) as i32
    }

    /// The DRAM clock in kHz (`memoryClockRate`, `cudaDevAttrMemoryClockRate`).
    pub(crate) fn memory_clock_rate_khz(&self) -> i32 {
        (self.gpu_cfg.dram.clock_mhz * 1000.0) as i32
    }

    fn attribute(&self, a: i32) -> Option<i32> {
        let p = self.properties();
        Some(match a {
            attr::MaxThreadsPerBlock => p.maxThreadsPerBlock,
            attr::MaxBlockDimX => p.maxThreadsDim[0],
            attr::MaxBlockDimY => p.maxThreadsDim[1],
            attr::MaxBlockDimZ => p.maxThreadsDim[2],
            attr::MaxGridDimX => p.maxGridSize[0],
            attr::MaxGridDimY => p.maxGridSize[1],
            attr::MaxGridDimZ => p.maxGridSize[2],
            attr::MaxSharedMemoryPerBlock => p.sharedMemPerBlock as i32,
            attr::TotalConstantMemory => p.totalConstMem as i32,
            attr::WarpSize => p.warpSize,
            attr::MaxRegistersPerBlock => p.regsPerBlock,
            attr::ClockRate => self.clock_rate_khz(),
            attr::MultiProcessorCount => p.multiProcessorCount,
            attr::KernelExecTimeout | attr::Integrated | attr::ComputeMode | attr::EccEnabled => 0,
            attr::CanMapHostMemory => 1,
            attr::ConcurrentKernels => 1,
            attr::MemoryClockRate => self.memory_clock_rate_khz(),
            attr::GlobalMemoryBusWidth => p.memoryBusWidth,
            attr::L2CacheSize => p.l2CacheSize,
            attr::MaxThreadsPerMultiProcessor => p.maxThreadsPerMultiProcessor,
            attr::AsyncEngineCount => p.asyncEngineCount,
            attr::UnifiedAddressing => 1,
            attr::ComputeCapabilityMajor => p.major,
            attr::ComputeCapabilityMinor => p.minor,
            attr::MaxSharedMemoryPerMultiprocessor => p.sharedMemPerMultiprocessor as i32,
            attr::MaxRegistersPerMultiprocessor => p.regsPerMultiprocessor,
            attr::ManagedMemory => 1,
            attr::ConcurrentManagedAccess => 0,
            attr::CooperativeLaunch => 1,
            attr::MaxSharedMemoryPerBlockOptin => p.sharedMemPerBlockOptin as i32,
            attr::MaxBlocksPerMultiprocessor => p.maxBlocksPerMultiProcessor,
            attr::ReservedSharedMemoryPerBlock => p.reservedSharedMemPerBlock as i32,
            _ => return None,
        })
    }
}

fn check_device(dev: i32) -> RtResult<()> {
    if dev == 0 {
        Ok(())
    } else {
        Err(RtError::new(
            cudaErrorInvalidDevice,
            format!("device {dev} (sassim simulates one device, 0)"),
        ))
    }
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetDeviceCount(count: *mut i32) -> cudaError_t {
    // SAFETY: output pointer.
    call_always("cudaGetDeviceCount", |_| unsafe { out(count, 1) })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetDevice(dev: *mut i32) -> cudaError_t {
    // SAFETY: output pointer.
    call_always("cudaGetDevice", |_| unsafe { out(dev, 0) })
}

#[no_mangle]
pub unsafe extern "C" fn cudaSetDevice(dev: i32) -> cudaError_t {
    call("cudaSetDevice", |_| check_device(dev))
}

#[no_mangle]
pub unsafe extern "C" fn cudaInitDevice(dev: i32, _f1: u32, _f2: u32) -> cudaError_t {
    call("cudaInitDevice", |_| check_device(dev))
}

#[no_mangle]
pub unsafe extern "C" fn cudaSetDeviceFlags(_flags: u32) -> cudaError_t {
    call("cudaSetDeviceFlags", |_| Ok(()))
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetDeviceProperties(prop: *mut cudaDeviceProp, dev: i32) -> cudaError_t {
    call_always("cudaGetDeviceProperties", |rt| {
        check_device(dev)?;
        // SAFETY: output pointer.
        unsafe { out(prop, rt.properties()) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaDeviceGetAttribute(value: *mut i32, a: i32, dev: i32) -> cudaError_t {
    call_always("cudaDeviceGetAttribute", |rt| {
        check_device(dev)?;
        let v = rt.attribute(a).ok_or_else(|| {
            RtError::fatal(
                cudaErrorNotSupported,
                format!("cudaDeviceGetAttribute: attribute {a} is not answered by sassim"),
            )
        })?;
        // SAFETY: output pointer.
        unsafe { out(value, v) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaDeviceSynchronize() -> cudaError_t {
    call("cudaDeviceSynchronize", |_| Ok(()))
}

#[no_mangle]
pub unsafe extern "C" fn cudaDeviceReset() -> cudaError_t {
    call_always("cudaDeviceReset", |rt| {
        rt.sticky = None;
        rt.last_error = cudaSuccess;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaDeviceSetCacheConfig(_c: i32) -> cudaError_t {
    call("cudaDeviceSetCacheConfig", |_| Ok(()))
}

#[no_mangle]
pub unsafe extern "C" fn cudaDeviceSetLimit(limit: i32, value: usize) -> cudaError_t {
    call("cudaDeviceSetLimit", |rt| {
        match limit {
            cudaLimitStackSize => {
                if value == 0 || value > (1 << 20) {
                    return Err(RtError::new(
                        cudaErrorInvalidValue,
                        format!("stack size {value} (1 to 1 MiB per thread)"),
                    ));
                }
                rt.stack_limit = value as u64;
            }
            cudaLimitMallocHeapSize => rt.heap_limit = value as u64,
            cudaLimitPrintfFifoSize => rt.printf_fifo = value as u64,
            l => {
                return Err(RtError::fatal(
                    cudaErrorUnsupportedLimit,
                    format!("cudaDeviceSetLimit: limit {l} is not modelled by sassim"),
                ))
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaDeviceGetLimit(value: *mut usize, limit: i32) -> cudaError_t {
    call("cudaDeviceGetLimit", |rt| {
        let v = match limit {
            cudaLimitStackSize => rt.stack_limit,
            cudaLimitMallocHeapSize => rt.heap_limit,
            cudaLimitPrintfFifoSize => rt.printf_fifo,
            l => {
                return Err(RtError::fatal(
                    cudaErrorUnsupportedLimit,
                    format!("cudaDeviceGetLimit: limit {l} is not modelled by sassim"),
                ))
            }
        };
        // SAFETY: output pointer.
        unsafe { out(value, v as usize) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaRuntimeGetVersion(v: *mut i32) -> cudaError_t {
    // SAFETY: output pointer.
    call_always("cudaRuntimeGetVersion", |_| unsafe { out(v, CUDA_VERSION) })
}

#[no_mangle]
pub unsafe extern "C" fn cudaDriverGetVersion(v: *mut i32) -> cudaError_t {
    // SAFETY: output pointer.
    call_always("cudaDriverGetVersion", |_| unsafe { out(v, CUDA_VERSION) })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetLastError() -> cudaError_t {
    let mut e = cudaSuccess;
    call_always("cudaGetLastError", |rt| {
        e = rt.last_error;
        rt.last_error = rt.sticky.unwrap_or(cudaSuccess);
        Ok(())
    });
    e
}

#[no_mangle]
pub unsafe extern "C" fn cudaPeekAtLastError() -> cudaError_t {
    let mut e = cudaSuccess;
    call_always("cudaPeekAtLastError", |rt| {
        e = rt.last_error;
        Ok(())
    });
    e
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetErrorString(e: cudaError_t) -> *const c_char {
    error_text(e).1.as_ptr().cast()
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetErrorName(e: cudaError_t) -> *const c_char {
    error_text(e).0.as_ptr().cast()
}

#[cfg(test)]
mod tests {
    /// `gpu.shared_mem_per_sm_max_kb` is the SM's shared memory programs see
    /// (`cudaDeviceProp::sharedMemPerMultiprocessor`, and what
    /// `cudaOccupancyAvailableDynamicSMemPerBlock` divides among the blocks): the preset key's
    /// effect (crates/gpu/tests/preset_keys.rs names this test for it).
    #[test]
    fn shared_memory_per_sm_is_the_presets() {
        let mut rt = crate::runtime::Runtime::new();
        let kb = rt.gpu_cfg.gpu.shared_mem_per_sm_max_kb;
        assert_eq!(rt.properties().sharedMemPerMultiprocessor, kb as usize * 1024);
        rt.gpu_cfg.gpu.shared_mem_per_sm_max_kb = kb / 2;
        assert_eq!(
            rt.properties().sharedMemPerMultiprocessor,
            (kb / 2) as usize * 1024
        );
    }
}
