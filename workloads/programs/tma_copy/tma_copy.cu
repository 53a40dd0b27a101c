// tma_copy: Hopper's asynchronous bulk copies without and with a tensor map: the non-tensor
// cp.async.bulk (SASS UBLKCP) global -> shared completing on an mbarrier and shared -> global
// in a bulk group, and the TMA tensor store cp.async.bulk.tensor (SASS UTMASTG). Built for
// sm_90 only (`-gencode arch=compute_90,code=sm_90`, own flags in scripts/build-programs.sh).
//
// Kernels:
//   - bulk_chase (2 launches: a warm-up, then the measured one; 1 thread): a pointer chase in
//     which every step is a 16-byte cp.async.bulk.shared::cluster.global.mbarrier::complete_tx
//     of the next element into shared memory, mbarrier.arrive.expect_tx, a
//     mbarrier.try_wait.parity loop, and a shared load of the next pointer: the TMA latency
//     microbenchmark of Luo et al. (IPDPS 2024 / arXiv:2501.12084; their
//     NewFeatures/TMA/Latency/tma_lat_random measures the same step on an H800), written anew.
//   - load_chase (2 launches, 1 thread): the same chase with ordinary global loads (LDG).
//     Chain: LEN elements 128 bytes apart (LEN = 16: 2 KB, as the smallest footprint of Luo's
//     sweep) in a random cyclic order (fixed seed); each element holds the next one's address.
//     Each kernel writes the pointer it ends on (checked against the host's walk) and its
//     clock64() cycles (checked positive only: times are not printed).
//   - bulk_roundtrip (1 launch, BLOCKS x 128 threads): each block copies its 4 KB slice of a
//     uint32 array into shared memory with one cp.async.bulk (mbarrier, expect_tx), adds
//     3 * index + 1 to every word, then writes the slice to a second array with
//     cp.async.bulk.global.shared::cta.bulk_group, cp.async.bulk.commit_group and
//     cp.async.bulk.wait_group.read 0 (SASS UBLKCP.G.S, UTMACMDFLUSH, DEPBAR.LE SB0).
//   - tma_store (1 launch, grid (ceil(W / 32), ceil(H / 8)) x 256 threads): each block writes
//     a 32 x 8 box of floats (value = f(x, y)) into shared memory, fence.proxy.async.shared::cta,
//     and thread 0 stores it with cp.async.bulk.tensor.2d.global.shared::cta.bulk_group through
//     a CUtensorMap (W x H floats, row pitch W rounded up to 4 floats; made by
//     cuTensorMapEncodeTiled via cudaGetDriverEntryPointByVersion, passed as a
//     `const __grid_constant__` parameter). W and H need not be multiples of the box: elements
//     of a box outside the tensor are not written (PTX ISA, tensor copy bounds), which the
//     check sees in the padding columns (kept at their initial -1).
// Check: exact (integer and float values written, never computed by the copy).
// Arguments: tma_copy [ITERS=64 [LEN=16 [BLOCKS=4 [W=70 [H=20 [SEED=26]]]]]]
// Exercises: UBLKCP.S.G in an ELECT / BRA.U.ANY loop, UBLKCP.G.S, UTMACMDFLUSH, DEPBAR.LE SB0,
//            UTMASTG.2D, SYNCS.EXCH.64 / SYNCS.ARRIVE.TRANS64 / SYNCS.PHASECHK.TRANS64.TRYWAIT,
//            FENCE.VIEW.ASYNC.S, CS2R SR_CLOCKLO.
#include "check.h"

#include <cuda.h> // CUtensorMap and its enums (types only: libcuda is not linked)
#include <cudaTypedefs.h> // PFN_cuTensorMapEncodeTiled_v12000
#include <vector>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "tma_copy needs sm_90"
#endif

#define STRIDE 16 // uint64 per chain element: 128 bytes
#define SLICE 1024 // uint32 words per block in bulk_roundtrip (4 KB)
#define BOX_W 32
#define BOX_H 8

__device__ __forceinline__ uint32_t smem_addr(const void* p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity)
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

