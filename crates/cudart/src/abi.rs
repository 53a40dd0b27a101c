//! The C ABI of the CUDA runtime (CUDA 13.5 headers: `driver_types.h`,
//! `cuda_runtime_api.h`): error codes, enums and the structures programs read.
//! Field order and types follow the headers exactly; the layout tests at the end check
//! offsets measured with gcc 12 on those headers.

#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals)]

use std::ffi::c_void;

/// `cudaError_t`.
pub type cudaError_t = i32;

pub const cudaSuccess: cudaError_t = 0;
pub const cudaErrorInvalidValue: cudaError_t = 1;
pub const cudaErrorMemoryAllocation: cudaError_t = 2;
pub const cudaErrorInitializationError: cudaError_t = 3;
pub const cudaErrorInvalidConfiguration: cudaError_t = 9;
pub const cudaErrorInvalidPitchValue: cudaError_t = 12;
pub const cudaErrorInvalidSymbol: cudaError_t = 13;
pub const cudaErrorInvalidHostPointer: cudaError_t = 16;
pub const cudaErrorInvalidDevicePointer: cudaError_t = 17;
pub const cudaErrorInvalidMemcpyDirection: cudaError_t = 21;
pub const cudaErrorMissingConfiguration: cudaError_t = 52;
pub const cudaErrorInvalidDeviceFunction: cudaError_t = 98;
pub const cudaErrorNoDevice: cudaError_t = 100;
pub const cudaErrorInvalidDevice: cudaError_t = 101;
pub const cudaErrorInvalidKernelImage: cudaError_t = 200;
pub const cudaErrorNoKernelImageForDevice: cudaError_t = 209;
pub const cudaErrorUnsupportedLimit: cudaError_t = 215;
pub const cudaErrorInvalidPtx: cudaError_t = 218;
pub const cudaErrorSharedObjectSymbolNotFound: cudaError_t = 302;
pub const cudaErrorInvalidResourceHandle: cudaError_t = 400;
pub const cudaErrorSymbolNotFound: cudaError_t = 500;
pub const cudaErrorNotReady: cudaError_t = 600;
pub const cudaErrorIllegalAddress: cudaError_t = 700;
pub const cudaErrorLaunchOutOfResources: cudaError_t = 701;
pub const cudaErrorLaunchTimeout: cudaError_t = 702;
pub const cudaErrorAssert: cudaError_t = 710;
pub const cudaErrorIllegalInstruction: cudaError_t = 715;
pub const cudaErrorMisalignedAddress: cudaError_t = 716;
pub const cudaErrorLaunchFailure: cudaError_t = 719;
pub const cudaErrorNotSupported: cudaError_t = 801;

