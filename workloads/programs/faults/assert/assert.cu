// fault_assert: a device assert that fails in one thread of one block. On a GPU the kernel
// stops with cudaErrorAssert and the runtime prints the failed assertion with its file, line,
// function, block and thread. The program reports the error code it got and exits 0 if it was
// cudaErrorAssert (the test checks sassim's message and the code the program saw).
// Arguments: fault_assert [BAD=77] (the global thread index whose assert fails)
#include "check.h"

#include <cassert>

__global__ void check_positive(const int* v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        assert(v[i] >= 0);
}

int main(int argc, char** argv)
{
    const int n = 256;
    const int bad = (int)arg_int(argc, argv, 1, 77, 0, n - 1, "BAD");
    int h[n];
    for (int i = 0; i < n; ++i)
        h[i] = i == bad ? -1 : i;
    int* d;
    CK(cudaMalloc(&d, sizeof(h)));
    CK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
    check_positive<<<2, 128>>>(d, n);
    cudaError_t e = cudaDeviceSynchronize();
    std::printf("kernel: %s (%s)\n", cudaGetErrorName(e), cudaGetErrorString(e));
    return e == cudaErrorAssert ? 0 : 1;
}
