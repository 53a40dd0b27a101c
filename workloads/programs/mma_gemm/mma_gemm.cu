// mma_gemm: D = A B (FP16 inputs, FP32 accumulator) with the PTX warp-level MMA instruction
// mma.sync, fragments loaded from shared memory with ldmatrix, and the tiles of A and B brought
// into shared memory with cp.async, double buffered (the copy of tile t+1 overlaps the MMAs of
// tile t). A is M x K row-major, B is K x N row-major, D is M x N row-major.
//
// Kernels:
//   mma_gemm    - block tile 32 x 32, 4 warps of 16 x 16, K tile 32 (1 launch).
//                 sm_80+: mma.sync.m16n8k16, cp.async.cg 16 bytes + commit/wait_group;
//                 sm_75:  two mma.sync.m16n8k8 per k16 step, plain 16-byte loads and stores.
//                 A fragments: ldmatrix.x4; B fragments: ldmatrix.x4.trans (B is row-major).
//   transpose8  - every warp transposes one 8 x 8 matrix of 16-bit values held in the MMA
//                 fragment layout with movmatrix.m8n8.trans.b16 (1 launch).
// Checks: D against a double-precision host product of the FP16 inputs with tolerance
// (K + 1) 2^-22 sum_k |a b| per element (hardware accumulation is undocumented: 4x the FP32
// dot-product bound); the transposes exactly.
// Arguments: mma_gemm [M=64 [N=64 [K=96 [SEED=22]]]] (multiples of 32, 32 .. 1024)
// Exercises: HMMA.16816.F32 (sm_80+) / HMMA.1688.F32 (sm_75), LDSM.16.M88.4, LDSM.16.MT88.4,
//            LDGSTS + LDGDEPBAR + DEPBAR (sm_80+), MOVM.16.MT88.
#include "check.h"

#include <cuda_fp16.h>
#include <vector>

#define BM 32
#define BN 32
#define BK 32
#define PAD 8 // halves: rows stay 16-byte aligned and ldmatrix rows spread over the banks

__device__ __forceinline__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// Copy one 16-byte chunk global -> shared (asynchronously where the hardware can).
__device__ __forceinline__ void copy16(void* dst, const void* src)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem(dst)), "l"(src));
#else
    *(uint4*)dst = *(const uint4*)src;
#endif
}

__device__ __forceinline__ void commit()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;");
#endif
}

// Wait until at most N committed groups are still in flight.
template <int N>
__device__ __forceinline__ void wait_groups()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(N));
#endif
}

__global__ void mma_gemm(int n, int k, const half* __restrict__ A, const half* __restrict__ B, float* __restrict__ D)
{
    __shared__ __align__(16) half As[2][BM][BK + PAD];
    __shared__ __align__(16) half Bs[2][BK][BN + PAD];
    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int wm = (w >> 1) * 16, wn = (w & 1) * 16;
    // One 16-byte chunk (8 halves) of A and one of B per thread per tile.
    const int ar = tid / (BK / 8), ac = (tid % (BK / 8)) * 8;
    const int br = tid / (BN / 8), bc = (tid % (BN / 8)) * 8;
    auto load = [&](int buf, int kt) {
        copy16(&As[buf][ar][ac], A + (size_t)(row0 + ar) * k + kt + ac);
        copy16(&Bs[buf][br][bc], B + (size_t)(kt + br) * n + col0 + bc);
        commit();
    };
    float acc[2][4] = {};
    const int tiles = k / BK;
    load(0, 0);
    for (int t = 0; t < tiles; ++t) {
        const int buf = t & 1;
        if (t + 1 < tiles) {
            load(buf ^ 1, (t + 1) * BK);
            wait_groups<1>();
        } else {
            wait_groups<0>();
        }
        __syncthreads();
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned a[4], b[4];
            // A 16 x 16 at (wm, kk): matrix j = lane / 8 is rows 8 (j % 2), columns 8 (j / 2).
            const int j = lane >> 3, r = lane & 7;
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                         : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                         : "r"(smem(&As[buf][wm + r + 8 * (j & 1)][kk + 8 * (j >> 1)])));
            // B 16 x 16 at (kk, wn), row-major: transposed loads give the column-major fragments;
            // matrix j is k rows 8 (j % 2), n columns 8 (j / 2): b[0..1] for n 0-7, b[2..3] for 8-15.
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                         : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
                         : "r"(smem(&Bs[buf][kk + r + 8 * (j & 1)][wn + 8 * (j >> 1)])));
            for (int h = 0; h < 2; ++h) {
#if __CUDA_ARCH__ >= 800
                asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                             "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                             : "+f"(acc[h][0]), "+f"(acc[h][1]), "+f"(acc[h][2]), "+f"(acc[h][3])
                             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[2 * h]), "r"(b[2 * h + 1]));
#else
                asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                             "{%4, %5}, {%6}, {%0, %1, %2, %3};"
                             : "+f"(acc[h][0]), "+f"(acc[h][1]), "+f"(acc[h][2]), "+f"(acc[h][3])
                             : "r"(a[0]), "r"(a[1]), "r"(b[2 * h]));
                asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                             "{%4, %5}, {%6}, {%0, %1, %2, %3};"
                             : "+f"(acc[h][0]), "+f"(acc[h][1]), "+f"(acc[h][2]), "+f"(acc[h][3])
                             : "r"(a[2]), "r"(a[3]), "r"(b[2 * h + 1]));