/// Names and descriptions of the error codes (`cudaGetErrorName` / `cudaGetErrorString`),
/// NUL-terminated for C.
pub fn error_text(e: cudaError_t) -> (&'static str, &'static str) {
    match e {
        cudaSuccess => ("cudaSuccess\0", "no error\0"),
        cudaErrorInvalidValue => ("cudaErrorInvalidValue\0", "invalid argument\0"),
        cudaErrorMemoryAllocation => ("cudaErrorMemoryAllocation\0", "out of memory\0"),
        cudaErrorInitializationError => ("cudaErrorInitializationError\0", "initialization error\0"),
        cudaErrorInvalidConfiguration => (
            "cudaErrorInvalidConfiguration\0",
            "invalid configuration argument\0",
        ),
        cudaErrorInvalidPitchValue => ("cudaErrorInvalidPitchValue\0", "invalid pitch argument\0"),
        cudaErrorInvalidSymbol => ("cudaErrorInvalidSymbol\0", "invalid device symbol\0"),
        cudaErrorInvalidHostPointer => ("cudaErrorInvalidHostPointer\0", "invalid host pointer\0"),
        cudaErrorInvalidDevicePointer => ("cudaErrorInvalidDevicePointer\0", "invalid device pointer\0"),
        cudaErrorInvalidMemcpyDirection => (
            "cudaErrorInvalidMemcpyDirection\0",
            "invalid copy direction for memcpy\0",
        ),
        cudaErrorMissingConfiguration => (
            "cudaErrorMissingConfiguration\0",
            "__global__ function call is not configured\0",
        ),
        cudaErrorInvalidDeviceFunction => ("cudaErrorInvalidDeviceFunction\0", "invalid device function\0"),
        cudaErrorNoDevice => ("cudaErrorNoDevice\0", "no CUDA-capable device is detected\0"),
        cudaErrorInvalidDevice => ("cudaErrorInvalidDevice\0", "invalid device ordinal\0"),
        cudaErrorInvalidKernelImage => (
            "cudaErrorInvalidKernelImage\0",
            "device kernel image is invalid\0",
        ),
        cudaErrorNoKernelImageForDevice => (
            "cudaErrorNoKernelImageForDevice\0",
            "no kernel image is available for execution on the device\0",
        ),
        cudaErrorUnsupportedLimit => (
            "cudaErrorUnsupportedLimit\0",
            "limit is not supported on this architecture\0",
        ),
        cudaErrorInvalidPtx => ("cudaErrorInvalidPtx\0", "a PTX JIT compilation failed\0"),
        cudaErrorInvalidResourceHandle => ("cudaErrorInvalidResourceHandle\0", "invalid resource handle\0"),
        cudaErrorSymbolNotFound => ("cudaErrorSymbolNotFound\0", "named symbol not found\0"),
        cudaErrorNotReady => ("cudaErrorNotReady\0", "device not ready\0"),
        cudaErrorIllegalAddress => (
            "cudaErrorIllegalAddress\0",
            "an illegal memory access was encountered\0",
        ),
        cudaErrorLaunchOutOfResources => (
            "cudaErrorLaunchOutOfResources\0",
            "too many resources requested for launch\0",
        ),
        cudaErrorLaunchTimeout => (
            "cudaErrorLaunchTimeout\0",
            "the launch timed out and was terminated\0",
        ),
        cudaErrorAssert => ("cudaErrorAssert\0", "device-side assert triggered\0"),
        cudaErrorIllegalInstruction => (
            "cudaErrorIllegalInstruction\0",
            "an illegal instruction was encountered\0",
        ),
        cudaErrorMisalignedAddress => ("cudaErrorMisalignedAddress\0", "misaligned address\0"),
        cudaErrorLaunchFailure => ("cudaErrorLaunchFailure\0", "unspecified launch failure\0"),
        cudaErrorNotSupported => ("cudaErrorNotSupported\0", "operation not supported\0"),
        _ => ("cudaErrorUnknown\0", "unrecognized error code\0"),
    }
}

/// `cudaMemcpyKind`.
pub const cudaMemcpyHostToHost: i32 = 0;
pub const cudaMemcpyHostToDevice: i32 = 1;
pub const cudaMemcpyDeviceToHost: i32 = 2;
pub const cudaMemcpyDeviceToDevice: i32 = 3;
pub const cudaMemcpyDefault: i32 = 4;

/// `cudaLimit`.
pub const cudaLimitStackSize: i32 = 0;
pub const cudaLimitPrintfFifoSize: i32 = 1;
pub const cudaLimitMallocHeapSize: i32 = 2;

/// `cudaFuncAttribute`.
pub const cudaFuncAttributeMaxDynamicSharedMemorySize: i32 = 8;
pub const cudaFuncAttributePreferredSharedMemoryCarveout: i32 = 9;

/// `cudaMemoryType`.
pub const cudaMemoryTypeUnregistered: i32 = 0;
pub const cudaMemoryTypeHost: i32 = 1;
pub const cudaMemoryTypeDevice: i32 = 2;
pub const cudaMemoryTypeManaged: i32 = 3;

/// `dim3`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl dim3 {
    pub fn arr(self) -> [u32; 3] {
        [self.x, self.y, self.z]
    }
}

/// `cudaUUID_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct cudaUUID_t {
    pub bytes: [u8; 16],
}