__global__ void bulk_chase(const uint64_t* buf, uint64_t* out, int iters)
{
    __shared__ alignas(16) uint64_t ptr[2];
    __shared__ alignas(8) uint64_t bar;
    if (threadIdx.x != 0)
        return;
    const uint32_t b = smem_addr(&bar), s = smem_addr(ptr);
    mbar_init(b, 1);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    uint64_t p = (uint64_t)buf;
    uint32_t parity = 0;
    const long long t0 = clock64();
    for (int i = 0; i < iters; ++i) {
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 16, [%2];"
                     ::"r"(s), "l"(p), "r"(b)
                     : "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 16;" ::"r"(b) : "memory");
        mbar_wait(b, parity);
        parity ^= 1;
        p = *(volatile uint64_t*)ptr;
    }
    const long long t1 = clock64();
    out[0] = p;
    out[1] = (uint64_t)(t1 - t0);
}

__global__ void load_chase(const uint64_t* buf, uint64_t* out, int iters)
{
    if (threadIdx.x != 0)
        return;
    uint64_t p = (uint64_t)buf;
    const long long t0 = clock64();
    for (int i = 0; i < iters; ++i)
        p = *(const uint64_t*)p;
    const long long t1 = clock64();
    out[0] = p;
    out[1] = (uint64_t)(t1 - t0);
}

__global__ void bulk_roundtrip(const uint32_t* in, uint32_t* out)
{
    __shared__ alignas(128) uint32_t slice[SLICE];
    __shared__ alignas(8) uint64_t bar;
    const uint32_t b = smem_addr(&bar), s = smem_addr(slice);
    const size_t base = (size_t)blockIdx.x * SLICE;
    if (threadIdx.x == 0) {
        mbar_init(b, 1);
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(SLICE * 4) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     ::"r"(s), "l"(in + base), "r"(SLICE * 4), "r"(b)
                     : "memory");
    }
    __syncthreads();
    mbar_wait(b, 0);
    for (int i = threadIdx.x; i < SLICE; i += blockDim.x)
        slice[i] += 3u * (uint32_t)(base + i) + 1u;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(out + base), "r"(s),
                     "r"(SLICE * 4)
                     : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
}

__device__ __host__ inline float store_value(int x, int y)
{
    return (float)(x * 1000 + y) + 0.5f;
}

__global__ void tma_store(const __grid_constant__ CUtensorMap map)
{
    __shared__ alignas(128) float box[BOX_H][BOX_W];
    const int x0 = blockIdx.x * BOX_W, y0 = blockIdx.y * BOX_H;
    for (int i = threadIdx.x; i < BOX_W * BOX_H; i += blockDim.x)
        box[i / BOX_W][i % BOX_W] = store_value(x0 + i % BOX_W, y0 + i / BOX_W);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                         (uint64_t)&map),
                     "r"(x0), "r"(y0), "r"(smem_addr(box))
                     : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
}

// Runs `kernel` twice over the chain (the first launch warms the caches, as Luo et al.'s
// harness does) and checks where the measured walk ends.
static void chase(void (*kernel)(const uint64_t*, uint64_t*, int), const char* name, const uint64_t* dbuf,
                  uint64_t* dout, int iters, uint64_t want)
{
    for (int run = 0; run < 2; ++run) {
        kernel<<<1, 32>>>(dbuf, dout, iters);
        CK_LAUNCH();
    }
    uint64_t got[2];
    CK(cudaMemcpy(got, dout, sizeof(got), cudaMemcpyDeviceToHost));
    if (got[0] != want) {
        std::printf("FAIL %s ends at %#llx, want %#llx\n", name, (unsigned long long)got[0], (unsigned long long)want);
        std::exit(1);
    }
    if ((long long)got[1] <= 0)
        fail("chase: clock64 did not advance");
}

