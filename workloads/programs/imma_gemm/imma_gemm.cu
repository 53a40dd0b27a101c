// imma_gemm: integer D = A B + C on the tensor cores with mma.sync, S32 accumulators. Each warp
// computes one 16 x 8 tile of D; its fragments are read straight from global memory following
// the PTX ISA fragment layouts (groupID = lane / 4, threadID_in_group = lane % 4). A is M x K
// row-major, B is K x N column-major (B[j * K + kk]), C and D are M x N row-major.
//
// Kernels (1 launch each):
//   gemm_s8  - signed 8-bit A and B. sm_80+: mma.m16n8k32.s32.s8.s8.s32;
//              sm_75: two mma.m8n8k16 per 16 x 8 tile and k16 step.
//   gemm_u8s8_sat - unsigned 8-bit A, signed 8-bit B, .satfinite, with C near the S32 limits so
//              that some sums saturate. sm_80+: m16n8k32; sm_75: m8n8k16.
//   gemm_s4  - signed 4-bit A and B (8 per register). sm_80+: mma.m16n8k64.s32.s4.s4.s32
//              (ptxas emulates it with 8-bit IMMAs at sm_90); sm_75: m8n8k32.
// Checks: exact (integer arithmetic; .satfinite clamps the result of every MMA instruction,
// so the host reference clamps after every k32 step at sm_80+ and k16 step at sm_75).
// Arguments: imma_gemm [M=64 [N=32 [K=128 [SEED=23]]]] (M multiple of 16, N of 8, K of 64)
// Exercises: IMMA.16832.S8.S8, IMMA.16832.U8.S8.SAT, IMMA.16864.S4.S4 (sm_86),
//            IMMA.8816.S8.S8, IMMA.8816.U8.S8.SAT, IMMA.8832.S4.S4 (sm_75), IMMA at sm_90.
#include "check.h"

#include <climits>
#include <vector>

// 4 bytes of row `r` of a row-major byte matrix starting at column c (little-endian packing:
// the element of the lowest column in the lowest byte).
__device__ __forceinline__ unsigned word8(const int8_t* m, int ld, int r, int c)
{
    return *(const unsigned*)(m + (size_t)r * ld + c);
}

