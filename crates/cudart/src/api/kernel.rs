//! Kernel attributes and the occupancy calculator (the same limits the timing model's
//! CTA scheduler applies).

use super::*;
use crate::module::LoadedKernel;
use std::ffi::c_void;

impl Runtime {
    fn kernel_of(&mut self, func: *const c_void) -> RtResult<(LoadedKernel, u32)> {
        let (m, name) = self
            .functions
            .get(&(func as usize))
            .cloned()
            .ok_or_else(|| RtError::new(cudaErrorInvalidDeviceFunction, "not a registered kernel"))?;
        let img = self.image_of(m, Some(&name))?;
        let arch = img.arch;
        let k = img.kernels.get(&name).cloned().ok_or_else(|| {
            RtError::new(
                cudaErrorInvalidDeviceFunction,
                format!("kernel {name} not in its module"),
            )
        })?;
        Ok((k, arch))
    }

    /// Static shared memory of a kernel (without the window sm_90 reserves).
    fn static_shared(k: &LoadedKernel, arch: u32) -> u64 {
        let reserved = sassim_functional::ArchInfo::parse(&format!("sm_{arch}")).map_or(0, |a| a.shared_base);
        (k.info.shared_section as u64).saturating_sub(reserved as u64)
    }

    /// Blocks of `block_size` threads resident per SM.
    fn occupancy(&mut self, func: *const c_void, block_size: i32, dyn_smem: usize) -> RtResult<i32> {
        if block_size <= 0 || block_size > 1024 {
            return Err(RtError::new(
                cudaErrorInvalidValue,
                format!("block size {block_size}"),
            ));
        }
        let (k, arch) = self.kernel_of(func)?;
        let threads = block_size as u32;
        let warps = threads.div_ceil(self.gpu_cfg.gpu.warp_size);
        let gran = self.gpu_cfg.gpu.reg_alloc_granularity.max(1);
        let regs = k.info.regs.max(1).div_ceil(gran) * gran;
        let smem = Self::static_shared(&k, arch) + dyn_smem as u64;
        Ok(self
            .gpu
            .ctas_per_sm(warps, threads, regs, smem.min(u32::MAX as u64) as u32) as i32)
    }
}

#[no_mangle]
pub unsafe extern "C" fn cudaFuncSetAttribute(func: *const c_void, attr: i32, value: i32) -> cudaError_t {
    call("cudaFuncSetAttribute", |rt| {
        let (k, arch) = rt.kernel_of(func)?;
        match attr {
            cudaFuncAttributeMaxDynamicSharedMemorySize => {
                let limit = rt.gpu_cfg.gpu.shared_mem_per_cta_max_kb as u64 * 1024;
                let st = Runtime::static_shared(&k, arch);
                if value < 0 || value as u64 + st > limit {
                    return Err(RtError::new(
                        cudaErrorInvalidValue,
                        format!("max dynamic shared memory {value} + static {st} exceeds {limit} bytes"),
                    ));
                }
                rt.func_attrs.entry(func as usize).or_default().max_dynamic_shared = Some(value as u32);
            }
            cudaFuncAttributePreferredSharedMemoryCarveout => {
                if !(-1..=100).contains(&value) {
                    return Err(RtError::new(
                        cudaErrorInvalidValue,
                        format!("carveout {value} (-1 to 100)"),
                    ));
                }
                rt.func_attrs.entry(func as usize).or_default().carveout = Some(value);
            }
            _ => {
                return Err(RtError::fatal(
                    cudaErrorNotSupported,
                    format!("cudaFuncSetAttribute: attribute {attr} is not modelled by sassim"),
                ))
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaFuncSetCacheConfig(func: *const c_void, _c: i32) -> cudaError_t {
    call("cudaFuncSetCacheConfig", |rt| rt.kernel_of(func).map(|_| ()))
}

#[no_mangle]
pub unsafe extern "C" fn cudaFuncGetAttributes(
    attr: *mut cudaFuncAttributes,
    func: *const c_void,
) -> cudaError_t {
    call("cudaFuncGetAttributes", |rt| {
        let (k, arch) = rt.kernel_of(func)?;
        let st = Runtime::static_shared(&k, arch);
        let fa = rt.func_attrs.get(&(func as usize)).copied().unwrap_or_default();
        let max_threads = k
            .info
            .max_threads
            .map_or(1024, |m| m.iter().map(|&x| x.max(1)).product::<u32>().min(1024));
        let a = cudaFuncAttributes {
            sharedSizeBytes: st as usize,
            constSizeBytes: 0,
            localSizeBytes: k.info.frame_size as usize,
            maxThreadsPerBlock: max_threads as i32,
            numRegs: k.info.regs as i32,
            ptxVersion: arch as i32,
            binaryVersion: arch as i32,
            maxDynamicSharedSizeBytes: fa
                .max_dynamic_shared
                .map_or((48 * 1024u64).saturating_sub(st) as i32, |v| v as i32),
            preferredShmemCarveout: fa.carveout.unwrap_or(-1),
            requiredClusterWidth: k.info.cluster_dims.map_or(0, |c| c[0] as i32),
            requiredClusterHeight: k.info.cluster_dims.map_or(0, |c| c[1] as i32),
            requiredClusterDepth: k.info.cluster_dims.map_or(0, |c| c[2] as i32),
            ..Default::default()
        };
        // SAFETY: output pointer.
        unsafe { out(attr, a) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaOccupancyMaxActiveBlocksPerMultiprocessor(
    n: *mut i32,
    func: *const c_void,
    block_size: i32,
    dyn_smem: usize,
) -> cudaError_t {
    call("cudaOccupancyMaxActiveBlocksPerMultiprocessor", |rt| {
        let v = rt.occupancy(func, block_size, dyn_smem)?;
        // SAFETY: output pointer.
        unsafe { out(n, v) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    n: *mut i32,
    func: *const c_void,
    block_size: i32,
    dyn_smem: usize,
    _flags: u32,
) -> cudaError_t {
    call("cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", |rt| {
        let v = rt.occupancy(func, block_size, dyn_smem)?;
        // SAFETY: output pointer.
        unsafe { out(n, v) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaOccupancyAvailableDynamicSMemPerBlock(
    size: *mut usize,
    func: *const c_void,
    num_blocks: i32,
    block_size: i32,
) -> cudaError_t {
    call("cudaOccupancyAvailableDynamicSMemPerBlock", |rt| {
        if num_blocks <= 0 || block_size <= 0 {
            return Err(RtError::new(
                cudaErrorInvalidValue,
                "block count and size must be positive",
            ));
        }
        let (k, arch) = rt.kernel_of(func)?;
        let per_sm = rt.gpu_cfg.gpu.shared_mem_per_sm_max_kb as u64 * 1024;
        let per_cta = rt.gpu_cfg.gpu.shared_mem_per_cta_max_kb as u64 * 1024;
        let st = Runtime::static_shared(&k, arch);
        let v = (per_sm / num_blocks as u64).min(per_cta).saturating_sub(st);
        // SAFETY: output pointer.
        unsafe { out(size, v as usize) }
    })
}
