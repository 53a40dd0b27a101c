// wmma_gemm: D = A B + C on the tensor cores through the CUDA WMMA API (<mma.h>), one warp per
// 16 x 16 tile of D, four warps (2 x 2 tiles) per block. A is M x K row-major, B is K x N
// column-major, C and D are M x N row-major.
//
// Kernels (1 launch each):
//   wmma_f16_f32  - FP16 A and B, FP32 accumulator (m16n16k16)            sm_75, sm_86, sm_90
//   wmma_f16_f16  - FP16 A and B, FP16 accumulator (m16n16k16)            sm_75, sm_86, sm_90
//   wmma_bf16_f32 - BF16 A and B, FP32 accumulator (m16n16k16)            sm_80 and later
//   wmma_tf32_f32 - TF32 A and B (FP32 values rounded with __float_to_tf32), FP32 accumulator
//                   (m16n16k8)                                            sm_80 and later
// The host launches the sm_80 kernels only when cudaGetDeviceProperties reports compute
// capability 8.0 or later (their sm_75 cubins are empty bodies).
// Checks, per element against a double-precision host product of the same (rounded) inputs:
//   FP32 accumulator: |d - ref| <= (K + 1) 2^-22 (sum_k |a b| + |c|)   (hardware accumulation
//     order and rounding are undocumented; this is 4x the bound of an FP32 dot product)
//   FP16 accumulator: |d - ref| <= (K + 1) 2^-9  (sum_k |a b| + |c|)   (the same for FP16)
// Arguments: wmma_gemm [M=64 [N=64 [K=64 [SEED=21]]]] (multiples of 32, 32 .. 1024)
// Exercises: HMMA.16816.F32 / .F16 / .F32.BF16 and HMMA.1688.F32.TF32 (sm_80+),
//            HMMA.1688.F32 / .F16 (sm_75), the WMMA fragment loads and stores.
#include "check.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#include <vector>

using namespace nvcuda;

// Block: 4 warps; warp w computes the 16 x 16 tile (2 blockIdx.y + w / 2, 2 blockIdx.x + w % 2).
template <typename In, typename Acc, int KS>
__device__ void tile(int n, int k, const In* A, const In* B, const Acc* C, Acc* D)
{
    const int w = threadIdx.x / 32;
    const int row = (blockIdx.y * 2 + w / 2) * 16, col = (blockIdx.x * 2 + w % 2) * 16;
    wmma::fragment<wmma::accumulator, 16, 16, KS, Acc> acc;
    wmma::load_matrix_sync(acc, C + (size_t)row * n + col, n, wmma::mem_row_major);
    for (int kk = 0; kk < k; kk += KS) {
        wmma::fragment<wmma::matrix_a, 16, 16, KS, In, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, KS, In, wmma::col_major> b;
        wmma::load_matrix_sync(a, A + (size_t)row * k + kk, k);
        wmma::load_matrix_sync(b, B + (size_t)col * k + kk, k);
        wmma::mma_sync(acc, a, b, acc);
    }
    wmma::store_matrix_sync(D + (size_t)row * n + col, acc, n, wmma::mem_row_major);
}

__global__ void wmma_f16_f32(int n, int k, const half* A, const half* B, const float* C, float* D)
{
    tile<half, float, 16>(n, k, A, B, C, D);
}

__global__ void wmma_f16_f16(int n, int k, const half* A, const half* B, const half* C, half* D)
{
    tile<half, half, 16>(n, k, A, B, C, D);
}

__global__ void wmma_bf16_f32(int n, int k, const __nv_bfloat16* A, const __nv_bfloat16* B, const float* C, float* D)
{
#if __CUDA_ARCH__ >= 800
    tile<__nv_bfloat16, float, 16>(n, k, A, B, C, D);
#endif
}

