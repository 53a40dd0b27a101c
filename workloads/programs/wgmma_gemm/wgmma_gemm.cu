// wgmma_gemm: Hopper GEMM C = A B (FP16 inputs, FP32 accumulator) with the warpgroup MMA
// wgmma.mma_async, its operands in shared memory loaded by the Tensor Memory Accelerator (TMA),
// inside clusters of two blocks that share the B tile through distributed shared memory (DSM).
// A is M x K row-major, B is K x N and stored "column-major" (N x K row-major, Bt[j][kk] =
// B[kk][j]: both operands K-major, the layout wgmma reads without transposition), C is M x N
// row-major. Built for sm_90a only (wgmma needs the arch-specific target).
//
// Kernel: wgmma_gemm (1 launch), __cluster_dims__(2, 1, 1), one warpgroup (128 threads) per
//   block, grid (M / 64, N / 64): block (x, y) computes the 64 x 64 tile of C at rows 64 x,
//   columns 64 y, the two blocks of a cluster (x = 2c, 2c + 1) the two M tiles of one N tile.
//   K is walked in 64-wide k tiles with two shared-memory stages (the TMA loads of k tile t + 1
//   overlap the MMAs of k tile t), each stage an mbarrier (mbarrier.init count 1;
//   mbarrier.arrive.expect_tx by thread 0; completed by the TMA's complete_tx; waited on with
//   mbarrier.try_wait.parity, parity = (t / 2) & 1).
//   - Thread 0 of each block loads its 64 x 64 A tile with
//     cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes from a
//     CUtensorMap passed as a `const __grid_constant__` kernel parameter; the block of
//     cluster rank 0 (%cluster_ctarank) also loads the 64 x 64 tile of Bt.
//   - The block of rank 1 loads no B: after barrier.cluster.arrive/wait it copies rank 0's B
//     stage into its own shared memory, 16 bytes per access, with mapa.shared::cluster (rank 0)
//     and ld.shared::cluster.v4.u32 (distributed shared memory), then
//     fence.proxy.async.shared::cta and a second cluster barrier (which also tells rank 0 that
//     its stage may be reloaded). Half of C depends on the DSM copy. (PTX rather than
//     cooperative_groups: <cooperative_groups.h> brings a CCCL __device__ object that the host
//     would register with __cudaRegisterVar.)
//   - Shared-memory layout: TMA with CU_TENSOR_MAP_SWIZZLE_128B (box 64 halves = 128 bytes x
//     64 rows: row r at byte 128 r, its 16-byte chunk c stored at chunk c ^ (r % 8)); every
//     tile starts on a 1024-byte boundary. The wgmma matrix descriptors (built in device code,
//     PTX ISA "Matrix Descriptor Format") say the same: start address >> 4 in bits 0-13,
//     leading byte offset 1 (unused for swizzled K-major layouts), stride byte offset
//     1024 >> 4 (8 rows of 128 bytes) in bits 32-45, base offset 0, swizzle mode 1 (128B) in
//     bits 62-63. The k16 step kk of a 64-wide k tile adds 32 kk bytes to the start address
//     (the hardware applies the XOR to the final address, as the TMA did).
//   - Per k tile: wgmma.fence, 4 x wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16,
//     wgmma.commit_group, wgmma.wait_group 0. The accumulators start at 1.0f and the first
//     MMA runs with scale-d = false (D = A B), so an MMA that ignores scale-d fails the check.
//   - C from the accumulator fragment (PTX ISA, wgmma .m64nNk16 D): thread 32 w + l holds
//     d[4 j + 2 h + e] = C[16 w + l / 4 + 8 h][8 j + 2 (l % 4) + e] (j < 8, h, e < 2).
// Host: the tensor maps come from cuTensorMapEncodeTiled, fetched with
//   cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", ..., 12000, cudaEnableDefault)
//   (the program links only the shared CUDA runtime, not libcuda).
// Check: C against a double-precision host product of the FP16 inputs with tolerance
// (K + 1) 2^-22 sum_k |a b| per element (FP16 products are exact in FP32; the tensor core's
// accumulation order and rounding are undocumented: 4x the FP32 dot-product bound).
// Arguments: wgmma_gemm [M=128 [N=128 [K=256 [SEED=25]]]] (M a multiple of 128, N and K of 64,
// each at most 1024; the default K = 256 uses both stages twice, i.e. both mbarrier parities)
// Exercises: HGMMA.64x64x16.F32 (descriptors in uniform registers, scale-d predicate, gsb0),
//            WARPGROUP.ARRIVE / WARPGROUP.DEPBAR.LE, UTMALDG.2D in an ELECT / BRA.U.ANY loop,
//            SYNCS.EXCH.64 / SYNCS.ARRIVE.TRANS64 / SYNCS.PHASECHK.TRANS64.TRYWAIT (mbarrier),
//            UCGABAR_ARV / UCGABAR_WAIT / CGAERRBAR (cluster barrier), FENCE.VIEW.ASYNC.S,
//            SR_CgaCtaId (shared addresses carry the CTA rank in bits 24-31), DSM loads as
//            generic LD.E.128 at {SR_SWINHI, PRMT(rank << 24 | offset)} (mapa becomes PRMT: no
//            MAPA), tensor maps addressed as c[0x0][0x198] (generic address of the parameter
//            buffer) + 0x70 / 0xf0 (CUtensorMap parameters are 128-byte aligned).
//            SASS-NOTES.md (next to this file) lists the opcodes with examples.
#include "check.h"

