// spmma_gemm: D = A B + C with a 2:4 structured-sparse A on the tensor cores (mma.sp, PTX ISA
// 9.7.14.6). Each warp computes one 16 x 8 tile of D. A is stored compressed: row-major M x K/2
// (the kept elements of each row, in order), with metadata E: row-major M x (KU/16) 16-bit
// words, where KU is the row length in metadata units (16-bit units for f16/tf32, bytes for
// s8) and word w of a row describes dense units 16w .. 16w + 15: chunk c (units 4c .. 4c + 3)
// in bits 4c .. 4c + 3, the position of its first kept unit in the low two bits and of its
// second in the high two (a tf32 element is two units: 0b0100 keeps the first of a pair of
// elements, 0b1110 the second). B is K x N column-major (B[j * K + kk]); C, D M x N row-major.
//
// Fragments follow the PTX ISA (groupID g = lane / 4, threadID_in_group t = lane % 4): the
// compressed A has the layout of a dense A of K/2 columns; the metadata register of an MMA
// over dense units [u0, u0 + U) is supplied by T = U / 32 threads of each quad (the sparsity
// selector S picks threads T S .. T S + T - 1); thread T S + j holds word u0/16 + j of row g in
// bits 0-15 and of row g + 8 in bits 16-31. The other threads get a wrong word (its
// complement), so a simulator that reads metadata from the wrong thread fails the check.
//
// Kernels (1 launch each; sm_80+ use mma.sp, sm_75 (no sparse MMA) a scalar loop that expands
// the metadata, so that the program passes everywhere):
//   sp_f16_k32  - f16 in, f32 accumulate, m16n8k32 (HMMA.SP.16832.F32), selector alternating
//                 0, 1 over k steps.
//   sp_f16_k16  - m16n8k16 (HMMA.SP.16816.F32), selector k step mod 4.
//   sp_tf32_k16 - tf32 in (1:2 sparsity), m16n8k16 (HMMA.SP.16816.F32.TF32), selector 1 - step % 2.
//   sp_s8_k32   - s8 in, s32 accumulate, m16n8k32 (IMMA.SP.16832.S8.S8), selector alternating.
//   sp_s8_k64   - s8, m16n8k64 (IMMA.SP.16864.S8.S8), selector 0 (four metadata threads).
// Checks: exact for every element. Integer arithmetic is exact; the FP inputs are multiples of
// 1/8 in [-4, 4) and C multiples of 1/4, so every product and partial sum is a multiple of
// 1/64 below 2^17 in magnitude: exact in FP32 whatever the order, hence tolerance 0.
// Arguments: spmma_gemm [M=32 [N=16 [K=128 [SEED=26]]]] (M multiple of 16, N of 8, K of 64)
// Exercises: HMMA.SP.16832.F32, HMMA.SP.16816.F32, HMMA.SP.16816.F32.TF32, IMMA.SP.16832.S8.S8,
//            IMMA.SP.16864.S8.S8 (sm_86, sm_90).
#include "check.h"

#include <cstring>
#include <cuda_fp16.h>
#include <vector>

struct Dims {
    int m, n, k;
};

// Metadata register of a thread: T threads per quad starting at T * sel; word index w0 of the
// row's metadata words (16 units each).
__device__ __forceinline__ unsigned meta_reg(const uint16_t* E, int ew, int row, int w0, int T, int sel, int t)
{
    const int g = (threadIdx.x & 31) >> 2;
    const int j = t - T * sel;
    const int jj = (j >= 0 && j < T) ? j : (t % T);
    unsigned v = E[(size_t)(row + g) * ew + w0 + jj] | (unsigned)E[(size_t)(row + g + 8) * ew + w0 + jj] << 16;
    return (j >= 0 && j < T) ? v : ~v;
}

__device__ __forceinline__ unsigned ld32(const void* base, size_t byte)
{
    unsigned v;
    memcpy(&v, (const char*)base + byte, 4);
    return v;
}