// TF32 fragments are loaded from FP32 memory (the values are already TF32-rounded).
__global__ void wmma_tf32_f32(int n, int k, const float* A, const float* B, const float* C, float* D)
{
#if __CUDA_ARCH__ >= 800
    const int w = threadIdx.x / 32;
    const int row = (blockIdx.y * 2 + w / 2) * 16, col = (blockIdx.x * 2 + w % 2) * 16;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
    wmma::load_matrix_sync(acc, C + (size_t)row * n + col, n, wmma::mem_row_major);
    for (int kk = 0; kk < k; kk += 8) {
        wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> b;
        wmma::load_matrix_sync(a, A + (size_t)row * k + kk, k);
        wmma::load_matrix_sync(b, B + (size_t)col * k + kk, k);
        wmma::mma_sync(acc, a, b, acc);
    }
    wmma::store_matrix_sync(D + (size_t)row * n + col, acc, n, wmma::mem_row_major);
#endif
}

// Host: the TF32 value of an FP32 (round to nearest, ties away: what __float_to_tf32 does).
static float to_tf32(float x)
{
    uint32_t u;
    std::memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) != 0x7f800000u)
        u = (u + 0x1000u) & 0xffffe000u;
    float r;
    std::memcpy(&r, &u, 4);
    return r;
}

// Reference and tolerance of D = A B + C from double copies of the inputs (A row-major M x K,
// B column-major: B[j * K + kk]).
static long check(const char* what, int m, int n, int k, const std::vector<double>& a, const std::vector<double>& b,
                  const std::vector<double>& c, const std::vector<double>& d, double unit)
{
    std::vector<double> ref((size_t)m * n), tol((size_t)m * n);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double s = c[(size_t)i * n + j], mag = std::fabs(s);
            for (int kk = 0; kk < k; ++kk) {
                double p = a[(size_t)i * k + kk] * b[(size_t)j * k + kk];
                s += p;
                mag += std::fabs(p);
            }
            ref[(size_t)i * n + j] = s;
            tol[(size_t)i * n + j] = (k + 1) * unit * mag;
        }
    return count_mismatches(what, d.data(), ref.data(), tol.data(), (long)d.size());
}

template <typename T>
static T* upload(const std::vector<T>& h)
{
    T* d;
    CK(cudaMalloc(&d, sizeof(T) * h.size()));
    CK(cudaMemcpy(d, h.data(), sizeof(T) * h.size(), cudaMemcpyHostToDevice));
    return d;
}

template <typename T>
static std::vector<T> download(const T* d, size_t n)
{
    std::vector<T> h(n);
    CK(cudaMemcpy(h.data(), d, sizeof(T) * n, cudaMemcpyDeviceToHost));
    return h;
}