// Integer MMA tile for 8-bit types; U8A selects an unsigned A, SAT the .satfinite form.
template <bool U8A, bool SAT>
__device__ void tile8(int n, int k, const int8_t* A, const int8_t* B, const int* C, int* D)
{
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    const int tiles_n = n / 8;
    const int row = (warp / tiles_n) * 16, col = (warp % tiles_n) * 8;
    const int g = lane >> 2, t = lane & 3;
    int d[4];
    d[0] = C[(size_t)(row + g) * n + col + 2 * t];
    d[1] = C[(size_t)(row + g) * n + col + 2 * t + 1];
    d[2] = C[(size_t)(row + g + 8) * n + col + 2 * t];
    d[3] = C[(size_t)(row + g + 8) * n + col + 2 * t + 1];
#if __CUDA_ARCH__ >= 800
    for (int kk = 0; kk < k; kk += 32) {
        // A m16 x k32: a0 (g, 4t..), a1 (g + 8, 4t..), a2 (g, 4t + 16..), a3 (g + 8, 4t + 16..).
        unsigned a0 = word8(A, k, row + g, kk + 4 * t), a1 = word8(A, k, row + g + 8, kk + 4 * t);
        unsigned a2 = word8(A, k, row + g, kk + 4 * t + 16), a3 = word8(A, k, row + g + 8, kk + 4 * t + 16);
        // B k32 x n8 column-major: b0 (4t.., g), b1 (4t + 16.., g).
        unsigned b0 = word8(B, k, col + g, kk + 4 * t), b1 = word8(B, k, col + g, kk + 4 * t + 16);
        if (U8A && SAT)
            asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                         "{%8,%9}, {%0,%1,%2,%3};"
                         : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
        else
            asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                         "{%8,%9}, {%0,%1,%2,%3};"
                         : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
#else
    // Two m8n8k16 per k16 step: rows 0-7 (d0, d1) and rows 8-15 (d2, d3). A m8 x k16: (g, 4t..);
    // B k16 x n8: (4t.., g); C: (g, 2t), (g, 2t + 1).
    for (int kk = 0; kk < k; kk += 16) {
        unsigned b0 = word8(B, k, col + g, kk + 4 * t);
        for (int h = 0; h < 2; ++h) {
            unsigned a0 = word8(A, k, row + g + 8 * h, kk + 4 * t);
            if (U8A && SAT)
                asm volatile("mma.sync.aligned.m8n8k16.row.col.satfinite.s32.u8.s8.s32 {%0,%1}, {%2}, {%3}, {%0,%1};"
                             : "+r"(d[2 * h]), "+r"(d[2 * h + 1])
                             : "r"(a0), "r"(b0));
            else
                asm volatile("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%0,%1}, {%2}, {%3}, {%0,%1};"
                             : "+r"(d[2 * h]), "+r"(d[2 * h + 1])
                             : "r"(a0), "r"(b0));
        }
    }
#endif
    D[(size_t)(row + g) * n + col + 2 * t] = d[0];
    D[(size_t)(row + g) * n + col + 2 * t + 1] = d[1];
    D[(size_t)(row + g + 8) * n + col + 2 * t] = d[2];
    D[(size_t)(row + g + 8) * n + col + 2 * t + 1] = d[3];
}

__global__ void gemm_s8(int n, int k, const int8_t* A, const int8_t* B, const int* C, int* D)
{
    tile8<false, false>(n, k, A, B, C, D);
}

__global__ void gemm_u8s8_sat(int n, int k, const int8_t* A, const int8_t* B, const int* C, int* D)
{
    tile8<true, true>(n, k, A, B, C, D);
}

// 4-bit operands: A4 and B4 hold two elements per byte (the lower column in the low nibble),
// so a row of K elements is K / 2 bytes.
__global__ void gemm_s4(int n, int k, const uint8_t* A4, const uint8_t* B4, const int* C, int* D)
{
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    const int tiles_n = n / 8;
    const int row = (warp / tiles_n) * 16, col = (warp % tiles_n) * 8;
    const int g = lane >> 2, t = lane & 3, kb = k / 2;
    auto w4 = [&](const uint8_t* m, int r, int c) { return *(const unsigned*)(m + (size_t)r * kb + c / 2); };
    int d[4];
    d[0] = C[(size_t)(row + g) * n + col + 2 * t];
    d[1] = C[(size_t)(row + g) * n + col + 2 * t + 1];
    d[2] = C[(size_t)(row + g + 8) * n + col + 2 * t];
    d[3] = C[(size_t)(row + g + 8) * n + col + 2 * t + 1];
#if __CUDA_ARCH__ >= 800
    for (int kk = 0; kk < k; kk += 64) {
        // A m16 x k64: a0 (g, 8t..), a1 (g + 8, 8t..), a2 (g, 8t + 32..), a3 (g + 8, 8t + 32..).
        unsigned a0 = w4(A4, row + g, kk + 8 * t), a1 = w4(A4, row + g + 8, kk + 8 * t);
        unsigned a2 = w4(A4, row + g, kk + 8 * t + 32), a3 = w4(A4, row + g + 8, kk + 8 * t + 32);
        unsigned b0 = w4(B4, col + g, kk + 8 * t), b1 = w4(B4, col + g, kk + 8 * t + 32);
        asm volatile("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
#else
    for (int kk = 0; kk < k; kk += 32) {
        unsigned b0 = w4(B4, col + g, kk + 8 * t);
        for (int h = 0; h < 2; ++h) {
            unsigned a0 = w4(A4, row + g + 8 * h, kk + 8 * t);
            asm volatile("mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32 {%0,%1}, {%2}, {%3}, {%0,%1};"
                         : "+r"(d[2 * h]), "+r"(d[2 * h + 1])
                         : "r"(a0), "r"(b0));
        }
    }
#endif
    D[(size_t)(row + g) * n + col + 2 * t] = d[0];
    D[(size_t)(row + g) * n + col + 2 * t + 1] = d[1];
    D[(size_t)(row + g + 8) * n + col + 2 * t] = d[2];
    D[(size_t)(row + g + 8) * n + col + 2 * t + 1] = d[3];
}

static long run(const char* what, void (*kern)(int, int, const int8_t*, const int8_t*, const int*, int*), int m,
                int n, int k, const std::vector<int8_t>& a, const std::vector<int8_t>& b, const std::vector<int>& c,
                const std::vector<int>& want)
{
    int8_t *dA, *dB;
    int *dC, *dD;
    CK(cudaMalloc(&dA, a.size()));
    CK(cudaMalloc(&dB, b.size()));
    CK(cudaMalloc(&dC, sizeof(int) * c.size()));
    CK(cudaMalloc(&dD, sizeof(int) * c.size()));
    CK(cudaMemcpy(dA, a.data(), a.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, b.data(), b.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dC, c.data(), sizeof(int) * c.size(), cudaMemcpyHostToDevice));
    const int warps = (m / 16) * (n / 8);
    kern<<<(warps + 3) / 4, 128>>>(n, k, dA, dB, dC, dD);
    CK_LAUNCH();
    std::vector<int> d(c.size());
    CK(cudaMemcpy(d.data(), dD, sizeof(int) * d.size(), cudaMemcpyDeviceToHost));
    CK(cudaFree(dA)); CK(cudaFree(dB)); CK(cudaFree(dC)); CK(cudaFree(dD));
    return count_exact_mismatches(what, d.data(), want.data(), (long)d.size());
}

int main(int argc, char** argv)
{
    const int m = (int)arg_int(argc, argv, 1, 64, 16, 1024, "M");
    const int n = (int)arg_int(argc, argv, 2, 32, 8, 1024, "N");
    const int k = (int)arg_int(argc, argv, 3, 128, 64, 1024, "K");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 4, 23, 0, 1L << 40, "SEED");
    if (m % 16 || n % 8 || k % 64 || ((m / 16) * (n / 8)) % 4)
        fail("M must be a multiple of 16, N of 8, K of 64, and (M/16)(N/8) of 4");
    Rng rng(seed);
    std::vector<int8_t> a((size_t)m * k), b((size_t)n * k); // b column-major: b[j * k + kk]
    std::vector<int> c((size_t)m * n), want(c.size());
    for (auto& x : a) x = (int8_t)rng.u32();
    for (auto& x : b) x = (int8_t)rng.u32();
    for (auto& x : c) x = (int)(rng.u32() >> 12) - (1 << 19);
    // .satfinite clamps the D of every MMA instruction: k32 steps at sm_80+, k16 at sm_75.
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const int ksteps = prop.major >= 8 ? 32 : 16;
    auto gemm = [&](bool ua, bool sat, const std::vector<int>& cc) {
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
                long long s = cc[(size_t)i * n + j];
                for (int kk = 0; kk < k; ++kk) {
                    int av = ua ? (int)(uint8_t)a[(size_t)i * k + kk] : (int)a[(size_t)i * k + kk];
                    s += (long long)av * b[(size_t)j * k + kk];
                    if (sat && (kk + 1) % ksteps == 0)
                        s = s > INT_MAX ? INT_MAX : s < INT_MIN ? INT_MIN : s;
                }
                want[(size_t)i * n + j] = (int)(uint32_t)(uint64_t)s;
            }
    };
    gemm(false, false, c);
    long bad = run("s8", gemm_s8, m, n, k, a, b, c, want);
    // C within 2^21 of the S32 limits: sums of up to K products of |p| <= 2^15 saturate.
    std::vector<int> cs(c.size());
    for (size_t i = 0; i < cs.size(); ++i)
        cs[i] = (i % 2 ? INT_MAX : INT_MIN) - (i % 2 ? 1 : -1) * (int)(rng.u32() >> 11);
    gemm(true, true, cs);
    bad += run("u8s8_sat", gemm_u8s8_sat, m, n, k, a, b, cs, want);

    // 4-bit: values -8..7 packed two per byte.
    std::vector<int8_t> a4v((size_t)m * k), b4v((size_t)n * k);
    for (auto& x : a4v) x = (int8_t)(rng.below(16)) - 8;
    for (auto& x : b4v) x = (int8_t)(rng.below(16)) - 8;
    std::vector<uint8_t> a4(a4v.size() / 2), b4(b4v.size() / 2);
    for (size_t i = 0; i < a4.size(); ++i) a4[i] = (uint8_t)((a4v[2 * i] & 15) | (a4v[2 * i + 1] & 15) << 4);
    for (size_t i = 0; i < b4.size(); ++i) b4[i] = (uint8_t)((b4v[2 * i] & 15) | (b4v[2 * i + 1] & 15) << 4);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            long long s = c[(size_t)i * n + j];
            for (int kk = 0; kk < k; ++kk)
                s += a4v[(size_t)i * k + kk] * b4v[(size_t)j * k + kk];
            want[(size_t)i * n + j] = (int)s;
        }
    uint8_t *dA, *dB;
    int *dC, *dD;
    CK(cudaMalloc(&dA, a4.size()));
    CK(cudaMalloc(&dB, b4.size()));
    CK(cudaMalloc(&dC, sizeof(int) * c.size()));
    CK(cudaMalloc(&dD, sizeof(int) * c.size()));
    CK(cudaMemcpy(dA, a4.data(), a4.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, b4.data(), b4.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dC, c.data(), sizeof(int) * c.size(), cudaMemcpyHostToDevice));
    gemm_s4<<<(m / 16) * (n / 8) / 4, 128>>>(n, k, dA, dB, dC, dD);
    CK_LAUNCH();
    std::vector<int> d(c.size());
    CK(cudaMemcpy(d.data(), dD, sizeof(int) * d.size(), cudaMemcpyDeviceToHost));
    bad += count_exact_mismatches("s4", d.data(), want.data(), (long)d.size());
    CK(cudaFree(dA)); CK(cudaFree(dB)); CK(cudaFree(dC)); CK(cudaFree(dD));
    return verdict(bad);
}
