// dp: double precision - DAXPY, a two-pass dot product with sqrt, and element-wise IEEE
// division and square root on operands that include denormals, huge values, zeros and
// infinities (so the FP64 division / sqrt slow-path subroutines run for some lanes).
//
// All arrays are managed memory (cudaMallocManaged): the host writes and reads them directly,
// after cudaDeviceSynchronize.
// Kernels:
//   daxpy        - y = a x + y, grid-stride                                   (1 launch)
//   dot_partial  - per-block sum of x*y (grid-stride, shared-memory tree)     (1 launch, 32 blocks)
//   dot_final    - one block sums the partials: res[0] = dot, res[1] = sqrt(dot)   (1 launch)
//   div_sqrt     - q = num / den, r = sqrt(|num|) element-wise                (1 launch)
// Checks: y equals fma(a, x, y) computed on the host within 2^-52 (|a x| + |y|); dot within
// 4 n 2^-53 sum|x y|; res[1] is exactly sqrt(res[0]); q and r are bit-exact IEEE results
// (NaN only where the host gets NaN).
// Arguments: dp [N=8192 [SEED=11]]
// Exercises: DFMA/DADD/DMUL, DSETP, the DDIV and DSQRT sequences (MUFU.RCP64H / MUFU.RSQ64H,
// CALL.REL to the slow path, RET), F64 shared memory, managed memory.
#include "check.h"

#include <cstring>
#include <vector>

#define DOT_BLOCKS 32
#define DOT_THREADS 256

__global__ void daxpy(int n, double a, const double* __restrict__ x, double* __restrict__ y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}

__global__ void dot_partial(int n, const double* __restrict__ x, const double* __restrict__ y,
                            double* __restrict__ partial)
{
    __shared__ double s[DOT_THREADS];
    double acc = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        acc += x[i] * y[i];
    s[threadIdx.x] = acc;
    for (int d = blockDim.x / 2; d > 0; d >>= 1) {
        __syncthreads();
        if (threadIdx.x < d)
            s[threadIdx.x] += s[threadIdx.x + d];
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = s[0];
}

__global__ void dot_final(const double* __restrict__ partial, int m, double* __restrict__ res)
{
    __shared__ double s[DOT_BLOCKS];
    s[threadIdx.x] = threadIdx.x < m ? partial[threadIdx.x] : 0.0;
    for (int d = blockDim.x / 2; d > 0; d >>= 1) {
        __syncthreads();
        if (threadIdx.x < d)
            s[threadIdx.x] += s[threadIdx.x + d];
    }
    if (threadIdx.x == 0) {
        res[0] = s[0];
        res[1] = sqrt(s[0]);
    }
}

__global__ void div_sqrt(int n, const double* __restrict__ num, const double* __restrict__ den,
                         double* __restrict__ q, double* __restrict__ r)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        q[i] = num[i] / den[i];
        r[i] = sqrt(fabs(num[i]));
    }
}

static uint64_t bits(double d)
{
    uint64_t u;
    std::memcpy(&u, &d, 8);
    return u;
}

// Operands for div_sqrt: mostly ordinary numbers, every 8th one special.
static double operand(Rng& rng, int i)
{
    static const double special[] = {4.9e-324, -2.5e-310, 1.0e-300, 3.0e305, -1.7e308, 0.0, -0.0,
                                     INFINITY, -INFINITY, 2.2250738585072014e-308, 1.0, 3.0};
    if (i % 8 == 7)
        return special[rng.below(sizeof(special) / sizeof(special[0]))];
    double m = rng.uniform_d(1.0, 2.0);
    int e = (int)rng.below(80) - 40;
    return (rng.below(2) ? -m : m) * std::ldexp(1.0, e);
}

int main(int argc, char** argv)
{
    const int n = (int)arg_int(argc, argv, 1, 8192, 1, 1 << 26, "N");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 2, 11, 0, 1L << 40, "SEED");
    const double a = -1.25;

    double *x, *y, *partial, *res, *num, *den, *q, *r;
    CK(cudaMallocManaged(&x, sizeof(double) * n));
    CK(cudaMallocManaged(&y, sizeof(double) * n));
    CK(cudaMallocManaged(&partial, sizeof(double) * DOT_BLOCKS));
    CK(cudaMallocManaged(&res, sizeof(double) * 2));
    CK(cudaMallocManaged(&num, sizeof(double) * n));
    CK(cudaMallocManaged(&den, sizeof(double) * n));
    CK(cudaMallocManaged(&q, sizeof(double) * n));
    CK(cudaMallocManaged(&r, sizeof(double) * n));

    Rng rng(seed);
    std::vector<double> y0(n);
    for (int i = 0; i < n; ++i) {
        x[i] = rng.uniform_d(-1.0, 1.0);
        y[i] = y0[i] = rng.uniform_d(-1.0, 1.0);
        num[i] = operand(rng, i);
        den[i] = operand(rng, i + 3);
    }

    daxpy<<<DOT_BLOCKS, DOT_THREADS>>>(n, a, x, y);
    CK_LAUNCH();
    dot_partial<<<DOT_BLOCKS, DOT_THREADS>>>(n, x, y, partial);
    CK_LAUNCH();
    dot_final<<<1, DOT_BLOCKS>>>(partial, DOT_BLOCKS, res);
    CK_LAUNCH();
    div_sqrt<<<(n + 127) / 128, 128>>>(n, num, den, q, r);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());

    long bad = 0;
    double dot = 0, dabs = 0;
    std::vector<double> yref(n), ytol(n);
    for (int i = 0; i < n; ++i) {
        yref[i] = std::fma(a, x[i], y0[i]);
        ytol[i] = (std::fabs(a * x[i]) + std::fabs(y0[i])) * 0x1p-52; // fused (DFMA) or not
        dot += x[i] * y[i]; // with the device's y, so the dot check is independent of daxpy
        dabs += std::fabs(x[i] * y[i]);
    }
    bad += count_mismatches("y", y, yref.data(), ytol.data(), n);
    double dtol = 4.0 * n * 0x1p-53 * dabs;
    bad += count_mismatches("dot", res, &dot, &dtol, 1);
    if (bits(res[1]) != bits(std::sqrt(res[0]))) {
        std::printf("mismatch: sqrt(dot) = %.17g, want %.17g\n", res[1], std::sqrt(res[0]));
        ++bad;
    }
    for (int i = 0; i < n; ++i) {
        double wq = num[i] / den[i], wr = std::sqrt(std::fabs(num[i]));
        bool okq = std::isnan(wq) ? std::isnan(q[i]) : bits(q[i]) == bits(wq);
        bool okr = std::isnan(wr) ? std::isnan(r[i]) : bits(r[i]) == bits(wr);
        if (!okq || !okr) {
            if (bad < 5)
                std::printf("mismatch [%d]: %.17g / %.17g = %.17g want %.17g; sqrt = %.17g want %.17g\n", i, num[i],
                            den[i], q[i], wq, r[i], wr);
            ++bad;
        }
    }
    std::printf("dp: %d elements\n", n);
    for (double* p : {x, y, partial, res, num, den, q, r})
        CK(cudaFree(p));
    return verdict(bad);
}