/// Declares `cudaDeviceProp` (CUDA 13) and `cudaDeviceProp12` (CUDA 12) from one list of
/// fields in the headers' order, and `cudaDeviceProp12::from_cuda13`. A field only one
/// structure has is marked `#[cuda12]` (the fields CUDA 13 removed) or `#[cuda13]` (the fields
/// it added in the reserved words); the others are in both. The `@` arms gather the fields of
/// each structure and the names of the shared ones, a run of fields at a time.
macro_rules! device_props {
    (@ [$($f13:tt)*] [$($f12:tt)*] [$($shared:ident)*]) => {
        /// `struct cudaDeviceProp` of CUDA 13.
        #[repr(C)]
        #[derive(Clone, Copy)]
        pub struct cudaDeviceProp {
            $($f13)*
        }

        /// `struct cudaDeviceProp` of CUDA 12 (`cudaGetDeviceProperties_v2` of
        /// `libcudart.so.12`): the CUDA 13 fields plus eight that CUDA 13 removed, and 63
        /// reserved words.
        #[repr(C)]
        #[derive(Clone, Copy)]
        pub struct cudaDeviceProp12 {
            $($f12)*
        }

        impl cudaDeviceProp12 {
            /// The CUDA 13 properties in CUDA 12's layout: the fields both structures have are
            /// copied, the fields only CUDA 12's has are zero.
            pub fn from_cuda13(p: &cudaDeviceProp) -> cudaDeviceProp12 {
                // SAFETY: plain old data (integers and arrays); all-zero is valid.
                let mut q: cudaDeviceProp12 = unsafe { std::mem::zeroed() };
                $(q.$shared = p.$shared;)*
                q
            }
        }
    };
    (@ [$($f13:tt)*] [$($f12:tt)*] [$($shared:ident)*]
        #[cuda12] pub $f:ident: $t:ty, $($rest:tt)*) => {
        device_props!(@ [$($f13)*] [$($f12)* pub $f: $t,] [$($shared)*] $($rest)*);
    };
    (@ [$($f13:tt)*] [$($f12:tt)*] [$($shared:ident)*]
        #[cuda13] pub $f:ident: $t:ty, $($rest:tt)*) => {
        device_props!(@ [$($f13)* pub $f: $t,] [$($f12)*] [$($shared)*] $($rest)*);
    };
    (@ [$($f13:tt)*] [$($f12:tt)*] [$($shared:ident)*]
        $(pub $f:ident: $t:ty,)+ $(#[$only:ident] $($rest:tt)*)?) => {
        device_props!(@
            [$($f13)* $(pub $f: $t,)+] [$($f12)* $(pub $f: $t,)+] [$($shared)* $($f)+]
            $(#[$only] $($rest)*)?);
    };
    (@ $($unread:tt)*) => {
        compile_error!(
            "device_props: a field is `pub name: type,`, marked #[cuda12] or #[cuda13] if only one has it"
        );
    };
    ($($fields:tt)*) => {
        device_props!(@ [] [] [] $($fields)*);
    };
}

device_props! {
    pub name: [u8; 256],
    pub uuid: cudaUUID_t,
    pub luid: [u8; 8],
    pub luidDeviceNodeMask: u32,
    pub totalGlobalMem: usize,
    pub sharedMemPerBlock: usize,
    pub regsPerBlock: i32,
    pub warpSize: i32,
    pub memPitch: usize,
    pub maxThreadsPerBlock: i32,
    pub maxThreadsDim: [i32; 3],
    pub maxGridSize: [i32; 3],
    #[cuda12] pub clockRate: i32,
    pub totalConstMem: usize,
    pub major: i32,
    pub minor: i32,
    pub textureAlignment: usize,
    pub texturePitchAlignment: usize,
    #[cuda12] pub deviceOverlap: i32,
    pub multiProcessorCount: i32,
    #[cuda12] pub kernelExecTimeoutEnabled: i32,
    pub integrated: i32,
    pub canMapHostMemory: i32,
    #[cuda12] pub computeMode: i32,
    pub maxTexture1D: i32,
    pub maxTexture1DMipmap: i32,
    #[cuda12] pub maxTexture1DLinear: i32,
    pub maxTexture2D: [i32; 2],
    pub maxTexture2DMipmap: [i32; 2],
    pub maxTexture2DLinear: [i32; 3],
    pub maxTexture2DGather: [i32; 2],
    pub maxTexture3D: [i32; 3],
    pub maxTexture3DAlt: [i32; 3],
    pub maxTextureCubemap: i32,
    pub maxTexture1DLayered: [i32; 2],
    pub maxTexture2DLayered: [i32; 3],
    pub maxTextureCubemapLayered: [i32; 2],
    pub maxSurface1D: i32,
    pub maxSurface2D: [i32; 2],
    pub maxSurface3D: [i32; 3],
    pub maxSurface1DLayered: [i32; 2],
    pub maxSurface2DLayered: [i32; 3],
    pub maxSurfaceCubemap: i32,
    pub maxSurfaceCubemapLayered: [i32; 2],
    pub surfaceAlignment: usize,
    pub concurrentKernels: i32,
    pub ECCEnabled: i32,
    pub pciBusID: i32,
    pub pciDeviceID: i32,
    pub pciDomainID: i32,
    pub tccDriver: i32,
    pub asyncEngineCount: i32,
    pub unifiedAddressing: i32,
    #[cuda12] pub memoryClockRate: i32,
    pub memoryBusWidth: i32,
    pub l2CacheSize: i32,
    pub persistingL2CacheMaxSize: i32,
    pub maxThreadsPerMultiProcessor: i32,
    pub streamPrioritiesSupported: i32,
    pub globalL1CacheSupported: i32,
    pub localL1CacheSupported: i32,
    pub sharedMemPerMultiprocessor: usize,
    pub regsPerMultiprocessor: i32,
    pub managedMemory: i32,
    pub isMultiGpuBoard: i32,
    pub multiGpuBoardGroupID: i32,
    pub hostNativeAtomicSupported: i32,
    #[cuda12] pub singleToDoublePrecisionPerfRatio: i32,
    pub pageableMemoryAccess: i32,
    pub concurrentManagedAccess: i32,
    pub computePreemptionSupported: i32,
    pub canUseHostPointerForRegisteredMem: i32,
    pub cooperativeLaunch: i32,
    #[cuda12] pub cooperativeMultiDeviceLaunch: i32,
    pub sharedMemPerBlockOptin: usize,
    pub pageableMemoryAccessUsesHostPageTables: i32,
    pub directManagedMemAccessFromHost: i32,
    pub maxBlocksPerMultiProcessor: i32,
    pub accessPolicyMaxWindowSize: i32,
    pub reservedSharedMemPerBlock: usize,
    pub hostRegisterSupported: i32,
    pub sparseCudaArraySupported: i32,
    pub hostRegisterReadOnlySupported: i32,
    pub timelineSemaphoreInteropSupported: i32,
    pub memoryPoolsSupported: i32,
    pub gpuDirectRDMASupported: i32,
    pub gpuDirectRDMAFlushWritesOptions: u32,
    pub gpuDirectRDMAWritesOrdering: i32,
    pub memoryPoolSupportedHandleTypes: u32,
    pub deferredMappingCudaArraySupported: i32,
    pub ipcEventSupported: i32,
    pub clusterLaunch: i32,
    pub unifiedFunctionPointers: i32,
    #[cuda13] pub deviceNumaConfig: i32,
    #[cuda13] pub deviceNumaId: i32,
    #[cuda13] pub mpsEnabled: i32,
    #[cuda13] pub hostNumaId: i32,
    #[cuda13] pub gpuPciDeviceID: u32,
    #[cuda13] pub gpuPciSubsystemID: u32,
    #[cuda13] pub hostNumaMultinodeIpcSupported: i32,
    #[cuda13] pub reserved: [i32; 56],
    #[cuda12] pub reserved: [i32; 63],
}

/// `struct cudaFuncAttributes`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct cudaFuncAttributes {
    pub sharedSizeBytes: usize,
    pub constSizeBytes: usize,
    pub localSizeBytes: usize,
    pub maxThreadsPerBlock: i32,
    pub numRegs: i32,
    pub ptxVersion: i32,
    pub binaryVersion: i32,
    pub cacheModeCA: i32,
    pub maxDynamicSharedSizeBytes: i32,
    pub preferredShmemCarveout: i32,
    pub clusterDimMustBeSet: i32,
    pub requiredClusterWidth: i32,
    pub requiredClusterHeight: i32,
    pub requiredClusterDepth: i32,
    pub clusterSchedulingPolicyPreference: i32,
    pub nonPortableClusterSizeAllowed: i32,
    pub deviceNodeUpdateStatus: i32,
    pub sharedMemoryMode: i32,
    pub reserved: [i32; 14],
}

/// `struct cudaPointerAttributes`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cudaPointerAttributes {
    pub type_: i32,
    pub device: i32,
    pub devicePointer: *mut c_void,
    pub hostPointer: *mut c_void,
    pub reserved: [i64; 8],
}

/// `__fatBinC_Wrapper_t` (`fatbinary_section.h`).
#[repr(C)]
pub struct FatbinWrapper {
    pub magic: i32,
    pub version: i32,
    pub data: *const u8,
    pub filename_or_fatbins: *const c_void,
}

/// Device attributes (`cudaDeviceAttr`) answered by `cudaDeviceGetAttribute`.
pub mod attr {
    pub const MaxThreadsPerBlock: i32 = 1;
    pub const MaxBlockDimX: i32 = 2;
    pub const MaxBlockDimY: i32 = 3;
    pub const MaxBlockDimZ: i32 = 4;
    pub const MaxGridDimX: i32 = 5;
    pub const MaxGridDimY: i32 = 6;
    pub const MaxGridDimZ: i32 = 7;
    pub const MaxSharedMemoryPerBlock: i32 = 8;
    pub const TotalConstantMemory: i32 = 9;
    pub const WarpSize: i32 = 10;
    pub const MaxRegistersPerBlock: i32 = 12;
    pub const ClockRate: i32 = 13;
    pub const MultiProcessorCount: i32 = 16;
    pub const KernelExecTimeout: i32 = 17;
    pub const Integrated: i32 = 18;
    pub const CanMapHostMemory: i32 = 19;
    pub const ComputeMode: i32 = 20;
    pub const ConcurrentKernels: i32 = 31;
    pub const EccEnabled: i32 = 32;
    pub const MemoryClockRate: i32 = 36;
    pub const GlobalMemoryBusWidth: i32 = 37;
    pub const L2CacheSize: i32 = 38;
    pub const MaxThreadsPerMultiProcessor: i32 = 39;
    pub const AsyncEngineCount: i32 = 40;
    pub const UnifiedAddressing: i32 = 41;
    pub const ComputeCapabilityMajor: i32 = 75;
    pub const ComputeCapabilityMinor: i32 = 76;
    pub const MaxSharedMemoryPerMultiprocessor: i32 = 81;
    pub const MaxRegistersPerMultiprocessor: i32 = 82;
    pub const ManagedMemory: i32 = 83;
    pub const ConcurrentManagedAccess: i32 = 89;
    pub const CooperativeLaunch: i32 = 95;
    pub const MaxSharedMemoryPerBlockOptin: i32 = 97;
    pub const MaxBlocksPerMultiprocessor: i32 = 106;
    pub const ReservedSharedMemoryPerBlock: i32 = 111;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// Offsets measured with gcc 12 on the CUDA 13.5 `driver_types.h` (`offsetof`).
    #[test]
    fn layouts_match_the_cuda_13_headers() {
        assert_eq!(size_of::<cudaDeviceProp>(), 1008);
        assert_eq!(offset_of!(cudaDeviceProp, totalGlobalMem), 288);
        assert_eq!(offset_of!(cudaDeviceProp, multiProcessorCount), 384);
        assert_eq!(offset_of!(cudaDeviceProp, l2CacheSize), 596);
        assert_eq!(offset_of!(cudaDeviceProp, sharedMemPerMultiprocessor), 624);
        assert_eq!(offset_of!(cudaDeviceProp, sharedMemPerBlockOptin), 672);
        assert_eq!(offset_of!(cudaDeviceProp, maxBlocksPerMultiProcessor), 688);
        assert_eq!(offset_of!(cudaDeviceProp, reserved), 784);
        assert_eq!(size_of::<cudaFuncAttributes>(), 144);
        assert_eq!(offset_of!(cudaFuncAttributes, numRegs), 28);
        assert_eq!(size_of::<cudaPointerAttributes>(), 88);
        // CUDA 12.9 `driver_types.h` (nvidia-cuda-runtime-cu12 12.9.79), gcc 12.
        assert_eq!(size_of::<cudaDeviceProp12>(), 1032);
        assert_eq!(offset_of!(cudaDeviceProp12, clockRate), 348);
        assert_eq!(offset_of!(cudaDeviceProp12, multiProcessorCount), 388);
        assert_eq!(offset_of!(cudaDeviceProp12, memoryClockRate), 608);
        assert_eq!(offset_of!(cudaDeviceProp12, l2CacheSize), 616);
        assert_eq!(offset_of!(cudaDeviceProp12, reserved), 780);
    }

    /// `from_cuda13` copies the fields both structures have and leaves CUDA 12's own zero.
    #[test]
    fn cuda12_properties_copy_the_shared_fields() {
        // SAFETY: plain old data; all-zero is valid.
        let mut p: cudaDeviceProp = unsafe { std::mem::zeroed() };
        p.name[0] = b's';
        p.maxGridSize = [1, 2, 3];
        p.l2CacheSize = 4;
        p.sharedMemPerBlockOptin = 5;
        p.unifiedFunctionPointers = 6;
        p.hostNumaId = -1;
        let q = cudaDeviceProp12::from_cuda13(&p);
        assert_eq!(q.name[0], b's');
        assert_eq!(q.maxGridSize, [1, 2, 3]);
        assert_eq!(q.l2CacheSize, 4);
        assert_eq!(q.sharedMemPerBlockOptin, 5);
        assert_eq!(q.unifiedFunctionPointers, 6);
        assert_eq!((q.clockRate, q.deviceOverlap, q.memoryClockRate), (0, 0, 0));
        assert_eq!(q.reserved, [0; 63]);
    }
}