#endif
            }
        }
        __syncthreads(); // the buffer is overwritten by the copy issued in the next iteration
    }
    // D fragment: c0, c1 at (g, 2t), (g, 2t + 1); c2, c3 at (g + 8, ...).
    const int g = lane >> 2, tq = lane & 3;
    for (int h = 0; h < 2; ++h) {
        float* d = D + (size_t)(row0 + wm + g) * n + col0 + wn + 8 * h + 2 * tq;
        d[0] = acc[h][0];
        d[1] = acc[h][1];
        d[8 * (size_t)n] = acc[h][2];
        d[8 * (size_t)n + 1] = acc[h][3];
    }
}

// Matrix w of `in` (8 x 8 row-major 16-bit values) in fragment layout: lane l holds row l / 4,
// columns 2 (l % 4) and 2 (l % 4) + 1; the transpose goes to `out` in the same layout.
__global__ void transpose8(const unsigned* __restrict__ in, unsigned* __restrict__ out)
{
    const int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    unsigned v = in[w * 32 + lane], t;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(t) : "r"(v));
    out[w * 32 + lane] = t;
}

int main(int argc, char** argv)
{
    const int m = (int)arg_int(argc, argv, 1, 64, 32, 1024, "M");
    const int n = (int)arg_int(argc, argv, 2, 64, 32, 1024, "N");
    const int k = (int)arg_int(argc, argv, 3, 96, 32, 1024, "K");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 4, 22, 0, 1L << 40, "SEED");
    if (m % 32 || n % 32 || k % 32)
        fail("M, N and K must be multiples of 32");
    Rng rng(seed);
    std::vector<half> a((size_t)m * k), b((size_t)k * n);
    std::vector<double> ad(a.size()), bd(b.size());
    for (size_t i = 0; i < a.size(); ++i) { a[i] = __float2half(rng.uniform(-1.0f, 1.0f)); ad[i] = __half2float(a[i]); }
    for (size_t i = 0; i < b.size(); ++i) { b[i] = __float2half(rng.uniform(-1.0f, 1.0f)); bd[i] = __half2float(b[i]); }
    half *dA, *dB;
    float* dD;
    CK(cudaMalloc(&dA, sizeof(half) * a.size()));
    CK(cudaMalloc(&dB, sizeof(half) * b.size()));
    CK(cudaMalloc(&dD, sizeof(float) * m * n));
    CK(cudaMemcpy(dA, a.data(), sizeof(half) * a.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, b.data(), sizeof(half) * b.size(), cudaMemcpyHostToDevice));
    mma_gemm<<<dim3(n / BN, m / BM), 128>>>(n, k, dA, dB, dD);
    CK_LAUNCH();
    std::vector<float> d((size_t)m * n);
    CK(cudaMemcpy(d.data(), dD, sizeof(float) * d.size(), cudaMemcpyDeviceToHost));
    std::vector<double> ref(d.size()), tol(d.size());
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double s = 0, mag = 0;
            for (int kk = 0; kk < k; ++kk) {
                double p = ad[(size_t)i * k + kk] * bd[(size_t)kk * n + j];
                s += p;
                mag += std::fabs(p);
            }
            ref[(size_t)i * n + j] = s;
            tol[(size_t)i * n + j] = (k + 1) * std::ldexp(1.0, -22) * mag;
        }
    long bad = count_mismatches("d", d.data(), ref.data(), tol.data(), (long)d.size());

    // movmatrix: 4 warps, 4 matrices of distinct 16-bit values.
    const int mats = 4;
    std::vector<unsigned> in(mats * 32), out(mats * 32), want(mats * 32);
    auto elem = [&](int w, int r, int c) { return (unsigned)((w * 64 + r * 8 + c) * 37 % 65536); };
    for (int w = 0; w < mats; ++w)
        for (int l = 0; l < 32; ++l) {
            int r = l / 4, c = 2 * (l % 4);
            in[w * 32 + l] = elem(w, r, c) | elem(w, r, c + 1) << 16;
            want[w * 32 + l] = elem(w, c, r) | elem(w, c + 1, r) << 16;
        }
    unsigned *dIn, *dOut;
    CK(cudaMalloc(&dIn, sizeof(unsigned) * in.size()));
    CK(cudaMalloc(&dOut, sizeof(unsigned) * out.size()));
    CK(cudaMemcpy(dIn, in.data(), sizeof(unsigned) * in.size(), cudaMemcpyHostToDevice));
    transpose8<<<1, 32 * mats>>>(dIn, dOut);
    CK_LAUNCH();
    CK(cudaMemcpy(out.data(), dOut, sizeof(unsigned) * out.size(), cudaMemcpyDeviceToHost));
    bad += count_exact_mismatches("transpose8", out.data(), want.data(), (long)out.size());
    CK(cudaFree(dA)); CK(cudaFree(dB)); CK(cudaFree(dD)); CK(cudaFree(dIn)); CK(cudaFree(dOut));
    return verdict(bad);
}