int main(int argc, char** argv)
{
    const int iters = (int)arg_int(argc, argv, 1, 64, 1, 1 << 20, "ITERS");
    const int len = (int)arg_int(argc, argv, 2, 16, 2, 1 << 16, "LEN");
    const int blocks = (int)arg_int(argc, argv, 3, 4, 1, 1024, "BLOCKS");
    const int w = (int)arg_int(argc, argv, 4, 70, 1, 4096, "W");
    const int h = (int)arg_int(argc, argv, 5, 20, 1, 4096, "H");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 6, 26, 0, 1L << 40, "SEED");
    Rng rng(seed);

    // Chain: a random cyclic order of the LEN elements (Fisher-Yates over 1..LEN-1 after 0).
    std::vector<int> order(len);
    for (int i = 0; i < len; ++i)
        order[i] = i;
    for (int i = len - 1; i > 1; --i) {
        int j = 1 + (int)rng.below((uint32_t)i);
        std::swap(order[i], order[j]);
    }
    uint64_t* dbuf;
    uint64_t* dout;
    CK(cudaMalloc(&dbuf, sizeof(uint64_t) * STRIDE * len));
    CK(cudaMalloc(&dout, sizeof(uint64_t) * 2));
    std::vector<uint64_t> chain((size_t)STRIDE * len, 0);
    for (int i = 0; i < len; ++i)
        chain[(size_t)order[i] * STRIDE] = (uint64_t)(dbuf + (size_t)order[(i + 1) % len] * STRIDE);
    CK(cudaMemcpy(dbuf, chain.data(), sizeof(uint64_t) * chain.size(), cudaMemcpyHostToDevice));
    // The walk starts at element 0 = order[0]; after `iters` steps it is at order[iters % len].
    const uint64_t want = (uint64_t)(dbuf + (size_t)order[iters % len] * STRIDE);
    chase(bulk_chase, "bulk_chase", dbuf, dout, iters, want);
    chase(load_chase, "load_chase", dbuf, dout, iters, want);

    // bulk_roundtrip.
    const size_t words = (size_t)blocks * SLICE;
    std::vector<uint32_t> in(words), got(words);
    for (size_t i = 0; i < words; ++i)
        in[i] = rng.u32();
    uint32_t *din, *dres;
    CK(cudaMalloc(&din, sizeof(uint32_t) * words));
    CK(cudaMalloc(&dres, sizeof(uint32_t) * words));
    CK(cudaMemcpy(din, in.data(), sizeof(uint32_t) * words, cudaMemcpyHostToDevice));
    CK(cudaMemset(dres, 0, sizeof(uint32_t) * words));
    bulk_roundtrip<<<blocks, 128>>>(din, dres);
    CK_LAUNCH();
    CK(cudaMemcpy(got.data(), dres, sizeof(uint32_t) * words, cudaMemcpyDeviceToHost));
    long bad = 0;
    for (size_t i = 0; i < words; ++i) {
        uint32_t want_w = in[i] + 3u * (uint32_t)i + 1u;
        if (got[i] != want_w) {
            if (bad < 5)
                std::printf("mismatch roundtrip[%zu]: got %u want %u\n", i, got[i], want_w);
            ++bad;
        }
    }
    if (bad)
        fail("bulk_roundtrip");

    // tma_store.
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult qres;
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &qres));
    if (qres != cudaDriverEntryPointSuccess || !fn)
        fail("cuTensorMapEncodeTiled not found (cudaGetDriverEntryPointByVersion)");
    auto encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    const int pitch = (w + 3) / 4 * 4; // floats per row: a 16-byte multiple
    std::vector<float> img((size_t)pitch * h, -1.0f);
    float* dimg;
    CK(cudaMalloc(&dimg, sizeof(float) * img.size()));
    CK(cudaMemcpy(dimg, img.data(), sizeof(float) * img.size(), cudaMemcpyHostToDevice));
    CUtensorMap map;
    cuuint64_t dims[2] = {(cuuint64_t)w, (cuuint64_t)h};
    cuuint64_t strides[1] = {(cuuint64_t)pitch * sizeof(float)};
    cuuint32_t box[2] = {BOX_W, BOX_H};
    cuuint32_t estrides[2] = {1, 1};
    CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, dimg, dims, strides, box, estrides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        std::printf("FAIL cuTensorMapEncodeTiled returned %d\n", (int)r);
        return 1;
    }
    tma_store<<<dim3((w + BOX_W - 1) / BOX_W, (h + BOX_H - 1) / BOX_H), 256>>>(map);
    CK_LAUNCH();
    CK(cudaMemcpy(img.data(), dimg, sizeof(float) * img.size(), cudaMemcpyDeviceToHost));
    bad = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < pitch; ++x) {
            float want_v = x < w ? store_value(x, y) : -1.0f;
            float g = img[(size_t)y * pitch + x];
            if (g != want_v) {
                if (bad < 5)
                    std::printf("mismatch tma_store[%d][%d]: got %.1f want %.1f\n", y, x, g, want_v);
                ++bad;
            }
        }
    if (bad)
        fail("tma_store");
    CK(cudaFree(dbuf));
    CK(cudaFree(dout));
    CK(cudaFree(din));
    CK(cudaFree(dres));
    CK(cudaFree(dimg));
    std::printf("PASS\n");
    return 0;
}