int main(int argc, char** argv)
{
    const int m = (int)arg_int(argc, argv, 1, 64, 32, 1024, "M");
    const int n = (int)arg_int(argc, argv, 2, 64, 32, 1024, "N");
    const int k = (int)arg_int(argc, argv, 3, 64, 32, 1024, "K");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 4, 21, 0, 1L << 40, "SEED");
    if (m % 32 || n % 32 || k % 32)
        fail("M, N and K must be multiples of 32");
    Rng rng(seed);
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const bool sm80 = prop.major >= 8;

    // Inputs in [-1, 1) rounded to each format; the host reference uses the rounded values.
    std::vector<float> af((size_t)m * k), bf((size_t)k * n), cf((size_t)m * n);
    for (auto& x : af) x = rng.uniform(-1.0f, 1.0f);
    for (auto& x : bf) x = rng.uniform(-1.0f, 1.0f);
    for (auto& x : cf) x = rng.uniform(-1.0f, 1.0f);
    const dim3 grid(n / 32, m / 32), block(128);
    long bad = 0;

    { // FP16 inputs.
        std::vector<half> ah(af.size()), bh(bf.size()), ch(cf.size());
        std::vector<double> a(af.size()), b(bf.size()), c(cf.size()), c16(cf.size());
        for (size_t i = 0; i < af.size(); ++i) { ah[i] = __float2half(af[i]); a[i] = __half2float(ah[i]); }
        for (size_t i = 0; i < bf.size(); ++i) { bh[i] = __float2half(bf[i]); b[i] = __half2float(bh[i]); }
        for (size_t i = 0; i < cf.size(); ++i) { c[i] = cf[i]; ch[i] = __float2half(cf[i]); c16[i] = __half2float(ch[i]); }
        half *dA = upload(ah), *dB = upload(bh), *dC16 = upload(ch), *dD16;
        float *dC = upload(cf), *dD;
        CK(cudaMalloc(&dD, sizeof(float) * cf.size()));
        CK(cudaMalloc(&dD16, sizeof(half) * cf.size()));
        wmma_f16_f32<<<grid, block>>>(n, k, dA, dB, dC, dD);
        CK_LAUNCH();
        wmma_f16_f16<<<grid, block>>>(n, k, dA, dB, dC16, dD16);
        CK_LAUNCH();
        std::vector<float> d = download(dD, cf.size());
        std::vector<half> d16 = download(dD16, cf.size());
        std::vector<double> dd(d.begin(), d.end()), dd16(d16.size());
        for (size_t i = 0; i < d16.size(); ++i) dd16[i] = __half2float(d16[i]);
        bad += check("f16_f32", m, n, k, a, b, c, dd, std::ldexp(1.0, -22));
        bad += check("f16_f16", m, n, k, a, b, c16, dd16, std::ldexp(1.0, -9));
        CK(cudaFree(dA)); CK(cudaFree(dB)); CK(cudaFree(dC)); CK(cudaFree(dD)); CK(cudaFree(dC16)); CK(cudaFree(dD16));
    }
    if (sm80) { // BF16 inputs.
        std::vector<__nv_bfloat16> ah(af.size()), bh(bf.size());
        std::vector<double> a(af.size()), b(bf.size()), c(cf.begin(), cf.end());
        for (size_t i = 0; i < af.size(); ++i) { ah[i] = __float2bfloat16(af[i]); a[i] = __bfloat162float(ah[i]); }
        for (size_t i = 0; i < bf.size(); ++i) { bh[i] = __float2bfloat16(bf[i]); b[i] = __bfloat162float(bh[i]); }
        __nv_bfloat16 *dA = upload(ah), *dB = upload(bh);
        float *dC = upload(cf), *dD;
        CK(cudaMalloc(&dD, sizeof(float) * cf.size()));
        wmma_bf16_f32<<<grid, block>>>(n, k, dA, dB, dC, dD);
        CK_LAUNCH();
        std::vector<float> d = download(dD, cf.size());
        std::vector<double> dd(d.begin(), d.end());
        bad += check("bf16_f32", m, n, k, a, b, c, dd, std::ldexp(1.0, -22));
        CK(cudaFree(dA)); CK(cudaFree(dB)); CK(cudaFree(dC)); CK(cudaFree(dD));

        // TF32 inputs.
        std::vector<float> at(af.size()), bt(bf.size());
        for (size_t i = 0; i < af.size(); ++i) { at[i] = to_tf32(af[i]); a[i] = at[i]; }
        for (size_t i = 0; i < bf.size(); ++i) { bt[i] = to_tf32(bf[i]); b[i] = bt[i]; }
        float *tA = upload(at), *tB = upload(bt), *tC = upload(cf), *tD;
        CK(cudaMalloc(&tD, sizeof(float) * cf.size()));
        wmma_tf32_f32<<<grid, block>>>(n, k, tA, tB, tC, tD);
        CK_LAUNCH();
        d = download(tD, cf.size());
        dd.assign(d.begin(), d.end());
        bad += check("tf32_f32", m, n, k, a, b, c, dd, std::ldexp(1.0, -22));
        CK(cudaFree(tA)); CK(cudaFree(tB)); CK(cudaFree(tC)); CK(cudaFree(tD));
    }
    return verdict(bad);
}
