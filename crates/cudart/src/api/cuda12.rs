//! Functions only NVIDIA's `libcudart.so.12` exports (CUDA 12 programs call them; CUDA 13
//! removed or renamed them): the CUDA 12 `cudaDeviceProp` and the legacy thread API.

use super::*;
use std::ffi::c_void;

impl Runtime {
    /// `cudaDeviceProp` in CUDA 12's layout.
    fn properties12(&self) -> cudaDeviceProp12 {
        let p = self.properties();
        let g = &self.gpu_cfg.gpu;
        // SAFETY: plain old data; all-zero is valid.
        let mut q: cudaDeviceProp12 = unsafe { std::mem::zeroed() };
        q.name = p.name;
        q.uuid = p.uuid;
        q.totalGlobalMem = p.totalGlobalMem;
        q.sharedMemPerBlock = p.sharedMemPerBlock;
        q.regsPerBlock = p.regsPerBlock;
        q.warpSize = p.warpSize;
        q.memPitch = p.memPitch;
        q.maxThreadsPerBlock = p.maxThreadsPerBlock;
        q.maxThreadsDim = p.maxThreadsDim;
        q.maxGridSize = p.maxGridSize;
        q.clockRate = (g.core_clock_mhz * 1000.0) as i32;
        q.totalConstMem = p.totalConstMem;
        q.major = p.major;
        q.minor = p.minor;
        q.textureAlignment = p.textureAlignment;
        q.texturePitchAlignment = p.texturePitchAlignment;
        q.deviceOverlap = 1;
        q.multiProcessorCount = p.multiProcessorCount;
        q.canMapHostMemory = p.canMapHostMemory;
        q.concurrentKernels = p.concurrentKernels;
        q.asyncEngineCount = p.asyncEngineCount;
        q.unifiedAddressing = p.unifiedAddressing;
        q.memoryClockRate = (self.gpu_cfg.dram.clock_mhz * 1000.0) as i32;
        q.memoryBusWidth = p.memoryBusWidth;
        q.l2CacheSize = p.l2CacheSize;
        q.maxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
        q.globalL1CacheSupported = p.globalL1CacheSupported;
        q.localL1CacheSupported = p.localL1CacheSupported;
        q.sharedMemPerMultiprocessor = p.sharedMemPerMultiprocessor;
        q.regsPerMultiprocessor = p.regsPerMultiprocessor;
        q.managedMemory = p.managedMemory;
        q.concurrentManagedAccess = p.concurrentManagedAccess;
        q.computePreemptionSupported = p.computePreemptionSupported;
        q.cooperativeLaunch = p.cooperativeLaunch;
        q.sharedMemPerBlockOptin = p.sharedMemPerBlockOptin;
        q.maxBlocksPerMultiProcessor = p.maxBlocksPerMultiProcessor;
        q.reservedSharedMemPerBlock = p.reservedSharedMemPerBlock;
        q.clusterLaunch = p.clusterLaunch;
        q
    }
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetDeviceProperties_v2(prop: *mut cudaDeviceProp12, dev: i32) -> cudaError_t {
    call_always("cudaGetDeviceProperties_v2", |rt| {
        if dev != 0 {
            return Err(RtError::new(cudaErrorInvalidDevice, format!("device {dev}")));
        }
        // SAFETY: output pointer.
        unsafe { out(prop, rt.properties12()) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventElapsedTime_v2(
    ms: *mut f32,
    start: *mut c_void,
    end: *mut c_void,
) -> cudaError_t {
    // SAFETY: forwarded contract.
    unsafe { super::stream::cudaEventElapsedTime(ms, start, end) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaThreadSynchronize() -> cudaError_t {
    // SAFETY: no arguments.
    unsafe { super::device::cudaDeviceSynchronize() }
}

#[no_mangle]
pub unsafe extern "C" fn cudaThreadExit() -> cudaError_t {
    // SAFETY: no arguments.
    unsafe { super::device::cudaDeviceReset() }
}

#[no_mangle]
pub unsafe extern "C" fn cudaThreadSetLimit(limit: i32, value: usize) -> cudaError_t {
    // SAFETY: forwarded contract.
    unsafe { super::device::cudaDeviceSetLimit(limit, value) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaThreadGetLimit(value: *mut usize, limit: i32) -> cudaError_t {
    // SAFETY: forwarded contract.
    unsafe { super::device::cudaDeviceGetLimit(value, limit) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaThreadSetCacheConfig(c: i32) -> cudaError_t {
    // SAFETY: forwarded contract.
    unsafe { super::device::cudaDeviceSetCacheConfig(c) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaSetDoubleForDevice(_d: *mut f64) -> cudaError_t {
    // Legacy no-op in CUDA 12 as well (doubles are native on every supported GPU).
    call("cudaSetDoubleForDevice", |_| Ok(()))
}

#[no_mangle]
pub unsafe extern "C" fn cudaSetDoubleForHost(_d: *mut f64) -> cudaError_t {
    call("cudaSetDoubleForHost", |_| Ok(()))
}
