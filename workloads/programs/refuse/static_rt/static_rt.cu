// refuse/static_rt: a vector add linked with nvcc's DEFAULT static CUDA runtime
// (libcudart_static.a inside the executable, no libcudart.so.13 dependency).
//
// On a GPU it prints PASS. `sassim exec` cannot interpose its runtime on a statically linked
// one and must refuse it with a message that says to rebuild with `-cudart shared`.
// Built by scripts/build-programs.sh WITHOUT `-cudart shared` (sm_75, sm_86, sm_90 cubins).
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
