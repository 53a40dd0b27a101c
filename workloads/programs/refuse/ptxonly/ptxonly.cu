// refuse/ptxonly: a vector add whose fat binary holds PTX for compute_86 only, no cubin.
//
// Built by scripts/build-programs.sh with `-cudart shared -gencode arch=compute_86,code=compute_86`.
// On a GPU the driver JIT-compiles the PTX and it prints PASS. sassim runs SASS only, so
// `sassim exec` must refuse the launch with an error naming the kernel (vadd) and the
// architectures present (PTX for compute_86, no SASS).
// Kernel: vadd (1 launch, 4 x 256 threads, n = 1000).
#include "check.h"

#include <vector>

__global__ void vadd(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

int main()
{
    const int n = 1000;
    std::vector<float> a(n), b(n), c(n);
    for (int i = 0; i < n; ++i) {
        a[i] = (float)i;
        b[i] = 0.5f * (float)i;
    }
    float *d_a, *d_b, *d_c;
    CK(cudaMalloc(&d_a, sizeof(float) * n));
    CK(cudaMalloc(&d_b, sizeof(float) * n));
    CK(cudaMalloc(&d_c, sizeof(float) * n));
    CK(cudaMemcpy(d_a, a.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_b, b.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
    vadd<<<(n + 255) / 256, 256>>>(d_a, d_b, d_c, n);
    CK_LAUNCH();
    CK(cudaMemcpy(c.data(), d_c, sizeof(float) * n, cudaMemcpyDeviceToHost));
    CK(cudaFree(d_a));
    CK(cudaFree(d_b));
    CK(cudaFree(d_c));
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i)
        want[i] = 1.5f * (float)i;
    return verdict(count_exact_mismatches("c", c.data(), want.data(), n));
}
