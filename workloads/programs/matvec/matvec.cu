// matvec: y = A x, then z = A^T y, for a dense row-major M x N matrix, on a non-default stream.
//
// Kernels:
//   matvec_rows - one thread per row:    y[r] = sum_c A[r][c] x[c]   (strided loads)  1 launch
//   matvec_cols - one thread per column: z[c] = sum_r A[r][c] y[r]   (coalesced)      1 launch
// Host: cudaStreamCreate, cudaMemcpyAsync of A and x, events recorded around each kernel
// (cudaEventElapsedTime must be >= 0; it is not printed, so the output does not depend on time),
// cudaStreamSynchronize, then y and z are copied back with cudaMemcpyAsync.
// Check: y against A x and z against A^T y(device), both in double on the host, with tolerance
// 4 n 2^-24 sum|terms| per element (n = length of the dot product; the float rounding bound).
// Arguments: matvec [M=512 [N=256 [SEED=2]]]
// Exercises: streams, events, async copies, two dependent launches, long FFMA loops.
#include "check.h"

#include <vector>

__global__ void matvec_rows(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y, int m,
                            int n)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= m)
        return;
    const float* a = A + (size_t)r * n;
    float s = 0.0f;
    for (int c = 0; c < n; ++c)
        s += a[c] * x[c];
    y[r] = s;
}

__global__ void matvec_cols(const float* __restrict__ A, const float* __restrict__ y, float* __restrict__ z, int m,
                            int n)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n)
        return;
    float s = 0.0f;
    for (int r = 0; r < m; ++r)
        s += A[(size_t)r * n + c] * y[r];
    z[c] = s;
}

int main(int argc, char** argv)
{
    const int m = (int)arg_int(argc, argv, 1, 512, 1, 1 << 16, "M");
    const int n = (int)arg_int(argc, argv, 2, 256, 1, 1 << 16, "N");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 3, 2, 0, 1L << 40, "SEED");

    Rng rng(seed);
    std::vector<float> A((size_t)m * n), x(n), y(m), z(n);
    for (auto& a : A)
        a = rng.uniform(-1.0f, 1.0f);
    for (auto& v : x)
        v = rng.uniform(-1.0f, 1.0f);

    float *d_A, *d_x, *d_y, *d_z;
    CK(cudaMalloc(&d_A, sizeof(float) * A.size()));
    CK(cudaMalloc(&d_x, sizeof(float) * n));
    CK(cudaMalloc(&d_y, sizeof(float) * m));
    CK(cudaMalloc(&d_z, sizeof(float) * n));

    cudaStream_t st;
    cudaEvent_t ev[3];
    CK(cudaStreamCreate(&st));
    for (auto& e : ev)
        CK(cudaEventCreate(&e));

    CK(cudaMemcpyAsync(d_A, A.data(), sizeof(float) * A.size(), cudaMemcpyHostToDevice, st));
    CK(cudaMemcpyAsync(d_x, x.data(), sizeof(float) * n, cudaMemcpyHostToDevice, st));
    const int threads = 128;
    CK(cudaEventRecord(ev[0], st));
    matvec_rows<<<(m + threads - 1) / threads, threads, 0, st>>>(d_A, d_x, d_y, m, n);
    CK_LAUNCH();
    CK(cudaEventRecord(ev[1], st));
    matvec_cols<<<(n + threads - 1) / threads, threads, 0, st>>>(d_A, d_y, d_z, m, n);
    CK_LAUNCH();
    CK(cudaEventRecord(ev[2], st));
    CK(cudaMemcpyAsync(y.data(), d_y, sizeof(float) * m, cudaMemcpyDeviceToHost, st));
    CK(cudaMemcpyAsync(z.data(), d_z, sizeof(float) * n, cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    CK(cudaEventSynchronize(ev[2]));
    float t01 = -1.0f, t12 = -1.0f;
    CK(cudaEventElapsedTime(&t01, ev[0], ev[1]));
    CK(cudaEventElapsedTime(&t12, ev[1], ev[2]));

    for (auto& e : ev)
        CK(cudaEventDestroy(e));
    CK(cudaStreamDestroy(st));
    CK(cudaFree(d_A));
    CK(cudaFree(d_x));
    CK(cudaFree(d_y));
    CK(cudaFree(d_z));

    // References in double; z uses the device's y so that each kernel is checked on its own.
    std::vector<double> yref(m), ytol(m), zref(n), ztol(n);
    for (int r = 0; r < m; ++r) {
        double s = 0, sa = 0;
        for (int c = 0; c < n; ++c) {
            double t = (double)A[(size_t)r * n + c] * x[c];
            s += t;
            sa += std::fabs(t);
        }
        yref[r] = s;
        ytol[r] = 4.0 * n * 0x1p-24 * sa;
    }
    for (int c = 0; c < n; ++c) {
        double s = 0, sa = 0;
        for (int r = 0; r < m; ++r) {
            double t = (double)A[(size_t)r * n + c] * y[r];
            s += t;
            sa += std::fabs(t);
        }
        zref[c] = s;
        ztol[c] = 4.0 * m * 0x1p-24 * sa;
    }
    std::printf("matvec: %d x %d\n", m, n);
    long bad = count_mismatches("y", y.data(), yref.data(), ytol.data(), m);
    bad += count_mismatches("z", z.data(), zref.data(), ztol.data(), n);
    if (!(t01 >= 0.0f && t12 >= 0.0f)) {
        std::printf("mismatch: negative event time %g %g\n", t01, t12);
        ++bad;
    }
    return verdict(bad);
}
