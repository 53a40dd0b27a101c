// sgemm: register-blocked single-precision C = A * B (row-major, M = N = 256, K = 64), our own
// code in the style of CUTLASS's SIMT sgemm: a CTA of 16x16 threads computes a 128x128 tile of C,
// each thread an 8x8 block of accumulators. Per k-step of 8 the CTA stages A (transposed) and B
// tiles in shared memory; every thread then loads 8 values of A and 8 of B into registers and
// issues 64 FFMAs c[i][j] = fma(a[i], b[j], c[i][j]). Consecutive FFMAs read the same a[i] in the
// same operand slot, so ptxas sets reuse bits on most of them (docs/experiments.md, Table 6).
// The k order is 0..K-1 for every c[i][j]; the reference (crates/inputs/workload) repeats it.
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
extern "C" __global__ void sgemm(const float* __restrict__ A, const float* __restrict__ B,
                                 float* __restrict__ C, unsigned n, unsigned k_total)
{
    __shared__ float As[BK][BM];   // As[k][m] = A[m][k] (transposed on the way in)
    __shared__ float Bs[BK][BN];
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const unsigned tid = ty * 16 + tx;
    const unsigned row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float c[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            c[i][j] = 0.0f;
    for (unsigned k0 = 0; k0 < k_total; k0 += BK) {
        // 256 threads stage 128x8 of A and 8x128 of B: four elements each.
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            unsigned e = tid + l * 256;          // 0 .. 1023
            unsigned am = e / BK, ak = e % BK;   // A tile: 128 rows x 8 columns
            As[ak][am] = A[(row0 + am) * k_total + k0 + ak];
            unsigned bk = e / BN, bn = e % BN;   // B tile: 8 rows x 128 columns
            Bs[bk][bn] = B[(k0 + bk) * n + col0 + bn];
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i)
                a[i] = As[kk][ty * TM + i];
#pragma unroll
            for (int j = 0; j < TN; ++j)
                b[j] = Bs[kk][tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    c[i][j] = fmaf(a[i], b[j], c[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            C[(row0 + ty * TM + i) * n + col0 + tx * TN + j] = c[i][j];
}