// Scalar D tile for sm_75: expands the metadata. `ebits` = element bits, `ubits` = unit bits.
template <typename T, typename Acc>
__device__ void scalar_tile(Dims d, const T* A, const uint16_t* E, const T* B, const Acc* C, Acc* D, int ebits,
                            int ubits)
{
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    const int tiles_n = d.n / 8, row = (warp / tiles_n) * 16, col = (warp % tiles_n) * 8;
    const int ku = d.k * ebits / ubits, ew = ku / 16;
    for (int e = lane; e < 128; e += 32) {
        const int i = row + e / 8, j = col + e % 8;
        Acc s = C[(size_t)i * d.n + j];
        for (int su = 0; su < ku / 2; su += (ebits > ubits ? ebits / ubits : 1)) {
            const unsigned w = E[(size_t)i * ew + su / 8];
            const int idx = (w >> (2 * (su % 8))) & 3;
            const int du = 4 * (su / 2) + idx;
            const int dk = du * ubits / ebits, sk = su * ubits / ebits;
            s += (Acc)A[(size_t)i * (d.k / 2) + sk] * (Acc)B[(size_t)j * d.k + dk];
        }
        D[(size_t)i * d.n + j] = s;
    }
}

#define TILE_START                                                                                          \
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;                \
    const int tiles_n = dm.n / 8, row = (warp / tiles_n) * 16, col = (warp % tiles_n) * 8;                 \
    const int g = lane >> 2, t = lane & 3;                                                                  \
    (void)g;                                                                                                \
    (void)t;

template <typename Acc>
__device__ void load_c(Dims dm, const Acc* C, int row, int col, Acc (&c)[4])
{
    const int g = (threadIdx.x & 31) >> 2, t = threadIdx.x & 3;
    c[0] = C[(size_t)(row + g) * dm.n + col + 2 * t];
    c[1] = C[(size_t)(row + g) * dm.n + col + 2 * t + 1];
    c[2] = C[(size_t)(row + g + 8) * dm.n + col + 2 * t];
    c[3] = C[(size_t)(row + g + 8) * dm.n + col + 2 * t + 1];
}

template <typename Acc>
__device__ void store_d(Dims dm, Acc* D, int row, int col, const Acc (&c)[4])
{
    const int g = (threadIdx.x & 31) >> 2, t = threadIdx.x & 3;
    D[(size_t)(row + g) * dm.n + col + 2 * t] = c[0];
    D[(size_t)(row + g) * dm.n + col + 2 * t + 1] = c[1];
    D[(size_t)(row + g + 8) * dm.n + col + 2 * t] = c[2];
    D[(size_t)(row + g + 8) * dm.n + col + 2 * t + 1] = c[3];
}

// f16: A compressed row = K/2 halves (2 bytes each), E row = K/16 words, B column = K halves.
__global__ void sp_f16_k32(Dims dm, const uint16_t* A, const uint16_t* E, const uint16_t* B, const float* C, float* D)
{
#if __CUDA_ARCH__ >= 800
    TILE_START
    float c[4];
    load_c(dm, C, row, col, c);
    const int ka = dm.k / 2, ew = dm.k / 16;
    for (int kk = 0, step = 0; kk < dm.k; kk += 32, ++step) {
        const int kc = kk / 2; // compressed column of this step
        // Compressed A m16 x 16: a0 (g, 2t..), a1 (g + 8, 2t..), a2 (g, 2t + 8..), a3 (g + 8, 2t + 8..).
        unsigned a0 = ld32(A, 2 * ((size_t)(row + g) * ka + kc + 2 * t));
        unsigned a1 = ld32(A, 2 * ((size_t)(row + g + 8) * ka + kc + 2 * t));
        unsigned a2 = ld32(A, 2 * ((size_t)(row + g) * ka + kc + 2 * t + 8));
        unsigned a3 = ld32(A, 2 * ((size_t)(row + g + 8) * ka + kc + 2 * t + 8));
        // B k32 x n8: b_r (2t + 8r .., g).
        unsigned b[4];
        for (int r = 0; r < 4; ++r)
            b[r] = ld32(B, 2 * ((size_t)(col + g) * dm.k + kk + 2 * t + 8 * r));
        const unsigned e = meta_reg(E, ew, row, kk / 16, 2, step & 1, t);
        if (step & 1)
            asm volatile("mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                         "{%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x1;"
                         : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e));
        else
            asm volatile("mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                         "{%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;"
                         : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e));
    }
    store_d(dm, D, row, col, c);
#endif
}