#include <cuda.h> // CUtensorMap and its enums (types only: libcuda is not linked)
#include <cudaTypedefs.h> // PFN_cuTensorMapEncodeTiled_v12000
#include <cuda_fp16.h>
#include <vector>

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "wgmma_gemm needs -gencode arch=compute_90a,code=sm_90a"
#endif

#define BM 64 // rows of A and C per block (one wgmma m64)
#define BN 64 // columns of C per block (wgmma n64)
#define BK 64 // k tile: 64 halves = one 128-byte swizzle row
#define TILE_BYTES (BM * BK * 2) // 8192, the same for A (BM x BK) and Bt (BN x BK)
#define STAGES 2
// Shared memory, from a 1024-byte aligned base: A stages, B stages, then the mbarriers.
#define SM_A 0
#define SM_B (STAGES * TILE_BYTES)
#define SM_BAR (2 * STAGES * TILE_BYTES)
#define SM_BYTES (SM_BAR + 8 * STAGES)

__device__ __forceinline__ uint32_t smem(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ uint32_t cluster_rank()
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

// All threads of both blocks: release (arrive) then acquire (wait) at cluster scope.
__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
}

// The 16 bytes at shared address `addr` of this block's image in the block of cluster rank `rank`.
__device__ __forceinline__ uint4 ld_rank(uint32_t addr, uint32_t rank)
{
    uint32_t ra;
    uint4 v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ra) : "r"(addr), "r"(rank));
    asm volatile("ld.shared::cluster.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(ra)
                 : "memory");
    return v;
}

__device__ __forceinline__ void bar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

// One arrival that also adds `bytes` to the transaction count of the current phase.
__device__ __forceinline__ void bar_arrive_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

