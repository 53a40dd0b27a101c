// dmma_gemm: FP64 D = A B + C on the tensor cores with mma.sync.m8n8k4.f64 (DMMA, sm_80 and
// later). A is M x K row-major, B is K x N row-major, C and D are M x N row-major. One warp per
// 8 x 8 tile of D; fragments read from global memory with the PTX layouts (A: (g, t),
// B: (t, g), C/D: (g, 2t), (g, 2t + 1), with g = lane / 4, t = lane % 4).
// At sm_75 (no FP64 MMA) the kernel computes the same tile with DFMA, in the same k order.
//
// Kernel: dmma_gemm (1 launch).
// Check: against a host product in double with fma in k order, with
// tolerance (K + 1) 2^-52 (sum_k |a b| + |c|) per element (the tensor core's FP64 rounding is
// not documented beyond IEEE round-to-nearest; this bounds any order of rounded steps).
// Arguments: dmma_gemm [M=32 [N=32 [K=64 [SEED=24]]]] (multiples of 8; (M/8)(N/8) of 4)
// Exercises: DMMA.884 (sm_86) / DMMA.8x8x4 (sm_90), 64-bit fragment registers, DFMA (sm_75).
#include "check.h"

#include <vector>

__global__ void dmma_gemm(int n, int k, const double* A, const double* B, const double* C, double* D)
{
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    const int tiles_n = n / 8;
    const int row = (warp / tiles_n) * 8, col = (warp % tiles_n) * 8;
    const int g = lane >> 2, t = lane & 3;
    double d0 = C[(size_t)(row + g) * n + col + 2 * t], d1 = C[(size_t)(row + g) * n + col + 2 * t + 1];
    for (int kk = 0; kk < k; kk += 4) {
#if __CUDA_ARCH__ >= 800
        double a = A[(size_t)(row + g) * k + kk + t], b = B[(size_t)(kk + t) * n + col + g];
        asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                     : "+d"(d0), "+d"(d1)
                     : "d"(a), "d"(b));
#else
        for (int q = 0; q < 4; ++q) {
            double a = A[(size_t)(row + g) * k + kk + q];
            d0 = fma(a, B[(size_t)(kk + q) * n + col + 2 * t], d0);
            d1 = fma(a, B[(size_t)(kk + q) * n + col + 2 * t + 1], d1);
        }
#endif
    }
    D[(size_t)(row + g) * n + col + 2 * t] = d0;
    D[(size_t)(row + g) * n + col + 2 * t + 1] = d1;
}

int main(int argc, char** argv)
{
    const int m = (int)arg_int(argc, argv, 1, 32, 8, 1024, "M");
    const int n = (int)arg_int(argc, argv, 2, 32, 8, 1024, "N");
    const int k = (int)arg_int(argc, argv, 3, 64, 4, 1024, "K");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 4, 24, 0, 1L << 40, "SEED");
    if (m % 8 || n % 8 || k % 4 || ((m / 8) * (n / 8)) % 4)
        fail("M and N must be multiples of 8, K of 4, and (M/8)(N/8) of 4");
    Rng rng(seed);
    std::vector<double> a((size_t)m * k), b((size_t)k * n), c((size_t)m * n), d(c.size());
    for (auto& x : a) x = rng.uniform_d(-1.0, 1.0);
    for (auto& x : b) x = rng.uniform_d(-1.0, 1.0);
    for (auto& x : c) x = rng.uniform_d(-1.0, 1.0);
    double *dA, *dB, *dC, *dD;
    CK(cudaMalloc(&dA, sizeof(double) * a.size()));
    CK(cudaMalloc(&dB, sizeof(double) * b.size()));
    CK(cudaMalloc(&dC, sizeof(double) * c.size()));
    CK(cudaMalloc(&dD, sizeof(double) * c.size()));
    CK(cudaMemcpy(dA, a.data(), sizeof(double) * a.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, b.data(), sizeof(double) * b.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dC, c.data(), sizeof(double) * c.size(), cudaMemcpyHostToDevice));
    dmma_gemm<<<(m / 8) * (n / 8) / 4, 128>>>(n, k, dA, dB, dC, dD);
    CK_LAUNCH();
    CK(cudaMemcpy(d.data(), dD, sizeof(double) * d.size(), cudaMemcpyDeviceToHost));
    std::vector<double> ref(d.size()), tol(d.size());
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double s = c[(size_t)i * n + j], mag = std::fabs(s);
            for (int kk = 0; kk < k; ++kk) {
                s = std::fma(a[(size_t)i * k + kk], b[(size_t)kk * n + j], s);
                mag += std::fabs(a[(size_t)i * k + kk] * b[(size_t)kk * n + j]);
            }
            ref[(size_t)i * n + j] = s;
            tol[(size_t)i * n + j] = (k + 1) * std::ldexp(1.0, -52) * mag;
        }
    long bad = count_mismatches("d", d.data(), ref.data(), tol.data(), (long)d.size());
    CK(cudaFree(dA)); CK(cudaFree(dB)); CK(cudaFree(dC)); CK(cudaFree(dD));
    return verdict(bad);
}