template <int SEL>
__device__ __forceinline__ void mma_f16_k16(float (&c)[4], unsigned a0, unsigned a1, unsigned b0, unsigned b1, unsigned e)
{
    asm volatile("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, "
                 "{%0,%1,%2,%3}, %8, %9;"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(b0), "r"(b1), "r"(e), "n"(SEL));
}

__global__ void sp_f16_k16(Dims dm, const uint16_t* A, const uint16_t* E, const uint16_t* B, const float* C, float* D)
{
#if __CUDA_ARCH__ >= 800
    TILE_START
    float c[4];
    load_c(dm, C, row, col, c);
    const int ka = dm.k / 2, ew = dm.k / 16;
    for (int kk = 0, step = 0; kk < dm.k; kk += 16, ++step) {
        const int kc = kk / 2;
        unsigned a0 = ld32(A, 2 * ((size_t)(row + g) * ka + kc + 2 * t));
        unsigned a1 = ld32(A, 2 * ((size_t)(row + g + 8) * ka + kc + 2 * t));
        unsigned b0 = ld32(B, 2 * ((size_t)(col + g) * dm.k + kk + 2 * t));
        unsigned b1 = ld32(B, 2 * ((size_t)(col + g) * dm.k + kk + 2 * t + 8));
        const int sel = step & 3;
        const unsigned e = meta_reg(E, ew, row, kk / 16, 1, sel, t);
        switch (sel) {
        case 0: mma_f16_k16<0>(c, a0, a1, b0, b1, e); break;
        case 1: mma_f16_k16<1>(c, a0, a1, b0, b1, e); break;
        case 2: mma_f16_k16<2>(c, a0, a1, b0, b1, e); break;
        default: mma_f16_k16<3>(c, a0, a1, b0, b1, e); break;
        }
    }
    store_d(dm, D, row, col, c);
#endif
}

// tf32: A compressed row = K/2 floats; units are 16-bit, a row of K tf32 is 2K units, E row = K/8 words.
__global__ void sp_tf32_k16(Dims dm, const float* A, const uint16_t* E, const float* B, const float* C, float* D)
{
#if __CUDA_ARCH__ >= 800
    TILE_START
    float c[4];
    load_c(dm, C, row, col, c);
    const int ka = dm.k / 2, ew = dm.k / 8;
    for (int kk = 0, step = 0; kk < dm.k; kk += 16, ++step) {
        const int kc = kk / 2;
        // Compressed A m16 x 8 tf32: a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4).
        unsigned a0 = ld32(A, 4 * ((size_t)(row + g) * ka + kc + t));
        unsigned a1 = ld32(A, 4 * ((size_t)(row + g + 8) * ka + kc + t));
        unsigned a2 = ld32(A, 4 * ((size_t)(row + g) * ka + kc + t + 4));
        unsigned a3 = ld32(A, 4 * ((size_t)(row + g + 8) * ka + kc + t + 4));
        // B k16 x n8 tf32: b_r (t + 4r, g).
        unsigned b[4];
        for (int r = 0; r < 4; ++r)
            b[r] = ld32(B, 4 * ((size_t)(col + g) * dm.k + kk + t + 4 * r));
        const int sel = 1 - (step & 1);
        const unsigned e = meta_reg(E, ew, row, kk / 8, 2, sel, t);
        if (sel)
            asm volatile("mma.sp.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                         "{%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x1;"
                         : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e));
        else
            asm volatile("mma.sp.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                         "{%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;"
                         : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e));
    }
    store_d(dm, D, row, col, c);
#endif
}