// Waits until the phase with the given parity has completed.
__device__ __forceinline__ void bar_wait(uint32_t bar, uint32_t parity)
{
    uint32_t done;
    do {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}

// TMA: the box at (c0 = k, c1 = row) of `map` into shared memory at `dst`, completing on `bar`.
__device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap* map, int c0, int c1, uint32_t bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

// wgmma matrix descriptor of a K-major tile with 128-byte rows in the 128B swizzle layout.
__device__ __forceinline__ uint64_t desc_sw128(uint32_t addr)
{
    uint64_t d = (uint64_t)((addr & 0x3FFFF) >> 4); // bits 0-13: start address >> 4
    d |= (uint64_t)1 << 16;                          // bits 16-29: leading byte offset (unused)
    d |= (uint64_t)(1024 >> 4) << 32;                // bits 32-45: stride byte offset 1024 >> 4
    d |= (uint64_t)1 << 62;                          // bits 62-63: swizzle mode 1 = 128B
    return d;                                        // bits 49-51: base offset 0
}

#define ACC8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), \
                "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define ACC32 ACC8(0), ACC8(8), ACC8(16), ACC8(24)

// wgmma.fence / wait_group name the accumulators so that the compiler keeps every access to
// them on the right side of these instructions.
__device__ __forceinline__ void wg_fence(float (&d)[32])
{
    asm volatile("wgmma.fence.sync.aligned;" : ACC32 : : "memory");
}

__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

__device__ __forceinline__ void wg_wait0(float (&d)[32])
{
    asm volatile("wgmma.wait_group.sync.aligned 0;" : ACC32 : : "memory");
}

// d = A B + (scale_d ? d : 0) for A 64 x 16 and B 16 x 64 (both K-major in shared memory).
__device__ __forceinline__ void wg_mma(float (&d)[32], uint64_t da, uint64_t db, int scale_d)
{
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "setp.ne.b32 p, %34, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
                 "%32, %33, p, 1, 1, 0, 0;\n\t}"
                 : ACC32
                 : "l"(da), "l"(db), "r"(scale_d)
                 : "memory");
}

__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128)
    wgmma_gemm(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB, float* __restrict__ C,
               int n, int k)
{
    __shared__ __align__(1024) unsigned char raw[SM_BYTES + 1024];
    const uint32_t rank = cluster_rank();
    const int tid = threadIdx.x;
    // 1024-byte aligned base (the 128B swizzle pattern repeats every 1024 bytes); the same
    // offset in both blocks of the cluster, so rank 0's stage s is at the same offset as rank 1's.
    unsigned char* base = raw + ((1024 - (smem(raw) & 1023)) & 1023);
    const uint32_t sbase = smem(base);
    const uint32_t bar0 = sbase + SM_BAR;
    const int row0 = blockIdx.x * BM, col0 = blockIdx.y * BN;
    const int tiles = k / BK;

    auto issue = [&](int t) { // thread 0: the loads of k tile t into stage t % 2
        const int s = t & 1;
        const uint32_t bar = bar0 + 8 * s;
        bar_arrive_tx(bar, rank == 0 ? 2 * TILE_BYTES : TILE_BYTES);
        tma_load(sbase + SM_A + s * TILE_BYTES, &tmA, t * BK, row0, bar);
        if (rank == 0)
            tma_load(sbase + SM_B + s * TILE_BYTES, &tmB, t * BK, col0, bar);
    };
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s)
            bar_init(bar0 + 8 * s, 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (tid == 0) {
        issue(0);
        if (tiles > 1)
            issue(1);
    }

    float d[32];
    for (int i = 0; i < 32; ++i)
        d[i] = 1.0f; // discarded by the first MMA (scale-d = false)
    for (int t = 0; t < tiles; ++t) {
        const int s = t & 1;
        bar_wait(bar0 + 8 * s, (t >> 1) & 1);
        cluster_sync(); // rank 0's stage s is loaded (and visible to rank 1)
        if (rank == 1) {
            uint4* dst = (uint4*)(base + SM_B + s * TILE_BYTES);
#pragma unroll
            for (int i = 0; i < TILE_BYTES / 16 / 128; ++i) // byte copy: the same offsets, so the
                dst[tid + 128 * i] = ld_rank(smem(dst + tid + 128 * i), 0); // same swizzle
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); // generic writes -> wgmma
        }
        cluster_sync(); // rank 1's copy is complete: rank 0 may reload stage s after its MMAs
        wg_fence(d);
        const uint64_t da = desc_sw128(sbase + SM_A + s * TILE_BYTES);
        const uint64_t db = desc_sw128(sbase + SM_B + s * TILE_BYTES);
        for (int kk = 0; kk < BK / 16; ++kk) // +32 bytes per k16 step = +2 in the address field
            wg_mma(d, da + 2 * kk, db + 2 * kk, t > 0 || kk > 0);
        wg_commit();
        wg_wait0(d);
        __syncthreads(); // all four warps have finished reading stage s
        if (tid == 0 && t + 2 < tiles)
            issue(t + 2);
    }

    const int w = tid >> 5, l = tid & 31;
    float* c = C + (size_t)(row0 + 16 * w + l / 4) * n + col0 + 2 * (l % 4);
    for (int j = 0; j < BN / 8; ++j)
        for (int h = 0; h < 2; ++h)
            *(float2*)(c + (size_t)(8 * h) * n + 8 * j) = make_float2(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
}

