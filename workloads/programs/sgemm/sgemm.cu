// sgemm: C = alpha A B + beta C (row-major, A: M x K, B: K x N), by two kernels on copies of C.
//
// Kernels:
//   sgemm_naive - one thread per element of C, the K loop reads A and B from global memory (1 launch)
//   sgemm_tiled - 16 x 16 tiles of A and B staged in shared memory, __syncthreads between phases,
//                 zero padding at the edges (M, N, K need not be multiples of 16)           (1 launch)
// Both results are checked against a double-precision host product with tolerance
// 4 (K+1) 2^-24 (|alpha| sum_k |a b| + |beta c|) per element (float rounding bound).
// Arguments: sgemm [M=72 [N=64 [K=48 [SEED=3]]]]
// Exercises: 2-D grids and blocks, shared memory, BAR.SYNC, LDS/STS, FFMA chains, edge predicates.
#include "check.h"

#include <vector>

#define TILE 16

__global__ void sgemm_naive(int m, int n, int k, float alpha, const float* __restrict__ A,
                            const float* __restrict__ B, float beta, float* __restrict__ C)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= m || col >= n)
        return;
    float acc = 0.0f;
    for (int i = 0; i < k; ++i)
        acc += A[(size_t)row * k + i] * B[(size_t)i * n + col];
    C[(size_t)row * n + col] = alpha * acc + beta * C[(size_t)row * n + col];
}

__global__ void sgemm_tiled(int m, int n, int k, float alpha, const float* __restrict__ A,
                            const float* __restrict__ B, float beta, float* __restrict__ C)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < k; t += TILE) {
        As[ty][tx] = (row < m && t + tx < k) ? A[(size_t)row * k + t + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < k && col < n) ? B[(size_t)(t + ty) * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i)
            acc += As[ty][i] * Bs[i][tx];
        __syncthreads();
    }
    if (row < m && col < n)
        C[(size_t)row * n + col] = alpha * acc + beta * C[(size_t)row * n + col];
}

int main(int argc, char** argv)
{
    const int m = (int)arg_int(argc, argv, 1, 72, 1, 1 << 14, "M");
    const int n = (int)arg_int(argc, argv, 2, 64, 1, 1 << 14, "N");
    const int k = (int)arg_int(argc, argv, 3, 48, 1, 1 << 14, "K");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 4, 3, 0, 1L << 40, "SEED");
    const float alpha = 1.5f, beta = -0.75f;

    Rng rng(seed);
    std::vector<float> A((size_t)m * k), B((size_t)k * n), C0((size_t)m * n), C1(C0.size()), C2(C0.size());
    for (auto& v : A)
        v = rng.uniform(-1.0f, 1.0f);
    for (auto& v : B)
        v = rng.uniform(-1.0f, 1.0f);
    for (auto& v : C0)
        v = rng.uniform(-1.0f, 1.0f);

    float *d_A, *d_B, *d_C1, *d_C2;
    CK(cudaMalloc(&d_A, sizeof(float) * A.size()));
    CK(cudaMalloc(&d_B, sizeof(float) * B.size()));
    CK(cudaMalloc(&d_C1, sizeof(float) * C0.size()));
    CK(cudaMalloc(&d_C2, sizeof(float) * C0.size()));
    CK(cudaMemcpy(d_A, A.data(), sizeof(float) * A.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_B, B.data(), sizeof(float) * B.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_C1, C0.data(), sizeof(float) * C0.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_C2, d_C1, sizeof(float) * C0.size(), cudaMemcpyDeviceToDevice));

    dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (m + TILE - 1) / TILE);
    sgemm_naive<<<grid, block>>>(m, n, k, alpha, d_A, d_B, beta, d_C1);
    CK_LAUNCH();
    sgemm_tiled<<<grid, block>>>(m, n, k, alpha, d_A, d_B, beta, d_C2);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(C1.data(), d_C1, sizeof(float) * C1.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(C2.data(), d_C2, sizeof(float) * C2.size(), cudaMemcpyDeviceToHost));
    CK(cudaFree(d_A));
    CK(cudaFree(d_B));
    CK(cudaFree(d_C1));
    CK(cudaFree(d_C2));

    std::vector<double> ref(C0.size()), tol(C0.size());
    for (int r = 0; r < m; ++r)
        for (int c = 0; c < n; ++c) {
            double s = 0, sa = 0;
            for (int i = 0; i < k; ++i) {
                double t = (double)A[(size_t)r * k + i] * B[(size_t)i * n + c];
                s += t;
                sa += std::fabs(t);
            }
            double c0 = C0[(size_t)r * n + c];
            ref[(size_t)r * n + c] = alpha * s + beta * c0;
            tol[(size_t)r * n + c] = 4.0 * (k + 1) * 0x1p-24 * (std::fabs(alpha) * sa + std::fabs(beta * c0));
        }
    std::printf("sgemm: %d x %d x %d\n", m, n, k);
    long bad = count_mismatches("C_naive", C1.data(), ref.data(), tol.data(), (long)ref.size());
    bad += count_mismatches("C_tiled", C2.data(), ref.data(), tol.data(), (long)ref.size());
    return verdict(bad);
}