// s8: A compressed row = K/2 bytes, E row = K/16 words, B column = K bytes.
__global__ void sp_s8_k32(Dims dm, const int8_t* A, const uint16_t* E, const int8_t* B, const int* C, int* D)
{
#if __CUDA_ARCH__ >= 800
    TILE_START
    int c[4];
    load_c(dm, C, row, col, c);
    const int ka = dm.k / 2, ew = dm.k / 16;
    for (int kk = 0, step = 0; kk < dm.k; kk += 32, ++step) {
        const int kc = kk / 2;
        // Compressed A m16 x 16 bytes: a0 (g, 4t..), a1 (g + 8, 4t..).
        unsigned a0 = ld32(A, (size_t)(row + g) * ka + kc + 4 * t);
        unsigned a1 = ld32(A, (size_t)(row + g + 8) * ka + kc + 4 * t);
        // B k32 x n8 s8: b_r (4t + 16r .., g).
        unsigned b0 = ld32(B, (size_t)(col + g) * dm.k + kk + 4 * t);
        unsigned b1 = ld32(B, (size_t)(col + g) * dm.k + kk + 4 * t + 16);
        const unsigned e = meta_reg(E, ew, row, kk / 16, 2, step & 1, t);
        if (step & 1)
            asm volatile("mma.sp.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, "
                         "{%0,%1,%2,%3}, %8, 0x1;"
                         : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                         : "r"(a0), "r"(a1), "r"(b0), "r"(b1), "r"(e));
        else
            asm volatile("mma.sp.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, "
                         "{%0,%1,%2,%3}, %8, 0x0;"
                         : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                         : "r"(a0), "r"(a1), "r"(b0), "r"(b1), "r"(e));
    }
    store_d(dm, D, row, col, c);
#endif
}

__global__ void sp_s8_k64(Dims dm, const int8_t* A, const uint16_t* E, const int8_t* B, const int* C, int* D)
{
#if __CUDA_ARCH__ >= 800
    TILE_START
    int c[4];
    load_c(dm, C, row, col, c);
    const int ka = dm.k / 2, ew = dm.k / 16;
    for (int kk = 0; kk < dm.k; kk += 64) {
        const int kc = kk / 2;
        // Compressed A m16 x 32 bytes: a0 (g, 4t..), a1 (g + 8, 4t..), a2 (g, 4t + 16..), a3 (g + 8, 4t + 16..).
        unsigned a0 = ld32(A, (size_t)(row + g) * ka + kc + 4 * t);
        unsigned a1 = ld32(A, (size_t)(row + g + 8) * ka + kc + 4 * t);
        unsigned a2 = ld32(A, (size_t)(row + g) * ka + kc + 4 * t + 16);
        unsigned a3 = ld32(A, (size_t)(row + g + 8) * ka + kc + 4 * t + 16);
        unsigned b[4];
        for (int r = 0; r < 4; ++r)
            b[r] = ld32(B, (size_t)(col + g) * dm.k + kk + 4 * t + 16 * r);
        const unsigned e = meta_reg(E, ew, row, kk / 16, 4, 0, t);
        asm volatile("mma.sp.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                     "{%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;"
                     : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e));
    }
    store_d(dm, D, row, col, c);
#endif
}

// sm_75 fallbacks: one kernel per element type, the same arguments.
__global__ void sp_scalar_f16(Dims dm, const __half* A, const uint16_t* E, const __half* B, const float* C, float* D)
{
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    const int tiles_n = dm.n / 8, row = (warp / tiles_n) * 16, col = (warp % tiles_n) * 8;
    const int ew = dm.k / 16;
    for (int e = lane; e < 128; e += 32) {
        const int i = row + e / 8, j = col + e % 8;
        float s = C[(size_t)i * dm.n + j];
        for (int su = 0; su < dm.k / 2; ++su) {
            const int idx = (E[(size_t)i * ew + su / 8] >> (2 * (su % 8))) & 3;
            s += __half2float(A[(size_t)i * (dm.k / 2) + su]) * __half2float(B[(size_t)j * dm.k + 4 * (su / 2) + idx]);
        }
        D[(size_t)i * dm.n + j] = s;
    }
}

__global__ void sp_scalar_tf32(Dims dm, const float* A, const uint16_t* E, const float* B, const float* C, float* D)
{
    scalar_tile<float, float>(dm, A, E, B, C, D, 32, 16);
}

__global__ void sp_scalar_s8(Dims dm, const int8_t* A, const uint16_t* E, const int8_t* B, const int* C, int* D)
{
    scalar_tile<int8_t, int>(dm, A, E, B, C, D, 8, 8);
}

// Host side ---------------------------------------------------------------------------------

static uint16_t f16_bits(float x) // exact for the values used (multiples of 1/8 in [-4, 4))
{
    __half h = __float2half_rn(x);
    uint16_t u;
    std::memcpy(&u, &h, 2);
    return u;
}

struct Sparse {
    std::vector<float> dense;    // M x K values (zeros where pruned)
    std::vector<int> keep_col;   // M x K/2: dense column of each kept element
    std::vector<uint16_t> meta;  // M x (KU/16)
};