// A rows x cols row-major FP16 matrix as a 2-D tensor map with 64 x 64 boxes, 128B swizzle.
static CUtensorMap make_map(PFN_cuTensorMapEncodeTiled_v12000 encode, half* p, int rows, int cols)
{
    CUtensorMap map;
    cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    cuuint64_t strides[1] = {(cuuint64_t)cols * sizeof(half)}; // bytes, dimension 1
    cuuint32_t box[2] = {BK, 64};
    cuuint32_t estrides[2] = {1, 1};
    CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p, dims, strides, box, estrides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        std::printf("FAIL cuTensorMapEncodeTiled returned %d\n", (int)r);
        std::exit(1);
    }
    return map;
}

int main(int argc, char** argv)
{
    const int m = (int)arg_int(argc, argv, 1, 128, 128, 1024, "M");
    const int n = (int)arg_int(argc, argv, 2, 128, 64, 1024, "N");
    const int k = (int)arg_int(argc, argv, 3, 256, 64, 1024, "K");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 4, 25, 0, 1L << 40, "SEED");
    if (m % 128 || n % 64 || k % 64)
        fail("M must be a multiple of 128, N and K of 64");
    Rng rng(seed);
    std::vector<half> a((size_t)m * k), bt((size_t)n * k); // bt[j * k + kk] = B[kk][j]
    std::vector<double> ad(a.size()), btd(bt.size());
    for (size_t i = 0; i < a.size(); ++i) { a[i] = __float2half(rng.uniform(-1.0f, 1.0f)); ad[i] = __half2float(a[i]); }
    for (size_t i = 0; i < bt.size(); ++i) { bt[i] = __float2half(rng.uniform(-1.0f, 1.0f)); btd[i] = __half2float(bt[i]); }

    void* fn = nullptr;
    cudaDriverEntryPointQueryResult qres;
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &qres));
    if (qres != cudaDriverEntryPointSuccess || !fn)
        fail("cuTensorMapEncodeTiled not found (cudaGetDriverEntryPointByVersion)");
    auto encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;

    half *dA, *dB;
    float* dC;
    CK(cudaMalloc(&dA, sizeof(half) * a.size()));
    CK(cudaMalloc(&dB, sizeof(half) * bt.size()));
    CK(cudaMalloc(&dC, sizeof(float) * m * n));
    CK(cudaMemcpy(dA, a.data(), sizeof(half) * a.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, bt.data(), sizeof(half) * bt.size(), cudaMemcpyHostToDevice));
    const CUtensorMap tmA = make_map(encode, dA, m, k), tmB = make_map(encode, dB, n, k);
    wgmma_gemm<<<dim3(m / BM, n / BN), 128>>>(tmA, tmB, dC, n, k);
    CK_LAUNCH();
    std::vector<float> c((size_t)m * n);
    CK(cudaMemcpy(c.data(), dC, sizeof(float) * c.size(), cudaMemcpyDeviceToHost));

    std::vector<double> ref(c.size()), tol(c.size());
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double s = 0, mag = 0;
            for (int kk = 0; kk < k; ++kk) {
                double p = ad[(size_t)i * k + kk] * btd[(size_t)j * k + kk];
                s += p;
                mag += std::fabs(p);
            }
            ref[(size_t)i * n + j] = s;
            tol[(size_t)i * n + j] = (k + 1) * std::ldexp(1.0, -22) * mag;
        }
    long bad = count_mismatches("c", c.data(), ref.data(), tol.data(), (long)c.size());
    CK(cudaFree(dA)); CK(cudaFree(dB)); CK(cudaFree(dC));
    return verdict(bad);
}