// Random 2:4 (unit granularity) pattern; ebits / ubits as in scalar_tile.
static Sparse make_pattern(Rng& rng, int m, int k, int ebits, int ubits)
{
    const int ku = k * ebits / ubits, upe = ebits / ubits; // units per element (1 or 2)
    Sparse s;
    s.dense.assign((size_t)m * k, 0.f);
    s.keep_col.assign((size_t)m * k / 2, 0);
    s.meta.assign((size_t)m * ku / 16, 0);
    for (int i = 0; i < m; ++i)
        for (int ch = 0; ch < ku / 4; ++ch) {
            int i0, i1;
            if (upe == 2) { // tf32: one element of the pair, as two units
                i0 = rng.below(2) * 2;
                i1 = i0 + 1;
            } else {
                i0 = rng.below(3);
                i1 = i0 + 1 + rng.below(3 - i0);
            }
            const unsigned bits = (unsigned)i0 | (unsigned)i1 << 2;
            s.meta[(size_t)i * (ku / 16) + ch / 4] |= (uint16_t)(bits << (4 * (ch % 4)));
            for (int slot = 0; slot < 2; slot += upe) {
                const int su = 2 * ch + slot, du = 4 * ch + (slot ? i1 : i0);
                s.keep_col[(size_t)i * (k / 2) + su / upe] = du / upe;
            }
        }
    return s;
}

template <typename Host, typename Dev, typename Acc>
static long run(const char* what, void (*kern)(Dims, const Dev*, const uint16_t*, const Dev*, const Acc*, Acc*),
                Dims dm, const std::vector<Host>& a, const std::vector<uint16_t>& e, const std::vector<Host>& b,
                const std::vector<Acc>& c, const std::vector<Acc>& want)
{
    Host *dA, *dB;
    uint16_t* dE;
    Acc *dC, *dD;
    CK(cudaMalloc(&dA, sizeof(Host) * a.size()));
    CK(cudaMalloc(&dB, sizeof(Host) * b.size()));
    CK(cudaMalloc(&dE, sizeof(uint16_t) * e.size()));
    CK(cudaMalloc(&dC, sizeof(Acc) * c.size()));
    CK(cudaMalloc(&dD, sizeof(Acc) * c.size()));
    CK(cudaMemcpy(dA, a.data(), sizeof(Host) * a.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, b.data(), sizeof(Host) * b.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dE, e.data(), sizeof(uint16_t) * e.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dC, c.data(), sizeof(Acc) * c.size(), cudaMemcpyHostToDevice));
    const int warps = (dm.m / 16) * (dm.n / 8);
    kern<<<(warps + 3) / 4, 128>>>(dm, (const Dev*)dA, dE, (const Dev*)dB, dC, dD);
    CK_LAUNCH();
    std::vector<Acc> d(c.size());
    CK(cudaMemcpy(d.data(), dD, sizeof(Acc) * d.size(), cudaMemcpyDeviceToHost));
    CK(cudaFree(dA)); CK(cudaFree(dB)); CK(cudaFree(dE)); CK(cudaFree(dC)); CK(cudaFree(dD));
    long bad = 0;
    for (size_t i = 0; i < d.size(); ++i)
        if (std::memcmp(&d[i], &want[i], sizeof(Acc)) != 0) {
            if (bad < 5)
                std::printf("FAIL %s: D[%zu][%zu] = %.17g, want %.17g\n", what, i / dm.n, i % dm.n, (double)d[i],
                            (double)want[i]);
            ++bad;
        }
    return bad;
}

// Dense reference D = dense(A) B + C, summed in double (exact here) and converted.
template <typename Acc>
static std::vector<Acc> reference(Dims dm, const Sparse& s, const std::vector<float>& bval, const std::vector<Acc>& c)
{
    std::vector<Acc> d(c.size());
    for (int i = 0; i < dm.m; ++i)
        for (int j = 0; j < dm.n; ++j) {
            double r = (double)c[(size_t)i * dm.n + j];
            for (int kk = 0; kk < dm.k; ++kk)
                r += (double)s.dense[(size_t)i * dm.k + kk] * bval[(size_t)j * dm.k + kk];
            d[(size_t)i * dm.n + j] = (Acc)r;
        }
    return d;
}

int main(int argc, char** argv)
{
    const int m = (int)arg_int(argc, argv, 1, 32, 16, 4096, "M");
    const int n = (int)arg_int(argc, argv, 2, 16, 8, 4096, "N");
    const int k = (int)arg_int(argc, argv, 3, 128, 64, 4096, "K");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 4, 26, 0, 1L << 40, "SEED");
    if (m % 16 || n % 8 || k % 64) {
        std::printf("FAIL bad argument: M must be a multiple of 16, N of 8, K of 64\n");
        return 2;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const bool sparse_hw = prop.major >= 8;
    const Dims dm{m, n, k};
    Rng rng(seed);
    long bad = 0;
    auto fp_val = [&]() { return (float)((int)rng.below(64) - 32) / 8.0f; };
    std::vector<float> cf((size_t)m * n);
    for (auto& x : cf)
        x = (float)((int)rng.below(64) - 32) / 4.0f;

    // f16 (two kernels on the same data).
    {
        Sparse s = make_pattern(rng, m, k, 16, 16);
        std::vector<uint16_t> a((size_t)m * k / 2), b((size_t)n * k);
        std::vector<float> bval((size_t)n * k);
        for (size_t i = 0; i < a.size(); ++i) {
            const float v = fp_val();
            a[i] = f16_bits(v);
            s.dense[(i / (k / 2)) * k + s.keep_col[i]] = v;
        }
        for (size_t i = 0; i < b.size(); ++i) {
            bval[i] = fp_val();
            b[i] = f16_bits(bval[i]);
        }
        const auto want = reference<float>(dm, s, bval, cf);
        if (sparse_hw) {
            bad += run<uint16_t, uint16_t, float>("sp_f16_k32", sp_f16_k32, dm, a, s.meta, b, cf, want);
            bad += run<uint16_t, uint16_t, float>("sp_f16_k16", sp_f16_k16, dm, a, s.meta, b, cf, want);
        } else {
            bad += run<uint16_t, __half, float>("sp_scalar_f16", sp_scalar_f16, dm, a, s.meta, b, cf, want);
        }
    }
    // tf32: 1:2 sparsity.
    {
        Sparse s = make_pattern(rng, m, k, 32, 16);
        std::vector<float> a((size_t)m * k / 2), b((size_t)n * k);
        for (size_t i = 0; i < a.size(); ++i) {
            a[i] = fp_val();
            s.dense[(i / (k / 2)) * k + s.keep_col[i]] = a[i];
        }
        for (auto& x : b)
            x = fp_val();
        const auto want = reference<float>(dm, s, b, cf);
        bad += run<float, float, float>("sp_tf32_k16", sparse_hw ? sp_tf32_k16 : sp_scalar_tf32, dm, a, s.meta, b, cf,
                                        want);
    }
    // s8 (two kernels on the same data).
    {
        Sparse s = make_pattern(rng, m, k, 8, 8);
        std::vector<int8_t> a((size_t)m * k / 2), b((size_t)n * k);
        std::vector<float> bval((size_t)n * k);
        for (size_t i = 0; i < a.size(); ++i) {
            a[i] = (int8_t)(rng.below(256) - 128);
            s.dense[(i / (k / 2)) * k + s.keep_col[i]] = a[i];
        }
        for (size_t i = 0; i < b.size(); ++i) {
            b[i] = (int8_t)(rng.below(256) - 128);
            bval[i] = b[i];
        }
        std::vector<int> c((size_t)m * n);
        for (auto& x : c)
            x = (int)rng.below(1 << 20) - (1 << 19);
        const auto want = reference<int>(dm, s, bval, c);
        if (sparse_hw) {
            bad += run<int8_t, int8_t, int>("sp_s8_k32", sp_s8_k32, dm, a, s.meta, b, c, want);
            bad += run<int8_t, int8_t, int>("sp_s8_k64", sp_s8_k64, dm, a, s.meta, b, c, want);
        } else {
            bad += run<int8_t, int8_t, int>("sp_scalar_s8", sp_scalar_s8, dm, a, s.meta, b, c, want);
        }
    }
    if (bad) {
        std::printf("FAIL %ld elements differ\n", bad);
        return 1;
    }
    std::printf("PASS\n");
    return 0;
}
